/*
 * test_sim_exact.c - exactness of the ideal model on a contention-free
 * platform: simulated times equal the alpha-beta formulas within 0.1%.
 *
 * Platform: a star of 256 devices (sim_fix.h), link latency 0.5 us and
 * 10 GB/s per direction, reduction bandwidth 100 GB/s, so
 * alpha = 1 us, beta = 1e-10 s/B, gamma = 1e-11 s/B.
 * Run twice: plain (ports unlimited) and "1port" (single-port model).
 * Cases: the hand-built ring of sim_fix.c (independent of the generators)
 * and the registry's ring, rd, rhd, binomial allreduce and binomial and
 * chain broadcast, for P in {4, 8, 64, 256} and sizes from 1 KB to 1 GB
 * (a few per P), all in one simulation.  The registry's own cost function
 * gives the expected time.  Also checks the observer records of the hand
 * ring (message count, bytes, time order) and cs_sim_route.
 */
#include <math.h>
#include <string.h>
#include <time.h>

#include "cs_algo.h"
#include "cs_sim.h"
#include "cs_test.h"
#include "sim_fix.h"

#define LAT 0.5e-6
#define BW 10e9
#define SPEED 100e9
#define MAXI 256

typedef struct tcase {
    const cs_algo_t *algo; /* NULL for the hand ring */
    cs_sched_t *s;
} tcase_t;

static struct {
    uint64_t nxfer, xbytes, nsteps, bad_order;
    int inst; /* the instance observed */
} ob;

static void on_xfer(void *ctx, int inst, const cs_sim_xfer_rec_t *r)
{
    (void)ctx;
    if (inst != ob.inst)
        return;
    ob.nxfer++;
    ob.xbytes += r->bytes;
    if (!(r->end >= r->start) || r->src == r->dst || strncmp(r->src_host, "g", 1) != 0)
        ob.bad_order++;
}

static void on_step(void *ctx, int inst, const cs_sim_step_rec_t *r)
{
    (void)ctx;
    if (inst != ob.inst)
        return;
    ob.nsteps++;
    if (!(r->end >= r->start))
        ob.bad_order++;
}

int main(int argc, char **argv)
{
    /* "1port": single-port model (cs_sim_opts_t.ports = 1) */
    int single = argc > 1 && strcmp(argv[1], "1port") == 0;
    static const int Ps[] = {4, 8, 64, 256};
    static const uint64_t sizes[][3] = {
        {1 << 10, 1 << 20, 1ull << 30}, /* P=4 */
        {1 << 10, 64 << 20, 1ull << 30},
        {1 << 14, 16 << 20, 1ull << 30},
        {1 << 16, 64 << 20, 1ull << 30},
    };
    /* single_only: exact only in the single-port model (none at present:
     * the tree generators send to a node's children one after another) */
    static const struct {
        cs_coll_t coll;
        const char *name;
        int single_only;
    } algos[] = {
        {CS_COLL_ALLREDUCE, "ring", 0},     {CS_COLL_ALLREDUCE, "rd", 0},
        {CS_COLL_ALLREDUCE, "rhd", 0},      {CS_COLL_ALLREDUCE, "binomial", 0},
        {CS_COLL_BROADCAST, "binomial", 0}, {CS_COLL_BROADCAST, "chain", 0},
    };
    const int nalg = (int)(sizeof(algos) / sizeof(algos[0]));
    cs_platform_t plat;
    fix_star(&plat, 256, LAT, BW, SPEED);
    cs_ab_model_t m = {2 * LAT, 1.0 / BW, 1.0 / SPEED};
    static cs_sim_instance_t inst[MAXI];
    static tcase_t tc[MAXI];
    static tcase_t scheds[64];
    int n = 0, ns = 0;

    for (int pi = 0; pi < 4; pi++) {
        int P = Ps[pi];
        for (int a = -1; a < nalg; a++) {
            tcase_t t = {NULL, NULL};
            if (a < 0) {
                t.s = fix_ring(P);
                CS_TEST_REQUIRE(t.s != NULL, "fix_ring(%d)", P);
            } else if (algos[a].single_only && !single) {
                continue;
            } else {
                t.algo = cs_algo_find(algos[a].coll, algos[a].name);
                if (!t.algo) {
                    if (pi == 0)
                        fprintf(stderr, "note: %s %s not registered yet\n",
                                cs_coll_name(algos[a].coll), algos[a].name);
                    continue;
                }
                cs_coll_desc_t d = {algos[a].coll, P, 0, 0};
                cs_params_t prm;
                cs_params_init(&prm);
                cs_err_t err = {0};
                int st = cs_algo_build(t.algo, &d, &prm, &t.s, &err);
                CS_TEST_CHECK(st == CS_OK, "build %s P=%d: %s", algos[a].name, P, err.msg);
                if (st != CS_OK)
                    continue;
            }
            scheds[ns++] = t;
            for (int k = 0; k < 3; k++) {
                if (a < 0 && pi == 3 && k == 0)
                    ob.inst = n; /* observe the hand ring, P=256, smallest size */
                inst[n].sched = t.s;
                inst[n].bytes = sizes[pi][k];
                inst[n].dtype = CS_DT_F32;
                tc[n] = t;
                n++;
            }
        }
    }
    cs_sim_observer_t obs = {NULL, NULL, on_step, on_xfer, NULL, NULL};
    cs_sim_opts_t opts;
    cs_sim_opts_init(&opts);
    opts.obs = &obs;
    opts.ports = single ? 1 : 0;
    cs_err_t err = {0};
    clock_t c0 = clock();
    int st = cs_sim_run(&plat, &opts, inst, n, &err);
    fprintf(stderr, "build %.2f s, simulate %.2f s\n", (double)c0 / CLOCKS_PER_SEC, (double)(clock() - c0) / CLOCKS_PER_SEC);
    CS_TEST_REQUIRE(st == CS_OK, "cs_sim_run: %s", err.msg);

    for (int i = 0; i < n; i++) {
        const cs_sched_t *s = inst[i].sched;
        int P = s->desc.nranks;
        double bytes = (double)inst[i].bytes, want;
        if (!tc[i].algo) {
            double c = bytes / P;
            want = 2.0 * (P - 1) * (m.alpha + c * m.beta) + (P - 1) * c * m.gamma;
        } else if (tc[i].algo->cost) {
            cs_params_t prm;
            cs_params_init(&prm);
            want = tc[i].algo->cost(&s->desc, &prm, bytes, &m);
        } else {
            continue;
        }
        double rel = fabs(inst[i].time - want) / want;
        CS_TEST_CHECK(rel <= 1e-3, "%s %s P=%d bytes=%llu: simulated %.9g s, formula %.9g s (%.3f%%)",
                      cs_coll_name(s->desc.coll), s->algo, P, (unsigned long long)inst[i].bytes,
                      inst[i].time, want, 100 * rel);
        printf("%-10s %-9s P=%-4d %11llu B  sim %.6e s  formula %.6e s  err %.2e\n",
               cs_coll_name(s->desc.coll), s->algo, P, (unsigned long long)inst[i].bytes,
               inst[i].time, want, rel);
    }

    /* observer of the hand ring, P = 256, 64 KB: 2(P-1)P messages of 256 B */
    CS_TEST_CHECK(ob.nxfer == 2ull * 255 * 256, "transfers: %llu", (unsigned long long)ob.nxfer);
    CS_TEST_CHECK(ob.xbytes == 2ull * 255 * 256 * 256, "bytes: %llu", (unsigned long long)ob.xbytes);
    CS_TEST_CHECK(ob.nsteps == 256ull * (1 + 4 * 255), "steps: %llu", (unsigned long long)ob.nsteps);
    CS_TEST_CHECK(ob.bad_order == 0, "records out of order: %llu", (unsigned long long)ob.bad_order);

    cs_sim_link_t l[8];
    int nl = 0;
    st = cs_sim_route("g0", "g5", l, 8, &nl, &err);
    CS_TEST_CHECK(st == CS_OK && nl == 2, "route g0 -> g5: st %d, %d links", st, nl);
    if (st == CS_OK && nl == 2) {
        CS_TEST_CHECK(strcmp(l[0].tier, "nic") == 0 && strcmp(l[1].tier, "nic") == 0,
                      "tiers %s %s", l[0].tier, l[1].tier);
        CS_TEST_CHECK(l[0].bandwidth == BW && l[1].latency == LAT, "bw %g lat %g", l[0].bandwidth,
                      l[1].latency);
        CS_TEST_CHECK(strstr(l[0].name, "l0") && strstr(l[1].name, "l5"), "names %s %s",
                      l[0].name, l[1].name);
    }
    st = cs_sim_route("g0", "nohost", l, 8, &nl, &err);
    CS_TEST_CHECK(st == CS_ERR_NOTFOUND, "unknown host: %d", st);
    st = cs_sim_run(&plat, &opts, inst, 1, &err);
    CS_TEST_CHECK(st == CS_ERR_UNSUPPORTED, "second run: %d", st);

    for (int i = 0; i < ns; i++)
        cs_sched_destroy(scheds[i].s);
    fix_platform_fini(&plat);
    return cs_test_finish();
}
