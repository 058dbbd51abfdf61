/*
 * test_sim_badplat.c - a platform SimGrid 3.32 refuses by aborting
 * (xbt_assert: a <host_link> naming a split-duplex link instead of its
 * halves, "Link 'la' not found!", with a backtrace on stderr) given to
 * cs_sim_run as XML text, built by hand (no cs_platform_open to check it
 * first): the simulator loads it in a child first, so the process lives,
 * the status is CS_ERR_PARSE with SimGrid's words, and nothing of
 * SimGrid's (CRITICAL line, backtrace) reaches stderr.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cs_sim.h"
#include "cs_test.h"
#include "sim_fix.h"

static const char *const bad_xml =
    "<?xml version=\"1.0\"?>\n"
    "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    "<platform version=\"4.1\">\n"
    "  <zone id=\"z\" routing=\"Cluster\">\n"
    "    <host id=\"a\" speed=\"1Gf\"><prop id=\"device\" value=\"gpu\"/></host>\n"
    "    <host id=\"b\" speed=\"1Gf\"><prop id=\"device\" value=\"gpu\"/></host>\n"
    "    <link id=\"la\" bandwidth=\"1GBps\" latency=\"1us\" sharing_policy=\"SPLITDUPLEX\"/>\n"
    "    <link id=\"lb\" bandwidth=\"1GBps\" latency=\"1us\" sharing_policy=\"SPLITDUPLEX\"/>\n"
    "    <host_link id=\"a\" up=\"la\" down=\"la\"/>\n"
    "    <host_link id=\"b\" up=\"lb_UP\" down=\"lb_DOWN\"/>\n"
    "  </zone>\n"
    "</platform>\n";

int main(void)
{
    cs_platform_t plat;
    memset(&plat, 0, sizeof(plat));
    snprintf(plat.name, sizeof(plat.name), "hand-built");
    plat.xml = strdup(bad_xml);
    plat.ndevices = 2;
    cs_sched_t *ring = fix_ring(2);
    CS_TEST_REQUIRE(plat.xml && ring, "out of memory");

    /* stderr into a file for the call */
    char path[] = "/tmp/cs_test_badplat_XXXXXX";
    int fd = mkstemp(path);
    CS_TEST_REQUIRE(fd >= 0, "mkstemp");
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    cs_sim_instance_t in = {ring, 1024, CS_DT_F32, 0, 0, NULL};
    cs_err_t err = {0, {0}};
    int st = cs_sim_run(&plat, NULL, &in, 1, &err);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char said[8192] = "";
    ssize_t n = pread(fd, said, sizeof(said) - 1, 0);
    said[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);

    CS_TEST_CHECK(st == CS_ERR_PARSE, "status %d (%s), expected CS_ERR_PARSE", st, err.msg);
    CS_TEST_CHECK(strstr(err.msg, "hand-built: SimGrid cannot load it: Link 'la' not found!") !=
                      NULL,
                  "message: %s", err.msg);
    CS_TEST_CHECK(strchr(err.msg, '\n') == NULL, "not one line: %s", err.msg);
    CS_TEST_CHECK(strstr(said, "Backtrace") == NULL && strstr(said, "CRITICAL") == NULL,
                  "SimGrid printed on stderr: %s", said);
    fix_platform_fini(&plat); /* frees xml */
    cs_sched_destroy(ring);
    return cs_test_finish();
}
