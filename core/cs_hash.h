/*
 * cs_hash.h - the string hash of collstep's open-addressing tables (link
 * names in traces/, host names in planner/): FNV-1a 64, the function
 * cs_sched_digest is built on.  Not a public header.
 */
#ifndef CS_HASH_H
#define CS_HASH_H

#include <stdint.h>

#define CS_FNV64_OFFSET 1469598103934665603ULL
#define CS_FNV64_PRIME 1099511628211ULL

static inline uint64_t cs_hash_str(const char *s)
{
    uint64_t h = CS_FNV64_OFFSET;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * CS_FNV64_PRIME;
    return h;
}

#endif /* CS_HASH_H */
