/*
 * plan_run.c - the planner's driver (cs_planner.h, step 4): one shared memory
 * region holds the plan; an analysis child loads the platform in SimGrid
 * (topology, candidates, cost model); worker children (one simulation each,
 * since SimGrid runs one simulation per process) simulate the chosen
 * candidates at the sizes they were chosen for, at most `jobs` at a time,
 * until the budget is spent.  The parent never initialises SimGrid.
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

/* What the children report back, beside the plan itself. */
typedef struct shared_hdr {
    cs_planner_t plan;
    int status;
    char msg[CS_ERR_MSG_MAX];
    int ncosted;
    size_t bytes; /* of the whole mapping */
} shared_hdr_t;

static shared_hdr_t *hdr_of(const cs_planner_t *p) { return (shared_hdr_t *)(uintptr_t)p; }

void cs_planner_free(cs_planner_t *p)
{
    if (p)
        munmap(p, hdr_of(p)->bytes);
}

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

static int analyse(const cs_platform_t *plat, const cs_planner_opts_t *o, shared_hdr_t *h,
                   double deadline)
{
    cs_planner_t *p = &h->plan;
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
     * defaults first, until 40 % of the budget is spent */
    double stop = cs_now_s() + 0.4 * (deadline - cs_now_s());
    for (int pass = 0; pass < 2; pass++)
        for (int c = 0; c < p->ncands; c++) {
            cs_planner_cand_t *x = &p->cands[c];
            if (x->is_default != (pass == 0))
                continue;
            if (pass == 1 && cs_now_s() > stop) {
                snprintf(x->err, sizeof(x->err), "not costed: budget");
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
            if (cs__planner_cost(p, c, o->budget, &err) != CS_OK)
                snprintf(x->err, sizeof(x->err), "%.150s", err.msg);
            h->ncosted++;
            CS_DEBUG("plan", "cost model %s %s: %.2f s, %llu messages, simulation about %.1f s",
                     x->algo, x->params, cs_now_s() - tc0, (unsigned long long)x->messages,
                     x->sim_cost);
            if (o->progress == 1)
                status_line(o, "cost model %d/%d", h->ncosted, p->ncands);
        }
    cs__planner_cost_reset();
    h->status = CS_OK;
    return 0;
}

typedef struct analysis {
    const cs_platform_t *plat;
    const cs_planner_opts_t *o;
    shared_hdr_t *h;
    double deadline;
} analysis_t;

/* The analysis child (core/cs_child.h): 0, or 1 with h->status and h->msg. */
static int analysis_body(void *ctx, int fd, cs_err_t *err)
{
    (void)fd, (void)err;
    const analysis_t *a = ctx;
    return analyse(a->plat, a->o, a->h, a->deadline);
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
    for (int i = 0; i < nk; i++) {
        x->sim_s[ks[i]] = in[i].time;
        if (nm) { /* what the time is made of (routes answer after the run) */
            cs__planner_terms(plat, p, x->map, s, in[i].bytes, &cost[i], &x->terms[ks[i]]);
            x->terms[ks[i]].algo = npair[i][0];
            x->terms[ks[i]].proto = npair[i][1];
        }
    }
    cs_sched_destroy(s);
    return 0;
}

typedef struct worker {
    const cs_platform_t *plat;
    const cs_planner_opts_t *o;
    const cs__planner_model_t *nm;
    cs_planner_t *p;
    const struct job *j;
} worker_t;

/* ---- jobs ---------------------------------------------------------------- */

typedef struct job {
    int cand;
    int ks[CS_PLANNER_MAX_SIZES], nk;
    double cost;
    cs_child_t child;
    int running;
    double started;
} job_t;

static int by_model(const cs_planner_t *p, int k, int *order)
{
    int n = 0;
    for (int c = 0; c < p->ncands; c++)
        if (p->cands[c].model_s[k] >= 0)
            order[n++] = c;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && p->cands[order[j]].model_s[k] < p->cands[order[j - 1]].model_s[k];
             j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    return n;
}

/* A worker child (core/cs_child.h): 0, or 1 with the candidate's err. */
static int worker_body(void *ctx, int fd, cs_err_t *err)
{
    (void)fd, (void)err;
    const worker_t *w = ctx;
    return simulate(w->plat, w->o, w->nm, w->p, w->j->cand, w->j->ks, w->j->nk);
}

/* Jobs in priority order: per size the model's best, then the registry's
 * defaults, then per size the next best up to `top`; one job per candidate
 * with every size it was picked for. */
static int plan_jobs(const cs_planner_t *p, const cs_planner_opts_t *o, job_t *jobs)
{
    int nj = 0, *order = malloc(sizeof(int) * (size_t)p->ncands);
    int *jid = malloc(sizeof(int) * (size_t)p->ncands);
    if (!order || !jid) {
        free(order);
        free(jid);
        return -1;
    }
    for (int c = 0; c < p->ncands; c++)
        jid[c] = -1;
    /* per size: candidates by the model, schedules already picked for the
     * size skipped; `top` of them, more while they tie with the last one
     * (the model cannot tell them apart), at most twice `top` */
    int top = o->exhaustive ? p->ncands : o->top;
    int *pick = malloc(sizeof(int) * (size_t)p->nsizes * (size_t)(2 * top + 1));
    int *npick = calloc((size_t)p->nsizes, sizeof(int));
    if (!pick || !npick) {
        free(pick), free(npick), free(order), free(jid);
        return -1;
    }
    for (int k = 0; k < p->nsizes; k++) {
        int n = by_model(p, k, order), *pk = pick + (size_t)k * (size_t)(2 * top + 1);
        double last = -1;
        for (int i = 0; i < n && npick[k] < 2 * top; i++) {
            const cs_planner_cand_t *x = &p->cands[order[i]];
            if (npick[k] >= top && !(x->model_s[k] <= last * (1 + 1e-9)))
                break;
            int dup = 0;
            for (int j = 0; j < npick[k] && !dup; j++) {
                const cs_planner_cand_t *y = &p->cands[pk[j]];
                dup = x->digest && y->digest == x->digest && y->map == x->map;
            }
            if (dup)
                continue;
            pk[npick[k]++] = order[i];
            last = x->model_s[k];
        }
    }
    for (int pos = 0; pos < 2 * top; pos++) {
        for (int k = 0; k < p->nsizes; k++) {
            if (pos >= npick[k])
                continue;
            int c = pick[(size_t)k * (size_t)(2 * top + 1) + (size_t)pos];
            if (jid[c] < 0) {
                jid[c] = nj;
                memset(&jobs[nj], 0, sizeof(job_t));
                jobs[nj++].cand = c;
            }
            job_t *j = &jobs[jid[c]];
            j->ks[j->nk++] = k;
        }
        /* the registry's defaults at every size: right after the model's
         * best those the model puts within twice the best time at some
         * size, the others after every other pick */
        for (int c = 0; c < p->ncands && (pos == 0 || pos == 2 * top - 1); c++) {
            const cs_planner_cand_t *x = &p->cands[c];
            if (!x->is_default || x->model_s[0] < 0)
                continue;
            int close = 0;
            for (int k = 0; k < p->nsizes; k++) {
                double best = INFINITY;
                for (int d = 0; d < p->ncands; d++)
                    if (p->cands[d].model_s[k] >= 0 && p->cands[d].model_s[k] < best)
                        best = p->cands[d].model_s[k];
                close |= x->model_s[k] <= 2 * best;
            }
            if (close != (pos == 0))
                continue;
            if (jid[c] < 0) {
                jid[c] = nj;
                memset(&jobs[nj], 0, sizeof(job_t));
                jobs[nj++].cand = c;
            }
            job_t *j = &jobs[jid[c]];
            for (int k = 0; k < p->nsizes; k++) {
                int have = 0;
                for (int i = 0; i < j->nk; i++)
                    have |= j->ks[i] == k;
                if (!have)
                    j->ks[j->nk++] = k;
            }
        }
    }
    for (int i = 0; i < nj; i++) {
        const cs_planner_cand_t *x = &p->cands[jobs[i].cand];
        /* one simulation process: its set-up once, each size's run */
        double base = cs__planner_sim_cost(p->ranks, 0, 1);
        jobs[i].cost = base + (x->sim_cost - base) * jobs[i].nk;
        /* sizes in order (the results do not depend on it) */
        for (int a = 1; a < jobs[i].nk; a++)
            for (int b = a; b > 0 && jobs[i].ks[b] < jobs[i].ks[b - 1]; b--) {
                int t = jobs[i].ks[b];
                jobs[i].ks[b] = jobs[i].ks[b - 1];
                jobs[i].ks[b - 1] = t;
            }
    }
    free(pick);
    free(npick);
    free(order);
    free(jid);
    return nj;
}

/* A job before job i whose candidate builds the same schedule (digest) in
 * the same rank order and covers its sizes; -1 when none. */
static int dup_of(const cs_planner_t *p, const job_t *jobs, int i)
{
    const cs_planner_cand_t *x = &p->cands[jobs[i].cand];
    for (int j = 0; j < i; j++) {
        const cs_planner_cand_t *y = &p->cands[jobs[j].cand];
        if (y->map != x->map || !x->digest || y->digest != x->digest)
            continue;
        int same = 1;
        for (int a = 0; a < jobs[i].nk && same; a++) {
            int cov = 0;
            for (int b = 0; b < jobs[j].nk; b++)
                cov |= jobs[j].ks[b] == jobs[i].ks[a];
            same = cov;
        }
        if (same)
            return j;
    }
    return -1;
}

static const char *label(const cs_planner_t *p, const cs_planner_cand_t *x, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s%s%s", x->algo, x->params[0] ? " " : "", x->params,
             x->map ? " map=" : "", x->map ? p->map_name[x->map] : "");
    return buf;
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
    cs_platform_t *plat = NULL;
    int st = cs_platform_open(o->platform, &plat, err);
    if (st != CS_OK)
        return st;
    int P = o->ranks ? o->ranks : (int)plat->ndevices;
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
    size_t bytes = sizeof(shared_hdr_t) + sizeof(cs_planner_cand_t) * CS_PLANNER_MAX_CANDS +
                   (size_t)CS_PLANNER_MAX_MAPS * (size_t)P * CS_PLANNER_HOST_MAX;
    shared_hdr_t *h = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (h == MAP_FAILED) {
        st = cs_err_set(err, CS_ERR_NOMEM, "plan: cannot map %zu bytes: %s", bytes,
                        strerror(errno));
        goto out;
    }
    memset(h, 0, sizeof(*h));
    h->bytes = bytes;
    cs_planner_t *p = &h->plan;
    p->ranks = P;
    p->coll = o->coll;
    p->nsizes = o->nsizes;
    memcpy(p->sizes, o->sizes, sizeof(uint64_t) * (size_t)o->nsizes);
    p->cands = (cs_planner_cand_t *)(h + 1);
    p->hosts = (char *)(p->cands + CS_PLANNER_MAX_CANDS);
    /* model nccl: the system NCCL's tuner sees, its choice per size */
    cs__planner_model_t nmodel, *nm = NULL;
    if (o->model == CS_SIM_NCCL) {
        if ((st = cs__planner_nccl_setup(plat, o, p, &nmodel, err)) != CS_OK)
            goto fail;
        nm = &nmodel;
    }
    h->status = CS_ERR_INTERNAL;
    snprintf(h->msg, sizeof(h->msg), "plan: the analysis process ended without its results");

    /* 1-3: analysis child */
    status_line(o, "analysing %s (%d ranks)%s", o->platform, P, o->progress == 1 ? "" : "");
    analysis_t an = {plat, o, h, deadline};
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

    /* NCCL's choice of every size, simulated first, in at most half of
     * the budget left (the candidates get the rest) */
    if (nm) {
        status_line(o, "simulating %s %s's choice", p->nccl_lib, p->nccl_version);
        if ((st = cs__planner_nccl_run(plat, nm, p, 0.5 * (deadline - cs_now_s()), err)) !=
            CS_OK)
            goto fail;
        if (o->progress == 2)
            status_line(o, "%s %s's choice: %s", p->nccl_lib, p->nccl_version,
                        p->nccl_pick[0].sim_s >= 0 ? "simulated" : p->nccl_pick[0].err);
    }

    /* 4: simulations */
    job_t *jobs = calloc((size_t)p->ncands, sizeof(job_t));
    if (!jobs) {
        st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
        goto fail;
    }
    int nj = plan_jobs(p, o, jobs), next = 0, running = 0, done = 0;
    double spent = 0, predicted = 0, ratio = 1; /* measured over predicted simulation time */
    double analysed = cs_now_s();
    double cheapest = INFINITY;
    for (int i = 0; i < nj; i++)
        if (jobs[i].cost < cheapest)
            cheapest = jobs[i].cost;
    if (nj > 0 && analysed + cheapest > deadline) {
        st = cs_err_set(err, CS_ERR_RANGE, "--budget %g s: the analysis took %.1f s and the "
                        "cheapest simulation needs about %.1f s more; give --budget %.0f or more",
                        o->budget, analysed - t0, cheapest, ceil(analysed - t0 + 2 * cheapest));
        free(jobs);
        goto fail;
    }
    cs_child_t **watch = calloc((size_t)(nj > 0 ? nj : 1), sizeof(*watch));
    int *of = calloc((size_t)(nj > 0 ? nj : 1), sizeof(*of));
    if (!watch || !of) {
        free(watch), free(of), free(jobs);
        st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
        goto fail;
    }
    int stopped = CS_OK; /* CS_ERR_INTERRUPTED: a signal ended the workers */
    while ((next < nj || running > 0) && stopped == CS_OK) {
        /* start what fits in the budget; the budget's end stops it */
        while (running < o->jobs && next < nj) {
            job_t *j = &jobs[next];
            if (dup_of(p, jobs, next) >= 0) { /* the same schedule as a job before it */
                next++;
                continue;
            }
            if (cs_now_s() + j->cost * (ratio > 1 ? ratio : 1) > deadline) {
                snprintf(p->cands[j->cand].err, sizeof(p->cands[0].err),
                         "not simulated: about %.0f s, more than the budget left", j->cost);
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
        job_t *j = &jobs[of[e]];
        j->running = 0;
        running--;
        done++;
        cs_planner_cand_t *x = &p->cands[j->cand];
        cs_err_t ce;
        cs_err_clear(&ce);
        int v = cs_child_end(&j->child, &ce);
        cs_child_free(&j->child);
        int ok = v == 0;
        if (v == CS_ERR_INTERRUPTED) {
            stopped = cs_err_set(err, v, "plan: %s", ce.msg);
        } else if (j->child.timed_out) {
            p->timed_out++;
            snprintf(x->err, sizeof(x->err), "not simulated: stopped at the end of the budget");
        } else if (ok) {
            p->simulated++;
            spent += cs_now_s() - j->started;
            predicted += j->cost;
            ratio = spent / predicted;
        } else if (!x->err[0] && ce.msg[0]) {
            snprintf(x->err, sizeof(x->err), "%.150s", ce.msg);
        } else if (!x->err[0]) {
            snprintf(x->err, sizeof(x->err), "the simulation process failed (exit %d)", v);
        }
        char lb[256];
        if (stopped != CS_OK)
            continue;
        if (o->progress == 2)
            status_line(o, "[%d/%d] %s: %s in %.1f s%s%s", done, nj, label(p, x, lb, sizeof(lb)),
                        ok ? "simulated" : "failed", cs_now_s() - j->started, ok ? "" : ": ",
                        ok ? "" : x->err);
        else
            status_line(o, "simulated %d/%d, %.0f s left", done, nj, deadline - cs_now_s());
    }
    for (int i = 0; i < next; i++) /* after a signal: the others, killed with the first */
        if (jobs[i].running) {
            cs_child_stop(&jobs[i].child);
            cs_child_free(&jobs[i].child);
        }
    free(watch);
    free(of);
    if (stopped != CS_OK) {
        free(jobs);
        st = stopped;
        goto fail;
    }
    if (o->progress == 1)
        fputs("\r\033[K", stderr);
    /* candidates that build the same schedule in the same order share the
     * results of the one simulated */
    for (int c = 0; c < p->ncands; c++) {
        cs_planner_cand_t *x = &p->cands[c];
        for (int d = 0; d < p->ncands && x->digest; d++) {
            const cs_planner_cand_t *y = &p->cands[d];
            if (d == c || y->digest != x->digest || y->map != x->map)
                continue;
            for (int k = 0; k < p->nsizes; k++)
                if (x->sim_s[k] < 0 && y->sim_s[k] >= 0)
                    x->sim_s[k] = y->sim_s[k];
        }
    }
    free(jobs);
    p->seconds = cs_now_s() - t0;
    cs_platform_close(plat);
    *out = p;
    return CS_OK;
fail:
    munmap(h, bytes);
out:
    cs_platform_close(plat);
    return st;
}
