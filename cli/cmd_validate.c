/*
 * cmd_validate.c - `collstep validate`: run schedules live and simulate the
 * same schedules on a platform; print measured vs predicted time.
 *
 * Launched like `collstep run` (every rank runs it).  Parse; rank 0 opens
 * the platform(s) and checks they hold a host per rank (and, for a
 * platform of `collstep calibrate`, that ranks share nodes as they did when
 * it was measured); every rank builds the schedules (hier gets dims =
 * ranks per node x nodes from where the ranks are) and rank 0 verifies
 * them; then live: per algorithm an engine, per size --warmup untimed runs
 * and --iters timed runs, each started together after a barrier, its time
 * the slowest rank's (median and spread over the iterations); then rank 0
 * simulates the same schedules and sizes on every platform given (each in
 * a child process: SimGrid starts once per process) and reports:
 * nccl-tests columns plus measured, predicted and error = (predicted -
 * measured) / measured, and per algorithm and overall the median,
 * geometric mean and worst |error|.
 *
 * Exit codes (cli.h): 0; 2 usage and bad input (unknown algorithm, a
 * platform with fewer hosts than ranks, a refused -o); 3 a rank died or
 * timed out, a simulation failed; 128+N a signal.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cs_boot.h"
#include "cs_engine.h"
#include "cs_fit.h"
#include "cs_intr.h"
#include "cs_out.h"
#include "cs_platform.h"
#include "cs_results.h"
#include "cs_sim.h"
#include "cs_transport.h"

#define MAX_PLATS 4

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
    "  --param KEY=VALUE    generator parameters, as collstep run\n"
    "  --size SIZES         message sizes: 1M:64M, 1M,4M (see below)\n"
    "  --iters N            timed runs per size (10); --warmup N untimed runs (2)\n"
    "  --transport NAME     ofi (default), tcp, shm; --provider NAME, --iface ADDR\n"
    "  --format F           table (default), csv, json; -o FILE writes it there\n"
    "  --force              replace an -o FILE collstep did not write\n"
    "  --timeout S          no-progress limit of the live runs (60)\n"
    "  --boot B             pmix or env (default: auto)\n"
    "  --help               this text\n"
    "\n"
    "measured: every timed run starts after a barrier; its time is the last rank's\n"
    "end minus the first rank's start (clocks aligned to rank 0's); the column is\n"
    "the median over --iters runs, spread = (90th - 10th percentile) / median.\n"
    "predicted: the simulated time of the same schedule (all ranks start together),\n"
    "with copies charged like reductions.  error %% = 100 (predicted - measured) /\n"
    "measured.\n"
    "\n%s\n%s";

typedef struct plat_spec {
    char spec[256];
    cs_sim_model_t model;
    cs_platform_t *plat;
} plat_spec_t;

typedef struct val_opts {
    const char *coll, *algo, *transport, *provider, *iface, *format, *output, *boot;
    char size[256];
    plat_spec_t plats[MAX_PLATS];
    int nplats;
    cs_cli_params_t params;
    long iters, warmup, force;
    double timeout;
} val_opts_t;

typedef struct meas {
    double med, p10, p90, lo, hi, skew; /* seconds; skew: barrier release spread */
} meas_t;

typedef struct vrow {
    int algo, size, plat;
    double meas_us, spread_pct, pred_us, err_pct;
} vrow_t;

static int uerr(const char *fmt, const char *a)
{
    fprintf(stderr, "collstep validate: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, " (see collstep validate --help)\n");
    return CS_EXIT_USAGE;
}

static int parse(int argc, char **argv, val_opts_t *o)
{
    static const struct option lo[] = {
        {"platform", 1, 0, 'P'}, {"coll", 1, 0, 'c'},     {"algo", 1, 0, 'a'},
        {"param", 1, 0, 'p'},    {"size", 1, 0, 's'},     {"iters", 1, 0, 'n'},
        {"warmup", 1, 0, 'w'},   {"transport", 1, 0, 't'}, {"provider", 1, 0, 'V'},
        {"iface", 1, 0, 'I'},    {"format", 1, 0, 'f'},   {"output", 1, 0, 'o'},
        {"force", 0, 0, 'F'},    {"timeout", 1, 0, 'T'},  {"boot", 1, 0, 'B'},
        {"help", 0, 0, 'h'},     {0, 0, 0, 0}};
    memset(o, 0, sizeof(*o));
    cs_cli_params_init(&o->params);
    o->coll = "allreduce", o->transport = "ofi", o->provider = "tcp;ofi_rxm";
    o->iface = "127.0.0.1", o->format = "table", o->iters = 10, o->warmup = 2, o->timeout = 60;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":ho:", lo, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'P': {
            if (o->nplats == MAX_PLATS)
                return uerr("--platform: at most " "4" " platforms%s", "");
            plat_spec_t *p = &o->plats[o->nplats++];
            snprintf(p->spec, sizeof(p->spec), "%s", optarg);
            char *at = strrchr(p->spec, '@');
            p->model = CS_SIM_IDEAL;
            if (at) {
                *at = 0;
                p->model = cs_sim_model_parse(at + 1);
                if (p->model == CS_SIM_MODEL_COUNT)
                    return uerr("--platform: unknown model '%s' (ideal, calibrated)", at + 1);
            }
            break;
        }
        case 'c': o->coll = optarg; break;
        case 'a': o->algo = optarg; break;
        case 'p':
            if (cs_cli_params_add(&o->params, "validate", optarg) != CS_EXIT_OK)
                return CS_EXIT_USAGE;
            break;
        case 's': snprintf(o->size, sizeof(o->size), "%s", optarg); break;
        case 'n':
        case 'w': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < (c == 'n') || v > 100000)
                return uerr("--iters / --warmup: expected a count, found '%s'", optarg);
            *(c == 'n' ? &o->iters : &o->warmup) = v;
            break;
        }
        case 't': o->transport = optarg; break;
        case 'V': o->provider = optarg; break;
        case 'I': o->iface = optarg; break;
        case 'f': o->format = optarg; break;
        case 'o': o->output = optarg; break;
        case 'F': o->force = 1; break;
        case 'B': o->boot = optarg; break;
        case 'T':
            o->timeout = strtod(optarg, &end);
            if (*end || !(o->timeout > 0))
                return uerr("--timeout: expected seconds > 0, found '%s'", optarg);
            break;
        case 'h': printf(usage_text, MAX_PLATS, cs_cli_size_help, cs_cli_exit_help); return -1;
        case ':': return uerr("option %s needs a value", argv[optind - 1]);
        default: return uerr("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return uerr("unexpected argument '%s'", argv[optind]);
    if (!o->nplats)
        return uerr("%s", "--platform FILE is required (the output of collstep calibrate)");
    if (!o->algo)
        return uerr("%s", "--algo is required");
    if (!o->size[0])
        return uerr("%s", "--size is required");
    if (cs_results_fmt_parse(o->format) == CS_FMT_COUNT)
        return uerr("--format: expected table, csv or json, found '%s'", o->format);
    if (!strcmp(o->transport, "nccl"))
        return uerr("--transport %s: validate runs host memory transports (ofi, tcp, shm)",
                    o->transport);
    if (!strcmp(o->transport, "shm"))
        o->provider = "native";
    return 0;
}

typedef struct val {
    val_opts_t *o;
    cs_boot_t *boot;
    cs_tp_t *tp;
    int rank, nranks, nnodes, local; /* local: ranks on this rank's node */
    int *node_of;
    int64_t offset_ns; /* this rank's clock to rank 0's */
    cs_coll_t coll;
    cs_sched_t *sched[CS_CLI_MAX_ALGOS];
    char params[CS_CLI_MAX_ALGOS][96];
    int nalgo;
    uint64_t sizes[CS_CLI_MAX_SIZES];
    int nsizes;
    meas_t *meas; /* [algo][size] */
    double *pred; /* [plat][algo][size] seconds */
    cs_err_t err;
} val_t;

/* Nodes: (hostname, network namespace), numbered by first rank. */
static int find_nodes(val_t *v)
{
    struct {
        char name[64];
        uint64_t ns;
    } me, *all = calloc((size_t)v->nranks, sizeof(me));
    v->node_of = calloc((size_t)v->nranks, sizeof(int));
    if (!all || !v->node_of) {
        free(all);
        return cs_err_set(&v->err, CS_ERR_NOMEM, "out of memory");
    }
    memset(&me, 0, sizeof(me));
    gethostname(me.name, sizeof(me.name) - 1);
    struct stat sb;
    if (stat("/proc/self/ns/net", &sb) == 0)
        me.ns = (uint64_t)sb.st_ino;
    int st = cs_boot_allgather(v->boot, &me, sizeof(me), all, &v->err);
    for (int r = 0; r < v->nranks && st == CS_OK; r++) {
        int h = 0, r0;
        for (r0 = 0; r0 < r; r0++)
            if (!strcmp(all[r0].name, all[r].name) && all[r0].ns == all[r].ns)
                break;
        if (r0 < r)
            h = v->node_of[r0];
        else
            h = v->nnodes++;
        v->node_of[r] = h;
    }
    for (int r = 0; r < v->nranks && st == CS_OK; r++)
        v->local += v->node_of[r] == v->node_of[v->rank];
    free(all);
    return st;
}

/* The cluster's tiers: R x H when every node holds R contiguous ranks
 * (*ndims 0 otherwise). */
static void node_dims(const val_t *v, int *dims, int *ndims)
{
    int per = v->nranks / v->nnodes, ok = v->nnodes > 1 && per > 1 && per * v->nnodes == v->nranks;
    for (int r = 0; r < v->nranks && ok; r++)
        ok = v->node_of[r] == r / per;
    dims[0] = per, dims[1] = v->nnodes;
    *ndims = ok ? 2 : 0;
}

/* Rank 0: open the platforms and check them against the ranks. */
static int check_platforms(val_t *v)
{
    for (int i = 0; i < v->o->nplats; i++) {
        plat_spec_t *p = &v->o->plats[i];
        if (cs_platform_open(p->spec, &p->plat, &v->err) != CS_OK) {
            fprintf(stderr, "collstep validate: --platform %s: %s\n", p->spec, v->err.msg);
            return CS_EXIT_USAGE;
        }
        if (p->plat->ndevices < (uint64_t)v->nranks) {
            fprintf(stderr, "collstep validate: --platform %s has %llu %s but %d ranks run: "
                            "calibrate on the ranks you validate with\n", p->spec,
                    (unsigned long long)p->plat->ndevices,
                    p->plat->rank_noun[0] ? p->plat->rank_noun : "hosts", v->nranks);
            return CS_EXIT_USAGE;
        }
        /* a calibrated platform names its hosts nNODE-rRANK: same grouping? */
        for (int a = 0; a < v->nranks; a++)
            for (int b = 0; b < v->nranks && p->plat->hosts; b++) {
                int na, ra, nb, rb;
                if (sscanf(p->plat->hosts[a], "n%d-r%d", &na, &ra) != 2 ||
                    sscanf(p->plat->hosts[b], "n%d-r%d", &nb, &rb) != 2)
                    goto next;
                if ((na == nb) != (v->node_of[a] == v->node_of[b])) {
                    fprintf(stderr, "collstep validate: --platform %s: ranks %d and %d are %s "
                                    "there but %s here: start the ranks as when calibrating\n",
                            p->spec, a, b, na == nb ? "on one node" : "on different nodes",
                            na == nb ? "not" : "on one node");
                    return CS_EXIT_USAGE;
                }
            }
    next:;
    }
    return CS_EXIT_OK;
}

static int build(val_t *v)
{
    char buf[512];
    int dims[2], ndims = 0;
    const char *names[CS_CLI_MAX_ALGOS];
    const cs_algo_t *algos[CS_CLI_MAX_ALGOS];
    int n = 0, rc;
    const char *cmd = v->rank == 0 ? "validate" : NULL;
    v->coll = cs_coll_parse(v->o->coll);
    if (v->coll == CS_COLL_COUNT)
        return v->rank ? CS_EXIT_USAGE : uerr("--coll: unknown collective '%s'", v->o->coll);
    if ((rc = cs_cli_algo_list("validate", v->o->algo, buf, sizeof(buf), names, &n)) != CS_EXIT_OK)
        return rc;
    for (int i = 0; i < n; i++)
        if (!(algos[i] = cs_algo_find(v->coll, names[i]))) {
            if (v->rank == 0)
                fprintf(stderr, "collstep validate: no algorithm '%s' for %s (see collstep "
                                "algos)\n", names[i], cs_coll_name(v->coll));
            return CS_EXIT_USAGE;
        }
    if ((rc = cs_cli_params_check(&v->o->params, "validate", algos, n)) != CS_EXIT_OK)
        return rc;
    node_dims(v, dims, &ndims);
    cs_coll_desc_t d = {v->coll, v->nranks, 0, 0};
    for (int i = 0; i < n; i++) {
        cs_params_t extra;
        cs_cli_tier_defaults(names[i], dims, ndims, v->nranks, &extra);
        rc = cs_cli_build("validate", names[i], &d, &v->o->params, &extra, &v->sched[i],
                          v->params[i], sizeof(v->params[0]));
        if (rc != CS_EXIT_OK)
            return rc;
        v->nalgo = i + 1;
        if ((rc = cs_cli_verify(cmd, v->sched[i], names[i])) != CS_EXIT_OK)
            return rc;
    }
    return CS_EXIT_OK;
}

/* One size of one algorithm live.  Each timed run starts after a barrier;
 * every rank records its start and end on CLOCK_MONOTONIC, shifted onto
 * rank 0's clock (cs_engine_clock_align); the run's time is the last end
 * minus the first start (the simulator starts all ranks together: a rank
 * released late by the barrier counts from the first one's start), and
 * its skew the last start minus the first. */
static int live_size(val_t *v, cs_engine_t *e, uint64_t bytes, meas_t *m)
{
    const cs_sched_t *s = v->sched[0];
    uint64_t count = cs_coll_block_count(s->desc.coll, v->nranks, bytes, cs_dtype_size(CS_DT_F32));
    int n = (int)v->o->iters, st = CS_OK;
    double *mine = calloc((size_t)n * 2, sizeof(double));
    double *all = calloc((size_t)n * 2 * v->nranks, sizeof(double));
    double *sk = calloc((size_t)n, sizeof(double));
    if (!mine || !all || !sk)
        st = cs_err_set(&v->err, CS_ERR_NOMEM, "out of memory");
    for (long i = 0; i < v->o->warmup && st == CS_OK; i++)
        st = cs_engine_run(e, count, &v->err);
    for (int i = 0; i < n && st == CS_OK; i++) {
        st = cs_boot_barrier(v->boot, &v->err);
        uint64_t t0 = cs_engine_now_ns();
        if (st == CS_OK)
            st = cs_engine_run(e, count, &v->err);
        uint64_t t1 = cs_engine_now_ns();
        mine[2 * i] = (double)((int64_t)t0 + v->offset_ns) * 1e-9;
        mine[2 * i + 1] = (double)((int64_t)t1 + v->offset_ns) * 1e-9;
    }
    if (st == CS_OK)
        st = cs_boot_allgather(v->boot, mine, sizeof(double) * 2 * (size_t)n, all, &v->err);
    for (int i = 0; i < n && st == CS_OK; i++) {
        double s0 = INFINITY, s1 = -INFINITY, e1 = -INFINITY;
        for (int r = 0; r < v->nranks; r++) {
            const double *x = all + (size_t)r * 2 * n + 2 * i;
            s0 = x[0] < s0 ? x[0] : s0;
            s1 = x[0] > s1 ? x[0] : s1;
            e1 = x[1] > e1 ? x[1] : e1;
        }
        mine[i] = e1 - s0;
        sk[i] = s1 - s0;
    }
    if (st == CS_OK) {
        m->skew = cs_fit_median(sk, n);
        m->p10 = cs_fit_quantile(mine, n, 0.1);
        m->p90 = cs_fit_quantile(mine, n, 0.9);
        m->med = cs_fit_quantile(mine, n, 0.5);
        m->lo = mine[0], m->hi = mine[n - 1];
    }
    free(mine);
    free(all);
    free(sk);
    return st;
}

static int live(val_t *v)
{
    cs_tp_config_t tc = {v->rank, v->nranks, v->o->provider, v->o->iface, 0, v->o->timeout};
    int st = cs_tp_open(v->o->transport, &tc, &v->tp, &v->err);
    st = cs_boot_connect(v->boot, st == CS_OK ? v->tp : NULL, st, &v->err);
    if (st == CS_OK)
        st = cs_engine_clock_align(v->tp, 20, v->o->timeout, &v->offset_ns, &v->err);
    uint64_t hi = 0;
    for (int k = 0; k < v->nsizes; k++)
        hi = v->sizes[k] > hi ? v->sizes[k] : hi;
    for (int a = 0; a < v->nalgo && st == CS_OK; a++) {
        cs_engine_t *e = NULL;
        cs_engine_config_t ec = {CS_DT_F32, CS_OP_SUM,
                                 cs_coll_block_count(v->coll, v->nranks, hi, 4), v->o->timeout,
                                 v->local > sysconf(_SC_NPROCESSORS_ONLN)};
        st = cs_engine_create(v->sched[a], v->rank, v->tp, &ec, &e, &v->err);
        cs_err_t e2;
        cs_err_clear(&e2);
        int ast = cs_boot_agree(v->boot, st, "setting up the engine", &e2);
        if (st == CS_OK && ast != CS_OK)
            st = ast, v->err = e2;
        for (int k = 0; k < v->nsizes && st == CS_OK; k++) {
            st = live_size(v, e, v->sizes[k], &v->meas[a * v->nsizes + k]);
            if (st == CS_OK && v->rank == 0 && isatty(2))
                fprintf(stderr, "\rcollstep validate: %s %llu B: %.1f us   ", v->sched[a]->algo,
                        (unsigned long long)v->sizes[k], v->meas[a * v->nsizes + k].med * 1e6);
        }
        cs_engine_destroy(e);
    }
    if (v->rank == 0 && isatty(2))
        fputc('\n', stderr);
    return st;
}

/* Simulate every (algorithm, size) on platform i in a child process (one
 * SimGrid per process); the times come back through a pipe. */
static int simulate(val_t *v, int i, double *out)
{
    plat_spec_t *p = &v->o->plats[i];
    int n = v->nalgo * v->nsizes, fd[2];
    if (pipe(fd) != 0)
        return cs_err_set(&v->err, CS_ERR_IO, "pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return cs_err_set(&v->err, CS_ERR_IO, "fork: %s", strerror(errno));
    if (pid == 0) {
        close(fd[0]);
        cs_sim_instance_t *in = calloc((size_t)n, sizeof(*in));
        int st = in ? CS_OK : CS_ERR_NOMEM;
        for (int j = 0; j < n && in; j++) {
            in[j].sched = v->sched[j / v->nsizes];
            in[j].bytes = v->sizes[j % v->nsizes];
            in[j].dtype = CS_DT_F32;
        }
        cs_sim_opts_t so;
        cs_sim_opts_init(&so);
        so.model = p->model;
        so.copy_cost = 1;
        cs_err_t e;
        cs_err_clear(&e);
        if (st == CS_OK)
            st = cs_sim_run(p->plat, &so, in, n, &e);
        if (st != CS_OK)
            fprintf(stderr, "collstep validate: simulating on %s: %s\n", p->spec, e.msg);
        for (int j = 0; j < n && st == CS_OK; j++)
            if (write(fd[1], &in[j].time, sizeof(double)) != sizeof(double))
                st = CS_ERR_IO;
        _exit(st == CS_OK ? 0 : 3);
    }
    close(fd[1]);
    size_t want = sizeof(double) * (size_t)n, got = 0;
    while (got < want) {
        ssize_t r = read(fd[0], (char *)out + got, want - got);
        if (r < 0 && errno == EINTR && !cs_intr_pending())
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd[0]);
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        if (cs_intr_pending())
            kill(pid, SIGTERM);
    if (cs_intr_pending())
        return cs_err_set(&v->err, CS_ERR_INTERRUPTED, "interrupted");
    if (got != want || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
        return cs_err_set(&v->err, CS_ERR_INTERNAL, "the simulation on %s failed%s", p->spec,
                          WIFSIGNALED(ws) ? " (crashed)" : "");
    return CS_OK;
}

/* ---- report ----------------------------------------------------------------- */

static int fail(val_t *v, int st)
{
    const char *m = v->err.msg[0] ? v->err.msg : "failed";
    if (strncmp(m, "rank ", 5) == 0)
        fprintf(stderr, "collstep validate: %s\n", m);
    else
        fprintf(stderr, "collstep validate: rank %d: %s\n", v->rank, m);
    if (st == CS_ERR_INTERRUPTED && cs_intr_pending())
        return cs_intr_exit_code();
    return CS_EXIT_RUNTIME;
}

static int out_recognize(const char *head, size_t n)
{
    static const char *k[] = {"# collstep validate", "algo,params,coll,size_bytes,",
                              "{\"collstep_validate\""};
    for (int i = 0; i < 3; i++)
        if (n >= strlen(k[i]) && memcmp(head, k[i], strlen(k[i])) == 0)
            return 1;
    return 0;
}
static const cs_out_kind_t out_kind = {"validation results file", out_recognize, NULL, NULL};

typedef struct stats3 {
    double med, geo, worst;
    int n;
} stats3_t;

/* |error| statistics of rows of platform `p` (algorithm `a`, or all: -1). */
static stats3_t err_stats(const val_t *v, int p, int a)
{
    stats3_t s = {0, 0, 0, 0};
    int n = v->nalgo * v->nsizes;
    double *e = calloc((size_t)n, sizeof(double)), lg = 0;
    for (int j = 0; j < n && e; j++) {
        if (a >= 0 && j / v->nsizes != a)
            continue;
        double m = v->meas[j].med, q = v->pred[(size_t)p * n + j];
        double x = m > 0 ? fabs(q - m) / m * 100 : 0;
        e[s.n++] = x;
        lg += log(x > 0.01 ? x : 0.01); /* |error| below 0.01 % counts as 0.01 % */
        s.worst = x > s.worst ? x : s.worst;
    }
    if (s.n) {
        s.geo = exp(lg / s.n);
        s.med = cs_fit_median(e, s.n);
    }
    free(e);
    return s;
}

static void print_table(const val_t *v, FILE *f, const char *transport)
{
    int n = v->nalgo * v->nsizes;
    for (int p = 0; p < v->o->nplats; p++) {
        const plat_spec_t *ps = &v->o->plats[p];
        fprintf(f, "# collstep validate %s, %d ranks on %d nodes, transport %s; predicted on %s "
                   "(%s model)\n", cs_coll_name(v->coll), v->nranks, v->nnodes, transport,
                ps->spec, cs_sim_model_name(ps->model));
        fprintf(f, "# %-8s %10s %11s %6s %5s %8s %8s %12s %7s %12s %8s\n", "algo", "size", "count",
                "type", "redop", "algbw", "busbw", "measured", "spread", "predicted", "error");
        fprintf(f, "# %-8s %10s %11s %6s %5s %8s %8s %12s %7s %12s %8s\n", "", "(B)", "(elements)",
                "", "", "(GB/s)", "(GB/s)", "(us)", "(%)", "(us)", "(%)");
        for (int j = 0; j < n; j++) {
            const cs_sched_t *s = v->sched[j / v->nsizes];
            uint64_t b = v->sizes[j % v->nsizes];
            double m = v->meas[j].med, q = v->pred[(size_t)p * n + j];
            double algbw = m > 0 ? (double)b / m / 1e9 : 0;
            fprintf(f, "  %-8s %10llu %11llu %6s %5s %8.4f %8.4f %12.1f %7.1f %12.1f %+8.1f\n",
                    s->algo, (unsigned long long)b,
                    (unsigned long long)cs_coll_block_count(v->coll, v->nranks, b, 4), "float",
                    "sum", algbw, algbw * cs_coll_busbw_factor(v->coll, v->nranks), m * 1e6,
                    m > 0 ? (v->meas[j].p90 - v->meas[j].p10) / m * 100 : 0, q * 1e6,
                    m > 0 ? (q - m) / m * 100 : 0);
        }
        fprintf(f, "# |error|    %8s %8s %8s  (%%)\n", "median", "geomean", "worst");
        for (int a = 0; a <= v->nalgo; a++) {
            stats3_t s = err_stats(v, p, a < v->nalgo ? a : -1);
            fprintf(f, "#  %-9s %8.1f %8.1f %8.1f\n", a < v->nalgo ? v->sched[a]->algo : "overall",
                    s.med, s.geo, s.worst);
        }
        if (p + 1 < v->o->nplats)
            fprintf(f, "\n");
    }
}

static void print_csv(const val_t *v, FILE *f, const char *transport)
{
    int n = v->nalgo * v->nsizes;
    fprintf(f, "algo,params,coll,size_bytes,count,dtype,ranks,nodes,transport,platform,model,"
               "measured_us,spread_pct,measured_min_us,measured_max_us,predicted_us,error_pct,"
               "algbw_GBps,busbw_GBps\n");
    for (int p = 0; p < v->o->nplats; p++)
        for (int j = 0; j < n; j++) {
            int a = j / v->nsizes;
            uint64_t b = v->sizes[j % v->nsizes];
            double m = v->meas[j].med, q = v->pred[(size_t)p * n + j];
            double algbw = m > 0 ? (double)b / m / 1e9 : 0;
            fprintf(f, "%s,\"%s\",%s,%llu,%llu,float,%d,%d,\"%s\",\"%s\",%s,%.3f,%.2f,%.3f,%.3f,"
                       "%.3f,%.3f,%.6f,%.6f\n", v->sched[a]->algo, v->params[a],
                    cs_coll_name(v->coll), (unsigned long long)b,
                    (unsigned long long)cs_coll_block_count(v->coll, v->nranks, b, 4), v->nranks,
                    v->nnodes, transport, v->o->plats[p].spec,
                    cs_sim_model_name(v->o->plats[p].model), m * 1e6,
                    m > 0 ? (v->meas[j].p90 - v->meas[j].p10) / m * 100 : 0, v->meas[j].lo * 1e6,
                    v->meas[j].hi * 1e6, q * 1e6, m > 0 ? (q - m) / m * 100 : 0, algbw,
                    algbw * cs_coll_busbw_factor(v->coll, v->nranks));
        }
}

static void print_json(const val_t *v, FILE *f, const char *transport)
{
    int n = v->nalgo * v->nsizes;
    fprintf(f, "{\"collstep_validate\":1,\"rows\":[");
    for (int p = 0, first = 1; p < v->o->nplats; p++)
        for (int j = 0; j < n; j++, first = 0) {
            int a = j / v->nsizes;
            uint64_t b = v->sizes[j % v->nsizes];
            double m = v->meas[j].med, q = v->pred[(size_t)p * n + j];
            fprintf(f, "%s\n{\"algo\":", first ? "" : ",");
            cs_json_write_str(f, v->sched[a]->algo);
            fprintf(f, ",\"params\":");
            cs_json_write_str(f, v->params[a]);
            fprintf(f, ",\"coll\":\"%s\",\"size_bytes\":%llu,\"count\":%llu,\"dtype\":\"float\","
                       "\"ranks\":%d,\"nodes\":%d,\"transport\":",
                    cs_coll_name(v->coll), (unsigned long long)b,
                    (unsigned long long)cs_coll_block_count(v->coll, v->nranks, b, 4), v->nranks,
                    v->nnodes);
            cs_json_write_str(f, transport);
            fprintf(f, ",\"platform\":");
            cs_json_write_str(f, v->o->plats[p].spec);
            fprintf(f, ",\"model\":\"%s\",\"measured_us\":%.3f,\"spread_pct\":%.2f,"
                       "\"measured_min_us\":%.3f,\"measured_max_us\":%.3f,\"iters\":%ld,"
                       "\"start_skew_us\":%.3f,\"predicted_us\":%.3f,\"error_pct\":%.3f}",
                    cs_sim_model_name(v->o->plats[p].model), m * 1e6,
                    m > 0 ? (v->meas[j].p90 - v->meas[j].p10) / m * 100 : 0, v->meas[j].lo * 1e6,
                    v->meas[j].hi * 1e6, v->o->iters, v->meas[j].skew * 1e6, q * 1e6,
                    m > 0 ? (q - m) / m * 100 : 0);
        }
    fprintf(f, "],\n\"summary\":[");
    for (int p = 0, first = 1; p < v->o->nplats; p++)
        for (int a = 0; a <= v->nalgo; a++, first = 0) {
            stats3_t s = err_stats(v, p, a < v->nalgo ? a : -1);
            fprintf(f, "%s\n{\"algo\":", first ? "" : ",");
            cs_json_write_str(f, a < v->nalgo ? v->sched[a]->algo : "overall");
            fprintf(f, ",\"platform\":");
            cs_json_write_str(f, v->o->plats[p].spec);
            fprintf(f, ",\"model\":\"%s\",\"rows\":%d,\"median_abs_error_pct\":%.3f,"
                       "\"geomean_abs_error_pct\":%.3f,\"worst_abs_error_pct\":%.3f}",
                    cs_sim_model_name(v->o->plats[p].model), s.n, s.med, s.geo, s.worst);
        }
    fprintf(f, "]}\n");
}

static int report(val_t *v)
{
    char transport[96];
    if (!strcmp(v->o->transport, "ofi"))
        snprintf(transport, sizeof(transport), "ofi/%s", v->o->provider);
    else
        snprintf(transport, sizeof(transport), "%s", v->o->transport);
    cs_results_fmt_t fmt = cs_results_fmt_parse(v->o->format);
    cs_out_t *out = NULL;
    FILE *f = stdout;
    if (v->o->output) {
        if (cs_out_begin_file(v->o->output, CS_OUT_STDOUT | (v->o->force ? CS_OUT_FORCE : 0),
                              &out_kind, &out, &v->err) != CS_OK) {
            fprintf(stderr, "collstep validate: -o %s: %s\n", v->o->output, v->err.msg);
            return CS_EXIT_USAGE;
        }
        f = cs_out_stream(out);
    }
    if (fmt == CS_FMT_CSV)
        print_csv(v, f, transport);
    else if (fmt == CS_FMT_JSON)
        print_json(v, f, transport);
    else
        print_table(v, f, transport);
    if (out && cs_out_commit(out, &v->err) != CS_OK) {
        fprintf(stderr, "collstep validate: -o %s: %s\n", v->o->output, v->err.msg);
        return CS_EXIT_RUNTIME;
    }
    fflush(stdout);
    return CS_EXIT_OK;
}


static int run(val_t *v)
{
    val_opts_t *o = v->o;
    cs_boot_config_t bc = {o->timeout, o->boot};
    int st = cs_boot_open(&bc, &v->boot, &v->err);
    if (st != CS_OK) {
        fprintf(stderr, "collstep validate: %s\n", v->err.msg);
        return st == CS_ERR_NOTFOUND ? CS_EXIT_USAGE : CS_EXIT_RUNTIME;
    }
    v->rank = cs_boot_rank(v->boot), v->nranks = cs_boot_size(v->boot);
    if ((st = find_nodes(v)) != CS_OK)
        return fail(v, st);
    /* parse, build, verify: every rank; rank 0's platform checks and
     * outputs; all exit 2 together when one rank cannot go on */
    int rc = cs_cli_sizes("validate", o->size, 4, v->sizes, &v->nsizes);
    if (rc == CS_EXIT_OK)
        rc = build(v);
    if (rc == CS_EXIT_OK && v->rank == 0)
        rc = check_platforms(v);
    if (rc == CS_EXIT_OK && v->rank == 0 && o->output &&
        cs_out_check(o->output, CS_OUT_STDOUT | (o->force ? CS_OUT_FORCE : 0), &out_kind, 0,
                     &v->err) != CS_OK) {
        fprintf(stderr, "collstep validate: -o %s: %s\n", o->output, v->err.msg);
        rc = CS_EXIT_USAGE;
    }
    int *rcs = calloc((size_t)v->nranks, sizeof(int)), worst = rc;
    if (!rcs)
        return fail(v, cs_err_set(&v->err, CS_ERR_NOMEM, "out of memory"));
    st = cs_boot_allgather(v->boot, &rc, sizeof(rc), rcs, &v->err);
    for (int r = 0; r < v->nranks && st == CS_OK; r++)
        worst = rcs[r] > worst ? rcs[r] : worst;
    free(rcs);
    if (st != CS_OK)
        return fail(v, st);
    if (worst != CS_EXIT_OK)
        return worst;
    char args[600];
    snprintf(args, sizeof(args), "coll=%s algo=%s size=%s iters=%ld warmup=%ld transport=%s "
             "provider=%s", o->coll, o->algo, o->size, o->iters, o->warmup, o->transport,
             o->provider);
    uint64_t digest = 0;
    for (int i = 0; i < v->nalgo; i++)
        digest = digest * 1099511628211ull ^ cs_sched_digest(v->sched[i]);
    if ((st = cs_boot_check_same(v->boot, digest, args, &v->err)) != CS_OK)
        return fail(v, st);
    /* act: live, then (rank 0) simulate */
    v->meas = calloc((size_t)v->nalgo * v->nsizes, sizeof(meas_t));
    v->pred = calloc((size_t)o->nplats * v->nalgo * v->nsizes, sizeof(double));
    if (!v->meas || !v->pred)
        return fail(v, cs_err_set(&v->err, CS_ERR_NOMEM, "out of memory"));
    if ((st = live(v)) != CS_OK)
        return fail(v, st);
    cs_tp_close(v->tp);
    v->tp = NULL;
    if (v->rank != 0)
        return CS_EXIT_OK;
    for (int i = 0; i < o->nplats && st == CS_OK; i++)
        st = simulate(v, i, v->pred + (size_t)i * v->nalgo * v->nsizes);
    if (st != CS_OK)
        return fail(v, st);
    /* report */
    return report(v);
}

int cs_cli_validate(int argc, char **argv)
{
    val_opts_t o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? CS_EXIT_OK : rc;
    val_t *v = calloc(1, sizeof(*v));
    if (!v) {
        fprintf(stderr, "collstep validate: out of memory\n");
        return CS_EXIT_RUNTIME;
    }
    v->o = &o;
    cs_err_clear(&v->err);
    cs_intr_install();
    rc = run(v);
    cs_tp_close(v->tp);
    cs_boot_close(v->boot);
    for (int i = 0; i < v->nalgo; i++)
        cs_sched_destroy(v->sched[i]);
    for (int i = 0; i < o.nplats; i++)
        cs_platform_close(o.plats[i].plat);
    free(v->node_of);
    free(v->meas);
    free(v->pred);
    free(v);
    return rc;
}
