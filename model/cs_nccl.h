/*
 * cs_nccl.h - how NCCL runs on a platform: its cost model's constants by
 * NCCL version, the system its tuner sees on a collstep platform, its
 * choice of algorithm, protocol and channels per collective and size, and
 * what each step of a simulated schedule pays under `--model nccl`.
 *
 * Sources: NCCL's src/graph/tuning.cc, topo.h, search.cc and enqueue.cc at
 * the tags the table names (docs/nccl-model.md says which figure comes from
 * where); RCCL's for AMD GPUs.  No constant here is fitted to measurements.
 *
 * Units follow NCCL's: latencies in microseconds, bandwidths in GB/s
 * (1e9 bytes/s), time = latency + bytes / (1000 * bandwidth) us.
 */
#ifndef CS_NCCL_H
#define CS_NCCL_H

#include <stdint.h>

#include "cs_platform.h"
#include "cs_sched.h"
#include "cs_sim.h"
#include "cs_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* NCCL's algorithms and protocols, in NCCL's order. */
typedef enum {
    CS_NCCL_TREE = 0,
    CS_NCCL_RING,
    CS_NCCL_COLLNET_DIRECT,
    CS_NCCL_COLLNET_CHAIN,
    CS_NCCL_NVLS,
    CS_NCCL_NVLS_TREE,
    CS_NCCL_PAT,
    CS_NCCL_NALGOS
} cs_nccl_algo_t;
typedef enum { CS_NCCL_LL = 0, CS_NCCL_LL128, CS_NCCL_SIMPLE, CS_NCCL_NPROTOS } cs_nccl_proto_t;

/* NCCL's send/receive path ("P2P"), as it runs all-to-all: a group of sends
 * and receives outside its tuner, so no algorithm of NCCL's tables.  A label
 * beside them, with its own fitted factors (cs_nccl_fit_t); its steps pay
 * Ring's costs with Simple (cs_nccl_step_costs).  Arrays indexed by label are
 * CS_NCCL_NLABELS long. */
#define CS_NCCL_P2P CS_NCCL_NALGOS
#define CS_NCCL_NLABELS (CS_NCCL_NALGOS + 1)

/* GPU generations of NCCL's per-architecture tables. */
enum { CS_NCCL_VOLTA = 0, CS_NCCL_AMPERE, CS_NCCL_HOPPER, CS_NCCL_BLACKWELL, CS_NCCL_NARCH };

/* "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree",
 * "PAT" (and "P2P" for CS_NCCL_P2P) / "LL", "LL128", "Simple" (NCCL's
 * names); parse is case-blind and returns -1 when unknown: algo_parse
 * knows NCCL's algorithms only (what NCCL_ALGO names), label_parse P2P too. */
const char *cs_nccl_algo_name(int a);
const char *cs_nccl_proto_name(int p);
int cs_nccl_algo_parse(const char *s);
int cs_nccl_label_parse(const char *s);
int cs_nccl_proto_parse(const char *s);

/* One NCCL version's constants (tuning.cc).  Rows of the [arch][3] tables:
 * columns 1 node, 2 nodes, more (NCCL's index2). */
typedef struct cs_nccl_consts {
    const char *version;   /* "2.20.5" */
    const char *lib;       /* "NCCL" or "RCCL" */
    int major, minor, patch;
    float base_lat[CS_NCCL_NALGOS][CS_NCCL_NPROTOS];
    float hw_lat[CS_SIM_HW_COUNT][CS_NCCL_NALGOS][CS_NCCL_NPROTOS];
    double ll_max_bw[CS_NCCL_NARCH][3];
    double ring_ll128_bw[CS_NCCL_NARCH][3];  /* per channel */
    double tree_ll128_bw[CS_NCCL_NARCH][3];  /* per channel */
    double tree_bw[CS_NCCL_NARCH][3];        /* per channel */
    double nvls_tree_bw[CS_NCCL_NARCH][3];   /* per channel, 0: none */
    float nvls_eff[CS_NCCL_NARCH];           /* 0: NVLS bandwidth not scaled */
    float ring_ll_factor;   /* Ring LL bandwidth factor (allreduce, reduce, multi-node) */
    float ring_ll_factor_1; /* ... other collectives on one node */
    float ll128_ppn1;       /* Ring LL128 factor with one rank per node (0.92 otherwise) */
    int nvls_model;         /* 0: NVLS bw = min(intra, inter), alg = bus * 5/6;
                               1: intra * nvls_eff * (nch-1)/nch (x2 for allreduce), ring ratio */
    int inter_steps_v2;     /* ring network steps: 0: 2 nNodes (allreduce); 1: 2 (nNodes - 1),
                               and ppn 1 takes Tree's network latency */
    int rccl;               /* RCCL: ratio[] in place of NCCL's bandwidth refinements */
    float ratio[2][2][CS_NCCL_NPROTOS]; /* [more than 2 nodes][Tree, Ring][protocol] */
    double nvlink_bw[CS_NCCL_NARCH]; /* GB/s NCCL counts per NVLink link (topo.h) */
    double pci_bw;          /* GB/s of a PCIe Gen3 x16 link in topo.h (scaled by width/gen) */
    float pat_factor;       /* PAT's bus bandwidth factor (.85 in 2.23, .75 from 2.25; 0: no PAT) */
    const char *source;     /* where the numbers are: tag and files */
} cs_nccl_consts_t;

/* Versions in the table, oldest first. */
int cs_nccl_nversions(void);
const cs_nccl_consts_t *cs_nccl_version_at(int i);
/* The table's entry for `version` ("2.26.2", "2.26", "2.26.2-1"; NULL or
 * "" or "default": the newest NCCL), or the nearest one it has (one of
 * the same major.minor, else the closest earlier version, else the
 * oldest); `rccl`: RCCL's table instead.
 * *exact = 1 when it matched.  NULL when `version` does not parse. */
const cs_nccl_consts_t *cs_nccl_consts_for(const char *version, int rccl, int *exact);

/* Terms fitted to measurements (`collstep calibrate --from-nccl-tests`),
 * carried by a platform file as its top zone's property collstep_nccl_fit:
 * factors on what NCCL's model charges, per route class (nvlink, pci, net:
 * CS_SIM_HW_*), class-wide and refined for one algorithm and protocol.
 *   bw    the rate of the class's messages (links and channel caps; for
 *         nvlink also an NVLS switch's rate, for net a CollNet switch's)
 *   lat   the per-step latency of the class (for the class inside a node
 *         also the per-collective base latency where no base factor is
 *         given; for nvlink NVLS's per operation latency and its latency
 *         once, which is its switch's)
 *   base  NCCL's per-collective base latency (baseLat): for the class
 *         inside a node its factor (not given: the lat factor's); for net
 *         F adds (F - 1) x NCCL's base latency to collectives across
 *         nodes, the fixed cost of crossing the network (not given: 1)
 * Text: terms separated by blanks, CLASS.bw=F, CLASS.lat=F, CLASS.base=F
 * (class-wide) and CLASS.bw.ALGO/PROTO=F, ... (that pair only, in place
 * of the class-wide factor), F in [1e-3, 1e3]; NCCL's names for algorithms
 * and protocols, P2P for NCCL's send/receive path (all-to-all, whose steps
 * otherwise pay the class-wide factors).  A factor not given is 1: NCCL's
 * figure. */
#define CS_NCCL_FIT_MAX 64
typedef struct cs_nccl_fit_ref {
    int cls, algo, proto;
    double bw, lat, base; /* 0: the class-wide factor */
} cs_nccl_fit_ref_t;
/* The kinds of factor (cs_nccl_fit_get's `kind`). */
enum { CS_NCCL_FIT_BW = 0, CS_NCCL_FIT_LAT = 1, CS_NCCL_FIT_BASE = 2, CS_NCCL_FIT_NKINDS };
typedef struct cs_nccl_fit {
    double bw[CS_SIM_HW_COUNT], lat[CS_SIM_HW_COUNT]; /* class-wide */
    double base[CS_SIM_HW_COUNT]; /* class-wide; 0: none, the base follows lat */
    int n;
    cs_nccl_fit_ref_t ref[CS_NCCL_FIT_MAX];
} cs_nccl_fit_t;

void cs_nccl_fit_init(cs_nccl_fit_t *f); /* every factor 1 */
/* Whether `algo` reduces in a switch of route class cls (NVLS, NVLSTree on
 * nvlink; CollNet on net): that pair's factors in that class are its
 * switch's, which take the pair's factor alone, never the class-wide one. */
int cs_nccl_fit_switch_pair(int algo, int cls);
int cs_nccl_fit_is_identity(const cs_nccl_fit_t *f);
/* The factor of `kind` (CS_NCCL_FIT_BW, _LAT, _BASE) for class cls and
 * the pair (algo, proto): the pair's, else the class-wide one; a base
 * factor given nowhere is the latency factor inside a node (terms written
 * before base factors existed scale the base with the steps) and 1 for
 * net. */
double cs_nccl_fit_get(const cs_nccl_fit_t *f, int cls, int algo, int proto, int kind);
/* The pair's own factor, 1 when it has none (a switch's terms: the
 * class-wide factors are the links'). */
double cs_nccl_fit_pair(const cs_nccl_fit_t *f, int cls, int algo, int proto, int kind);
/* Set it (algo < 0: class-wide; v 0: none).  CS_ERR_INVAL when the table
 * is full. */
int cs_nccl_fit_set(cs_nccl_fit_t *f, int cls, int algo, int proto, int kind, double v);
/* "nvlink", "pci", "net" and back (-1 when unknown). */
const char *cs_nccl_fit_class_name(int cls);
int cs_nccl_fit_class_parse(const char *s, size_t len);
/* Parse the text into *f (initialised first); `where` ("FILE:LINE") starts
 * the messages: CS_ERR_PARSE naming the term and what was expected. */
int cs_nccl_fit_parse(const char *text, const char *where, cs_nccl_fit_t *f, cs_err_t *err);
/* The text of *f (terms that are not 1, class-wide first), "" for none. */
void cs_nccl_fit_format(const cs_nccl_fit_t *f, char *buf, size_t len);

/* The system as NCCL's tuner sees it on a platform (cs_nccl_sys_from). */
typedef struct cs_nccl_graph {
    int nch;           /* channels */
    double bw_intra;   /* GB/s per channel inside a node */
    double bw_inter;   /* GB/s per channel across nodes */
    int type_intra;    /* CS_SIM_HW_NVLINK or CS_SIM_HW_PCI */
} cs_nccl_graph_t;

typedef struct cs_nccl_sys {
    int nranks;
    int nnodes;        /* NVLink domains the ranks span (a multi-node NVLink domain counts
                          once, as NCCL's MNNVL does) */
    int nhosts;        /* hosts the ranks span */
    int arch;          /* CS_NCCL_VOLTA.. */
    int cc;            /* compute capability x 10 (70, 80, 90, 100); 94: AMD gfx942 */
    int rccl;          /* AMD GPUs: RCCL */
    char gpu[32];      /* "h100", "v100", ... */
    int cpu_amd;       /* the hosts' CPUs are AMD (NCCL's llMaxBw row across nodes) */
    int mesh;          /* GPUs per node when every GPU of a node has its own link to every
                          other (MI300X's xGMI, no switch), 0 otherwise: NCCL's (RCCL's)
                          rings then spread over every link (cs_nccl_as_sched) */
    int nvls;          /* NVLS available (a reducing NVLink switch serves every node) */
    int collnet;       /* CollNet available (a reducing network switch serves the nodes) */
    double gpu_nvlink; /* GB/s per GPU over NVLink/xGMI as NCCL counts it (0: none) */
    double gpu_pci;    /* GB/s of a GPU's PCIe link as NCCL counts it */
    double gpu_net;    /* GB/s of network per GPU (its NICs' rate / GPUs sharing them) */
    double tier_scale[CS_PLAT_MAX_TIERS]; /* NCCL's rate / the line rate, per platform tier */
    cs_nccl_graph_t graph[CS_NCCL_NALGOS];
    int dtype, op;     /* the collective's cs_dtype_t and cs_op_t (default float, sum): NVLS
                          serves only what NCCL's ncclNvlsSupported allows */
    int nvls_channels; /* channels (CTAs) NCCL's NVLS kernels run on (nvls.cc) */
    int nvls_heads;    /* NVLS heads: the ranks of a node that reduce, one slice each (the
                          NVLS graph's channels: a node's GPUs, at most NCCL's NVLS arity) */
    int nvls_tree_chunk; /* NVLSTree's largest chunk (enqueue.cc): NCCL_NVLS_CHUNKSIZE (128 KiB)
                            from 2.21, a Simple step (512 KiB) before; 64 KiB from 4 nodes
                            (NCCL_NVLSTREE_MAX_CHUNKSIZE's default); 0: 128 KiB */
    char note[256];    /* how the figures were derived (one line) */
    cs_nccl_fit_t fit; /* the platform's fitted terms (every factor 1 when it has none);
                          cs_nccl_step_costs applies them, the tuner does not (NCCL's
                          choice is NCCL's) */
} cs_nccl_sys_t;

/* The name CUDA (or ROCm) gives the platform's GPU, as nvidia-smi and
 * nccl-tests' device block print it ("NVIDIA H100 80GB HBM3"), from the
 * preset or the file's `gpu` property; NULL when the platform names no
 * GPU collstep knows. */
const char *cs_nccl_device_name(const cs_platform_t *plat);

/* Derive the system for `nranks` ranks on hosts[] (the simulation's rank
 * hosts).  The GPU comes from the platform (a preset's GPU, or a `gpu`
 * property on the XML's hosts: h100, h200, b200, gb200, a100, v100, p100,
 * mi300x); unknown GPUs are refused with CS_ERR_INVAL and a message naming
 * the property.  A file's fitted terms (collstep_nccl_fit) go to sys->fit;
 * CS_ERR_PARSE with FILE:LINE when they do not parse. */
int cs_nccl_sys_from(const cs_platform_t *plat, char *const *hosts, int nranks,
                     const cs_nccl_consts_t *k, cs_nccl_sys_t *sys, cs_err_t *err);

/* The tuner's latency (us) and bus bandwidth (GB/s, already converted to
 * algorithm bandwidth as NCCL does) of every algorithm and protocol for a
 * collective; bw 0: not available. */
void cs_nccl_tune(const cs_nccl_consts_t *k, const cs_nccl_sys_t *sys, cs_coll_t coll,
                  float lat[CS_NCCL_NALGOS][CS_NCCL_NPROTOS],
                  float bw[CS_NCCL_NALGOS][CS_NCCL_NPROTOS]);

/* NCCL's predicted time (us) of one collective of `bytes`, -1 when the
 * pair is not available. */
double cs_nccl_time(const cs_nccl_consts_t *k, const cs_nccl_sys_t *sys, cs_coll_t coll,
                    int algo, int proto, uint64_t bytes);

/* NCCL's choice for a collective of `bytes`: the fastest available pair,
 * restricted to `algo` / `proto` when >= 0 (NCCL_ALGO / NCCL_PROTO).
 * CS_ERR_NOTFOUND when nothing is available. */
int cs_nccl_choose(const cs_nccl_consts_t *k, const cs_nccl_sys_t *sys, cs_coll_t coll,
                   uint64_t bytes, int algo, int proto, int *algo_out, int *proto_out,
                   double *time_us);

/* NCCL's algorithm that a collstep schedule stands for when it pays NCCL's
 * costs: NVLS for schedules with NVLink switch steps (NVLSTree when they
 * also cross nodes), CollNet for network switch steps, Tree for tree
 * schedules, Ring for the others. */
int cs_nccl_algo_of(const cs_sched_t *s, const cs_nccl_sys_t *sys);

/* What each step of schedule `s` pays for a collective of `bytes` under
 * NCCL's algorithm `algo` and protocol `proto` (cs_sim.h's cs_sim_nccl_t):
 * per-step latencies by route class (once per block step: a schedule
 * moving a block in C pieces pays a C-th per piece), protocol efficiency,
 * channel caps (NCCL's bus bandwidth for the pair, times the share of the
 * communicator's channels NCCL runs a collective of that size on, shared
 * by the schedule's parallel channels), the base latency once per
 * collective; NVLS: its latency once, the switch at NCCL's NVLS rate.  A
 * schedule of C > 1 pieces that is the one NCCL's algorithm maps to
 * (cs_nccl_as_sched) also pays (1 - 1/C) of the step latency NCCL's tuner
 * charges once at the start (hid_lat: the pipeline would hide it).  algo
 * CS_NCCL_P2P (all-to-all): Ring's costs with Simple, P2P's fitted factors. */
void cs_nccl_step_costs(const cs_nccl_consts_t *k, const cs_nccl_sys_t *sys, const cs_sched_t *s,
                        int algo, int proto, uint64_t bytes, cs_sim_nccl_t *out);

/* Apply fitted terms to what an instance of NCCL's pair (algo, proto)
 * pays (cs_nccl_step_costs does it with sys->fit). */
void cs_nccl_fit_apply(const cs_nccl_fit_t *f, const cs_nccl_sys_t *sys, int algo, int proto,
                       cs_sim_nccl_t *c);

/* The channels NCCL runs a collective of `bytes` on with `algo` and
 * `proto`: for Ring and Tree the share of the communicator's channels its
 * size gets (enqueue.cc's thread thresholds and, from 2.23, 16/32 KiB of
 * traffic per channel); for CS_NCCL_P2P the p2p channels
 * (cs_nccl_p2p_channels); for the others the algorithm's graph's channels. */
int cs_nccl_channels(const cs_nccl_consts_t *k, const cs_nccl_sys_t *sys, cs_coll_t coll,
                     int algo, int proto, uint64_t bytes);
/* NCCL's p2p channels (its send/receive path): twice the ring graph's
 * channels rounded up to a power of two, at most 64 (connect.cc, paths.cc);
 * cs_nccl_channels of CS_NCCL_P2P. */
int cs_nccl_p2p_channels(const cs_nccl_sys_t *sys);

/* NCCL's NVLS chunk (bytes a head reduces per channel and loop iteration)
 * for an allreduce of `bytes`: 128 KiB, shrunk to 64, 32 and 16 KiB while
 * the collective is small against channels x heads (enqueue.cc). */
uint64_t cs_nccl_nvls_chunk(const cs_nccl_sys_t *sys, uint64_t bytes);

/* NCCL's NVLSTree chunk for an allreduce of `bytes`: sys->nvls_tree_chunk,
 * shrunk to 256, 128, 64 and 32 KiB while the collective is under 32, 16,
 * 4 and 1 loop iterations of channels x heads chunks (enqueue.cc). */
uint64_t cs_nccl_nvls_tree_chunk(const cs_nccl_sys_t *sys, uint64_t bytes);

/* NCCL's algorithm `algo` with protocol `proto` for a collective of
 * `bytes` as a collstep schedule: the registry generator (name) and its
 * parameters ("k=v,k=v", "" for its defaults) that stand for it.  Ring: a
 * ring moving each block in pieces of NCCL's chunk per channel (Simple 2
 * MiB, LL128 562.5 KiB, LL 32 KiB; at most 200,000 steps in all), across
 * nodes on as many channels as NCCL's rings leave by; Tree: dbtree
 * (allreduce); NVLS: nvls on NCCL's NVLS channels (at most 256 / ranks of
 * them) in pieces of NCCL's NVLS chunk (128 KiB, shrunk for smaller
 * collectives), depth 3; NVLSTree: nvls_tree; CollNet: sharp; PAT: bruck or
 * rhalving; broadcast's ring: chain; all-to-all: pairwise. */
void cs_nccl_as_sched(const cs_nccl_sys_t *sys, cs_coll_t coll, int algo, int proto,
                      uint64_t bytes, char *name, size_t nlen, char *params, size_t plen);

#ifdef __cplusplus
}
#endif

#endif /* CS_NCCL_H */
