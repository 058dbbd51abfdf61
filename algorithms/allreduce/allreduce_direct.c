/*
 * allreduce_direct.c - direct allreduce: every rank sends segment j of its
 * vector straight to rank j, which reduces the P-1 contributions to its
 * segment; then every rank sends its reduced segment to all others.
 *
 *    reduce-scatter, P = 4 (all messages in flight at once):
 *
 *      r1 --seg 0--\
 *      r2 --seg 0---> r0  (r0 adds them to its segment 0, one after another)
 *      r3 --seg 0--/
 *
 * Cost: 2(P-1) alpha + 2 (P-1)/P n beta + (P-1)/P n gamma when a rank's
 * messages share one link; with a full-bisection fabric and concurrent
 * links the latency term is what direct saves.  P-1 concurrent messages per
 * rank (O(P^2) steps in all): meant for small groups and tiers.
 * Supports every P >= 1 and in-place.
 */
#include "common/cs_flat.h"

CS__FLAT_ALGO(allreduce, direct, CS_COLL_ALLREDUCE, CS__PH_DIRECT,
              "chunks per segment",
              "direct reduce-scatter + direct all-gather (every pair exchanges once)");
