/*
 * cs_swphase.c - switch-operation phase emitters (see cs_swphase.h for the
 * contracts).
 *
 * Like the emitters of cs_phase.c, each walks the members one at a time and
 * appends all of that member's steps; a member's piece order is the same on
 * every member, so matching needs no bookkeeping across members.
 */
#include "cs_swphase.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_peers.h"

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int cs__sw_group(cs_sched_t *s, const char *prefix, const int *ranks, int n)
{
    if (cs_sched_status(s) != CS_OK)
        return -1;
    int32_t *m = malloc((size_t)(n > 0 ? n : 1) * sizeof(*m));
    int *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof(*tmp));
    if (m == NULL || tmp == NULL) {
        free(m);
        free(tmp);
        cs_err_set(&s->err, CS_ERR_NOMEM, "out of memory (switch group)");
        return -1;
    }
    memcpy(tmp, ranks, (size_t)n * sizeof(*tmp));
    qsort(tmp, (size_t)n, sizeof(*tmp), int_cmp);
    for (int i = 0; i < n; i++)
        m[i] = tmp[i];
    free(tmp);
    int id = -1;
    for (uint32_t g = 0; g < s->ngroups && id < 0; g++) /* newest first would not be shorter */
        if (s->groups[g].n == (uint32_t)n &&
            memcmp(s->groups[g].members, m, (size_t)n * sizeof(*m)) == 0)
            id = (int)g;
    if (id < 0) {
        char name[CS_BUF_NAME_MAX];
        snprintf(name, sizeof(name), "%s%u", prefix, s->ngroups);
        id = cs_sched_add_group(s, name, m, (uint32_t)n);
    }
    free(m);
    return id;
}

int cs__sw_always(cs_params_t *params)
{
    (void)params;
    return 1;
}

/* Piece q of segment j: [*a, *a + *n), or 0 when the segment has fewer. */
static int piece(const cs__swgrp_t *g, uint32_t pieces, int j, uint32_t q, uint32_t *a,
                 uint32_t *n)
{
    uint32_t len = g->len[j], np = len < pieces ? len : pieces;
    if (q >= np)
        return 0;
    *a = cs__split(g->lo[j], g->lo[j] + len, np, q);
    *n = cs__split(g->lo[j], g->lo[j] + len, np, q + 1) - *a;
    return 1;
}

/* d plus one more dependency x (cs__dl_t holds four). */
static cs__dl_t dl_add(cs__dl_t d, int64_t x)
{
    for (uint32_t i = 0; i < d.n; i++)
        if (x >= 0 && d.v[i] == (uint32_t)x)
            return d;
    if (x >= 0)
        d.v[d.n++] = (uint32_t)x;
    return d;
}

static int64_t sw_step(cs__phase_t *ph, int r, cs_swop_t op, int gid, int chan, int sbuf,
                       int dbuf, uint32_t a, uint32_t n, cs__dl_t d)
{
    cs_range_t src = {0, 0, 0}, dst = {0, 0, 0};
    if (sbuf >= 0)
        src = cs__grng(ph->s, r, sbuf, a, n);
    if (dbuf >= 0)
        dst = cs__grng(ph->s, r, dbuf, a, n);
    return cs_switch(ph->s, r, op, gid, chan, sbuf >= 0 ? &src : NULL, dbuf >= 0 ? &dst : NULL,
                     d.v, d.n);
}

/* A group of one: each segment is copied src -> dst (its reduction, or its
 * multicast to itself); the copy is every piece's reduce step. */
static int sw_single(cs__phase_t *ph, const cs__swgrp_t *g, int src, int dst, uint32_t pieces,
                     int64_t *rec)
{
    int r = g->ranks[0];
    if (!cs__phase_mine(ph, r))
        return cs_sched_status(ph->s);
    size_t slot = (size_t)r * (size_t)g->nseg;
    for (int j = 0; j < g->nseg; j++) {
        int64_t c = -1;
        if (src != dst && g->len[j] > 0) {
            cs__dl_t d = cs__dl(ph->front[r], -1, -1);
            c = cs_copy(ph->s, r, cs__grng(ph->s, r, src, g->lo[j], g->len[j]),
                        cs__grng(ph->s, r, dst, g->lo[j], g->len[j]), d.v, d.n);
            cs_deps_push(&ph->term, c);
        }
        for (uint32_t q = 0; rec != NULL && q < pieces; q++)
            rec[(slot + (size_t)j) * pieces + q] = c;
    }
    cs__phase_end(ph, r);
    return cs_sched_status(ph->s);
}

/* The allreduce (see "NVLS allreduce" in cs_swphase.h): per piece q, the
 * reduces of every segment on chan, then their multicasts on chan + 1. */
static int sw_nvls_ar(cs__phase_t *ph, const cs__swgrp_t *g, int gid, int src, int dst, int chan,
                      uint32_t pieces)
{
    uint32_t depth = g->depth;
    cs_sched_t *s = ph->s;
    size_t per = (size_t)g->nseg * pieces;
    int64_t *red = malloc(2 * per * sizeof(*red)), *mc = red + per; /* [segment][piece] */
    int64_t *last = malloc((size_t)g->nseg * sizeof(*last)); /* a contributor's last reduce */
    if (red == NULL || last == NULL) {
        free(red);
        free(last);
        return cs_err_set(&s->err, CS_ERR_NOMEM, "out of memory (switch pieces)");
    }
    for (int m = 0; m < g->n && cs_sched_status(s) == CS_OK; m++) {
        int r = g->ranks[m];
        if (!cs__phase_mine(ph, r))
            continue;
        int64_t fr = ph->front[r];
        uint32_t a, n;
        for (int j = 0; j < g->nseg; j++)
            last[j] = -1;
        for (uint32_t q = 0; q < pieces; q++) {
            for (int j = 0; j < g->nseg; j++) {
                if (!piece(g, pieces, j, q, &a, &n))
                    continue;
                size_t k = (size_t)j * pieces + q;
                int own = g->owner[j] == m;
                /* the reader: after its multicast of piece q - depth; a
                 * contributor: after its previous contribution */
                int64_t after = !own ? last[j] : depth > 0 && q >= depth ? mc[k - depth] : -1;
                red[k] = sw_step(ph, r, CS_SW_REDUCE, gid, chan, src, own ? dst : -1, a, n,
                                 cs__dl(fr, after, -1));
                if (!own)
                    last[j] = red[k];
            }
            for (int j = 0; j < g->nseg; j++) {
                if (!piece(g, pieces, j, q, &a, &n))
                    continue;
                size_t k = (size_t)j * pieces + q;
                int own = g->owner[j] == m;
                mc[k] = sw_step(ph, r, CS_SW_MULTICAST, gid, chan + 1, own ? dst : -1,
                                own ? -1 : dst, a, n, cs__dl(fr, red[k], -1));
                cs_deps_push(&ph->term, mc[k]);
            }
        }
        cs__phase_end(ph, r);
    }
    free(red);
    free(last);
    return cs_sched_status(s);
}

int cs__sw_nvls(cs__phase_t *ph, const cs__swgrp_t *g, int what, int src, int dst, int chan,
                uint32_t pieces, int64_t *rec, const int64_t *wait)
{
    cs_sched_t *s = ph->s;
    if (pieces < 1)
        pieces = 1;
    if (g->n == 1)
        return sw_single(ph, g, src, dst, pieces, rec);
    int gid = cs__sw_group(s, "nvls", g->ranks, g->n);
    if (gid < 0)
        return cs_sched_status(s);
    if (what == CS__SW_AR)
        return sw_nvls_ar(ph, g, gid, src, dst, chan, pieces);
    size_t per = (size_t)g->nseg * pieces;
    uint32_t nch = g->nchan > 1 ? (g->nchan < pieces ? g->nchan : pieces) : 1;
    /* this member's reduces, and the last step per segment and channel */
    int64_t *red = malloc((per + (size_t)g->nseg * nch) * sizeof(*red));
    if (red == NULL)
        return cs_err_set(&s->err, CS_ERR_NOMEM, "out of memory (switch pieces)");
    int64_t *last = red + per;
/* channel c takes pieces [floor(c pieces / nch), floor((c + 1) pieces / nch)) */
#define CH_OF(q) ((uint32_t)(((uint64_t)(q) + 1) * nch + pieces - 1) / pieces - 1)
#define LAST(j, q) last[(size_t)(j) * nch + CH_OF(q)]
    for (int m = 0; m < g->n && cs_sched_status(s) == CS_OK; m++) {
        int r = g->ranks[m];
        if (!cs__phase_mine(ph, r))
            continue;
        int64_t fr = ph->front[r];
        size_t slot = (size_t)r * per;
        uint32_t a, n;
        for (size_t k = 0; k < per; k++)
            red[k] = -1;
        if (what & CS__SW_RS) {
            for (size_t j = 0; j < (size_t)g->nseg * nch; j++)
                last[j] = -1;
            for (uint32_t q = 0; q < pieces; q++)
                for (int j = 0; j < g->nseg; j++) {
                    if (!piece(g, pieces, j, q, &a, &n))
                        continue;
                    int64_t x = sw_step(ph, r, CS_SW_REDUCE, gid,
                                        chan + (int)CH_OF(q) * g->cstride, src,
                                        g->owner[j] == m ? dst : -1, a, n,
                                        cs__dl(fr, LAST(j, q), -1));
                    red[(size_t)j * pieces + q] = LAST(j, q) = x;
                }
            if (rec != NULL)
                memcpy(rec + slot, red, per * sizeof(*red));
            if (what == CS__SW_RS)
                for (size_t j = 0; j < (size_t)g->nseg * nch; j++)
                    cs_deps_push(&ph->term, last[j]);
        }
        if (what & CS__SW_AG) {
            for (size_t j = 0; j < (size_t)g->nseg * nch; j++)
                last[j] = -1;
            for (uint32_t q = 0; q < pieces; q++)
                for (int j = 0; j < g->nseg; j++) {
                    if (!piece(g, pieces, j, q, &a, &n))
                        continue;
                    size_t k = (size_t)j * pieces + q;
                    cs__dl_t d = dl_add(cs__dl(fr, LAST(j, q), red[k]),
                                        wait != NULL ? wait[slot + k] : -1);
                    int own = g->owner[j] == m;
                    LAST(j, q) = sw_step(ph, r, CS_SW_MULTICAST, gid,
                                         chan + (int)CH_OF(q) * g->cstride, own ? src : -1,
                                         own && src == dst ? -1 : dst, a, n, d);
                }
            for (size_t j = 0; j < (size_t)g->nseg * nch; j++)
                cs_deps_push(&ph->term, last[j]);
        }
        cs__phase_end(ph, r);
    }
    free(red);
    return cs_sched_status(s);
#undef CH_OF
#undef LAST
}

/* A phase group as a switch group: segment m owned by member m; depth
 * only for the allreduce. */
static int over_phase_group(cs__phase_t *ph, const cs__grp_t *g, int what, int src, int dst,
                            int chan, uint32_t pieces, uint32_t depth)
{
    int n = g->n;
    uint32_t *lo = malloc((size_t)n * 2 * sizeof(*lo));
    int *owner = malloc((size_t)n * sizeof(*owner));
    if (lo == NULL || owner == NULL) {
        free(lo);
        free(owner);
        return cs_err_set(&ph->s->err, CS_ERR_NOMEM, "out of memory (switch segments)");
    }
    uint32_t *len = lo + n;
    for (int m = 0; m < n; m++) {
        lo[m] = g->lo ? g->lo[m] : g->cut[m];
        len[m] = g->cut[m + 1] - g->cut[m];
        owner[m] = m;
    }
    cs__swgrp_t sg = {g->ranks, n, n, lo, len, owner, depth, 1, 0};
    int st = cs__sw_nvls(ph, &sg, what, src, dst, chan, pieces, NULL, NULL);
    free(lo);
    free(owner);
    return st;
}

int cs__phase_rs_nvls(cs__phase_t *ph, const cs__grp_t *g, cs__bufs_t b, int chan,
                      uint32_t pieces)
{
    return over_phase_group(ph, g, CS__SW_RS, b.src, b.dst, chan, pieces, 0);
}

int cs__phase_ag_nvls(cs__phase_t *ph, const cs__grp_t *g, cs__bufs_t b, int chan,
                      uint32_t pieces)
{
    return over_phase_group(ph, g, CS__SW_AG, b.src, b.dst, chan, pieces, 0);
}

int cs__phase_ar_nvls(cs__phase_t *ph, const cs__grp_t *g, int src, int chan, uint32_t pieces,
                      uint32_t depth)
{
    return over_phase_group(ph, g, CS__SW_AR, src, CS_BUF_OUT, chan, pieces, depth);
}

int cs__sw_sharp(cs__phase_t *ph, const int *ranks, int n, uint32_t lo, uint32_t len, int src,
                 int dst, int chan, uint32_t pieces, const int64_t *after, int64_t *rec)
{
    cs_sched_t *s = ph->s;
    uint32_t np = len < pieces ? len : pieces;
    if (np < 1)
        np = 1;
    int gid = n > 1 ? cs__sw_group(s, "sharp", ranks, n) : -1;
    if (n > 1 && gid < 0)
        return cs_sched_status(s);
    for (int m = 0; m < n && cs_sched_status(s) == CS_OK; m++) {
        int r = ranks[m];
        if (!cs__phase_mine(ph, r))
            continue;
        for (uint32_t q = 0; q < np && len > 0; q++) {
            uint32_t a = cs__split(lo, lo + len, np, q), b = cs__split(lo, lo + len, np, q + 1);
            cs__dl_t d = cs__dl(ph->front[r], after ? after[(size_t)m * np + q] : -1, -1);
            int64_t x = -1;
            if (n > 1)
                x = sw_step(ph, r, CS_SW_ALLREDUCE, gid, chan, src, dst, a, b - a, d);
            else if (src != dst)
                x = cs_copy(s, r, cs__grng(s, r, src, a, b - a), cs__grng(s, r, dst, a, b - a),
                            d.v, d.n);
            cs_deps_push(&ph->term, x);
            if (rec != NULL) /* in place on one rank: the piece is ready after `after` */
                rec[(size_t)m * np + q] = x >= 0 || after == NULL ? x : after[(size_t)m * np + q];
        }
        cs__phase_end(ph, r);
    }
    return cs_sched_status(s);
}
