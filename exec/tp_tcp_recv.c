/*
 * tp_tcp_recv.c - receive and match, the native TCP transport's reading
 * side: frames read from a connection, messages matched with receives
 * (posted ones, or kept as unexpected until one is posted), the
 * receiver's RTR and CTS, messages to oneself.  Protocol overview in
 * tp_tcp.c.  Reads both connections of a peer: messages (EAGER, RTS,
 * DDATA, DATA) and control frames (CTS, RTR, LEAVE).  Calls tp_tcp_send.c
 * (frames to write) and tp_tcp_conn.c (losing a peer), nothing calls back.
 *
 * What arrives before its receive is posted is read all the same: an EAGER
 * payload into a slot of the unexpected pool, an RTS into a record (its
 * data waits at the sender for the CTS), so the peer's writes never wait
 * for this rank's receives.  Only when the pool is full does a connection
 * hold the header of a message nobody waits for and stop reading there
 * (back pressure through TCP, nothing dropped); every other frame (CTS,
 * RTR, DATA, a message a posted receive takes) is read whatever the pool
 * holds.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "cs_log.h"
#include "tp_tcp.h"

#define OP_TAG offsetof(tcp_op_t, tag)

/* First posted receive of peer with tag, removed from the list; or -1. */
static int32_t posted_take(tp_tcp_t *t, tcp_peer_t *p, uint64_t tag)
{
    return cs_tp_fifo_take(&p->posted, t->opool.next, t->ops, sizeof(tcp_op_t), OP_TAG, tag);
}

/* Receive op meets unexpected record u (off its peer's list). */
static void match_unex(tp_tcp_t *t, int32_t op, int32_t u)
{
    tcp_unex_t *x = &t->unex[u];
    tcp_op_t *o = &t->ops[op];
    if (x->type == TCP_EAGER_MSG) {
        size_t n = x->len <= o->len ? x->len : o->len;
        if (n)
            memcpy(o->buf, cs_tp_unex_slot(&t->upool, x->slot), n);
        cs_tp_unex_slot_put(&t->upool, x->slot);
        tcp_complete(t, op, x->len <= o->len ? CS_OK : CS_ERR_RANGE, n);
    } else {
        cs__tcp_send_cts(t, op, x->c1, x->c2, x->len);
    }
    cs_tp_pool_put(&t->upool.recs, u);
}

/* Receive op i was just posted (not in the posted list yet): tell the
 * sender when the RTR rule is sure to hold (see tp_tcp.c). */
static void rtr_maybe(tp_tcp_t *t, int32_t i)
{
    tcp_op_t *o = &t->ops[i];
    tcp_peer_t *p = &t->peers[o->peer];
    if (o->len <= TCP_EAGER || o->peer == t->base.rank)
        return;
    if (p->rstate == RS_PAYLOAD && p->runex >= 0 && p->rhdr.tag == o->tag)
        return; /* an unexpected message of the tag is being read: it is ours */
    if (cs_tp_fifo_find(&p->posted, t->opool.next, t->ops, sizeof(tcp_op_t), OP_TAG, o->tag) >=
        0)
        return; /* an older receive will take the next message of the tag */
    /* (a header held for want of room is not counted in rseq yet: the RTR
     * names it, which is the message this receive will match) */
    tcp_hdr_t h = {.type = TCP_RTR, .tag = o->tag, .c1 = (uint32_t)i, .c2 = tcp_gen(t, i),
                   .aux = p->rseq, .len = o->len};
    if (cs__tcp_frame_queue(t, o->peer, &h, NULL, -1) == CS_OK)
        cs__tcp_write_peer(t, o->peer);
}

int cs__tcp_post_recv(tp_tcp_t *t, int32_t i)
{
    tcp_op_t *o = &t->ops[i];
    tcp_peer_t *p = &t->peers[o->peer];
    int32_t u = cs_tp_fifo_take(&p->unex, t->upool.recs.next, t->unex, sizeof(tcp_unex_t),
                                offsetof(tcp_unex_t, tag), o->tag);
    if (u >= 0) {
        match_unex(t, i, u);
        return CS_OK;
    }
    if (p->dead && o->peer != t->base.rank) {
        tcp_complete(t, i, CS_ERR_PEER, 0);
        return CS_OK;
    }
    o->state = OPS_POSTED;
    rtr_maybe(t, i); /* a write that finds the peer gone: the next poll fails it */
    cs_tp_fifo_push(&p->posted, t->opool.next, i);
    if (o->peer == t->base.rank)
        cs__tcp_self_match(t);
    return CS_OK;
}

void cs__tcp_self_match(tp_tcp_t *t)
{
    tcp_peer_t *p = &t->peers[t->base.rank];
    int32_t *next = t->opool.next;
    for (int32_t s = p->self_sends.head; s >= 0;) {
        int32_t after = next[s];
        tcp_op_t *so = &t->ops[s];
        int32_t r = cs_tp_fifo_take(&p->posted, next, t->ops, sizeof(tcp_op_t), OP_TAG, so->tag);
        if (r >= 0) {
            tcp_op_t *ro = &t->ops[r];
            size_t n = so->len <= ro->len ? so->len : ro->len;
            if (n)
                memcpy(ro->buf, so->buf, n);
            cs_tp_fifo_remove(&p->self_sends, next, s);
            tcp_complete(t, r, so->len <= ro->len ? CS_OK : CS_ERR_RANGE, n);
            tcp_complete(t, s, CS_OK, so->len);
        }
        s = after;
    }
}

/* A new unexpected record for the header in p->rhdr (room checked). */
static int32_t unex_new(tp_tcp_t *t, const tcp_hdr_t *h)
{
    int32_t u = cs_tp_pool_get(&t->upool.recs);
    tcp_unex_t *x = &t->unex[u];
    *x = (tcp_unex_t){.type = h->type, .tag = h->tag, .len = h->len, .c1 = h->c1,
                      .c2 = h->c2, .slot = -1};
    return u;
}

/* Receive op reads the payload of the frame in p->rhdr from byte `at` of
 * its buffer on. */
static void read_into(tcp_peer_t *p, int32_t op, tcp_op_t *o, size_t at)
{
    p->rop = op;
    if (at < o->len) {
        p->rdst = o->buf + at;
        p->rkeep = p->rhdr.len <= o->len - at ? p->rhdr.len : o->len - at;
    }
}

/* A whole header arrived: decide where its payload goes.  0: it must wait
 * (a message nobody waits for and no room to keep it): the header stays in
 * rhdr and nothing is read from the peer until it is dealt with. */
static int on_header(tp_tcp_t *t, int peer)
{
    tcp_peer_t *p = &t->peers[peer];
    tcp_hdr_t *h = &p->rhdr;
    p->rop = p->runex = -1;
    p->rdst = NULL;
    p->rkeep = 0;
    switch (h->type) {
    case TCP_EAGER_MSG: {
        int32_t op = posted_take(t, p, h->tag);
        if (op < 0 && !cs_tp_unex_room(&t->upool, 1))
            return 0;
        p->rseq++;
        if (op >= 0) {
            tcp_op_t *o = &t->ops[op];
            o->state = OPS_READING;
            o->msg_len = h->len;
            read_into(p, op, o, 0);
        } else {
            int32_t u = unex_new(t, h);
            t->unex[u].slot = cs_tp_unex_slot_get(&t->upool);
            p->runex = u;
            p->rdst = cs_tp_unex_slot(&t->upool, t->unex[u].slot);
            p->rkeep = h->len <= TCP_EAGER ? h->len : TCP_EAGER;
        }
        break;
    }
    case TCP_RTS: {
        int32_t op = posted_take(t, p, h->tag);
        if (op < 0 && !cs_tp_unex_room(&t->upool, 0))
            return 0;
        p->rseq++;
        if (op >= 0)
            cs__tcp_send_cts(t, op, h->c1, h->c2, h->len);
        else
            cs_tp_fifo_push(&p->unex, t->upool.recs.next, unex_new(t, h));
        return 1;
    }
    case TCP_DDATA: /* for the receive that sent an RTR, still first of its tag: the
                       DATA chunks behind it fill it */
        p->rseq++;
        if (cs_tp_pool_live(&t->opool, h->c2, h->aux)) {
            tcp_op_t *o = &t->ops[h->c2];
            if (o->state == OPS_POSTED && o->peer == peer && o->tag == h->tag &&
                cs_tp_fifo_remove(&p->posted, t->opool.next, (int32_t)h->c2)) {
                o->state = OPS_DATA_WAIT;
                o->msg_len = h->len;
                o->got = 0;
            }
        }
        return 1; /* cancelled meanwhile: its DATA is read and dropped */
    case TCP_DATA: /* a chunk of a message, at offset tag */
        if (cs_tp_pool_live(&t->opool, h->c2, h->aux)) {
            tcp_op_t *o = &t->ops[h->c2];
            if (o->state == OPS_DATA_WAIT && o->peer == peer)
                read_into(p, (int32_t)h->c2, o, h->tag);
        }
        break; /* no such receive (cancelled): the payload is read and dropped */
    default: /* CTS, RTR and LEAVE come on the control connection */
        CS_ERROR("exec", "tcp transport: rank %d: bad frame type %u from rank %d",
                 t->base.rank, h->type, peer);
        cs__tcp_peer_lost(t, peer, EPROTO);
        return 1;
    }
    p->rstate = RS_PAYLOAD;
    return 1;
}

/* The payload of the current frame is in (or dropped). */
static void on_payload(tp_tcp_t *t, tcp_peer_t *p)
{
    size_t len = p->rhdr.len;
    if (p->rop >= 0 && p->rhdr.type == TCP_DATA) {
        tcp_op_t *o = &t->ops[p->rop];
        o->got += len;
        if (o->got >= o->msg_len)
            tcp_complete(t, p->rop, o->msg_len <= o->len ? CS_OK : CS_ERR_RANGE,
                         o->msg_len <= o->len ? o->msg_len : o->len);
    } else if (p->rop >= 0) {
        tcp_op_t *o = &t->ops[p->rop];
        tcp_complete(t, p->rop, len <= o->len ? CS_OK : CS_ERR_RANGE, p->rkeep);
    } else if (p->runex >= 0) {
        /* a receive posted while the payload was coming takes it now */
        int32_t op = posted_take(t, p, p->rhdr.tag);
        if (op >= 0)
            match_unex(t, op, p->runex);
        else
            cs_tp_fifo_push(&p->unex, t->upool.recs.next, p->runex);
    }
    p->rstate = RS_HDR;
    p->rgot = 0;
}

void cs__tcp_read_peer(tp_tcp_t *t, int peer)
{
    tcp_peer_t *p = &t->peers[peer];
    char sink[TCP_SINK];
    while (!p->dead) {
        ssize_t k;
        if (p->rstate == RS_HDR && p->rgot == sizeof(tcp_hdr_t)) {
            if (!on_header(t, peer)) {
                /* no room for an unexpected message: read no more from this
                 * peer until a receive takes one (back pressure through TCP),
                 * but look (taking nothing) whether it is gone */
                t->stalled = 1;
                k = recv(p->fd, sink, 1, MSG_PEEK | MSG_DONTWAIT);
                if (k == 0 ||
                    (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
                    int e = k < 0 ? errno : 0;
                    cs__tcp_read_ctl(t, peer); /* its LEAVE, if it wrote one */
                    cs__tcp_peer_lost(t, peer, e);
                }
                return;
            }
            p->rgot = 0;
            if (p->rstate == RS_PAYLOAD && p->rhdr.len == 0)
                on_payload(t, p);
            continue;
        }
        if (p->rstate == RS_HDR) {
            k = recv(p->fd, (char *)&p->rhdr + p->rgot, sizeof(tcp_hdr_t) - p->rgot,
                     MSG_DONTWAIT);
        } else if (p->rgot < p->rkeep) {
            k = recv(p->fd, p->rdst + p->rgot, p->rkeep - p->rgot, MSG_DONTWAIT);
        } else {
            size_t left = p->rhdr.len - p->rgot;
            k = recv(p->fd, sink, left < sizeof(sink) ? left : sizeof(sink), MSG_DONTWAIT);
        }
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return;
        if (k <= 0) {
            /* the peer went: a LEAVE it wrote first is on the control
             * connection (it names the signal), then it is lost */
            int e = k < 0 ? errno : 0;
            cs__tcp_read_ctl(t, peer);
            cs__tcp_peer_lost(t, peer, e);
            return;
        }
        p->rgot += (size_t)k;
        if (p->rstate == RS_PAYLOAD && p->rgot == p->rhdr.len)
            on_payload(t, p);
    }
}

void cs__tcp_read_ctl(tp_tcp_t *t, int peer)
{
    tcp_peer_t *p = &t->peers[peer];
    while (!p->dead && !p->cdone) {
        ssize_t k = recv(p->cfd, (char *)&p->chdr + p->cgot, sizeof(tcp_hdr_t) - p->cgot,
                         MSG_DONTWAIT);
        if (k <= 0) {
            if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                return;
            /* the peer went: its message connection ends too, after what it
             * sent on it, and says so (cs__tcp_read_peer) */
            p->cdone = 1;
            if (t->epfd >= 0)
                epoll_ctl(t->epfd, EPOLL_CTL_DEL, p->cfd, NULL);
            return;
        }
        p->cgot += (size_t)k;
        if (p->cgot < sizeof(tcp_hdr_t))
            continue;
        p->cgot = 0;
        const tcp_hdr_t *h = &p->chdr;
        switch (h->type) {
        case TCP_CTS: cs__tcp_on_cts(t, peer, h); break;
        case TCP_RTR: cs__tcp_on_rtr(t, peer, h); break;
        case TCP_LEAVE: /* it was interrupted: what it sent before comes first */
            cs__tp_peer_left(&t->base, peer, (int)h->aux);
            cs__tcp_read_peer(t, peer);
            cs__tcp_peer_lost(t, peer, 0);
            return;
        default:
            CS_ERROR("exec", "tcp transport: rank %d: bad control frame type %u from rank %d",
                     t->base.rank, h->type, peer);
            cs__tcp_peer_lost(t, peer, EPROTO);
            return;
        }
    }
}
