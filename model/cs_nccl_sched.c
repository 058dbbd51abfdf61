/*
 * cs_nccl_sched.c - NCCL's algorithm as a collstep schedule (cs_nccl.h's
 * cs_nccl_as_sched): which registry generator and parameters stand for
 * NCCL's algorithm and protocol at a size, as `collstep sim --algo nccl`
 * and `collstep plan --model nccl` simulate NCCL's choice.
 */
#include <stdio.h>

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

void cs_nccl_as_sched(const cs_nccl_sys_t *sys, cs_coll_t coll, int algo, int proto,
                      uint64_t bytes, char *name, size_t nlen, char *params, size_t plen)
{
    int local = sys->nranks / (sys->nnodes > 0 ? sys->nnodes : 1);
    int ppn = sys->nranks / (sys->nhosts > 0 ? sys->nhosts : 1);
    int ch = sys->graph[CS_NCCL_RING].nch;
    if (proto < 0 || proto >= CS_NCCL_NPROTOS)
        proto = CS_NCCL_SIMPLE;
    *params = '\0';
    switch (algo) {
    case CS_NCCL_TREE:
        snprintf(name, nlen, "%s", coll == CS_COLL_ALLREDUCE ? "dbtree" : "ring");
        break;
    case CS_NCCL_NVLS: {
        /* pieces of NCCL's NVLS chunk (128 KiB), from 4 per slice up to
         * 2048 switch operations in all (what a simulation takes in seconds) */
        uint64_t n = (uint64_t)(sys->nranks > 0 ? sys->nranks : 1);
        uint64_t pieces = bytes / (n * (128u << 10)), most = 2048 / n;
        if (pieces > most)
            pieces = most;
        if (pieces < 4)
            pieces = 4;
        snprintf(name, nlen, "nvls");
        if (coll == CS_COLL_ALLREDUCE)
            snprintf(params, plen, "nchunks=%llu,depth=3", (unsigned long long)pieces);
        break;
    }
    case CS_NCCL_NVLS_TREE:
        snprintf(name, nlen, "nvls_tree");
        snprintf(params, plen, "local=%d", local);
        break;
    case CS_NCCL_COLLNET_DIRECT:
    case CS_NCCL_COLLNET_CHAIN:
        snprintf(name, nlen, "sharp");
        snprintf(params, plen, "local=%d", ppn);
        break;
    case CS_NCCL_PAT:
        snprintf(name, nlen, "%s", coll == CS_COLL_REDUCE_SCATTER ? "rhalving" : "bruck");
        break;
    default:
        if (coll == CS_COLL_BROADCAST) {
            snprintf(name, nlen, "chain");
        } else if (coll == CS_COLL_ALLTOALL) {
            snprintf(name, nlen, "pairwise");
        } else {
            int steps = coll == CS_COLL_ALLREDUCE ? 2 * (sys->nranks - 1) : sys->nranks - 1;
            unsigned long long nk = ring_chunks(sys, proto, bytes, steps);
            snprintf(name, nlen, "ring");
            /* across nodes, NCCL's rings leave through different NICs */
            if (coll != CS_COLL_REDUCE && sys->nnodes > 1 && ch > 1)
                snprintf(params, plen, "nchunks=%llu,channels=%d,local=%d", nk,
                         ch < local ? ch : local, local);
            else
                snprintf(params, plen, "nchunks=%llu", nk);
        }
    }
}
