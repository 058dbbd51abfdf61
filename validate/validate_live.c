/*
 * validate_live.c - the live runs of a validation (cs_validate.h): per
 * algorithm an engine, per size the warm-up and the timed runs on aligned
 * clocks (exec/cs_timed.h, CS_TIMED_ALIGNED): every rank records its
 * start and end on rank 0's clock, the CPU time it spent (the process
 * with its threads) and the time its engine's thread waited for a core
 * while it could run (what a machine with fewer cores than ranks costs);
 * a run's time is the last end minus the first start, its skew the last
 * start minus the first.  With v->trace the last timed run of every size
 * is traced (exec/cs_live_trace.h) into DIR/live/<algo>.
 */
#include <stdlib.h>

#include "cs_engine.h"
#include "cs_fit.h"
#include "cs_timed.h"
#ifdef CS_EXEC_HAVE_TRACES
#include "cs_live_trace.h"
#endif
#include "validate_int.h"

/* The statistics of one size from the runs' times over the job. */
static void summarize(double *t, double *sk, int n, double cpu, double runq,
                      cs_validate_meas_t *m)
{
    m->cpu = cpu;
    m->runq = runq;
    m->skew = cs_fit_median(sk, n);
    m->p10 = cs_fit_quantile(t, n, 0.1);
    m->p90 = cs_fit_quantile(t, n, 0.9);
    m->med = cs_fit_quantile(t, n, 0.5);
    m->lo = t[0], m->hi = t[n - 1]; /* sorted by the quantiles */
}

/* One size of one algorithm: warm-up, timed runs (the last one recorded
 * when `traced`), statistics on every rank. */
static int live_size(const cs_validate_t *v, cs_timed_t *timed, cs_engine_t *e, uint64_t count,
                     int traced, cs_validate_meas_t *m, cs_err_t *err)
{
    int n = (int)v->iters, st = CS_OK;
    double *t = calloc((size_t)n, sizeof(double)), *sk = calloc((size_t)n, sizeof(double));
    cs_timed_res_t res = {0, calloc((size_t)n, sizeof(double)), calloc((size_t)n, sizeof(double)),
                          0, 0};
    if (!t || !sk || !res.start || !res.end)
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    if (st == CS_OK)
        st = cs_timed_run(timed, e, count, v->warmup, n, traced, &res, err);
    double cpu = 0, runq = 0;
    if (st == CS_OK)
        st = cs_timed_gather(timed, &res, n, t, sk, &cpu, &runq, err);
    if (st == CS_OK)
        summarize(t, sk, n, cpu, runq, m);
    free(res.start);
    free(res.end);
    free(t);
    free(sk);
    return st;
}

/* One algorithm: its engine, (its trace), every size it serves. */
static int live_algo(cs_validate_t *v, cs_job_t *job, cs_timed_t *timed, int a, uint64_t hi,
                     cs_err_t *err)
{
    cs_err_t e2;
    cs_engine_t *e = NULL;
    cs_engine_config_t ec = {CS_DT_F32, CS_OP_SUM, cs_coll_block_count(v->coll, job->nranks, hi, 4),
                             v->timeout_s, job->oversubscribed};
    int st = cs_engine_create(v->sched[a], job->rank, job->tp, &ec, &e, err);
    cs_err_clear(&e2);
    int ast = cs_boot_agree(job->boot, st, "setting up the engine", &e2);
    if (st == CS_OK && ast != CS_OK)
        st = ast, *err = e2;
#ifdef CS_EXEC_HAVE_TRACES
    cs_live_trace_t *lt = NULL;
    if (st == CS_OK && v->trace) {
        char dir[4200];
        cs__validate_live_dir(v, a, dir, sizeof(dir));
        int served = 0;
        for (int k = 0; k < v->nsizes; k++)
            served += cs_validate_serves(v, a, k);
        cs_live_trace_config_t tc = {dir, {0}, NULL, 0, 0, v->transport, served, v->timeout_s};
        cs_trace_opts_init(&tc.opts);
        tc.opts.plot = 0;
        st = cs_live_trace_open(&tc, job->boot, job->tp, v->sched[a], CS_DT_F32, &lt, err);
    }
#else
    if (st == CS_OK && v->trace)
        st = cs_err_set(err, CS_ERR_UNSUPPORTED, "traces: collstep was built without traces/");
#endif
    for (int k = 0; k < v->nsizes && st == CS_OK; k++) {
        cs_validate_meas_t *m = &v->meas[a * v->nsizes + k];
        if (!cs_validate_serves(v, a, k))
            continue;
        uint64_t count = cs_coll_block_count(v->coll, job->nranks, v->sizes[k], 4);
        st = live_size(v, timed, e, count, v->trace, m, err);
#ifdef CS_EXEC_HAVE_TRACES
        if (st == CS_OK && lt)
            st = cs_live_trace_record(lt, e, v->sizes[k], count, err);
#endif
        if (st == CS_OK && v->progress)
            v->progress(v->progress_ctx, a, k, m);
    }
#ifdef CS_EXEC_HAVE_TRACES
    if (st == CS_OK && lt)
        st = cs_live_trace_commit(lt, err);
    cs_live_trace_close(lt);
#endif
    cs_engine_destroy(e);
    return st;
}

int cs_validate_live(cs_validate_t *v, cs_job_t *job, cs_err_t *err)
{
    cs_timed_t *timed = NULL;
    int st = CS_OK;
    if (v->iters < 1 || v->warmup < 0 || !v->meas)
        st = cs_err_set(err, CS_ERR_INVAL, "validate: %s", !v->meas ? "no results allocated"
                                                             : "iters must be >= 1, warmup >= 0");
    if (st == CS_OK)
        st = cs_timed_open(CS_TIMED_ALIGNED, job->boot, job->tp, v->timeout_s, &timed, err);
    uint64_t hi = 0;
    for (int k = 0; k < v->nsizes; k++)
        hi = v->sizes[k] > hi ? v->sizes[k] : hi;
    for (int a = 0; a < v->nalgo && st == CS_OK; a++)
        st = live_algo(v, job, timed, a, hi, err);
    cs_timed_close(timed);
    return st;
}
