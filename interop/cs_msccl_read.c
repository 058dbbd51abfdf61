/*
 * cs_msccl_read.c - read an MSCCL algorithm XML with libxml2 and check it
 * the way the executor does (and a little more): attributes present and
 * numeric, gpu ids 0..ngpus-1 once each, threadblock ids 0..n-1, peers in
 * range and not the gpu itself, one threadblock per (peer, channel,
 * direction), steps numbered 0, 1, ... in their threadblock, sends only in
 * threadblocks with a send peer (receives likewise), buffers i / o / s with
 * offset + cnt inside the gpu's i_chunks / o_chunks / s_chunks, and every
 * dependency naming an existing step that signals.  Every error names the
 * file and the line of the element at fault.  The schedule itself is built
 * by cs_msccl_build.c.
 */
#include "cs_msccl_int.h"

#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cs_grow.h"

int cs_msccl_detect(const char *buf, size_t len)
{
    size_t i = 0;
    if (len >= 3 && (unsigned char)buf[0] == 0xef && (unsigned char)buf[1] == 0xbb &&
        (unsigned char)buf[2] == 0xbf)
        i = 3; /* UTF-8 byte order mark */
    while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n'))
        i++;
    static const char *const heads[] = {"<?xml", "<algo", "<!--"};
    for (size_t h = 0; h < sizeof(heads) / sizeof(heads[0]); h++) {
        size_t n = strlen(heads[h]);
        if (len - i >= n && memcmp(buf + i, heads[h], n) == 0)
            return 1;
    }
    return 0;
}

/* ---- attributes ------------------------------------------------------------ */

static uint32_t line_of(xmlNode *n)
{
    long l = xmlGetLineNo(n);
    return l > 0 ? (uint32_t)l : 0;
}

static int fail(cs_err_t *err, const char *fname, xmlNode *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(cs_err_t *err, const char *fname, xmlNode *n, const char *fmt, ...)
{
    char msg[CS_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return cs_err_set(err, CS_ERR_PARSE, "%s:%u: %s", fname, n ? line_of(n) : 0, msg);
}

/* Attribute `key` of n as text (NULL when absent), copied into buf. */
static const char *attr(xmlNode *n, const char *key, char *buf, size_t len)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)key);
    if (v == NULL)
        return NULL;
    snprintf(buf, len, "%s", (const char *)v);
    xmlFree(v);
    return buf;
}

/* Integer attribute: required (present == 1) or with default `def`. */
static int attr_i64(const char *fname, xmlNode *n, const char *key, int required, int64_t def,
                    int64_t lo, int64_t hi, int64_t *out, cs_err_t *err)
{
    char buf[64], shown[40];
    const char *v = attr(n, key, buf, sizeof(buf));
    if (v == NULL) {
        if (required)
            return fail(err, fname, n, "<%s> lacks the attribute %s", (const char *)n->name, key);
        *out = def;
        return CS_OK;
    }
    while (*v == ' ' || *v == '\t')
        v++;
    char *end = NULL;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    while (end && (*end == ' ' || *end == '\t'))
        end++;
    size_t vl = strlen(v) < sizeof(shown) - 1 ? strlen(v) : sizeof(shown) - 1;
    memcpy(shown, v, vl);
    shown[vl] = '\0';
    for (char *p = shown; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
            *p = '?';
    if (end == v || *end != '\0' || errno != 0)
        return fail(err, fname, n, "%s: expected an integer, found '%s'", key, shown);
    if (x < lo || x > hi)
        return fail(err, fname, n, "%s: expected %lld to %lld, found %lld", key, (long long)lo,
                    (long long)hi, x);
    *out = x;
    return CS_OK;
}

static int attr_int(const char *fname, xmlNode *n, const char *key, int required, int def, int lo,
                    int hi, int *out, cs_err_t *err)
{
    int64_t v;
    int rc = attr_i64(fname, n, key, required, def, lo, hi, &v, err);
    if (rc == CS_OK)
        *out = (int)v;
    return rc;
}

/* Copy s into d of n bytes, cut if longer. */
static void cpy(char *d, size_t n, const char *s)
{
    size_t l = strlen(s);
    if (l >= n)
        l = n - 1;
    memcpy(d, s, l);
    d[l] = '\0';
}

static int is_elem(xmlNode *c)
{
    return c->type == XML_ELEMENT_NODE;
}

/* Text, comments and processing instructions are allowed between elements;
 * other content (text that is not blank) is an error. */
static int check_child(const char *fname, xmlNode *c, const char *want, cs_err_t *err)
{
    if (c->type == XML_TEXT_NODE) {
        for (const xmlChar *p = c->content; p && *p; p++)
            if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
                return fail(err, fname, c, "unexpected text inside <%s>",
                            c->parent ? (const char *)c->parent->name : "?");
        return 0;
    }
    if (!is_elem(c))
        return 0;
    if (strcmp((const char *)c->name, want) != 0)
        return fail(err, fname, c, "expected <%s>, found <%s>", want, (const char *)c->name);
    return 1;
}

/* ---- elements ---------------------------------------------------------------- */

static int buf_code(const char *fname, xmlNode *n, const char *key, int *out, cs_err_t *err)
{
    char b[16];
    const char *v = attr(n, key, b, sizeof(b));
    if (v == NULL)
        return fail(err, fname, n, "<step> lacks the attribute %s", key);
    if (strcmp(v, "i") == 0)
        *out = XB_I;
    else if (strcmp(v, "o") == 0)
        *out = XB_O;
    else if (strcmp(v, "s") == 0)
        *out = XB_S;
    else
        return fail(err, fname, n, "%s: expected a buffer i, o or s, found '%.8s'", key, v);
    return CS_OK;
}

static int read_step(const char *fname, xmlNode *n, xtb_t *tb, cs_err_t *err)
{
    xstep_t x;
    memset(&x, 0, sizeof(x));
    char tbuf[16];
    const char *t = attr(n, "type", tbuf, sizeof(tbuf));
    if (t == NULL)
        return fail(err, fname, n, "<step> lacks the attribute type");
    x.type = -1;
    for (int i = 0; i < X_NTYPES; i++)
        if (strcmp(t, cs__msccl_type_name(i)) == 0)
            x.type = i;
    if (x.type < 0)
        return fail(err, fname, n,
                    "type: expected a step type (s, r, rcs, rrs, rrc, rrcs, cpy, re, nop), found "
                    "'%.8s'",
                    t);
    int rc;
    if ((rc = attr_int(fname, n, "s", 1, 0, 0, INT_MAX, &x.s, err)) ||
        (rc = buf_code(fname, n, "srcbuf", &x.srcbuf, err)) ||
        (rc = attr_int(fname, n, "srcoff", 1, 0, -1, INT_MAX, &x.srcoff, err)) ||
        (rc = buf_code(fname, n, "dstbuf", &x.dstbuf, err)) ||
        (rc = attr_int(fname, n, "dstoff", 1, 0, -1, INT_MAX, &x.dstoff, err)) ||
        (rc = attr_int(fname, n, "cnt", 0, x.type == X_NOP ? 0 : 1, 0, INT_MAX, &x.cnt, err)) ||
        (rc = attr_int(fname, n, "depid", 0, -1, -1, INT_MAX, &x.depid, err)) ||
        (rc = attr_int(fname, n, "deps", 0, -1, -1, INT_MAX, &x.deps, err)) ||
        (rc = attr_int(fname, n, "hasdep", 0, 0, 0, 1, &x.hasdep, err)))
        return rc;
    if (x.s != tb->n)
        return fail(err, fname, n, "s: expected step %d of threadblock %d, found %d", tb->n, tb->id,
                    x.s);
    if (x.type != X_NOP && x.cnt < 1)
        return fail(err, fname, n, "cnt: a %s step moves at least 1 chunk, found %d", t, x.cnt);
    if ((x.depid < 0) != (x.deps < 0))
        return fail(err, fname, n, "depid %d and deps %d: both or neither must be -1", x.depid,
                    x.deps);
    x.line = line_of(n);
    x.wait_tb = x.wait_step = -1;
    x.chain = -1;
    x.tmpbuf = -1;
    if (cs_grow(&tb->st, &tb->cap, (size_t)tb->n + 1, sizeof(*tb->st), 8))
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    tb->st[tb->n++] = x;
    return CS_OK;
}

static int read_tb(const char *fname, xmlNode *n, int ngpus, xgpu_t *g, cs_err_t *err)
{
    xtb_t tb;
    memset(&tb, 0, sizeof(tb));
    int rc;
    if ((rc = attr_int(fname, n, "id", 1, 0, 0, 1 << 20, &tb.id, err)) ||
        (rc = attr_int(fname, n, "send", 1, 0, -1, ngpus - 1, &tb.send, err)) ||
        (rc = attr_int(fname, n, "recv", 1, 0, -1, ngpus - 1, &tb.recv, err)) ||
        (rc = attr_int(fname, n, "chan", 1, 0, 0, CS_MAX_CHANNELS - 1, &tb.chan, err)))
        return rc;
    if (tb.send == g->id || tb.recv == g->id)
        return fail(err, fname, n, "threadblock %d of gpu %d names the gpu itself as its peer",
                    tb.id, g->id);
    tb.line = line_of(n);
    if (cs_grow(&g->tb, &g->cap, (size_t)g->n + 1, sizeof(*g->tb), 4))
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    xtb_t *t = &g->tb[g->n++];
    *t = tb;
    for (xmlNode *c = n->children; c; c = c->next) {
        int k = check_child(fname, c, "step", err);
        if (k < 0)
            return k;
        if (k == 1 && (rc = read_step(fname, c, t, err)) != CS_OK)
            return rc;
    }
    return CS_OK;
}

static int read_gpu(const char *fname, xmlNode *n, xalgo_t *a, cs_err_t *err)
{
    int id, rc;
    if ((rc = attr_int(fname, n, "id", 1, 0, 0, INT_MAX, &id, err)))
        return rc;
    if (id >= a->ngpu)
        return fail(err, fname, n, "gpu id %d out of range: the algo has ngpus=\"%d\"", id,
                    a->ngpu);
    xgpu_t *g = &a->gpu[id];
    if (g->line != 0)
        return fail(err, fname, n, "gpu %d appears twice (first at line %u)", id, g->line);
    g->id = id;
    g->line = line_of(n);
    if (g->line == 0)
        g->line = 1;
    int lim = (int)(CS_MSCCL_MAX_SLOTS);
    if ((rc = attr_int(fname, n, "i_chunks", 1, 0, 0, lim, &g->ichunks, err)) ||
        (rc = attr_int(fname, n, "o_chunks", 1, 0, 0, lim, &g->ochunks, err)) ||
        (rc = attr_int(fname, n, "s_chunks", 0, 0, 0, lim, &g->schunks, err)))
        return rc;
    for (xmlNode *c = n->children; c; c = c->next) {
        int k = check_child(fname, c, "tb", err);
        if (k < 0)
            return k;
        if (k == 1 && (rc = read_tb(fname, c, a->ngpu, g, err)) != CS_OK)
            return rc;
    }
    /* Threadblocks by id, 0..n-1 (the executor refuses gaps and duplicates). */
    xtb_t *byid = calloc((size_t)(g->n ? g->n : 1), sizeof(*byid));
    if (byid == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    for (int t = 0; t < g->n; t++) {
        int tid = g->tb[t].id;
        if (tid >= g->n || byid[tid].line != 0) {
            uint32_t l = g->tb[t].line;
            free(byid);
            return cs_err_set(err, CS_ERR_PARSE,
                              "%s:%u: threadblock id %d of gpu %d: expected each of 0 to %d "
                              "once (the executor refuses gaps and duplicates)",
                              fname, l, tid, id, g->n - 1);
        }
        byid[tid] = g->tb[t];
    }
    free(g->tb);
    g->tb = byid;
    g->cap = (size_t)g->n;
    return CS_OK;
}

static int read_algo(const char *fname, xmlNode *root, xalgo_t *a, cs_err_t *err)
{
    cs_msccl_info_t *in = &a->info;
    char buf[256];
    int rc;
    if (root == NULL || !is_elem(root) || strcmp((const char *)root->name, "algo") != 0)
        return fail(err, fname, root, "expected the root element <algo>, found <%s>",
                    root ? (const char *)root->name : "nothing");
    a->line = line_of(root);
    cpy(in->name, sizeof(in->name), attr(root, "name", buf, sizeof(buf)) ?: "");
    if (attr(root, "coll", buf, sizeof(buf)) == NULL)
        return fail(err, fname, root, "<algo> lacks the attribute coll");
    cpy(in->coll, sizeof(in->coll), buf);
    cpy(in->proto, sizeof(in->proto), attr(root, "proto", buf, sizeof(buf)) ?: "Simple");
    if (strcmp(in->proto, "Simple") != 0 && strcmp(in->proto, "LL") != 0 &&
        strcmp(in->proto, "LL128") != 0)
        return fail(err, fname, root, "proto: expected Simple, LL or LL128, found '%.16s'",
                    in->proto);
    cpy(in->redop, sizeof(in->redop), attr(root, "redop", buf, sizeof(buf)) ?: "");
    int ofp_def;
    if ((rc = attr_int(fname, root, "ngpus", 1, 0, 1, CS_MSCCL_MAX_GPUS, &in->ngpus, err)) ||
        (rc = attr_int(fname, root, "nchunksperloop", 1, 0, 1, (int)CS_MSCCL_MAX_SLOTS,
                       &in->nchunksperloop, err)) ||
        (rc = attr_int(fname, root, "nchannels", 0, 1, 0, CS_MAX_CHANNELS, &in->nchannels, err)) ||
        (rc = attr_int(fname, root, "inplace", 0, 0, 0, 1, &in->inplace, err)))
        return rc;
    ofp_def = !in->inplace;
    if ((rc = attr_int(fname, root, "outofplace", 0, ofp_def, 0, 1, &in->outofplace, err)) ||
        (rc = attr_i64(fname, root, "minBytes", 0, 0, 0, INT64_MAX, &in->min_bytes, err)) ||
        (rc = attr_i64(fname, root, "maxBytes", 0, 0, 0, INT64_MAX, &in->max_bytes, err)))
        return rc;
    if (in->max_bytes != 0 && in->max_bytes < in->min_bytes)
        return fail(err, fname, root, "maxBytes %lld is below minBytes %lld",
                    (long long)in->max_bytes, (long long)in->min_bytes);
    if (!in->inplace && !in->outofplace)
        return fail(err, fname, root,
                    "inplace=\"0\" and outofplace=\"0\": the file serves no call");
    a->ngpu = in->ngpus;
    a->gpu = calloc((size_t)a->ngpu, sizeof(*a->gpu));
    if (a->gpu == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    int seen = 0;
    for (xmlNode *c = root->children; c; c = c->next) {
        int k = check_child(fname, c, "gpu", err);
        if (k < 0)
            return k;
        if (k == 1) {
            if ((rc = read_gpu(fname, c, a, err)) != CS_OK)
                return rc;
            seen++;
        }
    }
    if (seen != a->ngpu) {
        for (int g = 0; g < a->ngpu; g++)
            if (a->gpu[g].line == 0)
                return fail(err, fname, root,
                            "ngpus=\"%d\" but the algo has %d <gpu> elements (gpu %d is "
                            "missing)",
                            a->ngpu, seen, g);
    }
    for (int g = 0; g < a->ngpu; g++)
        if (a->gpu[g].n > in->nthreadblocks)
            in->nthreadblocks = a->gpu[g].n;
    return CS_OK;
}

/* ---- checks across elements ------------------------------------------------- */

static int check_operand(const char *fname, const xgpu_t *g, const xtb_t *tb, const xstep_t *x,
                         int buf, int off, const char *which, cs_err_t *err)
{
    int n = buf == XB_I ? g->ichunks : buf == XB_O ? g->ochunks : g->schunks;
    static const char *const bn[] = {"i", "o", "s"};
    if (off < 0 || (int64_t)off + x->cnt > n)
        return cs_err_set(err, CS_ERR_PARSE,
                          "%s:%u: gpu %d tb %d step %d (%s): %s %s[%d:%lld] out of range: gpu "
                          "%d has %s_chunks=\"%d\"",
                          fname, x->line, g->id, tb->id, x->s, cs__msccl_type_name(x->type), which,
                          bn[buf], off, (long long)off + x->cnt, g->id, bn[buf], n);
    return CS_OK;
}

static int check_gpu(const char *fname, xalgo_t *a, xgpu_t *g, cs_err_t *err)
{
    int rc;
    for (int t = 0; t < g->n; t++) {
        xtb_t *tb = &g->tb[t];
        for (int u = 0; u < t; u++) {
            const xtb_t *o = &g->tb[u];
            if (tb->chan != o->chan)
                continue;
            if ((tb->send >= 0 && tb->send == o->send) || (tb->recv >= 0 && tb->recv == o->recv))
                return cs_err_set(err, CS_ERR_PARSE,
                                  "%s:%u: threadblocks %d and %d of gpu %d both %s gpu %d on "
                                  "channel %d (one threadblock per peer, channel and direction)",
                                  fname, tb->line, o->id, tb->id, g->id,
                                  tb->send >= 0 && tb->send == o->send ? "send to" : "receive from",
                                  tb->send >= 0 && tb->send == o->send ? tb->send : tb->recv,
                                  tb->chan);
        }
        int prev_nop = 0;
        for (int s = 0; s < tb->n; s++) {
            xstep_t *x = &tb->st[s];
            const char *tn = cs__msccl_type_name(x->type);
            if (cs__msccl_has_send(x->type) && tb->send < 0)
                return cs_err_set(err, CS_ERR_PARSE,
                                  "%s:%u: gpu %d tb %d step %d (%s) sends, but the threadblock "
                                  "has send=\"-1\"",
                                  fname, x->line, g->id, tb->id, s, tn);
            if (cs__msccl_has_recv(x->type) && tb->recv < 0)
                return cs_err_set(err, CS_ERR_PARSE,
                                  "%s:%u: gpu %d tb %d step %d (%s) receives, but the "
                                  "threadblock has recv=\"-1\"",
                                  fname, x->line, g->id, tb->id, s, tn);
            int src = x->type == X_S || x->type == X_RRS || x->type == X_RRC || x->type == X_RRCS ||
                      x->type == X_CPY || x->type == X_RE;
            int dst = x->type == X_R || x->type == X_RCS || x->type == X_RRC || x->type == X_RRCS ||
                      x->type == X_CPY || x->type == X_RE;
            if (src && (rc = check_operand(fname, g, tb, x, x->srcbuf, x->srcoff, "source", err)))
                return rc;
            if (dst &&
                (rc = check_operand(fname, g, tb, x, x->dstbuf, x->dstoff, "destination", err)))
                return rc;
            if (x->type == X_NOP && x->depid < 0)
                return cs_err_set(err, CS_ERR_PARSE,
                                  "%s:%u: gpu %d tb %d step %d: a nop without depid (the "
                                  "executor counts each nop as one dependency)",
                                  fname, x->line, g->id, tb->id, s);
            if (prev_nop && x->type != X_NOP && x->depid < 0)
                return cs_err_set(err, CS_ERR_PARSE,
                                  "%s:%u: gpu %d tb %d step %d (%s) follows a nop but has no "
                                  "depid (the executor refuses such a chain of dependencies)",
                                  fname, x->line, g->id, tb->id, s, tn);
            prev_nop = x->type == X_NOP;
            if (x->depid < 0)
                continue;
            if (x->depid >= g->n || x->deps >= g->tb[x->depid].n)
                return cs_err_set(err, CS_ERR_PARSE,
                                  "%s:%u: gpu %d tb %d step %d (%s): dangling dependency on tb "
                                  "%d step %d (gpu %d has %d threadblocks%s)",
                                  fname, x->line, g->id, tb->id, s, tn, x->depid, x->deps, g->id,
                                  g->n, x->depid < g->n ? ", and that one fewer steps" : "");
            if (x->depid == tb->id) {
                if (x->deps >= s)
                    return cs_err_set(err, CS_ERR_PARSE,
                                      "%s:%u: gpu %d tb %d step %d (%s) waits for step %d of "
                                      "its own threadblock, which cannot have run yet",
                                      fname, x->line, g->id, tb->id, s, tn, x->deps);
                continue; /* already ordered by the threadblock */
            }
            /* The executor's flag says "done up to step k": a wait for step
             * d ends when the first signalling step at or after d is done. */
            const xtb_t *dt = &g->tb[x->depid];
            int w = x->deps;
            while (w < dt->n && !dt->st[w].hasdep)
                w++;
            if (w == dt->n)
                return cs_err_set(err, CS_ERR_PARSE,
                                  "%s:%u: gpu %d tb %d step %d (%s) waits for tb %d step %d, "
                                  "but no step of that threadblock from %d on has hasdep=\"1\": "
                                  "the executor would wait forever",
                                  fname, x->line, g->id, tb->id, s, tn, x->depid, x->deps, x->deps);
            x->wait_tb = x->depid;
            x->wait_step = w;
        }
    }
    (void)a;
    return CS_OK;
}

static void xalgo_free(xalgo_t *a)
{
    for (int g = 0; a->gpu && g < a->ngpu; g++) {
        for (int t = 0; t < a->gpu[g].n; t++)
            free(a->gpu[g].tb[t].st);
        free(a->gpu[g].tb);
    }
    free(a->gpu);
}

/* ---- public ----------------------------------------------------------------- */

/* libxml2 reports some errors (encodings, I/O) through its generic handler,
 * which prints to stderr; the library says nothing itself: the error is
 * read back from the parser context. */
static void quiet(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

int cs_msccl_parse(const char *buf, size_t len, const char *name, const cs_msccl_opts_t *opts,
                   cs_msccl_t **out, cs_err_t *err)
{
    const char *fname = name ? name : "<memory>";
    if (len > INT_MAX)
        return cs_err_set(err, CS_ERR_PARSE, "%s: file too large for an MSCCL algorithm", fname);
    xmlInitParser();
    xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
    if (ctxt == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    int rc = CS_OK;
    xalgo_t a;
    memset(&a, 0, sizeof(a));
    a.fname = fname;
    cs_msccl_t *m = NULL;
    /* No network, no entity expansion, no DTD loading: the file is data. */
    xmlGenericErrorFunc saved_fn = xmlGenericError;
    void *saved_ctx = xmlGenericErrorContext;
    xmlSetGenericErrorFunc(NULL, quiet);
    xmlDocPtr doc = xmlCtxtReadMemory(ctxt, buf, (int)len, fname, NULL,
                                      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    xmlSetGenericErrorFunc(saved_ctx, saved_fn);
    if (doc == NULL) {
        xmlErrorPtr e = xmlCtxtGetLastError(ctxt);
        char msg[256] = "not well-formed XML";
        if (e && e->message) {
            snprintf(msg, sizeof(msg), "%s", e->message);
            msg[strcspn(msg, "\n")] = '\0'; /* the first line says it */
            size_t l = strlen(msg);
            while (l && msg[l - 1] == ' ')
                msg[--l] = '\0';
        }
        rc = cs_err_set(err, CS_ERR_PARSE, "%s:%d: malformed XML: %s", fname,
                        e && e->line > 0 ? e->line : 1, msg);
        goto out_ctxt;
    }
    if ((rc = read_algo(fname, xmlDocGetRootElement(doc), &a, err)) != CS_OK)
        goto out_doc;
    for (int g = 0; g < a.ngpu; g++)
        if ((rc = check_gpu(fname, &a, &a.gpu[g], err)) != CS_OK)
            goto out_doc;
    int inplace = opts ? opts->inplace : -1;
    if (inplace < 0) /* in-place only: served out of place through a copy */
        inplace = a.info.outofplace ? 0 : 2;
    if (inplace ? !a.info.inplace : !a.info.outofplace) {
        rc = cs_err_set(err, CS_ERR_PARSE,
                        "%s:%u: the algo is not for %s calls (inplace=\"%d\" "
                        "outofplace=\"%d\")",
                        fname, a.line, inplace ? "in-place" : "out-of-place", a.info.inplace,
                        a.info.outofplace);
        goto out_doc;
    }
    m = calloc(1, sizeof(*m));
    if (m == NULL) {
        rc = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
        goto out_doc;
    }
    snprintf(m->path, sizeof(m->path), "%s", fname);
    m->info = a.info;
    m->info.imported_inplace = inplace;
    if ((rc = cs__msccl_build(&a, inplace, m, err)) != CS_OK) {
        cs_msccl_destroy(m);
        goto out_doc;
    }
    *out = m;
out_doc:
    xalgo_free(&a);
    xmlFreeDoc(doc);
out_ctxt:
    xmlFreeParserCtxt(ctxt);
    if (rc != CS_OK && err) /* names and values quoted from the file: printable */
        for (char *p = err->msg; *p; p++)
            if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
                *p = '?';
    return rc;
}
