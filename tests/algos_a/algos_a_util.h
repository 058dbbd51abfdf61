/*
 * algos_a_util.h - shared checks for the tests of the ring / butterfly /
 * direct generators: build a registered algorithm, verify it, and run the
 * reference interpreter over a list of counts.
 */
#ifndef ALGOS_A_UTIL_H
#define ALGOS_A_UTIL_H

#include <stdio.h>
#include <string.h>

#include "cs_algo.h"
#include "cs_dtype.h"
#include "cs_interp.h"
#include "cs_test.h"
#include "cs_verify.h"

/* Build coll/name on P ranks with "k=v,..." parameters (NULL: none).
 * Returns the schedule or NULL (a failure is recorded). */
static inline cs_sched_t *aa_build(cs_coll_t coll, const char *name, int P, int inplace,
                            const char *params)
{
    const cs_algo_t *a = cs_algo_find(coll, name);
    CS_TEST_CHECK(a != NULL, "%s %s registered", cs_coll_name(coll), name);
    if (a == NULL)
        return NULL;
    cs_coll_desc_t d = {coll, P, 0, inplace};
    cs_params_t p;
    cs_err_t err = {0};
    cs_sched_t *s = NULL;
    cs_params_init(&p);
    if (params != NULL && cs_params_parse(&p, params, &err) != CS_OK) {
        CS_TEST_CHECK(0, "params %s: %s", params, err.msg);
        return NULL;
    }
    int st = cs_algo_build(a, &d, &p, &s, &err);
    CS_TEST_CHECK(st == CS_OK && s != NULL, "%s %s P=%d inplace=%d %s: build %s: %s",
                  cs_coll_name(coll), name, P, inplace, params ? params : "",
                  cs_status_name(st), err.msg);
    return st == CS_OK ? s : NULL;
}

/* Verify; returns 1 when the verifier accepts the schedule. */
static inline int aa_verify(const cs_sched_t *s, const char *what)
{
    cs_verify_report_t rep;
    cs_err_t err = {0};
    int st = cs_verify(s, NULL, &rep, &err);
    CS_TEST_CHECK(st == CS_OK, "%s: verify %s: %s (%llu findings%s%s)", what,
                  cs_status_name(st), err.msg, (unsigned long long)rep.total,
                  rep.n ? ", first: " : "", rep.n ? rep.findings[0].msg : "");
    cs_verify_report_fini(&rep);
    return st == CS_OK;
}

/* Run the interpreter at `count` with (dt, op); returns 1 when all right. */
static inline int aa_interp(const cs_sched_t *s, cs_dtype_t dt, cs_op_t op, uint64_t count,
                     const char *what)
{
    cs_interp_result_t res;
    cs_err_t err = {0};
    int st = cs_interp_run(s, dt, op, count, &res, &err);
    CS_TEST_CHECK(st == CS_OK && res.wrong == 0,
                  "%s: interp %s %s count %llu: %s %s, %llu wrong (first on rank %d)", what,
                  cs_dtype_name(dt), cs_op_name(op), (unsigned long long)count,
                  cs_status_name(st), err.msg, (unsigned long long)(st == CS_OK ? res.wrong : 0),
                  st == CS_OK ? res.first_bad_rank : -1);
    return st == CS_OK && res.wrong == 0;
}

/* The full check of one configuration: build, verify, interpret at the
 * matrix counts with int32 sum and float sum (and int32 max for the
 * data-movement all-gather, whose sum data is mostly zeros). */
static inline void aa_check(cs_coll_t coll, const char *name, int P, int inplace, const char *params)
{
    char what[160];
    snprintf(what, sizeof(what), "%s %s P=%d%s%s%s", cs_coll_name(coll), name, P,
             inplace ? " inplace" : "", params ? " " : "", params ? params : "");
    cs_sched_t *s = aa_build(coll, name, P, inplace, params);
    if (s == NULL)
        return;
    if (aa_verify(s, what)) {
        uint64_t counts[] = {0, 1, (uint64_t)P - 1, (uint64_t)P, (uint64_t)P + 1, 10007};
        for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
            if (i == 2 && P == 1)
                continue; /* same as count 0 */
            int ok = aa_interp(s, CS_DT_I32, CS_OP_SUM, counts[i], what) &&
                     aa_interp(s, CS_DT_F32, CS_OP_SUM, counts[i], what);
            if (ok && coll == CS_COLL_ALLGATHER)
                ok = aa_interp(s, CS_DT_I32, CS_OP_MAX, counts[i], what);
            if (!ok)
                break; /* one report per configuration is enough */
        }
    }
    cs_sched_destroy(s);
}

#endif /* ALGOS_A_UTIL_H */
