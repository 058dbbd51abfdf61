/*
 * bench_verify.c - benchmark (not a test): generate and verify an algorithm
 * at scale, print wall time of each phase and the peak resident memory.
 *
 *   bench_verify [COLL ALGO P [KEY=VALUE,...]]     default: allreduce ring 1536
 *
 * Targets (issue #2): ring allreduce P = 1536 generated + verified in under
 * 2 s and under 1 GiB.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "cs_algo.h"
#include "cs_verify.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const char *coll_s = argc > 1 ? argv[1] : "allreduce";
    const char *algo_s = argc > 2 ? argv[2] : "ring";
    int P = argc > 3 ? atoi(argv[3]) : 1536;
    const char *ptext = argc > 4 ? argv[4] : NULL;
    cs_coll_t coll = cs_coll_parse(coll_s);
    const cs_algo_t *a = coll == CS_COLL_COUNT ? NULL : cs_algo_find(coll, algo_s);
    if (a == NULL || P < 1) {
        fprintf(stderr, "usage: bench_verify [COLL ALGO P [KEY=VALUE,...]]\n");
        return 2;
    }
    cs_params_t params;
    cs_err_t err = {0};
    cs_params_init(&params);
    if (ptext && cs_params_parse(&params, ptext, &err) != CS_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    cs_coll_desc_t d = {coll, P, 0, 0};
    cs_sched_t *s = NULL;
    double t0 = now();
    if (cs_algo_build(a, &d, &params, &s, &err) != CS_OK) {
        fprintf(stderr, "build: %s\n", err.msg);
        return 1;
    }
    double t1 = now();
    cs_verify_report_t rep = {0};
    int st = cs_verify(s, NULL, &rep, &err);
    double t2 = now();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double peak_mib = ru.ru_maxrss / 1024.0;
    printf("%s %s P=%d: %llu steps; generate %.3f s, verify %.3f s, total %.3f s "
           "(target < 2 s: %s); peak RSS %.1f MiB (target < 1024 MiB: %s); verifier: %s\n",
           coll_s, algo_s, P, (unsigned long long)cs_sched_total_steps(s), t1 - t0, t2 - t1,
           t2 - t0, t2 - t0 < 2.0 ? "met" : "MISSED", peak_mib, peak_mib < 1024 ? "met" : "MISSED",
           st == CS_OK ? "correct" : (rep.n ? rep.findings[0].msg : err.msg));
    cs_verify_report_fini(&rep);
    cs_sched_destroy(s);
    return st == CS_OK ? 0 : 1;
}
