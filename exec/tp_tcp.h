/*
 * tp_tcp.h - internals shared by the two files of the native TCP transport
 * (protocol and posting in tp_tcp.c; sockets, connection set-up and the
 * reading side in tp_tcp_net.c).  Not a public header: the engine sees only
 * cs_tp_tcp_open (cs_transport.h).
 */
#ifndef TP_TCP_H
#define TP_TCP_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "cs_transport.h"

#define TCP_EAGER (64u << 10)  /* largest message sent without a handshake */
#define TCP_OPS 4096           /* operations in flight per rank */
#define TCP_UNEX_SLOTS 64      /* unexpected EAGER payloads buffered (x TCP_EAGER bytes) */
#define TCP_UNEX_RECS 4096     /* unexpected messages (EAGER or RTS) remembered */
#define TCP_EPOLL_MIN 8        /* from this many peers on, poll reads through epoll */
#define TCP_RTR_RECS 4096      /* receivers' RTRs waiting for their send */
#define TCP_HIST 64            /* messages per peer remembered for matching RTRs (2^k) */
#define TCP_CHUNK (256u << 10) /* DATA goes in frames of at most this many bytes: a control
                                  frame (CTS, RTR) waits for one chunk, not a whole message */
#ifndef TCP_NOTSENT
#define TCP_NOTSENT (128 << 10)
#endif
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

typedef struct tcp_op {
    cs_tp_req_t *req;
    char *buf;
    size_t len;     /* send: message bytes; receive: capacity */
    size_t msg_len; /* receive: the message's bytes */
    size_t got;     /* receive by DATA chunks: bytes arrived so far */
    uint64_t tag;
    int32_t peer, next;
    uint32_t gen;
    uint8_t is_send, state, pad_[2];
} tcp_op_t;

typedef struct tcp_fifo {
    int32_t head, tail;
} tcp_fifo_t;

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
    int fd;
    int dead;
    int lost_read;              /* writing failed: what it sent before is being read */
    int32_t whead, wtail;       /* message frames to write (EAGER, RTS, DDATA, DATA) */
    int32_t chead, ctail;       /* control frames to write (CTS, RTR, LEAVE): they go
                                 * first, between two chunks of a DATA frame */
    tcp_fifo_t posted;          /* receives not matched yet */
    tcp_fifo_t self_sends;      /* self only: sends not matched yet */
    int32_t unex_head, unex_tail; /* unexpected messages, arrival order */
    int32_t rtr_head, rtr_tail;   /* RTRs from this peer waiting for a send */
    uint32_t sseq;                /* message frames queued to the peer */
    uint32_t rseq;                /* message headers read from the peer */
    tcp_sent_t *hist;             /* the last TCP_HIST message frames queued */
    /* reading */
    int rstate;
    size_t rgot;       /* bytes of the header or payload read so far */
    tcp_hdr_t rhdr;
    char *rdst;        /* payload destination (NULL: discard) */
    size_t rkeep;      /* bytes of the payload that fit rdst */
    int32_t rop;       /* receive op the payload completes, or -1 */
    int32_t runex;     /* unexpected record the payload fills, or -1 */
} tcp_peer_t;

typedef struct tp_tcp {
    cs_tp_t base; /* first member */
    int listen_fd, epfd, ready;
    int left; /* leave was called */
    double setup_s; /* connection set-up limit (cfg->timeout_s, default 60 s) */
    tcp_addr_t addr;
    size_t addr_len;
    tcp_peer_t *peers;
    tcp_op_t *ops;
    int32_t nops, free_op;
    tcp_frame_t *frames;
    int32_t *frame_next;
    int32_t nframes, free_frame;
    int32_t *done; /* ring of completed ops, recycled when poll reports them */
    uint32_t done_head, done_tail, done_mask;
    tcp_unex_t *unex;
    int32_t *unex_next;
    int32_t free_unex;
    char *unex_data; /* TCP_UNEX_SLOTS x TCP_EAGER */
    int32_t free_slot[TCP_UNEX_SLOTS];
    int32_t nfree_slot;
    int stalled; /* some connection waits for an unexpected slot */
    tcp_rtr_t *rtr;
    int32_t *rtr_next;
    int32_t free_rtr;
    tcp_sent_t *hist; /* nranks x TCP_HIST */
} tp_tcp_t;

/* Unlink k (after prev, or the head when prev < 0) from an index list. */
static inline void tcp_unlink(int32_t *next, int32_t *head, int32_t *tail, int32_t prev,
                              int32_t k)
{
    if (prev >= 0)
        next[prev] = next[k];
    else
        *head = next[k];
    if (*tail == k)
        *tail = prev;
}

/* Give the whole index list at *head back to the free list *free_head. */
static inline void tcp_free_list(int32_t *next, int32_t *free_head, int32_t *head,
                                 int32_t *tail)
{
    for (int32_t k = *head; k >= 0;) {
        int32_t n = next[k];
        next[k] = *free_head;
        *free_head = k;
        k = n;
    }
    *head = *tail = -1;
}

/* ---- tp_tcp.c ---- */
int cs__tcp_fifo_remove(tcp_op_t *ops, tcp_fifo_t *f, int32_t i);
void cs__tcp_complete(tp_tcp_t *t, int32_t op, int status, size_t nbytes);
void cs__tcp_write_peer(tp_tcp_t *t, int peer);
int cs__tcp_send_cts(tp_tcp_t *t, int32_t recv_op, uint32_t send_op, uint32_t send_gen,
                     size_t msg_len);
void cs__tcp_on_cts(tp_tcp_t *t, int peer, const tcp_hdr_t *h);
void cs__tcp_on_rtr(tp_tcp_t *t, int peer, const tcp_hdr_t *h);
/* Return the pending RTRs of peer to the pool. */
void cs__tcp_rtr_clear(tp_tcp_t *t, int peer);

/* ---- tp_tcp_net.c ---- */
int cs__tcp_listen(tp_tcp_t *t, const char *node, cs_err_t *err);
int cs__tcp_connect_all(cs_tp_t *tp, const void *blobs, size_t slot, const size_t *lens);
void cs__tcp_sockets_close(tp_tcp_t *t);
/* Write and read every connection once; < 0 only for a broken transport. */
int cs__tcp_progress(tp_tcp_t *t);
/* leave (cs_transport.h): a LEAVE frame on every connection, written within
 * about 100 ms (a frame half written is finished first, those not started
 * are dropped). */
void cs__tcp_leave(cs_tp_t *tp, int sig);
/* Read from the connection to peer until it has nothing more. */
void cs__tcp_read_peer(tp_tcp_t *t, int peer);
/* The connection to peer broke (errno err): fail everything involving it. */
void cs__tcp_peer_lost(tp_tcp_t *t, int peer, int err);
/* First unexpected message from peer with tag, or -1. */
int32_t cs__tcp_unex_find(tp_tcp_t *t, int peer, uint64_t tag);
/* Receive op meets unexpected record u (removed from its list). */
int cs__tcp_match_unex(tp_tcp_t *t, int32_t op, int32_t u);

#endif /* TP_TCP_H */
