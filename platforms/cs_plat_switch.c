/*
 * cs_plat_switch.c - switches that reduce (cs_platform.h cs_plat_switch_t):
 * read from the `reduce` properties of a platform's zones.
 *
 * A <zone> with <prop id="reduce" value="nvls|sharp"/> has a switch that
 * reduces for every host of the zone (its subtree), and for the hosts of
 * the zones named by reduce_zones ("*": every host of the platform), for
 * layouts whose switch zone does not hold its hosts (the presets' rail
 * zones), and the hosts named by reduce_hosts.  The switch is the element
 * named by reduce_switch (a <router> or a <host> of the zone, or of the
 * platform for a zone that only declares a switch: the rail-optimized
 * presets, whose hosts are all in one flat zone), else the zone's only
 * <router> child.  A router
 * becomes a host of the same name in the simulation's text (`convert`),
 * so that operations move bytes over the members' routes to it.
 *
 * Defaults per kind (docs/platforms.md gives the sources):
 *   nvls   types and operators of NCCL's NVLS kernels (ncclNvlsSupported,
 *          after PTX multimem.ld_reduce): sum on float, double, half,
 *          bfloat16, int32, int64; min and max on half, bfloat16, int32,
 *          int64.  reduce_lat 0.1 us.
 *   sharp  the NCCL SHARP plugin's types (float, double, half, int32,
 *          int64; bfloat16 only with SHARP 3) with sum, min and max.
 *          reduce_lat 1 us.
 *   reduce_bw 0 for both: the simulator charges a reduction at the sum of
 *   the bandwidths of the distinct links by which the operation's members
 *   reach the switch (line rate, not a bottleneck).
 * reduce_types / reduce_ops (comma lists of collstep's names) replace the
 * defaults by their cross product.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "cs_dtype.h"
#include "cs_grow.h"
#include "cs_plat_file.h"
#include "cs_plat_model.h"

_Static_assert(CS_OP_COUNT == 4, "cs_plat_switch_t.types has one mask per operator");

static const char *const kind_names[] = {"nvls", "sharp"};

const char *cs_reduce_kind_name(int kind)
{
    return kind >= 0 && kind < CS_REDUCE_KIND_COUNT ? kind_names[kind] : NULL;
}

cs_reduce_kind_t cs_reduce_kind_parse(const char *s)
{
    for (int i = 0; i < CS_REDUCE_KIND_COUNT; i++)
        if (s && strcmp(s, kind_names[i]) == 0)
            return (cs_reduce_kind_t)i;
    return CS_REDUCE_KIND_COUNT;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cs_platform_switch_serves(const cs_plat_switch_t *sw, const char *host)
{
    return sw->nhosts > 0 &&
           bsearch(&host, sw->hosts, (size_t)sw->nhosts, sizeof(char *), cmp_str) != NULL;
}

int cs_platform_switch_for(const cs_platform_t *p, const char *const *hosts, uint32_t n)
{
    int best = -1;
    for (int s = 0; p && s < p->nswitches; s++) {
        const cs_plat_switch_t *sw = &p->switches[s];
        uint32_t i = 0;
        while (i < n && cs_platform_switch_serves(sw, hosts[i]))
            i++;
        if (i == n && (best < 0 || sw->nhosts < p->switches[best].nhosts))
            best = s;
    }
    return best;
}

int cs_platform_switch_reduces(const cs_plat_switch_t *sw, int dtype, int op)
{
    return op >= 0 && op < CS_OP_COUNT && dtype >= 0 && dtype < CS_DT_COUNT &&
           (sw->types[op] >> dtype) & 1u;
}

void cs_platform_switch_reduces_str(const cs_plat_switch_t *sw, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int o = 0; o < CS_OP_COUNT; o++) {
        if (sw->types[o] == 0)
            continue;
        int w = snprintf(buf + off, len - off, "%s%s on", off ? "; " : "", cs_op_name(o));
        for (int t = 0, k = 0; w >= 0 && (size_t)w < len - off && t < CS_DT_COUNT; t++)
            if ((sw->types[o] >> t) & 1u) {
                int x = snprintf(buf + off + w, len - off - (size_t)w, "%s %s", k++ ? "," : "",
                                 cs_dtype_name(t));
                w = x < 0 ? x : w + x;
            }
        if (w < 0 || (size_t)w >= len - off)
            break;
        off += (size_t)w;
    }
    if (off == 0)
        snprintf(buf, len, "nothing");
}

/* ---- reading the properties ------------------------------------------------ */

static int is_elem(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static void attr(const xmlNode *n, const char *name, char *out, size_t len)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    snprintf(out, len, "%s", v ? (const char *)v : "");
    xmlFree(v);
}

/* The <prop id="key"> among zone z's children, NULL when absent. */
static const xmlNode *zprop_node(const xmlNode *z, const char *key)
{
    for (const xmlNode *c = z->children; c; c = c->next) {
        char id[64];
        if (!is_elem(c, "prop"))
            continue;
        attr(c, "id", id, sizeof(id));
        if (strcmp(id, key) == 0)
            return c;
    }
    return NULL;
}

/* Value of <prop id="key"> among zone z's children ("" when absent); its
 * line in *line. */
static int zprop(const xmlNode *z, const char *key, char *out, size_t len)
{
    const xmlNode *c = zprop_node(z, key);
    out[0] = '\0';
    if (!c)
        return 0;
    attr(c, "value", out, len);
    return (int)xmlGetLineNo(c);
}

typedef struct names {
    char **v;
    uint64_t n;
    size_t cap;
} names_t;

static int add_name(names_t *nm, const char *s)
{
    if (cs_grow(&nm->v, &nm->cap, (size_t)nm->n + 1, sizeof(char *), 64))
        return -1;
    if ((nm->v[nm->n] = strdup(s)) == NULL)
        return -1;
    nm->n++;
    return 0;
}

/* Every <host> of the subtree of n (except `skip`), into nm. */
static int subtree_hosts(const xmlNode *n, const char *skip, names_t *nm)
{
    for (const xmlNode *c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (is_elem(c, "host")) {
            char id[256];
            attr(c, "id", id, sizeof(id));
            if (strcmp(id, skip) != 0 && add_name(nm, id))
                return -1;
        } else if (subtree_hosts(c, skip, nm)) {
            return -1;
        }
    }
    return 0;
}

static const xmlNode *find_zone(const xmlNode *n, const char *id)
{
    for (const xmlNode *c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (is_elem(c, "zone")) {
            char v[256];
            attr(c, "id", v, sizeof(v));
            if (strcmp(v, id) == 0)
                return c;
        }
        const xmlNode *r = find_zone(c, id);
        if (r)
            return r;
    }
    return NULL;
}

/* The switch element of zone z: its router or host named `name`, else its
 * only router child; NULL when the zone has none (*nrouters: its routers). */
static xmlNode *switch_elem(xmlNode *z, const char *name, int *nrouters)
{
    xmlNode *only = NULL;
    *nrouters = 0;
    for (xmlNode *c = z->children; c; c = c->next) {
        if (!is_elem(c, "router") && !is_elem(c, "host"))
            continue;
        char id[256];
        attr(c, "id", id, sizeof(id));
        if (name[0] && strcmp(id, name) == 0)
            return c;
        if (!name[0] && is_elem(c, "router")) {
            only = c;
            (*nrouters)++;
        }
    }
    return name[0] || *nrouters != 1 ? NULL : only;
}

/* reduce_types / reduce_ops: a comma list of collstep's names into a mask. */
static int parse_list(const char *v, int ops, uint32_t *mask, char *bad, size_t blen)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", v);
    *mask = 0;
    for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        int k = ops ? (int)cs_op_parse(t) : (int)cs_dtype_parse(t);
        if (k >= (ops ? CS_OP_COUNT : CS_DT_COUNT)) {
            snprintf(bad, blen, "%s", t);
            return -1;
        }
        *mask |= 1u << k;
    }
    return *mask ? 0 : -1;
}

static void defaults(cs_plat_switch_t *sw)
{
    uint32_t all = (1u << CS_DT_COUNT) - 1u;
    uint32_t minmax = (1u << CS_DT_F16) | (1u << CS_DT_BF16) | (1u << CS_DT_I32) |
                      (1u << CS_DT_I64);
    memset(sw->types, 0, sizeof(sw->types));
    if (sw->kind == CS_REDUCE_NVLS) {
        sw->types[CS_OP_SUM] = all;
        sw->types[CS_OP_MIN] = sw->types[CS_OP_MAX] = minmax;
        sw->reduce_lat = 0.1e-6;
    } else {
        uint32_t t = all & ~(1u << CS_DT_BF16);
        sw->types[CS_OP_SUM] = sw->types[CS_OP_MIN] = sw->types[CS_OP_MAX] = t;
        sw->reduce_lat = 1e-6;
    }
    sw->reduce_bw = 0;
}

/* A <host> or <router> of the document, by name. */
typedef struct elem_ref {
    char *name;
    xmlNode *node;
} elem_ref_t;

typedef struct ctx {
    elem_ref_t *idx; /* every <host> and <router> of the document, sorted by name: read
                        once, when a zone names one outside itself */
    size_t nidx, cap_idx;
    int have_idx;
    xmlDocPtr doc;
    const char *fname;
    int convert;
    cs_plat_switch_t *v;
    int n;
    size_t cap;
    cs_err_t *err;
} ctx_t;

/* The value of <prop id="key"> of zone z, whole (xmlFree it), and its
 * line; NULL when absent. */
static xmlChar *zprop_dup(const xmlNode *z, const char *key, int *line)
{
    const xmlNode *c = zprop_node(z, key);
    if (!c)
        return NULL;
    *line = (int)xmlGetLineNo(c);
    return xmlGetProp(c, (const xmlChar *)"value");
}

static int index_walk(ctx_t *c, xmlNode *n)
{
    for (xmlNode *e = n->children; e; e = e->next) {
        if (e->type != XML_ELEMENT_NODE)
            continue;
        if (is_elem(e, "host") || is_elem(e, "router")) {
            xmlChar *id = xmlGetProp(e, (const xmlChar *)"id");
            if (id == NULL)
                continue;
            char *name = strdup((const char *)id);
            xmlFree(id);
            if (name == NULL || cs_grow(&c->idx, &c->cap_idx, c->nidx + 1, sizeof(*c->idx), 256)) {
                free(name);
                return -1;
            }
            c->idx[c->nidx++] = (elem_ref_t){name, e};
        } else if (index_walk(c, e)) {
            return -1;
        }
    }
    return 0;
}

static int cmp_ref(const void *a, const void *b)
{
    return strcmp(((const elem_ref_t *)a)->name, ((const elem_ref_t *)b)->name);
}

/* The <host> or <router> named `name` anywhere in the document (NULL:
 * none; *oom set when the index could not be built). */
static xmlNode *find_elem(ctx_t *c, const char *name, int *oom)
{
    if (!c->have_idx) {
        if (index_walk(c, xmlDocGetRootElement(c->doc))) {
            *oom = 1;
            return NULL;
        }
        qsort(c->idx, c->nidx, sizeof(*c->idx), cmp_ref);
        c->have_idx = 1;
    }
    elem_ref_t key = {(char *)name, NULL};
    const elem_ref_t *r = c->nidx ? bsearch(&key, c->idx, c->nidx, sizeof(*c->idx), cmp_ref) : NULL;
    return r ? r->node : NULL;
}

/* reduce_hosts: each name, a <host> of the document, into nm. */
static int add_hosts(ctx_t *c, names_t *nm, char *list, const char *zid, int line)
{
    int n = 0;
    for (char *save = NULL, *t = strtok_r(list, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        int oom = 0;
        xmlNode *e = find_elem(c, t, &oom);
        if (oom)
            return CS_ERR_NOMEM;
        if (e == NULL || !is_elem(e, "host"))
            return cs_err_set(c->err, CS_ERR_PARSE,
                              "%s:%d: zone %s: reduce_hosts names '%s', which is no host of the "
                              "platform",
                              c->fname, line, zid, t);
        if (add_name(nm, t))
            return CS_ERR_NOMEM;
        n++;
    }
    return n ? CS_OK
             : cs_err_set(c->err, CS_ERR_PARSE,
                          "%s:%d: zone %s: expected reduce_hosts as host names separated by commas, "
                          "found none",
                          c->fname, line, zid);
}

static int zone_switch(ctx_t *c, xmlNode *z, const char *kind, int kline)
{
    char zid[128], name[256], val[512], bad[64];
    attr(z, "id", zid, sizeof(zid));
    if (cs_grow(&c->v, &c->cap, (size_t)c->n + 1, sizeof(*c->v), 8))
        return cs_err_set(c->err, CS_ERR_NOMEM, "out of memory");
    cs_plat_switch_t *sw = &c->v[c->n];
    memset(sw, 0, sizeof(*sw));
    c->n++;
    sw->line = kline;
    snprintf(sw->zone, sizeof(sw->zone), "%s", zid);
    sw->kind = (int)cs_reduce_kind_parse(kind);
    if (sw->kind == CS_REDUCE_KIND_COUNT)
        return cs_err_set(c->err, CS_ERR_PARSE,
                          "%s:%d: zone %s: expected reduce = nvls or sharp, found '%s'", c->fname,
                          kline, zid, kind);
    defaults(sw);
    int line = zprop(z, "reduce_bw", val, sizeof(val));
    if (line && (cs__parse_bandwidth(val, &sw->reduce_bw) || !(sw->reduce_bw > 0)))
        return cs_err_set(c->err, CS_ERR_PARSE,
                          "%s:%d: zone %s: expected reduce_bw as a positive bandwidth like "
                          "900GBps, found '%s'",
                          c->fname, line, zid, val);
    line = zprop(z, "reduce_lat", val, sizeof(val));
    if (line && (cs__parse_latency(val, &sw->reduce_lat) || !(sw->reduce_lat >= 0)))
        return cs_err_set(c->err, CS_ERR_PARSE,
                          "%s:%d: zone %s: expected reduce_lat as a latency like 500ns, found '%s'",
                          c->fname, line, zid, val);
    uint32_t types = 0, ops = 0;
    int tl = zprop(z, "reduce_types", val, sizeof(val));
    if (tl && parse_list(val, 0, &types, bad, sizeof(bad)))
        return cs_err_set(c->err, CS_ERR_PARSE,
                          "%s:%d: zone %s: reduce_types: expected element types like "
                          "float,half,int32, found '%s'",
                          c->fname, tl, zid, bad[0] ? bad : val);
    bad[0] = '\0';
    int ol = zprop(z, "reduce_ops", val, sizeof(val));
    if (ol && parse_list(val, 1, &ops, bad, sizeof(bad)))
        return cs_err_set(c->err, CS_ERR_PARSE,
                          "%s:%d: zone %s: reduce_ops: expected operators like sum,min,max, "
                          "found '%s'",
                          c->fname, ol, zid, bad[0] ? bad : val);
    if (tl || ol) { /* their cross product, the default for the one not given */
        for (int o = 0; o < CS_OP_COUNT; o++) {
            uint32_t t = tl ? types : sw->types[o] | sw->types[CS_OP_SUM];
            sw->types[o] = (ol ? (ops >> o) & 1u : sw->types[o] != 0) ? t : 0;
        }
    }
    line = zprop(z, "reduce_switch", name, sizeof(name));
    int nrouters = 0;
    xmlNode *e = switch_elem(z, name, &nrouters);
    int oom = 0;
    if (e == NULL && name[0]) /* a zone that only declares its switch */
        e = find_elem(c, name, &oom);
    if (oom)
        return cs_err_set(c->err, CS_ERR_NOMEM, "out of memory");
    if (e == NULL)
        return line ? cs_err_set(c->err, CS_ERR_PARSE,
                                 "%s:%d: zone %s: reduce_switch names '%s', which is no "
                                 "router or host of the platform",
                                 c->fname, line, zid, name)
                    : cs_err_set(c->err, CS_ERR_PARSE,
                                 "%s:%d: zone %s reduces (reduce=%s) but has %d routers: its "
                                 "switch is its one <router>, or the router or host named by a "
                                 "reduce_switch property",
                                 c->fname, kline, zid, kind, nrouters);
    attr(e, "id", sw->host, sizeof(sw->host));
    if (c->convert && is_elem(e, "router")) {
        xmlNodeSetName(e, (const xmlChar *)"host");
        xmlSetProp(e, (const xmlChar *)"speed", (const xmlChar *)"1f");
        xmlUnsetProp(e, (const xmlChar *)"coordinates");
    }
    names_t nm = {0};
    int st = subtree_hosts(z, sw->host, &nm) ? CS_ERR_NOMEM : CS_OK;
    line = zprop(z, "reduce_zones", val, sizeof(val));
    char list[512];
    snprintf(list, sizeof(list), "%s", val);
    for (char *save = NULL, *t = line ? strtok_r(list, ", ", &save) : NULL; st == CS_OK && t;
         t = strtok_r(NULL, ", ", &save)) {
        const xmlNode *oz = strcmp(t, "*") == 0 ? xmlDocGetRootElement(c->doc)
                                                : find_zone(xmlDocGetRootElement(c->doc), t);
        if (oz == NULL)
            st = cs_err_set(c->err, CS_ERR_PARSE,
                            "%s:%d: zone %s: reduce_zones names '%s', which is no zone", c->fname,
                            line, zid, t);
        else if (subtree_hosts(oz, sw->host, &nm))
            st = CS_ERR_NOMEM;
    }
    xmlChar *hl = st == CS_OK ? zprop_dup(z, "reduce_hosts", &line) : NULL;
    if (hl)
        st = add_hosts(c, &nm, (char *)hl, zid, line);
    xmlFree(hl);
    if (st == CS_OK && nm.n > 1) { /* sorted, unique */
        qsort(nm.v, (size_t)nm.n, sizeof(char *), cmp_str);
        uint64_t k = 1;
        for (uint64_t i = 1; i < nm.n; i++) {
            if (strcmp(nm.v[i], nm.v[k - 1]) == 0)
                free(nm.v[i]);
            else
                nm.v[k++] = nm.v[i];
        }
        nm.n = k;
    }
    sw->hosts = nm.v;
    sw->nhosts = nm.n;
    if (st == CS_ERR_NOMEM)
        return cs_err_set(c->err, st, "out of memory");
    return st;
}

static void index_free(ctx_t *c)
{
    for (size_t i = 0; i < c->nidx; i++)
        free(c->idx[i].name);
    free(c->idx);
}

static int walk(ctx_t *c, xmlNode *n)
{
    for (xmlNode *z = n->children; z; z = z->next) {
        if (z->type != XML_ELEMENT_NODE)
            continue;
        if (is_elem(z, "zone")) {
            char kind[64];
            int kl = zprop(z, "reduce", kind, sizeof(kind));
            if (kl) {
                int st = zone_switch(c, z, kind, kl);
                if (st != CS_OK)
                    return st;
            }
        }
        int st = walk(c, z);
        if (st != CS_OK)
            return st;
    }
    return CS_OK;
}

int cs__plat_switches(void *doc, const char *fname, int convert, cs_plat_switch_t **out, int *n,
                      cs_err_t *err)
{
    ctx_t c = {.doc = doc, .fname = fname, .convert = convert, .err = err};
    xmlNode *root = xmlDocGetRootElement(c.doc);
    int st = root ? walk(&c, root) : CS_OK;
    index_free(&c);
    if (st != CS_OK) {
        cs__plat_switches_free(c.v, c.n);
        return st;
    }
    *out = c.v;
    *n = c.n;
    return CS_OK;
}

void cs__plat_switches_free(cs_plat_switch_t *v, int n)
{
    for (int i = 0; v && i < n; i++) {
        for (uint64_t k = 0; k < v[i].nhosts; k++)
            free(v[i].hosts[k]);
        free(v[i].hosts);
    }
    free(v);
}
