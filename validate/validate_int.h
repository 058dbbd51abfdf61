/*
 * validate_int.h - inside the validation library (cs_validate.h):
 *   validate_core.c    the object, the checks before running, the |error|
 *                      statistics
 *   validate_live.c    the live runs (exec/cs_timed.h, aligned clocks)
 *   validate_sim.c     the predictions, one watched child per platform
 *   validate_report.c  table, csv, json
 *   validate_trace.c   the traces' directories and their per-tier comparison
 */
#ifndef VALIDATE_INT_H
#define VALIDATE_INT_H

#include <stddef.h>

#include "cs_validate.h"

/* Trace directories under v->trace_dir (rank 0; "" elsewhere and without
 * traces): DIR/live/ALGO (ALGO-N for a name an earlier schedule had) and
 * DIR/sim-P. */
void cs__validate_live_dir(const cs_validate_t *v, int a, char *buf, size_t len);
void cs__validate_sim_dir(const cs_validate_t *v, int p, char *buf, size_t len);

#endif /* VALIDATE_INT_H */
