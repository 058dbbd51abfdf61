/*
 * cs_graph_int.h - internals of the combined graph shared with the verifier
 * (not part of the public API).
 *
 * cs__graph_fifo_prev: for every global step id, the local index (same rank)
 * of the previous operation of the same channel queue, or UINT32_MAX.  A
 * channel queue is "sends of rank a to b on channel c" or "receives (recv and
 * rrecv together) of rank b from a on channel c"; engines post a queue in
 * schedule order, so each element waits for its predecessor to be posted.
 * `prev` has g->nsteps entries, filled by the call.  Returns CS_OK or
 * CS_ERR_NOMEM (prev is then unspecified).
 *
 * cs__graph_locate_hint, cs__graph_partner_step: cheap forms of
 * cs_graph_locate for the passes that walk order[].
 */
#ifndef CS_GRAPH_INT_H
#define CS_GRAPH_INT_H

#include "cs_graph.h"
#include "cs_plan.h"

int cs__graph_fifo_prev(const cs_graph_t *g, uint32_t *prev);

/* cs_graph_init that also calls fn(ctx, r, i, pr, pi) for every event as it
 * is appended to order[], in order: step i of rank r, and for a matched
 * pair (r, i is the send) its receive pi of rank pr, else pr = -1.  A pass
 * that follows the order runs this way while the steps are in cache. */
typedef cs_plan_event_fn cs__graph_event_fn;
int cs__graph_init_ev(cs_graph_t *g, const cs_sched_t *s, cs__graph_event_fn fn, void *ctx,
                      cs_err_t *err);

/* cs_graph_locate with a guess: *rank is tried first (order[] runs through
 * one rank's steps in long stretches, so the guess is usually right). */
static inline void cs__graph_locate_hint(const cs_graph_t *g, uint64_t gid, int *rank,
                                         uint32_t *step)
{
    int r = *rank;
    if (gid >= g->base[r] && gid < g->base[r + 1]) {
        *step = (uint32_t)(gid - g->base[r]);
        return;
    }
    cs_graph_locate(g, gid, rank, step);
}

/* The rank and local index of the partner of a matched send or receive
 * (the partner lives on the step's peer). */
static inline uint32_t cs__graph_partner_step(const cs_graph_t *g, const cs_step_t *st,
                                              uint64_t partner)
{
    return (uint32_t)(partner - g->base[st->peer]);
}

#endif /* CS_GRAPH_INT_H */
