/*
 * gpu_merge.c - the GPU engine's copy merging (cs__gpu_merge_copies), no GPU
 * needed.
 *   - Registry: every algorithm at P = 1..6, 8 and 16, default parameters
 *     and 3 chunks per segment, a root of 1 where there is a root: on every
 *     rank each merged step is a copy with the same dependency set and
 *     buffers as its carrier, the carrier is the run's smallest index, the
 *     members' ranges tile the carrier's ranges exactly at one shift, and
 *     every other step is untouched (checked here independently of the
 *     merging code).  The schedule rebuilt as the engine runs it (carrier:
 *     one copy of the whole run; member: a join on the carrier) must pass
 *     the verifier and give the right numbers in the reference interpreter.
 *   - At P = 1: allreduce dbtree (32 copies) and broadcast chain (8)
 *     become one copy each; every P = 1 schedule of copies in -> out too.
 *   - Hand-built cases that must not merge (different dependencies, a gap,
 *     crossed ranges, other buffers, a reduce, a copy waiting for the
 *     other) and that must (dependency lists in another order or repeated,
 *     steps out of order).
 */
#include <stdlib.h>
#include <string.h>

#include "cs_algo.h"
#include "cs_gpu.h"
#include "cs_interp.h"
#include "cs_test.h"
#include "cs_verify.h"

typedef struct merged {
    uint32_t *lead;
    cs_range_t *src, *dst;
    uint32_t gone;
} merged_t;

static int merge(const cs_rank_sched_t *rs, merged_t *m)
{
    size_t n1 = rs->nsteps + 1;
    m->lead = malloc(n1 * sizeof(*m->lead));
    m->src = malloc(n1 * sizeof(*m->src));
    m->dst = malloc(n1 * sizeof(*m->dst));
    cs_err_t err;
    cs_err_clear(&err);
    if (!m->lead || !m->src || !m->dst)
        return CS_ERR_NOMEM;
    return cs__gpu_merge_copies(rs, m->lead, m->src, m->dst, &m->gone, &err);
}

static void merged_free(merged_t *m)
{
    free(m->lead), free(m->src), free(m->dst);
}

/* Dependency sets equal as sets (lists are short: quadratic is fine). */
static int in_list(uint32_t v, const uint32_t *d, uint32_t n)
{
    for (uint32_t j = 0; j < n; j++)
        if (d[j] == v)
            return 1;
    return 0;
}

static int same_deps(const cs_rank_sched_t *rs, const cs_step_t *a, const cs_step_t *b)
{
    const uint32_t *da = cs_step_deps(rs, a), *db = cs_step_deps(rs, b);
    for (uint32_t j = 0; j < a->ndeps; j++)
        if (!in_list(da[j], db, b->ndeps))
            return 0;
    for (uint32_t j = 0; j < b->ndeps; j++)
        if (!in_list(db[j], da, a->ndeps))
            return 0;
    return 1;
}

static int same_range(cs_range_t a, cs_range_t b)
{
    return a.buf == b.buf && a.off == b.off && a.n == b.n;
}

typedef struct piece {
    uint32_t lead, off, n;
} piece_t;

static int piece_cmp(const void *x, const void *y)
{
    const piece_t *p = x, *q = y;
    if (p->lead != q->lead)
        return p->lead < q->lead ? -1 : 1;
    return p->off < q->off ? -1 : p->off > q->off;
}

/* What must hold of a merge of rank `rs`; returns the number of problems. */
static int check_rank(const cs_rank_sched_t *rs, const merged_t *m, const char *name, int r)
{
    int bad = 0;
    uint32_t gone = 0, np = 0;
    piece_t *pc = malloc((rs->nsteps + 1) * sizeof(*pc)); /* src ranges of copies by carrier */
    for (uint32_t i = 0; i < rs->nsteps; i++) {
        const cs_step_t *x = &rs->steps[i];
        uint32_t L = m->lead[i];
        if (L >= rs->nsteps || L > i || m->lead[L] != L) {
            CS_TEST_CHECK(0, "%s rank %d step %u: carrier %u", name, r, i, L);
            bad++;
            continue;
        }
        if (x->kind == CS_STEP_COPY)
            pc[np++] = (piece_t){L, x->src.off, x->src.n};
        if (L == i && (x->kind != CS_STEP_COPY || m->src[i].n == x->src.n)) {
            if (!same_range(m->src[i], x->src) || !same_range(m->dst[i], x->dst)) {
                CS_TEST_CHECK(0, "%s rank %d step %u (%s): ranges changed", name, r, i,
                              cs_step_kind_name(x->kind));
                bad++;
            }
            continue;
        }
        /* a member of a merged run, or its carrier */
        const cs_step_t *c = &rs->steps[L];
        cs_range_t cs = m->src[L], cd = m->dst[L];
        int64_t shift = (int64_t)x->dst.off - (int64_t)x->src.off;
        int ok = x->kind == CS_STEP_COPY && c->kind == CS_STEP_COPY && same_deps(rs, x, c) &&
                 x->src.buf == cs.buf && x->dst.buf == cd.buf && cs.n == cd.n &&
                 shift == (int64_t)cd.off - (int64_t)cs.off;
        CS_TEST_CHECK(ok, "%s rank %d: step %u (%s, %u deps) merged into step %u (%u deps) "
                      "carrying src %u[%u:+%u] dst %u[%u:+%u]", name, r, i,
                      cs_step_kind_name(x->kind), x->ndeps, L, c->ndeps, cs.buf, cs.off, cs.n,
                      cd.buf, cd.off, cd.n);
        bad += !ok;
        gone += L != i;
    }
    /* the src ranges of each carrier's run tile its carried range exactly */
    qsort(pc, np, sizeof(*pc), piece_cmp);
    for (uint32_t j = 0; j < np;) {
        uint32_t L = pc[j].lead, end = m->src[L].off, e = j;
        int tiles = 1;
        for (; e < np && pc[e].lead == L; e++) {
            tiles &= pc[e].off == end;
            end = pc[e].off + pc[e].n;
        }
        tiles &= end == m->src[L].off + m->src[L].n;
        CS_TEST_CHECK(tiles, "%s rank %d step %u: its run does not tile src %u[%u:+%u]", name, r,
                      L, m->src[L].buf, m->src[L].off, m->src[L].n);
        bad += !tiles;
        j = e;
    }
    CS_TEST_CHECK(gone == m->gone, "%s rank %d: %u merged, reported %u", name, r, gone, m->gone);
    free(pc);
    return bad + (gone != m->gone);
}

/* The schedule as the engine runs it: carriers copy their whole run, the
 * other members are joins on their carrier; every index stays. */
static cs_sched_t *rebuild(const cs_sched_t *s, merged_t *ms, cs_err_t *err)
{
    cs_sched_t *t = cs_sched_create(&s->desc, s->nchunks, err);
    for (int r = 0; t && r < s->desc.nranks; r++) {
        const cs_rank_sched_t *rs = &s->ranks[r];
        for (uint16_t b = CS_BUF_FIRST_SCRATCH; b < rs->nbufs; b++)
            cs_sched_add_buffer(t, r, rs->bufs[b].name, rs->bufs[b].base, rs->bufs[b].nchunks);
        for (uint32_t i = 0; i < rs->nsteps; i++) {
            cs_step_t x = rs->steps[i];
            if (ms[r].lead[i] != i) {
                cs_nop(t, r, &ms[r].lead[i], 1);
                continue;
            }
            x.src = ms[r].src[i], x.dst = ms[r].dst[i];
            cs_sched_add(t, r, &x, cs_step_deps(rs, &rs->steps[i]), rs->steps[i].ndeps);
        }
    }
    if (t && cs_sched_status(t) != CS_OK) {
        *err = t->err;
        cs_sched_destroy(t);
        return NULL;
    }
    return t;
}

/* Merge every rank of `s`, check, rebuild, verify, interpret.  Returns the
 * steps merged away over all ranks (-1 on a failure). */
static int verified; /* merged schedules verified and interpreted */

static long check_sched(const cs_sched_t *s, const char *name)
{
    int P = s->desc.nranks;
    merged_t *ms = calloc((size_t)P, sizeof(*ms));
    long gone = 0;
    int bad = 0;
    for (int r = 0; r < P; r++) {
        int st = merge(&s->ranks[r], &ms[r]);
        CS_TEST_CHECK(st == CS_OK, "%s rank %d: merge %d", name, r, st);
        bad += st != CS_OK || check_rank(&s->ranks[r], &ms[r], name, r);
        gone += ms[r].gone;
    }
    cs_err_t err;
    cs_err_clear(&err);
    cs_sched_t *t = bad ? NULL : rebuild(s, ms, &err);
    CS_TEST_CHECK(bad || t != NULL, "%s: the merged schedule does not build: %s", name, err.msg);
    if (t && gone) { /* nothing merged: the same schedule, verified elsewhere */
        cs_verify_report_t rep;
        int st = cs_verify(t, NULL, &rep, &err);
        CS_TEST_CHECK(st == CS_OK, "%s: merged schedule: %s", name, err.msg);
        cs_verify_report_fini(&rep);
        verified += st == CS_OK;
        const uint64_t counts[] = {1, (uint64_t)s->nchunks * 3 + 1};
        for (size_t k = 0; k < 2 && st == CS_OK; k++) {
            cs_interp_result_t res;
            int ist = cs_interp_run(t, CS_DT_F32, CS_OP_SUM, counts[k], &res, &err);
            CS_TEST_CHECK(ist == CS_OK && res.wrong == 0, "%s count %llu: %s, %llu wrong", name,
                          (unsigned long long)counts[k], ist == CS_OK ? "ran" : err.msg,
                          (unsigned long long)(ist == CS_OK ? res.wrong : 0));
        }
    }
    cs_sched_destroy(t);
    for (int r = 0; r < P; r++)
        merged_free(&ms[r]);
    free(ms);
    return bad ? -1 : gone;
}

/* Copies carried after merging, on rank 0. */
static uint32_t carried_copies(const cs_sched_t *s)
{
    merged_t m;
    uint32_t n = 0;
    if (merge(&s->ranks[0], &m) == CS_OK)
        for (uint32_t i = 0; i < s->ranks[0].nsteps; i++)
            n += s->ranks[0].steps[i].kind == CS_STEP_COPY && m.lead[i] == i;
    merged_free(&m);
    return n;
}

static cs_sched_t *build(cs_coll_t coll, const char *algo, int P, int root, int variant)
{
    const cs_algo_t *a = cs_algo_find(coll, algo);
    cs_coll_desc_t d = {coll, P, root, 0};
    cs_params_t p;
    cs_params_init(&p);
    cs_err_t err;
    cs_err_clear(&err);
    for (int k = 0; variant && a && a->params && a->params[k].key; k++)
        if (!strcmp(a->params[k].key, "nchunks") || !strcmp(a->params[k].key, "segments"))
            cs_params_set(&p, a->params[k].key, "3", &err);
    cs_sched_t *s = NULL;
    if (!a || cs_algo_build(a, &d, &p, &s, &err) != CS_OK)
        return NULL;
    return s;
}

static void registry(void)
{
    const int Ps[] = {1, 2, 3, 4, 5, 6, 8, 16};
    int built = 0, with_merges = 0;
    long total = 0;
    for (int i = 0; i < cs_algo_count(); i++) {
        const cs_algo_t *a = cs_algo_at(i);
        if (cs_algo_switched(a, NULL))
            continue; /* switch steps: the GPU engine refuses them (no switch here) */
        for (size_t k = 0; k < sizeof(Ps) / sizeof(Ps[0]); k++)
            for (int variant = 0; variant < 2; variant++) {
                int root = cs_coll_has_root(a->coll) && Ps[k] > 1 ? 1 : 0;
                cs_sched_t *s = build(a->coll, a->name, Ps[k], root, variant);
                if (!s)
                    continue; /* unsupported rank count: the generator says so */
                char name[128];
                snprintf(name, sizeof(name), "%s/%s P=%d%s", cs_coll_name(a->coll), a->name,
                         Ps[k], variant ? " (3 chunks)" : "");
                long gone = check_sched(s, name);
                built++;
                with_merges += gone > 0;
                total += gone > 0 ? gone : 0;
                /* at P = 1 a schedule of copies in -> out is one copy */
                if (Ps[k] == 1) {
                    const cs_rank_sched_t *rs = &s->ranks[0];
                    int all_io = rs->nsteps > 0;
                    for (uint32_t j = 0; j < rs->nsteps; j++)
                        all_io &= rs->steps[j].kind == CS_STEP_COPY && rs->steps[j].ndeps == 0 &&
                                  rs->steps[j].src.buf == CS_BUF_IN &&
                                  rs->steps[j].dst.buf == CS_BUF_OUT;
                    if (all_io)
                        CS_TEST_CHECK(carried_copies(s) == 1, "%s: %u copies after merging",
                                      name, carried_copies(s));
                }
                cs_sched_destroy(s);
            }
    }
    printf("%d registry schedules, %d with merged copies, %ld copy steps merged away, %d merged "
           "schedules verified\n", built, with_merges, total, verified);
    CS_TEST_CHECK(built > 100 && with_merges > 10 && verified == with_merges,
                  "%d schedules built, %d with merges, %d verified", built, with_merges, verified);
}

/* The cases: one-rank dbtree and chain. */
static void one_rank(void)
{
    struct { cs_coll_t coll; const char *algo; uint32_t steps; } c[] = {
        {CS_COLL_ALLREDUCE, "dbtree", 32}, {CS_COLL_BROADCAST, "chain", 8},
        {CS_COLL_ALLREDUCE, "ring", 1}};
    for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
        cs_sched_t *s = build(c[k].coll, c[k].algo, 1, 0, 0);
        CS_TEST_CHECK(s != NULL, "%s does not build at P = 1", c[k].algo);
        if (!s)
            continue;
        merged_t m;
        CS_TEST_CHECK(merge(&s->ranks[0], &m) == CS_OK, "merge");
        CS_TEST_CHECK(s->ranks[0].nsteps == c[k].steps && m.gone == c[k].steps - 1 &&
                          carried_copies(s) == 1 && m.src[0].n == s->nchunks &&
                          m.dst[0].n == s->nchunks,
                      "%s P=1: %u steps, %u merged away, first carries %u of %u chunks",
                      c[k].algo, s->ranks[0].nsteps, m.gone, m.src[0].n, s->nchunks);
        merged_free(&m);
        cs_sched_destroy(s);
    }
}

/* Hand-built steps of rank 0 of a 16-rank reduce-scatter of 16 chunks (one
 * chunk per block: any two chunks may be copied into each other), not
 * meant to be a whole collective. */
static void hand(void)
{
    cs_coll_desc_t d = {CS_COLL_REDUCE_SCATTER, 16, 0, 0};
    cs_err_t err;
    cs_err_clear(&err);
    cs_sched_t *s = cs_sched_create(&d, 16, &err);
    CS_TEST_CHECK(s != NULL, "%s", err.msg);
    if (!s)
        return;
    const int I = CS_BUF_IN;
    int t = cs_sched_add_buffer(s, 0, "t", 0, 16), u = cs_sched_add_buffer(s, 0, "u", 0, 16);
    uint32_t a = (uint32_t)cs_nop(s, 0, NULL, 0), b = (uint32_t)cs_nop(s, 0, NULL, 0);
    uint32_t ab[] = {a, b}, bab[] = {b, a, b};
    /* must not merge, in pairs: */
    uint32_t n0 = (uint32_t)cs_copy(s, 0, cs_rng(I, 0, 1), cs_rng(t, 0, 1), &a, 1);
    uint32_t n1 = (uint32_t)cs_copy(s, 0, cs_rng(I, 1, 1), cs_rng(t, 1, 1), &b, 1);
    uint32_t g0 = (uint32_t)cs_copy(s, 0, cs_rng(I, 2, 1), cs_rng(t, 2, 1), NULL, 0);
    uint32_t g1 = (uint32_t)cs_copy(s, 0, cs_rng(I, 4, 1), cs_rng(t, 4, 1), NULL, 0);
    uint32_t x0 = (uint32_t)cs_copy(s, 0, cs_rng(u, 0, 1), cs_rng(t, 9, 1), &a, 1);
    uint32_t x1 = (uint32_t)cs_copy(s, 0, cs_rng(u, 1, 1), cs_rng(t, 8, 1), &a, 1);
    uint32_t b0 = (uint32_t)cs_copy(s, 0, cs_rng(I, 5, 1), cs_rng(t, 5, 1), &g0, 1);
    uint32_t b1 = (uint32_t)cs_copy(s, 0, cs_rng(I, 6, 1), cs_rng(u, 6, 1), &g0, 1);
    uint32_t r0 = (uint32_t)cs_copy(s, 0, cs_rng(u, 10, 1), cs_rng(t, 10, 1), &g1, 1);
    uint32_t r1 = (uint32_t)cs_reduce(s, 0, cs_rng(u, 11, 1), cs_rng(t, 11, 1), &g1, 1);
    uint32_t c0 = (uint32_t)cs_copy(s, 0, cs_rng(u, 12, 1), cs_rng(t, 12, 1), &n0, 1);
    uint32_t c1 = (uint32_t)cs_copy(s, 0, cs_rng(u, 13, 1), cs_rng(t, 13, 1), &c0, 1);
    /* must merge: dependency lists {a, b} and {b, a, b}; steps out of order */
    uint32_t m2 = (uint32_t)cs_copy(s, 0, cs_rng(I, 14, 2), cs_rng(u, 14, 2), ab, 2);
    uint32_t m0 = (uint32_t)cs_copy(s, 0, cs_rng(I, 11, 1), cs_rng(u, 11, 1), bab, 3);
    uint32_t m1 = (uint32_t)cs_copy(s, 0, cs_rng(I, 12, 2), cs_rng(u, 12, 2), ab, 2);
    CS_TEST_CHECK(cs_sched_status(s) == CS_OK, "builder: %s", s->err.msg);
    merged_t m;
    CS_TEST_CHECK(merge(&s->ranks[0], &m) == CS_OK, "merge");
    const uint32_t alone[] = {n0, n1, g0, g1, x0, x1, b0, b1, r0, r1, c0, c1};
    const char *why[] = {"different dependencies", "a gap", "crossed ranges", "other buffers",
                         "a reduce", "waits for the other"};
    for (size_t k = 0; k < sizeof(alone) / sizeof(alone[0]); k++)
        CS_TEST_CHECK(m.lead[alone[k]] == alone[k], "step %u merged into %u (%s)", alone[k],
                      m.lead[alone[k]], why[k / 2]);
    CS_TEST_CHECK(m.lead[m0] == m2 && m.lead[m1] == m2 && m.lead[m2] == m2 && m.gone == 2,
                  "carriers %u %u %u, %u merged", m.lead[m0], m.lead[m1], m.lead[m2], m.gone);
    CS_TEST_CHECK(same_range(m.src[m2], cs_rng(I, 11, 5)) && same_range(m.dst[m2], cs_rng(u, 11, 5)),
                  "carried src %u[%u:+%u] dst %u[%u:+%u]", m.src[m2].buf, m.src[m2].off,
                  m.src[m2].n, m.dst[m2].buf, m.dst[m2].off, m.dst[m2].n);
    CS_TEST_CHECK(check_rank(&s->ranks[0], &m, "hand", 0) == 0, "hand-built checks");
    merged_free(&m);
    cs_sched_destroy(s);
}

int main(void)
{
    one_rank();
    hand();
    registry();
    return cs_test_finish();
}
