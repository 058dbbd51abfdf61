/*
 * allgather_nvls.c - all-gather by NVLink SHARP multicast: rank i writes
 * its block once, and the switch stores it into every rank's out
 * (multimem.st).
 *
 * Blocks of nchunks chunks.  Every rank is a member of one group "nvls0"
 * of all P ranks.  For every piece q (one chunk) and every block i, in that
 * order on every member: a switch multicast (channel 0) whose writer,
 * member i, sends piece q of its block from in (out in place), and of which
 * every member receives it in out (the writer too, unless in place: its
 * own block is already there).  A member's operations on one block are a
 * chain.
 *
 * Cost (n = P members, S bytes of the whole vector): each member's link
 * carries S/n up (its block) and S down (every block):
 *     T = alpha + S beta
 * with alpha the latency of one switch operation (the pieces pipeline).
 * Supports every P >= 1 (P = 1: a copy, no switch) and in place.  Needs a
 * switch that multicasts.
 */
#include "common/cs_flat.h"
#include "common/cs_swphase.h"

static const cs_param_desc_t params[] = {
    CS_PARAM_INT_ROW("nchunks", "1", 1, 65536, "chunks per block: pipeline pieces"),
    CS_PARAM_END,
};

static int build(const cs_coll_desc_t *desc, cs_params_t *p, cs_sched_t **out, cs_err_t *err)
{
    return cs__flat_build(desc, p, params, CS__PH_NVLS, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *p, double bytes,
                   const cs_ab_model_t *m)
{
    (void)p;
    return cs__flat_cost(desc, CS__PH_NVLS, bytes, m);
}

const cs_algo_t cs__algo_allgather_nvls = {
    .coll = CS_COLL_ALLGATHER,
    .name = "nvls",
    .desc = "NVLink SHARP: each rank multicasts its block through the switch",
    .params = params,
    .build = build,
    .cost = cost,
    .switched = cs__sw_always,
};
