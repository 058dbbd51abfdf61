/*
 * cs_text_write.c - the canonical schedule text writer (format:
 * docs/schedule-format.md, contracts: cs_text.h).
 *
 * Canonical text: the header line, the collective line ("root R" only for
 * rooted collectives, "inplace" only when set), the algorithm line only when
 * the schedule has an algorithm name, then every rank, its scratch buffers
 * and its steps indented by two spaces, ranges always as buf[a:b], "chan C"
 * only when C != 0, "after" only when there are dependencies, listed with
 * ',' and no spaces.  Schedules with groups or switch steps are format
 * version 2: their group lines follow the algorithm line, ranks listed in
 * increasing order with runs of consecutive ranks as "a-b"; a switch step
 * is "switch OP GROUP[ chan C][ SRC][ -> DST]".  Output goes through a 64 KiB buffer with hand-made
 * number formatting (no stdio call per step).
 */
#include "cs_text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define OUTBUF 65536
#define LINE_RESERVE 256 /* room for any line piece written without a check */

typedef struct outbuf {
    FILE *f;
    size_t n;
    int failed;
    char b[OUTBUF];
} outbuf_t;

static void ob_flush(outbuf_t *o)
{
    if (o->n > 0 && !o->failed && fwrite(o->b, 1, o->n, o->f) != o->n)
        o->failed = 1;
    o->n = 0;
}

static inline void ob_room(outbuf_t *o, size_t need)
{
    if (o->n + need > OUTBUF)
        ob_flush(o);
}

static inline void ob_mem(outbuf_t *o, const char *s, size_t n)
{
    if (n > OUTBUF - o->n) {
        ob_flush(o);
        if (n > OUTBUF) {
            if (!o->failed && fwrite(s, 1, n, o->f) != n)
                o->failed = 1;
            return;
        }
    }
    memcpy(o->b + o->n, s, n);
    o->n += n;
}

static inline void ob_str(outbuf_t *o, const char *s)
{
    ob_mem(o, s, strlen(s));
}

static inline void ob_u64(outbuf_t *o, uint64_t v)
{
    char tmp[20];
    int i = 0;
    do {
        tmp[i++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    ob_room(o, (size_t)i);
    while (i > 0)
        o->b[o->n++] = tmp[--i];
}

static void ob_range(outbuf_t *o, const cs_rank_sched_t *rk, const cs_range_t *r)
{
    ob_str(o, r->buf < rk->nbufs ? rk->bufs[r->buf].name : "?");
    ob_mem(o, "[", 1);
    ob_u64(o, r->off);
    ob_mem(o, ":", 1);
    ob_u64(o, (uint64_t)r->off + r->n);
    ob_mem(o, "]", 1);
}

/* Append the tokens of `src` to `dst` (capacity cap) separated by single
 * spaces; bytes that the reader would not take back ('#', control and
 * non-ASCII bytes) become '?'.  Tokens that do not fit are dropped. */
static void meta_tokens(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(dst);
    while (*src) {
        while (*src == ' ' || (*src >= '\t' && *src <= '\r'))
            src++;
        size_t len = 0;
        while (src[len] && src[len] != ' ' && !(src[len] >= '\t' && src[len] <= '\r'))
            len++;
        if (len == 0)
            break;
        if (n + (n > 0) + len < cap) {
            if (n > 0)
                dst[n++] = ' ';
            for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)src[i];
                dst[n++] = (c > ' ' && c < 0x7f && c != '#') ? (char)c : '?';
            }
            dst[n] = '\0';
        }
        src += len;
    }
}

/* The algorithm line: its first token is the name (at most 63 bytes), the
 * rest (further words of the name, then the parameters) must fit in 255. */
static void write_algorithm(outbuf_t *o, const cs_sched_t *s)
{
    char all[sizeof(s->algo) + sizeof(s->params) + 2] = "";
    char params[sizeof(s->params)] = "";
    meta_tokens(all, sizeof(all), s->algo);
    size_t nl = strcspn(all, " ");
    if (nl == 0 || nl >= sizeof(s->algo))
        return;
    if (all[nl] == ' ')
        meta_tokens(params, sizeof(params), all + nl + 1);
    all[nl] = '\0';
    meta_tokens(params, sizeof(params), s->params);
    ob_str(o, "algorithm ");
    ob_str(o, all);
    if (params[0]) {
        ob_mem(o, " ", 1);
        ob_str(o, params);
    }
    ob_mem(o, "\n", 1);
}

/* "group NAME ranks 0,2-5,7": runs of two or more consecutive ranks as a-b. */
static void write_group(outbuf_t *o, const cs_group_t *g)
{
    ob_str(o, "group ");
    ob_str(o, g->name);
    ob_str(o, " ranks ");
    for (uint32_t i = 0; i < g->n;) {
        uint32_t j = i;
        while (j + 1 < g->n && g->members[j + 1] == g->members[j] + 1)
            j++;
        if (i > 0)
            ob_mem(o, ",", 1);
        ob_u64(o, (uint64_t)(uint32_t)g->members[i]);
        if (j > i) {
            ob_mem(o, "-", 1);
            ob_u64(o, (uint64_t)(uint32_t)g->members[j]);
        }
        i = j + 1;
    }
    ob_mem(o, "\n", 1);
}

static void write_switch(outbuf_t *o, const cs_sched_t *s, const cs_rank_sched_t *rk,
                         const cs_step_t *st)
{
    ob_mem(o, " ", 1);
    ob_str(o, cs_swop_name((cs_swop_t)st->op));
    ob_mem(o, " ", 1);
    ob_str(o, st->peer >= 0 && (uint32_t)st->peer < s->ngroups ? s->groups[st->peer].name : "?");
    if (st->chan != 0) {
        ob_str(o, " chan ");
        ob_u64(o, st->chan);
    }
    if (st->src.n > 0) {
        ob_mem(o, " ", 1);
        ob_range(o, rk, &st->src);
    }
    if (st->dst.n > 0) {
        ob_str(o, " -> ");
        ob_range(o, rk, &st->dst);
    }
}

static void write_step(outbuf_t *o, const cs_sched_t *s, const cs_rank_sched_t *rk, uint32_t i)
{
    const cs_step_t *st = &rk->steps[i];
    ob_mem(o, "  ", 2);
    ob_u64(o, i);
    ob_mem(o, ": ", 2);
    ob_str(o, cs_step_kind_name((cs_step_kind_t)st->kind));
    switch (st->kind) {
    case CS_STEP_SEND:
    case CS_STEP_RECV:
    case CS_STEP_RRECV:
        ob_str(o, st->kind == CS_STEP_SEND ? " to " : " from ");
        ob_u64(o, (uint64_t)(uint32_t)st->peer);
        if (st->chan != 0) {
            ob_str(o, " chan ");
            ob_u64(o, st->chan);
        }
        ob_mem(o, " ", 1);
        ob_range(o, rk, st->kind == CS_STEP_SEND ? &st->src : &st->dst);
        break;
    case CS_STEP_REDUCE:
    case CS_STEP_COPY:
        ob_mem(o, " ", 1);
        ob_range(o, rk, &st->src);
        ob_str(o, " -> ");
        ob_range(o, rk, &st->dst);
        break;
    case CS_STEP_SWITCH:
        write_switch(o, s, rk, st);
        break;
    default:
        break;
    }
    if (st->ndeps > 0) {
        const uint32_t *d = cs_step_deps(rk, st);
        ob_str(o, " after ");
        for (uint32_t j = 0; j < st->ndeps; j++) {
            if (j)
                ob_mem(o, ",", 1);
            ob_u64(o, d[j]);
        }
    }
    ob_mem(o, "\n", 1);
}

int cs_sched_write(const cs_sched_t *s, FILE *f)
{
    if (s == NULL || f == NULL || s->ranks == NULL)
        return CS_ERR_INVAL;
    outbuf_t *o = malloc(sizeof(*o));
    if (o == NULL)
        return CS_ERR_NOMEM;
    o->f = f;
    o->n = 0;
    o->failed = 0;
    ob_str(o, "collstep-schedule ");
    /* version 1 for what version 1 can say: those files stay byte for byte */
    ob_u64(o, cs_sched_has_switch(s) ? CS_SCHED_FORMAT_VERSION : CS_SCHED_FORMAT_VERSION_MIN);
    ob_str(o, "\ncollective ");
    ob_str(o, cs_coll_name(s->desc.coll));
    ob_str(o, " ranks ");
    ob_u64(o, (uint64_t)(uint32_t)s->desc.nranks);
    ob_str(o, " chunks ");
    ob_u64(o, s->nchunks);
    if (cs_coll_has_root(s->desc.coll)) {
        ob_str(o, " root ");
        ob_u64(o, (uint64_t)(uint32_t)s->desc.root);
    }
    if (s->desc.inplace)
        ob_str(o, " inplace");
    ob_mem(o, "\n", 1);
    write_algorithm(o, s);
    for (uint32_t g = 0; g < s->ngroups; g++)
        write_group(o, &s->groups[g]);
    for (int r = 0; r < s->desc.nranks; r++) {
        const cs_rank_sched_t *rk = &s->ranks[r];
        ob_str(o, "rank ");
        ob_u64(o, (uint64_t)r);
        ob_mem(o, "\n", 1);
        for (int b = CS_BUF_FIRST_SCRATCH; b < rk->nbufs; b++) {
            ob_str(o, "  buffer ");
            ob_str(o, rk->bufs[b].name);
            ob_str(o, " base ");
            ob_u64(o, rk->bufs[b].base);
            ob_str(o, " chunks ");
            ob_u64(o, rk->bufs[b].nchunks);
            ob_mem(o, "\n", 1);
        }
        for (uint32_t i = 0; i < rk->nsteps; i++)
            write_step(o, s, rk, i);
    }
    ob_str(o, "end\n");
    ob_flush(o);
    int failed = o->failed || fflush(f) != 0 || ferror(f);
    free(o);
    return failed ? CS_ERR_IO : CS_OK;
}
