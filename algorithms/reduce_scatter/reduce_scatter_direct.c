/*
 * reduce_scatter_direct.c - direct reduce-scatter: every rank sends block
 * q of its input straight to rank q; rank q copies its own block into out
 * and reduces the P-1 arriving blocks into it, one after another.
 *
 *    P = 4:   r1 --blk 0--\
 *             r2 --blk 0---> r0 (out = in[0] + ... in turn)
 *             r3 --blk 0--/
 *
 * Cost: (P-1) alpha + (P-1)/P n (beta + gamma) when a rank's messages
 * share one link.  O(P^2) steps in all; no scratch buffer.
 * Supports every P >= 1; not in place.
 */
#include "common/cs_flat.h"

CS__FLAT_ALGO(reduce_scatter, direct, CS_COLL_REDUCE_SCATTER, CS__PH_DIRECT,
              "chunks per block",
              "direct reduce-scatter (every rank sends each block to its owner)");
