/*
 * plan_cand.c - the planner's candidates (cs_planner.h, step 2): every
 * registry algorithm of the collective with its defaults, and variations of
 * the parameters it declares (algorithms/cs_algo.h `params`), so that a
 * parameter a generator gains (channels) is tried without a change here:
 *   nchunks   pipelining depth: a quarter, half, twice and four times the default
 *   channels  2 and 4 rings (or trees) at once; with `local`, the channels
 *             rotated inside the groups of each tier (a node's ranks)
 *   radix     4 and 8
 *   inflight  4 exchanges at once, and every one (0)
 *   dims      hier and torus2d: each factorization that follows the tiers
 *   algos     hier: per tier ring or rhd (and the generator's auto)
 *   orders    the rings over disjoint links the link analysis found
 *             (plan_links.c), all of them as channels, with pipelining,
 *             and the first alone; in the platform's order only (the
 *             orders name its ranks)
 * each (but orders) in every rank order of the topology analysis.  And the plan's
 * choices as a tuning table (cs_planner_tuning).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_algo.h"
#include "cs_planner_int.h"
#include "cs_platform.h"

static int declares(const cs_algo_t *a, const char *key, const char **def)
{
    for (const cs_param_desc_t *d = a->params; d && d->key; d++)
        if (strcmp(d->key, key) == 0) {
            if (def)
                *def = d->def;
            return 1;
        }
    return 0;
}

static void add_maps(cs_planner_t *p, const char *algo, const char *params, int is_default,
                     int nmaps)
{
    for (int m = 0; m < nmaps; m++) {
        if (p->ncands >= CS_PLANNER_MAX_CANDS)
            return;
        for (int i = 0; i < p->ncands; i++)
            if (strcmp(p->cands[i].algo, algo) == 0 && strcmp(p->cands[i].params, params) == 0 &&
                p->cands[i].map == m)
                goto next;
        cs_planner_cand_t *c = &p->cands[p->ncands++];
        memset(c, 0, sizeof(*c));
        snprintf(c->algo, sizeof(c->algo), "%s", algo);
        snprintf(c->params, sizeof(c->params), "%s", params);
        c->map = m;
        c->is_default = is_default && m == 0;
        for (int k = 0; k < CS_PLANNER_MAX_SIZES; k++)
            c->model_s[k] = c->sim_s[k] = -1;
    next:;
    }
}

static void add(cs_planner_t *p, const char *algo, const char *params, int is_default)
{
    add_maps(p, algo, params, is_default, p->nmaps);
}

/* The rings of the link analysis as the `orders` parameter: all of them
 * (with pipelining too) and, when there are several, the first alone. */
static void add_orders(cs_planner_t *p, const cs_algo_t *a)
{
    if (p->nrings < 1 || p->ring_switch || !declares(a, "orders", NULL))
        return; /* a switch domain's ring is the ranks' order: the registry's ring */
    /* one ring in the ranks' order in every group: the registry's ring */
    int identity = p->nrings == 1;
    for (int j = 0; identity && j < p->ring_group; j++)
        identity = p->ring_orders[j] == (j < 10 ? '0' + j : 'a' + j - 10);
    if (identity) /* the registry's ring itself */
        return;
    char v[160], loc[24] = "";
    if (p->ring_group < p->ranks)
        snprintf(loc, sizeof(loc), ",local=%d", p->ring_group);
    snprintf(v, sizeof(v), "orders=%s%s", p->ring_orders, loc);
    add_maps(p, a->name, v, 0, 1);
    if (declares(a, "nchunks", NULL)) {
        snprintf(v, sizeof(v), "orders=%s%s,nchunks=4", p->ring_orders, loc);
        add_maps(p, a->name, v, 0, 1);
    }
    if (p->nrings > 1) {
        snprintf(v, sizeof(v), "orders=%.*s%s", p->ring_group, p->ring_orders, loc);
        add_maps(p, a->name, v, 0, 1);
    }
}

/* Channels over a group's rails: where a group of the innermost tier
 * reaches the others over k links of one flow's rate (its egress over the
 * rate of a flow between groups: a node's eight 50 GB/s NICs), k channels
 * (and twice, four times as many, whose messages overlap each other's
 * latency on a rail) with local set to the group, so that each channel
 * enters and leaves a group by a GPU of its own and so by its own rail:
 * rotated in the ranks' order or, where the link analysis found a ring
 * other than that order in the group, that ring rotated (`orders`). */
static void add_rails(const cs_platform_t *plat, cs_planner_t *p, const cs_algo_t *a,
                      const char *base)
{
    if (p->ntiers < 2)
        return;
    const cs_planner_tier_t *t = &p->tiers[0], *u = &p->tiers[1];
    int g = t->group, P = p->ranks;
    /* a switch domain's groups need no orders: any size the ranks' order */
    int sw = p->ring_switch && p->ring_group == g;
    if (g < 2 || (g > 36 && !sw) || P % g || P / g < 2 || !(t->group_bw > 0) ||
        !(u->rank_bw > 0))
        return;
    int k = (int)floor(t->group_bw / u->rank_bw + 0.5);
    if (k < 2)
        return;
    /* nodes that are no switch domain: a ring per rail, each a path over
     * the node's links between two GPUs near the rail, as NCCL's search
     * makes them (cs__planner_node_rings) */
    char cut[CS_PLANNER_RING_ORDERS] = "";
    cs_err_t e;
    cs_err_clear(&e);
    if (!sw && g <= CS__RING_MAX && declares(a, "orders", NULL) &&
        cs__planner_node_rings(plat, P, g, k, strcmp(a->name, "dbtree") == 0, cut, sizeof(cut),
                               &e) == CS_OK &&
        cut[0]) {
        char w[CS_PLANNER_RING_ORDERS + 40];
        snprintf(w, sizeof(w), "orders=%s,local=%d", cut, g);
        add_maps(p, a->name, w, 0, 1);
        if (declares(a, "nchunks", NULL)) {
            snprintf(w, sizeof(w), "orders=%s,local=%d,nchunks=4", cut, g);
            add_maps(p, a->name, w, 0, 1);
        }
    }
    int ring = !sw && p->nrings > 0 && p->ring_group == g;
    for (int j = 0; ring && j < g; j++)
        ring = p->ring_orders[j] != (j < 10 ? '0' + j : 'a' + j - 10);
    char v[160];
    /* more rails than a ring has channels (NVL72's 72 NICs a rack): half
     * and a quarter of them, each channel on rails of its own */
    int div = 1;
    while (k / div > 64)
        div *= 2;
    for (int m = 1; m <= 4; m *= 2) {
        int K = div > 1 ? k / (div * m) : k * m;
        if (K > 64 || K < 2)
            break;
        snprintf(v, sizeof(v), "%s%schannels=%d,local=%d", base, base[0] ? "," : "", K, g);
        add(p, a->name, v, 0);
        if (!ring || K * (g + 1) + 16 > (int)sizeof(v) || !declares(a, "orders", NULL))
            continue;
        int n = snprintf(v, sizeof(v), "orders=");
        for (int c = 0; c < K; c++) {
            if (c)
                v[n++] = '+';
            for (int i = 0; i < g; i++)
                v[n++] = p->ring_orders[(i + c * g / K) % g];
        }
        snprintf(v + n, sizeof(v) - (size_t)n, ",local=%d", g);
        add_maps(p, a->name, v, 0, 1);
    }
}

static int ndims_of(const char *f)
{
    int n = 1;
    for (; *f; f++)
        n += *f == 'x';
    return n;
}

/* The platform's natural dims ("6x256") when they multiply to P. */
static void plat_dims(const cs_platform_t *plat, int P, char *buf, size_t len)
{
    buf[0] = 0;
    long prod = 1;
    for (int i = 0; i < plat->ndims; i++)
        prod *= plat->dims[i];
    if (plat->ndims < 1 || prod != P)
        return;
    for (int i = 0; i < plat->ndims; i++) {
        size_t l = strlen(buf);
        snprintf(buf + l, len - l, "%s%d", i ? "x" : "", plat->dims[i]);
    }
}

int cs__planner_candidates(const cs_platform_t *plat, cs_planner_t *p, cs_err_t *err)
{
    int P = p->ranks;
    char pd[64];
    plat_dims(plat, P, pd, sizeof(pd));
    for (int i = 0; i < cs_algo_count(); i++) {
        const cs_algo_t *a = cs_algo_at(i);
        if (a->coll != p->coll)
            continue;
        char base[96] = "";
        const char *def = NULL;
        /* defaults, as `collstep sim` runs them (hier gets the platform's tiers) */
        if (declares(a, "dims", NULL) && strcmp(a->name, "hier") == 0 && pd[0])
            snprintf(base, sizeof(base), "dims=%s", pd);
        add(p, a->name, base, 1);
        add_orders(p, a);
        char v[160];
        if (declares(a, "nchunks", &def)) {
            long d = def ? strtol(def, NULL, 10) : 1;
            if (d < 1)
                d = 1;
            long mul[4] = {d / 4, d / 2, d * 2, d * 4};
            for (int k = 0; k < 4; k++)
                if (mul[k] >= 1 && mul[k] <= 64 && mul[k] != d) {
                    snprintf(v, sizeof(v), "%s%snchunks=%ld", base, base[0] ? "," : "", mul[k]);
                    add(p, a->name, v, 0);
                }
        }
        if (declares(a, "channels", &def))
            for (int ch = 2; ch <= 4; ch *= 2) {
                snprintf(v, sizeof(v), "%s%schannels=%d", base, base[0] ? "," : "", ch);
                add(p, a->name, v, 0);
                /* channels rotated inside each group of a tier (a node's
                 * ranks: each channel leaves by another NIC) */
                for (int t = 0; declares(a, "local", NULL) && t < p->ntiers; t++) {
                    int g = p->tiers[t].group;
                    if (g < 2 || g >= P || g > 64)
                        continue;
                    snprintf(v, sizeof(v), "%s%schannels=%d,local=%d", base, base[0] ? "," : "",
                             ch, g);
                    add(p, a->name, v, 0);
                }
                if (declares(a, "nchunks", NULL)) {
                    snprintf(v, sizeof(v), "%s%schannels=%d,nchunks=4", base, base[0] ? "," : "",
                             ch);
                    add(p, a->name, v, 0);
                }
            }
        if (declares(a, "channels", NULL) && declares(a, "local", NULL))
            add_rails(plat, p, a, base);
        if (declares(a, "inflight", NULL)) /* 4 exchanges at once, and all of them */
            for (int w = 4; w >= 0; w -= 4) {
                if ((w == 4 && P - 1 <= 4) || P <= 2) /* the same as all (or the default) */
                    continue;
                snprintf(v, sizeof(v), "%s%sinflight=%d", base, base[0] ? "," : "", w);
                add(p, a->name, v, 0);
            }
        if (declares(a, "radix", NULL))
            for (int r = 4; r <= 8; r *= 2) {
                snprintf(v, sizeof(v), "radix=%d", r);
                add(p, a->name, v, 0);
            }
        if (!declares(a, "dims", NULL))
            continue;
        int has_algos = declares(a, "algos", NULL);
        for (int f = 0; f < p->nfacts; f++) {
            int nd = ndims_of(p->facts[f]);
            if (!has_algos) { /* torus2d: grids of two dims */
                if (nd == 2) {
                    snprintf(v, sizeof(v), "dims=%s", p->facts[f]);
                    add(p, a->name, v, 0);
                }
                continue;
            }
            /* hier: auto, then ring or rhd per tier, each with pipelined ring tiers */
            for (int mask = -1; mask < (1 << nd); mask++) {
                char al[64] = "";
                for (int t = 0; t < nd && mask >= 0; t++) {
                    size_t l = strlen(al);
                    snprintf(al + l, sizeof(al) - l, "%s%s", t ? "+" : "",
                             mask >> t & 1 ? "rhd" : "ring");
                }
                /* a ring over a large tier: latency linear in its size, tried
                 * unpipelined only */
                int big_ring = 0;
                for (int t = 0, f0 = 0; t < nd; t++) {
                    int dim = atoi(p->facts[f] + f0);
                    while (p->facts[f][f0] && p->facts[f][f0] != 'x')
                        f0++;
                    if (p->facts[f][f0] == 'x')
                        f0++;
                    if (mask >= 0 && !(mask >> t & 1) && dim > 16)
                        big_ring = 1;
                }
                for (int nc = 1; nc <= 4; nc *= 4) {
                    char extra[32] = "";
                    if (nc > 1) {
                        if (mask == (1 << nd) - 1 || big_ring)
                            continue; /* no ring tier to pipeline, or too long a ring */
                        snprintf(extra, sizeof(extra), ",nchunks=%d", nc);
                    }
                    snprintf(v, sizeof(v), "dims=%s%s%s%s", p->facts[f], mask >= 0 ? ",algos=" : "",
                             al, extra);
                    add(p, a->name, v, 0);
                }
            }
        }
    }
    if (p->ncands == 0)
        return cs_err_set(err, CS_ERR_NOTFOUND, "plan: the registry has no algorithm for %s "
                          "(see 'collstep algos')", cs_coll_name(p->coll));
    return CS_OK;
}

int cs__planner_build(const cs_planner_t *p, const cs_planner_cand_t *c, cs_sched_t **out,
                      cs_err_t *err)
{
    const cs_algo_t *a = cs_algo_find(p->coll, c->algo);
    if (!a)
        return cs_err_set(err, CS_ERR_NOTFOUND, "no algorithm %s for %s", c->algo,
                          cs_coll_name(p->coll));
    cs_params_t prm;
    cs_params_init(&prm);
    int st;
    if (c->params[0] && (st = cs_params_parse(&prm, c->params, err)) != CS_OK)
        return st;
    cs_coll_desc_t d = {p->coll, p->ranks, 0, 0};
    return cs_algo_build(a, &d, &prm, out, err);
}

int cs_planner_tuning(const cs_planner_t *p, const char *platform, cs_tuning_t **out,
                      cs_err_t *err)
{
    cs_tuning_t *t = cs_tuning_new(platform, p->ranks, err);
    char **map = malloc(sizeof(char *) * (size_t)p->ranks);
    int st = t && map ? CS_OK : cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    if (st == CS_OK) { /* the model its predictions are of */
        char mn[48];
        if (p->model == CS_SIM_NCCL && p->nccl_version[0])
            snprintf(mn, sizeof(mn), "nccl-%s", p->nccl_version);
        else
            snprintf(mn, sizeof(mn), "%s", cs_sim_model_name(p->model));
        st = cs_tuning_set_model(t, mn, err);
    }
    uint64_t lo = 0;
    for (int k = 0; k < p->nsizes && st == CS_OK; k++) {
        int c = cs_planner_choice(p, k);
        if (c < 0)
            continue;
        const cs_planner_cand_t *x = &p->cands[c];
        /* one entry for the sizes in a row with the same choice */
        int e = k;
        while (e + 1 < p->nsizes && cs_planner_choice(p, e + 1) >= 0 &&
               strcmp(p->cands[cs_planner_choice(p, e + 1)].algo, x->algo) == 0 &&
               strcmp(p->cands[cs_planner_choice(p, e + 1)].params, x->params) == 0 &&
               p->cands[cs_planner_choice(p, e + 1)].map == x->map)
            e++;
        uint64_t hi = e + 1 < p->nsizes
                          ? (uint64_t)floor(sqrt((double)p->sizes[e] * (double)p->sizes[e + 1]))
                          : UINT64_MAX;
        if (hi < p->sizes[e])
            hi = p->sizes[e];
        for (int r = 0; r < p->ranks && x->map; r++)
            map[r] = cs_planner_host(p, x->map, r);
        st = cs_tuning_add(t, p->coll, lo, hi, x->algo, x->params, x->map ? map : NULL,
                           x->map ? p->ranks : 0, cs_planner_time(p, c, k) * 1e6, err);
        lo = hi + 1;
        k = e;
    }
    free(map);
    if (st != CS_OK) {
        cs_tuning_free(t);
        return st;
    }
    *out = t;
    return CS_OK;
}
