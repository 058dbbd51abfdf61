/*
 * allreduce_nvls_tree.c - NVLink SHARP inside each NVLink domain (a node,
 * or a rack of them), a tree or a ring across the domains (NCCL's
 * NVLSTree): the switch reduces each domain's slices, the domains combine
 * them over the network, the switch multicasts the result back.
 *
 * Domains are consecutive groups of `local` ranks (the last one shorter when
 * local does not divide P), each one switch group "nvls<k>".  The vector is
 * S = min(local, P) slices of nchunks chunks; in a domain of n members,
 * member j mod n owns slice j (every slice has an owner in every domain).
 *   1. in each domain, for every piece q (a chunk) and slice j: a switch
 *      reduce (channel 0; with channels C, channel 4c for the c-th share
 *      of the pieces) of which the owner receives the domain's sum of
 *      the piece in out (load-reduce; a domain of one copies in -> out);
 *   2. across domains, the owners of slice j (one per domain) allreduce it:
 *      inter=tree: the double binary tree of allreduce dbtree over the
 *        domains (first half of the slice's pieces on tree 0, channel 2, the
 *        rest on tree 1, channel 3; with channels C, the halves of each
 *        channel's share on channels 4c + 2 and 4c + 3, odd channels'
 *        first half on tree 1), each piece as soon as its reduce is done;
 *      inter=ring: a ring reduce-scatter and all-gather of the slice among
 *        its owners (channels 2 and 3), after the domain's reduces;
 *   3. in each domain, the owner multicasts each piece of its slice (channel
 *      1, or 4c + 1) as soon as step 2 has delivered it (one domain: as
 *      soon as its reduce is done), into every member whose own
 *      contribution to the piece is done: the multicasts pipeline with the
 *      reduces.
 *
 *    local = 4, P = 8:   domain {0..3} load-reduce    domain {4..7} load-reduce
 *                        r0 <-tree/ring-> r4, r1 <-> r5, r2 <-> r6, r3 <-> r7
 *                        domain multicasts of each slice
 *
 * Cost (S bytes, n = min(local, P), D = ceil(P / local) domains, alpha and
 * beta for both fabrics, no gamma in the switch):
 *     T = (nchunks + 1) alpha + S (1 + 1/n) beta         (the domain, as nvls)
 *       + 2 (depth + nchunks/2 - 1) (alpha + S / (n nchunks) beta)  (tree), or
 *       + 2 (D - 1) alpha + 2 (D - 1)/D S/n (beta + gamma/2)        (ring).
 * Supports every P >= 1 (one domain: the nvls schedule's effect; domains of
 * one rank: no switch) and in place.  Needs a switch that reduces.
 */
#include <stdlib.h>
#include <string.h>

#include "common/cs_gen.h"
#include "common/cs_swphase.h"
#include "common/cs_trees.h"

static const cs_param_desc_t params[] = {
    CS_PARAM_INT_ROW("nchunks", "4", 1, 65536,
                     "pipeline pieces per slice (reduce, inter-domain, multicast overlap)"),
    CS_PARAM_INT_ROW("local", "8", 1, 65536,
                     "ranks per NVLink domain (consecutive; the last domain is shorter when "
                     "local does not divide P)"),
    CS_PARAM_LIST_ROW("inter", "tree", 1, 1,
                      "across domains: tree (double binary tree, pipelined) or ring"),
    CS_PARAM_INT_ROW("channels", "1", 1, 64,
                     "channels each slice's pieces are spread over (contiguous shares, each "
                     "its own pipeline; NCCL runs NVLSTree on its NVLS channels)"),
    CS_PARAM_END,
};

typedef struct nt {
    int P, L, S, D, tree;
    uint32_t nc, C; /* pieces per slice, channels */
    int src;
    int64_t *rec, *wait; /* P x S x nc: reduce steps, multicast waits */
} nt_t;

static int parse(cs_params_t *p, long *nc, long *L, long *C, int *tree, cs_err_t *err)
{
    const char *inter = NULL;
    int st = cs_params_int(p, params, "nchunks", nc, err);
    if (st == CS_OK)
        st = cs_params_int(p, params, "local", L, err);
    if (st == CS_OK)
        st = cs_params_int(p, params, "channels", C, err);
    if (st == CS_OK)
        st = cs_params_list(p, params, "inter", &inter, err);
    if (st != CS_OK)
        return st;
    *tree = strcmp(inter, "tree") == 0;
    if (!*tree && strcmp(inter, "ring") != 0)
        return cs_err_set(err, CS_ERR_INVAL, "parameter inter: expected tree or ring, found '%s'",
                          inter);
    return CS_OK;
}

/* Each domain's switch reduces (what = CS__SW_RS) or multicasts (_AG). */
static int domains(cs__phase_t *ph, const nt_t *t, int what)
{
    int *mem = malloc((size_t)t->L * sizeof(*mem)), *owner = malloc((size_t)t->S * sizeof(*owner));
    uint32_t *lo = malloc((size_t)t->S * 2 * sizeof(*lo));
    if (!mem || !owner || !lo) {
        free(mem);
        free(owner);
        free(lo);
        return cs_err_set(&ph->s->err, CS_ERR_NOMEM, "out of memory (domains)");
    }
    uint32_t *len = lo + t->S;
    int st = CS_OK;
    for (int d = 0; d < t->D && st == CS_OK; d++) {
        int first = d * t->L, n = t->P - first < t->L ? t->P - first : t->L;
        for (int i = 0; i < n; i++)
            mem[i] = first + i;
        for (int j = 0; j < t->S; j++) {
            lo[j] = (uint32_t)j * t->nc;
            len[j] = t->nc;
            owner[j] = j % n;
        }
        cs__swgrp_t g = {mem, n, t->S, lo, len, owner, 0, t->C, 4};
        st = what == CS__SW_RS
                 ? cs__sw_nvls(ph, &g, CS__SW_RS, t->src, CS_BUF_OUT, 0, t->nc, t->rec, NULL)
                 : cs__sw_nvls(ph, &g, CS__SW_AG, CS_BUF_OUT, CS_BUF_OUT, 1, t->nc, NULL, t->wait);
    }
    free(mem);
    free(owner);
    free(lo);
    return st;
}

/* Slice j's owners across the domains: a double binary tree over the
 * pieces, or a ring phase pair. */
static int across(cs__phase_t *ph, const nt_t *t, int j, int *own, int64_t *after, int64_t *done,
                  uint32_t *cut)
{
    cs_sched_t *s = ph->s;
    for (int d = 0; d < t->D; d++) {
        int first = d * t->L, n = t->P - first < t->L ? t->P - first : t->L;
        own[d] = first + j % n;
    }
    uint32_t base = (uint32_t)j * t->nc;
    if (!t->tree) {
        for (int d = 0; d <= t->D; d++)
            cut[d] = base + (uint32_t)((uint64_t)t->nc * (uint64_t)d / (uint64_t)t->D);
        cs__grp_t g = {own, t->D, cut, NULL};
        cs__bufs_t b = {CS_BUF_OUT, CS_BUF_OUT, CS_BUF_OUT};
        int st = cs__phase_rs_ring(ph, &g, b, 2, 1);
        return st == CS_OK ? cs__phase_ag_ring(ph, &g, b, 3, 1) : st;
    }
    /* per channel c its share of the pieces (as the switch steps take
     * them), the first half of it on tree 0, the rest on tree 1 */
    uint32_t C = t->C < t->nc ? t->C : t->nc;
    for (uint32_t c = 0; c < C; c++) {
        uint32_t c0 = (uint32_t)((uint64_t)t->nc * c / C), c1 = (uint32_t)((uint64_t)t->nc * (c + 1) / C);
        uint32_t h = c0 + (c1 - c0 + 1) / 2;
        for (int half = 0; half < 2; half++) {
            /* odd channels take tree 1 first, so that both trees carry
             * pieces at once from the start */
            int which = (int)(c % 2) ^ half;
            uint32_t a = half ? h : c0, e = half ? c1 : h;
            if (e <= a)
                continue;
            uint32_t ns = e - a;
            for (int d = 0; d < t->D; d++)
                for (uint32_t q = 0; q < ns; q++)
                    after[(size_t)d * ns + q] =
                        t->rec[((size_t)own[d] * t->S + j) * t->nc + a + q];
            cs__tree_t tr;
            cs__tree_dbtree(&tr, t->D, which);
            cs__tree_pipe_t p = {.chan = 4 * (int)c + 2 + which, .first = base + a, .count = ns,
                                 .nseg = ns, .src = CS_BUF_OUT, .dst = CS_BUF_OUT, .ranks = own};
            cs__tree_reduce(s, &tr, &p, after, done);
            cs__tree_bcast(s, &tr, &p, done, after);
            for (int d = 0; d < t->D; d++)
                for (uint32_t q = 0; q < ns; q++)
                    t->wait[((size_t)own[d] * t->S + j) * t->nc + a + q] =
                        after[(size_t)d * ns + q];
        }
    }
    return cs_sched_status(s);
}

static int build(const cs_coll_desc_t *desc, cs_params_t *p, cs_sched_t **out, cs_err_t *err)
{
    long nc = 4, L = 8, C = 1;
    nt_t t = {0};
    int st = parse(p, &nc, &L, &C, &t.tree, err);
    if (st != CS_OK)
        return st;
    t.P = desc->nranks;
    t.L = L < t.P ? (int)L : t.P;
    t.S = t.L;
    t.D = (t.P + t.L - 1) / t.L;
    t.nc = (uint32_t)nc;
    t.C = (uint32_t)C;
    t.src = desc->inplace ? CS_BUF_OUT : CS_BUF_IN;
    if ((uint64_t)t.S * t.nc > UINT32_MAX / 2)
        return cs_err_set(err, CS_ERR_RANGE, "%d slices x %u chunks is too many chunks", t.S, t.nc);
    cs_sched_t *s = cs__gen_create(desc, (uint32_t)t.S * t.nc, err, &st);
    if (s == NULL)
        return st;
    size_t slots = (size_t)t.P * (size_t)t.S * t.nc;
    t.rec = malloc(slots * sizeof(*t.rec));
    t.wait = malloc(slots * sizeof(*t.wait));
    int *own = malloc((size_t)t.D * sizeof(*own));
    int64_t *after = malloc((size_t)t.D * t.nc * sizeof(*after));
    int64_t *done = malloc((size_t)t.D * t.nc * sizeof(*done));
    uint32_t *cut = malloc(((size_t)t.D + 1) * sizeof(*cut));
    cs__phase_t ph;
    st = cs__phase_init(&ph, s);
    if (st == CS_OK && (!t.rec || !t.wait || !own || !after || !done || !cut))
        st = cs_err_set(&s->err, CS_ERR_NOMEM, "out of memory (%d ranks)", t.P);
    if (st == CS_OK) {
        for (size_t k = 0; k < slots; k++)
            t.rec[k] = t.wait[k] = -1;
        st = domains(&ph, &t, CS__SW_RS);
    }
    for (int j = 0; j < t.S && t.D > 1 && st == CS_OK; j++)
        st = across(&ph, &t, j, own, after, done, cut);
    /* the multicasts pipeline with the reduces and the trees: each waits
     * for its piece only (the owner for the sum it multicasts, the tree's
     * or its own reduce's; every other member for its own contribution to
     * the piece, which in place shares the chunks the multicast writes),
     * not for the end of the reduce phase (inter=ring: after its phases) */
    for (int r = 0; r < t.P && st == CS_OK && (t.tree || t.D == 1); r++) {
        ph.front[r] = -1;
        for (size_t k = (size_t)r * t.S * t.nc; k < ((size_t)r + 1) * t.S * t.nc; k++)
            if (t.wait[k] < 0)
                t.wait[k] = t.rec[k];
    }
    if (st == CS_OK)
        st = domains(&ph, &t, CS__SW_AG);
    cs__phase_fini(&ph);
    free(t.rec);
    free(t.wait);
    free(own);
    free(after);
    free(done);
    free(cut);
    return cs__gen_finish(s, st, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *p, double bytes,
                   const cs_ab_model_t *m)
{
    long nc = 4, L = 8, C = 1;
    int tree = 1;
    cs_params_int(p, params, "nchunks", &nc, NULL); /* the defaults if invalid */
    cs_params_int(p, params, "local", &L, NULL);
    if (parse(p, &nc, &L, &C, &tree, NULL) != CS_OK)
        tree = 1;
    int P = desc->nranks, n = L < P ? (int)L : P, D = (P + n - 1) / n;
    if (P < 2)
        return 0.0;
    double t = 0.0, slice = bytes / n;
    if (n > 1)
        t += (double)(nc + 1) * m->alpha + bytes * (1.0 + 1.0 / n) * m->beta;
    if (D > 1 && tree) {
        cs__tree_t tr;
        cs__tree_dbtree(&tr, D, 0);
        double half = nc > 1 ? (double)nc / 2 : 1.0;
        t += 2.0 * ((double)cs__tree_depth(&tr) + half - 1.0) *
                 (m->alpha + slice / (double)nc * m->beta) +
             slice * m->gamma;
    } else if (D > 1) {
        t += 2.0 * (D - 1) * m->alpha + 2.0 * (D - 1) / D * slice * m->beta +
             (double)(D - 1) / D * slice * m->gamma;
    }
    return t;
}

const cs_algo_t cs__algo_allreduce_nvls_tree = {
    .coll = CS_COLL_ALLREDUCE,
    .name = "nvls_tree",
    .desc = "NVLS in each NVLink domain, a tree (or ring) across domains (NCCL's NVLSTree)",
    .params = params,
    .build = build,
    .cost = cost,
    .switched = cs__sw_always,
};
