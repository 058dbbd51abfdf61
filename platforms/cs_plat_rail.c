/*
 * cs_plat_rail.c - rail-optimized GPU fabrics (cs__rail_t in cs_plat_model.h):
 * the tiers summary, the rank hosts and the SimGrid XML of the hgx-h100,
 * gb200-nvl72 and mi300x presets.  The igraph figures are in
 * cs_plat_rtopo.c.
 *
 * Hardware.  `domains` NVLink (or xGMI) domains of `hpd` hosts of `gph`
 * GPUs.  Inside a domain each GPU's NVLink bundle goes to the domain's
 * switch (tier nvlink), or each GPU pair has its own link (tier xgmi).  GPU
 * k of a host reaches its own NIC over PCIe (tier pcie); NIC k of every host
 * of a scalable unit (SU: `su` domains) is on leaf k of that SU (rail k,
 * tier nic).  Above the leaves, spines: non-blocking (oversub 1: each NIC's
 * own uplink lane leaf-HOST-railK and spine port spine-HOST-railK, which
 * never limit in series with the NIC), or a shared uplink per leaf
 * (leaf-sS-railK = the SU's hosts x nic / oversub) and the spine core.
 *
 *   n0-g0 .. n0-g7 ==nvlink== n0-nvs (NVLS)      (mesh: xgmi-n0-gJ-gK)
 *     | pcie-n0-gK
 *   nic-n0-railK ---- s0-leafK ---- n1 .. n31, rail K: nic, nic
 *                 \__ leaf-n0-railK, spine-n0-railK __ spine __ other rails, SUs
 *
 * Routing.  A route never crosses a GPU: inside a domain the GPUs talk over
 * their intra-domain links only, between domains over their own NICs only
 * (a message from GPU 0 to GPU 3 of another node goes up rail 0 and down
 * rail 3 through the spine, as the reference architecture says; NCCL's PXN,
 * which moves data over NVLink to the GPU on the right rail first, is a
 * choice of the library, not of the fabric).  SimGrid 3.32 routes by the
 * fewest links, which would send such a message over NVLink and the other
 * GPU's NIC, and its Dijkstra zones cannot cross a zone between two
 * different gateways (it dereferences a null gateway).  So the fabric is
 * one flat zone "fabric" (DijkstraCache) holding every host, router and
 * link, whose routes are only the fabric's, one link each (a Dijkstra zone
 * lists a multi-link edge's links backwards, and the figures of a file
 * need them in path order): GPU -pcie- HOST-hcaK -nic- sS-leafK; with lanes
 * HOST-hcaK -nic- HOST-upK -leaf lane- HOST-spK -spine port- spine; shared
 * sS-leafK -uplink- sS-upK -core- spine.  A GPU is on one route, to its
 * hca, so no route crosses it.  Every pair of GPUs of a domain gets a
 * <bypassRoute> over its intra-domain links, which SimGrid takes before
 * any search:
 *   same domain               nvlink-A UP, nvlink-B DOWN (or xgmi-A-B)
 *   same SU and rail          pcie, nic, nic, pcie                   (4 links)
 *   otherwise                 pcie, nic, leaf, spine, spine, leaf, nic, pcie
 * A flat zone also loads fast (SimGrid 3.32 checks every new name by a
 * search over all zones).  Switches that reduce are declared by empty zones
 * next to "fabric" (routing None) naming their switch host and the hosts
 * they serve (reduce_switch, reduce_hosts; docs/platforms.md): n0-nvls for
 * the NVSwitch of node n0 (host n0-nvs, reached by bypass routes over each
 * GPU's NVLink), s0-rail3-sharp for leaf s0-leaf3, spine-sharp for the spine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_plat_model.h"

static int cs__rail_gpus(const cs__model_t *m)
{
    return m->rail.domains * m->rail.hpd * m->rail.gph;
}

static int cs__rail_nsu(const cs__model_t *m)
{
    return (m->rail.domains + m->rail.su - 1) / m->rail.su;
}

/* Hosts on one leaf of SU s (every host of its domains). */
static int cs__rail_su_hosts(const cs__model_t *m, int s)
{
    int left = m->rail.domains - s * m->rail.su;
    return (left < m->rail.su ? left : m->rail.su) * m->rail.hpd;
}

static double cs__rail_uplink_bw(const cs__model_t *m, int s)
{
    return cs__rail_su_hosts(m, s) * m->nic_bw / m->oversub;
}

static void cs__rail_domain(const cs__model_t *m, int d, char *buf, size_t len)
{
    snprintf(buf, len, "%c%d", m->rail.host_fmt, d);
}

void cs__rail_host(const cs__model_t *m, int d, int h, char *buf, size_t len)
{
    if (m->rail.host_fmt == 'r')
        snprintf(buf, len, "r%d-t%d", d, h);
    else
        snprintf(buf, len, "n%d", d);
}

/* ---- tiers ------------------------------------------------------------------ */

static void cs__tier_set(const cs__model_t *m, cs_platform_t *p, int t, uint64_t n, double bw,
                         double lat)
{
    if (t < 0 || n == 0)
        return;
    cs_tier_info_t *ti = &p->tiers[p->ntiers++];
    memset(ti, 0, sizeof(*ti));
    snprintf(ti->name, sizeof(ti->name), "%s", m->tier[t].name);
    ti->nlinks = n;
    ti->bandwidth = bw;
    ti->latency = lat;
    ti->lat_factor = m->tier[t].lat_factor;
    ti->bw_factor = m->tier[t].bw_factor;
}

void cs__rail_summary(const cs__model_t *m, cs_platform_t *p)
{
    const cs__rail_t *r = &m->rail;
    uint64_t g = (uint64_t)cs__rail_gpus(m), nsu = (uint64_t)cs__rail_nsu(m);
    int up = r->domains > 1;
    p->ntiers = 0;
    for (int t = 0; t < m->ntiers; t++) {
        if (t == r->tier_intra)
            cs__tier_set(m, p, t,
                         r->mesh ? (uint64_t)r->domains * (uint64_t)(r->gph * (r->gph - 1) / 2) : g,
                         r->intra_bw, r->intra_lat);
        else if (t == r->tier_pcie)
            cs__tier_set(m, p, t, g, r->pcie_bw, r->pcie_lat);
        else if (t == m->tier_nic)
            cs__tier_set(m, p, t, g, m->nic_bw, m->nic_lat);
        else if (t == m->tier_leaf && up && cs__model_lanes(m))
            cs__tier_set(m, p, t, g, m->nic_bw, m->leaf_lat);
        else if (t == m->tier_leaf && up) /* SU 0 is full when there are several */
            cs__tier_set(m, p, t, nsu * (uint64_t)r->gph, cs__rail_uplink_bw(m, 0), m->leaf_lat);
        else if (t == m->tier_spine && up && cs__model_lanes(m))
            cs__tier_set(m, p, t, g, m->nic_bw, m->spine_lat / 2);
        else if (t == m->tier_spine && up) {
            double core = 0;
            for (int s = 0; s < (int)nsu; s++)
                core += cs__rail_uplink_bw(m, s) * r->gph;
            cs__tier_set(m, p, t, 1, core, m->spine_lat / 2);
        }
    }
    p->ndevices = g;
    p->ndims = 2;
    p->dims[0] = r->hpd * r->gph;
    p->dims[1] = r->domains;
    snprintf(p->dims_from, sizeof(p->dims_from), "preset");
    /* blocks: a host's GPUs (several hosts per domain), a domain's, an SU's */
    p->nblocks = 0;
    if (r->hpd > 1 && r->gph > 1)
        p->blocks[p->nblocks++] = r->gph;
    if (r->domains > 1)
        p->blocks[p->nblocks++] = r->hpd * r->gph;
    if (nsu > 1 && r->su > 1)
        p->blocks[p->nblocks++] = r->su * r->hpd * r->gph;
    p->reduce_bw[0] = p->reduce_bw[1] = p->reduce_bw[2] = r->reduce_bw;
}

int cs__rail_rank_hosts(const cs__model_t *m, cs_platform_t *p, cs_err_t *err)
{
    const cs__rail_t *r = &m->rail;
    p->hosts = calloc((size_t)p->ndevices + 1, sizeof(char *));
    if (p->hosts == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    uint64_t i = 0;
    char host[32], name[48];
    for (int d = 0; d < r->domains; d++)
        for (int h = 0; h < r->hpd; h++) {
            cs__rail_host(m, d, h, host, sizeof(host));
            for (int k = 0; k < r->gph && i < p->ndevices; k++) {
                snprintf(name, sizeof(name), "%s-g%d", host, k);
                if ((p->hosts[i++] = strdup(name)) == NULL)
                    return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
            }
        }
    snprintf(p->rank_noun, sizeof(p->rank_noun), "devices");
    snprintf(p->rank_rule, sizeof(p->rank_rule),
             "the %llu GPUs (hosts with device=gpu), one rank each, in document order: %s by "
             "%s, g0 first",
             (unsigned long long)p->ndevices, r->hpd > 1 ? "rack by rack, tray" : "node",
             r->hpd > 1 ? "tray" : "node");
    return CS_OK;
}

/* ---- XML -------------------------------------------------------------------- */

/* The intra-domain link of GPU k of host `host` (switch bundles). */
static void cs__intra_id(const cs__model_t *m, const char *host, int k, char *buf, size_t len)
{
    snprintf(buf, len, "%s-%s-g%d", m->tier[m->rail.tier_intra].name, host, k);
}

static void cs__rail_links(cs__sb_t *b, const cs__model_t *m, int lanes)
{
    const cs__rail_t *r = &m->rail;
    const char *ti = m->tier[r->tier_intra].name, *tp = m->tier[r->tier_pcie].name;
    char host[32], id[96];
    for (int d = 0; d < r->domains; d++)
        for (int h = 0; h < r->hpd; h++) {
            cs__rail_host(m, d, h, host, sizeof(host));
            for (int k = 0; k < r->gph; k++) {
                if (!r->mesh) {
                    cs__intra_id(m, host, k, id, sizeof(id));
                    cs__xml_link(b, "    ", id, ti, r->intra_bw, r->intra_lat);
                }
                for (int j = k + 1; r->mesh && j < r->gph; j++) {
                    snprintf(id, sizeof(id), "%s-%s-g%d-g%d", ti, host, k, j);
                    cs__xml_link(b, "    ", id, ti, r->intra_bw, r->intra_lat);
                }
                snprintf(id, sizeof(id), "%s-%s-g%d", tp, host, k);
                cs__xml_link(b, "    ", id, tp, r->pcie_bw, r->pcie_lat);
                snprintf(id, sizeof(id), "nic-%s-rail%d", host, k);
                cs__xml_link(b, "    ", id, m->tier[m->tier_nic].name, m->nic_bw, m->nic_lat);
                if (!lanes)
                    continue;
                snprintf(id, sizeof(id), "leaf-%s-rail%d", host, k);
                cs__xml_link(b, "    ", id, m->tier[m->tier_leaf].name, m->nic_bw, m->leaf_lat);
                snprintf(id, sizeof(id), "spine-%s-rail%d", host, k);
                cs__xml_link(b, "    ", id, m->tier[m->tier_spine].name, m->nic_bw,
                             m->spine_lat / 2);
            }
        }
    if (lanes || r->domains < 2)
        return;
    double core = 0;
    for (int s = 0; s < cs__rail_nsu(m); s++)
        for (int k = 0; k < r->gph; k++) {
            snprintf(id, sizeof(id), "leaf-s%d-rail%d", s, k);
            cs__xml_link(b, "    ", id, m->tier[m->tier_leaf].name, cs__rail_uplink_bw(m, s),
                         m->leaf_lat);
            core += cs__rail_uplink_bw(m, s);
        }
    cs__xml_link(b, "    ", "spine-core", m->tier[m->tier_spine].name, core, m->spine_lat / 2);
}

static void cs__rail_nodes(cs__sb_t *b, const cs__model_t *m, int sharp)
{
    const cs__rail_t *r = &m->rail;
    char host[32], dom[16];
    for (int d = 0; d < r->domains; d++) {
        for (int h = 0; h < r->hpd; h++) {
            cs__rail_host(m, d, h, host, sizeof(host));
            for (int k = 0; k < r->gph; k++)
                cs__sb_printf(b,
                              "    <host id=\"%s-g%d\" speed=\"%.0ff\"><prop id=\"device\" "
                              "value=\"gpu\"/></host>\n",
                              host, k, r->reduce_bw);
        }
        cs__rail_domain(m, d, dom, sizeof(dom));
        if (!r->mesh && r->nvls)
            cs__sb_printf(b, "    <host id=\"%s-nvs\" speed=\"1f\"/>\n", dom);
    }
    int lanes = cs__model_lanes(m) && r->domains > 1;
    for (int d = 0; d < r->domains; d++)
        for (int h = 0; h < r->hpd; h++) {
            cs__rail_host(m, d, h, host, sizeof(host));
            for (int k = 0; k < r->gph; k++) {
                cs__sb_printf(b, "    <router id=\"%s-hca%d\"/>\n", host, k);
                if (lanes)
                    cs__sb_printf(b, "    <router id=\"%s-up%d\"/><router id=\"%s-sp%d\"/>\n",
                                  host, k, host, k);
            }
        }
    for (int s = 0; !lanes && r->domains > 1 && s < cs__rail_nsu(m); s++)
        for (int k = 0; k < r->gph; k++)
            cs__sb_printf(b, "    <router id=\"s%d-up%d\"/>\n", s, k);
    const char *kind = sharp ? "host" : "router", *speed = sharp ? " speed=\"1f\"" : "";
    for (int s = 0; s < cs__rail_nsu(m); s++)
        for (int k = 0; k < r->gph; k++)
            cs__sb_printf(b, "    <%s id=\"s%d-leaf%d\"%s/>\n", kind, s, k, speed);
    if (r->domains > 1)
        cs__sb_printf(b, "    <%s id=\"spine\"%s/>\n", kind, speed);
}

#define CS__CTN "<link_ctn id=\"%s\" direction=\"%s\"/>"

/* One link per route, so that SimGrid lists a route's links in path order
 * (a Dijkstra zone reverses each edge's list): GPU -pcie- hca -nic- leaf;
 * lanes: hca -nic- up -leaf lane- sp -spine port- spine; shared: leaf
 * -uplink- sS-upK -core- spine. */
static void cs__route1(cs__sb_t *b, const char *src, const char *dst, const char *link)
{
    cs__sb_printf(b, "    <route src=\"%s\" dst=\"%s\">" CS__CTN "</route>\n", src, dst, link,
                  "UP");
}

static void cs__rail_routes(cs__sb_t *b, const cs__model_t *m, int lanes)
{
    const cs__rail_t *r = &m->rail;
    const char *tp = m->tier[r->tier_pcie].name;
    char host[32], a[64], c[64], l[96];
    for (int d = 0; d < r->domains; d++)
        for (int h = 0; h < r->hpd; h++) {
            cs__rail_host(m, d, h, host, sizeof(host));
            for (int k = 0; k < r->gph; k++) {
                snprintf(a, sizeof(a), "%s-g%d", host, k);
                snprintf(c, sizeof(c), "%s-hca%d", host, k);
                snprintf(l, sizeof(l), "%s-%s-g%d", tp, host, k);
                cs__route1(b, a, c, l);
                snprintf(a, sizeof(a), "s%d-leaf%d", d / r->su, k);
                snprintf(l, sizeof(l), "nic-%s-rail%d", host, k);
                cs__route1(b, c, a, l);
                if (!lanes)
                    continue;
                snprintf(a, sizeof(a), "%s-up%d", host, k);
                cs__route1(b, c, a, l);
                snprintf(c, sizeof(c), "%s-sp%d", host, k);
                snprintf(l, sizeof(l), "leaf-%s-rail%d", host, k);
                cs__route1(b, a, c, l);
                snprintf(l, sizeof(l), "spine-%s-rail%d", host, k);
                cs__route1(b, c, "spine", l);
            }
        }
    for (int s = 0; !lanes && r->domains > 1 && s < cs__rail_nsu(m); s++)
        for (int k = 0; k < r->gph; k++) {
            snprintf(a, sizeof(a), "s%d-leaf%d", s, k);
            snprintf(c, sizeof(c), "s%d-up%d", s, k);
            snprintf(l, sizeof(l), "leaf-s%d-rail%d", s, k);
            cs__route1(b, a, c, l);
            cs__route1(b, c, "spine", "spine-core");
        }
}

/* The bypass routes of domain d: every ordered pair of its GPUs over their
 * intra-domain links, and each GPU to and from the domain's switch. */
static void cs__rail_bypass(cs__sb_t *b, const cs__model_t *m, int d)
{
    const cs__rail_t *r = &m->rail;
    int n = r->hpd * r->gph;
    char ha[32], hb[32], la[96], lb[96], dom[16];
    cs__rail_domain(m, d, dom, sizeof(dom));
    for (int a = 0; a < n; a++) {
        cs__rail_host(m, d, a / r->gph, ha, sizeof(ha));
        cs__intra_id(m, ha, a % r->gph, la, sizeof(la));
        for (int c = 0; c < n; c++) {
            if (c == a)
                continue;
            cs__rail_host(m, d, c / r->gph, hb, sizeof(hb));
            cs__sb_printf(b, "    <bypassRoute src=\"%s-g%d\" dst=\"%s-g%d\">", ha, a % r->gph,
                          hb, c % r->gph);
            if (r->mesh) {
                snprintf(lb, sizeof(lb), "%s-%s-g%d-g%d", m->tier[r->tier_intra].name, ha,
                         a < c ? a : c, a < c ? c : a);
                cs__sb_printf(b, CS__CTN, lb, a < c ? "UP" : "DOWN");
            } else {
                cs__intra_id(m, hb, c % r->gph, lb, sizeof(lb));
                cs__sb_printf(b, CS__CTN CS__CTN, la, "UP", lb, "DOWN");
            }
            cs__sb_printf(b, "</bypassRoute>\n");
        }
        if (r->mesh || !r->nvls)
            continue;
        cs__sb_printf(b,
                      "    <bypassRoute src=\"%s-g%d\" dst=\"%s-nvs\">" CS__CTN "</bypassRoute>\n"
                      "    <bypassRoute src=\"%s-nvs\" dst=\"%s-g%d\">" CS__CTN
                      "</bypassRoute>\n",
                      ha, a % r->gph, dom, la, "UP", dom, ha, a % r->gph, la, "DOWN");
    }
}

/* The zones that declare switches that reduce (see the top). */
static void cs__rail_switch_zones(cs__sb_t *b, const cs__model_t *m, int sharp)
{
    const cs__rail_t *r = &m->rail;
    char dom[16], host[32];
    for (int d = 0; !r->mesh && r->nvls && d < r->domains; d++) {
        cs__rail_domain(m, d, dom, sizeof(dom));
        cs__sb_printf(b,
                      "  <zone id=\"%s-nvls\" routing=\"None\">\n    <prop id=\"reduce\" "
                      "value=\"nvls\"/><prop id=\"reduce_switch\" value=\"%s-nvs\"/>\n    <prop "
                      "id=\"reduce_hosts\" value=\"",
                      dom, dom);
        for (int h = 0; h < r->hpd; h++) {
            cs__rail_host(m, d, h, host, sizeof(host));
            for (int k = 0; k < r->gph; k++)
                cs__sb_printf(b, "%s%s-g%d", h || k ? "," : "", host, k);
        }
        cs__sb_printf(b, "\"/>\n  </zone>\n");
    }
    for (int s = 0; sharp && s < cs__rail_nsu(m); s++)
        for (int k = 0; k < r->gph; k++) {
            cs__sb_printf(b,
                          "  <zone id=\"s%d-rail%d-sharp\" routing=\"None\">\n    <prop "
                          "id=\"reduce\" value=\"sharp\"/><prop id=\"reduce_switch\" "
                          "value=\"s%d-leaf%d\"/>\n    <prop id=\"reduce_hosts\" value=\"",
                          s, k, s, k);
            int first = 1;
            for (int d = s * r->su; d < r->domains && d < (s + 1) * r->su; d++)
                for (int h = 0; h < r->hpd; h++, first = 0) {
                    cs__rail_host(m, d, h, host, sizeof(host));
                    cs__sb_printf(b, "%s%s-g%d", first ? "" : ",", host, k);
                }
            cs__sb_printf(b, "\"/>\n  </zone>\n");
        }
    if (sharp && r->domains > 1)
        cs__sb_printf(b, "  <zone id=\"spine-sharp\" routing=\"None\">\n    <prop id=\"reduce\" "
                         "value=\"sharp\"/><prop id=\"reduce_switch\" value=\"spine\"/><prop "
                         "id=\"reduce_zones\" value=\"*\"/>\n  </zone>\n");
}

int cs__rail_xml(const cs__model_t *m, const char *zone_id, const char *spec, const char *comment,
                 const cs_platform_t *p, char **xml, cs_err_t *err)
{
    cs__sb_t b = {0};
    int lanes = cs__model_lanes(m) && m->rail.domains > 1;
    cs__xml_head(&b, m, zone_id, "DijkstraCache", spec, comment, p);
    cs__sb_printf(&b, "  <zone id=\"fabric\" routing=\"DijkstraCache\">\n");
    cs__rail_links(&b, m, lanes);
    cs__rail_nodes(&b, m, m->sharp);
    cs__rail_routes(&b, m, lanes);
    for (int d = 0; d < m->rail.domains; d++)
        cs__rail_bypass(&b, m, d);
    cs__sb_printf(&b, "  </zone>\n");
    cs__rail_switch_zones(&b, m, m->sharp);
    cs__sb_printf(&b, "</zone>\n</platform>\n");
    if (b.failed) {
        free(b.s);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory writing the platform XML");
    }
    *xml = b.s;
    return CS_OK;
}
