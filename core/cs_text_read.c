/*
 * cs_text_read.c - the schedule text reader (format: docs/schedule-format.md,
 * contracts: cs_text.h): header lines, ranks, buffers and steps; the lexer
 * is in cs_text_int.h, group lines and switch steps in cs_text_group.c.
 * The schedule is built with the builder of cs_sched.h; dependency lists of
 * steps go through one growable array reused for every step.
 */
#include "cs_text_int.h"

#include "cs_grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- header lines ------------------------------------------------------ */

static int parse_header(lex_t *lx, pstate_t *ps)
{
    uint64_t v = 0;
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
    ps->version = (unsigned)v;
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
    uint64_t v = 0;
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
    uint64_t v = 0;
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
    if (kind == CS_STEP_SWITCH && ps->version < 2)
        return err_at(lx, w, "a step kind of format version 1 (send, recv, rrecv, reduce, copy, "
                             "nop; switch steps need 'collstep-schedule 2')");
    if (kind == CS_STEP_KIND_COUNT)
        return err_at(lx, w, "a step kind (send, recv, rrecv, reduce, copy, nop%s)",
                      ps->version < 2 ? "" : ", switch");
    cs_step_t st = {.kind = (uint8_t)kind, .peer = -1};
    switch (kind) {
    case CS_STEP_SEND:
        if ((rc = expect_kw(lx, "to")) != CS_OK || (rc = parse_peer(lx, &st)) != CS_OK ||
            (rc = cs__text_range(lx, rk, rank, &st.src)) != CS_OK)
            return rc;
        break;
    case CS_STEP_RECV:
    case CS_STEP_RRECV:
        if ((rc = expect_kw(lx, "from")) != CS_OK || (rc = parse_peer(lx, &st)) != CS_OK ||
            (rc = cs__text_range(lx, rk, rank, &st.dst)) != CS_OK)
            return rc;
        break;
    case CS_STEP_REDUCE:
    case CS_STEP_COPY:
        if ((rc = cs__text_range(lx, rk, rank, &st.src)) != CS_OK ||
            (rc = expect_punct(lx, "->")) != CS_OK ||
            (rc = cs__text_range(lx, rk, rank, &st.dst)) != CS_OK)
            return rc;
        break;
    case CS_STEP_SWITCH:
        if ((rc = cs__text_switch(lx, ps, rank, &st)) != CS_OK)
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
    if ((rc = start_line(&lx, text)) != CS_OK || (rc = parse_header(&lx, &ps)) != CS_OK ||
        (rc = parse_collective(&lx, &ps)) != CS_OK || (rc = parse_algorithm(&lx, &ps)) != CS_OK ||
        (rc = cs__text_groups(&lx, &ps)) != CS_OK ||
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
