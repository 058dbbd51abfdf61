/*
 * cs_plat_gpus.c - the presets of today's GPU systems: hgx-h100 (and its
 * alias hgx-h200), gb200-nvl72, mi300x.  Each is a rail-optimized fabric
 * (cs__rail_t; XML and tiers in cs_plat_rail.c, figures in
 * cs_plat_rtopo.c); pictures, worked routes and sources in
 * cs_plat_desc_gpu.c, the figures and their sources in docs/hardware.md.
 *
 * They carry the hardware's line rates: the calibrated factors of their
 * tiers are 1 (what NCCL or RCCL reach on them is a model of its own, not a
 * property of the fabric).  Reduction rate of a GPU (its host speed): peak
 * HBM bandwidth / 3 (a reduction reads two operands and writes one).
 *
 * Parameters common to the three (cs__rail_params):
 *   nodes | racks  NVLink / xGMI domains (default 1)
 *   su             domains per scalable unit: NIC k of every host of an SU
 *                  is on the SU's leaf k (any value >= 1; the last SU may be
 *                  partial, as the reference architectures leave unused
 *                  ports rather than change the cabling)
 *   oversub        leaf uplinks : downlinks (1: non-blocking)
 *   nic            a NIC's rate: 400G (Gb/s, the line rate's usual
 *                  spelling), 400Gbps, 50GBps, or a bare number of GB/s
 *   nic_lat, leaf_lat, pcie_bw, reduce_bw, and the intra-domain bandwidth
 *   nvls, sharp    0 | 1: the domain's switch reduces (NVLS; NCCL_NVLS_ENABLE),
 *                  the InfiniBand leaves and spine reduce (SHARP; the plugin)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_plat_model.h"

#define GB 1e9
#define US 1e-6
/* PCIe Gen5 x16: 32 GT/s x 16 lanes, 128b/130b encoding, per direction */
#define CS__PCIE5_X16 (32e9 * 16 / 8 * 128 / 130)

typedef struct {
    const char *dom_key;  /* "nodes" or "racks" */
    long dom_max, su_def;
    int hpd, gph, mesh, has_nvls, has_sharp;
    char host_fmt;
    const char *intra_tier, *intra_key; /* "nvlink" / "nvlink_bw" */
    double intra_bw, reduce_bw;
} cs__rail_def_t;

/* nic: "400G" means Gb/s; anything else as every bandwidth parameter. */
static int cs__get_nic(cs__pctx_t *c, double *out)
{
    const char *v = cs_params_get(&c->pp, "nic");
    char *end = NULL;
    double x = v ? strtod(v, &end) : 0;
    if (v && end != v && strcmp(end, "G") == 0) {
        if (!(x > 0) || x > 1e6)
            return cs_err_set(c->err, CS_ERR_INVAL,
                              "%s parameter nic: expected a positive rate like 400G, found '%s'",
                              c->preset, v);
        *out = x * 1e9 / 8;
        return CS_OK;
    }
    /* a bare number: NICs are sold in Gb/s, bandwidths elsewhere are read
     * in bytes: which was meant is not for collstep to guess */
    if (v && end != v && *end == '\0')
        return cs_err_set(c->err, CS_ERR_INVAL,
                          "%s parameter nic: '%s' has no unit: give 400G (Gb/s, as NICs are "
                          "sold) or a rate with its unit, like 50GBps",
                          c->preset, v);
    return cs__get_unit(c, "nic", 400e9 / 8, 1, out);
}

static int cs__rail_params(cs__pctx_t *c, cs__model_t *m, const cs__rail_def_t *def)
{
    cs__rail_t *r = &m->rail;
    long dom = 1, su = def->su_def, nvls = 0, sharp = 0;
    double intra = def->intra_bw, pcie = CS__PCIE5_X16, reduce = def->reduce_bw;
    int st = cs__get_int(c, def->dom_key, 1, 1, def->dom_max, &dom);
    if (st == CS_OK)
        st = cs__get_int(c, "su", def->su_def, 1, 100000, &su);
    if (st == CS_OK)
        st = cs__get_double(c, "oversub", 1.0, 1.0, 1000.0, &m->oversub);
    if (st == CS_OK)
        st = cs__get_nic(c, &m->nic_bw);
    if (st == CS_OK)
        st = cs__get_unit(c, "nic_lat", 1.0 * US, 0, &m->nic_lat);
    if (st == CS_OK)
        st = cs__get_unit(c, "leaf_lat", 0.1 * US, 0, &m->leaf_lat);
    if (st == CS_OK)
        st = cs__get_unit(c, def->intra_key, intra, 1, &intra);
    if (st == CS_OK)
        st = cs__get_unit(c, "pcie_bw", pcie, 1, &pcie);
    if (st == CS_OK)
        st = cs__get_unit(c, "reduce_bw", reduce, 1, &reduce);
    if (st == CS_OK && def->has_nvls)
        st = cs__get_int(c, "nvls", 1, 0, 1, &nvls);
    if (st == CS_OK && def->has_sharp)
        st = cs__get_int(c, "sharp", 0, 0, 1, &sharp);
    if (st != CS_OK)
        return st;
    m->is_rail = 1;
    m->spine_lat = m->leaf_lat;
    m->sharp = (int)sharp;
    m->nodes = (int)dom;
    m->npr = (int)su;
    *r = (cs__rail_t){.domains = (int)dom, .hpd = def->hpd, .gph = def->gph, .su = (int)su,
                      .mesh = def->mesh, .nvls = (int)nvls, .host_fmt = def->host_fmt,
                      .intra_bw = intra, .intra_lat = 0.3 * US, .pcie_bw = pcie,
                      .pcie_lat = 1.0 * US, .reduce_bw = reduce};
    /* line rates: every factor 1 */
    r->tier_intra = cs__model_tier(m, def->intra_tier, 1.0, 1.0);
    r->tier_pcie = cs__model_tier(m, "pcie", 1.0, 1.0);
    m->tier_nic = cs__model_tier(m, "nic", 1.0, 1.0);
    m->tier_leaf = cs__model_tier(m, "leaf", 1.0, 1.0);
    m->tier_spine = cs__model_tier(m, "spine", 1.0, 1.0);
    return CS_OK;
}

/* ---- HGX H100 / H200: 8 GPUs on NVSwitch, 8 x 400 Gb/s rails ---------------- */

static int cs__build_hgx(cs__pctx_t *c, cs__model_t *m, const char *gpu_def)
{
    const char *gpu = cs_params_get(&c->pp, "gpu");
    if (gpu == NULL)
        gpu = gpu_def;
    int h200 = strcmp(gpu, "h200") == 0;
    if (!h200 && strcmp(gpu, "h100") != 0)
        return cs_err_set(c->err, CS_ERR_INVAL, "%s parameter gpu: expected h100 or h200, found "
                                                "'%s'",
                          c->preset, gpu);
    /* HBM3 3.35 TB/s (H100 SXM), HBM3e 4.8 TB/s (H200 SXM), / 3 */
    cs__rail_def_t def = {.dom_key = "nodes", .dom_max = 2048, .su_def = 32, .hpd = 1, .gph = 8,
                          .has_nvls = 1, .has_sharp = 1, .host_fmt = 'n', .intra_tier = "nvlink",
                          .intra_key = "nvlink_bw", .intra_bw = 450 * GB,
                          .reduce_bw = (h200 ? 4.8e12 : 3.35e12) / 3};
    return cs__rail_params(c, m, &def);
}

int cs__build_hgx_h100(cs__pctx_t *c, cs__model_t *m)
{
    return cs__build_hgx(c, m, "h100");
}

int cs__build_hgx_h200(cs__pctx_t *c, cs__model_t *m)
{
    return cs__build_hgx(c, m, "h200");
}

/* ---- GB200 NVL72: 18 trays of 4 GPUs per rack, one NVLink domain ------------- */

int cs__build_nvl72(cs__pctx_t *c, cs__model_t *m)
{
    /* HBM3e 8 TB/s per B200 of a GB200 (576 TB/s per 72-GPU rack), / 3 */
    cs__rail_def_t def = {.dom_key = "racks", .dom_max = 64, .su_def = 8, .hpd = 18, .gph = 4,
                          .has_nvls = 1, .has_sharp = 1, .host_fmt = 'r', .intra_tier = "nvlink",
                          .intra_key = "nvlink_bw", .intra_bw = 900 * GB, .reduce_bw = 8e12 / 3};
    return cs__rail_params(c, m, &def);
}

/* ---- MI300X: 8 GPUs fully connected by xGMI ---------------------------------- */

int cs__build_mi300x(cs__pctx_t *c, cs__model_t *m)
{
    /* HBM3 5.3 TB/s, / 3 */
    cs__rail_def_t def = {.dom_key = "nodes", .dom_max = 2048, .su_def = 32, .hpd = 1, .gph = 8,
                          .mesh = 1, .host_fmt = 'n', .intra_tier = "xgmi",
                          .intra_key = "xgmi_bw", .intra_bw = 64 * GB, .reduce_bw = 5.3e12 / 3};
    return cs__rail_params(c, m, &def);
}
