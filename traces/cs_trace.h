/*
 * cs_trace.h - per-step and per-link / per-tier utilization traces, one
 * schema for both backends (simulator and live runs).
 *
 * A trace records one run of one collective (one instance: schedule and
 * message size).  A backend feeds it while the run goes:
 *   - steps: (rank, step index, kind, peer, bytes, start, end), streamed
 *     straight to steps.csv and trace.json (nothing is kept in memory), for
 *     the sampled ranks only (opts.ranks);
 *   - transfers: bytes moved from a source to a destination over a route of
 *     links during [start, end]; a transfer is resolved to link ids once per
 *     (src rank, dst rank) pair through the router callback and cached.
 * Times are in seconds on the backend's clock; the trace subtracts t0 (given
 * at creation) so every trace starts at 0.
 *
 * Per-link accounting.  Exact bytes per link: every transfer adds its bytes
 * to every link of its route (a split-duplex direction is its own link).
 * Utilization over time: each transfer is spread over its data phase
 * [start + route latency, end] at its average rate and deposited into time
 * buckets of width D (the resolution).  D is not known in advance: buckets
 * start at 1 ns and double (pairwise merge, lazily per link) whenever time
 * outgrows opts.buckets of them, so a run of length T ends with between
 * opts.buckets/2 and opts.buckets buckets, D = 2^k ns.  When flows shared a
 * link with changing rates (max-min), average rates can exceed capacity in a
 * bucket; the finishing pass "levels" each link like a fluid queue: a bucket
 * over bandwidth x D passes its excess on to the next bucket (and a residue
 * left at the end is put back, from the last bucket backwards, into spare
 * capacity).  The result never exceeds 1, conserves every link's bytes
 * exactly (up to rounding), and moves bytes in time only where the average
 * rate was not the real one; the bytes moved are reported (shifted_bytes).
 * In the ideal model without contention a flow's average rate over its data
 * phase is its real SimGrid rate, so nothing moves.
 *
 * Per-tier aggregation (links of a tier = directional links of that tier
 * that carried at least one byte):
 *   bytes          sum over the tier's links (a transfer counts once per hop)
 *   mean_util      bytes / (sum of the links' bandwidths x T)
 *   peak_util      the highest bucket utilization of any of its links
 *   busy_fraction  fraction of the buckets in which some link of it moved data
 *   busiest link   its link with the highest mean utilization (bytes / (bw T))
 * The bottleneck tier is the tier whose busiest link has the highest mean
 * utilization over the run: the tier whose most loaded link limits the run.
 * Reductions: a backend that charges them (the simulator: bytes / host
 * speed on each rank's device stream) reports each step's device seconds
 * (cs_trace_add_compute); the busiest rank's device busy fraction (its
 * seconds / T) is compared with that link utilization, and when it is
 * higher the bottleneck is named "reduction": the ranks' reductions, not a
 * link, limit the run.
 *
 * Lifetime and errors: create / feed / cs_trace_finish / write / destroy.
 * Feeding functions return CS_OK or a negative status (out of memory, I/O);
 * after a failure the trace stays failed and cs_trace_finish reports it.
 * A trace is not thread safe (the simulator calls it from one thread).
 */
#ifndef CS_TRACE_H
#define CS_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "cs_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CS_TRACE_SCHEMA "collstep-trace/1"

typedef enum { CS_TRACE_SIM = 0, CS_TRACE_LIVE } cs_trace_backend_t;

/* What ran.  Strings are copied. */
typedef struct cs_trace_meta {
    int backend;        /* cs_trace_backend_t */
    char platform[64];  /* preset or file, or the live transport's host set */
    char coll[32];      /* "allreduce", ... */
    char algo[64];      /* generator name or schedule file */
    char model[32];     /* "ideal", "calibrated", or the live transport */
    uint64_t bytes;     /* message size (nccl-tests convention) */
    int nranks;
} cs_trace_meta_t;

typedef struct cs_trace_opts {
    int ranks;        /* keep step slices of this many ranks, evenly spaced; 0: all */
    int link_tracks;  /* per-link counter tracks in trace.json for the N busiest links */
    int buckets;      /* most time buckets of the utilization series (>= 16) */
    int heatmap;      /* links drawn in the heatmap of the plot (busiest first) */
    int plot;         /* 1: run gnuplot on the session's commit */
    int force;        /* sessions: 1 also replaces an empty directory or an unmarked
                         trace of an older collstep (see "sessions" below); never a
                         file or a directory holding anything else */
} cs_trace_opts_t;

/* Defaults: 64 ranks, no link tracks, 1024 buckets, heatmap of 32, plot,
 * no force. */
void cs_trace_opts_init(cs_trace_opts_t *o);

/* A step as it ran (the same fields as the simulator's records). */
typedef struct cs_trace_step {
    int rank;
    uint32_t step;
    int kind;      /* cs_step_kind_t */
    int peer;      /* -1 for local steps */
    uint64_t bytes;
    double start, end;
} cs_trace_step_t;

/* One link of a route, as a router reports it. */
typedef struct cs_trace_hop {
    const char *name;
    const char *tier;  /* "" when unknown */
    double bandwidth;  /* bytes/s */
    double latency;    /* seconds */
} cs_trace_hop_t;

/* Route from host src to host dst: write up to max hops, the route's
 * length to *n (may exceed max: the trace calls again with more room).
 * Returns CS_OK or a negative status. */
typedef int (*cs_trace_router_fn)(void *ctx, const char *src, const char *dst,
                                  cs_trace_hop_t *hops, int max, int *n);

typedef struct cs_trace cs_trace_t;

/* Create a trace writing its streamed files into directory `dir` (which
 * must exist).  t0 is the run's start on the backend's clock. */
int cs_trace_create(const char *dir, const cs_trace_meta_t *meta, const cs_trace_opts_t *opts,
                    double t0, cs_trace_t **out, cs_err_t *err);
void cs_trace_destroy(cs_trace_t *t);

void cs_trace_set_router(cs_trace_t *t, cs_trace_router_fn fn, void *ctx);

/* Intern a link; *id is its index (stable for the trace's life). */
int cs_trace_link(cs_trace_t *t, const char *name, const char *tier, double bandwidth,
                  double latency, uint32_t *id);

int cs_trace_add_step(cs_trace_t *t, const cs_trace_step_t *s);
/* Seconds rank `rank`'s device spent reducing for one step (any rank, kept
 * for steps or not). */
int cs_trace_add_compute(cs_trace_t *t, int rank, double seconds);
/* A switch operation (in-network reduction or multicast) as it ran: the
 * switch it ran on, its kind ("allreduce", "reduce", "multicast"), the
 * bytes its members sent up and received down, and the seconds of the
 * switch's reduction engine.  Each appears as a slice on its switch's
 * track in trace.json; summary.json sums them per switch ("switches").
 * Its transfers are recorded as transfers (cs_trace_add_xfer). */
typedef struct cs_trace_switch_op {
    const char *sw;     /* the switch (its host) */
    const char *op;
    int nmembers;
    uint64_t bytes_up, bytes_down;
    double start, end;  /* backend clock */
    double reduce;      /* seconds */
} cs_trace_switch_op_t;
int cs_trace_add_switch(cs_trace_t *t, const cs_trace_switch_op_t *o);
/* Per switch after cs_trace_finish: name, operations, bytes up and down,
 * reduction seconds; i < cs_trace_nswitches. */
typedef struct cs_trace_switch_stat {
    const char *name;
    uint64_t ops, bytes_up, bytes_down;
    double reduce;
} cs_trace_switch_stat_t;
int cs_trace_nswitches(const cs_trace_t *t);
const cs_trace_switch_stat_t *cs_trace_switch_stat(const cs_trace_t *t, int i);

/* A transfer over links ids[0..n) (data phase: see the header comment). */
int cs_trace_add_xfer_links(cs_trace_t *t, const uint32_t *ids, int n, uint64_t bytes,
                            double start, double end);
/* A transfer between ranks placed on hosts: the route is asked once per
 * rank pair from the router (no router: CS_ERR_INVAL). */
int cs_trace_add_xfer(cs_trace_t *t, int src, int dst, const char *src_host,
                      const char *dst_host, uint64_t bytes, double start, double end);

/* End of the run at t_end (backend clock): level, aggregate.  After it the
 * figures below are valid and no more records are accepted. */
int cs_trace_finish(cs_trace_t *t, double t_end, cs_err_t *err);

/* ---- figures (after cs_trace_finish) ------------------------------------ */

typedef struct cs_trace_link_stat {
    const char *name;
    const char *tier;
    double bandwidth, latency;
    uint64_t bytes;        /* exact */
    double mean_util, peak_util, busy_fraction;
    double shifted_bytes;  /* bytes moved in time by leveling */
} cs_trace_link_stat_t;

#define CS_TRACE_PROFILE 20 /* slices of the run in the summary's profiles */

typedef struct cs_trace_tier_stat {
    const char *name;
    uint32_t nlinks;
    double bytes;           /* sum of the links' bytes */
    double bandwidth;       /* sum of the links' bandwidths */
    double mean_util, peak_util, busy_fraction;
    int busiest;            /* link index */
    double busiest_util;    /* its mean utilization */
    double shifted_bytes;
    double profile_busy[CS_TRACE_PROFILE]; /* busy fraction per slice */
    double profile_util[CS_TRACE_PROFILE]; /* busiest link's utilization per slice */
} cs_trace_tier_stat_t;

double cs_trace_duration(const cs_trace_t *t);  /* T, seconds */
double cs_trace_resolution(const cs_trace_t *t); /* D, seconds */
int cs_trace_nbuckets(const cs_trace_t *t);      /* buckets covering [0, T] */
uint32_t cs_trace_nlinks(const cs_trace_t *t);
const cs_trace_link_stat_t *cs_trace_link_stat(const cs_trace_t *t, uint32_t i);
/* Utilization of link i in bucket k (leveled: <= 1). */
double cs_trace_link_util(const cs_trace_t *t, uint32_t i, int k);
int cs_trace_ntiers(const cs_trace_t *t);
const cs_trace_tier_stat_t *cs_trace_tier_stat(const cs_trace_t *t, int i);
/* Index of the tier whose busiest link has the highest mean utilization,
 * -1 when nothing moved. */
int cs_trace_bottleneck(const cs_trace_t *t);
/* The bottleneck's name: "reduction" when the busiest rank's device was
 * busier than every link (see the top), else that tier's name; NULL when
 * nothing moved or reduced. */
const char *cs_trace_bottleneck_name(const cs_trace_t *t);
/* Reductions: the busiest rank (-1: none charged), its device seconds and
 * busy fraction of the run. */
int cs_trace_reduction(const cs_trace_t *t, double *seconds, double *fraction);
const cs_trace_meta_t *cs_trace_meta(const cs_trace_t *t);
uint64_t cs_trace_steps_seen(const cs_trace_t *t);
uint64_t cs_trace_xfers_seen(const cs_trace_t *t);

/* ---- files (cs_trace_write.c) ---------------------------------------- */

/* Complete the streamed files and write the rest into the trace's
 * directory: trace.json (closed), links.csv, tiers.csv, summary.json,
 * heatmap.dat and plot.gp (the gnuplot script; cs_trace_plot runs it). */
int cs_trace_write(cs_trace_t *t, cs_err_t *err);
/* Run gnuplot on dir/plot.gp in dir; writes utilization.png.  CS_ERR_IO
 * when gnuplot is missing or fails. */
int cs_trace_plot(const char *dir, cs_err_t *err);

/* ---- sessions: a whole output directory, written whole or not at all ----- */

/* A session owns DIR.tmp.<pid>/ until it is committed, then renames it to
 * DIR.  With one instance the files lie in DIR; with several, each instance
 * has DIR/<algo>-<bytes>/ and DIR/index.csv lists them (dir, algo, coll,
 * bytes, ranks, time_us, bottleneck).
 *
 * Safety (core/cs_out.h; checked at open, so a refusal comes before the
 * run, and again at commit).  Every trace directory holds the marker file
 * CS_TRACE_MARKER ("collstep trace directory, written by collstep VERSION").
 * An existing DIR is replaced only when it holds that marker; a regular
 * file, a symbolic link, or a directory without the marker is refused with
 * CS_ERR_IO and left untouched: "DIR is a file, not a trace directory; ...",
 * "DIR exists and is not a collstep trace directory (no .collstep-trace
 * marker); choose another path or remove it yourself".  With opts.force an
 * empty directory is replaced too, and so is an unmarked directory that
 * holds only the files a trace writes (a trace of an older collstep, with a
 * summary.json); a file or any other directory never is.  The temporary
 * tree is removed on every failure and by close; after a kill, a parent
 * that knows the pid removes it with cs_out_cleanup_pid(DIR, pid, 1). */
#define CS_TRACE_MARKER ".collstep-trace"
typedef struct cs_trace_session cs_trace_session_t;

struct cs_out_kind;
/* What a session writes, for cs_out_begin_dir (marker, legacy traces). */
extern const struct cs_out_kind cs_trace_out_kind;
/* 1 when directory `path` holds only what a trace session writes (files,
 * instance directories, the marker): a trace of any collstep. */
int cs_trace_dir_is_ours(const char *path);
/* 1 for a file a user makes again in a trace (utilization.png). */
int cs_trace_remade(const char *name);

int cs_trace_session_open(const char *dir, const cs_trace_opts_t *opts, int ninstances,
                          cs_trace_session_t **out, cs_err_t *err);
/* Start the next instance's trace (owned by the session). */
int cs_trace_session_begin(cs_trace_session_t *s, const cs_trace_meta_t *meta, double t0,
                           cs_trace_router_fn router, void *router_ctx, cs_trace_t **out,
                           cs_err_t *err);
/* The current trace: NULL between instances. */
cs_trace_t *cs_trace_session_current(cs_trace_session_t *s);
/* Finish, write and free the current instance's trace. */
int cs_trace_session_end(cs_trace_session_t *s, double t_end, cs_err_t *err);
/* Plots, index, rename into place. */
int cs_trace_session_commit(cs_trace_session_t *s, cs_err_t *err);
/* Free; an uncommitted session removes its temporary directory. */
void cs_trace_session_close(cs_trace_session_t *s);
/* Errors met inside observer callbacks, which cannot return them: _fail
 * records the first, _status reports it (and commit refuses to go on). */
void cs_trace_session_fail(cs_trace_session_t *s, const cs_err_t *e);
int cs_trace_session_status(const cs_trace_session_t *s, cs_err_t *err);

/* Remove a directory tree (files and directories only; no links followed).
 * For tests and tools; sessions remove only their own trees (cs_out). */
int cs_trace_rmtree(const char *path);

/* ---- reading back (cs_trace_read.c): `collstep trace` ------------------ */

typedef enum { CS_TRACE_FMT_TABLE = 0, CS_TRACE_FMT_CSV, CS_TRACE_FMT_JSON } cs_trace_fmt_t;

/* Summarise the trace in `dir` (one instance, or a session directory with
 * index.csv: every instance) from its CSV files: per-tier table, the
 * bottleneck, and the `nlinks` busiest links. */
int cs_trace_summarize(const char *dir, cs_trace_fmt_t fmt, int nlinks, FILE *f, cs_err_t *err);

/* The per-tier figures of one instance directory, read back as
 * cs_trace_summarize reads them (links.csv, tiers.csv, summary.json), for
 * programs that compare traces (`collstep validate --trace`). */
typedef struct cs_trace_tier_read {
    char name[32];
    uint32_t nlinks;
    double bytes;         /* sum over the tier's links (a transfer counts once per hop) */
    double bandwidth;     /* bytes/s, sum over its links */
    double mean_util;     /* bytes / (bandwidth x duration) */
    double peak_util;     /* highest bucket utilization of any of its links */
    double busy_fraction; /* buckets in which some link of it moved data */
    double busiest_util;  /* its busiest link's mean utilization */
} cs_trace_tier_read_t;

/* Up to `max` tiers into tiers[], their number into *ntiers (all of them,
 * may exceed max), the run's duration into *time_us.  CS_ERR_IO when the
 * directory is not a trace instance, CS_ERR_PARSE for malformed files. */
int cs_trace_read_tiers(const char *dir, cs_trace_tier_read_t *tiers, int max, int *ntiers,
                        double *time_us, cs_err_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CS_TRACE_H */
