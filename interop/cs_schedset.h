/*
 * cs_schedset.h - a schedule set for one collective: several MSCCL XML
 * files (or a folder of them), each serving the call sizes of its
 * minBytes / maxBytes range, picked per size the way MSCCL picks them.
 * (Not to be confused with the planner's tuning tables, cs_tuning.h: the
 * algorithm and parameters `collstep plan -o` chose per size range.)
 *
 * MSCCL's rule (msccl_lifecycle.cc, mscclSchedulerSelectAlgo): the first
 * loaded algorithm, in load order, whose collective and rank count match,
 * whose range covers the call (minBytes <= bytes, and bytes <= maxBytes or
 * maxBytes = 0), and whose nchunksperloop divides the call's element count
 * (count * sizeMultiplier, i.e. the whole vector).  bytes are the whole
 * vector, as nccl-tests and collstep count sizes.
 *
 * Files load in the order given; a folder contributes its *.xml and *.sched
 * files in name order (MSCCL's internal scheduler loads its folder sorted
 * by path too).  A collstep schedule file (.sched) serves every size (no
 * range, no divisibility).  All entries must compute the same collective
 * on the same number of ranks.
 *
 * Overlaps.  Where two files serve the same size, the earlier one is used,
 * as MSCCL does.  A file that an earlier one shadows entirely (the earlier
 * range covers its range, the earlier nchunksperloop divides its own and
 * the earlier serves in-place and out-of-place calls wherever it does, or
 * the earlier one is a .sched) would never be used: cs_schedset_load
 * refuses the set with CS_ERR_MISMATCH naming both files and their ranges
 * (two files that both claim every size are almost always meant to be
 * compared, one at a time).  A partial overlap is legitimate (a later file
 * serves the counts the earlier one's nchunksperloop does not divide, or
 * the rest of its range); cs_schedset_also names, per size, the later file
 * that the earlier one won over, so that a command can say so.
 *
 * Usage (sim / run, per size):
 *
 *   cs_schedset_t *set = NULL;
 *   if (cs_schedset_load(paths, npaths, &set, &err) != CS_OK) -> exit 2, err.msg
 *                                           (a file that would never be used too)
 *   for each size:
 *       const cs_schedset_entry_t *e = cs_schedset_lookup(set, bytes, elem_size, &err);
 *       if (e == NULL) -> exit 2, err.msg ("no file of the set serves 1000 bytes: ...")
 *       simulate / run e->sched, report e->path as the file that served the size
 *   cs_schedset_destroy(set);
 *
 * Entries loaded from XML have origin tables: cs_msccl_origin_of(e->sched,
 * rank, step, ...) names the XML line of a verifier finding.
 */
#ifndef CS_SCHEDSET_H
#define CS_SCHEDSET_H

#include <stddef.h>
#include <stdint.h>

#include "cs_sched.h"
#include "cs_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cs_schedset_entry {
    cs_sched_t *sched;  /* owned by the set */
    uint64_t min_bytes; /* minBytes (0 for .sched) */
    uint64_t max_bytes; /* maxBytes, 0: no limit */
    uint32_t nchunksperloop; /* 0 for .sched: any element count */
    int inplace, outofplace; /* the calls MSCCL serves with it (.sched: both) */
    int is_xml;
    char path[1024];
} cs_schedset_entry_t;

typedef struct cs_schedset {
    cs_schedset_entry_t *v;
    int n;
    cs_coll_t coll;
    int nranks;
} cs_schedset_t;

/* Load files and folders.  Errors (CS_ERR_PARSE, CS_ERR_IO, CS_ERR_MISMATCH
 * for entries of another collective or rank count, CS_ERR_NOTFOUND for an
 * empty folder) name the file.  *out is written only on success. */
int cs_schedset_load(const char *const *paths, int npaths, cs_schedset_t **out, cs_err_t *err);
/* The same from one argument: paths separated by commas (at most 64). */
int cs_schedset_load_list(const char *list, cs_schedset_t **out, cs_err_t *err);

/* The entry serving a call of `bytes` bytes of `elem_size`-byte elements,
 * or NULL with err (CS_ERR_NOTFOUND) listing every entry and why it does
 * not serve the size. */
const cs_schedset_entry_t *cs_schedset_lookup(const cs_schedset_t *set, uint64_t bytes,
                                              size_t elem_size, cs_err_t *err);

/* The first entry after `e` (in load order) that also serves the call: the
 * one MSCCL's rule passes over for `e`; NULL when none does. */
const cs_schedset_entry_t *cs_schedset_also(const cs_schedset_t *set,
                                            const cs_schedset_entry_t *e, uint64_t bytes,
                                            size_t elem_size);

/* "0 .. 1 MiB" style description of an entry's range, into buf. */
void cs_schedset_range_str(const cs_schedset_entry_t *e, char *buf, size_t len);

void cs_schedset_destroy(cs_schedset_t *set);

#ifdef __cplusplus
}
#endif

#endif /* CS_SCHEDSET_H */
