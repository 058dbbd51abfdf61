/*
 * cs_plan: the compiled schedule every backend uses.  A hand-made schedule
 * with known answers, then every registered generator (odd and even P, in
 * place and not) against brute-force references: successor lists (the
 * reverse of the dependencies, increasing), channel queues (each step's
 * next one of the same direction, peer and channel; a switch step's of the
 * same group and channel), partners (the k-th send with the k-th receive;
 * the k-th switch steps of all members led by the first member's, linked by
 * swnext in group order), the order (topological under dependencies,
 * channel order and rendezvous, every step once, a switch operation's
 * members at once), the owned per-rank form
 * equal to the whole plan's view, and the buffer / staging layout.
 */
#include <stdlib.h>
#include <string.h>

#include "cs_algo.h"
#include "cs_plan.h"
#include "cs_test.h"

/* CS_TEST_REQUIRE for functions returning void. */
#define REQ(c, ...)                                                           \
    do {                                                                      \
        int ok_ = (c);                                                        \
        CS_TEST_CHECK(ok_, __VA_ARGS__);                                      \
        if (!ok_)                                                             \
            return;                                                           \
    } while (0)

/* Steps that belong to a queue: sends, receives, switch steps. */
static int queued(int kind)
{
    return cs_kind_is_comm(kind) || kind == CS_STEP_SWITCH;
}

/* Which queue family: 0 sends, 1 receives, 2 switch steps. */
static int qclass(const cs_step_t *a)
{
    return a->kind == CS_STEP_SEND ? 0 : a->kind == CS_STEP_SWITCH ? 2 : 1;
}

/* Queue key of a queued step: family, peer (group of a switch step), channel. */
static int same_queue(const cs_step_t *a, const cs_step_t *b)
{
    return qclass(a) == qclass(b) && a->peer == b->peer && a->chan == b->chan;
}

/* The k-th step of rank r's queue like st (UINT32_MAX: none), and the
 * queue's length in *len. */
static uint32_t queue_kth(const cs_sched_t *s, int r, const cs_step_t *st, uint32_t k,
                          uint32_t *len)
{
    const cs_rank_sched_t *rk = &s->ranks[r];
    uint32_t at = UINT32_MAX, n = 0;
    for (uint32_t j = 0; j < rk->nsteps; j++)
        if (queued(rk->steps[j].kind) && same_queue(st, &rk->steps[j]))
            at = n++ == k ? j : at;
    *len = n;
    return at;
}

/* Brute-force checks of one rank's local part. */
static void check_local(const cs_sched_t *s, int r, const cs_plan_rank_t *pr, const char *what)
{
    const cs_rank_sched_t *rk = &s->ranks[r];
    CS_TEST_CHECK(pr->nsteps == rk->nsteps, "%s rank %d: nsteps", what, r);
    int ok = 1;
    uint32_t nq = 0;
    for (uint32_t i = 0; i < rk->nsteps && ok; i++) {
        /* successors: every j > i listing i, once per listing, increasing */
        uint32_t k = pr->succ_off[i];
        for (uint32_t j = i + 1; j < rk->nsteps; j++) {
            const uint32_t *d = cs_step_deps(rk, &rk->steps[j]);
            for (uint32_t x = 0; x < rk->steps[j].ndeps; x++)
                if (d[x] == i)
                    ok &= k < pr->succ_off[i + 1] && pr->succ[k++] == j;
        }
        ok &= k == pr->succ_off[i + 1];
        /* next of the same queue */
        uint32_t nx = CS_PLAN_NONE;
        const cs_step_t *st = &rk->steps[i];
        if (queued(st->kind)) {
            for (uint32_t j = i + 1; j < rk->nsteps && nx == CS_PLAN_NONE; j++)
                if (queued(rk->steps[j].kind) && same_queue(st, &rk->steps[j]))
                    nx = j;
            int first = 1;
            for (uint32_t j = 0; j < i && first; j++)
                first = !(queued(rk->steps[j].kind) && same_queue(st, &rk->steps[j]));
            if (first) { /* queues numbered in the order of their first step */
                ok &= nq < pr->nqueues && pr->queues[nq].first == i &&
                      pr->queues[nq].peer == st->peer && pr->queues[nq].chan == st->chan &&
                      pr->queues[nq].send == (st->kind == CS_STEP_SEND) &&
                      pr->queues[nq].swq == (st->kind == CS_STEP_SWITCH);
                nq++;
            }
        }
        ok &= pr->chan_next[i] == nx;
    }
    CS_TEST_CHECK(ok && nq == pr->nqueues, "%s rank %d: local part differs from the reference",
                  what, r);
    for (uint32_t q = 0; q < pr->nqueues && ok; q++) {
        uint32_t len = 0, last = CS_PLAN_NONE;
        for (uint32_t i = pr->queues[q].first; i != CS_PLAN_NONE; i = pr->chan_next[i])
            len++, last = i;
        CS_TEST_CHECK(len == pr->queues[q].len && last == pr->queues[q].last,
                      "%s rank %d queue %u: len %u last %u", what, r, q, len, last);
    }
}

/* A switch step's reference partner (the k-th step of its group's first
 * member on its queue, when every member has a k-th step) and swnext (the
 * next member's k-th step). */
static void switch_ref(const cs_plan_t *p, int r, uint32_t i, uint64_t *lead, uint64_t *next)
{
    const cs_sched_t *s = p->s;
    const cs_step_t *st = &s->ranks[r].steps[i];
    const cs_group_t *g = &s->groups[st->peer];
    uint32_t k = 0, len;
    for (uint32_t j = 0; j < i; j++)
        k += queued(s->ranks[r].steps[j].kind) && same_queue(st, &s->ranks[r].steps[j]);
    *lead = *next = CS_PLAN_NOGID;
    for (uint32_t m = 0; m < g->n; m++)
        if (queue_kth(s, g->members[m], st, k, &len) == UINT32_MAX)
            return; /* a member lacks it: unmatched */
    *lead = p->base[g->members[0]] + queue_kth(s, g->members[0], st, k, &len);
    int mi = cs_group_member(g, r);
    if (mi >= 0 && (uint32_t)mi + 1 < g->n)
        *next = p->base[g->members[mi + 1]] + queue_kth(s, g->members[mi + 1], st, k, &len);
}

/* Partners: the k-th send of (a -> b, c) with the k-th receive of (b <- a, c). */
static void check_partners(const cs_plan_t *p, const char *what)
{
    const cs_sched_t *s = p->s;
    uint64_t unmatched = 0;
    int ok = 1;
    for (int r = 0; r < p->nranks; r++) {
        const cs_rank_sched_t *rk = &s->ranks[r];
        for (uint32_t i = 0; i < rk->nsteps; i++) {
            const cs_step_t *st = &rk->steps[i];
            uint64_t got = p->partner[p->base[r] + i];
            if (st->kind == CS_STEP_SWITCH) {
                uint64_t lead, next;
                switch_ref(p, r, i, &lead, &next);
                ok &= got == lead && p->swnext != NULL &&
                      p->swnext[p->base[r] + i] == (lead == CS_PLAN_NOGID ? CS_PLAN_NOGID : next);
                unmatched += lead == CS_PLAN_NOGID;
                continue;
            }
            if (!cs_kind_is_comm(st->kind)) {
                ok &= got == CS_PLAN_NOGID;
                continue;
            }
            uint32_t k = 0; /* position among its queue */
            for (uint32_t j = 0; j < i; j++)
                k += cs_kind_is_comm(rk->steps[j].kind) && same_queue(st, &rk->steps[j]);
            const cs_rank_sched_t *pk = &s->ranks[st->peer];
            uint64_t want = CS_PLAN_NOGID;
            for (uint32_t j = 0; j < pk->nsteps && want == CS_PLAN_NOGID; j++) {
                const cs_step_t *x = &pk->steps[j];
                if (!cs_kind_is_comm(x->kind) || x->peer != r || x->chan != st->chan ||
                    (x->kind == CS_STEP_SEND) == (st->kind == CS_STEP_SEND))
                    continue;
                if (k-- == 0)
                    want = p->base[st->peer] + j;
            }
            ok &= got == want;
            unmatched += want == CS_PLAN_NOGID;
        }
    }
    CS_TEST_CHECK(ok, "%s: partners differ from the reference", what);
    CS_TEST_CHECK(unmatched == p->nunmatched, "%s: unmatched %llu, reference %llu", what,
                  (unsigned long long)p->nunmatched, (unsigned long long)unmatched);
}

typedef struct {
    const cs_plan_t *p;
    uint64_t n;
    int ok;
} ev_t;

static void on_event(void *ctx, const cs_plan_t *pl, int r, uint32_t i, int pr, uint32_t pi)
{
    ev_t *e = ctx;
    const cs_plan_t *p = e->p;
    e->ok &= pl == p;
    uint64_t g = p->base[r] + i, q = p->partner[g];
    int sw = pl->s->ranks[r].steps[i].kind == CS_STEP_SWITCH; /* (r, i): the leader */
    e->ok &= e->n < p->nsteps && p->order[e->n] == g &&
             (sw ? pr == -1 && q == g : q == CS_PLAN_NOGID ? pr == -1 : q == p->base[pr] + pi);
    e->n++;
}

/* The order: every step at most once, after its dependencies and its
 * queue predecessor (both halves of a pair); nstuck counts the rest. */
static void check_order(const cs_plan_t *p, const char *what)
{
    const cs_sched_t *s = p->s;
    uint64_t N = p->nsteps, *pos = malloc((N ? N : 1) * sizeof(*pos));
    uint32_t *prev = malloc((N ? N : 1) * sizeof(*prev));
    CS_TEST_CHECK(pos != NULL && prev != NULL, "memory");
    if (pos == NULL || prev == NULL) {
        free(pos), free(prev);
        return;
    }
    for (uint64_t g = 0; g < N; g++)
        pos[g] = UINT64_MAX, prev[g] = CS_PLAN_NONE;
    for (int r = 0; r < p->nranks; r++)
        for (uint32_t i = 0; i < s->ranks[r].nsteps; i++)
            if (p->chan_next[p->base[r] + i] != CS_PLAN_NONE)
                prev[p->base[r] + p->chan_next[p->base[r] + i]] = i;
    int ok = 1;
    uint64_t placed = 0;
    for (uint64_t e = 0; e < p->norder; e++) {
        uint64_t g = p->order[e], q = p->partner[g];
        if (q == g && p->swnext != NULL) { /* a switch operation: all its members */
            for (uint64_t m = g; m != CS_PLAN_NOGID; m = p->swnext[m]) {
                ok &= pos[m] == UINT64_MAX;
                pos[m] = e, placed++;
            }
            continue;
        }
        ok &= pos[g] == UINT64_MAX;
        pos[g] = e, placed++;
        if (q != CS_PLAN_NOGID) {
            ok &= pos[q] == UINT64_MAX;
            pos[q] = e, placed++;
        }
    }
    for (int r = 0; r < p->nranks; r++) {
        const cs_rank_sched_t *rk = &s->ranks[r];
        for (uint32_t i = 0; i < rk->nsteps; i++) {
            uint64_t g = p->base[r] + i;
            if (pos[g] == UINT64_MAX)
                continue;
            const uint32_t *d = cs_step_deps(rk, &rk->steps[i]);
            for (uint32_t j = 0; j < rk->steps[i].ndeps; j++)
                ok &= pos[p->base[r] + d[j]] < pos[g];
            if (prev[g] != CS_PLAN_NONE)
                ok &= pos[p->base[r] + prev[g]] < pos[g];
        }
    }
    CS_TEST_CHECK(ok, "%s: the order is not topological", what);
    CS_TEST_CHECK(placed + p->nstuck == N, "%s: placed %llu + stuck %llu != %llu steps", what,
                  (unsigned long long)placed, (unsigned long long)p->nstuck,
                  (unsigned long long)N);
    free(pos), free(prev);
}

/* Everything about one schedule; expect_clean: no stuck or unmatched step. */
static void check_sched(const cs_sched_t *s, const char *what, int expect_clean)
{
    cs_plan_t p;
    cs_err_t err = {0};
    ev_t ev = {&p, 0, 1};
    int st = cs_plan_init(&p, s, CS_PLAN_LOCAL | CS_PLAN_ORDER, on_event, &ev, &err);
    CS_TEST_CHECK(st == CS_OK, "%s: %s", what, err.msg);
    if (st != CS_OK)
        return;
    CS_TEST_CHECK(ev.ok && ev.n == p.norder, "%s: events %llu of %llu", what,
                  (unsigned long long)ev.n, (unsigned long long)p.norder);
    cs_plan_rank_t own;
    memset(&own, 0, sizeof(own));
    for (int r = 0; r < p.nranks; r++) {
        cs_plan_rank_t v = cs_plan_rank_of(&p, r);
        check_local(s, r, &v, what);
        /* the owned form, reused from rank to rank, equals the view */
        REQ(cs_plan_rank_build(&own, s, r, &err) == CS_OK, "%s", err.msg);
        int same = own.nsteps == v.nsteps && own.nqueues == v.nqueues &&
                   !memcmp(own.succ_off, v.succ_off, (v.nsteps + 1) * sizeof(uint32_t)) &&
                   !memcmp(own.succ, v.succ, v.succ_off[v.nsteps] * sizeof(uint32_t)) &&
                   !memcmp(own.chan_next, v.chan_next, v.nsteps * sizeof(uint32_t));
        for (uint32_t q = 0; q < v.nqueues && same; q++)
            same = own.queues[q].first == v.queues[q].first &&
                   own.queues[q].len == v.queues[q].len;
        CS_TEST_CHECK(same, "%s rank %d: owned form differs from the view", what, r);
    }
    cs_plan_rank_fini(&own);
    check_partners(&p, what);
    check_order(&p, what);
    if (expect_clean)
        CS_TEST_CHECK(p.nstuck == 0 && p.nunmatched == 0, "%s: stuck %llu unmatched %llu",
                      what, (unsigned long long)p.nstuck, (unsigned long long)p.nunmatched);
    for (uint64_t x = 0; x < p.qbase[p.nranks]; x++)
        CS_TEST_CHECK(p.queues[x].matched <= p.queues[x].len, "%s: queue %llu", what,
                      (unsigned long long)x);
    cs_plan_fini(&p);
    return;
}

/* Rank 0: copy; send ch0 (dep copy); send ch1; send ch0 (dep the first send).
 * Rank 1: recv ch0; rrecv ch0 (dep recv); recv ch1; nop (deps 0, 1). */
static void test_small(void)
{
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, 2, 0, 0};
    cs_sched_t *s = cs_sched_create(&d, 4, NULL);
    REQ(s != NULL, "create");
    uint32_t z = 0, one = 1, both[2] = {0, 1};
    cs_copy(s, 0, cs_rng(CS_BUF_IN, 0, 4), cs_rng(CS_BUF_OUT, 0, 4), NULL, 0);
    cs_send(s, 0, 1, 0, cs_rng(CS_BUF_OUT, 0, 1), &z, 1);
    cs_send(s, 0, 1, 1, cs_rng(CS_BUF_OUT, 1, 1), NULL, 0);
    cs_send(s, 0, 1, 0, cs_rng(CS_BUF_OUT, 2, 1), &one, 1);
    cs_recv(s, 1, 0, 0, cs_rng(CS_BUF_OUT, 0, 1), NULL, 0);
    cs_rrecv(s, 1, 0, 0, cs_rng(CS_BUF_OUT, 2, 1), &z, 1);
    cs_recv(s, 1, 0, 1, cs_rng(CS_BUF_OUT, 1, 1), NULL, 0);
    cs_nop(s, 1, both, 2);
    REQ(cs_sched_status(s) == CS_OK, "%s", s->err.msg);
    cs_plan_t p;
    REQ(cs_plan_init(&p, s, CS_PLAN_LOCAL | CS_PLAN_ORDER, NULL, NULL, NULL) == CS_OK,
                    "init");
    cs_plan_rank_t a = cs_plan_rank_of(&p, 0), b = cs_plan_rank_of(&p, 1);
    CS_TEST_CHECK(cs_plan_nsucc(&a, 0) == 1 && cs_plan_succ(&a, 0)[0] == 1, "succ of copy");
    CS_TEST_CHECK(cs_plan_nsucc(&a, 1) == 1 && cs_plan_succ(&a, 1)[0] == 3, "succ of send 1");
    CS_TEST_CHECK(cs_plan_nsucc(&b, 0) == 2 && cs_plan_succ(&b, 0)[0] == 1 &&
                      cs_plan_succ(&b, 0)[1] == 3, "succ of recv");
    CS_TEST_CHECK(a.nqueues == 2 && a.queues[0].first == 1 && a.queues[0].last == 3 &&
                      a.queues[0].len == 2 && a.queues[1].chan == 1 && a.queues[0].send,
                  "rank 0 queues");
    CS_TEST_CHECK(a.chan_next[1] == 3 && a.chan_next[2] == CS_PLAN_NONE &&
                      b.chan_next[0] == 1 && b.chan_next[3] == CS_PLAN_NONE, "chains");
    CS_TEST_CHECK(p.partner[1] == 4 + 0 && p.partner[3] == 4 + 1 && p.partner[2] == 4 + 2 &&
                      p.partner[4 + 1] == 3 && p.partner[0] == CS_PLAN_NOGID, "partners");
    CS_TEST_CHECK(p.norder == 5 && p.nstuck == 0 && p.nunmatched == 0, "order %llu stuck %llu",
                  (unsigned long long)p.norder, (unsigned long long)p.nstuck);
    int r;
    uint32_t i;
    cs_plan_locate(p.base, p.nranks, 5, &r, &i);
    CS_TEST_CHECK(r == 1 && i == 1, "locate: %d %u", r, i);
    /* layout: one rrecv of one chunk (count 10 per block: chunk 2 has 2 or 3 elements) */
    size_t bytes[3], off[4];
    cs_plan_layout(s, 1, 10, 4, 64, bytes, off);
    CS_TEST_CHECK(bytes[0] == 40 && bytes[1] == 40 && bytes[2] == 64 && off[1] == 0,
                  "layout: %zu %zu %zu", bytes[0], bytes[1], bytes[2]);
    CS_TEST_CHECK(cs_plan_buf_elems(s, 1, CS_BUF_OUT, 10) == 10 &&
                      cs_plan_buf_elems(s, 1, 2, 10) == 0 && cs_plan_buf_elems(s, 1, -1, 10) == 0,
                  "buffer elements");
    cs_plan_fini(&p);
    check_sched(s, "small", 1);
    cs_sched_destroy(s);
}

/* Stuck and unmatched: a send with no receive, a receive whose partner waits
 * for it (a cycle through a dependency). */
static void test_stuck(void)
{
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, 3, 0, 0};
    cs_sched_t *s = cs_sched_create(&d, 3, NULL);
    REQ(s != NULL, "create");
    uint32_t z = 0;
    cs_send(s, 0, 2, 0, cs_rng(CS_BUF_IN, 0, 1), NULL, 0);
    cs_send(s, 0, 2, 0, cs_rng(CS_BUF_IN, 0, 1), &z, 1); /* unmatched */
    cs_recv(s, 1, 2, 0, cs_rng(CS_BUF_OUT, 0, 1), NULL, 0);
    cs_send(s, 1, 2, 0, cs_rng(CS_BUF_IN, 0, 1), &z, 1);
    cs_recv(s, 2, 0, 0, cs_rng(CS_BUF_OUT, 0, 1), NULL, 0);
    cs_recv(s, 2, 1, 0, cs_rng(CS_BUF_OUT, 1, 1), NULL, 0);
    cs_send(s, 2, 1, 0, cs_rng(CS_BUF_IN, 0, 1), &z + 0, 0);
    REQ(cs_sched_status(s) == CS_OK, "%s", s->err.msg);
    /* 2's send to 1 is ready, 1's recv too: that pair runs; then 1's send
     * and 2's receive from 1 run; only the unmatched send stays */
    check_sched(s, "stuck", 0);
    cs_plan_t p;
    REQ(cs_plan_init(&p, s, CS_PLAN_ORDER, NULL, NULL, NULL) == CS_OK, "init");
    CS_TEST_CHECK(p.nunmatched == 1 && p.nstuck == 1 && p.succ == NULL && p.queues == NULL,
                  "unmatched %llu stuck %llu, local part freed", (unsigned long long)p.nunmatched,
                  (unsigned long long)p.nstuck);
    cs_plan_fini(&p);
    cs_sched_destroy(s);
    /* a cycle: each rank receives before it sends */
    s = cs_sched_create(&d, 3, NULL);
    REQ(s != NULL, "create");
    for (int r = 0; r < 3; r++) {
        cs_recv(s, r, (r + 2) % 3, 0, cs_rng(CS_BUF_OUT, 0, 1), NULL, 0);
        cs_send(s, r, (r + 1) % 3, 0, cs_rng(CS_BUF_IN, 0, 1), &z, 1);
    }
    REQ(cs_plan_init(&p, s, CS_PLAN_ORDER, NULL, NULL, NULL) == CS_OK, "init");
    CS_TEST_CHECK(p.nunmatched == 0 && p.nstuck == 6 && p.norder == 0, "cycle: stuck %llu",
                  (unsigned long long)p.nstuck);
    cs_plan_fini(&p);
    check_sched(s, "cycle", 0);
    cs_sched_destroy(s);
}

/* Every generator; each must plan clean (the verifier accepts them all). */
static void test_algos(void)
{
    static const int ranks[] = {1, 2, 3, 5, 8, 12};
    int n = 0;
    for (int k = 0; k < cs_algo_count(); k++) {
        const cs_algo_t *a = cs_algo_at(k);
        for (size_t j = 0; j < sizeof(ranks) / sizeof(ranks[0]); j++)
            for (int inplace = 0; inplace < 2; inplace++) {
                int P = ranks[j];
                cs_coll_desc_t d = {a->coll, P, cs_coll_has_root(a->coll) ? P / 2 : 0, inplace};
                cs_params_t params;
                cs_params_init(&params);
                cs_sched_t *s = NULL;
                if (cs_algo_build(a, &d, &params, &s, NULL) != CS_OK)
                    continue; /* declined */
                char what[96];
                snprintf(what, sizeof(what), "%s/%s P=%d inplace=%d", cs_coll_name(a->coll),
                         a->name, P, inplace);
                check_sched(s, what, 1);
                /* layout: slots aligned, back to back, as large as their rrecv */
                const cs_rank_sched_t *rk = &s->ranks[P - 1];
                size_t *bytes = malloc((rk->nbufs + 1u) * sizeof(*bytes));
                size_t *off = malloc((rk->nsteps + 1u) * sizeof(*off));
                if (bytes != NULL && off != NULL) {
                    cs_plan_layout(s, P - 1, 1000, 8, 256, bytes, off);
                    size_t at = 0;
                    int ok = 1;
                    for (uint32_t i = 0; i < rk->nsteps; i++) {
                        const cs_step_t *x = &rk->steps[i];
                        if (x->kind != CS_STEP_RRECV) {
                            ok &= off[i] == 0;
                            continue;
                        }
                        size_t b = cs_range_elems(s, &rk->bufs[x->dst.buf], 1000, x->dst.off,
                                                  x->dst.n) * 8;
                        ok &= off[i] == at && at % 256 == 0;
                        at += (b + 255) / 256 * 256;
                    }
                    ok &= bytes[rk->nbufs] == at &&
                          bytes[CS_BUF_OUT] == cs_range_elems(s, &rk->bufs[CS_BUF_OUT], 1000, 0,
                                                              rk->bufs[CS_BUF_OUT].nchunks) * 8;
                    CS_TEST_CHECK(ok, "%s: layout", what);
                }
                free(bytes), free(off);
                cs_sched_destroy(s);
                n++;
            }
    }
    CS_TEST_CHECK(n > 100, "only %d schedules planned", n);
    printf("%d schedules planned\n", n);
}

int main(void)
{
    test_small();
    test_stuck();
    test_algos();
    return cs_test_finish();
}
