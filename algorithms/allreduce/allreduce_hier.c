/*
 * allreduce_hier.c - hierarchical multi-tier allreduce (PowerAI DDL,
 * BlueConnect): one reduce-scatter per tier from the innermost tier
 * outwards, each on the window the tier below left, then the all-gathers
 * back inwards.
 *
 * dims = d0 x d1 x .. (innermost first, product P): rank r has coordinates
 * c_t = (r / (d0 .. d_{t-1})) % d_t, and its tier-t group is the d_t ranks
 * that differ from it only in c_t.  The vector is C = P * nchunks chunks.
 * After the tier-0 reduce-scatter a rank holds the tier-0 sum of 1/d0 of
 * the vector; tier 1 reduce-scatters that window among its tier-1 group,
 * and so on; after the last tier every rank holds 1/P of the total.  Each
 * tier runs its own algorithm (algos: ring, rhd or direct; by default ring
 * on tiers of up to 8 ranks and rhd on larger ones).  Two tier algorithms
 * are switch operations (cs_swphase.h): nvls reduce-scatters by switch
 * load-reduce and all-gathers by switch multicast within each tier group
 * (one switch group each), and sharp, only as the outermost tier, is one
 * in-switch allreduce of each rank's window among its peers in the other
 * groups: dims=8x16,algos=nvls+sharp is NVLS inside 8-GPU nodes and SHARP
 * across 16 nodes (NCCL's NVLS with CollNet).
 *
 *    dims 2x3 (P = 6), tier 0 pairs {0,1} {2,3} {4,5}, tier 1 {0,2,4} {1,3,5}:
 *
 *      tier 0 RS:  r0 <-> r1 : r0 keeps half A, r1 half B (tier-0 sums)
 *      tier 1 RS:  r0, r2, r4 reduce-scatter half A in thirds
 *      tier 1 AG, then tier 0 AG (mirror image)
 *
 * channels = K > 1: the vector is K x P x nchunks chunks and K copies of
 * the whole multi-tier allreduce run at once, copy c over the window [c P
 * nchunks, (c+1) P nchunks) on its own message channels and dependency
 * stream, so one copy's inter-node tier overlaps another's intra-node one.
 * channels = 1 is the one-copy schedule exactly.  Channels do not change
 * the alpha-beta cost below.
 *
 * Cost: the sum over tiers t of RS_t + AG_t on d_t ranks over the window
 * n / (d0 .. d_{t-1}) (see cs__phase_cost); each tier should be costed
 * with its own link model, which one alpha-beta model cannot express.
 * Supports every P and dims whose product is P, any algorithm per tier
 * (rhd folds non-power-of-two tiers), in place.  At most 8 tiers.
 */
#include <stdio.h>
#include <string.h>

#include "common/cs_gen.h"
#include "common/cs_peers.h"
#include "common/cs_phase.h"

#define HIER_MAX_TIERS 8
#define HIER_RING_MAX 8 /* algos=auto: ring on tiers of at most this many ranks */

static const cs_param_desc_t params[] = {
    CS_PARAM_DIMS_ROW("dims", "P", 1, HIER_MAX_TIERS,
                      "tier sizes, innermost first, product P (6x256, 3x2x256)"),
    CS_PARAM_LIST_ROW("algos", "auto", 1, HIER_MAX_TIERS,
                      "algorithm per tier, '+'-separated (ring+rhd); one name applies to all; "
                      "auto: ring on tiers of up to 8 ranks, rhd (logarithmic) on larger ones; "
                      "nvls and sharp: switch operations (sharp: the outermost tier)"),
    CS_PARAM_INT_ROW("nchunks", "1", 1, 65536,
                     "chunks per rank segment (pipelining of ring, nvls and sharp tiers)"),
    CS_PARAM_INT_ROW("channels", "1", 1, CS__PHASE_MAX_CHANNELS,
                     "parts of the vector that go through the tiers at once, each on its own "
                     "channels"),
    CS_PARAM_END,
};

/* dims, algos and nchunks from the parameters, validated against P. */
static int parse(const cs_coll_desc_t *desc, cs_params_t *p, int *dims, cs__ph_alg_t *algs,
                 int *ntiers, uint32_t *nchunks, cs_err_t *err)
{
    int P = desc->nranks;
    int n = cs_params_dims(p, params, "dims", dims, HIER_MAX_TIERS, err);
    if (n < 0)
        return n;
    if (n == 0) {
        dims[0] = P;
        n = 1;
    }
    long prod = 1;
    for (int t = 0; t < n; t++)
        prod *= dims[t];
    if (prod != P)
        return cs_err_set(err, CS_ERR_INVAL,
                          "parameter dims: the product of the tier sizes must be the number of "
                          "ranks %d, found %ld", P, prod);
    const char *a = NULL;
    int na = 0, st = cs_params_list(p, params, "algos", &a, err);
    if (st != CS_OK)
        return st;
    if (strcmp(a, "auto") == 0) {
        /* short tiers (a node's GPUs) gain nothing from fewer steps and keep
         * the ring's neighbour traffic; long ones (across nodes) need the
         * logarithmic latency */
        for (int t = 0; t < n; t++)
            algs[t] = dims[t] <= HIER_RING_MAX ? CS__PH_RING : CS__PH_RHD;
        *ntiers = n;
        return cs__gen_nchunks(p, params, nchunks, err);
    }
    for (const char *c = a; na < HIER_MAX_TIERS;) {
        int len = (int)strcspn(c, "+,:/");
        algs[na] = cs__ph_alg_parse(c, len);
        if (algs[na] == CS__PH_COUNT)
            return cs_err_set(err, CS_ERR_UNSUPPORTED,
                              "parameter algos: expected ring, rhd, direct, nvls or sharp per "
                              "tier, found '%.*s'", len, c);
        na++;
        if (c[len] == '\0')
            break;
        c += len + 1;
    }
    if (na == 1)
        for (int t = 1; t < n; t++)
            algs[t] = algs[0];
    else if (na != n)
        return cs_err_set(err, CS_ERR_INVAL,
                          "parameter algos: %d algorithms for %d tiers (give one per tier, or "
                          "one for all)", na, n);
    *ntiers = n;
    return cs__gen_nchunks(p, params, nchunks, err);
}

typedef struct hier_arg {
    const int *dims, *order;
    const cs__ph_alg_t *algs;
    int ntiers;
    uint32_t len; /* chunks per channel */
    int src;
    uint32_t pieces;
    int channels;
} hier_arg_t;

/* Channel c: the window [c len, (c+1) len) through every tier on message
 * channels 2 c ntiers .., on its own dependency stream (channel 0 on the
 * caller's), so the channels overlap: one crosses the nodes while another
 * is inside them. */
static int hier_emit(cs__phase_t *ph, void *arg)
{
    const hier_arg_t *h = arg;
    int st = cs__phase_multitier(ph, h->dims, h->order, h->algs, h->ntiers, 0, h->len, h->src, 0,
                                 h->pieces);
    for (int c = 1; c < h->channels && st == CS_OK; c++) {
        cs__phase_t chp;
        st = cs__phase_init(&chp, ph->s);
        if (st == CS_OK) {
            chp.r0 = ph->r0;
            chp.r1 = ph->r1;
            st = cs__phase_multitier(&chp, h->dims, h->order, h->algs, h->ntiers,
                                     (uint32_t)c * h->len, h->len, h->src, 2 * c * h->ntiers,
                                     h->pieces);
        }
        cs__phase_fini(&chp);
    }
    return st;
}

static int build(const cs_coll_desc_t *desc, cs_params_t *p, cs_sched_t **out, cs_err_t *err)
{
    int dims[HIER_MAX_TIERS], order[HIER_MAX_TIERS], n = 0;
    cs__ph_alg_t algs[HIER_MAX_TIERS];
    uint32_t nc = 1;
    long K = 1;
    int st = parse(desc, p, dims, algs, &n, &nc, err);
    if (st == CS_OK)
        st = cs_params_int(p, params, "channels", &K, err);
    if (st != CS_OK)
        return st;
    const char *unit = K > 1 ? " (nchunks x channels)" : "";
    cs_sched_t *s = cs__gen_create_blocked(desc, nc * (uint32_t)K, unit, err, &st);
    if (s == NULL)
        return st;
    hier_arg_t h = {dims, order, algs, n, (uint32_t)desc->nranks * nc,
                    desc->inplace ? CS_BUF_OUT : CS_BUF_IN, nc, (int)K};
    /* steps per rank: a ring tier of size d about 4 d per chunk, others fewer */
    uint64_t per = 8;
    for (int t = 0; t < n; t++) {
        order[t] = t;
        per += 4u * (uint64_t)dims[t] * nc * (uint64_t)K;
    }
    st = cs__phase_split(s, (uint64_t)desc->nranks * per, hier_emit, &h);
    return cs__gen_finish(s, st, out, err);
}

static double cost(const cs_coll_desc_t *desc, cs_params_t *p, double bytes,
                   const cs_ab_model_t *m)
{
    int dims[HIER_MAX_TIERS], n = 0;
    cs__ph_alg_t algs[HIER_MAX_TIERS];
    uint32_t nc = 1;
    cs_err_t e = {0};
    if (parse(desc, p, dims, algs, &n, &nc, &e) != CS_OK)
        return -1.0;
    double t = 0.0, w = bytes;
    for (int i = 0; i < n; i++) {
        t += cs__phase_cost(algs[i], dims[i], w, m, 1) + cs__phase_cost(algs[i], dims[i], w, m, 0);
        w /= dims[i];
    }
    return t;
}

/* Switch steps when a tier runs nvls or sharp. */
static int switched(cs_params_t *p)
{
    const char *a = NULL;
    if (cs_params_list(p, params, "algos", &a, NULL) != CS_OK || a == NULL)
        return 0;
    for (const char *c = a;;) {
        int len = (int)strcspn(c, "+,:/");
        cs__ph_alg_t x = cs__ph_alg_parse(c, len);
        if (x == CS__PH_NVLS || x == CS__PH_SHARP)
            return 1;
        if (c[len] == '\0')
            return 0;
        c += len + 1;
    }
}

const cs_algo_t cs__algo_allreduce_hier = {
    .coll = CS_COLL_ALLREDUCE,
    .name = "hier",
    .desc = "hierarchical: per-tier reduce-scatter inside out, all-gather back (BlueConnect)",
    .params = params,
    .build = build,
    .cost = cost,
    .switched = switched,
};
