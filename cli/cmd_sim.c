/*
 * cmd_sim.c - `collstep sim`: simulate algorithms on a platform with
 * SimGrid and print nccl-tests-style results.
 *
 * One schedule per algorithm (or the --schedule file) serves every size of
 * the sweep; a set of files or a tuning table (--algo auto) serves each size
 * with its own.  All (schedule, size) pairs run in one simulation
 * (sim/cs_sim.h), one per rank map when a table maps ranks differently.
 * Exit codes: 0 done, 1 a schedule failed verification, 2 usage errors and
 * bad input (unknown preset, parameter or algorithm, schedule or tuning
 * table for another rank count, more ranks than devices, bad sizes), 3 the
 * simulation failed, 128 + N interrupted by signal N.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_nccl.h"
#include "cs_algo.h"
#include "cs_child.h"
#include "cs_log.h"
#include "cs_platform.h"
#include "cs_results.h"
#include "cs_sim.h"
#include "cs_text.h"
#include "cs_time.h"
#include "cs_verify.h"
#ifdef CS_HAVE_TRACES
#include "cs_trace_sim.h"
#endif

static void help(FILE *f)
{
    fprintf(f,
            "usage: collstep sim --platform NAME|FILE [--coll COLL] --algo ALGO[,ALGO...]\n"
            "                    --size SIZES [options]\n"
            "       collstep sim --platform NAME|FILE --schedule FILE --size SIZES [options]\n"
            "       collstep sim --platform NAME|FILE [--coll COLL] --algo auto --tuning FILE\n"
            "                    --size SIZES [options]\n"
            "\n"
            "Simulate collective algorithms on a modeled fabric (SimGrid) and print\n"
            "simulated time, algbw and busbw per size like nccl-tests.\n"
            "\n"
            "  --platform SPEC      preset ('summit', 'summit:nodes=16', see 'collstep platform\n"
            "                       list') or a SimGrid XML file\n"
            "  --coll COLL          allreduce (default), reduce-scatter, allgather, broadcast,\n"
            "                       reduce, alltoall\n"
            "  --algo A[,B...]      algorithms of the registry (see 'collstep algos')\n"
            "  --algo nccl          --model nccl: per size the algorithm, protocol and channels\n"
            "                       NCCL's tuner picks, as a collstep schedule\n"
            "  --algo auto          per size the algorithm, parameters and rank map of the\n"
            "  --tuning FILE        tuning table FILE (written by 'collstep plan -o FILE' for\n"
            "                       this platform and rank count); rows name the algorithm\n"
            "                       and their params column what the table chose\n"
            "  --schedule FILE      a schedule file (collstep's format or an MSCCL XML) instead\n"
            "                       of --algo; FILE,FILE... or a folder: per size the file\n"
            "                       whose minBytes..maxBytes serves it (MSCCL's rule)\n"
            "  --size SIZES         message sizes in bytes: 1M, 64K:1G, 1K,4K,1M (see below)\n"
            "  --ranks P            ranks (default: every device, or the schedule's)\n"
            "  --root R             root of broadcast / reduce (default 0)\n"
            "  --param KEY=VALUE    generator parameter for every algorithm that has KEY;\n"
            "  --param ALGO:KEY=VAL for ALGO only; repeatable, comma separated; hier without\n"
            "                       dims gets the platform's tiers\n"
            "%s"
            "  --model M            ideal (exact alpha-beta on split-duplex links, default),\n"
            "                       calibrated (per-tier latency/bandwidth factors) or nccl\n"
            "                       (the links plus what NCCL pays per step: its latencies,\n"
            "                       protocols and channel caps; docs/nccl-model.md)\n"
            CS_CLI_NCCL_HELP
            "  --ports N            sends in flight per rank (default 0 = unlimited; 1 = the\n"
            "                       single-port model of textbook formulas)\n"
            "  --engine E           dag (no SimGrid actors: 2-2.5x faster where SimGrid has the\n"
            "                       activity-set fix) or actors (one actor per rank): the same\n"
            "                       times; default: %s in this build ('collstep --version';\n"
            "                       CS_SIM_ENGINE too); --model nccl runs on dag only (its\n"
            "                       messages are eager, as NCCL's connections)\n"
            "  --map FILE           host of each rank, one name per line (default: devices in\n"
            "                       platform order); fewer hosts than devices needs --ranks\n"
            "  --no-verify          skip verifying the schedules before simulating (schedules\n"
            "                       that verified once are remembered: CS_VERIFY_CACHE=0)\n"
            "  --format F           table (default), csv, json or nccl-tests (the output of\n"
            "                       nccl-tests %s per algorithm: docs/nccl-tests.md)\n"
            "  --compare[=REF]      per size, the algorithms ranked by time with their speed-up\n"
            "                       over REF (default: the first algorithm given)\n"
            "  -o, --output FILE    write results to FILE (whole or not at all; an existing\n"
            "                       file is replaced only when collstep wrote it)\n"
            "  --force              replace an existing -o FILE that collstep did not write\n"
#ifdef CS_HAVE_TRACES
            "  --trace DIR          write per-step and per-link/per-tier utilization traces to\n"
            "                       DIR (whole or not at all; an existing DIR is replaced only\n"
            "                       when it is a collstep trace holding nothing else, even with\n"
            "                       --force; several algorithms or sizes:\n"
            "                       one DIR/ALGO-BYTES/ each and DIR/index.csv); see\n"
            "                       'collstep trace'\n"
            "  --trace-links N      per-link counter tracks in trace.json for the N busiest links\n"
            "  --trace-ranks N      step slices of N evenly spaced ranks only (default 64, 0 = all)\n"
            "  --trace-buckets N    time buckets of the utilization series (default 1024)\n"
            "  --trace-no-plot      do not run gnuplot (no utilization.png)\n"
#endif
            "\n%s\n"
            "Results carry their provenance: algorithm parameters, platform and model.\n"
            "Ctrl-C stops the simulation and removes partial outputs.\n"
            "%s"
            "\n"
            "example: collstep sim --platform summit --algo ring,hier --size 1M:1G --compare\n",
            cs_cli_dtype_help, cs_sim_engine_name(cs_sim_engine_default()),
            CS_NCCL_TESTS_VERSION, cs_cli_size_help, cs_cli_exit_help);
}

typedef struct progress {
    double t0; /* cs_now_s() at the start */
    int total, shown;
} progress_t;

static void on_end(void *ctx, int inst, const cs_sim_instance_t *in, double t_end)
{
    (void)t_end;
    progress_t *p = ctx;
    if (cs_now_s() - p->t0 < 1.0)
        return;
    p->shown = 1;
    fprintf(stderr, "\rcollstep sim: %d/%d done (%s, %llu B)   ", inst + 1, p->total,
            in->sched->algo[0] ? in->sched->algo : "schedule", (unsigned long long)in->bytes);
}

/* What the command line asks for. */
typedef struct args {
    const char *platform, *algos, *schedule, *tuning, *size, *model_name, *map, *trace;
    long ranks, root, ports, trace_links, trace_ranks, trace_buckets;
    int no_verify, trace_no_plot;
    cs_sim_engine_t engine;
    cs_coll_t coll;
    cs_dtype_t dt;
    cs_op_t op;
    cs_sim_model_t model;
    cs_cli_report_t rep;
    cs_cli_params_t params;
#ifdef CS_HAVE_MODEL
    cs_cli_nccl_t nccl;
#endif
} args_t;

/* What the command built from it. */
typedef struct sim {
    args_t a;
    uint64_t sizes[CS_CLI_MAX_SIZES];
    uint64_t asked[CS_CLI_MAX_SIZES]; /* the sizes before rounding (nccl-tests' sweep line) */
    int nsizes, nasked, ranks, nmap;
    char **map; /* --map */
    cs_platform_t *plat;
    cs_cli_scheds_t b;
} sim_t;

static int parse_opt(void *ctx, int c, const char *arg)
{
    args_t *a = ctx;
    switch (c) {
    case 'P': return cs_cli_once("sim", "--platform", &a->platform, arg);
    case 'c': return cs_cli_parse_coll("sim", arg, &a->coll);
    case 'a': a->algos = arg; return CS_EXIT_OK;
    case 'S': a->schedule = arg; return CS_EXIT_OK;
    case 'u': a->tuning = arg; return CS_EXIT_OK;
    case 's': a->size = arg; return CS_EXIT_OK;
    case 'd': return cs_cli_parse_dtype("sim", arg, &a->dt);
    case 'O': return cs_cli_parse_op("sim", arg, &a->op);
    case 'm':
        a->model_name = arg;
        if ((a->model = cs_sim_model_parse(arg)) == CS_SIM_MODEL_COUNT)
            return cs_cli_usage_error("sim", "--model: expected ideal, calibrated or nccl, "
                                             "found '%s'", arg);
        return CS_EXIT_OK;
    case 'M': a->map = arg; return CS_EXIT_OK;
    case 'f': return cs_cli_parse_format_nccl("sim", arg, &a->rep.fmt);
    case 'o': return cs_cli_once("sim", "-o", &a->rep.output, arg);
    case 'F': a->rep.force = 1; return CS_EXIT_OK;
    case 'C': a->rep.compare_on = 1, a->rep.compare = arg; return CS_EXIT_OK;
    case 'V': a->no_verify = 1; return CS_EXIT_OK;
    case 'T': a->trace = arg; return CS_EXIT_OK;
    case 'N': a->trace_no_plot = 1; return CS_EXIT_OK;
    case 'L': return cs_cli_parse_long("sim", "--trace-links", arg, 0, 1L << 24, &a->trace_links);
    case 'R': return cs_cli_parse_long("sim", "--trace-ranks", arg, 0, 1L << 24, &a->trace_ranks);
    case 'B': return cs_cli_parse_long("sim", "--trace-buckets", arg, 16, 1L << 24,
                                       &a->trace_buckets);
    case 'n': return cs_cli_parse_long("sim", "--ranks", arg, 1, 1L << 24, &a->ranks);
    case 'r': return cs_cli_parse_long("sim", "--root", arg, 0, 1L << 24, &a->root);
    case 'x': return cs_cli_parse_long("sim", "--ports", arg, 0, 1L << 24, &a->ports);
    case 'E':
        if ((a->engine = cs_sim_engine_parse(arg)) == CS_SIM_ENGINE_COUNT)
            return cs_cli_usage_error("sim", "--engine: expected dag or actors, found '%s'", arg);
        return CS_EXIT_OK;
    case 'p': return cs_cli_params_add(&a->params, "sim", arg);
#ifdef CS_HAVE_MODEL
    case 1001: return cs_cli_nccl_opt("sim", &a->nccl, CS_CLI_NCCL_VERSION, arg);
    case 1002: return cs_cli_nccl_opt("sim", &a->nccl, CS_CLI_NCCL_ALGO, arg);
    case 1003: return cs_cli_nccl_opt("sim", &a->nccl, CS_CLI_NCCL_PROTO, arg);
#endif
    default: return CS_EXIT_USAGE;
    }
}

/* parse: options, their values, the sizes. */
/* Whether the comma-separated list names `algo`. */
static int algo_listed(const char *list, const char *algo)
{
    size_t n = strlen(algo);
    for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, algo, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

static int parse(int argc, char **argv, sim_t *s)
{
    static const struct option opts[] = {
        {"platform", required_argument, 0, 'P'}, {"coll", required_argument, 0, 'c'},
        {"algo", required_argument, 0, 'a'},     {"schedule", required_argument, 0, 'S'},
        {"tuning", required_argument, 0, 'u'},   {"size", required_argument, 0, 's'},
        {"ranks", required_argument, 0, 'n'},    {"root", required_argument, 0, 'r'},
        {"param", required_argument, 0, 'p'},    {"dtype", required_argument, 0, 'd'},
        {"op", required_argument, 0, 'O'},       {"model", required_argument, 0, 'm'},
        {"map", required_argument, 0, 'M'},      {"ports", required_argument, 0, 'x'},
        {"no-verify", no_argument, 0, 'V'},      {"format", required_argument, 0, 'f'},
        {"output", required_argument, 0, 'o'},   {"force", no_argument, 0, 'F'},
        {"compare", optional_argument, 0, 'C'},  {"help", no_argument, 0, 'h'},
        {"engine", required_argument, 0, 'E'},
#ifdef CS_HAVE_TRACES
        {"trace", required_argument, 0, 'T'},    {"trace-links", required_argument, 0, 'L'},
        {"trace-ranks", required_argument, 0, 'R'}, {"trace-buckets", required_argument, 0, 'B'},
        {"trace-no-plot", no_argument, 0, 'N'},
#endif
#ifdef CS_HAVE_MODEL
        {"nccl-version", required_argument, 0, 1001}, {"nccl-algo", required_argument, 0, 1002},
        {"nccl-proto", required_argument, 0, 1003},
#endif
        {0, 0, 0, 0}};
    args_t *a = &s->a;
#ifdef CS_HAVE_MODEL
    cs_cli_nccl_init(&a->nccl);
#endif
    a->coll = CS_COLL_ALLREDUCE, a->dt = CS_DT_F32, a->op = CS_OP_SUM;
    a->model = CS_SIM_IDEAL, a->model_name = "ideal", a->rep.fmt = CS_FMT_TABLE;
    a->trace_ranks = 64, a->trace_buckets = 1024;
    cs_cli_params_init(&a->params);
    int rc = cs_cli_options("sim", argc, argv, ":ho:", opts, help, parse_opt, a);
    if (rc != CS_EXIT_OK)
        return rc;
    if (optind != argc)
        return cs_cli_usage_hint("sim", "unexpected argument '%s'", argv[optind]);
    if (!a->platform)
        return cs_cli_usage_hint("sim", "--platform is required");
    if ((rc = cs_cli_source_check("sim", a->algos, a->schedule, a->tuning, &a->params)))
        return rc;
    if (!a->size)
        return cs_cli_usage_error("sim", "--size is required (e.g. --size 1M or --size 1K:1G)");
#ifdef CS_HAVE_MODEL
    if (a->algos && strcmp(a->algos, "nccl") != 0 && algo_listed(a->algos, "nccl"))
        return cs_cli_usage_error("sim", "--algo nccl stands alone (per size, NCCL's choice): "
                                         "simulate the other algorithms in a run of their own, "
                                         "or compare them with 'collstep plan --model nccl'");
    if (a->algos && strcmp(a->algos, "nccl") == 0 && (a->params.global.n > 0 || a->params.nper > 0))
        return cs_cli_usage_error("sim", "--param does not apply to --algo nccl: NCCL's choice "
                                         "is simulated with NCCL's channels and chunks; name "
                                         "the algorithm (--algo ring, ...) to set its "
                                         "parameters");
    if (a->model != CS_SIM_NCCL &&
        (a->nccl.version || a->nccl.algo >= 0 || a->nccl.proto >= 0 ||
         (a->algos && strcmp(a->algos, "nccl") == 0)))
        return cs_cli_usage_error("sim", "--algo nccl, --nccl-version, --nccl-algo and "
                                         "--nccl-proto need --model nccl");
#else
    if (a->model == CS_SIM_NCCL)
        return cs_cli_usage_error("sim", "--model nccl: not built (no model/ library)");
#endif
    if ((rc = cs_cli_sizes("sim", a->size, cs_dtype_size(a->dt), s->sizes, &s->nsizes)))
        return rc;
    memcpy(s->asked, s->sizes, sizeof(s->sizes));
    s->nasked = s->nsizes;
    /* --compare=REF names one of --algo's, said before any simulation */
    if (a->rep.compare_on && a->rep.compare && *a->rep.compare && a->algos && !a->schedule &&
        strcmp(a->algos, "auto") != 0) {
        size_t rl = strlen(a->rep.compare);
        int found = 0;
        for (const char *p = a->algos; *p && !found; p += strcspn(p, ","), p += *p == ',') {
            size_t n = strcspn(p, ",");
            found = n == rl && strncmp(p, a->rep.compare, rl) == 0;
        }
        if (!found)
            return cs_cli_usage_error("sim", "--compare=%s: '%s' is not among --algo %s",
                                      a->rep.compare, a->rep.compare, a->algos);
    }
    if (a->rep.fmt != CS_FMT_NCCL_TESTS)
        return CS_EXIT_OK;
    if (a->rep.compare_on)
        return cs_cli_usage_error("sim", "--compare: the nccl-tests layout has no comparison "
                                         "view; give --format table, csv or json");
    return cs_cli_nccl_check_sizes("sim", a->size, s->asked, s->nasked);
}

/* Ranks from the schedule file, --ranks, the map or the platform's
 * devices; the checks that keep a map from silently running fewer ranks. */
static int choose_ranks(sim_t *s)
{
    const args_t *a = &s->a;
    const cs_platform_t *plat = s->plat;
    long devices = (long)plat->ndevices, avail = a->map ? s->nmap : devices;
    if (a->schedule) {
        s->ranks = s->b.nranks;
    } else if (a->ranks > 0) {
        s->ranks = (int)a->ranks;
    } else if (a->map) {
        if (s->nmap < devices)
            return cs_cli_usage_error("sim", "--map %s names %d host%s but %s has %ld %s: "
                                             "give --ranks %d to run %d ranks on the mapped hosts",
                                      a->map, s->nmap, s->nmap == 1 ? "" : "s", plat->name,
                                      devices, plat->rank_noun, s->nmap, s->nmap);
        s->ranks = s->nmap;
    } else {
        s->ranks = (int)devices;
    }
    if (s->ranks < 1)
        return cs_cli_usage_error("sim", "%s has no device to put a rank on (no host is marked "
                                         "as a device); give --map FILE (see 'collstep platform "
                                         "show %s')",
                                  plat->name, plat->spec[0] ? plat->spec : plat->name);
    if (s->ranks > avail)
        return cs_cli_usage_error("sim", "%d ranks but %s has only %ld %s%s%s%s", s->ranks,
                                  a->map ? a->map : plat->name, avail,
                                  a->map ? "hosts" : plat->rank_noun, a->map ? "" : " (",
                                  a->map ? "" : plat->rank_rule, a->map ? "" : ")");
    if (a->root >= s->ranks)
        return cs_cli_usage_error("sim", "--root %ld out of range [0, %d)", a->root, s->ranks);
    return CS_EXIT_OK;
}

/* The rank map of schedule i: the tuning table's, else --map's. */
static const char *const *map_of(const sim_t *s, int i, int *n)
{
    *n = s->b.map[i] ? s->b.nmap[i] : s->nmap;
    return (const char *const *)(s->b.map[i] ? s->b.map[i] : s->map);
}

/* Schedules mapping ranks differently run in simulations of their own, so a
 * table's maps and --map do not mix, and --trace takes one map. */
static int check_maps(const sim_t *s)
{
    int nm, n0;
    for (int i = 0; i < s->b.n; i++) {
        if (s->b.map[i] && s->a.map)
            return cs_cli_usage_error("sim", "--map %s: the tuning table %s maps the ranks "
                                             "itself", s->a.map, s->a.tuning);
        if (s->a.trace && map_of(s, i, &nm) != map_of(s, 0, &n0))
            return cs_cli_usage_error("sim", "--trace: the sizes asked for use different rank "
                                             "maps of %s; trace them one range at a time",
                                      s->a.tuning);
    }
    return CS_EXIT_OK;
}

/* build: the platform, the map, the schedules and the ranks they run on. */
static int build(sim_t *s)
{
    const args_t *a = &s->a;
    cs_err_t err;
    cs_err_clear(&err);
    if (cs_platform_open(a->platform, &s->plat, &err) != CS_OK)
        return cs_cli_usage_error("sim", "%s", err.msg);
    char note[2048];
    /* the nccl model loads the file as the ideal model does (cs_sim_run) */
    if (cs_platform_shared_note(s->plat, a->model != CS_SIM_CALIBRATED, note, sizeof(note)))
        fprintf(stderr, "collstep sim: note: %s (%s model): %s\n", a->platform,
                cs_sim_model_name(a->model), note);
    /* terms fitted to nccl-tests logs serve the nccl model only */
    if (s->plat->nccl_fit[0] && a->model != CS_SIM_NCCL)
        fprintf(stderr, "collstep sim: note: %s carries terms fitted to nccl-tests logs "
                        "(collstep_nccl_fit, line %d), which only --model nccl applies; the %s "
                        "model runs on the file's links as written\n",
                a->platform, s->plat->nccl_fit_line, cs_sim_model_name(a->model));
    int rc = CS_EXIT_OK;
    if (a->map && cs_platform_map_read(a->map, &s->map, &s->nmap, &err) != CS_OK)
        rc = cs_cli_usage_error("sim", "--map: %s", err.msg);
    cs_cli_want_t w = {"sim", 1, s->sizes, s->nsizes, cs_dtype_size(a->dt), a->platform,
                       s->plat->dims, s->plat->ndims, cs_sim_model_name(a->model)};
    if (rc == CS_EXIT_OK && a->schedule && (rc = cs_cli_scheds_load(&w, a->schedule, &s->b)) == 0)
        rc = cs_cli_scheds_fit("sim", &s->b, a->schedule, (int)a->ranks);
    if (rc == CS_EXIT_OK)
        rc = choose_ranks(s);
    /* the sizes as they move (a set picked its files by these already) */
    if (rc == CS_EXIT_OK)
        rc = cs_cli_sizes_round("sim", a->schedule ? s->b.coll : a->coll, s->ranks, a->dt, 1,
                                s->sizes, &s->nsizes, s->b.per_size ? s->b.of_size : NULL);
    w.nsizes = s->nsizes;
    cs_coll_desc_t d = {a->coll, s->ranks, (int32_t)a->root, 0};
#ifdef CS_HAVE_MODEL
    if (rc == CS_EXIT_OK && a->model == CS_SIM_NCCL) {
        cs_sim_opts_t ho;
        char **hosts = NULL;
        cs_sim_opts_init(&ho);
        ho.map = (const char *const *)s->map, ho.nmap = s->nmap;
        s->a.nccl.dtype = a->dt;
        s->a.nccl.op = a->op;
        if (cs_sim_hosts(s->plat, &ho, s->ranks, &hosts, &err) != CS_OK)
            rc = cs_cli_usage_error("sim", "%s", err.msg);
        else
            rc = cs_cli_nccl_setup("sim", &s->a.nccl, s->plat, hosts, s->ranks);
        cs_sim_hosts_free(hosts, s->ranks);
    }
    if (rc == CS_EXIT_OK && !a->schedule && a->algos && strcmp(a->algos, "nccl") == 0) {
        cs_cli_pick_t picks[CS_CLI_MAX_SIZES];
        rc = cs_cli_nccl_picks("sim", &s->a.nccl, a->coll, s->sizes, s->nsizes, picks);
        w.announce = 0; /* cs_cli_nccl_picks said what NCCL picks */
        if (rc == CS_EXIT_OK)
            rc = cs_cli_scheds_build_picks(&w, picks, "NCCL's tuner", &d, &s->b);
        return rc == CS_EXIT_OK ? check_maps(s) : rc;
    }
#endif
    if (rc == CS_EXIT_OK && !a->schedule)
        rc = cs_cli_scheds_build(&w, a->algos, a->tuning, &a->params, &d, &s->b);
    return rc == CS_EXIT_OK ? check_maps(s) : rc;
}

/* One simulation: the instances of one rank map (SimGrid runs once in a
 * process, so each further map is simulated in a child, cs_child_call). */
typedef struct sim_run {
    const cs_platform_t *plat;
    const cs_sim_opts_t *so;
    cs_sim_instance_t *inst;
    int n;
} sim_run_t;

static int sim_run(void *ctx, void *times, cs_err_t *err)
{
    sim_run_t *r = ctx;
    int st = cs_sim_run(r->plat, r->so, r->inst, r->n, err);
    for (int i = 0; i < r->n && st == CS_OK; i++)
        ((double *)times)[i] = r->inst[i].time;
    return st;
}

/* The simulations of every map: the instances of the schedules sharing a
 * map are simulated together; every map but the last in a child (SimGrid
 * cannot start again in a process where it ran), the last here. */
static int sim_all(const sim_t *s, cs_sim_opts_t *so, cs_sim_instance_t *inst, const int *of,
                   int n, cs_err_t *err)
{
    cs_sim_instance_t *grp = calloc((size_t)n, sizeof(*grp));
    double *times = calloc((size_t)n, sizeof(*times));
    int *idx = calloc((size_t)n, sizeof(*idx)), gid[CS_CLI_MAX_SCHEDS], ng = 0, nm;
    int st = grp && times && idx ? CS_OK : cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    for (int i = 0; i < s->b.n; i++) { /* group of each schedule: its map's first user */
        int j = 0;
        while (map_of(s, j, &nm) != map_of(s, i, &nm))
            j++;
        gid[i] = j == i ? ng++ : gid[j];
    }
    for (int g = 0; g < ng && st == CS_OK; g++) {
        int m = 0, first = -1;
        for (int j = 0; j < n; j++)
            if (gid[of[j]] == g) {
                first = first < 0 ? of[j] : first;
                idx[m] = j, grp[m++] = inst[j];
            }
        if (m == 0)
            continue;
        so->map = map_of(s, first, &so->nmap);
        sim_run_t r = {s->plat, so, grp, m};
        st = g == ng - 1 ? sim_run(&r, times, err)
                         : cs_child_call("a simulation child", sim_run, &r, times,
                                         sizeof(double) * (size_t)m, err);
        for (int j = 0; j < m && st == CS_OK; j++)
            inst[idx[j]].time = times[j];
    }
    free(grp), free(times), free(idx);
    return st;
}

/* --algo nccl: the title lines of one table of NCCL's choices, each choice
 * with the sizes it serves ("#   16 MiB to 1 GiB: Ring/Simple as ring
 * (nchunks=1)"; the schedule's parameters where every size has the same),
 * rows[0..m) in the order of the sizes. */
static void choices_title(const cs_result_t *rows, int m, char *buf, size_t len)
{
    size_t o = strlen(buf);
    for (int i = 0; i < m;) {
        int j = i, same = 1;
        while (j + 1 < m && !strcmp(rows[j + 1].model, rows[i].model) &&
               !strcmp(rows[j + 1].algo, rows[i].algo)) {
            j++;
            same &= !strcmp(rows[j].params, rows[i].params);
        }
        const cs_result_t *r = &rows[i];
        const char *pair = strchr(r->model, ':');
        char lo[32], hi[32];
        cs_cli_size_text(r->size_bytes, lo, sizeof(lo));
        cs_cli_size_text(rows[j].size_bytes, hi, sizeof(hi));
        int w = snprintf(buf + o, len - o, "\n  %s%s%s: %s as %s", lo,
                         j > i ? " to " : "", j > i ? hi : "", pair ? pair + 1 : r->model,
                         r->algo);
        if (w > 0)
            o += (size_t)w;
        if (o >= len)
            o = len - 1;
        if (r->params[0]) {
            if (same)
                w = snprintf(buf + o, len - o, " (%s)", r->params);
            else
                w = snprintf(buf + o, len - o, " (at %s: %s; varies with the size)",
                             lo, r->params);
            if (w > 0)
                o += (size_t)w;
            if (o >= len)
                o = len - 1;
        }
        i = j + 1;
    }
    if (o >= len && len > 0)
        buf[len - 1] = '\0';
}

/* Under --model nccl, the lines above a table that say what a run's
 * environment would: NCCL's version (the model's constants) and, where
 * --nccl-algo / --nccl-proto restrict NCCL's choice, NCCL_ALGO= /
 * NCCL_PROTO=, so that validate and calibrate read the table back as it was
 * simulated; "" otherwise.  1 when NCCL's choice is restricted. */
static int nccl_env(const sim_t *s, char *env, size_t len)
{
    env[0] = '\0';
#ifdef CS_HAVE_MODEL
    const args_t *a = &s->a;
    if (a->model != CS_SIM_NCCL || !a->nccl.k)
        return 0;
    size_t o = (size_t)snprintf(env, len, "\nNCCL version %s (the model's constants)",
                                a->nccl.k->version);
    if (o < len && (a->nccl.algo >= 0 || a->nccl.proto >= 0))
        snprintf(env + o, len - o, "\n%s%s%s%s (--nccl-algo / --nccl-proto)",
                 a->nccl.algo >= 0 ? "NCCL_ALGO=" : "",
                 a->nccl.algo >= 0 ? cs_nccl_algo_name(a->nccl.algo) : "",
                 a->nccl.proto >= 0 ? (a->nccl.algo >= 0 ? " NCCL_PROTO=" : "NCCL_PROTO=") : "",
                 a->nccl.proto >= 0 ? cs_nccl_proto_name(a->nccl.proto) : "");
    return a->nccl.algo >= 0 || a->nccl.proto >= 0;
#else
    (void)s, (void)len;
    return 0;
#endif
}

/* --format nccl-tests: one table per schedule source (algorithm and
 * parameters, or file) and rank map, its rows in the order of the sizes;
 * with --algo nccl one table per rank map, as nccl-tests prints one per
 * run, its title saying what NCCL's tuner chose at each size. */
static int report_nccl(const sim_t *s, const cs_result_t *rows, const int *of, int n)
{
    const args_t *a = &s->a;
    int whole = !a->schedule && a->algos && strcmp(a->algos, "nccl") == 0;
    cs_nccl_table_t *t = calloc((size_t)n, sizeof(*t));
    cs_result_t *sorted = calloc((size_t)n, sizeof(*sorted));
    char(*title)[4096] = calloc((size_t)n, sizeof(*title));
    char ***devs = calloc((size_t)n, sizeof(char **));
    int *grp = calloc((size_t)n, sizeof(int)), nt = 0, rc = CS_EXIT_OK, nm;
    if (!t || !sorted || !title || !devs || !grp) {
        fprintf(stderr, "collstep sim: out of memory\n");
        rc = CS_EXIT_RUNTIME;
    }
    for (int i = 0; i < n && rc == CS_EXIT_OK; i++) { /* group of each row: its first row's */
        int j = 0;
        while ((!whole &&
                (strcmp(rows[j].algo, rows[i].algo) || strcmp(rows[j].params, rows[i].params))) ||
               map_of(s, of[j], &nm) != map_of(s, of[i], &nm))
            j++;
        grp[i] = j == i ? nt++ : grp[j];
    }
    for (int g = 0, k = 0; g < nt && rc == CS_EXIT_OK; g++) { /* each group's rows */
        cs_result_t *gr = &sorted[k];
        t[g].rows = gr;
        for (int i = 0; i < n; i++)
            if (grp[i] == g)
                sorted[k++] = rows[i], t[g].n++;
        for (int i = 1; whole && i < t[g].n; i++) /* by size */
            for (int j = i; j > 0 && gr[j - 1].size_bytes > gr[j].size_bytes; j--) {
                cs_result_t x = gr[j];
                gr[j] = gr[j - 1];
                gr[j - 1] = x;
            }
    }
    for (int g = 0; g < nt && rc == CS_EXIT_OK; g++) {
        int first = 0;
        while (grp[first] != g)
            first++;
        const cs_result_t *r = &rows[first];
        const char *const *map = map_of(s, of[first], &nm);
        char env[160];
        int restricted = nccl_env(s, env, sizeof(env));
        if (whole) { /* what NCCL's tuner chose for each of the group's sizes */
            const char *colon = strchr(r->model, ':');
            snprintf(title[g], sizeof(title[g]), "%s, NCCL's choice per size%s, %d ranks, "
                     "platform %s, model %.*s:", cs_coll_name(r->coll),
                     restricted ? " within NCCL_ALGO / NCCL_PROTO" : "",
                     r->ranks, r->platform,
                     colon ? (int)(colon - r->model) : (int)strlen(r->model), r->model);
            choices_title(t[g].rows, t[g].n, title[g], sizeof(title[g]) - 256);
            size_t o = strlen(title[g]);
            snprintf(title[g] + o, sizeof(title[g]) - o,
                     "\nsimulated by collstep sim, in the layout of nccl-tests %s%s",
                     CS_NCCL_TESTS_VERSION, env);
        } else {
            snprintf(title[g], sizeof(title[g]), "%s %s%s%s%s, %d ranks, platform %s, model %s\n"
                     "simulated by collstep sim, in the layout of nccl-tests %s%s",
                     cs_coll_name(r->coll), r->algo, r->params[0] ? " (" : "", r->params,
                     r->params[0] ? ")" : "", r->ranks, r->platform, r->model,
                     CS_NCCL_TESTS_VERSION, env);
        }
        t[g].title = title[g];
        t[g].validation = !a->no_verify;
        t[g].root = (int)a->root;
        rc = cs_cli_nccl_table("sim", s->plat, map ? map : (const char *const *)s->plat->hosts,
                               r->ranks, s->asked, s->nasked, &t[g], &devs[g]);
    }
    if (rc == CS_EXIT_OK)
        rc = cs_cli_nccl_report("sim", &a->rep, t, nt);
    for (int g = 0; g < nt && devs; g++)
        cs_cli_nccl_table_free(&t[g], devs[g]);
    free(t), free(sorted), free(title), free(devs), free(grp);
    return rc;
}

/* act and report (the child of cs_cli_guard): simulate, write traces and
 * results. */
static int simulate(void *ctx)
{
    sim_t *s = ctx;
    const args_t *a = &s->a;
    int n = 0, rc = CS_EXIT_OK, cap = s->b.n * s->nsizes;
    cs_sim_instance_t *inst = calloc((size_t)cap, sizeof(*inst));
    cs_result_t *rows = calloc((size_t)cap, sizeof(*rows));
    int *of = calloc((size_t)cap, sizeof(*of)), *kof = calloc((size_t)cap + 1, sizeof(*kof));
    const char *platform = s->plat->spec[0] ? s->plat->spec : s->plat->name;
    cs_err_t err;
    cs_err_clear(&err);
#ifdef CS_HAVE_TRACES
    cs_trace_session_t *tsess = NULL;
    cs_trace_sim_t tsim;
#endif
    if (!inst || !rows || !of || !kof) {
        fprintf(stderr, "collstep sim: out of memory\n");
        rc = CS_EXIT_RUNTIME;
        goto done;
    }
    /* a set's or a table's schedules in the order of the sizes, else each
     * schedule over the sweep */
    for (int i = 0; i < (s->b.per_size ? 1 : s->b.n); i++)
        for (int k = 0; k < s->nsizes; k++, n++) {
            of[n] = s->b.per_size ? s->b.of_size[k] : i;
            inst[n] = (cs_sim_instance_t){s->b.sched[of[n]], s->sizes[k], a->dt, 0, a->op, NULL};
            kof[n] = k;
        }
    progress_t prog;
    prog.t0 = cs_now_s();
    prog.total = n;
    prog.shown = 0;
    cs_sim_observer_t obs = {&prog, NULL, NULL, NULL, on_end, NULL};
    cs_sim_opts_t so;
    cs_sim_opts_init(&so);
    so.model = a->model;
    so.engine = a->engine;
    so.ports = (int)a->ports;
#ifdef CS_HAVE_MODEL
    if (a->model == CS_SIM_NCCL) {
        if ((rc = cs_cli_nccl_costs("sim", &s->a.nccl, inst, n, kof)) != CS_EXIT_OK)
            goto done;
        so.tier_bw_scale = s->a.nccl.scale;
    }
#endif
    so.obs = isatty(2) ? &obs : NULL;
#ifdef CS_HAVE_TRACES
    if (a->trace) {
        cs_trace_opts_t to;
        cs_trace_opts_init(&to);
        to.link_tracks = (int)a->trace_links;
        to.ranks = (int)a->trace_ranks;
        to.buckets = (int)a->trace_buckets;
        to.plot = !a->trace_no_plot;
        to.force = a->rep.force;
        if (cs_trace_session_open(a->trace, &to, n, &tsess, &err) != CS_OK) {
            fprintf(stderr, "collstep sim: --trace %s: %s\n", a->trace, err.msg);
            rc = cs_cli_exit_code(err.code);
            goto done;
        }
        cs_trace_sim_init(&tsim, tsess, platform, a->model_name, so.obs);
        so.obs = &tsim.obs;
    }
#endif
    int st = sim_all(s, &so, inst, of, n, &err);
    if (prog.shown)
        fputc('\n', stderr);
    if (st != CS_OK) {
        fprintf(stderr, "collstep sim: %s\n", err.msg);
        rc = cs_cli_exit_code(st);
        goto done;
    }
#ifdef CS_HAVE_TRACES
    if (tsess && cs_trace_session_commit(tsess, &err) != CS_OK) {
        fprintf(stderr, "collstep sim: --trace %s: %s\n", a->trace, err.msg);
        rc = CS_EXIT_RUNTIME;
        goto done;
    }
#endif
    for (int i = 0; i < n; i++) {
        const cs_sched_t *sc = inst[i].sched;
        cs_result_fill(&rows[i], cs_cli_scheds_name(&s->b, of[i], a->schedule), sc->desc.coll,
                       sc->desc.nranks, inst[i].bytes, a->dt, a->op, inst[i].time * 1e6, platform);
        const char *model = a->model_name;
#ifdef CS_HAVE_MODEL
        char mbuf[64];
        const cs_cli_nccl_t *nc = &s->a.nccl;
        if (a->model == CS_SIM_NCCL && nc->npicks > 0 && nc->pick_us[kof[i]] > 0 &&
            inst[i].time * 1e6 > 2 * nc->pick_us[kof[i]])
            fprintf(stderr, "collstep sim: note: %llu B: the simulation of NCCL's choice takes "
                            "%.2f us, more than twice its tuner's %.2f us: %s\n",
                    (unsigned long long)inst[i].bytes, inst[i].time * 1e6, nc->pick_us[kof[i]],
                    s->plat->nccl_fit[0]
                        ? "the platform's fitted terms (its collstep_nccl_fit property) slow the "
                          "simulation, and NCCL's tuner, which knows NCCL's figures only, does "
                          "not see them; or the schedule standing for the choice does not follow "
                          "NCCL's paths here (docs/nccl-model.md, \"What it does not model\")"
                    : s->plat->is_file
                        ? "the file's links may carry less than the GPU's own NVLink, which "
                          "NCCL's tuner counts, or the schedule standing for the choice does "
                          "not follow NCCL's paths here (docs/nccl-model.md, \"What it does "
                          "not model\")"
                        : "the schedule standing for it does not follow NCCL's paths here "
                          "(docs/nccl-model.md, \"What it does not model\")");
        if (a->model == CS_SIM_NCCL) {
            snprintf(mbuf, sizeof(mbuf), "nccl-%s:%s/%s", s->a.nccl.k->version,
                     cs_nccl_algo_name(s->a.nccl.inst_algo[2 * i]),
                     cs_nccl_proto_name(s->a.nccl.inst_algo[2 * i + 1]));
            model = mbuf;
        }
#endif
        cs_result_set_provenance(&rows[i], s->b.params[of[i]], model, NULL);
    }
    rc = a->rep.fmt == CS_FMT_NCCL_TESTS ? report_nccl(s, rows, of, n)
                                         : cs_cli_report("sim", &a->rep, rows, n);
done:
#ifdef CS_HAVE_TRACES
    cs_trace_session_close(tsess);
#endif
    free(inst);
    free(rows);
    free(of);
    free(kof);
    return rc;
}

int cs_cli_sim(int argc, char **argv)
{
    sim_t *s = calloc(1, sizeof(*s));
    if (!s) {
        fprintf(stderr, "collstep sim: out of memory\n");
        return CS_EXIT_RUNTIME;
    }
    cs_cli_scheds_init(&s->b);
    const args_t *a = &s->a;
    int rc = parse(argc, argv, s);
    if (rc == CS_EXIT_OK)
        rc = build(s);
    if (rc == CS_EXIT_OK && !a->no_verify)
        rc = cs_cli_scheds_verify("sim", &s->b, a->schedule, CS_CLI_VERIFY_CACHED);
    /* act and report in a watched child (Ctrl-C removes partial outputs),
     * once the outputs are known to be writable */
    if (rc == CS_EXIT_OK)
        rc = cs_cli_check_outputs("sim", a->rep.output, a->trace, a->rep.force);
    if (rc == CS_EXIT_OK)
        rc = cs_cli_guard("sim", a->rep.output, a->trace, simulate, s);
    cs_cli_scheds_free(&s->b);
    cs_platform_map_free(s->map, s->nmap);
    cs_platform_close(s->plat);
#ifdef CS_HAVE_MODEL
    cs_cli_nccl_fini(&s->a.nccl);
#endif
    free(s);
    return rc == CS_CLI_DONE ? CS_EXIT_OK : rc;
}
