/*
 * cs_text_group.c - the reader's group lines and switch steps (format
 * version 2, docs/schedule-format.md; see cs_text_int.h).
 *
 *   group NAME ranks 0,2,4-7
 *   3: switch OP GROUP [chan C] [SRC] [-> DST] [after ...]
 *
 * SRC and DST are buffer ranges; which of them a step has depends on OP
 * (cs_sched.h, "Switch steps"), checked by the builder.  A group's ranks are
 * distinct and increasing; a range "a-b" lists a..b.
 */
#include "cs_text_int.h"

#include <stdlib.h>

#include "cs_grow.h"

/* A name as buffers have them ([A-Za-z_][A-Za-z0-9_]*): its length, 0 when
 * what is at the cursor is not one (the cursor then does not move). */
static size_t name_token(lex_t *lx, const char **w)
{
    skip_blanks(lx);
    const char *q = lx->p;
    *w = q;
    if (q >= lx->lend || (*q >= '0' && *q <= '9'))
        return 0;
    while (q < lx->lend && is_word((unsigned char)*q) && *q != '-')
        q++;
    size_t n = (size_t)(q - lx->p);
    if (n >= CS_BUF_NAME_MAX)
        return 0;
    lx->p = q;
    return n;
}

/* "group NAME ranks LIST", the keyword already read at `pos`. */
static int parse_group(lex_t *lx, pstate_t *ps, const char *pos)
{
    const char *w;
    size_t n = name_token(lx, &w);
    int rc;
    if (n == 0)
        return err_at(lx, w, "a group name ([A-Za-z_][A-Za-z0-9_]*, at most %d characters)",
                      CS_BUF_NAME_MAX - 1);
    char name[CS_BUF_NAME_MAX];
    memcpy(name, w, n);
    name[n] = '\0';
    if (cs_sched_find_group(ps->s, name) >= 0)
        return err_at(lx, w, "a group name not declared before");
    if ((rc = expect_kw(lx, "ranks")) != CS_OK)
        return rc;
    int32_t *m = NULL;
    size_t cap = 0, len = 0;
    int64_t last = -1;
    int P = ps->s->desc.nranks;
    do {
        uint64_t a = 0, b = 0;
        const char *apos = (skip_blanks(lx), lx->p);
        if ((rc = number(lx, 0, INT32_MAX, "a rank", &a)) != CS_OK)
            goto out;
        b = a;
        if (lx->p < lx->lend && *lx->p == '-') {
            lx->p++;
            const char *bpos = lx->p;
            if ((rc = number(lx, 0, INT32_MAX, "the last rank of a range", &b)) != CS_OK)
                goto out;
            if (b <= a) {
                rc = err_at(lx, bpos, "a rank greater than %llu", (unsigned long long)a);
                goto out;
            }
        }
        if ((int64_t)a <= last || b >= (uint64_t)P) {
            rc = err_at(lx, apos, "a rank in [%lld, %d) (the ranks of a group are distinct and "
                                  "increasing)",
                        (long long)last + 1, P);
            goto out;
        }
        if (cs_grow(&m, &cap, len + (size_t)(b - a) + 1, sizeof(*m), 16)) {
            rc = cs_err_set(&lx->err, CS_ERR_NOMEM, "%s:%llu:%llu: out of memory", lx->fname,
                            lx->lineno, col_of(lx, pos));
            goto out;
        }
        for (uint64_t r = a; r <= b; r++)
            m[len++] = (int32_t)r;
        last = (int64_t)b;
        skip_blanks(lx);
    } while (lx->p < lx->lend && *lx->p == ',' && ++lx->p);
    if ((rc = expect_eol(lx)) != CS_OK)
        goto out;
    rc = cs_sched_add_group(ps->s, name, m, (uint32_t)len) < 0 ? err_builder(lx, pos, &ps->s->err)
                                                                  : next_line(lx);
out:
    free(m);
    return rc;
}

int cs__text_groups(lex_t *lx, pstate_t *ps)
{
    int rc;
    while ((rc = seek_content(lx)) == 1) {
        const char *pos = lx->p;
        if (!accept_kw(lx, "group"))
            return CS_OK;
        if (ps->version < 2)
            return err_at(lx, pos, "'rank' (group lines need 'collstep-schedule 2')");
        if ((rc = parse_group(lx, ps, pos)) != CS_OK)
            return rc;
    }
    return rc < 0 ? rc : CS_OK;
}

int cs__text_switch(lex_t *lx, pstate_t *ps, int rank, cs_step_t *st)
{
    const cs_rank_sched_t *rk = &ps->s->ranks[rank];
    const char *w;
    char buf[CS_BUF_NAME_MAX];
    uint64_t v = 0;
    int rc;
    size_t n = word(lx, &w);
    if (n > 0 && n < sizeof(buf))
        memcpy(buf, w, n);
    buf[n < sizeof(buf) ? n : 0] = '\0';
    cs_swop_t op = cs_swop_parse(buf);
    if (op == CS_SW_COUNT)
        return err_at(lx, w, "a switch operation (allreduce, reduce, multicast)");
    st->op = (uint8_t)op;
    n = name_token(lx, &w);
    if (n > 0)
        memcpy(buf, w, n);
    buf[n] = '\0';
    int g = n > 0 ? cs_sched_find_group(ps->s, buf) : -1;
    if (g < 0) {
        char names[128];
        size_t o = 0;
        for (uint32_t i = 0; i < ps->s->ngroups && o < 96; i++)
            o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s", i ? ", " : "",
                                  ps->s->groups[i].name);
        if (o >= 96)
            snprintf(names + 92, sizeof(names) - 92, ", ...");
        return err_at(lx, w, "a group (%s)", o ? names : "none declared");
    }
    if (cs_group_member(&ps->s->groups[g], rank) < 0)
        return err_at(lx, w, "a group with rank %d among its ranks", rank);
    st->peer = g;
    if (!range_follows(lx) && accept_kw(lx, "chan")) {
        if ((rc = number(lx, 0, CS_MAX_CHANNELS - 1, "a channel number", &v)) != CS_OK)
            return rc;
        st->chan = (uint16_t)v;
    }
    if (range_follows(lx) && (rc = cs__text_range(lx, rk, rank, &st->src)) != CS_OK)
        return rc;
    skip_blanks(lx);
    if (lx->lend - lx->p >= 2 && lx->p[0] == '-' && lx->p[1] == '>') {
        lx->p += 2;
        if ((rc = cs__text_range(lx, rk, rank, &st->dst)) != CS_OK)
            return rc;
    }
    return CS_OK;
}
