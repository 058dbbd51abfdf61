/*
 * plan_links.c - the links the routes use (cs_planner_int.h): each rank's
 * links out and in, rings over disjoint links, and the bound they give.
 *
 * A route is read as its list of links (cs_sim_route; each direction of a
 * split-duplex link is a link of its own, a shared link one for both
 * directions), so that links two routes share, routes of several hops and
 * pairs without a direct link all count:
 *   - a rank's links out are the distinct first links of its routes to the
 *     other ranks, its links in the distinct last links of theirs to it;
 *     their bandwidths summed are what the rank can send and receive at
 *     once (a DGX-1's GPU: its four NVLinks, not its PCIe link, which no
 *     GPU pair's route takes);
 *   - rings: in a group of at most CS__RING_MAX ranks (the coarsest tier
 *     whose groups are that small), directed Hamiltonian cycles whose hops
 *     use disjoint links (plan_rings.c), over the routes of at least a
 *     bandwidth, the bandwidth that gives the most rings x bandwidth;
 *     without such a tier, in a larger group that is a switch domain
 *     (every route a rank's prefix then the other's suffix: NVL72's 72
 *     GPUs), the ranks' order, since any order uses each rank's links once;
 *   - the bound: per rank, the bytes the collective must move out of (into)
 *     it over its links' bandwidth out (in); per group of a tier, the bytes
 *     that must leave the group over its egress (max-flow, plan_topo.c);
 *     with a switch that reduces for every rank, an allreduce moves (P+1)/P
 *     x SIZE per rank each way instead of 2(P-1)/P.
 * Routes read: every pair up to LINKS_ALL ranks; above, the platform's
 * structure: from the ranks of a few groups of the innermost tier (the
 * first, the second, the middle, the last) to their own group and to the
 * groups one tier's group size away on either side (one per tier), and
 * back into the first group (its links in).  Exact where every group is
 * alike (presets, clusters); the note says which routes were read.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_grow.h"
#include "cs_planner_int.h"
#include "cs_platform.h"
#include "cs_sim.h"

#define LINKS_ALL 256
#define ROUTE_MAX 64
#define MAX_THRESHOLDS 4

/* ---- link table: names interned to ids ---------------------------------- */

typedef struct ltab {
    char **name;
    double *bw;
    int n;
    size_t cap, cap_bw;
    int *slot; /* open addressing, -1 empty */
    size_t nslot;
} ltab_t;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int ltab_grow_slots(ltab_t *t)
{
    size_t ns = t->nslot ? 2 * t->nslot : 1024;
    int *sl = malloc(sizeof(int) * ns);
    if (!sl)
        return -1;
    for (size_t i = 0; i < ns; i++)
        sl[i] = -1;
    for (int id = 0; id < t->n; id++) {
        size_t h = hash_str(t->name[id]) & (ns - 1);
        while (sl[h] >= 0)
            h = (h + 1) & (ns - 1);
        sl[h] = id;
    }
    free(t->slot);
    t->slot = sl;
    t->nslot = ns;
    return 0;
}

static int ltab_id(ltab_t *t, const char *name, double bw)
{
    if ((size_t)(t->n + 1) * 2 > t->nslot && ltab_grow_slots(t))
        return -1;
    size_t h = hash_str(name) & (t->nslot - 1);
    for (; t->slot[h] >= 0; h = (h + 1) & (t->nslot - 1))
        if (strcmp(t->name[t->slot[h]], name) == 0)
            return t->slot[h];
    if (cs_grow(&t->name, &t->cap, (size_t)t->n + 1, sizeof(char *), 256) ||
        cs_grow(&t->bw, &t->cap_bw, (size_t)t->n + 1, sizeof(double), 256) ||
        !(t->name[t->n] = strdup(name)))
        return -1;
    t->bw[t->n] = bw;
    t->slot[h] = t->n;
    return t->n++;
}

static void ltab_free(ltab_t *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->name[i]);
    free(t->name);
    free(t->bw);
    free(t->slot);
}

/* The route between ranks a and b (rank order 0): link ids, latency,
 * bandwidth (its slowest link; INFINITY without links). */
typedef struct route {
    int n, id[ROUTE_MAX];
    double lat, bw;
} route_t;

static int read_route(ltab_t *t, const cs_planner_t *p, int a, int b, route_t *r, cs_err_t *err)
{
    cs_sim_link_t l[ROUTE_MAX];
    int n = 0, st = cs_sim_route(cs_planner_host(p, 0, a), cs_planner_host(p, 0, b), l, ROUTE_MAX,
                                 &n, err);
    if (st != CS_OK)
        return st;
    if (n > ROUTE_MAX)
        return cs_err_set(err, CS_ERR_UNSUPPORTED, "plan: the route from %s to %s has %d links, "
                          "more than %d", cs_planner_host(p, 0, a), cs_planner_host(p, 0, b), n,
                          ROUTE_MAX);
    r->n = n, r->lat = 0, r->bw = INFINITY;
    for (int i = 0; i < n; i++) {
        if ((r->id[i] = ltab_id(t, l[i].name, l[i].bandwidth)) < 0)
            return cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
        r->lat += l[i].latency;
        if (l[i].bandwidth < r->bw)
            r->bw = l[i].bandwidth;
    }
    return CS_OK;
}

/* ---- each rank's links out and in --------------------------------------- */

typedef struct rl {
    int rank, link;
} rl_t;

static int cmp_rl(const void *x, const void *y)
{
    const rl_t *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return (a->link > b->link) - (a->link < b->link);
}

/* The least over the ranks listed of the sum of their distinct links'
 * bandwidths (v sorted and made unique here). */
static double least_sum(const ltab_t *t, rl_t *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_rl);
    double least = INFINITY, sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && v[i].rank == v[i - 1].rank && v[i].link == v[i - 1].link)
            continue;
        if (i > 0 && v[i].rank != v[i - 1].rank) {
            if (sum < least)
                least = sum;
            sum = 0;
        }
        sum += t->bw[v[i].link];
    }
    if (n > 0 && sum < least)
        least = sum;
    return least;
}

/* ---- bytes a collective moves --------------------------------------------- */

/* Bytes (in units of SIZE) that each of n parties (ranks, or groups taken
 * as one) must send out and take in; the nccl-tests busbw factor. */
static double coll_factor(cs_coll_t c, int n)
{
    if (n < 2)
        return 0;
    switch (c) {
    case CS_COLL_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case CS_COLL_REDUCE_SCATTER:
    case CS_COLL_ALLGATHER:
    case CS_COLL_ALLTOALL:
        return (double)(n - 1) / n;
    default: /* broadcast, reduce: every non-root takes in (sends out) SIZE */
        return 1.0;
    }
}

/* ---- the analysis ---------------------------------------------------------- */

typedef struct lctx {
    ltab_t t;
    rl_t *out, *in;
    size_t nout, nin, cout, cin;
    long long routes;
} lctx_t;

static int note(cs_planner_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int note(cs_planner_t *p, const char *fmt, ...)
{
    if (p->nlink_notes >= CS_PLANNER_MAX_NOTES)
        return 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->link_notes[p->nlink_notes++], sizeof(p->link_notes[0]), fmt, ap);
    va_end(ap);
    return 0;
}

/* Read the route a -> b and record a's first link out, b's last link in. */
static int pair(lctx_t *c, const cs_planner_t *p, int a, int b, cs_err_t *err)
{
    route_t r;
    int st = read_route(&c->t, p, a, b, &r, err);
    if (st != CS_OK)
        return st;
    c->routes++;
    if (r.n == 0)
        return CS_OK;
    if (cs_grow(&c->out, &c->cout, c->nout + 1, sizeof(rl_t), 1024) ||
        cs_grow(&c->in, &c->cin, c->nin + 1, sizeof(rl_t), 1024))
        return cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
    c->out[c->nout++] = (rl_t){a, r.id[0]};
    c->in[c->nin++] = (rl_t){b, r.id[r.n - 1]};
    return CS_OK;
}

/* The routes read for the links out and in: every pair, or the sampled
 * groups' (see the top of the file).  *g0: the group size sampled (0 for
 * every pair), *nsampled the groups. */
static int read_pairs(lctx_t *c, const cs_planner_t *p, int *g0, int *nsampled, cs_err_t *err)
{
    int P = p->ranks, st = CS_OK;
    *g0 = 0, *nsampled = 0;
    if (P <= LINKS_ALL) {
        for (int a = 0; a < P && st == CS_OK; a++)
            for (int b = 0; b < P && st == CS_OK; b++)
                if (a != b)
                    st = pair(c, p, a, b, err);
        return st;
    }
    int g = p->ntiers > 1 && p->tiers[0].group > 0 && P % p->tiers[0].group == 0
                ? p->tiers[0].group : 1;
    if (g > LINKS_ALL)
        g = 1;
    int nb = P / g, blocks[4] = {0, 1, nb / 2, nb - 1}, nblk = 0;
    int offs[CS_PLANNER_MAX_TIERS + 2], noff = 0;
    offs[noff++] = 1;
    for (int t = 1; t + 1 < p->ntiers; t++)
        if (p->tiers[t].group > 0 && p->tiers[t].group % g == 0 && p->tiers[t].group < P)
            offs[noff++] = p->tiers[t].group / g;
    offs[noff++] = nb / 2;
    for (int i = 0; i < 4; i++) {
        int dup = 0;
        for (int j = 0; j < i; j++)
            dup |= blocks[j] == blocks[i];
        if (dup || blocks[i] < 0 || blocks[i] >= nb)
            continue;
        int b = blocks[i];
        nblk++;
        for (int k = 0; k < g && st == CS_OK; k++) {
            int a = b * g + k;
            for (int o = -1; o < 2 * noff && st == CS_OK; o++) {
                /* o = -1: its own group; then each offset forwards and back */
                int ob = o < 0 ? b : ((b + (o % 2 ? -1 : 1) * offs[o / 2]) % nb + nb) % nb;
                if (o >= 0 && ob == b)
                    continue;
                for (int m = 0; m < g && st == CS_OK; m++) {
                    int d = ob * g + m;
                    if (d == a)
                        continue;
                    /* into the first group only: each other rank a route
                     * starts from costs SimGrid a search of the platform */
                    if ((st = pair(c, p, a, d, err)) == CS_OK && b == 0)
                        st = pair(c, p, d, a, err);
                }
            }
        }
    }
    /* only the sampled groups' ranks have all their links counted */
    size_t n = 0;
    for (size_t i = 0; i < c->nout; i++) {
        int blk = c->out[i].rank / g;
        for (int j = 0; j < 4; j++)
            if (blk == blocks[j]) {
                c->out[n++] = c->out[i];
                break;
            }
    }
    c->nout = n;
    n = 0;
    for (size_t i = 0; i < c->nin; i++)
        if (c->in[i].rank / g == 0)
            c->in[n++] = c->in[i];
    c->nin = n;
    *g0 = g, *nsampled = nblk;
    return st;
}

/* Rings in a group of `n` ranks (routes rt, n x n): the arcs over
 * routes of at least `thr` and at most `maxlinks` links, each link carrying floor(bandwidth / thr)
 * hops, the search; returns rings found (-1 memory), *bw each ring's rate. */
static int group_rings(lctx_t *c, int n, double thr, int maxlinks, const route_t *rt,
                       int (*rings)[CS__RING_MAX], int *upper, double *bw)
{
    cs__ring_arc_t *arcs = calloc((size_t)n * (size_t)n, sizeof(*arcs));
    if (!arcs)
        return -1;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            const route_t *r = &rt[a * n + b];
            cs__ring_arc_t *x = &arcs[a * n + b];
            if (a == b || r->n == 0 || r->n > CS__RING_ARC_LINKS || r->n > maxlinks ||
                r->bw < thr)
                continue;
            x->ok = 1, x->nlinks = r->n, x->bw = r->bw, x->lat = r->lat;
            memcpy(x->link, r->id, sizeof(int) * (size_t)r->n);
        }
    /* a link of k times the threshold carries k hops (k < 256) */
    unsigned char *cap = malloc((size_t)c->t.n + 1);
    if (!cap) {
        free(arcs);
        return -1;
    }
    int multi = 0;
    for (int i = 0; i < c->t.n; i++) {
        double k = floor(c->t.bw[i] / thr * (1 + 1e-9));
        cap[i] = (unsigned char)(k < 1 ? 1 : k > 255 ? 255 : k);
        multi |= cap[i] > 1;
    }
    cs__ring_arcs_t g = {n, arcs};
    int k = cs__planner_rings(&g, cap, c->t.n, rings, CS__RING_MAX, upper);
    *bw = INFINITY;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < n; j++) {
            const cs__ring_arc_t *x = &arcs[rings[i][j] * n + rings[i][(j + 1) % n]];
            if (x->bw < *bw)
                *bw = x->bw;
        }
    if (multi && k > 0) /* links shared by several rings: each ring's share */
        *bw = thr;
    free(cap);
    free(arcs);
    return k;
}

static char digit36(int d) { return (char)(d < 10 ? '0' + d : 'a' + d - 10); }

/* Whether the first group of g ranks is a switch domain: every route
 * a -> b is a's prefix (the links all of a's routes start with) then b's
 * suffix (those all routes into b end with), a rank's uplink and the
 * other's downlink through a switch.  Then every ring in the group uses
 * each rank's links once, whatever its order: the ring is structural.
 * 1 (with *bw the slowest route), 0, or -1 with err set. */
static int switch_domain(lctx_t *c, const cs_planner_t *p, int g, double *bw, cs_err_t *err)
{
    route_t *rt = malloc(sizeof(route_t) * (size_t)g * (size_t)g);
    int *pre = malloc(sizeof(int) * 2 * (size_t)g), *suf = pre ? pre + g : NULL, yes = 1;
    if (!rt || !pre) {
        free(rt), free(pre);
        cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
        return -1;
    }
    *bw = INFINITY;
    for (int a = 0; a < g && yes; a++)
        for (int b = 0; b < g && yes; b++) {
            route_t *r = &rt[a * g + b];
            r->n = 0;
            if (a == b)
                continue;
            if (read_route(&c->t, p, a, b, r, err) != CS_OK) {
                free(rt), free(pre);
                return -1;
            }
            c->routes++;
            yes = r->n > 0;
            *bw = fmin(*bw, r->bw);
        }
    /* a's prefix: the longest start common to its routes; b's suffix: the
     * longest end common to the routes into it */
    for (int a = 0; a < g && yes; a++) {
        const route_t *f = &rt[a * g + (a ? 0 : 1)];
        int n = f->n;
        for (int b = 0; b < g; b++) {
            const route_t *r = &rt[a * g + b];
            int i = 0;
            while (b != a && i < n && i < r->n && r->id[i] == f->id[i])
                i++;
            if (b != a)
                n = i;
        }
        pre[a] = n;
    }
    for (int b = 0; b < g && yes; b++) {
        const route_t *f = &rt[(b ? 0 : 1) * g + b];
        int n = f->n;
        for (int a = 0; a < g; a++) {
            const route_t *r = &rt[a * g + b];
            int i = 0;
            while (a != b && i < n && i < r->n && r->id[r->n - 1 - i] == f->id[f->n - 1 - i])
                i++;
            if (a != b)
                n = i;
        }
        suf[b] = n;
    }
    for (int a = 0; a < g && yes; a++)
        for (int b = 0; b < g && yes; b++)
            yes = a == b || (pre[a] >= 1 && suf[b] >= 1 && pre[a] + suf[b] >= rt[a * g + b].n);
    free(rt);
    free(pre);
    return yes;
}

/* A switch domain larger than the ring search takes (the innermost tier of
 * more than CS__RING_MAX and at most LINKS_ALL ranks per group): the ring
 * in the ranks' order, no search; orders holds it up to 36 ranks (base
 * 36), above it is empty (the ranks' order). */
static int switch_ring(lctx_t *c, cs_planner_t *p, cs_err_t *err)
{
    int P = p->ranks, g = 0;
    for (int t = 0; t < p->ntiers && !g; t++)
        if (p->tiers[t].group > CS__RING_MAX && p->tiers[t].group <= LINKS_ALL &&
            P % p->tiers[t].group == 0)
            g = p->tiers[t].group;
    if (!g)
        return CS_OK;
    double bw = 0;
    int yes = switch_domain(c, p, g, &bw, err);
    if (yes < 0)
        return err->code;
    if (!yes) {
        note(p, "rings: a group of %d ranks is no switch domain and more than %d: not searched",
             g, CS__RING_MAX);
        return CS_OK;
    }
    p->nrings = 1, p->rings_upper = 1, p->ring_group = g, p->ring_bw = bw, p->ring_switch = 1;
    char *o = p->ring_orders;
    for (int j = 0; g <= 36 && j < g; j++)
        *o++ = digit36(j);
    *o = 0;
    note(p, "rings: %s of %d ranks %s a switch domain (every route a rank's own links to the "
         "switch and the other's from it): any order is a ring using each rank's links once, "
         "the ranks' order, %.1f GB/s", g == P ? "all" : "each group", g,
         g == P ? "are" : "is", bw / 1e9);
    return CS_OK;
}

/* The rings: in the ring group of rank 0 (the coarsest regular tier of at
 * most CS__RING_MAX ranks), at each bandwidth threshold, the most rings;
 * the best rings x bandwidth kept, the first ring as rank order 1.  With
 * no such tier, a larger switch domain's structural ring (switch_ring). */
static int find_rings(lctx_t *c, cs_planner_t *p, cs_err_t *err)
{
    int P = p->ranks, rg = 0;
    for (int t = 0; t < p->ntiers; t++)
        if (p->tiers[t].group > 1 && p->tiers[t].group <= CS__RING_MAX &&
            P % p->tiers[t].group == 0)
            rg = p->tiers[t].group;
    if (rg < 3)
        return switch_ring(c, p, err);
    route_t *rt = malloc(sizeof(route_t) * (size_t)rg * (size_t)rg);
    int(*rings)[CS__RING_MAX] = malloc(sizeof(int[CS__RING_MAX]) * CS__RING_MAX);
    int(*best)[CS__RING_MAX] = malloc(sizeof(int[CS__RING_MAX]) * CS__RING_MAX);
    int st = rt && rings && best ? CS_OK : cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
    double thr[MAX_THRESHOLDS];
    int nthr = 0;
    for (int a = 0; a < rg && st == CS_OK; a++)
        for (int b = 0; b < rg && st == CS_OK; b++) {
            route_t *r = &rt[a * rg + b];
            r->n = 0;
            if (a == b)
                continue;
            if ((st = read_route(&c->t, p, a, b, r, err)) != CS_OK)
                break;
            int k = 0;
            while (k < nthr && fabs(thr[k] - r->bw) > 1e-9 * r->bw)
                k++;
            if (k == nthr && nthr < MAX_THRESHOLDS)
                thr[nthr++] = r->bw;
        }
    int nbest = 0, upper = 0, bupper = 0;
    double bbw = 0;
    /* the direct routes (the fewest links any pair's route has) first;
     * routes of more links only where they give more */
    int direct = ROUTE_MAX;
    for (int i = 0; i < rg * rg; i++)
        if (i / rg != i % rg && rt[i].n < direct)
            direct = rt[i].n;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < nthr && st == CS_OK; i++) {
            double bw;
            int k = group_rings(c, rg, thr[i] * (1 - 1e-9), pass ? ROUTE_MAX : direct, rt, rings,
                                &upper, &bw);
            if (k < 0) {
                st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
                break;
            }
            if (k > 0 && k * bw > nbest * bbw * (1 + 1e-9)) {
                nbest = k, bbw = bw, bupper = upper;
                memcpy(best, rings, sizeof(int[CS__RING_MAX]) * (size_t)k);
            }
        }
    if (st == CS_OK && nbest > 0) {
        /* as many as the orders parameter holds */
        int fit = (CS_PLANNER_RING_ORDERS - 1 + 1) / (rg + 1);
        if (nbest > fit)
            nbest = fit;
        p->nrings = nbest, p->rings_upper = bupper, p->ring_group = rg, p->ring_bw = bbw;
        char *o = p->ring_orders;
        for (int i = 0; i < nbest; i++) {
            if (i)
                *o++ = '+';
            for (int j = 0; j < rg; j++)
                *o++ = digit36(best[i][j]);
        }
        *o = 0;
        /* rank order 1: every group in ring 0's order, when that differs */
        int differs = 0;
        for (int j = 0; j < rg; j++)
            differs |= best[0][j] != j;
        if (differs && p->nmaps < CS_PLANNER_MAX_MAPS) {
            int m = p->nmaps++;
            for (int r = 0; r < P; r++)
                memcpy(cs_planner_host(p, m, r),
                       cs_planner_host(p, 0, r - r % rg + best[0][r % rg]), CS_PLANNER_HOST_MAX);
            snprintf(p->map_name[m], sizeof(p->map_name[m]), "fast-ring");
            snprintf(p->map_note[m], sizeof(p->map_note[m]),
                     "%s in the order of the first of the rings over disjoint links (%.1f GB/s "
                     "each)", rg == P ? "ranks" : "each group's ranks", bbw / 1e9);
        }
        note(p, "rings: %d over disjoint links in %s of %d ranks (the links allow %d), %.1f GB/s "
             "each (slowest link), %.1f GB/s together: orders=%s", nbest,
             rg == P ? "all" : "each group", rg, bupper, bbw / 1e9, nbest * bbw / 1e9,
             p->ring_orders);
    } else if (st == CS_OK) {
        note(p, "rings: none over disjoint links in %s of %d ranks", rg == P ? "all" : "a group",
             rg);
    }
    free(rt);
    free(rings);
    free(best);
    return st;
}

/* The bound per size: the largest of the ranks' (their links out and in),
 * the tiers' groups' (egress) and, for an allreduce, the reducing switch's. */
static void bound(const cs_platform_t *plat, cs_planner_t *p)
{
    int P = p->ranks;
    double fr = coll_factor(p->coll, P), rate = fmin(p->links_out_bw, p->links_in_bw);
    const char *why = p->links_out_bw <= p->links_in_bw ? "out of" : "into";
    char sw[160] = "";
    if (p->coll == CS_COLL_ALLREDUCE && plat->nswitches > 0 && P > 1) {
        const char **h = malloc(sizeof(char *) * (size_t)P);
        int s = -1;
        if (h) {
            for (int r = 0; r < P; r++)
                h[r] = cs_planner_host(p, 0, r);
            s = cs_platform_switch_for(plat, h, (uint32_t)P);
            free(h);
        }
        if (s >= 0 && (double)(P + 1) / P < fr) {
            fr = (double)(P + 1) / P;
            snprintf(sw, sizeof(sw), " (the %s switch of zone %.60s reduces: (P+1)/P, not "
                     "2(P-1)/P)", cs_reduce_kind_name(plat->switches[s].kind),
                     plat->switches[s].zone);
            note(p, "switch: %s at %.60s reduces for every rank: an allreduce moves (P+1)/P x "
                 "SIZE per rank each way", cs_reduce_kind_name(plat->switches[s].kind),
                 plat->switches[s].zone);
        } else if (s < 0) {
            /* a switch per group of a tier (an HGX node's NVLS, an NVL72
             * rack's): each rank's vector passes its group's switch once
             * each way, and a g-th of it more the group's share across
             * groups, (g+1)/g x SIZE, where the ranks' own reductions move
             * 2(P-1)/P (the groups' egress bounds what crosses them) */
            for (int t = 0; t + 1 < p->ntiers && !sw[0]; t++) {
                int g = p->tiers[t].group, all = g > 1 && P % g == 0 && P / g >= 2;
                const char **gh = all ? malloc(sizeof(char *) * (size_t)g) : NULL;
                int first = -1;
                for (int j = 0; all && j < P / g; j++) {
                    for (int r = 0; gh && r < g; r++)
                        gh[r] = cs_planner_host(p, 0, j * g + r);
                    int gs = gh ? cs_platform_switch_for(plat, gh, (uint32_t)g) : -1;
                    all = gs >= 0;
                    if (first < 0)
                        first = gs;
                }
                free(gh);
                if (all && first >= 0 && (double)(g + 1) / g < fr) {
                    fr = (double)(g + 1) / g;
                    snprintf(sw, sizeof(sw), " (each group of %d ranks (tier %.40s) has a "
                             "switch that reduces (%s): (g+1)/g, not 2(P-1)/P)",
                             g, p->tiers[t].name, cs_reduce_kind_name(plat->switches[first].kind));
                    note(p, "switch: each group of %d ranks (tier %s) has a switch that reduces "
                         "for its ranks (%s): an allreduce moves (g+1)/g x SIZE per rank each way",
                         g, p->tiers[t].name, cs_reduce_kind_name(plat->switches[first].kind));
                }
            }
        }
    }
    double per = fr > 0 && rate > 0 && isfinite(rate) ? fr / rate : 0; /* seconds per byte */
    snprintf(p->bound_note, sizeof(p->bound_note), "%.3g x SIZE %s each rank over its links' "
             "%.1f GB/s%s", fr, why, rate / 1e9, sw);
    for (int t = 0; t + 1 < p->ntiers; t++) {
        const cs_planner_tier_t *tt = &p->tiers[t];
        if (!tt->group || !(tt->group_bw > 0) || P / tt->group < 2)
            continue;
        int G = P / tt->group;
        double f = coll_factor(p->coll, G);
        /* an all-to-all's blocks are each for one rank: nothing combines
         * them, so every rank of a group sends its own out of it, SIZE x
         * (P - g) / P each (the others' data join or reduce: the group
         * moves one party's share) */
        if (p->coll == CS_COLL_ALLTOALL)
            f = (double)tt->group * (double)(P - tt->group) / (double)P;
        if (f / tt->group_bw > per) {
            per = f / tt->group_bw;
            snprintf(p->bound_note, sizeof(p->bound_note),
                     "%.3g x SIZE must leave each of the %d groups of %d ranks (tier %s) over its "
                     "%.1f GB/s egress (max-flow)", f, G, tt->group, tt->name,
                     tt->group_bw / 1e9);
        }
    }
    for (int k = 0; k < p->nsizes; k++)
        p->bound_s[k] = per * (double)p->sizes[k];
    if (!(per > 0))
        p->bound_note[0] = 0;
}

int cs__planner_links(const cs_platform_t *plat, cs_planner_t *p, cs_err_t *err)
{
    lctx_t c;
    memset(&c, 0, sizeof(c));
    int g0 = 0, nblk = 0;
    int st = read_pairs(&c, p, &g0, &nblk, err);
    if (st == CS_OK) {
        p->links_out_bw = least_sum(&c.t, c.out, c.nout);
        p->links_in_bw = least_sum(&c.t, c.in, c.nin);
        p->links_exact = g0 == 0;
        p->links_routes = c.routes;
        if (g0)
            note(p, "links: each rank's links out sum to >= %.1f GB/s, in %.1f GB/s (first / "
                 "last links of its routes; %lld routes of %d groups of %d ranks, every group "
                 "taken alike)",
                 p->links_out_bw / 1e9, p->links_in_bw / 1e9, c.routes, nblk, g0);
        else
            note(p, "links: each rank's links out sum to >= %.1f GB/s, in %.1f GB/s (first / "
                 "last links of its routes; every pair's route read, %d links)", p->links_out_bw / 1e9, p->links_in_bw / 1e9, c.t.n);
        st = find_rings(&c, p, err);
    }
    if (st == CS_OK)
        bound(plat, p);
    ltab_free(&c.t);
    free(c.out);
    free(c.in);
    return st;
}
