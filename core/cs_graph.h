/*
 * cs_graph.h - the combined cross-rank graph of a schedule: message
 * matching and one global execution order.
 *
 * Global step ids: step i of rank r has id base[r] + i.
 *
 * Matching: the k-th send from a to b on channel c is matched with the k-th
 * receive (recv or rrecv) on b from a on channel c.  A matched pair executes
 * as ONE event (rendezvous: the send completes only with its receive).
 *
 * Execution order: a topological order (Kahn) of events under
 *   - each step's own dependencies,
 *   - channel FIFO order: the k-th send of a channel after the (k-1)-th, and
 *     likewise for receives (engines post a channel's operations in order),
 *   - a matched pair is ready when both of its halves are ready.
 * Steps that never become ready (deadlock, or unmatched sends/receives) are
 * counted in nstuck and are absent from order[].  The order is
 * deterministic (a function of the schedule alone) but otherwise
 * unspecified: events are grouped in long runs of one rank's steps, which
 * keeps the passes that follow it cache friendly at 10^7 steps.  For a
 * schedule without races (cs_verify.h) every topological order gives the
 * same values.
 *
 * The graph is the global part of the schedule's plan (cs_plan.h: matching
 * and order are worked out there, for every backend), kept alone.  Used by
 * the verifier (cs_verify.h), the reference interpreter (cs_interp.h) and
 * the statistics (cs_stats.h).
 */
#ifndef CS_GRAPH_H
#define CS_GRAPH_H

#include <stdint.h>

#include "cs_sched.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CS_NONE UINT64_MAX

typedef struct cs_graph {
    const cs_sched_t *s;
    uint64_t nsteps;   /* total steps over all ranks */
    uint64_t *base;    /* nranks + 1 entries; base[nranks] == nsteps */
    uint64_t *partner; /* per global id: matched partner of a send/recv/rrecv, leader of a
                          switch step's operation (cs_plan.h), or CS_NONE */
    uint64_t *swnext;  /* NULL without switch steps; else per global id the next member's
                          step of a matched switch step's operation, CS_NONE after the last */
    uint64_t *order;   /* events in execution order; a matched pair appears once, as the
                          global id of its SEND, and executes together with its receive; a
                          switch operation appears once, as its leader's id */
    uint64_t norder;   /* number of events in order[] */
    uint64_t nstuck;   /* steps that can never execute (deadlock or unmatched) */
    uint64_t nunmatched; /* sends/receives without a partner */
} cs_graph_t;

/* Build matching and order.  Returns CS_OK (also when steps are stuck or
 * unmatched: the verifier reports those) or CS_ERR_NOMEM.  On failure *g is
 * left empty (cs_graph_fini is still safe). */
int cs_graph_init(cs_graph_t *g, const cs_sched_t *s, cs_err_t *err);
void cs_graph_fini(cs_graph_t *g);

/* Rank and local index of a global id (binary search over base[]). */
void cs_graph_locate(const cs_graph_t *g, uint64_t gid, int *rank, uint32_t *step);

static inline const cs_step_t *cs_graph_step(const cs_graph_t *g, int rank, uint32_t i)
{
    return &g->s->ranks[rank].steps[i];
}

#ifdef __cplusplus
}
#endif

#endif /* CS_GRAPH_H */
