/*
 * cs_flat.h - the flat one-group generators: a whole reduce-scatter,
 * all-gather or allreduce (reduce-scatter then all-gather) on all P ranks,
 * made of one phase algorithm of cs_phase.h (ring, rhd, direct) over P
 * segments of `nchunks` chunks.
 *
 * Each algorithm keeps its own file (its prose block: method, picture,
 * cost, limits) and ends in one registry entry:
 *
 *     CS__FLAT_ALGO(allgather, ring, CS_COLL_ALLGATHER, CS__PH_RING,
 *                   "chunks per block", "ring all-gather (...)");
 *
 * which defines the parameter table (only `nchunks`, with the given help
 * line), the build and cost functions and `cs__algo_<coll>_<alg>`.
 *
 * Layout: C = P x nchunks chunks, segment m = chunks [m nchunks, (m+1)
 * nchunks) owned by rank m; the rhd allreduce gives the extra ranks of its
 * fold no segment (C = n2 x nchunks).  Buffers: all-gather and allreduce
 * read `in` (out when in place) and end in out; reduce-scatter accumulates
 * in a scratch `acc` of the whole vector (out for direct and P = 1).
 */
#ifndef CS_FLAT_H
#define CS_FLAT_H

#include "cs_phase.h"

/* Read `nchunks` (its row of table) and build the flat collective
 * desc->coll with phase algorithm a.  Returns CS_ERR_UNSUPPORTED for other
 * collectives. */
int cs__flat_build(const cs_coll_desc_t *desc, cs_params_t *params, const cs_param_desc_t *table,
                   cs__ph_alg_t a, cs_sched_t **out, cs_err_t *err);

/* Alpha-beta time of the flat collective: RS (with gamma) + AG for
 * allreduce, RS with gamma for reduce-scatter, AG for all-gather. */
double cs__flat_cost(const cs_coll_desc_t *desc, cs__ph_alg_t a, double bytes,
                     const cs_ab_model_t *m);

/* Registry entry of a flat generator (see the top of this file). */
#define CS__FLAT_ALGO(coll_, alg_, coll_id_, ph_alg_, nchunks_help_, desc_)                    \
    static const cs_param_desc_t flat_params[] = {                                             \
        CS_PARAM_INT_ROW("nchunks", "1", 1, 65536, nchunks_help_),                              \
        CS_PARAM_END,                                                                           \
    };                                                                                          \
    static int flat_build(const cs_coll_desc_t *desc, cs_params_t *p, cs_sched_t **out,        \
                          cs_err_t *err)                                                        \
    {                                                                                           \
        return cs__flat_build(desc, p, flat_params, ph_alg_, out, err);                         \
    }                                                                                           \
    static double flat_cost(const cs_coll_desc_t *desc, cs_params_t *p, double bytes,          \
                            const cs_ab_model_t *m)                                             \
    {                                                                                           \
        (void)p;                                                                                \
        return cs__flat_cost(desc, ph_alg_, bytes, m);                                          \
    }                                                                                           \
    const cs_algo_t cs__algo_##coll_##_##alg_ = {                                               \
        .coll = coll_id_,                                                                       \
        .name = #alg_,                                                                          \
        .desc = desc_,                                                                          \
        .params = flat_params,                                                                  \
        .build = flat_build,                                                                    \
        .cost = flat_cost,                                                                      \
    }

#endif /* CS_FLAT_H */
