/*
 * cs_nccl_log.h - reading the output of NVIDIA's nccl-tests (all_reduce_perf
 * and the other *_perf programs) as it is found on clusters.
 *
 * A log is what a launcher wrote: any number of nccl-tests runs, one after
 * the other, each a table, with whatever else the job printed before,
 * between and after them (launcher and MPI/UCX warnings, NCCL INFO lines,
 * shell echoes, blank lines), and prefixes that launchers put on every line
 * (Open MPI --tag-output "[1,0]<stdout>:", MPICH "[0] ", srun --label "0: ").
 * collstep's own `--format nccl-tests` output (cs_results_print_nccl) reads
 * back the same way.
 *
 * Every layout nccl-tests has printed is read, told apart by its column
 * header: "bytes N type op ... res" (builds before March 2019: time in
 * milliseconds, no units line), "size count type redop ... error" (2019 to
 * 2022, a units line "(B) (elements) (us) (GB/s)"), "size count type redop
 * root ... #wrong" (since 2022), with the optional columns of later
 * releases (copybw, per-iteration i_min i_max i_p99 i_cv%, timestamp) and
 * "cputime" for "time".  Rows hold time in microseconds whatever the log
 * printed (`time_ms` says the log printed milliseconds).
 *
 * A table is made of the lines of one run: its version line ("# nccl-tests
 * version 2.19.6 nccl-headers=22807 nccl-library=22807"), program ("#
 * Collective test starting: all_reduce_perf"), sweep ("# nThread 1 nGpus 1
 * minBytes ... graph: 0"), devices ("#  Rank  0 Group  0 Pid 123 on host
 * device  0 [0000:1b:00] NVIDIA H100 80GB HBM3"; older forms without Group
 * or Pid), column header and rows, and closing lines ("# Out of bounds
 * values : 0 OK", "# Avg bus bandwidth : 21.3"), each where present: a line
 * of the header part that a table already has, or a column header after
 * rows, starts the next table.  Lines that are none of these are skipped,
 * except that they give a table:
 *   - the NCCL version, from "NCCL version 2.18.5+cuda12.2" (NCCL's own
 *     line, bare, as NCCL INFO or after '#'), when nccl-tests did not print
 *     nccl-library (or printed 0); "# NCCL Tests compiled with NCCL 2.4"
 *     of old builds gives major.minor;
 *   - NCCL_ALGO / NCCL_PROTO, from "NCCL_ALGO set by environment to Ring"
 *     (NCCL INFO) or "NCCL_ALGO=Ring" (a command or export echoed);
 *   - the program, from a "<name>_perf" word (a command line echoed), when
 *     the table has no "Collective test starting" line.
 * Such a line counts for the table it is inside, or, between tables, for
 * the next one.
 *
 * The collective comes from the program name, else from the columns: the
 * operation ("none" or a reduction), the root, and count against size and
 * rank count; `coll_from` says which ("program", "command", "columns"), and
 * CS_NCCL_UNKNOWN is left where the columns cannot tell (gather and scatter,
 * allgather and alltoall in recent layouts).
 *
 * Nodes: ranks whose device lines name the same host share a node; nodes
 * are numbered in the order their first rank appears.
 *
 * Errors.  A line that nccl-tests' own form announces (a row: a line whose
 * first word is a number inside a table; a device, sweep, version, column
 * header or closing line) and that does not parse is an error,
 * "NAME:LINE:COL: expected X, found Y", with CS_ERR_PARSE; so are a rank
 * listed twice in one table's device block and a log without any table.
 * Reading never crashes, whatever the bytes (tests/fuzz/run_nccl_log.sh).
 */
#ifndef CS_NCCL_LOG_H
#define CS_NCCL_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cs_sched.h"
#include "cs_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every collective nccl-tests has, in the order of its programs. */
typedef enum {
    CS_NCCL_ALL_REDUCE = 0,
    CS_NCCL_ALL_GATHER,
    CS_NCCL_REDUCE_SCATTER,
    CS_NCCL_BROADCAST,
    CS_NCCL_REDUCE,
    CS_NCCL_ALLTOALL,
    CS_NCCL_SENDRECV,
    CS_NCCL_GATHER,
    CS_NCCL_SCATTER,
    CS_NCCL_HYPERCUBE,
    CS_NCCL_UNKNOWN
} cs_nccl_coll_t;

/* "all_reduce", "all_gather", ... ("unknown"), as in the program names. */
const char *cs_nccl_coll_name(cs_nccl_coll_t c);
/* collstep's collective for c: CS_OK, or CS_ERR_UNSUPPORTED for those
 * collstep lacks (sendrecv, gather, scatter, hypercube) and unknown. */
int cs_nccl_coll_to_cs(cs_nccl_coll_t c, cs_coll_t *out);

/* One placement (out of place or in place) of a row. */
typedef struct cs_nccl_meas {
    int present;       /* 0: the table has no such columns (broadcast before 2019) */
    double time_us;    /* microseconds (converted from ms for old logs) */
    double algbw_GBps, busbw_GBps;
    double wrong;      /* #wrong elements, or the largest error of logs before
                          2022 ("error", "res" columns); -1: N/A */
} cs_nccl_meas_t;

typedef struct cs_nccl_row {
    uint64_t size;     /* bytes */
    uint64_t count;    /* elements (per rank for allgather, reduce-scatter, alltoall) */
    char type[16];     /* "float", "half", ... as printed */
    char redop[16];    /* "sum", ..., "none"; "" when the layout has no op column */
    int root;          /* -1 when none (printed -1, or no root column) */
    cs_nccl_meas_t oop, ip;
    unsigned line;     /* where it was read */
} cs_nccl_row_t;

typedef struct cs_nccl_dev {
    int rank, group, pid, device; /* group, pid -1 when the layout lacks them */
    char *host;
    char busid[16];    /* between the brackets: "0000:1b:00", "0x1b" */
    char *name;        /* "NVIDIA H100 80GB HBM3" ("" when none) */
    int node;          /* index of the host among the table's hosts */
} cs_nccl_dev_t;

typedef struct cs_nccl_run {
    cs_nccl_coll_t coll;
    const char *coll_from;   /* "program", "command", "columns", "unknown" */
    char program[64];        /* "all_reduce_perf", "all_reduce_perf_mpi"; "" unknown */
    char tests_version[32];  /* "2.19.6"; "" when not printed */
    char nccl_version[32];   /* "2.18.5", "2.4" (compiled-with); "" unknown */
    const char *nccl_version_from; /* "nccl-library", "NCCL version line",
                                      "compiled with", "" */
    int nccl_headers, nccl_library; /* NCCL_VERSION_CODE as printed; 0 when not */
    char algo[32], proto[32];       /* NCCL_ALGO / NCCL_PROTO; "" when not shown */
    unsigned algo_line, proto_line; /* the lines that said them (0: not said) */
    /* A table collstep wrote (`run` or `sim --format nccl-tests`) for one of
     * its own algorithms: the title's algorithm and parameters ("ring",
     * "nchunks=1 channels=1 local=1"), and "run" (measured by collstep run)
     * or "sim"; "" otherwise (NCCL's runs; sim's NCCL choice has cs_source
     * "sim" and no algorithm).  Without an algorithm too: "plan" (a table
     * of `collstep plan`, its choice per size), "file" (a schedule file's
     * path in the title), "bad" (parameters cut or too long); "nccl": the
     * algorithm simulated under the nccl model. */
    char cs_algo[64], cs_params[160], cs_source[8];
    /* The sweep line; -1 (or 0 for the sizes) where it was not printed. */
    int has_params;
    int nthread, ngpus;
    uint64_t min_bytes, max_bytes, step;
    int step_factor;         /* 1: step is a factor, 0: bytes, -1 unknown */
    int warmup_iters, iters, agg_iters, validation, graph, unalign;
    cs_nccl_dev_t *devs;     /* in the order printed */
    int ndevs, nnodes;
    int time_ms;             /* the log printed milliseconds */
    int wrong_is_error;      /* the wrong column is a largest error, not a count */
    int has_root_col, has_op_col;
    cs_nccl_row_t *rows;
    int nrows;
    int oob_values;          /* "Out of bounds values" (-1: not printed) */
    int oob_failed;          /* it said FAILED */
    double avg_busbw;        /* "Avg bus bandwidth" (NaN when not printed) */
    unsigned line, end_line; /* first and last line of the table */
    /* Its last row when that does not read whole and no row nor closing
     * line follows it (a job killed while writing it, a launcher's line
     * glued to it): left out, not an error; 0 when none.  cut_why: what
     * reading it said. */
    unsigned cut_line;
    char cut_why[512];
    size_t cap_rows, cap_devs;
} cs_nccl_run_t;

typedef struct cs_nccl_log {
    cs_nccl_run_t *tables;
    int ntables;
    size_t cap_tables;
    /* The file's last line when the end of the file cuts it short (no
     * newline after it: a run killed while writing, a copy cut off) and
     * it does not read whole (a closing line, a header line; a row is its
     * table's cut_line): left out, not an error; 0 when none.  cut_why:
     * what reading it whole said. */
    unsigned cut_line;
    char cut_why[512];
} cs_nccl_log_t;

/* Read `len` bytes of `buf` (need not end with a NUL; NULs are ordinary
 * bytes) named `name` in messages.  CS_OK with *out (cs_nccl_log_destroy),
 * else CS_ERR_PARSE or CS_ERR_NOMEM with *out NULL and err filled. */
int cs_nccl_log_parse(const char *buf, size_t len, const char *name, cs_nccl_log_t **out,
                      cs_err_t *err);
/* cs_nccl_log_parse of a file ("-": standard input); CS_ERR_IO when it
 * cannot be read. */
int cs_nccl_log_load(const char *path, cs_nccl_log_t **out, cs_err_t *err);
/* A file larger than this is refused (CS_ERR_INVAL) before it is read on. */
#define CS_NCCL_LOG_MAX_BYTES ((size_t)256 << 20)
void cs_nccl_log_destroy(cs_nccl_log_t *log);
/* The lines the reader left out of a log read from `path` (its cut_line
 * and its tables'), one line each on f after `prefix`. */
void cs_nccl_log_say_cuts(const cs_nccl_log_t *log, const char *path, const char *prefix,
                          FILE *f);
/* Whether table t's sweep stops short of its maxBytes without nccl-tests'
 * closing lines (`# Out of bounds values`, `# Avg bus bandwidth`): a run
 * killed or out of time. */
int cs_nccl_run_cut_short(const cs_nccl_run_t *t);

#ifdef __cplusplus
}
#endif

#endif /* CS_NCCL_LOG_H */
