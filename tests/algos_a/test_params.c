/*
 * test_params.c - registry entries, parameter errors, schedule shapes and
 * alpha-beta costs of the ring / butterfly / direct generators, and a
 * mutation check: breaking a verified schedule must make the verifier
 * object (so the matrix test can fail).
 */
#include <math.h>

#include "algos_a_util.h"

static int build_err(cs_coll_t coll, const char *name, int P, int inplace, const char *params,
                     cs_err_t *err)
{
    const cs_algo_t *a = cs_algo_find(coll, name);
    cs_coll_desc_t d = {coll, P, 0, inplace};
    cs_params_t p;
    cs_sched_t *s = NULL;
    cs_params_init(&p);
    cs_err_clear(err);
    if (params != NULL && cs_params_parse(&p, params, err) != CS_OK)
        return err->code;
    int st = cs_algo_build(a, &d, &p, &s, err);
    CS_TEST_CHECK(st == CS_OK || s == NULL, "out-param untouched on failure");
    cs_sched_destroy(s);
    return st;
}

static void test_registry(void)
{
    static const struct {
        cs_coll_t c;
        const char *n;
    } all[] = {
        {CS_COLL_ALLREDUCE, "ring"},      {CS_COLL_ALLREDUCE, "rd"},
        {CS_COLL_ALLREDUCE, "rhd"},       {CS_COLL_ALLREDUCE, "direct"},
        {CS_COLL_ALLREDUCE, "hier"},      {CS_COLL_ALLREDUCE, "torus2d"},
        {CS_COLL_REDUCE_SCATTER, "ring"}, {CS_COLL_REDUCE_SCATTER, "rhalving"},
        {CS_COLL_REDUCE_SCATTER, "direct"}, {CS_COLL_ALLGATHER, "ring"},
        {CS_COLL_ALLGATHER, "rd"},        {CS_COLL_ALLGATHER, "bruck"},
        {CS_COLL_ALLGATHER, "direct"},
    };
    cs_ab_model_t m = {1e-6, 1e-9, 1e-10};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        const cs_algo_t *a = cs_algo_find(all[i].c, all[i].n);
        CS_TEST_CHECK(a != NULL, "%s %s registered", cs_coll_name(all[i].c), all[i].n);
        if (a == NULL)
            continue;
        CS_TEST_CHECK(a->desc && *a->desc && a->params && a->build && a->cost, "%s complete",
                      a->name);
        cs_coll_desc_t d = {all[i].c, 16, 0, 0};
        cs_params_t p;
        cs_params_init(&p);
        double t = a->cost(&d, &p, 1e6, &m);
        /* every algorithm moves at least the bandwidth lower bound */
        double lb = (all[i].c == CS_COLL_ALLREDUCE ? 2.0 : 1.0) * 15.0 / 16 * 1e6 * m.beta;
        CS_TEST_CHECK(t >= lb * 0.999 && t < 1.0, "%s cost %g (bound %g)", a->name, t, lb);
    }
}

static void test_costs(void)
{
    cs_ab_model_t m = {2e-6, 1e-9, 5e-11};
    cs_params_t p;
    cs_params_init(&p);
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, 8, 0, 0};
    double n = 8e6;
    double ring = cs_algo_find(CS_COLL_ALLREDUCE, "ring")->cost(&d, &p, n, &m);
    double want = 14 * m.alpha + 2 * 7.0 / 8 * n * m.beta + 7.0 / 8 * n * m.gamma;
    CS_TEST_CHECK(fabs(ring - want) < 1e-12, "ring cost %g, want %g", ring, want);
    double rhd = cs_algo_find(CS_COLL_ALLREDUCE, "rhd")->cost(&d, &p, n, &m);
    want = 6 * m.alpha + 2 * 7.0 / 8 * n * m.beta + 7.0 / 8 * n * m.gamma;
    CS_TEST_CHECK(fabs(rhd - want) < 1e-12, "rhd cost %g, want %g", rhd, want);
    const cs_algo_t *rd = cs_algo_find(CS_COLL_ALLREDUCE, "rd");
    CS_TEST_CHECK(rd->cost(&d, &p, 8, &m) < ring, "rd wins for tiny messages");
    CS_TEST_CHECK(rd->cost(&d, &p, n, &m) > ring, "ring wins for large messages");
    d.coll = CS_COLL_ALLGATHER;
    d.nranks = 5;
    double br = cs_algo_find(CS_COLL_ALLGATHER, "bruck")->cost(&d, &p, n, &m);
    want = 3 * m.alpha + 4.0 / 5 * n * m.beta;
    CS_TEST_CHECK(fabs(br - want) < 1e-12, "bruck cost %g, want %g", br, want);
}

static void test_errors(void)
{
    cs_err_t err;
    int st = build_err(CS_COLL_ALLREDUCE, "hier", 12, 0, "dims=3x5", &err);
    CS_TEST_CHECK(st == CS_ERR_INVAL && strstr(err.msg, "product"), "dims product: %s", err.msg);
    st = build_err(CS_COLL_ALLREDUCE, "hier", 12, 0, "dims=3x4,algos=ring+tree", &err);
    CS_TEST_CHECK(st == CS_ERR_UNSUPPORTED && strstr(err.msg, "tree"), "bad algo: %s", err.msg);
    st = build_err(CS_COLL_ALLREDUCE, "hier", 12, 0, "dims=3x2x2,algos=ring+rhd", &err);
    CS_TEST_CHECK(st == CS_ERR_INVAL && strstr(err.msg, "tiers"), "algos count: %s", err.msg);
    st = build_err(CS_COLL_ALLREDUCE, "torus2d", 12, 0, "dims=5x2", &err);
    CS_TEST_CHECK(st == CS_ERR_INVAL && strstr(err.msg, "12"), "torus dims: %s", err.msg);
    st = build_err(CS_COLL_REDUCE_SCATTER, "ring", 4, 1, NULL, &err);
    CS_TEST_CHECK(st == CS_ERR_UNSUPPORTED, "reduce-scatter in place: %s", err.msg);
    st = build_err(CS_COLL_ALLREDUCE, "ring", 4, 0, "nchunks=0", &err);
    CS_TEST_CHECK(st == CS_ERR_PARSE && strstr(err.msg, "nchunks"), "nchunks 0: %s", err.msg);
    st = build_err(CS_COLL_ALLREDUCE, "rd", 4, 0, "nchunks=2", &err);
    CS_TEST_CHECK(st == CS_ERR_INVAL && strstr(err.msg, "nchunks"), "rd has no nchunks: %s",
                  err.msg);
    st = build_err(CS_COLL_ALLREDUCE, "hier", 6, 0, "dims=2x3,algos=direct", &err);
    CS_TEST_CHECK(st == CS_OK, "one algorithm for all tiers: %s", err.msg);
}

/* Count sends per rank and the largest number of messages of a rank. */
static void sends(const cs_sched_t *s, uint32_t *min, uint32_t *max)
{
    *min = UINT32_MAX;
    *max = 0;
    for (int r = 0; r < s->desc.nranks; r++) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < s->ranks[r].nsteps; i++)
            n += s->ranks[r].steps[i].kind == CS_STEP_SEND;
        *min = n < *min ? n : *min;
        *max = n > *max ? n : *max;
    }
}

static void test_shapes(void)
{
    uint32_t lo, hi;
    cs_sched_t *s = aa_build(CS_COLL_ALLREDUCE, "ring", 8, 0, "nchunks=2");
    if (s) {
        sends(s, &lo, &hi);
        CS_TEST_CHECK(lo == 28 && hi == 28 && s->nchunks == 16, "ring: 2(P-1)*2 sends, %u..%u",
                      lo, hi);
        cs_sched_destroy(s);
    }
    s = aa_build(CS_COLL_ALLREDUCE, "rd", 8, 0, NULL);
    if (s) {
        sends(s, &lo, &hi);
        CS_TEST_CHECK(lo == 3 && hi == 3 && s->nchunks == 1, "rd: log2 P sends, %u..%u", lo, hi);
        cs_sched_destroy(s);
    }
    s = aa_build(CS_COLL_ALLREDUCE, "rhd", 6, 0, NULL);
    if (s) { /* 4 segments; ranks 1 and 3 fold in and get the result back */
        sends(s, &lo, &hi);
        CS_TEST_CHECK(s->nchunks == 4 && lo == 1 && hi == 5, "rhd P=6: C %u, sends %u..%u",
                      s->nchunks, lo, hi);
        cs_sched_destroy(s);
    }
    s = aa_build(CS_COLL_ALLGATHER, "bruck", 7, 0, NULL);
    if (s) { /* rounds 1, 2, 4: runs of 1, 2, 3 blocks, some wrapping */
        sends(s, &lo, &hi);
        CS_TEST_CHECK(lo >= 3 && hi <= 6, "bruck: 3 rounds, %u..%u sends", lo, hi);
        cs_sched_destroy(s);
    }
    s = aa_build(CS_COLL_ALLREDUCE, "hier", 24, 0, "dims=6x4,algos=ring+rhd");
    if (s) { /* ring of 6: 2*5 sends; halving/doubling of 4: 2*2 sends */
        sends(s, &lo, &hi);
        CS_TEST_CHECK(lo == 14 && hi == 14, "hier 6x4 ring+rhd: %u..%u sends", lo, hi);
        cs_sched_destroy(s);
    }
}

/* Break a verified schedule in two ways; the verifier must object. */
static void test_mutations(void)
{
    cs_verify_report_t rep;
    cs_err_t err = {0};
    cs_sched_t *s = aa_build(CS_COLL_ALLREDUCE, "ring", 5, 0, NULL);
    if (s == NULL)
        return;
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
    test_registry();
    test_costs();
    test_errors();
    test_shapes();
    test_mutations();
    return cs_test_finish();
}
