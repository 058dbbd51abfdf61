/*
 * cs_planner_int.h - internals shared by the planner's files (not
 * installed); the public side is cs_planner.h.
 *
 *   plan_topo.c   step 1: tiers (igraph components), bandwidths (max-flow),
 *                 factorizations, fast rings; called with the platform
 *                 loaded in SimGrid
 *   plan_cand.c   step 2: candidates from the registry
 *   plan_cost.c   step 3: the cost model over the loaded platform's routes
 *   plan_run.c    step 4 and cs_planner_run: the child that loads the
 *                 platform, the worker processes, the budget
 *
 * Calls go one way: plan_run.c calls the three others, plan_cost.c builds
 * candidates through plan_cand.c's cs__planner_build, plan_topo.c and
 * plan_cand.c call none of the others.
 */
#ifndef CS_PLANNER_INT_H
#define CS_PLANNER_INT_H

#include "cs_planner.h"

/* Topology analysis; called with the platform loaded in SimGrid (so that
 * cs_sim_route answers).  Fills tiers, facts, maps (hosts), bound. */
struct cs_platform;
int cs__planner_topology(const struct cs_platform *plat, cs_planner_t *p, cs_err_t *err);
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
int cs__planner_cost(cs_planner_t *p, int c, double max_sim, cs_err_t *err);
void cs__planner_cost_reset(void);
/* Predicted seconds to simulate one size of a schedule of `messages` with
 * `concurrent` messages per round on P ranks (an idle core). */
double cs__planner_sim_cost(int P, double messages, double concurrent);

#endif /* CS_PLANNER_INT_H */
