/*
 * tp_shm.h - internals shared by the files of the shared-memory transport
 * (protocol in tp_shm.c; segments, addresses and liveness in tp_shm_seg.c;
 * large messages in tp_shm_large.c; the rings in tp_shm_ring.h; pools,
 * lists and the completion ring from tp_util.h).  Calls between files go
 * one way: tp_shm.c -> tp_shm_large.c -> tp_shm_seg.c, tp_shm.c ->
 * tp_shm_seg.c.  Not a
 * public header: the engine sees only cs_tp_shm_open (cs_transport.h).
 *
 * Segment of rank r (one memfd, mapped by every rank of the job):
 *
 *   +--------------------+  0
 *   | shm_seg_hdr_t      |  magic, nonce, layout, pid, closed
 *   | attach[nranks]     |  written by peer p once it has mapped this segment
 *   +--------------------+  inbox_off
 *   | inbox of sender 0  |  head | released | cells[ncells] | slots[nslots]
 *   | inbox of sender 1  |
 *   | ...                |  (sender r = r itself: messages to self)
 *   +--------------------+
 *
 * Everything in an inbox is read by the owner r; the cells and slots are
 * written by the sender s, `head` and `released` by the owner.  So every
 * shared word has exactly one writer.
 */
#ifndef TP_SHM_H
#define TP_SHM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cs_transport.h"
#include "tp_util.h"

#define SHM_MAGIC 0x324d48535343ull /* "CSSHM2": bump when the layout changes */
#define SHM_CELL 64                 /* one ring cell: a cache line */
#define SHM_HDR 16                  /* header bytes of a message's first cell */
#define SHM_MAX_RANKS 4096
#define SHM_PAGE 4096
#define SHM_ATTACH_OFF 256 /* attach[] starts here in the segment */

/* Message types (top 4 bits of shm_cell_t.word; bits 56..59 carry the
 * mode of an RTS, bits 0..35 the caller's tag). */
enum { MSG_EAGER = 1, MSG_RTS, MSG_FIN, MSG_CTS, MSG_DATA };
#define SHM_TYPE_SHIFT 60
#define SHM_AUX_SHIFT 56
#define SHM_AUX_MASK 15

/* The first cell of a message.  `flag` is 1 from the moment the sender
 * publishes the message (release) until the owner consumes it; the payload
 * starts at data[] and runs on through the following cells (wrapping at
 * the end of the ring) without further headers. */
typedef struct shm_cell {
    uint32_t flag;
    uint32_t len;  /* payload bytes */
    uint64_t word; /* type << SHM_TYPE_SHIFT | caller's tag */
    unsigned char data[SHM_CELL - SHM_HDR];
} shm_cell_t;

/* Control payloads (in data[] of a single cell, at most 48 bytes). */
typedef struct shm_rts {
    uint64_t len, addr;   /* message length, sender's buffer (CMA) */
    uint64_t off, rlen;   /* SHM_MAP: the buffer's offset in the sender's region, its size */
    uint32_t cookie, gen; /* sender's operation */
    uint32_t rid;         /* SHM_MAP: region id and fd in the sender (/proc/PID/fd/FD) */
    int32_t fd;
} shm_rts_t;
typedef struct shm_ctl {
    uint32_t cookie, gen; /* the operation it answers (FIN, CTS: sender's; DATA: receiver's) */
    uint32_t cookie2, gen2; /* CTS: receiver's operation */
    int32_t status;       /* FIN: receiver's status; DATA: 0, or < 0: the stream is aborted */
    uint32_t slot;        /* DATA: slot sequence number */
    uint64_t len;         /* DATA: bytes in the slot */
} shm_ctl_t;

/* Large-message modes, the sender's choice (tp_shm_large.c). */
enum { SHM_MAP = 1, SHM_CMA, SHM_BOUNCE };

/* Start of a segment. */
typedef struct shm_seg_hdr {
    uint64_t magic, nonce;
    uint32_t nranks, owner, ncells, nslots;
    uint64_t slot_bytes, eager_max, inbox_off, inbox_stride, seg_bytes;
    int32_t pid;
    uint32_t closed; /* the owner closed its transport (atomic) */
    int32_t intr;    /* the owner left because of this signal (leave; written
                      * before `closed`), -1: for another reason, 0: it did
                      * not say */
    uint32_t pad_;
} shm_seg_hdr_t;

/* Where a sender's inbox parts lie inside an inbox. */
#define SHM_INBOX_HEAD 0
#define SHM_INBOX_RELEASED 64
#define SHM_INBOX_CELLS 128

/* The address blob (get_addr): what a peer needs to map this segment and
 * check that it reached the right process on the same host. */
typedef struct shm_blob {
    uint64_t magic, nonce;
    uint64_t probe;    /* address of a word holding `nonce` (the CMA probe) */
    uint64_t seg_bytes;
    int32_t pid, fd, rank, nranks;
    char boot_id[40]; /* /proc/sys/kernel/random/boot_id: 36 characters */
    char host[64];    /* gethostname, cut (compared when there is no boot id) */
} shm_blob_t;

/* Run-time parameters, the same on every rank (derived from nranks and the
 * configuration; checked against the peers' segment headers). */
typedef struct shm_params {
    uint32_t ncells;    /* ring cells per sender (power of two) */
    uint32_t nslots;    /* bounce slots per sender */
    size_t slot;        /* bytes per bounce slot */
    size_t eager_max;   /* largest message sent inline through the ring */
    size_t slice;       /* bytes copied per request per poll (SHM_MAP, SHM_CMA) */
    int best;           /* the best mode allowed (CS_SHM_COPY): SHM_MAP, SHM_CMA or
                         * SHM_BOUNCE; a mode is used only where it works */
} shm_params_t;

/* A region of transport memory (cs_tp_mem_ops_t): a memfd of its own that
 * peers map when a message from it comes (SHM_MAP). */
typedef struct shm_region {
    char *base;
    size_t len;
    int fd;
    uint32_t id;
} shm_region_t;

/* A peer's region as mapped here (a small cache per peer). */
#define SHM_MAPS 16
typedef struct shm_map {
    char *ptr;
    size_t len;
    uint32_t id;
    int32_t fd;
} shm_map_t;

/* One posted operation (pool t->opool, which holds its link and
 * generation; cookie = index, checked with its generation). */
enum { OP_FREE = 0, OP_POSTED, OP_RTS_WAIT, OP_COPY, OP_STREAM, OP_DATA_WAIT, OP_DONE };

typedef struct shm_op {
    cs_tp_req_t *req;
    char *buf;
    size_t len;     /* send: message length; receive: buffer capacity */
    size_t msg_len; /* receive: the sender's length */
    size_t off;     /* large messages: bytes moved so far */
    uint64_t tag, raddr;
    int32_t peer;
    uint32_t rcookie, rgen;
    int32_t status;
    uint8_t is_send, state, mode, ctl; /* ctl: control message still to send (MSG_FIN/MSG_CTS) */
    uint8_t on_ctl, pad_[3];
} shm_op_t;

/* An unexpected message (a record of t->upool): an eager payload (copied
 * into slot `data`) or an RTS. */
typedef struct shm_unex {
    int32_t data;
    uint32_t type, mode;
    uint64_t tag, len; /* len: eager payload bytes */
    shm_rts_t rts;     /* MSG_RTS */
} shm_unex_t;

/* Per peer state of this rank. */
typedef struct shm_peer {
    char *seg;          /* the peer's segment (NULL for self: own segment) */
    char *out_cells;    /* my inbox in the peer's segment: where I write */
    char *out_slots;
    uint64_t *out_head, *out_released; /* the peer's consumption counters */
    char *in_cells;     /* the peer's inbox in my segment: where I read */
    char *in_slots;
    uint64_t *in_head, *in_released;
    uint64_t tail, head_cache;     /* producer side: my writes into out_cells */
    uint64_t filled, released_cache; /* producer side: bounce slots */
    uint64_t head;                 /* consumer side: position in in_cells */
    uint64_t taken;                /* consumer side: bounce slots consumed */
    cs_tp_fifo_t posted, unex, stream; /* ops, unexpected records, sends streaming */
    int32_t pid, pidfd;
    int cma;    /* this peer can read my memory (it said so in my attach[]) */
    int cma_in; /* I can read its memory (my probe) */
    int dead;   /* 1: found dead, 2: its operations failed */
    int bad;    /* its ring held a malformed message: not read any more */
    shm_map_t maps[SHM_MAPS]; /* its regions mapped here */
    uint32_t next_map;        /* the map slot to reuse next */
} shm_peer_t;

typedef struct tp_shm {
    cs_tp_t base; /* first member */
    shm_params_t prm;
    shm_seg_hdr_t *hdr; /* my segment */
    size_t seg_bytes;
    int memfd;
    uint64_t nonce, probe; /* probe: read by the peers' CMA test */
    double timeout_s;
    shm_peer_t *peers;
    shm_op_t *ops;
    cs_tp_pool_t opool;
    cs_tp_ring_t done;   /* completed operations */
    cs_tp_fifo_t copies; /* receives copying through CMA */
    int nstreams;        /* sends in state OP_STREAM */
    cs_tp_fifo_t ctl;    /* operations with a control message to send (linked through
                          * ctl_next: such an op may be on another list too) */
    int32_t *ctl_next;
    shm_unex_t *unex;    /* records of upool.recs */
    cs_tp_unex_t upool;  /* and the eager payloads of unexpected messages */
    struct pollfd *pfds; /* liveness: the peers' pidfds */
    uint64_t next_check; /* ns of the next liveness check */
    uint32_t polls;
    int ready; /* insert_addrs done */
    int left;  /* leave was called */
    uint32_t next_region; /* id of the next region */
} tp_shm_t;

/* ---- tp_shm_seg.c ---- */
int cs__shm_seg_create(tp_shm_t *t, cs_err_t *err);
void cs__shm_seg_destroy(tp_shm_t *t);
void cs__shm_blob(const tp_shm_t *t, shm_blob_t *b);
int cs__shm_attach(tp_shm_t *t, const void *blobs, size_t slot, const size_t *lens);
/* Liveness of the peers: marks dead ones (peer->dead) and returns their
 * number newly found dead.  One poll(2) over pidfds; not for every poll. */
int cs__shm_check_peers(tp_shm_t *t);

/* The memory interface (tp->mem) and the peers' regions mapped here. */
extern const cs_tp_mem_ops_t cs__shm_mem_ops;
char *cs__shm_map(tp_shm_t *t, int peer, const shm_rts_t *r);
void cs__shm_unmap_all(tp_shm_t *t);

/* ---- tp_shm_large.c ---- */
int cs__shm_send_rts(tp_shm_t *t, int peer, const void *buf, size_t len, void *mr,
                     uint64_t tag, cs_tp_req_t *req);
void cs__shm_match_rts(tp_shm_t *t, int32_t op, int mode, const shm_rts_t *rts);
void cs__shm_on_fin(tp_shm_t *t, const shm_ctl_t *c);
void cs__shm_on_cts(tp_shm_t *t, int peer, const shm_ctl_t *c);
void cs__shm_on_data(tp_shm_t *t, int peer, const shm_ctl_t *c);
int cs__shm_progress_large(tp_shm_t *t);
/* Send the queued control messages (FIN, CTS) whose peer's ring has room;
 * returns how many went. */
int cs__shm_flush_ctl(tp_shm_t *t);

/* ---- used by every file ---- */

/* A new operation (zeroed), or -1 when the pool is empty. */
static inline int32_t shm_op_new(tp_shm_t *t)
{
    int32_t i = cs_tp_pool_get(&t->opool);
    if (i >= 0)
        memset(&t->ops[i], 0, sizeof(t->ops[i]));
    return i;
}

/* The generation of op i: its cookie's check (tp_util.h). */
static inline uint32_t shm_gen(const tp_shm_t *t, int32_t i)
{
    return t->opool.gen[i];
}

/* Op i is over: poll hands its request back (nbytes through o->off). */
static inline void shm_complete(tp_shm_t *t, int32_t i, int status, size_t nbytes)
{
    shm_op_t *o = &t->ops[i];
    o->state = OP_DONE;
    o->status = status;
    o->off = nbytes;
    cs_tp_ring_push(&t->done, i);
}

#endif /* TP_SHM_H */
