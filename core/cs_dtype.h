/*
 * cs_dtype.h - element types, reduction operators, host reductions, and the
 * deterministic test data used by every checker (reference interpreter,
 * live runs with --check).
 *
 * Names follow nccl-tests: float, double, half, bfloat16, int32, int64 and
 * sum, prod, min, max.  Host reductions are plain loops over restrict
 * pointers written so the compiler vectorises them; half and bfloat16 are
 * converted through float with round-to-nearest-even.
 */
#ifndef CS_DTYPE_H
#define CS_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "cs_sched.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { CS_DT_F32 = 0, CS_DT_F64, CS_DT_F16, CS_DT_BF16, CS_DT_I32, CS_DT_I64, CS_DT_COUNT } cs_dtype_t;
typedef enum { CS_OP_SUM = 0, CS_OP_PROD, CS_OP_MIN, CS_OP_MAX, CS_OP_COUNT } cs_op_t;

size_t cs_dtype_size(cs_dtype_t dt);
const char *cs_dtype_name(cs_dtype_t dt); /* "float", "double", "half", "bfloat16", "int32", "int64" */
/* Accepts the names above and aliases (float32, f32, fp16, float16, bf16, int, ...);
 * CS_DT_COUNT when unknown. */
cs_dtype_t cs_dtype_parse(const char *s);
const char *cs_op_name(cs_op_t op); /* "sum", "prod", "min", "max" */
cs_op_t cs_op_parse(const char *s); /* CS_OP_COUNT when unknown */
/* The operator column as nccl-tests prints it: the operator's name for the
 * collectives that reduce, "none" for the others. */
const char *cs_redop_text(cs_coll_t coll, cs_op_t op);

/* dst[i] = dst[i] op src[i] for i < n.  dst and src must not overlap. */
typedef void (*cs_reduce_fn_t)(void *dst, const void *src, size_t n);
cs_reduce_fn_t cs_reduce_fn(cs_dtype_t dt, cs_op_t op);

float cs_half_to_float(uint16_t h);
uint16_t cs_float_to_half(float f);
float cs_bf16_to_float(uint16_t h);
uint16_t cs_float_to_bf16(float f);

/* ---- test data ---------------------------------------------------------
 * The input of `rank` at global element index i (position in the rank's
 * full input vector) is a small value chosen so that any reduction of up to
 * 2^16 ranks, in any order, is exact in every type (sums of small integers;
 * products of +-1 and a few 2s for prod).  Used by the interpreter and by
 * live runs so results can be checked exactly.  Data-movement collectives
 * (allgather, broadcast, alltoall) should use CS_OP_MIN or CS_OP_MAX data:
 * every (rank, element) pair has its own value there, while sum data is
 * mostly zeros (most ranks contribute nothing to a given element). */
void cs_test_fill(cs_dtype_t dt, cs_op_t op, void *buf, uint64_t n, int rank, uint64_t first);
/* Expected value (as double) of element i after reducing the inputs of
 * ranks [0, nranks) with op, and the input value of one rank. */
double cs_test_expected_reduced(cs_dtype_t dt, cs_op_t op, int nranks, uint64_t i);
double cs_test_input(cs_dtype_t dt, cs_op_t op, int rank, uint64_t i);
/* Number of elements of rank `rank`'s output buffer that differ from what
 * the collective `desc` must produce there, for `count` elements per block
 * (cs_coll_block_count) with inputs from cs_test_fill.  `out` holds the
 * rank's whole out window (cs_sched.h table), `out_first` is the global
 * element index of its first element.  Ranks without a defined output
 * (non-root of reduce) return 0. */
uint64_t cs_test_check(const cs_coll_desc_t *desc, cs_dtype_t dt, cs_op_t op, uint64_t count,
                       int rank, const void *out, uint64_t out_first, uint64_t out_n);

/* Like cs_test_check, also reporting the global element index of the first
 * wrong element (CS_TEST_NO_INDEX when none) and the largest absolute error
 * (infinity for NaN); either pointer may be NULL. */
#define CS_TEST_NO_INDEX UINT64_MAX
uint64_t cs_test_check_detail(const cs_coll_desc_t *desc, cs_dtype_t dt, cs_op_t op,
                              uint64_t count, int rank, const void *out, uint64_t out_first,
                              uint64_t out_n, uint64_t *first_bad, double *max_abs_err);
/* Compare out[0..n) (type dt) with want[0..n); `first` is the global index
 * of out[0], used for *first_bad.  Same reporting as cs_test_check_detail.
 * Lets a caller that checks many ranks against one vector (allreduce)
 * compute the expected values once. */
uint64_t cs_test_compare(cs_dtype_t dt, const void *out, const double *want, uint64_t n,
                         uint64_t first, uint64_t *first_bad, double *max_abs_err);
/* Element k of a buffer of type dt, as double (NaN for an unknown type). */
double cs_test_load(cs_dtype_t dt, const void *buf, uint64_t k);

#ifdef __cplusplus
}
#endif

#endif /* CS_DTYPE_H */
