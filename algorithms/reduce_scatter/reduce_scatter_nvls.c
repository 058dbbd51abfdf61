/*
 * reduce_scatter_nvls.c - reduce-scatter by NVLink SHARP load-reduce: rank
 * i reads its block, reduced over all ranks, through the switch
 * (multimem.ld_reduce).
 *
 * Blocks of nchunks chunks.  Every rank is a member of one group "nvls0"
 * of all P ranks.  For every piece q (one chunk) and every block i, in that
 * order on every member: a switch reduce (channel 0) to which every member
 * contributes piece q of block i from in, and of which member i, the
 * reader, receives the reduction in out.  A member's operations on one
 * block are a chain (its reader's pipeline); different blocks' operations
 * run at once.
 *
 * Cost (n = P members, S bytes of the whole vector): each member's link
 * carries S up (its contributions) and S/n down (its block):
 *     T = alpha + S beta
 * with alpha the latency of one switch operation (the pieces pipeline) and
 * no gamma (the switch reduces).  Supports every P >= 1 (P = 1: a copy, no
 * switch); in place is refused as for every reduce-scatter.  Needs a switch
 * that reduces.
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

const cs_algo_t cs__algo_reduce_scatter_nvls = {
    .coll = CS_COLL_REDUCE_SCATTER,
    .name = "nvls",
    .desc = "NVLink SHARP: each rank load-reduces its block through the switch",
    .params = params,
    .build = build,
    .cost = cost,
    .switched = cs__sw_always,
};
