/*
 * test_nccl_log.c - core/cs_nccl_log.h on real nccl-tests logs of four
 * public sources (tests/core/logs, README there), each with values read off
 * the log by hand; on collstep's own nccl-tests tables (cs_results_print_nccl,
 * what `sim --format nccl-tests` writes) read back; on launcher prefixes,
 * the NCCL lines around tables and every column layout; and on malformed
 * input, whose errors must name the line and column.
 *
 *   core_nccl_log LOGDIR
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cs_nccl_log.h"
#include "cs_results.h"
#include "cs_test.h"

static const char *logdir = ".";

static cs_nccl_log_t *load(const char *file)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", logdir, file);
    cs_err_t err = {0};
    cs_nccl_log_t *log = NULL;
    int st = cs_nccl_log_load(path, &log, &err);
    CS_TEST_CHECK(st == CS_OK, "%s: %s", file, err.msg);
    return log;
}

static cs_nccl_log_t *parse(const char *text, cs_err_t *err)
{
    cs_nccl_log_t *log = NULL;
    memset(err, 0, sizeof(*err));
    cs_nccl_log_parse(text, strlen(text), "t.log", &log, err);
    return log;
}

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(1.0, fabs(b));
}

/* The row of a table with this size (the first one). */
static const cs_nccl_row_t *row_of(const cs_nccl_run_t *t, uint64_t size)
{
    for (int i = 0; i < t->nrows; i++)
        if (t->rows[i].size == size)
            return &t->rows[i];
    return NULL;
}

/* 2 nodes x 8 H100, Open MPI, nccl-tests of 2022-2023 (Group, PCI domain
 * bus ids, "#wrong" with %5g), pasted into a markdown file. */
static int a3mega(void)
{
    cs_nccl_log_t *log = load("a3mega-h100-2nodes.md");
    CS_TEST_REQUIRE(log && log->ntables == 1, "one table");
    const cs_nccl_run_t *t = &log->tables[0];
    CS_TEST_CHECK(t->coll == CS_NCCL_ALL_REDUCE && !strcmp(t->coll_from, "command"),
                  "allreduce from the mpirun line: %s from %s", cs_nccl_coll_name(t->coll),
                  t->coll_from);
    CS_TEST_CHECK(!strcmp(t->program, "all_reduce_perf"), "program %s", t->program);
    CS_TEST_CHECK(t->ndevs == 16 && t->nnodes == 2, "16 ranks on 2 nodes: %d %d", t->ndevs,
                  t->nnodes);
    CS_TEST_CHECK(!strcmp(t->devs[7].host, "ztan-mig-235z") && t->devs[7].node == 0 &&
                      !strcmp(t->devs[8].host, "ztan-mig-gq73") && t->devs[8].node == 1,
                  "hosts of ranks 7 and 8");
    CS_TEST_CHECK(t->devs[8].rank == 8 && t->devs[8].group == 0 && t->devs[8].pid == 6733 &&
                      t->devs[8].device == 0 && !strcmp(t->devs[8].busid, "0000:04:00") &&
                      !strcmp(t->devs[8].name, "NVIDIA H100 80GB HBM3"),
                  "rank 8's line: pid %d bus %s name '%s'", t->devs[8].pid, t->devs[8].busid,
                  t->devs[8].name);
    CS_TEST_CHECK(t->nthread == 1 && t->ngpus == 1 && t->min_bytes == 8 &&
                      t->max_bytes == 8589934592ull && t->step == 2 && t->step_factor == 1 &&
                      t->warmup_iters == 5 && t->iters == 20 && t->agg_iters == 1 &&
                      t->validation == 1 && t->graph == 0 && t->unalign == -1,
                  "the sweep line");
    CS_TEST_CHECK(!t->tests_version[0] && !t->nccl_version[0], "no versions printed");
    CS_TEST_CHECK(t->nrows == 31 && !t->time_ms && !t->wrong_is_error, "31 rows in us: %d",
                  t->nrows);
    const cs_nccl_row_t *r = row_of(t, 8589934592ull);
    CS_TEST_REQUIRE(r != NULL, "the 8 GiB row");
    CS_TEST_CHECK(r->count == 2147483648ull && !strcmp(r->type, "float") &&
                      !strcmp(r->redop, "sum") && r->root == -1,
                  "8 GiB: count, type, op, root");
    CS_TEST_CHECK(near(r->oop.time_us, 47535) && near(r->oop.algbw_GBps, 180.71) &&
                      near(r->oop.busbw_GBps, 338.82) && r->oop.wrong == 0 &&
                      near(r->ip.time_us, 47743) && near(r->ip.busbw_GBps, 337.35),
                  "8 GiB: %g us %g GB/s", r->oop.time_us, r->oop.busbw_GBps);
    r = row_of(t, 1048576);
    CS_TEST_CHECK(r && near(r->oop.time_us, 203.2) && near(r->oop.busbw_GBps, 9.68) &&
                      near(r->ip.time_us, 207.2) && near(r->ip.busbw_GBps, 9.49),
                  "1 MiB row");
    CS_TEST_CHECK(t->oob_values == 0 && !t->oob_failed && near(t->avg_busbw, 70.742),
                  "closing lines: %d %g", t->oob_values, t->avg_busbw);
    CS_TEST_CHECK(t->line == 9 && t->end_line == 64, "lines %u-%u", t->line, t->end_line);
    cs_nccl_log_destroy(log);
    return 0;
}

/* nccl-tests built against NCCL 2.4 before March 2019: times in ms, no units
 * line, "bytes N type op ... res", the sweep and closing lines without '#',
 * two GPUs driven by one process (-g 2) under Open MPI. */
static int dcslin(void)
{
    cs_nccl_log_t *log = load("dcslin-rtx2080ti-ms.log");
    CS_TEST_REQUIRE(log && log->ntables == 1, "one table");
    const cs_nccl_run_t *t = &log->tables[0];
    CS_TEST_CHECK(t->time_ms && t->wrong_is_error, "ms, and res is an error");
    CS_TEST_CHECK(t->coll == CS_NCCL_ALL_REDUCE && !strcmp(t->program, "all_reduce_perf"),
                  "allreduce from the command line");
    CS_TEST_CHECK(!strcmp(t->nccl_version, "2.4") &&
                      !strcmp(t->nccl_version_from, "compiled with"),
                  "NCCL 2.4: %s", t->nccl_version);
    CS_TEST_CHECK(t->ndevs == 2 && t->nnodes == 1 && !strcmp(t->devs[1].host, "ncrh") &&
                      t->devs[1].group == -1 && t->devs[1].pid == -1 &&
                      !strcmp(t->devs[1].busid, "0x06") &&
                      !strcmp(t->devs[1].name, "GeForce RTX 2080 Ti"),
                  "the devices of one host");
    CS_TEST_CHECK(t->ngpus == 2 && t->validation == 0 && t->agg_iters == -1, "sweep line");
    CS_TEST_CHECK(t->nrows == 21 && t->rows[0].size == 0 && t->rows[1].size == 0,
                  "21 rows, two of 0 bytes: %d", t->nrows);
    const cs_nccl_row_t *r = row_of(t, 1048576);
    CS_TEST_CHECK(r && near(r->oop.time_us, 293) && near(r->oop.busbw_GBps, 3.58) &&
                      r->oop.wrong == -1 && near(r->ip.time_us, 294) &&
                      near(r->ip.busbw_GBps, 3.57),
                  "1 MiB: 0.293 ms = %g us", r ? r->oop.time_us : -1);
    CS_TEST_CHECK(t->oob_values == 0 && near(t->avg_busbw, 0.778073), "closing lines");
    cs_nccl_log_destroy(log);
    return 0;
}

/* PerfKitBenchmarker: 2 hosts x 1 K80, the 2021-2022 layout ("Rank Pid", a
 * root column, "#wrong" N/A without validation), times of 7 digits. */
static int perfkit(void)
{
    cs_nccl_log_t *log = load("perfkit-k80-2hosts.log");
    CS_TEST_REQUIRE(log && log->ntables == 1, "one table");
    const cs_nccl_run_t *t = &log->tables[0];
    CS_TEST_CHECK(t->coll == CS_NCCL_ALL_REDUCE && !strcmp(t->coll_from, "columns"),
                  "allreduce from the columns: %s", cs_nccl_coll_name(t->coll));
    CS_TEST_CHECK(t->ndevs == 2 && t->nnodes == 2 && t->devs[0].pid == 9192 &&
                      t->devs[1].pid == 9178 && !strcmp(t->devs[1].host, "pkb-2b6a393d-3"),
                  "two hosts");
    CS_TEST_CHECK(t->iters == 1 && t->agg_iters == 1 && t->validation == 0 && t->graph == 0,
                  "sweep line");
    CS_TEST_CHECK(t->nrows == 11 && t->has_root_col, "11 rows");
    const cs_nccl_row_t *r = row_of(t, 1073741824);
    CS_TEST_CHECK(r && near(r->oop.time_us, 1752724) && near(r->oop.busbw_GBps, 0.61) &&
                      r->oop.wrong == -1 && near(r->ip.time_us, 1763386),
                  "1 GiB row");
    r = row_of(t, 8388608);
    CS_TEST_CHECK(r && near(r->oop.time_us, 14868) && near(r->ip.time_us, 14825), "8 MiB row");
    CS_TEST_CHECK(near(t->avg_busbw, 0.565546), "avg");
    cs_nccl_log_destroy(log);
    return 0;
}

/* SuperBench: one process driving 8 A100 (-g 8), the 2019-2021 layout
 * ("error" column, no root), an NCCL INFO line between header and rows. */
static int superbench(void)
{
    cs_nccl_log_t *log = load("superbench-a100-1proc.log");
    CS_TEST_REQUIRE(log && log->ntables == 1, "one table");
    const cs_nccl_run_t *t = &log->tables[0];
    CS_TEST_CHECK(t->coll == CS_NCCL_ALL_REDUCE, "allreduce from the columns (count = size / 4)");
    CS_TEST_CHECK(t->ndevs == 8 && t->nnodes == 1 && t->devs[5].pid == 112424 &&
                      t->devs[5].device == 5 && !strcmp(t->devs[5].name, "A100-SXM4-40GB"),
                  "one host, one pid");
    CS_TEST_CHECK(t->ngpus == 8 && t->agg_iters == -1 && t->wrong_is_error && !t->has_root_col,
                  "layout");
    CS_TEST_CHECK(t->nrows == 34, "34 rows: %d", t->nrows);
    const cs_nccl_row_t *r = row_of(t, 4194304);
    CS_TEST_CHECK(r && near(r->oop.time_us, 112.0) && near(r->oop.busbw_GBps, 65.52) &&
                      near(r->ip.time_us, 110.2) && near(r->ip.busbw_GBps, 66.60),
                  "4 MiB row");
    r = row_of(t, 8589934592ull);
    CS_TEST_CHECK(r && near(r->oop.time_us, 63896) && near(r->oop.busbw_GBps, 235.26),
                  "8 GiB row");
    CS_TEST_CHECK(near(t->avg_busbw, 68.4048), "avg");
    cs_nccl_log_destroy(log);
    return 0;
}

/* SuperBench's alltoall and allgather of the same layout: alltoall printed
 * no operation under "redop" (a row one word short), allgather has no op
 * column and counts per rank; both told by their columns. */
static int superbench_more(void)
{
    cs_nccl_log_t *log = load("superbench-a100-alltoall.log");
    CS_TEST_REQUIRE(log && log->ntables == 1, "one alltoall table");
    const cs_nccl_run_t *t = &log->tables[0];
    CS_TEST_CHECK(t->coll == CS_NCCL_ALLTOALL && !strcmp(t->coll_from, "columns") &&
                      t->ndevs == 8 && t->devs[0].pid == 167261 && t->nrows == 34,
                  "alltoall: %s, %d rows", cs_nccl_coll_name(t->coll), t->nrows);
    const cs_nccl_row_t *r = row_of(t, 16777216);
    CS_TEST_CHECK(r && r->count == 524288 && !r->redop[0] && near(r->oop.time_us, 160.4) &&
                      near(r->oop.busbw_GBps, 91.55) && near(r->ip.time_us, 158.8) &&
                      near(r->ip.busbw_GBps, 92.43) && r->ip.wrong == -1,
                  "alltoall 16 MiB row");
    cs_nccl_log_destroy(log);
    log = load("superbench-a100-allgather.log");
    CS_TEST_REQUIRE(log && log->ntables == 1, "one allgather table");
    t = &log->tables[0];
    CS_TEST_CHECK(t->coll == CS_NCCL_ALL_GATHER && !t->has_op_col && t->nrows == 34,
                  "allgather: %s", cs_nccl_coll_name(t->coll));
    r = row_of(t, 8589934592ull);
    CS_TEST_CHECK(r && r->count == 268435456 && near(r->oop.time_us, 33646) &&
                      near(r->oop.busbw_GBps, 223.39) && near(r->ip.time_us, 32669) &&
                      near(r->ip.busbw_GBps, 230.07),
                  "allgather 8 GiB row");
    CS_TEST_CHECK(near(t->avg_busbw, 58.2651), "avg %g", t->avg_busbw);
    cs_nccl_log_destroy(log);
    return 0;
}

/* collstep's own tables (what sim and plan --format nccl-tests print) read
 * back: each collective, the rank map with hosts shared, the numbers as
 * narrowed, the closing lines; several tables in one text. */
static int round_trip(void)
{
    static const cs_coll_t colls[] = {CS_COLL_ALLREDUCE, CS_COLL_REDUCE_SCATTER,
                                      CS_COLL_ALLGATHER, CS_COLL_BROADCAST, CS_COLL_REDUCE,
                                      CS_COLL_ALLTOALL};
    static const uint64_t sizes[] = {1024, 4096, 16384};
    static const double us[] = {12.345, 456.78, 98765.4};
    const char *hosts[] = {"h0", "h1", "h0", "h1"}, *devs[] = {"GPU", "GPU", "GPU", "GPU"};
    cs_result_t rows[6][3];
    cs_nccl_table_t tabs[6];
    for (int c = 0; c < 6; c++) {
        for (int i = 0; i < 3; i++) {
            cs_result_fill(&rows[c][i], "ring", colls[c], 4, sizes[i], CS_DT_F32,
                           CS_OP_SUM, us[i], "p");
            rows[c][i].wrong = c == 2 ? 3 : 0;
        }
        tabs[c] = (cs_nccl_table_t){.title = "by hand", .min_bytes = 1024, .max_bytes = 16384,
                                    .step = 4, .step_factor = 1, .validation = c != 1,
                                    .root = c == 3 || c == 4 ? 2 : -1, .ranks = 4,
                                    .hosts = hosts, .devices = devs, .rows = rows[c], .n = 3};
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CS_TEST_REQUIRE(f && cs_results_print_nccl(f, tabs, 6) == CS_OK, "print");
    fclose(f);
    cs_err_t err;
    cs_nccl_log_t *log = NULL;
    int st = cs_nccl_log_parse(buf, len, "rt", &log, &err);
    CS_TEST_REQUIRE(st == CS_OK && log->ntables == 6, "read back: %s", st ? err.msg : "");
    static const cs_nccl_coll_t want[] = {CS_NCCL_ALL_REDUCE, CS_NCCL_REDUCE_SCATTER,
                                          CS_NCCL_ALL_GATHER, CS_NCCL_BROADCAST, CS_NCCL_REDUCE,
                                          CS_NCCL_ALLTOALL};
    for (int c = 0; c < 6; c++) {
        const cs_nccl_run_t *t = &log->tables[c];
        cs_coll_t back;
        CS_TEST_CHECK(t->coll == want[c] && !strcmp(t->coll_from, "program") &&
                          cs_nccl_coll_to_cs(t->coll, &back) == CS_OK && back == colls[c],
                      "table %d: %s", c, cs_nccl_coll_name(t->coll));
        CS_TEST_CHECK(!strcmp(t->tests_version, CS_NCCL_TESTS_VERSION) && t->nccl_library == 0 &&
                          !t->nccl_version[0],
                      "versions of table %d", c);
        CS_TEST_CHECK(t->ndevs == 4 && t->nnodes == 2 && t->devs[2].node == 0 &&
                          t->devs[3].node == 1 && t->devs[2].device == 1,
                      "table %d: 4 ranks on 2 hosts", c);
        CS_TEST_CHECK(t->validation == (c != 1) && t->min_bytes == 1024 && t->step == 4,
                      "table %d: sweep", c);
        CS_TEST_REQUIRE(t->nrows == 3, "table %d: 3 rows", c);
        for (int i = 0; i < 3; i++) {
            const cs_nccl_row_t *r = &t->rows[i];
            const cs_result_t *w = &rows[c][i];
            char bw[16];
            snprintf(bw, sizeof(bw), "%.2f", w->busbw_GBps);
            CS_TEST_CHECK(r->size == w->size_bytes && r->count == w->count &&
                              fabs(r->oop.time_us - w->time_us) < 0.006 &&
                              fabs(r->oop.busbw_GBps - atof(bw)) < 1e-9 &&
                              r->ip.time_us == r->oop.time_us,
                          "table %d row %d: %g us (wrote %g)", c, i, r->oop.time_us, w->time_us);
            CS_TEST_CHECK(r->root == (c == 3 || c == 4 ? 2 : -1) &&
                              r->oop.wrong == (c == 1 ? -1 : c == 2 ? 3 : 0),
                          "table %d row %d: root %d wrong %g", c, i, r->root, r->oop.wrong);
        }
        CS_TEST_CHECK(t->oob_values == (c == 2 ? 6 : 0) && t->oob_failed == (c == 2),
                      "table %d: out of bounds %d", c, t->oob_values);
    }
    cs_nccl_log_destroy(log);
    free(buf);
    return 0;
}

/* Launcher prefixes, the NCCL lines around tables, the columns of later
 * releases, old broadcast with one placement, a table without header part. */
static int variants(void)
{
    cs_err_t err;
    cs_nccl_log_t *log = parse(
        "[1,0]<stderr>:Authorization required\n"
        "[1,0]<stdout>:# nccl-tests version 2.20.0 (b4d5bee) nccl-headers=23102 "
        "nccl-library=22807\n"
        "[1,0]<stdout>:# Collective test starting: alltoall_perf_mpi\n"
        "[1,0]<stdout>:#  Rank  0 Group  0 Pid 1 on 10-0-0-1 device  0 [0000:02:00] G\n"
        "[1,1]<stdout>:10-0-0-1:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Ring.\n"
        "[1,0]<stdout>:#  Rank  1 Group  0 Pid 2 on 10-0-0-1 device  1 [0000:03:00] G\n"
        "[1,0]<stdout>:#       size  count  type  redop  root  cputime  algbw  busbw  copybw "
        "#wrong  cputime  algbw  busbw  copybw #wrong\n"
        "[1,0]<stdout>:#        (B)    (elements)    (us)\n"
        "10-0-0-1:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n"
        "[1,0]<stdout>:  1048576  131072  float  none  -1  43.6  24.05  12.02  1.0  0  "
        "43.1  24.3  12.2  1.0  N/A\n"
        "[1,0]<stdout>:# Avg bus bandwidth    : 12.11 \n"
        "0: + srun all_gather_perf -b 8 -e 8\n"
        "0: # NCCL version 2.21.5+cuda12.4\n"
        "0: NCCL_PROTO=Simple\n"
        "0: #       size   count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  "
        "busbw  #wrong  i_min  i_max  i_p99  i_cv%  timestamp\n"
        "0:            8   2  float  none  -1  12.90  0.00  0.00  0  12.87  0.00  0.00  0  "
        "1.0  2.0  3.0  4.0  2025-01-01 12:00:00\n"
        "[0] #      bytes             N    type    root     time  algbw  busbw      res\n"
        "[0]            8             2   float       1    0.010   0.00   0.00    0e+00\n",
        &err);
    CS_TEST_REQUIRE(log && log->ntables == 3, "three tables: %s", err.msg);
    const cs_nccl_run_t *t = &log->tables[0];
    CS_TEST_CHECK(t->coll == CS_NCCL_ALLTOALL && !strcmp(t->program, "alltoall_perf_mpi") &&
                      !strcmp(t->tests_version, "2.20.0") && t->nccl_headers == 23102 &&
                      !strcmp(t->nccl_version, "2.28.7") &&
                      !strcmp(t->nccl_version_from, "nccl-library"),
                  "table 1: %s %s %s", cs_nccl_coll_name(t->coll), t->tests_version,
                  t->nccl_version);
    CS_TEST_CHECK(!strcmp(t->algo, "Ring") && !t->proto[0] && t->algo_line == 5 &&
                      t->proto_line == 0,
                  "NCCL_ALGO inside: '%s' at %u", t->algo, t->algo_line);
    CS_TEST_CHECK(t->ndevs == 2 && t->nnodes == 1 && !strcmp(t->devs[0].host, "10-0-0-1"),
                  "hosts named like addresses");
    CS_TEST_CHECK(t->nrows == 1 && near(t->rows[0].ip.busbw_GBps, 12.2) &&
                      t->rows[0].ip.wrong == -1 && near(t->avg_busbw, 12.11),
                  "cputime and copybw columns");
    t = &log->tables[1];
    CS_TEST_CHECK(t->coll == CS_NCCL_ALL_GATHER && !strcmp(t->coll_from, "command") &&
                      !strcmp(t->nccl_version, "2.21.5") && !strcmp(t->proto, "Simple") &&
                      t->proto_line == 14 && !t->algo[0] && t->algo_line == 0,
                  "table 2: %s from %s, NCCL %s", cs_nccl_coll_name(t->coll), t->coll_from,
                  t->nccl_version);
    CS_TEST_CHECK(t->nrows == 1 && near(t->rows[0].ip.time_us, 12.87), "timestamp column");
    t = &log->tables[2];
    CS_TEST_CHECK(t->coll == CS_NCCL_BROADCAST && t->time_ms && t->nrows == 1 &&
                      t->rows[0].root == 1 && near(t->rows[0].oop.time_us, 10) &&
                      !t->rows[0].ip.present,
                  "old broadcast: %s", cs_nccl_coll_name(t->coll));
    cs_nccl_log_destroy(log);
    /* NCCL's version line as NCCL INFO, and bare inside a table */
    log = parse("h:1:1 [0] NCCL INFO NCCL version 2.18.5+cuda12.2\n"
                "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor)\n"
                "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor)\n"
                "NCCL version 2.27.3+cuda12.9\n",
                &err);
    CS_TEST_REQUIRE(log && log->ntables == 2, "two tables: %s", err.msg);
    CS_TEST_CHECK(!strcmp(log->tables[0].nccl_version, "2.18.5") &&
                      !strcmp(log->tables[1].nccl_version, "2.27.3") &&
                      !strcmp(log->tables[1].nccl_version_from, "NCCL version line"),
                  "NCCL versions %s %s", log->tables[0].nccl_version, log->tables[1].nccl_version);
    cs_nccl_log_destroy(log);
    return 0;
}

/* Malformed input: NAME:LINE:COL and what was expected. */
static void malformed(void)
{
    static const char hdr[] =
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
        "     time   algbw   busbw  #wrong\n";
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"", "t.log:1: the file is empty"},
        {"hello\nworld\n", "t.log:2: no nccl-tests table found"},
        {"x\n%s     1048576        262144     float     sum      -1    12x.5    0.02    0.03"
         "       0     9.0    0.01    0.01       0\n# Out of bounds values : 0 OK\n",
         "t.log:3:57: expected a time, found '12x.5'"},
        {"x\n%s     1048576        262144     float     sum      -1    -12.5    0.02    0.03"
         "       0     9.0    0.01    0.01       0\n# Out of bounds values : 0 OK\n",
         "t.log:3:57: expected a time of zero or more, found '-12.5'"},
        {"x\n%s     1048576        262144     float     sum      -1    0x10    0.02    0.03"
         "       0     9.0    0.01    0.01       0\n# Out of bounds values : 0 OK\n",
         "t.log:3:57: expected a time, found '0x10'"},
        {"x\n%s     1048576        262144     float     sum      -1    12.5    0.02    0.03"
         "       0   1e-30    0.01    0.01       0\n# Out of bounds values : 0 OK\n",
         "t.log:3:88: expected a time that 1048576 bytes can take (at most 100 TB/s), found "
         "'1e-30'"},
        {"x\n%s     1048576        262144     float     sum      -1    12.5   83.89   83.89"
         "       0     9.0    0.01    0.01       0\n# Out of bounds values : 0 OK\n",
         "t.log:3:90: expected a time that agrees with the row's size 1048576 B and algbw 0.01 "
         "GB/s (about 1.049e+05 us; one of the three was changed), found '9.0'"},
        {"x\n%s     1048576        262144     float     sum      -1    12.5   83.89   83.89       0    12.5   83.89       0\n# Out of bounds values : 0 OK\n",
         "t.log:3:109: expected a number of wrong elements or N/A, found the end of the "
         "line (the row has 12 words where the column header has 13: a column may be missing at "
         "or before this one)"},
        {"%s     1048576        262144     float     sum      -1    12.5\n"
         "     2097152        524288     float     sum      -1    20971.5   0.1   0.1   0   20971.5"
         "   0.1   0.1   0\n",
         "t.log:2:61: expected an algorithm bandwidth, found the end of the line"},
        {"%s  8  2  float  sum  -1  8.0  0.0  0.0  0  8.0  0.0  0.0  0  7\n"
         "# Avg bus bandwidth : 1\n",
         "t.log:2:61: expected the end of the row, found '7'"},
        {"%s  8  2  float  sum  -1  8.0  0.0  0.0  zero  8.0  0.0  0.0  0\n"
         "# Out of bounds values : 0 OK\n",
         "t.log:2:40: expected a number of wrong elements or N/A, found 'zero'"},
        {"#  Rank  0 Group  0 Pid 1 at h device 0 [0x00] X\n",
         "t.log:1:27: expected 'Group', 'Pid' or 'on', found 'at'"},
        {"#  Rank  0 Pid 1 on h device 0 0x00 X\n",
         "t.log:1:32: expected a bus id in brackets, found '0x00'"},
        {"#  Rank  0 on h device 0 [0x00] X\n#  Rank  0 on g device 0 [0x00] X\n",
         "t.log:2:1: rank 0 is listed twice"},
        {"#  Rank  0 on h device 0 [0x00] X\n#  Rank  2 on g device 0 [0x00] X\n",
         "t.log:1: the device block lists 2 ranks but names rank 2"},
        {"# size count type redop root time algbw busbw #wrong flops\n",
         "t.log:1:54: expected a column name"},
        {"# size count type time algbw\n",
         "t.log:1:29: expected 'time algbw busbw' for each placement"},
        {"# nThread 1 nGpus 1 minBytes x maxBytes 8 step: 2(factor)\n",
         "t.log:1:30: expected a size in bytes, found 'x'"},
        {"# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(fact)\n",
         "t.log:1:50: expected '(factor)' or '(bytes)', found '(fact)'"},
        {"# nThread 1 minBytes 8 maxBytes 8\n", "t.log:1:34: expected 'nGpus'"},
        {"%s  8  2  float  sum  -1  8.0  0.0  0.0  0  8.0  0.0  0.0  0\n"
         "# Out of bounds values : many OK\n",
         "t.log:3:26: expected a count, found 'many'"},
        {"%s# Avg bus bandwidth 1.5\n", "t.log:2:21: expected ':', found '1.5'"},
        {"# nccl-tests version\n", "t.log:1:21: expected the nccl-tests version, found the end"},
        {"# nccl-tests version 2.1 nccl-library=x\n",
         "t.log:1:39: expected a version code, found 'x'"},
        {"\xff\xfe#\x01 nThread\n", "t.log:1: the file is UTF-16 text"},
        {"\x1f\x8b\x08\x08", "t.log:1: the file is gzip-compressed"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[1024];
        snprintf(text, sizeof(text), cases[i].text, hdr);
        cs_err_t err;
        cs_nccl_log_t *log = parse(text, &err);
        CS_TEST_CHECK(log == NULL && err.code == CS_ERR_PARSE &&
                          strncmp(err.msg, cases[i].want, strlen(cases[i].want)) == 0,
                      "case %zu: got '%s', want '%s...'", i, err.msg, cases[i].want);
        cs_nccl_log_destroy(log);
    }
    cs_err_t err;
    cs_nccl_log_t *log = NULL;
    CS_TEST_CHECK(cs_nccl_log_load("/nonexistent/x.log", &log, &err) == CS_ERR_IO && !log,
                  "a missing file: %s", err.msg);
}

/* srun --label pads the rank: " 0: " before every line (issue290-h100-2nodes.log). */
static int srun_label(void)
{
    cs_nccl_log_t *log = load("issue290-h100-2nodes.log");
    CS_TEST_REQUIRE(log && log->ntables == 1, "one table behind srun's padded labels");
    const cs_nccl_run_t *t = &log->tables[0];
    CS_TEST_CHECK(t->ndevs == 16 && t->nnodes == 2 && !strcmp(t->devs[15].host, "node007") &&
                      t->devs[15].pid == 541705 && !strcmp(t->devs[15].busid, "0xc1"),
                  "16 ranks on node005 and node007; rank 15's line");
    CS_TEST_CHECK(t->min_bytes == 8388608ull && t->max_bytes == 8589934592ull &&
                      t->iters == 200 && t->validation == 0,
                  "the sweep line");
    CS_TEST_CHECK(t->nrows == 11, "11 rows: %d", t->nrows);
    const cs_nccl_row_t *r = row_of(t, 8388608ull);
    CS_TEST_REQUIRE(r != NULL, "the 8 MiB row");
    CS_TEST_CHECK(near(r->oop.time_us, 215.3) && near(r->ip.time_us, 180.0) &&
                      near(r->ip.busbw_GBps, 87.38) && r->ip.wrong == -1,
                  "8 MiB: out of place 215.3 us, in place 180.0 us, busbw 87.38, #wrong N/A");
    CS_TEST_CHECK(near(t->avg_busbw, 142.735), "Avg bus bandwidth %g", t->avg_busbw);
    cs_nccl_log_destroy(log);
    return 0;
}

/* A file that ends inside a line (a run killed while writing, a copy cut
 * off): the line is left out, what came before it is read; the same line
 * with its newline is an error (a row written whole but wrong). */
static int cut_short(void)
{
    static const char hdr[] =
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
        "     time   algbw   busbw  #wrong\n";
    static const char row[] = "     1048576        262144     float     sum      -1    93.25   "
                              "11.24   21.08      0    82.98   12.64   23.69      0\n";
    static const char *const cuts[] = {
        "     2097152        524288     float     sum      -1    94.22", /* inside a row */
        ("     2097152        524288     float     sum      -1    94.22   22.26   41.73      0"
         "    93.52   22.42   42.05      0"),                          /* whole, no newline */
        "# Avg bus bandw",         /* a comment then: reads whole */
        "# Out of bounds values : ", /* a closing line */
        "# nThread 1 nGpus 1 minBytes 8 maxBytes", /* the next table's sweep line */
        "#  Rank  0 Group  0 Pid", /* its device block */
    };
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        char text[1024];
        snprintf(text, sizeof(text), "%s%s%s", hdr, row, cuts[i]);
        cs_err_t err = {0};
        cs_nccl_log_t *log = parse(text, &err);
        CS_TEST_REQUIRE(log && log->ntables >= 1, "cut %zu: read: %s", i, err.msg);
        int whole = i == 1 || i == 2; /* they read whole */
        /* a row is its table's cut (cut_line), another line the file's */
        unsigned tcut = log->tables[0].cut_line, fcut = log->cut_line;
        CS_TEST_CHECK(log->tables[0].nrows == 1 + (i == 1) &&
                          tcut == (i == 0 ? 3u : 0u) && fcut == (whole || i == 0 ? 0u : 3u),
                      "cut %zu: %d rows, cut at line %u / %u", i, log->tables[0].nrows, tcut, fcut);
        CS_TEST_CHECK(i != 0 || strstr(log->tables[0].cut_why, "t.log:3:") != NULL,
                      "cut 0: what reading it said: '%s'", log->tables[0].cut_why);
        cs_nccl_log_destroy(log);
        /* with its newline: a row that is its table's last still is its
         * cut; any other line that does not read is an error */
        snprintf(text, sizeof(text), "%s%s%s\n", hdr, row, cuts[i]);
        log = parse(text, &err);
        CS_TEST_CHECK(whole || i == 0 ? log != NULL : log == NULL && err.code == CS_ERR_PARSE,
                      "cut %zu with a newline: %s", i, log ? "read" : err.msg);
        cs_nccl_log_destroy(log);
    }
    /* a row that does not read, then: a launcher's line glued to it or after
     * it (a job killed while writing): the table's cut; another row or the
     * closing lines (the run went on): an error at the row */
    static const struct {
        const char *after;
        int ok;
    } then[] = {
        {"  slurmstepd: error: *** JOB 1234 ON n1 CANCELLED AT 2026-01-01 DUE TO TIME "
         "LIMIT ***", 1},
        {"\nslurmstepd: error: *** JOB 1234 CANCELLED ***\n", 1},
        {"\n# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor)\n", 1},
        {"\n     4194304       1048576     float     sum      -1    110.9   37.82   70.91      0"
         "    111.9   37.47   70.25      0\n", 0},
        {"\n# Out of bounds values : 0 OK\n", 0},
    };
    for (size_t i = 0; i < sizeof(then) / sizeof(then[0]); i++) {
        char text[1024];
        snprintf(text, sizeof(text), "%s%s     2097152        524288     float     sum      -1"
                                     "    94.22%s", hdr, row, then[i].after);
        cs_err_t err = {0};
        cs_nccl_log_t *log = parse(text, &err);
        CS_TEST_CHECK(then[i].ok ? log && log->tables[0].nrows == 1 && log->tables[0].cut_line == 3
                                 : !log && strncmp(err.msg, "t.log:3:", 8) == 0,
                      "a row that does not read, then %zu: %s", i, log ? "read" : err.msg);
        cs_nccl_log_destroy(log);
    }
    /* a UTF-8 byte-order mark before the first line: read as without it */
    {
        char bom[1024];
        snprintf(bom, sizeof(bom), "\xef\xbb\xbf# nccl-tests version 2.17.8 nccl-headers=22902 "
                                   "nccl-library=22902\n%s%s", hdr, row);
        cs_err_t e = {0};
        cs_nccl_log_t *b = parse(bom, &e);
        CS_TEST_CHECK(b && b->ntables == 1 && !strcmp(b->tables[0].tests_version, "2.17.8") &&
                          b->tables[0].nrows == 1,
                      "a byte-order mark: %s", b ? b->tables[0].tests_version : e.msg);
        cs_nccl_log_destroy(b);
    }
    /* tabs where nccl-tests printed blanks, in the header's phrases too */
    {
        char tabs[1024];
        snprintf(tabs, sizeof(tabs), "#\tnccl-tests\tversion 2.17.8 nccl-headers=22902 "
                                     "nccl-library=22902\n#\tCollective test starting:\t"
                                     "all_gather_perf\n%s%s", hdr, row);
        cs_err_t e = {0};
        cs_nccl_log_t *b = parse(tabs, &e);
        CS_TEST_CHECK(b && b->ntables == 1 && !strcmp(b->tables[0].tests_version, "2.17.8") &&
                          b->tables[0].coll == CS_NCCL_ALL_GATHER &&
                          !strcmp(b->tables[0].coll_from, "program") && b->tables[0].nrows == 1,
                      "tabs in the header: %s", b ? b->tables[0].coll_from : e.msg);
        cs_nccl_log_destroy(b);
    }
    /* a file cut inside its only row: the table has no row, no error here */
    char text[512];
    snprintf(text, sizeof(text), "%s     1048576        262144     float", hdr);
    cs_err_t err = {0};
    cs_nccl_log_t *log = parse(text, &err);
    CS_TEST_CHECK(log && log->ntables == 1 && log->tables[0].nrows == 0 &&
                      log->tables[0].cut_line == 2,
                  "cut inside the only row: %s", log ? "read" : err.msg);
    cs_nccl_log_destroy(log);
    return 0;
}

/* Rows where nothing moves are read whatever their time: one rank in
 * place (NCCL does nothing; nccl-tests prints its launch time and a bus
 * bandwidth of 0), and -C 1's cputime, the host's launch time. */
static void nothing_moves(void)
{
    cs_err_t err;
    cs_nccl_log_t *log = parse(
        "#  Rank  0 Group  0 Pid 1 on h device  0 [0000:1b:00] NVIDIA H100 80GB HBM3\n"
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
        "     time   algbw   busbw  #wrong\n"
        "  1073741824     134217728    double     sum      -1   800.10  1342.04    0.00       0"
        "     4.52  237553.5    0.00       0\n"
        "# Avg bus bandwidth    : 0\n"
        "#       size   count  type  redop  root  cputime  algbw  busbw  #wrong  cputime  algbw"
        "  busbw  #wrong\n"
        "  1073741824  268435456  float  sum  -1  6.10  176023.6  330044.3  0  5.90  181990.5"
        "  341232.2  0\n"
        "# Avg bus bandwidth    : 1\n",
        &err);
    CS_TEST_CHECK(log && log->ntables == 2 && log->tables[0].nrows == 1 &&
                      near(log->tables[0].rows[0].ip.time_us, 4.52) &&
                      log->tables[1].nrows == 1 && near(log->tables[1].rows[0].oop.time_us, 6.1),
                  "one rank in place, cputime: %s", err.msg);
    cs_nccl_log_destroy(log);
}

/* Sendrecv's columns are all-reduce's (an operation, no root) with busbw =
 * algbw: a log without its program line is read as sendrecv where that
 * rules all-reduce out (more than 2 ranks) and no in-place result was
 * checked, and on 2 ranks where its in-place results are unchecked (N/A)
 * and its out-of-place ones checked; 2 ranks that checked both are
 * all-reduce's, and so is a ratio of bandwidths rounded to 0.01. */
static void sendrecv_from_columns(void)
{
    static const char dev2[] =
        "#  Rank  0 Group  0 Pid 1 on a device  0 [0000:1b:00] NVIDIA H100 80GB HBM3\n"
        "#  Rank  1 Group  0 Pid 2 on b device  0 [0000:1b:00] NVIDIA H100 80GB HBM3\n";
    static const char dev3[] =
        "#  Rank  2 Group  0 Pid 3 on c device  0 [0000:1b:00] NVIDIA H100 80GB HBM3\n";
    static const char head[] =
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
        "     time   algbw   busbw  #wrong\n";
    struct {
        int three;
        const char *row;
        cs_nccl_coll_t want;
    } cases[] = {
        {1, "    33554432       4194304    double     sum      -1   838.43   40.02   40.02       0"
            "   787.24   42.62   42.62     N/A\n", CS_NCCL_SENDRECV},
        {1, "    33554432       4194304    double     sum      -1   838.43   40.02   40.02     N/A"
            "   787.24   42.62   42.62     N/A\n", CS_NCCL_SENDRECV},
        /* in place checked: not sendrecv's (all-reduce's columns, its ratio wrong) */
        {1, "    33554432       4194304    double     sum      -1   838.43   40.02   40.02       0"
            "   787.24   42.62   42.62       0\n", CS_NCCL_ALL_REDUCE},
        /* a latency sweep's last row: 0.01 GB/s both, a ratio rounding made */
        {1, "         128            32     float     sum      -1    16.00    0.01    0.01     N/A"
            "    16.00    0.01    0.01     N/A\n", CS_NCCL_ALL_REDUCE},
        {0, "    33554432       4194304    double     sum      -1   838.43   40.02   40.02       0"
            "   787.24   42.62   42.62     N/A\n", CS_NCCL_SENDRECV},
        {0, "    33554432       4194304    double     sum      -1   838.43   40.02   40.02       0"
            "   787.24   42.62   42.62       0\n", CS_NCCL_ALL_REDUCE},
        {0, "    33554432       4194304    double     sum      -1   838.43   40.02   40.02     N/A"
            "   787.24   42.62   42.62     N/A\n", CS_NCCL_ALL_REDUCE},
        {1, "    33554432       8388608     float     sum      -1   838.43   40.02   53.36       0"
            "   787.24   42.62   56.83       0\n", CS_NCCL_ALL_REDUCE},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[2048];
        snprintf(text, sizeof(text), "%s%s%s%s", dev2, cases[i].three ? dev3 : "", head,
                 cases[i].row);
        cs_err_t err;
        cs_nccl_log_t *log = parse(text, &err);
        CS_TEST_CHECK(log && log->ntables == 1 && log->tables[0].coll == cases[i].want,
                      "case %zu: %s, want %s (%s)", i,
                      log ? cs_nccl_coll_name(log->tables[0].coll) : err.msg,
                      cs_nccl_coll_name(cases[i].want), log ? log->tables[0].coll_from : "");
        cs_nccl_log_destroy(log);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1)
        logdir = argv[1];
    a3mega();
    dcslin();
    perfkit();
    srun_label();
    superbench();
    superbench_more();
    round_trip();
    variants();
    nothing_moves();
    sendrecv_from_columns();
    malformed();
    cut_short();
    return cs_test_finish();
}
