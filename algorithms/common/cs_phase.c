/*
 * cs_phase.c - phase emitters (see cs_phase.h for the contracts).
 *
 * Each emitter walks the members of its group one at a time and appends all
 * of that member's steps, so a rank's steps of one channel are appended in
 * the order its peers expect them.  Per member it keeps the last send and
 * the last receive (the chains) and a terminal list that becomes the new
 * front.  Data location rule for reduce-scatter: a range is read from `src`
 * until the member first reduces into it; that first reduce is preceded by
 * a copy src -> target when they differ, so `in` is never written.
 */
#include "cs_phase.h"

#include <stdlib.h>
#include <string.h>

#include "cs_peers.h"
#include "cs_swphase.h"
#include "cs_thread.h"

/* ---- small helpers ---------------------------------------------------- */

int cs__phase_init(cs__phase_t *ph, cs_sched_t *s)
{
    memset(ph, 0, sizeof(*ph));
    ph->s = s;
    ph->front = malloc((size_t)s->desc.nranks * sizeof(*ph->front));
    if (ph->front == NULL)
        return cs_err_set(&s->err, CS_ERR_NOMEM, "out of memory (phase fronts)");
    for (int r = 0; r < s->desc.nranks; r++)
        ph->front[r] = -1;
    ph->r1 = s->desc.nranks;
    return CS_OK;
}

void cs__phase_fini(cs__phase_t *ph)
{
    free(ph->front);
    ph->front = NULL;
    cs_deps_fini(&ph->term);
}

/* ---- several threads --------------------------------------------------- */

#define GEN_STEPS_PER_THREAD (1u << 18)

typedef struct split_part {
    cs_sched_t *s; /* the caller's schedule for part 0, a fresh one for the others */
    int r0, r1;
    int (*emit)(cs__phase_t *ph, void *arg);
    void *arg;
    int st;
} split_part_t;

static void *split_run(void *a)
{
    split_part_t *w = a;
    cs__phase_t ph;
    w->st = cs__phase_init(&ph, w->s);
    if (w->st == CS_OK) {
        ph.r0 = w->r0;
        ph.r1 = w->r1;
        w->st = w->emit(&ph, w->arg);
    }
    cs__phase_fini(&ph);
    if (w->st == CS_OK)
        w->st = cs_sched_status(w->s);
    return NULL;
}

int cs__phase_split(cs_sched_t *s, uint64_t steps, int (*emit)(cs__phase_t *ph, void *arg),
                    void *arg)
{
    int P = s->desc.nranks;
    int nt = cs_thread_count("CS_GEN_THREADS", "gen", steps, GEN_STEPS_PER_THREAD);
    if (nt > P)
        nt = P > 0 ? P : 1;
    split_part_t w[CS_THREAD_MAX];
    int st = CS_OK;
    for (int t = 0; t < nt; t++) {
        w[t] = (split_part_t){t == 0 ? s : NULL, (int)((int64_t)P * t / nt),
                              (int)((int64_t)P * (t + 1) / nt), emit, arg, CS_OK};
        if (t > 0) {
            cs_err_t e = {0};
            w[t].s = cs_sched_create(&s->desc, s->nchunks, &e);
            if (w[t].s == NULL) {
                st = cs_err_set(&s->err, e.code != CS_OK ? e.code : CS_ERR_NOMEM, "%s", e.msg);
                nt = t;
                break;
            }
        }
    }
    if (st == CS_OK)
        cs_thread_run(split_run, w, sizeof(w[0]), nt);
    for (int t = 0; t < nt; t++) {
        if (st == CS_OK && w[t].st != CS_OK) {
            st = w[t].st;
            if (t > 0)
                cs_err_set(&s->err, st, "%s", w[t].s->err.msg);
        }
        if (t == 0)
            continue;
        if (st == CS_OK) /* the part's ranks into s, s's empty ones out */
            s->nswitch += w[t].s->nswitch;
        if (st == CS_OK)
            for (int r = w[t].r0; r < w[t].r1; r++) {
                cs_rank_sched_t tmp = s->ranks[r];
                s->ranks[r] = w[t].s->ranks[r];
                w[t].s->ranks[r] = tmp;
            }
        cs_sched_destroy(w[t].s);
    }
    return st;
}

cs_range_t cs__grng(const cs_sched_t *s, int rank, int buf, uint32_t gpos, uint32_t n)
{
    return cs_rng(buf, gpos - s->ranks[rank].bufs[buf].base, n);
}

static const char *const ph_names[CS__PH_COUNT] = {"ring", "rhd", "direct", "nvls", "sharp"};

const char *cs__ph_alg_name(cs__ph_alg_t a)
{
    return (a >= 0 && a < CS__PH_COUNT) ? ph_names[a] : "unknown";
}

cs__ph_alg_t cs__ph_alg_parse(const char *s, int len)
{
    for (int a = 0; a < CS__PH_COUNT; a++)
        if ((int)strlen(ph_names[a]) == len && strncmp(s, ph_names[a], (size_t)len) == 0)
            return (cs__ph_alg_t)a;
    return CS__PH_COUNT;
}

/* Step wrappers: global chunk positions, a cs__dl_t of dependencies. */
static int64_t p_send(cs__phase_t *ph, int r, int peer, int chan, int buf, uint32_t g,
                      uint32_t n, cs__dl_t d)
{
    return cs_send(ph->s, r, peer, chan, cs__grng(ph->s, r, buf, g, n), d.v, d.n);
}

static int64_t p_recv(cs__phase_t *ph, int r, int peer, int chan, int reduce, int buf,
                      uint32_t g, uint32_t n, cs__dl_t d)
{
    cs_range_t dst = cs__grng(ph->s, r, buf, g, n);
    return reduce ? cs_rrecv(ph->s, r, peer, chan, dst, d.v, d.n)
                  : cs_recv(ph->s, r, peer, chan, dst, d.v, d.n);
}

static int64_t p_copy(cs__phase_t *ph, int r, int from, int to, uint32_t g, uint32_t n,
                      cs__dl_t d)
{
    if (from == to || n == 0)
        return -1;
    return cs_copy(ph->s, r, cs__grng(ph->s, r, from, g, n), cs__grng(ph->s, r, to, g, n), d.v,
                   d.n);
}

/* Close a member: its front becomes its single terminal step or a nop. */
static void member_end(cs__phase_t *ph, int r)
{
    if (ph->term.n == 1)
        ph->front[r] = ph->term.v[0];
    else if (ph->term.n > 1)
        ph->front[r] = cs_nop(ph->s, r, ph->term.v, ph->term.n);
    cs_deps_clear(&ph->term);
}

void cs__phase_end(cs__phase_t *ph, int r)
{
    member_end(ph, r);
}

#define SEG_LO(g, j) ((g)->lo ? (g)->lo[(j)] : (g)->cut[(j)])
#define SEG_N(g, j) ((g)->cut[(j) + 1] - (g)->cut[(j)])

/* A group of one: the own segment only has to reach dst. */
static int single(cs__phase_t *ph, const cs__grp_t *g, int src, int dst)
{
    int r = g->ranks[0];
    if (!cs__phase_mine(ph, r))
        return cs_sched_status(ph->s);
    cs_deps_push(&ph->term, p_copy(ph, r, src, dst, SEG_LO(g, 0), SEG_N(g, 0),
                                   cs__dl(ph->front[r], -1, -1)));
    member_end(ph, r);
    return cs_sched_status(ph->s);
}


/* ---- ring ------------------------------------------------------------- */

/* Copies src -> target that precede the first reduce into a segment, for
 * the ring reduce-scatter.  One copy per segment would cost P-1 steps per
 * rank; one copy of everything would stall the first step behind it.  So
 * the copies for steps [2^k - 1, 2^(k+1) - 1) are issued together at step
 * 2^k - 1 (about 2 log2 P copies): each has as many ring steps to complete
 * as it holds segments.  Consecutive steps reduce adjacent segments, so a
 * group is one run of chunks, split at most at the wrap and where the
 * target changes (the own segment goes to dst).  Segments placed anywhere
 * (g->lo, the channels of a reduce-scatter) are not adjacent: each gets its
 * own copy right before its first reduce instead. */
typedef struct copy_run {
    uint32_t lo, hi; /* chunk range */
    int buf;         /* target buffer */
    int64_t step;
} copy_run_t;

static int ring_copies(cs__phase_t *ph, const cs__grp_t *g, cs__bufs_t b, int m, int i,
                       copy_run_t run[4])
{
    int n = g->n, r = g->ranks[m], nrun = 0;
    int end = 2 * i < n - 2 ? 2 * i : n - 2;
    for (int j = i; j <= end; j++) {
        int seg = cs__ring_add(m, -j - 2, n);
        int tb = seg == m ? b.dst : b.work;
        if (tb == b.src || SEG_N(g, seg) == 0)
            continue;
        uint32_t lo = SEG_LO(g, seg), hi = lo + SEG_N(g, seg);
        if (nrun > 0 && run[nrun - 1].lo == hi && run[nrun - 1].buf == tb)
            run[nrun - 1].lo = lo;
        else if (nrun < 4)
            run[nrun++] = (copy_run_t){lo, hi, tb, -1};
    }
    for (int k = 0; k < nrun; k++)
        run[k].step = p_copy(ph, r, b.src, run[k].buf, run[k].lo, run[k].hi - run[k].lo,
                             cs__dl(ph->front[r], -1, -1));
    return nrun;
}

/* One ring phase; `rs` selects reduce-scatter (else all-gather). */
static int ring(cs__phase_t *ph, const cs__grp_t *g, cs__bufs_t b, int chan, uint32_t pieces,
                int rs)
{
    int n = g->n;
    if (n == 1)
        return single(ph, g, b.src, b.dst);
    if (pieces < 1)
        pieces = 1;
    int64_t *mem = malloc(2 * (size_t)pieces * sizeof(*mem));
    if (mem == NULL)
        return cs_err_set(&ph->s->err, CS_ERR_NOMEM, "out of memory (ring pieces)");
    int64_t *prev = mem, *cur = mem + pieces; /* receives of the step before / this step */
    for (int m = 0; m < n; m++) {
        int r = g->ranks[m], next = g->ranks[cs__ring_next(m, n)];
        if (!cs__phase_mine(ph, r))
            continue;
        int prv = g->ranks[cs__ring_prev(m, n)];
        int64_t f = ph->front[r], last_send = -1, last_recv = -1;
        copy_run_t run[4];
        int nrun = 0;
        if (!rs) /* own segment into the result */
            cs_deps_push(&ph->term,
                         p_copy(ph, r, b.src, b.dst, SEG_LO(g, m), SEG_N(g, m), cs__dl(f, -1, -1)));
        for (int i = 0; i < n - 1; i++) {
            int sseg = cs__ring_add(m, rs ? -i - 1 : -i, n);
            int rseg = cs__ring_add(m, rs ? -i - 2 : -i - 1, n);
            /* send: step 0 reads the start data, later steps what arrived */
            uint32_t a = SEG_LO(g, sseg), len = SEG_N(g, sseg);
            uint32_t np = len < pieces ? len : pieces;
            int sbuf = i == 0 ? b.src : (rs ? b.work : b.dst);
            for (uint32_t q = 0; q < np; q++) {
                uint32_t lo = cs__split(a, a + len, np, q), hi = cs__split(a, a + len, np, q + 1);
                last_send = p_send(ph, r, next, chan, sbuf, lo, hi - lo,
                                   cs__dl(last_send, i == 0 ? f : prev[q], f));
            }
            /* receive (reduce) the next segment */
            a = SEG_LO(g, rseg);
            len = SEG_N(g, rseg);
            np = len < pieces ? len : pieces;
            int tbuf = !rs ? b.dst : (rseg == m ? b.dst : b.work);
            if (rs && g->lo == NULL && ((i + 1) & i) == 0) /* i = 2^k - 1: copies for i .. 2i */
                nrun = ring_copies(ph, g, b, m, i, run);
            int64_t cp = -1;
            if (rs && g->lo != NULL)
                cp = p_copy(ph, r, b.src, tbuf, a, len, cs__dl(f, -1, -1));
            for (int k = 0; k < nrun; k++)
                if (run[k].buf == tbuf && run[k].lo <= a && a + len <= run[k].hi)
                    cp = run[k].step;
            for (uint32_t q = 0; q < np; q++) {
                uint32_t lo = cs__split(a, a + len, np, q), hi = cs__split(a, a + len, np, q + 1);
                cur[q] = last_recv = p_recv(ph, r, prv, chan, rs, tbuf, lo, hi - lo,
                                            cs__dl(last_recv, cp, f));
            }
            int64_t *t = prev;
            prev = cur;
            cur = t;
        }
        cs_deps_push(&ph->term, last_send);
        cs_deps_push(&ph->term, last_recv);
        member_end(ph, r);
    }
    free(mem);
    return cs_sched_status(ph->s);
}

int cs__phase_rs_ring(cs__phase_t *ph, const cs__grp_t *g, cs__bufs_t b, int chan,
                      uint32_t pieces)
{
    return ring(ph, g, b, chan, pieces, 1);
}

int cs__phase_ag_ring(cs__phase_t *ph, const cs__grp_t *g, cs__bufs_t b, int chan,
                      uint32_t pieces)
{
    return ring(ph, g, b, chan, pieces, 0);
}

/* ---- recursive halving / doubling -------------------------------------- */

/* Chunk range of the virtual members [v0, v0 + cnt). */
static void vrange(const cs__grp_t *g, const cs__fold_t *f, int v0, int cnt, uint32_t *lo,
                   uint32_t *n)
{
    *lo = g->cut[cs__fold_first(f, v0)];
    *n = g->cut[cs__fold_end(f, v0 + cnt - 1)] - *lo;
}

/* The window less member x's segment: one or two ranges (returns count). */
static int window_less(const cs__grp_t *g, int x, uint32_t lo[2], uint32_t n[2])
{
    int k = 0;
    if (SEG_N(g, x) == 0) {
        lo[0] = g->cut[0];
        n[0] = g->cut[g->n] - g->cut[0];
        return n[0] > 0;
    }
    if (g->cut[x] > g->cut[0]) {
        lo[k] = g->cut[0];
        n[k++] = g->cut[x] - g->cut[0];
    }
    if (g->cut[g->n] > g->cut[x + 1]) {
        lo[k] = g->cut[x + 1];
        n[k++] = g->cut[g->n] - g->cut[x + 1];
    }
    return k;
}

int cs__phase_rs_halving(cs__phase_t *ph, const cs__grp_t *g, cs__bufs_t b, int chan)
{
    int n = g->n;
    if (n == 1)
        return single(ph, g, b.src, b.dst);
    cs__fold_t f = cs__fold_make(n);
    uint32_t wlo = g->cut[0], wn = g->cut[n] - g->cut[0];
    for (int m = 0; m < n; m++) {
        int r = g->ranks[m], v = cs__fold_virt(&f, m);
        if (!cs__phase_mine(ph, r))
            continue;
        int64_t fr = ph->front[r], last_recv = -1;
        if (cs__fold_is_extra(&f, m)) {
            /* fold in: give the whole window to 2i, get the own segment back */
            int64_t s = p_send(ph, r, g->ranks[m - 1], chan, b.src, wlo, wn, cs__dl(fr, -1, -1));
            cs_deps_push(&ph->term, s);
            if (SEG_N(g, m) > 0)
                cs_deps_push(&ph->term, p_recv(ph, r, g->ranks[m - 1], chan, 0, b.dst,
                                               SEG_LO(g, m), SEG_N(g, m), cs__dl(fr, s, -1)));
            member_end(ph, r);
            continue;
        }
        int loc = b.src; /* where the data of not-yet-reduced ranges is */
        if (m < 2 * f.rem) {
            int64_t cp = p_copy(ph, r, b.src, b.work, wlo, wn, cs__dl(fr, -1, -1));
            last_recv = p_recv(ph, r, g->ranks[m + 1], chan, 1, b.work, wlo, wn,
                               cs__dl(fr, cp, -1));
            loc = b.work;
        }
        for (int d = f.n2 / 2; d >= 1; d /= 2) {
            int u = v ^ d, a = v & ~(2 * d - 1);
            int kv = (v & d) ? a + d : a, sv = (v & d) ? a : a + d;
            uint32_t klo, kn, slo, sn;
            vrange(g, &f, kv, d, &klo, &kn);
            vrange(g, &f, sv, d, &slo, &sn);
            int peer = g->ranks[cs__fold_first(&f, u)];
            if (sn > 0)
                cs_deps_push(&ph->term, p_send(ph, r, peer, chan, loc, slo, sn,
                                               cs__dl(last_recv, fr, -1)));
            if (kn > 0) {
                int64_t cp = loc != b.work ? p_copy(ph, r, loc, b.work, klo, kn, cs__dl(fr, -1, -1))
                                           : -1;
                last_recv = p_recv(ph, r, peer, chan, 1, b.work, klo, kn,
                                   cs__dl(last_recv, cp, fr));
            }
            loc = b.work;
        }
        /* hand segment 2i+1 back, move the own segment to dst */
        if (m < 2 * f.rem && SEG_N(g, m + 1) > 0)
            cs_deps_push(&ph->term, p_send(ph, r, g->ranks[m + 1], chan, loc, SEG_LO(g, m + 1),
                                           SEG_N(g, m + 1), cs__dl(last_recv, fr, -1)));
        cs_deps_push(&ph->term, p_copy(ph, r, loc, b.dst, SEG_LO(g, m), SEG_N(g, m),
                                       cs__dl(last_recv, fr, -1)));
        cs_deps_push(&ph->term, last_recv);
        member_end(ph, r);
    }
    return cs_sched_status(ph->s);
}

int cs__phase_ag_doubling(cs__phase_t *ph, const cs__grp_t *g, cs__bufs_t b, int chan)
{
    int n = g->n;
    if (n == 1)
        return single(ph, g, b.src, b.dst);
    cs__fold_t f = cs__fold_make(n);
    uint32_t lo[2], len[2];
    for (int m = 0; m < n; m++) {
        int r = g->ranks[m], v = cs__fold_virt(&f, m);
        if (!cs__phase_mine(ph, r))
            continue;
        int64_t fr = ph->front[r], last_recv = -1;
        uint32_t olo = SEG_LO(g, m), on = SEG_N(g, m);
        int64_t own = p_copy(ph, r, b.src, b.dst, olo, on, cs__dl(fr, -1, -1));
        cs_deps_push(&ph->term, own);
        if (cs__fold_is_extra(&f, m)) {
            int peer = g->ranks[m - 1];
            if (on > 0)
                cs_deps_push(&ph->term,
                             p_send(ph, r, peer, chan, b.src, olo, on, cs__dl(fr, -1, -1)));
            int k = window_less(g, m, lo, len);
            for (int i = 0; i < k; i++)
                last_recv = p_recv(ph, r, peer, chan, 0, b.dst, lo[i], len[i],
                                   cs__dl(last_recv, fr, -1));
            cs_deps_push(&ph->term, last_recv);
            member_end(ph, r);
            continue;
        }
        if (m < 2 * f.rem && SEG_N(g, m + 1) > 0)
            last_recv = p_recv(ph, r, g->ranks[m + 1], chan, 0, b.dst, SEG_LO(g, m + 1),
                               SEG_N(g, m + 1), cs__dl(fr, -1, -1));
        for (int d = 1; d < f.n2; d *= 2) {
            int u = v ^ d, peer = g->ranks[cs__fold_first(&f, u)];
            uint32_t slo, sn, rlo, rn;
            vrange(g, &f, v & ~(d - 1), d, &slo, &sn);
            vrange(g, &f, u & ~(d - 1), d, &rlo, &rn);
            if (sn > 0) {
                int from_src = slo == olo && sn == on;
                cs__dl_t dl = from_src ? cs__dl(fr, -1, -1) : cs__dl(own, last_recv, fr);
                cs_deps_push(&ph->term, p_send(ph, r, peer, chan, from_src ? b.src : b.dst, slo,
                                               sn, dl));
            }
            if (rn > 0)
                last_recv = p_recv(ph, r, peer, chan, 0, b.dst, rlo, rn,
                                   cs__dl(last_recv, fr, -1));
        }
        if (m < 2 * f.rem) {
            int k = window_less(g, m + 1, lo, len);
            for (int i = 0; i < k; i++)
                cs_deps_push(&ph->term, p_send(ph, r, g->ranks[m + 1], chan, b.dst, lo[i], len[i],
                                               cs__dl(own, last_recv, fr)));
        }
        cs_deps_push(&ph->term, last_recv);
        member_end(ph, r);
    }
    return cs_sched_status(ph->s);
}

/* ---- direct ----------------------------------------------------------- */

/* Both direct phases, one member at a time.  Reduce-scatter: member m
 * sends segment j to member j (j = m+1, m+2, ..), then copies its own
 * segment src -> dst and reduces the n-1 contributions into it in turn.
 * All-gather: m copies its own segment src -> dst, then for d = 1 .. n-1
 * sends it to m+d and receives segment m-d from m-d. */
static int direct(cs__phase_t *ph, const cs__grp_t *g, cs__bufs_t b, int chan, int rs)
{
    int n = g->n;
    if (n == 1)
        return single(ph, g, b.src, b.dst);
    for (int m = 0; m < n; m++) {
        int r = g->ranks[m];
        if (!cs__phase_mine(ph, r))
            continue;
        int64_t fr = ph->front[r], last_recv = -1;
        if (!rs)
            cs_deps_push(&ph->term, p_copy(ph, r, b.src, b.dst, SEG_LO(g, m), SEG_N(g, m),
                                           cs__dl(fr, -1, -1)));
        for (int d = 1; d < n; d++) {
            int j = cs__ring_add(m, d, n), i = cs__ring_add(m, -d, n), sseg = rs ? j : m;
            if (SEG_N(g, sseg) > 0)
                cs_deps_push(&ph->term, p_send(ph, r, g->ranks[j], chan, b.src, SEG_LO(g, sseg),
                                               SEG_N(g, sseg), cs__dl(fr, -1, -1)));
            if (!rs && SEG_N(g, i) > 0)
                cs_deps_push(&ph->term, p_recv(ph, r, g->ranks[i], chan, 0, b.dst, SEG_LO(g, i),
                                               SEG_N(g, i), cs__dl(fr, -1, -1)));
        }
        if (rs && SEG_N(g, m) > 0) {
            last_recv = p_copy(ph, r, b.src, b.dst, SEG_LO(g, m), SEG_N(g, m), cs__dl(fr, -1, -1));
            for (int d = 1; d < n; d++)
                last_recv = p_recv(ph, r, g->ranks[cs__ring_add(m, -d, n)], chan, 1, b.dst,
                                   SEG_LO(g, m), SEG_N(g, m), cs__dl(last_recv, fr, -1));
        }
        if (rs)
            cs_deps_push(&ph->term, last_recv);
        member_end(ph, r);
    }
    return cs_sched_status(ph->s);
}

int cs__phase_rs_direct(cs__phase_t *ph, const cs__grp_t *g, cs__bufs_t b, int chan)
{
    return direct(ph, g, b, chan, 1);
}

int cs__phase_ag_direct(cs__phase_t *ph, const cs__grp_t *g, cs__bufs_t b, int chan)
{
    return direct(ph, g, b, chan, 0);
}

/* ---- dispatch --------------------------------------------------------- */

static int dispatch(cs__phase_t *ph, cs__ph_alg_t a, const cs__grp_t *g, cs__bufs_t b, int chan,
                    uint32_t pieces, int rs)
{
    switch (a) {
    case CS__PH_RING:
        return ring(ph, g, b, chan, pieces, rs);
    case CS__PH_RHD:
        if (g->lo != NULL)
            return cs_err_set(&ph->s->err, CS_ERR_INTERNAL,
                              "recursive halving / doubling needs adjacent segments");
        return rs ? cs__phase_rs_halving(ph, g, b, chan) : cs__phase_ag_doubling(ph, g, b, chan);
    case CS__PH_DIRECT:
        return direct(ph, g, b, chan, rs);
    case CS__PH_NVLS:
        return rs ? cs__phase_rs_nvls(ph, g, b, chan, pieces)
                  : cs__phase_ag_nvls(ph, g, b, chan, pieces);
    case CS__PH_SHARP:
        return cs_err_set(&ph->s->err, CS_ERR_UNSUPPORTED,
                          "sharp is an in-switch allreduce: it is no %s phase",
                          rs ? "reduce-scatter" : "all-gather");
    default:
        return cs_err_set(&ph->s->err, CS_ERR_INTERNAL, "unknown phase algorithm %d", (int)a);
    }
}

int cs__phase_rs(cs__phase_t *ph, cs__ph_alg_t a, const cs__grp_t *g, cs__bufs_t b, int chan,
                 uint32_t pieces)
{
    return dispatch(ph, a, g, b, chan, pieces, 1);
}

int cs__phase_ag(cs__phase_t *ph, cs__ph_alg_t a, const cs__grp_t *g, cs__bufs_t b, int chan,
                 uint32_t pieces)
{
    return dispatch(ph, a, g, b, chan, pieces, 0);
}

/* ---- alpha-beta ------------------------------------------------------- */

double cs__phase_cost(cs__ph_alg_t a, int n, double bytes, const cs_ab_model_t *m,
                      int with_gamma)
{
    if (n <= 1)
        return 0.0;
    if (a == CS__PH_NVLS || (a == CS__PH_SHARP && with_gamma))
        return m->alpha + bytes * m->beta;
    if (a == CS__PH_SHARP)
        return 0.0;
    double frac = (double)(n - 1) / n, g = with_gamma ? m->gamma : 0.0;
    double t = frac * bytes * (m->beta + g); /* every algorithm moves (n-1)/n of the window */
    if (a == CS__PH_RHD) {
        cs__fold_t f = cs__fold_make(n);
        t += cs__log2_floor((uint64_t)f.n2) * m->alpha;
        if (f.rem > 0) /* the fold: the whole window in (RS) or out (AG) */
            t += m->alpha + bytes * (m->beta + g);
    } else {
        t += (n - 1) * m->alpha;
    }
    return t;
}
