/*
 * cs_sim_switch.c - switch operations in the simulator (contract in
 * cs_sim.h, "Switch operations").
 *
 * Compile time (cs__sw_build): the plan's matching (cs_plan.h) makes the
 * k-th switch steps of every member on (group, channel) one operation,
 * numbered in the order of their leaders' global ids; each switch step
 * knows its operation (swop_of).
 *
 * Before simulating (cs__sw_check): the switch serving each group that
 * has operations (cs_platform_switch_for over the members' hosts), the
 * routes between the members and it, and the element type and operator of
 * every instance against what it reduces; cs__sw_latency_setup takes the
 * link latency out of SimGrid's comms to the switches that host no rank.
 * In the driver (cs__sw_rates, after the calibrated factors are applied):
 * its host, reduction rate and each member's route latency to it.
 *
 * While simulating: a member issuing its step counts itself in the
 * operation (cs__sw_arrive) and posts a put of its source on the
 * operation's up mailbox, or a get on its down mailbox (cs_sim_rank.c).
 * The last member to arrive starts the operation's actor on the switch's
 * host (sw_main): it gets every up transfer (so they start when all
 * members are there; each is done when its bytes have left the member, and
 * arrives its route's latency later), runs the reduction on the switch's
 * engine (a FIFO per switch: start at max(now, engine idle), take bytes up
 * / rate, done no earlier than the last arrival), waits the switch's
 * latency, and puts one transfer per destination on the down
 * mailbox (each matched by a member's get: the route is the switch's to
 * that member).  All destinations receive the same number of bytes (the
 * members' ranges have one length), so any put may match any get.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <simgrid/semaphore.h>

#include "cs_plan.h"
#include "cs_platform.h"
#include "cs_sim_int.h"

int cs__sw_build(cs__prog_t *p, cs_err_t *err)
{
    const cs_sched_t *s = p->s;
    uint64_t n = p->base[p->nranks];
    cs_plan_t pl;
    int st = cs_plan_init(&pl, s, CS_PLAN_MATCH, NULL, NULL, err);
    if (st != CS_OK)
        return st;
    static unsigned next_id;
    p->swid = next_id++;
    p->swop_of = malloc(sizeof(uint32_t) * (size_t)(n ? n : 1));
    p->swg = calloc((size_t)s->ngroups + 1, sizeof(*p->swg));
    uint32_t nops = 0;
    for (uint64_t g = 0; p->swop_of && g < n; g++)
        p->swop_of[g] = CS__NONE32;
    for (int r = 0; r < p->nranks; r++)
        for (uint32_t i = 0; i < s->ranks[r].nsteps; i++)
            nops += s->ranks[r].steps[i].kind == CS_STEP_SWITCH &&
                    pl.partner[p->base[r] + i] == p->base[r] + i;
    p->swops = calloc((size_t)nops + 1, sizeof(*p->swops));
    p->swmb = calloc(2 * (size_t)nops + 1, sizeof(*p->swmb));
    p->swarr = calloc((size_t)nops + 1, sizeof(*p->swarr));
    p->swdown = calloc((size_t)nops + 1, sizeof(*p->swdown));
    if (!p->swop_of || !p->swg || !p->swops || !p->swmb || !p->swarr || !p->swdown) {
        cs_plan_fini(&pl);
        return cs_err_set(err, CS_ERR_NOMEM, "sim: out of memory for %u switch operations", nops);
    }
    for (uint32_t g = 0; g < s->ngroups; g++)
        p->swg[g].sw = -1;
    /* leaders come first in global id order (the group's first member) */
    for (int r = 0; r < p->nranks && st == CS_OK; r++)
        for (uint32_t i = 0; i < s->ranks[r].nsteps; i++) {
            const cs_step_t *sp = &s->ranks[r].steps[i];
            uint64_t gid = p->base[r] + i, lead = pl.partner[gid];
            if (sp->kind != CS_STEP_SWITCH)
                continue;
            if (lead == CS_PLAN_NOGID) {
                st = cs_err_set(err, CS_ERR_VERIFY,
                                "sim: rank %d step %u: switch step of group %s without the "
                                "matching steps of every member: verify the schedule",
                                r, i, s->groups[sp->peer].name);
                break;
            }
            if (lead != gid) {
                p->swop_of[gid] = p->swop_of[lead];
                continue;
            }
            cs__swop_t *o = &p->swops[p->nswops];
            p->swop_of[gid] = p->nswops++;
            o->lead = gid;
            o->lead_rank = r;
            o->lead_step = i;
            o->group = (uint32_t)sp->peer;
            o->chan = sp->chan;
            o->op = sp->op;
            for (uint64_t m = gid; m != CS_PLAN_NOGID; m = pl.swnext[m]) {
                int mr;
                uint32_t mi;
                cs_plan_locate(pl.base, p->nranks, m, &mr, &mi);
                const cs_step_t *ms = &s->ranks[mr].steps[mi];
                o->n++;
                o->nup += ms->src.n > 0;
                o->ndown += ms->dst.n > 0;
            }
        }
    cs_plan_fini(&pl);
    return st;
}

void cs__sw_fini(cs__prog_t *p)
{
    for (uint32_t g = 0; p->swg && g < p->s->ngroups; g++) {
        free(p->swg[g].uplat);
        free(p->swg[g].upq);
    }
    free(p->swop_of);
    free(p->swops);
    free(p->swg);
    free(p->swmb);
    free(p->swarr);
    free(p->swdown);
}

/* "0-7", "0,2,5-9": the members of g, at most len characters. */
static void rank_list(const cs_group_t *g, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < g->n && off + 24 < len;) {
        uint32_t j = i;
        while (j + 1 < g->n && g->members[j + 1] == g->members[j] + 1)
            j++;
        int w = j > i ? snprintf(buf + off, len - off, "%s%d-%d", i ? "," : "", g->members[i],
                                 g->members[j])
                      : snprintf(buf + off, len - off, "%s%d", i ? "," : "", g->members[i]);
        off += w > 0 ? (size_t)w : 0;
        i = j + 1;
        if (i < g->n && off + 24 >= len)
            snprintf(buf + off, len - off, ",...");
    }
}

/* Why no switch serves group g, into buf. */
static void none_serves(const cs_platform_t *plat, const cs_group_t *g, char *const *host_names,
                        char *buf, size_t len)
{
    char ranks[128];
    rank_list(g, ranks, sizeof(ranks));
    int w = snprintf(buf, len, "no switch that reduces serves ranks %s (group %s, hosts %s%s%s)",
                     ranks, g->name, host_names[g->members[0]], g->n > 1 ? " to " : "",
                     g->n > 1 ? host_names[g->members[g->n - 1]] : "");
    if (w < 0 || (size_t)w >= len)
        return;
    if (plat->nswitches == 0) {
        snprintf(buf + w, len - (size_t)w,
                 ": platform %s has no zone with a reduce property (docs/platforms.md, "
                 "\"Switches that reduce\")",
                 plat->spec[0] ? plat->spec : plat->name);
        return;
    }
    int x = snprintf(buf + w, len - (size_t)w, ": none of the platform's %d serves them all (",
                     plat->nswitches);
    w += x > 0 ? x : 0;
    for (int k = 0; k < plat->nswitches && k < 3 && (size_t)w < len; k++) {
        const cs_plat_switch_t *sw = &plat->switches[k];
        x = snprintf(buf + w, len - (size_t)w, "%s%s: %s, zone %s, %llu hosts", k ? "; " : "",
                     sw->host, cs_reduce_kind_name(sw->kind), sw->zone,
                     (unsigned long long)sw->nhosts);
        w += x > 0 ? x : 0;
    }
    if ((size_t)w < len)
        snprintf(buf + w, len - (size_t)w, "%s)", plat->nswitches > 3 ? "; ..." : "");
}

int cs__sw_check(const cs_platform_t *plat, char *const *host_names, cs__prog_t *p,
                 const cs_sim_instance_t *inst, const int *prog_of, int pj, int n, cs_err_t *err)
{
    const cs_sched_t *s = p->s;
    const char *algo = s->algo[0] ? s->algo : "schedule";
    int st = CS_OK;
    for (uint32_t k = 0; k < p->nswops && st == CS_OK; k++) {
        const cs__swop_t *o = &p->swops[k];
        const cs_group_t *g = &s->groups[o->group];
        cs__swgrp_t *sg = &p->swg[o->group];
        if (sg->sw < 0) {
            const char **h = malloc(sizeof(char *) * 2 * g->n);
            if (!h)
                return cs_err_set(err, CS_ERR_NOMEM, "sim: out of memory");
            for (uint32_t m = 0; m < g->n; m++)
                h[m] = host_names[g->members[m]];
            sg->sw = cs_platform_switch_for(plat, h, g->n);
            if (sg->sw < 0) {
                char why[1024];
                none_serves(plat, g, host_names, why, sizeof(why));
                free(h);
                return cs_err_set(err, CS_ERR_INVAL, "sim: %s %s (%d ranks): %s",
                                  cs_coll_name(s->desc.coll), algo, s->desc.nranks, why);
            }
            /* routes to and from the switch: g->n pairs each way */
            const char *sw = plat->switches[sg->sw].host;
            const char **a = malloc(sizeof(char *) * 2 * g->n);
            if (!a) {
                free(h);
                return cs_err_set(err, CS_ERR_NOMEM, "sim: out of memory");
            }
            for (uint32_t m = 0; m < g->n; m++) {
                a[m] = h[m];
                a[g->n + m] = sw;
                h[g->n + m] = h[m];
                h[m] = sw;
            }
            size_t bad = 0;
            int back = 0;
            st = cs_platform_sg_routes(plat, a, h, 2 * (size_t)g->n, &bad, &back, err);
            if (st == CS_ERR_NOTFOUND)
                st = cs_err_set(err, CS_ERR_INVAL,
                                "sim: %s %s (%d ranks), group %s: host %s has no route to "
                                "host %s, the switch that serves the group (zone %s)",
                                cs_coll_name(s->desc.coll), algo, s->desc.nranks, g->name,
                                a[bad], h[bad], plat->switches[sg->sw].zone);
            free(a);
            free(h);
        }
        if (st != CS_OK || o->op == CS_SW_MULTICAST)
            continue;
        const cs_plat_switch_t *sw = &plat->switches[sg->sw];
        for (int i = 0; i < n; i++) {
            if (prog_of[i] != pj || cs_platform_switch_reduces(sw, inst[i].dtype, inst[i].op))
                continue;
            char what[256];
            cs_platform_switch_reduces_str(sw, what, sizeof(what));
            return cs_err_set(err, CS_ERR_INVAL,
                              "sim: %s %s (%d ranks), group %s: switch %s (%s, zone %s) does not "
                              "reduce %s with %s; it reduces %s (reduce_types / reduce_ops, "
                              "docs/platforms.md)",
                              cs_coll_name(s->desc.coll), algo, s->desc.nranks, g->name,
                              sw->host, cs_reduce_kind_name(sw->kind), sw->zone,
                              cs_dtype_name(inst[i].dtype), cs_op_name(inst[i].op), what);
        }
    }
    return st;
}

static int cmp_link(const void *x, const void *y)
{
    const cs_sim_link_t *a = x, *b = y;
    return strcmp(a->name, b->name);
}

/* Whether platform switch k hosts no rank of the run: its up transfers
 * then pay their latency in sw_main. */
static int sw_apart(const cs__run_t *run, int k)
{
    for (int r = 0; r < run->nhosts; r++)
        if (strcmp(run->host_names[r], run->plat->switches[k].host) == 0)
            return 0;
    return 1;
}

int cs__sw_latency_setup(const cs__run_t *run, cs_err_t *err)
{
    const cs_platform_t *plat = run->plat;
    sg_host_t *h = malloc(sizeof(*h) * ((size_t)plat->nswitches + 1));
    int n = 0;
    if (!h)
        return cs_err_set(err, CS_ERR_NOMEM, "sim: out of memory");
    for (int k = 0; k < plat->nswitches; k++)
        if (sw_apart(run, k) && (h[n] = sg_host_by_name(plat->switches[k].host)) != NULL)
            n++;
    int st = n ? cs__sg_no_latency_to(h, n) : 0;
    free(h);
    if (st != 0)
        return cs_err_set(err, CS_ERR_INTERNAL, "sim: SimGrid refused the switches' latency model");
    return CS_OK;
}

int cs__sw_nccl_setup(const cs__run_t *run, const cs_sim_nccl_t *const *cur, cs_err_t *err)
{
    const cs_platform_t *plat = run->plat;
    size_t cap = (size_t)plat->nswitches + 1;
    sg_host_t *h = malloc(sizeof(*h) * cap), *all = malloc(sizeof(*all) * cap);
    int n = 0, na = 0;
    if (!h || !all) {
        free(h);
        free(all);
        return cs_err_set(err, CS_ERR_NOMEM, "sim: out of memory");
    }
    for (int k = 0; k < plat->nswitches; k++) {
        sg_host_t x = sg_host_by_name(plat->switches[k].host);
        if (!x)
            continue;
        all[na++] = x;
        if (sw_apart(run, k))
            h[n++] = x;
    }
    int st = cs__sg_nccl_factors(h, n, all, na, cur);
    free(h);
    free(all);
    if (st != 0)
        return cs_err_set(err, CS_ERR_INTERNAL, "sim: SimGrid refused the NCCL model's factors");
    return CS_OK;
}

/* The sum of the latencies of the route from host a to host b. */
static double route_latency(const char *a, const char *b)
{
    cs_sim_link_t route[64], *l = route;
    int cnt = 0;
    double lat = 0;
    if (cs_sim_route(a, b, route, 64, &cnt, NULL) != CS_OK)
        return 0;
    if (cnt > 64) {
        l = malloc(sizeof(*l) * (size_t)cnt);
        if (!l || cs_sim_route(a, b, l, cnt, &cnt, NULL) != CS_OK)
            cnt = 0;
    }
    for (int i = 0; i < cnt; i++)
        lat += l[i].latency;
    if (l != route)
        free(l);
    return lat;
}

void cs__sw_rates(cs__run_t *run, cs__prog_t *p)
{
    const cs_sched_t *s = p->s;
    for (uint32_t g = 0; g < s->ngroups; g++) {
        cs__swgrp_t *sg = &p->swg[g];
        if (sg->sw < 0)
            continue;
        const cs_plat_switch_t *sw = &run->plat->switches[sg->sw];
        const cs_group_t *gr = &s->groups[g];
        sg->host = sg_host_by_name(sw->host);
        sg->lat = sw->reduce_lat;
        sg->rate = sw->reduce_bw;
        free(sg->uplat);
        sg->uplat = sw_apart(run, sg->sw) ? calloc(gr->n, sizeof(double)) : NULL;
        /* model nccl: NVLS's latency is the instance's, not its transfers' */
        for (uint32_t m = 0; sg->uplat && m < gr->n && run->opts->model != CS_SIM_NCCL; m++)
            sg->uplat[m] = route_latency(run->host_names[gr->members[m]], sw->host);
        if (sg->rate > 0)
            continue;
        /* the sum of the distinct links by which the members reach it */
        cs_sim_link_t *last = calloc(gr->n, sizeof(*last)), route[64];
        uint32_t nl = 0;
        for (uint32_t m = 0; last && m < gr->n; m++) {
            int cnt = 0;
            const char *h = run->host_names[gr->members[m]];
            if (cs_sim_route(h, sw->host, route, 64, &cnt, NULL) != CS_OK || cnt < 1)
                continue;
            if (cnt > 64) {
                cs_sim_link_t *big = malloc(sizeof(*big) * (size_t)cnt);
                if (big && cs_sim_route(h, sw->host, big, cnt, &cnt, NULL) == CS_OK)
                    last[nl++] = big[cnt - 1];
                free(big);
            } else {
                last[nl++] = route[cnt - 1];
            }
        }
        if (nl > 1)
            qsort(last, nl, sizeof(*last), cmp_link);
        for (uint32_t i = 0; i < nl; i++)
            if (i == 0 || strcmp(last[i].name, last[i - 1].name) != 0)
                sg->rate += last[i].bandwidth;
        free(last);
    }
}

void cs__sw_mailboxes(cs__prog_t *p)
{
    for (uint32_t k = 0; k < p->nswops; k++) {
        char name[64];
        snprintf(name, sizeof(name), "csw:%u:%u:up", p->swid, k);
        p->swmb[2 * k] = sg_mailbox_by_name(name);
        snprintf(name, sizeof(name), "csw:%u:%u:down", p->swid, k);
        p->swmb[2 * k + 1] = sg_mailbox_by_name(name);
    }
}

void cs__sw_reset(cs__prog_t *p)
{
    if (p->nswops)
        memset(p->swarr, 0, sizeof(*p->swarr) * p->nswops);
    for (uint32_t g = 0; p->swg && g < p->s->ngroups; g++)
        p->swg[g].upbusy = 0, p->swg[g].upq_head = p->swg[g].upq_n = 0;
}

/* A switch allreduce waits for its group's previous one to have sent its
 * parts up (the members' NICs send in order); 0, or -1 out of memory. */
static int up_turn(cs__swgrp_t *g)
{
    if (!g->upbusy) {
        g->upbusy = 1;
        return 0;
    }
    if (g->upq_head + g->upq_n == g->upq_cap) {
        if (g->upq_head > 0) {
            memmove(g->upq, g->upq + g->upq_head, sizeof(*g->upq) * g->upq_n);
            g->upq_head = 0;
        } else {
            uint32_t cap = g->upq_cap ? 2 * g->upq_cap : 16;
            sg_actor_t *q = realloc(g->upq, sizeof(*q) * cap);
            if (!q)
                return -1;
            g->upq = q, g->upq_cap = cap;
        }
    }
    g->upq[g->upq_head + g->upq_n++] = sg_actor_self();
    sg_actor_suspend(sg_actor_self()); /* resumed by up_next, the group still busy */
    return 0;
}

/* Its parts are up: the next waiting allreduce of the group goes. */
static void up_next(cs__swgrp_t *g)
{
    if (g->upq_n == 0) {
        g->upbusy = 0;
        return;
    }
    sg_actor_t next = g->upq[g->upq_head++];
    g->upq_n--;
    sg_actor_resume(next);
}

typedef struct swarg {
    cs__inst_t *I;
    uint32_t k;
} swarg_t;

/* Wait until every activity of set has finished; each finished get's
 * payload is handed to done().  slots (may be NULL): where the gets
 * deliver, slots[j] for the j-th posted; SimGrid writes there when a get
 * completes, so the slots stay put and `at` (cnt entries, may be NULL
 * with slots) follows the set's order: at[x] is the slot of the set's x-th
 * activity (removing x moves the last one into its place). */
static void wait_all(cs__sg_set_t *set, uint32_t cnt, void **slots, uint32_t *at,
                     void (*done)(void *, void *), void *ctx)
{
    for (uint32_t j = 0; at && j < cnt; j++)
        at[j] = j;
    while (cnt > 0) {
        long x = cs__sg_set_wait(set, -1.0);
        if (x < 0)
            return;
        cs__sg_set_remove(set, x);
        cnt--;
        if (slots && at) {
            if (done)
                done(ctx, slots[at[x]]);
            at[x] = at[cnt];
        }
    }
}

typedef struct upctx {
    cs__inst_t *I;
    const cs__swop_t *o;
    uint32_t k;
    double t0, bytes;
    double arrive; /* when the last byte of every up transfer so far is at the switch */
} upctx_t;

static int cmp_i32(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* An up transfer left its member (its payload is the member's global step
 * id + 1): its last byte reaches the switch its route's latency later;
 * report it. */
static void up_done(void *ctx, void *payload)
{
    upctx_t *u = ctx;
    cs__prog_t *p = u->I->prog;
    const cs_sim_observer_t *obs = u->I->run->opts->obs;
    uint64_t gid = (uint64_t)(uintptr_t)payload - 1;
    int r;
    uint32_t i;
    cs_plan_locate(p->base, p->nranks, gid, &r, &i);
    const cs__swgrp_t *g = &p->swg[u->o->group];
    double at = simgrid_get_clock();
    if (g->uplat) {
        const cs_group_t *gr = &p->s->groups[u->o->group];
        int32_t key = r;
        const int32_t *m = bsearch(&key, gr->members, gr->n, sizeof(key), cmp_i32);
        if (m)
            at += g->uplat[m - gr->members];
    }
    if (at > u->arrive)
        u->arrive = at;
    if (!obs || !obs->xfer)
        return;
    int sw = g->sw;
    cs_sim_xfer_rec_t rec = {r,
                             -1 - sw,
                             u->I->run->host_names[r],
                             u->I->run->plat->switches[sw].host,
                             i,
                             i,
                             u->o->chan,
                             (uint64_t)u->bytes,
                             u->t0,
                             simgrid_get_clock()};
    obs->xfer(obs->ctx, u->I->index, &rec);
}

static void sw_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    swarg_t *a = sg_actor_self_get_data();
    cs__inst_t *I = a->I;
    uint32_t k = a->k;
    free(a);
    cs__prog_t *p = I->prog;
    const cs__swop_t *o = &p->swops[k];
    cs__swgrp_t *g = &p->swg[o->group];
    const cs_sim_observer_t *obs = I->run->opts->obs;
    const cs_step_t *ls = &p->s->ranks[o->lead_rank].steps[o->lead_step];
    int fifo = o->op == CS_SW_ALLREDUCE && o->nup > 0;
    if (fifo && up_turn(g) != 0)
        I->run->failed = CS_ERR_NOMEM, fifo = 0;
    upctx_t u = {I, o, k, simgrid_get_clock(),
                 (double)cs__step_bytes(p->s, o->lead_rank, ls, I->count, I->esize),
                 simgrid_get_clock()};
    /* the engine takes the contributions as they arrive (cut-through): its
     * work starts with the up transfers, on the switch's FIFO */
    double work = 0, ready = u.t0;
    const cs_sim_nccl_t *nc = I->run->opts->model == CS_SIM_NCCL ? I->in->nccl : NULL;
    double rate = nc && nc->sw_rate > 0 ? nc->sw_rate * o->nup : g->rate;
    if (o->op != CS_SW_MULTICAST && rate > 0 && isfinite(rate)) {
        double *free_at = &I->run->sw_free[g->sw];
        work = o->nup * u.bytes / rate;
        *free_at = (*free_at > u.t0 ? *free_at : u.t0) + work;
        ready = *free_at;
    }
    cs__sg_set_t set;
    cs__sg_set_init(&set);
    void *sink = NULL, **slots = calloc((size_t)o->nup + 1, sizeof(void *));
    uint32_t posted = 0, *at = malloc(sizeof(uint32_t) * ((size_t)o->nup + 1));
    if (!slots || !at) { /* out of memory: each get waited for at once (times are then wrong) */
        I->run->failed = CS_ERR_NOMEM;
        free(slots);
        slots = NULL;
    }
    for (uint32_t m = 0; m < o->nup; m++) {
        void **slot = slots ? &slots[posted] : &sink;
        if (cs__sg_set_get(&set, p->swmb[2 * k], slot, slots == NULL) == 0)
            posted++;
        else
            up_done(&u, *slot);
    }
    wait_all(&set, posted, slots, at, up_done, &u);
    free(slots);
    free(at);
    if (fifo)
        up_next(g);
    if (u.arrive > ready)
        ready = u.arrive;
    double now = simgrid_get_clock(), lat = nc ? nc->sw_lat : g->lat;
    double wait = lat + (ready > now ? ready - now : 0);
    if (wait > 0)
        sg_actor_sleep_for(wait);
    p->swdown[k] = simgrid_get_clock();
    posted = 0;
    for (uint32_t m = 0; m < o->ndown; m++)
        posted += cs__sg_set_put(&set, p->swmb[2 * k + 1], (void *)(uintptr_t)(k + 1), u.bytes,
                                 -1, 0) == 0;
    wait_all(&set, posted, NULL, NULL, NULL, NULL);
    cs__sg_set_fini(&set);
    if (obs && obs->switch_op) {
        cs_sim_switch_rec_t rec = {g->sw,
                                   I->run->plat->switches[g->sw].host,
                                   (int)o->group,
                                   o->op,
                                   o->chan,
                                   (int)o->n,
                                   (uint64_t)(o->nup * u.bytes),
                                   (uint64_t)(o->ndown * u.bytes),
                                   u.t0,
                                   work,
                                   simgrid_get_clock()};
        obs->switch_op(obs->ctx, I->index, &rec);
    }
    if (--I->run->sw_live == 0 && I->run->sw_idle)
        sg_sem_release(I->run->sw_idle);
}

uint32_t cs__sw_arrive(cs__inst_t *I, uint64_t gid)
{
    cs__prog_t *p = I->prog;
    uint32_t k = p->swop_of[gid];
    if (++p->swarr[k] < p->swops[k].n)
        return k;
    swarg_t *a = malloc(sizeof(*a));
    if (!a) {
        I->run->failed = CS_ERR_NOMEM;
        return k;
    }
    a->I = I;
    a->k = k;
    char name[48];
    snprintf(name, sizeof(name), "switch-op%u", k);
    sg_actor_t act = sg_actor_init(name, p->swg[p->swops[k].group].host);
    sg_actor_set_data(act, a);
    I->run->sw_live++;
    sg_actor_start(act, sw_main, 0, NULL);
    return k;
}
