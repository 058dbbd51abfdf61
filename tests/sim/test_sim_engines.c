/*
 * test_sim_engines.c - the two engines of the simulator (cs_sim.h,
 * "Engines") give the same results: every instance's simulated time within
 * 1e-9 relative, and the same records (every message and switch transfer
 * with its ranks, steps, channel, bytes, start and end; every step; every
 * switch operation), which is what traces are computed from (links and
 * tiers follow from each message's hosts and bytes).
 *
 * One simulation per process (SimGrid): each case runs in two children,
 * one per engine, which send their results back through a pipe.
 *
 * Cases: every algorithm of every collective in the registry (default
 * parameters) on a Summit-like fat tree at 12 ranks, three sizes in one
 * run (instances back to back); the same with the calibrated model, one
 * port and charged copies; switch operations (nvls, nvls_tree) on an HGX
 * H100 node and two; restarts after idle on a calibrated platform.  The
 * NCCL model runs on the dag engine alone (its messages are eager): there
 * the actor engine must refuse it and the dag engine run every instance.
 * Messages (and steps) keep their times in every case but two, where only
 * the instances' times are the same:
 * allreduce direct (every pair at once: SimGrid's solver shares links
 * between flows of nearly equal demand in the order they started) and a
 * single port (ties between sends that become issuable at one instant are
 * broken by the order in which a rank learns of its completions, which
 * the engines do not share); there the messages are the same, with their
 * ranks, steps and bytes, and the number whose times differ is printed.
 *
 * Usage: sim_engines [FILTER]   (cases whose name contains FILTER)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cs_algo.h"
#include "cs_plat_calib.h"
#include "cs_platform.h"
#include "cs_sim.h"
#include "cs_test.h"

#define MAXI 512

/* CS_TEST_REQUIRE for helpers: the set-up failed, the test cannot go on. */
#define NEED(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                 \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

typedef struct xrec {
    int32_t inst, src, dst;
    uint32_t ss, ds, chan;
    uint64_t bytes;
    double start, end;
} xrec_t;

typedef struct result {
    int ok, n;
    double time[MAXI];
    size_t nx, nsteps, nsw;
    xrec_t *x;
    double step_end, step_compute, sw_end, sw_reduce;
    uint64_t step_bytes, sw_bytes;
    char msg[600];
} result_t;

/* ---- the child ------------------------------------------------------------ */

static result_t R;
static size_t capx;

static void on_xfer(void *ctx, int inst, const cs_sim_xfer_rec_t *r)
{
    (void)ctx;
    if (R.nx == capx) {
        capx = capx ? 2 * capx : 4096;
        R.x = realloc(R.x, capx * sizeof(*R.x));
        if (!R.x)
            abort();
    }
    R.x[R.nx++] = (xrec_t){inst, r->src, r->dst, r->src_step, r->dst_step, r->chan, r->bytes,
                           r->start, r->end};
}

static void on_step(void *ctx, int inst, const cs_sim_step_rec_t *r)
{
    (void)ctx;
    (void)inst;
    R.nsteps++;
    R.step_end += r->end - r->start;
    R.step_compute += r->compute;
    R.step_bytes += r->bytes;
}

static void on_switch(void *ctx, int inst, const cs_sim_switch_rec_t *r)
{
    (void)ctx;
    (void)inst;
    R.nsw++;
    R.sw_end += r->end - r->start;
    R.sw_reduce += r->reduce;
    R.sw_bytes += r->bytes_up + r->bytes_down;
}

static int cmp_x(const void *a, const void *b)
{
    const xrec_t *x = a, *y = b;
#define K(f)                                                                                      \
    if (x->f != y->f)                                                                              \
        return x->f < y->f ? -1 : 1;
    K(inst) K(src) K(dst) K(ss) K(ds) K(chan) K(start)
#undef K
    return 0;
}

static void writeall(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t k = write(fd, c, n);
        if (k <= 0)
            _exit(3);
        c += k;
        n -= (size_t)k;
    }
}

static int readall(int fd, void *p, size_t n)
{
    char *c = p;
    while (n > 0) {
        ssize_t k = read(fd, c, n);
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

/* ---- cases ------------------------------------------------------------------ */

typedef struct tcase {
    const char *name;
    const char *plat;   /* a preset, or NULL: the restart platform */
    cs_sim_model_t model;
    int ports, copy_cost, nccl;
    int P;
    const char *algos;  /* "coll:algo[:params];...", or NULL: the whole registry */
    uint64_t sizes[3];
    double tol;   /* instance times, relative */
    int loose;    /* messages' times may differ (see below) */
} tcase_t;

static const tcase_t cases[] = {
    {"summit-all", "summit:nodes=2", CS_SIM_IDEAL, 0, 0, 0, 12, NULL, {4096, 1 << 20, 24 << 20}, 1e-9, 1},
    {"summit-calibrated-1port", "summit:nodes=2", CS_SIM_CALIBRATED, 1, 1, 0, 12,
     "allreduce:ring;allreduce:hier;allreduce:dbtree;allreduce:rhd;broadcast:binomial;broadcast:chain;reduce:ring;"
     "reduce-scatter:ring;allgather:bruck;alltoall:pairwise;alltoall:bruck",
     {4096, 1 << 20, 24 << 20}, 1e-9, 1},
    {"hgx-switch", "hgx-h100", CS_SIM_IDEAL, 0, 0, 0, 8,
     "allreduce:nvls;allreduce:nvls:nchunks=16,depth=2,channels=2;allreduce:ring;allreduce:hier:algos=nvls",
     {1 << 16, 4 << 20, 64 << 20}, 1e-9, 0},
    {"hgx2-switch", "hgx-h100:nodes=2", CS_SIM_IDEAL, 0, 0, 0, 16,
     "allreduce:nvls_tree;allreduce:nvls_tree:inter=ring,channels=2;allreduce:hier:dims=8x2,algos=nvls+ring",
     {1 << 16, 4 << 20, 64 << 20}, 1e-9, 0},
    {"restart", NULL, CS_SIM_IDEAL, 0, 0, 0, 4, "allreduce:rhd;allreduce:ring",
     {4 << 20, 64 << 20, 1 << 20}, 1e-9, 0},
    {"hgx2-nccl", "hgx-h100:nodes=2", CS_SIM_NCCL, 0, 0, 1, 16,
     "allreduce:ring:channels=4;allreduce:nvls_tree;allreduce:dbtree", {1 << 16, 4 << 20, 64 << 20},
     0.01, 0},
};

/* What a hand-made NCCL model charges (the model/ library computes these
 * from NCCL's tables; any values exercise the same paths). */
static const cs_sim_nccl_t nccl_costs = {
    .base_lat = 4e-6,
    .lat = {0.6e-6, 1.5e-6, 3e-6},
    .eff = {0.95, 0.9, 0.92},
    .cap = {1.6e11, 2e10, 4.5e10},
    .sw_eff = 0.9,
    .sw_cap = 1.5e11,
    .sw_lat = 1e-6,
    .sw_rate = 4e10,
    .fused = 1,
};

static cs_platform_t *restart_platform(char *path, size_t len)
{
    const double B = 1e8, S = 64.0 * (1 << 20);
    int node_of[4] = {0, 1, 2, 3};
    cs_plat_calib_node_t nodes[4];
    for (int h = 0; h < 4; h++) {
        nodes[h] = (cs_plat_calib_node_t){"", B, 1e-9, "", S / 8, 0.05};
        snprintf(nodes[h].name, sizeof(nodes[h].name), "node%d", h);
    }
    cs_plat_calib_t p = {.nranks = 4, .nnodes = 4, .node_of = node_of, .nodes = nodes,
                         .intra_bw = 1e10, .intra_lat = 1e-9, .switch_bw = 4 * B,
                         .reduce_speed = 2e9};
    char *xml = NULL;
    cs_err_t err = {0};
    cs_platform_t *plat = NULL;
    NEED(cs_plat_calib_xml(&p, &xml, &err) == CS_OK, "xml: %s", err.msg);
    cs_test_tmp(path, len, "sim_engines_restart.xml");
    FILE *f = fopen(path, "w");
    NEED(f && fputs(xml, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
    free(xml);
    NEED(cs_platform_open(path, &plat, &err) == CS_OK, "platform: %s", err.msg);
    return plat;
}

/* Build a case's schedules: *n of them. */
static int build(const tcase_t *c, cs_sched_t **s, int max)
{
    int n = 0;
    cs_err_t err = {0};
    if (!c->algos) {
        for (int i = 0; i < cs_algo_count() && n < max; i++) {
            const cs_algo_t *a = cs_algo_at(i);
            if (cs_algo_switched(a, NULL))
                continue;
            cs_coll_desc_t d = {a->coll, c->P, 0, 0};
            cs_params_t prm;
            cs_params_init(&prm);
            if (cs_algo_build(a, &d, &prm, &s[n], &err) == CS_OK)
                n++;
        }
        return n;
    }
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", c->algos);
    for (char *save = NULL, *it = strtok_r(buf, ";", &save); it && n < max;
         it = strtok_r(NULL, ";", &save)) {
        char *algo = strchr(it, ':');
        NEED(algo, "bad case %s", it);
        *algo++ = '\0';
        char *params = strchr(algo, ':');
        if (params)
            *params++ = '\0';
        cs_coll_t coll = cs_coll_parse(it);
        const cs_algo_t *a = cs_algo_find(coll, algo);
        NEED(a, "%s %s not registered", it, algo);
        cs_coll_desc_t d = {coll, c->P, 0, 0};
        cs_params_t prm;
        cs_params_init(&prm);
        NEED(!params || cs_params_parse(&prm, params, &err) == CS_OK, "%s", err.msg);
        NEED(cs_algo_build(a, &d, &prm, &s[n], &err) == CS_OK, "%s %s: %s", it, algo,
                        err.msg);
        n++;
    }
    return n;
}

static void child(const tcase_t *c, cs_platform_t *plat, cs_sched_t **s, int ns,
                  cs_sim_engine_t engine, int fd)
{
    static cs_sim_instance_t in[MAXI];
    int n = 0;
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < ns && n < MAXI; j++)
            in[n++] = (cs_sim_instance_t){s[j], c->sizes[k], CS_DT_F32, 0, 0,
                                          c->nccl ? &nccl_costs : NULL};
    cs_sim_observer_t obs = {NULL, NULL, on_step, on_xfer, NULL, on_switch};
    cs_sim_opts_t o;
    cs_sim_opts_init(&o);
    o.model = c->model;
    o.engine = engine;
    o.ports = c->ports;
    o.copy_cost = c->copy_cost;
    o.obs = &obs;
    cs_err_t err = {0};
    R.ok = cs_sim_run(plat, &o, in, n, &err) == CS_OK;
    snprintf(R.msg, sizeof(R.msg), "%s", err.msg);
    R.n = n;
    for (int i = 0; i < n; i++)
        R.time[i] = in[i].time;
    if (R.nx)
        qsort(R.x, R.nx, sizeof(*R.x), cmp_x);
    xrec_t *x = R.x;
    writeall(fd, &R, sizeof(R));
    writeall(fd, x, R.nx * sizeof(*x));
    _exit(0);
}

static int run(const tcase_t *c, cs_platform_t *plat, cs_sched_t **s, int ns,
               cs_sim_engine_t engine, result_t *out)
{
    int p[2];
    NEED(pipe(p) == 0, "pipe");
    fflush(NULL);
    pid_t pid = fork();
    NEED(pid >= 0, "fork");
    if (pid == 0) {
        close(p[0]);
        child(c, plat, s, ns, engine, p[1]);
    }
    close(p[1]);
    int ok = readall(p[0], out, sizeof(*out)) == 0;
    out->x = NULL;
    if (ok) {
        out->x = malloc((out->nx ? out->nx : 1) * sizeof(xrec_t));
        ok = out->x && readall(p[0], out->x, out->nx * sizeof(xrec_t)) == 0;
    }
    close(p[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static double rel(double a, double b)
{
    double m = fmax(fabs(a), fabs(b));
    return m > 0 ? fabs(a - b) / m : 0;
}

static void compare(const tcase_t *c, const result_t *a, const result_t *d, cs_sched_t **s, int ns)
{
    double worst = 0;
    int iw = -1;
    CS_TEST_CHECK(a->ok && d->ok, "%s: actors: %s / dag: %s", c->name, a->ok ? "ok" : a->msg,
                  d->ok ? "ok" : d->msg);
    if (!(a->ok && d->ok))
        return;
    CS_TEST_CHECK(a->n == d->n, "%s: %d vs %d instances", c->name, a->n, d->n);
    for (int i = 0; i < a->n && i < d->n; i++) {
        double e = rel(a->time[i], d->time[i]);
        if (e > worst)
            worst = e, iw = i;
        CS_TEST_CHECK(e <= c->tol, "%s: instance %d (%s %s, %llu B): actors %.12g s, dag %.12g s",
                      c->name, i, cs_coll_name(s[i % ns]->desc.coll), s[i % ns]->algo,
                      (unsigned long long)c->sizes[i / ns], a->time[i], d->time[i]);
    }
    printf("%-24s %3d instances, %zu messages, %zu steps, %zu switch operations; largest time "
           "difference %.2g%s%s\n",
           c->name, a->n, a->nx, a->nsteps, a->nsw, worst, iw >= 0 ? " at " : "",
           iw >= 0 ? s[iw % ns]->algo : "");
    CS_TEST_CHECK(a->nx == d->nx && a->nsteps == d->nsteps && a->nsw == d->nsw,
                  "%s: records: messages %zu/%zu, steps %zu/%zu, switch operations %zu/%zu",
                  c->name, a->nx, d->nx, a->nsteps, d->nsteps, a->nsw, d->nsw);
    CS_TEST_CHECK(a->step_bytes == d->step_bytes && a->sw_bytes == d->sw_bytes,
                  "%s: bytes of steps %llu/%llu, of switch operations %llu/%llu", c->name,
                  (unsigned long long)a->step_bytes, (unsigned long long)d->step_bytes,
                  (unsigned long long)a->sw_bytes, (unsigned long long)d->sw_bytes);
    double ttol = c->loose ? 1e-2 : c->tol > 1e-9 ? c->tol * 50 : 1e-9;
    CS_TEST_CHECK(rel(a->step_end, d->step_end) <= ttol && rel(a->sw_end, d->sw_end) <= ttol &&
                      rel(a->step_compute, d->step_compute) <= 1e-9 &&
                      rel(a->sw_reduce, d->sw_reduce) <= 1e-9,
                  "%s: step durations %.12g/%.12g, compute %.12g/%.12g, switch %.12g/%.12g",
                  c->name, a->step_end, d->step_end, a->step_compute, d->step_compute, a->sw_end,
                  d->sw_end);
    const char *dump = getenv("SIM_ENGINES_DUMP"); /* debugging: an instance's messages */
    for (size_t k = 0; dump && k < a->nx; k++)
        if (a->x[k].inst == atoi(dump))
            fprintf(stderr, "A %d %d %u %u %u %llu %.12g %.12g\n", a->x[k].src, a->x[k].dst, a->x[k].ss,
                    a->x[k].ds, a->x[k].chan, (unsigned long long)a->x[k].bytes, a->x[k].start, a->x[k].end);
    for (size_t k = 0; dump && k < d->nx; k++)
        if (d->x[k].inst == atoi(dump))
            fprintf(stderr, "D %d %d %u %u %u %llu %.12g %.12g\n", d->x[k].src, d->x[k].dst, d->x[k].ss,
                    d->x[k].ds, d->x[k].chan, (unsigned long long)d->x[k].bytes, d->x[k].start, d->x[k].end);
    size_t bad = 0, late = 0;
    for (size_t k = 0; k < a->nx && k < d->nx && a->nx == d->nx; k++) {
        const xrec_t *x = &a->x[k], *y = &d->x[k];
        int same = x->inst == y->inst && x->src == y->src && x->dst == y->dst && x->ss == y->ss &&
                   x->ds == y->ds && x->chan == y->chan && x->bytes == y->bytes;
        double scale = fmax(a->time[x->inst], 1e-6);
        if (!(fabs(x->start - y->start) <= 1e-8 * scale && fabs(x->end - y->end) <= 1e-8 * scale)) {
            late++;
            same = same && c->loose;
        }
        if (!same && bad++ < 3)
            CS_TEST_CHECK(0, "%s: message %zu (instance %d, %s): actors %d->%d steps %u/%u chan %u %llu B %.12g..%.12g,"
                          " dag %d->%d steps %u/%u chan %u %llu B %.12g..%.12g", c->name, k, x->inst, s[x->inst % ns]->algo,
                          x->src, x->dst, x->ss, x->ds, x->chan, (unsigned long long)x->bytes,
                          x->start, x->end, y->src, y->dst, y->ss, y->ds, y->chan,
                          (unsigned long long)y->bytes, y->start, y->end);
    }
    CS_TEST_CHECK(bad == 0, "%s: %zu messages differ", c->name, bad);
    if (late)
        printf("%-24s %zu of %zu messages at other times (instances' times the same)\n", c->name,
               late, a->nx);
}

int main(int argc, char **argv)
{
    const char *filter = argc > 1 ? argv[1] : NULL;
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        const tcase_t *c = &cases[k];
        if (filter && !strstr(c->name, filter))
            continue;
        cs_platform_t *plat = NULL;
        cs_err_t err = {0};
        char path[4096] = "";
        if (c->plat)
            CS_TEST_REQUIRE(cs_platform_open(c->plat, &plat, &err) == CS_OK, "%s: %s", c->plat,
                            err.msg);
        else
            plat = restart_platform(path, sizeof(path));
        static cs_sched_t *s[MAXI / 3];
        int ns = build(c, s, MAXI / 3);
        CS_TEST_REQUIRE(ns > 0, "%s: no schedule", c->name);
        result_t a, d;
        int oka = run(c, plat, s, ns, CS_SIM_ENGINE_ACTORS, &a);
        int okd = run(c, plat, s, ns, CS_SIM_ENGINE_DAG, &d);
        CS_TEST_CHECK(oka && okd, "%s: a child failed (actors %d, dag %d)", c->name, oka, okd);
        if (oka && okd && c->nccl) {
            /* the NCCL model's messages are eager, the dag engine's alone */
            CS_TEST_CHECK(!a.ok && strstr(a.msg, "dag engine"),
                          "%s: actors under the NCCL model: %s", c->name, a.ok ? "ran" : a.msg);
            CS_TEST_CHECK(d.ok && d.n == 3 * ns, "%s: dag: %s", c->name, d.ok ? "ok" : d.msg);
            for (int i = 0; d.ok && i < d.n; i++)
                CS_TEST_CHECK(d.time[i] > 0, "%s: instance %d: %g s", c->name, i, d.time[i]);
            printf("%-24s %3d instances on dag, %zu messages; actors refused\n", c->name, d.n, d.nx);
        } else if (oka && okd) {
            compare(c, &a, &d, s, ns);
        }
        free(a.x);
        free(d.x);
        for (int j = 0; j < ns; j++)
            cs_sched_destroy(s[j]);
        cs_platform_close(plat);
        if (*path)
            remove(path);
    }
    return cs_test_finish();
}
