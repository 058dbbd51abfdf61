/*
 * plan_rings.c - rings whose hops use disjoint links (cs_planner_int.h):
 * directed Hamiltonian cycles over the members of one group, each hop the
 * route between two members, no link (one direction of a split-duplex
 * link is a link of its own) used by two hops of all the rings together.
 *
 * The search builds the rings one after another by depth-first search
 * from member 0, a hop's candidates in the order: fewest links, least
 * latency, lowest index; a ring that cannot be closed sends the search
 * back into the previous ring's choices.  Symmetry: the rings are found in
 * the order of their first hop out of member 0.  A ring's reverse is tried
 * first as the next ring (on full-duplex links the two directions of one
 * undirected cycle are two rings: the four of a DGX-1's cube mesh).  The
 * search asks for as many rings as the members' links allow (the fewest
 * distinct first links out of, or last links into, a member, each counted
 * as many times as it carries the rings' rate), then one fewer while its
 * visit budget lasts: a complete directed graph on 8 members gives 7.  A
 * link of k times the rings' rate carries k hops (a DGX-1 V100's double
 * NVLinks: two rings of 25 GB/s each way on one 50 GB/s link).
 */
#include <stdlib.h>
#include <string.h>

#include "cs_planner_int.h"

#define VISITS_PER_TRY 400000L

typedef struct rsearch {
    const cs__ring_arcs_t *g;
    unsigned char *used;      /* per link id: hops on it */
    const unsigned char *cap; /* per link id: hops it carries */
    int multi;                /* some link carries several */
    int target, nfound;
    int (*rings)[CS__RING_MAX]; /* target x n */
    int cand[CS__RING_MAX][CS__RING_MAX], ncand[CS__RING_MAX]; /* hop candidates per member */
    long visits, budget;
} rsearch_t;

static const cs__ring_arc_t *arc(const cs__ring_arcs_t *g, int a, int b)
{
    return &g->arc[a * g->n + b];
}

static int arc_free(const rsearch_t *s, const cs__ring_arc_t *x)
{
    if (!x->ok)
        return 0;
    for (int i = 0; i < x->nlinks; i++)
        if (s->used[x->link[i]] >= s->cap[x->link[i]])
            return 0;
    return 1;
}

/* Take (v 1) or give back (v 0) the arc's links. */
static void arc_mark(rsearch_t *s, const cs__ring_arc_t *x, int v)
{
    for (int i = 0; i < x->nlinks; i++)
        s->used[x->link[i]] += v ? 1 : -1;
}

static int ring(rsearch_t *s, int j, int minfirst);

/* Ring j is complete in path: keep it and look for ring j + 1. */
static int next_ring(rsearch_t *s, int j, const int *path)
{
    int n = s->g->n;
    memcpy(s->rings[j], path, sizeof(int) * (size_t)n);
    if (j + 1 == s->target)
        return 1;
    /* the reverse first, when its links are free */
    int ok = j % 2 == 0, rev[CS__RING_MAX] = {0};
    for (int i = 0; i < n; i++)
        rev[i] = s->rings[j][(n - i) % n];
    for (int i = 0; i < n && ok; i++) {
        const cs__ring_arc_t *x = arc(s->g, rev[i], rev[(i + 1) % n]);
        ok = arc_free(s, x);
        if (ok)
            arc_mark(s, x, 1);
        else
            for (int k = 0; k < i; k++)
                arc_mark(s, arc(s->g, rev[k], rev[(k + 1) % n]), 0);
    }
    if (ok && rev[1] >= s->rings[j][1] + !s->multi) {
        if (next_ring(s, j + 1, rev))
            return 1;
    }
    if (ok)
        for (int i = 0; i < n; i++)
            arc_mark(s, arc(s->g, rev[i], rev[(i + 1) % n]), 0);
    return ring(s, j + 1, s->rings[j][1] + !s->multi);
}

/* Extend ring j at depth d (path[0..d) placed, inpath their flags). */
static int extend(rsearch_t *s, int j, int d, int minfirst, int *path, int *inpath)
{
    int n = s->g->n;
    if (++s->visits > s->budget)
        return 0;
    int a = path[d - 1];
    if (d == n) {
        const cs__ring_arc_t *x = arc(s->g, a, path[0]);
        if (!arc_free(s, x))
            return 0;
        arc_mark(s, x, 1);
        if (next_ring(s, j, path))
            return 1;
        arc_mark(s, x, 0);
        return 0;
    }
    for (int i = 0; i < s->ncand[a]; i++) {
        int b = s->cand[a][i];
        if (inpath[b] || (d == 1 && b < minfirst))
            continue;
        const cs__ring_arc_t *x = arc(s->g, a, b);
        if (!arc_free(s, x))
            continue;
        arc_mark(s, x, 1);
        inpath[b] = 1;
        path[d] = b;
        int r = extend(s, j, d + 1, minfirst, path, inpath);
        inpath[b] = 0;
        if (r)
            return 1;
        arc_mark(s, x, 0);
        if (s->visits > s->budget)
            return 0;
    }
    return 0;
}

static int ring(rsearch_t *s, int j, int minfirst)
{
    int path[CS__RING_MAX] = {0}, inpath[CS__RING_MAX] = {0};
    inpath[0] = 1;
    return extend(s, j, 1, minfirst, path, inpath);
}

static int cmp_hop(const cs__ring_arcs_t *g, int a, int b, int c)
{
    const cs__ring_arc_t *x = arc(g, a, b), *y = arc(g, a, c);
    if (x->nlinks != y->nlinks)
        return x->nlinks - y->nlinks;
    if (x->lat != y->lat)
        return x->lat < y->lat ? -1 : 1;
    return b - c;
}

int cs__planner_rings(const cs__ring_arcs_t *g, const unsigned char *cap, int nlinks,
                      int (*rings)[CS__RING_MAX], int max_rings, int *upper)
{
    int n = g->n;
    *upper = 0;
    if (n < 2 || n > CS__RING_MAX)
        return 0;
    rsearch_t *s = calloc(1, sizeof(*s));
    unsigned char *used = calloc((size_t)nlinks + 1, 1);
    int *firsts = malloc(sizeof(int) * (size_t)(2 * n + 2));
    if (!s || !used || !firsts) {
        free(s), free(used), free(firsts);
        return -1;
    }
    s->g = g;
    s->used = used;
    s->cap = cap;
    for (int i = 0; i < nlinks; i++)
        s->multi |= cap[i] > 1;
    s->rings = rings;
    /* candidates per member; the bound: distinct first links out, last in */
    int ub = max_rings;
    for (int a = 0; a < n; a++) {
        int nf = 0, nl = 0;
        for (int b = 0; b < n; b++) {
            if (b == a || !arc(g, a, b)->ok)
                continue;
            int k = s->ncand[a]++;
            s->cand[a][k] = b;
            for (; k > 0 && cmp_hop(g, a, b, s->cand[a][k - 1]) < 0; k--)
                s->cand[a][k] = s->cand[a][k - 1], s->cand[a][k - 1] = b;
            int f = arc(g, a, b)->link[0], i;
            for (i = 0; i < nf && firsts[i] != f; i++)
                ;
            if (i == nf)
                firsts[nf++] = f;
        }
        for (int b = 0; b < n; b++) {
            const cs__ring_arc_t *x = arc(g, b, a);
            if (b == a || !x->ok)
                continue;
            int l = x->link[x->nlinks - 1], i;
            for (i = 0; i < nl && firsts[n + 1 + i] != l; i++)
                ;
            if (i == nl)
                firsts[n + 1 + nl++] = l;
        }
        int uo = 0, ui = 0;
        for (int i = 0; i < nf; i++)
            uo += cap[firsts[i]];
        for (int i = 0; i < nl; i++)
            ui += cap[firsts[n + 1 + i]];
        if (uo < ub)
            ub = uo;
        if (ui < ub)
            ub = ui;
    }
    if (ub > max_rings)
        ub = max_rings;
    *upper = ub;
    int found = 0;
    for (int t = ub; t >= 1 && !found; t--) {
        memset(used, 0, (size_t)nlinks + 1);
        s->target = t;
        s->visits = 0;
        s->budget = VISITS_PER_TRY;
        if (ring(s, 0, 0))
            found = t;
    }
    free(firsts);
    free(used);
    free(s);
    return found;
}
