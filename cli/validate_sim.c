/*
 * validate_sim.c - the predictions of `collstep validate` (validate_int.h):
 * rank 0 simulates every (algorithm, size) on platform i in a child process
 * (SimGrid starts once per process), copies charged like reductions; the
 * times come back through a pipe.  With --trace the child also writes the
 * simulated traces (DIR/sim-<i>, traces/cs_trace_sim.h) and counts the
 * bytes every instance moves between ranks of one node and between nodes
 * (the live trace's tiers host and network), which come back too.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cs_intr.h"
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

/* The child: simulate, write the results to fd.  Returns its exit code. */
static int child(val_t *v, int i, int fd)
{
    plat_spec_t *p = &v->o->plats[i];
    int n = v->nalgo * v->nsizes;
    cs_sim_instance_t *in = calloc((size_t)n, sizeof(*in));
    sim_out_t *out = calloc((size_t)n, sizeof(*out));
    cs_err_t e;
    cs_err_clear(&e);
    int st = in && out ? CS_OK : cs_err_set(&e, CS_ERR_NOMEM, "out of memory");
    for (int j = 0; j < n && st == CS_OK; j++) {
        in[j].sched = v->sched[j / v->nsizes];
        in[j].bytes = v->sizes[j % v->nsizes];
        in[j].dtype = CS_DT_F32;
    }
    counter_t cnt = {v->l.node_of, out};
    cs_sim_observer_t obs = {&cnt, NULL, NULL, count_xfer, NULL};
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
        st = cs_trace_session_open(val_trace_sim_dir(v, i), &to, n, &sess, &e);
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
    for (int j = 0; j < n && st == CS_OK; j++) {
        out[j].time = in[j].time;
        if (write(fd, &out[j], sizeof(out[j])) != (ssize_t)sizeof(out[j]))
            st = CS_ERR_IO;
    }
    free(in);
    free(out);
    return st == CS_OK ? 0 : 3;
}

int val_simulate(val_t *v, int i, double *pred)
{
    cs_err_t *err = &v->l.err;
    plat_spec_t *p = &v->o->plats[i];
    int n = v->nalgo * v->nsizes, fd[2];
    sim_out_t *res = calloc((size_t)n, sizeof(*res));
    if (!res)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    if (pipe(fd) != 0) {
        free(res);
        return cs_err_set(err, CS_ERR_IO, "pipe: %s", strerror(errno));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        free(res);
        close(fd[0]);
        close(fd[1]);
        return cs_err_set(err, CS_ERR_IO, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fd[0]);
        _exit(child(v, i, fd[1]));
    }
    close(fd[1]);
    size_t want = sizeof(*res) * (size_t)n, got = 0;
    while (got < want) {
        ssize_t r = read(fd[0], (char *)res + got, want - got);
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
    for (int j = 0; j < n && got == want; j++) {
        pred[j] = res[j].time;
        v->sim_tb[(size_t)i * n + j] = res[j].tb;
    }
    free(res);
    if (cs_intr_pending())
        return cs_err_set(err, CS_ERR_INTERRUPTED, "interrupted");
    if (got != want || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
        return cs_err_set(err, CS_ERR_INTERNAL, "the simulation on %s failed%s", p->spec,
                          WIFSIGNALED(ws) ? " (crashed)" : "");
    return CS_OK;
}
