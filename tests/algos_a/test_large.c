/*
 * test_large.c - generators at scale: ring allreduce on 1536 ranks (the
 * Summit example, 4.7 million sends) must build in well under a second;
 * ring, rhd and hier 6x256 at P = 1536 must pass the verifier; hier on
 * 27648 ranks (6 x 4608, rhd on the outer tier) must build fast and stay
 * small (build only: the verifier's per-chunk state is O(P * C), about
 * 1.5 G slots there).
 *
 * Usage: test_algos_a_large [quick]  (quick: skip the verifier runs)
 */
#include <time.h>

#include "algos_a_util.h"

static double clk(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
static double now(void)
{
    return clk(CLOCK_MONOTONIC);
}
/* CPU time (user + system) is printed for information only. */
static double cpu(void)
{
    return clk(CLOCK_PROCESS_CPUTIME_ID);
}

/* Bytes the schedule's step and dependency arrays hold. */
static double sched_bytes(const cs_sched_t *s)
{
    double b = 0;
    for (int r = 0; r < s->desc.nranks; r++)
        b += s->ranks[r].cap_steps * sizeof(cs_step_t) + s->ranks[r].cap_deps * 4.0;
    return b;
}

static void large(const char *name, int P, const char *params, int verify, double max_mb)
{
    double t0 = now(), c0 = cpu();
    cs_sched_t *s = aa_build(CS_COLL_ALLREDUCE, name, P, 0, params);
    double t1 = now(), c1 = cpu();
    if (s == NULL)
        return;
    uint64_t sends = 0;
    for (int r = 0; r < P; r++)
        for (uint32_t i = 0; i < s->ranks[r].nsteps; i++)
            sends += s->ranks[r].steps[i].kind == CS_STEP_SEND;
    printf("%-8s P=%-6d %-36s build %.3f s wall %.3f s cpu, %llu steps, %llu sends, %.1f MB\n",
           name, P, params ? params : "", t1 - t0, c1 - c0, (unsigned long long)cs_sched_total_steps(s),
           (unsigned long long)sends, sched_bytes(s) / 1e6);
    CS_TEST_CHECK(sched_bytes(s) / 1e6 < max_mb, "%s P=%d holds %.1f MB (limit %.0f MB)", name, P,
                  sched_bytes(s) / 1e6, max_mb);
    if (strcmp(name, "ring") == 0 && params == NULL)
        CS_TEST_CHECK(sends == 2ull * P * (P - 1), "ring sends %llu", (unsigned long long)sends);
    if (verify) {
        char what[96];
        snprintf(what, sizeof(what), "%s P=%d %s", name, P, params ? params : "");
        double t2 = now();
        aa_verify(s, what);
        printf("         verify %.2f s\n", now() - t2);
    }
    cs_sched_destroy(s);
}

int main(int argc, char **argv)
{
    int verify = !(argc > 1 && strcmp(argv[1], "quick") == 0);
    /* memory limits are asserted; times are printed, never asserted */
    large("ring", 1536, NULL, verify, 700);
    large("rhd", 1536, NULL, verify, 10);
    large("hier", 1536, "dims=6x256", verify, 200);
    large("hier", 1536, "dims=6x256,algos=ring+rhd", verify, 10);
    large("torus2d", 1536, NULL, 0, 150);
    large("hier", 27648, "dims=6x4608,algos=ring+rhd", 0, 250);
    large("hier", 27648, "dims=3x2x4608,algos=ring+direct+rhd", 0, 250);
    return cs_test_finish();
}
