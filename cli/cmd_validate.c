/*
 * cmd_validate.c - `collstep validate`: run schedules live and simulate the
 * same schedules on a platform; print measured vs predicted time.  The
 * front end of validate/cs_validate.h: options, messages, printing.
 *
 * Launched like `collstep run` (every rank runs it, cli_live.h).
 *   parse    the options (every rank)
 *   build    every rank builds the schedules (hier gets dims = ranks per
 *            node x nodes from where the ranks are, cs_job_dims)
 *   verify   rank 0 verifies them and checks the platforms (a host per
 *            rank; for a platform of `collstep calibrate`, ranks sharing
 *            nodes as when it was measured) and the outputs; every rank
 *            agrees on the exit code and on the arguments
 *   act      live: per algorithm an engine, per size --warmup untimed
 *            runs and --iters timed runs each started at a common moment
 *            (cs_validate_live); then rank 0 simulates the same schedules
 *            and sizes on every platform (cs_validate_predict)
 *   report   nccl-tests columns plus measured, predicted and error =
 *            (predicted - measured) / measured, per algorithm and overall
 *            the median, geometric mean and worst |error|
 *            (cs_validate_write); with --trace DIR the live and simulated
 *            traces side by side and their per-tier comparison
 *            (cs_validate_trace_compare), DIR whole or not at all
 *
 * Exit codes (cli.h): 0; 2 usage and bad input (unknown algorithm, a
 * platform with fewer hosts than ranks, a refused -o or --trace); 3 a rank
 * died or timed out, a simulation failed, live and simulated traces moved
 * different bytes; 128+N a signal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_live.h"
#include "cs_hash.h"
#include "cs_results.h"
#include "cs_validate.h"

typedef struct plat_spec {
    char spec[256];
    cs_sim_model_t model;
} plat_spec_t;

typedef struct val_opts {
    cs_live_opts_t live; /* transport, -o, --force, --timeout, ... */
    const char *coll, *algo, *format, *groups, *trace, *tuning;
    char size[256];
    plat_spec_t plats[CS_VALIDATE_MAX_PLATS];
    int nplats;
    cs_cli_params_t params;
    long iters, warmup;
} val_opts_t;

typedef struct val {
    val_opts_t *o;
    cs_job_t l;
    cs_cli_scheds_t b; /* the schedules and the sizes each serves */
    uint64_t sizes[CS_CLI_MAX_SIZES];
    int nsizes;
    const cs_sched_t *sched[CS_CLI_MAX_SCHEDS];
    const char *algo[CS_CLI_MAX_SCHEDS], *params[CS_CLI_MAX_SCHEDS];
    unsigned char serves[CS_CLI_MAX_SCHEDS * CS_CLI_MAX_SIZES];
    char transport[96];
    cs_validate_t v;   /* what the library runs, predicts and reports */
#ifdef CS_HAVE_MODEL
    cs_cli_nccl_t nccl[CS_VALIDATE_MAX_PLATS]; /* platforms @nccl */
#endif
    cs_out_t *trace_out; /* rank 0, --trace: DIR being written */
} val_t;

static const char usage_text[] =
    "usage: collstep validate --platform SPEC [--coll COLL] --algo A[,B...] --size SIZES\n"
    "                         [options]\n"
    "       (start like collstep run: mpirun -np N, srun --mpi=pmix, or RANK,\n"
    "        WORLD_SIZE, MASTER_ADDR, MASTER_PORT for every process)\n"
    "\n"
    "Run each algorithm live and simulate the same schedule on a platform (the one\n"
    "collstep calibrate wrote, typically); print measured and predicted time and\n"
    "the error per size, and per algorithm and overall the median, geometric mean\n"
    "and worst |error|.\n"
    "\n"
    "  --platform SPEC[@MODEL]  platform to predict with (XML file or preset) and\n"
    "                       its model (ideal, the default; calibrated; or nccl: NCCL's\n"
    "                       per-step costs, for GPU runs; see collstep sim --help);\n"
    "                       repeat for more\n"
    "                       predictions side by side (at most %d), the first is the\n"
    "                       main one\n"
    "  --coll COLL          allreduce (default), reduce-scatter, allgather, ...\n"
    "  --algo A[,B...]      algorithms (collstep algos); hier gets dims from the nodes\n"
    "  --algo auto --tuning FILE  per size the algorithm and parameters a tuning table\n"
    "                       of collstep plan chose (its rank maps are not applied: ranks\n"
    "                       run where they were started, and are simulated there)\n"
    "  --param KEY=VALUE    generator parameters, as collstep run\n"
    "  --size SIZES         message sizes: 1M:64M, 1M,4M (see below)\n"
    "  --iters N            timed runs per size (10); --warmup N untimed runs (2)\n"
    "  --groups FILE        node of each rank, one name per line (default: hostname\n"
    "                       and network namespace), as given to collstep calibrate\n"
    "  --format F           table (default), csv, json; -o FILE writes it there\n"
    "  --trace DIR          live and simulated traces of the last timed run of every\n"
    "                       algorithm and size side by side (DIR/live/ALGO,\n"
    "                       DIR/sim-P for --platform number P), and their per-tier\n"
    "                       comparison (DIR/compare.csv, printed): bytes per tier\n"
    "                       must match exactly, time and utilization may differ\n"
    "%s"
    "  --help               this text\n"
    "\n"
    "       collstep validate --nccl-tests LOG [LOG...] --platform SPEC: predict\n"
    "       nccl-tests logs instead of running (collstep validate --help --nccl-tests)\n"
    "\n"
    "measured: every timed run starts at a common moment (rank 0 names one a few ms\n"
    "ahead, every rank waits for it on clocks aligned to rank 0's); its time is the\n"
    "last rank's end minus the first rank's start on those clocks; the column is\n"
    "the median over --iters runs, spread = (90th - 10th percentile) / median;\n"
    "cpu_us (json, csv) is the CPU time a rank spent per run, runq_wait_us the time\n"
    "its engine waited for a core while it could run (means over the ranks).\n"
    "predicted: the simulated time of the same schedule (all ranks start together),\n"
    "with copies charged like reductions.  error %% = 100 (predicted - measured) /\n"
    "measured.\n"
    "\n%s\n%s";

static int parse_platform(val_opts_t *o, const char *arg)
{
    if (o->nplats == CS_VALIDATE_MAX_PLATS)
        return cs_live_uerr("validate", "--platform: at most 4 platforms%s", "");
    plat_spec_t *p = &o->plats[o->nplats++];
    snprintf(p->spec, sizeof(p->spec), "%s", arg);
    char *at = strrchr(p->spec, '@');
    p->model = CS_SIM_IDEAL;
    if (at) {
        *at = 0;
        p->model = cs_sim_model_parse(at + 1);
        if (p->model == CS_SIM_MODEL_COUNT)
            return cs_live_uerr("validate", "--platform: unknown model '%s' (ideal, calibrated, "
                                            "nccl)", at + 1);
#ifndef CS_HAVE_MODEL
        if (p->model == CS_SIM_NCCL)
            return cs_live_uerr("validate", "--platform %s: the nccl model is not built", at + 1);
#endif
    }
    return CS_EXIT_OK;
}

static int parse(int argc, char **argv, val_opts_t *o)
{
    static const struct option lo[] = {
        {"platform", 1, 0, 'P'}, {"coll", 1, 0, 'c'},  {"algo", 1, 0, 'a'},
        {"param", 1, 0, 'p'},    {"size", 1, 0, 's'},  {"iters", 1, 0, 'n'},
        {"warmup", 1, 0, 'w'},   {"format", 1, 0, 'f'}, {"groups", 1, 0, 'g'},
        {"trace", 1, 0, 'x'},    {"tuning", 1, 0, 'u'}, {"help", 0, 0, 'h'}, CS_LIVE_LONGOPTS,
        {0, 0, 0, 0}};
    memset(o, 0, sizeof(*o));
    cs_live_opts_init(&o->live);
    cs_cli_params_init(&o->params);
    o->coll = "allreduce", o->format = "table", o->iters = 10, o->warmup = 2;
    int c, rc = CS_EXIT_OK;
    while (rc == CS_EXIT_OK && (c = getopt_long(argc, argv, ":ho:", lo, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'P': rc = parse_platform(o, optarg); break;
        case 'c': o->coll = optarg; break;
        case 'a': o->algo = optarg; break;
        case 'p': rc = cs_cli_params_add(&o->params, "validate", optarg); break;
        case 's': snprintf(o->size, sizeof(o->size), "%s", optarg); break;
        case 'f': o->format = optarg; break;
        case 'g': o->groups = optarg; break;
        case 'x': o->trace = optarg; break;
        case 'u': o->tuning = optarg; break;
        case 'n':
        case 'w': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < (c == 'n') || v > 100000)
                return cs_live_uerr("validate", "--iters / --warmup: expected a count, found "
                                                "'%s'", optarg);
            *(c == 'n' ? &o->iters : &o->warmup) = v;
            break;
        }
        case 'h':
            printf(usage_text, CS_VALIDATE_MAX_PLATS, cs_live_usage_opts, cs_cli_size_help,
                   cs_cli_exit_help);
            return -1;
        default: rc = cs_live_opt("validate", &o->live, c, optarg, argv);
        }
    }
    if (rc == CS_EXIT_OK)
        rc = cs_live_parse_end("validate", &o->live, argc, argv);
    if (rc != CS_EXIT_OK)
        return rc;
    if (!o->nplats)
        return cs_live_uerr("validate", "%s", "--platform FILE is required (the output of "
                                              "collstep calibrate)");
    if (!o->algo)
        return cs_live_uerr("validate", "%s", "--algo is required");
    if (cs_cli_source_check("validate", o->algo, NULL, o->tuning, &o->params) != CS_EXIT_OK)
        return CS_EXIT_USAGE;
    if (!o->size[0])
        return cs_live_uerr("validate", "%s", "--size is required");
    cs_results_fmt_t fmt = cs_results_fmt_parse(o->format);
    if (fmt == CS_FMT_NCCL_TESTS)
        return cs_live_uerr("validate", "--format: expected table, csv or json, found '%s' (the "
                                        "nccl-tests layout is for sim, plan and run)", o->format);
    if (fmt == CS_FMT_COUNT)
        return cs_live_uerr("validate", "--format: expected table, csv or json, found '%s'",
                            o->format);
    return CS_EXIT_OK;
}

/* build: the schedules (sizes rounded to what moves first), and what the
 * library gets of them.  Usage errors are printed; an exit code. */
static int build(val_t *w)
{
    val_opts_t *o = w->o;
    cs_validate_t *v = &w->v;
    int dims[2], ndims = 0;
    cs_coll_t coll = cs_coll_parse(o->coll);
    if (coll == CS_COLL_COUNT)
        return cs_cli_usage_error("validate", "--coll: unknown collective '%s'", o->coll);
    int rc = cs_cli_sizes("validate", o->size, 4, w->sizes, &w->nsizes);
    /* the sizes as they move, before a tuning table picks by them */
    if (rc == CS_EXIT_OK)
        rc = cs_cli_sizes_round("validate", coll, w->l.nranks, CS_DT_F32, w->l.rank == 0,
                                w->sizes, &w->nsizes, NULL);
    if (rc != CS_EXIT_OK)
        return rc;
    cs_job_dims(&w->l, dims, &ndims);
    /* a tuning table's rank maps are not applied: the live ranks are where
     * they were started, and the simulation places them the same way */
    cs_cli_want_t want = {"validate", w->l.rank == 0, w->sizes, w->nsizes, 4, NULL, dims, ndims, NULL};
    cs_coll_desc_t d = {coll, w->l.nranks, 0, 0};
    rc = cs_cli_scheds_build(&want, o->algo, o->tuning, &o->params, &d, &w->b);
    for (int a = 0; a < w->b.n; a++) {
        w->sched[a] = w->b.sched[a], w->algo[a] = w->b.sched[a]->algo;
        w->params[a] = w->b.params[a];
        for (int k = 0; k < w->nsizes; k++)
            w->serves[a * w->nsizes + k] = (unsigned char)cs_cli_scheds_serves(&w->b, a, k);
    }
    cs_live_transport_name(&o->live, w->transport, sizeof(w->transport));
    *v = (cs_validate_t){.coll = coll, .nranks = w->l.nranks, .nnodes = w->l.nnodes,
                         .node_of = w->l.node_of, .nalgo = w->b.n, .nsizes = w->nsizes,
                         .sched = w->sched, .algo = w->algo, .params = w->params,
                         .sizes = w->sizes, .serves = w->serves, .nplats = o->nplats,
                         .transport = w->transport, .iters = o->iters, .warmup = o->warmup,
                         .timeout_s = o->live.timeout, .trace = o->trace != NULL};
    for (int i = 0; i < o->nplats; i++)
        v->plats[i] = (cs_validate_plat_t){o->plats[i].spec, o->plats[i].model, NULL, NULL, NULL};
    if (rc == CS_EXIT_OK) { /* the largest rank's buffers, on every rank of this machine */
        uint64_t hi = 0;
        for (int k = 0; k < w->nsizes; k++)
            hi = w->sizes[k] > hi ? w->sizes[k] : hi;
        rc = cs_live_mem_check("validate", hi, cs_validate_mem_estimate(v) * w->l.machine_ranks,
                               w->l.machine_ranks, "buffers");
    }
    return rc;
}

#ifdef CS_HAVE_MODEL
/* Platform i @nccl: what NCCL charges each (algorithm, size) there. */
static int nccl_costs(val_t *w, int i)
{
    cs_validate_t *v = &w->v;
    cs_validate_plat_t *p = &v->plats[i];
    cs_cli_nccl_t *c = &w->nccl[i];
    char **hosts = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    cs_cli_nccl_init(c);
    if (cs_sim_hosts(p->plat, NULL, v->nranks, &hosts, &err) != CS_OK) {
        fprintf(stderr, "collstep validate: --platform %s: %s\n", p->spec, err.msg);
        return CS_EXIT_USAGE;
    }
    int rc = cs_cli_nccl_setup("validate", c, p->plat, hosts, v->nranks);
    cs_sim_hosts_free(hosts, v->nranks);
    int n = v->nalgo * v->nsizes;
    cs_sim_instance_t *in = rc == CS_EXIT_OK ? calloc((size_t)n + 1, sizeof(*in)) : NULL;
    if (rc == CS_EXIT_OK && !in)
        rc = CS_EXIT_RUNTIME;
    for (int j = 0; j < n && in; j++)
        in[j].sched = v->sched[j / v->nsizes], in[j].bytes = v->sizes[j % v->nsizes];
    if (rc == CS_EXIT_OK)
        rc = cs_cli_nccl_costs("validate", c, in, n, NULL);
    free(in);
    p->nccl = c->cost;
    p->tier_bw_scale = c->scale;
    return rc;
}
#endif

/* verify: rank 0 opens and checks the platforms, the outputs, --trace DIR */
static int verify(val_t *w)
{
    val_opts_t *o = w->o;
    cs_err_t *err = &w->l.err;
    for (int i = 0; i < o->nplats; i++) {
        cs_validate_plat_t *p = &w->v.plats[i];
        if (cs_platform_open(p->spec, &p->plat, err) != CS_OK) {
            fprintf(stderr, "collstep validate: --platform %s: %s\n", p->spec, err->msg);
            return CS_EXIT_USAGE;
        }
        if (cs_validate_check_platform(&w->v, i, err) != CS_OK) {
            fprintf(stderr, "collstep validate: --platform %s\n", err->msg);
            return CS_EXIT_USAGE;
        }
#ifdef CS_HAVE_MODEL
        if (p->model == CS_SIM_NCCL) {
            int rc = nccl_costs(w, i);
            if (rc != CS_EXIT_OK)
                return rc;
        }
#endif
    }
    const char *out = o->live.output;
    if (out && cs_out_check(out, CS_OUT_STDOUT | (o->live.force ? CS_OUT_FORCE : 0),
                            &cs_validate_out_kind, 0, err) != CS_OK) {
        fprintf(stderr, "collstep validate: -o %s: %s\n", out, err->msg);
        return CS_EXIT_USAGE;
    }
    if (!o->trace)
        return CS_EXIT_OK;
#ifndef CS_EXEC_HAVE_TRACES
    fprintf(stderr, "collstep validate: --trace: collstep was built without traces/\n");
    return CS_EXIT_USAGE;
#endif
    int st = cs_out_begin_dir(o->trace, o->live.force ? CS_OUT_FORCE : 0, &cs_validate_trace_kind,
                              &w->trace_out, err);
    if (st == CS_OK)
        st = cs_validate_trace_prepare(cs_out_tmp_path(w->trace_out), err);
    if (st != CS_OK) {
        fprintf(stderr, "collstep validate: --trace %s: %s\n", o->trace, err->msg);
        return cs_cli_exit_code(st);
    }
    w->v.trace_dir = cs_out_tmp_path(w->trace_out);
    return CS_EXIT_OK;
}

/* --trace: the comparison (to f), then DIR committed */
static int trace_finish(val_t *w, FILE *f)
{
    const char *dir = w->o->trace;
    int bad = 0, st = cs_validate_trace_compare(&w->v, dir, f, &bad, &w->l.err);
    if (st == CS_OK) {
        st = cs_out_commit(w->trace_out, &w->l.err);
        w->trace_out = NULL;
    }
    if (st != CS_OK) {
        fprintf(stderr, "collstep validate: --trace %s: %s\n", dir, w->l.err.msg);
        return CS_EXIT_RUNTIME;
    }
    fprintf(f, "# wrote %s (live/, sim-N/, compare.csv)\n", dir);
    if (bad) {
        fprintf(stderr, "collstep validate: --trace: %d tier(s) moved different bytes live and "
                        "simulated (see %s/compare.csv): the two did not run the same schedule\n",
                bad, dir);
        return CS_EXIT_RUNTIME;
    }
    return CS_EXIT_OK;
}

/* report: the table (or csv, json) to stdout or -o FILE, then --trace's */
static int report(val_t *w)
{
    val_opts_t *o = w->o;
    cs_results_fmt_t fmt = cs_results_fmt_parse(o->format);
    cs_out_t *out = NULL;
    FILE *f = stdout;
    if (o->live.output) {
        int fl = CS_OUT_STDOUT | (o->live.force ? CS_OUT_FORCE : 0);
        if (cs_out_begin_file(o->live.output, fl, &cs_validate_out_kind, &out, &w->l.err)) {
            fprintf(stderr, "collstep validate: -o %s: %s\n", o->live.output, w->l.err.msg);
            return CS_EXIT_USAGE;
        }
        f = cs_out_stream(out);
    }
    int st = cs_validate_write(&w->v, fmt, f, &w->l.err);
    if (st != CS_OK) {
        cs_out_abort(out);
        fprintf(stderr, "collstep validate: %s\n", w->l.err.msg);
        return cs_cli_exit_code(st);
    }
    if (out && cs_out_commit(out, &w->l.err) != CS_OK) {
        fprintf(stderr, "collstep validate: -o %s: %s\n", o->live.output, w->l.err.msg);
        return CS_EXIT_RUNTIME;
    }
    int rc = CS_EXIT_OK;
    if (o->trace) /* the comparison goes with a table on stdout, else to stderr */
        rc = trace_finish(w, fmt == CS_FMT_TABLE && !out ? stdout : stderr);
    fflush(stdout);
    return rc;
}

/* Rank 0 on a terminal: the size just measured. */
static void progress(void *ctx, int a, int k, const cs_validate_meas_t *m)
{
    val_t *w = ctx;
    if (w->l.rank == 0 && isatty(2))
        fprintf(stderr, "\rcollstep validate: %s %llu B: %.1f us   ", w->algo[a],
                (unsigned long long)w->sizes[k], m->med * 1e6);
}

static int run(val_t *w)
{
    val_opts_t *o = w->o;
    int rc = cs_live_start(&w->l, "validate", &o->live, o->groups);
    if (rc != CS_EXIT_OK)
        return rc;
    /* build and verify: every rank builds, rank 0 checks; all exit 2
     * together when one rank cannot go on.  A usage error is said once, by
     * rank 0 (or by a rank that alone met it): the others hold theirs, and
     * every rank reaches the release's allgather whatever failed */
    cs_live_hold(w->l.boot);
    rc = build(w);
    rc = cs_live_release(w->l.boot, "validate", rc);
    if (rc == CS_EXIT_OK)
        rc = cs_cli_scheds_verify(w->l.rank == 0 ? "validate" : NULL, &w->b, NULL,
                                  CS_CLI_VERIFY_CACHED);
    if (rc == CS_EXIT_OK && w->l.rank == 0)
        rc = verify(w);
    if ((rc = cs_live_agree(&w->l, rc)) != CS_EXIT_OK)
        return rc;
    char args[1024];
    snprintf(args, sizeof(args), "coll=%.64s algo=%.200s size=%.200s iters=%ld warmup=%ld "
             "transport=%.16s provider=%.64s wait=%.8s trace=%d tuning=%.100s", o->coll, o->algo,
             o->size, o->iters, o->warmup, o->live.transport, o->live.provider, o->live.wait,
             o->trace != NULL, o->tuning ? o->tuning : "");
    uint64_t digest = 0;
    for (int i = 0; i < w->b.n; i++)
        digest = digest * CS_FNV64_PRIME ^ cs_sched_digest(w->b.sched[i]);
    int st = cs_boot_check_same(w->l.boot, digest, args, &w->l.err);
    if (st == CS_OK)
        st = cs_validate_alloc(&w->v, &w->l.err);
    /* act: live, then (rank 0) simulate */
    w->v.progress = progress, w->v.progress_ctx = w;
    if (st == CS_OK)
        st = cs_job_connect(&w->l);
    if (st == CS_OK)
        st = cs_validate_live(&w->v, &w->l, &w->l.err);
    if (w->l.rank == 0 && isatty(2))
        fputc('\n', stderr);
    if (st != CS_OK)
        return cs_live_fail(&w->l, st);
    cs_tp_close(w->l.tp);
    w->l.tp = NULL;
    if (w->l.rank != 0)
        return CS_EXIT_OK;
    for (int i = 0; i < o->nplats && st == CS_OK; i++)
        st = cs_validate_predict(&w->v, i, &w->l.err);
    if (st != CS_OK)
        return cs_live_fail(&w->l, st);
    return report(w);
}

int cs_cli_validate(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) /* logs: no live run */
        if (strcmp(argv[i], "--nccl-tests") == 0 || strncmp(argv[i], "--nccl-tests=", 13) == 0)
            return cs_cli_validate_nccl(argc, argv);
    val_opts_t o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? CS_EXIT_OK : rc;
    val_t *w = cs_live_new("validate", sizeof(*w));
    if (!w)
        return CS_EXIT_RUNTIME;
    w->o = &o;
    cs_cli_scheds_init(&w->b);
    rc = run(w);
    cs_out_abort(w->trace_out);
    cs_job_close(&w->l);
    cs_cli_scheds_free(&w->b);
    for (int i = 0; i < o.nplats; i++) {
        cs_platform_close(w->v.plats[i].plat);
#ifdef CS_HAVE_MODEL
        if (w->v.plats[i].nccl) {
            cs_cli_nccl_fini(&w->nccl[i]);
        }
#endif
    }
    cs_validate_free(&w->v);
    free(w);
    return rc;
}
