/*
 * test_trace_sim.c - the recorder fed by the simulator on Summit
 * (summit:nodes=4, 24 ranks): ring, hier (dims 6x4) and rhd allreduce of
 * 16 MB in one simulation.  Per instance:
 *   - conservation: for every link, sum over buckets of utilization x
 *     bandwidth x D equals the bytes routed through it within 1%, and
 *     utilization never exceeds 1;
 *   - bytes per tier equal the sum over transfers of bytes x the tier's
 *     links on each route, the route asked independently from cs_sim_route;
 *   - the bottleneck tier is an inter-node tier (one that no intra-node
 *     transfer crosses);
 *   - hier: the busiest GPU<->GPU NVLink (tier nvlink) runs near capacity
 *     in the first and last slices (intra-node reduce-scatter and
 *     all-gather) and is idle in the middle, while the GPU<->CPU NVLink
 *     (tier nvlink-host, which inter-node traffic crosses on its way to the
 *     adapter) carries the inter-node phase; the bottleneck tier is idle in
 *     the first and last slices and busy in the middle.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cs_algo.h"
#include "cs_test.h"

/* CS_TEST_REQUIRE evaluates its condition twice: evaluate once here. */
#define REQ(cond, ...)                                                          \
    do {                                                                        \
        int req_ok_ = !!(cond);                                                 \
        CS_TEST_REQUIRE(req_ok_, __VA_ARGS__);                                  \
    } while (0)
#include "cs_trace_sim.h"

#define NT 16

typedef struct ctx {
    char root[256];
    cs_trace_t *t;
    int per_node;
    char tier[NT][16];
    double tier_bytes[NT];
    int tier_intra[NT]; /* crossed by an intra-node transfer */
    int nt;
} ctx_t;

static int tier_idx(ctx_t *c, const char *name)
{
    for (int i = 0; i < c->nt; i++)
        if (strcmp(c->tier[i], name) == 0)
            return i;
    if (c->nt == NT)
        return -1;
    snprintf(c->tier[c->nt], sizeof(c->tier[0]), "%s", name);
    c->tier_bytes[c->nt] = 0;
    c->tier_intra[c->nt] = 0;
    return c->nt++;
}

static void on_begin(void *p, int inst, const cs_sim_instance_t *in, double t0)
{
    ctx_t *c = p;
    char dir[300];
    snprintf(dir, sizeof(dir), "%s/i%d", c->root, inst);
    CS_TEST_CHECK(mkdir(dir, 0777) == 0, "mkdir %s", dir);
    cs_trace_meta_t m;
    memset(&m, 0, sizeof(m));
    snprintf(m.platform, sizeof(m.platform), "summit:nodes=4");
    snprintf(m.coll, sizeof(m.coll), "allreduce");
    snprintf(m.algo, sizeof(m.algo), "%s", in->sched->algo);
    m.bytes = in->bytes;
    m.nranks = in->sched->desc.nranks;
    cs_err_t err = {0};
    c->t = NULL;
    CS_TEST_CHECK(cs_trace_create(dir, &m, NULL, t0, &c->t, &err) == CS_OK, "%s", err.msg);
    if (c->t)
        cs_trace_set_router(c->t, cs__trace_sim_route, NULL);
    for (int i = 0; i < c->nt; i++) {
        c->tier_bytes[i] = 0;
        c->tier_intra[i] = 0;
    }
}

static void on_step(void *p, int inst, const cs_sim_step_rec_t *r)
{
    (void)inst;
    ctx_t *c = p;
    cs_trace_step_t s = {r->rank, r->step, r->kind, r->peer, r->bytes, r->start, r->end};
    if (c->t && cs_trace_add_step(c->t, &s) != CS_OK)
        CS_TEST_CHECK(0, "step record refused");
}

static void on_xfer(void *p, int inst, const cs_sim_xfer_rec_t *r)
{
    (void)inst;
    ctx_t *c = p;
    if (c->t && cs_trace_add_xfer(c->t, r->src, r->dst, r->src_host, r->dst_host, r->bytes,
                                  r->start, r->end) != CS_OK)
        CS_TEST_CHECK(0, "transfer record refused");
    cs_sim_link_t links[32];
    int n = 0;
    if (cs_sim_route(r->src_host, r->dst_host, links, 32, &n, NULL) != CS_OK || n > 32) {
        CS_TEST_CHECK(0, "route %s -> %s", r->src_host, r->dst_host);
        return;
    }
    int intra = r->src / c->per_node == r->dst / c->per_node;
    for (int h = 0; h < n; h++) {
        int i = tier_idx(c, links[h].tier[0] ? links[h].tier : "untiered");
        if (i < 0)
            continue;
        c->tier_bytes[i] += (double)r->bytes;
        c->tier_intra[i] |= intra;
    }
}

static double slice_mean(const double *v, int a, int b)
{
    double s = 0;
    for (int i = a; i < b; i++)
        s += v[i];
    return s / (b - a);
}

static void on_end(void *p, int inst, const cs_sim_instance_t *in, double t_end)
{
    ctx_t *c = p;
    cs_trace_t *t = c->t;
    cs_err_t err = {0};
    if (!t)
        return;
    c->t = NULL;
    CS_TEST_CHECK(cs_trace_finish(t, t_end, &err) == CS_OK, "%s", err.msg);
    double D = cs_trace_resolution(t), worst = 0, peak = 0;
    for (uint32_t i = 0; i < cs_trace_nlinks(t); i++) {
        const cs_trace_link_stat_t *s = cs_trace_link_stat(t, i);
        double sum = 0;
        for (int k = 0; k < cs_trace_nbuckets(t); k++) {
            double u = cs_trace_link_util(t, i, k);
            sum += u * s->bandwidth * D;
            peak = u > peak ? u : peak;
        }
        double e = fabs(sum - (double)s->bytes) / (double)s->bytes;
        worst = e > worst ? e : worst;
    }
    CS_TEST_CHECK(worst <= 0.01, "%s: conservation error %.3g", in->sched->algo, worst);
    CS_TEST_CHECK(peak <= 1.0 + 1e-12, "%s: utilization %.6f > 1", in->sched->algo, peak);
    int bn = cs_trace_bottleneck(t);
    const cs_trace_tier_stat_t *B = cs_trace_tier_stat(t, bn), *nv = NULL, *nh = NULL;
    printf("%-5s %8.1f us  %u links  D=%.3f us  conservation %.2g  bottleneck %s\n",
           in->sched->algo, cs_trace_duration(t) * 1e6, cs_trace_nlinks(t), D * 1e6, worst,
           B ? B->name : "-");
    for (int i = 0; i < cs_trace_ntiers(t); i++) {
        const cs_trace_tier_stat_t *ts = cs_trace_tier_stat(t, i);
        int j = tier_idx(c, ts->name);
        printf("  %-11s links %3u bytes %12.0f mean %.3f peak %.3f busy %.3f busiest %.3f "
               "shifted %.0f%s\n", ts->name, ts->nlinks, ts->bytes, ts->mean_util, ts->peak_util,
               ts->busy_fraction, ts->busiest_util, ts->shifted_bytes,
               j >= 0 && c->tier_intra[j] ? "  (intra-node traffic)" : "");
        CS_TEST_CHECK(j >= 0 && fabs(ts->bytes - c->tier_bytes[j]) <= 1e-9 * c->tier_bytes[j],
                      "%s tier %s: %.0f bytes, routes say %.0f", in->sched->algo, ts->name,
                      ts->bytes, j >= 0 ? c->tier_bytes[j] : -1.0);
        if (strcmp(ts->name, "nvlink") == 0)
            nv = ts;
        if (strcmp(ts->name, "nvlink-host") == 0)
            nh = ts;
    }
    int jb = B ? tier_idx(c, B->name) : -1;
    CS_TEST_CHECK(jb >= 0 && !c->tier_intra[jb], "%s: bottleneck %s is an inter-node tier",
                  in->sched->algo, B ? B->name : "-");
    if (strcmp(in->sched->algo, "hier") == 0)
        CS_TEST_CHECK(nv && nh && B, "hier: tiers nvlink, nvlink-host and a bottleneck traced");
    if (strcmp(in->sched->algo, "hier") == 0 && nv && nh && B) {
        const int L = CS_TRACE_PROFILE;
        double nv_edge = (nv->profile_util[0] + nv->profile_util[L - 1]) / 2;
        double nv_mid = slice_mean(nv->profile_util, L / 2 - 3, L / 2 + 3);
        double nh_mid = slice_mean(nh->profile_util, L / 2 - 3, L / 2 + 3);
        double b_edge = (B->profile_util[0] + B->profile_util[L - 1]) / 2;
        double b_mid = slice_mean(B->profile_util, L / 2 - 3, L / 2 + 3);
        printf("  hier phases: nvlink edge %.3f middle %.3f; nvlink-host middle %.3f; "
               "%s edge %.3f middle %.3f\n", nv_edge, nv_mid, nh_mid, B->name, b_edge, b_mid);
        /* GPU<->GPU NVLink carries no inter-node traffic: idle in the middle */
        CS_TEST_CHECK(nv_edge > 0.6 && nv_mid < 0.02,
                      "nvlink (GPU-GPU) busy in the intra-node phases only");
        /* a socket's three GPUs share its 12.5 GB/s rail: ~4 GB/s on each
         * 50 GB/s GPU-CPU link */
        CS_TEST_CHECK(nh_mid > 0.04, "nvlink-host (GPU-CPU) carries the inter-node phase");
        CS_TEST_CHECK(b_edge < 0.05 && b_mid > 0.8, "%s busy in the inter-node phase only",
                      B->name);
    }
    (void)inst;
    cs_trace_destroy(t);
}

static cs_sched_t *build(const char *name, int P, const char *param)
{
    cs_params_t prm;
    cs_params_init(&prm);
    cs_err_t err = {0};
    if (param && cs_params_parse(&prm, param, &err) != CS_OK)
        return NULL;
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, P, 0, 0};
    cs_sched_t *s = NULL;
    if (cs_algo_build(cs_algo_find(CS_COLL_ALLREDUCE, name), &d, &prm, &s, &err) != CS_OK)
        fprintf(stderr, "%s: %s\n", name, err.msg);
    return s;
}

int main(void)
{
    cs_platform_t *plat = NULL;
    cs_err_t err = {0};
    if (cs_platform_open("summit:nodes=4", &plat, &err) != CS_OK)
        CS_TEST_SKIP("no summit preset: %s", err.msg);
    static ctx_t c;
    const char *base = getenv("TMPDIR");
    snprintf(c.root, sizeof(c.root), "%s/cs_trace_sim_XXXXXX", base && *base ? base : "/tmp");
    REQ(mkdtemp(c.root) != NULL, "mkdtemp");
    c.per_node = plat->ndims > 0 ? plat->dims[0] : 6;
    int P = (int)plat->ndevices;
    cs_sched_t *s[3] = {build("ring", P, NULL), build("hier", P, "dims=6x4"),
                        build("rhd", P, NULL)};
    REQ(s[0] && s[1] && s[2], "schedules built");
    cs_sim_instance_t in[3];
    memset(in, 0, sizeof(in));
    for (int i = 0; i < 3; i++) {
        in[i].sched = s[i];
        in[i].bytes = 16u << 20;
        in[i].dtype = CS_DT_F32;
    }
    cs_sim_observer_t obs = {&c, on_begin, on_step, on_xfer, on_end, NULL};
    cs_sim_opts_t o;
    cs_sim_opts_init(&o);
    o.obs = &obs;
    CS_TEST_CHECK(cs_sim_run(plat, &o, in, 3, &err) == CS_OK, "%s", err.msg);
    for (int i = 0; i < 3; i++)
        cs_sched_destroy(s[i]);
    cs_platform_close(plat);
    cs_trace_rmtree(c.root);
    return cs_test_finish();
}
