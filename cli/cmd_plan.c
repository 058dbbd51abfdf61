/*
 * cmd_plan.c - `collstep plan`: per message size, the algorithm, parameters
 * and rank order that run a collective fastest on a platform (planner/
 * cs_planner.h: topology analysis, candidates, cost model, simulations), and
 * the tuning table that `--algo auto --tuning FILE` reads.
 * Spread over processes: under a launcher (cmd_plan_dist.c), or --shard
 * I/N writing a part and --merge joining the parts.
 * Exit codes: 0 planned, 2 usage errors and bad input (one rank, no
 * algorithm, a budget too small, refused -o path, parts that do not
 * belong together), 3 failures while running (a rank lost).
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_nccl.h"
#include "cs_dtype.h"
#include "cs_env.h"
#include "cs_out.h"
#include "cs_planner.h"
#include "cs_results.h"
#include "cs_tuning.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: collstep plan --platform NAME|FILE [--coll COLL] --size SIZES [options]\n"
            "       collstep plan ... --shard I/N|slurm -o PART\n"
            "       collstep plan --merge PART... [-o FILE] [--format F] [--show N]\n"
            "\n"
            "Choose, per message size, the algorithm, its parameters and the rank order that\n"
            "run a collective fastest on a modeled fabric:\n"
            "  1. topology: the tiers of the fabric (which ranks share a socket, a node, a\n"
            "     switch), bandwidth per tier and per group, the factorizations of P that\n"
            "     follow the tiers (6x256, 3x2x256, 6x16x16 on Summit) and fast rings (a\n"
            "     Hamiltonian cycle over the fastest routes, as on a DGX-1's NVLink mesh);\n"
            "  2. candidates: every registry algorithm of COLL with its defaults, and with\n"
            "     the parameters it declares varied (nchunks, channels, radix, hier's dims\n"
            "     and per-tier algos), in each rank order; not the algorithms that reduce\n"
            "     in a switch (nvls, nvls_tree, sharp): the cost model has no switch step\n"
            "     (--model nccl shows NCCL's use of them beside the plan);\n"
            "  3. a cost model over the platform's routes (bytes per link per round, so that\n"
            "     flows sharing a link count), then per size the best --top candidates, the\n"
            "     best of each other algorithm within twice the best and the registry's\n"
            "     defaults simulated in SimGrid, --jobs at a time, within --budget.\n"
            "Per size: the ranking with time, busbw, speed-up over the flat ring and the\n"
            "bottleneck tier; the choice is the fastest simulated candidate.  -o writes the\n"
            "choices as a tuning table (size ranges split at the geometric middle between\n"
            "planned sizes) for 'collstep sim --algo auto --tuning FILE'.\n"
            "\n"
            "  --platform SPEC      preset ('summit', 'summit:nodes=16', see 'collstep platform\n"
            "                       list') or a SimGrid XML file\n"
            "  --coll COLL          allreduce (default), reduce-scatter, allgather, broadcast,\n"
            "                       reduce, alltoall\n"
            "  --size SIZES         message sizes in bytes: 1M, 1M:1G, 1K,4K,1M (see below)\n"
            "  --ranks P            ranks (default: every device of the platform)\n"
            "  --top K              candidates simulated per size, by the model (default 4)\n"
            "  --all                simulate every candidate at every size (small platforms)\n"
            "  --jobs N             simulations at a time (default: the cores it may run on,\n"
            "                       as nproc counts them: a Slurm task's --cpus-per-task)\n"
            "  --candidates N       simulate the first N simulations of the plan's fixed order\n"
            "                       (default: every one that --top and --all pick); the same\n"
            "                       inputs give the same plan whatever the machine's load\n"
            "  --budget SECONDS     a guard on the plan's wall time (default 60 per size): a\n"
            "                       simulation predicted to need more is ranked by the model;\n"
            "                       what the guard stops is reported as cut, and the plan may\n"
            "                       then differ from an uncut one\n"
            "  --model M            ideal (default), calibrated or nccl (see 'collstep sim\n"
            "                       --help'); nccl: every simulation pays NCCL's per-step\n"
            "                       costs, and per size NCCL's own choice is simulated beside\n"
            "                       collstep's best, with what makes the slower one slow\n"
            "%s"
            "  --show N             rows of the ranking per size (default 8, 0 = all)\n"
            "  --format F           table (default), csv, json or nccl-tests (the choice per\n"
            "                       size as nccl-tests %s prints a run: docs/nccl-tests.md)\n"
            "  -o, --output FILE    write the tuning table to FILE (whole or not at all; an\n"
            "                       existing file is replaced only when collstep wrote it)\n"
            "  --force              replace an existing -o FILE that collstep did not write\n"
            "  --shard I/N          simulate shard I of N (simulations i with i mod N = I) and\n"
            "                       write that part to -o PART; 'slurm': I is\n"
            "                       SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN, N is\n"
            "                       SLURM_ARRAY_TASK_COUNT (a job array of N tasks)\n"
            "  --merge PART...      join one part of every shard into the plan: the report, and\n"
            "                       the tuning table with -o, as one process plans them; parts\n"
            "                       of other inputs (platform, collective, sizes, options), a\n"
            "                       shard missing or given twice are refused\n"
            "\n"
            "Under a launcher (mpirun, srun --mpi=pmix, or RANK, WORLD_SIZE, MASTER_ADDR and\n"
            "MASTER_PORT) every rank analyses the platform and simulates its share\n"
            "(simulation i on rank i mod N); rank 0 gathers the results, prints the plan and\n"
            "writes -o, byte for byte as one process would.  A rank that dies ends the plan\n"
            "with an error naming it.  On a Slurm cluster: srun --mpi=pmix in a batch job,\n"
            "or a job array of --shard slurm tasks and a --merge job after it\n"
            "(sbatch --dependency=afterok:JOBID); docs/slurm.md has both scripts.\n"
            "\n"
            "Candidates are the registry's generators (verified for every P by collstep's\n"
            "tests); 'collstep sim --algo auto' verifies the schedule it runs.  Progress goes\n"
            "to stderr: a status line on a terminal, a line per simulation otherwise.\n"
            "\n%s\n%s"
            "\n"
            "example: collstep plan --platform summit:nodes=16 --size 1M:1G -o summit16.tuning\n",
            CS_CLI_NCCL_HELP, CS_NCCL_TESTS_VERSION, cs_cli_size_help, cs_cli_exit_help);
}

typedef struct args {
    const char *platform, *size, *output, *shard;
    long candidates;
    int merge, nparts; /* --merge: the parts, nparts of them */
    char **parts;
    int top_given, model_given, coll_given;
    cs_coll_t coll;
    cs_results_fmt_t fmt;
    cs_sim_model_t model;
    long ranks, top, jobs, show;
    double budget;
    int force, all, show_given;
    const char *nccl_version, *nccl_algo, *nccl_proto; /* --nccl-*, as given */
    cs_cli_nccl_t nccl; /* their checks */
} args_t;

/* One option's value (cs_cli_options calls it for each). */
static int parse_opt(void *ctx, int c, const char *arg)
{
    args_t *a = ctx;
    switch (c) {
    case 'P': return cs_cli_once("plan", "--platform", &a->platform, arg);
    case 's': a->size = arg; return CS_EXIT_OK;
    case 'o': return cs_cli_once("plan", "-o", &a->output, arg);
    case 'F': a->force = 1; return CS_EXIT_OK;
    case 'A': a->all = 1; return CS_EXIT_OK;
    case 1004: return cs_cli_parse_long("plan", "--candidates", arg, 1, 1000000, &a->candidates);
    case 1005: a->shard = arg; return CS_EXIT_OK;
    case 1006: a->merge = 1; return CS_EXIT_OK;
    case 'c': a->coll_given = 1; return cs_cli_parse_coll("plan", arg, &a->coll);
    case 'f': return cs_cli_parse_format_nccl("plan", arg, &a->fmt);
    case 'm':
        a->model_given = 1;
        if ((a->model = cs_sim_model_parse(arg)) == CS_SIM_MODEL_COUNT)
            return cs_cli_usage_error("plan", "--model: expected ideal, calibrated or nccl, "
                                              "found '%s'", arg);
        return CS_EXIT_OK;
    case 1001: a->nccl_version = arg; return cs_cli_nccl_opt("plan", &a->nccl, CS_CLI_NCCL_VERSION, arg);
    case 1002: a->nccl_algo = arg; return cs_cli_nccl_opt("plan", &a->nccl, CS_CLI_NCCL_ALGO, arg);
    case 1003: a->nccl_proto = arg; return cs_cli_nccl_opt("plan", &a->nccl, CS_CLI_NCCL_PROTO, arg);
    case 'b': {
        int rc = cs_cli_parse_seconds("plan", "--budget", arg, &a->budget);
        if (rc == CS_EXIT_OK && a->budget > 1e7) /* about four months: a typo, not a plan */
            rc = cs_cli_usage_error("plan", "--budget: expected at most 1e7 seconds, found '%s'",
                                    arg);
        return rc;
    }
    case 'n': return cs_cli_parse_long("plan", "--ranks", arg, 1, 1L << 24, &a->ranks);
    case 't': a->top_given = 1; return cs_cli_parse_long("plan", "--top", arg, 1, 100000, &a->top);
    case 'j': return cs_cli_parse_long("plan", "--jobs", arg, 1, 256, &a->jobs);
    case 'S':
        a->show_given = 1;
        return cs_cli_parse_long("plan", "--show", arg, 0, 100000, &a->show);
    default: return CS_EXIT_USAGE;
    }
}

static int parse(int argc, char **argv, args_t *a)
{
    static const struct option opts[] = {
        {"platform", required_argument, 0, 'P'}, {"coll", required_argument, 0, 'c'},
        {"size", required_argument, 0, 's'},     {"ranks", required_argument, 0, 'n'},
        {"top", required_argument, 0, 't'},      {"jobs", required_argument, 0, 'j'},
        {"budget", required_argument, 0, 'b'},   {"model", required_argument, 0, 'm'},
        {"show", required_argument, 0, 'S'},     {"format", required_argument, 0, 'f'},
        {"all", no_argument, 0, 'A'},            {"nccl-version", required_argument, 0, 1001},
        {"nccl-algo", required_argument, 0, 1002}, {"nccl-proto", required_argument, 0, 1003},
        {"candidates", required_argument, 0, 1004}, {"shard", required_argument, 0, 1005},
        {"merge", no_argument, 0, 1006}, CS_CLI_OPTS_OUTPUT};
    int rc = cs_cli_options("plan", argc, argv, ":ho:", opts, help, parse_opt, a);
    if (rc != CS_EXIT_OK)
        return rc;
    /* the parts of --merge: the operands (getopt moved them after the options) */
    if (a->merge) {
        a->parts = argv + optind;
        a->nparts = argc - optind;
        optind = argc;
    }
    if (optind != argc)
        return cs_cli_usage_error("plan", "unexpected argument '%s' (see --help)", argv[optind]);
    if (a->merge) {
        if (a->nparts == 0)
            return cs_cli_usage_error("plan", "--merge: give the parts (files written by "
                                              "--shard I/N -o PART)");
        if (a->platform || a->size || a->ranks || a->shard || a->candidates || a->all ||
            a->budget > 0 || a->jobs || a->top_given || a->model_given || a->coll_given ||
            a->nccl_version || a->nccl_algo || a->nccl_proto)
            return cs_cli_usage_error("plan", "--merge: the parts hold the platform, "
                                              "collective, sizes and options; give only "
                                              "-o, --force, --format and --show");
        return a->fmt == CS_FMT_NCCL_TESTS && a->show_given
                   ? cs_cli_usage_error("plan", "--show: the nccl-tests layout prints the "
                                                "choice per size only")
                   : CS_EXIT_OK;
    }
    if (a->shard && (!a->output || strcmp(a->output, "-") == 0))
        return cs_cli_usage_error("plan", "--shard: give -o PART, the file its part goes to "
                                          "(joined by --merge)");
    if (!a->platform)
        return cs_cli_usage_error("plan", "--platform is required (see --help)");
    if (!a->size)
        return cs_cli_usage_error("plan", "--size is required (e.g. --size 1M:1G)");
    if (a->model != CS_SIM_NCCL && (a->nccl_version || a->nccl_algo || a->nccl_proto))
        return cs_cli_usage_error("plan", "--nccl-version, --nccl-algo and --nccl-proto need "
                                          "--model nccl");
    if (a->fmt == CS_FMT_NCCL_TESTS && a->show_given)
        return cs_cli_usage_error("plan", "--show: the nccl-tests layout prints the choice per "
                                          "size only; give --format table or json");
    return CS_EXIT_OK;
}

static const cs_out_kind_t tuning_kind = {"tuning table", cs_tuning_recognize, NULL, NULL, NULL};

static const cs_out_kind_t part_kind = {"part of a plan", cs_planner_part_recognize, NULL, NULL, NULL};

/* --shard: the part to -o. */
static int write_part(const args_t *a, const cs_planner_t *p)
{
    cs_err_t err;
    cs_err_clear(&err);
    cs_out_t *o = NULL;
    int st = cs_out_begin_file(a->output, a->force ? CS_OUT_FORCE : 0, &part_kind, &o, &err);
    if (st == CS_OK) {
        st = cs_planner_part_write(p, 1, cs_out_stream(o), &err);
        if (st == CS_OK)
            st = cs_out_commit(o, &err);
        else
            cs_out_abort(o);
    }
    if (st != CS_OK) {
        fprintf(stderr, "collstep plan: -o %s: %s\n", a->output, err.msg);
        return cs_cli_exit_code(st);
    }
    fprintf(stderr, "collstep plan: shard %d/%d: %d of the %d simulations are its own; part "
                    "written to %s\n", p->shard, p->nshards,
            (p->njobs - p->shard + p->nshards - 1) / p->nshards, p->njobs, a->output);
    return CS_EXIT_OK;
}

/* --merge: read the parts, join them, report. */
static int merge(const args_t *a)
{
    cs_planner_t **parts = calloc((size_t)a->nparts, sizeof(*parts));
    if (!parts) {
        fprintf(stderr, "collstep plan: out of memory\n");
        return CS_EXIT_RUNTIME;
    }
    cs_err_t err;
    cs_err_clear(&err);
    int st = CS_OK;
    for (int i = 0; i < a->nparts && st == CS_OK; i++) {
        FILE *f = fopen(a->parts[i], "rb");
        if (!f) {
            st = cs_err_set(&err, CS_ERR_INVAL, "%s: cannot open it: %s", a->parts[i],
                            strerror(errno));
            break;
        }
        st = cs_planner_part_read(f, a->parts[i], &parts[i], &err);
        fclose(f);
    }
    cs_planner_t *p = NULL;
    if (st == CS_OK)
        st = cs_planner_merge(parts, (const char *const *)a->parts, a->nparts, &p, &err);
    for (int i = 0; i < a->nparts; i++)
        cs_planner_free(parts[i]);
    free(parts);
    if (st != CS_OK) {
        fprintf(stderr, "collstep plan: --merge: %s\n", err.msg);
        return st == CS_ERR_NOMEM || st == CS_ERR_IO ? CS_EXIT_RUNTIME : CS_EXIT_USAGE;
    }
    cs_cli_plan_out_t out = {a->fmt, a->show, a->output, a->force, p->sizes, p->nsizes};
    int rc = cs_cli_plan_report(&out, p);
    cs_planner_free(p);
    return rc;
}

/* Plan, print, write the table: the work of cs_cli_guard's child, or of
 * every rank under a launcher. */
typedef struct plan_job {
    const args_t *a;
    cs_planner_opts_t *o;
    const uint64_t *asked; /* the sizes as asked (nccl-tests' sweep line) */
    int nasked;
    int argc;
    char **argv;
} plan_job_t;

/* The sizes the plan ran, said where they differ from those asked (as sim
 * says them: whole float elements, per rank for the collectives that move
 * blocks, rounded down as nccl-tests does) */
static void say_rounded(const plan_job_t *j, const cs_planner_t *p)
{
    uint64_t v[CS_PLANNER_MAX_SIZES];
    int n = j->o->nsizes;
    memcpy(v, j->o->sizes, sizeof(uint64_t) * (size_t)n);
    (void)cs_cli_sizes_round("plan", j->o->coll, p->ranks, CS_DT_F32, 1, v, &n, NULL);
}

static int plan_work(void *ctx)
{
    const plan_job_t *j = ctx;
    const args_t *a = j->a;
    cs_planner_t *p = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    int st = cs_planner_run(j->o, &p, &err);
    if (st != CS_OK) {
        fprintf(stderr, "collstep plan: %s\n", err.msg);
        return cs_cli_exit_code(st);
    }
    say_rounded(j, p);
    fprintf(stderr, "collstep plan: planned in %.1f s, %d simulation%s at a time\n", p->seconds,
            j->o->jobs, j->o->jobs == 1 ? "" : "s");
    cs_cli_plan_out_t out = {a->fmt, a->show, a->output, a->force, j->asked, j->nasked};
    int rc = a->shard ? write_part(a, p) : cs_cli_plan_report(&out, p);
    cs_planner_free(p);
    return rc;
}

/* Under a launcher: every rank plans its share, rank 0 reports. */
static int plan_ranks(const plan_job_t *j, cs_cli_plan_dist_t *d)
{
    cs_planner_t *p = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    int st = cs_planner_run(j->o, &p, &err);
    if (st != CS_OK)
        fprintf(stderr, "collstep plan: rank %d: %s\n", j->o->shard, err.msg);
    cs_planner_t *whole = NULL;
    int rc = cs_cli_plan_dist_gather(d, st, p, &whole);
    cs_planner_free(p);
    if (rc == CS_EXIT_OK && whole) {
        say_rounded(j, whole);
        fprintf(stderr, "collstep plan: planned on %d ranks in %.1f s (rank 0: %d simulation%s "
                        "at a time)\n", j->o->nshards, whole->seconds, j->o->jobs,
                j->o->jobs == 1 ? "" : "s");
        const args_t *a = j->a;
        cs_cli_plan_out_t out = {a->fmt, a->show, a->output, a->force, j->asked, j->nasked};
        rc = cs_cli_plan_report(&out, whole);
    }
    cs_planner_free(whole);
    return rc == CS_EXIT_OK || st == CS_OK ? rc : cs_cli_exit_code(st);
}

/* The cores this process may run on (its affinity: what a launcher or
 * Slurm's --cpus-per-task gave it), else the cores online. */
static long usable_cores(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    return sysconf(_SC_NPROCESSORS_ONLN);
}

/* --shard I/N or slurm: *shard and *nshards. */
static int parse_shard(const char *spec, int *shard, int *nshards)
{
    long i = -1, n = 0;
    char *end = NULL;
    if (strcmp(spec, "slurm") == 0) {
        const char *id = cs_env_get("SLURM_ARRAY_TASK_ID");
        const char *mn = cs_env_get("SLURM_ARRAY_TASK_MIN");
        const char *mx = cs_env_get("SLURM_ARRAY_TASK_MAX");
        const char *cnt = cs_env_get("SLURM_ARRAY_TASK_COUNT");
        if (!id || !cnt)
            return cs_cli_usage_error("plan", "--shard slurm: SLURM_ARRAY_TASK_ID and "
                                              "SLURM_ARRAY_TASK_COUNT are not set: run it as "
                                              "a task of a job array (sbatch --array=0-15 for "
                                              "16 shards), or give --shard I/N");
        long lo = mn ? strtol(mn, NULL, 10) : 0, hi = mx ? strtol(mx, NULL, 10) : -1;
        i = strtol(id, &end, 10) - lo;
        n = strtol(cnt, NULL, 10);
        /* ids lo..hi, every one a task: sbatch --array=0-15 or 0-15%4, not
         * 0-15:2 or 1,4,9 */
        if (*end || n < 1 || i < 0 || i >= n || (mx && hi - lo + 1 != n))
            return cs_cli_usage_error("plan", "--shard slurm: task %s of an array of %s "
                                              "task(s) from %s to %s: the tasks' ids must be "
                                              "consecutive (sbatch --array=0-%ld); give "
                                              "--shard I/N otherwise",
                                      id, cnt, mn ? mn : "0", mx ? mx : "?",
                                      n > 1 ? n - 1 : 0);
    } else {
        i = strtol(spec, &end, 10);
        if (end == spec || *end != '/' || (n = strtol(end + 1, &end, 10)) < 1 || *end ||
            n > 1000000)
            return cs_cli_usage_error("plan", "--shard: expected I/N, shard I of N (0 <= I < "
                                              "N: 3/8), or 'slurm', found '%s'", spec);
        if (i < 0 || i >= n)
            return cs_cli_usage_error("plan", "--shard: expected I/N with 0 <= I < N, found "
                                              "'%s' (the %ld shards are 0/%ld to %ld/%ld)",
                                      spec, n, n, n - 1, n);
    }
    *shard = (int)i, *nshards = (int)n;
    return CS_EXIT_OK;
}

int cs_cli_plan(int argc, char **argv)
{
    args_t a;
    memset(&a, 0, sizeof(a));
    a.coll = CS_COLL_ALLREDUCE;
    a.fmt = CS_FMT_TABLE;
    a.model = CS_SIM_IDEAL;
    a.top = 4;
    a.show = 8;
    cs_cli_nccl_init(&a.nccl);
    int rc = parse(argc, argv, &a);
    if (rc != CS_EXIT_OK)
        return rc == CS_CLI_DONE ? CS_EXIT_OK : rc;
    if (a.output && !a.shard) {
        cs_err_t err;
        cs_err_clear(&err);
        int st = cs_out_check(a.output, CS_OUT_STDOUT | (a.force ? CS_OUT_FORCE : 0),
                              &tuning_kind, 0, &err);
        if (st != CS_OK)
            return cs_cli_usage_error("plan", "-o %s: %s", a.output, err.msg);
    }
    if (a.merge)
        return merge(&a);
    cs_coll_t coll = a.coll;
    cs_sim_model_t model = a.model;
    uint64_t sizes[CS_CLI_MAX_SIZES];
    int ns = 0;
    if ((rc = cs_cli_sizes("plan", a.size, cs_dtype_size(CS_DT_F32), sizes, &ns)) != CS_EXIT_OK)
        return rc;
    if (a.fmt == CS_FMT_NCCL_TESTS &&
        (rc = cs_cli_nccl_check_sizes("plan", a.size, sizes, ns)) != CS_EXIT_OK)
        return rc;
    long cores = usable_cores();
    cs_planner_opts_t o;
    memset(&o, 0, sizeof(o));
    o.platform = a.platform;
    o.coll = coll;
    o.ranks = (int)a.ranks;
    o.sizes = sizes;
    o.nsizes = ns;
    o.top = (int)a.top;
    o.jobs = a.jobs ? (int)a.jobs : cores > 0 ? (int)cores : 1;
    o.budget = a.budget > 0 ? a.budget : 60.0 * ns;
    o.model = model;
    o.progress = isatty(2) ? 1 : 2;
    o.exhaustive = a.all;
    o.candidates = (int)a.candidates;
    o.nccl_version = a.nccl_version;
    o.nccl_algo = a.nccl_algo;
    o.nccl_proto = a.nccl_proto;
    if (a.shard) {
        if ((rc = parse_shard(a.shard, &o.shard, &o.nshards)) != CS_EXIT_OK)
            return rc;
        cs_err_t err;
        cs_err_clear(&err);
        int st = cs_out_check(a.output, a.force ? CS_OUT_FORCE : 0, &part_kind, 0, &err);
        if (st != CS_OK)
            return cs_cli_usage_error("plan", "-o %s: %s", a.output, err.msg);
    }
    if (model == CS_SIM_NCCL && a.nccl_version) {
        int exact = 0;
        const cs_nccl_consts_t *k = cs_nccl_consts_for(a.nccl_version, 0, &exact);
        if (k && !exact)
            fprintf(stderr, "collstep plan: note: NCCL %s is not in the model's table; using "
                            "%s %s (the nearest it has)\n", a.nccl_version, k->lib, k->version);
    }
    plan_job_t j = {&a, &o, sizes, ns, argc, argv};
    /* under a launcher: the ranks share the simulations */
    cs_cli_plan_dist_t *d = NULL;
    if ((rc = cs_cli_plan_dist_open(o.budget, argc, argv, &d, &o.shard, &o.nshards)) !=
        CS_EXIT_OK)
        return rc;
    if (d && a.shard) {
        cs_cli_plan_dist_close(d);
        return cs_cli_usage_error("plan", "--shard: not under a launcher (its ranks share the "
                                          "simulations already)");
    }
    if (d) {
        if (o.shard != 0) /* rank 0 tells the progress */
            o.progress = 0;
        rc = plan_ranks(&j, d);
        cs_cli_plan_dist_close(d);
        return rc;
    }
    return cs_cli_guard("plan", a.output, NULL, plan_work, &j);
}
