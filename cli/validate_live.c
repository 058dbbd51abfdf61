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
#include <stdlib.h>
#include <unistd.h>

#include "cs_engine.h"
#include "cs_fit.h"
#include "cs_timed.h"
#ifdef CS_EXEC_HAVE_TRACES
#include "cs_live_trace.h"
#endif
#include "validate_int.h"

/* The statistics of one size from the runs' times over the job. */
static void summarize(double *t, double *sk, int n, double cpu, double runq, meas_t *m)
{
    m->cpu = cpu;
    m->runq = runq;
    m->skew = cs_fit_median(sk, n);
    m->p10 = cs_fit_quantile(t, n, 0.1);
    m->p90 = cs_fit_quantile(t, n, 0.9);
    m->med = cs_fit_quantile(t, n, 0.5);
    m->lo = t[0], m->hi = t[n - 1];
}

/* One size of one algorithm: warmup, timed runs on aligned clocks (the
 * last one recorded when `traced`), statistics on every rank. */
static int live_size(val_t *v, cs_engine_t *e, uint64_t bytes, int traced, meas_t *m)
{
    cs_err_t *err = &v->l.err;
    uint64_t count = cs_coll_block_count(v->coll, v->l.nranks, bytes, cs_dtype_size(CS_DT_F32));
    int n = (int)v->o->iters, st = CS_OK;
    double *t = calloc((size_t)n, sizeof(double)), *sk = calloc((size_t)n, sizeof(double));
    cs_timed_res_t res = {0, calloc((size_t)n, sizeof(double)), calloc((size_t)n, sizeof(double)),
                          0, 0};
    if (!t || !sk || !res.start || !res.end)
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    if (st == CS_OK)
        st = cs_timed_run(v->timed, e, count, v->o->warmup, n, traced, &res, err);
    double cpu = 0, runq = 0;
    if (st == CS_OK)
        st = cs_timed_gather(v->timed, &res, n, t, sk, &cpu, &runq, err);
    if (st == CS_OK)
        summarize(t, sk, n, cpu, runq, m);
    free(res.start);
    free(res.end);
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
    int st = cs_job_connect(&v->l);
    if (st == CS_OK)
        st = cs_timed_open(CS_TIMED_ALIGNED, v->l.boot, v->l.tp, v->o->live.timeout, &v->timed,
                           &v->l.err);
    uint64_t hi = 0;
    for (int k = 0; k < v->nsizes; k++)
        hi = v->sizes[k] > hi ? v->sizes[k] : hi;
    for (int a = 0; a < v->nalgo && st == CS_OK; a++)
        st = live_algo(v, a, hi);
    if (v->l.rank == 0 && isatty(2))
        fputc('\n', stderr);
    return st;
}
