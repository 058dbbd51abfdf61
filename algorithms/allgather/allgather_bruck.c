/*
 * allgather_bruck.c - Bruck all-gather, for every P.
 *
 * In round k (distance d = 1, 2, 4, ..) rank r sends the blocks it holds,
 * r, r+1, .. r+c-1 (mod P, c = min(d, P-d)), to rank r-d and receives
 * blocks r+d .. r+d+c-1 from rank r+d, so it holds 2d blocks after the
 * round; ceil(log2 P) rounds in all.  Blocks are received straight into
 * their place in out, so the final rotation of the textbook algorithm is
 * not needed; a run that wraps past block P-1 travels as two messages.
 *
 *    round d = 2, P = 5, rank 0:  sends blk 0,1 --> r3;  receives blk 2,3 <-- r2
 *
 * Cost: ceil(log2 P) alpha + (P-1)/P n beta.
 * Supports every P >= 1 and in-place.
 */
#include "common/cs_gen.h"
#include "common/cs_peers.h"
#include "common/cs_phase.h"

static const cs_param_desc_t params[] = {
    CS_PARAM_INT_ROW("nchunks", "1", 1, 65536, "chunks per block"),
    CS_PARAM_END,
};

/* Blocks [b0, b0 + cnt) mod P as at most two contiguous runs. */
static int runs(int P, int b0, int cnt, int lo[2], int n[2])
{
    if (b0 + cnt <= P) {
        lo[0] = b0;
        n[0] = cnt;
        return 1;
    }
    lo[0] = b0;
    n[0] = P - b0;
    lo[1] = 0;
    n[1] = b0 + cnt - P;
    return 2;
}

static int build(const cs_coll_desc_t *desc, cs_params_t *p, cs_sched_t **out, cs_err_t *err)
{
    uint32_t k;
    int st, P = desc->nranks, src = desc->inplace ? CS_BUF_OUT : CS_BUF_IN;
    cs_sched_t *s = cs__gen_blocked(desc, p, params, "", &k, err, &st);
    if (s == NULL)
        return st;
    for (int r = 0; r < P; r++) {
        int64_t own = -1, last_recv = -1;
        int lo[2], n[2];
        if (src != CS_BUF_OUT)
            own = cs_copy(s, r, cs__grng(s, r, src, (uint32_t)r * k, k),
                          cs_rng(CS_BUF_OUT, (uint32_t)r * k, k), NULL, 0);
        for (int d = 1; d < P; d *= 2) {
            int c = d < P - d ? d : P - d;
            int to = cs__ring_add(r, -d, P), from = cs__ring_add(r, d, P);
            int nr = runs(P, r, c, lo, n);
            for (int i = 0; i < nr; i++) {
                int first = d == 1; /* only the own block, still in src */
                cs__dl_t dl = first ? cs__dl(-1, -1, -1) : cs__dl(own, last_recv, -1);
                cs_send(s, r, to, 0, cs__grng(s, r, first ? src : CS_BUF_OUT,
                                              (uint32_t)lo[i] * k, (uint32_t)n[i] * k),
                        dl.v, dl.n);
            }
            nr = runs(P, from, c, lo, n);
            for (int i = 0; i < nr; i++) {
                cs__dl_t dl = cs__dl(last_recv, -1, -1);
                last_recv = cs_recv(s, r, from, 0,
                                    cs_rng(CS_BUF_OUT, (uint32_t)lo[i] * k, (uint32_t)n[i] * k),
                                    dl.v, dl.n);
            }
        }
    }
    return cs__gen_finish(s, CS_OK, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *p, double bytes,
                   const cs_ab_model_t *m)
{
    (void)p;
    int P = desc->nranks;
    return cs__log2_ceil((uint64_t)P) * m->alpha + (double)(P - 1) / P * bytes * m->beta;
}

const cs_algo_t cs__algo_allgather_bruck = {
    .coll = CS_COLL_ALLGATHER,
    .name = "bruck",
    .desc = "Bruck all-gather: ceil(log2 P) rounds for any P",
    .params = params,
    .build = build,
    .cost = cost,
};
