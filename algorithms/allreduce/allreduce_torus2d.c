/*
 * allreduce_torus2d.c - 2D-torus allreduce (Mikami et al.; TPU pods): the
 * ranks form an X x Y grid (rank = x + X*y) with a ring along every row and
 * every column.  The vector is split in two halves that run at the same
 * time in opposite orders, so both dimensions' links carry data at once:
 *
 *   half 0: RS along X (rows), RS along Y (columns), AG along Y, AG along X
 *   half 1: RS along Y,        RS along X,           AG along X, AG along Y
 *
 *    X = 3, Y = 2:      r0 - r1 - r2      rows:    rings of 3
 *                        |    |    |
 *                       r3 - r4 - r5      columns: rings of 2
 *
 * The vector is C = 2 * P * nchunks chunks; each half is a two-tier
 * hierarchical allreduce (cs__phase_multitier) on its own dependency
 * stream and its own channels.
 * Cost: each half moves n/2 through RS_X(n/2) + RS_Y(n/2X) + AG_Y + AG_X
 * with ring costs.  The halves overlap, so the latency is 2(X-1 + Y-1)
 * alpha; with one port per rank (the alpha-beta model) their bytes add up:
 * 2 (P-1)/P n beta + (P-1)/P n gamma, like the ring.  On a real torus the X
 * and Y links work at once, which is the point: up to twice the ring's
 * bandwidth, a gain the single-link model cannot show.
 * Supports every P (a prime P degenerates to 1 x P, i.e. two concurrent
 * rings) and in-place; dims must multiply to P.
 */
#include "common/cs_gen.h"
#include "common/cs_peers.h"
#include "common/cs_phase.h"

static const cs_param_desc_t params[] = {
    CS_PARAM_DIMS_ROW("dims", "auto", 2, 2,
                      "grid X x Y with X*Y = P (default: the most square factorization)"),
    CS_PARAM_INT_ROW("nchunks", "1", 1, 65536,
                     "chunks per rank segment of each half (ring pipelining)"),
    CS_PARAM_END,
};

static int parse(const cs_coll_desc_t *desc, cs_params_t *p, int dims[2], uint32_t *nc,
                 cs_err_t *err)
{
    int n = cs_params_dims(p, params, "dims", dims, 2, err);
    if (n < 0)
        return n;
    if (n == 0)
        cs__factor_square(desc->nranks, &dims[0], &dims[1]);
    else if ((long)dims[0] * dims[1] != desc->nranks)
        return cs_err_set(err, CS_ERR_INVAL,
                          "parameter dims: expected XxY with X*Y = %d ranks, found %dx%d",
                          desc->nranks, dims[0], dims[1]);
    return cs__gen_nchunks(p, params, nc, err);
}

static int build(const cs_coll_desc_t *desc, cs_params_t *p, cs_sched_t **out, cs_err_t *err)
{
    int dims[2];
    uint32_t nc = 1;
    int st = parse(desc, p, dims, &nc, err);
    if (st != CS_OK)
        return st;
    uint64_t half = (uint64_t)desc->nranks * nc;
    if (2 * half > UINT32_MAX / 2)
        return cs_err_set(err, CS_ERR_RANGE, "%d ranks x %u chunks is too many chunks",
                          desc->nranks, nc);
    cs_sched_t *s = cs__gen_create(desc, (uint32_t)(2 * half), err, &st);
    if (s == NULL)
        return st;
    static const int orders[2][2] = {{0, 1}, {1, 0}};
    const cs__ph_alg_t algs[2] = {CS__PH_RING, CS__PH_RING};
    int src = desc->inplace ? CS_BUF_OUT : CS_BUF_IN;
    for (int h = 0; h < 2 && st == CS_OK; h++) {
        cs__phase_t ph; /* one dependency stream per half */
        st = cs__phase_init(&ph, s);
        if (st == CS_OK)
            st = cs__phase_multitier(&ph, dims, orders[h], algs, 2, (uint32_t)(h * half),
                                     (uint32_t)half, src, 4 * h, nc);
        cs__phase_fini(&ph);
    }
    return cs__gen_finish(s, st, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *p, double bytes,
                   const cs_ab_model_t *m)
{
    int d[2];
    uint32_t nc = 1;
    cs_err_t e = {0};
    if (parse(desc, p, d, &nc, &e) != CS_OK)
        return -1.0;
    /* latency: the halves overlap (max); bandwidth: one port per rank in the
     * alpha-beta model, so the two halves' bytes add up */
    cs_ab_model_t lat = {m->alpha, 0, 0}, bw = {0, m->beta, m->gamma};
    double h = bytes / 2, tl[2], tb = 0;
    for (int o = 0; o < 2; o++) {
        int a = d[o], b = d[1 - o];
        tl[o] = 2 * (cs__phase_cost(CS__PH_RING, a, h, &lat, 0) +
                     cs__phase_cost(CS__PH_RING, b, h / a, &lat, 0));
        tb += cs__phase_cost(CS__PH_RING, a, h, &bw, 1) +
              cs__phase_cost(CS__PH_RING, a, h, &bw, 0) +
              cs__phase_cost(CS__PH_RING, b, h / a, &bw, 1) +
              cs__phase_cost(CS__PH_RING, b, h / a, &bw, 0);
    }
    return (tl[0] > tl[1] ? tl[0] : tl[1]) + tb;
}

const cs_algo_t cs__algo_allreduce_torus2d = {
    .coll = CS_COLL_ALLREDUCE,
    .name = "torus2d",
    .desc = "2D torus: two halves, rows-then-columns and columns-then-rows at once",
    .params = params,
    .build = build,
    .cost = cost,
};
