/*
 * gpu_engine.c - the GPU engine on a 1-rank NCCL communicator (env
 * bootstrap, RANK=0 WORLD_SIZE=1):
 *   - the hand-built schedule of gpu_self.h (rank 0 sends to itself on two
 *     channels, recv and rrecv, copies on the compute stream) gives out ==
 *     in for every type with op max, over several counts and repeated runs;
 *   - every registered allreduce that builds at P = 1, for every type and
 *     operator, gives the expected result (cs_test_check) and the same
 *     bytes as ncclAllReduce on the same buffers;
 *   - every other registered algorithm at P = 1 too (float and half, sum),
 *     against NCCL's own collective; allreduce dbtree and broadcast chain,
 *     whose one-rank schedules are runs of copies, run as one copy (31 and 7
 *     copies merged away, issue #15);
 *   - timing with CUDA events returns a positive time.
 * Skips (77) without a CUDA device or driver.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cs_algo.h"
#include "cs_gpu.h"
#include "cs_test.h"
#include "gpu_self.h"

static int run_check(cs_nccl_t *nc, const cs_sched_t *s, cs_dtype_t dt, cs_op_t op,
                     uint64_t count, int baseline_too, const char *name, uint32_t *merged)
{
    size_t es = cs_dtype_size(dt);
    cs_engine_config_t ec = {dt, op, count, 30, 0};
    cs_gpu_engine_t *g = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    int st = cs_gpu_engine_create(s, nc, &ec, &g, &err);
    CS_TEST_REQUIRE(st == CS_OK, "%s: create: %s", name, err.msg);
    if (merged)
        *merged = cs_gpu_engine_merged(g);
    uint64_t n = cs_gpu_engine_buf_elems(g, CS_BUF_OUT, count);
    char *in = malloc(n * es + 1), *out = malloc(n * es + 1), *ref = malloc(n * es + 1);
    cs_test_fill(dt, op, in, n, 0, 0);
    st = cs_gpu_engine_upload(g, CS_BUF_IN, in, n * es, &err);
    for (int rep = 0; rep < 3 && st == CS_OK; rep++) {
        st = cs_gpu_engine_memset(g, CS_BUF_OUT, 0xff, n * es, &err);
        if (st == CS_OK)
            st = cs_gpu_engine_run(g, count, &err);
        if (st == CS_OK)
            st = cs_gpu_engine_download(g, CS_BUF_OUT, out, n * es, &err);
        CS_TEST_CHECK(st == CS_OK, "%s: run: %s", name, err.msg);
        uint64_t bad = st == CS_OK ? cs_test_check(&s->desc, dt, op, count, 0, out, 0, n) : 1;
        CS_TEST_CHECK(bad == 0, "%s %s %s count %llu run %d: %llu wrong", name, cs_dtype_name(dt),
                      cs_op_name(op), (unsigned long long)count, rep, (unsigned long long)bad);
    }
    if (st == CS_OK && baseline_too) {
        double t = 0;
        st = cs_gpu_engine_memset(g, CS_BUF_OUT, 0, n * es, &err);
        if (st == CS_OK)
            st = cs_gpu_engine_time(g, count, 2, 1, &t, &err);
        if (st == CS_OK)
            st = cs_gpu_engine_download(g, CS_BUF_OUT, ref, n * es, &err);
        CS_TEST_CHECK(st == CS_OK, "%s: ncclAllReduce: %s", name, err.msg);
        CS_TEST_CHECK(st != CS_OK || memcmp(out, ref, n * es) == 0,
                      "%s %s %s: collstep and NCCL's collective differ", name, cs_dtype_name(dt),
                      cs_op_name(op));
        double t2 = 0;
        st = cs_gpu_engine_time(g, count, 3, 0, &t2, &err);
        CS_TEST_CHECK(st == CS_OK && t > 0 && t2 > 0, "%s: times %g %g: %s", name, t, t2, err.msg);
    }
    free(in), free(out), free(ref);
    cs_gpu_engine_destroy(g);
    return st;
}

int main(void)
{
    int ndev = 0;
    cs_err_t err;
    cs_err_clear(&err);
    if (cs_gpu_device_count(&ndev, &err) != CS_OK)
        CS_TEST_SKIP("%s", err.msg);
    char port[16];
    snprintf(port, sizeof(port), "%d", 20000 + (int)(getpid() % 20000));
    setenv("RANK", "0", 1), setenv("WORLD_SIZE", "1", 1);
    setenv("MASTER_ADDR", "127.0.0.1", 1), setenv("MASTER_PORT", port, 1);
    cs_boot_config_t bc = {30, "env"};
    cs_boot_t *boot = NULL;
    CS_TEST_REQUIRE(cs_boot_open(&bc, &boot, &err) == CS_OK, "boot: %s", err.msg);
    cs_nccl_t *nc = NULL;
    CS_TEST_REQUIRE(cs_nccl_open(boot, &nc, &err) == CS_OK, "cs_nccl_open: %s", err.msg);

    cs_sched_t *self = gpu_self_sched();
    CS_TEST_REQUIRE(self != NULL, "self schedule");
    const uint64_t counts[] = {4, 7, 1000, (1u << 20) + 3};
    for (int dt = 0; dt < CS_DT_COUNT; dt++)
        for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++)
            run_check(nc, self, dt, CS_OP_MAX, counts[k], 0, "self", NULL);
    cs_sched_destroy(self);

    int built = 0;
    for (int i = 0; i < cs_algo_count(); i++) {
        const cs_algo_t *a = cs_algo_at(i);
        cs_coll_desc_t d = {a->coll, 1, 0, 0};
        cs_params_t p;
        cs_params_init(&p);
        cs_sched_t *s = NULL;
        if (cs_algo_build(a, &d, &p, &s, &err) != CS_OK)
            continue;
        built++;
        char name[96];
        snprintf(name, sizeof(name), "%s/%s", cs_coll_name(a->coll), a->name);
        uint32_t merged = 0;
        for (int dt = 0; dt < CS_DT_COUNT; dt++)
            for (int op = 0; op < CS_OP_COUNT; op++) {
                if (a->coll != CS_COLL_ALLREDUCE &&
                    (op != CS_OP_SUM || (dt != CS_DT_F32 && dt != CS_DT_F16)))
                    continue;
                run_check(nc, s, dt, op, (1u << 16) + 5, 1, name, &merged);
            }
        uint32_t want = !strcmp(name, "allreduce/dbtree") ? 31 : !strcmp(name, "broadcast/chain") ? 7
                                                                                                 : merged;
        CS_TEST_CHECK(merged == want, "%s: %u copies merged, expected %u", name, merged, want);
        cs_sched_destroy(s);
    }
    CS_TEST_CHECK(built > 10, "only %d algorithms build at P = 1", built);
    cs_nccl_close(nc);
    cs_boot_close(boot);
    return cs_test_finish();
}
