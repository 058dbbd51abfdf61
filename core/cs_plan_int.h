/*
 * cs_plan_int.h - internals of the plan shared by its files (not public):
 * cs_plan.c (local parts, message matching, order) and cs_plan_switch.c
 * (switch operations).
 */
#ifndef CS_PLAN_INT_H
#define CS_PLAN_INT_H

#include "cs_plan.h"

/* Match the switch queues of p (local parts and partner[] built, messages
 * matched): allocate and fill p->swnext, set partner[] of switch steps to
 * their operation's leader, the queues' `matched`, p->nunmatched.  With
 * indeg (may be NULL): +1 for every unmatched switch step (it never runs)
 * and +1 on a leader for every other member of its operation (the order
 * releases the leader when all are ready).  CS_OK or CS_ERR_NOMEM. */
int cs__plan_match_switch(cs_plan_t *p, uint32_t *indeg);

#endif /* CS_PLAN_INT_H */
