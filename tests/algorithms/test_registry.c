/*
 * test_registry.c - what every registry entry must have and do, whatever
 * its family:
 *   - the 27 algorithms are registered, each with a description, a
 *     parameter table, a build and a cost function; the 5 with switch
 *     steps (nvls, nvls_tree, sharp) say so (cs_algo_switched), the others
 *     not (hier only with a switch tier);
 *   - the closed-form cost is positive, grows with the message and is never
 *     below the bandwidth lower bound ((P-1)/P of the vector through one
 *     port, twice for allreduce without switch operations);
 *   - parameter errors: nchunks=0 is refused with a message by every
 *     algorithm that has nchunks, nchunks=2 by those that have not (an
 *     unknown key), and a failed build leaves *out untouched;
 *   - on P = 2, 7 and 16 the alpha-beta simulation of every schedule is
 *     within the model's bounds (rounds x alpha, the busiest port's bytes x
 *     beta) and bfloat16 results are exact; the table of simulated and
 *     closed-form times goes to stdout;
 *   - the matrix can fail: a verified schedule broken in two ways (a
 *     dependency dropped, a range moved) is refused by the verifier.
 */
#include <math.h>

#include "algo_test.h"
#include "cs_stats.h"

static const struct {
    cs_coll_t c;
    const char *n;
} all[] = {
    {CS_COLL_ALLREDUCE, "ring"},         {CS_COLL_ALLREDUCE, "rd"},
    {CS_COLL_ALLREDUCE, "rhd"},          {CS_COLL_ALLREDUCE, "direct"},
    {CS_COLL_ALLREDUCE, "hier"},         {CS_COLL_ALLREDUCE, "torus2d"},
    {CS_COLL_ALLREDUCE, "binomial"},     {CS_COLL_ALLREDUCE, "dbtree"},
    {CS_COLL_REDUCE_SCATTER, "ring"},    {CS_COLL_REDUCE_SCATTER, "rhalving"},
    {CS_COLL_REDUCE_SCATTER, "direct"},  {CS_COLL_ALLGATHER, "ring"},
    {CS_COLL_ALLGATHER, "rd"},           {CS_COLL_ALLGATHER, "bruck"},
    {CS_COLL_ALLGATHER, "direct"},       {CS_COLL_BROADCAST, "binomial"},
    {CS_COLL_BROADCAST, "chain"},        {CS_COLL_BROADCAST, "scatter_allgather"},
    {CS_COLL_REDUCE, "binomial"},        {CS_COLL_REDUCE, "ring"},
    {CS_COLL_ALLTOALL, "pairwise"},      {CS_COLL_ALLTOALL, "bruck"},
    {CS_COLL_ALLREDUCE, "nvls"},         {CS_COLL_ALLREDUCE, "nvls_tree"},
    {CS_COLL_ALLREDUCE, "sharp"},        {CS_COLL_REDUCE_SCATTER, "nvls"},
    {CS_COLL_ALLGATHER, "nvls"},
};
#define NALL ((int)(sizeof(all) / sizeof(all[0])))

static int has_param(const cs_algo_t *a, const char *key)
{
    for (const cs_param_desc_t *q = a->params; q->key != NULL; q++)
        if (strcmp(q->key, key) == 0)
            return 1;
    return 0;
}

static void test_entries(void)
{
    cs_ab_model_t m = {1e-6, 1e-9, 1e-10};
    CS_TEST_CHECK(cs_algo_count() >= NALL, "registry has %d algorithms, expected >= %d",
                  cs_algo_count(), NALL);
    for (int i = 0; i < NALL; i++) {
        const cs_algo_t *a = at_find(all[i].c, all[i].n);
        if (a == NULL)
            continue;
        CS_TEST_CHECK(a->desc && *a->desc && a->params && a->build && a->cost, "%s %s complete",
                      cs_coll_name(a->coll), a->name);
        int want = strncmp(a->name, "nvls", 4) == 0 || strcmp(a->name, "sharp") == 0;
        CS_TEST_CHECK(cs_algo_switched(a, NULL) == want, "%s %s: switched %d", cs_coll_name(a->coll),
                      a->name, cs_algo_switched(a, NULL));
        if (!a->cost)
            continue;
        cs_coll_desc_t d = {a->coll, 16, 0, 0};
        cs_params_t p;
        cs_params_init(&p);
        double t = a->cost(&d, &p, 1e6, &m), small = a->cost(&d, &p, 1e3, &m);
        /* switch algorithms: the switch reduces and multicasts, a member's
         * link carries the vector once each way */
        int sw = cs_algo_switched(a, NULL);
        double lb = (a->coll == CS_COLL_ALLREDUCE && !sw ? 2.0 : 1.0) * 15.0 / 16 * 1e6 * m.beta;
        CS_TEST_CHECK(t >= lb * 0.999 && t < 1.0, "%s %s cost %g (bound %g)",
                      cs_coll_name(a->coll), a->name, t, lb);
        CS_TEST_CHECK(small > 0 && t > small, "%s %s cost %g at 1 kB, %g at 1 MB",
                      cs_coll_name(a->coll), a->name, small, t);
    }
}

/* hier has switch steps only with a switch tier. */
static void test_hier_switched(void)
{
    const cs_algo_t *h = at_find(CS_COLL_ALLREDUCE, "hier");
    static const struct {
        const char *params;
        int want;
    } c[] = {{"dims=8x2,algos=nvls+sharp", 1}, {"dims=8x2,algos=ring+sharp", 1},
             {"algos=nvls", 1}, {"dims=8x2,algos=ring+rhd", 0}, {"dims=8x2", 0}};
    for (size_t i = 0; h != NULL && i < sizeof(c) / sizeof(c[0]); i++) {
        cs_params_t p;
        cs_params_init(&p);
        cs_err_t err;
        CS_TEST_CHECK(cs_params_parse(&p, c[i].params, &err) == CS_OK &&
                          cs_algo_switched(h, &p) == c[i].want,
                      "hier %s: switched should be %d", c[i].params, c[i].want);
    }
}

static void test_param_errors(void)
{
    for (int i = 0; i < cs_algo_count(); i++) {
        const cs_algo_t *a = cs_algo_at(i);
        int nc = has_param(a, "nchunks");
        cs_err_t err = {0};
        cs_sched_t *s = (cs_sched_t *)&err; /* must stay untouched */
        int st = at_build(a, 16, 0, 0, nc ? "nchunks=0" : "nchunks=2", &s, &err);
        CS_TEST_CHECK(st != CS_OK && s == (cs_sched_t *)&err && strstr(err.msg, "nchunks"),
                      "%s %s %s: %s %s", cs_coll_name(a->coll), a->name,
                      nc ? "nchunks=0 accepted" : "unknown nchunks accepted", cs_status_name(st),
                      err.msg);
        if (!nc)
            CS_TEST_CHECK(st == CS_ERR_INVAL, "%s %s unknown key: %s", cs_coll_name(a->coll),
                          a->name, cs_status_name(st));
    }
    cs_err_t err;
    cs_sched_t *s = NULL;
    int st = at_build(at_find(CS_COLL_ALLREDUCE, "ring"), 4, 0, 0, "nchunks=0", &s, &err);
    CS_TEST_CHECK(st == CS_ERR_PARSE && s == NULL, "ring nchunks=0: %s %s", cs_status_name(st),
                  err.msg);
    st = at_build(at_find(CS_COLL_REDUCE_SCATTER, "ring"), 4, 0, 1, NULL, &s, &err);
    CS_TEST_CHECK(st == CS_ERR_UNSUPPORTED && s == NULL && err.msg[0],
                  "reduce-scatter in place: %s %s", cs_status_name(st), err.msg);
}

/* Every generator: interpreter right, time within the model's bounds; the
 * simulated and closed-form times are printed side by side. */
static void test_ab_bounds(void)
{
    static const int Ps[] = {2, 7, 16};
    const double n = 1 << 24, alpha = 5e-6, beta = 1e-10;
    printf("%-15s %-18s %4s %7s %12s %12s\n", "collective", "algorithm", "P", "rounds",
           "ab_sim(us)", "formula(us)");
    for (int i = 0; i < cs_algo_count(); i++) {
        const cs_algo_t *a = cs_algo_at(i);
        for (size_t pi = 0; pi < sizeof(Ps) / sizeof(Ps[0]); pi++) {
            int P = Ps[pi];
            cs_sched_t *s = at_build_ok(a->coll, a->name, P, 0, 0, NULL);
            if (s == NULL)
                continue;
            char what[96];
            snprintf(what, sizeof(what), "%s %s P=%d", cs_coll_name(a->coll), a->name, P);
            cs_op_t op = (a->coll == CS_COLL_ALLGATHER || a->coll == CS_COLL_BROADCAST ||
                          a->coll == CS_COLL_ALLTOALL)
                             ? CS_OP_MAX
                             : CS_OP_SUM;
            at_interp(s, CS_DT_BF16, op, 11, what);
            cs_stats_t st;
            int rc = cs_stats_compute(s, &st, NULL);
            CS_TEST_CHECK(rc == CS_OK, "%s: stats %s", what, cs_status_name(rc));
            double t = cs_stats_ab_time(s, n, alpha, beta, 0, NULL);
            if (rc == CS_OK) {
                double busiest = fmax(st.max_sent, st.max_recvd) * n * beta;
                CS_TEST_CHECK(t >= st.rounds * alpha * (1 - 1e-12) && t >= busiest * 0.999,
                              "%s: %g below the bounds (rounds %u, port %g)", what, t, st.rounds,
                              busiest);
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

/* Break a verified schedule in two ways; the verifier must object. */
static void test_mutations(void)
{
    cs_verify_report_t rep;
    cs_err_t err = {0};
    cs_sched_t *s = at_build_ok(CS_COLL_ALLREDUCE, "ring", 5, 0, 0, NULL);
    if (s == NULL)
        return;
    CS_TEST_CHECK(at_verify(s, "ring P=5"), "the unbroken schedule verifies");
    cs_rank_sched_t *rk = &s->ranks[2];
    uint32_t i = 0;
    while (i < rk->nsteps && rk->steps[i].kind != CS_STEP_RRECV)
        i++;
    CS_TEST_CHECK(i < rk->nsteps, "ring has a reduce-receive");
    if (i == rk->nsteps) {
        cs_sched_destroy(s);
        return;
    }
    uint32_t saved = rk->steps[i].ndeps;
    rk->steps[i].ndeps = 0; /* reduce before the input was copied to out */
    CS_TEST_CHECK(cs_verify(s, NULL, &rep, &err) == CS_ERR_VERIFY, "missing dependency caught");
    cs_verify_report_fini(&rep);
    rk->steps[i].ndeps = saved;
    rk->steps[i].dst.off = (rk->steps[i].dst.off + 1) % 5; /* reduce into the wrong segment */
    CS_TEST_CHECK(cs_verify(s, NULL, &rep, &err) == CS_ERR_VERIFY, "wrong range caught");
    cs_verify_report_fini(&rep);
    cs_sched_destroy(s);
}

int main(void)
{
    test_entries();
    test_hier_switched();
    test_param_errors();
    test_ab_bounds();
    test_mutations();
    return cs_test_finish();
}
