/*
 * prop_direct.c - properties of the direct family (allreduce, reduce-scatter
 * and allgather `direct`, alltoall `pairwise`): every rank talks to every
 * other rank once per phase, so with the default parameters each rank sends
 * P-1 messages (2(P-1) for allreduce: a reduce-scatter, then an allgather);
 * pairwise's nchunks=k splits every block into k chunks, still sent in one
 * message per peer.
 */
#include "algo_test.h"

static void check_sends(cs_coll_t coll, const char *name, int P, const char *params,
                        uint64_t want, uint32_t chunks)
{
    cs_sched_t *s = at_build_ok(coll, name, P, 0, 0, params);
    if (s == NULL)
        return;
    uint64_t lo, hi;
    at_sends(s, &lo, &hi);
    CS_TEST_CHECK(lo == want && hi == want && s->nchunks == chunks,
                  "%s %s P=%d %s: %llu..%llu sends, want %llu; %u chunks, want %u",
                  cs_coll_name(coll), name, P, params ? params : "", (unsigned long long)lo,
                  (unsigned long long)hi, (unsigned long long)want, s->nchunks, chunks);
    cs_sched_destroy(s);
}

int main(void)
{
    for (int P = 1; P <= 33; P += (P < 9 ? 1 : 8)) {
        uint64_t n = (uint64_t)P - 1;
        check_sends(CS_COLL_REDUCE_SCATTER, "direct", P, NULL, n, (uint32_t)P);
        check_sends(CS_COLL_ALLGATHER, "direct", P, NULL, n, (uint32_t)P);
        check_sends(CS_COLL_ALLREDUCE, "direct", P, NULL, 2 * n, (uint32_t)P);
        check_sends(CS_COLL_ALLTOALL, "pairwise", P, NULL, n, (uint32_t)P);
        check_sends(CS_COLL_ALLTOALL, "pairwise", P, "nchunks=2", n, 2u * (uint32_t)P);
    }
    return cs_test_finish();
}
