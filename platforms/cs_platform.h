/*
 * cs_platform.h - platforms: named, parameterised presets of the seed
 * systems' fabrics, and SimGrid XML files with tier-tagged links.
 *
 * A platform is handed to the simulator as SimGrid XML text (platform
 * version 4.1) in which:
 *   - every <link> carries <prop id="tier" value="nvlink|nvlink-host|pcie|
 *     xbus|nic|leaf|spine|..."/> and is split-duplex
 *     (sharing_policy="SPLITDUPLEX") so each direction has its own bandwidth;
 *   - every host that is a device a rank can run on (a GPU) carries
 *     <prop id="device" value="gpu"/>, and a reduction bandwidth in bytes/s
 *     as its speed (1 flop = 1 byte reduced): a reduction of B bytes costs
 *     B / speed seconds on that device;
 *   - hosts that are not devices (CPUs, NICs as hosts) have no device prop;
 *   - zones follow SimGrid's rule (a zone holds sub-zones or hosts/routers,
 *     never both; switches are wrapped in one-router zones).
 * Devices are ranked in document order of their <host> elements.
 *
 * Parameters: "NAME:key=value,key=value" (e.g. "summit:nodes=16").
 */
#ifndef CS_PLATFORM_H
#define CS_PLATFORM_H

#include <stdint.h>
#include <stdio.h>

#include "cs_status.h"

#define CS_PLAT_MAX_TIERS 16
#define CS_PLAT_MAX_DIMS 4

typedef struct cs_tier_info {
    char name[16];         /* nvlink, nvlink-host, pcie, xbus, nic, leaf, spine, ... */
    uint64_t nlinks;       /* links of this tier (a split-duplex link counts once) */
    double bandwidth;      /* bytes/s per direction (the most common value in the tier) */
    double latency;        /* seconds */
    /* `calibrated` network model: SimGrid's latency and bandwidth are
     * multiplied by these for links of this tier (1.0 in `ideal`). */
    double lat_factor, bw_factor;
} cs_tier_info_t;

typedef struct cs_platform {
    char name[64];        /* preset name, or the XML file's path */
    char spec[256];       /* the full spec it was opened with */
    char *xml;            /* SimGrid XML text (owned) */
    uint64_t ndevices;    /* devices = maximum number of ranks */
    /* Natural hierarchy for the `hier` allreduce, innermost first, product
     * == ndevices (summit nodes=256: {6, 256}); ndims 0 when unknown. */
    int ndims;
    int dims[CS_PLAT_MAX_DIMS];
    int ntiers;
    cs_tier_info_t tiers[CS_PLAT_MAX_TIERS];
    char *description; /* multi-line human description: ASCII node picture, numbers and sources (owned) */
} cs_platform_t;

/* Open a preset ("summit", "summit:nodes=16") or a SimGrid XML file (any
 * spec ending in .xml or naming an existing file).  Errors name the unknown
 * preset/parameter, or file:line:column for malformed XML and links without
 * a tier.  Returns CS_OK and *out, or a negative status with err. */
int cs_platform_open(const char *spec, cs_platform_t **out, cs_err_t *err);
void cs_platform_close(cs_platform_t *p);

/* Presets, for `collstep platform list`. */
int cs_platform_preset_count(void);
const char *cs_platform_preset_name(int i);
const char *cs_platform_preset_summary(int i); /* one line */
const char *cs_platform_preset_params(int i);  /* "nodes=256 racks=... " with defaults */

/* Write p->xml to path whole or not at all (temporary file, then rename). */
int cs_platform_export(const cs_platform_t *p, const char *path, cs_err_t *err);

/* Topology figures from an igraph graph of the platform (devices, hosts,
 * routers as vertices, links as edges weighted by bandwidth). */
typedef struct cs_topo_figures {
    uint64_t nvertices, nedges;
    int diameter_hops;          /* between devices */
    double bisection_bw;        /* bytes/s: max-flow between the two halves of the devices */
} cs_topo_figures_t;
int cs_platform_topology(const cs_platform_t *p, cs_topo_figures_t *fig, cs_err_t *err);

/* `collstep platform show`: tiers table, node picture, figures. */
int cs_platform_print(const cs_platform_t *p, FILE *f, cs_err_t *err);

#endif /* CS_PLATFORM_H */
