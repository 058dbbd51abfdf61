/*
 * plan_topo.c - topology analysis for the planner (cs_planner.h, step 1).
 *
 * Runs with the platform loaded in SimGrid: every figure comes from the
 * routes SimGrid computes (cs_sim_route), so presets and XML files are
 * analysed alike.  A route between two ranks is summarised by its latency
 * (sum), its bandwidth (slowest link), and the tier of its middle-most
 * slowest link.  The levels of the hierarchy and their groups come from
 * the routes' latencies by the rule every command shares
 * (platforms/cs_plat_levels.h: the distinct latencies, the connected
 * components of the ranks at most that far apart; beyond CS_PLAT_LEVEL_ALL
 * ranks the rows of a sample of ranks, groups checked to be aligned blocks),
 * so the platform's natural dims (hier's default in `collstep sim`) are the
 * first factorization found here.
 */
#define _GNU_SOURCE
#include <igraph.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_grow.h"
#include "cs_plat_levels.h"
#include "cs_planner_int.h"
#include "cs_platform.h"
#include "cs_sim.h"

#define MAX_ROUTE 64
_Static_assert(CS_PLANNER_MAX_TIERS == CS_PLAT_LEVEL_MAX,
               "the planner's tiers are the levels every command derives");
#define RING_SEARCH_MAX 16 /* Hamiltonian search on groups up to this size */

typedef struct pinfo {
    double lat, bw;
    int hops;
    char tier[16];
    unsigned mask;                   /* tiers of the platform's table on the route */
    float tbw[CS_PLAT_MAX_TIERS];    /* slowest link of each of them */
} pinfo_t;

static const cs_platform_t *g_plat; /* tier table for route_info */

static int route_info(const char *a, const char *b, pinfo_t *pi, cs_err_t *err)
{
    cs_sim_link_t l[MAX_ROUTE];
    int n = 0;
    int st = cs_sim_route(a, b, l, MAX_ROUTE, &n, err);
    if (st != CS_OK)
        return st;
    memset(pi, 0, sizeof(*pi));
    pi->bw = INFINITY;
    pi->hops = n;
    int m = n < MAX_ROUTE ? n : MAX_ROUTE, best = -1;
    double bestd = 1e9;
    for (int i = 0; i < m; i++) {
        for (int k = 0; g_plat && k < g_plat->ntiers && k < CS_PLAT_MAX_TIERS; k++)
            if (strcmp(g_plat->tiers[k].name, l[i].tier) == 0) {
                if (!(pi->mask >> k & 1) || l[i].bandwidth < pi->tbw[k])
                    pi->tbw[k] = (float)l[i].bandwidth;
                pi->mask |= 1u << k;
                break;
            }
        pi->lat += l[i].latency;
        if (l[i].bandwidth < pi->bw * (1 - 1e-9))
            pi->bw = l[i].bandwidth, best = -1, bestd = 1e9;
        if (l[i].bandwidth <= pi->bw * (1 + 1e-9)) {
            double d = fabs(i - (m - 1) / 2.0);
            if (d < bestd)
                bestd = d, best = i;
        }
    }
    if (best >= 0)
        snprintf(pi->tier, sizeof(pi->tier), "%s", l[best].tier[0] ? l[best].tier : "link");
    else
        snprintf(pi->tier, sizeof(pi->tier), "local");
    if (m == 0)
        pi->bw = INFINITY;
    return CS_OK;
}

/* Level key: latency in picoseconds (routes of equal latency are one level). */
static long long key_of(const pinfo_t *pi) { return cs__plat_level_key(pi->lat); }

/* ---- fast rings: Hamiltonian cycle / path maximising the slowest route ---- */

typedef struct hsearch {
    int n;
    const double *bw;  /* n x n route bandwidth */
    const double *lat; /* n x n route latency */
    double thr;
    int cycle;
    int path[RING_SEARCH_MAX], used[RING_SEARCH_MAX];
    int best[RING_SEARCH_MAX];
    double best_lat;
    long visits;
} hsearch_t;

static void hdfs(hsearch_t *h, int depth, double lat)
{
    if (++h->visits > 2000000 || lat >= h->best_lat)
        return;
    if (depth == h->n) {
        int a = h->path[depth - 1], b = h->path[0];
        if (h->cycle) {
            if (h->bw[a * h->n + b] < h->thr)
                return;
            lat += h->lat[a * h->n + b];
        }
        if (lat < h->best_lat) {
            h->best_lat = lat;
            memcpy(h->best, h->path, sizeof(int) * (size_t)h->n);
        }
        return;
    }
    int a = h->path[depth - 1];
    for (int b = 0; b < h->n; b++) {
        if (h->used[b] || h->bw[a * h->n + b] < h->thr)
            continue;
        h->used[b] = 1;
        h->path[depth] = b;
        hdfs(h, depth + 1, lat + h->lat[a * h->n + b]);
        h->used[b] = 0;
    }
}

/* Order of the n members (local indices) as a cycle (or path) whose slowest
 * route is as fast as possible, then of least total latency.  Returns the
 * slowest route's bandwidth, 0 when no order was found. */
static double fast_order(int n, const double *bw, const double *lat, int cycle, int *order)
{
    double thr[RING_SEARCH_MAX * RING_SEARCH_MAX];
    int nt = 0;
    for (int i = 0; i < n * n; i++) {
        if (i / n == i % n)
            continue;
        int k = 0;
        while (k < nt && fabs(thr[k] - bw[i]) > 1e-9 * bw[i])
            k++;
        if (k == nt)
            thr[nt++] = bw[i];
    }
    /* descending thresholds */
    for (int i = 1; i < nt; i++)
        for (int j = i; j > 0 && thr[j] > thr[j - 1]; j--) {
            double x = thr[j];
            thr[j] = thr[j - 1];
            thr[j - 1] = x;
        }
    if (n == 1) {
        order[0] = 0;
        return INFINITY;
    }
    for (int t = 0; t < nt; t++) {
        hsearch_t h;
        memset(&h, 0, sizeof(h));
        h.n = n, h.bw = bw, h.lat = lat, h.thr = thr[t] * (1 - 1e-9), h.cycle = cycle;
        h.best_lat = INFINITY;
        h.path[0] = 0, h.used[0] = 1;
        hdfs(&h, 1, 0);
        if (isfinite(h.best_lat)) {
            memcpy(order, h.best, sizeof(int) * (size_t)n);
            return thr[t];
        }
    }
    return 0;
}

/* ---- bound: max-flow out of one group ----------------------------------- */

typedef struct lnk {
    char *name;
    double bw;
} lnk_t;

static int link_id(lnk_t **v, int *n, size_t *cap, const char *name, double bw)
{
    for (int i = *n - 1; i >= 0; i--) /* routes repeat recent links */
        if (strcmp((*v)[i].name, name) == 0)
            return i;
    if (cs_grow(v, cap, (size_t)*n + 1, sizeof(lnk_t), 256))
        return -1;
    if (!((*v)[*n].name = strdup(name)))
        return -1;
    (*v)[*n].bw = bw;
    return (*n)++;
}

/* Max-flow (bytes/s) from the ranks `src` to the ranks `dst`, over the
 * graph of the routes between them: a vertex per host and per link, an
 * edge of the link's bandwidth into and out of each link vertex. */
static double egress(const cs_planner_t *p, const int *src, int ns, const int *dst, int nd,
                     cs_err_t *err)
{
    lnk_t *lv = NULL;
    int nl = 0, st = CS_OK;
    size_t cl = 0;
    igraph_vector_int_t edges;
    igraph_vector_t capv;
    igraph_vector_int_init(&edges, 0);
    igraph_vector_init(&capv, 0);
    /* vertices: 0 source, 1 sink, 2 + rank (ns + nd of them), then links */
    int base = 2 + ns + nd;
    double big = 1e18;
    for (int i = 0; i < ns && st == CS_OK; i++) {
        igraph_vector_int_push_back(&edges, 0), igraph_vector_int_push_back(&edges, 2 + i);
        igraph_vector_push_back(&capv, big);
        for (int j = 0; j < nd && st == CS_OK; j++) {
            cs_sim_link_t l[MAX_ROUTE];
            int n = 0;
            if ((st = cs_sim_route(cs_planner_host(p, 0, src[i]), cs_planner_host(p, 0, dst[j]), l,
                                   MAX_ROUTE, &n, err)))
                break;
            int prev = 2 + i;
            for (int k = 0; k < n && k < MAX_ROUTE; k++) {
                int id = link_id(&lv, &nl, &cl, l[k].name, l[k].bandwidth);
                if (id < 0) {
                    st = CS_ERR_NOMEM;
                    break;
                }
                igraph_vector_int_push_back(&edges, prev);
                igraph_vector_int_push_back(&edges, base + 2 * id);
                igraph_vector_push_back(&capv, big);
                prev = base + 2 * id + 1;
            }
            igraph_vector_int_push_back(&edges, prev);
            igraph_vector_int_push_back(&edges, 2 + ns + j);
            igraph_vector_push_back(&capv, big);
        }
    }
    for (int j = 0; j < nd; j++) {
        igraph_vector_int_push_back(&edges, 2 + ns + j), igraph_vector_int_push_back(&edges, 1);
        igraph_vector_push_back(&capv, big);
    }
    for (int k = 0; k < nl; k++) { /* the link itself: in-vertex to out-vertex */
        igraph_vector_int_push_back(&edges, base + 2 * k);
        igraph_vector_int_push_back(&edges, base + 2 * k + 1);
        igraph_vector_push_back(&capv, lv[k].bw);
    }
    double flow = 0;
    if (st == CS_OK) {
        igraph_t g;
        if (igraph_create(&g, &edges, base + 2 * nl, IGRAPH_DIRECTED) == IGRAPH_SUCCESS) {
            igraph_real_t f = 0;
            if (igraph_maxflow_value(&g, &f, 0, 1, &capv, NULL) == IGRAPH_SUCCESS)
                flow = f;
            igraph_destroy(&g);
        }
    }
    for (int k = 0; k < nl; k++)
        free(lv[k].name);
    free(lv);
    igraph_vector_int_destroy(&edges);
    igraph_vector_destroy(&capv);
    return flow;
}

/* ---- factorizations ------------------------------------------------------ */

static void add_fact(cs_planner_t *p, const int *d, int n)
{
    if (p->nfacts >= CS_PLANNER_MAX_FACTS || n < 2)
        return;
    char s[48] = "";
    for (int i = 0; i < n; i++) {
        if (d[i] < 2)
            return;
        size_t l = strlen(s);
        snprintf(s + l, sizeof(s) - l, "%s%d", i ? "x" : "", d[i]);
    }
    for (int i = 0; i < p->nfacts; i++)
        if (strcmp(p->facts[i], s) == 0)
            return;
    snprintf(p->facts[p->nfacts++], sizeof(p->facts[0]), "%s", s);
}

/* The tiers' group sizes as dims (innermost first), then the outermost
 * dimension split in two (the groups of a tier the platform does not
 * show, e.g. 6x16x16 for 6x256), then tiers merged (6x256 from 3x2x256). */
static void factorizations(cs_planner_t *p, const cs__plat_level_t *lv, int nlv)
{
    int g[CS_PLANNER_MAX_TIERS], prev = 1;
    int ng = cs__plat_level_factors(lv, nlv, g, CS_PLANNER_MAX_TIERS, &prev);
    if (ng < 1 || prev != p->ranks)
        return;
    /* every subset of inner boundaries kept: 2^(ng-1) merges */
    for (int mask = (1 << (ng - 1)) - 1; mask >= 0; mask--) {
        int d[CS_PLANNER_MAX_TIERS], nd = 0, acc = 1;
        for (int i = 0; i < ng; i++) {
            acc *= g[i];
            if (i == ng - 1 || (mask >> i & 1))
                d[nd++] = acc, acc = 1;
        }
        if (nd > 4)
            continue;
        add_fact(p, d, nd);
        /* outermost split into a x b, a the divisor nearest sqrt */
        int last = d[nd - 1], best = 0;
        for (int a = 2; a * a <= last; a++)
            if (last % a == 0)
                best = a;
        if (best && nd < 4) {
            d[nd - 1] = best;
            d[nd] = last / best;
            add_fact(p, d, nd + 1);
        }
    }
}

/* ---- the analysis -------------------------------------------------------- */

int cs__planner_topology(const cs_platform_t *plat, cs_planner_t *p, cs_err_t *err)
{
    int P = p->ranks, st = CS_OK;
    int all = 0, rows[CS_PLAT_LEVEL_ALL > CS_PLAT_LEVEL_ROWS ? CS_PLAT_LEVEL_ALL
                                                             : CS_PLAT_LEVEL_ROWS];
    g_plat = plat;
    int nrows = cs__plat_level_rows(P, rows, &all);
    long long **keys = calloc((size_t)nrows, sizeof(*keys));
    pinfo_t **info = calloc((size_t)nrows, sizeof(*info));
    cs__plat_level_t *lv = NULL;
    igraph_vector_int_t memb;
    igraph_vector_int_init(&memb, 0);
    char **hosts = NULL;
    if (!keys || !info) {
        st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
        goto done;
    }
    if ((st = cs_sim_hosts(plat, NULL, P, &hosts, err)) != CS_OK)
        goto done;
    for (int r = 0; r < P; r++) {
        if (strlen(hosts[r]) >= CS_PLANNER_HOST_MAX) {
            st = cs_err_set(err, CS_ERR_UNSUPPORTED, "plan: host name %.80s... is longer than "
                            "%d bytes", hosts[r], CS_PLANNER_HOST_MAX - 1);
            goto done;
        }
        snprintf(cs_planner_host(p, 0, r), CS_PLANNER_HOST_MAX, "%s", hosts[r]);
    }
    p->nmaps = 1;
    snprintf(p->map_name[0], sizeof(p->map_name[0]), "platform");
    for (int i = 0; i < nrows && st == CS_OK; i++) {
        keys[i] = malloc(sizeof(long long) * (size_t)P);
        info[i] = malloc(sizeof(pinfo_t) * (size_t)P);
        if (!keys[i] || !info[i]) {
            st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
            break;
        }
        for (int j = 0; j < P && st == CS_OK; j++) {
            if (all && j < rows[i]) { /* symmetric: taken from row j */
                info[i][j] = info[j][rows[i]];
                keys[i][j] = keys[j][rows[i]];
                continue;
            }
            if (j == rows[i]) {
                memset(&info[i][j], 0, sizeof(pinfo_t));
                info[i][j].bw = INFINITY;
                keys[i][j] = -1;
                continue;
            }
            st = route_info(cs_planner_host(p, 0, rows[i]), cs_planner_host(p, 0, j), &info[i][j],
                            err);
            keys[i][j] = key_of(&info[i][j]);
        }
    }
    if (st != CS_OK)
        goto done;
    /* levels: the shared derivation (platforms/cs_plat_levels.h) */
    int nlv = 0;
    lv = malloc(sizeof(*lv) * CS_PLANNER_MAX_TIERS);
    if (!lv) {
        st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
        goto done;
    }
    if ((st = cs__plat_levels(P, rows, nrows, all, keys, lv, CS_PLANNER_MAX_TIERS, &nlv)) !=
        CS_OK) {
        cs_err_set(err, st, "plan: igraph components failed");
        goto done;
    }
    for (int L = 0; L < nlv; L++) {
        cs_planner_tier_t *t = &p->tiers[p->ntiers++];
        memset(t, 0, sizeof(*t));
        t->group = lv[L].regular ? lv[L].group : 0;
        t->ngroups = lv[L].ngroups;
        t->latency = (double)lv[L].key * 1e-12;
        /* a pair of rank 0 at exactly this level: its bandwidth, and as its
         * name the slowest of the tiers its route adds to closer pairs'
         * (the outermost in the platform's table on a tie) */
        unsigned lower = 0;
        for (int j = 0; j < P; j++)
            if (keys[0][j] >= 0 && keys[0][j] < lv[L].key)
                lower |= info[0][j].mask;
        for (int j = 0; j < P; j++)
            if (keys[0][j] == lv[L].key) {
                const pinfo_t *pi = &info[0][j];
                t->rank_bw = pi->bw;
                snprintf(t->name, sizeof(t->name), "%s", pi->tier);
                unsigned fresh = pi->mask & ~lower;
                int best = -1;
                for (int k = 0; k < CS_PLAT_MAX_TIERS; k++)
                    if (fresh >> k & 1 && (best < 0 || pi->tbw[k] <= pi->tbw[best] * (1 + 1e-6)))
                        best = k;
                if (best >= 0)
                    snprintf(t->name, sizeof(t->name), "%s", plat->tiers[best].name);
                break;
            }
        if (!t->name[0]) /* only other rows reach it */
            for (int i = 0; i < nrows && !t->name[0]; i++)
                for (int j = 0; j < P; j++)
                    if (keys[i][j] == lv[L].key) {
                        t->rank_bw = info[i][j].bw;
                        snprintf(t->name, sizeof(t->name), "%s", info[i][j].tier);
                        break;
                    }
    }
    factorizations(p, lv, nlv);

    /* egress of one group of each inner regular tier (for the bound): the
     * first group to at most 64 ranks spread over the others */
    for (int t = 0; t + 1 < p->ntiers; t++) {
        cs_planner_tier_t *tt = &p->tiers[t];
        if (!tt->group || tt->group > 64 || P / tt->group < 2)
            continue;
        int src[64], dst[64], nsrc = tt->group, ndst = 0;
        /* the group of rank 0: aligned block when sampled, components otherwise */
        if (all) {
            igraph_integer_t nc;
            long long lim = llround(tt->latency * 1e12);
            if ((st = cs__plat_level_components(P, rows, nrows, keys, lim, &memb, &nc)) != CS_OK)
                goto done;
            nsrc = 0;
            for (int j = 0; j < P && nsrc < 64; j++)
                if (VECTOR(memb)[j] == VECTOR(memb)[0])
                    src[nsrc++] = j;
            int out = P - nsrc;
            for (int j = 0, seen = 0; j < P && ndst < 64; j++)
                if (VECTOR(memb)[j] != VECTOR(memb)[0]) {
                    if ((long)seen * 64 / out == ndst || out <= 64)
                        dst[ndst++] = j;
                    seen++;
                }
        } else {
            for (int j = 0; j < nsrc; j++)
                src[j] = j;
            int out = P - nsrc;
            for (int k = 0; k < 64 && k < out; k++)
                dst[ndst++] = nsrc + (int)((long)k * out / (out < 64 ? out : 64));
        }
        tt->group_bw = egress(p, src, nsrc, dst, ndst, err);
    }

    /* fast ring: per group of the coarsest regular tier of at most
     * RING_SEARCH_MAX ranks, a Hamiltonian path (a cycle when it holds every
     * rank) over the fastest routes; groups chained in order */
    int rt = -1;
    for (int t = 0; t < p->ntiers; t++)
        if (p->tiers[t].group && p->tiers[t].group <= RING_SEARCH_MAX &&
            p->tiers[t].group > 1)
            rt = t;
    if (rt >= 0) {
        int g = p->tiers[rt].group, ng = P / g;
        double bw[RING_SEARCH_MAX * RING_SEARCH_MAX], lat[RING_SEARCH_MAX * RING_SEARCH_MAX];
        int order[RING_SEARCH_MAX];
        /* groups are aligned blocks when sampled; components otherwise */
        int *member = malloc(sizeof(int) * (size_t)P), cnt = 0;
        if (!member) {
            st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
            goto done;
        }
        if (all) {
            igraph_integer_t nc;
            long long lim = llround(p->tiers[rt].latency * 1e12);
            if ((st = cs__plat_level_components(P, rows, nrows, keys, lim, &memb, &nc)) !=
                CS_OK) {
                free(member);
                goto done;
            }
            /* ranks listed group by group, groups by their first rank */
            int *seen = calloc((size_t)P, sizeof(int));
            for (int j = 0; seen && j < P; j++) {
                if (seen[j])
                    continue;
                for (int k = j; k < P; k++)
                    if (VECTOR(memb)[k] == VECTOR(memb)[j])
                        member[cnt++] = k, seen[k] = 1;
            }
            free(seen);
        } else {
            for (int j = 0; j < P; j++)
                member[cnt++] = j;
        }
        double slow = INFINITY;
        int ok = cnt == P, differs = 0;
        for (int q = 0; q < ng && ok; q++) {
            const int *mem = member + q * g;
            if (q == 0 || all) {
                for (int a = 0; a < g && ok; a++)
                    for (int b = 0; b < g; b++) {
                        pinfo_t pi;
                        if (a == b) {
                            bw[a * g + b] = INFINITY, lat[a * g + b] = 0;
                            continue;
                        }
                        if (all) {
                            pi = info[mem[a]][mem[b]];
                        } else if (route_info(cs_planner_host(p, 0, mem[a]),
                                              cs_planner_host(p, 0, mem[b]), &pi, err)) {
                            ok = 0;
                            break;
                        }
                        bw[a * g + b] = pi.bw, lat[a * g + b] = pi.lat;
                    }
                double s = fast_order(g, bw, lat, ng == 1, order);
                if (s <= 0)
                    ok = 0;
                if (s < slow)
                    slow = s;
            }
            for (int a = 0; a < g && ok; a++) {
                memcpy(cs_planner_host(p, 1, q * g + a), cs_planner_host(p, 0, mem[order[a]]),
                       CS_PLANNER_HOST_MAX);
                differs |= mem[order[a]] != q * g + a;
            }
        }
        free(member);
        if (ok && differs) {
            p->nmaps = 2;
            snprintf(p->map_name[1], sizeof(p->map_name[1]), "fast-ring");
            if (ng == 1)
                snprintf(p->map_note[1], sizeof(p->map_note[1]),
                         "Hamiltonian cycle over routes of at least %.1f GB/s", slow / 1e9);
            else
                snprintf(p->map_note[1], sizeof(p->map_note[1]),
                         "per %s group of %d ranks a Hamiltonian path over routes of at least "
                         "%.1f GB/s, groups in order", p->tiers[rt].name, g, slow / 1e9);
        }
    }
    /* each order's ring: its slowest route (neighbours r, r+1 mod P) and
     * the sum of 1/bandwidth over its routes; a fast ring no better than
     * the platform's order by either is dropped */
    double inv[CS_PLANNER_MAX_MAPS] = {0};
    for (int mi = 0; mi < p->nmaps && st == CS_OK; mi++) {
        double slow = INFINITY;
        int step = P > 4096 ? P / 4096 : 1;
        for (int r = 0; r < P; r += step) {
            pinfo_t pi;
            if ((st = route_info(cs_planner_host(p, mi, r), cs_planner_host(p, mi, (r + 1) % P),
                                 &pi, err)) != CS_OK)
                break;
            if (pi.bw < slow)
                slow = pi.bw;
            inv[mi] += 1.0 / pi.bw;
        }
        p->map_ring_bw[mi] = slow;
        if (mi == 0)
            snprintf(p->map_note[0], sizeof(p->map_note[0]), "ranks in the platform's order");
    }
    if (st == CS_OK && p->nmaps > 1 && !(p->map_ring_bw[1] > p->map_ring_bw[0] * 1.001) &&
        !(inv[1] < inv[0] * 0.99))
        p->nmaps = 1;
done:
    if (hosts)
        cs_sim_hosts_free(hosts, P);
    for (int i = 0; i < nrows; i++) {
        if (keys)
            free(keys[i]);
        if (info)
            free(info[i]);
    }
    free(keys);
    free(info);
    free(lv);
    igraph_vector_int_destroy(&memb);
    return st;
}
