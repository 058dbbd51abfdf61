/*
 * broadcast_scatter_allgather.c - van de Geijn's long-message broadcast:
 * binomial scatter of P pieces from the root, then a ring allgather.
 *
 * Method: positions are ranks relative to the root; the vector is P pieces
 * of `nchunks` chunks, piece v belonging to position v.  Scatter (channel
 * 0): position v receives the pieces of its binomial subtree [v, end(v))
 * from its parent into out and sends each child c the pieces [c, end(c)).
 * Allgather (channel 1): a ring over positions, P-1 steps; in step t
 * position v sends piece v-t to v+1.  The ring is cut before the root (it
 * needs nothing; it re-injects pieces from its own copy instead) and a
 * piece is not sent to a rank that already holds it from the scatter.
 *
 *   scatter, P = 8:  0 -[4..7]-> 4,  0 -[2,3]-> 2,  4 -[6,7]-> 6,  0 -[1]-> 1 ...
 *   ring step t:     v --piece (v-t)--> v+1      (7 -> 0 is cut)
 *
 * Cost (L = ceil(log2 P), n bytes):
 *     T = (L + P - 1) alpha + 2 (P-1)/P n beta
 * i.e. about twice the bandwidth bound, for large n better than a tree.
 * Every P >= 1, every root, in place or not.  The vector is cut into P
 * pieces, so counts below P leave some pieces empty.
 */
#include "common/cs_gen.h"
#include "common/cs_trees.h"
#include "cs_algo.h"

static const cs_param_desc_t params_desc[] = {
    CS_PARAM_INT_ROW("nchunks", "1", 1, 65536,
                     "chunks per piece (the vector is P x nchunks chunks)"),
    CS_PARAM_END,
};

/* Steps of one rank.  have[j]: the step after which out holds piece j. */
static void emit_rank(cs_sched_t *s, cs__tree_pieces_t *w, int r, uint32_t m, int src,
                      void *arg)
{
    (void)arg;
    const cs__tree_t *t = &w->t;
    int64_t *have = w->step;
    int P = t->nranks, v = cs__tree_pos(t, r), end = cs__tree_subtree_end(t, v);
    int next = (v + 1) % P, nend = cs__tree_subtree_end(t, next);
    int from = v == 0 ? src : CS_BUF_OUT;
    uint32_t dv;
    int64_t got = -1;
    if (v != 0)
        got = cs_recv(s, r, cs__tree_parent(t, r), 0,
                      cs_rng(CS_BUF_OUT, (uint32_t)v * m, (uint32_t)(end - v) * m), NULL, 0);
    else if (src != CS_BUF_OUT)
        cs_copy(s, r, cs_rng(src, 0, (uint32_t)P * m), cs_rng(CS_BUF_OUT, 0, (uint32_t)P * m), NULL,
                0);
    int nk = cs__tree_children(t, r, w->kids, w->cap);
    for (int c = 0; c < nk; c++) {
        int pc = cs__tree_pos(t, w->kids[c]), ec = cs__tree_subtree_end(t, pc);
        cs_send(s, r, w->kids[c], 0, cs_rng(from, (uint32_t)pc * m, (uint32_t)(ec - pc) * m), &dv,
                cs__dep1(got, &dv));
    }
    for (int j = 0; j < P; j++)
        have[j] = (j >= v && j < end) ? got : -1;
    for (int step = 0; step < P - 1; step++) {
        int js = ((v - step) % P + P) % P, jr = ((v - 1 - step) % P + P) % P;
        if (next != 0 && !(js >= next && js < nend))
            cs_send(s, r, cs__tree_rank(t, next), 1, cs_rng(from, (uint32_t)js * m, m), &dv,
                    cs__dep1(have[js], &dv));
        if (v != 0 && !(jr >= v && jr < end))
            have[jr] = cs_recv(s, r, cs__tree_rank(t, (v - 1 + P) % P), 1,
                               cs_rng(CS_BUF_OUT, (uint32_t)jr * m, m), NULL, 0);
    }
}

static int build(const cs_coll_desc_t *desc, cs_params_t *params, cs_sched_t **out, cs_err_t *err)
{
    return cs__tree_pieces_gen(desc, params, params_desc, emit_rank, NULL, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *params, double bytes,
                   const cs_ab_model_t *m)
{
    (void)params;
    double P = desc->nranks, L = cs__tree_ceil_log(2, desc->nranks);
    return (L + P - 1.0) * m->alpha + 2.0 * (P - 1.0) / P * bytes * m->beta;
}

const cs_algo_t cs__algo_broadcast_scatter_allgather = {
    .coll = CS_COLL_BROADCAST,
    .name = "scatter_allgather",
    .desc = "van de Geijn: binomial scatter of P pieces, then ring allgather",
    .params = params_desc,
    .build = build,
    .cost = cost,
};
