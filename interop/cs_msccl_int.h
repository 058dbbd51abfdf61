/*
 * cs_msccl_int.h - internal to the MSCCL importer: the XML as read
 * (cs_msccl_read.c) before it becomes a schedule (cs_msccl_build.c, with
 * the chunk positions of cs_msccl_pos.c).  Calls go one way:
 * read -> build -> pos; what all three need of the step types is here.
 */
#ifndef CS_MSCCL_INT_H
#define CS_MSCCL_INT_H

#include <stdint.h>

#include "cs_msccl.h"

/* Bounds that keep a small hostile file from asking for gigabytes: gpus,
 * and chunk slots (in + out + scratch windows of every gpu). */
#ifndef CS_MSCCL_MAX_GPUS
#define CS_MSCCL_MAX_GPUS 65536
#endif
#ifndef CS_MSCCL_MAX_SLOTS
#define CS_MSCCL_MAX_SLOTS (1u << 26)
#endif

/* Step types in the executor's order (msccl_struct.h), nop last. */
enum { X_S = 0, X_R, X_RCS, X_RRS, X_RRC, X_RRCS, X_CPY, X_RE, X_NOP, X_NTYPES };
/* MSCCL buffers: the same ids as collstep's in, out, first scratch. */
enum { XB_I = 0, XB_O = 1, XB_S = 2 };

typedef struct xstep {
    int type, s;
    int srcbuf, srcoff, dstbuf, dstoff, cnt;
    int depid, deps, hasdep;
    uint32_t line;
    int wait_tb, wait_step; /* the step it waits for (signalled), -1 none */
    int64_t chain;   /* collstep step that stands for "the threadblock got
                        through this step" (sends excluded), -1 none */
    int emitted;
    int tmpbuf;      /* rrs: its temporary buffer; eager sends: their copy */
} xstep_t;

typedef struct xtb {
    int id, send, recv, chan;
    uint32_t line;
    xstep_t *st;
    int n;
    size_t cap;
    int next; /* emission cursor */
} xtb_t;

typedef struct xgpu {
    int id, ichunks, ochunks, schunks;
    uint32_t line;
    xtb_t *tb; /* indexed by tb id once validated */
    int n;
    size_t cap;
} xgpu_t;

typedef struct xalgo {
    const char *fname;
    uint32_t line; /* of <algo> */
    cs_msccl_info_t info;
    xgpu_t *gpu; /* indexed by gpu id once validated */
    int ngpu;
} xalgo_t;

/* Whether a step type sends / receives a message. */
static inline int cs__msccl_has_send(int t)
{
    return t == X_S || t == X_RCS || t == X_RRS || t == X_RRCS;
}
static inline int cs__msccl_has_recv(int t)
{
    return t == X_R || t == X_RCS || t == X_RRS || t == X_RRC || t == X_RRCS;
}
/* The type's name in the XML ("rrcs"); "?" out of range. */
static inline const char *cs__msccl_type_name(int type)
{
    static const char *const names[X_NTYPES] = {"s",    "r",   "rcs", "rrs", "rrc",
                                                 "rrcs", "cpy", "re",  "nop"};
    return type >= 0 && type < X_NTYPES ? names[type] : "?";
}

/* ---- between cs_msccl_pos.c (chunk positions) and cs_msccl_build.c ---- */

typedef struct uf {
    uint32_t *parent;
    int64_t *pos; /* fixed position of a root, -1 free */
} uf_t;

typedef struct bctx {
    xalgo_t *a;
    cs_coll_t coll;
    int inplace; /* the XML's i is part of out */
    int staged;  /* ... in an out-of-place schedule that first copies in to out */
    uint32_t C, k, P;
    uint32_t win_in, win_out;
    uint64_t *node0; /* per gpu: first slot of in, then out, then scratch */
    uf_t uf;
    int32_t **sbuf; /* per gpu, per scratch chunk: collstep buffer id */
    int32_t **sfirst; /* ... and the first scratch chunk of that buffer */
} bctx_t;

static inline uint32_t cs__msccl_in_base(const bctx_t *b, int r)
{
    return b->coll == CS_COLL_ALLGATHER ? (uint32_t)r * b->k : 0;
}
static inline uint32_t cs__msccl_out_base(const bctx_t *b, int r)
{
    return b->coll == CS_COLL_REDUCE_SCATTER ? (uint32_t)r * b->k : 0;
}

/* Union-find over chunk slots; 0, or -1 when both sides are fixed apart. */
uint32_t cs__msccl_uf_find(uf_t *u, uint32_t x);
/* Slot of chunk `off` of MSCCL buffer `buf` on gpu r. */
uint64_t cs__msccl_slot(const bctx_t *b, int r, int buf, int off);
/* Tie what flows through every step and message; fixed positions clash:
 * an error at the step. */
int cs__msccl_positions(bctx_t *b, cs_err_t *err);
/* Scratch chunks -> scratch buffers of s (one per position offset). */
int cs__msccl_scratch_buffers(bctx_t *b, cs_sched_t *s, cs_err_t *err);
/* The schedule range of MSCCL operand (buf, off, cnt) on gpu r. */
int cs__msccl_range_of(bctx_t *b, int r, int buf, int off, int cnt, const xgpu_t *g,
                       const xtb_t *tb, const xstep_t *x, cs_range_t *out, cs_err_t *err);

/* Build the schedule of a validated xalgo into m (m->sched, origins). */
int cs__msccl_build(xalgo_t *a, int inplace, cs_msccl_t *m, cs_err_t *err);

#endif /* CS_MSCCL_INT_H */
