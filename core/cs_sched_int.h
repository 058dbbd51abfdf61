/*
 * cs_sched_int.h - internals of the builder shared by its files (not
 * public): cs_sched.c (schedules, buffers, steps) and cs_sched_group.c
 * (groups, switch steps).
 */
#ifndef CS_SCHED_INT_H
#define CS_SCHED_INT_H

#include "cs_sched.h"

/* 1 for a valid buffer or group name: [A-Za-z_][A-Za-z0-9_]*, shorter than
 * CS_BUF_NAME_MAX. */
int cs__sched_valid_name(const char *name);

/* Range `rg` of step idx of `rank` lies inside its declared buffer and is
 * not empty; else the sticky error, naming it `what`. */
int cs__sched_check_range(cs_sched_t *s, int rank, uint32_t idx, const char *what,
                          const cs_range_t *rg);

/* The switch-specific rules of step idx of `rank` (group declared, rank a
 * member, operation known, src/dst presence); CS_OK or the sticky error. */
int cs__sched_check_switch(cs_sched_t *s, int rank, uint32_t idx, const cs_step_t *st);

#endif /* CS_SCHED_INT_H */
