/*
 * Switch operations on real numbers: builder-made schedules of an in-switch
 * allreduce (one switch allreduce over the whole vector, also in place) and
 * of NCCL's NVLS allreduce (member i: a switch reduce of every slice j, the
 * reader of slice i, then a switch multicast of every slice, the writer of
 * slice i) for group sizes 1..9, 16, 17, 64, 72, every element type and
 * operator, several counts: the interpreter's results equal the naive
 * computation (cs_interp_run checks them) and the verifier accepts them.
 * A broken NVLS schedule (multicasting the slice's input instead of its
 * reduction) must come out wrong.
 */
#include <string.h>

#include "cs_interp.h"
#include "cs_sched.h"
#include "cs_test.h"
#include "cs_verify.h"

static cs_sched_t *in_switch(int P, int inplace)
{
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, P, 0, inplace};
    cs_sched_t *s = cs_sched_create(&d, 1, NULL);
    int32_t m[128];
    for (int r = 0; r < P; r++)
        m[r] = r;
    int g = cs_sched_add_group(s, "sw", m, (uint32_t)P);
    cs_range_t src = cs_rng(inplace ? CS_BUF_OUT : CS_BUF_IN, 0, 1), dst = cs_rng(CS_BUF_OUT, 0, 1);
    for (int r = 0; r < P; r++)
        cs_switch(s, r, CS_SW_ALLREDUCE, g, 0, &src, &dst, NULL, 0);
    return s;
}

/* broken: the writer multicasts in[i] instead of the reduced out[i] */
static cs_sched_t *nvls(int P, int broken)
{
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, P, 0, 0};
    cs_sched_t *s = cs_sched_create(&d, (uint32_t)P, NULL);
    int32_t m[128];
    for (int r = 0; r < P; r++)
        m[r] = r;
    int g = cs_sched_add_group(s, "nvl", m, (uint32_t)P);
    for (int r = 0; r < P; r++) {
        uint32_t mine = 0;
        for (int j = 0; j < P; j++) {
            cs_range_t in = cs_rng(CS_BUF_IN, (uint32_t)j, 1), out = cs_rng(CS_BUF_OUT, (uint32_t)j, 1);
            int64_t x = cs_switch(s, r, CS_SW_REDUCE, g, 0, &in, j == r ? &out : NULL, NULL, 0);
            if (j == r)
                mine = (uint32_t)x;
        }
        for (int j = 0; j < P; j++) {
            cs_range_t src = cs_rng(broken ? CS_BUF_IN : CS_BUF_OUT, (uint32_t)j, 1);
            cs_range_t out = cs_rng(CS_BUF_OUT, (uint32_t)j, 1);
            if (j == r)
                cs_switch(s, r, CS_SW_MULTICAST, g, 1, &src, broken ? &out : NULL, &mine, 1);
            else
                cs_switch(s, r, CS_SW_MULTICAST, g, 1, NULL, &out, NULL, 0);
        }
    }
    return s;
}

static void run_all(const cs_sched_t *s, int P, const char *what)
{
    const uint64_t counts[] = {0, 1, (uint64_t)P * 3 + 1, 1000};
    for (int t = 0; t < CS_DT_COUNT; t++)
        for (int o = 0; o < CS_OP_COUNT; o++)
            for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
                cs_interp_result_t res;
                cs_err_t err = {0};
                int st = cs_interp_run(s, (cs_dtype_t)t, (cs_op_t)o, counts[c], &res, &err);
                CS_TEST_CHECK(st == CS_OK && res.wrong == 0,
                              "%s P=%d %s/%s count %llu: %s, %llu wrong (rank %d)", what, P,
                              cs_dtype_name((cs_dtype_t)t), cs_op_name((cs_op_t)o),
                              (unsigned long long)counts[c], err.msg,
                              (unsigned long long)(st == CS_OK ? res.wrong : 0),
                              st == CS_OK ? res.first_bad_rank : -1);
            }
}

static void verify_ok(const cs_sched_t *s, int P, const char *what)
{
    cs_verify_report_t rep;
    cs_err_t err = {0};
    int st = cs_verify(s, NULL, &rep, &err);
    CS_TEST_CHECK(st == CS_OK, "%s P=%d: %s", what, P, err.msg);
    cs_verify_report_fini(&rep);
}

int main(void)
{
    static const int sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 64, 72};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        int P = sizes[k];
        for (int inplace = 0; inplace < 2; inplace++) {
            cs_sched_t *s = in_switch(P, inplace);
            CS_TEST_REQUIRE(cs_sched_status(s) == CS_OK, "in-switch P=%d: %s", P, s->err.msg);
            verify_ok(s, P, inplace ? "in-switch allreduce in place" : "in-switch allreduce");
            run_all(s, P, inplace ? "in-switch allreduce in place" : "in-switch allreduce");
            cs_sched_destroy(s);
        }
        cs_sched_t *s = nvls(P, 0);
        CS_TEST_REQUIRE(cs_sched_status(s) == CS_OK, "nvls P=%d: %s", P, s->err.msg);
        verify_ok(s, P, "nvls");
        run_all(s, P, "nvls");
        cs_sched_destroy(s);
    }
    /* the broken NVLS schedule computes the wrong thing, and the verifier says so */
    cs_sched_t *s = nvls(4, 1);
    cs_interp_result_t res;
    cs_err_t err = {0};
    int st = cs_interp_run(s, CS_DT_I32, CS_OP_SUM, 100, &res, &err);
    CS_TEST_CHECK(st == CS_OK && res.wrong > 0, "broken nvls: %s, %llu wrong", err.msg,
                  (unsigned long long)(st == CS_OK ? res.wrong : 0));
    cs_verify_report_t rep;
    CS_TEST_CHECK(cs_verify(s, NULL, &rep, &err) == CS_ERR_VERIFY && rep.n > 0 &&
                      strcmp(rep.findings[0].kind, "missing") == 0,
                  "broken nvls: verifier: %s", err.msg);
    cs_verify_report_fini(&rep);
    cs_sched_destroy(s);
    return cs_test_finish();
}
