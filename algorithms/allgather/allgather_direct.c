/*
 * allgather_direct.c - direct all-gather: every rank sends its block to
 * every other rank, all messages at once, received straight into out.
 *
 *    P = 4:   r0 --blk 0--> r1, r2, r3   (and likewise from every rank)
 *
 * Cost: (P-1) alpha + (P-1)/P n beta when a rank's messages share one
 * link.  O(P^2) steps in all.  Supports every P >= 1 and in-place.
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
    return cs__cost_phase(CS__PH_DIRECT, desc->nranks, bytes, m, 0);
}

const cs_algo_t cs__algo_allgather_direct = {
    .coll = CS_COLL_ALLGATHER,
    .name = "direct",
    .desc = "direct all-gather (every rank sends its block to all others)",
    .params = params,
    .build = build,
    .cost = cost,
};
