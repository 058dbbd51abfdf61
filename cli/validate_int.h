/*
 * validate_int.h - the parts of `collstep validate` (cmd_validate.c reads
 * as parse, build, verify, act, report):
 *   validate_build.c   the schedules every rank builds, the platforms rank 0
 *                      checks against the ranks
 *   validate_live.c    the live runs: per algorithm an engine, per size the
 *                      timed runs after a barrier (and the live traces)
 *   validate_sim.c     rank 0 simulates the same schedules on every platform,
 *                      one child process each (and the simulated traces)
 *   validate_report.c  nccl-tests columns, measured / predicted / error, the
 *                      |error| statistics; table, csv or json
 *   validate_trace.c   --trace DIR: live and simulated traces side by side
 *                      and their per-tier comparison
 */
#ifndef VALIDATE_INT_H
#define VALIDATE_INT_H

#include <stdio.h>

#include "cli.h"
#include "cli_live.h"
#include "cs_out.h"
#include "cs_platform.h"
#include "cs_sim.h"

#define VAL_MAX_PLATS 4

typedef struct plat_spec {
    char spec[256];
    cs_sim_model_t model;
    cs_platform_t *plat;
} plat_spec_t;

typedef struct val_opts {
    cs_live_opts_t live; /* transport, -o, --force, --timeout, ... */
    const char *coll, *algo, *format, *groups, *trace, *tuning;
    char size[256];
    plat_spec_t plats[VAL_MAX_PLATS];
    int nplats;
    cs_cli_params_t params;
    long iters, warmup;
} val_opts_t;

typedef struct meas {
    double med, p10, p90, lo, hi, skew; /* seconds; skew: barrier release spread */
    double cpu;                         /* CPU seconds per run, mean over the ranks */
    double runq;                        /* seconds per run waiting for a core, idem */
} meas_t;

/* Bytes a schedule moves between ranks of one node and between nodes
 * (per instance: algorithm x size). */
typedef struct tier_bytes {
    double host, network;
} tier_bytes_t;

typedef struct val {
    val_opts_t *o;
    cs_job_t l;
    struct cs_timed *timed; /* every run started on aligned clocks (exec/cs_timed.h) */
    cs_coll_t coll;
    cs_cli_scheds_t b;      /* the schedules and the sizes each serves */
    cs_sched_t *sched[CS_CLI_MAX_SCHEDS]; /* b.sched[] */
    int nalgo;              /* b.n */
    uint64_t sizes[CS_CLI_MAX_SIZES];
    int nsizes;
    meas_t *meas;          /* [algo][size] */
    double *pred;          /* [plat][algo][size] seconds */
    tier_bytes_t *sim_tb;  /* [plat][algo][size], with --trace */
    cs_out_t *trace_out;   /* rank 0, --trace: DIR being written */
} val_t;

/* Whether schedule a serves size k (every size, unless a schedule set or a
 * tuning table picked per size): rows, runs and traces exist only where it does. */
static inline int val_serves(const val_t *v, int a, int k)
{
    return cs_cli_scheds_serves(&v->b, a, k);
}

/* validate_build.c: the schedules (sizes rounded to what moves first);
 * rank 0's platform checks; the buffers of the largest size against this
 * machine's available memory (cs_live_mem_check), before any transport */
int val_build(val_t *v);
int val_check_platforms(val_t *v);
int val_check_memory(val_t *v);

/* validate_live.c */
int val_live(val_t *v);

/* validate_sim.c: predictions of platform i into out[algo][size] */
int val_simulate(val_t *v, int i, double *out);

/* validate_report.c */
extern const cs_out_kind_t val_out_kind;
int val_report(val_t *v);

/* validate_trace.c (rank 0 unless said otherwise) */
int val_trace_begin(val_t *v);                 /* refuse / open DIR, before the runs */
const char *val_trace_live_dir(val_t *v, int a); /* DIR/live/<algo> (every rank: NULL off) */
const char *val_trace_sim_dir(val_t *v, int p);  /* DIR/sim-<p> */
int val_trace_finish(val_t *v, FILE *f);       /* the comparison, commit DIR */
void val_trace_abort(val_t *v);

#endif /* VALIDATE_INT_H */
