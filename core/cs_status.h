/*
 * cs_status.h - the one status enum of collstep and the error record.
 *
 * Contract: CS_OK is 0, positive values mean "not yet" (call again),
 * negative values are failures.  Names and messages come from one X-macro
 * list below; foreign codes (libfabric, NCCL, CUDA, SimGrid) are converted
 * in one function per backend.
 *
 * cs_err_t carries a human message for the user.  Functions that can fail
 * for user-facing reasons take a `cs_err_t *err` (may be NULL) and fill it
 * with "file:line:col: expected X, found Y" style text.
 */
#ifndef CS_STATUS_H
#define CS_STATUS_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CS_STATUS_LIST(X)                                                    \
    X(CS_OK, 0, "success")                                                   \
    X(CS_INPROGRESS, 1, "operation in progress")                             \
    X(CS_AGAIN, 2, "resource temporarily unavailable, call again")           \
    X(CS_ERR_NOMEM, -1, "out of memory")                                     \
    X(CS_ERR_INVAL, -2, "invalid argument")                                  \
    X(CS_ERR_PARSE, -3, "malformed input")                                   \
    X(CS_ERR_UNSUPPORTED, -4, "not supported")                               \
    X(CS_ERR_VERIFY, -5, "schedule is incorrect")                            \
    X(CS_ERR_IO, -6, "input/output error")                                   \
    X(CS_ERR_RANGE, -7, "value out of range")                                \
    X(CS_ERR_NOTFOUND, -8, "not found")                                      \
    X(CS_ERR_TRANSPORT, -9, "transport failure")                             \
    X(CS_ERR_TIMEOUT, -10, "timed out")                                      \
    X(CS_ERR_PEER, -11, "peer failed")                                       \
    X(CS_ERR_MISMATCH, -12, "ranks disagree")                                \
    X(CS_ERR_NODEVICE, -13, "no usable device")                              \
    X(CS_ERR_INTERNAL, -14, "internal error")                                \
    X(CS_ERR_INTERRUPTED, -15, "interrupted by a signal")                    \
    X(CS_ERR_EXISTS, -16, "refused: the path holds something collstep did not write")

typedef enum {
#define CS__ENUM(name, val, msg) name = val,
    CS_STATUS_LIST(CS__ENUM)
#undef CS__ENUM
} cs_status_t;

/* Name ("CS_ERR_NOMEM") and message ("out of memory") of a status. */
const char *cs_status_name(int st);
const char *cs_status_str(int st);

#define CS_ERR_MSG_MAX 512

/* A user-facing error.  `code` is a cs_status_t; `msg` is complete text. */
typedef struct cs_err {
    int code;
    char msg[CS_ERR_MSG_MAX];
} cs_err_t;

/* Fill *err (if not NULL) with code and printf-style message; returns code.
 * An error already recorded is kept (the first error wins). */
int cs_err_set(cs_err_t *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int cs_err_vset(cs_err_t *err, int code, const char *fmt, va_list ap);
void cs_err_clear(cs_err_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CS_STATUS_H */
