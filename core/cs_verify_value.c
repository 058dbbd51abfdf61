/*
 * cs_verify_value.c - symbolic execution of a schedule's values.
 *
 * Every chunk slot (one per chunk of every buffer of every rank) holds a
 * 64-bit value: origin chunk g in bits 0-31, set code in bits 32-63:
 *   set code 0        no data: g = 0 undefined (never written), g = 1
 *                     poisoned (produced by a step already reported;
 *                     reading it reports nothing more)
 *   bit 31 set        the set {rank} (rank in bits 0-30 of the code)
 *   other             1 + index of a record in the arena:
 *                     [n, lo_0, hi_0, ..., lo_n-1, hi_n-1]: the ranks of n
 *                     disjoint sorted half-open intervals
 * Records are immutable and shared by every chunk with the same set, so
 * send, recv and copy move values without copying, and rrecv or reduce over
 * a range of chunks usually computes one union for the whole range (a
 * one-entry memo of the last union).  Ring, tree and butterfly schedules
 * keep one or two intervals per set.
 *
 * A switch operation is one event: its members' sources are combined (or,
 * for a multicast, the writer's copied) chunk by chunk into every
 * destination; an operation whose members disagree (reported by the
 * structural check) poisons its destinations.
 *
 * The initial state follows the table of cs_sched.h; events run in the
 * graph's order (a matched pair as one event; stuck steps never run), fed
 * one by one by cs__graph_init_ev while the order is built.  At the
 * end every out chunk of every rank that has a result (all ranks, or the
 * root for reduce) is compared with the expected (chunk, ranks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_graph_int.h"
#include "cs_grow.h"
#include "cs_verify_int.h"

#define V_UNDEF 0ull
#define V_POISON 1ull
#define V_SINGLE 0x80000000u /* in the set code */

enum { F_UNINIT_SRC = 1, F_UNINIT_DST = 2, F_WRONG = 4, F_TWICE = 8 };

typedef struct {
    uint32_t g, n;
    const uint32_t *iv;
    uint32_t one[2];
} cs__view_t;

struct cs__val {
    cs__vctx_t *v;
    uint64_t *slot;   /* all chunk slots */
    uint64_t *boff;   /* slot offset of buffer b of rank r: boff[bstart[r] + b] */
    uint64_t *bstart; /* per rank */
    uint32_t *ar;     /* arena of set records */
    uint64_t na;
    size_t cap;
    int nomem;
    uint32_t k;                        /* chunks per block */
    uint32_t memo_a, memo_b, memo_res; /* last union: codes of a, b and a | b */
    uint32_t memo_ov[3];               /* its overlap: flag, first overlapping interval */
    /* the step being executed, for findings */
    int r;
    uint32_t i;
    unsigned flags;
};

static uint64_t v_single(uint32_t g, uint32_t r)
{
    return ((uint64_t)(V_SINGLE | r) << 32) | g;
}

static uint64_t *slots(cs__val_t *x, int r, uint16_t buf)
{
    return x->slot + x->boff[x->bstart[r] + buf];
}

static uint32_t v_set(uint64_t val)
{
    return (uint32_t)(val >> 32);
}

static uint32_t v_nint(const cs__val_t *x, uint64_t val)
{
    return (v_set(val) & V_SINGLE) ? 1 : x->ar[v_set(val) - 1];
}

/* The view of a defined, unpoisoned value (valid until the arena grows). */
static void v_view(const cs__val_t *x, uint64_t val, cs__view_t *w)
{
    uint32_t set = v_set(val);
    w->g = (uint32_t)val;
    if (set & V_SINGLE) {
        w->one[0] = set & ~V_SINGLE;
        w->one[1] = w->one[0] + 1;
        w->n = 1;
        w->iv = w->one;
    } else {
        const uint32_t *rec = x->ar + (set - 1);
        w->n = rec[0];
        w->iv = rec + 1;
    }
}

static int reserve(cs__val_t *x, uint64_t words)
{
    if (cs_grow(&x->ar, &x->cap, x->na + words, sizeof(*x->ar), 1u << 16) == CS_OK)
        return CS_OK;
    x->nomem = 1;
    return CS_ERR_NOMEM;
}

/* "rank 5", "ranks 1-3", "ranks 0, 4-6, 9" for up to n intervals (more: "..."). */
static const char *fmt_ranks(const uint32_t *iv, uint32_t n, int more, char *buf, size_t size)
{
    size_t len = 0;
    int plural = n > 1 || more || iv[1] - iv[0] > 1;
    len += (size_t)snprintf(buf, size, "rank%s ", plural ? "s" : "");
    for (uint32_t j = 0; j < n && len + 1 < size; j++) {
        const char *sep = j ? ", " : "";
        if (iv[2 * j + 1] - iv[2 * j] == 1)
            len += (size_t)snprintf(buf + len, size - len, "%s%u", sep, iv[2 * j]);
        else
            len += (size_t)snprintf(buf + len, size - len, "%s%u-%u", sep, iv[2 * j],
                                    iv[2 * j + 1] - 1);
    }
    if (more && len + 1 < size)
        snprintf(buf + len, size - len, ", ...");
    return buf;
}

static void set_union(cs__val_t *x, uint32_t ca, uint32_t cb, uint64_t dv, uint64_t sv);

/* dst (op) src for one chunk slot of the current step; reports once per step
 * and kind.  `what` names the destination chunk ("out[5]"). */
static uint64_t combine(cs__val_t *x, uint64_t dv, uint64_t sv, uint16_t buf, uint32_t c)
{
    const cs_sched_t *s = x->v->s;
    char sd[96], rg[64];
    if (dv == V_POISON || sv == V_POISON)
        return V_POISON;
    if (dv == V_UNDEF) {
        if (!(x->flags & F_UNINIT_DST)) {
            x->flags |= F_UNINIT_DST;
            cs__vfind(x->v, "uninit", x->r, x->i, (int64_t)s->ranks[x->r].bufs[buf].base + c,
                      "rank %d %s combines into %s, which holds no data yet", x->r,
                      cs__vstep(s, x->r, x->i, sd, sizeof(sd)),
                      cs__vrange(s, x->r, buf, c, 1, rg, sizeof(rg)));
        }
        return V_POISON;
    }
    if (sv == V_UNDEF)
        return V_POISON; /* reported where it was read */
    if ((uint32_t)dv != (uint32_t)sv) {
        if (!(x->flags & F_WRONG)) {
            x->flags |= F_WRONG;
            cs__vfind(x->v, "wrong-chunk", x->r, x->i,
                      (int64_t)s->ranks[x->r].bufs[buf].base + c,
                      "rank %d %s: %s holds chunk %u but the data combined into it is chunk %u",
                      x->r, cs__vstep(s, x->r, x->i, sd, sizeof(sd)),
                      cs__vrange(s, x->r, buf, c, 1, rg, sizeof(rg)), (uint32_t)dv,
                      (uint32_t)sv);
        }
        return V_POISON;
    }
    if (v_set(dv) != x->memo_a || v_set(sv) != x->memo_b)
        set_union(x, v_set(dv), v_set(sv), dv, sv);
    if (x->nomem)
        return V_POISON;
    if (x->memo_ov[0] && !(x->flags & F_TWICE)) {
        x->flags |= F_TWICE;
        char rs[96];
        cs__vfind(x->v, "twice", x->r, x->i, (int64_t)s->ranks[x->r].bufs[buf].base + c,
                  "rank %d %s: %s would hold the input of %s twice", x->r,
                  cs__vstep(s, x->r, x->i, sd, sizeof(sd)),
                  cs__vrange(s, x->r, buf, c, 1, rg, sizeof(rg)),
                  fmt_ranks(x->memo_ov + 1, 1, 0, rs, sizeof(rs)));
    }
    return ((uint64_t)x->memo_res << 32) | (uint32_t)dv;
}

/* The union of the sets of dv and sv (codes ca, cb) into a new record; the
 * result and any overlap go to the memo. */
static void set_union(cs__val_t *x, uint32_t ca, uint32_t cb, uint64_t dv, uint64_t sv)
{
    uint32_t nd = v_nint(x, dv), ns = v_nint(x, sv);
    if (reserve(x, 1 + 2 * (uint64_t)(nd + ns)) != CS_OK || x->na + 1 >= V_SINGLE) {
        x->nomem = 1;
        return;
    }
    cs__view_t a, b;
    v_view(x, dv, &a);
    v_view(x, sv, &b);
    uint64_t at = x->na;
    uint32_t *out = x->ar + at + 1, m = 0, ia = 0, ib = 0;
    uint32_t ov[2] = {0, 0};
    int overlap = 0;
    while (ia < a.n || ib < b.n) {
        const uint32_t *p;
        if (ib >= b.n || (ia < a.n && a.iv[2 * ia] <= b.iv[2 * ib]))
            p = a.iv + 2 * ia++;
        else
            p = b.iv + 2 * ib++;
        if (m > 0 && p[0] < out[2 * m - 1]) {
            if (!overlap) {
                overlap = 1;
                ov[0] = p[0];
                ov[1] = p[1] < out[2 * m - 1] ? p[1] : out[2 * m - 1];
            }
        }
        if (m > 0 && p[0] <= out[2 * m - 1]) {
            if (p[1] > out[2 * m - 1])
                out[2 * m - 1] = p[1];
        } else {
            out[2 * m] = p[0];
            out[2 * m + 1] = p[1];
            m++;
        }
    }
    x->ar[at] = m;
    x->na += 1 + 2 * (uint64_t)m;
    x->memo_a = ca;
    x->memo_b = cb;
    x->memo_res = (uint32_t)at + 1;
    x->memo_ov[0] = (uint32_t)overlap;
    x->memo_ov[1] = ov[0];
    x->memo_ov[2] = ov[1];
}

/* Read src slot c of the current step; reports an undefined read once. */
static uint64_t read_src(cs__val_t *x, const cs_range_t *src, uint32_t c)
{
    uint64_t val = slots(x, x->r, src->buf)[src->off + c];
    if (val == V_UNDEF) {
        if (!(x->flags & F_UNINIT_SRC)) {
            x->flags |= F_UNINIT_SRC;
            const cs_sched_t *s = x->v->s;
            char sd[96], rg[64];
            cs__vfind(x->v, "uninit", x->r, x->i,
                      (int64_t)s->ranks[x->r].bufs[src->buf].base + src->off + c,
                      "rank %d %s reads %s, which holds no data yet", x->r,
                      cs__vstep(s, x->r, x->i, sd, sizeof(sd)),
                      cs__vrange(s, x->r, src->buf, src->off + c, 1, rg, sizeof(rg)));
        }
        return V_POISON;
    }
    return val;
}

static void set_step(cs__val_t *x, int r, uint32_t i, unsigned flags)
{
    x->r = r;
    x->i = i;
    x->flags = flags;
}

static void run_pair(cs__val_t *x, int sr, uint32_t si, int rr, uint32_t ri)
{
    const cs_sched_t *s = x->v->s;
    const cs_step_t *ss = &s->ranks[sr].steps[si], *rs = &s->ranks[rr].steps[ri];
    uint64_t *dst = slots(x, rr, rs->dst.buf) + rs->dst.off;
    uint32_t k = x->k;
    uint32_t sgc = s->ranks[sr].bufs[ss->src.buf].base + ss->src.off;
    uint32_t dgc = s->ranks[rr].bufs[rs->dst.buf].base + rs->dst.off;
    if (ss->src.n != rs->dst.n || (sgc != dgc && sgc % k != dgc % k)) {
        /* reported by the matching check: the receiver's data is garbage */
        for (uint32_t c = 0; c < rs->dst.n; c++)
            dst[c] = V_POISON;
        return;
    }
    unsigned sfl = 0, rfl = 0; /* findings already made by each half */
    for (uint32_t c = 0; c < rs->dst.n; c++) {
        set_step(x, sr, si, sfl);
        uint64_t val = read_src(x, &ss->src, c);
        sfl = x->flags;
        if (rs->kind == CS_STEP_RECV) {
            dst[c] = val;
            continue;
        }
        set_step(x, rr, ri, rfl);
        dst[c] = combine(x, dst[c], val, rs->dst.buf, rs->dst.off + c);
        rfl = x->flags;
    }
}

static void run_local(cs__val_t *x, int r, uint32_t i)
{
    const cs_step_t *st = &x->v->s->ranks[r].steps[i];
    if (st->kind != CS_STEP_REDUCE && st->kind != CS_STEP_COPY)
        return;
    set_step(x, r, i, 0);
    uint64_t *dst = slots(x, r, st->dst.buf) + st->dst.off;
    for (uint32_t c = 0; c < st->dst.n; c++) {
        uint64_t val = read_src(x, &st->src, c);
        dst[c] = st->kind == CS_STEP_COPY ? val : combine(x, dst[c], val, st->dst.buf,
                                                           st->dst.off + c);
    }
}

/* The members of the switch operation led by (r, i) agree (op, length,
 * shape) and exactly one reads (reduce) or writes (multicast); else the
 * structural check (cs_verify_switch.c) reports it. */
static int switch_agrees(const cs__val_t *x, const cs_plan_t *p, uint64_t lead)
{
    const cs_sched_t *s = x->v->s;
    uint32_t k = x->k, len = 0, shape = 0, nsrc = 0, ndst = 0;
    int op = -1;
    for (uint64_t m = lead; m != CS_PLAN_NOGID; m = p->swnext[m]) {
        int r;
        uint32_t i;
        cs_plan_locate(p->base, p->nranks, m, &r, &i);
        const cs_step_t *st = &s->ranks[r].steps[i];
        const cs_range_t *rg = st->src.n ? &st->src : &st->dst;
        uint32_t sh = (s->ranks[r].bufs[rg->buf].base + rg->off) % k;
        if (op < 0)
            op = st->op, len = rg->n, shape = sh;
        if (st->op != op || rg->n != len || sh != shape)
            return 0;
        nsrc += st->src.n > 0;
        ndst += st->dst.n > 0;
    }
    return op == CS_SW_ALLREDUCE || (op == CS_SW_REDUCE && ndst == 1) ||
           (op == CS_SW_MULTICAST && nsrc == 1);
}

/* A switch operation led by (r, i): combine (or copy) chunk by chunk. */
static void run_switch(cs__val_t *x, const cs_plan_t *p, int r, uint32_t i)
{
    const cs_sched_t *s = x->v->s;
    uint64_t lead = p->base[r] + i;
    int ok = switch_agrees(x, p, lead);
    uint32_t len = s->ranks[r].steps[i].src.n ? s->ranks[r].steps[i].src.n
                                                : s->ranks[r].steps[i].dst.n;
    unsigned fl = 0; /* one finding of each kind per operation */
    for (uint32_t c = 0; c < len; c++) {
        uint64_t acc = V_UNDEF;
        for (uint64_t m = lead; ok && m != CS_PLAN_NOGID; m = p->swnext[m]) {
            int mr;
            uint32_t mi;
            cs_plan_locate(p->base, p->nranks, m, &mr, &mi);
            const cs_step_t *st = &s->ranks[mr].steps[mi];
            if (st->src.n == 0)
                continue;
            set_step(x, mr, mi, fl);
            uint64_t val = read_src(x, &st->src, c);
            acc = acc == V_UNDEF ? val : combine(x, acc, val, st->src.buf, st->src.off + c);
            fl = x->flags;
        }
        for (uint64_t m = lead; m != CS_PLAN_NOGID; m = p->swnext[m]) {
            int mr;
            uint32_t mi;
            cs_plan_locate(p->base, p->nranks, m, &mr, &mi);
            const cs_step_t *st = &s->ranks[mr].steps[mi];
            if (st->dst.n > c)
                slots(x, mr, st->dst.buf)[st->dst.off + c] = ok ? acc : V_POISON;
        }
    }
}

/* Expected content of out chunk g of rank r: origin chunk and rank interval. */
static void expected(const cs_sched_t *s, int r, uint32_t g, uint32_t *eg, uint32_t iv[2])
{
    uint32_t k = cs_sched_block_chunks(s), P = (uint32_t)s->desc.nranks;
    *eg = g;
    iv[0] = 0;
    iv[1] = P;
    switch (s->desc.coll) {
    case CS_COLL_ALLGATHER:
        iv[0] = g / k;
        iv[1] = iv[0] + 1;
        break;
    case CS_COLL_BROADCAST:
        iv[0] = (uint32_t)s->desc.root;
        iv[1] = iv[0] + 1;
        break;
    case CS_COLL_ALLTOALL:
        *eg = (uint32_t)r * k + g % k;
        iv[0] = g / k;
        iv[1] = iv[0] + 1;
        break;
    default:
        break;
    }
}

#define CS__MAXIV 8

/* a \ [lo, hi) into out (at most CS__MAXIV intervals; *more when cut) */
static uint32_t diff_outside(const cs__view_t *a, uint32_t lo, uint32_t hi, uint32_t *out,
                             int *more)
{
    uint32_t m = 0;
    *more = 0;
    for (uint32_t j = 0; j < a->n; j++) {
        uint32_t parts[4] = {a->iv[2 * j], a->iv[2 * j + 1] < lo ? a->iv[2 * j + 1] : lo,
                             a->iv[2 * j] > hi ? a->iv[2 * j] : hi, a->iv[2 * j + 1]};
        for (int p = 0; p < 4; p += 2)
            if (parts[p] < parts[p + 1]) {
                if (m == CS__MAXIV) {
                    *more = 1;
                    return m;
                }
                out[2 * m] = parts[p];
                out[2 * m + 1] = parts[p + 1];
                m++;
            }
    }
    return m;
}

/* [lo, hi) \ a */
static uint32_t diff_inside(const cs__view_t *a, uint32_t lo, uint32_t hi, uint32_t *out, int *more)
{
    uint32_t m = 0, cur = lo;
    *more = 0;
    for (uint32_t j = 0; j <= a->n && cur < hi; j++) {
        uint32_t nlo = j < a->n ? a->iv[2 * j] : hi, nhi = j < a->n ? a->iv[2 * j + 1] : hi;
        if (nlo > hi)
            nlo = hi;
        if (nlo > cur) {
            if (m == CS__MAXIV) {
                *more = 1;
                return m;
            }
            out[2 * m] = cur;
            out[2 * m + 1] = nlo;
            m++;
        }
        if (nhi > cur)
            cur = nhi;
    }
    return m;
}

/* Same end-state problem for out chunks j and j + 1 (one finding for a
 * run): both undefined, or both defined with the same offset from the
 * expected origin and the same set. */
static int same_problem(cs__val_t *x, const cs_sched_t *s, int r, const uint64_t *sl, uint32_t j)
{
    uint64_t a = sl[j], b = sl[j + 1];
    if (a == V_UNDEF || b == V_UNDEF || a == V_POISON || b == V_POISON)
        return a == b;
    const cs_buffer_t *ob = &s->ranks[r].bufs[CS_BUF_OUT];
    uint32_t ea, eb, iva[2], ivb[2];
    expected(s, r, ob->base + j, &ea, iva);
    expected(s, r, ob->base + j + 1, &eb, ivb);
    cs__view_t wa, wb;
    v_view(x, a, &wa);
    v_view(x, b, &wb);
    if (wa.g - ea != wb.g - eb || iva[0] != ivb[0] || iva[1] != ivb[1] || wa.n != wb.n)
        return 0;
    return memcmp(wa.iv, wb.iv, 2 * wa.n * sizeof(*wa.iv)) == 0;
}

static void check_end(cs__val_t *x)
{
    const cs_sched_t *s = x->v->s;
    char rg[64], rs[160];
    uint32_t miss[2 * CS__MAXIV];
    for (int r = 0; r < s->desc.nranks; r++) {
        if (s->desc.coll == CS_COLL_REDUCE && r != s->desc.root)
            continue;
        const cs_buffer_t *ob = &s->ranks[r].bufs[CS_BUF_OUT];
        const uint64_t *sl = slots(x, r, CS_BUF_OUT);
        for (uint32_t j = 0; j < ob->nchunks; j++) {
            uint32_t g = ob->base + j, eg, iv[2];
            expected(s, r, g, &eg, iv);
            if (sl[j] == V_POISON)
                continue;
            cs__view_t w;
            if (sl[j] != V_UNDEF) {
                v_view(x, sl[j], &w);
                if (w.g == eg && w.n == 1 && w.iv[0] == iv[0] && w.iv[1] == iv[1])
                    continue; /* correct */
            }
            uint32_t e = j + 1; /* the run of chunks with the same problem */
            while (e < ob->nchunks && same_problem(x, s, r, sl, e - 1))
                e++;
            cs__vrange(s, r, CS_BUF_OUT, j, e - j, rg, sizeof(rg));
            if (sl[j] == V_UNDEF) {
                cs__vfind(x->v, "missing", r, -1, g,
                          "rank %d %s: never written (the result is missing)", r, rg);
            } else if (w.g != eg) {
                if (e - j == 1)
                    cs__vfind(x->v, "wrong-chunk", r, -1, g,
                              "rank %d %s holds chunk %u instead of chunk %u", r, rg, w.g, eg);
                else
                    cs__vfind(x->v, "wrong-chunk", r, -1, g,
                              "rank %d %s holds chunks %u-%u instead of chunks %u-%u", r, rg,
                              w.g, w.g + (e - j) - 1, eg, eg + (e - j) - 1);
            } else {
                int more;
                uint32_t m = diff_inside(&w, iv[0], iv[1], miss, &more);
                if (m > 0)
                    cs__vfind(x->v, "missing", r, -1, g, "rank %d %s: missing the input of %s",
                              r, rg, fmt_ranks(miss, m, more, rs, sizeof(rs)));
                m = diff_outside(&w, iv[0], iv[1], miss, &more);
                if (m > 0)
                    cs__vfind(x->v, "extra", r, -1, g,
                              "rank %d %s: holds the input of %s, which does not belong there",
                              r, rg, fmt_ranks(miss, m, more, rs, sizeof(rs)));
            }
            j = e - 1;
        }
    }
}

/* Initial state (table of cs_sched.h); slots start undefined (zeroed). */
static void init_state(cs__val_t *x)
{
    const cs_sched_t *s = x->v->s;
    int inplace = s->desc.inplace, root = s->desc.root;
    cs_coll_t coll = s->desc.coll;
    uint32_t k = cs_sched_block_chunks(s);
    for (int r = 0; r < s->desc.nranks; r++) {
        const cs_rank_sched_t *rk = &s->ranks[r];
        const cs_buffer_t *ib = &rk->bufs[CS_BUF_IN], *ob = &rk->bufs[CS_BUF_OUT];
        uint64_t *in = slots(x, r, CS_BUF_IN), *out = slots(x, r, CS_BUF_OUT);
        int has_input = coll != CS_COLL_BROADCAST || r == root;
        for (uint32_t j = 0; j < ib->nchunks; j++)
            in[j] = inplace ? V_POISON : has_input ? v_single(ib->base + j, (uint32_t)r) : V_UNDEF;
        if (!inplace || !has_input)
            continue;
        for (uint32_t j = 0; j < ob->nchunks; j++) {
            uint32_t g = ob->base + j;
            if (coll == CS_COLL_ALLGATHER && g / k != (uint32_t)r)
                continue;
            out[j] = v_single(g, (uint32_t)r);
        }
    }
}

void cs__values_destroy(cs__val_t *x)
{
    if (x == NULL)
        return;
    free(x->ar);
    free(x->slot);
    free(x->boff);
    free(x->bstart);
    free(x);
}

int cs__values_create(cs__vctx_t *v, cs__val_t **out)
{
    const cs_sched_t *s = v->s;
    int P = s->desc.nranks;
    cs__val_t *x = calloc(1, sizeof(*x));
    uint64_t nb = 0, ns = 0;
    if (x == NULL)
        return CS_ERR_NOMEM;
    x->v = v;
    x->k = cs_sched_block_chunks(s);
    for (int r = 0; r < P; r++)
        nb += s->ranks[r].nbufs;
    x->bstart = malloc((size_t)P * sizeof(*x->bstart));
    x->boff = malloc((nb ? nb : 1) * sizeof(*x->boff));
    if (!x->bstart || !x->boff)
        goto nomem;
    nb = 0;
    for (int r = 0; r < P; r++) {
        x->bstart[r] = nb;
        for (uint16_t b = 0; b < s->ranks[r].nbufs; b++) {
            x->boff[nb++] = ns;
            ns += s->ranks[r].bufs[b].nchunks;
        }
    }
    x->slot = calloc(ns ? ns : 1, sizeof(*x->slot));
    if (x->slot == NULL || reserve(x, 1u << 16) != CS_OK)
        goto nomem;
    init_state(x);
    *out = x;
    return CS_OK;
nomem:
    cs__values_destroy(x);
    return CS_ERR_NOMEM;
}

void cs__values_event(void *ctx, const cs_plan_t *p, int r, uint32_t i, int pr, uint32_t pi)
{
    cs__val_t *x = ctx;
    if (x->nomem)
        return;
    if (x->v->s->ranks[r].steps[i].kind == CS_STEP_SWITCH)
        run_switch(x, p, r, i);
    else if (pr >= 0)
        run_pair(x, r, i, pr, pi);
    else
        run_local(x, r, i);
}

int cs__values_finish(cs__val_t *x)
{
    if (x->nomem)
        return CS_ERR_NOMEM;
    check_end(x);
    return CS_OK;
}
