/*
 * cs_hash.h - the hashes of collstep's open-addressing tables and digests.
 * Not a public header.
 *
 *   cs_hash_str     FNV-1a 64 of a string (link names in traces/, host
 *                   names in planner/)
 *   cs_hash_mix64   a 64-bit finaliser for integer keys (routes, message
 *                   queues, link pointers)
 *   CS_FNV64_*      FNV's 64-bit constants, for the digests that fold in
 *                   whole words (cs_sched_digest, the GPU planner's copy
 *                   dependency sets, the digest of a run's schedules)
 *
 * The tables keep their entries in insertion order and use a hash only to
 * find them again: no output depends on the hash values, only the probe
 * lengths do.
 */
#ifndef CS_HASH_H
#define CS_HASH_H

#include <stdint.h>

#define CS_FNV64_OFFSET 0xcbf29ce484222325ULL /* 14695981039346656037 */
#define CS_FNV64_PRIME 0x100000001b3ULL       /* 2^40 + 2^8 + 0xb3 */

static inline uint64_t cs_hash_str(const char *s)
{
    uint64_t h = CS_FNV64_OFFSET;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * CS_FNV64_PRIME;
    return h;
}

/* SplitMix64's finaliser (Stafford's "Mix13" constants): every input bit
 * flips about half of the output bits, so the low bits a power-of-two table
 * keeps are spread even for keys that differ only in their high bits (a
 * (src << 32 | dst) pair) or only in their alignment (a pointer).  A
 * bijection: distinct keys never collide before the mask. */
static inline uint64_t cs_hash_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

#endif /* CS_HASH_H */
