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
            "                    --size SIZE[:MAX[:FACTOR]] [options]\n"
            "       collstep sim --platform NAME|FILE --schedule FILE --size ... [options]\n"
            "\n"
            "Simulate collective algorithms on a modeled fabric (SimGrid) and print\n"
            "simulated time, algbw and busbw per size like nccl-tests.\n"
            "\n"
            "  --platform SPEC      preset ('summit', 'summit:nodes=16', see 'collstep platform\n"
            "                       list') or a SimGrid XML file with tier-tagged links\n"
            "  --coll COLL          collective (default allreduce)\n"
            "  --algo A[,B...]      algorithms of the registry (see 'collstep algos')\n"
            "  --schedule FILE      a schedule file instead of --algo\n"
            "  --size S[:MAX[:F]]   message size(s) in bytes: 1M, 64K:1G (factor 2 by default)\n"
            "  --ranks P            ranks (default: every device, or the schedule's)\n"
            "  --root R             root of broadcast / reduce (default 0)\n"
            "  --param KEY=VALUE    generator parameter for every algorithm, repeatable;\n"
            "                       hier without dims gets the platform's dims\n"
            "  --dtype T            element type (default float)\n"
            "  --op OP              reduction operator (default sum)\n"
            "  --model M            ideal (exact alpha-beta on split-duplex links, default) or\n"
            "                       calibrated (per-tier latency/bandwidth factors)\n"
            "  --ports N            sends in flight per rank (default 0 = unlimited; 1 = the\n"
            "                       single-port model of textbook formulas)\n"
            "  --map FILE           host of each rank, one name per line (default: devices in\n"
            "                       platform order)\n"
            "  --no-verify          skip verifying the schedules before simulating\n"
            "  --format F           table (default), csv or json\n"
            "  -o, --output FILE    write results to FILE (default stdout)\n"
#ifdef CS_HAVE_TRACES
            "  --trace DIR          write per-step and per-link/per-tier utilization traces to\n"
            "                       DIR (whole or not at all; several algorithms or sizes: one\n"
            "                       DIR/ALGO-BYTES/ each and DIR/index.csv); see 'collstep trace'\n"
            "  --trace-links N      per-link counter tracks in trace.json for the N busiest links\n"
            "  --trace-ranks N      step slices of N evenly spaced ranks only (default 64, 0 = all)\n"
            "  --trace-buckets N    time buckets of the utilization series (default 1024)\n"
            "  --trace-no-plot      do not run gnuplot (no utilization.png)\n"
#endif
            "\n"
            "example: collstep sim --platform summit --algo ring,hier --size 1M:1G\n");
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

static int build_one(const char *name, cs_coll_t coll, int ranks, int root, const cs_params_t *given,
                     const cs_platform_t *plat, cs_sched_t **out)
{
    const cs_algo_t *a = cs_algo_find(coll, name);
    if (!a)
        return cs_cli_usage_error("sim", "no algorithm '%s' for %s (see 'collstep algos')", name,
                                  cs_coll_name(coll));
    cs_params_t prm = *given;
    cs_err_t err = {0};
    if (strcmp(name, "hier") == 0 && !cs_params_get(&prm, "dims") && plat->ndims > 0) {
        char dims[64] = "";
        long prod = 1;
        for (int i = 0; i < plat->ndims; i++) {
            size_t l = strlen(dims);
            snprintf(dims + l, sizeof(dims) - l, "%s%d", i ? "x" : "", plat->dims[i]);
            prod *= plat->dims[i];
        }
        if (prod == ranks)
            cs_params_set(&prm, "dims", dims, &err);
    }
    for (int i = 0; i < prm.n; i++)
        prm.kv[i].used = 0;
    cs_coll_desc_t d = {coll, ranks, root, 0};
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int st = cs_algo_build(a, &d, &prm, out, &err);
    if (st != CS_OK)
        return cs_cli_usage_error("sim", "%s %s on %d ranks: %s", cs_coll_name(coll), name, ranks,
                                  err.msg);
    CS_INFO("sim", "generated %s %s on %d ranks in %.2f s", cs_coll_name(coll), name, ranks,
            since(&t0));
    return CS_EXIT_OK;
}

static int verify_one(const cs_sched_t *s)
{
    cs_verify_report_t rep = {0};
    cs_err_t err = {0};
    int st = cs_verify(s, NULL, &rep, &err);
    if (st == CS_ERR_RANGE) {
        fprintf(stderr, "collstep sim: %s: %s; or simulate without verifying: --no-verify\n",
                s->algo[0] ? s->algo : "(file)", err.msg);
        cs_verify_report_fini(&rep);
        return CS_EXIT_USAGE;
    }
    if (st != CS_OK) {
        fprintf(stderr, "collstep sim: schedule %s is incorrect:\n", s->algo[0] ? s->algo : "(file)");
        for (uint32_t i = 0; i < rep.n; i++)
            fprintf(stderr, "collstep sim:   %s\n", rep.findings[i].msg);
        if (st != CS_ERR_VERIFY)
            fprintf(stderr, "collstep sim: cannot verify: %s\n", err.msg);
    }
    cs_verify_report_fini(&rep);
    return st == CS_OK ? CS_EXIT_OK : CS_EXIT_FAIL;
}

typedef struct args {
    const char *platform, *coll, *algos, *schedule, *size, *dtype, *op, *model, *map, *format,
        *output, *trace;
    long ranks, root, ports, trace_links, trace_ranks, trace_buckets;
    int no_verify, trace_no_plot;
    cs_params_t params;
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
        {"help", no_argument, 0, 'h'},
#ifdef CS_HAVE_TRACES
        {"trace", required_argument, 0, 'T'},    {"trace-links", required_argument, 0, 'L'},
        {"trace-ranks", required_argument, 0, 'R'}, {"trace-buckets", required_argument, 0, 'B'},
        {"trace-no-plot", no_argument, 0, 'N'},
#endif
        {0, 0, 0, 0}};
    cs_err_t err = {0};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
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
                return cs_cli_usage_error("sim", "--%s: expected a non-negative integer, found '%s'",
                                          c == 'n' ? "ranks" : c == 'r' ? "root" : "ports", optarg);
            *(c == 'n' ? &a->ranks : c == 'r' ? &a->root : &a->ports) = v;
            break;
        }
        case 'p':
            if (cs_params_parse(&a->params, optarg, &err) != CS_OK)
                return cs_cli_usage_error("sim", "--param: %s", err.msg);
            break;
        case 'h':
            help(stdout);
            return -1;
        default:
            help(stderr);
            return CS_EXIT_USAGE;
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

static int sizes_of(const char *spec, uint64_t *sizes, int *n)
{
    uint64_t lo, hi;
    double factor;
    if (cs_cli_parse_sweep(spec, &lo, &hi, &factor) != 0 || lo == 0 || hi < lo || !(factor > 1.0))
        return cs_cli_usage_error("sim", "--size: expected SIZE or MIN:MAX[:FACTOR] with 0 < MIN <= MAX "
                                  "and FACTOR > 1, found '%s'", spec);
    int k = 0;
    for (double s = (double)lo; s <= (double)hi * (1 + 1e-12); s *= factor) {
        if (k == MAX_SIZES)
            return cs_cli_usage_error("sim", "--size: more than %d sizes in '%s'", MAX_SIZES, spec);
        uint64_t v = (uint64_t)(s + 0.5);
        if (k > 0 && v <= sizes[k - 1])
            v = sizes[k - 1] + 1;
        sizes[k++] = v;
    }
    *n = k;
    return CS_EXIT_OK;
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
    a.ranks = -1;
    a.trace_ranks = 64;
    a.trace_buckets = 1024;
    cs_params_init(&a.params);
    int rc = parse(argc, argv, &a);
    if (rc != CS_EXIT_OK)
        return rc < 0 ? CS_EXIT_OK : rc;

    cs_dtype_t dt = cs_dtype_parse(a.dtype);
    cs_op_t op = cs_op_parse(a.op);
    cs_sim_model_t model = cs_sim_model_parse(a.model);
    cs_results_fmt_t fmt = cs_results_fmt_parse(a.format);
    cs_coll_t coll = cs_coll_parse(a.coll);
    if (dt == CS_DT_COUNT)
        return cs_cli_usage_error("sim", "--dtype: unknown type '%s'", a.dtype);
    if (op == CS_OP_COUNT)
        return cs_cli_usage_error("sim", "--op: unknown operator '%s'", a.op);
    if (model == CS_SIM_MODEL_COUNT)
        return cs_cli_usage_error("sim", "--model: expected ideal or calibrated, found '%s'", a.model);
    if (fmt == CS_FMT_COUNT)
        return cs_cli_usage_error("sim", "--format: expected table, csv or json, found '%s'", a.format);
    if (coll == CS_COLL_COUNT)
        return cs_cli_usage_error("sim", "--coll: unknown collective '%s'", a.coll);
    uint64_t sizes[MAX_SIZES];
    int nsizes = 0;
    rc = sizes_of(a.size, sizes, &nsizes);
    if (rc != CS_EXIT_OK)
        return rc;

    cs_platform_t *plat = NULL;
    cs_sched_t *scheds[MAX_ALGOS] = {0};
    cs_sim_instance_t *inst = NULL;
    cs_result_t *rows = NULL;
    char **map = NULL;
#ifdef CS_HAVE_TRACES
    cs_trace_session_t *tsess = NULL;
    cs_trace_sim_t tsim;
#endif
    int nmap = 0, nsched = 0, ranks = 0;
    cs_err_t err = {0};
    if (cs_platform_open(a.platform, &plat, &err) != CS_OK) {
        rc = cs_cli_usage_error("sim", "%s", err.msg);
        goto done;
    }
    if (a.map && (rc = read_map(a.map, &map, &nmap)) != CS_EXIT_OK)
        goto done;
    long avail = map ? nmap : (long)plat->ndevices;

    if (a.schedule) {
        scheds[0] = cs_sched_load(a.schedule, &err);
        if (!scheds[0]) {
            rc = cs_cli_usage_error("sim", "%s", err.msg);
            goto done;
        }
        nsched = 1;
        ranks = scheds[0]->desc.nranks;
        coll = scheds[0]->desc.coll;
        if (a.ranks >= 0 && a.ranks != ranks) {
            rc = cs_cli_usage_error("sim", "%s is a schedule for %d ranks, not %ld", a.schedule,
                                    ranks, a.ranks);
            goto done;
        }
    } else {
        ranks = a.ranks >= 0 ? (int)a.ranks : (int)avail;
    }
    if (ranks > avail) {
        rc = cs_cli_usage_error("sim", "%d ranks but %s has only %ld %s", ranks,
                                map ? a.map : plat->name, avail, map ? "hosts" : "devices");
        goto done;
    }
    if (a.root >= ranks) {
        rc = cs_cli_usage_error("sim", "--root %ld out of range [0, %d)", a.root, ranks);
        goto done;
    }
    if (!a.schedule) {
        char list[512];
        snprintf(list, sizeof(list), "%s", a.algos);
        for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
            if (nsched == MAX_ALGOS) {
                rc = cs_cli_usage_error("sim", "--algo: more than %d algorithms", MAX_ALGOS);
                goto done;
            }
            rc = build_one(tok, coll, ranks, (int)a.root, &a.params, plat, &scheds[nsched]);
            if (rc != CS_EXIT_OK)
                goto done;
            nsched++;
        }
        if (nsched == 0) {
            rc = cs_cli_usage_error("sim", "--algo: no algorithm named");
            goto done;
        }
    }
    for (int i = 0; i < nsched && !a.no_verify; i++)
        if ((rc = verify_one(scheds[i])) != CS_EXIT_OK)
            goto done;

    int n = nsched * nsizes;
    inst = calloc((size_t)n, sizeof(*inst));
    rows = calloc((size_t)n, sizeof(*rows));
    if (!inst || !rows) {
        fprintf(stderr, "collstep sim: out of memory\n");
        rc = CS_EXIT_FAIL;
        goto done;
    }
    for (int i = 0; i < nsched; i++)
        for (int k = 0; k < nsizes; k++) {
            cs_sim_instance_t *in = &inst[i * nsizes + k];
            in->sched = scheds[i];
            in->bytes = sizes[k];
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
    so.ports = (int)a.ports;
    so.obs = isatty(2) ? &obs : NULL;
#ifdef CS_HAVE_TRACES
    if (a.trace) {
        cs_trace_opts_t to;
        cs_trace_opts_init(&to);
        to.link_tracks = (int)a.trace_links;
        to.ranks = (int)a.trace_ranks;
        to.buckets = (int)a.trace_buckets;
        to.plot = !a.trace_no_plot;
        if (cs_trace_session_open(a.trace, &to, n, &tsess, &err) != CS_OK) {
            fprintf(stderr, "collstep sim: %s\n", err.msg);
            rc = CS_EXIT_FAIL;
            goto done;
        }
        cs_trace_sim_init(&tsim, tsess, plat->spec[0] ? plat->spec : plat->name, a.model, so.obs);
        so.obs = &tsim.obs;
    }
#endif
    int st = cs_sim_run(plat, &so, inst, n, &err);
    if (prog.shown)
        fputc('\n', stderr);
    if (st != CS_OK) {
        fprintf(stderr, "collstep sim: %s\n", err.msg);
        rc = (st == CS_ERR_INVAL || st == CS_ERR_PARSE) ? CS_EXIT_USAGE : CS_EXIT_FAIL;
        goto done;
    }
#ifdef CS_HAVE_TRACES
    if (tsess && cs_trace_session_commit(tsess, &err) != CS_OK) {
        fprintf(stderr, "collstep sim: --trace %s: %s\n", a.trace, err.msg);
        rc = CS_EXIT_FAIL;
        goto done;
    }
#endif
    for (int i = 0; i < n; i++) {
        const cs_sched_t *s = inst[i].sched;
        const char *name = s->algo[0] ? s->algo : a.schedule;
        cs_result_fill(&rows[i], name, s->desc.coll, s->desc.nranks, inst[i].bytes, dt, op,
                       inst[i].time * 1e6, plat->spec[0] ? plat->spec : plat->name);
    }
    if (a.output) { /* whole or not at all */
        rc = cs_results_save(a.output, fmt, rows, n, &err) == CS_OK ? CS_EXIT_OK : CS_EXIT_FAIL;
        if (rc != CS_EXIT_OK)
            fprintf(stderr, "collstep sim: %s\n", err.msg);
    } else {
        rc = cs_results_print(stdout, fmt, rows, n) == CS_OK ? CS_EXIT_OK : CS_EXIT_FAIL;
        if (rc != CS_EXIT_OK)
            fprintf(stderr, "collstep sim: cannot write the results\n");
    }
done:
#ifdef CS_HAVE_TRACES
    cs_trace_session_close(tsess);
#endif
    for (int i = 0; i < nsched; i++)
        cs_sched_destroy(scheds[i]);
    for (int i = 0; i < nmap; i++)
        free(map[i]);
    free(map);
    free(inst);
    free(rows);
    cs_platform_close(plat);
    return rc;
}
