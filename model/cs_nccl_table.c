/*
 * cs_nccl_table.c - NCCL's cost-model constants, one entry per NCCL
 * version, with the names and parsers of its algorithms and protocols.
 *
 * Every number is NCCL's own (src/graph/tuning.cc and src/graph/topo.h at
 * the tag in `source`), copied as a fact with its meaning; docs/nccl-model.md
 * lists them with their roles.  Rows of the per-architecture tables: Volta,
 * Ampere, Hopper, Blackwell; columns: 1 node, 2 nodes, more.  Versions
 * before Blackwell had no Blackwell row: NCCL then used the Hopper row for
 * every compute capability >= 90, and so does the entry here.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cs_nccl.h"

static const char *const algo_names[CS_NCCL_NLABELS] = {
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT", "P2P"};
static const char *const proto_names[CS_NCCL_NPROTOS] = {"LL", "LL128", "Simple"};

const char *cs_nccl_algo_name(int a)
{
    return a >= 0 && a < CS_NCCL_NLABELS ? algo_names[a] : "?";
}

const char *cs_nccl_proto_name(int p)
{
    return p >= 0 && p < CS_NCCL_NPROTOS ? proto_names[p] : "?";
}

int cs_nccl_algo_parse(const char *s)
{
    for (int a = 0; s && a < CS_NCCL_NALGOS; a++)
        if (strcasecmp(s, algo_names[a]) == 0)
            return a;
    if (s && (strcasecmp(s, "collnet") == 0))
        return CS_NCCL_COLLNET_DIRECT;
    return -1;
}

int cs_nccl_label_parse(const char *s)
{
    if (s && strcasecmp(s, algo_names[CS_NCCL_P2P]) == 0)
        return CS_NCCL_P2P;
    return cs_nccl_algo_parse(s);
}

int cs_nccl_proto_parse(const char *s)
{
    for (int p = 0; s && p < CS_NCCL_NPROTOS; p++)
        if (strcasecmp(s, proto_names[p]) == 0)
            return p;
    return -1;
}

/* Ring's, Tree's and NVLS's hardware latencies (us) per step, by route
 * class.  The layout is NCCL's hwLat[NVLINK|PCI|NET][algorithm][protocol]. */
#define HW_LAT_2_20(nvls)                                                                        \
    {{{.6f, 1.25f, 28}, {.6f, 1.9f, 3.4f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, nvls}, {0, 0, nvls}, \
      {0, 0, 0}},                                                                                \
     {{1.0f, 1.9f, 28}, {1.0f, 2.5f, 5.7f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 0}, {0, 0, 0},    \
      {0, 0, 0}},                                                                                \
     {{5.0f, 8.5f, 28}, {2.7f, 4.0f, 14.0f}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 14},     \
      {0, 0, 0}}}
#define HW_LAT_2_25(nvlstree_net, pat_nvl, pat_net)                                              \
    {{{.6f, 1.25f, 4.0f}, {.6f, 1.9f, 3.4f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 25}, {0, 0, 25}, \
      {0, 0, pat_nvl}},                                                                          \
     {{1.0f, 1.9f, 4.0f}, {1.0f, 2.5f, 5.7f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 0}, {0, 0, 0},  \
      {0, 0, pat_nvl}},                                                                          \
     {{5.0f, 8.5f, 14}, {2.7f, 4.0f, 14.0f}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18},                 \
      {0, 0, nvlstree_net}, {0, 0, pat_net}}}

/* 2.25.1 and 2.26.2 have the same constants (2.26.2 differs in enqueue.cc's
 * channel split only: cs_nccl_tune.c tests the version there). */
#define NCCL_2_25_2_26                                                                           \
    .base_lat = {{6.8f, 14.0f, 8.4f}, {6.6f, 14.0f, 8.4f}, {0}, {0}, {0}, {0}, {8, 8, 8}},          \
    .hw_lat = HW_LAT_2_25(14, 0, 0),                                                             \
    .ll_max_bw = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0},                   \
                  {282.0, 90.0, 70.0}},                                                          \
    .ring_ll128_bw = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {73.4, 73.4, 73.4}},       \
    .tree_ll128_bw = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {73.4, 73.4, 58.0}},       \
    .tree_bw = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {77.4, 82.8, 72.0}}, \
    .ring_ll_factor = 0.5f, .ring_ll_factor_1 = 0.5f, .ll128_ppn1 = 0.92f, .nvls_model = 0,      \
    .inter_steps_v2 = 1, .nvlink_bw = {20.0, 20.0, 20.6, 40.0}, .pci_bw = 12.0, .pat_factor = .75f

/* The per-channel caps before 2.25, the same in 2.20 to 2.24: no
 * Blackwell row, which takes Hopper's. */
#define CAPS_BEFORE_2_25                                                                         \
    .ring_ll128_bw = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {36.7, 36.7, 36.7}},       \
    .tree_ll128_bw = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {36.7, 36.7, 29.0}},       \
    .tree_bw = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {38.7, 41.4, 36.0}}

static const cs_nccl_consts_t table[] = {
    {
        .version = "2.20.5", .lib = "NCCL", .major = 2, .minor = 20, .patch = 5,
        .base_lat = {{6.8f, 14.0f, 0}, {6.6f, 14.0f, 8.4f}},
        .hw_lat = HW_LAT_2_20(23),
        .ll_max_bw = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}},
        CAPS_BEFORE_2_25,
        .ring_ll_factor = 0.25f, .ring_ll_factor_1 = 1.0f / 3.0f,
        .ll128_ppn1 = 0.7f, .nvls_model = 0, .inter_steps_v2 = 0,
        .nvlink_bw = {20.0, 20.0, 20.6, 20.6},
        .pci_bw = 12.0,
        .source = "NCCL v2.20.5-1: src/graph/tuning.cc, src/graph/topo.h",
    },
    {
        /* 2.21.5 (serving 2.21 and 2.22, whose tuning.cc differs from it in
         * form only): 2.20's latencies and refinements but NVLS's 25 us,
         * Hopper's LL limits of 141 / 45 / 35 and Ring LL at x 1/2; NVLS
         * across nodes and on multi-node NVLink domains of at most 32 GPUs
         * (its arity), NVLSTree's chunk from NCCL_NVLS_CHUNKSIZE; no PAT,
         * no split of channels by traffic (512 bytes each in 2.22) */
        .version = "2.21.5", .lib = "NCCL", .major = 2, .minor = 21, .patch = 5,
        .base_lat = {{6.8f, 14.0f, 0}, {6.6f, 14.0f, 8.4f}},
        .hw_lat = HW_LAT_2_20(25),
        .ll_max_bw = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {141.0, 45.0, 35.0}},
        CAPS_BEFORE_2_25,
        .ring_ll_factor = 0.5f, .ring_ll_factor_1 = 0.5f,
        .ll128_ppn1 = 0.7f, .nvls_model = 0, .inter_steps_v2 = 0,
        .nvlink_bw = {20.0, 20.0, 20.6, 20.6},
        .pci_bw = 12.0,
        .source = "NCCL v2.21.5-1: src/graph/tuning.cc, src/graph/topo.h, src/transport/nvls.cc",
    },
    {
        /* 2.23.4 (serving 2.23 and 2.24): NVLS across nodes and on
         * multi-node NVLink domains of at most 32 GPUs (its arity), as from
         * 2.21; 2.25's latencies and refinements on
         * Hopper's rows (no Blackwell row yet), NVLS and NVLSTree at
         * min(intra, inter) x 5/6, PAT's factor .85, 32 channels at most,
         * channels split by traffic (16 KiB each at least) */
        .version = "2.23.4", .lib = "NCCL", .major = 2, .minor = 23, .patch = 4,
        .base_lat = {{6.8f, 14.0f, 8.4f}, {6.6f, 14.0f, 8.4f}, {0}, {0}, {0}, {0}, {8, 8, 8}},
        .hw_lat = HW_LAT_2_25(14, 0, 0),
        .ll_max_bw = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {141.0, 45.0, 35.0}},
        CAPS_BEFORE_2_25,
        .ring_ll_factor = 0.5f, .ring_ll_factor_1 = 0.5f,
        .ll128_ppn1 = 0.92f, .nvls_model = 0, .inter_steps_v2 = 1,
        .nvlink_bw = {20.0, 20.0, 20.6, 20.6},
        .pci_bw = 12.0, .pat_factor = .85f,
        .source = "NCCL v2.23.4-1: src/graph/tuning.cc, src/graph/topo.h, src/transport/nvls.cc",
    },
    {
        .version = "2.25.1", .lib = "NCCL", .major = 2, .minor = 25, .patch = 1,
        NCCL_2_25_2_26,
        .source = "NCCL v2.25.1-1: src/graph/tuning.cc, src/graph/topo.h",
    },
    {
        .version = "2.26.2", .lib = "NCCL", .major = 2, .minor = 26, .patch = 2,
        NCCL_2_25_2_26,
        .source = "NCCL v2.26.2-1: src/graph/tuning.cc, src/graph/topo.h",
    },
    {
        .version = "2.29.7", .lib = "NCCL", .major = 2, .minor = 29, .patch = 7,
        .base_lat = {{6.8f, 14.0f, 8.4f}, {6.6f, 14.0f, 8.4f}, {0}, {0}, {0}, {0}, {8.0f, 8.0f, 8.0f}},
        .hw_lat = HW_LAT_2_25(20.9f, 4.0f, 14.0f),
        .ll_max_bw = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}},
        .ring_ll128_bw = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}},
        .tree_ll128_bw = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
        .tree_bw = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}},
        .nvls_tree_bw = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 43.8}},
        .nvls_eff = {0, 0, 0.85f, 0.74f},
        .ring_ll_factor = 0.5f, .ring_ll_factor_1 = 0.5f,
        .ll128_ppn1 = 0.92f, .nvls_model = 1, .inter_steps_v2 = 1,
        .nvlink_bw = {20.0, 20.0, 20.6, 40.1},
        .pci_bw = 12.0, .pat_factor = .75f,
        .source = "NCCL v2.29.7-1: src/graph/tuning.cc, src/graph/topo.h",
    },
};
#define NTABLE ((int)(sizeof(table) / sizeof(table[0])))

/* RCCL's table for MI300X (gfx942, its `tuning=5` model of 8 GPUs per node),
 * RCCL 2.21.5 of ROCm 6.3.0 (src/graph/tuning.cc, topo.h, rome_models.cc):
 * one base latency for every algorithm, xGMI in NVLink's row, a ratio per
 * algorithm and protocol in place of NCCL's bandwidth refinements, LL128
 * off. */
static const cs_nccl_consts_t rccl_table[] = {
    {
        .version = "2.21.5", .lib = "RCCL", .major = 2, .minor = 21, .patch = 5,
        .base_lat = {{12, 12, 17}, {12, 12, 17}, {12, 12, 17}, {12, 12, 17}, {12, 12, 17},
                     {12, 12, 17}, {12, 12, 17}},
        .hw_lat = {{{0.9f, 0, 2.3f}, {0.8f, 0, 2.1f}},
                   {{2.2f, 2.2f, 5.7f}, {2.2f, 2.2f, 5.7f}},
                   {{10.5f, 0, 25}, {9.5f, 0, 320}}},
        .ll_max_bw = {{1e9, 1e9, 1e9}, {1e9, 1e9, 1e9}, {1e9, 1e9, 1e9}, {1e9, 1e9, 1e9}},
        .rccl = 1,
        .ratio = {{{0.06f, 0, 0.11f}, {0.08f, 0, 1.0f}}, {{0.06f, 0, 0.59f}, {0.08f, 0, 1.0f}}},
        .ring_ll_factor = 1, .ring_ll_factor_1 = 1, .ll128_ppn1 = 1,
        .nvlink_bw = {48, 48, 48, 48},
        .pci_bw = 12.0,
        .source = "RCCL 2.21.5 (ROCm 6.3.0): src/graph/tuning.cc, topo.h, rome_models.cc",
    },
};

int cs_nccl_nversions(void)
{
    return NTABLE;
}

const cs_nccl_consts_t *cs_nccl_version_at(int i)
{
    return i >= 0 && i < NTABLE ? &table[i] : NULL;
}

/* "2", "2.26", "2.26.2", "2.26.2-1", "v2.26.2-1": -1 when it does not parse */
static long version_key(const char *s, int *parts)
{
    long v[3] = {0, 0, 0};
    int n = 0;
    if (*s == 'v' || *s == 'V')
        s++;
    while (n < 3 && isdigit((unsigned char)*s)) {
        char *end;
        v[n++] = strtol(s, &end, 10);
        s = end;
        if (*s != '.')
            break;
        s++;
    }
    if (n == 0 || (*s && *s != '-' && *s != '+'))
        return -1;
    *parts = n;
    return v[0] * 1000000 + v[1] * 1000 + v[2];
}

const cs_nccl_consts_t *cs_nccl_consts_for(const char *version, int rccl, int *exact)
{
    int dummy, parts = 3;
    if (!exact)
        exact = &dummy;
    *exact = 0;
    if (rccl) {
        /* one RCCL table so far: it serves every version */
        if (version && *version && strcmp(version, "default") != 0) {
            long want = version_key(version, &parts);
            if (want < 0)
                return NULL;
            long have = rccl_table[0].major * 1000000L + rccl_table[0].minor * 1000L +
                        rccl_table[0].patch;
            *exact = (parts == 1 ? have / 1000000 * 1000000
                      : parts == 2 ? have / 1000 * 1000 : have) == want;
        } else {
            *exact = 1;
        }
        return &rccl_table[0];
    }
    if (!version || !*version || strcmp(version, "default") == 0) {
        *exact = 1;
        return &table[NTABLE - 1];
    }
    long want = version_key(version, &parts);
    if (want < 0)
        return NULL;
    const cs_nccl_consts_t *best = NULL;
    for (int i = 0; i < NTABLE; i++) {
        long have = table[i].major * 1000000L + table[i].minor * 1000L + table[i].patch;
        long cut = parts == 1 ? have / 1000000 * 1000000 : parts == 2 ? have / 1000 * 1000 : have;
        if (cut == want)
            *exact = 1;
        /* a release of the same major.minor serves every patch of it
         * (patches do not change the tuner's constants) */
        int same_minor = parts == 3 && have / 1000 == want / 1000;
        if (have <= want || cut == want || same_minor)
            best = &table[i];
    }
    return best ? best : &table[0];
}
