/*
 * cs_nccl_tune.c - NCCL's tuner on a derived system: the latency and
 * bandwidth of every algorithm and protocol per collective (tuning.cc's
 * ncclTopoTuneModel), the time of one collective (enqueue.cc's
 * ncclTopoGetAlgoTime) and the choice of the fastest pair; and what each
 * step of a collstep schedule pays when it runs under those costs.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cs_algo.h"
#include "cs_nccl.h"

static int log2i(int n)
{
    int l = 0;
    while (n >>= 1)
        l++;
    return l;
}

static int nsteps_of(cs_coll_t coll, int n)
{
    if (coll == CS_COLL_ALLREDUCE)
        return 2 * (n - 1);
    if (coll == CS_COLL_REDUCE_SCATTER || coll == CS_COLL_ALLGATHER)
        return n - 1;
    return n;
}

/* Which algorithms NCCL considers for a collective. */
static int algo_for_coll(cs_coll_t coll, int a)
{
    switch (coll) {
    case CS_COLL_ALLREDUCE:
        return a != CS_NCCL_PAT;
    case CS_COLL_REDUCE_SCATTER:
    case CS_COLL_ALLGATHER:
        return a == CS_NCCL_RING || a == CS_NCCL_NVLS || a == CS_NCCL_COLLNET_DIRECT ||
               a == CS_NCCL_PAT;
    case CS_COLL_BROADCAST:
    case CS_COLL_REDUCE:
        return a == CS_NCCL_RING;
    default:
        return 0;
    }
}

/* device.h's ncclNvlsSupported: sum on every type NVLS has, min and max on
 * 16-bit floats and integers; floats and doubles sum only. */
static int nvls_reduces(int dtype, int op)
{
    switch (dtype) {
    case CS_DT_I32:
    case CS_DT_I64:
    case CS_DT_F16:
    case CS_DT_BF16:
        return op == CS_OP_SUM || op == CS_OP_MIN || op == CS_OP_MAX;
    case CS_DT_F32:
    case CS_DT_F64:
        return op == CS_OP_SUM;
    default:
        return 0;
    }
}

/* The protocol-and-algorithm enable rules of tuning.cc (defaults, no
 * NCCL_ALGO / NCCL_PROTO), and enqueue.cc's NVLS check of the operation. */
static int enabled(const cs_nccl_consts_t *k, const cs_nccl_sys_t *sys, cs_coll_t coll, int a,
                   int p)
{
    /* NVLS all-gather and reduce-scatter: one node (an NVLS graph of at
     * most NCCL's NVLS arity, 8 ranks in 2.20), and from 2.25 at most 32
     * ranks (enqueue.cc) */
    if (a == CS_NCCL_NVLS && (coll == CS_COLL_ALLGATHER || coll == CS_COLL_REDUCE_SCATTER) &&
        (sys->nnodes > 1 || (k->minor < 21 && sys->nranks > 8) ||
         (k->minor >= 25 && sys->nranks > 32)))
        return 0;
    /* PAT: from 2.23, SM60 and up */
    if (a == CS_NCCL_PAT && (k->minor < 23 || sys->cc < 60 || !(k->pat_factor > 0)))
        return 0;
    if ((a == CS_NCCL_NVLS || a == CS_NCCL_NVLS_TREE) && coll != CS_COLL_ALLGATHER &&
        !nvls_reduces(sys->dtype, sys->op))
        return 0;
    if ((a == CS_NCCL_NVLS || a == CS_NCCL_NVLS_TREE || a == CS_NCCL_COLLNET_DIRECT ||
         a == CS_NCCL_COLLNET_CHAIN || a == CS_NCCL_PAT) &&
        p != CS_NCCL_SIMPLE)
        return 0;
    if (p == CS_NCCL_LL128) {
        /* on by default only on NVLink nodes of Volta, Ampere and Hopper
         * (and Blackwell in versions that know it), one GPU model */
        if (sys->graph[a].type_intra != CS_SIM_HW_NVLINK || sys->rccl)
            return 0;
    }
    if (a == CS_NCCL_NVLS_TREE && sys->nnodes == 1)
        return 0;
    if (sys->rccl && a == CS_NCCL_TREE && p == CS_NCCL_SIMPLE && sys->nnodes == 1)
        return 0; /* RCCL skips Tree/Simple on one gfx94 node */
    if (a == CS_NCCL_NVLS && (!sys->nvls || (sys->nnodes > 1 && !sys->collnet)))
        return 0;
    if (a == CS_NCCL_NVLS_TREE && !sys->nvls)
        return 0;
    if ((a == CS_NCCL_COLLNET_DIRECT || a == CS_NCCL_COLLNET_CHAIN) && !sys->collnet)
        return 0;
    if (a == CS_NCCL_PAT && sys->nnodes != sys->nranks)
        return 0;
    if (sys->graph[a].nch <= 0)
        return 0;
    return 1;
}

/* Bus bandwidth (GB/s, before the conversion to algorithm bandwidth) of
 * (a, p), with `bw` per channel. */
static double bus_bw(const cs_nccl_consts_t *k, const cs_nccl_sys_t *sys, cs_coll_t coll, int a,
                     int p, double bw)
{
    const cs_nccl_graph_t *g = &sys->graph[a];
    int nn = sys->nnodes, idx2 = nn <= 2 ? nn - 1 : 2;
    int arch = sys->arch;
    int idx1 = nn == 1 ? arch : (sys->cpu_amd ? 1 : 0);
    double ppn = (double)sys->nranks / nn;
    double ll_max = k->ll_max_bw[idx1][idx2];
    double bus = g->nch * bw;
    if (k->rccl) {
        /* RCCL: one ratio per algorithm and protocol (on one node too) */
        if (a == CS_NCCL_TREE || a == CS_NCCL_RING)
            return bus * k->ratio[nn > 2][a == CS_NCCL_RING][p];
        return bus;
    }
    if (a == CS_NCCL_RING && p == CS_NCCL_LL) {
        double f = (nn > 1 || coll == CS_COLL_ALLREDUCE || coll == CS_COLL_REDUCE)
                       ? k->ring_ll_factor
                       : k->ring_ll_factor_1;
        bus = fmin(ll_max, bus * f);
    }
    if (a == CS_NCCL_RING && p == CS_NCCL_LL128)
        bus = fmin(bus * (ppn < 2 ? k->ll128_ppn1 : 0.92), g->nch * k->ring_ll128_bw[arch][idx2]);
    if (a == CS_NCCL_TREE && (coll == CS_COLL_ALLREDUCE))
        bus = fmin(bus * .92, g->nch * k->tree_bw[arch][idx2]);
    if (a == CS_NCCL_TREE && p == CS_NCCL_LL)
        bus = fmin(bus / 3.8, ll_max);
    if (a == CS_NCCL_TREE && p == CS_NCCL_LL128)
        bus = fmin(bus * (nn == 1 ? 7.0 / 9.0 : 120.0 / 128.0), g->nch * k->tree_ll128_bw[arch][idx2]);
    if (a == CS_NCCL_PAT)
        bus *= k->pat_factor;
    if (a == CS_NCCL_COLLNET_DIRECT) {
        double factor = ppn / g->nch;
        factor -= (factor - 1) / 2;
        bus /= factor;
        if (sys->cc >= 90)
            bus *= .85;
    }
    return bus;
}

/* Per-channel bandwidth NCCL uses for (a, p); switch_only: NVLS's part in
 * the switch alone, without the network's bound (a simulation moves the
 * network's part over the platform's links). */
static double chan_bw_of(const cs_nccl_consts_t *k, const cs_nccl_sys_t *sys, cs_coll_t coll,
                         int a, int switch_only)
{
    const cs_nccl_graph_t *g = &sys->graph[a];
    int nn = sys->nnodes, idx2 = nn <= 2 ? nn - 1 : 2;
    double ppn = (double)sys->nranks / nn;
    int collnet = a == CS_NCCL_COLLNET_DIRECT || a == CS_NCCL_COLLNET_CHAIN;
    double bw = nn <= 2 || collnet ? g->bw_intra : g->bw_inter;
    if (a == CS_NCCL_NVLS || a == CS_NCCL_NVLS_TREE) {
        if (switch_only && k->nvls_model == 0) {
            bw = g->bw_intra;
        } else if (k->nvls_model == 0) {
            bw = a == CS_NCCL_NVLS ? fmin(g->bw_intra, g->bw_inter)
                                   : fmin(g->bw_intra, nn <= 2 ? g->bw_inter : g->bw_inter / 2);
        } else {
            if (g->nch < 2)
                return 0;
            double intra = g->bw_intra * k->nvls_eff[sys->arch] * (g->nch - 1) / g->nch;
            intra *= coll == CS_COLL_ALLREDUCE ? 2.0 : (ppn - 1) / ppn;
            double inter = g->bw_inter * ((nn <= 2 && a == CS_NCCL_NVLS_TREE) ? 2 : 1);
            bw = switch_only ? intra : fmin(intra, inter);
            if (!switch_only && a == CS_NCCL_NVLS_TREE && k->nvls_tree_bw[sys->arch][idx2] > 0)
                bw = fmin(bw, k->nvls_tree_bw[sys->arch][idx2]);
        }
    }
    return bw;
}

static double chan_bw(const cs_nccl_consts_t *k, const cs_nccl_sys_t *sys, cs_coll_t coll, int a)
{
    return chan_bw_of(k, sys, coll, a, 0);
}

static double alg_ratio(const cs_nccl_consts_t *k, const cs_nccl_sys_t *sys, cs_coll_t coll, int a)
{
    int nsteps = nsteps_of(coll, sys->nranks);
    /* all-gather and reduce-scatter keep their bus bandwidth: every
     * algorithm but Ring from 2.23, CollNetDirect only before */
    if ((coll == CS_COLL_ALLGATHER || coll == CS_COLL_REDUCE_SCATTER) &&
        (k->minor >= 23 ? a != CS_NCCL_RING : a == CS_NCCL_COLLNET_DIRECT))
        return 1.0;
    if (a == CS_NCCL_RING)
        return (double)sys->nranks / nsteps;
    if (a == CS_NCCL_NVLS || a == CS_NCCL_NVLS_TREE)
        return k->nvls_model == 0 ? 5.0 / 6.0 : (double)sys->nranks / nsteps;
    return 0.5;
}

/* NCCL's per-step latencies (us) of (a, p): intra-node and network. */
static void step_lats(const cs_nccl_consts_t *k, const cs_nccl_sys_t *sys, int a, int p,
                      double *intra, double *inter)
{
    int hw_intra = sys->graph[a].type_intra;
    double ppn = (double)sys->nranks / sys->nnodes;
    *intra = k->hw_lat[hw_intra][a][p];
    *inter = (k->inter_steps_v2 && ppn == 1) ? k->hw_lat[CS_SIM_HW_NET][CS_NCCL_TREE][p]
                                              : k->hw_lat[CS_SIM_HW_NET][a][p];
}

/* Network post overhead (us): 1 us per step (2 on AMD CPUs), 3x for Simple */
static double net_overhead(const cs_nccl_sys_t *sys, int p)
{
    double o = sys->cpu_amd ? 2.0 : 1.0;
    return p == CS_NCCL_SIMPLE ? 3 * o : o;
}

/* NCCL's latency of (coll, a, p) in three parts (us): the base, the steps
 * inside a node and those across (tuning.cc; their sum is the tuner's
 * latency table; cs_nccl_time then multiplies Ring/Simple allreduce's
 * across nodes by 1.4, 1.9 before compute capability 8.0, which the parts
 * leave out). */
static void lat_parts(const cs_nccl_consts_t *k, const cs_nccl_sys_t *sys, cs_coll_t coll, int a,
                      int p, double *base, double *in, double *net)
{
    int n = sys->nranks, nn = sys->nnodes, nsteps = nsteps_of(coll, n), lr = n / nn;
    double intra, inter;
    step_lats(k, sys, a, p, &intra, &inter);
    *base = k->base_lat[a][p], *in = 0, *net = 0;
    switch (a) {
    case CS_NCCL_RING:
        if (coll == CS_COLL_REDUCE || coll == CS_COLL_BROADCAST) {
            double st = nn == 1 ? intra : k->hw_lat[CS_SIM_HW_NET][a][p];
            if (p == CS_NCCL_SIMPLE)
                st = k->hw_lat[nn == 1 ? sys->graph[a].type_intra : CS_SIM_HW_NET][CS_NCCL_TREE][p];
            *(nn == 1 ? in : net) = nsteps * st;
        } else {
            int ninter;
            if (nn > 1)
                intra = fmax(intra, net_overhead(sys, p));
            if (k->inter_steps_v2)
                ninter = nn == 1 ? 0 : coll == CS_COLL_ALLREDUCE ? 2 * (nn - 1) : nn - 1;
            else
                ninter = coll == CS_COLL_ALLREDUCE ? (nn > 1 ? 2 * nn : 0)
                         : (coll == CS_COLL_REDUCE_SCATTER || coll == CS_COLL_ALLGATHER)
                             ? nn - 1
                             : nn;
            if (nn == 1)
                ninter = 0;
            *in = (nsteps - ninter) * intra;
            *net = ninter * inter;
        }
        break;
    case CS_NCCL_TREE:
        *in = 2 * (lr - 1) * intra;
        *net = 2 * log2i(nn) * inter;
        break;
    case CS_NCCL_COLLNET_DIRECT:
        *in = 2 * ((lr - 1 < 1 ? lr - 1 : 1) * intra + (lr - 1) * 0.4);
        *net = inter;
        break;
    case CS_NCCL_COLLNET_CHAIN:
        *in = 2 * (lr - 1) * intra;
        *net = inter;
        break;
    case CS_NCCL_NVLS:
        *base = 0;
        *in = intra;
        *net = nn > 1 ? inter : 0;
        break;
    case CS_NCCL_NVLS_TREE:
        *in = intra;
        *net = 2 * log2i(nn) * inter;
        break;
    case CS_NCCL_PAT:
        *net = log2i(nn) * (inter / 3.5);
        *in = n * 2.8;
        break;
    }
}

void cs_nccl_tune(const cs_nccl_consts_t *k, const cs_nccl_sys_t *sys, cs_coll_t coll,
                  float lat[CS_NCCL_NALGOS][CS_NCCL_NPROTOS],
                  float bw[CS_NCCL_NALGOS][CS_NCCL_NPROTOS])
{
    int n = sys->nranks;
    for (int a = 0; a < CS_NCCL_NALGOS; a++)
        for (int p = 0; p < CS_NCCL_NPROTOS; p++) {
            lat[a][p] = 0;
            bw[a][p] = 0;
            if (n <= 1 || !algo_for_coll(coll, a) || !enabled(k, sys, coll, a, p))
                continue;
            double b = bus_bw(k, sys, coll, a, p, chan_bw(k, sys, coll, a));
            bw[a][p] = (float)(b * alg_ratio(k, sys, coll, a));
            double lb, li, ln;
            lat_parts(k, sys, coll, a, p, &lb, &li, &ln);
            lat[a][p] = (float)(lb + li + ln);
        }
}

/* enqueue.cc: Tree's correction factor for allreduce, by log2(bytes / 64) */
static const float tree_correction[CS_NCCL_NPROTOS][23] = {
    {1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .7f, .7f, .7f, .7f, .6f, .5f, .4f, .4f, .5f, .6f, .7f,
     .8f, .9f, 1.0f, 1.0f, 1.0f, 1.0f},
    {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .8f, .8f, .7f, .6f, .6f, .6f, .6f, .6f, .6f, .8f,
     .9f, .9f, .9f, .9f, 1.0f, 1.0f},
    {.9f, .9f, .9f, .9f, .9f, .9f, .9f, .8f, .7f, .6f, .6f, .5f, .5f, .5f, .5f, .6f, .7f, .8f,
     .7f, .7f, .8f, .9f, .9f}};

double cs_nccl_time(const cs_nccl_consts_t *k, const cs_nccl_sys_t *sys, cs_coll_t coll,
                    int algo, int proto, uint64_t bytes)
{
    float lat[CS_NCCL_NALGOS][CS_NCCL_NPROTOS], bw[CS_NCCL_NALGOS][CS_NCCL_NPROTOS];
    if (algo < 0 || algo >= CS_NCCL_NALGOS || proto < 0 || proto >= CS_NCCL_NPROTOS)
        return -1;
    cs_nccl_tune(k, sys, coll, lat, bw);
    double b = bw[algo][proto], l = lat[algo][proto];
    if (b <= 0)
        return -1;
    int logsize = -1;
    for (uint64_t x = bytes >> 6; x; x >>= 1)
        logsize++;
    if (algo == CS_NCCL_TREE && coll == CS_COLL_ALLREDUCE && logsize >= 0 && logsize < 23)
        b *= tree_correction[proto][logsize];
    /* the ring's plateau across nodes (Simple, allreduce) */
    int ncomm = 2 * sys->graph[algo].nch, maxch = k->minor >= 25 ? 64 : 32;
    if (ncomm > maxch)
        ncomm = maxch;
    if (algo == CS_NCCL_RING && proto == CS_NCCL_SIMPLE && sys->nnodes > 1 &&
        coll == CS_COLL_ALLREDUCE && ncomm > 0 &&
        bytes / ((uint64_t)ncomm * (uint64_t)sys->nranks) >= 64)
        l *= sys->cc < 80 ? 1.9 : 1.4;
    return l + (double)bytes / (1000.0 * b);
}

int cs_nccl_choose(const cs_nccl_consts_t *k, const cs_nccl_sys_t *sys, cs_coll_t coll,
                   uint64_t bytes, int algo, int proto, int *algo_out, int *proto_out,
                   double *time_us)
{
    double best = -1;
    int ba = -1, bp = -1;
    for (int a = 0; a < CS_NCCL_NALGOS; a++) {
        if (algo >= 0 && a != algo)
            continue;
        for (int p = 0; p < CS_NCCL_NPROTOS; p++) {
            if (proto >= 0 && p != proto)
                continue;
            double t = cs_nccl_time(k, sys, coll, a, p, bytes);
            if (t >= 0 && (best < 0 || t < best))
                best = t, ba = a, bp = p;
        }
    }
    if (ba < 0)
        return CS_ERR_NOTFOUND;
    *algo_out = ba;
    *proto_out = bp;
    if (time_us)
        *time_us = best;
    return CS_OK;
}

int cs_nccl_algo_of(const cs_sched_t *s, const cs_nccl_sys_t *sys)
{
    int nvls = 0, sharp = 0;
    if (s->ngroups > 0) {
        /* the generators name the switch they use */
        sharp = strstr(s->algo, "sharp") != NULL || strstr(s->params, "sharp") != NULL;
        nvls = strstr(s->algo, "nvls") != NULL || strstr(s->params, "nvls") != NULL || !sharp;
    }
    if (nvls)
        return sys->nnodes > 1 ? CS_NCCL_NVLS_TREE : CS_NCCL_NVLS;
    if (sharp)
        return CS_NCCL_COLLNET_DIRECT;
    if (strstr(s->algo, "tree") || strcmp(s->algo, "binomial") == 0)
        return CS_NCCL_TREE;
    return CS_NCCL_RING;
}

/* The channels NCCL runs a collective of `bytes` on, out of the
 * communicator's (the graph's, doubled): enqueue.cc drops channels while
 * each thread would get less than its threshold of bytes (LL 8 x nRanks
 * for Ring, LL128 8, Simple 64; 512 threads, 640 for LL128), and from 2.23
 * gives each channel at least 16 KiB of traffic (32 KiB from 2.29). */
static double chan_fraction(const cs_nccl_consts_t *k, const cs_nccl_sys_t *sys, cs_coll_t coll,
                            int algo, int proto, uint64_t bytes)
{
    const cs_nccl_graph_t *g = &sys->graph[algo == CS_NCCL_TREE ? CS_NCCL_TREE : CS_NCCL_RING];
    int maxch = k->minor >= 25 ? 64 : 32;
    int ncomm = 2 * g->nch > maxch ? maxch : 2 * g->nch;
    if (ncomm < 1 || bytes == 0)
        return 1.0;
    double nt = proto == CS_NCCL_LL128 ? 640 : 512;
    double thr = proto == CS_NCCL_LL ? 8.0 * (algo == CS_NCCL_RING ? sys->nranks : 1)
                 : proto == CS_NCCL_LL128 ? 8.0 : 64.0;
    int nc = ncomm;
    while ((double)bytes < nc * nt * thr && nc >= 2)
        nc--;
    if (k->minor >= 23) {
        double traffic = (double)bytes * (coll == CS_COLL_ALLREDUCE ? 2
                                          : (coll == CS_COLL_ALLGATHER ||
                                             coll == CS_COLL_REDUCE_SCATTER) ? sys->nranks : 1);
        if (proto == CS_NCCL_LL && (k->minor > 26 || (k->minor == 26 && k->patch >= 2)))
            traffic *= 4;
        double min_traffic = k->minor >= 29 ? 32768.0 : 16384.0;
        double by_traffic = ceil(traffic / min_traffic);
        if (by_traffic < nc)
            nc = by_traffic < 1 ? 1 : (int)by_traffic;
    }
    return (double)nc / ncomm;
}

int cs_nccl_channels(const cs_nccl_consts_t *k, const cs_nccl_sys_t *sys, cs_coll_t coll,
                     int algo, int proto, uint64_t bytes)
{
    if (algo == CS_NCCL_P2P)
        return cs_nccl_p2p_channels(sys);
    if (algo < 0 || algo >= CS_NCCL_NALGOS)
        return 0;
    if (algo != CS_NCCL_RING && algo != CS_NCCL_TREE)
        return sys->graph[algo].nch;
    int maxch = k->minor >= 25 ? 64 : 32, nch = sys->graph[algo].nch;
    int ncomm = 2 * nch > maxch ? maxch : 2 * nch;
    return (int)(chan_fraction(k, sys, coll, algo, proto, bytes) * ncomm + 0.5);
}

/* The integer value of `key` in a schedule's "k=v k=v" params, def when
 * absent (a key counts at the start or after a space or comma only). */
static int param_int(const char *params, const char *key, int def)
{
    size_t kl = strlen(key);
    for (const char *p = params; p && (p = strstr(p, key)) != NULL; p += kl)
        if ((p == params || p[-1] == ' ' || p[-1] == ',') && p[kl] == '=')
            return atoi(p + kl + 1);
    return def;
}

/* A schedule's integer parameter: as given, else its generator's
 * default (a schedule keeps only the parameters it was given). */
static int sched_param(const cs_sched_t *s, const char *key, int def)
{
    int v = param_int(s->params, key, -1);
    if (v >= 0)
        return v;
    const cs_algo_t *a = cs_algo_find(s->desc.coll, s->algo);
    for (const cs_param_desc_t *d = a ? a->params : NULL; d && d->key; d++)
        if (strcmp(d->key, key) == 0 && d->def && isdigit((unsigned char)d->def[0]))
            return atoi(d->def);
    return def;
}

void cs_nccl_step_costs(const cs_nccl_consts_t *k, const cs_nccl_sys_t *sys, const cs_sched_t *s,
                        int algo, int proto, uint64_t bytes, cs_sim_nccl_t *out)
{
    cs_coll_t coll = s->desc.coll;
    memset(out, 0, sizeof(*out));
    /* NCCL's send/receive path pays Ring's costs with Simple, and its own
     * fitted factors (label) */
    int label = algo;
    if (algo < 0 || algo >= CS_NCCL_NALGOS)
        algo = CS_NCCL_RING, proto = CS_NCCL_SIMPLE;
    /* point-to-point steps pay a ring's or a tree's step; those of switch
     * schedules (their inter-node parts) the ring's */
    int pa = algo == CS_NCCL_TREE ? CS_NCCL_TREE : CS_NCCL_RING;
    int pp = proto;
    if (pa != algo && k->hw_lat[0][pa][pp] <= 0)
        pp = CS_NCCL_SIMPLE;
    double intra, inter;
    step_lats(k, sys, pa, pp, &intra, &inter);
    if (sys->nnodes > 1 && pa == CS_NCCL_RING &&
        !(coll == CS_COLL_REDUCE || coll == CS_COLL_BROADCAST))
        intra = fmax(intra, net_overhead(sys, pp));
    out->lat[CS_SIM_HW_NVLINK] = k->hw_lat[CS_SIM_HW_NVLINK][pa][pp] > 0 && sys->graph[pa].type_intra == CS_SIM_HW_NVLINK ? intra : k->hw_lat[CS_SIM_HW_NVLINK][pa][pp];
    out->lat[CS_SIM_HW_PCI] = sys->graph[pa].type_intra == CS_SIM_HW_PCI ? intra : k->hw_lat[CS_SIM_HW_PCI][pa][pp];
    out->lat[CS_SIM_HW_NET] = inter;
    /* NCCL charges its latency per step of the algorithm (a block moving
     * one hop); a schedule that moves a block in C pieces pays it once per
     * block, a C-th on each piece */
    int npieces = sched_param(s, "nchunks", 1);
    double pieces = npieces > 1 ? (double)npieces : 1.0;
    for (int c = 0; c < CS_SIM_HW_COUNT; c++)
        out->lat[c] *= 1e-6 / pieces;
    out->base_lat = k->base_lat[algo][proto] * 1e-6;
    /* a connection's buffer: NCCL_STEPS steps of the protocol's (init.cc:
     * DEFAULT_BUFFSIZE 4 MiB, DEFAULT_LL128_BUFFSIZE 120 x 640 x 8 x 8 B of
     * lines with 120 B of data in 128, DEFAULT_LL_BUFFSIZE 8 x 512 x 8 x 16
     * B of lines with half data) */
    static const double step_bytes[CS_NCCL_NPROTOS] = {32768.0, 576000.0, 524288.0};
    out->step_bytes = step_bytes[pp];
    /* protocols' wire efficiency: LL carries 8 bytes of data in 16, LL128
     * 120 in 128 */
    double eff = pp == CS_NCCL_LL ? 0.5 : pp == CS_NCCL_LL128 ? 120.0 / 128.0 : 1.0;
    /* caps: the pair's bus bandwidth, inside a node from bwIntra, across
     * from bwInter, spread over the schedule's parallel channels */
    const cs_nccl_graph_t *g = &sys->graph[pa];
    int ch = sched_param(s, "channels", 1);
    if (ch < 1)
        ch = 1;
    /* orders name a channel each (ring, dbtree) */
    const char *ord = strstr(s->params, "orders=");
    if (ord && (ord == s->params || ord[-1] == ' ' || ord[-1] == ',') &&
        strncmp(ord + 7, "none", 4) != 0) {
        int n = 1;
        for (const char *c = ord + 7; *c && *c != ' ' && *c != ','; c++)
            n += *c == '+' || *c == ':' || *c == '/';
        if (n > ch)
            ch = n;
    }
    double share = ch > g->nch && g->nch > 0 ? g->nch : ch;
    cs_nccl_sys_t one = *sys;
    double bi = bus_bw(k, &one, coll, pa, pp, g->bw_intra);
    double bn = bus_bw(k, &one, coll, pa, pp, g->bw_inter > 0 ? g->bw_inter : g->bw_intra);
    /* a small collective runs on fewer of the channels */
    double frac = algo == CS_NCCL_RING || algo == CS_NCCL_TREE
                      ? chan_fraction(k, sys, coll, pa, pp, bytes)
                      : 1.0;
    for (int c = 0; c < CS_SIM_HW_COUNT; c++) {
        out->eff[c] = eff;
        out->cap[c] = (c == CS_SIM_HW_NET ? bn : bi) * 1e9 * frac / share;
    }
    double start_in = 0, start_net = 0; /* NCCL's step latencies paid at the start (us) */
    if (algo == CS_NCCL_NVLS || algo == CS_NCCL_NVLS_TREE) {
        /* NVLS: its latency once, its bandwidth the switch's reduction rate
         * per member (NCCL's algorithm bandwidth of the pair) */
        double li, ln;
        step_lats(k, sys, algo, CS_NCCL_SIMPLE, &li, &ln);
        start_in = li;
        if (sys->nnodes > 1 && algo == CS_NCCL_NVLS)
            start_net = ln;
        out->base_lat += (start_in + start_net) * 1e-6;
        /* the switch's part: the network's is simulated on the links */
        double b = bus_bw(k, sys, coll, algo, CS_NCCL_SIMPLE,
                          chan_bw_of(k, sys, coll, algo, sys->nnodes > 1));
        out->sw_rate = b * alg_ratio(k, sys, coll, algo) * 1e9;
    }
    out->sw_eff = 1.0;
    /* NVLS's rate is the switch's (sw_rate, shared by every operation in
     * flight), not a cap per transfer */
    out->sw_cap = 0;
    /* each switch operation (a chunk's load-reduce and multicast) is a step
     * of a Simple kernel over NVLink: NCCL's per-step latency of Simple on
     * NVLink */
    out->sw_lat = (algo == CS_NCCL_NVLS || algo == CS_NCCL_NVLS_TREE)
                      ? k->hw_lat[CS_SIM_HW_NVLINK][CS_NCCL_RING][CS_NCCL_SIMPLE] * 1e-6
                      : 0;
    /* NVLSTree's pieces (cs_nccl_as_sched) are NCCL's loop iterations, a
     * tree's half of its channels moving a chunk each at once: a piece
     * pays one step, as an NVLS operation does */
    if (algo == CS_NCCL_COLLNET_DIRECT || algo == CS_NCCL_COLLNET_CHAIN) {
        /* CollNet's network latency once per collective: a C-th per piece */
        double li, ln;
        step_lats(k, sys, algo, CS_NCCL_SIMPLE, &li, &ln);
        out->sw_lat = ln * 1e-6 / pieces;
    }
    /* NCCL reduces in its copy kernels, and its rates are those of the
     * kernels reducing */
    out->fused = 1;
    if ((algo == CS_NCCL_NVLS || algo == CS_NCCL_NVLS_TREE) && out->sw_rate > 0) {
        /* NCCL's NVLS kernel (all_reduce.h) runs three stages in warps of
         * their own, each CTA looping over heads x chunk of its channel's
         * part: scatter (the input into the heads' NVLS buffers), reduce
         * (a head's load-reduce and multicast: what the schedule
         * simulates) and gather (the NVLS buffers into the output).  The
         * stages pipeline over the loop's iterations: the first iteration
         * is scattered before any reduce and the last gathered after every
         * one, two iterations of all channels (channels x heads x chunk,
         * the whole collective when smaller).  NVLSTree's kernel has the
         * same scatter and gather stages around its reduce, tree and
         * multicast ones (without registered buffers, as nccl-tests runs
         * by default), with NVLSTree's chunk.  The copies run at the GPU's
         * NVLink rate as NCCL counts it, not at the reduce's pace (sw_fill
         * is counted at sw_rate: bytes at that rate; a fitted switch rate
         * scales it too): 2 HGX H100 nodes' NVLSTree log jumps by about 65
         * us between 32 and 64 MiB, where the chunk doubles (2 x 8 MiB
         * more at 370 GB/s: 45 us), and one 8-GPU H100 node's and H200
         * node's NVLS logs from 16 MiB are within 2 % with it, 3 to 11 %
         * slow at the switch's rate */
        double iter = (double)(sys->nvls_channels > 0 ? sys->nvls_channels : 16) *
                      (sys->nvls_heads > 0 ? sys->nvls_heads : 1) *
                      (double)(algo == CS_NCCL_NVLS_TREE ? cs_nccl_nvls_tree_chunk(sys, bytes)
                                                         : cs_nccl_nvls_chunk(sys, bytes));
        if (iter > (double)bytes)
            iter = (double)bytes;
        out->sw_fill = 2.0 * iter;
        if (sys->gpu_nvlink * 1e9 > out->sw_rate)
            out->sw_fill *= out->sw_rate / (sys->gpu_nvlink * 1e9);
    }
    /* NCCL's cost model charges its per-step latency whatever the chunks
     * (tuner: base + steps x latency + bytes / rate), and the runs agree:
     * on one HGX H100 node the public logs' times are a constant 30 to 60
     * us plus a rate from 32 MiB to 16 GiB.  A schedule moving each block
     * in C pieces pays a C-th of the step latency per piece, and the
     * pipeline hides the rest behind the pieces' bytes; when the schedule
     * is the one NCCL's algorithm maps to (cs_nccl_as_sched), that rest,
     * (1 - 1/C) of the latency NCCL's tuner charges its steps inside a node
     * and across, is paid at the start instead (hid_lat, with the classes'
     * fitted factors) */
    if (npieces > 1 && label == algo && coll != CS_COLL_ALLTOALL) {
        char name[64], params[CS_META_MAX];
        cs_nccl_as_sched(sys, coll, algo, proto, bytes, name, sizeof(name), params,
                         sizeof(params));
        if (strcmp(name, s->algo) == 0) {
            double lb, li, ln;
            lat_parts(k, sys, coll, algo, proto, &lb, &li, &ln);
            int g = sys->graph[algo].nch > 0 ? algo : CS_NCCL_RING;
            double keep = 1.0 - 1.0 / pieces; /* less what NVLS paid at the start above */
            out->hid_lat[sys->graph[g].type_intra] += keep * fmax(0, li - start_in) * 1e-6;
            out->hid_lat[CS_SIM_HW_NET] += keep * fmax(0, ln - start_net) * 1e-6;
        }
    }
    cs_nccl_fit_apply(&sys->fit, sys, label, proto, out);
}
