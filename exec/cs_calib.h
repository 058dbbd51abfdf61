/*
 * cs_calib.h - measurement kernels of `collstep calibrate`, over any
 * transport of cs_transport.h (ofi, shm, tcp).
 *
 * Every kernel is collective: all ranks call it in the same order with the
 * same arguments (the plan is computed identically on every rank), ranks
 * that take no part return at once or only join its barriers.  Tags come
 * from a counter every rank advances the same way, so a late message of
 * one kernel never matches another's receive.
 *
 *   pingpong   ranks a and b: `warm` untimed round trips of `bytes`, then
 *              timed ones until min_iters are done and budget_s has passed,
 *              or max_iters; rank a records each round trip / 2 (one-way
 *              time) and decides when to stop (the first byte of a ping
 *              tells b whether another follows).  Each side posts its next receive before it sends, so
 *              a receive is posted before its message arrives (the
 *              engine's order in a collective; tcp then skips its
 *              request-to-send round trip above 64 KiB).
 *   flows      concurrent one-way transfers src[i] -> dst[i] (a rank sends
 *              at most one flow and receives at most one): per iteration
 *              receives are posted, every rank meets at a barrier, the
 *              senders send; the iteration's time is the largest time from
 *              the barrier to a rank's last completion.  Full duplex
 *              (a->b and b->a at once) and the NIC a host's ranks share
 *              (every rank of a host sending off it at once) are flows.
 *   reduce     this rank alone: reduce `bytes` of src into dst with
 *              cs_reduce_fn (the engine's reduction), `iters` times.
 *
 * Failures: CS_ERR_PEER naming the rank that died or left, CS_ERR_TIMEOUT
 * when nothing completes for the timeout, CS_ERR_INTERRUPTED on a signal
 * (cs_intr.h).  After a failure only cs_calib_close.
 */
#ifndef CS_CALIB_H
#define CS_CALIB_H

#include <stddef.h>
#include <stdint.h>

#include "cs_boot.h"
#include "cs_dtype.h"
#include "cs_transport.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cs_calib cs_calib_t;

/* Buffers for messages up to max_bytes (a send and a receive area,
 * registered with tp or allocated by its memory interface).  tp must have
 * its peers' addresses inserted (cs_boot_connect). */
int cs_calib_open(cs_tp_t *tp, cs_boot_t *boot, size_t max_bytes, double timeout_s,
                  cs_calib_t **out, cs_err_t *err);
void cs_calib_close(cs_calib_t *c); /* NULL is fine */

/* On rank a: t[0..*iters) (seconds, one way; t holds max_iters) and
 * *iters; untouched elsewhere.  bytes >= 1. */
int cs_calib_pingpong(cs_calib_t *c, int a, int b, size_t bytes, int warm, int min_iters,
                      int max_iters, double budget_s, double *t, int *iters, cs_err_t *err);

/* t[0..iters) on every rank (seconds per iteration, the same everywhere);
 * rank_t[0..nranks) (may be NULL): each rank's median time from the
 * barrier to its receive's completion, its flow's time (a rank that only
 * sends: to its send's completion; a rank's own send does not count, so
 * a receiver whose send is slower still shows its flow); medians over the
 * first 64 iterations. */
int cs_calib_flows(cs_calib_t *c, const int *src, const int *dst, int nflows, size_t bytes,
                   int warm, int iters, double *t, double *rank_t, cs_err_t *err);

/* t[0..iters): seconds per reduction of `bytes` (local; no communication). */
int cs_calib_reduce(size_t bytes, cs_dtype_t dt, cs_op_t op, int iters, double *t, cs_err_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CS_CALIB_H */
