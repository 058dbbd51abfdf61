/*
 * cs_grow.h - the one growth rule of collstep's growable arrays.  Not a
 * public header.
 *
 * An array that grows by appending (steps of a file being read, links of a
 * trace, routes of the planner) keeps a pointer and a capacity in elements
 * and calls cs_grow before it writes element `need - 1`:
 *
 *     if (cs_grow(&t->links, &t->cap_links, t->nlinks + 1, sizeof(*t->links), 256))
 *         return fail(t, CS_ERR_NOMEM, "out of memory");
 *     t->links[t->nlinks++] = ...;
 *
 * The capacity doubles (from `first` for an empty array) until it holds
 * `need`, so n appends cost O(n) copies.  Arrays whose size is known before
 * they are filled allocate it once instead, and the simulator's per-rank
 * buffers, which start inside the rank's own record, keep their own rule.
 */
#ifndef CS_GROW_H
#define CS_GROW_H

#include <stddef.h>

#include "cs_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The slow path of cs_grow. */
int cs__grow(void *arrp, size_t *cap, size_t need, size_t esize, size_t first);

/* Make room for `need` elements of `esize` bytes in the array whose pointer
 * is *arrp (arrp is the address of that pointer, of any object pointer
 * type: `&t->links`) and whose capacity is *cap elements.  When need >
 * *cap the capacity becomes `first` (when it was 0; first >= 1) or *cap,
 * doubled until it is at least need, and the array is reallocated; the
 * elements already there are kept, the new ones are uninitialised.
 * CS_OK, or CS_ERR_NOMEM (realloc failed, or the bytes would not fit in a
 * size_t) with *arrp and *cap unchanged. */
static inline int cs_grow(void *arrp, size_t *cap, size_t need, size_t esize, size_t first)
{
    return need <= *cap ? CS_OK : cs__grow(arrp, cap, need, esize, first);
}

#ifdef __cplusplus
}
#endif

#endif /* CS_GROW_H */
