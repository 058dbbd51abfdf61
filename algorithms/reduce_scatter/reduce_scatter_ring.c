/*
 * reduce_scatter_ring.c - ring reduce-scatter.
 *
 * Block q of the result belongs to rank q (C = P * nchunks chunks, block q
 * = chunks [q*nchunks, (q+1)*nchunks)).  In step i rank m sends its partial
 * sum of block m-i-1 to m+1 and reduces block m-i-2 arriving from m-1 into
 * a scratch accumulator `acc`; the last arrival, block m itself, is reduced
 * straight into out.  Blocks travel as nchunks messages (pipelining).
 *
 *    step i, P = 3:   r0 --blk 2-i--> r1 --blk 0-i--> r2 --blk 1-i--> r0
 *
 * Cost: (P-1) alpha + (P-1)/P n beta + (P-1)/P n gamma (n = whole vector).
 * Supports every P >= 1; not in place (the model has no in-place
 * reduce-scatter).  Needs a scratch buffer of the whole vector.
 */
#include "common/cs_phase.h"

static const cs_param_desc_t params[] = {
    {"nchunks", "1", "chunks per block: messages per block, the pipelining depth"},
    {NULL, NULL, NULL},
};

static int build(const cs_coll_desc_t *desc, cs_params_t *p, cs_sched_t **out, cs_err_t *err)
{
    uint32_t nc = 1;
    int st = cs__param_nchunks(p, &nc, err);
    return st != CS_OK ? st : cs__flat_build(desc, CS__PH_RING, nc, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *p, double bytes,
                   const cs_ab_model_t *m)
{
    (void)p;
    return cs__cost_phase(CS__PH_RING, desc->nranks, bytes, m, 1);
}

const cs_algo_t cs__algo_reduce_scatter_ring = {
    .coll = CS_COLL_REDUCE_SCATTER,
    .name = "ring",
    .desc = "ring reduce-scatter (bandwidth optimal, P-1 steps)",
    .params = params,
    .build = build,
    .cost = cost,
};
