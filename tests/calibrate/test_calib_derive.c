/* calibrate/: the derivation of a platform from measurements, on synthetic
 * records of a known cluster.
 *
 *   three nodes of two ranks, NICs 50, 50 and 25 MB/s (the third a slow
 *   node), latencies 20, 25, 30 us, an intra-node link of 5 us and 2 GB/s,
 *   +-0.5 % of noise on every time: the NICs' bandwidths within 2 %, their
 *   latencies within 5 %, the intra-node link within 3 %, tiers nic, nic,
 *   nic-slow; every rank busy with the slow node's two directions at 0.8 of
 *   its share (the flows in and out of the NIC they share) and the rest at
 *   the links' rates: node 2's duplex ratio 0.8, no port, the ports'
 *   latency (10 us a crossing) within 10 %; node 1's exchange at 0.6 and
 *   the fastest pair both ways at 0.7 of one way; the hosts' speed the
 *   float reduction; the slow node's exchange after idling at 0.8 of back
 *   to back: each of its 2 flows of 8 MiB costs 0.25 x 8 MiB more, after
 *   the round trip whose slow start costs that plus 200 ms idle, charged
 *   to it and not to its fast partner; node 0's at 0.97 (under 1.05 x the
 *   time: noise) and node 1's not measured (an older record) cost none;
 *   the idle spell of a restart between the shorter spells' last that did
 *   not slow the exchange and first that did (0.75 s between 0.5 and 1;
 *   0.225 between the 200 ms floor and 0.25; 1.5 between 1 and 2);
 *   two nodes where every rank busy moves 0.3 GB/s, far below its links (a
 *   rank's CPU share): a port of twice that per rank;
 *   a record written as JSON and read back is the same record, bit for
 *   bit, and derives the same XML; numbers written by the record's writer
 *   read back exactly, 200000 of them over 40 decades;
 *   degenerate records are refused with CS_ERR_INVAL and a message, never
 *   a platform with NaN: one size, sizes not ascending, a time of zero or
 *   not a number, a negative rate, no reduction rate, a series whose ranks
 *   are not in its class, a node without ranks; series whose times fall as
 *   messages grow (no slope) give an unbounded link (10^12 B/s), finite;
 *   broken JSON is refused with its line and column. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_int.h"
#include "cs_test.h"

#define H3 3
#define R2 2

typedef struct truth {
    int H, R;
    double bw[4], lat[4];     /* NIC per node */
    double ia, ib;            /* intra-node alpha, beta */
    double load_rate[8];      /* every rank busy: rate of the flow into rank r */
    double port_lat;          /* every rank busy: extra latency per port crossing */
    double xch[4];            /* exchange: slower direction over one way */
    double cold[4];           /* the exchange after idling, over one way (0: not measured) */
    double pair;              /* both ways over one way, the fastest pair */
    double noise;
} truth_t;

/* +-1 of pseudo-random noise, the same on every run */
static double jitter(unsigned i)
{
    uint32_t h = i * 2654435761u;
    h ^= h >> 13, h *= 0x5bd1e995u, h ^= h >> 15;
    return (double)(h % 2001) / 1000.0 - 1.0;
}

static double time_of(const truth_t *t, double alpha, double beta, uint64_t s, unsigned *seed)
{
    return (alpha + (double)s / beta) * (1 + t->noise * jitter((*seed)++));
}

static cs_calibrate_record_t *make(const truth_t *t)
{
    cs_calibrate_plan_t pl;
    cs_calibrate_plan_init(&pl);
    int H = t->H, R = t->R, N = H * R, nser = H * (H - 1) / 2 + (R >= 2 ? H : 0), K = pl.nsizes;
    cs_calibrate_record_t *rec = cs_calibrate_record_new(N, H, nser, &pl);
    if (!rec)
        return NULL;
    unsigned seed = 1;
    snprintf(rec->transport, sizeof(rec->transport), "tcp");
    for (int r = 0; r < N; r++)
        rec->node_of[r] = r / R;
    int s = 0;
    for (int h = 0; h < H && R >= 2; h++, s++) {
        cs_calibrate_series_t *x = &rec->series[s];
        x->a = h * R, x->b = h * R + 1, x->na = x->nb = h;
        for (int k = 0; k < K; k++)
            x->median[k] = time_of(t, t->ia, t->ib, pl.sizes[k], &seed);
    }
    rec->nintra = s;
    for (int A = 0; A < H; A++)
        for (int B = A + 1; B < H; B++, s++) {
            cs_calibrate_series_t *x = &rec->series[s];
            x->a = A * R, x->b = B * R, x->na = A, x->nb = B;
            for (int k = 0; k < K; k++)
                x->median[k] = time_of(t, t->lat[A] + t->lat[B], fmin(t->bw[A], t->bw[B]),
                                       pl.sizes[k], &seed);
        }
    for (int s2 = 0; s2 < rec->nseries; s2++)
        for (int k = 0; k < K; k++) {
            cs_calibrate_series_t *x = &rec->series[s2];
            x->p10[k] = 0.98 * x->median[k], x->p90[k] = 1.05 * x->median[k], x->reps[k] = 100;
        }
    for (int r = 0; r < N; r++) {
        int from = (r + N - 1) % N, A = from / R, B = r / R;
        double a = (A == B ? t->ia : t->lat[A] + t->lat[B]) + 2 * t->port_lat;
        for (int k = 0; k < K; k++)
            rec->loaded[(size_t)r * K + k] = time_of(t, a, t->load_rate[r], pl.sizes[k], &seed);
    }
    for (int k = 0; k < K; k++)
        rec->loaded_reps[k] = 50;
    for (int h = 0; h < H; h++) {
        cs_calibrate_node_t *n = &rec->nodes[h];
        snprintf(n->name, sizeof(n->name), "node%d", h);
        int peer = h == 0 ? 1 : 0; /* the fastest partner */
        double one = fmin(t->bw[h], t->bw[peer]);
        n->nic_peer = peer, n->nic_senders = R, n->nic_one = one, n->nic_all = one;
        n->xch_out = one, n->xch_in = t->xch[h] * one, n->xch_trials = 1;
        n->cold_out = t->cold[h] * one, n->cold_in = t->cold[h] * one;
    }
    rec->duplex_a = 0, rec->duplex_b = R;
    rec->duplex_one = fmin(t->bw[0], t->bw[1]);
    rec->duplex_both = t->pair * rec->duplex_one;
    rec->duplex_c = R >= 2 ? R + 1 : -1, rec->duplex_d = R >= 2 ? 1 : -1;
    rec->duplex_node = rec->duplex_one;
    for (int d = 0; d < CS_CALIBRATE_NDT; d++)
        rec->reduce[d] = d == 0 ? 5e9 : 4e9 - d * 1e8;
    return rec;
}

static double rel(double a, double b)
{
    return fabs(a - b) / fabs(b);
}

static const truth_t three = {
    .H = 3, .R = 2, .bw = {50e6, 50e6, 25e6}, .lat = {20e-6, 25e-6, 30e-6}, .ia = 5e-6,
    .ib = 2e9,
    /* into rank r from r-1: 0 <- 5 (node 2 -> 0) and 4 <- 3 (node 1 -> 2) at
     * 0.8 of node 2's 25 MB/s, 2 <- 1 (node 0 -> 1) at 50 MB/s, intra at 2 GB/s */
    .load_rate = {20e6, 2e9, 50e6, 2e9, 20e6, 2e9}, .port_lat = 10e-6,
    .xch = {1, 0.6, 1}, .cold = {0.97, 0, 0.8}, .pair = 0.7, .noise = 0.005};

static int test_three(void)
{
    cs_calibrate_record_t *rec = make(&three);
    CS_TEST_REQUIRE(rec, "record");
    cs_calibrate_derived_t *d = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    CS_TEST_REQUIRE(cs_calibrate_derive(rec, &d, &err) == CS_OK, "derive: %s", err.msg);
    const cs_plat_calib_t *p = &d->plat;
    const char *tiers[3] = {"nic", "nic", "nic-slow"};
    for (int h = 0; h < 3; h++) {
        CS_TEST_CHECK(rel(p->nodes[h].bw, three.bw[h]) < 0.02, "node %d bw %g, want %g", h,
                      p->nodes[h].bw, three.bw[h]);
        CS_TEST_CHECK(rel(p->nodes[h].lat, three.lat[h]) < 0.05, "node %d lat %g, want %g", h,
                      p->nodes[h].lat, three.lat[h]);
        CS_TEST_CHECK(!strcmp(p->nodes[h].tier, tiers[h]), "node %d tier %s, want %s", h,
                      p->nodes[h].tier, tiers[h]);
    }
    CS_TEST_CHECK(rel(p->intra_lat, three.ia) < 0.03, "intra lat %g", p->intra_lat);
    CS_TEST_CHECK(rel(p->intra_bw, three.ib) < 0.03, "intra bw %g", p->intra_bw);
    CS_TEST_CHECK(p->reduce_speed == 5e9, "reduce speed %g", p->reduce_speed);
    CS_TEST_CHECK(rel(p->switch_bw, p->nodes[0].bw + p->nodes[1].bw + p->nodes[2].bw) < 1e-12,
                  "switch %g", p->switch_bw);
    for (int r = 0; r < 6; r++)
        CS_TEST_CHECK(p->port_bw[r] == 0, "rank %d: port %g, its links bound it", r, p->port_bw[r]);
    CS_TEST_CHECK(rel(p->port_lat, three.port_lat) < 0.10, "port latency %g, want %g",
                  p->port_lat, three.port_lat);
    CS_TEST_REQUIRE(p->node_duplex && p->xch_duplex, "duplex ratios per node");
    CS_TEST_CHECK(p->node_duplex[0] == 0 && p->node_duplex[1] == 0, "fast nodes' rho %g %g",
                  p->node_duplex[0], p->node_duplex[1]);
    CS_TEST_CHECK(fabs(p->node_duplex[2] - 0.8) < 0.02, "slow node's rho %g, want 0.8",
                  p->node_duplex[2]);
    CS_TEST_CHECK(p->xch_duplex[0] == 0 && p->xch_duplex[2] == 0 &&
                  fabs(p->xch_duplex[1] - 0.6) < 1e-12, "exchange rho %g %g %g",
                  p->xch_duplex[0], p->xch_duplex[1], p->xch_duplex[2]);
    CS_TEST_CHECK(fabs(p->pair_duplex - 0.7) < 1e-12, "pair rho %g", p->pair_duplex);
    double M = (double)rec->plan.nic_bytes, dt = 2 * M / (0.8 * 25e6) - 2 * M / 25e6;
    CS_TEST_CHECK(p->nodes[0].restart_bytes == 0 && p->nodes[1].restart_bytes == 0 &&
                  p->nodes[0].restart_idle == 0, "fast nodes' restarts %g %g",
                  p->nodes[0].restart_bytes, p->nodes[1].restart_bytes);
    CS_TEST_CHECK(rel(p->nodes[2].restart_bytes, 0.25 * M) < 0.02, "slow node's restart %g, "
                  "want %g", p->nodes[2].restart_bytes, 0.25 * M);
    double R = p->nodes[2].restart_idle - 0.2, b = fmin(p->nodes[2].bw, p->nodes[0].bw) / 2;
    CS_TEST_CHECK(R > 0.01 && R < 0.1 && rel(R * (log2(b * R / 14480.0) - 1), dt) < 0.01,
                  "slow node's idle %g s: its round trip's ramp costs %g s, want %g",
                  p->nodes[2].restart_idle, R * (log2(b * R / 14480.0) - 1), dt);
    char *xml = NULL;
    CS_TEST_REQUIRE(cs_calibrate_xml(rec, d, &xml, &err) == CS_OK, "xml: %s", err.msg);
    CS_TEST_CHECK(strstr(xml, "<link id=\"duplex-n2\"") && strstr(xml, "<link id=\"duplex-r0-r2\"") &&
                  strstr(xml, "value=\"nic-slow\"") && strstr(xml, "collstep calibrate: 6 ranks"),
                  "the XML lacks the slow node's duplex link, the pair's, its tier or the summary");
    const char *rs = strstr(xml, "restart_bytes");
    CS_TEST_CHECK(rs && rs > strstr(xml, "<host id=\"n2-r4\"") && strstr(rs, "restart_idle") &&
                  !strstr(rs + 1, "<host id=\"n2-r4\""),
                  "the XML lacks the slow node's restart, or gives it to a fast node");
    CS_TEST_CHECK(!strstr(xml, "nan") && !strstr(xml, "inf"), "a number that is not finite");

    /* JSON: written, read back, the same record and the same XML */
    char *json = NULL, *json2 = NULL, *xml2 = NULL;
    size_t jn = 0, jn2 = 0;
    FILE *f = open_memstream(&json, &jn);
    cs_calibrate_json(rec, d, f);
    fclose(f);
    cs_calibrate_record_t *back = NULL;
    CS_TEST_REQUIRE(cs_calibrate_record_parse(json, jn, "three.json", &back, &err) == CS_OK,
                    "read back: %s", err.msg);
    int K = rec->plan.nsizes, same = back->nranks == rec->nranks && back->nnodes == rec->nnodes &&
                                     back->nseries == rec->nseries && back->nintra == rec->nintra &&
                                     !memcmp(&back->plan.sizes, &rec->plan.sizes, sizeof(rec->plan.sizes));
    for (int s = 0; s < rec->nseries && same; s++)
        same = !memcmp(back->series[s].median, rec->series[s].median, sizeof(double) * K) &&
               !memcmp(back->series[s].p10, rec->series[s].p10, sizeof(double) * K) &&
               !memcmp(back->series[s].p90, rec->series[s].p90, sizeof(double) * K);
    same = same && !memcmp(back->loaded, rec->loaded, sizeof(double) * K * 6) &&
           !memcmp(back->nodes, rec->nodes, sizeof(*rec->nodes) * 3) &&
           !memcmp(back->reduce, rec->reduce, sizeof(rec->reduce)) &&
           back->duplex_both == rec->duplex_both && back->plan.dtype == rec->plan.dtype &&
           back->plan.budget_s == rec->plan.budget_s;
    CS_TEST_CHECK(same, "the record read back differs from the one written");
    cs_calibrate_derived_t *d2 = NULL;
    CS_TEST_REQUIRE(cs_calibrate_derive(back, &d2, &err) == CS_OK, "derive back: %s", err.msg);
    CS_TEST_REQUIRE(cs_calibrate_xml(back, d2, &xml2, &err) == CS_OK, "xml back: %s", err.msg);
    CS_TEST_CHECK(!strcmp(xml, xml2), "the XML of the record read back differs");
    f = open_memstream(&json2, &jn2);
    cs_calibrate_json(back, d2, f);
    fclose(f);
    CS_TEST_CHECK(jn == jn2 && !memcmp(json, json2, jn), "the JSON written again differs");
    free(json), free(json2), free(xml), free(xml2);
    cs_calibrate_derived_free(d), cs_calibrate_derived_free(d2);
    cs_calibrate_record_free(rec), cs_calibrate_record_free(back);
    return 0;
}

/* ranks that move far less than their links allow get a port */
static int test_ports(void)
{
    truth_t t = {.H = 2, .R = 2, .bw = {1.25e9, 1.25e9}, .lat = {3e-6, 3e-6}, .ia = 1e-6,
                 .ib = 5e9, .load_rate = {0.3e9, 0.3e9, 0.3e9, 0.3e9}, .xch = {1, 1},
                 .pair = 1, .noise = 0.005};
    cs_calibrate_record_t *rec = make(&t);
    cs_calibrate_derived_t *d = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    CS_TEST_REQUIRE(rec && cs_calibrate_derive(rec, &d, &err) == CS_OK, "derive: %s", err.msg);
    for (int r = 0; r < 4; r++)
        CS_TEST_CHECK(rel(d->plat.port_bw[r], 0.6e9) < 0.02, "rank %d: port %g, want 0.6e9", r,
                      d->plat.port_bw[r]);
    CS_TEST_CHECK(d->plat.pair_duplex == 0, "full duplex pair: rho %g", d->plat.pair_duplex);
    cs_calibrate_derived_free(d);
    cs_calibrate_record_free(rec);
    return 0;
}

/* the idle spell of a restart from the shorter spells: the middle between
 * the last that did not slow the exchange and the first that did */
static int test_restart_idle(void)
{
    struct { double r[3], want; } c[] = {
        {{25e6, 25e6, 0.8 * 25e6}, 0.75},     /* 0.5 s not, 1 s slower */
        {{0.8 * 25e6, 0.8 * 25e6, 0.8 * 25e6}, 0.225}, /* from the 200 ms floor to 0.25 s */
        {{25e6, 0.97 * 25e6, 25e6}, 1.5},     /* none (0.97: noise): from 1 s to 2 s */
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        cs_calibrate_record_t *rec = make(&three);
        CS_TEST_REQUIRE(rec, "record");
        for (int h = 0; h < 3; h++) /* node 2 and its partner, node 0, measured it */
            memcpy(rec->nodes[h].cold_short, c[i].r, sizeof(c[i].r));
        cs_calibrate_derived_t *d = NULL;
        cs_err_t err;
        cs_err_clear(&err);
        CS_TEST_REQUIRE(cs_calibrate_derive(rec, &d, &err) == CS_OK, "derive: %s", err.msg);
        CS_TEST_CHECK(fabs(d->plat.nodes[2].restart_idle - c[i].want) < 1e-12 &&
                      d->plat.nodes[2].restart_bytes > 0 && d->plat.nodes[0].restart_bytes == 0,
                      "case %zu: idle %g s, want %g; restart %g (fast node %g)", i,
                      d->plat.nodes[2].restart_idle, c[i].want, d->plat.nodes[2].restart_bytes,
                      d->plat.nodes[0].restart_bytes);
        cs_calibrate_derived_free(d);
        cs_calibrate_record_free(rec);
    }
    return 0;
}

typedef void (*spoil_fn)(cs_calibrate_record_t *r);
static void one_size(cs_calibrate_record_t *r) { r->plan.nsizes = 1; }
static void unsorted(cs_calibrate_record_t *r)
{
    uint64_t x = r->plan.sizes[3];
    r->plan.sizes[3] = r->plan.sizes[4], r->plan.sizes[4] = x;
}
static void zero_time(cs_calibrate_record_t *r) { r->series[4].median[5] = 0; }
static void nan_loaded(cs_calibrate_record_t *r) { r->loaded[2 * r->plan.nsizes + 7] = NAN; }
static void neg_rate(cs_calibrate_record_t *r) { r->nodes[1].nic_one = -1; }
static void no_reduce(cs_calibrate_record_t *r) { r->reduce[CS_DT_F32] = 0; }
static void bad_class(cs_calibrate_record_t *r) { r->series[0].b = 2, r->series[0].nb = 1; }
static void empty_node(cs_calibrate_record_t *r)
{
    for (int x = 0; x < r->nranks; x++)
        r->node_of[x] = x < 2 ? 0 : 1; /* node 2 has no rank */
}
static void inf_dup(cs_calibrate_record_t *r) { r->duplex_both = INFINITY; }

static int test_degenerate(void)
{
    struct { spoil_fn fn; const char *what, *says; } bad[] = {
        {one_size, "one size", "a line needs 2 sizes"},
        {unsorted, "sizes not ascending", "ascending"},
        {zero_time, "a time of zero", "no line fits their times"},
        {nan_loaded, "a loaded time that is not a number", "every rank busy"},
        {neg_rate, "a negative NIC rate", "not a finite number >= 0"},
        {no_reduce, "no reduction rate", "reduction rate of float"},
        {bad_class, "an intra-node series across nodes", "inside a node"},
        {empty_node, "a node without ranks", "has no rank"},
        {inf_dup, "an infinite duplex rate", "duplex rate"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cs_calibrate_record_t *rec = make(&three);
        CS_TEST_REQUIRE(rec, "record");
        bad[i].fn(rec);
        cs_calibrate_derived_t *d = NULL;
        cs_err_t err;
        cs_err_clear(&err);
        int st = cs_calibrate_derive(rec, &d, &err);
        CS_TEST_CHECK(st == CS_ERR_INVAL && !d && strstr(err.msg, bad[i].says),
                      "%s: status %d, message '%s' (want CS_ERR_INVAL, '%s')", bad[i].what, st,
                      err.msg, bad[i].says);
        cs_calibrate_derived_free(d);
        cs_calibrate_record_free(rec);
    }
    /* times that fall as messages grow: no slope, an unbounded link */
    cs_calibrate_record_t *rec = make(&three);
    CS_TEST_REQUIRE(rec, "record");
    for (int s = rec->nintra; s < rec->nseries; s++)
        for (int k = 0; k < rec->plan.nsizes; k++)
            rec->series[s].median[k] = 50e-6 * (1 - 0.01 * k);
    cs_calibrate_derived_t *d = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    CS_TEST_REQUIRE(cs_calibrate_derive(rec, &d, &err) == CS_OK, "falling times: %s", err.msg);
    for (int h = 0; h < 3; h++)
        CS_TEST_CHECK(d->plat.nodes[h].bw == 1e12 && isfinite(d->plat.nodes[h].lat),
                      "falling times: node %d bw %g lat %g", h, d->plat.nodes[h].bw,
                      d->plat.nodes[h].lat);
    char *xml = NULL;
    CS_TEST_CHECK(cs_calibrate_xml(rec, d, &xml, &err) == CS_OK && !strstr(xml, "nan"),
                  "falling times: xml %s", err.msg);
    free(xml);
    cs_calibrate_derived_free(d);
    cs_calibrate_record_free(rec);
    return 0;
}

/* the writer's numbers read back exactly */
static int test_numbers(void)
{
    char *buf = NULL;
    size_t n = 0;
    int bad = 0;
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 200000 && bad < 5; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double v = ldexp((double)(x >> 11) / 9007199254740992.0 + 0.5, (int)(x % 133) - 66);
        int shift = i % 2 ? 6 : 0;
        FILE *f = open_memstream(&buf, &n);
        cs__calib_num(f, v, shift);
        fclose(f);
        double back = -1;
        if (cs__calib_num_read(buf, n, shift, &back) != CS_OK || back != v) {
            bad++;
            fprintf(stderr, "%.17g (shift %d) written '%s' reads %.17g\n", v, shift, buf, back);
        }
        free(buf);
        buf = NULL;
    }
    CS_TEST_CHECK(bad == 0, "%d numbers did not read back", bad);
    struct { double v; int shift; const char *text; } ex[] = {
        {8.5765e-6, 6, "8.5765"}, {1.5e-12, 6, "0.0000015"}, {0, 6, "0"}, {53140817.5, 0, "53140817.5"},
        {0.1, 0, "0.1"}, {2.5e20, 0, "2.5e+20"}, {1e-9, 0, "1e-09"}};
    for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
        FILE *f = open_memstream(&buf, &n);
        cs__calib_num(f, ex[i].v, ex[i].shift);
        fclose(f);
        CS_TEST_CHECK(!strcmp(buf, ex[i].text), "%g: '%s', want '%s'", ex[i].v, buf, ex[i].text);
        free(buf);
        buf = NULL;
    }
    return 0;
}

static int test_json_errors(void)
{
    struct { const char *text, *says; } bad[] = {
        {"{", "bad.json:1:2: a member name, found the end of the file"},
        {"{\"collstep_calibration\":1,\n \"ranks\":x}", "bad.json:2:10: a digit"},
        {"[1,2]", "bad.json:1:1: not a calibration file"},
        {"{\"collstep_calibration\":1,\"ranks\":4,\n\"nodes\":7}", "bad.json:2:9: \"nodes\": expected an array"},
        {"{\"collstep_calibration\":1,\"ranks\":4}", "bad.json:1:1: no \"nodes\" in this object"},
        {"{\"collstep_calibration\":2}", "expected an integer from 1 to 1"},
        {"{\"a\":\"\\q\"}", "bad.json:1:8: an escape"},
        {"{\"collstep_calibration\":1} x", "bad.json:1:28: the end of the file"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cs_calibrate_record_t *r = NULL;
        cs_err_t err;
        cs_err_clear(&err);
        int st = cs_calibrate_record_parse(bad[i].text, strlen(bad[i].text), "bad.json", &r, &err);
        CS_TEST_CHECK(st == CS_ERR_PARSE && !r && strstr(err.msg, bad[i].says),
                      "'%s': status %d '%s', want '%s'", bad[i].text, st, err.msg, bad[i].says);
    }
    /* nesting deeper than the reader takes */
    char deep[400];
    memset(deep, '[', sizeof(deep) - 1);
    deep[sizeof(deep) - 1] = 0;
    cs_calibrate_record_t *r = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_calibrate_record_parse(deep, strlen(deep), "deep.json", &r, &err) ==
                      CS_ERR_PARSE && strstr(err.msg, "levels of nesting"),
                  "deep nesting: '%s'", err.msg);
    return 0;
}

int main(void)
{
    test_three();
    test_ports();
    test_restart_idle();
    test_degenerate();
    test_numbers();
    test_json_errors();
    return cs_test_finish();
}
