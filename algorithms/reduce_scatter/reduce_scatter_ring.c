/*
 * reduce_scatter_ring.c - ring reduce-scatter.
 *
 * Block q of the result belongs to rank q (C = P * nchunks chunks, block q
 * = chunks [q*nchunks, (q+1)*nchunks)).  In step i rank m sends its partial
 * sum of block m-i-1 to m+1 and reduces block m-i-2 arriving from m-1 into
 * a scratch accumulator `acc`; the last arrival, block m itself, is reduced
 * straight into out.  Blocks travel as nchunks messages (pipelining).
 *
 *    step i, P = 3:   r0 --blk 2-i--> r1 --blk 0-i--> r2 --blk 1-i--> r0
 *
 * Cost: (P-1) alpha + (P-1)/P n beta + (P-1)/P n gamma (n = whole vector).
 * Supports every P >= 1; not in place (the model has no in-place
 * reduce-scatter).  Needs a scratch buffer of the whole vector.
 */
#include "common/cs_flat.h"

CS__FLAT_RING_ALGO(reduce_scatter, ring, CS_COLL_REDUCE_SCATTER,
                   "chunks per block: messages per block, the pipelining depth",
                   "ring reduce-scatter (bandwidth optimal, P-1 steps)");
