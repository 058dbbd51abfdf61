/*
 * broadcast_chain.c - pipelined chain broadcast: root -> root+1 -> ... ->
 * root+P-1 (mod P), the vector cut into segments that flow down the chain
 * one behind the other.
 *
 * Method: position v = (rank - root) mod P receives segment i from v-1 into
 * out and forwards it to v+1 while segment i+1 is arriving.  The root sends
 * from in (out when in place) and copies in to out.
 *
 *   time step t (segment index in each box):
 *     root --[t]--> 1 --[t-1]--> 2 --[t-2]--> 3 ...
 *
 * Cost (S segments, n bytes): P-1 hops to fill the pipe, then one segment
 * per step:  T = (P + S - 2) (alpha + n beta / S),  which tends to n beta
 * for large n and S: bandwidth-optimal, latency linear in P.  Every P >= 1,
 * every root, in place or not.
 *
 * Channels (channels = K > 1, or one per order): the vector is K windows
 * of S segments, and window c flows down chain c on message channel c:
 * channel c's ring read cyclically from the root, as NCCL's Ring broadcast
 * runs on its ring channels.  The ring is the flat ring's (cs_flat.h):
 * groups of `local` ranks in order, each rotated by c local / K (across
 * HGX nodes each chain leaves a node by a GPU and NIC of its own), or
 * visited in order Oc of orders = O1+O2+... (a permutation of a group's
 * members in base-36 digits, all P ranks with local = 1: a DGX-1's rings
 * over NVLink, which `collstep sim --algo nccl` takes from its link
 * analysis).
 */
#include "common/cs_trees.h"
#include "cs_algo.h"

static const cs_param_desc_t params_desc[] = {
    CS_PARAM_INT_ROW("nchunks", "8", 1, 65536, "pipelining segments (chunks of the vector)"),
    CS_PARAM_INT_ROW("segments", "8", 1, 65536, "the same as nchunks (its former name)"),
    CS__TREE_CHAIN_ROWS,
    CS_PARAM_END,
};

/* nchunks, or its former name segments; both given: they must agree.  On
 * an error *nseg is still set (nchunks' default when it was invalid). */
static int segments(cs_params_t *params, long *nseg, cs_err_t *err)
{
    long a = 1, b = 1;
    int st = cs_params_int(params, params_desc, "nchunks", &a, err);
    *nseg = a;
    if (st == CS_OK)
        st = cs_params_int(params, params_desc, "segments", &b, err);
    if (st != CS_OK)
        return st;
    if (cs_params_get(params, "nchunks") && cs_params_get(params, "segments") && a != b)
        return cs_err_set(err, CS_ERR_INVAL, "nchunks=%ld and segments=%ld disagree (segments is "
                          "nchunks' former name)", a, b);
    *nseg = cs_params_get(params, "nchunks") ? a : b;
    return CS_OK;
}

static int build(const cs_coll_desc_t *desc, cs_params_t *params, cs_sched_t **out, cs_err_t *err)
{
    long nseg;
    int st = segments(params, &nseg, err);
    if (st != CS_OK)
        return st;
    return cs__tree_chains(desc, params, params_desc, nseg, CS__TREE_OP_BCAST, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *params, double bytes,
                   const cs_ab_model_t *m)
{
    long nseg;
    segments(params, &nseg, NULL); /* the default if invalid */
    if (desc->nranks < 2)
        return 0.0;
    double S = (double)nseg;
    return ((double)desc->nranks + S - 2.0) * (m->alpha + bytes * m->beta / S);
}

const cs_algo_t cs__algo_broadcast_chain = {
    .coll = CS_COLL_BROADCAST,
    .name = "chain",
    .desc = "pipelined chain from the root through all ranks, in segments",
    .params = params_desc,
    .build = build,
    .cost = cost,
};
