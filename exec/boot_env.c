/*
 * boot_env.c - launcher-less bootstrap: RANK, WORLD_SIZE, MASTER_ADDR
 * (default 127.0.0.1) and MASTER_PORT (default 29500), as in PyTorch.
 *
 * Rank 0 listens on MASTER_ADDR:MASTER_PORT; every other rank connects
 * (retrying while the listener is not up yet) and introduces itself with
 * {magic, rank, size}.  The connections stay open for the run: allgather is
 * a gather to rank 0 followed by a broadcast, barrier a one-byte allgather.
 * Every socket operation waits in poll() bounded by the deadline of the
 * call, so a rank that never comes, or dies (EOF / reset), ends the call
 * with an error naming it instead of a hang.
 *
 * Messages are framed (env_hdr_t: DATA with its length, or LEAVE).  A rank
 * interrupted by a signal (cs_intr.h; the waits look at the flag every
 * SLICE_MS) sends LEAVE naming itself and its signal on its connections;
 * rank 0 passes a LEAVE on to every other rank, and a rank that closes
 * after learning of an interrupted rank in another way (its transport)
 * sends LEAVE naming that rank.  So a rank waiting here fails with
 * "rank R was interrupted (SIGINT)" at once, not with a lost connection.
 * A LEAVE is sent only between messages: a connection whose message was
 * cut in the middle is just closed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cs_env.h"
#include "cs_boot.h"
#include "cs_intr.h"
#include "cs_log.h"
#include "cs_transport.h"
#include "tp_util.h"

#define ENV_MAGIC 0x63736274u /* "csbt" */
#define ENV_DATA 0x63730001u
#define ENV_LEAVE 0x63730002u
#define SLICE_MS 50 /* waits look at the interrupt flag this often */
#define ENV_RETRY_US 20000 /* rank 0 not listening yet: connect again after this */
#define ENV_MAX_RANKS (1 << 20) /* WORLD_SIZE above it is a typo, not a job */
#define ENV_PORT 29500 /* MASTER_PORT when unset (torch.distributed's default) */
#define ENV_ADDR "127.0.0.1" /* MASTER_ADDR when unset: all ranks on this host */

typedef struct env_hdr {
    uint32_t kind;      /* ENV_DATA or ENV_LEAVE */
    uint32_t len;       /* DATA: payload bytes */
    int32_t rank, sig;  /* LEAVE: the rank interrupted and its signal */
} env_hdr_t;

typedef struct boot_env {
    cs_boot_t base; /* first member */
    int listen_fd;
    int *fds;      /* rank 0: fds[r] connection to rank r; others: fds[0] to rank 0 */
    char *broken;  /* broken[r]: a message to fds[r] was cut off (no LEAVE on it) */
    int leave_sent; /* the rank named by the LEAVE sent, + 1; 0: none sent */
} boot_env_t;

/* CS_ERR_PEER: "rank ME: rank WHO was interrupted (SIGxxx)". */
static int left_err(cs_err_t *err, int me, int who, int sig)
{
    char why[CS_TP_LEFT_MAX];
    cs_tp_left_text(who, sig, why, sizeof(why));
    return cs_err_set(err, CS_ERR_PEER, "rank %d: %s", me, why);
}

/* Read or write exactly len bytes before `deadline`. */
static int io_full(cs_boot_t *b, int fd, void *buf, size_t len, int wr, double deadline,
                   int me, int peer, cs_err_t *err)
{
    char *p = buf;
    while (len > 0) {
        /* first without waiting: a message that fits the socket goes out
         * whole, never cut by an interrupt between its header and payload */
        ssize_t n = wr ? send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT)
                       : recv(fd, p, len, MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n == 0 || (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK))
            return cs_err_set(err, CS_ERR_PEER,
                              "rank %d: lost the bootstrap connection to rank %d (%s): did it "
                              "die?",
                              me, peer, n == 0 ? "closed" : strerror(errno));
        double left = deadline - cs_now_s();
        if (b)
            cs__boot_heard(b);
        int sig = cs_intr_pending(), who = cs_intr_peer(&sig);
        if (cs_intr_pending())
            return cs_err_set(err, CS_ERR_INTERRUPTED, "rank %d: interrupted (%s)", me,
                              cs_intr_signame(cs_intr_pending()));
        if (who >= 0 && who != me) /* heard of through the transport */
            return left_err(err, me, who, sig);
        if (left <= 0)
            return cs_err_set(err, CS_ERR_TIMEOUT,
                              "rank %d: timed out in the bootstrap waiting for rank %d", me, peer);
        struct pollfd pfd = {.fd = fd, .events = wr ? POLLOUT : POLLIN};
        int ms = (int)(left * 1000) + 1;
        (void)poll(&pfd, 1, ms < SLICE_MS ? ms : SLICE_MS); /* then try again */
    }
    return CS_OK;
}

/* LEAVE naming `rank` (signal sig) on every connection that is between
 * two messages; once per process and rank named. */
static void send_leave(boot_env_t *e, int rank, int sig)
{
    if (e->leave_sent == rank + 1)
        return;
    e->leave_sent = rank + 1;
    env_hdr_t h = {ENV_LEAVE, 0, rank, sig};
    for (int r = 0; r < e->base.size; r++)
        if (e->fds[r] >= 0 && !e->broken[r] && r != rank)
            (void)!send(e->fds[r], &h, sizeof(h), MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* A DATA message of len bytes to rank `peer` over its connection. */
static int send_msg(boot_env_t *e, int peer, const void *buf, size_t len, double deadline,
                    cs_err_t *err)
{
    int fd = e->fds[e->base.rank == 0 ? peer : 0], me = e->base.rank;
    env_hdr_t h = {ENV_DATA, (uint32_t)len, me, 0}, in;
    cs_err_t tmp;
    cs_err_clear(&tmp);
    int st = io_full(&e->base, fd, &h, sizeof(h), 1, deadline, me, peer, &tmp);
    if (st == CS_OK)
        st = io_full(&e->base, fd, (void *)buf, len, 1, deadline, me, peer, &tmp);
    if (st == CS_OK)
        return CS_OK;
    e->broken[e->base.rank == 0 ? peer : 0] = 1; /* perhaps cut in the middle */
    /* the peer closed: did it say why first?  (nothing else can be queued:
     * it reads from this rank before it writes to it) */
    if (st == CS_ERR_PEER && recv(fd, &in, sizeof(in), MSG_DONTWAIT) == (ssize_t)sizeof(in) &&
        in.kind == ENV_LEAVE) {
        cs_intr_note_peer(in.rank, in.sig);
        if (me == 0)
            send_leave(e, in.rank, in.sig);
        return left_err(err, me, in.rank, in.sig);
    }
    return cs_err_set(err, st, "%s", tmp.msg);
}

/* A DATA message of len bytes from rank `peer`; a LEAVE fails naming the
 * rank it names (rank 0 passes it on). */
static int recv_msg(boot_env_t *e, int peer, void *buf, size_t len, double deadline,
                    cs_err_t *err)
{
    int fd = e->fds[e->base.rank == 0 ? peer : 0], me = e->base.rank;
    env_hdr_t h;
    int st = io_full(&e->base, fd, &h, sizeof(h), 0, deadline, me, peer, err);
    if (st != CS_OK)
        return st;
    if (h.kind == ENV_LEAVE) {
        cs_intr_note_peer(h.rank, h.sig);
        if (me == 0)
            send_leave(e, h.rank, h.sig);
        return left_err(err, me, h.rank, h.sig);
    }
    if (h.kind != ENV_DATA || h.len != len)
        return cs_err_set(err, CS_ERR_MISMATCH, "rank %d: the bootstrap got a message of %u "
                          "bytes (kind %#x) from rank %d, expected %zu: ranks out of step",
                          me, h.len, h.kind, peer, len);
    return io_full(&e->base, fd, buf, len, 0, deadline, me, peer, err);
}

static int env_allgather(cs_boot_t *b, const void *mine, size_t len, void *all, cs_err_t *err)
{
    boot_env_t *e = (boot_env_t *)b;
    double deadline = cs_now_s() + b->timeout_s;
    int st = CS_OK;
    if (b->rank != 0) {
        st = send_msg(e, 0, mine, len, deadline, err);
        if (st == CS_OK)
            st = recv_msg(e, 0, all, len * (size_t)b->size, deadline, err);
    } else {
        memcpy(all, mine, len);
        for (int r = 1; r < b->size && st == CS_OK; r++)
            st = recv_msg(e, r, (char *)all + (size_t)r * len, len, deadline, err);
        for (int r = 1; r < b->size && st == CS_OK; r++)
            st = send_msg(e, r, all, len * (size_t)b->size, deadline, err);
    }
    if (st == CS_ERR_INTERRUPTED)
        send_leave(e, b->rank, cs_intr_pending());
    return st;
}

static int env_barrier(cs_boot_t *b, cs_err_t *err)
{
    char one = 1, *all = calloc((size_t)b->size, 1);
    if (!all)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    int st = env_allgather(b, &one, 1, all, err);
    free(all);
    return st;
}

static void env_close(cs_boot_t *b)
{
    boot_env_t *e = (boot_env_t *)b;
    if (!e)
        return;
    int sig = 0, who = cs_intr_peer(&sig);
    if (e->fds && e->broken && cs_intr_pending())
        send_leave(e, b->rank, cs_intr_pending());
    else if (e->fds && e->broken && who >= 0)
        send_leave(e, who, sig); /* tell those that did not hear it */
    for (int r = 0; e->fds && r < b->size; r++)
        if (e->fds[r] >= 0)
            close(e->fds[r]);
    if (e->listen_fd >= 0)
        close(e->listen_fd);
    free(e->fds);
    free(e->broken);
    free(e);
}

static const cs__boot_ops_t env_ops = {
    .size = sizeof(cs__boot_ops_t),
    .name = "env",
    .allgather = env_allgather,
    .barrier = env_barrier,
    .close = env_close,
};

static int env_int(const char *name, long def, long min, long max, long *out, cs_err_t *err)
{
    const char *s = cs_env_get(name);
    if (!s) {
        if (def < min)
            return cs_err_set(err, CS_ERR_NOTFOUND, "environment variable %s is not set", name);
        *out = def;
        return CS_OK;
    }
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < min || v > max)
        return cs_err_set(err, CS_ERR_PARSE, "%s: expected an integer in [%ld, %ld], found '%s'",
                          name, min, max, s);
    *out = v;
    return CS_OK;
}

static int resolve(const char *host, long port, struct sockaddr_in *sa, cs_err_t *err)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc || !res)
        return cs_err_set(err, CS_ERR_NOTFOUND, "MASTER_ADDR '%s': %s", host, gai_strerror(rc));
    memcpy(sa, res->ai_addr, sizeof(*sa));
    sa->sin_port = htons((uint16_t)port);
    freeaddrinfo(res);
    return CS_OK;
}

static int root_accept(boot_env_t *e, const struct sockaddr_in *sa, double deadline,
                       cs_err_t *err)
{
    int one = 1, me = 0, size = e->base.size;
    e->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (e->listen_fd < 0)
        return cs_err_set(err, CS_ERR_IO, "socket: %s", strerror(errno));
    setsockopt(e->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(e->listen_fd, (const struct sockaddr *)sa, sizeof(*sa)) ||
        listen(e->listen_fd, size))
        return cs_err_set(err, CS_ERR_IO, "rank 0: cannot listen on MASTER_PORT %d: %s",
                          ntohs(sa->sin_port), strerror(errno));
    for (int got = 1; got < size;) {
        double left = deadline - cs_now_s();
        struct pollfd pfd = {.fd = e->listen_fd, .events = POLLIN};
        if (cs_intr_pending())
            return cs_err_set(err, CS_ERR_INTERRUPTED, "rank 0: interrupted (%s) while waiting "
                              "for the other ranks to join", cs_intr_signame(cs_intr_pending()));
        int ms = (int)(left * 1000) + 1, pr = 0;
        if (left > 0 && (pr = poll(&pfd, 1, ms < SLICE_MS ? ms : SLICE_MS)) <= 0 &&
            deadline - cs_now_s() > 0)
            continue; /* a slice (or EINTR) */
        if (left <= 0 || pr <= 0) {
            int missing = -1;
            for (int r = 1; r < size && missing < 0; r++)
                if (e->fds[r] < 0)
                    missing = r;
            return cs_err_set(err, CS_ERR_TIMEOUT,
                              "rank 0: timed out waiting for rank %d (and %d others) to join",
                              missing, size - got - 1);
        }
        int fd = accept(e->listen_fd, NULL, NULL);
        if (fd < 0)
            continue;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        uint32_t hello[3];
        cs_err_t tmp;
        cs_err_clear(&tmp);
        if (io_full(NULL, fd, hello, sizeof(hello), 0, deadline, me, -1, &tmp) != CS_OK ||
            hello[0] != ENV_MAGIC) {
            close(fd);
            continue;
        }
        int r = (int)hello[1];
        if ((int)hello[2] != size || r < 1 || r >= size || e->fds[r] >= 0) {
            close(fd);
            return cs_err_set(err, CS_ERR_MISMATCH,
                              "rank 0: a process claiming rank %d of %u joined a job of %d ranks",
                              r, hello[2], size);
        }
        e->fds[r] = fd;
        got++;
    }
    return CS_OK;
}

static int child_connect(boot_env_t *e, const struct sockaddr_in *sa, double deadline,
                         cs_err_t *err)
{
    int one = 1;
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0)
            return cs_err_set(err, CS_ERR_IO, "socket: %s", strerror(errno));
        if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0) {
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            e->fds[0] = fd;
            break;
        }
        close(fd);
        if (cs_intr_pending())
            return cs_err_set(err, CS_ERR_INTERRUPTED, "rank %d: interrupted (%s) while "
                              "connecting to rank 0", e->base.rank,
                              cs_intr_signame(cs_intr_pending()));
        if (cs_now_s() > deadline)
            return cs_err_set(err, CS_ERR_TIMEOUT,
                              "rank %d: timed out connecting to rank 0 at MASTER_ADDR:"
                              "MASTER_PORT (%s:%d)",
                              e->base.rank, inet_ntoa(sa->sin_addr), ntohs(sa->sin_port));
        usleep(ENV_RETRY_US);
    }
    uint32_t hello[3] = {ENV_MAGIC, (uint32_t)e->base.rank, (uint32_t)e->base.size};
    return io_full(NULL, e->fds[0], hello, sizeof(hello), 1, deadline, e->base.rank, 0, err);
}

int cs__boot_env_open(const cs_boot_config_t *cfg, cs_boot_t **out, cs_err_t *err)
{
    long rank = 0, size = 0, port = 0;
    int st = env_int("WORLD_SIZE", -1, 1, ENV_MAX_RANKS, &size, err);
    if (st == CS_OK)
        st = env_int("RANK", -1, 0, size - 1, &rank, err);
    if (st == CS_OK)
        st = env_int("MASTER_PORT", ENV_PORT, 1, 65535, &port, err);
    if (st != CS_OK)
        return st;
    const char *host = cs_env_get("MASTER_ADDR") ? cs_env_get("MASTER_ADDR") : ENV_ADDR;
    struct sockaddr_in sa;
    st = resolve(host, port, &sa, err);
    if (st != CS_OK)
        return st;
    boot_env_t *e = calloc(1, sizeof(*e));
    if (!e)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    e->base.ops = &env_ops;
    e->base.rank = (int)rank;
    e->base.size = (int)size;
    e->base.timeout_s = cfg->timeout_s;
    e->listen_fd = -1;
    e->fds = malloc((size_t)size * sizeof(int));
    e->broken = calloc((size_t)size, 1);
    if (!e->fds || !e->broken) {
        free(e->fds);
        free(e->broken);
        free(e);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    }
    for (long r = 0; r < size; r++)
        e->fds[r] = -1;
    double deadline = cs_now_s() + cfg->timeout_s;
    st = rank == 0 ? root_accept(e, &sa, deadline, err) : child_connect(e, &sa, deadline, err);
    if (st != CS_OK) {
        env_close(&e->base);
        return st;
    }
    CS_INFO("exec", "env bootstrap: rank %ld of %ld via %s:%ld", rank, size, host, port);
    *out = &e->base;
    return CS_OK;
}
