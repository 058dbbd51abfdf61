/*
 * cli_guard.c - long commands run their work in a watched child process
 * (see cs_cli_guard in cli.h).
 *
 * Why a child.  SimGrid owns the process while it simulates: it installs
 * its own SIGINT handler (which exits from inside the simulation and ends
 * in an abort with a C++ backtrace), and an actor cannot be stopped from a
 * signal handler.  A parent that only waits can always react: it kills the
 * child, removes what the child was writing (every partial output of
 * collstep is named PATH.tmp.<pid>, core/cs_out.h) and exits 128 + signal.
 *
 * Signals.  The parent blocks SIGINT, SIGTERM, SIGHUP and SIGCHLD before
 * the fork and takes them with sigwaitinfo, so none is lost between a check
 * and a wait.  The child restores the mask, goes to a process group of its
 * own (a Ctrl-C at the terminal reaches the parent only) and dies with the
 * parent (PR_SET_PDEATHSIG), so an uncatchable kill of the parent leaves no
 * simulation running.  Inputs are read before the fork (the child never
 * reads the terminal).  cs_cli_in_child runs a further piece of work in a
 * child of its own (a second simulation) and brings its results back.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cs_env.h"
#include "cs_out.h"
#include "cs_results.h"
#ifdef CS_HAVE_TRACES
#include "cs_trace.h"
#endif

static void cleanup(const char *out_file, const char *trace_dir, pid_t pid)
{
    if (out_file && strcmp(out_file, "-"))
        cs_out_cleanup_pid(out_file, pid, 0);
    if (trace_dir)
        cs_out_cleanup_pid(trace_dir, pid, 1);
}

int cs_cli_guard(const char *cmd, const char *out_file, const char *trace_dir, int *rc)
{
    const char *off = cs_env_get("CS_NO_GUARD");
    if (off && *off && strcmp(off, "0"))
        return 0;
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGCHLD);
    fflush(stdout);
    fflush(stderr);
    if (sigprocmask(SIG_BLOCK, &set, &old) != 0)
        return 0;
    pid_t parent = getpid(), pid = fork();
    if (pid < 0) { /* no child: do the work here, unguarded */
        sigprocmask(SIG_SETMASK, &old, NULL);
        return 0;
    }
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) /* the parent died before prctl */
            _exit(CS_EXIT_SIGNAL_BASE + SIGKILL);
        sigprocmask(SIG_SETMASK, &old, NULL);
        return 0;
    }
    int status = 0, sig = 0;
    for (;;) {
        siginfo_t si;
        int s = sigwaitinfo(&set, &si);
        if (s < 0) {
            if (errno == EINTR)
                continue;
            s = SIGTERM; /* cannot wait for signals: stop the child rather than hang */
        }
        if (s == SIGCHLD) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid)
                break;
            continue;
        }
        sig = s;
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        break;
    }
    if (sig) {
        cleanup(out_file, trace_dir, pid);
        fprintf(stderr, "\ncollstep %s: interrupted (%s); partial outputs removed\n", cmd,
                strsignal(sig));
        *rc = CS_EXIT_SIGNAL_BASE + sig;
    } else if (WIFSIGNALED(status)) {
        cleanup(out_file, trace_dir, pid);
        fprintf(stderr, "collstep %s: the work died of %s; partial outputs removed\n", cmd,
                strsignal(WTERMSIG(status)));
        *rc = CS_EXIT_RUNTIME;
    } else {
        *rc = WEXITSTATUS(status);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return 1;
}

/* Write all of buf to fd; 0 or -1. */
static int write_all(int fd, const void *buf, size_t len)
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

/* Read up to len bytes (fewer at end of file); the count read. */
static size_t read_all(int fd, void *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, (char *)buf + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}

int cs_cli_in_child(int (*fn)(void *ctx, void *out, cs_err_t *err), void *ctx, void *out,
                    size_t len, cs_err_t *err)
{
    int fd[2];
    fflush(stdout);
    fflush(stderr);
    if (pipe(fd) != 0)
        return cs_err_set(err, CS_ERR_IO, "pipe: %s", strerror(errno));
    pid_t parent = getpid(), pid = fork();
    if (pid < 0) {
        close(fd[0]), close(fd[1]);
        return cs_err_set(err, CS_ERR_IO, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fd[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(CS_EXIT_SIGNAL_BASE + SIGKILL);
        cs_err_t e;
        cs_err_clear(&e);
        int st = fn(ctx, out, &e);
        fflush(stdout);
        fflush(stderr);
        int ok = write_all(fd[1], &st, sizeof(st)) == 0 && write_all(fd[1], &e, sizeof(e)) == 0 &&
                 (st != CS_OK || write_all(fd[1], out, len) == 0);
        _exit(ok ? 0 : CS_EXIT_RUNTIME);
    }
    close(fd[1]);
    int st = CS_ERR_INTERNAL;
    cs_err_t e;
    size_t got = read_all(fd[0], &st, sizeof(st));
    got += read_all(fd[0], &e, sizeof(e));
    if (got == sizeof(st) + sizeof(e) && st == CS_OK && read_all(fd[0], out, len) != len)
        got = 0;
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (got != sizeof(st) + sizeof(e) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFSIGNALED(status))
            return cs_err_set(err, CS_ERR_INTERNAL, "a simulation child died of %s",
                              strsignal(WTERMSIG(status)));
        return cs_err_set(err, CS_ERR_INTERNAL, "a simulation child failed (exit %d)",
                          WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    if (st != CS_OK)
        *err = e;
    return st;
}

int cs_cli_check_outputs(const char *cmd, const char *out_file, const char *trace_dir, int force)
{
    cs_err_t err;
    cs_err_clear(&err);
    int flags = (force ? CS_OUT_FORCE : 0) | CS_OUT_STDOUT;
    if (out_file && cs_out_check(out_file, flags, &cs_results_out_kind, 0, &err) != CS_OK)
        return cs_cli_usage_error(cmd, "-o %s: %s", out_file, err.msg);
#ifdef CS_HAVE_TRACES
    if (trace_dir && cs_out_check(trace_dir, flags, &cs_trace_out_kind, 1, &err) != CS_OK)
        return cs_cli_usage_error(cmd, "--trace %s: %s", trace_dir, err.msg);
#else
    (void)trace_dir;
#endif
    return CS_EXIT_OK;
}
