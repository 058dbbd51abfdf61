/*
 * allgather_ring.c - ring all-gather.
 *
 * Rank m starts with block m (in `in`, or already in out when in place).
 * In step i it sends block m-i to m+1 and receives block m-i-1 from m-1
 * straight into out; step 0 sends from `in`, later steps forward what
 * arrived.  Blocks travel as nchunks messages (pipelining).
 *
 *    step i, P = 3:   r0 --blk 0-i--> r1 --blk 1-i--> r2 --blk 2-i--> r0
 *
 * Cost: (P-1) alpha + (P-1)/P n beta (n = whole gathered vector).
 * Supports every P >= 1 and in-place.
 */
#include "common/cs_phase.h"

static const cs_param_desc_t params[] = {
    {"nchunks", "1", "chunks per block: messages per block, the pipelining depth"},
    {NULL, NULL, NULL},
};

static int build(const cs_coll_desc_t *desc, cs_params_t *p, cs_sched_t **out, cs_err_t *err)
{
    uint32_t nc = 1;
    int st = cs__param_nchunks(p, &nc, err);
    return st != CS_OK ? st : cs__flat_build(desc, CS__PH_RING, nc, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *p, double bytes,
                   const cs_ab_model_t *m)
{
    (void)p;
    return cs__cost_phase(CS__PH_RING, desc->nranks, bytes, m, 0);
}

const cs_algo_t cs__algo_allgather_ring = {
    .coll = CS_COLL_ALLGATHER,
    .name = "ring",
    .desc = "ring all-gather (bandwidth optimal, P-1 steps)",
    .params = params,
    .build = build,
    .cost = cost,
};
