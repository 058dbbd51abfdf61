/*
 * cs_verify_switch.c - the structure of switch operations (cs_verify.h):
 *
 *   - every operation's members agree with its leader (the step of the
 *     group's first member): the same operation ("switch"), the same number
 *     of chunks and chunk shape ("size");
 *   - a reduce has exactly one reader (a member with a destination), a
 *     multicast exactly one writer (a member with a source) ("switch");
 *   - a member missing: on (group, channel), a member with fewer switch
 *     steps than the others leaves the excess of every member unmatched;
 *     one "unmatched" finding per (group, channel) names it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cs_graph_int.h"
#include "cs_verify_int.h"

/* The range that gives a switch step its length: src, else dst. */
static const cs_range_t *main_range(const cs_step_t *st)
{
    return st->src.n > 0 ? &st->src : &st->dst;
}

static void check_op(cs__vctx_t *v, uint64_t lead)
{
    const cs_sched_t *s = v->s;
    const cs_graph_t *g = v->g;
    uint32_t k = cs_sched_block_chunks(s), nsrc = 0, ndst = 0, reported = 0;
    int lr;
    uint32_t li;
    cs_graph_locate(g, lead, &lr, &li);
    const cs_step_t *ls = &s->ranks[lr].steps[li];
    const cs_range_t *lrg = main_range(ls);
    uint32_t lshape = (s->ranks[lr].bufs[lrg->buf].base + lrg->off) % k;
    char a[96], b[96], ra[64], rb[64];
    for (uint64_t m = lead; m != CS_NONE; m = g->swnext[m]) {
        int r;
        uint32_t i;
        cs_graph_locate(g, m, &r, &i);
        const cs_step_t *st = &s->ranks[r].steps[i];
        const cs_range_t *rg = main_range(st);
        nsrc += st->src.n > 0;
        ndst += st->dst.n > 0;
        if (reported)
            continue;
        if (st->op != ls->op) {
            reported = 1;
            cs__vfind(v, "switch", r, i, -1,
                      "rank %d %s is a switch %s, but rank %d %s of the same switch operation "
                      "is a switch %s: the members disagree",
                      r, cs__vstep(s, r, i, a, sizeof(a)), cs_swop_name((cs_swop_t)st->op), lr,
                      cs__vstep(s, lr, li, b, sizeof(b)), cs_swop_name((cs_swop_t)ls->op));
        } else if (rg->n != lrg->n ||
                   (s->ranks[r].bufs[rg->buf].base + rg->off) % k != lshape) {
            reported = 1;
            cs__vfind(v, "size", r, i, -1,
                      "rank %d %s uses %s but rank %d %s of the same switch operation uses "
                      "%s: %s",
                      r, cs__vstep(s, r, i, a, sizeof(a)),
                      cs__vrange(s, r, rg->buf, rg->off, rg->n, ra, sizeof(ra)), lr,
                      cs__vstep(s, lr, li, b, sizeof(b)),
                      cs__vrange(s, lr, lrg->buf, lrg->off, lrg->n, rb, sizeof(rb)),
                      rg->n != lrg->n ? "the chunk counts differ" : "the chunk shapes differ");
        }
    }
    if (reported)
        return;
    if (ls->op == CS_SW_REDUCE && ndst != 1)
        cs__vfind(v, "switch", lr, li, -1,
                  "rank %d %s: its switch reduce has %u readers (members with a destination); "
                  "exactly one member reads the reduced range",
                  lr, cs__vstep(s, lr, li, a, sizeof(a)), ndst);
    if (ls->op == CS_SW_MULTICAST && nsrc != 1)
        cs__vfind(v, "switch", lr, li, -1,
                  "rank %d %s: its switch multicast has %u writers (members with a source); "
                  "exactly one member writes",
                  lr, cs__vstep(s, lr, li, a, sizeof(a)), nsrc);
}

/* Switch steps of `rank` on (group, chan), and the first unmatched one. */
static uint32_t count_on(const cs_sched_t *s, const cs_graph_t *g, int rank, int32_t group,
                         uint16_t chan, int64_t *first_unmatched)
{
    const cs_rank_sched_t *rk = &s->ranks[rank];
    uint32_t n = 0;
    *first_unmatched = -1;
    for (uint32_t i = 0; i < rk->nsteps; i++) {
        const cs_step_t *st = &rk->steps[i];
        if (st->kind != CS_STEP_SWITCH || st->peer != group || st->chan != chan)
            continue;
        n++;
        if (*first_unmatched < 0 && g->partner[g->base[rank] + i] == CS_NONE)
            *first_unmatched = i;
    }
    return n;
}

static int key_cmp(const void *a_, const void *b_)
{
    uint64_t a = *(const uint64_t *)a_, b = *(const uint64_t *)b_;
    return a < b ? -1 : a > b;
}

/* One finding per (group, channel) with unmatched switch steps: the member
 * with the fewest steps there is missing from the others' operations. */
static int check_missing(cs__vctx_t *v)
{
    const cs_sched_t *s = v->s;
    const cs_graph_t *g = v->g;
    uint64_t n = 0, *keys = NULL;
    size_t cap = 0;
    for (int r = 0; r < s->desc.nranks; r++)
        for (uint32_t i = 0; i < s->ranks[r].nsteps; i++) {
            const cs_step_t *st = &s->ranks[r].steps[i];
            if (st->kind != CS_STEP_SWITCH || g->partner[g->base[r] + i] != CS_NONE)
                continue;
            if (n == cap) {
                size_t nc = cap ? 2 * cap : 16;
                uint64_t *nk = realloc(keys, nc * sizeof(*nk));
                if (nk == NULL) {
                    free(keys);
                    return CS_ERR_NOMEM;
                }
                keys = nk;
                cap = nc;
            }
            keys[n++] = ((uint64_t)(uint32_t)st->peer << 16) | st->chan;
        }
    if (n > 1)
        qsort(keys, n, sizeof(*keys), key_cmp);
    char a[96];
    for (uint64_t e = 0; e < n; e++) {
        if (e > 0 && keys[e] == keys[e - 1])
            continue;
        int32_t group = (int32_t)(keys[e] >> 16);
        uint16_t chan = (uint16_t)keys[e];
        const cs_group_t *gr = &s->groups[group];
        uint32_t lo = UINT32_MAX, hi = 0;
        int lo_rank = -1, hi_rank = -1;
        int64_t hi_step = -1, fu;
        for (uint32_t j = 0; j < gr->n; j++) {
            uint32_t c = count_on(s, g, gr->members[j], group, chan, &fu);
            if (c < lo)
                lo = c, lo_rank = gr->members[j];
            if (c > hi)
                hi = c, hi_rank = gr->members[j], hi_step = fu;
        }
        if (hi_step < 0)
            continue;
        cs__vfind(v, "unmatched", hi_rank, hi_step, -1,
                  "rank %d %s: no matching switch step on rank %d, a member of group '%s': "
                  "rank %d has %u switch step%s on the group's channel %u, rank %d has %u (a "
                  "member is missing from the switch operation)",
                  hi_rank, cs__vstep(s, hi_rank, (uint32_t)hi_step, a, sizeof(a)), lo_rank,
                  gr->name, lo_rank, lo, lo == 1 ? "" : "s", chan, hi_rank, hi);
    }
    free(keys);
    return CS_OK;
}

int cs__verify_switch(cs__vctx_t *v)
{
    const cs_sched_t *s = v->s;
    const cs_graph_t *g = v->g;
    for (int r = 0; r < s->desc.nranks; r++)
        for (uint32_t i = 0; i < s->ranks[r].nsteps; i++) {
            uint64_t x = g->base[r] + i;
            if (s->ranks[r].steps[i].kind == CS_STEP_SWITCH && g->partner[x] == x)
                check_op(v, x);
        }
    return check_missing(v);
}
