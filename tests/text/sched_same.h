/*
 * sched_same.h - helpers of the text tests and the fuzz harness:
 * field-by-field schedule equality (cs_test_sched_diff returns NULL when
 * equal, else a static string naming the first difference; a digest would
 * not say where two schedules differ) and the canonical text of a schedule
 * in memory (cs_test_write_mem).
 */
#ifndef CS_TEST_SCHED_SAME_H
#define CS_TEST_SCHED_SAME_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_sched.h"
#include "cs_text.h"

/* Canonical text of s in a malloc'ed buffer (NULL on failure). */
static inline char *cs_test_write_mem(const cs_sched_t *s, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (f == NULL)
        return NULL;
    int rc = cs_sched_write(s, f);
    fclose(f);
    if (rc != CS_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

static inline int cs__range_eq(cs_range_t a, cs_range_t b)
{
    return a.buf == b.buf && a.off == b.off && a.n == b.n;
}

static inline const char *cs_test_sched_diff(const cs_sched_t *a, const cs_sched_t *b)
{
    if (a->desc.coll != b->desc.coll || a->desc.nranks != b->desc.nranks ||
        a->desc.root != b->desc.root || a->desc.inplace != b->desc.inplace)
        return "collective";
    if (a->nchunks != b->nchunks || a->nblocks != b->nblocks)
        return "chunks";
    if (a->ngroups != b->ngroups || a->nswitch != b->nswitch)
        return "number of groups or switch steps";
    for (uint32_t g = 0; g < a->ngroups; g++)
        if (strcmp(a->groups[g].name, b->groups[g].name) != 0 || a->groups[g].n != b->groups[g].n ||
            memcmp(a->groups[g].members, b->groups[g].members,
                   a->groups[g].n * sizeof(*a->groups[g].members)) != 0)
            return "group";
    for (int r = 0; r < a->desc.nranks; r++) {
        const cs_rank_sched_t *x = &a->ranks[r], *y = &b->ranks[r];
        if (x->nbufs != y->nbufs || x->nsteps != y->nsteps)
            return "number of buffers or steps";
        for (int i = 0; i < x->nbufs; i++)
            if (strcmp(x->bufs[i].name, y->bufs[i].name) != 0 ||
                x->bufs[i].base != y->bufs[i].base || x->bufs[i].nchunks != y->bufs[i].nchunks)
                return "buffer";
        for (uint32_t i = 0; i < x->nsteps; i++) {
            const cs_step_t *p = &x->steps[i], *q = &y->steps[i];
            if (p->kind != q->kind || p->op != q->op || p->chan != q->chan || p->peer != q->peer ||
                !cs__range_eq(p->src, q->src) || !cs__range_eq(p->dst, q->dst) ||
                p->ndeps != q->ndeps)
                return "step";
            if (p->ndeps > 0 && memcmp(x->deps + p->dep_off, y->deps + q->dep_off,
                                       p->ndeps * sizeof(uint32_t)) != 0)
                return "dependencies";
        }
    }
    return NULL;
}

#endif /* CS_TEST_SCHED_SAME_H */
