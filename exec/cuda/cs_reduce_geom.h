/*
 * cs_reduce_geom.h - how the reduction kernel (cs_reduce_gpu.cu) splits
 * dst[i] = dst[i] op src[i], i < n, over its grid: the launcher's split and
 * the loops every thread runs.  Plain C, also compiled by nvcc for the
 * kernel, so that a host test (tests/gpu/gpu_geom.c) runs the very loops the
 * kernel runs for every thread of a grid and checks that [0, n) is covered
 * exactly once, without a GPU.
 *
 * Split (cs_reduce_geom_init).  When dst and src have the same address
 * modulo 16 bytes, a scalar head of `head` elements reaches the 16-byte
 * boundary, `nvec` 16-byte vectors of `vlen` elements follow, and scalars
 * finish from `head + nvec * vlen` to n; otherwise everything is the head
 * (head = n, nvec = 0).  Grid: one block of CS_REDUCE_THREADS threads per
 * CS_REDUCE_THREADS work items (vectors count as one), at most `max_blocks`
 * (8 per SM: full occupancy), at least one.
 *
 * Loops (CS_REDUCE_VISIT).  Every part is a grid-stride loop: thread `tid`
 * of `stride` threads visits tid, tid + stride, ... of each part, so any
 * grid covers any n.  The grid never has to cover the data: a part longer
 * than the grid is walked in strides (issue #15: the head once took one
 * element per thread, and misaligned buffers longer than the grid were
 * reduced only up to the grid's size).
 */
#ifndef CS_REDUCE_GEOM_H
#define CS_REDUCE_GEOM_H

#include <stddef.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define CS_REDUCE_HD __host__ __device__
#else
#define CS_REDUCE_HD
#endif

#define CS_REDUCE_THREADS 256    /* threads per block (the kernel's launch bounds) */
#define CS_REDUCE_BLOCKS_PER_SM 8 /* 8 x 256 threads: a full SM */
#define CS_REDUCE_VEC_BYTES 16   /* one uint4 */

typedef struct cs_reduce_geom {
    size_t n;      /* elements */
    size_t head;   /* scalars [0, head) */
    size_t nvec;   /* vectors [0, nvec): elements head + v * vlen ... + vlen - 1 */
    size_t vlen;   /* elements per vector */
    size_t blocks; /* the grid, of CS_REDUCE_THREADS threads each */
} cs_reduce_geom_t;

/* The grid cap for a device of `sms` multiprocessors (a guess of 16 when
 * the count is unknown, sms < 1). */
static inline size_t cs_reduce_max_blocks(int sms)
{
    return (size_t)(sms < 1 ? 16 : sms) * CS_REDUCE_BLOCKS_PER_SM;
}

/* The launcher's split of n elements of `esize` bytes (1, 2, 4, 8 or 16)
 * between addresses d (dst) and s (src), and its grid of at most
 * max_blocks (>= 1) blocks.  Returns 0, or -1 without writing *g when an
 * address is not aligned to the element size, esize does not divide 16, or
 * max_blocks is 0. */
static inline int cs_reduce_geom_init(cs_reduce_geom_t *g, uintptr_t d, uintptr_t s, size_t n,
                                      size_t esize, size_t max_blocks)
{
    if (esize == 0 || CS_REDUCE_VEC_BYTES % esize || d % esize || s % esize || max_blocks == 0)
        return -1;
    size_t vlen = CS_REDUCE_VEC_BYTES / esize, head = n, nvec = 0;
    if (d % CS_REDUCE_VEC_BYTES == s % CS_REDUCE_VEC_BYTES) {
        head = ((CS_REDUCE_VEC_BYTES - d % CS_REDUCE_VEC_BYTES) % CS_REDUCE_VEC_BYTES) / esize;
        if (head > n)
            head = n;
        nvec = (n - head) / vlen;
    }
    size_t work = head + nvec + (n - head - nvec * vlen);
    size_t blocks = work / CS_REDUCE_THREADS + (work % CS_REDUCE_THREADS != 0);
    if (blocks > max_blocks)
        blocks = max_blocks;
    if (blocks > 0x7fffffff) /* gridDim.x limit */
        blocks = 0x7fffffff;
    if (blocks < 1)
        blocks = 1;
    g->n = n, g->head = head, g->nvec = nvec, g->vlen = vlen, g->blocks = blocks;
    return 0;
}

/* First element of the scalar tail. */
static inline CS_REDUCE_HD size_t cs_reduce_tail0(const cs_reduce_geom_t *g)
{
    return g->head + g->nvec * g->vlen;
}

/* The work of thread `tid` among `stride` threads: SCALAR(i) for each of
 * its scalar elements i, VECTOR(v) for each of its vectors v (elements
 * head + v * vlen ...).  SCALAR and VECTOR are names of function-like
 * macros or functions, called with one size_t argument.  `g` is a
 * cs_reduce_geom_t (not a pointer). */
#define CS_REDUCE_VISIT(g, tid, stride, SCALAR, VECTOR)                                       \
    do {                                                                                    \
        for (size_t cs_i_ = (tid); cs_i_ < (g).head; cs_i_ += (stride))                     \
            SCALAR(cs_i_);                                                                  \
        for (size_t cs_i_ = (tid); cs_i_ < (g).nvec; cs_i_ += (stride))                     \
            VECTOR(cs_i_);                                                                  \
        for (size_t cs_i_ = cs_reduce_tail0(&(g)) + (tid); cs_i_ < (g).n; cs_i_ += (stride)) \
            SCALAR(cs_i_);                                                                  \
    } while (0)

#endif /* CS_REDUCE_GEOM_H */
