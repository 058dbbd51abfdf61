/*
 * cs_text_lex.c - the schedule text reader's error messages and buffer
 * ranges (see cs_text_int.h).
 */
#include "cs_text_int.h"

#include <stdarg.h>

/* ---- errors ------------------------------------------------------------ */

/* Describe what lies at `pos`: end of file, end of line, or a quoted token
 * (a run of word characters, else one byte), escaped and truncated. */
static void describe(const lex_t *lx, const char *pos, char *out, size_t cap)
{
    if (pos >= lx->end) {
        snprintf(out, cap, "end of file");
        return;
    }
    if (pos >= lx->lend) {
        snprintf(out, cap, "end of line");
        return;
    }
    size_t n = 1;
    if (is_word((unsigned char)*pos))
        while (pos + n < lx->lend && is_word((unsigned char)pos[n]))
            n++;
    size_t shown = n > FOUND_MAX ? FOUND_MAX : n, o = 0;
    out[o++] = '\'';
    for (size_t i = 0; i < shown && o + 8 < cap; i++) {
        unsigned char c = (unsigned char)pos[i];
        if (c == '\'' || c == '\\')
            o += (size_t)snprintf(out + o, cap - o, "\\%c", c);
        else if (c >= 0x20 && c < 0x7f)
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
    }
    snprintf(out + o, cap - o, "%s'", shown < n ? "..." : "");
}

int cs__text_err_at(lex_t *lx, const char *pos, const char *fmt, ...)
{
    char what[256], found[FOUND_MAX * 4 + 16];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    describe(lx, pos, found, sizeof(found));
    return cs_err_set(&lx->err, CS_ERR_PARSE, "%s:%llu:%llu: expected %s, found %s", lx->fname,
                      lx->lineno, col_of(lx, pos), what, found);
}

/* Report an error of the builder (sticky in s->err) at `pos`. */
int cs__text_err_builder(lex_t *lx, const char *pos, const cs_err_t *berr)
{
    int code = berr->code == CS_ERR_NOMEM ? CS_ERR_NOMEM : CS_ERR_PARSE;
    return cs_err_set(&lx->err, code, "%s:%llu:%llu: %s", lx->fname, lx->lineno, col_of(lx, pos),
                      berr->msg);
}

/* ---- ranges ------------------------------------------------------------ */

static int find_buffer(const cs_rank_sched_t *rk, const char *w, size_t n)
{
    if (n == 0 || n >= CS_BUF_NAME_MAX)
        return -1;
    for (int b = 0; b < rk->nbufs; b++)
        if (memcmp(rk->bufs[b].name, w, n) == 0 && rk->bufs[b].name[n] == '\0')
            return b;
    return -1;
}

/* NAME[a:b] or NAME[a] of a buffer of rank `rank`. */
int cs__text_range(lex_t *lx, const cs_rank_sched_t *rk, int rank, cs_range_t *out)
{
    const char *w;
    uint64_t a = 0, b = 0;
    int st;
    size_t n = word(lx, &w);
    int id = find_buffer(rk, w, n);
    if (id < 0) {
        char names[128];
        size_t o = 0;
        for (int i = 0; i < rk->nbufs && o < 96; i++)
            o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s", i ? ", " : "",
                                  rk->bufs[i].name);
        if (o >= 96)
            snprintf(names + 92, sizeof(names) - 92, ", ...");
        return err_at(lx, w, "a buffer of rank %d (%s)", rank, names);
    }
    if ((st = expect_punct(lx, "[")) != CS_OK ||
        (st = number(lx, 0, UINT32_MAX, "a chunk index", &a)) != CS_OK)
        return st;
    skip_blanks(lx);
    if (lx->p < lx->lend && *lx->p == ':') {
        lx->p++;
        const char *bpos = (skip_blanks(lx), lx->p);
        if ((st = number(lx, 0, UINT32_MAX, "a chunk index", &b)) != CS_OK)
            return st;
        if (b <= a)
            return err_at(lx, bpos, "an end index greater than %llu", (unsigned long long)a);
    } else {
        b = a + 1;
    }
    if ((st = expect_punct(lx, "]")) != CS_OK)
        return st;
    *out = cs_rng(id, (uint32_t)a, (uint32_t)(b - a));
    return CS_OK;
}

