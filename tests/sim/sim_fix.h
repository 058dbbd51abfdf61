/*
 * sim_fix.h - fixtures of the sim tests: hand-written platforms following
 * platforms/cs_platform.h's contract, and a hand-built ring allreduce that
 * does not depend on the algorithm generators.
 *
 * Star: P device hosts g0..g{P-1}, each with its own split-duplex link
 * (latency lat, bandwidth bw per direction, tier "nic") to one router sw.
 * A message a -> b crosses l_a up then l_b down: alpha = 2 * lat,
 * beta = 1 / bw, and transfers contend only when two of them leave (or
 * enter) the same host at the same time.
 *
 *     g0   g1   g2  ...
 *      \    |    /
 *       l0  l1  l2          route g0 -> g2: l0 (UP), l2 (DOWN)
 *          sw
 *
 * Two-level: `nodes` nodes of `per` devices; inside a node devices talk
 * over their own "nvlink" link to the node switch; node switches reach the
 * core through one "nic" link each.
 */
#ifndef SIM_FIX_H
#define SIM_FIX_H

#include "cs_platform.h"
#include "cs_sched.h"

/* Fill *p with a star of n devices; speed = reduction bandwidth (bytes/s).
 * Free with fix_platform_fini. */
void fix_star(cs_platform_t *p, int n, double lat, double bw, double speed);
void fix_two_level(cs_platform_t *p, int nodes, int per, double lat_in, double bw_in,
                   double lat_out, double bw_out, double speed);
void fix_platform_fini(cs_platform_t *p);

/* Ring allreduce on P ranks, C = P chunks: copy in -> out, P-1 rrecv
 * steps, P-1 recv steps.  Cost: 2(P-1)(alpha + n/P beta) + (P-1) n/P gamma. */
cs_sched_t *fix_ring(int P);

#endif
