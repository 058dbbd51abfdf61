/*
 * validate_sim.c - the predictions of `collstep validate` (validate_int.h):
 * rank 0 simulates every (algorithm, size) on platform i in a watched child
 * process (SimGrid starts once per process; core/cs_child.h), copies
 * charged like reductions; the times come back through a pipe.  With --trace the child also writes the
 * simulated traces (DIR/sim-<i>, traces/cs_trace_sim.h) and counts the
 * bytes every instance moves between ranks of one node and between nodes
 * (the live trace's tiers host and network), which come back too.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cs_child.h"
#include "validate_int.h"
#ifdef CS_EXEC_HAVE_TRACES
#include "cs_trace_sim.h"
#endif

/* What comes back per instance. */
typedef struct sim_out {
    double time;
    tier_bytes_t tb;
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
    val_t *v;
    int i;
} sim_job_t;

/* The child (core/cs_child.h): simulate, fill out[algo][size]. */
static int child(void *ctx, void *res, cs_err_t *err)
{
    sim_job_t *job = ctx;
    val_t *v = job->v;
    plat_spec_t *p = &v->o->plats[job->i];
    int n = v->nalgo * v->nsizes;
    cs_sim_instance_t *in = calloc((size_t)n, sizeof(*in));
    sim_out_t *out = res;
    cs_err_t e;
    cs_err_clear(&e);
    int st = in ? CS_OK : cs_err_set(&e, CS_ERR_NOMEM, "out of memory");
    for (int j = 0; j < n && st == CS_OK; j++) {
        in[j].sched = v->sched[j / v->nsizes];
        in[j].bytes = v->sizes[j % v->nsizes];
        in[j].dtype = CS_DT_F32;
    }
    counter_t cnt = {v->l.node_of, out};
    cs_sim_observer_t obs = {&cnt, NULL, NULL, count_xfer, NULL, NULL};
    cs_sim_opts_t so;
    cs_sim_opts_init(&so);
    so.model = p->model;
    so.copy_cost = 1;
#ifdef CS_EXEC_HAVE_TRACES
    cs_trace_session_t *sess = NULL;
    cs_trace_sim_t ts;
    if (st == CS_OK && v->o->trace) {
        cs_trace_opts_t to;
        cs_trace_opts_init(&to);
        to.plot = 0;
        st = cs_trace_session_open(val_trace_sim_dir(v, job->i), &to, n, &sess, &e);
        cs_trace_sim_init(&ts, sess, p->spec, cs_sim_model_name(p->model), &obs);
        so.obs = &ts.obs;
    }
#endif
    if (st == CS_OK)
        st = cs_sim_run(p->plat, &so, in, n, &e);
#ifdef CS_EXEC_HAVE_TRACES
    if (st == CS_OK && sess)
        st = cs_trace_session_commit(sess, &e);
    cs_trace_session_close(sess);
#endif
    if (st != CS_OK)
        fprintf(stderr, "collstep validate: simulating on %s: %s\n", p->spec, e.msg);
    for (int j = 0; j < n && st == CS_OK; j++)
        out[j].time = in[j].time;
    free(in);
    return st == CS_OK ? CS_OK : cs_err_set(err, st, "the simulation on %s failed", p->spec);
}

int val_simulate(val_t *v, int i, double *pred)
{
    cs_err_t *err = &v->l.err;
    plat_spec_t *p = &v->o->plats[i];
    int n = v->nalgo * v->nsizes;
    sim_out_t *res = calloc((size_t)n, sizeof(*res));
    if (!res)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    char what[300];
    snprintf(what, sizeof(what), "the simulation on %s", p->spec);
    sim_job_t job = {v, i};
    int st = cs_child_call(what, child, &job, res, sizeof(*res) * (size_t)n, err);
    for (int j = 0; j < n && st == CS_OK; j++) {
        pred[j] = res[j].time;
        v->sim_tb[(size_t)i * n + j] = res[j].tb;
    }
    free(res);
    return st;
}
