/*
 * test_matrix.c - every registered algorithm through one matrix:
 * P in {1,2,3,4,5,6,7,8,12,16,17,31,64} x element counts {0, 1, P-1, P, P+1,
 * a large odd count} x roots {0, P/2, P-1} for rooted collectives, plus the
 * extra parameter sets below.  For each case: the generator builds, the
 * verifier accepts, and the reference interpreter gives exact int32 sums,
 * exact int64 max and float sums within the stated tolerance (the test data
 * is chosen so float sums are exact too: tolerance 0).  Each schedule is
 * also generated with CS_GEN_THREADS=3 and must have the same digest.
 *
 * Usage: test_matrix [COLL [ALGO]]   (restrict to one collective/algorithm)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_algo.h"
#include "cs_dtype.h"
#include "cs_interp.h"
#include "cs_test.h"
#include "cs_verify.h"

static const int ranks_list[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 17, 31, 64};

/* Extra parameter sets per algorithm; "%F" is replaced by a factorization
 * of P into two factors (skipped when P is prime or 1). */
static const struct {
    const char *algo;
    const char *params;
} extras[] = {
    {"ring", "nchunks=3"},
    {"hier", "dims=%F"},
    {"hier", "dims=%F,algos=rhd+ring"},
    {"hier", "dims=%F,algos=direct+rhd"},
    {"torus2d", "dims=%F"},
    {"dbtree", "nchunks=4"},
    {"chain", "segments=3"},
};

static int smallest_factor(int p)
{
    for (int f = 2; f * f <= p; f++)
        if (p % f == 0)
            return f;
    return 0;
}

static int run_case(const cs_algo_t *a, int P, int root, const char *ptext)
{
    cs_coll_desc_t d = {a->coll, P, cs_coll_has_root(a->coll) ? root : 0, 0};
    cs_params_t params;
    cs_err_t err = {0};
    cs_sched_t *s = NULL;
    cs_params_init(&params);
    if (ptext && cs_params_parse(&params, ptext, &err) != CS_OK) {
        CS_TEST_CHECK(0, "bad test params %s: %s", ptext, err.msg);
        return 1;
    }
    int st = cs_algo_build(a, &d, &params, &s, &err);
    if (st == CS_ERR_UNSUPPORTED) {
        /* allowed, but it must say what is not supported */
        CS_TEST_CHECK(err.msg[0] != '\0', "%s %s P=%d: unsupported without a message",
                      cs_coll_name(a->coll), a->name, P);
        return 0;
    }
    CS_TEST_CHECK(st == CS_OK, "%s %s P=%d root=%d %s: build failed: %s", cs_coll_name(a->coll),
                  a->name, P, root, ptext ? ptext : "", err.msg);
    if (st != CS_OK)
        return 1;
    {
        /* generated on 3 threads (cs__phase_split): the same schedule */
        cs_sched_t *s3 = NULL;
        cs_err_t e3 = {0};
        setenv("CS_GEN_THREADS", "3", 1);
        int st3 = cs_algo_build(a, &d, &params, &s3, &e3);
        unsetenv("CS_GEN_THREADS");
        CS_TEST_CHECK(st3 == CS_OK && cs_sched_digest(s3) == cs_sched_digest(s),
                      "%s %s P=%d root=%d %s: generated on 3 threads: %s", cs_coll_name(a->coll),
                      a->name, P, root, ptext ? ptext : "",
                      st3 == CS_OK ? "a different schedule" : e3.msg);
        cs_sched_destroy(s3);
    }
    cs_verify_report_t rep = {0};
    st = cs_verify(s, NULL, &rep, &err);
    CS_TEST_CHECK(st == CS_OK, "%s %s P=%d root=%d %s: verifier: %s", cs_coll_name(a->coll),
                  a->name, P, root, ptext ? ptext : "",
                  rep.n ? rep.findings[0].msg : err.msg);
    cs_verify_report_fini(&rep);
    if (st == CS_OK) {
        uint64_t large = cs_coll_blocked(a->coll) ? 157 : 10007;
        uint64_t counts[] = {0, 1, (uint64_t)P - 1, (uint64_t)P, (uint64_t)P + 1, large};
        for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
            static const struct {
                cs_dtype_t dt;
                cs_op_t op;
            } kinds[] = {{CS_DT_I32, CS_OP_SUM}, {CS_DT_F32, CS_OP_SUM}, {CS_DT_I64, CS_OP_MAX}};
            for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
                /* float and max only on the small and the large count */
                if (k > 0 && i != 1 && i != 5)
                    continue;
                cs_interp_result_t res = {0};
                cs_err_clear(&err);
                st = cs_interp_run(s, kinds[k].dt, kinds[k].op, counts[i], &res, &err);
                CS_TEST_CHECK(st == CS_OK && res.wrong == 0,
                              "%s %s P=%d root=%d %s count=%llu %s %s: st=%d wrong=%llu "
                              "(first rank %d index %llu) %s",
                              cs_coll_name(a->coll), a->name, P, root, ptext ? ptext : "",
                              (unsigned long long)counts[i], cs_dtype_name(kinds[k].dt),
                              cs_op_name(kinds[k].op), st, (unsigned long long)res.wrong,
                              res.first_bad_rank, (unsigned long long)res.first_bad_index,
                              err.msg);
            }
        }
    }
    cs_sched_destroy(s);
    return 0;
}

int main(int argc, char **argv)
{
    const char *only_coll = argc > 1 ? argv[1] : NULL;
    const char *only_algo = argc > 2 ? argv[2] : NULL;
    int nalgos = 0;
    for (int i = 0; i < cs_algo_count(); i++) {
        const cs_algo_t *a = cs_algo_at(i);
        if (only_coll && a->coll != cs_coll_parse(only_coll))
            continue;
        if (only_algo && strcmp(a->name, only_algo) != 0)
            continue;
        nalgos++;
        for (size_t pi = 0; pi < sizeof(ranks_list) / sizeof(ranks_list[0]); pi++) {
            int P = ranks_list[pi];
            int roots[3] = {0, P / 2, P - 1};
            int nroots = cs_coll_has_root(a->coll) ? 3 : 1;
            for (int ri = 0; ri < nroots; ri++) {
                if (ri > 0 && roots[ri] == roots[ri - 1])
                    continue;
                run_case(a, P, roots[ri], NULL);
            }
            for (size_t e = 0; e < sizeof(extras) / sizeof(extras[0]); e++) {
                if (strcmp(extras[e].algo, a->name) != 0)
                    continue;
                char text[128];
                const char *pct = strstr(extras[e].params, "%F");
                if (pct) {
                    int f = smallest_factor(P);
                    if (f == 0)
                        continue;
                    snprintf(text, sizeof(text), "%.*s%dx%d%s", (int)(pct - extras[e].params),
                             extras[e].params, f, P / f, pct + 2);
                } else {
                    snprintf(text, sizeof(text), "%s", extras[e].params);
                }
                run_case(a, P, P - 1, text);
            }
        }
    }
    CS_TEST_CHECK(nalgos > 0, "no algorithm matched");
    CS_TEST_CHECK(cs_algo_count() >= 22, "registry has %d algorithms, expected >= 22",
                      cs_algo_count());
    return cs_test_finish();
}
