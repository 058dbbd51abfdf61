/*
 * tp_tcp_net.c - sockets of the native TCP transport: listening, the
 * all-pairs connection set-up, reading and dispatching frames, losing a
 * peer.  Protocol overview in tp_tcp.c.
 */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <stdarg.h>
#include <stdio.h>

#include "cs_intr.h"
#include "cs_log.h"
#include "tp_tcp.h"

/* Why set-up failed, for the caller's message (cs_tp.why). */
static void why(tp_tcp_t *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->base.why, sizeof(t->base.why), fmt, ap);
    va_end(ap);
    CS_DEBUG("exec", "tcp transport: rank %d: %s", t->base.rank, t->base.why);
}

#define SLICE_MS 50 /* blocking waits look at the interrupt flag this often */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int cs__tcp_listen(tp_tcp_t *t, const char *node, cs_err_t *err)
{
    const char *host = node && *node ? node : "127.0.0.1";
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    socklen_t len;
    struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        len = sizeof(*s4);
    } else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        len = sizeof(*s6);
    } else {
        return cs_err_set(err, CS_ERR_INVAL,
                          "tcp transport: '%s' is not an IPv4 or IPv6 address (--iface)", host);
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return cs_err_set(err, CS_ERR_TRANSPORT, "tcp transport: socket: %s", strerror(errno));
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, t->base.nranks + 16) != 0) {
        int e = errno;
        close(fd);
        return cs_err_set(err, CS_ERR_TRANSPORT, "tcp transport: cannot listen on %s: %s", host,
                          strerror(e));
    }
    len = sizeof(ss);
    getsockname(fd, (struct sockaddr *)&ss, &len);
    t->listen_fd = fd;
    t->addr.magic = TCP_MAGIC;
    t->addr.rank = t->base.rank;
    t->addr.nranks = t->base.nranks;
    t->addr.sa = ss;
    t->addr.salen = len;
    t->addr_len = sizeof(t->addr);
    return CS_OK;
}

/* Blocking I/O of exactly n bytes on a blocking socket, until `deadline`. */
static int io_full(int fd, void *buf, size_t n, int out, double deadline)
{
    char *p = buf;
    while (n > 0) {
        struct pollfd pf = {.fd = fd, .events = out ? POLLOUT : POLLIN};
        int ms = (int)((deadline - now_s()) * 1e3), pr;
        if (cs_intr_pending())
            return CS_ERR_INTERRUPTED;
        if (ms <= 0)
            return CS_ERR_TIMEOUT;
        if ((pr = poll(&pf, 1, ms < SLICE_MS ? ms : SLICE_MS)) <= 0) {
            if (pr < 0 && errno != EINTR)
                return CS_ERR_TIMEOUT;
            continue; /* a slice: look at the interrupt flag again */
        }
        ssize_t k = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return CS_ERR_PEER;
        p += k;
        n -= (size_t)k;
    }
    return CS_OK;
}

typedef struct hello {
    uint64_t magic;
    int32_t rank, nranks;
} hello_t;

static int connect_to(tp_tcp_t *t, int peer, const tcp_addr_t *a, double deadline)
{
    for (;;) {
        int fd = socket(a->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return CS_ERR_TRANSPORT;
        if (connect(fd, (const struct sockaddr *)&a->sa, a->salen) == 0) {
            hello_t h = {TCP_MAGIC, t->base.rank, t->base.nranks};
            int st = io_full(fd, &h, sizeof(h), 1, deadline);
            if (st != CS_OK) {
                close(fd);
                if (st == CS_ERR_INTERRUPTED)
                    why(t, "interrupted (%s)", cs_intr_signame(cs_intr_pending()));
                return st;
            }
            t->peers[peer].fd = fd;
            return CS_OK;
        }
        int e = errno;
        close(fd);
        if (cs_intr_pending()) {
            why(t, "interrupted (%s)", cs_intr_signame(cs_intr_pending()));
            return CS_ERR_INTERRUPTED;
        }
        if ((e != ECONNREFUSED && e != EINTR && e != EAGAIN) || now_s() > deadline) {
            why(t, "tcp transport: cannot connect to rank %d: %s", peer, strerror(e));
            return e == ECONNREFUSED ? CS_ERR_PEER : CS_ERR_TRANSPORT;
        }
        usleep(10000);
    }
}

static int accept_one(tp_tcp_t *t, double deadline)
{
    struct pollfd pf = {.fd = t->listen_fd, .events = POLLIN};
    int ms = (int)((deadline - now_s()) * 1e3);
    if (cs_intr_pending())
        return CS_ERR_INTERRUPTED;
    if (ms <= 0)
        return CS_ERR_TIMEOUT;
    if (poll(&pf, 1, ms < SLICE_MS ? ms : SLICE_MS) <= 0)
        return CS_AGAIN; /* a slice: the caller looks at the deadline and the flag */
    int fd = accept4(t->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return errno == EINTR || errno == EAGAIN ? CS_AGAIN : CS_ERR_TRANSPORT;
    hello_t h;
    int st = io_full(fd, &h, sizeof(h), 0, deadline);
    if (st == CS_ERR_INTERRUPTED) {
        close(fd);
        return st;
    }
    if (st != CS_OK || h.magic != TCP_MAGIC || h.nranks != t->base.nranks ||
        h.rank <= t->base.rank || h.rank >= t->base.nranks || t->peers[h.rank].fd >= 0) {
        CS_WARN("exec", "tcp transport: rank %d: refused a connection (not a rank above it "
                "of this job)", t->base.rank);
        close(fd);
        return CS_AGAIN; /* a stray connection: keep waiting for the real ones */
    }
    t->peers[h.rank].fd = fd;
    return CS_OK;
}

static int tune(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    int lowat = TCP_NOTSENT;
    setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof(lowat));
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? CS_ERR_TRANSPORT : CS_OK;
}

int cs__tcp_connect_all(cs_tp_t *tp, const void *blobs, size_t slot, const size_t *lens)
{
    tp_tcp_t *t = (tp_tcp_t *)tp;
    int P = t->base.nranks, me = t->base.rank;
    for (int r = 0; r < P; r++) {
        const tcp_addr_t *a = (const tcp_addr_t *)((const char *)blobs + (size_t)r * slot);
        if (lens[r] != sizeof(tcp_addr_t) || a->magic != TCP_MAGIC || a->rank != r ||
            a->nranks != P) {
            why(t, "tcp transport: the address of rank %d is not a tcp transport address of "
                "this job (are all ranks run with --transport tcp?)", r);
            return CS_ERR_INVAL;
        }
    }
    double deadline = now_s() + t->setup_s;
    for (int r = 0; r < me; r++) {
        int st = connect_to(t, r, (const tcp_addr_t *)((const char *)blobs + (size_t)r * slot),
                            deadline);
        if (st != CS_OK)
            return st;
    }
    for (int left = P - 1 - me; left > 0;) {
        int st = accept_one(t, deadline);
        if (st == CS_OK)
            left--;
        else if (st == CS_ERR_INTERRUPTED) {
            why(t, "interrupted (%s)", cs_intr_signame(cs_intr_pending()));
            return st;
        } else if (st != CS_AGAIN) {
            why(t, "tcp transport: %d rank(s) above rank %d never connected within %.0f s", left,
                me, t->setup_s);
            return st;
        }
    }
    close(t->listen_fd);
    t->listen_fd = -1;
    if (P - 1 >= TCP_EPOLL_MIN) {
        t->epfd = epoll_create1(EPOLL_CLOEXEC);
        if (t->epfd < 0)
            return CS_ERR_TRANSPORT;
    }
    for (int r = 0; r < P; r++) {
        if (r == me)
            continue;
        if (tune(t->peers[r].fd) != CS_OK)
            return CS_ERR_TRANSPORT;
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)r};
        if (t->epfd >= 0 && epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->peers[r].fd, &ev) != 0)
            return CS_ERR_TRANSPORT;
    }
    t->ready = 1;
    return CS_OK;
}

void cs__tcp_sockets_close(tp_tcp_t *t)
{
    for (int r = 0; t->peers && r < t->base.nranks; r++)
        if (t->peers[r].fd >= 0)
            close(t->peers[r].fd);
    if (t->listen_fd >= 0)
        close(t->listen_fd);
    if (t->epfd >= 0)
        close(t->epfd);
}

static void fail_fifo(tp_tcp_t *t, tcp_fifo_t *f)
{
    for (int32_t i = f->head; i >= 0;) {
        int32_t next = t->ops[i].next;
        cs__tcp_complete(t, i, CS_ERR_PEER, 0);
        i = next;
    }
    f->head = f->tail = -1;
}

void cs__tcp_peer_lost(tp_tcp_t *t, int peer, int err)
{
    tcp_peer_t *p = &t->peers[peer];
    if (p->dead)
        return;
    p->dead = 1;
    CS_DEBUG("exec", "tcp transport: rank %d lost rank %d (%s)", t->base.rank, peer,
             err ? strerror(err) : "end of stream");
    if (t->epfd >= 0)
        epoll_ctl(t->epfd, EPOLL_CTL_DEL, p->fd, NULL);
    close(p->fd);
    p->fd = -1;
    /* frames not written: their sends fail below with the other ops */
    tcp_free_list(t->frame_next, &t->free_frame, &p->whead, &p->wtail);
    tcp_free_list(t->frame_next, &t->free_frame, &p->chead, &p->ctail);
    if (p->rstate == RS_PAYLOAD && p->runex >= 0) { /* half-read unexpected message */
        t->free_slot[t->nfree_slot++] = t->unex[p->runex].slot;
        t->unex_next[p->runex] = t->free_unex;
        t->free_unex = p->runex;
    }
    p->rstate = RS_HDR;
    p->rgot = 0;
    cs__tcp_rtr_clear(t, peer);
    fail_fifo(t, &p->posted);
    for (int32_t i = 0; i < t->nops; i++) {
        tcp_op_t *o = &t->ops[i];
        if (o->peer == peer && (o->state == OPS_SENDING || o->state == OPS_RTS ||
                                o->state == OPS_DATA_WAIT || o->state == OPS_READING))
            cs__tcp_complete(t, i, CS_ERR_PEER, 0);
    }
}

int32_t cs__tcp_unex_find(tp_tcp_t *t, int peer, uint64_t tag)
{
    int32_t prev = -1;
    tcp_peer_t *p = &t->peers[peer];
    for (int32_t u = p->unex_head; u >= 0; prev = u, u = t->unex_next[u]) {
        if (t->unex[u].tag != tag)
            continue;
        tcp_unlink(t->unex_next, &p->unex_head, &p->unex_tail, prev, u);
        return u;
    }
    return -1;
}

int cs__tcp_match_unex(tp_tcp_t *t, int32_t op, int32_t u)
{
    tcp_unex_t *x = &t->unex[u];
    tcp_op_t *o = &t->ops[op];
    if (x->type == TCP_EAGER_MSG) {
        size_t n = x->len <= o->len ? x->len : o->len;
        if (n)
            memcpy(o->buf, t->unex_data + (size_t)x->slot * TCP_EAGER, n);
        t->free_slot[t->nfree_slot++] = x->slot;
        cs__tcp_complete(t, op, x->len <= o->len ? CS_OK : CS_ERR_RANGE, n);
    } else {
        cs__tcp_send_cts(t, op, x->c1, x->c2, x->len);
    }
    t->unex_next[u] = t->free_unex;
    t->free_unex = u;
    return CS_OK;
}

/* First posted receive of peer with tag, removed from the list; or -1. */
static int32_t posted_take(tp_tcp_t *t, tcp_peer_t *p, uint64_t tag)
{
    int32_t prev = -1;
    for (int32_t i = p->posted.head; i >= 0; prev = i, i = t->ops[i].next) {
        if (t->ops[i].tag != tag)
            continue;
        if (prev >= 0)
            t->ops[prev].next = t->ops[i].next;
        else
            p->posted.head = t->ops[i].next;
        if (p->posted.tail == i)
            p->posted.tail = prev;
        return i;
    }
    return -1;
}

static void unex_append(tp_tcp_t *t, tcp_peer_t *p, int32_t u)
{
    t->unex_next[u] = -1;
    if (p->unex_tail >= 0)
        t->unex_next[p->unex_tail] = u;
    else
        p->unex_head = u;
    p->unex_tail = u;
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
        if (op < 0 && (t->nfree_slot == 0 || t->free_unex < 0))
            return 0;
        p->rseq++;
        if (op >= 0) {
            tcp_op_t *o = &t->ops[op];
            o->state = OPS_READING;
            o->msg_len = h->len;
            p->rop = op;
            p->rdst = o->buf;
            p->rkeep = h->len <= o->len ? h->len : o->len;
        } else { /* a slot and a record are free (checked above) */
            int32_t u = t->free_unex;
            t->free_unex = t->unex_next[u];
            tcp_unex_t *x = &t->unex[u];
            x->type = TCP_EAGER_MSG, x->tag = h->tag, x->len = h->len;
            x->slot = t->free_slot[--t->nfree_slot];
            p->runex = u;
            p->rdst = t->unex_data + (size_t)x->slot * TCP_EAGER;
            p->rkeep = h->len <= TCP_EAGER ? h->len : TCP_EAGER;
        }
        break;
    }
    case TCP_RTS: {
        int32_t op = posted_take(t, p, h->tag);
        if (op < 0 && t->free_unex < 0)
            return 0;
        p->rseq++;
        if (op >= 0) {
            cs__tcp_send_cts(t, op, h->c1, h->c2, h->len);
        } else {
            int32_t u = t->free_unex;
            t->free_unex = t->unex_next[u];
            tcp_unex_t *x = &t->unex[u];
            x->type = TCP_RTS, x->tag = h->tag, x->len = h->len, x->c1 = h->c1, x->c2 = h->c2;
            x->slot = -1;
            unex_append(t, p, u);
        }
        return 1;
    }
    case TCP_CTS:
        cs__tcp_on_cts(t, peer, h);
        return 1;
    case TCP_RTR:
        cs__tcp_on_rtr(t, peer, h);
        return 1;
    case TCP_DDATA: /* for the receive that sent an RTR, still first of its tag: the
                       DATA chunks behind it fill it */
        p->rseq++;
        if (h->c2 < (uint32_t)t->nops) {
            tcp_op_t *o = &t->ops[h->c2];
            if (o->state == OPS_POSTED && o->gen == h->aux && o->peer == peer &&
                o->tag == h->tag && cs__tcp_fifo_remove(t->ops, &p->posted, (int32_t)h->c2)) {
                o->state = OPS_DATA_WAIT;
                o->msg_len = h->len;
                o->got = 0;
            }
        }
        return 1; /* cancelled meanwhile: its DATA is read and dropped */
    case TCP_DATA: /* a chunk of a message, at offset tag */
        if (h->c2 < (uint32_t)t->nops) {
            tcp_op_t *o = &t->ops[h->c2];
            if (o->state == OPS_DATA_WAIT && o->gen == h->aux && o->peer == peer) {
                p->rop = (int32_t)h->c2;
                if (h->tag < o->len) {
                    p->rdst = o->buf + h->tag;
                    p->rkeep = h->len <= o->len - h->tag ? h->len : o->len - h->tag;
                }
            }
        }
        break; /* no such receive (cancelled): the payload is read and dropped */
    case TCP_LEAVE: /* it was interrupted: nothing more will come */
        cs__tp_peer_left(&t->base, peer, (int)h->aux);
        cs__tcp_peer_lost(t, peer, 0);
        return 1;
    default:
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
            cs__tcp_complete(t, p->rop, o->msg_len <= o->len ? CS_OK : CS_ERR_RANGE,
                             o->msg_len <= o->len ? o->msg_len : o->len);
    } else if (p->rop >= 0) {
        tcp_op_t *o = &t->ops[p->rop];
        cs__tcp_complete(t, p->rop, len <= o->len ? CS_OK : CS_ERR_RANGE, p->rkeep);
    } else if (p->runex >= 0) {
        /* a receive posted while the payload was coming takes it now */
        int32_t op = posted_take(t, p, p->rhdr.tag);
        if (op >= 0)
            cs__tcp_match_unex(t, op, p->runex);
        else
            unex_append(t, p, p->runex);
    }
    p->rstate = RS_HDR;
    p->rgot = 0;
}

void cs__tcp_read_peer(tp_tcp_t *t, int peer)
{
    tcp_peer_t *p = &t->peers[peer];
    char sink[4096];
    while (!p->dead) {
        ssize_t k;
        if (p->rstate == RS_HDR && p->rgot == sizeof(tcp_hdr_t)) {
            if (!on_header(t, peer)) {
                /* no room for an unexpected message: read no more from this
                 * peer until a receive takes one (back pressure through TCP),
                 * but look (taking nothing) whether it is gone */
                t->stalled = 1;
                k = recv(p->fd, sink, 1, MSG_PEEK | MSG_DONTWAIT);
                if (k == 0)
                    cs__tcp_peer_lost(t, peer, 0);
                else if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                    cs__tcp_peer_lost(t, peer, errno);
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
        if (k == 0) {
            cs__tcp_peer_lost(t, peer, 0);
            return;
        }
        if (k < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                cs__tcp_peer_lost(t, peer, errno);
            return;
        }
        p->rgot += (size_t)k;
        if (p->rstate == RS_PAYLOAD && p->rgot == p->rhdr.len)
            on_payload(t, p);
    }
}

int cs__tcp_progress(tp_tcp_t *t)
{
    int P = t->base.nranks, me = t->base.rank;
    for (int r = 0; r < P; r++)
        if (t->peers[r].whead >= 0 || t->peers[r].chead >= 0)
            cs__tcp_write_peer(t, r);
    int all = t->epfd < 0 || t->stalled;
    t->stalled = 0;
    if (all) {
        for (int r = 0; r < P; r++)
            if (r != me && !t->peers[r].dead)
                cs__tcp_read_peer(t, r);
        return CS_OK;
    }
    struct epoll_event ev[32];
    int n = epoll_wait(t->epfd, ev, 32, 0);
    if (n < 0 && errno != EINTR)
        return CS_ERR_TRANSPORT;
    for (int i = 0; i < n; i++)
        cs__tcp_read_peer(t, (int)ev[i].data.u32);
    return CS_OK;
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
         * frame: its current chunk only) */
        int32_t keep = p->whead >= 0 && t->frames[p->whead].off > 0 ? p->whead : -1;
        int32_t ckeep = p->chead >= 0 && t->frames[p->chead].off > 0 ? p->chead : -1;
        if (keep >= 0) {
            int32_t rest = t->frame_next[keep], tail = p->wtail;
            t->frame_next[keep] = -1;
            p->wtail = keep;
            t->frames[keep].total = t->frames[keep].sent + t->frames[keep].hdr.len;
            if (rest >= 0)
                tcp_free_list(t->frame_next, &t->free_frame, &rest, &tail);
        } else {
            tcp_free_list(t->frame_next, &t->free_frame, &p->whead, &p->wtail);
        }
        if (ckeep >= 0) {
            int32_t rest = t->frame_next[ckeep], tail = p->ctail;
            t->frame_next[ckeep] = -1;
            p->ctail = ckeep;
            if (rest >= 0)
                tcp_free_list(t->frame_next, &t->free_frame, &rest, &tail);
        } else {
            tcp_free_list(t->frame_next, &t->free_frame, &p->chead, &p->ctail);
        }
        int32_t f = t->free_frame;
        if (f < 0)
            continue;
        t->free_frame = t->frame_next[f];
        tcp_frame_t *fr = &t->frames[f];
        memset(fr, 0, sizeof(*fr));
        fr->hdr.type = TCP_LEAVE;
        fr->hdr.aux = (uint32_t)sig;
        fr->op = -1;
        t->frame_next[f] = -1;
        if (p->ctail >= 0)
            t->frame_next[p->ctail] = f;
        else
            p->chead = f;
        p->ctail = f;
    }
    double deadline = now_s() + 0.1;
    for (;;) {
        int pending = 0;
        for (int r = 0; r < P; r++)
            if (r != me && !t->peers[r].dead &&
                (t->peers[r].whead >= 0 || t->peers[r].chead >= 0)) {
                cs__tcp_write_peer(t, r);
                pending += t->peers[r].whead >= 0 || t->peers[r].chead >= 0;
            }
        if (!pending || now_s() > deadline)
            break;
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    for (int r = 0; r < P; r++) /* the peers read the LEAVE, then the end of the stream */
        if (r != me && !t->peers[r].dead && t->peers[r].fd >= 0)
            shutdown(t->peers[r].fd, SHUT_WR);
}
