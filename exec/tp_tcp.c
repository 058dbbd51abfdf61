/*
 * tp_tcp.c - a native TCP transport: one stream socket per pair of ranks,
 * tagged messages framed on it, the receiver's matching done here.
 *
 * Why next to libfabric: on Ethernet clusters the peer to beat is Open
 * MPI's own TCP path, and libfabric's tcp;ofi_rxm adds a protocol layer
 * (bounce buffers, an extra completion round for every send above 64 B)
 * that costs 30 to 50 % of small-message latency on loopback.  Like
 * NCCL's socket transport this one talks to the kernel directly; the
 * libfabric transport stays the default and the way to verbs and EFA.
 *
 * Connections.  open() binds a listening socket to cfg->node (an IPv4 or
 * IPv6 literal, default 127.0.0.1) on an ephemeral port; the address blob
 * is that socket's address.  insert_addrs() connects rank r to every rank
 * below it and accepts one connection from every rank above (each side
 * sends a hello with its rank and the job's nranks), all within
 * cfg->timeout_s (60 s by default); then every socket is non-blocking with
 * TCP_NODELAY.
 *
 * Frames (tcp_hdr_t, then a payload for EAGER, DATA and DDATA):
 *   EAGER  tag, len + payload          message <= TCP_EAGER
 *   RTS    tag, len, c1 = sender op    larger message: ready to send
 *   CTS    c1 = sender op, c2 = receiver op   the receive is posted
 *   DATA   c2 = receiver op, tag = offset, len + payload   a chunk of at most
 *          TCP_CHUNK bytes, lands straight in the buffer
 *   RTR    tag, c1 = receiver op, aux = messages read   ready to receive
 *   DDATA  tag, c2 = receiver op, len   a message sent on an RTR: DATA follows
 *   LEAVE  aux = signal      the sender was interrupted and leaves the job
 * A receive matches the first message of its (peer, tag) in arrival order,
 * which is sending order: TCP keeps order on a connection.  An EAGER
 * message nobody waits for is copied into one of TCP_UNEX_SLOTS slots of a
 * pool allocated at open; when none is free the transport stops reading
 * that socket until one is (back pressure through TCP, nothing dropped).
 * Large messages cost no copy on either side and, without RTR, one round
 * trip more.
 *
 * RTR.  The round trip serialises the two directions of an exchange: a
 * rank busy writing a large message answers its peer's RTS only after the
 * write (measured: a 2-rank ring of 1 MiB spent 40 % of its time so).  So
 * a receive larger than TCP_EAGER posted before its message arrives tells
 * the sender at once (RTR), and the sender sends the message (DDATA) with
 * no RTS when it is posted, or answers an RTS already out as a CTS would.
 * Which send an RTR belongs to follows from the matching rule, counted in
 * message frames (EAGER, RTS, DDATA) per direction: the RTR carries how
 * many the receiver had read when the receive was posted (`aux`), and the
 * receive will match the first later message of its tag.  The sender
 * remembers its last TCP_HIST message frames per peer: if one of those
 * later ones has the tag, the RTR is for it (an RTS waiting: its data goes
 * now; anything else: the RTR is dropped); if none does, the RTR waits
 * for the next send of that tag, which consumes it whatever its size.
 * The receiver sends an RTR only when that rule is certain to hold (no
 * other receive of the tag posted, no message of the tag half read).  A
 * dropped RTR costs nothing: the message then goes by EAGER or RTS.
 *
 * Two directions at once.  Control frames (CTS, RTR, LEAVE) have a queue
 * of their own and pass between two chunks of a DATA frame, and every
 * socket keeps at most TCP_NOTSENT bytes not sent yet (TCP_NOTSENT_LOWAT):
 * a CTS answering the peer's RTS then waits for one chunk and that much,
 * not for the rest of a large message this rank is writing.  Measured on
 * the emulated cluster (2 hosts at 400 Mbit/s, docs/transports.md), a
 * 2-rank ring allgather of 16 MiB whose receive is posted after its send
 * went from 320 ms (the peer's whole message first, then ours) to 220 ms.
 *
 * Sends complete once the kernel has the whole frame (the buffer is free
 * again); a send written entirely by the isend call itself completes
 * inline (see cs_transport.h).  Messages to oneself are matched in memory.
 *
 * Failures.  A peer that dies closes its sockets (the kernel does it):
 * reading gives EOF or ECONNRESET, writing EPIPE; every request to or from
 * that peer then completes with CS_ERR_PEER, and later posts to it too.
 * A peer interrupted by a signal says so first (LEAVE, see leave in
 * cs_transport.h): the same, and cs_tp.left_peer names it.
 *
 * Nothing is allocated after insert_addrs: operations, frames and
 * unexpected records come from pools sized at open (a post finding its
 * pool empty returns CS_AGAIN).  Progress costs one recv() per peer per
 * poll (epoll above TCP_EPOLL_MIN peers) plus the writes pending.
 */
#include "tp_tcp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cs_intr.h"
#include "cs_log.h"

static int32_t pool_get(int32_t *head, int32_t *next)
{
    int32_t i = *head;
    if (i >= 0)
        *head = next[i];
    return i;
}

/* ---- operations and queues ---- */

static int32_t op_get(tp_tcp_t *t)
{
    int32_t i = t->free_op;
    if (i < 0)
        return -1;
    t->free_op = t->ops[i].next;
    tcp_op_t *o = &t->ops[i];
    uint32_t gen = o->gen + 1; /* tells a late CTS, RTR or DATA for an earlier use */
    memset(o, 0, sizeof(*o));
    o->next = -1;
    o->gen = gen;
    return i;
}

static void op_put(tp_tcp_t *t, int32_t i)
{
    t->ops[i].state = OPS_FREE;
    t->ops[i].next = t->free_op;
    t->free_op = i;
}

static void fifo_push(tcp_op_t *ops, tcp_fifo_t *f, int32_t i)
{
    ops[i].next = -1;
    if (f->tail >= 0)
        ops[f->tail].next = i;
    else
        f->head = i;
    f->tail = i;
}

/* Remove i from f; 1 if it was there. */
int cs__tcp_fifo_remove(tcp_op_t *ops, tcp_fifo_t *f, int32_t i)
{
    int32_t prev = -1;
    for (int32_t k = f->head; k >= 0; prev = k, k = ops[k].next) {
        if (k != i)
            continue;
        if (prev >= 0)
            ops[prev].next = ops[k].next;
        else
            f->head = ops[k].next;
        if (f->tail == k)
            f->tail = prev;
        return 1;
    }
    return 0;
}

/* The operation is over: its request goes to the done ring, and the op is
 * recycled when poll hands the request out (so completed operations never
 * outnumber the ring).  An op without request (a post that could not be
 * queued) is recycled at once. */
void cs__tcp_complete(tp_tcp_t *t, int32_t i, int status, size_t nbytes)
{
    tcp_op_t *o = &t->ops[i];
    if (!o->req) {
        op_put(t, i);
        return;
    }
    o->req->status = status;
    o->req->nbytes = nbytes;
    o->state = OPS_DONE;
    t->done[t->done_tail++ & t->done_mask] = i;
}

static cs_tp_req_t *done_pop(tp_tcp_t *t)
{
    int32_t i = t->done[t->done_head++ & t->done_mask];
    cs_tp_req_t *req = t->ops[i].req;
    op_put(t, i);
    return req;
}

/* ---- frames to write ---- */

/* Append frame f to the list head/tail. */
static void frame_append(tp_tcp_t *t, int32_t *head, int32_t *tail, int32_t f)
{
    t->frame_next[f] = -1;
    if (*tail >= 0)
        t->frame_next[*tail] = f;
    else
        *head = f;
    *tail = f;
}

/* Queue a frame to peer: CTS, RTR and LEAVE on the control list, the rest
 * on the message list; a DATA frame's payload goes in chunks. */
static int frame_queue(tp_tcp_t *t, int peer, const tcp_hdr_t *h, const char *payload,
                       int32_t op)
{
    int32_t f = pool_get(&t->free_frame, t->frame_next);
    if (f < 0)
        return CS_AGAIN;
    tcp_frame_t *fr = &t->frames[f];
    fr->hdr = *h;
    fr->payload = payload;
    fr->op = op;
    fr->off = fr->sent = fr->total = 0;
    if (h->type == TCP_DATA) {
        fr->total = h->len;
        fr->hdr.tag = 0;
        fr->hdr.len = h->len < TCP_CHUNK ? h->len : TCP_CHUNK;
    }
    tcp_peer_t *p = &t->peers[peer];
    if (h->type == TCP_CTS || h->type == TCP_RTR || h->type == TCP_LEAVE)
        frame_append(t, &p->chead, &p->ctail, f);
    else
        frame_append(t, &p->whead, &p->wtail, f);
    return CS_OK;
}

/* A message frame (EAGER, RTS, DDATA): queued, counted and remembered for
 * matching RTRs against. */
static int msg_queue(tp_tcp_t *t, int peer, const tcp_hdr_t *h, const char *payload,
                     int32_t op)
{
    int st = frame_queue(t, peer, h, payload, h->type == TCP_EAGER_MSG ? op : -1);
    if (st != CS_OK)
        return st;
    tcp_peer_t *p = &t->peers[peer];
    p->hist[++p->sseq & (TCP_HIST - 1)] = (tcp_sent_t){.tag = h->tag, .op = op,
                                                      .gen = t->ops[op].gen};
    return CS_OK;
}

/* The frame to write next: one half written first; else a control frame
 * (a DATA frame is between two chunks then); else a message frame.  *ctl
 * says which list it heads. */
static int32_t frame_next(const tp_tcp_t *t, const tcp_peer_t *p, int *ctl)
{
    int data_busy = p->whead >= 0 && t->frames[p->whead].off > 0;
    *ctl = p->chead >= 0 && !data_busy;
    return *ctl ? p->chead : p->whead;
}

/* Write what the socket takes; completes sends whose frame is out. */
void cs__tcp_write_peer(tp_tcp_t *t, int peer)
{
    tcp_peer_t *p = &t->peers[peer];
    int ctl;
    int32_t f;
    while (!p->dead && (f = frame_next(t, p, &ctl)) >= 0) {
        tcp_frame_t *fr = &t->frames[f];
        size_t total = sizeof(tcp_hdr_t) + fr->hdr.len * (fr->payload != NULL);
        struct iovec iov[2];
        int n = 0;
        if (fr->off < sizeof(tcp_hdr_t)) {
            iov[n].iov_base = (char *)&fr->hdr + fr->off;
            iov[n++].iov_len = sizeof(tcp_hdr_t) - fr->off;
        }
        if (fr->payload && fr->hdr.len) {
            size_t done = fr->off > sizeof(tcp_hdr_t) ? fr->off - sizeof(tcp_hdr_t) : 0;
            iov[n].iov_base = (char *)fr->payload + fr->sent + done;
            iov[n++].iov_len = fr->hdr.len - done;
        }
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t w = sendmsg(p->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                return;
            int e = errno;
            if (!p->lost_read) { /* what it sent before it went (a LEAVE?) comes first */
                p->lost_read = 1;
                cs__tcp_read_peer(t, peer);
            }
            if (!p->dead)
                cs__tcp_peer_lost(t, peer, e);
            return;
        }
        fr->off += (size_t)w;
        if (fr->off < total)
            return;
        if (fr->hdr.type == TCP_DATA && fr->sent + fr->hdr.len < fr->total) {
            fr->sent += fr->hdr.len; /* next chunk; control frames may pass first */
            fr->hdr.tag = fr->sent;
            fr->hdr.len = fr->total - fr->sent < TCP_CHUNK ? fr->total - fr->sent : TCP_CHUNK;
            fr->off = 0;
            continue;
        }
        int32_t *head = ctl ? &p->chead : &p->whead, *tail = ctl ? &p->ctail : &p->wtail;
        *head = t->frame_next[f];
        if (*head < 0)
            *tail = -1;
        int32_t op = fr->op;
        t->frame_next[f] = t->free_frame;
        t->free_frame = f;
        if (op >= 0) /* EAGER or DATA: the send is over */
            cs__tcp_complete(t, op, CS_OK, t->ops[op].len);
    }
}

/* ---- posting ---- */

/* The common start of isend and irecv: check, take an op, mark the request
 * in progress.  CS_OK with *out set, CS_AGAIN (no op free) or an error. */
static int post_begin(tp_tcp_t *t, int peer, const void *buf, size_t len, uint64_t tag,
                      cs_tp_req_t *req, int32_t *out)
{
    if (!t->ready || peer < 0 || peer >= t->base.nranks || tag >> CS_TP_TAG_BITS)
        return CS_ERR_INVAL;
    int32_t i = op_get(t);
    if (i < 0)
        return CS_AGAIN;
    tcp_op_t *o = &t->ops[i];
    o->req = req, o->buf = (char *)buf, o->len = len, o->tag = tag, o->peer = peer;
    req->status = CS_INPROGRESS;
    req->nbytes = 0;
    *out = i;
    return CS_OK;
}

/* Self messages: a send and a receive of the same tag meet in memory. */
static void self_match(tp_tcp_t *t)
{
    tcp_peer_t *p = &t->peers[t->base.rank];
    for (int32_t s = p->self_sends.head; s >= 0;) {
        int32_t next = t->ops[s].next, r;
        for (r = p->posted.head; r >= 0 && t->ops[r].tag != t->ops[s].tag; r = t->ops[r].next)
            ;
        if (r >= 0) {
            tcp_op_t *so = &t->ops[s], *ro = &t->ops[r];
            size_t n = so->len <= ro->len ? so->len : ro->len;
            if (n)
                memcpy(ro->buf, so->buf, n);
            cs__tcp_fifo_remove(t->ops, &p->self_sends, s);
            cs__tcp_fifo_remove(t->ops, &p->posted, r);
            cs__tcp_complete(t, r, so->len <= ro->len ? CS_OK : CS_ERR_RANGE, n);
            cs__tcp_complete(t, s, CS_OK, so->len);
        }
        s = next;
    }
}

/* Send op i (an RTS out) may go: queue its payload for receive op rop. */
static void send_data(tp_tcp_t *t, int peer, int32_t i, uint32_t rop, uint32_t rgen)
{
    tcp_op_t *o = &t->ops[i];
    tcp_hdr_t d = {.type = TCP_DATA, .c2 = rop, .aux = rgen, .len = o->len};
    if (frame_queue(t, peer, &d, o->buf, i) != CS_OK) {
        cs__tcp_complete(t, i, CS_ERR_NOMEM, 0);
        return;
    }
    o->state = OPS_SENDING;
}

/* ---- RTR ---- */

/* The oldest pending RTR of peer for tag, removed; 1 if there was one. */
static int rtr_take(tp_tcp_t *t, tcp_peer_t *p, uint64_t tag, tcp_rtr_t *out)
{
    int32_t prev = -1;
    for (int32_t k = p->rtr_head; k >= 0; prev = k, k = t->rtr_next[k]) {
        if (t->rtr[k].tag != tag)
            continue;
        *out = t->rtr[k];
        tcp_unlink(t->rtr_next, &p->rtr_head, &p->rtr_tail, prev, k);
        t->rtr_next[k] = t->free_rtr;
        t->free_rtr = k;
        return 1;
    }
    return 0;
}

void cs__tcp_rtr_clear(tp_tcp_t *t, int peer)
{
    tcp_peer_t *p = &t->peers[peer];
    tcp_free_list(t->rtr_next, &t->free_rtr, &p->rtr_head, &p->rtr_tail);
}

/* Receive op i was just posted (not in the posted list yet): tell the
 * sender when the RTR rule is sure to hold (see the top of the file). */
static void rtr_maybe(tp_tcp_t *t, int32_t i)
{
    tcp_op_t *o = &t->ops[i];
    tcp_peer_t *p = &t->peers[o->peer];
    if (o->len <= TCP_EAGER || o->peer == t->base.rank)
        return;
    if (p->rstate == RS_PAYLOAD && p->runex >= 0 && p->rhdr.tag == o->tag)
        return; /* an unexpected message of the tag is being read: it is ours */
    for (int32_t k = p->posted.head; k >= 0; k = t->ops[k].next)
        if (t->ops[k].tag == o->tag)
            return; /* an older receive will take the next message of the tag */
    tcp_hdr_t h = {.type = TCP_RTR, .tag = o->tag, .c1 = (uint32_t)i, .c2 = o->gen,
                   .aux = p->rseq, .len = o->len};
    if (frame_queue(t, o->peer, &h, NULL, -1) == CS_OK)
        cs__tcp_write_peer(t, o->peer);
}

/* The sender's side of an RTR. */
void cs__tcp_on_rtr(tp_tcp_t *t, int peer, const tcp_hdr_t *h)
{
    tcp_peer_t *p = &t->peers[peer];
    uint32_t unseen = p->sseq - h->aux; /* messages sent the receiver had not read */
    if (unseen > TCP_HIST)
        return; /* cannot tell which send it is for: drop it */
    for (uint32_t s = h->aux + 1; s != p->sseq + 1; s++) {
        const tcp_sent_t *m = &p->hist[s & (TCP_HIST - 1)];
        if (m->tag != h->tag)
            continue;
        tcp_op_t *o = &t->ops[m->op];
        if (o->state == OPS_RTS && o->gen == m->gen && o->len <= h->len)
            send_data(t, peer, m->op, h->c1, h->c2); /* the CTS coming is ignored */
        return; /* otherwise its message is on the way already */
    }
    int32_t k = t->free_rtr;
    if (k < 0)
        return;
    t->free_rtr = t->rtr_next[k];
    t->rtr[k] = (tcp_rtr_t){.tag = h->tag, .cap = h->len, .op = h->c1, .gen = h->c2};
    t->rtr_next[k] = -1;
    if (p->rtr_tail >= 0)
        t->rtr_next[p->rtr_tail] = k;
    else
        p->rtr_head = k;
    p->rtr_tail = k;
}

static int tcp_isend(cs_tp_t *tp, int peer, const void *buf, size_t len, void *mr, uint64_t tag,
                     cs_tp_req_t *req)
{
    tp_tcp_t *t = (tp_tcp_t *)tp;
    (void)mr;
    int old_status = req->status;
    int32_t i;
    int st = post_begin(t, peer, buf, len, tag, req, &i);
    if (st != CS_OK)
        return st;
    tcp_op_t *o = &t->ops[i];
    o->is_send = 1;
    tcp_peer_t *p = &t->peers[peer];
    if (p->dead) {
        cs__tcp_complete(t, i, CS_ERR_PEER, 0);
        return CS_OK;
    }
    if (peer == t->base.rank) {
        o->state = OPS_SELF;
        fifo_push(t->ops, &p->self_sends, i);
        self_match(t);
        return CS_OK;
    }
    tcp_hdr_t h = {.tag = tag, .len = len};
    tcp_rtr_t r;
    int ready = rtr_take(t, p, tag, &r); /* this send is the one the RTR waited for */
    if (ready && len > TCP_EAGER && len <= r.cap) {
        /* DDATA says which receive the DATA chunks behind it fill */
        h.type = TCP_DDATA;
        h.c2 = r.op;
        h.aux = r.gen;
        st = t->free_frame >= 0 && t->frame_next[t->free_frame] >= 0 ? CS_OK : CS_AGAIN;
        if (st == CS_OK && (st = msg_queue(t, peer, &h, NULL, i)) == CS_OK) {
            tcp_hdr_t d = {.type = TCP_DATA, .c2 = r.op, .aux = r.gen, .len = len};
            st = frame_queue(t, peer, &d, buf, i);
        }
        o->state = OPS_SENDING;
    } else if (len <= TCP_EAGER) {
        h.type = TCP_EAGER_MSG;
        st = msg_queue(t, peer, &h, buf, i);
        o->state = OPS_SENDING;
    } else {
        h.type = TCP_RTS;
        h.c1 = (uint32_t)i;
        h.c2 = o->gen;
        st = msg_queue(t, peer, &h, NULL, i);
        o->state = OPS_RTS;
    }
    if (st != CS_OK) { /* no frame free: recycle the op, the caller retries */
        o->req = NULL;
        cs__tcp_complete(t, i, CS_OK, 0);
        req->status = old_status;
        return CS_AGAIN;
    }
    /* Try to write it now: a send fully written completes inline. */
    cs__tcp_write_peer(t, peer);
    if (o->state == OPS_DONE && req->status == CS_OK &&
        t->done[(t->done_tail - 1) & t->done_mask] == i) {
        t->done_tail--; /* completed inline: poll will not report it */
        op_put(t, i);
    }
    return CS_OK;
}

static int tcp_irecv(cs_tp_t *tp, int peer, void *buf, size_t len, void *mr, uint64_t tag,
                     cs_tp_req_t *req)
{
    tp_tcp_t *t = (tp_tcp_t *)tp;
    (void)mr;
    int32_t i;
    int st = post_begin(t, peer, buf, len, tag, req, &i);
    if (st != CS_OK)
        return st;
    tcp_op_t *o = &t->ops[i];
    tcp_peer_t *p = &t->peers[peer];
    int32_t u = cs__tcp_unex_find(t, peer, tag);
    if (u >= 0)
        return cs__tcp_match_unex(t, i, u);
    if (p->dead && peer != t->base.rank) {
        cs__tcp_complete(t, i, CS_ERR_PEER, 0);
        return CS_OK;
    }
    o->state = OPS_POSTED;
    rtr_maybe(t, i);
    if (p->dead) { /* writing the RTR found the peer gone (it failed the posted list) */
        cs__tcp_complete(t, i, CS_ERR_PEER, 0);
        return CS_OK;
    }
    fifo_push(t->ops, &p->posted, i);
    if (peer == t->base.rank)
        self_match(t);
    return CS_OK;
}

/* CTS for a receive matched to an RTS (posted, or from the unexpected list). */
int cs__tcp_send_cts(tp_tcp_t *t, int32_t recv_op, uint32_t send_op, uint32_t send_gen,
                     size_t msg_len)
{
    tcp_op_t *o = &t->ops[recv_op];
    o->msg_len = msg_len;
    o->state = OPS_DATA_WAIT;
    tcp_hdr_t h = {.type = TCP_CTS, .c1 = send_op, .c2 = (uint32_t)recv_op, .aux = send_gen,
                   .len = o->gen};
    if (frame_queue(t, o->peer, &h, NULL, -1) != CS_OK) {
        cs__tcp_complete(t, recv_op, CS_ERR_NOMEM, 0);
        return CS_ERR_NOMEM;
    }
    cs__tcp_write_peer(t, o->peer);
    return CS_OK;
}

/* The sender's side of a CTS: queue the payload. */
void cs__tcp_on_cts(tp_tcp_t *t, int peer, const tcp_hdr_t *h)
{
    if (h->c1 >= (uint32_t)t->nops)
        return;
    tcp_op_t *o = &t->ops[h->c1];
    if (o->state != OPS_RTS || o->gen != h->aux || o->peer != peer)
        return; /* cancelled meanwhile (the receiver times out or fails on EOF),
                   or its data went on an RTR */
    send_data(t, peer, (int32_t)h->c1, h->c2, (uint32_t)h->len);
}

static int tcp_poll(cs_tp_t *tp, cs_tp_req_t **done, int max)
{
    tp_tcp_t *t = (tp_tcp_t *)tp;
    int st = cs__tcp_progress(t);
    if (st < 0)
        return st;
    int n = 0;
    while (n < max && t->done_head != t->done_tail)
        done[n++] = done_pop(t);
    return n;
}

static int tcp_cancel(cs_tp_t *tp, cs_tp_req_t *req)
{
    tp_tcp_t *t = (tp_tcp_t *)tp;
    for (int32_t i = 0; i < t->nops; i++) {
        tcp_op_t *o = &t->ops[i];
        if (o->state == OPS_FREE || o->state == OPS_DONE || o->req != req)
            continue;
        tcp_peer_t *p = &t->peers[o->peer];
        if ((o->state == OPS_POSTED && cs__tcp_fifo_remove(t->ops, &p->posted, i)) ||
            (o->state == OPS_SELF && cs__tcp_fifo_remove(t->ops, &p->self_sends, i)) ||
            o->state == OPS_RTS) {
            /* never matched: nothing of it is on the wire but an RTS, whose
             * CTS will find the op gone (generation check) */
            cs__tcp_complete(t, i, CS_ERR_TRANSPORT, 0);
            return CS_OK;
        }
        /* mid-transfer: it completes (or fails) on its own; nothing the
         * caller owns is touched after it is reported */
        return CS_OK;
    }
    return CS_OK;
}

static int tcp_get_addr(cs_tp_t *tp, void *buf, size_t *len)
{
    tp_tcp_t *t = (tp_tcp_t *)tp;
    if (*len < t->addr_len)
        return CS_ERR_RANGE;
    memcpy(buf, &t->addr, t->addr_len);
    *len = t->addr_len;
    return CS_OK;
}

static int tcp_mr_reg(cs_tp_t *tp, void *buf, size_t len, void **mr)
{
    (void)tp, (void)buf, (void)len;
    *mr = NULL; /* sockets read and write any memory */
    return CS_OK;
}

static void tcp_close(cs_tp_t *tp)
{
    tp_tcp_t *t = (tp_tcp_t *)tp;
    if (!t)
        return;
    if (cs_intr_pending() && !t->left)
        cs__tcp_leave(tp, cs_intr_pending());
    cs__tcp_sockets_close(t);
    free(t->ops);
    free(t->frames);
    free(t->frame_next);
    free(t->done);
    free(t->unex);
    free(t->unex_next);
    free(t->unex_data);
    free(t->rtr);
    free(t->rtr_next);
    free(t->hist);
    free(t->peers);
    free(t);
}

static const cs_tp_ops_t tcp_ops = {
    .size = sizeof(cs_tp_ops_t),
    .name = "tcp",
    .close = tcp_close,
    .get_addr = tcp_get_addr,
    .insert_addrs = cs__tcp_connect_all,
    .mr_reg = tcp_mr_reg,
    .mr_dereg = cs_tp_nosup_mr_dereg,
    .isend = tcp_isend,
    .irecv = tcp_irecv,
    .poll = tcp_poll,
    .cancel = tcp_cancel,
    .leave = cs__tcp_leave,
};

int cs_tp_tcp_open(const cs_tp_config_t *cfg, cs_tp_t **out, cs_err_t *err)
{
    if (cfg->nranks < 1 || cfg->rank < 0 || cfg->rank >= cfg->nranks)
        return cs_err_set(err, CS_ERR_INVAL, "tcp transport: rank %d of %d out of range",
                          cfg->rank, cfg->nranks);
    tp_tcp_t *t = calloc(1, sizeof(*t));
    if (!t)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    t->base.ops = &tcp_ops;
    t->base.rank = cfg->rank;
    t->base.nranks = cfg->nranks;
    t->base.max_msg = SIZE_MAX; /* the framing carries any length */
    t->listen_fd = t->epfd = -1;
    t->setup_s = cfg->timeout_s > 0 ? cfg->timeout_s : 60.0;
    t->nops = TCP_OPS;
    t->nframes = 2 * TCP_OPS + 2 * cfg->nranks + 64; /* messages, CTS and RTR frames */
    uint32_t dq = 1;
    while (dq < (uint32_t)t->nops)
        dq <<= 1;
    t->done_mask = dq - 1;
    t->ops = calloc((size_t)t->nops, sizeof(*t->ops));
    t->frames = calloc((size_t)t->nframes, sizeof(*t->frames));
    t->frame_next = malloc(sizeof(int32_t) * (size_t)t->nframes);
    t->done = calloc(dq, sizeof(*t->done));
    t->unex = calloc(TCP_UNEX_RECS, sizeof(*t->unex));
    t->unex_next = malloc(sizeof(int32_t) * TCP_UNEX_RECS);
    t->unex_data = malloc((size_t)TCP_UNEX_SLOTS * TCP_EAGER);
    t->peers = calloc((size_t)cfg->nranks, sizeof(*t->peers));
    t->rtr = calloc(TCP_RTR_RECS, sizeof(*t->rtr));
    t->rtr_next = malloc(sizeof(int32_t) * TCP_RTR_RECS);
    t->hist = calloc((size_t)cfg->nranks * TCP_HIST, sizeof(*t->hist));
    for (int r = 0; t->peers && r < cfg->nranks; r++) /* before tcp_close can see them */
        t->peers[r].fd = -1;
    if (!t->ops || !t->frames || !t->frame_next || !t->done || !t->unex || !t->unex_next ||
        !t->unex_data || !t->peers || !t->rtr || !t->rtr_next || !t->hist) {
        tcp_close(&t->base);
        return cs_err_set(err, CS_ERR_NOMEM, "tcp transport: out of memory for its pools");
    }
    for (int32_t i = 0; i < t->nops; i++)
        t->ops[i].next = i + 1 < t->nops ? i + 1 : -1;
    for (int32_t i = 0; i < t->nframes; i++)
        t->frame_next[i] = i + 1 < t->nframes ? i + 1 : -1;
    for (int32_t i = 0; i < TCP_UNEX_RECS; i++)
        t->unex_next[i] = i + 1 < TCP_UNEX_RECS ? i + 1 : -1;
    for (int32_t i = 0; i < TCP_RTR_RECS; i++)
        t->rtr_next[i] = i + 1 < TCP_RTR_RECS ? i + 1 : -1;
    for (int32_t i = 0; i < TCP_UNEX_SLOTS; i++)
        t->free_slot[i] = i;
    t->nfree_slot = TCP_UNEX_SLOTS;
    for (int r = 0; r < cfg->nranks; r++) {
        tcp_peer_t *p = &t->peers[r];
        p->whead = p->wtail = p->chead = p->ctail = -1;
        p->posted.head = p->posted.tail = -1;
        p->self_sends.head = p->self_sends.tail = -1;
        p->unex_head = p->unex_tail = -1;
        p->rtr_head = p->rtr_tail = -1;
        p->hist = t->hist + (size_t)r * TCP_HIST;
        p->rstate = RS_HDR;
    }
    int st = cs__tcp_listen(t, cfg->node, err);
    if (st != CS_OK) {
        tcp_close(&t->base);
        return st;
    }
    *out = &t->base;
    return CS_OK;
}
