/*
 * test_sim_restart.c - restarts after idle on a calibrated platform
 * (platforms/cs_plat_calib.h restart_bytes / restart_idle, sim/cs_sim_rank.c).
 *
 *   4 nodes of one rank at B = 100 MB/s, every node restart_bytes X = S / 8
 *   after 50 ms idle; recursive halving-doubling allreduce (rhd) of S =
 *   64 MiB exchanges S/2, S/4, S/4, S/2 with partners at distance 2, 1, 1,
 *   2: 1.5 S / B without restarts.  The first exchange starts the run
 *   (connections warm), the second is the first use of its connection at
 *   S/2B > 50 ms (cold: X more), the third follows the second at once
 *   (warm), the fourth reuses the first's connection S/2B after it (cold:
 *   X more): 1.75 S / B.  The same at 4 MiB, where no connection idles for
 *   50 ms: 1.5 S / B, no restart.  Needs the rhd generator (77 without).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cs_algo.h"
#include "cs_plat_calib.h"
#include "cs_platform.h"
#include "cs_sim.h"
#include "cs_test.h"

int main(void)
{
    const cs_algo_t *a = cs_algo_find(CS_COLL_ALLREDUCE, "rhd");
    if (!a)
        CS_TEST_SKIP("allreduce rhd not registered");
    const double B = 1e8, S = 64.0 * (1 << 20), S2 = 4.0 * (1 << 20);
    int node_of[4] = {0, 1, 2, 3};
    cs_plat_calib_node_t nodes[4];
    for (int h = 0; h < 4; h++)
        nodes[h] = (cs_plat_calib_node_t){"", B, 1e-9, "", S / 8, 0.05};
    for (int h = 0; h < 4; h++)
        snprintf(nodes[h].name, sizeof(nodes[h].name), "node%d", h);
    cs_plat_calib_t p = {.nranks = 4, .nnodes = 4, .node_of = node_of, .nodes = nodes,
                         .intra_bw = 1e10, .intra_lat = 1e-9, .switch_bw = 4 * B,
                         .reduce_speed = 1e15};
    char *xml = NULL, path[4096];
    cs_err_t err = {0};
    CS_TEST_REQUIRE(cs_plat_calib_xml(&p, &xml, &err) == CS_OK, "xml: %s", err.msg);
    cs_test_tmp(path, sizeof(path), "sim_restart.xml");
    FILE *f = fopen(path, "w");
    CS_TEST_REQUIRE(f && fputs(xml, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
    free(xml);
    cs_platform_t *plat = NULL;
    CS_TEST_REQUIRE(cs_platform_open(path, &plat, &err) == CS_OK, "platform: %s", err.msg);
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, 4, 0, 0};
    cs_params_t prm;
    cs_params_init(&prm);
    cs_sched_t *s = NULL;
    CS_TEST_REQUIRE(cs_algo_build(a, &d, &prm, &s, &err) == CS_OK, "rhd: %s", err.msg);
    cs_sim_instance_t in[2] = {{s, (uint64_t)S, CS_DT_F32, 0, 0, NULL},
                               {s, (uint64_t)S2, CS_DT_F32, 0, 0, NULL}};
    CS_TEST_REQUIRE(cs_sim_run(plat, NULL, in, 2, &err) == CS_OK, "sim: %s", err.msg);
    double want = 1.75 * S / B, want2 = 1.5 * S2 / B;
    printf("rhd 64 MiB: %.6f s (want %.6f); 4 MiB: %.6f s (want %.6f)\n", in[0].time, want,
           in[1].time, want2);
    CS_TEST_CHECK(fabs(in[0].time - want) < 0.005 * want, "64 MiB: %g s, want %g (two restarts)",
                  in[0].time, want);
    CS_TEST_CHECK(fabs(in[1].time - want2) < 0.005 * want2, "4 MiB: %g s, want %g (none)",
                  in[1].time, want2);
    cs_sched_destroy(s);
    cs_platform_close(plat);
    remove(path);
    return cs_test_finish();
}
