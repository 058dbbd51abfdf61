/*
 * cs_out_reap.c - cleaning up after collstep processes that were killed
 * while they wrote (contract in cs_out.h: cs_out_cleanup_pid,
 * cs_out_set_notice; the leftovers reaped by begin and check).
 *
 * A process killed with SIGKILL (or a machine that lost power) leaves its
 * temporary PATH.tmp.<pid> and, when it died in the middle of replacing a
 * directory, PATH.old.<pid> (the previous tree, moved aside).  Its
 * supervising parent cleans up when it can (cli_guard.c); when the parent
 * died too, the next process that writes PATH does: for every
 * PATH.tmp.<pid> / PATH.old.<pid> whose <pid> no longer runs on this
 * machine (kill(pid, 0) fails with ESRCH, or /proc says it is a zombie; a
 * running process, or one we may not signal, is never touched),
 * cs_out_cleanup_pid's rules apply:
 *
 *   PATH.tmp.<pid>, a file output     removed when it is a regular file
 *   PATH.tmp.<pid>, a directory       removed when it is empty or holds a
 *                                     collstep marker; otherwise left
 *   PATH.old.<pid>, PATH absent       renamed back to PATH (the process
 *                                     died between the two renames of
 *                                     its commit: the old tree is PATH)
 *   PATH.old.<pid>, PATH in place     removed (it died after putting the
 *                                     new tree in place)
 *
 * Every removal and restore is said through the notice hook (the command
 * line prints "collstep CMD: ..."), so that nothing disappears unsaid.
 *
 * Also here: cs_out_xml_marked, the recognizer of collstep's XML marker.
 */
#define _GNU_SOURCE
#include "cs_out.h"
#include "cs_out_int.h"

#include "cs_grow.h"
#include "cs_log.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void (*notice_fn)(const char *msg);

void cs_out_set_notice(void (*fn)(const char *msg))
{
    notice_fn = fn;
}

void cs__out_notice(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (notice_fn)
        notice_fn(msg);
    else
        CS_WARN("out", "%s", msg);
}

/* cs_out_cleanup_pid; `say`: tell the notice hook what was done and why. */
static int cleanup(const char *path, pid_t pid, int is_dir, int say)
{
    if (!path || !*path || pid <= 0)
        return CS_ERR_INVAL;
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    char *base = strndup(path, len), *tmp = malloc(len + 32), *old = malloc(len + 32);
    int st = CS_OK;
    if (!base || !tmp || !old) {
        st = CS_ERR_NOMEM;
        goto out;
    }
    snprintf(tmp, len + 32, "%s.tmp.%ld", base, (long)pid);
    snprintf(old, len + 32, "%s.old.%ld", base, (long)pid);
    struct stat sb;
    if (!is_dir) {
        if (lstat(tmp, &sb) == 0 && S_ISREG(sb.st_mode)) {
            if (unlink(tmp) != 0)
                st = CS_ERR_IO;
            else if (say)
                cs__out_notice("removed %s, the partial output of process %ld, which no longer "
                               "runs", tmp, (long)pid);
        }
        goto out;
    }
    int n = 0;
    if (lstat(tmp, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        if (cs__out_dir_scan(tmp, NULL, &n) == 1 || n == 0) {
            if (cs__out_rmtree(tmp) != CS_OK)
                st = CS_ERR_IO;
            else if (say)
                cs__out_notice("removed %s/, the partial output of process %ld, which no "
                               "longer runs", tmp, (long)pid);
        } else if (say) {
            cs__out_notice("left %s/ alone: it holds files collstep did not write", tmp);
        }
    }
    if (lstat(old, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        if (lstat(base, &sb) != 0 && errno == ENOENT) {
            if (cs__out_rename_noreplace(old, base) != 0) /* the new tree never got in place */
                st = CS_ERR_IO;
            else if (say)
                cs__out_notice("restored %s/ from %s/: process %ld died while replacing it",
                               base, old, (long)pid);
        } else if (cs__out_rmtree(old) != CS_OK) { /* the new tree is in place */
            st = CS_ERR_IO;
        } else if (say) {
            cs__out_notice("removed %s/, the previous %s/ that process %ld (no longer running) "
                           "had replaced", old, base, (long)pid);
        }
    }
out:
    free(base);
    free(tmp);
    free(old);
    return st;
}

int cs_out_cleanup_pid(const char *path, pid_t pid, int is_dir)
{
    return cleanup(path, pid, is_dir, 0);
}

int cs_out_pid_gone(pid_t pid)
{
    if (kill(pid, 0) != 0)
        return errno == ESRCH;
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')'); /* "pid (comm) S ..." */
    return paren && (paren[1] == ' ') && (paren[2] == 'Z' || paren[2] == 'X');
}

/* The pid of a leftover `name` of `base` ("BASE.tmp.123"), or 0. */
static pid_t leftover_pid(const char *name, const char *base, size_t bl)
{
    if (strncmp(name, base, bl) != 0)
        return 0;
    name += bl;
    if (strncmp(name, ".tmp.", 5) != 0 && strncmp(name, ".old.", 5) != 0)
        return 0;
    name += 5;
    size_t d = strspn(name, "0123456789");
    if (d == 0 || d > 9 || name[d] != '\0' || name[0] == '0')
        return 0;
    return (pid_t)atol(name);
}

int cs__out_reap(const char *path, int is_dir)
{
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    char *p = strndup(path, len);
    if (!p)
        return 0;
    char *slash = strrchr(p, '/');
    const char *dir = slash ? (slash == p ? "/" : p) : ".", *base = slash ? slash + 1 : p;
    if (slash)
        *slash = '\0';
    size_t bl = strlen(base);
    pid_t *pids = NULL, me = getpid();
    size_t cap = 0;
    int n = 0, done = 0;
    DIR *d = bl ? opendir(dir) : NULL;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        pid_t pid = leftover_pid(e->d_name, base, bl);
        int seen = pid == 0 || pid == me; /* ours: begin's clear_leftover */
        for (int i = 0; i < n && !seen; i++)
            seen = pids[i] == pid;
        if (seen || !cs_out_pid_gone(pid))
            continue;
        if (cs_grow(&pids, &cap, (size_t)n + 1, sizeof(*pids), 8))
            break;
        pids[n++] = pid;
    }
    if (d)
        closedir(d);
    for (int i = 0; i < n; i++)
        done += cleanup(path, pids[i], is_dir, 1) == CS_OK;
    free(pids);
    free(p);
    return done;
}

int cs_out_xml_marked(const char *head, size_t n)
{
    size_t l = strlen(CS_OUT_XML_MARK);
    for (size_t i = 0; i + l <= n; i++)
        if (memcmp(head + i, CS_OUT_XML_MARK, l) == 0)
            return 1;
    return 0;
}
