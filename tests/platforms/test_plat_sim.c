/*
 * test_plat_sim.c - a preset's XML really loads in SimGrid 3.32 and its
 * routes cross the expected tiers.
 *
 *   test_plat_sim SPEC [SRC DST TIERS [BW] [+LINK,LINK...]]...
 *
 * Opens SPEC, exports its XML, loads it with simgrid_load_platform, checks
 * that the device hosts SimGrid sees match ndevices and carry the reduce
 * speed, then, inside an actor (routes exist only once the platform is
 * sealed), checks each route SRC->DST: the tiers of its links (read from
 * the link-name prefix: the longest tier name of the platform followed by
 * '-', e.g. "nvlink-n0-g0-g1_UP" is nvlink, "nvlink-host-n0-cpu0-g0_UP"
 * nvlink-host) must equal TIERS ("nvlink-host,xbus,nvlink-host") as a
 * multiset, the way back must use the other
 * half (_DOWN for _UP) of each link and, when given, the route bandwidth
 * must be BW bytes/s, and every LINK after a '+' (a link name without its
 * _UP/_DOWN suffix, e.g. "+nic-n0-rail1,leaf-n0-rail1") must be on the
 * route (which rail a GPU leaves on).  Every link SimGrid lists must name a tier of the
 * platform this way.  Prints the load time and peak memory.
 */
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/dynar.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cs_out.h"
#include "cs_platform.h"
#include "cs_test.h"

static int g_nroutes;
static char **g_routes; /* src dst tiers [bw] [+links], 5 slots each */
static const cs_platform_t *g_plat;

/* Length of the tier prefix of link `name`: the longest tier name of the
 * platform that is followed by '-' in `name`; 0 when none. */
static int tier_prefix(const char *name)
{
    int best = 0;
    for (int t = 0; t < g_plat->ntiers; t++) {
        int n = (int)strlen(g_plat->tiers[t].name);
        if (n > best && strncmp(name, g_plat->tiers[t].name, (size_t)n) == 0 && name[n] == '-')
            best = n;
    }
    return best;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted comma list of the tiers in `list` (SimGrid assembles a route
 * through zones as [dst side][src side][zone route], so the order of the
 * links is not the path order: compare tiers as multisets). */
static void sorted_tiers(const char *list, char *out, size_t len)
{
    char buf[512], *tok[64], *save = NULL;
    int n = 0;
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *t = strtok_r(buf, ",", &save); t && n < 64; t = strtok_r(NULL, ",", &save))
        tok[n++] = t;
    qsort(tok, (size_t)n, sizeof(char *), cmp_str);
    size_t off = 0;
    out[0] = '\0';
    for (int i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(out + off, len - off, "%s%s", i ? "," : "", tok[i]);
}

/* Route a->b as "tier,tier,..." (path-order as SimGrid returns it) and the
 * full link names in `names`. */
static void route_of(sg_host_t a, sg_host_t b, char *tiers, char *names, size_t len)
{
    xbt_dynar_t links = xbt_dynar_new(sizeof(sg_link_t), NULL);
    sg_host_get_route(a, b, links);
    size_t off = 0, noff = 0;
    tiers[0] = names[0] = '\0';
    for (unsigned long i = 0; i < xbt_dynar_length(links); i++) {
        const char *name = sg_link_get_name(xbt_dynar_get_as(links, i, sg_link_t));
        int n = tier_prefix(name);
        if (off < len)
            off += (size_t)snprintf(tiers + off, len - off, "%s%.*s", i ? "," : "", n ? n : 1,
                                    n ? name : "?");
        if (noff < len)
            noff += (size_t)snprintf(names + noff, len - noff, "%s%s,", i ? "" : ",", name);
    }
    xbt_dynar_free(&links);
}

static void check_route(const char *src, const char *dst, const char *tiers, const char *bw,
                        const char *need)
{
    sg_host_t a = sg_host_by_name(src), b = sg_host_by_name(dst);
    CS_TEST_CHECK(a != NULL && b != NULL, "hosts %s and %s exist", src, dst);
    if (a == NULL || b == NULL)
        return;
    char got[512], names[4096], rgot[512], rnames[4096], s1[512], s2[512];
    route_of(a, b, got, names, sizeof(names));
    route_of(b, a, rgot, rnames, sizeof(rnames));
    sorted_tiers(got, s1, sizeof(s1));
    sorted_tiers(tiers, s2, sizeof(s2));
    CS_TEST_CHECK(strcmp(s1, s2) == 0, "route %s -> %s: expected tiers %s, found %s", src, dst,
                  tiers, got);
    /* split-duplex: the way back uses the other half of every link (but the
     * spine core, crossed upwards in both directions by design) */
    int mirrored = 1;
    for (char *c = strstr(names, "_UP,"); c; c = strstr(c + 1, "_UP,")) {
        char *st = c;
        while (st > names && st[-1] != ',')
            st--;
        char want[200];
        if (strncmp(st, "spine-core", 10) == 0)
            continue;
        snprintf(want, sizeof(want), ",%.*s_DOWN,", (int)(c - st), st);
        mirrored &= strstr(rnames, want) != NULL;
    }
    CS_TEST_CHECK(mirrored && strlen(got) == strlen(rgot),
                  "route %s -> %s uses the opposite halves of the links of the way back", src, dst);
    if (bw) {
        double want = atof(bw), have = sg_host_get_route_bandwidth(a, b);
        CS_TEST_CHECK(fabs(have - want) <= 1e-6 * want,
                      "route %s -> %s: expected bandwidth %g, found %g", src, dst, want, have);
    }
    if (need) {
        char buf[512], *save = NULL, want[256];
        snprintf(buf, sizeof(buf), "%s", need + 1);
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            snprintf(want, sizeof(want), ",%s_", t);
            CS_TEST_CHECK(strstr(names, want) != NULL, "route %s -> %s crosses %s: %s", src, dst,
                          t, names);
        }
    }
    printf("route %s -> %s: %s (latency %.3f us, bandwidth %.3f GB/s)\n", src, dst, got,
           sg_host_get_route_latency(a, b) * 1e6, sg_host_get_route_bandwidth(a, b) / 1e9);
}

static void checker(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    for (int i = 0; i < g_nroutes; i++) {
        char **r = g_routes + 5 * i;
        check_route(r[0], r[1], r[2], r[3], r[4]);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s SPEC [SRC DST TIERS [BW]]...\n", argv[0]);
        return 2;
    }
    const char *spec = argv[1];
    /* routes: groups of 3 or 4 args; a 4th arg is a bandwidth if numeric */
    g_routes = calloc((size_t)argc * 5, sizeof(char *));
    for (int i = 2; i + 2 < argc;) {
        char **r = g_routes + 5 * g_nroutes++;
        r[0] = argv[i];
        r[1] = argv[i + 1];
        r[2] = argv[i + 2];
        i += 3;
        if (i < argc && argv[i][0] >= '0' && argv[i][0] <= '9')
            r[3] = argv[i++];
        if (i < argc && argv[i][0] == '+')
            r[4] = argv[i++];
    }
    cs_platform_t *p = NULL;
    cs_err_t err = {0};
    CS_TEST_REQUIRE(cs_platform_open(spec, &p, &err) == CS_OK, "open %s: %s", spec, err.msg);
    g_plat = p;
    char path[512];
    cs_test_tmp(path, sizeof(path), "cs_plat_simXXXXXX.xml");
    int fd = mkstemps(path, 4);
    CS_TEST_REQUIRE(fd >= 0, "temporary file");
    close(fd);
    /* mkstemps made the (empty) file: forced over it */
    CS_TEST_REQUIRE(cs_platform_export(p, path, CS_OUT_FORCE, &err) == CS_OK, "export: %s",
                    err.msg);
    printf("%s: %zu bytes of XML, %llu devices\n", spec, strlen(p->xml),
           (unsigned long long)p->ndevices);

    int sargc = 2;
    char *sargv[] = {argv[0], "--log=root.thres:critical", NULL};
    simgrid_init(&sargc, sargv);
    double t0 = now();
    simgrid_load_platform(path);
    double t1 = now();
    unlink(path);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("load: %.2f s, peak RSS %.1f MiB\n", t1 - t0, ru.ru_maxrss / 1024.0);

    size_t nh = sg_host_count();
    sg_host_t *hosts = sg_host_list();
    uint64_t ndev = 0;
    int speed_ok = 1;
    for (size_t i = 0; i < nh; i++) {
        const char *d = sg_host_get_property_value(hosts[i], "device");
        if (d && strcmp(d, "gpu") == 0) {
            ndev++;
            speed_ok &= sg_host_get_speed(hosts[i]) > 1e9;
        }
    }
    free(hosts);
    CS_TEST_CHECK(ndev == p->ndevices, "SimGrid sees %llu devices, platform says %llu",
                  (unsigned long long)ndev, (unsigned long long)p->ndevices);
    CS_TEST_CHECK(speed_ok, "every device has a reduce speed above 1 GB/s");
    uint64_t nlinks = 0;
    for (int t = 0; t < p->ntiers; t++)
        nlinks += p->tiers[t].nlinks;
    /* split-duplex links appear twice (_UP and _DOWN) in SimGrid's list;
     * SimGrid adds its own "__loopback__" */
    size_t nsg = sg_link_count(), ours = 0, named = 0;
    sg_link_t *ll = sg_link_list();
    for (size_t i = 0; i < nsg; i++) {
        const char *name = sg_link_get_name(ll[i]);
        if (strncmp(name, "__", 2) != 0) {
            ours++;
            named += tier_prefix(name) > 0;
        }
    }
    free(ll);
    CS_TEST_CHECK(ours == 2 * nlinks, "SimGrid has %zu links, tiers count %llu x 2", ours,
                  (unsigned long long)nlinks);
    CS_TEST_CHECK(named == ours, "%zu of %zu links are named after a tier of the platform", named,
                  ours);

    if (g_nroutes > 0) {
        sg_actor_create("checker", sg_host_by_name(p->hosts[0]), checker, 0, NULL);
        double t2 = now();
        simgrid_run();
        printf("routes: %.2f s\n", now() - t2);
    }
    cs_platform_close(p);
    free(g_routes);
    return cs_test_finish();
}
