/*
 * plan_jobs.c - the order of the planner's simulations (cs_planner.h, step
 * 4): which candidates are simulated, at which sizes, in which order.  A
 * function of the analysis alone (the cost model's times, the candidates'
 * digests and predicted simulation costs) and of the options, never of
 * the clock, so that the same inputs give the same plan.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_planner_int.h"

typedef cs__planner_job_t job_t;

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

/* Jobs in priority order: per size the model's best, then the registry's
 * defaults, then per size the next best up to `top`; one job per candidate
 * with every size it was picked for. */
static int prio_jobs(const cs_planner_t *p, const cs_planner_opts_t *o, job_t *jobs)
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
     * (the model cannot tell them apart), at most twice `top`; then the
     * model's best of every algorithm not picked yet that the model puts
     * within twice the size's best: the model ranks the variants of one
     * algorithm better than it ranks algorithms against each other (a
     * pipelined tree across nodes it puts 2x too slow), so each
     * algorithm's best candidate is simulated */
    int top = o->exhaustive ? p->ncands : o->top;
    int cap = 2 * top + 1 + p->ncands;
    int *pick = malloc(sizeof(int) * (size_t)p->nsizes * (size_t)cap);
    int *npick = calloc((size_t)p->nsizes, sizeof(int));
    if (!pick || !npick) {
        free(pick), free(npick), free(order), free(jid);
        return -1;
    }
    int most = 2 * top; /* positions: at least the old 2 x top, so the defaults come last */
    for (int k = 0; k < p->nsizes; k++) {
        int n = by_model(p, k, order), *pk = pick + (size_t)k * (size_t)cap;
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
        double best = n > 0 ? p->cands[order[0]].model_s[k] : -1;
        for (int i = 0; i < n && best >= 0; i++) {
            const cs_planner_cand_t *x = &p->cands[order[i]];
            if (!(x->model_s[k] <= 2 * best))
                break;
            int seen = 0;
            for (int j = 0; j < npick[k] && !seen; j++)
                seen = strcmp(p->cands[pk[j]].algo, x->algo) == 0;
            if (!seen)
                pk[npick[k]++] = order[i];
        }
        if (npick[k] > most)
            most = npick[k];
    }
    for (int pos = 0; pos < most; pos++) {
        for (int k = 0; k < p->nsizes; k++) {
            if (pos >= npick[k])
                continue;
            int c = pick[(size_t)k * (size_t)cap + (size_t)pos];
            if (jid[c] < 0) {
                jid[c] = nj;
                memset(&jobs[nj], 0, sizeof(*jobs));
                jobs[nj++].cand = c;
            }
            job_t *j = &jobs[jid[c]];
            j->ks[j->nk++] = k;
        }
        /* the registry's defaults at every size: right after the model's
         * best those the model puts within twice the best time at some
         * size, the others after every other pick */
        for (int c = 0; c < p->ncands && (pos == 0 || pos == most - 1); c++) {
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
                memset(&jobs[nj], 0, sizeof(*jobs));
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
    free(pick);
    free(npick);
    free(order);
    free(jid);
    return nj;
}

/* One of jobs[0 .. n) whose candidate builds the same schedule (digest)
 * in the same rank order as job *ji's and covers its sizes; -1 when none. */
static int dup_of(const cs_planner_t *p, const job_t *jobs, int n, const job_t *ji)
{
    const cs_planner_cand_t *x = &p->cands[ji->cand];
    for (int j = 0; j < n; j++) {
        const cs_planner_cand_t *y = &p->cands[jobs[j].cand];
        if (y->map != x->map || !x->digest || y->digest != x->digest)
            continue;
        int same = 1;
        for (int a = 0; a < ji->nk && same; a++) {
            int cov = 0;
            for (int b = 0; b < jobs[j].nk; b++)
                cov |= jobs[j].ks[b] == ji->ks[a];
            same = cov;
        }
        if (same)
            return j;
    }
    return -1;
}

int cs__planner_jobs(cs_planner_t *p, const cs_planner_opts_t *o, cs__planner_job_t *jobs,
                     double *cheapest)
{
    *cheapest = INFINITY;
    for (int c = 0; c < p->ncands; c++)
        p->cands[c].job = -1;
    int nj = prio_jobs(p, o, jobs);
    if (nj < 0)
        return -1;
    double base = cs__planner_sim_cost(p->ranks, 0, 1);
    int n = 0;
    for (int i = 0; i < nj; i++) {
        cs_planner_cand_t *x = &p->cands[jobs[i].cand];
        if (dup_of(p, jobs, n, &jobs[i]) >= 0) /* the same schedule as one before it */
            continue;
        /* one simulation process: its set-up once, each size's run */
        jobs[i].cost = base + (x->sim_cost - base) * jobs[i].nk;
        if (jobs[i].cost < *cheapest)
            *cheapest = jobs[i].cost;
        if (jobs[i].cost > o->budget) {
            snprintf(x->err, sizeof(x->err), "not simulated: about %.0f s, more than the budget",
                     jobs[i].cost);
            continue;
        }
        if (o->candidates > 0 && n >= o->candidates) {
            snprintf(x->err, sizeof(x->err), "not simulated: after the first %d of the order "
                     "(--candidates)", o->candidates);
            continue;
        }
        /* sizes in order (the results do not depend on it) */
        for (int a = 1; a < jobs[i].nk; a++)
            for (int b = a; b > 0 && jobs[i].ks[b] < jobs[i].ks[b - 1]; b--) {
                int t = jobs[i].ks[b];
                jobs[i].ks[b] = jobs[i].ks[b - 1];
                jobs[i].ks[b - 1] = t;
            }
        x->job = n;
        if (n != i)
            jobs[n] = jobs[i];
        n++;
    }
    p->njobs = n;
    return n;
}
