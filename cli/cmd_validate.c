/*
 * cmd_validate.c - `collstep validate`: run schedules live and simulate the
 * same schedules on a platform; print measured vs predicted time.
 *
 * Launched like `collstep run` (every rank runs it, cli_live.h).
 *   parse    the options (every rank)
 *   build    every rank builds the schedules (hier gets dims = ranks per
 *            node x nodes from where the ranks are: validate_build.c)
 *   verify   rank 0 verifies them and checks the platforms (a host per
 *            rank; for a platform of `collstep calibrate`, ranks sharing
 *            nodes as when it was measured) and the outputs; every rank
 *            agrees on the exit code and on the arguments
 *   act      live: per algorithm an engine, per size --warmup untimed
 *            runs and --iters timed runs each started after a barrier
 *            (validate_live.c); then rank 0 simulates the same schedules
 *            and sizes on every platform (validate_sim.c)
 *   report   nccl-tests columns plus measured, predicted and error =
 *            (predicted - measured) / measured, per algorithm and overall
 *            the median, geometric mean and worst |error|
 *            (validate_report.c); with --trace DIR the live and simulated
 *            traces side by side and their per-tier comparison
 *            (validate_trace.c)
 *
 * Exit codes (cli.h): 0; 2 usage and bad input (unknown algorithm, a
 * platform with fewer hosts than ranks, a refused -o or --trace); 3 a rank
 * died or timed out, a simulation failed; 128+N a signal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_hash.h"
#include "cs_results.h"
#include "cs_timed.h"
#include "validate_int.h"

static const char usage_text[] =
    "usage: collstep validate --platform FILE --coll COLL --algo A[,B...] --size SIZES\n"
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
    "                       its model (ideal, default, or calibrated); repeat for more\n"
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
    "measured: every timed run starts after a barrier; its time is the last rank's\n"
    "end minus the first rank's start (clocks aligned to rank 0's); the column is\n"
    "the median over --iters runs, spread = (90th - 10th percentile) / median;\n"
    "cpu_us (json, csv) is the CPU time a rank spent per run, runq_wait_us the time\n"
    "its engine waited for a core while it could run (means over the ranks).\n"
    "predicted: the simulated time of the same schedule (all ranks start together),\n"
    "with copies charged like reductions.  error %% = 100 (predicted - measured) /\n"
    "measured.\n"
    "\n%s\n%s";

static int parse_platform(val_opts_t *o, const char *arg)
{
    if (o->nplats == VAL_MAX_PLATS)
        return cs_live_uerr("validate", "--platform: at most 4 platforms%s", "");
    plat_spec_t *p = &o->plats[o->nplats++];
    snprintf(p->spec, sizeof(p->spec), "%s", arg);
    char *at = strrchr(p->spec, '@');
    p->model = CS_SIM_IDEAL;
    if (at) {
        *at = 0;
        p->model = cs_sim_model_parse(at + 1);
        if (p->model == CS_SIM_MODEL_COUNT)
            return cs_live_uerr("validate", "--platform: unknown model '%s' (ideal, calibrated)",
                                at + 1);
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
            printf(usage_text, VAL_MAX_PLATS, cs_live_usage_opts, cs_cli_size_help,
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
    if (cs_results_fmt_parse(o->format) == CS_FMT_COUNT)
        return cs_live_uerr("validate", "--format: expected table, csv or json, found '%s'",
                            o->format);
    return CS_EXIT_OK;
}

/* verify: rank 0's checks of the platforms and the outputs */
static int verify(val_t *v)
{
    val_opts_t *o = v->o;
    int rc = val_check_platforms(v);
    const char *out = o->live.output;
    if (rc == CS_EXIT_OK && out &&
        cs_out_check(out, CS_OUT_STDOUT | (o->live.force ? CS_OUT_FORCE : 0), &val_out_kind, 0,
                     &v->l.err) != CS_OK) {
        fprintf(stderr, "collstep validate: -o %s: %s\n", out, v->l.err.msg);
        rc = CS_EXIT_USAGE;
    }
    if (rc == CS_EXIT_OK && o->trace)
        rc = val_trace_begin(v);
    return rc;
}

static int run(val_t *v)
{
    val_opts_t *o = v->o;
    int rc = cs_live_start(&v->l, "validate", &o->live, o->groups);
    if (rc != CS_EXIT_OK)
        return rc;
    /* build and verify: every rank builds, rank 0 checks; all exit 2
     * together when one rank cannot go on.  A usage error is said once, by
     * rank 0 (or by a rank that alone met it): the others hold theirs, and
     * every rank reaches the release's allgather whatever failed */
    cs_live_hold(v->l.boot);
    rc = cs_cli_sizes("validate", o->size, 4, v->sizes, &v->nsizes);
    if (rc == CS_EXIT_OK)
        rc = val_build(v);
    if (rc == CS_EXIT_OK)
        rc = val_check_memory(v);
    rc = cs_live_release(v->l.boot, "validate", rc);
    if (rc == CS_EXIT_OK)
        rc = cs_cli_scheds_verify(v->l.rank == 0 ? "validate" : NULL, &v->b, NULL,
                                  CS_CLI_VERIFY_CACHED);
    if (rc == CS_EXIT_OK && v->l.rank == 0)
        rc = verify(v);
    if ((rc = cs_live_agree(&v->l, rc)) != CS_EXIT_OK)
        return rc;
    char args[1024];
    snprintf(args, sizeof(args), "coll=%.64s algo=%.200s size=%.200s iters=%ld warmup=%ld "
             "transport=%.16s provider=%.64s wait=%.8s trace=%d tuning=%.100s", o->coll, o->algo,
             o->size, o->iters, o->warmup, o->live.transport, o->live.provider, o->live.wait,
             o->trace != NULL, o->tuning ? o->tuning : "");
    uint64_t digest = 0;
    for (int i = 0; i < v->nalgo; i++)
        digest = digest * CS_FNV64_PRIME ^ cs_sched_digest(v->sched[i]);
    int st = cs_boot_check_same(v->l.boot, digest, args, &v->l.err);
    size_t n = (size_t)v->nalgo * v->nsizes;
    v->meas = calloc(n, sizeof(meas_t));
    v->pred = calloc((size_t)o->nplats * n, sizeof(double));
    v->sim_tb = calloc((size_t)o->nplats * n, sizeof(tier_bytes_t));
    if (st == CS_OK && (!v->meas || !v->pred || !v->sim_tb))
        st = cs_err_set(&v->l.err, CS_ERR_NOMEM, "out of memory");
    /* act: live, then (rank 0) simulate */
    if (st == CS_OK)
        st = val_live(v);
    if (st != CS_OK)
        return cs_live_fail(&v->l, st);
    cs_tp_close(v->l.tp);
    v->l.tp = NULL;
    if (v->l.rank != 0)
        return CS_EXIT_OK;
    for (int i = 0; i < o->nplats && st == CS_OK; i++)
        st = val_simulate(v, i, v->pred + (size_t)i * n);
    if (st != CS_OK)
        return cs_live_fail(&v->l, st);
    /* report */
    return val_report(v);
}

int cs_cli_validate(int argc, char **argv)
{
    val_opts_t o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? CS_EXIT_OK : rc;
    val_t *v = cs_live_new("validate", sizeof(*v));
    if (!v)
        return CS_EXIT_RUNTIME;
    v->o = &o;
    cs_cli_scheds_init(&v->b);
    rc = run(v);
    val_trace_abort(v);
    cs_job_close(&v->l);
    cs_cli_scheds_free(&v->b);
    for (int i = 0; i < o.nplats; i++)
        cs_platform_close(o.plats[i].plat);
    free(v->meas);
    cs_timed_close(v->timed);
    free(v->pred);
    free(v->sim_tb);
    free(v);
    return rc;
}
