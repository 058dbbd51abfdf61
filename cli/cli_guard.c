/*
 * cli_guard.c - long commands run their work in a watched child process
 * (see cs_cli_guard in cli.h), and check their outputs before they start.
 *
 * Why a child.  SimGrid owns the process while it simulates: it installs
 * its own SIGINT handler (which exits from inside the simulation and ends
 * in an abort with a C++ backtrace), and an actor cannot be stopped from a
 * signal handler.  A parent that only waits can always react: it kills the
 * child, removes what the child was writing (every partial output of
 * collstep is named PATH.tmp.<pid>, core/cs_out.h) and exits 128 + signal.
 * The child, its signals, its process group and its death with the parent
 * are core/cs_child.h's; inputs are read before the fork (the child never
 * reads the terminal).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cli.h"
#include "cs_child.h"
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

typedef struct guarded {
    int (*work)(void *ctx);
    void *ctx;
} guarded_t;

/* The child: the work's exit code; what it left uncommitted is removed as
 * at the exit of a command that ran unguarded. */
static int guarded_body(void *ctx, int fd, cs_err_t *err)
{
    (void)fd, (void)err;
    guarded_t *g = ctx;
    int rc = g->work(g->ctx);
    cs_out_cleanup_all();
    return rc;
}

int cs_cli_guard(const char *cmd, const char *out_file, const char *trace_dir,
                 int (*work)(void *ctx), void *ctx)
{
    const char *off = cs_env_get("CS_NO_GUARD");
    if (off && *off && strcmp(off, "0"))
        return work(ctx);
    guarded_t g = {work, ctx};
    cs_child_t c;
    cs_err_t err;
    cs_err_clear(&err);
    if (cs_child_start(&c, "the work", 0, guarded_body, &g, &err) != CS_OK)
        return work(ctx); /* no child: do the work here, unguarded */
    cs_child_wait(&c);
    int rc = cs_child_end(&c, &err);
    if (c.sig) {
        cleanup(out_file, trace_dir, c.pid);
        fprintf(stderr, "\ncollstep %s: interrupted (%s); partial outputs removed\n", cmd,
                strsignal(c.sig));
        rc = CS_EXIT_SIGNAL_BASE + c.sig;
    } else if (WIFSIGNALED(c.wstatus)) {
        cleanup(out_file, trace_dir, c.pid);
        fprintf(stderr, "collstep %s: %s; partial outputs removed\n", cmd, err.msg);
        rc = CS_EXIT_RUNTIME;
    } else if (rc == CS_ERR_INTERNAL && err.code == CS_ERR_INTERNAL) {
        rc = WEXITSTATUS(c.wstatus); /* it exited on its own, before the end of the work */
    }
    cs_child_free(&c);
    return rc;
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
