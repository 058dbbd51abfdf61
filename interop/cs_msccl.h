/*
 * cs_msccl.h - MSCCL algorithm XML (msccl-tools, MSCCLang, TACCL, TE-CCL;
 * the MSCCL executors of NCCL and RCCL) to and from collstep schedules.
 * docs/msccl.md describes the mapping step type by step type.
 *
 * Import (cs_msccl_read.c, libxml2)
 * ---------------------------------
 * An <algo> of ngpus <gpu>s, each with threadblocks <tb send recv chan>
 * running their <step>s one after the other, becomes one collstep schedule:
 *
 *   chunks     C = nchunksperloop; MSCCL chunk c of a buffer is elements
 *              [c*S, (c+1)*S) with S = count*sizeMultiplier/nchunksperloop,
 *              which is collstep's chunk c whenever the size is one MSCCL
 *              serves (count*sizeMultiplier a multiple of nchunksperloop).
 *   buffers    i -> in, o -> out, s -> scratch buffers whose windows are
 *              inferred (a scratch chunk takes the position of the chunks
 *              that flow through it); in place: i is the part of out that
 *              holds the input.
 *   messages   the k-th send of tb (gpu a, send b, chan c) matches the k-th
 *              receive of tb (gpu b, recv a, chan c): collstep channel c.
 *   order      each step waits for the previous step of its tb and for
 *              step deps of tb depid (the first step at or after it that
 *              signals, hasdep="1").
 *
 * Every schedule step remembers where it came from (cs_msccl_origin_t), so
 * a verifier finding can name the XML line, gpu, threadblock and step.
 *
 * Errors: code CS_ERR_PARSE and "FILE:LINE: what is wrong" (malformed XML,
 * unknown step types, buffers or offsets out of range, dangling or cyclic
 * dependencies, ngpus disagreeing with the gpu elements ...).
 *
 * Export (cs_msccl_write.c)
 * -------------------------
 * A schedule of allreduce, reduce-scatter, allgather or alltoall becomes an
 * XML the executor accepts: one threadblock per (peer, channel, direction),
 * local steps in threadblocks of their own (one per dependency chain),
 * dependencies as depid/deps (extra ones as nop steps), hasdep where waited
 * for, scratch buffers laid out one after the other in s.
 */
#ifndef CS_MSCCL_H
#define CS_MSCCL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cs_sched.h"
#include "cs_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where one schedule step came from. */
typedef struct cs_msccl_origin {
    uint32_t line; /* line of the <step> element (of the <tb> for none) */
    int32_t gpu, tb, step; /* step: its s attribute */
} cs_msccl_origin_t;

/* The XML's own description, kept as metadata. */
typedef struct cs_msccl_info {
    char name[128];
    char coll[32];  /* as written: allreduce, reducescatter, allgather, alltoall */
    char proto[16]; /* Simple, LL, LL128 */
    char redop[16]; /* "" when absent */
    int ngpus, nchannels, nchunksperloop;
    int nthreadblocks;       /* the most threadblocks of one gpu */
    int inplace, outofplace; /* the flags (outofplace absent: !inplace) */
    int64_t min_bytes, max_bytes; /* minBytes, maxBytes (0: no limit) */
    int imported_inplace;         /* which reading the schedule is: 0 out of place,
                                     1 in place, 2 in-place algorithm served out
                                     of place (cs_msccl_opts_t) */
} cs_msccl_info_t;

typedef struct cs_msccl {
    cs_sched_t *sched; /* owned; cs_msccl_take_sched takes it */
    cs_msccl_info_t info;
    char path[512];
    cs_msccl_origin_t **origin; /* origin[rank][step] */
    uint32_t *norigin;          /* per rank */
    int nranks;
} cs_msccl_t;

typedef struct cs_msccl_opts {
    /* 0: the out-of-place reading; 1: the in-place reading (an in-place
     * schedule: out holds the input, in is not touched); 2: an in-place
     * algorithm serving an out-of-place call: each rank first copies its
     * input into the output, every step waits for that copy.  -1 (what
     * NULL opts mean): 0 when the file allows it, else 2, so that verify,
     * sim and run (which runs out of place) all take the file. */
    int inplace;
} cs_msccl_opts_t;

/* 1 when the first non-blank bytes of buf are "<?xml" or "<algo" (an XML
 * comment "<!--" counts too): the content says MSCCL XML. */
int cs_msccl_detect(const char *buf, size_t len);

/* Import from memory (`name` is used in messages) or from a file ("-" is
 * standard input).  opts may be NULL.  On success *out owns the import; on
 * failure *out is untouched and err says FILE:LINE: what. */
int cs_msccl_parse(const char *buf, size_t len, const char *name, const cs_msccl_opts_t *opts,
                   cs_msccl_t **out, cs_err_t *err);
int cs_msccl_load(const char *path, const cs_msccl_opts_t *opts, cs_msccl_t **out, cs_err_t *err);
void cs_msccl_destroy(cs_msccl_t *m);

/* "FILE:LINE: gpu G tb T step S" for step `step` of `rank`; 0, or -1 when
 * out of range (buf gets ""). */
int cs_msccl_origin_str(const cs_msccl_t *m, int rank, int64_t step, char *buf, size_t len);

/* ---- the command-line path: schedules read by content ------------------- */

/* Load an MSCCL XML as a plain schedule (out of place when the file allows
 * it) and remember its origin table for cs_msccl_origin_of; NULL and err
 * on failure.  The schedule is the caller's (cs_sched_destroy). */
cs_sched_t *cs_msccl_load_sched(const char *path, cs_err_t *err);
/* Any schedule file: an MSCCL XML, known by its first bytes (regular files
 * only), as cs_msccl_load_sched; else collstep's text format
 * (cs_sched_load; "-" is standard input).  NULL and err on failure. */
cs_sched_t *cs_msccl_load_any(const char *path, cs_err_t *err);
/* The schedule of m, handed to the caller, with m's origin table kept for
 * cs_msccl_origin_of; m is consumed (freed or kept by that table). */
cs_sched_t *cs_msccl_release(cs_msccl_t *m);
/* For a schedule returned by cs_msccl_load_sched or cs_msccl_release (and still alive): the
 * origin of (rank, step) as "FILE.xml:LINE: gpu G tb T step S"; returns 1
 * when found, 0 otherwise (buf gets ""). */
int cs_msccl_origin_of(const cs_sched_t *s, int rank, int64_t step, char *buf, size_t len);
/* Forget the origin table of s (call before cs_sched_destroy when the
 * address may be reused by another schedule; harmless otherwise). */
void cs_msccl_forget(const cs_sched_t *s);

/* ---- export -------------------------------------------------------------- */

typedef struct cs_msccl_write_opts {
    const char *name;  /* algo name; NULL: the schedule's algorithm or "collstep" */
    const char *proto; /* NULL: "Simple" */
    int64_t min_bytes, max_bytes; /* 0, 0: every size */
    int check_limits; /* 1: refuse what the executor refuses (64 steps per
                         threadblock, counts below 72, 32 peers per channel,
                         channels below 32) */
} cs_msccl_write_opts_t;

/* Per schedule step, where the export put it (tb -1: a nop that became
 * dependencies of the steps waiting for it). */
typedef struct cs_msccl_place {
    int32_t tb, step;
} cs_msccl_place_t;

/* Write `s` as MSCCL XML to f.  places (may be NULL): filled with one array
 * per rank (places[r][step]), freed with cs_msccl_places_free.  Errors:
 * CS_ERR_UNSUPPORTED (broadcast, reduce, a limit of the executor). */
int cs_msccl_write(const cs_sched_t *s, const cs_msccl_write_opts_t *opts, FILE *f,
                   cs_msccl_place_t ***places, cs_err_t *err);
void cs_msccl_places_free(cs_msccl_place_t **places, int nranks);
/* Same into PATH, whole or not at all, through core/cs_out.h: "-" is
 * stdout; an existing file is replaced only when it is an MSCCL XML that
 * collstep wrote (its CS_OUT_XML_MARK comment), or with flags CS_OUT_FORCE
 * (CS_ERR_EXISTS otherwise). */
int cs_msccl_save(const cs_sched_t *s, const cs_msccl_write_opts_t *opts, const char *path,
                  int flags, cs_err_t *err);
/* The check of cs_msccl_save alone, before any work: CS_OK when PATH may
 * be written (as above), else the error it would give. */
int cs_msccl_check_output(const char *path, int flags, cs_err_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CS_MSCCL_H */
