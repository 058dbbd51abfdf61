/*
 * test_sim_bottleneck.c - bottleneck tiers in the ideal model.
 *
 *   10gbe:  ring allreduce on x86-p100-pcie-10gbe (2 nodes, 8 ranks) at
 *           256 MB: the two ring edges that cross nodes each own one
 *           direction of a 10 GbE NIC, so busbw reaches the line rate
 *           (>= 95% of 1.25 GB/s) and never exceeds it.
 *   summit: summit:nodes=16 (96 ranks) at 100 MB: the flat ring's busbw is
 *           bounded by the narrowest link on the route between nodes (found
 *           with cs_sim_route), which is the NIC rail (each rail its own
 *           12.5 GB/s nic link, narrower than the socket's PCIe x8), and
 *           reaches >= 80% of it; hier (the platform's dims) beats the
 *           flat ring.
 * Needs the platform presets and the ring / hier generators: exits 77
 * when they are not built yet.
 */
#include <string.h>

#include "cs_algo.h"
#include "cs_sim.h"
#include "cs_test.h"

static cs_sched_t *build(const char *name, int P, const char *params)
{
    const cs_algo_t *a = cs_algo_find(CS_COLL_ALLREDUCE, name);
    if (!a)
        CS_TEST_SKIP("allreduce %s not registered", name);
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, P, 0, 0};
    cs_params_t prm;
    cs_err_t err = {0};
    cs_params_init(&prm);
    if (params)
        cs_params_parse(&prm, params, &err);
    cs_sched_t *s = NULL;
    if (cs_algo_build(a, &d, &prm, &s, &err) != CS_OK) {
        fprintf(stderr, "build %s: %s\n", name, err.msg);
        return NULL;
    }
    return s;
}

static double tier_bw(const cs_platform_t *p, const char *tier)
{
    for (int i = 0; i < p->ntiers; i++)
        if (strcmp(p->tiers[i].name, tier) == 0)
            return p->tiers[i].bandwidth;
    return 0;
}

int main(int argc, char **argv)
{
    int summit = argc > 1 && strcmp(argv[1], "summit") == 0;
    cs_platform_t *plat = NULL;
    cs_err_t err = {0};
    if (cs_platform_open(summit ? "summit:nodes=16" : "x86-p100-pcie-10gbe:nodes=2", &plat, &err))
        CS_TEST_SKIP("platform: %s", err.msg);
    int P = (int)plat->ndevices;
    cs_sim_instance_t in[2];
    int n = 0;
    cs_sched_t *ring = build("ring", P, NULL), *hier = NULL;
    CS_TEST_REQUIRE(ring != NULL, "ring");
    in[n++] = (cs_sim_instance_t){ring, summit ? 100u << 20 : 256u << 20, CS_DT_F32, 0, 0, NULL};
    if (summit) {
        char dims[64];
        snprintf(dims, sizeof(dims), "dims=%dx%d", plat->dims[0], plat->dims[1]);
        hier = build("hier", P, dims);
        CS_TEST_REQUIRE(hier != NULL, "hier");
        in[n++] = (cs_sim_instance_t){hier, 100u << 20, CS_DT_F32, 0, 0, NULL};
    }
    int st = cs_sim_run(plat, NULL, in, n, &err);
    CS_TEST_REQUIRE(st == CS_OK, "cs_sim_run: %s", err.msg);
    double busbw = (double)in[0].bytes / in[0].time * cs_coll_busbw_factor(CS_COLL_ALLREDUCE, P);
    if (!summit) {
        double line = tier_bw(plat, "nic");
        printf("ring 8 ranks 256 MB over 10 GbE: busbw %.4f GB/s, line rate %.4f GB/s\n",
               busbw / 1e9, line / 1e9);
        CS_TEST_CHECK(line > 0, "no nic tier");
        CS_TEST_CHECK(busbw <= line * (1 + 1e-9), "busbw %.6g above the line rate %.6g", busbw, line);
        CS_TEST_CHECK(busbw >= 0.95 * line, "busbw %.6g below 95%% of the line rate %.6g", busbw, line);
    } else {
        char **hosts = NULL;
        CS_TEST_REQUIRE(cs_sim_hosts(plat, NULL, P, &hosts, &err) == CS_OK, "%s", err.msg);
        /* ring edge from the last device of node 0 to the first of node 1 */
        int per = plat->dims[0];
        cs_sim_link_t l[64];
        int nl = 0;
        st = cs_sim_route(hosts[per - 1], hosts[per], l, 64, &nl, &err);
        CS_TEST_REQUIRE(st == CS_OK && nl > 0 && nl <= 64, "route: %s", err.msg);
        double minbw = l[0].bandwidth;
        int has_nic = 0, narrow = 0;
        for (int i = 0; i < nl; i++) {
            if (l[i].bandwidth < minbw)
                minbw = l[i].bandwidth, narrow = i;
            has_nic |= strcmp(l[i].tier, "nic") == 0;
        }
        double tb = (double)in[1].bytes / in[1].time * cs_coll_busbw_factor(CS_COLL_ALLREDUCE, P);
        printf("summit 96 ranks 100 MB: ring %.3f ms busbw %.3f GB/s (route bottleneck %.3f GB/s, "
               "%d links), hier %.3f ms busbw %.3f GB/s\n",
               in[0].time * 1e3, busbw / 1e9, minbw / 1e9, nl, in[1].time * 1e3, tb / 1e9);
        CS_TEST_CHECK(has_nic, "route between nodes has no nic link");
        CS_TEST_CHECK(strcmp(l[narrow].tier, "nic") == 0 && minbw == tier_bw(plat, "nic"),
                      "route between nodes bounded by the NIC rail, found tier %s %.6g B/s",
                      l[narrow].tier, minbw);
        CS_TEST_CHECK(busbw <= minbw * (1 + 1e-9), "ring busbw %.6g above the route's %.6g", busbw,
                      minbw);
        CS_TEST_CHECK(busbw >= 0.8 * minbw, "ring busbw %.6g below 80%% of %.6g", busbw, minbw);
        CS_TEST_CHECK(in[1].time < in[0].time, "hier %.6g s not faster than ring %.6g s",
                      in[1].time, in[0].time);
        cs_sim_hosts_free(hosts, P);
    }
    cs_sched_destroy(ring);
    cs_sched_destroy(hier);
    cs_platform_close(plat);
    return cs_test_finish();
}
