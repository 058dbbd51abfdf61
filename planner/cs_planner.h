/*
 * cs_planner.h - `collstep plan`'s engine as a library: which algorithm,
 * hierarchy, channels and rank order run a collective fastest on a
 * platform, per message size.  Installed (collstep::planner, with the
 * tuning tables of core's cs_tuning.h).
 *
 *   1. Topology: the platform is loaded in SimGrid (in a child process) to
 *      read its routes; the tiers of the hierarchy are the connected
 *      components of the graph whose edges join ranks at most a given
 *      route distance apart; bandwidth per tier (a route's slowest link)
 *      and per group (max-flow out of one group); the factorizations of P
 *      that follow the tiers.  Then the links the routes use: each rank's
 *      links out and in (the distinct first and last links of its routes),
 *      rings whose hops use disjoint links (directed Hamiltonian cycles in
 *      a group of at most 16 ranks, several of them as channels, the first
 *      as a rank order), and the bound the links give (per rank and per
 *      group of a tier, the bytes the collective must move out of it over
 *      its links' bandwidth).  Every pair's route is read up to 256 ranks;
 *      above, the routes of a few groups of the innermost tier to their own
 *      and to other groups (the platform's structure: every group alike).
 *   2. Candidates: every registry algorithm of the collective with its
 *      defaults; variations of the parameters each declares (nchunks,
 *      channels, hier's dims and per-tier algos) and each rank order.
 *   3. A cost model: the schedule's messages in rounds (their depth in the
 *      cross-rank dependency graph); per round the most loaded link (bytes
 *      over bandwidth, so that flows sharing a link count) and the longest
 *      route latency.
 *   4. Simulation: per size the best `top` by the model, plus the
 *      registry's defaults, in a fixed order (the simulations: one per
 *      candidate, with every size it was picked for), the first
 *      `candidates` of them simulated in SimGrid by `jobs` worker
 *      processes (forked: the calling program's memory is copied, not
 *      shared); the choice per size is the fastest simulated candidate.
 *
 * Deterministic: the same platform, collective, sizes and options give
 * the same plan whatever the machine's load or `jobs`, unless the budget
 * (a guard: the wall time the plan may take) stops the cost model or a
 * simulation first; then the candidates it cut are marked (cut) and
 * counted (p->ncut), and the plan may differ from an uncut one.
 *
 * Spread over processes (cs_planner_opts_t.shard / nshards): each process
 * runs steps 1-3 alike and simulates the simulations j of the order with
 * j % nshards == shard (NCCL's choice: the last shard); such a part is
 * written with cs_planner_part_write, and cs_planner_merge joins the
 * parts of every shard into the plan one process would have made, equal
 * to it field for field (wall times aside).
 *
 * NCCL's choice (model/cs_nccl.h), under any model: per size its tuner's
 * algorithm, protocol and channels on the system it sees, simulated as the
 * schedule cs_nccl_as_sched names under the plan's model (nccl_pick, a
 * reference row: never a candidate, never the choice); a platform whose
 * GPU NCCL's model does not know has none (nccl_ref 0, nccl_note says so).
 *
 * Model CS_SIM_NCCL (model/cs_nccl.h): every simulation pays what NCCL
 * pays per step (the algorithm the schedule stands for, NCCL's protocol
 * for it at the size, links at NCCL's rates); the cost model of step 3
 * still ranks by the links alone.  NCCL's choice pays NCCL's costs too,
 * and the simulated times of NCCL's choice and of the candidates come
 * with their terms (latency steps, the busiest link tier, the reducing
 * switch).
 *
 * cs_planner_run blocks for up to `budget` seconds of wall time.  It forks
 * an analysis process and the workers, and waits only for those (a
 * program's own children are left to it); progress lines (opts.progress)
 * go to standard error.
 */
#ifndef CS_PLANNER_H
#define CS_PLANNER_H

#include <stdint.h>
#include <stdio.h>

#include "cs_sched.h"
#include "cs_sim.h"
#include "cs_status.h"
#include "cs_tuning.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CS_PLANNER_MAX_SIZES 64
#define CS_PLANNER_MAX_TIERS 8
#define CS_PLANNER_MAX_FACTS 16
#define CS_PLANNER_MAX_MAPS 4
#define CS_PLANNER_MAX_CANDS 384
#define CS_PLANNER_HOST_MAX 64 /* bytes per host name, NUL included */
#define CS_PLANNER_RING_ORDERS 96 /* a `orders` parameter's value, NUL included */
#define CS_PLANNER_MAX_NOTES 8

typedef struct cs_planner_opts {
    const char *platform;  /* spec, as given */
    cs_coll_t coll;
    int ranks;             /* 0: every rank of the platform */
    const uint64_t *sizes; /* bytes */
    int nsizes;
    int top;               /* candidates simulated per size, by the model's ranking (>= 1) */
    int jobs;              /* worker processes (>= 1) */
    double budget;         /* seconds of wall time for the whole plan (> 0): a guard, what
                              it stops is cut */
    cs_sim_model_t model;
    int progress;          /* 0: quiet; 1: a status line on a terminal; 2: a line per candidate */
    int exhaustive;        /* 1: simulate every candidate (small platforms, tests) */
    int candidates;        /* simulations at most, the first of the fixed order (0: all) */
    int shard, nshards;    /* this process's share of the simulations (nshards 0 or 1: all) */
    /* model CS_SIM_NCCL: NCCL's constants of this version (NULL: the
     * newest); its choice restricted as NCCL_ALGO / NCCL_PROTO would
     * ("Ring", "LL128"; NULL: the tuner's) */
    const char *nccl_version, *nccl_algo, *nccl_proto;
} cs_planner_opts_t;

/* Model CS_SIM_NCCL: what a simulated time is made of, by the model's own
 * numbers.  The schedule's messages in the cost model's rounds (step 3):
 * per round the longest of its messages' NCCL step latencies, and the
 * longest of its messages' times (bytes over min(protocol efficiency x the
 * route's slowest link, NCCL's channel cap)) and of its links' loads
 * (bytes over protocol efficiency x bandwidth, flows sharing a link
 * adding up); switch steps: the bytes each member hands the switch over
 * its reduction rate per member. */
typedef struct cs_planner_terms {
    int ok;              /* 0: not computed (not simulated, or too many messages) */
    int algo, proto;     /* NCCL's algorithm and protocol the steps paid (cs_nccl.h) */
    double base_s;       /* NCCL's base latency, once per collective (NVLS's included) */
    double steps;        /* rounds of messages one after another */
    double step_s;       /* NCCL's per-step latency, on average over those rounds */
    double sw_ops;       /* switch operations of the rank with the most */
    double sw_op_s;      /* NCCL's latency per switch operation (NVLS: a Simple step's) */
    double lat_s;        /* base_s + steps x step_s + sw_ops x sw_op_s */
    double bw_s;         /* the rounds' bandwidth time */
    char tier[16];       /* the tier of the link that bounds the rounds longest */
    double tier_rate;    /* bytes/s of one message there */
    int capped;          /* 1: NCCL's channel cap sets tier_rate; 0: the link x efficiency */
    double sw_s;         /* the reducing switch's time (NVLS's pipeline fill and drain
                            included) */
    double sw_rate;      /* bytes/s it reduces per member (NVLS: NCCL's; SHARP: the platform's) */
    char sw_kind[8];     /* "NVLS", "SHARP", "" when the schedule has no switch steps */
} cs_planner_terms_t;

/* One level of the hierarchy: ranks whose routes stay within it. */
typedef struct cs_planner_tier {
    char name[16];     /* the tier of the slowest link joining two of its groups' ranks */
    int group;         /* ranks per group (0 when the groups differ in size) */
    int ngroups;
    double latency;    /* seconds: longest route inside a group */
    double rank_bw;    /* bytes/s: one flow between two ranks of a group, not of a smaller one */
    double group_bw;   /* bytes/s: max-flow out of the first group to the other ranks */
} cs_planner_tier_t;

typedef struct cs_planner_cand {
    char algo[32];
    char params[160];  /* "k=v,k=v" as --param takes it ("" for the defaults) */
    int map;           /* index of the rank order (0: the platform's order) */
    int is_default;    /* the registry's defaults in the platform's order */
    uint64_t messages; /* messages of the schedule */
    uint64_t digest;   /* cs_sched_digest of the schedule; 0 when not built */
    double sim_cost;   /* predicted seconds to simulate one size */
    double model_s[CS_PLANNER_MAX_SIZES]; /* cost model; < 0: not built */
    double sim_s[CS_PLANNER_MAX_SIZES];   /* simulated; < 0: not simulated */
    char bottleneck[16]; /* the tier of the link the model finds most loaded */
    char err[160];     /* why it was not built or simulated ("" when it was) */
    int job;           /* its place in the order of simulations; -1: not simulated */
    int cut;           /* 1: the budget stopped its cost model or its simulation */
    cs_planner_terms_t terms[CS_PLANNER_MAX_SIZES]; /* model CS_SIM_NCCL, simulated sizes */
} cs_planner_cand_t;

/* Model CS_SIM_NCCL: NCCL's own choice at a size, simulated. */
typedef struct cs_planner_nccl {
    int algo, proto;     /* cs_nccl_algo_t, cs_nccl_proto_t */
    int channels;        /* the channels NCCL runs it on (cs_nccl_channels) */
    double tuner_s;      /* its tuner's closed-form time; < 0: outside the tuner (alltoall) */
    double sim_s;        /* simulated; < 0: not simulated (err says why) */
    char sched[32];      /* the collstep schedule it was simulated as (cs_nccl_as_sched) */
    char params[160];
    cs_planner_terms_t terms;
    char err[160];
} cs_planner_nccl_t;

typedef struct cs_planner {
    char platform[256];    /* the spec as given (opts.platform, cut at 255 bytes) */
    cs_sim_model_t model;
    int ranks;
    cs_coll_t coll;
    int nsizes;
    uint64_t sizes[CS_PLANNER_MAX_SIZES];
    int ntiers;
    cs_planner_tier_t tiers[CS_PLANNER_MAX_TIERS]; /* innermost first; the last holds every rank */
    int nfacts;
    char facts[CS_PLANNER_MAX_FACTS][48];      /* "6x256", "3x2x256", ... */
    int nmaps;
    char map_name[CS_PLANNER_MAX_MAPS][24];    /* "platform", "fast-ring" */
    char map_note[CS_PLANNER_MAX_MAPS][160];   /* what the order is, its slowest ring link */
    double map_ring_bw[CS_PLANNER_MAX_MAPS];   /* slowest route of the ring in this order */
    char *hosts; /* host of rank r in order m: cs_planner_host(p, m, r) */
    int ncands;
    cs_planner_cand_t *cands;
    /* Lower bound per size for allreduce-like collectives over the groups
     * of the outermost inner tier: the bytes that must leave one group over
     * its egress capacity (seconds; 0 when not applicable). */
    double bound_s[CS_PLANNER_MAX_SIZES];
    char bound_note[200];
    int simulated, timed_out; /* simulations run; killed at the budget's end */
    int njobs;                /* simulations in the order (cand.job < njobs) */
    int ncut;                 /* candidates the budget cut (cand.cut), NCCL's choice included */
    int nccl_cut;             /* 1: the budget stopped the simulation of NCCL's choice */
    int shard, nshards;       /* a part: its shard of nshards; a whole plan: 0 of 1 */
    uint64_t input;           /* hash of the inputs: platform (its text), collective, ranks,
                                 sizes and the options that change the plan */
    double seconds;           /* wall time of the plan (not part of its results) */
    /* model CS_SIM_NCCL */
    int nccl;                 /* 1: simulated under NCCL's model */
    char nccl_lib[8], nccl_version[16]; /* "NCCL", "2.29.7": the constants used */
    char nccl_note[256];      /* the system NCCL's tuner sees (cs_nccl_sys_t.note), or
                                 why there is no reference row (nccl_ref 0) */
    cs_planner_nccl_t nccl_pick[CS_PLANNER_MAX_SIZES];
    /* NCCL's choice as a reference row, under any model: 1 when nccl_pick,
     * nccl_lib and nccl_version hold it (always under model CS_SIM_NCCL),
     * simulated under the plan's model like the candidates but never one
     * of them (cs_planner_choice ignores it); 0: nccl_note says why not
     * (a GPU NCCL's model does not know). */
    int nccl_ref;
    /* The links (step 1): per rank the sum of the bandwidths of its links
     * out of it (the distinct first links of its routes to the other
     * ranks) and into it (the last links), the least over the ranks; the
     * rings over disjoint links found in a group of ring_group ranks (the
     * base-36 orders of the flat ring's `orders` parameter, "+" between
     * rings), each at ring_bw (its slowest link); link_notes: the analysis
     * in words, one line each. */
    double links_out_bw, links_in_bw;
    int links_exact;            /* 1: every pair's route read; 0: sampled groups' */
    long long links_routes;     /* routes read */
    int nrings, rings_upper, ring_group;
    int ring_switch;            /* 1: the group is a switch domain, its ring the ranks'
                                   order, not searched (ring_orders "" above 36 ranks) */
    double ring_bw;
    char ring_orders[CS_PLANNER_RING_ORDERS];
    int nlink_notes;
    char link_notes[CS_PLANNER_MAX_NOTES][200];
} cs_planner_t;

/* Run the plan (a part when opts->nshards > 1).  CS_OK and *out (free
 * with cs_planner_free); CS_ERR_INVAL /
 * CS_ERR_NOTFOUND / CS_ERR_PARSE for input the user must change (one rank,
 * no algorithm, unknown platform), CS_ERR_RANGE for a budget too small to
 * simulate anything, others for failures while running. */
int cs_planner_run(const cs_planner_opts_t *opts, cs_planner_t **out, cs_err_t *err);
void cs_planner_free(cs_planner_t *p);

/* ---- parts: one plan spread over processes -------------------------------- */

/* Write part p (a plan of opts.nshards > 1) to f, in binary: what its
 * shard simulated, and with `whole` the analysis too (every candidate,
 * the rank orders), which cs_planner_merge needs from one part at least.
 * Readable by the same collstep version on the same architecture.  CS_OK
 * or CS_ERR_IO. */
int cs_planner_part_write(const cs_planner_t *p, int whole, FILE *f, cs_err_t *err);
/* Read a part written by cs_planner_part_write; `name` names it in
 * messages ("FILE: ..."): CS_ERR_PARSE for what is not a part of this
 * collstep build. */
int cs_planner_part_read(FILE *f, const char *name, cs_planner_t **out, cs_err_t *err);
/* 1 when the first n bytes of a file are a part's start (core/cs_out.h's
 * recognizer: only such a file is replaced by a part). */
int cs_planner_part_recognize(const char *head, size_t n);
/* Join the parts of every shard (names[i] names parts[i] in messages)
 * into the plan one process makes, *out (free with cs_planner_free).
 * CS_ERR_MISMATCH for parts of other inputs (platform, collective, sizes,
 * options: their input hashes differ) or of another analysis;
 * CS_ERR_INVAL for a shard missing or given twice, or no whole part. */
int cs_planner_merge(cs_planner_t *const *parts, const char *const *names, int n,
                     cs_planner_t **out, cs_err_t *err);

/* Host of rank r in rank order m. */
static inline char *cs_planner_host(const cs_planner_t *p, int m, int r)
{
    return p->hosts + ((size_t)m * (size_t)p->ranks + (size_t)r) * CS_PLANNER_HOST_MAX;
}

/* The candidate chosen for size k (fastest simulated; the model's best when
 * none was simulated); -1 when there is none. */
int cs_planner_choice(const cs_planner_t *p, int k);
/* The time that ranks candidate c at size k: simulated, else the model's. */
double cs_planner_time(const cs_planner_t *p, int c, int k);
/* Candidate of the registry's flat ring with its defaults, or -1. */
int cs_planner_ring(const cs_planner_t *p);

/* NCCL's rings for a simulation of NCCL's choice (the planner's NCCL row,
 * `sim` and `validate` with --algo nccl) on nodes of `local` GPUs (3 to
 * 16; nranks a multiple) that are no switch domain (a DGX-1's hybrid cube
 * mesh, a PCIe box, an xGMI mesh): the rings over disjoint links that the
 * link analysis of the platform's first `local` hosts finds, as the flat
 * ring's `orders` value in orders[] (at most cap bytes), else "" (also
 * where it finds one ring only: every GPU's one link to a switch).  On one
 * node (nranks == local) every ring found; across nodes `channels` of them
 * (or as many as were found), each cut open into a path through every
 * node where the hops from one node to the next (node 0's hosts to node
 * 1's: the platform's hosts local..2 local-1) share the fewest links: a
 * ring leaves a node by its path's last GPU and enters the next by its
 * first; with tree set, the chains of NCCL's Tree (dbtree's `orders`),
 * whose first GPU, the head, talks to the other nodes both ways.  The
 * analysis runs in a child process (SimGrid loads a platform once per
 * process).  CS_OK, or why the analysis failed. */
int cs_planner_nccl_orders(const struct cs_platform *plat, int nranks, int local, int channels,
                           int tree, char *orders, size_t cap, cs_err_t *err);
/* NCCL's Ring pick's parameters (`nchunks=N`, across nodes `nchunks=N,
 * channels=C,local=L`; its Tree's `local=L,channels=C,nchunks=N`)
 * rewritten to run over those rings or chains (`nchunks=N,orders=O`,
 * `nchunks=N,local=L,orders=O`): 1 when rewritten, 0 when params already
 * name orders, orders is empty or the result does not fit in cap. */
int cs_planner_ring_orders_params(char *params, size_t cap, const char *orders);

/* The plan as a tuning table for `platform` (cs_tuning.h): one entry per
 * run of sizes with the same choice (algorithm, parameters, rank order),
 * each reaching from the previous one's end to the geometric mean of its
 * last size and the next size (the largest to UINT64_MAX).  *out (free
 * with cs_tuning_free) or a status with err filled. */
int cs_planner_tuning(const cs_planner_t *p, const char *platform, cs_tuning_t **out,
                      cs_err_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CS_PLANNER_H */
