/*
 * allreduce_ring.c - ring allreduce: ring reduce-scatter, then ring
 * all-gather, over all P ranks (Patarasuk & Yuan; NCCL's ring).
 *
 * The vector is C = P * nchunks chunks, P segments of nchunks chunks.  In
 * step i of the reduce-scatter, rank m sends segment m-i-1 to m+1 and
 * reduces segment m-i-2 arriving from m-1, so after P-1 steps rank m holds
 * the full sum of segment m; the all-gather then circulates the sums.  Each
 * segment moves as nchunks messages of one chunk, so a rank forwards the
 * first chunk of a segment while the next is still arriving.
 *
 *    step i (reduce-scatter), P = 4:
 *
 *      r0 --seg 3-i--> r1 --seg 0-i--> r2 --seg 1-i--> r3 --seg 2-i--> r0
 *      (each receiver adds the arriving segment to its own copy)
 *
 * Cost: 2(P-1) alpha + 2 (P-1)/P n beta + (P-1)/P n gamma (bandwidth
 * optimal; latency linear in P).
 * Supports every P >= 1 and in-place; no other restriction.
 */
#include "common/cs_phase.h"

static const cs_param_desc_t params[] = {
    {"nchunks", "1", "chunks per segment: messages per segment, the pipelining depth"},
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
    return cs__cost_phase(CS__PH_RING, desc->nranks, bytes, m, 1) +
           cs__cost_phase(CS__PH_RING, desc->nranks, bytes, m, 0);
}

const cs_algo_t cs__algo_allreduce_ring = {
    .coll = CS_COLL_ALLREDUCE,
    .name = "ring",
    .desc = "ring reduce-scatter + ring all-gather (bandwidth optimal, 2(P-1) steps)",
    .params = params,
    .build = build,
    .cost = cost,
};
