/*
 * test_tp_shm.c - the shared-memory transport on its own, with forked
 * processes (no launcher, no engine): ring wrap-around, unexpected
 * messages, tags out of order and reused, zero-length and self messages,
 * many outstanding requests, large messages through CMA and bounce buffers
 * in pieces (--max-msg) and truncated, cancel, a peer killed mid-transfer,
 * a peer gone before attaching, and ranks on "different hosts".
 *
 * Every scenario forks its ranks; each opens its own transport, exchanges
 * address blobs through a shared anonymous page (the board), runs, and
 * exits with its number of failed checks.  alarm() turns a hang into a
 * failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cs_test.h"
#include "cs_transport.h"
#include "tp_shm.h"

#define MAXR 4

typedef struct board {
    int arrived, sense;
    size_t lens[MAXR];
    char blobs[MAXR][CS_TP_ADDR_MAX];
} board_t;

static board_t *B;
static int NR; /* ranks of the current scenario */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A rank that failed never arrives: give up after 90 s rather than hang
 * until ctest's timeout, saying why. */
static void barrier(void)
{
    int s = __atomic_load_n(&B->sense, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&B->arrived, 1, __ATOMIC_ACQ_REL) == NR) {
        __atomic_store_n(&B->arrived, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&B->sense, !s, __ATOMIC_RELEASE);
    }
    double deadline = now_s() + 90.0;
    while (__atomic_load_n(&B->sense, __ATOMIC_ACQUIRE) == s) {
        if (now_s() > deadline) {
            fprintf(stderr, "FAIL: barrier: a rank never arrived (it failed earlier)\n");
            _exit(1);
        }
        sched_yield();
    }
}

static cs_tp_t *open_rank(int rank, size_t max_msg, int *st_out)
{
    cs_tp_config_t cfg = {rank, NR, NULL, NULL, max_msg, 5};
    cs_tp_t *tp = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    if (cs_tp_open("shm", &cfg, &tp, &err) != CS_OK) {
        fprintf(stderr, "open: %s\n", err.msg);
        return NULL;
    }
    B->lens[rank] = CS_TP_ADDR_MAX;
    if (tp->ops->get_addr(tp, B->blobs[rank], &B->lens[rank]) != CS_OK)
        return NULL;
    barrier();
    int st = tp->ops->insert_addrs(tp, B->blobs, CS_TP_ADDR_MAX, B->lens);
    if (st_out)
        *st_out = st;
    if (st != CS_OK) {
        if (!st_out)
            fprintf(stderr, "insert_addrs: %s (%s)\n", cs_status_str(st), tp->why);
        cs_tp_close(tp);
        return NULL;
    }
    return tp;
}

/* Poll until `want` requests came back (or 10 s); returns how many did. */
static int drive(cs_tp_t *tp, int want)
{
    int got = 0;
    double end = now_s() + 10;
    cs_tp_req_t *done[32];
    while (got < want && now_s() < end) {
        int k = tp->ops->poll(tp, done, 32);
        if (k < 0)
            return got;
        got += k;
    }
    return got;
}

/* Post a send, polling while the transport says CS_AGAIN; 1 when it
 * completed inline, 0 when it will come back through poll. */
static int send_now(cs_tp_t *tp, int peer, const void *buf, size_t len, uint64_t tag,
                    cs_tp_req_t *r, int *pending)
{
    cs_tp_req_t *done[32];
    r->status = CS_OK;
    int st;
    while ((st = tp->ops->isend(tp, peer, buf, len, NULL, tag, r)) == CS_AGAIN) {
        int k = tp->ops->poll(tp, done, 32);
        *pending -= k > 0 ? k : 0;
    }
    CS_TEST_CHECK(st == CS_OK, "isend: %s", cs_status_str(st));
    if (r->status == CS_INPROGRESS) {
        (*pending)++;
        return 0;
    }
    return 1;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 8));
}

static int same(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seed * 131u + i * 7u + (i >> 8)))
            return 0;
    return 1;
}

/* Many eager messages of every size, more than the ring holds many times
 * over, tags reused (matched in posting order), a window of receives. */
static int sc_wrap(cs_tp_t *tp, int rank)
{
    enum { N = 6000, W = 48 };
    const size_t emax = 131072; /* the eager limit for up to 16 ranks */
    static unsigned char sbuf[131072], rbuf[W][131072];
    static cs_tp_req_t req[W];
    if (rank == 0) {
        int pending = 0;
        for (unsigned i = 0; i < N; i++) {
            size_t len = (i * 3889u) % (emax + 1);
            fill(sbuf, len, i);
            cs_tp_req_t r;
            send_now(tp, 1, sbuf, len, i % 5, &r, &pending);
        }
        CS_TEST_CHECK(pending == 0, "%d eager sends did not complete inline", pending);
    } else if (rank == 1) {
        unsigned posted = 0, checked = 0;
        while (checked < N) {
            while (posted < N && posted - checked < W) {
                cs_tp_req_t *r = &req[posted % W];
                int st = tp->ops->irecv(tp, 0, rbuf[posted % W], emax, NULL, posted % 5, r);
                CS_TEST_REQUIRE(st == CS_OK, "irecv %u: %s", posted, cs_status_str(st));
                posted++;
            }
            cs_tp_req_t *done[W];
            double end = now_s() + 10;
            int k = 0;
            while (k == 0 && now_s() < end)
                k = tp->ops->poll(tp, done, W);
            CS_TEST_REQUIRE(k > 0, "no progress at message %u", checked);
            /* completions come in order here: one sender, tags cycle */
            for (int j = 0; j < k; j++, checked++) {
                size_t len = (checked * 3889u) % (emax + 1);
                CS_TEST_REQUIRE(done[j] == &req[checked % W], "message %u out of order", checked);
                CS_TEST_CHECK(done[j]->status == CS_OK && done[j]->nbytes == len &&
                                  same(rbuf[checked % W], len, checked),
                              "message %u: status %d, %zu bytes (want %zu), data %s", checked,
                              done[j]->status, done[j]->nbytes, len,
                              same(rbuf[checked % W], len, checked) ? "ok" : "wrong");
            }
        }
    }
    return 0;
}

/* Messages that arrive before their receive; received in reverse tag
 * order; every tenth is large. */
static int sc_unexpected(cs_tp_t *tp, int rank)
{
    enum { N = 100 };
    static unsigned char buf[N][200001];
    static cs_tp_req_t req[N];
    size_t len[N];
    for (int i = 0; i < N; i++)
        len[i] = i % 10 == 3 ? 200001 : (size_t)(i * 13); /* every tenth above eager_max */
    int pending = 0;
    if (rank == 0) {
        for (int i = 0; i < N; i++) {
            fill(buf[i], len[i], (unsigned)i);
            send_now(tp, 1, buf[i], len[i], (uint64_t)i << 20, &req[i], &pending);
        }
        barrier();
        CS_TEST_CHECK(drive(tp, pending) == pending, "large sends did not complete");
    } else if (rank == 1) {
        barrier();
        cs_tp_req_t *done[8];
        for (int k = 0; k < 100; k++)
            tp->ops->poll(tp, done, 8); /* takes them off the ring: unexpected */
        for (int i = N - 1; i >= 0; i--) {
            req[i].status = CS_OK;
            int st = tp->ops->irecv(tp, 0, buf[i], len[i], NULL, (uint64_t)i << 20, &req[i]);
            CS_TEST_REQUIRE(st == CS_OK, "irecv: %s", cs_status_str(st));
        }
        CS_TEST_CHECK(drive(tp, N) == N, "receives did not complete");
        for (int i = 0; i < N; i++)
            CS_TEST_CHECK(req[i].status == CS_OK && req[i].nbytes == len[i] &&
                              same(buf[i], len[i], (unsigned)i),
                          "message %d: status %d, %zu bytes", i, req[i].status, req[i].nbytes);
    } else {
        barrier();
    }
    return 0;
}

/* Every rank to every rank including itself: 0 bytes, 100 bytes, 1 MiB
 * (large), and a receive posted long before its send. */
static int sc_all_pairs(cs_tp_t *tp, int rank)
{
    enum { M = 1 << 20 };
    static unsigned char out[3][M], in[MAXR][3][M];
    static cs_tp_req_t rr[MAXR][3], sr[MAXR][3];
    const size_t len[3] = {0, 100, M};
    for (int p = 0; p < NR; p++)
        for (int k = 0; k < 3; k++) {
            rr[p][k].status = CS_OK;
            CS_TEST_REQUIRE(tp->ops->irecv(tp, p, in[p][k], M, NULL, (uint64_t)k, &rr[p][k]) ==
                                CS_OK, "irecv");
        }
    barrier();
    int pending = 0;
    for (int k = 0; k < 3; k++)
        fill(out[k], len[k], (unsigned)(rank * 3 + k));
    for (int p = 0; p < NR; p++)
        for (int k = 0; k < 3; k++)
            send_now(tp, p, out[k], len[k], (uint64_t)k, &sr[p][k], &pending);
    int want = pending + 3 * NR;
    CS_TEST_CHECK(drive(tp, want) == want, "not everything completed");
    for (int p = 0; p < NR; p++)
        for (int k = 0; k < 3; k++)
            CS_TEST_CHECK(rr[p][k].status == CS_OK && rr[p][k].nbytes == len[k] &&
                              same(in[p][k], len[k], (unsigned)(p * 3 + k)),
                          "from %d, message %d: status %d, %zu bytes", p, k, rr[p][k].status,
                          rr[p][k].nbytes);
    barrier();
    return 0;
}

/* 2000 receives outstanding at once, sent in a scrambled tag order,
 * mixed sizes; then a receive smaller than its message (truncation). */
static unsigned char *many_buf(int i)
{
    enum { N = 2000, BIG = 140000 };
    static unsigned char small[N][300], big[N / 7 + 1][BIG];
    return i % 7 == 0 ? big[i / 7] : small[i];
}

static int sc_many(cs_tp_t *tp, int rank)
{
    enum { N = 2000, BIG = 140000 }; /* BIG: above the eager limit */
    static cs_tp_req_t req[N];
    int pending = 0;
    if (rank == 1) {
        for (int i = 0; i < N; i++)
            CS_TEST_REQUIRE(tp->ops->irecv(tp, 0, many_buf(i), BIG, NULL, (uint64_t)i, &req[i]) ==
                                CS_OK, "irecv %d", i);
        barrier();
        CS_TEST_CHECK(drive(tp, N) == N, "receives did not complete");
        for (int i = 0; i < N; i++) {
            size_t len = i % 7 == 0 ? BIG : (size_t)(i % 300);
            CS_TEST_CHECK(req[i].status == CS_OK && req[i].nbytes == len &&
                              same(many_buf(i), len, (unsigned)i),
                          "message %d: status %d, %zu bytes", i, req[i].status, req[i].nbytes);
        }
        for (int k = 0; k < 2; k++) { /* eager, then large, into 50 bytes */
            req[k].status = CS_OK;
            CS_TEST_REQUIRE(tp->ops->irecv(tp, 0, many_buf(k), 50, NULL, 7, &req[k]) == CS_OK, "irecv");
            CS_TEST_REQUIRE(drive(tp, 1) == 1, "truncated receive %d did not complete", k);
            CS_TEST_CHECK(req[k].status == CS_ERR_RANGE && req[k].nbytes == 50,
                          "truncation %d: status %d, %zu bytes", k, req[k].status, req[k].nbytes);
        }
    } else if (rank == 0) {
        barrier();
        for (int j = 0; j < N; j++) {
            int i = (int)((j * 7919u) % N);
            size_t len = i % 7 == 0 ? BIG : (size_t)(i % 300);
            fill(many_buf(i), len, (unsigned)i);
            send_now(tp, 1, many_buf(i), len, (uint64_t)i, &req[i], &pending);
        }
        static cs_tp_req_t tr[2];
        send_now(tp, 1, many_buf(1), 60, 7, &tr[0], &pending);
        send_now(tp, 1, many_buf(0), BIG, 7, &tr[1], &pending);
        CS_TEST_CHECK(drive(tp, pending) == pending, "sends did not complete");
    } else {
        barrier();
    }
    return 0;
}

/* Cancel a receive nobody sends to; then rank 1 dies (SIGKILL) while rank
 * 0 waits on a receive from it and a large send to it. */
static int sc_death(cs_tp_t *tp, int rank)
{
    static unsigned char big[1 << 20], small[64];
    cs_tp_req_t r1 = {0}, r2 = {0}, r3 = {0};
    if (rank == 0) {
        CS_TEST_REQUIRE(tp->ops->irecv(tp, 1, small, 64, NULL, 99, &r3) == CS_OK, "irecv");
        tp->ops->cancel(tp, &r3);
        CS_TEST_CHECK(drive(tp, 1) == 1 && r3.status == CS_ERR_TRANSPORT,
                      "cancelled receive: status %d", r3.status);
        CS_TEST_REQUIRE(tp->ops->irecv(tp, 1, small, 64, NULL, 1, &r1) == CS_OK, "irecv");
        CS_TEST_REQUIRE(tp->ops->isend(tp, 1, big, sizeof(big), NULL, 2, &r2) == CS_OK, "isend");
        barrier();
        double t0 = now_s();
        int got = drive(tp, 2);
        CS_TEST_CHECK(got == 2 && r1.status == CS_ERR_PEER && r2.status == CS_ERR_PEER,
                      "after the peer died: %d back, statuses %d %d", got, r1.status, r2.status);
        CS_TEST_CHECK(now_s() - t0 < 2, "noticed only after %.1f s", now_s() - t0);
        int st = tp->ops->isend(tp, 1, small, 8, NULL, 3, &r1);
        CS_TEST_CHECK(st == CS_ERR_PEER, "send to a dead peer: %s", cs_status_str(st));
    } else if (rank == 1) {
        barrier();
        kill(getpid(), SIGKILL);
    }
    return 0;
}

/* Buffers of transport memory (tp->mem: peers map them): every rank sends
 * 3 MiB + 5 bytes to the next one, to itself, and 200 KB into a
 * 100 KB receive (truncated); sizes above any slice (--max-msg). */
static int sc_mapped(cs_tp_t *tp, int rank)
{
    enum { M = (3 << 20) + 5, T = 200000 };
    CS_TEST_REQUIRE(tp->mem != NULL, "the shm transport has a memory interface");
    void *sb, *rb, *sm, *rm, *rb2, *rm2;
    CS_TEST_REQUIRE(tp->mem->alloc(tp, M, &sb, &sm) == CS_OK, "alloc");
    CS_TEST_REQUIRE(tp->mem->alloc(tp, M, &rb, &rm) == CS_OK, "alloc");
    CS_TEST_REQUIRE(tp->mem->alloc(tp, M, &rb2, &rm2) == CS_OK, "alloc");
    fill(sb, M, (unsigned)rank);
    int next = (rank + 1) % NR, prev = (rank + NR - 1) % NR, pending = 0;
    cs_tp_req_t r[5];
    memset(r, 0, sizeof(r));
    CS_TEST_REQUIRE(tp->ops->irecv(tp, prev, rb, M, rm, 1, &r[0]) == CS_OK, "irecv");
    CS_TEST_REQUIRE(tp->ops->irecv(tp, rank, rb2, M, rm2, 2, &r[1]) == CS_OK, "irecv");
    CS_TEST_REQUIRE(tp->ops->irecv(tp, prev, (char *)rb2 + M - 100000, 100000, rm2, 3, &r[2]) ==
                        CS_OK, "irecv");
    barrier();
    send_now(tp, next, sb, M, 1, &r[3], &pending);
    send_now(tp, rank, sb, M, 2, &r[4], &pending);
    cs_tp_req_t t;
    send_now(tp, next, (char *)sb + 1, T, 3, &t, &pending);
    int want = pending + 3;
    CS_TEST_CHECK(drive(tp, want) == want, "not everything completed");
    CS_TEST_CHECK(r[0].status == CS_OK && r[0].nbytes == M && same(rb, M, (unsigned)prev),
                  "from the previous rank: status %d, %zu bytes", r[0].status, r[0].nbytes);
    CS_TEST_CHECK(r[1].status == CS_OK && r[1].nbytes == M && same(rb2, M - 100000, (unsigned)rank),
                  "from itself: status %d, %zu bytes", r[1].status, r[1].nbytes);
    CS_TEST_CHECK(r[2].status == CS_ERR_RANGE && r[2].nbytes == 100000,
                  "truncated: status %d, %zu bytes", r[2].status, r[2].nbytes);
    barrier();
    tp->mem->free(tp, sb, sm);
    tp->mem->free(tp, rb, rm);
    tp->mem->free(tp, rb2, rm2);
    return 0;
}

typedef int (*scenario_fn)(cs_tp_t *tp, int rank);

/* Fork n ranks (a fresh board) running body(r, arg), which ends with
 * _exit; alarm(secs) turns a hang into a failure. */
static void spawn(pid_t *pid, int n, unsigned secs, void (*body)(int r, const void *arg),
                  const void *arg)
{
    NR = n;
    memset(B, 0, sizeof(*B));
    for (int r = 0; r < n; r++) {
        pid[r] = fork();
        if (pid[r] == 0) {
            alarm(secs);
            body(r, arg);
            _exit(101); /* bodies do not return */
        }
    }
}

typedef struct scenario {
    scenario_fn fn;
    const char *copy;
    size_t max_msg;
} scenario_t;

static void scenario_rank(int r, const void *arg)
{
    const scenario_t *sc = arg;
    if (sc->copy)
        setenv("CS_SHM_COPY", sc->copy, 1);
    cs_tp_t *tp = open_rank(r, sc->max_msg, NULL);
    if (!tp)
        _exit(100);
    sc->fn(tp, r);
    barrier();
    cs_tp_close(tp);
    _exit(cs_test_failed > 99 ? 99 : cs_test_failed);
}

/* Fork n ranks running fn; `copy` sets CS_SHM_COPY.  Returns failures. */
static int run(const char *name, int n, scenario_fn fn, const char *copy, size_t max_msg)
{
    pid_t pid[MAXR];
    scenario_t sc = {fn, copy, max_msg};
    spawn(pid, n, 60, scenario_rank, &sc);
    int bad = 0;
    for (int r = 0; r < n; r++) {
        int ws = 0;
        waitpid(pid[r], &ws, 0);
        if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
            fprintf(stderr, "  rank %d: %s %d\n", r, WIFEXITED(ws) ? "exit" : "signal",
                    WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws));
            bad++;
        }
    }
    printf("%-4s %-28s copy=%-6s max_msg=%zu P=%d\n", bad ? "FAIL" : "ok", name,
           copy ? copy : "auto", max_msg, n);
    return bad;
}

/* The death scenario: run apart, since the killed rank cannot take part
 * in the final barrier. */
static void death_rank(int r, const void *arg)
{
    (void)arg;
    cs_tp_t *tp = open_rank(r, 0, NULL);
    if (!tp)
        _exit(100);
    sc_death(tp, r);
    cs_tp_close(tp);
    _exit(cs_test_failed > 99 ? 99 : cs_test_failed);
}

static int run_death(void)
{
    pid_t pid[2];
    spawn(pid, 2, 30, death_rank, NULL);
    int w0 = 0, w1 = 0;
    waitpid(pid[0], &w0, 0);
    waitpid(pid[1], &w1, 0);
    int bad =
        !(WIFEXITED(w0) && WEXITSTATUS(w0) == 0) || !(WIFSIGNALED(w1) && WTERMSIG(w1) == SIGKILL);
    printf("%-4s %-28s\n", bad ? "FAIL" : "ok", "cancel, peer killed");
    return bad;
}

/* Start-up failures: a peer that exits before attaching; a peer whose
 * blob claims another host (both must fail insert_addrs with a reason). */
static void startup_rank(int r, const void *arg)
{
    int mode = *(const int *)arg;
    cs_tp_config_t cfg = {r, 2, NULL, NULL, 0, 5};
    cs_tp_t *tp = NULL;
    if (cs_tp_open("shm", &cfg, &tp, NULL) != CS_OK)
        _exit(100);
    B->lens[r] = CS_TP_ADDR_MAX;
    tp->ops->get_addr(tp, B->blobs[r], &B->lens[r]);
    if (mode == 1 && r == 1) {
        shm_blob_t *b = (shm_blob_t *)B->blobs[1];
        snprintf(b->boot_id, sizeof(b->boot_id), "another-boot");
        snprintf(b->host, sizeof(b->host), "elsewhere");
    }
    barrier();
    if (mode == 0 && r == 1)
        _exit(0); /* gone before attaching */
    double t0 = now_s();
    int st = tp->ops->insert_addrs(tp, B->blobs, CS_TP_ADDR_MAX, B->lens);
    int ok = mode == 0 ? st == CS_ERR_PEER && strstr(tp->why, "rank 1") && now_s() - t0 < 3
                       : st == CS_ERR_UNSUPPORTED && strstr(tp->why, "one host");
    if (!ok)
        fprintf(stderr, "  rank %d: insert_addrs %s (%s)\n", r, cs_status_str(st), tp->why);
    cs_tp_close(tp);
    _exit(ok ? 0 : 1);
}

static int run_startup(int mode)
{
    pid_t pid[2];
    spawn(pid, 2, 30, startup_rank, &mode);
    int bad = 0;
    for (int r = 0; r < 2; r++) {
        int ws = 0;
        waitpid(pid[r], &ws, 0);
        bad += !(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    }
    printf("%-4s %s\n", bad ? "FAIL" : "ok",
           mode == 0 ? "peer gone before attaching" : "ranks on different hosts");
    return bad;
}

int main(void)
{
    B = mmap(NULL, sizeof(board_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (B == MAP_FAILED)
        CS_TEST_SKIP("no shared anonymous memory");
    int bad = 0;
    bad += run("ring wrap-around, tags", 2, sc_wrap, NULL, 0);
    bad += run("ring wrap-around, tags", 3, sc_wrap, NULL, 0);
    for (int c = 0; c < 2; c++) {
        const char *copy = c ? "bounce" : "cma";
        bad += run("unexpected, reverse order", 2, sc_unexpected, copy, 0);
        bad += run("unexpected, reverse order", 2, sc_unexpected, copy, 3000);
        bad += run("all pairs, self, 0 B", 3, sc_all_pairs, copy, 0);
        bad += run("all pairs, self, 0 B", 4, sc_all_pairs, copy, 10000);
        bad += run("2000 outstanding, truncation", 2, sc_many, copy, 0);
    }
    bad += run("2000 outstanding, truncation", 2, sc_many, "auto", 0);
    for (int c = 0; c < 3; c++) {
        const char *copy = c == 0 ? "auto" : c == 1 ? "cma" : "bounce";
        bad += run("transport memory", 3, sc_mapped, copy, 0);
        bad += run("transport memory", 2, sc_mapped, copy, 70000);
    }
    bad += run_death();
    bad += run_startup(0);
    bad += run_startup(1);
    printf("%d scenarios failed\n", bad);
    return bad ? 1 : 0;
}
