/*
 * cs_trace.c - the trace recorder: links, the route cache, streamed steps,
 * time buckets, leveling and per-tier aggregation (contracts in cs_trace.h).
 *
 * Memory: per link one array of opts.buckets doubles, allocated on its
 * first byte; per distinct (src, dst) rank pair one cached route.  Steps are
 * written as they come and never kept.  Cost per transfer: one hash lookup,
 * then per hop one or two bucket updates (a transfer is short compared with
 * the bucket width except in the first microseconds, and the width doubles
 * as time goes on).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cs_grow.h"
#include "cs_hash.h"
#include "cs_log.h"
#include "cs_sched.h"
#include "cs_trace_int.h"

void cs_trace_opts_init(cs_trace_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->ranks = 64;
    o->link_tracks = 0;
    o->buckets = 1024;
    o->heatmap = 32;
    o->plot = 1;
}

double cs__trace_width(int level)
{
    return ldexp(1e-9, level);
}

static int fail(cs_trace_t *t, int code, const char *what)
{
    return cs_err_set(&t->err, code, "trace: %s", what);
}

/* ---- creation ------------------------------------------------------------ */

static FILE *open_in(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return fopen(path, "w");
}

static void json_head(cs_trace_t *t)
{
    FILE *f = t->json;
    fprintf(f, "{\"traceEvents\":[\n");
    fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":0,\"tid\":0,"
               "\"args\":{\"name\":\"fabric utilization\"}}");
    fprintf(f, ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":1,\"tid\":0,"
               "\"args\":{\"name\":\"ranks\"}}");
    for (int r = 0; r < t->meta.nranks; r++) {
        if (!t->keep[r])
            continue;
        fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":1,\"tid\":%d,"
                   "\"args\":{\"name\":\"rank %d\"}}", r, r);
        fprintf(f, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"ts\":0,\"pid\":1,"
                   "\"tid\":%d,\"args\":{\"sort_index\":%d}}", r, r);
    }
}

int cs_trace_create(const char *dir, const cs_trace_meta_t *meta, const cs_trace_opts_t *opts,
                    double t0, cs_trace_t **out, cs_err_t *err)
{
    if (!dir || !meta || !out || meta->nranks < 1)
        return cs_err_set(err, CS_ERR_INVAL, "trace: no directory, metadata or ranks");
    cs_trace_t *t = calloc(1, sizeof(*t));
    if (!t)
        return cs_err_set(err, CS_ERR_NOMEM, "trace: out of memory");
    t->meta = *meta;
    t->meta.platform[sizeof(t->meta.platform) - 1] = 0;
    t->meta.algo[sizeof(t->meta.algo) - 1] = 0;
    if (opts)
        t->opts = *opts;
    else
        cs_trace_opts_init(&t->opts);
    if (t->opts.buckets < 16)
        t->opts.buckets = 16;
    t->t0 = t0;
    t->bottleneck = -1;
    t->dir = strdup(dir);
    t->keep = calloc((size_t)meta->nranks, 1);
    if (!t->dir || !t->keep) {
        cs_trace_destroy(t);
        return cs_err_set(err, CS_ERR_NOMEM, "trace: out of memory");
    }
    int P = meta->nranks, n = t->opts.ranks;
    if (n <= 0 || n >= P)
        memset(t->keep, 1, (size_t)P);
    else
        for (int i = 0; i < n; i++)
            t->keep[(int)((int64_t)i * P / n)] = 1;
    t->steps_csv = open_in(dir, "steps.csv");
    t->json = open_in(dir, "trace.json");
    if (!t->steps_csv || !t->json) {
        cs_trace_destroy(t);
        return cs_err_set(err, CS_ERR_IO, "trace: cannot create files in %s", dir);
    }
    fprintf(t->steps_csv, "rank,step,kind,peer,bytes,start_us,end_us\n");
    json_head(t);
    *out = t;
    return CS_OK;
}

void cs_trace_destroy(cs_trace_t *t)
{
    if (!t)
        return;
    if (t->steps_csv)
        fclose(t->steps_csv);
    if (t->json)
        fclose(t->json);
    for (uint32_t i = 0; i < t->nlinks; i++) {
        free(t->links[i].name);
        free(t->links[i].bk);
    }
    free(t->links);
    free(t->lhash);
    for (int i = 0; i < t->ntiers; i++)
        free(t->tier_names[i]);
    free(t->tier_names);
    free(t->tiers);
    free(t->tier_series);
    free(t->routes);
    free(t->route_ids);
    free(t->keep);
    free(t->busy);
    for (int i = 0; i < t->nsw; i++)
        free((char *)t->sw[i].name);
    free(t->sw);
    free(t->dir);
    free(t);
}

void cs_trace_set_router(cs_trace_t *t, cs_trace_router_fn fn, void *ctx)
{
    t->router = fn;
    t->router_ctx = ctx;
}

/* ---- links and tiers ------------------------------------------------------- */

static int tier_id(cs_trace_t *t, const char *name, int *id)
{
    for (int i = 0; i < t->ntiers; i++)
        if (strcmp(t->tier_names[i], name) == 0) {
            *id = i;
            return CS_OK;
        }
    if (cs_grow(&t->tier_names, &t->cap_tiers, (size_t)t->ntiers + 1, sizeof(char *), 8))
        return fail(t, CS_ERR_NOMEM, "out of memory");
    t->tier_names[t->ntiers] = strdup(name);
    if (!t->tier_names[t->ntiers])
        return fail(t, CS_ERR_NOMEM, "out of memory");
    *id = t->ntiers++;
    return CS_OK;
}

static int lhash_grow(cs_trace_t *t)
{
    uint32_t cap = t->lhash_cap ? t->lhash_cap * 2 : 1024;
    uint32_t *h = calloc(cap, sizeof(uint32_t));
    if (!h)
        return fail(t, CS_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < t->nlinks; i++) {
        uint32_t k = (uint32_t)cs_hash_str(t->links[i].name) & (cap - 1);
        while (h[k])
            k = (k + 1) & (cap - 1);
        h[k] = i + 1;
    }
    free(t->lhash);
    t->lhash = h;
    t->lhash_cap = cap;
    return CS_OK;
}

int cs_trace_link(cs_trace_t *t, const char *name, const char *tier, double bandwidth,
                  double latency, uint32_t *id)
{
    if (t->err.code)
        return t->err.code;
    if (!name || !(bandwidth > 0))
        return fail(t, CS_ERR_INVAL, "a link needs a name and a positive bandwidth");
    if (2 * (t->nlinks + 1) > t->lhash_cap && lhash_grow(t) != CS_OK)
        return t->err.code;
    uint32_t k = (uint32_t)cs_hash_str(name) & (t->lhash_cap - 1);
    for (; t->lhash[k]; k = (k + 1) & (t->lhash_cap - 1))
        if (strcmp(t->links[t->lhash[k] - 1].name, name) == 0) {
            *id = t->lhash[k] - 1;
            return CS_OK;
        }
    if (cs_grow(&t->links, &t->cap_links, (size_t)t->nlinks + 1, sizeof(*t->links), 256))
        return fail(t, CS_ERR_NOMEM, "out of memory");
    cs__tlink_t *l = &t->links[t->nlinks];
    memset(l, 0, sizeof(*l));
    l->name = strdup(name);
    if (!l->name || tier_id(t, tier && *tier ? tier : "untiered", &l->tier) != CS_OK) {
        free(l->name);
        return fail(t, CS_ERR_NOMEM, "out of memory");
    }
    l->st.bandwidth = bandwidth;
    l->st.latency = latency > 0 ? latency : 0;
    t->lhash[k] = t->nlinks + 1;
    *id = t->nlinks++;
    return CS_OK;
}

/* ---- steps ------------------------------------------------------------------- */

int cs_trace_add_step(cs_trace_t *t, const cs_trace_step_t *s)
{
    if (t->err.code || t->finished)
        return t->err.code ? t->err.code : CS_ERR_INVAL;
    t->steps_seen++;
    if (s->rank < 0 || s->rank >= t->meta.nranks || !t->keep[s->rank])
        return CS_OK;
    t->steps_kept++;
    double ts = (s->start - t->t0) * 1e6, dur = (s->end - s->start) * 1e6;
    const char *kind = cs_step_kind_name((cs_step_kind_t)s->kind);
    fprintf(t->steps_csv, "%d,%u,%s,%d,%llu,%.4f,%.4f\n", s->rank, s->step, kind, s->peer,
            (unsigned long long)s->bytes, ts, ts + dur);
    fprintf(t->json,
            ",\n{\"name\":\"%s\",\"cat\":\"step\",\"ph\":\"X\",\"ts\":%.4f,\"dur\":%.4f,\"pid\":1,"
            "\"tid\":%d,\"args\":{\"step\":%u,\"peer\":%d,\"bytes\":%llu}}",
            kind, ts, dur, s->rank, s->step, s->peer, (unsigned long long)s->bytes);
    return CS_OK;
}

int cs_trace_add_compute(cs_trace_t *t, int rank, double seconds)
{
    if (t->err.code || t->finished)
        return t->err.code ? t->err.code : CS_ERR_INVAL;
    if (rank < 0 || rank >= t->meta.nranks || !(seconds > 0))
        return CS_OK;
    if (!t->busy && !(t->busy = calloc((size_t)t->meta.nranks, sizeof(double))))
        return fail(t, CS_ERR_NOMEM, "out of memory");
    t->busy[rank] += seconds;
    return CS_OK;
}

int cs_trace_add_switch(cs_trace_t *t, const cs_trace_switch_op_t *o)
{
    if (t->err.code || t->finished)
        return t->err.code ? t->err.code : CS_ERR_INVAL;
    int i = 0;
    while (i < t->nsw && strcmp(t->sw[i].name, o->sw) != 0)
        i++;
    if (i == t->nsw) {
        if (cs_grow(&t->sw, &t->cap_sw, (size_t)t->nsw + 1, sizeof(*t->sw), 4))
            return fail(t, CS_ERR_NOMEM, "out of memory");
        memset(&t->sw[i], 0, sizeof(t->sw[i]));
        if (!(t->sw[i].name = strdup(o->sw)))
            return fail(t, CS_ERR_NOMEM, "out of memory");
        t->nsw++;
        fprintf(t->json,
                ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":%d,\"tid\":0,"
                "\"args\":{\"name\":\"switch %s\"}}",
                2 + i, o->sw);
    }
    cs_trace_switch_stat_t *w = &t->sw[i];
    w->ops++;
    w->bytes_up += o->bytes_up;
    w->bytes_down += o->bytes_down;
    w->reduce += o->reduce;
    double ts = (o->start - t->t0) * 1e6, dur = (o->end - o->start) * 1e6;
    fprintf(t->json,
            ",\n{\"name\":\"%s\",\"cat\":\"switch\",\"ph\":\"X\",\"ts\":%.4f,\"dur\":%.4f,"
            "\"pid\":%d,\"tid\":0,\"args\":{\"members\":%d,\"bytes_up\":%llu,"
            "\"bytes_down\":%llu,\"reduce_us\":%.4f}}",
            o->op, ts, dur, 2 + i, o->nmembers, (unsigned long long)o->bytes_up,
            (unsigned long long)o->bytes_down, o->reduce * 1e6);
    return CS_OK;
}

int cs_trace_nswitches(const cs_trace_t *t)
{
    return t->nsw;
}

const cs_trace_switch_stat_t *cs_trace_switch_stat(const cs_trace_t *t, int i)
{
    return i >= 0 && i < t->nsw ? &t->sw[i] : NULL;
}

/* ---- buckets ----------------------------------------------------------------- */

/* Bring link l's buckets to the global width (pairwise sums, in place). */
void cs__trace_catch_up(cs_trace_t *t, cs__tlink_t *l)
{
    int k = t->level - l->level, nb = t->opts.buckets;
    if (!l->bk || k <= 0)
        return;
    if (k > 30) {
        double sum = 0;
        for (int j = 0; j < nb; j++)
            sum += l->bk[j];
        memset(l->bk, 0, sizeof(double) * (size_t)nb);
        l->bk[0] = sum;
    } else {
        int f = 1 << k;
        for (int j = 0; j < nb; j++) {
            double sum = 0;
            for (int i = j * f; i < (j + 1) * f && i < nb; i++)
                sum += l->bk[i];
            l->bk[j] = sum;
            if (j * f >= nb)
                l->bk[j] = 0;
        }
    }
    l->level = t->level;
}

static void grow_to(cs_trace_t *t, double trel)
{
    while (trel >= (double)t->opts.buckets * cs__trace_width(t->level) && t->level < 80)
        t->level++;
}

static void deposit(cs_trace_t *t, cs__tlink_t *l, double a, double b, double bytes)
{
    int nb = t->opts.buckets;
    double D = cs__trace_width(t->level);
    int i0 = (int)(a / D), i1 = (int)(b / D);
    if (i1 >= nb)
        i1 = nb - 1;
    if (i0 > i1)
        i0 = i1;
    double done = 0;
    if (i1 > i0) {
        double rate = bytes / (b - a);
        for (int i = i0; i < i1; i++) {
            double lo = a > i * D ? a : i * D, hi = (i + 1) * D;
            double v = rate * (hi - lo);
            l->bk[i] += v;
            done += v;
        }
    }
    l->bk[i1] += bytes - done > 0 ? bytes - done : 0;
}

int cs_trace_add_xfer_links(cs_trace_t *t, const uint32_t *ids, int n, uint64_t bytes,
                            double start, double end)
{
    if (t->err.code || t->finished)
        return t->err.code ? t->err.code : CS_ERR_INVAL;
    t->xfers_seen++;
    if (n <= 0 || bytes == 0)
        return CS_OK;
    double lat = 0;
    for (int h = 0; h < n; h++) {
        if (ids[h] >= t->nlinks)
            return fail(t, CS_ERR_INVAL, "transfer over an unknown link id");
        lat += t->links[ids[h]].st.latency;
    }
    double b = end - t->t0, a = start - t->t0 + lat;
    if (b < 0)
        b = 0;
    if (a > b)
        a = b;
    if (a < 0)
        a = 0;
    grow_to(t, b);
    for (int h = 0; h < n; h++) {
        cs__tlink_t *l = &t->links[ids[h]];
        l->st.bytes += bytes;
        if (!l->bk) {
            l->bk = calloc((size_t)t->opts.buckets, sizeof(double));
            if (!l->bk)
                return fail(t, CS_ERR_NOMEM, "out of memory for link buckets");
            l->level = t->level;
        }
        cs__trace_catch_up(t, l);
        deposit(t, l, a, b, (double)bytes);
    }
    return CS_OK;
}

/* ---- route cache ------------------------------------------------------------- */

static int routes_grow(cs_trace_t *t)
{
    uint64_t cap = t->cap_routes ? t->cap_routes * 2 : 4096;
    cs__troute_t *nv = calloc(cap, sizeof(*nv));
    if (!nv)
        return fail(t, CS_ERR_NOMEM, "out of memory");
    for (uint64_t i = 0; i < t->cap_routes; i++) {
        if (!t->routes[i].key)
            continue;
        uint64_t k = cs_hash_mix64(t->routes[i].key) & (cap - 1);
        while (nv[k].key)
            k = (k + 1) & (cap - 1);
        nv[k] = t->routes[i];
    }
    free(t->routes);
    t->routes = nv;
    t->cap_routes = cap;
    return CS_OK;
}

static int resolve(cs_trace_t *t, const char *src, const char *dst, cs__troute_t *r)
{
    cs_trace_hop_t small[16], *hops = small;
    int n = 0, st = t->router(t->router_ctx, src, dst, hops, 16, &n);
    if (st == CS_OK && n > 16) {
        hops = malloc(sizeof(*hops) * (size_t)n);
        if (!hops)
            return fail(t, CS_ERR_NOMEM, "out of memory");
        int m = n;
        st = t->router(t->router_ctx, src, dst, hops, m, &n);
        if (n > m)
            st = CS_ERR_INTERNAL;
    }
    if (st != CS_OK) {
        if (hops != small)
            free(hops);
        return cs_err_set(&t->err, st, "trace: no route from %s to %s", src, dst);
    }
    if (cs_grow(&t->route_ids, &t->cap_route_ids, t->nroute_ids + (size_t)n,
                sizeof(*t->route_ids), 4096)) {
        if (hops != small)
            free(hops);
        return fail(t, CS_ERR_NOMEM, "out of memory");
    }
    r->off = (uint32_t)t->nroute_ids;
    r->n = 0;
    for (int h = 0; h < n && st == CS_OK; h++) {
        uint32_t id = 0;
        st = cs_trace_link(t, hops[h].name, hops[h].tier, hops[h].bandwidth, hops[h].latency, &id);
        if (st == CS_OK)
            t->route_ids[t->nroute_ids + r->n++] = id;
    }
    t->nroute_ids += r->n;
    if (hops != small)
        free(hops);
    return st;
}

int cs_trace_add_xfer(cs_trace_t *t, int src, int dst, const char *src_host,
                      const char *dst_host, uint64_t bytes, double start, double end)
{
    if (t->err.code)
        return t->err.code;
    if (!t->router)
        return fail(t, CS_ERR_INVAL, "transfer between hosts but no router");
    if (2 * (t->nroutes + 1) > t->cap_routes && routes_grow(t) != CS_OK)
        return t->err.code;
    uint64_t key = (((uint64_t)(uint32_t)src << 32) | (uint32_t)dst) + 1;
    uint64_t k = cs_hash_mix64(key) & (t->cap_routes - 1);
    while (t->routes[k].key && t->routes[k].key != key)
        k = (k + 1) & (t->cap_routes - 1);
    if (!t->routes[k].key) {
        cs__troute_t r = {key, 0, 0};
        if (resolve(t, src_host, dst_host, &r) != CS_OK)
            return t->err.code;
        /* resolve may not move the table: it only grows route_ids */
        t->routes[k] = r;
        t->nroutes++;
    }
    cs__troute_t *r = &t->routes[k];
    return cs_trace_add_xfer_links(t, t->route_ids + r->off, (int)r->n, bytes, start, end);
}
