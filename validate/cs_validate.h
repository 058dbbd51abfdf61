/*
 * cs_validate.h - validation as a library: run schedules live, simulate the
 * same schedules on platforms, and compare.  `collstep validate` is its
 * front end (docs/validation.md says how to read the figures).
 *
 *   what      cs_validate_t: the schedules (algorithms) x the sizes, the
 *             cluster (ranks, nodes), the platforms predicted with, the
 *             runs' counts; the results live in the same object
 *             (cs_validate_alloc)
 *   live      cs_validate_live, every rank of a job whose transport is
 *             connected (exec/cs_job.h): per algorithm an engine, per size
 *             `warmup` untimed runs and `iters` timed runs, each started at
 *             a common moment on clocks aligned to rank 0's
 *             (exec/cs_timed.h, CS_TIMED_ALIGNED); a run's time is the
 *             last rank's end minus the first rank's start, the
 *             measurement the median over the runs (every rank gets it)
 *   predict   cs_validate_predict, rank 0: the same schedules and sizes
 *             simulated on one platform (all ranks start together, copies
 *             charged like reductions) in a watched child process
 *             (SimGrid runs once per process)
 *   errors    cs_validate_error_stats: median, geometric mean and worst
 *             |error| of rows of (measured, predicted), optionally of one
 *             algorithm or a size range; a pure function
 *   report    cs_validate_write: the table (nccl-tests columns plus
 *             measured, spread, predicted, error, then the |error|
 *             statistics per algorithm and overall), csv or json
 *   measured elsewhere  the caller fills v->meas (the median at least)
 *             and v->pred itself, e.g. from the tables of nccl-tests logs
 *             and simulations of its own; `cases` then gives every
 *             algorithm (a table) its own collective, ranks, type and
 *             operator, and `group` gathers them (a log) for statistics of
 *             their own
 *   traces    with trace set, the last timed run of every size is traced
 *             live and simulated into one directory, and
 *             cs_validate_trace_compare sets them side by side per tier
 *             (bytes must match: both ran the same schedule)
 *
 * Times are seconds, sizes bytes; error = (predicted - measured) /
 * measured.  Errors: a cs_status_t with err filled ("rank 3: ..." where a
 * rank is to blame).  Live runs fail with the engine's or the bootstrap's
 * status (CS_ERR_PEER, CS_ERR_TIMEOUT, CS_ERR_INTERRUPTED ...).
 */
#ifndef CS_VALIDATE_H
#define CS_VALIDATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cs_job.h"
#include "cs_out.h"
#include "cs_platform.h"
#include "cs_results.h"
#include "cs_sched.h"
#include "cs_sim.h"
#include "cs_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CS_VALIDATE_MAX_PLATS 4

/* One platform predicted with. */
typedef struct cs_validate_plat {
    const char *spec;      /* its name in reports (a file or a preset, as given) */
    cs_sim_model_t model;
    cs_platform_t *plat;   /* the caller's (cs_platform_open); NULL when not predicting */
    /* model CS_SIM_NCCL (required there): what NCCL charges each instance,
     * nalgo x nsizes of them, algorithm-major (model/cs_nccl.h
     * cs_nccl_step_costs), and the tiers' rates as NCCL counts them
     * (cs_sim_opts_t.tier_bw_scale); the caller's */
    const cs_sim_nccl_t *nccl;
    const double *tier_bw_scale;
} cs_validate_plat_t;

/* One (algorithm, size) measured live. */
typedef struct cs_validate_meas {
    double med, p10, p90, lo, hi; /* run times: median, percentiles, fastest, slowest */
    double skew;                  /* median of the last start minus the first */
    double cpu;                   /* CPU seconds per run, mean over the ranks */
    double runq;                  /* seconds per run waiting for a core, idem */
} cs_validate_meas_t;

/* Bytes an (algorithm, size) moves between ranks of one node and between
 * nodes, as the simulation counted them (the live traces' tiers host and
 * network). */
typedef struct cs_validate_bytes {
    double host, network;
} cs_validate_bytes_t;

/* An algorithm's own case, when the algorithms of one report differ
 * (tables of nccl-tests logs, measured elsewhere). */
typedef struct cs_validate_case {
    cs_coll_t coll;
    int nranks, nnodes;
    cs_dtype_t dtype;
    cs_op_t op;
    int group;          /* index in v->group: statistics per group too; -1 none */
    const char *note;   /* the table layout: a comment line before its rows ("" none) */
} cs_validate_case_t;

/* Progress of the live runs: algorithm a, size k measured (every rank). */
typedef void (*cs_validate_progress_fn)(void *ctx, int a, int k, const cs_validate_meas_t *m);

typedef struct cs_validate {
    /* ---- the cases: nalgo schedules x nsizes sizes ------------------------ */
    cs_coll_t coll;
    int nranks, nnodes;
    const int *node_of;              /* [nranks] rank -> node */
    int nalgo, nsizes;
    const cs_sched_t *const *sched;  /* [nalgo] (live and predict; may be NULL for reports) */
    const char *const *algo;         /* [nalgo] the algo column */
    const char *const *params;       /* [nalgo] the params column ("" for none) */
    const uint64_t *sizes;           /* [nsizes] bytes that move */
    const unsigned char *serves;     /* [nalgo * nsizes] 1 where schedule a runs size k
                                        (tuning tables, schedule sets); NULL: every one */
    const cs_validate_case_t *cases; /* [nalgo], or NULL: every one runs coll on nranks
                                        ranks and nnodes nodes, float sum */
    int ngroups;
    const char *const *group;        /* [ngroups] names of the groups of cases */
    const char *const *how;          /* [nalgo * nsizes] what was simulated per row, said
                                        beside it ("Ring/LL"); NULL: nothing */
    const char *const *why;          /* [nalgo * nsizes] why a row is off, for csv and json
                                        (NULL or "" where it fits); NULL: no such column */
    const char *terms;               /* fitted terms ("net.bw=0.96 ..."): json's
                                        "fitted_terms"; NULL: none */
    const char *notes;               /* lines said after the report: the table's, each
                                        after "# ", and json's "notes"; NULL: none */
    int nplats;
    cs_validate_plat_t plats[CS_VALIDATE_MAX_PLATS];
    const char *transport;           /* reports: "tcp", "ofi/tcp;ofi_rxm"; with cases, what
                                        measured ("nccl-tests") */
    long iters, warmup;              /* timed (>= 1) and untimed runs per size */
    double timeout_s;                /* no-progress limit of the live runs */
    int trace;                       /* trace the last timed run of every size */
    const char *trace_dir;           /* rank 0 with trace: where (cs_validate_trace_prepare) */
    cs_validate_progress_fn progress; /* NULL: quiet */
    void *progress_ctx;
    /* ---- results (cs_validate_alloc) ----------------------------------------- */
    cs_validate_meas_t *meas;        /* [nalgo * nsizes] (a * nsizes + k) */
    double *pred;                    /* [nplats * nalgo * nsizes] seconds */
    cs_validate_bytes_t *bytes;      /* [nplats * nalgo * nsizes] */
} cs_validate_t;

/* Allocate the results of v (zeroed; freed by cs_validate_free). */
int cs_validate_alloc(cs_validate_t *v, cs_err_t *err);
void cs_validate_free(cs_validate_t *v);

/* 1 when schedule a runs size k. */
int cs_validate_serves(const cs_validate_t *v, int a, int k);

/* ---- before running --------------------------------------------------------- */

/* Whether platform p fits the job: a host per rank, and (for a platform
 * `collstep calibrate` wrote, hosts named nNODE-rRANK) ranks sharing nodes
 * as they do here.  CS_ERR_INVAL with "SPEC has 2 hosts but 4 ranks run:
 * ..." or "SPEC: ranks 0 and 1 are on one node there but not here: ...". */
int cs_validate_check_platform(const cs_validate_t *v, int p, cs_err_t *err);

/* The bytes of buffers the largest rank's engine allocates for the
 * largest size (exec/cs_engine.h), for refusing sizes that cannot fit. */
double cs_validate_mem_estimate(const cs_validate_t *v);

/* ---- measuring and predicting ----------------------------------------------- */

/* Every rank, job connected (cs_job_connect): the live runs into v->meas,
 * the same on every rank; with v->trace the live traces (rank 0 writes
 * them in v->trace_dir/live/ALGO). */
int cs_validate_live(cs_validate_t *v, cs_job_t *job, cs_err_t *err);

/* Rank 0: simulate every case on platform p (v->plats[p].plat open) into
 * v->pred and v->bytes; with v->trace its traces in v->trace_dir/sim-P
 * (P = p + 1).  Fails with "the simulation on SPEC failed: ..." or how
 * its child process died. */
int cs_validate_predict(cs_validate_t *v, int p, cs_err_t *err);

/* ---- errors ------------------------------------------------------------------ */

/* One compared case. */
typedef struct cs_validate_row {
    int algo;              /* group: the algorithm's index */
    uint64_t bytes;
    double measured, predicted;
} cs_validate_row_t;

typedef struct cs_validate_stats {
    int n;                        /* rows counted */
    double median, geomean, worst; /* |error| in percent; 0 for no rows */
} cs_validate_stats_t;

/* The |error| statistics of the rows of algorithm `algo` (-1: all) with
 * min_bytes <= bytes < max_bytes (0, UINT64_MAX: all): |error| = 100
 * |predicted - measured| / measured; the geometric mean counts an |error|
 * below 0.01 % as 0.01 %.  CS_ERR_INVAL naming the row when any row of
 * the n, counted or not, has a measured time that is not finite and > 0
 * or a predicted one not finite and >= 0: the rows are one input. */
int cs_validate_error_stats(const cs_validate_row_t *rows, int n, int algo, uint64_t min_bytes,
                            uint64_t max_bytes, cs_validate_stats_t *out, cs_err_t *err);

/* The rows of platform p (the cases a schedule runs, in order) into rows
 * (nalgo * nsizes of them); returns how many. */
int cs_validate_rows(const cs_validate_t *v, int p, cs_validate_row_t *rows);

/* ---- reports ----------------------------------------------------------------- */

/* v's report to f: CS_FMT_TABLE, CS_FMT_CSV or CS_FMT_JSON (every platform
 * in order).  With cases, each row has its case's collective, ranks, nodes,
 * type and operator, the table its note before its rows, and the
 * statistics come per algorithm, per group and overall (json: summary
 * entries with "group" in place of "algo").  Nothing is written when a row cannot be compared
 * (cs_validate_error_stats's refusal). */
int cs_validate_write(const cs_validate_t *v, cs_results_fmt_t fmt, FILE *f, cs_err_t *err);

/* The kind of a report file and of a trace directory for core/cs_out.h:
 * an existing one is replaced only when collstep wrote it. */
extern const cs_out_kind_t cs_validate_out_kind, cs_validate_trace_kind;

/* ---- traces ------------------------------------------------------------------ */

/* Make `dir` (an existing directory) ready for v's traces: DIR/live. */
int cs_validate_trace_prepare(const char *dir, cs_err_t *err);

/* After cs_validate_live and cs_validate_predict of every platform, rank 0:
 * per platform, algorithm, size and tier (host, network) the live and the
 * simulated bytes, time and utilization, into v->trace_dir/compare.csv and,
 * as a table headed with `label` (the directory's name for the user), to
 * f.  *mismatches: the tiers whose bytes differ (0 when they all match). */
int cs_validate_trace_compare(const cs_validate_t *v, const char *label, FILE *f,
                              int *mismatches, cs_err_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CS_VALIDATE_H */
