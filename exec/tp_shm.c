/*
 * tp_shm.c - the native shared-memory transport (`collstep run --transport
 * shm`): every rank of the job on one host, no libfabric, no locks and no
 * system calls on the small-message path.
 *
 * Segments (tp_shm_seg.c).  Each rank owns one shared segment (a memfd)
 * holding its inbound queues, one inbox per sender; the address blob says
 * how to map it (pid, fd, nonce); insert_addrs maps every peer's segment,
 * checks host (boot id) and identity, probes CMA, and waits until all peers
 * have mapped its own.
 *
 * Small messages (<= eager_max): eager.  The sender copies the payload
 * inline into the ring of (sender -> receiver) cells in the receiver's
 * segment (tp_shm_ring.h: single producer, single consumer, acquire /
 * release) and the send completes at once (inline completion, see isend in
 * cs_transport.h); ring full = CS_AGAIN.  The receiver's poll takes
 * messages off its rings in order: a matching posted receive gets the
 * payload copied straight out of the ring; otherwise the message is copied
 * to the unexpected list (preallocated records and payload slots).  When
 * those are exhausted the message stays in the ring (back-pressure on that
 * sender), nothing is dropped.
 *
 * Large messages (tp_shm_large.c): rendezvous.  The sender puts an RTS
 * cell (tag, length, buffer address, its region if the buffer is transport
 * memory, its operation cookie) in the ring.  Once the RTS matches a
 * receive, the receiver copies the data itself, one slice per poll so that
 * a huge message does not hold up the other requests, then answers FIN; the
 * send completes on FIN.  Single copy, from (best first):
 *   map     the engine's buffers are transport memory (tp->mem, memfds):
 *           the receiver maps the sender's region once and uses memcpy;
 *   CMA     process_vm_readv from the sender's buffer (any memory);
 *   bounce  neither possible: the receiver answers CTS and the sender
 *           pipelines the data through the pair's bounce slots (two
 *           copies, overlapped).
 * Measured here (2 ranks, allreduce-like exchange, data just written by
 * the sender): map 32 GB/s per direction at 1 MiB, CMA 8.4, bounce about
 * 9; eager through the ring beats a rendezvous up to 128 KiB (the eager
 * limit, a quarter of the ring).
 *
 * Matching.  Per peer, a FIFO of posted receives and a FIFO of unexpected
 * messages; a message takes the oldest posted receive with its tag, a
 * receive the oldest unexpected message with its tag, so messages of one
 * (peer, tag) match in posting order (a ring keeps the sender's order).
 *
 * Requests.  Operations that outlive their post (receives, rendezvous
 * sends) take a record from a pool preallocated at open, as do unexpected
 * messages; nothing is allocated after open / insert_addrs (the one
 * system call of the progress path besides CMA is the first mapping of a
 * peer's region, in warm-up).  Completed operations queue in a FIFO that
 * poll hands back.
 *
 * Failures.  Every CHECK_NS of polling the peers' liveness is checked
 * (tp_shm_seg.c: pidfd, or the peer's `closed` flag; a peer interrupted by
 * a signal writes it into its segment header before `closed`: leave).  A dead peer's ring
 * is drained first (what it sent before dying is delivered), then every
 * operation with it completes with CS_ERR_PEER and new posts to it fail
 * with CS_ERR_PEER, so the engine names it instead of hanging.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cs_env.h"
#include "cs_intr.h"
#include "cs_log.h"
#include "tp_shm.h"
#include "tp_shm_ring.h"

#define SHM_NOPS 4096          /* operations in flight */
#define SHM_NUNEX 4096         /* unexpected messages held */
#define SHM_NDATA_MAX 256      /* of which eager payloads (SHM_UNEX_BYTES / eager_max) */
#define SHM_NDATA_MIN 16       /* and at least this many, however large eager_max */
#define CONSUME_MAX 32         /* messages taken off one ring per poll */
#define CHECK_NS 2000000ull    /* liveness check period */
#define CHECK_POLLS 256        /* the clock is read every CHECK_POLLS polls */
#define TAG_MASK ((1ull << CS_TP_TAG_BITS) - 1)

/* Defaults chosen by measurement (README, tests/bench/bench_exec.sh). */
#define SHM_EAGER_MAX (128u * 1024u) /* at most a quarter of the ring */
#define SHM_SLOT (64u * 1024u)
#define SHM_NSLOTS 8u
#define SHM_SLICE (256u * 1024u)
#define SHM_UNEX_BYTES (8u << 20) /* payload held for unexpected eager messages */
/* Ring cells per sender: a rank's segment holds nranks rings, so they
 * shrink as the job grows (512, 128, 32 KiB per ring). */
#define SHM_FEW_RANKS 8
#define SHM_CELLS_FEW 8192
#define SHM_SOME_RANKS 32
#define SHM_CELLS_SOME 2048
#define SHM_CELLS_MANY 512
#define SHM_ATTACH_S 60.0 /* the attach barrier's limit when cfg->timeout_s is not set */

/* ---- operations ------------------------------------------------------ */

/* Back to the pool: its generation is bumped there, so late FIN / CTS /
 * DATA for it are recognised as stale. */
static void op_put(tp_shm_t *t, int32_t i)
{
    shm_op_t *o = &t->ops[i];
    o->state = OP_FREE;
    o->req = NULL;
    cs_tp_pool_put(&t->opool, i);
}

/* ---- receiving from the rings ----------------------------------------- */

/* An eager message or RTS at the head of peer p's ring; 0 when it must
 * stay there (no matching receive and no room for an unexpected one). */
static int deliver(tp_shm_t *t, int p, const shm_cell_t *c, uint32_t type, uint32_t mode,
                   uint64_t tag, uint32_t len)
{
    shm_peer_t *pe = &t->peers[p];
    int with_data = type == MSG_EAGER && len > 0;
    int32_t i = cs_tp_fifo_take(&pe->posted, t->opool.next, t->ops, sizeof(shm_op_t),
                                offsetof(shm_op_t, tag), tag);
    if (i < 0 && !cs_tp_unex_room(&t->upool, with_data))
        return 0;
    shm_rts_t rts;
    if (type == MSG_RTS)
        memcpy(&rts, c->data, sizeof(rts));
    if (i >= 0) {
        shm_op_t *o = &t->ops[i];
        if (type == MSG_EAGER) {
            size_t n = len < o->len ? len : o->len;
            if (n)
                ring_read(pe, t->prm.ncells, o->buf, n);
            shm_complete(t, i, len > o->len ? CS_ERR_RANGE : CS_OK, n);
        } else {
            cs__shm_match_rts(t, i, (int)mode, &rts);
        }
        return 1;
    }
    int32_t u = cs_tp_pool_get(&t->upool.recs); /* room checked above */
    shm_unex_t *x = &t->unex[u];
    memset(x, 0, sizeof(*x));
    x->type = type;
    x->tag = tag;
    x->data = -1;
    if (type == MSG_EAGER) {
        x->len = len;
        if (with_data) {
            x->data = cs_tp_unex_slot_get(&t->upool);
            ring_read(pe, t->prm.ncells, cs_tp_unex_slot(&t->upool, x->data), len);
        }
    } else {
        x->rts = rts;
        x->mode = mode;
    }
    cs_tp_fifo_push(&pe->unex, t->upool.recs.next, u);
    return 1;
}

/* Take up to CONSUME_MAX messages off peer p's ring; returns how many. */
static int consume(tp_shm_t *t, int p)
{
    shm_peer_t *pe = &t->peers[p];
    uint32_t nc = t->prm.ncells;
    int n = 0;
    if (pe->bad)
        return 0;
    for (; n < CONSUME_MAX; n++) {
        shm_cell_t *c = ring_peek(pe, nc);
        if (!c)
            break;
        uint64_t w = c->word;
        uint32_t len = c->len, type = (uint32_t)(w >> SHM_TYPE_SHIFT);
        if ((type == MSG_EAGER && len > t->prm.eager_max) || type < MSG_EAGER ||
            type > MSG_DATA || (type != MSG_EAGER && len > SHM_CELL - SHM_HDR)) {
            CS_ERROR("exec", "rank %d: shm transport: malformed message (type %u, %u bytes) "
                     "from rank %d", t->base.rank, type, len, p);
            pe->bad = 1; /* its ring cannot be trusted any more: the peer is gone for us */
            if (!pe->dead)
                pe->dead = 1;
            break;
        }
        if (type == MSG_EAGER || type == MSG_RTS) {
            if (!deliver(t, p, c, type, (uint32_t)(w >> SHM_AUX_SHIFT) & SHM_AUX_MASK, w & TAG_MASK, len))
                break;
        } else {
            shm_ctl_t m;
            memcpy(&m, c->data, sizeof(m));
            if (type == MSG_FIN)
                cs__shm_on_fin(t, &m);
            else if (type == MSG_CTS)
                cs__shm_on_cts(t, p, &m);
            else
                cs__shm_on_data(t, p, &m);
        }
        ring_pop(pe, nc, len);
    }
    return n;
}

/* Peer p is gone: deliver what it sent, fail everything else with it. */
static void fail_peer(tp_shm_t *t, int p)
{
    shm_peer_t *pe = &t->peers[p];
    pe->dead = 2;
    while (consume(t, p) == CONSUME_MAX)
        ;
    CS_DEBUG("exec", "rank %d: rank %d went away", t->base.rank, p);
    for (int32_t i = 0; i < t->opool.n; i++) {
        shm_op_t *o = &t->ops[i];
        if (o->peer != p || o->on_ctl)
            continue; /* a pending control message finishes in flush_ctl */
        switch (o->state) {
        case OP_POSTED: cs_tp_fifo_remove(&pe->posted, t->opool.next, i); break;
        case OP_COPY: cs_tp_fifo_remove(&t->copies, t->opool.next, i); break;
        case OP_STREAM:
            cs_tp_fifo_remove(&pe->stream, t->opool.next, i);
            t->nstreams--;
            break;
        case OP_RTS_WAIT: case OP_DATA_WAIT: break;
        default: continue;
        }
        shm_complete(t, i, CS_ERR_PEER, 0);
    }
    cs__shm_flush_ctl(t);
}

/* ---- the ops table ---------------------------------------------------- */

/* The peers see `closed` at their next liveness check (CHECK_NS). */
static void shm_leave(cs_tp_t *tp, int sig)
{
    tp_shm_t *t = (tp_shm_t *)tp;
    t->left = 1;
    if (!t->hdr)
        return;
    __atomic_store_n(&t->hdr->intr, sig > 0 ? sig : -1, __ATOMIC_RELAXED);
    __atomic_store_n(&t->hdr->closed, 1u, __ATOMIC_RELEASE);
}

static void shm_close(cs_tp_t *tp)
{
    tp_shm_t *t = (tp_shm_t *)tp;
    if (!t)
        return;
    if (cs_intr_pending() && !t->left)
        shm_leave(tp, cs_intr_pending());
    cs__shm_unmap_all(t);
    cs__shm_seg_destroy(t);
    free(t->peers);
    free(t->pfds);
    free(t->ops);
    cs_tp_pool_fini(&t->opool);
    cs_tp_ring_fini(&t->done);
    free(t->ctl_next);
    free(t->unex);
    cs_tp_unex_fini(&t->upool);
    free(t);
}

static int shm_get_addr(cs_tp_t *tp, void *buf, size_t *len)
{
    shm_blob_t b;
    if (*len < sizeof(b))
        return CS_ERR_RANGE;
    cs__shm_blob((tp_shm_t *)tp, &b);
    memcpy(buf, &b, sizeof(b));
    *len = sizeof(b);
    return CS_OK;
}

static int shm_insert_addrs(cs_tp_t *tp, const void *blobs, size_t slot, const size_t *lens)
{
    tp_shm_t *t = (tp_shm_t *)tp;
    int st = cs__shm_attach(t, blobs, slot, lens);
    if (st != CS_OK) {
        CS_DEBUG("exec", "rank %d: shm transport: %s", tp->rank, tp->why);
        return st;
    }
    t->ready = 1;
    t->next_check = cs_now_ns() + CHECK_NS;
    return CS_OK;
}

/* No registration needed: CMA reads any address of the sender, bounce
 * copies from and to the caller's buffers (memory from cs__shm_mem_ops is
 * the one that peers can map: its handle comes from there). */
static int shm_mr_reg(cs_tp_t *tp, void *buf, size_t len, void **mr)
{
    (void)tp, (void)buf, (void)len;
    *mr = NULL;
    return CS_OK;
}

static int shm_isend(cs_tp_t *tp, int peer, const void *buf, size_t len, void *mr,
                     uint64_t tag, cs_tp_req_t *req)
{
    tp_shm_t *t = (tp_shm_t *)tp;
    if (peer < 0 || peer >= tp->nranks || tag >> CS_TP_TAG_BITS || !t->ready)
        return CS_ERR_INVAL;
    shm_peer_t *pe = &t->peers[peer];
    if (pe->dead)
        return CS_ERR_PEER;
    if (len > t->prm.eager_max)
        return cs__shm_send_rts(t, peer, buf, len, mr, tag, req);
    if (!ring_put(pe, t->prm.ncells, MSG_EAGER, tag, buf, len))
        return CS_AGAIN;
    req->status = CS_OK; /* inline completion: the payload is in the ring */
    req->nbytes = len;
    return CS_OK;
}

static int shm_irecv(cs_tp_t *tp, int peer, void *buf, size_t len, void *mr, uint64_t tag,
                     cs_tp_req_t *req)
{
    tp_shm_t *t = (tp_shm_t *)tp;
    (void)mr;
    if (peer < 0 || peer >= tp->nranks || tag >> CS_TP_TAG_BITS || !t->ready)
        return CS_ERR_INVAL;
    shm_peer_t *pe = &t->peers[peer];
    int32_t i = shm_op_new(t);
    if (i < 0)
        return CS_AGAIN;
    shm_op_t *o = &t->ops[i];
    o->req = req;
    o->buf = buf;
    o->len = len;
    o->tag = tag;
    o->peer = peer;
    int32_t u = cs_tp_fifo_take(&pe->unex, t->upool.recs.next, t->unex, sizeof(shm_unex_t),
                                offsetof(shm_unex_t, tag), tag);
    if (u < 0 && pe->dead) {
        op_put(t, i);
        return CS_ERR_PEER;
    }
    req->status = CS_INPROGRESS;
    req->nbytes = 0;
    if (u < 0) {
        o->state = OP_POSTED;
        cs_tp_fifo_push(&pe->posted, t->opool.next, i);
        return CS_OK;
    }
    shm_unex_t x = t->unex[u]; /* the oldest unexpected message with this tag */
    cs_tp_pool_put(&t->upool.recs, u);
    if (x.type == MSG_RTS) {
        cs__shm_match_rts(t, i, (int)x.mode, &x.rts);
        return CS_OK;
    }
    size_t n = x.len < len ? x.len : len;
    if (x.data >= 0) {
        memcpy(buf, cs_tp_unex_slot(&t->upool, x.data), n);
        cs_tp_unex_slot_put(&t->upool, x.data);
    }
    shm_complete(t, i, x.len > len ? CS_ERR_RANGE : CS_OK, n);
    return CS_OK;
}

static int shm_poll(cs_tp_t *tp, cs_tp_req_t **done, int max)
{
    tp_shm_t *t = (tp_shm_t *)tp;
    for (int p = 0; p < tp->nranks; p++)
        consume(t, p);
    if (t->ctl.head >= 0)
        cs__shm_flush_ctl(t);
    if (t->copies.head >= 0 || t->nstreams > 0)
        cs__shm_progress_large(t);
    if ((++t->polls % CHECK_POLLS == 0 || max == 0) && t->ready) {
        uint64_t now = cs_now_ns();
        if (now >= t->next_check) {
            t->next_check = now + CHECK_NS;
            cs__shm_check_peers(t);
            for (int p = 0; p < tp->nranks; p++)
                if (t->peers[p].dead == 1)
                    fail_peer(t, p);
        }
    }
    int k = 0;
    while (k < max && !cs_tp_ring_empty(&t->done)) {
        int32_t i = cs_tp_ring_pop(&t->done);
        shm_op_t *o = &t->ops[i];
        cs_tp_req_t *r = o->req;
        r->status = o->status;
        r->nbytes = o->off;
        op_put(t, i);
        done[k++] = r;
    }
    return k;
}

/* Only operations waiting for a peer are cancelled; copies and streams
 * under way finish on their own (they need nothing from the peer). */
static int shm_cancel(cs_tp_t *tp, cs_tp_req_t *req)
{
    tp_shm_t *t = (tp_shm_t *)tp;
    for (int32_t i = 0; i < t->opool.n; i++) {
        shm_op_t *o = &t->ops[i];
        if (o->req != req || o->on_ctl)
            continue;
        if (o->state == OP_POSTED)
            cs_tp_fifo_remove(&t->peers[o->peer].posted, t->opool.next, i);
        else if (o->state != OP_RTS_WAIT && o->state != OP_DATA_WAIT)
            continue;
        shm_complete(t, i, CS_ERR_TRANSPORT, 0);
    }
    return CS_OK;
}

static const cs_tp_ops_t shm_ops = {
    .size = sizeof(cs_tp_ops_t),
    .name = "shm",
    .close = shm_close,
    .get_addr = shm_get_addr,
    .insert_addrs = shm_insert_addrs,
    .mr_reg = shm_mr_reg,
    .mr_dereg = cs_tp_nosup_mr_dereg,
    .isend = shm_isend,
    .irecv = shm_irecv,
    .poll = shm_poll,
    .cancel = shm_cancel,
    .leave = shm_leave,
};

/* Sizes from the rank count and configuration (the same on every rank). */
static int set_params(tp_shm_t *t, const cs_tp_config_t *cfg, cs_err_t *err)
{
    shm_params_t *p = &t->prm;
    int n = cfg->nranks;
    /* rings of 512, 128, 32 KiB: every rank's segment holds n of them */
    p->ncells = n <= SHM_FEW_RANKS ? SHM_CELLS_FEW : n <= SHM_SOME_RANKS ? SHM_CELLS_SOME
                                                                         : SHM_CELLS_MANY;
    p->nslots = SHM_NSLOTS;
    p->slot = SHM_SLOT;
    p->slice = SHM_SLICE;
    p->eager_max = SHM_EAGER_MAX < p->ncells * SHM_CELL / 4 ? SHM_EAGER_MAX
                                                             : p->ncells * SHM_CELL / 4;
    p->best = SHM_MAP;
    const char *e = cs_env_get("CS_SHM_EAGER"), *c = cs_env_get("CS_SHM_COPY");
    if (e && *e) {
        char *end = NULL;
        unsigned long long v = strtoull(e, &end, 10);
        if (*end || v > (unsigned long long)p->ncells * SHM_CELL / 4)
            return cs_err_set(err, CS_ERR_INVAL, "CS_SHM_EAGER: expected bytes in [0, %u], "
                              "found '%s'", p->ncells * SHM_CELL / 4, e);
        p->eager_max = (size_t)v;
    }
    if (c && *c && strcmp(c, "auto") && strcmp(c, "map")) {
        if (!strcmp(c, "cma"))
            p->best = SHM_CMA;
        else if (!strcmp(c, "bounce"))
            p->best = SHM_BOUNCE;
        else
            return cs_err_set(err, CS_ERR_INVAL, "CS_SHM_COPY: expected auto (map), cma or "
                              "bounce, found '%s'", c);
    }
    if (cfg->max_msg) { /* testing: move large messages in pieces of max_msg */
        if (p->eager_max > cfg->max_msg)
            p->eager_max = cfg->max_msg;
        if (p->slot > cfg->max_msg)
            p->slot = cfg->max_msg;
        if (p->slice > cfg->max_msg)
            p->slice = cfg->max_msg;
    }
    return CS_OK;
}

int cs_tp_shm_open(const cs_tp_config_t *cfg, cs_tp_t **out, cs_err_t *err)
{
    if (cfg->nranks < 1 || cfg->nranks > SHM_MAX_RANKS || cfg->rank < 0 ||
        cfg->rank >= cfg->nranks)
        return cs_err_set(err, CS_ERR_INVAL, "shm transport: rank %d of %d out of range "
                          "(at most %d ranks)", cfg->rank, cfg->nranks, SHM_MAX_RANKS);
    tp_shm_t *t = calloc(1, sizeof(*t));
    if (!t)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    t->base.ops = &shm_ops;
    t->base.mem = &cs__shm_mem_ops;
    t->base.rank = cfg->rank;
    t->base.nranks = cfg->nranks;
    t->base.max_msg = SIZE_MAX;
    t->memfd = -1;
    t->timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : SHM_ATTACH_S;
    t->ctl = t->copies = CS_TP_FIFO_EMPTY;
    int st = set_params(t, cfg, err);
    if (st != CS_OK)
        goto fail;
    size_t n = (size_t)cfg->nranks;
    t->peers = calloc(n, sizeof(*t->peers));
    t->pfds = calloc(n, sizeof(*t->pfds));
    t->ops = calloc(SHM_NOPS, sizeof(*t->ops));
    t->ctl_next = cs_tp_links(SHM_NOPS);
    t->unex = calloc(SHM_NUNEX, sizeof(*t->unex));
    size_t ndata = t->prm.eager_max ? SHM_UNEX_BYTES / t->prm.eager_max : SHM_NDATA_MAX;
    ndata = ndata < SHM_NDATA_MIN ? SHM_NDATA_MIN : ndata > SHM_NDATA_MAX ? SHM_NDATA_MAX : ndata;
    if (!t->peers || !t->pfds || !t->ops || !t->ctl_next || !t->unex ||
        cs_tp_pool_init(&t->opool, SHM_NOPS) != CS_OK ||
        cs_tp_ring_init(&t->done, SHM_NOPS) != CS_OK ||
        cs_tp_unex_init(&t->upool, SHM_NUNEX, (int32_t)ndata,
                        t->prm.eager_max ? t->prm.eager_max : 1) != CS_OK) {
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (size_t r = 0; r < n; r++) {
        shm_peer_t *pe = &t->peers[r];
        pe->posted = pe->unex = pe->stream = CS_TP_FIFO_EMPTY;
        pe->pidfd = -1;
    }
    if ((st = cs__shm_seg_create(t, err)) != CS_OK)
        goto fail;
    CS_INFO("exec", "rank %d: shm transport, %u ring cells per peer, eager <= %zu B, "
            "large messages by %s at best (bounce: %u x %zu B)", cfg->rank, t->prm.ncells,
            t->prm.eager_max, t->prm.best == SHM_MAP ? "mapping" : t->prm.best == SHM_CMA ?
            "CMA" : "bounce", t->prm.nslots, t->prm.slot);
    *out = &t->base;
    return CS_OK;
fail:
    shm_close(&t->base);
    return st;
}
