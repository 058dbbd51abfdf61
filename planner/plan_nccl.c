/*
 * plan_nccl.c - NCCL's choice in the planner (cs_planner.h): the system
 * NCCL's tuner sees and its choice per size, simulated as the schedule
 * cs_nccl_as_sched names under the plan's model (a reference row under
 * any model); under model nccl also what a candidate's steps pay and the
 * terms a simulated time is made of (cs_planner_terms_t), by the model's
 * numbers over the cost model's rounds and routes (plan_cost.c).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_algo.h"
#include "cs_child.h"
#include "cs_planner_int.h"
#include "cs_platform.h"
#include "cs_sim.h"

/* NCCL's constants and the system its tuner sees on the ranks' hosts. */
static int nccl_system(const cs_platform_t *plat, const cs_planner_opts_t *o, cs_planner_t *p,
                       cs__planner_model_t *m, cs_err_t *err)
{
    int exact = 0;
    if (!(m->k = cs_nccl_consts_for(o->nccl_version, 0, &exact)))
        return cs_err_set(err, CS_ERR_INVAL, "--nccl-version: expected a version like 2.26.2, "
                          "found '%s'", o->nccl_version);
    cs_sim_opts_t so;
    cs_sim_opts_init(&so);
    char **hosts = NULL;
    int st = cs_sim_hosts(plat, &so, p->ranks, &hosts, err);
    if (st != CS_OK)
        return st;
    cs_err_t e;
    cs_err_clear(&e);
    st = cs_nccl_sys_from(plat, hosts, p->ranks, m->k, &m->sys, &e);
    cs_sim_hosts_free(hosts, p->ranks);
    if (st != CS_OK) /* the message names --model nccl and what the platform lacks */
        return cs_err_set(err, st, "%s", e.msg);
    if (m->sys.rccl) { /* AMD GPUs: RCCL's constants, and its view of the system */
        m->k = cs_nccl_consts_for(o->nccl_version, 1, &exact);
        st = cs_sim_hosts(plat, &so, p->ranks, &hosts, err);
        if (st != CS_OK)
            return st;
        st = cs_nccl_sys_from(plat, hosts, p->ranks, m->k, &m->sys, &e);
        cs_sim_hosts_free(hosts, p->ranks);
        if (st != CS_OK)
            return cs_err_set(err, st, "%s", e.msg);
    }
    return CS_OK;
}

int cs__planner_nccl_setup(const cs_platform_t *plat, const cs_planner_opts_t *o, cs_planner_t *p,
                           cs__planner_model_t *m, cs_err_t *err)
{
    memset(m, 0, sizeof(*m));
    m->algo = m->proto = -1;
    int as_model = o->model == CS_SIM_NCCL;
    if (o->nccl_algo && (m->algo = cs_nccl_algo_parse(o->nccl_algo)) < 0)
        return cs_err_set(err, CS_ERR_INVAL, "--nccl-algo: expected Tree, Ring, CollNetDirect, "
                          "CollNetChain, NVLS, NVLSTree or PAT, found '%s'", o->nccl_algo);
    if (o->nccl_proto && (m->proto = cs_nccl_proto_parse(o->nccl_proto)) < 0)
        return cs_err_set(err, CS_ERR_INVAL, "--nccl-proto: expected LL, LL128 or Simple, found "
                          "'%s'", o->nccl_proto);
    cs_err_t e;
    cs_err_clear(&e);
    int st = nccl_system(plat, o, p, m, &e);
    if (st != CS_OK && (as_model || st == CS_ERR_INTERRUPTED || st == CS_ERR_NOMEM))
        return cs_err_set(err, st, "%s", e.msg);
    if (st != CS_OK) { /* another model: the plan goes on without the reference */
        char why[CS_ERR_MSG_MAX];
        const char *x = strstr(e.msg, "--model nccl needs");
        if (x) /* the platform's GPU: NCCL's model needs it, whichever model plans */
            snprintf(why, sizeof(why), "%.*sNCCL's model needs%s", (int)(x - e.msg), e.msg,
                     x + strlen("--model nccl needs"));
        else
            snprintf(why, sizeof(why), "%s", e.msg);
        snprintf(p->nccl_note, sizeof(p->nccl_note), "no reference row of NCCL's choice: %.200s",
                 why);
        return CS_OK;
    }
    for (int t = 0; t < CS_PLAT_MAX_TIERS; t++)
        m->scale[t] = m->sys.tier_scale[t];
    p->nccl = as_model;
    snprintf(p->nccl_lib, sizeof(p->nccl_lib), "%s", m->k->lib);
    snprintf(p->nccl_version, sizeof(p->nccl_version), "%s", m->k->version);
    snprintf(p->nccl_note, sizeof(p->nccl_note), "%s", m->sys.note);
    for (int k = 0; k < p->nsizes; k++) {
        cs_planner_nccl_t *n = &p->nccl_pick[k];
        memset(n, 0, sizeof(*n));
        int a, pr;
        double us = -1;
        if (p->coll == CS_COLL_ALLTOALL) {
            /* NCCL runs all-to-all as point-to-point sends, outside its tuner */
            a = CS_NCCL_P2P, pr = CS_NCCL_SIMPLE;
        } else if (cs_nccl_choose(m->k, &m->sys, p->coll, p->sizes[k], m->algo, m->proto, &a, &pr,
                                  &us) != CS_OK) {
            if (!as_model) {
                snprintf(p->nccl_note, sizeof(p->nccl_note), "no reference row of NCCL's "
                         "choice: NCCL has no algorithm for %s on %d ranks",
                         cs_coll_name(p->coll), p->ranks);
                return CS_OK;
            }
            return cs_err_set(err, CS_ERR_NOTFOUND, "--model nccl: NCCL has no algorithm for %s "
                              "on %d ranks%s%s%s%s", cs_coll_name(p->coll), p->ranks,
                              m->algo >= 0 ? " with --nccl-algo " : "",
                              m->algo >= 0 ? cs_nccl_algo_name(m->algo) : "",
                              m->proto >= 0 ? " and --nccl-proto " : "",
                              m->proto >= 0 ? cs_nccl_proto_name(m->proto) : "");
        }
        n->algo = a, n->proto = pr;
        n->channels = cs_nccl_channels(m->k, &m->sys, p->coll, a, pr, p->sizes[k]);
        n->tuner_s = us >= 0 ? us * 1e-6 : -1;
        n->sim_s = -1;
        cs_nccl_as_sched(&m->sys, p->coll, a, pr, p->sizes[k], n->sched, sizeof(n->sched),
                         n->params, sizeof(n->params));
        snprintf(n->err, sizeof(n->err), "not simulated");
    }
    p->nccl_ref = 1;
    return CS_OK;
}

void cs__planner_nccl_costs(const cs__planner_model_t *m, const cs_sched_t *s, uint64_t bytes,
                            cs_sim_nccl_t *out, int *algo, int *proto)
{
    int a = m->algo >= 0 ? m->algo : cs_nccl_algo_of(s, &m->sys), p;
    /* the protocol NCCL would use for this algorithm at this size; any
     * all-to-all runs on NCCL's send/receive path */
    if (s->desc.coll == CS_COLL_ALLTOALL) {
        a = CS_NCCL_P2P;
        p = CS_NCCL_SIMPLE;
    } else if (cs_nccl_choose(m->k, &m->sys, s->desc.coll, bytes, a, m->proto, &a, &p, NULL) != CS_OK &&
        cs_nccl_choose(m->k, &m->sys, s->desc.coll, bytes, CS_NCCL_RING, m->proto, &a, &p, NULL) !=
            CS_OK) {
        /* nothing NCCL runs fits (a forced protocol the platform lacks):
         * Ring's costs with Simple */
        a = CS_NCCL_RING;
        p = CS_NCCL_SIMPLE;
    }
    cs_nccl_step_costs(m->k, &m->sys, s, a, p, bytes, out);
    *algo = a, *proto = p;
}

/* ---- terms ----------------------------------------------------------------- */

static int cmp_round(const void *a, const void *b)
{
    const cs__planner_msg_t *x = a, *y = b;
    return x->round < y->round ? -1 : x->round > y->round;
}

typedef struct tier_acc {
    char name[16];
    double s, rate;
    int capped;
} tier_acc_t;

static void tier_add(tier_acc_t *acc, int *n, const char *name, double s, double rate, int capped)
{
    int i = 0;
    while (i < *n && strcmp(acc[i].name, name) != 0)
        i++;
    if (i == *n) {
        if (*n == 16)
            return;
        memset(&acc[i], 0, sizeof(acc[i]));
        snprintf(acc[i].name, sizeof(acc[i].name), "%s", name);
        (*n)++;
    }
    acc[i].s += s;
    acc[i].rate = rate;
    acc[i].capped = capped;
}

/* The switch's reduction rate per member for group g of s (0: unknown). */
static double switch_rate(cs__planner_net_t *net, const cs_platform_t *plat,
                          const cs_planner_t *p, int map, const cs_sched_t *s, int g,
                          const cs_sim_nccl_t *c, char *kind, size_t klen)
{
    const cs_group_t *gr = &s->groups[g];
    uint32_t n = gr->n;
    const char **hv = malloc(sizeof(char *) * (n ? n : 1));
    if (!hv)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        hv[i] = cs_planner_host(p, map, gr->members[i]);
    int sw = cs_platform_switch_for(plat, hv, n);
    const char *h0 = n ? hv[0] : NULL;
    free(hv);
    if (sw >= 0)
        snprintf(kind, klen, "%s", plat->switches[sw].kind == CS_REDUCE_NVLS ? "NVLS" : "SHARP");
    if (c->sw_rate > 0)
        return c->sw_rate;
    if (sw < 0 || n == 0)
        return 0;
    const cs_plat_switch_t *x = &plat->switches[sw];
    if (x->reduce_bw > 0)
        return x->reduce_bw / gr->n;
    /* the sum of the members' last links: each member's share is its own
     * route's slowest link */
    int ids[CS__PLANNER_MAX_ROUTE], nl = 0;
    double lat, bw = 0;
    cs_err_t e;
    cs_err_clear(&e);
    if (cs__planner_route(net, h0, x->host, ids, &nl, &lat, &e) != CS_OK)
        return 0;
    for (int i = 0; i < nl; i++) {
        const char *tier;
        double b = cs__planner_link(net, ids[i], &tier);
        if (i == 0 || b < bw)
            bw = b;
    }
    return bw * (c->sw_eff > 0 ? c->sw_eff : 1.0);
}

void cs__planner_terms(cs__planner_net_t *net, const cs_platform_t *plat, const cs_planner_t *p,
                       int map, const cs_sched_t *s, uint64_t bytes, const cs_sim_nccl_t *c,
                       cs_planner_terms_t *t)
{
    memset(t, 0, sizeof(*t));
    if (!net) /* out of memory: not computed */
        return;
    int P = s->desc.nranks;
    double per_chunk = (double)bytes / (double)(s->nchunks ? s->nchunks : 1);
    /* the switch: the member handing it the most bytes */
    double ops = 0, *grate = s->ngroups ? malloc(sizeof(double) * s->ngroups) : NULL;
    for (uint32_t g = 0; g < s->ngroups && grate; g++)
        grate[g] = -1;
    for (int r = 0; r < P && (grate || !s->ngroups); r++) {
        double sw = 0, nops = 0;
        for (uint32_t i = 0; i < s->ranks[r].nsteps; i++) {
            const cs_step_t *st = &s->ranks[r].steps[i];
            if (st->kind != CS_STEP_SWITCH)
                continue;
            nops++;
            /* the switch reduces the contributions; a multicast only copies */
            uint32_t ch = st->op == CS_SW_MULTICAST ? 0 : st->src.n;
            if (ch == 0 || st->peer < 0 || (uint32_t)st->peer >= s->ngroups)
                continue;
            if (grate[st->peer] < 0)
                grate[st->peer] = switch_rate(net, plat, p, map, s, st->peer, c, t->sw_kind,
                                              sizeof(t->sw_kind));
            double rate = grate[st->peer];
            if (rate > 0) {
                sw += ch * per_chunk / rate;
                t->sw_rate = rate;
            }
        }
        if (sw > t->sw_s)
            t->sw_s = sw;
        if (nops > ops)
            ops = nops;
    }
    free(grate);
    /* NVLS's and NVLSTree's pipeline fill and drain (sw_fill is counted in
     * bytes at the switch's rate, cs_nccl_step_costs) */
    if (c->sw_fill > 0 && c->sw_rate > 0)
        t->sw_s += c->sw_fill / c->sw_rate;
    if (s->nswitch > 0 && !t->sw_kind[0])
        snprintf(t->sw_kind, sizeof(t->sw_kind), "switch");
    cs__planner_msg_t *m = NULL;
    size_t nm = 0;
    uint32_t nr = 0;
    size_t sends = 0;
    for (int r = 0; r < P; r++)
        for (uint32_t i = 0; i < s->ranks[r].nsteps; i++)
            sends += s->ranks[r].steps[i].kind == CS_STEP_SEND;
    cs_err_t err;
    cs_err_clear(&err);
    if ((double)sends > CS__PLANNER_MAX_MESSAGES ||
        cs__planner_rounds(s, &m, &nm, &nr, &err) != CS_OK)
        return;
    qsort(m, nm, sizeof(*m), cmp_round);
    double *load = NULL, lat_sum = 0;
    int nload = 0, *touched = NULL, ok = 1, nacc = 0;
    tier_acc_t acc[16];
    for (size_t i = 0; i < nm && ok;) {
        size_t j = i;
        while (j < nm && m[j].round == m[i].round)
            j++;
        double lat_r = 0, wmsg = 0, rmsg = 0;
        int cmsg = 0, ntouch = 0;
        const char *tmsg = "link";
        for (size_t x = i; x < j && ok; x++) {
            int ids[CS__PLANNER_MAX_ROUTE], nl = 0, hw = 0, slow = -1;
            double rl, B = 0;
            if (cs__planner_route(net, cs_planner_host(p, map, m[x].src),
                                  cs_planner_host(p, map, m[x].dst), ids, &nl, &rl,
                                  &err) != CS_OK) {
                ok = 0;
                break;
            }
            if (cs__planner_nlinks(net) > nload) {
                int nn = cs__planner_nlinks(net);
                double *l2 = realloc(load, sizeof(double) * (size_t)nn);
                if (l2)
                    load = l2;
                int *t2 = realloc(touched, sizeof(int) * (size_t)nn);
                if (t2)
                    touched = t2;
                if (!l2 || !t2) {
                    ok = 0;
                    break;
                }
                memset(load + nload, 0, sizeof(double) * (size_t)(nn - nload));
                nload = nn;
            }
            for (int y = 0; y < nl; y++) {
                const char *tier;
                double b = cs__planner_link(net, ids[y], &tier);
                int cl = cs_sim_hw_class(tier);
                hw = cl > hw ? cl : hw;
                if (slow < 0 || b < B)
                    B = b, slow = ids[y];
            }
            if (c->lat[hw] > lat_r)
                lat_r = c->lat[hw];
            double mb = m[x].chunks * per_chunk, eff = c->eff[hw] > 0 ? c->eff[hw] : 1.0;
            double rate = eff * B;
            int capped = c->cap[hw] > 0 && c->cap[hw] < rate;
            if (capped)
                rate = c->cap[hw];
            if (rate > 0 && mb / rate > wmsg) {
                wmsg = mb / rate, rmsg = rate, cmsg = capped;
                cs__planner_link(net, slow, &tmsg);
            }
            for (int y = 0; y < nl; y++) {
                const char *tier;
                double b = cs__planner_link(net, ids[y], &tier);
                if (load[ids[y]] == 0)
                    touched[ntouch++] = ids[y];
                load[ids[y]] += mb / (eff * b);
            }
        }
        double wl = 0;
        int busiest = -1;
        for (int y = 0; y < ntouch; y++) {
            if (load[touched[y]] > wl)
                wl = load[touched[y]], busiest = touched[y];
            load[touched[y]] = 0;
        }
        if (!ok)
            break;
        if (wl > wmsg && busiest >= 0) {
            const char *tier;
            double b = cs__planner_link(net, busiest, &tier);
            double eff = c->eff[cs_sim_hw_class(tier)];
            tier_add(acc, &nacc, tier, wl, (eff > 0 ? eff : 1.0) * b, 0);
            t->bw_s += wl;
        } else if (wmsg > 0) {
            tier_add(acc, &nacc, tmsg, wmsg, rmsg, cmsg);
            t->bw_s += wmsg;
        }
        lat_sum += lat_r;
        t->steps += 1;
        i = j;
    }
    free(load);
    free(touched);
    free(m);
    if (!ok)
        return;
    int best = -1;
    for (int i = 0; i < nacc; i++)
        if (best < 0 || acc[i].s > acc[best].s)
            best = i;
    if (best >= 0) {
        snprintf(t->tier, sizeof(t->tier), "%s", acc[best].name);
        t->tier_rate = acc[best].rate;
        t->capped = acc[best].capped;
    }
    t->step_s = t->steps > 0 ? lat_sum / t->steps : 0;
    /* the rounds' latencies add up NCCL's whole step latency already (the
     * pieces' C-th each, one round after another): the part the
     * simulation pays at the start (hid_lat) is not counted again */
    t->base_s = c->base_lat;
    t->sw_ops = ops;
    t->sw_op_s = c->sw_lat;
    t->lat_s = c->base_lat + lat_sum + ops * c->sw_lat;
    t->ok = 1;
}

/* ---- NCCL's choice, simulated ---------------------------------------------- */

int cs__planner_nccl_simulate(const cs_platform_t *plat, const cs__planner_model_t *m,
                              cs_planner_t *p)
{
    int n = p->nsizes, ns = 0, of[CS_PLANNER_MAX_SIZES];
    cs_sched_t *sch[CS_PLANNER_MAX_SIZES];
    cs_sim_instance_t in[CS_PLANNER_MAX_SIZES];
    cs_sim_nccl_t cost[CS_PLANNER_MAX_SIZES];
    cs_err_t err;
    cs_err_clear(&err);
    int st = CS_OK;
    /* one schedule per distinct generator and parameters */
    for (int k = 0; k < n && st == CS_OK; k++) {
        cs_planner_nccl_t *x = &p->nccl_pick[k];
        of[k] = -1;
        for (int j = 0; j < k && of[k] < 0; j++)
            if (strcmp(p->nccl_pick[j].sched, x->sched) == 0 &&
                strcmp(p->nccl_pick[j].params, x->params) == 0)
                of[k] = of[j];
        if (of[k] >= 0)
            continue;
        cs_planner_cand_t c;
        memset(&c, 0, sizeof(c));
        snprintf(c.algo, sizeof(c.algo), "%s", x->sched);
        snprintf(c.params, sizeof(c.params), "%s", x->params);
        if ((st = cs__planner_build(p, &c, &sch[ns], &err)) != CS_OK)
            break;
        of[k] = ns++;
    }
    for (int k = 0; k < n && st == CS_OK; k++) {
        cs_planner_nccl_t *x = &p->nccl_pick[k];
        /* under model nccl what NCCL pays per step; under another model the
         * schedule alone, as every candidate */
        if (p->nccl)
            cs_nccl_step_costs(m->k, &m->sys, sch[of[k]], x->algo, x->proto, p->sizes[k],
                               &cost[k]);
        in[k] = (cs_sim_instance_t){sch[of[k]], p->sizes[k], CS_DT_F32, 0, 0,
                                    p->nccl ? &cost[k] : NULL};
    }
    if (st == CS_OK) {
        cs_sim_opts_t so;
        cs_sim_opts_init(&so);
        so.model = p->model;
        if (p->nccl)
            so.tier_bw_scale = m->scale;
        st = cs_sim_run(plat, &so, in, n, &err);
    }
    cs__planner_net_t *net = st == CS_OK && p->nccl ? cs__planner_net_new() : NULL;
    for (int k = 0; k < n; k++) {
        cs_planner_nccl_t *x = &p->nccl_pick[k];
        if (st != CS_OK) {
            snprintf(x->err, sizeof(x->err), "%.150s", err.msg);
            continue;
        }
        x->sim_s = in[k].time;
        x->err[0] = '\0';
        if (!p->nccl) /* the terms are NCCL's model's numbers */
            continue;
        cs__planner_terms(net, plat, p, 0, sch[of[k]], p->sizes[k], &cost[k], &x->terms);
        x->terms.algo = x->algo, x->terms.proto = x->proto;
    }
    cs__planner_net_free(net);
    for (int i = 0; i < ns; i++)
        cs_sched_destroy(sch[i]);
    return st == CS_OK ? 0 : 1;
}

static int nccl_body(void *ctx, int fd, cs_err_t *err)
{
    (void)fd, (void)err;
    void *const *a = ctx;
    return cs__planner_nccl_simulate(a[0], a[1], a[2]);
}

int cs_planner_ring_orders_params(char *params, size_t cap, const char *orders)
{
    if (!orders || !*orders || strstr(params, "orders="))
        return 0;
    long local = 1;
    const char *c = strstr(params, "nchunks=");
    char v[256], l[32] = "", nk[32] = "";
    if (c) /* absent: the generator's default */
        snprintf(nk, sizeof(nk), "nchunks=%llu,", strtoull(c + 8, NULL, 10));
    if ((c = strstr(params, "local=")) != NULL)
        local = strtol(c + 6, NULL, 10);
    if (local > 1)
        snprintf(l, sizeof(l), "local=%ld,", local);
    int w = snprintf(v, sizeof(v), "%s%sorders=%s", nk, l, orders);
    if (w <= 0 || (size_t)w >= sizeof(v) || (size_t)w >= cap)
        return 0;
    memcpy(params, v, (size_t)w + 1);
    return 1;
}

/* NCCL's rings follow the links its search finds (search.cc): on one node
 * that is no switch domain (DGX-1's hybrid cube mesh, a PCIe box) a ring in
 * the ranks' order crosses slow paths NCCL's never takes.  Where the link
 * analysis found rings over disjoint links in all of the ranks, NCCL's
 * Ring is simulated over them (`orders`), its pipelining kept. */
static int one_node_rings(const cs_planner_t *p, int nnodes)
{
    return nnodes == 1 && p->nrings >= 2 && !p->ring_switch && p->ring_group == p->ranks &&
           p->ring_orders[0];
}

/* ---- NCCL's rings over the links of its nodes ----------------------------- */

/* Across nodes each of NCCL's rings runs through every node as a path over
 * the node's links, entering at one GPU and leaving at another, near its
 * NICs (search.cc: a ring graph is NET -> GPUs -> NET).  Here a path is one
 * of the node's rings over disjoint links (the link analysis of one node)
 * cut open between two neighbours: it enters each node at its first GPU
 * and leaves at its last, and the hop from one node's last to the next
 * node's first is a route across the network.  Of the cycles found, the
 * channels' paths and their cuts are chosen so that these hops share the
 * fewest links (the most of them on a link the least, then the sum of the
 * squares of the links' loads, then the fewest links): on a DGX-1 (4 NICs,
 * each shared by two GPUs) four rings that leave and enter through four
 * different NICs, each entering and leaving a node by its NIC's two GPUs. */

#define HOP_MAX_LINKS 32
#define CUT_EXHAUSTIVE 4000000.0

typedef struct hops {
    int L, nl;                    /* GPUs per node, distinct links */
    int *n;                       /* n[a * L + b]: links of the route node 0's a -> node 1's b */
    int *id;                      /* id[(a * L + b) * HOP_MAX_LINKS + i] */
} hops_t;

typedef struct cut_search {
    const hops_t *h;
    int ncyc, K, L, tree;
    const int *cyc;               /* ncyc x L members */
    int *load;                    /* per link */
    int pick[CS__RING_MAX], rot[CS__RING_MAX];
    int best_pick[CS__RING_MAX], best_rot[CS__RING_MAX];
    long long best[3];            /* max load, sum of squares, links; best[0] < 0: none */
} cut_search_t;

static const int *hop_of(const cut_search_t *S, int c, int r, int *n)
{
    const int *o = S->cyc + (size_t)c * (size_t)S->L;
    /* a ring leaves by its last and enters by its first; a tree's chains
     * talk across nodes through their heads, the first, both ways */
    int exit = S->tree ? o[r] : o[(r + S->L - 1) % S->L], entry = o[r];
    int k = exit * S->L + entry;
    *n = S->h->n[k];
    return S->h->id + (size_t)k * HOP_MAX_LINKS;
}

static void cut_score(const cut_search_t *S, long long v[3])
{
    v[0] = v[1] = v[2] = 0;
    for (int i = 0; i < S->h->nl; i++) {
        long long x = S->load[i];
        v[0] = x > v[0] ? x : v[0];
        v[1] += x * x;
        v[2] += x;
    }
}

static int score_less(const long long a[3], const long long b[3])
{
    return b[0] < 0 || a[0] < b[0] || (a[0] == b[0] && (a[1] < b[1] || (a[1] == b[1] &&
                                                                       a[2] < b[2])));
}

static void cut_take(cut_search_t *S, int c, int r, int sign)
{
    int n;
    const int *id = hop_of(S, c, r, &n);
    for (int i = 0; i < n; i++)
        S->load[id[i]] += sign;
}

/* every choice of K cycles (in order) and cuts */
static void cut_all(cut_search_t *S, int k, int from)
{
    if (k == S->K) {
        long long v[3];
        cut_score(S, v);
        if (score_less(v, S->best)) {
            memcpy(S->best, v, sizeof(v));
            memcpy(S->best_pick, S->pick, sizeof(S->pick));
            memcpy(S->best_rot, S->rot, sizeof(S->rot));
        }
        return;
    }
    for (int c = from; c <= S->ncyc - (S->K - k); c++)
        for (int r = 0; r < S->L; r++) {
            S->pick[k] = c, S->rot[k] = r;
            cut_take(S, c, r, 1);
            cut_all(S, k + 1, c + 1);
            cut_take(S, c, r, -1);
        }
}

/* one ring at a time, each the cycle and cut that add the least */
static void cut_greedy(cut_search_t *S)
{
    int used[CS__RING_MAX] = {0};
    for (int k = 0; k < S->K; k++) {
        long long bk[3] = {-1, 0, 0};
        int bc = -1, br = 0;
        for (int c = 0; c < S->ncyc; c++)
            for (int r = 0; r < S->L && !used[c]; r++) {
                long long v[3];
                cut_take(S, c, r, 1);
                cut_score(S, v);
                cut_take(S, c, r, -1);
                if (score_less(v, bk))
                    memcpy(bk, v, sizeof(v)), bc = c, br = r;
            }
        used[bc] = 1;
        S->best_pick[k] = bc, S->best_rot[k] = br;
        cut_take(S, bc, br, 1);
    }
    cut_score(S, S->best);
}

static int digit_of(char ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'z' ? ch - 'a' + 10 : -1;
}

/* The routes from node 0's GPUs to node 1's (the platform's hosts L..2L-1),
 * their links numbered. */
static int read_hops(const cs_platform_t *plat, int L, hops_t *h, cs_err_t *err)
{
    char **hosts = NULL;
    const char **names = NULL;
    int st = cs_sim_hosts(plat, NULL, 2 * L, &hosts, err), cap = 0;
    h->L = L, h->nl = 0;
    h->n = calloc((size_t)L * (size_t)L, sizeof(int));
    h->id = calloc((size_t)L * (size_t)L * HOP_MAX_LINKS, sizeof(int));
    if (st == CS_OK && (!h->n || !h->id))
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    for (int a = 0; a < L && st == CS_OK; a++)
        for (int b = 0; b < L && st == CS_OK; b++) {
            cs_sim_link_t l[HOP_MAX_LINKS];
            int n = 0;
            if ((st = cs_sim_route(hosts[a], hosts[L + b], l, HOP_MAX_LINKS, &n, err)) != CS_OK)
                break;
            if (n > HOP_MAX_LINKS) {
                st = cs_err_set(err, CS_ERR_UNSUPPORTED, "the route from %s to %s has %d "
                                "links, more than %d", hosts[a], hosts[L + b], n,
                                HOP_MAX_LINKS);
                break;
            }
            int k = a * L + b;
            h->n[k] = n;
            for (int i = 0; i < n; i++) {
                int j = 0;
                while (j < h->nl && strcmp(names[j], l[i].name) != 0)
                    j++;
                if (j == h->nl) {
                    if (h->nl == cap) {
                        const char **v = realloc(names, sizeof(*v) * (size_t)(cap ? 2 * cap : 64));
                        if (!v) {
                            st = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
                            break;
                        }
                        names = v, cap = cap ? 2 * cap : 64;
                    }
                    names[h->nl++] = l[i].name;
                }
                h->id[(size_t)k * HOP_MAX_LINKS + i] = j;
            }
        }
    free(names);
    if (hosts)
        cs_sim_hosts_free(hosts, 2 * L);
    return st;
}

/* Node paths for `channels` rings (tree: a tree's chains) across nodes of L
 * GPUs from the cycles of p->ring_orders, written back there as `orders`
 * of L digits each ("" when there is no cycle). */
static int cut_rings(const cs_platform_t *plat, cs_planner_t *p, int channels, int tree,
                     cs_err_t *err)
{
    int L = p->ranks, ncyc = 0, cyc[CS__RING_MAX * CS__RING_MAX];
    for (const char *o = p->ring_orders; *o && ncyc < CS__RING_MAX; ncyc++) {
        for (int i = 0; i < L; i++)
            cyc[ncyc * L + i] = digit_of(*o++);
        if (*o == '+')
            o++;
    }
    p->ring_orders[0] = '\0';
    int K = channels < ncyc ? channels : ncyc;
    if (K < 1)
        return CS_OK;
    hops_t h = {0};
    int st = read_hops(plat, L, &h, err);
    cut_search_t S = {&h, ncyc, K, L, tree, cyc, NULL, {0}, {0}, {0}, {0}, {-1, 0, 0}};
    if (st == CS_OK && !(S.load = calloc((size_t)h.nl + 1, sizeof(int))))
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    if (st == CS_OK) {
        double n = pow((double)L, (double)K);
        for (int i = 0; i < K; i++) /* x C(ncyc, K) */
            n *= (double)(ncyc - i) / (double)(i + 1);
        if (n <= CUT_EXHAUSTIVE)
            cut_all(&S, 0, 0);
        else
            cut_greedy(&S);
        char *o = p->ring_orders;
        for (int k = 0; k < K; k++) {
            if (k)
                *o++ = '+';
            for (int i = 0; i < L; i++) {
                int d = cyc[S.best_pick[k] * L + (S.best_rot[k] + i) % L];
                *o++ = (char)(d < 10 ? '0' + d : 'a' + d - 10);
            }
        }
        *o = '\0';
    }
    free(S.load);
    free(h.n);
    free(h.id);
    return st;
}

/* Whether rings of nodes of `local` ranks can be asked for (orders[]
 * emptied either way). */
static int rings_apply(int nranks, int local, int channels, char *orders, size_t cap)
{
    if (cap)
        orders[0] = '\0';
    return local >= 3 && local <= CS__RING_MAX && local <= nranks && nranks % local == 0 &&
           (nranks == local || channels >= 1);
}

int cs__planner_node_rings(const cs_platform_t *plat, int nranks, int local, int channels,
                           int tree, char *orders, size_t cap, cs_err_t *err)
{
    if (!rings_apply(nranks, local, channels, orders, cap))
        return CS_OK;
    cs_planner_t *p = cs__planner_alloc(local);
    if (!p)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    p->coll = CS_COLL_ALLREDUCE;
    p->model = CS_SIM_IDEAL;
    int st = cs__planner_topology(plat, p, err);
    /* one ring over disjoint links is every GPU's one link to a switch (an
     * HGX node as the presets draw it): the ranks' order serves */
    if (st == CS_OK && (p->ring_switch || p->ring_group != local || p->nrings < 2))
        p->ring_orders[0] = '\0';
    else if (st == CS_OK && nranks > local)
        st = cut_rings(plat, p, channels, tree, err);
    if (st == CS_OK && strlen(p->ring_orders) < cap)
        memcpy(orders, p->ring_orders, strlen(p->ring_orders) + 1);
    cs_planner_free(p);
    return st;
}

static int nccl_rings(cs_planner_t *p, const cs__planner_model_t *m, const cs_platform_t *plat,
                      cs_err_t *err)
{
    if (m->sys.nvls) /* a reducing switch: any order is NCCL's */
        return CS_OK;
    /* across nodes: the rings (the trees' chains) of one node, cut
     * (cs_planner_nccl_orders) */
    char across[2][CS_PLANNER_RING_ORDERS] = {"", ""};
    int done[2] = {0, 0};
    for (int k = 0; k < p->nsizes; k++) {
        cs_planner_nccl_t *x = &p->nccl_pick[k];
        int tree = strcmp(x->sched, "dbtree") == 0;
        /* a mesh's rings are the model's own (cs_nccl_as_sched); Ring's
         * broadcast a chain along each */
        int chain = strcmp(x->sched, "chain") == 0;
        if ((strcmp(x->sched, "ring") != 0 || m->sys.mesh) && !(tree && m->sys.nnodes > 1) &&
            !chain)
            continue;
        if (m->sys.nnodes == 1) {
            if (one_node_rings(p, 1))
                cs_planner_ring_orders_params(x->params, sizeof(x->params), p->ring_orders);
            continue;
        }
        const char *l = strstr(x->params, "local="), *c = strstr(x->params, "channels=");
        if (!l || !c)
            continue;
        if (!done[tree]) {
            cs_err_t e;
            cs_err_clear(&e);
            done[tree] = 1;
            int st = cs_planner_nccl_orders(plat, p->ranks, (int)strtol(l + 6, NULL, 10),
                                            (int)strtol(c + 9, NULL, 10), tree, across[tree],
                                            sizeof(across[tree]), &e);
            if (st == CS_ERR_INTERRUPTED)
                return cs_err_set(err, st, "%s", e.msg);
            if (st != CS_OK) { /* said in the header's note */
                across[tree][0] = '\0';
                size_t n = strlen(p->nccl_note);
                snprintf(p->nccl_note + n, sizeof(p->nccl_note) - n,
                         "; %s in the ranks' order: %.80s", tree ? "Tree's chains" : "rings",
                         e.msg);
            }
        }
        cs_planner_ring_orders_params(x->params, sizeof(x->params), across[tree]);
    }
    return CS_OK;
}

/* ---- NCCL's rings for sim and validate ------------------------------------ */

typedef struct orders_arg {
    const cs_platform_t *plat;
    int nranks, local, channels, tree;
    char orders[CS_PLANNER_RING_ORDERS];
} orders_arg_t;

static int orders_body(void *ctx, void *out, cs_err_t *err)
{
    orders_arg_t *a = ctx;
    cs_sim_opts_t so;
    cs_sim_opts_init(&so);
    int st = cs_sim_run(a->plat, &so, NULL, 0, err); /* loads the platform: routes answer */
    if (st == CS_OK)
        st = cs__planner_node_rings(a->plat, a->nranks, a->local, a->channels, a->tree, out,
                                    sizeof(a->orders), err);
    return st;
}

int cs_planner_nccl_orders(const cs_platform_t *plat, int nranks, int local, int channels,
                           int tree, char *orders, size_t cap, cs_err_t *err)
{
    if (!rings_apply(nranks, local, channels, orders, cap))
        return CS_OK;
    /* across nodes the groups of local ranks must be the platform's nodes
     * (its innermost dimension), whose first two the analysis reads */
    if (nranks > local && (plat->ndims < 1 || plat->dims[0] != local))
        return CS_OK;
    orders_arg_t a = {plat, nranks, local, channels, tree != 0, ""};
    int st = cs_child_call("the analysis of the platform's links", orders_body, &a, a.orders,
                           sizeof(a.orders), err);
    a.orders[sizeof(a.orders) - 1] = '\0';
    if (st == CS_OK && strlen(a.orders) < cap)
        memcpy(orders, a.orders, strlen(a.orders) + 1);
    return st;
}

int cs__planner_nccl_run(const cs_platform_t *plat, const cs__planner_model_t *m, cs_planner_t *p,
                         double seconds, cs_err_t *err)
{
    int rs = nccl_rings(p, m, plat, err);
    if (rs != CS_OK)
        return rs;
    void *a[3] = {(void *)(uintptr_t)plat, (void *)(uintptr_t)m, p};
    cs_child_t c;
    cs_err_t ce;
    cs_err_clear(&ce);
    int st = cs_child_run(&c, "plan: the simulation of NCCL's choice",
                          seconds > 1e-3 ? seconds : 1e-3, nccl_body, a, &ce);
    int timed_out = c.timed_out;
    cs_child_free(&c);
    p->nccl_cut = timed_out;
    if (st == CS_ERR_INTERRUPTED)
        return cs_err_set(err, st, "%s", ce.msg);
    /* 1: the child said why in each size's err; otherwise how it ended */
    for (int k = 0; k < p->nsizes && st != CS_OK && st != 1; k++)
        snprintf(p->nccl_pick[k].err, sizeof(p->nccl_pick[k].err), "%.150s",
                 timed_out ? "not simulated: stopped when the budget ran out" : ce.msg);
    return CS_OK;
}
