/*
 * test_plan_links.c - the planner's link analysis on platforms written as
 * a user would (tests/planner/xml: plain hosts and routers, Floyd routing,
 * no tier properties), an allreduce of 256 MiB:
 *
 *   dgx1_p100  a DGX-1's hybrid cube mesh, one 20 GB/s link per NVLink
 *              pair, GPU pairs without one routed over two NVLink hops:
 *              every rank's links sum to 80 GB/s each way (its four
 *              NVLinks; the PCIe link no GPU pair's route takes does not
 *              count), 4 rings over disjoint links
 *   mesh8      eight GPUs, a 48 GB/s link per pair: 336 GB/s, 7 rings
 *   nvswitch8  eight GPUs on one switch, 450 GB/s each: 450 GB/s, 1 ring
 *
 * and each time: the plan's choice within 5 % of the bound the links give
 * (busbw); on the first two the choice is the ring over the rings found as
 * channels, every hop of every channel a route of one link, no link used
 * by two hops.
 *
 *   test_plan_links DIR NAME   (DIR: tests/planner/xml; one platform per
 *                              process: SimGrid loads one per process)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_planner.h"
#include "cs_platform.h"
#include "cs_sim.h"
#include "cs_test.h"

static int digit(char c) { return c >= '0' && c <= '9' ? c - '0' : c - 'a' + 10; }

/* Every hop of the rings in `orders` (base 36, '+' between rings) over the
 * ranks' hosts of order 0: a route of one link, none used twice. */
static int check_hops(const char *file, const cs_planner_t *p, const char *orders)
{
    cs_platform_t *pl = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    CS_TEST_REQUIRE(cs_platform_open(file, &pl, &err) == CS_OK, "%s", err.msg);
    CS_TEST_REQUIRE(cs_sim_run(pl, NULL, NULL, 0, &err) == CS_OK, "%s", err.msg);
    char used[64][64];
    int nused = 0, hops = 0;
    for (const char *o = orders; *o;) {
        int n = (int)strcspn(o, "+,");
        for (int i = 0; i < n; i++) {
            const char *a = cs_planner_host(p, 0, digit(o[i]));
            const char *b = cs_planner_host(p, 0, digit(o[(i + 1) % n]));
            cs_sim_link_t l[8];
            int nl = 0;
            CS_TEST_CHECK(cs_sim_route(a, b, l, 8, &nl, &err) == CS_OK, "%s", err.msg);
            CS_TEST_CHECK(nl == 1, "%s: hop %s -> %s takes %d links", file, a, b, nl);
            for (int k = 0; k < nused && nl == 1; k++)
                CS_TEST_CHECK(strcmp(used[k], l[0].name) != 0, "%s: link %s used twice", file,
                              l[0].name);
            if (nl == 1 && nused < 64)
                snprintf(used[nused++], sizeof(used[0]), "%s", l[0].name);
            hops++;
        }
        o += n;
        if (*o != '+')
            break;
        o++;
    }
    CS_TEST_CHECK(hops > 0, "%s: no hop in orders=%s", file, orders);
    cs_platform_close(pl);
    return 0;
}

static int one(const char *dir, const char *name, double links_gbs, int rings, int is_ring)
{
    char file[512];
    snprintf(file, sizeof(file), "%s/%s.xml", dir, name);
    const uint64_t sizes[] = {256u << 20};
    cs_planner_opts_t o;
    memset(&o, 0, sizeof(o));
    o.platform = file;
    o.coll = CS_COLL_ALLREDUCE;
    o.sizes = sizes;
    o.nsizes = 1;
    o.top = 4;
    o.jobs = 2;
    o.budget = 60;
    cs_planner_t *p = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    CS_TEST_REQUIRE(cs_planner_run(&o, &p, &err) == CS_OK, "%s: %s", name, err.msg);
    CS_TEST_CHECK(fabs(p->links_out_bw / 1e9 - links_gbs) < 1e-6 * links_gbs &&
                      fabs(p->links_in_bw / 1e9 - links_gbs) < 1e-6 * links_gbs,
                  "%s: links out %.2f GB/s, in %.2f GB/s, not %.1f", name, p->links_out_bw / 1e9,
                  p->links_in_bw / 1e9, links_gbs);
    CS_TEST_CHECK(p->links_exact == 1, "%s: not every pair read", name);
    CS_TEST_CHECK(p->nrings == rings && p->rings_upper == rings, "%s: %d rings (at most %d), "
                  "not %d", name, p->nrings, p->rings_upper, rings);
    int ch = cs_planner_choice(p, 0);
    CS_TEST_REQUIRE(ch >= 0 && p->cands[ch].sim_s[0] > 0, "%s: no simulated choice", name);
    const cs_planner_cand_t *c = &p->cands[ch];
    double bus = 2.0 * 7 / 8 * (double)sizes[0] / c->sim_s[0];
    double bound = 2.0 * 7 / 8 * (double)sizes[0] / p->bound_s[0];
    printf("%s: links %.1f GB/s, %d rings (%s); choice %s %s: busbw %.2f GB/s, bound %.2f GB/s "
           "(%.1f %%)\n", name, p->links_out_bw / 1e9, p->nrings, p->ring_orders, c->algo,
           c->params, bus / 1e9, bound / 1e9, 100 * bus / bound);
    CS_TEST_CHECK(fabs(bound / 1e9 - links_gbs) < 1e-6 * links_gbs, "%s: bound %.2f GB/s", name,
                  bound / 1e9);
    CS_TEST_CHECK(bus >= 0.95 * bound, "%s: busbw %.2f GB/s under 95 %% of the bound %.2f GB/s",
                  name, bus / 1e9, bound / 1e9);
    if (is_ring) {
        const char *v = strstr(c->params, "orders=");
        CS_TEST_CHECK(strcmp(c->algo, "ring") == 0 && v, "%s: the choice is %s %s", name,
                      c->algo, c->params);
        CS_TEST_CHECK(v && (int)strcspn(v + 7, ",") == rings * 9 - 1,
                      "%s: the choice's channels (%s) are not the %d rings", name, c->params,
                      rings);
        if (v)
            check_hops(file, p, v + 7);
    }
    cs_planner_free(p);
    return 0;
}

int main(int argc, char **argv)
{
    CS_TEST_REQUIRE(argc > 2, "usage: test_plan_links DIR NAME");
    if (strcmp(argv[2], "dgx1_p100") == 0)
        one(argv[1], argv[2], 80, 4, 1);
    else if (strcmp(argv[2], "mesh8") == 0)
        one(argv[1], argv[2], 336, 7, 1);
    else if (strcmp(argv[2], "nvswitch8") == 0)
        one(argv[1], argv[2], 450, 1, 0);
    else
        CS_TEST_REQUIRE(0, "unknown platform %s", argv[2]);
    return cs_test_finish();
}
