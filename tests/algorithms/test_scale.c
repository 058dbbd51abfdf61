/*
 * test_scale.c - the generators at scale (label `scale`: minutes under the
 * sanitizers, so their pass skips it):
 *   - P = 1536 (the Summit example): allreduce ring (4.7 million sends,
 *     2P(P-1) exactly), rhd, hier 6x256 with the default and with ring+rhd,
 *     binomial and dbtree, broadcast and reduce binomial pass the verifier;
 *     torus2d is built; each stays under its memory limit;
 *   - P = 27,648: hier 6x4608 (ring+rhd) and 3x2x4608 (ring+direct+rhd)
 *     are built and stay small (build only: the verifier's per-chunk state
 *     is O(P x C), about 1.5 G slots there); allreduce binomial has exactly
 *     4(P-1) + P/2 steps (2 per edge and phase, one copy per inner node)
 *     and builds in under 5 s;
 *   - rhd and hier, whose generators split rank ranges over threads, build
 *     the same schedule on 3 threads at P = 1536 and 27,648 (ring's
 *     threads are checked by the matrix: a second ring at 1536 would double
 *     this test's time and memory).
 * Build times are printed; only the binomial one is asserted.
 *
 * Usage: test_scale [quick]   (quick: skip the verifier runs)
 */
#include <stdlib.h>
#include <time.h>

#include "algo_test.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Bytes the schedule's step and dependency arrays hold. */
static double sched_mb(const cs_sched_t *s)
{
    double b = 0;
    for (int r = 0; r < s->desc.nranks; r++)
        b += s->ranks[r].cap_steps * sizeof(cs_step_t) + s->ranks[r].cap_deps * 4.0;
    return b / 1e6;
}

enum { VERIFY = 1, THREADS = 2 };

static void large(cs_coll_t coll, const char *name, int P, const char *params, int flags,
                  double max_mb, int quick)
{
    char what[128];
    snprintf(what, sizeof(what), "%s %s P=%d %s", cs_coll_name(coll), name, P,
             params ? params : "");
    double t0 = now();
    cs_sched_t *s = at_build_ok(coll, name, P, P / 3, 0, params);
    double t1 = now();
    if (s == NULL)
        return;
    uint64_t sends = 0;
    for (int r = 0; r < P; r++)
        sends += at_count(s, r, CS_STEP_SEND);
    printf("%-40s build %.3f s, %llu steps, %llu sends, %.1f MB\n", what, t1 - t0,
           (unsigned long long)cs_sched_total_steps(s), (unsigned long long)sends, sched_mb(s));
    CS_TEST_CHECK(sched_mb(s) < max_mb, "%s holds %.1f MB (limit %.0f MB)", what, sched_mb(s),
                  max_mb);
    if (coll == CS_COLL_ALLREDUCE && strcmp(name, "ring") == 0 && params == NULL)
        CS_TEST_CHECK(sends == 2ull * P * (P - 1), "ring sends %llu", (unsigned long long)sends);
    if (flags & THREADS) {
        cs_sched_t *s3 = NULL;
        cs_err_t err;
        setenv("CS_GEN_THREADS", "3", 1);
        int st = at_build(cs_algo_find(coll, name), P, P / 3, 0, params, &s3, &err);
        unsetenv("CS_GEN_THREADS");
        CS_TEST_CHECK(st == CS_OK && cs_sched_digest(s3) == cs_sched_digest(s),
                      "%s: generated on 3 threads: %s", what,
                      st == CS_OK ? "a different schedule" : err.msg);
        cs_sched_destroy(s3);
    }
    if ((flags & VERIFY) && !quick) {
        double t2 = now();
        at_verify(s, what);
        printf("%-40s verify %.2f s\n", "", now() - t2);
    }
    cs_sched_destroy(s);
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    const cs_coll_t AR = CS_COLL_ALLREDUCE;
    /* memory limits are asserted; times are printed */
    large(AR, "ring", 1536, NULL, VERIFY, 700, quick);
    large(AR, "rhd", 1536, NULL, VERIFY | THREADS, 10, quick);
    large(AR, "hier", 1536, "dims=6x256", VERIFY | THREADS, 200, quick);
    large(AR, "hier", 1536, "dims=6x256,algos=ring+rhd", VERIFY, 10, quick);
    large(AR, "torus2d", 1536, NULL, 0, 150, quick);
    large(AR, "dbtree", 1536, "nchunks=4", VERIFY, 100, quick);
    large(AR, "binomial", 1536, NULL, VERIFY, 100, quick);
    large(CS_COLL_BROADCAST, "binomial", 1536, NULL, VERIFY, 100, quick);
    large(CS_COLL_REDUCE, "binomial", 1536, NULL, VERIFY, 100, quick);
    large(AR, "hier", 27648, "dims=6x4608,algos=ring+rhd", THREADS, 250, quick);
    large(AR, "hier", 27648, "dims=3x2x4608,algos=ring+direct+rhd", 0, 250, quick);

    double t0 = now();
    cs_sched_t *s = at_build_ok(AR, "binomial", 27648, 0, 0, NULL);
    double t1 = now();
    if (s) {
        CS_TEST_CHECK(cs_sched_total_steps(s) == 4ull * (27648 - 1) + 27648 / 2,
                      "binomial 27648: %llu steps", (unsigned long long)cs_sched_total_steps(s));
        printf("%-40s build %.3f s, %llu steps\n", "allreduce binomial P=27648", t1 - t0,
               (unsigned long long)cs_sched_total_steps(s));
        CS_TEST_CHECK(t1 - t0 < 5.0, "binomial 27648 took %.1f s to build", t1 - t0);
    }
    cs_sched_destroy(s);
    return cs_test_finish();
}
