/*
 * prop_hier.c - properties of the multi-tier family (allreduce `hier` and
 * `torus2d`):
 *   - tier layout errors: dims whose product is not P, an unknown inner
 *     algorithm (named in the message), more or fewer algorithms than
 *     tiers, a torus grid that does not hold P ranks; one algorithm for
 *     every tier is accepted;
 *   - the phases add up: hier 6x4 with ring inside and halving-doubling
 *     across sends 2x5 + 2x2 = 14 messages on every rank;
 *   - parameter effects: hier with one tier of all ranks is that tier's
 *     algorithm's message pattern (dims=P,algos=ring: 2(P-1) sends).
 * (P = 1536 and 27,648: test_scale.c.)
 */
#include "algo_test.h"

static void check_sends(int P, const char *params, uint64_t want)
{
    cs_sched_t *s = at_build_ok(CS_COLL_ALLREDUCE, "hier", P, 0, 0, params);
    if (s == NULL)
        return;
    uint64_t lo, hi;
    at_sends(s, &lo, &hi);
    CS_TEST_CHECK(lo == want && hi == want, "hier P=%d %s: %llu..%llu sends, want %llu", P,
                  params, (unsigned long long)lo, (unsigned long long)hi,
                  (unsigned long long)want);
    cs_sched_destroy(s);
}

int main(void)
{
    at_check_error("hier", 12, "dims=3x5", CS_ERR_INVAL, "product");
    at_check_error("hier", 12, "dims=3x4,algos=ring+tree", CS_ERR_UNSUPPORTED, "tree");
    at_check_error("hier", 12, "dims=3x2x2,algos=ring+rhd", CS_ERR_INVAL, "tiers");
    at_check_error("torus2d", 12, "dims=5x2", CS_ERR_INVAL, "12");
    cs_sched_t *s = at_build_ok(CS_COLL_ALLREDUCE, "hier", 6, 0, 0, "dims=2x3,algos=direct");
    cs_sched_destroy(s); /* one algorithm for all tiers */
    check_sends(24, "dims=6x4,algos=ring+rhd", 14);
    check_sends(7, "dims=7,algos=ring", 12);
    return cs_test_finish();
}
