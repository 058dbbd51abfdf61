/*
 * cs_plan.h - a schedule compiled once: the cross-rank structure every
 * backend needs (the verifier's graph, the CPU and GPU engines, the
 * simulator's compiler), worked out in one place.
 *
 * Local part, per rank (local step indices, a function of that rank's
 * steps alone, so an engine builds only its own rank, cs_plan_rank_build):
 *   - successors: the reverse of the dependency lists, in CSR form; the
 *     successors of a step are listed in increasing index order, and a
 *     dependency listed twice gives the successor twice;
 *   - channel queues: a queue is "the sends of this rank to `peer` on
 *     `chan`" or "its receives (recv and rrecv together) from `peer` on
 *     `chan`"; its steps in schedule order (the order engines post them
 *     in, cs_sched.h) are linked by chan_next.  Queues are numbered in the
 *     order of their first step.  A rank's switch steps on (group g,
 *     channel c) form a queue too (switch = 1, peer = g).
 *
 * Global part (cs_plan_init, over all ranks; global step id of step i of
 * rank r is base[r] + i):
 *   - partners: the k-th send of a send queue (a -> b, c) with the k-th
 *     receive of the receive queue (b <- a, c); the excess of either queue
 *     is unmatched;
 *   - switch operations: the k-th switch steps of every member's queue on
 *     (g, c) form one operation, led by the step of g's first member; every
 *     member's step has the leader as partner, and swnext links the members'
 *     steps in group order.  When a member has fewer steps on (g, c) than
 *     another, the excess of every member is unmatched;
 *   - an order: a topological order (Kahn) of events under each step's own
 *     dependencies, channel FIFO order (an element of a queue after its
 *     predecessor) and rendezvous (a matched pair is ONE event, ready when
 *     both halves are; a switch operation is ONE event, ready when all its
 *     members' steps are).  Steps that never become ready (a cycle: deadlock;
 *     or unmatched) are counted in nstuck and are absent from order[].
 *     The order is deterministic (a function of the schedule alone) and
 *     otherwise unspecified: ranks' ready lists are drained one rank at a
 *     time, so it runs through one rank's steps in long stretches (cache
 *     friendly at 10^7 steps).
 *
 * Layout (cs_plan_layout): the bytes of a rank's buffers and the staging
 * slot of each rrecv (the engines receive a recv-reduce there, then reduce
 * it into its destination), for a maximum element count.
 *
 * Cost: O(N) time for N steps (one open-addressing table per rank finds
 * the queues; receive queues are sorted per rank for the matching, which is
 * O(queues log queues)), arrays allocated once per plan (no per-step
 * allocation).
 */
#ifndef CS_PLAN_H
#define CS_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "cs_sched.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CS_PLAN_NONE UINT32_MAX    /* no step (local index) */
#define CS_PLAN_NOGID UINT64_MAX   /* no step (global id) */

/* One channel queue of a rank. */
typedef struct cs_plan_queue {
    int32_t peer;     /* the rank its sends go to, or its receives come from */
    uint16_t chan;    /* channel */
    uint8_t send;     /* 1: sends; 0: receives (recv and rrecv) or switch steps */
    uint8_t swq;      /* 1: switch steps on (group peer, chan) */
    uint32_t first;   /* local index of its first step */
    uint32_t last;    /* local index of its last step */
    uint32_t len;     /* number of steps */
    uint32_t matched; /* with partners (cs_plan_init, CS_PLAN_MATCH): its first `matched`
                         steps have a partner, the rest are unmatched; else 0 */
} cs_plan_queue_t;

/* The local part of one rank.  Either owned (cs_plan_rank_build: the arrays
 * are reused and grown by the next build, freed by cs_plan_rank_fini) or a
 * view into a whole plan (cs_plan_rank_of: nothing to free). */
typedef struct cs_plan_rank {
    uint32_t nsteps;
    uint32_t nqueues;
    uint32_t *succ_off;      /* nsteps + 1: successors of step i are
                                succ[succ_off[i] .. succ_off[i + 1]) */
    uint32_t *succ;          /* succ_off[nsteps] entries (the rank's dependency count) */
    uint32_t *chan_next;     /* nsteps: next step of the same queue, or CS_PLAN_NONE (also
                                for nop, copy and reduce) */
    cs_plan_queue_t *queues; /* nqueues, in the order of their first step */
    /* owned form only: capacities and the queue finder's table */
    uint32_t cap_steps, cap_succ, cap_queues;
    uint64_t *tkeys;
    uint32_t *tvals;
    size_t tsize;
} cs_plan_rank_t;

/* Build (or rebuild, reusing the arrays) the local part of rank `rank`
 * into the owned *pr, which must be zeroed before the first build.
 * CS_OK or CS_ERR_NOMEM (err filled; *pr stays safe to fini). */
int cs_plan_rank_build(cs_plan_rank_t *pr, const cs_sched_t *s, int rank, cs_err_t *err);
void cs_plan_rank_fini(cs_plan_rank_t *pr); /* owned form only; NULL is fine */

/* Number of successors of step i and their list. */
static inline uint32_t cs_plan_nsucc(const cs_plan_rank_t *pr, uint32_t i)
{
    return pr->succ_off[i + 1] - pr->succ_off[i];
}
static inline const uint32_t *cs_plan_succ(const cs_plan_rank_t *pr, uint32_t i)
{
    return pr->succ + pr->succ_off[i];
}

/* What cs_plan_init builds (or of them). */
enum {
    CS_PLAN_LOCAL = 1, /* keep every rank's local part (it is always built; without this
                          flag it is freed once the rest is done) */
    CS_PLAN_MATCH = 2, /* partner[], nunmatched, queues' `matched` */
    CS_PLAN_ORDER = 4, /* order[], norder, nstuck (implies CS_PLAN_MATCH) */
};

struct cs_plan;
/* Called for every event as it is appended to order[], in order: step i
 * of rank r, and for a matched pair (r, i is the send) its receive pi of
 * rank pr, else pr = -1.  For a switch operation, (r, i) is its leader and
 * pr = -1: its members follow p->swnext from there (p's partner and swnext
 * are complete when the first event is called).  A pass that follows the
 * order runs this way while the steps are in cache (the verifier's
 * values). */
typedef void (*cs_plan_event_fn)(void *ctx, const struct cs_plan *p, int r, uint32_t i, int pr,
                                 uint32_t pi);

typedef struct cs_plan {
    const cs_sched_t *s;
    int nranks;
    unsigned parts;      /* the CS_PLAN_* flags built and kept */
    uint64_t nsteps;     /* total steps over all ranks */
    uint64_t *base;      /* nranks + 1; base[nranks] == nsteps */
    /* CS_PLAN_LOCAL: rank r's local part is cs_plan_rank_of(p, r), over these: */
    uint32_t *succ_off;  /* nsteps + nranks: rank r's nsteps_r + 1 offsets from base[r] + r */
    uint64_t *succ_base; /* nranks + 1: rank r's successor lists from succ + succ_base[r] */
    uint32_t *succ;
    uint32_t *chan_next; /* per global id: local index of the next step of its queue */
    uint64_t *qbase;     /* nranks + 1: rank r's queues from queues + qbase[r] */
    cs_plan_queue_t *queues;
    /* CS_PLAN_MATCH */
    uint64_t *partner;   /* per global id: global id of the matched partner of a send, recv
                            or rrecv, of the leader of a switch step's operation (the leader's
                            own id for the leader); CS_PLAN_NOGID for other steps and
                            unmatched ones */
    uint64_t *swnext;    /* per global id, only when the schedule has switch steps (else
                            NULL): the next member's step of a matched switch step's
                            operation in group order, CS_PLAN_NOGID after the last */
    uint64_t nunmatched; /* sends, receives and switch steps without a partner */
    /* CS_PLAN_ORDER */
    uint64_t *order;     /* norder events in execution order; a matched pair appears once,
                            as the global id of its SEND (its receive executes with it), a
                            switch operation once, as its leader's global id */
    uint64_t norder;
    uint64_t nstuck;     /* steps that can never execute (deadlock or unmatched) */
} cs_plan_t;

/* Build the parts `what` (CS_PLAN_* flags) of s's plan, calling fn (may be
 * NULL) for every event of the order.  CS_OK (also when steps are stuck
 * or unmatched: callers report those) or CS_ERR_NOMEM with err filled and
 * *p left empty (cs_plan_fini is still safe). */
int cs_plan_init(cs_plan_t *p, const cs_sched_t *s, unsigned what, cs_plan_event_fn fn,
                 void *ctx, cs_err_t *err);
void cs_plan_fini(cs_plan_t *p); /* NULL is fine */

/* The local part of rank r of a plan built with CS_PLAN_LOCAL (a view: its
 * owned-form fields are zero, do not build into it or fini it). */
cs_plan_rank_t cs_plan_rank_of(const cs_plan_t *p, int r);

/* Rank and local index of a global id (binary search over base[]). */
void cs_plan_locate(const uint64_t *base, int nranks, uint64_t gid, int *rank, uint32_t *step);

/* Memory layout of rank `rank` for up to `max_count` elements per block of
 * `esize` bytes: bytes[b] for each of its nbufs buffers (exact, not
 * rounded), bytes[nbufs] the staging area, and stage_off[i] (nsteps
 * entries) the offset of rrecv i's slot in it, each slot rounded up to a
 * multiple of `align` (a power of two; other steps get 0).  Caller's
 * arrays: bytes has nbufs + 1 entries. */
void cs_plan_layout(const cs_sched_t *s, int rank, uint64_t max_count, size_t esize,
                    size_t align, size_t *bytes, size_t *stage_off);

/* Elements of buffer `buf` of rank `rank` for `count` elements per block
 * (its whole window); 0 when the rank has no such buffer. */
uint64_t cs_plan_buf_elems(const cs_sched_t *s, int rank, int buf, uint64_t count);

/* n rounded up to a multiple of align (a power of two). */
static inline size_t cs_plan_align(size_t n, size_t align)
{
    return (n + align - 1) & ~(align - 1);
}

#ifdef __cplusplus
}
#endif

#endif /* CS_PLAN_H */
