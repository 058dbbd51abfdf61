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
