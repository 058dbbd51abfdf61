/*
 * allreduce_sharp.c - allreduce in the network's switches (InfiniBand
 * SHARP, NCCL's CollNet): the aggregation tree of the switches reduces the
 * members' contributions and sends the result back down to each of them.
 *
 * The vector is nchunks chunks; each chunk is one switch allreduce
 * operation, all of them posted at once (as NCCL keeps several CollNet
 * operations posted).  The simulator sends a group's operations up one
 * after the other, as a member's NIC sends in order, so a chunk goes up
 * while the one before comes down.
 *   local = 1:  one group "sharp0" of all P ranks; every rank contributes
 *               in (out in place) and receives the sum in out.
 *   local = L:  ranks in consecutive nodes of L (the last one shorter when L
 *               does not divide P).  Each node first reduces to its first
 *               rank, the leader, along a chain (channel 1, pipelined per
 *               chunk: NCCL's CollNet chain); the leaders allreduce in the
 *               switch (group "sharp0" of the leaders, channel 0), each chunk
 *               as soon as the chain has delivered it; then every leader
 *               broadcasts the chunk back down its chain (channel 2).
 *
 *    local = 4, P = 8:   r3 -> r2 -> r1 -> r0 ==[switch allreduce]== r4 <- r5 <- r6 <- r7
 *                        then r0 -> r1 -> r2 -> r3   and   r4 -> r5 -> r6 -> r7
 *
 * Cost (S bytes, alpha = one switch operation's latency, beta = a member's
 * link per direction; the switch reduces, no gamma): a member sends S up and
 * receives S down, the chunks pipelined:  T = alpha + S beta (1 + 1 / nchunks)
 * for local = 1.  With local =
 * L > 1 the chains add 2 (L - 1 + nchunks - 1) (alpha + S / nchunks beta)
 * (pipelined chain reduce and broadcast) and gamma for the chain's
 * reductions.  Supports every P >= 1 (P = 1, or one node: no switch
 * operation) and in place.  Needs switches that reduce (collstep sim
 * refuses otherwise; the planner never picks it elsewhere).
 */
#include <stdlib.h>

#include "common/cs_gen.h"
#include "common/cs_swphase.h"
#include "common/cs_trees.h"

static const cs_param_desc_t params[] = {
    CS_PARAM_INT_ROW("nchunks", "4", 1, 65536,
                     "pieces of the vector: switch allreduce operations in flight"),
    CS_PARAM_INT_ROW("local", "1", 1, 65536,
                     "ranks per node: 1 = every rank joins the switch allreduce; L > 1 = each "
                     "node's L ranks reduce to their first along a chain, the first ranks "
                     "allreduce in the switch, then broadcast back"),
    CS_PARAM_END,
};

/* local > 1: chains in the nodes around the leaders' switch allreduce. */
static int nodes(cs__phase_t *ph, int P, int L, uint32_t nc, int src)
{
    cs_sched_t *s = ph->s;
    int nn = (P + L - 1) / L;
    int *lead = malloc((size_t)nn * sizeof(*lead));
    int *mem = malloc((size_t)L * sizeof(*mem));
    int64_t *done = malloc((size_t)P * nc * sizeof(*done));      /* chain reduce, per rank */
    int64_t *after = malloc((size_t)nn * nc * sizeof(*after));   /* leaders: chain delivered */
    int64_t *rec = malloc((size_t)nn * nc * sizeof(*rec));       /* leaders: switch op */
    int64_t *ba = malloc((size_t)L * nc * sizeof(*ba));          /* broadcast's `after` */
    if (!lead || !mem || !done || !after || !rec || !ba) {
        cs_err_set(&s->err, CS_ERR_NOMEM, "out of memory (%d ranks)", P);
        goto out;
    }
    for (int d = 0; d < nn && cs_sched_status(s) == CS_OK; d++) {
        int first = d * L, n = P - first < L ? P - first : L;
        lead[d] = first;
        for (int i = 0; i < n; i++)
            mem[i] = first + i;
        int64_t *dn = done + (size_t)first * nc;
        if (n > 1) {
            cs__tree_t t;
            cs__tree_chain(&t, n, 0);
            cs__tree_pipe_t p = {.chan = 1, .first = 0, .count = nc, .nseg = nc, .src = src,
                                 .dst = CS_BUF_OUT, .ranks = mem};
            cs__tree_reduce(s, &t, &p, NULL, dn);
        } else { /* a node of one: its input is its contribution */
            int64_t c = src != CS_BUF_OUT ? cs_copy(s, first, cs_rng(src, 0, nc),
                                                    cs_rng(CS_BUF_OUT, 0, nc), NULL, 0)
                                          : -1;
            for (uint32_t q = 0; q < nc; q++)
                dn[q] = c;
        }
        for (uint32_t q = 0; q < nc; q++)
            after[(size_t)d * nc + q] = dn[q]; /* the leader is tree rank 0 */
    }
    if (cs_sched_status(s) == CS_OK)
        cs__sw_sharp(ph, lead, nn, 0, nc, CS_BUF_OUT, CS_BUF_OUT, 0, nc, after, rec);
    for (int d = 0; d < nn && cs_sched_status(s) == CS_OK; d++) {
        int first = d * L, n = P - first < L ? P - first : L;
        if (n == 1)
            continue;
        for (int i = 0; i < n; i++) {
            mem[i] = first + i;
            for (uint32_t q = 0; q < nc; q++) /* the leader: its switch op; others: their send up */
                ba[(size_t)i * nc + q] = i == 0 ? rec[(size_t)d * nc + q]
                                                : done[(size_t)(first + i) * nc + q];
        }
        cs__tree_t t;
        cs__tree_chain(&t, n, 0);
        cs__tree_pipe_t p = {.chan = 2, .first = 0, .count = nc, .nseg = nc, .src = CS_BUF_OUT,
                             .dst = CS_BUF_OUT, .ranks = mem};
        cs__tree_bcast(s, &t, &p, ba, NULL);
    }
out:
    free(lead);
    free(mem);
    free(done);
    free(after);
    free(rec);
    free(ba);
    return cs_sched_status(s);
}

static int build(const cs_coll_desc_t *desc, cs_params_t *p, cs_sched_t **out, cs_err_t *err)
{
    long nc = 4, L = 1;
    int st = cs_params_int(p, params, "nchunks", &nc, err);
    if (st == CS_OK)
        st = cs_params_int(p, params, "local", &L, err);
    if (st != CS_OK)
        return st;
    cs_sched_t *s = cs__gen_create(desc, (uint32_t)nc, err, &st);
    if (s == NULL)
        return st;
    int P = desc->nranks, src = desc->inplace ? CS_BUF_OUT : CS_BUF_IN;
    cs__phase_t ph;
    st = cs__phase_init(&ph, s);
    if (st == CS_OK && L == 1) {
        int *all = malloc((size_t)P * sizeof(*all));
        if (all == NULL) {
            st = cs_err_set(&s->err, CS_ERR_NOMEM, "out of memory (%d ranks)", P);
        } else {
            for (int r = 0; r < P; r++)
                all[r] = r;
            st = cs__sw_sharp(&ph, all, P, 0, (uint32_t)nc, src, CS_BUF_OUT, 0, (uint32_t)nc,
                              NULL, NULL);
            free(all);
        }
    } else if (st == CS_OK) {
        st = nodes(&ph, P, (int)L, (uint32_t)nc, src);
    }
    cs__phase_fini(&ph);
    return cs__gen_finish(s, st, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *p, double bytes,
                   const cs_ab_model_t *m)
{
    long nc = 4, L = 1;
    cs_params_int(p, params, "nchunks", &nc, NULL); /* the defaults if invalid */
    cs_params_int(p, params, "local", &L, NULL);
    int P = desc->nranks;
    if (P < 2)
        return 0.0;
    if (L > P)
        L = P;
    double t = (P + L - 1) / L > 1 ? m->alpha + bytes * m->beta : 0.0;
    if (L > 1)
        t += 2.0 * (double)(L - 1 + nc - 1) * (m->alpha + bytes / (double)nc * m->beta) +
             bytes * m->gamma;
    return t;
}

const cs_algo_t cs__algo_allreduce_sharp = {
    .coll = CS_COLL_ALLREDUCE,
    .name = "sharp",
    .desc = "in-switch allreduce (InfiniBand SHARP), optionally of node leaders after a chain",
    .params = params,
    .build = build,
    .cost = cost,
    .switched = cs__sw_always,
};
