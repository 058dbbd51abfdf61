/*
 * alltoall_pairwise.c - pairwise-exchange all-to-all: P-1 steps, in step t
 * rank r sends its block for r+t to r+t and receives the block of r-t from
 * r-t (mod P), one exchange at a time.
 *
 * Method: block q of a rank's in goes to block r of rank q's out.  Step t's
 * send and receive wait for step t-1's, so each rank has one exchange in
 * flight (the classic pairwise algorithm; drop the order and it becomes the
 * linear "post everything" variant).  Own block: a local copy.  In place,
 * out is first copied into a scratch buffer `src` that the sends read.
 *
 *   step t = 1, P = 4:   0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0   (block r+1 of each)
 *   step t = 2:          0 -> 2, 1 -> 3, 2 -> 0, 3 -> 1
 *
 * Cost (n = bytes of a rank's whole vector):  T = (P-1) (alpha + n beta / P),
 * bandwidth-optimal, latency linear in P.  Every P >= 1; the chunk count is
 * P x nchunks.
 */
#include "common/cs_gen.h"
#include "common/cs_trees.h"
#include "cs_algo.h"

static const cs_param_desc_t params_desc[] = {
    CS_PARAM_INT_ROW("nchunks", "1", 1, 65536,
                     "chunks per block (the vector is P x nchunks chunks)"),
    CS_PARAM_END,
};

static void emit_rank(cs_sched_t *s, int P, int r, uint32_t k, int inplace)
{
    uint32_t dv[2];
    int64_t init, prev_s = -1, prev_r = -1;
    int src = cs__gen_a2a_start(s, r, (uint32_t)P, k, inplace, &init);
    for (int t = 1; t < P; t++) {
        uint32_t to = (uint32_t)((r + t) % P), from = (uint32_t)((r - t + P) % P);
        uint32_t n = 0;
        if (t == 1)
            n = cs__dep1(init, &dv[0]);
        else {
            dv[n++] = (uint32_t)prev_s;
            dv[n++] = (uint32_t)prev_r;
        }
        int64_t a = cs_send(s, r, (int)to, 0, cs_rng(src, to * k, k), dv, n);
        int64_t b = cs_recv(s, r, (int)from, 0, cs_rng(CS_BUF_OUT, from * k, k), dv, n);
        if (a < 0 || b < 0)
            return; /* sticky error */
        prev_s = a;
        prev_r = b;
    }
}

static int build(const cs_coll_desc_t *desc, cs_params_t *params, cs_sched_t **out, cs_err_t *err)
{
    uint32_t k;
    int st, P = desc->nranks;
    cs_sched_t *s = cs__gen_blocked(desc, params, params_desc, " per block", &k, err, &st);
    if (s == NULL)
        return st;
    for (int r = 0; r < P && cs_sched_status(s) == CS_OK; r++)
        emit_rank(s, P, r, (uint32_t)k, desc->inplace);
    return cs__gen_finish(s, st, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *params, double bytes,
                   const cs_ab_model_t *m)
{
    (void)params;
    double P = desc->nranks;
    return (P - 1.0) * (m->alpha + bytes * m->beta / P);
}

const cs_algo_t cs__algo_alltoall_pairwise = {
    .coll = CS_COLL_ALLTOALL,
    .name = "pairwise",
    .desc = "pairwise exchange: P-1 steps, step t sends to r+t and receives from r-t",
    .params = params_desc,
    .build = build,
    .cost = cost,
};
