/*
 * plan_cost.c - the planner's cost model (cs_planner.h, step 3).
 *
 * A schedule's messages are put in rounds: a send's round is the latest
 * round its dependencies finished in, its message arrives one round later
 * (a receive finishes at the later of its dependencies and the arrival).
 * Per round, every message adds its chunks to each link of its route
 * (SimGrid's route between the two ranks' hosts); the round lasts as long
 * as its most loaded link needs (chunks over bandwidth) plus its longest
 * route's latency.  The time for S bytes is the sum over rounds of
 * W_r * S / C + L_r, so one pass serves every size.  Links shared by flows
 * of the same round count once per flow: the contention that a closed-form
 * alpha-beta formula misses.  Routes are cached per pair of hosts for the
 * life of a cs__planner_net_t (one per process that asks SimGrid).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_algo.h"
#include "cs_grow.h"
#include "cs_hash.h"
#include "cs_plan.h"
#include "cs_planner_int.h"
#include "cs_sim.h"

#define MAX_ROUTE CS__PLANNER_MAX_ROUTE
/* a schedule needing more new routes than this is costed by its formula */
#define NEW_ROUTES_MAX 60000
/* nor one whose routes start at more ranks than this over the ranks: each
 * rank a route starts from costs SimGrid a search of the whole platform
 * (its Dijkstra zones), so that the work grows as sources x ranks (the
 * binomial tree on 16,384 ranks: minutes; every source of 1,536 ranks:
 * seconds) */
#define SOURCE_WORK_MAX 4e6

/* ---- caches: links by SimGrid name pointer, routes by host pair ---------- */

typedef struct link_rec {
    const char *name;
    double bw;
    char tier[16];
} link_rec_t;

typedef struct route_rec {
    int a, b;    /* host indices (map 0 ... all maps' hosts interned) */
    int off, n;  /* links in the pool */
    double lat;
} route_rec_t;

struct cs__planner_net {
    link_rec_t *links;
    int nlinks;
    size_t cap_links;
    int *lhash; /* open addressing over link name pointers */
    int lhcap;
    route_rec_t *routes;
    int nroutes;
    size_t cap_routes;
    int *rhash;
    int rhcap;
    int *pool;
    size_t npool, cap_pool;
    char **hostnames; /* interned host names */
    int nhosts;
    size_t cap_hosts;
    int *hhash;
    int hhcap;
};

cs__planner_net_t *cs__planner_net_new(void)
{
    return calloc(1, sizeof(cs__planner_net_t));
}

void cs__planner_net_free(cs__planner_net_t *n)
{
    if (!n)
        return;
    free(n->links);
    free(n->lhash);
    free(n->routes);
    free(n->rhash);
    free(n->pool);
    for (int i = 0; i < n->nhosts; i++)
        free(n->hostnames[i]);
    free(n->hostnames);
    free(n->hhash);
    free(n);
}

/* Grow an open-addressing table of indices (-1 empty) and re-insert. */
static int rehash(const cs__planner_net_t *net, int **tab, int *cap, int n,
                  uint64_t (*key)(const cs__planner_net_t *, int))
{
    int nc = *cap ? *cap * 2 : 1024;
    while (nc < 2 * n + 2)
        nc *= 2;
    int *t = malloc(sizeof(int) * (size_t)nc);
    if (!t)
        return -1;
    for (int i = 0; i < nc; i++)
        t[i] = -1;
    for (int i = 0; i < n; i++) {
        uint64_t h = key(net, i) & (uint64_t)(nc - 1);
        while (t[h] >= 0)
            h = (h + 1) & (uint64_t)(nc - 1);
        t[h] = i;
    }
    free(*tab);
    *tab = t;
    *cap = nc;
    return 0;
}

static uint64_t host_key(const cs__planner_net_t *n, int i) { return cs_hash_str(n->hostnames[i]); }
static uint64_t link_key(const cs__planner_net_t *n, int i)
{
    return cs_hash_mix64((uint64_t)(uintptr_t)n->links[i].name);
}
static uint64_t route_key(const cs__planner_net_t *n, int i)
{
    return cs_hash_mix64(((uint64_t)n->routes[i].a << 32) | (uint32_t)n->routes[i].b);
}

static int host_id(cs__planner_net_t *n, const char *name)
{
    if (2 * (n->nhosts + 1) > n->hhcap && rehash(n, &n->hhash, &n->hhcap, n->nhosts, host_key))
        return -1;
    uint64_t h = cs_hash_str(name) & (uint64_t)(n->hhcap - 1);
    while (n->hhash[h] >= 0) {
        if (strcmp(n->hostnames[n->hhash[h]], name) == 0)
            return n->hhash[h];
        h = (h + 1) & (uint64_t)(n->hhcap - 1);
    }
    if (cs_grow(&n->hostnames, &n->cap_hosts, (size_t)n->nhosts + 1, sizeof(char *), 256))
        return -1;
    if (!(n->hostnames[n->nhosts] = strdup(name)))
        return -1;
    n->hhash[h] = n->nhosts;
    return n->nhosts++;
}

static int link_id(cs__planner_net_t *n, const cs_sim_link_t *l)
{
    if (2 * (n->nlinks + 1) > n->lhcap && rehash(n, &n->lhash, &n->lhcap, n->nlinks, link_key))
        return -1;
    uint64_t h = cs_hash_mix64((uint64_t)(uintptr_t)l->name) & (uint64_t)(n->lhcap - 1);
    while (n->lhash[h] >= 0) {
        if (n->links[n->lhash[h]].name == l->name)
            return n->lhash[h];
        h = (h + 1) & (uint64_t)(n->lhcap - 1);
    }
    if (cs_grow(&n->links, &n->cap_links, (size_t)n->nlinks + 1, sizeof(*n->links), 1024))
        return -1;
    link_rec_t *r = &n->links[n->nlinks];
    r->name = l->name;
    r->bw = l->bandwidth;
    snprintf(r->tier, sizeof(r->tier), "%s", l->tier[0] ? l->tier : "link");
    n->lhash[h] = n->nlinks;
    return n->nlinks++;
}

/* The route between hosts a and b (ids), queried once. */
static int route(cs__planner_net_t *n, int a, int b, cs_err_t *err)
{
    if (2 * (n->nroutes + 1) > n->rhcap && rehash(n, &n->rhash, &n->rhcap, n->nroutes, route_key))
        return cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory"), -1;
    uint64_t h = cs_hash_mix64(((uint64_t)a << 32) | (uint32_t)b) & (uint64_t)(n->rhcap - 1);
    while (n->rhash[h] >= 0) {
        route_rec_t *r = &n->routes[n->rhash[h]];
        if (r->a == a && r->b == b)
            return n->rhash[h];
        h = (h + 1) & (uint64_t)(n->rhcap - 1);
    }
    cs_sim_link_t l[MAX_ROUTE];
    int nl = 0;
    if (cs_sim_route(n->hostnames[a], n->hostnames[b], l, MAX_ROUTE, &nl, err) != CS_OK)
        return -1;
    if (nl > MAX_ROUTE)
        nl = MAX_ROUTE;
    if (cs_grow(&n->routes, &n->cap_routes, (size_t)n->nroutes + 1, sizeof(*n->routes), 4096) ||
        cs_grow(&n->pool, &n->cap_pool, n->npool + (size_t)nl, sizeof(*n->pool), 65536))
        return cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory"), -1;
    route_rec_t *r = &n->routes[n->nroutes];
    r->a = a, r->b = b, r->off = (int)n->npool, r->n = nl, r->lat = 0;
    for (int i = 0; i < nl; i++) {
        int id = link_id(n, &l[i]);
        if (id < 0)
            return cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory"), -1;
        n->pool[n->npool++] = id;
        r->lat += l[i].latency;
    }
    n->rhash[h] = n->nroutes;
    return n->nroutes++;
}

int cs__planner_route(cs__planner_net_t *n, const char *a, const char *b, int *links, int *nl,
                      double *lat, cs_err_t *err)
{
    int ha = host_id(n, a), hb = ha < 0 ? -1 : host_id(n, b);
    if (ha < 0 || hb < 0)
        return cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
    int ri = route(n, ha, hb, err);
    if (ri < 0)
        return err && err->code ? err->code : CS_ERR_INTERNAL;
    const route_rec_t *r = &n->routes[ri];
    for (int i = 0; i < r->n; i++)
        links[i] = n->pool[r->off + i];
    *nl = r->n;
    *lat = r->lat;
    return CS_OK;
}

double cs__planner_link(const cs__planner_net_t *n, int id, const char **tier)
{
    *tier = n->links[id].tier;
    return n->links[id].bw;
}

int cs__planner_nlinks(const cs__planner_net_t *n) { return n->nlinks; }

/* ---- rounds -------------------------------------------------------------- */

typedef cs__planner_msg_t msg_t;

/* The rounds follow the compiled plan's order (core/cs_plan.h): its events
 * come after every step they depend on, a matched send and receive as one
 * event, a switch operation as one event.  done[] holds each step's round
 * by global id. */
typedef struct rounds {
    const cs_sched_t *s;
    uint32_t *done;
    msg_t *m;
    size_t nm;
    uint32_t maxr;
} rounds_t;

/* The latest round the dependencies of step i of rank r finished in. */
static uint32_t ready_round(const rounds_t *x, const cs_plan_t *p, int r, uint32_t i)
{
    const cs_rank_sched_t *rs = &x->s->ranks[r];
    const cs_step_t *stp = &rs->steps[i];
    const uint32_t *done = x->done + p->base[r];
    uint32_t t = 0;
    for (uint32_t k = 0; k < stp->ndeps; k++)
        if (done[rs->deps[stp->dep_off + k]] > t)
            t = done[rs->deps[stp->dep_off + k]];
    return t;
}

static void on_event(void *ctx, const cs_plan_t *p, int r, uint32_t i, int pr, uint32_t pi)
{
    rounds_t *x = ctx;
    uint32_t t = ready_round(x, p, r, i);
    if (pr >= 0) { /* a message: sent in round t, arrives in t + 1 */
        uint32_t tr = ready_round(x, p, pr, pi);
        x->done[p->base[r] + i] = t + 1; /* the sender is done when it arrived */
        x->done[p->base[pr] + pi] = tr > t + 1 ? tr : t + 1;
        msg_t *m = &x->m[x->nm++];
        m->round = t, m->src = r, m->dst = pr;
        m->chunks = x->s->ranks[r].steps[i].src.n;
        if (t + 1 > x->maxr)
            x->maxr = t + 1;
        return;
    }
    x->done[p->base[r] + i] = t;
    if (x->s->ranks[r].steps[i].kind != CS_STEP_SWITCH)
        return;
    /* a switch operation: every member's step finishes with its own
     * dependencies (the cost model has no round for the switch) */
    for (uint64_t g = p->swnext[p->base[r] + i]; g != CS_PLAN_NOGID; g = p->swnext[g]) {
        int mr;
        uint32_t mi;
        cs_plan_locate(p->base, p->nranks, g, &mr, &mi);
        x->done[g] = ready_round(x, p, mr, mi);
    }
}

int cs__planner_rounds(const cs_sched_t *s, msg_t **out, size_t *nout, uint32_t *nrounds,
                       cs_err_t *err)
{
    int P = s->desc.nranks;
    size_t total = 0, nsend = 0;
    for (int r = 0; r < P; r++) {
        total += s->ranks[r].nsteps;
        for (uint32_t i = 0; i < s->ranks[r].nsteps; i++)
            nsend += s->ranks[r].steps[i].kind == CS_STEP_SEND;
    }
    rounds_t x = {s, malloc(sizeof(uint32_t) * (total ? total : 1)),
                  malloc(sizeof(msg_t) * (nsend ? nsend : 1)), 0, 0};
    cs_plan_t pl;
    memset(&pl, 0, sizeof(pl));
    int st = CS_OK;
    if (!x.done || !x.m)
        st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
    else
        st = cs_plan_init(&pl, s, CS_PLAN_ORDER, on_event, &x, err);
    if (st == CS_OK && pl.nstuck > 0)
        st = cs_err_set(err, CS_ERR_VERIFY, "plan: %llu steps of the schedule never run (a "
                        "receive without its send, or a deadlock)",
                        (unsigned long long)pl.nstuck);
    cs_plan_fini(&pl);
    free(x.done);
    if (st != CS_OK) {
        free(x.m);
        return st;
    }
    *out = x.m;
    *nout = x.nm;
    *nrounds = x.maxr;
    return CS_OK;
}

static int cmp_round(const void *a, const void *b)
{
    const msg_t *x = a, *y = b;
    return x->round < y->round ? -1 : x->round > y->round;
}

/* The registry's closed form with the outermost tier's figures, for
 * schedules too wide to route pair by pair. */
static void by_formula(cs_planner_t *p, cs_planner_cand_t *c)
{
    const cs_algo_t *a = cs_algo_find(p->coll, c->algo);
    const cs_planner_tier_t *t = p->ntiers ? &p->tiers[p->ntiers - 1] : NULL;
    if (!a || !a->cost || !t || !(t->rank_bw > 0)) {
        snprintf(c->err, sizeof(c->err), "too many routes for the model and no formula");
        return;
    }
    cs_params_t prm;
    cs_params_init(&prm);
    cs_err_t e;
    cs_err_clear(&e);
    if (c->params[0])
        cs_params_parse(&prm, c->params, &e);
    cs_coll_desc_t d = {p->coll, p->ranks, 0, 0};
    cs_ab_model_t m = {t->latency, 1.0 / t->rank_bw, 0};
    for (int k = 0; k < p->nsizes; k++)
        c->model_s[k] = a->cost(&d, &prm, (double)p->sizes[k], &m);
    snprintf(c->bottleneck, sizeof(c->bottleneck), "%.14s*", t->name);
}

double cs__planner_sim_cost(int P, double messages, double concurrent)
{
    /* SimGrid's time per message grows with the flows sharing the network;
     * fitted on an idle core to Summit 1536 (ring 4.7 M messages 120 s,
     * hier 6x256 40 k messages 2.7 s, rhd 21 k messages 1.9 s) */
    return 0.3 + 5e-4 * P + 6.5e-7 * messages * sqrt(concurrent > 1 ? concurrent : 1);
}

/* Why a candidate with switch steps has no cost. */
#define SWITCH_REASON "switch steps (in-network reduction): the planner has no model of them"

int cs__planner_cost(cs__planner_net_t *n, cs_planner_t *p, int ci, double max_sim,
                     cs_err_t *err)
{
    cs_planner_cand_t *c = &p->cands[ci];
    /* the closed form's latency term counts the rounds: rounds x P
     * messages at most; a schedule that could not be simulated within
     * max_sim is not built (a flat ring on 1536 ranks has 4.7 M messages) */
    const cs_algo_t *al = cs_algo_find(p->coll, c->algo);
    if (al && al->switched) { /* known before building it (nvls on 27,648 ranks: 1.5 G steps) */
        cs_params_t prm;
        cs_params_init(&prm);
        cs_err_t e;
        cs_err_clear(&e);
        if ((!c->params[0] || cs_params_parse(&prm, c->params, &e) == CS_OK) &&
            cs_algo_switched(al, &prm)) {
            snprintf(c->err, sizeof(c->err), SWITCH_REASON);
            return CS_OK;
        }
    }
    if (al && al->cost) {
        cs_params_t prm;
        cs_params_init(&prm);
        cs_err_t e;
        cs_err_clear(&e);
        if (!c->params[0] || cs_params_parse(&prm, c->params, &e) == CS_OK) {
            cs_coll_desc_t d = {p->coll, p->ranks, 0, 0};
            cs_ab_model_t unit = {1.0, 0, 0};
            double rounds = al->cost(&d, &prm, 0, &unit);
            /* channels run the rounds side by side, each with its messages */
            long ch = 1;
            const char *v = strstr(c->params, "channels=");
            if (v)
                ch = strtol(v + 9, NULL, 10);
            if (ch < 1)
                ch = 1;
            double est = rounds * p->ranks * (double)ch;
            double sc = cs__planner_sim_cost(p->ranks, est, (double)p->ranks * (double)ch);
            if (rounds > 0 && (est > CS__PLANNER_MAX_MESSAGES || sc > max_sim)) {
                c->messages = (uint64_t)est;
                c->sim_cost = sc;
                by_formula(p, c);
                return CS_OK;
            }
        }
    }
    cs_sched_t *s = NULL;
    msg_t *m = NULL;
    size_t nm = 0;
    uint32_t nr = 0;
    double *load = NULL;
    int nload = 0;
    int *touched = NULL, *hid = NULL;
    double tier_w[64];
    char tier_n[64][16];
    int ntier = 0;
    int st = cs__planner_build(p, c, &s, err);
    if (st != CS_OK)
        return st;
    if (cs_sched_has_switch(s)) { /* no model of switch operations: never picked */
        snprintf(c->err, sizeof(c->err), SWITCH_REASON);
        cs_sched_destroy(s);
        return CS_OK;
    }
    c->digest = cs_sched_digest(s);
    int P = p->ranks;
    /* pairs not routed yet: too many -> the formula (before the rounds:
     * schedules where every pair talks are also the slowest to put in rounds) */
    {
        size_t bits = (size_t)P * (size_t)P, distinct = 0, sends = 0, sources = 0;
        unsigned char *seen = calloc((bits + 7) / 8, 1);
        if (!seen) {
            st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
            goto done;
        }
        for (int r = 0; r < P; r++)
            for (uint32_t i = 0, first = 1; i < s->ranks[r].nsteps; i++) {
                const cs_step_t *stp = &s->ranks[r].steps[i];
                if (stp->kind != CS_STEP_SEND)
                    continue;
                sends++;
                sources += first;
                first = 0;
                size_t k = (size_t)r * (size_t)P + (size_t)stp->peer;
                if (!(seen[k / 8] >> (k % 8) & 1))
                    seen[k / 8] |= (unsigned char)(1u << (k % 8)), distinct++;
            }
        free(seen);
        c->messages = sends;
        if ((distinct > (size_t)n->nroutes &&
             (distinct > NEW_ROUTES_MAX || (double)sources * P > SOURCE_WORK_MAX)) ||
            (double)sends > CS__PLANNER_MAX_MESSAGES) {
            c->sim_cost = cs__planner_sim_cost(P, (double)sends, (double)P);
            by_formula(p, c);
            goto done;
        }
    }
    if ((st = cs__planner_rounds(s, &m, &nm, &nr, err)) != CS_OK)
        goto done;
    c->messages = nm;
    /* simulation cost: SimGrid's time grows with messages times the flows
     * that share the network with each (measured on Summit presets) */
    double conc = nr ? (double)nm / nr : 1;
    c->sim_cost = cs__planner_sim_cost(P, (double)nm, conc);
    hid = malloc(sizeof(int) * (size_t)P);
    if (!hid) {
        st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
        goto done;
    }
    for (int r = 0; r < P; r++)
        if ((hid[r] = host_id(n, cs_planner_host(p, c->map, r))) < 0) {
            st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
            goto done;
        }
    qsort(m, nm, sizeof(msg_t), cmp_round);
    double W = 0, Lsum = 0; /* sum of per-round max load (chunks / bw) and latency */
    size_t i = 0;
    while (i < nm) {
        size_t j = i;
        while (j < nm && m[j].round == m[i].round)
            j++;
        /* route every message of the round first (the link table grows) */
        int ntouch = 0;
        double lat = 0;
        for (size_t k = i; k < j; k++) {
            int ri = route(n, hid[m[k].src], hid[m[k].dst], err);
            if (ri < 0) {
                st = err && err->code ? err->code : CS_ERR_INTERNAL;
                goto done;
            }
            m[k].round = (uint32_t)ri; /* reuse: the route's index */
        }
        if (n->nlinks > nload) {
            double *nl = realloc(load, sizeof(double) * (size_t)n->nlinks);
            if (nl)
                load = nl;
            int *nt = realloc(touched, sizeof(int) * (size_t)n->nlinks);
            if (nt)
                touched = nt;
            if (!nl || !nt) {
                st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
                goto done;
            }
            memset(load + nload, 0, sizeof(double) * (size_t)(n->nlinks - nload));
            nload = n->nlinks;
        }
        for (size_t k = i; k < j; k++) {
            const route_rec_t *r = &n->routes[m[k].round];
            if (r->lat > lat)
                lat = r->lat;
            for (int x = 0; x < r->n; x++) {
                int id = n->pool[r->off + x];
                if (load[id] == 0)
                    touched[ntouch++] = id;
                load[id] += (double)m[k].chunks / n->links[id].bw;
            }
        }
        double w = 0;
        int wl = -1;
        for (int x = 0; x < ntouch; x++) {
            if (load[touched[x]] > w)
                w = load[touched[x]], wl = touched[x];
            load[touched[x]] = 0;
        }
        W += w;
        Lsum += lat;
        if (wl >= 0) {
            int t = 0;
            while (t < ntier && strcmp(tier_n[t], n->links[wl].tier) != 0)
                t++;
            if (t == ntier && ntier < 64) {
                snprintf(tier_n[ntier], sizeof(tier_n[0]), "%s", n->links[wl].tier);
                tier_w[ntier++] = 0;
            }
            if (t < 64)
                tier_w[t] += w;
        }
        i = j;
    }
    for (int k = 0; k < p->nsizes; k++)
        c->model_s[k] = W * (double)p->sizes[k] / (double)s->nchunks + Lsum;
    int bt = -1;
    for (int t = 0; t < ntier; t++)
        if (bt < 0 || tier_w[t] > tier_w[bt])
            bt = t;
    snprintf(c->bottleneck, sizeof(c->bottleneck), "%s", bt >= 0 ? tier_n[bt] : "-");
done:
    free(load);
    free(touched);
    free(hid);
    free(m);
    cs_sched_destroy(s);
    return st;
}
