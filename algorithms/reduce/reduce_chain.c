/*
 * reduce_chain.c - pipelined chain reduce toward the root, in segments:
 * broadcast's chain run backwards, as NCCL's Ring reduce runs on its rings.
 *
 * Method: the chain is root, v1, v2, ..., v(P-1) (the ranks' order from the
 * root, or channel c's ring read from the root); for every segment the last
 * rank sends its input to the one before it, each inner rank adds what it
 * receives to its own input (in out) and sends that on, and the root ends
 * with the sum in out.  Segment i+1 follows segment i down the chain.
 *
 *   time step t (segment index in each box):
 *     root <--[t-P+2]-- v1 <-- ... <--[t-1]-- v(P-2) <--[t]-- v(P-1)
 *
 * Channels (channels = K > 1, or one per order): the vector is K windows of
 * S segments, window c moving up chain c on message channel c, whose ring
 * is the flat ring's (cs_flat.h): groups of `local` ranks rotated by
 * c local / K, or visited in order Oc of orders = O1+O2+... (a group's
 * members in base-36 digits; all P ranks with local = 1), as for
 * broadcast's chain.  `collstep sim --algo nccl` runs NCCL's Ring reduce
 * this way, its rings from the link analysis where the nodes have no
 * switch.
 *
 * Cost (S segments, n bytes): P-1 hops to fill the pipe, then one segment
 * per step, each reduced on the way:
 *     T = (P + S - 2) (alpha + n (beta + gamma) / S)
 * Bandwidth-optimal for large n and S, latency linear in P.  Every P >= 1,
 * every root, in place or not; non-root ranks use out as their accumulator.
 */
#include "common/cs_trees.h"
#include "cs_algo.h"

static const cs_param_desc_t params_desc[] = {
    CS_PARAM_INT_ROW("nchunks", "8", 1, 65536, "pipelining segments (chunks of the vector)"),
    CS__TREE_CHAIN_ROWS,
    CS_PARAM_END,
};

static int build(const cs_coll_desc_t *desc, cs_params_t *params, cs_sched_t **out, cs_err_t *err)
{
    long nseg;
    int st = cs_params_int(params, params_desc, "nchunks", &nseg, err);
    if (st != CS_OK)
        return st;
    return cs__tree_chains(desc, params, params_desc, nseg, CS__TREE_OP_REDUCE, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *params, double bytes,
                   const cs_ab_model_t *m)
{
    long nseg = 8;
    cs_params_int(params, params_desc, "nchunks", &nseg, NULL); /* the default if invalid */
    if (desc->nranks < 2)
        return 0.0;
    double S = (double)nseg;
    return ((double)desc->nranks + S - 2.0) * (m->alpha + bytes * (m->beta + m->gamma) / S);
}

const cs_algo_t cs__algo_reduce_chain = {
    .coll = CS_COLL_REDUCE,
    .name = "chain",
    .desc = "pipelined chain toward the root through all ranks, in segments",
    .params = params_desc,
    .build = build,
    .cost = cost,
};
