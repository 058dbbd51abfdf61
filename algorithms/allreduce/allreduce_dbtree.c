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
 * Nodes and channels (NCCL's Tree as it runs across nodes, graph/connect.cc
 * and trees.cc): with local = L > 1 the ranks are nodes of L consecutive
 * ranks (the last one shorter when L does not divide P); the two trees are
 * the double binary tree over the nodes, and inside each node a chain
 * through its members whose first member (the head) alone talks to the
 * other nodes (cs_trees.h, kind nodes).  With channels = C the vector is 2C
 * windows of nchunks chunks: channel c runs tree 0 on window c (message
 * channel 2c) and tree 1 on window C + c (message channel 2c + 1), both
 * along chain c, whose head is member floor(c L / C) of each node, so that
 * the channels leave a node through different GPUs, and their NICs (NCCL:
 * channel c uses NIC c mod nNICs, channels c and c + C the two trees on
 * the same intra-node chain).  local = 1, channels = 1 is the schedule
 * above.  With orders = O1+O2+... (one per channel, each a permutation of
 * a node's L members in base-36 digits; L must divide P) chain c visits
 * every node's members in order Oc, its first the head: NCCL's chains
 * follow the links its search finds (on a DGX-1's hybrid cube mesh, paths
 * over NVLink), which `collstep sim --algo nccl` and the planner take from
 * their link analysis.  With local = 1 the orders make all the ranks one
 * node.
 *
 *   local = 4, P = 8, channels = 1: nodes {0..3} {4..7}, chains 0-1-2-3 and
 *   4-5-6-7; tree 0: 0 is the root, 4 its child node's head (0 -> 1 -> 2 ->
 *   3 and 0 -> 4 -> 5 -> 6 -> 7); tree 1 (mirror): 4 is the root, 0 the
 *   child.  channels = 2: chain 1 starts at 2 and 6 (2 -> 3 -> 0 -> 1).
 *
 * Cost (D = depth of the tree, about log2 P + 1, or L - 1 + log2(P / L) + 1
 * across nodes; S segments; n bytes):
 *     T = 2 (D + S - 1) (alpha + n beta / S) + n gamma
 * i.e. logarithmic latency with the bandwidth term of a ring for large S.
 * Supports every P >= 1 (P = 1: a copy) and in-place operation.  The trees
 * are laid over rank numbers, nodes of local consecutive ranks.
 */
#include <stdlib.h>

#include "common/cs_gen.h"
#include "common/cs_trees.h"
#include "cs_algo.h"

static const cs_param_desc_t params_desc[] = {
    CS_PARAM_INT_ROW("nchunks", "16", 1, 32768,
                     "pipelining segments per tree and channel (the vector is 2 x channels x "
                     "nchunks chunks)"),
    CS_PARAM_INT_ROW("local", "1", 1, 65536,
                     "ranks per node: the trees span the nodes, a chain each node's ranks "
                     "(NCCL's Tree across nodes)"),
    CS_PARAM_INT_ROW("channels", "1", 1, 64,
                     "channels, each both trees on its own windows, its chain headed by "
                     "member floor(c local / channels) of each node"),
    CS_PARAM_LIST_ROW("orders", "none", 1, 64,
                      "one chain per channel, each node's members visited as written, the "
                      "first the head (base-36 digits: 01237564+32675401)"),
    CS_PARAM_END,
};

/* Tree `which` of channel c: the double binary tree over the ranks
 * (local = 1), or over the nodes with chain c inside them: in the
 * channel's order (perm, inv: L members each, or NULL) or rotated. */
static void tree_of(cs__tree_t *t, int P, long L, long C, int which, long c, const int *perm,
                    const int *inv)
{
    if (perm)
        cs__tree_nodes_ordered(t, P, (int)L, which, perm + c * L, inv + c * L);
    else if (L <= 1)
        cs__tree_dbtree(t, P, which);
    else
        cs__tree_nodes(t, P, (int)L, which, (int)c, (int)C);
}

static int build(const cs_coll_desc_t *desc, cs_params_t *params, cs_sched_t **out, cs_err_t *err)
{
    long nch, L, C;
    int *perm = NULL, *inv = NULL;
    int st = cs_params_int(params, params_desc, "nchunks", &nch, err);
    if (st == CS_OK)
        st = cs_params_int(params, params_desc, "local", &L, err);
    if (st == CS_OK)
        st = cs_params_int(params, params_desc, "channels", &C, err);
    /* orders: one chain per channel (local = 1: the ranks are one node) */
    if (st == CS_OK)
        st = cs__gen_orders(params, params_desc, desc->nranks, &L, &C, &perm, err);
    if (st == CS_OK && perm && !(inv = malloc(sizeof(int) * (size_t)(C * L))))
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    for (long i = 0; st == CS_OK && perm && i < C * L; i++)
        inv[i - i % L + perm[i]] = (int)(i % L);
    if (st != CS_OK || (unsigned long)C * (unsigned long)nch > UINT32_MAX / 4) {
        free(perm), free(inv);
        return st != CS_OK ? st
                           : cs_err_set(err, CS_ERR_RANGE, "%ld channels x %ld chunks is too "
                                        "many chunks", C, nch);
    }
    cs_sched_t *s = cs__gen_create(desc, 2u * (uint32_t)C * (uint32_t)nch, err, &st);
    if (s == NULL) {
        free(perm), free(inv);
        return st;
    }
    for (long c = 0; c < C && st == CS_OK; c++) {
        for (int which = 0; which < 2 && st == CS_OK; which++) {
            cs__tree_t t;
            tree_of(&t, desc->nranks, L, C, which, c, perm, inv);
            cs__tree_pipe_t p = {.chan = (int)(2 * c + which),
                                 .first = (uint32_t)((which * C + c) * nch),
                                 .count = (uint32_t)nch,
                                 .nseg = (uint32_t)nch,
                                 .src = desc->inplace ? CS_BUF_OUT : CS_BUF_IN,
                                 .dst = CS_BUF_OUT};
            st = cs__tree_run(s, &t, p, CS__TREE_OP_ALLREDUCE, err);
        }
    }
    free(perm), free(inv);
    return cs__gen_finish(s, st, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *params, double bytes,
                   const cs_ab_model_t *m)
{
    long nch = 1, L = 1;
    /* the defaults if invalid */
    cs_params_int(params, params_desc, "nchunks", &nch, NULL);
    cs_params_int(params, params_desc, "local", &L, NULL);
    if (desc->nranks < 2)
        return 0.0;
    cs__tree_t t;
    tree_of(&t, desc->nranks, L, 1, 0, 0, NULL, NULL);
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
