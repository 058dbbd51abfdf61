/*
 * cs_algo.h - the algorithm registry: {collective, name, description,
 * parameters, build function, alpha-beta cost}.
 *
 * A generator is a pure function of (collective descriptor, parameters):
 * it builds a schedule with the builder API of core/cs_sched.h and never
 * touches a transport.  Every generator handles every rank count P >= 1, or
 * returns CS_ERR_UNSUPPORTED with a message that says what it does not
 * support.
 */
#ifndef CS_ALGO_H
#define CS_ALGO_H

#include "cs_params.h"
#include "cs_sched.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Alpha-beta model inputs for the closed-form cost. */
typedef struct cs_ab_model {
    double alpha; /* latency per message, seconds */
    double beta;  /* seconds per byte (1 / bandwidth) */
    double gamma; /* seconds per byte reduced (0 to ignore) */
} cs_ab_model_t;

typedef struct cs_algo {
    cs_coll_t coll;
    const char *name;
    const char *desc; /* one line */
    const cs_param_desc_t *params; /* terminated by CS_PARAM_END (cs_params.h) */
    /* Build the schedule.  On success *out owns a complete schedule and
     * CS_OK is returned; on failure *out is untouched, err says why and
     * nothing is leaked.  Reads its parameters with the descriptor getters
     * of cs_params.h (cs_params_int, _dims, _list) over `params`, which
     * apply the default and the bounds; unknown keys are rejected by the
     * caller afterwards. */
    int (*build)(const cs_coll_desc_t *desc, cs_params_t *params, cs_sched_t **out,
                 cs_err_t *err);
    /* Closed-form alpha-beta time (seconds) of this algorithm for a message
     * of `bytes` on P ranks (Ben-Nun & Hoefler style), or NULL when there is
     * no simple formula.  Parameters as for build, through the same getters
     * (invalid values: the default, or a negative time). */
    double (*cost)(const cs_coll_desc_t *desc, cs_params_t *params, double bytes,
                   const cs_ab_model_t *m);
    /* 1 when schedules built with these parameters may have switch steps
     * (in-network reduction or multicast, cs_sched.h): only a platform
     * whose switches reduce runs them, and the planner and the live
     * transports leave them out.  NULL: never.  Parameters as for cost
     * (the default where a value is invalid). */
    int (*switched)(cs_params_t *params);
} cs_algo_t;

/* a->switched(params) (params NULL: the defaults), 0 when a has no such
 * function. */
int cs_algo_switched(const cs_algo_t *a, cs_params_t *params);

/* Registry access.  Entries are ordered by collective, then as listed. */
int cs_algo_count(void);
const cs_algo_t *cs_algo_at(int i);
/* NULL when (coll, name) is not registered. */
const cs_algo_t *cs_algo_find(cs_coll_t coll, const char *name);

/* Build with error reporting and parameter checking: unknown parameter keys
 * are an error; the schedule's meta data (algorithm name and parameters) is
 * recorded.  Returns a cs_status_t. */
int cs_algo_build(const cs_algo_t *a, const cs_coll_desc_t *desc, cs_params_t *params,
                  cs_sched_t **out, cs_err_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CS_ALGO_H */
