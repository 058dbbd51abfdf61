/*
 * allreduce_ring.c - ring allreduce: ring reduce-scatter, then ring
 * all-gather, over all P ranks (Patarasuk & Yuan; NCCL's ring).
 *
 * The vector is C = P * nchunks chunks, P segments of nchunks chunks.  In
 * step i of the reduce-scatter, rank m sends segment m-i-1 to m+1 and
 * reduces segment m-i-2 arriving from m-1, so after P-1 steps rank m holds
 * the full sum of segment m; the all-gather then circulates the sums.  Each
 * segment moves as nchunks messages of one chunk, so a rank forwards the
 * first chunk of a segment while the next is still arriving.
 *
 *    step i (reduce-scatter), P = 4:
 *
 *      r0 --seg 3-i--> r1 --seg 0-i--> r2 --seg 1-i--> r3 --seg 2-i--> r0
 *      (each receiver adds the arriving segment to its own copy)
 *
 * Cost: 2(P-1) alpha + 2 (P-1)/P n beta + (P-1)/P n gamma (bandwidth
 * optimal; latency linear in P).
 * Supports every P >= 1 and in-place; no other restriction.
 */
#include "common/cs_flat.h"

CS__FLAT_RING_ALGO(allreduce, ring, CS_COLL_ALLREDUCE,
                   "chunks per segment: messages per segment, the pipelining depth",
                   "ring reduce-scatter + ring all-gather (bandwidth optimal, 2(P-1) steps)");
