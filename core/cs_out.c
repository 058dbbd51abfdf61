/*
 * cs_out.c - safe output (contract and naming scheme in cs_out.h).
 *
 * begin:   clean up the leftovers of dead processes next to PATH
 *          (cs_out_reap.c); classify PATH (lstat; a directory's entries)
 *          and its directory (it must exist and take new entries), refuse
 *          or note what commit will do; create PATH.tmp.<pid> (O_EXCL; a
 *          leftover of a dead process with our pid is removed only when it
 *          is a regular file, or a directory that is empty or marked), write
 *          the marker into a directory; register the temporary.
 * commit:  flush / fsync / close a file; classify PATH again; rename.  A
 *          directory that replaces one goes through PATH.old.<pid>.
 * removal: rm_at walks with openat / fdopendir / unlinkat and O_NOFOLLOW:
 *          a symbolic link is unlinked, never followed, and a path that is
 *          swapped for a link while we walk is not entered.
 */
#define _GNU_SOURCE
#include "cs_out.h"
#include "cs_out_int.h"

#include "cs_log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef CS_VERSION
#define CS_VERSION "unknown"
#endif

/* What PATH is, for the decision. */
enum { P_ABSENT, P_REPLACE, P_DEVICE, P_EMPTY_DIR, P_REFUSE };

struct cs_out {
    char *path, *tmp;
    const cs_out_kind_t *kind;
    int flags, is_dir;
    int dest;    /* P_* seen at begin */
    mode_t mode; /* files: mode of the file replaced */
    FILE *f;     /* files */
    int registered, gone;
    pid_t owner;
    struct cs_out *next; /* registry */
};

/* ---- registry -------------------------------------------------------------- */

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static cs_out_t *reg_head;
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;

static void at_exit_cleanup(void)
{
    cs_out_cleanup_all();
}

static void reg_init(void)
{
    atexit(at_exit_cleanup);
}

static void reg_add(cs_out_t *o)
{
    pthread_once(&reg_once, reg_init);
    pthread_mutex_lock(&reg_lock);
    o->owner = getpid();
    o->next = reg_head;
    reg_head = o;
    o->registered = 1;
    pthread_mutex_unlock(&reg_lock);
}

static void reg_del(cs_out_t *o)
{
    if (!o->registered)
        return;
    pthread_mutex_lock(&reg_lock);
    for (cs_out_t **p = &reg_head; *p; p = &(*p)->next)
        if (*p == o) {
            *p = o->next;
            break;
        }
    o->registered = 0;
    pthread_mutex_unlock(&reg_lock);
}

/* ---- removal that never follows links --------------------------------------- */

static int rm_at(int dfd, const char *name, int depth)
{
    struct stat sb;
    if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(sb.st_mode))
        return unlinkat(dfd, name, 0) == 0 || errno == ENOENT ? 0 : -1;
    if (depth > 64)
        return -1;
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -1;
    }
    int rc = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (rm_at(fd, e->d_name, depth + 1) != 0)
            rc = -1;
    }
    closedir(d);
    if (unlinkat(dfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
        rc = -1;
    return rc;
}

int cs__out_rmtree(const char *path)
{
    return rm_at(AT_FDCWD, path, 0) == 0 ? CS_OK : CS_ERR_IO;
}

int cs__out_dir_scan(const char *path, const char *marker, int *nentries)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -1;
    }
    int found = 0, n = 0;
    size_t plen = strlen(CS_OUT_MARKER_PREFIX);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        n++;
        if (marker ? strcmp(e->d_name, marker) == 0
                   : strncmp(e->d_name, CS_OUT_MARKER_PREFIX, plen) == 0) {
            struct stat sb; /* a marker is a regular file */
            if (fstatat(fd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode))
                found = 1;
        }
    }
    closedir(d);
    if (nentries)
        *nentries = n;
    return found;
}

int cs__out_rename_noreplace(const char *from, const char *to)
{
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    struct stat sb;
    if (lstat(to, &sb) == 0) {
        errno = EEXIST;
        return -1;
    }
    return rename(from, to);
}

/* ---- the manifest: what a directory collstep wrote holds -------------------------
 *
 * At commit the marker gets, after its first line, a line "contents:" and
 * one line per entry of the tree ("F path" for a file, "D path" for a
 * directory, paths relative to the top, the marker itself left out).  A
 * marked directory is replaced only when everything in it is listed there:
 * a file a user put into a trace is never deleted with it. */

#define MANIFEST_MAX (16u << 20) /* a marker's size at most (a tree of ~200,000 entries) */

static const char *what_of(const cs_out_t *o);

/* Visit every entry of the tree under `rel` of dfd (the top's marker
 * aside), a directory before what it holds; fn returns 1 to go on, 0 to
 * stop, -1 for an error.  1 when the whole tree was visited, 0 when fn
 * stopped, -1 when it failed or the tree cannot be read. */
typedef int (*tree_fn)(void *ctx, const char *path, const char *name, const struct stat *sb);

static int tree_walk(int dfd, const char *rel, const char *marker, int depth, tree_fn fn,
                     void *ctx)
{
    if (depth > 64)
        return -1;
    int fd = openat(dfd, rel[0] ? rel : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -1;
    }
    int rc = 1;
    for (struct dirent *e; rc == 1 && (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (depth == 0 && strcmp(e->d_name, marker) == 0)
            continue;
        char sub[4096];
        struct stat sb;
        if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", e->d_name) >=
                sizeof(sub) ||
            fstatat(dfd, sub, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = -1;
            break;
        }
        rc = fn(ctx, sub, e->d_name, &sb);
        if (rc == 1 && S_ISDIR(sb.st_mode))
            rc = tree_walk(dfd, sub, marker, depth + 1, fn, ctx);
    }
    closedir(d);
    return rc;
}

/* manifest_write's visit: the entry's line */
static int list_entry(void *ctx, const char *path, const char *name, const struct stat *sb)
{
    if (strchr(name, '\n'))
        return -1;
    fprintf((FILE *)ctx, "%c %s\n", S_ISDIR(sb->st_mode) ? 'D' : 'F', path);
    return 1;
}

/* Rewrite the temporary's marker with the manifest of the tree. */
static int manifest_write(const cs_out_t *o, cs_err_t *err)
{
    size_t n = strlen(o->tmp) + strlen(o->kind->marker) + 2;
    char *mp = malloc(n);
    if (!mp)
        return cs_err_set(err, CS_ERR_NOMEM, "%s: out of memory", o->path);
    snprintf(mp, n, "%s/%s", o->tmp, o->kind->marker);
    int dfd = open(o->tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int mfd = dfd >= 0 ? open(mp, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC) : -1;
    FILE *f = mfd >= 0 ? fdopen(mfd, "w") : NULL;
    if (mfd >= 0 && !f)
        close(mfd);
    int bad = !f;
    if (f) {
        fprintf(f, "collstep %s, written by collstep %s\ncontents:\n", what_of(o), CS_VERSION);
        bad = tree_walk(dfd, "", o->kind->marker, 0, list_entry, f) != 1;
        bad |= ferror(f);
        bad |= fclose(f) != 0;
    }
    if (dfd >= 0)
        close(dfd);
    free(mp);
    if (bad)
        return cs_err_set(err, CS_ERR_IO, "cannot write %s: its list of contents: %s", o->path,
                          strerror(errno ? errno : EIO));
    return CS_OK;
}

/* manifest_owned's visit: the entry is in the list ("\nF path\n" ...),
 * or a file the kind says a user makes again; else it is the foreign one */
typedef struct check_ctx {
    const char *list;
    int (*remade)(const char *);
    char *foreign;
    size_t flen;
} check_ctx_t;

static int check_entry(void *ctx, const char *path, const char *name, const struct stat *sb)
{
    check_ctx_t *c = ctx;
    int isdir = S_ISDIR(sb->st_mode);
    char line[4112];
    if ((size_t)snprintf(line, sizeof(line), "\n%c %s\n", isdir ? 'D' : 'F', path) >= sizeof(line))
        return -1;
    if (!strchr(name, '\n') &&
        (strstr(c->list, line) || (S_ISREG(sb->st_mode) && c->remade && c->remade(name))))
        return 1;
    if ((size_t)snprintf(c->foreign, c->flen, "%s%s", path, isdir ? "/" : "") >= c->flen &&
        c->flen > 4)
        memcpy(c->foreign + c->flen - 4, "...", 4); /* a name too long to show whole */
    return 0;
}

/* A marked directory: 1 when it holds only what its manifest lists (or it
 * has no manifest, from a collstep before manifests, and the kind's legacy
 * test accepts its files), 0 with the first foreign entry, -1 unreadable. */
static int manifest_owned(const cs_out_t *o, char *foreign, size_t flen)
{
    const char *p = o->path, *m = o->kind->marker;
    int dfd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    int rc = -1;
    char *list = NULL;
    int mfd = openat(dfd, m, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat sb;
    if (mfd >= 0 && fstat(mfd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size <= MANIFEST_MAX &&
        (list = malloc((size_t)sb.st_size + 2)) != NULL) {
        list[0] = '\n';
        size_t got = 0;
        for (ssize_t r; got < (size_t)sb.st_size; got += (size_t)r)
            if ((r = read(mfd, list + 1 + got, (size_t)sb.st_size - got)) <= 0)
                break;
        list[1 + got] = '\0';
        const char *c = strstr(list, "\ncontents:\n");
        if (c)
            rc = tree_walk(dfd, "", m, 0, check_entry,
                           &(check_ctx_t){c + 10, o->kind->remade, foreign, flen});
        else if (o->kind->legacy && o->kind->legacy(p))
            rc = 1;
        else {
            snprintf(foreign, flen, "%s", "");
            rc = 0;
        }
    }
    if (mfd >= 0)
        close(mfd);
    free(list);
    close(dfd);
    return rc;
}

/* ---- classification ---------------------------------------------------------- */

static const char *what_of(const cs_out_t *o)
{
    return o->kind && o->kind->what ? o->kind->what : (o->is_dir ? "directory" : "file");
}

static int classify_file_kind(cs_out_t *o, int *dest, cs_err_t *err)
{
    const char *p = o->path, *w = what_of(o);
    struct stat sb, tb;
    if (lstat(p, &sb) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) { /* check_parent says which */
            *dest = P_ABSENT;
            return CS_OK;
        }
        return cs_err_set(err, CS_ERR_IO, "%s: cannot inspect: %s", p, strerror(errno));
    }
    if (S_ISLNK(sb.st_mode)) {
        if (stat(p, &tb) == 0 && (S_ISCHR(tb.st_mode) || S_ISFIFO(tb.st_mode))) {
            *dest = P_DEVICE;
            return CS_OK;
        }
        return cs_err_set(err, CS_ERR_EXISTS,
                          "%s is a symbolic link; give the path it points to, or another path", p);
    }
    if (S_ISCHR(sb.st_mode) || S_ISFIFO(sb.st_mode)) {
        *dest = P_DEVICE;
        return CS_OK;
    }
    if (S_ISDIR(sb.st_mode))
        return cs_err_set(err, CS_ERR_EXISTS,
                          "%s is a directory, not a %s: a file cannot be renamed over it; "
                          "choose another path",
                          p, w);
    if (!S_ISREG(sb.st_mode))
        return cs_err_set(err, CS_ERR_EXISTS, "%s is not a regular file; choose another path", p);
    o->mode = sb.st_mode & 0777; /* not set-id bits: a new file */
    int ours = 0;
    if (sb.st_size > 0 && o->kind && o->kind->recognize) {
        char head[CS_OUT_HEAD];
        int fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        ssize_t n = -1;
        if (fd >= 0) {
            do
                n = read(fd, head, sizeof(head));
            while (n < 0 && errno == EINTR);
            close(fd);
        }
        ours = n > 0 && o->kind->recognize(head, (size_t)n);
    }
    if (!ours && !(o->flags & CS_OUT_FORCE))
        return cs_err_set(err, CS_ERR_EXISTS,
                          "%s exists and is not a %s written by collstep; choose another path "
                          "or remove it yourself (--force replaces it)",
                          p, w);
    *dest = P_REPLACE;
    return CS_OK;
}

static int classify_dir_kind(cs_out_t *o, int *dest, cs_err_t *err)
{
    const char *p = o->path, *w = what_of(o), *m = o->kind->marker;
    struct stat sb;
    if (lstat(p, &sb) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) { /* check_parent says which */
            *dest = P_ABSENT;
            return CS_OK;
        }
        return cs_err_set(err, CS_ERR_IO, "%s: cannot inspect: %s", p, strerror(errno));
    }
    if (S_ISLNK(sb.st_mode))
        return cs_err_set(err, CS_ERR_EXISTS,
                          "%s is a symbolic link, not a %s; give the directory it points to, "
                          "or another path",
                          p, w);
    if (S_ISREG(sb.st_mode))
        return cs_err_set(err, CS_ERR_EXISTS, "%s is a file, not a %s; choose another path", p, w);
    if (!S_ISDIR(sb.st_mode))
        return cs_err_set(err, CS_ERR_EXISTS, "%s is not a directory; choose another path", p);
    int n = 0, marked = cs__out_dir_scan(p, m, &n);
    if (marked < 0)
        return cs_err_set(err, CS_ERR_IO, "%s: cannot read the directory: %s", p, strerror(errno));
    if (marked) {
        char foreign[4096];
        int owned = manifest_owned(o, foreign, sizeof(foreign));
        if (owned < 0)
            return cs_err_set(err, CS_ERR_IO, "%s: cannot read the directory: %s", p,
                              strerror(errno ? errno : EIO));
        if (!owned && foreign[0])
            return cs_err_set(err, CS_ERR_EXISTS,
                              "%s is a collstep %s, but %s in it is not collstep's: collstep "
                              "does not delete it, even with --force; move it out, choose "
                              "another path, or remove the directory yourself",
                              p, w, foreign);
        if (!owned)
            return cs_err_set(err, CS_ERR_EXISTS,
                              "%s is a collstep %s from a collstep that did not list what it "
                              "wrote, so collstep cannot tell your files from its own there and "
                              "does not delete it, even with --force; choose another path or "
                              "remove the directory yourself",
                              p, w);
        *dest = P_REPLACE;
        return CS_OK;
    }
    int force = o->flags & CS_OUT_FORCE;
    if (n == 0) {
        if (!force)
            return cs_err_set(err, CS_ERR_EXISTS,
                              "%s is an empty directory without the %s marker of a collstep "
                              "%s; choose another path, remove it yourself, or force writing "
                              "into it",
                              p, m, w);
        *dest = P_EMPTY_DIR;
        return CS_OK;
    }
    if (!force)
        return cs_err_set(err, CS_ERR_EXISTS,
                          "%s exists and is not a collstep %s (no %s marker); choose another "
                          "path or remove it yourself",
                          p, w, m);
    if (!o->kind->legacy || !o->kind->legacy(p))
        return cs_err_set(err, CS_ERR_EXISTS,
                          "%s exists and is not a collstep %s (no %s marker, and it holds "
                          "files collstep does not write); even forced, collstep does not "
                          "delete it: choose another path or remove it yourself",
                          p, w, m);
    *dest = P_REPLACE;
    return CS_OK;
}

/* The directory PATH goes in must exist and take new entries (the
 * temporary is made there): said with PATH as given, before any work. */
static int check_parent(const cs_out_t *o, cs_err_t *err)
{
    const char *p = o->path, *slash = strrchr(p, '/');
    char *dir = slash ? strndup(p, slash == p ? 1 : (size_t)(slash - p)) : strdup(".");
    if (!dir)
        return cs_err_set(err, CS_ERR_NOMEM, "%s: out of memory", p);
    struct stat sb;
    int st = CS_OK;
    if (stat(dir, &sb) != 0)
        st = cs_err_set(err, CS_ERR_EXISTS, "cannot write %s: %s %s; create it first or choose "
                        "another path", p, dir,
                        errno == ENOENT ? "does not exist" : errno == ENOTDIR
                        ? "is not a directory (a part of it is a file)" : strerror(errno));
    else if (!S_ISDIR(sb.st_mode))
        st = cs_err_set(err, CS_ERR_EXISTS, "cannot write %s: %s is not a directory; choose "
                        "another path", p, dir);
    else if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0)
        st = cs_err_set(err, CS_ERR_EXISTS, "cannot write %s: no new file can be made in %s (%s); "
                        "choose another path", p, dir, strerror(errno));
    free(dir);
    return st;
}

static int classify_file(cs_out_t *o, int *dest, cs_err_t *err)
{
    int st = classify_file_kind(o, dest, err);
    return st == CS_OK && *dest != P_DEVICE ? check_parent(o, err) : st;
}

static int classify_dir(cs_out_t *o, int *dest, cs_err_t *err)
{
    int st = classify_dir_kind(o, dest, err);
    return st == CS_OK ? check_parent(o, err) : st;
}

/* ---- begin -------------------------------------------------------------------- */

static void out_free(cs_out_t *o)
{
    if (!o)
        return;
    reg_del(o);
    free(o->path);
    free(o->tmp);
    free(o);
}

static int out_new(const char *path, int flags, const cs_out_kind_t *kind, int is_dir,
                   cs_out_t **out, cs_err_t *err)
{
    if (!path || !*path)
        return cs_err_set(err, CS_ERR_INVAL, "no output path given");
    cs_out_t *o = calloc(1, sizeof(*o));
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    if (o) {
        o->path = strndup(path, len);
        o->tmp = malloc(len + 32);
    }
    if (!o || !o->path || !o->tmp) {
        out_free(o);
        return cs_err_set(err, CS_ERR_NOMEM, "%s: out of memory", path);
    }
    const char *last = strrchr(o->path, '/');
    last = last ? last + 1 : o->path;
    if (strcmp(last, ".") == 0 || strcmp(last, "..") == 0 || strcmp(o->path, "/") == 0) {
        out_free(o);
        return cs_err_set(err, CS_ERR_INVAL,
                          "%s: name the output by its own name (not '.', '..' or '/')", path);
    }
    snprintf(o->tmp, len + 32, "%s.tmp.%ld", o->path, (long)getpid());
    o->flags = flags;
    o->kind = kind;
    o->is_dir = is_dir;
    *out = o;
    return CS_OK;
}

/* A leftover PATH.tmp.<pid> (a dead process with our pid): removed only
 * when collstep could have made it. */
static int clear_leftover(const cs_out_t *o, cs_err_t *err)
{
    struct stat sb;
    if (lstat(o->tmp, &sb) != 0)
        return CS_OK;
    int n = 0;
    int ok = o->is_dir ? S_ISDIR(sb.st_mode) && (cs__out_dir_scan(o->tmp, NULL, &n) == 1 || n == 0)
                       : S_ISREG(sb.st_mode);
    if (!ok)
        return cs_err_set(err, CS_ERR_EXISTS,
                          "%s exists and was not left by collstep; remove it or choose another "
                          "path",
                          o->tmp);
    if (cs__out_rmtree(o->tmp) != CS_OK)
        return cs_err_set(err, CS_ERR_IO, "%s: cannot remove a leftover temporary: %s", o->tmp,
                          strerror(errno));
    return CS_OK;
}

int cs_out_begin_file(const char *path, int flags, const cs_out_kind_t *kind, cs_out_t **out,
                      cs_err_t *err)
{
    cs_out_t *o = NULL;
    int st = out_new(path, flags, kind, 0, &o, err), fd = -1;
    if (st != CS_OK)
        return st;
    if ((flags & CS_OUT_STDOUT) && strcmp(path, "-") == 0) {
        o->f = stdout;
        o->dest = P_DEVICE;
        snprintf(o->tmp, strlen(o->tmp) + 1, "-");
        *out = o;
        return CS_OK;
    }
    cs__out_reap(o->path, 0);
    if ((st = classify_file(o, &o->dest, err)) != CS_OK)
        goto fail;
    if (o->dest == P_DEVICE) {
        o->f = fopen(o->path, "w");
        if (!o->f) {
            st = cs_err_set(err, CS_ERR_IO, "%s: cannot open: %s", o->path, strerror(errno));
            goto fail;
        }
        snprintf(o->tmp, strlen(o->tmp) + 1, "%s", o->path);
        *out = o;
        return CS_OK;
    }
    if ((st = clear_leftover(o, err)) != CS_OK)
        goto fail;
    fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
        st = cs_err_set(err, CS_ERR_IO, "cannot write %s: %s", o->path, strerror(errno));
        goto fail;
    }
    reg_add(o);
    if (o->dest == P_REPLACE)
        fchmod(fd, o->mode);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        st = cs_err_set(err, CS_ERR_IO, "cannot write %s: %s", o->path, strerror(errno));
        close(fd);
        unlink(o->tmp);
        goto fail;
    }
    *out = o;
    return CS_OK;
fail:
    out_free(o);
    return st;
}

int cs_out_begin_dir(const char *path, int flags, const cs_out_kind_t *kind, cs_out_t **out,
                     cs_err_t *err)
{
    if (!kind || !kind->marker ||
        strncmp(kind->marker, CS_OUT_MARKER_PREFIX, strlen(CS_OUT_MARKER_PREFIX)) != 0 ||
        strchr(kind->marker, '/'))
        return cs_err_set(err, CS_ERR_INVAL, "%s: output directory kind without a valid marker",
                          path ? path : "(null)");
    cs_out_t *o = NULL;
    int st = out_new(path, flags, kind, 1, &o, err);
    if (st != CS_OK)
        return st;
    cs__out_reap(o->path, 1);
    if ((st = classify_dir(o, &o->dest, err)) != CS_OK || (st = clear_leftover(o, err)) != CS_OK)
        goto fail;
    if (mkdir(o->tmp, 0777) != 0) {
        st = cs_err_set(err, CS_ERR_IO, "cannot write %s: %s", o->path, strerror(errno));
        goto fail;
    }
    reg_add(o);
    size_t n = strlen(o->tmp) + strlen(kind->marker) + 2;
    char *mp = malloc(n);
    FILE *f = NULL;
    if (mp) {
        snprintf(mp, n, "%s/%s", o->tmp, kind->marker);
        f = fopen(mp, "wx");
    }
    int bad = !f;
    if (f) {
        fprintf(f, "collstep %s, written by collstep %s\n", what_of(o), CS_VERSION);
        bad = ferror(f);
        bad |= fclose(f) != 0;
    }
    if (bad) {
        st = cs_err_set(err, CS_ERR_IO, "cannot write %s: %s", o->path, strerror(errno));
        free(mp);
        cs__out_rmtree(o->tmp);
        goto fail;
    }
    free(mp);
    *out = o;
    return CS_OK;
fail:
    out_free(o);
    return st;
}

int cs_out_check(const char *path, int flags, const cs_out_kind_t *kind, int is_dir, cs_err_t *err)
{
    if (is_dir && (!kind || !kind->marker))
        return cs_err_set(err, CS_ERR_INVAL, "%s: output directory kind without a marker",
                          path ? path : "(null)");
    cs_out_t *o = NULL;
    int dest = P_ABSENT, st = out_new(path, flags, kind, is_dir, &o, err);
    if (st != CS_OK)
        return st;
    if (!(!is_dir && (flags & CS_OUT_STDOUT) && strcmp(path, "-") == 0)) {
        cs__out_reap(o->path, is_dir);
        st = is_dir ? classify_dir(o, &dest, err) : classify_file(o, &dest, err);
    }
    out_free(o);
    return st;
}

FILE *cs_out_stream(cs_out_t *o)
{
    return o && !o->is_dir ? o->f : NULL;
}

const char *cs_out_tmp_path(const cs_out_t *o)
{
    return o ? o->tmp : NULL;
}

const char *cs_out_path(const cs_out_t *o)
{
    return o ? o->path : NULL;
}

/* ---- commit / abort -------------------------------------------------------------- */

static int commit_file(cs_out_t *o, cs_err_t *err)
{
    int st = CS_OK, dest = P_ABSENT;
    if (o->f == stdout || o->dest == P_DEVICE) {
        const char *name = o->f == stdout ? "<stdout>" : o->path;
        if (fflush(o->f) != 0 || ferror(o->f))
            st = cs_err_set(err, CS_ERR_IO, "%s: cannot write: %s", name, strerror(errno));
        if (o->f != stdout && fclose(o->f) != 0 && st == CS_OK)
            st = cs_err_set(err, CS_ERR_IO, "%s: cannot close: %s", name, strerror(errno));
        return st;
    }
    if (fflush(o->f) != 0 || ferror(o->f))
        st = cs_err_set(err, CS_ERR_IO, "cannot write %s: %s", o->path, strerror(errno));
    if (st == CS_OK && (o->flags & CS_OUT_FSYNC) && fsync(fileno(o->f)) != 0 && errno != EINVAL)
        st = cs_err_set(err, CS_ERR_IO, "cannot write %s: sync: %s", o->path, strerror(errno));
    if (fclose(o->f) != 0 && st == CS_OK)
        st = cs_err_set(err, CS_ERR_IO, "cannot write %s: close: %s", o->path, strerror(errno));
    o->f = NULL;
    if (st == CS_OK && o->gone)
        st = cs_err_set(err, CS_ERR_IO, "%s: interrupted: the temporary was removed", o->path);
    if (st == CS_OK)
        st = classify_file(o, &dest, err);
    if (st == CS_OK && dest == P_DEVICE) /* became a device: do not rename over it */
        st = cs_err_set(err, CS_ERR_EXISTS, "%s changed while it was written; choose another path",
                        o->path);
    if (st == CS_OK) {
        int r = dest == P_ABSENT ? cs__out_rename_noreplace(o->tmp, o->path)
                                 : rename(o->tmp, o->path);
        if (r != 0)
            st = cs_err_set(err, CS_ERR_IO, "cannot put %s in place: %s", o->path,
                            strerror(errno));
    }
    if (st != CS_OK && !o->gone)
        unlink(o->tmp);
    return st;
}

static int commit_dir(cs_out_t *o, cs_err_t *err)
{
    int st = CS_OK, dest = P_ABSENT;
    char *old = NULL;
    if (o->gone)
        return cs_err_set(err, CS_ERR_IO, "%s: interrupted: the temporary was removed", o->path);
    if ((st = manifest_write(o, err)) != CS_OK || (st = classify_dir(o, &dest, err)) != CS_OK)
        goto out;
    if (dest == P_ABSENT || dest == P_EMPTY_DIR) {
        /* rename replaces an empty directory, and only that */
        int r = dest == P_ABSENT ? cs__out_rename_noreplace(o->tmp, o->path)
                                 : rename(o->tmp, o->path);
        if (r != 0)
            st = cs_err_set(err, CS_ERR_IO, "cannot put %s in place: %s", o->path,
                            strerror(errno));
        goto out;
    }
    size_t n = strlen(o->path) + 32;
    if (!(old = malloc(n))) {
        st = cs_err_set(err, CS_ERR_NOMEM, "%s: out of memory", o->path);
        goto out;
    }
    snprintf(old, n, "%s.old.%ld", o->path, (long)getpid());
    if (cs__out_rename_noreplace(o->path, old) != 0) {
        st = cs_err_set(err, CS_ERR_IO, "%s: cannot move the previous %s aside to %s: %s", o->path,
                        what_of(o), old, strerror(errno));
        goto out;
    }
    if (cs__out_rename_noreplace(o->tmp, o->path) != 0) {
        int e = errno;
        if (cs__out_rename_noreplace(old, o->path) != 0)
            CS_WARN("out", "could not put the previous %s back from %s to %s: %s", what_of(o), old,
                    o->path, strerror(errno));
        st = cs_err_set(err, CS_ERR_IO, "cannot put %s in place: %s", o->path, strerror(e));
        goto out;
    }
    if (cs__out_rmtree(old) != CS_OK)
        CS_WARN("out", "could not remove the previous %s, now at %s: %s", what_of(o), old,
                strerror(errno));
out:
    if (st != CS_OK)
        cs__out_rmtree(o->tmp);
    free(old);
    return st;
}

int cs_out_commit(cs_out_t *o, cs_err_t *err)
{
    if (!o)
        return cs_err_set(err, CS_ERR_INVAL, "no output to commit");
    /* leave the registry first: cleanup_all must not remove what is in place */
    reg_del(o);
    int st = o->is_dir ? commit_dir(o, err) : commit_file(o, err);
    out_free(o);
    return st;
}

void cs_out_abort(cs_out_t *o)
{
    if (!o)
        return;
    reg_del(o);
    if (o->f && o->f != stdout)
        fclose(o->f);
    if (o->f == stdout)
        fflush(stdout);
    if (!o->gone && o->dest != P_DEVICE) {
        if (o->is_dir)
            cs__out_rmtree(o->tmp);
        else
            unlink(o->tmp);
    }
    out_free(o);
}

/* ---- cleanup ------------------------------------------------------------------------ */

int cs_out_cleanup_all(void)
{
    int n = 0;
    pid_t me = getpid();
    pthread_mutex_lock(&reg_lock);
    for (cs_out_t **p = &reg_head; *p;) {
        cs_out_t *o = *p;
        if (o->owner != me) {
            p = &o->next;
            continue;
        }
        if (o->is_dir ? cs__out_rmtree(o->tmp) == CS_OK : unlink(o->tmp) == 0 || errno == ENOENT)
            n++;
        o->gone = 1;
        o->registered = 0;
        *p = o->next;
    }
    pthread_mutex_unlock(&reg_lock);
    return n;
}
