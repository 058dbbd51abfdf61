/*
 * plan_run.c - the planner's driver (cs_planner.h, step 4): one shared memory
 * region holds the plan (plan_part.c); an analysis child loads the platform
 * in SimGrid (topology, candidates, cost model); worker children (one
 * simulation each, since SimGrid runs one simulation per process) simulate
 * this process's share of the simulations in their fixed order
 * (plan_jobs.c), at most `jobs` at a time.  The budget is a guard: what it
 * stops is marked cut.  The parent never initialises SimGrid.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cs_algo.h"
#include "cs_child.h"
#include "cs_log.h"
#include "cs_planner_int.h"
#include "cs_platform.h"
#include "cs_sim.h"
#include "cs_time.h"

double cs_planner_time(const cs_planner_t *p, int c, int k)
{
    const cs_planner_cand_t *x = &p->cands[c];
    return x->sim_s[k] >= 0 ? x->sim_s[k] : x->model_s[k];
}

int cs_planner_choice(const cs_planner_t *p, int k)
{
    int best = -1, sim = 0;
    for (int c = 0; c < p->ncands; c++) {
        const cs_planner_cand_t *x = &p->cands[c];
        int s = x->sim_s[k] >= 0;
        if (!s && x->model_s[k] < 0)
            continue;
        if (best < 0 || (s && !sim) ||
            (s == sim && cs_planner_time(p, c, k) < cs_planner_time(p, best, k)))
            best = c, sim = s;
    }
    return best;
}

int cs_planner_ring(const cs_planner_t *p)
{
    for (int c = 0; c < p->ncands; c++)
        if (p->cands[c].is_default && strcmp(p->cands[c].algo, "ring") == 0)
            return c;
    return -1;
}

static void status_line(const cs_planner_opts_t *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void status_line(const cs_planner_opts_t *o, const char *fmt, ...)
{
    if (!o->progress)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, o->progress == 1 ? "\r\033[Kcollstep plan: " : "collstep plan: ");
    vfprintf(stderr, fmt, ap);
    if (o->progress == 2)
        fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
}

/* ---- the analysis child -------------------------------------------------- */

static int analyse(const cs_platform_t *plat, const cs_planner_opts_t *o, cs_planner_t *p,
                   double deadline)
{
    cs__planner_status_t *h = cs__planner_status(p);
    cs_err_t err;
    cs_err_clear(&err);
    cs_sim_opts_t so;
    cs_sim_opts_init(&so);
    so.model = o->model;
    int st = cs_sim_run(plat, &so, NULL, 0, &err); /* loads the platform: routes answer */
    double ta = cs_now_s();
    if (st == CS_OK)
        st = cs__planner_topology(plat, p, &err);
    CS_DEBUG("plan", "platform loaded and analysed in %.2f s", cs_now_s() - ta);
    if (st == CS_OK)
        st = cs__planner_candidates(plat, p, &err);
    if (st != CS_OK) {
        h->status = st;
        snprintf(h->msg, sizeof(h->msg), "%s", err.msg);
        return 1;
    }
    /* the bound (p->bound_s) is the topology analysis's (plan_links.c) */
    /* cost model: cheapest schedules first would be unfair; registry order,
     * defaults first; the budget's guard stops it at 40 % of the budget */
    cs__planner_net_t *net = cs__planner_net_new();
    if (!net) {
        h->status = CS_ERR_NOMEM;
        snprintf(h->msg, sizeof(h->msg), "plan: out of memory");
        return 1;
    }
    double stop = cs_now_s() + 0.4 * (deadline - cs_now_s());
    for (int pass = 0; pass < 2; pass++)
        for (int c = 0; c < p->ncands; c++) {
            cs_planner_cand_t *x = &p->cands[c];
            if (x->is_default != (pass == 0))
                continue;
            if (pass == 1 && cs_now_s() > stop) {
                snprintf(x->err, sizeof(x->err), "not costed: the budget ran out");
                x->cut = 1;
                continue;
            }
            /* variants of a default that cannot be simulated in the budget
             * have more messages still: the model alone would rank them */
            const cs_planner_cand_t *d = NULL;
            for (int k = 0; pass == 1 && k < p->ncands; k++)
                if (p->cands[k].is_default && strcmp(p->cands[k].algo, x->algo) == 0)
                    d = &p->cands[k];
            if (d && d->sim_cost > o->budget) {
                snprintf(x->err, sizeof(x->err), "not costed: the defaults of %s need about "
                         "%.0f s to simulate, more than the budget", x->algo, d->sim_cost);
                continue;
            }
            /* pipelining and channels multiply the default's messages */
            double grow = 1;
            const char *v;
            if ((v = strstr(x->params, "nchunks=")) != NULL) {
                const char *dv = strstr(d ? d->params : "", "nchunks=");
                long dn = dv ? strtol(dv + 8, NULL, 10) : 1;
                grow *= (double)strtol(v + 8, NULL, 10) / (double)(dn > 0 ? dn : 1);
            }
            if ((v = strstr(x->params, "channels=")) != NULL)
                grow *= (double)strtol(v + 9, NULL, 10);
            if (d && (double)d->messages * grow > CS__PLANNER_MAX_MESSAGES) {
                snprintf(x->err, sizeof(x->err), "not costed: about %.0f messages",
                         (double)d->messages * grow);
                continue;
            }
            cs_err_clear(&err);
            double tc0 = cs_now_s();
            if (cs__planner_cost(net, p, c, o->budget, &err) != CS_OK)
                snprintf(x->err, sizeof(x->err), "%.150s", err.msg);
            h->ncosted++;
            CS_DEBUG("plan", "cost model %s %s: %.2f s, %llu messages, simulation about %.1f s",
                     x->algo, x->params, cs_now_s() - tc0, (unsigned long long)x->messages,
                     x->sim_cost);
            if (o->progress == 1)
                status_line(o, "cost model %d/%d", h->ncosted, p->ncands);
        }
    cs__planner_net_free(net);
    h->status = CS_OK;
    return 0;
}

typedef struct analysis {
    const cs_platform_t *plat;
    const cs_planner_opts_t *o;
    cs_planner_t *p;
    double deadline;
} analysis_t;

/* The analysis child (core/cs_child.h): 0, or 1 with h->status and h->msg. */
static int analysis_body(void *ctx, int fd, cs_err_t *err)
{
    (void)fd, (void)err;
    const analysis_t *a = ctx;
    return analyse(a->plat, a->o, a->p, a->deadline);
}

/* ---- a simulation worker -------------------------------------------------- */

static int simulate(const cs_platform_t *plat, const cs_planner_opts_t *o,
                    const cs__planner_model_t *nm, cs_planner_t *p, int c, const int *ks, int nk)
{
    cs_planner_cand_t *x = &p->cands[c];
    cs_sched_t *s = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    if (cs__planner_build(p, x, &s, &err) != CS_OK) {
        snprintf(x->err, sizeof(x->err), "%.150s", err.msg);
        return 1;
    }
    cs_sim_instance_t in[CS_PLANNER_MAX_SIZES];
    cs_sim_nccl_t cost[CS_PLANNER_MAX_SIZES];
    int npair[CS_PLANNER_MAX_SIZES][2];
    for (int i = 0; i < nk; i++) {
        memset(&in[i], 0, sizeof(in[i]));
        in[i].sched = s;
        in[i].bytes = p->sizes[ks[i]];
        in[i].dtype = CS_DT_F32;
        if (nm) { /* what NCCL pays for the algorithm the schedule stands for */
            cs__planner_nccl_costs(nm, s, in[i].bytes, &cost[i], &npair[i][0], &npair[i][1]);
            in[i].nccl = &cost[i];
        }
    }
    char **hm = NULL;
    cs__planner_net_t *net = NULL;
    cs_sim_opts_t so;
    cs_sim_opts_init(&so);
    so.model = o->model;
    if (nm)
        so.tier_bw_scale = nm->scale;
    if (x->map > 0) {
        hm = malloc(sizeof(char *) * (size_t)p->ranks);
        if (!hm)
            return 1;
        for (int r = 0; r < p->ranks; r++)
            hm[r] = cs_planner_host(p, x->map, r);
        so.map = (const char *const *)hm;
        so.nmap = p->ranks;
    }
    int st = cs_sim_run(plat, &so, in, nk, &err);
    free(hm);
    if (st != CS_OK) {
        cs_sched_destroy(s);
        snprintf(x->err, sizeof(x->err), "%.150s", err.msg);
        return 1;
    }
    if (nm)
        net = cs__planner_net_new();
    for (int i = 0; i < nk; i++) {
        x->sim_s[ks[i]] = in[i].time;
        if (nm) { /* what the time is made of (routes answer after the run) */
            cs__planner_terms(net, plat, p, x->map, s, in[i].bytes, &cost[i], &x->terms[ks[i]]);
            x->terms[ks[i]].algo = npair[i][0];
            x->terms[ks[i]].proto = npair[i][1];
        }
    }
    cs__planner_net_free(net);
    cs_sched_destroy(s);
    return 0;
}

typedef struct worker {
    const cs_platform_t *plat;
    const cs_planner_opts_t *o;
    const cs__planner_model_t *nm;
    cs_planner_t *p;
    const cs__planner_job_t *j;
} worker_t;

/* A worker child (core/cs_child.h): 0, or 1 with the candidate's err. */
static int worker_body(void *ctx, int fd, cs_err_t *err)
{
    (void)fd, (void)err;
    const worker_t *w = ctx;
    return simulate(w->plat, w->o, w->nm, w->p, w->j->cand, w->j->ks, w->j->nk);
}


static const char *label(const cs_planner_t *p, const cs_planner_cand_t *x, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s%s%s", x->algo, x->params[0] ? " " : "", x->params,
             x->map ? " map=" : "", x->map ? p->map_name[x->map] : "");
    return buf;
}

/* Whether simulation `job` of the order is this process's to run. */
static int mine(const cs_planner_opts_t *o, int job)
{
    return o->nshards <= 1 || job % o->nshards == o->shard;
}

/* Step 4: this process's share of the simulations, `jobs` at a time, in
 * their order; those that the deadline stops or leaves unstarted are cut.
 * CS_OK, or CS_ERR_INTERRUPTED when a signal ended the workers. */
static int run_jobs(const cs_platform_t *plat, const cs_planner_opts_t *o,
                    const cs__planner_model_t *nm, cs_planner_t *p, cs__planner_job_t *jobs,
                    int nj, double deadline, cs_err_t *err)
{
    cs_child_t **watch = calloc((size_t)(nj > 0 ? nj : 1), sizeof(*watch));
    int *of = calloc((size_t)(nj > 0 ? nj : 1), sizeof(*of));
    if (!watch || !of) {
        free(watch), free(of);
        return cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
    }
    int next = 0, running = 0, done = 0, total = 0, stopped = CS_OK;
    for (int i = 0; i < nj; i++)
        total += mine(o, i);
    while ((next < nj || running > 0) && stopped == CS_OK) {
        while (running < o->jobs && next < nj) {
            cs__planner_job_t *j = &jobs[next];
            if (!mine(o, next)) {
                next++;
                continue;
            }
            if (cs_now_s() >= deadline) { /* the guard: not started */
                cs_planner_cand_t *x = &p->cands[j->cand];
                snprintf(x->err, sizeof(x->err), "not simulated: the budget ran out first");
                x->cut = 1;
                next++;
                continue;
            }
            worker_t wk = {plat, o, nm, p, j};
            if (cs_child_start(&j->child, "the simulation process",
                               fmax(deadline - cs_now_s(), 1e-3), worker_body, &wk,
                               NULL) != CS_OK)
                break;
            j->running = 1;
            j->started = cs_now_s();
            running++;
            next++;
        }
        if (running == 0)
            break;
        /* only the workers started here: a program calling the planner
         * keeps its own children */
        int nw = 0;
        for (int i = 0; i < next; i++)
            if (jobs[i].running)
                of[nw] = i, watch[nw++] = &jobs[i].child;
        int e = cs_child_poll(watch, nw, 200);
        if (e < 0)
            continue;
        cs__planner_job_t *j = &jobs[of[e]];
        j->running = 0;
        running--;
        done++;
        cs_planner_cand_t *x = &p->cands[j->cand];
        cs_err_t ce;
        cs_err_clear(&ce);
        int v = cs_child_end(&j->child, &ce);
        cs_child_free(&j->child);
        if (v == CS_ERR_INTERRUPTED) {
            stopped = cs_err_set(err, v, "plan: %s", ce.msg);
            continue;
        }
        if (j->child.timed_out) {
            snprintf(x->err, sizeof(x->err), "not simulated: stopped when the budget ran out");
            x->cut = 1;
            for (int k = 0; k < p->nsizes; k++) /* what it wrote before it was stopped */
                x->sim_s[k] = -1;
        } else if (v != 0 && !x->err[0]) {
            if (ce.msg[0])
                snprintf(x->err, sizeof(x->err), "%.150s", ce.msg);
            else
                snprintf(x->err, sizeof(x->err), "the simulation process failed (exit %d)", v);
        }
        char lb[256];
        if (o->progress == 2)
            status_line(o, "[%d/%d] %s: %s in %.1f s%s%s", done, total,
                        label(p, x, lb, sizeof(lb)), v == 0 ? "simulated" : "failed",
                        cs_now_s() - j->started, v == 0 ? "" : ": ", v == 0 ? "" : x->err);
        else
            status_line(o, "simulated %d/%d, %.0f s left", done, total, deadline - cs_now_s());
    }
    for (int i = 0; i < next; i++) /* after a signal: the others, killed with the first */
        if (jobs[i].running) {
            cs_child_stop(&jobs[i].child);
            cs_child_free(&jobs[i].child);
        }
    free(watch);
    free(of);
    if (stopped == CS_OK && o->progress == 1)
        fputs("\r\033[K", stderr);
    return stopped;
}

int cs_planner_run(const cs_planner_opts_t *o, cs_planner_t **out, cs_err_t *err)
{
    *out = NULL;
    /* the deadline keeps a margin for writing the results */
    double t0 = cs_now_s(), deadline = t0 + o->budget - fmin(1.0, 0.05 * o->budget);
    if (!(o->budget > 0))
        return cs_err_set(err, CS_ERR_RANGE, "--budget: expected a positive number of seconds");
    if (o->nsizes < 1 || o->nsizes > CS_PLANNER_MAX_SIZES)
        return cs_err_set(err, CS_ERR_INVAL, "plan: 1 to %d sizes", CS_PLANNER_MAX_SIZES);
    if (o->nshards > 1 && (o->shard < 0 || o->shard >= o->nshards))
        return cs_err_set(err, CS_ERR_INVAL, "plan: shard %d of %d: expected 0 to %d", o->shard,
                          o->nshards, o->nshards - 1);
    cs_platform_t *plat = NULL;
    int st = cs_platform_open(o->platform, &plat, err);
    if (st != CS_OK)
        return st;
    int P = o->ranks ? o->ranks : (int)plat->ndevices;
    cs_planner_t *p = NULL;
    if ((uint64_t)P > plat->ndevices) {
        st = cs_err_set(err, CS_ERR_INVAL, "%d ranks but %s has only %llu %s", P, plat->name,
                        (unsigned long long)plat->ndevices, plat->rank_noun);
        goto out;
    }
    char un[1024];
    uint64_t nun = 0;
    if (cs_platform_unroutable_note(plat, (uint64_t)P, 3, un, sizeof(un), &nun)) {
        st = cs_err_set(err, CS_ERR_INVAL, "%s: %llu pair%s of the %d ranks %s no route both "
                        "ways (%s); the plan's candidates send between every pair: give a "
                        "platform whose ranks all reach each other", o->platform,
                        (unsigned long long)nun, nun == 1 ? "" : "s", P,
                        nun == 1 ? "has" : "have", un);
        goto out;
    }
    if (P < 2) {
        st = cs_err_set(err, CS_ERR_INVAL, "%s has %d rank%s: a collective on one rank moves "
                        "no data, there is nothing to plan%s", o->platform, P, P == 1 ? "" : "s",
                        o->ranks ? "" : " (give a platform with more devices)");
        goto out;
    }
    int nalg = 0;
    for (int i = 0; i < cs_algo_count(); i++)
        nalg += cs_algo_at(i)->coll == o->coll;
    if (nalg == 0) {
        st = cs_err_set(err, CS_ERR_NOTFOUND, "the registry has no algorithm for %s (see "
                        "'collstep algos')", cs_coll_name(o->coll));
        goto out;
    }
    if (!(p = cs__planner_alloc(P))) {
        st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
        goto out;
    }
    cs__planner_status_t *h = cs__planner_status(p);
    snprintf(p->platform, sizeof(p->platform), "%s", o->platform);
    p->model = o->model;
    p->coll = o->coll;
    /* the sizes as they move: whole float elements (per rank for the
     * collectives that move blocks), rounded down as nccl-tests and `collstep
     * sim` round them, each once */
    p->nsizes = 0;
    for (int k = 0; k < o->nsizes; k++) {
        uint64_t count = cs_coll_block_count(o->coll, P, o->sizes[k], sizeof(float));
        uint64_t v = count * sizeof(float) * (cs_coll_blocked(o->coll) ? (uint64_t)P : 1);
        if (v == 0) {
            st = cs_err_set(err, CS_ERR_INVAL, "--size %llu: %s on %d ranks moves whole blocks "
                            "of one float element per rank (%d bytes); nothing would move",
                            (unsigned long long)o->sizes[k], cs_coll_name(o->coll), P,
                            (int)sizeof(float) * P);
            goto fail;
        }
        int dup = 0;
        for (int j = 0; j < p->nsizes && !dup; j++)
            dup = p->sizes[j] == v;
        if (!dup)
            p->sizes[p->nsizes++] = v;
    }
    p->shard = o->nshards > 1 ? o->shard : 0;
    p->nshards = o->nshards > 1 ? o->nshards : 1;
    p->input = cs__planner_input(o, plat, P);
    /* the system NCCL's tuner sees, its choice per size (a reference row
     * under any model); model nccl: what the candidates' steps pay */
    cs__planner_model_t nmodel, *nm = NULL;
    if ((st = cs__planner_nccl_setup(plat, o, p, &nmodel, err)) != CS_OK)
        goto fail;
    if (o->model == CS_SIM_NCCL)
        nm = &nmodel;
    h->status = CS_ERR_INTERNAL;
    snprintf(h->msg, sizeof(h->msg), "plan: the analysis process ended without its results");

    /* 1-3: analysis child */
    status_line(o, "analysing %s (%d ranks)", o->platform, P);
    analysis_t an = {plat, o, p, deadline};
    cs_child_t ac;
    cs_err_t ce;
    cs_err_clear(&ce);
    st = cs_child_run(&ac, "plan: the analysis process", 0, analysis_body, &an, &ce);
    cs_child_free(&ac);
    if (st != CS_OK && st != 1) { /* it died, or was interrupted */
        cs_err_set(err, st, "%s", ce.msg);
        goto fail;
    }
    if (h->status != CS_OK) {
        st = h->status;
        cs_err_set(err, st, "%s", h->msg);
        goto fail;
    }
    int ncosted = 0;
    for (int c = 0; c < p->ncands; c++)
        ncosted += p->cands[c].model_s[0] >= 0;
    if (ncosted == 0) {
        st = cs_err_set(err, CS_ERR_NOTFOUND, "no candidate for %s on %d ranks could be built "
                        "(%s)", cs_coll_name(o->coll), P, p->ncands ? p->cands[0].err : "none");
        goto fail;
    }
    cs__planner_job_t *jobs = calloc((size_t)p->ncands, sizeof(*jobs));
    double cheapest = INFINITY, analysed = cs_now_s();
    int nj = jobs ? cs__planner_jobs(p, o, jobs, &cheapest) : -1;
    if (nj < 0) {
        free(jobs);
        st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
        goto fail;
    }
    if (cheapest < INFINITY && analysed + cheapest > deadline) {
        st = cs_err_set(err, CS_ERR_RANGE, "--budget %g s: the analysis took %.1f s and the "
                        "cheapest simulation needs about %.1f s more; give --budget %.0f or more",
                        o->budget, analysed - t0, cheapest, ceil(analysed - t0 + 2 * cheapest));
        free(jobs);
        goto fail;
    }

    /* NCCL's choice of every size (the last shard's), simulated first, in
     * at most half of the budget left (the candidates get the rest) */
    if (p->nccl_ref && p->shard == p->nshards - 1) {
        status_line(o, "simulating %s %s's choice", p->nccl_lib, p->nccl_version);
        if ((st = cs__planner_nccl_run(plat, &nmodel, p, 0.5 * (deadline - cs_now_s()), err)) !=
            CS_OK) {
            free(jobs);
            goto fail;
        }
        if (o->progress == 2)
            status_line(o, "%s %s's choice: %s", p->nccl_lib, p->nccl_version,
                        p->nccl_pick[0].sim_s >= 0 ? "simulated" : p->nccl_pick[0].err);
    }

    /* 4: simulations */
    st = run_jobs(plat, o, nm, p, jobs, nj, deadline, err);
    free(jobs);
    if (st != CS_OK)
        goto fail;
    if (p->nshards == 1)
        cs__planner_finish(p);
    p->seconds = cs_now_s() - t0;
    cs_platform_close(plat);
    *out = p;
    return CS_OK;
fail:
    cs_planner_free(p);
out:
    cs_platform_close(plat);
    return st;
}
