/*
 * cs_engine_plan.c - what the live engine works out once per schedule, at
 * create time (see cs_engine_int.h): successor lists and the chain of each
 * channel, read from the rank's plan (cs_plan.h), and deferred copies.
 *
 * Deferred copies.  Reduce-scatters start with "copy in -> out, then
 * recv-reduce into out" (the input is never written).  Done literally that
 * is a pass over the output before the first reduction can start (measured:
 * a 2 MiB copy held back every reduction of a 4 MiB 2-rank ring for 0.6 ms
 * over tcp).  So a copy from `in` whose only successors are recv-reduces
 * that cover its destination exactly, with no step between them in
 * schedule order touching their ranges, is deferred: it completes at once,
 * and each of those recv-reduces copies its slice of `in` just before
 * reducing into it (the slice is in cache then).  The values are the same
 * bit for bit; see cs__engine_fuse_copies for why the check is exact.
 */
#include <stdlib.h>

#include "cs_engine_int.h"

int cs__engine_plan(cs_engine_t *e, cs_err_t *err)
{
    int st = cs_plan_rank_build(&e->plan, e->s, e->rank, err);
    if (st != CS_OK)
        return st;
    const cs_plan_rank_t *p = &e->plan;
    e->succ = p->succ;
    for (uint32_t i = 0; i < e->n; i++) {
        estep_t *x = &e->st[i];
        x->succ_off = p->succ_off[i];
        x->nsucc = cs_plan_nsucc(p, i);
        x->chan_prev = x->chan_next = -1;
    }
    for (uint32_t q = 0; q < p->nqueues; q++) {
        int32_t prev = -1;
        uint32_t seq = 0;
        for (uint32_t i = p->queues[q].first; i != CS_PLAN_NONE; i = p->chan_next[i]) {
            estep_t *x = &e->st[i];
            x->seq = seq++;
            x->chan_len = p->queues[q].len;
            x->chan_prev = prev;
            x->chan_next = p->chan_next[i] == CS_PLAN_NONE ? -1 : (int32_t)p->chan_next[i];
            prev = (int32_t)i;
        }
    }
    return CS_OK;
}

static int ranges_overlap(const cs_range_t *x, const cs_range_t *y)
{
    return x->buf == y->buf && x->off < y->off + y->n && y->off < x->off + x->n;
}

/* Does step k read or write any chunk of range r? */
static int step_touches(const cs_step_t *k, const cs_range_t *r)
{
    switch (k->kind) {
    case CS_STEP_SEND:
        return ranges_overlap(&k->src, r);
    case CS_STEP_RECV:
    case CS_STEP_RRECV:
        return ranges_overlap(&k->dst, r);
    case CS_STEP_REDUCE:
    case CS_STEP_COPY:
        return ranges_overlap(&k->src, r) || ranges_overlap(&k->dst, r);
    default:
        return 0;
    }
}

#define FUSE_SPAN 4096 /* steps scanned between a copy and its recv-reduces */

/* Deferred copies (see the top of the file).  Why the check is exact: a
 * verified schedule orders every two steps that touch a chunk when one of
 * them writes it, and dependencies point to earlier steps, so schedule order
 * extends the dependency order.  A step touching chunk c of recv-reduce R
 * with an index between copy X and R is therefore ordered after X and
 * before R, exactly the steps that would see the copy's value or change it
 * before R; with none, only R sees it.  `in` must be written by no step. */
void cs__engine_fuse_copies(cs_engine_t *e)
{
    const cs_rank_sched_t *rs = e->rs;
    for (uint32_t i = 0; i < e->n; i++)
        e->st[i].fused = -1;
    for (uint32_t i = 0; i < e->n; i++) {
        const cs_step_t *x = &rs->steps[i];
        if (x->kind != CS_STEP_SEND && x->kind != CS_STEP_NOP && x->dst.buf == CS_BUF_IN)
            return; /* something writes the input: keep every copy */
    }
    for (uint32_t i = 0; i < e->n; i++) {
        const cs_step_t *x = &rs->steps[i];
        estep_t *t = &e->st[i];
        if (x->kind != CS_STEP_COPY || x->src.buf != CS_BUF_IN || t->nsucc == 0 ||
            rs->bufs[x->src.buf].base + x->src.off != rs->bufs[x->dst.buf].base + x->dst.off)
            continue;
        uint64_t covered = 0;
        int ok = 1;
        for (uint32_t j = 0; j < t->nsucc && ok; j++) {
            uint32_t q = e->succ[t->succ_off + j];
            const cs_step_t *y = &rs->steps[q];
            ok = y->kind == CS_STEP_RRECV && y->dst.buf == x->dst.buf &&
                 y->dst.off >= x->dst.off && y->dst.off + y->dst.n <= x->dst.off + x->dst.n &&
                 q - i <= FUSE_SPAN && e->st[q].fused < 0;
            /* (this also keeps the recv-reduces of one copy disjoint) */
            for (uint32_t k = i + 1; ok && k < q; k++)
                ok = !step_touches(&rs->steps[k], &y->dst);
            covered += y->dst.n;
        }
        if (!ok || covered != x->dst.n) /* disjoint (checked above) and covering */
            continue;
        t->deferred = 1;
        for (uint32_t j = 0; j < t->nsucc; j++)
            e->st[e->succ[t->succ_off + j]].fused = (int32_t)i;
    }
}
