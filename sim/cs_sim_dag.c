/*
 * cs_sim_dag.c - the activity-DAG engine (cs_sim.h, "Engines"): the same
 * step semantics as the rank actors of cs_sim_rank.c, without actors.
 *
 * Everything runs in maestro, from three kinds of SimGrid events, which
 * SimGrid's callbacks only record, in order, for the pump (an actor that
 * runs once SimGrid has handled every completion of the instant and then
 * handles the events in maestro: see "events" below):
 *   - a transfer finished: one SimGrid comm per matched message
 *     (Comm::sendto_init from the sender's host to the receiver's, started
 *     when both the send and its receive have been posted, exactly when the
 *     actors' put and get would meet in their mailbox), per up or down
 *     transfer of a switch operation; its completion callback
 *     (cs__sg_dag_begin) hands back the transfer's record;
 *   - a timer fired: a reduction's end on a rank's device stream (the
 *     stream is a FIFO computed when a reduction is queued, as the rank
 *     actors compute it), an instance's base latency;
 *   - a switch operation's wait before its down transfers ended: a sleeper
 *     actor on the switch's host per operation, as the actor engine's
 *     switch actor sleeps (see sw_up_done).
 * Each event releases the successors of the steps it finished into the
 * rank's FIFO of issuable steps, which is drained at once in FIFO order
 * (the order in which a rank actor issues them on waking), so port limits
 * and channel order behave as with actors.
 *
 * Matching: every channel direction (sender, receiver, channel) is one
 * dag_chan_t, from the sender's and the receiver's channel queues of the
 * compiled program (cs_sim_prog.c), paired once per program by sorting
 * their keys.  Sends of a channel are posted one at a time (the next is
 * released when the previous completes); receives in order, possibly
 * several ahead: the channel holds the posted send (if any) and the
 * first posted receive not yet matched (later ones follow through the
 * steps' chan_next), so matching costs O(1) and no memory per step.
 *
 * Memory: per step only the compiled program (cs__op_t) as with actors;
 * per rank a dag_rank_t; per channel direction 48 bytes; per transfer in
 * flight one dag_xfer_t from a pool, plus SimGrid's comm.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/semaphore.h>

#include "cs_log.h"
#include "cs_plan.h"
#include "cs_sim_dag_int.h"

static void issue(dag_t *D, int r, uint32_t i);
static void inst_begin(dag_t *D);

/* ---- events --------------------------------------------------------------
 * SimGrid reports a finished comm while the other comms that finished at
 * the same instant still hold their share of the links in its solver (it
 * frees them only after every completion callback of the instant), and a
 * timer fires before the comms of its instant are reported.  A comm
 * started from a callback would see those finished ones: its share, and
 * so the simulated times, would differ from the actor engine's (where
 * actors start comms after SimGrid has handled every completion of the
 * instant).  So callbacks only record what happened, in the order SimGrid
 * reports it, and release the pump, an actor that SimGrid runs once the
 * instant's completions are handled; the pump handles the events in
 * maestro (cs__sg_maestro), which then starts the comms. */

void cs__dag_defer(dag_t *D, dag_fn fn, uint64_t arg)
{
    if (D->nev == D->capev) {
        size_t nc = D->capev ? 2 * D->capev : 1024;
        dag_ev_t *v = realloc(D->ev, nc * sizeof(*v));
        if (!v) { /* out of memory: handled now (times may then differ) */
            D->run->failed = CS_ERR_NOMEM;
            fn(D, arg);
            return;
        }
        D->ev = v;
        D->capev = nc;
    }
    D->ev[D->nev++] = (dag_ev_t){fn, arg};
    if (!D->woken) {
        D->woken = 1;
        sg_sem_release(D->sem);
    }
}


static void timer_fired(void *ctx, uint64_t arg)
{
    dag_timer_t *t = ctx;
    t->D->ntimers--;
    cs__dag_defer(t->D, t->fn, arg);
}

void cs__dag_sleeper(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    dag_sleeper_t *a = sg_actor_self_get_data();
    dag_t *D = a->D;
    dag_fn fn = a->fn;
    uint64_t arg = a->arg;
    sg_actor_sleep_for(a->wait);
    free(a);
    D->ntimers--;
    cs__dag_defer(D, fn, arg);
}

int cs__dag_timer_set(dag_t *D, double date, dag_timer_t *t, uint64_t arg)
{
    if (cs__sg_timer(date, timer_fired, t, arg) != 0)
        return -1;
    D->ntimers++;
    return 0;
}

/* ---- transfers ---------------------------------------------------------- */

dag_xfer_t *cs__dag_xfer_new(dag_t *D)
{
    if (!D->free_x) {
        enum { CHUNK = 4096 };
        if (D->nchunks == D->capchunks) {
            size_t nc = D->capchunks ? 2 * D->capchunks : 16;
            void **v = realloc(D->chunks, nc * sizeof(*v));
            if (!v)
                return NULL;
            D->chunks = v;
            D->capchunks = nc;
        }
        dag_xfer_t *c = malloc(CHUNK * sizeof(*c));
        if (!c)
            return NULL;
        D->chunks[D->nchunks++] = c;
        for (int k = CHUNK - 1; k >= 0; k--) {
            c[k].next = D->free_x;
            D->free_x = &c[k];
        }
    }
    dag_xfer_t *x = D->free_x;
    D->free_x = x->next;
    if (++D->flight > D->maxflight)
        D->maxflight = D->flight;
    return x;
}

void cs__dag_xfer_free(dag_t *D, dag_xfer_t *x)
{
    x->next = D->free_x;
    D->free_x = x;
    D->flight--;
}

/* Start x from host a to host b; on failure the run is marked failed. */
void cs__dag_xfer_start(dag_t *D, dag_xfer_t *x, sg_host_t a, sg_host_t b, double bytes,
                        double rate)
{
    x->start = simgrid_get_clock();
    D->nxfers++;
    if (cs__sg_xfer(a, b, bytes, rate, x) != 0)
        D->run->failed = CS_ERR_NOMEM;
}

/* ---- ranks -------------------------------------------------------------- */
void cs__dag_check_end(dag_t *D)
{
    if (D->I.done_ranks < D->P || D->sw_live > 0 || D->inst < 0)
        return;
    cs__drv_t *d = D->d;
    double end = D->I.t0;
    for (int r = 0; r < D->P; r++)
        if (D->finish[r] > end)
            end = D->finish[r];
    cs_sim_instance_t *in = &d->inst[D->inst];
    in->time = end - D->I.t0;
    D->run->cur = NULL;
    *D->run->nccl_cur = NULL;
    cs__sg_p2p_eager = D->eager = 0;
    int i = D->inst;
    D->inst = -1;
    if (D->run->failed)
        return;
    d->completed++;
    if (D->obs && D->obs->instance_end)
        D->obs->instance_end(D->obs->ctx, i, in, end);
    if (i + 1 < d->n) {
        D->inst = i + 1;
        inst_begin(D);
    }
}

void cs__dag_complete(dag_t *D, int r, uint32_t i)
{
    const cs__prog_t *p = D->I.prog;
    const cs__op_t *o = op_of(D, r, i);
    const uint32_t *sc = cs__op_succ(o, p->succ + p->succ_base[r]);
    dag_rank_t *k = &D->rk[r];
    for (uint32_t s = 0; s < o->nsucc; s++)
        release(D, r, sc[s]);
    if (D->obs && D->obs->step) {
        const cs_step_t *st = &p->s->ranks[r].steps[i];
        double speed = k->speed;
        int copy = D->run->opts->copy_cost;
        double flops = st->kind == CS_STEP_REDUCE || st->kind == CS_STEP_RRECV ? o->bytes
                       : st->kind == CS_STEP_COPY && copy                    ? 2.0 * o->bytes
                                                                              : 0.0;
        cs_sim_step_rec_t rec = {r,
                                 i,
                                 st->kind,
                                 st->peer,
                                 (uint64_t)o->bytes,
                                 cs__work_post[p->base[r] + i],
                                 simgrid_get_clock(),
                                 flops > 0 && speed > 0 ? flops / speed : 0.0};
        D->obs->step(D->obs->ctx, D->inst, &rec);
    }
    if (++k->done == k->n) {
        D->finish[r] = simgrid_get_clock();
        D->I.done_ranks++;
    }
}

static void stream_end(dag_t *D, uint64_t arg)
{
    int r = (int)(arg >> 32);
    cs__dag_complete(D, r, (uint32_t)arg);
    cs__dag_drain(D, r);
}

/* Queue `flops` bytes of reduction for step i on r's stream, or complete
 * it now when it costs nothing. */
static void compute(dag_t *D, int r, uint32_t i, double flops)
{
    dag_rank_t *k = &D->rk[r];
    double speed = k->speed;
    if (!(flops > 0 && speed > 0)) {
        cs__dag_complete(D, r, i);
        return;
    }
    double now = simgrid_get_clock();
    double start = k->stream_free > now ? k->stream_free : now;
    k->stream_free = start + flops / speed;
    if (cs__dag_timer_set(D, k->stream_free, &D->t_stream, (uint64_t)r << 32 | i) != 0) {
        D->run->failed = CS_ERR_NOMEM;
        cs__dag_complete(D, r, i);
    }
}

/* The extra bytes of r's send i where its connection restarts (as
 * cs_sim_rank.c restart_bytes). */
static double restart_bytes(dag_t *D, int r, uint32_t i, double bytes)
{
    const cs__run_t *run = D->run;
    const dag_rank_t *k = &D->rk[r];
    if (!k->last) /* no restarts: the schedule's step is not read (a cache miss) */
        return 0;
    int q = D->I.prog->s->ranks[r].steps[i].peer;
    if (q < 0 || q >= run->nhosts || run->rs_node[q] == run->rs_node[r])
        return 0;
    double x = fmax(run->rs_bytes[r], run->rs_bytes[q]);
    double idle = fmax(run->rs_idle[r], run->rs_idle[q]);
    if (!(x > 0) || simgrid_get_clock() - k->last[q] <= idle)
        return 0;
    return fmin(x, bytes);
}

/* Start channel c's send s as a transfer to its receive rv (CS__NONE32:
 * not known yet, an eager message). */
static void start_p2p(dag_t *D, dag_chan_t *c, uint32_t s, uint32_t rv)
{
    const cs__prog_t *p = D->I.prog;
    dag_xfer_t *x = cs__dag_xfer_new(D);
    if (!x) {
        D->run->failed = CS_ERR_NOMEM;
        return;
    }
    x->kind = X_P2P;
    x->src = c->src;
    x->dst = c->dst;
    x->sstep = s;
    x->dstep = rv;
    double rate = -1;
    const cs__op_t *so = op_of(D, c->src, s);
    if (p->mclass && D->I.in->nccl && D->run->opts->model == CS_SIM_NCCL)
        rate = D->I.in->nccl->cap[p->mclass[p->mbox_base[c->src] + so->mbx]];
    cs__dag_xfer_start(D, x, D->run->hosts[c->src], D->run->hosts[c->dst], c->sbytes, rate);
}

/* Both sides of channel c are posted: start its transfer. */
static void match(dag_t *D, dag_chan_t *c)
{
    uint32_t s = c->send, rv = c->rhead;
    c->send = CS__NONE32;
    c->rhead = --c->rcount ? op_of(D, c->dst, rv)->chan_next : CS__NONE32;
    start_p2p(D, c, s, rv);
}

static dag_chan_t *chan_of(dag_t *D, int r, const cs__op_t *o)
{
    uint32_t ch = D->cur->chan_of[D->I.prog->mbox_base[r] + o->mbx];
    return ch == CS__NONE32 ? NULL : &D->cur->chans[ch];
}

/* Model nccl: NCCL's connections.  A sender writes into the buffer the
 * receiver set aside when the connection was made (NCCL_STEPS = 8 steps of
 * a protocol's buffer: Simple 512 KiB, LL128 562.5 KiB, LL 32 KiB of data
 * each), so its message moves as soon as it is posted and the buffer has
 * room, whether or not the receive is (the receive finds it there), and
 * its latency is on the message's path: the receiver has it that much
 * after its bytes have moved, while the sender is done when they have
 * left.  A message holds ceil(bytes / step) of the 8 steps (all of them
 * when larger) from its start until its receive takes it; a channel's
 * messages move one after the other. */
#define DAG_NCCL_STEPS 8

static int eager(const dag_t *D)
{
    return D->eager;
}

/* Buffer steps a message of `bytes` holds. */
static uint32_t steps_of(const dag_t *D, double bytes)
{
    if (!(D->step_bytes > 0))
        return DAG_NCCL_STEPS;
    double n = ceil(bytes / D->step_bytes);
    return n < 1 ? 1 : n > DAG_NCCL_STEPS ? DAG_NCCL_STEPS : (uint32_t)n;
}

/* c's posted send can start: nothing moving and room in the buffer. */
static int can_start(const dag_t *D, const dag_chan_t *c)
{
    return c->send != CS__NONE32 && !c->moving &&
           c->used + steps_of(D, c->sbytes) <= DAG_NCCL_STEPS;
}

/* Start c's posted send into the receiver's buffer. */
static void start_eager(dag_t *D, dag_chan_t *c)
{
    uint32_t s = c->send;
    c->send = CS__NONE32;
    c->moving = steps_of(D, c->sbytes);
    c->used += c->moving;
    start_p2p(D, c, s, CS__NONE32);
}

/* A message arrived before its receive: to the end of c's waiting ones. */
static int wait_push(dag_t *D, dag_chan_t *c, uint32_t ss, uint32_t need, double arr,
                     double t0, double t1)
{
    uint32_t w = D->wfree;
    if (w == CS__NONE32) {
        if (D->nwait == D->capwait) {
            uint32_t cap = D->capwait ? 2 * D->capwait : 1024;
            dag_wait_t *v = realloc(D->wait, sizeof(*v) * cap);
            if (!v)
                return -1;
            D->wait = v, D->capwait = cap;
        }
        w = D->nwait++;
    } else {
        D->wfree = D->wait[w].next;
    }
    D->wait[w] = (dag_wait_t){CS__NONE32, ss, need, arr, t0, t1};
    if (c->wtail == CS__NONE32)
        c->whead = w;
    else
        D->wait[c->wtail].next = w;
    c->wtail = w;
    return 0;
}

static void post_send(dag_t *D, int r, uint32_t i)
{
    cs__op_t *o = op_of(D, r, i);
    dag_chan_t *c = chan_of(D, r, o);
    if (!c)
        return; /* never matched: the instance deadlocks, as with actors */
    c->send = i;
    c->sbytes = o->bytes + restart_bytes(D, r, i, o->bytes);
    if (eager(D)) {
        if (can_start(D, c))
            start_eager(D, c);
    } else if (c->rcount) {
        match(D, c);
    }
}

static void deliver(dag_t *D, dag_chan_t *c, uint32_t si, uint32_t di, double arr, double t0,
                    double t1);

static void post_recv(dag_t *D, int r, uint32_t i)
{
    cs__op_t *o = op_of(D, r, i);
    dag_chan_t *c = chan_of(D, r, o);
    if (!c)
        return;
    if (eager(D) && c->whead != CS__NONE32) {
        /* its message is there: its buffer steps are free again */
        uint32_t w = c->whead;
        dag_wait_t m = D->wait[w];
        c->whead = m.next;
        if (c->whead == CS__NONE32)
            c->wtail = CS__NONE32;
        D->wait[w].next = D->wfree;
        D->wfree = w;
        c->used -= m.need;
        deliver(D, c, m.ss, i, m.arr, m.t0, m.t1);
        if (can_start(D, c))
            start_eager(D, c);
        return;
    }
    if (c->rcount++ == 0)
        c->rhead = i;
    if (c->send != CS__NONE32 && !eager(D))
        match(D, c);
}

/* ---- issuing ------------------------------------------------------------ */

static void issue(dag_t *D, int r, uint32_t i)
{
    cs__op_t *o = op_of(D, r, i);
    dag_rank_t *k = &D->rk[r];
    double *post = cs__work_post ? cs__work_post + D->I.prog->base[r] : NULL;
    switch (o->kind) {
    case CS_STEP_SEND: {
        int ports = D->run->opts->ports;
        if (ports > 0 && k->inflight >= ports) {
            cs__work_sq[D->I.prog->base[r] + k->sqt++] = i;
            return;
        }
        if (post)
            post[i] = simgrid_get_clock();
        k->inflight++;
        post_send(D, r, i);
        break;
    }
    case CS_STEP_RECV:
    case CS_STEP_RRECV:
        if (post)
            post[i] = simgrid_get_clock();
        post_recv(D, r, i);
        if (o->chan_next != CS__NONE32)
            release(D, r, o->chan_next);
        break;
    case CS_STEP_REDUCE:
        if (post)
            post[i] = simgrid_get_clock();
        compute(D, r, i, o->bytes);
        break;
    case CS_STEP_COPY:
        if (post)
            post[i] = simgrid_get_clock();
        compute(D, r, i, D->run->opts->copy_cost ? 2.0 * o->bytes : 0.0);
        break;
    case CS_STEP_SWITCH:
        if (post)
            post[i] = simgrid_get_clock();
        cs__dag_issue_switch(D, r, i);
        break;
    default:
        if (post)
            post[i] = simgrid_get_clock();
        cs__dag_complete(D, r, i);
        break;
    }
}

/* Issue everything r can issue, in FIFO order. */
void cs__dag_drain(dag_t *D, int r)
{
    dag_rank_t *k = &D->rk[r];
    const uint32_t *q = cs__work_q + D->I.prog->base[r];
    while (k->qh < k->qt)
        issue(D, r, q[k->qh++]);
    k->qh = k->qt = 0;
}

/* ---- completions -------------------------------------------------------- */

/* Receive di of rank d has its message: complete it (a reduction first). */
static void recv_done(dag_t *D, int d, uint32_t di)
{
    cs__op_t *ro = op_of(D, d, di);
    if (ro->kind == CS_STEP_RRECV)
        compute(D, d, di, ro->bytes);
    else
        cs__dag_complete(D, d, di);
    cs__dag_drain(D, d);
}

static void arrive(dag_t *D, uint64_t arg)
{
    recv_done(D, (int)(arg >> 32), (uint32_t)arg);
}

/* The observer's record of message si -> di, moving from t0 to t1. */
static void record(dag_t *D, int s, int d, uint32_t si, uint32_t di, double t0, double t1)
{
    if (!(D->obs && D->obs->xfer))
        return;
    cs__run_t *run = D->run;
    cs_sim_xfer_rec_t rec = {s,
                             d,
                             run->host_names[s],
                             run->host_names[d],
                             si,
                             di,
                             D->I.prog->s->ranks[d].steps[di].chan,
                             (uint64_t)op_of(D, d, di)->bytes,
                             t0,
                             t1};
    D->obs->xfer(D->obs->ctx, D->inst, &rec);
}

/* Record the message (observer) and complete receive di at `arr` (a
 * timer, through the pump, even when it is now: this may run while d's
 * FIFO is being drained). */
static void deliver(dag_t *D, dag_chan_t *c, uint32_t si, uint32_t di, double arr, double t0,
                    double t1)
{
    int d = c->dst;
    record(D, c->src, d, si, di, t0, t1);
    double now = simgrid_get_clock();
    if (cs__dag_timer_set(D, arr > now ? arr : now, &D->t_arrive, (uint64_t)d << 32 | di) != 0) {
        D->run->failed = CS_ERR_NOMEM;
        recv_done(D, d, di);
    }
}

static void on_p2p(dag_t *D, dag_xfer_t *x)
{
    int s = x->src, d = x->dst;
    uint32_t si = x->sstep, di = x->dstep;
    double start = x->start, now = simgrid_get_clock();
    cs__dag_xfer_free(D, x);
    /* the sender (as cs_sim_rank.c finished) */
    dag_rank_t *k = &D->rk[s];
    cs__op_t *so = op_of(D, s, si);
    k->inflight--;
    if (k->last)
        k->last[d] = now;
    if (so->chan_next != CS__NONE32)
        release(D, s, so->chan_next);
    if (k->sqh < k->sqt)
        issue(D, s, cs__work_sq[D->I.prog->base[s] + k->sqh++]);
    cs__dag_complete(D, s, si);
    cs__dag_drain(D, s);
    /* the receiver */
    if (di == CS__NONE32) {
        /* model nccl (eager): the channel's first posted receive takes it,
         * or the first to be posted */
        const cs__prog_t *p = D->I.prog;
        dag_chan_t *c = chan_of(D, s, so);
        double arr = now + D->I.in->nccl->lat[p->mclass[p->mbox_base[s] + so->mbx]];
        uint32_t need = c->moving;
        c->moving = 0;
        if (!c->rcount) {
            if (wait_push(D, c, si, need, arr, start, now) != 0) {
                D->run->failed = CS_ERR_NOMEM;
                return;
            }
        } else {
            di = c->rhead;
            c->rhead = --c->rcount ? op_of(D, d, di)->chan_next : CS__NONE32;
            c->used -= need;
            deliver(D, c, si, di, arr, start, now);
        }
        if (can_start(D, c))
            start_eager(D, c);
        return;
    }
    record(D, s, d, si, di, start, now);
    recv_done(D, d, di);
}

static void xfer_done(dag_t *D, uint64_t arg)
{
    dag_xfer_t *x = (dag_xfer_t *)(uintptr_t)arg;
    if (D->inst < 0) {
        cs__dag_xfer_free(D, x);
        return;
    }
    switch (x->kind) {
    case X_P2P:
        on_p2p(D, x);
        break;
    case X_UP:
        cs__dag_on_up(D, x);
        break;
    default:
        cs__dag_on_down(D, x);
        break;
    }
}

/* SimGrid's completion callback (maestro, while it handles the instant's
 * completions). */
static void on_done(void *ctx, void *data)
{
    if (data)
        cs__dag_defer(ctx, xfer_done, (uint64_t)(uintptr_t)data);
}

/* The pump's turn, in maestro: every event of the instant, in order. */
static void flush(void *ctx)
{
    dag_t *D = ctx;
    D->woken = 0;
    D->nflush++;
    for (size_t j = 0; j < D->nev; j++) {
        dag_ev_t e = D->ev[j];
        e.fn(D, e.arg);
        cs__dag_check_end(D);
    }
    D->nev = 0;
}

static void pump_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    dag_t *D = sg_actor_self_get_data();
    while (D->nev > 0 || D->flight > 0 || D->ntimers > 0) {
        sg_sem_acquire(D->sem);
        cs__sg_maestro(flush, D);
    }
}

/* ---- programs and instances --------------------------------------------- */

typedef struct qkey {
    int32_t src, dst;
    uint32_t chan;
    uint32_t recv; /* 0: the send side */
    uint64_t m;    /* global mailbox index */
} qkey_t;

static int cmp_qkey(const void *x, const void *y)
{
    const qkey_t *a = x, *b = y;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst)
        return a->dst < b->dst ? -1 : 1;
    if (a->chan != b->chan)
        return a->chan < b->chan ? -1 : 1;
    return (a->recv > b->recv) - (a->recv < b->recv);
}

/* Pair p's channel queues into channels; lay out its switch operations. */
static int prog_prepare(dag_prog_t *dp, const cs__prog_t *p, cs_err_t *err)
{
    uint64_t M = p->mbox_base[p->nranks], nk = 0;
    dp->chan_of = malloc(sizeof(uint32_t) * (M ? M : 1));
    qkey_t *k = malloc(sizeof(qkey_t) * (M ? M : 1));
    if (!dp->chan_of || !k) {
        free(k);
        return cs_err_set(err, CS_ERR_NOMEM, "sim: out of memory for %llu channels",
                          (unsigned long long)M);
    }
    for (int r = 0; r < p->nranks; r++) {
        const cs_rank_sched_t *rk = &p->s->ranks[r];
        for (uint64_t m = p->mbox_base[r]; m < p->mbox_base[r + 1]; m++) {
            const cs_step_t *sp = &rk->steps[p->mfirst[m]];
            dp->chan_of[m] = CS__NONE32;
            if (sp->kind == CS_STEP_SWITCH || sp->peer < 0)
                continue;
            int send = sp->kind == CS_STEP_SEND;
            k[nk++] = (qkey_t){send ? r : sp->peer, send ? sp->peer : r, sp->chan, !send, m};
        }
    }
    qsort(k, nk, sizeof(*k), cmp_qkey);
    uint64_t nch = 0;
    for (uint64_t j = 0; j + 1 < nk; j++)
        nch += k[j].recv == 0 && k[j + 1].recv == 1 && k[j].src == k[j + 1].src &&
               k[j].dst == k[j + 1].dst && k[j].chan == k[j + 1].chan;
    if (nch >= CS__NONE32) {
        free(k);
        return cs_err_set(err, CS_ERR_UNSUPPORTED, "sim: %llu channels, more than the dag "
                          "engine handles", (unsigned long long)nch);
    }
    dp->chans = malloc(sizeof(dag_chan_t) * (nch ? nch : 1));
    if (!dp->chans) {
        free(k);
        return cs_err_set(err, CS_ERR_NOMEM, "sim: out of memory for %llu channels",
                          (unsigned long long)nch);
    }
    dp->nchans = 0;
    for (uint64_t j = 0; j + 1 < nk; j++) {
        if (!(k[j].recv == 0 && k[j + 1].recv == 1 && k[j].src == k[j + 1].src &&
              k[j].dst == k[j + 1].dst && k[j].chan == k[j + 1].chan))
            continue;
        dag_chan_t *c = &dp->chans[dp->nchans];
        c->src = k[j].src;
        c->dst = k[j].dst;
        dp->chan_of[k[j].m] = dp->chan_of[k[j + 1].m] = (uint32_t)dp->nchans++;
    }
    free(k);
    if (p->nswops) {
        uint64_t tot = 0;
        dp->off = malloc(sizeof(uint64_t) * ((size_t)p->nswops + 1));
        dp->sw = calloc(p->nswops, sizeof(dag_swop_t));
        for (uint32_t j = 0; dp->off && j < p->nswops; j++) {
            dp->off[j] = tot;
            tot += p->swops[j].n;
        }
        dp->mem = malloc(sizeof(uint64_t) * (tot ? tot : 1));
        dp->get = malloc(sizeof(uint64_t) * (tot ? tot : 1));
        dp->ngq = p->s->ngroups + 1;
        dp->g_busy = calloc(dp->ngq, 1);
        dp->gq_head = malloc(sizeof(uint32_t) * dp->ngq);
        dp->gq_tail = malloc(sizeof(uint32_t) * dp->ngq);
        if (!dp->off || !dp->sw || !dp->mem || !dp->get || !dp->g_busy || !dp->gq_head ||
            !dp->gq_tail)
            return cs_err_set(err, CS_ERR_NOMEM, "sim: out of memory for %u switch operations",
                              p->nswops);
    }
    dp->ready = 1;
    return CS_OK;
}

static void prog_free(dag_prog_t *dp)
{
    free(dp->chan_of);
    free(dp->chans);
    free(dp->off);
    free(dp->mem);
    free(dp->get);
    free(dp->sw);
    free(dp->g_busy);
    free(dp->gq_head);
    free(dp->gq_tail);
}

/* The instance's ranks start (after its base latency). */
static void ranks_start(dag_t *D, uint64_t arg)
{
    (void)arg;
    cs__prog_t *p = D->I.prog;
    const cs_sim_nccl_t *nc = D->run->opts->model == CS_SIM_NCCL ? D->I.in->nccl : NULL;
    for (int r = 0; r < D->P; r++) {
        dag_rank_t *k = &D->rk[r];
        double *last = k->last;
        memset(k, 0, sizeof(*k));
        k->last = last;
        k->n = p->s->ranks[r].nsteps;
        /* NCCL's kernels reduce in the copy: no time of their own */
        k->speed = nc && nc->fused ? 0.0 : sg_host_get_speed(D->run->hosts[r]);
        if (D->run->rs_bytes) {
            if (!k->last)
                k->last = malloc(sizeof(double) * (size_t)D->run->nhosts);
            for (int q = 0; k->last && q < D->run->nhosts; q++)
                k->last[q] = simgrid_get_clock();
        }
        k->qt = D->I.primed ? p->nready[r]
                            : cs__prog_prime_rank(p, r, D->I.count, D->I.esize,
                                                  cs__work_q + p->base[r]);
        if (k->n == 0) {
            D->finish[r] = simgrid_get_clock();
            D->I.done_ranks++;
        }
        cs__dag_drain(D, r);
    }
    cs__dag_check_end(D);
}

static void inst_begin(dag_t *D)
{
    cs__drv_t *d = D->d;
    int i = D->inst;
    cs_sim_instance_t *in = &d->inst[i];
    const cs_sched_t *s = in->sched;
    int P = s->desc.nranks;
    cs__inst_t *I = &D->I;
    memset(I, 0, sizeof(*I));
    I->run = D->run;
    I->index = i;
    I->in = in;
    I->prog = &d->progs[d->prog_of[i]];
    D->cur = &D->dp[d->prog_of[i]];
    D->P = P;
    if (!D->cur->ready) {
        cs_err_t err;
        if (prog_prepare(D->cur, I->prog, &err) != CS_OK) {
            CS_ERROR("sim", "%s", err.msg);
            D->run->failed = err.code;
            D->inst = -1;
            return;
        }
    }
    for (uint64_t c = 0; c < D->cur->nchans; c++) {
        D->cur->chans[c].send = D->cur->chans[c].rhead = CS__NONE32;
        D->cur->chans[c].rcount = 0;
        D->cur->chans[c].used = D->cur->chans[c].moving = 0;
        D->cur->chans[c].whead = D->cur->chans[c].wtail = CS__NONE32;
    }
    D->nwait = 0;
    D->wfree = CS__NONE32;
    if (I->prog->nswops) {
        memset(D->cur->sw, 0, sizeof(dag_swop_t) * I->prog->nswops);
        memset(D->cur->g_busy, 0, D->cur->ngq);
        for (uint32_t g = 0; g < D->cur->ngq; g++)
            D->cur->gq_head[g] = D->cur->gq_tail[g] = CS__NONE32;
    }
    if (D->run->opts->model == CS_SIM_NCCL)
        cs__prog_classes(I->prog, D->run->host_names);
    I->esize = cs_dtype_size(in->dtype);
    I->count = cs_coll_block_count(s->desc.coll, P, in->bytes, I->esize);
    I->primed = cs__prog_take_prime(I->prog, I->count, I->esize);
    I->finish = D->finish;
    I->t0 = simgrid_get_clock();
    D->run->cur = I;
    CS_DEBUG("sim", "instance %d: %s %s P=%d bytes=%llu (dag)", i, cs_coll_name(s->desc.coll),
             s->algo, P, (unsigned long long)in->bytes);
    if (D->obs && D->obs->instance_begin)
        D->obs->instance_begin(D->obs->ctx, i, in, I->t0);
    double base = 0;
    if (D->run->opts->model == CS_SIM_NCCL) {
        *D->run->nccl_cur = in->nccl;
        /* NCCL's connections for schedules of messages alone; those with
         * switch operations (NVLS, NVLSTree, CollNet) keep rendezvous
         * messages: eager ones beside the switch's transfers are not worked
         * out yet (docs/nccl-model.md) */
        cs__sg_p2p_eager = D->eager = in->nccl && I->prog->mclass && I->prog->nswops == 0;
        D->step_bytes = in->nccl ? in->nccl->step_bytes : 0;
        base = cs__nccl_start_delay(in->nccl);
    }
    if (base > 0) {
        /* a sleep on rank 0's host, as the actor engine's driver sleeps:
         * a timer ends in another phase of SimGrid's loop, and under the
         * NCCL model's per-message caps the order in which comms then
         * start moves the results (see sw_up_done) */
        dag_sleeper_t *a = malloc(sizeof(*a));
        if (a) {
            a->D = D;
            a->fn = ranks_start;
            a->arg = 0;
            a->wait = base;
            D->ntimers++;
            sg_actor_t act = sg_actor_init("dag-base-latency", D->run->hosts[0]);
            sg_actor_set_data(act, a);
            sg_actor_start(act, cs__dag_sleeper, 0, NULL);
            return;
        }
        D->run->failed = CS_ERR_NOMEM;
    }
    ranks_start(D, 0);
}

int cs__dag_run(cs__drv_t *d, cs_err_t *err)
{
    dag_t D;
    memset(&D, 0, sizeof(D));
    D.d = d;
    D.run = &d->run;
    D.obs = d->run.opts->obs;
    D.finish = d->finish;
    D.inst = -1;
    int st = CS_OK;
    D.dp = calloc((size_t)d->nprogs + 1, sizeof(*D.dp));
    D.rk = calloc((size_t)d->run.nhosts + 1, sizeof(*D.rk));
    if (!D.dp || !D.rk) {
        st = cs_err_set(err, CS_ERR_NOMEM, "sim: out of memory");
        goto out;
    }
    for (int j = 0; j < d->nprogs; j++) {
        st = prog_prepare(&D.dp[j], &d->progs[j], err);
        if (st != CS_OK)
            goto out;
    }
    if (cs__sg_dag_begin(on_done, &D) != 0) {
        st = cs_err_set(err, CS_ERR_INTERNAL, "sim: SimGrid refused the dag engine's callback");
        goto out;
    }
    D.t_stream = (dag_timer_t){&D, stream_end};
    D.t_arrive = (dag_timer_t){&D, arrive};
    D.sem = sg_sem_init(0);
    if (d->n > 0) {
        D.inst = 0;
        inst_begin(&D);
        cs__dag_check_end(&D);
    }
    sg_actor_t pump = sg_actor_init("dag-pump", d->run.hosts[0]);
    sg_actor_set_data(pump, &D);
    sg_actor_start(pump, pump_main, 0, NULL);
    simgrid_run();
    sg_sem_destroy(D.sem);
    cs__sg_dag_end();
    CS_DEBUG("sim", "dag: %llu transfers, at most %llu in flight, %llu turns of the pump",
             (unsigned long long)D.nxfers, (unsigned long long)D.maxflight,
             (unsigned long long)D.nflush);
    d->maxflight = D.maxflight;
out:
    for (int j = 0; D.dp && j < d->nprogs; j++)
        prog_free(&D.dp[j]);
    for (int r = 0; D.rk && r < d->run.nhosts; r++)
        free(D.rk[r].last);
    for (size_t c = 0; c < D.nchunks; c++)
        free(D.chunks[c]);
    free(D.chunks);
    free(D.ev);
    free(D.wait);
    free(D.dp);
    free(D.rk);
    return st;
}
