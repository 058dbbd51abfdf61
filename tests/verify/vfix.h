/*
 * vfix.h - schedule fixtures for the graph and verifier tests.
 *
 * A plain ring allreduce (reduce-scatter then allgather, one segment of
 * `per` chunks per rank, channel 0 from r to r+1) written here so the
 * verifier can be tested before the registered generators exist, plus the
 * mutations the tests apply.  Header only; each test includes it once.
 *
 * Step layout of rank r (non in-place; in place drops step 0 and shifts
 * every index by -1):
 *   0                 copy in -> out (whole vector)
 *   1 + 2t, 2 + 2t    reduce-scatter round t: send seg (r-t), rrecv seg (r-t-1)
 *   2P - 1 + 2t, +1   allgather round t: send seg (r+1-t), recv seg (r-t)
 */
#ifndef VFIX_H
#define VFIX_H

#include "cs_sched.h"

enum {
    VFIX_RECV_FIRST = 1, /* every rank's first send waits for its first rrecv (deadlock) */
};

static inline int vfix_mod(int a, int p)
{
    return ((a % p) + p) % p;
}

/* Index of a ring step: phase 0 = reduce-scatter, 1 = allgather; half 0 =
 * send, 1 = receive. */
static inline uint32_t vfix_ring_idx(int P, int inplace, int phase, int t, int half)
{
    return (uint32_t)((inplace ? 0 : 1) + phase * 2 * (P - 1) + 2 * t + half);
}

static inline cs_sched_t *vfix_ring(int P, uint32_t per, int inplace, int flags)
{
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, P, 0, inplace};
    cs_sched_t *s = cs_sched_create(&d, (uint32_t)P * per, NULL);
    if (s == NULL)
        return NULL;
    uint32_t C = (uint32_t)P * per;
    for (int r = 0; r < P; r++) {
        int nx = vfix_mod(r + 1, P), pv = vfix_mod(r - 1, P);
        int64_t c0 = -1;
        if (!inplace)
            c0 = cs_copy(s, r, cs_rng(CS_BUF_IN, 0, C), cs_rng(CS_BUF_OUT, 0, C), NULL, 0);
        uint32_t dep;
        int64_t last = c0;
        for (int t = 0; t < P - 1; t++) {
            uint32_t sseg = (uint32_t)vfix_mod(r - t, P) * per;
            uint32_t rseg = (uint32_t)vfix_mod(r - t - 1, P) * per;
            dep = (uint32_t)last;
            if ((flags & VFIX_RECV_FIRST) && t == 0) {
                /* receive first, then send: the ring's cycle closes */
                int64_t rr = cs_rrecv(s, r, pv, 0, cs_rng(CS_BUF_OUT, rseg, per), &dep,
                                      last >= 0);
                uint32_t d2[2] = {dep, (uint32_t)rr};
                cs_send(s, r, nx, 0, cs_rng(CS_BUF_OUT, sseg, per), last >= 0 ? d2 : d2 + 1,
                        last >= 0 ? 2 : 1);
                last = rr;
                continue;
            }
            cs_send(s, r, nx, 0, cs_rng(CS_BUF_OUT, sseg, per), &dep, last >= 0);
            dep = (uint32_t)c0;
            last = cs_rrecv(s, r, pv, 0, cs_rng(CS_BUF_OUT, rseg, per), &dep, c0 >= 0);
        }
        for (int t = 0; t < P - 1; t++) {
            uint32_t sseg = (uint32_t)vfix_mod(r + 1 - t, P) * per;
            uint32_t rseg = (uint32_t)vfix_mod(r - t, P) * per;
            dep = (uint32_t)last;
            cs_send(s, r, nx, 0, cs_rng(CS_BUF_OUT, sseg, per), &dep, 1);
            /* after the reduce-scatter send of that segment */
            dep = vfix_ring_idx(P, inplace, 0, t, (flags & VFIX_RECV_FIRST) && t == 0);
            last = cs_recv(s, r, pv, 0, cs_rng(CS_BUF_OUT, rseg, per), &dep, 1);
        }
    }
    if (cs_sched_status(s) != CS_OK) {
        cs_sched_destroy(s);
        return NULL;
    }
    return s;
}

#endif /* VFIX_H */
