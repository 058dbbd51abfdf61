/*
 * allgather_rd.c - recursive doubling all-gather.
 *
 * Ranks 2i+1 (i < P - n2, n2 = 2^floor(log2 P)) first send their block to
 * rank 2i.  Then in round k (distance 1, 2, 4, .. n2/2) each remaining
 * rank exchanges everything it holds, a contiguous run of blocks, with its
 * partner, doubling its run.  Finally rank 2i sends everything but block
 * 2i+1 to rank 2i+1.
 *
 *    round 2, P = 4:  r0 [blk 0-1] <-> r2 [blk 2-3],  r1 [0-1] <-> r3 [2-3]
 *
 * Cost (P a power of two): log2(P) alpha + (P-1)/P n beta; otherwise add
 * alpha + n beta for the final hand-over to the extra ranks.
 * Supports every P >= 1 and in-place.
 */
#include "common/cs_flat.h"

CS__FLAT_ALGO(allgather, rd, CS_COLL_ALLGATHER, CS__PH_RHD,
              "chunks per block",
              "recursive doubling all-gather (log2 P rounds, fold for other P)");
