/*
 * Speed of the text format on a big schedule: a ring allreduce on P ranks
 * (P chunks; reduce-scatter then allgather, 4(P-1)+1 steps per rank: about
 * 9.4 million steps, 4.7 million transfers at P = 1536) is written to
 * /dev/null (timed), to memory, parsed back and written again.  Asserts the
 * round trip (same bytes, same schedule) and prints wall and CPU times (the
 * machine is shared: CPU time is the steadier figure).
 *
 * usage: bench_text [P] [MAX_SECONDS]   (defaults 256 and no time limit)
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cs_test.h"
#include "cs_text.h"
#include "sched_same.h"

static double clk(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct stamp {
    double wall, cpu;
} stamp_t;

static stamp_t now(void)
{
    stamp_t t = {clk(CLOCK_MONOTONIC), clk(CLOCK_PROCESS_CPUTIME_ID)};
    return t;
}

/* Ring: at step t rank r sends chunk (r - t) of out to r + 1 and receives
 * chunk (r - t - 1) from r - 1, reducing it during the first P-1 steps.
 * A send waits for the receive of the previous step (or the first copy). */
static cs_sched_t *ring(int P)
{
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, P, 0, 0};
    cs_err_t err = {0};
    cs_sched_t *s = cs_sched_create(&d, (uint32_t)P, &err);
    if (s == NULL)
        return NULL;
    cs_sched_set_meta(s, "ring", "bench=1");
    for (int r = 0; r < P; r++) {
        int next = (r + 1) % P, prev = (r + P - 1) % P;
        uint32_t last = (uint32_t)cs_copy(s, r, cs_rng(CS_BUF_IN, 0, (uint32_t)P),
                                          cs_rng(CS_BUF_OUT, 0, (uint32_t)P), NULL, 0);
        for (int t = 0; t < 2 * (P - 1); t++) {
            uint32_t cs = (uint32_t)(((r - t) % P + P) % P);
            uint32_t cr = (uint32_t)(((r - t - 1) % P + P) % P);
            cs_send(s, r, next, 0, cs_rng(CS_BUF_OUT, cs, 1), &last, 1);
            int64_t rcv = t < P - 1 ? cs_rrecv(s, r, prev, 0, cs_rng(CS_BUF_OUT, cr, 1), &last, 1)
                                    : cs_recv(s, r, prev, 0, cs_rng(CS_BUF_OUT, cr, 1), &last, 1);
            last = (uint32_t)rcv;
        }
    }
    if (cs_sched_status(s) != CS_OK) {
        cs_sched_destroy(s);
        return NULL;
    }
    return s;
}

int main(int argc, char **argv)
{
    int P = argc > 1 ? atoi(argv[1]) : 256;
    double limit = argc > 2 ? atof(argv[2]) : 0;
    cs_err_t err = {0};
    cs_sched_t *s = ring(P);
    CS_TEST_REQUIRE(s != NULL, "building the ring on %d ranks", P);
    size_t l1 = 0, l2 = 0;
    FILE *devnull = fopen("/dev/null", "w");
    CS_TEST_REQUIRE(devnull != NULL, "/dev/null");
    stamp_t t0 = now();
    int rc = cs_sched_write(s, devnull);
    stamp_t t1 = now();
    fclose(devnull);
    CS_TEST_CHECK(rc == CS_OK, "write to /dev/null");
    char *t = cs_test_write_mem(s, &l1);
    CS_TEST_REQUIRE(t != NULL, "write");
    stamp_t t2 = now();
    cs_sched_t *s2 = cs_sched_parse(t, l1, "bench", &err);
    stamp_t t3 = now();
    CS_TEST_REQUIRE(s2 != NULL, "parse: %s", err.msg);
    char *u = cs_test_write_mem(s2, &l2);
    CS_TEST_CHECK(u != NULL && l1 == l2 && memcmp(t, u, l1) == 0, "round trip bytes");
    CS_TEST_CHECK(cs_test_sched_diff(s, s2) == NULL, "round trip schedule");
    double n = (double)cs_sched_total_steps(s);
    double ww = t1.wall - t0.wall, wc = t1.cpu - t0.cpu;
    double pw = t3.wall - t2.wall, pc = t3.cpu - t2.cpu;
    printf("ring allreduce P=%d: %.0f steps, %.1f MB of text\n", P, n, (double)l1 / 1e6);
    printf("  write: %.2f s wall, %.2f s cpu (%.1f Msteps/s cpu)\n", ww, wc, n / wc / 1e6);
    printf("  parse: %.2f s wall, %.2f s cpu (%.1f Msteps/s cpu)\n", pw, pc, n / pc / 1e6);
    if (limit > 0)
        CS_TEST_CHECK(wc < limit && pc < limit, "write %.2f s / parse %.2f s cpu over %.1f s", wc,
                      pc, limit);
    free(u);
    free(t);
    cs_sched_destroy(s2);
    cs_sched_destroy(s);
    return cs_test_finish();
}
