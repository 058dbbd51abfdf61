/*
 * test_plan_scale.c - the planner's topology analysis of a 16,384-GPU
 * preset (hgx-h100:nodes=2048) from the platform's structure, against the
 * figures worked out by hand from the preset's parameters (nvlink_bw
 * 450 GB/s, pcie_bw PCIe 5.0 x16: 32 GT/s x 16 lanes x 128/130 / 8 =
 * 63.015 GB/s, 400 Gb/s NICs, su=32):
 *
 *   tiers      2048 nodes of 8 GPUs (nvlink, 450 GB/s a flow), 64 scalable
 *              units of 256 (nic, 50 GB/s), every rank (spine)
 *   links      each GPU's links out and in: its NVLink bundle and its PCIe
 *              link to its own NIC, 450 + 63.015 GB/s each way
 *   egress     a node's eight rails, 8 x 50 = 400 GB/s (max-flow)
 *   bound      an allreduce of SIZE moves 2 (2048 - 1) / 2048 x SIZE out of
 *              every node over its 400 GB/s
 *
 * The wall time of the analysis is printed, not asserted (the bench line
 * tests/bench/bench_plan_scale.sh measures it).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cs_planner_int.h"
#include "cs_platform.h"
#include "cs_sim.h"
#include "cs_test.h"
#include "cs_time.h"

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b); }

int main(int argc, char **argv)
{
    const char *spec = argc > 1 ? argv[1] : "hgx-h100:nodes=2048";
    cs_platform_t *plat = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    double t0 = cs_now_s();
    CS_TEST_REQUIRE(cs_platform_open(spec, &plat, &err) == CS_OK, "%s", err.msg);
    CS_TEST_REQUIRE(cs_sim_run(plat, NULL, NULL, 0, &err) == CS_OK, "%s", err.msg);
    int P = (int)plat->ndevices, nodes = P / 8;
    double t1 = cs_now_s();
    cs_planner_t *p = cs__planner_alloc(P);
    CS_TEST_REQUIRE(p != NULL, "out of memory");
    p->coll = CS_COLL_ALLREDUCE;
    p->nsizes = 1;
    p->sizes[0] = 1ull << 30;
    CS_TEST_REQUIRE(cs__planner_topology(plat, p, &err) == CS_OK, "%s", err.msg);
    printf("%s: %d ranks loaded in %.2f s, analysed in %.2f s\n", spec, P, t1 - t0,
           cs_now_s() - t1);
    CS_TEST_CHECK(p->ntiers == 3, "%d tiers, expected 3", p->ntiers);
    int group[3] = {8, 256, P}, ngroups[3] = {nodes, P / 256, 1};
    const char *name[3] = {"nvlink", "nic", "spine"};
    for (int t = 0; t < 3 && t < p->ntiers; t++) {
        const cs_planner_tier_t *x = &p->tiers[t];
        CS_TEST_CHECK(x->group == group[t] && x->ngroups == ngroups[t],
                      "tier %d: %d x %d ranks, expected %d x %d", t, x->ngroups, x->group,
                      ngroups[t], group[t]);
        CS_TEST_CHECK(strcmp(x->name, name[t]) == 0, "tier %d is %s, expected %s", t, x->name,
                      name[t]);
    }
    CS_TEST_CHECK(near(p->tiers[0].rank_bw, 450e9), "nvlink flow %g", p->tiers[0].rank_bw);
    CS_TEST_CHECK(near(p->tiers[1].rank_bw, 50e9), "nic flow %g", p->tiers[1].rank_bw);
    CS_TEST_CHECK(near(p->tiers[0].group_bw, 400e9), "a node's egress %g",
                  p->tiers[0].group_bw);
    double links = 450e9 + 32e9 * 16 * 128 / 130 / 8;
    CS_TEST_CHECK(near(p->links_out_bw, links) && near(p->links_in_bw, links),
                  "a rank's links: %g out, %g in, expected %g", p->links_out_bw,
                  p->links_in_bw, links);
    double bound = 2.0 * (nodes - 1) / nodes * (double)p->sizes[0] / 400e9;
    CS_TEST_CHECK(near(p->bound_s[0], bound), "bound %.9g s, expected %.9g s", p->bound_s[0],
                  bound);
    CS_TEST_CHECK(strstr(p->link_notes[0], "blocks of 8, 256 ranks") != NULL,
                  "the levels are not the platform's blocks: %s", p->link_notes[0]);
    cs_planner_free(p);
    cs_platform_close(plat);
    return cs_test_finish();
}
