/*
 * allreduce_dbtree.c - double binary tree allreduce (the idea of NCCL's
 * tree algorithm): two complementary binary trees each reduce and then
 * broadcast one half of the vector, pipelined in segments.
 *
 * Method: the vector is 2 S chunks (S = nchunks, default 16: pipelined by
 * default, as NCCL is); tree 0 moves chunks [0, S), tree 1
 * chunks [S, 2S), one chunk per pipeline segment, each tree on its own
 * channel.  In each tree a segment is reduced up (copy in -> out, rrecv from
 * each child, send to the parent) and, once the root holds the sum, sent
 * back down (recv into out, forward to the children).  Tree 1 is tree 0
 * mirrored (even P) or shifted by one rank (odd P), so most ranks are a
 * leaf in one tree and an inner node in the other: the load of inner nodes
 * is spread and every rank sends and receives about n bytes per phase.
 *
 *   tree 0, P = 8:  0 - 4          tree 1 (mirror):  7 - 3
 *                     / \                             / \
 *                    2   6                           5   1
 *                   / \ / \                         / \ / \
 *                  1  3 5  7                       6  4 2  0
 *
 * Cost (D = depth of the tree, about log2 P + 1; S segments; n bytes):
 *     T = 2 (D + S - 1) (alpha + n beta / S) + n gamma
 * i.e. logarithmic latency with the bandwidth term of a ring for large S.
 * Supports every P >= 1 (P = 1: a copy) and in-place operation.  Not
 * topology aware: the trees are laid over rank numbers.
 */
#include "common/cs_gen.h"
#include "common/cs_trees.h"
#include "cs_algo.h"

static const cs_param_desc_t params_desc[] = {
    CS_PARAM_INT_ROW("nchunks", "16", 1, 32768,
                     "pipelining segments per tree (the vector is 2 x nchunks chunks)"),
    CS_PARAM_END,
};

static int build(const cs_coll_desc_t *desc, cs_params_t *params, cs_sched_t **out, cs_err_t *err)
{
    long nch;
    int st = cs_params_int(params, params_desc, "nchunks", &nch, err);
    if (st != CS_OK)
        return st;
    cs_sched_t *s = cs__gen_create(desc, 2u * (uint32_t)nch, err, &st);
    if (s == NULL)
        return st;
    for (int which = 0; which < 2 && st == CS_OK; which++) {
        cs__tree_t t;
        cs__tree_dbtree(&t, desc->nranks, which);
        cs__tree_pipe_t p = {.chan = which,
                             .first = (uint32_t)(which * nch),
                             .count = (uint32_t)nch,
                             .nseg = (uint32_t)nch,
                             .src = desc->inplace ? CS_BUF_OUT : CS_BUF_IN,
                             .dst = CS_BUF_OUT};
        st = cs__tree_run(s, &t, p, CS__TREE_OP_ALLREDUCE, err);
    }
    return cs__gen_finish(s, st, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *params, double bytes,
                   const cs_ab_model_t *m)
{
    long nch = 1;
    cs_params_int(params, params_desc, "nchunks", &nch, NULL); /* the default if invalid */
    if (desc->nranks < 2)
        return 0.0;
    cs__tree_t t;
    cs__tree_dbtree(&t, desc->nranks, 0);
    double D = cs__tree_depth(&t), S = (double)nch;
    return 2.0 * (D + S - 1.0) * (m->alpha + bytes * m->beta / S) + bytes * m->gamma;
}

const cs_algo_t cs__algo_allreduce_dbtree = {
    .coll = CS_COLL_ALLREDUCE,
    .name = "dbtree",
    .desc = "double binary tree (NCCL style): each tree reduces and broadcasts half, pipelined",
    .params = params_desc,
    .build = build,
    .cost = cost,
};
