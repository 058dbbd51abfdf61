/*
 * prop_rings.c - properties of the ring family (allreduce, reduce-scatter
 * and allgather `ring`):
 *   - allreduce: every rank sends and receives exactly 2(P-1)/P of the
 *     vector in 2(P-1) rounds; the alpha-beta simulation gives exactly
 *     2(P-1)(alpha + n/P beta); the closed-form cost is 2(P-1) alpha +
 *     2(P-1)/P n beta + (P-1)/P n gamma;
 *   - nchunks pipelines: with nchunks=2 on 8 ranks every rank sends
 *     2(P-1) x 2 messages over 16 chunks;
 *   - reduce-scatter and allgather: (P-1)/P of the vector per rank in P-1
 *     rounds, (P-1)(alpha + n/P beta).
 * (P = 1536: test_scale.c counts the 2P(P-1) sends.)
 */
#include "algo_test.h"
#include "cs_stats.h"

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fabs(b);
}

static void test_allreduce_volume(void)
{
    static const int Ps[] = {1, 2, 3, 5, 8, 12, 64, 257};
    for (size_t i = 0; i < sizeof(Ps) / sizeof(Ps[0]); i++) {
        int P = Ps[i];
        cs_sched_t *s = at_build_ok(CS_COLL_ALLREDUCE, "ring", P, 0, 0, NULL);
        if (!s)
            continue;
        cs_stats_t st;
        CS_TEST_CHECK(cs_stats_compute(s, &st, NULL) == CS_OK, "stats");
        double f = 2.0 * (P - 1) / P;
        int bad = 0;
        for (int r = 0; r < P; r++)
            bad += !close_to(st.ranks[r].sent, f) || !close_to(st.ranks[r].recvd, f);
        CS_TEST_CHECK(bad == 0 && (P == 1 || st.rounds == 2u * (uint32_t)(P - 1)),
                      "ring P=%d: %d ranks off 2(P-1)/P, rounds %u", P, bad, st.rounds);
        cs_stats_fini(&st);
        double n = 4096.0 * P, alpha = 0.25, beta = 1.0 / 1024;
        double t = cs_stats_ab_time(s, n, alpha, beta, 0, NULL);
        CS_TEST_CHECK(t == 2.0 * (P - 1) * (alpha + n / P * beta), "ring P=%d: %.17g", P, t);
        cs_sched_destroy(s);
    }
}

static void test_allreduce_shape(void)
{
    uint64_t lo, hi;
    cs_sched_t *s = at_build_ok(CS_COLL_ALLREDUCE, "ring", 8, 0, 0, "nchunks=2");
    if (s) {
        at_sends(s, &lo, &hi);
        CS_TEST_CHECK(lo == 28 && hi == 28 && s->nchunks == 16,
                      "ring nchunks=2: 2(P-1)*2 sends, %llu..%llu, %u chunks",
                      (unsigned long long)lo, (unsigned long long)hi, s->nchunks);
        cs_sched_destroy(s);
    }
}

static void test_allreduce_cost(void)
{
    cs_ab_model_t m = {2e-6, 1e-9, 5e-11};
    double n = 8e6, ring = at_cost(CS_COLL_ALLREDUCE, "ring", 8, n, &m);
    double want = 14 * m.alpha + 2 * 7.0 / 8 * n * m.beta + 7.0 / 8 * n * m.gamma;
    CS_TEST_CHECK(fabs(ring - want) < 1e-12, "ring cost %g, want %g", ring, want);
}

static void test_rs_ag_volume(void)
{
    static const cs_coll_t colls[] = {CS_COLL_REDUCE_SCATTER, CS_COLL_ALLGATHER};
    for (int c = 0; c < 2; c++) {
        for (int P = 2; P <= 40; P += 19) {
            cs_sched_t *s = at_build_ok(colls[c], "ring", P, 0, 0, NULL);
            if (!s)
                continue;
            cs_stats_t st;
            CS_TEST_CHECK(cs_stats_compute(s, &st, NULL) == CS_OK, "stats");
            double f = (double)(P - 1) / P;
            CS_TEST_CHECK(close_to(st.max_sent, f) && close_to(st.total_sent, f * P) &&
                              st.rounds == (uint32_t)(P - 1),
                          "%s ring P=%d: sent %g rounds %u", cs_coll_name(colls[c]), P,
                          st.max_sent, st.rounds);
            cs_stats_fini(&st);
            double n = 1024.0 * P; /* whole vector */
            double t = cs_stats_ab_time(s, n, 1.0, 1.0 / 32, 0, NULL);
            CS_TEST_CHECK(t == (P - 1) * (1.0 + n / P / 32), "%s ring P=%d: %.17g",
                          cs_coll_name(colls[c]), P, t);
            cs_sched_destroy(s);
        }
    }
}

int main(void)
{
    test_allreduce_volume();
    test_allreduce_shape();
    test_allreduce_cost();
    test_rs_ag_volume();
    return cs_test_finish();
}
