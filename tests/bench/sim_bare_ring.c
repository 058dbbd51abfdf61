/*
 * sim_bare_ring.c - the reference for bench_sim.sh: a ring allreduce's
 * communication done directly with SimGrid's C API, nothing else (no step
 * graph, no reductions, no observer).  One actor per device, in document
 * order; 2(P-1) rounds, each an async put of size/P bytes to the next rank
 * and an async get from the previous one, then wait for both.  Same model
 * flags as collstep's ideal model.
 *
 * With `reduce` as 4th argument it also models the reductions the way
 * collstep does (cs_sim.h): in the first P-1 rounds (reduce-scatter) the
 * received block is combined, costing block bytes / host speed, before the
 * next round's send; the rank sleeps for that long (a timer, as collstep's
 * reduction stream).  Its simulated time then equals collstep's ring.
 *
 * `reduce` runs in lock step: round k+1 starts when both comms of round k
 * (and the reduction) are done.  collstep's ring step graph (algorithms/
 * common/cs_phase.c) is looser: a receive depends only on the previous
 * receive (and its reduction), a send on the previous send and the previous
 * receive.  So its ranks run ahead of each other where links are fast, and
 * SimGrid takes more, smaller time steps for the same simulated time
 * (1400 against 892 on summit:nodes=8).  With `deps` as 4th argument the
 * bare ring follows those dependencies (and models the reductions): the
 * same events at the same simulated times as `collstep sim --algo ring`,
 * so the difference in cost is the interpreter's alone.  To that end its
 * blocks are collstep's: BYTES / 4 float elements split as
 * core/cs_sched.c cs_chunk_start does (block c holds floor((c+1)n/P) -
 * floor(cn/P) elements), rank r sending block r-1-k and receiving r-2-k in
 * round k of the reduce-scatter, r-k and r-1-k in the all-gather (uneven
 * blocks end at slightly different times: more, smaller time steps).
 *
 *   sim_bare_ring PLATFORM-SPEC BYTES [RANKS [reduce|deps]]
 * prints "bare ring: P ranks, BYTES bytes, simulated T s".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>

#include "cs_platform.h"
#include "cs_sim.h"

static int P;
static double chunk;
static sg_mailbox_t *mb; /* mb[r]: messages to rank r */
static double tend;
static int reduce, deps;

static long long nelems; /* float elements of the whole buffer (BYTES / 4) */

/* Bytes of block c (any integer: taken modulo P). */
static long block_bytes(int c)
{
    c = ((c % P) + P) % P;
    unsigned __int128 a = (unsigned __int128)c * (unsigned long long)nelems / (unsigned)P;
    unsigned __int128 b = (unsigned __int128)(c + 1) * (unsigned long long)nelems / (unsigned)P;
    return (long)(b - a) * 4;
}

/* The `deps` ring: receive j+1 is posted once receive j is reduced, send
 * j+1 once send j is done and receive j reduced; the all-gather starts
 * when the reduce-scatter's last send and receive are done (its `nop`). */
static void rank_deps(int r)
{
    int next = (r + 1) % P;
    static int token;
    double speed = sg_host_get_speed(sg_host_self());
    for (int phase = 0; phase < 2; phase++) {
        void *got;
        int sb = phase == 0 ? r - 1 : r, rb = sb - 1; /* blocks of round 0 */
        sg_comm_t s = sg_mailbox_put_async(mb[next], &token, block_bytes(sb));
        sg_comm_t g = sg_mailbox_get_async(mb[r], &got);
        for (int k = 0; k < P - 1; k++) {
            sg_comm_wait(g);
            if (phase == 0)
                sg_actor_sleep_for((double)block_bytes(rb - k) / speed);
            if (k + 1 < P - 1)
                g = sg_mailbox_get_async(mb[r], &got);
            sg_comm_wait(s);
            if (k + 1 < P - 1)
                s = sg_mailbox_put_async(mb[next], &token, block_bytes(sb - k - 1));
        }
    }
    if (simgrid_get_clock() > tend)
        tend = simgrid_get_clock();
}

static void rank_main(int argc, char **argv)
{
    (void)argc;
    int r = atoi(argv[1]);
    if (deps) {
        rank_deps(r);
        return;
    }
    int next = (r + 1) % P;
    static int token;
    for (int k = 0; k < 2 * (P - 1); k++) {
        void *got;
        sg_comm_t s = sg_mailbox_put_async(mb[next], &token, (long)chunk);
        sg_comm_t g = sg_mailbox_get_async(mb[r], &got);
        sg_comm_wait(s);
        sg_comm_wait(g);
        if (reduce && k < P - 1)
            sg_actor_sleep_for(chunk / sg_host_get_speed(sg_host_self()));
    }
    if (simgrid_get_clock() > tend)
        tend = simgrid_get_clock();
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s PLATFORM BYTES [RANKS [reduce|deps]]\n", argv[0]);
        return 2;
    }
    cs_platform_t *plat;
    cs_err_t err = {0};
    if (cs_platform_open(argv[1], &plat, &err) != CS_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    char **hosts;
    P = argc > 3 && atoi(argv[3]) > 0 ? atoi(argv[3]) : (int)plat->ndevices;
    reduce = argc > 4 && strcmp(argv[4], "reduce") == 0;
    deps = argc > 4 && strcmp(argv[4], "deps") == 0;
    if (cs_sim_hosts(plat, NULL, P, &hosts, &err) != CS_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    chunk = atof(argv[2]) / P;
    nelems = atoll(argv[2]) / 4;
    char path[] = "/tmp/bare_ring_XXXXXX.xml";
    int fd = mkstemps(path, 4);
    if (fd < 0 || write(fd, plat->xml, strlen(plat->xml)) != (ssize_t)strlen(plat->xml))
        return 1;
    close(fd);
    char *sgargv[] = {"bare", "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0",
                      "--cfg=network/TCP-gamma:0", "--cfg=contexts/stack-size:256",
                      "--log=root.thres:warning", NULL};
    int sgargc = 6;
    simgrid_init(&sgargc, sgargv);
    simgrid_load_platform(path);
    unlink(path);
    mb = calloc((size_t)P, sizeof(*mb));
    for (int r = 0; r < P; r++) {
        char name[32], num[16];
        snprintf(name, sizeof(name), "ring%d", r);
        mb[r] = sg_mailbox_by_name(name);
        snprintf(num, sizeof(num), "%d", r);
        char *av[] = {name, num, NULL};
        sg_actor_create(name, sg_host_by_name(hosts[r]), rank_main, 2, av);
    }
    simgrid_run();
    const char *what = deps ? " (step-graph dependencies)" : reduce ? " (reductions)" : "";
    printf("bare ring%s: %d ranks, %s bytes, simulated %.6f s\n", what, P, argv[2], tend);
    cs_sim_hosts_free(hosts, P);
    cs_platform_close(plat);
    free(mb);
    return 0;
}
