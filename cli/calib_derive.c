/*
 * calib_derive.c - the figures of the calibrated platform
 * (platforms/cs_plat_calib.h) from the fits of `collstep calibrate`
 * (calib_int.h): per pair of nodes the large-message piece; alpha_AB =
 * lat(A) + lat(B) (least squares over the pairs; half each with two
 * nodes), bw(A) = the best pair of A (a pair runs at its slower node's
 * rate); the intra-node link from the intra-node pairs; rank ports where
 * every rank busy moved clearly less than its links allow; duplex ratios
 * (per pair of ranks on one connection, per node with different peers,
 * per node exchanging with its partner).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_int.h"

/* A rank port only where every rank busy moved clearly less than its links
 * allow: below 3/4 of it.  A rank that sends and receives at once loses
 * 10-20 % to its node's two directions (the duplex links below carry
 * that) and to the noise of a loaded machine; ports written for it slowed
 * the predictions through them by 26 to 630 % (the emulated cluster at
 * load averages of 20-30).  What ports are for, a rank's CPU share where
 * ranks outnumber cores, is far below. */
#define CALIB_CLEAR 0.75
/* A flow of every rank busy is bounded by a node's NIC when that NIC's
 * share is within this factor of the flow's smallest share. */
#define CALIB_BOUND 1.05

/* Per node, rho of its two directions at once:
 *   node_rho: sending to one node while receiving from another, from every
 *     rank busy (ring flows r-1 -> r; with three nodes or more, since with
 *     two the ring is an exchange): each inter-node flow's rate over its
 *     share of the NICs it crosses, charged to the node(s) whose NIC share
 *     bounds it (both within CALIB_BOUND: a slow node's flows are bounded
 *     by it, not by the fast node at the other end), flows of ranks with a
 *     port (CPU-bound) left out; the smallest ratio charged to a node, and
 *     the fastest pair's measurement where it had only one node's two
 *     directions busy;
 *   xch_rho: exchanging with its partner (both ways, same ranks), the
 *     slower direction over one way with as many ranks (nic_agg), and the
 *     fastest pair's measurement where it was its two nodes exchanging.
 * 0: full duplex (>= CALIB_DUPLEX) or not measured (cs_plat_calib_rho). */
static void duplex_rhos(cal_t *c, const cs_plat_calib_node_t *nodes, uint64_t top)
{
    int H = c->l.nnodes, N = c->l.nranks;
    int *nout = calloc((size_t)H, sizeof(int)), *nin = calloc((size_t)H, sizeof(int));
    double *worst = malloc(sizeof(double) * (size_t)H);
    c->node_rho = calloc((size_t)H, sizeof(double));
    c->xch_rho = calloc((size_t)H, sizeof(double));
    if (!nout || !nin || !worst || !c->node_rho || !c->xch_rho) {
        free(nout), free(nin), free(worst);
        free(c->node_rho), free(c->xch_rho);
        c->node_rho = c->xch_rho = NULL;
        return;
    }
    for (int h = 0; h < H; h++)
        worst[h] = 1;
    for (int r = 0; r < N && c->load_fit; r++) {
        int A = c->l.node_of[(r + N - 1) % N], B = c->l.node_of[r];
        if (A != B)
            nout[A]++, nin[B]++;
    }
    for (int r = 0; r < N && c->load_fit && H > 2; r++) {
        int from = (r + N - 1) % N, A = c->l.node_of[from], B = c->l.node_of[r];
        const cs_fit_line_t *l = cs_fit_piece_for(&c->load_fit[r], top);
        /* a rank with a port is bound by its CPU share, not by its node */
        int cpu = c->port_bw && (c->port_bw[r] > 0 || c->port_bw[from] > 0);
        if (A == B || cpu || !(l->beta > 0) || !isfinite(l->beta))
            continue;
        double sa = nodes[A].bw / nout[A], sb = nodes[B].bw / nin[B], share = fmin(sa, sb);
        double ratio = l->beta / share;
        if (sa <= CALIB_BOUND * share && ratio < worst[A])
            worst[A] = ratio;
        if (sb <= CALIB_BOUND * share && ratio < worst[B])
            worst[B] = ratio;
    }
    /* the fastest pair's own measurement: A -> B with B -> A over other
     * ranks is A and B exchanging (both nodes' exchange); A -> B with C -> A
     * has only A's two directions busy (A's, with different peers) */
    double xw[1024];
    for (int h = 0; h < H && h < 1024; h++)
        xw[h] = 1;
    if (c->duplex_c >= 0 && c->duplex_one > 0 && isfinite(c->duplex_node)) {
        double rn = c->duplex_node / c->duplex_one;
        int A = c->l.node_of[c->duplex_a], B = c->l.node_of[c->duplex_b];
        if (c->l.node_of[c->duplex_c] == B && A < 1024 && B < 1024)
            xw[A] = fmin(xw[A], rn), xw[B] = fmin(xw[B], rn);
        else
            worst[A] = fmin(worst[A], rn);
    }
    for (int h = 0; h < H; h++) {
        c->node_rho[h] = cs_plat_calib_rho(worst[h]);
        double one = c->nic_agg ? c->nic_agg[h] : 0;
        double x = c->xch_out && c->xch_in ? fmin(c->xch_out[h], c->xch_in[h]) : 0;
        double r = one > 0 && isfinite(one) && x > 0 && isfinite(x) ? x / one : 1;
        c->xch_rho[h] = cs_plat_calib_rho(h < 1024 ? fmin(r, xw[h]) : r);
    }
    free(nout);
    free(nin);
    free(worst);
}

void calib_derive(cal_t *c, cs_plat_calib_t *p, cs_plat_calib_node_t *nodes)
{
    int H = c->l.nnodes;
    uint64_t top = c->sizes[c->nsizes - 1];
    double ia[CS_CLI_MAX_SIZES * 16], ib[CS_CLI_MAX_SIZES * 16];
    int ni = 0;
    double S[1024] = {0}, T = 0;
    for (int s = 0; s < c->nser; s++) {
        const series_t *x = &c->ser[s];
        const cs_fit_line_t *l = cs_fit_piece_for(&x->fit, top);
        /* the large piece's intercept, unless it came out negative (a
         * shaper's burst credit, or noise): then the small messages' alpha,
         * the delay itself */
        double alpha = l->alpha > 0 ? l->alpha : x->fit.piece[0].alpha;
        if (x->na == x->nb) {
            if (ni < (int)(sizeof(ia) / sizeof(ia[0])))
                ia[ni] = alpha, ib[ni++] = l->beta;
            continue;
        }
        if (l->beta > nodes[x->na].bw)
            nodes[x->na].bw = l->beta;
        if (l->beta > nodes[x->nb].bw)
            nodes[x->nb].bw = l->beta;
        if (x->na < 1024 && x->nb < 1024)
            S[x->na] += alpha, S[x->nb] += alpha;
        T += alpha;
    }
    for (int h = 0; h < H; h++) {
        double lat = H == 2 ? T / 2 : H > 2 && h < 1024 ? (S[h] - T / (H - 1)) / (H - 2) : 0;
        nodes[h].lat = lat > 0 ? lat : 0;
        snprintf(nodes[h].name, sizeof(nodes[h].name), "%s", c->l.nodes[h].name);
        if (!(nodes[h].bw > 0) || isinf(nodes[h].bw))
            nodes[h].bw = 1e12;
    }
    memset(p, 0, sizeof(*p));
    p->nranks = c->l.nranks, p->nnodes = H, p->node_of = c->l.node_of, p->nodes = nodes;
    p->intra_lat = ni ? cs_fit_median(ia, ni) : 0;
    p->intra_bw = ni ? cs_fit_median(ib, ni) : 1e12;
    if (!(p->intra_bw > 0) || isinf(p->intra_bw)) /* no slope seen (tiny sizes only) */
        p->intra_bw = 1e12;
    /* every rank busy (loaded ring flows, each rank sending and receiving
     * at once): a rank's port moves 2 x the flow rate (beta of its own
     * series, large piece); its latency is what a message costs beyond
     * the lone pair's alpha of its class, split between the two ports a
     * message crosses */
    double ex[1024];
    int nx = 0;
    double *port = c->port_bw;
    for (int r = 0; c->load_fit && port && r < c->l.nranks; r++) {
        int from = (r + c->l.nranks - 1) % c->l.nranks, cls = c->l.node_of[from] != c->l.node_of[r];
        const cs_fit_line_t *l = cs_fit_piece_for(&c->load_fit[r], top);
        /* a port only where the rank moved less than the links allow: its
         * flows in (from -> r) and out (r -> to) are bounded by the NICs
         * they cross (none inside a node) */
        int to = (r + 1) % c->l.nranks;
        double lim = INFINITY;
        if (c->l.node_of[from] != c->l.node_of[r]) {
            lim = fmin(lim, nodes[c->l.node_of[from]].bw);
            lim = fmin(lim, nodes[c->l.node_of[r]].bw);
        }
        if (c->l.node_of[to] != c->l.node_of[r]) {
            lim = fmin(lim, nodes[c->l.node_of[to]].bw);
            lim = fmin(lim, nodes[c->l.node_of[r]].bw);
        }
        double room = isinf(lim) ? p->intra_bw : lim;
        int limited = l->beta > 0 && !isinf(l->beta) && l->beta < CALIB_CLEAR * room;
        port[r] = limited ? 2 * l->beta : 0;
        /* the latency: a small message (up to 64 B) every rank busy, less
         * the lone pair's alpha of its class (the large piece's intercept
         * of a loaded flow is noise, not a delay) */
        double small[CS_CLI_MAX_SIZES];
        int ns = 0;
        for (int k = 0; k < c->nsizes && c->sizes[k] <= 64; k++)
            small[ns++] = c->load_t[(size_t)r * c->nsizes + k];
        double la = ns ? cs_fit_median(small, ns) : 0;
        double base = cls ? nodes[c->l.node_of[from]].lat + nodes[c->l.node_of[r]].lat : p->intra_lat;
        if (nx < 1024)
            ex[nx++] = la > base ? la - base : 0;
    }
    if (port) {
        p->port_bw = port;
        p->port_lat = nx ? cs_fit_median(ex, nx) / 2 : 0;
    }
    for (int h = 0; h < H; h++)
        p->switch_bw += nodes[h].bw;
    p->reduce_speed = c->red[cs_dtype_parse(c->o->dtype)];
    if (H > 1 && c->duplex_one > 0)
        p->pair_duplex = cs_plat_calib_rho(c->duplex_both / c->duplex_one);
    if (H > 1)
        duplex_rhos(c, nodes, top);
    p->node_duplex = c->node_rho;
    p->xch_duplex = c->xch_rho;
}
