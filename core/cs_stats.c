/*
 * cs_stats.c - schedule statistics (contracts in cs_stats.h); the
 * alpha-beta event simulation is in cs_stats_ab.c.
 */
#include "cs_stats.h"

#include <stdlib.h>
#include <string.h>

#include "cs_graph.h"
#include "cs_grow.h"

/* ---- statistics ------------------------------------------------------------ */

/* cs_step_deps without pointer arithmetic on a rank with no dependencies
 * (deps may be NULL there). */
static const uint32_t *deps_of(const cs_rank_sched_t *rk, const cs_step_t *st)
{
    return st->ndeps ? cs_step_deps(rk, st) : NULL;
}

/* Longest chain of matched pairs along dependencies, over g's order. */
static uint32_t critical_rounds(const cs_graph_t *g, uint32_t *depth)
{
    uint32_t best = 0;
    for (uint64_t e = 0; e < g->norder; e++) {
        uint64_t gid = g->order[e], other = g->partner[gid];
        int r;
        uint32_t i, d = 0;
        cs_graph_locate(g, gid, &r, &i);
        const cs_rank_sched_t *rk = &g->s->ranks[r];
        const uint32_t *dp = deps_of(rk, &rk->steps[i]);
        for (uint32_t k = 0; k < rk->steps[i].ndeps; k++)
            d = depth[g->base[r] + dp[k]] > d ? depth[g->base[r] + dp[k]] : d;
        if (other == gid) { /* a switch operation: all its members, one event */
            for (uint64_t m = g->swnext[gid]; m != CS_NONE; m = g->swnext[m]) {
                int mr;
                uint32_t mi;
                cs_graph_locate(g, m, &mr, &mi);
                const cs_rank_sched_t *mk = &g->s->ranks[mr];
                const uint32_t *md = deps_of(mk, &mk->steps[mi]);
                for (uint32_t k = 0; k < mk->steps[mi].ndeps; k++)
                    d = depth[g->base[mr] + md[k]] > d ? depth[g->base[mr] + md[k]] : d;
            }
            d++;
            for (uint64_t m = g->swnext[gid]; m != CS_NONE; m = g->swnext[m])
                depth[m] = d;
        } else if (cs_kind_is_comm(rk->steps[i].kind) && other != CS_NONE) {
            int pr;
            uint32_t pi;
            cs_graph_locate(g, other, &pr, &pi);
            const cs_rank_sched_t *pk = &g->s->ranks[pr];
            const uint32_t *pd = deps_of(pk, &pk->steps[pi]);
            for (uint32_t k = 0; k < pk->steps[pi].ndeps; k++)
                d = depth[g->base[pr] + pd[k]] > d ? depth[g->base[pr] + pd[k]] : d;
            d++;
            depth[other] = d;
        }
        depth[gid] = d;
        best = d > best ? d : best;
    }
    return best;
}

int cs_stats_compute(const cs_sched_t *s, cs_stats_t *out, cs_err_t *err)
{
    if (s == NULL || out == NULL)
        return cs_err_set(err, CS_ERR_INVAL, "stats: no schedule");
    int P = s->desc.nranks, st;
    cs_stats_t r = {0};
    cs_graph_t g;
    uint32_t *depth = NULL;
    r.ranks = calloc((size_t)P, sizeof(*r.ranks));
    if (r.ranks == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "stats: %d ranks", P);
    st = cs_graph_init(&g, s, err);
    if (st != CS_OK)
        goto fail_graph;
    depth = calloc(g.nsteps ? g.nsteps : 1, sizeof(*depth));
    if (depth == NULL) {
        st = cs_err_set(err, CS_ERR_NOMEM, "stats: %llu steps", (unsigned long long)g.nsteps);
        goto fail;
    }
    double C = (double)s->nchunks;
    for (int q = 0; q < P; q++) {
        const cs_rank_sched_t *rk = &s->ranks[q];
        cs_rank_stats_t *rs = &r.ranks[q];
        uint64_t sent = 0, recvd = 0, swup = 0, swdown = 0;
        rs->steps = rk->nsteps;
        for (uint32_t i = 0; i < rk->nsteps; i++) {
            const cs_step_t *sp = &rk->steps[i];
            switch (sp->kind) {
            case CS_STEP_SEND:
                rs->sends++;
                sent += sp->src.n;
                break;
            case CS_STEP_RRECV:
                rs->reduces++;
                /* fall through */
            case CS_STEP_RECV:
                rs->recvs++;
                recvd += sp->dst.n;
                break;
            case CS_STEP_REDUCE:
                rs->reduces++;
                break;
            case CS_STEP_COPY:
                rs->copies++;
                break;
            case CS_STEP_SWITCH:
                rs->switches++;
                swup += sp->src.n;
                swdown += sp->dst.n;
                if (g.partner[g.base[q] + i] == g.base[q] + i && sp->op < CS_SW_COUNT)
                    r.sw_ops[sp->op]++;
                break;
            default:
                break;
            }
        }
        rs->sw_up = (double)swup / C;
        rs->sw_down = (double)swdown / C;
        r.max_sw_up = rs->sw_up > r.max_sw_up ? rs->sw_up : r.max_sw_up;
        r.max_sw_down = rs->sw_down > r.max_sw_down ? rs->sw_down : r.max_sw_down;
        rs->sent = (double)sent / C;
        rs->recvd = (double)recvd / C;
        r.total_sent += rs->sent;
        r.max_sent = rs->sent > r.max_sent ? rs->sent : r.max_sent;
        r.max_recvd = rs->recvd > r.max_recvd ? rs->recvd : r.max_recvd;
        r.max_steps = rs->steps > r.max_steps ? rs->steps : r.max_steps;
    }
    r.rounds = critical_rounds(&g, depth);
    free(depth);
    cs_graph_fini(&g);
    *out = r;
    return CS_OK;
fail:
    cs_graph_fini(&g);
fail_graph:
    free(r.ranks);
    return st;
}

void cs_stats_fini(cs_stats_t *st)
{
    if (st == NULL)
        return;
    free(st->ranks);
    st->ranks = NULL;
}
