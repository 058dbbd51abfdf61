/*
 * cs_file.h - reading a whole input file, the one way every library does
 * (schedule sets and MSCCL XML, trace summaries, calibration records).
 * Outputs go through cs_out.h.
 */
#ifndef CS_FILE_H
#define CS_FILE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Read all of `path` ("-": standard input) into *out, malloc'ed, with a NUL
 * after its *len bytes.  0, or -1 with errno and *out NULL: fopen's errno
 * when it cannot be opened, EIO on a read error, ENOMEM, or EFBIG when it
 * holds more than `max` bytes (0: no limit).  The caller words the error. */
int cs_file_read(const char *path, size_t max, char **out, size_t *len);

#ifdef __cplusplus
}
#endif
#endif /* CS_FILE_H */
