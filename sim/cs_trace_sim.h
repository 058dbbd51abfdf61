/*
 * cs_trace_sim.h - header-only bridge from the simulator's observer
 * (cs_sim.h) to a trace session (traces/cs_trace.h).  It lives with the
 * simulator, which sits above traces/, so cs_traces never depends on the
 * simulator; cs_sim links cs_traces for it.
 *
 *   cs_trace_sim_t ts;
 *   cs_trace_sim_init(&ts, session, "summit", "ideal", other_observer_or_NULL);
 *   opts.obs = &ts.obs;  cs_sim_run(...);
 *   then cs_trace_session_commit(session, &err).
 *
 * Per instance: instance_begin starts a trace (metadata from the instance's
 * schedule), step, xfer and switch records feed it (a switch operation's
 * transfers to and from the switch are transfers like messages, keyed by
 * the switch's negative rank), routes come from cs_sim_route,
 * instance_end finishes and writes it.  Errors inside callbacks are parked
 * in the session (cs_trace_session_status / commit report them); after one,
 * records are ignored.  Every callback is also forwarded to `chain`.
 */
#ifndef CS_TRACE_SIM_H
#define CS_TRACE_SIM_H

#include <stdio.h>
#include <string.h>

#include "cs_sim.h"
#include "cs_trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cs_trace_sim {
    cs_sim_observer_t obs; /* hand &obs to cs_sim_opts_t.obs */
    cs_trace_session_t *session;
    const cs_sim_observer_t *chain;
    const char *platform, *model;
    int failed;
} cs_trace_sim_t;

static inline int cs__trace_sim_route(void *ctx, const char *src, const char *dst,
                                      cs_trace_hop_t *hops, int max, int *n)
{
    (void)ctx;
    cs_sim_link_t links[32];
    int cnt = 0, st = cs_sim_route(src, dst, links, max < 32 ? max : 32, &cnt, NULL);
    if (st != CS_OK)
        return st;
    if (cnt > 32 && max >= cnt)
        return CS_ERR_UNSUPPORTED; /* routes of more than 32 links */
    for (int i = 0; i < cnt && i < max; i++) {
        hops[i].name = links[i].name;
        hops[i].tier = links[i].tier;
        hops[i].bandwidth = links[i].bandwidth;
        hops[i].latency = links[i].latency;
    }
    *n = cnt;
    return CS_OK;
}

static inline void cs__trace_sim_fail(cs_trace_sim_t *ts, int st, const char *what)
{
    cs_err_t e = {0, {0}};
    cs_err_set(&e, st, "trace: %s failed: %s", what, cs_status_str(st));
    cs_trace_session_fail(ts->session, &e);
    ts->failed = 1;
}

static inline void cs__trace_sim_begin(void *ctx, int inst, const cs_sim_instance_t *in, double t0)
{
    cs_trace_sim_t *ts = (cs_trace_sim_t *)ctx;
    if (!ts->failed) {
        cs_trace_meta_t m;
        memset(&m, 0, sizeof(m));
        m.backend = CS_TRACE_SIM;
        snprintf(m.platform, sizeof(m.platform), "%s", ts->platform ? ts->platform : "");
        snprintf(m.model, sizeof(m.model), "%s", ts->model ? ts->model : "");
        snprintf(m.coll, sizeof(m.coll), "%s", cs_coll_name(in->sched->desc.coll));
        snprintf(m.algo, sizeof(m.algo), "%s", in->sched->algo[0] ? in->sched->algo : "schedule");
        m.bytes = in->bytes;
        m.nranks = in->sched->desc.nranks;
        cs_err_t e = {0, {0}};
        if (cs_trace_session_begin(ts->session, &m, t0, cs__trace_sim_route, NULL, NULL, &e) !=
            CS_OK) {
            cs_trace_session_fail(ts->session, &e);
            ts->failed = 1;
        }
    }
    if (ts->chain && ts->chain->instance_begin)
        ts->chain->instance_begin(ts->chain->ctx, inst, in, t0);
}

static inline void cs__trace_sim_step(void *ctx, int inst, const cs_sim_step_rec_t *r)
{
    cs_trace_sim_t *ts = (cs_trace_sim_t *)ctx;
    cs_trace_t *t = cs_trace_session_current(ts->session);
    if (t && !ts->failed) {
        cs_trace_step_t s = {r->rank, r->step, r->kind, r->peer, r->bytes, r->start, r->end};
        int st = cs_trace_add_step(t, &s);
        if (st == CS_OK && r->compute > 0)
            st = cs_trace_add_compute(t, r->rank, r->compute);
        if (st != CS_OK)
            cs__trace_sim_fail(ts, st, "recording a step");
    }
    if (ts->chain && ts->chain->step)
        ts->chain->step(ts->chain->ctx, inst, r);
}

static inline void cs__trace_sim_xfer(void *ctx, int inst, const cs_sim_xfer_rec_t *r)
{
    cs_trace_sim_t *ts = (cs_trace_sim_t *)ctx;
    cs_trace_t *t = cs_trace_session_current(ts->session);
    if (t && !ts->failed) {
        int st = cs_trace_add_xfer(t, r->src, r->dst, r->src_host, r->dst_host, r->bytes,
                                   r->start, r->end);
        if (st != CS_OK)
            cs__trace_sim_fail(ts, st, "recording a transfer");
    }
    if (ts->chain && ts->chain->xfer)
        ts->chain->xfer(ts->chain->ctx, inst, r);
}

static inline void cs__trace_sim_switch(void *ctx, int inst, const cs_sim_switch_rec_t *r)
{
    static const char *const ops[] = {"allreduce", "reduce", "multicast"};
    cs_trace_sim_t *ts = (cs_trace_sim_t *)ctx;
    cs_trace_t *t = cs_trace_session_current(ts->session);
    if (t && !ts->failed) {
        cs_trace_switch_op_t o = {r->host, r->op >= 0 && r->op < 3 ? ops[r->op] : "switch",
                                  r->nmembers, r->bytes_up, r->bytes_down, r->start, r->end,
                                  r->reduce};
        int st = cs_trace_add_switch(t, &o);
        if (st != CS_OK)
            cs__trace_sim_fail(ts, st, "recording a switch operation");
    }
    if (ts->chain && ts->chain->switch_op)
        ts->chain->switch_op(ts->chain->ctx, inst, r);
}

static inline void cs__trace_sim_end(void *ctx, int inst, const cs_sim_instance_t *in, double t_end)
{
    cs_trace_sim_t *ts = (cs_trace_sim_t *)ctx;
    if (!ts->failed && cs_trace_session_current(ts->session)) {
        cs_err_t e = {0, {0}};
        if (cs_trace_session_end(ts->session, t_end, &e) != CS_OK) {
            cs_trace_session_fail(ts->session, &e);
            ts->failed = 1;
        }
    }
    if (ts->chain && ts->chain->instance_end)
        ts->chain->instance_end(ts->chain->ctx, inst, in, t_end);
}

static inline void cs_trace_sim_init(cs_trace_sim_t *ts, cs_trace_session_t *session,
                                     const char *platform, const char *model,
                                     const cs_sim_observer_t *chain)
{
    memset(ts, 0, sizeof(*ts));
    ts->session = session;
    ts->platform = platform;
    ts->model = model;
    ts->chain = chain;
    ts->obs.ctx = ts;
    ts->obs.instance_begin = cs__trace_sim_begin;
    ts->obs.step = cs__trace_sim_step;
    ts->obs.xfer = cs__trace_sim_xfer;
    ts->obs.instance_end = cs__trace_sim_end;
    ts->obs.switch_op = cs__trace_sim_switch;
}

#ifdef __cplusplus
}
#endif

#endif /* CS_TRACE_SIM_H */
