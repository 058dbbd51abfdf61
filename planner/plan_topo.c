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
 * first factorization found here.  The links the routes use, the rings over
 * disjoint links and the bound are plan_links.c's.
 */
#define _GNU_SOURCE
#include <igraph.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_grow.h"
#include "cs_log.h"
#include "cs_plat_levels.h"
#include "cs_planner_int.h"
#include "cs_platform.h"
#include "cs_sim.h"
#include "cs_time.h"

#define MAX_ROUTE 64
_Static_assert(CS_PLANNER_MAX_TIERS == CS_PLAT_LEVEL_MAX,
               "the planner's tiers are the levels every command derives");
#define EGRESS_MAX 128 /* ranks on either side of a group's max-flow */

typedef struct pinfo {
    double lat, bw;
    int hops;
    char tier[16];
    unsigned mask;                   /* tiers of the platform's table on the route */
    float tbw[CS_PLAT_MAX_TIERS];    /* slowest link of each of them */
} pinfo_t;

static int route_info(const cs_platform_t *plat, const char *a, const char *b, pinfo_t *pi,
                      cs_err_t *err)
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
        for (int k = 0; k < plat->ntiers && k < CS_PLAT_MAX_TIERS; k++)
            if (strcmp(plat->tiers[k].name, l[i].tier) == 0) {
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

/* ---- the levels ------------------------------------------------------------ */

/* The routes of rank 0 that the levels were read from. */
typedef struct row0 {
    int n;
    size_t cap, cap_info;
    long long *key;
    pinfo_t *info;
} row0_t;

static int row0_add(row0_t *r, long long key, const pinfo_t *pi)
{
    if (cs_grow(&r->key, &r->cap, (size_t)r->n + 1, sizeof(long long), 256) ||
        cs_grow(&r->info, &r->cap_info, (size_t)r->n + 1, sizeof(pinfo_t), 256))
        return -1;
    r->key[r->n] = key;
    r->info[r->n++] = *pi;
    return 0;
}

/* Levels from the platform's blocks (cs_platform_t.blocks) by the rule of
 * cs_plat_levels.h, every block of a size taken alike: every pair of the
 * first block's ranks gives the levels inside a block; the level that joins
 * the blocks of one size into those of the next (the last: every rank) is
 * the nearest of rank 0's routes to the second block of the smaller size.
 * 0 and the levels; 1 when the blocks do not make the levels (no blocks,
 * a first block larger than CS_PLAT_LEVEL_ALL or not joined inside, a
 * join no farther than the level below it): the rows are read instead;
 * another status with err on failure. */
static int block_levels(const cs_platform_t *plat, const cs_planner_t *p, cs__plat_level_t *lv,
                        int *nlv, row0_t *r0, long long *nroutes, cs_err_t *err)
{
    int P = p->ranks, S[CS_PLAT_MAX_DIMS + 1], ns = 0;
    for (int i = 0; i < plat->nblocks && i < CS_PLAT_MAX_DIMS; i++) {
        int b = plat->blocks[i];
        if (b >= 2 && b < P && P % b == 0 && (ns == 0 || (b > S[ns - 1] && b % S[ns - 1] == 0)))
            S[ns++] = b;
    }
    if (ns == 0 || S[0] > CS_PLAT_LEVEL_ALL)
        return 1;
    S[ns] = P;
    int B = S[0], rows[CS_PLAT_LEVEL_ALL], st = CS_OK, n = 0;
    long long *kv = malloc(sizeof(long long) * (size_t)B * (size_t)B);
    long long *keys[CS_PLAT_LEVEL_ALL];
    pinfo_t pi;
    if (!kv)
        return cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
    for (int i = 0; i < B && st == CS_OK; i++) {
        rows[i] = i;
        keys[i] = kv + (size_t)i * (size_t)B;
        for (int j = 0; j < B && st == CS_OK; j++) {
            if (j == i) {
                keys[i][j] = -1;
                continue;
            }
            if (j < i && i > 0) { /* symmetric, as the rows take it */
                keys[i][j] = keys[j][i];
                continue;
            }
            if ((st = route_info(plat, cs_planner_host(p, 0, i), cs_planner_host(p, 0, j), &pi,
                                 err)) != CS_OK)
                break;
            (*nroutes)++;
            keys[i][j] = key_of(&pi);
            if (i == 0 && row0_add(r0, keys[i][j], &pi))
                st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
        }
    }
    if (st == CS_OK && (st = cs__plat_levels(B, rows, B, 1, keys, lv, CS_PLANNER_MAX_TIERS, &n)) !=
                           CS_OK)
        st = cs_err_set(err, st, "plan: igraph components failed");
    free(kv);
    if (st != CS_OK)
        return st;
    if (n == 0 || lv[n - 1].group != B)
        return 1;
    for (int i = 0; i < n; i++) /* the first block's groups, in every block alike */
        lv[i].ngroups *= P / B;
    long long last = lv[n - 1].key;
    for (int k = 1; k <= ns && n < CS_PLANNER_MAX_TIERS; k++) {
        long long J = -1;
        for (int j = S[k - 1]; j < 2 * S[k - 1] && st == CS_OK; j++) {
            if ((st = route_info(plat, cs_planner_host(p, 0, 0), cs_planner_host(p, 0, j), &pi,
                                 err)) != CS_OK)
                return st;
            (*nroutes)++;
            long long key = key_of(&pi);
            if (row0_add(r0, key, &pi))
                return cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
            if (J < 0 || key < J)
                J = key;
        }
        if (J <= last)
            return 1;
        lv[n++] = (cs__plat_level_t){J, S[k], P / S[k], 1, 1};
        last = J;
    }
    *nlv = n;
    return 0;
}

/* Levels from the rows (cs_plat_levels.h): every pair up to
 * CS_PLAT_LEVEL_ALL ranks, the rows of sampled ranks beyond.  Keeps the
 * rows (keys, info) for the tiers' names and the groups' egress. */
typedef struct rows {
    int all, nrows, rows[CS_PLAT_LEVEL_ALL > CS_PLAT_LEVEL_ROWS ? CS_PLAT_LEVEL_ALL
                                                                : CS_PLAT_LEVEL_ROWS];
    long long **keys;
    pinfo_t **info;
} rows_t;

static int rows_levels(const cs_platform_t *plat, const cs_planner_t *p, rows_t *R,
                       cs__plat_level_t *lv, int *nlv, row0_t *r0, long long *nroutes,
                       cs_err_t *err)
{
    int P = p->ranks, st = CS_OK;
    R->nrows = cs__plat_level_rows(P, R->rows, &R->all);
    R->keys = calloc((size_t)R->nrows, sizeof(*R->keys));
    R->info = calloc((size_t)R->nrows, sizeof(*R->info));
    if (!R->keys || !R->info)
        return cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
    for (int i = 0; i < R->nrows && st == CS_OK; i++) {
        long long *keys = R->keys[i] = malloc(sizeof(long long) * (size_t)P);
        pinfo_t *info = R->info[i] = malloc(sizeof(pinfo_t) * (size_t)P);
        if (!keys || !info)
            return cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
        for (int j = 0; j < P && st == CS_OK; j++) {
            if (R->all && j < R->rows[i]) { /* symmetric: taken from row j */
                info[j] = R->info[j][R->rows[i]];
                keys[j] = R->keys[j][R->rows[i]];
            } else if (j == R->rows[i]) {
                memset(&info[j], 0, sizeof(pinfo_t));
                info[j].bw = INFINITY;
                keys[j] = -1;
            } else {
                st = route_info(plat, cs_planner_host(p, 0, R->rows[i]),
                                cs_planner_host(p, 0, j), &info[j], err);
                keys[j] = key_of(&info[j]);
                (*nroutes)++;
            }
            if (st == CS_OK && i == 0 && row0_add(r0, keys[j], &info[j]))
                st = cs_err_set(err, CS_ERR_NOMEM, "plan: out of memory");
        }
    }
    if (st != CS_OK)
        return st;
    if ((st = cs__plat_levels(P, R->rows, R->nrows, R->all, R->keys, lv, CS_PLANNER_MAX_TIERS,
                              nlv)) != CS_OK)
        return cs_err_set(err, st, "plan: igraph components failed");
    return CS_OK;
}

static void rows_free(rows_t *R)
{
    for (int i = 0; i < R->nrows; i++) {
        if (R->keys)
            free(R->keys[i]);
        if (R->info)
            free(R->info[i]);
    }
    free(R->keys);
    free(R->info);
}

/* Tier L's name and one flow's bandwidth: a route of rank 0 at exactly its
 * level, named by the slowest of the tiers it adds to closer routes' (the
 * outermost in the platform's table on a tie); other rows where no route
 * of rank 0 is at that level. */
static void tier_of(const cs_platform_t *plat, int P, const cs__plat_level_t *lv,
                    const row0_t *r0, const rows_t *R, cs_planner_tier_t *t)
{
    unsigned lower = 0;
    for (int j = 0; j < r0->n; j++)
        if (r0->key[j] >= 0 && r0->key[j] < lv->key)
            lower |= r0->info[j].mask;
    for (int j = 0; j < r0->n; j++)
        if (r0->key[j] == lv->key) {
            const pinfo_t *pi = &r0->info[j];
            t->rank_bw = pi->bw;
            snprintf(t->name, sizeof(t->name), "%s", pi->tier);
            unsigned fresh = pi->mask & ~lower;
            int best = -1;
            for (int k = 0; k < CS_PLAT_MAX_TIERS; k++)
                if (fresh >> k & 1 && (best < 0 || pi->tbw[k] <= pi->tbw[best] * (1 + 1e-6)))
                    best = k;
            if (best >= 0)
                snprintf(t->name, sizeof(t->name), "%s", plat->tiers[best].name);
            return;
        }
    for (int i = 0; R->keys && i < R->nrows; i++) /* only other rows reach it */
        for (int j = 0; j < P; j++)
            if (R->keys[i][j] == lv->key) {
                t->rank_bw = R->info[i][j].bw;
                snprintf(t->name, sizeof(t->name), "%s", R->info[i][j].tier);
                return;
            }
}

/* ---- the analysis -------------------------------------------------------- */

static void topo_note(cs_planner_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void topo_note(cs_planner_t *p, const char *fmt, ...)
{
    if (p->nlink_notes >= CS_PLANNER_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->link_notes[p->nlink_notes++], sizeof(p->link_notes[0]), fmt, ap);
    va_end(ap);
}

int cs__planner_topology(const cs_platform_t *plat, cs_planner_t *p, cs_err_t *err)
{
    int P = p->ranks, st = CS_OK, nlv = 0;
    rows_t R;
    memset(&R, 0, sizeof(R));
    row0_t r0 = {0};
    long long nroutes = 0;
    cs__plat_level_t *lv = malloc(sizeof(*lv) * CS_PLANNER_MAX_TIERS);
    igraph_vector_int_t memb;
    igraph_vector_int_init(&memb, 0);
    char **hosts = NULL;
    double t0 = cs_now_s();
    if (!lv) {
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
    /* levels: the platform's blocks above CS_PLAT_LEVEL_ALL ranks, else the
     * rows (platforms/cs_plat_levels.h) */
    int blocks = 1;
    if (P > CS_PLAT_LEVEL_ALL) {
        if ((blocks = block_levels(plat, p, lv, &nlv, &r0, &nroutes, err)) < 0) {
            st = blocks;
            goto done;
        }
        if (blocks == 1) { /* what it read is read again with the rows */
            r0.n = 0;
            nroutes = 0;
        }
    }
    if (blocks == 1 && (st = rows_levels(plat, p, &R, lv, &nlv, &r0, &nroutes, err)) != CS_OK)
        goto done;
    if (blocks == 0) {
        char b[64] = "";
        for (int i = 0; i < plat->nblocks; i++) {
            size_t l = strlen(b);
            snprintf(b + l, sizeof(b) - l, "%s%d", i ? ", " : "", plat->blocks[i]);
        }
        topo_note(p, "levels: from the platform's blocks of %s ranks, each taken alike (every "
                  "pair's route in the first, rank 0's to the next block of each size: %lld "
                  "routes)", b, nroutes);
    } else if (!R.all) {
        topo_note(p, "levels: from the routes of %d sampled ranks to every rank (%lld routes; "
                  "the platform declares no blocks, so a large one takes longer)", R.nrows,
                  nroutes);
    }
    CS_DEBUG("plan", "levels: %lld routes in %.2f s", nroutes, cs_now_s() - t0);
    for (int L = 0; L < nlv; L++) {
        cs_planner_tier_t *t = &p->tiers[p->ntiers++];
        memset(t, 0, sizeof(*t));
        t->group = lv[L].regular ? lv[L].group : 0;
        t->ngroups = lv[L].ngroups;
        t->latency = (double)lv[L].key * 1e-12;
        tier_of(plat, P, &lv[L], &r0, &R, t);
    }
    factorizations(p, lv, nlv);

    /* egress of one group of each inner regular tier (for the bound): the
     * first group to at most EGRESS_MAX ranks spread over the others */
    double te = cs_now_s();
    for (int t = 0; t + 1 < p->ntiers; t++) {
        cs_planner_tier_t *tt = &p->tiers[t];
        if (!tt->group || tt->group > EGRESS_MAX || P / tt->group < 2)
            continue;
        int src[EGRESS_MAX], dst[EGRESS_MAX], nsrc = tt->group, ndst = 0;
        /* the group of rank 0: aligned block when sampled, components otherwise */
        if (R.all) {
            igraph_integer_t nc;
            long long lim = llround(tt->latency * 1e12);
            if ((st = cs__plat_level_components(P, R.rows, R.nrows, R.keys, lim, &memb, &nc)) !=
                CS_OK)
                goto done;
            nsrc = 0;
            for (int j = 0; j < P && nsrc < EGRESS_MAX; j++)
                if (VECTOR(memb)[j] == VECTOR(memb)[0])
                    src[nsrc++] = j;
            int out = P - nsrc;
            for (int j = 0, seen = 0; j < P && ndst < EGRESS_MAX; j++)
                if (VECTOR(memb)[j] != VECTOR(memb)[0]) {
                    if ((long)seen * EGRESS_MAX / out == ndst || out <= EGRESS_MAX)
                        dst[ndst++] = j;
                    seen++;
                }
        } else {
            for (int j = 0; j < nsrc; j++)
                src[j] = j;
            int out = P - nsrc;
            for (int k = 0; k < EGRESS_MAX && k < out; k++)
                dst[ndst++] = nsrc + (int)((long)k * out / (out < EGRESS_MAX ? out : EGRESS_MAX));
        }
        tt->group_bw = egress(p, src, nsrc, dst, ndst, err);
    }
    CS_DEBUG("plan", "groups' egress (max-flow) in %.2f s", cs_now_s() - te);

    /* the links the routes use: rings (rank order 1), the bound */
    double tl = cs_now_s();
    if ((st = cs__planner_links(plat, p, err)) != CS_OK)
        goto done;
    CS_DEBUG("plan", "links, rings and bound in %.2f s", cs_now_s() - tl);
    /* each order's ring: its slowest route (neighbours r, r+1 mod P) */
    for (int mi = 0; mi < p->nmaps && st == CS_OK; mi++) {
        double slow = INFINITY;
        int step = P > 4096 ? P / 4096 : 1;
        for (int r = 0; r < P; r += step) {
            pinfo_t pi;
            if ((st = route_info(plat, cs_planner_host(p, mi, r),
                                 cs_planner_host(p, mi, (r + 1) % P), &pi, err)) != CS_OK)
                break;
            if (pi.bw < slow)
                slow = pi.bw;
        }
        p->map_ring_bw[mi] = slow;
        if (mi == 0)
            snprintf(p->map_note[0], sizeof(p->map_note[0]), "ranks in the platform's order");
    }
    CS_DEBUG("plan", "topology analysis in %.2f s", cs_now_s() - t0);
done:
    if (hosts)
        cs_sim_hosts_free(hosts, P);
    rows_free(&R);
    free(r0.key);
    free(r0.info);
    free(lv);
    igraph_vector_int_destroy(&memb);
    return st;
}
