/*
 * cs_reduce_gpu.cu - CUDA reduction kernels: dst[i] = dst[i] op src[i] on
 * device memory, for float, double, half, bfloat16, int32, int64 and sum,
 * prod, min, max (the same table as the host's cs_reduce_fn).
 *
 * Contract (see cs_gpu.h, cs__gpu_reduce): enqueued on the given stream,
 * never synchronises, never touches host memory; dst and src must not
 * overlap and must be aligned to the element size (else
 * cudaErrorMisalignedAddress, nothing launched).  Returns the cudaError_t
 * of the launch (0 on success).
 *
 * Method.  One grid-stride kernel per (type, operator), split and loops
 * from cs_reduce_geom.h.  When dst and src have the same offset modulo 16
 * bytes, a scalar head reaches the 16-byte boundary, the body moves 16-byte
 * vectors (uint4: 4 floats, 2 doubles, 8 halves ...) and a scalar tail
 * finishes; otherwise everything is the scalar head.  Every part is a
 * grid-stride loop: the grid never has to cover the data.
 * Results match the host reductions bit for bit: the same single IEEE
 * operation per element (no FMA contraction is possible with one op), half
 * and bfloat16 through float with one round-to-nearest-even, float min/max
 * as `src < dst ? src : dst`, integer sum/prod wrapping (done unsigned).
 * Grid: at most 8 blocks of 256 threads per SM (full occupancy); enough
 * loads are in flight to reach memory bandwidth for large vectors.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "cs_dtype.h"
#include "cs_reduce_geom.h"

namespace {

/* Integer sum and prod wrap: computed unsigned (no undefined overflow). */
struct OpSum {
    template <typename T> __device__ static T f(T a, T b) { return a + b; }
    __device__ static int32_t f(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
    __device__ static int64_t f(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
};
struct OpProd {
    template <typename T> __device__ static T f(T a, T b) { return a * b; }
    __device__ static int32_t f(int32_t a, int32_t b) { return (int32_t)((uint32_t)a * (uint32_t)b); }
    __device__ static int64_t f(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
};
struct OpMin {
    template <typename T> __device__ static T f(T a, T b) { return b < a ? b : a; }
};
struct OpMax {
    template <typename T> __device__ static T f(T a, T b) { return b > a ? b : a; }
};

/* Storage type S; 16-bit floats are combined in float and rounded once. */
template <typename S> struct Elem {
    template <typename Op> __device__ static S red(S a, S b) { return Op::f(a, b); }
};
template <> struct Elem<__half> {
    template <typename Op> __device__ static __half red(__half a, __half b)
    {
        return __float2half_rn(Op::f(__half2float(a), __half2float(b)));
    }
};
template <> struct Elem<__nv_bfloat16> {
    template <typename Op> __device__ static __nv_bfloat16 red(__nv_bfloat16 a, __nv_bfloat16 b)
    {
        return __float2bfloat16_rn(Op::f(__bfloat162float(a), __bfloat162float(b)));
    }
};

template <typename T> union Vec {
    uint4 raw;
    T e[sizeof(uint4) / sizeof(T)];
};

/* One scalar element and one 16-byte vector of dst op= src. */
template <typename T, typename Op>
__device__ __forceinline__ void red_scalar(T *__restrict__ dst, const T *__restrict__ src, size_t i)
{
    dst[i] = Elem<T>::template red<Op>(dst[i], src[i]);
}

template <typename T, typename Op>
__device__ __forceinline__ void red_vector(uint4 *__restrict__ vd, const uint4 *__restrict__ vs,
                                           size_t v)
{
    constexpr int V = sizeof(uint4) / sizeof(T);
    Vec<T> a, b;
    a.raw = vd[v];
    b.raw = __ldg(vs + v);
#pragma unroll
    for (int j = 0; j < V; j++)
        a.e[j] = Elem<T>::template red<Op>(a.e[j], b.e[j]);
    vd[v] = a.raw;
}

/* The split and the grid-stride loops of every part are cs_reduce_geom.h's
 * (tested on the host for every thread of many grids, gpu_geom.c). */
template <typename T, typename Op>
__global__ void __launch_bounds__(CS_REDUCE_THREADS)
    reduce_kernel(T *__restrict__ dst, const T *__restrict__ src, cs_reduce_geom_t g)
{
    size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    uint4 *vd = reinterpret_cast<uint4 *>(dst + g.head);
    const uint4 *vs = reinterpret_cast<const uint4 *>(src + g.head);
#define CS_RED_SCALAR(i) red_scalar<T, Op>(dst, src, i)
#define CS_RED_VECTOR(v) red_vector<T, Op>(vd, vs, v)
    CS_REDUCE_VISIT(g, tid, stride, CS_RED_SCALAR, CS_RED_VECTOR);
#undef CS_RED_SCALAR
#undef CS_RED_VECTOR
}

int sm_count(void)
{
    static int cached[64];
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0)
        return 16;
    if (dev < 64 && cached[dev])
        return cached[dev];
    int n = 16;
    if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || n < 1)
        n = 16;
    if (dev < 64)
        cached[dev] = n;
    return n;
}

template <typename T, typename Op>
cudaError_t launch(void *dst, const void *src, size_t n, cudaStream_t stream)
{
    cs_reduce_geom_t g;
    if (cs_reduce_geom_init(&g, (uintptr_t)dst, (uintptr_t)src, n, sizeof(T),
                            cs_reduce_max_blocks(sm_count())) != 0)
        return cudaErrorMisalignedAddress; /* not aligned to the element size */
    reduce_kernel<T, Op><<<(unsigned)g.blocks, CS_REDUCE_THREADS, 0, stream>>>((T *)dst,
                                                                              (const T *)src, g);
    return cudaGetLastError();
}

template <typename T>
cudaError_t launch_op(cs_op_t op, void *dst, const void *src, size_t n, cudaStream_t st)
{
    switch (op) {
    case CS_OP_SUM: return launch<T, OpSum>(dst, src, n, st);
    case CS_OP_PROD: return launch<T, OpProd>(dst, src, n, st);
    case CS_OP_MIN: return launch<T, OpMin>(dst, src, n, st);
    case CS_OP_MAX: return launch<T, OpMax>(dst, src, n, st);
    default: return cudaErrorInvalidValue;
    }
}

} // namespace

extern "C" int cs__gpu_reduce(void *dst, const void *src, size_t n, cs_dtype_t dt, cs_op_t op,
                              void *stream)
{
    if (n == 0)
        return 0;
    cudaStream_t st = (cudaStream_t)stream;
    switch (dt) {
    case CS_DT_F32: return (int)launch_op<float>(op, dst, src, n, st);
    case CS_DT_F64: return (int)launch_op<double>(op, dst, src, n, st);
    case CS_DT_F16: return (int)launch_op<__half>(op, dst, src, n, st);
    case CS_DT_BF16: return (int)launch_op<__nv_bfloat16>(op, dst, src, n, st);
    case CS_DT_I32: return (int)launch_op<int32_t>(op, dst, src, n, st);
    case CS_DT_I64: return (int)launch_op<int64_t>(op, dst, src, n, st);
    default: return (int)cudaErrorInvalidValue;
    }
}
