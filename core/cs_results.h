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
 * Printers write to a FILE and return CS_OK or CS_ERR_IO; they never
 * allocate.  Table: one block per algorithm (a header line naming it, the
 * platform and rank count, then size count type redop time algbw busbw
 * [#wrong] [predicted]); CSV: a header line then one line per row; JSON: a
 * list of objects with the keys algo, coll, size_bytes, count, dtype,
 * redop, time_us, algbw_GBps, busbw_GBps, ranks, platform (plus wrong and
 * predicted_us when set).
 */
#ifndef CS_RESULTS_H
#define CS_RESULTS_H

#include <stdint.h>
#include <stdio.h>

#include "cs_dtype.h"
#include "cs_sched.h"

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
    char platform[64];
    int64_t wrong;       /* -1: not checked */
    double predicted_us; /* < 0: none */
} cs_result_t;

/* Fill a row: computes count (cs_coll_block_count), algbw and busbw from
 * time_us; wrong = -1, predicted_us = -1. */
void cs_result_fill(cs_result_t *r, const char *algo, cs_coll_t coll, int ranks,
                    uint64_t size_bytes, cs_dtype_t dt, cs_op_t op, double time_us,
                    const char *platform);

typedef enum { CS_FMT_TABLE = 0, CS_FMT_CSV, CS_FMT_JSON, CS_FMT_COUNT } cs_results_fmt_t;
/* "table", "csv", "json"; CS_FMT_COUNT when unknown. */
cs_results_fmt_t cs_results_fmt_parse(const char *s);

int cs_results_print_table(FILE *f, const cs_result_t *rows, int n);
int cs_results_print_csv(FILE *f, const cs_result_t *rows, int n);
int cs_results_print_json(FILE *f, const cs_result_t *rows, int n);
int cs_results_print(FILE *f, cs_results_fmt_t fmt, const cs_result_t *rows, int n);
/* Write the rows to `path` whole or not at all (PATH.tmp.<pid>, then rename;
 * the temporary file is removed on failure).  CS_OK or CS_ERR_IO with err. */
int cs_results_save(const char *path, cs_results_fmt_t fmt, const cs_result_t *rows, int n,
                    cs_err_t *err);

/* Write `s` as a JSON string literal (quotes, backslashes and control
 * characters escaped).  Shared by every JSON writer of collstep. */
void cs_json_write_str(FILE *f, const char *s);

#endif /* CS_RESULTS_H */
