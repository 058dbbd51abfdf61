/*
 * cmd_sim.c - `collstep sim`: simulate algorithms on a platform with
 * SimGrid and print nccl-tests-style results.
 *
 * One schedule per algorithm (or the --schedule file) serves every size of
 * the sweep; all (schedule, size) pairs run in one simulation (sim/cs_sim.h).
 * Exit codes: 0 done, 1 a schedule failed verification or the simulation
 * failed, 2 usage errors and bad input (unknown preset, parameter or
 * algorithm, schedule for another rank count, more ranks than devices, bad
 * sizes).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cs_algo.h"
#include "cs_log.h"
#include "cs_platform.h"
#include "cs_results.h"
#include "cs_sim.h"
#include "cs_text.h"
#include "cs_verify.h"
#ifdef CS_HAVE_TRACES
#include "cs_trace_sim.h"
#endif

#define MAX_ALGOS 32
#define MAX_SIZES 64

static void help(FILE *f)
{
    fprintf(f,
            "usage: collstep sim --platform NAME|FILE [--coll COLL] --algo ALGO[,ALGO...]\n"
            "                    --size SIZES [options]\n"
            "       collstep sim --platform NAME|FILE --schedule FILE --size SIZES [options]\n"
            "\n"
            "Simulate collective algorithms on a modeled fabric (SimGrid) and print\n"
            "simulated time, algbw and busbw per size like nccl-tests.\n"
            "\n"
            "  --platform SPEC      preset ('summit', 'summit:nodes=16', see 'collstep platform\n"
            "                       list') or a SimGrid XML file\n"
            "  --coll COLL          allreduce (default), reduce-scatter, allgather, broadcast,\n"
            "                       reduce, alltoall\n"
            "  --algo A[,B...]      algorithms of the registry (see 'collstep algos')\n"
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
            "  --model M            ideal (exact alpha-beta on split-duplex links, default) or\n"
            "                       calibrated (per-tier latency/bandwidth factors)\n"
            "  --ports N            sends in flight per rank (default 0 = unlimited; 1 = the\n"
            "                       single-port model of textbook formulas)\n"
            "  --map FILE           host of each rank, one name per line (default: devices in\n"
            "                       platform order); fewer hosts than devices needs --ranks\n"
            "  --no-verify          skip verifying the schedules before simulating (schedules\n"
            "                       that verified once are remembered: CS_VERIFY_CACHE=0)\n"
            "  --format F           table (default), csv or json\n"
            "  --compare[=REF]      per size, the algorithms ranked by time with their speed-up\n"
            "                       over REF (default: the first algorithm given)\n"
            "  -o, --output FILE    write results to FILE (whole or not at all; an existing\n"
            "                       file is replaced only when collstep wrote it)\n"
            "  --force              replace an existing -o FILE that collstep did not write\n"
#ifdef CS_HAVE_TRACES
            "  --trace DIR          write per-step and per-link/per-tier utilization traces to\n"
            "                       DIR (whole or not at all; an existing DIR is replaced only\n"
            "                       when it is a collstep trace; several algorithms or sizes:\n"
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
            cs_cli_dtype_help, cs_cli_size_help, cs_cli_exit_help);
}

typedef struct progress {
    struct timespec t0;
    int total, shown;
} progress_t;

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static void on_end(void *ctx, int inst, const cs_sim_instance_t *in, double t_end)
{
    (void)t_end;
    progress_t *p = ctx;
    if (since(&p->t0) < 1.0)
        return;
    p->shown = 1;
    fprintf(stderr, "\rcollstep sim: %d/%d done (%s, %llu B)   ", inst + 1, p->total,
            in->sched->algo[0] ? in->sched->algo : "schedule", (unsigned long long)in->bytes);
}

/* Read one host name per line (blank lines and '#' comments skipped). */
static int read_map(const char *path, char ***out, int *n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return cs_cli_usage_error("sim", "--map: cannot open %s", path);
    char line[512];
    char **v = NULL;
    int cnt = 0, cap = 0;
    while (fgets(line, sizeof(line), f)) {
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        size_t l = strcspn(s, " \t\r\n#");
        if (l == 0)
            continue;
        s[l] = 0;
        if (cnt == cap) {
            cap = cap ? cap * 2 : 64;
            char **nv = realloc(v, sizeof(char *) * (size_t)cap);
            if (!nv)
                break;
            v = nv;
        }
        v[cnt] = strdup(s);
        if (!v[cnt])
            break;
        cnt++;
    }
    fclose(f);
    *out = v;
    *n = cnt;
    return CS_EXIT_OK;
}

typedef struct args {
    const char *platform, *coll, *algos, *schedule, *size, *dtype, *op, *model, *map, *format,
        *output, *trace, *compare;
    long ranks, root, ports, trace_links, trace_ranks, trace_buckets;
    int no_verify, trace_no_plot, force, compare_on;
    cs_cli_params_t params;
} args_t;

static int parse(int argc, char **argv, args_t *a)
{
    static const struct option opts[] = {
        {"platform", required_argument, 0, 'P'}, {"coll", required_argument, 0, 'c'},
        {"algo", required_argument, 0, 'a'},     {"schedule", required_argument, 0, 'S'},
        {"size", required_argument, 0, 's'},     {"ranks", required_argument, 0, 'n'},
        {"root", required_argument, 0, 'r'},     {"param", required_argument, 0, 'p'},
        {"dtype", required_argument, 0, 'd'},    {"op", required_argument, 0, 'O'},
        {"model", required_argument, 0, 'm'},    {"map", required_argument, 0, 'M'},
        {"ports", required_argument, 0, 'x'},    {"no-verify", no_argument, 0, 'V'},
        {"format", required_argument, 0, 'f'},   {"output", required_argument, 0, 'o'},
        {"force", no_argument, 0, 'F'},          {"compare", optional_argument, 0, 'C'},
        {"help", no_argument, 0, 'h'},
#ifdef CS_HAVE_TRACES
        {"trace", required_argument, 0, 'T'},    {"trace-links", required_argument, 0, 'L'},
        {"trace-ranks", required_argument, 0, 'R'}, {"trace-buckets", required_argument, 0, 'B'},
        {"trace-no-plot", no_argument, 0, 'N'},
#endif
        {0, 0, 0, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'P': a->platform = optarg; break;
        case 'c': a->coll = optarg; break;
        case 'a': a->algos = optarg; break;
        case 'S': a->schedule = optarg; break;
        case 's': a->size = optarg; break;
        case 'd': a->dtype = optarg; break;
        case 'O': a->op = optarg; break;
        case 'm': a->model = optarg; break;
        case 'M': a->map = optarg; break;
        case 'f': a->format = optarg; break;
        case 'o': a->output = optarg; break;
        case 'F': a->force = 1; break;
        case 'C': a->compare_on = 1, a->compare = optarg; break;
        case 'V': a->no_verify = 1; break;
        case 'T': a->trace = optarg; break;
        case 'N': a->trace_no_plot = 1; break;
        case 'L':
        case 'R':
        case 'B': {
            long v = strtol(optarg, &end, 10);
            if (*end != '\0' || v < (c == 'B' ? 16 : 0) || v > (1L << 24))
                return cs_cli_usage_error("sim", "--trace-%s: expected %s integer, found '%s'",
                                          c == 'L' ? "links" : c == 'R' ? "ranks" : "buckets",
                                          c == 'B' ? "an (>= 16)" : "a non-negative", optarg);
            *(c == 'L' ? &a->trace_links : c == 'R' ? &a->trace_ranks : &a->trace_buckets) = v;
            break;
        }
        case 'n':
        case 'r':
        case 'x': {
            long v = strtol(optarg, &end, 10);
            if (*end != '\0' || v < (c == 'n') || v > (1L << 24))
                return cs_cli_usage_error("sim", "--%s: expected a%s integer, found '%s'",
                                          c == 'n' ? "ranks" : c == 'r' ? "root" : "ports",
                                          c == 'n' ? " positive" : " non-negative", optarg);
            *(c == 'n' ? &a->ranks : c == 'r' ? &a->root : &a->ports) = v;
            break;
        }
        case 'p':
            if (cs_cli_params_add(&a->params, "sim", optarg) != CS_EXIT_OK)
                return CS_EXIT_USAGE;
            break;
        case 'h':
            help(stdout);
            return -1;
        case ':':
            return cs_cli_usage_error("sim", "option %s needs a value (see --help)",
                                      argv[optind - 1]);
        default:
            return cs_cli_usage_error("sim", "unknown option '%s' (see --help)", argv[optind - 1]);
        }
    }
    if (optind != argc)
        return cs_cli_usage_error("sim", "unexpected argument '%s' (see --help)", argv[optind]);
    if (!a->platform)
        return cs_cli_usage_error("sim", "--platform is required (see --help)");
    if (!a->algos == !a->schedule)
        return cs_cli_usage_error("sim", "give exactly one of --algo and --schedule");
    if (!a->size)
        return cs_cli_usage_error("sim", "--size is required (e.g. --size 1M or --size 1K:1G)");
    return CS_EXIT_OK;
}

/* What the command built: a schedule per algorithm (all sizes each), or,
 * for a set of schedule files, the schedule serving each size (per_size;
 * owned by the set), and per schedule the parameters its rows carry. */
#define BUILT_MAX (CS_CLI_MAX_SIZES > CS_CLI_MAX_ALGOS ? CS_CLI_MAX_SIZES : CS_CLI_MAX_ALGOS)
typedef struct built {
    cs_sched_t *sched[BUILT_MAX];
    char params[BUILT_MAX][96];
    int n, per_size;
    struct cs_schedset *set;
} built_t;

static int build_all(const args_t *a, const cs_platform_t *plat, cs_coll_t coll, int ranks,
                     built_t *b)
{
    char buf[512];
    const char *names[CS_CLI_MAX_ALGOS];
    const cs_algo_t *algos[CS_CLI_MAX_ALGOS];
    int n = 0;
    int rc = cs_cli_algo_list("sim", a->algos, buf, sizeof(buf), names, &n);
    if (rc != CS_EXIT_OK)
        return rc;
    for (int i = 0; i < n; i++)
        if (!(algos[i] = cs_algo_find(coll, names[i])))
            return cs_cli_usage_error("sim", "no algorithm '%s' for %s (see 'collstep algos')",
                                      names[i], cs_coll_name(coll));
    if ((rc = cs_cli_params_check(&a->params, "sim", algos, n)) != CS_EXIT_OK)
        return rc;
    cs_coll_desc_t d = {coll, ranks, (int32_t)a->root, 0};
    for (int i = 0; i < n; i++) {
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        cs_params_t extra;
        cs_cli_tier_defaults(names[i], plat->dims, plat->ndims, ranks, &extra);
        rc = cs_cli_build("sim", names[i], &d, &a->params, &extra, &b->sched[b->n], b->params[b->n],
                          sizeof(b->params[0]));
        if (rc != CS_EXIT_OK)
            return rc;
        b->n++;
        CS_INFO("sim", "generated %s %s on %d ranks in %.2f s", cs_coll_name(coll), names[i], ranks,
                since(&t0));
    }
    return CS_EXIT_OK;
}

/* The schedule file: its ranks and collective win; --ranks must agree. */
static int load_schedule(const args_t *a, built_t *b, int *ranks, cs_coll_t *coll)
{
    cs_err_t err;
    cs_err_clear(&err);
    b->sched[0] = cs_cli_load_sched(a->schedule, &err);
    if (!b->sched[0])
        return cs_cli_usage_error("sim", "%s", err.msg);
    b->n = 1;
    snprintf(b->params[0], sizeof(b->params[0]), "%.*s", (int)sizeof(b->params[0]) - 1,
             b->sched[0]->params);
    *ranks = b->sched[0]->desc.nranks;
    *coll = b->sched[0]->desc.coll;
    if (a->ranks > 0 && a->ranks != *ranks)
        return cs_cli_usage_error("sim", "%s is a schedule for %d ranks, not %ld", a->schedule,
                                  *ranks, a->ranks);
    return CS_EXIT_OK;
}

/* --schedule A.xml,B.xml or a folder: per size the file whose range serves
 * it (MSCCL's rule), said on stderr. */
static int load_schedule_set(const args_t *a, built_t *b, const uint64_t *sizes, int nsizes,
                             size_t elem, int *ranks, cs_coll_t *coll)
{
    const char *paths[CS_CLI_MAX_SIZES];
    cs_err_t err;
    cs_err_clear(&err);
    if (cs_cli_schedule_set("sim", a->schedule, sizes, nsizes, elem, &b->set, b->sched, paths,
                            coll, ranks, &err) != CS_OK)
        return cs_cli_usage_error("sim", "--schedule %s: %s", a->schedule, err.msg);
    for (int k = 0; k < nsizes; k++)
        snprintf(b->params[k], sizeof(b->params[k]), "file=%.80s", paths[k]);
    b->n = nsizes;
    b->per_size = 1;
    if (a->ranks > 0 && a->ranks != *ranks)
        return cs_cli_usage_error("sim", "%s: schedules for %d ranks, not %ld", a->schedule,
                                  *ranks, a->ranks);
    return CS_EXIT_OK;
}

/* Ranks from --ranks, the map or the platform's devices; the checks that
 * keep a map from silently running fewer ranks. */
static int choose_ranks(const args_t *a, const cs_platform_t *plat, int nmap, int *ranks)
{
    long devices = (long)plat->ndevices;
    if (*ranks > 0) { /* a schedule file's */
    } else if (a->ranks > 0) {
        *ranks = (int)a->ranks;
    } else if (a->map) {
        if (nmap < devices)
            return cs_cli_usage_error("sim", "--map %s names %d host%s but %s has %ld %s: "
                                             "give --ranks %d to run %d ranks on the mapped hosts",
                                      a->map, nmap, nmap == 1 ? "" : "s", plat->name, devices,
                                      plat->rank_noun, nmap, nmap);
        *ranks = nmap;
    } else {
        *ranks = (int)devices;
    }
    if (*ranks < 1)
        return cs_cli_usage_error("sim", "%s has no device to put a rank on (no host is marked "
                                         "as a device); give --map FILE (see 'collstep platform "
                                         "show %s')",
                                  plat->name, plat->spec[0] ? plat->spec : plat->name);
    long avail = a->map ? nmap : devices;
    if (*ranks > avail)
        return cs_cli_usage_error("sim", "%d ranks but %s has only %ld %s%s%s%s", *ranks,
                                  a->map ? a->map : plat->name, avail,
                                  a->map ? "hosts" : plat->rank_noun, a->map ? "" : " (",
                                  a->map ? "" : plat->rank_rule, a->map ? "" : ")");
    if (a->root >= *ranks)
        return cs_cli_usage_error("sim", "--root %ld out of range [0, %d)", a->root, *ranks);
    return CS_EXIT_OK;
}

static int write_results(const args_t *a, cs_results_fmt_t fmt, cs_result_t *rows, int n)
{
    cs_err_t err;
    cs_err_clear(&err);
    const char *ref = a->compare && *a->compare ? a->compare : NULL;
    if (a->compare_on && cs_results_compare(rows, n, ref, &err) != CS_OK)
        return cs_cli_usage_error("sim", "--compare: %s", err.msg);
    unsigned flags = a->compare_on ? CS_RESULTS_COMPARE : 0;
    int st;
    if (a->output)
        st = cs_results_save(a->output, fmt, flags | (a->force ? CS_RESULTS_FORCE : 0), rows, n,
                             &err);
    else
        st = cs_results_print(stdout, fmt, flags, rows, n);
    if (st == CS_OK)
        return CS_EXIT_OK;
    if (!err.msg[0])
        snprintf(err.msg, sizeof(err.msg), "cannot write the results");
    fprintf(stderr, "collstep sim: %s\n", err.msg);
    return st == CS_ERR_EXISTS ? CS_EXIT_USAGE : CS_EXIT_RUNTIME;
}

/* The child of cs_cli_guard: simulate, write traces and results. */
static int simulate(const args_t *a, cs_platform_t *plat, built_t *b, const uint64_t *sizes,
                    int nsizes, char **map, int nmap, cs_dtype_t dt, cs_op_t op,
                    cs_sim_model_t model, cs_results_fmt_t fmt)
{
    int n = b->per_size ? nsizes : b->n * nsizes, rc = CS_EXIT_OK;
    cs_sim_instance_t *inst = calloc((size_t)n, sizeof(*inst));
    cs_result_t *rows = calloc((size_t)n, sizeof(*rows));
    cs_err_t err;
    cs_err_clear(&err);
#ifdef CS_HAVE_TRACES
    cs_trace_session_t *tsess = NULL;
    cs_trace_sim_t tsim;
#endif
    if (!inst || !rows) {
        fprintf(stderr, "collstep sim: out of memory\n");
        rc = CS_EXIT_RUNTIME;
        goto done;
    }
    for (int i = 0; i < n; i++) {
        cs_sim_instance_t *in = &inst[i];
        in->sched = b->sched[b->per_size ? i : i / nsizes];
        in->bytes = sizes[i % nsizes];
        in->dtype = dt;
    }
    progress_t prog;
    clock_gettime(CLOCK_MONOTONIC, &prog.t0);
    prog.total = n;
    prog.shown = 0;
    cs_sim_observer_t obs = {&prog, NULL, NULL, NULL, on_end};
    cs_sim_opts_t so;
    cs_sim_opts_init(&so);
    so.model = model;
    so.map = (const char *const *)map;
    so.nmap = nmap;
    so.ports = (int)a->ports;
    so.obs = isatty(2) ? &obs : NULL;
#ifdef CS_HAVE_TRACES
    if (a->trace) {
        cs_trace_opts_t to;
        cs_trace_opts_init(&to);
        to.link_tracks = (int)a->trace_links;
        to.ranks = (int)a->trace_ranks;
        to.buckets = (int)a->trace_buckets;
        to.plot = !a->trace_no_plot;
        to.force = a->force;
        if (cs_trace_session_open(a->trace, &to, n, &tsess, &err) != CS_OK) {
            fprintf(stderr, "collstep sim: --trace %s: %s\n", a->trace, err.msg);
            rc = err.code == CS_ERR_EXISTS ? CS_EXIT_USAGE : CS_EXIT_RUNTIME;
            goto done;
        }
        cs_trace_sim_init(&tsim, tsess, plat->spec[0] ? plat->spec : plat->name, a->model, so.obs);
        so.obs = &tsim.obs;
    }
#endif
    int st = cs_sim_run(plat, &so, inst, n, &err);
    if (prog.shown)
        fputc('\n', stderr);
    if (st != CS_OK) {
        fprintf(stderr, "collstep sim: %s\n", err.msg);
        rc = (st == CS_ERR_INVAL || st == CS_ERR_PARSE) ? CS_EXIT_USAGE : CS_EXIT_RUNTIME;
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
        const cs_sched_t *s = inst[i].sched;
        cs_result_fill(&rows[i], s->algo[0] ? s->algo : a->schedule, s->desc.coll,
                       s->desc.nranks, inst[i].bytes, dt, op, inst[i].time * 1e6,
                       plat->spec[0] ? plat->spec : plat->name);
        cs_result_set_provenance(&rows[i], b->params[b->per_size ? i : i / nsizes], a->model, NULL);
    }
    rc = write_results(a, fmt, rows, n);
done:
#ifdef CS_HAVE_TRACES
    cs_trace_session_close(tsess);
#endif
    free(inst);
    free(rows);
    return rc;
}

int cs_cli_sim(int argc, char **argv)
{
    args_t a;
    memset(&a, 0, sizeof(a));
    a.coll = "allreduce";
    a.dtype = "float";
    a.op = "sum";
    a.model = "ideal";
    a.format = "table";
    a.trace_ranks = 64;
    a.trace_buckets = 1024;
    cs_cli_params_init(&a.params);
    int rc = parse(argc, argv, &a);
    if (rc != CS_EXIT_OK)
        return rc < 0 ? CS_EXIT_OK : rc;

    /* parse */
    cs_dtype_t dt = cs_dtype_parse(a.dtype);
    cs_op_t op = cs_op_parse(a.op);
    cs_sim_model_t model = cs_sim_model_parse(a.model);
    cs_results_fmt_t fmt = cs_results_fmt_parse(a.format);
    cs_coll_t coll = cs_coll_parse(a.coll);
    if (dt == CS_DT_COUNT)
        return cs_cli_usage_error("sim", "--dtype: unknown type '%s' (float, double, half, "
                                         "bfloat16, int32, int64)", a.dtype);
    if (op == CS_OP_COUNT)
        return cs_cli_usage_error("sim", "--op: unknown operator '%s' (sum, prod, min, max)", a.op);
    if (model == CS_SIM_MODEL_COUNT)
        return cs_cli_usage_error("sim", "--model: expected ideal or calibrated, found '%s'", a.model);
    if (fmt == CS_FMT_COUNT)
        return cs_cli_usage_error("sim", "--format: expected table, csv or json, found '%s'", a.format);
    if (coll == CS_COLL_COUNT)
        return cs_cli_usage_error("sim", "--coll: unknown collective '%s' (allreduce, "
                                         "reduce-scatter, allgather, broadcast, reduce, alltoall)",
                                  a.coll);
    uint64_t sizes[CS_CLI_MAX_SIZES];
    int nsizes = 0;
    if ((rc = cs_cli_sizes("sim", a.size, cs_dtype_size(dt), sizes, &nsizes)) != CS_EXIT_OK)
        return rc;

    /* build */
    cs_platform_t *plat = NULL;
    built_t b;
    memset(&b, 0, sizeof(b));
    char **map = NULL;
    int nmap = 0, ranks = 0;
    cs_err_t err;
    cs_err_clear(&err);
    if (cs_platform_open(a.platform, &plat, &err) != CS_OK) {
        rc = cs_cli_usage_error("sim", "%s", err.msg);
        goto done;
    }
    if (a.map && (rc = read_map(a.map, &map, &nmap)) != CS_EXIT_OK)
        goto done;
    if (a.schedule && cs_cli_is_schedule_set(a.schedule))
        rc = load_schedule_set(&a, &b, sizes, nsizes, cs_dtype_size(dt), &ranks, &coll);
    else if (a.schedule)
        rc = load_schedule(&a, &b, &ranks, &coll);
    if (rc != CS_EXIT_OK)
        goto done;
    if ((rc = choose_ranks(&a, plat, nmap, &ranks)) != CS_EXIT_OK)
        goto done;
    if (!a.schedule && (rc = build_all(&a, plat, coll, ranks, &b)) != CS_EXIT_OK)
        goto done;

    /* verify */
    for (int i = 0; i < b.n && !a.no_verify; i++)
        if ((rc = cs_cli_verify("sim", b.sched[i], b.sched[i]->algo[0] ? b.sched[i]->algo
                                                                         : a.schedule)) != CS_EXIT_OK)
            goto done;

    /* act and report, in a watched child (Ctrl-C removes partial outputs),
     * once the outputs are known to be writable */
    if ((rc = cs_cli_check_outputs("sim", a.output, a.trace, a.force)) != CS_EXIT_OK)
        goto done;
    if (cs_cli_guard("sim", a.output, a.trace, &rc))
        goto done;
    rc = simulate(&a, plat, &b, sizes, nsizes, map, nmap, dt, op, model, fmt);
done:
    for (int i = 0; i < b.n && !b.per_size; i++)
        cs_cli_free_sched(b.sched[i]);
    cs_cli_schedule_set_free(b.set);
    for (int i = 0; i < nmap; i++)
        free(map[i]);
    free(map);
    cs_platform_close(plat);
    return rc;
}
