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
 */
#ifndef CS_GRAPH_INT_H
#define CS_GRAPH_INT_H

#include "cs_graph.h"

int cs__graph_fifo_prev(const cs_graph_t *g, uint32_t *prev);

#endif /* CS_GRAPH_INT_H */
