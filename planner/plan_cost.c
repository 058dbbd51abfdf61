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
 * life of the process.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_algo.h"
#include "cs_grow.h"
#include "cs_hash.h"
#include "cs_planner_int.h"
#include "cs_sim.h"

#define MAX_ROUTE CS__PLANNER_MAX_ROUTE
/* a schedule needing more new routes than this is costed by its formula */
#define NEW_ROUTES_MAX 60000

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

static struct {
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
} C;

void cs__planner_cost_reset(void)
{
    free(C.links);
    free(C.lhash);
    free(C.routes);
    free(C.rhash);
    free(C.pool);
    for (int i = 0; i < C.nhosts; i++)
        free(C.hostnames[i]);
    free(C.hostnames);
    free(C.hhash);
    memset(&C, 0, sizeof(C));
}

/* Grow an open-addressing table of indices (-1 empty) and re-insert. */
static int rehash(int **tab, int *cap, int n, uint64_t (*key)(int))
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
        uint64_t h = key(i) & (uint64_t)(nc - 1);
        while (t[h] >= 0)
            h = (h + 1) & (uint64_t)(nc - 1);
        t[h] = i;
    }
    free(*tab);
    *tab = t;
    *cap = nc;
    return 0;
}

static uint64_t host_key(int i) { return cs_hash_str(C.hostnames[i]); }
static uint64_t link_key(int i) { return cs_hash_mix64((uint64_t)(uintptr_t)C.links[i].name); }
static uint64_t route_key(int i)
{
    return cs_hash_mix64(((uint64_t)C.routes[i].a << 32) | (uint32_t)C.routes[i].b);
}

static int host_id(const char *name)
{
    if (2 * (C.nhosts + 1) > C.hhcap && rehash(&C.hhash, &C.hhcap, C.nhosts, host_key))
        return -1;
    uint64_t h = cs_hash_str(name) & (uint64_t)(C.hhcap - 1);
    while (C.hhash[h] >= 0) {
        if (strcmp(C.hostnames[C.hhash[h]], name) == 0)
            return C.hhash[h];
        h = (h + 1) & (uint64_t)(C.hhcap - 1);
    }
    if (cs_grow(&C.hostnames, &C.cap_hosts, (size_t)C.nhosts + 1, sizeof(char *), 256))
        return -1;
    if (!(C.hostnames[C.nhosts] = strdup(name)))
        return -1;
    C.hhash[h] = C.nhosts;
    return C.nhosts++;
}

static int link_id(const cs_sim_link_t *l)
{
    if (2 * (C.nlinks + 1) > C.lhcap && rehash(&C.lhash, &C.lhcap, C.nlinks, link_key))
        return -1;
    uint64_t h = cs_hash_mix64((uint64_t)(uintptr_t)l->name) & (uint64_t)(C.lhcap - 1);
    while (C.lhash[h] >= 0) {
        if (C.links[C.lhash[h]].name == l->name)
            return C.lhash[h];
        h = (h + 1) & (uint64_t)(C.lhcap - 1);
    }
    if (cs_grow(&C.links, &C.cap_links, (size_t)C.nlinks + 1, sizeof(*C.links), 1024))
        return -1;
    link_rec_t *r = &C.links[C.nlinks];
    r->name = l->name;
    r->bw = l->bandwidth;
    snprintf(r->tier, sizeof(r->tier), "%s", l->tier[0] ? l->tier : "link");
    C.lhash[h] = C.nlinks;
    return C.nlinks++;
}

/* The route between hosts a and b (ids), queried once. */
static int route(int a, int b, cs_err_t *err)
{
    if (2 * (C.nroutes + 1) > C.rhcap && rehash(&C.rhash, &C.rhcap, C.nroutes, route_key))
        return cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory"), -1;
    uint64_t h = cs_hash_mix64(((uint64_t)a << 32) | (uint32_t)b) & (uint64_t)(C.rhcap - 1);
    while (C.rhash[h] >= 0) {
        route_rec_t *r = &C.routes[C.rhash[h]];
        if (r->a == a && r->b == b)
            return C.rhash[h];
        h = (h + 1) & (uint64_t)(C.rhcap - 1);
    }
    cs_sim_link_t l[MAX_ROUTE];
    int n = 0;
    if (cs_sim_route(C.hostnames[a], C.hostnames[b], l, MAX_ROUTE, &n, err) != CS_OK)
        return -1;
    if (n > MAX_ROUTE)
        n = MAX_ROUTE;
    if (cs_grow(&C.routes, &C.cap_routes, (size_t)C.nroutes + 1, sizeof(*C.routes), 4096) ||
        cs_grow(&C.pool, &C.cap_pool, C.npool + (size_t)n, sizeof(*C.pool), 65536))
        return cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory"), -1;
    route_rec_t *r = &C.routes[C.nroutes];
    r->a = a, r->b = b, r->off = (int)C.npool, r->n = n, r->lat = 0;
    for (int i = 0; i < n; i++) {
        int id = link_id(&l[i]);
        if (id < 0)
            return cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory"), -1;
        C.pool[C.npool++] = id;
        r->lat += l[i].latency;
    }
    C.rhash[h] = C.nroutes;
    return C.nroutes++;
}

int cs__planner_route(const char *a, const char *b, int *links, int *n, double *lat,
                      cs_err_t *err)
{
    int ha = host_id(a), hb = ha < 0 ? -1 : host_id(b);
    if (ha < 0 || hb < 0)
        return cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
    int ri = route(ha, hb, err);
    if (ri < 0)
        return err && err->code ? err->code : CS_ERR_INTERNAL;
    const route_rec_t *r = &C.routes[ri];
    for (int i = 0; i < r->n; i++)
        links[i] = C.pool[r->off + i];
    *n = r->n;
    *lat = r->lat;
    return CS_OK;
}

double cs__planner_link(int id, const char **tier)
{
    *tier = C.links[id].tier;
    return C.links[id].bw;
}

int cs__planner_nlinks(void) { return C.nlinks; }

/* ---- rounds -------------------------------------------------------------- */

typedef cs__planner_msg_t msg_t;

/* FIFO of the rounds of sends not yet received, per (src, dst, chan). */
typedef struct chanq {
    int32_t src, dst;
    uint32_t chan;
    uint32_t *q;
    int head, n;
    size_t cap;
} chanq_t;

typedef struct qtab {
    chanq_t *v;
    int n;
    size_t cap;
    int *h;
    int hcap;
} qtab_t;

static uint64_t qkey(int32_t s, int32_t d, uint32_t c)
{
    return cs_hash_mix64(((uint64_t)(uint32_t)s << 40) ^ ((uint64_t)(uint32_t)d << 16) ^ c);
}

static chanq_t *qget(qtab_t *t, int32_t s, int32_t d, uint32_t c)
{
    if (2 * (t->n + 1) > t->hcap) {
        int nc = t->hcap ? 2 * t->hcap : 4096;
        int *h = malloc(sizeof(int) * (size_t)nc);
        if (!h)
            return NULL;
        for (int i = 0; i < nc; i++)
            h[i] = -1;
        for (int i = 0; i < t->n; i++) {
            uint64_t k = qkey(t->v[i].src, t->v[i].dst, t->v[i].chan) & (uint64_t)(nc - 1);
            while (h[k] >= 0)
                k = (k + 1) & (uint64_t)(nc - 1);
            h[k] = i;
        }
        free(t->h);
        t->h = h, t->hcap = nc;
    }
    uint64_t k = qkey(s, d, c) & (uint64_t)(t->hcap - 1);
    while (t->h[k] >= 0) {
        chanq_t *q = &t->v[t->h[k]];
        if (q->src == s && q->dst == d && q->chan == c)
            return q;
        k = (k + 1) & (uint64_t)(t->hcap - 1);
    }
    if (cs_grow(&t->v, &t->cap, (size_t)t->n + 1, sizeof(*t->v), 1024))
        return NULL;
    chanq_t *q = &t->v[t->n];
    memset(q, 0, sizeof(*q));
    q->src = s, q->dst = d, q->chan = c;
    t->h[k] = t->n++;
    return q;
}

static void qtab_free(qtab_t *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->v[i].q);
    free(t->v);
    free(t->h);
}

int cs__planner_rounds(const cs_sched_t *s, msg_t **out, size_t *nout, uint32_t *nrounds,
                     cs_err_t *err)
{
    int P = s->desc.nranks, st = CS_OK;
    size_t total = 0, nm = 0;
    for (int r = 0; r < P; r++)
        total += s->ranks[r].nsteps;
    uint32_t **done = calloc((size_t)P, sizeof(*done));
    uint32_t *next = calloc((size_t)P, sizeof(*next));
    size_t nsend = 0;
    for (int r = 0; r < P; r++)
        for (uint32_t i = 0; i < s->ranks[r].nsteps; i++)
            nsend += s->ranks[r].steps[i].kind == CS_STEP_SEND;
    msg_t *m = malloc(sizeof(msg_t) * (nsend ? nsend : 1));
    qtab_t qt;
    memset(&qt, 0, sizeof(qt));
    uint32_t maxr = 0;
    if (!done || !next || !m) {
        st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
        goto fail;
    }
    for (int r = 0; r < P; r++)
        if (!(done[r] = malloc(sizeof(uint32_t) * (s->ranks[r].nsteps + 1)))) {
            st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
            goto fail;
        }
    size_t processed = 0;
    int progress = 1;
    while (processed < total && progress) {
        progress = 0;
        for (int r = 0; r < P; r++) {
            const cs_rank_sched_t *rs = &s->ranks[r];
            while (next[r] < rs->nsteps) {
                const cs_step_t *stp = &rs->steps[next[r]];
                uint32_t t = 0;
                for (uint32_t k = 0; k < stp->ndeps; k++) {
                    uint32_t d = done[r][rs->deps[stp->dep_off + k]];
                    if (d > t)
                        t = d;
                }
                if (stp->kind == CS_STEP_SEND) {
                    chanq_t *q = qget(&qt, r, stp->peer, stp->chan);
                    if (!q) {
                        st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
                        goto fail;
                    }
                    if (q->head > 0 && (size_t)(q->head + q->n) == q->cap) {
                        memmove(q->q, q->q + q->head, sizeof(uint32_t) * (size_t)q->n);
                        q->head = 0;
                    }
                    if (cs_grow(&q->q, &q->cap, (size_t)(q->head + q->n) + 1, sizeof(*q->q), 4)) {
                        st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
                        goto fail;
                    }
                    q->q[q->head + q->n++] = t;
                    m[nm].round = t, m[nm].src = r, m[nm].dst = stp->peer;
                    m[nm].chunks = stp->src.n;
                    nm++;
                    if (t + 1 > maxr)
                        maxr = t + 1;
                    /* the sender is done when the message arrived */
                    done[r][next[r]] = t + 1;
                } else if (stp->kind == CS_STEP_RECV || stp->kind == CS_STEP_RRECV) {
                    chanq_t *q = qget(&qt, stp->peer, r, stp->chan);
                    if (!q) {
                        st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
                        goto fail;
                    }
                    if (q->n == 0)
                        break; /* its send is not placed yet */
                    uint32_t a = q->q[q->head++] + 1;
                    q->n--;
                    done[r][next[r]] = a > t ? a : t;
                } else {
                    done[r][next[r]] = t;
                }
                next[r]++;
                processed++;
                progress = 1;
            }
        }
    }
    if (processed < total) {
        st = cs_err_set(err, CS_ERR_VERIFY, "plan: the schedule's messages do not match "
                        "(a receive without its send)");
        goto fail;
    }
    *out = m;
    *nout = nm;
    *nrounds = maxr;
    m = NULL;
fail:
    for (int r = 0; done && r < P; r++)
        free(done[r]);
    free(done);
    free(next);
    free(m);
    qtab_free(&qt);
    return st;
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

int cs__planner_cost(cs_planner_t *p, int ci, double max_sim, cs_err_t *err)
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
            double est = rounds * p->ranks;
            double sc = cs__planner_sim_cost(p->ranks, est, p->ranks);
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
        size_t bits = (size_t)P * (size_t)P, distinct = 0, sends = 0;
        unsigned char *seen = calloc((bits + 7) / 8, 1);
        if (!seen) {
            st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
            goto done;
        }
        for (int r = 0; r < P; r++)
            for (uint32_t i = 0; i < s->ranks[r].nsteps; i++) {
                const cs_step_t *stp = &s->ranks[r].steps[i];
                if (stp->kind != CS_STEP_SEND)
                    continue;
                sends++;
                size_t k = (size_t)r * (size_t)P + (size_t)stp->peer;
                if (!(seen[k / 8] >> (k % 8) & 1))
                    seen[k / 8] |= (unsigned char)(1u << (k % 8)), distinct++;
            }
        free(seen);
        c->messages = sends;
        if ((distinct > NEW_ROUTES_MAX && distinct > (size_t)C.nroutes) ||
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
        if ((hid[r] = host_id(cs_planner_host(p, c->map, r))) < 0) {
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
            int ri = route(hid[m[k].src], hid[m[k].dst], err);
            if (ri < 0) {
                st = err && err->code ? err->code : CS_ERR_INTERNAL;
                goto done;
            }
            m[k].round = (uint32_t)ri; /* reuse: the route's index */
        }
        if (C.nlinks > nload) {
            double *nl = realloc(load, sizeof(double) * (size_t)C.nlinks);
            if (nl)
                load = nl;
            int *nt = realloc(touched, sizeof(int) * (size_t)C.nlinks);
            if (nt)
                touched = nt;
            if (!nl || !nt) {
                st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
                goto done;
            }
            memset(load + nload, 0, sizeof(double) * (size_t)(C.nlinks - nload));
            nload = C.nlinks;
        }
        for (size_t k = i; k < j; k++) {
            const route_rec_t *r = &C.routes[m[k].round];
            if (r->lat > lat)
                lat = r->lat;
            for (int x = 0; x < r->n; x++) {
                int id = C.pool[r->off + x];
                if (load[id] == 0)
                    touched[ntouch++] = id;
                load[id] += (double)m[k].chunks / C.links[id].bw;
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
            while (t < ntier && strcmp(tier_n[t], C.links[wl].tier) != 0)
                t++;
            if (t == ntier && ntier < 64) {
                snprintf(tier_n[ntier], sizeof(tier_n[0]), "%s", C.links[wl].tier);
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
