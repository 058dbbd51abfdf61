/*
 * allgather_ring.c - ring all-gather.
 *
 * Rank m starts with block m (in `in`, or already in out when in place).
 * In step i it sends block m-i to m+1 and receives block m-i-1 from m-1
 * straight into out; step 0 sends from `in`, later steps forward what
 * arrived.  Blocks travel as nchunks messages (pipelining).
 *
 *    step i, P = 3:   r0 --blk 0-i--> r1 --blk 1-i--> r2 --blk 2-i--> r0
 *
 * Cost: (P-1) alpha + (P-1)/P n beta (n = whole gathered vector).
 * Supports every P >= 1 and in-place.
 */
#include "common/cs_flat.h"

CS__FLAT_RING_ALGO(allgather, ring, CS_COLL_ALLGATHER,
                   "chunks per block: messages per block, the pipelining depth",
                   "ring all-gather (bandwidth optimal, P-1 steps)");
