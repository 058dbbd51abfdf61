/*
 * cs_calibrate.h - calibration as a library: measure the cluster a job's
 * ranks run on, derive the figures of a SimGrid platform from the
 * measurements (platforms/cs_plat_calib.h), write the platform, the
 * measurement record and a summary.  `collstep calibrate` is its front end
 * (docs/validation.md says what is measured and how it becomes links).
 *
 *   plan      cs_calibrate_plan_t: what is measured (sweep sizes, time per
 *             size, repetitions, the NIC tests' message, the element type),
 *             defaults from cs_calibrate_plan_init
 *   measure   collective, on a job the caller started: a bootstrap and a
 *             transport with its peers' addresses inserted
 *             (cs_boot_connect), and where every rank is (its node).
 *             cs_calibrate_open, cs_calibrate_measure (every rank gets the
 *             same record), cs_calibrate_close
 *   record    cs_calibrate_record_t: plain data, the raw measurements and
 *             the plan they were taken with; saved in the JSON file
 *             (cs_calibrate_json) and read back by cs_calibrate_record_load
 *             bit for bit, so a record derives the same platform wherever
 *             it is read
 *   derive    cs_calibrate_derive: a pure function of a record (no
 *             transport, no clock): the fits of every series and the
 *             platform's figures (cs_plat_calib_t)
 *   write     cs_calibrate_xml (the platform, the summary as its comment),
 *             cs_calibrate_json (the record, the fits, the figures),
 *             cs_calibrate_summary (the printed report), cs_calibrate_write
 *             (platform and JSON files, each whole or not at all)
 *
 * The kernels (ping-pong, concurrent flows, local reduction) are part of
 * this library, not of exec/: they are measurement procedures (when to
 * stop repeating, which rank times what, the medians kept) over the
 * public transport and bootstrap interfaces, and nothing but calibration
 * uses them; the plan that calls them and the kernels change together.
 *
 * Times are seconds, bandwidths bytes per second, sizes bytes.  Errors: a
 * cs_status_t with err filled ("FILE:LINE:COL: ..." for a record file).
 * A measurement fails with CS_ERR_PEER naming the rank that died or left,
 * CS_ERR_TIMEOUT when nothing completes for the plan's timeout,
 * CS_ERR_INTERRUPTED on a signal (cs_intr.h); after a failure only
 * cs_calibrate_close.
 */
#ifndef CS_CALIBRATE_H
#define CS_CALIBRATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cs_boot.h"
#include "cs_dtype.h"
#include "cs_fit.h"
#include "cs_out.h"
#include "cs_plat_calib.h"
#include "cs_status.h"
#include "cs_transport.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CS_CALIBRATE_MAX_SIZES 64
#define CS_CALIBRATE_MIN_SIZES 7 /* a piecewise fit needs a few sizes per piece */
/* Element types whose reduction is measured: float, double, half,
 * bfloat16, int32, int64 (the first six of cs_dtype_t). */
#define CS_CALIBRATE_NDT 6
/* The shorter idle spells (seconds) after which a node's exchange is
 * measured once each (cs_calibrate_node_t cold_short): where TCP's
 * retransmission timeout, after which it restarts an idle connection,
 * lies. */
#define CS_CALIBRATE_IDLES {0.25, 0.5, 1.0}

/* ---- the plan ---------------------------------------------------------------- */

typedef struct cs_calibrate_plan {
    /* the ping-pong sweep, ascending, each >= 1; the largest also sizes the
     * buffers (cs_calibrate_buffer_bytes).  Default 1 B to 64 MiB, factor 2
     * (27 sizes) */
    uint64_t sizes[CS_CALIBRATE_MAX_SIZES];
    int nsizes; /* CS_CALIBRATE_MIN_SIZES .. CS_CALIBRATE_MAX_SIZES */
    /* seconds of timed round trips per size and pair: at least min_reps, at
     * most max_reps, the median kept (0.25, 3, 1000; 1 <= min <= max <= 10^6) */
    double budget_s;
    int min_reps, max_reps;
    /* message of the NIC, exchange and duplex tests (8 MiB; at most the
     * sweep's largest is sent) */
    uint64_t nic_bytes;
    /* the element type whose reduction speed the hosts get (CS_DT_F32;
     * every type of CS_CALIBRATE_NDT is measured) */
    cs_dtype_t dtype;
    /* seconds without a completion before a wait fails (60; not recorded) */
    double timeout_s;
} cs_calibrate_plan_t;

/* The defaults above. */
void cs_calibrate_plan_init(cs_calibrate_plan_t *plan);

/* CS_OK, or CS_ERR_INVAL naming the first field out of its range. */
int cs_calibrate_plan_check(const cs_calibrate_plan_t *plan, cs_err_t *err);

/* Bytes of buffers cs_calibrate_open allocates per rank for the plan (a
 * send and a receive area of the largest size, in whole pages). */
double cs_calibrate_buffer_bytes(const cs_calibrate_plan_t *plan);

/* ---- the record -------------------------------------------------------------- */

/* A ping-pong sweep between ranks a and b: one-way times (round trip / 2)
 * per size of the plan. */
typedef struct cs_calibrate_series {
    int a, b;                   /* ranks (a timed the round trips) */
    int na, nb;                 /* their nodes (na == nb: inside a node) */
    double *median, *p10, *p90; /* [nsizes] seconds */
    int *reps;                  /* [nsizes] timed round trips */
} cs_calibrate_series_t;

/* A node: its NIC and its exchange with a partner node. */
typedef struct cs_calibrate_node {
    char name[64];       /* hostname, or the caller's node name */
    int nic_peer;        /* the partner node (its fastest pair; -1: one node) */
    int nic_senders;     /* ranks that sent at once (as many as both nodes have) */
    double nic_one;      /* one rank sending to the partner (bytes/s) */
    double nic_all;      /* nic_senders ranks at once, all together (bytes/s) */
    double xch_out;      /* exchanging both ways with the partner: out, in */
    double xch_in;       /*   (bytes/s, the kept trial) */
    int xch_trials;      /* trials of the exchange (1..3: a lossy one is retried) */
    double cold_out;     /* the same exchange, each iteration after every rank idled */
    double cold_in;      /*   longer than TCP's timeout (bytes/s; 0: not measured) */
    /* the same once after shorter idle spells (CS_CALIBRATE_IDLES, ascending),
     * the slower direction (bytes/s; 0: not measured) */
    double cold_short[3];
} cs_calibrate_node_t;

typedef struct cs_calibrate_record {
    int nranks, nnodes;
    int *node_of;                /* [nranks] rank -> node */
    cs_calibrate_node_t *nodes;  /* [nnodes] */
    char transport[32];          /* labels of what it ran over ("tcp", "ofi", ...) */
    char provider[64];
    cs_calibrate_plan_t plan;    /* the plan measured (timeout_s: 0 in a loaded one) */
    int nseries, nintra;         /* series[0, nintra) inside nodes, then across nodes */
    cs_calibrate_series_t *series;
    /* every rank busy (ring flows r-1 -> r at once over the sweep): rank r's
     * median time of its incoming flow, loaded[r * nsizes + k]; repetitions
     * per size */
    double *loaded;
    int *loaded_reps;
    /* full duplex: the fastest pair a<->b, one way (bytes/s) and both ways
     * at once (per direction); a->b with c->d at once (per flow; c = -1: not
     * measured) */
    int duplex_a, duplex_b, duplex_c, duplex_d;
    double duplex_one, duplex_both, duplex_node;
    /* reduction bytes/s per element type (cs_dtype_t order), median of the
     * ranks at once */
    double reduce[CS_CALIBRATE_NDT];
} cs_calibrate_record_t;

/* A record of nranks, nnodes, nseries series of plan->nsizes points,
 * zeroed (node peers and duplex ranks -1): for programs that make one
 * from measurements of their own.  NULL when out of memory. */
cs_calibrate_record_t *cs_calibrate_record_new(int nranks, int nnodes, int nseries,
                                               const cs_calibrate_plan_t *plan);
void cs_calibrate_record_free(cs_calibrate_record_t *r); /* NULL is fine */

/* Read the JSON file calibrate wrote (cs_calibrate_json): CS_OK with *out,
 * or CS_ERR_IO / CS_ERR_PARSE with "PATH:LINE:COL: ..." in err.  A file of
 * an older collstep (no "plan", no "node_of") reads with the plan's
 * defaults, the sizes of its points, the element type whose reduction its
 * platform got, and nodes of consecutive ranks. */
int cs_calibrate_record_load(const char *path, cs_calibrate_record_t **out, cs_err_t *err);
/* The same from text[0..len) (name: for messages). */
int cs_calibrate_record_parse(const char *text, size_t len, const char *name,
                              cs_calibrate_record_t **out, cs_err_t *err);

/* ---- measuring --------------------------------------------------------------- */

/* Where the job's ranks are. */
typedef struct cs_calibrate_job {
    int nnodes;
    const int *node_of;            /* [nranks] rank -> node; every node has a rank */
    const char *const *node_names; /* [nnodes], or NULL ("node0", ...) */
    const char *transport;         /* labels for the record (NULL: "") */
    const char *provider;
} cs_calibrate_job_t;

typedef struct cs_calibrate cs_calibrate_t;

/* Every rank, with the same job and plan: checks the plan
 * (cs_calibrate_plan_check) and the job (two ranks or more), allocates the
 * buffers (registered with tp, or tp's own memory).  The caller keeps tp,
 * boot and the job's arrays until cs_calibrate_close. */
int cs_calibrate_open(cs_tp_t *tp, cs_boot_t *boot, const cs_calibrate_job_t *job,
                      const cs_calibrate_plan_t *plan, cs_calibrate_t **out, cs_err_t *err);

/* Every rank, in step: the pair sweeps inside and across nodes, every rank
 * busy, each node's NIC and exchange (back to back and after idling), full
 * duplex, the reductions
 * (docs/validation.md).  *out: the record, the same on every rank.
 * Minutes on a large sweep: the plan's budget times sizes times rounds of
 * pairs. */
int cs_calibrate_measure(cs_calibrate_t *c, cs_calibrate_record_t **out, cs_err_t *err);

void cs_calibrate_close(cs_calibrate_t *c); /* NULL is fine */

/* ---- deriving ---------------------------------------------------------------- */

typedef struct cs_calibrate_derived {
    /* the platform's figures (cs_plat_calib_xml), nodes' tiers named; its
     * arrays are this object's */
    cs_plat_calib_t plat;
    cs_fit_piecewise_t *series_fit; /* [nseries] the fit of each sweep */
    cs_fit_piecewise_t *loaded_fit; /* [nranks] the fit of each rank's loaded flow */
} cs_calibrate_derived_t;

/* The fits and the platform of a record: per pair of nodes the large
 * piece of its fit; a node's latency by least squares over its pairs
 * (alpha_AB = lat(A) + lat(B)), its bandwidth its best pair's (of the
 * pairs within 5 % of the best, the best-fitting); the
 * intra-node link from the intra-node pairs; rank ports where every rank
 * busy moved clearly less than its links allow; duplex ratios per pair,
 * per node and per node exchanging; restarts per node (restart_bytes and
 * restart_idle of cs_plat_calib_node_t) where its exchange after idling
 * took clearly longer than back to back.  CS_ERR_INVAL, saying which, for a
 * record that cannot give a platform: fewer than 2 sizes or sizes not
 * ascending, a time that is not finite and > 0 (no line fits it), a
 * bandwidth that is not finite and >= 0, ranks or nodes out of range. */
int cs_calibrate_derive(const cs_calibrate_record_t *rec, cs_calibrate_derived_t **out,
                        cs_err_t *err);
void cs_calibrate_derived_free(cs_calibrate_derived_t *d); /* NULL is fine */

/* ---- writing ----------------------------------------------------------------- */

/* The report `collstep calibrate` prints: fits, nodes, duplex, ports,
 * reductions. */
void cs_calibrate_summary(const cs_calibrate_record_t *rec, const cs_calibrate_derived_t *d,
                          FILE *f);

/* The platform XML (*xml malloc'ed), the summary as its comment. */
int cs_calibrate_xml(const cs_calibrate_record_t *rec, const cs_calibrate_derived_t *d,
                     char **xml, cs_err_t *err);

/* The JSON file: {"collstep_calibration":1, ...}: the record (raw values
 * in as many digits as read back exactly), the fits and the figures. */
void cs_calibrate_json(const cs_calibrate_record_t *rec, const cs_calibrate_derived_t *d,
                       FILE *f);

/* The kinds of the two outputs for core/cs_out.h: an existing file is
 * replaced only when it is one collstep wrote (CS_OUT_FORCE otherwise). */
extern const cs_out_kind_t cs_calibrate_xml_kind, cs_calibrate_json_kind;

/* Write the platform to xml_path and the JSON to json_path through
 * core/cs_out.h (flags: CS_OUT_FORCE or 0): both files whole, or neither
 * changed. */
int cs_calibrate_write(const cs_calibrate_record_t *rec, const cs_calibrate_derived_t *d,
                       const char *xml_path, const char *json_path, int flags, cs_err_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CS_CALIBRATE_H */
