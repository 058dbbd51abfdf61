/*
 * allreduce_binomial.c - allreduce as a k-nomial tree reduce to rank 0
 * followed by a k-nomial tree broadcast from rank 0 (binomial for radix 2).
 *
 * Method: the vector is cut into `nchunks` segments, each moved on its own
 * (pipelined).  Reduce: every inner node copies its input into out, combines
 * its children's partial sums into out (smallest subtree first), and sends
 * out to its parent; leaves send their input directly.  Broadcast: the root
 * sends the sum down the same tree; every rank receives into out (after its
 * own send up, which read out) and forwards it.
 *
 *   one round of the reduce, P = 8:          broadcast, the same edges reversed
 *     1 -> 0   3 -> 2   5 -> 4   7 -> 6
 *     2 -> 0   6 -> 4
 *     4 -> 0
 *
 * Cost (L = ceil(log_k P), S segments, n bytes): the root handles
 * (k-1) L messages per segment in each phase,
 *     T = 2 (k-1) L (S alpha + n beta) + (k-1) L n gamma
 * which for k = 2, S = 1 is Ben-Nun & Hoefler's 2 log P (alpha + n beta).
 * Bandwidth-poor for large n (every level moves the whole vector); use ring
 * or dbtree there.  Supports every P >= 1 and in-place operation.
 */
#include "common/cs_trees.h"
#include "cs_algo.h"

static int build(const cs_coll_desc_t *desc, cs_params_t *params, cs_sched_t **out, cs_err_t *err)
{
    return cs__tree_gen_knomial(desc, params, 0, CS__TREE_OP_ALLREDUCE, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *params, double bytes,
                   const cs_ab_model_t *m)
{
    long nseg;
    double f = cs__tree_knomial_rounds(desc, params, &nseg);
    return 2.0 * f * ((double)nseg * m->alpha + bytes * m->beta) + f * bytes * m->gamma;
}

const cs_algo_t cs__algo_allreduce_binomial = {
    .coll = CS_COLL_ALLREDUCE,
    .name = "binomial",
    .desc = "binomial (k-nomial) tree reduce to rank 0, then tree broadcast",
    .params = cs__tree_knomial_desc,
    .build = build,
    .cost = cost,
};
