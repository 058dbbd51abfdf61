/*
 * cs_engine.h - the live step engine: runs one rank's DAG of a schedule
 * over a transport, on real host memory.
 *
 * Binding.  At create time the engine allocates this rank's in, out and
 * scratch buffers for the largest element count it will run (cfg.max_count
 * elements per block, see cs_coll_block_count), a staging area for every
 * recv-reduce, per-step request slots and queues, and registers all memory
 * with the transport; a transport with a memory interface (tp->mem, e.g.
 * shm) provides the buffers itself.  Nothing is allocated while a
 * collective runs.
 *
 * Warm-up.  Then create zeroes every buffer (its
 * pages are touched now, not in a timed run) and runs the collective once
 * at 1, 4, 16, ... elements per block up to max_count: every peer this
 * rank talks to is connected (libfabric's ofi_rxm connects at the first
 * message to a peer: 20 to 30 ms on loopback, landing in the first timed
 * run), every protocol the timed runs will use (inline, eager, segmented,
 * rendezvous) has carried a message once, and the shm transport has
 * mapped every peer buffer it copies from.  So create is collective: every
 * rank of the schedule must call it, and it fails like cs_engine_run when
 * a peer does not (timeout, CS_ERR_PEER, CS_ERR_INTERRUPTED).  A rank that
 * cannot allocate its memory leaves the transport (leave, signal 0): the
 * others fail at once with "rank R left the job"; its transport can then
 * only be closed.
 *
 * Running.  cs_engine_run(count) executes the DAG once: a step is issued as
 * soon as its dependencies are done and, for sends and receives, once the
 * previous step on the same (peer, channel, direction) has been posted
 * (posting order = schedule order); the receive of a recv-reduce (which
 * lands in its staging slot) is posted without waiting for dependencies,
 * only its reduction waits for them.  The wire tag of a message is
 * (channel, sequence number on that channel), so messages match in schedule
 * order.  Receive-reduce lands in its staging slot and is then combined
 * with cs_reduce_fn; local reduce / copy work is done in slices between
 * polls, so no step holds up the others for long.  A run fails (negative
 * status, err names the peer) on an error completion, or when no operation
 * completed for cfg.timeout_s seconds ("waiting for rank N").
 *
 * After a failure the engine must only be destroyed.
 */
#ifndef CS_ENGINE_H
#define CS_ENGINE_H

#include <stdint.h>

#include "cs_dtype.h"
#include "cs_sched.h"
#include "cs_transport.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cs_engine cs_engine_t;

typedef struct cs_engine_config {
    cs_dtype_t dtype;
    cs_op_t op;
    uint64_t max_count; /* largest count per block passed to cs_engine_run */
    double timeout_s;   /* no-progress limit; <= 0: 60 s */
    int oversubscribed; /* more ranks than cores here: yield the CPU as soon as idle
                         * instead of spinning (spinning wins latency otherwise) */
} cs_engine_config_t;

/* Per-step timestamps of the last run (when recording), ns since the run
 * started (cs_engine_run_start_ns).  t_start: a send / recv was posted, or
 * local work began; t_data: the transfer of a send / recv / rrecv finished
 * (for rrecv, before its reduction); t_end: the step was done.  All zero
 * for steps not run. */
typedef struct cs_step_time {
    uint64_t t_start, t_data, t_end;
} cs_step_time_t;

/* `s` must stay alive as long as the engine; `tp` must have its peers'
 * addresses inserted.  Returns a cs_status_t, *out only on success. */
int cs_engine_create(const cs_sched_t *s, int rank, cs_tp_t *tp, const cs_engine_config_t *cfg,
                     cs_engine_t **out, cs_err_t *err);
void cs_engine_destroy(cs_engine_t *e); /* NULL is fine */

/* The bytes cs_engine_create allocates for rank `rank`'s buffers and
 * staging area with cfg.max_count = max_count (each area rounded up to a
 * page), without allocating them: for a command to refuse a size that
 * cannot fit before any transport opens.  < 0 when it cannot tell (out of
 * memory for the estimate itself). */
double cs_engine_mem_estimate(const cs_sched_t *s, int rank, uint64_t max_count, cs_dtype_t dt);

/* Memory of buffer `buf` (CS_BUF_IN, CS_BUF_OUT, scratch ids) and its
 * number of elements for `count` elements per block. */
void *cs_engine_buf(cs_engine_t *e, int buf);
uint64_t cs_engine_buf_elems(const cs_engine_t *e, int buf, uint64_t count);

/* Run the collective once with `count` elements per block (<= max_count).
 * Blocking; CS_OK or a negative status with err filled. */
int cs_engine_run(cs_engine_t *e, uint64_t count, cs_err_t *err);

/* Keep per-step timestamps from the next run on (on != 0).  Off by default:
 * a run then reads the clock only while idle instead of a few times per
 * step. */
void cs_engine_record_times(cs_engine_t *e, int on);
const cs_step_time_t *cs_engine_step_times(const cs_engine_t *e, uint32_t *nsteps);

/* CLOCK_MONOTONIC (ns) at the start of the last run that recorded per-step
 * timestamps (cs_engine_record_times); 0 after a run that did not. */
uint64_t cs_engine_run_start_ns(const cs_engine_t *e);

/* Clock alignment for traces: rank 0 is the reference; every other rank
 * estimates the offset of its CLOCK_MONOTONIC to rank 0's by `rounds`
 * ping-pongs (the round with the smallest round trip wins).  *offset_ns is
 * what to add to a local timestamp (0 on rank 0).  Collective over all
 * ranks of the transport; call between runs. */
int cs_engine_clock_align(cs_tp_t *tp, int rounds, double timeout_s, int64_t *offset_ns,
                          cs_err_t *err);

/* CLOCK_MONOTONIC in ns. */
uint64_t cs_engine_now_ns(void);

#ifdef __cplusplus
}
#endif

#endif /* CS_ENGINE_H */
