/*
 * test_sim_buffer.c - the NCCL model's connection buffer (sim/cs_sim_dag.c):
 * a message holds ceil(bytes / step_bytes) of NCCL_STEPS = 8 steps of its
 * receiver's buffer from its start until its receive takes it, so a
 * sender runs ahead of a receiver that lags as far as the buffer allows.
 *
 * Star of 3 devices (sim_fix.h), 10 GB/s per direction.  Rank 1 first
 * receives a large message from rank 2 (64 MiB: about 6.7 ms), and only
 * then takes the four 1 MiB messages rank 0 sent it on another channel;
 * rank 0 sends those four, then one 1 MiB message to rank 2.  When the
 * four fit in rank 1's buffer (step_bytes = 1 MiB: one step each) rank 0
 * is done with them after about 0.4 ms and reaches rank 2 at once; when
 * only two fit (step_bytes = 256 KiB: four steps each) or one (step_bytes
 * = 0: a message holds the whole buffer) its third or second send waits
 * for rank 1's receives, after the large message: rank 2 hears from rank
 * 0 only after 6.7 ms.  The simulated times of every run are the same
 * (rank 1 binds); the observer's record of the message 0 -> 2 tells them
 * apart.  Each run in a child (SimGrid runs once per process), twice in
 * one simulation (the pool of waiting messages reused by the second).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cs_sim.h"
#include "cs_test.h"
#include "sim_fix.h"

#define MIB (1024.0 * 1024.0)
/* a failure that leaves nothing to check: said, exit 1 */
#define NEED(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "FAIL: " __VA_ARGS__);                                                 \
            fputc('\n', stderr);                                                                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
#define CHUNKS 68 /* 4 x 1 MiB, 1 MiB, 64 MiB: a chunk is 1 MiB */

static double end_02[2]; /* per instance: when 0 -> 2 ended */
static int seen_02[2];

static void on_xfer(void *ctx, int inst, const cs_sim_xfer_rec_t *r)
{
    (void)ctx;
    if (inst >= 0 && inst < 2 && r->src == 0 && r->dst == 2) {
        end_02[inst] = r->end;
        seen_02[inst]++;
    }
}

static cs_sched_t *schedule(void)
{
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, 3, 0, 0};
    cs_err_t err = {0};
    cs_sched_t *s = cs_sched_create(&d, CHUNKS, &err);
    NEED(s, "create: %s", err.msg);
    /* rank 0: four 1 MiB to rank 1 (channel 0), then 1 MiB to rank 2 */
    int64_t last = -1;
    for (uint32_t i = 0; i < 4; i++)
        last = cs_send(s, 0, 1, 0, cs_rng(CS_BUF_IN, i, 1), NULL, 0);
    uint32_t dep = (uint32_t)last;
    cs_send(s, 0, 2, 0, cs_rng(CS_BUF_IN, 4, 1), &dep, 1);
    /* rank 2: 64 MiB to rank 1 (channel 1); receives rank 0's */
    cs_send(s, 2, 1, 1, cs_rng(CS_BUF_IN, 4, 64), NULL, 0);
    cs_recv(s, 2, 0, 0, cs_rng(CS_BUF_OUT, 4, 1), NULL, 0);
    /* rank 1: the 64 MiB first, then rank 0's four */
    int64_t big = cs_recv(s, 1, 2, 1, cs_rng(CS_BUF_OUT, 4, 64), NULL, 0);
    uint32_t bd = (uint32_t)big;
    for (uint32_t i = 0; i < 4; i++)
        cs_recv(s, 1, 0, 0, cs_rng(CS_BUF_OUT, i, 1), &bd, 1);
    NEED(s->err.code == CS_OK, "steps: %s", s->err.msg);
    return s;
}

typedef struct out {
    int ok;
    double time[2], end_02[2];
    int seen[2];
    char msg[600];
} out_t;

static out_t run(double step_bytes)
{
    out_t o;
    memset(&o, 0, sizeof(o));
    int p[2];
    NEED(pipe(p) == 0, "pipe");
    fflush(NULL);
    pid_t pid = fork();
    NEED(pid >= 0, "fork");
    if (pid == 0) {
        close(p[0]);
        cs_platform_t plat;
        fix_star(&plat, 3, 0.5e-6, 10e9, 100e9);
        cs_sched_t *s = schedule();
        cs_sim_nccl_t cost = {.base_lat = 0,
                              .lat = {1e-6, 1e-6, 1e-6},
                              .eff = {1, 1, 1},
                              .cap = {1e12, 1e12, 1e12},
                              .fused = 1,
                              .step_bytes = step_bytes};
        cs_sim_instance_t in[2] = {
            {s, (uint64_t)(CHUNKS * MIB), CS_DT_F32, 0, 0, &cost},
            {s, (uint64_t)(CHUNKS * MIB), CS_DT_F32, 0, 0, &cost},
        };
        cs_sim_observer_t obs = {NULL, NULL, NULL, on_xfer, NULL, NULL};
        cs_sim_opts_t so;
        cs_sim_opts_init(&so);
        so.model = CS_SIM_NCCL;
        so.obs = &obs;
        cs_err_t err = {0};
        o.ok = cs_sim_run(&plat, &so, in, 2, &err) == CS_OK;
        snprintf(o.msg, sizeof(o.msg), "%s", err.msg);
        for (int i = 0; i < 2; i++) {
            o.time[i] = in[i].time;
            o.end_02[i] = end_02[i];
            o.seen[i] = seen_02[i];
        }
        ssize_t w = write(p[1], &o, sizeof(o));
        _exit(w == (ssize_t)sizeof(o) ? 0 : 1);
    }
    close(p[1]);
    ssize_t r = read(p[0], &o, sizeof(o));
    close(p[0]);
    int ws = 0;
    waitpid(pid, &ws, 0);
    NEED(r == (ssize_t)sizeof(o) && WIFEXITED(ws) && WEXITSTATUS(ws) == 0,
                    "child failed (read %zd, status %d)", r, ws);
    return o;
}

int main(void)
{
    /* 64 MiB at 10 GB/s */
    const double big = 64 * MIB / 10e9;
    const struct {
        double step_bytes;
        int ahead; /* 1: rank 0 reaches rank 2 before the large message ends */
        const char *what;
    } runs[] = {
        {MIB, 1, "four messages of one step each fit in the buffer"},
        {MIB / 4, 0, "two messages of four steps each fit"},
        {0, 0, "one message at a time"},
    };
    double t0 = -1;
    for (size_t k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
        out_t o = run(runs[k].step_bytes);
        CS_TEST_CHECK(o.ok, "%s: %s", runs[k].what, o.msg);
        for (int i = 0; o.ok && i < 2; i++)
            CS_TEST_CHECK(o.seen[i] == 1, "%s: instance %d: %d messages 0 -> 2", runs[k].what,
                          i, o.seen[i]);
        if (!o.ok)
            continue;
        /* the first instance starts at 0 */
        double e = o.end_02[0];
        if (runs[k].ahead)
            CS_TEST_CHECK(e < 0.25 * big, "%s: 0 -> 2 ended at %.3f ms, the large message "
                          "takes %.3f ms", runs[k].what, e * 1e3, big * 1e3);
        else
            CS_TEST_CHECK(e > big, "%s: 0 -> 2 ended at %.3f ms, before the large message "
                          "(%.3f ms)", runs[k].what, e * 1e3, big * 1e3);
        /* rank 1 binds every run: the same time, twice in one simulation */
        CS_TEST_CHECK(fabs(o.time[1] / o.time[0] - 1) < 1e-6, "%s: instances %.6f and %.6f ms",
                      runs[k].what, o.time[0] * 1e3, o.time[1] * 1e3);
        if (t0 < 0)
            t0 = o.time[0];
        CS_TEST_CHECK(fabs(o.time[0] / t0 - 1) < 0.05, "%s: %.3f ms, first run %.3f ms",
                      runs[k].what, o.time[0] * 1e3, t0 * 1e3);
        printf("%-48s 0 -> 2 at %7.3f ms, collective %7.3f ms\n", runs[k].what, e * 1e3,
               o.time[0] * 1e3);
    }
    return cs_test_finish();
}
