/*
 * calib_load.c - a record read back from the JSON file calibration wrote
 * (cs_calibrate_record_load): the raw values only; the fits and the
 * figures in the file are recomputed by cs_calibrate_derive, not read.
 * Raw values convert exactly (cs__calib_num_read), so the record is the
 * one written.  Every error names the file, line and column of the value
 * at fault.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_int.h"
#include "cs_file.h"
#include "cs_grow.h"

#define LOAD_MAX_RANKS (1 << 20) /* far above what a platform of ranks^2 routes holds */

typedef struct ld {
    cs__cj_t j;
    cs_err_t *err;
} ld_t;

static const char *const type_name[] = {"an object", "an array", "a number", "a string"};

/* The member key of object o, of type t ('o', 'a', 'n', 's'): its index,
 * or -1 (missing: said unless optional, then err untouched). */
static int member(ld_t *l, int o, const char *key, char t, int optional, int *st)
{
    int i = cs__cj_get(&l->j, o, key);
    if (i < 0 && !optional)
        *st = cs__cj_err(&l->j, o, l->err, "no \"%s\" in this object", key);
    if (i >= 0 && l->j.v[i].type != t) {
        *st = cs__cj_err(&l->j, i, l->err, "\"%s\": expected %s", key,
                         type_name[strchr("oans", t) - "oans"]);
        i = -1;
    }
    return *st == CS_OK ? i : -1;
}

static double num_at(ld_t *l, int i, int shift, const char *key, int *st)
{
    double v = 0;
    if (*st == CS_OK && cs__calib_num_read(l->j.v[i].s, l->j.v[i].n, shift, &v) != CS_OK)
        *st = cs__cj_err(&l->j, i, l->err, "\"%s\": a number out of range", key);
    return v;
}

static double num(ld_t *l, int o, const char *key, int shift, int *st)
{
    int i = member(l, o, key, 'n', 0, st);
    return i >= 0 ? num_at(l, i, shift, key, st) : 0;
}

/* An optional number (absent: 0). */
static double opt_num(ld_t *l, int o, const char *key, int *st)
{
    int i = member(l, o, key, 'n', 1, st);
    return i >= 0 ? num_at(l, i, 0, key, st) : 0;
}

static long long integer_at(ld_t *l, int i, const char *key, long long lo, long long hi, int *st)
{
    double v = num_at(l, i, 0, key, st);
    if (*st == CS_OK && (v != floor(v) || v < (double)lo || v > (double)hi))
        *st = cs__cj_err(&l->j, i, l->err, "\"%s\": expected an integer from %lld to %lld", key,
                         lo, hi);
    return *st == CS_OK ? (long long)v : lo;
}

static long long integer(ld_t *l, int o, const char *key, long long lo, long long hi, int *st)
{
    int i = member(l, o, key, 'n', 0, st);
    return i >= 0 ? integer_at(l, i, key, lo, hi, st) : lo;
}

static void string(ld_t *l, int o, const char *key, char *buf, size_t n, int *st)
{
    int i = member(l, o, key, 's', 0, st);
    if (i >= 0 && l->j.v[i].n >= n)
        *st = cs__cj_err(&l->j, i, l->err, "\"%s\": longer than %zu bytes", key, n - 1);
    else if (i >= 0)
        snprintf(buf, n, "%s", l->j.v[i].s);
}

/* The plan: "plan", or (older files) the sizes of the first loaded flow's
 * points and the defaults. */
static void plan(ld_t *l, int top, cs_calibrate_plan_t *pl, int *st)
{
    cs_calibrate_plan_init(pl);
    pl->timeout_s = 0;
    int p = member(l, top, "plan", 'o', 1, st), sz = -1;
    if (p >= 0) {
        sz = member(l, p, "sizes", 'a', 0, st);
        pl->budget_s = num(l, p, "budget_s", 0, st);
        pl->min_reps = (int)integer(l, p, "min_reps", 1, 1000000, st);
        pl->max_reps = (int)integer(l, p, "max_reps", 1, 1000000, st);
        pl->nic_bytes = (uint64_t)integer(l, p, "nic_bytes", 1, 1ll << 50, st);
        int d = member(l, p, "dtype", 's', 0, st);
        if (d >= 0 && (pl->dtype = cs_dtype_parse(l->j.v[d].s)) >= CS_CALIBRATE_NDT)
            *st = cs__cj_err(&l->j, d, l->err, "\"dtype\": '%s' is none of the element types "
                             "measured", l->j.v[d].s);
    } else {
        int a = member(l, top, "loaded", 'a', 0, st);
        int f = a >= 0 && l->j.v[a].kid >= 0 ? l->j.v[a].kid : -1;
        if (*st == CS_OK && f < 0)
            *st = cs__cj_err(&l->j, a, l->err, "\"loaded\": no flow (and no \"plan\")");
        sz = f >= 0 && l->j.v[f].type == 'o' ? member(l, f, "points", 'a', 0, st) : -1;
    }
    if (sz < 0 || *st != CS_OK)
        return;
    pl->nsizes = 0;
    for (int k = l->j.v[sz].kid; k >= 0 && *st == CS_OK; k = l->j.v[k].next) {
        int v = k;
        if (p < 0 && l->j.v[k].type != 'o') {
            *st = cs__cj_err(&l->j, k, l->err, "a point: expected an object");
            break;
        }
        if (p < 0 && (v = member(l, k, "bytes", 'n', 0, st)) < 0)
            break;
        if (l->j.v[v].type != 'n') {
            *st = cs__cj_err(&l->j, v, l->err, "\"sizes\": expected numbers");
            break;
        }
        if (pl->nsizes == CS_CALIBRATE_MAX_SIZES) {
            *st = cs__cj_err(&l->j, v, l->err, "more than %d sizes", CS_CALIBRATE_MAX_SIZES);
            break;
        }
        pl->sizes[pl->nsizes++] = (uint64_t)integer_at(l, v, "bytes", 1, 1ll << 50, st);
    }
    if (*st == CS_OK && pl->nsizes == 0)
        *st = cs__cj_err(&l->j, sz, l->err, "no sizes");
}

/* The points of a series or a loaded flow: K of them, at the plan's sizes. */
static int points(ld_t *l, int o, const cs_calibrate_plan_t *pl, int *st)
{
    int a = member(l, o, "points", 'a', 0, st);
    if (a >= 0 && l->j.v[a].nkids != pl->nsizes)
        *st = cs__cj_err(&l->j, a, l->err, "%d points, the plan has %d sizes", l->j.v[a].nkids,
                         pl->nsizes);
    for (int k = a >= 0 ? l->j.v[a].kid : -1, i = 0; k >= 0 && *st == CS_OK; k = l->j.v[k].next, i++) {
        if (l->j.v[k].type != 'o')
            *st = cs__cj_err(&l->j, k, l->err, "a point: expected an object");
        else if ((uint64_t)integer(l, k, "bytes", 1, 1ll << 50, st) != pl->sizes[i] && *st == CS_OK)
            *st = cs__cj_err(&l->j, k, l->err, "point %d: not the plan's size %llu", i,
                             (unsigned long long)pl->sizes[i]);
    }
    return a >= 0 ? l->j.v[a].kid : -1;
}

static void nodes(ld_t *l, int top, cs_calibrate_record_t *r, int *st)
{
    int a = member(l, top, "nodes", 'a', 0, st), h = 0, old = cs__cj_get(&l->j, top, "node_of") < 0;
    for (int x = 0; x < r->nranks && old; x++)
        r->node_of[x] = -1;
    for (int k = a >= 0 ? l->j.v[a].kid : -1; k >= 0 && *st == CS_OK; k = l->j.v[k].next, h++) {
        cs_calibrate_node_t *n = &r->nodes[h];
        string(l, k, "name", n->name, sizeof(n->name), st);
        n->nic_peer = (int)integer(l, k, "nic_peer", -1, r->nnodes - 1, st);
        n->nic_senders = (int)integer(l, k, "nic_senders", 0, r->nranks, st);
        n->nic_one = num(l, k, "nic_one_Bps", 0, st);
        n->nic_all = num(l, k, "nic_all_Bps", 0, st);
        n->xch_out = num(l, k, "exchange_out_Bps", 0, st);
        n->xch_in = num(l, k, "exchange_in_Bps", 0, st);
        n->xch_trials = (int)integer(l, k, "exchange_trials", 0, 1000, st);
        n->cold_out = opt_num(l, k, "cold_out_Bps", st); /* older files: not measured */
        n->cold_in = opt_num(l, k, "cold_in_Bps", st);
        int cs = member(l, k, "cold_short_Bps", 'a', 1, st), j = 0;
        for (int e = cs >= 0 ? l->j.v[cs].kid : -1; e >= 0 && *st == CS_OK; e = l->j.v[e].next)
            if (j == 3 || l->j.v[e].type != 'n')
                *st = cs__cj_err(&l->j, e, l->err, "\"cold_short_Bps\": expected 3 numbers");
            else
                n->cold_short[j++] = num_at(l, e, 0, "cold_short_Bps", st);
        if (old) { /* an older file: nodes of consecutive ranks */
            int f = (int)integer(l, k, "first_rank", 0, r->nranks - 1, st);
            int c = (int)integer(l, k, "ranks", 1, r->nranks - f, st);
            for (int x = f; x < f + c && *st == CS_OK; x++)
                if (r->node_of[x] >= 0)
                    *st = cs__cj_err(&l->j, k, l->err, "rank %d in two nodes (a file without "
                                     "\"node_of\": nodes of consecutive ranks)", x);
                else
                    r->node_of[x] = h;
        }
    }
    for (int x = 0; x < r->nranks && old && *st == CS_OK; x++)
        if (r->node_of[x] < 0)
            *st = cs__cj_err(&l->j, a, l->err, "rank %d in no node (a file without \"node_of\": "
                             "nodes of consecutive ranks)", x);
    int o = old ? -1 : member(l, top, "node_of", 'a', 0, st), x = 0;
    if (o >= 0 && l->j.v[o].nkids != r->nranks)
        *st = cs__cj_err(&l->j, o, l->err, "\"node_of\": %d entries for %d ranks",
                         l->j.v[o].nkids, r->nranks);
    for (int k = o >= 0 ? l->j.v[o].kid : -1; k >= 0 && *st == CS_OK; k = l->j.v[k].next)
        r->node_of[x++] = l->j.v[k].type == 'n' ? (int)integer_at(l, k, "node_of", 0,
                                                                   r->nnodes - 1, st)
                                                : (*st = cs__cj_err(&l->j, k, l->err,
                                                                    "\"node_of\": a number"), 0);
}

static void series(ld_t *l, int a, cs_calibrate_record_t *r, int *st)
{
    int s = 0, N = r->nranks, H = r->nnodes;
    r->nintra = 0;
    for (int k = l->j.v[a].kid; k >= 0 && *st == CS_OK; k = l->j.v[k].next, s++) {
        cs_calibrate_series_t *x = &r->series[s];
        char cls[8] = "";
        string(l, k, "class", cls, sizeof(cls), st);
        x->a = (int)integer(l, k, "rank_a", 0, N - 1, st);
        x->b = (int)integer(l, k, "rank_b", 0, N - 1, st);
        x->na = (int)integer(l, k, "node_a", 0, H - 1, st);
        x->nb = (int)integer(l, k, "node_b", 0, H - 1, st);
        int intra = !strcmp(cls, "intra");
        if (*st == CS_OK && (intra ? r->nintra != s : strcmp(cls, "inter")))
            *st = cs__cj_err(&l->j, k, l->err, "\"class\": '%s': intra series first, then inter",
                             cls);
        r->nintra += intra && *st == CS_OK;
        int i = 0;
        for (int p = points(l, k, &r->plan, st); p >= 0 && *st == CS_OK; p = l->j.v[p].next, i++) {
            x->median[i] = num(l, p, "median_us", 6, st);
            x->p10[i] = num(l, p, "p10_us", 6, st);
            x->p90[i] = num(l, p, "p90_us", 6, st);
            x->reps[i] = (int)integer(l, p, "reps", 0, 1000000000, st);
        }
    }
}

static void loaded(ld_t *l, int top, cs_calibrate_record_t *r, int *st)
{
    int a = member(l, top, "loaded", 'a', 0, st), K = r->plan.nsizes, N = r->nranks;
    if (a >= 0 && l->j.v[a].nkids != N)
        *st = cs__cj_err(&l->j, a, l->err, "\"loaded\": %d flows for %d ranks", l->j.v[a].nkids, N);
    for (int k = a >= 0 ? l->j.v[a].kid : -1, d = 0; k >= 0 && *st == CS_OK;
         k = l->j.v[k].next, d++) {
        if (l->j.v[k].type != 'o' || integer(l, k, "dst", 0, N - 1, st) != d) {
            if (*st == CS_OK)
                *st = cs__cj_err(&l->j, k, l->err, "\"loaded\": flow %d: expected the flow into "
                                 "rank %d", d, d);
            break;
        }
        int i = 0;
        for (int p = points(l, k, &r->plan, st); p >= 0 && *st == CS_OK; p = l->j.v[p].next, i++) {
            r->loaded[(size_t)d * K + i] = num(l, p, "median_us", 6, st);
            r->loaded_reps[i] = (int)integer(l, p, "reps", 0, 1000000000, st);
        }
    }
}

static void rest(ld_t *l, int top, cs_calibrate_record_t *r, int *st)
{
    int N = r->nranks, d = member(l, top, "duplex", 'o', 0, st);
    if (d >= 0) {
        r->duplex_a = (int)integer(l, d, "rank_a", -1, N - 1, st);
        r->duplex_b = (int)integer(l, d, "rank_b", -1, N - 1, st);
        r->duplex_c = (int)integer(l, d, "rank_c", -1, N - 1, st);
        r->duplex_d = (int)integer(l, d, "rank_d", -1, N - 1, st);
        r->duplex_one = num(l, d, "one_way_Bps", 0, st);
        r->duplex_both = num(l, d, "pair_both_ways_Bps_per_direction", 0, st);
        r->duplex_node = num(l, d, "node_both_ways_Bps_per_flow", 0, st);
    }
    int red = member(l, top, "reduce_Bps", 'o', 0, st);
    for (int t = 0; t < CS_CALIBRATE_NDT && red >= 0; t++)
        r->reduce[t] = num(l, red, cs_dtype_name((cs_dtype_t)t), 0, st);
    /* an older file: the type whose reduction its platform got */
    int p = cs__cj_get(&l->j, top, "platform");
    if (*st == CS_OK && cs__cj_get(&l->j, top, "plan") < 0 && p >= 0) {
        double v = num(l, p, "reduce_speed_Bps", 0, st);
        for (int t = CS_CALIBRATE_NDT - 1; t >= 0; t--)
            if (r->reduce[t] == v)
                r->plan.dtype = (cs_dtype_t)t;
    }
}

int cs_calibrate_record_parse(const char *text, size_t len, const char *name,
                              cs_calibrate_record_t **out, cs_err_t *err)
{
    ld_t l = {.err = err};
    int st = cs__cj_parse(&l.j, text, len, name, err);
    if (st != CS_OK)
        return st;
    cs_calibrate_record_t *r = NULL;
    cs_calibrate_plan_t pl;
    int top = 0, ver = -1, sa = -1, N = 0, H = 0;
    if (l.j.v[0].type != 'o' || (ver = cs__cj_get(&l.j, 0, "collstep_calibration")) < 0)
        st = cs__cj_err(&l.j, 0, err, "not a calibration file (no \"collstep_calibration\")");
    if (st == CS_OK && integer_at(&l, ver, "collstep_calibration", 1, 1, &st) != 1)
        st = CS_ERR_PARSE;
    if (st == CS_OK)
        N = (int)integer(&l, top, "ranks", 2, LOAD_MAX_RANKS, &st);
    int na = member(&l, top, "nodes", 'a', 0, &st);
    if (na >= 0 && ((H = l.j.v[na].nkids) < 1 || H > N))
        st = cs__cj_err(&l.j, na, err, "\"nodes\": %d for %d ranks", H, N);
    if (st == CS_OK)
        plan(&l, top, &pl, &st);
    if (st == CS_OK)
        sa = member(&l, top, "series", 'a', 0, &st);
    if (st == CS_OK && !(r = cs_calibrate_record_new(N, H, l.j.v[sa].nkids, &pl)))
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    if (st == CS_OK) {
        string(&l, top, "transport", r->transport, sizeof(r->transport), &st);
        string(&l, top, "provider", r->provider, sizeof(r->provider), &st);
    }
    if (st == CS_OK)
        nodes(&l, top, r, &st);
    if (st == CS_OK)
        series(&l, sa, r, &st);
    if (st == CS_OK)
        loaded(&l, top, r, &st);
    if (st == CS_OK)
        rest(&l, top, r, &st);
    cs__cj_free(&l.j);
    if (st != CS_OK) {
        cs_calibrate_record_free(r);
        return st;
    }
    *out = r;
    return CS_OK;
}

int cs_calibrate_record_load(const char *path, cs_calibrate_record_t **out, cs_err_t *err)
{
    char *buf;
    size_t n;
    if (cs_file_read(path, 0, &buf, &n) != 0)
        return errno == ENOMEM ? cs_err_set(err, CS_ERR_NOMEM, "out of memory")
               : errno == EIO  ? cs_err_set(err, CS_ERR_IO, "%s: cannot read", path)
                               : cs_err_set(err, CS_ERR_IO, "%s: cannot open: %s", path,
                                            strerror(errno));
    int st = cs_calibrate_record_parse(buf, n, path, out, err);
    free(buf);
    return st;
}
