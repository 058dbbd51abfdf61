/*
 * calib_int.h - the parts of `collstep calibrate` (cmd_calibrate.c reads as
 * parse, build, verify, act, report):
 *   calib_measure.c  the measurements, every rank in the same order (the
 *                    kernels of exec/cs_calib.h): pair sweeps, every rank
 *                    busy, the NIC a node's ranks share, a node's
 *                    exchange with its partner, full duplex, the
 *                    reduction bandwidth; the fits of every series
 *   calib_derive.c   the platform's figures from the fits
 *                    (platforms/cs_plat_calib.h)
 *   calib_report.c   the outputs: platform XML, JSON of the raw measurements
 *                    and fits, the printed summary (also the XML comment)
 */
#ifndef CALIB_INT_H
#define CALIB_INT_H

#include <stdint.h>

#include "cli.h"
#include "cli_live.h"
#include "cs_calib.h"
#include "cs_fit.h"
#include "cs_plat_calib.h"

/* Duplex links where both directions at once get less than 0.9 of one
 * (one connection both ways on ofi tcp;ofi_rxm: 0.49; on the emulated
 * cluster, the slow node sending to one node while receiving from another:
 * 0.83-0.86, and exchanging with a fast node: about 0.6; the fast nodes:
 * 0.95-1.0). */
#define CALIB_DUPLEX CS_PLAT_CALIB_RHO_MAX
#define CALIB_XCH_TRIALS 3 /* a node's exchange, tried again while it looks lossy */
#define NDT 6 /* element types whose reduction is measured (cs_dtype_t order) */

typedef struct cal_opts {
    cs_live_opts_t live; /* transport, -o, --force, --timeout, ... */
    const char *json, *groups, *dtype;
    char size[256];
    double budget;
    long min_reps, max_reps;
    uint64_t nic_size;
} cal_opts_t;

typedef struct series {
    int a, b;   /* ranks */
    int na, nb; /* nodes (na == nb: intra) */
    int n;      /* sizes */
    double *med, *p10, *p90;
    int *reps;
    cs_fit_piecewise_t fit;
} series_t;

typedef struct cal {
    cal_opts_t *o;
    cs_job_t l;
    cs_calib_t *cb;
    uint64_t sizes[CS_CLI_MAX_SIZES];
    int nsizes;
    series_t *ser; /* intra series first, then inter */
    int nser, nintra;
    double *nic_agg, *nic_one;    /* per node: bytes/s all ranks at once, one rank */
    double *load_t;               /* [rank][size]: loaded ring flow (rank-1) -> rank */
    double *port_bw;              /* [rank]: derived port capacity (bytes/s) */
    int *load_reps;               /* [size] */
    cs_fit_piecewise_t *load_fit; /* [rank]: fit of the flow into rank */
    int *nic_peer, *nic_k;
    double *xch_out, *xch_in;     /* per node: bytes/s each way, its nic_k ranks exchanging
                                     with as many of nic_peer's at once (best trial) */
    int *xch_trials;              /* per node: trials of that exchange (1..CALIB_XCH_TRIALS) */
    double *node_rho, *xch_rho;   /* per node, derived: its two directions at once with
                                     different peers (every rank busy), and exchanging */
    double duplex_one, duplex_both, duplex_node; /* bytes/s per flow */
    int duplex_a, duplex_b, duplex_c, duplex_d;  /* pair a<->b; node: a->b with c->d */
    double red[NDT];
    char json_path[4096];
} cal_t;

extern const char *const calib_dt_names[NDT];

/* calib_measure.c: every rank, in the same order */
int calib_measure(cal_t *c);
/* The bandwidth of the large-message piece of a series. */
double calib_big_bw(const cal_t *c, const series_t *x);

/* calib_derive.c: nodes[] has nnodes entries */
void calib_derive(cal_t *c, cs_plat_calib_t *p, cs_plat_calib_node_t *nodes);

/* calib_report.c (rank 0) */
int calib_check_outputs(cal_t *c);   /* before measuring: a cs_status_t */
int calib_write_outputs(cal_t *c);   /* an exit code */

#endif /* CALIB_INT_H */
