/* platforms/cs_plat_calib: the platform `collstep calibrate` writes.
 *
 * Three nodes of two ranks, node 2 at half the rate of the others (tier
 * nic-slow).  Duplex ratios as calibrate derives them: node 2 loses its
 * two directions with different peers (node_duplex 0.8) and more when it
 * exchanges with a partner (xch_duplex 0.6); node 0 exchanges at 0.95
 * (full duplex: no link).  Checked: the links and their bandwidths (twice
 * rho times the one-way rate; a node pair gets the slower node's rho),
 * which routes cross them (every route of node 2 its duplex-n2, the
 * routes between nodes 0 or 1 and node 2 duplex-nX-n2 both ways, none
 * inside a node or between the fast nodes), ports on the ranks that have
 * one, dims and tiers; the text loads as a platform (cs_platform_open);
 * a faster node's lower exchange rho makes no link to a slower node, equal
 * nodes take the smaller rho, a rho below 0.5 is taken as 0.5; a
 * bandwidth that is not finite is refused; no duplex arrays: no duplex
 * links; the recognizer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cs_plat_calib.h"
#include "cs_platform.h"
#include "cs_test.h"

/* The route line from rank a to rank b (a copy; NULL when missing). */
static char *route(const char *xml, int na, int a, int nb, int b)
{
    char key[96];
    snprintf(key, sizeof(key), "<route src=\"n%d-r%d\" dst=\"n%d-r%d\"", na, a, nb, b);
    const char *s = strstr(xml, key);
    if (!s)
        return NULL;
    const char *e = strstr(s, "</route>");
    return e ? strndup(s, (size_t)(e - s)) : NULL;
}

/* The bandwidth (bytes/s) of link `id`, or -1. */
static double link_bw(const char *xml, const char *id)
{
    char key[96];
    snprintf(key, sizeof(key), "<link id=\"%s\" bandwidth=\"", id);
    const char *s = strstr(xml, key);
    return s ? strtod(s + strlen(key), NULL) : -1;
}

static int near(double a, double b)
{
    return a > 0 && b > 0 && (a > b ? a / b : b / a) < 1 + 1e-5;
}

int main(void)
{
    int node_of[6] = {0, 0, 1, 1, 2, 2};
    cs_plat_calib_node_t nodes[3] = {{"alpha", 25e6, 5e-6, "", 0, 0}, {"beta", 25e6, 6e-6, "", 0, 0},
                                     {"gamma", 12.5e6, 7e-6, "", 0, 0}};
    double node_rho[3] = {0, 0, 0.8}, xch_rho[3] = {0.95, 0, 0.6};
    double port[6] = {0, 0, 0, 3e7, 0, 0};
    cs_plat_calib_t p = {.nranks = 6, .nnodes = 3, .node_of = node_of, .nodes = nodes,
                         .intra_bw = 2e9, .intra_lat = 10e-6, .switch_bw = 62.5e6,
                         .reduce_speed = 1e10, .port_bw = port, .port_lat = 2e-6,
                         .node_duplex = node_rho, .xch_duplex = xch_rho};
    char *xml = NULL;
    cs_err_t err = {0};
    CS_TEST_REQUIRE(cs_plat_calib_xml(&p, &xml, &err) == CS_OK && xml, "xml: %s", err.msg);
    CS_TEST_CHECK(!strcmp(nodes[0].tier, "nic") && !strcmp(nodes[2].tier, "nic-slow"),
                  "tiers %s %s", nodes[0].tier, nodes[2].tier);
    CS_TEST_CHECK(strstr(xml, "<prop id=\"collstep_dims\" value=\"2x3\"/>") != NULL, "no dims");
    CS_TEST_CHECK(cs_plat_calib_recognize(xml, strlen(xml)), "own text not recognized");
    CS_TEST_CHECK(!cs_plat_calib_recognize("<?xml version='1.0'?>\n<platform>", 30),
                  "a foreign platform recognized");

    /* links: duplex-n2 at 2 x 0.8 x 12.5e6; node pairs with node 2 at the
     * slower node's exchange rho; none for nodes 0, 1 or their pair */
    CS_TEST_CHECK(near(link_bw(xml, "duplex-n2"), 2 * 0.8 * 12.5e6), "duplex-n2 %g",
                  link_bw(xml, "duplex-n2"));
    CS_TEST_CHECK(near(link_bw(xml, "duplex-n0-n2"), 2 * 0.6 * 12.5e6), "duplex-n0-n2 %g",
                  link_bw(xml, "duplex-n0-n2"));
    CS_TEST_CHECK(near(link_bw(xml, "duplex-n1-n2"), 2 * 0.6 * 12.5e6), "duplex-n1-n2 %g",
                  link_bw(xml, "duplex-n1-n2"));
    CS_TEST_CHECK(link_bw(xml, "duplex-n0") < 0 && link_bw(xml, "duplex-n1") < 0 &&
                      link_bw(xml, "duplex-n0-n1") < 0,
                  "a duplex link for the fast nodes");
    CS_TEST_CHECK(near(link_bw(xml, "nic-n2"), 12.5e6) && near(link_bw(xml, "port-r3"), 3e7) &&
                      link_bw(xml, "port-r0") < 0,
                  "nic-n2 %g port-r3 %g", link_bw(xml, "nic-n2"), link_bw(xml, "port-r3"));
    const char *dl = strstr(xml, "id=\"duplex-n2\" bandwidth");
    const char *dle = dl ? strstr(dl, "</link>") : NULL;
    CS_TEST_CHECK(dl && dle && strstr(dl, "SHARED") && strstr(dl, "SHARED") < dle,
                  "duplex-n2 not SHARED");

    /* routes */
    struct {
        int na, a, nb, b;
        const char *has[4], *not_[4];
    } rt[] = {
        {0, 0, 2, 4, {"nic-n0", "nic-n2", "duplex-n2\"", "duplex-n0-n2"}, {"duplex-n1-n2", "port", NULL}},
        {2, 5, 0, 1, {"duplex-n2\"", "duplex-n0-n2", NULL}, {"duplex-n1-n2", NULL}},
        {1, 3, 2, 4, {"port-r3", "duplex-n2\"", "duplex-n1-n2", NULL}, {"duplex-n0-n2", NULL}},
        {0, 1, 1, 2, {"nic-n0", "nic-n1", NULL}, {"duplex", "port", NULL}},
        {2, 4, 2, 5, {"lo-r4", "lo-r5", NULL}, {"duplex", "nic", NULL}},
    };
    for (size_t i = 0; i < sizeof(rt) / sizeof(rt[0]); i++) {
        char *r = route(xml, rt[i].na, rt[i].a, rt[i].nb, rt[i].b);
        CS_TEST_CHECK(r != NULL, "no route %d -> %d", rt[i].a, rt[i].b);
        for (int k = 0; r && k < 4 && rt[i].has[k]; k++)
            CS_TEST_CHECK(strstr(r, rt[i].has[k]) != NULL, "route %d -> %d lacks %s: %s", rt[i].a,
                          rt[i].b, rt[i].has[k], r);
        for (int k = 0; r && k < 4 && rt[i].not_[k]; k++)
            CS_TEST_CHECK(strstr(r, rt[i].not_[k]) == NULL, "route %d -> %d has %s: %s", rt[i].a,
                          rt[i].b, rt[i].not_[k], r);
        free(r);
    }

    /* the text loads as a platform */
    char path[512];
    cs_test_tmp(path, sizeof(path), "cs_plat_calib_XXXXXX.xml");
    int fd = mkstemps(path, 4);
    CS_TEST_REQUIRE(fd >= 0, "mkstemps");
    FILE *f = fdopen(fd, "w");
    CS_TEST_REQUIRE(f && fputs(xml, f) >= 0 && fclose(f) == 0, "write %s", path);
    cs_platform_t *pl = NULL;
    CS_TEST_CHECK(cs_platform_open(path, &pl, &err) == CS_OK, "load: %s", err.msg);
    cs_platform_close(pl);
    unlink(path);
    free(xml);

    /* a faster node's lower exchange rho gives no link to a slower node
     * (the pair runs at the slower node's rate, so its rho applies); nodes
     * of equal rate take the smaller rho; a rho below 0.5 is taken as 0.5 */
    double xch2[3] = {0.7, 0, 0};
    double node2[3] = {0.3, 0, 0};
    nodes[1].bw = 25e6 * 1.02; /* within 5 %: equal to node 0 */
    p.xch_duplex = xch2, p.node_duplex = node2;
    CS_TEST_REQUIRE(cs_plat_calib_xml(&p, &xml, &err) == CS_OK && xml, "xml: %s", err.msg);
    CS_TEST_CHECK(link_bw(xml, "duplex-n0-n2") < 0 && link_bw(xml, "duplex-n1-n2") < 0,
                  "the faster node's exchange rho made a link to the slower node");
    CS_TEST_CHECK(near(link_bw(xml, "duplex-n0-n1"), 2 * 0.7 * 25e6), "duplex-n0-n1 %g",
                  link_bw(xml, "duplex-n0-n1"));
    CS_TEST_CHECK(near(link_bw(xml, "duplex-n0"), 2 * 0.5 * 25e6), "duplex-n0 %g (rho 0.3)",
                  link_bw(xml, "duplex-n0"));
    free(xml);
    xml = NULL;
    /* a measurement that went wrong is refused, not written */
    nodes[2].bw = INFINITY;
    CS_TEST_CHECK(cs_plat_calib_xml(&p, &xml, &err) == CS_ERR_INVAL && !xml,
                  "an infinite NIC bandwidth accepted");
    nodes[2].bw = 12.5e6;
    nodes[1].bw = 25e6;

    /* without duplex arrays (and no pair rho): no duplex link at all */
    p.node_duplex = p.xch_duplex = NULL;
    p.port_bw = NULL;
    CS_TEST_REQUIRE(cs_plat_calib_xml(&p, &xml, &err) == CS_OK && xml, "xml: %s", err.msg);
    CS_TEST_CHECK(strstr(xml, "duplex") == NULL && strstr(xml, "port-") == NULL,
                  "duplex or port links without measurements");
    free(xml);
    return cs_test_finish();
}
