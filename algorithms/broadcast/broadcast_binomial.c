/*
 * broadcast_binomial.c - broadcast down a k-nomial tree (binomial for radix
 * 2) rooted at the collective's root, pipelined in segments.
 *
 * Method: positions are ranks relative to the root; position v receives
 * every segment from v with its lowest non-zero base-k digit cleared and
 * forwards it to v + d k^j for every digit position j below that digit,
 * largest subtree first.  The root sends from in (out when in place) and
 * copies in to out.
 *
 *   round 1: 0 -> 4      round 2: 0 -> 2, 4 -> 6      round 3: 0->1 2->3 4->5 6->7
 *
 * Cost (L = ceil(log_k P), S segments, n bytes): the root sends (k-1) L
 * messages per segment,  T = (k-1) L (S alpha + n beta);  for k = 2, S = 1
 * this is log2 P (alpha + n beta).  Latency-optimal, bandwidth-poor for
 * large n (use chain or scatter_allgather there).  Every P >= 1, every
 * root, in place or not.
 */
#include "common/cs_trees.h"
#include "cs_algo.h"

static int build(const cs_coll_desc_t *desc, cs_params_t *params, cs_sched_t **out, cs_err_t *err)
{
    return cs__tree_gen_knomial(desc, params, desc->root, CS__TREE_OP_BCAST, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *params, double bytes,
                   const cs_ab_model_t *m)
{
    long nseg;
    double f = cs__tree_knomial_rounds(desc, params, &nseg);
    return f * ((double)nseg * m->alpha + bytes * m->beta);
}

const cs_algo_t cs__algo_broadcast_binomial = {
    .coll = CS_COLL_BROADCAST,
    .name = "binomial",
    .desc = "binomial (k-nomial) tree from the root, pipelined in segments",
    .params = cs__tree_knomial_desc,
    .build = build,
    .cost = cost,
};
