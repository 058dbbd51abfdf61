/*
 * allgather_direct.c - direct all-gather: every rank sends its block to
 * every other rank, all messages at once, received straight into out.
 *
 *    P = 4:   r0 --blk 0--> r1, r2, r3   (and likewise from every rank)
 *
 * Cost: (P-1) alpha + (P-1)/P n beta when a rank's messages share one
 * link.  O(P^2) steps in all.  Supports every P >= 1 and in-place.
 */
#include "common/cs_flat.h"

CS__FLAT_ALGO(allgather, direct, CS_COLL_ALLGATHER, CS__PH_DIRECT,
              "chunks per block",
              "direct all-gather (every rank sends its block to all others)");
