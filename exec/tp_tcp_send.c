/*
 * tp_tcp_send.c - post and write, the native TCP transport's writing side:
 * a send posted as EAGER, RTS or (on an RTR) DDATA; the frame queues of a
 * connection and their writing; the sender's side of CTS and RTR; LEAVE.
 * Protocol overview in tp_tcp.c.  Calls no other file of the transport: a
 * write that fails leaves its errno in tcp_peer_t.werr for the progress
 * loop (tp_tcp.c).
 *
 * Each pair of ranks has two connections, each with its queue: message
 * frames (EAGER, RTS, DDATA, DATA) in posting order, which matching relies
 * on, and control frames (CTS, RTR, LEAVE) on a connection of their own,
 * so that a CTS answering the peer's RTS never waits behind this rank's
 * own large message, in this queue or in the kernel's socket buffer (see
 * tp_tcp.c).  DATA is written in chunks of TCP_CHUNK bytes, each a frame
 * of its own.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "tp_tcp.h"

/* Queue a frame: control frames on the control list, the rest on the
 * message list; a DATA frame's payload goes in chunks. */
int cs__tcp_frame_queue(tp_tcp_t *t, int peer, const tcp_hdr_t *h, const char *payload,
                        int32_t op)
{
    int32_t f = cs_tp_pool_get(&t->fpool);
    if (f < 0)
        return CS_AGAIN;
    tcp_frame_t *fr = &t->frames[f];
    *fr = (tcp_frame_t){.hdr = *h, .payload = payload, .op = op};
    if (h->type == TCP_DATA) {
        fr->total = h->len;
        fr->hdr.tag = 0;
        fr->hdr.len = h->len < TCP_CHUNK ? h->len : TCP_CHUNK;
    }
    tcp_peer_t *p = &t->peers[peer];
    int ctl = h->type == TCP_CTS || h->type == TCP_RTR || h->type == TCP_LEAVE;
    cs_tp_fifo_push(ctl ? &p->cq : &p->wq, t->fpool.next, f);
    return CS_OK;
}

/* A message frame (EAGER, RTS, DDATA): queued, counted and remembered for
 * matching RTRs against. */
static int msg_queue(tp_tcp_t *t, int peer, const tcp_hdr_t *h, const char *payload,
                     int32_t op)
{
    int st = cs__tcp_frame_queue(t, peer, h, payload, h->type == TCP_EAGER_MSG ? op : -1);
    if (st != CS_OK)
        return st;
    tcp_peer_t *p = &t->peers[peer];
    p->hist[++p->sseq & (TCP_HIST - 1)] = (tcp_sent_t){.tag = h->tag, .op = op,
                                                      .gen = tcp_gen(t, op)};
    return CS_OK;
}

/* Write what socket fd takes of queue q; completes sends whose frame is
 * out.  0 when the socket is full, 1 when the queue is empty, -1 when the
 * write failed (errno in p->werr). */
static int write_queue(tp_tcp_t *t, tcp_peer_t *p, int fd, cs_tp_fifo_t *q)
{
    while (q->head >= 0) {
        int32_t f = q->head;
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
        ssize_t w = sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                return 0;
            p->werr = errno;
            return -1;
        }
        fr->off += (size_t)w;
        if (fr->off < total)
            return 0;
        if (fr->hdr.type == TCP_DATA && fr->sent + fr->hdr.len < fr->total) {
            fr->sent += fr->hdr.len; /* next chunk */
            fr->hdr.tag = fr->sent;
            fr->hdr.len = fr->total - fr->sent < TCP_CHUNK ? fr->total - fr->sent : TCP_CHUNK;
            fr->off = 0;
            continue;
        }
        cs_tp_fifo_pop(q, t->fpool.next);
        int32_t op = fr->op;
        cs_tp_pool_put(&t->fpool, f);
        if (op >= 0) /* EAGER or DATA: the send is over */
            tcp_complete(t, op, CS_OK, t->ops[op].len);
    }
    return 1;
}

void cs__tcp_write_peer(tp_tcp_t *t, int peer)
{
    tcp_peer_t *p = &t->peers[peer];
    if (p->dead || p->werr)
        return;
    if (p->cq.head >= 0 && write_queue(t, p, p->cfd, &p->cq) < 0)
        return;
    if (p->wq.head >= 0)
        write_queue(t, p, p->fd, &p->wq);
}

/* Send op i (an RTS out, or a DDATA queued) goes: its payload for receive
 * op rop.  CS_OK, or the op failed for want of a frame. */
static int send_data(tp_tcp_t *t, int peer, int32_t i, uint32_t rop, uint32_t rgen)
{
    tcp_op_t *o = &t->ops[i];
    tcp_hdr_t d = {.type = TCP_DATA, .c2 = rop, .aux = rgen, .len = o->len};
    o->state = OPS_SENDING;
    if (cs__tcp_frame_queue(t, peer, &d, o->buf, i) != CS_OK) {
        tcp_complete(t, i, CS_ERR_NOMEM, 0);
        return CS_ERR_NOMEM;
    }
    return CS_OK;
}

/* ---- RTR ---- */

/* The oldest pending RTR of peer for tag, removed; 1 if there was one. */
static int rtr_take(tp_tcp_t *t, tcp_peer_t *p, uint64_t tag, tcp_rtr_t *out)
{
    int32_t k = cs_tp_fifo_take(&p->rtrs, t->rpool.next, t->rtr, sizeof(tcp_rtr_t),
                                offsetof(tcp_rtr_t, tag), tag);
    if (k < 0)
        return 0;
    *out = t->rtr[k];
    cs_tp_pool_put(&t->rpool, k);
    return 1;
}

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
        if (o->state == OPS_RTS && tcp_gen(t, m->op) == m->gen && o->len <= h->len)
            send_data(t, peer, m->op, h->c1, h->c2); /* the CTS coming is ignored */
        return; /* otherwise its message is on the way already */
    }
    int32_t k = cs_tp_pool_get(&t->rpool);
    if (k < 0)
        return;
    t->rtr[k] = (tcp_rtr_t){.tag = h->tag, .cap = h->len, .op = h->c1, .gen = h->c2};
    cs_tp_fifo_push(&p->rtrs, t->rpool.next, k);
}

/* ---- posting ---- */

int cs__tcp_post_send(tp_tcp_t *t, int32_t i)
{
    tcp_op_t *o = &t->ops[i];
    int peer = o->peer;
    tcp_peer_t *p = &t->peers[peer];
    tcp_hdr_t h = {.tag = o->tag, .len = o->len};
    tcp_rtr_t r;
    int st;
    if (rtr_take(t, p, o->tag, &r) && o->len > TCP_EAGER && o->len <= r.cap) {
        /* this send is the one the RTR waited for: DDATA says which receive
         * the DATA chunks behind it fill */
        h.type = TCP_DDATA;
        h.c2 = r.op;
        h.aux = r.gen;
        st = t->fpool.nfree >= 2 ? msg_queue(t, peer, &h, NULL, i) : CS_AGAIN;
        if (st == CS_OK)
            send_data(t, peer, i, r.op, r.gen); /* a frame is free: cannot fail */
    } else if (o->len <= TCP_EAGER) {
        h.type = TCP_EAGER_MSG;
        st = msg_queue(t, peer, &h, o->buf, i);
        o->state = OPS_SENDING;
    } else {
        h.type = TCP_RTS;
        h.c1 = (uint32_t)i;
        h.c2 = tcp_gen(t, i);
        st = msg_queue(t, peer, &h, NULL, i);
        o->state = OPS_RTS;
    }
    if (st != CS_OK) { /* no frame free: recycle the op, the caller retries */
        o->req = NULL;
        tcp_complete(t, i, CS_OK, 0);
        return CS_AGAIN;
    }
    cs__tcp_write_peer(t, peer); /* a send fully written completes inline */
    return CS_OK;
}

/* ---- the sender's side of a CTS ---- */

int cs__tcp_send_cts(tp_tcp_t *t, int32_t recv_op, uint32_t send_op, uint32_t send_gen,
                     size_t msg_len)
{
    tcp_op_t *o = &t->ops[recv_op];
    if (t->peers[o->peer].dead) {
        /* an RTS read before the peer went, matched after: its DATA will
         * never come (and no frame is queued to a connection closed) */
        tcp_complete(t, recv_op, CS_ERR_PEER, 0);
        return CS_ERR_PEER;
    }
    o->msg_len = msg_len;
    o->got = 0;
    o->state = OPS_DATA_WAIT;
    tcp_hdr_t h = {.type = TCP_CTS, .c1 = send_op, .c2 = (uint32_t)recv_op, .aux = send_gen,
                   .len = tcp_gen(t, recv_op)};
    if (cs__tcp_frame_queue(t, o->peer, &h, NULL, -1) != CS_OK) {
        tcp_complete(t, recv_op, CS_ERR_NOMEM, 0);
        return CS_ERR_NOMEM;
    }
    cs__tcp_write_peer(t, o->peer);
    return CS_OK;
}

void cs__tcp_on_cts(tp_tcp_t *t, int peer, const tcp_hdr_t *h)
{
    if (!cs_tp_pool_live(&t->opool, h->c1, h->aux))
        return; /* recycled meanwhile (the receiver timed out or failed on EOF) */
    tcp_op_t *o = &t->ops[h->c1];
    if (o->state != OPS_RTS || o->peer != peer)
        return; /* its data went on an RTR already */
    send_data(t, peer, (int32_t)h->c1, h->c2, (uint32_t)h->len);
}

/* ---- leaving ---- */

/* Keep only the head of q if it is half written (a DATA frame: its
 * current chunk only); give the other frames back. */
static void keep_started(tp_tcp_t *t, cs_tp_fifo_t *q)
{
    int32_t keep = q->head >= 0 && t->frames[q->head].off > 0 ? q->head : -1;
    if (keep >= 0)
        cs_tp_fifo_pop(q, t->fpool.next);
    cs_tp_fifo_release(q, &t->fpool);
    if (keep >= 0) {
        tcp_frame_t *fr = &t->frames[keep];
        fr->total = fr->sent + fr->hdr.len;
        cs_tp_fifo_push(q, t->fpool.next, keep);
    }
}

void cs__tcp_leave(cs_tp_t *tp, int sig)
{
    tp_tcp_t *t = (tp_tcp_t *)tp;
    int P = t->base.nranks, me = t->base.rank;
    if (t->left || !t->ready) {
        t->left = 1;
        return;
    }
    t->left = 1;
    for (int r = 0; r < P; r++) {
        tcp_peer_t *p = &t->peers[r];
        if (r == me || p->dead)
            continue;
        /* frames not started are dropped (their sends never complete: only
         * close follows); one half written must be finished first (a DATA
         * frame: its current chunk) */
        keep_started(t, &p->wq);
        keep_started(t, &p->cq);
        tcp_hdr_t h = {.type = TCP_LEAVE, .aux = (uint32_t)sig};
        cs__tcp_frame_queue(t, r, &h, NULL, -1);
    }
    double deadline = cs_now_s() + TCP_LEAVE_S;
    for (;;) {
        int pending = 0;
        for (int r = 0; r < P; r++) {
            tcp_peer_t *p = &t->peers[r];
            if (r == me || p->dead || p->werr || (p->wq.head < 0 && p->cq.head < 0))
                continue;
            cs__tcp_write_peer(t, r);
            pending += !p->werr && (p->wq.head >= 0 || p->cq.head >= 0);
        }
        if (!pending || cs_now_s() > deadline)
            break;
        struct timespec ts = {0, TCP_LEAVE_NAP_NS};
        nanosleep(&ts, NULL);
    }
    for (int r = 0; r < P; r++) /* the peers read the LEAVE, then the end of the streams */
        if (r != me && !t->peers[r].dead && t->peers[r].fd >= 0) {
            shutdown(t->peers[r].fd, SHUT_WR);
            shutdown(t->peers[r].cfd, SHUT_WR);
        }
}
