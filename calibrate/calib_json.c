/*
 * calib_json.c - the JSON reader behind cs_calibrate_record_load
 * (calib_int.h): RFC 8259 text into a flat array of values, each with its
 * line and column for messages.  Strings are unescaped in place in a copy
 * of the text (an escape is never shorter than what it stands for);
 * numbers keep their text, so that the record's loader converts them
 * exactly (cs__calib_num_read).  Nesting is limited (CJ_DEPTH) so that no
 * input exhausts the stack.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_int.h"
#include "cs_grow.h"

#define CJ_DEPTH 64 /* the record nests 5 deep */
#define CJ_STR2(x) #x
#define CJ_STR(x) CJ_STR2(x)

typedef struct cjp {
    cs__cj_t *j;
    char *p, *end, *line0; /* position, end, start of the current line */
    int line;
    cs_err_t *err;
} cjp_t;

static int perr(cjp_t *q, const char *what)
{
    if (q->p >= q->end)
        return cs_err_set(q->err, CS_ERR_PARSE, "%s:%d:%d: %s, found the end of the file",
                          q->j->name, q->line, (int)(q->p - q->line0) + 1, what);
    return cs_err_set(q->err, CS_ERR_PARSE, "%s:%d:%d: %s, found '%c'", q->j->name, q->line,
                      (int)(q->p - q->line0) + 1, what, *q->p);
}

static void skip_ws(cjp_t *q)
{
    for (; q->p < q->end && strchr(" \t\r\n", *q->p) && *q->p; q->p++)
        if (*q->p == '\n')
            q->line++, q->line0 = q->p + 1;
}

static int new_val(cjp_t *q, char type, int *out)
{
    cs__cj_t *j = q->j;
    if (cs_grow(&j->v, &j->cap, j->nv + 1, sizeof(*j->v), 256))
        return cs_err_set(q->err, CS_ERR_NOMEM, "out of memory");
    cs__cj_val_t *v = &j->v[j->nv];
    memset(v, 0, sizeof(*v));
    v->type = type, v->line = q->line, v->col = (int)(q->p - q->line0) + 1;
    v->kid = v->next = -1;
    *out = (int)j->nv++;
    return CS_OK;
}

static int hex4(const char *s, unsigned *u)
{
    *u = 0;
    for (int i = 0; i < 4; i++) {
        int c = s[i], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        *u = *u * 16 + (unsigned)d;
    }
    return 0;
}

/* A string at q->p ('"'): unescaped in place; *s its start. */
static int string(cjp_t *q, char **s, size_t *n)
{
    char *w = ++q->p;
    *s = w;
    while (q->p < q->end && *q->p != '"') {
        unsigned char c = (unsigned char)*q->p;
        if (c < 0x20)
            return perr(q, "a control character in a string");
        if (c != '\\') {
            *w++ = *q->p++;
            continue;
        }
        if (q->p + 1 >= q->end)
            return perr(q, "an escape");
        char e = *++q->p;
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t", *k = strchr(from, e);
        if (e && k) {
            *w++ = to[k - from], q->p++;
            continue;
        }
        unsigned u;
        if (e != 'u' || q->end - q->p < 5 || hex4(q->p + 1, &u) || (u >= 0xd800 && u < 0xe000))
            return perr(q, "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX, no surrogates)");
        q->p += 5;
        if (u < 0x80) {
            *w++ = (char)u;
        } else if (u < 0x800) {
            *w++ = (char)(0xc0 | u >> 6), *w++ = (char)(0x80 | (u & 0x3f));
        } else {
            *w++ = (char)(0xe0 | u >> 12), *w++ = (char)(0x80 | ((u >> 6) & 0x3f));
            *w++ = (char)(0x80 | (u & 0x3f));
        }
    }
    if (q->p >= q->end)
        return perr(q, "a string's closing '\"'");
    *n = (size_t)(w - *s);
    *w = 0; /* at or before the closing quote */
    q->p++;
    return CS_OK;
}

static int number(cjp_t *q, int i)
{
    char *s = q->p;
    if (q->p < q->end && *q->p == '-')
        q->p++;
    if (q->p < q->end && *q->p == '0')
        q->p++;
    else if (q->p < q->end && *q->p >= '1' && *q->p <= '9')
        while (q->p < q->end && *q->p >= '0' && *q->p <= '9')
            q->p++;
    else
        return perr(q, "a digit");
    if (q->p < q->end && *q->p == '.') {
        if (++q->p >= q->end || *q->p < '0' || *q->p > '9')
            return perr(q, "a digit after '.'");
        while (q->p < q->end && *q->p >= '0' && *q->p <= '9')
            q->p++;
    }
    if (q->p < q->end && (*q->p == 'e' || *q->p == 'E')) {
        if (++q->p < q->end && (*q->p == '+' || *q->p == '-'))
            q->p++;
        if (q->p >= q->end || *q->p < '0' || *q->p > '9')
            return perr(q, "a digit of the exponent");
        while (q->p < q->end && *q->p >= '0' && *q->p <= '9')
            q->p++;
    }
    q->j->v[i].s = s, q->j->v[i].n = (size_t)(q->p - s);
    return CS_OK;
}

static int value(cjp_t *q, int depth, int *out);

/* The elements of an array or the members of an object at q->p. */
static int items(cjp_t *q, int i, int depth)
{
    int obj = q->j->v[i].type == 'o', last = -1, st;
    char close = obj ? '}' : ']';
    q->p++;
    skip_ws(q);
    if (q->p < q->end && *q->p == close) {
        q->p++;
        return CS_OK;
    }
    for (;;) {
        char *key = NULL;
        size_t kn;
        skip_ws(q);
        if (obj) {
            if (q->p >= q->end || *q->p != '"')
                return perr(q, "a member name");
            if ((st = string(q, &key, &kn)) != CS_OK)
                return st;
            skip_ws(q);
            if (q->p >= q->end || *q->p != ':')
                return perr(q, "':'");
            q->p++;
            skip_ws(q);
        }
        int k;
        if ((st = value(q, depth + 1, &k)) != CS_OK)
            return st;
        cs__cj_val_t *v = q->j->v; /* value() may have moved it */
        v[k].key = key;
        if (last < 0)
            v[i].kid = k;
        else
            v[last].next = k;
        last = k, v[i].nkids++;
        skip_ws(q);
        if (q->p < q->end && *q->p == ',') {
            q->p++;
            continue;
        }
        if (q->p < q->end && *q->p == close) {
            q->p++;
            return CS_OK;
        }
        return perr(q, obj ? "',' or '}'" : "',' or ']'");
    }
}

static int value(cjp_t *q, int depth, int *out)
{
    if (depth > CJ_DEPTH)
        return perr(q, "at most " CJ_STR(CJ_DEPTH) " levels of nesting");
    skip_ws(q);
    if (q->p >= q->end)
        return perr(q, "a value");
    char c = *q->p, type = c == '{' ? 'o' : c == '[' ? 'a' : c == '"' ? 's'
                         : c == 't' || c == 'f' ? 'b' : c == 'n' ? 'z' : 'n';
    int st = new_val(q, type, out);
    if (st != CS_OK)
        return st;
    if (type == 'o' || type == 'a')
        return items(q, *out, depth);
    if (type == 's') {
        char *s;
        size_t n;
        st = string(q, &s, &n);
        q->j->v[*out].s = s, q->j->v[*out].n = n;
        return st;
    }
    if (type == 'n')
        return number(q, *out);
    const char *w = c == 't' ? "true" : c == 'f' ? "false" : "null";
    size_t n = strlen(w);
    if ((size_t)(q->end - q->p) < n || memcmp(q->p, w, n))
        return perr(q, "a value (object, array, string, number, true, false, null)");
    q->j->v[*out].s = w, q->j->v[*out].n = n;
    q->p += n;
    return CS_OK;
}

int cs__cj_parse(cs__cj_t *j, const char *text, size_t len, const char *name, cs_err_t *err)
{
    memset(j, 0, sizeof(*j));
    j->name = name;
    if (!(j->text = malloc(len + 1)))
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    memcpy(j->text, text, len);
    j->text[len] = 0;
    cjp_t q = {j, j->text, j->text + len, j->text, 1, err};
    int top, st = value(&q, 0, &top);
    if (st == CS_OK) {
        skip_ws(&q);
        if (q.p < q.end)
            st = perr(&q, "the end of the file after the top value");
    }
    if (st != CS_OK)
        cs__cj_free(j);
    return st;
}

void cs__cj_free(cs__cj_t *j)
{
    free(j->text);
    free(j->v);
    j->text = NULL, j->v = NULL, j->nv = j->cap = 0;
}

int cs__cj_get(const cs__cj_t *j, int o, const char *key)
{
    if (o < 0 || j->v[o].type != 'o')
        return -1;
    for (int k = j->v[o].kid; k >= 0; k = j->v[k].next)
        if (!strcmp(j->v[k].key, key))
            return k;
    return -1;
}

int cs__cj_err(const cs__cj_t *j, int i, cs_err_t *err, const char *fmt, ...)
{
    char msg[CS_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return cs_err_set(err, CS_ERR_PARSE, "%s:%d:%d: %s", j->name, i >= 0 ? j->v[i].line : 1,
                      i >= 0 ? j->v[i].col : 1, msg);
}
