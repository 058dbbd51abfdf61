/*
 * cs_verify_int.h - internals shared by the verifier's files (not public).
 *
 *   cs_verify.c        driver, report, matching and deadlock checks
 *   cs_verify_race.c   per-rank ordering of chunk accesses, in-place rule
 *   cs_verify_value.c  symbolic execution of values and the end state
 *   cs_verify_switch.c the structure of switch operations
 *   cs_verify_find.c   findings: counted, stored, their steps and ranges
 *                      worded (called by the three above, calling none)
 *
 * A check returns CS_OK (findings, if any, are in the report) or a negative
 * status when it could not run (out of memory).
 */
#ifndef CS_VERIFY_INT_H
#define CS_VERIFY_INT_H

#include <stddef.h>

#include "cs_graph.h"
#include "cs_plan.h"
#include "cs_verify.h"

typedef struct cs__vctx {
    const cs_sched_t *s;
    const cs_graph_t *g;
    cs_verify_report_t *rep;
    uint32_t max; /* capacity of rep->findings */
} cs__vctx_t;

/* Count a finding; store it when there is room.  Returns 1 when stored. */
int cs__vfind(cs__vctx_t *v, const char *kind, int rank, int64_t step, int64_t chunk,
              const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* "step 17 (rrecv from 2)", "step 3 (send to 4 on channel 1)", "step 0 (copy)" */
const char *cs__vstep(const cs_sched_t *s, int rank, uint32_t i, char *buf, size_t n);
/* "out[5]" or "out[5:8]" for n chunks at local offset off of buffer buf */
const char *cs__vrange(const cs_sched_t *s, int rank, uint16_t buf, uint32_t off, uint32_t n,
                       char *out, size_t size);

int cs__verify_races(cs__vctx_t *v);
/* Switch operations: members that agree (operation, sizes, shapes), one
 * reader or writer, no member missing (cs_verify_switch.c). */
int cs__verify_switch(cs__vctx_t *v);

/* The symbolic execution runs while the graph orders the events (one pass
 * over the steps instead of two): create the state (the schedule's
 * initial values), pass cs__values_event with the state to
 * cs__graph_init_ev, then cs__values_finish compares the end state.
 * Findings go to the state's context, in event order. */
typedef struct cs__val cs__val_t;
int cs__values_create(cs__vctx_t *v, cs__val_t **out);
void cs__values_event(void *x, const cs_plan_t *p, int r, uint32_t i, int pr, uint32_t pi);
int cs__values_finish(cs__val_t *x); /* CS_ERR_NOMEM when an event ran out of memory */
void cs__values_destroy(cs__val_t *x);

#endif /* CS_VERIFY_INT_H */
