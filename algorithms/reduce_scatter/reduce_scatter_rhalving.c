/*
 * reduce_scatter_rhalving.c - recursive halving reduce-scatter.
 *
 * Ranks 2i+1 (i < P - n2, n2 = 2^floor(log2 P)) fold their whole vector
 * into rank 2i; then in log2(n2) rounds each remaining rank keeps the half
 * of its range of blocks that holds its own block(s), sends the other half
 * to its partner at distance n2/2, n2/4, .. 1, and reduces the partner's
 * copy of the kept half into a scratch accumulator.  Rank 2i finally hands
 * block 2i+1 to rank 2i+1.  Ranges stay contiguous because folded pairs
 * own adjacent blocks.
 *
 *    round 1, P = 4:  r0 <-> r2 exchange halves [0,2) / [2,4),
 *                     r1 <-> r3 likewise; round 2: r0 <-> r1, r2 <-> r3
 *
 * Cost (P a power of two): log2(P) alpha + (P-1)/P n (beta + gamma);
 * otherwise add alpha + n (beta + gamma) for the fold.
 * Supports every P >= 1; not in place.  Needs a scratch buffer of the
 * whole vector; messages are whole halves (no pipelining parameter).
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
    return cs__cost_phase(CS__PH_RHD, desc->nranks, bytes, m, 1);
}

const cs_algo_t cs__algo_reduce_scatter_rhalving = {
    .coll = CS_COLL_REDUCE_SCATTER,
    .name = "rhalving",
    .desc = "recursive halving reduce-scatter (log2 P rounds, fold for other P)",
    .params = params,
    .build = build,
    .cost = cost,
};
