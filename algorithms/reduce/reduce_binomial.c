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

static const cs_param_desc_t params_desc[] = {
    {"nchunks", "1", "pipelining segments (chunks of the vector)"},
    {"radix", "2", "tree radix k (2 = binomial)"},
    {NULL, NULL, NULL},
};

static int get_params(cs_params_t *params, long *nch, long *radix, cs_err_t *err)
{
    int st = cs_params_get_int(params, "nchunks", 1, 1, 65536, nch, err);
    if (st == CS_OK)
        st = cs_params_get_int(params, "radix", 2, 2, 64, radix, err);
    return st;
}

static int build(const cs_coll_desc_t *desc, cs_params_t *params, cs_sched_t **out, cs_err_t *err)
{
    long nch, radix;
    int st = get_params(params, &nch, &radix, err);
    if (st != CS_OK)
        return st;
    cs_sched_t *s = cs_tree_gen_create(desc, (uint32_t)nch, err, &st);
    if (s == NULL)
        return st;
    cs_tree_t t;
    cs_tree_knomial(&t, desc->nranks, desc->root, (int)radix);
    cs_tree_pipe_t p = {.chan = 0,
                        .first = 0,
                        .count = (uint32_t)nch,
                        .nseg = (uint32_t)nch,
                        .src = desc->inplace ? CS_BUF_OUT : CS_BUF_IN,
                        .dst = CS_BUF_OUT};
    st = cs_tree_reduce(s, &t, &p, NULL, NULL);
    return cs_tree_gen_finish(s, st, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *params, double bytes,
                   const cs_ab_model_t *m)
{
    long nch = 1, radix = 2;
    get_params(params, &nch, &radix, NULL);
    double f = (double)(radix - 1) * cs_ceil_log((int)radix, desc->nranks);
    return f * ((double)nch * m->alpha + bytes * (m->beta + m->gamma));
}

const cs_algo_t cs__algo_reduce_binomial = {
    .coll = CS_COLL_REDUCE,
    .name = "binomial",
    .desc = "binomial (k-nomial) tree reduce to the root, pipelined in segments",
    .params = params_desc,
    .build = build,
    .cost = cost,
};
