/*
 * algo_test.h - helpers of the algorithm tests (the matrix, the property
 * files and the scale test), all through the registry API of cs_algo.h:
 *
 *   at_find(coll, name)                  the registered algorithm (a missing
 *                                        one is a recorded failure)
 *   at_build(a, P, root, inplace, params, &s, &err)
 *                                        build with "k=v,..." parameters,
 *                                        returns the status, records nothing
 *   at_build_ok(coll, name, P, root, inplace, params)
 *                                        build; a failure is recorded, NULL
 *   at_verify(s, what)                   1 when the verifier accepts s
 *   at_interp(s, dt, op, count, what)    1 when the reference interpreter
 *                                        computes exact results
 *   at_cost(coll, name, P, bytes, &m)    the closed-form cost with default
 *                                        parameters (NAN when missing)
 *   at_count(s, rank, kind)              steps of one kind on a rank
 *   at_sends(s, &min, &max)              fewest and most sends of a rank
 */
#ifndef ALGO_TEST_H
#define ALGO_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cs_algo.h"
#include "cs_dtype.h"
#include "cs_interp.h"
#include "cs_test.h"
#include "cs_verify.h"

static inline const cs_algo_t *at_find(cs_coll_t coll, const char *name)
{
    const cs_algo_t *a = cs_algo_find(coll, name);
    CS_TEST_CHECK(a != NULL, "%s %s is not registered", cs_coll_name(coll), name);
    return a;
}

/* Build a on P ranks; *out is set only on success.  The root is ignored
 * (0) for collectives without one. */
static inline int at_build(const cs_algo_t *a, int P, int root, int inplace, const char *params,
                           cs_sched_t **out, cs_err_t *err)
{
    cs_coll_desc_t d = {a->coll, P, cs_coll_has_root(a->coll) ? root : 0, inplace};
    cs_params_t p;
    cs_params_init(&p);
    cs_err_clear(err);
    if (params != NULL && cs_params_parse(&p, params, err) != CS_OK)
        return err->code;
    return cs_algo_build(a, &d, &p, out, err);
}

static inline cs_sched_t *at_build_ok(cs_coll_t coll, const char *name, int P, int root,
                                      int inplace, const char *params)
{
    const cs_algo_t *a = at_find(coll, name);
    cs_sched_t *s = NULL;
    cs_err_t err = {0};
    if (a == NULL)
        return NULL;
    int st = at_build(a, P, root, inplace, params, &s, &err);
    CS_TEST_CHECK(st == CS_OK && s != NULL, "%s %s P=%d root=%d inplace=%d %s: build %s: %s",
                  cs_coll_name(coll), name, P, root, inplace, params ? params : "",
                  cs_status_name(st), err.msg);
    return st == CS_OK ? s : NULL;
}

static inline int at_verify(const cs_sched_t *s, const char *what)
{
    cs_verify_report_t rep = {0};
    cs_err_t err = {0};
    int st = cs_verify(s, NULL, &rep, &err);
    CS_TEST_CHECK(st == CS_OK, "%s: verify %s: %s (%llu findings%s%s)", what, cs_status_name(st),
                  err.msg, (unsigned long long)rep.total, rep.n ? ", first: " : "",
                  rep.n ? rep.findings[0].msg : "");
    cs_verify_report_fini(&rep);
    return st == CS_OK;
}

static inline int at_interp(const cs_sched_t *s, cs_dtype_t dt, cs_op_t op, uint64_t count,
                            const char *what)
{
    cs_interp_result_t res = {0};
    cs_err_t err = {0};
    int st = cs_interp_run(s, dt, op, count, &res, &err);
    CS_TEST_CHECK(st == CS_OK && res.wrong == 0,
                  "%s: interp %s %s count %llu: %s %s, %llu wrong (first rank %d index %llu)",
                  what, cs_dtype_name(dt), cs_op_name(op), (unsigned long long)count,
                  cs_status_name(st), err.msg, (unsigned long long)(st == CS_OK ? res.wrong : 0),
                  st == CS_OK ? res.first_bad_rank : -1,
                  (unsigned long long)(st == CS_OK ? res.first_bad_index : 0));
    return st == CS_OK && res.wrong == 0;
}

static inline double at_cost(cs_coll_t coll, const char *name, int P, double bytes,
                             const cs_ab_model_t *m)
{
    const cs_algo_t *a = at_find(coll, name);
    cs_coll_desc_t d = {coll, P, 0, 0};
    cs_params_t p;
    cs_params_init(&p);
    return a != NULL && a->cost != NULL ? a->cost(&d, &p, bytes, m) : NAN;
}

static inline uint64_t at_count(const cs_sched_t *s, int rank, int kind)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < s->ranks[rank].nsteps; i++)
        n += s->ranks[rank].steps[i].kind == kind;
    return n;
}

static inline void at_sends(const cs_sched_t *s, uint64_t *min, uint64_t *max)
{
    *min = UINT64_MAX;
    *max = 0;
    for (int r = 0; r < s->desc.nranks; r++) {
        uint64_t n = at_count(s, r, CS_STEP_SEND);
        *min = n < *min ? n : *min;
        *max = n > *max ? n : *max;
    }
}

/* An allreduce generator refuses (name, P, params) with status want_st and a
 * message naming want_msg, building nothing. */
static inline void at_check_error(const char *name, int P, const char *params, int want_st,
                                  const char *want_msg)
{
    const cs_algo_t *a = at_find(CS_COLL_ALLREDUCE, name);
    cs_sched_t *s = NULL;
    cs_err_t err;
    if (a == NULL)
        return;
    int st = at_build(a, P, 0, 0, params, &s, &err);
    CS_TEST_CHECK(st == want_st && s == NULL && strstr(err.msg, want_msg) != NULL,
                  "%s P=%d %s: %s '%s', want %s naming '%s'", name, P, params,
                  cs_status_name(st), err.msg, cs_status_name(want_st), want_msg);
    cs_sched_destroy(s);
}

#endif /* ALGO_TEST_H */
