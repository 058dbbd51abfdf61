/*
 * test_plat_gpus.c - the rail-optimized presets (hgx-h100, hgx-h200,
 * gb200-nvl72, mi300x): devices, dims, rank hosts, the links of each tier
 * counted by hand, line rates, switches that reduce (nvls, sharp),
 * parameters and their errors, export and reload with the same figures,
 * topology figures.  Routes in SimGrid: test_plat_sim (plat_sim_hgx, ...).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cs_dtype.h"
#include "cs_platform.h"
#include "cs_test.h"

static char g_dir[512];

static const cs_tier_info_t *tier(const cs_platform_t *p, const char *name)
{
    for (int i = 0; p && i < p->ntiers; i++)
        if (strcmp(p->tiers[i].name, name) == 0)
            return &p->tiers[i];
    return NULL;
}

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fabs(b);
}

/* Tier `name` has n links of bw bytes/s (bw 0: not checked). */
static int has(const cs_platform_t *p, const char *name, uint64_t n, double bw)
{
    const cs_tier_info_t *t = tier(p, name);
    if (t == NULL || t->nlinks != n || (bw > 0 && !near(t->bandwidth, bw))) {
        fprintf(stderr, "  tier %s: %llu links of %g B/s, expected %llu of %g\n", name,
                t ? (unsigned long long)t->nlinks : 0ull, t ? t->bandwidth : 0.0,
                (unsigned long long)n, bw);
        return 0;
    }
    return t->bw_factor == 1.0 && t->lat_factor == 1.0; /* line rates */
}

#define PCIE5 (64e9 * 128 / 130)

static void test_presets(void)
{
    static const struct {
        const char *spec;
        uint64_t ndev;
        int d0, d1;
        const char *tiers;
        uint64_t intra, up; /* intra-domain links; leaf and spine links */
        double intra_bw, reduce;
        int nsw;
    } cases[] = {
        /* one node: 8 NVLink bundles, no leaf uplinks, no spine; its NVSwitch */
        {"hgx-h100", 8, 8, 1, "nvlink pcie nic", 8, 0, 450e9, 3.35e12 / 3, 1},
        {"hgx-h200", 8, 8, 1, "nvlink pcie nic", 8, 0, 450e9, 4.8e12 / 3, 1},
        {"hgx-h100:gpu=h200", 8, 8, 1, "nvlink pcie nic", 8, 0, 450e9, 4.8e12 / 3, 1},
        /* 128 nodes, 4 SUs: a lane and a spine port per NIC, 128 NVSwitches */
        {"hgx-h100:nodes=128", 1024, 8, 128, "nvlink pcie nic leaf spine", 1024, 1024, 450e9,
         3.35e12 / 3, 128},
        {"hgx-h100:nodes=128,nvls=0", 1024, 8, 128, "nvlink pcie nic leaf spine", 1024, 1024,
         450e9, 3.35e12 / 3, 0},
        /* 72 GPUs per rack */
        {"gb200-nvl72", 72, 72, 1, "nvlink pcie nic", 72, 0, 900e9, 8e12 / 3, 1},
        {"gb200-nvl72:racks=4", 288, 72, 4, "nvlink pcie nic leaf spine", 288, 288, 900e9,
         8e12 / 3, 4},
        /* 28 xGMI links per node (8 GPUs, each pair), no switch */
        {"mi300x", 8, 8, 1, "xgmi pcie nic", 28, 0, 64e9, 5.3e12 / 3, 0},
        {"mi300x:nodes=16", 128, 8, 16, "xgmi pcie nic leaf spine", 16 * 28, 128, 64e9,
         5.3e12 / 3, 0},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        cs_platform_t *p = NULL;
        cs_err_t err = {0};
        int st = cs_platform_open(cases[c].spec, &p, &err);
        CS_TEST_CHECK(st == CS_OK, "open %s: %s", cases[c].spec, err.msg);
        if (st != CS_OK)
            continue;
        const char *spec = cases[c].spec;
        CS_TEST_CHECK(p->ndevices == cases[c].ndev && p->ndims == 2 &&
                          p->dims[0] == cases[c].d0 && p->dims[1] == cases[c].d1,
                      "%s: %llu devices, dims %dx%d", spec, (unsigned long long)p->ndevices,
                      p->dims[0], p->dims[1]);
        char names[128] = "";
        for (int t = 0; t < p->ntiers; t++)
            snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", t ? " " : "",
                     p->tiers[t].name);
        CS_TEST_CHECK(strcmp(names, cases[c].tiers) == 0, "%s: tiers '%s', expected '%s'", spec,
                      names, cases[c].tiers);
        const char *intra = strncmp(spec, "mi300x", 6) == 0 ? "xgmi" : "nvlink";
        uint64_t n = cases[c].ndev;
        CS_TEST_CHECK(has(p, intra, cases[c].intra, cases[c].intra_bw) &&
                          has(p, "pcie", n, PCIE5) && has(p, "nic", n, 50e9),
                      "%s: %llu %s links, %llu pcie and nic links (63.0, 50 GB/s)", spec,
                      (unsigned long long)cases[c].intra, intra, (unsigned long long)n);
        CS_TEST_CHECK(cases[c].up == 0 ||
                          (has(p, "leaf", cases[c].up, 50e9) && has(p, "spine", cases[c].up, 50e9) &&
                           near(tier(p, "spine")->latency, 0.05e-6)),
                      "%s: a leaf lane and a spine port (half the hop latency) per NIC", spec);
        CS_TEST_CHECK(near(p->reduce_bw[1], cases[c].reduce) && p->nswitches == cases[c].nsw,
                      "%s: reduce %g GB/s, %d switches", spec, p->reduce_bw[1] / 1e9,
                      p->nswitches);
        CS_TEST_CHECK(p->description && strstr(p->description, "Worked routes") &&
                          strstr(p->description, "--") == NULL &&
                          strstr(p->xml, "<prop id=\"tier\" value=\"pcie\"/>") &&
                          strstr(p->xml, "<bypassRoute"),
                      "%s: description with worked routes, XML with tiers and bypass routes",
                      spec);
        if (p->nswitches > 0 && cases[c].nsw > 0) {
            const cs_plat_switch_t *sw = &p->switches[0];
            uint64_t per = (uint64_t)cases[c].d0;
            CS_TEST_CHECK(sw->kind == CS_REDUCE_NVLS && sw->nhosts == per &&
                              cs_platform_switch_serves(sw, p->hosts[0]) &&
                              cs_platform_switch_serves(sw, p->hosts[per - 1]) &&
                              !(p->ndevices > per && cs_platform_switch_serves(sw, p->hosts[per])) &&
                              cs_platform_switch_reduces(sw, CS_DT_F16, CS_OP_MAX) &&
                              !cs_platform_switch_reduces(sw, CS_DT_F32, CS_OP_MAX) &&
                              !cs_platform_switch_reduces(sw, CS_DT_F32, CS_OP_PROD),
                          "%s: %s reduces (NVLS) for the %llu GPUs of its domain: %llu hosts",
                          spec, sw->host, (unsigned long long)per,
                          (unsigned long long)sw->nhosts);
        }
        cs_platform_close(p);
    }
}

static void test_fabric(void)
{
    cs_platform_t *p = NULL;
    cs_err_t err = {0};
    /* 40 nodes in SUs of 32 (the second partial), uplinks 2:1: a shared
     * uplink per leaf of 32 x 50 / 2 GB/s (the full SU's, the most common)
     * and the spine core, sum of all 16 uplinks */
    if (cs_platform_open("hgx-h100:nodes=40,oversub=2", &p, &err) == CS_OK) {
        CS_TEST_CHECK(has(p, "leaf", 16, 800e9) && has(p, "spine", 1, (32 + 8) * 8 * 25e9),
                      "oversub=2: 16 leaf uplinks of 800 GB/s, one spine core");
        CS_TEST_CHECK(strstr(p->xml, "id=\"leaf-s1-rail7\" bandwidth=\"200000000000Bps\""),
                      "the partial SU's uplink: 8 nodes x 50 / 2 = 200 GB/s");
        cs_platform_close(p);
    } else {
        CS_TEST_CHECK(0, "open: %s", err.msg);
    }
    /* SHARP: each leaf serves its rail of the SU, the spine every host */
    p = NULL;
    if (cs_platform_open("hgx-h100:nodes=40,sharp=1", &p, &err) == CS_OK) {
        int leaves = 0, spine = -1;
        for (int s = 0; s < p->nswitches; s++) {
            if (p->switches[s].kind != CS_REDUCE_SHARP)
                continue;
            if (strcmp(p->switches[s].host, "spine") == 0)
                spine = s;
            else
                leaves++;
        }
        const cs_plat_switch_t *l0 = &p->switches[40];
        CS_TEST_CHECK(p->nswitches == 40 + 16 + 1 && leaves == 16 && spine >= 0,
                      "sharp=1: 40 NVSwitches, 16 leaves, the spine: %d switches", p->nswitches);
        CS_TEST_CHECK(strcmp(l0->host, "s0-leaf0") == 0 && l0->nhosts == 32 &&
                          cs_platform_switch_serves(l0, "n31-g0") &&
                          !cs_platform_switch_serves(l0, "n0-g1") &&
                          !cs_platform_switch_serves(l0, "n32-g0") &&
                          spine >= 0 && p->switches[spine].nhosts >= 320,
                      "s0-leaf0 serves GPU 0 of the 32 nodes of SU 0; the spine every GPU");
        const char *h[2] = {"n0-g0", "n1-g0"}, *h2[2] = {"n0-g0", "n1-g1"};
        int a = cs_platform_switch_for(p, h, 2), b = cs_platform_switch_for(p, h2, 2);
        CS_TEST_CHECK(a == 40 && b == spine,
                      "GPU 0 of two nodes: their leaf; GPUs of two rails: the spine");
        cs_platform_close(p);
    } else {
        CS_TEST_CHECK(0, "open: %s", err.msg);
    }
    /* ranks: rack, tray, GPU; the first 4 are tray r0-t0 */
    p = NULL;
    if (cs_platform_open("gb200-nvl72:racks=2", &p, &err) == CS_OK) {
        CS_TEST_CHECK(strcmp(p->hosts[0], "r0-t0-g0") == 0 && strcmp(p->hosts[3], "r0-t0-g3") == 0 &&
                          strcmp(p->hosts[4], "r0-t1-g0") == 0 &&
                          strcmp(p->hosts[72], "r1-t0-g0") == 0 &&
                          strcmp(p->hosts[143], "r1-t17-g3") == 0,
                      "gb200-nvl72 ranks: r0-t0-g0..g3 first, then tray r0-t1, rack r1 from 72");
        cs_platform_close(p);
    } else {
        CS_TEST_CHECK(0, "open: %s", err.msg);
    }
}

static void expect_error(const char *spec, int code, const char *needle)
{
    cs_platform_t *p = (cs_platform_t *)0x1;
    cs_err_t err = {0};
    int st = cs_platform_open(spec, &p, &err);
    CS_TEST_CHECK(st == code && p == (cs_platform_t *)0x1 && strstr(err.msg, needle),
                  "open '%s': expected %s mentioning '%s', found %s: %s", spec,
                  cs_status_name(code), needle, cs_status_name(st), err.msg);
}

static void test_params(void)
{
    expect_error("hgx-h100:nodes=0", CS_ERR_PARSE, "nodes");
    expect_error("hgx-h100:nodes=2049", CS_ERR_PARSE, "nodes");
    expect_error("hgx-h100:su=0", CS_ERR_PARSE, "su");
    expect_error("hgx-h100:oversub=0.5", CS_ERR_INVAL, "oversub");
    expect_error("hgx-h100:gpu=a100", CS_ERR_INVAL, "expected h100 or h200, found 'a100'");
    expect_error("hgx-h100:nic=fast", CS_ERR_INVAL, "nic");
    expect_error("hgx-h100:nic=0G", CS_ERR_INVAL, "400G");
    expect_error("hgx-h100:nic=400", CS_ERR_INVAL, "'400' has no unit: give 400G (Gb/s");
    expect_error("hgx-h100:nvls=2", CS_ERR_PARSE, "nvls");
    expect_error("hgx-h100:sharp=yes", CS_ERR_PARSE, "sharp");
    expect_error("hgx-h100:racks=2", CS_ERR_INVAL, "no parameter 'racks'");
    expect_error("gb200-nvl72:racks=65", CS_ERR_PARSE, "racks");
    expect_error("gb200-nvl72:nodes=2", CS_ERR_INVAL, "no parameter 'nodes'");
    expect_error("mi300x:nvls=1", CS_ERR_INVAL, "no parameter 'nvls'");
    expect_error("mi300x:sharp=1", CS_ERR_INVAL, "no parameter 'sharp'");
    cs_platform_t *p = NULL;
    cs_err_t err = {0};
    CS_TEST_CHECK(cs_platform_open("hgx-h100:nodes=2,nic=800G,su=1", &p, &err) == CS_OK &&
                      has(p, "nic", 16, 100e9) && has(p, "leaf", 16, 100e9),
                  "nic=800G is 100 GB/s; su=1: one leaf per node and rail: %s", err.msg);
    cs_platform_close(p);
    p = NULL;
    CS_TEST_CHECK(cs_platform_open("mi300x:xgmi_bw=50,nic=50GBps", &p, &err) == CS_OK &&
                      has(p, "xgmi", 28, 50e9) && has(p, "nic", 8, 50e9),
                  "xgmi_bw=50 (GB/s), nic=50GBps: %s", err.msg);
    cs_platform_close(p);
}

/* Export, reload: same devices, dims, tiers, switches, figures. */
static void test_roundtrip(const char *spec)
{
    cs_platform_t *a = NULL, *b = NULL;
    cs_err_t err = {0};
    char path[600];
    snprintf(path, sizeof(path), "%s/export.xml", g_dir);
    CS_TEST_CHECK(cs_platform_open(spec, &a, &err) == CS_OK &&
                      cs_platform_export(a, path, 0, &err) == CS_OK,
                  "open and export %s: %s", spec, err.msg);
    if (a && cs_platform_open_ex(path, CS_PLAT_OPEN_TOPOLOGY, &b, &err) != CS_OK)
        CS_TEST_CHECK(0, "reload %s: %s", spec, err.msg);
    if (a && b) {
        int same = b->ndevices == a->ndevices && b->ntiers == a->ntiers && b->ndims == 2 &&
                   b->dims[0] == a->dims[0] && b->dims[1] == a->dims[1] &&
                   b->nswitches == a->nswitches && b->nunroutable == 0 &&
                   strcmp(b->hosts[b->ndevices - 1], a->hosts[a->ndevices - 1]) == 0;
        for (int t = 0; same && t < a->ntiers; t++) {
            const cs_tier_info_t *x = &a->tiers[t], *y = tier(b, x->name);
            same = y && x->nlinks == y->nlinks && near(y->bandwidth, x->bandwidth) &&
                   fabs(y->latency - x->latency) < 1e-12 && y->bw_factor == 1.0;
        }
        for (int s = 0; same && s < a->nswitches; s++)
            same = a->switches[s].kind == b->switches[s].kind &&
                   a->switches[s].nhosts == b->switches[s].nhosts &&
                   strcmp(a->switches[s].host, b->switches[s].host) == 0;
        CS_TEST_CHECK(same, "%s: the file has the preset's devices, dims, tiers, switches", spec);
        cs_topo_figures_t fa, fb;
        int ok = cs_platform_topology(a, &fa, &err) == CS_OK &&
                 cs_platform_topology(b, &fb, &err) == CS_OK;
        CS_TEST_CHECK(ok && near(fa.bisection_bw, fb.bisection_bw) &&
                          fa.diameter_hops == fb.diameter_hops && fb.exact,
                      "%s: figures of the preset and of the file's routes: bisection %g / %g "
                      "GB/s, diameter %d / %d",
                      spec, fa.bisection_bw / 1e9, fb.bisection_bw / 1e9, fa.diameter_hops,
                      fb.diameter_hops);
    }
    cs_platform_close(a);
    cs_platform_close(b);
}

static void test_figures(void)
{
    static const struct {
        const char *spec;
        double bisection;
        int diameter;
    } cases[] = {
        {"hgx-h100", 4 * 450e9, 2},               /* NVLink bundles of half the GPUs */
        {"hgx-h100:nodes=2", 8 * 50e9, 8},        /* the NICs of node 0; rail to rail */
        {"hgx-h100:nodes=128", 512 * 50e9, 8},
        {"hgx-h100:nodes=64,oversub=4", 32 * 8 * 12.5e9, 8}, /* SU 0's uplinks */
        /* NVLink of half the rack, and its NICs through the rack's leaves (a
         * path no route takes: the figure is the hardware's) */
        {"gb200-nvl72", 36 * (900e9 + 50e9), 2},
        {"gb200-nvl72:racks=4", 144 * 50e9, 8},
        {"mi300x", 16 * 64e9, 1},                 /* 4 x 4 xGMI links cross the cut */
        {"mi300x:nodes=16", 64 * 50e9, 8},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        cs_platform_t *p = NULL;
        cs_err_t err = {0};
        cs_topo_figures_t fig;
        int st = cs_platform_open(cases[c].spec, &p, &err);
        if (st == CS_OK)
            st = cs_platform_topology(p, &fig, &err);
        CS_TEST_CHECK(st == CS_OK && near(fig.bisection_bw, cases[c].bisection) &&
                          fig.diameter_hops == cases[c].diameter,
                      "%s: bisection %.4g GB/s (expected %.4g), diameter %d (expected %d): %s",
                      cases[c].spec, st == CS_OK ? fig.bisection_bw / 1e9 : 0,
                      cases[c].bisection / 1e9, st == CS_OK ? fig.diameter_hops : -1,
                      cases[c].diameter, err.msg);
        cs_platform_close(p);
    }
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* A zone that only declares a switch: reduce_switch names a host outside
 * it, reduce_hosts the hosts it serves; unknown names are errors at the
 * property's line. */
static void test_switch_file(void)
{
    static const char *head =
        "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
        "<platform version=\"4.1\">\n<zone id=\"top\" routing=\"Floyd\">\n"
        "  <zone id=\"f\" routing=\"Full\">\n"
        "    <link id=\"l0\" bandwidth=\"450GBps\" latency=\"0.3us\" sharing_policy=\"SPLITDUPLEX\"/>\n"
        "    <link id=\"l1\" bandwidth=\"450GBps\" latency=\"0.3us\" sharing_policy=\"SPLITDUPLEX\"/>\n"
        "    <host id=\"g0\" speed=\"1Tf\"><prop id=\"device\" value=\"gpu\"/></host>\n"
        "    <host id=\"g1\" speed=\"1Tf\"><prop id=\"device\" value=\"gpu\"/></host>\n"
        "    <host id=\"sw\" speed=\"1f\"/>\n"
        "    <route src=\"g0\" dst=\"sw\"><link_ctn id=\"l0\" direction=\"UP\"/></route>\n"
        "    <route src=\"g1\" dst=\"sw\"><link_ctn id=\"l1\" direction=\"UP\"/></route>\n"
        "    <route src=\"g0\" dst=\"g1\"><link_ctn id=\"l0\" direction=\"UP\"/>"
        "<link_ctn id=\"l1\" direction=\"DOWN\"/></route>\n"
        "  </zone>\n"
        "  <zone id=\"decl\" routing=\"None\">\n"
        "    <prop id=\"reduce\" value=\"nvls\"/>\n";
    static const struct {
        const char *props, *needle;
    } cases[] = {
        {"    <prop id=\"reduce_switch\" value=\"sw\"/><prop id=\"reduce_hosts\" value=\"g0,g1\"/>\n",
         NULL},
        {"    <prop id=\"reduce_switch\" value=\"nosuch\"/>\n",
         ":17: zone decl: reduce_switch names 'nosuch', which is no router or host of the platform"},
        {"    <prop id=\"reduce_switch\" value=\"sw\"/><prop id=\"reduce_hosts\" value=\"g0,gx\"/>\n",
         ":17: zone decl: reduce_hosts names 'gx', which is no host of the platform"},
        {"    <prop id=\"reduce_switch\" value=\"sw\"/><prop id=\"reduce_hosts\" value=\" , \"/>\n",
         ":17: zone decl: expected reduce_hosts as host names separated by commas"},
    };
    char path[600], text[4096];
    snprintf(path, sizeof(path), "%s/decl.xml", g_dir);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        snprintf(text, sizeof(text), "%s%s  </zone>\n</zone>\n</platform>\n", head, cases[c].props);
        write_file(path, text);
        cs_platform_t *p = NULL;
        cs_err_t err = {0};
        int st = cs_platform_open(path, &p, &err);
        if (cases[c].needle == NULL)
            CS_TEST_CHECK(st == CS_OK && p->nswitches == 1 && strcmp(p->switches[0].host, "sw") == 0 &&
                              p->switches[0].nhosts == 2 &&
                              cs_platform_switch_serves(&p->switches[0], "g1"),
                          "a declaring zone: switch sw serves g0 and g1: %s", err.msg);
        else
            CS_TEST_CHECK(st == CS_ERR_PARSE && strstr(err.msg, cases[c].needle),
                          "case %zu: expected '%s', found %s", c, cases[c].needle, err.msg);
        cs_platform_close(st == CS_OK ? p : NULL);
    }
}

int main(void)
{
    if (mkdtemp(cs_test_tmp(g_dir, sizeof(g_dir), "cs_plat_gpusXXXXXX")) == NULL)
        CS_TEST_SKIP("cannot create a temporary directory");
    test_presets();
    test_fabric();
    test_params();
    test_figures();
    test_switch_file();
    test_roundtrip("hgx-h100:nodes=3,su=2,sharp=1");
    test_roundtrip("hgx-h100:nodes=3,su=2,oversub=2");
    test_roundtrip("gb200-nvl72:racks=2,su=1");
    test_roundtrip("mi300x:nodes=2");
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_dir);
    return cs_test_finish();
}
