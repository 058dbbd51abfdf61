/*
 * test_msccl_roundtrip.c - export every registry algorithm of allreduce,
 * reduce-scatter, allgather and alltoall at several P as MSCCL XML, import
 * it back, and check that the import is equivalent to the schedule:
 *   - it verifies and the reference interpreter gets every element right;
 *   - the same messages: per (rank, peer, channel), the same sequence of
 *     message sizes (chunks) and chunk positions;
 *   - the same dependencies: every step waits, directly or not, for the
 *     steps its original waited for (sends excepted: MSCCL's sends are
 *     eager, docs/msccl.md);
 *   - every exported step is found again through the import's origins at
 *     the place the export reported;
 * and that a second round (export the import, import again) keeps the
 * messages and verifies.
 * Broadcast and reduce are refused with a message (MSCCL has no root).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_algo.h"
#include "cs_interp.h"
#include "cs_msccl.h"
#include "cs_test.h"
#include "cs_verify.h"

static char *export_mem(const cs_sched_t *s, cs_msccl_place_t ***places, size_t *len,
                        cs_err_t *err)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    cs_msccl_write_opts_t wo = {0};
    int st = cs_msccl_write(s, &wo, f, places, err);
    fclose(f);
    if (st != CS_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Position of the first chunk of a range (chunk shape within its block). */
static uint32_t pos(const cs_sched_t *s, int r, cs_range_t g)
{
    return (s->ranks[r].bufs[g.buf].base + g.off) % cs_sched_block_chunks(s);
}

/* Messages of rank r to peer on chan: "n@pos n@pos ..." */
static void messages(const cs_sched_t *s, int r, int peer, int chan, int recv, char *out,
                     size_t len)
{
    size_t o = 0;
    out[0] = '\0';
    const cs_rank_sched_t *rk = &s->ranks[r];
    for (uint32_t i = 0; i < rk->nsteps; i++) {
        const cs_step_t *st = &rk->steps[i];
        int is_recv = st->kind == CS_STEP_RECV || st->kind == CS_STEP_RRECV;
        if ((recv ? !is_recv : st->kind != CS_STEP_SEND) || st->peer != peer || st->chan != chan)
            continue;
        cs_range_t g = recv ? st->dst : st->src;
        o += (size_t)snprintf(out + o, o < len ? len - o : 0, "%u@%u%s ", g.n, pos(s, r, g),
                              st->kind == CS_STEP_RRECV ? "+" : "");
    }
}

/* anc[j]: 1 when imported step j is step i or an ancestor of it. */
static void ancestors(const cs_rank_sched_t *rk, uint32_t i, uint8_t *anc)
{
    memset(anc, 0, rk->nsteps);
    anc[i] = 1;
    for (uint32_t j = i + 1; j-- > 0;) {
        if (!anc[j])
            continue;
        const uint32_t *d = cs_step_deps(rk, &rk->steps[j]);
        for (uint32_t k = 0; k < rk->steps[j].ndeps; k++)
            anc[d[k]] = 1;
    }
}

static int same_origin(const cs_msccl_origin_t *o, cs_msccl_place_t p)
{
    return o->tb == p.tb && o->step == p.step;
}

/* Effective (nop-free) dependencies of step i of s, into out; returns count. */
static uint32_t eff_deps(const cs_rank_sched_t *rk, uint32_t i, uint32_t *out, uint32_t n)
{
    const uint32_t *d = cs_step_deps(rk, &rk->steps[i]);
    for (uint32_t k = 0; k < rk->steps[i].ndeps; k++) {
        if (rk->steps[d[k]].kind == CS_STEP_NOP)
            n = eff_deps(rk, d[k], out, n);
        else
            out[n++] = d[k];
    }
    return n;
}

static void check(const cs_algo_t *a, int P, int inplace)
{
    cs_coll_desc_t d = {a->coll, P, 0, inplace};
    cs_params_t params;
    cs_params_init(&params);
    cs_sched_t *s = NULL;
    cs_err_t err = {0};
    if (cs_algo_build(a, &d, &params, &s, &err) != CS_OK)
        return; /* unsupported at this P: the matrix tests say so */
    const char *name = a->name, *coll = cs_coll_name(a->coll);
    cs_msccl_place_t **pl = NULL;
    size_t len = 0;
    char *xml = export_mem(s, &pl, &len, &err);
    CS_TEST_CHECK(xml != NULL, "%s %s P=%d: export: %s", coll, name, P, err.msg);
    cs_msccl_t *m = NULL;
    if (xml) {
        cs_msccl_opts_t mo = {.inplace = inplace};
        int st = cs_msccl_parse(xml, len, "export.xml", &mo, &m, &err);
        CS_TEST_CHECK(st == CS_OK, "%s %s P=%d: import: %s", coll, name, P, err.msg);
    }
    if (m == NULL)
        goto out;
    const cs_sched_t *t = m->sched;
    CS_TEST_CHECK(t->desc.coll == s->desc.coll && t->desc.nranks == P &&
                      t->nchunks == s->nchunks && t->desc.inplace == inplace,
                  "%s %s P=%d: header differs", coll, name, P);
    cs_verify_report_t rep = {0};
    int vst = cs_verify(t, NULL, &rep, &err);
    CS_TEST_CHECK(vst == CS_OK, "%s %s P=%d inplace=%d: import does not verify: %s", coll, name,
                  P, inplace, rep.n ? rep.findings[0].msg : err.msg);
    cs_verify_report_fini(&rep);
    uint64_t counts[] = {1, 5, 100};
    for (size_t i = 0; vst == CS_OK && i < 3; i++) {
        cs_interp_result_t res = {0};
        cs_op_t op = cs_coll_blocked(a->coll) && a->coll != CS_COLL_REDUCE_SCATTER ? CS_OP_MAX
                                                                                  : CS_OP_SUM;
        int ist = cs_interp_run(t, CS_DT_I32, op, counts[i], &res, &err);
        CS_TEST_CHECK(ist == CS_OK && res.wrong == 0, "%s %s P=%d count %llu: %llu wrong %s",
                      coll, name, P, (unsigned long long)counts[i],
                      (unsigned long long)res.wrong, ist == CS_OK ? "" : err.msg);
    }
    char m1[8192], m2[8192], m2s[8192];
    for (int r = 0; r < P; r++)
        for (int q = 0; q < P; q++)
            for (int dir = 0; dir < 2; dir++)
                for (int c = 0; c < 4; c++) {
                    messages(s, r, q, c, dir, m1, sizeof(m1));
                    messages(t, r, q, c, dir, m2, sizeof(m2));
                    if (strcmp(m1, m2) != 0) {
                        CS_TEST_CHECK(0, "%s %s P=%d rank %d %s %d chan %d: '%s' became '%s'",
                                      coll, name, P, r, dir ? "from" : "to", q, c, m1, m2);
                        goto deps;
                    }
                }
deps:
    for (int r = 0; r < P; r++) {
        const cs_rank_sched_t *rs = &s->ranks[r], *rt = &t->ranks[r];
        /* first / last imported step of each exported schedule step */
        int64_t *first = malloc((rs->nsteps + 1) * sizeof(int64_t));
        int64_t *last = malloc((rs->nsteps + 1) * sizeof(int64_t));
        uint8_t *anc = malloc(rt->nsteps + 1);
        uint32_t *ed = malloc((rs->ndeps + rs->nsteps + 1) * sizeof(uint32_t) * 4);
        int bad = 0;
        for (uint32_t i = 0; i < rs->nsteps; i++) {
            first[i] = last[i] = -1;
            if (pl[r][i].tb < 0)
                continue;
            for (uint32_t j = 0; j < m->norigin[r]; j++)
                if (same_origin(&m->origin[r][j], pl[r][i])) {
                    if (first[i] < 0)
                        first[i] = j;
                    last[i] = j;
                }
            if (first[i] < 0 && !bad++)
                CS_TEST_CHECK(0, "%s %s P=%d rank %d step %u: not found at tb %d step %d", coll,
                              name, P, r, i, pl[r][i].tb, pl[r][i].step);
        }
        for (uint32_t i = 0; i < rs->nsteps && !bad; i++) {
            if (pl[r][i].tb < 0)
                continue;
            uint32_t n = eff_deps(rs, i, ed, 0);
            ancestors(rt, (uint32_t)first[i], anc);
            for (uint32_t k = 0; k < n; k++) {
                uint32_t dd = ed[k];
                if (rs->steps[dd].kind == CS_STEP_SEND)
                    continue;
                int ok = 0;
                for (int64_t j = first[dd]; j <= last[dd] && !ok; j++)
                    ok = anc[j];
                if (!ok && !bad++)
                    CS_TEST_CHECK(0, "%s %s P=%d rank %d: step %u no longer waits for step %u",
                                  coll, name, P, r, i, dd);
            }
        }
        free(first);
        free(last);
        free(anc);
        free(ed);
    }
    /* A second round (export the import, import it): the same messages,
     * and it verifies. */
    {
        size_t l2 = 0;
        char *x2 = export_mem(t, NULL, &l2, &err);
        cs_msccl_t *m2 = NULL;
        cs_msccl_opts_t mo = {.inplace = inplace};
        CS_TEST_CHECK(x2 && cs_msccl_parse(x2, l2, "x2.xml", &mo, &m2, &err) == CS_OK,
                      "%s %s P=%d: second round: %s", coll, name, P, err.msg);
        for (int r = 0; m2 && r < P; r++)
            for (int q = 0; q < P; q++)
                for (int dir = 0; dir < 2; dir++) {
                    messages(t, r, q, 0, dir, m1, sizeof(m1));
                    messages(m2->sched, r, q, 0, dir, m2s, sizeof(m2s));
                    CS_TEST_CHECK(strcmp(m1, m2s) == 0, "%s %s P=%d: second round changed "
                                  "rank %d's messages", coll, name, P, r);
                }
        if (m2) {
            cs_verify_report_t rep2 = {0};
            CS_TEST_CHECK(cs_verify(m2->sched, NULL, &rep2, &err) == CS_OK,
                          "%s %s P=%d: second round does not verify", coll, name, P);
            cs_verify_report_fini(&rep2);
        }
        free(x2);
        cs_msccl_destroy(m2);
    }
out:
    cs_msccl_destroy(m);
    cs_msccl_places_free(pl, P);
    free(xml);
    cs_sched_destroy(s);
}

int main(void)
{
    static const int Ps[] = {2, 3, 4, 6, 8};
    int n = 0;
    for (int i = 0; i < cs_algo_count(); i++) {
        const cs_algo_t *a = cs_algo_at(i);
        if (cs_algo_switched(a, NULL))
            continue; /* MSCCL has no switch step: export refuses (cli/test_switch.sh) */
        if (a->coll == CS_COLL_BROADCAST || a->coll == CS_COLL_REDUCE) {
            cs_coll_desc_t d = {a->coll, 4, 0, 0};
            cs_params_t params;
            cs_params_init(&params);
            cs_sched_t *s = NULL;
            cs_err_t err = {0};
            if (cs_algo_build(a, &d, &params, &s, &err) == CS_OK) {
                FILE *f = fopen("/dev/null", "w");
                int st = cs_msccl_write(s, NULL, f, NULL, &err);
                fclose(f);
                CS_TEST_CHECK(st == CS_ERR_UNSUPPORTED && strstr(err.msg, "root"),
                              "%s %s: %s", cs_coll_name(a->coll), a->name, err.msg);
            }
            cs_sched_destroy(s);
            continue;
        }
        for (size_t k = 0; k < sizeof(Ps) / sizeof(Ps[0]); k++) {
            check(a, Ps[k], 0);
            if (a->coll != CS_COLL_REDUCE_SCATTER)
                check(a, Ps[k], 1);
        }
        n++;
    }
    CS_TEST_CHECK(n >= 4, "only %d algorithms", n);
    printf("%d algorithms\n", n);
    return cs_test_finish();
}
