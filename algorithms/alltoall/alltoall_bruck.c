/*
 * alltoall_bruck.c - Bruck's all-to-all: ceil(log2 P) rounds of one message
 * each, for every P (not only powers of two).
 *
 * Method: a rank's block for rank r+i is "at distance i".  In round j
 * (b = 2^j < P) every rank sends all blocks whose distance has bit j set to
 * r + b and receives the same distances from r - b; after the rounds a
 * block at distance i has moved i ranks forward and sits at its
 * destination.  Where a block of distance i is parked on rank r between
 * rounds, and where it finally lands, is the same place: out block r-i (a
 * parked block always leaves before the final one arrives).  The distances
 * of a round form runs [a, a+b) with the same high bits; listing a run in
 * decreasing distance makes its out blocks r-i contiguous, so a round is
 * packed with one copy per run (plus one for distance a, still in `in`,
 * and one more where a range wraps around P) into scratch `spack`, sent as
 * one message into `rpack` and unpacked with one copy per run into out.
 * The own block is one local copy.  In place, out is first copied into
 * scratch `src`, which plays the role of in.
 *
 *   P = 5, rank r:  round 0: distances {1,3} -> r+1   (runs [1,2) [3,4))
 *                   round 1: distances {3,2} -> r+2   (run [2,4))
 *                   round 2: distance  {4}   -> r+4   (run [4,5))
 *
 * Cost (L = ceil(log2 P), n = bytes of a rank's whole vector; each round
 * moves about half the blocks):  T ~ L (alpha + n beta / 2)  plus the local
 * pack/unpack copies (about 2n per round).  Latency-optimal, for small
 * blocks; pairwise is better for large ones.  About 3P local steps per rank
 * (round 0 touches every other block).  Every P >= 1; the chunk count is
 * P x nchunks.
 */
#include "common/cs_gen.h"
#include "common/cs_trees.h"
#include "cs_algo.h"

#include <stdlib.h>

static const cs_param_desc_t params_desc[] = {
    CS_PARAM_INT_ROW("nchunks", "1", 1, 65536,
                     "chunks per block (the vector is P x nchunks chunks)"),
    CS_PARAM_END,
};

/* Number of distances in [1, P) with bit `bit` set. */
static uint32_t round_blocks(int P, int bit)
{
    uint32_t n = 0;
    for (int i = 1; i < P; i++)
        n += (i & bit) != 0;
    return n;
}

typedef struct bruck_ws {
    int64_t *last;  /* per out block: the step that last wrote it (-1: none) */
    uint32_t *pk;   /* this round's pack copies */
    uint32_t *up;   /* this round's unpack copies (the next receive waits for them) */
    uint32_t *dd;   /* dependency list under construction */
    uint32_t *runs; /* index in pk where each run's packs start */
} bruck_ws_t;

/* Copy `len` blocks between out blocks [q, q+len) (mod P) and pack slots
 * [slot, slot+len), towards out when to_out; step ids are appended to
 * list[*n]. */
static void out_copy(cs_sched_t *s, int r, uint32_t P, uint32_t k, int pack, uint32_t slot,
                     uint32_t q, uint32_t len, int to_out, const uint32_t *deps, uint32_t nd,
                     uint32_t *list, uint32_t *n)
{
    while (len > 0) {
        uint32_t piece = q + len > P ? P - q : len;
        cs_range_t o = cs_rng(CS_BUF_OUT, q * k, piece * k), pk = cs_rng(pack, slot * k, piece * k);
        int64_t x = to_out ? cs_copy(s, r, pk, o, deps, nd) : cs_copy(s, r, o, pk, deps, nd);
        if (x >= 0)
            list[(*n)++] = (uint32_t)x;
        slot += piece;
        q = (q + piece) % P;
        len -= piece;
    }
}

static void emit_rank(cs_sched_t *s, int P, int r, uint32_t k, int inplace, uint32_t maxnb,
                      bruck_ws_t *w)
{
    uint32_t UP = (uint32_t)P, dv[2], nup = 0;
    int64_t init, prev_send = -1;
    int src = cs__gen_a2a_start(s, r, (uint32_t)P, k, inplace, &init);
    if (P == 1)
        return;
    int spack = cs_sched_add_buffer(s, r, "spack", 0, maxnb * k);
    int rpack = cs_sched_add_buffer(s, r, "rpack", 0, maxnb * k);
    for (int q = 0; q < P; q++)
        w->last[q] = init; /* in place, out is read by the copy into src */
    for (int b = 1; b < P && cs_sched_status(s) == CS_OK; b <<= 1) {
        uint32_t slot = 0, npk = 0, nrun = 0;
        /* Pack: run [a, a+len) fills slots in decreasing distance. */
        for (int a = b; a < P; a += 2 * b) {
            uint32_t len = (uint32_t)((a + b < P ? a + b : P) - a);
            uint32_t q0 = (uint32_t)(((r - (a + (int)len - 1)) % P + P) % P);
            w->runs[nrun++] = npk;
            if (len > 1) {
                /* distances a+1 .. a+len-1 moved before: parked in out */
                uint32_t nd = 0;
                for (uint32_t j = 0; j < len - 1; j++) {
                    int64_t x = w->last[(q0 + j) % UP];
                    if (x >= 0 && (nd == 0 || w->dd[nd - 1] != (uint32_t)x))
                        w->dd[nd++] = (uint32_t)x;
                }
                nd += cs__dep1(prev_send, &w->dd[nd]);
                out_copy(s, r, UP, k, spack, slot, q0, len - 1, 0, w->dd, nd, w->pk, &npk);
            }
            /* distance a has not moved yet: still in the input */
            uint32_t nd = cs__dep1(prev_send, dv);
            nd += cs__dep1(init, &dv[nd]);
            int64_t x = cs_copy(s, r, cs_rng(src, (uint32_t)((r + a) % P) * k, k),
                                cs_rng(spack, (slot + len - 1) * k, k), dv, nd);
            if (x >= 0)
                w->pk[npk++] = (uint32_t)x;
            slot += len;
        }
        w->runs[nrun] = npk;
        prev_send = cs_send(s, r, (r + b) % P, 0, cs_rng(spack, 0, slot * k), w->pk, npk);
        int64_t rv = cs_recv(s, r, (r - b + P) % P, 0, cs_rng(rpack, 0, slot * k), w->up, nup);
        /* Unpack each run into out blocks r-i, after this round's packs of
         * the same run (they read those blocks). */
        nup = 0;
        slot = 0;
        nrun = 0;
        for (int a = b; a < P; a += 2 * b, nrun++) {
            uint32_t len = (uint32_t)((a + b < P ? a + b : P) - a);
            uint32_t q0 = (uint32_t)(((r - (a + (int)len - 1)) % P + P) % P), nd = 0, first = nup;
            nd += cs__dep1(rv, &w->dd[nd]);
            for (uint32_t j = w->runs[nrun]; j < w->runs[nrun + 1]; j++)
                w->dd[nd++] = w->pk[j];
            out_copy(s, r, UP, k, rpack, slot, q0, len, 1, w->dd, nd, w->up, &nup);
            /* out_copy made one copy, or two when the range wrapped */
            for (uint32_t j = 0; j < len && nup > first; j++) {
                uint32_t which = (q0 + j >= UP && nup - first == 2) ? 1 : 0;
                w->last[(q0 + j) % UP] = w->up[first + which];
            }
            slot += len;
        }
    }
}

static int build(const cs_coll_desc_t *desc, cs_params_t *params, cs_sched_t **out, cs_err_t *err)
{
    uint32_t k;
    int st, P = desc->nranks;
    cs_sched_t *s = cs__gen_blocked(desc, params, params_desc, " per block", &k, err, &st);
    if (s == NULL)
        return st;
    uint32_t maxnb = 1;
    for (int bit = 1; bit < P; bit <<= 1)
        if (round_blocks(P, bit) > maxnb)
            maxnb = round_blocks(P, bit);
    bruck_ws_t w = {0};
    size_t cap = 3 * (size_t)P + 8;
    w.last = malloc((size_t)P * sizeof(*w.last));
    w.pk = malloc(cap * sizeof(*w.pk));
    w.up = malloc(cap * sizeof(*w.up));
    w.dd = malloc(cap * sizeof(*w.dd));
    w.runs = malloc(cap * sizeof(*w.runs));
    if (w.last == NULL || w.pk == NULL || w.up == NULL || w.dd == NULL || w.runs == NULL)
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory for %d ranks", P);
    for (int r = 0; r < P && st == CS_OK && cs_sched_status(s) == CS_OK; r++)
        emit_rank(s, P, r, (uint32_t)k, desc->inplace, maxnb, &w);
    free(w.runs);
    free(w.dd);
    free(w.up);
    free(w.pk);
    free(w.last);
    return cs__gen_finish(s, st, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *params, double bytes,
                   const cs_ab_model_t *m)
{
    (void)params;
    int P = desc->nranks;
    double t = 0.0;
    for (int bit = 1; bit < P; bit <<= 1)
        t += m->alpha + bytes * m->beta * (double)round_blocks(P, bit) / P;
    return t;
}

const cs_algo_t cs__algo_alltoall_bruck = {
    .coll = CS_COLL_ALLTOALL,
    .name = "bruck",
    .desc = "Bruck: ceil(log2 P) rounds, blocks packed by distance bit, any P",
    .params = params_desc,
    .build = build,
    .cost = cost,
};
