/*
 * cs_sim_rank.c - the rank actor: interprets one rank's DAG in SimGrid.
 *
 * State per rank, for one instance:
 *   op[i]     the compiled step (cs_sim_int.h cs__op_t): events it still
 *             waits for (dependencies + channel order, set when the
 *             instance starts), its bytes for this instance, its mailbox,
 *             successors and channel successor;
 *   a FIFO of issuable steps (each step enters it exactly once);
 *   the outstanding SimGrid comms (puts and gets), each with a ticket: its
 *             step and where the step's successors are;
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
 * it completes; with a port limit, sends beyond it wait in a FIFO); then wait
 * for the first outstanding activity to finish (cs__sg_wait_any over that
 * small set) or the stream's head to end, and release the successors of the
 * steps that finished.  The set holds what the rank has in flight, usually a
 * handful, so a completion costs O(outstanding), never O(ranks).
 *
 * Memory: between two turns of a rank, the turns of every other rank (1535
 * of them on 256 Summit nodes) evict all of its data from the caches, so
 * what a turn costs is mostly its cache misses, and one miss leading to the
 * address of the next (ticket -> step -> successors) costs a full memory
 * latency each.  Hence: the state a turn uses sits in the first lines of
 * rank_ctx_t, with small inline arrays for the outstanding set, the FIFO and
 * the stream; and on waking up the rank prefetches, all at once, those lines
 * and the steps and successor lists of every outstanding ticket and of the
 * stream's head, which are the only ones a wake-up can finish (tickets carry
 * the successor offset so that both prefetches go out together).  The steps
 * of the first tickets are prefetched from addresses kept in registers
 * across the wait (wait_turn), so they do not wait for the context's line;
 * measured with perf at 768 ranks, the interpreter's share of the samples
 * went from 12 % of SimGrid's to 8 %.  The gets' payload goes to one slot
 * shared by all ranks when no observer reads it (SimGrid writes it when
 * the comm completes: a slot per rank was a miss per receive).
 * The FIFO overflows into a run-wide slice of nsteps entries, the other
 * arrays onto the heap.  The run-wide arrays (FIFO slices, port FIFO, post
 * times, payload slots) are allocated by the driver, indexed by global step
 * id.
 */
#include <math.h>
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

#define ACT_INL 4  /* outstanding comms held inline */
#define Q_INL 16   /* issuable FIFO entries held inline */
#define RQ_INL 4   /* stream entries held inline */

/* An outstanding comm: its step, and the offset of its successor list
 * (CS__NONE32 when they are held in the step): both prefetched on waking. */
typedef struct ticket {
    uint32_t step;
    uint32_t succ;
} ticket_t;

/* A reduction on the compute stream. */
typedef struct job {
    double end;
    uint32_t step;
    uint32_t succ;
} job_t;

typedef struct rank_ctx {
    /* hot: lines 0-1, read on every wake-up */
    cs__op_t *op;         /* the rank's compiled steps (npend, bytes live here) */
    const uint32_t *succ; /* the rank's successor lists (steps with many) */
    sg_mailbox_t *mbt;    /* the rank's mailboxes (cs__op_t mbx) */
    ticket_t *tk;         /* tickets of the outstanding comms (tk_inl or heap) */
    uint32_t *q;          /* issuable FIFO: q_inl, or the run-wide slice */
    job_t *rq;            /* stream FIFO (rq_inl or heap) */
    uint32_t nact, acap;
    cs__sg_set_t set;     /* the outstanding comms, in ticket order */
    uint32_t qh, qt, qcap;
    uint32_t rqh, rqt, rqcap;
    uint32_t done, n;
    double stream_free;   /* when the compute stream becomes idle */
    double speed;
    const cs_sim_observer_t *obs;
    double *post;         /* run-wide, NULL without observer */
    uint32_t *sq;         /* slice: sends waiting for a port (FIFO) */
    uint32_t sqh, sqt;
    int ports, inflight;
    int copy_cost;
    int err;
    /* lines 2-5: inline storage */
    ticket_t tk_inl[ACT_INL];
    uint32_t q_inl[Q_INL];
    job_t rq_inl[RQ_INL];
    /* cold */
    uint32_t *qslice;     /* run-wide FIFO slice, nsteps entries */
    cs__inst_t *I;
    cs__prog_t *p;
    const cs_rank_sched_t *rk;
    int r;
    uint64_t b;           /* global id of step 0 */
    void **pay;           /* run-wide, NULL without observer */
    const unsigned char *mcls; /* model nccl: the rank's mailboxes' route classes */
    const cs_sim_nccl_t *nccl; /* model nccl: the instance's costs */
    double *last;         /* restarts (run->rs_bytes): per peer, when the last message to it
                             ended (the instance's start before the first) */
} rank_ctx_t;

/* lines of the hot part and the inline arrays, prefetched on waking up */
#define CTX_HOT_LINES ((offsetof(rank_ctx_t, qslice) + 63) / 64)

extern uint32_t *cs__work_q, *cs__work_sq;
extern double *cs__work_post;
extern void **cs__work_pay;

/* Where gets deliver their payload when nobody reads it (no observer).
 * SimGrid writes it when a comm completes, from maestro, which runs every
 * actor in one thread: one slot shared by all ranks stays in the caches,
 * where a slot per rank (in its context, on its stack) cost a miss per
 * receive on a line the rank would not otherwise touch. */
static void *sink;

static void finished(rank_ctx_t *c, uint32_t i);

/* Offset of op o's successor list, CS__NONE32 when held inline. */
static inline uint32_t succ_off(const cs__op_t *o)
{
    return o->nsucc > CS__SUCC_INL ? o->s[0] : CS__NONE32;
}

static void complete(rank_ctx_t *c, uint32_t i);
static inline void release(rank_ctx_t *c, uint32_t i);

/* Grow an array that starts inline: *buf is `inl` or a heap block of *cap
 * elements of `esize` bytes.  0 on success, -1 out of memory (unchanged). */
static int grow(void **buf, uint32_t *cap, size_t esize, void *inl)
{
    uint32_t ncap = *cap * 2;
    void *nb;
    if (*buf == inl) {
        nb = malloc(ncap * esize);
        if (nb)
            memcpy(nb, inl, *cap * esize);
    } else {
        nb = realloc(*buf, ncap * esize);
    }
    if (!nb)
        return -1;
    *buf = nb;
    *cap = ncap;
    return 0;
}

/* Start the comm of step i (a put of `payload`, or a get into *slot) on
 * mailbox mb and track it. */
static void start_comm_on(rank_ctx_t *c, uint32_t i, int put, void **slot, sg_mailbox_t mb,
                          void *payload, double rate, double bytes)
{
    int block = 0;
    if (c->nact == c->acap) {
        void *tk = c->tk;
        if (grow(&tk, &c->acap, sizeof(*c->tk), c->tk_inl) == 0) {
            c->tk = tk;
        } else {
            /* out of memory: wait for this one now (times are then wrong) */
            c->err = CS_ERR_NOMEM;
            block = 1;
        }
    }
    const cs__op_t *o = &c->op[i];
    int done = put ? cs__sg_set_put(&c->set, mb, payload, bytes, rate, block)
                   : cs__sg_set_get(&c->set, mb, slot, block);
    if (done) {
        if (!block)
            c->err = CS_ERR_NOMEM;
        finished(c, i);
        return;
    }
    c->tk[c->nact].step = i;
    c->tk[c->nact].succ = succ_off(o);
    c->nact++;
}

/* The extra bytes of send i where its connection restarts (a calibrated
 * platform's restart_bytes, docs/validation.md): TCP sends a message on a
 * connection idle for longer than its retransmission timeout from its
 * initial window, and where the round trip is long (acknowledgements
 * queued behind the other direction's data) the ramp costs what
 * restart_bytes more bytes would; a message smaller than that costs at
 * most its own size again.  Only between nodes; 0 elsewhere. */
static double restart_bytes(rank_ctx_t *c, uint32_t i)
{
    const cs__run_t *run = c->I->run;
    int q = c->rk->steps[i].peer;
    if (!c->last || q < 0 || q >= run->nhosts || run->rs_node[q] == run->rs_node[c->r])
        return 0;
    double x = fmax(run->rs_bytes[c->r], run->rs_bytes[q]);
    double idle = fmax(run->rs_idle[c->r], run->rs_idle[q]);
    if (!(x > 0) || simgrid_get_clock() - c->last[q] <= idle)
        return 0;
    return fmin(x, c->op[i].bytes);
}

/* ... on the step's channel, a put's payload its index + 1 (SimGrid refuses
 * NULL). */
static void start_comm(rank_ctx_t *c, uint32_t i, int put, void **slot)
{
    /* model nccl: a message moves at most at its route class's cap */
    double rate = -1;
    if (put && c->mcls && c->nccl)
        rate = c->nccl->cap[c->mcls[c->op[i].mbx]];
    start_comm_on(c, i, put, slot, c->mbt[c->op[i].mbx], (void *)(uintptr_t)(i + 1), rate,
                  put ? c->op[i].bytes + restart_bytes(c, i) : 0);
}

/* Issue switch step i (cs_sim_switch.c): count it in its operation, then
 * put its source on the operation's up mailbox (payload: its global id +
 * 1), or get its destination from the down mailbox.  A step with both
 * gets once its put is done: npend, unused once a step is issued, is 1
 * meanwhile.  The queue's next step is released at once, as receives do. */
static void issue_switch(rank_ctx_t *c, uint32_t i)
{
    cs__op_t *o = &c->op[i];
    const cs_step_t *st = &c->rk->steps[i];
    uint64_t gid = c->b + i;
    uint32_t k = cs__sw_arrive(c->I, gid);
    sg_mailbox_t *mb = c->p->swmb + 2 * (size_t)k;
    if (st->src.n) {
        o->npend = st->dst.n > 0;
        start_comm_on(c, i, 1, NULL, mb[0], (void *)(uintptr_t)(gid + 1), -1, c->op[i].bytes);
    } else {
        start_comm_on(c, i, 0, c->pay ? &c->pay[gid] : &sink, mb[1], NULL, -1, 0);
    }
    if (o->chan_next != CS__NONE32)
        release(c, o->chan_next);
}

/* Switch step i's transfer finished: its get follows its put, or it is
 * done (its down transfer reported to the observer). */
static void finished_switch(rank_ctx_t *c, uint32_t i)
{
    cs__op_t *o = &c->op[i];
    uint64_t gid = c->b + i;
    const cs__prog_t *p = c->p;
    uint32_t k = p->swop_of[gid];
    if (o->npend == 1) {
        o->npend = 0;
        start_comm_on(c, i, 0, c->pay ? &c->pay[gid] : &sink, p->swmb[2 * (size_t)k + 1], NULL,
                      -1, 0);
        return;
    }
    if (c->obs && c->obs->xfer && c->rk->steps[i].dst.n) {
        int sw = p->swg[p->swops[k].group].sw;
        cs__run_t *run = c->I->run;
        cs_sim_xfer_rec_t rec = {-1 - sw, c->r, run->plat->switches[sw].host,
                                 run->host_names[c->r], i, i, c->rk->steps[i].chan,
                                 (uint64_t)o->bytes, p->swdown[k], simgrid_get_clock()};
        c->obs->xfer(c->obs->ctx, c->I->index, &rec);
    }
    complete(c, i);
}

/* Push step i on the issuable FIFO.  The inline part overflows into the
 * run-wide slice, which holds all of the rank's steps (each enters the FIFO
 * once per instance, and the FIFO restarts at 0 whenever it is drained). */
static inline void push(rank_ctx_t *c, uint32_t i)
{
    if (c->qt == c->qcap) {
        memcpy(c->qslice, c->q, c->qt * sizeof(uint32_t));
        c->q = c->qslice;
        c->qcap = c->n;
    }
    c->q[c->qt++] = i;
}

static inline void release(rank_ctx_t *c, uint32_t i)
{
    if (--c->op[i].npend == 0)
        push(c, i);
}

static void complete(rank_ctx_t *c, uint32_t i)
{
    const cs__op_t *o = &c->op[i];
    const uint32_t *sc = cs__op_succ(o, c->succ);
    uint32_t ns = o->nsucc;
    c->done++;
    for (uint32_t k = 0; k < ns; k++)
        release(c, sc[k]);
    if (c->obs && c->obs->step) {
        const cs_step_t *st = &c->rk->steps[i];
        /* what compute() charged the stream for it */
        double flops = st->kind == CS_STEP_REDUCE || st->kind == CS_STEP_RRECV ? o->bytes
                       : st->kind == CS_STEP_COPY && c->copy_cost        ? 2.0 * o->bytes
                                                                          : 0.0;
        cs_sim_step_rec_t rec = {c->r,
                                 i,
                                 st->kind,
                                 st->peer,
                                 (uint64_t)o->bytes,
                                 c->post[c->b + i],
                                 simgrid_get_clock(),
                                 flops > 0 && c->speed > 0 ? flops / c->speed : 0.0};
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
        void *rq = c->rq;
        if (grow(&rq, &c->rqcap, sizeof(*c->rq), c->rq_inl) != 0) {
            c->err = CS_ERR_NOMEM;
            complete(c, i);
            return;
        }
        c->rq = rq;
    }
    double now = simgrid_get_clock();
    double start = c->stream_free > now ? c->stream_free : now;
    c->stream_free = start + flops / c->speed;
    job_t *j = &c->rq[c->rqt++];
    j->end = c->stream_free;
    j->step = i;
    j->succ = succ_off(&c->op[i]);
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
        start_comm(c, i, 1, NULL);
        break;
    }
    case CS_STEP_RECV:
    case CS_STEP_RRECV: {
        void **slot = &sink;
        if (c->post) {
            c->post[c->b + i] = simgrid_get_clock();
            slot = &c->pay[c->b + i];
        }
        start_comm(c, i, 0, slot);
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
    case CS_STEP_SWITCH:
        if (c->post)
            c->post[c->b + i] = simgrid_get_clock();
        issue_switch(c, i);
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

static void finished(rank_ctx_t *c, uint32_t i)
{
    const cs__op_t *o = &c->op[i];
    if (o->kind == CS_STEP_SWITCH) {
        finished_switch(c, i);
        return;
    }
    if (o->kind == CS_STEP_SEND) {
        c->inflight--;
        if (c->last && c->rk->steps[i].peer >= 0 && c->rk->steps[i].peer < c->I->run->nhosts)
            c->last[c->rk->steps[i].peer] = simgrid_get_clock();
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

/* Lines of op o and of the two after it (two steps to a line; its
 * successors and channel successor are usually there). */
static inline void prefetch_op(const cs__op_t *o)
{
    /* prefetches never fault: past the end of the array is harmless */
    __builtin_prefetch(o, 1);
    __builtin_prefetch(o + 2, 1);
    __builtin_prefetch(o + 4, 1);
}

/* Wait for the first outstanding comm to finish (or `timeout`), prefetch
 * what the turn reads, then take the finished comm out of the set.  The
 * steps a wake-up can finish are those of the tickets and of the stream's
 * head.  The op lines of the first two tickets and of the stream's head,
 * and the mailbox table, are worked out before sleeping and held in locals
 * across the wait: the compiler keeps them in callee-saved registers, which
 * the context switch restores from lines it touches anyway, so their
 * prefetches go out at once instead of after the context's line holding
 * the tickets has arrived.  Then the context's hot lines, the set's array,
 * the other tickets' steps and the successor lists (those need the
 * context).  Removing the finished comm from the set releases it (SimGrid
 * destroys it), work that overlaps with those prefetches. */
static long wait_turn(rank_ctx_t *c, double timeout)
{
    const cs__op_t *h0 = c->op, *h1 = c->op, *h2 = c->op;
    const sg_mailbox_t *h3 = c->mbt;
    if (c->nact > 0)
        h0 = &c->op[c->tk[0].step];
    if (c->nact > 1)
        h1 = &c->op[c->tk[1].step];
    if (c->rqh < c->rqt)
        h2 = &c->op[c->rq[c->rqh].step];
    long k = cs__sg_set_wait(&c->set, timeout);
    /* keeps the compiler from hoisting the prefetches above the wait */
    __asm__ volatile("" : "+r"(h0), "+r"(h1), "+r"(h2), "+r"(h3));
    prefetch_op(h0);
    if (h1 != c->op)
        prefetch_op(h1);
    if (h2 != c->op)
        prefetch_op(h2);
    __builtin_prefetch(h3);
    for (size_t l = 0; l < CTX_HOT_LINES; l++)
        __builtin_prefetch((const char *)c + 64 * l, 1);
    cs__sg_set_prefetch(&c->set);
    for (uint32_t t = 0; t < c->nact; t++) {
        if (t >= 2)
            prefetch_op(&c->op[c->tk[t].step]);
        if (c->tk[t].succ != CS__NONE32)
            __builtin_prefetch(&c->succ[c->tk[t].succ]);
    }
    if (c->rqh < c->rqt && c->rq[c->rqh].succ != CS__NONE32)
        __builtin_prefetch(&c->succ[c->rq[c->rqh].succ]);
    if (k >= 0)
        cs__sg_set_remove(&c->set, k);
    return k;
}

/* Set up the rank for the instance: bytes and dependency counts of every
 * step, the steps issuable at once in the FIFO (in index order, in the
 * run-wide slice).  For the first instance the program's priming
 * (cs_sim_prog.c) did it while compiling. */
static void start(rank_ctx_t *c)
{
    c->q = c->qslice;
    c->qcap = c->n;
    if (c->I->primed)
        c->qt = c->p->nready[c->r];
    else
        c->qt = cs__prog_prime_rank(c->p, c->r, c->I->count, c->I->esize,
                                    c->qslice);
}

/* Remove outstanding comm k (reported finished) and handle its step. */
static void take(rank_ctx_t *c, long k)
{
    uint32_t i = c->tk[k].step;
    c->nact--;
    c->tk[k] = c->tk[c->nact];
    finished(c, i);
}

void cs__rank_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    cs__rank_arg_t *a = sg_actor_self_get_data();
    cs__inst_t *I = a->inst;
    _Alignas(64) rank_ctx_t c;
    memset(&c, 0, sizeof(c));
    c.I = I;
    c.p = I->prog;
    c.r = a->rank;
    c.rk = &c.p->s->ranks[c.r];
    c.obs = I->run->opts->obs;
    c.b = c.p->base[c.r];
    c.n = c.rk->nsteps;
    c.op = c.p->ops + c.b;
    c.succ = c.p->succ + c.p->succ_base[c.r];
    c.mbt = c.p->mbox + c.p->mbox_base[c.r];
    c.nccl = I->run->opts->model == CS_SIM_NCCL ? I->in->nccl : NULL;
    c.mcls = c.nccl && c.p->mclass ? c.p->mclass + c.p->mbox_base[c.r] : NULL;
    cs__sg_set_init(&c.set);
    c.tk = c.tk_inl;
    c.acap = ACT_INL;
    c.q = c.q_inl;
    c.qcap = Q_INL;
    c.qslice = cs__work_q + c.b;
    c.rq = c.rq_inl;
    c.rqcap = RQ_INL;
    c.sq = cs__work_sq ? cs__work_sq + c.b : NULL; /* only with a port limit */
    c.ports = I->run->opts->ports;
    c.post = cs__work_post;
    c.pay = cs__work_pay;
    /* NCCL's kernels reduce in the copy: no time of their own */
    c.speed = c.nccl && c.nccl->fused ? 0.0 : sg_host_get_speed(sg_host_self());
    c.copy_cost = I->run->opts->copy_cost;
    if (I->run->rs_bytes && (c.last = malloc(sizeof(double) * (size_t)I->run->nhosts)) != NULL)
        for (int q = 0; q < I->run->nhosts; q++)
            c.last[q] = simgrid_get_clock();
    start(&c);
    uint32_t n = c.n;
    while (c.done < n) {
        while (c.qh < c.qt)
            issue(&c, c.q[c.qh++]);
        c.qh = c.qt = 0;
        c.q = c.q_inl;
        c.qcap = Q_INL;
        if (c.done == n)
            break;
        if (c.rqh < c.rqt) {
            /* the stream's head ends first, or a comm before it */
            double wait = c.rq[c.rqh].end - simgrid_get_clock();
            long k = -1;
            if (wait > 0)
                k = wait_turn(&c, wait);
            if (k < 0)
                complete(&c, c.rq[c.rqh++].step);
            else
                take(&c, k);
            continue;
        }
        if (c.nact == 0) {
            CS_ERROR("sim", "rank %d: %u of %u steps can never be issued", c.r, n - c.done, n);
            c.err = CS_ERR_INTERNAL;
            break;
        }
        long k = wait_turn(&c, -1.0);
        if (k < 0) {
            c.err = CS_ERR_INTERNAL;
            break;
        }
        take(&c, k);
    }
    I->finish[c.r] = simgrid_get_clock();
    if (c.err)
        I->run->failed = c.err;
    else
        I->done_ranks++;
    cs__sg_set_fini(&c.set);
    free(c.last);
    if (c.tk != c.tk_inl)
        free(c.tk);
    if (c.rq != c.rq_inl)
        free(c.rq);
    sg_barrier_wait(a->bar);
}
