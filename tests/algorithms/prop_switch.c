/*
 * prop_switch.c - properties of the algorithms made of switch operations
 * (allreduce nvls, nvls_tree, sharp, hier with nvls and sharp tiers,
 * reduce-scatter nvls, allgather nvls):
 *   - group sizes 1..9, 16, 17, 64 and 72 (beyond the matrix's list): the
 *     verifier accepts every schedule, in place and out of place, and the
 *     interpreter's results equal the naive computation for every element
 *     type and operator;
 *   - traffic through the switch (cs_stats): an NVLS allreduce member
 *     contributes 1 + 1/n of the vector and receives 1, NVLS reduce-scatter
 *     1 and 1/n, NVLS all-gather 1/n and 1, SHARP 1 and 1; operation counts;
 *     on one rank no switch step and no group (text format version 1);
 *   - pipelining: in nvls the multicast of a piece waits for its reduce
 *     only, and the next reduce for the previous reduce only;
 *   - the switch step count (s->nswitch) is right when hier's generator
 *     splits the ranks over threads;
 *   - costs: nvls is (nchunks + 1) alpha + S (1 + 1/n) beta, so 8 members
 *     at 450 GB/s per link reach an algbw of 400 GB/s;
 *   - errors: an unknown inter-domain algorithm, a sharp tier that is not
 *     the outermost one.
 */
#include <stdlib.h>

#include "algo_test.h"
#include "cs_stats.h"

static const int sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 64, 72};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))

static int smallest_factor(int p)
{
    for (int f = 2; f * f <= p; f++)
        if (p % f == 0)
            return f;
    return 0;
}

/* Verify, then interpret on every element type and operator; `sw`: the
 * schedule has switch steps. */
static void every_kind(cs_coll_t coll, const char *name, int P, int inplace, const char *params,
                       int sw)
{
    char what[160];
    snprintf(what, sizeof(what), "%s %s P=%d%s %s", cs_coll_name(coll), name, P,
             inplace ? " inplace" : "", params ? params : "");
    cs_sched_t *s = at_build_ok(coll, name, P, 0, inplace, params);
    if (s == NULL)
        return;
    CS_TEST_CHECK((s->nswitch > 0) == sw, "%s: %llu switch steps", what,
                  (unsigned long long)s->nswitch);
    if (at_verify(s, what)) {
        const uint64_t counts[] = {1, 157};
        for (int t = 0; t < CS_DT_COUNT; t++)
            for (int o = 0; o < CS_OP_COUNT; o++)
                for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
                    if (!at_interp(s, (cs_dtype_t)t, (cs_op_t)o, counts[c], what))
                        goto done; /* one report per schedule */
        at_interp(s, CS_DT_I32, CS_OP_SUM, 0, what);
        at_interp(s, CS_DT_F32, CS_OP_SUM, (uint64_t)P * 13 + 1, what);
    }
done:
    cs_sched_destroy(s);
}

static void test_sizes(void)
{
    for (int k = 0; k < NSIZES; k++) {
        int P = sizes[k], f = smallest_factor(P);
        char hier[64];
        if (f > 0)
            snprintf(hier, sizeof(hier), "dims=%dx%d,algos=nvls+sharp", P / f, f);
        else
            snprintf(hier, sizeof(hier), "algos=nvls");
        for (int inplace = 0; inplace < 2; inplace++) {
            int sw = P > 1; /* one rank: no switch step */
            every_kind(CS_COLL_ALLREDUCE, "nvls", P, inplace, NULL, sw);
            every_kind(CS_COLL_ALLREDUCE, "nvls_tree", P, inplace, NULL, sw);
            every_kind(CS_COLL_ALLREDUCE, "nvls_tree", P, inplace, "local=4,inter=ring", sw);
            every_kind(CS_COLL_ALLREDUCE, "sharp", P, inplace, NULL, sw);
            /* one node: the chain alone */
            every_kind(CS_COLL_ALLREDUCE, "sharp", P, inplace, "local=8", P > 8);
            every_kind(CS_COLL_ALLREDUCE, "hier", P, inplace, hier, sw);
            every_kind(CS_COLL_ALLGATHER, "nvls", P, inplace, "nchunks=2", sw);
        }
        every_kind(CS_COLL_REDUCE_SCATTER, "nvls", P, 0, "nchunks=2", P > 1);
    }
}

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b) + 1e-30);
}

/* Switch traffic per member (fractions of the vector) and operation counts. */
static void check_traffic(cs_coll_t coll, const char *name, int P, int inplace,
                          const char *params, double up, double down, uint64_t reduces,
                          uint64_t multicasts, uint64_t allreduces)
{
    cs_sched_t *s = at_build_ok(coll, name, P, 0, inplace, params);
    if (s == NULL)
        return;
    cs_stats_t st;
    int rc = cs_stats_compute(s, &st, NULL);
    CS_TEST_CHECK(rc == CS_OK, "%s %s P=%d: stats %s", cs_coll_name(coll), name, P,
                  cs_status_name(rc));
    if (rc == CS_OK) {
        for (int r = 0; r < P; r++)
            CS_TEST_CHECK(near(st.ranks[r].sw_up, up) && near(st.ranks[r].sw_down, down),
                          "%s %s P=%d %s rank %d: switch up %g down %g, want %g %g",
                          cs_coll_name(coll), name, P, params ? params : "", r,
                          st.ranks[r].sw_up, st.ranks[r].sw_down, up, down);
        CS_TEST_CHECK(st.sw_ops[CS_SW_REDUCE] == reduces &&
                          st.sw_ops[CS_SW_MULTICAST] == multicasts &&
                          st.sw_ops[CS_SW_ALLREDUCE] == allreduces,
                      "%s %s P=%d: %llu reduce, %llu multicast, %llu allreduce operations",
                      cs_coll_name(coll), name, P, (unsigned long long)st.sw_ops[CS_SW_REDUCE],
                      (unsigned long long)st.sw_ops[CS_SW_MULTICAST],
                      (unsigned long long)st.sw_ops[CS_SW_ALLREDUCE]);
        cs_stats_fini(&st);
    }
    cs_sched_destroy(s);
}

static void test_traffic(void)
{
    for (int n = 2; n <= 9; n += 7) {
        check_traffic(CS_COLL_ALLREDUCE, "nvls", n, 0, NULL, 1.0 + 1.0 / n, 1.0, 4u * n, 4u * n,
                      0);
        check_traffic(CS_COLL_REDUCE_SCATTER, "nvls", n, 0, NULL, 1.0, 1.0 / n, (uint64_t)n, 0,
                      0);
        check_traffic(CS_COLL_ALLGATHER, "nvls", n, 0, NULL, 1.0 / n, 1.0, 0, (uint64_t)n, 0);
        check_traffic(CS_COLL_ALLGATHER, "nvls", n, 1, NULL, 1.0 / n, (n - 1.0) / n, 0,
                      (uint64_t)n, 0);
        check_traffic(CS_COLL_ALLREDUCE, "sharp", n, 0, "nchunks=3", 1.0, 1.0, 0, 0, 3);
    }
    /* two domains of 8: 8 slices x 4 pieces reduced and multicast in each */
    check_traffic(CS_COLL_ALLREDUCE, "nvls_tree", 16, 0, NULL, 1.0 + 1.0 / 8, 1.0, 64, 64, 0);
    /* 8 x 9 NVLS nodes, SHARP of each rank's eighth among the 9 nodes: up
     * 1 (load-reduce) + 1/8 (SHARP) + 1/8 (multicast), down 1/8 + 1/8 +
     * 7/8 (the writer's eighth is in place) */
    check_traffic(CS_COLL_ALLREDUCE, "hier", 72, 0, "dims=8x9,algos=nvls+sharp", 1.25, 1.125,
                  72, 72, 8);
    /* leaders only: ranks 0 and 4 of 8 */
    cs_sched_t *s = at_build_ok(CS_COLL_ALLREDUCE, "sharp", 8, 0, 0, "local=4,nchunks=2");
    for (int r = 0; s != NULL && r < 8; r++)
        CS_TEST_CHECK(at_count(s, r, CS_STEP_SWITCH) == (r % 4 == 0 ? 2u : 0u),
                      "sharp local=4 rank %d: %llu switch steps", r,
                      (unsigned long long)at_count(s, r, CS_STEP_SWITCH));
    cs_sched_destroy(s);
    /* one rank: nothing for a switch to do, a version-1 schedule */
    static const struct {
        cs_coll_t c;
        const char *n;
    } one[] = {{CS_COLL_ALLREDUCE, "nvls"},      {CS_COLL_ALLREDUCE, "nvls_tree"},
               {CS_COLL_ALLREDUCE, "sharp"},     {CS_COLL_REDUCE_SCATTER, "nvls"},
               {CS_COLL_ALLGATHER, "nvls"}};
    for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
        s = at_build_ok(one[i].c, one[i].n, 1, 0, 0, NULL);
        CS_TEST_CHECK(s != NULL && !cs_sched_has_switch(s), "%s %s P=1: switch steps",
                      cs_coll_name(one[i].c), one[i].n);
        cs_sched_destroy(s);
    }
}

/* nvls on 4 ranks, 3 pieces, depth 2: rank 0's steps are, per piece, the
 * reduces of the 4 slices then their multicasts.  A contributor's reduce
 * waits for its previous piece of the slice; the reader's (slice 0) for its
 * multicast of the piece `depth` before; a multicast for its reduce only. */
static void test_pipeline(void)
{
    const int P = 4, nc = 3, depth = 2;
    cs_sched_t *s = at_build_ok(CS_COLL_ALLREDUCE, "nvls", P, 0, 0, "nchunks=3,depth=2");
    if (s == NULL)
        return;
    const cs_rank_sched_t *rk = &s->ranks[0];
    for (int q = 0; q < nc; q++)
        for (int j = 0; j < P; j++) {
            uint32_t ri = (uint32_t)(2 * P * q + j), mi = ri + (uint32_t)P;
            const cs_step_t *r = &rk->steps[ri], *m = &rk->steps[mi];
            const uint32_t *rd = cs_step_deps(rk, r), *md = cs_step_deps(rk, m);
            int wait = j == 0 ? q >= depth : q > 0;
            uint32_t on = j == 0 ? mi - (uint32_t)(2 * P * depth) : ri - (uint32_t)(2 * P);
            CS_TEST_CHECK(r->kind == CS_STEP_SWITCH && r->op == CS_SW_REDUCE &&
                              r->ndeps == (uint32_t)wait && (!wait || rd[0] == on),
                          "nvls reduce piece %d slice %d: waits for %s", q, j,
                          !wait ? "nothing" : j == 0 ? "the multicast depth pieces before"
                                                     : "the previous piece");
            CS_TEST_CHECK(m->kind == CS_STEP_SWITCH && m->op == CS_SW_MULTICAST &&
                              m->ndeps == 1 && md[0] == ri,
                          "nvls multicast piece %d slice %d: waits for its reduce only", q, j);
        }
    const cs_step_t *end = &rk->steps[2 * P * nc];
    CS_TEST_CHECK(rk->nsteps == 2u * P * nc + 1 && end->kind == CS_STEP_NOP &&
                      end->ndeps == (uint32_t)(P * nc),
                  "nvls: a last nop joins the %d multicasts", P * nc);
    cs_sched_destroy(s);
}

/* Built on 3 threads, hier's schedule counts its switch steps right. */
static void test_threads(void)
{
    setenv("CS_GEN_THREADS", "3", 1);
    cs_sched_t *s = at_build_ok(CS_COLL_ALLREDUCE, "hier", 72, 0, 0,
                                "dims=8x9,algos=nvls+sharp,nchunks=2");
    unsetenv("CS_GEN_THREADS");
    uint64_t n = 0;
    for (int r = 0; s != NULL && r < 72; r++)
        n += at_count(s, r, CS_STEP_SWITCH);
    CS_TEST_CHECK(s != NULL && n > 0 && s->nswitch == n && s->ngroups == 9 + 8,
                  "hier on 3 threads: nswitch %llu, %llu switch steps, %u groups",
                  (unsigned long long)(s ? s->nswitch : 0), (unsigned long long)n,
                  s ? s->ngroups : 0);
    cs_sched_destroy(s);
}

static void test_costs(void)
{
    const double S = 1 << 30, link = 450e9;
    cs_ab_model_t m = {0, 1.0 / link, 0};
    double t = at_cost(CS_COLL_ALLREDUCE, "nvls", 8, S, &m);
    CS_TEST_CHECK(near(S / t, link / (1 + 1.0 / 8)), "nvls 8 ranks: algbw %g GB/s, want 400",
                  S / t / 1e9);
    cs_ab_model_t ma = {2e-6, 1.0 / link, 1e-12};
    /* nchunks=4 depth=4: one wait for a reduce and its multicast, the last
     * multicast; depth=1: a wait per piece */
    t = at_cost(CS_COLL_ALLREDUCE, "nvls", 8, S, &ma);
    CS_TEST_CHECK(near(t, 2 * 2e-6 + S * 1.125 / link), "nvls cost %g", t);
    const cs_algo_t *nv = at_find(CS_COLL_ALLREDUCE, "nvls");
    cs_coll_desc_t d8 = {CS_COLL_ALLREDUCE, 8, 0, 0};
    cs_params_t prm;
    cs_err_t err = {0, {0}};
    cs_params_init(&prm);
    int ok = nv && cs_params_parse(&prm, "nchunks=256,depth=3", &err) == CS_OK;
    CS_TEST_CHECK(ok, "nvls nchunks=256,depth=3: %s", err.msg);
    t = ok ? nv->cost(&d8, &prm, S, &ma) : 0;
    CS_TEST_CHECK(near(t, 87 * 2e-6 + S * 1.125 / link), "nvls nchunks=256 depth=3 cost %g", t);
    t = at_cost(CS_COLL_ALLREDUCE, "sharp", 64, S, &ma);
    CS_TEST_CHECK(near(t, 2e-6 + S / link), "sharp cost %g", t);
    /* its reduces and multicasts are chains: a wait per piece, as depth=1 */
    CS_TEST_CHECK(near(at_cost(CS_COLL_ALLREDUCE, "nvls_tree", 8, S, &ma),
                       5 * 2e-6 + S * 1.125 / link),
                  "nvls_tree on one domain costs what nvls depth=1 costs");
    CS_TEST_CHECK(at_cost(CS_COLL_ALLREDUCE, "nvls_tree", 64, S, &ma) >
                      at_cost(CS_COLL_ALLREDUCE, "nvls", 8, S, &ma),
                  "nvls_tree across 8 domains costs more than one domain");
    CS_TEST_CHECK(at_cost(CS_COLL_ALLREDUCE, "nvls", 1, S, &ma) == 0, "nvls on one rank");
}

int main(void)
{
    test_sizes();
    test_traffic();
    test_pipeline();
    test_threads();
    test_costs();
    at_check_error("nvls_tree", 16, "inter=star", CS_ERR_INVAL, "inter");
    at_check_error("hier", 6, "dims=2x3,algos=sharp+ring", CS_ERR_UNSUPPORTED, "outermost");
    at_check_error("hier", 6, "dims=2x3,algos=ring+tree", CS_ERR_UNSUPPORTED, "sharp");
    return cs_test_finish();
}
