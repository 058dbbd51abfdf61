/*
 * cmd_run.c - `collstep run`: execute a schedule live, one process per rank.
 *
 * Start N copies under a launcher (mpirun, srun --mpi=pmix: PMIx bootstrap)
 * or with RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT set (env
 * bootstrap).  Every rank builds (or loads) the schedule, checks with the
 * others that schedule digest and arguments agree, opens the transport,
 * exchanges addresses, and runs the size sweep: warmup runs, then `iters`
 * timed runs per size.  Rank 0 prints the rows at the end through
 * core/cs_results.h, in the layouts of `collstep sim` (time is the slowest
 * rank's average per run; platform is "TRANSPORT/PROVIDER"); with --check
 * inputs come from cs_test_fill, the outputs of all ranks are checked and
 * the `wrong` column is the sum over ranks of mismatching elements.
 *
 * --trace DIR (exec/cs_live_trace.h): the last timed run of every size is
 * recorded with aligned per-step timestamps and written by rank 0 in the
 * trace schema of `collstep sim --trace` (DIR whole or not at all).
 *
 * --transport nccl (when built with CUDA and NCCL, CS_HAVE_NCCL) runs the
 * same schedule on GPU memory through the GPU engine of exec/cuda/cs_gpu.h,
 * one rank per GPU; inputs are filled on the host and copied in, --check
 * copies the outputs back, times come from CUDA events.  --baseline nccl
 * adds, for every size, a row for NCCL's own collective on the same
 * buffers (algorithm "nccl").
 *
 * Exit codes: 0 success, 1 wrong results, 2 usage errors, 3 run-time
 * failure (a rank died or timed out, ranks disagree, transport errors, no
 * CUDA device or driver for --transport nccl: "no CUDA device/driver:
 * cudaGetDeviceCount: ... (35)"): every rank then prints why on stderr,
 * naming the rank it blames.
 * Nothing is written to files except the --trace directory.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cs_algo.h"
#include "cs_boot.h"
#include "cs_dtype.h"
#include "cs_engine.h"
#include "cs_intr.h"
#include "cs_results.h"
#include "cs_text.h"
#include "cs_transport.h"
#ifdef CS_EXEC_HAVE_TRACES
#include "cs_live_trace.h"
#endif
#ifdef CS_HAVE_NCCL
#include "cs_gpu.h"
#endif

#define SIZES_MAX CS_CLI_MAX_SIZES

static const char usage_text[] =
    "usage: collstep run --coll COLL --algo ALGO[,ALGO...] --size SIZES [options]\n"
    "       collstep run --schedule FILE --size SIZES [options]\n"
    "       (start under mpirun -np N, srun --mpi=pmix, or with RANK, WORLD_SIZE,\n"
    "        MASTER_ADDR, MASTER_PORT set for every process)\n"
    "\n"
    "Run collective schedules live, one process per rank, and print the time per\n"
    "size like nccl-tests.  Schedules are verified first (a wrong or deadlocking one\n"
    "exits 1 before any transport is opened).\n"
    "\n"
    "  --coll COLL          allreduce, reduce-scatter, allgather, broadcast, reduce, alltoall\n"
    "  --algo A[,B...]      registered algorithms (collstep algos), run one after another\n"
    "  --schedule FILE      run a schedule file (collstep's format or an MSCCL XML)\n"
    "                       instead of --coll/--algo; FILE,FILE... or a folder: per size\n"
    "                       the file whose minBytes..maxBytes serves it (MSCCL's rule)\n"
    "  --param KEY=VALUE    generator parameter for every algorithm that has KEY;\n"
    "  --param ALGO:KEY=VAL for ALGO only; repeatable, comma separated\n"
    "  --size SIZES         message sizes in bytes: 1M, 64K:1G, 1K,4K,1M (see below)\n"
    "%s"
    "  --root R             root of broadcast / reduce (0)\n"
    "  --transport NAME     ofi (default: libfabric, see --provider), shm (native shared\n"
    "                       memory, all ranks on one host), tcp (native sockets, one\n"
    "                       connection per rank pair, see --iface), nccl (GPU memory,\n"
    "                       one rank per GPU)\n"
    "  --baseline nccl      with --transport nccl: also time NCCL's own collective\n"
    "  --provider NAME      libfabric provider of --transport ofi: tcp;ofi_rxm (default),\n"
    "                       shm, verbs;ofi_rxm, efa\n"
    "  --iface ADDR         address tcp binds to (127.0.0.1)\n"
    "  --iters N            timed runs per size (20)\n"
    "  --warmup N           untimed runs per size (5), after the connections are set up\n"
    "  --check              fill inputs with test data and count wrong outputs\n"
    "  --no-verify          do not verify the schedules first (schedules that verified\n"
    "                       once are remembered: CS_VERIFY_CACHE=0 turns that off)\n"
    "  --timeout S          give up when nothing progresses for S seconds (60)\n"
    "  --format F           table (default), csv, json\n"
    "  --compare[=REF]      per size, the algorithms ranked by time with their speed-up\n"
    "                       over REF (default: the first algorithm given)\n"
    "  -o, --output FILE    rank 0 writes the results to FILE (whole or not at all; an\n"
    "                       existing file is replaced only when collstep wrote it)\n"
    "  --force              replace an existing -o FILE that collstep did not write\n"
    "  --boot B             force the bootstrap: pmix or env (default: auto)\n"
    "  --max-msg BYTES      split messages above BYTES (testing the transport; shm: the\n"
    "                       eager limit and the pieces large messages move in)\n"
    "  --trace DIR          write per-step and per-link/per-tier traces of the last timed\n"
    "                       run of every size to DIR (as collstep sim --trace; whole or\n"
    "                       not at all; one algorithm); tiers: host (same host), network\n"
    "                       (other host)\n"
    "  --trace-host NAME    this rank's host in traces (default: hostname, told apart by\n"
    "                       network namespace)\n"
    "  --trace-bw TIER=B/s  link bandwidth of tier host or network for utilization, e.g.\n"
    "                       network=1.25G (decimal; default: the best rate one transfer of\n"
    "                       64 KiB or more reached on that tier in the traced run)\n"
    "  --trace-links N      per-link counter tracks in trace.json for the N busiest links\n"
    "  --trace-ranks N      step slices of N evenly spaced ranks (64, 0 = all)\n"
    "  --trace-buckets N    time buckets of the utilization series (1024)\n"
    "  --trace-no-plot      do not run gnuplot (no utilization.png)\n"
    "  --help               this text\n"
    "\n"
    "time: each rank times its --iters back-to-back runs of a size (after --warmup\n"
    "untimed runs and a barrier) and divides by --iters; the column is the largest of\n"
    "these per-rank means (the slowest rank's average per run).  algbw = size / time,\n"
    "busbw = algbw x the nccl-tests factor of the collective.  Rows name the transport.\n"
    "\n%s"
    "Ctrl-C (SIGINT) or SIGTERM stops every rank: the interrupted rank exits 130 / 143,\n"
    "the others 3 naming it.\n"
    "%s";

typedef struct run_opts {
    const char *coll, *algo, *schedule, *dtype, *op, *transport, *provider, *iface, *format, *boot;
    const char *baseline, *output, *compare;
    char size[512];
    cs_cli_params_t params;
    long root, iters, warmup, check, no_verify, force, compare_on, trace_links;
    double timeout;
    uint64_t max_msg;
    const char *trace, *trace_host;
    double trace_bw[2]; /* host, network; 0: measured */
    long trace_ranks, trace_buckets, trace_plot;
} run_opts_t;

/* "10G", "1.25e9", "800MB/s": bytes per second (powers of 10); < 0: bad. */
static double parse_rate(const char *s)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || !(v > 0))
        return -1;
    switch (*end) {
    case 'k': case 'K': v *= 1e3, end++; break;
    case 'M': v *= 1e6, end++; break;
    case 'G': v *= 1e9, end++; break;
    case 'T': v *= 1e12, end++; break;
    default: break;
    }
    if (*end == 'B')
        end++;
    if (!strcmp(end, "/s"))
        end += 2;
    return *end ? -1 : v;
}

/* A run-time failure: every rank says why (naming the rank it blames) and
 * exits 3, or 128 + signal when this rank was the one interrupted. */
static int fail(const cs_err_t *err, int rank)
{
    const char *m = err->msg[0] ? err->msg : "failed";
    if (strncmp(m, "rank ", 5) == 0)
        fprintf(stderr, "collstep run: %s\n", m);
    else
        fprintf(stderr, "collstep run: rank %d: %s\n", rank, m);
    if (err->code == CS_ERR_INTERRUPTED && cs_intr_pending())
        return cs_intr_exit_code();
    return CS_EXIT_RUNTIME;
}

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "collstep run: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see collstep run --help)\n");
    va_end(ap);
    return CS_EXIT_USAGE;
}

static int parse_long(const char *name, const char *s, long min, long max, long *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < min || v > max)
        return usage_error("%s: expected an integer in [%ld, %ld], found '%s'", name, min, max, s);
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, run_opts_t *o)
{
    static const struct option lo[] = {
        {"coll", 1, 0, 'c'},     {"algo", 1, 0, 'a'},    {"schedule", 1, 0, 'f'},
        {"param", 1, 0, 'p'},    {"size", 1, 0, 's'},    {"dtype", 1, 0, 'd'},
        {"op", 1, 0, 'X'},       {"root", 1, 0, 'r'},    {"transport", 1, 0, 't'},
        {"provider", 1, 0, 'P'}, {"iface", 1, 0, 'I'},   {"iters", 1, 0, 'n'},
        {"warmup", 1, 0, 'w'},   {"check", 0, 0, 'k'},   {"timeout", 1, 0, 'T'},
        {"format", 1, 0, 'F'},   {"boot", 1, 0, 'B'},    {"max-msg", 1, 0, 'M'},
        {"help", 0, 0, 'h'},     {"baseline", 1, 0, 'b'}, {"trace", 1, 0, 'x'},
        {"trace-host", 1, 0, 'H'}, {"trace-bw", 1, 0, 'W'}, {"trace-ranks", 1, 0, 'R'},
        {"trace-buckets", 1, 0, 'U'}, {"trace-no-plot", 0, 0, 'N'}, {"output", 1, 0, 'o'},
        {"force", 0, 0, 'z'},    {"compare", 2, 0, 'C'}, {"no-verify", 0, 0, 'V'},
        {"trace-links", 1, 0, 'L'}, {0, 0, 0, 0}};
    memset(o, 0, sizeof(*o));
    cs_cli_params_init(&o->params);
    o->dtype = "float", o->op = "sum", o->transport = "ofi", o->provider = "tcp;ofi_rxm";
    o->iface = "127.0.0.1", o->format = "table", o->iters = 20, o->warmup = 5, o->timeout = 60;
    o->trace_ranks = 64, o->trace_buckets = 1024, o->trace_plot = 1;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":ho:", lo, NULL)) != -1) {
        int rc = 0;
        switch (c) {
        case 'c': o->coll = optarg; break;
        case 'a': o->algo = optarg; break;
        case 'f': o->schedule = optarg; break;
        case 'p':
            if (cs_cli_params_add(&o->params, "run", optarg) != CS_EXIT_OK)
                return CS_EXIT_USAGE;
            break;
        case 'o': o->output = optarg; break;
        case 'z': o->force = 1; break;
        case 'C': o->compare_on = 1, o->compare = optarg; break;
        case 'V': o->no_verify = 1; break;
        case 'L': rc = parse_long("--trace-links", optarg, 0, 1 << 24, &o->trace_links); break;
        case 's': snprintf(o->size, sizeof(o->size), "%s", optarg); break;
        case 'd': o->dtype = optarg; break;
        case 'X': o->op = optarg; break;
        case 'r': rc = parse_long("--root", optarg, 0, 1 << 20, &o->root); break;
        case 't': o->transport = optarg; break;
        case 'P': o->provider = optarg; break;
        case 'I': o->iface = optarg; break;
        case 'n': rc = parse_long("--iters", optarg, 1, 1000000, &o->iters); break;
        case 'w': rc = parse_long("--warmup", optarg, 0, 1000000, &o->warmup); break;
        case 'k': o->check = 1; break;
        case 'T': {
            char *end = NULL;
            o->timeout = strtod(optarg, &end);
            if (*end || o->timeout <= 0)
                return usage_error("--timeout: expected seconds > 0, found '%s'", optarg);
            break;
        }
        case 'F': o->format = optarg; break;
        case 'B': o->boot = optarg; break;
        case 'b': o->baseline = optarg; break;
        case 'x': o->trace = optarg; break;
        case 'H': o->trace_host = optarg; break;
        case 'N': o->trace_plot = 0; break;
        case 'R': rc = parse_long("--trace-ranks", optarg, 0, 1 << 24, &o->trace_ranks); break;
        case 'U': rc = parse_long("--trace-buckets", optarg, 16, 1 << 24, &o->trace_buckets); break;
        case 'W': {
            int net = !strncmp(optarg, "network=", 8);
            double v = net || !strncmp(optarg, "host=", 5) ? parse_rate(strchr(optarg, '=') + 1) : -1;
            if (v <= 0)
                return usage_error("--trace-bw: expected host=RATE or network=RATE (e.g. "
                                   "network=1.25G), found '%s'", optarg);
            o->trace_bw[net] = v;
            break;
        }
        case 'M':
            if (cs_cli_parse_size(optarg, &o->max_msg) || o->max_msg == 0)
                return usage_error("--max-msg: expected a size, found '%s'", optarg);
            break;
        case 'h': printf(usage_text, cs_cli_dtype_help, cs_cli_size_help, cs_cli_exit_help); return -1;
        case ':': return usage_error("option %s needs a value", argv[optind - 1]);
        default: return usage_error("unknown option '%s'", argv[optind - 1]);
        }
        if (rc)
            return rc;
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (!o->schedule && (!o->coll || !o->algo))
        return usage_error("--coll and --algo (or --schedule) are required");
    if (o->schedule && o->algo)
        return usage_error("give one of --algo and --schedule");
    if (!o->size[0])
        return usage_error("--size is required");
    if (!strcmp(o->transport, "shm")) { /* no libfabric: rows say "shm/native" */
        if (strcmp(o->provider, "tcp;ofi_rxm"))
            return usage_error("--provider: only with --transport ofi");
        o->provider = "native";
    }
    if (o->baseline && (strcmp(o->baseline, "nccl") || strcmp(o->transport, "nccl")))
        return usage_error("--baseline: only 'nccl', with --transport nccl");
    if (cs_results_fmt_parse(o->format) == CS_FMT_COUNT)
        return usage_error("--format: expected table, csv or json, found '%s'", o->format);
#ifdef CS_EXEC_HAVE_TRACES
    if (o->trace && !strcmp(o->transport, "nccl"))
        return usage_error("--trace: not with --transport nccl");
#else
    if (o->trace)
        return usage_error("--trace: collstep was built without traces/");
#endif
    return 0;
}

typedef struct run_ctx {
    run_opts_t *o;
    cs_boot_t *boot;
    cs_sched_t *scheds[CS_CLI_MAX_ALGOS]; /* one per algorithm, or the file */
    char params[CS_CLI_MAX_ALGOS][96];   /* the parameters each one's rows carry */
    int nsched;
    int per_size;                        /* scheds from a set: each runs its own sizes */
    const cs_sched_t *size_sched[SIZES_MAX];
    struct cs_schedset *set;
    cs_sched_t *sched; /* the one running now */
    const char *sched_params;
    cs_tp_t *tp;
    cs_engine_t *eng;
    cs_dtype_t dt;
    cs_op_t op;
    int rank, nranks, nrows;
    const char *row_algo; /* algorithm column of the next rows (NULL: the schedule's) */
    char transport[64];   /* the rows' transport column */
    cs_result_t rows[2 * CS_CLI_MAX_ALGOS * SIZES_MAX]; /* rank 0: what it prints at the end */
#ifdef CS_EXEC_HAVE_TRACES
    cs_live_trace_t *lt;
#endif
} run_ctx_t;

/* --schedule FILE,FILE or a folder: per size the file serving it; each
 * distinct schedule once in scheds[], running the sizes it serves. */
static int load_schedule_set(run_ctx_t *c, const uint64_t *sizes, int nsizes, cs_err_t *err)
{
    cs_sched_t *per[SIZES_MAX];
    const char *paths[SIZES_MAX];
    cs_coll_t coll;
    int nranks;
    int st = cs_cli_schedule_set(c->rank == 0 ? "run" : NULL, c->o->schedule, sizes, nsizes,
                                 cs_dtype_size(c->dt), &c->set, per, paths, &coll, &nranks, err);
    if (st != CS_OK)
        return st;
    c->per_size = 1;
    for (int k = 0; k < nsizes; k++) {
        int j;
        for (j = 0; j < c->nsched && c->scheds[j] != per[k]; j++)
            ;
        if (j == c->nsched) {
            c->scheds[c->nsched++] = per[k];
            snprintf(c->params[j], sizeof(c->params[j]), "file=%.80s", paths[k]);
        }
        c->size_sched[k] = per[k];
    }
    if (nranks != c->nranks)
        return cs_err_set(err, CS_ERR_MISMATCH, "%s: schedules for %d ranks, started %d",
                          c->o->schedule, nranks, c->nranks);
    return CS_OK;
}

/* Every rank builds (or loads) every schedule; errors are usage errors. */
static int build_schedules(run_ctx_t *c, const uint64_t *sizes, int nsizes, cs_err_t *err)
{
    run_opts_t *o = c->o;
    if (o->schedule && cs_cli_is_schedule_set(o->schedule))
        return load_schedule_set(c, sizes, nsizes, err);
    if (o->schedule) {
        c->scheds[0] = cs_cli_load_sched(o->schedule, err);
        if (!c->scheds[0])
            return err->code ? err->code : CS_ERR_IO;
        c->nsched = 1;
        snprintf(c->params[0], sizeof(c->params[0]), "%.*s", (int)sizeof(c->params[0]) - 1,
                 c->scheds[0]->params);
        if (c->scheds[0]->desc.nranks != c->nranks)
            return cs_err_set(err, CS_ERR_MISMATCH, "%s is a schedule for %d ranks, started %d",
                              o->schedule, c->scheds[0]->desc.nranks, c->nranks);
        return CS_OK;
    }
    cs_coll_t coll = cs_coll_parse(o->coll);
    if (coll == CS_COLL_COUNT)
        return cs_err_set(err, CS_ERR_INVAL, "--coll: unknown collective '%s' (allreduce, "
                          "reduce-scatter, allgather, broadcast, reduce, alltoall)", o->coll);
    char buf[512];
    const char *names[CS_CLI_MAX_ALGOS];
    const cs_algo_t *algos[CS_CLI_MAX_ALGOS];
    int n = 0;
    if (cs_cli_algo_list("run", o->algo, buf, sizeof(buf), names, &n) != CS_EXIT_OK)
        return cs_err_set(err, CS_ERR_INVAL, "--algo %s: see above", o->algo);
    for (int i = 0; i < n; i++)
        if (!(algos[i] = cs_algo_find(coll, names[i])))
            return cs_err_set(err, CS_ERR_NOTFOUND, "no algorithm '%s' for %s (see collstep "
                              "algos)", names[i], cs_coll_name(coll));
    if (cs_cli_params_check(&o->params, "run", algos, n) != CS_EXIT_OK)
        return cs_err_set(err, CS_ERR_INVAL, "--param: see above");
    if (o->root >= c->nranks)
        return cs_err_set(err, CS_ERR_RANGE, "--root %ld: only %d ranks", o->root, c->nranks);
    if (o->trace && n > 1)
        return cs_err_set(err, CS_ERR_INVAL, "--trace: one algorithm at a time (%d given)", n);
    cs_coll_desc_t d = {coll, c->nranks, cs_coll_has_root(coll) ? (int32_t)o->root : 0, 0};
    for (int i = 0; i < n; i++) {
        if (cs_cli_build("run", names[i], &d, &o->params, NULL, &c->scheds[i], c->params[i],
                         sizeof(c->params[0])) != CS_EXIT_OK)
            return cs_err_set(err, CS_ERR_INVAL, "%s: see above", names[i]);
        c->nsched = i + 1;
    }
    return CS_OK;
}

static int open_transport(run_ctx_t *c, cs_err_t *err)
{
    cs_tp_config_t cfg = {c->rank, c->nranks, c->o->provider, c->o->iface, c->o->max_msg,
                          c->o->timeout};
    int st = cs_tp_open(c->o->transport, &cfg, &c->tp, err);
    return cs_boot_connect(c->boot, st == CS_OK ? c->tp : NULL, st, err);
}

/* Rank 0: the rows measured so far, to stdout or -o, in the layouts of
 * `collstep sim`.  Returns an exit code (0 when there is nothing to do). */
static int print_rows(run_ctx_t *c)
{
    if (c->rank != 0 || c->nrows == 0)
        return CS_EXIT_OK;
    run_opts_t *o = c->o;
    cs_err_t err;
    cs_err_clear(&err);
    cs_results_fmt_t fmt = cs_results_fmt_parse(o->format);
    unsigned flags = 0;
    if (o->compare_on) {
        const char *ref = o->compare && *o->compare ? o->compare : NULL;
        if (cs_results_compare(c->rows, c->nrows, ref, &err) == CS_OK)
            flags |= CS_RESULTS_COMPARE;
        else
            fprintf(stderr, "collstep run: --compare: %s\n", err.msg);
    }
    int st = o->output ? cs_results_save(o->output, fmt, flags | (o->force ? CS_RESULTS_FORCE : 0),
                                         c->rows, c->nrows, &err)
                       : cs_results_print(stdout, fmt, flags, c->rows, c->nrows);
    fflush(stdout);
    if (st == CS_OK)
        return CS_EXIT_OK;
    fprintf(stderr, "collstep run: %s\n", err.msg[0] ? err.msg : "cannot write the results");
    return st == CS_ERR_EXISTS ? CS_EXIT_USAGE : CS_EXIT_RUNTIME;
}

static int report(run_ctx_t *c, uint64_t bytes, uint64_t count, double t, uint64_t w,
                  long long *wrong_total, cs_err_t *err);

/* One size: fill, warm up, time, check, report.  *wrong_total grows. */
static int run_size(run_ctx_t *c, uint64_t bytes, long long *wrong_total, cs_err_t *err)
{
    const cs_sched_t *s = c->sched;
    const cs_rank_sched_t *rs = &s->ranks[c->rank];
    size_t es = cs_dtype_size(c->dt);
    uint64_t count = cs_coll_block_count(s->desc.coll, c->nranks, bytes, es);
    uint64_t n_in = cs_engine_buf_elems(c->eng, CS_BUF_IN, count);
    uint64_t n_out = cs_engine_buf_elems(c->eng, CS_BUF_OUT, count);
    void *in = cs_engine_buf(c->eng, CS_BUF_IN), *out = cs_engine_buf(c->eng, CS_BUF_OUT);
    cs_test_fill(c->dt, c->op, in, n_in, c->rank, cs_chunk_start(s, count, rs->bufs[0].base));
    if (c->o->check)
        memset(out, 0xff, n_out * es);
    int st = CS_OK;
    for (long i = 0; i < c->o->warmup && st == CS_OK; i++)
        st = cs_engine_run(c->eng, count, err);
    if (st == CS_OK)
        st = cs_boot_barrier(c->boot, err);
    uint64_t t0 = cs_engine_now_ns();
    for (long i = 0; i < c->o->iters && st == CS_OK; i++) {
#ifdef CS_EXEC_HAVE_TRACES
        if (c->lt && i == c->o->iters - 1)
            cs_engine_record_times(c->eng, 1); /* the traced run: the last one */
#endif
        st = cs_engine_run(c->eng, count, err);
    }
    double t = (double)(cs_engine_now_ns() - t0) * 1e-9 / (double)c->o->iters;
    cs_engine_record_times(c->eng, 0);
    if (st != CS_OK)
        return st;
    uint64_t w = 0;
    if (c->o->check)
        w = cs_test_check(&s->desc, c->dt, c->op, count, c->rank, out,
                          cs_chunk_start(s, count, rs->bufs[1].base), n_out);
#ifdef CS_EXEC_HAVE_TRACES
    if (c->lt && (st = cs_live_trace_record(c->lt, c->eng, bytes, count, err)) != CS_OK)
        return st;
#endif
    return report(c, bytes, count, t, w, wrong_total, err);
}

/* Gather time and wrong count of every rank; rank 0 prints the row. */
static int report(run_ctx_t *c, uint64_t bytes, uint64_t count, double t, uint64_t w,
                  long long *wrong_total, cs_err_t *err)
{
    struct {
        double t;
        uint64_t wrong;
    } mine = {t, w}, *all = calloc((size_t)c->nranks, sizeof(mine));
    if (!all)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    int st = cs_boot_allgather(c->boot, &mine, sizeof(mine), all, err);
    if (st == CS_OK && c->rank == 0) {
        double tmax = 0;
        long long wrong = 0;
        for (int r = 0; r < c->nranks; r++) {
            tmax = all[r].t > tmax ? all[r].t : tmax;
            wrong += (long long)all[r].wrong;
        }
        *wrong_total += wrong;
        int cap = (int)(sizeof(c->rows) / sizeof(c->rows[0]));
        cs_result_t *row = &c->rows[c->nrows < cap ? c->nrows++ : c->nrows - 1];
        cs_result_fill(row, c->row_algo ? c->row_algo : c->sched->algo[0] ? c->sched->algo
                       : c->o->schedule, c->sched->desc.coll, c->nranks, bytes, c->dt, c->op,
                       tmax * 1e6, "");
        cs_result_set_provenance(row, c->row_algo ? "" : c->sched_params, "", c->transport);
        row->count = count;
        row->wrong = c->o->check ? wrong : -1;
    } else if (st == CS_OK) {
        for (int r = 0; r < c->nranks; r++)
            *wrong_total += (long long)all[r].wrong;
    }
    free(all);
    return st;
}

#ifdef CS_HAVE_NCCL
/* One size on the GPU: the schedule, then (--baseline) NCCL's collective. */
static int run_size_gpu(run_ctx_t *c, cs_gpu_engine_t *g, uint64_t bytes, long long *wrong_total,
                        cs_err_t *err)
{
    const cs_rank_sched_t *rs = &c->sched->ranks[c->rank];
    size_t es = cs_dtype_size(c->dt);
    uint64_t count = cs_coll_block_count(c->sched->desc.coll, c->nranks, bytes, es);
    uint64_t n_in = cs_gpu_engine_buf_elems(g, CS_BUF_IN, count);
    uint64_t n_out = cs_gpu_engine_buf_elems(g, CS_BUF_OUT, count);
    char *host = malloc(((n_in > n_out ? n_in : n_out) + 1) * es);
    if (!host)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    cs_test_fill(c->dt, c->op, host, n_in, c->rank, cs_chunk_start(c->sched, count, rs->bufs[0].base));
    int st = cs_gpu_engine_upload(g, CS_BUF_IN, host, n_in * es, err);
    for (int base = 0; base <= (c->o->baseline != NULL) && st == CS_OK; base++) {
        double t = 0;
        uint64_t w = 0;
        if (c->o->check)
            st = cs_gpu_engine_memset(g, CS_BUF_OUT, 0xff, n_out * es, err);
        if (st == CS_OK && c->o->warmup > 0)
            st = cs_gpu_engine_time(g, count, c->o->warmup, base, &t, err);
        if (st == CS_OK)
            st = cs_boot_barrier(c->boot, err);
        if (st == CS_OK)
            st = cs_gpu_engine_time(g, count, c->o->iters, base, &t, err);
        if (st == CS_OK && c->o->check) {
            st = cs_gpu_engine_download(g, CS_BUF_OUT, host, n_out * es, err);
            w = cs_test_check(&c->sched->desc, c->dt, c->op, count, c->rank, host,
                              cs_chunk_start(c->sched, count, rs->bufs[1].base), n_out);
        }
        c->row_algo = base ? "nccl" : NULL;
        if (st == CS_OK)
            st = report(c, bytes, count, t, w, wrong_total, err);
        c->row_algo = NULL;
    }
    free(host);
    return st;
}

/* --transport nccl: communicator, then per schedule a GPU engine and the
 * sweep.  *wrong grows; returns a status (err filled). */
static int run_all_gpu(run_ctx_t *c, const uint64_t *sizes, int nsizes, long long *wrong,
                       cs_err_t *err)
{
    cs_err_t e2;
    cs_err_clear(&e2);
    cs_nccl_t *nc = NULL;
    int st = cs_nccl_open(c->boot, &nc, err);
    uint64_t hi = 0;
    for (int i = 0; i < nsizes; i++)
        hi = sizes[i] > hi ? sizes[i] : hi;
    for (int a = 0; a < c->nsched && st == CS_OK; a++) {
        cs_gpu_engine_t *g = NULL;
        c->sched = c->scheds[a];
        c->sched_params = c->params[a];
        cs_engine_config_t ec = {.dtype = c->dt, .op = c->op, .timeout_s = c->o->timeout,
                                 .max_count = cs_coll_block_count(c->sched->desc.coll, c->nranks,
                                                                  hi, cs_dtype_size(c->dt))};
        st = cs_gpu_engine_create(c->sched, nc, &ec, &g, err);
        int ast = cs_boot_agree(c->boot, st, "setting up the GPU engine", &e2);
        if (st == CS_OK && ast != CS_OK)
            *err = e2, st = ast;
        for (int i = 0; i < nsizes && st == CS_OK; i++)
            if (!c->per_size || c->size_sched[i] == c->sched)
                st = run_size_gpu(c, g, sizes[i], wrong, err);
        cs_gpu_engine_destroy(g);
    }
    cs_nccl_close(nc);
    return st;
}
#endif

/* Per schedule: engine, (trace), the sweep.  *wrong grows. */
static int run_all_host(run_ctx_t *c, const uint64_t *sizes, int nsizes, long long *wrong,
                        cs_err_t *err)
{
    run_opts_t *o = c->o;
    cs_err_t e2;
    cs_err_clear(&e2);
    int st = open_transport(c, err);
    if (st != CS_OK)
        return st;
    uint64_t hi = 0;
    for (int i = 0; i < nsizes; i++)
        hi = sizes[i] > hi ? sizes[i] : hi;
    for (int a = 0; a < c->nsched && st == CS_OK; a++) {
        c->sched = c->scheds[a];
        c->sched_params = c->params[a];
        cs_engine_config_t ec = {.dtype = c->dt, .op = c->op, .timeout_s = o->timeout,
                                 .max_count = cs_coll_block_count(c->sched->desc.coll, c->nranks,
                                                                  hi, cs_dtype_size(c->dt)),
                                 .oversubscribed = c->nranks > sysconf(_SC_NPROCESSORS_ONLN)};
        st = cs_engine_create(c->sched, c->rank, c->tp, &ec, &c->eng, err);
        int ast = cs_boot_agree(c->boot, st, "setting up the engine", st == CS_OK ? err : &e2);
        if (st == CS_OK && ast != CS_OK)
            st = ast;
        if (st != CS_OK)
            return st;
#ifdef CS_EXEC_HAVE_TRACES
        if (o->trace) {
            cs_live_trace_config_t tc = {o->trace, {0}, o->trace_host, o->trace_bw[0],
                                         o->trace_bw[1], c->transport, nsizes, o->timeout};
            cs_trace_opts_init(&tc.opts);
            tc.opts.ranks = (int)o->trace_ranks;
            tc.opts.buckets = (int)o->trace_buckets;
            tc.opts.plot = (int)o->trace_plot;
            tc.opts.link_tracks = (int)o->trace_links;
            tc.opts.force = (int)o->force;
            if ((st = cs_live_trace_open(&tc, c->boot, c->tp, c->sched, c->dt, &c->lt, err)))
                return st;
        }
#endif
        for (int i = 0; i < nsizes && st == CS_OK; i++)
            if (!c->per_size || c->size_sched[i] == c->sched)
                st = run_size(c, sizes[i], wrong, err);
#ifdef CS_EXEC_HAVE_TRACES
        if (st == CS_OK && c->lt)
            st = cs_live_trace_commit(c->lt, err);
#endif
        cs_engine_destroy(c->eng);
        c->eng = NULL;
    }
    return st;
}

/* The arguments every rank must agree on, as text (compared by the
 * bootstrap); long ones are compared truncated. */
static void args_text(const run_opts_t *o, char *args, size_t len)
{
    char pbuf[256] = "";
    cs_params_format(&o->params.global, pbuf, sizeof(pbuf));
    size_t pl = strlen(pbuf);
    for (int i = 0; i < o->params.nper && pl + 2 < sizeof(pbuf); i++) {
        char one[160];
        cs_params_format(&o->params.per[i].p, one, sizeof(one));
        pl += (size_t)snprintf(pbuf + pl, sizeof(pbuf) - pl, " %s:%s", o->params.per[i].algo, one);
    }
    int n = snprintf(args, len,
                     "coll=%s algo=%s schedule=%s params='%s' size=%s dtype=%s op=%s root=%ld "
                     "iters=%ld warmup=%ld check=%ld transport=%s provider=%s max_msg=%llu "
                     "trace=%d",
                     o->coll ? o->coll : "", o->algo ? o->algo : "",
                     o->schedule ? o->schedule : "", pbuf, o->size, o->dtype, o->op, o->root,
                     o->iters, o->warmup, o->check, o->transport, o->provider,
                     (unsigned long long)o->max_msg, o->trace != NULL);
    if (n < 0 || (size_t)n >= len)
        args[len - 1] = 0;
}

static int run_all(run_ctx_t *c, const uint64_t *sizes, int nsizes)
{
    cs_err_t err, e2;
    cs_err_clear(&err);
    cs_err_clear(&e2);
    run_opts_t *o = c->o;

    /* bootstrap: who we are */
    cs_boot_config_t bc = {o->timeout, o->boot};
    int st = cs_boot_open(&bc, &c->boot, &err);
    if (st != CS_OK) {
        fprintf(stderr, "collstep run: %s\n", err.msg);
        if (st == CS_ERR_INTERRUPTED && cs_intr_pending())
            return cs_intr_exit_code();
        return st == CS_ERR_NOTFOUND ? CS_EXIT_USAGE : CS_EXIT_RUNTIME;
    }
    c->rank = cs_boot_rank(c->boot);
    c->nranks = cs_boot_size(c->boot);

    /* build: every rank, then all must have built the same */
    int bst = build_schedules(c, sizes, nsizes, &err);
    uint64_t digest = 0;
    for (int i = 0; bst == CS_OK && i < c->nsched; i++)
        digest = digest * 1099511628211ull ^ cs_sched_digest(c->scheds[i]);
    char args[600];
    args_text(o, args, sizeof(args));
    st = cs_boot_check_same(c->boot, bst == CS_OK ? digest : 0, args, &e2);
    if (bst != CS_OK) {
        if (!strstr(err.msg, "see above"))
            fprintf(stderr, "collstep run: %s\n", err.msg);
        return CS_EXIT_USAGE;
    }
    if (st != CS_OK)
        return fail(&e2, c->rank);

    /* verify: every rank holds the same schedules, so every rank gets the
     * same answer, before any transport is opened; rank 0 explains it */
    for (int i = 0; i < c->nsched && !o->no_verify; i++) {
        const cs_sched_t *s = c->scheds[i];
        int rc = cs_cli_verify(c->rank == 0 ? "run" : NULL, s, s->algo[0] ? s->algo : o->schedule);
        if (rc != CS_EXIT_OK)
            return rc;
    }

    /* outputs: rank 0 writes them; every rank learns whether it can */
    int ost = CS_OK;
    if (c->rank == 0 && cs_cli_check_outputs("run", o->output, o->trace, (int)o->force) != CS_EXIT_OK)
        ost = CS_ERR_EXISTS;
    if (cs_boot_agree(c->boot, ost, "checking the output paths", &e2) != CS_OK)
        return c->rank == 0 ? CS_EXIT_USAGE : fail(&e2, c->rank);

    /* act */
    if (!strcmp(o->transport, "ofi"))
        snprintf(c->transport, sizeof(c->transport), "%s/%s", o->transport, o->provider);
    else
        snprintf(c->transport, sizeof(c->transport), "%s", o->transport);
    long long wrong = 0;
    if (!strcmp(o->transport, "nccl")) {
#ifdef CS_HAVE_NCCL
        st = run_all_gpu(c, sizes, nsizes, &wrong, &err);
#else
        st = cs_err_set(&err, CS_ERR_UNSUPPORTED, "--transport nccl: collstep was built without "
                        "CUDA and NCCL (CS_WITH_CUDA)");
#endif
    } else {
        st = run_all_host(c, sizes, nsizes, &wrong, &err);
    }

    /* report: what was measured, even when a later size failed */
    int prc = print_rows(c);
    if (st != CS_OK)
        return fail(&err, c->rank);
    if (c->rank == 0 && o->check && wrong)
        fprintf(stderr, "collstep run: %lld wrong elements\n", wrong);
    return prc != CS_EXIT_OK ? prc : wrong ? CS_EXIT_FAIL : CS_EXIT_OK;
}

int cs_cli_run(int argc, char **argv)
{
    run_opts_t o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc < 0 ? CS_EXIT_OK : rc;
    run_ctx_t *c = calloc(1, sizeof(*c));
    if (!c) {
        fprintf(stderr, "collstep run: out of memory\n");
        return CS_EXIT_RUNTIME;
    }
    c->o = &o;
    c->dt = cs_dtype_parse(o.dtype);
    c->op = cs_op_parse(o.op);
    uint64_t sizes[SIZES_MAX];
    int nsizes = 0;
    if (c->dt == CS_DT_COUNT)
        rc = usage_error("--dtype: unknown type '%s' (float, double, half, bfloat16, int32, "
                         "int64)", o.dtype);
    else if (c->op == CS_OP_COUNT)
        rc = usage_error("--op: unknown operator '%s' (sum, prod, min, max)", o.op);
    else
        rc = cs_cli_sizes("run", o.size, cs_dtype_size(c->dt), sizes, &nsizes);
    if (rc == CS_EXIT_OK) {
        cs_intr_install();
        rc = run_all(c, sizes, nsizes);
    }
#ifdef CS_EXEC_HAVE_TRACES
    cs_live_trace_close(c->lt);
#endif
    cs_engine_destroy(c->eng);
    cs_tp_close(c->tp);
    for (int i = 0; i < c->nsched && !c->per_size; i++)
        cs_cli_free_sched(c->scheds[i]);
    cs_cli_schedule_set_free(c->set);
    cs_boot_close(c->boot);
    free(c);
    return rc;
}
