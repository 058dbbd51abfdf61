/*
 * cs_graph.c - message matching and one global execution order (see
 * cs_graph.h for the contract): the order part of the schedule's plan
 * (cs_plan.h), which works them out for every backend.
 */
#include "cs_graph.h"

#include <stdlib.h>
#include <string.h>

#include "cs_graph_int.h"
#include "cs_plan.h"

int cs__graph_fifo_prev(const cs_graph_t *g, uint32_t *prev)
{
    const cs_sched_t *s = g->s;
    cs_plan_rank_t pr;
    memset(&pr, 0, sizeof(pr));
    for (uint64_t i = 0; i < g->nsteps; i++)
        prev[i] = CS_PLAN_NONE;
    for (int r = 0; r < s->desc.nranks; r++) {
        if (cs_plan_rank_build(&pr, s, r, NULL) != CS_OK) {
            cs_plan_rank_fini(&pr);
            return CS_ERR_NOMEM;
        }
        for (uint32_t i = 0; i < pr.nsteps; i++)
            if (pr.chan_next[i] != CS_PLAN_NONE)
                prev[g->base[r] + pr.chan_next[i]] = i;
    }
    cs_plan_rank_fini(&pr);
    return CS_OK;
}

int cs_graph_init(cs_graph_t *g, const cs_sched_t *s, cs_err_t *err)
{
    return cs__graph_init_ev(g, s, NULL, NULL, err);
}

int cs__graph_init_ev(cs_graph_t *g, const cs_sched_t *s, cs__graph_event_fn fn, void *ctx,
                      cs_err_t *err)
{
    cs_plan_t p;
    memset(g, 0, sizeof(*g));
    g->s = s;
    int st = cs_plan_init(&p, s, CS_PLAN_ORDER, fn, ctx, err);
    if (st != CS_OK)
        return st;
    /* the graph keeps the plan's global part */
    g->nsteps = p.nsteps;
    g->base = p.base;
    g->partner = p.partner;
    g->swnext = p.swnext;
    g->order = p.order;
    g->norder = p.norder;
    g->nstuck = p.nstuck;
    g->nunmatched = p.nunmatched;
    p.base = p.partner = p.order = p.swnext = NULL;
    cs_plan_fini(&p);
    return CS_OK;
}

void cs_graph_fini(cs_graph_t *g)
{
    if (g == NULL)
        return;
    free(g->base);
    free(g->partner);
    free(g->swnext);
    free(g->order);
    memset(g, 0, sizeof(*g));
}

void cs_graph_locate(const cs_graph_t *g, uint64_t gid, int *rank, uint32_t *step)
{
    cs_plan_locate(g->base, g->s->desc.nranks, gid, rank, step);
}
