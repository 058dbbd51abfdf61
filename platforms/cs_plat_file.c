/*
 * cs_plat_file.c - a SimGrid platform file read with libxml2 (contract in
 * cs_plat_file.h).  libxml2 checks that the file is well-formed XML and
 * gives each element's line (xmlGetLineNo); SimGrid checks everything
 * else about the platform when it loads the same file (cs_plat_sg.cpp).
 * Read here: the collstep properties and their values, the <cluster> and
 * <backbone> elements (for the derived tiers), element lines.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/hash.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "cs_grow.h"
#include "cs_plat_file.h"

typedef struct {
    const char *fname;
    char msg[400];
    int line, col, set;
} cs__xerr_t;

/* libxml2's structured error handler: keep the first error. */
static void cs__on_xml_error(void *ctx, xmlErrorPtr e)
{
    cs__xerr_t *x = ctx;
    if (x->set || e == NULL || e->level < XML_ERR_ERROR)
        return;
    x->set = 1;
    x->line = e->line;
    x->col = e->int2;
    snprintf(x->msg, sizeof(x->msg), "%s", e->message ? e->message : "malformed XML");
    size_t n = strlen(x->msg);
    while (n > 0 && (x->msg[n - 1] == '\n' || x->msg[n - 1] == ' '))
        x->msg[--n] = '\0';
}

static int cs__is(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

/* Attribute value copied into out ("" when absent). */
static void cs__attr(const xmlNode *n, const char *name, char *out, size_t len)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    snprintf(out, len, "%s", v ? (const char *)v : "");
    xmlFree(v);
}

static int cs__line(const xmlNode *n)
{
    return (int)xmlGetLineNo(n);
}

typedef struct {
    cs__pfile_t *f;
    cs_err_t *err;
    const xmlNode *top_zone;
    size_t ccap, bcap, pcap, ncap;
} cs__walk_t;

/* Append id to a growing array of char[128]. */
static int cs__push_id(cs__walk_t *w, char (**v)[128], int *n, size_t *cap, const xmlNode *node)
{
    if (cs_grow(v, cap, (size_t)*n + 1, sizeof(**v), 8))
        return cs_err_set(w->err, CS_ERR_NOMEM, "out of memory");
    cs__attr(node, "id", (*v)[(*n)++], sizeof(**v));
    return CS_OK;
}

static int cs__fail(cs__walk_t *w, const xmlNode *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int cs__fail(cs__walk_t *w, const xmlNode *n, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return cs_err_set(w->err, CS_ERR_PARSE, "%s:%d: %s", w->f->fname, cs__line(n), msg);
}

static int cs__add_cluster(cs__walk_t *w, const xmlNode *n, const char *topology)
{
    cs__pfile_t *f = w->f;
    if (cs_grow(&f->cl, &w->ccap, (size_t)f->ncl + 1, sizeof(*f->cl), 8))
        return cs_err_set(w->err, CS_ERR_NOMEM, "out of memory");
    cs__pcluster_t *c = &f->cl[f->ncl++];
    memset(c, 0, sizeof(*c));
    cs__attr(n, "id", c->id, sizeof(c->id));
    if (topology)
        snprintf(c->topology, sizeof(c->topology), "%s", topology);
    else
        cs__attr(n, "topology", c->topology, sizeof(c->topology));
    if (c->topology[0] == '\0')
        snprintf(c->topology, sizeof(c->topology), "FLAT");
    cs__attr(n, "topo_parameters", c->params, sizeof(c->params));
    c->line = cs__line(n);
    return CS_OK;
}

/* A <prop> child of `parent`. */
static int cs__prop(cs__walk_t *w, const xmlNode *parent, const xmlNode *n)
{
    char id[64], val[1024];
    cs__attr(n, "id", id, sizeof(id));
    cs__attr(n, "value", val, sizeof(val));
    if (strcmp(id, "device") == 0 && (cs__is(parent, "host") || cs__is(parent, "cluster") ||
                                      cs__is(parent, "zone"))) {
        if (strcmp(val, "gpu") != 0 && strcmp(val, "cpu") != 0)
            return cs__fail(w, n,
                            "<%s> has device '%s': expected a device kind, gpu or cpu (hosts "
                            "with a device property are the ranks)",
                            (const char *)parent->name, val);
    } else if (strcmp(id, "tier") == 0 && cs__is(parent, "link")) {
        if (val[0] == '\0' || strlen(val) >= sizeof(((cs_tier_info_t *)0)->name))
            return cs__fail(w, n, "expected a tier name of 1 to %zu characters, found '%s'",
                            sizeof(((cs_tier_info_t *)0)->name) - 1, val);
    } else if (parent == w->top_zone) {
        if (strcmp(id, "collstep_dims") == 0) {
            snprintf(w->f->dims, sizeof(w->f->dims), "%.*s", (int)sizeof(w->f->dims) - 1, val);
            w->f->dims_line = cs__line(n);
        } else if (strcmp(id, "collstep_factors") == 0) {
            snprintf(w->f->factors, sizeof(w->f->factors), "%.*s", (int)sizeof(w->f->factors) - 1, val);
        } else if (strcmp(id, "collstep_spec") == 0) {
            snprintf(w->f->spec, sizeof(w->f->spec), "%.*s", (int)sizeof(w->f->spec) - 1, val);
        } else if (strcmp(id, "collstep_nccl_fit") == 0) {
            if (strlen(val) >= sizeof(w->f->nccl_fit))
                return cs__fail(w, n, "collstep_nccl_fit: expected at most %zu characters",
                                sizeof(w->f->nccl_fit) - 1);
            snprintf(w->f->nccl_fit, sizeof(w->f->nccl_fit), "%s", val);
            w->f->nccl_fit_line = cs__line(n);
        }
    }
    return CS_OK;
}

static int cs__walk(cs__walk_t *w, const xmlNode *parent)
{
    for (const xmlNode *n = parent->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        int st = CS_OK;
        if (cs__is(n, "zone") && w->top_zone == NULL)
            w->top_zone = n;
        if (cs__is(n, "prop"))
            st = cs__prop(w, parent, n);
        else if (cs__is(n, "cluster"))
            st = cs__add_cluster(w, n, NULL);
        else if (cs__is(n, "zone")) {
            char r[32];
            cs__attr(n, "routing", r, sizeof(r));
            if (strcmp(r, "Cluster") == 0)
                st = cs__add_cluster(w, n, "CABINETS");
            else if (strcmp(r, "None") == 0)
                st = cs__push_id(w, &w->f->nonezones, &w->f->nnone, &w->ncap, n);
        } else if (cs__is(n, "backbone")) {
            st = cs__push_id(w, &w->f->backbones, &w->f->nbackbones, &w->bcap, n);
        } else if (cs__is(n, "peer")) {
            st = cs__push_id(w, &w->f->peers, &w->f->npeers, &w->pcap, n);
        }
        if (st == CS_OK)
            st = cs__walk(w, n);
        if (st != CS_OK)
            return st;
    }
    return CS_OK;
}

int cs__pfile_parse(const char *text, const char *fname, cs__pfile_t **out, cs_err_t *err)
{
    cs__pfile_t *f = calloc(1, sizeof(*f));
    if (f == NULL || (f->fname = strdup(fname)) == NULL) {
        free(f);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    }
    cs__xerr_t xe = {.fname = fname};
    xmlParserCtxtPtr ctx = xmlNewParserCtxt();
    if (ctx == NULL) {
        cs__pfile_free(f);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    }
    xmlSetStructuredErrorFunc(&xe, cs__on_xml_error);
    /* no network, no entity expansion from outside: SimGrid's DOCTYPE names
     * a URL that is never fetched */
    xmlDocPtr doc = xmlCtxtReadMemory(ctx, text, (int)strlen(text), fname, NULL,
                                      XML_PARSE_NONET | XML_PARSE_NOWARNING | XML_PARSE_HUGE);
    xmlSetStructuredErrorFunc(NULL, NULL);
    xmlFreeParserCtxt(ctx);
    if (doc == NULL || xe.set) {
        if (doc)
            xmlFreeDoc(doc);
        cs__pfile_free(f);
        return cs_err_set(err, CS_ERR_PARSE, "%s:%d:%d: %s", fname, xe.line > 0 ? xe.line : 1,
                          xe.col > 0 ? xe.col : 1, xe.set ? xe.msg : "not XML");
    }
    f->doc = doc;
    xmlNode *root = xmlDocGetRootElement(doc);
    if (root == NULL || !cs__is(root, "platform")) {
        int st = cs_err_set(err, CS_ERR_PARSE, "%s:%d: expected <platform> as the root element, "
                                               "found <%s>",
                            fname, root ? cs__line(root) : 1, root ? (const char *)root->name : "");
        cs__pfile_free(f);
        return st;
    }
    if (doc->intSubset == NULL) {
        int st = cs_err_set(err, CS_ERR_PARSE,
                            "%s:%d: expected <!DOCTYPE platform SYSTEM "
                            "\"https://simgrid.org/simgrid.dtd\"> before <platform> (SimGrid "
                            "3.32's parser needs it), found none",
                            fname, cs__line(root));
        cs__pfile_free(f);
        return st;
    }
    cs__walk_t w = {.f = f, .err = err};
    int st = cs__walk(&w, root);
    if (st != CS_OK) {
        cs__pfile_free(f);
        return st;
    }
    *out = f;
    return CS_OK;
}

void cs__pfile_free(cs__pfile_t *f)
{
    if (f == NULL)
        return;
    if (f->doc)
        xmlFreeDoc(f->doc);
    free(f->cl);
    free(f->backbones);
    free(f->peers);
    free(f->nonezones);
    free(f->fname);
    free(f);
}

static const xmlNode *cs__find(const xmlNode *parent, const char *elem, const char *id)
{
    for (const xmlNode *n = parent->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        if (cs__is(n, elem)) {
            xmlChar *v = xmlGetProp(n, (const xmlChar *)"id");
            int hit = v && strcmp((const char *)v, id) == 0;
            xmlFree(v);
            if (hit)
                return n;
        }
        const xmlNode *r = cs__find(n, elem, id);
        if (r)
            return r;
    }
    return NULL;
}

int cs__pfile_line(const cs__pfile_t *f, const char *elem, const char *id)
{
    if (f == NULL || f->doc == NULL || id == NULL)
        return 0;
    const xmlNode *n = cs__find((const xmlNode *)f->doc, elem, id);
    return n ? cs__line(n) : 0;
}

int cs__pfile_attr(const cs__pfile_t *f, const char *elem, const char *id, const char *attr,
                   char *out, size_t len)
{
    if (len)
        out[0] = '\0';
    if (f == NULL || f->doc == NULL || id == NULL)
        return 0;
    const xmlNode *n = cs__find((const xmlNode *)f->doc, elem, id);
    if (n == NULL)
        return 0;
    if (len)
        cs__attr(n, attr, out, len);
    return cs__line(n);
}

/* The ideal model's duplex rewrite (see cs_plat_file.h). */
static void cs__split(xmlNode *parent, xmlHashTablePtr made, int pass)
{
    for (xmlNode *n = parent->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        if (pass == 0 && cs__is(n, "link") && !xmlHasProp(n, (const xmlChar *)"sharing_policy")) {
            xmlChar *id = xmlGetProp(n, (const xmlChar *)"id");
            if (id) {
                xmlSetProp(n, (const xmlChar *)"sharing_policy", (const xmlChar *)"SPLITDUPLEX");
                xmlHashAddEntry(made, id, (void *)1);
                xmlFree(id);
            }
        } else if (pass == 1 && cs__is(n, "link_ctn")) {
            /* no direction, or NONE (SimGrid's default): the UP half */
            xmlChar *id = xmlGetProp(n, (const xmlChar *)"id");
            xmlChar *dir = xmlGetProp(n, (const xmlChar *)"direction");
            if (id && xmlHashLookup(made, id) && (!dir || strcmp((const char *)dir, "NONE") == 0))
                xmlSetProp(n, (const xmlChar *)"direction", (const xmlChar *)"UP");
            xmlFree(dir);
            xmlFree(id);
        } else if (pass == 1 && cs__is(n, "host_link")) {
            /* a host_link names links, not halves: the halves of a link
             * made split-duplex are X_UP (up) and X_DOWN (down) */
            static const char *const side[2][2] = {{"up", "_UP"}, {"down", "_DOWN"}};
            for (int k = 0; k < 2; k++) {
                xmlChar *id = xmlGetProp(n, (const xmlChar *)side[k][0]);
                if (id && xmlHashLookup(made, id)) {
                    char half[512];
                    snprintf(half, sizeof(half), "%s%s", (const char *)id, side[k][1]);
                    xmlSetProp(n, (const xmlChar *)side[k][0], (const xmlChar *)half);
                }
                xmlFree(id);
            }
        }
        cs__split(n, made, pass);
    }
}

static int cs__count_unsplit(const xmlNode *parent)
{
    int n = 0;
    for (const xmlNode *c = parent->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        n += cs__is(c, "link") && !xmlHasProp((xmlNode *)c, (const xmlChar *)"sharing_policy");
        n += cs__count_unsplit(c);
    }
    return n;
}

int cs__pfile_split_count(const cs__pfile_t *f)
{
    return f && f->doc ? cs__count_unsplit((const xmlNode *)f->doc) : 0;
}

/* Elements in document order, with their lines. */
static void cs__lines(const xmlNode *parent, int *v, int *n, int max)
{
    for (const xmlNode *c = parent->children; c && *n < max; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        v[(*n)++] = cs__line(c);
        cs__lines(c, v, n, max);
    }
}

int cs__pfile_map_line(const cs__pfile_t *f, const char *text, int line)
{
    if (!f || !f->doc || !text || line <= 0)
        return line;
    xmlDocPtr d = xmlReadMemory(text, (int)strlen(text), "rewritten.xml", NULL,
                                XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                    XML_PARSE_HUGE);
    if (d == NULL)
        return 0;
    enum { MAXE = 1 << 20 };
    int *a = malloc(sizeof(int) * MAXE), *b = malloc(sizeof(int) * MAXE), na = 0, nb = 0;
    int out = 0;
    if (a && b) {
        cs__lines((const xmlNode *)d, a, &na, MAXE);
        cs__lines((const xmlNode *)f->doc, b, &nb, MAXE);
        /* the same elements in the same order: the last one starting at or
         * before the line SimGrid named */
        for (int i = 0; i < na && i < nb && a[i] <= line; i++)
            out = b[i];
    }
    free(a);
    free(b);
    xmlFreeDoc(d);
    return out;
}

int cs__pfile_text(const cs__pfile_t *f, int split, char **out, cs_err_t *err)
{
    xmlDocPtr d = split ? xmlCopyDoc(f->doc, 1) : f->doc;
    xmlHashTablePtr made = split ? xmlHashCreate(1024) : NULL;
    if (d == NULL || (split && made == NULL)) {
        if (split && d)
            xmlFreeDoc(d);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    }
    if (split) {
        cs__split((xmlNode *)d, made, 0);
        cs__split((xmlNode *)d, made, 1);
        xmlHashFree(made, NULL);
    }
    xmlChar *mem = NULL;
    int len = 0;
    xmlDocDumpMemory(d, &mem, &len);
    if (split)
        xmlFreeDoc(d);
    char *s = mem ? malloc((size_t)len + 1) : NULL;
    if (s == NULL) {
        xmlFree(mem);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    }
    memcpy(s, mem, (size_t)len);
    s[len] = '\0';
    xmlFree(mem);
    *out = s;
    return CS_OK;
}

/* ---- ranks of a platform given only as XML text ------------------------- */

typedef struct {
    char **v;
    uint64_t n;
    size_t cap;
    int devices; /* 1: collect device hosts only */
    int fail;
} cs__names_t;

static void cs__names_walk(const xmlNode *parent, cs__names_t *nm)
{
    for (const xmlNode *n = parent->children; n && !nm->fail; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        if (cs__is(n, "host")) {
            int dev = 0;
            for (const xmlNode *c = n->children; c; c = c->next)
                if (cs__is(c, "prop")) {
                    char id[32], val[32];
                    cs__attr(c, "id", id, sizeof(id));
                    cs__attr(c, "value", val, sizeof(val));
                    dev |= strcmp(id, "device") == 0 && (strcmp(val, "gpu") == 0 ||
                                                         strcmp(val, "cpu") == 0);
                }
            if (dev || !nm->devices) {
                if (cs_grow(&nm->v, &nm->cap, nm->n + 1, sizeof(char *), 64)) {
                    nm->fail = 1;
                    return;
                }
                xmlChar *id = xmlGetProp(n, (const xmlChar *)"id");
                nm->v[nm->n] = strdup(id ? (const char *)id : "");
                xmlFree(id);
                if (nm->v[nm->n] == NULL) {
                    nm->fail = 1;
                    return;
                }
                nm->n++;
            }
        }
        cs__names_walk(n, nm);
    }
}

static int cs__cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cs_platform_xml_rank_hosts(const char *xml, char ***out, uint64_t *n, cs_err_t *err)
{
    xmlDocPtr doc = xmlReadMemory(xml, (int)strlen(xml), "platform.xml", NULL,
                                  XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                      XML_PARSE_HUGE);
    if (doc == NULL)
        return cs_err_set(err, CS_ERR_PARSE, "platform: the XML text is not well-formed");
    cs__names_t nm = {.devices = 1};
    cs__names_walk((const xmlNode *)doc, &nm);
    if (!nm.fail && nm.n == 0) {
        nm.devices = 0;
        cs__names_walk((const xmlNode *)doc, &nm);
        if (!nm.fail)
            qsort(nm.v, nm.n, sizeof(char *), cs__cmp_str);
    }
    xmlFreeDoc(doc);
    if (nm.fail) {
        for (uint64_t i = 0; i < nm.n; i++)
            free(nm.v[i]);
        free(nm.v);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    }
    *out = nm.v;
    *n = nm.n;
    return CS_OK;
}
