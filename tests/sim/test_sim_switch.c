/*
 * test_sim_switch.c - switch operations in the simulator (cs_sim.h,
 * "Switch operations") on an 8-GPU NVSwitch node whose switch reduces
 * (tests/sim/hgx8_nvls.xml: 450 GB/s per direction per GPU).
 *
 * NCCL's NVLS allreduce, hand-built: member i owns slice i of the vector,
 * cut into `nc` chunks; for each chunk j, every member takes part in the
 * load-reduce of chunk j of every slice (channel 0; member i reads the
 * result) and in its multicast (channel 1; member i writes it, the others
 * receive it).  Member i's multicast of a chunk waits for its load-reduce;
 * a contributor's part in the load-reduce of chunk j of a slice waits for
 * its part in chunk j - 1 (done once its contribution has reached the
 * switch), so each slice's load-reduces follow each other on every link
 * while the reader receives the previous chunk's result.  A member's link
 * carries S + S/n bytes up and S down: the bound is link / (1 + 1/n) =
 * 400 GB/s of algbw.
 *
 * Usage: sim_switch PLATFORM.xml bw|lat
 *   bw   a platform without latencies: the bandwidths alone give algbw
 *        within 2 % of the bound from 64 MiB to 8 GiB (the pipeline's
 *        fill and drain cost the rest);
 *   lat  the same node with 0.3 us NVLink latency: each chunk of a slice
 *        waits for the previous one's contributions to arrive, so every
 *        step of the pipeline pays a link latency; within 2 % at 8 GiB,
 *        at least 85 % of the bound from 64 MiB.  Smaller sizes are
 *        latency-bound; all are printed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_platform.h"
#include "cs_sim.h"
#include "cs_test.h"
#include "cs_verify.h"

#define N 8

/* The NVLS allreduce on N ranks, nc chunks per slice. */
static cs_sched_t *nvls(int nc)
{
    cs_coll_desc_t d = {.coll = CS_COLL_ALLREDUCE, .nranks = N};
    cs_err_t err = {0, {0}};
    cs_sched_t *s = cs_sched_create(&d, (uint32_t)(N * nc), &err);
    if (!s)
        return NULL;
    snprintf(s->algo, sizeof(s->algo), "nvls-hand");
    int32_t m[N];
    for (int r = 0; r < N; r++)
        m[r] = r;
    int g = cs_sched_add_group(s, "nvl", m, N);
    uint32_t *red = calloc((size_t)N * nc, sizeof(uint32_t)); /* [slice][chunk] step */
    for (int r = 0; red && r < N; r++)
        for (int j = 0; j < nc; j++) {
            for (int i = 0; i < N; i++) {
                uint32_t c = (uint32_t)(i * nc + j);
                cs_range_t in = cs_rng(CS_BUF_IN, c, 1), out = cs_rng(CS_BUF_OUT, c, 1);
                int chain = r != i && j > 0;
                uint32_t dep = chain ? red[i * nc + j - 1] : 0;
                red[i * nc + j] = (uint32_t)cs_switch(s, r, CS_SW_REDUCE, g, 0, &in,
                                                      r == i ? &out : NULL, chain ? &dep : NULL,
                                                      (uint32_t)chain);
            }
            for (int i = 0; i < N; i++) {
                uint32_t c = (uint32_t)(i * nc + j);
                cs_range_t out = cs_rng(CS_BUF_OUT, c, 1);
                uint32_t dep = red[i * nc + j];
                if (r == i)
                    cs_switch(s, r, CS_SW_MULTICAST, g, 1, &out, NULL, &dep, 1);
                else
                    cs_switch(s, r, CS_SW_MULTICAST, g, 1, NULL, &out, NULL, 0);
            }
        }
    free(red);
    if (!red || cs_sched_status(s) != CS_OK) {
        cs_sched_destroy(s);
        return NULL;
    }
    return s;
}

int main(int argc, char **argv)
{
    CS_TEST_REQUIRE(argc == 3, "usage: sim_switch PLATFORM.xml bw|lat");
    int bw_only = strcmp(argv[2], "bw") == 0;
    cs_platform_t *plat = NULL;
    cs_err_t err = {0, {0}};
    CS_TEST_REQUIRE(cs_platform_open(argv[1], &plat, &err) == CS_OK, "%s", err.msg);
    CS_TEST_REQUIRE(plat->nswitches == 1 && plat->switches[0].nhosts == N &&
                        strcmp(plat->switches[0].host, "nvswitch") == 0 &&
                        plat->switches[0].kind == CS_REDUCE_NVLS,
                    "one nvls switch serving the 8 GPUs (%d)", plat->nswitches);
    CS_TEST_CHECK(cs_platform_switch_reduces(&plat->switches[0], CS_DT_BF16, CS_OP_MAX) &&
                      !cs_platform_switch_reduces(&plat->switches[0], CS_DT_F32, CS_OP_MAX) &&
                      !cs_platform_switch_reduces(&plat->switches[0], CS_DT_F16, CS_OP_PROD),
                  "NVLS reduces what multimem.ld_reduce does");

    cs_sched_t *s = nvls(128);
    CS_TEST_REQUIRE(s, "building the schedule");
    cs_verify_report_t rep;
    CS_TEST_REQUIRE(cs_verify(s, NULL, &rep, &err) == CS_OK, "the schedule verifies: %s",
                    err.msg);
    cs_verify_report_fini(&rep);

    static const uint64_t sizes[] = {1u << 20, 8u << 20, 64u << 20, 256u << 20,
                                     1ull << 30, 8ull << 30};
    enum { NS = sizeof(sizes) / sizeof(sizes[0]) };
    cs_sim_instance_t in[NS];
    for (int k = 0; k < NS; k++)
        in[k] = (cs_sim_instance_t){s, sizes[k], CS_DT_F32, 0, CS_OP_SUM};
    CS_TEST_REQUIRE(cs_sim_run(plat, NULL, in, NS, &err) == CS_OK, "%s", err.msg);
    double bound = 450e9 / (1.0 + 1.0 / N);
    for (int k = 0; k < NS; k++) {
        double algbw = (double)sizes[k] / in[k].time;
        printf("nvls 8 ranks, %llu bytes: %.2f us, algbw %.1f GB/s (%.2f of link/(1+1/n))\n",
               (unsigned long long)sizes[k], in[k].time * 1e6, algbw / 1e9, algbw / bound);
        double want = bw_only || sizes[k] >= 8ull << 30 ? 0.98 : 0.85;
        if (sizes[k] >= 64u << 20)
            CS_TEST_CHECK(algbw / bound >= want && algbw / bound < 1.0 + 1e-9,
                          "%llu bytes: algbw %.1f GB/s, expected %.0f %% of %.1f or more",
                          (unsigned long long)sizes[k], algbw / 1e9, want * 100, bound / 1e9);
        else
            CS_TEST_CHECK(algbw < bound, "%llu bytes: algbw %.1f GB/s above the bound",
                          (unsigned long long)sizes[k], algbw / 1e9);
    }
    cs_sched_destroy(s);
    cs_platform_close(plat);
    return cs_test_finish();
}
