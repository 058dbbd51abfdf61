/*
 * cli_ntab.h - nccl-tests logs as simulations (cli_ntab.c), shared by
 * `collstep validate --nccl-tests` and `collstep calibrate
 * --from-nccl-tests`: every table of the logs read, its ranks placed on the
 * platform as the log placed them, NCCL's choice per size built as collstep
 * schedules with what each instance pays under `--model nccl`, and the
 * simulations that predict the tables (with fitted terms of the caller's,
 * several variants in one simulation).
 *
 * Placement.  A table's nodes are its device block's hosts (ranks on one
 * host share a node), or the nodes of a --groups file for a table without
 * a device block; the log's nodes take the platform's nodes in order (node
 * j of the log on node j of the platform), each node's ranks its devices in
 * order.  A platform node is its innermost dimension (`platform show`
 * prints the dims), a tray of 4 GPUs on gb200-nvl72; a platform without
 * dims takes the ranks on its devices in order.
 */
#ifndef CS_CLI_NTAB_H
#define CS_CLI_NTAB_H

#ifdef CS_HAVE_MODEL

#include "cli.h"
#include "cs_nccl_log.h"

/* One table of a log, compared or fitted. */
typedef struct cs_ntab {
    const cs_nccl_run_t *t;
    int log;                       /* index in the set's logs: its group */
    cs_coll_t coll;
    cs_dtype_t dt;
    cs_op_t op;
    int nranks, nnodes, n;         /* ranks, the log's nodes, sizes */
    uint64_t sizes[CS_CLI_MAX_SIZES];
    double meas[CS_CLI_MAX_SIZES]; /* seconds, the log's in-place column */
    double pred[CS_CLI_MAX_SIZES]; /* cs_nset_simulate with one variant */
    unsigned row_line[CS_CLI_MAX_SIZES];
    char how[CS_CLI_MAX_SIZES][48]; /* NCCL's algorithm/protocol per size */
    cs_cli_nccl_t nc;
    cs_cli_scheds_t b;
    cs_sim_instance_t inst[CS_CLI_MAX_SIZES];
    char **map;                    /* [nranks] the host of each rank */
    int own;                       /* a table of collstep's own algorithm (its title's),
                                      simulated as that algorithm under `model`, not as
                                      NCCL's choice under the nccl model */
    cs_sim_model_t model;
    int in_fit;                    /* calibrate's table: its terms were fitted to it */
    char label[40], note[600];
} cs_ntab_t;

typedef struct cs_nset {
    /* the caller's */
    const char *cmd;        /* "validate", "calibrate" */
    const char *platform;   /* --platform as given */
    const char *version;    /* --nccl-version, or NULL */
    const char *algo, *proto; /* --nccl-algo / --nccl-proto (tables whose log does not
                               say NCCL_ALGO / NCCL_PROTO), or NULL */
    unsigned colls;          /* --coll: the collectives kept (bit per cs_coll_t; 0: all) */
    uint64_t min_size, max_size; /* --min-size / --max-size: the rows kept (nccl-tests' size
                               column; max 0: no bound) */
    const char *groups;     /* --groups FILE, or NULL */
    const char *const *logs;
    int nlogs;
    int strict;             /* calibrate: a table without a device block (and no --groups)
                               or of one rank is an error, not a skip */
    int raw;                /* costs without the platform's fitted terms */
    int slices;             /* 0: each size simulated alone (up to 64 per placement);
                               N: in N slices (a fit's many simulations: fewer children,
                               the same slices on every machine) */
    /* filled */
    cs_platform_t *plat;
    cs_nccl_log_t **log;    /* [nlogs] */
    cs_ntab_t **tab;
    int ntab, total;        /* tables, their sizes in all */
    int nsims;              /* simulations run (one per placement and variant of the terms) */
} cs_nset_t;

/* Options both front ends take.  A log (FLAG's value or an operand) into
 * logs[*n]: at most `max`, else a usage error naming FLAG.  --nccl-version
 * V: checked (cs_cli_nccl_opt) and kept in *version.  Exit codes. */
int cs_nset_add_log(const char *cmd, const char *flag, const char **logs, int *n, int max,
                    const char *arg);
int cs_nset_version_opt(const char *cmd, const char *arg, const char **version);


/* The report's path (FLAG names it in messages; NULL: standard output):
 * refused before any work when it exists and is not a report collstep
 * wrote, unless `force`. */
int cs_nset_check_report(const char *cmd, const char *flag, const char *path, int force);
/* An output (FLAG PATH) that is one of the logs is refused, --force or not. */
int cs_nset_check_not_input(const char *cmd, const char *flag, const char *path,
                            const char *const *logs, int nlogs);
/* --nccl-algo A (which 0) or --nccl-proto P (1): checked and kept in *out. */
int cs_nset_choice_opt(const char *cmd, int which, const char *arg, const char **out);
/* The rows --min-size / --max-size keep, in words: "1 MiB to any size". */
void cs_nset_size_range(const cs_nset_t *s, char *buf, size_t len);
/* --coll LIST (which 0), --min-size SIZE (1) or --max-size SIZE (2) into s. */
int cs_nset_filter_opt(const char *cmd, int which, const char *arg, cs_nset_t *s);
/* The help lines of --nccl-version, --nccl-algo and --nccl-proto, and of
 * --coll, --min-size and --max-size. */
extern const char cs_nset_nccl_help[], cs_nset_filter_help[];

/* Open the platform, read the logs, build every table (usage errors
 * printed, CS_EXIT_USAGE; skipped tables said on stderr). */
int cs_nset_read(cs_nset_t *s);

/* Simulate every table in nvar variants: variant v of table i pays what
 * it pays with fits[v * ntab + i] applied (NULL: as built).  pred[v * total
 * + off(i) + k], off(i) the sizes of the tables before i; pred NULL (one
 * variant): into each table's pred[].  One simulation per rank count,
 * placement and tier rates, in a watched child.  An exit code (said). */
int cs_nset_simulate(cs_nset_t *s, int nvar, const cs_nccl_fit_t *const *fits, double *pred);

/* The same for tables of collstep's own algorithms under the calibrated
 * model: variant v with the platform's tier factors replaced by
 * tf[v * 2 * CS_PLAT_MAX_TIERS + 2 * tier + {0: latency, 1: bandwidth}]
 * (0: the platform's).  One simulation per variant and placement. */
int cs_nset_simulate_tiers(cs_nset_t *s, int nvar, const double *tf, double *pred);

/* 1 when the platform is a file carrying calibrated tier factors (a
 * collstep_factors property): collstep's own tables are then simulated
 * under the calibrated model, else (presets too) the ideal one. */
int cs_nset_plat_calibrated(const cs_platform_t *p);

/* calibrate --from-nccl-tests on tables of collstep's own algorithms
 * (cmd_calibrate_tiers.c): the platform's tier factors fitted; each
 * table's pred[] left at the fit, *summary (malloc'ed) what was fitted and
 * from which sizes, factors the collstep_factors value
 * ("tier:lat:bw,..."), *sims the simulations run.  An exit code. */
int cs_cli_calibrate_tiers(cs_nset_t *s, char **summary, char *factors, size_t flen, int *sims);

/* The report of validate's layout (cs_validate.h), tables as cases and
 * logs as groups, each table's pred[] as the prediction; to rep's output
 * or stdout.  An exit code (said). */
int cs_nset_report(const cs_nset_t *s, const cs_cli_report_t *rep, const char *terms,
                   const char *notes);

void cs_nset_free(cs_nset_t *s);

/* Why size k of table t (pred[] and meas[] filled) is off, in words:
 * NCCL's choice changing next to it where the log's time does not, a
 * change of regime inside one choice's sizes, or sizes of one choice that
 * do not follow one latency and one rate. */
void cs_ntab_why(const cs_ntab_t *t, int k, char *buf, size_t len);


/* Sizes off by more than this are listed with their reason (5 %). */
#define CS_NSET_TOL 0.05

/* The sizes of every table off by more than `tol` (0.05: 5 %), each with
 * cs_ntab_why, as lines starting with `prefix` into f; at most 40 of
 * them.  The number off. */
int cs_nset_unfit(const cs_nset_t *s, double tol, const char *prefix, FILE *f);

/* The same as text (malloc'ed; NULL when out of memory), or "every size
 * VERB within N %" when none is off (VERB: "fitted" for calibrate,
 * "predicted" for validate). */
char *cs_nset_unfit_text(const cs_nset_t *s, double tol, const char *verb);

#endif /* CS_HAVE_MODEL */
#endif /* CS_CLI_NTAB_H */
