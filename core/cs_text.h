/*
 * cs_text.h - the schedule text format (versions 1 and 2): reader and writer.
 *
 * The format is documented rule by rule in docs/schedule-format.md.  In
 * short: a header line "collstep-schedule 1", a "collective" line, an
 * optional "algorithm" line, then per rank a "rank R" line, its scratch
 * buffers ("buffer NAME base B chunks N") and its numbered steps
 * ("3: reduce tmp[0:2] -> out[0:2] after 0,2").  Version 2 adds "group NAME
 * ranks 0-3" lines after the algorithm line and switch steps ("4: switch
 * reduce NAME in[0:1] -> out[0:1]"); the writer writes version 2 only for a
 * schedule with groups or switch steps, version 1 otherwise.
 *
 * Contracts
 * ---------
 * - Parsing never crashes and never leaks, whatever the bytes (NUL bytes,
 *   binary garbage, truncated text, huge numbers, very long lines).  On
 *   failure it returns NULL and fills *err (if not NULL) with CS_ERR_PARSE
 *   (CS_ERR_NOMEM when memory runs out, CS_ERR_IO for load) and a message
 *   "FILE:LINE:COL: expected X, found 'Y'", lines and columns counted from
 *   1, columns in bytes.  What was found is quoted, truncated and has its
 *   non-printable bytes escaped as \xHH.  Errors the schedule builder
 *   reports (peer out of range, range outside its buffer, dependency not on
 *   an earlier step, shapes that differ) carry the position of the step
 *   and the builder's message: "FILE:LINE:COL: rank 0 step 3: ...".
 *   On success *err is not touched.
 * - Schedules are built through the builder API of cs_sched.h only, so a
 *   parsed schedule satisfies every invariant the builder enforces.
 * - The writer produces the canonical text: for every schedule s,
 *   write(parse(write(s))) == write(s) byte for byte, and a canonical file
 *   parsed and written again is reproduced byte for byte.  Algorithm name
 *   and parameters are informational; bytes that cannot survive a round
 *   trip in them ('#', control and non-ASCII bytes) are written as '?'.
 * - Parser and writer cost O(size) time and allocate nothing per step
 *   beyond the builder's own arrays.
 */
#ifndef CS_TEXT_H
#define CS_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "cs_sched.h"
#include "cs_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits of the reader (documented in docs/schedule-format.md). */
#define CS_TEXT_MAX_LINE (16u << 20) /* bytes per line, newline excluded */

/* Parse `len` bytes of `text` (need not be NUL-terminated; may contain NUL
 * bytes).  `fname` names the input in messages (NULL: "<input>").
 * Returns a new schedule owned by the caller, or NULL with *err filled. */
cs_sched_t *cs_sched_parse(const char *text, size_t len, const char *fname, cs_err_t *err);

/* Read and parse a file; "-" reads standard input (named "<stdin>").
 * Returns NULL with CS_ERR_IO when the file cannot be read. */
cs_sched_t *cs_sched_load(const char *path, cs_err_t *err);

/* Write the canonical text of `s` to `f` (output is buffered internally).
 * Returns CS_OK, CS_ERR_INVAL (s or f NULL) or CS_ERR_IO (write failed;
 * errno is kept). */
int cs_sched_write(const cs_sched_t *s, FILE *f);

/* Save the canonical text to `path`; "-" writes standard output.  A file is
 * written whole or not at all (core/cs_out.h): the text goes to
 * "PATH.tmp.<pid>", which is fsync'ed and renamed over PATH on success and
 * removed on failure.  An existing PATH is replaced only when it is a
 * schedule file (its first bytes, after blank and '#' comment lines, are
 * "collstep-schedule"); any other file, a directory or a symbolic link is
 * refused with CS_ERR_IO and left untouched.  Returns CS_OK or CS_ERR_IO /
 * CS_ERR_NOMEM / CS_ERR_INVAL with *err filled. */
int cs_sched_save(const cs_sched_t *s, const char *path, cs_err_t *err);
/* The same with cs_out flags: CS_OUT_FORCE also replaces a regular file
 * that is not a schedule (never a directory), CS_OUT_STDOUT lets "-" mean
 * standard output, CS_OUT_FSYNC syncs before the rename.  cs_sched_save is
 * cs_sched_save_flags(s, path, CS_OUT_STDOUT | CS_OUT_FSYNC, err). */
int cs_sched_save_flags(const cs_sched_t *s, const char *path, int flags, cs_err_t *err);

/* Where steps are in a schedule text (`len` bytes): for each j < n, the
 * line and column (from 1, columns in bytes) of the number of step
 * step[j] of rank rank[j], or 0 and 0 when the text has no such step (or
 * step[j] < 0).  The text is one the reader accepted (located by its "rank
 * R" and "N:" lines; comments and blank lines are skipped).  O(len). */
void cs_sched_locate(const char *text, size_t len, uint32_t n, const int *rank,
                     const int64_t *step, unsigned long long *line, unsigned long long *col);
/* The same for a file (not "-"): CS_OK, or CS_ERR_IO when it cannot be read
 * or is not a schedule text (its first bytes, after blank and comment
 * lines, are not "collstep-schedule"); every position is 0 then. */
int cs_sched_locate_file(const char *path, uint32_t n, const int *rank, const int64_t *step,
                         unsigned long long *line, unsigned long long *col);

struct cs_out_kind;
/* What cs_sched_save writes, for cs_out_begin_file (the recognizer above). */
extern const struct cs_out_kind cs_sched_out_kind;

#ifdef __cplusplus
}
#endif

#endif /* CS_TEXT_H */
