/*
 * calib_derive.c - the fits and the figures of the calibrated platform
 * (platforms/cs_plat_calib.h) from a record (cs_calibrate_derive): per
 * pair of nodes the large-message piece; alpha_AB = lat(A) + lat(B)
 * (least squares over the pairs; half each with two nodes), bw(A) = the
 * best pair of A (a pair runs at its slower node's rate; of the pairs
 * within 5 % of it, the best-fitting line); the intra-node
 * link from the intra-node pairs; rank ports where every rank busy moved
 * clearly less than its links allow; duplex ratios (per pair of ranks on
 * one connection, per node with different peers, per node exchanging with
 * its partner); restarts per node (its exchange after an idle spell
 * against back to back).  Nothing but the record goes in: no transport, no
 * clock.
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
/* Bounds of the per-series and per-node arrays of the least squares and
 * medians (pairs and nodes beyond it are left out). */
#define CALIB_CAP 1024

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
static int duplex_rhos(const cs_calibrate_record_t *rec, cs_calibrate_derived_t *d,
                       uint64_t top, double *node_rho, double *xch_rho)
{
    const cs_calibrate_node_t *m = rec->nodes;
    const cs_plat_calib_node_t *nodes = d->plat.nodes;
    const int *node_of = rec->node_of;
    const double *port = d->plat.port_bw;
    int H = rec->nnodes, N = rec->nranks;
    int *nout = calloc((size_t)H, sizeof(int)), *nin = calloc((size_t)H, sizeof(int));
    double *worst = malloc(sizeof(double) * (size_t)H);
    if (!nout || !nin || !worst) {
        free(nout), free(nin), free(worst);
        return CS_ERR_NOMEM;
    }
    for (int h = 0; h < H; h++)
        worst[h] = 1;
    for (int r = 0; r < N; r++) {
        int A = node_of[(r + N - 1) % N], B = node_of[r];
        if (A != B)
            nout[A]++, nin[B]++;
    }
    for (int r = 0; r < N && H > 2; r++) {
        int from = (r + N - 1) % N, A = node_of[from], B = node_of[r];
        const cs_fit_line_t *l = cs_fit_piece_for(&d->loaded_fit[r], top);
        /* a rank with a port is bound by its CPU share, not by its node */
        int cpu = port[r] > 0 || port[from] > 0;
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
    double xw[CALIB_CAP];
    for (int h = 0; h < H && h < CALIB_CAP; h++)
        xw[h] = 1;
    if (rec->duplex_c >= 0 && rec->duplex_one > 0 && isfinite(rec->duplex_node)) {
        double rn = rec->duplex_node / rec->duplex_one;
        int A = node_of[rec->duplex_a], B = node_of[rec->duplex_b];
        if (node_of[rec->duplex_c] == B && A < CALIB_CAP && B < CALIB_CAP)
            xw[A] = fmin(xw[A], rn), xw[B] = fmin(xw[B], rn);
        else
            worst[A] = fmin(worst[A], rn);
    }
    for (int h = 0; h < H; h++) {
        node_rho[h] = cs_plat_calib_rho(worst[h]);
        double one = m[h].nic_all, x = fmin(m[h].xch_out, m[h].xch_in);
        double r = one > 0 && isfinite(one) && x > 0 && isfinite(x) ? x / one : 1;
        xch_rho[h] = cs_plat_calib_rho(h < CALIB_CAP ? fmin(r, xw[h]) : r);
    }
    free(nout);
    free(nin);
    free(worst);
    return CS_OK;
}

/* A cold exchange (every rank idle for CALIB_IDLE_S first) costs a
 * restart only where it took clearly longer than the exchange back to
 * back: more than this factor (the ramp of a short round trip, a few
 * milliseconds, is not one). */
#define CALIB_COLD 1.05
/* Linux's initial window (10 segments of 1448 payload bytes) and the floor
 * of its retransmission timeout (seconds): an idle connection restarts
 * after srtt + max(4 rttvar, 200 ms). */
#define CALIB_IW 14480.0
#define CALIB_RTO_MIN 0.2

/* The round trip R whose slow start from the initial window, at b bytes/s,
 * costs dt seconds more than full rate: R (log2(b R / IW) - 1), about one
 * round trip per doubling less the last (bisection; increasing in R). */
static double ramp_rtt(double dt, double b)
{
    double lo = 0, hi = 10;
    for (int i = 0; i < 60; i++) {
        double R = (lo + hi) / 2, l2 = log2(b * R / CALIB_IW) - 1;
        if (R * (l2 > 0 ? l2 : 0) < dt)
            lo = R;
        else
            hi = R;
    }
    return (lo + hi) / 2;
}

/* The idle spell after which a connection restarts: between the longest
 * of the shorter spells after which the exchange (bytes in all, tw back to
 * back) was not slower and the first after which it was (the first
 * restarting: from the 200 ms floor; none restarting: from the last to
 * CALIB_IDLE_S), the middle; not measured: `guess`. */
static double restart_idle(const cs_calibrate_node_t *n, double bytes, double tw, double guess)
{
    static const double idles[3] = CS_CALIBRATE_IDLES;
    double lo = CALIB_RTO_MIN;
    for (int j = 0; j < 3; j++) {
        if (!(n->cold_short[j] > 0))
            return guess;
        if (bytes / n->cold_short[j] > CALIB_COLD * tw)
            return (lo + idles[j]) / 2;
        lo = idles[j];
    }
    return (lo + CALIB_IDLE_S) / 2;
}

/* Restarts per node: its exchange with its partner after every rank
 * idled against back to back.  k flows each way of M bytes share the
 * pair's rate B (the slower node's), so the k restarts at once cost
 * dt = t_cold - t_warm, which k messages of M + X bytes at B / k each
 * also cost: X = dt B / k.  Charged to the node(s) that bound the pair,
 * as the exchange's duplex ratio is; the idle spell that restarts a
 * connection (TCP's retransmission timeout) from the shorter spells
 * (restart_idle), in a record without them R + 200 ms, R the round trip
 * whose slow start costs dt at B / k. */
static void restarts(const cs_calibrate_record_t *rec, cs_plat_calib_node_t *nodes)
{
    const cs_calibrate_plan_t *pl = &rec->plan;
    double M = (double)(pl->nic_bytes < pl->sizes[pl->nsizes - 1] ? pl->nic_bytes
                                                                  : pl->sizes[pl->nsizes - 1]);
    for (int h = 0; h < rec->nnodes; h++) {
        const cs_calibrate_node_t *n = &rec->nodes[h];
        int p = n->nic_peer, k = n->nic_senders;
        double warm = fmin(n->xch_out, n->xch_in), cold = fmin(n->cold_out, n->cold_in);
        if (p < 0 || k < 1 || !(warm > 0) || !(cold > 0))
            continue;
        double tw = k * M / warm, tc = k * M / cold;
        if (!(tc > CALIB_COLD * tw) || !isfinite(tc))
            continue;
        double B = fmin(nodes[h].bw, nodes[p].bw), x = (tc - tw) * B / k;
        double idle = restart_idle(n, k * M, tw, ramp_rtt(tc - tw, B / k) + CALIB_RTO_MIN);
        int who[2] = {h, p};
        for (int i = 0; i < 2; i++) {
            cs_plat_calib_node_t *nd = &nodes[who[i]];
            if (nd->bw <= CALIB_BOUND * B && x > nd->restart_bytes)
                nd->restart_bytes = x, nd->restart_idle = idle;
        }
    }
}

/* The platform's figures from the fits (d's arrays allocated). */
static int figures(const cs_calibrate_record_t *rec, cs_calibrate_derived_t *d)
{
    cs_plat_calib_t *p = &d->plat;
    cs_plat_calib_node_t *nodes = p->nodes;
    const int *node_of = rec->node_of;
    int H = rec->nnodes, N = rec->nranks, K = rec->plan.nsizes;
    const uint64_t *sizes = rec->plan.sizes;
    uint64_t top = sizes[K - 1];
    double ia[CALIB_CAP], ib[CALIB_CAP];
    int ni = 0;
    double S[CALIB_CAP] = {0}, T = 0;
    for (int s = 0; s < rec->nseries; s++) {
        const cs_calibrate_series_t *x = &rec->series[s];
        const cs_fit_piecewise_t *f = &d->series_fit[s];
        const cs_fit_line_t *l = cs_fit_piece_for(f, top);
        /* the large piece's intercept, unless it came out negative (a
         * shaper's burst credit, or noise): then the small messages' alpha,
         * the delay itself */
        double alpha = l->alpha > 0 ? l->alpha : f->piece[0].alpha;
        if (x->na == x->nb) {
            if (ni < CALIB_CAP)
                ia[ni] = alpha, ib[ni++] = l->beta;
            continue;
        }
        if (l->beta > nodes[x->na].bw)
            nodes[x->na].bw = l->beta;
        if (l->beta > nodes[x->nb].bw)
            nodes[x->nb].bw = l->beta;
        if (x->na < CALIB_CAP && x->nb < CALIB_CAP)
            S[x->na] += alpha, S[x->nb] += alpha;
        T += alpha;
    }
    /* of the pairs as fast as the best (within CALIB_BOUND: a pair runs at
     * its slower node's rate), the one whose line fits best: a load spike
     * during one pair's sweep bent its fit (rms 4 % where the others' are
     * 0.2-0.4 %) and made its slope 3 % fast, and the best pair alone
     * would have given the node that rate */
    for (int h = 0; h < H; h++) {
        double best = nodes[h].bw, rms = INFINITY;
        for (int s = rec->nintra; s < rec->nseries; s++) {
            const cs_calibrate_series_t *x = &rec->series[s];
            const cs_fit_line_t *l = cs_fit_piece_for(&d->series_fit[s], top);
            if ((x->na == h || x->nb == h) && CALIB_BOUND * l->beta >= best && l->rms_pct < rms)
                nodes[h].bw = l->beta, rms = l->rms_pct;
        }
    }
    for (int h = 0; h < H; h++) {
        double lat = H == 2 ? T / 2 : H > 2 && h < CALIB_CAP ? (S[h] - T / (H - 1)) / (H - 2) : 0;
        nodes[h].lat = lat > 0 ? lat : 0;
        snprintf(nodes[h].name, sizeof(nodes[h].name), "%s", rec->nodes[h].name);
        if (!(nodes[h].bw > 0) || isinf(nodes[h].bw))
            nodes[h].bw = 1e12;
    }
    p->nranks = N, p->nnodes = H;
    p->intra_lat = ni ? cs_fit_median(ia, ni) : 0;
    p->intra_bw = ni ? cs_fit_median(ib, ni) : 1e12;
    if (!(p->intra_bw > 0) || isinf(p->intra_bw)) /* no slope seen (tiny sizes only) */
        p->intra_bw = 1e12;
    /* every rank busy (loaded ring flows, each rank sending and receiving
     * at once): a rank's port moves 2 x the flow rate (beta of its own
     * series, large piece); its latency is what a message costs beyond
     * the lone pair's alpha of its class, split between the two ports a
     * message crosses */
    double ex[CALIB_CAP], *port = (double *)p->port_bw;
    int nx = 0;
    for (int r = 0; r < N; r++) {
        int from = (r + N - 1) % N, cls = node_of[from] != node_of[r];
        const cs_fit_line_t *l = cs_fit_piece_for(&d->loaded_fit[r], top);
        /* a port only where the rank moved less than the links allow: its
         * flows in (from -> r) and out (r -> to) are bounded by the NICs
         * they cross (none inside a node) */
        int to = (r + 1) % N;
        double lim = INFINITY;
        if (node_of[from] != node_of[r]) {
            lim = fmin(lim, nodes[node_of[from]].bw);
            lim = fmin(lim, nodes[node_of[r]].bw);
        }
        if (node_of[to] != node_of[r]) {
            lim = fmin(lim, nodes[node_of[to]].bw);
            lim = fmin(lim, nodes[node_of[r]].bw);
        }
        double room = isinf(lim) ? p->intra_bw : lim;
        int limited = l->beta > 0 && !isinf(l->beta) && l->beta < CALIB_CLEAR * room;
        port[r] = limited ? 2 * l->beta : 0;
        /* the latency: a small message (up to 64 B) every rank busy, less
         * the lone pair's alpha of its class (the large piece's intercept
         * of a loaded flow is noise, not a delay) */
        double small[CS_CALIBRATE_MAX_SIZES];
        int ns = 0;
        for (int k = 0; k < K && sizes[k] <= 64; k++)
            small[ns++] = rec->loaded[(size_t)r * K + k];
        double la = ns ? cs_fit_median(small, ns) : 0;
        double base = cls ? nodes[node_of[from]].lat + nodes[node_of[r]].lat : p->intra_lat;
        if (nx < CALIB_CAP)
            ex[nx++] = la > base ? la - base : 0;
    }
    p->port_lat = nx ? cs_fit_median(ex, nx) / 2 : 0;
    for (int h = 0; h < H; h++)
        p->switch_bw += nodes[h].bw;
    if (H > 1)
        restarts(rec, nodes);
    p->reduce_speed = rec->reduce[rec->plan.dtype];
    if (H > 1 && rec->duplex_one > 0)
        p->pair_duplex = cs_plat_calib_rho(rec->duplex_both / rec->duplex_one);
    if (H > 1) {
        double *nr = calloc((size_t)H, sizeof(double)), *xr = calloc((size_t)H, sizeof(double));
        if (!nr || !xr || duplex_rhos(rec, d, top, nr, xr) != CS_OK) {
            free(nr), free(xr);
            return CS_ERR_NOMEM;
        }
        p->node_duplex = nr, p->xch_duplex = xr;
    }
    return CS_OK;
}

/* v[0..n) finite and >= 0 */
static int rates_ok(const double *v, int n)
{
    for (int i = 0; i < n; i++)
        if (!(v[i] >= 0) || !isfinite(v[i]))
            return 0;
    return 1;
}

/* What a platform needs of a record (the fits check the times). */
static int check(const cs_calibrate_record_t *rec, cs_err_t *err)
{
    const cs_calibrate_plan_t *pl = &rec->plan;
    int N = rec->nranks, H = rec->nnodes, K = pl->nsizes;
    if (N < 2 || H < 1 || H > N)
        return cs_err_set(err, CS_ERR_INVAL, "calibration record: %d ranks on %d nodes (2 ranks "
                          "or more, on 1 to %d nodes)", N, H, N > 1 ? N : 2);
    if (K < 2 || K > CS_CALIBRATE_MAX_SIZES)
        return cs_err_set(err, CS_ERR_INVAL, "calibration record: %d size%s: a line needs 2 "
                          "sizes or more (up to %d)", K, K == 1 ? "" : "s",
                          CS_CALIBRATE_MAX_SIZES);
    for (int k = 0; k < K; k++)
        if (pl->sizes[k] < 1 || (k && pl->sizes[k] <= pl->sizes[k - 1]))
            return cs_err_set(err, CS_ERR_INVAL, "calibration record: size %d (%llu bytes): the "
                              "sizes must be ascending, from 1 byte", k,
                              (unsigned long long)pl->sizes[k]);
    if ((unsigned)pl->dtype >= CS_CALIBRATE_NDT)
        return cs_err_set(err, CS_ERR_INVAL, "calibration record: element type %d unknown",
                          (int)pl->dtype);
    int *first = malloc(sizeof(int) * (size_t)H), *count = malloc(sizeof(int) * (size_t)H);
    int st = first && count ? CS_OK : cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    for (int r = 0; r < N && st == CS_OK; r++)
        if (rec->node_of[r] < 0 || rec->node_of[r] >= H)
            st = cs_err_set(err, CS_ERR_INVAL, "calibration record: rank %d on node %d (0 to "
                            "%d)", r, rec->node_of[r], H - 1);
    if (st == CS_OK)
        cs__calib_nodes(rec->node_of, N, H, first, count);
    for (int h = 0; h < H && st == CS_OK; h++) {
        const cs_calibrate_node_t *n = &rec->nodes[h];
        double v[9] = {n->nic_one,  n->nic_all,       n->xch_out,       n->xch_in,
                       n->cold_out, n->cold_in,       n->cold_short[0], n->cold_short[1],
                       n->cold_short[2]};
        if (count[h] == 0)
            st = cs_err_set(err, CS_ERR_INVAL, "calibration record: node %d has no rank", h);
        else if (n->nic_peer < -1 || n->nic_peer >= H || n->nic_peer == h || n->nic_senders < 0)
            st = cs_err_set(err, CS_ERR_INVAL, "calibration record: node %d: partner %d, %d "
                            "senders", h, n->nic_peer, n->nic_senders);
        else if (!rates_ok(v, 9))
            st = cs_err_set(err, CS_ERR_INVAL, "calibration record: node %d: a NIC or exchange "
                            "rate that is not a finite number >= 0", h);
    }
    free(first);
    free(count);
    if (st != CS_OK)
        return st;
    if (rec->nintra < 0 || rec->nintra > rec->nseries)
        return cs_err_set(err, CS_ERR_INVAL, "calibration record: %d intra-node series of %d",
                          rec->nintra, rec->nseries);
    for (int s = 0; s < rec->nseries; s++) {
        const cs_calibrate_series_t *x = &rec->series[s];
        if (x->a < 0 || x->a >= N || x->b < 0 || x->b >= N || x->a == x->b ||
            x->na != rec->node_of[x->a] || x->nb != rec->node_of[x->b] ||
            (s < rec->nintra) != (x->na == x->nb))
            return cs_err_set(err, CS_ERR_INVAL, "calibration record: series %d: ranks %d and "
                              "%d on nodes %d and %d (%s)", s, x->a, x->b, x->na, x->nb,
                              s < rec->nintra ? "inside a node" : "across nodes");
    }
    int dr[4] = {rec->duplex_a, rec->duplex_b, rec->duplex_c, rec->duplex_d};
    for (int i = 0; i < 4; i++)
        if (dr[i] < -1 || dr[i] >= N || (i < 2 && H > 1 && dr[i] < 0))
            return cs_err_set(err, CS_ERR_INVAL, "calibration record: duplex rank %d", dr[i]);
    double dv[3] = {rec->duplex_one, rec->duplex_both, rec->duplex_node};
    if (!rates_ok(dv, 3))
        return cs_err_set(err, CS_ERR_INVAL, "calibration record: a duplex rate that is not a "
                          "finite number >= 0");
    if (!rates_ok(rec->reduce, CS_CALIBRATE_NDT) || !(rec->reduce[pl->dtype] > 0))
        return cs_err_set(err, CS_ERR_INVAL, "calibration record: the reduction rate of %s is "
                          "%g bytes/s: expected a finite number > 0",
                          cs_dtype_name(pl->dtype), rec->reduce[pl->dtype]);
    return CS_OK;
}

void cs_calibrate_derived_free(cs_calibrate_derived_t *d)
{
    if (!d)
        return;
    free(d->plat.nodes);
    free((void *)d->plat.node_of);
    free((void *)d->plat.port_bw);
    free((void *)d->plat.node_duplex);
    free((void *)d->plat.xch_duplex);
    free(d->series_fit);
    free(d->loaded_fit);
    free(d);
}

int cs_calibrate_derive(const cs_calibrate_record_t *rec, cs_calibrate_derived_t **out,
                        cs_err_t *err)
{
    int st = check(rec, err);
    if (st != CS_OK)
        return st;
    int N = rec->nranks, H = rec->nnodes, K = rec->plan.nsizes;
    cs_calibrate_derived_t *d = calloc(1, sizeof(*d));
    int *node_of = d ? malloc(sizeof(int) * (size_t)N) : NULL;
    if (d) {
        d->plat.nodes = calloc((size_t)H, sizeof(*d->plat.nodes));
        d->plat.node_of = node_of;
        d->plat.port_bw = calloc((size_t)N, sizeof(double));
        d->series_fit = calloc((size_t)rec->nseries + 1, sizeof(*d->series_fit));
        d->loaded_fit = calloc((size_t)N, sizeof(*d->loaded_fit));
    }
    if (!d || !node_of || !d->plat.nodes || !d->plat.port_bw || !d->series_fit || !d->loaded_fit) {
        cs_calibrate_derived_free(d);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    }
    memcpy(node_of, rec->node_of, sizeof(int) * (size_t)N);
    for (int s = 0; s < rec->nseries && st == CS_OK; s++)
        if (cs_fit_piecewise(rec->plan.sizes, rec->series[s].median, K, &d->series_fit[s]) != CS_OK)
            st = cs_err_set(err, CS_ERR_INVAL, "calibration record: ranks %d and %d: no line "
                            "fits their times (a time that is not > 0)", rec->series[s].a,
                            rec->series[s].b);
    for (int r = 0; r < N && st == CS_OK; r++)
        if (cs_fit_piecewise(rec->plan.sizes, rec->loaded + (size_t)r * K, K, &d->loaded_fit[r]) !=
            CS_OK)
            st = cs_err_set(err, CS_ERR_INVAL, "calibration record: rank %d: no line fits its "
                            "times with every rank busy (a time that is not > 0)", r);
    if (st == CS_OK && figures(rec, d) != CS_OK)
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    if (st == CS_OK) {
        /* what cs_plat_calib_xml would refuse, said here: a figure that is
         * not finite (a bandwidth must be > 0) */
        const cs_plat_calib_t *p = &d->plat;
        int ok = isfinite(p->intra_bw) && isfinite(p->intra_lat) && isfinite(p->switch_bw) &&
                 isfinite(p->port_lat);
        for (int h = 0; h < H; h++)
            ok &= isfinite(p->nodes[h].bw) && p->nodes[h].bw > 0 && isfinite(p->nodes[h].lat);
        for (int r = 0; r < N; r++)
            ok &= isfinite(p->port_bw[r]);
        if (!ok)
            st = cs_err_set(err, CS_ERR_INVAL, "calibration record: a bandwidth or latency of "
                            "the platform that is not a finite number");
    }
    if (st != CS_OK) {
        cs_calibrate_derived_free(d);
        return st;
    }
    cs_plat_calib_tiers(&d->plat);
    *out = d;
    return CS_OK;
}
