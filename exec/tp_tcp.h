/*
 * tp_tcp.h - internals shared by the files of the native TCP transport.
 * Not a public header: the engine sees only cs_tp_tcp_open
 * (cs_transport.h).  Protocol overview in tp_tcp.c.
 *
 *   tp_tcp.c       the ops table: open, close, post (isend / irecv), poll,
 *                  cancel; progress over every connection
 *   tp_tcp_recv.c  receive and match: reading frames, matching messages
 *                  with receives (posted and unexpected), RTR and CTS
 *                  decisions of the receiver, messages to oneself
 *   tp_tcp_send.c  post and write: frame queues, writing, the sender's
 *                  side of RTS / CTS / RTR, LEAVE
 *   tp_tcp_conn.c  connection management: listening, the all-pairs set-up,
 *                  closing, losing a peer
 *
 * Calls between files go one way: tp_tcp.c -> recv, send, conn; recv ->
 * send, conn; send and conn call no other file.  What all need (completing
 * an operation) is inline below.
 * A failed write only records the error (tcp_peer_t.werr); the progress
 * loop of tp_tcp.c reads what the peer sent before it went and then
 * declares it lost.
 */
#ifndef TP_TCP_H
#define TP_TCP_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "cs_transport.h"
#include "tp_util.h"

#define TCP_EAGER (64u << 10) /* largest message sent without a handshake: below it the
                                 round trip costs more than the receiver's copy */
#define TCP_OPS 4096          /* operations in flight per rank (the engine posts at most a
                                 schedule's steps of one run) */
#define TCP_UNEX_SLOTS 64     /* unexpected EAGER payloads buffered (x TCP_EAGER: 4 MiB) */
#define TCP_UNEX_RECS 4096    /* unexpected messages (EAGER or RTS) remembered */
#define TCP_EPOLL_MIN 8       /* from this many peers on, poll reads through epoll (one
                                 recv() per peer per poll costs more above it) */
#define TCP_RTR_RECS 4096     /* receivers' RTRs waiting for their send */
#define TCP_HIST 64           /* messages per peer remembered for matching RTRs (2^k) */
#define TCP_CHUNK (256u << 10) /* DATA goes in frames of at most this many bytes, each with
                                  its header: a message's writing can be cut short between
                                  two (leave); 32 bytes per chunk cost nothing measurable */
#define TCP_FRAMES_EXTRA 64   /* frames beyond two per operation and two per peer */
#define TCP_BACKLOG_EXTRA 16  /* listen() backlog beyond one per rank */
#define TCP_SLICE_MS 50       /* blocking waits look at the interrupt flag this often */
#define TCP_RETRY_US 10000    /* a refused connect (the peer not listening yet) retries
                                 after this */
#define TCP_LEAVE_S 0.1       /* leave writes its LEAVE frames for at most this long
                                 (cs_transport.h: about 100 ms) */
#define TCP_LEAVE_NAP_NS 200000 /* and sleeps this long between tries */
#define TCP_NODE "127.0.0.1" /* address bound when cfg->node is not set (one host) */
#define TCP_SETUP_S 60.0      /* connection set-up limit when cfg->timeout_s is not set */
#define TCP_EPOLL_BATCH 32    /* events taken per epoll_wait */
#define TCP_SINK 4096         /* bytes of a dropped payload read per recv() */
#define TCP_EV_CTL (1u << 31) /* epoll data: the event is the control connection's */
#define TCP_MAGIC 0x3250435453430000ull /* "CSTCP2": bump when the framing changes */

enum { TCP_EAGER_MSG = 1, TCP_RTS, TCP_CTS, TCP_DATA, TCP_RTR, TCP_DDATA, TCP_LEAVE };

/* Every frame starts with this; EAGER and DATA carry `len` payload bytes. */
typedef struct tcp_hdr {
    uint32_t type;
    uint32_t c1;  /* RTS: sender op; CTS: sender op; RTR: receiver op */
    uint32_t c2;  /* RTS: sender op generation; CTS, DATA, DDATA: receiver op;
                     RTR: receiver op generation */
    uint32_t aux; /* CTS: sender op generation; DATA, DDATA: receiver op generation;
                     RTR: messages the receiver had read from the sender;
                     LEAVE: the signal the sender was interrupted by */
    uint64_t tag; /* EAGER, RTS, RTR, DDATA; DATA: offset of its bytes in the message */
    uint64_t len; /* EAGER, RTS, DDATA: message bytes; DATA: bytes of this chunk;
                     CTS: receiver op generation; RTR: the receive's capacity */
} tcp_hdr_t;

/* The address blob. */
typedef struct tcp_addr {
    uint64_t magic;
    int32_t rank, nranks;
    struct sockaddr_storage sa;
    uint32_t salen, pad_;
} tcp_addr_t;

enum { OPS_FREE = 0, OPS_POSTED, OPS_SELF, OPS_SENDING, OPS_RTS, OPS_DATA_WAIT, OPS_READING, OPS_DONE };

/* An operation (pool t->opool: its link and generation live there). */
typedef struct tcp_op {
    uint64_t tag;   /* first: the key of matching (cs_tp_fifo_take) */
    cs_tp_req_t *req;
    char *buf;
    size_t len;     /* send: message bytes; receive: capacity */
    size_t msg_len; /* receive: the message's bytes */
    size_t got;     /* receive by DATA chunks: bytes arrived so far */
    int32_t peer;
    uint8_t is_send, state, pad_[2];
} tcp_op_t;

/* A frame waiting to be written (header copied, payload by reference).  A
 * DATA frame goes out as chunks of at most TCP_CHUNK bytes, each with its
 * own header (offset in hdr.tag), so control frames can pass between. */
typedef struct tcp_frame {
    tcp_hdr_t hdr;
    const char *payload; /* NULL: header only */
    size_t off;          /* bytes of header + payload of this chunk written */
    size_t sent;         /* DATA: payload bytes of earlier chunks */
    size_t total;        /* DATA: payload bytes of the whole message */
    int32_t op;          /* send op completed when the frame is out, or -1 */
} tcp_frame_t;

/* An RTR whose send was not posted yet (pending at the sender). */
typedef struct tcp_rtr {
    uint64_t tag, cap;
    uint32_t op, gen;
} tcp_rtr_t;

/* A message frame queued to a peer (EAGER, RTS or DDATA), by sequence. */
typedef struct tcp_sent {
    uint64_t tag;
    int32_t op;   /* the send op */
    uint32_t gen; /* its generation */
} tcp_sent_t;

/* A message that arrived before its receive was posted. */
typedef struct tcp_unex {
    uint64_t tag, len;
    uint32_t type, c1, c2;
    int32_t slot; /* EAGER: payload slot */
} tcp_unex_t;

/* Reading state of a connection. */
enum { RS_HDR = 0, RS_PAYLOAD };

typedef struct tcp_peer {
    int fd;                  /* message connection: EAGER, RTS, DDATA, DATA */
    int cfd;                 /* control connection: CTS, RTR, LEAVE (see tp_tcp.c) */
    int dead;
    int werr;                /* errno of a failed write, not dealt with yet */
    cs_tp_fifo_t wq;         /* message frames to write on fd */
    cs_tp_fifo_t cq;         /* control frames to write on cfd */
    cs_tp_fifo_t posted;     /* receives not matched yet */
    cs_tp_fifo_t self_sends; /* self only: sends not matched yet */
    cs_tp_fifo_t unex;       /* unexpected messages, arrival order */
    cs_tp_fifo_t rtrs;       /* RTRs from this peer waiting for a send */
    uint32_t sseq;           /* message frames queued to the peer */
    uint32_t rseq;           /* message headers read from the peer */
    tcp_sent_t *hist;        /* the last TCP_HIST message frames queued */
    /* reading */
    int rstate;
    size_t rgot;    /* bytes of the header or payload read so far */
    tcp_hdr_t rhdr; /* a whole header in RS_HDR: held, no room for its message yet */
    char *rdst;     /* payload destination (NULL: discard) */
    size_t rkeep;   /* bytes of the payload that fit rdst */
    int32_t rop;    /* receive op the payload completes, or -1 */
    int32_t runex;  /* unexpected record the payload fills, or -1 */
    /* reading the control connection (headers only) */
    size_t cgot;
    tcp_hdr_t chdr;
    int cdone;      /* it ended (EOF or an error): the message connection says how */
} tcp_peer_t;

typedef struct tp_tcp {
    cs_tp_t base; /* first member */
    int listen_fd, epfd, ready;
    int left;       /* leave was called */
    double setup_s; /* connection set-up limit (cfg->timeout_s, default TCP_SETUP_S) */
    int ctl_tos;    /* CS_TCP_CONTROL_TOS for the control connections, -1: unset */
    tcp_addr_t addr;
    size_t addr_len;
    tcp_peer_t *peers;
    tcp_op_t *ops;
    cs_tp_pool_t opool;
    cs_tp_ring_t done; /* completed ops, recycled when poll reports them */
    tcp_frame_t *frames;
    cs_tp_pool_t fpool;
    tcp_unex_t *unex;  /* records of upool.recs */
    cs_tp_unex_t upool;
    int stalled;       /* some connection holds a header the pool has no room for */
    tcp_rtr_t *rtr;
    cs_tp_pool_t rpool;
    tcp_sent_t *hist;  /* nranks x TCP_HIST */
} tp_tcp_t;

/* The generation of op i (see tp_util.h: bumped when it is recycled). */
static inline uint32_t tcp_gen(const tp_tcp_t *t, int32_t i)
{
    return t->opool.gen[i];
}

/* The operation is over: its request goes to the done ring, and the op is
 * recycled when poll hands the request out (so completed operations never
 * outnumber the ring).  An op without request (a post that could not be
 * queued) is recycled at once. */
static inline void tcp_complete(tp_tcp_t *t, int32_t i, int status, size_t nbytes)
{
    tcp_op_t *o = &t->ops[i];
    if (!o->req) {
        o->state = OPS_FREE;
        cs_tp_pool_put(&t->opool, i);
        return;
    }
    o->req->status = status;
    o->req->nbytes = nbytes;
    o->state = OPS_DONE;
    cs_tp_ring_push(&t->done, i);
}

/* Fail every op of FIFO f (linked through the op pool) with CS_ERR_PEER. */
static inline void tcp_fail_fifo(tp_tcp_t *t, cs_tp_fifo_t *f)
{
    for (int32_t i; (i = cs_tp_fifo_pop(f, t->opool.next)) >= 0;)
        tcp_complete(t, i, CS_ERR_PEER, 0);
}

/* ---- tp_tcp_recv.c ---- */
/* Read from the message connection to peer until it has nothing more. */
void cs__tcp_read_peer(tp_tcp_t *t, int peer);
/* The same for its control connection. */
void cs__tcp_read_ctl(tp_tcp_t *t, int peer);
/* Post receive op i (taken, request set): match an unexpected message, or
 * queue it (with an RTR when the rule holds).  CS_OK. */
int cs__tcp_post_recv(tp_tcp_t *t, int32_t i);
/* Self messages: sends and receives of the same tag meet in memory. */
void cs__tcp_self_match(tp_tcp_t *t);

/* ---- tp_tcp_send.c ---- */
/* Post send op i (taken, request set) to a live peer other than self.
 * CS_OK, or CS_AGAIN when no frame is free (the op is recycled). */
int cs__tcp_post_send(tp_tcp_t *t, int32_t i);
/* Queue a frame to peer (control frames on the control list; DATA in
 * chunks); CS_AGAIN when no frame is free. */
int cs__tcp_frame_queue(tp_tcp_t *t, int peer, const tcp_hdr_t *h, const char *payload,
                        int32_t op);
/* Write what the socket takes; completes sends whose frame is out.  A
 * failure is left in peer->werr. */
void cs__tcp_write_peer(tp_tcp_t *t, int peer);
/* Answer an RTS matched by receive op recv_op: CTS.  A peer lost since its
 * RTS was read fails the receive with CS_ERR_PEER. */
int cs__tcp_send_cts(tp_tcp_t *t, int32_t recv_op, uint32_t send_op, uint32_t send_gen,
                     size_t msg_len);
void cs__tcp_on_cts(tp_tcp_t *t, int peer, const tcp_hdr_t *h);
void cs__tcp_on_rtr(tp_tcp_t *t, int peer, const tcp_hdr_t *h);
/* leave (cs_transport.h): a LEAVE frame on every connection, written within
 * TCP_LEAVE_S (a frame half written is finished first, those not started
 * are dropped). */
void cs__tcp_leave(cs_tp_t *tp, int sig);

/* ---- tp_tcp_conn.c ---- */
int cs__tcp_listen(tp_tcp_t *t, const char *node, cs_err_t *err);
int cs__tcp_connect_all(cs_tp_t *tp, const void *blobs, size_t slot, const size_t *lens);
void cs__tcp_sockets_close(tp_tcp_t *t);
/* The connection to peer broke (errno err, 0: end of stream): fail
 * everything involving it. */
void cs__tcp_peer_lost(tp_tcp_t *t, int peer, int err);

#endif /* TP_TCP_H */
