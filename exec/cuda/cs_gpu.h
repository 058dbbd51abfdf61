/*
 * cs_gpu.h - the live executor on GPUs: NCCL communicator, CUDA reduction
 * kernels and the GPU step engine.  Built only when the CUDA Toolkit and
 * NCCL are found (CMake option CS_WITH_CUDA); users test CS_HAVE_NCCL.
 *
 * Device probe.  cs_gpu_device_count fails with CS_ERR_NODEVICE and the
 * message "no CUDA device/driver: cudaGetDeviceCount: <text> (<code>)" when
 * there is no driver (cudaErrorInsufficientDriver, 35) or no device.
 *
 * Communicator (cs_nccl.c).  cs_nccl_open is collective over the ranks of a
 * bootstrap: every rank probes its devices, the ranks agree (a rank without
 * a device makes all of them fail, naming it), each picks device
 * (local rank % device count) where the local rank is its index among the
 * ranks with the same host name, rank 0 creates the NCCL unique id and
 * ships it through cs_boot_allgather, and every rank calls
 * ncclCommInitRank.  NCCL does not allow two ranks on one GPU: more local
 * ranks than devices is CS_ERR_UNSUPPORTED.
 *
 * Engine (cs_engine_gpu.c).  Runs one rank's DAG of a schedule on device
 * memory (cudaMalloc'ed in, out, scratch and a staging slot per rrecv,
 * sized at create time for cfg.max_count).  Communication steps become
 * ncclSend / ncclRecv in group calls on the engine's comm stream; local
 * reduce / copy and the reduction of a received rrecv run on a second,
 * compute stream; CUDA events carry the dependencies between the two so
 * that a reduction overlaps with later, independent transfers.  Sends and
 * receives are grouped in levels computed over the whole schedule
 * (cs__gpu_plan): both halves of a message are in groups of the same index
 * on their two ranks, so the groups (which NCCL runs one after another per
 * rank) cannot wait in a circle, and inside a group the messages to a peer
 * are posted by (channel, position on the channel) on both sides, which is
 * how NCCL (matching by posting order per peer pair) pairs them right with
 * one communicator for all channels.  Price: a message may wait for
 * unrelated messages of the previous level of its rank.
 *
 * cs_gpu_engine_enqueue never blocks; cs_gpu_engine_wait blocks until the
 * enqueued work is done, bounded by cfg.timeout_s (CS_ERR_TIMEOUT, after
 * which the communicators are aborted and the engine must be destroyed).
 * All functions return a cs_status_t and fill err; out-params are written
 * only on success.
 */
#ifndef CS_GPU_H
#define CS_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "cs_boot.h"
#include "cs_dtype.h"
#include "cs_engine.h"
#include "cs_sched.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- devices and errors -------------------------------------------------- */

/* Number of CUDA devices (>= 1) or CS_ERR_NODEVICE with the message above. */
int cs_gpu_device_count(int *n, cs_err_t *err);
/* Conversions of foreign codes (cudaError_t, ncclResult_t) to cs_status_t. */
int cs__gpu_cuda_status(int cuda_err);
int cs__gpu_nccl_status(int nccl_res);
/* Fill err with "what: <cuda text> (<code>)"; returns the converted status. */
int cs__gpu_cuda_err(cs_err_t *err, int cuda_err, const char *what);

/* dst[i] = dst[i] op src[i] for i < n on device memory, enqueued on `stream`
 * (a cudaStream_t; NULL = legacy default stream).  dst and src must be
 * aligned to the element size (else cudaErrorMisalignedAddress, nothing
 * enqueued); any other alignments and any n are fine (cs_reduce_geom.h).
 * Returns a cudaError_t. */
int cs__gpu_reduce(void *dst, const void *src, size_t n, cs_dtype_t dt, cs_op_t op, void *stream);
/* The same, as a cs_status_t with err filled. */
int cs_gpu_reduce(void *dst, const void *src, size_t n, cs_dtype_t dt, cs_op_t op, void *stream,
                  cs_err_t *err);

/* Peak memory bandwidth of the current device in bytes/s (2 x memory clock
 * x bus width / 8), 0 when unknown. */
double cs_gpu_peak_bandwidth(void);

/* ---- the NCCL communicator ---------------------------------------------- */

typedef struct cs_nccl cs_nccl_t;

int cs_nccl_open(cs_boot_t *boot, cs_nccl_t **out, cs_err_t *err);
void cs_nccl_close(cs_nccl_t *c); /* NULL is fine; aborts when a run failed */
int cs_nccl_rank(const cs_nccl_t *c);
int cs_nccl_size(const cs_nccl_t *c);
int cs_nccl_device(const cs_nccl_t *c);
/* The communicator (an ncclComm_t). */
void *cs__nccl_comm(cs_nccl_t *c);
/* Mark the communicator failed (close aborts instead of destroying) and
 * report NCCL's asynchronous error of `comm`, if any, as a status. */
void cs__nccl_set_failed(cs_nccl_t *c);
int cs__nccl_async_error(void *comm, cs_err_t *err);

/* Enqueue NCCL's own collective for `desc` on the communicator: allreduce,
 * reduce-scatter, allgather, broadcast, reduce (ncclAllReduce ...) and
 * alltoall as grouped ncclSend/ncclRecv, with `count` elements per block
 * (cs_coll_block_count), from `in` to `out` (device memory laid out as the
 * schedule's in/out windows) on `stream`.  Does not block. */
int cs_nccl_baseline(cs_nccl_t *c, const cs_coll_desc_t *desc, cs_dtype_t dt, cs_op_t op,
                     uint64_t count, const void *in, void *out, void *stream, cs_err_t *err);

/* ---- the GPU engine ------------------------------------------------------ */

/* The level plan of `rank` (cs_plan_gpu.c): per step its group (-1 for
 * local steps), its phase H as seen by dependents and its position on its
 * channel.  Arrays of s->ranks[rank].nsteps entries.  CS_ERR_VERIFY when
 * messages do not pair up or the schedule deadlocks. */
int cs__gpu_plan(const cs_sched_t *s, int rank, int32_t *group, int32_t *H, uint32_t *seq,
                 cs_err_t *err);

/* Copy merging of one rank (cs_plan_gpu.c): copy steps with the same
 * dependency set (as a set), the same src and dst buffers and ranges that
 * continue each other in both become one copy, carried by the run's
 * smallest step index.  Fills, for every step i (arrays of rs->nsteps
 * entries): lead[i], the step that carries i (i itself when not merged),
 * and src[i] / dst[i], the ranges a carrier moves (a merged run's whole
 * ranges; every other step: its own).  *merged = steps merged away.  The
 * engine runs a carrier's merged ranges and makes every other member a
 * join on its carrier.  CS_OK, or CS_ERR_NOMEM with nothing written. */
int cs__gpu_merge_copies(const cs_rank_sched_t *rs, uint32_t *lead, cs_range_t *src,
                         cs_range_t *dst, uint32_t *merged, cs_err_t *err);

typedef struct cs_gpu_engine cs_gpu_engine_t;

/* cfg as for cs_engine_create (oversubscribed is ignored).  `s` and `c`
 * must outlive the engine.  Collective (splits communicators). */
int cs_gpu_engine_create(const cs_sched_t *s, cs_nccl_t *c, const cs_engine_config_t *cfg,
                         cs_gpu_engine_t **out, cs_err_t *err);
void cs_gpu_engine_destroy(cs_gpu_engine_t *e); /* NULL is fine */

/* Device memory of buffer `buf` and its elements for `count` per block. */
void *cs_gpu_engine_buf(cs_gpu_engine_t *e, int buf);
uint64_t cs_gpu_engine_buf_elems(const cs_gpu_engine_t *e, int buf, uint64_t count);
/* The engine's main stream (cudaStream_t): every run starts after what is
 * enqueued on it and ends on it. */
void *cs_gpu_engine_stream(cs_gpu_engine_t *e);
/* Blocking copies between host and buffer `buf` (first `bytes` bytes), and
 * a memset of it. */
int cs_gpu_engine_upload(cs_gpu_engine_t *e, int buf, const void *host, size_t bytes, cs_err_t *err);
int cs_gpu_engine_download(cs_gpu_engine_t *e, int buf, void *host, size_t bytes, cs_err_t *err);
int cs_gpu_engine_memset(cs_gpu_engine_t *e, int buf, int byte, size_t bytes, cs_err_t *err);

/* Enqueue one run with `count` elements per block (<= max_count). */
int cs_gpu_engine_enqueue(cs_gpu_engine_t *e, uint64_t count, cs_err_t *err);
/* Wait for everything enqueued on the main stream (timeout_s bound). */
int cs_gpu_engine_wait(cs_gpu_engine_t *e, cs_err_t *err);
/* enqueue + wait. */
int cs_gpu_engine_run(cs_gpu_engine_t *e, uint64_t count, cs_err_t *err);
/* Average seconds per run of `iters` back-to-back runs, measured with CUDA
 * events on the main stream.  baseline != 0 times NCCL's own collective
 * (cs_nccl_baseline from in to out) instead of the schedule. */
int cs_gpu_engine_time(cs_gpu_engine_t *e, uint64_t count, long iters, int baseline,
                       double *seconds, cs_err_t *err);

/* Number of communication groups of one run (levels), and of copy steps
 * merged into another copy (cs__gpu_merge_copies), for tests. */
uint32_t cs_gpu_engine_levels(const cs_gpu_engine_t *e);
uint32_t cs_gpu_engine_merged(const cs_gpu_engine_t *e);

#ifdef __cplusplus
}
#endif

#endif /* CS_GPU_H */
