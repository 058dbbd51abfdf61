/*
 * use_collstep.c - a program of a collstep user, built by tests/install
 * against an installed collstep only (headers as <collstep/...>), once
 * through pkg-config and once through the CMake package.
 *
 *   use_collstep ALGO RANKS SCHEDULE_OUT [PLATFORM BYTES]
 *
 * Builds the allreduce ALGO of the registry for RANKS ranks, verifies it,
 * runs it through the reference interpreter, writes it to SCHEDULE_OUT in
 * the text format (the test compares that file with `collstep gen`) and,
 * when built with the simulator (USE_SIM) and given a platform, simulates
 * BYTES on it.  Built against the GPU executor (CS_HAVE_NCCL, which its
 * pkg-config flags and CMake target define), it also counts the devices
 * (which loads libcs_gpu_kernels.so, CUDA's runtime and NCCL).  Prints
 *   verified ALGO RANKS ranks STEPS steps
 *   sim_time_us T          (%.6g, as `collstep sim --format csv`)
 *   gpu_devices N|none     (CS_HAVE_NCCL; none: no device or driver)
 * Exit 0 on success, 1 on any failure (with a message on stderr).
 */
#include <stdio.h>
#include <stdlib.h>

#include <collstep/cs_algo.h>
#include <collstep/cs_interp.h>
#include <collstep/cs_sched.h>
#include <collstep/cs_status.h>
#include <collstep/cs_text.h>
#include <collstep/cs_verify.h>
#ifdef USE_SIM
#include <collstep/cs_platform.h>
#include <collstep/cs_sim.h>
#endif
#ifdef CS_HAVE_NCCL
#include <collstep/cs_gpu.h>
#endif

static int fail(const char *what, const cs_err_t *err)
{
    fprintf(stderr, "use_collstep: %s: %s\n", what, err ? err->msg : "failed");
    return 1;
}

#ifdef USE_SIM
static int simulate(const cs_sched_t *s, const char *spec, unsigned long long bytes)
{
    cs_err_t err = {0};
    cs_platform_t *plat = NULL;
    if (cs_platform_open(spec, &plat, &err) != CS_OK)
        return fail("cs_platform_open", &err);
    cs_sim_opts_t opts;
    cs_sim_opts_init(&opts);
    cs_sim_instance_t inst = {.sched = s, .bytes = bytes, .dtype = CS_DT_F32};
    int rc = 0;
    if (cs_sim_run(plat, &opts, &inst, 1, &err) != CS_OK)
        rc = fail("cs_sim_run", &err);
    else
        printf("sim_time_us %.6g\n", inst.time * 1e6);
    cs_platform_close(plat);
    return rc;
}
#endif

#ifdef CS_HAVE_NCCL
static int gpu_probe(void)
{
    cs_err_t err = {0};
    int n = 0, st = cs_gpu_device_count(&n, &err);
    if (st == CS_OK)
        printf("gpu_devices %d\n", n);
    else if (st == CS_ERR_NODEVICE)
        printf("gpu_devices none\n");
    else
        return fail("cs_gpu_device_count", &err);
    return 0;
}
#endif

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 6) {
        fprintf(stderr, "usage: use_collstep ALGO RANKS SCHEDULE_OUT [PLATFORM BYTES]\n");
        return 2;
    }
    const cs_algo_t *a = cs_algo_find(CS_COLL_ALLREDUCE, argv[1]);
    if (!a)
        return fail(argv[1], NULL);
    cs_coll_desc_t desc = {.coll = CS_COLL_ALLREDUCE, .nranks = atoi(argv[2])};
    cs_params_t params;
    cs_params_init(&params);
    cs_err_t err = {0};
    cs_sched_t *s = NULL;
    if (cs_algo_build(a, &desc, &params, &s, &err) != CS_OK)
        return fail("cs_algo_build", &err);

    int rc = 1;
    cs_verify_report_t rep;
    int st = cs_verify(s, NULL, &rep, &err);
    cs_verify_report_fini(&rep);
    if (st != CS_OK) {
        fail("cs_verify", &err);
        goto done;
    }
    cs_interp_result_t res;
    if (cs_interp_run(s, CS_DT_F32, CS_OP_SUM, 1001, &res, &err) != CS_OK) {
        fail("cs_interp_run", &err);
        goto done;
    }
    if (res.wrong != 0) {
        fprintf(stderr, "use_collstep: %llu wrong elements\n", (unsigned long long)res.wrong);
        goto done;
    }
    if (cs_sched_save(s, argv[3], &err) != CS_OK) {
        fail("cs_sched_save", &err);
        goto done;
    }
    printf("verified %s %d ranks %llu steps\n", a->name, desc.nranks,
           (unsigned long long)cs_sched_total_steps(s));
    rc = 0;
#ifdef CS_HAVE_NCCL
    if ((rc = gpu_probe()) != 0)
        goto done;
#endif
    if (argc == 6) {
#ifdef USE_SIM
        rc = simulate(s, argv[4], strtoull(argv[5], NULL, 10));
#else
        fprintf(stderr, "use_collstep: built without the simulator (USE_SIM)\n");
        rc = 1;
#endif
    }
done:
    cs_sched_destroy(s);
    return rc;
}
