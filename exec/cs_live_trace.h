/*
 * cs_live_trace.h - traces of live runs (`collstep run --trace DIR`) in the
 * schema of traces/cs_trace.h, so a live run and a simulated run of the
 * same schedule can be laid side by side.
 *
 * What is recorded, per message size: the LAST timed run of that size.
 * Every rank keeps per-step timestamps of that run (cs_engine_record_times)
 * and sends them to rank 0 over the bootstrap; rank 0 writes one trace
 * instance (a session: DIR whole or not at all; several sizes give
 * DIR/<algo>-<bytes>/ each and DIR/index.csv).
 *
 * Clocks.  At open every rank estimates the offset of its CLOCK_MONOTONIC
 * to rank 0's (cs_engine_clock_align, 32 ping-pongs, the one with the
 * shortest round trip wins); timestamps are shifted by it, so one time
 * axis holds all ranks.  On one machine the offsets are ~0.
 *
 * Hosts and tiers.  Each rank names its host: --trace-host, else the
 * hostname; ranks that share a hostname but not a network namespace (an
 * emulated cluster) are different hosts ("name#1", "name#2").  A transfer
 * between ranks of the same host is on tier "host", between hosts on tier
 * "network".  Links: one per ordered rank pair ("h0:r0->h1:r2").
 *
 * Transfers.  The k-th send of rank s to rank d on a channel matches the
 * k-th receive of d from s on that channel (the engine's matching).  A
 * transfer spans [max(send posted, receive posted), data landed at the
 * receiver]: the earliest moment a rendezvous protocol can move the bytes
 * to their arrival.  Steps keep the schema's fields (start = posted or
 * local work began, end = done).
 *
 * Link bandwidth (for utilization, not for bytes).  Per tier: the value
 * given (cfg.bw_host / cfg.bw_network, bytes/s), else measured: the highest
 * rate one transfer of at least 64 KiB on that tier reached in the traced
 * run (no such transfer: the highest rate of any; none: 1 GB/s).  The
 * summary's bandwidth_GBps says which value was used.
 *
 * All functions are collective over the ranks of the bootstrap (same
 * order everywhere) except close.  Only rank 0 touches the file system.
 */
#ifndef CS_LIVE_TRACE_H
#define CS_LIVE_TRACE_H

#include <stdint.h>

#include "cs_boot.h"
#include "cs_engine.h"
#include "cs_sched.h"
#include "cs_trace.h"
#include "cs_transport.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cs_live_trace cs_live_trace_t;

typedef struct cs_live_trace_config {
    const char *dir;        /* output directory (rank 0) */
    cs_trace_opts_t opts;   /* sampling, buckets, plot, force (an existing dir:
                               see "Safety" of sessions in cs_trace.h) */
    const char *host;       /* this rank's host name; NULL: detected */
    double bw_host;         /* bytes/s of "host" links; <= 0: measured */
    double bw_network;      /* bytes/s of "network" links; <= 0: measured */
    const char *model;      /* what ran, e.g. "ofi/shm" (meta.model) */
    int ninstances;         /* message sizes that will be recorded */
    double timeout_s;       /* clock alignment bound */
} cs_live_trace_config_t;

/* Host names, clock alignment; rank 0 opens the session, which refuses a
 * DIR that is not a collstep trace before anything runs (the message is
 * rank 0's; the other ranks say that opening the trace failed).  `s` must
 * outlive the trace.  A failure on any rank fails on every rank. */
int cs_live_trace_open(const cs_live_trace_config_t *cfg, cs_boot_t *b, cs_tp_t *tp,
                       const cs_sched_t *s, cs_dtype_t dt, cs_live_trace_t **out,
                       cs_err_t *err);
void cs_live_trace_close(cs_live_trace_t *lt); /* uncommitted: nothing is left */

/* This rank's clock offset to rank 0 (ns to add) and host index. */
int64_t cs_live_trace_offset_ns(const cs_live_trace_t *lt);
/* "hostA x2, hostB x1": the host set (results' platform column). */
const char *cs_live_trace_hosts(const cs_live_trace_t *lt);
int cs_live_trace_nhosts(const cs_live_trace_t *lt);

/* After the last timed run of one size (its timestamps recorded): gather
 * every rank's step times to rank 0, which writes the instance. */
int cs_live_trace_record(cs_live_trace_t *lt, cs_engine_t *e, uint64_t bytes, uint64_t count,
                         cs_err_t *err);

/* Rank 0: plots, index, rename DIR into place.  Others: nothing. */
int cs_live_trace_commit(cs_live_trace_t *lt, cs_err_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CS_LIVE_TRACE_H */
