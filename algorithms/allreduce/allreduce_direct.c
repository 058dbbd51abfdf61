/*
 * allreduce_direct.c - direct allreduce: every rank sends segment j of its
 * vector straight to rank j, which reduces the P-1 contributions to its
 * segment; then every rank sends its reduced segment to all others.
 *
 *    reduce-scatter, P = 4 (all messages in flight at once):
 *
 *      r1 --seg 0--\
 *      r2 --seg 0---> r0  (r0 adds them to its segment 0, one after another)
 *      r3 --seg 0--/
 *
 * Cost: 2(P-1) alpha + 2 (P-1)/P n beta + (P-1)/P n gamma when a rank's
 * messages share one link; with a full-bisection fabric and concurrent
 * links the latency term is what direct saves.  P-1 concurrent messages per
 * rank (O(P^2) steps in all): meant for small groups and tiers.
 * Supports every P >= 1 and in-place.
 */
#include "common/cs_phase.h"

static const cs_param_desc_t params[] = {
    {"nchunks", "1", "chunks per segment"},
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
    return cs__cost_phase(CS__PH_DIRECT, desc->nranks, bytes, m, 1) +
           cs__cost_phase(CS__PH_DIRECT, desc->nranks, bytes, m, 0);
}

const cs_algo_t cs__algo_allreduce_direct = {
    .coll = CS_COLL_ALLREDUCE,
    .name = "direct",
    .desc = "direct reduce-scatter + direct all-gather (every pair exchanges once)",
    .params = params,
    .build = build,
    .cost = cost,
};
