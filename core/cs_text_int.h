/*
 * cs_text_int.h - internals of the schedule text reader shared by its files
 * (not public; format: docs/schedule-format.md, contracts: cs_text.h).
 *
 *   cs_text_lex.c    error messages, buffer ranges
 *   cs_text_read.c   header lines, ranks, buffers, steps
 *   cs_text_group.c  group lines and switch steps (format version 2)
 *
 * A hand-written lexer walks the input buffer line by line: `line`..`lend`
 * bounds the current line (its '\n' excluded) and `p` is the cursor inside
 * it, so no token is ever copied except short names.  Every parse function
 * returns CS_OK or a negative status; the first error is recorded in the
 * lexer with its file:line:col and what was found, and parsing stops there.
 * The lexer's small functions are inline here: they run for every token.
 */
#ifndef CS_TEXT_INT_H
#define CS_TEXT_INT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cs_text.h"

/* Most ranks a file may declare: the builder allocates per rank up front,
 * so a tiny file must not ask for billions (fuzz builds lower it). */
#ifndef CS_TEXT_MAX_RANKS
#define CS_TEXT_MAX_RANKS (1 << 20)
#endif

#define FOUND_MAX 32 /* bytes of the offending token quoted in messages */

typedef struct lex {
    const char *end;  /* end of the input */
    const char *line; /* first byte of the current line */
    const char *lend; /* end of the current line: its '\n' or `end` */
    const char *p;    /* cursor, line <= p <= lend */
    unsigned long long lineno;
    const char *fname;
    cs_err_t err;
} lex_t;

typedef struct pstate {
    cs_sched_t *s;
    uint32_t *deps; /* dependency list of the step being read */
    uint32_t ndeps;
    size_t cap_deps;
    int seen_end; /* the "end" line was read */
    unsigned version; /* the file's format version */
} pstate_t;


/* ---- errors (cs_text_lex.c) -------------------------------------------- */

static inline int is_word(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-';
}

static inline unsigned long long col_of(const lex_t *lx, const char *pos)
{
    return (unsigned long long)(pos - lx->line) + 1;
}

/* Record "FILE:LINE:COL: expected <fmt>, found <what is at pos>". */
int cs__text_err_at(lex_t *lx, const char *pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define err_at cs__text_err_at
/* Report an error of the builder (sticky in s->err) at `pos`. */
int cs__text_err_builder(lex_t *lx, const char *pos, const cs_err_t *berr);
#define err_builder cs__text_err_builder

/* ---- lexer ------------------------------------------------------------- */

static inline int start_line(lex_t *lx, const char *at)
{
    lx->line = lx->p = at;
    lx->lineno++;
    const char *nl = memchr(at, '\n', (size_t)(lx->end - at));
    lx->lend = nl ? nl : lx->end;
    if ((size_t)(lx->lend - at) > CS_TEXT_MAX_LINE)
        return cs_err_set(&lx->err, CS_ERR_PARSE,
                          "%s:%llu:%llu: expected a line of at most %u bytes, found a longer line",
                          lx->fname, lx->lineno, (unsigned long long)CS_TEXT_MAX_LINE + 1,
                          CS_TEXT_MAX_LINE);
    return CS_OK;
}

/* Skip blanks and a trailing comment. */
static inline void skip_blanks(lex_t *lx)
{
    while (lx->p < lx->lend && (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\r'))
        lx->p++;
    if (lx->p < lx->lend && *lx->p == '#')
        lx->p = lx->lend;
}

/* Move to the first token of the next non-blank line, starting with the
 * current one.  Returns 1 there, 0 at the end of the input, or < 0. */
static inline int seek_content(lex_t *lx)
{
    for (;;) {
        skip_blanks(lx);
        if (lx->p < lx->lend)
            return 1;
        if (lx->lend >= lx->end)
            return 0;
        int st = start_line(lx, lx->lend + 1);
        if (st != CS_OK)
            return st;
    }
}

/* The current line must hold nothing more. */
static inline int expect_eol(lex_t *lx)
{
    skip_blanks(lx);
    return lx->p < lx->lend ? err_at(lx, lx->p, "end of line") : CS_OK;
}

/* After expect_eol: go to the next line (or stay at the end). */
static inline int next_line(lex_t *lx)
{
    if (lx->lend >= lx->end) {
        lx->p = lx->lend;
        return CS_OK;
    }
    return start_line(lx, lx->lend + 1);
}

/* Read a run of word characters at the cursor (after blanks). */
static inline size_t word(lex_t *lx, const char **w)
{
    skip_blanks(lx);
    const char *q = lx->p;
    while (q < lx->lend && is_word((unsigned char)*q))
        q++;
    *w = lx->p;
    size_t n = (size_t)(q - lx->p);
    lx->p = q;
    return n;
}

static inline int is_kw(const char *w, size_t n, const char *kw)
{
    return n == strlen(kw) && memcmp(w, kw, n) == 0;
}

static inline int expect_kw(lex_t *lx, const char *kw)
{
    const char *w;
    size_t n = word(lx, &w);
    return is_kw(w, n, kw) ? CS_OK : err_at(lx, w, "'%s'", kw);
}

/* Consume keyword `kw` if it comes next; 1 if it did. */
static inline int accept_kw(lex_t *lx, const char *kw)
{
    const char *save = lx->p, *w;
    size_t n = word(lx, &w);
    if (is_kw(w, n, kw))
        return 1;
    lx->p = save;
    return 0;
}

static inline int expect_punct(lex_t *lx, const char *tok)
{
    skip_blanks(lx);
    size_t n = strlen(tok);
    if ((size_t)(lx->lend - lx->p) >= n && memcmp(lx->p, tok, n) == 0) {
        lx->p += n;
        return CS_OK;
    }
    return err_at(lx, lx->p, "'%s'", tok);
}

/* A decimal number in [min, max]; `what` names it when digits are missing. */
static inline int number(lex_t *lx, uint64_t min, uint64_t max, const char *what, uint64_t *out)
{
    *out = 0; /* also on errors: callers' values are never read uninitialised */
    skip_blanks(lx);
    const char *pos = lx->p;
    if (pos >= lx->lend || *pos < '0' || *pos > '9')
        return err_at(lx, pos, "%s", what);
    uint64_t v = 0;
    int over = 0;
    for (; lx->p < lx->lend && *lx->p >= '0' && *lx->p <= '9'; lx->p++) {
        unsigned d = (unsigned)(*lx->p - '0');
        if (over || d > max || v > (max - d) / 10)
            over = 1;
        else
            v = v * 10 + d;
    }
    if (over)
        return err_at(lx, pos, "a number <= %llu", (unsigned long long)max);
    if (v < min)
        return err_at(lx, pos, "a number >= %llu", (unsigned long long)min);
    *out = v;
    return CS_OK;
}

/* ---- shared parts of the grammar (cs_text_lex.c) ------------------------ */

/* NAME[a:b] or NAME[a] of a buffer of rank `rank`. */
int cs__text_range(lex_t *lx, const cs_rank_sched_t *rk, int rank, cs_range_t *out);
/* 1 when a '[' follows the next word: that word names a buffer (keywords
 * such as "chan" or "after" may be buffer names). */
static inline int range_follows(lex_t *lx)
{
    const char *save = lx->p, *w;
    word(lx, &w);
    skip_blanks(lx);
    int yes = lx->p < lx->lend && *lx->p == '[';
    lx->p = save;
    return yes;
}

/* Group lines ("group NAME ranks LIST"), after the algorithm line. */
int cs__text_groups(lex_t *lx, pstate_t *ps);
/* The rest of a switch step after "switch": "OP GROUP [chan C] [SRC] [-> DST]". */
int cs__text_switch(lex_t *lx, pstate_t *ps, int rank, cs_step_t *st);

#endif /* CS_TEXT_INT_H */
