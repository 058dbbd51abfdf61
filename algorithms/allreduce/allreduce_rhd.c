/*
 * allreduce_rhd.c - recursive halving-doubling allreduce (Rabenseifner):
 * reduce-scatter by recursive halving, all-gather by recursive doubling.
 *
 * With n2 = 2^floor(log2 P) and rem = P - n2, ranks 2i+1 (i < rem) first
 * fold their whole vector into rank 2i and sit out; the n2 remaining ranks
 * each own one of n2 segments (C = n2 * nchunks chunks).  Halving: in round
 * k (distance n2/2, n2/4, .. 1) a rank keeps the half of its current range
 * that holds its segment, sends the other half to its partner and reduces
 * the partner's copy of the kept half.  Doubling mirrors it; finally rank
 * 2i sends the result to 2i+1.
 *
 *    halving round 1, n2 = 4 (range [0,4) -> keep 2 segments):
 *
 *      r0: keep seg 0-1, send seg 2-3 --> r2    r2: keep seg 2-3, send 0-1 --> r0
 *      r1: keep seg 0-1, send seg 2-3 --> r3    r3: keep seg 2-3, send 0-1 --> r1
 *
 * Cost (P a power of two): 2 log2(P) alpha + 2 (P-1)/P n beta +
 * (P-1)/P n gamma; otherwise add 2 alpha + 2 n beta + n gamma for the fold.
 * Supports every P >= 1 and in-place.
 */
#include "common/cs_flat.h"

CS__FLAT_ALGO(allreduce, rhd, CS_COLL_ALLREDUCE, CS__PH_RHD,
              "chunks per segment",
              "recursive halving reduce-scatter + recursive doubling all-gather (Rabenseifner)");
