/* cs_params.c - key=value parameter lists (see cs_params.h). */
#include "cs_params.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cs_params_init(cs_params_t *p)
{
    memset(p, 0, sizeof(*p));
}

int cs_params_set(cs_params_t *p, const char *key, const char *value, cs_err_t *err)
{
    size_t kl = strlen(key), vl = strlen(value);
    if (kl == 0 || kl >= sizeof(p->kv[0].key))
        return cs_err_set(err, CS_ERR_PARSE, "parameter name '%s': expected 1 to %zu characters",
                          key, sizeof(p->kv[0].key) - 1);
    if (vl == 0)
        return cs_err_set(err, CS_ERR_PARSE,
                          "parameter %s: no value after '=' (KEY=VALUE, no blank around '=')",
                          key);
    if (vl >= sizeof(p->kv[0].value))
        return cs_err_set(err, CS_ERR_PARSE,
                          "parameter %s: expected a value of 1 to %zu characters", key,
                          sizeof(p->kv[0].value) - 1);
    for (const char *c = key; *c; c++)
        if (!(isalnum((unsigned char)*c) || *c == '_' || *c == '-'))
            return cs_err_set(err, CS_ERR_PARSE,
                              "parameter name '%s': expected letters, digits, '_' or '-'", key);
    for (const char *c = value; *c; c++)
        if (isspace((unsigned char)*c) || *c == '=' || *c == ',' || *c == '"' ||
            !isprint((unsigned char)*c))
            return cs_err_set(err, CS_ERR_PARSE,
                              "parameter %s: value must not contain spaces, '=', ',' or quotes",
                              key);
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->kv[i].key, key) == 0) {
            snprintf(p->kv[i].value, sizeof(p->kv[i].value), "%s", value);
            return CS_OK;
        }
    if (p->n == CS_PARAMS_MAX)
        return cs_err_set(err, CS_ERR_RANGE, "too many parameters (at most %d)", CS_PARAMS_MAX);
    snprintf(p->kv[p->n].key, sizeof(p->kv[0].key), "%s", key);
    snprintf(p->kv[p->n].value, sizeof(p->kv[0].value), "%s", value);
    p->kv[p->n].used = 0;
    p->n++;
    return CS_OK;
}

int cs_params_parse(cs_params_t *p, const char *text, cs_err_t *err)
{
    char buf[1024];
    if (strlen(text) >= sizeof(buf))
        return cs_err_set(err, CS_ERR_PARSE, "parameter list too long");
    snprintf(buf, sizeof(buf), "%s", text);
    char *save = NULL, *seen[CS_PARAMS_MAX + 1];
    int nseen = 0;
    for (char *tok = strtok_r(buf, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
        char *eq = strchr(tok, '=');
        if (eq == NULL)
            return cs_err_set(err, CS_ERR_PARSE, "parameter '%s': expected KEY=VALUE", tok);
        *eq = '\0';
        /* one list names a key once: which of two values was meant is not
         * for collstep to guess */
        for (int i = 0; i < nseen; i++)
            if (strcmp(seen[i], tok) == 0)
                return cs_err_set(err, CS_ERR_PARSE, "parameter %s given twice in '%s'", tok,
                                  text);
        if (nseen <= CS_PARAMS_MAX)
            seen[nseen++] = tok;
        int st = cs_params_set(p, tok, eq + 1, err);
        if (st != CS_OK)
            return st;
    }
    return CS_OK;
}

const char *cs_params_get(cs_params_t *p, const char *key)
{
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->kv[i].key, key) == 0) {
            p->kv[i].used = 1;
            return p->kv[i].value;
        }
    return NULL;
}

int cs_params_get_int(cs_params_t *p, const char *key, long def, long min, long max, long *out,
                      cs_err_t *err)
{
    const char *v = cs_params_get(p, key);
    if (v == NULL) {
        *out = def;
        return CS_OK;
    }
    char *end = NULL;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || x < min || x > max)
        return cs_err_set(err, CS_ERR_PARSE,
                          "parameter %s: expected an integer in [%ld, %ld], found '%s'", key, min,
                          max, v);
    *out = x;
    return CS_OK;
}

int cs_params_get_dims(cs_params_t *p, const char *key, int *dims, int max, cs_err_t *err)
{
    const char *v = cs_params_get(p, key);
    if (v == NULL)
        return 0;
    int n = 0;
    const char *c = v;
    while (*c) {
        char *end = NULL;
        errno = 0;
        long x = strtol(c, &end, 10);
        if (errno != 0 || end == c || x < 1 || x > 1000000000L || n == max ||
            (*end != '\0' && *end != 'x'))
            return cs_err_set(err, CS_ERR_PARSE,
                              "parameter %s: expected up to %d positive integers separated by "
                              "'x' (like 6x256), found '%s'",
                              key, max, v);
        dims[n++] = (int)x;
        c = *end ? end + 1 : end;
        if (*end == 'x' && *c == '\0')
            return cs_err_set(err, CS_ERR_PARSE, "parameter %s: trailing 'x' in '%s'", key, v);
    }
    return n;
}

int cs_params_check_unused(const cs_params_t *p, const char *algo, cs_err_t *err)
{
    for (int i = 0; i < p->n; i++)
        if (!p->kv[i].used)
            return cs_err_set(err, CS_ERR_INVAL,
                              "algorithm %s has no parameter '%s' (see 'collstep algos')", algo,
                              p->kv[i].key);
    return CS_OK;
}

void cs_params_format(const cs_params_t *p, char *buf, int len)
{
    int off = 0;
    if (len > 0)
        buf[0] = '\0';
    for (int i = 0; i < p->n && off < len; i++) {
        int w = snprintf(buf + off, (size_t)(len - off), "%s%s=%s", i ? " " : "", p->kv[i].key,
                         p->kv[i].value);
        if (w < 0)
            break;
        off += w;
    }
}

/* ---- descriptor getters ---------------------------------------------- */

const cs_param_desc_t *cs_param_desc_find(const cs_param_desc_t *table, const char *key)
{
    for (const cs_param_desc_t *d = table; d && d->key; d++)
        if (strcmp(d->key, key) == 0)
            return d;
    return NULL;
}

void cs_param_desc_bounds(const cs_param_desc_t *d, char *buf, int len)
{
    if (len <= 0)
        return;
    switch (d->kind) {
    case CS_PARAM_INT:
        snprintf(buf, (size_t)len, "%ld..%ld", d->min, d->max);
        break;
    case CS_PARAM_DIMS:
    case CS_PARAM_LIST: {
        const char *what = d->kind == CS_PARAM_DIMS ? "factors (AxB..)" : "names (a+b..)";
        if (d->min == d->max)
            snprintf(buf, (size_t)len, "%ld %s", d->min, what);
        else
            snprintf(buf, (size_t)len, "%ld to %ld %s", d->min, d->max, what);
        break;
    }
    default:
        buf[0] = '\0';
    }
}

static const cs_param_desc_t *row(const cs_param_desc_t *table, const char *key,
                                  cs_param_kind_t kind, cs_err_t *err)
{
    const cs_param_desc_t *d = cs_param_desc_find(table, key);
    if (d == NULL || d->kind != kind)
        cs_err_set(err, CS_ERR_INTERNAL, "parameter %s: not declared as %s in the generator's "
                                         "table", key,
                   kind == CS_PARAM_INT ? "an integer" : kind == CS_PARAM_DIMS ? "dims" : "a list");
    return d != NULL && d->kind == kind ? d : NULL;
}

/* strtol over the whole string; 0 when it is not one integer. */
static int whole_long(const char *v, long *x)
{
    char *end = NULL;
    errno = 0;
    *x = strtol(v, &end, 10);
    return errno == 0 && end != v && *end == '\0';
}

int cs_params_int(cs_params_t *p, const cs_param_desc_t *table, const char *key, long *out,
                  cs_err_t *err)
{
    const cs_param_desc_t *d = row(table, key, CS_PARAM_INT, err);
    long def = 0;
    if (d == NULL)
        return CS_ERR_INTERNAL;
    if (!whole_long(d->def, &def))
        return cs_err_set(err, CS_ERR_INTERNAL, "parameter %s: default '%s' is not an integer",
                          key, d->def);
    *out = def;
    const char *v = cs_params_get(p, key);
    if (v == NULL)
        return CS_OK;
    long x = 0;
    if (!whole_long(v, &x))
        return cs_err_set(err, CS_ERR_PARSE, "parameter %s=%s: expected an integer in %ld..%ld",
                          key, v, d->min, d->max);
    if (x < d->min || x > d->max)
        return cs_err_set(err, CS_ERR_PARSE, "parameter %s=%s out of range: %ld..%ld", key, v,
                          d->min, d->max);
    *out = x;
    return CS_OK;
}

int cs_params_dims(cs_params_t *p, const cs_param_desc_t *table, const char *key, int *dims,
                   int cap, cs_err_t *err)
{
    const cs_param_desc_t *d = row(table, key, CS_PARAM_DIMS, err);
    if (d == NULL)
        return CS_ERR_INTERNAL;
    if (cap < d->max)
        return cs_err_set(err, CS_ERR_INTERNAL, "parameter %s: room for %d factors, %ld declared",
                          key, cap, d->max);
    const char *v = cs_params_get(p, key);
    if (v == NULL)
        return 0;
    int n = 0;
    for (const char *c = v; *c;) {
        char *end = NULL;
        errno = 0;
        long x = strtol(c, &end, 10);
        if (errno != 0 || end == c || x < 1 || x > 1000000000L || n == d->max ||
            (*end != '\0' && *end != 'x') || (*end == 'x' && end[1] == '\0')) {
            n = -1;
            break;
        }
        dims[n++] = (int)x;
        c = *end ? end + 1 : end;
    }
    if (n < d->min) {
        char count[48];
        cs_param_desc_bounds(d, count, sizeof(count));
        return cs_err_set(err, CS_ERR_PARSE, "parameter %s=%s: expected %s, positive integers "
                          "like 6x256", key, v, count);
    }
    return n;
}

int cs_params_list(cs_params_t *p, const cs_param_desc_t *table, const char *key,
                   const char **out, cs_err_t *err)
{
    const cs_param_desc_t *d = row(table, key, CS_PARAM_LIST, err);
    if (d == NULL)
        return CS_ERR_INTERNAL;
    const char *v = cs_params_get(p, key);
    *out = v != NULL ? v : d->def;
    if (v == NULL)
        return CS_OK;
    long n = 0;
    for (const char *c = v;; c++) {
        size_t len = strcspn(c, "+:/");
        if (len == 0)
            return cs_err_set(err, CS_ERR_PARSE, "parameter %s=%s: empty name", key, v);
        n++;
        c += len;
        if (*c == '\0')
            break;
    }
    if (n < d->min || n > d->max)
        return cs_err_set(err, CS_ERR_PARSE, "parameter %s=%s: %ld names, expected %ld to %ld",
                          key, v, n, d->min, d->max);
    return CS_OK;
}
