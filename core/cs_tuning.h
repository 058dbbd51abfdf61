/*
 * cs_tuning.h - tuning tables: per collective and size range, the
 * algorithm, its parameters and the rank-to-host map that `collstep plan`
 * chose; read by `--algo auto --tuning FILE`.
 *
 * File format (text, one record per line, '#' starts a comment line):
 *
 *   collstep-tuning 1
 *   platform SPEC                 platform spec as given to plan
 *   ranks P
 *   model NAME                    optional: the model the plan predicted
 *                                 under (ideal, calibrated, nccl-2.29.7)
 *   map NAME N                    a rank-to-host map of N hosts, followed by
 *   HOST                          N lines, one host per rank (as the lines of
 *   ...                           `collstep sim --map FILE`)
 *   entry COLL MIN MAX ALGO PARAMS MAP PREDICTED_US
 *
 * PARAMS is "key=val,key=val" as --param takes it, "-" for none; MAP names
 * a map defined above, "-" for the platform's default order.  MIN and MAX
 * are inclusive byte counts.  Tokens are separated by blanks and hold no
 * blanks.  Ranges of one collective do not overlap.
 */
#ifndef CS_TUNING_H
#define CS_TUNING_H

#include <stdint.h>
#include <stdio.h>

#include "cs_sched.h"  /* cs_coll_t */
#include "cs_status.h" /* cs_err_t */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cs_tuning_entry {
    cs_coll_t coll;
    uint64_t min_bytes, max_bytes; /* inclusive size range served by this entry */
    const char *algo;              /* registry algorithm name ("ring", "hier") */
    const char *params;            /* "key=val,key=val" as --param takes it, "" for none */
    char **map;                    /* host of each rank (as `sim --map` FILE lines), or NULL */
    int nmap;                      /* entries of map, 0 when map is NULL */
    double predicted_us;           /* the plan's prediction, informative */
} cs_tuning_entry_t;

typedef struct cs_tuning cs_tuning_t;

/* Read a tuning table written by `collstep plan -o`.  Malformed files: CS_ERR_PARSE with
 * "FILE:LINE:COL: expected ..." in err. */
int cs_tuning_load(const char *path, cs_tuning_t **out, cs_err_t *err);
void cs_tuning_free(cs_tuning_t *t);
/* What the table was planned for: platform spec as given to plan ("summit:nodes=16" or a
 * file path) and the number of ranks. */
const char *cs_tuning_platform(const cs_tuning_t *t);
/* The model the plan predicted under (its `model` line), NULL when the
 * table does not say; set it (no blanks) before writing. */
const char *cs_tuning_model(const cs_tuning_t *t);
int cs_tuning_set_model(cs_tuning_t *t, const char *model, cs_err_t *err);
int cs_tuning_ranks(const cs_tuning_t *t);
/* Check that the table fits this run: same platform name (compared as given) and ranks,
 * otherwise CS_ERR_MISMATCH with a message naming both.  platform may be NULL (live runs:
 * only ranks are checked). */
int cs_tuning_check(const cs_tuning_t *t, const char *platform, int ranks, cs_err_t *err);
/* The entry serving (coll, bytes); CS_ERR_NOTFOUND with a message listing the table's
 * ranges for coll when none does. */
int cs_tuning_pick(const cs_tuning_t *t, cs_coll_t coll, uint64_t bytes,
                   const cs_tuning_entry_t **out, cs_err_t *err);

/* ---- building and writing (collstep plan) ------------------------------- */

/* An empty table for (platform, ranks); NULL with err on lack of memory or
 * a platform spec holding blanks. */
cs_tuning_t *cs_tuning_new(const char *platform, int ranks, cs_err_t *err);
/* Add an entry (strings and map copied; identical maps are stored once).
 * params NULL or "" for none; map NULL for the default order.  Fails
 * (CS_ERR_INVAL) on blanks in a token, an empty range, a range that
 * overlaps another of the same collective, or a map of another length than
 * the table's ranks. */
int cs_tuning_add(cs_tuning_t *t, cs_coll_t coll, uint64_t min_bytes, uint64_t max_bytes,
                  const char *algo, const char *params, char *const *map, int nmap,
                  double predicted_us, cs_err_t *err);
/* Entries in the order added (loaded: in file order). */
int cs_tuning_count(const cs_tuning_t *t);
const cs_tuning_entry_t *cs_tuning_entry_at(const cs_tuning_t *t, int i);
/* Write the table in the format above.  CS_OK or CS_ERR_IO. */
int cs_tuning_write(const cs_tuning_t *t, FILE *f, cs_err_t *err);
/* 1 when the first n bytes of a file are a tuning table's start (for
 * core/cs_out.h's recognizer: only such a file is replaced by -o). */
int cs_tuning_recognize(const char *head, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* CS_TUNING_H */
