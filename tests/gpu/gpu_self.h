/*
 * gpu_self.h - a 1-rank allreduce of 4 chunks where rank 0 sends to itself
 * on two channels, with recv and rrecv (shared by gpu_plan and gpu_engine).
 * With op max (idempotent) the output equals the input:
 *   0 send ch0 in[0,2)          1 recv ch0 out[0,2)         groups 0
 *   2 copy in[2,2)->tmp[2,2)    3 send ch1 tmp[2,2)         group 0
 *   4 copy in[2,2)->out[2,2)    5 rrecv ch1 out[2,2)        group 0
 *   6 send ch0 out[0,2) (1)     7 copy in[0,2)->tmp[0,2)
 *   8 rrecv ch0 tmp[0,2) (7)    9 copy tmp[0,2)->out[0,2) (6, 8)   group 1
 */
#ifndef GPU_SELF_H
#define GPU_SELF_H

#include "cs_sched.h"

static inline cs_sched_t *gpu_self_sched(void)
{
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, 1, 0, 0};
    cs_err_t err;
    cs_err_clear(&err);
    cs_sched_t *s = cs_sched_create(&d, 4, &err);
    if (!s)
        return NULL;
    int tmp = cs_sched_add_buffer(s, 0, "tmp", 0, 4);
    uint32_t a, b, c;
    cs_send(s, 0, 0, 0, cs_rng(CS_BUF_IN, 0, 2), NULL, 0);
    a = (uint32_t)cs_recv(s, 0, 0, 0, cs_rng(CS_BUF_OUT, 0, 2), NULL, 0);
    b = (uint32_t)cs_copy(s, 0, cs_rng(CS_BUF_IN, 2, 2), cs_rng(tmp, 2, 2), NULL, 0);
    cs_send(s, 0, 0, 1, cs_rng(tmp, 2, 2), &b, 1);
    b = (uint32_t)cs_copy(s, 0, cs_rng(CS_BUF_IN, 2, 2), cs_rng(CS_BUF_OUT, 2, 2), NULL, 0);
    cs_rrecv(s, 0, 0, 1, cs_rng(CS_BUF_OUT, 2, 2), &b, 1);
    uint32_t deps[2];
    deps[0] = (uint32_t)cs_send(s, 0, 0, 0, cs_rng(CS_BUF_OUT, 0, 2), &a, 1);
    c = (uint32_t)cs_copy(s, 0, cs_rng(CS_BUF_IN, 0, 2), cs_rng(tmp, 0, 2), NULL, 0);
    deps[1] = (uint32_t)cs_rrecv(s, 0, 0, 0, cs_rng(tmp, 0, 2), &c, 1);
    cs_copy(s, 0, cs_rng(tmp, 0, 2), cs_rng(CS_BUF_OUT, 0, 2), deps, 2);
    if (cs_sched_status(s) != CS_OK) {
        cs_sched_destroy(s);
        return NULL;
    }
    return s;
}

#endif
