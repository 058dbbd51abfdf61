/*
 * test_out.c - core/cs_out.h: what is replaced and what is refused (files
 * and directories, with and without force), byte for byte untouched
 * refusals, the registry's cleanup, a child killed mid-write cleaned up by
 * its parent (cs_out_cleanup_pid, every state of a directory commit),
 * links never followed, leftovers of dead processes cleaned up by the next
 * writer (and only theirs), outputs whose directory cannot take them
 * refused up front, and cs_sched_save on top of it.
 */
#define _GNU_SOURCE
#include "cs_out.h"
#include "cs_test.h"
#include "cs_text.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char root[512]; /* $TMPDIR/cs_out_test_XXXXXX, made by main */

static const char *P(const char *name)
{
    static char buf[256][600]; /* more than any test function uses */
    static int k;
    k = (k + 1) % 256;
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

/* The whole file, or "<missing>" / "<dir>". */
static const char *get(const char *path)
{
    static char buf[4][4096];
    static int k;
    k = (k + 1) % 4;
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return "<missing>";
    if (S_ISDIR(sb.st_mode))
        return "<dir>";
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf[k], 1, sizeof(buf[k]) - 1, f) : 0;
    if (f)
        fclose(f);
    buf[k][n] = 0;
    return buf[k];
}

static int exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

/* Entries of root whose name starts with prefix. */
static int count_prefix(const char *prefix)
{
    char cmd[1400];
    snprintf(cmd, sizeof(cmd), "ls -A '%s' | grep -c '^%s' > '%s/.count'", root, prefix, root);
    if (system(cmd) < 0)
        return -1;
    char path[600];
    snprintf(path, sizeof(path), "%s/.count", root);
    int n = atoi(get(path));
    unlink(path);
    return n;
}

static int starts_hello(const char *head, size_t n)
{
    return n >= 5 && memcmp(head, "hello", 5) == 0;
}

static const cs_out_kind_t fkind = {"hello file", starts_hello, NULL, NULL, NULL};

static int legacy_ok(const char *path)
{
    char p[600];
    snprintf(p, sizeof(p), "%s/summary.json", path);
    return exists(p);
}

static const cs_out_kind_t dkind = {"test directory", NULL, ".collstep-test", NULL, NULL};
static const cs_out_kind_t dkind_legacy = {"test directory", NULL, ".collstep-test", legacy_ok, NULL};
static int remade_png(const char *name)
{
    return strcmp(name, "plot.png") == 0;
}
static const cs_out_kind_t dkind_remade = {"test directory", NULL, ".collstep-test", NULL,
                                           remade_png};

/* Write a file through cs_out; returns the status of begin or commit. */
static int write_file(const char *path, int flags, const char *text, cs_err_t *err)
{
    cs_out_t *o = NULL;
    cs_err_clear(err);
    int st = cs_out_begin_file(path, flags, &fkind, &o, err);
    if (st != CS_OK)
        return st;
    fputs(text, cs_out_stream(o));
    return cs_out_commit(o, err);
}

static int write_dir(const char *path, int flags, const cs_out_kind_t *k, const char *text,
                     cs_err_t *err)
{
    cs_out_t *o = NULL;
    cs_err_clear(err);
    int st = cs_out_begin_dir(path, flags, k, &o, err);
    if (st != CS_OK)
        return st;
    char p[600];
    snprintf(p, sizeof(p), "%s/data.txt", cs_out_tmp_path(o));
    put(p, text);
    return cs_out_commit(o, err);
}

static void test_files(void)
{
    cs_err_t err;
    const char *f = P("out.txt");
    CS_TEST_CHECK(write_file(f, 0, "hello 1\n", &err) == CS_OK, "new file: %s", err.msg);
    CS_TEST_CHECK(strcmp(get(f), "hello 1\n") == 0, "content %s", get(f));
    chmod(f, 0640);
    CS_TEST_CHECK(write_file(f, 0, "hello 2\n", &err) == CS_OK, "over own: %s", err.msg);
    struct stat sb;
    CS_TEST_CHECK(strcmp(get(f), "hello 2\n") == 0 && stat(f, &sb) == 0 &&
                      (sb.st_mode & 0777) == 0640,
                  "replaced, mode kept: %s %o", get(f), sb.st_mode & 0777);

    /* someone else's file: refused, byte for byte untouched; force replaces */
    const char *u = P("user.csv");
    put(u, "precious,data\n1,2\n");
    CS_TEST_CHECK(
        write_file(u, 0, "hello\n", &err) == CS_ERR_EXISTS &&
            strstr(err.msg, "user.csv exists and is not a hello file written by collstep"),
        "user file: %s", err.msg);
    CS_TEST_CHECK(strcmp(get(u), "precious,data\n1,2\n") == 0, "user file changed: %s", get(u));
    CS_TEST_CHECK(write_file(u, CS_OUT_FORCE, "hello f\n", &err) == CS_OK, "force: %s", err.msg);
    CS_TEST_CHECK(strcmp(get(u), "hello f\n") == 0, "forced content %s", get(u));

    /* an empty file: refused without force */
    const char *e = P("empty.txt");
    put(e, "");
    CS_TEST_CHECK(write_file(e, 0, "hello\n", &err) == CS_ERR_EXISTS, "empty file accepted");
    CS_TEST_CHECK(exists(e) && strcmp(get(e), "") == 0, "empty file changed");

    /* a directory: refused even with force, its file untouched */
    const char *d = P("adir"), *din = P("adir/keep");
    mkdir(d, 0777);
    put(din, "keep me");
    for (int force = 0; force < 2; force++) {
        CS_TEST_CHECK(write_file(d, force ? CS_OUT_FORCE : 0, "hello\n", &err) == CS_ERR_EXISTS &&
                          strstr(err.msg, "is a directory") && strstr(err.msg, "rename"),
                      "over a directory (force %d): %s", force, err.msg);
        CS_TEST_CHECK(strcmp(get(din), "keep me") == 0, "directory's file changed");
    }

    /* a symbolic link to a file: refused even forced, the target untouched;
     * a link to /dev/null is written through */
    const char *l = P("link.txt");
    CS_TEST_CHECK(symlink(u, l) == 0, "symlink");
    CS_TEST_CHECK(write_file(l, CS_OUT_FORCE, "hello l\n", &err) == CS_ERR_EXISTS &&
                      strstr(err.msg, "symbolic link"),
                  "over a link: %s", err.msg);
    CS_TEST_CHECK(strcmp(get(u), "hello f\n") == 0, "link target changed");
    const char *ln = P("null.txt");
    CS_TEST_CHECK(symlink("/dev/null", ln) == 0, "symlink");
    CS_TEST_CHECK(write_file(ln, 0, "hello\n", &err) == CS_OK, "to /dev/null: %s", err.msg);
    CS_TEST_CHECK(lstat(ln, &sb) == 0 && S_ISLNK(sb.st_mode), "the link was replaced");
    CS_TEST_CHECK(write_file("/dev/null", 0, "x", &err) == CS_OK, "/dev/null: %s", err.msg);

    /* abort: nothing left; the temporary is PATH.tmp.<pid> */
    cs_out_t *o = NULL;
    cs_err_clear(&err);
    const char *a = P("aborted.txt");
    CS_TEST_CHECK(cs_out_begin_file(a, 0, &fkind, &o, &err) == CS_OK, "begin: %s", err.msg);
    if (o) {
        char want[600];
        snprintf(want, sizeof(want), "%s.tmp.%ld", a, (long)getpid());
        CS_TEST_CHECK(strcmp(cs_out_tmp_path(o), want) == 0 && exists(want), "tmp %s",
                      cs_out_tmp_path(o));
        fputs("partial", cs_out_stream(o));
        cs_out_abort(o);
        CS_TEST_CHECK(!exists(want) && !exists(a), "abort left files");
    }
    /* a missing parent directory, or a file where a directory should be:
     * refused before anything is made, naming the path given (never the
     * temporary) and why */
    CS_TEST_CHECK(write_file(P("missing/x.txt"), 0, "hello", &err) == CS_ERR_EXISTS &&
                      strstr(err.msg, "missing/x.txt: ") && strstr(err.msg, "does not exist") &&
                      !strstr(err.msg, ".tmp."),
                  "missing parent: %s", err.msg);
    CS_TEST_CHECK(cs_out_check(P("missing/x.txt"), 0, &fkind, 0, &err) == CS_ERR_EXISTS,
                  "check: missing parent accepted");
    CS_TEST_CHECK(write_file(P("user.csv/x.txt"), 0, "hello", &err) == CS_ERR_EXISTS &&
                      strstr(err.msg, "not a directory"),
                  "a file as parent: %s", err.msg);
    CS_TEST_CHECK(write_dir(P("missing/d"), 0, &dkind, "x", &err) == CS_ERR_EXISTS &&
                      strstr(err.msg, "does not exist"),
                  "directory with a missing parent: %s", err.msg);
    CS_TEST_CHECK(count_prefix("out.txt.") == 0 && count_prefix("user.csv.") == 0,
                  "temporaries left");
}

static void test_dirs(void)
{
    cs_err_t err;
    const char *d = P("tr");
    CS_TEST_CHECK(write_dir(d, 0, &dkind, "one", &err) == CS_OK, "new dir: %s", err.msg);
    CS_TEST_CHECK(strcmp(get(P("tr/data.txt")), "one") == 0, "content");
    CS_TEST_CHECK(strncmp(get(P("tr/.collstep-test")),
                          "collstep test directory, written by collstep ", 45) == 0,
                  "marker: %s", get(P("tr/.collstep-test")));
    CS_TEST_CHECK(strstr(get(P("tr/.collstep-test")), "\ncontents:\nF data.txt\n") != NULL,
                  "marker without the list of contents: %s", get(P("tr/.collstep-test")));
    /* a file (or a folder) a user put into our directory: never deleted with
     * it, forced or not; once moved out, the directory is replaced whole */
    put(P("tr/notes.txt"), "mine");
    mkdir(P("tr/analysis"), 0777);
    for (int force = 0; force < 2; force++) {
        CS_TEST_CHECK(write_dir(d, force ? CS_OUT_FORCE : 0, &dkind, "two", &err) ==
                              CS_ERR_EXISTS &&
                          strstr(err.msg, " in it is not collstep's") &&
                          (strstr(err.msg, "notes.txt") || strstr(err.msg, "analysis/")),
                      "user's file in ours (force %d): %s", force, err.msg);
        CS_TEST_CHECK(strcmp(get(P("tr/notes.txt")), "mine") == 0 &&
                          strcmp(get(P("tr/data.txt")), "one") == 0,
                      "user's file or ours changed");
    }
    CS_TEST_CHECK(unlink(P("tr/notes.txt")) == 0 && rmdir(P("tr/analysis")) == 0, "cleanup");
    /* a file the kind says a user makes again (a plot drawn from its
     * script): still ours, replaced with the rest */
    put(P("tr/plot.png"), "png");
    CS_TEST_CHECK(write_dir(d, 0, &dkind, "x", &err) == CS_ERR_EXISTS, "plot.png without remade");
    CS_TEST_CHECK(write_dir(d, 0, &dkind_remade, "one", &err) == CS_OK && !exists(P("tr/plot.png")),
                  "remade plot: %s", err.msg);
    CS_TEST_CHECK(write_dir(d, 0, &dkind, "two", &err) == CS_OK, "replace own: %s", err.msg);
    CS_TEST_CHECK(strcmp(get(P("tr/data.txt")), "two") == 0, "not replaced");
    CS_TEST_CHECK(count_prefix("tr.") == 0, "tmp or old left");
    /* a marker from before the list of contents: refused (collstep cannot
     * tell), unless the kind's legacy test accepts the files */
    const char *pre = P("premanifest");
    mkdir(pre, 0777);
    put(P("premanifest/.collstep-test"), "collstep test directory, written by collstep 0.0.9\n");
    put(P("premanifest/summary.json"), "{}\n");
    CS_TEST_CHECK(write_dir(pre, CS_OUT_FORCE, &dkind, "t", &err) == CS_ERR_EXISTS &&
                      strstr(err.msg, "did not list what it wrote"),
                  "marker without a list: %s", err.msg);
    CS_TEST_CHECK(exists(P("premanifest/summary.json")), "unlisted tree changed");
    CS_TEST_CHECK(write_dir(pre, 0, &dkind_legacy, "t", &err) == CS_OK, "legacy's files: %s",
                  err.msg);
    CS_TEST_CHECK(!exists(P("premanifest/summary.json")), "unlisted tree not replaced");

    /* a user's directory (the project): refused with and without
     * force, every file byte for byte untouched */
    const char *proj = P("proj");
    mkdir(proj, 0777);
    mkdir(P("proj/src"), 0777);
    put(P("proj/src/main.c"), "int main(void) { return 0; }\n");
    put(P("proj/README"), "my project\n");
    put(P("proj/summary.json"), "{}\n"); /* looks like a trace to `legacy` */
    put(P("proj/notes"), "x\n");
    for (int force = 0; force < 2; force++) {
        int st = write_dir(proj, force ? CS_OUT_FORCE : 0, &dkind, "t", &err);
        CS_TEST_CHECK(st == CS_ERR_EXISTS && strstr(err.msg, "proj exists and is not a collstep test "
                                                         "directory (no .collstep-test marker"),
                      "project (force %d): %s", force, err.msg);
        CS_TEST_CHECK(strcmp(get(P("proj/src/main.c")), "int main(void) { return 0; }\n") == 0 &&
                          strcmp(get(P("proj/README")), "my project\n") == 0,
                      "project changed");
    }
    CS_TEST_CHECK(count_prefix("proj.") == 0, "tmp left after refusals");

    /* an unmarked tree an older collstep wrote: replaced only forced, only
     * when `legacy` accepts it */
    const char *old = P("oldtrace");
    mkdir(old, 0777);
    put(P("oldtrace/summary.json"), "{}\n");
    CS_TEST_CHECK(write_dir(old, 0, &dkind_legacy, "t", &err) == CS_ERR_EXISTS, "legacy unforced");
    CS_TEST_CHECK(exists(P("oldtrace/summary.json")), "legacy changed");
    CS_TEST_CHECK(write_dir(old, CS_OUT_FORCE, &dkind_legacy, "t", &err) == CS_OK,
                  "legacy forced: %s", err.msg);
    CS_TEST_CHECK(!exists(P("oldtrace/summary.json")) && exists(P("oldtrace/.collstep-test")),
                  "legacy not replaced");

    /* an empty directory: refused; forced, replaced */
    const char *e = P("emptydir");
    mkdir(e, 0777);
    CS_TEST_CHECK(write_dir(e, 0, &dkind, "t", &err) == CS_ERR_EXISTS &&
                      strstr(err.msg, "empty directory"),
                  "empty: %s", err.msg);
    CS_TEST_CHECK(write_dir(e, CS_OUT_FORCE, &dkind, "t", &err) == CS_OK, "empty forced: %s",
                  err.msg);
    CS_TEST_CHECK(strcmp(get(P("emptydir/data.txt")), "t") == 0, "empty forced content");

    /* a regular file: refused even forced, untouched */
    const char *f = P("precious.csv");
    put(f, "a,b\n1,2\n");
    for (int force = 0; force < 2; force++) {
        CS_TEST_CHECK(write_dir(f, force ? CS_OUT_FORCE : 0, &dkind, "t", &err) == CS_ERR_EXISTS &&
                          strstr(err.msg, "precious.csv is a file, not a test directory"),
                      "over a file: %s", err.msg);
        CS_TEST_CHECK(strcmp(get(f), "a,b\n1,2\n") == 0, "file changed");
    }
    /* a link to our own trace: refused, the trace untouched */
    const char *l = P("trlink");
    CS_TEST_CHECK(symlink(d, l) == 0, "symlink");
    CS_TEST_CHECK(write_dir(l, CS_OUT_FORCE, &dkind, "t", &err) == CS_ERR_EXISTS &&
                      strstr(err.msg, "symbolic link"),
                  "over a link: %s", err.msg);
    CS_TEST_CHECK(strcmp(get(P("tr/data.txt")), "two") == 0, "link target changed");
    /* trailing slash */
    char slash[600];
    snprintf(slash, sizeof(slash), "%s/", d);
    CS_TEST_CHECK(write_dir(slash, 0, &dkind, "three", &err) == CS_OK, "slash: %s", err.msg);
    CS_TEST_CHECK(strcmp(get(P("tr/data.txt")), "three") == 0, "slash content");
    /* the path changes between begin and commit: a user's file appears */
    cs_out_t *o = NULL;
    cs_err_clear(&err);
    const char *late = P("late");
    CS_TEST_CHECK(cs_out_begin_dir(late, 0, &dkind, &o, &err) == CS_OK, "begin: %s", err.msg);
    put(late, "user wrote this meanwhile");
    CS_TEST_CHECK(o && cs_out_commit(o, &err) == CS_ERR_EXISTS && strstr(err.msg, "is a file"),
                  "late file: %s", err.msg);
    CS_TEST_CHECK(strcmp(get(late), "user wrote this meanwhile") == 0 && count_prefix("late.") == 0,
                  "late file changed or tmp left");
    /* cs_out_check: the same answers, nothing created */
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_out_check(proj, CS_OUT_FORCE, &dkind, 1, &err) == CS_ERR_EXISTS &&
                      strstr(err.msg, "no .collstep-test marker"),
                  "check project: %s", err.msg);
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_out_check(d, 0, &dkind, 1, &err) == CS_OK &&
                      cs_out_check(P("nothing"), 0, &dkind, 1, &err) == CS_OK &&
                      cs_out_check("-", CS_OUT_STDOUT, &fkind, 0, &err) == CS_OK &&
                      cs_out_check(P("tr/data.txt"), 0, &fkind, 0, &err) == CS_ERR_EXISTS,
                  "check: %s", err.msg);
    CS_TEST_CHECK(!exists(P("nothing")) && count_prefix("nothing") == 0, "check created files");
    /* ".", ".." and "/" are not output names */
    CS_TEST_CHECK(write_dir(".", CS_OUT_FORCE, &dkind, "t", &err) == CS_ERR_INVAL &&
                      write_dir("..", CS_OUT_FORCE, &dkind, "t", &err) == CS_ERR_INVAL &&
                      write_dir("/", CS_OUT_FORCE, &dkind, "t", &err) == CS_ERR_INVAL &&
                      write_file(P("proj/.."), CS_OUT_FORCE, "t", &err) == CS_ERR_INVAL,
                  "'.' accepted: %s", err.msg);
    /* a marker with a bad name is refused */
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_out_begin_dir(P("bad"), 0, &(cs_out_kind_t){"x", NULL, "marker", NULL, NULL}, &o,
                                   &err) == CS_ERR_INVAL,
                  "bad marker accepted");
}

/* Links inside a tree collstep removes are removed, never followed. */
static void test_links(void)
{
    cs_err_t err;
    const char *out = P("outside");
    mkdir(out, 0777);
    put(P("outside/victim"), "do not delete");
    cs_out_t *o = NULL;
    cs_err_clear(&err);
    const char *d = P("ltr");
    /* abort of a tree with links to the outside */
    CS_TEST_CHECK(cs_out_begin_dir(d, 0, &dkind, &o, &err) == CS_OK, "begin: %s", err.msg);
    if (!o)
        return;
    char p[600];
    snprintf(p, sizeof(p), "%s/link", cs_out_tmp_path(o));
    CS_TEST_CHECK(symlink(out, p) == 0, "symlink");
    snprintf(p, sizeof(p), "%s/sub", cs_out_tmp_path(o));
    mkdir(p, 0777);
    snprintf(p, sizeof(p), "%s/sub/flink", cs_out_tmp_path(o));
    CS_TEST_CHECK(symlink(P("outside/victim"), p) == 0, "symlink");
    cs_out_abort(o);
    CS_TEST_CHECK(!exists(d) && count_prefix("ltr.") == 0, "abort left files");
    CS_TEST_CHECK(strcmp(get(P("outside/victim")), "do not delete") == 0, "followed a link");
    /* a replaced tree that holds a link to the outside (written with it,
     * so its list names it): the link goes, never what it points to */
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_out_begin_dir(d, 0, &dkind, &o, &err) == CS_OK, "begin: %s", err.msg);
    snprintf(p, sizeof(p), "%s/link", cs_out_tmp_path(o));
    CS_TEST_CHECK(symlink(out, p) == 0, "symlink");
    CS_TEST_CHECK(cs_out_commit(o, &err) == CS_OK, "commit: %s", err.msg);
    CS_TEST_CHECK(write_dir(d, 0, &dkind, "2", &err) == CS_OK, "replace: %s", err.msg);
    CS_TEST_CHECK(strcmp(get(P("outside/victim")), "do not delete") == 0 &&
                      !exists(P("ltr/link")) && count_prefix("ltr.") == 0,
                  "replace followed a link or left files");
    /* a link a user put there: the tree is not replaced, the link kept */
    CS_TEST_CHECK(symlink(out, P("ltr/mylink")) == 0, "symlink");
    CS_TEST_CHECK(write_dir(d, CS_OUT_FORCE, &dkind, "3", &err) == CS_ERR_EXISTS &&
                      strstr(err.msg, "mylink in it is not collstep's"),
                  "user's link: %s", err.msg);
    struct stat lsb;
    CS_TEST_CHECK(lstat(P("ltr/mylink"), &lsb) == 0 && S_ISLNK(lsb.st_mode) &&
                      strcmp(get(P("outside/victim")), "do not delete") == 0,
                  "user's link or its target changed");
}

static void test_cleanup_all(void)
{
    cs_err_t err;
    cs_out_t *f = NULL, *d = NULL;
    put(P("ca.txt"), "hello before");
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_out_begin_file(P("ca.txt"), 0, &fkind, &f, &err) == CS_OK, "begin file");
    CS_TEST_CHECK(cs_out_begin_dir(P("cad"), 0, &dkind, &d, &err) == CS_OK, "begin dir");
    if (!f || !d)
        return;
    fputs("hello partial", cs_out_stream(f));
    CS_TEST_CHECK(count_prefix("ca") == 3, "two temporaries expected");
    CS_TEST_CHECK(cs_out_cleanup_all() == 2, "cleanup_all count");
    CS_TEST_CHECK(count_prefix("ca") == 1, "cleanup_all left temporaries");
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_out_commit(f, &err) == CS_ERR_IO && strstr(err.msg, "interrupted"),
                  "commit after cleanup: %s", err.msg);
    cs_out_abort(d);
    CS_TEST_CHECK(strcmp(get(P("ca.txt")), "hello before") == 0 && !exists(P("cad")),
                  "outputs changed");
}

/* A child writing into PATH is SIGKILLed mid-write; the parent cleans up. */
static void test_killed_child(void)
{
    cs_err_t err;
    const char *d = P("kt");
    CS_TEST_CHECK(write_dir(d, 0, &dkind, "previous", &err) == CS_OK, "write: %s", err.msg);
    int pipefd[2];
    if (pipe(pipefd) != 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        cs_out_t *o = NULL, *f = NULL;
        close(pipefd[0]);
        if (cs_out_begin_dir(d, 0, &dkind, &o, NULL) == CS_OK &&
            cs_out_begin_file(P("kf.txt"), 0, &fkind, &f, NULL) == CS_OK) {
            char p[600];
            snprintf(p, sizeof(p), "%s/half.csv", cs_out_tmp_path(o));
            put(p, "1,2,3");
            fputs("hello half", cs_out_stream(f));
            fflush(cs_out_stream(f));
            if (write(pipefd[1], "x", 1) != 1)
                _exit(3);
        }
        for (;;)
            pause();
    }
    close(pipefd[1]);
    char c = 0;
    CS_TEST_CHECK(read(pipefd[0], &c, 1) == 1, "child did not begin");
    close(pipefd[0]);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    CS_TEST_CHECK(count_prefix("kt.") == 1 && count_prefix("kf.txt.") == 1,
                  "the child's temporaries are not there");
    CS_TEST_CHECK(cs_out_cleanup_pid(d, pid, 1) == CS_OK, "cleanup dir");
    CS_TEST_CHECK(cs_out_cleanup_pid(P("kf.txt"), pid, 0) == CS_OK, "cleanup file");
    CS_TEST_CHECK(count_prefix("kt.") == 0 && count_prefix("kf.txt") == 0, "left behind");
    CS_TEST_CHECK(strcmp(get(P("kt/data.txt")), "previous") == 0, "previous trace damaged");

    /* The states of a commit that replaces a directory, as a kill leaves them
     * (pid 999999 stands for the dead child). */
    char tmp[600], old[600];
    snprintf(tmp, sizeof(tmp), "%s.tmp.999999", d);
    snprintf(old, sizeof(old), "%s.old.999999", d);
    /* between the renames: PATH absent, old aside, new in tmp -> old back */
    CS_TEST_CHECK(rename(d, old) == 0 && mkdir(tmp, 0777) == 0, "setup B");
    snprintf(tmp + strlen(tmp), sizeof(tmp) - strlen(tmp), "/.collstep-test");
    put(tmp, "marker");
    tmp[strlen(tmp) - strlen("/.collstep-test")] = 0;
    CS_TEST_CHECK(cs_out_cleanup_pid(d, 999999, 1) == CS_OK, "cleanup B");
    CS_TEST_CHECK(strcmp(get(P("kt/data.txt")), "previous") == 0 && !exists(old) && !exists(tmp),
                  "state B not restored");
    /* after the second rename: PATH new, old aside -> old removed */
    CS_TEST_CHECK(write_dir(old, CS_OUT_FORCE, &dkind, "older", &err) == CS_OK, "setup C");
    CS_TEST_CHECK(cs_out_cleanup_pid(d, 999999, 1) == CS_OK, "cleanup C");
    CS_TEST_CHECK(strcmp(get(P("kt/data.txt")), "previous") == 0 && !exists(old), "state C");
    /* a PATH.tmp.<pid> without a marker is not collstep's: left alone */
    char user[700];
    CS_TEST_CHECK(mkdir(tmp, 0777) == 0, "setup");
    snprintf(user, sizeof(user), "%s/user", tmp);
    put(user, "mine");
    cs_out_cleanup_pid(d, 999999, 1);
    CS_TEST_CHECK(strcmp(get(user), "mine") == 0, "removed an unmarked tree");
    unlink(user);
    rmdir(tmp);
}

/* A leftover PATH.tmp.<our pid> that collstep did not make is refused. */
static void test_leftover(void)
{
    cs_err_t err;
    char tmp[600], in[640];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", P("lo"), (long)getpid());
    mkdir(tmp, 0777);
    snprintf(in, sizeof(in), "%s/user", tmp);
    put(in, "mine");
    CS_TEST_CHECK(write_dir(P("lo"), 0, &dkind, "t", &err) == CS_ERR_EXISTS &&
                      strstr(err.msg, "was not left by collstep"),
                  "leftover: %s", err.msg);
    CS_TEST_CHECK(strcmp(get(in), "mine") == 0, "leftover removed");
    unlink(in);
    rmdir(tmp);
    /* an empty one (a child killed right after mkdir) is reused */
    mkdir(tmp, 0777);
    CS_TEST_CHECK(write_dir(P("lo"), 0, &dkind, "t", &err) == CS_OK, "empty leftover: %s", err.msg);
}

/* What the notice hook heard. */
static int notices;
static char last_notice[1024];

static void on_notice(const char *msg)
{
    notices++;
    snprintf(last_notice, sizeof(last_notice), "%s", msg);
}

/* A pid that ran and no longer does (zombie = 1: it died, not collected). */
static pid_t dead_pid(int zombie)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    if (!zombie) {
        waitpid(pid, NULL, 0);
        return pid;
    }
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    for (int i = 0; i < 1000; i++) { /* until the kernel has it as a zombie */
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = 0;
        char *paren = strrchr(buf, ')');
        if (paren && paren[2] == 'Z')
            break;
        usleep(1000);
    }
    return pid;
}

/* Leftovers of killed processes are cleaned up by the next writer of the
 * same path (begin and check): only those of processes that no longer run,
 * only what collstep could have made, and each said through the hook. */
static void test_reap(void)
{
    cs_err_t err;
    char t[700], o[700], in[760];
    cs_out_set_notice(on_notice);
    /* a file's temporary: removed, said */
    pid_t dead = dead_pid(0);
    snprintf(t, sizeof(t), "%s.tmp.%ld", P("rf.txt"), (long)dead);
    put(P("rf.txt"), "hello before");
    put(t, "hello half");
    notices = 0;
    CS_TEST_CHECK(cs_out_check(P("rf.txt"), 0, &fkind, 0, &err) == CS_OK, "check: %s", err.msg);
    CS_TEST_CHECK(!exists(t) && strcmp(get(P("rf.txt")), "hello before") == 0,
                  "the dead process's temporary is left (or the file touched)");
    CS_TEST_CHECK(notices == 1 && strstr(last_notice, t) && strstr(last_notice, "no longer runs"),
                  "not said: %d '%s'", notices, last_notice);
    /* a zombie's too */
    pid_t z = dead_pid(1);
    snprintf(t, sizeof(t), "%s.tmp.%ld", P("rf.txt"), (long)z);
    put(t, "hello zombie");
    CS_TEST_CHECK(write_file(P("rf.txt"), 0, "hello after", &err) == CS_OK && !exists(t),
                  "a zombie's temporary is left: %s", err.msg);
    waitpid(z, NULL, 0);
    /* a running process's: untouched */
    pid_t live = fork();
    if (live == 0) {
        for (;;)
            pause();
    }
    snprintf(t, sizeof(t), "%s.tmp.%ld", P("rf.txt"), (long)live);
    put(t, "hello running");
    notices = 0;
    CS_TEST_CHECK(write_file(P("rf.txt"), 0, "hello again", &err) == CS_OK, "%s", err.msg);
    CS_TEST_CHECK(strcmp(get(t), "hello running") == 0 && notices == 0,
                  "a running process's temporary was touched");
    kill(live, SIGKILL);
    waitpid(live, NULL, 0);
    unlink(t);

    /* a directory killed between the renames of its commit: PATH absent, the
     * old tree aside, the new one in the temporary -> the old tree is back,
     * then replaced by this write; nothing left */
    const char *d = P("rd");
    dead = dead_pid(0);
    snprintf(t, sizeof(t), "%s.tmp.%ld", d, (long)dead);
    snprintf(o, sizeof(o), "%s.old.%ld", d, (long)dead);
    CS_TEST_CHECK(write_dir(o, 0, &dkind, "previous", &err) == CS_OK, "setup: %s", err.msg);
    CS_TEST_CHECK(write_dir(t, 0, &dkind, "half", &err) == CS_OK, "setup: %s", err.msg);
    notices = 0;
    CS_TEST_CHECK(cs_out_check(d, 0, &dkind, 1, &err) == CS_OK, "check: %s", err.msg);
    CS_TEST_CHECK(strcmp(get(P("rd/data.txt")), "previous") == 0 && !exists(o) && !exists(t),
                  "not restored: %s", get(P("rd/data.txt")));
    CS_TEST_CHECK(notices == 2 && strstr(last_notice, "restored"), "said %d: %s", notices,
                  last_notice);
    CS_TEST_CHECK(write_dir(d, 0, &dkind, "new", &err) == CS_OK &&
                      strcmp(get(P("rd/data.txt")), "new") == 0,
                  "replace after restore: %s", err.msg);
    /* an unmarked temporary of a dead process: not collstep's, left (said) */
    snprintf(t, sizeof(t), "%s.tmp.%ld", d, (long)dead);
    mkdir(t, 0777);
    snprintf(in, sizeof(in), "%s/user", t);
    put(in, "mine");
    notices = 0;
    CS_TEST_CHECK(write_dir(d, 0, &dkind, "newer", &err) == CS_OK, "%s", err.msg);
    CS_TEST_CHECK(strcmp(get(in), "mine") == 0 && notices == 1 && strstr(last_notice, "alone"),
                  "an unmarked leftover: %s", last_notice);
    unlink(in);
    rmdir(t);
    cs_out_set_notice(NULL);
}

static void test_sched_save(void)
{
    static const char text[] = "collstep-schedule 1\n"
                               "collective allgather ranks 2 chunks 2\n"
                               "rank 0\n"
                               "  0: copy in[0:1] -> out[0:1]\n"
                               "  1: send to 1 in[0:1]\n"
                               "  2: recv from 1 out[1:2]\n"
                               "rank 1\n"
                               "  0: copy in[0:1] -> out[1:2]\n"
                               "  1: send to 0 in[0:1]\n"
                               "  2: recv from 0 out[0:1]\n"
                               "end\n";
    cs_err_t err = {0};
    cs_sched_t *s = cs_sched_parse(text, sizeof(text) - 1, "t", &err);
    CS_TEST_CHECK(s != NULL, "parse: %s", err.msg);
    if (!s)
        return;
    const char *u = P("notes.sched");
    put(u, "my notes, not a schedule\n");
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_sched_save(s, u, &err) == CS_ERR_EXISTS &&
                      strstr(err.msg, "not a schedule file written by collstep"),
                  "over a non-schedule: %s", err.msg);
    CS_TEST_CHECK(strcmp(get(u), "my notes, not a schedule\n") == 0, "non-schedule changed");
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_sched_save_flags(s, u, CS_OUT_FORCE, &err) == CS_OK, "forced: %s", err.msg);
    const char *g = P("a.sched");
    put(g, "# hand-written\n\ncollstep-schedule 1\nsomething older\n");
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_sched_save(s, g, &err) == CS_OK, "over a schedule: %s", err.msg);
    cs_sched_t *s2 = cs_sched_load(g, &err);
    CS_TEST_CHECK(s2 != NULL && strncmp(get(g), "collstep-schedule 1\n", 20) == 0,
                  "replaced schedule: %s", err.msg);
    cs_sched_destroy(s2);
    CS_TEST_CHECK(count_prefix("a.sched.") == 0 && count_prefix("notes.sched.") == 0,
                  "temporaries left");
    cs_sched_destroy(s);
}

int main(void)
{
    if (!mkdtemp(cs_test_tmp(root, sizeof(root), "cs_out_test_XXXXXX")))
        CS_TEST_SKIP("mkdtemp: %s", strerror(errno));
    test_files();
    test_dirs();
    test_links();
    test_cleanup_all();
    test_killed_child();
    test_leftover();
    test_reap();
    test_sched_save();
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return cs_test_finish();
}
