/*
 * test_sim_switch.c - switch operations in the simulator (cs_sim.h,
 * "Switch operations") on an 8-GPU NVSwitch node whose switch reduces
 * (tests/sim/hgx8_nvls.xml: 450 GB/s per direction per GPU).
 *
 * The registry's allreduce nvls (NCCL's NVLS: load-reduce of each member's
 * slice, multicast back) with nchunks=256 depth=3: a member's link carries
 * S + S/n bytes up and S down, so the bound is link / (1 + 1/n) = 400 GB/s
 * of algbw.  From 64 MiB to 8 GiB algbw is within 2 % of it, with and
 * without NVLink latency: a contributor's next piece leaves as soon as its
 * previous one has left, each reader keeps `depth` pieces in flight, so the
 * link latency is paid once per pipeline, not once per piece.  Smaller
 * sizes are latency-bound (256 pieces per slice, 3 in flight): they are
 * printed, and also with nchunks=16 depth=4, the better choice there.
 *
 * Usage: sim_switch PLATFORM.xml
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_algo.h"
#include "cs_platform.h"
#include "cs_sim.h"
#include "cs_test.h"

#define N 8

static cs_sched_t *nvls(const char *params)
{
    const cs_algo_t *a = cs_algo_find(CS_COLL_ALLREDUCE, "nvls");
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, N, 0, 0};
    cs_params_t prm;
    cs_err_t err = {0, {0}};
    cs_sched_t *s = NULL;
    cs_params_init(&prm);
    int ok = a && cs_params_parse(&prm, params, &err) == CS_OK &&
             cs_algo_build(a, &d, &prm, &s, &err) == CS_OK;
    CS_TEST_CHECK(ok, "building allreduce nvls %s: %s", params, a ? err.msg : "not registered");
    return ok ? s : NULL;
}

/* Simulate the schedules built with big (checked: algbw from 64 MiB on at
 * least 98 % of the bound) and small (printed) at every size, in one run
 * (SimGrid runs one simulation per process). */
static void run(cs_platform_t *plat, const char *big, const char *small)
{
    static const uint64_t sizes[] = {1u << 20,   8u << 20,   64u << 20, 128u << 20,
                                     256u << 20, 1ull << 30, 8ull << 30};
    enum { NS = sizeof(sizes) / sizeof(sizes[0]) };
    const char *params[2] = {big, small};
    cs_sched_t *s[2] = {nvls(big), nvls(small)};
    cs_sim_instance_t in[2 * NS];
    cs_err_t err = {0, {0}};
    int st = s[0] && s[1] ? CS_OK : CS_ERR_INVAL;
    for (int k = 0; k < 2 * NS; k++)
        in[k] = (cs_sim_instance_t){s[k / NS], sizes[k % NS], CS_DT_F32, 0, CS_OP_SUM, NULL};
    if (st == CS_OK) {
        st = cs_sim_run(plat, NULL, in, 2 * NS, &err);
        CS_TEST_CHECK(st == CS_OK, "simulating: %s", err.msg);
    }
    double bound = 450e9 / (1.0 + 1.0 / N);
    for (int k = 0; k < 2 * NS && st == CS_OK; k++) {
        uint64_t size = sizes[k % NS];
        double algbw = (double)size / in[k].time;
        printf("nvls %s, 8 ranks, %llu bytes: %.2f us, algbw %.1f GB/s (%.3f of "
               "link/(1+1/n))\n",
               params[k / NS], (unsigned long long)size, in[k].time * 1e6, algbw / 1e9,
               algbw / bound);
        CS_TEST_CHECK(algbw < bound * (1.0 + 1e-9), "%llu bytes: algbw %.1f GB/s above the bound",
                      (unsigned long long)size, algbw / 1e9);
        if (k < NS && size >= 64u << 20)
            CS_TEST_CHECK(algbw / bound >= 0.98,
                          "%s, %llu bytes: algbw %.1f GB/s, expected 98 %% of %.1f or more",
                          big, (unsigned long long)size, algbw / 1e9, bound / 1e9);
    }
    cs_sched_destroy(s[0]);
    cs_sched_destroy(s[1]);
}

int main(int argc, char **argv)
{
    CS_TEST_REQUIRE(argc == 2, "usage: sim_switch PLATFORM.xml");
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
    run(plat, "nchunks=256,depth=3", "nchunks=16,depth=4");
    cs_platform_close(plat);
    return cs_test_finish();
}
