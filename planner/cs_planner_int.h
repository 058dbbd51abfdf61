/*
 * cs_planner_int.h - internals shared by the planner's files (not
 * installed); the public side is cs_planner.h.
 *
 *   plan_topo.c   step 1: tiers (igraph components), bandwidths (max-flow),
 *                 factorizations; called with the platform loaded in SimGrid
 *   plan_links.c  step 1: the links the routes use: each rank's links out
 *                 and in, rings over disjoint links (plan_rings.c), the
 *                 bound the links give
 *   plan_cand.c   step 2: candidates from the registry
 *   plan_cost.c   step 3: the cost model over the loaded platform's routes
 *   plan_jobs.c   step 4's order: the simulations, one per candidate
 *   plan_run.c    step 4 and cs_planner_run: the child that loads the
 *                 platform, the worker processes, the budget's guard
 *   plan_part.c   the plan's memory, its input hash, what follows the
 *                 simulations; parts written, read and merged
 *   plan_nccl.c   NCCL's choice (a reference row under any model): the
 *                 system NCCL's tuner sees, its choice simulated; model
 *                 nccl: what each simulated step pays, the terms a
 *                 simulated time is made of
 *
 * Calls go one way: plan_run.c calls the others, plan_nccl.c calls
 * plan_cost.c's rounds and routes and plan_cand.c's cs__planner_build,
 * plan_cost.c builds candidates through cs__planner_build, plan_topo.c
 * calls plan_links.c, which calls plan_rings.c; plan_cand.c calls none.
 */
#ifndef CS_PLANNER_INT_H
#define CS_PLANNER_INT_H

#include "cs_child.h"
#include "cs_nccl.h"
#include "cs_planner.h"

/* Topology analysis; called with the platform loaded in SimGrid (so that
 * cs_sim_route answers).  Fills tiers, facts, maps (hosts), bound. */
struct cs_platform;
int cs__planner_topology(const struct cs_platform *plat, cs_planner_t *p, cs_err_t *err);
/* cs_planner_nccl_orders's work, in a process where the platform is
 * loaded (the planner's analysis child, or one of its own). */
int cs__planner_node_rings(const struct cs_platform *plat, int nranks, int local, int channels,
                           int tree, char *orders, size_t cap, cs_err_t *err);
/* The link analysis (plan_links.c), after the tiers and their groups'
 * egress: p->links (each rank's links out and in, the rings), rank order
 * 1 (the first ring in every group) when it differs from the platform's,
 * p->bound_s and p->bound_note. */
int cs__planner_links(const struct cs_platform *plat, cs_planner_t *p, cs_err_t *err);

/* Rings over disjoint links (plan_rings.c).  Arc a -> b of n members: the
 * route's link ids (each direction of a split-duplex link its own id),
 * bandwidth (its slowest link) and latency; ok 0 for a pair left out. */
#define CS__RING_MAX 16
#define CS__RING_ARC_LINKS 16
typedef struct cs__ring_arc {
    int ok, nlinks;
    int link[CS__RING_ARC_LINKS];
    double bw, lat;
} cs__ring_arc_t;
typedef struct cs__ring_arcs {
    int n;
    const cs__ring_arc_t *arc; /* n x n */
} cs__ring_arcs_t;
/* Directed Hamiltonian cycles whose hops use no link more than its
 * cap[id] times (link ids below nlinks), as many as found (at most
 * max_rings): rings[i][0..n) the members in ring i's order, from member 0.
 * *upper: the most the members' links allow (the fewest distinct first
 * links out of a member, or last links into one, each cap times).
 * Returns the rings found, -1 out of memory. */
int cs__planner_rings(const cs__ring_arcs_t *g, const unsigned char *cap, int nlinks,
                      int (*rings)[CS__RING_MAX], int max_rings, int *upper);

/* Candidates from the registry, the factorizations and the maps. */
int cs__planner_candidates(const struct cs_platform *plat, cs_planner_t *p, cs_err_t *err);
/* Schedules of more messages are costed by their closed form only. */
#define CS__PLANNER_MAX_MESSAGES 6e6
/* Build candidate c's schedule. */
int cs__planner_build(const cs_planner_t *p, const cs_planner_cand_t *c, cs_sched_t **out,
                      cs_err_t *err);
/* The cost model for candidate c over the loaded platform's routes; a
 * schedule whose closed form predicts more than max_sim seconds of
 * simulation is costed by that closed form instead of being built. */
struct cs__planner_net;
int cs__planner_cost(struct cs__planner_net *n, cs_planner_t *p, int c, double max_sim,
                     cs_err_t *err);
/* Predicted seconds to simulate one size of a schedule of `messages` with
 * `concurrent` messages per round on P ranks (an idle core). */
double cs__planner_sim_cost(int P, double messages, double concurrent);

/* The cost model's messages in rounds: a send's round is the latest round
 * its dependencies finished in, its message arrives one round later.  The
 * messages are the compiled plan's matched pairs (core/cs_plan.h); a
 * schedule with steps that never run (unmatched, deadlock) is
 * CS_ERR_VERIFY. */
typedef struct cs__planner_msg {
    uint32_t round;
    int32_t src, dst; /* ranks */
    uint32_t chunks;
} cs__planner_msg_t;
int cs__planner_rounds(const cs_sched_t *s, cs__planner_msg_t **out, size_t *nout,
                       uint32_t *nrounds, cs_err_t *err);
/* What the cost model learnt of the loaded platform: host names, links
 * and routes, each queried from SimGrid once (cs_sim_route).  One per
 * process that has the platform loaded; nothing is shared between two. */
typedef struct cs__planner_net cs__planner_net_t;
cs__planner_net_t *cs__planner_net_new(void); /* NULL: out of memory */
void cs__planner_net_free(cs__planner_net_t *n); /* NULL is fine */
/* The route between hosts a and b (names): its links' ids (at most
 * CS__PLANNER_MAX_ROUTE) and latency.  A link's bandwidth is the one
 * SimGrid had when n first saw it; its tier "link" when none. */
#define CS__PLANNER_MAX_ROUTE 64
int cs__planner_route(cs__planner_net_t *n, const char *a, const char *b, int *links, int *nl,
                      double *lat, cs_err_t *err);
double cs__planner_link(const cs__planner_net_t *n, int id, const char **tier);
int cs__planner_nlinks(const cs__planner_net_t *n);

/* ---- the simulations (plan_jobs.c) ---- */
typedef struct cs__planner_job {
    int cand;
    int ks[CS_PLANNER_MAX_SIZES], nk; /* the sizes it simulates, in increasing order */
    double cost;                      /* predicted seconds */
    cs_child_t child;
    int running;
    double started;
} cs__planner_job_t;
/* The simulations in their fixed order into jobs (p->ncands entries):
 * per size the model's best, the registry's defaults, per size the next
 * best up to o->top; one per candidate, none for a schedule simulated
 * before it (same digest and order, its sizes covered) or predicted to
 * take longer than the whole budget, at most o->candidates.  Sets each
 * candidate's job (-1: not simulated, err says why), p->njobs and
 * *cheapest (the least predicted cost of a simulation, the budget aside;
 * INFINITY when none); returns the count, or -1 when out of memory. */
int cs__planner_jobs(cs_planner_t *p, const cs_planner_opts_t *o, cs__planner_job_t *jobs,
                     double *cheapest);

/* ---- the plan's memory, its input, its end (plan_part.c) ---- */
/* A plan of P ranks in one shared mapping (the children write into it):
 * room for CS_PLANNER_MAX_CANDS candidates and CS_PLANNER_MAX_MAPS rank
 * orders; zeroed but for cands and hosts.  NULL when out of memory. */
cs_planner_t *cs__planner_alloc(int P);
/* The header children report through, beside the plan (in its mapping). */
typedef struct cs__planner_status {
    int status;
    char msg[CS_ERR_MSG_MAX];
    int ncosted;
} cs__planner_status_t;
cs__planner_status_t *cs__planner_status(cs_planner_t *p);
/* The input hash of a plan of P ranks of plat (cs_planner_t.input). */
uint64_t cs__planner_input(const cs_planner_opts_t *o, const struct cs_platform *plat, int P);
/* After every simulation (a whole plan, or a merge): candidates that
 * build the same schedule in the same order share the results of the one
 * simulated; the counts (simulated, timed_out, ncut). */
void cs__planner_finish(cs_planner_t *p);

/* ---- model nccl (plan_nccl.c) ---- */
typedef struct cs__planner_model {
    const cs_nccl_consts_t *k;
    cs_nccl_sys_t sys;
    double scale[CS_PLAT_MAX_TIERS]; /* cs_sim_opts_t.tier_bw_scale */
    int algo, proto;                 /* NCCL_ALGO / NCCL_PROTO; -1: the tuner's */
} cs__planner_model_t;
/* The system NCCL's tuner sees on the ranks' hosts in the platform's
 * order, and per size NCCL's choice (p->nccl_pick[k], not simulated yet;
 * p->nccl_ref 1).  Under model nccl, CS_ERR_INVAL for a platform whose GPU
 * NCCL's model does not know, CS_ERR_NOTFOUND when NCCL has no algorithm
 * for the collective; under another model these leave p->nccl_ref 0 and
 * say why in p->nccl_note. */
int cs__planner_nccl_setup(const struct cs_platform *plat, const cs_planner_opts_t *o,
                           cs_planner_t *p, cs__planner_model_t *m, cs_err_t *err);
/* What schedule s pays at `bytes` as a candidate: NCCL's algorithm it
 * stands for (or the one forced), NCCL's protocol for it at that size. */
void cs__planner_nccl_costs(const cs__planner_model_t *m, const cs_sched_t *s, uint64_t bytes,
                            cs_sim_nccl_t *out, int *algo, int *proto);
/* What a simulated time is made of, by the model's numbers; called after
 * cs_sim_run (routes answer, links at NCCL's rates; n of this process),
 * ranks on the hosts of rank order `map`.  n NULL: t->ok stays 0. */
void cs__planner_terms(cs__planner_net_t *n, const struct cs_platform *plat, const cs_planner_t *p,
                       int map, const cs_sched_t *s, uint64_t bytes, const cs_sim_nccl_t *c,
                       cs_planner_terms_t *t);
/* Simulate NCCL's choice of every size under the plan's model (a child
 * process: SimGrid runs once in a process): p->nccl_pick[k].sim_s (and
 * under model nccl its terms), or its err. */
int cs__planner_nccl_simulate(const struct cs_platform *plat, const cs__planner_model_t *m,
                              cs_planner_t *p);
/* cs__planner_nccl_simulate in a child stopped after `seconds`; CS_OK
 * (each size's err says why it was not simulated) or CS_ERR_INTERRUPTED. */
int cs__planner_nccl_run(const struct cs_platform *plat, const cs__planner_model_t *m,
                         cs_planner_t *p, double seconds, cs_err_t *err);

#endif /* CS_PLANNER_INT_H */
