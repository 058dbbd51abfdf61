/*
 * cs_trace_stats.c - the end of a trace: leveling each link's buckets to
 * its capacity, per-link and per-tier figures, the bottleneck tier, and
 * the read-only accessors (definitions in cs_trace.h).
 *
 * Leveling of one link, buckets v[0..nb) of width D, capacity c = bw x D:
 *   forward:  carry = 0; for k: x = v[k] + carry; out[k] = min(x, c);
 *             carry = x - out[k]          (a fluid queue served at c)
 *   backward: a residue left after the last bucket fills the spare capacity
 *             c - out[k] from k = nb-1 down to 0.
 * Every out[k] <= c and sum(out) = sum(v) = the link's bytes whenever the
 * bytes fit the run at all (sum(v) <= c * nb, which holds when the backend
 * respected the link's bandwidth).  shifted_bytes = sum |out - v| / 2, the
 * bytes that changed bucket.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cs_log.h"
#include "cs_trace_int.h"

static double level_link(double *v, int nb, double cap)
{
    double carry = 0, moved = 0;
    for (int k = 0; k < nb; k++) {
        double raw = v[k], x = raw + carry;
        double o = x < cap ? x : cap;
        carry = x - o;
        v[k] = o;
        moved += fabs(o - raw);
    }
    for (int k = nb - 1; k >= 0 && carry > 0; k--) {
        double room = cap - v[k];
        if (room <= 0)
            continue;
        double take = carry < room ? carry : room;
        v[k] += take;
        moved += take;
        carry -= take;
    }
    if (carry > 0) /* cannot happen when the backend respected bandwidth */
        v[nb - 1] += carry;
    return moved / 2;
}

static int finish_links(cs_trace_t *t, double D)
{
    int nb = t->nb, NB = t->opts.buckets;
    for (uint32_t i = 0; i < t->nlinks; i++) {
        cs__tlink_t *l = &t->links[i];
        cs_trace_link_stat_t *s = &l->st;
        s->name = l->name;
        s->tier = t->tier_names[l->tier];
        if (!l->bk)
            continue;
        cs__trace_catch_up(t, l);
        for (int k = nb; k < NB; k++) { /* deposits past T (rounding): last bucket */
            l->bk[nb - 1] += l->bk[k];
            l->bk[k] = 0;
        }
        double cap = s->bandwidth * D;
        s->shifted_bytes = level_link(l->bk, nb, cap);
        int busy = 0;
        double peak = 0;
        for (int k = 0; k < nb; k++) {
            if (l->bk[k] > 1e-9 * cap)
                busy++;
            if (l->bk[k] / cap > peak)
                peak = l->bk[k] / cap;
        }
        s->peak_util = peak;
        s->busy_fraction = (double)busy / nb;
        s->mean_util = (double)s->bytes / (s->bandwidth * t->T);
    }
    return CS_OK;
}

static int slice_of(const cs_trace_t *t, int k, double D)
{
    int s = (int)((k + 0.5) * D / t->T * CS_TRACE_PROFILE);
    return s < 0 ? 0 : s >= CS_TRACE_PROFILE ? CS_TRACE_PROFILE - 1 : s;
}

static int finish_tiers(cs_trace_t *t, double D)
{
    int nb = t->nb, nt = t->ntiers;
    t->tiers = calloc((size_t)(nt ? nt : 1), sizeof(*t->tiers));
    t->tier_series = calloc((size_t)(nt ? nt : 1) * (size_t)nb * 3, sizeof(double));
    double *slice_bytes = calloc(CS_TRACE_PROFILE, sizeof(double));
    int slice_n[CS_TRACE_PROFILE] = {0};
    if (!t->tiers || !t->tier_series || !slice_bytes) {
        free(slice_bytes);
        return cs_err_set(&t->err, CS_ERR_NOMEM, "trace: out of memory");
    }
    for (int k = 0; k < nb; k++)
        slice_n[slice_of(t, k, D)]++;
    for (int i = 0; i < nt; i++) {
        t->tiers[i].name = t->tier_names[i];
        t->tiers[i].busiest = -1;
    }
    for (uint32_t i = 0; i < t->nlinks; i++) {
        cs__tlink_t *l = &t->links[i];
        cs_trace_tier_stat_t *ts = &t->tiers[l->tier];
        if (!l->bk || l->st.bytes == 0)
            continue;
        ts->nlinks++;
        ts->bytes += (double)l->st.bytes;
        ts->bandwidth += l->st.bandwidth;
        ts->shifted_bytes += l->st.shifted_bytes;
        if (l->st.peak_util > ts->peak_util)
            ts->peak_util = l->st.peak_util;
        if (ts->busiest < 0 || l->st.mean_util > ts->busiest_util) {
            ts->busiest = (int)i;
            ts->busiest_util = l->st.mean_util;
        }
        double cap = l->st.bandwidth * D;
        memset(slice_bytes, 0, sizeof(double) * CS_TRACE_PROFILE);
        for (int k = 0; k < nb; k++) {
            double *row = &t->tier_series[((size_t)l->tier * nb + k) * 3];
            double u = l->bk[k] / cap;
            row[0] += l->bk[k];
            if (u > row[1])
                row[1] = u;
            if (l->bk[k] > 1e-9 * cap)
                row[2] += 1;
            slice_bytes[slice_of(t, k, D)] += l->bk[k];
        }
        for (int s = 0; s < CS_TRACE_PROFILE; s++) {
            double u = slice_n[s] ? slice_bytes[s] / (cap * slice_n[s]) : 0;
            if (u > ts->profile_util[s])
                ts->profile_util[s] = u;
        }
    }
    free(slice_bytes);
    double best = -1;
    for (int i = 0; i < nt; i++) {
        cs_trace_tier_stat_t *ts = &t->tiers[i];
        if (ts->nlinks == 0)
            continue;
        ts->mean_util = ts->bytes / (ts->bandwidth * t->T);
        int busy = 0, sbusy[CS_TRACE_PROFILE] = {0};
        for (int k = 0; k < nb; k++)
            if (t->tier_series[((size_t)i * nb + k) * 3 + 2] > 0) {
                busy++;
                sbusy[slice_of(t, k, D)]++;
            }
        ts->busy_fraction = (double)busy / nb;
        for (int s = 0; s < CS_TRACE_PROFILE; s++)
            ts->profile_busy[s] = slice_n[s] ? (double)sbusy[s] / slice_n[s] : 0;
        if (ts->busiest_util > best) {
            best = ts->busiest_util;
            t->bottleneck = i;
        }
    }
    return CS_OK;
}

int cs_trace_finish(cs_trace_t *t, double t_end, cs_err_t *err)
{
    if (t->finished)
        return cs_err_set(err, CS_ERR_INVAL, "trace: already finished");
    if (t->err.code)
        return cs_err_set(err, t->err.code, "%s", t->err.msg);
    t->finished = 1;
    t->T = t_end - t->t0;
    if (!(t->T > 0))
        t->T = 1e-9;
    while (t->T > (double)t->opts.buckets * cs__trace_width(t->level) && t->level < 80)
        t->level++;
    double D = cs__trace_width(t->level);
    t->nb = (int)ceil(t->T / D - 1e-9);
    if (t->nb < 1)
        t->nb = 1;
    if (t->nb > t->opts.buckets)
        t->nb = t->opts.buckets;
    if (finish_links(t, D) != CS_OK || finish_tiers(t, D) != CS_OK)
        return cs_err_set(err, t->err.code, "%s", t->err.msg);
    /* reductions: the busiest device against the busiest link */
    t->red_rank = -1;
    for (int r = 0; t->busy && r < t->meta.nranks; r++)
        if (t->busy[r] > 0 && (t->red_rank < 0 || t->busy[r] > t->busy[t->red_rank]))
            t->red_rank = r;
    t->red_wins = t->red_rank >= 0 &&
                  (t->bottleneck < 0 ||
                   t->busy[t->red_rank] / t->T > t->tiers[t->bottleneck].busiest_util);
    CS_DEBUG("trace", "%s: T=%g s, %d buckets of %g s, %u links, %d tiers", t->meta.algo, t->T,
             t->nb, D, t->nlinks, t->ntiers);
    return CS_OK;
}

/* ---- accessors --------------------------------------------------------------- */

double cs_trace_duration(const cs_trace_t *t)
{
    return t->T;
}

double cs_trace_resolution(const cs_trace_t *t)
{
    return cs__trace_width(t->level);
}

int cs_trace_nbuckets(const cs_trace_t *t)
{
    return t->nb;
}

uint32_t cs_trace_nlinks(const cs_trace_t *t)
{
    return t->nlinks;
}

const cs_trace_link_stat_t *cs_trace_link_stat(const cs_trace_t *t, uint32_t i)
{
    return i < t->nlinks ? &t->links[i].st : NULL;
}

double cs_trace_link_util(const cs_trace_t *t, uint32_t i, int k)
{
    if (!t->finished || i >= t->nlinks || k < 0 || k >= t->nb || !t->links[i].bk)
        return 0;
    return t->links[i].bk[k] / (t->links[i].st.bandwidth * cs__trace_width(t->level));
}

int cs_trace_ntiers(const cs_trace_t *t)
{
    return t->finished ? t->ntiers : 0;
}

const cs_trace_tier_stat_t *cs_trace_tier_stat(const cs_trace_t *t, int i)
{
    return (t->finished && i >= 0 && i < t->ntiers) ? &t->tiers[i] : NULL;
}

int cs_trace_bottleneck(const cs_trace_t *t)
{
    return t->bottleneck;
}

const char *cs_trace_bottleneck_name(const cs_trace_t *t)
{
    if (t->red_wins)
        return "reduction";
    return t->bottleneck >= 0 ? t->tiers[t->bottleneck].name : NULL;
}

int cs_trace_reduction(const cs_trace_t *t, double *seconds, double *fraction)
{
    int r = t->finished ? t->red_rank : -1;
    *seconds = r >= 0 ? t->busy[r] : 0;
    *fraction = r >= 0 ? t->busy[r] / t->T : 0;
    return r;
}

const cs_trace_meta_t *cs_trace_meta(const cs_trace_t *t)
{
    return &t->meta;
}

uint64_t cs_trace_steps_seen(const cs_trace_t *t)
{
    return t->steps_seen;
}

uint64_t cs_trace_xfers_seen(const cs_trace_t *t)
{
    return t->xfers_seen;
}
