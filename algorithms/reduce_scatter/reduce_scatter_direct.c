/*
 * reduce_scatter_direct.c - direct reduce-scatter: every rank sends block
 * q of its input straight to rank q; rank q copies its own block into out
 * and reduces the P-1 arriving blocks into it, one after another.
 *
 *    P = 4:   r1 --blk 0--\
 *             r2 --blk 0---> r0 (out = in[0] + ... in turn)
 *             r3 --blk 0--/
 *
 * Cost: (P-1) alpha + (P-1)/P n (beta + gamma) when a rank's messages
 * share one link.  O(P^2) steps in all; no scratch buffer.
 * Supports every P >= 1; not in place.
 */
#include "common/cs_phase.h"

static const cs_param_desc_t params[] = {
    {"nchunks", "1", "chunks per block"},
    {NULL, NULL, NULL},
};

static int build(const cs_coll_desc_t *desc, cs_params_t *p, cs_sched_t **out, cs_err_t *err)
{
    uint32_t nc = 1;
    int st = cs__param_nchunks(p, &nc, err);
    return st != CS_OK ? st : cs__flat_build(desc, CS__PH_DIRECT, nc, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *p, double bytes,
                   const cs_ab_model_t *m)
{
    (void)p;
    return cs__cost_phase(CS__PH_DIRECT, desc->nranks, bytes, m, 1);
}

const cs_algo_t cs__algo_reduce_scatter_direct = {
    .coll = CS_COLL_REDUCE_SCATTER,
    .name = "direct",
    .desc = "direct reduce-scatter (every rank sends each block to its owner)",
    .params = params,
    .build = build,
    .cost = cost,
};
