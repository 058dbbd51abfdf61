/*
 * test_platforms.c - presets, parameters and their errors, platform files
 * (malformed XML with file:line:col from libxml2, SimGrid's refusals with
 * file:line, collstep's properties, derived tiers, ranks), export and
 * reload, printing, and the igraph figures (diameter, bisection).
 * SimGrid loading and routes are checked by test_plat_sim.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cs_platform.h"
#include "cs_test.h"

static char g_dir[512]; /* $TMPDIR/cs_plat_testXXXXXX, made by main */

static const cs_tier_info_t *tier(const cs_platform_t *p, const char *name)
{
    for (int i = 0; i < p->ntiers; i++)
        if (strcmp(p->tiers[i].name, name) == 0)
            return &p->tiers[i];
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fabs(b);
}

static void test_presets(void)
{
    static const struct {
        const char *spec;
        uint64_t ndev;
        int d0, d1;
        const char *tiers;
    } cases[] = {
        {"x86-p100-pcie-10gbe", 128, 4, 32, "pcie qpi nic leaf spine"},
        {"minsky-p100-ib100", 256, 4, 64, "nvlink nvlink-host xbus pcie nic leaf spine"},
        {"ac922-v100-ib100", 256, 4, 64, "nvlink nvlink-host xbus pcie nic leaf spine"},
        {"summit", 1536, 6, 256, "nvlink nvlink-host xbus pcie nic leaf spine"},
        {"summit:nodes=4608", 27648, 6, 4608, "nvlink nvlink-host xbus pcie nic leaf spine"},
        {"dgx1-v100-ib100", 256, 8, 32, "nvlink pcie qpi nic leaf spine"},
        {"x86-p100-pcie-10gbe:gpus=3,nodes=5", 15, 3, 5, "pcie qpi nic leaf spine"},
    };
    CS_TEST_CHECK(cs_platform_preset_count() == 9, "9 presets, found %d",
                  cs_platform_preset_count());
    for (int i = 0; i < cs_platform_preset_count(); i++)
        CS_TEST_CHECK(cs_platform_preset_summary(i) && cs_platform_preset_params(i) &&
                          (strstr(cs_platform_preset_params(i), "nodes=") ||
                           strstr(cs_platform_preset_params(i), "racks=")),
                      "preset %d has a summary and parameters", i);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        cs_platform_t *p = NULL;
        cs_err_t err = {0};
        int st = cs_platform_open(cases[c].spec, &p, &err);
        CS_TEST_CHECK(st == CS_OK, "open %s: %s", cases[c].spec, err.msg);
        if (st != CS_OK)
            continue;
        CS_TEST_CHECK(p->ndevices == cases[c].ndev, "%s: ndevices %llu, expected %llu",
                      cases[c].spec, (unsigned long long)p->ndevices,
                      (unsigned long long)cases[c].ndev);
        CS_TEST_CHECK(p->ndims == 2 && p->dims[0] == cases[c].d0 && p->dims[1] == cases[c].d1,
                      "%s: dims %dx%d", cases[c].spec, p->dims[0], p->dims[1]);
        char names[128] = "";
        for (int t = 0; t < p->ntiers; t++) {
            strcat(names, t ? " " : "");
            strcat(names, p->tiers[t].name);
            CS_TEST_CHECK(p->tiers[t].nlinks > 0 && p->tiers[t].bandwidth > 0 &&
                              p->tiers[t].latency > 0 && p->tiers[t].bw_factor > 0 &&
                              p->tiers[t].bw_factor <= 1 && p->tiers[t].lat_factor >= 1,
                          "%s: tier %s has links, bandwidth, latency, factors", cases[c].spec,
                          p->tiers[t].name);
        }
        CS_TEST_CHECK(strcmp(names, cases[c].tiers) == 0, "%s: tiers '%s', expected '%s'",
                      cases[c].spec, names, cases[c].tiers);
        CS_TEST_CHECK(p->description && strstr(p->description, "Worked route") &&
                          strstr(p->description, "--") == NULL,
                      "%s: description with a worked route and no '--'", cases[c].spec);
        CS_TEST_CHECK(p->xml && strstr(p->xml, "<prop id=\"tier\" value=\"nic\"/>") &&
                          strstr(p->xml, "<prop id=\"device\" value=\"gpu\"/>") &&
                          strstr(p->xml, "SPLITDUPLEX"),
                      "%s: XML has tiers, devices, split-duplex links", cases[c].spec);
        cs_platform_close(p);
    }
    /* Summit numbers: docs/hardware.md, Summit */
    cs_platform_t *p = NULL;
    cs_err_t err = {0};
    if (cs_platform_open("summit", &p, &err) == CS_OK) {
        const cs_tier_info_t *nv = tier(p, "nvlink"), *nh = tier(p, "nvlink-host"),
                             *xb = tier(p, "xbus"), *nic = tier(p, "nic"), *leaf = tier(p, "leaf");
        CS_TEST_CHECK(nv && near(nv->bandwidth, 50e9) && nv->nlinks == 256 * 6,
                      "summit nvlink (GPU-GPU) 50 GB/s/dir, 2 triangles = 6 links per node");
        CS_TEST_CHECK(nh && nv && near(nh->bandwidth, 50e9) && nh->nlinks == 256 * 6 &&
                          nh->latency == nv->latency && nh->bw_factor == nv->bw_factor &&
                          nh->lat_factor == nv->lat_factor,
                      "summit nvlink-host (GPU-CPU) 6 links per node, numbers as nvlink");
        CS_TEST_CHECK(xb && near(xb->bandwidth, 32e9) && xb->nlinks == 256, "summit xbus 32 GB/s");
        CS_TEST_CHECK(nic && nic->nlinks == 256 * 2 && near(nic->bandwidth, 12.5e9) &&
                          near(nic->bw_factor * nic->bandwidth, 12.2e9),
                      "summit nic: 2 rails per node, each its own 12.5 GB/s link, calibrated "
                      "to 12.2");
        /* lanes: a leaf uplink lane and a spine port per node rail (rail
         * zones); a cross-rack route crosses two ports of half the spine
         * latency each */
        const cs_tier_info_t *sp = tier(p, "spine");
        CS_TEST_CHECK(leaf && leaf->nlinks == 256 * 2 && near(leaf->bandwidth, 12.5e9),
                      "summit: non-blocking, one 12.5 GB/s leaf lane per node rail");
        CS_TEST_CHECK(sp && sp->nlinks == 256 * 2 && near(sp->bandwidth, 12.5e9) &&
                          near(sp->latency, 0.05e-6),
                      "summit: one 12.5 GB/s spine port per node rail, 0.05 us");
        cs_platform_close(p);
    }
    p = NULL;
    CS_TEST_CHECK(cs_platform_open("summit:nodes=40,racks=4", &p, &err) == CS_OK &&
                      tier(p, "spine")->nlinks == 40 * 2,
                  "racks=4: spine ports per node rail: %s", err.msg);
    cs_platform_close(p);
    p = NULL;
    /* DGX-1's node does not split per rail (NVLinks join its PCIe switch
     * groups in many places): a spine link per rack pair, 8 racks of 4 */
    CS_TEST_CHECK(cs_platform_open("dgx1-v100-ib100", &p, &err) == CS_OK &&
                      tier(p, "spine")->nlinks == 8 * 7 / 2 &&
                      near(tier(p, "spine")->bandwidth, 4 * 4 * 12.5e9),
                  "dgx1: a spine link per rack pair of 4 nodes x 4 rails: %s", err.msg);
    cs_platform_close(p);
    p = NULL;
    CS_TEST_CHECK(cs_platform_open("summit:nodes=40,racks=4,oversub=2", &p, &err) == CS_OK &&
                      tier(p, "leaf")->nlinks == 4 && near(tier(p, "leaf")->bandwidth, 10 * 25e9 / 2) &&
                      tier(p, "spine")->nlinks == 1,
                  "oversub=2: 4 shared rack uplinks of 10 x 2 rails / 2, one spine core: %s",
                  err.msg);
    cs_platform_close(p);
    p = NULL;
    /* one rack: no lanes, no leaf/spine tier */
    CS_TEST_CHECK(cs_platform_open("summit:nodes=16", &p, &err) == CS_OK && !tier(p, "leaf") &&
                      !tier(p, "spine") && tier(p, "nic")->nlinks == 32,
                  "summit:nodes=16: one rack, nic rails only: %s", err.msg);
    cs_platform_close(p);
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

static void test_param_errors(void)
{
    expect_error("nosuch", CS_ERR_NOTFOUND, "summit");
    expect_error("summit:colour=red", CS_ERR_INVAL, "nvlink_bw=");
    expect_error("summit:nodes=0", CS_ERR_PARSE, "nodes");
    expect_error("summit:nodes=abc", CS_ERR_PARSE, "found 'abc'");
    expect_error("summit:nvlink_bw=fast", CS_ERR_INVAL, "nvlink_bw");
    expect_error("summit:nvlink_bw=-3", CS_ERR_INVAL, "nvlink_bw");
    expect_error("summit:oversub=0.5", CS_ERR_INVAL, "oversub");
    expect_error("summit:racks=3,nodes_per_rack=4", CS_ERR_INVAL, "not both");
    expect_error("summit:nodes", CS_ERR_PARSE, "KEY=VALUE");
    expect_error("dgx1-v100-ib100:rails=2", CS_ERR_INVAL, "rails");
    expect_error("summit:rails=3", CS_ERR_INVAL, "one per socket");
    expect_error("summit:nodes=4608,nodes_per_rack=2", CS_ERR_INVAL, "1024 racks");
    expect_error("x86-p100-pcie-10gbe:gpus=9", CS_ERR_PARSE, "gpus");
    expect_error("/nonexistent/plat.xml", CS_ERR_NOTFOUND, "/nonexistent/plat.xml");
    /* units */
    cs_platform_t *p = NULL;
    cs_err_t err = {0};
    CS_TEST_CHECK(cs_platform_open("summit:nodes=2,nvlink_bw=400Gbps,nic_lat=700ns", &p, &err) ==
                          CS_OK &&
                      near(tier(p, "nvlink")->bandwidth, 50e9) &&
                      near(tier(p, "nic")->latency, 700e-9),
                  "units 400Gbps and 700ns: %s", err.msg);
    cs_platform_close(p);
}

static void expect_xml_error(const char *name, const char *text, int code, const char *loc,
                             const char *needle)
{
    char path[768], want[900];
    snprintf(path, sizeof(path), "%s/%s", g_dir, name);
    write_file(path, text);
    snprintf(want, sizeof(want), "%s:%s", path, loc);
    cs_platform_t *p = NULL;
    cs_err_t err = {0};
    int st = cs_platform_open(path, &p, &err);
    CS_TEST_CHECK(st == code && strstr(err.msg, want) && strstr(err.msg, needle),
                  "%s: expected %s at %s mentioning '%s', found %s: %s", name,
                  cs_status_name(code), loc, needle, cs_status_name(st), err.msg);
    cs_platform_close(st == CS_OK ? p : NULL);
}

#define HDR                                                                                        \
    "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"      \
    "<platform version=\"4.1\">\n"

/* Errors found by libxml2 (line:column), by collstep's own rules and by
 * SimGrid (line), each naming the file; more in tests/platforms/xml/. */
static void test_xml(void)
{
    expect_xml_error("mismatch.xml", HDR "<zone id=\"z\" routing=\"Full\">\n</zonex>\n</platform>\n",
                     CS_ERR_PARSE, "5:", "mismatch");
    expect_xml_error("unquoted.xml", HDR "<zone id=z routing=\"Full\">\n</zone>\n</platform>\n",
                     CS_ERR_PARSE, "4:", "AttValue");
    expect_xml_error("eof.xml", HDR "<zone id=\"z\" routing=\"Full\">\n", CS_ERR_PARSE, "5:",
                     "end of data");
    expect_xml_error("comment.xml", HDR "<!-- never closed\n", CS_ERR_PARSE, "5:", "Comment");
    expect_xml_error("root.xml",
                     "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"x\">\n  <zone id=\"z\"/>\n",
                     CS_ERR_PARSE, "3:", "<platform>");
    expect_xml_error("nodoctype.xml",
                     "<?xml version='1.0'?>\n<platform version=\"4.1\">\n<zone id=\"z\" "
                     "routing=\"Full\"><host id=\"a\" speed=\"1f\"/></zone>\n</platform>\n",
                     CS_ERR_PARSE, "2:", "DOCTYPE");
    expect_xml_error("badbw.xml",
                     HDR "<zone id=\"z\" routing=\"Full\">\n<host id=\"a\" speed=\"1f\"/>\n"
                         "<link id=\"l\" bandwidth=\"fast\" latency=\"1us\"/>\n</zone>\n"
                         "</platform>\n",
                     CS_ERR_PARSE, "6:", "fast");
    expect_xml_error("baddims.xml",
                     HDR "<zone id=\"z\" routing=\"Full\">\n<prop id=\"collstep_dims\" "
                         "value=\"2x2\"/>\n<host id=\"a\" speed=\"1f\"><prop id=\"device\" "
                         "value=\"gpu\"/></host>\n</zone>\n</platform>\n",
                     CS_ERR_PARSE, "5:", "collstep_dims");
    expect_xml_error("trailing.xml", HDR "</platform>\n<platform/>\n", CS_ERR_PARSE, "5:",
                     "Extra content");
    expect_xml_error("longtier.xml",
                     HDR "<zone id=\"z\" routing=\"Full\">\n<host id=\"a\" speed=\"1f\"/>\n"
                         "<link id=\"l\" bandwidth=\"1GBps\">\n"
                         "  <prop id=\"tier\" value=\"a-tier-name-too-long\"/></link>\n</zone>\n"
                         "</platform>\n",
                     CS_ERR_PARSE, "7:", "tier name");

    /* a small hand-written file: devices marked, tiers given and not */
    char path[600];
    snprintf(path, sizeof(path), "%s/hand.xml", g_dir);
    write_file(path, HDR "<!-- two GPUs -->\n<zone id=\"z\" routing=\"Full\">\n"
                         "  <prop id=\"collstep_dims\" value=\"2x1\"/>\n"
                         "  <host id=\"g0\" speed=\"100Gf\"><prop id=\"device\" value=\"gpu\"/></host>\n"
                         "  <host id=\"g1\" speed=\"100Gf\"><prop id=\"device\" value='gpu'/></host>\n"
                         "  <host id=\"cpu\" speed=\"1Gf\"/>\n"
                         "  <link id=\"a\" bandwidth=\"25GBps\" latency=\"300ns\" "
                         "sharing_policy=\"SPLITDUPLEX\"><prop id=\"tier\" value=\"nvlink\"/></link>\n"
                         "  <link id=\"b\" bandwidth=\"16GBps\" latency=\"1us\"><prop id=\"tier\" "
                         "value=\"pcie\"/></link>\n"
                         "  <link id=\"c\" bandwidth=\"16GBps\" latency=\"1us\"><prop id=\"tier\" "
                         "value=\"pcie\"/></link>\n"
                         "  <link id=\"d\" bandwidth=\"1GBps\" latency=\"1us\"/>\n"
                         "  <route src=\"g0\" dst=\"g1\"><link_ctn id=\"a\" direction=\"UP\"/></route>\n"
                         "  <route src=\"g0\" dst=\"cpu\"><link_ctn id=\"b\"/></route>\n"
                         "</zone>\n</platform>\n");
    cs_platform_t *p = NULL;
    cs_err_t err = {0};
    CS_TEST_CHECK(cs_platform_open(path, &p, &err) == CS_OK, "hand.xml: %s", err.msg);
    if (p) {
        const cs_tier_info_t *nv = tier(p, "nvlink"), *pc = tier(p, "pcie"), *ln = tier(p, "link");
        CS_TEST_CHECK(p->ndevices == 2 && p->ndims == 2 && p->dims[0] == 2 && p->dims[1] == 1 &&
                          strcmp(p->rank_noun, "devices") == 0 && strcmp(p->hosts[0], "g0") == 0 &&
                          strcmp(p->hosts[1], "g1") == 0,
                      "hand.xml: 2 devices g0 g1, dims 2x1");
        CS_TEST_CHECK(nv && nv->nlinks == 1 && near(nv->bandwidth, 25e9) &&
                          near(nv->latency, 300e-9) && nv->bw_factor == 1.0,
                      "hand.xml: nvlink tier");
        CS_TEST_CHECK(pc && pc->nlinks == 2 && near(pc->bandwidth, 16e9), "hand.xml: pcie tier");
        CS_TEST_CHECK(ln && ln->nlinks == 1 && near(ln->bandwidth, 1e9),
                      "hand.xml: an untagged <link> is tier 'link'");
        cs_topo_figures_t fig;
        cs_err_t terr = {0};
        CS_TEST_CHECK(cs_platform_topology(p, &fig, &terr) == CS_OK && fig.exact &&
                          fig.diameter_hops == 1 && near(fig.bisection_bw, 25e9),
                      "hand-written XML: figures from its routes, %s", terr.msg);
        cs_platform_close(p);
    }
}

static void test_roundtrip(const char *spec)
{
    cs_platform_t *a = NULL, *b = NULL;
    cs_err_t err = {0};
    char path[600];
    snprintf(path, sizeof(path), "%s/export.xml", g_dir);
    CS_TEST_CHECK(cs_platform_open(spec, &a, &err) == CS_OK, "open %s: %s", spec, err.msg);
    if (a == NULL)
        return;
    CS_TEST_CHECK(cs_platform_export(a, path, 0, &err) == CS_OK, "export: %s", err.msg);
    CS_TEST_CHECK(cs_platform_open(path, &b, &err) == CS_OK, "reload %s: %s", spec, err.msg);
    if (b) {
        int same = b->ndevices == a->ndevices && b->ntiers == a->ntiers && b->ndims == a->ndims;
        for (int i = 0; same && i < a->ndims; i++)
            same = a->dims[i] == b->dims[i];
        for (int t = 0; same && t < a->ntiers; t++) {
            const cs_tier_info_t *x = &a->tiers[t], *y = tier(b, x->name);
            if (!y) {
                fprintf(stderr, "tier %s missing from the file\n", x->name);
                same = 0;
                break;
            }
            same = x->nlinks == y->nlinks &&
                   near(y->bandwidth, x->bandwidth) && fabs(y->latency - x->latency) < 1e-12 &&
                   near(y->lat_factor, x->lat_factor) && near(y->bw_factor, x->bw_factor);
            if (!same)
                fprintf(stderr, "tier %s: %llu %g %g / %s: %llu %g %g\n", x->name,
                        (unsigned long long)x->nlinks, x->bandwidth, x->latency, y->name,
                        (unsigned long long)y->nlinks, y->bandwidth, y->latency);
        }
        CS_TEST_CHECK(same, "%s: export then load gives the same devices, dims, tiers", spec);
        /* The file's figures come from SimGrid's routes, the preset's from
         * its hardware graph: equal where every path the max-flow uses is a
         * route (summit, x86); elsewhere the routes carry no more than the
         * hardware (DGX-1: a flow may not hop through another GPU).  The
         * file's diameter counts every link of a route, x86's spine-core
         * too, which the model leaves out of its graph. */
        cs_topo_figures_t fa, fb;
        memset(&fa, 0, sizeof(fa));
        memset(&fb, 0, sizeof(fb));
        int ok = cs_platform_topology(a, &fa, &err) == CS_OK &&
                 cs_platform_topology(b, &fb, &err) == CS_OK && fb.bisection_bw > 0;
        if (strncmp(spec, "dgx1", 4) == 0)
            ok = ok && fb.bisection_bw <= fa.bisection_bw * (1 + 1e-9) &&
                 fb.diameter_hops == fa.diameter_hops;
        else if (strncmp(spec, "x86", 3) == 0)
            ok = ok && near(fa.bisection_bw, fb.bisection_bw) &&
                 fb.diameter_hops == fa.diameter_hops + 1;
        else
            ok = ok && near(fa.bisection_bw, fb.bisection_bw) &&
                 fa.diameter_hops == fb.diameter_hops;
        CS_TEST_CHECK(ok,
                      "%s: exported file's figures (bisection %g / %g GB/s, diameter %d / %d): %s",
                      spec, fa.bisection_bw / 1e9, fb.bisection_bw / 1e9, fa.diameter_hops,
                      fb.diameter_hops, err.msg);
        cs_platform_close(b);
    }
    cs_platform_close(a);
    CS_TEST_CHECK(cs_platform_export(NULL, path, 0, NULL) == CS_ERR_INVAL,
                  "export of nothing fails");
}

static void test_figures(void)
{
    static const struct {
        const char *spec;
        double bisection;
        int diameter;
    } cases[] = {
        /* non-blocking: half the devices' nodes x node rails bandwidth; diameter
         * = links of a cross-rack route (g, cpu, hca, port, uplink, spine, ...:
         * two spine ports with rail zones, one rack-pair spine link on DGX-1) */
        {"summit", 128 * 25e9, 10},
        {"summit:nodes=18", 9 * 25e9, 6},                 /* one rack: via the leaf only */
        {"summit:nodes=1", 32e9 + 12.5e9, 3}, /* X-Bus, and rail 0 -> leaf -> rail 1 */
        {"summit:nodes=36,oversub=2", 18 * 25e9 / 2, 8},  /* shared 2:1 uplink */
        {"x86-p100-pcie-10gbe", 16 * 1.25e9 / 3, 12},     /* 3:1 uplink of one rack */
        {"x86-p100-pcie-10gbe:oversub=1", 16 * 1.25e9, 14},
        {"dgx1-v100-ib100", 16 * 50e9, 9},
        {"ac922-v100-ib100", 32 * 12.5e9, 12}, /* one rail, on socket 0 */
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        cs_platform_t *p = NULL;
        cs_err_t err = {0};
        cs_topo_figures_t fig;
        if (cs_platform_open(cases[c].spec, &p, &err) != CS_OK) {
            CS_TEST_CHECK(0, "open %s: %s", cases[c].spec, err.msg);
            continue;
        }
        int st = cs_platform_topology(p, &fig, &err);
        CS_TEST_CHECK(st == CS_OK, "%s: topology: %s", cases[c].spec, err.msg);
        if (st == CS_OK) {
            CS_TEST_CHECK(near(fig.bisection_bw, cases[c].bisection),
                          "%s: bisection %.4g GB/s, expected %.4g", cases[c].spec,
                          fig.bisection_bw / 1e9, cases[c].bisection / 1e9);
            CS_TEST_CHECK(fig.diameter_hops == cases[c].diameter,
                          "%s: diameter %d hops, expected %d", cases[c].spec, fig.diameter_hops,
                          cases[c].diameter);
            CS_TEST_CHECK(fig.nvertices > p->ndevices && fig.nedges > fig.nvertices / 2,
                          "%s: graph size", cases[c].spec);
        }
        cs_platform_close(p);
    }
    /* the full machine: report time */
    cs_platform_t *p = NULL;
    cs_err_t err = {0};
    double t0 = now();
    if (cs_platform_open("summit:nodes=4608", &p, &err) == CS_OK) {
        double t1 = now();
        cs_topo_figures_t fig;
        int st = cs_platform_topology(p, &fig, &err);
        double t2 = now();
        CS_TEST_CHECK(st == CS_OK && near(fig.bisection_bw, 2304 * 25e9) &&
                          fig.diameter_hops == 10,
                      "summit 4608: bisection %.4g GB/s diameter %d: %s", fig.bisection_bw / 1e9,
                      fig.diameter_hops, err.msg);
        printf("summit:nodes=4608: open+XML %.2f s, figures %.2f s (%llu vertices, %llu edges, "
               "bisection %.1f TB/s)\n",
               t1 - t0, t2 - t1, (unsigned long long)fig.nvertices,
               (unsigned long long)fig.nedges, fig.bisection_bw / 1e12);
        cs_platform_close(p);
    }
}

static void test_print(void)
{
    cs_platform_t *p = NULL;
    cs_err_t err = {0};
    if (cs_platform_open("summit:nodes=36", &p, &err) != CS_OK) {
        CS_TEST_CHECK(0, "open: %s", err.msg);
        return;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CS_TEST_CHECK(f && cs_platform_print(p, f, &err) == CS_OK, "print: %s", err.msg);
    if (f)
        fclose(f);
    CS_TEST_CHECK(buf && strstr(buf, "216 devices") && strstr(buf, "nvlink ") &&
                      strstr(buf, "50.000") && strstr(buf, "g0 ===== g1") &&
                      strstr(buf, "bisection 450.000 GB/s"),
                  "print shows devices, tiers, the picture, figures:\n%s", buf ? buf : "");
    free(buf);
    cs_platform_close(p);
}

int main(void)
{
    if (mkdtemp(cs_test_tmp(g_dir, sizeof(g_dir), "cs_plat_testXXXXXX")) == NULL)
        CS_TEST_SKIP("cannot create a temporary directory");
    test_presets();
    test_param_errors();
    test_xml();
    test_roundtrip("summit");
    test_roundtrip("dgx1-v100-ib100:nodes=9");
    test_roundtrip("x86-p100-pcie-10gbe:gpus=3");
    test_figures();
    test_print();
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_dir);
    return cs_test_finish();
}
