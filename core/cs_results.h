/*
 * cs_results.h - result rows of simulated and live runs, and their
 * printers in the layouts of nccl-tests (table), CSV and JSON.
 *
 * A row is one (algorithm, message size) measurement.  Bandwidths follow
 * nccl-tests: algbw = size / time in GB/s (1 GB = 1e9 bytes), busbw =
 * algbw * cs_coll_busbw_factor(coll, ranks).  `wrong` is the number of
 * wrong elements of a live run (-1: not checked, printed as "N/A");
 * `predicted_us` the alpha-beta prediction (< 0: none, column omitted).
 *
 * Provenance.  Every row says what produced it: the generator parameters
 * in effect (`params`, defaults included), and either the platform and the
 * network model of a simulation (`platform`, `model`) or the transport of a
 * live run (`transport`, "ofi/tcp;ofi_rxm", "shm", "nccl").
 *
 * Comparison (cs_results_compare, CS_RESULTS_COMPARE).  Per (collective,
 * ranks, size), rows are ranked by time (`place` 1 = fastest) and
 * `speedup` = reference time / row time, the reference being a named
 * algorithm or the first row of the size.  The table then has one block per
 * size, best first; CSV and JSON rows gain `place` and `speedup`.
 *
 * Printers write to a FILE and return CS_OK or CS_ERR_IO; they never
 * allocate.  Table: one block per algorithm (a header line naming it, its
 * parameters, the platform and model or the transport, the rank count,
 * then size count type redop time algbw busbw [#wrong] [predicted]); CSV:
 * a header line "algo,coll,size_bytes,count,dtype,redop,time_us,algbw_GBps,
 * busbw_GBps,ranks,platform,model,transport,params[,wrong][,predicted_us]
 * [,place,speedup]" (the first eleven columns as before provenance was
 * added) then one line per row; JSON: a list
 * of objects with the keys algo, params, coll, size_bytes, count, dtype,
 * redop, time_us, algbw_GBps, busbw_GBps, ranks, platform, model,
 * transport (plus wrong, predicted_us, place and speedup when set).
 *
 * nccl-tests layout (cs_results_print_nccl, cs_results_nccl.c): the whole
 * output of one nccl-tests run per table, as nccl-tests CS_NCCL_TESTS_VERSION
 * prints it (src/util.cu there: the same printf formats, column widths and
 * number formatting), preceded by the table's title as "# " lines.  What
 * nccl-tests learns from the GPUs and its command line comes from the table:
 * the sweep as asked, whether results were validated, each rank's host and
 * device name.  Out-of-place and in-place columns both print the row (a
 * simulated collective takes the same time either way).
 */
#ifndef CS_RESULTS_H
#define CS_RESULTS_H

#include <stdint.h>
#include <stdio.h>

#include "cs_dtype.h"
#include "cs_sched.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cs_result {
    char algo[64];
    cs_coll_t coll;
    uint64_t size_bytes;
    uint64_t count;     /* elements (nccl-tests: per rank for blocked collectives) */
    cs_dtype_t dtype;
    cs_op_t redop;
    double time_us;
    double algbw_GBps, busbw_GBps;
    int ranks;
    char platform[64];   /* simulation: the platform spec; live: "" */
    char model[40];      /* simulation: ideal, calibrated, nccl-V:ALGO/PROTO; live: "" */
    char transport[64];  /* live: "ofi/tcp;ofi_rxm", "shm", "tcp", "nccl"; simulation: "" */
    char params[320];    /* generator parameters in effect, "key=value key=value" */
    int64_t wrong;       /* -1: not checked */
    double predicted_us; /* < 0: none */
    int place;           /* comparison: 1 = fastest of its size; 0: not compared */
    double speedup;      /* comparison: reference time / time */
} cs_result_t;

/* Fill a row: computes count (cs_coll_block_count), algbw and busbw from
 * time_us; wrong = -1, predicted_us = -1. */
void cs_result_fill(cs_result_t *r, const char *algo, cs_coll_t coll, int ranks,
                    uint64_t size_bytes, cs_dtype_t dt, cs_op_t op, double time_us,
                    const char *platform);
/* Record what produced the row (NULL leaves a field as it is). */
void cs_result_set_provenance(cs_result_t *r, const char *params, const char *model,
                              const char *transport);

/* Rank the rows per (collective, ranks, size) and set place and speedup
 * against `ref` (an algorithm name; NULL: the first row of each size).
 * CS_ERR_NOTFOUND when `ref` ran at no size. */
int cs_results_compare(cs_result_t *rows, int n, const char *ref, cs_err_t *err);

#define CS_RESULTS_COMPARE 0x1 /* print the comparison view (after cs_results_compare) */
#define CS_RESULTS_FORCE 0x2   /* save: replace a file collstep did not write */

typedef enum {
    CS_FMT_TABLE = 0,
    CS_FMT_CSV,
    CS_FMT_JSON,
    CS_FMT_NCCL_TESTS, /* needs what cs_nccl_table_t holds: cs_results_print_nccl */
    CS_FMT_COUNT
} cs_results_fmt_t;
/* "table", "csv", "json", "nccl-tests"; CS_FMT_COUNT when unknown. */
cs_results_fmt_t cs_results_fmt_parse(const char *s);

int cs_results_print_table(FILE *f, const cs_result_t *rows, int n);
int cs_results_print_compare(FILE *f, const cs_result_t *rows, int n);
int cs_results_print_csv(FILE *f, const cs_result_t *rows, int n);
int cs_results_print_json(FILE *f, const cs_result_t *rows, int n);
/* flags: CS_RESULTS_COMPARE selects the comparison table.  CS_FMT_NCCL_TESTS
 * is not printed from rows alone: CS_ERR_INVAL. */
int cs_results_print(FILE *f, cs_results_fmt_t fmt, unsigned flags, const cs_result_t *rows,
                     int n);
/* Write the rows to `path` whole or not at all (core/cs_out.h): an existing
 * file is replaced only when it holds results collstep wrote (in any of the
 * formats, nccl-tests tables included: their first title line is a
 * table block header), or with CS_RESULTS_FORCE; a directory never.  CS_OK,
 * CS_ERR_EXISTS (refused) or CS_ERR_IO with err. */
int cs_results_save(const char *path, cs_results_fmt_t fmt, unsigned flags,
                    const cs_result_t *rows, int n, cs_err_t *err);
/* 1 when `head` (the first bytes of a file) is collstep results. */
int cs_results_recognize(const char *head, size_t n);
/* What cs_results_save writes, for cs_out_check (core/cs_out.h). */
struct cs_out_kind;
extern const struct cs_out_kind cs_results_out_kind;

/* ---- nccl-tests layout (cs_results_nccl.c) ------------------------------ */

/* The nccl-tests release whose output layout cs_results_print_nccl prints. */
#define CS_NCCL_TESTS_VERSION "2.19.6"

/* One table: the output of one nccl-tests run of one collective. */
typedef struct cs_nccl_table {
    const char *title;        /* "# " lines printed first ('\n' separates them); the first
                                 names the collective ("allreduce ring ...") so that
                                 cs_results_recognize knows the file */
    uint64_t min_bytes, max_bytes; /* the sweep as asked (cs_nccl_sweep) */
    uint64_t step;            /* the sweep's factor or step in bytes */
    int step_factor;          /* 1: step is a factor (-f), 0: bytes (-i) */
    int validation;           /* 1: results checked, #wrong printed (a row's wrong, 0
                                 when < 0); 0: #wrong N/A */
    int root;                 /* the root of broadcast and reduce (-1 printed for others) */
    int ranks;
    const char *const *hosts;   /* host of each rank */
    const char *const *devices; /* device name of each rank */
    const cs_result_t *rows;  /* one collective and rank count, sizes in order */
    int n;
    const int *devnum;        /* the device number of each rank on its host, or NULL: its
                                 place among the ranks on the same host */
} cs_nccl_table_t;

/* The nccl-tests sweep (-b MIN -e MAX with -f FACTOR or -i STEP) that runs
 * exactly `sizes`, in that order: a factor when each size is an integer
 * multiple F >= 2 of the one before, else a step when sizes grow by the same
 * number of bytes; one size: its own MIN and MAX with nccl-tests' default step
 * (1048576 bytes).  CS_OK, or CS_ERR_INVAL when no sweep runs these sizes. */
int cs_nccl_sweep(const uint64_t *sizes, int n, uint64_t *min, uint64_t *max, uint64_t *step,
                  int *factor);
/* nccl-tests' program of a collective: "all_reduce_perf", "alltoall_perf", ... */
const char *cs_nccl_program(cs_coll_t c);
/* Print the tables one after the other (each ends with nccl-tests' empty
 * line).  CS_OK or CS_ERR_IO. */
int cs_results_print_nccl(FILE *f, const cs_nccl_table_t *t, int ntables);
/* cs_results_save for the nccl-tests layout (flags: CS_RESULTS_FORCE). */
int cs_results_save_nccl(const char *path, unsigned flags, const cs_nccl_table_t *t, int ntables,
                         cs_err_t *err);

/* Write `s` as a JSON string literal (quotes, backslashes and control
 * characters escaped).  Shared by every JSON writer of collstep. */
void cs_json_write_str(FILE *f, const char *s);

#ifdef __cplusplus
}
#endif

#endif /* CS_RESULTS_H */
