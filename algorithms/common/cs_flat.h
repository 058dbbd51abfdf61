/*
 * cs_flat.h - the flat one-group generators: a whole reduce-scatter,
 * all-gather or allreduce (reduce-scatter then all-gather) on all P ranks,
 * made of one phase algorithm of cs_phase.h (ring, rhd, direct) over P
 * segments of `nchunks` chunks, and for the ring over K channels.
 *
 * Each algorithm keeps its own file (its prose block: method, picture,
 * cost, limits) and ends in one registry entry:
 *
 *     CS__FLAT_ALGO(allgather, rd, CS_COLL_ALLGATHER, CS__PH_RHD,
 *                   "chunks per block", "recursive doubling (...)");
 *     CS__FLAT_RING_ALGO(allgather, ring, CS_COLL_ALLGATHER,
 *                        "chunks per block", "ring all-gather (...)");
 *
 * which defines the parameter table (`nchunks` with the given help line;
 * the ring also `channels` and `local`), the build and cost functions and
 * `cs__algo_<coll>_<alg>`.
 *
 * Layout: C = P x nchunks chunks, segment m = chunks [m nchunks, (m+1)
 * nchunks) owned by rank m; the rhd allreduce gives the extra ranks of its
 * fold no segment (C = n2 x nchunks).  Buffers: all-gather and allreduce
 * read `in` (out when in place) and end in out; reduce-scatter accumulates
 * in a scratch `acc` of the whole vector (out for direct and P = 1).
 *
 * Channels (ring only, channels = K > 1): the vector is K x P x nchunks
 * chunks and each channel is a ring of its own over all P ranks, on its own
 * message channels (allreduce: 2c for the reduce-scatter, 2c + 1 for the
 * all-gather; reduce-scatter and all-gather: c) and its own dependency
 * stream, so the K rings run at the same time.
 *   allreduce:      channel c reduces the window [c P nchunks, (c+1) P
 *                   nchunks), in P segments of nchunks chunks;
 *   reduce-scatter, rank q's block is chunks [q K nchunks, (q+1) K nchunks)
 *   all-gather:     and channel c moves its part c, [q K nchunks + c
 *                   nchunks, + nchunks), of every block.
 * Ring order of channel c: with local = L > 1 (ranks per node), the ranks
 * are cut into consecutive groups of L (the last one shorter when L does
 * not divide P) and channel c visits each group rotated by floor(c len /
 * K) (len: the group's size): member i of a group is rank first + (i +
 * shift) mod len.  On a node of L GPUs whose two sockets reach the network
 * through their own NIC rail, channel 0 leaves every node from its last GPU
 * (rail 1) and enters the next at its first (rail 0); with K = 2, channel 1
 * is rotated by L/2 and crosses on the other rails.  With local = 1 there
 * is nothing to rotate: odd channels run the ring backwards (rank r sends
 * to r - 1), so that on full-duplex links between neighbours the two
 * directions carry a channel each instead of one direction carrying two.
 * channels = 1 is the one-ring schedule exactly.
 * Orders (orders = O1+O2+..., one channel each): channel c visits each
 * group of L ranks (L = local, or P when local = 1; L must divide P) in
 * the order Oc, a permutation of the group's members written one base-36
 * digit each (0-9 then a-z, so L <= 36): member i of a group is rank first
 * + Oc[i].  `collstep plan` writes the rings its link analysis finds this
 * way (on a DGX-1's cube mesh, orders=01327645+...: each channel a
 * Hamiltonian cycle over links no other channel uses in that direction).
 */
#ifndef CS_FLAT_H
#define CS_FLAT_H

#include "cs_phase.h"

/* Read `nchunks` (and `channels`, `local` when the table has them) from
 * params through table and build the flat collective desc->coll with phase
 * algorithm a.  Returns CS_ERR_UNSUPPORTED for other collectives. */
int cs__flat_build(const cs_coll_desc_t *desc, cs_params_t *params, const cs_param_desc_t *table,
                   cs__ph_alg_t a, cs_sched_t **out, cs_err_t *err);

/* Alpha-beta time of the flat collective: RS (with gamma) + AG for
 * allreduce, RS with gamma for reduce-scatter, AG for all-gather.  Channels
 * do not change it: their rings overlap (latency) and a rank sends the same
 * bytes through its one port (bandwidth); what they gain is links the
 * alpha-beta model does not see. */
double cs__flat_cost(const cs_coll_desc_t *desc, cs__ph_alg_t a, double bytes,
                     const cs_ab_model_t *m);

/* The ring's channel parameters (table rows). */
#define CS__FLAT_CHANNEL_ROWS                                                                   \
    CS_PARAM_INT_ROW("channels", "1", 1, CS__PHASE_MAX_CHANNELS,                                \
                     "rings over parts of the vector at once, each in its own rank order"),    \
        CS_PARAM_INT_ROW("local", "1", 1, 65536,                                                \
                         "ranks per node: channel c rotates each group of local ranks by "     \
                         "c*local/channels (local=1: odd channels run backwards)"),             \
        CS_PARAM_LIST_ROW("orders", "none", 1, CS__PHASE_MAX_CHANNELS,                          \
                          "one ring order per channel, each group of local ranks visited as "   \
                          "written (base-36 digits: 01327645+04576231)")

/* Registry entry of a flat generator (see the top of this file). */
#define CS__FLAT_ALGO_ROWS(coll_, alg_, coll_id_, ph_alg_, desc_, ...)                          \
    static const cs_param_desc_t flat_params[] = {__VA_ARGS__, CS_PARAM_END};                  \
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
#define CS__FLAT_ALGO(coll_, alg_, coll_id_, ph_alg_, nchunks_help_, desc_)                    \
    CS__FLAT_ALGO_ROWS(coll_, alg_, coll_id_, ph_alg_, desc_,                                  \
                       CS_PARAM_INT_ROW("nchunks", "1", 1, 65536, nchunks_help_))
#define CS__FLAT_RING_ALGO(coll_, alg_, coll_id_, nchunks_help_, desc_)                        \
    CS__FLAT_ALGO_ROWS(coll_, alg_, coll_id_, CS__PH_RING, desc_,                              \
                       CS_PARAM_INT_ROW("nchunks", "1", 1, 65536, nchunks_help_),              \
                       CS__FLAT_CHANNEL_ROWS)

#endif /* CS_FLAT_H */
