/*
 * cs_sim_dag_sw.c - switch operations in the activity-DAG engine
 * (cs_sim_dag.c; the model is cs_sim_switch.c's): a member issuing its
 * step counts itself in the operation; the last one starts every up
 * transfer (member to switch); once all have left, the switch's engine and
 * latency are waited for by a sleeper actor on the switch's host (as the
 * actor engine's switch actor sleeps); then one down transfer per member
 * with a destination, matched to the members' gets in the order they
 * posted them.
 */
#include <math.h>
#include <stdlib.h>

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>

#include "cs_plan.h"
#include "cs_sim_dag_int.h"

static const cs__swop_t *swop(dag_t *D, uint32_t k)
{
    return &D->I.prog->swops[k];
}

static void sw_end(dag_t *D, uint32_t k)
{
    const cs__swop_t *o = swop(D, k);
    dag_swop_t *w = &D->cur->sw[k];
    const cs__swgrp_t *g = &D->I.prog->swg[o->group];
    if (D->obs && D->obs->switch_op) {
        cs_sim_switch_rec_t rec = {g->sw,
                                   D->run->plat->switches[g->sw].host,
                                   (int)o->group,
                                   o->op,
                                   o->chan,
                                   (int)o->n,
                                   (uint64_t)(o->nup * w->bytes),
                                   (uint64_t)(o->ndown * w->bytes),
                                   w->t0,
                                   w->work,
                                   simgrid_get_clock()};
        D->obs->switch_op(D->obs->ctx, D->inst, &rec);
    }
    D->sw_live--;
}

static void sw_down_one(dag_t *D, uint32_t k, uint64_t gid)
{
    const cs__prog_t *p = D->I.prog;
    int r;
    uint32_t i;
    cs_plan_locate(p->base, p->nranks, gid, &r, &i);
    dag_xfer_t *x = cs__dag_xfer_new(D);
    if (!x) {
        D->run->failed = CS_ERR_NOMEM;
        return;
    }
    x->kind = X_DOWN;
    x->src = x->dst = r;
    x->sstep = x->dstep = i;
    x->k = k;
    cs__dag_xfer_start(D, x, p->swg[swop(D, k)->group].host, D->run->hosts[r], D->cur->sw[k].bytes, -1);
}

void cs__dag_sw_down(dag_t *D, uint64_t k)
{
    dag_swop_t *w = &D->cur->sw[k];
    const cs__swop_t *o = swop(D, (uint32_t)k);
    D->I.prog->swdown[k] = simgrid_get_clock();
    w->down = 1;
    w->dput = o->ndown;
    const uint64_t *g = D->cur->get + D->cur->off[k];
    for (uint32_t m = 0; m < w->nget && w->dput > 0; m++, w->dput--)
        sw_down_one(D, (uint32_t)k, g[m]);
    if (o->ndown == 0)
        sw_end(D, (uint32_t)k);
}

static void sw_launch(dag_t *D, uint32_t k);

/* Every up transfer of operation k has left its member. */
static void sw_up_done(dag_t *D, uint32_t k)
{
    const cs__swop_t *o = swop(D, k);
    dag_swop_t *w = &D->cur->sw[k];
    if (o->op == CS_SW_ALLREDUCE && o->group < D->cur->ngq && D->cur->g_busy[o->group]) {
        /* the group's next switch allreduce sends its parts up now */
        uint32_t g = o->group, nx = D->cur->gq_head[g];
        D->cur->g_busy[g] = 0;
        if (nx != CS__NONE32) {
            D->cur->gq_head[g] = D->cur->sw[nx].qnext;
            if (D->cur->gq_head[g] == CS__NONE32)
                D->cur->gq_tail[g] = CS__NONE32;
            sw_launch(D, nx);
        }
    }
    const cs_sim_nccl_t *nc = D->run->opts->model == CS_SIM_NCCL ? D->I.in->nccl : NULL;
    if (w->arrive > w->ready)
        w->ready = w->arrive;
    double now = simgrid_get_clock(), lat = nc ? nc->sw_lat : D->I.prog->swg[o->group].lat;
    double wait = lat + (w->ready > now ? w->ready - now : 0);
    if (wait > 0) {
        /* a sleeping actor on the switch's host, as the actor engine's
         * switch actor sleeps: SimGrid's sharing of the links depends on
         * the order in which comms start at one instant, and a sleep ends
         * in another phase of its loop than a timer (with per-message
         * caps, NVLS operations under the NCCL model moved by up to 23 %
         * between the two) */
        dag_sleeper_t *a = malloc(sizeof(*a));
        if (a) {
            a->D = D;
            a->fn = cs__dag_sw_down;
            a->arg = k;
            a->wait = wait;
            D->ntimers++;
            sg_actor_t act = sg_actor_init("switch-wait", D->I.prog->swg[o->group].host);
            sg_actor_set_data(act, a);
            sg_actor_start(act, cs__dag_sleeper, 0, NULL);
            return;
        }
        D->run->failed = CS_ERR_NOMEM;
    }
    cs__dag_sw_down(D, k);
}

/* The last member of operation k issued its step: the operation starts,
 * a switch allreduce once its group's previous one has sent its parts up
 * (the members' NICs send one operation's parts after the other: the
 * pieces of a SHARP allreduce pipeline, one going up while the one before
 * comes down, rather than all sharing the links up and then down). */
static void sw_start(dag_t *D, uint32_t k)
{
    const cs__swop_t *o = swop(D, k);
    D->sw_live++;
    if (o->op == CS_SW_ALLREDUCE && o->nup > 0 && o->group < D->cur->ngq) {
        uint32_t g = o->group;
        if (D->cur->g_busy[g]) {
            D->cur->sw[k].qnext = CS__NONE32;
            if (D->cur->gq_tail[g] == CS__NONE32)
                D->cur->gq_head[g] = k;
            else
                D->cur->sw[D->cur->gq_tail[g]].qnext = k;
            D->cur->gq_tail[g] = k;
            return;
        }
        D->cur->g_busy[g] = 1;
    }
    sw_launch(D, k);
}

static void sw_launch(dag_t *D, uint32_t k)
{
    const cs__prog_t *p = D->I.prog;
    const cs__swop_t *o = swop(D, k);
    dag_swop_t *w = &D->cur->sw[k];
    const cs__swgrp_t *g = &p->swg[o->group];
    const cs_step_t *ls = &p->s->ranks[o->lead_rank].steps[o->lead_step];
    if (o->op == CS_SW_ALLREDUCE && o->nup > 0 && o->group < D->cur->ngq)
        D->cur->g_busy[o->group] = 1;
    w->t0 = w->arrive = w->ready = simgrid_get_clock();
    w->bytes = (double)cs__step_bytes(p->s, o->lead_rank, ls, D->I.count, D->I.esize);
    w->work = 0;
    const cs_sim_nccl_t *nc = D->run->opts->model == CS_SIM_NCCL ? D->I.in->nccl : NULL;
    double rate = nc && nc->sw_rate > 0 ? nc->sw_rate * o->nup : g->rate;
    if (o->op != CS_SW_MULTICAST && rate > 0 && isfinite(rate)) {
        double *free_at = &D->run->sw_free[g->sw];
        w->work = o->nup * w->bytes / rate;
        *free_at = (*free_at > w->t0 ? *free_at : w->t0) + w->work;
        w->ready = *free_at;
    }
    const uint64_t *mem = D->cur->mem + D->cur->off[k];
    for (uint32_t m = 0; m < w->narr; m++) {
        int r;
        uint32_t i;
        cs_plan_locate(p->base, p->nranks, mem[m], &r, &i);
        if (!p->s->ranks[r].steps[i].src.n)
            continue;
        dag_xfer_t *x = cs__dag_xfer_new(D);
        if (!x) {
            D->run->failed = CS_ERR_NOMEM;
            return;
        }
        x->kind = X_UP;
        x->src = x->dst = r;
        x->sstep = x->dstep = i;
        x->k = k;
        cs__dag_xfer_start(D, x, D->run->hosts[r], g->host, w->bytes, -1);
    }
    if (o->nup == 0)
        sw_up_done(D, k);
}

/* Member r's step i waits for its down transfer. */
static void sw_get(dag_t *D, uint32_t k, int r, uint32_t i)
{
    dag_swop_t *w = &D->cur->sw[k];
    uint64_t gid = D->I.prog->base[r] + i;
    if (w->down && w->dput > 0) {
        w->dput--;
        sw_down_one(D, k, gid);
        return;
    }
    D->cur->get[D->cur->off[k] + w->nget++] = gid;
}

void cs__dag_issue_switch(dag_t *D, int r, uint32_t i)
{
    const cs__prog_t *p = D->I.prog;
    cs__op_t *o = op_of(D, r, i);
    const cs_step_t *st = &p->s->ranks[r].steps[i];
    uint64_t gid = p->base[r] + i;
    uint32_t k = p->swop_of[gid];
    dag_swop_t *w = &D->cur->sw[k];
    D->cur->mem[D->cur->off[k] + w->narr++] = gid;
    if (st->src.n)
        o->npend = st->dst.n > 0; /* 1: its get follows its put */
    else
        sw_get(D, k, r, i);
    if (o->chan_next != CS__NONE32)
        release(D, r, o->chan_next);
    if (w->narr == p->swops[k].n)
        sw_start(D, k);
}


void cs__dag_on_up(dag_t *D, dag_xfer_t *x)
{
    const cs__prog_t *p = D->I.prog;
    int r = x->src;
    uint32_t i = x->sstep, k = x->k;
    cs__dag_xfer_free(D, x);
    const cs__swop_t *o = swop(D, k);
    dag_swop_t *w = &D->cur->sw[k];
    const cs__swgrp_t *g = &p->swg[o->group];
    double now = simgrid_get_clock(), at = now;
    if (g->uplat) {
        const cs_group_t *gr = &p->s->groups[o->group];
        uint32_t lo = 0, hi = gr->n;
        while (lo < hi) { /* members are sorted */
            uint32_t mid = lo + (hi - lo) / 2;
            if (gr->members[mid] < r)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < gr->n && gr->members[lo] == r)
            at += g->uplat[lo];
    }
    if (at > w->arrive)
        w->arrive = at;
    if (D->obs && D->obs->xfer) {
        int sw = g->sw;
        cs_sim_xfer_rec_t rec = {r,          -1 - sw,   D->run->host_names[r],
                                 D->run->plat->switches[sw].host,
                                 i,          i,         o->chan,
                                 (uint64_t)w->bytes,
                                 w->t0,      now};
        D->obs->xfer(D->obs->ctx, D->inst, &rec);
    }
    /* the member: its get follows, or its step is done */
    cs__op_t *mo = op_of(D, r, i);
    if (mo->npend == 1) {
        mo->npend = 0;
        sw_get(D, k, r, i);
    } else {
        cs__dag_complete(D, r, i);
        cs__dag_drain(D, r);
    }
    if (++w->nupd == o->nup)
        sw_up_done(D, k);
}

void cs__dag_on_down(dag_t *D, dag_xfer_t *x)
{
    const cs__prog_t *p = D->I.prog;
    int r = x->dst;
    uint32_t i = x->dstep, k = x->k;
    cs__dag_xfer_free(D, x);
    const cs__swop_t *o = swop(D, k);
    if (D->obs && D->obs->xfer) {
        int sw = p->swg[o->group].sw;
        cs_sim_xfer_rec_t rec = {-1 - sw,
                                 r,
                                 D->run->plat->switches[sw].host,
                                 D->run->host_names[r],
                                 i,
                                 i,
                                 p->s->ranks[r].steps[i].chan,
                                 (uint64_t)op_of(D, r, i)->bytes,
                                 p->swdown[k],
                                 simgrid_get_clock()};
        D->obs->xfer(D->obs->ctx, D->inst, &rec);
    }
    cs__dag_complete(D, r, i);
    cs__dag_drain(D, r);
    if (++D->cur->sw[k].ndownd == o->ndown)
        sw_end(D, k);
}
