/*
 * tp_util.c - pools, FIFOs, the completion ring and the unexpected-message
 * pool shared by the transports (tp_util.h).
 */
#include "tp_util.h"

#include <stdlib.h>
#include <string.h>

#include "cs_status.h"

int cs_tp_pool_init(cs_tp_pool_t *p, int32_t n)
{
    memset(p, 0, sizeof(*p));
    p->free = -1;
    if (n < 1)
        return CS_ERR_INVAL;
    p->next = malloc(sizeof(*p->next) * (size_t)n);
    p->gen = calloc((size_t)n, sizeof(*p->gen));
    if (!p->next || !p->gen) {
        cs_tp_pool_fini(p);
        return CS_ERR_NOMEM;
    }
    for (int32_t i = 0; i < n; i++)
        p->next[i] = i + 1 < n ? i + 1 : -1;
    p->n = p->nfree = n;
    p->free = 0;
    return CS_OK;
}

void cs_tp_pool_fini(cs_tp_pool_t *p)
{
    free(p->next);
    free(p->gen);
    p->next = NULL;
    p->gen = NULL;
    p->n = p->nfree = 0;
    p->free = -1;
}

int32_t *cs_tp_links(int32_t n)
{
    int32_t *l = malloc(sizeof(*l) * (size_t)(n > 0 ? n : 1));
    for (int32_t i = 0; l && i < n; i++)
        l[i] = -1;
    return l;
}

int cs_tp_fifo_remove(cs_tp_fifo_t *f, int32_t *next, int32_t i)
{
    for (int32_t prev = -1, k = f->head; k >= 0; prev = k, k = next[k])
        if (k == i) {
            cs_tp_fifo_unlink(f, next, prev, k);
            return 1;
        }
    return 0;
}

static uint64_t key_of(const void *items, size_t stride, size_t off, int32_t i)
{
    uint64_t k;
    memcpy(&k, (const char *)items + (size_t)i * stride + off, sizeof(k));
    return k;
}

int32_t cs_tp_fifo_find(const cs_tp_fifo_t *f, const int32_t *next, const void *items,
                        size_t stride, size_t off, uint64_t key)
{
    for (int32_t k = f->head; k >= 0; k = next[k])
        if (key_of(items, stride, off, k) == key)
            return k;
    return -1;
}

int32_t cs_tp_fifo_take(cs_tp_fifo_t *f, int32_t *next, const void *items, size_t stride,
                        size_t off, uint64_t key)
{
    for (int32_t prev = -1, k = f->head; k >= 0; prev = k, k = next[k])
        if (key_of(items, stride, off, k) == key) {
            cs_tp_fifo_unlink(f, next, prev, k);
            return k;
        }
    return -1;
}

void cs_tp_fifo_release(cs_tp_fifo_t *f, cs_tp_pool_t *p)
{
    for (int32_t k = f->head; k >= 0;) {
        int32_t n = p->next[k];
        cs_tp_pool_put(p, k);
        k = n;
    }
    *f = CS_TP_FIFO_EMPTY;
}

int cs_tp_ring_init(cs_tp_ring_t *r, uint32_t n)
{
    uint32_t cap = 1;
    while (cap < n)
        cap <<= 1;
    memset(r, 0, sizeof(*r));
    r->slot = calloc(cap, sizeof(*r->slot));
    r->mask = cap - 1;
    return r->slot ? CS_OK : CS_ERR_NOMEM;
}

void cs_tp_ring_fini(cs_tp_ring_t *r)
{
    free(r->slot);
    r->slot = NULL;
}

int cs_tp_unex_init(cs_tp_unex_t *u, int32_t nrecs, int32_t nslots, size_t slot_bytes)
{
    memset(u, 0, sizeof(*u));
    int st = cs_tp_pool_init(&u->recs, nrecs);
    if (st != CS_OK)
        return st;
    if (nslots < 1 || slot_bytes < 1) {
        cs_tp_unex_fini(u);
        return CS_ERR_INVAL;
    }
    u->data = malloc((size_t)nslots * slot_bytes);
    u->free_slot = malloc(sizeof(*u->free_slot) * (size_t)nslots);
    if (!u->data || !u->free_slot) {
        cs_tp_unex_fini(u);
        return CS_ERR_NOMEM;
    }
    u->slot_bytes = slot_bytes;
    u->nslots = u->nfree = nslots;
    for (int32_t i = 0; i < nslots; i++) /* slot 0 on top */
        u->free_slot[i] = nslots - 1 - i;
    return CS_OK;
}

void cs_tp_unex_fini(cs_tp_unex_t *u)
{
    cs_tp_pool_fini(&u->recs);
    free(u->data);
    free(u->free_slot);
    u->data = NULL;
    u->free_slot = NULL;
    u->nslots = u->nfree = 0;
}
