/*
 * tp_shm_large.c - rendezvous of the shared-memory transport: messages
 * above eager_max (protocol overview in tp_shm.c).
 *
 *   sender                                   receiver
 *   RTS(tag, len, addr, region, cookie) -->  matched with a receive
 *   map / CMA:                               copy from the sender's buffer in
 *                                            slices (memcpy from the mapped
 *                                            region, or process_vm_readv)
 *        <---------------------------------  FIN(cookie, status)
 *   send complete                            receive complete
 *   bounce:
 *        <---------------------------------  CTS(cookie, receiver's cookie)
 *   copy slot k, DATA(k, n) --------------->  copy slot k out, released++
 *   ... up to nslots slots ahead ...
 *   send complete after the last DATA        receive complete after it
 *
 * Modes, best first (CS_SHM_COPY caps the best one):
 *   map     the buffer is transport memory (cs__shm_mem_ops; the sender
 *           passes its region as mr): the receiver maps the region and
 *           copies with memcpy.  One copy at memory speed.
 *   cma     any other buffer, when the receiver said at attach time that it
 *           can read the sender's memory.  One copy, but the kernel pins
 *           every page: measured 2 to 4 times slower than map here.
 *   bounce  neither: two copies through the pair's slots, pipelined.
 * The receiver steps down when a mode fails it before any byte moved
 * (region not mappable -> CMA if it can read the sender -> CTS), so the
 * sender's operation waits for either FIN or CTS.  Messages to self use
 * the CMA path (a plain memcpy).  A FIN, CTS or DATA whose cookie
 * generation does not match the operation is stale (its operation was
 * cancelled): ignored, except that a DATA still releases its slot and a
 * stale CTS is answered with an aborting DATA so that the receiver does not
 * wait forever.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "tp_shm.h"
#include "tp_shm_ring.h"

/* ---- control messages (FIN, CTS) -------------------------------------- */

/* Send op's pending control message; 1 when it is dealt with (sent, or
 * its peer is dead), 0 when the peer's ring is full. */
static int ctl_send(tp_shm_t *t, int32_t i)
{
    shm_op_t *o = &t->ops[i];
    shm_peer_t *pe = &t->peers[o->peer];
    size_t got = o->msg_len < o->len ? o->msg_len : o->len;
    shm_ctl_t m;
    memset(&m, 0, sizeof(m));
    m.cookie = o->rcookie;
    m.gen = o->rgen;
    if (o->ctl == MSG_CTS) {
        m.cookie2 = (uint32_t)i;
        m.gen2 = shm_gen(t, i);
    } else { /* FIN: the sender learns only whether its data could be read */
        m.status = o->status < 0 && o->status != CS_ERR_RANGE ? CS_ERR_TRANSPORT : CS_OK;
    }
    if (!pe->dead && !ring_put(pe, t->prm.ncells, o->ctl, 0, &m, sizeof(m)))
        return 0;
    if (o->ctl == MSG_FIN)
        shm_complete(t, i, o->status, got);
    else if (pe->dead)
        shm_complete(t, i, CS_ERR_PEER, 0);
    o->ctl = 0;
    return 1;
}

/* Queue control message `type` (MSG_FIN, MSG_CTS) of op for its peer; sent
 * at once when the peer's ring has room, else by cs__shm_flush_ctl. */
static void ctl_queue(tp_shm_t *t, int32_t i, uint8_t type)
{
    shm_op_t *o = &t->ops[i];
    o->ctl = type;
    if (t->ctl.head < 0 && ctl_send(t, i))
        return;
    o->on_ctl = 1;
    cs_tp_fifo_push(&t->ctl, t->ctl_next, i);
}

static int put_ctl(tp_shm_t *t, int peer, uint32_t type, const shm_ctl_t *c)
{
    return ring_put(&t->peers[peer], t->prm.ncells, type, 0, c, sizeof(*c));
}

int cs__shm_flush_ctl(tp_shm_t *t)
{
    int sent = 0;
    for (int32_t prev = -1, i = t->ctl.head, next; i >= 0; i = next) {
        next = t->ctl_next[i];
        if (!ctl_send(t, i)) {
            prev = i;
            continue;
        }
        sent++;
        t->ops[i].on_ctl = 0;
        cs_tp_fifo_unlink(&t->ctl, t->ctl_next, prev, i);
    }
    return sent;
}

int cs__shm_send_rts(tp_shm_t *t, int peer, const void *buf, size_t len, void *mr,
                     uint64_t tag, cs_tp_req_t *req)
{
    shm_peer_t *pe = &t->peers[peer];
    if (!ring_room(pe, t->prm.ncells, 1))
        return CS_AGAIN;
    int32_t i = shm_op_new(t);
    if (i < 0)
        return CS_AGAIN;
    const shm_region_t *rg = mr;
    const char *p = buf;
    shm_rts_t r;
    memset(&r, 0, sizeof(r));
    int mode = SHM_BOUNCE;
    if (t->prm.best <= SHM_MAP && rg && p >= rg->base && p + len <= rg->base + rg->len &&
        peer != t->base.rank) {
        mode = SHM_MAP;
        r.off = (uint64_t)(p - rg->base);
        r.rlen = rg->len;
        r.rid = rg->id;
        r.fd = rg->fd;
    } else if (t->prm.best <= SHM_CMA && pe->cma) {
        mode = SHM_CMA;
    }
    shm_op_t *o = &t->ops[i];
    o->is_send = 1;
    o->req = req;
    o->buf = (char *)buf;
    o->len = len;
    o->tag = tag;
    o->peer = peer;
    o->mode = (uint8_t)mode;
    o->state = OP_RTS_WAIT;
    r.len = len;
    r.addr = (uint64_t)(uintptr_t)buf;
    r.cookie = (uint32_t)i;
    r.gen = shm_gen(t, i);
    ring_put(pe, t->prm.ncells, MSG_RTS, tag | (uint64_t)mode << SHM_AUX_SHIFT, &r,
             sizeof(r)); /* room checked above */
    req->status = CS_INPROGRESS;
    req->nbytes = 0;
    return CS_OK;
}

/* Ask the sender to stream op's message through the bounce slots. */
static void ask_bounce(tp_shm_t *t, int32_t i)
{
    shm_op_t *o = &t->ops[i];
    o->mode = SHM_BOUNCE;
    o->state = OP_DATA_WAIT;
    ctl_queue(t, i, MSG_CTS);
}

void cs__shm_match_rts(tp_shm_t *t, int32_t i, int mode, const shm_rts_t *r)
{
    shm_op_t *o = &t->ops[i];
    o->msg_len = r->len;
    o->rcookie = r->cookie;
    o->rgen = r->gen;
    o->off = 0;
    char *src = NULL;
    if (mode == SHM_MAP && (src = cs__shm_map(t, o->peer, r)) != NULL) {
        o->raddr = (uint64_t)(uintptr_t)(src + r->off); /* a local address now */
        o->mode = SHM_MAP;
    } else if (mode != SHM_BOUNCE && t->peers[o->peer].cma_in) {
        o->raddr = r->addr;
        o->mode = SHM_CMA;
    } else {
        ask_bounce(t, i);
        return;
    }
    o->state = OP_COPY;
    cs_tp_fifo_push(&t->copies, t->opool.next, i);
}
/* Op `cookie` if it is live, generation `gen`, in `state`, else -1. */
static int32_t find_op(tp_shm_t *t, uint32_t cookie, uint32_t gen, int state)
{
    return cs_tp_pool_live(&t->opool, cookie, gen) && t->ops[cookie].state == state
               ? (int32_t)cookie
               : -1;
}

void cs__shm_on_fin(tp_shm_t *t, const shm_ctl_t *c)
{
    int32_t i = find_op(t, c->cookie, c->gen, OP_RTS_WAIT);
    if (i >= 0 && t->ops[i].is_send)
        shm_complete(t, i, c->status < 0 ? CS_ERR_TRANSPORT : CS_OK, t->ops[i].len);
}

void cs__shm_on_cts(tp_shm_t *t, int peer, const shm_ctl_t *c)
{
    int32_t i = find_op(t, c->cookie, c->gen, OP_RTS_WAIT); /* any mode may end here */
    if (i < 0 || !t->ops[i].is_send) {
        shm_ctl_t a;
        memset(&a, 0, sizeof(a));
        a.cookie = c->cookie2;
        a.gen = c->gen2;
        a.status = CS_ERR_TRANSPORT;
        put_ctl(t, peer, MSG_DATA, &a); /* best effort: the ring may be full */
        return;
    }
    shm_op_t *o = &t->ops[i];
    o->rcookie = c->cookie2;
    o->rgen = c->gen2;
    o->off = 0;
    o->state = OP_STREAM;
    cs_tp_fifo_push(&t->peers[peer].stream, t->opool.next, i);
    t->nstreams++;
}

void cs__shm_on_data(tp_shm_t *t, int peer, const shm_ctl_t *c)
{
    shm_peer_t *pe = &t->peers[peer];
    int32_t i = find_op(t, c->cookie, c->gen, OP_DATA_WAIT);
    shm_op_t *o = i >= 0 && !t->ops[i].is_send ? &t->ops[i] : NULL;
    if (c->status < 0) { /* the sender gave up: no slot was used */
        if (o)
            shm_complete(t, i, CS_ERR_PEER, 0);
        return;
    }
    if (o) {
        const char *src = pe->in_slots + (size_t)(c->slot % t->prm.nslots) * t->prm.slot;
        size_t room = o->len > o->off ? o->len - o->off : 0;
        memcpy(o->buf + o->off, src, c->len < room ? c->len : room);
        o->off += c->len;
    }
    pe->taken++;
    __atomic_store_n(pe->in_released, pe->taken, __ATOMIC_RELEASE);
    if (o && o->off >= o->msg_len)
        shm_complete(t, i, o->msg_len > o->len ? CS_ERR_RANGE : CS_OK,
                         o->msg_len < o->len ? o->msg_len : o->len);
}

/* One slice of a map / CMA receive; status of the copy (CS_OK also when
 * more remains). */
static int copy_slice(tp_shm_t *t, shm_op_t *o, size_t want)
{
    size_t n = want - o->off;
    if (n > t->prm.slice)
        n = t->prm.slice;
    if (o->mode == SHM_MAP || o->peer == t->base.rank) { /* mapped here, or my own */
        memcpy(o->buf + o->off, (const char *)(uintptr_t)o->raddr + o->off, n);
        o->off += n;
        return CS_OK;
    }
    struct iovec l = {o->buf + o->off, n}, r = {(void *)(uintptr_t)(o->raddr + o->off), n};
    ssize_t got = process_vm_readv((pid_t)t->peers[o->peer].pid, &l, 1, &r, 1, 0);
    if (got <= 0)
        return got < 0 && errno == ESRCH ? CS_ERR_PEER : CS_ERR_TRANSPORT;
    o->off += (size_t)got;
    return CS_OK;
}

/* Fill the free bounce slots of peer's current stream(s). */
static void stream(tp_shm_t *t, int peer)
{
    shm_peer_t *pe = &t->peers[peer];
    const uint32_t nslots = t->prm.nslots;
    while (pe->stream.head >= 0 && !pe->dead) {
        int32_t i = pe->stream.head;
        shm_op_t *o = &t->ops[i];
        while (o->off < o->len) {
            if (pe->filled - pe->released_cache >= nslots) {
                pe->released_cache = __atomic_load_n(pe->out_released, __ATOMIC_ACQUIRE);
                if (pe->filled - pe->released_cache >= nslots)
                    return;
            }
            if (!ring_room(pe, t->prm.ncells, 1))
                return;
            size_t n = o->len - o->off < t->prm.slot ? o->len - o->off : t->prm.slot;
            memcpy(pe->out_slots + (size_t)(pe->filled % nslots) * t->prm.slot, o->buf + o->off,
                   n);
            shm_ctl_t m;
            memset(&m, 0, sizeof(m));
            m.cookie = o->rcookie;
            m.gen = o->rgen;
            m.slot = (uint32_t)pe->filled;
            m.len = n;
            ring_put(pe, t->prm.ncells, MSG_DATA, 0, &m, sizeof(m));
            pe->filled++;
            o->off += n;
        }
        cs_tp_fifo_remove(&pe->stream, t->opool.next, i);
        t->nstreams--;
        shm_complete(t, i, CS_OK, o->len);
    }
}

int cs__shm_progress_large(tp_shm_t *t)
{
    int moved = 0;
    for (int32_t i = t->copies.head, next; i >= 0; i = next) {
        shm_op_t *o = &t->ops[i];
        next = t->opool.next[i];
        size_t want = o->msg_len < o->len ? o->msg_len : o->len;
        int st = o->off < want ? copy_slice(t, o, want) : CS_OK;
        moved = 1;
        if (st == CS_OK && o->off < want)
            continue;
        cs_tp_fifo_remove(&t->copies, t->opool.next, i);
        if (st == CS_ERR_TRANSPORT && o->off == 0) { /* CMA refused: step down */
            ask_bounce(t, i);
            continue;
        }
        o->status = st != CS_OK ? st : o->msg_len > o->len ? CS_ERR_RANGE : CS_OK;
        ctl_queue(t, i, MSG_FIN); /* the receive completes once FIN is out */
    }
    if (t->nstreams > 0)
        for (int p = 0; p < t->base.nranks; p++)
            if (t->peers[p].stream.head >= 0) {
                stream(t, p);
                moved = 1;
            }
    return moved;
}
