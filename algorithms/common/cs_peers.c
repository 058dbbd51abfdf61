/* cs_peers.c - shared peer arithmetic (see cs_peers.h). */
#include "cs_peers.h"

int cs__log2_floor(uint64_t n)
{
    int l = 0;
    while (n > 1) {
        n >>= 1;
        l++;
    }
    return l;
}

int cs__log2_ceil(uint64_t n)
{
    int l = cs__log2_floor(n);
    return (n > 1 && !cs__is_pow2(n)) ? l + 1 : l;
}

uint64_t cs__pow2_floor(uint64_t n)
{
    return n == 0 ? 0 : (uint64_t)1 << cs__log2_floor(n);
}

cs__fold_t cs__fold_make(int n)
{
    cs__fold_t f;
    f.n = n;
    f.n2 = (int)cs__pow2_floor((uint64_t)n);
    f.rem = n - f.n2;
    return f;
}

int cs__fold_virt(const cs__fold_t *f, int m)
{
    return m < 2 * f->rem ? m / 2 : m - f->rem;
}

int cs__fold_is_extra(const cs__fold_t *f, int m)
{
    return m < 2 * f->rem && (m & 1);
}

int cs__fold_first(const cs__fold_t *f, int v)
{
    return v < f->rem ? 2 * v : v + f->rem;
}

int cs__fold_end(const cs__fold_t *f, int v)
{
    return v < f->rem ? 2 * v + 2 : v + f->rem + 1;
}

long cs__radix_stride(const int *dims, int t)
{
    long s = 1;
    for (int i = 0; i < t; i++)
        s *= dims[i];
    return s;
}

void cs__radix_coords(int rank, const int *dims, int ndims, int *coord)
{
    long r = rank;
    for (int t = 0; t < ndims; t++) {
        coord[t] = (int)(r % dims[t]);
        r /= dims[t];
    }
}

void cs__radix_group(int rank, const int *dims, int t, int *out)
{
    long stride = cs__radix_stride(dims, t);
    int c = (int)((rank / stride) % dims[t]);
    long first = rank - (long)c * stride;
    for (int m = 0; m < dims[t]; m++)
        out[m] = (int)(first + (long)m * stride);
}

void cs__factor_square(int P, int *x, int *y)
{
    int best = 1;
    for (int a = 1; (long)a * a <= P; a++)
        if (P % a == 0)
            best = a;
    *x = best;
    *y = P / best;
}
