/*
 * reduce_scatter_rhalving.c - recursive halving reduce-scatter.
 *
 * Ranks 2i+1 (i < P - n2, n2 = 2^floor(log2 P)) fold their whole vector
 * into rank 2i; then in log2(n2) rounds each remaining rank keeps the half
 * of its range of blocks that holds its own block(s), sends the other half
 * to its partner at distance n2/2, n2/4, .. 1, and reduces the partner's
 * copy of the kept half into a scratch accumulator.  Rank 2i finally hands
 * block 2i+1 to rank 2i+1.  Ranges stay contiguous because folded pairs
 * own adjacent blocks.
 *
 *    round 1, P = 4:  r0 <-> r2 exchange halves [0,2) / [2,4),
 *                     r1 <-> r3 likewise; round 2: r0 <-> r1, r2 <-> r3
 *
 * Cost (P a power of two): log2(P) alpha + (P-1)/P n (beta + gamma);
 * otherwise add alpha + n (beta + gamma) for the fold.
 * Supports every P >= 1; not in place.  Needs a scratch buffer of the
 * whole vector; messages are whole halves (no pipelining parameter).
 */
#include "common/cs_flat.h"

CS__FLAT_ALGO(reduce_scatter, rhalving, CS_COLL_REDUCE_SCATTER, CS__PH_RHD,
              "chunks per block",
              "recursive halving reduce-scatter (log2 P rounds, fold for other P)");
