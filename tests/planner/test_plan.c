/*
 * test_plan.c - the planner's choices (planner/cs_planner.h).
 *
 *   exhaustive   on a small platform every candidate is simulated once
 *                (--all), except those with switch steps (nvls, sharp: the
 *                platform has no reducing switch, they get a reason and no
 *                time); the plan with its usual pruning (the cost model's
 *                best --top per size) must choose a candidate within 1 % of
 *                that optimum, and none slower than the registry's defaults
 *   dgx1         one DGX-1 (V100): the plan picks the ring over the 6 rings
 *                the link analysis finds (each double NVLink carrying two),
 *                every hop of every channel a single NVLink link, its busbw
 *                within 10 % of the bound the links give (150 GB/s), and the
 *                platform's order is slower
 *   errors       one rank, an unknown platform, a budget too small
 *   children     a program's own child, exited before the plan, is still
 *                the program's to wait for after it: the planner waits
 *                only for the processes it started
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cs_planner.h"
#include "cs_platform.h"
#include "cs_sim.h"
#include "cs_test.h"

static int run(const char *plat, const uint64_t *sizes, int ns, int all, cs_planner_t **p)
{
    cs_planner_opts_t o;
    memset(&o, 0, sizeof(o));
    o.platform = plat;
    o.coll = CS_COLL_ALLREDUCE;
    o.sizes = sizes;
    o.nsizes = ns;
    o.top = 4;
    o.jobs = 2;
    o.budget = 120;
    o.exhaustive = all;
    cs_err_t err;
    cs_err_clear(&err);
    int st = cs_planner_run(&o, p, &err);
    if (st != CS_OK)
        fprintf(stderr, "%s: %s\n", plat, err.msg);
    return st;
}

static int exhaustive(const char *plat)
{
    const uint64_t sizes[] = {65536, 4u << 20, 64u << 20};
    int ns = 3;
    cs_planner_t *a = NULL, *b = NULL;
    CS_TEST_REQUIRE(run(plat, sizes, ns, 0, &a) == CS_OK, "plan");
    CS_TEST_REQUIRE(run(plat, sizes, ns, 1, &b) == CS_OK, "plan --all");
    CS_TEST_CHECK(a->ncands == b->ncands, "%d vs %d candidates", a->ncands, b->ncands);
    for (int k = 0; k < ns; k++) {
        double opt = INFINITY, def = INFINITY;
        int nsim = 0, oc = -1, nsw = 0;
        for (int c = 0; c < b->ncands; c++) {
            double t = b->cands[c].sim_s[k];
            /* switch algorithms (nvls, sharp): no reducing switch here, never simulated */
            int sw = strncmp(b->cands[c].err, "switch steps", 12) == 0;
            nsw += sw;
            CS_TEST_CHECK(!sw || t < 0, "%s %s: a switch candidate simulated", b->cands[c].algo,
                          b->cands[c].params);
            if (t < 0)
                continue;
            nsim++;
            if (t < opt)
                opt = t, oc = c;
            if (b->cands[c].is_default && t < def)
                def = t;
        }
        CS_TEST_CHECK(nsw > 0 && nsim == b->ncands - nsw,
                      "size %llu: %d of %d candidates simulated (%d with switch steps)",
                      (unsigned long long)sizes[k], nsim, b->ncands, nsw);
        int ch = cs_planner_choice(a, k);
        CS_TEST_REQUIRE(ch >= 0 && a->cands[ch].sim_s[k] >= 0, "size %llu: no simulated choice",
                        (unsigned long long)sizes[k]);
        double t = a->cands[ch].sim_s[k];
        printf("%s %llu B: plan %s %s (%s) %.2f us, exhaustive optimum %s %s %.2f us, best "
               "default %.2f us\n", plat, (unsigned long long)sizes[k], a->cands[ch].algo,
               a->cands[ch].params, a->map_name[a->cands[ch].map], t * 1e6, b->cands[oc].algo,
               b->cands[oc].params, opt * 1e6, def * 1e6);
        CS_TEST_CHECK(t <= 1.01 * opt, "size %llu: the plan's %.3f us is more than 1 %% over "
                      "the optimum %.3f us", (unsigned long long)sizes[k], t * 1e6, opt * 1e6);
        CS_TEST_CHECK(t <= def * (1 + 1e-9), "size %llu: slower than a registry default",
                      (unsigned long long)sizes[k]);
    }
    cs_planner_free(a);
    cs_planner_free(b);
    return 0;
}

static int digit36(char c) { return c >= '0' && c <= '9' ? c - '0' : c - 'a' + 10; }

static int dgx1(void)
{
    const char *plat = "dgx1-v100-ib100:nodes=1";
    const uint64_t sizes[] = {1u << 30};
    cs_planner_t *p = NULL;
    CS_TEST_REQUIRE(run(plat, sizes, 1, 0, &p) == CS_OK, "plan");
    int ch = cs_planner_choice(p, 0);
    CS_TEST_REQUIRE(ch >= 0 && p->cands[ch].sim_s[0] > 0, "no simulated choice");
    const cs_planner_cand_t *c = &p->cands[ch];
    double bus = 2.0 * 7 / 8 * (double)sizes[0] / c->sim_s[0];
    double bound = p->bound_s[0] > 0 ? 2.0 * 7 / 8 * (double)sizes[0] / p->bound_s[0] : 0;
    int naive = cs_planner_ring(p);
    CS_TEST_REQUIRE(naive >= 0 && p->cands[naive].sim_s[0] > 0, "naive ring not simulated");
    double nbus = 2.0 * 7 / 8 * (double)sizes[0] / p->cands[naive].sim_s[0];
    printf("dgx1: plan %s %s (%s) busbw %.2f GB/s, the links' bound %.2f GB/s (%.1f %%), %d "
           "rings; platform order ring %.2f GB/s\n", c->algo, c->params, p->map_name[c->map],
           bus / 1e9, bound / 1e9, bound > 0 ? 100 * bus / bound : 0, p->nrings, nbus / 1e9);
    /* a GPU's links: two double NVLinks (50 GB/s) and two single (25 GB/s) */
    CS_TEST_CHECK(fabs(bound - 150e9) < 1e6, "bound %.2f GB/s, not 150", bound / 1e9);
    CS_TEST_CHECK(p->nrings == 6, "%d rings over disjoint links, not 6", p->nrings);
    const char *v = strstr(c->params, "orders=");
    CS_TEST_CHECK(strcmp(c->algo, "ring") == 0 && v, "the choice is %s %s, not the rings found",
                  c->algo, c->params);
    /* two rings sharing a double link fall out of step now and then (93 %) */
    CS_TEST_CHECK(bus >= 0.9 * bound, "busbw %.2f GB/s under 90 %% of %.2f GB/s", bus / 1e9,
                  bound / 1e9);
    CS_TEST_CHECK(nbus < bus / 2, "platform order %.2f GB/s", nbus / 1e9);
    /* every hop of every channel: one NVLink link */
    cs_platform_t *pl = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    CS_TEST_REQUIRE(cs_platform_open(plat, &pl, &err) == CS_OK, "%s", err.msg);
    CS_TEST_REQUIRE(cs_sim_run(pl, NULL, NULL, 0, &err) == CS_OK, "%s", err.msg);
    for (const char *o = v ? v + 7 : ""; *o && *o != ',';) {
        int n = (int)strcspn(o, "+,");
        for (int i = 0; i < n; i++) {
            cs_sim_link_t l[16];
            int nl = 0;
            const char *a = cs_planner_host(p, 0, digit36(o[i]));
            const char *b = cs_planner_host(p, 0, digit36(o[(i + 1) % n]));
            CS_TEST_CHECK(cs_sim_route(a, b, l, 16, &nl, &err) == CS_OK, "%s", err.msg);
            CS_TEST_CHECK(nl == 1 && strcmp(l[0].tier, "nvlink") == 0,
                          "%s -> %s: %d links, first %s", a, b, nl, nl ? l[0].tier : "-");
        }
        o += n + (o[n] == '+');
    }
    cs_platform_close(pl);
    cs_planner_free(p);
    return 0;
}

static int errors(void)
{
    const uint64_t sizes[] = {1u << 20};
    cs_planner_opts_t o;
    memset(&o, 0, sizeof(o));
    o.platform = "summit:nodes=1";
    o.coll = CS_COLL_ALLREDUCE;
    o.ranks = 1;
    o.sizes = sizes;
    o.nsizes = 1;
    o.top = 1;
    o.jobs = 1;
    o.budget = 10;
    cs_planner_t *p = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_planner_run(&o, &p, &err) == CS_ERR_INVAL && !p &&
                      strstr(err.msg, "nothing to plan"), "one rank: %s", err.msg);
    o.ranks = 0;
    o.platform = "no-such-platform";
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_planner_run(&o, &p, &err) != CS_OK && !p, "unknown platform");
    o.platform = "summit:nodes=4";
    o.budget = 0.01;
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_planner_run(&o, &p, &err) == CS_ERR_RANGE && !p &&
                      strstr(err.msg, "--budget"), "tiny budget: %s", err.msg);
    return 0;
}

static int children(void)
{
    pid_t kid = fork();
    CS_TEST_REQUIRE(kid >= 0, "fork");
    if (kid == 0)
        _exit(7);
    const uint64_t sizes[] = {1u << 20};
    cs_planner_t *p = NULL;
    CS_TEST_REQUIRE(run("x86-p100-pcie-10gbe:nodes=1", sizes, 1, 1, &p) == CS_OK, "plan");
    CS_TEST_CHECK(p->simulated > 0, "the workers ran (%d simulations)", p->simulated);
    cs_planner_free(p);
    int ws = 0;
    pid_t w = waitpid(kid, &ws, 0);
    CS_TEST_CHECK(w == kid && WIFEXITED(ws) && WEXITSTATUS(ws) == 7,
                  "the program's child is still its own: waitpid %d, status %d", (int)w, ws);
    return 0;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "all";
    /* dgx1 last: it loads a platform in this process (SimGrid, once) */
    if (!strcmp(what, "errors") || !strcmp(what, "all"))
        errors();
    if (!strcmp(what, "children") || !strcmp(what, "all"))
        children();
    if (!strcmp(what, "exhaustive") || !strcmp(what, "all"))
        exhaustive("summit:nodes=2");
    if (!strcmp(what, "dgx1") || !strcmp(what, "all"))
        dgx1();
    return cs_test_finish();
}
