/*
 * cs_gen.c - generator plumbing (see cs_gen.h for the contracts).
 */
#include "cs_gen.h"

#include <stdlib.h>
#include <string.h>

int cs__gen_nchunks(cs_params_t *params, const cs_param_desc_t *table, uint32_t *nchunks,
                    cs_err_t *err)
{
    long v = 1;
    int st = cs_params_int(params, table, "nchunks", &v, err);
    if (st == CS_OK)
        *nchunks = (uint32_t)v;
    return st;
}

cs_sched_t *cs__gen_create(const cs_coll_desc_t *desc, uint32_t nchunks, cs_err_t *err, int *st)
{
    cs_err_t e = {0};
    cs_sched_t *s = cs_sched_create(desc, nchunks, &e);
    if (s == NULL) {
        *st = e.code != CS_OK ? e.code : CS_ERR_INTERNAL;
        cs_err_set(err, *st, "%s", e.msg);
        return NULL;
    }
    *st = CS_OK;
    return s;
}

cs_sched_t *cs__gen_create_blocked(const cs_coll_desc_t *desc, uint32_t per, const char *unit,
                                   cs_err_t *err, int *st)
{
    int P = desc->nranks;
    if ((uint64_t)P * per > UINT32_MAX / 2) {
        *st = cs_err_set(err, CS_ERR_RANGE, "%d ranks x %u chunks%s is too many chunks", P, per,
                         unit);
        return NULL;
    }
    return cs__gen_create(desc, (uint32_t)P * per, err, st);
}

cs_sched_t *cs__gen_blocked(const cs_coll_desc_t *desc, cs_params_t *params,
                            const cs_param_desc_t *table, const char *unit, uint32_t *per,
                            cs_err_t *err, int *st)
{
    *st = cs__gen_nchunks(params, table, per, err);
    return *st != CS_OK ? NULL : cs__gen_create_blocked(desc, *per, unit, err, st);
}

int cs__gen_a2a_start(cs_sched_t *s, int r, uint32_t P, uint32_t k, int inplace, int64_t *init)
{
    uint32_t C = P * k;
    *init = -1;
    if (!inplace) {
        cs_copy(s, r, cs_rng(CS_BUF_IN, (uint32_t)r * k, k), cs_rng(CS_BUF_OUT, (uint32_t)r * k, k),
                NULL, 0);
        return CS_BUF_IN;
    }
    int src = cs_sched_add_buffer(s, r, "src", 0, C);
    *init = cs_copy(s, r, cs_rng(CS_BUF_OUT, 0, C), cs_rng(src, 0, C), NULL, 0);
    return src;
}

int cs__gen_finish(cs_sched_t *s, int st, cs_sched_t **out, cs_err_t *err)
{
    if (s != NULL && st == CS_OK && cs_sched_status(s) == CS_OK) {
        *out = s;
        return CS_OK;
    }
    if (s != NULL && cs_sched_status(s) != CS_OK) {
        st = cs_sched_status(s);
        cs_err_set(err, st, "%s", s->err.msg);
    } else if (st == CS_OK) {
        st = CS_ERR_INTERNAL;
        cs_err_set(err, st, "generator failed without a reason");
    }
    cs_sched_destroy(s);
    return st;
}

int cs__gen_orders(cs_params_t *params, const cs_param_desc_t *table, int P, long *L,
                        long *K, int **perm, cs_err_t *err)
{
    const char *v;
    *perm = NULL;
    /* absent: not read, so the schedule's parameters (its provenance) do
     * not list it */
    if (cs_param_desc_find(table, "orders") == NULL || cs_params_get(params, "orders") == NULL)
        return CS_OK;
    int st = cs_params_list(params, table, "orders", &v, err);
    if (st != CS_OK || strcmp(v, "none") == 0)
        return st;
    long len = *L > 1 ? *L : P, n = 1;
    for (const char *c = v; *c; c++)
        n += *c == '+' || *c == ':' || *c == '/';
    if (*K > 1 && *K != n)
        return cs_err_set(err, CS_ERR_PARSE, "parameter orders=%s: %ld orders for channels=%ld",
                          v, n, *K);
    if (len > 36 || P % len != 0)
        return cs_err_set(err, CS_ERR_PARSE, "parameter orders=%s: groups of %ld ranks do not "
                          "%s", v, len, len > 36 ? "fit base-36 digits (at most 36)"
                          : "divide the ranks");
    int *pm = malloc(sizeof(int) * (size_t)(n * len));
    if (pm == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    const char *c = v;
    for (long k = 0; k < n; k++) {
        unsigned seen[2] = {0, 0};
        long i = 0;
        for (; *c && *c != '+' && *c != ':' && *c != '/'; c++, i++) {
            int d = *c >= '0' && *c <= '9' ? *c - '0' : *c >= 'a' && *c <= 'z' ? *c - 'a' + 10 : 99;
            if (i >= len || d >= len || (seen[d / 32] >> (d % 32) & 1)) {
                free(pm);
                return cs_err_set(err, CS_ERR_PARSE, "parameter orders=%s: order %ld is not a "
                                  "permutation of %ld base-36 digits (0 to %ld)", v, k + 1, len,
                                  len - 1);
            }
            seen[d / 32] |= 1u << (d % 32);
            pm[k * len + i] = d;
        }
        if (i != len) {
            free(pm);
            return cs_err_set(err, CS_ERR_PARSE, "parameter orders=%s: order %ld has %ld ranks, "
                              "not %ld", v, k + 1, i, len);
        }
        if (*c)
            c++;
    }
    *L = len, *K = n, *perm = pm;
    return CS_OK;
}
