/*
 * cs_phase.h - reusable phase emitters: reduce-scatter and all-gather over
 * a GROUP of ranks and a chunk window, appended to a schedule.
 *
 * A group is an array of n global ranks (members 0..n-1) plus n + 1 global
 * chunk positions `cut`: member m's segment is [cut[m], cut[m+1]) and the
 * window is [cut[0], cut[n]).  Segments may be empty (both sides of every
 * message skip it identically).  Ring and direct phases also take segments
 * anywhere (`lo`, see cs__grp_t): the channels of a ring reduce-scatter or
 * all-gather own every rank's block piecewise.
 *
 *   reduce-scatter: every member starts with its whole window (in buffer
 *                   `src`) and ends with the sum over the group of its own
 *                   segment, in buffer `dst`.  `work` is where partial sums
 *                   are accumulated (it covers the window; it may equal dst
 *                   or src).  When src != work/dst the emitter copies before
 *                   the first reduce into a range, so `in` is never written.
 *   all-gather:     every member starts with its own segment in `src` and
 *                   ends with every segment of the window in `dst`.
 *
 * Buffer ids must be the same on every rank of the group (declare scratch
 * buffers in the same order everywhere).  Buffer windows are in global chunk
 * positions; the emitters translate to buffer-local offsets.
 *
 * Dependencies: a phase stream (cs__phase_t) holds, per global rank, the
 * FRONT: one step that everything emitted earlier on that rank precedes
 * (-1: none yet).  Every step an emitter adds depends, directly or through
 * its chains, on the front; when a member is done the emitter sets its front
 * to its last step, or to a nop joining its terminal steps.  Phases are
 * therefore ordered per rank; two streams over disjoint windows (separate
 * cs__phase_t) run concurrently.  Inside a phase, sends to one peer and
 * receives from one peer form chains (one stream per direction, as real
 * engines do), which also keeps the terminal set small.
 *
 * Channels: an emitter uses only channel `chan`; groups that share no pair of
 * ranks may use the same channel, concurrent streams must not.
 *
 * All emitters return CS_OK or the schedule's sticky error (CS_ERR_NOMEM
 * also for their own temporary arrays).  They never fail half-way silently:
 * a failed builder call is recorded in s->err and reported once.
 */
#ifndef CS_PHASE_H
#define CS_PHASE_H

#include <stdint.h>

#include "cs_algo.h"
#include "cs_sched.h"

typedef struct cs__phase {
    cs_sched_t *s;
    int64_t *front; /* nranks entries */
    cs_deps_t term; /* terminal steps of the member being emitted */
    int r0, r1;     /* emit the steps of ranks [r0, r1) only (cs__phase_split) */
} cs__phase_t;

int cs__phase_init(cs__phase_t *ph, cs_sched_t *s);
void cs__phase_fini(cs__phase_t *ph);
/* Close member r of the phase being emitted: its front becomes the one
 * step of ph->term, or a nop joining them (none: the front stays). */
void cs__phase_end(cs__phase_t *ph, int r);

/* Whether the stream emits rank r's steps. */
static inline int cs__phase_mine(const cs__phase_t *ph, int r)
{
    return r >= ph->r0 && r < ph->r1;
}

/* Run a generator's phases, emit(ph, arg), over ranges of ranks on several
 * threads, each into a schedule of its own, then move every rank's steps
 * into s.  A rank's steps depend only on its own earlier steps (the
 * emitters walk members one at a time), so the result is the schedule a
 * single stream over all ranks builds, step for step.  emit must do all of
 * its work through ph->s (buffers declared for every rank included) and
 * may be called once per thread; `steps` estimates the schedule's size:
 * one thread per 256 Ki steps, at most one per CPU, or CS_GEN_THREADS=N.
 * Returns CS_OK or the first error (also recorded in s). */
int cs__phase_split(cs_sched_t *s, uint64_t steps, int (*emit)(cs__phase_t *ph, void *arg),
                    void *arg);

typedef struct cs__grp {
    const int *ranks;    /* n global ranks */
    int n;
    const uint32_t *cut; /* n + 1 global chunk positions, non-decreasing */
    const uint32_t *lo;  /* NULL, or n positions: member m's segment is then
                            [lo[m], lo[m] + cut[m+1] - cut[m]) (ring and
                            direct only; segments need not be adjacent) */
} cs__grp_t;

typedef struct cs__bufs {
    int src;  /* RS: the window at start; AG: own segment at start */
    int work; /* RS: partial sums (covers the window); unused by AG */
    int dst;  /* RS: own segment at the end; AG: the whole window at the end */
} cs__bufs_t;

/* Most channels (concurrent copies of a collective over parts of the
 * vector) a generator's `channels` parameter accepts. */
#define CS__PHASE_MAX_CHANNELS 64

/* The phase algorithms a tier can run.  NVLS: reduce-scatter by switch
 * load-reduce, all-gather by switch multicast (cs_swphase.h); SHARP: an
 * in-switch allreduce of the tier's window, only as the outermost tier of a
 * multi-tier allreduce (its reduce-scatter is the allreduce, its all-gather
 * nothing). */
typedef enum {
    CS__PH_RING = 0,
    CS__PH_RHD,
    CS__PH_DIRECT,
    CS__PH_NVLS,
    CS__PH_SHARP,
    CS__PH_COUNT
} cs__ph_alg_t;
/* "ring", "rhd", "direct", "nvls", "sharp"; parse returns CS__PH_COUNT when
 * unknown. */
const char *cs__ph_alg_name(cs__ph_alg_t a);
cs__ph_alg_t cs__ph_alg_parse(const char *s, int len);

/* Ring: n-1 steps; step i sends segment m-i-1 to m+1 and reduces segment
 * m-i-2 from m-1 (so member m ends with segment m); each segment travels as
 * min(pieces, its chunks) messages so forwarding pipelines. */
int cs__phase_rs_ring(cs__phase_t *ph, const cs__grp_t *g, cs__bufs_t b, int chan,
                      uint32_t pieces);
/* Ring: step i sends segment m-i to m+1, receives segment m-i-1 from m-1. */
int cs__phase_ag_ring(cs__phase_t *ph, const cs__grp_t *g, cs__bufs_t b, int chan,
                      uint32_t pieces);
/* Recursive halving with the fold of extra members (cs_peers.h): 2i+1
 * sends its window to 2i, log2(n2) halving rounds over virtual members,
 * then 2i hands segment 2i+1 to 2i+1. */
int cs__phase_rs_halving(cs__phase_t *ph, const cs__grp_t *g, cs__bufs_t b, int chan);
/* Recursive doubling, the mirror image: 2i+1 sends its segment to 2i,
 * log2(n2) doubling rounds, 2i sends the window (less segment 2i+1) to
 * 2i+1. */
int cs__phase_ag_doubling(cs__phase_t *ph, const cs__grp_t *g, cs__bufs_t b, int chan);
/* Direct: member m sends segment j straight to member j (all j != m) and
 * reduces the n-1 contributions to its own segment in turn. */
int cs__phase_rs_direct(cs__phase_t *ph, const cs__grp_t *g, cs__bufs_t b, int chan);
/* Direct: member m sends its segment to every other member. */
int cs__phase_ag_direct(cs__phase_t *ph, const cs__grp_t *g, cs__bufs_t b, int chan);

/* Dispatch on a cs__ph_alg_t (pieces: ring and NVLS only; SHARP is refused
 * here, cs__phase_multitier runs it). */
int cs__phase_rs(cs__phase_t *ph, cs__ph_alg_t a, const cs__grp_t *g, cs__bufs_t b, int chan,
                 uint32_t pieces);
int cs__phase_ag(cs__phase_t *ph, cs__ph_alg_t a, const cs__grp_t *g, cs__bufs_t b, int chan,
                 uint32_t pieces);

/* Multi-tier allreduce over the window [base, base + len) (len a multiple
 * of P): reduce-scatter through the tiers order[0..ntiers) (tier t groups
 * the ranks that differ only in coordinate t of dims, innermost first), each
 * tier with algs[t], then all-gather back in reverse order.  `src` is
 * CS_BUF_IN for a fresh (not in place) input, CS_BUF_OUT otherwise; the
 * result is in out.  Uses channels chan0 .. chan0 + 2*ntiers - 1.  A SHARP
 * tier must come last in order[] (after it only tiers of size 1): its
 * groups allreduce their window in the switch (CS_ERR_UNSUPPORTED
 * otherwise). */
int cs__phase_multitier(cs__phase_t *ph, const int *dims, const int *order,
                        const cs__ph_alg_t *algs, int ntiers, uint32_t base, uint32_t len,
                        int src, int chan0, uint32_t pieces);

/* Step helpers shared by the generators.  `gpos` is a global chunk
 * position; the range is translated to the buffer's local offsets. */
cs_range_t cs__grng(const cs_sched_t *s, int rank, int buf, uint32_t gpos, uint32_t n);

/* A small dependency list (at most 4, negatives and duplicates dropped).
 * Inline: generators call it for every step, and built out of line its
 * result went through memory (a store-forwarding stall per step, 10 % of
 * generating a 1536-rank ring). */
typedef struct cs__dl {
    uint32_t v[4];
    uint32_t n;
} cs__dl_t;
static inline cs__dl_t cs__dl(int64_t a, int64_t b, int64_t c)
{
    cs__dl_t d = {{0}, 0};
    if (a >= 0)
        d.v[d.n++] = (uint32_t)a;
    if (b >= 0 && (d.n == 0 || d.v[0] != (uint32_t)b))
        d.v[d.n++] = (uint32_t)b;
    if (c >= 0) {
        int dup = 0;
        for (uint32_t j = 0; j < d.n; j++)
            dup |= d.v[j] == (uint32_t)c;
        if (!dup)
            d.v[d.n++] = (uint32_t)c;
    }
    return d;
}

/* Alpha-beta cost of one reduce-scatter (with_gamma = 1) or all-gather
 * phase of `a` on n ranks over a window of `bytes` bytes.  Switch phases
 * (alpha: the latency of one switch operation, beta: a member's link; the
 * switch reduces, no gamma): NVLS reduce-scatter alpha + bytes beta (every
 * member sends its whole window up, reads 1/n back), NVLS all-gather the
 * same (every member receives the whole window); SHARP: alpha + bytes beta
 * for the allreduce (the window up and down at once), 0 for its
 * all-gather. */
double cs__phase_cost(cs__ph_alg_t a, int n, double bytes, const cs_ab_model_t *m,
                      int with_gamma);

#endif /* CS_PHASE_H */
