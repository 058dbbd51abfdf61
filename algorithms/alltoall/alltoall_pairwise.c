/*
 * alltoall_pairwise.c - pairwise-exchange all-to-all: P-1 steps, in step t
 * rank r sends its block for r+t to r+t and receives the block of r-t from
 * r-t (mod P), one exchange at a time or `inflight` of them.
 *
 * Method: block q of a rank's in goes to block r of rank q's out.  Step t's
 * send and receive wait for step t-inflight's, so each rank has `inflight`
 * exchanges in flight: 1 (the default) is the classic pairwise algorithm,
 * 0 (or P-1 and more) the linear "post everything" variant, every exchange
 * at once, as NCCL runs its all-to-all (grouped sends and receives to every
 * peer, spread over its channels).  Own block: a local copy.  In place, out
 * is first copied into a scratch buffer `src` that the sends read.
 *
 *   step t = 1, P = 4:   0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0   (block r+1 of each)
 *   step t = 2:          0 -> 2, 1 -> 3, 2 -> 0, 3 -> 1
 *
 * Cost (n = bytes of a rank's whole vector, w exchanges in flight):
 * T = ceil((P-1) / w) alpha + (P-1) n beta / P when a rank's messages share
 * one link; bandwidth-optimal, latency linear in P for w = 1.  Every P >= 1;
 * the chunk count is P x nchunks.
 */
#include <math.h>
#include <stdlib.h>

#include "common/cs_gen.h"
#include "common/cs_trees.h"
#include "cs_algo.h"

static const cs_param_desc_t params_desc[] = {
    CS_PARAM_INT_ROW("nchunks", "1", 1, 65536,
                     "chunks per block (the vector is P x nchunks chunks)"),
    CS_PARAM_INT_ROW("inflight", "1", 0, 1 << 30,
                     "exchanges a rank has in flight (step t waits for step t-inflight; "
                     "0 = all P-1 at once)"),
    CS_PARAM_END,
};

static void emit_rank(cs_sched_t *s, int P, int r, uint32_t k, int inplace, int w,
                      int64_t *prev)
{
    uint32_t dv[2];
    int64_t init;
    int src = cs__gen_a2a_start(s, r, (uint32_t)P, k, inplace, &init);
    /* prev[2 ((t - 1) % w)] and the slot after it: the send and receive of
     * step t - w (the same slot), the exchange that step t waits for */
    for (int t = 1; t < P; t++) {
        uint32_t to = (uint32_t)((r + t) % P), from = (uint32_t)((r - t + P) % P);
        uint32_t n = 0;
        int slot = 2 * ((t - 1) % w);
        if (t <= w)
            n = cs__dep1(init, &dv[0]);
        else {
            dv[n++] = (uint32_t)prev[slot];
            dv[n++] = (uint32_t)prev[slot + 1];
        }
        int64_t a = cs_send(s, r, (int)to, 0, cs_rng(src, to * k, k), dv, n);
        int64_t b = cs_recv(s, r, (int)from, 0, cs_rng(CS_BUF_OUT, from * k, k), dv, n);
        if (a < 0 || b < 0)
            return; /* sticky error */
        prev[slot] = a;
        prev[slot + 1] = b;
    }
}

/* Exchanges in flight: the `inflight` parameter, 0 and more than P-1
 * meaning P-1 (every one at once). */
static int window(long w, int P)
{
    return w <= 0 || w > P - 1 ? (P > 1 ? P - 1 : 1) : (int)w;
}

static int build(const cs_coll_desc_t *desc, cs_params_t *params, cs_sched_t **out, cs_err_t *err)
{
    uint32_t k;
    int st, P = desc->nranks;
    long w = 1;
    st = cs_params_int(params, params_desc, "inflight", &w, err);
    if (st != CS_OK)
        return st;
    cs_sched_t *s = cs__gen_blocked(desc, params, params_desc, " per block", &k, err, &st);
    if (s == NULL)
        return st;
    int win = window(w, P);
    int64_t *prev = calloc(2 * (size_t)win, sizeof *prev);
    if (prev == NULL) {
        cs_sched_destroy(s);
        cs_err_set(err, CS_ERR_NOMEM, "alltoall pairwise: out of memory (%d exchanges in flight)",
                   win);
        return CS_ERR_NOMEM;
    }
    for (int r = 0; r < P && cs_sched_status(s) == CS_OK; r++)
        emit_rank(s, P, r, (uint32_t)k, desc->inplace, win, prev);
    free(prev);
    return cs__gen_finish(s, st, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *params, double bytes,
                   const cs_ab_model_t *m)
{
    long w = 1;
    double P = desc->nranks;
    if (cs_params_int(params, params_desc, "inflight", &w, NULL) != CS_OK)
        w = 1;
    if (P < 2)
        return 0;
    double rounds = ceil((P - 1.0) / window(w, desc->nranks));
    return rounds * m->alpha + (P - 1.0) * bytes * m->beta / P;
}

const cs_algo_t cs__algo_alltoall_pairwise = {
    .coll = CS_COLL_ALLTOALL,
    .name = "pairwise",
    .desc = "pairwise exchange: P-1 steps, step t sends to r+t and receives from r-t "
             "(inflight=0: every step at once, as NCCL)",
    .params = params_desc,
    .build = build,
    .cost = cost,
};
