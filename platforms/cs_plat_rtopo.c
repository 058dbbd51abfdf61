/*
 * cs_plat_rtopo.c - topology figures of a rail-optimized fabric
 * (cs__rail_t, cs_plat_rail.c), the counterpart of cs_plat_topo.c for the
 * node-template presets.
 *
 * Graph (undirected, capacities in bytes/s per direction, as there):
 * vertices GPU, its NIC (hca), the domain's switch (bundles) or none
 * (mesh), leaves, and above them
 *   lanes (oversub 1): per GPU a leaf port and an uplink vertex, edges
 *     hca -nic- port -(crossbar, unbounded)- leaf, port -lane- up -spine
 *     port- spine;
 *   shared: per leaf an uplink vertex, edges hca -nic- leaf -uplink- up
 *     -core (never limits)- spine;
 *   one domain: hca -nic- leaf only.
 * A route's links are the edges of its path: a cross-leaf route has 8
 * (pcie, nic, leaf, spine, spine, leaf, nic, pcie; in the shared form the
 * core twice, as the route crosses both its halves).
 *
 *   diameter_hops  the most edges on a shortest path between two GPUs that
 *                  passes no other GPU (routes never cross a GPU): BFS that
 *                  does not go on from a GPU, from the GPUs of the first and
 *                  of the last domain (every domain alike but the last SU).
 *   bisection_bw   max-flow (igraph) from the first half of the GPUs to the
 *                  second half; a flow may cross a GPU here, which gives no
 *                  more than the routes do: every GPU's share of the cut is
 *                  its own links.
 */
#include <igraph.h>
#include <stdlib.h>
#include <string.h>

#include "cs_plat_model.h"

typedef struct {
    int64_t *a, *b; /* edge ends */
    double *cap;
    int64_t n, cap_n;
} cs__el_t;

static void cs__el_add(cs__el_t *e, int64_t a, int64_t b, double cap)
{
    if (e->n < e->cap_n) {
        e->a[e->n] = a;
        e->b[e->n] = b;
        e->cap[e->n] = cap;
    }
    e->n++;
}

/* Diameter (see the top) over the nv vertices of edges e, GPUs 0..ngpu-1. */
static int cs__diameter(const cs__el_t *e, int64_t nv, int64_t ngpu, const int64_t *src,
                        int64_t nsrc, int *out)
{
    int64_t *deg = calloc((size_t)nv + 1, sizeof(int64_t));
    int64_t *adj = malloc(sizeof(int64_t) * (size_t)(2 * e->n + 1));
    int64_t *dist = malloc(sizeof(int64_t) * (size_t)nv), *q = malloc(sizeof(int64_t) * (size_t)nv);
    int st = deg && adj && dist && q ? CS_OK : CS_ERR_NOMEM;
    int best = 0;
    for (int64_t i = 0; st == CS_OK && i < e->n; i++)
        deg[e->a[i] + 1]++, deg[e->b[i] + 1]++;
    for (int64_t v = 0; st == CS_OK && v < nv; v++)
        deg[v + 1] += deg[v];
    for (int64_t i = 0; st == CS_OK && i < e->n; i++) { /* fill, then restore the offsets */
        adj[deg[e->a[i]]++] = e->b[i];
        adj[deg[e->b[i]]++] = e->a[i];
    }
    for (int64_t v = nv; st == CS_OK && v > 0; v--)
        deg[v] = deg[v - 1];
    if (st == CS_OK)
        deg[0] = 0;
    for (int64_t s = 0; st == CS_OK && s < nsrc; s++) {
        for (int64_t v = 0; v < nv; v++)
            dist[v] = -1;
        int64_t h = 0, t = 0;
        dist[src[s]] = 0;
        q[t++] = src[s];
        while (h < t) {
            int64_t v = q[h++];
            if (v < ngpu && v != src[s])
                continue; /* a GPU ends a route */
            for (int64_t k = deg[v]; k < deg[v + 1]; k++)
                if (dist[adj[k]] < 0)
                    dist[adj[k]] = dist[v] + 1, q[t++] = adj[k];
        }
        for (int64_t g = 0; g < ngpu; g++)
            if (dist[g] > best)
                best = (int)dist[g];
    }
    free(deg);
    free(adj);
    free(dist);
    free(q);
    *out = best;
    return st;
}

/* Max-flow from src to snk over edges e (nv vertices), bytes/s. */
static int cs__maxflow(const cs__el_t *e, int64_t nv, int64_t src, int64_t snk, double *out,
                       cs_err_t *err)
{
    igraph_vector_int_t ev;
    igraph_vector_t cv;
    igraph_t graph;
    igraph_real_t flow = 0;
    int st = CS_OK;
    if (igraph_vector_int_init(&ev, 2 * e->n) != IGRAPH_SUCCESS)
        return cs_err_set(err, CS_ERR_NOMEM, "topology: out of memory");
    if (igraph_vector_init(&cv, e->n) != IGRAPH_SUCCESS) {
        st = cs_err_set(err, CS_ERR_NOMEM, "topology: out of memory");
        goto free_ev;
    }
    for (int64_t i = 0; i < e->n; i++) {
        VECTOR(ev)[2 * i] = e->a[i];
        VECTOR(ev)[2 * i + 1] = e->b[i];
        VECTOR(cv)[i] = e->cap[i] / 1e9; /* GB/s keeps the numbers moderate */
    }
    if (igraph_create(&graph, &ev, (igraph_integer_t)nv, IGRAPH_UNDIRECTED) != IGRAPH_SUCCESS) {
        st = cs_err_set(err, CS_ERR_NOMEM, "topology: igraph_create failed");
        goto free_cv;
    }
    if (igraph_maxflow_value(&graph, &flow, (igraph_integer_t)src, (igraph_integer_t)snk, &cv,
                             NULL) != IGRAPH_SUCCESS)
        st = cs_err_set(err, CS_ERR_INTERNAL, "topology: igraph_maxflow_value failed");
    else
        *out = flow * 1e9;
    igraph_destroy(&graph);
free_cv:
    igraph_vector_destroy(&cv);
free_ev:
    igraph_vector_int_destroy(&ev);
    return st;
}

int cs__rail_topo(const cs__model_t *m, cs_topo_figures_t *fig, cs_err_t *err)
{
    const cs__rail_t *r = &m->rail;
    int64_t D = r->domains, K = r->gph, per = (int64_t)r->hpd * K, G = D * per;
    int64_t nsu = (D + r->su - 1) / r->su, nleaf = nsu * K;
    int lanes = cs__model_lanes(m) && D > 1, shared = !cs__model_lanes(m) && D > 1;
    /* vertices: GPUs, hcas, switches, leaves, [ports, ups | ups], spine */
    int64_t hca0 = G, sw0 = 2 * G, leaf0 = sw0 + (r->mesh ? 0 : D), port0 = leaf0 + nleaf;
    int64_t up0 = port0 + (lanes ? G : 0), spine = up0 + (lanes ? G : shared ? nleaf : 0);
    int64_t nv = spine + (D > 1), src = nv, snk = nv + 1;
    double big = 1e21;
    cs__el_t e = {0};
    e.cap_n = D * (r->mesh ? per * (per - 1) / 2 : per) + G * (lanes ? 5 : 2) + (shared ? 2 * nleaf : 0) +
              G;
    e.a = malloc(sizeof(int64_t) * (size_t)e.cap_n);
    e.b = malloc(sizeof(int64_t) * (size_t)e.cap_n);
    e.cap = malloc(sizeof(double) * (size_t)e.cap_n);
    int64_t *from = malloc(sizeof(int64_t) * (size_t)(2 * per));
    int st = e.a && e.b && e.cap && from ? CS_OK : cs_err_set(err, CS_ERR_NOMEM, "topology: out of "
                                                                                 "memory");
    for (int64_t g = 0; st == CS_OK && g < G; g++) {
        int64_t d = g / per, k = g % K, leaf = leaf0 + (d / r->su) * K + k;
        if (!r->mesh)
            cs__el_add(&e, g, sw0 + d, r->intra_bw);
        for (int64_t c = g + 1; r->mesh && c < (d + 1) * per; c++)
            cs__el_add(&e, g, c, r->intra_bw);
        cs__el_add(&e, g, hca0 + g, r->pcie_bw);
        if (!lanes) {
            cs__el_add(&e, hca0 + g, leaf, m->nic_bw);
            continue;
        }
        cs__el_add(&e, hca0 + g, port0 + g, m->nic_bw);
        cs__el_add(&e, port0 + g, leaf, big);
        cs__el_add(&e, port0 + g, up0 + g, m->nic_bw);
        cs__el_add(&e, up0 + g, spine, m->nic_bw);
    }
    for (int64_t l = 0; st == CS_OK && shared && l < nleaf; l++) {
        int64_t s = l / K, left = D - s * r->su;
        double upbw = (double)((left < r->su ? left : r->su) * r->hpd) * m->nic_bw / m->oversub;
        cs__el_add(&e, leaf0 + l, up0 + l, upbw);
        cs__el_add(&e, up0 + l, spine, big);
    }
    int64_t nedges = e.n;
    for (int64_t g = 0; st == CS_OK && g < G; g++)
        cs__el_add(&e, g < G / 2 ? src : snk, g, big);
    if (st == CS_OK && e.n > e.cap_n)
        st = cs_err_set(err, CS_ERR_INTERNAL, "topology: %lld edges, %lld counted",
                        (long long)e.n, (long long)e.cap_n);
    int64_t nfrom = 0;
    for (int64_t k = 0; st == CS_OK && k < per; k++) {
        from[nfrom++] = k;
        if (D > 1)
            from[nfrom++] = (D - 1) * per + k;
    }
    int diam = 0;
    cs__el_t fabric = e; /* without the super source and sink edges */
    fabric.n = nedges;
    if (st == CS_OK && cs__diameter(&fabric, nv, G, from, nfrom, &diam) != CS_OK)
        st = cs_err_set(err, CS_ERR_NOMEM, "topology: out of memory");
    double flow = 0;
    if (st == CS_OK && G >= 2)
        st = cs__maxflow(&e, nv + 2, src, snk, &flow, err);
    if (st == CS_OK) {
        fig->nvertices = (uint64_t)nv;
        fig->nedges = (uint64_t)nedges;
        fig->diameter_hops = diam;
        fig->bisection_bw = flow;
    }
    free(e.a);
    free(e.b);
    free(e.cap);
    free(from);
    return st;
}
