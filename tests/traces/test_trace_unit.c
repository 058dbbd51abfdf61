/*
 * test_trace_unit.c - the trace recorder on synthetic flows, no simulator:
 *   - one flow alone at full rate: peak 1, nothing shifted, exact bytes;
 *   - two flows whose average rates exceed the link: leveled to <= 1,
 *     bytes conserved, the excess shifted later;
 *   - random flows on random routes over a long run (bucket doubling):
 *     per link sum(util x bw x D) = bytes within 1e-6, util <= 1, tier bytes
 *     = sum over flows of bytes x the tier's hops, buckets within
 *     [opts.buckets/2, opts.buckets];
 *   - the route cache asks the router once per rank pair;
 *   - a session commits whole (files present, an old directory replaced),
 *     an uncommitted one leaves nothing; `collstep trace`'s summary reads
 *     it back with the same bottleneck.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cs_test.h"

/* CS_TEST_REQUIRE evaluates its condition twice: evaluate once here. */
#define REQ(cond, ...)                                                          \
    do {                                                                        \
        int req_ok_ = !!(cond);                                                 \
        CS_TEST_REQUIRE(req_ok_, __VA_ARGS__);                                  \
    } while (0)
#include "cs_trace.h"

static char root[256];

static cs_trace_meta_t meta(const char *algo, int P)
{
    cs_trace_meta_t m;
    memset(&m, 0, sizeof(m));
    m.backend = CS_TRACE_SIM;
    snprintf(m.platform, sizeof(m.platform), "synthetic");
    snprintf(m.coll, sizeof(m.coll), "allreduce");
    snprintf(m.algo, sizeof(m.algo), "%s", algo);
    snprintf(m.model, sizeof(m.model), "ideal");
    m.bytes = 1 << 20;
    m.nranks = P;
    return m;
}

static int exists(const char *dir, const char *name)
{
    char p[512];
    struct stat sb;
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return stat(p, &sb) == 0;
}

static void check_conservation(const cs_trace_t *t, double tol)
{
    double D = cs_trace_resolution(t);
    int nb = cs_trace_nbuckets(t);
    for (uint32_t i = 0; i < cs_trace_nlinks(t); i++) {
        const cs_trace_link_stat_t *s = cs_trace_link_stat(t, i);
        double sum = 0, peak = 0;
        for (int k = 0; k < nb; k++) {
            double u = cs_trace_link_util(t, i, k);
            sum += u * s->bandwidth * D;
            if (u > peak)
                peak = u;
        }
        CS_TEST_CHECK(fabs(sum - (double)s->bytes) <= tol * (double)s->bytes + 1e-6,
                      "link %s: integral %.3f vs bytes %llu", s->name, sum,
                      (unsigned long long)s->bytes);
        CS_TEST_CHECK(peak <= 1.0 + 1e-12, "link %s: utilization %.6f > 1", s->name, peak);
        CS_TEST_CHECK(fabs(peak - s->peak_util) < 1e-12, "link %s: peak %g vs %g", s->name, peak,
                      s->peak_util);
    }
}

static int test_single_and_overlap(void)
{
    char dir[300];
    snprintf(dir, sizeof(dir), "%s/t1", root);
    mkdir(dir, 0777);
    cs_trace_t *t = NULL;
    cs_err_t err = {0};
    cs_trace_meta_t m = meta("unit", 2);
    REQ(cs_trace_create(dir, &m, NULL, 10.0, &t, &err) == CS_OK, "%s", err.msg);
    uint32_t a, b;
    REQ(cs_trace_link(t, "a", "nic", 1e9, 1e-6, &a) == CS_OK, "link a");
    REQ(cs_trace_link(t, "b", "spine", 1e9, 0, &b) == CS_OK, "link b");
    uint32_t again;
    CS_TEST_CHECK(cs_trace_link(t, "a", "nic", 1e9, 1e-6, &again) == CS_OK && again == a,
                  "interning returns the same id");
    /* alone on a: 1e5 bytes at 1e9 B/s after 1 us of latency: [10, 10 + 101 us] */
    CS_TEST_CHECK(cs_trace_add_xfer_links(t, &a, 1, 100000, 10.0, 10.0 + 101e-6) == CS_OK, "x1");
    /* on b: two flows averaging 1e9 and 0.5e9 B/s over overlapping spans */
    CS_TEST_CHECK(cs_trace_add_xfer_links(t, &b, 1, 100000, 10.0, 10.0 + 100e-6) == CS_OK, "x2");
    CS_TEST_CHECK(cs_trace_add_xfer_links(t, &b, 1, 50000, 10.0 + 50e-6, 10.0 + 150e-6) == CS_OK,
                  "x3");
    cs_trace_step_t st = {0, 0, 0, 1, 100000, 10.0, 10.0 + 101e-6};
    CS_TEST_CHECK(cs_trace_add_step(t, &st) == CS_OK, "step");
    REQ(cs_trace_finish(t, 10.0 + 400e-6, &err) == CS_OK, "%s", err.msg);
    CS_TEST_CHECK(cs_trace_add_step(t, &st) != CS_OK, "no records after finish");
    const cs_trace_link_stat_t *sa = cs_trace_link_stat(t, a), *sb = cs_trace_link_stat(t, b);
    CS_TEST_CHECK(sa->bytes == 100000 && sb->bytes == 150000, "exact bytes %llu %llu",
                  (unsigned long long)sa->bytes, (unsigned long long)sb->bytes);
    CS_TEST_CHECK(fabs(sa->peak_util - 1.0) < 1e-9, "a alone runs at 1, found %g", sa->peak_util);
    CS_TEST_CHECK(sa->shifted_bytes < 1e-6, "nothing shifted on a: %g", sa->shifted_bytes);
    CS_TEST_CHECK(sb->shifted_bytes > 1000, "overlap on b shifted bytes: %g", sb->shifted_bytes);
    CS_TEST_CHECK(fabs(sa->mean_util - 100000 / (1e9 * 400e-6)) < 1e-9, "mean %g", sa->mean_util);
    check_conservation(t, 1e-9);
    CS_TEST_CHECK(cs_trace_ntiers(t) == 2, "two tiers, found %d", cs_trace_ntiers(t));
    int bn = cs_trace_bottleneck(t);
    CS_TEST_CHECK(bn >= 0 && strcmp(cs_trace_tier_stat(t, bn)->name, "spine") == 0,
                  "b (spine) moved more: bottleneck %s", bn >= 0 ? cs_trace_tier_stat(t, bn)->name : "-");
    CS_TEST_CHECK(cs_trace_write(t, &err) == CS_OK, "%s", err.msg);
    cs_trace_destroy(t);
    CS_TEST_CHECK(exists(dir, "trace.json") && exists(dir, "summary.json") &&
                      exists(dir, "links.csv") && exists(dir, "tiers.csv") &&
                      exists(dir, "steps.csv") && exists(dir, "plot.gp"),
                  "files written");
    return 0;
}

typedef struct router_ctx {
    int calls;
    char names[8][16];
} router_ctx_t;

/* Hosts "h<i>": route h<i> -> h<j> = up<i> (nic), core<(i+j)%3> (spine), down<j> (nic). */
static int router(void *ctx, const char *src, const char *dst, cs_trace_hop_t *hops, int max,
                  int *n)
{
    router_ctx_t *rc = ctx;
    static char buf[3][32];
    int i = atoi(src + 1), j = atoi(dst + 1);
    rc->calls++;
    snprintf(buf[0], sizeof(buf[0]), "up%d", i);
    snprintf(buf[1], sizeof(buf[1]), "core%d", (i + j) % 3);
    snprintf(buf[2], sizeof(buf[2]), "down%d", j);
    const char *tiers[3] = {"nic", "spine", "nic"};
    double bw[3] = {1e9, 4e9, 1e9};
    for (int h = 0; h < 3 && h < max; h++)
        hops[h] = (cs_trace_hop_t){buf[h], tiers[h], bw[h], 1e-7};
    *n = 3;
    return CS_OK;
}

static int test_random(void)
{
    char dir[300];
    snprintf(dir, sizeof(dir), "%s/t2", root);
    mkdir(dir, 0777);
    cs_trace_t *t = NULL;
    cs_err_t err = {0};
    cs_trace_opts_t o;
    cs_trace_opts_init(&o);
    o.buckets = 256;
    o.ranks = 2;
    cs_trace_meta_t m = meta("random", 8);
    REQ(cs_trace_create(dir, &m, &o, 0.0, &t, &err) == CS_OK, "%s", err.msg);
    router_ctx_t rc = {0};
    cs_trace_set_router(t, router, &rc);
    srand(7);
    double nic_bytes = 0, spine_bytes = 0, tnow = 0;
    /* flows in time order, each at most 1e9 B/s x its span / 3 on average so
     * the total per nic link stays feasible; spans from 10 ns to 10 ms */
    for (int f = 0; f < 4000; f++) {
        int s = rand() % 8, d = (s + 1 + rand() % 7) % 8;
        double span = pow(10, -8 + 6.0 * rand() / RAND_MAX);
        double start = tnow + 1e-4 * rand() / RAND_MAX;
        uint64_t bytes = (uint64_t)(1e9 * span * (0.05 + 0.3 * rand() / RAND_MAX)) + 1;
        char hs[8], hd[8];
        snprintf(hs, sizeof(hs), "h%d", s);
        snprintf(hd, sizeof(hd), "h%d", d);
        REQ(cs_trace_add_xfer(t, s, d, hs, hd, bytes, start, start + span + 3e-7) ==
                            CS_OK, "xfer %d", f);
        nic_bytes += 2.0 * (double)bytes;
        spine_bytes += (double)bytes;
        tnow = start;
    }
    CS_TEST_CHECK(rc.calls <= 56, "route asked once per pair: %d calls", rc.calls);
    REQ(cs_trace_finish(t, tnow + 0.02, &err) == CS_OK, "%s", err.msg);
    int nb = cs_trace_nbuckets(t);
    CS_TEST_CHECK(nb >= 128 && nb <= 256, "buckets %d in [128, 256]", nb);
    check_conservation(t, 1e-6);
    for (int i = 0; i < cs_trace_ntiers(t); i++) {
        const cs_trace_tier_stat_t *ts = cs_trace_tier_stat(t, i);
        double want = strcmp(ts->name, "nic") == 0 ? nic_bytes : spine_bytes;
        CS_TEST_CHECK(fabs(ts->bytes - want) <= 1e-9 * want, "tier %s bytes %.0f vs %.0f",
                      ts->name, ts->bytes, want);
        CS_TEST_CHECK(ts->peak_util <= 1.0 + 1e-12 && ts->busy_fraction <= 1.0, "tier %s",
                      ts->name);
    }
    CS_TEST_CHECK(cs_trace_xfers_seen(t) == 4000, "xfers %llu",
                  (unsigned long long)cs_trace_xfers_seen(t));
    cs_trace_destroy(t);
    return 0;
}

static int test_session(void)
{
    char dir[300], tmp[400];
    snprintf(dir, sizeof(dir), "%s/sess", root);
    cs_err_t err = {0};
    cs_trace_opts_t o;
    cs_trace_opts_init(&o);
    o.plot = 0;
    for (int round = 0; round < 2; round++) {
        cs_trace_session_t *s = NULL;
        router_ctx_t rc = {0};
        REQ(cs_trace_session_open(dir, &o, 2, &s, &err) == CS_OK, "%s", err.msg);
        for (int i = 0; i < 2; i++) {
            cs_trace_meta_t m = meta(i ? "b" : "a", 4);
            cs_trace_t *t = NULL;
            REQ(cs_trace_session_begin(s, &m, 1.0, router, &rc, &t, &err) == CS_OK,
                            "%s", err.msg);
            CS_TEST_CHECK(cs_trace_add_xfer(t, 0, 1, "h0", "h1", 1000 * (round + 1), 1.0,
                                            1.0 + 1e-5) == CS_OK, "xfer");
            REQ(cs_trace_session_end(s, 1.0 + 2e-5, &err) == CS_OK, "%s", err.msg);
        }
        CS_TEST_CHECK(cs_trace_session_commit(s, &err) == CS_OK, "%s", err.msg);
        cs_trace_session_close(s);
        CS_TEST_CHECK(exists(dir, "index.csv") && exists(dir, "a-1048576/summary.json") &&
                          exists(dir, "b-1048576/links.csv"),
                      "session layout (round %d)", round);
        snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", dir, (long)getpid());
        CS_TEST_CHECK(!exists(tmp, "."), "no temporary directory left");
    }
    /* the second round replaced the first: 2000 bytes per hop now */
    char out[4096] = "";
    FILE *f = fmemopen(out, sizeof(out) - 1, "w");
    REQ(f != NULL, "fmemopen");
    CS_TEST_CHECK(cs_trace_summarize(dir, CS_TRACE_FMT_CSV, 3, f, &err) == CS_OK, "%s", err.msg);
    fclose(f);
    CS_TEST_CHECK(strstr(out, "a-1048576,a,allreduce") && strstr(out, ",2000,"),
                  "summary of the replaced session:\n%s", out);
    CS_TEST_CHECK(strstr(out, ",spine,1,2000,") != NULL, "one spine link with 2000 bytes:\n%s",
                  out);
    /* an uncommitted session leaves nothing behind */
    cs_trace_session_t *s = NULL;
    snprintf(dir, sizeof(dir), "%s/never", root);
    REQ(cs_trace_session_open(dir, &o, 1, &s, &err) == CS_OK, "%s", err.msg);
    cs_trace_session_close(s);
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", dir, (long)getpid());
    CS_TEST_CHECK(!exists(dir, ".") && !exists(tmp, "."), "nothing left by a closed session");
    CS_TEST_CHECK(cs_trace_summarize(dir, CS_TRACE_FMT_TABLE, 3, stderr, &err) != CS_OK,
                  "not a trace directory");
    return 0;
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(root, sizeof(root), "%s/cs_trace_unit_XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(root))
        CS_TEST_SKIP("cannot create a temporary directory");
    test_single_and_overlap();
    test_random();
    test_session();
    cs_trace_rmtree(root);
    return cs_test_finish();
}
