/*
 * cs_swphase.h - phase emitters made of switch operations (in-network
 * reduction and multicast, see "Switch steps" in core/cs_sched.h): NVLink
 * SHARP's load-reduce and multicast store, and an in-switch allreduce
 * (InfiniBand SHARP), over a group of ranks that one switch serves.
 *
 * Segments and pieces
 * -------------------
 * The operations cover `nseg` segments [lo[j], lo[j] + len[j]) (global
 * chunk positions), segment j owned by member owner[j]: its reader (the one
 * member that receives the reduction of segment j) and its writer (the one
 * member that multicasts it).  Each segment is cut into min(pieces, len[j])
 * pieces (cs__split); a segment of no chunks is skipped.  Every member walks
 * the operations in the same order, piece q of every segment before piece
 * q + 1, so the k-th switch step of every member on (group, channel) is one
 * operation.  The group (schedule-wide, cs_sched_add_group) is the members
 * in increasing order: cs__sw_group finds the declared group with exactly
 * these members or declares it as "<prefix><k>".  Emitters declare their
 * group whatever ranks the stream emits (cs__phase_split), so every part of
 * a split build declares the same groups in the same order.
 *
 *   reduce (RS)      every member contributes piece q of segment j from
 *                    `src`; the owner receives the reduction in `dst`
 *                    (NVLS reduce-scatter by load-reduce, multimem.ld_reduce).
 *                    A member's operations on one segment form a chain: piece
 *                    q + 1 after piece q, as one reader's pipeline.
 *   multicast (AG)   the owner writes piece q of segment j from its source
 *                    (src; dst after a reduce in the same call) to every
 *                    member's `dst` (multimem.st); the owner writes its own
 *                    dst too when its source is another buffer.  Chained per
 *                    segment like the reduces.
 *   both (AR)        reduce on channel chan, multicast on chan + 1: the
 *                    multicast of a piece waits for its reduce only, so the
 *                    reduce of piece q + 1 runs while piece q is multicast
 *                    (NCCL's NVLS allreduce).  Every member's multicast
 *                    receive also waits for its own contribution to the
 *                    piece's reduce (in place the two touch the same chunks).
 *                    Per piece q, the reduces of every segment, then their
 *                    multicasts (`rec` and `wait` are not used); the
 *                    multicasts form no chain, and the owner's reduce of
 *                    piece q waits for its multicast of piece q - depth
 *                    instead of its reduce of piece q - 1 (g->depth; 0: for
 *                    nothing), so each reader keeps up to `depth` pieces in
 *                    flight and its multicasts keep up with its reduces.
 *
 * `rec` (NULL or nranks x nseg x pieces entries, index (r nseg + j) pieces
 * + q) receives rank r's reduce step of piece q of segment j (-1 where it
 * has none); `wait` (same layout, NULL or -1 entries for none) is one more
 * step each multicast step waits for.  A group of one member needs no
 * switch: its reduces are a copy src -> dst of each segment (when the
 * buffers differ) and its multicasts nothing.
 *
 * Dependencies follow cs_phase.h: every step waits for the rank's front, and
 * the front becomes the member's last steps (a nop joining them).  All
 * return CS_OK or the schedule's sticky error.
 */
#ifndef CS_SWPHASE_H
#define CS_SWPHASE_H

#include "cs_phase.h"

/* What a cs__sw_nvls call emits. */
enum { CS__SW_RS = 1, CS__SW_AG = 2, CS__SW_AR = 3 };

typedef struct cs__swgrp {
    const int *ranks; /* n members (any order) */
    int n;
    int nseg;
    const uint32_t *lo, *len; /* nseg segments, global chunk positions */
    const int *owner;         /* nseg member indices */
    uint32_t depth;           /* CS__SW_AR: pieces a reader runs ahead (0: no limit) */
    /* CS__SW_RS, _AG: the pieces on nchan channels (0 or 1: all on chan),
     * channel c taking pieces [floor(c P / nchan), floor((c + 1) P / nchan))
     * of each segment's P on chan + c * cstride, each channel's pieces a
     * chain of their own */
    uint32_t nchan;
    int cstride;
} cs__swgrp_t;

/* The id of the group with exactly the members ranks[0..n) (any order),
 * declared as "<prefix><k>" (k = the number of groups so far) when there is
 * none yet; -1 on error (recorded in s->err). */
int cs__sw_group(cs_sched_t *s, const char *prefix, const int *ranks, int n);

/* NVLS operations of `what` (CS__SW_RS, _AG or _AR) over g; see above. */
int cs__sw_nvls(cs__phase_t *ph, const cs__swgrp_t *g, int what, int src, int dst, int chan,
                uint32_t pieces, int64_t *rec, const int64_t *wait);

/* cs__sw_nvls over a phase group (segment m owned by member m), as the
 * reduce-scatter, all-gather and allreduce of cs_phase.h: reduce-scatter
 * reads b.src and leaves segment m in b.dst; all-gather multicasts from
 * b.src to b.dst; allreduce reads src and leaves the window in out, each
 * reader `depth` pieces ahead of its multicasts at most (see "both"). */
int cs__phase_rs_nvls(cs__phase_t *ph, const cs__grp_t *g, cs__bufs_t b, int chan,
                      uint32_t pieces);
int cs__phase_ag_nvls(cs__phase_t *ph, const cs__grp_t *g, cs__bufs_t b, int chan,
                      uint32_t pieces);
int cs__phase_ar_nvls(cs__phase_t *ph, const cs__grp_t *g, int src, int chan, uint32_t pieces,
                      uint32_t depth);

/* In-switch allreduce of the window [lo, lo + len) among ranks[0..n): in
 * np = min(pieces, len) pieces, each one switch allreduce from src to dst on
 * channel chan; the pieces are independent operations (a switch pipelines
 * them).  `after` (NULL, or n x np entries, index m np + q) is a step piece
 * q of member m also waits for (-1: none); `rec` (NULL, same layout)
 * receives the operations' steps.  A group of one copies src -> dst. */
int cs__sw_sharp(cs__phase_t *ph, const int *ranks, int n, uint32_t lo, uint32_t len, int src,
                 int dst, int chan, uint32_t pieces, const int64_t *after, int64_t *rec);

/* The predicate of the registry's switch algorithms (cs_algo_t.switched):
 * always 1. */
int cs__sw_always(cs_params_t *params);

#endif /* CS_SWPHASE_H */
