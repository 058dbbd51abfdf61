/*
 * test_nccl.c - NCCL's cost model (model/cs_nccl.h) against hand-computed
 * values.  The system is written out as NCCL's search finds it on one node
 * of 8 x H100 SXM on NVSwitch (18 NVLink4 links of 20.6 GB/s as NCCL counts
 * them: 370.8 GB/s per GPU): Ring and Tree 12 channels x 30 GB/s, NVLS 8
 * channels x 40 GB/s (60 across), so that every expected figure below is
 * arithmetic on NCCL's constants:
 *   Ring/LL latency  6.6 + 14 x 0.6 = 15.0 us
 *   Ring/LL bw       min(llMaxBw, 12 x 30 x f) x 8/14
 *                    2.25.1: min(141, 180) x 8/14 = 80.571 GB/s
 *                    2.20.5: min(87.7, 90) x 8/14 = 50.114 GB/s
 *   NVLS             8 x min(40, 60) x 5/6 = 266.67 GB/s; 25 us (23 in 2.20.5)
 *   2.29.7 NVLS      8 x min(40 x .85 x 7/8 x 2, 60) x 8/14 = 272.0 GB/s
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cs_nccl.h"
#include "cs_test.h"


static void h100_node(cs_nccl_sys_t *s)
{
    memset(s, 0, sizeof(*s));
    s->nranks = 8, s->nnodes = 1, s->nhosts = 1;
    s->arch = CS_NCCL_HOPPER, s->cc = 90, s->nvls = 1;
    for (int a = 0; a < CS_NCCL_NALGOS; a++)
        s->graph[a] = (cs_nccl_graph_t){12, 30, 30, CS_SIM_HW_NVLINK};
    s->graph[CS_NCCL_COLLNET_DIRECT].nch = 8;
    s->graph[CS_NCCL_NVLS] = (cs_nccl_graph_t){8, 40, 60, CS_SIM_HW_NVLINK};
    s->graph[CS_NCCL_NVLS_TREE] = s->graph[CS_NCCL_NVLS];
    s->nvls_channels = 16, s->nvls_heads = 8;
}

#define NEAR(x, y, tol) (fabs((x) - (y)) <= (tol))

/* Under --model nccl, algo's pipeline fill and drain at `bytes` is twice
 * `iter` bytes copied at the GPU's NVLink rate of 370 GB/s. */
static void fill_is(const cs_nccl_consts_t *k, const cs_nccl_sys_t *s, const cs_sched_t *sched,
                    int algo, uint64_t bytes, double iter, const char *what)
{
    cs_sim_nccl_t c;
    cs_nccl_step_costs(k, s, sched, algo, CS_NCCL_SIMPLE, bytes, &c);
    CS_TEST_CHECK(NEAR(c.sw_fill / c.sw_rate, 2.0 * iter / 370e9, 1e-9), "%s fill %g us", what,
                  1e6 * c.sw_fill / c.sw_rate);
}

int main(void)
{
    int exact = 0;
    const cs_nccl_consts_t *k = cs_nccl_consts_for("v2.25.1-1", 0, &exact);
    CS_TEST_REQUIRE(k && exact && strcmp(k->version, "2.25.1") == 0, "2.25.1 found exactly");
    const cs_nccl_consts_t *k20 = cs_nccl_consts_for("2.20", 0, &exact);
    CS_TEST_CHECK(k20 && strcmp(k20->version, "2.20.5") == 0,
                  "2.20 served by 2.20.5 (same major.minor), got %s", k20 ? k20->version : "-");
    const cs_nccl_consts_t *k21 = cs_nccl_consts_for("2.22.3", 0, &exact);
    CS_TEST_CHECK(k21 && !exact && strcmp(k21->version, "2.21.5") == 0,
                  "2.22.3 served by 2.21.5 (nearest earlier), got %s", k21 ? k21->version : "-");
    const cs_nccl_consts_t *k23 = cs_nccl_consts_for("2.24", 0, &exact);
    CS_TEST_CHECK(k23 && !exact && strcmp(k23->version, "2.23.4") == 0,
                  "2.24 served by 2.23.4, got %s", k23 ? k23->version : "-");
    const cs_nccl_consts_t *k29 = cs_nccl_consts_for(NULL, 0, &exact);
    CS_TEST_CHECK(k29 && strcmp(k29->version, "2.29.7") == 0, "default is the newest");
    CS_TEST_CHECK(cs_nccl_consts_for("2.x", 0, &exact) == NULL, "a bad version is refused");
    const cs_nccl_consts_t *k1 = cs_nccl_consts_for("1.0", 0, &exact);
    CS_TEST_CHECK(k1 && strcmp(k1->version, "2.20.5") == 0, "older than the table: the oldest");

    cs_nccl_sys_t s;
    h100_node(&s);
    float lat[CS_NCCL_NALGOS][CS_NCCL_NPROTOS], bw[CS_NCCL_NALGOS][CS_NCCL_NPROTOS];
    cs_nccl_tune(k, &s, CS_COLL_ALLREDUCE, lat, bw);
    CS_TEST_CHECK(NEAR(lat[CS_NCCL_RING][CS_NCCL_LL], 15.0, 1e-4), "ring LL lat %g",
                  lat[CS_NCCL_RING][CS_NCCL_LL]);
    CS_TEST_CHECK(NEAR(bw[CS_NCCL_RING][CS_NCCL_LL], 141.0 * 8 / 14, 1e-3), "ring LL bw %g",
                  bw[CS_NCCL_RING][CS_NCCL_LL]);
    /* Ring/LL128: 14 + 14 x 1.9 = 40.6 us; min(360 x .92, 12 x 36.7) x 8/14 */
    CS_TEST_CHECK(NEAR(lat[CS_NCCL_RING][CS_NCCL_LL128], 40.6, 1e-3), "ring LL128 lat %g",
                  lat[CS_NCCL_RING][CS_NCCL_LL128]);
    CS_TEST_CHECK(NEAR(bw[CS_NCCL_RING][CS_NCCL_LL128], 331.2 * 8 / 14, 1e-2), "ring LL128 bw %g",
                  bw[CS_NCCL_RING][CS_NCCL_LL128]);
    /* Ring/Simple: 8.4 + 14 x 3.4 = 56 us; 360 x 8/14 = 205.71 */
    CS_TEST_CHECK(NEAR(lat[CS_NCCL_RING][CS_NCCL_SIMPLE], 56.0, 1e-3), "ring Simple lat");
    CS_TEST_CHECK(NEAR(bw[CS_NCCL_RING][CS_NCCL_SIMPLE], 360.0 * 8 / 14, 1e-2), "ring Simple bw");
    CS_TEST_CHECK(NEAR(lat[CS_NCCL_NVLS][CS_NCCL_SIMPLE], 25.0, 1e-4), "NVLS lat %g",
                  lat[CS_NCCL_NVLS][CS_NCCL_SIMPLE]);
    CS_TEST_CHECK(NEAR(bw[CS_NCCL_NVLS][CS_NCCL_SIMPLE], 320.0 * 5 / 6, 1e-2), "NVLS bw %g",
                  bw[CS_NCCL_NVLS][CS_NCCL_SIMPLE]);
    CS_TEST_CHECK(bw[CS_NCCL_NVLS][CS_NCCL_LL] == 0 && bw[CS_NCCL_NVLS_TREE][CS_NCCL_SIMPLE] == 0,
                  "NVLS has Simple only, NVLSTree needs several nodes");
    /* Tree/Simple on one node: 8.4 + 2 x 7 x 4.0 = 64.4 us; min(360 x .92, 12 x 38.7) x .5 */
    CS_TEST_CHECK(NEAR(lat[CS_NCCL_TREE][CS_NCCL_SIMPLE], 64.4, 1e-3), "tree Simple lat %g",
                  lat[CS_NCCL_TREE][CS_NCCL_SIMPLE]);
    CS_TEST_CHECK(NEAR(bw[CS_NCCL_TREE][CS_NCCL_SIMPLE], 165.6, 1e-2), "tree Simple bw %g",
                  bw[CS_NCCL_TREE][CS_NCCL_SIMPLE]);

    /* the choice: 1 MiB Ring/LL (15 + 1048576 / 80571 = 28.01 us against
     * NVLS's 25 + 3.93 = 28.93), 2 MiB NVLS (32.86 against 41.03) */
    int a, p;
    double us;
    CS_TEST_REQUIRE(cs_nccl_choose(k, &s, CS_COLL_ALLREDUCE, 1 << 20, -1, -1, &a, &p, &us) == CS_OK,
                    "choose 1 MiB");
    CS_TEST_CHECK(a == CS_NCCL_RING && p == CS_NCCL_LL && NEAR(us, 15.0 + 1048576 / 80571.43, 1e-2),
                  "1 MiB: Ring/LL %g us, got %s/%s", us, cs_nccl_algo_name(a), cs_nccl_proto_name(p));
    cs_nccl_choose(k, &s, CS_COLL_ALLREDUCE, 2 << 20, -1, -1, &a, &p, &us);
    CS_TEST_CHECK(a == CS_NCCL_NVLS && p == CS_NCCL_SIMPLE && NEAR(us, 25.0 + 2097152 / 266666.7, 1e-2),
                  "2 MiB: NVLS %g us, got %s/%s", us, cs_nccl_algo_name(a), cs_nccl_proto_name(p));
    /* NCCL_ALGO=Ring NCCL_PROTO=Simple */
    cs_nccl_choose(k, &s, CS_COLL_ALLREDUCE, 1 << 20, CS_NCCL_RING, CS_NCCL_SIMPLE, &a, &p, &us);
    CS_TEST_CHECK(a == CS_NCCL_RING && p == CS_NCCL_SIMPLE && NEAR(us, 56.0 + 1048576 / 205714.3, 1e-2),
                  "forced Ring/Simple %g", us);
    /* 2.20.5: 512 KiB goes to NVLS (23 + 1.97 = 24.97 against Ring/LL's 15 + 10.46) */
    cs_nccl_choose(k20, &s, CS_COLL_ALLREDUCE, 512 << 10, -1, -1, &a, &p, &us);
    CS_TEST_CHECK(a == CS_NCCL_NVLS && NEAR(us, 23.0 + 524288 / 266666.7, 1e-2),
                  "2.20.5 512 KiB: NVLS %g, got %s", us, cs_nccl_algo_name(a));
    cs_nccl_tune(k20, &s, CS_COLL_ALLREDUCE, lat, bw);
    CS_TEST_CHECK(NEAR(bw[CS_NCCL_RING][CS_NCCL_LL], 87.7 * 8 / 14, 1e-3), "2.20.5 ring LL bw %g",
                  bw[CS_NCCL_RING][CS_NCCL_LL]);
    /* 2.21.5: Hopper's LL limit 141 and Ring LL at x 1/2 (min(141, 180) x
     * 8/14), NVLS's 25 us, Tree/Simple still 28 us a step (6.6 + 2 x 7 x 28
     * ... as 2.20.5), NVLS all-gather still at 5/6 of its bus bandwidth */
    cs_nccl_tune(k21, &s, CS_COLL_ALLREDUCE, lat, bw);
    CS_TEST_CHECK(NEAR(bw[CS_NCCL_RING][CS_NCCL_LL], 141.0 * 8 / 14, 1e-3) &&
                      NEAR(lat[CS_NCCL_NVLS][CS_NCCL_SIMPLE], 25.0, 1e-4),
                  "2.21.5 ring LL bw %g, NVLS %g us", bw[CS_NCCL_RING][CS_NCCL_LL],
                  lat[CS_NCCL_NVLS][CS_NCCL_SIMPLE]);
    {
        float lat20[CS_NCCL_NALGOS][CS_NCCL_NPROTOS], bw20[CS_NCCL_NALGOS][CS_NCCL_NPROTOS];
        cs_nccl_tune(k20, &s, CS_COLL_ALLREDUCE, lat20, bw20);
        CS_TEST_CHECK(NEAR(lat[CS_NCCL_TREE][CS_NCCL_SIMPLE], lat20[CS_NCCL_TREE][CS_NCCL_SIMPLE], 1e-4),
                      "2.21.5 Tree/Simple %g us as 2.20.5's %g", lat[CS_NCCL_TREE][CS_NCCL_SIMPLE],
                      lat20[CS_NCCL_TREE][CS_NCCL_SIMPLE]);
    }
    cs_nccl_tune(k21, &s, CS_COLL_ALLGATHER, lat, bw);
    CS_TEST_CHECK(NEAR(bw[CS_NCCL_NVLS][CS_NCCL_SIMPLE], 320.0 * 5 / 6, 1e-2) &&
                      bw[CS_NCCL_PAT][CS_NCCL_SIMPLE] == 0,
                  "2.21.5 AG NVLS %g, no PAT", bw[CS_NCCL_NVLS][CS_NCCL_SIMPLE]);
    /* 2.29.7's NVLS formula */
    cs_nccl_tune(k29, &s, CS_COLL_ALLREDUCE, lat, bw);
    CS_TEST_CHECK(NEAR(bw[CS_NCCL_NVLS][CS_NCCL_SIMPLE], 8 * 59.5 * 8 / 14, 1e-2), "2.29.7 NVLS %g",
                  bw[CS_NCCL_NVLS][CS_NCCL_SIMPLE]);

    /* per-step costs of Ring/LL (2.25.1): 0.6 us per NVLink step, 6.6 once,
     * half the wire, the pair's bus bandwidth min(141, 180) as the cap */
    cs_sched_t sched;
    memset(&sched, 0, sizeof(sched));
    sched.desc.coll = CS_COLL_ALLREDUCE;
    sched.desc.nranks = 8;
    snprintf(sched.algo, sizeof(sched.algo), "ring");
    cs_sim_nccl_t c;
    cs_nccl_step_costs(k, &s, &sched, CS_NCCL_RING, CS_NCCL_LL, 64 << 20, &c);
    CS_TEST_CHECK(NEAR(c.lat[CS_SIM_HW_NVLINK], 0.6e-6, 1e-12) && NEAR(c.base_lat, 6.6e-6, 1e-12),
                  "ring LL step latency %g base %g", c.lat[CS_SIM_HW_NVLINK], c.base_lat);
    CS_TEST_CHECK(NEAR(c.eff[CS_SIM_HW_NVLINK], 0.5, 1e-9) && NEAR(c.cap[CS_SIM_HW_NVLINK], 141e9, 1e3),
                  "ring LL eff %g cap %g", c.eff[CS_SIM_HW_NVLINK], c.cap[CS_SIM_HW_NVLINK]);
    /* 64 KiB of Ring/LL on 8 ranks: NCCL drops channels while 512 threads x
     * 64 B (8 x nRanks) each exceed the bytes: 2 of the 24; traffic 128 KiB
     * / 16 KiB = 8 does not cut further: the cap is 2/24 of 141 GB/s */
    snprintf(sched.params, sizeof(sched.params), "nchunks=1");
    cs_nccl_step_costs(k, &s, &sched, CS_NCCL_RING, CS_NCCL_LL, 64 << 10, &c);
    CS_TEST_CHECK(NEAR(c.cap[CS_SIM_HW_NVLINK], 141e9 * 2 / 24, 1e3), "64 KiB LL cap %g",
                  c.cap[CS_SIM_HW_NVLINK]);
    CS_TEST_CHECK(cs_nccl_channels(k, &s, CS_COLL_ALLREDUCE, CS_NCCL_RING, CS_NCCL_LL, 64 << 10) == 2,
                  "64 KiB Ring/LL on 2 channels, got %d",
                  cs_nccl_channels(k, &s, CS_COLL_ALLREDUCE, CS_NCCL_RING, CS_NCCL_LL, 64 << 10));
    /* 64 KiB of Ring/LL128: 640 threads x 8 B leave 12 of the 24; from 2.23
     * the traffic (128 KiB / 16 KiB) cuts to 8, 2.20.5 keeps 12 */
    CS_TEST_CHECK(cs_nccl_channels(k, &s, CS_COLL_ALLREDUCE, CS_NCCL_RING, CS_NCCL_LL128, 64 << 10) == 8 &&
                      cs_nccl_channels(k23, &s, CS_COLL_ALLREDUCE, CS_NCCL_RING, CS_NCCL_LL128, 64 << 10) == 8 &&
                      cs_nccl_channels(k20, &s, CS_COLL_ALLREDUCE, CS_NCCL_RING, CS_NCCL_LL128, 64 << 10) == 12,
                  "64 KiB Ring/LL128 channels: 2.25.1 %d, 2.23.4 %d, 2.20.5 %d",
                  cs_nccl_channels(k, &s, CS_COLL_ALLREDUCE, CS_NCCL_RING, CS_NCCL_LL128, 64 << 10),
                  cs_nccl_channels(k23, &s, CS_COLL_ALLREDUCE, CS_NCCL_RING, CS_NCCL_LL128, 64 << 10),
                  cs_nccl_channels(k20, &s, CS_COLL_ALLREDUCE, CS_NCCL_RING, CS_NCCL_LL128, 64 << 10));
    CS_TEST_CHECK(cs_nccl_channels(k, &s, CS_COLL_ALLREDUCE, CS_NCCL_RING, CS_NCCL_SIMPLE, 1u << 30) == 24 &&
                  cs_nccl_channels(k, &s, CS_COLL_ALLREDUCE, CS_NCCL_NVLS, CS_NCCL_SIMPLE, 1u << 30) == 8,
                  "1 GiB: Ring on all 24 channels, NVLS on its graph's 8");
    /* NCCL's choice as a schedule: a ring in pieces of 12 channels x 2 MiB
     * (1 GiB / 8 / 24 MiB = 5.33 -> 6), NVLS in 128 KiB pieces (at most 256) */
    char nm[32], prm[96];
    cs_nccl_as_sched(&s, CS_COLL_ALLREDUCE, CS_NCCL_RING, CS_NCCL_SIMPLE, 1u << 30, nm, sizeof(nm),
                     prm, sizeof(prm));
    CS_TEST_CHECK(strcmp(nm, "ring") == 0 && strcmp(prm, "nchunks=6") == 0, "ring as %s %s", nm, prm);
    /* all-to-all: every peer at once (7 on 8 ranks: inflight=0), at most p2p channels
     * (twice the ring graph's, a power of two) / channels per exchange (1
     * on 4096 ranks of 256 KiB each) x 8 */
    cs_nccl_as_sched(&s, CS_COLL_ALLTOALL, CS_NCCL_RING, CS_NCCL_SIMPLE, 1u << 30, nm, sizeof(nm),
                     prm, sizeof(prm));
    CS_TEST_CHECK(strcmp(nm, "pairwise") == 0 && strcmp(prm, "inflight=0") == 0,
                  "alltoall as %s %s", nm, prm);
    {
        int keep = s.nranks, p2p = 1;
        while (p2p < 2 * s.graph[CS_NCCL_RING].nch) /* the communicator's: the graph's x 2 */
            p2p <<= 1;
        s.nranks = 4096;
        cs_nccl_as_sched(&s, CS_COLL_ALLTOALL, CS_NCCL_RING, CS_NCCL_SIMPLE, 1u << 30, nm,
                         sizeof(nm), prm, sizeof(prm));
        char want[32];
        snprintf(want, sizeof(want), "inflight=%d", p2p * 8);
        CS_TEST_CHECK(strcmp(prm, want) == 0, "alltoall on 4096 ranks as %s, want %s", prm, want);
        /* 512 ranks: NCCL's 256 is 2 rounds of peers, simulated as all 511 at once */
        s.nranks = 512;
        cs_nccl_as_sched(&s, CS_COLL_ALLTOALL, CS_NCCL_RING, CS_NCCL_SIMPLE, 1u << 30, nm,
                         sizeof(nm), prm, sizeof(prm));
        CS_TEST_CHECK(strcmp(prm, "inflight=0") == 0, "alltoall on 512 ranks as %s", prm);
        s.nranks = keep;
    }
    cs_nccl_as_sched(&s, CS_COLL_ALLREDUCE, CS_NCCL_NVLS, CS_NCCL_SIMPLE, 1u << 30, nm, sizeof(nm),
                     prm, sizeof(prm));
    /* NVLS at 1 GiB: 16 channels x 8 heads = 128 operations at once, 1 GiB
     * is not below 64 x 128 x 128 KiB: chunks stay 128 KiB; 1 GiB / 8 ranks
     * / 16 channels / 128 KiB = 64 pieces (at most 100000 / (8 x 8 x 16) = 97) */
    CS_TEST_CHECK(strcmp(nm, "nvls") == 0 && strcmp(prm, "channels=16,nchunks=64,depth=3") == 0,
                  "nvls as %s %s", nm, prm);
    /* at 16 MiB: below 64 x 128 x 128 KiB (64 KiB), below 8 x 128 x 64 KiB
     * (32 KiB), not below 2 x 128 x 32 KiB: 32 KiB chunks, 16 MiB / 8 / 16
     * / 32 KiB = 4 pieces per channel */
    cs_nccl_as_sched(&s, CS_COLL_ALLREDUCE, CS_NCCL_NVLS, CS_NCCL_SIMPLE, 16u << 20, nm, sizeof(nm),
                     prm, sizeof(prm));
    CS_TEST_CHECK(strcmp(prm, "channels=16,nchunks=4,depth=3") == 0, "nvls 16 MiB as %s", prm);
    /* a pipelined schedule pays the step latency once per block step */
    snprintf(sched.params, sizeof(sched.params), "nchunks=4");
    cs_nccl_step_costs(k, &s, &sched, CS_NCCL_RING, CS_NCCL_LL, 64 << 20, &c);
    CS_TEST_CHECK(NEAR(c.lat[CS_SIM_HW_NVLINK], 0.15e-6, 1e-12), "piece latency %g",
                  c.lat[CS_SIM_HW_NVLINK]);
    /* ... and the rest of NCCL's step latency, which the pieces would hide,
     * at the start: ring allreduce on 8 ranks, 14 steps x 0.6 us, 3/4 of
     * it with 4 pieces = 6.3 us (the base stays 6.6 us) */
    CS_TEST_CHECK(NEAR(c.hid_lat[CS_SIM_HW_NVLINK], 0.75 * 14 * 0.6e-6, 1e-12) &&
                      c.hid_lat[CS_SIM_HW_NET] == 0 && NEAR(c.base_lat, 6.6e-6, 1e-12),
                  "hidden latency %g (net %g), base %g", c.hid_lat[CS_SIM_HW_NVLINK],
                  c.hid_lat[CS_SIM_HW_NET], c.base_lat);
    /* one piece hides nothing; a schedule NCCL's algorithm is not keeps its
     * own pipeline (rhd's steps are not the ring's) */
    snprintf(sched.params, sizeof(sched.params), "nchunks=1");
    cs_nccl_step_costs(k, &s, &sched, CS_NCCL_RING, CS_NCCL_LL, 64 << 20, &c);
    CS_TEST_CHECK(c.hid_lat[CS_SIM_HW_NVLINK] == 0, "one piece: hidden %g",
                  c.hid_lat[CS_SIM_HW_NVLINK]);
    snprintf(sched.algo, sizeof(sched.algo), "rhd");
    snprintf(sched.params, sizeof(sched.params), "nchunks=4");
    cs_nccl_step_costs(k, &s, &sched, CS_NCCL_RING, CS_NCCL_LL, 64 << 20, &c);
    CS_TEST_CHECK(c.hid_lat[CS_SIM_HW_NVLINK] == 0, "rhd: hidden %g", c.hid_lat[CS_SIM_HW_NVLINK]);
    snprintf(sched.algo, sizeof(sched.algo), "ring");
    snprintf(sched.params, sizeof(sched.params), "nchunks=4");
    /* a fitted latency factor scales it as it scales the steps' */
    {
        cs_nccl_sys_t f = s;
        cs_err_t fe;
        CS_TEST_REQUIRE(cs_nccl_fit_parse("nvlink.lat=2", "t", &f.fit, &fe) == CS_OK, "fit");
        cs_nccl_step_costs(k, &f, &sched, CS_NCCL_RING, CS_NCCL_LL, 64 << 20, &c);
        CS_TEST_CHECK(NEAR(c.hid_lat[CS_SIM_HW_NVLINK], 2 * 0.75 * 14 * 0.6e-6, 1e-12),
                      "fitted hidden latency %g", c.hid_lat[CS_SIM_HW_NVLINK]);
    }
    /* NCCL's send/receive path (all-to-all): the label P2P, not one of
     * NCCL_ALGO's; Ring's costs with Simple, and its own fitted factors */
    CS_TEST_CHECK(strcmp(cs_nccl_algo_name(CS_NCCL_P2P), "P2P") == 0 &&
                      cs_nccl_algo_parse("P2P") == -1 && cs_nccl_label_parse("p2p") == CS_NCCL_P2P &&
                      cs_nccl_label_parse("Ring") == CS_NCCL_RING,
                  "P2P label and parsers");
    CS_TEST_CHECK(cs_nccl_channels(k, &s, CS_COLL_ALLTOALL, CS_NCCL_P2P, CS_NCCL_SIMPLE, 1 << 20) ==
                      cs_nccl_p2p_channels(&s) && cs_nccl_p2p_channels(&s) == 32,
                  "P2P channels %d", cs_nccl_p2p_channels(&s));
    {
        cs_nccl_sys_t f = s;
        cs_err_t fe;
        cs_sched_t a2a = sched;
        a2a.desc.coll = CS_COLL_ALLTOALL;
        snprintf(a2a.algo, sizeof(a2a.algo), "pairwise");
        snprintf(a2a.params, sizeof(a2a.params), "inflight=0");
        CS_TEST_REQUIRE(cs_nccl_fit_parse("nvlink.lat.P2P/Simple=3 nvlink.bw.P2P/Simple=0.5", "t",
                                          &f.fit, &fe) == CS_OK,
                        "P2P fit terms: %s", fe.msg);
        cs_nccl_step_costs(k, &f, &a2a, CS_NCCL_P2P, CS_NCCL_SIMPLE, 64 << 20, &c);
        CS_TEST_CHECK(NEAR(c.lat[CS_SIM_HW_NVLINK], 3 * 3.4e-6, 1e-11) &&
                          NEAR(c.base_lat, 3 * 8.4e-6, 1e-11) && NEAR(c.eff[CS_SIM_HW_NVLINK], 0.5, 1e-9),
                      "P2P fitted: lat %.9g base %.9g eff %.9g", c.lat[CS_SIM_HW_NVLINK], c.base_lat,
                      c.eff[CS_SIM_HW_NVLINK]);
        cs_nccl_step_costs(k, &f, &sched, CS_NCCL_RING, CS_NCCL_SIMPLE, 64 << 20, &c);
        CS_TEST_CHECK(NEAR(c.lat[CS_SIM_HW_NVLINK], 3.4e-6 / 4, 1e-12) && c.eff[CS_SIM_HW_NVLINK] == 1.0,
                      "Ring keeps NCCL's figures: lat %g eff %g", c.lat[CS_SIM_HW_NVLINK],
                      c.eff[CS_SIM_HW_NVLINK]);
        char txt[256];
        cs_nccl_fit_format(&f.fit, txt, sizeof(txt));
        CS_TEST_CHECK(strstr(txt, "nvlink.lat.P2P/Simple=3") && strstr(txt, "nvlink.bw.P2P/Simple=0.5"),
                      "P2P terms written back: %s", txt);
        /* a switch's pair equal to the class-wide factor is still written:
         * its switch takes the pair's factor alone (1 without it) */
        CS_TEST_REQUIRE(cs_nccl_fit_parse("nvlink.lat=2 nvlink.lat.NVLS/Simple=2 "
                                          "nvlink.lat.Ring/LL=2", "t", &f.fit, &fe) == CS_OK,
                        "fit: %s", fe.msg);
        cs_nccl_fit_format(&f.fit, txt, sizeof(txt));
        CS_TEST_CHECK(strstr(txt, "nvlink.lat.NVLS/Simple=2") && !strstr(txt, "Ring/LL"),
                      "switch pair written, link pair implied: %s", txt);
        /* ... and one at 1 beside a class-wide factor (the links of its
         * algorithm would take the class-wide factor without it), and a
         * network pair of NVLSTree (links, not its switch) like any link's */
        CS_TEST_REQUIRE(cs_nccl_fit_parse("nvlink.lat=2 nvlink.lat.NVLS/Simple=1 net.lat=3 "
                                          "net.lat.NVLSTree/Simple=3", "t", &f.fit, &fe) == CS_OK,
                        "fit: %s", fe.msg);
        cs_nccl_fit_format(&f.fit, txt, sizeof(txt));
        CS_TEST_CHECK(strstr(txt, "nvlink.lat.NVLS/Simple=1") && !strstr(txt, "NVLSTree"),
                      "switch pair at 1 written, NVLSTree's network pair implied: %s", txt);
        /* NCCL's base latency: its own factor where given (a switch's
         * latency once keeps the latency factor), else the latency's */
        CS_TEST_REQUIRE(cs_nccl_fit_parse("nvlink.lat=2 nvlink.base=3 nvlink.base.Ring/LL=5", "t",
                                          &f.fit, &fe) == CS_OK,
                        "base terms: %s", fe.msg);
        cs_nccl_fit_format(&f.fit, txt, sizeof(txt));
        CS_TEST_CHECK(strstr(txt, "nvlink.base=3") && strstr(txt, "nvlink.base.Ring/LL=5"),
                      "base terms written back: %s", txt);
        cs_nccl_step_costs(k, &f, &sched, CS_NCCL_RING, CS_NCCL_SIMPLE, 64 << 20, &c);
        CS_TEST_CHECK(NEAR(c.base_lat, 3 * 8.4e-6, 1e-11) &&
                          NEAR(c.lat[CS_SIM_HW_NVLINK], 2 * 3.4e-6 / 4, 1e-11),
                      "Ring/Simple: base x 3, steps x 2: %g %g", c.base_lat,
                      c.lat[CS_SIM_HW_NVLINK]);
        cs_nccl_step_costs(k, &f, &sched, CS_NCCL_RING, CS_NCCL_LL, 64 << 20, &c);
        CS_TEST_CHECK(NEAR(c.base_lat, 5 * 6.6e-6, 1e-11), "Ring/LL's own base %g", c.base_lat);
        snprintf(sched.algo, sizeof(sched.algo), "nvls");
        cs_nccl_step_costs(k, &f, &sched, CS_NCCL_NVLS, CS_NCCL_SIMPLE, 64 << 20, &c);
        CS_TEST_CHECK(NEAR(c.base_lat, 2 * 25e-6, 1e-11), "NVLS's latency x lat %g", c.base_lat);
        snprintf(sched.algo, sizeof(sched.algo), "ring");
        CS_TEST_REQUIRE(cs_nccl_fit_parse("nvlink.lat=2", "t", &f.fit, &fe) == CS_OK, "lat");
        cs_nccl_step_costs(k, &f, &sched, CS_NCCL_RING, CS_NCCL_SIMPLE, 64 << 20, &c);
        CS_TEST_CHECK(NEAR(c.base_lat, 2 * 8.4e-6, 1e-11), "no base factor: lat's %g", c.base_lat);
        /* the network's base factor: on top, for collectives across nodes
         * only; none given is 1, not net.lat's */
        CS_TEST_REQUIRE(cs_nccl_fit_parse("nvlink.base=3 net.lat=7 net.base.Ring/Simple=4", "t",
                                          &f.fit, &fe) == CS_OK,
                        "net.base: %s", fe.msg);
        cs_nccl_fit_format(&f.fit, txt, sizeof(txt));
        CS_TEST_CHECK(strstr(txt, "net.base.Ring/Simple=4") != NULL, "net.base written back: %s",
                      txt);
        cs_nccl_step_costs(k, &f, &sched, CS_NCCL_RING, CS_NCCL_SIMPLE, 64 << 20, &c);
        CS_TEST_CHECK(NEAR(c.base_lat, 3 * 8.4e-6, 1e-11), "one node: no network base %g",
                      c.base_lat);
        f.nnodes = 2, f.nranks = 16;
        cs_nccl_step_costs(k, &f, &sched, CS_NCCL_RING, CS_NCCL_SIMPLE, 64 << 20, &c);
        CS_TEST_CHECK(NEAR(c.base_lat, (3 + 4 - 1) * 8.4e-6, 1e-11),
                      "two nodes: base x 3, plus 3 x NCCL's base %g", c.base_lat);
        cs_nccl_step_costs(k, &f, &sched, CS_NCCL_RING, CS_NCCL_LL, 64 << 20, &c);
        CS_TEST_CHECK(NEAR(c.base_lat, 3 * 6.6e-6, 1e-11), "Ring/LL: no network base (not net.lat) %g",
                      c.base_lat);
        f.nnodes = 1, f.nranks = 8;
        /* terms refused, each with what its message must say (P2P, NVLS:
         * Simple only) */
        static const char *const refused[][2] = {
            {"nvlink.base=2 nvlink.base=3", "given twice"},
            {"nvlink.bw=0.9 nvlink.bw=0.5", "given twice"},
            {"nvlink.bw.NVLS/LL=2", "Simple only"},
            {"nvlink.bse=2", "bw, lat or base"},
            {"nvlink.lat.P2P/LL=2", "P2P/Simple"}};
        for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
            cs_err_clear(&fe);
            CS_TEST_CHECK(cs_nccl_fit_parse(refused[i][0], "t", &f.fit, &fe) != CS_OK &&
                              strstr(fe.msg, refused[i][1]),
                          "'%s' refused saying '%s': %s", refused[i][0], refused[i][1], fe.msg);
        }
    }
    /* a schedule of 3 channels shares the cap */
    snprintf(sched.params, sizeof(sched.params), "nchunks=1 channels=3");
    cs_nccl_step_costs(k, &s, &sched, CS_NCCL_RING, CS_NCCL_SIMPLE, 64 << 20, &c);
    CS_TEST_CHECK(NEAR(c.cap[CS_SIM_HW_NVLINK], 360e9 / 3, 1e3) && NEAR(c.lat[CS_SIM_HW_NVLINK], 3.4e-6, 1e-12),
                  "ring Simple 3 channels cap %g lat %g", c.cap[CS_SIM_HW_NVLINK], c.lat[CS_SIM_HW_NVLINK]);
    /* NVLS chunks (16 channels x 8 heads = 128 operations): 128 KiB from
     * 64 x 128 x 128 KiB = 1 GiB, 64 KiB from 8 x 128 x 64 KiB = 64 MiB,
     * 32 KiB from 2 x 128 x 32 KiB = 8 MiB, else 16 KiB */
    CS_TEST_CHECK(cs_nccl_nvls_chunk(&s, 1ull << 30) == 131072 &&
                      cs_nccl_nvls_chunk(&s, (1ull << 30) - 1) == 65536 &&
                      cs_nccl_nvls_chunk(&s, 64 << 20) == 65536 &&
                      cs_nccl_nvls_chunk(&s, 16 << 20) == 32768 &&
                      cs_nccl_nvls_chunk(&s, 4 << 20) == 16384,
                  "NVLS chunks %llu %llu %llu",
                  (unsigned long long)cs_nccl_nvls_chunk(&s, 1ull << 30),
                  (unsigned long long)cs_nccl_nvls_chunk(&s, 16 << 20),
                  (unsigned long long)cs_nccl_nvls_chunk(&s, 4 << 20));
    /* NVLSTree chunks (enqueue.cc), 16 channels x 8 heads = 128 operations:
     * from 2.21 128 KiB (NCCL_NVLS_CHUNKSIZE), 64 KiB under 4 x 128 x 128
     * KiB = 64 MiB, 32 KiB under 128 x 64 KiB = 8 MiB; 2.20's start, a
     * Simple step of 512 KiB: 256 KiB under 32 x 128 x 512 KiB = 2 GiB, 128
     * KiB under 16 x 128 x 256 KiB = 512 MiB; from 4 nodes at most 64 KiB */
    {
        static const struct {
            int start;
            uint64_t bytes, chunk;
        } tc[] = {
            {131072, 8ull << 30, 131072}, {131072, 64 << 20, 131072},
            {131072, (64 << 20) - 1, 65536}, {131072, 8 << 20, 65536},
            {131072, (8 << 20) - 1, 32768}, {131072, 1 << 20, 32768},
            {524288, 2ull << 30, 524288}, {524288, (2ull << 30) - 1, 262144},
            {524288, 512 << 20, 262144}, {524288, (512 << 20) - 1, 131072},
            {524288, (64 << 20) - 1, 65536}, {524288, (8 << 20) - 1, 32768},
            {65536, 1ull << 30, 65536}, {65536, (8 << 20) - 1, 32768},
            {0, 64 << 20, 131072},
        };
        for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
            s.nvls_tree_chunk = tc[i].start;
            uint64_t got = cs_nccl_nvls_tree_chunk(&s, tc[i].bytes);
            CS_TEST_CHECK(got == tc[i].chunk, "NVLSTree chunk from %d at %llu: %llu, want %llu",
                          tc[i].start, (unsigned long long)tc[i].bytes,
                          (unsigned long long)got, (unsigned long long)tc[i].chunk);
        }
        s.nvls_tree_chunk = 0;
    }
    /* NVLS: its 25 us once, the switch at NCCL's algorithm bandwidth per
     * member (8 x 40 x 5/6 = 266.67 GB/s), and the kernel's pipeline fill
     * and drain: two iterations of 16 channels x 8 heads x 64 KiB = 8 MiB,
     * copied at the GPU's NVLink rate (370 GB/s: 45.3 us), at the switch's
     * rate where the system gives none (62.9 us) */
    snprintf(sched.algo, sizeof(sched.algo), "nvls");
    cs_nccl_step_costs(k, &s, &sched, CS_NCCL_NVLS, CS_NCCL_SIMPLE, 64 << 20, &c);
    CS_TEST_CHECK(NEAR(c.base_lat, 25e-6, 1e-12) && NEAR(c.sw_rate, 266.667e9, 1e6) &&
                      c.sw_fill == 2.0 * 8388608,
                  "NVLS base %g rate %g fill %g", c.base_lat, c.sw_rate, c.sw_fill);
    s.gpu_nvlink = 370;
    fill_is(k, &s, &sched, CS_NCCL_NVLS, 64 << 20, 8388608, "NVLS at the NVLink rate");
    /* a collective smaller than an iteration: the whole of it, twice */
    fill_is(k, &s, &sched, CS_NCCL_NVLS, 1 << 20, 1048576, "NVLS 1 MiB");
    s.gpu_nvlink = 0;
    /* NVLSTree on 2 nodes: the same scatter and gather, of NVLSTree's
     * iteration (128 operations x 128 KiB = 16 MiB at 64 MiB), at the GPU's
     * NVLink rate (370 GB/s here): 2 x 16 MiB / 370 GB/s = 90.7 us */
    s.nranks = 16, s.nnodes = 2, s.nhosts = 2, s.gpu_nvlink = 370, s.nvls_tree_chunk = 131072;
    snprintf(sched.algo, sizeof(sched.algo), "nvls_tree");
    cs_nccl_step_costs(k, &s, &sched, CS_NCCL_NVLS_TREE, CS_NCCL_SIMPLE, 64 << 20, &c);
    CS_TEST_CHECK(c.sw_rate > 0 && c.sw_rate < 370e9 &&
                      NEAR(c.sw_fill / c.sw_rate, 2.0 * 16777216 / 370e9, 1e-9),
                  "NVLSTree fill %g us (rate %g)", 1e6 * c.sw_fill / c.sw_rate, c.sw_rate);
    /* 8 MiB: 64 KiB chunks, iterations of 8 MiB: the whole collective
     * twice; 6 MiB: 32 KiB chunks, iterations of 4 MiB, two of them */
    fill_is(k, &s, &sched, CS_NCCL_NVLS_TREE, 8 << 20, 8388608, "NVLSTree 8 MiB");
    fill_is(k, &s, &sched, CS_NCCL_NVLS_TREE, 6 << 20, 4194304, "NVLSTree 6 MiB");
    /* a collective smaller than an iteration: the whole of it, twice (1
     * MiB, 32 KiB chunks: iterations of 4 MiB) */
    cs_nccl_step_costs(k, &s, &sched, CS_NCCL_NVLS_TREE, CS_NCCL_SIMPLE, 1 << 20, &c);
    CS_TEST_CHECK(NEAR(c.sw_fill / c.sw_rate, 2.0 * 1048576 / 370e9, 1e-9),
                  "NVLSTree 1 MiB fill %g us", 1e6 * c.sw_fill / c.sw_rate);
    /* each NVLSTree piece (one of NCCL's iterations) pays a whole step of
     * Simple on NVLink, as an NVLS operation does */
    CS_TEST_CHECK(NEAR(c.sw_lat, k->hw_lat[CS_SIM_HW_NVLINK][CS_NCCL_RING][CS_NCCL_SIMPLE] * 1e-6, 1e-12),
                  "NVLSTree switch step %g us", 1e6 * c.sw_lat);
    s.nranks = 8, s.nnodes = 1, s.nhosts = 1, s.gpu_nvlink = 0, s.nvls_tree_chunk = 0;
    snprintf(sched.algo, sizeof(sched.algo), "nvls");
    /* the other algorithms have none */
    cs_nccl_step_costs(k, &s, &sched, CS_NCCL_RING, CS_NCCL_SIMPLE, 64 << 20, &c);
    CS_TEST_CHECK(c.sw_fill == 0, "ring fill %g", c.sw_fill);
    /* all-gather's NVLS: 2.20.5 converts to algorithm bandwidth (x 5/6:
     * 8 x 40 x 5/6 = 266.67), 2.25+ keeps the bus bandwidth (320); not
     * across nodes */
    h100_node(&s);
    cs_nccl_tune(k20, &s, CS_COLL_ALLGATHER, lat, bw);
    CS_TEST_CHECK(NEAR(bw[CS_NCCL_NVLS][CS_NCCL_SIMPLE], 320.0 * 5 / 6, 1e-2),
                  "2.20.5 AG NVLS %g", bw[CS_NCCL_NVLS][CS_NCCL_SIMPLE]);
    cs_nccl_tune(k, &s, CS_COLL_ALLGATHER, lat, bw);
    CS_TEST_CHECK(NEAR(bw[CS_NCCL_NVLS][CS_NCCL_SIMPLE], 320.0, 1e-2), "2.25.1 AG NVLS %g",
                  bw[CS_NCCL_NVLS][CS_NCCL_SIMPLE]);
    s.nranks = 16, s.nnodes = 2, s.collnet = 1;
    cs_nccl_tune(k, &s, CS_COLL_ALLGATHER, lat, bw);
    CS_TEST_CHECK(bw[CS_NCCL_NVLS][CS_NCCL_SIMPLE] == 0, "no NVLS all-gather across nodes");
    /* PAT (one GPU per node, 4 nodes): none in 2.20.5; in 2.25.1 all-gather
     * 8 + log2(4) x 14 / 3.5 + 4 x 2.8 = 27.2 us (Tree's network latency
     * with one rank per node) */
    h100_node(&s);
    s.nranks = 4, s.nnodes = 4, s.nvls = 0;
    cs_nccl_tune(k20, &s, CS_COLL_ALLGATHER, lat, bw);
    CS_TEST_CHECK(bw[CS_NCCL_PAT][CS_NCCL_SIMPLE] == 0, "no PAT in 2.20.5");
    cs_nccl_tune(k, &s, CS_COLL_ALLGATHER, lat, bw);
    CS_TEST_CHECK(bw[CS_NCCL_PAT][CS_NCCL_SIMPLE] > 0 && NEAR(lat[CS_NCCL_PAT][CS_NCCL_SIMPLE], 27.2, 1e-3),
                  "2.25.1 PAT lat %g", lat[CS_NCCL_PAT][CS_NCCL_SIMPLE]);
    /* 2.23.4: PAT with the same latency at .85 of the tree graph's bus
     * bandwidth where 2.25 takes .75 (12 x 30 x .85 = 306 GB/s, kept as
     * bus bandwidth for all-gather) */
    float pat25 = bw[CS_NCCL_PAT][CS_NCCL_SIMPLE];
    cs_nccl_tune(k23, &s, CS_COLL_ALLGATHER, lat, bw);
    CS_TEST_CHECK(NEAR(lat[CS_NCCL_PAT][CS_NCCL_SIMPLE], 27.2, 1e-3) &&
                      NEAR(bw[CS_NCCL_PAT][CS_NCCL_SIMPLE], 12 * 30 * .85, 1e-2) &&
                      NEAR(bw[CS_NCCL_PAT][CS_NCCL_SIMPLE] / pat25, .85 / .75, 1e-4),
                  "2.23.4 PAT lat %g bw %g (2.25.1: %g)", lat[CS_NCCL_PAT][CS_NCCL_SIMPLE],
                  bw[CS_NCCL_PAT][CS_NCCL_SIMPLE], pat25);
    /* 2.23.4 keeps NVLS all-gather's bus bandwidth as 2.25 does (320, not
     * 2.20.5's x 5/6), and its allreduce as 2.20.5 (8 x 40 x 5/6) */
    h100_node(&s);
    cs_nccl_tune(k23, &s, CS_COLL_ALLGATHER, lat, bw);
    CS_TEST_CHECK(NEAR(bw[CS_NCCL_NVLS][CS_NCCL_SIMPLE], 320.0, 1e-2), "2.23.4 AG NVLS %g",
                  bw[CS_NCCL_NVLS][CS_NCCL_SIMPLE]);
    cs_nccl_tune(k23, &s, CS_COLL_ALLREDUCE, lat, bw);
    CS_TEST_CHECK(NEAR(bw[CS_NCCL_NVLS][CS_NCCL_SIMPLE], 320.0 * 5 / 6, 1e-2) &&
                      NEAR(lat[CS_NCCL_NVLS][CS_NCCL_SIMPLE], 25.0, 1e-4),
                  "2.23.4 AR NVLS %g, %g us", bw[CS_NCCL_NVLS][CS_NCCL_SIMPLE],
                  lat[CS_NCCL_NVLS][CS_NCCL_SIMPLE]);

    /* RCCL on 8 x MI300X (28 rings of 12 GB/s over 7 xGMI links of 48):
     * Ring/LL 12 + 14 x 0.8 = 23.2 us at 336 x 0.08 x 8/14 = 15.36 GB/s,
     * Ring/Simple 17 + 14 x 2.1 = 46.4 us at 336 x 8/14 = 192 GB/s; no
     * LL128, no Tree/Simple on one node */
    const cs_nccl_consts_t *kr = cs_nccl_consts_for(NULL, 1, &exact);
    CS_TEST_REQUIRE(kr && strcmp(kr->lib, "RCCL") == 0, "RCCL table");
    memset(&s, 0, sizeof(s));
    s.nranks = 8, s.nnodes = 1, s.nhosts = 1, s.arch = CS_NCCL_HOPPER, s.cc = 94, s.rccl = 1;
    for (int a = 0; a < CS_NCCL_NALGOS; a++)
        s.graph[a] = (cs_nccl_graph_t){28, 12, 12, CS_SIM_HW_NVLINK};
    cs_nccl_tune(kr, &s, CS_COLL_ALLREDUCE, lat, bw);
    CS_TEST_CHECK(NEAR(lat[CS_NCCL_RING][CS_NCCL_LL], 23.2, 1e-3) &&
                      NEAR(bw[CS_NCCL_RING][CS_NCCL_LL], 336 * 0.08 * 8 / 14, 1e-2),
                  "RCCL ring LL %g us %g GB/s", lat[CS_NCCL_RING][CS_NCCL_LL],
                  bw[CS_NCCL_RING][CS_NCCL_LL]);
    CS_TEST_CHECK(NEAR(lat[CS_NCCL_RING][CS_NCCL_SIMPLE], 46.4, 1e-3) &&
                      NEAR(bw[CS_NCCL_RING][CS_NCCL_SIMPLE], 192, 1e-2),
                  "RCCL ring Simple %g us %g GB/s", lat[CS_NCCL_RING][CS_NCCL_SIMPLE],
                  bw[CS_NCCL_RING][CS_NCCL_SIMPLE]);
    CS_TEST_CHECK(bw[CS_NCCL_RING][CS_NCCL_LL128] == 0 && bw[CS_NCCL_TREE][CS_NCCL_SIMPLE] == 0,
                  "RCCL: no LL128, no Tree/Simple on one node");
    return cs_test_finish();
}
