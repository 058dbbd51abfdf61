/*
 * use_collstep.cpp - a C++ program of a collstep user, built by tests/install
 * against an installed collstep only: every public header is included from
 * C++ (they declare C linkage), and the registry's ring allreduce is built,
 * verified and written through the C libraries.
 *
 *   use_collstep_cpp RANKS SCHEDULE_OUT
 *
 * Prints "verified ring RANKS ranks STEPS steps"; exit 0 on success, 1 on
 * any failure (with a message on stderr).
 */
#include <cstdio>
#include <cstdlib>

#include <collstep/cs_algo.h>
#include <collstep/cs_sched.h>
#include <collstep/cs_status.h>
#include <collstep/cs_text.h>
#include <collstep/cs_verify.h>

static int fail(const char *what, const cs_err_t &err)
{
    std::fprintf(stderr, "use_collstep_cpp: %s: %s\n", what, err.msg);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: use_collstep_cpp RANKS SCHEDULE_OUT\n");
        return 1;
    }
    cs_err_t err = {};
    const cs_algo_t *a = cs_algo_find(CS_COLL_ALLREDUCE, "ring");
    if (a == nullptr) {
        std::fprintf(stderr, "use_collstep_cpp: no ring allreduce in the registry\n");
        return 1;
    }
    cs_coll_desc_t desc = {};
    desc.coll = CS_COLL_ALLREDUCE;
    desc.nranks = std::atoi(argv[1]);
    cs_params_t params;
    cs_params_init(&params);
    cs_sched_t *s = nullptr;
    if (cs_algo_build(a, &desc, &params, &s, &err) != CS_OK)
        return fail("cs_algo_build", err);
    cs_verify_report_t rep;
    int st = cs_verify(s, nullptr, &rep, &err);
    cs_verify_report_fini(&rep);
    if (st != CS_OK) {
        cs_sched_destroy(s);
        return fail("cs_verify", err);
    }
    if (cs_sched_save(s, argv[2], &err) != CS_OK) {
        cs_sched_destroy(s);
        return fail("cs_sched_save", err);
    }
    std::printf("verified ring %d ranks %llu steps\n", desc.nranks,
                (unsigned long long)cs_sched_total_steps(s));
    cs_sched_destroy(s);
    return 0;
}
