/*
 * cs_child.c - work in a watched child process (contract in cs_child.h).
 *
 * The pipe carries the child's result bytes, then a trailer its side of
 * cs_child_start writes once fn returned: a magic word, fn's value and
 * its error record.  A child that exits 0 with the trailer in place
 * finished; anything else (a signal, an exit inside fn, a trailer cut
 * short) is a child that did not, said in words by cs_child_death.
 *
 * The parent waits in slices of at most 50 ms: poll on the pipes, then a
 * zero-timeout sigtimedwait for the signals it blocks, then waitpid
 * WNOHANG for the children whose pipe reached its end.  A child is reaped
 * only once its pipe is at end of file (or it was killed), so its bytes
 * are never lost.
 */
#define _GNU_SOURCE
#include "cs_child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cs_grow.h"
#include "cs_intr.h"
#include "cs_time.h"

#define TRAILER_MAGIC 0x63736368u /* "csch" */
#define SLICE_MS 50

typedef struct trailer {
    uint32_t magic;
    int value;
    cs_err_t err;
} trailer_t;

/* The signal blocking shared by every child being watched. */
static int nwatch;
static sigset_t saved_mask;

/* SIGINT, SIGTERM and SIGHUP, but for those the process ignores (nohup,
 * a background job's SIGINT): a blocked signal is queued even when ignored,
 * and the wait would take it as an interruption. */
static void watch_sigs(sigset_t *s)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    sigemptyset(s);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaddset(s, sigs[i]);
    }
}

static void watch_begin(cs_child_t *c)
{
    if (nwatch++ == 0) {
        sigset_t s;
        watch_sigs(&s);
        pthread_sigmask(SIG_BLOCK, &s, &saved_mask);
    }
    c->watched = 1;
}

static void watch_end(cs_child_t *c)
{
    if (!c->watched)
        return;
    c->watched = 0;
    if (--nwatch == 0)
        pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
}

/* A signal taken from the blocked set, or the one cs_intr recorded; 0. */
static int take_signal(void)
{
    if (cs_intr_pending())
        return cs_intr_pending();
    sigset_t s;
    watch_sigs(&s);
    struct timespec zero = {0, 0};
    int sig = sigtimedwait(&s, NULL, &zero);
    return sig > 0 ? sig : 0;
}

int cs_child_put(int fd, const void *buf, size_t len)
{
    for (const char *p = buf; len > 0;) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w, len -= (size_t)w;
    }
    return 0;
}

int cs_child_start(cs_child_t *c, const char *what, double timeout_s, cs_child_fn_t fn,
                   void *ctx, cs_err_t *err)
{
    memset(c, 0, sizeof(*c));
    c->what = what;
    c->fd = -1;
    c->timeout_s = timeout_s;
    int fd[2];
    /* close-on-exec: a program another thread starts meanwhile must not
     * keep the write end, or the end of the result would never come */
    if (pipe2(fd, O_CLOEXEC) != 0)
        return cs_err_set(err, CS_ERR_IO, "pipe: %s", strerror(errno));
    watch_begin(c);
    fflush(NULL); /* nothing buffered is written twice */
    pid_t parent = getpid(), pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fd[0]), close(fd[1]);
        watch_end(c);
        return cs_err_set(err, CS_ERR_IO, "fork: %s", strerror(e));
    }
    if (pid == 0) {
        close(fd[0]);
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) /* the parent died before prctl */
            _exit(128 + SIGKILL);
        /* the child's own children are watched from scratch */
        sigset_t mask = saved_mask;
        nwatch = 0;
        pthread_sigmask(SIG_SETMASK, &mask, NULL);
        signal(SIGPIPE, SIG_IGN); /* a parent gone: cs_child_put returns -1 */
        trailer_t t;
        memset(&t, 0, sizeof(t));
        t.magic = TRAILER_MAGIC;
        cs_err_clear(&t.err);
        t.value = fn(ctx, fd[1], &t.err);
        fflush(NULL);
        _exit(cs_child_put(fd[1], &t, sizeof(t)) == 0 ? 0 : 3);
    }
    close(fd[1]);
    fcntl(fd[0], F_SETFL, fcntl(fd[0], F_GETFL) | O_NONBLOCK);
    fcntl(fd[0], F_SETFD, FD_CLOEXEC);
    c->pid = pid;
    c->fd = fd[0];
    if (timeout_s > 0)
        c->deadline = cs_now_s() + timeout_s;
    return CS_OK;
}

static void drain(cs_child_t *c)
{
    char scratch[4096];
    for (;;) {
        if (!c->nomem && cs_grow(&c->data, &c->cap, c->len + 65536, 1, 65536) != CS_OK)
            c->nomem = 1;
        char *dst = c->nomem ? scratch : c->data + c->len;
        size_t room = c->nomem ? sizeof(scratch) : c->cap - c->len;
        ssize_t r = read(c->fd, dst, room);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return;
        if (r <= 0) { /* end of file (or an error: nothing more will come) */
            close(c->fd);
            c->fd = -1;
            return;
        }
        if (!c->nomem)
            c->len += (size_t)r;
        if ((size_t)r < room)
            return; /* poll says when more is there */
    }
}

static void kill_reap(cs_child_t *c)
{
    if (c->ended || c->pid <= 0)
        return;
    kill(c->pid, SIGKILL);
    while (waitpid(c->pid, &c->wstatus, 0) < 0 && errno == EINTR)
        ;
    c->ended = 1;
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
}

/* cs_child_poll with pf / idx room for n children (NULL: none). */
static int poll_loop(cs_child_t *const *v, int n, int timeout_ms, double until, struct pollfd *pf,
                     int *idx)
{
    for (;;) {
        /* children that ended, or ran past their deadline */
        double now = cs_now_s(), next = until;
        for (int i = 0; i < n; i++) {
            cs_child_t *c = v[i];
            if (!c || c->ended || c->pid <= 0)
                continue;
            if (c->fd < 0 && waitpid(c->pid, &c->wstatus, WNOHANG) == c->pid) {
                c->ended = 1;
                return i;
            }
            if (c->deadline > 0 && now >= c->deadline) {
                kill_reap(c);
                c->timed_out = 1;
                return i;
            }
            if (c->deadline > 0 && (next == 0 || c->deadline < next))
                next = c->deadline;
        }
        int sig = take_signal();
        if (sig) {
            int first = -1;
            for (int i = 0; i < n; i++)
                if (v[i] && !v[i]->ended && v[i]->pid > 0) {
                    kill_reap(v[i]);
                    v[i]->sig = sig;
                    if (first < 0)
                        first = i;
                }
            cs_intr_raise(sig);
            if (first >= 0)
                return first;
        }
        if (timeout_ms >= 0 && now >= until)
            return -1;
        int np = 0, at_eof = 0, live = 0;
        for (int i = 0; i < n; i++) {
            cs_child_t *c = v[i];
            if (!c || c->ended || c->pid <= 0)
                continue;
            live++;
            if (c->fd < 0)
                at_eof = 1;
            else if (!pf) /* no room to poll: read what is there each slice */
                drain(c);
            else {
                pf[np] = (struct pollfd){.fd = c->fd, .events = POLLIN};
                idx[np++] = i;
            }
        }
        if (live == 0)
            return -1;
        int ms = at_eof ? 2 : SLICE_MS;
        if (next > 0) {
            double left = (next - now) * 1e3;
            if (left < ms)
                ms = left < 1 ? 1 : (int)left;
        }
        int r = pf ? poll(pf, (nfds_t)np, ms) : poll(NULL, 0, ms);
        for (int k = 0; r > 0 && k < np; k++)
            if (pf[k].revents)
                drain(v[idx[k]]);
    }
}

int cs_child_poll(cs_child_t *const *v, int n, int timeout_ms)
{
    double until = timeout_ms < 0 ? 0 : cs_now_s() + timeout_ms * 1e-3;
    struct pollfd pf_stack[16], *pf = pf_stack;
    int idx_stack[16], *idx = idx_stack;
    if (n > 16) {
        pf = malloc(sizeof(*pf) * (size_t)n);
        idx = malloc(sizeof(*idx) * (size_t)n);
        if (!pf || !idx) { /* poll none: the slices still reap and time out */
            free(pf), free(idx);
            pf = NULL, idx = NULL;
        }
    }
    int r = poll_loop(v, n, timeout_ms, until, pf, idx);
    if (pf != pf_stack)
        free(pf), free(idx);
    return r;
}

void cs_child_wait(cs_child_t *c)
{
    cs_child_t *v[1] = {c};
    while (!c->ended && c->pid > 0 && cs_child_poll(v, 1, -1) < 0)
        ;
}

static const char *sig_abbrev(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGPIPE: return "SIGPIPE";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    case SIGALRM: return "SIGALRM";
    default: return cs_intr_signame(sig); /* INT, TERM, HUP, KILL, QUIT, "signal N" */
    }
}

const char *cs_child_death(int wstatus, char *buf, size_t len)
{
    if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        if (sig == SIGKILL)
            snprintf(buf, len, "was killed by SIGKILL (the kernel's out-of-memory killer, or "
                               "kill -9)");
        else
            snprintf(buf, len, "died of %s (%s)", sig_abbrev(sig), strsignal(sig));
    } else if (WIFEXITED(wstatus)) {
        snprintf(buf, len, "failed (exit %d)", WEXITSTATUS(wstatus));
    } else {
        snprintf(buf, len, "failed (wait status %#x)", (unsigned)wstatus);
    }
    return buf;
}

int cs_child_end(cs_child_t *c, cs_err_t *err)
{
    if (!c->ended)
        kill_reap(c);
    watch_end(c);
    const char *what = c->what ? c->what : "a child process";
    if (c->sig)
        return cs_err_set(err, CS_ERR_INTERRUPTED, "interrupted (%s)", cs_intr_signame(c->sig));
    if (c->timed_out)
        return cs_err_set(err, CS_ERR_TIMEOUT, "%s ran past its %g s", what, c->timeout_s);
    trailer_t t;
    int have = !c->nomem && c->len >= sizeof(t);
    if (have) {
        memcpy(&t, c->data + c->len - sizeof(t), sizeof(t));
        have = t.magic == TRAILER_MAGIC;
    }
    if (have && WIFEXITED(c->wstatus) && WEXITSTATUS(c->wstatus) == 0) {
        c->len -= sizeof(t);
        if (t.value != CS_OK && err)
            *err = t.err;
        return t.value;
    }
    if (c->nomem && WIFEXITED(c->wstatus) && WEXITSTATUS(c->wstatus) == 0)
        return cs_err_set(err, CS_ERR_NOMEM, "%s: out of memory for its result", what);
    char w[128];
    return cs_err_set(err, CS_ERR_INTERNAL, "%s %s", what, cs_child_death(c->wstatus, w, sizeof(w)));
}

void cs_child_stop(cs_child_t *c)
{
    kill_reap(c);
    watch_end(c);
}

void cs_child_free(cs_child_t *c)
{
    free(c->data);
    c->data = NULL;
    c->len = c->cap = 0;
}

int cs_child_run(cs_child_t *c, const char *what, double timeout_s, cs_child_fn_t fn, void *ctx,
                 cs_err_t *err)
{
    int st = cs_child_start(c, what, timeout_s, fn, ctx, err);
    if (st != CS_OK)
        return st;
    cs_child_wait(c);
    return cs_child_end(c, err);
}

typedef struct call_ctx {
    int (*fn)(void *ctx, void *out, cs_err_t *err);
    void *ctx, *out;
    size_t len;
} call_ctx_t;

static int call_body(void *ctx, int fd, cs_err_t *err)
{
    call_ctx_t *k = ctx;
    int st = k->fn(k->ctx, k->out, err);
    if (st == CS_OK && cs_child_put(fd, k->out, k->len) != 0)
        return cs_err_set(err, CS_ERR_IO, "writing the result: %s", strerror(errno));
    return st;
}

int cs_child_call(const char *what, int (*fn)(void *ctx, void *out, cs_err_t *err), void *ctx,
                  void *out, size_t len, cs_err_t *err)
{
    call_ctx_t k = {fn, ctx, out, len};
    cs_child_t c;
    int st = cs_child_run(&c, what, 0, call_body, &k, err);
    if (st == CS_OK && c.len != len)
        st = cs_err_set(err, CS_ERR_INTERNAL, "%s: %zu bytes came back, not %zu", what, c.len, len);
    if (st == CS_OK)
        memcpy(out, c.data, len);
    cs_child_free(&c);
    return st;
}
