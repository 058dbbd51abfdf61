/*
 * allgather_rd.c - recursive doubling all-gather.
 *
 * Ranks 2i+1 (i < P - n2, n2 = 2^floor(log2 P)) first send their block to
 * rank 2i.  Then in round k (distance 1, 2, 4, .. n2/2) each remaining
 * rank exchanges everything it holds, a contiguous run of blocks, with its
 * partner, doubling its run.  Finally rank 2i sends everything but block
 * 2i+1 to rank 2i+1.
 *
 *    round 2, P = 4:  r0 [blk 0-1] <-> r2 [blk 2-3],  r1 [0-1] <-> r3 [2-3]
 *
 * Cost (P a power of two): log2(P) alpha + (P-1)/P n beta; otherwise add
 * alpha + n beta for the final hand-over to the extra ranks.
 * Supports every P >= 1 and in-place.
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
    return st != CS_OK ? st : cs__flat_build(desc, CS__PH_RHD, nc, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *p, double bytes,
                   const cs_ab_model_t *m)
{
    (void)p;
    return cs__cost_phase(CS__PH_RHD, desc->nranks, bytes, m, 0);
}

const cs_algo_t cs__algo_allgather_rd = {
    .coll = CS_COLL_ALLGATHER,
    .name = "rd",
    .desc = "recursive doubling all-gather (log2 P rounds, fold for other P)",
    .params = params,
    .build = build,
    .cost = cost,
};
