/*
 * cs_text_read.c - the schedule text reader (format: docs/schedule-format.md,
 * contracts: cs_text.h).
 *
 * A hand-written lexer walks the input buffer line by line: `line`..`lend`
 * bounds the current line (its '\n' excluded) and `p` is the cursor inside
 * it, so no token is ever copied except short names.  Every parse function
 * returns CS_OK or a negative status; the first error is recorded in the
 * lexer with its file:line:col and what was found, and parsing stops there.
 * The schedule is built with the builder of cs_sched.h; dependency lists of
 * steps go through one growable array reused for every step.
 */
#include "cs_text.h"

#include "cs_grow.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
} pstate_t;

/* ---- errors ------------------------------------------------------------ */

static int is_word(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-';
}

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

static unsigned long long col_of(const lex_t *lx, const char *pos)
{
    return (unsigned long long)(pos - lx->line) + 1;
}

/* Record "FILE:LINE:COL: expected <fmt>, found <what is at pos>". */
static int err_at(lex_t *lx, const char *pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int err_at(lex_t *lx, const char *pos, const char *fmt, ...)
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
static int err_builder(lex_t *lx, const char *pos, const cs_err_t *berr)
{
    int code = berr->code == CS_ERR_NOMEM ? CS_ERR_NOMEM : CS_ERR_PARSE;
    return cs_err_set(&lx->err, code, "%s:%llu:%llu: %s", lx->fname, lx->lineno, col_of(lx, pos),
                      berr->msg);
}

/* ---- lexer ------------------------------------------------------------- */

static int start_line(lex_t *lx, const char *at)
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
static void skip_blanks(lex_t *lx)
{
    while (lx->p < lx->lend && (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\r'))
        lx->p++;
    if (lx->p < lx->lend && *lx->p == '#')
        lx->p = lx->lend;
}

/* Move to the first token of the next non-blank line, starting with the
 * current one.  Returns 1 there, 0 at the end of the input, or < 0. */
static int seek_content(lex_t *lx)
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
static int expect_eol(lex_t *lx)
{
    skip_blanks(lx);
    return lx->p < lx->lend ? err_at(lx, lx->p, "end of line") : CS_OK;
}

/* After expect_eol: go to the next line (or stay at the end). */
static int next_line(lex_t *lx)
{
    if (lx->lend >= lx->end) {
        lx->p = lx->lend;
        return CS_OK;
    }
    return start_line(lx, lx->lend + 1);
}

/* Read a run of word characters at the cursor (after blanks). */
static size_t word(lex_t *lx, const char **w)
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

static int expect_kw(lex_t *lx, const char *kw)
{
    const char *w;
    size_t n = word(lx, &w);
    return is_kw(w, n, kw) ? CS_OK : err_at(lx, w, "'%s'", kw);
}

/* Consume keyword `kw` if it comes next; 1 if it did. */
static int accept_kw(lex_t *lx, const char *kw)
{
    const char *save = lx->p, *w;
    size_t n = word(lx, &w);
    if (is_kw(w, n, kw))
        return 1;
    lx->p = save;
    return 0;
}

static int expect_punct(lex_t *lx, const char *tok)
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
static int number(lex_t *lx, uint64_t min, uint64_t max, const char *what, uint64_t *out)
{
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

/* ---- header lines ------------------------------------------------------ */

static int parse_header(lex_t *lx)
{
    uint64_t v;
    int st = seek_content(lx);
    if (st < 0)
        return st;
    if ((st = expect_kw(lx, "collstep-schedule")) != CS_OK)
        return st;
    const char *pos = (skip_blanks(lx), lx->p);
    if ((st = number(lx, 0, UINT32_MAX, "a format version", &v)) != CS_OK)
        return st;
    if (v < CS_SCHED_FORMAT_VERSION_MIN || v > CS_SCHED_FORMAT_VERSION)
        return err_at(lx, pos, "format version %d to %d", CS_SCHED_FORMAT_VERSION_MIN,
                      CS_SCHED_FORMAT_VERSION);
    if ((st = expect_eol(lx)) != CS_OK)
        return st;
    return next_line(lx);
}

/* "collective NAME ranks P chunks C [root R] [inplace]" */
static int parse_collective(lex_t *lx, pstate_t *ps)
{
    const char *w, *kpos, *cpos, *rpos = NULL, *ipos = NULL;
    uint64_t P, C, root = 0;
    int st = seek_content(lx);
    if (st < 0)
        return st;
    kpos = lx->p;
    if ((st = expect_kw(lx, "collective")) != CS_OK)
        return st;
    size_t n = word(lx, &w);
    char name[32] = "";
    if (n < sizeof(name))
        memcpy(name, w, n), name[n] = '\0';
    cs_coll_t coll = n && n < sizeof(name) ? cs_coll_parse(name) : CS_COLL_COUNT;
    if (coll == CS_COLL_COUNT)
        return err_at(lx, w, "a collective (allreduce, reduce-scatter, allgather, broadcast, "
                             "reduce, alltoall)");
    if ((st = expect_kw(lx, "ranks")) != CS_OK ||
        (st = number(lx, 1, CS_TEXT_MAX_RANKS, "a number of ranks", &P)) != CS_OK ||
        (st = expect_kw(lx, "chunks")) != CS_OK)
        return st;
    cpos = (skip_blanks(lx), lx->p);
    if ((st = number(lx, 1, UINT32_MAX, "a number of chunks", &C)) != CS_OK)
        return st;
    if (cs_coll_blocked(coll) && C % P != 0)
        return err_at(lx, cpos, "a multiple of %llu (the number of ranks) for %s",
                      (unsigned long long)P, cs_coll_name(coll));
    for (;;) {
        skip_blanks(lx);
        if (lx->p >= lx->lend)
            break;
        int want_root = rpos == NULL && cs_coll_has_root(coll);
        int want_inplace = ipos == NULL && coll != CS_COLL_REDUCE_SCATTER;
        const char *opt = lx->p;
        if (want_root && accept_kw(lx, "root")) {
            rpos = opt;
            const char *npos = (skip_blanks(lx), lx->p);
            if ((st = number(lx, 0, INT32_MAX, "a root rank", &root)) != CS_OK)
                return st;
            if (root >= P)
                return err_at(lx, npos, "a root rank < %llu", (unsigned long long)P);
        } else if (want_inplace && accept_kw(lx, "inplace")) {
            ipos = opt;
        } else {
            return err_at(lx, opt, "%s%s%s", want_root ? "'root', " : "",
                          want_inplace ? "'inplace' or " : "", "end of line");
        }
    }
    cs_coll_desc_t d = {coll, (int32_t)P, (int32_t)root, ipos != NULL};
    cs_err_t cerr = {0};
    ps->s = cs_sched_create(&d, (uint32_t)C, &cerr);
    if (ps->s == NULL)
        return err_builder(lx, kpos, &cerr);
    return next_line(lx);
}

/* A token of the algorithm line: printable ASCII but '#' and blanks. */
static size_t meta_token(lex_t *lx, const char **w)
{
    skip_blanks(lx);
    const char *q = lx->p;
    while (q < lx->lend && *q > ' ' && *q < 0x7f && *q != '#')
        q++;
    *w = lx->p;
    size_t n = (size_t)(q - lx->p);
    lx->p = q;
    return n;
}

/* Optional "algorithm NAME [PARAM ...]" line. */
static int parse_algorithm(lex_t *lx, pstate_t *ps)
{
    const char *w;
    char algo[sizeof(ps->s->algo)], params[sizeof(ps->s->params)];
    size_t plen = 0;
    int st = seek_content(lx);
    if (st <= 0 || !accept_kw(lx, "algorithm"))
        return st < 0 ? st : CS_OK;
    size_t n = meta_token(lx, &w);
    if (n == 0 || n >= sizeof(algo))
        return err_at(lx, w, "an algorithm name of 1 to %zu characters", sizeof(algo) - 1);
    memcpy(algo, w, n);
    algo[n] = '\0';
    params[0] = '\0';
    while ((n = meta_token(lx, &w)) > 0) {
        if (plen + (plen > 0) + n >= sizeof(params))
            return err_at(lx, w, "at most %zu characters of parameters", sizeof(params) - 1);
        if (plen > 0)
            params[plen++] = ' ';
        memcpy(params + plen, w, n);
        plen += n;
        params[plen] = '\0';
    }
    if ((st = expect_eol(lx)) != CS_OK)
        return st;
    cs_sched_set_meta(ps->s, algo, params);
    return next_line(lx);
}

/* ---- ranks, buffers, steps --------------------------------------------- */

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
static int parse_range(lex_t *lx, const cs_rank_sched_t *rk, int rank, cs_range_t *out)
{
    const char *w;
    uint64_t a, b;
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

static int push_dep(pstate_t *ps, uint32_t d)
{
    if (cs_grow(&ps->deps, &ps->cap_deps, (size_t)ps->ndeps + 1, sizeof(*ps->deps), 16))
        return CS_ERR_NOMEM;
    ps->deps[ps->ndeps++] = d;
    return CS_OK;
}

/* "peer [chan C]" of send / recv / rrecv.  A buffer may be named "chan":
 * the keyword counts only when no '[' follows it. */
static int parse_peer(lex_t *lx, cs_step_t *st)
{
    uint64_t v;
    int rc = number(lx, 0, INT32_MAX, "a peer rank", &v);
    if (rc != CS_OK)
        return rc;
    st->peer = (int32_t)v;
    const char *save = lx->p;
    if (accept_kw(lx, "chan")) {
        skip_blanks(lx);
        if (lx->p < lx->lend && *lx->p == '[') {
            lx->p = save;
            return CS_OK;
        }
        if ((rc = number(lx, 0, CS_MAX_CHANNELS - 1, "a channel number", &v)) != CS_OK)
            return rc;
        st->chan = (uint16_t)v;
    }
    return CS_OK;
}

/* "N: KIND ... [after a,b,c]" */
static int parse_step(lex_t *lx, pstate_t *ps, int rank)
{
    cs_rank_sched_t *rk = &ps->s->ranks[rank];
    const char *pos = lx->p, *w;
    uint64_t v;
    int rc = number(lx, 0, UINT32_MAX, "a step number", &v);
    if (rc != CS_OK)
        return rc;
    if (v != rk->nsteps)
        return err_at(lx, pos, "step %u", rk->nsteps);
    if ((rc = expect_punct(lx, ":")) != CS_OK)
        return rc;
    size_t n = word(lx, &w);
    int kind = 0;
    while (kind < CS_STEP_KIND_COUNT && !is_kw(w, n, cs_step_kind_name((cs_step_kind_t)kind)))
        kind++;
    if (kind == CS_STEP_KIND_COUNT)
        return err_at(lx, w, "a step kind (send, recv, rrecv, reduce, copy, nop)");
    cs_step_t st = {.kind = (uint8_t)kind, .peer = -1};
    switch (kind) {
    case CS_STEP_SEND:
        if ((rc = expect_kw(lx, "to")) != CS_OK || (rc = parse_peer(lx, &st)) != CS_OK ||
            (rc = parse_range(lx, rk, rank, &st.src)) != CS_OK)
            return rc;
        break;
    case CS_STEP_RECV:
    case CS_STEP_RRECV:
        if ((rc = expect_kw(lx, "from")) != CS_OK || (rc = parse_peer(lx, &st)) != CS_OK ||
            (rc = parse_range(lx, rk, rank, &st.dst)) != CS_OK)
            return rc;
        break;
    case CS_STEP_REDUCE:
    case CS_STEP_COPY:
        if ((rc = parse_range(lx, rk, rank, &st.src)) != CS_OK ||
            (rc = expect_punct(lx, "->")) != CS_OK ||
            (rc = parse_range(lx, rk, rank, &st.dst)) != CS_OK)
            return rc;
        break;
    default:
        break;
    }
    ps->ndeps = 0;
    if (accept_kw(lx, "after")) {
        do {
            if ((rc = number(lx, 0, UINT32_MAX, "a step number", &v)) != CS_OK)
                return rc;
            if (push_dep(ps, (uint32_t)v) != CS_OK)
                return cs_err_set(&lx->err, CS_ERR_NOMEM, "%s:%llu:%llu: out of memory",
                                  lx->fname, lx->lineno, col_of(lx, pos));
            skip_blanks(lx);
        } while (lx->p < lx->lend && *lx->p == ',' && ++lx->p);
    }
    if ((rc = expect_eol(lx)) != CS_OK)
        return rc;
    if (cs_sched_add(ps->s, rank, &st, ps->deps, ps->ndeps) < 0)
        return err_builder(lx, pos, &ps->s->err);
    return next_line(lx);
}

/* "buffer NAME base B chunks N" */
static int parse_buffer(lex_t *lx, pstate_t *ps, int rank, const char *pos)
{
    const char *w;
    uint64_t base, n;
    int rc;
    skip_blanks(lx);
    w = lx->p;
    while (lx->p < lx->lend && (is_word((unsigned char)*lx->p) && *lx->p != '-'))
        lx->p++;
    size_t len = (size_t)(lx->p - w);
    if (len == 0 || len >= CS_BUF_NAME_MAX || (*w >= '0' && *w <= '9'))
        return err_at(lx, w, "a buffer name ([A-Za-z_][A-Za-z0-9_]*, at most %d characters)",
                      CS_BUF_NAME_MAX - 1);
    char name[CS_BUF_NAME_MAX];
    memcpy(name, w, len);
    name[len] = '\0';
    if ((rc = expect_kw(lx, "base")) != CS_OK ||
        (rc = number(lx, 0, UINT32_MAX, "a base chunk", &base)) != CS_OK ||
        (rc = expect_kw(lx, "chunks")) != CS_OK ||
        (rc = number(lx, 1, UINT32_MAX, "a number of chunks", &n)) != CS_OK ||
        (rc = expect_eol(lx)) != CS_OK)
        return rc;
    if (cs_sched_add_buffer(ps->s, rank, name, (uint32_t)base, (uint32_t)n) < 0)
        return err_builder(lx, pos, &ps->s->err);
    return next_line(lx);
}

static int parse_ranks(lex_t *lx, pstate_t *ps)
{
    int cur = -1, rc;
    const char *w;
    uint64_t r;
    while ((rc = seek_content(lx)) == 1) {
        const char *pos = lx->p;
        if (cur >= 0 && *pos >= '0' && *pos <= '9') {
            if ((rc = parse_step(lx, ps, cur)) != CS_OK)
                return rc;
            continue;
        }
        size_t n = word(lx, &w);
        if (is_kw(w, n, "end")) {
            /* The last line: whatever follows is an error, and its absence
             * means the file was cut short. */
            if ((rc = expect_eol(lx)) != CS_OK || (rc = next_line(lx)) != CS_OK)
                return rc;
            if ((rc = seek_content(lx)) == 1)
                return err_at(lx, lx->p, "end of file after 'end'");
            if (rc == 0)
                ps->seen_end = 1;
            return rc;
        }
        if (is_kw(w, n, "rank")) {
            const char *npos = (skip_blanks(lx), lx->p);
            if ((rc = number(lx, 0, INT32_MAX, "a rank", &r)) != CS_OK)
                return rc;
            if ((int64_t)r <= cur || r >= (uint64_t)ps->s->desc.nranks)
                return err_at(lx, npos, "a rank in [%d, %d) (ranks come in increasing order)",
                              cur + 1, ps->s->desc.nranks);
            cur = (int)r;
            if ((rc = expect_eol(lx)) != CS_OK || (rc = next_line(lx)) != CS_OK)
                return rc;
        } else if (is_kw(w, n, "buffer") && cur >= 0 && ps->s->ranks[cur].nsteps == 0) {
            if ((rc = parse_buffer(lx, ps, cur, pos)) != CS_OK)
                return rc;
        } else if (cur < 0) {
            return err_at(lx, pos, "'rank'");
        } else if (ps->s->ranks[cur].nsteps == 0) {
            return err_at(lx, pos, "'rank', 'buffer' or a step number");
        } else {
            return err_at(lx, pos, "'rank' or a step number (buffers come before steps)");
        }
    }
    if (rc == 0 && !ps->seen_end)
        return err_at(lx, lx->p,
                      "%s or 'end' (the last line of every schedule: the file may be truncated)",
                      cur < 0 ? "'rank'" : "a step, 'rank'");
    return rc;
}

cs_sched_t *cs_sched_parse(const char *text, size_t len, const char *fname, cs_err_t *err)
{
    lex_t lx = {0};
    pstate_t ps = {0};
    int rc;
    lx.fname = fname ? fname : "<input>";
    if (text == NULL && len > 0) {
        cs_err_set(err, CS_ERR_INVAL, "%s: no text to parse", lx.fname);
        return NULL;
    }
    if (text == NULL)
        text = "";
    lx.end = text + len;
    if ((rc = start_line(&lx, text)) != CS_OK || (rc = parse_header(&lx)) != CS_OK ||
        (rc = parse_collective(&lx, &ps)) != CS_OK || (rc = parse_algorithm(&lx, &ps)) != CS_OK ||
        (rc = parse_ranks(&lx, &ps)) != CS_OK)
        goto fail;
    free(ps.deps);
    return ps.s;
fail:
    free(ps.deps);
    cs_sched_destroy(ps.s);
    cs_err_set(err, lx.err.code ? lx.err.code : rc, "%s", lx.err.msg);
    return NULL;
}
