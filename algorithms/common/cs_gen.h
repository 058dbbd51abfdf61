/*
 * cs_gen.h - plumbing every generator shares: reading the standard
 * `nchunks` parameter through the generator's descriptor table, creating
 * the schedule (also the "P blocks of nchunks chunks" shape of the blocked
 * collectives) and handing it over or freeing it at the end.
 *
 * A generator built on these has one shape:
 *
 *     int st;
 *     cs_sched_t *s = cs__gen_create(desc, C, err, &st);
 *     if (s == NULL)
 *         return st;
 *     st = ...append steps...;          (CS_OK, or an error already in err)
 *     return cs__gen_finish(s, st, out, err);
 *
 * so *out is written only on success and a half-built schedule is freed by
 * the one call in cs__gen_finish.  The builder's sticky error (s->err) is
 * checked there once.
 */
#ifndef CS_GEN_H
#define CS_GEN_H

#include <stdint.h>

#include "cs_algo.h"

/* The `nchunks` parameter through its row of `table` (cs_params_int). */
int cs__gen_nchunks(cs_params_t *params, const cs_param_desc_t *table, uint32_t *nchunks,
                    cs_err_t *err);

/* cs_sched_create that also returns the status: NULL and *st < 0 with err
 * filled on failure, *st = CS_OK otherwise. */
cs_sched_t *cs__gen_create(const cs_coll_desc_t *desc, uint32_t nchunks, cs_err_t *err, int *st);

/* A schedule of P x per chunks (P = desc->nranks); CS_ERR_RANGE ("P ranks x
 * per chunks<unit> is too many chunks", unit e.g. " per block" or "") when
 * that is more than UINT32_MAX / 2. */
cs_sched_t *cs__gen_create_blocked(const cs_coll_desc_t *desc, uint32_t per, const char *unit,
                                   cs_err_t *err, int *st);

/* The blocked generators' usual start: read `nchunks` (its row of table)
 * into *per, then cs__gen_create_blocked(desc, *per, unit, ...). */
cs_sched_t *cs__gen_blocked(const cs_coll_desc_t *desc, cs_params_t *params,
                            const cs_param_desc_t *table, const char *unit, uint32_t *per,
                            cs_err_t *err, int *st);

/* The start of rank r of an all-to-all (P blocks of k chunks): in place,
 * out is copied whole into a new scratch buffer "src" (*init: that copy);
 * otherwise the own block is copied in -> out (*init = -1).  Returns the
 * buffer the rank's sends read (src, or in). */
int cs__gen_a2a_start(cs_sched_t *s, int r, uint32_t P, uint32_t k, int inplace, int64_t *init);

/* When st and the schedule's sticky error are CS_OK, hands s to *out and
 * returns CS_OK; otherwise frees s, copies the schedule's error into err
 * (unless err already holds one) and returns the failure. */
int cs__gen_finish(cs_sched_t *s, int st, cs_sched_t **out, cs_err_t *err);

/* The `orders` parameter (O1+O2+..., one order per channel; '+', ':' or
 * '/' between them), when table declares it and params give it: each order
 * a permutation of a group's L members in base-36 digits (0-9 then a-z;
 * L = *L when > 1, else P; L <= 36 and divides P).  *perm: K x L members
 * (malloc'ed; NULL when absent or "none"), *L and *K set from it (*K > 1
 * on entry: the count must match).  CS_ERR_PARSE naming the order that is
 * wrong. */
int cs__gen_orders(cs_params_t *params, const cs_param_desc_t *table, int P, long *L, long *K,
                   int **perm, cs_err_t *err);

#endif /* CS_GEN_H */
