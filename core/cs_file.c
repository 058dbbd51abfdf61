/*
 * cs_file.c - cs_file_read (cs_file.h).
 */
#include "cs_file.h"

#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_grow.h"

int cs_file_read(const char *path, size_t max, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (f == NULL)
        return -1;
    struct stat st;
    if (f != stdin && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f); /* fopen opens a directory for reading; read says EISDIR */
        errno = EISDIR;
        return -1;
    }
    char *buf = NULL;
    size_t cap = 0, n = 0;
    int e = 0;
    for (;;) {
        /* room for a read of 64 KiB and the terminating NUL */
        if (cs_grow(&buf, &cap, n + 65536 + 1, 1, 65536 + 1)) {
            e = ENOMEM;
            break;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (max > 0 && n > max) {
            e = EFBIG;
            break;
        }
        if (r == 0)
            break;
    }
    if (!e && ferror(f))
        e = EIO;
    if (f != stdin)
        fclose(f);
    if (e) {
        free(buf);
        errno = e;
        return -1;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}
