/*
 * cs_nccl_log_int.h - what the two halves of the nccl-tests log reader
 * share (cs_nccl_log.c: lines, tables, header part; cs_nccl_log_rows.c:
 * column header, rows, closing lines, the collective).  Not installed.
 */
#ifndef CS_NCCL_LOG_INT_H
#define CS_NCCL_LOG_INT_H

#include <stddef.h>
#include <stdint.h>

#include "cs_nccl_log.h"

/* Where the table being read is. */
enum { NL_NONE, NL_HEAD, NL_COLS, NL_DONE };

/* Column kinds of a table's column header. */
enum {
    NL_C_SIZE, NL_C_COUNT, NL_C_TYPE, NL_C_OP, NL_C_ROOT, NL_C_TIME, NL_C_ALGBW, NL_C_BUSBW,
    NL_C_COPYBW, NL_C_WRONG, NL_C_ITER, NL_C_STAMP
};
#define NL_MAX_COLS 48

typedef struct nl_parser {
    const char *name;
    cs_err_t *err;
    cs_nccl_log_t *log;
    int state;
    unsigned seen;            /* header-part lines of the open table (NL_F_*) */
    /* the line being read: as read (for columns), and after its prefix */
    const char *orig, *p, *end;
    unsigned lineno;
    /* the open table's column layout */
    int ncols;
    unsigned char col[NL_MAX_COLS], place[NL_MAX_COLS];
    int units_seen;
    /* a row of the open table that did not read: an error once a row or a
     * closing line of the table follows, else (the table ends: another
     * table, the end of the file) the run was cut there */
    unsigned pend_line;
    char pend_msg[512];
    int pend_raised;          /* the error returned is the pending row's, not this line's */
    /* what lines between tables said, for the next table */
    char algo[32], proto[32], nccl[32], prog[64];
    unsigned algo_line, proto_line; /* where algo and proto were said */
    int cputime;              /* the table's time columns are cputime (-C 1) */
    char cs_algo[64], cs_params[160], cs_source[8];
    char prev[1024];          /* the last '#' line that said nothing read: a title */
} nl_parser_t;

/* The open table (the last one); NULL when none. */
static inline cs_nccl_run_t *nl_table(nl_parser_t *P)
{
    return P->state == NL_NONE ? NULL : &P->log->tables[P->log->ntables - 1];
}

/* Tokens: [*ts, *te) is the next run of non-blank bytes at or after p;
 * returns 0 at the end of the line. */
int nl_token(const char *p, const char *end, const char **ts, const char **te);
const char *nl_skip_blank(const char *p, const char *end);
/* Does [p, end) start with the NUL-terminated word w (followed by a blank,
 * the end, or anything when `prefix`)? */
int nl_starts(const char *p, const char *end, const char *w, int prefix);

/* "NAME:LINE:COL: expected WHAT, found 'TOKEN'" at `at` (a byte of the
 * current line, or its end); returns CS_ERR_PARSE. */
int nl_expected(nl_parser_t *P, const char *at, const char *what);
int nl_fail(nl_parser_t *P, int code, const char *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Numbers of a token [ts, te): the whole token must be the number. */
int nl_u64(nl_parser_t *P, const char *ts, const char *te, uint64_t *v, const char *what);
int nl_int(nl_parser_t *P, const char *ts, const char *te, int *v, const char *what);
int nl_double(nl_parser_t *P, const char *ts, const char *te, double *v, const char *what);
/* Copy a token into a buffer of `cap` bytes; error when it does not fit. */
int nl_word(nl_parser_t *P, const char *ts, const char *te, char *out, size_t cap,
            const char *what);

/* The pending row's error (see pend_line), CS_ERR_PARSE. */
int nl_pending_error(nl_parser_t *P);

/* Finish the open table and open the next one (cs_nccl_log.c). */
int nl_open(nl_parser_t *P);

/* Header-part lines, in the order nccl-tests prints them: a line whose
 * order is not above every one the open table has starts the next table. */
enum { NL_F_VERSION = 1, NL_F_PROGRAM = 2, NL_F_PARAMS = 4, NL_F_COMPILED = 8, NL_F_USING = 16 };

/* cs_nccl_log_head.c: each takes the line after its keyword */
int nl_head_line(nl_parser_t *P, unsigned field); /* the open table's, or open one */
int nl_version_line(nl_parser_t *P, const char *s); /* "nccl-tests version ..." */
int nl_program_line(nl_parser_t *P, const char *s); /* "Collective test starting:" */
int nl_params_line(nl_parser_t *P, const char *s);  /* "nThread 1 nGpus 1 ..." */
int nl_device_line(nl_parser_t *P, const char *s);  /* "Rank 0 Group 0 Pid ..." */

/* cs_nccl_log_rows.c */
int nl_columns(nl_parser_t *P, const char *body);     /* "# size count type ..." */
void nl_units(nl_parser_t *P, const char *body);      /* "# (B) (elements) (us) ..." */
int nl_row(nl_parser_t *P, const char *s);            /* a row of numbers */
int nl_closing(nl_parser_t *P, const char *s, int oob); /* Out of bounds / Avg bus bandwidth */
void nl_infer_coll(cs_nccl_run_t *t);               /* from the columns */
/* The collective of a program name ("all_reduce_perf", ".../alltoall_perf_mpi");
 * CS_NCCL_UNKNOWN when it is none of nccl-tests'. */
cs_nccl_coll_t nl_coll_of_program(const char *s, size_t n);

#endif /* CS_NCCL_LOG_INT_H */
