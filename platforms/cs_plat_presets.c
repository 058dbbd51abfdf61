/*
 * cs_plat_presets.c - the seed-fabric presets as fabric models, and the
 * registry of every preset (the rail-optimized presets of today's GPU
 * systems are built in cs_plat_gpus.c).
 *
 * Each preset is a node template (cs_plat_model.h) plus fabric parameters.
 * Numbers come from docs/hardware.md; [V] = read in a primary
 * source, [U] = estimate.  The per-preset pictures and sources are in
 * cs_plat_desc.c.  Parameter values: integers, or bandwidths with SimGrid
 * units ("50GBps", "100Gbps"; a bare number means GB/s), latencies with
 * units ("300ns", "1us"; a bare number means microseconds).
 *
 * Calibrated factors (cs_tier_info_t lat_factor / bw_factor), used by the
 * simulator's `calibrated` model, defaults for every preset:
 *   nvlink  bw 0.87  TACCL NDv2 profile: 43.5 GB/s on 50, 21.7 on 25 [V]
 *           lat 11.3 NCCL 2.7 Ring/Simple NVLink per-hop 3.4 us / 0.3 us modeled
 *   nvlink-host  the same (POWER GPU<->CPU NVLink: same links, own tier so
 *           that traces tell inter-node traffic's GPU->CPU hop from
 *           GPU<->GPU traffic; tier "nvlink" holds only GPU<->GPU links)
 *   pcie    bw 0.80  ~12.5 of 15.75 GB/s achievable [U]; lat 5.7 (NCCL PCI 5.7 us / 1 us)
 *   xbus/qpi bw 0.80 [U], lat 1.0
 *   nic     bw 0.976 12.2 of 12.5 GB/s per EDR rail (nccl-tests#29) [V]
 *           lat 4.8  NCCL NET Ring/Simple 9.6 us per hop / two 1 us NIC links
 *           (10 GbE: bw 0.94 [U], lat 1.0)
 *   leaf, spine  1.0, 1.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_params.h"
#include "cs_plat_model.h"

#define GB 1e9
#define US 1e-6

/* Descriptions (cs_plat_desc.c). */
extern const char *const cs__desc_x86, *const cs__desc_minsky, *const cs__desc_ac922,
    *const cs__desc_summit, *const cs__desc_dgx1, *const cs__desc_hgx, *const cs__desc_nvl72,
    *const cs__desc_mi300x;

int cs__get_int(cs__pctx_t *c, const char *key, long def, long lo, long hi, long *out)
{
    return cs_params_get_int(&c->pp, key, def, lo, hi, out, c->err);
}

int cs__get_unit(cs__pctx_t *c, const char *key, double def, int is_bw, double *out)
{
    const char *v = cs_params_get(&c->pp, key);
    if (v == NULL) {
        *out = def;
        return CS_OK;
    }
    char *end = NULL;
    double x = strtod(v, &end);
    int bad;
    if (end != v && *end == '\0')
        x *= is_bw ? GB : US, bad = 0;
    else
        bad = is_bw ? cs__parse_bandwidth(v, &x) : cs__parse_latency(v, &x);
    if (bad || !(x > 0) || x > 1e15)
        return cs_err_set(c->err, CS_ERR_INVAL,
                          "%s parameter %s: expected a positive %s (like %s), found '%s'",
                          c->preset, key, is_bw ? "bandwidth" : "latency",
                          is_bw ? "50GBps, 100Gbps or 50 for GB/s" : "300ns, 1us or 1 for us", v);
    *out = x;
    return CS_OK;
}

int cs__get_double(cs__pctx_t *c, const char *key, double def, double lo, double hi,
                          double *out)
{
    const char *v = cs_params_get(&c->pp, key);
    if (v == NULL) {
        *out = def;
        return CS_OK;
    }
    char *end = NULL;
    double x = strtod(v, &end);
    if (end == v || *end != '\0' || !(x >= lo && x <= hi))
        return cs_err_set(c->err, CS_ERR_INVAL,
                          "%s parameter %s: expected a number in [%g, %g], found '%s'", c->preset,
                          key, lo, hi, v);
    *out = x;
    return CS_OK;
}

/* Common fabric parameters: nodes, nodes_per_rack | racks, oversub, rails
 * (each rail its own nic link and, with oversub=1, its own lanes),
 * nic_bw (per rail), nic_lat, leaf_lat, spine_lat, reduce_bw. */
typedef struct {
    long nodes, npr, rails;
    double oversub, nic_bw, nic_lat, leaf_lat, reduce_bw;
} cs__fab_t;

static int cs__fabric_params(cs__pctx_t *c, cs__fab_t *f)
{
    long racks = 0;
    int st = cs__get_int(c, "nodes", f->nodes, 1, 100000, &f->nodes);
    if (st == CS_OK)
        st = cs__get_int(c, "racks", 0, 1, 100000, &racks);
    if (st == CS_OK && racks > f->nodes)
        st = cs_err_set(c->err, CS_ERR_INVAL, "%s: racks=%ld exceeds nodes=%ld", c->preset,
                        racks, f->nodes);
    if (st == CS_OK && racks > 0) {
        if (cs_params_get(&c->pp, "nodes_per_rack"))
            return cs_err_set(c->err, CS_ERR_INVAL,
                              "%s: give racks or nodes_per_rack, not both", c->preset);
        f->npr = (f->nodes + racks - 1) / racks;
    }
    if (st == CS_OK)
        st = cs__get_int(c, "nodes_per_rack", f->npr, 1, 100000, &f->npr);
    if (st == CS_OK)
        st = cs__get_int(c, "rails", f->rails, 1, 16, &f->rails);
    if (st == CS_OK)
        st = cs__get_double(c, "oversub", f->oversub, 1.0, 1000.0, &f->oversub);
    if (st == CS_OK)
        st = cs__get_unit(c, "nic_bw", f->nic_bw, 1, &f->nic_bw);
    if (st == CS_OK)
        st = cs__get_unit(c, "nic_lat", f->nic_lat, 0, &f->nic_lat);
    if (st == CS_OK)
        st = cs__get_unit(c, "leaf_lat", f->leaf_lat, 0, &f->leaf_lat);
    if (st == CS_OK)
        st = cs__get_unit(c, "reduce_bw", f->reduce_bw, 1, &f->reduce_bw);
    if (st == CS_OK && f->nodes * 64 > 1000000)
        st = cs_err_set(c->err, CS_ERR_INVAL, "%s: nodes=%ld is too many (at most %d)", c->preset,
                        f->nodes, 1000000 / 64);
    /* lanes: one spine link per pair of racks */
    if (st == CS_OK && f->oversub == 1.0 && (f->nodes + f->npr - 1) / f->npr > 1024)
        st = cs_err_set(c->err, CS_ERR_INVAL,
                        "%s: %ld racks: a non-blocking fabric (oversub=1) takes at most 1024 "
                        "racks (one spine link per pair); raise nodes_per_rack or oversub",
                        c->preset, (f->nodes + f->npr - 1) / f->npr);
    return st;
}

static void cs__fabric_apply(cs__model_t *m, const cs__fab_t *f, int ethernet)
{
    m->nodes = (int)f->nodes;
    m->npr = (int)f->npr;
    m->rails = (int)f->rails;
    m->nic_bw = f->nic_bw;
    m->nic_lat = f->nic_lat;
    m->leaf_lat = f->leaf_lat;
    m->spine_lat = f->leaf_lat;
    m->oversub = f->oversub;
    m->tier_nic = cs__model_tier(m, "nic", ethernet ? 1.0 : 4.8, ethernet ? 0.94 : 0.976);
    m->tier_leaf = cs__model_tier(m, "leaf", 1.0, 1.0);
    m->tier_spine = cs__model_tier(m, "spine", 1.0, 1.0);
}

/* Rail routers hca0..hca{rails-1}; each joined to element at(k) by a link of
 * tier `tier`. */
static int cs__rails(cs__model_t *m, long rails, int (*at)(int k, void *arg), void *arg,
                     int tier, double bw)
{
    char name[24];
    m->rails = (int)rails;
    for (int k = 0; k < rails; k++) {
        snprintf(name, sizeof(name), "hca%d", k);
        int e = cs__model_elem(m, name, CS__EL_ROUTER, 0);
        if (e < 0 || cs__model_link(m, at(k, arg), e, tier, bw, 1.0 * US) < 0)
            return -1;
        m->rail_el[k] = e;
    }
    return 0;
}

/* rail k on socket k % 2 (arg: index of cpu0) */
static int cs__rail_socket(int k, void *arg)
{
    return *(int *)arg + k % 2;
}

/* ---- POWER nodes: Minsky, AC922 4-GPU, AC922 6-GPU (Summit) -------------
 * GPU<->GPU NVLink is tier "nvlink" (links nvlink-nN-gI-gJ); GPU<->CPU
 * NVLink, which inter-node traffic crosses on its way to the PCIe adapter,
 * is tier "nvlink-host" (links nvlink-host-nN-cpuS-gI).  Same bandwidth,
 * latency and factors. */

typedef struct {
    int gps;            /* GPUs per socket */
    double nv_bw;       /* GPU-GPU (nvlink) and CPU-GPU (nvlink-host) per direction */
    double xbus_bw, pcie_bw;
} cs__power_t;

static int cs__power_node(cs__pctx_t *c, cs__model_t *m, cs__power_t *pw, const cs__fab_t *f)
{
    int st = cs__get_unit(c, "nvlink_bw", pw->nv_bw, 1, &pw->nv_bw);
    if (st == CS_OK)
        st = cs__get_unit(c, "xbus_bw", pw->xbus_bw, 1, &pw->xbus_bw);
    if (st == CS_OK)
        st = cs__get_unit(c, "pcie_bw", pw->pcie_bw, 1, &pw->pcie_bw);
    if (st != CS_OK)
        return st;
    int tnv = cs__model_tier(m, "nvlink", 11.3, 0.87);
    int tnh = cs__model_tier(m, "nvlink-host", 11.3, 0.87);
    int txb = cs__model_tier(m, "xbus", 1.0, 0.8);
    int tpc = cs__model_tier(m, "pcie", 5.7, 0.8);
    char name[24];
    for (int g = 0; g < 2 * pw->gps; g++) {
        snprintf(name, sizeof(name), "g%d", g);
        cs__model_elem(m, name, CS__EL_GPU, f->reduce_bw);
    }
    int cpu0 = cs__model_elem(m, "cpu0", CS__EL_CPU, 100 * GB);
    cs__model_elem(m, "cpu1", CS__EL_CPU, 100 * GB);
    for (int s = 0; s < 2; s++) {
        for (int i = 0; i < pw->gps; i++) {
            int gi = s * pw->gps + i;
            for (int j = i + 1; j < pw->gps; j++)
                cs__model_link(m, gi, s * pw->gps + j, tnv, pw->nv_bw, 0.3 * US);
        }
        for (int i = 0; i < pw->gps; i++)
            cs__model_link(m, cpu0 + s, s * pw->gps + i, tnh, pw->nv_bw, 0.3 * US);
    }
    cs__model_link(m, cpu0, cpu0 + 1, txb, pw->xbus_bw, 0.5 * US);
    /* rail k: its own PCIe path from socket k % 2 */
    if (f->rails > 2 || cs__rails(m, f->rails, cs__rail_socket, &cpu0, tpc, pw->pcie_bw) < 0)
        return cs_err_set(c->err, CS_ERR_INVAL,
                          "%s: rails=%ld: a POWER node takes 1 or 2 rails (one per socket)",
                          c->preset, f->rails);
    return CS_OK;
}

/* The POWER presets differ only in their numbers: fabric parameters, the
 * node, then the fabric around the nodes. */
static int cs__build_power(cs__pctx_t *c, cs__model_t *m, cs__fab_t *f, cs__power_t *pw)
{
    long sharp = 0;
    int st = cs__fabric_params(c, f);
    /* EDR switches (Switch-IB 2) reduce with SHARP: off unless asked */
    if (st == CS_OK)
        st = cs__get_int(c, "sharp", 0, 0, 1, &sharp);
    m->sharp = (int)sharp;
    if (st == CS_OK)
        st = cs__power_node(c, m, pw, f);
    if (st == CS_OK)
        cs__fabric_apply(m, f, 0);
    return st;
}

static int cs__build_minsky(cs__pctx_t *c, cs__model_t *m)
{
    cs__fab_t f = {.nodes = 64, .npr = 16, .rails = 1, .oversub = 1, .nic_bw = 12.5 * GB,
                   .nic_lat = 1.0 * US, .leaf_lat = 0.1 * US, .reduce_bw = 192 * GB};
    cs__power_t pw = {.gps = 2, .nv_bw = 40 * GB, .xbus_bw = 38.4 * GB, .pcie_bw = 15.75 * GB};
    return cs__build_power(c, m, &f, &pw);
}

static int cs__build_ac922(cs__pctx_t *c, cs__model_t *m)
{
    cs__fab_t f = {.nodes = 64, .npr = 18, .rails = 1, .oversub = 1, .nic_bw = 12.5 * GB,
                   .nic_lat = 1.0 * US, .leaf_lat = 0.1 * US, .reduce_bw = 800 * GB / 3};
    cs__power_t pw = {.gps = 2, .nv_bw = 75 * GB, .xbus_bw = 32 * GB, .pcie_bw = 31.5 * GB};
    return cs__build_power(c, m, &f, &pw);
}

static int cs__build_summit(cs__pctx_t *c, cs__model_t *m)
{
    cs__fab_t f = {.nodes = 256, .npr = 18, .rails = 2, .oversub = 1, .nic_bw = 12.5 * GB,
                   .nic_lat = 1.0 * US, .leaf_lat = 0.1 * US, .reduce_bw = 800 * GB / 3};
    cs__power_t pw = {.gps = 3, .nv_bw = 50 * GB, .xbus_bw = 32 * GB, .pcie_bw = 15.75 * GB};
    return cs__build_power(c, m, &f, &pw);
}

/* ---- x86 + P100 PCIe + 10 GbE ------------------------------------------ */

static int cs__build_x86(cs__pctx_t *c, cs__model_t *m)
{
    cs__fab_t f = {.nodes = 32, .npr = 16, .rails = 1, .oversub = 3, .nic_bw = 1.25 * GB,
                   .nic_lat = 5.0 * US, .leaf_lat = 0.5 * US, .reduce_bw = 192 * GB};
    long gpus = 4;
    double pcie_bw = 15.75 * GB, qpi_bw = 38.4 * GB;
    int st = cs__fabric_params(c, &f);
    if (st == CS_OK)
        st = cs__get_int(c, "gpus", 4, 1, 8, &gpus);
    if (st == CS_OK)
        st = cs__get_unit(c, "pcie_bw", pcie_bw, 1, &pcie_bw);
    if (st == CS_OK)
        st = cs__get_unit(c, "qpi_bw", qpi_bw, 1, &qpi_bw);
    if (st != CS_OK)
        return st;
    int tpc = cs__model_tier(m, "pcie", 5.7, 0.8);
    int tqp = cs__model_tier(m, "qpi", 1.0, 0.8);
    char name[24];
    for (int g = 0; g < gpus; g++) {
        snprintf(name, sizeof(name), "g%d", g);
        cs__model_elem(m, name, CS__EL_GPU, f.reduce_bw);
    }
    int cpu0 = cs__model_elem(m, "cpu0", CS__EL_CPU, 100 * GB);
    cs__model_elem(m, "cpu1", CS__EL_CPU, 100 * GB);
    int sw0 = cs__model_elem(m, "sw0", CS__EL_ROUTER, 0);
    cs__model_elem(m, "sw1", CS__EL_ROUTER, 0);
    int half = (int)(gpus + 1) / 2; /* socket 0 gets the first ceil(gpus/2) */
    for (int g = 0; g < gpus; g++)
        cs__model_link(m, g, sw0 + (g >= half), tpc, pcie_bw, 1.0 * US);
    cs__model_link(m, sw0, cpu0, tpc, pcie_bw, 1.0 * US);
    cs__model_link(m, sw0 + 1, cpu0 + 1, tpc, pcie_bw, 1.0 * US);
    cs__model_link(m, cpu0, cpu0 + 1, tqp, qpi_bw, 0.5 * US);
    /* rail k (NIC on x8) on socket k % 2 */
    if (f.rails > 2 || cs__rails(m, f.rails, cs__rail_socket, &cpu0, tpc, pcie_bw / 2) < 0)
        return cs_err_set(c->err, CS_ERR_INVAL,
                          "x86-p100-pcie-10gbe: rails=%ld: 1 or 2 (one per socket)", f.rails);
    cs__fabric_apply(m, &f, 1);
    return CS_OK;
}

/* ---- DGX-1 V100 hybrid cube mesh --------------------------------------- */

/* NVLink 2.0 links per GPU pair (each 25 GB/s/dir), rows sum to 6:
 * the cube-mesh matrix of docs/hardware.md, DGX-1 [V]. */
static const int cs__dgx1_links[8][8] = {
    {0, 2, 1, 1, 2, 0, 0, 0}, {2, 0, 1, 2, 0, 1, 0, 0}, {1, 1, 0, 2, 0, 0, 2, 0},
    {1, 2, 2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2, 1, 1}, {0, 1, 0, 0, 2, 0, 1, 2},
    {0, 0, 2, 0, 1, 1, 0, 2}, {0, 0, 0, 1, 1, 2, 2, 0},
};

static int cs__rail_dgx1(int k, void *arg)
{
    return *(int *)arg + k;
}

static int cs__build_dgx1(cs__pctx_t *c, cs__model_t *m)
{
    cs__fab_t f = {.nodes = 32, .npr = 4, .rails = 4, .oversub = 1, .nic_bw = 12.5 * GB,
                   .nic_lat = 1.0 * US, .leaf_lat = 0.1 * US, .reduce_bw = 800 * GB / 3};
    double brick = 25 * GB, pcie_bw = 15.75 * GB, qpi_bw = 38.4 * GB;
    int st = cs__fabric_params(c, &f);
    if (st == CS_OK)
        st = cs__get_unit(c, "nvlink_bw", brick, 1, &brick);
    if (st == CS_OK)
        st = cs__get_unit(c, "pcie_bw", pcie_bw, 1, &pcie_bw);
    if (st == CS_OK)
        st = cs__get_unit(c, "qpi_bw", qpi_bw, 1, &qpi_bw);
    if (st == CS_OK && f.rails != 4 && cs_params_get(&c->pp, "rails"))
        st = cs_err_set(c->err, CS_ERR_INVAL, "dgx1-v100-ib100: rails must be 4 (one per "
                                              "PCIe switch), found %ld", f.rails);
    if (st != CS_OK)
        return st;
    int tnv = cs__model_tier(m, "nvlink", 11.3, 0.87);
    int tpc = cs__model_tier(m, "pcie", 5.7, 0.8);
    int tqp = cs__model_tier(m, "qpi", 1.0, 0.8);
    char name[24];
    for (int g = 0; g < 8; g++) {
        snprintf(name, sizeof(name), "g%d", g);
        cs__model_elem(m, name, CS__EL_GPU, f.reduce_bw);
    }
    int cpu0 = cs__model_elem(m, "cpu0", CS__EL_CPU, 100 * GB);
    cs__model_elem(m, "cpu1", CS__EL_CPU, 100 * GB);
    int sw0 = 0;
    for (int s = 0; s < 4; s++) {
        snprintf(name, sizeof(name), "sw%d", s);
        int e = cs__model_elem(m, name, CS__EL_ROUTER, 0);
        if (s == 0)
            sw0 = e;
    }
    for (int a = 0; a < 8; a++)
        for (int b = a + 1; b < 8; b++)
            if (cs__dgx1_links[a][b])
                cs__model_link(m, a, b, tnv, cs__dgx1_links[a][b] * brick, 0.3 * US);
    for (int g = 0; g < 8; g++)
        cs__model_link(m, g, sw0 + g / 2, tpc, pcie_bw, 1.0 * US);
    for (int s = 0; s < 4; s++)
        cs__model_link(m, sw0 + s, cpu0 + s / 2, tpc, pcie_bw, 1.0 * US);
    cs__model_link(m, cpu0, cpu0 + 1, tqp, qpi_bw, 0.5 * US);
    /* rail k on PCIe switch k */
    if (cs__rails(m, 4, cs__rail_dgx1, &sw0, tpc, pcie_bw) < 0)
        return cs_err_set(c->err, CS_ERR_INTERNAL, "dgx1-v100-ib100: node template too large");
    cs__fabric_apply(m, &f, 0);
    return CS_OK;
}

/* ---- registry ----------------------------------------------------------- */

typedef struct {
    const char *name, *summary, *params;
    int (*build)(cs__pctx_t *c, cs__model_t *m);
    const char *const *desc;
} cs__preset_t;

static const cs__preset_t cs__presets[] = {
    {"x86-p100-pcie-10gbe", "x86 2-socket servers, P100 on PCIe Gen3 switches, 10 GbE, 3:1 uplinks",
     "nodes=32 nodes_per_rack=16 racks=2 oversub=3 gpus=4 rails=1 nic_bw=10Gbps nic_lat=5us "
     "leaf_lat=0.5us pcie_bw=15.75GBps qpi_bw=38.4GBps reduce_bw=192GBps",
     cs__build_x86, &cs__desc_x86},
    {"minsky-p100-ib100", "IBM S822LC Minsky: 2 POWER8, 4 P100, NVLink 1.0, EDR 100 Gb IB",
     "nodes=64 nodes_per_rack=16 racks=4 oversub=1 rails=1 nic_bw=12.5GBps nic_lat=1us "
     "leaf_lat=0.1us nvlink_bw=40GBps xbus_bw=38.4GBps pcie_bw=15.75GBps reduce_bw=192GBps sharp=0",
     cs__build_minsky, &cs__desc_minsky},
    {"ac922-v100-ib100", "IBM AC922: 2 POWER9, 4 V100, NVLink 2.0 x3 bricks, EDR 100 Gb IB",
     "nodes=64 nodes_per_rack=18 racks=4 oversub=1 rails=1 nic_bw=12.5GBps nic_lat=1us "
     "leaf_lat=0.1us nvlink_bw=75GBps xbus_bw=32GBps pcie_bw=31.5GBps reduce_bw=266.7GBps sharp=0",
     cs__build_ac922, &cs__desc_ac922},
    {"summit", "OLCF Summit: AC922 6 V100 (2 NVLink triangles), dual-rail EDR, non-blocking fat tree",
     "nodes=256 (the machine: 4608; at most 15625) nodes_per_rack=18 racks=15 oversub=1 rails=2 nic_bw=12.5GBps(per rail) "
     "nic_lat=1us leaf_lat=0.1us nvlink_bw=50GBps xbus_bw=32GBps pcie_bw=15.75GBps "
     "reduce_bw=266.7GBps sharp=0",
     cs__build_summit, &cs__desc_summit},
    {"dgx1-v100-ib100", "NVIDIA DGX-1 V100: 8 GPUs hybrid cube mesh, 4 x EDR 100 Gb IB per node",
     "nodes=32 nodes_per_rack=4 racks=8 oversub=1 rails=4 nic_bw=12.5GBps(per rail) nic_lat=1us "
     "leaf_lat=0.1us nvlink_bw=25GBps(per brick) pcie_bw=15.75GBps qpi_bw=38.4GBps "
     "reduce_bw=266.7GBps",
     cs__build_dgx1, &cs__desc_dgx1},
    {"hgx-h100", "8 x H100 SXM on NVSwitch (NVLS), 8 x 400 Gb/s rails, rail-optimized fat tree",
     "nodes=1 (max 2048) su=32 oversub=1 nic=400G gpu=h100 nvls=1 sharp=0 nvlink_bw=450GBps "
     "pcie_bw=63GBps nic_lat=1us leaf_lat=0.1us reduce_bw=1116.7GBps (h200: 1600GBps)",
     cs__build_hgx_h100, &cs__desc_hgx},
    {"hgx-h200", "hgx-h100 with gpu=h200: H200 SXM (HBM3e 4.8 TB/s), the same fabric",
     "nodes=1 (max 2048) su=32 oversub=1 nic=400G gpu=h200 nvls=1 sharp=0 nvlink_bw=450GBps "
     "pcie_bw=63GBps nic_lat=1us leaf_lat=0.1us reduce_bw=1600GBps",
     cs__build_hgx_h200, &cs__desc_hgx},
    {"gb200-nvl72", "GB200 NVL72: 72 Blackwell GPUs per rack in one NVLink domain (NVLS), "
                    "18 trays x 4 x 400 Gb/s rails",
     "racks=1 (max 64) su=8 oversub=1 nic=400G nvls=1 sharp=0 nvlink_bw=900GBps pcie_bw=63GBps "
     "nic_lat=1us leaf_lat=0.1us reduce_bw=2666.7GBps",
     cs__build_nvl72, &cs__desc_nvl72},
    {"mi300x", "8 x AMD MI300X fully connected by xGMI, 8 x 400 Gb/s rails, rail-optimized fat "
               "tree",
     "nodes=1 (max 2048) su=32 oversub=1 nic=400G xgmi_bw=64GBps pcie_bw=63GBps nic_lat=1us "
     "leaf_lat=0.1us reduce_bw=1766.7GBps",
     cs__build_mi300x, &cs__desc_mi300x},
};
#define CS__NPRESETS ((int)(sizeof(cs__presets) / sizeof(cs__presets[0])))

int cs_platform_preset_count(void)
{
    return CS__NPRESETS;
}
const char *cs_platform_preset_name(int i)
{
    return i >= 0 && i < CS__NPRESETS ? cs__presets[i].name : NULL;
}
const char *cs_platform_preset_summary(int i)
{
    return i >= 0 && i < CS__NPRESETS ? cs__presets[i].summary : NULL;
}
const char *cs_platform_preset_params(int i)
{
    return i >= 0 && i < CS__NPRESETS ? cs__presets[i].params : NULL;
}

int cs__preset_find(const char *name)
{
    for (int i = 0; i < CS__NPRESETS; i++)
        if (strcmp(cs__presets[i].name, name) == 0)
            return i;
    return -1;
}

int cs__preset_build(int idx, const char *params, cs__model_t *m, char **description,
                     cs_err_t *err)
{
    const cs__preset_t *ps = &cs__presets[idx];
    cs__pctx_t c = {.preset = ps->name, .err = err};
    cs_params_init(&c.pp);
    cs__model_t mm;
    memset(&mm, 0, sizeof(mm));
    int st = params && *params ? cs_params_parse(&c.pp, params, err) : CS_OK;
    if (st == CS_OK)
        st = ps->build(&c, &mm);
    for (int i = 0; st == CS_OK && i < c.pp.n; i++)
        if (!c.pp.kv[i].used)
            st = cs_err_set(err, CS_ERR_INVAL, "preset %s has no parameter '%s'; accepted: %s",
                            ps->name, c.pp.kv[i].key, ps->params);
    if (st != CS_OK)
        return st;
    char pbuf[1024];
    cs_params_format(&c.pp, pbuf, (int)sizeof(pbuf));
    size_t len = strlen(*ps->desc) + strlen(pbuf) + strlen(ps->params) + 256;
    char *d = malloc(len);
    if (d == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    snprintf(d, len, "%s: %s\nparameters given: %s\ndefaults: %s\n\n%s", ps->name, ps->summary,
             pbuf[0] ? pbuf : "(none)", ps->params, *ps->desc);
    *m = mm;
    *description = d;
    return CS_OK;
}
