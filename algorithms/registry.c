/*
 * registry.c - the one table of algorithm generators.
 *
 * Each generator lives in algorithms/<coll>/<coll>_<alg>.c and exports a
 * `const cs_algo_t cs__algo_<coll>_<alg>`; <coll>/<coll>.def lists a
 * collective's generators (one X(coll, alg) line each) in the order users
 * see them, and algos.def includes those lists in cs_coll_t order.
 */
#include <string.h>

#include "cs_algo.h"

#define X(coll, alg) extern const cs_algo_t cs__algo_##coll##_##alg;
#include "algos.def"
#undef X

static const cs_algo_t *const registry[] = {
#define X(coll, alg) &cs__algo_##coll##_##alg,
#include "algos.def"
#undef X
};

int cs_algo_count(void)
{
    return (int)(sizeof(registry) / sizeof(registry[0]));
}

/* Entries grouped by collective (in cs_coll_t order), then in list order. */
const cs_algo_t *cs_algo_at(int i)
{
    if (i < 0 || i >= cs_algo_count())
        return NULL;
    for (int c = 0; c < CS_COLL_COUNT; c++)
        for (int j = 0; j < cs_algo_count(); j++)
            if (registry[j]->coll == (cs_coll_t)c && i-- == 0)
                return registry[j];
    return NULL;
}

const cs_algo_t *cs_algo_find(cs_coll_t coll, const char *name)
{
    for (int i = 0; i < cs_algo_count(); i++)
        if (registry[i]->coll == coll && strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}

int cs_algo_switched(const cs_algo_t *a, cs_params_t *params)
{
    if (a->switched == NULL)
        return 0;
    cs_params_t none;
    if (params == NULL) { /* the defaults */
        cs_params_init(&none);
        params = &none;
    }
    return a->switched(params) != 0;
}

int cs_algo_build(const cs_algo_t *a, const cs_coll_desc_t *desc, cs_params_t *params,
                  cs_sched_t **out, cs_err_t *err)
{
    cs_sched_t *s = NULL;
    if (desc->coll != a->coll)
        return cs_err_set(err, CS_ERR_INVAL, "algorithm %s is for %s, not %s", a->name,
                          cs_coll_name(a->coll), cs_coll_name(desc->coll));
    int st = a->build(desc, params, &s, err);
    if (st != CS_OK)
        return st;
    st = cs_params_check_unused(params, a->name, err);
    if (st != CS_OK) {
        cs_sched_destroy(s);
        return st;
    }
    char text[CS_META_MAX];
    cs_params_format(params, text, sizeof(text));
    cs_sched_set_meta(s, a->name, text);
    *out = s;
    return CS_OK;
}
