/*
 * cs_engine_int.h - internals of the live step engine shared by its files:
 *   cs_engine.c       creation, memory, and the run loop
 *   cs_engine_plan.c  what is worked out once per schedule at create time:
 *                     successor lists and channel chains (from the rank's
 *                     plan, cs_plan.h), deferred copies
 * Not a public header: users see cs_engine.h.
 */
#ifndef CS_ENGINE_INT_H
#define CS_ENGINE_INT_H

#include "cs_engine.h"
#include "cs_plan.h"

enum { ST_WAIT = 0, ST_QUEUED, ST_POSTED, ST_ARRIVED, ST_LOCAL, ST_DONE };

typedef struct estep {
    uint8_t kind, state, depready, posted, arrived, deferred; /* deferred: a copy done by rrecvs */
    uint16_t chan;
    int32_t peer;
    uint32_t ndeps, unmet;
    uint32_t succ_off, nsucc;
    int32_t chan_prev, chan_next; /* same (peer, chan, direction) */
    uint32_t seq, chan_len;       /* position on the channel, its length */
    int32_t fused;                /* rrecv: the deferred copy it does part of, or -1 */
    /* for the current count */
    char *a, *b; /* send/reduce/copy source (rrecv: staging); recv/rrecv/reduce/copy dest */
    char *c;     /* rrecv with a deferred copy: its part of the copy's source */
    void *mr;    /* registration of the communicated memory */
    uint64_t elems, cursor;
} estep_t;

struct cs_engine {
    const cs_sched_t *s;
    const cs_rank_sched_t *rs;
    int rank;
    cs_tp_t *tp;
    cs_engine_config_t cfg;
    size_t esize;
    cs_reduce_fn_t red;
    uint32_t n;
    estep_t *st;
    cs_plan_rank_t plan; /* this rank's successor lists and channel queues */
    const uint32_t *succ; /* plan.succ */
    size_t *stage_off;   /* per step: an rrecv's staging slot (cs_plan_layout) */
    cs_tp_req_t *req;
    uint32_t *rq, *lq;
    uint32_t rq_head, rq_tail, lq_head, lq_tail, ndone;
    uint32_t nmem; /* nbufs + 1: the last one is the staging area */
    char **mem;
    size_t *mem_bytes;
    void **mr;
    cs_step_time_t *times;
    uint64_t t0, runs, prepared;
    int rec;  /* keep per-step timestamps */
    int left; /* this rank told the transport to leave (interrupted) */
};

/* cs_engine_plan.c (create time, before alloc_memory) */
/* The rank's plan (cs_plan_rank_build): successor lists (CSR, the reverse
 * of the dependency lists) and the steps of every (direction, peer,
 * channel) linked in schedule order with their positions. */
int cs__engine_plan(cs_engine_t *e, cs_err_t *err);
/* Mark the copies the recv-reduces after them can do (estep deferred,
 * fused); needs the successor lists. */
void cs__engine_fuse_copies(cs_engine_t *e);

#endif /* CS_ENGINE_INT_H */
