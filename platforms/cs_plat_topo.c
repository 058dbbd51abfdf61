/*
 * cs_plat_topo.c - topology figures of a platform, computed with igraph
 * (0.10 API) on an undirected graph built from the platform's model.
 *
 * Vertices: every node element (GPUs, CPUs, PCIe switches, the adapter
 * rails), one leaf switch per rack, and
 *   lanes (non-blocking, several racks): one leaf port per node rail;
 *     edges hca -nic- port and port - leaf (the switch crossbar, no link:
 *     unbounded); then with rail zones (cs__model_rail_zones) one uplink
 *     vertex per node rail and one spine vertex, edges port -leaf lane-
 *     uplink -spine port- spine; otherwise one uplink vertex per rack,
 *     edges port -leaf lane- rack uplink and one spine edge per pair of
 *     racks (uplink - uplink);
 *   shared uplinks: one spine vertex; edges hca -nic- leaf per rail and
 *     leaf -uplink- spine per rack (the spine core link is not an edge: it
 *     is sized never to limit).
 * A cross-rack path has as many edges as its route has links.  Capacities
 * are bandwidths per direction; igraph's max-flow treats an undirected
 * edge as two directed edges of that capacity, which is exactly a
 * split-duplex link.
 *
 *   diameter_hops  the largest hop distance between two devices.  All full
 *                  racks are alike and all nodes of a rack are alike, so
 *                  BFS from the devices of node 0 and of the last node
 *                  (the last rack may be partial) to all devices gives the
 *                  exact value in O(gpus_per_node * E).
 *   bisection_bw   max-flow from a super source joined to the first half of
 *                  the devices (document order) to a super sink joined to
 *                  the second half, bytes/s.
 * Both are exact and take well under a second at 4608 Summit nodes.
 * XML files (hand-written or exported, edited or not) are analysed from
 * the routes SimGrid computes between the ranks' hosts instead
 * (cs_plat_sg.cpp).
 */
#include <igraph.h>
#include <stdlib.h>
#include <string.h>

#include "cs_plat_file.h"
#include "cs_plat_model.h"

typedef struct {
    igraph_vector_int_t edges;
    igraph_vector_t cap;
    int64_t ne;
} cs__gb_t;

static void cs__edge(cs__gb_t *g, int64_t a, int64_t b, double cap)
{
    VECTOR(g->edges)[2 * g->ne] = a;
    VECTOR(g->edges)[2 * g->ne + 1] = b;
    VECTOR(g->cap)[g->ne] = cap / 1e9; /* GB/s keeps the numbers moderate */
    g->ne++;
}

static int cs__topo(const cs__model_t *m, cs_topo_figures_t *fig, cs_err_t *err)
{
    int64_t nodes = m->nodes, ne_ = m->nelem, racks = cs__model_racks(m), rails = m->rails;
    int64_t gpn = m->ngpus, ndev = gpn * nodes;
    int lanes = cs__model_lanes(m) && racks > 1, group[CS__NODE_MAX_ELEM];
    int rz = cs__model_rail_zones(m, group);
    /* vertices: node elements, [ports], leaves, uplinks and/or the spine */
    int64_t port0 = nodes * ne_, leaf0 = port0 + (lanes ? nodes * rails : 0);
    int64_t nup = rz ? nodes * rails : lanes ? racks : 0;
    int64_t up0 = leaf0 + racks, spine = up0 + nup; /* shared: spine = up0 */
    int64_t nfabric = lanes && !rz ? up0 + racks : spine + 1;
    int64_t src = nfabric, snk = nfabric + 1, nv = snk + 1;
    int64_t nedges = nodes * m->nlinks + nodes * rails * (rz ? 4 : lanes ? 3 : 1) +
                     (rz ? 0 : lanes ? racks * (racks - 1) / 2 : racks);
    int64_t ntot = nedges + ndev;
    int st = CS_OK;
    cs__gb_t g = {.ne = 0};
    igraph_t graph;
    igraph_matrix_t dist;
    igraph_vector_int_t from, to;
    int have_graph = 0, have_dist = 0;
    double big = 1e12; /* GB/s: never the bottleneck */
    if (igraph_vector_int_init(&g.edges, 2 * ntot) != IGRAPH_SUCCESS)
        return cs_err_set(err, CS_ERR_NOMEM, "topology: out of memory");
    if (igraph_vector_init(&g.cap, ntot) != IGRAPH_SUCCESS) {
        st = cs_err_set(err, CS_ERR_NOMEM, "topology: out of memory");
        goto free_edges;
    }
    /* device index -> vertex: node n, GPU slot k (GPUs are the first
     * elements in document order among hosts; find their element ids) */
    int gpu_el[CS__NODE_MAX_ELEM], k = 0;
    for (int e = 0; e < m->nelem; e++)
        if (m->elem[e].kind == CS__EL_GPU)
            gpu_el[k++] = e;
    for (int64_t n = 0; n < nodes; n++) {
        int64_t leaf = leaf0 + n / m->npr;
        for (int l = 0; l < m->nlinks; l++)
            cs__edge(&g, n * ne_ + m->link[l].a, n * ne_ + m->link[l].b, m->link[l].bw);
        for (int64_t r = 0; r < rails; r++) {
            int64_t hca = n * ne_ + m->rail_el[r];
            if (!lanes) {
                cs__edge(&g, hca, leaf, m->nic_bw);
                continue;
            }
            int64_t port = port0 + n * rails + r;
            cs__edge(&g, hca, port, m->nic_bw);
            cs__edge(&g, port, leaf, big * 1e9);
            if (!rz) {
                cs__edge(&g, port, up0 + n / m->npr, m->nic_bw);
                continue;
            }
            cs__edge(&g, port, up0 + n * rails + r, m->nic_bw);
            cs__edge(&g, up0 + n * rails + r, spine, m->nic_bw);
        }
    }
    for (int64_t r = 0; r < racks; r++) {
        if (!lanes)
            cs__edge(&g, leaf0 + r, spine, cs__model_uplink_bw(m, (int)r));
        for (int64_t q = r + 1; lanes && !rz && q < racks; q++)
            cs__edge(&g, up0 + r, up0 + q, cs__model_pair_bw(m, (int)r, (int)q));
    }
    for (int64_t d = 0; d < ndev; d++)
        cs__edge(&g, (d < ndev / 2 ? src : snk), (d / gpn) * ne_ + gpu_el[d % gpn], big * 1e9);
    if (igraph_create(&graph, &g.edges, (igraph_integer_t)nv, IGRAPH_UNDIRECTED) !=
        IGRAPH_SUCCESS) {
        st = cs_err_set(err, CS_ERR_NOMEM, "topology: igraph_create failed");
        goto free_cap;
    }
    have_graph = 1;
    igraph_real_t flow = 0;
    if (ndev >= 2 &&
        igraph_maxflow_value(&graph, &flow, (igraph_integer_t)src, (igraph_integer_t)snk, &g.cap,
                             NULL) != IGRAPH_SUCCESS) {
        st = cs_err_set(err, CS_ERR_INTERNAL, "topology: igraph_maxflow_value failed");
        goto free_graph;
    }
    /* diameter: remove the super source/sink edges from BFS by using a
     * graph without them (rebuild with the first nedges edges only). */
    igraph_destroy(&graph);
    have_graph = 0;
    igraph_vector_int_resize(&g.edges, 2 * nedges);
    if (igraph_create(&graph, &g.edges, (igraph_integer_t)nfabric, IGRAPH_UNDIRECTED) !=
        IGRAPH_SUCCESS) {
        st = cs_err_set(err, CS_ERR_NOMEM, "topology: igraph_create failed");
        goto free_cap;
    }
    have_graph = 1;
    if (igraph_vector_int_init(&from, 0) != IGRAPH_SUCCESS) {
        st = cs_err_set(err, CS_ERR_NOMEM, "topology: out of memory");
        goto free_graph;
    }
    if (igraph_vector_int_init(&to, ndev) != IGRAPH_SUCCESS) {
        st = cs_err_set(err, CS_ERR_NOMEM, "topology: out of memory");
        goto free_from;
    }
    for (int64_t d = 0; d < ndev; d++)
        VECTOR(to)[d] = (d / gpn) * ne_ + gpu_el[d % gpn];
    for (int j = 0; j < gpn; j++) {
        igraph_vector_int_push_back(&from, gpu_el[j]);
        if (nodes > 1)
            igraph_vector_int_push_back(&from, (nodes - 1) * ne_ + gpu_el[j]);
    }
    if (igraph_matrix_init(&dist, 0, 0) != IGRAPH_SUCCESS) {
        st = cs_err_set(err, CS_ERR_NOMEM, "topology: out of memory");
        goto free_to;
    }
    have_dist = 1;
    if (igraph_distances(&graph, &dist, igraph_vss_vector(&from), igraph_vss_vector(&to),
                         IGRAPH_ALL) != IGRAPH_SUCCESS) {
        st = cs_err_set(err, CS_ERR_INTERNAL, "topology: igraph_distances failed");
        goto free_dist;
    }
    double diam = 0;
    for (igraph_integer_t i = 0; i < igraph_matrix_nrow(&dist); i++)
        for (igraph_integer_t j = 0; j < igraph_matrix_ncol(&dist); j++)
            if (MATRIX(dist, i, j) > diam && MATRIX(dist, i, j) < IGRAPH_INFINITY)
                diam = MATRIX(dist, i, j);
    fig->nvertices = (uint64_t)nfabric;
    fig->nedges = (uint64_t)nedges;
    fig->diameter_hops = (int)diam;
    fig->bisection_bw = flow * 1e9;
free_dist:
    if (have_dist)
        igraph_matrix_destroy(&dist);
free_to:
    igraph_vector_int_destroy(&to);
free_from:
    igraph_vector_int_destroy(&from);
free_graph:
    if (have_graph)
        igraph_destroy(&graph);
free_cap:
    igraph_vector_destroy(&g.cap);
free_edges:
    igraph_vector_int_destroy(&g.edges);
    return st;
}

int cs_platform_topology(const cs_platform_t *p, cs_topo_figures_t *fig, cs_err_t *err)
{
    if (p == NULL || fig == NULL)
        return cs_err_set(err, CS_ERR_INVAL, "topology: no platform");
    if (p->have_topo) {
        *fig = p->topo;
        return CS_OK;
    }
    if (p->is_file) {
        /* the figures are kept in the platform once computed (the one
         * field a const platform may gain) */
        cs_platform_t *w = (cs_platform_t *)p;
        int st = cs__plat_sg_probe(w, p->spec, 1, err);
        if (st == CS_OK && !p->have_topo)
            st = cs_err_set(err, CS_ERR_INTERNAL, "%s: no topology figures came back", p->spec);
        if (st == CS_OK)
            *fig = p->topo;
        return st;
    }
    cs__model_t *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    int st = cs__platform_model(p, m, err);
    if (st == CS_OK) {
        /* igraph's default error handler aborts: library code must not. */
        igraph_error_handler_t *old = igraph_set_error_handler(igraph_error_handler_ignore);
        cs_topo_figures_t f;
        memset(&f, 0, sizeof(f));
        st = m->is_rail ? cs__rail_topo(m, &f, err) : cs__topo(m, &f, err);
        igraph_set_error_handler(old);
        if (st == CS_OK)
            *fig = f;
    }
    free(m);
    return st;
}
