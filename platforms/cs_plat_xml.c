/*
 * cs_plat_xml.c - a small XML scanner for user SimGrid platform files.
 *
 * SimGrid aborts the whole process on malformed XML, so a file is checked
 * here before it is ever handed to SimGrid.  The scanner accepts the XML
 * subset platform files use: a prolog (<?xml?>, <!DOCTYPE>, comments),
 * elements with quoted attributes, self-closing tags, comments, CDATA and
 * character data.  It checks that tags nest and match, that the root is
 * <platform>, and the collstep rules: every <link> carries
 * <prop id="tier" value="..."/>, and <cluster>/<cabinet> (whose generated
 * links carry no tier) are refused.  Errors are "file:line:col: expected
 * X, found Y".
 *
 * It fills: ndevices (hosts with <prop id="device" value="gpu"/>), the
 * tiers (count of <link> elements, most common bandwidth/latency, factors
 * from the top zone's collstep_factors prop "tier:lat:bw,..." or 1.0),
 * dims from the top zone's collstep_dims prop ("6x256", must multiply to
 * ndevices), and the collstep_spec prop (exported presets).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_params.h"
#include "cs_plat_model.h"

#define CS__XML_DEPTH 256
#define CS__XML_VAL 256
#define CS__TIER_VALS 16

typedef struct {
    char name[16];
    uint64_t n;
    int nv;
    double bw[CS__TIER_VALS], lat[CS__TIER_VALS];
    uint64_t w[CS__TIER_VALS];
} cs__tacc_t;

typedef struct {
    const char *text, *fname;
    const char *pos;
    cs_err_t *err;
    /* element stack: start of each open element's name */
    int depth;
    const char *stk[CS__XML_DEPTH];
    size_t stklen[CS__XML_DEPTH];
    int top_zone_depth; /* depth of the first <zone> (1-based) or 0 */
    /* the open <link> / <host> */
    int in_link, link_has_tier, in_host, host_is_gpu;
    const char *link_pos;
    char link_tier[16];
    double link_bw, link_lat;
    /* results */
    uint64_t ndevices;
    int ntiers;
    cs__tacc_t tier[CS_PLAT_MAX_TIERS];
    char dims[CS__XML_VAL], factors[1024], spec[CS__XML_VAL];
    const char *dims_pos;
} cs__xs_t;

static int cs__xs_error(cs__xs_t *x, const char *at, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int cs__xs_error(cs__xs_t *x, const char *at, int code, const char *fmt, ...)
{
    int line = 1, col = 1;
    for (const char *c = x->text; c < at && *c; c++) {
        if (*c == '\n')
            line++, col = 1;
        else
            col++;
    }
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return cs_err_set(x->err, code, "%s:%d:%d: %s", x->fname, line, col, msg);
}

/* A short printable excerpt of what is at p, for "found ..." messages. */
static const char *cs__found(const char *p, char *buf, size_t len)
{
    if (*p == '\0')
        return "end of file";
    size_t i = 0;
    buf[i++] = '\'';
    while (*p && *p != '\n' && i + 2 < len && i < 20)
        buf[i++] = *p++;
    buf[i++] = '\'';
    buf[i] = '\0';
    return buf;
}

static int cs__name_start(int c)
{
    return isalpha(c) || c == '_' || c == ':';
}
static int cs__name_char(int c)
{
    return isalnum(c) || c == '_' || c == ':' || c == '.' || c == '-';
}

static int cs__skip_until(cs__xs_t *x, const char *end, const char *what)
{
    const char *e = strstr(x->pos, end);
    if (e == NULL)
        return cs__xs_error(x, x->pos, CS_ERR_PARSE, "unterminated %s: expected '%s', found end of file",
                            what, end);
    x->pos = e + strlen(end);
    return CS_OK;
}

static int cs__is(const char *p, size_t len, const char *name)
{
    return strlen(name) == len && memcmp(p, name, len) == 0;
}

static int cs__tier_add(cs__xs_t *x)
{
    int t;
    for (t = 0; t < x->ntiers; t++)
        if (strcmp(x->tier[t].name, x->link_tier) == 0)
            break;
    if (t == x->ntiers) {
        if (x->ntiers == CS_PLAT_MAX_TIERS)
            return cs__xs_error(x, x->link_pos, CS_ERR_RANGE,
                                "expected at most %d distinct tiers, found tier '%s' beyond them",
                                CS_PLAT_MAX_TIERS, x->link_tier);
        snprintf(x->tier[t].name, sizeof(x->tier[t].name), "%s", x->link_tier);
        x->ntiers++;
    }
    cs__tacc_t *a = &x->tier[t];
    a->n++;
    for (int i = 0; i < a->nv; i++)
        if (a->bw[i] == x->link_bw && a->lat[i] == x->link_lat) {
            a->w[i]++;
            return CS_OK;
        }
    if (a->nv < CS__TIER_VALS) {
        a->bw[a->nv] = x->link_bw;
        a->lat[a->nv] = x->link_lat;
        a->w[a->nv++] = 1;
    }
    return CS_OK;
}

/* Called for each attribute of element `el`. */
static int cs__attr(cs__xs_t *x, const char *el, size_t ellen, const char *an, size_t anlen,
                    const char *val, const char *vpos, char *prop_id, char *prop_val)
{
    if (cs__is(el, ellen, "link")) {
        if (cs__is(an, anlen, "bandwidth") && cs__parse_bandwidth(val, &x->link_bw))
            return cs__xs_error(x, vpos, CS_ERR_PARSE,
                                "expected a bandwidth like 12.5GBps, found '%s'", val);
        if (cs__is(an, anlen, "latency") && cs__parse_latency(val, &x->link_lat))
            return cs__xs_error(x, vpos, CS_ERR_PARSE, "expected a latency like 1us, found '%s'",
                                val);
    } else if (cs__is(el, ellen, "prop")) {
        if (cs__is(an, anlen, "id"))
            snprintf(prop_id, CS__XML_VAL, "%s", val);
        else if (cs__is(an, anlen, "value"))
            snprintf(prop_val, CS__XML_VAL, "%s", val);
    }
    return CS_OK;
}

/* A <prop> just parsed, child of the element on top of the stack. */
static int cs__prop(cs__xs_t *x, const char *at, const char *id, const char *val)
{
    const char *par = x->depth ? x->stk[x->depth - 1] : "";
    size_t plen = x->depth ? x->stklen[x->depth - 1] : 0;
    if (x->in_link && cs__is(par, plen, "link") && strcmp(id, "tier") == 0) {
        if (val[0] == '\0' || strlen(val) >= sizeof(x->link_tier))
            return cs__xs_error(x, at, CS_ERR_PARSE,
                                "expected a tier name of 1 to %zu characters, found '%s'",
                                sizeof(x->link_tier) - 1, val);
        snprintf(x->link_tier, sizeof(x->link_tier), "%s", val);
        x->link_has_tier = 1;
    } else if (x->in_host && cs__is(par, plen, "host") && strcmp(id, "device") == 0) {
        x->host_is_gpu = strcmp(val, "gpu") == 0;
    } else if (x->top_zone_depth && x->depth == x->top_zone_depth) {
        if (strcmp(id, "collstep_dims") == 0) {
            snprintf(x->dims, sizeof(x->dims), "%s", val);
            x->dims_pos = at;
        } else if (strcmp(id, "collstep_factors") == 0)
            snprintf(x->factors, sizeof(x->factors), "%s", val);
        else if (strcmp(id, "collstep_spec") == 0)
            snprintf(x->spec, sizeof(x->spec), "%s", val);
    }
    return CS_OK;
}

static int cs__end_element(cs__xs_t *x, const char *name, size_t len)
{
    if (cs__is(name, len, "link")) {
        x->in_link = 0;
        if (!x->link_has_tier)
            return cs__xs_error(x, x->link_pos, CS_ERR_PARSE,
                                "expected <prop id=\"tier\" value=\"...\"/> inside this <link>, "
                                "found a link without a tier");
        return cs__tier_add(x);
    }
    if (cs__is(name, len, "host")) {
        x->in_host = 0;
        x->ndevices += x->host_is_gpu;
    }
    return CS_OK;
}

static int cs__start_tag(cs__xs_t *x)
{
    const char *lt = x->pos;
    char fb[32];
    x->pos++; /* '<' */
    if (!cs__name_start((unsigned char)*x->pos))
        return cs__xs_error(x, x->pos, CS_ERR_PARSE, "expected an element name, found %s",
                            cs__found(x->pos, fb, sizeof(fb)));
    const char *name = x->pos;
    while (cs__name_char((unsigned char)*x->pos))
        x->pos++;
    size_t nlen = (size_t)(x->pos - name);
    if (x->depth == 0 && !cs__is(name, nlen, "platform"))
        return cs__xs_error(x, name, CS_ERR_PARSE, "expected <platform> as the root element, found <%.*s>",
                            (int)nlen, name);
    if (cs__is(name, nlen, "cluster") || cs__is(name, nlen, "cabinet"))
        return cs__xs_error(x, name, CS_ERR_UNSUPPORTED,
                            "<%.*s> is not supported: its generated links carry no tier; write "
                            "explicit <link> elements with <prop id=\"tier\"/>", (int)nlen, name);
    if (cs__is(name, nlen, "link")) {
        if (x->in_link)
            return cs__xs_error(x, name, CS_ERR_PARSE, "expected </link>, found a nested <link>");
        x->in_link = 1;
        x->link_has_tier = 0;
        x->link_pos = lt;
        x->link_bw = x->link_lat = 0;
    } else if (cs__is(name, nlen, "host")) {
        x->in_host = 1;
        x->host_is_gpu = 0;
    } else if (cs__is(name, nlen, "zone") && x->top_zone_depth == 0) {
        x->top_zone_depth = x->depth + 1;
    }
    char prop_id[CS__XML_VAL] = "", prop_val[CS__XML_VAL] = "";
    char val[CS__XML_VAL];
    for (;;) {
        const char *ws = x->pos;
        while (isspace((unsigned char)*x->pos))
            x->pos++;
        if (*x->pos == '>' || (x->pos[0] == '/' && x->pos[1] == '>'))
            break;
        if (x->pos == ws || !cs__name_start((unsigned char)*x->pos))
            return cs__xs_error(x, x->pos, CS_ERR_PARSE,
                                "expected an attribute, '>' or '/>' in <%.*s>, found %s",
                                (int)nlen, name, cs__found(x->pos, fb, sizeof(fb)));
        const char *an = x->pos;
        while (cs__name_char((unsigned char)*x->pos))
            x->pos++;
        size_t alen = (size_t)(x->pos - an);
        while (isspace((unsigned char)*x->pos))
            x->pos++;
        if (*x->pos != '=')
            return cs__xs_error(x, x->pos, CS_ERR_PARSE, "expected '=' after attribute %.*s, found %s",
                                (int)alen, an, cs__found(x->pos, fb, sizeof(fb)));
        x->pos++;
        while (isspace((unsigned char)*x->pos))
            x->pos++;
        char q = *x->pos;
        if (q != '"' && q != '\'')
            return cs__xs_error(x, x->pos, CS_ERR_PARSE,
                                "expected a quoted value for attribute %.*s, found %s", (int)alen,
                                an, cs__found(x->pos, fb, sizeof(fb)));
        const char *vs = ++x->pos;
        while (*x->pos && *x->pos != q && *x->pos != '<')
            x->pos++;
        if (*x->pos != q)
            return cs__xs_error(x, vs - 1, CS_ERR_PARSE,
                                "expected the closing %c of attribute %.*s, found %s", q,
                                (int)alen, an, cs__found(x->pos, fb, sizeof(fb)));
        size_t vlen = (size_t)(x->pos - vs);
        snprintf(val, sizeof(val), "%.*s", (int)(vlen < sizeof(val) ? vlen : sizeof(val) - 1), vs);
        x->pos++;
        int st = cs__attr(x, name, nlen, an, alen, val, vs, prop_id, prop_val);
        if (st != CS_OK)
            return st;
    }
    int self_close = *x->pos == '/';
    x->pos += self_close ? 2 : 1;
    if (cs__is(name, nlen, "prop")) {
        int st = cs__prop(x, lt, prop_id, prop_val);
        if (st != CS_OK)
            return st;
    }
    if (self_close)
        return cs__end_element(x, name, nlen);
    if (x->depth == CS__XML_DEPTH)
        return cs__xs_error(x, lt, CS_ERR_RANGE, "elements nested deeper than %d", CS__XML_DEPTH);
    x->stk[x->depth] = name;
    x->stklen[x->depth++] = nlen;
    return CS_OK;
}

static int cs__end_tag(cs__xs_t *x)
{
    const char *lt = x->pos;
    char fb[32];
    x->pos += 2;
    const char *name = x->pos;
    while (cs__name_char((unsigned char)*x->pos))
        x->pos++;
    size_t nlen = (size_t)(x->pos - name);
    while (isspace((unsigned char)*x->pos))
        x->pos++;
    if (*x->pos != '>')
        return cs__xs_error(x, x->pos, CS_ERR_PARSE, "expected '>' closing </%.*s>, found %s",
                            (int)nlen, name, cs__found(x->pos, fb, sizeof(fb)));
    x->pos++;
    if (x->depth == 0)
        return cs__xs_error(x, lt, CS_ERR_PARSE, "expected no closing tag, found </%.*s>",
                            (int)nlen, name);
    if (x->stklen[x->depth - 1] != nlen || memcmp(x->stk[x->depth - 1], name, nlen) != 0)
        return cs__xs_error(x, lt, CS_ERR_PARSE, "expected </%.*s>, found </%.*s>",
                            (int)x->stklen[x->depth - 1], x->stk[x->depth - 1], (int)nlen, name);
    x->depth--;
    return cs__end_element(x, name, nlen);
}

static int cs__scan(cs__xs_t *x)
{
    int seen_root = 0;
    char fb[32];
    while (*x->pos) {
        if (*x->pos != '<') {
            if (x->depth == 0 && !isspace((unsigned char)*x->pos))
                return cs__xs_error(x, x->pos, CS_ERR_PARSE,
                                    "expected '<' or white space outside the root element, found %s",
                                    cs__found(x->pos, fb, sizeof(fb)));
            x->pos++;
            continue;
        }
        int st;
        if (strncmp(x->pos, "<!--", 4) == 0)
            st = cs__skip_until(x, "-->", "comment");
        else if (strncmp(x->pos, "<?", 2) == 0)
            st = cs__skip_until(x, "?>", "processing instruction");
        else if (strncmp(x->pos, "<![CDATA[", 9) == 0)
            st = cs__skip_until(x, "]]>", "CDATA section");
        else if (strncmp(x->pos, "<!DOCTYPE", 9) == 0)
            st = cs__skip_until(x, ">", "DOCTYPE");
        else if (x->pos[1] == '/')
            st = cs__end_tag(x);
        else {
            if (x->depth == 0 && seen_root)
                return cs__xs_error(x, x->pos, CS_ERR_PARSE,
                                    "expected end of file after </platform>, found %s",
                                    cs__found(x->pos, fb, sizeof(fb)));
            seen_root = 1;
            st = cs__start_tag(x);
        }
        if (st != CS_OK)
            return st;
    }
    if (x->depth > 0)
        return cs__xs_error(x, x->pos, CS_ERR_PARSE, "expected </%.*s>, found end of file",
                            (int)x->stklen[x->depth - 1], x->stk[x->depth - 1]);
    if (!seen_root)
        return cs__xs_error(x, x->pos, CS_ERR_PARSE, "expected <platform>, found end of file");
    return CS_OK;
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

int cs__xml_scan(const char *text, const char *fname, cs_platform_t *p, char *spec_out,
                 size_t spec_len, cs_err_t *err)
{
    cs__xs_t *x = calloc(1, sizeof(*x));
    if (x == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    x->text = x->pos = text;
    x->fname = fname;
    x->err = err;
    int st = cs__scan(x);
    int dims[CS_PLAT_MAX_DIMS], nd = 0;
    if (st == CS_OK && x->dims[0]) {
        cs_params_t pp;
        cs_params_init(&pp);
        cs_err_t derr = {0};
        uint64_t prod = 1;
        if (cs_params_set(&pp, "collstep_dims", x->dims, &derr) == CS_OK)
            nd = cs_params_get_dims(&pp, "collstep_dims", dims, CS_PLAT_MAX_DIMS, &derr);
        for (int i = 0; i < nd; i++)
            prod *= (uint64_t)dims[i];
        if (nd <= 0 || prod != x->ndevices)
            st = cs__xs_error(x, x->dims_pos, CS_ERR_PARSE,
                              "expected collstep_dims like 6x256 multiplying to the %llu devices, "
                              "found '%s'", (unsigned long long)x->ndevices, x->dims);
    }
    if (st == CS_OK) {
        p->ndevices = x->ndevices;
        p->ndims = nd > 0 ? nd : 0;
        for (int i = 0; i < p->ndims; i++)
            p->dims[i] = dims[i];
        p->ntiers = x->ntiers;
        for (int t = 0; t < x->ntiers; t++) {
            cs_tier_info_t *ti = &p->tiers[t];
            cs__tacc_t *a = &x->tier[t];
            memset(ti, 0, sizeof(*ti));
            snprintf(ti->name, sizeof(ti->name), "%s", a->name);
            ti->nlinks = a->n;
            ti->lat_factor = ti->bw_factor = 1.0;
            uint64_t best = 0;
            for (int i = 0; i < a->nv; i++)
                if (a->w[i] > best) {
                    best = a->w[i];
                    ti->bandwidth = a->bw[i];
                    ti->latency = a->lat[i];
                }
            cs__apply_factors(x->factors, ti);
        }
        if (spec_out && spec_len)
            snprintf(spec_out, spec_len, "%s", x->spec);
    }
    free(x);
    return st;
}
