/*
 * tp_shm_ring.h - the single-producer single-consumer message ring of one
 * (sender, receiver) pair of the shared-memory transport.
 *
 * The ring is `ncells` cache-line cells (a power of two) in the receiver's
 * segment.  A message occupies ring_ncells(len) consecutive cells: a 16-byte
 * header in the first cell, then the payload, which runs on through the
 * next cells and wraps at the end of the ring.  Positions are free-running
 * 64-bit counters (cell = position mod ncells).
 *
 *   producer (sender), private tail and a cached copy of the consumer's head:
 *     room:   tail + need - head <= ncells (reload head, acquire, only when short)
 *     write payload and header, then flag := 1 (release); tail += need
 *   consumer (receiver), private head:
 *     flag of cell[head] == 1 (acquire) -> header and payload are visible
 *     read, then flag := 0 in every cell of the message, head += need,
 *     publish head (release)
 *
 * Clearing the flag word of every consumed cell (not only the first) is
 * what lets a message start in any cell: a cell that held payload on the
 * previous lap reads 0 until the producer publishes a header there.  Each
 * shared word has one writer (flag: producer sets, consumer clears only
 * after the message is consumed and before head moves past it), no locks,
 * no system calls.
 */
#ifndef TP_SHM_RING_H
#define TP_SHM_RING_H

#include <string.h>

#include "tp_shm.h"

static inline uint32_t ring_need(size_t len)
{
    const size_t first = SHM_CELL - SHM_HDR;
    return len <= first ? 1 : 1 + (uint32_t)((len - first + SHM_CELL - 1) / SHM_CELL);
}

static inline shm_cell_t *ring_cell(char *cells, uint32_t ncells, uint64_t pos)
{
    return (shm_cell_t *)(cells + (size_t)(pos & (ncells - 1)) * SHM_CELL);
}

/* Copy between a buffer and the ring's bytes from byte `at`, wrapping. */
static inline void ring_copy_in(char *cells, size_t rbytes, size_t at, const void *src,
                                size_t len)
{
    size_t n = rbytes - at;
    if (n >= len) {
        memcpy(cells + at, src, len);
    } else {
        memcpy(cells + at, src, n);
        memcpy(cells, (const char *)src + n, len - n);
    }
}

static inline void ring_copy_out(void *dst, const char *cells, size_t rbytes, size_t at,
                                 size_t len)
{
    size_t n = rbytes - at;
    if (n >= len) {
        memcpy(dst, cells + at, len);
    } else {
        memcpy(dst, cells + at, n);
        memcpy((char *)dst + n, cells, len - n);
    }
}

/* 1 when `need` cells are free for the producer. */
static inline int ring_room(shm_peer_t *p, uint32_t ncells, uint32_t need)
{
    if (p->tail + need - p->head_cache <= ncells)
        return 1;
    p->head_cache = __atomic_load_n(p->out_head, __ATOMIC_ACQUIRE);
    return p->tail + need - p->head_cache <= ncells;
}

/* Publish a message; 0 (nothing written) when the ring is full. */
static inline int ring_put(shm_peer_t *p, uint32_t ncells, uint32_t type, uint64_t tag,
                           const void *payload, size_t len)
{
    uint32_t need = ring_need(len);
    if (!ring_room(p, ncells, need))
        return 0;
    shm_cell_t *c = ring_cell(p->out_cells, ncells, p->tail);
    if (len)
        ring_copy_in(p->out_cells, (size_t)ncells * SHM_CELL,
                     (size_t)(p->tail & (ncells - 1)) * SHM_CELL + SHM_HDR, payload, len);
    c->len = (uint32_t)len;
    c->word = (uint64_t)type << SHM_TYPE_SHIFT | tag;
    __atomic_store_n(&c->flag, 1u, __ATOMIC_RELEASE);
    p->tail += need;
    return 1;
}

/* The message at the consumer's head, or NULL. */
static inline shm_cell_t *ring_peek(shm_peer_t *p, uint32_t ncells)
{
    shm_cell_t *c = ring_cell(p->in_cells, ncells, p->head);
    return __atomic_load_n(&c->flag, __ATOMIC_ACQUIRE) ? c : NULL;
}

/* Copy `len` payload bytes of the message at head (from payload byte 0). */
static inline void ring_read(shm_peer_t *p, uint32_t ncells, void *dst, size_t len)
{
    ring_copy_out(dst, p->in_cells, (size_t)ncells * SHM_CELL,
                  (size_t)(p->head & (ncells - 1)) * SHM_CELL + SHM_HDR, len);
}

/* Consume the message at head (payload length len). */
static inline void ring_pop(shm_peer_t *p, uint32_t ncells, size_t len)
{
    uint32_t need = ring_need(len);
    for (uint32_t i = 0; i < need; i++)
        __atomic_store_n(&ring_cell(p->in_cells, ncells, p->head + i)->flag, 0u,
                         __ATOMIC_RELAXED);
    p->head += need;
    __atomic_store_n(p->in_head, p->head, __ATOMIC_RELEASE);
}

#endif /* TP_SHM_RING_H */
