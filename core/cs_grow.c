/*
 * cs_grow.c - the slow path of cs_grow (cs_grow.h): the doubled capacity,
 * checked for overflow, and the reallocation.
 */
#include "cs_grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int cs__grow(void *arrp, size_t *cap, size_t need, size_t esize, size_t first)
{
    size_t nc = *cap ? *cap : (first ? first : 1);
    while (nc < need) {
        if (nc > SIZE_MAX / 2)
            return CS_ERR_NOMEM;
        nc *= 2;
    }
    if (esize != 0 && nc > SIZE_MAX / esize)
        return CS_ERR_NOMEM;
    /* The array's pointer is read and written as bytes, so that any
     * object pointer type can be passed (all have one representation on
     * the platforms collstep supports). */
    void *old;
    memcpy(&old, arrp, sizeof(old));
    void *nv = realloc(old, nc * esize);
    if (nv == NULL)
        return CS_ERR_NOMEM;
    memcpy(arrp, &nv, sizeof(nv));
    *cap = nc;
    return CS_OK;
}
