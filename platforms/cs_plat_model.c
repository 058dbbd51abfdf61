/*
 * cs_plat_model.c - the fabric model (see cs_plat_model.h): building it,
 * summarising it as tiers, and writing it as SimGrid XML.
 *
 * XML layout (platform version 4.1), two levels of zones.  Non-blocking
 * fabrics of several racks whose node splits into one part per rail
 * (every preset but DGX-1) use rail zones: a zone per node rail under a
 * DijkstraCache top zone, with a spine port per node rail instead of a
 * spine link per rack pair (see cs__model_rail_zones for why, and
 * cs__xml_rail_zones); the "links" zone is as below.  Otherwise:
 *
 *   top zone (Floyd): props collstep_spec / collstep_dims / collstep_factors
 *     zone "links" (routing None): every link: node links, nic-nN-railK,
 *       and leaf-nN-railK + spine-rA-rB (lanes) or leaf-rR + spine-core
 *       (shared uplinks)
 *     zone rR (DijkstraCache), one per rack: router rR-leaf, every node's
 *       hosts and routers (nN-g0, nN-cpu0, nN-hca0, ...), one <route> per
 *       node link, nN-hcaK -> rR-leaf [nic-nN-railK] (symmetrical), and
 *       with lanes: router rR-up (the rack's gateway), routers nN-upK,
 *       nN-hcaK -> nN-upK [nic-nN-railK], nN-upK -> rR-up [leaf-nN-railK]
 *     lanes: zoneRoute rA -> rB (A < B, symmetrical) between rA-up and
 *       rB-up [spine-rA-rB]: no spine zone; a SimGrid route between two
 *       zones needs at least one link between their gateways (empty routes
 *       are refused) and gateways are fixed per pair of zones, so the
 *       per-node-rail part of the path can only live inside the rack zone
 *       (the lanes) and the top hop is one link per rack pair.
 *     shared: zone "spine" (one router spine-sw); zoneRoute rR -> spine
 *       [leaf-rR UP, spine-core UP], spine -> rR [leaf-rR DOWN]
 *
 * Inside a rack, hca -> leaf -> hca (2 route hops) is shorter than
 * hca -> up -> rR-up -> up -> hca (4), so same-rack traffic never takes the
 * lanes, and a GPU reaches rR-up through its own socket's rail.
 *
 * Why no zone per node: SimGrid 3.32 checks every new link and host name,
 * and resolves every <link_ctn> of a split-duplex link, by a depth-first
 * search over ALL zones (NetZoneImpl::get_link_by_name_or_null), so
 * loading costs O(links x zones).  With a zone per node, 768 Summit nodes
 * took 11 s and 1024 did not load in 30 s; with a zone per rack the full
 * 4,608 nodes load in seconds.  All links are declared in the first
 * child zone "links" (the DTD does not allow links before sub-zones in the
 * top zone), so lookups succeed at once and the failing uniqueness checks
 * only visit zones whose link maps are empty.  Rail zones (a zone per node
 * rail, links still all in "links") pay the host-name checks instead, a
 * search over every zone per new host: the full 4,608 nodes (9,216 rail
 * zones) load in about 19 s of CPU against 3 s with rack zones, a small
 * part of a full-machine allreduce.  Dijkstra (not Floyd) inside a rack because
 * Floyd's O(V^3) on 18 x 9 + 1 vertices per rack is slow at 256 racks;
 * DijkstraCache computes a rack's routes on first use.
 *
 * Every link is SPLITDUPLEX and carries <prop id="tier">.  Link names start
 * with their tier and a dash ("nvlink-n3-g0-g1", "nvlink-host-n3-cpu0-g0",
 * "nic-n3-rail1", "leaf-n3-rail1", "spine-n3-rail1", "spine-r0-r2", "leaf-r0",
 * "spine-core"), so a route's tiers can be read from
 * the link names alone (SimGrid's C API has no link properties).  Tier
 * names may contain dashes: take the LONGEST tier name of the platform
 * that, followed by '-', prefixes the link name (not the text before the
 * first dash).  The simulator reads the tier property, not the names.
 */
#include "cs_plat_model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_grow.h"

int cs__model_tier(cs__model_t *m, const char *name, double lat_factor, double bw_factor)
{
    for (int i = 0; i < m->ntiers; i++)
        if (strcmp(m->tier[i].name, name) == 0)
            return i;
    if (m->ntiers == CS_PLAT_MAX_TIERS)
        return -1;
    cs__tier_def_t *t = &m->tier[m->ntiers];
    snprintf(t->name, sizeof(t->name), "%s", name);
    t->lat_factor = lat_factor;
    t->bw_factor = bw_factor;
    return m->ntiers++;
}

int cs__model_elem(cs__model_t *m, const char *name, int kind, double speed)
{
    if (m->nelem == CS__NODE_MAX_ELEM)
        return -1;
    cs__node_elem_t *e = &m->elem[m->nelem];
    snprintf(e->name, sizeof(e->name), "%s", name);
    e->kind = kind;
    e->speed = speed;
    if (kind == CS__EL_GPU)
        m->ngpus++;
    return m->nelem++;
}

int cs__model_link(cs__model_t *m, int a, int b, int tier, double bw, double lat)
{
    if (m->nlinks == CS__NODE_MAX_LINKS || a < 0 || b < 0 || tier < 0)
        return -1;
    m->link[m->nlinks] = (cs__node_link_t){.a = a, .b = b, .tier = tier, .bw = bw, .lat = lat};
    return m->nlinks++;
}

/* ---- rail zones ------------------------------------------------------------
 *
 * Why: SimGrid's max-min solver (selective update) re-solves, on every
 * event, the connected component of (flows x links) the event touches.  A
 * link per rack pair joins every flow between two racks; their endpoints
 * join flows to other racks, so a large allreduce became one component of
 * thousands of flows and the cost per event grew with the machine
 * (hier ring+rhd, 100 MB: 576 Summit nodes 18 s CPU, 1152 nodes 73 s; with
 * rail zones 3.5 s and 11 s, the full 4608 nodes 188 s).  Only links
 * owned by one node rail keep components as small as the real sharing.
 * But a route between two zones needs at least one link between the
 * zones' gateways, one route per pair of zones: with rack zones that link
 * is per rack pair.  Hence one zone per node rail: its cross-rack route to
 * the spine zone is the rail's own links (nic, leaf lane, spine port).
 *
 * Element e of the node goes to the rail whose adapter router is nearest
 * in hops (ties: lower rail).  The form applies only when it keeps every
 * route of the rack-zone layout: each part is connected on its own, every
 * two parts are joined by exactly one node link (so the top-level Dijkstra
 * never crosses a third part, which SimGrid 3.32 cannot compose), and the
 * GPUs stay in document order (ranks follow it). */
int cs__model_rail_zones(const cs__model_t *m, int *group)
{
    int dist[CS__NODE_MAX_ELEM], q[CS__NODE_MAX_ELEM], pair[CS__MAX_RAILS][CS__MAX_RAILS];
    if (!cs__model_lanes(m) || cs__model_racks(m) < 2)
        return 0;
    for (int e = 0; e < m->nelem; e++)
        group[e] = -1, dist[e] = -1;
    for (int k = 0; k < m->rails; k++) { /* BFS from each rail's adapter */
        int d[CS__NODE_MAX_ELEM], h = 0, t = 0;
        for (int e = 0; e < m->nelem; e++)
            d[e] = -1;
        d[m->rail_el[k]] = 0;
        q[t++] = m->rail_el[k];
        while (h < t) {
            int v = q[h++];
            for (int l = 0; l < m->nlinks; l++) {
                int a = m->link[l].a, b = m->link[l].b, u = a == v ? b : b == v ? a : -1;
                if (u >= 0 && d[u] < 0)
                    d[u] = d[v] + 1, q[t++] = u;
            }
        }
        for (int e = 0; e < m->nelem; e++)
            if (d[e] >= 0 && (dist[e] < 0 || d[e] < dist[e]))
                dist[e] = d[e], group[e] = k;
    }
    memset(pair, 0, sizeof(pair));
    for (int e = 0; e < m->nelem; e++)
        if (group[e] < 0)
            return 0;
    for (int l = 0; l < m->nlinks; l++) {
        int ga = group[m->link[l].a], gb = group[m->link[l].b];
        if (ga != gb)
            pair[ga][gb]++, pair[gb][ga]++;
    }
    for (int a = 0; a < m->rails; a++)
        for (int b = a + 1; b < m->rails; b++)
            if (pair[a][b] != 1)
                return 0;
    for (int k = 0; k < m->rails; k++) { /* each part connected on its own */
        int seen[CS__NODE_MAX_ELEM] = {0}, h = 0, t = 0;
        seen[m->rail_el[k]] = 1;
        q[t++] = m->rail_el[k];
        while (h < t) {
            int v = q[h++];
            for (int l = 0; l < m->nlinks; l++) {
                int a = m->link[l].a, b = m->link[l].b, u = a == v ? b : b == v ? a : -1;
                if (u >= 0 && !seen[u] && group[u] == k)
                    seen[u] = 1, q[t++] = u;
            }
        }
        for (int e = 0; e < m->nelem; e++)
            if (group[e] == k && !seen[e])
                return 0;
    }
    for (int e = 0, last = 0; e < m->nelem; e++)
        if (m->elem[e].kind == CS__EL_GPU) {
            if (group[e] < last)
                return 0;
            last = group[e];
        }
    return 1;
}

/* ---- tiers summary: per tier, count links and find the most common bw/lat */

#define CS__MODE_MAX 16
typedef struct {
    int n;
    double bw[CS__MODE_MAX], lat[CS__MODE_MAX];
    uint64_t w[CS__MODE_MAX];
} cs__mode_t;

static void cs__mode_add(cs__mode_t *md, double bw, double lat, uint64_t w)
{
    for (int i = 0; i < md->n; i++)
        if (md->bw[i] == bw && md->lat[i] == lat) {
            md->w[i] += w;
            return;
        }
    if (md->n < CS__MODE_MAX) {
        md->bw[md->n] = bw;
        md->lat[md->n] = lat;
        md->w[md->n++] = w;
    }
}

void cs__model_summary(const cs__model_t *m, cs_platform_t *p)
{
    if (m->is_rail) {
        cs__rail_summary(m, p);
        return;
    }
    cs__mode_t md[CS_PLAT_MAX_TIERS];
    memset(md, 0, sizeof(md));
    uint64_t nodes = (uint64_t)m->nodes;
    for (int i = 0; i < m->nlinks; i++)
        cs__mode_add(&md[m->link[i].tier], m->link[i].bw, m->link[i].lat, nodes);
    uint64_t rails = (uint64_t)m->rails;
    cs__mode_add(&md[m->tier_nic], m->nic_bw, m->nic_lat, nodes * rails);
    int racks = cs__model_racks(m);
    int group[CS__NODE_MAX_ELEM];
    if (cs__model_rail_zones(m, group)) {
        cs__mode_add(&md[m->tier_leaf], m->nic_bw, m->leaf_lat, nodes * rails);
        cs__mode_add(&md[m->tier_spine], m->nic_bw, m->spine_lat / 2, nodes * rails);
    } else if (cs__model_lanes(m)) {
        if (racks > 1)
            cs__mode_add(&md[m->tier_leaf], m->nic_bw, m->leaf_lat, nodes * rails);
        for (int a = 0; a < racks; a++)
            for (int c = a + 1; c < racks; c++)
                cs__mode_add(&md[m->tier_spine], cs__model_pair_bw(m, a, c), m->spine_lat, 1);
    } else {
        double total_up = 0;
        for (int r = 0; r < racks; r++) {
            double up = cs__model_uplink_bw(m, r);
            total_up += up;
            cs__mode_add(&md[m->tier_leaf], up, m->leaf_lat, 1);
        }
        cs__mode_add(&md[m->tier_spine], total_up, m->spine_lat, 1);
    }

    /* tiers without links (lanes in a one-rack platform) are left out */
    p->ntiers = 0;
    for (int t = 0; t < m->ntiers; t++) {
        uint64_t nl = 0;
        for (int i = 0; i < md[t].n; i++)
            nl += md[t].w[i];
        if (nl == 0)
            continue;
        cs_tier_info_t *ti = &p->tiers[p->ntiers++];
        memset(ti, 0, sizeof(*ti));
        snprintf(ti->name, sizeof(ti->name), "%s", m->tier[t].name);
        ti->lat_factor = m->tier[t].lat_factor;
        ti->bw_factor = m->tier[t].bw_factor;
        uint64_t best = 0;
        for (int i = 0; i < md[t].n; i++) {
            ti->nlinks += md[t].w[i];
            if (md[t].w[i] > best) {
                best = md[t].w[i];
                ti->bandwidth = md[t].bw[i];
                ti->latency = md[t].lat[i];
            }
        }
    }
    p->ndevices = (uint64_t)m->ngpus * nodes;
    p->ndims = 2;
    p->dims[0] = m->ngpus;
    p->dims[1] = m->nodes;
    snprintf(p->dims_from, sizeof(p->dims_from), "preset");
    p->nblocks = 0;
    if (m->nodes > 1 && m->ngpus > 1)
        p->blocks[p->nblocks++] = m->ngpus;
    if (m->npr > 1 && m->npr < m->nodes && m->ngpus >= 1)
        p->blocks[p->nblocks++] = m->npr * m->ngpus;
    /* every node alike: the GPUs' speeds are the ranks' reduction rates */
    for (int e = 0, first = 1; e < m->nelem; e++) {
        if (m->elem[e].kind != CS__EL_GPU)
            continue;
        double v = m->elem[e].speed;
        if (first || v < p->reduce_bw[0])
            p->reduce_bw[0] = v;
        if (first || v > p->reduce_bw[2])
            p->reduce_bw[2] = v;
        if (first)
            p->reduce_bw[1] = v;
        first = 0;
    }
}

/* ---- XML writer -------------------------------------------------------- */

void cs__sb_printf(cs__sb_t *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int w = vsnprintf(b->s ? b->s + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (w < 0) {
            b->failed = 1;
            return;
        }
        if ((size_t)w < room) {
            b->len += (size_t)w;
            return;
        }
        if (cs_grow(&b->s, &b->cap, b->len + (size_t)w + 1, 1, 1 << 16)) {
            b->failed = 1;
            return;
        }
    }
}

void cs__xml_link(cs__sb_t *b, const char *indent, const char *id, const char *tier, double bw,
                  double lat)
{
    cs__sb_printf(b,
                  "%s<link id=\"%s\" bandwidth=\"%.0fBps\" latency=\"%.3fns\" "
                  "sharing_policy=\"SPLITDUPLEX\"><prop id=\"tier\" value=\"%s\"/></link>\n",
                  indent, id, bw, lat * 1e9, tier);
}

/* The elements of node n (those of rail part `part` only when group is
 * not NULL). */
static void cs__xml_node(cs__sb_t *b, const cs__model_t *m, int n, const int *group, int part)
{
    const char *in = "    ";
    for (int i = 0; i < m->nelem; i++) {
        const cs__node_elem_t *e = &m->elem[i];
        if (group && group[i] != part)
            continue;
        if (e->kind == CS__EL_ROUTER)
            cs__sb_printf(b, "%s<router id=\"n%d-%s\"/>\n", in, n, e->name);
        else if (e->kind == CS__EL_GPU)
            cs__sb_printf(b,
                          "%s<host id=\"n%d-%s\" speed=\"%.0ff\"><prop id=\"device\" "
                          "value=\"gpu\"/></host>\n",
                          in, n, e->name, e->speed);
        else
            cs__sb_printf(b, "%s<host id=\"n%d-%s\" speed=\"%.0ff\"/>\n", in, n, e->name,
                          e->speed);
    }
}

static void cs__xml_node_links(cs__sb_t *b, const cs__model_t *m, int n, int lanes, int ports)
{
    char id[96];
    for (int i = 0; i < m->nlinks; i++) {
        const cs__node_link_t *l = &m->link[i];
        snprintf(id, sizeof(id), "%s-n%d-%s-%s", m->tier[l->tier].name, n, m->elem[l->a].name,
                 m->elem[l->b].name);
        cs__xml_link(b, "  ", id, m->tier[l->tier].name, l->bw, l->lat);
    }
    for (int k = 0; k < m->rails; k++) {
        snprintf(id, sizeof(id), "nic-n%d-rail%d", n, k);
        cs__xml_link(b, "  ", id, m->tier[m->tier_nic].name, m->nic_bw, m->nic_lat);
        if (lanes) {
            snprintf(id, sizeof(id), "leaf-n%d-rail%d", n, k);
            cs__xml_link(b, "  ", id, m->tier[m->tier_leaf].name, m->nic_bw, m->leaf_lat);
        }
        if (ports) {
            snprintf(id, sizeof(id), "spine-n%d-rail%d", n, k);
            cs__xml_link(b, "  ", id, m->tier[m->tier_spine].name, m->nic_bw, m->spine_lat / 2);
        }
    }
}

static void cs__xml_node_routes(cs__sb_t *b, const cs__model_t *m, int n, int r, int lanes)
{
    for (int i = 0; i < m->nlinks; i++) {
        const cs__node_link_t *l = &m->link[i];
        cs__sb_printf(b,
                      "    <route src=\"n%d-%s\" dst=\"n%d-%s\"><link_ctn id=\"%s-n%d-%s-%s\" "
                      "direction=\"UP\"/></route>\n",
                      n, m->elem[l->a].name, n, m->elem[l->b].name, m->tier[l->tier].name, n,
                      m->elem[l->a].name, m->elem[l->b].name);
    }
    for (int k = 0; k < m->rails; k++) {
        const char *hca = m->elem[m->rail_el[k]].name;
        cs__sb_printf(b,
                      "    <route src=\"n%d-%s\" dst=\"r%d-leaf\"><link_ctn id=\"nic-n%d-rail%d\" "
                      "direction=\"UP\"/></route>\n",
                      n, hca, r, n, k);
        if (!lanes)
            continue;
        cs__sb_printf(b,
                      "    <route src=\"n%d-%s\" dst=\"n%d-up%d\"><link_ctn id=\"nic-n%d-rail%d\" "
                      "direction=\"UP\"/></route>\n",
                      n, hca, n, k, n, k);
        cs__sb_printf(b,
                      "    <route src=\"n%d-up%d\" dst=\"r%d-up\"><link_ctn id=\"leaf-n%d-rail%d\" "
                      "direction=\"UP\"/></route>\n",
                      n, k, r, n, k);
    }
}

static void cs__xml_rack(cs__sb_t *b, const cs__model_t *m, int r, int lanes)
{
    int first = r * m->npr, cnt = cs__model_rack_nodes(m, r);
    cs__sb_printf(b, "  <zone id=\"r%d\" routing=\"DijkstraCache\">\n", r);
    if (m->sharp)
        cs__sb_printf(b,
                      "    <prop id=\"reduce\" value=\"sharp\"/><prop id=\"reduce_switch\" "
                      "value=\"r%d-leaf\"/>\n    <host id=\"r%d-leaf\" speed=\"1f\"/>\n",
                      r, r);
    else
        cs__sb_printf(b, "    <router id=\"r%d-leaf\"/>\n", r);
    if (lanes)
        cs__sb_printf(b, "    <router id=\"r%d-up\"/>\n", r);
    for (int n = first; n < first + cnt; n++) {
        cs__xml_node(b, m, n, NULL, 0);
        for (int k = 0; lanes && k < m->rails; k++)
            cs__sb_printf(b, "    <router id=\"n%d-up%d\"/>\n", n, k);
    }
    for (int n = first; n < first + cnt; n++)
        cs__xml_node_routes(b, m, n, r, lanes);
    cs__sb_printf(b, "  </zone>\n");
}

/* The spine zone: one router spine-sw, or with SHARP a host serving every
 * host of the platform. */
static void cs__xml_spine_zone(cs__sb_t *b, const cs__model_t *m)
{
    if (m->sharp)
        cs__sb_printf(b, "  <zone id=\"spine\" routing=\"Floyd\">\n    <prop id=\"reduce\" "
                         "value=\"sharp\"/><prop id=\"reduce_switch\" value=\"spine-sw\"/>"
                         "<prop id=\"reduce_zones\" value=\"*\"/>\n    <host id=\"spine-sw\" "
                         "speed=\"1f\"/>\n  </zone>\n");
    else
        cs__sb_printf(b,
                      "  <zone id=\"spine\" routing=\"Floyd\"><router id=\"spine-sw\"/></zone>\n");
}

/* Rail zones (cs__model_rail_zones): zone nN-railK (Floyd) per node rail
 * with its part of the node and the part's own links, one-router zones rR
 * (rR-leaf) and spine (spine-sw); in the top zone (DijkstraCache, routes
 * cost their number of links) the zone routes
 *   nN-railA -> nN-railB  the one node link between the parts (gateways
 *                         its two ends), e.g. the X-Bus;
 *   nN-railK -> rR        nic-nN-railK (nN-hcaK to rR-leaf): same rack;
 *   nN-railK -> spine     nic-nN-railK, leaf-nN-railK, spine-nN-railK
 *                         (nN-hcaK to spine-sw): other racks.
 * Same rack costs 2 links against 6 through the spine, so the spine carries
 * only cross-rack traffic; a part reaches the other part of its node over
 * their link (1) rather than the leaf (2). */
static void cs__xml_rail_zones(cs__sb_t *b, const cs__model_t *m, const int *group)
{
    for (int n = 0; n < m->nodes; n++)
        for (int k = 0; k < m->rails; k++) {
            cs__sb_printf(b, "  <zone id=\"n%d-rail%d\" routing=\"Floyd\">\n", n, k);
            cs__xml_node(b, m, n, group, k);
            for (int i = 0; i < m->nlinks; i++) {
                const cs__node_link_t *l = &m->link[i];
                if (group[l->a] != k || group[l->b] != k)
                    continue;
                const char *ea = m->elem[l->a].name, *eb = m->elem[l->b].name;
                cs__sb_printf(b,
                              "    <route src=\"n%d-%s\" dst=\"n%d-%s\"><link_ctn id=\"%s-n%d-%s-%s\" "
                              "direction=\"UP\"/></route>\n",
                              n, ea, n, eb, m->tier[l->tier].name, n, ea, eb);
            }
            cs__sb_printf(b, "  </zone>\n");
        }
    for (int r = 0; r < cs__model_racks(m); r++) {
        if (!m->sharp) {
            cs__sb_printf(b,
                          "  <zone id=\"r%d\" routing=\"Floyd\"><router id=\"r%d-leaf\"/></zone>\n",
                          r, r);
            continue;
        }
        /* the leaf serves its rack's nodes, whose rail zones are siblings */
        cs__sb_printf(b,
                      "  <zone id=\"r%d\" routing=\"Floyd\">\n    <prop id=\"reduce\" "
                      "value=\"sharp\"/><prop id=\"reduce_switch\" value=\"r%d-leaf\"/>\n"
                      "    <prop id=\"reduce_zones\" value=\"",
                      r, r);
        for (int n = r * m->npr, k = 0; n < r * m->npr + cs__model_rack_nodes(m, r); n++)
            for (int q = 0; q < m->rails; q++)
                cs__sb_printf(b, "%sn%d-rail%d", k++ ? "," : "", n, q);
        cs__sb_printf(b, "\"/>\n    <host id=\"r%d-leaf\" speed=\"1f\"/>\n  </zone>\n", r);
    }
    cs__xml_spine_zone(b, m);
    for (int n = 0; n < m->nodes; n++) {
        for (int i = 0; i < m->nlinks; i++) {
            const cs__node_link_t *l = &m->link[i];
            if (group[l->a] == group[l->b])
                continue;
            const char *ea = m->elem[l->a].name, *eb = m->elem[l->b].name;
            cs__sb_printf(b,
                          "  <zoneRoute src=\"n%d-rail%d\" dst=\"n%d-rail%d\" gw_src=\"n%d-%s\" "
                          "gw_dst=\"n%d-%s\"><link_ctn id=\"%s-n%d-%s-%s\" direction=\"UP\"/>"
                          "</zoneRoute>\n",
                          n, group[l->a], n, group[l->b], n, ea, n, eb, m->tier[l->tier].name, n,
                          ea, eb);
        }
        for (int k = 0; k < m->rails; k++) {
            const char *hca = m->elem[m->rail_el[k]].name;
            cs__sb_printf(b,
                          "  <zoneRoute src=\"n%d-rail%d\" dst=\"r%d\" gw_src=\"n%d-%s\" "
                          "gw_dst=\"r%d-leaf\"><link_ctn id=\"nic-n%d-rail%d\" direction=\"UP\"/>"
                          "</zoneRoute>\n",
                          n, k, n / m->npr, n, hca, n / m->npr, n, k);
            cs__sb_printf(b,
                          "  <zoneRoute src=\"n%d-rail%d\" dst=\"spine\" gw_src=\"n%d-%s\" "
                          "gw_dst=\"spine-sw\"><link_ctn id=\"nic-n%d-rail%d\" direction=\"UP\"/>"
                          "<link_ctn id=\"leaf-n%d-rail%d\" direction=\"UP\"/><link_ctn "
                          "id=\"spine-n%d-rail%d\" direction=\"UP\"/></zoneRoute>\n",
                          n, k, n, hca, n, k, n, k, n, k);
        }
    }
}

void cs__xml_head(cs__sb_t *b, const cs__model_t *m, const char *zone_id, const char *routing,
                  const char *spec, const char *comment, const cs_platform_t *p)
{
    cs__sb_printf(b, "<?xml version='1.0'?>\n"
                     "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                     "<platform version=\"4.1\">\n");
    if (comment && *comment)
        cs__sb_printf(b, "<!--\n%s-->\n", comment);
    cs__sb_printf(b, "<zone id=\"%s\" routing=\"%s\">\n", zone_id, routing);
    cs__sb_printf(b, "  <prop id=\"collstep_spec\" value=\"%s\"/>\n", spec);
    cs__sb_printf(b, "  <prop id=\"collstep_dims\" value=\"%dx%d\"/>\n", p->dims[0], p->dims[1]);
    cs__sb_printf(b, "  <prop id=\"collstep_factors\" value=\"");
    for (int t = 0; t < m->ntiers; t++)
        cs__sb_printf(b, "%s%s:%.6g:%.6g", t ? "," : "", m->tier[t].name, m->tier[t].lat_factor,
                      m->tier[t].bw_factor);
    cs__sb_printf(b, "\"/>\n");
}

int cs__model_xml(const cs__model_t *m, const char *zone_id, const char *spec,
                  const char *comment, const cs_platform_t *p, char **xml, cs_err_t *err)
{
    if (m->is_rail)
        return cs__rail_xml(m, zone_id, spec, comment, p, xml, err);
    cs__sb_t b = {0};
    int racks = cs__model_racks(m);
    /* lanes only where there is more than one rack to reach */
    int lanes = cs__model_lanes(m) && racks > 1, shared = !cs__model_lanes(m);
    int group[CS__NODE_MAX_ELEM], rz = cs__model_rail_zones(m, group);
    cs__xml_head(&b, m, zone_id, rz ? "DijkstraCache" : "Floyd", spec, comment, p);
    cs__sb_printf(&b, "  <zone id=\"links\" routing=\"None\">\n");
    for (int n = 0; n < m->nodes; n++)
        cs__xml_node_links(&b, m, n, lanes, rz);
    char id[48];
    if (shared) {
        double total_up = 0;
        for (int r = 0; r < racks; r++) {
            double up = cs__model_uplink_bw(m, r);
            total_up += up;
            snprintf(id, sizeof(id), "leaf-r%d", r);
            cs__xml_link(&b, "  ", id, m->tier[m->tier_leaf].name, up, m->leaf_lat);
        }
        cs__xml_link(&b, "  ", "spine-core", m->tier[m->tier_spine].name, total_up, m->spine_lat);
    }
    for (int a = 0; lanes && !rz && a < racks; a++)
        for (int c = a + 1; c < racks; c++) {
            snprintf(id, sizeof(id), "spine-r%d-r%d", a, c);
            cs__xml_link(&b, "  ", id, m->tier[m->tier_spine].name, cs__model_pair_bw(m, a, c),
                         m->spine_lat);
        }
    cs__sb_printf(&b, "  </zone>\n");
    if (shared)
        cs__xml_spine_zone(&b, m);
    if (rz)
        cs__xml_rail_zones(&b, m, group);
    for (int r = 0; !rz && r < racks; r++)
        cs__xml_rack(&b, m, r, lanes);
    for (int a = 0; lanes && !rz && a < racks; a++)
        for (int c = a + 1; c < racks; c++)
            cs__sb_printf(&b,
                          "  <zoneRoute src=\"r%d\" dst=\"r%d\" gw_src=\"r%d-up\" gw_dst=\"r%d-up\">"
                          "<link_ctn id=\"spine-r%d-r%d\" direction=\"UP\"/></zoneRoute>\n",
                          a, c, a, c, a, c);
    for (int r = 0; shared && r < racks; r++) {
        cs__sb_printf(&b,
                      "  <zoneRoute src=\"r%d\" dst=\"spine\" gw_src=\"r%d-leaf\" "
                      "gw_dst=\"spine-sw\" symmetrical=\"NO\"><link_ctn id=\"leaf-r%d\" "
                      "direction=\"UP\"/><link_ctn id=\"spine-core\" direction=\"UP\"/>"
                      "</zoneRoute>\n",
                      r, r, r);
        cs__sb_printf(&b,
                      "  <zoneRoute src=\"spine\" dst=\"r%d\" gw_src=\"spine-sw\" "
                      "gw_dst=\"r%d-leaf\" symmetrical=\"NO\"><link_ctn id=\"leaf-r%d\" "
                      "direction=\"DOWN\"/></zoneRoute>\n",
                      r, r, r);
    }
    cs__sb_printf(&b, "</zone>\n</platform>\n");
    if (b.failed) {
        free(b.s);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory writing the platform XML");
    }
    *xml = b.s;
    return CS_OK;
}
