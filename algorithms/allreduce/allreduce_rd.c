/*
 * allreduce_rd.c - recursive doubling allreduce: in round k (distance 1, 2,
 * 4, .. n2/2) every rank exchanges its whole partial sum with its partner
 * and adds the partner's, so after log2(n2) rounds all hold the total.
 *
 * Non-powers of two (n2 = 2^floor(log2 P), rem = P - n2): ranks 2i+1
 * (i < rem) fold their vector into rank 2i first and get the result back
 * at the end.  The vector is one chunk (C = 1): every message is whole.
 *
 *    one round, as seen by rank r and partner p = r xor 2^k:
 *
 *      r: send out --> p      r: recv tmp <-- p      r: out += tmp
 *
 * The first exchange of a fresh input sends from `in` and reduces straight
 * into out (after copying in to out); later rounds receive into a scratch
 * `tmp` because out is being sent concurrently.
 * Cost: log2(P) (alpha + n beta + n gamma) for P a power of two; otherwise
 * add 2 alpha + 2 n beta + n gamma.  Latency optimal, bandwidth poor: for
 * small messages.  Supports every P >= 1 and in-place.
 */
#include "common/cs_gen.h"
#include "common/cs_peers.h"
#include "common/cs_phase.h"

static const cs_param_desc_t params[] = {CS_PARAM_END};

/* State of one rank while its steps are appended. */
typedef struct {
    cs_sched_t *s;
    int r, tmp, loc;    /* rank, tmp buffer id, where the partial sum is */
    int64_t last;       /* last step writing out */
} rd_rank_t;

/* Exchange with `peer`: out := out + partner's partial sum. */
static void exchange(rd_rank_t *k, int peer)
{
    cs_sched_t *s = k->s;
    cs_range_t all = cs_rng(k->loc, 0, 1), o = cs_rng(CS_BUF_OUT, 0, 1);
    if (k->loc != CS_BUF_OUT) { /* first touch: send from in, reduce into a copy */
        int64_t cp = cs_copy(s, k->r, all, o, NULL, 0);
        cs_send(s, k->r, peer, 0, all, NULL, 0);
        cs__dl_t d = cs__dl(cp, -1, -1);
        k->last = cs_rrecv(s, k->r, peer, 0, o, d.v, d.n);
        k->loc = CS_BUF_OUT;
        return;
    }
    cs__dl_t d = cs__dl(k->last, -1, -1);
    int64_t sd = cs_send(s, k->r, peer, 0, o, d.v, d.n);
    int64_t rv = cs_recv(s, k->r, peer, 0, cs_rng(k->tmp, 0, 1), d.v, d.n);
    d = cs__dl(sd, rv, -1);
    k->last = cs_reduce(s, k->r, cs_rng(k->tmp, 0, 1), o, d.v, d.n);
}

static int build(const cs_coll_desc_t *desc, cs_params_t *p, cs_sched_t **out, cs_err_t *err)
{
    (void)p;
    int P = desc->nranks, st;
    cs_sched_t *s = cs__gen_create(desc, 1, err, &st);
    if (s == NULL)
        return st;
    cs__fold_t f = cs__fold_make(P);
    int tmp = -1;
    for (int r = 0; r < P && P > 1; r++)
        tmp = cs_sched_add_buffer(s, r, "tmp", 0, 1);
    for (int r = 0; r < P; r++) {
        rd_rank_t k = {s, r, tmp, desc->inplace ? CS_BUF_OUT : CS_BUF_IN, -1};
        if (cs__fold_is_extra(&f, r)) { /* fold in, then receive the total */
            int64_t sd = cs_send(s, r, r - 1, 0, cs_rng(k.loc, 0, 1), NULL, 0);
            cs__dl_t d = cs__dl(sd, -1, -1);
            cs_recv(s, r, r - 1, 0, cs_rng(CS_BUF_OUT, 0, 1), d.v, d.n);
            continue;
        }
        if (r < 2 * f.rem) { /* take the extra rank's vector first */
            int64_t cp = k.loc != CS_BUF_OUT
                             ? cs_copy(s, r, cs_rng(k.loc, 0, 1), cs_rng(CS_BUF_OUT, 0, 1), NULL, 0)
                             : -1;
            cs__dl_t d = cs__dl(cp, -1, -1);
            k.last = cs_rrecv(s, r, r + 1, 0, cs_rng(CS_BUF_OUT, 0, 1), d.v, d.n);
            k.loc = CS_BUF_OUT;
        }
        int v = cs__fold_virt(&f, r);
        for (int dist = 1; dist < f.n2; dist *= 2)
            exchange(&k, cs__fold_first(&f, v ^ dist));
        if (k.loc != CS_BUF_OUT) /* P == 1 */
            cs_copy(s, r, cs_rng(k.loc, 0, 1), cs_rng(CS_BUF_OUT, 0, 1), NULL, 0);
        if (r < 2 * f.rem) {
            cs__dl_t d = cs__dl(k.last, -1, -1);
            cs_send(s, r, r + 1, 0, cs_rng(CS_BUF_OUT, 0, 1), d.v, d.n);
        }
    }
    return cs__gen_finish(s, CS_OK, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *p, double bytes,
                   const cs_ab_model_t *m)
{
    (void)p;
    cs__fold_t f = cs__fold_make(desc->nranks);
    double round = m->alpha + bytes * (m->beta + m->gamma);
    double t = cs__log2_floor((uint64_t)f.n2) * round;
    if (f.rem > 0)
        t += round + m->alpha + bytes * m->beta;
    return t;
}

const cs_algo_t cs__algo_allreduce_rd = {
    .coll = CS_COLL_ALLREDUCE,
    .name = "rd",
    .desc = "recursive doubling: log2 P whole-vector exchanges (small messages)",
    .params = params,
    .build = build,
    .cost = cost,
};
