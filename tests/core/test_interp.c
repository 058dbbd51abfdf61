/* Reference interpreter on small hand-built schedules: a 2-rank allreduce
 * (out of place and in place), a 3-rank pipelined broadcast, a 3-rank
 * allgather with uneven chunks; counts 0, 1 and more; broken schedules are
 * caught (wrong numbers reported, unmatched steps refused). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cs_interp.h"
#include "cs_test.h"

#define REQUIRE_V(cond)                          \
    do {                                         \
        CS_TEST_CHECK(cond, "required");         \
        if (!(cond))                             \
            return;                              \
    } while (0)

/* 2 ranks, 2 chunks: reduce-scatter then allgather.  `broken` drops the
 * reduction on rank 1 (plain recv instead of rrecv). */
static cs_sched_t *allreduce2(int inplace, int broken)
{
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, 2, 0, inplace};
    cs_sched_t *s = cs_sched_create(&d, 2, NULL);
    if (!s)
        return NULL;
    for (int r = 0; r < 2; r++) {
        int p = 1 - r;
        uint32_t c = 0;
        uint32_t ndep = 0;
        if (!inplace) {
            c = (uint32_t)cs_copy(s, r, cs_rng(CS_BUF_IN, 0, 2), cs_rng(CS_BUF_OUT, 0, 2), NULL, 0);
            ndep = 1;
        }
        uint32_t a = (uint32_t)cs_send(s, r, p, 0, cs_rng(CS_BUF_OUT, (uint32_t)p, 1), &c, ndep);
        uint32_t b = (uint32_t)((broken && r == 1 ? cs_recv : cs_rrecv)(
            s, r, p, 0, cs_rng(CS_BUF_OUT, (uint32_t)r, 1), &c, ndep));
        uint32_t ab[2] = {a, b};
        cs_send(s, r, p, 0, cs_rng(CS_BUF_OUT, (uint32_t)r, 1), ab, 2);
        cs_recv(s, r, p, 0, cs_rng(CS_BUF_OUT, (uint32_t)p, 1), &a, 1);
    }
    if (cs_sched_status(s) != CS_OK) {
        cs_sched_destroy(s);
        return NULL;
    }
    return s;
}

/* 3 ranks, root 1, chain 1 -> 2 -> 0, pipelined over C chunks. */
static cs_sched_t *bcast3(uint32_t C, int inplace)
{
    cs_coll_desc_t d = {CS_COLL_BROADCAST, 3, 1, inplace};
    cs_sched_t *s = cs_sched_create(&d, C, NULL);
    if (!s)
        return NULL;
    uint32_t c = 0, nd = 0;
    if (!inplace) {
        c = (uint32_t)cs_copy(s, 1, cs_rng(CS_BUF_IN, 0, C), cs_rng(CS_BUF_OUT, 0, C), NULL, 0);
        nd = 1;
    }
    for (uint32_t i = 0; i < C; i++) {
        cs_send(s, 1, 2, 0, cs_rng(CS_BUF_OUT, i, 1), &c, nd);
        uint32_t rv = (uint32_t)cs_recv(s, 2, 1, 0, cs_rng(CS_BUF_OUT, i, 1), NULL, 0);
        cs_send(s, 2, 0, 0, cs_rng(CS_BUF_OUT, i, 1), &rv, 1);
        cs_recv(s, 0, 2, 0, cs_rng(CS_BUF_OUT, i, 1), NULL, 0);
    }
    if (cs_sched_status(s) != CS_OK) {
        cs_sched_destroy(s);
        return NULL;
    }
    return s;
}

/* 3 ranks, 2 chunks per block: direct allgather through a scratch copy. */
static cs_sched_t *allgather3(void)
{
    cs_coll_desc_t d = {CS_COLL_ALLGATHER, 3, 0, 0};
    cs_sched_t *s = cs_sched_create(&d, 6, NULL);
    if (!s)
        return NULL;
    for (int r = 0; r < 3; r++) {
        int tmp = cs_sched_add_buffer(s, r, "tmp", (uint32_t)r * 2, 2);
        uint32_t c = (uint32_t)cs_copy(s, r, cs_rng(CS_BUF_IN, 0, 2), cs_rng(tmp, 0, 2), NULL, 0);
        cs_copy(s, r, cs_rng(tmp, 0, 2), cs_rng(CS_BUF_OUT, (uint32_t)r * 2, 2), &c, 1);
        for (int q = 0; q < 3; q++) {
            if (q == r)
                continue;
            cs_send(s, r, q, 1, cs_rng(CS_BUF_IN, 0, 2), NULL, 0);
            cs_recv(s, r, q, 1, cs_rng(CS_BUF_OUT, (uint32_t)q * 2, 2), NULL, 0);
        }
    }
    if (cs_sched_status(s) != CS_OK) {
        cs_sched_destroy(s);
        return NULL;
    }
    return s;
}

static void run_ok(const cs_sched_t *s, cs_dtype_t dt, cs_op_t op, uint64_t count, const char *what)
{
    cs_interp_result_t res;
    memset(&res, 0x5a, sizeof(res));
    cs_err_t err = {0};
    int st = cs_interp_run(s, dt, op, count, &res, &err);
    CS_TEST_CHECK(st == CS_OK, "%s %s/%s count %llu: %s", what, cs_dtype_name(dt), cs_op_name(op),
                  (unsigned long long)count, err.msg);
    CS_TEST_CHECK(st != CS_OK || (res.wrong == 0 && res.first_bad_rank == -1 &&
                                  res.first_bad_index == CS_TEST_NO_INDEX && res.max_abs_err == 0),
                  "%s %s/%s count %llu: %llu wrong, first rank %d index %llu", what,
                  cs_dtype_name(dt), cs_op_name(op), (unsigned long long)count,
                  (unsigned long long)res.wrong, res.first_bad_rank,
                  (unsigned long long)res.first_bad_index);
}

static void test_allreduce2(void)
{
    static const uint64_t counts[] = {0, 1, 2, 3, 17, 1000};
    for (int inplace = 0; inplace < 2; inplace++) {
        cs_sched_t *s = allreduce2(inplace, 0);
        CS_TEST_CHECK(s != NULL, "build allreduce2");
        if (!s)
            continue;
        for (int t = 0; t < CS_DT_COUNT; t++)
            for (int o = 0; o < CS_OP_COUNT; o++)
                for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
                    run_ok(s, (cs_dtype_t)t, (cs_op_t)o, counts[c],
                           inplace ? "allreduce2 inplace" : "allreduce2");
        cs_sched_destroy(s);
    }
    /* a broken schedule: rank 1 overwrites instead of reducing chunk 1 */
    cs_sched_t *s = allreduce2(0, 1);
    REQUIRE_V(s != NULL);
    cs_interp_result_t res;
    cs_err_t err = {0};
    int st = cs_interp_run(s, CS_DT_F32, CS_OP_MAX, 10, &res, &err);
    /* chunk 1 (elements 5..9) is rank 0's data on both ranks */
    CS_TEST_CHECK(st == CS_OK && res.wrong > 0 && res.wrong <= 10 && res.first_bad_rank == 0 &&
                      res.first_bad_index >= 5 && res.first_bad_index < 10 && res.max_abs_err > 0,
                  "broken allreduce: st %d wrong %llu rank %d index %llu", st,
                  (unsigned long long)res.wrong, res.first_bad_rank,
                  (unsigned long long)res.first_bad_index);
    st = cs_interp_run(s, CS_DT_F32, CS_OP_MAX, 0, &res, &err);
    CS_TEST_CHECK(st == CS_OK && res.wrong == 0, "count 0: nothing can be wrong");
    cs_sched_destroy(s);
}

static void test_bcast3(void)
{
    static const uint64_t counts[] = {0, 1, 2, 5, 64, 999};
    for (int inplace = 0; inplace < 2; inplace++) {
        cs_sched_t *s = bcast3(4, inplace);
        CS_TEST_CHECK(s != NULL, "build bcast3");
        if (!s)
            continue;
        for (int t = 0; t < CS_DT_COUNT; t++)
            for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
                run_ok(s, (cs_dtype_t)t, CS_OP_MIN, counts[c], inplace ? "bcast3 inplace" : "bcast3");
        cs_sched_destroy(s);
    }
    /* the root's out never written: every rank holds poison */
    cs_coll_desc_t d = {CS_COLL_BROADCAST, 3, 1, 0};
    cs_sched_t *s = cs_sched_create(&d, 1, NULL);
    REQUIRE_V(s != NULL);
    cs_send(s, 1, 2, 0, cs_rng(CS_BUF_IN, 0, 1), NULL, 0);
    cs_recv(s, 2, 1, 0, cs_rng(CS_BUF_OUT, 0, 1), NULL, 0);
    cs_send(s, 2, 0, 0, cs_rng(CS_BUF_OUT, 0, 1), NULL, 0);
    cs_recv(s, 0, 2, 0, cs_rng(CS_BUF_OUT, 0, 1), NULL, 0);
    cs_interp_result_t res;
    int st = cs_interp_run(s, CS_DT_I32, CS_OP_MAX, 7, &res, NULL);
    CS_TEST_CHECK(st == CS_OK && res.wrong == 7 && res.first_bad_rank == 1 &&
                      res.first_bad_index == 0,
                  "root out unwritten: wrong %llu rank %d", (unsigned long long)res.wrong,
                  res.first_bad_rank);
    /* the last receive removed: one send is unmatched, the run is refused */
    cs_sched_destroy(s);
    s = cs_sched_create(&d, 1, NULL);
    REQUIRE_V(s != NULL);
    cs_send(s, 1, 2, 0, cs_rng(CS_BUF_IN, 0, 1), NULL, 0);
    cs_recv(s, 2, 1, 0, cs_rng(CS_BUF_OUT, 0, 1), NULL, 0);
    cs_send(s, 2, 0, 0, cs_rng(CS_BUF_OUT, 0, 1), NULL, 0);
    cs_err_t err = {0};
    memset(&res, 0x5a, sizeof(res));
    cs_interp_result_t before = res;
    st = cs_interp_run(s, CS_DT_I32, CS_OP_MAX, 7, &res, &err);
    CS_TEST_CHECK(st == CS_ERR_VERIFY && err.code == CS_ERR_VERIFY && err.msg[0] != '\0' &&
                      memcmp(&res, &before, sizeof(res)) == 0,
                  "unmatched send: st %d, %s", st, err.msg);
    cs_sched_destroy(s);
}

static void test_allgather3(void)
{
    cs_sched_t *s = allgather3();
    REQUIRE_V(s != NULL);
    for (uint64_t count = 0; count < 8; count++)
        for (int t = 0; t < CS_DT_COUNT; t++)
            run_ok(s, (cs_dtype_t)t, CS_OP_MAX, count, "allgather3");
    /* lower level: caller memory, count 3 per block (chunks of 1 and 2) */
    int64_t in[3][3], out[3][9];
    void *pin[3], *pout[3];
    for (int r = 0; r < 3; r++) {
        for (int j = 0; j < 3; j++)
            in[r][j] = 100 * r + j;
        memset(out[r], 0, sizeof(out[r]));
        pin[r] = in[r];
        pout[r] = out[r];
    }
    CS_TEST_CHECK(cs_interp_buf_elems(s, 1, CS_BUF_IN, 3) == 3 &&
                      cs_interp_buf_elems(s, 1, CS_BUF_OUT, 3) == 9 &&
                      cs_interp_buf_elems(s, 1, 2, 3) == 3 && cs_interp_buf_elems(s, 1, 3, 3) == 0,
                  "buffer sizes");
    int st = cs_interp_exec(s, CS_DT_I64, CS_OP_SUM, 3, pin, pout, NULL);
    int bad = 0;
    for (int r = 0; r < 3; r++)
        for (int j = 0; j < 9; j++)
            bad += out[r][j] != 100 * (j / 3) + j % 3;
    CS_TEST_CHECK(st == CS_OK && bad == 0, "exec on caller memory: st %d, %d wrong", st, bad);
    cs_sched_destroy(s);
}

/* P ranks, direct allreduce: everyone sends its input to everyone and
 * combines with rrecv into out after a copy.  `skip` makes rank P-1 receive
 * rank 0's input with a plain recv (overwriting instead of combining). */
static cs_sched_t *direct_allreduce(int P, int skip)
{
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, P, 0, 0};
    cs_sched_t *s = cs_sched_create(&d, 2, NULL);
    if (!s)
        return NULL;
    for (int r = 0; r < P; r++) {
        uint32_t last = (uint32_t)cs_copy(s, r, cs_rng(CS_BUF_IN, 0, 2), cs_rng(CS_BUF_OUT, 0, 2),
                                          NULL, 0);
        for (int q = 0; q < P; q++) {
            if (q == r)
                continue;
            cs_send(s, r, q, 0, cs_rng(CS_BUF_IN, 0, 2), NULL, 0);
            int plain = skip && r == P - 1 && q == 0;
            last = (uint32_t)(plain ? cs_recv : cs_rrecv)(s, r, q, 0, cs_rng(CS_BUF_OUT, 0, 2),
                                                         &last, 1);
        }
    }
    if (cs_sched_status(s) != CS_OK) {
        cs_sched_destroy(s);
        return NULL;
    }
    return s;
}

static void test_direct(void)
{
    for (int P = 1; P <= 9; P += 4) {
        cs_sched_t *s = direct_allreduce(P, 0);
        REQUIRE_V(s != NULL);
        for (int o = 0; o < CS_OP_COUNT; o++)
            for (uint64_t count = 0; count < 6; count += 5)
                run_ok(s, CS_DT_F16, (cs_op_t)o, count, "direct allreduce");
        cs_sched_destroy(s);
    }
    /* rank 8 overwrites its partial sum with rank 0's input: only rank 8
     * can be wrong (the vector-wide expected values are used for P >= 4) */
    cs_sched_t *s = direct_allreduce(9, 1);
    REQUIRE_V(s != NULL);
    cs_interp_result_t res;
    int st = cs_interp_run(s, CS_DT_F64, CS_OP_SUM, 50, &res, NULL);
    CS_TEST_CHECK(st == CS_OK && res.wrong > 0 && res.wrong <= 50 && res.first_bad_rank == 8,
                  "broken direct allreduce: wrong %llu rank %d", (unsigned long long)res.wrong,
                  res.first_bad_rank);
    cs_sched_destroy(s);
}

int main(void)
{
    test_allreduce2();
    test_bcast3();
    test_allgather3();
    test_direct();
    return cs_test_finish();
}
