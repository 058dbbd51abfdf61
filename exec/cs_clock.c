/*
 * cs_clock.c - clock alignment for traces (cs_engine_clock_align): rank 0
 * is the reference; each other rank answers `rounds` pings from rank 0 with
 * its own CLOCK_MONOTONIC, and rank 0 keeps, per rank, the estimate
 * offset = (t_send + t_recv) / 2 - t_remote of the round with the smallest
 * round trip, then sends it to that rank.  Uses the control tag space of
 * the engine (the top bit of the caller's tag), never mixed with a run.
 * Waiting yields the CPU, so an oversubscribed peer gets to answer soon
 * and some round trips stay short.
 */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>

#include "cs_engine.h"
#include "cs_intr.h"
#include "tp_util.h"

#define CLOCK_TAG (1ull << (CS_TP_TAG_BITS - 1))
#define CLOCK_RESULT 0xfffffull /* the tag of the offset sent back: above any round */

/* This rank was interrupted (it tells its peers) or a peer left: the
 * status and message to fail with; CS_OK when neither. */
static int stopped(cs_tp_t *tp, cs_err_t *err)
{
    int sig = cs_intr_pending();
    char why[CS_TP_LEFT_MAX];
    if (sig) {
        tp->ops->leave(tp, sig);
        return cs_err_set(err, CS_ERR_INTERRUPTED, "rank %d: interrupted (%s)", tp->rank,
                          cs_intr_signame(sig));
    }
    if (tp->left_peer && cs_tp_left_why(tp, why, sizeof(why)) >= 0)
        return cs_err_set(err, CS_ERR_PEER, "rank %d: %s", tp->rank, why);
    return CS_OK;
}

/* Post one message and wait for it, bounded by the deadline. */
static int xfer(cs_tp_t *tp, int send, int peer, void *buf, size_t len, uint64_t tag,
                uint64_t deadline, cs_err_t *err)
{
    cs_tp_req_t req = {.peer = peer, .status = CS_OK};
    int st;
    for (;;) {
        st = send ? tp->ops->isend(tp, peer, buf, len, NULL, tag, &req)
                  : tp->ops->irecv(tp, peer, buf, len, NULL, tag, &req);
        if (st != CS_AGAIN)
            break;
        cs_tp_req_t *d;
        if (tp->ops->poll(tp, &d, 1) < 0 || cs_now_ns() > deadline)
            return cs_err_set(err, CS_ERR_TIMEOUT, "clock alignment: cannot post to rank %d", peer);
    }
    if (st < 0)
        return cs_err_set(err, st, "clock alignment with rank %d: %s", peer, cs_status_str(st));
    while (req.status == CS_INPROGRESS) { /* a send may have completed inline */
        cs_tp_req_t *d = NULL;
        int k = tp->ops->poll(tp, &d, 1);
        if (k < 0)
            return cs_err_set(err, k, "clock alignment: %s", cs_status_str(k));
        if (k == 1 && d == &req)
            break;
        if (k == 0)
            sched_yield(); /* ranks often outnumber cores: let the peer answer */
        if (k == 0 && (st = stopped(tp, err)) != CS_OK)
            return st; /* the request is abandoned: only close follows */
        if (cs_now_ns() > deadline) {
            tp->ops->cancel(tp, &req);
            return cs_err_set(err, CS_ERR_TIMEOUT, "rank %d: clock alignment: waiting for rank %d",
                              tp->rank, peer);
        }
    }
    if (req.status == CS_ERR_PEER && (st = stopped(tp, err)) != CS_OK)
        return st;
    return req.status < 0 ? cs_err_set(err, req.status, "clock alignment with rank %d: %s", peer,
                                       cs_status_str(req.status))
                          : CS_OK;
}

int cs_engine_clock_align(cs_tp_t *tp, int rounds, double timeout_s, int64_t *offset_ns,
                          cs_err_t *err)
{
    uint64_t deadline = cs_now_ns() + (uint64_t)(timeout_s * 1e9);
    int st = CS_OK;
    if (rounds < 1)
        rounds = 1;
    if (tp->rank == 0) {
        for (int r = 1; r < tp->nranks && st == CS_OK; r++) {
            uint64_t best_rtt = UINT64_MAX;
            int64_t best = 0;
            for (int i = 0; i < rounds && st == CS_OK; i++) {
                uint64_t t0 = cs_now_ns(), remote = 0;
                st = xfer(tp, 1, r, &t0, sizeof(t0), CLOCK_TAG | (uint64_t)i, deadline, err);
                if (st == CS_OK)
                    st = xfer(tp, 0, r, &remote, sizeof(remote), CLOCK_TAG | (uint64_t)i,
                              deadline, err);
                uint64_t t1 = cs_now_ns();
                if (st == CS_OK && t1 - t0 < best_rtt) {
                    best_rtt = t1 - t0;
                    best = (int64_t)(t0 / 2 + t1 / 2) - (int64_t)remote;
                }
            }
            if (st == CS_OK)
                st = xfer(tp, 1, r, &best, sizeof(best), CLOCK_TAG | CLOCK_RESULT, deadline, err);
        }
        if (st == CS_OK)
            *offset_ns = 0;
        return st;
    }
    for (int i = 0; i < rounds && st == CS_OK; i++) {
        uint64_t ping = 0, mine;
        st = xfer(tp, 0, 0, &ping, sizeof(ping), CLOCK_TAG | (uint64_t)i, deadline, err);
        mine = cs_now_ns();
        if (st == CS_OK)
            st = xfer(tp, 1, 0, &mine, sizeof(mine), CLOCK_TAG | (uint64_t)i, deadline, err);
    }
    int64_t off = 0;
    if (st == CS_OK)
        st = xfer(tp, 0, 0, &off, sizeof(off), CLOCK_TAG | CLOCK_RESULT, deadline, err);
    if (st == CS_OK)
        *offset_ns = off;
    return st;
}
