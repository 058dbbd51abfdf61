/* Statistics and the alpha-beta simulation on hand-built schedules: ring
 * allreduce (2(P-1) rounds, 2(P-1)/P sent per rank, time exactly
 * 2(P-1)(alpha + n/P beta)), recursive doubling (log2 P full messages), a
 * direct gather into one port, and a full-duplex exchange.  The ring and
 * recursive doubling are run through the interpreter too, so the shapes
 * being timed are real allreduces. */
#include <math.h>
#include <string.h>

#include "cs_interp.h"
#include "cs_stats.h"
#include "cs_test.h"

static cs_sched_t *done(cs_sched_t *s)
{
    if (s && cs_sched_status(s) != CS_OK) {
        fprintf(stderr, "builder: %s\n", s->err.msg);
        cs_sched_destroy(s);
        return NULL;
    }
    return s;
}

/* Ring allreduce on P ranks, m chunks per piece (C = m P). */
static cs_sched_t *ring(int P, uint32_t m)
{
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, P, 0, 0};
    uint32_t C = m * (uint32_t)P;
    cs_sched_t *s = cs_sched_create(&d, C, NULL);
    if (!s)
        return NULL;
#define PIECE(x) cs_rng(CS_BUF_OUT, (uint32_t)((((x) % P) + P) % P) * m, m)
    for (int r = 0; r < P; r++) {
        int nx = (r + 1) % P, pv = (r + P - 1) % P;
        uint32_t cp = (uint32_t)cs_copy(s, r, cs_rng(CS_BUF_IN, 0, C), cs_rng(CS_BUF_OUT, 0, C),
                                        NULL, 0);
        uint32_t last = cp; /* last receive */
        uint32_t rs_send[4096];
        for (int k = 0; k < P - 1; k++) {
            rs_send[k] = (uint32_t)cs_send(s, r, nx, 0, PIECE(r - k), &last, 1);
            last = (uint32_t)cs_rrecv(s, r, pv, 0, PIECE(r - k - 1), &last, 1);
        }
        for (int k = 0; k < P - 1; k++) {
            cs_send(s, r, nx, 0, PIECE(r + 1 - k), &last, 1);
            uint32_t dd[2] = {last, rs_send[k]};
            last = (uint32_t)cs_recv(s, r, pv, 0, PIECE(r - k), dd, 2);
        }
    }
#undef PIECE
    return done(s);
}

/* Recursive doubling allreduce, P a power of two, C chunks. */
static cs_sched_t *recdbl(int P, uint32_t C)
{
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, P, 0, 0};
    cs_sched_t *s = cs_sched_create(&d, C, NULL);
    if (!s)
        return NULL;
    for (int r = 0; r < P; r++) {
        int tmp = cs_sched_add_buffer(s, r, "tmp", 0, C);
        uint32_t last = (uint32_t)cs_copy(s, r, cs_rng(CS_BUF_IN, 0, C), cs_rng(CS_BUF_OUT, 0, C),
                                          NULL, 0);
        for (int k = 1; k < P; k <<= 1) {
            uint32_t sr[2];
            sr[0] = (uint32_t)cs_send(s, r, r ^ k, 0, cs_rng(CS_BUF_OUT, 0, C), &last, 1);
            sr[1] = (uint32_t)cs_recv(s, r, r ^ k, 0, cs_rng(tmp, 0, C), &last, 1);
            last = (uint32_t)cs_reduce(s, r, cs_rng(tmp, 0, C), cs_rng(CS_BUF_OUT, 0, C), sr, 2);
        }
    }
    return done(s);
}

/* Reduce to root 0: every other rank sends its whole input at once; the
 * root's combinations are unordered (fine for the timing model). */
static cs_sched_t *direct_reduce(int P)
{
    cs_coll_desc_t d = {CS_COLL_REDUCE, P, 0, 0};
    cs_sched_t *s = cs_sched_create(&d, 1, NULL);
    if (!s)
        return NULL;
    uint32_t cp = (uint32_t)cs_copy(s, 0, cs_rng(CS_BUF_IN, 0, 1), cs_rng(CS_BUF_OUT, 0, 1),
                                    NULL, 0);
    for (int q = 1; q < P; q++) {
        cs_send(s, q, 0, 0, cs_rng(CS_BUF_IN, 0, 1), NULL, 0);
        cs_rrecv(s, 0, q, 0, cs_rng(CS_BUF_OUT, 0, 1), &cp, 1);
    }
    return done(s);
}

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-12 * fabs(b);
}

static void test_ring(void)
{
    static const int Ps[] = {1, 2, 3, 5, 8, 13, 64};
    for (size_t pi = 0; pi < sizeof(Ps) / sizeof(Ps[0]); pi++) {
        int P = Ps[pi];
        for (uint32_t m = 1; m <= 3; m += 2) {
            cs_sched_t *s = ring(P, m);
            CS_TEST_CHECK(s != NULL, "ring P=%d", P);
            if (!s)
                continue;
            cs_interp_result_t res;
            cs_err_t err = {0};
            int st = cs_interp_run(s, CS_DT_F32, CS_OP_SUM, 37, &res, &err);
            CS_TEST_CHECK(st == CS_OK && res.wrong == 0, "ring P=%d computes: %s %llu", P, err.msg,
                          (unsigned long long)res.wrong);
            cs_stats_t sta;
            st = cs_stats_compute(s, &sta, &err);
            CS_TEST_CHECK(st == CS_OK, "stats: %s", err.msg);
            if (st != CS_OK) {
                cs_sched_destroy(s);
                continue;
            }
            double frac = 2.0 * (P - 1) / P;
            int bad = 0;
            for (int r = 0; r < P; r++) {
                const cs_rank_stats_t *q = &sta.ranks[r];
                bad += q->steps != 1 + 4u * (uint32_t)(P - 1) || q->sends != 2u * (uint32_t)(P - 1) ||
                       q->recvs != 2u * (uint32_t)(P - 1) || q->reduces != (uint32_t)(P - 1) ||
                       q->copies != 1 || !close_to(q->sent, frac) || !close_to(q->recvd, frac);
            }
            CS_TEST_CHECK(bad == 0, "ring P=%d: %d ranks with wrong counts", P, bad);
            CS_TEST_CHECK(sta.rounds == 2u * (uint32_t)(P - 1), "ring P=%d rounds %u", P, sta.rounds);
            CS_TEST_CHECK(close_to(sta.max_sent, frac) && close_to(sta.max_recvd, frac) &&
                              close_to(sta.total_sent, frac * P),
                          "ring P=%d volumes %g %g %g", P, sta.max_sent, sta.max_recvd,
                          sta.total_sent);
            CS_TEST_CHECK(sta.max_steps == 1 + 4u * (uint32_t)(P - 1), "max steps %u", sta.max_steps);
            cs_stats_fini(&sta);

            /* dyadic parameters: the formula must hold bit for bit */
            double n = 1024.0 * P, alpha = 0.5, beta = 1.0 / 256;
            double t = cs_stats_ab_time(s, n, alpha, beta, 0.0, &err);
            double want = 2.0 * (P - 1) * (alpha + n / P * beta);
            CS_TEST_CHECK(t == want, "ring P=%d m=%u: ab %.17g, formula %.17g (%s)", P, m, t, want,
                          err.msg);
            /* realistic parameters: 5 us, 10 GB/s, 100 MB */
            n = 1e8 - fmod(1e8, P);
            t = cs_stats_ab_time(s, n, 5e-6, 1e-10, 0.0, &err);
            want = 2.0 * (P - 1) * (5e-6 + n / P * 1e-10);
            CS_TEST_CHECK(close_to(t, want), "ring P=%d: ab %.17g, formula %.17g", P, t, want);
            /* reduction cost: P-1 combinations of n/P bytes on the path */
            t = cs_stats_ab_time(s, n, 5e-6, 1e-10, 2.5e-11, &err);
            want += (P - 1) * n / P * 2.5e-11;
            CS_TEST_CHECK(close_to(t, want), "ring P=%d gamma: ab %.17g, formula %.17g", P, t, want);
            cs_sched_destroy(s);
        }
    }
}

static void test_recdbl(void)
{
    for (int P = 1; P <= 256; P *= 2) {
        cs_sched_t *s = recdbl(P, 4);
        CS_TEST_CHECK(s != NULL, "recursive doubling P=%d", P);
        if (!s)
            continue;
        int lg = 0;
        while ((1 << lg) < P)
            lg++;
        cs_interp_result_t res;
        int st = cs_interp_run(s, CS_DT_I32, CS_OP_PROD, 9, &res, NULL);
        CS_TEST_CHECK(st == CS_OK && res.wrong == 0, "recursive doubling P=%d computes", P);
        cs_stats_t sta;
        st = cs_stats_compute(s, &sta, NULL);
        CS_TEST_CHECK(st == CS_OK && sta.rounds == (uint32_t)lg && sta.max_sent == lg &&
                          sta.ranks[P - 1].sends == (uint32_t)lg &&
                          sta.ranks[P - 1].reduces == (uint32_t)lg && sta.total_sent == (double)lg * P,
                      "recursive doubling P=%d: rounds %u sent %g", P, sta.rounds, sta.max_sent);
        if (st == CS_OK)
            cs_stats_fini(&sta);
        double n = 3e6, a = 2e-6, b = 1e-10, g = 3e-11;
        double t = cs_stats_ab_time(s, n, a, b, 0.0, NULL);
        CS_TEST_CHECK(close_to(t, lg * (a + n * b)) || (P == 1 && t == 0), "P=%d: %g", P, t);
        t = cs_stats_ab_time(s, n, a, b, g, NULL);
        CS_TEST_CHECK(close_to(t, lg * (a + n * b + n * g)) || (P == 1 && t == 0), "P=%d gamma: %g",
                      P, t);
        cs_sched_destroy(s);
    }
}

static void test_ports(void)
{
    /* one receive port: P-1 messages into rank 0 are serialised */
    cs_sched_t *s = direct_reduce(7);
    CS_TEST_CHECK(s != NULL, "direct reduce");
    if (s) {
        double t = cs_stats_ab_time(s, 1000, 1e-6, 1e-9, 0.0, NULL);
        CS_TEST_CHECK(close_to(t, 6 * (1e-6 + 1000 * 1e-9)), "gather into one port: %g", t);
        /* the combinations overlap with the next transfers: only the last
         * one adds to the time when gamma < beta */
        t = cs_stats_ab_time(s, 1000, 1e-6, 1e-9, 1e-10, NULL);
        CS_TEST_CHECK(close_to(t, 6 * (1e-6 + 1000 * 1e-9) + 1000 * 1e-10), "gamma overlap: %g", t);
        cs_stats_t sta;
        CS_TEST_CHECK(cs_stats_compute(s, &sta, NULL) == CS_OK && sta.rounds == 1 &&
                          sta.ranks[0].recvs == 6 && sta.ranks[0].sent == 0 &&
                          sta.ranks[3].sent == 1.0 && sta.max_recvd == 6.0,
                      "direct reduce stats");
        cs_stats_fini(&sta);
        cs_sched_destroy(s);
    }
    /* full duplex: 2 ranks exchange everything at once */
    s = recdbl(2, 1);
    if (s) {
        double t = cs_stats_ab_time(s, 500, 1e-6, 1e-9, 0, NULL);
        CS_TEST_CHECK(close_to(t, 1e-6 + 500e-9), "exchange is one message time: %g", t);
        cs_err_t err = {0};
        CS_TEST_CHECK(cs_stats_ab_time(s, 500, -1, 1e-9, 0, &err) < 0 && err.code == CS_ERR_INVAL,
                      "negative alpha refused");
        cs_sched_destroy(s);
    }
    /* an unmatched send cannot be timed */
    cs_coll_desc_t d = {CS_COLL_BROADCAST, 2, 0, 0};
    s = cs_sched_create(&d, 1, NULL);
    if (s) {
        cs_send(s, 0, 1, 0, cs_rng(CS_BUF_IN, 0, 1), NULL, 0);
        cs_err_t err = {0};
        CS_TEST_CHECK(cs_stats_ab_time(s, 10, 1, 1, 0, &err) < 0 && err.code == CS_ERR_VERIFY,
                      "stuck schedule: %s", err.msg);
        cs_stats_t sta;
        CS_TEST_CHECK(cs_stats_compute(s, &sta, NULL) == CS_OK && sta.rounds == 0 &&
                          sta.ranks[0].sends == 1,
                      "stats of a stuck schedule");
        cs_stats_fini(&sta);
        cs_sched_destroy(s);
    }
    cs_stats_fini(NULL);
}

int main(void)
{
    test_ring();
    test_recdbl();
    test_ports();
    return cs_test_finish();
}
