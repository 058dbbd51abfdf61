/* Statistics and alpha-beta times of the registered generators:
 *  - ring allreduce: every rank sends and receives exactly 2(P-1)/P of the
 *    vector in 2(P-1) rounds, time exactly 2(P-1)(alpha + n/P beta);
 *  - recursive doubling (power-of-two P): log2 P full messages per rank,
 *    time log2 P (alpha + n beta);
 *  - ring reduce-scatter / allgather: (P-1)/P per rank, (P-1) rounds;
 *  - every generator and P: the simulated time respects the bounds of the
 *    model (rounds * alpha, the busiest port's bytes * beta) and the
 *    interpreter computes the right numbers.
 * The table of simulated versus closed-form times goes to stdout. */
#include <math.h>
#include <string.h>

#include "cs_algo.h"
#include "cs_interp.h"
#include "cs_stats.h"
#include "cs_test.h"

static cs_sched_t *build(cs_coll_t coll, const char *name, int P)
{
    const cs_algo_t *a = cs_algo_find(coll, name);
    if (a == NULL)
        return NULL;
    cs_coll_desc_t d = {coll, P, 0, 0};
    cs_params_t prm;
    cs_params_init(&prm);
    cs_sched_t *s = NULL;
    cs_err_t err = {0};
    if (cs_algo_build(a, &d, &prm, &s, &err) != CS_OK) {
        fprintf(stderr, "%s/%s P=%d: %s\n", cs_coll_name(coll), name, P, err.msg);
        return NULL;
    }
    return s;
}

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fabs(b);
}

static void test_ring_allreduce(void)
{
    static const int Ps[] = {1, 2, 3, 5, 8, 12, 64, 257};
    for (size_t i = 0; i < sizeof(Ps) / sizeof(Ps[0]); i++) {
        int P = Ps[i];
        cs_sched_t *s = build(CS_COLL_ALLREDUCE, "ring", P);
        CS_TEST_CHECK(s != NULL, "allreduce ring P=%d", P);
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

static void test_rd_allreduce(void)
{
    for (int P = 1, lg = 0; P <= 512; P *= 2, lg++) {
        cs_sched_t *s = build(CS_COLL_ALLREDUCE, "rd", P);
        CS_TEST_CHECK(s != NULL, "allreduce rd P=%d", P);
        if (!s)
            continue;
        cs_stats_t st;
        CS_TEST_CHECK(cs_stats_compute(s, &st, NULL) == CS_OK, "stats");
        int bad = 0;
        for (int r = 0; r < P; r++)
            bad += st.ranks[r].sent != lg || st.ranks[r].recvd != lg;
        CS_TEST_CHECK(bad == 0 && st.rounds == (uint32_t)lg, "rd P=%d: %d ranks off, rounds %u", P,
                      bad, st.rounds);
        cs_stats_fini(&st);
        double n = 1 << 20, alpha = 0.5, beta = 1.0 / 64;
        double t = cs_stats_ab_time(s, n, alpha, beta, 0, NULL);
        CS_TEST_CHECK(t == lg * (alpha + n * beta), "rd P=%d: %.17g", P, t);
        cs_sched_destroy(s);
    }
}

static void test_ring_rs_ag(void)
{
    static const cs_coll_t colls[] = {CS_COLL_REDUCE_SCATTER, CS_COLL_ALLGATHER};
    for (int c = 0; c < 2; c++) {
        for (int P = 2; P <= 40; P += 19) {
            cs_sched_t *s = build(colls[c], "ring", P);
            CS_TEST_CHECK(s != NULL, "%s ring P=%d", cs_coll_name(colls[c]), P);
            if (!s)
                continue;
            cs_stats_t st;
            CS_TEST_CHECK(cs_stats_compute(s, &st, NULL) == CS_OK, "stats");
            double f = (double)(P - 1) / P;
            CS_TEST_CHECK(close_to(st.max_sent, f) && close_to(st.total_sent, f * P) &&
                              st.rounds == (uint32_t)(P - 1),
                          "%s ring P=%d: sent %g rounds %u", cs_coll_name(colls[c]), P, st.max_sent,
                          st.rounds);
            cs_stats_fini(&st);
            double n = 1024.0 * P; /* whole vector */
            double t = cs_stats_ab_time(s, n, 1.0, 1.0 / 32, 0, NULL);
            CS_TEST_CHECK(t == (P - 1) * (1.0 + n / P / 32), "%s ring P=%d: %.17g",
                          cs_coll_name(colls[c]), P, t);
            cs_sched_destroy(s);
        }
    }
}

/* Every generator: interpreter right, time within the model's bounds; the
 * simulated and closed-form times are printed side by side. */
static void test_all(void)
{
    static const int Ps[] = {2, 7, 16};
    const double n = 1 << 24, alpha = 5e-6, beta = 1e-10;
    printf("%-15s %-18s %4s %7s %12s %12s\n", "collective", "algorithm", "P", "rounds",
           "ab_sim(us)", "formula(us)");
    for (int i = 0; i < cs_algo_count(); i++) {
        const cs_algo_t *a = cs_algo_at(i);
        for (size_t pi = 0; pi < sizeof(Ps) / sizeof(Ps[0]); pi++) {
            int P = Ps[pi];
            cs_sched_t *s = build(a->coll, a->name, P);
            if (s == NULL)
                continue; /* unsupported P: the generator said why */
            cs_interp_result_t res;
            cs_op_t op = (a->coll == CS_COLL_ALLGATHER || a->coll == CS_COLL_BROADCAST ||
                          a->coll == CS_COLL_ALLTOALL)
                             ? CS_OP_MAX
                             : CS_OP_SUM;
            int rc = cs_interp_run(s, CS_DT_BF16, op, 11, &res, NULL);
            CS_TEST_CHECK(rc == CS_OK && res.wrong == 0, "%s/%s P=%d: interpreter %d, %llu wrong",
                          cs_coll_name(a->coll), a->name, P, rc, (unsigned long long)res.wrong);
            cs_stats_t st;
            rc = cs_stats_compute(s, &st, NULL);
            double t = cs_stats_ab_time(s, n, alpha, beta, 0, NULL);
            if (rc == CS_OK) {
                double busiest = fmax(st.max_sent, st.max_recvd) * n * beta;
                CS_TEST_CHECK(t >= st.rounds * alpha * (1 - 1e-12) && t >= busiest * 0.999,
                              "%s/%s P=%d: %g below the bounds (rounds %u, port %g)",
                              cs_coll_name(a->coll), a->name, P, t, st.rounds, busiest);
                cs_params_t prm;
                cs_params_init(&prm);
                cs_ab_model_t m = {alpha, beta, 0};
                double f = a->cost ? a->cost(&s->desc, &prm, n, &m) : NAN;
                printf("%-15s %-18s %4d %7u %12.2f %12.2f\n", cs_coll_name(a->coll), a->name, P,
                       st.rounds, t * 1e6, f * 1e6);
                cs_stats_fini(&st);
            }
            cs_sched_destroy(s);
        }
    }
}

int main(void)
{
    if (cs_algo_count() == 0)
        CS_TEST_SKIP("no generator registered");
    test_ring_allreduce();
    test_rd_allreduce();
    test_ring_rs_ag();
    test_all();
    return cs_test_finish();
}
