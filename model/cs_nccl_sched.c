/*
 * cs_nccl_sched.c - NCCL's algorithm as a collstep schedule (cs_nccl.h's
 * cs_nccl_as_sched): which registry generator and parameters stand for
 * NCCL's algorithm and protocol at a size, as `collstep sim --algo nccl`
 * and `collstep plan --model nccl` simulate NCCL's choice.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cs_nccl.h"

/* Messages per ring step: NCCL moves a chunk per channel at a time (Simple
 * 4 steps of 512 KiB, LL128 one step of 562.5 KiB of data, LL one of 32
 * KiB), so a block moves in block / (channels x chunk) pieces that follow
 * each other: as many of the ring's chunks, up to what a simulation takes
 * in seconds (200,000 steps in all). */
static uint64_t ring_chunks(const cs_nccl_sys_t *sys, int proto, uint64_t bytes, int nsteps)
{
    static const double chunk[CS_NCCL_NPROTOS] = {32768.0, 576000.0, 2097152.0};
    int n = sys->nranks > 0 ? sys->nranks : 1, nch = sys->graph[CS_NCCL_RING].nch;
    double per = (double)bytes / n / ((nch > 0 ? nch : 1) * chunk[proto]);
    uint64_t k = per > 1 ? (uint64_t)(per + 0.999999) : 1;
    uint64_t most = 200000u / ((uint64_t)n * (uint64_t)(nsteps > 0 ? nsteps : 1));
    if (k > most)
        k = most;
    return k < 1 ? 1 : k;
}

/* NCCL's tree chunk: one step of the protocol's buffer (Simple 512 KiB,
 * LL128 562.5 KiB of data, LL 32 KiB; enqueue.cc).  NCCL halves LL128's
 * down to 32 KiB while the collective is small against the tree's steps;
 * not followed here: a schedule's piece pays a C-th of a step's latency, so
 * NCCL's smaller pieces hide the latency its runs show (2 HGX H100 nodes, 1
 * MiB of Tree/LL128: 32 us simulated with them, 77 without, 83 measured in
 * the public issue-309 log) */
static double tree_chunk(int proto)
{
    static const double step[CS_NCCL_NPROTOS] = {32768.0, 576000.0, 524288.0};
    return step[proto];
}

static int pow2_up(int v)
{
    int p = 1;
    while (p < v && p < (1 << 20))
        p <<= 1;
    return p;
}

/* NCCL's all-to-all: one group of sends and receives to every peer
 * (outside its tuner), on its p2p channels: the communicator's (twice the
 * ring graph's, connect.cc) rounded up to a power of two, at most 64
 * (paths.cc, ncclTopoComputeP2pChannels).  Each exchange runs on n of them
 * (enqueue.cc): at most its channels per peer (network peers: one per 14
 * GB/s of the GPU's NIC, halved while the peers' batches of 8 would need
 * more than the p2p channels; peers behind an NVLink switch: all of them),
 * at least as many as fit every peer once, with parts of a p2p chunk (512
 * KiB on one NVLink node, 128 KiB across nodes, 256 KiB from a GB200's ARM
 * hosts) / 8 to x 32 inside a node, / 2 to x 1 across.  Each channel runs
 * 8 exchanges at once (NCCL_MAX_DEV_WORK_P2P_PER_BATCH): p2p channels / n
 * x 8 in flight, every peer at once in practice.  Not followed: peers
 * linked by fewer NVLinks than their GPU has (meshes), which NCCL gives
 * fewer channels. */
int cs_nccl_p2p_channels(const cs_nccl_sys_t *sys)
{
    int ch = sys->graph[CS_NCCL_RING].nch > 0 ? sys->graph[CS_NCCL_RING].nch : 1;
    return pow2_up(2 * ch > 64 ? 64 : 2 * ch);
}

static int p2p_inflight(const cs_nccl_sys_t *sys, uint64_t bytes)
{
    int P = sys->nranks > 1 ? sys->nranks : 2, nn = sys->nnodes > 0 ? sys->nnodes : 1;
    int p2p = cs_nccl_p2p_channels(sys);
    int per;
    if (nn > 1) {
        per = sys->gpu_net > 0 ? (int)ceil(sys->gpu_net / 14.0) : 2;
        per = pow2_up(per < 1 ? 1 : per);
        while (per * ((P + 7) / 8) > p2p && per > 1)
            per /= 2;
    } else {
        per = sys->gpu_nvlink > 0 ? p2p : 2;
        per = pow2_up(per) < p2p ? pow2_up(per) : p2p;
    }
    int nmin = per;
    while (nmin * P > p2p && nmin > 1)
        nmin /= 2;
    uint64_t chunk = nn > 1 ? (strcmp(sys->gpu, "gb200") == 0 ? 262144u : 131072u)
                            : (sys->gpu_nvlink > 0 ? 524288u : 131072u);
    uint64_t minpart = nn > 1 ? chunk / 2 : chunk / 8, maxpart = nn > 1 ? chunk : chunk * 32;
    uint64_t b = bytes / (uint64_t)P;
    int n = nmin;
    if (b > 0 && (b + minpart - 1) / minpart < (uint64_t)n)
        n = (int)((b + minpart - 1) / minpart);
    if (n < 1)
        n = 1;
    uint64_t part = b / (uint64_t)n > minpart ? (b + (uint64_t)n - 1) / (uint64_t)n : minpart;
    while (part > maxpart && n <= per / 2) {
        n *= 2;
        part = (b + (uint64_t)n - 1) / (uint64_t)n;
    }
    int w = p2p / n * 8;
    if (w > P - 1)
        w = P - 1;
    return w > 0 ? w : 1;
}

/* enqueue.cc (calcCollChunking): NVLS's and NVLSTree's chunk, from `chunk`
 * shrunk while the collective is small against its loop iterations: for
 * each step in turn, to `to` where the bytes are under `times` iterations
 * (channels x heads x the chunk so far) and the chunk is above it. */
typedef struct shrink {
    uint32_t times, to;
} shrink_t;

static uint64_t nvls_shrink(const cs_nccl_sys_t *sys, uint64_t bytes, uint64_t chunk,
                            const shrink_t *steps, int nsteps)
{
    uint64_t nch = (uint64_t)(sys->nvls_channels > 0 ? sys->nvls_channels : 16);
    uint64_t ops = nch * (uint64_t)(sys->nvls_heads > 0 ? sys->nvls_heads : 1);
    for (int i = 0; i < nsteps; i++)
        if (bytes < steps[i].times * ops * chunk && chunk > steps[i].to)
            chunk = steps[i].to;
    return chunk;
}

uint64_t cs_nccl_nvls_chunk(const cs_nccl_sys_t *sys, uint64_t bytes)
{
    /* NCCL_NVLS_CHUNKSIZE (128 KiB), to 64, 32 and 16 KiB under 64, 8 and 2
     * iterations */
    static const shrink_t steps[] = {{64, 65536}, {8, 32768}, {2, 16384}};
    return nvls_shrink(sys, bytes, 128u << 10, steps, 3);
}

uint64_t cs_nccl_nvls_tree_chunk(const cs_nccl_sys_t *sys, uint64_t bytes)
{
    /* sys->nvls_tree_chunk, to 256, 128, 64 and 32 KiB under 32, 16, 4 and
     * 1 iterations */
    static const shrink_t steps[] = {{32, 262144}, {16, 131072}, {4, 65536}, {1, 32768}};
    uint64_t chunk = sys->nvls_tree_chunk > 0 ? (uint64_t)sys->nvls_tree_chunk : 131072u;
    return nvls_shrink(sys, bytes, chunk, steps, 4);
}

/* NCCL's rings on a full mesh of 8 GPUs (MI300X's xGMI: RCCL's 28 channels
 * over each GPU's 7 links): 7 ring orders that use every directed link of
 * the mesh once, a decomposition of the complete directed graph on 8
 * vertices into 7 Hamiltonian cycles (found by search; any serves), each
 * written from where it enters a node to where it leaves it so that across
 * nodes the 7 rings enter by 7 different GPUs and leave by 7 different
 * ones (each GPU's NIC carries one ring each way).  In rank order instead
 * a ring would use 2 of a GPU's 7 links, at a seventh of NCCL's rate. */
static const char mesh8_orders[] =
    "04276531+24167350+15263407+72546013+57036214+61743205+47512306";

void cs_nccl_as_sched(const cs_nccl_sys_t *sys, cs_coll_t coll, int algo, int proto,
                      uint64_t bytes, char *name, size_t nlen, char *params, size_t plen)
{
    int local = sys->nranks / (sys->nnodes > 0 ? sys->nnodes : 1);
    int ch = sys->graph[CS_NCCL_RING].nch;
    if (proto < 0 || proto >= CS_NCCL_NPROTOS)
        proto = CS_NCCL_SIMPLE;
    *params = '\0';
    switch (algo) {
    case CS_NCCL_TREE:
        snprintf(name, nlen, "%s", coll == CS_COLL_ALLREDUCE ? "dbtree" : "ring");
        if (coll == CS_COLL_ALLREDUCE && sys->nnodes > 1 && local >= 1) {
            /* NCCL's Tree across nodes (connect.cc, trees.cc): the double
             * binary tree over the nodes, a chain through each node's
             * GPUs, each channel's chain leaving its node through another
             * GPU and NIC; both trees on each of the tree graph's
             * channels, in NCCL's tree chunks, as many as a simulation
             * takes in seconds (about 400,000 steps) */
            int tch = sys->graph[CS_NCCL_TREE].nch > 0 ? sys->graph[CS_NCCL_TREE].nch : 1;
            if (tch > local)
                tch = local;
            if (tch > 64)
                tch = 64;
            double chunk = tree_chunk(proto);
            double per = (double)bytes / (2.0 * tch * chunk);
            uint64_t nk = per > 1 ? (uint64_t)(per + 0.999999) : 1;
            uint64_t most = 400000u / (4u * (uint64_t)sys->nranks * (uint64_t)tch);
            if (nk > most)
                nk = most;
            if (nk < 1)
                nk = 1;
            snprintf(params, plen, "local=%d,channels=%d,nchunks=%llu", local, tch,
                     (unsigned long long)nk);
        }
        break;
    case CS_NCCL_NVLS: {
        /* NCCL's NVLS kernel: nvls_channels channels, each moving its share
         * of every rank's slice in chunks of 128 KiB, shrunk to 64, 32 and
         * 16 KiB for smaller collectives (enqueue.cc): pieces of that chunk
         * per channel.  What a simulation takes in seconds bounds it: at
         * most 256 / ranks channels (each then stands for several of
         * NCCL's, moving their pieces) and 100,000 transfers to and from the
         * switch (operations x members). */
        uint64_t n = (uint64_t)(sys->nranks > 0 ? sys->nranks : 1);
        uint64_t nch = (uint64_t)(sys->nvls_channels > 0 ? sys->nvls_channels : 16);
        uint64_t chunk = cs_nccl_nvls_chunk(sys, bytes);
        uint64_t sim_ch = 256 / n < nch ? 256 / n : nch;
        if (sim_ch < 1)
            sim_ch = 1;
        uint64_t pieces = bytes / (n * sim_ch * chunk), most = 100000 / (n * n * sim_ch);
        if (pieces > most)
            pieces = most;
        if (pieces < 1)
            pieces = 1;
        snprintf(name, nlen, "nvls");
        if (coll == CS_COLL_ALLREDUCE)
            snprintf(params, plen, "channels=%llu,nchunks=%llu,depth=3",
                     (unsigned long long)sim_ch, (unsigned long long)pieces);
        break;
    }
    case CS_NCCL_NVLS_TREE: {
        /* NCCL's NVLSTree kernel loops over iterations of channels x heads
         * chunks (cs_nccl_nvls_tree_chunk), half its channels on each
         * tree: a piece is one tree's half of an iteration (channels / 2
         * chunks of each head), and the pipeline fills and drains by
         * pieces of that size, as NCCL's does by iterations.  As
         * many as a simulation takes in seconds (about 400,000 steps or
         * switch transfers in all) */
        uint64_t n = (uint64_t)(sys->nranks > 0 ? sys->nranks : 1);
        uint64_t nch = (uint64_t)(sys->nvls_channels > 0 ? sys->nvls_channels : 16);
        uint64_t trees = sys->nnodes > 1 ? 2 : 1;
        uint64_t piece = cs_nccl_nvls_tree_chunk(sys, bytes) * (nch / trees > 0 ? nch / trees : 1);
        /* NCCL's heads (32 of an NVL72 rack's 72 from 2.25) make an
         * iteration: the schedule's pieces count NCCL's iterations, each
         * then spread over its slices */
        uint64_t heads = (uint64_t)(sys->nvls_heads > 0 ? sys->nvls_heads : local > 0 ? local : 1);
        uint64_t pieces = bytes / (heads * piece);
        uint64_t most = 400000 / (n * (uint64_t)(local > 8 ? local : 8));
        if (pieces > most)
            pieces = most;
        if (pieces < trees)
            pieces = trees;
        /* NCCL runs its two trees at once, each on half its channels:
         * two channels, the second starting on the other tree.  From 3
         * domains a node interior in one tree is a leaf in the other, and
         * only the two at once balance its NIC (one channel runs tree 1
         * after tree 0: 10 HGX nodes at 2 GiB 25 % slower).  Between 2
         * domains each tree is one link, the other's mirror, and one
         * channel would keep both directions busy too, but its switch from
         * tree 0 to tree 1 halfway has two outcomes that the slightest
         * difference selects (2 HGX nodes, 256 MiB: 1,098 or 1,251 us after
         * a 1 KiB collective), where two channels give one (1,102 to 1,108
         * us after any size).  More channels add pipelines that fill and
         * drain on their own (a channel's steps pay the channels' share of
         * the per-step latency instead, cs_nccl_step_costs) */
        snprintf(name, nlen, "nvls_tree");
        snprintf(params, plen, "local=%d,nchunks=%llu%s", local, (unsigned long long)pieces,
                 sys->nnodes > 1 ? ",channels=2" : "");
        break;
    }
    case CS_NCCL_COLLNET_DIRECT:
    case CS_NCCL_COLLNET_CHAIN:
        snprintf(name, nlen, "sharp");
        /* a node's ranks reach the network switch through their leader */
        snprintf(params, plen, "local=%d", local);
        break;
    case CS_NCCL_PAT:
        snprintf(name, nlen, "%s", coll == CS_COLL_REDUCE_SCATTER ? "rhalving" : "bruck");
        break;
    default:
        if (coll == CS_COLL_BROADCAST || coll == CS_COLL_REDUCE) {
            /* NCCL's Ring broadcast and reduce: a chain along each ring
             * from (to) the root, one step of its buffer per chunk
             * (BROADCAST_CHUNKSTEPS, REDUCE_CHUNKSTEPS 1) on each channel: that many pieces
             * per channel follow each other down the chain (at least the
             * generator's 8, and more for LL and LL128 below), up to what
             * a simulation takes in seconds */
            int nch = sys->graph[CS_NCCL_RING].nch > 0 ? sys->graph[CS_NCCL_RING].nch : 1;
            /* across nodes NCCL's rings leave through different NICs, as
             * the allreduce's below: that many chains (at most the channels
             * NCCL's search makes, cs_nccl_sys_from: within the generator's
             * 64) */
            int chains = sys->nnodes > 1 && ch > 1 ? (ch < local ? ch : local) : 1;
            double per = (double)bytes / (nch * tree_chunk(proto));
            uint64_t k = per > 1 ? (uint64_t)(per + 0.999999) : 1;
            uint64_t most = 200000u / ((uint64_t)(sys->nranks > 0 ? sys->nranks : 1) * chains);
            if (k > most)
                k = most;
            if (k > 65536) /* the generator's bound */
                k = 65536;
            if (k < 8)
                k = 8;
            /* LL and LL128 forward each line as it arrives, where a piece
             * moves whole from rank to rank: a chain of H hops in P pieces
             * takes (H + P - 1) / P times its bytes' time, and at 8 pieces
             * over 16 ranks 2.75 (2 HGX nodes at 64 KiB: 120 us against
             * the tuner's 51).  At least 4 pieces per hop keep that under
             * 1.25 (83 us), within what a simulation takes in seconds */
            if (proto != CS_NCCL_SIMPLE) {
                uint64_t want = 4u * (uint64_t)(sys->nranks > 1 ? sys->nranks - 1 : 1);
                if (want > most)
                    want = most;
                if (k < want)
                    k = want;
            }
            snprintf(name, nlen, "chain");
            if (chains > 1)
                snprintf(params, plen, "nchunks=%llu,channels=%d,local=%d", (unsigned long long)k,
                         chains, local);
            else
                snprintf(params, plen, "nchunks=%llu", (unsigned long long)k);
        } else if (coll == CS_COLL_ALLTOALL) {
            /* a window of NCCL's that leaves at most 4 rounds of peers is
             * simulated as every peer at once (inflight=0): the ranks' links bind
             * either way, and a sliding window of hundreds of exchanges per
             * rank takes the simulation minutes where all at once takes
             * seconds (512 ranks: 256 in flight over a minute, 511 in 4
             * s) */
            int w = p2p_inflight(sys, bytes), P = sys->nranks;
            if (w < P - 1 && 4 * w >= P - 1)
                w = P - 1;
            snprintf(name, nlen, "pairwise");
            /* every peer at once: the generator's inflight=0, as the
             * planner's candidate spells it */
            snprintf(params, plen, "inflight=%d", w >= P - 1 ? 0 : w);
        } else {
            int steps = coll == CS_COLL_ALLREDUCE ? 2 * (sys->nranks - 1) : sys->nranks - 1;
            int mesh = coll != CS_COLL_REDUCE && sys->mesh == 8 && local == 8;
            /* the mesh's 7 rings: 7 times the steps within the cap */
            unsigned long long nk = ring_chunks(sys, proto, bytes, mesh ? 7 * steps : steps);
            snprintf(name, nlen, "ring");
            if (mesh)
                snprintf(params, plen, "nchunks=%llu,channels=7,%sorders=%s", nk,
                         sys->nnodes > 1 ? "local=8," : "", mesh8_orders);
            /* across nodes, NCCL's rings leave through different NICs */
            else if (coll != CS_COLL_REDUCE && sys->nnodes > 1 && ch > 1)
                snprintf(params, plen, "nchunks=%llu,channels=%d,local=%d", nk,
                         ch < local ? ch : local, local);
            else
                snprintf(params, plen, "nchunks=%llu", nk);
        }
    }
}
