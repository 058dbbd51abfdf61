/*
 * tp_ofi.c - the libfabric transport: reliable datagram endpoints
 * (FI_EP_RDM) with tagged messages, one completion queue, an address vector
 * of type table, any provider chosen by name ("tcp;ofi_rxm", "shm",
 * "verbs;ofi_rxm", "efa", ...).
 *
 * Wire tag: bits [0, 36) the caller's tag, [36, 56) the sender's rank,
 * [56, 64) the part index.  Putting the source rank in the tag makes a
 * receive match only its peer without requiring FI_DIRECTED_RECV.
 * Part index OFI_LEAVE_PART is no part: a rank interrupted by a signal
 * (leave, see cs_transport.h) sends every peer an empty message with it,
 * the signal in the caller's bits; every rank keeps one receive posted for
 * those from any rank (the other bits ignored), from insert_addrs on.
 * Messages above the provider's max_msg_size (or cfg->max_msg) are split
 * into at most 255 parts, each posted with its own context taken from a
 * pool preallocated at open (nothing is allocated while posting or
 * polling).  Memory is registered only when the provider asks for it
 * (FI_MR_LOCAL).  Sends up to the provider's inject size (at most
 * OFI_INJECT_MAX) go out with fi_tinject and complete inline (see isend in
 * cs_transport.h).  Every libfabric error code becomes a cs status in
 * ofi_status(), the one conversion function of this backend.
 *
 * libfabric itself is loaded when the first endpoint opens (dlopen), not
 * linked: Debian's libfabric pulls in the PSM libraries, whose constructors
 * sleep about 0.2 s probing for InfiniPath / Omni-Path hardware, and every
 * collstep command (sim, verify, platform...) paid that at start-up.  The
 * few functions libfabric exports (the rest are inline calls through the
 * ops tables of its objects) go through ofi_lib below.  The same
 * libraries take over SIGINT and SIGTERM when loaded: ofi_load_once puts
 * the process's handlers back (cs_intr.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "cs_env.h"
#include "cs_intr.h"
#include "cs_log.h"
#include "cs_transport.h"
#include "tp_util.h"

#define OFI_RANK_SHIFT CS_TP_TAG_BITS
#define OFI_PART_SHIFT 56
#define OFI_MAX_PARTS 255
#define OFI_LEAVE_PART 255ull /* the part index of a LEAVE message */
#define OFI_LEAVE_MS 100      /* leave waits this long for its sends */
#define OFI_STASH 64       /* completions a poll with max 0 keeps for the next polls */
#define OFI_NAME_MAX 64    /* the shm provider's region name: "csPID_RANK_HEX" */
#define OFI_API FI_VERSION(1, 14) /* the libfabric API asked for (FI_CONTEXT2, fi_tinject) */
#define OFI_NCTX 4096      /* message parts in flight (contexts preallocated at open) */
#define OFI_MAX_RANKS (1 << (OFI_PART_SHIFT - OFI_RANK_SHIFT))
#define OFI_POLL_BATCH 16  /* completions read per fi_cq_read */
#define OFI_INJECT_MAX 1024 /* above it a copy-out costs more than a completion */

typedef struct ofi_ctx {
    struct fi_context2 fc; /* must stay first: libfabric hands it back */
    cs_tp_req_t *req;
} ofi_ctx_t;

typedef struct tp_ofi {
    cs_tp_t base; /* first member */
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    fi_addr_t *peers;
    int need_mr;
    size_t inject; /* largest send copied out inline (fi_tinject), 0: none */
    ofi_ctx_t *ctx;     /* a posted part's context: records of cpool */
    cs_tp_pool_t cpool;
    ofi_ctx_t leave_ctx;  /* the receive of peers' LEAVE messages */
    char leave_buf[8];
    int leave_posted, left;
    /* completions read by a poll with max 0 (looking for LEAVEs between
     * runs), handed back by the next polls */
    struct fi_cq_tagged_entry stash[OFI_STASH];
    int stash_head, stash_tail;
} tp_ofi_t;

/* The functions libfabric exports, resolved once (ofi_load) from
 * $CS_LIBFABRIC (a path or a library name: a site's own build) or the
 * system's libfabric.so.1.  The library must implement at least the API
 * version of the headers we were built with: its fi_info is then a
 * superset of ours (libfabric only appends fields), and every fi_info we
 * touch is allocated by the library. */
#define OFI_LIB "libfabric.so.1"
static struct {
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                   struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
    uint32_t (*version)(void);
    char why[512]; /* empty when loaded */
} ofi_lib;
static pthread_once_t ofi_once = PTHREAD_ONCE_INIT;

/* The stop signals of cs_intr.h: libfabric's dependencies may take them
 * (see ofi_load_once). */
static const int ofi_keep_sigs[] = {SIGINT, SIGTERM, SIGHUP};
#define OFI_NKEEP (int)(sizeof(ofi_keep_sigs) / sizeof(ofi_keep_sigs[0]))

static void ofi_load_once(void)
{
    const char *lib = cs_env_get("CS_LIBFABRIC");
    if (!lib || !*lib)
        lib = OFI_LIB;
    /* Debian's libfabric pulls in libinfinipath (PSM), whose constructor
     * replaces the handlers of SIGINT and SIGTERM (among others) with one
     * that exits 1 at once: a Ctrl-C would then leave no message, no
     * clean-up and peers waiting.  The process's own handlers are put back. */
    struct sigaction keep[OFI_NKEEP];
    for (int i = 0; i < OFI_NKEEP; i++)
        sigaction(ofi_keep_sigs[i], NULL, &keep[i]);
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    for (int i = 0; i < OFI_NKEEP; i++) {
        struct sigaction now;
        sigaction(ofi_keep_sigs[i], NULL, &now);
        if (now.sa_handler != keep[i].sa_handler) {
            sigaction(ofi_keep_sigs[i], &keep[i], NULL);
            CS_DEBUG("exec", "%s replaced the handler of signal %d: put back", lib,
                     ofi_keep_sigs[i]);
        }
    }
    if (!h) {
        snprintf(ofi_lib.why, sizeof(ofi_lib.why), "%s", dlerror());
        return;
    }
    *(void **)&ofi_lib.getinfo = dlsym(h, "fi_getinfo");
    *(void **)&ofi_lib.freeinfo = dlsym(h, "fi_freeinfo");
    *(void **)&ofi_lib.dupinfo = dlsym(h, "fi_dupinfo");
    *(void **)&ofi_lib.fabric = dlsym(h, "fi_fabric");
    *(void **)&ofi_lib.strerror = dlsym(h, "fi_strerror");
    *(void **)&ofi_lib.version = dlsym(h, "fi_version");
    if (!ofi_lib.getinfo || !ofi_lib.freeinfo || !ofi_lib.dupinfo || !ofi_lib.fabric ||
        !ofi_lib.strerror || !ofi_lib.version) {
        snprintf(ofi_lib.why, sizeof(ofi_lib.why), "%s lacks a libfabric function", lib);
        return; /* the handle stays open: nothing else may use it */
    }
    uint32_t v = ofi_lib.version(), want = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
    if (FI_MAJOR(v) != FI_MAJOR(want) || FI_MINOR(v) < FI_MINOR(want))
        snprintf(ofi_lib.why, sizeof(ofi_lib.why),
                 "%s is libfabric %u.%u, collstep was built for %u.%u or later in %u.x",
                 lib, FI_MAJOR(v), FI_MINOR(v), FI_MAJOR(want), FI_MINOR(want),
                 FI_MAJOR(want));
}

/* Load libfabric (once per process): CS_OK, or CS_ERR_NODEVICE saying why. */
static int ofi_load(cs_err_t *err)
{
    pthread_once(&ofi_once, ofi_load_once);
    if (ofi_lib.why[0])
        return cs_err_set(err, CS_ERR_NODEVICE, "ofi transport: cannot use libfabric: %s",
                          ofi_lib.why);
    return CS_OK;
}

/* The one conversion of libfabric error codes (positive FI_E* values). */
static int ofi_status(int fi_err)
{
    if (fi_err < 0)
        fi_err = -fi_err;
    switch (fi_err) {
    case 0: return CS_OK;
    case FI_EAGAIN: return CS_AGAIN;
    case FI_ENOMEM: return CS_ERR_NOMEM;
    case FI_EINVAL: return CS_ERR_INVAL;
    case FI_ENOSYS: case FI_EOPNOTSUPP: return CS_ERR_UNSUPPORTED;
    case FI_ENODATA: case FI_ENOENT: return CS_ERR_NOTFOUND;
    case FI_ETRUNC: case FI_EMSGSIZE: case FI_ETOOSMALL: return CS_ERR_RANGE;
    case FI_ETIMEDOUT: return CS_ERR_TIMEOUT;
    case FI_ECONNRESET: case FI_ECONNREFUSED: case FI_ECONNABORTED: case FI_ENOTCONN:
    case FI_EHOSTUNREACH: case FI_ESHUTDOWN: case FI_EADDRNOTAVAIL:
    case FI_EIO: case FI_EREMOTEIO:
        return CS_ERR_PEER;
    default: return CS_ERR_TRANSPORT;
    }
}

static int ctx_get(tp_ofi_t *t, cs_tp_req_t *req, ofi_ctx_t **out)
{
    int32_t i = cs_tp_pool_get(&t->cpool);
    if (i < 0)
        return CS_AGAIN;
    t->ctx[i].req = req;
    *out = &t->ctx[i];
    return CS_OK;
}

static void ctx_put(tp_ofi_t *t, ofi_ctx_t *c)
{
    c->req = NULL;
    cs_tp_pool_put(&t->cpool, (int32_t)(c - t->ctx));
}

static void ofi_leave(cs_tp_t *tp, int sig);

static void ofi_close(cs_tp_t *tp)
{
    tp_ofi_t *t = (tp_ofi_t *)tp;
    if (!t)
        return;
    if (cs_intr_pending() && !t->left)
        ofi_leave(tp, cs_intr_pending());
    if (t->ep)
        fi_close(&t->ep->fid);
    if (t->cq)
        fi_close(&t->cq->fid);
    if (t->av)
        fi_close(&t->av->fid);
    if (t->domain)
        fi_close(&t->domain->fid);
    if (t->fabric)
        fi_close(&t->fabric->fid);
    if (t->info)
        ofi_lib.freeinfo(t->info);
    free(t->peers);
    free(t->ctx);
    cs_tp_pool_fini(&t->cpool);
    free(t);
}

static int ofi_get_addr(cs_tp_t *tp, void *buf, size_t *len)
{
    tp_ofi_t *t = (tp_ofi_t *)tp;
    size_t n = *len;
    int rc = fi_getname(&t->ep->fid, buf, &n);
    if (rc == -FI_ETOOSMALL)
        return CS_ERR_RANGE;
    if (rc)
        return ofi_status(rc);
    *len = n;
    return CS_OK;
}

/* The receive of LEAVE messages from any rank (part OFI_LEAVE_PART). */
static int post_leave_recv(tp_ofi_t *t)
{
    ssize_t rc;
    do
        rc = fi_trecv(t->ep, t->leave_buf, sizeof(t->leave_buf), NULL, FI_ADDR_UNSPEC,
                      OFI_LEAVE_PART << OFI_PART_SHIFT, (1ull << OFI_PART_SHIFT) - 1,
                      &t->leave_ctx);
    while (rc == -FI_EAGAIN && fi_cq_read(t->cq, NULL, 0) <= 0);
    t->leave_posted = rc == 0;
    if (rc)
        snprintf(t->base.why, sizeof(t->base.why), "ofi transport: cannot post a receive: %s",
                 ofi_lib.strerror((int)-rc));
    return rc ? ofi_status((int)rc) : CS_OK;
}

/* A LEAVE message came in: note its rank and signal, wait for the next. */
static void on_leave(tp_ofi_t *t, uint64_t tag)
{
    int rank = (int)((tag >> OFI_RANK_SHIFT) & ((1ull << (OFI_PART_SHIFT - OFI_RANK_SHIFT)) - 1));
    cs__tp_peer_left(&t->base, rank, (int)(tag & 0xffffffffu));
    CS_DEBUG("exec", "rank %d: rank %d left (signal %d)", t->base.rank, rank,
             (int)(tag & 0xffffffffu));
    if (!t->left)
        post_leave_recv(t);
}

static int ofi_insert_addrs(cs_tp_t *tp, const void *blobs, size_t slot, const size_t *lens)
{
    tp_ofi_t *t = (tp_ofi_t *)tp;
    for (int r = 0; r < tp->nranks; r++) {
        const char *blob = (const char *)blobs + (size_t)r * slot;
        (void)lens;
        int rc = fi_av_insert(t->av, blob, 1, &t->peers[r], 0, NULL);
        if (rc != 1) {
            CS_ERROR("exec", "fi_av_insert of rank %d failed: %d", r, rc);
            return rc < 0 ? ofi_status(rc) : CS_ERR_TRANSPORT;
        }
    }
    return post_leave_recv(t);
}

static int ofi_mr_reg(cs_tp_t *tp, void *buf, size_t len, void **mr)
{
    tp_ofi_t *t = (tp_ofi_t *)tp;
    if (!t->need_mr || len == 0) {
        *mr = NULL;
        return CS_OK;
    }
    struct fid_mr *m = NULL;
    int rc = fi_mr_reg(t->domain, buf, len, FI_SEND | FI_RECV, 0, 0, 0, &m, NULL);
    if (rc)
        return ofi_status(rc);
    *mr = m;
    return CS_OK;
}

static void ofi_mr_dereg(cs_tp_t *tp, void *mr)
{
    (void)tp;
    if (mr)
        fi_close(&((struct fid_mr *)mr)->fid);
}

/* Post the remaining parts of a send (is_send) or receive. */
static int ofi_post(tp_ofi_t *t, int is_send, int peer, char *buf, size_t len, void *mr,
                    uint64_t tag, cs_tp_req_t *req)
{
    if (peer < 0 || peer >= t->base.nranks || tag >> CS_TP_TAG_BITS)
        return CS_ERR_INVAL;
    if (req->status != CS_INPROGRESS) { /* first call for this request */
        size_t parts = len ? 1 + (len - 1) / t->base.max_msg : 1;
        if (parts > OFI_MAX_PARTS)
            return CS_ERR_RANGE;
        req->status = CS_INPROGRESS;
        req->nparts = (uint32_t)parts;
        req->posted = 0;
        req->left = 0;
        req->nbytes = 0;
    }
    void *desc = mr ? fi_mr_desc((struct fid_mr *)mr) : NULL;
    int src = is_send ? t->base.rank : peer;
    if (is_send && len <= t->inject && req->nparts == 1 && req->posted == 0) {
        /* tiny message: copied out now, no completion entry (inline) */
        uint64_t wtag = tag | ((uint64_t)src << OFI_RANK_SHIFT);
        ssize_t rc = fi_tinject(t->ep, buf, len, t->peers[peer], wtag);
        if (rc == 0) {
            req->status = CS_OK;
            req->nbytes = len;
            return CS_OK;
        }
        if (rc != -FI_EAGAIN)
            req->status = ofi_status((int)rc);
        return ofi_status((int)rc);
    }
    while (req->posted < req->nparts) {
        uint64_t p = req->posted;
        size_t off = p * t->base.max_msg;
        size_t n = len - off < t->base.max_msg ? len - off : t->base.max_msg;
        uint64_t wtag = tag | ((uint64_t)src << OFI_RANK_SHIFT) | (p << OFI_PART_SHIFT);
        ofi_ctx_t *c = NULL;
        if (ctx_get(t, req, &c) != CS_OK)
            return CS_AGAIN;
        ssize_t rc = is_send ? fi_tsend(t->ep, buf + off, n, desc, t->peers[peer], wtag, c)
                             : fi_trecv(t->ep, buf + off, n, desc, t->peers[peer], wtag, 0, c);
        if (rc) {
            ctx_put(t, c);
            int st = ofi_status((int)rc);
            if (st != CS_AGAIN && req->posted == 0)
                req->status = st; /* not posted: the caller owns it again */
            return st;
        }
        req->posted++;
        req->left++;
    }
    return CS_OK;
}

static int ofi_isend(cs_tp_t *tp, int peer, const void *buf, size_t len, void *mr,
                     uint64_t tag, cs_tp_req_t *req)
{
    return ofi_post((tp_ofi_t *)tp, 1, peer, (char *)buf, len, mr, tag, req);
}

static int ofi_irecv(cs_tp_t *tp, int peer, void *buf, size_t len, void *mr, uint64_t tag,
                     cs_tp_req_t *req)
{
    return ofi_post((tp_ofi_t *)tp, 0, peer, buf, len, mr, tag, req);
}

/* One part finished; returns 1 when its request is complete. */
static int part_done(tp_ofi_t *t, ofi_ctx_t *c, size_t len, int st, cs_tp_req_t **req_out)
{
    cs_tp_req_t *req = c->req;
    ctx_put(t, c);
    req->nbytes += len;
    req->left--;
    if (st < 0 && req->status == CS_INPROGRESS)
        req->status = st;
    if (st < 0)
        req->nparts = req->posted; /* post no more parts of a failed request */
    if (req->left == 0 && req->posted == req->nparts) {
        if (req->status == CS_INPROGRESS)
            req->status = CS_OK;
        *req_out = req;
        return 1;
    }
    return 0;
}

static int ofi_poll(cs_tp_t *tp, cs_tp_req_t **done, int max)
{
    tp_ofi_t *t = (tp_ofi_t *)tp;
    struct fi_cq_tagged_entry ent[OFI_POLL_BATCH];
    int n = 0;
    if (max == 0) { /* progress, a LEAVE acted on, other entries kept for later */
        while (t->stash_tail < OFI_STASH && fi_cq_read(t->cq, &t->stash[t->stash_tail], 1) == 1)
            if (t->stash[t->stash_tail].op_context == &t->leave_ctx)
                on_leave(t, t->stash[t->stash_tail].tag);
            else
                t->stash_tail++;
        if (t->stash_tail == OFI_STASH)
            fi_cq_read(t->cq, NULL, 0);
        return 0;
    }
    while (n < max && t->stash_head < t->stash_tail) {
        struct fi_cq_tagged_entry *x = &t->stash[t->stash_head++];
        ofi_ctx_t *c = x->op_context;
        size_t len = (x->flags & FI_RECV) ? x->len : 0;
        if (c && c->req && part_done(t, c, len, CS_OK, &done[n]))
            n++;
    }
    if (t->stash_head == t->stash_tail)
        t->stash_head = t->stash_tail = 0;
    while (n < max) {
        size_t want = (size_t)(max - n) < OFI_POLL_BATCH ? (size_t)(max - n) : OFI_POLL_BATCH;
        ssize_t got = fi_cq_read(t->cq, ent, want);
        if (got == -FI_EAGAIN)
            break;
        if (got == -FI_EAVAIL) {
            struct fi_cq_err_entry e;
            memset(&e, 0, sizeof(e));
            if (fi_cq_readerr(t->cq, &e, 0) != 1)
                break;
            int st = ofi_status(e.err);
            ofi_ctx_t *c = e.op_context;
            if (c == &t->leave_ctx) { /* cancelled, or truncated: post it again */
                t->leave_posted = 0;
                if (e.err != FI_ECANCELED && !t->left)
                    on_leave(t, e.tag);
                continue;
            }
            CS_DEBUG("exec", "completion error %d (%s) from peer %d", e.err,
                     ofi_lib.strerror(e.err), c && c->req ? c->req->peer : -1);
            if (c && c->req && part_done(t, c, 0, st, &done[n]))
                n++;
            continue;
        }
        if (got < 0)
            return ofi_status((int)got);
        for (ssize_t i = 0; i < got; i++) {
            ofi_ctx_t *c = ent[i].op_context;
            if (c == &t->leave_ctx) {
                on_leave(t, ent[i].tag);
                continue;
            }
            size_t len = (ent[i].flags & FI_RECV) ? ent[i].len : 0;
            if (c && c->req && part_done(t, c, len, CS_OK, &done[n]))
                n++;
        }
        if ((size_t)got < want)
            break;
    }
    return n;
}

static int ofi_cancel(cs_tp_t *tp, cs_tp_req_t *req)
{
    tp_ofi_t *t = (tp_ofi_t *)tp;
    for (int32_t i = 0; i < t->cpool.n; i++)
        if (t->ctx[i].req == req)
            fi_cancel(&t->ep->fid, &t->ctx[i]);
    return CS_OK;
}

/* LEAVE to every peer; waits for the sends' completions (a connection to
 * a peer never talked to is made meanwhile) at most OFI_LEAVE_MS. */
static void ofi_leave(cs_tp_t *tp, int sig)
{
    tp_ofi_t *t = (tp_ofi_t *)tp;
    int n = tp->nranks;
    if (t->left || !t->ep || !t->leave_posted) {
        t->left = 1;
        return;
    }
    t->left = 1;
    ofi_ctx_t *sc = calloc((size_t)n, sizeof(*sc));
    if (!sc)
        return;
    uint64_t tag = (uint64_t)(uint32_t)sig | ((uint64_t)tp->rank << OFI_RANK_SHIFT) |
                   (OFI_LEAVE_PART << OFI_PART_SHIFT);
    double t0 = cs_now_s(), now = t0;
    int sent = 0, done = 0, next = 0;
    while (done < n - 1 && now - t0 < OFI_LEAVE_MS * 1e-3) {
        while (next < n) {
            if (next == tp->rank) {
                next++;
                continue;
            }
            ssize_t rc = fi_tsend(t->ep, t->leave_buf, 0, NULL, t->peers[next], tag, &sc[next]);
            if (rc == -FI_EAGAIN)
                break;
            sent += rc == 0;
            done += rc != 0; /* this one cannot go: do not wait for it */
            next++;
        }
        struct fi_cq_tagged_entry ent[OFI_POLL_BATCH];
        ssize_t got = fi_cq_read(t->cq, ent, OFI_POLL_BATCH);
        for (ssize_t i = 0; i < got; i++)
            done += (ofi_ctx_t *)ent[i].op_context >= sc &&
                    (ofi_ctx_t *)ent[i].op_context < sc + n;
        if (got == -FI_EAVAIL) {
            struct fi_cq_err_entry e;
            memset(&e, 0, sizeof(e));
            if (fi_cq_readerr(t->cq, &e, 0) == 1)
                done += (ofi_ctx_t *)e.op_context >= sc && (ofi_ctx_t *)e.op_context < sc + n;
        }
        now = cs_now_s();
    }
    CS_DEBUG("exec", "rank %d: LEAVE sent to %d of %d peers, %d done in %.1f ms", tp->rank, sent,
             n - 1, done, (now - t0) * 1e3);
    /* sc is not freed: a send still queued in the provider points into it
     * until fi_close of the endpoint, and nothing but close follows */
    (void)sc;
}

static const cs_tp_ops_t ofi_ops = {
    .size = sizeof(cs_tp_ops_t),
    .name = "ofi",
    .close = ofi_close,
    .get_addr = ofi_get_addr,
    .insert_addrs = ofi_insert_addrs,
    .mr_reg = ofi_mr_reg,
    .mr_dereg = ofi_mr_dereg,
    .isend = ofi_isend,
    .irecv = ofi_irecv,
    .poll = ofi_poll,
    .cancel = ofi_cancel,
    .leave = ofi_leave,
};

static int getinfo(const cs_tp_config_t *cfg, struct fi_info **out, cs_err_t *err)
{
    struct fi_info *hints = ofi_lib.dupinfo(NULL);
    if (!hints)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_TAGGED | FI_SEND | FI_RECV;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->addr_format = FI_FORMAT_UNSPEC;
    if (cfg->provider && *cfg->provider)
        hints->fabric_attr->prov_name = strdup(cfg->provider);
    const char *node = cfg->node;
    char shm_name[OFI_NAME_MAX];
    if (cfg->provider && strstr(cfg->provider, "shm")) {
        /* shm names its region after the node given (default: the pid); a
         * region left in /dev/shm by a killed process of the same pid would
         * make this one fail, so take a name of our own */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(shm_name, sizeof(shm_name), "cs%ld_%d_%lx", (long)getpid(), cfg->rank,
                 (unsigned long)(ts.tv_nsec ^ ts.tv_sec));
        node = shm_name;
    }
    struct fi_info *info = NULL;
    int rc = ofi_lib.getinfo(OFI_API, node, NULL, node ? FI_SOURCE : 0, hints, &info);
    ofi_lib.freeinfo(hints);
    if (rc || !info)
        return cs_err_set(err, CS_ERR_NODEVICE,
                          "libfabric provider '%s' is not available here (fi_getinfo: %s)",
                          cfg->provider ? cfg->provider : "(default)", ofi_lib.strerror(-rc));
    *out = info;
    return CS_OK;
}

int cs_tp_ofi_open(const cs_tp_config_t *cfg, cs_tp_t **out, cs_err_t *err)
{
    if (cfg->nranks < 1 || cfg->nranks > OFI_MAX_RANKS || cfg->rank < 0 ||
        cfg->rank >= cfg->nranks)
        return cs_err_set(err, CS_ERR_INVAL, "ofi transport: rank %d of %d out of range",
                          cfg->rank, cfg->nranks);
    int st = ofi_load(err), rc = 0;
    if (st != CS_OK)
        return st;
    const char *what = "";
    tp_ofi_t *t = calloc(1, sizeof(*t));
    if (!t)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    t->base.ops = &ofi_ops;
    t->base.rank = cfg->rank;
    t->base.nranks = cfg->nranks;
    st = getinfo(cfg, &t->info, err);
    if (st != CS_OK)
        goto fail;
    t->need_mr = (t->info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
    t->base.max_msg = t->info->ep_attr->max_msg_size;
    if (cfg->max_msg && cfg->max_msg < t->base.max_msg)
        t->base.max_msg = cfg->max_msg;
    if (t->base.max_msg == 0)
        t->base.max_msg = 1;
    t->inject = t->info->tx_attr->inject_size;
    if (t->inject > OFI_INJECT_MAX)
        t->inject = OFI_INJECT_MAX;
    if (t->inject > t->base.max_msg)
        t->inject = t->base.max_msg;
    t->ctx = calloc(OFI_NCTX, sizeof(*t->ctx));
    t->peers = calloc((size_t)cfg->nranks, sizeof(*t->peers));
    if (!t->ctx || !t->peers || cs_tp_pool_init(&t->cpool, OFI_NCTX) != CS_OK) {
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
        goto fail;
    }

    struct fi_av_attr av_attr = {.type = FI_AV_TABLE, .count = (size_t)cfg->nranks};
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED, .size = 0};
    if ((rc = ofi_lib.fabric(t->info->fabric_attr, &t->fabric, NULL))) {
        what = "fi_fabric";
        goto fi_fail;
    }
    if ((rc = fi_domain(t->fabric, t->info, &t->domain, NULL))) {
        what = "fi_domain";
        goto fi_fail;
    }
    if ((rc = fi_av_open(t->domain, &av_attr, &t->av, NULL))) {
        what = "fi_av_open";
        goto fi_fail;
    }
    if ((rc = fi_cq_open(t->domain, &cq_attr, &t->cq, NULL))) {
        what = "fi_cq_open";
        goto fi_fail;
    }
    if ((rc = fi_endpoint(t->domain, t->info, &t->ep, NULL))) {
        what = "fi_endpoint";
        goto fi_fail;
    }
    if ((rc = fi_ep_bind(t->ep, &t->av->fid, 0))) {
        what = "fi_ep_bind(av)";
        goto fi_fail;
    }
    if ((rc = fi_ep_bind(t->ep, &t->cq->fid, FI_TRANSMIT | FI_RECV))) {
        what = "fi_ep_bind(cq)";
        goto fi_fail;
    }
    if ((rc = fi_enable(t->ep))) {
        what = "fi_enable";
        goto fi_fail;
    }
    CS_INFO("exec", "rank %d: libfabric provider %s, max_msg %zu, inject %zu, mr %s", cfg->rank,
            t->info->fabric_attr->prov_name, t->base.max_msg, t->inject,
            t->need_mr ? "local" : "none");
    *out = &t->base;
    return CS_OK;
fi_fail:
    st = cs_err_set(err, ofi_status(rc) == CS_ERR_TRANSPORT ? CS_ERR_TRANSPORT : ofi_status(rc),
                    "libfabric %s failed: %s", what, ofi_lib.strerror(-rc));
fail:
    ofi_close(&t->base);
    return st;
}
