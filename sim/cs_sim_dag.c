/*
 * cs_sim_dag.c - the activity-DAG engine (cs_sim.h, "Engines"): the same
 * step semantics as the rank actors of cs_sim_rank.c, without actors.
 *
 * Everything runs in maestro, from two kinds of SimGrid events:
 *   - a transfer finished: one SimGrid comm per matched message
 *     (Comm::sendto_init from the sender's host to the receiver's, started
 *     when both the send and its receive have been posted, exactly when the
 *     actors' put and get would meet in their mailbox), per up or down
 *     transfer of a switch operation; its completion callback
 *     (cs__sg_dag_begin) hands back the transfer's record;
 *   - a timer fired: a reduction's end on a rank's device stream (the
 *     stream is a FIFO computed when a reduction is queued, as the rank
 *     actors compute it), an instance's base latency;
 *   - a switch operation's wait before its down transfers ended: the one
 *     actor this engine starts, a sleeper on the switch's host per
 *     operation, as the actor engine's switch actor sleeps (see
 *     sw_up_done).
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
 * per rank a dag_rank_t; per channel direction 24 bytes; per transfer in
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
#include "cs_sim_int.h"

extern uint32_t *cs__work_q, *cs__work_sq;
extern double *cs__work_post;

enum { X_P2P = 0, X_UP, X_DOWN };

/* A transfer in flight (the completion callback's data). */
typedef struct dag_xfer {
    struct dag_xfer *next; /* free list */
    uint32_t kind;
    int src, dst;          /* ranks (X_UP / X_DOWN: the member in both) */
    uint32_t sstep, dstep; /* local step indices */
    uint32_t k;            /* switch operation */
    double start;
} dag_xfer_t;

/* One channel direction: src's sends to dst on one channel. */
typedef struct dag_chan {
    int src, dst;
    uint32_t send;   /* the posted send waiting for its receive, CS__NONE32 */
    uint32_t rhead;  /* first posted receive not yet matched (if rcount) */
    uint32_t rcount; /* posted receives not yet matched */
    uint32_t spad;
    double sbytes;   /* the posted send's bytes (restart included) */
} dag_chan_t;

/* One switch operation, for the instance running. */
typedef struct dag_swop {
    uint32_t narr, nupd, nget, ndownd, dput;
    int down; /* its down transfers have begun */
    double t0, bytes, arrive, ready, work;
} dag_swop_t;

/* What the engine adds to a compiled program. */
typedef struct dag_prog {
    uint32_t *chan_of; /* per mailbox (global index): its channel, CS__NONE32 */
    dag_chan_t *chans;
    uint64_t nchans;
    /* switch operations: per op k its members' global ids as they arrive
     * (mem + off[k]) and the members waiting for their down transfer
     * (get + off[k]) */
    uint64_t *off, *mem, *get;
    dag_swop_t *sw;
    int ready;
} dag_prog_t;

typedef struct dag_rank {
    uint32_t qh, qt;     /* FIFO of issuable steps, in cs__work_q + base */
    uint32_t sqh, sqt;   /* sends waiting for a port, in cs__work_sq + base */
    uint32_t done, n;
    int inflight;
    double speed;        /* reduction bytes/s (0: free) */
    double stream_free;
    double *last;        /* restarts: per peer, when the last message to it ended */
} dag_rank_t;

typedef struct dag dag_t;
typedef void (*dag_fn)(dag_t *D, uint64_t arg);
/* A timer of this engine: fn(D, arg) at its date (through the pump). */
typedef struct dag_timer {
    dag_t *D;
    dag_fn fn;
} dag_timer_t;

struct dag {
    cs__drv_t *d;
    cs__run_t *run;
    const cs_sim_observer_t *obs;
    cs__inst_t I;
    dag_prog_t *dp;      /* per program */
    dag_prog_t *cur;     /* the running instance's */
    dag_rank_t *rk;      /* per rank */
    int P, inst;
    int sw_live;
    double *finish;
    dag_xfer_t *free_x;
    /* events of this instant, handled by the pump (see cs__dag_run) */
    struct dag_ev *ev;
    size_t nev, capev;
    int woken;           /* the pump has been released for them */
    uint64_t ntimers;    /* timers set and not yet fired */
    sg_sem_t sem;        /* releases the pump */
    dag_timer_t t_stream, t_start;
    void **chunks;
    size_t nchunks, capchunks;
    uint64_t nxfers, maxflight, flight;
};

static void drain(dag_t *D, int r);
static void complete(dag_t *D, int r, uint32_t i);
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
typedef struct dag_ev {
    dag_fn fn;
    uint64_t arg;
} dag_ev_t;

static void defer(dag_t *D, dag_fn fn, uint64_t arg)
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
    defer(t->D, t->fn, arg);
}

static int timer_set(dag_t *D, double date, dag_timer_t *t, uint64_t arg)
{
    if (cs__sg_timer(date, timer_fired, t, arg) != 0)
        return -1;
    D->ntimers++;
    return 0;
}

/* ---- transfers ---------------------------------------------------------- */

static dag_xfer_t *xfer_new(dag_t *D)
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

static void xfer_free(dag_t *D, dag_xfer_t *x)
{
    x->next = D->free_x;
    D->free_x = x;
    D->flight--;
}

/* Start x from host a to host b; on failure the run is marked failed. */
static void xfer_start(dag_t *D, dag_xfer_t *x, sg_host_t a, sg_host_t b, double bytes,
                       double rate)
{
    x->start = simgrid_get_clock();
    D->nxfers++;
    if (cs__sg_xfer(a, b, bytes, rate, x) != 0)
        D->run->failed = CS_ERR_NOMEM;
}

/* ---- ranks -------------------------------------------------------------- */

static inline cs__op_t *op_of(dag_t *D, int r, uint32_t i)
{
    return &D->I.prog->ops[D->I.prog->base[r] + i];
}

static inline void push(dag_t *D, int r, uint32_t i)
{
    dag_rank_t *k = &D->rk[r];
    cs__work_q[D->I.prog->base[r] + k->qt++] = i;
}

static inline void release(dag_t *D, int r, uint32_t i)
{
    if (--op_of(D, r, i)->npend == 0)
        push(D, r, i);
}

static void check_end(dag_t *D)
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

static void complete(dag_t *D, int r, uint32_t i)
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
    complete(D, r, (uint32_t)arg);
    drain(D, r);
}

/* Queue `flops` bytes of reduction for step i on r's stream, or complete
 * it now when it costs nothing. */
static void compute(dag_t *D, int r, uint32_t i, double flops)
{
    dag_rank_t *k = &D->rk[r];
    double speed = k->speed;
    if (!(flops > 0 && speed > 0)) {
        complete(D, r, i);
        return;
    }
    double now = simgrid_get_clock();
    double start = k->stream_free > now ? k->stream_free : now;
    k->stream_free = start + flops / speed;
    if (timer_set(D, k->stream_free, &D->t_stream, (uint64_t)r << 32 | i) != 0) {
        D->run->failed = CS_ERR_NOMEM;
        complete(D, r, i);
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

/* Both sides of channel c are posted: start its transfer. */
static void match(dag_t *D, dag_chan_t *c)
{
    const cs__prog_t *p = D->I.prog;
    dag_xfer_t *x = xfer_new(D);
    uint32_t s = c->send, rv = c->rhead;
    c->send = CS__NONE32;
    c->rhead = --c->rcount ? op_of(D, c->dst, rv)->chan_next : CS__NONE32;
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
    xfer_start(D, x, D->run->hosts[c->src], D->run->hosts[c->dst], c->sbytes, rate);
}

static dag_chan_t *chan_of(dag_t *D, int r, const cs__op_t *o)
{
    uint32_t ch = D->cur->chan_of[D->I.prog->mbox_base[r] + o->mbx];
    return ch == CS__NONE32 ? NULL : &D->cur->chans[ch];
}

static void post_send(dag_t *D, int r, uint32_t i)
{
    cs__op_t *o = op_of(D, r, i);
    dag_chan_t *c = chan_of(D, r, o);
    if (!c)
        return; /* never matched: the instance deadlocks, as with actors */
    c->send = i;
    c->sbytes = o->bytes + restart_bytes(D, r, i, o->bytes);
    if (c->rcount)
        match(D, c);
}

static void post_recv(dag_t *D, int r, uint32_t i)
{
    cs__op_t *o = op_of(D, r, i);
    dag_chan_t *c = chan_of(D, r, o);
    if (!c)
        return;
    if (c->rcount++ == 0)
        c->rhead = i;
    if (c->send != CS__NONE32)
        match(D, c);
}

/* ---- switch operations (cs_sim_switch.c has the model) ------------------ */

static const cs__swop_t *swop(dag_t *D, uint32_t k)
{
    return &D->I.prog->swops[k];
}

static void sw_end(dag_t *D, uint32_t k)
{
    const cs__swop_t *o = swop(D, k);
    dag_swop_t *w = &D->cur->sw[k];
    const cs__swgrp_t *g = &D->I.prog->swg[o->group];
    if (D->obs && D->obs->switch_op) {
        cs_sim_switch_rec_t rec = {g->sw,
                                   D->run->plat->switches[g->sw].host,
                                   (int)o->group,
                                   o->op,
                                   o->chan,
                                   (int)o->n,
                                   (uint64_t)(o->nup * w->bytes),
                                   (uint64_t)(o->ndown * w->bytes),
                                   w->t0,
                                   w->work,
                                   simgrid_get_clock()};
        D->obs->switch_op(D->obs->ctx, D->inst, &rec);
    }
    D->sw_live--;
}

static void sw_down_one(dag_t *D, uint32_t k, uint64_t gid)
{
    const cs__prog_t *p = D->I.prog;
    int r;
    uint32_t i;
    cs_plan_locate(p->base, p->nranks, gid, &r, &i);
    dag_xfer_t *x = xfer_new(D);
    if (!x) {
        D->run->failed = CS_ERR_NOMEM;
        return;
    }
    x->kind = X_DOWN;
    x->src = x->dst = r;
    x->sstep = x->dstep = i;
    x->k = k;
    xfer_start(D, x, p->swg[swop(D, k)->group].host, D->run->hosts[r], D->cur->sw[k].bytes, -1);
}

static void sw_down(dag_t *D, uint64_t k)
{
    dag_swop_t *w = &D->cur->sw[k];
    const cs__swop_t *o = swop(D, (uint32_t)k);
    D->I.prog->swdown[k] = simgrid_get_clock();
    w->down = 1;
    w->dput = o->ndown;
    const uint64_t *g = D->cur->get + D->cur->off[k];
    for (uint32_t m = 0; m < w->nget && w->dput > 0; m++, w->dput--)
        sw_down_one(D, (uint32_t)k, g[m]);
    if (o->ndown == 0)
        sw_end(D, (uint32_t)k);
}

typedef struct sw_sleeper {
    dag_t *D;
    uint64_t k;
    double wait;
} sw_sleeper_t;

static void sw_sleeper(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    sw_sleeper_t *a = sg_actor_self_get_data();
    dag_t *D = a->D;
    uint64_t k = a->k;
    sg_actor_sleep_for(a->wait);
    free(a);
    D->ntimers--;
    defer(D, sw_down, k);
}

/* Every up transfer of operation k has left its member. */
static void sw_up_done(dag_t *D, uint32_t k)
{
    const cs__swop_t *o = swop(D, k);
    dag_swop_t *w = &D->cur->sw[k];
    const cs_sim_nccl_t *nc = D->run->opts->model == CS_SIM_NCCL ? D->I.in->nccl : NULL;
    if (w->arrive > w->ready)
        w->ready = w->arrive;
    double now = simgrid_get_clock(), lat = nc ? nc->sw_lat : D->I.prog->swg[o->group].lat;
    double wait = lat + (w->ready > now ? w->ready - now : 0);
    if (wait > 0) {
        /* a sleeping actor on the switch's host, as the actor engine's
         * switch actor sleeps: SimGrid's sharing of the links depends on
         * the order in which comms start at one instant, and a sleep ends
         * in another phase of its loop than a timer (with per-message
         * caps, NVLS operations under the NCCL model moved by up to 23 %
         * between the two) */
        sw_sleeper_t *a = malloc(sizeof(*a));
        if (a) {
            a->D = D;
            a->k = k;
            a->wait = wait;
            D->ntimers++;
            sg_actor_t act = sg_actor_init("switch-wait", D->I.prog->swg[o->group].host);
            sg_actor_set_data(act, a);
            sg_actor_start(act, sw_sleeper, 0, NULL);
            return;
        }
        D->run->failed = CS_ERR_NOMEM;
    }
    sw_down(D, k);
}

/* The last member of operation k issued its step: the operation starts. */
static void sw_start(dag_t *D, uint32_t k)
{
    const cs__prog_t *p = D->I.prog;
    const cs__swop_t *o = swop(D, k);
    dag_swop_t *w = &D->cur->sw[k];
    const cs__swgrp_t *g = &p->swg[o->group];
    const cs_step_t *ls = &p->s->ranks[o->lead_rank].steps[o->lead_step];
    D->sw_live++;
    w->t0 = w->arrive = w->ready = simgrid_get_clock();
    w->bytes = (double)cs__step_bytes(p->s, o->lead_rank, ls, D->I.count, D->I.esize);
    w->work = 0;
    const cs_sim_nccl_t *nc = D->run->opts->model == CS_SIM_NCCL ? D->I.in->nccl : NULL;
    double rate = nc && nc->sw_rate > 0 ? nc->sw_rate * o->nup : g->rate;
    if (o->op != CS_SW_MULTICAST && rate > 0 && isfinite(rate)) {
        double *free_at = &D->run->sw_free[g->sw];
        w->work = o->nup * w->bytes / rate;
        *free_at = (*free_at > w->t0 ? *free_at : w->t0) + w->work;
        w->ready = *free_at;
    }
    const uint64_t *mem = D->cur->mem + D->cur->off[k];
    for (uint32_t m = 0; m < w->narr; m++) {
        int r;
        uint32_t i;
        cs_plan_locate(p->base, p->nranks, mem[m], &r, &i);
        if (!p->s->ranks[r].steps[i].src.n)
            continue;
        dag_xfer_t *x = xfer_new(D);
        if (!x) {
            D->run->failed = CS_ERR_NOMEM;
            return;
        }
        x->kind = X_UP;
        x->src = x->dst = r;
        x->sstep = x->dstep = i;
        x->k = k;
        xfer_start(D, x, D->run->hosts[r], g->host, w->bytes, -1);
    }
    if (o->nup == 0)
        sw_up_done(D, k);
}

/* Member r's step i waits for its down transfer. */
static void sw_get(dag_t *D, uint32_t k, int r, uint32_t i)
{
    dag_swop_t *w = &D->cur->sw[k];
    uint64_t gid = D->I.prog->base[r] + i;
    if (w->down && w->dput > 0) {
        w->dput--;
        sw_down_one(D, k, gid);
        return;
    }
    D->cur->get[D->cur->off[k] + w->nget++] = gid;
}

static void issue_switch(dag_t *D, int r, uint32_t i)
{
    const cs__prog_t *p = D->I.prog;
    cs__op_t *o = op_of(D, r, i);
    const cs_step_t *st = &p->s->ranks[r].steps[i];
    uint64_t gid = p->base[r] + i;
    uint32_t k = p->swop_of[gid];
    dag_swop_t *w = &D->cur->sw[k];
    D->cur->mem[D->cur->off[k] + w->narr++] = gid;
    if (st->src.n)
        o->npend = st->dst.n > 0; /* 1: its get follows its put */
    else
        sw_get(D, k, r, i);
    if (o->chan_next != CS__NONE32)
        release(D, r, o->chan_next);
    if (w->narr == p->swops[k].n)
        sw_start(D, k);
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
        issue_switch(D, r, i);
        break;
    default:
        if (post)
            post[i] = simgrid_get_clock();
        complete(D, r, i);
        break;
    }
}

/* Issue everything r can issue, in FIFO order. */
static void drain(dag_t *D, int r)
{
    dag_rank_t *k = &D->rk[r];
    const uint32_t *q = cs__work_q + D->I.prog->base[r];
    while (k->qh < k->qt)
        issue(D, r, q[k->qh++]);
    k->qh = k->qt = 0;
}

/* ---- completions -------------------------------------------------------- */

static void on_p2p(dag_t *D, dag_xfer_t *x)
{
    int s = x->src, d = x->dst;
    uint32_t si = x->sstep, di = x->dstep;
    double start = x->start;
    xfer_free(D, x);
    /* the sender (as cs_sim_rank.c finished) */
    dag_rank_t *k = &D->rk[s];
    cs__op_t *so = op_of(D, s, si);
    k->inflight--;
    if (k->last)
        k->last[d] = simgrid_get_clock();
    if (so->chan_next != CS__NONE32)
        release(D, s, so->chan_next);
    if (k->sqh < k->sqt)
        issue(D, s, cs__work_sq[D->I.prog->base[s] + k->sqh++]);
    complete(D, s, si);
    drain(D, s);
    /* the receiver */
    cs__op_t *ro = op_of(D, d, di);
    if (D->obs && D->obs->xfer) {
        cs__run_t *run = D->run;
        cs_sim_xfer_rec_t rec = {s,
                                 d,
                                 run->host_names[s],
                                 run->host_names[d],
                                 si,
                                 di,
                                 D->I.prog->s->ranks[d].steps[di].chan,
                                 (uint64_t)ro->bytes,
                                 start,
                                 simgrid_get_clock()};
        D->obs->xfer(D->obs->ctx, D->inst, &rec);
    }
    if (ro->kind == CS_STEP_RRECV)
        compute(D, d, di, ro->bytes);
    else
        complete(D, d, di);
    drain(D, d);
}

static void on_up(dag_t *D, dag_xfer_t *x)
{
    const cs__prog_t *p = D->I.prog;
    int r = x->src;
    uint32_t i = x->sstep, k = x->k;
    xfer_free(D, x);
    const cs__swop_t *o = swop(D, k);
    dag_swop_t *w = &D->cur->sw[k];
    const cs__swgrp_t *g = &p->swg[o->group];
    double now = simgrid_get_clock(), at = now;
    if (g->uplat) {
        const cs_group_t *gr = &p->s->groups[o->group];
        uint32_t lo = 0, hi = gr->n;
        while (lo < hi) { /* members are sorted */
            uint32_t mid = lo + (hi - lo) / 2;
            if (gr->members[mid] < r)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < gr->n && gr->members[lo] == r)
            at += g->uplat[lo];
    }
    if (at > w->arrive)
        w->arrive = at;
    if (D->obs && D->obs->xfer) {
        int sw = g->sw;
        cs_sim_xfer_rec_t rec = {r,          -1 - sw,   D->run->host_names[r],
                                 D->run->plat->switches[sw].host,
                                 i,          i,         o->chan,
                                 (uint64_t)w->bytes,
                                 w->t0,      now};
        D->obs->xfer(D->obs->ctx, D->inst, &rec);
    }
    /* the member: its get follows, or its step is done */
    cs__op_t *mo = op_of(D, r, i);
    if (mo->npend == 1) {
        mo->npend = 0;
        sw_get(D, k, r, i);
    } else {
        complete(D, r, i);
        drain(D, r);
    }
    if (++w->nupd == o->nup)
        sw_up_done(D, k);
}

static void on_down(dag_t *D, dag_xfer_t *x)
{
    const cs__prog_t *p = D->I.prog;
    int r = x->dst;
    uint32_t i = x->dstep, k = x->k;
    xfer_free(D, x);
    const cs__swop_t *o = swop(D, k);
    if (D->obs && D->obs->xfer) {
        int sw = p->swg[o->group].sw;
        cs_sim_xfer_rec_t rec = {-1 - sw,
                                 r,
                                 D->run->plat->switches[sw].host,
                                 D->run->host_names[r],
                                 i,
                                 i,
                                 p->s->ranks[r].steps[i].chan,
                                 (uint64_t)op_of(D, r, i)->bytes,
                                 p->swdown[k],
                                 simgrid_get_clock()};
        D->obs->xfer(D->obs->ctx, D->inst, &rec);
    }
    complete(D, r, i);
    drain(D, r);
    if (++D->cur->sw[k].ndownd == o->ndown)
        sw_end(D, k);
}

static void xfer_done(dag_t *D, uint64_t arg)
{
    dag_xfer_t *x = (dag_xfer_t *)(uintptr_t)arg;
    if (D->inst < 0) {
        xfer_free(D, x);
        return;
    }
    switch (x->kind) {
    case X_P2P:
        on_p2p(D, x);
        break;
    case X_UP:
        on_up(D, x);
        break;
    default:
        on_down(D, x);
        break;
    }
}

/* SimGrid's completion callback (maestro, while it handles the instant's
 * completions). */
static void on_done(void *ctx, void *data)
{
    if (data)
        defer(ctx, xfer_done, (uint64_t)(uintptr_t)data);
}

/* The pump's turn, in maestro: every event of the instant, in order. */
static void flush(void *ctx)
{
    dag_t *D = ctx;
    D->woken = 0;
    for (size_t j = 0; j < D->nev; j++) {
        dag_ev_t e = D->ev[j];
        e.fn(D, e.arg);
        check_end(D);
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
        if (!dp->off || !dp->sw || !dp->mem || !dp->get)
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
        drain(D, r);
    }
    check_end(D);
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
    }
    if (I->prog->nswops)
        memset(D->cur->sw, 0, sizeof(dag_swop_t) * I->prog->nswops);
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
        if (in->nccl && in->nccl->base_lat > 0)
            base = in->nccl->base_lat;
    }
    if (base > 0 && timer_set(D, I->t0 + base, &D->t_start, 0) == 0)
        return;
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
    D.t_start = (dag_timer_t){&D, ranks_start};
    D.sem = sg_sem_init(0);
    if (d->n > 0) {
        D.inst = 0;
        inst_begin(&D);
        check_end(&D);
    }
    sg_actor_t pump = sg_actor_init("dag-pump", d->run.hosts[0]);
    sg_actor_set_data(pump, &D);
    sg_actor_start(pump, pump_main, 0, NULL);
    simgrid_run();
    sg_sem_destroy(D.sem);
    cs__sg_dag_end();
    CS_DEBUG("sim", "dag: %llu transfers, at most %llu in flight", (unsigned long long)D.nxfers,
             (unsigned long long)D.maxflight);
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
    free(D.dp);
    free(D.rk);
    return st;
}
