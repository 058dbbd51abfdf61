/*
 * cs_timed.h - the timed runs of a live job: warm-up runs of an engine,
 * then timed runs, by one of two protocols.  `collstep run` times back to
 * back, `collstep validate` on aligned clocks; programs may use either.
 *
 *   CS_TIMED_BACK_TO_BACK  after the warm-up a barrier, then `iters` runs
 *                          one after the other with one clock read before
 *                          the first and one after the last: res->mean is
 *                          this rank's time per run.  Nothing is read or
 *                          called between two runs (small messages would
 *                          pay for it): what nccl-tests reports.
 *   CS_TIMED_ALIGNED       every rank's clock is aligned to rank 0's once
 *                          (cs_timed_open: cs_engine_clock_align), and
 *                          every timed run starts at a common moment:
 *                          rank 0 names a moment ahead on its clock, the
 *                          bootstrap's allgather carries it, every rank
 *                          waits for it.  res->start[i] and res->end[i]
 *                          are run i's start and end on rank 0's clock,
 *                          res->cpu the CPU seconds the process spent in
 *                          the runs and res->runq the seconds its thread
 *                          waited for a core while runnable (Linux
 *                          schedstat; 0 elsewhere).  cs_timed_gather then
 *                          gives every run's time over the job: the last
 *                          end minus the first start (a simulator starts
 *                          every rank together: a rank that starts late
 *                          counts from the first one's start).
 *
 * Why a common moment.  A barrier releases the ranks one at a time: on an
 * emulated cluster (8 ranks on 2 cores) the last rank started 1-31 ms
 * after the first, a wait a simulation, whose ranks all start at 0, never
 * sees.  A rank that learns the moment after it passed starts at once and
 * says how late it was at the next start; rank 0 then lengthens its lead
 * (twice, plus the lateness, up to 1 s) and halves it again (down to 5
 * ms) after a start nobody was late for.  A moment more than 2 s ahead
 * means the clock alignment is wrong: the rank fails (CS_ERR_INTERNAL)
 * rather than wait.
 *
 * With trace_last the last timed run keeps per-step timestamps
 * (cs_engine_record_times; exec/cs_live_trace.h records them).  Every
 * rank calls every function here alike (they are collective over the
 * bootstrap).  Statuses are cs_status_t with err filled: an engine's or
 * the bootstrap's failure, CS_ERR_INTERRUPTED on a signal (cs_intr.h).
 * A failure met by one rank alone (its engine's run, a signal, a clock
 * more than 2 s ahead) ends the call on that rank only: the others learn
 * it from their engines' and the bootstrap's timeouts, so a caller ends
 * the job on any failure (cs_job_agree / cs_job_fail), never calls again.
 */
#ifndef CS_TIMED_H
#define CS_TIMED_H

#include <stdint.h>

#include "cs_boot.h"
#include "cs_engine.h"
#include "cs_status.h"
#include "cs_transport.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cs_timed_mode {
    CS_TIMED_BACK_TO_BACK, /* runs one after another: this rank's mean */
    CS_TIMED_ALIGNED       /* every run started at a common moment: per-run times */
} cs_timed_mode_t;

typedef struct cs_timed cs_timed_t;

/* The protocol of a job: mode, its bootstrap, and (CS_TIMED_ALIGNED) the
 * transport the clocks are aligned over (peers' addresses inserted) with
 * the no-progress limit timeout_s.  Collective; *out on success. */
int cs_timed_open(cs_timed_mode_t mode, cs_boot_t *boot, cs_tp_t *tp, double timeout_s,
                  cs_timed_t **out, cs_err_t *err);
void cs_timed_close(cs_timed_t *t); /* NULL is fine */

/* What one rank measured of `iters` timed runs. */
typedef struct cs_timed_res {
    double mean;          /* back to back: seconds per run */
    double *start, *end;  /* aligned: [iters] seconds on rank 0's clock (the caller's) */
    double cpu, runq;     /* aligned: seconds over the timed runs */
} cs_timed_res_t;

/* `warmup` untimed runs of e with `count` elements per block, then
 * `iters` (>= 1) timed ones by t's protocol into *res (aligned: res->start
 * and res->end hold iters entries). */
int cs_timed_run(cs_timed_t *t, cs_engine_t *e, uint64_t count, long warmup, long iters,
                 int trace_last, cs_timed_res_t *res, cs_err_t *err);

/* Aligned: every rank's res of cs_timed_run over the bootstrap, on every
 * rank: run_s[i] the last end minus the first start of run i, skew_s[i]
 * the last start minus the first (both [iters], the caller's), *cpu and
 * *runq the means per run over the ranks. */
int cs_timed_gather(cs_timed_t *t, const cs_timed_res_t *res, long iters, double *run_s,
                    double *skew_s, double *cpu, double *runq, cs_err_t *err);

/* Back to back, over the job: every rank's mean (res->mean, or a time of
 * its own such as the GPU engine's) and a count (wrong elements, say) over
 * the bootstrap, on every rank: *slowest the largest mean (the slowest
 * rank's average per run: what `collstep run` reports), *sum the counts'
 * sum. */
int cs_timed_slowest(cs_boot_t *boot, double mean, uint64_t count, double *slowest,
                     long long *sum, cs_err_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CS_TIMED_H */
