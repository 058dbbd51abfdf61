/*
 * tp_tcp_conn.c - connection management of the native TCP transport:
 * listening, the all-pairs set-up (rank r connects to every rank below it
 * and accepts the connections of every rank above, each side saying hello
 * with its rank, the job's size and which of the pair's two connections it
 * is: messages or control), socket options, closing, losing a peer.  Protocol overview in tp_tcp.c; calls no other file of it.
 */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
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

/* The address of network interface `name` (port 0, as getifaddrs gives
 * it): its first IPv4
 * address, else its first IPv6 address that is not link-local (a
 * link-local one would need a scope on every peer).  1 when found. */
static int iface_addr(const char *name, struct sockaddr_storage *ss, socklen_t *len)
{
    struct ifaddrs *all, *i;
    int found = 0;
    if (getifaddrs(&all) != 0)
        return 0;
    static const int fams[2] = {AF_INET, AF_INET6};
    for (int f = 0; f < 2 && !found; f++) {
        for (i = all; i && !found; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != fams[f] || strcmp(i->ifa_name, name) != 0)
                continue;
            if (fams[f] == AF_INET) {
                memcpy(ss, i->ifa_addr, sizeof(struct sockaddr_in));
                *len = sizeof(struct sockaddr_in);
                found = 1;
            } else if (!IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr)) {
                memcpy(ss, i->ifa_addr, sizeof(struct sockaddr_in6));
                *len = sizeof(struct sockaddr_in6);
                found = 1;
            }
        }
    }
    freeifaddrs(all);
    return found;
}

int cs__tcp_listen(tp_tcp_t *t, const char *node, cs_err_t *err)
{
    const char *host = node && *node ? node : TCP_NODE;
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
    } else if (!iface_addr(host, &ss, &len)) {
        return cs_err_set(err, CS_ERR_INVAL,
                          "tcp transport: '%s' is neither an IPv4 or IPv6 address nor a network "
                          "interface with one (--iface)",
                          host);
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return cs_err_set(err, CS_ERR_TRANSPORT, "tcp transport: socket: %s", strerror(errno));
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, t->base.nranks + TCP_BACKLOG_EXTRA) != 0) {
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
        int ms = (int)((deadline - cs_now_s()) * 1e3), pr;
        if (cs_intr_pending())
            return CS_ERR_INTERRUPTED;
        if (ms <= 0)
            return CS_ERR_TIMEOUT;
        if ((pr = poll(&pf, 1, ms < TCP_SLICE_MS ? ms : TCP_SLICE_MS)) <= 0) {
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
    int32_t ctl, pad_; /* 1: the control connection, 0: the message one */
} hello_t;

/* The message (ctl 0) or control (ctl 1) connection to peer. */
static int *conn_fd(tp_tcp_t *t, int peer, int ctl)
{
    return ctl ? &t->peers[peer].cfd : &t->peers[peer].fd;
}

static int connect_to(tp_tcp_t *t, int peer, const tcp_addr_t *a, int ctl, double deadline)
{
    for (;;) {
        int fd = socket(a->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return CS_ERR_TRANSPORT;
        if (connect(fd, (const struct sockaddr *)&a->sa, a->salen) == 0) {
            hello_t h = {TCP_MAGIC, t->base.rank, t->base.nranks, ctl, 0};
            int st = io_full(fd, &h, sizeof(h), 1, deadline);
            if (st != CS_OK) {
                close(fd);
                if (st == CS_ERR_INTERRUPTED)
                    why(t, "interrupted (%s)", cs_intr_signame(cs_intr_pending()));
                return st;
            }
            *conn_fd(t, peer, ctl) = fd;
            return CS_OK;
        }
        int e = errno;
        close(fd);
        if (cs_intr_pending()) {
            why(t, "interrupted (%s)", cs_intr_signame(cs_intr_pending()));
            return CS_ERR_INTERRUPTED;
        }
        if ((e != ECONNREFUSED && e != EINTR && e != EAGAIN) || cs_now_s() > deadline) {
            why(t, "tcp transport: cannot connect to rank %d: %s", peer, strerror(e));
            return e == ECONNREFUSED ? CS_ERR_PEER : CS_ERR_TRANSPORT;
        }
        usleep(TCP_RETRY_US);
    }
}

static int accept_one(tp_tcp_t *t, double deadline)
{
    struct pollfd pf = {.fd = t->listen_fd, .events = POLLIN};
    int ms = (int)((deadline - cs_now_s()) * 1e3);
    if (cs_intr_pending())
        return CS_ERR_INTERRUPTED;
    if (ms <= 0)
        return CS_ERR_TIMEOUT;
    if (poll(&pf, 1, ms < TCP_SLICE_MS ? ms : TCP_SLICE_MS) <= 0)
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
        h.rank <= t->base.rank || h.rank >= t->base.nranks || (h.ctl != 0 && h.ctl != 1) ||
        *conn_fd(t, h.rank, h.ctl) >= 0) {
        CS_WARN("exec", "tcp transport: rank %d: refused a connection (not a rank above it "
                "of this job)", t->base.rank);
        close(fd);
        return CS_AGAIN; /* a stray connection: keep waiting for the real ones */
    }
    *conn_fd(t, h.rank, h.ctl) = fd;
    return CS_OK;
}

/* A connection's options: no Nagle, non-blocking; a control connection
 * also gets CS_TCP_CONTROL_TOS (IP_TOS, or IPV6_TCLASS on IPv6) where set,
 * so that a fabric with priority queues sends CTS / RTR / LEAVE ahead of
 * the data queued on the same links (its acknowledgements carry it too). */
static int tune(tp_tcp_t *t, int fd, int ctl)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (ctl && t->ctl_tos >= 0) {
        /* the socket's family (a peer's address picks it for connections
         * this rank made), else this rank's own; an IPv6 socket may carry
         * IPv4 (::ffff:a.b.c.d), whose packets take IP_TOS */
        int dom = 0;
        socklen_t dl = sizeof(dom);
        if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &dl) != 0)
            dom = t->addr.sa.ss_family;
        int v6 = dom == AF_INET6;
        int st = v6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &t->ctl_tos, sizeof(int))
                    : setsockopt(fd, IPPROTO_IP, IP_TOS, &t->ctl_tos, sizeof(int));
        if (st != 0) {
            why(t, "tcp transport: cannot set CS_TCP_CONTROL_TOS=%d on a control connection: %s",
                t->ctl_tos, strerror(errno));
            return CS_ERR_TRANSPORT;
        }
        if (v6) /* best effort: a pure IPv6 connection has no IPv4 header to mark */
            (void)setsockopt(fd, IPPROTO_IP, IP_TOS, &t->ctl_tos, sizeof(int));
    }
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
    double deadline = cs_now_s() + t->setup_s;
    for (int r = 0; r < me; r++)
        for (int ctl = 0; ctl < 2; ctl++) {
            int st = connect_to(t, r,
                                (const tcp_addr_t *)((const char *)blobs + (size_t)r * slot),
                                ctl, deadline);
            if (st != CS_OK)
                return st;
        }
    for (int left = 2 * (P - 1 - me); left > 0;) {
        int st = accept_one(t, deadline);
        if (st == CS_OK)
            left--;
        else if (st == CS_ERR_INTERRUPTED) {
            why(t, "interrupted (%s)", cs_intr_signame(cs_intr_pending()));
            return st;
        } else if (st != CS_AGAIN) {
            why(t, "tcp transport: %d connection(s) from the ranks above rank %d never came "
                "within %.0f s", left, me, t->setup_s);
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
        for (int ctl = 0; ctl < 2; ctl++) {
            int fd = *conn_fd(t, r, ctl);
            if (tune(t, fd, ctl) != CS_OK)
                return CS_ERR_TRANSPORT;
            struct epoll_event ev = {.events = EPOLLIN,
                                     .data.u32 = (uint32_t)r | (ctl ? TCP_EV_CTL : 0)};
            if (t->epfd >= 0 && epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
                return CS_ERR_TRANSPORT;
        }
    }
    t->ready = 1;
    return CS_OK;
}

void cs__tcp_sockets_close(tp_tcp_t *t)
{
    for (int r = 0; t->peers && r < t->base.nranks; r++) {
        if (t->peers[r].fd >= 0)
            close(t->peers[r].fd);
        if (t->peers[r].cfd >= 0)
            close(t->peers[r].cfd);
    }
    if (t->listen_fd >= 0)
        close(t->listen_fd);
    if (t->epfd >= 0)
        close(t->epfd);
}

void cs__tcp_peer_lost(tp_tcp_t *t, int peer, int err)
{
    tcp_peer_t *p = &t->peers[peer];
    if (p->dead)
        return;
    p->dead = 1;
    CS_DEBUG("exec", "tcp transport: rank %d lost rank %d (%s)", t->base.rank, peer,
             err ? strerror(err) : "end of stream");
    for (int ctl = 0; ctl < 2; ctl++) {
        int *fd = conn_fd(t, peer, ctl);
        if (t->epfd >= 0)
            epoll_ctl(t->epfd, EPOLL_CTL_DEL, *fd, NULL);
        close(*fd);
        *fd = -1;
    }
    /* frames not written: their sends fail below with the other ops */
    cs_tp_fifo_release(&p->wq, &t->fpool);
    cs_tp_fifo_release(&p->cq, &t->fpool);
    if (p->rstate == RS_PAYLOAD && p->runex >= 0) { /* half-read unexpected message */
        if (t->unex[p->runex].slot >= 0)
            cs_tp_unex_slot_put(&t->upool, t->unex[p->runex].slot);
        cs_tp_pool_put(&t->upool.recs, p->runex);
    }
    p->rstate = RS_HDR;
    p->rgot = 0;
    cs_tp_fifo_release(&p->rtrs, &t->rpool);
    tcp_fail_fifo(t, &p->posted);
    for (int32_t i = 0; i < t->opool.n; i++) {
        tcp_op_t *o = &t->ops[i];
        if (o->peer == peer && (o->state == OPS_SENDING || o->state == OPS_RTS ||
                                o->state == OPS_DATA_WAIT || o->state == OPS_READING))
            tcp_complete(t, i, CS_ERR_PEER, 0);
    }
}
