/*
 * cs_sched.h - the step graph: collstep's shared language.
 *
 * A schedule describes one collective on P ranks.  Every rank owns a small
 * DAG of steps over symbolic buffers measured in CHUNKS, not bytes, so one
 * schedule serves every message size.
 *
 * Chunk space
 * -----------
 * The collective's full vector is C chunks (`nchunks`), grouped in B blocks of
 * k = C / B chunks each.  B is 1 for allreduce, broadcast and reduce, and P
 * for reduce-scatter, allgather and alltoall (one block per rank).  For a run
 * with `count` elements per block (see cs_coll_block_count), global chunk
 * g = q*k + i (0 <= i < k) covers elements
 *
 *     [q*count + floor(i*count/k), q*count + floor((i+1)*count/k))
 *
 * so chunk sizes differ by at most one element and every block has the same
 * layout.  Every buffer of a rank is a window of `n` chunks starting at global
 * chunk `base`: its local chunk j has the size of global chunk base+j.  Two
 * chunk ranges may be moved or combined with each other only when their
 * chunks have the same size for every count, i.e. when
 * (base_a + off_a) % k == (base_b + off_b) % k ("shape compatible").
 *
 * Buffers of a rank: id 0 is `in`, id 1 is `out`, ids 2.. are scratch
 * buffers declared per rank.  Their windows, per collective:
 *
 *   collective      in (window)          out (window)       expected result
 *   allreduce       [0, C)               [0, C)             out = sum of all in
 *   reduce-scatter  [0, C)               [r*k, (r+1)*k)     out = block r of the sum
 *   allgather       [r*k, (r+1)*k)       [0, C)             out block q = in of rank q
 *   broadcast       [0, C) (root's read) [0, C)             out = in of root
 *   reduce          [0, C)               [0, C)             out of root = sum of all in
 *   alltoall        [0, C)               [0, C)             out block q of r = in block r of q
 *
 * With `inplace`, a schedule must not touch `in`: `out` starts holding the
 * rank's input where the input window lies inside the out window
 * (allreduce, allgather's own block, broadcast root, reduce, alltoall).
 * Reduce-scatter cannot be in place in this model (its out is smaller).
 *
 * Steps
 * -----
 *   send   peer, src range          the data of src is delivered to peer
 *   recv   peer, dst range          dst := message
 *   rrecv  peer, dst range          dst := dst (op) message   (recv-reduce)
 *   reduce src range -> dst range   dst := dst (op) src       (local)
 *   copy   src range -> dst range   dst := src                (local)
 *   nop                             a join point
 *   switch group, op, src/dst        one member's part of a switch operation
 *
 * Every step lists the earlier steps of the same rank it waits for
 * (dependency indices are strictly smaller than the step's own index, so a
 * rank's DAG is acyclic by construction).  A rank's steps that touch the same
 * chunk must be ordered by its own dependencies (the verifier checks this);
 * an engine may run any steps whose dependencies are done, concurrently.
 *
 * Messages: the k-th send from rank a to rank b on channel c matches the k-th
 * receive (recv or rrecv) on b from a on channel c.  Engines post the sends
 * (and the receives) of one channel in schedule order, and the verifier's
 * deadlock check assumes exactly that, plus a send completing only together
 * with its receive (no buffering is relied upon).
 *
 * Switch steps (in-network reduction and multicast)
 * -------------------------------------------------
 * A group is a named, schedule-wide set of 1..P distinct ranks listed in
 * increasing order; a member's index in that list is its place in the
 * group.  A switch step is one member's part of an operation a switch
 * performs for the whole group: the k-th switch step of member m on
 * (group g, channel c) matches the k-th switch step on (g, c) of every
 * other member, and the matching steps of all members are ONE switch
 * operation (like the two halves of a message).  It runs when every member
 * has reached its step (each member's dependencies done).  Operations
 * (cs_swop_t), with "src" and "dst" the step's ranges:
 *
 *   allreduce   every member has src and dst: each dst := the reduction of
 *               every member's src (IB SHARP, NVLS: the net effect)
 *   reduce      every member has src; exactly one member (the reader) also
 *               has dst := the reduction of every member's src (NVLS
 *               load-reduce, multimem.ld_reduce)
 *   multicast   exactly one member (the writer) has src; every member has
 *               dst := a copy of the writer's src, the writer may omit its
 *               dst (NVLS multicast store, multimem.st)
 *
 * An absent range has n = 0.  The members of one operation agree on the
 * operation and on the length and chunk shape of their ranges, as the two
 * halves of a message do (the verifier checks what one member cannot).
 * Schedules without groups and switch steps are exactly what they were
 * before switch steps existed (text format version 1, same digests).
 */
#ifndef CS_SCHED_H
#define CS_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "cs_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CS_SCHED_FORMAT_VERSION 2     /* written for schedules with groups */
#define CS_SCHED_FORMAT_VERSION_MIN 1 /* still read; written without groups */

typedef enum {
    CS_COLL_ALLREDUCE = 0,
    CS_COLL_REDUCE_SCATTER,
    CS_COLL_ALLGATHER,
    CS_COLL_BROADCAST,
    CS_COLL_REDUCE,
    CS_COLL_ALLTOALL,
    CS_COLL_COUNT
} cs_coll_t;

/* "allreduce", "reduce-scatter", ... and back (CS_COLL_COUNT if unknown;
 * "reducescatter", "reduce_scatter", "all-reduce" ... are accepted too). */
const char *cs_coll_name(cs_coll_t c);
cs_coll_t cs_coll_parse(const char *s);
/* 1 for collectives with a root (broadcast, reduce). */
int cs_coll_has_root(cs_coll_t c);
/* 1 for collectives whose vector has one block per rank (B = P). */
int cs_coll_blocked(cs_coll_t c);
/* nccl-tests bus bandwidth factor for P ranks: allreduce 2(P-1)/P,
 * reduce-scatter / allgather / alltoall (P-1)/P, broadcast / reduce 1. */
double cs_coll_busbw_factor(cs_coll_t c, int nranks);
/* Elements per block for a message of `bytes` bytes of `elem_size` bytes,
 * following nccl-tests' conventions (size = whole vector; for blocked
 * collectives count = size / (P * elem_size), rounded down). */
uint64_t cs_coll_block_count(cs_coll_t c, int nranks, uint64_t bytes, size_t elem_size);

/* The collective a schedule computes. */
typedef struct cs_coll_desc {
    cs_coll_t coll;
    int32_t nranks; /* P >= 1 */
    int32_t root;   /* broadcast / reduce; 0 otherwise */
    int32_t inplace; /* 0 or 1 */
} cs_coll_desc_t;

typedef enum {
    CS_STEP_SEND = 0,
    CS_STEP_RECV,
    CS_STEP_RRECV,
    CS_STEP_REDUCE,
    CS_STEP_COPY,
    CS_STEP_NOP,
    CS_STEP_SWITCH, /* one member's part of a switch operation */
    CS_STEP_KIND_COUNT
} cs_step_kind_t;

const char *cs_step_kind_name(cs_step_kind_t k); /* "send", "recv", "rrecv", ... */

/* What a switch operation does (cs_step_t.op of a switch step). */
typedef enum {
    CS_SW_ALLREDUCE = 0, /* every member: src and dst; dst := reduction of all src */
    CS_SW_REDUCE,        /* every member: src; the one reader: dst := reduction of all src */
    CS_SW_MULTICAST,     /* the one writer: src; every member (writer optional): dst := src */
    CS_SW_COUNT
} cs_swop_t;

/* "allreduce", "reduce", "multicast" and back (CS_SW_COUNT if unknown). */
const char *cs_swop_name(cs_swop_t op);
cs_swop_t cs_swop_parse(const char *s);

/* 1 for the kinds that are one half of a message (send, recv, rrecv). */
static inline int cs_kind_is_comm(int kind)
{
    return kind == CS_STEP_SEND || kind == CS_STEP_RECV || kind == CS_STEP_RRECV;
}

/* 1 for the receiving kinds (recv, rrecv): one channel queue holds both. */
static inline int cs_kind_is_recv(int kind)
{
    return kind == CS_STEP_RECV || kind == CS_STEP_RRECV;
}

enum { CS_BUF_IN = 0, CS_BUF_OUT = 1, CS_BUF_FIRST_SCRATCH = 2 };

#define CS_BUF_NAME_MAX 32
#define CS_MAX_CHANNELS 65536

/* A range of chunks of one buffer of the owning rank. */
typedef struct cs_range {
    uint16_t buf; /* buffer id of the rank */
    uint32_t off; /* first chunk, local to the buffer */
    uint32_t n;   /* number of chunks (>= 1 for data steps) */
} cs_range_t;

static inline cs_range_t cs_rng(int buf, uint32_t off, uint32_t n)
{
    cs_range_t r = {(uint16_t)buf, off, n};
    return r;
}

typedef struct cs_step {
    uint8_t kind;    /* cs_step_kind_t */
    uint8_t op;      /* switch: cs_swop_t; 0 otherwise */
    uint16_t chan;   /* channel (send/recv/rrecv, switch) */
    int32_t peer;    /* send/recv/rrecv: the peer rank; switch: the group id; -1 otherwise */
    cs_range_t src;  /* send, reduce, copy; switch when present (n = 0: absent) */
    cs_range_t dst;  /* recv, rrecv, reduce, copy; switch when present (n = 0: absent) */
    uint32_t ndeps;
    uint32_t dep_off; /* index of the first dependency in the rank's deps[] */
} cs_step_t;

typedef struct cs_buffer {
    char name[CS_BUF_NAME_MAX];
    uint32_t base;    /* first global chunk of the window */
    uint32_t nchunks; /* size of the window in chunks */
} cs_buffer_t;

typedef struct cs_rank_sched {
    cs_step_t *steps;
    uint32_t nsteps, cap_steps;
    uint32_t *deps; /* all dependency lists of this rank, back to back */
    uint32_t ndeps, cap_deps;
    cs_buffer_t *bufs; /* bufs[0] = in, bufs[1] = out, then scratch */
    uint16_t nbufs, cap_bufs;
} cs_rank_sched_t;

#define CS_META_MAX 256

/* A group of ranks a switch serves (see "Switch steps" above). */
typedef struct cs_group {
    char name[CS_BUF_NAME_MAX]; /* [A-Za-z_][A-Za-z0-9_]*, unique in the schedule */
    int32_t *members;           /* n ranks, strictly increasing */
    uint32_t n;
} cs_group_t;

typedef struct cs_sched {
    cs_coll_desc_t desc;
    uint32_t nchunks; /* C */
    uint32_t nblocks; /* B: 1 or P */
    char algo[64];     /* generator name, informational ("" when hand written) */
    char params[CS_META_MAX]; /* "key=value key=value", informational */
    cs_rank_sched_t *ranks; /* desc.nranks entries */
    cs_group_t *groups;     /* ngroups entries (switch steps name them by index) */
    uint32_t ngroups, cap_groups;
    uint64_t nswitch;       /* switch steps over all ranks */
    /* Sticky builder error: the first failing builder call records it and
     * every later builder call does nothing.  Generators check it once. */
    cs_err_t err;
} cs_sched_t;

/* ---- building ---------------------------------------------------------- */

/* Create an empty schedule computing `desc` with C = nchunks chunks.
 * nchunks must be >= 1 and a multiple of P for blocked collectives.
 * Declares in/out of every rank with the windows of the table above.
 * Returns NULL and fills err on invalid arguments or lack of memory. */
cs_sched_t *cs_sched_create(const cs_coll_desc_t *desc, uint32_t nchunks, cs_err_t *err);
/* Free a schedule, whatever state it is in.  NULL is fine. */
void cs_sched_destroy(cs_sched_t *s);
/* Record generator name and parameters (informational, copied). */
void cs_sched_set_meta(cs_sched_t *s, const char *algo, const char *params);

/* Chunks per block (k = C / B). */
static inline uint32_t cs_sched_block_chunks(const cs_sched_t *s)
{
    return s->nchunks / s->nblocks;
}

/* Declare a scratch buffer on `rank`; returns its id (>= 2), or -1 on error
 * (recorded in s->err).  Names are unique per rank, [A-Za-z_][A-Za-z0-9_]*. */
int cs_sched_add_buffer(cs_sched_t *s, int rank, const char *name, uint32_t base,
                        uint32_t nchunks);

/* Declare a group of ranks: `n` (1..P) distinct ranks in increasing order,
 * a unique name as for buffers.  Returns the group id (0, 1, ... in
 * declaration order), or -1 on error (recorded in s->err). */
int cs_sched_add_group(cs_sched_t *s, const char *name, const int32_t *members, uint32_t n);
/* The id of the group named `name`, or -1. */
int cs_sched_find_group(const cs_sched_t *s, const char *name);
/* The index of `rank` among g's members, or -1 (binary search). */
int cs_group_member(const cs_group_t *g, int rank);
/* 1 when the schedule has groups or switch steps (text format version 2). */
static inline int cs_sched_has_switch(const cs_sched_t *s)
{
    return s->ngroups > 0 || s->nswitch > 0;
}

/* The first switch step of s (lowest rank, then lowest index): 1 and
 * *rank, *step filled, or 0 when s has none.  For the consumers that
 * cannot execute switch steps and refuse them, naming this step. */
int cs_sched_first_switch(const cs_sched_t *s, int *rank, uint32_t *step);

/* Append a step to `rank`.  Fields dep_off/ndeps of *st are ignored; the
 * dependencies are `deps[0..ndeps)`, each < the new step's index.
 * Validates kind, peer, ranges (inside their buffers, non-empty, src and dst
 * shape compatible and the same length) and dependencies; for a switch
 * step also the group (declared, `rank` a member), the operation and which
 * of src and dst are present (see "Switch steps").
 * Returns the new step's index, or -1 on error (recorded in s->err). */
int64_t cs_sched_add(cs_sched_t *s, int rank, const cs_step_t *st, const uint32_t *deps,
                     uint32_t ndeps);

/* Convenience wrappers over cs_sched_add.  Pass ndeps = 0 and deps = NULL
 * for no dependency.  All return the step index or -1. */
int64_t cs_send(cs_sched_t *s, int rank, int peer, int chan, cs_range_t src,
                const uint32_t *deps, uint32_t ndeps);
int64_t cs_recv(cs_sched_t *s, int rank, int peer, int chan, cs_range_t dst,
                const uint32_t *deps, uint32_t ndeps);
int64_t cs_rrecv(cs_sched_t *s, int rank, int peer, int chan, cs_range_t dst,
                 const uint32_t *deps, uint32_t ndeps);
int64_t cs_reduce(cs_sched_t *s, int rank, cs_range_t src, cs_range_t dst,
                  const uint32_t *deps, uint32_t ndeps);
int64_t cs_copy(cs_sched_t *s, int rank, cs_range_t src, cs_range_t dst,
                const uint32_t *deps, uint32_t ndeps);
int64_t cs_nop(cs_sched_t *s, int rank, const uint32_t *deps, uint32_t ndeps);
/* A switch step of member `rank` of `group` on channel `chan`; src and dst
 * are NULL when absent (which may be absent depends on `op`). */
int64_t cs_switch(cs_sched_t *s, int rank, cs_swop_t op, int group, int chan,
                  const cs_range_t *src, const cs_range_t *dst, const uint32_t *deps,
                  uint32_t ndeps);

/* Dependency list helper for generators: a small growable list of step
 * indices, reused across steps (no allocation in steady state).  A negative
 * index (a failed builder call) is ignored: the sticky error reports it. */
typedef struct cs_deps {
    uint32_t *v;
    uint32_t n, cap;
} cs_deps_t;
void cs_deps_clear(cs_deps_t *d);
void cs_deps_push(cs_deps_t *d, int64_t step);
void cs_deps_fini(cs_deps_t *d);

/* CS_OK or the sticky builder error. */
static inline int cs_sched_status(const cs_sched_t *s)
{
    return s->err.code;
}

/* ---- reading ----------------------------------------------------------- */

/* The dependencies of a step (NULL when it has none). */
static inline const uint32_t *cs_step_deps(const cs_rank_sched_t *r, const cs_step_t *st)
{
    return st->ndeps ? r->deps + st->dep_off : NULL;
}

/* Total number of steps over all ranks. */
uint64_t cs_sched_total_steps(const cs_sched_t *s);

/* Element offset where global chunk g starts, for `count` elements per
 * block (g may equal C: the end of the vector). */
uint64_t cs_chunk_start(const cs_sched_t *s, uint64_t count, uint64_t g);
/* Element offset inside buffer `b` of rank-local chunk `off`, and number of
 * elements of `n` chunks starting there. */
uint64_t cs_buf_elem_off(const cs_sched_t *s, const cs_buffer_t *b, uint64_t count, uint32_t off);
uint64_t cs_range_elems(const cs_sched_t *s, const cs_buffer_t *b, uint64_t count,
                        uint32_t off, uint32_t n);

/* A digest of the whole schedule (FNV-1a 64 over its canonical content),
 * used by live runs to check that all ranks run the same schedule. */
uint64_t cs_sched_digest(const cs_sched_t *s);

#ifdef __cplusplus
}
#endif

#endif /* CS_SCHED_H */
