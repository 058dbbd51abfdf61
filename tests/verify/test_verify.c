/*
 * Verifier tests: correct schedules pass; mutated ones fail with the right
 * finding at the right rank and step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_test.h"
#include "cs_verify.h"
#include "vfix.h"

#define ANY_STEP (-2)

static void dump(const cs_verify_report_t *rep)
{
    for (uint32_t i = 0; i < rep->n; i++)
        fprintf(stderr, "    [%s] rank %d step %lld chunk %lld: %s\n", rep->findings[i].kind,
                rep->findings[i].rank, (long long)rep->findings[i].step,
                (long long)rep->findings[i].chunk, rep->findings[i].msg);
}

static const cs_finding_t *find(const cs_verify_report_t *rep, const char *kind, int rank,
                                int64_t step)
{
    for (uint32_t i = 0; i < rep->n; i++) {
        const cs_finding_t *f = &rep->findings[i];
        if (strcmp(f->kind, kind) == 0 && f->rank == rank && (step == ANY_STEP || f->step == step))
            return f;
    }
    return NULL;
}

/* Verify and expect success. */
static void expect_ok(cs_sched_t *s, const char *what)
{
    CS_TEST_CHECK(s != NULL, "%s: fixture", what);
    if (s == NULL)
        return;
    cs_verify_report_t rep;
    cs_err_t err = {0};
    int st = cs_verify(s, NULL, &rep, &err);
    CS_TEST_CHECK(st == CS_OK && rep.total == 0 && rep.n == 0, "%s: status %d, %llu findings: %s",
                  what, st, (unsigned long long)rep.total, err.msg);
    if (st != CS_OK)
        dump(&rep);
    cs_verify_report_fini(&rep);
}

/* Verify and expect a finding of `kind` at (rank, step); the message must
 * name the rank.  Returns the total number of findings. */
static uint64_t expect_finding(cs_sched_t *s, const char *kind, int rank, int64_t step,
                               const char *what)
{
    CS_TEST_CHECK(s != NULL, "%s: fixture", what);
    if (s == NULL)
        return 0;
    cs_verify_report_t rep;
    cs_err_t err = {0};
    cs_verify_opts_t opts = {.max_findings = 64};
    int st = cs_verify(s, &opts, &rep, &err);
    CS_TEST_CHECK(st == CS_ERR_VERIFY, "%s: status %d", what, st);
    CS_TEST_CHECK(err.code == CS_ERR_VERIFY && strstr(err.msg, rep.n ? rep.findings[0].kind : "?"),
                  "%s: err names the first finding: %s", what, err.msg);
    const cs_finding_t *f = find(&rep, kind, rank, step);
    CS_TEST_CHECK(f != NULL, "%s: no '%s' finding at rank %d step %lld", what, kind, rank,
                  (long long)step);
    if (f != NULL) {
        char rk[32];
        snprintf(rk, sizeof(rk), "rank %d", rank);
        CS_TEST_CHECK(strstr(f->msg, rk) != NULL, "%s: message names %s: %s", what, rk, f->msg);
        if (step >= 0) {
            char sp[32];
            snprintf(sp, sizeof(sp), "step %lld", (long long)step);
            CS_TEST_CHECK(strstr(f->msg, sp) != NULL, "%s: message names %s: %s", what, sp,
                          f->msg);
        }
    } else {
        dump(&rep);
    }
    uint64_t total = rep.total;
    cs_verify_report_fini(&rep);
    return total;
}

/* ---- correct schedules ------------------------------------------------- */

static cs_sched_t *linear_bcast(int P, int root, int inplace)
{
    cs_coll_desc_t d = {CS_COLL_BROADCAST, P, root, inplace};
    cs_sched_t *s = cs_sched_create(&d, 3, NULL);
    if (s == NULL)
        return NULL;
    int src = inplace ? CS_BUF_OUT : CS_BUF_IN;
    if (!inplace)
        cs_copy(s, root, cs_rng(CS_BUF_IN, 0, 3), cs_rng(CS_BUF_OUT, 0, 3), NULL, 0);
    for (int r = 0; r < P; r++) {
        if (r == root)
            continue;
        cs_send(s, root, r, 0, cs_rng(src, 0, 3), NULL, 0);
        cs_recv(s, r, root, 0, cs_rng(CS_BUF_OUT, 0, 3), NULL, 0);
    }
    return s;
}

/* Direct allgather: own block copied, every block sent to every rank, with
 * two chunks per block and channel 1 for odd senders. */
static cs_sched_t *direct_allgather(int P)
{
    cs_coll_desc_t d = {CS_COLL_ALLGATHER, P, 0, 0};
    cs_sched_t *s = cs_sched_create(&d, 2 * (uint32_t)P, NULL);
    if (s == NULL)
        return NULL;
    for (int r = 0; r < P; r++) {
        cs_copy(s, r, cs_rng(CS_BUF_IN, 0, 2), cs_rng(CS_BUF_OUT, 2 * (uint32_t)r, 2), NULL, 0);
        for (int q = 0; q < P; q++) {
            if (q == r)
                continue;
            cs_send(s, r, q, r % 2, cs_rng(CS_BUF_IN, 0, 2), NULL, 0);
            cs_recv(s, r, q, q % 2, cs_rng(CS_BUF_OUT, 2 * (uint32_t)q, 2), NULL, 0);
        }
    }
    return s;
}

/* Linear reduce to root through a scratch buffer; rrecvs chained. */
static cs_sched_t *linear_reduce(int P, int root)
{
    cs_coll_desc_t d = {CS_COLL_REDUCE, P, root, 0};
    cs_sched_t *s = cs_sched_create(&d, 2, NULL);
    if (s == NULL)
        return NULL;
    int tmp = cs_sched_add_buffer(s, root, "acc", 0, 2);
    int64_t last = cs_copy(s, root, cs_rng(CS_BUF_IN, 0, 2), cs_rng(tmp, 0, 2), NULL, 0);
    for (int r = 0; r < P; r++) {
        if (r == root)
            continue;
        cs_send(s, r, root, 0, cs_rng(CS_BUF_IN, 0, 2), NULL, 0);
        uint32_t dep = (uint32_t)last;
        last = cs_rrecv(s, root, r, 0, cs_rng(tmp, 0, 2), &dep, 1);
    }
    uint32_t dep = (uint32_t)last;
    cs_copy(s, root, cs_rng(tmp, 0, 2), cs_rng(CS_BUF_OUT, 0, 2), &dep, 1);
    return s;
}

/* Direct alltoall: block q of rank r goes to rank q. */
static cs_sched_t *direct_alltoall(int P)
{
    cs_coll_desc_t d = {CS_COLL_ALLTOALL, P, 0, 0};
    cs_sched_t *s = cs_sched_create(&d, (uint32_t)P, NULL);
    if (s == NULL)
        return NULL;
    for (int r = 0; r < P; r++) {
        cs_copy(s, r, cs_rng(CS_BUF_IN, (uint32_t)r, 1), cs_rng(CS_BUF_OUT, (uint32_t)r, 1), NULL,
                0);
        for (int q = 0; q < P; q++) {
            if (q == r)
                continue;
            cs_send(s, r, q, 0, cs_rng(CS_BUF_IN, (uint32_t)q, 1), NULL, 0);
            cs_recv(s, r, q, 0, cs_rng(CS_BUF_OUT, (uint32_t)q, 1), NULL, 0);
        }
    }
    return s;
}

/* Direct reduce-scatter: everyone sends block r to r, r accumulates. */
static cs_sched_t *direct_reduce_scatter(int P)
{
    cs_coll_desc_t d = {CS_COLL_REDUCE_SCATTER, P, 0, 0};
    cs_sched_t *s = cs_sched_create(&d, (uint32_t)P, NULL);
    if (s == NULL)
        return NULL;
    for (int r = 0; r < P; r++) {
        int64_t last = cs_copy(s, r, cs_rng(CS_BUF_IN, (uint32_t)r, 1), cs_rng(CS_BUF_OUT, 0, 1),
                               NULL, 0);
        for (int q = 0; q < P; q++) {
            if (q == r)
                continue;
            cs_send(s, r, q, 0, cs_rng(CS_BUF_IN, (uint32_t)q, 1), NULL, 0);
            uint32_t dep = (uint32_t)last;
            last = cs_rrecv(s, r, q, 0, cs_rng(CS_BUF_OUT, 0, 1), &dep, 1);
        }
    }
    return s;
}

static void test_correct(void)
{
    char what[64];
    for (int P = 1; P <= 9; P++)
        for (int inplace = 0; inplace < 2; inplace++)
            for (uint32_t per = 1; per <= 2; per++) {
                snprintf(what, sizeof(what), "ring P=%d per=%u inplace=%d", P, per, inplace);
                cs_sched_t *s = vfix_ring(P, per, inplace, 0);
                expect_ok(s, what);
                cs_sched_destroy(s);
            }
    for (int P = 1; P <= 6; P++) {
        cs_sched_t *s = linear_bcast(P, P / 2, P % 2);
        expect_ok(s, "linear broadcast");
        cs_sched_destroy(s);
        s = direct_allgather(P);
        expect_ok(s, "direct allgather");
        cs_sched_destroy(s);
        s = linear_reduce(P, P - 1);
        expect_ok(s, "linear reduce");
        cs_sched_destroy(s);
        s = direct_alltoall(P);
        expect_ok(s, "direct alltoall");
        cs_sched_destroy(s);
        s = direct_reduce_scatter(P);
        expect_ok(s, "direct reduce-scatter");
        cs_sched_destroy(s);
    }
}

/* P = 1: no communication at all. */
static void test_single_rank(void)
{
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, 1, 0, 1};
    cs_sched_t *s = cs_sched_create(&d, 4, NULL);
    expect_ok(s, "P=1 in place, no steps");
    cs_sched_destroy(s);
    d.inplace = 0;
    s = cs_sched_create(&d, 4, NULL);
    uint64_t n = expect_finding(s, "missing", 0, -1, "P=1 without the copy");
    CS_TEST_CHECK(n == 1, "one run of missing chunks, got %llu", (unsigned long long)n);
    cs_copy(s, 0, cs_rng(CS_BUF_IN, 0, 4), cs_rng(CS_BUF_OUT, 0, 4), NULL, 0);
    expect_ok(s, "P=1 copy");
    cs_sched_destroy(s);
}

/* ---- mutations --------------------------------------------------------- */

static cs_step_t *step(cs_sched_t *s, int r, uint32_t i)
{
    return &s->ranks[r].steps[i];
}

static void mutate_ring(int P)
{
    char what[96];
    uint32_t per = 2;
    cs_sched_t *s;

    /* drop the initial copy of rank 2: its first send reads nothing */
    s = vfix_ring(P, per, 0, 0);
    step(s, 2, 0)->kind = CS_STEP_NOP;
    snprintf(what, sizeof(what), "P=%d drop copy", P);
    expect_finding(s, "uninit", 2, vfix_ring_idx(P, 0, 0, 0, 0), what);
    cs_sched_destroy(s);

    /* drop rank 1's last allgather send: rank 2's last recv is unmatched and
     * a segment of rank 2's out is never written */
    s = vfix_ring(P, per, 0, 0);
    step(s, 1, vfix_ring_idx(P, 0, 1, P - 2, 0))->kind = CS_STEP_NOP;
    snprintf(what, sizeof(what), "P=%d drop send", P);
    expect_finding(s, "unmatched", 2, vfix_ring_idx(P, 0, 1, P - 2, 1), what);
    expect_finding(s, "missing", 2, -1, what);
    cs_sched_destroy(s);

    /* duplicate a reduce: rank 3 adds its input once more at the end */
    s = vfix_ring(P, per, 0, 0);
    {
        cs_deps_t dl = {0};
        for (uint32_t i = 0; i < s->ranks[3].nsteps; i++)
            cs_deps_push(&dl, i);
        int64_t idx = cs_reduce(s, 3, cs_rng(CS_BUF_IN, per, per), cs_rng(CS_BUF_OUT, per, per),
                                dl.v, dl.n);
        cs_deps_fini(&dl);
        snprintf(what, sizeof(what), "P=%d duplicated reduce", P);
        expect_finding(s, "twice", 3, idx, what);
    }
    cs_sched_destroy(s);

    /* change a peer: rank 1's second reduce-scatter send goes to rank 3 */
    s = vfix_ring(P, per, 0, 0);
    step(s, 1, vfix_ring_idx(P, 0, 0, 1, 0))->peer = 3;
    snprintf(what, sizeof(what), "P=%d changed peer", P);
    expect_finding(s, "unmatched", 1, vfix_ring_idx(P, 0, 0, 1, 0), what);
    cs_sched_destroy(s);

    /* every rank receives before its first send: the ring closes a cycle */
    s = vfix_ring(P, per, 0, VFIX_RECV_FIRST);
    snprintf(what, sizeof(what), "P=%d recv-first cycle", P);
    {
        cs_verify_report_t rep;
        int st = cs_verify(s, NULL, &rep, NULL);
        const cs_finding_t *f = find(&rep, "deadlock", 0, ANY_STEP);
        CS_TEST_CHECK(st == CS_ERR_VERIFY && f != NULL, "%s: deadlock found", what);
        if (f != NULL) {
            CS_TEST_CHECK(f->step == 1 || f->step == 2, "%s: step %lld", what, (long long)f->step);
            CS_TEST_CHECK(strstr(f->msg, "which") && strstr(f->msg, "the first"), "%s: %s",
                          what, f->msg);
        } else {
            dump(&rep);
        }
        /* the cycle is reported once, not once per stuck step */
        uint32_t nd = 0;
        for (uint32_t i = 0; i < rep.n; i++)
            nd += strcmp(rep.findings[i].kind, "deadlock") == 0;
        CS_TEST_CHECK(nd == 1, "%s: %u deadlock findings", what, nd);
        cs_verify_report_fini(&rep);
    }
    cs_sched_destroy(s);

    /* remove a dependency: rank 2's allgather recv 1 may overwrite the
     * segment while the reduce-scatter send still reads it */
    s = vfix_ring(P, per, 0, 0);
    step(s, 2, vfix_ring_idx(P, 0, 1, 1, 1))->ndeps = 0;
    snprintf(what, sizeof(what), "P=%d removed dependency", P);
    expect_finding(s, "race", 2, vfix_ring_idx(P, 0, 1, 1, 1), what);
    cs_sched_destroy(s);

    /* a receive of too few chunks */
    s = vfix_ring(P, per, 0, 0);
    step(s, 2, vfix_ring_idx(P, 0, 0, 0, 1))->dst.n = 1;
    snprintf(what, sizeof(what), "P=%d short receive", P);
    expect_finding(s, "size", 2, vfix_ring_idx(P, 0, 0, 0, 1), what);
    cs_sched_destroy(s);

    /* declared in place but the schedule reads `in` */
    s = vfix_ring(P, per, 0, 0);
    s->desc.inplace = 1;
    snprintf(what, sizeof(what), "P=%d in place touching in", P);
    expect_finding(s, "inplace", 1, 0, what);
    cs_sched_destroy(s);
}

static void mutate_others(void)
{
    /* allgather: rank 1 receives rank 0's block into block 2's place */
    cs_sched_t *s = direct_allgather(4);
    for (uint32_t i = 0; i < s->ranks[1].nsteps; i++) {
        cs_step_t *st = step(s, 1, i);
        if (st->kind == CS_STEP_RECV && st->peer == 0)
            st->dst.off = 4;
    }
    expect_finding(s, "missing", 1, -1, "allgather wrong block: block 0 never written");
    expect_finding(s, "race", 1, ANY_STEP, "allgather wrong block: two receives into block 2");
    cs_sched_destroy(s);

    /* reduce: one contribution sent and received twice */
    s = linear_reduce(4, 0);
    {
        uint32_t last = s->ranks[0].nsteps - 1;
        cs_send(s, 2, 0, 0, cs_rng(CS_BUF_IN, 0, 2), NULL, 0);
        uint32_t dep = last - 1;
        int64_t rr = cs_rrecv(s, 0, 2, 0, cs_rng(2, 0, 2), &dep, 1);
        /* the final copy must come after: move it by making it a nop and
         * appending a new one */
        step(s, 0, last)->kind = CS_STEP_NOP;
        dep = (uint32_t)rr;
        cs_copy(s, 0, cs_rng(2, 0, 2), cs_rng(CS_BUF_OUT, 0, 2), &dep, 1);
        expect_finding(s, "twice", 0, rr, "reduce with a contribution twice");
    }
    cs_sched_destroy(s);

    /* broadcast: a non-root rank forwards its undefined input */
    s = linear_bcast(4, 0, 0);
    cs_send(s, 3, 1, 1, cs_rng(CS_BUF_IN, 0, 3), NULL, 0);
    cs_recv(s, 1, 3, 1, cs_rng(CS_BUF_OUT, 0, 3), NULL, 0);
    expect_finding(s, "uninit", 3, s->ranks[3].nsteps - 1, "broadcast: non-root in is empty");
    cs_sched_destroy(s);

    /* alltoall: rank 2 sends block 0 where block 1 belongs (shape-compatible
     * chunk, wrong data): rank 1 ends with the wrong chunk */
    s = direct_alltoall(3);
    for (uint32_t i = 0; i < s->ranks[2].nsteps; i++) {
        cs_step_t *st = step(s, 2, i);
        if (st->kind == CS_STEP_SEND && st->peer == 1)
            st->src.off = 0;
    }
    expect_finding(s, "wrong-chunk", 1, -1, "alltoall wrong block");
    cs_sched_destroy(s);

    /* many findings: only max_findings are stored, all are counted */
    s = vfix_ring(9, 1, 0, 0);
    for (int r = 0; r < 9; r++)
        step(s, r, 0)->kind = CS_STEP_NOP;
    {
        cs_verify_report_t rep;
        cs_verify_opts_t opts = {.max_findings = 5};
        int st = cs_verify(s, &opts, &rep, NULL);
        CS_TEST_CHECK(st == CS_ERR_VERIFY && rep.n == 5 && rep.total > 5,
                      "cap: status %d stored %u total %llu", st, rep.n,
                      (unsigned long long)rep.total);
        cs_verify_report_fini(&rep);
    }
    cs_sched_destroy(s);
}

/* A rank DAG wider than the chain limit: the race check falls back to the
 * depth-first search; same answers. */
static void test_wide(void)
{
    int P = 150;
    cs_sched_t *s = vfix_ring(P, 1, 0, 0);
    expect_ok(s, "wide ring");
    step(s, 5, vfix_ring_idx(P, 0, 1, 7, 1))->ndeps = 0;
    expect_finding(s, "race", 5, vfix_ring_idx(P, 0, 1, 7, 1), "wide ring removed dependency");
    cs_sched_destroy(s);
}

int main(void)
{
    test_correct();
    test_wide();
    test_single_rank();
    mutate_ring(4);
    mutate_ring(7);
    mutate_others();
    return cs_test_finish();
}
