/*
 * cs_msccl_int.h - internal to the MSCCL importer: the XML as read
 * (cs_msccl_read.c) before it becomes a schedule (cs_msccl_build.c).
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
    int n, cap;
    int next; /* emission cursor */
} xtb_t;

typedef struct xgpu {
    int id, ichunks, ochunks, schunks;
    uint32_t line;
    xtb_t *tb; /* indexed by tb id once validated */
    int n, cap;
} xgpu_t;

typedef struct xalgo {
    const char *fname;
    uint32_t line; /* of <algo> */
    cs_msccl_info_t info;
    xgpu_t *gpu; /* indexed by gpu id once validated */
    int ngpu;
} xalgo_t;

/* Which operands a step type reads / writes / sends (bit 0 src, bit 1 dst). */
int cs__msccl_has_send(int type);
int cs__msccl_has_recv(int type);
const char *cs__msccl_type_name(int type);

/* Build the schedule of a validated xalgo into m (m->sched, origins). */
int cs__msccl_build(xalgo_t *a, int inplace, cs_msccl_t *m, cs_err_t *err);

#endif /* CS_MSCCL_INT_H */
