/*
 * prop_butterfly.c - properties of the butterfly family (allreduce `rd` and
 * `rhd`, reduce-scatter `rhalving`, allgather `rd` and `bruck`, alltoall
 * `bruck`):
 *   - allreduce rd on a power of two: log2 P full-vector messages per rank
 *     in log2 P rounds, alpha-beta time log2 P (alpha + n beta), one chunk;
 *   - allreduce rhd on 6 ranks: 4 segments; ranks 1 and 3 fold in and get
 *     the result back (1 send), the others 5;
 *   - allgather bruck on 7 ranks: rounds 1, 2, 4 (runs of 1, 2, 3 blocks,
 *     some wrapping): 3..6 sends a rank;
 *   - alltoall bruck: ceil(log2 P) sends on every rank;
 *   - costs: rhd's closed form 2 log2 P alpha + 2(P-1)/P n beta + (P-1)/P
 *     n gamma, bruck allgather's ceil(log2 P) alpha + (P-1)/P n beta; rd
 *     beats ring on tiny messages and loses on large ones.
 */
#include "algo_test.h"
#include "cs_stats.h"

static int ceil_log2(int P)
{
    int lg = 0;
    while ((1 << lg) < P)
        lg++;
    return lg;
}

static void test_rd_allreduce(void)
{
    for (int P = 1, lg = 0; P <= 512; P *= 2, lg++) {
        cs_sched_t *s = at_build_ok(CS_COLL_ALLREDUCE, "rd", P, 0, 0, NULL);
        if (!s)
            continue;
        cs_stats_t st;
        CS_TEST_CHECK(cs_stats_compute(s, &st, NULL) == CS_OK, "stats");
        int bad = 0;
        for (int r = 0; r < P; r++)
            bad += st.ranks[r].sent != lg || st.ranks[r].recvd != lg;
        CS_TEST_CHECK(bad == 0 && st.rounds == (uint32_t)lg, "rd P=%d: %d ranks off, rounds %u",
                      P, bad, st.rounds);
        cs_stats_fini(&st);
        uint64_t lo, hi;
        at_sends(s, &lo, &hi);
        CS_TEST_CHECK(lo == (uint64_t)lg && hi == (uint64_t)lg && s->nchunks == 1,
                      "rd P=%d: log2 P sends, %llu..%llu, %u chunks", P, (unsigned long long)lo,
                      (unsigned long long)hi, s->nchunks);
        double n = 1 << 20, alpha = 0.5, beta = 1.0 / 64;
        double t = cs_stats_ab_time(s, n, alpha, beta, 0, NULL);
        CS_TEST_CHECK(t == lg * (alpha + n * beta), "rd P=%d: %.17g", P, t);
        cs_sched_destroy(s);
    }
}

static void test_shapes(void)
{
    uint64_t lo, hi;
    cs_sched_t *s = at_build_ok(CS_COLL_ALLREDUCE, "rhd", 6, 0, 0, NULL);
    if (s) {
        at_sends(s, &lo, &hi);
        CS_TEST_CHECK(s->nchunks == 4 && lo == 1 && hi == 5, "rhd P=6: C %u, sends %llu..%llu",
                      s->nchunks, (unsigned long long)lo, (unsigned long long)hi);
        cs_sched_destroy(s);
    }
    s = at_build_ok(CS_COLL_ALLGATHER, "bruck", 7, 0, 0, NULL);
    if (s) {
        at_sends(s, &lo, &hi);
        CS_TEST_CHECK(lo >= 3 && hi <= 6, "bruck: 3 rounds, %llu..%llu sends",
                      (unsigned long long)lo, (unsigned long long)hi);
        cs_sched_destroy(s);
    }
    for (int P = 2; P <= 33; P += 5) {
        s = at_build_ok(CS_COLL_ALLTOALL, "bruck", P, 0, 0, NULL);
        if (s == NULL)
            continue;
        at_sends(s, &lo, &hi);
        CS_TEST_CHECK(lo == (uint64_t)ceil_log2(P) && hi == lo,
                      "alltoall bruck P=%d: %llu..%llu sends, want %d", P,
                      (unsigned long long)lo, (unsigned long long)hi, ceil_log2(P));
        cs_sched_destroy(s);
    }
}

static void test_costs(void)
{
    const cs_coll_t AR = CS_COLL_ALLREDUCE;
    cs_ab_model_t m = {2e-6, 1e-9, 5e-11};
    double n = 8e6, t = at_cost(AR, "rhd", 8, n, &m);
    double want = 6 * m.alpha + 2 * 7.0 / 8 * n * m.beta + 7.0 / 8 * n * m.gamma;
    CS_TEST_CHECK(fabs(t - want) < 1e-12, "rhd cost %g, want %g", t, want);
    CS_TEST_CHECK(at_cost(AR, "rd", 8, 8, &m) < at_cost(AR, "ring", 8, 8, &m),
                  "rd wins for tiny messages");
    CS_TEST_CHECK(at_cost(AR, "rd", 8, n, &m) > at_cost(AR, "ring", 8, n, &m),
                  "ring wins for large messages");
    t = at_cost(CS_COLL_ALLGATHER, "bruck", 5, n, &m);
    want = 3 * m.alpha + 4.0 / 5 * n * m.beta;
    CS_TEST_CHECK(fabs(t - want) < 1e-12, "bruck cost %g, want %g", t, want);
}

int main(void)
{
    test_rd_allreduce();
    test_shapes();
    test_costs();
    return cs_test_finish();
}
