/*
 * reduce_ring.c - reduce as a ring reduce-scatter followed by a binomial
 * gather to the root (Rabenseifner's reduce with a ring first phase; Ben-Nun
 * & Hoefler's "reduce-scatter + gather").
 *
 * Method: positions are ranks relative to the root; the vector is P pieces
 * of `nchunks` chunks.  Reduce-scatter (channel 0), P-1 steps: in step t
 * position v sends its partial sum of piece v-1-t to v+1 (from its input in
 * step 0) and combines piece v-2-t received from v-1 into out, so it ends
 * with the full sum of piece v in out.  Gather (channel 1): up the binomial
 * tree, position v receives the pieces [c, end(c)) of each child c into
 * out and sends [v, end(v)) to its parent; the root ends with every piece.
 *
 *   reduce-scatter step t:  v --partial piece (v-1-t)--> v+1   (all v at once)
 *   gather, P = 8:          1->0 [1], 3->2 [3], 2->0 [2,3], 4->0 [4..7] ...
 *
 * Cost (L = ceil(log2 P), n bytes):
 *     T = (P - 1 + L) alpha + 2 (P-1)/P n beta + (P-1)/P n gamma
 * bandwidth-efficient for large n, latency linear in P.  Every P >= 1,
 * every root, in place or not; non-root ranks use out as accumulator.
 */
#include "common/cs_gen.h"
#include "common/cs_trees.h"
#include "cs_algo.h"

static const cs_param_desc_t params_desc[] = {
    CS_PARAM_INT_ROW("nchunks", "1", 1, 65536,
                     "chunks per piece (the vector is P x nchunks chunks)"),
    CS_PARAM_END,
};

static uint32_t pmod(int a, int P)
{
    return (uint32_t)(((a % P) + P) % P);
}

/* Steps of one rank.  last[j]: the last step touching out's piece j. */
static void emit_rank(cs_sched_t *s, cs__tree_pieces_t *w, int r, uint32_t m, int src,
                      void *arg)
{
    cs_deps_t *d = arg; /* two dependency lists, reused from rank to rank */
    const cs__tree_t *t = &w->t;
    int64_t *last = w->step;
    int P = t->nranks, v = cs__tree_pos(t, r);
    int next = cs__tree_rank(t, (v + 1) % P), prev = cs__tree_rank(t, (v - 1 + P) % P);
    uint32_t dv;
    for (int j = 0; j < P; j++)
        last[j] = -1;
    if (P == 1) {
        if (src != CS_BUF_OUT)
            cs_copy(s, r, cs_rng(src, 0, m), cs_rng(CS_BUF_OUT, 0, m), NULL, 0);
        return;
    }
    /* Reduce-scatter: out starts as a copy of the input, except piece v-1,
     * which is only ever sent (from the input). */
    if (src != CS_BUF_OUT)
        for (int j = 0; j < P; j++)
            if ((uint32_t)j != pmod(v - 1, P))
                last[j] = cs_copy(s, r, cs_rng(src, (uint32_t)j * m, m),
                                  cs_rng(CS_BUF_OUT, (uint32_t)j * m, m), NULL, 0);
    for (int step = 0; step < P - 1; step++) {
        uint32_t js = pmod(v - 1 - step, P), jr = pmod(v - 2 - step, P);
        int64_t x = cs_send(s, r, next, 0, cs_rng(step == 0 ? src : CS_BUF_OUT, js * m, m), &dv,
                            cs__dep1(last[js], &dv));
        if (step > 0 || src == CS_BUF_OUT)
            last[js] = x;
        last[jr] =
            cs_rrecv(s, r, prev, 0, cs_rng(CS_BUF_OUT, jr * m, m), &dv, cs__dep1(last[jr], &dv));
    }
    /* Gather up the binomial tree, smallest subtree first.  d[0]: what the
     * send to the parent waits for; d[1]: one receive's dependencies (the
     * steps that touched its pieces). */
    int nk = cs__tree_children(t, r, w->kids, w->cap);
    cs_deps_clear(&d[0]);
    cs_deps_push(&d[0], last[v]);
    for (int c = nk - 1; c >= 0; c--) {
        int pc = cs__tree_pos(t, w->kids[c]), ec = cs__tree_subtree_end(t, pc);
        cs_deps_clear(&d[1]);
        for (int j = pc; j < ec; j++)
            cs_deps_push(&d[1], last[j]);
        cs_deps_push(&d[0], cs_recv(s, r, w->kids[c], 1,
                                    cs_rng(CS_BUF_OUT, (uint32_t)pc * m, (uint32_t)(ec - pc) * m),
                                    d[1].v, d[1].n));
    }
    if (v != 0) {
        int end = cs__tree_subtree_end(t, v);
        cs_send(s, r, cs__tree_parent(t, r), 1,
                cs_rng(CS_BUF_OUT, (uint32_t)v * m, (uint32_t)(end - v) * m), d[0].v, d[0].n);
    }
}

static int build(const cs_coll_desc_t *desc, cs_params_t *params, cs_sched_t **out, cs_err_t *err)
{
    cs_deps_t d[2] = {{0}, {0}};
    int st = cs__tree_pieces_gen(desc, params, params_desc, emit_rank, d, out, err);
    cs_deps_fini(&d[0]);
    cs_deps_fini(&d[1]);
    return st;
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *params, double bytes,
                   const cs_ab_model_t *m)
{
    (void)params;
    double P = desc->nranks, L = cs__tree_ceil_log(2, desc->nranks), f = (P - 1.0) / P;
    return (P - 1.0 + L) * m->alpha + 2.0 * f * bytes * m->beta + f * bytes * m->gamma;
}

const cs_algo_t cs__algo_reduce_ring = {
    .coll = CS_COLL_REDUCE,
    .name = "ring",
    .desc = "ring reduce-scatter, then binomial gather of the pieces to the root",
    .params = params_desc,
    .build = build,
    .cost = cost,
};
