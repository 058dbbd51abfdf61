/*
 * cs_plan_gpu.c - global NCCL group levels of a schedule (cs__gpu_plan).
 *
 * NCCL runs the group calls of one rank one after another, and a group
 * completes only when every send and receive in it met its partner.  So
 * the engine must put both halves of every message in groups of the same
 * index on the two ranks: then group g of every rank completes once all
 * ranks finished their groups < g, and nothing can wait in a circle.
 * Every rank computes the same assignment from the whole schedule's plan
 * (cs_plan.h: partners and a global order in which a step comes after its
 * dependencies and a matched pair is one event), walking that order:
 *        message  g = max over both halves of max over deps ceil(H(d)/2),
 *                 H = 2g+1 for send/recv, 2g+2 for rrecv (its reduction);
 *        local    H = the smallest even number >= every H(d) (0 if none);
 *        nop      H = max H(d) (-1 if none).
 *   These are longest-path values: any topological order gives the same.
 *   Messages that do not pair up, or a schedule whose merged graph has a
 *   cycle (it deadlocks; the verifier rejects it), are CS_ERR_VERIFY
 *   naming the channel, or the rank and step.
 *
 * Within a group the engine orders the messages to each peer by (channel,
 * position on the channel), the same order on both sides, so one
 * communicator serves every channel.  Cost: O(total steps log) time and
 * memory on every rank.
 *
 * Copy merging (cs__gpu_merge_copies).  Generators split local copies in
 * chunks: allreduce dbtree at P = 1 is 32 copies in[i] -> out[i] with no
 * dependencies, broadcast chain 8.  On a GPU each is a cudaMemcpyAsync of
 * a few microseconds, so the engine moves such a run as one copy.  Copies
 * merge when they have the same dependency set, the same src and dst
 * buffers and the same shift dst.off - src.off, and their src ranges
 * continue each other: sorted by that key and src.off, maximal runs of
 * continuing ranges become one.  Why it is correct: steps with the same
 * dependency set become ready at the same moment, an engine may run ready
 * steps in any order or together, and the dependents of any member wait
 * for the merged copy (a member's dependents can only be later than it,
 * and its dependencies are earlier than the run's first step, so no cycle
 * appears).  The schedule itself is not changed.  Cost: O(copies log
 * copies) on one rank.
 */
#include <stdlib.h>
#include <string.h>

#include "cs_gpu.h"
#include "cs_hash.h"
#include "cs_plan.h"

static int32_t imax(int32_t a, int32_t b) { return a > b ? a : b; }

/* Messages that do not pair up: the first (by sender, receiver, channel)
 * queue with an unmatched element, as "n sends, m receives". */
static int unpaired(const cs_plan_t *p, cs_err_t *err)
{
    uint64_t best = UINT64_MAX, ns = 0, nr = 0;
    for (int r = 0; r < p->nranks; r++)
        for (uint64_t x = p->qbase[r]; x < p->qbase[r + 1]; x++) {
            const cs_plan_queue_t *q = &p->queues[x];
            if (q->matched == q->len)
                continue;
            uint64_t a = (uint64_t)(q->send ? r : q->peer), b = (uint64_t)(q->send ? q->peer : r);
            uint64_t key = (a << 42) | (b << 20) | q->chan;
            if (key < best) {
                best = key;
                ns = q->send ? q->len : q->matched;
                nr = q->send ? q->matched : q->len;
            }
        }
    return cs_err_set(err, CS_ERR_VERIFY, "rank %d -> %d channel %u: %llu sends, %llu receives",
                      (int)(best >> 42), (int)((best >> 20) & 0x3fffff), (unsigned)(best & 0xffff),
                      (unsigned long long)ns, (unsigned long long)nr);
}

/* A deadlock: the first step (by global id) whose dependencies and channel
 * predecessor ran but which never did, waiting for its partner. */
static int deadlock(const cs_plan_t *p, cs_err_t *err)
{
    const cs_sched_t *s = p->s;
    uint8_t *done = calloc(p->nsteps + 1, 1);
    if (done == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    for (uint64_t e = 0; e < p->norder; e++) {
        done[p->order[e]] = 1;
        if (p->partner[p->order[e]] != CS_PLAN_NOGID)
            done[p->partner[p->order[e]]] = 1;
    }
    int br = -1;
    uint32_t bi = 0;
    for (int r = 0; r < p->nranks && br < 0; r++) {
        cs_plan_rank_t v = cs_plan_rank_of(p, r);
        const uint8_t *dr = done + p->base[r];
        for (uint32_t q = 0; q < v.nqueues; q++)
            for (uint32_t i = v.queues[q].first, prev = CS_PLAN_NONE; i != CS_PLAN_NONE;
                 prev = i, i = v.chan_next[i]) {
                const cs_step_t *x = &s->ranks[r].steps[i];
                const uint32_t *d = cs_step_deps(&s->ranks[r], x);
                int ready = !dr[i] && (prev == CS_PLAN_NONE || dr[prev]);
                for (uint32_t j = 0; j < x->ndeps && ready; j++)
                    ready = dr[d[j]];
                if (ready && (br < 0 || i < bi))
                    br = r, bi = i;
            }
    }
    free(done);
    if (br < 0)
        return cs_err_set(err, CS_ERR_VERIFY, "the schedule deadlocks (%llu of %llu steps placed)",
                          (unsigned long long)(p->nsteps - p->nstuck),
                          (unsigned long long)p->nsteps);
    return cs_err_set(err, CS_ERR_VERIFY, "the schedule deadlocks: rank %d step %u waits for its "
                      "partner on rank %d forever", br, bi, s->ranks[br].steps[bi].peer);
}

/* The phase a message half proposes: ceil(max phase of its dependencies / 2). */
static int32_t cand(const cs_plan_t *p, const int32_t *h, int r, uint32_t i)
{
    const cs_rank_sched_t *rk = &p->s->ranks[r];
    const uint32_t *d = cs_step_deps(rk, &rk->steps[i]);
    int32_t hmax = -1;
    for (uint32_t j = 0; j < rk->steps[i].ndeps; j++)
        hmax = imax(hmax, h[p->base[r] + d[j]]);
    return (hmax + 1) / 2;
}

int cs__gpu_plan(const cs_sched_t *s, int rank, int32_t *group, int32_t *H, uint32_t *seq,
                 cs_err_t *err)
{
    cs_plan_t p;
    int swr;
    uint32_t swi;
    if (cs_sched_first_switch(s, &swr, &swi))
        return cs_err_set(err, CS_ERR_UNSUPPORTED,
                          "rank %d step %u: a switch step (in-network reduction) cannot run on "
                          "the GPU engine: it has no switch operation",
                          swr, swi);
    int st = cs_plan_init(&p, s, CS_PLAN_LOCAL | CS_PLAN_ORDER, NULL, NULL, err);
    if (st != CS_OK)
        return st;
    if (p.nunmatched > 0 || p.nstuck > 0) {
        st = p.nunmatched > 0 ? unpaired(&p, err) : deadlock(&p, err);
        cs_plan_fini(&p);
        return st;
    }
    int32_t *h = malloc((p.nsteps + 1) * sizeof(*h)), *grp = malloc((p.nsteps + 1) * sizeof(*grp));
    if (!h || !grp) {
        free(h), free(grp);
        cs_plan_fini(&p);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory planning %llu steps",
                          (unsigned long long)p.nsteps);
    }
    /* the plan's order places a step after its dependencies and a pair
     * once both halves' dependencies are placed */
    int r = 0;
    for (uint64_t e = 0; e < p.norder; e++) {
        uint64_t g = p.order[e], q = p.partner[g];
        uint32_t i;
        if (g < p.base[r] || g >= p.base[r + 1])
            cs_plan_locate(p.base, p.nranks, g, &r, &i);
        i = (uint32_t)(g - p.base[r]);
        const cs_step_t *x = &s->ranks[r].steps[i];
        if (q == CS_PLAN_NOGID) {
            const uint32_t *d = cs_step_deps(&s->ranks[r], x);
            int32_t hmax = -1;
            for (uint32_t j = 0; j < x->ndeps; j++)
                hmax = imax(hmax, h[p.base[r] + d[j]]);
            h[g] = x->kind == CS_STEP_NOP ? hmax : (hmax < 0 ? 0 : (hmax + 1) & ~1);
            grp[g] = -1;
            continue;
        }
        int pr = x->peer;
        uint32_t pi = (uint32_t)(q - p.base[pr]);
        int32_t lv = imax(cand(&p, h, r, i), cand(&p, h, pr, pi));
        grp[g] = grp[q] = lv;
        h[g] = 2 * lv + 1; /* the send */
        h[q] = s->ranks[pr].steps[pi].kind == CS_STEP_RRECV ? 2 * lv + 2 : 2 * lv + 1;
    }
    cs_plan_rank_t v = cs_plan_rank_of(&p, rank);
    for (uint32_t i = 0; i < v.nsteps; i++) {
        group[i] = grp[p.base[rank] + i];
        H[i] = h[p.base[rank] + i];
        seq[i] = 0;
    }
    for (uint32_t q = 0; q < v.nqueues; q++) {
        uint32_t k = 0;
        for (uint32_t i = v.queues[q].first; i != CS_PLAN_NONE; i = v.chan_next[i])
            seq[i] = k++;
    }
    free(h), free(grp);
    cs_plan_fini(&p);
    return CS_OK;
}

/* ---- copy merging ---------------------------------------------------------- */

typedef struct cand {
    uint16_t sbuf, dbuf;
    int64_t shift;       /* dst.off - src.off */
    uint64_t dh;         /* hash of the sorted, deduplicated dependency set */
    uint32_t doff, dn;   /* that set in the scratch array */
    uint32_t soff, n, step;
} cand_t;

static int u32_cmp(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

static int cand_key_cmp(const cand_t *a, const cand_t *b)
{
    if (a->sbuf != b->sbuf)
        return a->sbuf < b->sbuf ? -1 : 1;
    if (a->dbuf != b->dbuf)
        return a->dbuf < b->dbuf ? -1 : 1;
    if (a->shift != b->shift)
        return a->shift < b->shift ? -1 : 1;
    if (a->dh != b->dh)
        return a->dh < b->dh ? -1 : 1;
    return a->dn < b->dn ? -1 : a->dn > b->dn;
}

static int cand_cmp(const void *x, const void *y)
{
    const cand_t *a = x, *b = y;
    int c = cand_key_cmp(a, b);
    if (c)
        return c;
    if (a->soff != b->soff)
        return a->soff < b->soff ? -1 : 1;
    return a->step < b->step ? -1 : a->step > b->step;
}

int cs__gpu_merge_copies(const cs_rank_sched_t *rs, uint32_t *lead, cs_range_t *src,
                         cs_range_t *dst, uint32_t *merged, cs_err_t *err)
{
    uint32_t n = rs->nsteps, m = 0, nd = 0;
    for (uint32_t i = 0; i < n; i++)
        if (rs->steps[i].kind == CS_STEP_COPY)
            m++, nd += rs->steps[i].ndeps;
    cand_t *c = malloc(((size_t)m + 1) * sizeof(*c));
    uint32_t *sd = malloc(((size_t)nd + 1) * sizeof(*sd));
    if (!c || !sd) {
        free(c), free(sd);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory merging %u copies", m);
    }
    for (uint32_t i = 0; i < n; i++) {
        const cs_step_t *x = &rs->steps[i];
        lead[i] = i, src[i] = x->src, dst[i] = x->dst;
    }
    uint32_t k = 0, used = 0;
    for (uint32_t i = 0; i < n; i++) {
        const cs_step_t *x = &rs->steps[i];
        if (x->kind != CS_STEP_COPY)
            continue;
        uint32_t *d = sd + used, dn = 0;
        if (x->ndeps)
            memcpy(d, cs_step_deps(rs, x), x->ndeps * sizeof(*d));
        qsort(d, x->ndeps, sizeof(*d), u32_cmp);
        uint64_t h = CS_FNV64_OFFSET; /* FNV-1a over the set */
        for (uint32_t j = 0; j < x->ndeps; j++)
            if (j == 0 || d[j] != d[j - 1]) {
                d[dn++] = d[j];
                h = (h ^ d[j]) * CS_FNV64_PRIME;
            }
        c[k++] = (cand_t){x->src.buf, x->dst.buf, (int64_t)x->dst.off - (int64_t)x->src.off, h,
                          used, dn, x->src.off, x->src.n, i};
        used += dn;
    }
    qsort(c, m, sizeof(*c), cand_cmp);
    uint32_t gone = 0;
    for (uint32_t j = 0; j < m;) {
        uint32_t e = j + 1, end = c[j].soff + c[j].n, first = c[j].step;
        while (e < m && cand_key_cmp(&c[e], &c[j]) == 0 && c[e].soff == end &&
               memcmp(sd + c[e].doff, sd + c[j].doff, c[j].dn * sizeof(*sd)) == 0) {
            end += c[e].n;
            first = c[e].step < first ? c[e].step : first;
            e++;
        }
        if (e - j > 1) {
            for (uint32_t t = j; t < e; t++)
                lead[c[t].step] = first;
            src[first] = cs_rng(c[j].sbuf, c[j].soff, end - c[j].soff);
            dst[first] = cs_rng(c[j].dbuf, (uint32_t)((int64_t)c[j].soff + c[j].shift),
                                end - c[j].soff);
            gone += e - j - 1;
        }
        j = e;
    }
    free(c), free(sd);
    *merged = gone;
    return CS_OK;
}
