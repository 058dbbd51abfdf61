/*
 * cs_verify.h - the static verifier: does a schedule compute its
 * collective, for every message size, without deadlock or race?
 *
 * Checks, in this order (findings are stored in that order):
 *   1. matching   every send has a receive and back ("unmatched"); matched
 *                 ranges have the same number of chunks and the same chunk
 *                 shapes ("size").
 *   2. deadlock   steps the combined graph (cs_graph.h) can never run are
 *                 explained: a waits-for cycle across ranks ("deadlock"), or
 *                 steps blocked behind an unmatched operation ("stuck").
 *   3. races      per rank, two steps touching the same chunk of the same
 *                 buffer, one of them writing, must be ordered by the rank's
 *                 own dependencies ("race"); with `inplace`, touching `in` is
 *                 an error ("inplace").
 *   4. values     symbolic execution in the graph's order: each chunk slot
 *                 holds nothing or (origin chunk, set of ranks whose input is
 *                 combined).  Reading nothing ("uninit"), combining different
 *                 chunks ("wrong-chunk"), combining a rank twice ("twice"),
 *                 and at the end out chunks lacking ranks ("missing"),
 *                 holding others ("extra") or the wrong chunk ("wrong-chunk").
 *                 A finding poisons the chunks it produces, so one mistake
 *                 is reported once, not again by every step downstream.
 *
 * Every finding names the rank, the step (-1 for end-state findings) and the
 * global chunk (-1 when not about one chunk), and says in words what is
 * wrong, e.g. "rank 3 step 17 (rrecv from 2): out[5] would hold the input of
 * rank 1 twice".
 *
 * Cost: time about linear in steps + chunk accesses; memory a few words per
 * step and per chunk slot.  Sets of ranks are interval lists from an arena,
 * so P = 27648 needs no P-bit sets.
 */
#ifndef CS_VERIFY_H
#define CS_VERIFY_H

#include <stdint.h>

#include "cs_sched.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cs_finding {
    int rank;      /* -1 when not about one rank */
    int64_t step;  /* local step index on `rank`, -1 when n/a */
    int64_t chunk; /* global chunk id, -1 when n/a */
    char kind[24]; /* "missing", "extra", "twice", "race", "deadlock", "stuck",
                      "unmatched", "size", "uninit", "wrong-chunk", "inplace" */
    char msg[256]; /* complete sentence for the user */
    char *detail;  /* NULL, or more lines for the user (a deadlock's whole
                      cycle, one step a line); owned by the report */
} cs_finding_t;

typedef struct cs_verify_report {
    uint64_t total;        /* all findings, stored or not */
    uint32_t n;            /* stored findings (<= max_findings) */
    cs_finding_t *findings; /* n entries, owned by the report */
} cs_verify_report_t;

typedef struct cs_verify_opts {
    uint32_t max_findings; /* findings stored; 0 means the default, 20 */
} cs_verify_opts_t;

/* Verify `s`.  `opts` may be NULL.  *rep is (re)initialised by the call and
 * must be released with cs_verify_report_fini whatever the result.
 * Returns CS_OK when the schedule computes its collective (rep has no
 * findings), CS_ERR_VERIFY when rep has findings (err names the first), or
 * another negative status when verification could not run (CS_ERR_NOMEM,
 * CS_ERR_INVAL for a schedule with a builder error). */
int cs_verify(const cs_sched_t *s, const cs_verify_opts_t *opts, cs_verify_report_t *rep,
              cs_err_t *err);
void cs_verify_report_fini(cs_verify_report_t *rep);

#ifdef __cplusplus
}
#endif

#endif /* CS_VERIFY_H */
