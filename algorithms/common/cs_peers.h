/*
 * cs_peers.h - shared peer arithmetic for algorithm generators.
 *
 * Everything here is pure integer arithmetic on rank numbers; nothing
 * allocates.
 *
 *  - powers of two: floor/ceil log2, largest power of two <= n;
 *  - ring neighbours inside a group of n members;
 *  - the "fold" of a non-power-of-two group onto n2 = 2^floor(log2 n)
 *    virtual members (the standard handling of the rem = n - n2 extra
 *    members): members 2i and 2i+1 (i < rem) form virtual member i, member
 *    m >= 2*rem is virtual member m - rem.  Consecutive virtual members own
 *    consecutive members, so the union of an aligned block of virtual
 *    members is a contiguous run of members;
 *  - mixed-radix decompositions of a rank (tier coordinates, innermost
 *    first) and the group of a rank in one tier;
 *  - factorizations (the most square X*Y = P).
 *
 * Contracts: arguments are assumed valid (n >= 1, 0 <= m < n); the
 * functions never fail.
 */
#ifndef CS_PEERS_H
#define CS_PEERS_H

#include <stdint.h>

/* floor(log2 n) for n >= 1; 0 for n <= 1. */
int cs__log2_floor(uint64_t n);
/* ceil(log2 n) for n >= 1 (0 for n = 1). */
int cs__log2_ceil(uint64_t n);
/* Largest power of two <= n (n >= 1). */
uint64_t cs__pow2_floor(uint64_t n);
static inline int cs__is_pow2(uint64_t n)
{
    return n != 0 && (n & (n - 1)) == 0;
}

/* Ring neighbours of member m in a group of n: (m + 1) % n, (m - 1) mod n,
 * and (m + d) mod n for any signed d. */
static inline int cs__ring_add(int m, long d, int n)
{
    long x = ((long)m + d) % n;
    return (int)(x < 0 ? x + n : x);
}
static inline int cs__ring_next(int m, int n)
{
    return cs__ring_add(m, 1, n);
}
static inline int cs__ring_prev(int m, int n)
{
    return cs__ring_add(m, -1, n);
}

/* Fold of a group of n members onto a power of two (see above). */
typedef struct cs__fold {
    int n;   /* members */
    int n2;  /* virtual members: largest power of two <= n */
    int rem; /* extra members: n - n2 */
} cs__fold_t;

cs__fold_t cs__fold_make(int n);
/* Virtual member of member m (the extra member 2i+1 maps to i as well). */
int cs__fold_virt(const cs__fold_t *f, int m);
/* 1 when member m is an extra member (2i+1, i < rem) that sits out the
 * power-of-two part. */
int cs__fold_is_extra(const cs__fold_t *f, int m);
/* First member of virtual member v (the one that takes part), and one past
 * its last member. */
int cs__fold_first(const cs__fold_t *f, int v);
int cs__fold_end(const cs__fold_t *f, int v);

/* Tier coordinates of `rank` for dims[0..ndims) (innermost first,
 * product = P): coord[t] = (rank / stride_t) % dims[t] with stride_t the
 * product of dims[0..t). */
void cs__radix_coords(int rank, const int *dims, int ndims, int *coord);
/* Stride of tier t (product of dims[0..t)). */
long cs__radix_stride(const int *dims, int t);
/* Member ranks of the tier-t group of `rank`, in coordinate order:
 * out[m] = rank + (m - coord_t) * stride_t, m in [0, dims[t]). */
void cs__radix_group(int rank, const int *dims, int t, int *out);

/* The most square factorization P = x * y with x <= y (x = 1 for P prime). */
void cs__factor_square(int P, int *x, int *y);

/* Boundaries of piece q of p of the half-open range [a, b):
 * a + (b - a) * q / p (q in [0, p]). */
static inline uint32_t cs__split(uint32_t a, uint32_t b, uint32_t p, uint32_t q)
{
    return a + (uint32_t)(((uint64_t)(b - a) * q) / p);
}

#endif /* CS_PEERS_H */
