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
 * Files (tp_tcp.h): this one is the ops table; tp_tcp_conn.c manages the
 * connections, tp_tcp_recv.c receives and matches, tp_tcp_send.c posts
 * and writes.
 *
 * Connections.  open() binds a listening socket to cfg->node (an IPv4 or
 * IPv6 literal, default 127.0.0.1) on an ephemeral port; the address blob
 * is that socket's address.  insert_addrs() connects rank r to every rank
 * below it and accepts the connections of every rank above, two per pair
 * (messages and control, below; each side sends a hello with its rank, the
 * job's nranks and which one it is), all within cfg->timeout_s
 * (TCP_SETUP_S by default); then every socket is non-blocking with
 * TCP_NODELAY.
 *
 * Frames (tcp_hdr_t, then a payload for EAGER and DATA):
 *   EAGER  tag, len + payload          message <= TCP_EAGER
 *   RTS    tag, len, c1 = sender op    larger message: ready to send
 *   CTS    c1 = sender op, c2 = receiver op   the receive is posted (control)
 *   DATA   c2 = receiver op, tag = offset, len + payload   a chunk of at most
 *          TCP_CHUNK bytes, lands straight in the buffer
 *   RTR    tag, c1 = receiver op, aux = messages read   ready to receive (control)
 *   DDATA  tag, c2 = receiver op, len   a message sent on an RTR: DATA follows
 *   LEAVE  aux = signal      the sender was interrupted and leaves the job (control)
 * A receive matches the first message of its (peer, tag) in arrival order,
 * which is sending order: TCP keeps order on the message connection.  Everything that
 * arrives is read at once (tp_tcp_recv.c): an EAGER message nobody waits
 * for is copied into one of TCP_UNEX_SLOTS slots of a pool allocated at
 * open, an RTS nobody waits for is remembered; only when that pool is full
 * does a connection hold the header of such a message and stop reading
 * until a receive takes one (back pressure through TCP, nothing dropped).
 * Large messages cost no copy on either side and, without RTR, one round
 * trip more.
 *
 * RTR.  The RTS / CTS round trip costs a latency per large message (and
 * before the control connection, it serialised the two directions: a
 * 2-rank ring of 1 MiB spent 40 % of its time so).  So
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
 * Two directions at once: the control connection.  CTS, RTR and LEAVE go
 * on a second connection of the pair, never behind this rank's messages.
 * On one connection, a receive posted after its RTS arrived (the engine
 * posts a plain receive once its dependencies are done) answered with a
 * CTS that waited behind this rank's own large message to the same peer:
 * in the write queue, and then in the kernel's socket buffer and the
 * NIC's queue (megabytes: a second of data on a slow link), so the two
 * directions of an exchange ran one after the other.  Chunking the data
 * and capping the unsent bytes (TCP_NOTSENT_LOWAT) helped that exchange
 * but slowed every large message whenever the sender did not get the CPU
 * often enough to keep the socket fed; a connection of its own costs one
 * socket per pair and nothing on the data path.  Measured on the emulated
 * cluster: docs/transports.md.
 *
 * Sends complete once the kernel has the whole frame (the buffer is free
 * again); a send written entirely by the isend call itself completes
 * inline (see cs_transport.h).  Messages to oneself are matched in memory.
 *
 * Failures.  A peer that dies closes its sockets (the kernel does it):
 * reading gives EOF or ECONNRESET, writing EPIPE; every request to or from
 * that peer then completes with CS_ERR_PEER, and later posts to it too,
 * but for what it sent whole before it went: an EAGER message read in
 * full is still delivered, while an RTS read as unexpected fails the
 * receive that matches it (its DATA will never come).
 * A peer interrupted by a signal says so first (LEAVE, see leave in
 * cs_transport.h): the same, and cs_tp.left_peer names it.
 *
 * Nothing is allocated after insert_addrs: operations, frames, RTRs and
 * unexpected records come from pools sized at open (tp_util.h; a post
 * finding its pool empty returns CS_AGAIN).  Progress costs one recv() per
 * peer per poll (epoll above TCP_EPOLL_MIN peers) plus the writes pending.
 */
#include "tp_tcp.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "cs_env.h"
#include "cs_intr.h"

/* The common start of isend and irecv: check, take an op, mark the request
 * in progress.  CS_OK with *out set, CS_AGAIN (no op free) or an error. */
static int post_begin(tp_tcp_t *t, int peer, const void *buf, size_t len, uint64_t tag,
                      cs_tp_req_t *req, int32_t *out)
{
    if (!t->ready || peer < 0 || peer >= t->base.nranks || tag >> CS_TP_TAG_BITS)
        return CS_ERR_INVAL;
    int32_t i = cs_tp_pool_get(&t->opool);
    if (i < 0)
        return CS_AGAIN;
    t->ops[i] = (tcp_op_t){.req = req, .buf = (char *)buf, .len = len, .tag = tag,
                           .peer = peer};
    req->status = CS_INPROGRESS;
    req->nbytes = 0;
    *out = i;
    return CS_OK;
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
        tcp_complete(t, i, CS_ERR_PEER, 0);
        return CS_OK;
    }
    if (peer == t->base.rank) {
        o->state = OPS_SELF;
        cs_tp_fifo_push(&p->self_sends, t->opool.next, i);
        cs__tcp_self_match(t);
        return CS_OK;
    }
    if (cs__tcp_post_send(t, i) == CS_AGAIN) {
        req->status = old_status;
        return CS_AGAIN;
    }
    if (o->state == OPS_DONE && req->status == CS_OK && cs_tp_ring_unpush(&t->done, i)) {
        o->state = OPS_FREE; /* completed inline: poll will not report it */
        cs_tp_pool_put(&t->opool, i);
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
    return st != CS_OK ? st : cs__tcp_post_recv(t, i);
}

/* A write to peer failed: what it sent before it went (a LEAVE on the
 * control connection, messages) is read first, then it is lost. */
static void write_failed(tp_tcp_t *t, int peer)
{
    tcp_peer_t *p = &t->peers[peer];
    if (p->dead)
        return;
    cs__tcp_read_ctl(t, peer);
    cs__tcp_read_peer(t, peer);
    cs__tcp_peer_lost(t, peer, p->werr);
}

/* Write and read every connection once; < 0 only for a broken transport. */
static int progress(tp_tcp_t *t)
{
    int P = t->base.nranks, me = t->base.rank;
    for (int r = 0; r < P; r++) {
        tcp_peer_t *p = &t->peers[r];
        if (p->wq.head >= 0 || p->cq.head >= 0)
            cs__tcp_write_peer(t, r);
        if (p->werr)
            write_failed(t, r);
    }
    int all = t->epfd < 0 || t->stalled;
    t->stalled = 0;
    if (all) {
        for (int r = 0; r < P; r++)
            if (r != me && !t->peers[r].dead) {
                cs__tcp_read_ctl(t, r);
                cs__tcp_read_peer(t, r);
            }
    } else {
        struct epoll_event ev[TCP_EPOLL_BATCH];
        int n = epoll_wait(t->epfd, ev, TCP_EPOLL_BATCH, 0);
        if (n < 0 && errno != EINTR)
            return CS_ERR_TRANSPORT;
        for (int i = 0; i < n; i++) {
            uint32_t u = ev[i].data.u32;
            if (u & TCP_EV_CTL)
                cs__tcp_read_ctl(t, (int)(u & ~TCP_EV_CTL));
            else
                cs__tcp_read_peer(t, (int)u);
        }
    }
    for (int r = 0; r < P; r++) /* writes of the reading side (CTS, RTR) */
        if (t->peers[r].werr)
            write_failed(t, r);
    return CS_OK;
}

static int tcp_poll(cs_tp_t *tp, cs_tp_req_t **done, int max)
{
    tp_tcp_t *t = (tp_tcp_t *)tp;
    int st = progress(t);
    if (st < 0)
        return st;
    int n = 0;
    while (n < max && !cs_tp_ring_empty(&t->done)) {
        int32_t i = cs_tp_ring_pop(&t->done);
        done[n++] = t->ops[i].req;
        t->ops[i].state = OPS_FREE;
        cs_tp_pool_put(&t->opool, i);
    }
    return n;
}

static int tcp_cancel(cs_tp_t *tp, cs_tp_req_t *req)
{
    tp_tcp_t *t = (tp_tcp_t *)tp;
    for (int32_t i = 0; i < t->opool.n; i++) {
        tcp_op_t *o = &t->ops[i];
        if (o->state == OPS_FREE || o->state == OPS_DONE || o->req != req)
            continue;
        tcp_peer_t *p = &t->peers[o->peer];
        if ((o->state == OPS_POSTED && cs_tp_fifo_remove(&p->posted, t->opool.next, i)) ||
            (o->state == OPS_SELF && cs_tp_fifo_remove(&p->self_sends, t->opool.next, i)) ||
            o->state == OPS_RTS) {
            /* never matched: nothing of it is on the wire but an RTS, whose
             * CTS will find the op recycled (generation check) */
            tcp_complete(t, i, CS_ERR_TRANSPORT, 0);
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
    cs_tp_pool_fini(&t->opool);
    cs_tp_ring_fini(&t->done);
    free(t->frames);
    cs_tp_pool_fini(&t->fpool);
    free(t->unex);
    cs_tp_unex_fini(&t->upool);
    free(t->rtr);
    cs_tp_pool_fini(&t->rpool);
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
    t->setup_s = cfg->timeout_s > 0 ? cfg->timeout_s : TCP_SETUP_S;
    t->ctl_tos = -1;
    const char *tos = cs_env_get("CS_TCP_CONTROL_TOS");
    if (tos) {
        /* base 10, or 16 after an explicit 0x: not strtol's octal for 010 */
        int hex = (tos[0] == '0' && (tos[1] == 'x' || tos[1] == 'X'));
        const char *digits = hex ? tos + 2 : tos;
        char *end = NULL;
        errno = 0;
        long v = isxdigit((unsigned char)digits[0]) ? strtol(digits, &end, hex ? 16 : 10) : -1;
        if (errno || !end || end == digits || *end || v < 0 || v > 255) {
            free(t);
            return cs_err_set(err, CS_ERR_INVAL, "CS_TCP_CONTROL_TOS: expected a byte, 0 to "
                              "255 (decimal or 0x hex, e.g. 0xb8 for DSCP EF), found '%s'", tos);
        }
        t->ctl_tos = (int)v;
    }
    /* frames: a message and a DATA or CTS per op, an RTR and a LEAVE per peer */
    int32_t nframes = 2 * TCP_OPS + 2 * cfg->nranks + TCP_FRAMES_EXTRA;
    t->peers = calloc((size_t)cfg->nranks, sizeof(*t->peers));
    for (int r = 0; t->peers && r < cfg->nranks; r++) /* before tcp_close can see them */
        t->peers[r].fd = t->peers[r].cfd = -1;
    t->ops = calloc(TCP_OPS, sizeof(*t->ops));
    t->frames = calloc((size_t)nframes, sizeof(*t->frames));
    t->unex = calloc(TCP_UNEX_RECS, sizeof(*t->unex));
    t->rtr = calloc(TCP_RTR_RECS, sizeof(*t->rtr));
    t->hist = calloc((size_t)cfg->nranks * TCP_HIST, sizeof(*t->hist));
    if (!t->peers || !t->ops || !t->frames || !t->unex || !t->rtr || !t->hist ||
        cs_tp_pool_init(&t->opool, TCP_OPS) != CS_OK ||
        cs_tp_ring_init(&t->done, TCP_OPS) != CS_OK ||
        cs_tp_pool_init(&t->fpool, nframes) != CS_OK ||
        cs_tp_unex_init(&t->upool, TCP_UNEX_RECS, TCP_UNEX_SLOTS, TCP_EAGER) != CS_OK ||
        cs_tp_pool_init(&t->rpool, TCP_RTR_RECS) != CS_OK) {
        tcp_close(&t->base);
        return cs_err_set(err, CS_ERR_NOMEM, "tcp transport: out of memory for its pools");
    }
    for (int r = 0; r < cfg->nranks; r++) {
        tcp_peer_t *p = &t->peers[r];
        p->wq = p->cq = p->posted = p->self_sends = p->unex = p->rtrs = CS_TP_FIFO_EMPTY;
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
