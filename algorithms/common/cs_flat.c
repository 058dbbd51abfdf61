/*
 * cs_flat.c - the flat one-group generators (see cs_flat.h).
 */
#include "cs_flat.h"

#include <stdlib.h>

#include "cs_gen.h"
#include "cs_peers.h"

/* Append the collective's phases over group g; the stream ph is fresh. */
static int flat_phases(cs__phase_t *ph, const cs_coll_desc_t *desc, cs__ph_alg_t a,
                       const cs__grp_t *g, uint32_t C, uint32_t nchunks)
{
    cs_sched_t *s = ph->s;
    int P = desc->nranks, in = desc->inplace ? CS_BUF_OUT : CS_BUF_IN;
    if (desc->coll == CS_COLL_ALLGATHER)
        return cs__phase_ag(ph, a, g, (cs__bufs_t){in, CS_BUF_OUT, CS_BUF_OUT}, 0, nchunks);
    if (desc->coll == CS_COLL_REDUCE_SCATTER) {
        int work = a == CS__PH_DIRECT ? CS_BUF_OUT : CS_BUF_FIRST_SCRATCH;
        for (int r = 0; r < P && work != CS_BUF_OUT && P > 1; r++)
            cs_sched_add_buffer(s, r, "acc", 0, C);
        if (P == 1)
            work = CS_BUF_OUT;
        return cs__phase_rs(ph, a, g, (cs__bufs_t){CS_BUF_IN, work, CS_BUF_OUT}, 0, nchunks);
    }
    if (desc->coll == CS_COLL_ALLREDUCE) {
        int st = cs__phase_rs(ph, a, g, (cs__bufs_t){in, CS_BUF_OUT, CS_BUF_OUT}, 0, nchunks);
        if (st == CS_OK)
            st = cs__phase_ag(ph, a, g, (cs__bufs_t){CS_BUF_OUT, CS_BUF_OUT, CS_BUF_OUT}, 1,
                              nchunks);
        return st;
    }
    return cs_err_set(&s->err, CS_ERR_UNSUPPORTED,
                      "%s is not a reduce-scatter / all-gather collective",
                      cs_coll_name(desc->coll));
}

typedef struct flat_arg {
    const cs_coll_desc_t *desc;
    cs__ph_alg_t a;
    const cs__grp_t *g;
    uint32_t C, nchunks;
} flat_arg_t;

static int flat_emit(cs__phase_t *ph, void *arg)
{
    const flat_arg_t *f = arg;
    return flat_phases(ph, f->desc, f->a, f->g, f->C, f->nchunks);
}

int cs__flat_build(const cs_coll_desc_t *desc, cs_params_t *params, const cs_param_desc_t *table,
                   cs__ph_alg_t a, cs_sched_t **out, cs_err_t *err)
{
    uint32_t nchunks = 1;
    int st = cs__gen_nchunks(params, table, &nchunks, err);
    if (st != CS_OK)
        return st;
    int P = desc->nranks;
    cs__fold_t f = cs__fold_make(P > 0 ? P : 1);
    int balanced_rhd = desc->coll == CS_COLL_ALLREDUCE && a == CS__PH_RHD;
    /* rhd allreduce: the extra members own nothing, n2 segments in all */
    uint64_t C = (uint64_t)(balanced_rhd ? f.n2 : P) * nchunks;
    if (C > UINT32_MAX / 2)
        return cs_err_set(err, CS_ERR_RANGE, "%d ranks x %u chunks is too many chunks", P,
                          nchunks);
    cs_sched_t *s = cs__gen_create(desc, (uint32_t)C, err, &st);
    if (s == NULL)
        return st;
    int *ranks = malloc((size_t)P * sizeof(*ranks));
    uint32_t *cut = malloc(((size_t)P + 1) * sizeof(*cut));
    if (ranks == NULL || cut == NULL)
        st = cs_err_set(&s->err, CS_ERR_NOMEM, "out of memory");
    if (st == CS_OK) {
        cut[0] = 0;
        for (int m = 0; m < P; m++) {
            ranks[m] = m;
            int owned = balanced_rhd ? (cs__fold_is_extra(&f, m) ? 0 : 1) : 1;
            cut[m + 1] = cut[m] + (uint32_t)owned * nchunks;
        }
        cs__grp_t g = {ranks, P, cut};
        flat_arg_t fa = {desc, a, &g, (uint32_t)C, nchunks};
        /* steps: ring and direct about 4 P per rank and chunk, rhd 4 log2 P */
        uint64_t per = a == CS__PH_RHD ? 4u * (uint64_t)cs__log2_floor((uint64_t)P) + 8
                                       : 4u * (uint64_t)P * nchunks;
        st = cs__phase_split(s, (uint64_t)P * per, flat_emit, &fa);
    }
    free(ranks);
    free(cut);
    return cs__gen_finish(s, st, out, err);
}

double cs__flat_cost(const cs_coll_desc_t *desc, cs__ph_alg_t a, double bytes,
                     const cs_ab_model_t *m)
{
    int P = desc->nranks;
    switch (desc->coll) {
    case CS_COLL_ALLREDUCE:
        return cs__phase_cost(a, P, bytes, m, 1) + cs__phase_cost(a, P, bytes, m, 0);
    case CS_COLL_REDUCE_SCATTER:
        return cs__phase_cost(a, P, bytes, m, 1);
    default:
        return cs__phase_cost(a, P, bytes, m, 0);
    }
}
