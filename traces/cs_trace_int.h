/*
 * cs_trace_int.h - internals of the trace library shared by its files.
 *
 *   cs_trace.c          the recorder: links, route cache, steps, buckets,
 *                       leveling and aggregation
 *   cs_trace_write.c    trace.json, CSV files, summary.json, plot script
 *   cs_trace_session.c  output directories written whole or not at all
 *   cs_trace_read.c     summaries of an existing trace (`collstep trace`)
 */
#ifndef CS_TRACE_INT_H
#define CS_TRACE_INT_H

#include "cs_trace.h"

typedef struct cs__tlink {
    cs_trace_link_stat_t st;
    char *name;
    int tier;        /* index in tiers */
    double *bk;      /* buckets (NULL until the first byte) */
    int level;       /* bucket width of bk: 1 ns << level */
} cs__tlink_t;

typedef struct cs__troute {
    uint64_t key;    /* src * P + dst + 1; 0 = empty slot */
    uint32_t off, n; /* hops in route_ids */
} cs__troute_t;

struct cs_trace {
    cs_trace_meta_t meta;
    cs_trace_opts_t opts;
    char *dir;
    double t0, T;
    int level;       /* global bucket width: 1 ns << level */
    int nb;          /* buckets covering [0, T] after finish */
    int finished;
    cs_err_t err;    /* first failure */

    cs__tlink_t *links;
    uint32_t nlinks;
    size_t cap_links;
    uint32_t *lhash; /* open addressing over link names: index + 1 */
    uint32_t lhash_cap;

    char **tier_names;
    int ntiers;
    size_t cap_tiers;
    cs_trace_tier_stat_t *tiers;
    double *tier_series; /* after finish: ntiers x nb x 3 (bytes, max util, busy links) */
    int bottleneck;

    cs__troute_t *routes;
    uint64_t nroutes, cap_routes;
    uint32_t *route_ids;
    uint64_t nroute_ids;
    size_t cap_route_ids;
    cs_trace_router_fn router;
    void *router_ctx;

    unsigned char *keep; /* per rank: 1 when its steps are written */
    double *busy;        /* per rank: device seconds of its reductions (NULL: none yet) */
    int red_rank;        /* after finish: the busiest rank, -1 when none reduced */
    int red_wins;        /* after finish: reductions are the bottleneck */
    cs_trace_switch_stat_t *sw; /* per switch seen (names owned) */
    int nsw;
    size_t cap_sw;
    FILE *steps_csv, *json;
    uint64_t steps_seen, steps_kept, xfers_seen;
};

double cs__trace_width(int level); /* bucket width in seconds */
/* Bring a link's buckets to the trace's current width. */
void cs__trace_catch_up(cs_trace_t *t, cs__tlink_t *l);

#endif /* CS_TRACE_INT_H */
