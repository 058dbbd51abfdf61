/*
 * vbench_ring - time and memory of graph building (and verification, once
 * available) on the ring fixture:  vbench_ring [P] [chunks-per-rank]
 * Prints one line per phase.  Not a ctest (the lead runs it by hand).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "cs_graph.h"
#include "cs_verify.h"
#include "vfix.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* user + system CPU seconds: wall time is noisy on a shared machine */
static double cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

static double maxrss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0;
}

int main(int argc, char **argv)
{
    int P = argc > 1 ? atoi(argv[1]) : 1536;
    uint32_t per = argc > 2 ? (uint32_t)atoi(argv[2]) : 1;
    double t0 = now(), c0 = cpu();
    cs_sched_t *s = vfix_ring(P, per, 0, 0);
    if (s == NULL) {
        fprintf(stderr, "cannot build the ring\n");
        return 1;
    }
    double t1 = now(), c1 = cpu();
    printf("generate: P=%d steps=%llu %.3f s (cpu %.3f s), max RSS %.0f MiB\n", P,
           (unsigned long long)cs_sched_total_steps(s), t1 - t0, c1 - c0, maxrss_mib());
    cs_graph_t g;
    if (cs_graph_init(&g, s, NULL) != CS_OK)
        return 1;
    double t2 = now(), c2 = cpu();
    printf("graph: %.3f s (cpu %.3f s), events %llu stuck %llu, max RSS %.0f MiB\n", t2 - t1, c2 - c1,
           (unsigned long long)g.norder, (unsigned long long)g.nstuck, maxrss_mib());
    cs_graph_fini(&g);
    double t3 = now(), c3 = cpu();
    cs_verify_report_t rep;
    cs_err_t err = {0};
    int st = cs_verify(s, NULL, &rep, &err);
    double t4 = now(), c4 = cpu();
    printf("verify (graph included): %.3f s (cpu %.3f s), status %d, findings %llu, "
           "max RSS %.0f MiB\n",
           t4 - t3, c4 - c3, st, (unsigned long long)rep.total, maxrss_mib());
    for (uint32_t i = 0; i < rep.n; i++)
        printf("  %s: %s\n", rep.findings[i].kind, rep.findings[i].msg);
    cs_verify_report_fini(&rep);
    cs_sched_destroy(s);
    return 0;
}
