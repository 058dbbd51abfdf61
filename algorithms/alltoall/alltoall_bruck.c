/*
 * alltoall_bruck.c - Bruck's all-to-all: ceil(log2 P) rounds of one message
 * each, for every P (not only powers of two).
 *
 * Method: a rank's block for rank r+i is "at distance i".  In round j
 * (2^j < P) every rank sends all blocks whose distance has bit j set to
 * r + 2^j and receives the same distances from r - 2^j; after the rounds a
 * block at distance i has moved i ranks forward and sits at its
 * destination.  A round's blocks are not contiguous, so they are packed
 * (copies into scratch `spack`), sent as one message into `rpack`, and
 * unpacked: into out block r-i when bit j is the highest bit of i (the
 * block has arrived), else into scratch `hold` block i for a later round.
 * Blocks that have not moved yet are read straight from in (no initial
 * rotation); the own block is one local copy.  In place, out is first
 * copied into scratch `src`.
 *
 *   round j = 0, P = 5: distances {1,3} go r -> r+1
 *   round j = 1:        distances {2,3} go r -> r+2
 *   round j = 2:        distance  {4}   goes r -> r+4
 *
 * Cost (L = ceil(log2 P), n = bytes of a rank's whole vector; each round
 * moves about half the blocks):  T ~ L (alpha + n beta / 2)  plus the local
 * pack/unpack copies.  Latency-optimal, for small blocks; pairwise is better
 * for large ones.  Every P >= 1; the chunk count is P x nchunks.
 */
#include "common/cs_trees.h"
#include "cs_algo.h"

#include <stdlib.h>

static const cs_param_desc_t params_desc[] = {
    {"nchunks", "1", "chunks per block (the vector is P x nchunks chunks)"},
    {NULL, NULL, NULL},
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
    int *lbuf;      /* per distance: buffer holding the block now */
    uint32_t *loff; /* ... and its chunk offset there */
    int64_t *last;  /* ... and the step that wrote it (-1: the input) */
    int64_t *pk;    /* per slot of the current round: its pack copy */
    cs_deps_t d[2]; /* previous round's unpacks; this round's packs */
} bruck_ws_t;

static void emit_rank(cs_sched_t *s, int P, int r, uint32_t k, int inplace, uint32_t maxnb,
                      bruck_ws_t *w)
{
    uint32_t C = (uint32_t)P * k, dv[2];
    int src = CS_BUF_IN;
    int64_t init = -1, prev_send = -1;
    if (inplace) {
        src = cs_sched_add_buffer(s, r, "src", 0, C);
        init = cs_copy(s, r, cs_rng(CS_BUF_OUT, 0, C), cs_rng(src, 0, C), NULL, 0);
    } else {
        cs_copy(s, r, cs_rng(CS_BUF_IN, (uint32_t)r * k, k), cs_rng(CS_BUF_OUT, (uint32_t)r * k, k),
                NULL, 0);
    }
    if (P == 1)
        return;
    int spack = cs_sched_add_buffer(s, r, "spack", 0, maxnb * k);
    int rpack = cs_sched_add_buffer(s, r, "rpack", 0, maxnb * k);
    int hold = P > 2 ? cs_sched_add_buffer(s, r, "hold", 0, C) : -1;
    for (int i = 1; i < P; i++) {
        w->lbuf[i] = src;
        w->loff[i] = (uint32_t)((r + i) % P) * k;
        w->last[i] = init;
    }
    cs_deps_clear(&w->d[0]);
    for (int bit = 1; bit < P && cs_sched_status(s) == CS_OK; bit <<= 1) {
        uint32_t slot = 0;
        cs_deps_clear(&w->d[1]);
        for (int i = 1; i < P; i++) {
            if (!(i & bit))
                continue;
            uint32_t n = cs_dep1(w->last[i], &dv[0]);
            n += cs_dep1(prev_send, &dv[n]);
            w->pk[slot] =
                cs_copy(s, r, cs_rng(w->lbuf[i], w->loff[i], k), cs_rng(spack, slot * k, k), dv, n);
            cs_deps_push(&w->d[1], w->pk[slot]);
            slot++;
        }
        prev_send =
            cs_send(s, r, (r + bit) % P, 0, cs_rng(spack, 0, slot * k), w->d[1].v, w->d[1].n);
        int64_t rv =
            cs_recv(s, r, (r - bit + P) % P, 0, cs_rng(rpack, 0, slot * k), w->d[0].v, w->d[0].n);
        cs_deps_clear(&w->d[0]);
        slot = 0;
        for (int i = 1; i < P; i++) {
            if (!(i & bit))
                continue;
            int arrived = (i & ~(2 * bit - 1)) == 0;
            int to = arrived ? CS_BUF_OUT : hold;
            uint32_t off = arrived ? (uint32_t)((r - i + P) % P) * k : (uint32_t)i * k;
            uint32_t n = cs_dep1(rv, &dv[0]);
            n += cs_dep1(w->pk[slot], &dv[n]);
            int64_t u = cs_copy(s, r, cs_rng(rpack, slot * k, k), cs_rng(to, off, k), dv, n);
            cs_deps_push(&w->d[0], u);
            w->lbuf[i] = to;
            w->loff[i] = off;
            w->last[i] = u;
            slot++;
        }
    }
}

static int build(const cs_coll_desc_t *desc, cs_params_t *params, cs_sched_t **out, cs_err_t *err)
{
    long k;
    int st = cs_params_get_int(params, "nchunks", 1, 1, 65536, &k, err);
    if (st != CS_OK)
        return st;
    int P = desc->nranks;
    if ((uint64_t)P * (uint64_t)k > UINT32_MAX / 2)
        return cs_err_set(err, CS_ERR_RANGE, "%d ranks x %ld chunks per block is too many chunks",
                          P, k);
    cs_sched_t *s = cs_tree_gen_create(desc, (uint32_t)(P * k), err, &st);
    if (s == NULL)
        return st;
    uint32_t maxnb = 1;
    for (int bit = 1; bit < P; bit <<= 1)
        if (round_blocks(P, bit) > maxnb)
            maxnb = round_blocks(P, bit);
    bruck_ws_t w = {0};
    w.lbuf = malloc((size_t)P * sizeof(*w.lbuf));
    w.loff = malloc((size_t)P * sizeof(*w.loff));
    w.last = malloc((size_t)P * sizeof(*w.last));
    w.pk = malloc((size_t)maxnb * sizeof(*w.pk));
    if (w.lbuf == NULL || w.loff == NULL || w.last == NULL || w.pk == NULL)
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory for %d ranks", P);
    for (int r = 0; r < P && st == CS_OK && cs_sched_status(s) == CS_OK; r++)
        emit_rank(s, P, r, (uint32_t)k, desc->inplace, maxnb, &w);
    cs_deps_fini(&w.d[0]);
    cs_deps_fini(&w.d[1]);
    free(w.pk);
    free(w.last);
    free(w.loff);
    free(w.lbuf);
    return cs_tree_gen_finish(s, st, out, err);
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
