/*
 * cmd_run.c - `collstep run`: execute a schedule live, one process per rank.
 *
 * Start N copies under a launcher (mpirun, srun --mpi=pmix: PMIx bootstrap)
 * or with RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT set (env
 * bootstrap).  Every rank builds (or loads) the schedules (cs_cli_scheds_*:
 * --algo, --schedule, or --algo auto --tuning FILE picking per size),
 * checks with the others that schedule digest and arguments agree,
 * verifies, opens the transport, exchanges addresses, and runs the size
 * sweep: warmup runs, then `iters` timed runs per size.  Rank 0 prints the rows at the end through
 * core/cs_results.h, in the layouts of `collstep sim` (time is the slowest
 * rank's average per run; platform is "TRANSPORT/PROVIDER"); with --check
 * inputs come from cs_test_fill, the outputs of all ranks are checked and
 * the `wrong` column is the sum over ranks of mismatching elements.
 *
 * --wait auto|spin|yield (cli_live.h, as calibrate and validate): whether
 * idle ranks yield their core; auto counts the ranks on this machine (by
 * kernel boot id, over the bootstrap) against its online cores.
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
 * Rank 0 writes -o FILE and the --trace directory; nothing else is written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_live.h"
#ifdef CS_HAVE_SIM
#include "cli_nccl.h"
#endif
#include "cs_algo.h"
#include "cs_boot.h"
#include "cs_dtype.h"
#include "cs_engine.h"
#include "cs_hash.h"
#include "cs_intr.h"
#include "cs_job.h"
#include "cs_plan.h"
#include "cs_results.h"
#include "cs_text.h"
#include "cs_timed.h"
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
    "       collstep run --coll COLL --algo auto --tuning FILE --size SIZES [options]\n"
    "       (start under mpirun -np N, srun --mpi=pmix, or with RANK, WORLD_SIZE,\n"
    "        MASTER_ADDR, MASTER_PORT set for every process)\n"
    "\n"
    "Run collective schedules live, one process per rank, and print the time per\n"
    "size like nccl-tests.  Schedules are verified first (a wrong or deadlocking one\n"
    "exits 1 before any transport is opened).\n"
    "\n"
    "  --coll COLL          allreduce, reduce-scatter, allgather, broadcast, reduce, alltoall\n"
    "  --algo A[,B...]      registered algorithms (collstep algos), run one after another\n"
    "  --algo auto          per size the algorithm and parameters of the tuning table\n"
    "  --tuning FILE        FILE (written by 'collstep plan -o FILE' for as many ranks\n"
    "                       as started); rows name the algorithm and their params\n"
    "                       column what the table chose.  A table's rank maps are not\n"
    "                       applied: ranks run where the launcher started them\n"
    "  --schedule FILE      run a schedule file (collstep's format or an MSCCL XML)\n"
    "                       instead of --coll/--algo; FILE,FILE... or a folder: per size\n"
    "                       the file whose minBytes..maxBytes serves it (MSCCL's rule)\n"
    "  --param KEY=VALUE    generator parameter for every algorithm that has KEY;\n"
    "  --param ALGO:KEY=VAL for ALGO only; repeatable, comma separated\n"
    "  --size SIZES         message sizes in bytes: 1M, 64K:1G, 1K,4K,1M (see below)\n"
    "%s"
    "  --root R             root of broadcast / reduce (0)\n"
    "  --transport NAME     ofi (default: libfabric, see --provider), shm (native shared\n"
    "                       memory, all ranks on one host), tcp (native sockets, two\n"
    "                       connections per rank pair: messages and control, see\n"
    "                       --iface), nccl (GPU memory, one rank per GPU)\n"
    "  --baseline nccl      with --transport nccl: also time NCCL's own collective\n"
    "  --provider NAME      libfabric provider of --transport ofi: tcp;ofi_rxm (default),\n"
    "                       shm, verbs;ofi_rxm, efa\n"
    "  --iface ADDR|IFACE   address tcp binds to, or a network interface whose address it\n"
    "                       binds to (ib0: on every host its own; 127.0.0.1)\n"
    "%s"
    "  --iters N            timed runs per size (20)\n"
    "  --warmup N           untimed runs per size (5), after the connections are set up\n"
    "  --check              fill inputs with test data and count wrong outputs\n"
    "  --no-verify          do not verify the schedules first (schedules that verified\n"
    "                       once are remembered: CS_VERIFY_CACHE=0 turns that off)\n"
    "  --timeout S          give up when nothing progresses for S seconds (60)\n"
    "  --format F           table (default), csv, json, or nccl-tests: one table per\n"
    "                       algorithm in nccl-tests' layout, its device block naming\n"
    "                       each rank's node (collstep validate --nccl-tests and\n"
    "                       calibrate --from-nccl-tests read it back)\n"
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

static void help(FILE *f)
{
    fprintf(f, usage_text, cs_cli_dtype_help, cs_live_wait_help, cs_cli_size_help,
            cs_cli_exit_help);
}

typedef struct run_opts {
    const char *coll_name, *algo, *schedule, *tuning, *dtype, *op, *transport, *provider, *iface;
    const char *boot, *baseline, *trace, *trace_host, *wait;
    char size[512];
    cs_coll_t coll;
    cs_dtype_t dt;
    cs_op_t rop;
    cs_cli_report_t rep;
    cs_cli_params_t params;
    long root, iters, warmup, check, no_verify, trace_links;
    double timeout;
    uint64_t max_msg;
    double trace_bw[2]; /* host, network; 0: measured */
    long trace_ranks, trace_buckets, trace_plot;
} run_opts_t;

/* A run-time failure: every rank says why (naming the rank it blames) and
 * exits 3, or 128 + signal when this rank was the one interrupted. */
static int fail(const cs_err_t *err, int rank)
{
    const char *m = err->msg[0] ? err->msg : "failed";
    if (strncmp(m, "rank ", 5) == 0)
        fprintf(stderr, "collstep run: %s\n", m);
    else
        fprintf(stderr, "collstep run: rank %d: %s\n", rank, m);
    return cs_cli_exit_code(err->code);
}

static int parse_opt(void *ctx, int c, const char *arg)
{
    run_opts_t *o = ctx;
    switch (c) {
    case 'c': o->coll_name = arg; return cs_cli_parse_coll("run", arg, &o->coll);
    case 'a': o->algo = arg; return CS_EXIT_OK;
    case 'f': o->schedule = arg; return CS_EXIT_OK;
    case 'u': o->tuning = arg; return CS_EXIT_OK;
    case 'p': return cs_cli_params_add(&o->params, "run", arg);
    case 'o': o->rep.output = arg; return CS_EXIT_OK;
    case 'z': o->rep.force = 1; return CS_EXIT_OK;
    case 'C': o->rep.compare_on = 1, o->rep.compare = arg; return CS_EXIT_OK;
    case 'V': o->no_verify = 1; return CS_EXIT_OK;
    case 's': snprintf(o->size, sizeof(o->size), "%s", arg); return CS_EXIT_OK;
    case 'd': o->dtype = arg; return cs_cli_parse_dtype("run", arg, &o->dt);
    case 'X': o->op = arg; return cs_cli_parse_op("run", arg, &o->rop);
    case 't': o->transport = arg; return CS_EXIT_OK;
    case 'P': o->provider = arg; return CS_EXIT_OK;
    case 'I': o->iface = arg; return CS_EXIT_OK;
    case 'k': o->check = 1; return CS_EXIT_OK;
    case 'T': return cs_cli_parse_seconds("run", "--timeout", arg, &o->timeout);
#ifdef CS_HAVE_SIM
    case 'F': return cs_cli_parse_format_nccl("run", arg, &o->rep.fmt);
#else
    case 'F': return cs_cli_parse_format("run", arg, &o->rep.fmt);
#endif
    case 'B': o->boot = arg; return CS_EXIT_OK;
    case 'Y': return cs_live_parse_wait("run", arg, &o->wait);
    case 'b': o->baseline = arg; return CS_EXIT_OK;
    case 'x': o->trace = arg; return CS_EXIT_OK;
    case 'H': o->trace_host = arg; return CS_EXIT_OK;
    case 'N': o->trace_plot = 0; return CS_EXIT_OK;
    case 'L': return cs_cli_parse_long("run", "--trace-links", arg, 0, 1 << 24, &o->trace_links);
    case 'r': return cs_cli_parse_long("run", "--root", arg, 0, 1 << 20, &o->root);
    case 'n': return cs_cli_parse_long("run", "--iters", arg, 1, 1000000, &o->iters);
    case 'w': return cs_cli_parse_long("run", "--warmup", arg, 0, 1000000, &o->warmup);
    case 'R': return cs_cli_parse_long("run", "--trace-ranks", arg, 0, 1 << 24, &o->trace_ranks);
    case 'U': return cs_cli_parse_long("run", "--trace-buckets", arg, 16, 1 << 24,
                                       &o->trace_buckets);
    case 'W': {
        int net = !strncmp(arg, "network=", 8);
        if (!net && strncmp(arg, "host=", 5))
            return cs_cli_usage_hint("run", "--trace-bw: expected host=RATE or network=RATE "
                                            "(e.g. network=1.25G), found '%s'", arg);
        return cs_cli_parse_rate("run", "--trace-bw", strchr(arg, '=') + 1, &o->trace_bw[net]);
    }
    case 'M':
        if (cs_cli_parse_size(arg, &o->max_msg) || o->max_msg == 0)
            return cs_cli_usage_hint("run", "--max-msg: expected a size, found '%s'", arg);
        return CS_EXIT_OK;
    default: return CS_EXIT_USAGE;
    }
}

/* parse: options, their values and what goes together. */
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
        {"trace-links", 1, 0, 'L'}, {"tuning", 1, 0, 'u'}, {"wait", 1, 0, 'Y'},
        {0, 0, 0, 0}};
    memset(o, 0, sizeof(*o));
    cs_cli_params_init(&o->params);
    o->dtype = "float", o->op = "sum", o->transport = "ofi", o->provider = "tcp;ofi_rxm";
    o->iface = "127.0.0.1", o->wait = "auto", o->iters = 20, o->warmup = 5, o->timeout = 60;
    o->dt = CS_DT_F32, o->rop = CS_OP_SUM, o->rep.fmt = CS_FMT_TABLE;
    o->trace_ranks = 64, o->trace_buckets = 1024, o->trace_plot = 1;
    int rc = cs_cli_options("run", argc, argv, ":ho:", lo, help, parse_opt, o);
    if (rc != CS_EXIT_OK)
        return rc;
    if (optind < argc)
        return cs_cli_usage_hint("run", "unexpected argument '%s'", argv[optind]);
    if ((rc = cs_cli_source_check("run", o->algo, o->schedule, o->tuning, &o->params)))
        return rc;
    if (o->algo && !o->coll_name)
        return cs_cli_usage_hint("run", "--coll is required with --algo");
    if (!o->size[0])
        return cs_cli_usage_hint("run", "--size is required");
    if (!strcmp(o->transport, "shm")) { /* no libfabric: rows say "shm/native" */
        if (strcmp(o->provider, "tcp;ofi_rxm"))
            return cs_cli_usage_hint("run", "--provider: only with --transport ofi");
        o->provider = "native";
    }
    if (o->baseline && (strcmp(o->baseline, "nccl") || strcmp(o->transport, "nccl")))
        return cs_cli_usage_hint("run", "--baseline: only 'nccl', with --transport nccl");
#ifdef CS_EXEC_HAVE_TRACES
    if (o->trace && !strcmp(o->transport, "nccl"))
        return cs_cli_usage_hint("run", "--trace: not with --transport nccl");
#else
    if (o->trace)
        return cs_cli_usage_hint("run", "--trace: collstep was built without traces/");
#endif
    return CS_EXIT_OK;
}

typedef struct run_ctx {
    run_opts_t *o;
    cs_boot_t *boot;
    cs_cli_scheds_t b;  /* what runs: per algorithm, file or table entry */
    cs_sched_t *sched; /* the one running now */
    const char *sched_params;
    cs_tp_t *tp;
    cs_engine_t *eng;
    cs_timed_t *timed; /* back to back */
    cs_dtype_t dt;
    cs_op_t op;
    int rank, nranks, nrows;
    int oversubscribed;   /* --wait: idle ranks yield their core */
    unsigned char *here;  /* rank -> 1 when it runs on this machine */
    int here_ranks;       /* how many do */
    const char *row_algo; /* algorithm column of the next rows (NULL: the schedule's) */
    char transport[64];   /* the rows' transport column */
    char (*host)[64];     /* --format nccl-tests: each rank's node (cs_job_find_nodes) */
    uint64_t asked[SIZES_MAX]; /* the sizes before rounding (nccl-tests' sweep line) */
    int nasked;
    cs_result_t rows[2 * CS_CLI_MAX_ALGOS * SIZES_MAX]; /* rank 0: what it prints at the end */
#ifdef CS_EXEC_HAVE_TRACES
    cs_live_trace_t *lt;
#endif
} run_ctx_t;

/* build: every rank builds (or loads) every schedule; errors are usage
 * errors, which rank 0 says (build() holds the others'). */
static int build_schedules(run_ctx_t *c, uint64_t *sizes, int *nsizes)
{
    run_opts_t *o = c->o;
    cs_cli_want_t w = {"run", c->rank == 0, sizes, *nsizes, cs_dtype_size(c->dt), NULL, NULL, 0, NULL};
    cs_coll_desc_t d = {o->coll, c->nranks, cs_coll_has_root(o->coll) ? (int32_t)o->root : 0, 0};
    int rc;
    /* the sizes as they move: a schedule file's collective once it is
     * loaded (a set picked its files by these already), --coll's before
     * a tuning table picks by them */
    if (o->schedule) {
        if ((rc = cs_cli_scheds_load(&w, o->schedule, &c->b)) == CS_EXIT_OK)
            rc = cs_cli_scheds_fit("run", &c->b, o->schedule, c->nranks);
        if (rc == CS_EXIT_OK)
            rc = cs_cli_sizes_round("run", c->b.coll, c->nranks, c->dt, c->rank == 0, sizes,
                                    nsizes, c->b.per_size ? c->b.of_size : NULL);
    } else if (o->root >= c->nranks) {
        rc = cs_cli_usage_error("run", "--root %ld out of range [0, %d)", o->root, c->nranks);
    } else if ((rc = cs_cli_sizes_round("run", o->coll, c->nranks, c->dt, c->rank == 0, sizes,
                                        nsizes, NULL)) == CS_EXIT_OK) {
        w.nsizes = *nsizes;
        rc = cs_cli_scheds_build(&w, o->algo, o->tuning, &o->params, &d, &c->b);
    }
    if (rc == CS_EXIT_OK && o->trace && c->b.n > 1)
        return cs_cli_usage_error("run", "--trace: one schedule at a time (%d for these sizes)",
                                  c->b.n);
    for (int i = 0; i < c->b.n && rc == CS_EXIT_OK && c->rank == 0; i++)
        if (c->b.map[i]) {
            fprintf(stderr, "collstep run: the rank maps of %s are not applied: ranks run where "
                            "the launcher started them\n", o->tuning);
            break;
        }
    return rc;
}

static int open_transport(run_ctx_t *c, cs_err_t *err)
{
    cs_tp_config_t cfg = {c->rank, c->nranks, c->o->provider, c->o->iface, c->o->max_msg,
                          c->o->timeout};
    int st = cs_tp_open(c->o->transport, &cfg, &c->tp, err);
    return cs_boot_connect(c->boot, st == CS_OK ? c->tp : NULL, st, err);
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
    int trace = 0;
#ifdef CS_EXEC_HAVE_TRACES
    trace = c->lt != NULL; /* the traced run: the last one */
#endif
    cs_timed_res_t res = {0};
    int st = cs_timed_run(c->timed, c->eng, count, c->o->warmup, c->o->iters, trace, &res, err);
    double t = res.mean;
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
    double tmax = 0;
    long long wrong = 0;
    int st = cs_timed_slowest(c->boot, t, w, &tmax, &wrong, err);
    if (st != CS_OK)
        return st;
    *wrong_total += wrong;
    if (c->rank == 0) {
        int cap = (int)(sizeof(c->rows) / sizeof(c->rows[0]));
        cs_result_t *row = &c->rows[c->nrows < cap ? c->nrows++ : c->nrows - 1];
        cs_result_fill(row, c->row_algo ? c->row_algo : c->sched->algo[0] ? c->sched->algo
                       : c->o->schedule, c->sched->desc.coll, c->nranks, bytes, c->dt, c->op,
                       tmax * 1e6, "");
        cs_result_set_provenance(row, c->row_algo ? "" : c->sched_params, "", c->transport);
        row->count = count;
        row->wrong = c->o->check ? wrong : -1;
    }
    return CS_OK;
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
    for (int a = 0; a < c->b.n && st == CS_OK; a++) {
        cs_gpu_engine_t *g = NULL;
        c->sched = c->b.sched[a];
        c->sched_params = c->b.params[a];
        cs_engine_config_t ec = {.dtype = c->dt, .op = c->op, .timeout_s = c->o->timeout,
                                 .max_count = cs_coll_block_count(c->sched->desc.coll, c->nranks,
                                                                  hi, cs_dtype_size(c->dt))};
        st = cs_gpu_engine_create(c->sched, nc, &ec, &g, err);
        int ast = cs_boot_agree(c->boot, st, "setting up the GPU engine", &e2);
        if (st == CS_OK && ast != CS_OK)
            *err = e2, st = ast;
        for (int i = 0; i < nsizes && st == CS_OK; i++)
            if (cs_cli_scheds_serves(&c->b, a, i))
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
    if (st == CS_OK)
        st = cs_timed_open(CS_TIMED_BACK_TO_BACK, c->boot, c->tp, o->timeout, &c->timed, err);
    if (st != CS_OK)
        return st;
    uint64_t hi = 0;
    for (int i = 0; i < nsizes; i++)
        hi = sizes[i] > hi ? sizes[i] : hi;
    for (int a = 0; a < c->b.n && st == CS_OK; a++) {
        c->sched = c->b.sched[a];
        c->sched_params = c->b.params[a];
        cs_engine_config_t ec = {.dtype = c->dt, .op = c->op, .timeout_s = o->timeout,
                                 .max_count = cs_coll_block_count(c->sched->desc.coll, c->nranks,
                                                                  hi, cs_dtype_size(c->dt)),
                                 .oversubscribed = c->oversubscribed};
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
            tc.opts.force = o->rep.force;
            if ((st = cs_live_trace_open(&tc, c->boot, c->tp, c->sched, c->dt, &c->lt, err)))
                return st;
        }
#endif
        for (int i = 0; i < nsizes && st == CS_OK; i++)
            if (cs_cli_scheds_serves(&c->b, a, i))
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
                     "coll=%s algo=%s schedule=%s tuning=%s params='%s' size=%s dtype=%s op=%s "
                     "root=%ld iters=%ld warmup=%ld check=%ld transport=%s provider=%s "
                     "max_msg=%llu trace=%d wait=%s",
                     o->coll_name ? o->coll_name : "", o->algo ? o->algo : "",
                     o->schedule ? o->schedule : "", o->tuning ? o->tuning : "", pbuf, o->size,
                     o->dtype, o->op, o->root, o->iters, o->warmup, o->check, o->transport,
                     o->provider, (unsigned long long)o->max_msg, o->trace != NULL, o->wait);
    if (n < 0 || (size_t)n >= len)
        args[len - 1] = 0;
}

/* Who we are: the bootstrap (launcher or environment), and how many ranks
 * share this machine's cores (--wait auto). */
static int boot(run_ctx_t *c)
{
    cs_err_t err;
    cs_err_clear(&err);
    cs_boot_config_t bc = {c->o->timeout, c->o->boot};
    int st = cs_boot_open(&bc, &c->boot, &err);
    if (st != CS_OK) {
        fprintf(stderr, "collstep run: %s\n", err.msg);
        return cs_cli_exit_code(st);
    }
    c->rank = cs_boot_rank(c->boot);
    c->nranks = cs_boot_size(c->boot);
    if (!(c->here = calloc((size_t)c->nranks, 1)))
        return fail(&(cs_err_t){CS_ERR_NOMEM, "out of memory"}, c->rank);
    if ((st = cs_job_machine_ranks(c->boot, &c->here_ranks, c->here, &err)) != CS_OK)
        return fail(&err, c->rank);
    c->oversubscribed = cs_job_oversubscribed("run", c->o->wait, c->here_ranks);
    return CS_EXIT_OK;
}

/* Refuse up front, before any transport opens, sizes whose buffers cannot
 * fit this machine: the engines allocate, one schedule at a time, the
 * buffers for the largest size (cs_engine_mem_estimate), and every rank of
 * the job on this machine does (--transport nccl: the host copy of the
 * buffers that --check and the inputs go through). */
static int check_memory(run_ctx_t *c, const uint64_t *sizes, int nsizes)
{
    uint64_t hi = 0;
    for (int i = 0; i < nsizes; i++)
        hi = sizes[i] > hi ? sizes[i] : hi;
    size_t es = cs_dtype_size(c->dt);
    int gpu = !strcmp(c->o->transport, "nccl");
    double need = 0;
    for (int r = 0; r < c->nranks; r++) {
        double most = 0;
        for (int a = 0; a < c->b.n && c->here[r]; a++) {
            const cs_sched_t *s = c->b.sched[a];
            uint64_t count = cs_coll_block_count(s->desc.coll, c->nranks, hi, es);
            uint64_t n_in = cs_plan_buf_elems(s, r, CS_BUF_IN, count);
            uint64_t n_out = cs_plan_buf_elems(s, r, CS_BUF_OUT, count);
            double x = gpu ? (double)((n_in > n_out ? n_in : n_out) + 1) * (double)es
                           : cs_engine_mem_estimate(s, r, count, c->dt);
            most = x > most ? x : most;
        }
        need += most;
    }
    return cs_live_mem_check("run", hi, need, c->here_ranks,
                             gpu ? "host copies of the buffers" : "buffers");
}

/* build on every rank, then all must have built the same schedules from
 * the same arguments.  A usage error is said once, by rank 0 (or by a rank
 * that alone met it), and every rank exits with it. */
static int build(run_ctx_t *c, uint64_t *sizes, int *nsizes)
{
    cs_err_t err;
    cs_err_clear(&err);
    cs_live_hold(c->boot);
    int rc = build_schedules(c, sizes, nsizes);
    if (rc == CS_EXIT_OK)
        rc = check_memory(c, sizes, *nsizes);
    rc = cs_live_release(c->boot, "run", rc);
    if (rc != CS_EXIT_OK)
        return rc;
    uint64_t digest = 0;
    for (int i = 0; rc == CS_EXIT_OK && i < c->b.n; i++)
        digest = digest * CS_FNV64_PRIME ^ cs_sched_digest(c->b.sched[i]);
    char args[700];
    args_text(c->o, args, sizeof(args));
    int st = cs_boot_check_same(c->boot, digest, args, &err);
    return st == CS_OK ? CS_EXIT_OK : fail(&err, c->rank);
}

/* Rank 0 writes the outputs; every rank learns whether it can. */
static int check_outputs(run_ctx_t *c)
{
    cs_err_t err;
    cs_err_clear(&err);
    int ost = CS_OK;
    if (c->rank == 0 && cs_cli_check_outputs("run", c->o->rep.output, c->o->trace,
                                             c->o->rep.force) != CS_EXIT_OK)
        ost = CS_ERR_EXISTS;
    if (cs_boot_agree(c->boot, ost, "checking the output paths", &err) == CS_OK)
        return CS_EXIT_OK;
    if (c->rank == 0)
        return CS_EXIT_USAGE; /* it said why */
    if (err.code != CS_ERR_EXISTS)
        return fail(&err, c->rank); /* rank 0 was lost */
    /* rank 0 refused a path (and said which): every rank exits with that */
    fprintf(stderr, "collstep run: rank %d: rank 0 refused the output paths (see its message)\n",
            c->rank);
    return CS_EXIT_USAGE;
}

/* --format nccl-tests: where every rank is (every rank, in step), as
 * nccl-tests' device block names it: its node's name. */
static int find_hosts(run_ctx_t *c)
{
    if (c->o->rep.fmt != CS_FMT_NCCL_TESTS)
        return CS_EXIT_OK;
    cs_job_t j;
    memset(&j, 0, sizeof(j));
    j.cfg.name = "run";
    j.cfg.wait = c->o->wait;
    j.boot = c->boot;
    j.rank = c->rank;
    j.nranks = c->nranks;
    int st = cs_job_find_nodes(&j, NULL);
    if (st == CS_OK && !(c->host = calloc((size_t)c->nranks, sizeof(*c->host))))
        st = cs_err_set(&j.err, CS_ERR_NOMEM, "out of memory");
    for (int r = 0; r < c->nranks && st == CS_OK; r++)
        snprintf(c->host[r], sizeof(c->host[r]), "%s", j.nodes[j.node_of[r]].name);
    cs_err_t err = j.err;
    free(j.node_of), free(j.first), free(j.count), free(j.nodes);
    return st == CS_OK ? CS_EXIT_OK : fail(&err, c->rank);
}

/* One nccl-tests table per algorithm and parameters, rows in the order
 * run (the sizes'). */
static int report_nccl(run_ctx_t *c)
{
#ifdef CS_HAVE_SIM
    int n = c->nrows, nt = 0, rc = CS_EXIT_OK;
    cs_nccl_table_t *t = calloc((size_t)n, sizeof(*t));
    cs_result_t *sorted = calloc((size_t)n, sizeof(*sorted));
    char(*title)[512] = calloc((size_t)n, sizeof(*title));
    const char **hosts = calloc((size_t)c->nranks, sizeof(char *));
    const char **devs = calloc((size_t)c->nranks, sizeof(char *));
    int *grp = calloc((size_t)n, sizeof(int));
    char dev[96];
    snprintf(dev, sizeof(dev), "collstep %s (%s memory)", c->transport,
             strcmp(c->o->transport, "nccl") == 0 ? "GPU" : "host");
    if (!t || !sorted || !title || !hosts || !devs || !grp || !c->host) {
        fprintf(stderr, "collstep run: out of memory\n");
        rc = CS_EXIT_RUNTIME;
    }
    for (int r = 0; r < c->nranks && rc == CS_EXIT_OK; r++)
        hosts[r] = c->host[r], devs[r] = dev;
    for (int i = 0; i < n && rc == CS_EXIT_OK; i++) { /* group of each row: its first row's */
        const cs_result_t *a = &c->rows[i];
        int j = 0;
        while (strcmp(c->rows[j].algo, a->algo) || strcmp(c->rows[j].params, a->params))
            j++;
        grp[i] = j == i ? nt++ : grp[j];
    }
    cs_err_t err;
    cs_err_clear(&err);
    for (int g = 0, k = 0; g < nt && rc == CS_EXIT_OK; g++) {
        int first = 0;
        while (grp[first] != g)
            first++;
        const cs_result_t *r = &c->rows[first];
        snprintf(title[g], sizeof(title[g]), "%s %s%s%s%s, %d ranks, transport %s\n"
                 "measured by collstep run, in the layout of nccl-tests %s",
                 cs_coll_name(r->coll), r->algo, r->params[0] ? " (" : "", r->params,
                 r->params[0] ? ")" : "", r->ranks, c->transport, CS_NCCL_TESTS_VERSION);
        t[g] = (cs_nccl_table_t){.title = title[g], .validation = c->o->check != 0,
                                 .root = (int)c->o->root, .ranks = c->nranks, .hosts = hosts,
                                 .devices = devs, .rows = &sorted[k]};
        if (cs_nccl_sweep(c->asked, c->nasked, &t[g].min_bytes, &t[g].max_bytes, &t[g].step,
                          &t[g].step_factor) != CS_OK) {
            rc = cs_cli_usage_error("run", "--format nccl-tests: the sizes are not a sweep");
            break;
        }
        for (int i = 0; i < n; i++)
            if (grp[i] == g)
                sorted[k++] = c->rows[i], t[g].n++;
    }
    if (rc == CS_EXIT_OK)
        rc = cs_cli_nccl_report("run", &c->o->rep, t, nt);
    free(t), free(sorted), free(title), free(hosts), free(devs), free(grp);
    return rc;
#else
    (void)c;
    return CS_EXIT_USAGE;
#endif
}

/* act and report: the sweep on the transport, then rank 0 prints what was
 * measured, even when a later size failed. */
static int act(run_ctx_t *c, const uint64_t *sizes, int nsizes)
{
    run_opts_t *o = c->o;
    cs_err_t err;
    cs_err_clear(&err);
    if (!strcmp(o->transport, "ofi"))
        snprintf(c->transport, sizeof(c->transport), "%s/%s", o->transport, o->provider);
    else
        snprintf(c->transport, sizeof(c->transport), "%s", o->transport);
    long long wrong = 0;
    int st;
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
    int prc = CS_EXIT_OK;
    if (c->rank == 0 && c->nrows)
        prc = o->rep.fmt == CS_FMT_NCCL_TESTS ? report_nccl(c)
                                              : cs_cli_report("run", &o->rep, c->rows, c->nrows);
    if (st != CS_OK)
        return fail(&err, c->rank);
    if (c->rank == 0 && o->check && wrong)
        fprintf(stderr, "collstep run: %lld wrong elements\n", wrong);
    return prc != CS_EXIT_OK ? prc : wrong ? CS_EXIT_FAIL : CS_EXIT_OK;
}

int cs_cli_run(int argc, char **argv)
{
    run_opts_t o;
    run_ctx_t *c = calloc(1, sizeof(*c));
    if (!c) {
        fprintf(stderr, "collstep run: out of memory\n");
        return CS_EXIT_RUNTIME;
    }
    cs_cli_scheds_init(&c->b);
    c->o = &o;
    uint64_t sizes[SIZES_MAX];
    int nsizes = 0;
    int rc = parse_args(argc, argv, &o);
    c->dt = o.dt, c->op = o.rop;
    if (rc == CS_EXIT_OK)
        rc = cs_cli_sizes("run", o.size, cs_dtype_size(c->dt), sizes, &nsizes);
#ifdef CS_HAVE_SIM
    if (rc == CS_EXIT_OK && o.rep.fmt == CS_FMT_NCCL_TESTS) {
        memcpy(c->asked, sizes, sizeof(uint64_t) * (size_t)nsizes);
        c->nasked = nsizes;
        rc = cs_cli_nccl_check_sizes("run", o.size, c->asked, c->nasked);
        if (rc == CS_EXIT_OK && o.rep.compare_on)
            rc = cs_cli_usage_error("run", "--compare: the nccl-tests layout has no comparison "
                                           "view");
    }
#endif
    if (rc == CS_EXIT_OK) {
        cs_intr_install();
        rc = boot(c);
    }
    if (rc == CS_EXIT_OK)
        rc = find_hosts(c);
    if (rc == CS_EXIT_OK)
        rc = build(c, sizes, &nsizes);
    /* no transport reduces in a switch: refused by every rank alike (they
     * hold the same schedules), before any transport is opened.  NCCL
     * could reach an NVSwitch, but collstep's GPU engine issues no switch
     * operation (docs/gpu.md, "Switch steps" says why) */
    if (rc == CS_EXIT_OK) {
        char why[200];
        if (strcmp(o.transport, "nccl") == 0)
            snprintf(why, sizeof(why), "run on transport nccl: collstep's GPU engine issues no "
                                       "switch operation (docs/gpu.md, \"Switch steps\")");
        else
            snprintf(why, sizeof(why), "run on transport %s: no switch reduces here",
                     o.transport);
        rc = cs_cli_refuse_switch(c->rank == 0 ? "run" : NULL, &c->b, why);
    }
    /* verify: every rank holds the same schedules, so every rank gets the
     * same answer, before any transport is opened; rank 0 explains it */
    if (rc == CS_EXIT_OK && !o.no_verify)
        rc = cs_cli_scheds_verify(c->rank == 0 ? "run" : NULL, &c->b, o.schedule,
                                  CS_CLI_VERIFY_CACHED);
    if (rc == CS_EXIT_OK)
        rc = check_outputs(c);
    if (rc == CS_EXIT_OK)
        rc = act(c, sizes, nsizes);
#ifdef CS_EXEC_HAVE_TRACES
    cs_live_trace_close(c->lt);
#endif
    cs_engine_destroy(c->eng);
    cs_timed_close(c->timed);
    cs_tp_close(c->tp);
    cs_cli_scheds_free(&c->b);
    cs_boot_close(c->boot);
    free(c->here);
    free(c->host);
    free(c);
    return rc == CS_CLI_DONE ? CS_EXIT_OK : rc;
}
