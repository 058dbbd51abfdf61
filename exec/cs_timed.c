/*
 * cs_timed.c - the timed runs of a live job, back to back or on aligned
 * clocks (contract in cs_timed.h).
 */
#include "cs_timed.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "cs_intr.h"

#define START_LEAD 0.005 /* s: the first lead of a common start */
#define START_LEAD_MAX 1.0

struct cs_timed {
    cs_timed_mode_t mode;
    cs_boot_t *boot;
    int rank, nranks;
    int64_t offset_ns; /* this rank's clock to rank 0's */
    double lead, late; /* rank 0's lead, s; this rank's lateness at the last start */
    double *starts;    /* [nranks]: the start allgather's buffer */
};

int cs_timed_open(cs_timed_mode_t mode, cs_boot_t *boot, cs_tp_t *tp, double timeout_s,
                  cs_timed_t **out, cs_err_t *err)
{
    cs_timed_t *t = calloc(1, sizeof(*t));
    if (t)
        t->starts = calloc((size_t)cs_boot_size(boot), sizeof(double));
    if (!t || !t->starts) {
        cs_timed_close(t);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    }
    t->mode = mode, t->boot = boot, t->lead = START_LEAD;
    t->rank = cs_boot_rank(boot), t->nranks = cs_boot_size(boot);
    int st = CS_OK;
    if (mode == CS_TIMED_ALIGNED)
        st = cs_engine_clock_align(tp, 20, timeout_s, &t->offset_ns, err);
    if (st != CS_OK) {
        cs_timed_close(t);
        return st;
    }
    *out = t;
    return CS_OK;
}

void cs_timed_close(cs_timed_t *t)
{
    if (!t)
        return;
    free(t->starts);
    free(t);
}

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

/* This rank's clock on rank 0's, seconds. */
static double aligned_now(const cs_timed_t *t)
{
    return (double)((int64_t)cs_engine_now_ns() + t->offset_ns) * 1e-9;
}

/* A common start (cs_timed.h): rank 0's moment and the others' lateness
 * at the previous start travel in one allgather; every rank waits. */
static int common_start(cs_timed_t *t, cs_err_t *err)
{
    double mine = t->rank == 0 ? aligned_now(t) + t->lead : t->late;
    int st = cs_boot_allgather(t->boot, &mine, sizeof(mine), t->starts, err);
    if (st != CS_OK)
        return st;
    double at = t->starts[0], now = aligned_now(t);
    if (t->rank == 0) {
        double worst = now > at ? now - at : 0; /* its own, and the others' last time */
        for (int r = 1; r < t->nranks; r++)
            worst = t->starts[r] > worst ? t->starts[r] : worst;
        t->lead = worst > 0 ? fmin(2 * t->lead + worst, START_LEAD_MAX)
                            : fmax(t->lead / 2, START_LEAD);
    }
    t->late = now > at ? now - at : 0;
    if (at - now > START_LEAD_MAX + 1)
        return cs_err_set(err, CS_ERR_INTERNAL, "rank %d: the common start is %.1f s ahead on "
                          "its clock aligned to rank 0's: the clock alignment is wrong",
                          t->rank, at - now);
    while ((now = aligned_now(t)) < at) {
        if (cs_intr_pending())
            return cs_err_set(err, CS_ERR_INTERRUPTED, "rank %d: interrupted", t->rank);
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

/* Back to back: a barrier, then nothing but the runs between two clock
 * reads. */
static int back_to_back(cs_timed_t *t, cs_engine_t *e, uint64_t count, long iters, int trace_last,
                        cs_timed_res_t *res, cs_err_t *err)
{
    int st = cs_boot_barrier(t->boot, err);
    uint64_t t0 = cs_engine_now_ns();
    for (long i = 0; i < iters && st == CS_OK; i++) {
        if (trace_last && i == iters - 1)
            cs_engine_record_times(e, 1); /* the traced run: the last one */
        st = cs_engine_run(e, count, err);
    }
    res->mean = (double)(cs_engine_now_ns() - t0) * 1e-9 / (double)iters;
    return st;
}

/* Aligned: every run after a common start, its ends on rank 0's clock. */
static int aligned(cs_timed_t *t, cs_engine_t *e, uint64_t count, long iters, int trace_last,
                   cs_timed_res_t *res, cs_err_t *err)
{
    double cpu = 0, rq = 0;
    int st = CS_OK;
    for (long i = 0; i < iters && st == CS_OK; i++) {
        if (trace_last && i == iters - 1)
            cs_engine_record_times(e, 1);
        st = common_start(t, err);
        double cpu0 = cpu_now(), rq0 = runq_wait_now();
        uint64_t t0 = cs_engine_now_ns();
        if (st == CS_OK)
            st = cs_engine_run(e, count, err);
        uint64_t t1 = cs_engine_now_ns();
        cpu += cpu_now() - cpu0, rq += runq_wait_now() - rq0;
        res->start[i] = (double)((int64_t)t0 + t->offset_ns) * 1e-9;
        res->end[i] = (double)((int64_t)t1 + t->offset_ns) * 1e-9;
    }
    res->cpu = cpu; /* the runs only: not the waits for their start */
    res->runq = rq;
    return st;
}

int cs_timed_run(cs_timed_t *t, cs_engine_t *e, uint64_t count, long warmup, long iters,
                 int trace_last, cs_timed_res_t *res, cs_err_t *err)
{
    int st = CS_OK;
    for (long i = 0; i < warmup && st == CS_OK; i++)
        st = cs_engine_run(e, count, err);
    if (st == CS_OK)
        st = t->mode == CS_TIMED_ALIGNED ? aligned(t, e, count, iters, trace_last, res, err)
                                         : back_to_back(t, e, count, iters, trace_last, res, err);
    cs_engine_record_times(e, 0);
    return st;
}

int cs_timed_gather(cs_timed_t *t, const cs_timed_res_t *res, long iters, double *run_s,
                    double *skew_s, double *cpu, double *runq, cs_err_t *err)
{
    int N = t->nranks, n = (int)iters, W = 2 * n + 2; /* per rank: n (start, end), cpu, runq */
    double *mine = calloc((size_t)W, sizeof(double));
    double *all = calloc((size_t)W * (size_t)N, sizeof(double));
    int st = mine && all ? CS_OK : cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n && st == CS_OK; i++)
        mine[2 * i] = res->start[i], mine[2 * i + 1] = res->end[i];
    if (st == CS_OK) {
        mine[2 * n] = res->cpu, mine[2 * n + 1] = res->runq;
        st = cs_boot_allgather(t->boot, mine, sizeof(double) * (size_t)W, all, err);
    }
    for (int i = 0; i < n && st == CS_OK; i++) {
        double s0 = INFINITY, s1 = -INFINITY, e1 = -INFINITY;
        for (int r = 0; r < N; r++) {
            const double *x = all + (size_t)r * W + 2 * i;
            s0 = x[0] < s0 ? x[0] : s0;
            s1 = x[0] > s1 ? x[0] : s1;
            e1 = x[1] > e1 ? x[1] : e1;
        }
        run_s[i] = e1 - s0;
        skew_s[i] = s1 - s0;
    }
    if (st == CS_OK) {
        double c = 0, q = 0;
        for (int r = 0; r < N; r++)
            c += all[(size_t)r * W + 2 * n], q += all[(size_t)r * W + 2 * n + 1];
        *cpu = c / N / n;
        *runq = q / N / n;
    }
    free(mine);
    free(all);
    return st;
}

int cs_timed_slowest(cs_boot_t *boot, double mean, uint64_t count, double *slowest,
                     long long *sum, cs_err_t *err)
{
    int n = cs_boot_size(boot);
    struct {
        double t;
        uint64_t count;
    } mine = {mean, count}, *all = calloc((size_t)n, sizeof(mine));
    if (!all)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    int st = cs_boot_allgather(boot, &mine, sizeof(mine), all, err);
    *slowest = 0, *sum = 0;
    for (int r = 0; r < n && st == CS_OK; r++) {
        *slowest = all[r].t > *slowest ? all[r].t : *slowest;
        *sum += (long long)all[r].count;
    }
    free(all);
    return st;
}
