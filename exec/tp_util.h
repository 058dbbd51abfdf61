/*
 * tp_util.h - the plumbing every transport of the ops table needs
 * (tp_shm*.c, tp_tcp*.c, tp_ofi.c): preallocated pools of records with
 * generations, intrusive FIFOs over them, the ring of completed operations,
 * the pool of unexpected messages; the clock is core's (cs_time.h).  Not a
 * public header.
 *
 * Nothing here allocates after *_init, takes a lock or makes a system call:
 * the transports call it on their progress path.
 *
 * Records are named by their index (int32_t, -1: none) into an array the
 * transport owns (its operations, frames, unexpected messages); the pool
 * holds the links and generations beside it, so one pool serves any record
 * type.
 *
 * Generations.  A record handed to a peer is named by (index, generation):
 * a rendezvous operation's cookie, which the peer sends back in its CTS,
 * FIN or DATA.  The one rule: the generation of a record is bumped when it
 * goes back to the pool (cs_tp_pool_put), never at any other moment.  So
 * the generation is constant for the whole of one use, from get to put,
 * and a handle taken during one use is stale (cs_tp_pool_live says 0) for
 * ever after that use ended, whatever the record is used for next (the
 * counter wraps after 2^32 uses of one record: far beyond any message's
 * time in flight).
 *
 * Links.  A record in use is on at most one FIFO that links through the
 * pool's `next` (a free record is on the free list, which uses it too); a
 * transport that keeps a record on a second list at once gives that list
 * its own link array (cs_tp_links).  A FIFO keeps its records in the order
 * they were pushed, which is what message matching needs: messages of one
 * (peer, tag) match receives in posting order.
 */
#ifndef TP_UTIL_H
#define TP_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "cs_time.h"

/* ---- clock ---- */

/* The transports' deadlines and liveness checks, the bootstrap's waits and
 * the trace clock alignment read core's monotonic clock: cs_now_ns /
 * cs_now_s (cs_time.h), the one clock of collstep. */

/* ---- pool of records with generations ---- */

typedef struct cs_tp_pool {
    int32_t *next; /* per record: the free list, or the one FIFO it is on */
    uint32_t *gen; /* per record: its generation (see the top of the file) */
    int32_t n;     /* records */
    int32_t free;  /* head of the free list, -1: none */
    int32_t nfree; /* records on the free list */
} cs_tp_pool_t;

/* n records (n >= 1), all free, generation 0.  CS_OK or CS_ERR_NOMEM. */
int cs_tp_pool_init(cs_tp_pool_t *p, int32_t n);
void cs_tp_pool_fini(cs_tp_pool_t *p);

/* A free record (its link -1), or -1 when the pool is empty. */
static inline int32_t cs_tp_pool_get(cs_tp_pool_t *p)
{
    int32_t i = p->free;
    if (i < 0)
        return -1;
    p->free = p->next[i];
    p->next[i] = -1;
    p->nfree--;
    return i;
}

/* Record i's use is over: back to the pool, its generation bumped.  It
 * must be on no FIFO linked through the pool. */
static inline void cs_tp_pool_put(cs_tp_pool_t *p, int32_t i)
{
    p->gen[i]++;
    p->next[i] = p->free;
    p->free = i;
    p->nfree++;
}

/* 1 when (i, gen) names the current use of a record of the pool (i in
 * range, same generation); says nothing about whether it is in use. */
static inline int cs_tp_pool_live(const cs_tp_pool_t *p, uint32_t i, uint32_t gen)
{
    return i < (uint32_t)p->n && p->gen[i] == gen;
}

/* A second link array for n records (all -1), for a list a record is on
 * besides its pool-linked one; NULL when out of memory (free() it). */
int32_t *cs_tp_links(int32_t n);

/* ---- intrusive FIFO ---- */

/* A FIFO of records linked through `next` (a pool's, or cs_tp_links). */
typedef struct cs_tp_fifo {
    int32_t head, tail; /* -1: empty */
} cs_tp_fifo_t;

#define CS_TP_FIFO_EMPTY ((cs_tp_fifo_t){-1, -1})

static inline void cs_tp_fifo_push(cs_tp_fifo_t *f, int32_t *next, int32_t i)
{
    next[i] = -1;
    if (f->tail >= 0)
        next[f->tail] = i;
    else
        f->head = i;
    f->tail = i;
}

/* Unlink i, whose predecessor is prev (-1: i is the head). */
static inline void cs_tp_fifo_unlink(cs_tp_fifo_t *f, int32_t *next, int32_t prev, int32_t i)
{
    if (prev >= 0)
        next[prev] = next[i];
    else
        f->head = next[i];
    if (f->tail == i)
        f->tail = prev;
    next[i] = -1;
}

/* The head, unlinked, or -1. */
static inline int32_t cs_tp_fifo_pop(cs_tp_fifo_t *f, int32_t *next)
{
    int32_t i = f->head;
    if (i >= 0)
        cs_tp_fifo_unlink(f, next, -1, i);
    return i;
}

/* Remove i from f; 1 if it was there. */
int cs_tp_fifo_remove(cs_tp_fifo_t *f, int32_t *next, int32_t i);

/* The first record of f whose 64-bit key equals `key`, where the key of
 * record i lies at byte `off` of items[i] (records of `stride` bytes: the
 * transport's array, e.g. offsetof(tcp_op_t, tag)); -1 when none.  _take
 * also unlinks it.  This is message matching: the oldest of a tag. */
int32_t cs_tp_fifo_find(const cs_tp_fifo_t *f, const int32_t *next, const void *items,
                        size_t stride, size_t off, uint64_t key);
int32_t cs_tp_fifo_take(cs_tp_fifo_t *f, int32_t *next, const void *items, size_t stride,
                        size_t off, uint64_t key);

/* Give every record of f back to pool p (generations bumped); f empty. */
void cs_tp_fifo_release(cs_tp_fifo_t *f, cs_tp_pool_t *p);

/* ---- ring of completed operations ---- */

/* Indices of completed operations in completion order, handed back by
 * poll.  Its capacity is at least the number of operations (the pool's
 * n), and an operation is pushed once per use and recycled only when
 * popped, so it never overflows. */
typedef struct cs_tp_ring {
    int32_t *slot;
    uint32_t head, tail, mask; /* free-running positions; capacity mask + 1 */
} cs_tp_ring_t;

/* Capacity: the power of two >= n (n >= 1).  CS_OK or CS_ERR_NOMEM. */
int cs_tp_ring_init(cs_tp_ring_t *r, uint32_t n);
void cs_tp_ring_fini(cs_tp_ring_t *r);

static inline void cs_tp_ring_push(cs_tp_ring_t *r, int32_t i)
{
    r->slot[r->tail++ & r->mask] = i;
}

static inline int cs_tp_ring_empty(const cs_tp_ring_t *r)
{
    return r->head == r->tail;
}

/* The oldest entry (the ring must not be empty). */
static inline int32_t cs_tp_ring_pop(cs_tp_ring_t *r)
{
    return r->slot[r->head++ & r->mask];
}

/* Take back the entry pushed last if it is i (an operation that completed
 * inside its own post: inline completion, never handed out); 1 if so. */
static inline int cs_tp_ring_unpush(cs_tp_ring_t *r, int32_t i)
{
    if (r->head == r->tail || r->slot[(r->tail - 1) & r->mask] != i)
        return 0;
    r->tail--;
    return 1;
}

/* ---- unexpected messages ---- */

/* Messages that arrived before their receive was posted: records (a pool;
 * each peer keeps a FIFO of its own over recs.next, in arrival order) and
 * payload slots of slot_bytes for the eager ones.  When either runs out
 * the transport leaves the message where it is (in the ring, in the
 * socket): back pressure on that sender, nothing dropped. */
typedef struct cs_tp_unex {
    cs_tp_pool_t recs;
    char *data;         /* nslots x slot_bytes */
    size_t slot_bytes;
    int32_t *free_slot; /* stack of free slots */
    int32_t nslots, nfree;
} cs_tp_unex_t;

/* nrecs records, nslots slots of slot_bytes (>= 1 each).  CS_OK or
 * CS_ERR_NOMEM. */
int cs_tp_unex_init(cs_tp_unex_t *u, int32_t nrecs, int32_t nslots, size_t slot_bytes);
void cs_tp_unex_fini(cs_tp_unex_t *u);

/* 1 when a record (and a slot, with_slot) is free. */
static inline int cs_tp_unex_room(const cs_tp_unex_t *u, int with_slot)
{
    return u->recs.free >= 0 && (!with_slot || u->nfree > 0);
}

/* A free slot, or -1. */
static inline int32_t cs_tp_unex_slot_get(cs_tp_unex_t *u)
{
    return u->nfree > 0 ? u->free_slot[--u->nfree] : -1;
}

static inline void cs_tp_unex_slot_put(cs_tp_unex_t *u, int32_t s)
{
    u->free_slot[u->nfree++] = s;
}

static inline char *cs_tp_unex_slot(const cs_tp_unex_t *u, int32_t s)
{
    return u->data + (size_t)s * u->slot_bytes;
}

#endif /* TP_UTIL_H */
