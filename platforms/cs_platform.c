/*
 * cs_platform.c - opening presets and XML files, export, printing
 * (interface and contracts in cs_platform.h).
 *
 * A spec is a file when it ends in ".xml" or names a readable file that is
 * not a preset name; otherwise it is "NAME" or "NAME:key=value,...".
 * Out-parameters are written only on success; cs_platform_close(NULL) is
 * fine.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>

#include "cs_file.h"
#include "cs_grow.h"
#include "cs_out.h"
#include "cs_params.h"
#include "cs_plat_calib.h"
#include "cs_plat_file.h"
#include "cs_plat_model.h"

#define CS__MAX_XML_BYTES (1ull << 31)

#ifndef CS_VERSION
#define CS_VERSION "unknown"
#endif

static int cs__is_file_spec(const char *spec)
{
    size_t n = strlen(spec);
    if (n >= 4 && strcmp(spec + n - 4, ".xml") == 0)
        return 1;
    struct stat st;
    return strchr(spec, ':') == NULL && cs__preset_find(spec) < 0 && stat(spec, &st) == 0 &&
           S_ISREG(st.st_mode);
}

static int cs__read_file(const char *path, char **out, cs_err_t *err)
{
    char *buf;
    size_t len;
    if (cs_file_read(path, CS__MAX_XML_BYTES, &buf, &len) != 0) {
        if (errno == EFBIG)
            return cs_err_set(err, CS_ERR_RANGE, "%s: file larger than %llu bytes", path,
                              CS__MAX_XML_BYTES);
        if (errno == ENOMEM)
            return cs_err_set(err, CS_ERR_NOMEM, "%s: out of memory", path);
        if (errno == EIO)
            return cs_err_set(err, CS_ERR_IO, "%s: read error", path);
        return cs_err_set(err, errno == ENOENT ? CS_ERR_NOTFOUND : CS_ERR_IO, "%s: %s", path,
                          strerror(errno));
    }
    if (strlen(buf) != len) {
        free(buf);
        return cs_err_set(err, CS_ERR_PARSE, "%s:1:1: expected XML text, found a NUL byte", path);
    }
    *out = buf;
    return CS_OK;
}

static void cs__preset_list(char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < cs_platform_preset_count() && off < len; i++) {
        int w = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", cs_platform_preset_name(i));
        if (w < 0)
            break;
        off += (size_t)w;
    }
}

/* Build a preset's model from "NAME[:params]". */
static int cs__model_from_spec(const char *spec, cs__model_t *m, int *idx, char **desc,
                               cs_err_t *err)
{
    char name[64];
    const char *colon = strchr(spec, ':');
    size_t nl = colon ? (size_t)(colon - spec) : strlen(spec);
    if (nl >= sizeof(name))
        nl = sizeof(name) - 1;
    memcpy(name, spec, nl);
    name[nl] = '\0';
    int i = cs__preset_find(name);
    if (i < 0) {
        char list[512];
        cs__preset_list(list, sizeof(list));
        return cs_err_set(err, CS_ERR_NOTFOUND,
                          "unknown platform '%s': expected a preset (%s) or a SimGrid .xml file",
                          name, list);
    }
    int st = cs__preset_build(i, colon ? colon + 1 : "", m, desc, err);
    if (st == CS_OK)
        *idx = i;
    return st;
}

/* A preset's ranks: its GPUs in document order (node by node). */
static int cs__preset_hosts(const cs__model_t *m, cs_platform_t *p, cs_err_t *err)
{
    p->hosts = calloc((size_t)p->ndevices + 1, sizeof(char *));
    if (p->hosts == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    uint64_t k = 0;
    for (int n = 0; n < m->nodes; n++)
        for (int e = 0; e < m->nelem; e++) {
            if (m->elem[e].kind != CS__EL_GPU || k == p->ndevices)
                continue;
            char name[64];
            snprintf(name, sizeof(name), "n%d-%s", n, m->elem[e].name);
            if ((p->hosts[k++] = strdup(name)) == NULL)
                return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
        }
    snprintf(p->rank_noun, sizeof(p->rank_noun), "devices");
    snprintf(p->rank_rule, sizeof(p->rank_rule),
             "the %llu GPUs (hosts with device=gpu), one rank each, in document order: node by "
             "node, g0 first",
             (unsigned long long)p->ndevices);
    return CS_OK;
}

/* A preset's switches that reduce, from the reduce properties its XML
 * carries (cs__model_xml writes them only when it has some). */
static int cs__preset_switches(cs_platform_t *p, cs_err_t *err)
{
    xmlDocPtr d = xmlReadMemory(p->xml, (int)strlen(p->xml), p->name, NULL,
                                XML_PARSE_NONET | XML_PARSE_NOWARNING | XML_PARSE_HUGE);
    if (d == NULL)
        return cs_err_set(err, CS_ERR_INTERNAL, "%s: the generated XML does not parse", p->name);
    int st = cs__plat_switches(d, p->name, 0, &p->switches, &p->nswitches, err);
    xmlFreeDoc(d);
    return st;
}

static int cs__open_preset(const char *spec, cs_platform_t *p, cs_err_t *err)
{
    cs__model_t *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    int idx = -1;
    int st = cs__model_from_spec(spec, m, &idx, &p->description, err);
    if (st == CS_OK) {
        p->sg_loads = 3u; /* generated by collstep: SimGrid loads it as it is */
        snprintf(p->name, sizeof(p->name), "%s", cs_platform_preset_name(idx));
        cs__model_summary(m, p);
        st = cs__model_xml(m, p->name, spec, p->description, p, &p->xml, err);
    }
    if (st == CS_OK)
        st = m->is_rail ? cs__rail_rank_hosts(m, p, err) : cs__preset_hosts(m, p, err);
    if (st == CS_OK && (m->sharp || (m->is_rail && m->rail.nvls && !m->rail.mesh)))
        st = cs__preset_switches(p, err);
    free(m);
    return st;
}

static void cs__apply_factors(const char *factors, cs_tier_info_t *ti)
{
    size_t n = strlen(ti->name);
    for (const char *c = factors; c && *c;) {
        if (strncmp(c, ti->name, n) == 0 && c[n] == ':') {
            double lf, bf;
            if (sscanf(c + n + 1, "%lf:%lf", &lf, &bf) == 2 && lf > 0 && bf > 0) {
                ti->lat_factor = lf;
                ti->bw_factor = bf;
            }
            return;
        }
        c = strchr(c, ',');
        if (c)
            c++;
    }
}

/* collstep_dims of the top zone ("6x256"): must multiply to the ranks. */
static int cs__file_dims(const cs__pfile_t *f, cs_platform_t *p, cs_err_t *err)
{
    if (f->dims[0] == '\0')
        return CS_OK;
    cs_params_t pp;
    cs_params_init(&pp);
    cs_err_t derr = {0};
    int dims[CS_PLAT_MAX_DIMS], nd = 0;
    uint64_t prod = 1;
    if (cs_params_set(&pp, "collstep_dims", f->dims, &derr) == CS_OK)
        nd = cs_params_get_dims(&pp, "collstep_dims", dims, CS_PLAT_MAX_DIMS, &derr);
    for (int i = 0; i < nd; i++)
        prod *= (uint64_t)dims[i];
    if (nd <= 0 || prod != p->ndevices)
        return cs_err_set(err, CS_ERR_PARSE,
                          "%s:%d: expected collstep_dims like 6x256 multiplying to the %llu ranks, "
                          "found '%s'",
                          f->fname, f->dims_line, (unsigned long long)p->ndevices, f->dims);
    p->ndims = nd;
    for (int i = 0; i < nd; i++)
        p->dims[i] = dims[i];
    snprintf(p->dims_from, sizeof(p->dims_from), "collstep_dims");
    return CS_OK;
}

/* The ideal model's text, when it differs from the file, loaded by SimGrid
 * too (cs__plat_sg_probe_ideal); otherwise the file's findings hold for it. */
static int cs__check_ideal(cs_platform_t *p, cs_err_t *err)
{
    cs__pfile_t *f = p->file;
    if (cs__pfile_split_count(f) == 0) {
        p->shared[1] = p->shared[0];
        p->sg_loads |= 2u;
        return CS_OK;
    }
    char *text = NULL;
    int st = cs__pfile_text(f, 1, &text, err);
    if (st != CS_OK)
        return st;
    char path[] = "/tmp/cs_ideal_XXXXXX.xml";
    int fd = mkstemps(path, 4);
    if (fd < 0) {
        free(text);
        return cs_err_set(err, CS_ERR_IO, "cannot create a temporary file: %s", strerror(errno));
    }
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    close(fd);
    st = off == len ? cs__plat_sg_probe_ideal(p, path, text, err)
                    : cs_err_set(err, CS_ERR_IO, "%s: write failed", path);
    unlink(path);
    free(text);
    return st;
}

static int cs__open_file(const char *path, unsigned flags, cs_platform_t *p, cs_err_t *err)
{
    cs__pfile_t *f = NULL;
    int st = cs__read_file(path, &p->xml, err);
    if (st == CS_OK)
        st = cs__pfile_parse(p->xml, path, &f, err);
    if (st != CS_OK)
        return st;
    p->file = f;
    p->is_file = 1;
    snprintf(p->name, sizeof(p->name), "%s", path);
    st = cs__plat_sg_probe(p, path, (flags & CS_PLAT_OPEN_TOPOLOGY) != 0, err);
    if (st == CS_OK)
        st = cs__check_ideal(p, err);
    if (st != CS_OK)
        return st;
    for (int t = 0; t < p->ntiers; t++)
        cs__apply_factors(f->factors, &p->tiers[t]);
    p->has_factors = f->factors[0] != '\0';
    st = cs__file_dims(f, p, err);
    if (st != CS_OK)
        return st;
    snprintf(p->nccl_fit, sizeof(p->nccl_fit), "%s", f->nccl_fit);
    p->nccl_fit_line = f->nccl_fit_line;
    /* switches that reduce: their routers become hosts in the simulation's
     * text, which is then checked in a child before SimGrid loads it */
    st = cs__plat_switches(f->doc, path, 1, &p->switches, &p->nswitches, err);
    if (st != CS_OK)
        return st;
    if (p->nswitches > 0)
        p->sg_loads = 0;
    size_t len = strlen(path) + strlen(f->spec) + 256;
    p->description = malloc(len);
    if (p->description == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    snprintf(p->description, len, "SimGrid XML file %s%s%s%s, built by SimGrid and read back.\n",
             path, f->spec[0] ? " (exported from preset " : "", f->spec,
             f->spec[0] ? "; its figures are read from the file, not the preset)" : "");
    return CS_OK;
}

int cs_platform_open(const char *spec, cs_platform_t **out, cs_err_t *err)
{
    return cs_platform_open_ex(spec, 0, out, err);
}

int cs_platform_open_ex(const char *spec, unsigned flags, cs_platform_t **out, cs_err_t *err)
{
    if (spec == NULL || out == NULL || *spec == '\0')
        return cs_err_set(err, CS_ERR_INVAL, "platform: expected a preset name or an XML file");
    if (strlen(spec) >= sizeof(((cs_platform_t *)0)->spec))
        return cs_err_set(err, CS_ERR_INVAL, "platform spec too long (at most %zu characters)",
                          sizeof(((cs_platform_t *)0)->spec) - 1);
    cs_platform_t *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    snprintf(p->spec, sizeof(p->spec), "%s", spec);
    int st = cs__is_file_spec(spec) ? cs__open_file(spec, flags, p, err)
                                    : cs__open_preset(spec, p, err);
    if (st != CS_OK) {
        cs_platform_close(p);
        return st;
    }
    *out = p;
    return CS_OK;
}

void cs_platform_close(cs_platform_t *p)
{
    if (p == NULL)
        return;
    free(p->xml);
    free(p->description);
    for (uint64_t i = 0; p->hosts && i < p->ndevices; i++)
        free(p->hosts[i]);
    free(p->hosts);
    free(p->unroutable);
    cs__plat_switches_free(p->switches, p->nswitches);
    cs__pfile_free(p->file);
    free(p);
}

int cs_platform_recognize(const char *head, size_t n)
{
    return cs_out_xml_marked(head, n) || cs_plat_calib_recognize(head, n);
}

const cs_out_kind_t cs_platform_out_kind = {"platform", cs_platform_recognize, NULL, NULL, NULL};

int cs_platform_export(const cs_platform_t *p, const char *path, int flags, cs_err_t *err)
{
    if (p == NULL || p->xml == NULL || path == NULL)
        return cs_err_set(err, CS_ERR_INVAL, "platform export: nothing to export");
    return cs_platform_write_text(p->xml, "collstep platform export", path, flags, err);
}

int cs_platform_write_text(const char *x, const char *what, const char *path, int flags,
                           cs_err_t *err)
{
    if (x == NULL || path == NULL)
        return cs_err_set(err, CS_ERR_INVAL, "platform export: nothing to export");
    cs_out_t *o = NULL;
    int st = cs_out_begin_file(path, flags, &cs_platform_out_kind, &o, err);
    if (st != CS_OK)
        return st;
    /* the marker after the XML declaration, unless the text has one (a file
     * collstep wrote, exported again) */
    size_t len = strlen(x), head = 0;
    if (!cs_platform_recognize(x, len < CS_OUT_HEAD ? len : CS_OUT_HEAD)) {
        if (strncmp(x, "<?xml", 5) == 0 && strstr(x, "?>"))
            head = (size_t)(strstr(x, "?>") - x) + 2;
        head += strspn(x + head, "\r\n");
        FILE *f = cs_out_stream(o);
        fwrite(x, 1, head, f);
        if (head > 0 && x[head - 1] != '\n')
            fputc('\n', f);
        fprintf(f, "%s %s (%s) -->\n", CS_OUT_XML_MARK, CS_VERSION, what);
    }
    if (fwrite(x + head, 1, len - head, cs_out_stream(o)) != len - head) {
        cs_out_abort(o);
        return cs_err_set(err, CS_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    }
    return cs_out_commit(o, err);
}

/* Used by cs_plat_topo.c: the model behind a preset. */
int cs__platform_model(const cs_platform_t *p, cs__model_t *m, cs_err_t *err)
{
    if (p->is_file)
        return cs_err_set(err, CS_ERR_INVAL, "%s: a file has no preset model", p->spec);
    char *desc = NULL;
    int idx;
    int st = cs__model_from_spec(p->spec, m, &idx, &desc, err);
    free(desc);
    return st;
}

const char *cs_platform_tier_rule(void)
{
    return "a link's tier property wins; otherwise, by what SimGrid made it for:\n"
           "  <cluster> (flat, or a zone routing=Cluster with <cabinet>s): host (a host's own\n"
           "    link), backbone, limiter, loopback;\n"
           "  topology=FAT_TREE: level1 (host to first switch), level2, ... per level;\n"
           "  topology=TORUS: torus-d0, torus-d1, ... per dimension of topo_parameters;\n"
           "  topology=DRAGONFLY: local (host-router), row (green), group (black), global (blue);\n"
           "  <backbone>: backbone; <peer>: peer; SimGrid's __loopback__: loopback;\n"
           "  any other <link>: link.\n";
}

int cs_platform_sim_text(const cs_platform_t *p, int ideal, char **out, cs_err_t *err)
{
    if (p == NULL || p->xml == NULL)
        return cs_err_set(err, CS_ERR_INVAL, "platform: none");
    if (p->is_file && p->file)
        return cs__pfile_text(p->file, ideal, out, err);
    char *s = strdup(p->xml);
    if (s == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    *out = s;
    return CS_OK;
}

int cs_platform_map_read(const char *path, char ***out, int *n, cs_err_t *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return cs_err_set(err, CS_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    char line[512];
    char **v = NULL;
    size_t cap = 0;
    int cnt = 0, st = CS_OK;
    while (st == CS_OK && fgets(line, sizeof(line), f)) {
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        size_t l = strcspn(s, " \t\r\n#");
        if (l == 0)
            continue;
        s[l] = 0;
        if (cs_grow(&v, &cap, (size_t)cnt + 1, sizeof(*v), 64) != CS_OK || !(v[cnt] = strdup(s)))
            st = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
        else
            cnt++;
    }
    fclose(f);
    if (st != CS_OK) {
        cs_platform_map_free(v, cnt);
        return st;
    }
    *out = v;
    *n = cnt;
    return CS_OK;
}

void cs_platform_map_free(char **map, int n)
{
    for (int i = 0; i < n && map; i++)
        free(map[i]);
    free(map);
}
