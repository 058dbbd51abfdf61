/*
 * cs_text.c - schedule files: load (a whole file, mapped into memory when it
 * is a regular file, or standard input).  Saving lives in cs_text_save.c,
 * parsing and writing in cs_text_read.c and cs_text_write.c; contracts:
 * cs_text.h.
 */
#include "cs_text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cs_grow.h"

/* Read all of `fd` into a malloc'ed buffer. */
static int read_all(int fd, const char *name, char **out, size_t *outlen, cs_err_t *err)
{
    size_t cap = 0, n = 0;
    char *buf = NULL;
    for (;;) {
        if (cs_grow(&buf, &cap, n + 1, 1, 1 << 16)) {
            free(buf);
            return cs_err_set(err, CS_ERR_NOMEM, "%s: out of memory", name);
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            return cs_err_set(err, CS_ERR_IO, "%s: cannot read: %s", name, strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *out = buf;
    *outlen = n;
    return CS_OK;
}

cs_sched_t *cs_sched_load(const char *path, cs_err_t *err)
{
    cs_sched_t *s = NULL;
    char *buf = NULL;
    void *map = MAP_FAILED;
    size_t len = 0;
    struct stat sb;
    int fd = -1;
    if (path == NULL) {
        cs_err_set(err, CS_ERR_INVAL, "no schedule path given");
        return NULL;
    }
    if (strcmp(path, "-") == 0) {
        if (read_all(STDIN_FILENO, "<stdin>", &buf, &len, err) == CS_OK)
            s = cs_sched_parse(buf, len, "<stdin>", err);
        free(buf);
        return s;
    }
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        cs_err_set(err, CS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        cs_err_set(err, CS_ERR_IO, "%s: cannot read: %s", path, strerror(EISDIR));
        goto out;
    }
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
        (uint64_t)sb.st_size <= SIZE_MAX) {
        len = (size_t)sb.st_size;
        map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
            madvise(map, len, MADV_SEQUENTIAL);
            s = cs_sched_parse(map, len, path, err);
            munmap(map, len);
            goto out;
        }
    }
    if (read_all(fd, path, &buf, &len, err) == CS_OK)
        s = cs_sched_parse(buf, len, path, err);
    free(buf);
out:
    close(fd);
    return s;
}

/* ---- step positions ------------------------------------------------------ */

static const char *skip_sp(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\r'))
        p++;
    return p;
}

/* A decimal number at p (at most 19 digits); the end of it, or NULL. */
static const char *dec(const char *p, const char *e, uint64_t *v)
{
    const char *q = p;
    *v = 0;
    while (q < e && *q >= '0' && *q <= '9' && q - p < 19)
        *v = *v * 10 + (uint64_t)(*q++ - '0');
    return q > p ? q : NULL;
}

void cs_sched_locate(const char *text, size_t len, uint32_t n, const int *rank,
                     const int64_t *step, unsigned long long *line, unsigned long long *col)
{
    const char *p = text, *end = text + len;
    unsigned long long lineno = 0;
    int64_t cur = -1;
    for (uint32_t j = 0; j < n; j++)
        line[j] = col[j] = 0;
    while (p != NULL && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
        const char *q = skip_sp(p, le);
        uint64_t v;
        lineno++;
        if ((size_t)(le - q) > 5 && memcmp(q, "rank", 4) == 0 && (q[4] == ' ' || q[4] == '\t')) {
            const char *d = dec(skip_sp(q + 4, le), le, &v);
            if (d != NULL)
                cur = (int64_t)v;
        } else if (cur >= 0 && q < le && *q >= '0' && *q <= '9') {
            const char *d = dec(q, le, &v);
            if (d != NULL && (d = skip_sp(d, le)) < le && *d == ':')
                for (uint32_t j = 0; j < n; j++)
                    if (rank[j] == cur && step[j] == (int64_t)v) {
                        line[j] = lineno;
                        col[j] = (unsigned long long)(q - p) + 1;
                    }
        }
        p = nl ? nl + 1 : NULL;
    }
}

int cs_sched_locate_file(const char *path, uint32_t n, const int *rank, const int64_t *step,
                         unsigned long long *line, unsigned long long *col)
{
    char *buf = NULL;
    size_t len = 0;
    int fd = -1, st = CS_ERR_IO;
    for (uint32_t j = 0; j < n; j++)
        line[j] = col[j] = 0;
    if (path == NULL || strcmp(path, "-") == 0 ||
        (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return CS_ERR_IO;
    if (read_all(fd, path, &buf, &len, NULL) == CS_OK) {
        const char *p = buf, *e = buf + len; /* the header after blank and comment lines */
        for (;;) {
            p = skip_sp(p, e);
            if (p < e && (*p == '\n' || *p == '#')) {
                const char *nl = memchr(p, '\n', (size_t)(e - p));
                p = nl ? nl + 1 : e;
                continue;
            }
            break;
        }
        if ((size_t)(e - p) >= 17 && memcmp(p, "collstep-schedule", 17) == 0) {
            cs_sched_locate(buf, len, n, rank, step, line, col);
            st = CS_OK;
        }
    }
    free(buf);
    close(fd);
    return st;
}
