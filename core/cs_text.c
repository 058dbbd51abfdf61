/*
 * cs_text.c - schedule files: load (a whole file, mapped into memory when it
 * is a regular file, or standard input) and atomic save (write PATH.tmp.<pid>,
 * then rename; the temporary file is removed on failure).  Parsing and
 * writing live in cs_text_read.c and cs_text_write.c; contracts: cs_text.h.
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

/* Read all of `fd` into a malloc'ed buffer. */
static int read_all(int fd, const char *name, char **out, size_t *outlen, cs_err_t *err)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    if (buf == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "%s: out of memory", name);
    for (;;) {
        if (n == cap) {
            char *nb = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (nb == NULL) {
                free(buf);
                return cs_err_set(err, CS_ERR_NOMEM, "%s: out of memory", name);
            }
            buf = nb;
            cap *= 2;
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

int cs_sched_save(const cs_sched_t *s, const char *path, cs_err_t *err)
{
    int rc, fd = -1;
    FILE *f = NULL;
    char *tmp = NULL;
    if (s == NULL || path == NULL)
        return cs_err_set(err, CS_ERR_INVAL, "cs_sched_save: no schedule or no path");
    if (strcmp(path, "-") == 0) {
        rc = cs_sched_write(s, stdout);
        if (rc == CS_ERR_IO)
            return cs_err_set(err, rc, "<stdout>: cannot write: %s", strerror(errno));
        return rc == CS_OK ? CS_OK : cs_err_set(err, rc, "<stdout>: %s", cs_status_str(rc));
    }
    size_t n = strlen(path) + 32;
    tmp = malloc(n);
    if (tmp == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "%s: out of memory", path);
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        rc = cs_err_set(err, CS_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
        goto out;
    }
    f = fdopen(fd, "w");
    if (f == NULL) {
        rc = cs_err_set(err, CS_ERR_IO, "%s: cannot open: %s", tmp, strerror(errno));
        close(fd);
        goto fail;
    }
    rc = cs_sched_write(s, f);
    if (rc != CS_OK) {
        rc = cs_err_set(err, rc, "%s: cannot write: %s", tmp,
                        rc == CS_ERR_IO ? strerror(errno) : cs_status_str(rc));
        fclose(f);
        goto fail;
    }
    if (fsync(fileno(f)) != 0 && errno != EINVAL) {
        rc = cs_err_set(err, CS_ERR_IO, "%s: cannot sync: %s", tmp, strerror(errno));
        fclose(f);
        goto fail;
    }
    if (fclose(f) != 0) {
        rc = cs_err_set(err, CS_ERR_IO, "%s: cannot close: %s", tmp, strerror(errno));
        goto fail;
    }
    if (rename(tmp, path) != 0) {
        rc = cs_err_set(err, CS_ERR_IO, "%s: cannot rename to %s: %s", tmp, path,
                        strerror(errno));
        goto fail;
    }
    rc = CS_OK;
    goto out;
fail:
    unlink(tmp);
out:
    free(tmp);
    return rc;
}
