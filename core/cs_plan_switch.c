/*
 * cs_plan_switch.c - switch operations of a plan (contract: cs_plan.h;
 * internal entry point: cs_plan_int.h).
 *
 * Every rank's switch queue on (group g, channel c) is gathered and sorted
 * by (g, c, rank); a run of equal (g, c) holds the queues of the members
 * that have switch steps there, in group order (a group's ranks are
 * increasing).  When every member of g has a queue, the first min(len)
 * steps of the queues are walked together: the k-th steps form operation
 * k, led by the first member's step.  A member without a queue, or the
 * excess of longer queues, leaves those steps unmatched: the verifier names
 * the member that lacks them.  Cost: O(Q log Q) for Q switch queues plus
 * O(switch steps).
 */
#include <stdlib.h>
#include <string.h>

#include "cs_plan_int.h"

typedef struct {
    uint32_t g, chan;
    int32_t rank;
    uint64_t x; /* queue number in p->queues */
} swq_t;

static int swq_cmp(const void *a_, const void *b_)
{
    const swq_t *a = a_, *b = b_;
    if (a->g != b->g)
        return a->g < b->g ? -1 : 1;
    if (a->chan != b->chan)
        return a->chan < b->chan ? -1 : 1;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* The steps of queue q of rank r from its e0-th on are unmatched. */
static void unmatched_from(cs_plan_t *p, uint32_t *indeg, int r, const cs_plan_queue_t *q,
                           uint32_t e0)
{
    p->nunmatched += q->len - e0;
    if (indeg == NULL)
        return;
    uint32_t i = q->first;
    for (uint32_t e = 0; e < q->len; e++, i = p->chan_next[p->base[r] + i])
        if (e >= e0)
            indeg[p->base[r] + i]++;
}

/* One (g, c): the member queues v[0..n) (n <= the group's size). */
static void match_run(cs_plan_t *p, uint32_t *indeg, const swq_t *v, uint32_t n, uint32_t *cur)
{
    const cs_group_t *grp = &p->s->groups[v[0].g];
    uint32_t mm = UINT32_MAX;
    for (uint32_t j = 0; j < n; j++) {
        const cs_plan_queue_t *q = &p->queues[v[j].x];
        mm = q->len < mm ? q->len : mm;
        cur[j] = q->first;
    }
    if (n < grp->n)
        mm = 0;
    for (uint32_t j = 0; j < n; j++) {
        cs_plan_queue_t *q = &p->queues[v[j].x];
        q->matched = mm;
        unmatched_from(p, indeg, v[j].rank, q, mm);
    }
    for (uint32_t e = 0; e < mm; e++) {
        uint64_t lead = p->base[v[0].rank] + cur[0];
        for (uint32_t j = 0; j < n; j++) {
            uint64_t gid = p->base[v[j].rank] + cur[j];
            p->partner[gid] = lead;
            p->swnext[gid] = j + 1 < n ? p->base[v[j + 1].rank] + cur[j + 1] : CS_PLAN_NOGID;
            if (indeg != NULL && j > 0)
                indeg[lead]++;
        }
        for (uint32_t j = 0; j < n; j++)
            cur[j] = p->chan_next[p->base[v[j].rank] + cur[j]];
    }
}

int cs__plan_match_switch(cs_plan_t *p, uint32_t *indeg)
{
    const cs_sched_t *s = p->s;
    uint64_t nq = p->qbase[p->nranks], m = 0;
    uint32_t gmax = 1;
    for (uint32_t g = 0; g < s->ngroups; g++)
        gmax = s->groups[g].n > gmax ? s->groups[g].n : gmax;
    p->swnext = malloc((p->nsteps ? p->nsteps : 1) * sizeof(*p->swnext));
    swq_t *v = malloc((nq ? nq : 1) * sizeof(*v));
    uint32_t *cur = malloc((size_t)gmax * sizeof(*cur));
    if (p->swnext == NULL || v == NULL || cur == NULL) {
        free(v);
        free(cur);
        return CS_ERR_NOMEM;
    }
    for (uint64_t g = 0; g < p->nsteps; g++)
        p->swnext[g] = CS_PLAN_NOGID;
    for (int r = 0; r < p->nranks; r++)
        for (uint64_t x = p->qbase[r]; x < p->qbase[r + 1]; x++)
            if (p->queues[x].swq)
                v[m++] = (swq_t){(uint32_t)p->queues[x].peer, p->queues[x].chan, r, x};
    qsort(v, m, sizeof(*v), swq_cmp);
    for (uint64_t a = 0, b; a < m; a = b) {
        for (b = a + 1; b < m && v[b].g == v[a].g && v[b].chan == v[a].chan;)
            b++;
        match_run(p, indeg, v + a, (uint32_t)(b - a), cur);
    }
    free(v);
    free(cur);
    return CS_OK;
}
