/*
 * cs_sim_rank.c - the rank actor: interprets one rank's DAG in SimGrid.
 *
 * State per rank, for one instance:
 *   op[i]     the compiled step (cs_sim_int.h cs__op_t): events it still
 *             waits for (dependencies + channel order, reset from npend0
 *             when the instance starts), its bytes for this instance, its
 *             mailbox, successors and channel successor.  Only this compact
 *             array is touched while the rank runs (the schedule is read
 *             once per instance to fill the bytes): a context switch
 *             between actors evicts most of the cache, so the bytes
 *             touched per step decide the loop's speed;
 *   a FIFO of issuable steps (each step enters it exactly once);
 *   a small set of outstanding SimGrid comms (puts and gets), tagged with
 *             their step index;
 *   the device's compute stream: reductions (rrecv's combine, reduce, and
 *             copies when they cost) run one after another, each taking
 *             bytes / host speed, so the stream is a FIFO of (end time,
 *             step) computed when the reduction is queued.  No SimGrid
 *             activity models it: the rank wakes up for the head's end
 *             through the timeout of its wait, which costs a timer instead
 *             of an exec activity per reduction (execs made the whole
 *             simulation about 35% slower).  Ranks sharing a host through a
 *             map have one stream each.
 * Loop: issue everything issuable (issuing a receive releases the next
 * receive of its channel; a send releases the next send of its channel when
 * it completes; with a port limit, sends beyond it wait in a FIFO); then wait for the first outstanding
 * activity to finish (cs__sg_wait_any over that small set) and release the
 * successors of the steps it finishes.  The set holds what the rank has in
 * flight, usually a handful, so a completion costs O(outstanding), never
 * O(ranks).
 *
 * The run-wide work arrays (queue, post times, payload slots) are
 * allocated by the driver before the simulation, indexed by global step id,
 * so a rank actor allocates only its outstanding set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>

#include "cs_log.h"
#include "cs_sim_int.h"

typedef struct rank_ctx {
    cs__inst_t *I;
    const cs__prog_t *p;
    const cs_rank_sched_t *rk;
    const cs_sim_observer_t *obs;
    int r;
    uint64_t b;       /* global id of step 0 */
    cs__op_t *op;     /* the rank's compiled steps (npend, bytes live here) */
    const uint32_t *succ; /* the rank's successor lists */
    uint32_t *q;      /* slice: issuable FIFO */
    uint32_t qh, qt;
    uint32_t *sq;     /* slice: sends waiting for a port (FIFO) */
    uint32_t sqh, sqt;
    int ports, inflight;
    uint32_t done;
    double *post;     /* run-wide, NULL without observer */
    void **pay;       /* run-wide, NULL without observer */
    void *sink;       /* payload slot when nobody reads it */
    cs__sg_act_t **acts;
    uint64_t *tags;
    size_t nact, cap;
    void *wcache;     /* cs__sg_wait_any's vector */
    double speed;
    double stream_free;   /* when the compute stream becomes idle */
    double *rq_end;       /* stream FIFO: end times and steps */
    uint32_t *rq_step;
    size_t rqh, rqt, rqcap;
    int copy_cost;
    int err;
} rank_ctx_t;

extern uint32_t *cs__work_q, *cs__work_sq;
extern double *cs__work_post;
extern void **cs__work_pay;

static uint64_t range_bytes(const rank_ctx_t *c, const cs_range_t *rg)
{
    const cs_sched_t *s = c->p->s;
    return cs_range_elems(s, &c->rk->bufs[rg->buf], c->I->count, rg->off, rg->n) * c->I->esize;
}

static uint64_t step_bytes(const rank_ctx_t *c, const cs_step_t *st)
{
    switch (st->kind) {
    case CS_STEP_SEND:
        return range_bytes(c, &st->src);
    case CS_STEP_RECV:
    case CS_STEP_RRECV:
    case CS_STEP_REDUCE:
    case CS_STEP_COPY:
        return range_bytes(c, &st->dst);
    default:
        return 0;
    }
}

static void finished(rank_ctx_t *c, uint64_t tag);

static void complete(rank_ctx_t *c, uint32_t i);

static void add_act(rank_ctx_t *c, cs__sg_act_t *a, uint64_t tag)
{
    if (c->nact == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        cs__sg_act_t **na = realloc(c->acts, cap * sizeof(*na));
        uint64_t *nt = na ? realloc(c->tags, cap * sizeof(*nt)) : NULL;
        if (!na || !nt) {
            /* keep whichever grew; fall back to waiting on this one now */
            if (na)
                c->acts = na;
            c->err = CS_ERR_NOMEM;
            cs__sg_wait_any(&a, 1, -1.0, &c->wcache);
            finished(c, tag);
            return;
        }
        c->acts = na;
        c->tags = nt;
        c->cap = cap;
    }
    c->acts[c->nact] = a;
    c->tags[c->nact] = tag;
    c->nact++;
}

static inline void release(rank_ctx_t *c, uint32_t i)
{
    if (--c->op[i].npend == 0)
        c->q[c->qt++] = i;
}

static void complete(rank_ctx_t *c, uint32_t i)
{
    const cs__op_t *o = &c->op[i];
    const uint32_t *sc = c->succ + o->succ;
    c->done++;
    for (uint32_t k = 0; k < o->nsucc; k++)
        release(c, sc[k]);
    if (c->obs && c->obs->step) {
        const cs_step_t *st = &c->rk->steps[i];
        cs_sim_step_rec_t rec = {c->r, i, st->kind, st->peer, (uint64_t)o->bytes,
                                 c->post[c->b + i], simgrid_get_clock()};
        c->obs->step(c->obs->ctx, c->I->index, &rec);
    }
}

/* Queue a computation of `flops` bytes for step i on the stream, or
 * complete the step now when it costs nothing. */
static void compute(rank_ctx_t *c, uint32_t i, double flops)
{
    if (!(flops > 0 && c->speed > 0)) {
        complete(c, i);
        return;
    }
    if (c->rqh == c->rqt)
        c->rqh = c->rqt = 0;
    if (c->rqt == c->rqcap) {
        size_t cap = c->rqcap ? c->rqcap * 2 : 8;
        double *ne = realloc(c->rq_end, cap * sizeof(*ne));
        if (ne)
            c->rq_end = ne;
        uint32_t *ns = ne ? realloc(c->rq_step, cap * sizeof(*ns)) : NULL;
        if (!ne || !ns) {
            c->err = CS_ERR_NOMEM;
            complete(c, i);
            return;
        }
        c->rq_step = ns;
        c->rqcap = cap;
    }
    double now = simgrid_get_clock();
    double start = c->stream_free > now ? c->stream_free : now;
    c->stream_free = start + flops / c->speed;
    c->rq_end[c->rqt] = c->stream_free;
    c->rq_step[c->rqt] = i;
    c->rqt++;
}

static void issue(rank_ctx_t *c, uint32_t i)
{
    cs__op_t *o = &c->op[i];
    switch (o->kind) {
    case CS_STEP_SEND: {
        if (c->ports > 0 && c->inflight >= c->ports) {
            c->sq[c->sqt++] = i;
            return;
        }
        if (c->post)
            c->post[c->b + i] = simgrid_get_clock();
        c->inflight++;
        void *payload = (void *)(uintptr_t)(i + 1); /* SimGrid refuses NULL */
        add_act(c, cs__sg_put(o->mb, payload, o->bytes), (uint64_t)i);
        break;
    }
    case CS_STEP_RECV:
    case CS_STEP_RRECV: {
        void **slot = &c->sink;
        if (c->post) {
            c->post[c->b + i] = simgrid_get_clock();
            slot = &c->pay[c->b + i];
        }
        add_act(c, cs__sg_get(o->mb, slot), (uint64_t)i);
        if (o->chan_next != CS__NONE32)
            release(c, o->chan_next);
        break;
    }
    case CS_STEP_REDUCE:
        if (c->post)
            c->post[c->b + i] = simgrid_get_clock();
        compute(c, i, o->bytes);
        break;
    case CS_STEP_COPY:
        if (c->post)
            c->post[c->b + i] = simgrid_get_clock();
        compute(c, i, c->copy_cost ? 2.0 * o->bytes : 0.0);
        break;
    default:
        if (c->post)
            c->post[c->b + i] = simgrid_get_clock();
        complete(c, i);
        break;
    }
}

static void report_xfer(rank_ctx_t *c, uint32_t i)
{
    const cs_step_t *st = &c->rk->steps[i];
    uint64_t g = c->b + i;
    uint32_t sstep = (uint32_t)((uintptr_t)c->pay[g] - 1);
    double spost = c->post[c->p->base[st->peer] + sstep];
    double rpost = c->post[g];
    cs__run_t *run = c->I->run;
    cs_sim_xfer_rec_t rec = {st->peer, c->r, run->host_names[st->peer], run->host_names[c->r],
                             sstep, i, st->chan, (uint64_t)c->op[i].bytes,
                             spost > rpost ? spost : rpost, simgrid_get_clock()};
    c->obs->xfer(c->obs->ctx, c->I->index, &rec);
}

static void finished(rank_ctx_t *c, uint64_t tag)
{
    uint32_t i = (uint32_t)tag;
    const cs__op_t *o = &c->op[i];
    if (o->kind == CS_STEP_SEND) {
        c->inflight--;
        if (o->chan_next != CS__NONE32)
            release(c, o->chan_next);
        if (c->sqh < c->sqt)
            issue(c, c->sq[c->sqh++]); /* a port is free now */
    } else {
        if (c->obs && c->obs->xfer)
            report_xfer(c, i);
        if (o->kind == CS_STEP_RRECV) {
            compute(c, i, o->bytes);
            return;
        }
    }
    complete(c, i);
}

void cs__rank_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    cs__rank_arg_t *a = sg_actor_self_get_data();
    cs__inst_t *I = a->inst;
    rank_ctx_t c;
    memset(&c, 0, sizeof(c));
    c.I = I;
    c.p = I->prog;
    c.r = a->rank;
    c.rk = &c.p->s->ranks[c.r];
    c.obs = I->run->opts->obs;
    c.b = c.p->base[c.r];
    c.op = c.p->ops + c.b;
    c.succ = c.p->succ + c.p->succ_base[c.r];
    c.q = cs__work_q + c.b;
    c.sq = cs__work_sq ? cs__work_sq + c.b : NULL; /* only with a port limit */
    c.ports = I->run->opts->ports;
    c.post = cs__work_post;
    c.pay = cs__work_pay;
    c.speed = sg_host_get_speed(sg_host_self());
    c.copy_cost = I->run->opts->copy_cost;
    uint32_t n = c.rk->nsteps;
    for (uint32_t i = 0; i < n; i++) {
        cs__op_t *o = &c.op[i];
        o->npend = o->npend0;
        o->bytes = (double)step_bytes(&c, &c.rk->steps[i]);
        if (o->npend == 0)
            c.q[c.qt++] = i;
    }
    while (c.done < n) {
        while (c.qh < c.qt)
            issue(&c, c.q[c.qh++]);
        if (c.done == n)
            break;
        if (c.rqh < c.rqt) {
            /* the stream's head ends first, or a comm before it */
            double wait = c.rq_end[c.rqh] - simgrid_get_clock();
            long k = -1;
            if (wait > 0)
                k = cs__sg_wait_any(c.acts, c.nact, wait, &c.wcache);
            if (k < 0) {
                complete(&c, c.rq_step[c.rqh++]);
                continue;
            }
            uint64_t tag = c.tags[k];
            c.nact--;
            c.acts[k] = c.acts[c.nact];
            c.tags[k] = c.tags[c.nact];
            finished(&c, tag);
            continue;
        }
        if (c.nact == 0) {
            CS_ERROR("sim", "rank %d: %u of %u steps can never be issued", c.r, n - c.done, n);
            c.err = CS_ERR_INTERNAL;
            break;
        }
        long k = cs__sg_wait_any(c.acts, c.nact, -1.0, &c.wcache);
        if (k < 0) {
            c.err = CS_ERR_INTERNAL;
            break;
        }
        uint64_t tag = c.tags[k];
        c.nact--;
        c.acts[k] = c.acts[c.nact];
        c.tags[k] = c.tags[c.nact];
        finished(&c, tag);
    }
    I->finish[c.r] = simgrid_get_clock();
    if (c.err)
        I->run->failed = c.err;
    else
        I->done_ranks++;
    cs__sg_wait_cache_free(c.wcache);
    free(c.acts);
    free(c.tags);
    free(c.rq_end);
    free(c.rq_step);
    sg_barrier_wait(a->bar);
}
