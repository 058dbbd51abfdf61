/*
 * reduce_binomial.c - reduce up a k-nomial tree (binomial for radix 2)
 * rooted at the collective's root, pipelined in segments.
 *
 * Method: positions are ranks relative to the root.  For every segment an
 * inner node copies its input into out, combines the partial sums of its
 * children into out (smallest subtree first, serialised because they write
 * the same chunks) and sends out to its parent; a leaf sends its input
 * directly.  The root ends with the sum in out.
 *
 *   round 1: 1->0 3->2 5->4 7->6     round 2: 2->0 6->4     round 3: 4->0
 *
 * Cost (L = ceil(log_k P), S segments, n bytes): the root receives (k-1) L
 * messages per segment,  T = (k-1) L (S alpha + n beta + n gamma);  for
 * k = 2, S = 1 this is log2 P (alpha + n beta + n gamma).  Latency-optimal,
 * bandwidth-poor for large n (use ring there).  Every P >= 1, every root,
 * in place or not; non-root ranks use out as their accumulator.
 */
#include "common/cs_trees.h"
#include "cs_algo.h"

static int build(const cs_coll_desc_t *desc, cs_params_t *params, cs_sched_t **out, cs_err_t *err)
{
    return cs__tree_gen_knomial(desc, params, desc->root, CS__TREE_OP_REDUCE, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *params, double bytes,
                   const cs_ab_model_t *m)
{
    long nseg;
    double f = cs__tree_knomial_rounds(desc, params, &nseg);
    return f * ((double)nseg * m->alpha + bytes * (m->beta + m->gamma));
}

const cs_algo_t cs__algo_reduce_binomial = {
    .coll = CS_COLL_REDUCE,
    .name = "binomial",
    .desc = "binomial (k-nomial) tree reduce to the root, pipelined in segments",
    .params = cs__tree_knomial_desc,
    .build = build,
    .cost = cost,
};
