/*
 * tp_shm_seg.c - segments, addresses and liveness of the shared-memory
 * transport (layout in tp_shm.h, protocol in tp_shm.c).
 *
 * Segment.  Each rank creates one anonymous memfd (no name anywhere, so a
 * crash leaves nothing behind in /dev/shm and no stale name can clash with
 * a later run) and maps it.  Its address blob carries pid, fd number, a
 * random nonce, the boot id and host name.  A peer maps it by opening
 * /proc/PID/fd/FD, then checks the segment header (magic, nonce, pid,
 * layout) so that a recycled pid or another host is never taken for the
 * peer.  The fd is closed once every peer has attached (the mappings
 * stay).
 *
 * Attach barrier (insert_addrs).  Rank p, once it has mapped rank r's
 * segment and tried CMA on r (process_vm_readv of r's probe word, which
 * must read back r's nonce), writes attach[p] = 1 | cma << 1 into r's
 * header.  Rank r waits until every attach[p] is set: then it may close the
 * fd, and it knows per peer whether that peer can read its memory, which
 * decides the large-message mode of every send to it (CMA or bounce).
 *
 * Liveness.  A pidfd per peer (pidfd_open; kill(pid, 0) where there is
 * none) polls readable once the peer has exited, and a peer's header says
 * `closed` once it closed its transport; both mark the peer dead.  A peer
 * that left because of a signal wrote it into `intr` first (leave): then
 * cs_tp.left_peer names it.
 *
 * Transport memory (cs_tp_mem_ops_t, the engine's buffers).  Each region
 * is a memfd of its own, kept open while it lives; an RTS from it names
 * (region id, fd, size, offset), and the receiver maps the region through
 * /proc/PID/fd/FD the first time (then keeps the mapping in a small cache
 * per peer) and copies the message with memcpy: one copy, at memory speed,
 * without the page pinning of CMA.  That first mapping is the one system
 * call of the progress path outside CMA; it happens in warm-up runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cs_intr.h"
#include "cs_log.h"
#include "tp_shm.h"

#define SHM_ATTACH_NAP_NS 100000 /* the attach barrier looks at its peers this often */
#define SHM_PATH_MAX 64          /* "/proc/PID/fd/FD" */

static size_t round_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

static uint64_t random_nonce(void)
{
    uint64_t v = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
            v = 0;
        close(fd);
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return v ^ ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40);
}

/* Pointers into the inboxes: mine (in my segment) and the peers'. */
static char *inbox(void *seg, const shm_seg_hdr_t *h, int sender)
{
    return (char *)seg + h->inbox_off + (size_t)sender * h->inbox_stride;
}

int cs__shm_seg_create(tp_shm_t *t, cs_err_t *err)
{
    const shm_params_t *p = &t->prm;
    int n = t->base.nranks;
    size_t slots_off = round_up(SHM_INBOX_CELLS + (size_t)p->ncells * SHM_CELL, SHM_PAGE);
    size_t stride = round_up(slots_off + (size_t)p->nslots * p->slot, SHM_PAGE);
    size_t inbox_off = round_up(SHM_ATTACH_OFF + sizeof(uint32_t) * (size_t)n, SHM_PAGE);
    size_t bytes = inbox_off + stride * (size_t)n;
    t->nonce = random_nonce();
    t->probe = t->nonce;
    t->memfd = memfd_create("collstep-shm", MFD_CLOEXEC);
    if (t->memfd < 0)
        return cs_err_set(err, CS_ERR_UNSUPPORTED, "shm transport: memfd_create: %s",
                          strerror(errno));
    if (ftruncate(t->memfd, (off_t)bytes) != 0)
        return cs_err_set(err, CS_ERR_NOMEM, "shm transport: cannot size a segment of %zu "
                          "bytes: %s", bytes, strerror(errno));
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, t->memfd, 0);
    if (m == MAP_FAILED)
        return cs_err_set(err, CS_ERR_NOMEM, "shm transport: mmap of %zu bytes: %s", bytes,
                          strerror(errno));
    t->hdr = m;
    t->seg_bytes = bytes;
    shm_seg_hdr_t *h = t->hdr;
    h->nonce = t->nonce;
    h->nranks = (uint32_t)n;
    h->owner = (uint32_t)t->base.rank;
    h->ncells = p->ncells;
    h->nslots = p->nslots;
    h->slot_bytes = p->slot;
    h->eager_max = p->eager_max;
    h->inbox_off = inbox_off;
    h->inbox_stride = stride;
    h->seg_bytes = bytes;
    h->pid = (int32_t)getpid();
    /* Touch the rings now (tmpfs pages are allocated on first write), not
     * in the progress path; bounce slots stay untouched until used. */
    for (int s = 0; s < n; s++)
        for (size_t off = 0; off < SHM_INBOX_CELLS + (size_t)p->ncells * SHM_CELL;
             off += SHM_PAGE)
            inbox(m, h, s)[off] = 0;
    for (int s = 0; s < n; s++) {
        shm_peer_t *pe = &t->peers[s];
        char *ib = inbox(m, h, s);
        pe->in_head = (uint64_t *)(ib + SHM_INBOX_HEAD);
        pe->in_released = (uint64_t *)(ib + SHM_INBOX_RELEASED);
        pe->in_cells = ib + SHM_INBOX_CELLS;
        pe->in_slots = ib + slots_off;
    }
    __atomic_store_n(&h->magic, SHM_MAGIC, __ATOMIC_RELEASE);
    return CS_OK;
}

void cs__shm_seg_destroy(tp_shm_t *t)
{
    if (t->hdr)
        __atomic_store_n(&t->hdr->closed, 1u, __ATOMIC_RELEASE);
    for (int r = 0; t->peers && r < t->base.nranks; r++) {
        shm_peer_t *pe = &t->peers[r];
        if (pe->seg && pe->seg != (char *)t->hdr)
            munmap(pe->seg, ((shm_seg_hdr_t *)pe->seg)->seg_bytes);
        if (pe->pidfd >= 0)
            close(pe->pidfd);
    }
    if (t->hdr)
        munmap(t->hdr, t->seg_bytes);
    if (t->memfd >= 0)
        close(t->memfd);
}

static void read_boot_id(char *out, size_t cap)
{
    out[0] = 0;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
    if (!f)
        return;
    if (fgets(out, (int)cap, f))
        out[strcspn(out, "\n")] = 0;
    fclose(f);
}

void cs__shm_blob(const tp_shm_t *t, shm_blob_t *b)
{
    memset(b, 0, sizeof(*b));
    b->magic = SHM_MAGIC;
    b->nonce = t->nonce;
    b->probe = (uint64_t)(uintptr_t)&t->probe;
    b->seg_bytes = t->seg_bytes;
    b->pid = (int32_t)getpid();
    b->fd = t->memfd;
    b->rank = t->base.rank;
    b->nranks = t->base.nranks;
    read_boot_id(b->boot_id, sizeof(b->boot_id));
    if (gethostname(b->host, sizeof(b->host) - 1) != 0)
        snprintf(b->host, sizeof(b->host), "?");
}

/* Record why insert_addrs failed (for cs_boot_connect's message). */
__attribute__((format(printf, 2, 3))) static void why(tp_shm_t *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->base.why, sizeof(t->base.why), fmt, ap);
    va_end(ap);
}

/* Map rank r's segment and check that it is the one its blob names. */
static int map_peer(tp_shm_t *t, int r, const shm_blob_t *b)
{
    shm_peer_t *pe = &t->peers[r];
    pe->pid = b->pid;
    long pfd = syscall(SYS_pidfd_open, (pid_t)b->pid, 0);
    pe->pidfd = pfd >= 0 ? (int)pfd : -1;
    char path[SHM_PATH_MAX];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)b->pid, (int)b->fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || (uint64_t)sb.st_size != b->seg_bytes) {
        /* no such fd: it closed its transport already; no process: it exited */
        int e = fd < 0 ? errno : 0, gone = e == ENOENT;
        struct pollfd pf = {pe->pidfd, POLLIN, 0};
        gone |= pe->pidfd >= 0 ? poll(&pf, 1, 0) > 0 : kill(b->pid, 0) != 0 && errno == ESRCH;
        if (gone)
            why(t, "rank %d gave up or exited during start-up (see its message)", r);
        else
            why(t, "cannot open rank %d's shared memory (%s: %s)", r, path,
                fd < 0 ? strerror(e) : "not its segment");
        if (fd >= 0)
            close(fd);
        return CS_ERR_PEER;
    }
    void *m = mmap(NULL, b->seg_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        why(t, "cannot map rank %d's shared memory: %s", r, strerror(errno));
        return CS_ERR_NOMEM;
    }
    pe->seg = m;
    shm_seg_hdr_t *h = m, *mine = t->hdr;
    if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != SHM_MAGIC || h->nonce != b->nonce ||
        h->pid != b->pid || h->owner != (uint32_t)r) {
        why(t, "%s is not rank %d's segment (pid reused, or another pid namespace?)", path, r);
        return CS_ERR_PEER;
    }
    if (h->nranks != mine->nranks || h->ncells != mine->ncells || h->nslots != mine->nslots ||
        h->slot_bytes != mine->slot_bytes || h->eager_max != mine->eager_max ||
        h->inbox_stride != mine->inbox_stride) {
        why(t, "rank %d's segment has another layout (a different collstep build, or CS_SHM_EAGER?)", r);
        return CS_ERR_MISMATCH;
    }
    char *ib = inbox(m, h, t->base.rank);
    size_t slots_off = round_up(SHM_INBOX_CELLS + (size_t)h->ncells * SHM_CELL, SHM_PAGE);
    pe->out_head = (uint64_t *)(ib + SHM_INBOX_HEAD);
    pe->out_released = (uint64_t *)(ib + SHM_INBOX_RELEASED);
    pe->out_cells = ib + SHM_INBOX_CELLS;
    pe->out_slots = ib + slots_off;
    for (size_t off = 0; off < (size_t)h->ncells * SHM_CELL; off += SHM_PAGE)
        (void)*(volatile char *)(pe->out_cells + off); /* map the ring pages now */
    /* CMA: can I read rank r's memory?  Read its probe word. */
    uint64_t v = 0;
    struct iovec l = {&v, sizeof(v)}, rv = {(void *)(uintptr_t)b->probe, sizeof(v)};
    int cma = process_vm_readv((pid_t)b->pid, &l, 1, &rv, 1, 0) == (ssize_t)sizeof(v) &&
              v == b->nonce;
    pe->cma_in = cma;
    if (!cma)
        CS_INFO("exec", "rank %d: no CMA to rank %d (%s)", t->base.rank, r, strerror(errno));
    uint32_t *att = (uint32_t *)((char *)m + SHM_ATTACH_OFF);
    __atomic_store_n(&att[t->base.rank], 1u | (uint32_t)cma << 1, __ATOMIC_RELEASE);
    return CS_OK;
}

static int same_host(tp_shm_t *t, const shm_blob_t *me, const shm_blob_t *b)
{
    int same = me->boot_id[0] && b->boot_id[0] ? !strcmp(me->boot_id, b->boot_id)
                                               : !strcmp(me->host, b->host);
    if (!same)
        why(t, "rank %d runs on host '%.48s' (boot id %.36s), rank %d on '%.48s' (boot id "
            "%.36s): --transport shm needs all ranks on one host", b->rank,
            b->host, b->boot_id[0] ? b->boot_id : "?", me->rank, me->host,
            me->boot_id[0] ? me->boot_id : "?");
    return same;
}

int cs__shm_attach(tp_shm_t *t, const void *blobs, size_t slot, const size_t *lens)
{
    int n = t->base.nranks, me = t->base.rank;
    shm_blob_t mine;
    cs__shm_blob(t, &mine);
    for (int r = 0; r < n; r++) { /* check every blob before touching any */
        shm_blob_t b;
        if (lens[r] != sizeof(b)) {
            why(t, "rank %d sent a %zu-byte address, not a shm transport's", r, lens[r]);
            return CS_ERR_MISMATCH;
        }
        memcpy(&b, (const char *)blobs + (size_t)r * slot, sizeof(b));
        if (b.magic != SHM_MAGIC || b.rank != r || b.nranks != n) {
            why(t, "rank %d's address is not a shm transport's of this job", r);
            return CS_ERR_MISMATCH;
        }
        if (!same_host(t, &mine, &b))
            return CS_ERR_UNSUPPORTED;
    }
    for (int r = 0; r < n; r++) {
        shm_peer_t *pe = &t->peers[r];
        if (r == me) {
            uint32_t *att = (uint32_t *)((char *)t->hdr + SHM_ATTACH_OFF);
            pe->seg = (char *)t->hdr;
            pe->pid = (int32_t)getpid();
            pe->out_head = pe->in_head;
            pe->out_released = pe->in_released;
            pe->out_cells = pe->in_cells;
            pe->out_slots = pe->in_slots;
            pe->cma = pe->cma_in = 1; /* to self: memcpy */
            __atomic_store_n(&att[me], 3u, __ATOMIC_RELEASE);
            continue;
        }
        shm_blob_t b;
        memcpy(&b, (const char *)blobs + (size_t)r * slot, sizeof(b));
        int st = map_peer(t, r, &b);
        if (st != CS_OK)
            return st;
    }
    /* Wait until every peer has mapped my segment. */
    const uint32_t *att = (const uint32_t *)((char *)t->hdr + SHM_ATTACH_OFF);
    uint64_t deadline = cs_now_ns() + (uint64_t)(t->timeout_s * 1e9);
    for (int r = 0; r < n;) {
        uint32_t a = __atomic_load_n(&att[r], __ATOMIC_ACQUIRE);
        if (a) {
            t->peers[r].cma = (a >> 1) & 1;
            r++;
            continue;
        }
        cs__shm_check_peers(t);
        if (cs_intr_pending()) {
            why(t, "interrupted (%s)", cs_intr_signame(cs_intr_pending()));
            return CS_ERR_INTERRUPTED;
        }
        if (t->base.left_peer) {
            char w[CS_TP_LEFT_MAX];
            cs_tp_left_text(t->base.left_peer - 1, t->base.left_sig, w, sizeof(w));
            why(t, "%s", w);
            return CS_ERR_PEER;
        }
        for (int q = r; q < n; q++)
            if (t->peers[q].dead && !__atomic_load_n(&att[q], __ATOMIC_ACQUIRE)) {
                why(t, "rank %d exited or failed before mapping this rank's shared memory", q);
                return CS_ERR_PEER;
            }
        if (cs_now_ns() > deadline) {
            why(t, "rank %d did not map this rank's shared memory within %.0f s", r,
                t->timeout_s);
            return CS_ERR_TIMEOUT;
        }
        struct timespec ts = {0, SHM_ATTACH_NAP_NS};
        nanosleep(&ts, NULL);
    }
    close(t->memfd); /* every peer holds its own mapping now */
    t->memfd = -1;
    return CS_OK;
}

int cs__shm_check_peers(tp_shm_t *t)
{
    int n = t->base.nranks, found = 0, npfd = 0;
    for (int r = 0; r < n; r++) {
        shm_peer_t *pe = &t->peers[r];
        if (r == t->base.rank || pe->dead || !pe->seg)
            continue;
        if (__atomic_load_n(&((shm_seg_hdr_t *)pe->seg)->closed, __ATOMIC_ACQUIRE)) {
            pe->dead = 1, found++;
        } else if (pe->pidfd >= 0) {
            t->pfds[npfd].fd = pe->pidfd;
            t->pfds[npfd].events = POLLIN;
            t->pfds[npfd++].revents = 0;
        } else if (kill(pe->pid, 0) != 0 && errno == ESRCH) {
            pe->dead = 1, found++;
        }
    }
    if (npfd > 0 && poll(t->pfds, (nfds_t)npfd, 0) > 0) {
        for (int i = 0; i < npfd; i++) {
            if (!t->pfds[i].revents)
                continue;
            for (int r = 0; r < n; r++)
                if (t->peers[r].pidfd == t->pfds[i].fd && !t->peers[r].dead)
                    t->peers[r].dead = 1, found++;
        }
    }
    for (int r = 0; found && r < n; r++) { /* did the dead say why? */
        shm_peer_t *pe = &t->peers[r];
        if (r == t->base.rank || pe->dead != 1 || !pe->seg || t->base.left_peer == r + 1)
            continue;
        int sig = __atomic_load_n(&((shm_seg_hdr_t *)pe->seg)->intr, __ATOMIC_RELAXED);
        if (sig)
            cs__tp_peer_left(&t->base, r, sig > 0 ? sig : 0);
    }
    return found;
}

/* ---- transport memory ------------------------------------------------- */

static int mem_alloc(cs_tp_t *tp, size_t len, void **buf, void **mr)
{
    tp_shm_t *t = (tp_shm_t *)tp;
    shm_region_t *rg = calloc(1, sizeof(*rg));
    if (!rg)
        return CS_ERR_NOMEM;
    rg->len = round_up(len ? len : 1, SHM_PAGE);
    rg->fd = memfd_create("collstep-buf", MFD_CLOEXEC);
    if (rg->fd < 0 || ftruncate(rg->fd, (off_t)rg->len) != 0) {
        CS_ERROR("exec", "rank %d: shm transport: memory of %zu bytes: %s", tp->rank, rg->len,
                 strerror(errno));
        goto fail;
    }
    void *m = mmap(NULL, rg->len, PROT_READ | PROT_WRITE, MAP_SHARED, rg->fd, 0);
    if (m == MAP_FAILED)
        goto fail;
    rg->base = m;
    rg->id = ++t->next_region;
    *buf = m;
    *mr = rg;
    return CS_OK;
fail:
    if (rg->fd >= 0)
        close(rg->fd);
    free(rg);
    return CS_ERR_NOMEM;
}

static void mem_free(cs_tp_t *tp, void *buf, void *mr)
{
    shm_region_t *rg = mr;
    (void)tp, (void)buf;
    if (!rg)
        return;
    munmap(rg->base, rg->len);
    close(rg->fd);
    free(rg);
}

const cs_tp_mem_ops_t cs__shm_mem_ops = {
    .size = sizeof(cs_tp_mem_ops_t),
    .alloc = mem_alloc,
    .free = mem_free,
};

char *cs__shm_map(tp_shm_t *t, int peer, const shm_rts_t *r)
{
    shm_peer_t *pe = &t->peers[peer];
    if (peer == t->base.rank)
        return NULL; /* to self: the address itself is good (CMA path) */
    for (int i = 0; i < SHM_MAPS; i++) {
        shm_map_t *m = &pe->maps[i];
        if (m->ptr && m->id == r->rid && m->fd == r->fd && m->len == r->rlen)
            return m->ptr;
    }
    char path[SHM_PATH_MAX];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pe->pid, (int)r->fd);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || (uint64_t)sb.st_size != r->rlen) {
        CS_DEBUG("exec", "rank %d: cannot map region %u of rank %d (%s)", t->base.rank, r->rid,
                 peer, fd < 0 ? strerror(errno) : "size differs");
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    /* The slot to reuse: the oldest mapping no copy under way reads from. */
    shm_map_t *m = NULL;
    for (int k = 0; k < SHM_MAPS && !m; k++) {
        shm_map_t *c = &pe->maps[(pe->next_map + (uint32_t)k) % SHM_MAPS];
        int busy = 0;
        for (int32_t i = t->copies.head; c->ptr && i >= 0 && !busy; i = t->opool.next[i])
            busy = t->ops[i].peer == peer && t->ops[i].raddr >= (uint64_t)(uintptr_t)c->ptr &&
                   t->ops[i].raddr < (uint64_t)(uintptr_t)c->ptr + c->len;
        if (!busy) {
            m = c;
            pe->next_map += (uint32_t)k + 1;
        }
    }
    if (!m) {
        close(fd);
        return NULL; /* all in use: the caller copies by CMA instead */
    }
    void *p = mmap(NULL, r->rlen, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return NULL;
    if (m->ptr)
        munmap(m->ptr, m->len);
    m->ptr = p;
    m->len = r->rlen;
    m->id = r->rid;
    m->fd = r->fd;
    return p;
}

void cs__shm_unmap_all(tp_shm_t *t)
{
    for (int r = 0; t->peers && r < t->base.nranks; r++)
        for (int i = 0; i < SHM_MAPS; i++) {
            shm_map_t *m = &t->peers[r].maps[i];
            if (m->ptr)
                munmap(m->ptr, m->len);
            m->ptr = NULL;
        }
}
