/*
 * allreduce_nvls.c - NVLink SHARP allreduce on one switch domain (NCCL's
 * NVLS algorithm): the switch reduces and multicasts, the GPUs only issue
 * loads and stores.
 *
 * The vector is C = P x nchunks chunks, slice i = chunks [i nchunks, (i+1)
 * nchunks), one chunk per pipeline piece.  Every rank is a member of one
 * group "nvls0" of all P ranks (the GPUs one NVSwitch domain serves).
 * For every piece q and every slice i, in that order on every member:
 *   - switch reduce (channel 0): every member contributes piece q of slice
 *     i from in (out in place); member i, the reader, receives the
 *     reduction in out (multimem.ld_reduce: reduce-scatter by load-reduce);
 *   - switch multicast (channel 1): member i writes that piece from out to
 *     every other member's out (multimem.st).
 * A multicast waits for its piece's reduce only, so the reduce of piece
 * q + 1 overlaps the multicast of piece q; each member's operations on one
 * slice are a chain (its reader's pipeline).
 *
 *    P = 4, one piece:      reduce slice i       multicast slice i
 *      r0 r1 r2 r3 --in[i]--> [switch] --sum--> ri --out[i]--> [switch] --> out[i] of all
 *
 * Cost (n = P members, S bytes, alpha = one switch operation's latency,
 * beta = a member's link per direction): each member's link carries S up
 * (its contributions) + S/n up (its multicasts) and S/n down (its slice's
 * sum) + S down (the multicasts), the two directions at once:
 *     T = (nchunks + 1) alpha + S (1 + 1/n) beta
 * (a reader's chain of nchunks reduces, then the last multicast).  The
 * switch reduces, so there is no gamma term; what types and operators it
 * reduces is the platform's business.  Bus bandwidth 2(n-1)/n S / T is above
 * the link's: NCCL reports about 480 GB/s on 8 H100s at 450 GB/s per link.
 * Supports every P >= 1 (P = 1: a copy, no switch) and in place.  Needs a
 * switch that reduces (collstep sim refuses otherwise; the planner never
 * picks it elsewhere).
 */
#include "common/cs_flat.h"
#include "common/cs_swphase.h"

static const cs_param_desc_t params[] = {
    CS_PARAM_INT_ROW("nchunks", "4", 1, 65536,
                     "pipeline pieces per slice: the reduce of piece k+1 overlaps the "
                     "multicast of piece k"),
    CS_PARAM_END,
};

static int build(const cs_coll_desc_t *desc, cs_params_t *p, cs_sched_t **out, cs_err_t *err)
{
    return cs__flat_build(desc, p, params, CS__PH_NVLS, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *p, double bytes,
                   const cs_ab_model_t *m)
{
    long nc = 4;
    cs_params_int(p, params, "nchunks", &nc, NULL); /* the default if invalid */
    int n = desc->nranks;
    if (n < 2)
        return 0.0;
    return (double)(nc + 1) * m->alpha + bytes * (1.0 + 1.0 / n) * m->beta;
}

const cs_algo_t cs__algo_allreduce_nvls = {
    .coll = CS_COLL_ALLREDUCE,
    .name = "nvls",
    .desc = "NVLink SHARP (NCCL's NVLS): switch load-reduce of each slice, multicast back",
    .params = params,
    .build = build,
    .cost = cost,
    .switched = cs__sw_always,
};
