/*
 * cs_flat.c - the flat one-group generators (see cs_flat.h).
 */
#include "cs_flat.h"

#include <stdlib.h>
#include <string.h>

#include "cs_gen.h"
#include "cs_mem.h"
#include "cs_peers.h"
#include "cs_swphase.h"

/* What one build needs: the collective, the phase algorithm, K groups (one
 * ring order and segment layout per channel). */
typedef struct flat_arg {
    const cs_coll_desc_t *desc;
    cs__ph_alg_t a;
    const cs__grp_t *g; /* K groups */
    int K;
    uint32_t C, nchunks;
    uint32_t depth; /* NVLS allreduce: pieces a reader's reduces run ahead of its multicasts */
} flat_arg_t;

/* Scratch buffers, declared once on every rank: the reduce-scatter's
 * accumulator.  Returns the buffer partial sums go to. */
static int flat_work(cs_sched_t *s, const flat_arg_t *f)
{
    int P = f->desc->nranks;
    if (f->desc->coll != CS_COLL_REDUCE_SCATTER)
        return CS_BUF_OUT;
    int work = f->a == CS__PH_DIRECT || f->a == CS__PH_NVLS ? CS_BUF_OUT : CS_BUF_FIRST_SCRATCH;
    for (int r = 0; r < P && work != CS_BUF_OUT && P > 1; r++)
        cs_sched_add_buffer(s, r, "acc", 0, f->C);
    return P == 1 ? CS_BUF_OUT : work;
}

/* Append channel c's phases to the stream ph (fresh for this channel). */
static int flat_phases(cs__phase_t *ph, const flat_arg_t *f, int c, int work)
{
    const cs_coll_desc_t *desc = f->desc;
    const cs__grp_t *g = &f->g[c];
    int in = desc->inplace ? CS_BUF_OUT : CS_BUF_IN;
    if (desc->coll == CS_COLL_ALLGATHER)
        return cs__phase_ag(ph, f->a, g, (cs__bufs_t){in, CS_BUF_OUT, CS_BUF_OUT}, c, f->nchunks);
    if (desc->coll == CS_COLL_REDUCE_SCATTER)
        return cs__phase_rs(ph, f->a, g, (cs__bufs_t){CS_BUF_IN, work, CS_BUF_OUT}, c,
                            f->nchunks);
    if (desc->coll == CS_COLL_ALLREDUCE && f->a == CS__PH_NVLS) /* reduce and multicast overlap */
        return cs__phase_ar_nvls(ph, g, in, 2 * c, f->nchunks, f->depth);
    if (desc->coll == CS_COLL_ALLREDUCE) {
        int st = cs__phase_rs(ph, f->a, g, (cs__bufs_t){in, CS_BUF_OUT, CS_BUF_OUT}, 2 * c,
                              f->nchunks);
        if (st == CS_OK)
            st = cs__phase_ag(ph, f->a, g, (cs__bufs_t){CS_BUF_OUT, CS_BUF_OUT, CS_BUF_OUT},
                              2 * c + 1, f->nchunks);
        return st;
    }
    return cs_err_set(&ph->s->err, CS_ERR_UNSUPPORTED,
                      "%s is not a reduce-scatter / all-gather collective",
                      cs_coll_name(desc->coll));
}

/* Channel 0 on the caller's stream, every other channel on one of its own
 * (over the same ranks), so the channels' steps do not wait for each other. */
static int flat_emit(cs__phase_t *ph, void *arg)
{
    const flat_arg_t *f = arg;
    int work = flat_work(ph->s, f);
    int st = flat_phases(ph, f, 0, work);
    for (int c = 1; c < f->K && st == CS_OK; c++) {
        cs__phase_t chp;
        st = cs__phase_init(&chp, ph->s);
        if (st == CS_OK) {
            chp.r0 = ph->r0;
            chp.r1 = ph->r1;
            st = flat_phases(&chp, f, c, work);
        }
        cs__phase_fini(&chp);
    }
    return st;
}

/* Rank of member m in channel c's ring (see "Ring order" in cs_flat.h);
 * perm: the channels' orders of a group of L ranks (K x L), or NULL. */
static int ring_member(int P, long L, long K, int c, int m, const int *perm)
{
    if (perm != NULL) {
        int first = (int)((m / L) * L);
        return first + perm[(long)c * L + (m - first)];
    }
    if (L <= 1)
        return (c & 1) ? P - 1 - m : m;
    long first = (m / L) * L, len = P - first < L ? P - first : L;
    return (int)(first + (m - first + (long)c * len / K) % len);
}

int cs__flat_build(const cs_coll_desc_t *desc, cs_params_t *params, const cs_param_desc_t *table,
                   cs__ph_alg_t a, cs_sched_t **out, cs_err_t *err)
{
    uint32_t nchunks = 1;
    long K = 1, L = 1;
    int st = cs__gen_nchunks(params, table, &nchunks, err);
    if (st == CS_OK && cs_param_desc_find(table, "channels") != NULL) {
        st = cs_params_int(params, table, "channels", &K, err);
        if (st == CS_OK && cs_param_desc_find(table, "local") != NULL)
            st = cs_params_int(params, table, "local", &L, err);
    }
    int *perm = NULL;
    if (st == CS_OK)
        st = cs__gen_orders(params, table, desc->nranks, &L, &K, &perm, err);
    long depth = 0;
    if (st == CS_OK && cs_param_desc_find(table, "depth") != NULL)
        st = cs_params_int(params, table, "depth", &depth, err);
    if (st != CS_OK) {
        free(perm);
        return st;
    }
    int P = desc->nranks;
    cs__fold_t f = cs__fold_make(P > 0 ? P : 1);
    int balanced_rhd = desc->coll == CS_COLL_ALLREDUCE && a == CS__PH_RHD;
    /* rhd allreduce: the extra members own nothing, n2 segments in all */
    uint64_t C = (uint64_t)(balanced_rhd ? f.n2 : P) * nchunks * (uint64_t)K;
    if (C > UINT32_MAX / 2) {
        free(perm);
        if (K > 1)
            return cs_err_set(err, CS_ERR_RANGE,
                              "%d ranks x %u chunks x %ld channels is too many chunks", P,
                              nchunks, K);
        return cs_err_set(err, CS_ERR_RANGE, "%d ranks x %u chunks is too many chunks", P,
                          nchunks);
    }
    cs_sched_t *s = cs__gen_create(desc, (uint32_t)C, err, &st);
    if (s == NULL) {
        free(perm);
        return st;
    }
    /* channels of a reduce-scatter / all-gather own a part of every block */
    int placed = K > 1 && desc->coll != CS_COLL_ALLREDUCE;
    int *ranks = malloc((size_t)K * (size_t)P * sizeof(*ranks));
    uint32_t *cut = malloc((size_t)K * ((size_t)P + 1) * sizeof(*cut));
    uint32_t *lo = placed ? malloc((size_t)K * (size_t)P * sizeof(*lo)) : NULL;
    cs__grp_t *g = malloc((size_t)K * sizeof(*g));
    if (ranks == NULL || cut == NULL || g == NULL || (placed && lo == NULL))
        st = cs_err_set(&s->err, CS_ERR_NOMEM, "out of memory");
    for (int c = 0; c < K && st == CS_OK; c++) {
        int *rk = ranks + (size_t)c * P;
        uint32_t *ct = cut + (size_t)c * (P + 1), *l = placed ? lo + (size_t)c * P : NULL;
        /* allreduce channel c: the window [c P nchunks, (c+1) P nchunks) */
        ct[0] = placed ? 0 : (uint32_t)c * (uint32_t)P * nchunks;
        for (int m = 0; m < P; m++) {
            rk[m] = ring_member(P, L, K, c, m, perm);
            int owned = balanced_rhd ? (cs__fold_is_extra(&f, m) ? 0 : 1) : 1;
            ct[m + 1] = ct[m] + (uint32_t)owned * nchunks;
            if (l != NULL) /* part c of rank rk[m]'s block */
                l[m] = ((uint32_t)rk[m] * (uint32_t)K + (uint32_t)c) * nchunks;
        }
        g[c] = (cs__grp_t){rk, P, ct, l};
    }
    if (st == CS_OK) {
        flat_arg_t fa = {desc, a, g, (int)K, (uint32_t)C, nchunks, (uint32_t)depth};
        /* steps: ring and direct about 4 P per rank and chunk, rhd 4 log2 P */
        uint64_t per = a == CS__PH_RHD ? 4u * (uint64_t)cs__log2_floor((uint64_t)P) + 8
                                       : 4u * (uint64_t)P * nchunks * (uint64_t)K;
        /* ring and direct: about that many steps, 56 bytes each (the step,
         * its dependencies, the ranks' arrays); one that cannot fit is
         * refused before it is built */
        const char *why = NULL;
        uint64_t need = (uint64_t)P * per * 56u, avail = cs_mem_available(&why);
        if (a != CS__PH_RHD && need > avail) {
            char x[32], y[32];
            st = cs_err_set(&s->err, CS_ERR_NOMEM,
                            "its %llu steps need about %s and %s %s free (%s): fewer ranks, or "
                            "a hierarchical algorithm",
                            (unsigned long long)P * per, cs_mem_human(need, x, sizeof(x)),
                            cs_mem_human(avail, y, sizeof(y)),
                            avail < (1ull << 20) ? "is" : "are", why);
        } else {
            st = cs__phase_split(s, (uint64_t)P * per, flat_emit, &fa);
        }
    }
    free(perm);
    free(ranks);
    free(cut);
    free(lo);
    free(g);
    return cs__gen_finish(s, st, out, err);
}

double cs__flat_cost(const cs_coll_desc_t *desc, cs__ph_alg_t a, double bytes,
                     const cs_ab_model_t *m)
{
    int P = desc->nranks;
    switch (desc->coll) {
    case CS_COLL_ALLREDUCE:
        return cs__phase_cost(a, P, bytes, m, 1) + cs__phase_cost(a, P, bytes, m, 0);
    case CS_COLL_REDUCE_SCATTER:
        return cs__phase_cost(a, P, bytes, m, 1);
    default:
        return cs__phase_cost(a, P, bytes, m, 0);
    }
}
