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

#include <stdlib.h>

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
    int P = desc->nranks;
    int64_t *done = malloc((size_t)P * (size_t)nch * sizeof(*done));
    if (done == NULL) {
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory for %d ranks", P);
        goto fail;
    }
    cs_tree_t t;
    cs_tree_knomial(&t, P, 0, (int)radix);
    cs_tree_pipe_t p = {.chan = 0,
                        .first = 0,
                        .count = (uint32_t)nch,
                        .nseg = (uint32_t)nch,
                        .src = desc->inplace ? CS_BUF_OUT : CS_BUF_IN,
                        .dst = CS_BUF_OUT};
    st = cs_tree_reduce(s, &t, &p, NULL, done);
    p.src = CS_BUF_OUT;
    if (st == CS_OK)
        st = cs_tree_bcast(s, &t, &p, done, NULL);
fail:
    free(done);
    return cs_tree_gen_finish(s, st, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *params, double bytes,
                   const cs_ab_model_t *m)
{
    long nch = 1, radix = 2;
    get_params(params, &nch, &radix, NULL);
    double L = cs_ceil_log((int)radix, desc->nranks), f = (double)(radix - 1) * L;
    return 2.0 * f * ((double)nch * m->alpha + bytes * m->beta) + f * bytes * m->gamma;
}

const cs_algo_t cs__algo_allreduce_binomial = {
    .coll = CS_COLL_ALLREDUCE,
    .name = "binomial",
    .desc = "binomial (k-nomial) tree reduce to rank 0, then tree broadcast",
    .params = params_desc,
    .build = build,
    .cost = cost,
};
