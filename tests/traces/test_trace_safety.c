/*
 * test_trace_safety.c - trace sessions never delete what collstep did not
 * write (issue #16): a directory with a user's files and a regular file are
 * refused and left byte for byte; a previous trace is replaced; force
 * replaces an empty directory or a marker-less trace of an older collstep
 * and nothing else; a path that changes before the commit is not replaced;
 * a child SIGKILLed mid-write is cleaned up by its parent
 * (cs_out_cleanup_pid) with the previous trace intact; links in a trace
 * tree are never followed.
 */
#define _GNU_SOURCE
#include "cs_out.h"
#include "cs_test.h"
#include "cs_trace.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char root[300];

static const char *P(const char *name)
{
    static char buf[64][600];
    static int k;
    k = (k + 1) % 64;
    snprintf(buf[k], sizeof(buf[k]), "%s/%s", root, name);
    return buf[k];
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* The whole file (at most 64 KiB) into a malloc'ed string, NULL if missing. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *b = calloc(1, 65537);
    size_t n = b ? fread(b, 1, 65536, f) : 0;
    (void)n;
    fclose(f);
    return b;
}

static int same(const char *path, const char *text)
{
    char *b = slurp(path);
    int ok = b && strcmp(b, text) == 0;
    free(b);
    return ok;
}

static int exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

/* Entries of root starting with prefix (temporaries: "x.tmp.", "x.old."). */
static int count_prefix(const char *prefix)
{
    char cmd[1024], path[600];
    snprintf(path, sizeof(path), "%s/.count", root);
    snprintf(cmd, sizeof(cmd), "ls -A '%s' | grep -c '^%s' > '%s'", root, prefix, path);
    if (system(cmd) < 0)
        return -1;
    char *b = slurp(path);
    int n = b ? atoi(b) : -1;
    free(b);
    unlink(path);
    return n;
}

static int one_link(void *ctx, const char *src, const char *dst, cs_trace_hop_t *hops, int max,
                    int *n)
{
    (void)ctx;
    (void)src;
    (void)dst;
    if (max >= 1)
        hops[0] = (cs_trace_hop_t){"wire", "nic", 1e9, 0.0};
    *n = 1;
    return CS_OK;
}

/* One instance of `bytes` bytes; 0 from open on, the status otherwise. */
static int open_trace(const char *dir, int force, cs_trace_session_t **s, cs_err_t *err)
{
    cs_trace_opts_t o;
    cs_trace_opts_init(&o);
    o.plot = 0;
    o.force = force;
    cs_err_clear(err);
    return cs_trace_session_open(dir, &o, 1, s, err);
}

static int fill_trace(cs_trace_session_t *s, uint64_t bytes, cs_err_t *err)
{
    cs_trace_meta_t m;
    memset(&m, 0, sizeof(m));
    snprintf(m.platform, sizeof(m.platform), "test");
    snprintf(m.coll, sizeof(m.coll), "allreduce");
    snprintf(m.algo, sizeof(m.algo), "ring");
    snprintf(m.model, sizeof(m.model), "ideal");
    m.bytes = bytes;
    m.nranks = 2;
    cs_trace_t *t = NULL;
    int st = cs_trace_session_begin(s, &m, 0.0, one_link, NULL, &t, err);
    if (st == CS_OK) {
        cs_trace_step_t step = {0, 0, 0, 1, bytes, 0.0, 1e-5}; /* a send to 1 */
        st = cs_trace_add_step(t, &step);
    }
    if (st == CS_OK)
        st = cs_trace_add_xfer(t, 0, 1, "h0", "h1", bytes, 0.0, 1e-5);
    if (st == CS_OK)
        st = cs_trace_session_end(s, 2e-5, err);
    return st;
}

/* A whole trace of `bytes` into dir. */
static int write_trace(const char *dir, int force, uint64_t bytes, cs_err_t *err)
{
    cs_trace_session_t *s = NULL;
    int st = open_trace(dir, force, &s, err);
    if (st != CS_OK)
        return st;
    st = fill_trace(s, bytes, err);
    if (st == CS_OK)
        st = cs_trace_session_commit(s, err);
    cs_trace_session_close(s);
    return st;
}

static void test_refusals(void)
{
    cs_err_t err;
    /* the reproduction: a project directory */
    const char *proj = P("proj");
    mkdir(proj, 0777);
    mkdir(P("proj/src"), 0777);
    const char *main_c = "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n";
    put(P("proj/src/main.c"), main_c);
    put(P("proj/README"), "my project\n");
    for (int force = 0; force < 2; force++) {
        int st = write_trace(proj, force, 1000, &err);
        CS_TEST_CHECK(st == CS_ERR_EXISTS && strstr(err.msg, "proj exists and is not a collstep "
                                                         "trace directory (no .collstep-trace "
                                                         "marker"),
                      "project (force %d): %s", force, err.msg);
        CS_TEST_CHECK(same(P("proj/src/main.c"), main_c) && same(P("proj/README"), "my project\n"),
                      "the project's files changed (force %d)", force);
        CS_TEST_CHECK(!exists(P("proj/.collstep-trace")) && count_prefix("proj.") == 0,
                      "something was written (force %d)", force);
    }
    /* a regular file */
    const char *f = P("precious.csv");
    put(f, "a,b\n1,2\n");
    for (int force = 0; force < 2; force++) {
        CS_TEST_CHECK(write_trace(f, force, 1000, &err) == CS_ERR_EXISTS &&
                          strstr(err.msg, "precious.csv is a file, not a trace directory"),
                      "file (force %d): %s", force, err.msg);
        CS_TEST_CHECK(same(f, "a,b\n1,2\n") && count_prefix("precious.csv.") == 0,
                      "the file changed (force %d)", force);
    }
}

static void test_replace(void)
{
    cs_err_t err;
    const char *d = P("tr");
    CS_TEST_CHECK(write_trace(d, 0, 1000, &err) == CS_OK, "first: %s", err.msg);
    char *marker = slurp(P("tr/" CS_TRACE_MARKER));
    CS_TEST_CHECK(marker &&
                      strncmp(marker, "collstep trace directory, written by collstep ", 46) == 0,
                  "marker: %s", marker ? marker : "(none)");
    free(marker);
    char *sum1 = slurp(P("tr/summary.json"));
    CS_TEST_CHECK(write_trace(d, 0, 5000, &err) == CS_OK, "second: %s", err.msg);
    char *sum2 = slurp(P("tr/summary.json"));
    CS_TEST_CHECK(sum1 && sum2 && strcmp(sum1, sum2) != 0 && strstr(sum2, "5000"), "not replaced");
    CS_TEST_CHECK(count_prefix("tr.") == 0, "temporaries left");
    free(sum1);
    free(sum2);

    /* force: an empty directory, an older trace without a marker */
    const char *e = P("empty");
    mkdir(e, 0777);
    CS_TEST_CHECK(write_trace(e, 0, 1000, &err) == CS_ERR_EXISTS, "empty dir unforced");
    CS_TEST_CHECK(write_trace(e, 1, 1000, &err) == CS_OK && exists(P("empty/summary.json")),
                  "empty dir forced: %s", err.msg);
    const char *old = P("oldtr");
    CS_TEST_CHECK(write_trace(old, 0, 1000, &err) == CS_OK, "setup: %s", err.msg);
    unlink(P("oldtr/" CS_TRACE_MARKER)); /* as an older collstep wrote it */
    CS_TEST_CHECK(write_trace(old, 0, 3000, &err) == CS_ERR_EXISTS, "old trace unforced");
    CS_TEST_CHECK(write_trace(old, 1, 3000, &err) == CS_OK && exists(P("oldtr/" CS_TRACE_MARKER)),
                  "old trace forced: %s", err.msg);
    /* an older trace with a user's file in it: not even forced */
    unlink(P("oldtr/" CS_TRACE_MARKER));
    put(P("oldtr/my-notes.txt"), "notes\n");
    CS_TEST_CHECK(write_trace(old, 1, 3000, &err) == CS_ERR_EXISTS &&
                      strstr(err.msg, "files collstep does not write"),
                  "old trace with notes forced: %s", err.msg);
    CS_TEST_CHECK(same(P("oldtr/my-notes.txt"), "notes\n") && exists(P("oldtr/summary.json")),
                  "old trace with notes changed");

    /* the path becomes a user's file while the run goes: not replaced */
    cs_trace_session_t *s = NULL;
    const char *late = P("late");
    CS_TEST_CHECK(open_trace(late, 1, &s, &err) == CS_OK, "open: %s", err.msg);
    if (s) {
        CS_TEST_CHECK(fill_trace(s, 1000, &err) == CS_OK, "fill: %s", err.msg);
        put(late, "written meanwhile\n");
        cs_err_clear(&err);
        CS_TEST_CHECK(cs_trace_session_commit(s, &err) == CS_ERR_EXISTS && strstr(err.msg, "is a file"),
                      "late: %s", err.msg);
        cs_trace_session_close(s);
        CS_TEST_CHECK(same(late, "written meanwhile\n") && count_prefix("late.") == 0,
                      "late file changed or temporaries left");
    }
}

/* A child tracing into a previous trace is SIGKILLed mid-write. */
static void test_killed_child(void)
{
    cs_err_t err;
    const char *d = P("kill");
    CS_TEST_CHECK(write_trace(d, 0, 1000, &err) == CS_OK, "previous: %s", err.msg);
    char *before = slurp(P("kill/summary.json"));
    int fds[2];
    if (pipe(fds) != 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        cs_trace_session_t *s = NULL;
        close(fds[0]);
        if (open_trace(d, 0, &s, &err) == CS_OK) {
            cs_trace_meta_t m;
            memset(&m, 0, sizeof(m));
            snprintf(m.algo, sizeof(m.algo), "ring");
            m.bytes = 7;
            m.nranks = 2;
            cs_trace_t *t = NULL;
            if (cs_trace_session_begin(s, &m, 0.0, one_link, NULL, &t, &err) == CS_OK)
                for (int i = 0; i < 1000; i++) { /* streamed steps: files half written */
                    cs_trace_step_t step = {0, (uint32_t)i, 0, 1, 7, i * 1e-6, i * 1e-6 + 5e-7};
                    cs_trace_add_step(t, &step);
                }
            if (write(fds[1], "x", 1) != 1)
                _exit(3);
        }
        for (;;)
            pause();
    }
    close(fds[1]);
    char c;
    CS_TEST_CHECK(read(fds[0], &c, 1) == 1, "the child did not open its session");
    close(fds[0]);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    CS_TEST_CHECK(count_prefix("kill.tmp.") == 1, "the child's temporary is not there");
    CS_TEST_CHECK(cs_out_cleanup_pid(d, pid, 1) == CS_OK, "cleanup");
    CS_TEST_CHECK(count_prefix("kill.") == 0, "left behind after cleanup");
    char *after = slurp(P("kill/summary.json"));
    CS_TEST_CHECK(before && after && strcmp(before, after) == 0 &&
                      exists(P("kill/" CS_TRACE_MARKER)),
                  "the previous trace was damaged");
    free(before);
    free(after);
}

/* Links inside a session's tree, and inside a replaced trace, are removed,
 * never followed. */
static void test_links(void)
{
    cs_err_t err;
    const char *out = P("outside");
    mkdir(out, 0777);
    put(P("outside/victim"), "keep\n");
    const char *d = P("ln");
    cs_trace_session_t *s = NULL;
    CS_TEST_CHECK(open_trace(d, 0, &s, &err) == CS_OK, "open: %s", err.msg);
    char tmp[700];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld/escape", d, (long)getpid());
    CS_TEST_CHECK(symlink(out, tmp) == 0, "symlink in the temporary tree: %s", strerror(errno));
    cs_trace_session_close(s); /* uncommitted: the tree goes */
    CS_TEST_CHECK(same(P("outside/victim"), "keep\n") && count_prefix("ln") == 0,
                  "close followed a link or left files");
    CS_TEST_CHECK(write_trace(d, 0, 1000, &err) == CS_OK, "write: %s", err.msg);
    /* a link put into a trace: the trace is not replaced (collstep did not
     * write the link), the link and what it points to are kept */
    CS_TEST_CHECK(symlink(out, P("ln/escape")) == 0, "symlink in a trace");
    CS_TEST_CHECK(write_trace(d, 1, 2000, &err) == CS_ERR_EXISTS &&
                      strstr(err.msg, "escape in it is not collstep's"),
                  "replace: %s", err.msg);
    struct stat lsb;
    CS_TEST_CHECK(same(P("outside/victim"), "keep\n") && lstat(P("ln/escape"), &lsb) == 0 &&
                      S_ISLNK(lsb.st_mode),
                  "the refusal changed the link or its target");
    CS_TEST_CHECK(unlink(P("ln/escape")) == 0, "unlink");
    /* a trace path that is a link to a trace: refused, the trace untouched */
    CS_TEST_CHECK(symlink(d, P("ln2")) == 0, "symlink");
    CS_TEST_CHECK(write_trace(P("ln2"), 1, 1000, &err) == CS_ERR_EXISTS &&
                      strstr(err.msg, "symbolic link"),
                  "through a link: %s", err.msg);
    CS_TEST_CHECK(exists(P("ln/summary.json")), "the linked trace changed");
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(root, sizeof(root), "%s/cs_trace_safety_XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(root))
        CS_TEST_SKIP("cannot create a temporary directory");
    test_refusals();
    test_replace();
    test_killed_child();
    test_links();
    cs_trace_rmtree(root);
    return cs_test_finish();
}
