/*
 * validate_live.c - the live half of `collstep validate` (validate_int.h):
 * per algorithm an engine, per size --warmup untimed runs and --iters
 * timed runs, each started at a common moment (timed_start).  Every rank
 * records its start and end on CLOCK_MONOTONIC shifted onto rank 0's clock
 * (cs_engine_clock_align), the CPU time it spent (getrusage: the process
 * with its threads) and the time its engine's thread waited for a core
 * while it could run (the run-queue wait of /proc/thread-self/schedstat:
 * what a machine with fewer cores than ranks costs); a run's time is the
 * last end minus the first start (the simulator starts all ranks together:
 * a rank that starts late counts from the first one's start), its skew the
 * last start minus the first.  With --trace the last timed run of every
 * size is traced (exec/cs_live_trace.h) into DIR/live/<algo>.
 */
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cs_engine.h"
#include "cs_fit.h"
#include "cs_intr.h"
#ifdef CS_EXEC_HAVE_TRACES
#include "cs_live_trace.h"
#endif
#include "validate_int.h"

/* Seconds this thread waited for a core while runnable (Linux schedstat:
 * run time, run-queue wait, slices); 0 where there is none. */
static double runq_wait_now(void)
{
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    unsigned long long run = 0, wait = 0;
    int ok = f && fscanf(f, "%llu %llu", &run, &wait) == 2;
    if (f)
        fclose(f);
    return ok ? (double)wait * 1e-9 : 0;
}

static double cpu_now(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

#define START_LEAD 0.005 /* s: the first lead of a timed start */
#define START_LEAD_MAX 1.0

/* This rank's clock on rank 0's, seconds. */
static double aligned_now(const val_t *v)
{
    return (double)((int64_t)cs_engine_now_ns() + v->offset_ns) * 1e-9;
}

/* A common start: rank 0 names a moment `lead` ahead on its clock (every
 * rank's clock is aligned to it), the bootstrap's allgather carries it
 * (and each other rank's lateness at the previous start), and every rank
 * waits for it.  A barrier alone releases the ranks one at a time: on the
 * emulated cluster (8 ranks on 2 cores) the last rank started 1-31 ms after
 * the first, a wait the simulation, whose ranks all start at 0, never
 * sees.  A rank that learns the moment after it passed starts at once and
 * reports how late it was; rank 0 then lengthens the lead (twice, plus the
 * lateness, up to START_LEAD_MAX), and halves it again (down to
 * START_LEAD) after a start nobody was late for.  A moment further ahead
 * than START_LEAD_MAX plus a second means the clock alignment is wrong:
 * the rank fails rather than wait (its peers then fail on losing it).
 * v->starts: allocated by val_live. */
static int timed_start(val_t *v, cs_err_t *err)
{
    double mine = v->l.rank == 0 ? aligned_now(v) + v->lead : v->late;
    int st = cs_boot_allgather(v->l.boot, &mine, sizeof(mine), v->starts, err);
    if (st != CS_OK)
        return st;
    double at = v->starts[0], now = aligned_now(v);
    if (v->l.rank == 0) {
        double worst = now > at ? now - at : 0; /* its own, and the others' last time */
        for (int r = 1; r < v->l.nranks; r++)
            worst = v->starts[r] > worst ? v->starts[r] : worst;
        v->lead = worst > 0 ? fmin(2 * v->lead + worst, START_LEAD_MAX)
                            : fmax(v->lead / 2, START_LEAD);
    }
    v->late = now > at ? now - at : 0;
    if (at - now > START_LEAD_MAX + 1)
        return cs_err_set(err, CS_ERR_INTERNAL, "rank %d: the common start is %.1f s ahead on "
                          "its clock aligned to rank 0's: the clock alignment is wrong",
                          v->l.rank, at - now);
    while ((now = aligned_now(v)) < at) {
        if (cs_intr_pending())
            return cs_err_set(err, CS_ERR_INTERRUPTED, "rank %d: interrupted", v->l.rank);
        if (at - now > 0.02) { /* sleep through a long wait, yield-spin its last 15-20
                                  ms: a rank woken from a sleep can wait a scheduler
                                  slice (ms) for a core its peers hold */
            struct timespec ts = {0, 5000000};
            nanosleep(&ts, NULL);
        } else {
            sched_yield();
        }
    }
    return CS_OK;
}

/* The statistics of one size from every rank's [start, end] per run. */
static void summarize(val_t *v, const double *all, int n, double *t, double *sk, meas_t *m)
{
    int N = v->l.nranks, W = 2 * n + 2; /* per rank: n (start, end), cpu, run-queue wait */
    double cpu = 0, rq = 0;
    for (int i = 0; i < n; i++) {
        double s0 = INFINITY, s1 = -INFINITY, e1 = -INFINITY;
        for (int r = 0; r < N; r++) {
            const double *x = all + (size_t)r * W + 2 * i;
            s0 = x[0] < s0 ? x[0] : s0;
            s1 = x[0] > s1 ? x[0] : s1;
            e1 = x[1] > e1 ? x[1] : e1;
        }
        t[i] = e1 - s0;
        sk[i] = s1 - s0;
    }
    for (int r = 0; r < N; r++)
        cpu += all[(size_t)r * W + 2 * n], rq += all[(size_t)r * W + 2 * n + 1];
    m->cpu = cpu / N / n;
    m->runq = rq / N / n;
    m->skew = cs_fit_median(sk, n);
    m->p10 = cs_fit_quantile(t, n, 0.1);
    m->p90 = cs_fit_quantile(t, n, 0.9);
    m->med = cs_fit_quantile(t, n, 0.5);
    m->lo = t[0], m->hi = t[n - 1];
}

/* One size of one algorithm: warmup, timed runs (the last one recorded
 * when `traced`), statistics on every rank. */
static int live_size(val_t *v, cs_engine_t *e, uint64_t bytes, int traced, meas_t *m)
{
    cs_err_t *err = &v->l.err;
    uint64_t count = cs_coll_block_count(v->coll, v->l.nranks, bytes, cs_dtype_size(CS_DT_F32));
    int n = (int)v->o->iters, W = 2 * n + 2, st = CS_OK;
    double *mine = calloc((size_t)W, sizeof(double));
    double *all = calloc((size_t)W * v->l.nranks, sizeof(double));
    double *t = calloc((size_t)n, sizeof(double)), *sk = calloc((size_t)n, sizeof(double));
    if (!mine || !all || !t || !sk)
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    for (long i = 0; i < v->o->warmup && st == CS_OK; i++)
        st = cs_engine_run(e, count, err);
    double cpu = 0, rq = 0;
    for (int i = 0; i < n && st == CS_OK; i++) {
        if (traced && i == n - 1)
            cs_engine_record_times(e, 1);
        st = timed_start(v, err);
        double cpu0 = cpu_now(), rq0 = runq_wait_now();
        uint64_t t0 = cs_engine_now_ns();
        if (st == CS_OK)
            st = cs_engine_run(e, count, err);
        uint64_t t1 = cs_engine_now_ns();
        cpu += cpu_now() - cpu0, rq += runq_wait_now() - rq0;
        mine[2 * i] = (double)((int64_t)t0 + v->offset_ns) * 1e-9;
        mine[2 * i + 1] = (double)((int64_t)t1 + v->offset_ns) * 1e-9;
    }
    cs_engine_record_times(e, 0);
    mine[2 * n] = cpu; /* the runs only: not the waits for their start */
    mine[2 * n + 1] = rq;
    if (st == CS_OK)
        st = cs_boot_allgather(v->l.boot, mine, sizeof(double) * (size_t)W, all, err);
    if (st == CS_OK)
        summarize(v, all, n, t, sk, m);
    free(mine);
    free(all);
    free(t);
    free(sk);
    return st;
}

/* One algorithm: its engine, (its trace), every size. */
static int live_algo(val_t *v, int a, uint64_t hi)
{
    cs_err_t *err = &v->l.err, e2;
    cs_engine_t *e = NULL;
    cs_engine_config_t ec = {CS_DT_F32, CS_OP_SUM, cs_coll_block_count(v->coll, v->l.nranks, hi, 4),
                             v->o->live.timeout, v->l.oversubscribed};
    int st = cs_engine_create(v->sched[a], v->l.rank, v->l.tp, &ec, &e, err);
    cs_err_clear(&e2);
    int ast = cs_boot_agree(v->l.boot, st, "setting up the engine", &e2);
    if (st == CS_OK && ast != CS_OK)
        st = ast, *err = e2;
#ifdef CS_EXEC_HAVE_TRACES
    cs_live_trace_t *lt = NULL;
    if (st == CS_OK && v->o->trace) {
        char transport[96];
        cs_live_transport_name(&v->o->live, transport, sizeof(transport));
        int served = 0;
        for (int k = 0; k < v->nsizes; k++)
            served += val_serves(v, a, k);
        cs_live_trace_config_t tc = {val_trace_live_dir(v, a), {0}, NULL, 0, 0, transport,
                                     served, v->o->live.timeout};
        cs_trace_opts_init(&tc.opts);
        tc.opts.plot = 0;
        st = cs_live_trace_open(&tc, v->l.boot, v->l.tp, v->sched[a], CS_DT_F32, &lt, err);
    }
#endif
    for (int k = 0; k < v->nsizes && st == CS_OK; k++) {
        meas_t *m = &v->meas[a * v->nsizes + k];
        if (!val_serves(v, a, k))
            continue;
        st = live_size(v, e, v->sizes[k], v->o->trace != NULL, m);
#ifdef CS_EXEC_HAVE_TRACES
        if (st == CS_OK && lt)
            st = cs_live_trace_record(lt, e, v->sizes[k],
                                      cs_coll_block_count(v->coll, v->l.nranks, v->sizes[k], 4),
                                      err);
#endif
        if (st == CS_OK && v->l.rank == 0 && isatty(2))
            fprintf(stderr, "\rcollstep validate: %s %llu B: %.1f us   ", v->sched[a]->algo,
                    (unsigned long long)v->sizes[k], m->med * 1e6);
    }
#ifdef CS_EXEC_HAVE_TRACES
    if (st == CS_OK && lt)
        st = cs_live_trace_commit(lt, err);
    cs_live_trace_close(lt);
#endif
    cs_engine_destroy(e);
    return st;
}

int val_live(val_t *v)
{
    v->lead = START_LEAD;
    v->starts = calloc((size_t)v->l.nranks, sizeof(double));
    int st = v->starts ? cs_job_connect(&v->l) : cs_err_set(&v->l.err, CS_ERR_NOMEM,
                                                             "out of memory");
    if (st == CS_OK)
        st = cs_engine_clock_align(v->l.tp, 20, v->o->live.timeout, &v->offset_ns, &v->l.err);
    uint64_t hi = 0;
    for (int k = 0; k < v->nsizes; k++)
        hi = v->sizes[k] > hi ? v->sizes[k] : hi;
    for (int a = 0; a < v->nalgo && st == CS_OK; a++)
        st = live_algo(v, a, hi);
    if (v->l.rank == 0 && isatty(2))
        fputc('\n', stderr);
    return st;
}
