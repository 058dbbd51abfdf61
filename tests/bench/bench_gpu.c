/*
 * bench_gpu.c - figures of the GPU executor on one GPU (not a test).
 *
 *   bench_gpu [MAX_BYTES] [ITERS]
 *
 * 1. Reduction kernels: dst = dst op src on buffers of MAX_BYTES (256 MiB
 *    by default) for every type with sum and for float with every
 *    operator; bandwidth counts 3 x bytes per element (read dst, read src,
 *    write dst) and is reported against the peak from the device attributes
 *    (2 x memory clock x bus width).  Target: >= 80 % of peak.
 * 2. Engine overhead: collstep's one-rank schedules against NCCL's own
 *    collective on the same buffers of a 1-rank communicator, 8 B to
 *    MAX_BYTES by 8x: time of each, and the difference (the engine's cost
 *    per run: group calls, events, the cross-stream waits).  Allreduce ring
 *    (one copy), allreduce dbtree (32 copy steps) and broadcast chain (8),
 *    whose copies the engine merges into one (issue #15: before, 134 and
 *    69 us at 64 MiB against 48-49 us for NCCL and ring on an H100).
 * Exits 3 with "no CUDA device/driver: ..." where there is no GPU.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cs_algo.h"
#include "cs_gpu.h"

static int kernels(size_t bytes, int iters)
{
    char *d = NULL, *s = NULL;
    cudaEvent_t t0, t1;
    if (cudaMalloc((void **)&d, bytes) || cudaMalloc((void **)&s, bytes))
        return fprintf(stderr, "cudaMalloc of %zu bytes failed\n", bytes), 1;
    cudaMemset(d, 0, bytes);
    cudaMemset(s, 0, bytes);
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    double peak = cs_gpu_peak_bandwidth();
    printf("# reduction kernels, %zu bytes per buffer, peak memory bandwidth %.1f GB/s\n", bytes,
           peak / 1e9);
    printf("%10s %6s %12s %12s %8s\n", "type", "op", "time(us)", "GB/s", "of peak");
    for (int dt = 0; dt < CS_DT_COUNT; dt++)
        for (int op = 0; op < CS_OP_COUNT; op++) {
            if (op != CS_OP_SUM && dt != CS_DT_F32)
                continue;
            size_t n = bytes / cs_dtype_size(dt);
            cs__gpu_reduce(d, s, n, dt, op, NULL); /* warm up */
            cudaEventRecord(t0, NULL);
            for (int i = 0; i < iters; i++)
                cs__gpu_reduce(d, s, n, dt, op, NULL);
            cudaEventRecord(t1, NULL);
            cudaEventSynchronize(t1);
            float ms = 0;
            cudaEventElapsedTime(&ms, t0, t1);
            double t = ms * 1e-3 / iters, bw = 3.0 * (double)(n * cs_dtype_size(dt)) / t;
            printf("%10s %6s %12.1f %12.1f %7.1f%%\n", cs_dtype_name(dt), cs_op_name(op), t * 1e6,
                   bw / 1e9, peak > 0 ? 100.0 * bw / peak : 0.0);
        }
    cudaFree(d);
    cudaFree(s);
    return 0;
}

/* One schedule at P = 1 against NCCL's collective, 8 B to max by 8x. */
static int overhead_one(cs_nccl_t *nc, cs_coll_t coll, const char *algo, size_t max, int iters,
                        cs_err_t *err)
{
    cs_coll_desc_t d = {coll, 1, 0, 0};
    cs_params_t p;
    cs_params_init(&p);
    cs_sched_t *s = NULL;
    cs_gpu_engine_t *g = NULL;
    const cs_algo_t *a = cs_algo_find(coll, algo);
    int st = a ? cs_algo_build(a, &d, &p, &s, err)
               : cs_err_set(err, CS_ERR_NOTFOUND, "no algorithm %s", algo);
    cs_engine_config_t ec = {CS_DT_F32, CS_OP_SUM, max / 4, 60, 0};
    if (st == CS_OK)
        st = cs_gpu_engine_create(s, nc, &ec, &g, err);
    if (st == CS_OK) {
        printf("\n# %s float sum on 1 GPU: collstep %s (%llu steps, %u copies merged) vs NCCL\n",
               cs_coll_name(coll), algo, (unsigned long long)cs_sched_total_steps(s),
               cs_gpu_engine_merged(g));
        printf("%12s %14s %14s %14s\n", "size(B)", "collstep(us)", "nccl(us)", "overhead(us)");
    }
    for (size_t b = 8; st == CS_OK && b <= max; b *= 8) {
        double tc = 0, tn = 0;
        uint64_t count = b / 4;
        st = cs_gpu_engine_time(g, count, 5, 0, &tc, err);
        if (st == CS_OK)
            st = cs_gpu_engine_time(g, count, iters, 0, &tc, err);
        if (st == CS_OK)
            st = cs_gpu_engine_time(g, count, 5, 1, &tn, err);
        if (st == CS_OK)
            st = cs_gpu_engine_time(g, count, iters, 1, &tn, err);
        if (st == CS_OK)
            printf("%12zu %14.2f %14.2f %14.2f\n", b, tc * 1e6, tn * 1e6, (tc - tn) * 1e6);
    }
    cs_gpu_engine_destroy(g);
    cs_sched_destroy(s);
    return st;
}

static int overhead(size_t max, int iters)
{
    char port[16];
    snprintf(port, sizeof(port), "%d", 20000 + (int)(getpid() % 20000));
    setenv("RANK", "0", 1), setenv("WORLD_SIZE", "1", 1);
    setenv("MASTER_ADDR", "127.0.0.1", 1), setenv("MASTER_PORT", port, 1);
    cs_err_t err;
    cs_err_clear(&err);
    cs_boot_config_t bc = {30, "env"};
    cs_boot_t *boot = NULL;
    cs_nccl_t *nc = NULL;
    int st = cs_boot_open(&bc, &boot, &err);
    if (st == CS_OK)
        st = cs_nccl_open(boot, &nc, &err);
    if (st == CS_OK)
        st = overhead_one(nc, CS_COLL_ALLREDUCE, "ring", max, iters, &err);
    if (st == CS_OK)
        st = overhead_one(nc, CS_COLL_ALLREDUCE, "dbtree", max, iters, &err);
    if (st == CS_OK)
        st = overhead_one(nc, CS_COLL_BROADCAST, "chain", max, iters, &err);
    if (st != CS_OK)
        fprintf(stderr, "bench_gpu: %s\n", err.msg);
    cs_nccl_close(nc);
    cs_boot_close(boot);
    return st != CS_OK;
}

int main(int argc, char **argv)
{
    size_t max = argc > 1 ? strtoull(argv[1], NULL, 0) : (256u << 20);
    int iters = argc > 2 ? atoi(argv[2]) : 20, ndev = 0;
    cs_err_t err;
    cs_err_clear(&err);
    if (max < 64 || iters < 1)
        return fprintf(stderr, "usage: bench_gpu [MAX_BYTES >= 64] [ITERS >= 1]\n"), 2;
    if (cs_gpu_device_count(&ndev, &err) != CS_OK)
        return fprintf(stderr, "bench_gpu: %s\n", err.msg), 3;
    int rc = kernels(max, iters);
    return rc ? rc : overhead(max, iters);
}
