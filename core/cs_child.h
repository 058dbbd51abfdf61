/*
 * cs_child.h - work done in a watched child process, its result brought
 * back.  Not a public header.
 *
 * Why a child.  SimGrid runs one simulation per process, owns the process
 * while it simulates (its own SIGINT handler, xbt_die on some inputs) and
 * cannot be stopped from a signal handler; work that may crash or must be
 * stopped at a deadline is safer in a process of its own.  Every command
 * and library of collstep that forks such work (the simulation of `sim`
 * and `validate`, the planner's analysis and workers, SimGrid's reading of
 * a platform file, the guard of long commands) does it through here.
 *
 * The child runs fn(ctx, fd, err): it writes its result bytes to fd
 * (cs_child_put: any amount, the parent reads while the child writes, so a
 * result larger than a pipe's buffer is fine) and returns a value that
 * comes back beside its error record.  The child never returns from
 * cs_child_start: it flushes stdio and _exits, so atexit handlers (and
 * C++ destructors of a SimGrid engine) do not run there.  It dies with
 * its parent (PR_SET_PDEATHSIG), even when the parent is killed by
 * SIGKILL, and lives in a process group of its own, so a Ctrl-C at the
 * terminal reaches the parent only.
 *
 * Signals.  From the first cs_child_start until the last child started is
 * ended (cs_child_end, cs_child_stop), SIGINT, SIGTERM and SIGHUP are
 * blocked in the calling thread and taken while it waits: a signal kills
 * and reaps every child being waited for, cs_child_end says
 * CS_ERR_INTERRUPTED ("interrupted (SIGINT)"), and the signal is recorded
 * with cs_intr_raise (cs_intr.h), so the caller, having removed what its
 * child left, exits with cs_intr_exit_code().  A signal that arrives while
 * no child is being waited for stays pending and is taken at the next
 * wait, or delivered as usual when the last child ends.  A signal the
 * process ignores stays ignored.  One thread starts and waits for
 * children; other threads should block these signals.
 *
 * The child's end in words (cs_child_end): its value and error; or, when
 * it did not finish, "WHAT died of SIGSEGV (segmentation fault)", "WHAT
 * was killed by SIGKILL (the kernel's out-of-memory killer, or kill -9)",
 * "WHAT failed (exit 5)" (it exited before it finished), "WHAT ran past
 * its 10 s" (CS_ERR_TIMEOUT).
 */
#ifndef CS_CHILD_H
#define CS_CHILD_H

#include <stddef.h>
#include <sys/types.h>

#include "cs_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The work: runs in the child; writes its result to fd with cs_child_put;
 * returns a value that the parent gets from cs_child_end (a cs_status_t,
 * or an exit code) with *err. */
typedef int (*cs_child_fn_t)(void *ctx, int fd, cs_err_t *err);

typedef struct cs_child {
    pid_t pid;          /* the child's (kept after it was reaped: PATH.tmp.<pid>) */
    const char *what;   /* "the simulation on X": the subject of the messages */
    char *data;         /* the bytes the child wrote (malloc'd; cs_child_free) */
    size_t len, cap;
    int fd;             /* the read end; -1 at end of file */
    int wstatus;        /* waitpid's status, once reaped */
    int ended;          /* reaped */
    int sig;            /* killed for this signal to the parent */
    int timed_out;      /* killed at its deadline */
    int nomem;          /* its result did not fit in memory (read and dropped) */
    int watched;        /* counts in the signal blocking */
    double deadline;    /* cs_now_s() limit; 0: none */
    double timeout_s;
} cs_child_t;

/* Write all of buf to fd (restarting after EINTR): 0, or -1 (the parent is
 * gone or the pipe is broken). */
int cs_child_put(int fd, const void *buf, size_t len);

/* Fork a child that runs fn(ctx, fd, err) and comes back with its value
 * and error.  `what` names the child in messages; timeout_s > 0 kills it
 * that many seconds after the start.  CS_OK (the parent goes on), or
 * CS_ERR_IO with err filled (pipe or fork failed; nothing was started). */
int cs_child_start(cs_child_t *c, const char *what, double timeout_s, cs_child_fn_t fn,
                   void *ctx, cs_err_t *err);

/* Wait up to timeout_ms (< 0: until one ends) for one of the n children
 * v[0..n-1] (NULL entries, children not started and children already
 * ended are skipped) to end,
 * reading what they write meanwhile.  Returns the index of a child that
 * ended (reaped: cs_child_end tells how), or -1 when none did in time.  A
 * signal to the parent (above) kills and reaps all of them and returns the
 * first. */
int cs_child_poll(cs_child_t *const *v, int n, int timeout_ms);

/* Wait for c to end (cs_child_poll of one, no time limit). */
void cs_child_wait(cs_child_t *c);

/* How the ended child c went: the value its fn returned (its error in
 * *err when that value is not CS_OK) when it finished, else a status with
 * the words above in *err: CS_ERR_INTERRUPTED, CS_ERR_TIMEOUT, or
 * CS_ERR_INTERNAL for a child that died or exited early.  Ends the
 * signal blocking of c; c->data stays until cs_child_free. */
int cs_child_end(cs_child_t *c, cs_err_t *err);

/* Kill (SIGKILL) and reap a child that may still run; ends its signal
 * blocking.  Safe on a child already ended. */
void cs_child_stop(cs_child_t *c);

/* Free c->data (after cs_child_end or cs_child_stop). */
void cs_child_free(cs_child_t *c);

/* Start, wait, end: fn's value, or how the child died (cs_child_end).
 * c->data holds what it wrote, c->pid its pid (for removing its partial
 * outputs); free with cs_child_free. */
int cs_child_run(cs_child_t *c, const char *what, double timeout_s, cs_child_fn_t fn, void *ctx,
                 cs_err_t *err);

/* The common case: fn(ctx, out, err) runs in a child and fills the `len`
 * bytes at out, which come back here when it returns CS_OK.  Its status,
 * or how the child died. */
int cs_child_call(const char *what, int (*fn)(void *ctx, void *out, cs_err_t *err), void *ctx,
                  void *out, size_t len, cs_err_t *err);

/* "died of SIGSEGV (segmentation fault)", "was killed by SIGKILL (...)",
 * "failed (exit 5)" for a waitpid status; the words of the messages above. */
const char *cs_child_death(int wstatus, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* CS_CHILD_H */
