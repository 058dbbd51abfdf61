/*
 * validate_sim.c - the predictions of a validation (cs_validate.h): rank 0
 * simulates every (algorithm, size) on platform p in a watched child
 * process (SimGrid starts once per process; core/cs_child.h), copies
 * charged like reductions; the times come back through a pipe.  The
 * child also counts the bytes every case moves between ranks of one node
 * and between nodes (the live trace's tiers host and network), and with
 * v->trace writes the simulated traces (DIR/sim-<p+1>,
 * traces/cs_trace_sim.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "cs_child.h"
#include "validate_int.h"
#ifdef CS_EXEC_HAVE_TRACES
#include "cs_trace_sim.h"
#endif

/* What comes back per case. */
typedef struct sim_out {
    double time;
    cs_validate_bytes_t tb;
} sim_out_t;

typedef struct counter {
    const int *node_of;
    sim_out_t *out;
} counter_t;

static void count_xfer(void *ctx, int inst, const cs_sim_xfer_rec_t *r)
{
    counter_t *c = ctx;
    if (c->node_of[r->src] == c->node_of[r->dst])
        c->out[inst].tb.host += (double)r->bytes;
    else
        c->out[inst].tb.network += (double)r->bytes;
}

typedef struct sim_job {
    const cs_validate_t *v;
    int p;
} sim_job_t;

/* The child (core/cs_child.h): simulate, fill out[algo][size]. */
static int child(void *ctx, void *res, cs_err_t *err)
{
    const sim_job_t *job = ctx;
    const cs_validate_t *v = job->v;
    const cs_validate_plat_t *p = &v->plats[job->p];
    int n = v->nalgo * v->nsizes;
    cs_sim_instance_t *in = calloc((size_t)n, sizeof(*in));
    sim_out_t *out = res;
    int st = in ? CS_OK : cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    for (int j = 0; j < n && st == CS_OK; j++) {
        in[j].sched = v->sched[j / v->nsizes];
        in[j].bytes = v->sizes[j % v->nsizes];
        in[j].dtype = CS_DT_F32;
        if (p->model == CS_SIM_NCCL)
            in[j].nccl = p->nccl ? &p->nccl[j] : NULL;
    }
    counter_t cnt = {v->node_of, out};
    cs_sim_observer_t obs = {&cnt, NULL, NULL, count_xfer, NULL, NULL};
    cs_sim_opts_t so;
    cs_sim_opts_init(&so);
    so.model = p->model;
    so.copy_cost = 1;
    so.tier_bw_scale = p->tier_bw_scale;
#ifdef CS_EXEC_HAVE_TRACES
    cs_trace_session_t *sess = NULL;
    cs_trace_sim_t ts;
    if (st == CS_OK && v->trace) {
        char dir[4200];
        cs__validate_sim_dir(v, job->p, dir, sizeof(dir));
        cs_trace_opts_t to;
        cs_trace_opts_init(&to);
        to.plot = 0;
        st = cs_trace_session_open(dir, &to, n, &sess, err);
        cs_trace_sim_init(&ts, sess, p->spec, cs_sim_model_name(p->model), &obs);
        so.obs = &ts.obs;
    }
#endif
    if (st == CS_OK)
        st = cs_sim_run(p->plat, &so, in, n, err);
#ifdef CS_EXEC_HAVE_TRACES
    if (st == CS_OK && sess)
        st = cs_trace_session_commit(sess, err);
    cs_trace_session_close(sess);
#endif
    for (int j = 0; j < n && st == CS_OK; j++)
        out[j].time = in[j].time;
    free(in);
    if (st != CS_OK) {
        cs_err_t e = *err;
        cs_err_set(err, st, "the simulation on %s failed: %s", p->spec, e.msg);
    }
    return st;
}

int cs_validate_predict(cs_validate_t *v, int p, cs_err_t *err)
{
    int n = v->nalgo * v->nsizes;
    if (p < 0 || p >= v->nplats || !v->plats[p].plat || !v->pred)
        return cs_err_set(err, CS_ERR_INVAL, "validate: platform %d: %s", p + 1,
                          !v->pred ? "no results allocated" : "not open");
    const cs_validate_plat_t *ps = &v->plats[p];
    sim_out_t *res = calloc(n ? (size_t)n : 1, sizeof(*res));
    if (!res)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    char what[300];
    snprintf(what, sizeof(what), "the simulation on %s", ps->spec);
    sim_job_t job = {v, p};
    int st = cs_child_call(what, child, &job, res, sizeof(*res) * (size_t)n, err);
    for (int j = 0; j < n && st == CS_OK; j++) {
        v->pred[(size_t)p * n + j] = res[j].time;
        v->bytes[(size_t)p * n + j] = res[j].tb;
    }
    free(res);
    return st;
}
