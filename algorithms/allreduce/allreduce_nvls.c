/*
 * allreduce_nvls.c - NVLink SHARP allreduce on one switch domain (NCCL's
 * NVLS algorithm): the switch reduces and multicasts, the GPUs only issue
 * loads and stores.
 *
 * The vector is C = channels x P x nchunks chunks; channel c takes the
 * window [c P nchunks, (c+1) P nchunks), slice i of it (P slices of nchunks
 * chunks, one chunk per pipeline piece) read and written by its member i.
 * Every rank is a member of one group "nvls0" of all P ranks (the GPUs one
 * NVSwitch domain serves).  For every piece q, on every member, in that
 * order: for every slice i a switch reduce (channel 2c): every member
 * contributes piece q of slice i from in (out in place) and member i, the
 * reader, receives the reduction in out (multimem.ld_reduce: reduce-scatter
 * by load-reduce); then for every slice i a switch multicast (channel 2c +
 * 1): member i writes that piece from out to every other member's out
 * (multimem.st).
 * Dependencies make the pipeline: a multicast waits for its piece's reduce
 * only; a contributor's reduce waits for its previous piece of the slice
 * (its contributions leave one after the other); the reader's reduce of
 * piece q waits for its multicast of piece q - depth (NCCL's buffer slots:
 * a reader's reduces run at most `depth` pieces ahead of its multicasts, so
 * the multicasts keep up and the pipeline drains quickly; depth=0: no
 * limit).  The channels' windows are independent pipelines.
 *
 *    P = 4, one piece:      reduce slice i       multicast slice i
 *      r0 r1 r2 r3 --in[i]--> [switch] --sum--> ri --out[i]--> [switch] --> out[i] of all
 *
 * Cost (n = P members, S bytes, alpha = one switch operation's latency,
 * beta = a member's link per direction): each member's link carries S up
 * (its contributions) + S/n up (its multicasts) and S/n down (its slice's
 * sum) + S down (the multicasts), the two directions at once:
 *     T = (ceil(nchunks / depth) + 1) alpha + S (1 + 1/n) beta
 * (a reader waits ceil(nchunks / depth) times for a reduce and its
 * multicast, then the last multicast; depth=0 or >= nchunks: 2 alpha).
 * The switch reduces, so there is no gamma term; what types and operators
 * it reduces is the platform's business.  Bus bandwidth 2(n-1)/n S / T is
 * above the link's: NCCL reports about 480 GB/s on 8 H100s at 450 GB/s per
 * link.  In the simulator (ideal model, 8 GPUs at 450 GB/s with 0.3 us
 * links, tests/sim/hgx8_nvls.xml) nchunks=256 depth=3 reach 0.986 of the
 * bound at 64 MiB and 0.994 from 1 GiB; small messages want few pieces
 * (nchunks=16 depth=4: 0.53 at 1 MiB).  The channels share the same links:
 * they pipeline more pieces at once, like more nchunks.
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
    CS_PARAM_INT_ROW("channels", "1", 1, CS__PHASE_MAX_CHANNELS,
                     "windows of the vector pipelined at once, each on its own switch "
                     "channels (NCCL's NVLS channels)"),
    CS_PARAM_INT_ROW("depth", "4", 0, 65536,
                     "pieces a reader's reduces run ahead of its multicasts (0: no "
                     "limit)"),
    CS_PARAM_END,
};

static int build(const cs_coll_desc_t *desc, cs_params_t *p, cs_sched_t **out, cs_err_t *err)
{
    return cs__flat_build(desc, p, params, CS__PH_NVLS, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *p, double bytes,
                   const cs_ab_model_t *m)
{
    long nc = 4, depth = 4;
    cs_params_int(p, params, "nchunks", &nc, NULL); /* the defaults if invalid */
    cs_params_int(p, params, "depth", &depth, NULL);
    int n = desc->nranks;
    if (n < 2)
        return 0.0;
    long waits = depth > 0 && depth < nc ? (nc + depth - 1) / depth : 1;
    return (double)(waits + 1) * m->alpha + bytes * (1.0 + 1.0 / n) * m->beta;
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
