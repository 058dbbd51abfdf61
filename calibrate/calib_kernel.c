/*
 * calib_kernel.c - the measurement kernels over a transport (calib_int.h).
 *
 * One send area and one receive area of max_bytes each; messages of a
 * kernel all use them (the contents do not matter).  A wait polls the
 * transport until its requests are handed back, failing on a peer's
 * error, a peer that left, a signal, or no completion for the timeout.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calib_int.h"
#include "cs_fit.h"
#include "cs_intr.h"
#include "cs_time.h"

struct cs__calib_kern {
    cs_tp_t *tp;
    cs_boot_t *boot;
    double timeout_s;
    size_t cap;
    char *sbuf, *rbuf;
    void *smr, *rmr;
    int own; /* 1: malloc'ed and mr_reg'ed; 0: tp->mem */
    uint64_t epoch;
};

static int alloc_area(cs__calib_kern_t *c, char **buf, void **mr, cs_err_t *err)
{
    size_t len = c->cap ? c->cap : 1;
    if (c->tp->mem) {
        void *b = NULL;
        int st = c->tp->mem->alloc(c->tp, len, &b, mr);
        if (st != CS_OK)
            return cs_err_set(err, st, "calibrate: cannot allocate %zu bytes of transport memory",
                              len);
        *buf = b;
        return CS_OK;
    }
    *buf = aligned_alloc(4096, (len + 4095) / 4096 * 4096);
    if (!*buf)
        return cs_err_set(err, CS_ERR_NOMEM, "calibrate: out of memory (%zu bytes)", len);
    memset(*buf, 0, len);
    int st = c->tp->ops->mr_reg(c->tp, *buf, len, mr);
    if (st != CS_OK) {
        free(*buf);
        *buf = NULL;
        return cs_err_set(err, st, "calibrate: cannot register %zu bytes with the transport", len);
    }
    return CS_OK;
}

static void free_area(cs__calib_kern_t *c, char *buf, void *mr)
{
    if (!buf)
        return;
    if (c->own) {
        if (mr)
            c->tp->ops->mr_dereg(c->tp, mr);
        free(buf);
    } else {
        c->tp->mem->free(c->tp, buf, mr);
    }
}

int cs__calib_kern_open(cs_tp_t *tp, cs_boot_t *boot, size_t max_bytes, double timeout_s,
                  cs__calib_kern_t **out, cs_err_t *err)
{
    cs__calib_kern_t *c = calloc(1, sizeof(*c));
    if (!c)
        return cs_err_set(err, CS_ERR_NOMEM, "calibrate: out of memory");
    c->tp = tp, c->boot = boot, c->cap = max_bytes;
    c->timeout_s = timeout_s > 0 ? timeout_s : 60;
    c->own = tp->mem == NULL;
    int st = alloc_area(c, &c->sbuf, &c->smr, err);
    if (st == CS_OK)
        st = alloc_area(c, &c->rbuf, &c->rmr, err);
    if (st != CS_OK) {
        cs__calib_kern_close(c);
        return st;
    }
    *out = c;
    return CS_OK;
}

void cs__calib_kern_close(cs__calib_kern_t *c)
{
    if (!c)
        return;
    free_area(c, c->sbuf, c->smr);
    free_area(c, c->rbuf, c->rmr);
    free(c);
}

/* Wait until every request of r[0..n) is handed back (status not
 * CS_INPROGRESS).  Requests completed inline already are. */
static int wait_reqs(cs__calib_kern_t *c, cs_tp_req_t *r, int n, uint64_t sleep_after_ns,
                     cs_err_t *err)
{
    uint64_t last = cs_now_ns(), limit = (uint64_t)(c->timeout_s * 1e9);
    for (;;) {
        int pending = 0;
        for (int i = 0; i < n; i++) {
            if (r[i].status == CS_INPROGRESS)
                pending++;
            else if (r[i].status < 0)
                return cs_err_set(err, r[i].status, "rank %d: %s with rank %d failed", c->tp->rank,
                                  r[i].user ? "a receive" : "a send", r[i].peer);
        }
        if (!pending)
            return CS_OK;
        cs_tp_req_t *done[8];
        int k = c->tp->ops->poll(c->tp, done, 8);
        if (k < 0)
            return cs_err_set(err, k, "rank %d: the transport failed", c->tp->rank);
        uint64_t now = cs_now_ns();
        if (k > 0)
            last = now;
        /* back off when idle: spin 2 us, then yield (a rank sharing a core
         * with its partner would otherwise spin through the partner's turn),
         * and after sleep_after_ns (0: never) sleep 50 us at a
         * time: a rank waiting for a large message or for other pairs must
         * not take the CPU from the ranks that measure (ranks may
         * outnumber cores); small ping-pongs never sleep (a sleep is
         * longer than their round trip) */
        if (k == 0 && sleep_after_ns && now - last > sleep_after_ns) {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        } else if (k == 0 && now - last > 2000) {
            sched_yield();
        }
        char why[128];
        if (cs_tp_left_why(c->tp, why, sizeof(why)) >= 0)
            return cs_err_set(err, CS_ERR_PEER, "%s", why);
        if (cs_intr_pending())
            return cs_err_set(err, CS_ERR_INTERRUPTED, "interrupted (%s)",
                              cs_intr_signame(cs_intr_exit_code() - 128));
        if (now - last > limit) {
            int peer = -1;
            for (int i = 0; i < n; i++)
                if (r[i].status == CS_INPROGRESS)
                    peer = r[i].peer;
            return cs_err_set(err, CS_ERR_TIMEOUT, "rank %d: waiting for rank %d: nothing "
                              "arrived for %.0f s", c->tp->rank, peer, c->timeout_s);
        }
    }
}

static int post(cs__calib_kern_t *c, int send, int peer, size_t bytes, uint64_t tag, cs_tp_req_t *r,
                cs_err_t *err)
{
    memset(r, 0, sizeof(*r));
    r->peer = peer;
    r->user = send ? NULL : (void *)r; /* non-NULL: a receive (messages) */
    r->status = CS_OK; /* a fresh request (CS_INPROGRESS would mean "posting again
                        * after CS_AGAIN"); the transport sets it when posted */
    for (;;) {
        int st = send ? c->tp->ops->isend(c->tp, peer, c->sbuf, bytes, c->smr, tag, r)
                      : c->tp->ops->irecv(c->tp, peer, c->rbuf, bytes, c->rmr, tag, r);
        if (st == CS_OK)
            return CS_OK;
        if (st != CS_AGAIN)
            return cs_err_set(err, st, "rank %d: cannot post a %s of %zu bytes %s rank %d",
                              c->tp->rank, send ? "send" : "receive", bytes,
                              send ? "to" : "from", peer);
        cs_tp_req_t *done[8];
        int k = c->tp->ops->poll(c->tp, done, 8);
        if (k < 0)
            return cs_err_set(err, k, "rank %d: the transport failed", c->tp->rank);
        if (cs_intr_pending())
            return cs_err_set(err, CS_ERR_INTERRUPTED, "interrupted");
    }
}

static uint64_t next_tag(cs__calib_kern_t *c)
{
    return ++c->epoch & ((1ull << CS_TP_TAG_BITS) - 1);
}

int cs__calib_pingpong(cs__calib_kern_t *c, int a, int b, size_t bytes, int warm, int min_iters,
                      int max_iters, double budget_s, double *t, int *iters, cs_err_t *err)
{
    uint64_t tag = next_tag(c);
    int me = c->tp->rank;
    if (bytes > c->cap || bytes == 0)
        return cs_err_set(err, CS_ERR_RANGE, "calibrate: ping-pong of %zu bytes (1 to %zu)",
                          bytes, c->cap);
    if (me != a && me != b)
        return CS_OK;
    int peer = me == a ? b : a, st = CS_OK;
    uint64_t slp = bytes >= (256u << 10) ? 1000000 : 0;
    cs_tp_req_t r[2]; /* [0] receive, [1] send */
    if (me == a) {
        /* the first byte of a ping says whether another one follows */
        uint64_t start = cs_now_ns(), limit = (uint64_t)(budget_s * 1e9);
        int i = 0, more = 1;
        while (more && st == CS_OK) {
            int done = i - warm + 1; /* timed round trips after this one */
            more = done < max_iters && (done < min_iters || cs_now_ns() - start < limit);
            if (i < warm)
                more = 1, start = cs_now_ns();
            c->sbuf[0] = (char)more;
            st = post(c, 0, peer, bytes, tag, &r[0], err);
            uint64_t t0 = cs_now_ns();
            if (st == CS_OK)
                st = post(c, 1, peer, bytes, tag, &r[1], err);
            if (st == CS_OK)
                st = wait_reqs(c, r, 2, slp, err);
            if (st == CS_OK && i >= warm)
                t[i - warm] = (double)(cs_now_ns() - t0) * 0.5e-9;
            i++;
        }
        if (st == CS_OK)
            *iters = i - warm;
        return st;
    }
    int more = 1;
    st = post(c, 0, peer, bytes, tag, &r[0], err);
    while (more && st == CS_OK) {
        st = wait_reqs(c, &r[0], 1, slp, err);
        more = st == CS_OK && c->rbuf[0] != 0;
        if (st == CS_OK && more)
            st = post(c, 0, peer, bytes, tag, &r[0], err);
        if (st == CS_OK)
            st = post(c, 1, peer, bytes, tag, &r[1], err);
        if (st == CS_OK)
            st = wait_reqs(c, &r[1], 1, slp, err);
    }
    return st;
}

/* Every rank idle for idle_s seconds (sleeping 10 ms at a time; a signal
 * ends it): the flows' connections then restart as after a pause of a
 * collective. */
static int idle(double idle_s, cs_err_t *err)
{
    uint64_t end = cs_now_ns() + (uint64_t)(idle_s * 1e9);
    while (cs_now_ns() < end) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
        if (cs_intr_pending())
            return cs_err_set(err, CS_ERR_INTERRUPTED, "interrupted (%s)",
                              cs_intr_signame(cs_intr_exit_code() - 128));
    }
    return CS_OK;
}

int cs__calib_flows(cs__calib_kern_t *c, const int *src, const int *dst, int nflows, size_t bytes,
                   int warm, int iters, double idle_s, double *t, double *rank_t, cs_err_t *err)
{
    uint64_t tag = next_tag(c);
    int me = c->tp->rank, to = -1, from = -1, n = warm + iters;
    if (bytes > c->cap)
        return cs_err_set(err, CS_ERR_RANGE, "calibrate: %zu bytes > buffers of %zu", bytes,
                          c->cap);
    for (int i = 0; i < nflows; i++) {
        if (src[i] == me)
            to = dst[i];
        if (dst[i] == me)
            from = src[i];
    }
    /* per iteration: [0] the rank's last completion (the iteration's time is
     * the largest), [1] its receive's completion (a rank that only sends:
     * its send's), so a receiver's own send does not count as its flow */
    double *mine = calloc((size_t)n * 2, sizeof(double));
    double *all = calloc((size_t)n * 2 * (size_t)c->tp->nranks, sizeof(double));
    int st = mine && all ? CS_OK : cs_err_set(err, CS_ERR_NOMEM, "calibrate: out of memory");
    for (int i = 0; i < n && st == CS_OK; i++) {
        cs_tp_req_t r[2];
        int k = 0;
        if (idle_s > 0)
            st = idle(idle_s, err);
        if (from >= 0 && st == CS_OK)
            st = post(c, 0, from, bytes, tag, &r[k++], err);
        if (st == CS_OK)
            st = cs_boot_barrier(c->boot, err);
        uint64_t t0 = cs_now_ns();
        if (st == CS_OK && to >= 0)
            st = post(c, 1, to, bytes, tag, &r[k++], err);
        if (st == CS_OK && from >= 0) /* the receive first: the send progresses meanwhile */
            st = wait_reqs(c, r, 1, 1000000, err);
        mine[2 * i + 1] = (double)(cs_now_ns() - t0) * 1e-9;
        if (st == CS_OK)
            st = wait_reqs(c, r, k, 1000000, err);
        mine[2 * i] = (double)(cs_now_ns() - t0) * 1e-9;
        if (from < 0)
            mine[2 * i + 1] = mine[2 * i];
    }
    if (st == CS_OK)
        st = cs_boot_allgather(c->boot, mine, (size_t)n * 2 * sizeof(double), all, err);
    for (int r = 0; rank_t && r < c->tp->nranks && st == CS_OK; r++) {
        /* rank r's median (receivers: their receive's, the flow's time) */
        const double *v = all + (size_t)r * (size_t)n * 2;
        double tmp[64];
        int k = iters < 64 ? iters : 64;
        for (int i = 0; i < k; i++)
            tmp[i] = v[2 * (warm + i) + 1];
        rank_t[r] = cs_fit_median(tmp, k);
    }
    for (int i = warm; i < n && st == CS_OK; i++) {
        double mx = 0;
        for (int r = 0; r < c->tp->nranks; r++) {
            double x = all[(size_t)r * (size_t)n * 2 + 2 * (size_t)i];
            mx = x > mx ? x : mx;
        }
        t[i - warm] = mx;
    }
    free(mine);
    free(all);
    return st;
}

int cs__calib_reduce(size_t bytes, cs_dtype_t dt, cs_op_t op, int iters, double *t, cs_err_t *err)
{
    size_t es = cs_dtype_size(dt), n = bytes / es;
    cs_reduce_fn_t fn = cs_reduce_fn(dt, op);
    if (!fn || n == 0)
        return cs_err_set(err, CS_ERR_INVAL, "calibrate: no reduction for %s", cs_dtype_name(dt));
    char *src = aligned_alloc(4096, (n * es + 4095) / 4096 * 4096);
    char *dst = aligned_alloc(4096, (n * es + 4095) / 4096 * 4096);
    if (!src || !dst) {
        free(src);
        free(dst);
        return cs_err_set(err, CS_ERR_NOMEM, "calibrate: out of memory");
    }
    memset(src, 0, n * es); /* zeros: a valid value of every type, no denormals */
    memset(dst, 0, n * es);
    fn(dst, src, n); /* pages touched, caches warm */
    for (int i = 0; i < iters; i++) {
        uint64_t t0 = cs_now_ns();
        fn(dst, src, n);
        t[i] = (double)(cs_now_ns() - t0) * 1e-9;
        if (cs_intr_pending()) {
            free(src);
            free(dst);
            return cs_err_set(err, CS_ERR_INTERRUPTED, "interrupted");
        }
    }
    free(src);
    free(dst);
    return CS_OK;
}
