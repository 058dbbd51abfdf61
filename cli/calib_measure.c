/*
 * calib_measure.c - what `collstep calibrate` measures (calib_int.h).  Every
 * rank computes the same plan from what all ranks shared, so the kernels
 * of exec/cs_calib.h line up:
 *   1. intra-node ping-pong sweep between the first two ranks of every
 *      node with two or more ranks (node after node);
 *   2. inter-node ping-pong sweep between the first ranks of every pair of
 *      nodes, disjoint pairs at once (round-robin rounds);
 *   3. every rank busy: flows r -> r+1 over all ranks at once, over the
 *      sweep;
 *   4. the NIC a node's ranks share: every rank of node A sends to a rank
 *      of its fastest partner at once, against one rank alone;
 *   5. a node's exchange: the same ranks as in 4 sending both ways at
 *      once, each direction timed at its receivers;
 *   6. full duplex: the fastest pair both ways at once, against one way;
 *   7. reduction bandwidth per element type, every rank at once.
 * (The numbers of docs/validation.md.)
 * Fits (core/cs_fit.h): per series a piecewise alpha-beta line.
 */
#include <stdlib.h>
#include <string.h>

#include "calib_int.h"

/* Sweep the series [s0, s1) at once (disjoint pairs).  Every rank calls it. */
static int sweep(cal_t *c, int s0, int s1)
{
    int mine = -1, st = CS_OK;
    for (int s = s0; s < s1; s++)
        if (c->ser[s].a == c->l.rank || c->ser[s].b == c->l.rank)
            mine = s;
    double *t = malloc(sizeof(double) * (size_t)(c->o->max_reps + 1));
    double *all = malloc(sizeof(double) * 4 * (size_t)c->l.nranks);
    if (!t || !all)
        st = cs_err_set(&c->l.err, CS_ERR_NOMEM, "out of memory");
    double est = 0;
    for (int k = 0; k < c->nsizes && st == CS_OK; k++) {
        int warm = est > 0.01 ? 1 : 3, reps = 0;
        series_t *m = mine >= 0 ? &c->ser[mine] : NULL;
        st = cs_calib_pingpong(c->cb, m ? m->a : -1, m ? m->b : -1, c->sizes[k], warm,
                               (int)c->o->min_reps, (int)c->o->max_reps, c->o->budget, t, &reps,
                               &c->l.err);
        double v[4] = {0, 0, 0, 0};
        if (st == CS_OK && m && m->a == c->l.rank) {
            v[1] = cs_fit_quantile(t, reps, 0.1);
            v[2] = cs_fit_quantile(t, reps, 0.9);
            v[0] = cs_fit_median(t, reps);
            v[3] = reps;
        }
        if (st == CS_OK)
            st = cs_boot_allgather(c->l.boot, v, sizeof(v), all, &c->l.err);
        double next = 0;
        for (int s = s0; s < s1 && st == CS_OK; s++) {
            series_t *x = &c->ser[s];
            x->med[k] = all[4 * x->a], x->p10[k] = all[4 * x->a + 1], x->p90[k] = all[4 * x->a + 2];
            x->reps[k] = (int)all[4 * x->a + 3];
            double scaled = k + 1 < c->nsizes ? x->med[k] * (double)c->sizes[k + 1] /
                                                    (double)(c->sizes[k] ? c->sizes[k] : 1)
                                              : 0;
            next = scaled > next ? scaled : next;
        }
        est = next;
    }
    free(t);
    free(all);
    return st;
}

static int add_series(cal_t *c, int a, int b)
{
    series_t *x = &c->ser[c->nser++];
    x->a = a, x->b = b, x->na = c->l.node_of[a], x->nb = c->l.node_of[b], x->n = c->nsizes;
    x->med = calloc((size_t)c->nsizes, sizeof(double));
    x->p10 = calloc((size_t)c->nsizes, sizeof(double));
    x->p90 = calloc((size_t)c->nsizes, sizeof(double));
    x->reps = calloc((size_t)c->nsizes, sizeof(int));
    return x->med && x->p10 && x->p90 && x->reps ? CS_OK
                                                 : cs_err_set(&c->l.err, CS_ERR_NOMEM, "out of memory");
}

/* The bandwidth of the large-message piece of a series. */
double calib_big_bw(const cal_t *c, const series_t *x)
{
    return cs_fit_piece_for(&x->fit, c->sizes[c->nsizes - 1])->beta;
}

static double flows_bw(cal_t *c, const int *src, const int *dst, int k, size_t bytes, int *st)
{
    double t[3];
    if (*st == CS_OK)
        *st = cs_calib_flows(c->cb, src, dst, k, bytes, 1, 3, t, NULL, &c->l.err);
    double m = *st == CS_OK ? cs_fit_median(t, 3) : 0;
    return m > 0 ? (double)k * (double)bytes / m : 0; /* 0: no figure (no time measured) */
}

/* Every rank busy at once, as in a collective: flows r -> r+1 (a ring
 * over all ranks: intra-node and inter-node flows) over the sweep.  On a
 * machine with fewer cores than ranks (the emulated cluster) a message's
 * time then includes waiting for the CPU, which a lone pair never shows;
 * with a core per rank both agree. */
static int loaded(cal_t *c)
{
    int N = c->l.nranks, st = CS_OK;
    int *src = calloc((size_t)N, sizeof(int)), *dst = calloc((size_t)N, sizeof(int));
    double *rt = calloc((size_t)N, sizeof(double)), *t = calloc(64, sizeof(double));
    c->load_t = calloc((size_t)N * c->nsizes, sizeof(double));
    c->load_reps = calloc((size_t)c->nsizes, sizeof(int));
    c->load_fit = calloc((size_t)N, sizeof(cs_fit_piecewise_t));
    c->port_bw = calloc((size_t)N, sizeof(double));
    if (!src || !dst || !rt || !t || !c->load_t || !c->load_reps || !c->load_fit || !c->port_bw)
        st = cs_err_set(&c->l.err, CS_ERR_NOMEM, "out of memory");
    for (int r = 0; r < N; r++)
        src[r] = r, dst[r] = (r + 1) % N;
    double est = 0;
    for (int k = 0; k < c->nsizes && st == CS_OK; k++) {
        double want = est > 0 ? c->o->budget / est : 50;
        int reps = want < c->o->min_reps ? (int)c->o->min_reps : want > 50 ? 50 : (int)want;
        st = cs_calib_flows(c->cb, src, dst, N, c->sizes[k], 1, reps, t, rt, &c->l.err);
        c->load_reps[k] = reps;
        double mx = 0;
        for (int r = 0; r < N && st == CS_OK; r++) {
            c->load_t[(size_t)r * c->nsizes + k] = rt[r];
            mx = rt[r] > mx ? rt[r] : mx;
        }
        est = k + 1 < c->nsizes ? mx * (double)c->sizes[k + 1] / (double)c->sizes[k] : 0;
    }
    for (int r = 0; r < N && st == CS_OK; r++)
        if (cs_fit_piecewise(c->sizes, c->load_t + (size_t)r * c->nsizes, c->nsizes,
                             &c->load_fit[r]) != CS_OK)
            st = cs_err_set(&c->l.err, CS_ERR_INTERNAL, "rank %d: no line fits its times with "
                            "every rank busy (a time that is not > 0)", r);
    free(src);
    free(dst);
    free(rt);
    free(t);
    return st;
}

/* 1. intra-node sweeps node after node, 2. inter-node sweeps in rounds of
 * disjoint pairs; the fit of every series */
static int pairs(cal_t *c)
{
    int st = CS_OK, H = c->l.nnodes;
    c->ser = calloc((size_t)(H + H * (H - 1) / 2 + 1), sizeof(series_t));
    if (!c->ser)
        return cs_err_set(&c->l.err, CS_ERR_NOMEM, "out of memory");
    /* 1. intra-node, node after node */
    for (int h = 0; h < H && st == CS_OK; h++)
        if (c->l.count[h] >= 2 && (st = add_series(c, c->l.first[h], c->l.first[h] + 1)) == CS_OK) {
            int r1 = -1;
            for (int r = c->l.first[h] + 1; r < c->l.nranks && r1 < 0; r++)
                if (c->l.node_of[r] == h)
                    r1 = r;
            c->ser[c->nser - 1].b = r1;
            st = sweep(c, c->nser - 1, c->nser);
        }
    c->nintra = c->nser;
    /* 2. inter-node: round-robin rounds of disjoint pairs (circle method:
     * player M-1 fixed, the others rotate; M even, a player >= H sits out) */
    int M = H % 2 ? H + 1 : H;
    for (int round = 0; round < M - 1 && st == CS_OK && H > 1; round++) {
        int s0 = c->nser;
        for (int i = 0; i < M / 2 && st == CS_OK; i++) {
            int x = i == 0 ? M - 1 : (round + i) % (M - 1);
            int y = i == 0 ? round : (round - i + M - 1) % (M - 1);
            if (x >= H || y >= H)
                continue;
            int A = x < y ? x : y, B = x < y ? y : x;
            st = add_series(c, c->l.first[A], c->l.first[B]);
        }
        if (st == CS_OK)
            st = sweep(c, s0, c->nser);
    }
    for (int s = 0; s < c->nser && st == CS_OK; s++)
        if (cs_fit_piecewise(c->sizes, c->ser[s].med, c->nsizes, &c->ser[s].fit) != CS_OK)
            st = cs_err_set(&c->l.err, CS_ERR_INTERNAL, "ranks %d and %d: no line fits their "
                            "times (a time that is not > 0)", c->ser[s].a, c->ser[s].b);
    return st;
}

/* The first k ranks of node h into out[0..k). */
static void node_ranks(const cal_t *c, int h, int k, int *out)
{
    for (int r = 0, i = 0; r < c->l.nranks && i < k; r++)
        if (c->l.node_of[r] == h)
            out[i++] = r;
}

/* 4. the NIC a node's ranks share: every rank of node h sends to a rank of
 * its fastest partner at once, against one rank alone */
static int nic(cal_t *c, size_t big)
{
    int st = CS_OK, H = c->l.nnodes;
    c->nic_agg = calloc((size_t)H, sizeof(double));
    c->nic_one = calloc((size_t)H, sizeof(double));
    c->nic_peer = calloc((size_t)H, sizeof(int));
    c->nic_k = calloc((size_t)H, sizeof(int));
    int *src = calloc((size_t)c->l.nranks, sizeof(int)), *dst = calloc((size_t)c->l.nranks, sizeof(int));
    if (!c->nic_agg || !c->nic_one || !c->nic_peer || !c->nic_k || !src || !dst)
        st = cs_err_set(&c->l.err, CS_ERR_NOMEM, "out of memory");
    double best = -1;
    for (int h = 0; h < H && H > 1 && st == CS_OK; h++) {
        int peer = -1;
        double pb = -1;
        for (int s = c->nintra; s < c->nser; s++) {
            const series_t *x = &c->ser[s];
            if (x->na != h && x->nb != h)
                continue;
            if (calib_big_bw(c, x) > pb)
                pb = calib_big_bw(c, x), peer = x->na == h ? x->nb : x->na;
            if (calib_big_bw(c, x) > best)
                best = calib_big_bw(c, x), c->duplex_a = x->a, c->duplex_b = x->b;
        }
        int k = c->l.count[h] < c->l.count[peer] ? c->l.count[h] : c->l.count[peer];
        node_ranks(c, h, k, src);
        node_ranks(c, peer, k, dst);
        c->nic_peer[h] = peer, c->nic_k[h] = k;
        c->nic_one[h] = flows_bw(c, src, dst, 1, big, &st);
        c->nic_agg[h] = k > 1 ? flows_bw(c, src, dst, k, big, &st) : c->nic_one[h];
    }
    free(src);
    free(dst);
    return st;
}

/* 5. a node's exchange with its partner of 4: node h's k ranks send to k
 * ranks of the partner while those send back, as recursive halving and
 * doubling or a tree's exchanges do.  Each direction is timed at its
 * receivers (the slowest of them): a node whose one way is fast can still
 * lose a direction when both are busy (TCP's acknowledgements queued
 * behind the other direction's data in a shaper or switch port).  A trial
 * whose slower direction is under CALIB_DUPLEX of the node's one way
 * (nic_agg, the ratio calib_derive charges) is tried again, up to
 * CALIB_XCH_TRIALS trials, keeping the trial whose slower direction is
 * the fastest (whole trials: two trials that each lost a different
 * direction do not make one full-duplex exchange).  A fabric that loses a
 * direction does so every time, while a loss episode of TCP (a
 * retransmission timeout costs a quarter of an 8 MiB exchange at
 * 100 Mbit/s) hits one trial, and made a duplex link at 0.57 of a link
 * that moves both ways at full rate.  Every rank sees the same times, so
 * every rank decides alike. */
static int exchange(cal_t *c, size_t big)
{
    int st = CS_OK, H = c->l.nnodes, N = c->l.nranks;
    c->xch_out = calloc((size_t)H, sizeof(double));
    c->xch_in = calloc((size_t)H, sizeof(double));
    c->xch_trials = calloc((size_t)H, sizeof(int));
    int *src = calloc((size_t)N, sizeof(int)), *dst = calloc((size_t)N, sizeof(int));
    double *rt = calloc((size_t)N, sizeof(double));
    if (!c->xch_out || !c->xch_in || !c->xch_trials || !src || !dst || !rt)
        st = cs_err_set(&c->l.err, CS_ERR_NOMEM, "out of memory");
    for (int h = 0; h < H && st == CS_OK; h++) {
        int peer = c->nic_peer[h], k = c->nic_k[h];
        if (peer < 0 || k < 1)
            continue;
        if (peer < h && c->nic_peer[peer] == h && c->nic_k[peer] == k) {
            /* the same exchange, measured from the partner's side */
            c->xch_out[h] = c->xch_in[peer], c->xch_in[h] = c->xch_out[peer];
            c->xch_trials[h] = c->xch_trials[peer];
            continue;
        }
        node_ranks(c, h, k, src), node_ranks(c, peer, k, dst); /* h -> peer */
        node_ranks(c, peer, k, src + k), node_ranks(c, h, k, dst + k); /* peer -> h */
        /* the partner takes this exchange as its own (above) when it chose h
         * back: then the trial must also pass the partner's one way */
        double goal = c->nic_agg[h];
        if (c->nic_peer[peer] == h && c->nic_k[peer] == k && c->nic_agg[peer] > goal)
            goal = c->nic_agg[peer];
        double keep = -1;
        for (int trial = 0; trial < CALIB_XCH_TRIALS && st == CS_OK; trial++) {
            double t[3];
            st = cs_calib_flows(c->cb, src, dst, 2 * k, big, 1, 3, t, rt, &c->l.err);
            double out = 0, in = 0;
            for (int i = 0; i < k && st == CS_OK; i++) {
                out = rt[dst[i]] > out ? rt[dst[i]] : out;      /* h -> peer, at the peer */
                in = rt[dst[k + i]] > in ? rt[dst[k + i]] : in; /* peer -> h, at h */
            }
            double bo = out > 0 ? (double)k * (double)big / out : 0;
            double bi = in > 0 ? (double)k * (double)big / in : 0;
            double slow = bo < bi ? bo : bi;
            c->xch_trials[h] = trial + 1;
            if (slow > keep) /* whole trials: both directions of one exchange */
                keep = slow, c->xch_out[h] = bo, c->xch_in[h] = bi;
            if (!(goal > 0) || keep >= CALIB_DUPLEX * goal)
                break;
        }
    }
    free(src);
    free(dst);
    free(rt);
    return st;
}

/* 6. full duplex: the fastest pair both ways at once against one way, and
 * a node's two directions over different connections */
static int duplex(cal_t *c, size_t big)
{
    int st = CS_OK, H = c->l.nnodes;
    if (H > 1 && st == CS_OK) {
        int s2[2] = {c->duplex_a, c->duplex_b}, d2[2] = {c->duplex_b, c->duplex_a};
        c->duplex_one = flows_bw(c, s2, d2, 1, big, &st);
        c->duplex_both = flows_bw(c, s2, d2, 2, big, &st) / 2; /* per direction */
        /* a node's two directions over different connections: A0 -> B0
         * with B1 -> A1 (second ranks of the same nodes), else with C -> A1
         * or C -> A0 from a node C as fast as A and B (a slower C would
         * limit C -> A by its own NIC, not by A's two directions) */
        c->duplex_c = c->duplex_d = -1;
        int A = c->l.node_of[c->duplex_a], B = c->l.node_of[c->duplex_b];
        int a1 = -1, b1 = -1;
        for (int r = 0; r < c->l.nranks; r++) {
            if (c->l.node_of[r] == A && r != c->duplex_a && a1 < 0)
                a1 = r;
            if (c->l.node_of[r] == B && r != c->duplex_b && b1 < 0)
                b1 = r;
        }
        if (a1 >= 0 && b1 >= 0) {
            c->duplex_c = b1, c->duplex_d = a1;
        } else {
            double ab = 0;
            for (int s = c->nintra; s < c->nser; s++)
                if (c->ser[s].a == c->duplex_a && c->ser[s].b == c->duplex_b)
                    ab = calib_big_bw(c, &c->ser[s]);
            for (int h = 0; h < H && c->duplex_c < 0; h++) {
                double ca = 0;
                for (int s = c->nintra; s < c->nser; s++)
                    if ((c->ser[s].na == h && c->ser[s].nb == A) ||
                        (c->ser[s].na == A && c->ser[s].nb == h))
                        ca = calib_big_bw(c, &c->ser[s]);
                if (h != A && h != B && ca >= 0.9 * ab)
                    c->duplex_c = c->l.first[h], c->duplex_d = a1 >= 0 ? a1 : c->duplex_a;
            }
        }
        if (c->duplex_c >= 0) {
            int s3[2] = {c->duplex_a, c->duplex_c}, d3[2] = {c->duplex_b, c->duplex_d};
            c->duplex_node = flows_bw(c, s3, d3, 2, big, &st) / 2;
        }
    }
    return st;
}

/* 7. reduction bandwidth per element type, every rank at once */
static int reduction(cal_t *c)
{
    int st = CS_OK;
    size_t rb = c->sizes[c->nsizes - 1] < (16u << 20) ? c->sizes[c->nsizes - 1] : (16u << 20);
    if (rb < 1 << 20)
        rb = 1 << 20;
    double mine[NDT], *all = calloc((size_t)c->l.nranks * NDT, sizeof(double));
    if (!all && st == CS_OK)
        st = cs_err_set(&c->l.err, CS_ERR_NOMEM, "out of memory");
    if (st == CS_OK)
        st = cs_boot_barrier(c->l.boot, &c->l.err);
    for (int d = 0; d < NDT && st == CS_OK; d++) {
        double t[5];
        st = cs_calib_reduce(rb, (cs_dtype_t)d, CS_OP_SUM, 5, t, &c->l.err);
        mine[d] = st == CS_OK ? (double)rb / cs_fit_median(t, 5) : 0;
    }
    if (st == CS_OK)
        st = cs_boot_allgather(c->l.boot, mine, sizeof(mine), all, &c->l.err);
    for (int d = 0; d < NDT && st == CS_OK; d++) {
        double v[CS_CLI_MAX_SIZES * 16];
        int n = c->l.nranks < (int)(sizeof(v) / sizeof(v[0])) ? c->l.nranks : (int)(sizeof(v) / sizeof(v[0]));
        for (int r = 0; r < n; r++)
            v[r] = all[r * NDT + d];
        c->red[d] = cs_fit_median(v, n);
    }
    free(all);
    return st;
}

int calib_measure(cal_t *c)
{
    int st = pairs(c);
    if (st == CS_OK) /* every rank busy at once */
        st = loaded(c);
    size_t big = c->o->nic_size < c->sizes[c->nsizes - 1] ? c->o->nic_size : c->sizes[c->nsizes - 1];
    if (st == CS_OK && c->l.nnodes > 1)
        st = nic(c, big);
    if (st == CS_OK && c->l.nnodes > 1)
        st = exchange(c, big);
    if (st == CS_OK && c->l.nnodes > 1)
        st = duplex(c, big);
    if (st == CS_OK)
        st = reduction(c);
    return st;
}
