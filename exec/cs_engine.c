/*
 * cs_engine.c - the live step engine (contract in cs_engine.h).
 *
 * Data structures, all built at create time:
 *   st[]     one record per step: static fields (kind, peer, successors,
 *            channel neighbours, sequence number on its channel) and the
 *            run-time state (unmet dependencies, posted, pointers and byte
 *            counts for the current element count).
 *   succ[]   successor lists back to back (CSR), the reverse of deps.
 *   rq[]     FIFO of send/recv steps ready to post; lq[] FIFO of local
 *            work (reduce, copy, nop, and the reduction of a completed
 *            rrecv).  Each step enters a queue at most once per run, so
 *            arrays of nsteps entries never overflow.
 *   req[]    one transport request per step (request slot = step index).
 *
 * Main loop: post everything postable (until the transport says CS_AGAIN),
 * poll completions, do one slice of local work, and check the no-progress
 * timer.  When idle for a while it yields the CPU, since ranks are often
 * oversubscribed on a few cores.
 *
 * Fast path (small messages are latency bound): the clock is not read by a
 * run that progresses unless per-step timestamps are asked for
 * (cs_engine_record_times), the idle loop reads it only every IDLE_CLOCK
 * spins (the no-progress timer starts there), and a send the transport
 * completed inline (tiny messages, req->status already CS_OK on return) is
 * completed at once without waiting for a completion entry.
 *
 * Early receives.  A recv-reduce lands in its own staging slot, so its
 * receive is posted as soon as channel order allows (at the start of the
 * run for the first on each channel), before its dependencies are met;
 * only the reduction waits for them (state ST_ARRIVED in between).  Peers'
 * messages then find a posted receive (no unexpected-message copy) and a
 * rendezvous can start while this rank is still busy.  Plain receives
 * write their destination directly and keep waiting for their dependencies.
 *
 * Deferred copies (a copy from the input that the recv-reduces after it
 * do slice by slice): see cs_engine_plan.c, with the other analyses done at
 * create time (successor lists, channel chains: the rank's plan,
 * cs_plan.h).  Buffer sizes and staging slots: cs_plan_layout.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cs_engine_int.h"
#include "cs_intr.h"
#include "cs_log.h"
#include "tp_util.h"

#define TAG_SEQ_BITS 19
#define TAG_SEQ_MASK ((1ull << TAG_SEQ_BITS) - 1)
#define TAG_CTRL (1ull << (CS_TP_TAG_BITS - 1))
#define SLICE_BYTES (256u * 1024u)
#define POLL_MAX 64
#define IDLE_YIELD 32
#define IDLE_CLOCK 64
#define PEER_GRACE_NS 50000000ull /* see peer_said_why */
#define MEM_ALIGN 64 /* buffers and staging slots start on a cache line */

/* collstep's one clock (core/cs_time.h), for the engine's users. */
uint64_t cs_engine_now_ns(void)
{
    return cs_now_ns();
}

/* ---- creation ---------------------------------------------------------- */

static int alloc_memory(cs_engine_t *e, cs_err_t *err)
{
    const cs_rank_sched_t *rs = e->rs;
    e->nmem = (uint32_t)rs->nbufs + 1;
    e->mem = calloc(e->nmem, sizeof(*e->mem));
    e->mem_bytes = calloc(e->nmem, sizeof(*e->mem_bytes));
    e->mr = calloc(e->nmem, sizeof(*e->mr));
    e->stage_off = calloc(e->n ? e->n : 1, sizeof(*e->stage_off));
    if (!e->mem || !e->mem_bytes || !e->mr || !e->stage_off)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    cs_plan_layout(e->s, e->rank, e->cfg.max_count, e->esize, MEM_ALIGN, e->mem_bytes,
                   e->stage_off);
    for (uint32_t b = 0; b < e->nmem; b++) {
        size_t bytes = cs_plan_align(e->mem_bytes[b], MEM_ALIGN);
        if (e->tp->mem) { /* the transport's own memory: registered already */
            int st = e->tp->mem->alloc(e->tp, bytes ? bytes : 64, (void **)&e->mem[b], &e->mr[b]);
            if (st != CS_OK) {
                e->mem[b] = NULL, e->mr[b] = NULL;
                return cs_err_set(err, st, "cannot allocate %zu bytes of transport memory for "
                                  "buffer %u: %s", bytes, b, cs_status_str(st));
            }
            continue;
        }
        if (posix_memalign((void **)&e->mem[b], 64, bytes ? bytes : 64)) {
            e->mem[b] = NULL;
            return cs_err_set(err, CS_ERR_NOMEM, "cannot allocate %zu bytes for buffer %u",
                              bytes, b);
        }
        int st = e->tp->ops->mr_reg(e->tp, e->mem[b], bytes ? bytes : 64, &e->mr[b]);
        if (st != CS_OK) {
            e->mr[b] = NULL;
            return cs_err_set(err, st, "memory registration of %zu bytes failed: %s", bytes,
                              cs_status_str(st));
        }
    }
    return CS_OK;
}

/* See "Warm-up" in cs_engine.h.  Counts grow by 4: every protocol switch of
 * the transports (tcp 64 KiB, shm 128 KiB, ofi_rxm's eager 16 KiB and
 * segmented up to its rendezvous limit) lies between two of them. */
static int warm_up(cs_engine_t *e, cs_err_t *err)
{
    for (uint32_t b = 0; b < e->nmem; b++)
        memset(e->mem[b], 0, e->mem_bytes[b]);
    uint64_t max = e->cfg.max_count, c = max ? 1 : 0;
    uint64_t t0 = cs_engine_now_ns();
    int runs = 0;
    for (;; c = c > max / 4 ? max : c * 4) {
        int st = cs_engine_run(e, c, err);
        runs++;
        if (st != CS_OK)
            return st;
        if (c >= max)
            break;
    }
    CS_INFO("exec", "rank %d: warm-up: %d runs up to %llu elements per block in %.1f ms",
            e->rank, runs, (unsigned long long)max, (double)(cs_engine_now_ns() - t0) * 1e-6);
    return CS_OK;
}

int cs_engine_create(const cs_sched_t *s, int rank, cs_tp_t *tp, const cs_engine_config_t *cfg,
                     cs_engine_t **out, cs_err_t *err)
{
    if (rank < 0 || rank >= s->desc.nranks || tp->nranks != s->desc.nranks)
        return cs_err_set(err, CS_ERR_INVAL, "rank %d / transport of %d ranks for a schedule "
                          "of %d ranks", rank, tp->nranks, s->desc.nranks);
    int swr;
    uint32_t swi;
    if (cs_sched_first_switch(s, &swr, &swi))
        return cs_err_set(err, CS_ERR_UNSUPPORTED,
                          "rank %d step %u: a switch step (in-network reduction) cannot run on "
                          "transport %s: no switch reduces here",
                          swr, swi, tp->ops && tp->ops->name ? tp->ops->name : "?");
    cs_reduce_fn_t red = cs_reduce_fn(cfg->dtype, cfg->op);
    if (!red || cs_dtype_size(cfg->dtype) == 0)
        return cs_err_set(err, CS_ERR_UNSUPPORTED, "no host reduction for %s / %s",
                          cs_dtype_name(cfg->dtype), cs_op_name(cfg->op));
    int st = CS_OK;
    cs_engine_t *e = calloc(1, sizeof(*e));
    if (!e)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    e->s = s;
    e->rs = &s->ranks[rank];
    e->rank = rank;
    e->tp = tp;
    e->cfg = *cfg;
    if (e->cfg.timeout_s <= 0)
        e->cfg.timeout_s = 60;
    e->esize = cs_dtype_size(cfg->dtype);
    e->red = red;
    e->n = e->rs->nsteps;
    e->prepared = UINT64_MAX;
    size_t n1 = e->n ? e->n : 1;
    e->st = calloc(n1, sizeof(*e->st));
    e->req = calloc(n1, sizeof(*e->req));
    e->rq = calloc(n1, sizeof(*e->rq));
    e->lq = calloc(n1, sizeof(*e->lq));
    e->times = calloc(n1, sizeof(*e->times));
    if (!e->st || !e->req || !e->rq || !e->lq || !e->times) {
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < e->n; i++) {
        const cs_step_t *x = &e->rs->steps[i];
        e->st[i].kind = x->kind;
        e->st[i].chan = x->chan;
        e->st[i].peer = x->peer;
        e->st[i].ndeps = x->ndeps;
        e->req[i].user = &e->st[i];
        e->req[i].peer = x->peer;
    }
    if ((st = cs__engine_plan(e, err)) != CS_OK)
        goto fail;
    cs__engine_fuse_copies(e);
    if ((st = alloc_memory(e, err)) != CS_OK) {
        tp->ops->leave(tp, 0); /* the others are in the warm-up: they must not wait */
        goto fail;
    }
    if ((st = warm_up(e, err)) != CS_OK)
        goto fail;
    *out = e;
    return CS_OK;
fail:
    cs_engine_destroy(e);
    return st;
}

/* Cancel and drain whatever is still posted (after a failed run). */
static void drain(cs_engine_t *e)
{
    if (e->left)
        return; /* the transport was told to leave: only its close remains */
    int pending = 0;
    for (uint32_t i = 0; i < e->n; i++)
        if (e->req[i].status == CS_INPROGRESS) {
            e->tp->ops->cancel(e->tp, &e->req[i]);
            pending++;
        }
    uint64_t until = cs_engine_now_ns() + 200000000ull;
    cs_tp_req_t *done[POLL_MAX];
    while (pending > 0 && cs_engine_now_ns() < until) {
        int k = e->tp->ops->poll(e->tp, done, POLL_MAX);
        if (k < 0)
            break;
        pending -= k;
    }
}

void cs_engine_destroy(cs_engine_t *e)
{
    if (!e)
        return;
    if (e->req)
        drain(e);
    for (uint32_t b = 0; e->mem && b < e->nmem; b++) {
        if (e->tp->mem) {
            if (e->mem[b])
                e->tp->mem->free(e->tp, e->mem[b], e->mr ? e->mr[b] : NULL);
            continue;
        }
        if (e->mr && e->mr[b])
            e->tp->ops->mr_dereg(e->tp, e->mr[b]);
        free(e->mem[b]);
    }
    free(e->mem);
    free(e->mem_bytes);
    free(e->mr);
    free(e->st);
    cs_plan_rank_fini(&e->plan);
    free(e->stage_off);
    free(e->req);
    free(e->rq);
    free(e->lq);
    free(e->times);
    free(e);
}

void *cs_engine_buf(cs_engine_t *e, int buf)
{
    return (buf >= 0 && buf < e->rs->nbufs) ? e->mem[buf] : NULL;
}

double cs_engine_mem_estimate(const cs_sched_t *s, int rank, uint64_t max_count, cs_dtype_t dt)
{
    const cs_rank_sched_t *rs = &s->ranks[rank];
    size_t *bytes = calloc((size_t)rs->nbufs + 1, sizeof(*bytes));
    size_t *stage = calloc(rs->nsteps ? rs->nsteps : 1, sizeof(*stage));
    double total = -1;
    if (bytes && stage) {
        /* the same layout alloc_memory asks for, each area rounded to a
         * page as the transports' memory is */
        cs_plan_layout(s, rank, max_count, cs_dtype_size(dt), MEM_ALIGN, bytes, stage);
        total = 0;
        for (int b = 0; b <= rs->nbufs; b++)
            total += (double)cs_plan_align(bytes[b] ? bytes[b] : 64, 4096);
    }
    free(bytes);
    free(stage);
    return total;
}

uint64_t cs_engine_buf_elems(const cs_engine_t *e, int buf, uint64_t count)
{
    return cs_plan_buf_elems(e->s, e->rank, buf, count);
}

const cs_step_time_t *cs_engine_step_times(const cs_engine_t *e, uint32_t *nsteps)
{
    *nsteps = e->n;
    return e->times;
}

void cs_engine_record_times(cs_engine_t *e, int on)
{
    e->rec = on != 0;
}

uint64_t cs_engine_run_start_ns(const cs_engine_t *e)
{
    return e->t0;
}

/* ns since the run started, only when timestamps are recorded. */
static inline uint64_t stamp(const cs_engine_t *e)
{
    return e->rec ? cs_engine_now_ns() - e->t0 : 0;
}

/* ---- running ----------------------------------------------------------- */

static char *range_ptr(cs_engine_t *e, const cs_range_t *r, uint64_t count)
{
    const cs_buffer_t *b = &e->rs->bufs[r->buf];
    return e->mem[r->buf] + cs_buf_elem_off(e->s, b, count, r->off) * e->esize;
}

static void prepare(cs_engine_t *e, uint64_t count)
{
    char *stage = e->mem[e->nmem - 1];
    for (uint32_t i = 0; i < e->n; i++) {
        const cs_step_t *x = &e->rs->steps[i];
        estep_t *t = &e->st[i];
        const cs_range_t *r = x->kind == CS_STEP_SEND ? &x->src : &x->dst;
        t->a = t->b = NULL;
        t->mr = NULL;
        t->elems = 0;
        if (x->kind == CS_STEP_NOP)
            continue;
        t->elems = cs_range_elems(e->s, &e->rs->bufs[r->buf], count, r->off, r->n);
        if (x->kind == CS_STEP_SEND || x->kind == CS_STEP_REDUCE || x->kind == CS_STEP_COPY)
            t->a = range_ptr(e, &x->src, count);
        if (x->kind != CS_STEP_SEND)
            t->b = range_ptr(e, &x->dst, count);
        if (x->kind == CS_STEP_RRECV) {
            t->a = stage + e->stage_off[i];
            t->c = NULL;
            if (t->fused >= 0) { /* same global chunks in the copy's source */
                const cs_step_t *cp = &e->rs->steps[t->fused];
                cs_range_t r = {cp->src.buf, cp->src.off + (x->dst.off - cp->dst.off), x->dst.n};
                t->c = range_ptr(e, &r, count);
            }
        }
        if (x->kind == CS_STEP_SEND)
            t->mr = e->mr[x->src.buf];
        else if (x->kind == CS_STEP_RECV)
            t->mr = e->mr[x->dst.buf];
        else if (x->kind == CS_STEP_RRECV)
            t->mr = e->mr[e->nmem - 1];
    }
    e->prepared = count;
}

static void complete(cs_engine_t *e, uint32_t i);

static void make_ready(cs_engine_t *e, uint32_t i)
{
    estep_t *t = &e->st[i];
    if (t->kind == CS_STEP_RRECV) { /* posted early: reduce once the data is in */
        t->depready = 1;
        if (t->arrived) {
            t->state = ST_LOCAL;
            t->cursor = 0;
            e->lq[e->lq_tail++] = i;
        }
    } else if (cs_kind_is_comm(t->kind)) {
        t->depready = 1;
        if (t->chan_prev < 0 || e->st[t->chan_prev].posted) {
            t->state = ST_QUEUED;
            e->rq[e->rq_tail++] = i;
        }
    } else {
        t->state = ST_LOCAL;
        t->cursor = 0;
        if (e->rec)
            e->times[i].t_start = stamp(e);
        if (t->deferred)
            complete(e, i); /* its recv-reduces do the copying */
        else
            e->lq[e->lq_tail++] = i;
    }
}

static void complete(cs_engine_t *e, uint32_t i)
{
    estep_t *t = &e->st[i];
    t->state = ST_DONE;
    if (e->rec) {
        e->times[i].t_end = stamp(e);
        if (!e->times[i].t_data)
            e->times[i].t_data = e->times[i].t_end;
    }
    e->ndone++;
    for (uint32_t j = 0; j < t->nsucc; j++) {
        uint32_t q = e->succ[t->succ_off + j];
        if (--e->st[q].unmet == 0)
            make_ready(e, q);
    }
}

static int post(cs_engine_t *e, uint32_t i)
{
    estep_t *t = &e->st[i];
    uint64_t seq = (e->runs * t->chan_len + t->seq) & TAG_SEQ_MASK;
    uint64_t tag = ((uint64_t)t->chan << TAG_SEQ_BITS) | seq;
    size_t bytes = t->elems * e->esize;
    if (t->kind == CS_STEP_SEND)
        return e->tp->ops->isend(e->tp, t->peer, t->a, bytes, t->mr, tag, &e->req[i]);
    return e->tp->ops->irecv(e->tp, t->peer, t->kind == CS_STEP_RRECV ? t->a : t->b, bytes,
                             t->mr, tag, &e->req[i]);
}

/* One slice of the local work at the head of lq; 1 when progress. */
static int local_slice(cs_engine_t *e)
{
    uint32_t i = e->lq[e->lq_head];
    estep_t *t = &e->st[i];
    uint64_t n = t->elems - t->cursor, max = SLICE_BYTES / e->esize;
    if (n > max)
        n = max;
    size_t off = t->cursor * e->esize;
    if (t->kind == CS_STEP_COPY)
        memcpy(t->b + off, t->a + off, n * e->esize);
    else if (t->kind == CS_STEP_REDUCE)
        e->red(t->b + off, t->a + off, n);
    else if (t->kind == CS_STEP_RRECV) {
        if (t->c) /* the deferred copy's slice, still in cache for the reduction */
            memcpy(t->b + off, t->c + off, n * e->esize);
        e->red(t->b + off, t->a + off, n);
    }
    t->cursor += n;
    if (t->cursor >= t->elems) {
        e->lq_head++;
        complete(e, i);
    }
    return 1;
}

/* The peer this rank is most plausibly waiting for. */
static int blame(const cs_engine_t *e, uint32_t *step)
{
    int best = -1;
    for (uint32_t i = 0; i < e->n; i++) {
        const estep_t *t = &e->st[i];
        if (!cs_kind_is_comm(t->kind) || t->state == ST_DONE || t->state == ST_ARRIVED)
            continue;
        int score = t->state == ST_POSTED ? (t->kind == CS_STEP_SEND ? 2 : 3) : 1;
        if (best < 0 || score > best) {
            best = score;
            *step = i;
        }
    }
    return best < 0 ? -1 : e->st[*step].peer;
}

/* The run stops: this rank was interrupted (it tells its peers and fails
 * with CS_ERR_INTERRUPTED), or a peer left (CS_ERR_PEER naming it). */
static int stop(cs_engine_t *e, cs_err_t *err)
{
    int sig = cs_intr_pending();
    if (sig) {
        e->tp->ops->leave(e->tp, sig);
        e->left = 1;
        return cs_err_set(err, CS_ERR_INTERRUPTED, "rank %d: interrupted (%s)", e->rank,
                          cs_intr_signame(sig));
    }
    char why[96];
    if (cs_tp_left_why(e->tp, why, sizeof(why)) < 0)
        snprintf(why, sizeof(why), "a peer left");
    return cs_err_set(err, CS_ERR_PEER, "rank %d: %s", e->rank, why);
}

/* A peer went away: did it (or another) say why?  The transport may learn
 * it a little after the failure (a LEAVE behind a reset, a liveness check
 * that reads the reason after the death): poll for up to PEER_GRACE_NS.
 * What completes meanwhile is dropped: the run fails anyway. */
static int peer_said_why(cs_engine_t *e)
{
    uint64_t until = cs_engine_now_ns() + PEER_GRACE_NS;
    cs_tp_req_t *done[POLL_MAX];
    while (!e->tp->left_peer && cs_intr_peer(NULL) < 0 && cs_engine_now_ns() < until)
        if (e->tp->ops->poll(e->tp, done, POLL_MAX) < 0)
            break;
    return e->tp->left_peer || cs_intr_peer(NULL) >= 0;
}

static int handle_done(cs_engine_t *e, cs_tp_req_t *r, cs_err_t *err)
{
    estep_t *t = r->user;
    uint32_t i = (uint32_t)(t - e->st);
    if (r->status == CS_ERR_PEER && peer_said_why(e))
        return stop(e, err);
    if (r->status < 0)
        return cs_err_set(err, r->status == CS_ERR_PEER ? CS_ERR_PEER : r->status,
                          "rank %d: %s with rank %d failed in step %u (channel %u): %s", e->rank,
                          t->kind == CS_STEP_SEND ? "send" : "receive", t->peer, i, t->chan,
                          cs_status_str(r->status));
    if (t->kind != CS_STEP_SEND && r->nbytes != t->elems * e->esize)
        return cs_err_set(err, CS_ERR_MISMATCH,
                          "rank %d: step %u expected %llu bytes from rank %d, got %zu", e->rank,
                          i, (unsigned long long)(t->elems * e->esize), t->peer, r->nbytes);
    if (e->rec)
        e->times[i].t_data = stamp(e);
    if (t->kind == CS_STEP_RRECV) {
        t->arrived = 1;
        t->state = ST_ARRIVED;
        if (t->depready) {
            t->state = ST_LOCAL;
            t->cursor = 0;
            e->lq[e->lq_tail++] = i;
        }
    } else {
        complete(e, i);
    }
    return CS_OK;
}

int cs_engine_run(cs_engine_t *e, uint64_t count, cs_err_t *err)
{
    if (count > e->cfg.max_count)
        return cs_err_set(err, CS_ERR_RANGE, "count %llu above the engine's maximum %llu",
                          (unsigned long long)count, (unsigned long long)e->cfg.max_count);
    if (count != e->prepared)
        prepare(e, count);
    e->rq_head = e->rq_tail = e->lq_head = e->lq_tail = e->ndone = 0;
    for (uint32_t i = 0; i < e->n; i++) {
        estep_t *t = &e->st[i];
        t->unmet = t->ndeps;
        t->state = ST_WAIT;
        t->posted = t->depready = t->arrived = 0;
        e->req[i].status = CS_OK;
    }
    if (e->rec)
        memset(e->times, 0, e->n * sizeof(*e->times));
    e->t0 = e->rec ? cs_engine_now_ns() : 0; /* the clock costs ~10 % of an 8-byte run */
    for (uint32_t i = 0; i < e->n; i++) /* early receives first */
        if (e->st[i].kind == CS_STEP_RRECV && e->st[i].chan_prev < 0) {
            e->st[i].state = ST_QUEUED;
            e->rq[e->rq_tail++] = i;
        }
    for (uint32_t i = 0; i < e->n; i++)
        if (e->st[i].ndeps == 0)
            make_ready(e, i);
    uint64_t last = e->t0, limit = (uint64_t)(e->cfg.timeout_s * 1e9);
    unsigned idle = 0;
    cs_tp_req_t *done[POLL_MAX];
    int st = CS_OK;
    while (e->ndone < e->n) {
        int progress = 0;
        if (__builtin_expect(cs_intr_pending() != 0 || e->tp->left_peer != 0, 0)) {
            st = stop(e, err);
            goto out;
        }
        while (e->rq_head < e->rq_tail) {
            uint32_t i = e->rq[e->rq_head];
            int rc = post(e, i);
            if (rc == CS_AGAIN)
                break;
            if (rc == CS_ERR_PEER && peer_said_why(e)) {
                st = stop(e, err);
                goto out;
            }
            if (rc < 0) {
                st = cs_err_set(err, rc, "rank %d: posting step %u to rank %d failed: %s",
                                e->rank, i, e->st[i].peer, cs_status_str(rc));
                goto out;
            }
            e->rq_head++;
            progress = 1;
            estep_t *t = &e->st[i];
            t->state = ST_POSTED;
            t->posted = 1;
            if (e->rec)
                e->times[i].t_start = stamp(e);
            if (t->chan_next >= 0) {
                estep_t *nx = &e->st[t->chan_next];
                if ((nx->depready || nx->kind == CS_STEP_RRECV) && nx->state == ST_WAIT) {
                    nx->state = ST_QUEUED;
                    e->rq[e->rq_tail++] = (uint32_t)t->chan_next;
                }
            }
            if (t->kind == CS_STEP_SEND && e->req[i].status == CS_OK)
                complete(e, i); /* sent inline: no completion will come */
        }
        int k = e->tp->ops->poll(e->tp, done, POLL_MAX);
        if (k < 0) {
            st = cs_err_set(err, k, "rank %d: transport failure: %s", e->rank, cs_status_str(k));
            goto out;
        }
        for (int j = 0; j < k; j++)
            if ((st = handle_done(e, done[j], err)) != CS_OK)
                goto out;
        if (k > 0)
            progress = 1;
        if (e->lq_head < e->lq_tail)
            progress |= local_slice(e);
        if (progress) {
            idle = 0;
            last = 0;
            continue;
        }
        if (++idle % IDLE_CLOCK != 1 && !e->cfg.oversubscribed)
            continue; /* spin: the clock is read every IDLE_CLOCK idle rounds */
        uint64_t now = cs_engine_now_ns();
        if (last == 0)
            last = now;
        if (now - last > limit) {
            if (cs_intr_peer(NULL) >= 0) { /* heard of by another way (the bootstrap) */
                st = stop(e, err);
                goto out;
            }
            uint32_t step = 0;
            int peer = blame(e, &step);
            st = cs_err_set(err, CS_ERR_TIMEOUT,
                            "no progress for %.0f s, waiting for rank %d (step %u, "
                            "channel %u); did it die or run something else?",
                            e->cfg.timeout_s, peer, step, peer >= 0 ? e->st[step].chan : 0);
            goto out;
        }
        if (e->cfg.oversubscribed ? idle > IDLE_YIELD : now - last > 1000000ull)
            sched_yield();
    }
out:
    e->runs++;
    return st;
}
