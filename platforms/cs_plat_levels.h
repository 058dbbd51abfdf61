/*
 * cs_plat_levels.h - internal: the hierarchy of a platform's ranks, derived
 * from the latencies of the routes SimGrid computes between them.  One
 * derivation for every command: a file's natural dims (cs_platform_t.dims,
 * hier's default in `collstep sim`, found while SimGrid has the file loaded
 * in cs_plat_probe.cpp) and the tiers and factorizations of `collstep plan`
 * (planner/plan_topo.c, with the platform loaded for its analysis).
 *
 * Rule.  The distinct route latencies are the levels (routes of equal
 * latency, to the picosecond, are one level).  A level's groups are the
 * connected components (igraph) of the graph joining two ranks whose route
 * is at most that level's latency.  A level whose rank-0 group is no larger
 * than the previous level's adds nothing; the levels stop at the first one
 * holding every rank.  Up to CS_PLAT_LEVEL_ALL ranks every pair is read;
 * beyond, the rows of CS_PLAT_LEVEL_ROWS sampled ranks (0, 1, the last and
 * evenly spaced ones), and a level's groups must then be aligned blocks of
 * rank-0's group size on every sampled row (ngroups 0 otherwise).
 *
 * Dims.  The regular levels' group sizes as factors, innermost first: groups
 * of 4 then of 8 ranks give 4x2.  A level that is irregular, or whose group
 * is not a multiple of the previous one, is skipped; the dims exist when the
 * factors reach every rank with at least two of them, and, for hier (whose
 * dims are blocks of consecutive ranks), when every level used is aligned.
 */
#ifndef CS_PLAT_LEVELS_H
#define CS_PLAT_LEVELS_H

#include <igraph.h>

#include "cs_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CS_PLAT_LEVEL_ALL 96  /* every pair of ranks up to this many ranks */
#define CS_PLAT_LEVEL_ROWS 24 /* sampled rows beyond */
#define CS_PLAT_LEVEL_NONE (-2) /* key of a pair without a route */
#define CS_PLAT_LEVEL_MAX 8   /* levels kept (the planner's tiers) */

/* The rows whose routes to every rank are read; rows[] has room for
 * CS_PLAT_LEVEL_ALL entries.  Returns their number; *all is 1 when every
 * rank is a row. */
int cs__plat_level_rows(int P, int *rows, int *all);

/* Latency of a route as a level key (picoseconds). */
long long cs__plat_level_key(double seconds);

typedef struct cs_plat_level {
    long long key; /* the level's latency, picoseconds */
    int group;     /* ranks in rank 0's group */
    int ngroups;   /* groups (0: sampled rows, and the groups are not aligned blocks) */
    int regular;   /* every group has `group` ranks */
    int aligned;   /* every group is a block of consecutive ranks */
} cs__plat_level_t;

/* keys[i][j]: key of the route rows[i] -> j; -1 for j == rows[i],
 * CS_PLAT_LEVEL_NONE without a route.  Writes up to `max` levels, innermost
 * first, and their number to *n.  CS_OK or CS_ERR_NOMEM / CS_ERR_INTERNAL
 * (igraph). */
int cs__plat_levels(int P, const int *rows, int nrows, int all, long long *const *keys,
                   cs__plat_level_t *out, int max, int *n);

/* Components of the graph joining (rows[i], j) when keys[i][j] <= lim. */
int cs__plat_level_components(int P, const int *rows, int nrows, long long *const *keys,
                             long long lim, igraph_vector_int_t *memb, igraph_integer_t *ncomp);

/* The dims of the levels (see the top), at most `max` of them; with
 * `aligned` only when every level used is aligned.  Returns their number,
 * 0 when the levels give none (one tier, irregular groups, more than max). */
int cs__plat_level_dims(const cs__plat_level_t *lv, int n, int P, int aligned, int *dims,
                        int max);

/* The factors themselves (every regular level whose group is a multiple of
 * the previous one), for the planner's factorizations; returns their number
 * and sets *reach to the product (P when they cover every rank). */
int cs__plat_level_factors(const cs__plat_level_t *lv, int n, int *g, int max, int *reach);

#ifdef __cplusplus
}
#endif
#endif /* CS_PLAT_LEVELS_H */
