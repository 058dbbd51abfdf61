/*
 * cs_transport.h - the point-to-point transport ops table of the live
 * executor.
 *
 * A transport moves tagged messages between the ranks of one job.  It is a
 * small ops table in the style of libfabric's providers: every transport
 * embeds `cs_tp_t` as its FIRST member, `cs_tp_t.ops` points to a static
 * table whose first field is its own size (cs_tp_open refuses a transport
 * whose tables have another size than this header's), and an operation a
 * transport lacks points to one of the shared cs_tp_nosup_* stubs, never to
 * NULL.  A tracing or fault-injecting transport can wrap another one.
 *
 * Life cycle (engine side):
 *   open (transport specific constructor, e.g. cs_tp_ofi_open)
 *   get_addr -> exchange blobs out of band (cs_boot) -> insert_addrs
 *   mr_reg for every buffer it will use (or mem->alloc, see cs_tp_mem_ops_t);
 *   isend / irecv / poll ...; mr_dereg (mem->free)
 *   close
 *
 * Requests.  The caller owns every cs_tp_req_t (the engine preallocates
 * them); the transport only writes into it between a successful post and
 * the moment poll hands it back, and keeps no pointer to it afterwards.
 * A request is handed back by poll exactly once, with `status` CS_OK or a
 * negative cs_status_t (`nbytes` is the length received for a recv).
 *
 * Tags.  The caller's tag must fit in CS_TP_TAG_BITS bits; the transport
 * uses the bits above for its own purposes (source rank, parts of a split
 * message).  A receive from `peer` with tag t matches only a send from
 * `peer` with tag t; two sends with the same (peer, tag) match receives in
 * posting order.
 *
 * Leaving.  A rank interrupted by a signal (cs_intr.h) calls leave: its
 * peers' transports learn it (a frame on each connection, a word in its
 * shared segment, a control message) and set cs_tp.left_peer and
 * left_sig, fail what they had posted with that rank (CS_ERR_PEER) and
 * record the rank with cs_intr_note_peer.  Their engines look at
 * left_peer while they wait and fail naming it ("rank 1 was interrupted
 * (SIGINT)").  The blocking calls (insert_addrs, the waits of close)
 * return CS_ERR_INTERRUPTED within about 100 ms of a signal.
 *
 * Nothing here blocks, except open, insert_addrs, leave and close.
 */
#ifndef CS_TRANSPORT_H
#define CS_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "cs_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CS_TP_TAG_BITS 36
#define CS_TP_ADDR_MAX 512 /* largest address blob of any transport */
#define CS_TP_LEFT_MAX 96  /* cs_tp_left_text's longest text ("rank N was interrupted
                              (SIGxxx)") and then some */

typedef struct cs_tp cs_tp_t;

/* One posted operation.  Fields marked (tp) are written by the transport. */
typedef struct cs_tp_req {
    void *user;         /* caller's cookie, untouched */
    int peer;           /* caller fills before posting (informational) */
    int status;         /* (tp) CS_INPROGRESS while posted, then CS_OK / < 0 */
    size_t nbytes;      /* (tp) bytes transferred, valid when done */
    uint32_t nparts;    /* (tp) parts of a split message */
    uint32_t posted;    /* (tp) parts posted so far */
    uint32_t left;      /* (tp) parts not completed yet */
    uint32_t pad_;
} cs_tp_req_t;

typedef struct cs_tp_ops {
    size_t size; /* sizeof(cs_tp_ops_t): the ABI this table was built for */
    const char *name;

    /* Release everything.  Outstanding requests are cancelled and never
     * reported.  Blocks until the transport is quiescent. */
    void (*close)(cs_tp_t *tp);

    /* Copy this rank's address blob into buf (capacity *len) and set *len.
     * CS_ERR_RANGE when it does not fit.  Does not block. */
    int (*get_addr)(cs_tp_t *tp, void *buf, size_t *len);

    /* Make the peers reachable: `blobs` holds nranks slots of `slot` bytes,
     * slot r starting with rank r's blob of length lens[r].  Blocking,
     * called once before the first post. */
    int (*insert_addrs)(cs_tp_t *tp, const void *blobs, size_t slot, const size_t *lens);

    /* Register [buf, buf+len) for transfers; *mr is the handle to pass to
     * isend/irecv (may be NULL when the transport needs no registration;
     * passing NULL for a buffer it needed is CS_ERR_INVAL).  Blocking,
     * outside the progress path. */
    int (*mr_reg)(cs_tp_t *tp, void *buf, size_t len, void **mr);
    void (*mr_dereg)(cs_tp_t *tp, void *mr);

    /* Post a send of [buf, buf+len) to `peer` (len may be 0).  Must not
     * block.  CS_OK: posted, the request comes back through poll.
     * CS_AGAIN: not (fully) posted for lack of resources: call poll, then
     * call again with the same arguments and request (parts already posted
     * are remembered in the request).  < 0: failure, request not posted.
     * The buffer must stay untouched until the request completes.
     * Inline completion: a transport may copy a tiny message out at once
     * (libfabric inject); it then returns CS_OK with req->status already
     * CS_OK (not CS_INPROGRESS), the buffer is free again, and poll will
     * never hand this request back. */
    int (*isend)(cs_tp_t *tp, int peer, const void *buf, size_t len, void *mr, uint64_t tag,
                 cs_tp_req_t *req);
    /* Post a receive of at most len bytes from `peer`; as isend. */
    int (*irecv)(cs_tp_t *tp, int peer, void *buf, size_t len, void *mr, uint64_t tag,
                 cs_tp_req_t *req);

    /* Make progress and return up to `max` completed requests in done[].
     * Returns their number (>= 0), or a negative status for a failure of
     * the transport itself (then the transport is unusable).  A failed
     * operation is not a transport failure: it is returned with a negative
     * req->status (CS_ERR_PEER when the peer went away).  Must not block.
     * max 0 (the bootstrap, while it waits between runs): read what came
     * in and look at the peers' liveness now, hand nothing back. */
    int (*poll)(cs_tp_t *tp, cs_tp_req_t **done, int max);

    /* Ask to cancel a posted request; it still comes back through poll
     * (status CS_ERR_TRANSPORT) unless it completed first.  Must not block. */
    int (*cancel)(cs_tp_t *tp, cs_tp_req_t *req);

    /* Tell every peer that this rank leaves the job because of signal `sig`
     * (cs_intr.h; 0: another reason, e.g. cs_engine_create failed), so that
     * they fail at once naming it instead of waiting for it (their
     * transport sets cs_tp.left_peer / left_sig).  Best
     * effort, bounded by about 100 ms; what is posted is abandoned; after
     * it only close.  close calls it by itself when cs_intr_pending() is
     * set; calling it twice does nothing more. */
    void (*leave)(cs_tp_t *tp, int sig);
} cs_tp_ops_t;

/* Optional memory interface (cs_tp.mem; NULL when the transport has none):
 * memory the transport hands out itself because it moves data out of it
 * faster than out of arbitrary host memory (the shm transport: its peers
 * map it and copy from it with plain loads, one copy, no system call).
 * The engine allocates its buffers here when it is present, instead of
 * allocating them itself and calling mr_reg. */
typedef struct cs_tp_mem_ops {
    size_t size; /* sizeof(cs_tp_mem_ops_t): the ABI this table was built for */
    /* len bytes (> 0), page aligned, zeroed; *mr is its registration, to
     * pass to isend / irecv like an mr_reg handle.  Blocking, outside the
     * progress path.  CS_ERR_NOMEM when it cannot. */
    int (*alloc)(cs_tp_t *tp, size_t len, void **buf, void **mr);
    /* Release what alloc returned (no request may still use it). */
    void (*free)(cs_tp_t *tp, void *buf, void *mr);
} cs_tp_mem_ops_t;

/* The base of every transport. */
struct cs_tp {
    const cs_tp_ops_t *ops;
    const cs_tp_mem_ops_t *mem; /* optional, see above; NULL: none */
    int rank, nranks;
    size_t max_msg; /* largest message before the transport splits it */
    char why[256];  /* why a blocking call (insert_addrs) failed, for the caller's
                     * message; empty when the transport has nothing to add */
    int left_peer;  /* 1 + the first peer that announced it left the job (leave); 0:
                     * none, so a zeroed cs_tp_t (a wrapper's) says none */
    int left_sig;   /* its signal (valid when left_peer) */
};

/* Configuration common to transports. */
typedef struct cs_tp_config {
    int rank, nranks;
    const char *provider; /* libfabric provider, e.g. "tcp;ofi_rxm", "shm"; NULL: default */
    const char *node;     /* address to bind (tcp), e.g. "127.0.0.1"; NULL: provider's */
    size_t max_msg;       /* split messages above this (0: provider's limit); for tests */
    double timeout_s;     /* bound of blocking calls waiting for peers (<= 0: 60 s) */
} cs_tp_config_t;

/* Shared "not supported" stubs for missing operations. */
int cs_tp_nosup_get_addr(cs_tp_t *tp, void *buf, size_t *len);
int cs_tp_nosup_insert_addrs(cs_tp_t *tp, const void *blobs, size_t slot, const size_t *lens);
int cs_tp_nosup_mr_reg(cs_tp_t *tp, void *buf, size_t len, void **mr);
void cs_tp_nosup_mr_dereg(cs_tp_t *tp, void *mr);
int cs_tp_nosup_cancel(cs_tp_t *tp, cs_tp_req_t *req);
void cs_tp_nosup_leave(cs_tp_t *tp, int sig);

/* For transports: peer `rank` said it leaves because of `sig`: set
 * left_peer / left_sig (the first one wins) and cs_intr_note_peer. */
void cs__tp_peer_left(cs_tp_t *tp, int rank, int sig);

/* "rank R was interrupted (SIGINT)", or "rank R left the job" for sig 0. */
void cs_tp_left_text(int rank, int sig, char *buf, size_t cap);

/* cs_tp_left_text for the first peer
 * that left, as this process knows it (tp may be NULL): writes buf and
 * returns the rank, or -1 (buf untouched) when no peer left. */
int cs_tp_left_why(const cs_tp_t *tp, char *buf, size_t cap);

/* Transport constructors.  Return a cs_status_t, fill *out only on success. */
int cs_tp_ofi_open(const cs_tp_config_t *cfg, cs_tp_t **out, cs_err_t *err);
/* Native shared memory (exec/tp_shm.c): all ranks on one host; ignores
 * provider and node; max_msg caps the eager size and the pieces large
 * messages move in (for tests).  Environment, read here: CS_SHM_COPY
 * (auto, cma, bounce: how large messages move), CS_SHM_EAGER (bytes). */
int cs_tp_shm_open(const cs_tp_config_t *cfg, cs_tp_t **out, cs_err_t *err);
/* Native TCP (exec/tp_tcp.c): two connections per rank pair (messages and
 * control), bound to cfg->node (an IPv4 or IPv6 address); ignores provider
 * and max_msg. */
int cs_tp_tcp_open(const cs_tp_config_t *cfg, cs_tp_t **out, cs_err_t *err);

/* Open a transport by name ("ofi", "shm", "tcp"); CS_ERR_NOTFOUND for unknown names. */
int cs_tp_open(const char *name, const cs_tp_config_t *cfg, cs_tp_t **out, cs_err_t *err);

static inline void cs_tp_close(cs_tp_t *tp)
{
    if (tp)
        tp->ops->close(tp);
}

#ifdef __cplusplus
}
#endif

#endif /* CS_TRANSPORT_H */
