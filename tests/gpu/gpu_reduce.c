/*
 * gpu_reduce.c - the CUDA reduction kernels against the host reductions
 * (cs_reduce_fn), bit for bit, for every type and operator, several
 * lengths (0, 1, a partial vector, a few vectors and a tail, 1M + 3, and
 * 4 x and 16 x the launched grid's threads + 3, so that every part must
 * loop over the grid on any GPU: issue #15, misaligned buffers were
 * reduced only up to the grid's size) and alignments (both aligned, the
 * same misalignment, different ones, which takes the scalar path).  Data: the collective test data of two ranks and,
 * for the float types, values with fractions so that rounding is exercised.
 * Skips (77) without a CUDA device or driver.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <string.h>

#include "cs_gpu.h"
#include "cs_reduce_geom.h"
#include "cs_test.h"

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* Values with fractions in [-4, 4) for the float types. */
static void fill_frac(cs_dtype_t dt, void *buf, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        float v = (float)((int64_t)(mix(seed * 1000003u + i) % 8192) - 4096) / 1024.0f;
        switch (dt) {
        case CS_DT_F32: ((float *)buf)[i] = v; break;
        case CS_DT_F64: ((double *)buf)[i] = (double)v / 3.0; break;
        case CS_DT_F16: ((uint16_t *)buf)[i] = cs_float_to_half(v); break;
        case CS_DT_BF16: ((uint16_t *)buf)[i] = cs_float_to_bf16(v); break;
        default: break;
        }
    }
}

static int one(cs_dtype_t dt, cs_op_t op, size_t n, size_t doff, size_t soff, int frac,
               char *hd, char *hs, char *got, char *dd, char *ds)
{
    size_t es = cs_dtype_size(dt);
    if (frac) {
        fill_frac(dt, hd, n, 1);
        fill_frac(dt, hs, n, 2);
    } else {
        cs_test_fill(dt, op, hd, n, 0, 17);
        cs_test_fill(dt, op, hs, n, 3, 17);
    }
    cs_err_t err;
    cs_err_clear(&err);
    cudaMemcpy(dd + doff * es, hd, n * es, cudaMemcpyHostToDevice);
    cudaMemcpy(ds + soff * es, hs, n * es, cudaMemcpyHostToDevice);
    int st = cs_gpu_reduce(dd + doff * es, ds + soff * es, n, dt, op, NULL, &err);
    CS_TEST_CHECK(st == CS_OK, "%s %s n=%zu: %s", cs_dtype_name(dt), cs_op_name(op), n, err.msg);
    cudaError_t ce = cudaDeviceSynchronize();
    CS_TEST_CHECK(ce == cudaSuccess, "%s", cudaGetErrorString(ce));
    cudaMemcpy(got, dd + doff * es, n * es, cudaMemcpyDeviceToHost);
    cs_reduce_fn(dt, op)(hd, hs, n);
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; i++)
        if (memcmp(got + i * es, hd + i * es, es)) {
            bad++;
            first = first < i ? first : i;
        }
    CS_TEST_CHECK(bad == 0, "%s %s n=%zu offsets %zu/%zu%s: %zu differ, first at %zu",
                  cs_dtype_name(dt), cs_op_name(op), n, doff, soff, frac ? " (fractions)" : "",
                  bad, first);
    return bad != 0;
}

int main(void)
{
    int ndev = 0, dev = 0, sms = 0;
    cs_err_t err;
    cs_err_clear(&err);
    if (cs_gpu_device_count(&ndev, &err) != CS_OK)
        CS_TEST_SKIP("%s", err.msg);
    CS_TEST_REQUIRE(cudaGetDevice(&dev) == cudaSuccess &&
                        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) ==
                            cudaSuccess, "multiprocessor count");
    /* The launched grid's threads (cs_reduce_geom.h): lengths beyond them
     * need every part's grid-stride loop, on any GPU. */
    size_t grid = cs_reduce_max_blocks(sms) * CS_REDUCE_THREADS;
    printf("%d SMs: grid of %zu threads\n", sms, grid);
    const size_t lens[] = {0, 1, 3, 37, 4099, (1u << 20) + 3, 4 * grid + 3, 16 * grid + 3};
    const size_t nlens = sizeof(lens) / sizeof(lens[0]);
    const size_t offs[][2] = {{0, 0}, {1, 1}, {3, 3}, {0, 1}, {2, 0}};
    size_t maxn = 16 * grid + 16, maxb = maxn * 8;
    char *hd = malloc(maxb), *hs = malloc(maxb), *got = malloc(maxb), *dd = NULL, *ds = NULL;
    CS_TEST_REQUIRE(hd && hs && got, "host memory");
    CS_TEST_REQUIRE(cudaMalloc((void **)&dd, maxb) == cudaSuccess &&
                        cudaMalloc((void **)&ds, maxb) == cudaSuccess, "cudaMalloc");
    int fails = 0;
    for (int dt = 0; dt < CS_DT_COUNT; dt++)
        for (int op = 0; op < CS_OP_COUNT; op++)
            for (size_t l = 0; l < nlens; l++)
                for (size_t o = 0; o < sizeof(offs) / sizeof(offs[0]); o++) {
                    /* the longest: more vectors than threads too; two alignments */
                    if (l == nlens - 1 && o != 1 && o != 3)
                        continue;
                    fails += one(dt, op, lens[l], offs[o][0], offs[o][1], 0, hd, hs, got, dd, ds);
                    if (dt == CS_DT_F32 || dt == CS_DT_F64 || dt == CS_DT_F16 || dt == CS_DT_BF16)
                        fails += one(dt, op, lens[l], offs[o][0], offs[o][1], 1, hd, hs, got, dd,
                                     ds);
                    if (fails > 20)
                        return cs_test_finish();
                }
    /* An unknown type is refused, not launched; so is a misaligned element. */
    CS_TEST_CHECK(cs_gpu_reduce(dd, ds, 4, CS_DT_COUNT, CS_OP_SUM, NULL, &err) == CS_ERR_INVAL,
                  "unknown type accepted");
    CS_TEST_CHECK(cs__gpu_reduce(dd + 1, ds, 4, CS_DT_F32, CS_OP_SUM, NULL) ==
                      cudaErrorMisalignedAddress, "misaligned float accepted");
    CS_TEST_CHECK(cudaDeviceSynchronize() == cudaSuccess, "device error after the refusals");
    cudaFree(dd);
    cudaFree(ds);
    free(hd), free(hs), free(got);
    return cs_test_finish();
}
