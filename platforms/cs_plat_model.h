/*
 * cs_plat_model.h - internal: the fabric model every preset is built from.
 *
 * A preset is one node template repeated `nodes` times, grouped into racks
 * of `npr` nodes behind one leaf switch.  The same model produces (1) the
 * SimGrid XML (cs__model_xml), (2) the tiers table (cs__model_summary) and
 * (3) the igraph graph (cs__model_graph in cs_plat_topo.c), so the three
 * always agree.
 *
 * Node template: elements 0..nelem-1 are hosts (GPU devices or CPUs) or
 * routers (PCIe switches, the adapter ports).  Rail s of the node's NIC
 * starts at router element rail_el[s] ("hca0", "hca1", ...), which the
 * preset joins by PCIe to the socket / PCIe switch that rail hangs off, so
 * a GPU's traffic leaves on its own socket's rail.  Internal links join two
 * elements and each is one route hop (shortest hop paths inside a rack).
 *
 * Fabric, per node and rail K: link nic-nN-railK (tier nic, nic_bw, one
 * rail's line rate) from hcaK to the rack's leaf switch.  Two fabrics:
 *   lanes (oversub == 1, non-blocking fat tree): every node rail also has
 *     its own leaf uplink lane leaf-nN-railK (tier leaf, nic_bw), used only
 *     by inter-rack traffic of that rail, and its own spine port
 *     spine-nN-railK (tier spine, nic_bw, spine_lat / 2).  Cross-rack
 *     route: ...node links, nic, leaf, spine, spine, leaf, nic, node
 *     links...  Flows share links only at their endpoints (rails, PCIe,
 *     NVLink); the lanes and ports, in series with a rail of the same
 *     rate, never limit.  Nodes that do not split into one part per rail
 *     (DGX-1) keep one spine link spine-rA-rB per pair of racks A < B,
 *     sized min(nodes of A, nodes of B) x rails x nic_bw (never limits);
 *     see cs__model_rail_zones for why the per-rail form is preferred.
 *   shared (oversub > 1): rack uplink leaf-rR of rack_nodes x rails x
 *     nic_bw / oversub shared by the rack, and one spine core spine-core
 *     (sum of the uplinks, never limits).  Same tiers on a cross-rack route.
 * Same rack, both fabrics: nic, nic.
 *
 * All bandwidths are bytes/s per direction; latencies are seconds.
 */
#ifndef CS_PLAT_MODEL_H
#define CS_PLAT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "cs_params.h"
#include "cs_platform.h"

#define CS__NODE_MAX_ELEM 24
#define CS__NODE_MAX_LINKS 48
#define CS__MAX_RAILS 16

enum { CS__EL_GPU = 0, CS__EL_CPU, CS__EL_ROUTER };

typedef struct cs__node_elem {
    char name[12]; /* g0, cpu0, sw0, hca */
    int kind;      /* CS__EL_* */
    double speed;  /* hosts: flop/s (GPU: reduce bandwidth in bytes/s) */
} cs__node_elem_t;

typedef struct cs__node_link {
    int a, b;      /* element indices */
    int tier;      /* index into cs__model_t.tier */
    double bw, lat;
} cs__node_link_t;

typedef struct cs__tier_def {
    char name[16];
    double lat_factor, bw_factor;
} cs__tier_def_t;

/* Rail-optimized GPU fabric (cs_plat_rail.c): `domains` NVLink / xGMI
 * domains (nodes, or NVL72 racks) of `hpd` hosts (compute trays) of `gph`
 * GPUs; GPU k of a host has its own NIC (rail k) on leaf k of its scalable
 * unit (SU, `su` domains), spines above.  Intra-domain: each GPU's link
 * bundle to the domain's switch (mesh 0) or one link per GPU pair (mesh 1). */
typedef struct cs__rail {
    int domains, hpd, gph, su;
    int mesh;
    int nvls;            /* the domain's switch reduces (NVLS) */
    char host_fmt;       /* 'n': hosts nN (hpd 1); 'r': hosts rR-tT (rack R, tray T) */
    int tier_intra, tier_pcie;
    double intra_bw, intra_lat, pcie_bw, pcie_lat, reduce_bw;
} cs__rail_t;

typedef struct cs__model {
    /* rail-optimized GPU fabric instead of the node template (cs_plat_rail.c) */
    int is_rail;
    cs__rail_t rail;
    /* node template */
    int nelem, ngpus;
    int rails, rail_el[CS__MAX_RAILS]; /* rail s starts at element rail_el[s] */
    cs__node_elem_t elem[CS__NODE_MAX_ELEM];
    int nlinks;
    cs__node_link_t link[CS__NODE_MAX_LINKS];
    /* fabric */
    int nodes, npr; /* nodes, nodes per rack (last rack may be partial) */
    int tier_nic, tier_leaf, tier_spine;
    double nic_bw, nic_lat, leaf_lat, spine_lat, oversub; /* nic_bw: per rail */
    int sharp; /* 1: the leaf and spine switches reduce (SHARP): cs__model_xml writes them as
                  hosts with reduce properties on their zones */
    /* tiers (names and calibrated factors) */
    int ntiers;
    cs__tier_def_t tier[CS_PLAT_MAX_TIERS];
} cs__model_t;

/* Add a tier (or find it by name); returns its index or -1 when full. */
int cs__model_tier(cs__model_t *m, const char *name, double lat_factor, double bw_factor);
/* Add a node element / internal link; return the index, -1 when full. */
int cs__model_elem(cs__model_t *m, const char *name, int kind, double speed);
int cs__model_link(cs__model_t *m, int a, int b, int tier, double bw, double lat);

static inline int cs__model_racks(const cs__model_t *m)
{
    return (m->nodes + m->npr - 1) / m->npr;
}
/* Non-blocking fabric: dedicated lanes (see above). */
static inline int cs__model_lanes(const cs__model_t *m)
{
    return m->oversub == 1.0;
}
/* Nodes in rack r. */
static inline int cs__model_rack_nodes(const cs__model_t *m, int r)
{
    int left = m->nodes - r * m->npr;
    return left < m->npr ? left : m->npr;
}

/* Shared fabric: uplink of rack r.  Lanes: spine link of racks a and b. */
static inline double cs__model_uplink_bw(const cs__model_t *m, int r)
{
    return cs__model_rack_nodes(m, r) * m->rails * m->nic_bw / m->oversub;
}
static inline double cs__model_pair_bw(const cs__model_t *m, int a, int b)
{
    int na = cs__model_rack_nodes(m, a), nb = cs__model_rack_nodes(m, b);
    return (na < nb ? na : nb) * m->rails * m->nic_bw;
}

/* Rail zones (see cs_plat_model.c): for a non-blocking fabric of several
 * racks whose node splits into one part per rail, fills group[e] (rail of
 * node element e, for CS__NODE_MAX_ELEM entries) and returns 1; returns 0
 * where the rack-zone layout with one spine link per rack pair is used.
 * With rail zones the spine tier is one link spine-nN-railK per node rail
 * (nic_bw, latency spine_lat / 2, crossed twice by a cross-rack route). */
int cs__model_rail_zones(const cs__model_t *m, int *group);

/* Fill p->tiers / ntiers / ndevices / dims {ngpus, nodes} from the model. */
void cs__model_summary(const cs__model_t *m, cs_platform_t *p);
/* The SimGrid XML of the model; *xml is malloc'ed.  `comment` goes into an
 * XML comment (must not contain "--"), `spec` into the collstep_spec prop. */
int cs__model_xml(const cs__model_t *m, const char *zone_id, const char *spec,
                  const char *comment, const cs_platform_t *p, char **xml, cs_err_t *err);

/* Rail-optimized fabrics (cs_plat_rail.c, cs_plat_rtopo.c): the same three
 * views of a cs__rail_t model. */
void cs__rail_summary(const cs__model_t *m, cs_platform_t *p);
int cs__rail_xml(const cs__model_t *m, const char *zone_id, const char *spec, const char *comment,
                 const cs_platform_t *p, char **xml, cs_err_t *err);
int cs__rail_topo(const cs__model_t *m, cs_topo_figures_t *fig, cs_err_t *err);
/* Host h of domain d ("n3", "r1-t17"); the rank hosts of the model (node by
 * node, g0 first). */
void cs__rail_host(const cs__model_t *m, int d, int h, char *buf, size_t len);
int cs__rail_rank_hosts(const cs__model_t *m, cs_platform_t *p, cs_err_t *err);

/* XML text builder shared by the writers: grows, or sets failed. */
typedef struct cs__sb {
    char *s;
    size_t len, cap;
    int failed;
} cs__sb_t;
void cs__sb_printf(cs__sb_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* <link> with its tier property, SPLITDUPLEX. */
void cs__xml_link(cs__sb_t *b, const char *indent, const char *id, const char *tier, double bw,
                  double lat);
/* The XML declaration, the comment and the opening of the top zone with
 * collstep's properties (spec, dims, factors). */
void cs__xml_head(cs__sb_t *b, const cs__model_t *m, const char *zone_id, const char *routing,
                  const char *spec, const char *comment, const cs_platform_t *p);

/* A preset's parameters while it is built (cs_plat_presets.c), and the
 * readers of one parameter: an integer in [lo, hi], a bandwidth (is_bw;
 * "50GBps", "400Gbps", a bare number is GB/s) or a latency ("300ns", a bare
 * number is us), a number in [lo, hi]; def when absent.  Errors name the
 * preset, the parameter and what was found. */
typedef struct cs__pctx {
    cs_params_t pp;
    const char *preset;
    cs_err_t *err;
} cs__pctx_t;
int cs__get_int(cs__pctx_t *c, const char *key, long def, long lo, long hi, long *out);
int cs__get_unit(cs__pctx_t *c, const char *key, double def, int is_bw, double *out);
int cs__get_double(cs__pctx_t *c, const char *key, double def, double lo, double hi, double *out);

/* The rail-optimized presets (cs_plat_gpus.c). */
int cs__build_hgx_h100(cs__pctx_t *c, cs__model_t *m);
int cs__build_hgx_h200(cs__pctx_t *c, cs__model_t *m);
int cs__build_nvl72(cs__pctx_t *c, cs__model_t *m);
int cs__build_mi300x(cs__pctx_t *c, cs__model_t *m);

/* Presets (cs_plat_presets.c): build the model of "name" with params text
 * ("k=v,..." or ""); also returns the description (malloc'ed). */
int cs__preset_find(const char *name);
int cs__preset_build(int idx, const char *params, cs__model_t *m, char **description,
                     cs_err_t *err);

/* Units: "12.5GBps" etc.  Return 0 on success. */
int cs__parse_bandwidth(const char *s, double *out);
int cs__parse_latency(const char *s, double *out);

/* The model behind a preset (CS_ERR_INVAL for a file: files are analysed
 * from the routes SimGrid computes, cs_plat_sg.cpp). */
int cs__platform_model(const cs_platform_t *p, cs__model_t *m, cs_err_t *err);

#endif /* CS_PLAT_MODEL_H */
