/*
 * calib_measure.c - what calibration measures (cs_calibrate_measure).  Every
 * rank computes the same plan from the same job and plan, so the kernels
 * (calib_kernel.c) line up:
 *   1. intra-node ping-pong sweep between the first two ranks of every
 *      node with two or more ranks (node after node);
 *   2. inter-node ping-pong sweep between the first ranks of every pair of
 *      nodes, disjoint pairs at once (round-robin rounds);
 *   3. every rank busy: flows r -> r+1 over all ranks at once, over the
 *      sweep;
 *   4. the NIC a node's ranks share: every rank of node A sends to a rank
 *      of its fastest partner at once, against one rank alone;
 *   5. a node's exchange: the same ranks as in 4 sending both ways at
 *      once, each direction timed at its receivers; then the same after
 *      every rank idled (cold connections);
 *   6. full duplex: the fastest pair both ways at once, against one way;
 *   7. reduction bandwidth per element type, every rank at once.
 * (The numbers of docs/validation.md.)  Every rank ends with the same
 * record: rank a of a pair shares its times, flows are timed everywhere.
 * The fits of the sweeps (core/cs_fit.h) choose the partners of 4 to 6;
 * cs_calibrate_derive fits again from the record.
 */
#include <stdlib.h>
#include <string.h>

#include "calib_int.h"

/* Bounds of the per-rank arrays of the reduction's median (ranks beyond
 * it are left out of the median). */
#define CALIB_MAX_MEDIAN 1024

struct cs_calibrate {
    cs_tp_t *tp;
    cs_boot_t *boot;
    cs__calib_kern_t *k;
    cs_calibrate_plan_t plan;
    int rank, nranks, nnodes;
    int *node_of, *first, *count; /* rank -> node; node -> first rank, ranks */
    char **names;                 /* node -> name */
    char transport[32], provider[64];
    /* while measuring */
    cs_calibrate_record_t *rec;
    cs_fit_piecewise_t *fit; /* the fits of rec->series */
    cs_err_t *err;
};

/* Sweep the series [s0, s1) at once (disjoint pairs).  Every rank calls it. */
static int sweep(cs_calibrate_t *c, int s0, int s1)
{
    cs_calibrate_record_t *rec = c->rec;
    const cs_calibrate_plan_t *pl = &c->plan;
    int mine = -1, st = CS_OK;
    for (int s = s0; s < s1; s++)
        if (rec->series[s].a == c->rank || rec->series[s].b == c->rank)
            mine = s;
    double *t = malloc(sizeof(double) * (size_t)(pl->max_reps + 1));
    double *all = malloc(sizeof(double) * 4 * (size_t)c->nranks);
    if (!t || !all)
        st = cs_err_set(c->err, CS_ERR_NOMEM, "out of memory");
    double est = 0;
    for (int k = 0; k < pl->nsizes && st == CS_OK; k++) {
        int warm = est > 0.01 ? 1 : 3, reps = 0;
        cs_calibrate_series_t *m = mine >= 0 ? &rec->series[mine] : NULL;
        st = cs__calib_pingpong(c->k, m ? m->a : -1, m ? m->b : -1, pl->sizes[k], warm,
                                pl->min_reps, pl->max_reps, pl->budget_s, t, &reps, c->err);
        double v[4] = {0, 0, 0, 0};
        if (st == CS_OK && m && m->a == c->rank) {
            v[1] = cs_fit_quantile(t, reps, 0.1);
            v[2] = cs_fit_quantile(t, reps, 0.9);
            v[0] = cs_fit_median(t, reps);
            v[3] = reps;
        }
        if (st == CS_OK)
            st = cs_boot_allgather(c->boot, v, sizeof(v), all, c->err);
        double next = 0;
        for (int s = s0; s < s1 && st == CS_OK; s++) {
            cs_calibrate_series_t *x = &rec->series[s];
            x->median[k] = all[4 * x->a], x->p10[k] = all[4 * x->a + 1];
            x->p90[k] = all[4 * x->a + 2], x->reps[k] = (int)all[4 * x->a + 3];
            double scaled = k + 1 < pl->nsizes ? x->median[k] * (double)pl->sizes[k + 1] /
                                                     (double)(pl->sizes[k] ? pl->sizes[k] : 1)
                                               : 0;
            next = scaled > next ? scaled : next;
        }
        est = next;
    }
    free(t);
    free(all);
    return st;
}

static void add_series(cs_calibrate_t *c, int a, int b)
{
    cs_calibrate_series_t *x = &c->rec->series[c->rec->nseries++];
    x->a = a, x->b = b, x->na = c->node_of[a], x->nb = c->node_of[b];
}

/* The bandwidth of the large-message piece of series s. */
static double big_bw(const cs_calibrate_t *c, int s)
{
    return cs_fit_piece_for(&c->fit[s], c->plan.sizes[c->plan.nsizes - 1])->beta;
}

static double flows_bw(cs_calibrate_t *c, const int *src, const int *dst, int k, size_t bytes,
                       int *st)
{
    double t[3];
    if (*st == CS_OK)
        *st = cs__calib_flows(c->k, src, dst, k, bytes, 1, 3, 0, t, NULL, c->err);
    double m = *st == CS_OK ? cs_fit_median(t, 3) : 0;
    return m > 0 ? (double)k * (double)bytes / m : 0; /* 0: no figure (no time measured) */
}

/* Every rank busy at once, as in a collective: flows r -> r+1 (a ring
 * over all ranks: intra-node and inter-node flows) over the sweep.  On a
 * machine with fewer cores than ranks (the emulated cluster) a message's
 * time then includes waiting for the CPU, which a lone pair never shows;
 * with a core per rank both agree. */
static int loaded(cs_calibrate_t *c)
{
    cs_calibrate_record_t *rec = c->rec;
    const cs_calibrate_plan_t *pl = &c->plan;
    int N = c->nranks, K = pl->nsizes, st = CS_OK;
    int *src = calloc((size_t)N, sizeof(int)), *dst = calloc((size_t)N, sizeof(int));
    double *rt = calloc((size_t)N, sizeof(double)), *t = calloc(64, sizeof(double));
    if (!src || !dst || !rt || !t)
        st = cs_err_set(c->err, CS_ERR_NOMEM, "out of memory");
    for (int r = 0; r < N && st == CS_OK; r++)
        src[r] = r, dst[r] = (r + 1) % N;
    double est = 0;
    for (int k = 0; k < K && st == CS_OK; k++) {
        double want = est > 0 ? pl->budget_s / est : 50;
        int reps = want < pl->min_reps ? pl->min_reps : want > 50 ? 50 : (int)want;
        st = cs__calib_flows(c->k, src, dst, N, pl->sizes[k], 1, reps, 0, t, rt, c->err);
        rec->loaded_reps[k] = reps;
        double mx = 0;
        for (int r = 0; r < N && st == CS_OK; r++) {
            rec->loaded[(size_t)r * K + k] = rt[r];
            mx = rt[r] > mx ? rt[r] : mx;
        }
        est = k + 1 < K ? mx * (double)pl->sizes[k + 1] / (double)pl->sizes[k] : 0;
    }
    for (int r = 0; r < N && st == CS_OK; r++) {
        cs_fit_piecewise_t f;
        if (cs_fit_piecewise(pl->sizes, rec->loaded + (size_t)r * K, K, &f) != CS_OK)
            st = cs_err_set(c->err, CS_ERR_INTERNAL, "rank %d: no line fits its times with "
                            "every rank busy (a time that is not > 0)", r);
    }
    free(src);
    free(dst);
    free(rt);
    free(t);
    return st;
}

/* 1. intra-node sweeps node after node, 2. inter-node sweeps in rounds of
 * disjoint pairs; the fit of every series */
static int pairs(cs_calibrate_t *c)
{
    cs_calibrate_record_t *rec = c->rec;
    int st = CS_OK, H = c->nnodes;
    /* 1. intra-node, node after node: its first two ranks */
    for (int h = 0; h < H && st == CS_OK; h++) {
        if (c->count[h] < 2)
            continue;
        int r1 = -1;
        for (int r = c->first[h] + 1; r < c->nranks && r1 < 0; r++)
            if (c->node_of[r] == h)
                r1 = r;
        add_series(c, c->first[h], r1);
        st = sweep(c, rec->nseries - 1, rec->nseries);
    }
    rec->nintra = rec->nseries;
    /* 2. inter-node: round-robin rounds of disjoint pairs (circle method:
     * player M-1 fixed, the others rotate; M even, a player >= H sits out) */
    int M = H % 2 ? H + 1 : H;
    for (int round = 0; round < M - 1 && st == CS_OK && H > 1; round++) {
        int s0 = rec->nseries;
        for (int i = 0; i < M / 2; i++) {
            int x = i == 0 ? M - 1 : (round + i) % (M - 1);
            int y = i == 0 ? round : (round - i + M - 1) % (M - 1);
            if (x >= H || y >= H)
                continue;
            int A = x < y ? x : y, B = x < y ? y : x;
            add_series(c, c->first[A], c->first[B]);
        }
        st = sweep(c, s0, rec->nseries);
    }
    for (int s = 0; s < rec->nseries && st == CS_OK; s++)
        if (cs_fit_piecewise(c->plan.sizes, rec->series[s].median, c->plan.nsizes, &c->fit[s]) !=
            CS_OK)
            st = cs_err_set(c->err, CS_ERR_INTERNAL, "ranks %d and %d: no line fits their "
                            "times (a time that is not > 0)", rec->series[s].a, rec->series[s].b);
    return st;
}

/* The first k ranks of node h into out[0..k). */
static void node_ranks(const cs_calibrate_t *c, int h, int k, int *out)
{
    for (int r = 0, i = 0; r < c->nranks && i < k; r++)
        if (c->node_of[r] == h)
            out[i++] = r;
}

/* 4. the NIC a node's ranks share: every rank of node h sends to a rank of
 * its fastest partner at once, against one rank alone */
static int nic(cs_calibrate_t *c, size_t big)
{
    cs_calibrate_record_t *rec = c->rec;
    int st = CS_OK, H = c->nnodes;
    int *src = calloc((size_t)c->nranks, sizeof(int)), *dst = calloc((size_t)c->nranks, sizeof(int));
    if (!src || !dst)
        st = cs_err_set(c->err, CS_ERR_NOMEM, "out of memory");
    double best = -1;
    for (int h = 0; h < H && st == CS_OK; h++) {
        int peer = -1;
        double pb = -1;
        for (int s = rec->nintra; s < rec->nseries; s++) {
            const cs_calibrate_series_t *x = &rec->series[s];
            if (x->na != h && x->nb != h)
                continue;
            if (big_bw(c, s) > pb)
                pb = big_bw(c, s), peer = x->na == h ? x->nb : x->na;
            if (big_bw(c, s) > best)
                best = big_bw(c, s), rec->duplex_a = x->a, rec->duplex_b = x->b;
        }
        cs_calibrate_node_t *n = &rec->nodes[h];
        int k = c->count[h] < c->count[peer] ? c->count[h] : c->count[peer];
        node_ranks(c, h, k, src);
        node_ranks(c, peer, k, dst);
        n->nic_peer = peer, n->nic_senders = k;
        n->nic_one = flows_bw(c, src, dst, 1, big, &st);
        n->nic_all = k > 1 ? flows_bw(c, src, dst, k, big, &st) : n->nic_one;
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
 * (nic_all, the ratio the derivation charges) is tried again, up to
 * CALIB_XCH_TRIALS trials, keeping the trial whose slower direction is
 * the fastest (whole trials: two trials that each lost a different
 * direction do not make one full-duplex exchange).  A fabric that loses a
 * direction does so every time, while a loss episode of TCP (a
 * retransmission timeout costs a quarter of an 8 MiB exchange at
 * 100 Mbit/s) hits one trial, and made a duplex link at 0.57 of a link
 * that moves both ways at full rate.  Every rank sees the same times, so
 * every rank decides alike. */
static int exchange(cs_calibrate_t *c, size_t big)
{
    cs_calibrate_node_t *nodes = c->rec->nodes;
    int st = CS_OK, H = c->nnodes, N = c->nranks;
    int *src = calloc((size_t)N, sizeof(int)), *dst = calloc((size_t)N, sizeof(int));
    double *rt = calloc((size_t)N, sizeof(double));
    if (!src || !dst || !rt)
        st = cs_err_set(c->err, CS_ERR_NOMEM, "out of memory");
    for (int h = 0; h < H && st == CS_OK; h++) {
        cs_calibrate_node_t *n = &nodes[h];
        int peer = n->nic_peer, k = n->nic_senders;
        if (peer < 0 || k < 1)
            continue;
        const cs_calibrate_node_t *p = &nodes[peer];
        if (peer < h && p->nic_peer == h && p->nic_senders == k) {
            /* the same exchange, measured from the partner's side */
            n->xch_out = p->xch_in, n->xch_in = p->xch_out, n->xch_trials = p->xch_trials;
            n->cold_out = p->cold_in, n->cold_in = p->cold_out;
            memcpy(n->cold_short, p->cold_short, sizeof(n->cold_short));
            continue;
        }
        node_ranks(c, h, k, src), node_ranks(c, peer, k, dst); /* h -> peer */
        node_ranks(c, peer, k, src + k), node_ranks(c, h, k, dst + k); /* peer -> h */
        /* the partner takes this exchange as its own (above) when it chose h
         * back: then the trial must also pass the partner's one way */
        double goal = n->nic_all;
        if (p->nic_peer == h && p->nic_senders == k && p->nic_all > goal)
            goal = p->nic_all;
        double keep = -1;
        for (int trial = 0; trial < CALIB_XCH_TRIALS && st == CS_OK; trial++) {
            double t[3];
            st = cs__calib_flows(c->k, src, dst, 2 * k, big, 1, 3, 0, t, rt, c->err);
            double out = 0, in = 0;
            for (int i = 0; i < k && st == CS_OK; i++) {
                out = rt[dst[i]] > out ? rt[dst[i]] : out;      /* h -> peer, at the peer */
                in = rt[dst[k + i]] > in ? rt[dst[k + i]] : in; /* peer -> h, at h */
            }
            double bo = out > 0 ? (double)k * (double)big / out : 0;
            double bi = in > 0 ? (double)k * (double)big / in : 0;
            double slow = bo < bi ? bo : bi;
            n->xch_trials = trial + 1;
            if (slow > keep) /* whole trials: both directions of one exchange */
                keep = slow, n->xch_out = bo, n->xch_in = bi;
            if (!(goal > 0) || keep >= CALIB_DUPLEX * goal)
                break;
        }
        /* the same exchange after every rank idled (cold connections):
         * each direction's median over the iterations, at its receivers */
        double t[CALIB_COLD_ITERS], out = 0, in = 0;
        if (st == CS_OK)
            st = cs__calib_flows(c->k, src, dst, 2 * k, big, 0, CALIB_COLD_ITERS, CALIB_IDLE_S, t,
                                 rt, c->err);
        for (int i = 0; i < k && st == CS_OK; i++) {
            out = rt[dst[i]] > out ? rt[dst[i]] : out;
            in = rt[dst[k + i]] > in ? rt[dst[k + i]] : in;
        }
        n->cold_out = out > 0 ? (double)k * (double)big / out : 0;
        n->cold_in = in > 0 ? (double)k * (double)big / in : 0;
        /* once after each shorter idle spell: where the restart begins */
        static const double idles[3] = CS_CALIBRATE_IDLES;
        for (int j = 0; j < 3 && st == CS_OK; j++) {
            st = cs__calib_flows(c->k, src, dst, 2 * k, big, 0, 1, idles[j], t, rt, c->err);
            double slow = 0;
            for (int i = 0; i < 2 * k && st == CS_OK; i++)
                slow = rt[dst[i]] > slow ? rt[dst[i]] : slow;
            n->cold_short[j] = slow > 0 ? (double)k * (double)big / slow : 0;
        }
    }
    free(src);
    free(dst);
    free(rt);
    return st;
}

/* 6. full duplex: the fastest pair both ways at once against one way, and
 * a node's two directions over different connections */
static int duplex(cs_calibrate_t *c, size_t big)
{
    cs_calibrate_record_t *rec = c->rec;
    int st = CS_OK, H = c->nnodes;
    int s2[2] = {rec->duplex_a, rec->duplex_b}, d2[2] = {rec->duplex_b, rec->duplex_a};
    rec->duplex_one = flows_bw(c, s2, d2, 1, big, &st);
    rec->duplex_both = flows_bw(c, s2, d2, 2, big, &st) / 2; /* per direction */
    /* a node's two directions over different connections: A0 -> B0 with
     * B1 -> A1 (second ranks of the same nodes), else with C -> A1 or
     * C -> A0 from a node C as fast as A and B (a slower C would limit
     * C -> A by its own NIC, not by A's two directions) */
    rec->duplex_c = rec->duplex_d = -1;
    int A = c->node_of[rec->duplex_a], B = c->node_of[rec->duplex_b];
    int a1 = -1, b1 = -1;
    for (int r = 0; r < c->nranks; r++) {
        if (c->node_of[r] == A && r != rec->duplex_a && a1 < 0)
            a1 = r;
        if (c->node_of[r] == B && r != rec->duplex_b && b1 < 0)
            b1 = r;
    }
    if (a1 >= 0 && b1 >= 0) {
        rec->duplex_c = b1, rec->duplex_d = a1;
    } else {
        double ab = 0;
        for (int s = rec->nintra; s < rec->nseries; s++)
            if (rec->series[s].a == rec->duplex_a && rec->series[s].b == rec->duplex_b)
                ab = big_bw(c, s);
        for (int h = 0; h < H && rec->duplex_c < 0; h++) {
            double ca = 0;
            for (int s = rec->nintra; s < rec->nseries; s++)
                if ((rec->series[s].na == h && rec->series[s].nb == A) ||
                    (rec->series[s].na == A && rec->series[s].nb == h))
                    ca = big_bw(c, s);
            if (h != A && h != B && ca >= 0.9 * ab)
                rec->duplex_c = c->first[h], rec->duplex_d = a1 >= 0 ? a1 : rec->duplex_a;
        }
    }
    if (rec->duplex_c >= 0) {
        int s3[2] = {rec->duplex_a, rec->duplex_c}, d3[2] = {rec->duplex_b, rec->duplex_d};
        rec->duplex_node = flows_bw(c, s3, d3, 2, big, &st) / 2;
    }
    return st;
}

/* 7. reduction bandwidth per element type, every rank at once */
static int reduction(cs_calibrate_t *c)
{
    const cs_calibrate_plan_t *pl = &c->plan;
    int st = CS_OK;
    uint64_t top = pl->sizes[pl->nsizes - 1];
    size_t rb = top < (16u << 20) ? top : (16u << 20);
    if (rb < 1 << 20)
        rb = 1 << 20;
    double mine[CS_CALIBRATE_NDT], *all = calloc((size_t)c->nranks * CS_CALIBRATE_NDT, sizeof(double));
    if (!all)
        st = cs_err_set(c->err, CS_ERR_NOMEM, "out of memory");
    if (st == CS_OK)
        st = cs_boot_barrier(c->boot, c->err);
    for (int d = 0; d < CS_CALIBRATE_NDT && st == CS_OK; d++) {
        double t[5];
        st = cs__calib_reduce(rb, (cs_dtype_t)d, CS_OP_SUM, 5, t, c->err);
        mine[d] = st == CS_OK ? (double)rb / cs_fit_median(t, 5) : 0;
    }
    if (st == CS_OK)
        st = cs_boot_allgather(c->boot, mine, sizeof(mine), all, c->err);
    for (int d = 0; d < CS_CALIBRATE_NDT && st == CS_OK; d++) {
        double v[CALIB_MAX_MEDIAN];
        int n = c->nranks < CALIB_MAX_MEDIAN ? c->nranks : CALIB_MAX_MEDIAN;
        for (int r = 0; r < n; r++)
            v[r] = all[r * CS_CALIBRATE_NDT + d];
        c->rec->reduce[d] = cs_fit_median(v, n);
    }
    free(all);
    return st;
}

int cs_calibrate_measure(cs_calibrate_t *c, cs_calibrate_record_t **out, cs_err_t *err)
{
    int H = c->nnodes, nser = H * (H - 1) / 2;
    for (int h = 0; h < H; h++)
        nser += c->count[h] >= 2;
    cs_calibrate_record_t *rec = cs_calibrate_record_new(c->nranks, H, nser, &c->plan);
    c->fit = calloc((size_t)nser + 1, sizeof(*c->fit));
    if (!rec || !c->fit) {
        cs_calibrate_record_free(rec);
        free(c->fit);
        c->fit = NULL;
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    }
    memcpy(rec->node_of, c->node_of, sizeof(int) * (size_t)c->nranks);
    for (int h = 0; h < H; h++)
        snprintf(rec->nodes[h].name, sizeof(rec->nodes[h].name), "%s", c->names[h]);
    snprintf(rec->transport, sizeof(rec->transport), "%s", c->transport);
    snprintf(rec->provider, sizeof(rec->provider), "%s", c->provider);
    /* one node: no pair across nodes, nothing of 4 to 6 measured (the
     * duplex ranks stay 0) */
    rec->duplex_a = rec->duplex_b = rec->duplex_c = rec->duplex_d = 0;
    rec->nseries = 0;
    c->rec = rec, c->err = err;
    const cs_calibrate_plan_t *pl = &c->plan;
    int st = pairs(c);
    if (st == CS_OK) /* every rank busy at once */
        st = loaded(c);
    size_t big = pl->nic_bytes < pl->sizes[pl->nsizes - 1] ? pl->nic_bytes : pl->sizes[pl->nsizes - 1];
    if (st == CS_OK && H > 1)
        st = nic(c, big);
    if (st == CS_OK && H > 1)
        st = exchange(c, big);
    if (st == CS_OK && H > 1)
        st = duplex(c, big);
    if (st == CS_OK)
        st = reduction(c);
    free(c->fit);
    c->fit = NULL, c->rec = NULL, c->err = NULL;
    if (st != CS_OK) {
        cs_calibrate_record_free(rec);
        return st;
    }
    *out = rec;
    return CS_OK;
}

/* ---- the context --------------------------------------------------------------- */

void cs_calibrate_close(cs_calibrate_t *c)
{
    if (!c)
        return;
    cs__calib_kern_close(c->k);
    for (int h = 0; c->names && h < c->nnodes; h++)
        free(c->names[h]);
    free(c->names);
    free(c->node_of);
    free(c->first);
    free(c->count);
    free(c);
}

int cs_calibrate_open(cs_tp_t *tp, cs_boot_t *boot, const cs_calibrate_job_t *job,
                      const cs_calibrate_plan_t *plan, cs_calibrate_t **out, cs_err_t *err)
{
    int st = cs_calibrate_plan_check(plan, err);
    if (st != CS_OK)
        return st;
    int N = tp->nranks, H = job->nnodes;
    if (N < 2)
        return cs_err_set(err, CS_ERR_INVAL, "calibrate: %d rank: calibration measures pairs "
                          "of ranks", N);
    if (H < 1 || H > N || !job->node_of)
        return cs_err_set(err, CS_ERR_INVAL, "calibrate: %d nodes for %d ranks", H, N);
    cs_calibrate_t *c = calloc(1, sizeof(*c));
    if (!c)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    c->tp = tp, c->boot = boot, c->plan = *plan;
    c->rank = tp->rank, c->nranks = N, c->nnodes = H;
    c->node_of = malloc(sizeof(int) * (size_t)N);
    c->first = malloc(sizeof(int) * (size_t)H);
    c->count = malloc(sizeof(int) * (size_t)H);
    c->names = calloc((size_t)H, sizeof(char *));
    if (!c->node_of || !c->first || !c->count || !c->names)
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    for (int r = 0; r < N && st == CS_OK; r++)
        if ((c->node_of[r] = job->node_of[r]) < 0 || job->node_of[r] >= H)
            st = cs_err_set(err, CS_ERR_INVAL, "calibrate: rank %d on node %d (0 to %d)", r,
                            job->node_of[r], H - 1);
    if (st == CS_OK)
        cs__calib_nodes(c->node_of, N, H, c->first, c->count);
    for (int h = 0; h < H && st == CS_OK; h++) {
        char dflt[32];
        snprintf(dflt, sizeof(dflt), "node%d", h);
        if (c->count[h] == 0)
            st = cs_err_set(err, CS_ERR_INVAL, "calibrate: node %d has no rank", h);
        else if (!(c->names[h] = strdup(job->node_names ? job->node_names[h] : dflt)))
            st = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    }
    snprintf(c->transport, sizeof(c->transport), "%s", job->transport ? job->transport : "");
    snprintf(c->provider, sizeof(c->provider), "%s", job->provider ? job->provider : "");
    if (st == CS_OK)
        st = cs__calib_kern_open(tp, boot, plan->sizes[plan->nsizes - 1], plan->timeout_s, &c->k,
                                 err);
    if (st != CS_OK) {
        cs_calibrate_close(c);
        return st;
    }
    *out = c;
    return CS_OK;
}
