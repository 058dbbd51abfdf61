/*
 * test_child.c - work in a watched child (core/cs_child.h):
 *
 *   round trip     the bytes written, the value and the error come back
 *   large result   16 MiB, far over a pipe's buffer, byte for byte
 *   cs_child_call  a fixed-size result; an error keeps the caller's bytes
 *   crash          SIGSEGV and SIGKILL said with the signal's name
 *   exit           a child that exits inside fn: "failed (exit 5)"
 *   timeout        killed at its deadline, CS_ERR_TIMEOUT, reaped
 *   signal         a SIGTERM to the parent while it waits kills and reaps
 *                  the child, CS_ERR_INTERRUPTED, recorded in cs_intr, and
 *                  the signal mask is the caller's again
 *   poll           two children, the quick one ends first, the other is
 *                  still there and ends after
 */
#include "cs_child.h"
#include "cs_intr.h"
#include "cs_test.h"
#include "cs_time.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int echo(void *ctx, int fd, cs_err_t *err)
{
    const char *s = ctx;
    if (cs_child_put(fd, s, strlen(s)) != 0)
        return cs_err_set(err, CS_ERR_IO, "put");
    return 7;
}

static int fail_with(void *ctx, int fd, cs_err_t *err)
{
    (void)ctx, (void)fd;
    return cs_err_set(err, CS_ERR_PARSE, "f.txt:3:4: expected a number");
}

#define BIG ((size_t)16 << 20)

static int big(void *ctx, int fd, cs_err_t *err)
{
    (void)ctx, (void)err;
    unsigned char *b = malloc(BIG);
    if (!b)
        return CS_ERR_NOMEM;
    for (size_t i = 0; i < BIG; i++)
        b[i] = (unsigned char)(i * 2654435761u >> 13);
    int st = cs_child_put(fd, b, BIG) == 0 ? CS_OK : CS_ERR_IO;
    free(b);
    return st;
}

static int segv(void *ctx, int fd, cs_err_t *err)
{
    (void)ctx, (void)fd, (void)err;
    /* the default action, as an unhandled crash gets: a sanitizer's own
     * SIGSEGV handler would report and exit(1) instead */
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
    return CS_OK;
}

static int selfkill(void *ctx, int fd, cs_err_t *err)
{
    (void)ctx, (void)fd, (void)err;
    raise(SIGKILL);
    return CS_OK;
}

static int exit5(void *ctx, int fd, cs_err_t *err)
{
    (void)ctx, (void)fd, (void)err;
    _exit(5);
}

static int sleeper(void *ctx, int fd, cs_err_t *err)
{
    (void)fd, (void)err;
    double s = *(const double *)ctx;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    return CS_OK;
}

static int fill(void *ctx, void *out, cs_err_t *err)
{
    (void)err;
    int64_t *v = out;
    for (int i = 0; i < 100; i++)
        v[i] = (int64_t)i * *(const int *)ctx;
    return CS_OK;
}

static int refuse(void *ctx, void *out, cs_err_t *err)
{
    (void)ctx;
    memset(out, 0xee, 16);
    return cs_err_set(err, CS_ERR_INVAL, "no such platform");
}

/* c's process is gone (reaped: not even a zombie). */
static int gone(pid_t pid)
{
    return kill(pid, 0) != 0 && errno == ESRCH;
}

static int test_round_trip(void)
{
    cs_child_t c;
    cs_err_t err;
    cs_err_clear(&err);
    int v = cs_child_run(&c, "the echo", 0, echo, (void *)"hello, parent", &err);
    CS_TEST_CHECK(v == 7, "fn's value comes back: %d", v);
    CS_TEST_CHECK(c.len == 13 && memcmp(c.data, "hello, parent", 13) == 0, "the bytes (%zu)", c.len);
    CS_TEST_CHECK(gone(c.pid), "reaped");
    cs_child_free(&c);

    cs_err_clear(&err);
    v = cs_child_run(&c, "the parser", 0, fail_with, NULL, &err);
    CS_TEST_CHECK(v == CS_ERR_PARSE && err.code == CS_ERR_PARSE &&
                      strcmp(err.msg, "f.txt:3:4: expected a number") == 0,
                  "the child's error record comes back whole: %d %s", v, err.msg);
    cs_child_free(&c);

    cs_err_clear(&err);
    v = cs_child_run(&c, "the writer", 0, big, NULL, &err);
    CS_TEST_REQUIRE(v == CS_OK && c.len == BIG, "16 MiB through a pipe: %d, %zu bytes (%s)", v,
                    c.len, err.msg);
    int same = 1;
    for (size_t i = 0; i < BIG && same; i++)
        same = (unsigned char)c.data[i] == (unsigned char)(i * 2654435761u >> 13);
    CS_TEST_CHECK(same, "byte for byte");
    cs_child_free(&c);

    int64_t out[100];
    int k = 3;
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_child_call("the filler", fill, &k, out, sizeof(out), &err) == CS_OK &&
                      out[0] == 0 && out[99] == 297,
                  "cs_child_call: the fixed-size result (%s)", err.msg);
    unsigned char mine[16];
    memset(mine, 0x11, sizeof(mine));
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_child_call("the platform reader", refuse, NULL, mine, sizeof(mine), &err) ==
                          CS_ERR_INVAL &&
                      strcmp(err.msg, "no such platform") == 0 && mine[0] == 0x11,
                  "an error comes back, the caller's bytes untouched: %s", err.msg);
    return 0;
}

static int test_deaths(void)
{
    cs_child_t c;
    cs_err_t err;
    cs_err_clear(&err);
    int v = cs_child_run(&c, "the simulation on x.xml", 0, segv, NULL, &err);
    CS_TEST_CHECK(v == CS_ERR_INTERNAL &&
                      strncmp(err.msg, "the simulation on x.xml died of SIGSEGV (", 41) == 0,
                  "a crash names its signal: %s", err.msg);
    CS_TEST_CHECK(gone(c.pid), "reaped");
    cs_child_free(&c);

    cs_err_clear(&err);
    v = cs_child_run(&c, "the analysis", 0, selfkill, NULL, &err);
    CS_TEST_CHECK(v == CS_ERR_INTERNAL && strstr(err.msg, "the analysis was killed by SIGKILL") &&
                      strstr(err.msg, "out-of-memory killer"),
                  "SIGKILL said plainly: %s", err.msg);
    cs_child_free(&c);

    cs_err_clear(&err);
    v = cs_child_run(&c, "the worker", 0, exit5, NULL, &err);
    CS_TEST_CHECK(v == CS_ERR_INTERNAL && strcmp(err.msg, "the worker failed (exit 5)") == 0,
                  "an exit inside fn: %s", err.msg);
    cs_child_free(&c);

    char w[128];
    CS_TEST_CHECK(strcmp(cs_child_death(3 << 8, w, sizeof(w)), "failed (exit 3)") == 0, "%s", w);
    return 0;
}

static int test_timeout(void)
{
    cs_child_t c;
    cs_err_t err;
    cs_err_clear(&err);
    double nap = 30, t0 = cs_now_s();
    int v = cs_child_run(&c, "the sleeper", 0.3, sleeper, &nap, &err);
    double took = cs_now_s() - t0;
    CS_TEST_CHECK(v == CS_ERR_TIMEOUT && strcmp(err.msg, "the sleeper ran past its 0.3 s") == 0,
                  "timed out: %d %s", v, err.msg);
    CS_TEST_CHECK(took >= 0.29 && took < 10, "at its deadline (%.2f s)", took);
    CS_TEST_CHECK(gone(c.pid), "killed and reaped");
    cs_child_free(&c);
    return 0;
}

static int test_signal(void)
{
    sigset_t before, after;
    pthread_sigmask(SIG_SETMASK, NULL, &before);
    cs_intr_clear();
    cs_child_t c;
    cs_err_t err;
    cs_err_clear(&err);
    double nap = 30;
    CS_TEST_REQUIRE(cs_child_start(&c, "the sleeper", 0, sleeper, &nap, &err) == CS_OK, "start");
    kill(getpid(), SIGTERM); /* blocked while the child is watched: taken by the wait */
    double t0 = cs_now_s();
    cs_child_wait(&c);
    int v = cs_child_end(&c, &err);
    CS_TEST_CHECK(v == CS_ERR_INTERRUPTED && strcmp(err.msg, "interrupted (SIGTERM)") == 0,
                  "interrupted: %d %s", v, err.msg);
    CS_TEST_CHECK(cs_now_s() - t0 < 10, "at once");
    CS_TEST_CHECK(gone(c.pid), "the child killed and reaped");
    CS_TEST_CHECK(cs_intr_pending() == SIGTERM, "the signal recorded for the caller");
    pthread_sigmask(SIG_SETMASK, NULL, &after);
    CS_TEST_CHECK(sigismember(&after, SIGTERM) == sigismember(&before, SIGTERM) &&
                      sigismember(&after, SIGINT) == sigismember(&before, SIGINT),
                  "the caller's signal mask back");
    cs_child_free(&c);
    cs_intr_clear();
    return 0;
}

/* A signal the process ignores (nohup's SIGHUP) stays ignored while a
 * child is watched: the child finishes. */
static int test_ignored(void)
{
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGHUP, &ign, &old);
    cs_intr_clear();
    cs_child_t c;
    cs_err_t err;
    cs_err_clear(&err);
    double nap = 0.3;
    CS_TEST_REQUIRE(cs_child_start(&c, "the sleeper", 0, sleeper, &nap, &err) == CS_OK, "start");
    kill(getpid(), SIGHUP);
    cs_child_wait(&c);
    int v = cs_child_end(&c, &err);
    CS_TEST_CHECK(v == CS_OK, "an ignored SIGHUP does not interrupt: %d %s", v, err.msg);
    CS_TEST_CHECK(cs_intr_pending() == 0, "nothing recorded");
    cs_child_free(&c);
    sigaction(SIGHUP, &old, NULL);
    return 0;
}

static int test_poll(void)
{
    cs_child_t a, b;
    cs_err_t err;
    cs_err_clear(&err);
    double slow = 0.5, quick = 0;
    CS_TEST_REQUIRE(cs_child_start(&a, "slow", 0, sleeper, &slow, &err) == CS_OK, "start a");
    CS_TEST_REQUIRE(cs_child_start(&b, "quick", 0, sleeper, &quick, &err) == CS_OK, "start b");
    cs_child_t *v[2] = {&a, &b};
    int first = cs_child_poll(v, 2, 5000);
    CS_TEST_CHECK(first == 1, "the quick one ends first: %d", first);
    CS_TEST_CHECK(cs_child_end(&b, &err) == CS_OK, "it finished");
    CS_TEST_CHECK(cs_child_poll(v, 2, 0) == -1, "the slow one is still running");
    CS_TEST_CHECK(cs_child_poll(v, 2, 5000) == 0, "then it ends");
    CS_TEST_CHECK(cs_child_end(&a, &err) == CS_OK, "and finished: %s", err.msg);
    cs_child_free(&a);
    cs_child_free(&b);
    return 0;
}

int main(void)
{
    test_round_trip();
    test_deaths();
    test_timeout();
    test_signal();
    test_ignored();
    test_poll();
    return cs_test_finish();
}
