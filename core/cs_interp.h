/*
 * cs_interp.h - the reference interpreter: runs every rank of a schedule in
 * one process, on real memory and real numbers.
 *
 * Execution follows cs_graph's global order: a matched send/receive pair is
 * one event that copies (recv) or combines (rrecv) the sender's source range
 * into the receiver's destination range; reduce and copy act locally; nop
 * does nothing; a switch operation reduces its members' sources in group
 * order (allreduce, reduce) or takes its writer's source (multicast) and
 * copies the result into every member's destination.  Every buffer holds `count` elements per block laid out as
 * cs_sched.h describes (cs_buf_elem_off / cs_range_elems), so a count
 * smaller than the chunk count simply makes some chunks empty, and count 0
 * is valid.
 *
 * The interpreter does not judge the schedule: it runs what it is given.
 * Steps that can never run (deadlock, unmatched sends or receives) make it
 * fail with CS_ERR_VERIFY; a matched pair whose two ranges hold different
 * numbers of elements at this count fails the same way.  Wrong numbers are
 * not an error: cs_interp_run reports them in its result.
 */
#ifndef CS_INTERP_H
#define CS_INTERP_H

#include <stdint.h>

#include "cs_dtype.h"
#include "cs_sched.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cs_interp_result {
    uint64_t wrong;           /* elements differing from the expected result, over all ranks */
    int first_bad_rank;       /* lowest rank with a wrong element, -1 when none */
    uint64_t first_bad_index; /* global element index of its first wrong element
                                 (CS_TEST_NO_INDEX when none) */
    double max_abs_err;       /* largest |got - expected| (infinity for NaN) */
} cs_interp_result_t;

/* Run schedule `s` on inputs from cs_test_fill (type dt, operator op,
 * `count` elements per block) and check every rank's output with
 * cs_test_check.  Buffers not holding input start filled with a poison
 * pattern, so a result that was never written shows up as wrong.  With
 * desc.inplace, `in` is poisoned too and `out` starts with the rank's
 * input where the input window lies inside the output window (for
 * broadcast: on the root only).
 * Returns CS_OK and fills *res (also when elements are wrong),
 * CS_ERR_VERIFY when the schedule cannot run, CS_ERR_INVAL for a bad type
 * or operator, CS_ERR_NOMEM; err says why. */
int cs_interp_run(const cs_sched_t *s, cs_dtype_t dt, cs_op_t op, uint64_t count,
                  cs_interp_result_t *res, cs_err_t *err);

/* Lower level: run `s` on caller memory.  in[r] and out[r] hold rank r's
 * whole in and out windows (cs_range_elems of the window's chunks at this
 * count, elements of type dt); in may be NULL, or in[r] NULL, when no step
 * reads `in` (in-place schedules).  Scratch buffers are allocated here and
 * start poisoned.  Nothing is filled or checked.  Returns CS_OK,
 * CS_ERR_VERIFY, CS_ERR_INVAL or CS_ERR_NOMEM. */
int cs_interp_exec(const cs_sched_t *s, cs_dtype_t dt, cs_op_t op, uint64_t count,
                   void *const *in, void *const *out, cs_err_t *err);

/* Number of elements of buffer `buf` of `rank` at `count` elements per block
 * (0 for a buffer id the rank does not have). */
uint64_t cs_interp_buf_elems(const cs_sched_t *s, int rank, int buf, uint64_t count);

#ifdef __cplusplus
}
#endif

#endif /* CS_INTERP_H */
