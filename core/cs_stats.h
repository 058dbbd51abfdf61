/*
 * cs_stats.h - schedule statistics and the alpha-beta time of a schedule,
 * for `collstep stats` and for checking generators against their
 * closed-form costs.
 *
 * Volumes are fractions of the collective's full vector: a send of n chunks
 * counts n / C (C = s->nchunks), so ring allreduce sends 2(P-1)/P per rank
 * whatever its chunking.
 *
 * Alpha-beta time (cs_stats_ab_time): the schedule is simulated with one
 * full-duplex port per rank.  A matched send/receive pair of b bytes is one
 * transfer taking alpha + b*beta; it starts when both steps are ready (their
 * dependencies done), the sender's send port and the receiver's receive port
 * are both free.  Combining costs b*gamma on the combining rank, one
 * combination at a time per rank: a reduce step, and an rrecv after its
 * transfer (the ports are free again during the combination).  Copies and
 * nops are free.  A switch operation starts when every member's step is
 * ready and is store-and-forward through the switch, on the members' ports
 * like messages: each member with a source queues an up part on its send
 * port (alpha + b*beta, b its source's bytes); when every up part is done,
 * each member with a destination queues a down part on its receive port
 * (alpha + b*beta, b its destination's bytes).  A member's step is done
 * when its own parts are: after its down part, or after its up part when
 * it has no destination.  The switch reduces (no gamma on the ranks).  The
 * bound this reaches is the busiest member port's bytes times beta (NVLS
 * allreduce of S bytes on n members: S(1 + 1/n) beta on the send ports)
 * only when the schedule pipelines its operations finely enough for the
 * multicasts' down parts to overlap the load-reduces' up parts.  Waiting
 * transfers and parts
 * start greedily in time order: when ports
 * free or transfers become ready at time t, the candidates are tried in
 * order of (ready time, global step id of the send), which makes the result
 * deterministic.  Channel FIFO order is not enforced (ports serialise a
 * rank's messages anyway).  Bytes: `bytes` is the whole vector (nccl-tests
 * size); elements are 1 byte, so the block count is
 * cs_coll_block_count(coll, P, bytes, 1) and a range's size follows
 * cs_range_elems at that count (balanced chunks, integer bytes).
 * Cost of the event loop: O(E log E) for E steps, plus a scan of the
 * transfers waiting on a freed port (schedules that keep many transfers
 * waiting per rank, such as direct alltoall, cost more).
 */
#ifndef CS_STATS_H
#define CS_STATS_H

#include <stdint.h>

#include "cs_sched.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cs_rank_stats {
    uint32_t steps, sends, recvs; /* recvs: recv and rrecv steps */
    uint32_t reduces;             /* steps that combine: reduce and rrecv */
    uint32_t copies;
    double sent, recvd; /* fraction of the full vector (chunks / C) */
    uint32_t switches;  /* switch steps */
    double sw_up, sw_down; /* fraction of the full vector contributed to (sources) and
                              received from (destinations) switch operations */
} cs_rank_stats_t;

typedef struct cs_stats {
    cs_rank_stats_t *ranks; /* nranks entries, owned */
    double max_sent, max_recvd, total_sent;
    /* Communication events on the critical path of the combined graph: the
     * longest chain of matched pairs linked by step dependencies (steps
     * that can never run are left out). */
    uint32_t rounds;
    uint32_t max_steps; /* most steps of one rank */
    /* Switch operations (matched ones, by cs_swop_t), and the most one rank
     * contributes to / receives from them.  Rounds count an operation as
     * one communication event. */
    uint64_t sw_ops[CS_SW_COUNT];
    double max_sw_up, max_sw_down;
} cs_stats_t;

/* Fill *st (caller storage; free with cs_stats_fini).  Returns CS_OK,
 * CS_ERR_INVAL or CS_ERR_NOMEM; *st is written only on success. */
int cs_stats_compute(const cs_sched_t *s, cs_stats_t *st, cs_err_t *err);
/* Free what cs_stats_compute allocated; a zeroed or NULL st is fine. */
void cs_stats_fini(cs_stats_t *st);

/* Alpha-beta time in seconds of schedule `s` for a message of `bytes` bytes
 * (see the file comment), alpha seconds per message, beta seconds per byte,
 * gamma seconds per byte reduced.  Returns a negative value and fills err
 * on failure: CS_ERR_INVAL (negative parameters), CS_ERR_VERIFY (steps that
 * can never run), CS_ERR_NOMEM. */
double cs_stats_ab_time(const cs_sched_t *s, double bytes, double alpha, double beta,
                        double gamma, cs_err_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CS_STATS_H */
