/*
 * cs_dtype.c - element types, operators, host reductions and test data.
 *
 * Contracts (see cs_dtype.h):
 *  - cs_reduce_fn returns NULL for an unknown (type, op); the returned
 *    function computes dst[i] = dst[i] op src[i] with non-overlapping
 *    buffers.  Float min/max follow `src < dst ? src : dst` (a NaN in dst
 *    is kept, a NaN in src is dropped), which is what SIMD min/max do.
 *  - Reduction loops are written over restrict pointers in blocks of a
 *    fixed trip count (CS__VB elements) followed by a scalar tail, so that
 *    even gcc's -O2 "very cheap" vectoriser turns the block into SIMD code
 *    (checked with -fopt-info-vec: float/int32 sum, min, max and prod use
 *    packed instructions).  half and bfloat16 go through float, one
 *    rounding per element (round to nearest even).
 *  - Conversions handle zero, subnormals, infinities and NaN (NaN stays
 *    NaN, quieted; payload bits that fit are kept).
 *
 * Test data.  Element i of rank r is "active" when r < 8, or when
 * (r + i) % m(r) == 0 with m(r) = 2^floor(log2 r) / 4 for r >= 8: every
 * octave of ranks [2^j, 2^(j+1)) has exactly 4 active ranks for each i, so
 * at most 8 + 4*13 = 60 ranks are active per element for P <= 2^16.
 * Values, with h a hash of (r, i):
 *   sum   active: +-1..4, inactive: 0    -> |any partial sum| <= 240
 *   prod  active r < 8: 2, -1 or 1; active r >= 8: -1 or 1; inactive: 1
 *                                        -> |any partial product| <= 2^8
 *   min   active: [-100, 0], inactive: [1, 100]
 *   max   active: [0, 100], inactive: [-100, -1]
 * Every partial result of any subset of ranks is therefore an integer that
 * half (|x| <= 2048) and bfloat16 (|x| <= 256) represent exactly, and the
 * expected result only depends on the active ranks (rank 0 is always
 * active), so it is computed in O(log P) per element.  Data-movement
 * collectives (allgather, broadcast, alltoall) should use min or max data:
 * every (rank, element) has its own value there, while sum data is mostly 0.
 */
#include "cs_dtype.h"

#include <math.h>
#include <string.h>
#include <strings.h>

/* ---- names --------------------------------------------------------------- */

static const char *const dt_names[CS_DT_COUNT] = {"float", "double", "half",
                                                  "bfloat16", "int32", "int64"};
static const size_t dt_sizes[CS_DT_COUNT] = {4, 8, 2, 2, 4, 8};
static const char *const op_names[CS_OP_COUNT] = {"sum", "prod", "min", "max"};

size_t cs_dtype_size(cs_dtype_t dt)
{
    return ((unsigned)dt < CS_DT_COUNT) ? dt_sizes[dt] : 0;
}

const char *cs_dtype_name(cs_dtype_t dt)
{
    return ((unsigned)dt < CS_DT_COUNT) ? dt_names[dt] : "unknown";
}

cs_dtype_t cs_dtype_parse(const char *s)
{
    static const struct {
        const char *name;
        cs_dtype_t dt;
    } alias[] = {
        {"float", CS_DT_F32},   {"float32", CS_DT_F32}, {"f32", CS_DT_F32},
        {"fp32", CS_DT_F32},    {"double", CS_DT_F64},  {"float64", CS_DT_F64},
        {"f64", CS_DT_F64},     {"fp64", CS_DT_F64},    {"half", CS_DT_F16},
        {"float16", CS_DT_F16}, {"f16", CS_DT_F16},     {"fp16", CS_DT_F16},
        {"bfloat16", CS_DT_BF16}, {"bf16", CS_DT_BF16}, {"int32", CS_DT_I32},
        {"int", CS_DT_I32},     {"i32", CS_DT_I32},     {"int32_t", CS_DT_I32},
        {"int64", CS_DT_I64},   {"i64", CS_DT_I64},     {"int64_t", CS_DT_I64},
        {"long", CS_DT_I64},
    };
    if (s == NULL)
        return CS_DT_COUNT;
    for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
        if (strcasecmp(s, alias[i].name) == 0)
            return alias[i].dt;
    return CS_DT_COUNT;
}

const char *cs_op_name(cs_op_t op)
{
    return ((unsigned)op < CS_OP_COUNT) ? op_names[op] : "unknown";
}

const char *cs_redop_text(cs_coll_t coll, cs_op_t op)
{
    return coll == CS_COLL_ALLREDUCE || coll == CS_COLL_REDUCE_SCATTER || coll == CS_COLL_REDUCE
               ? cs_op_name(op)
               : "none";
}

cs_op_t cs_op_parse(const char *s)
{
    if (s == NULL)
        return CS_OP_COUNT;
    for (int i = 0; i < CS_OP_COUNT; i++)
        if (strcasecmp(s, op_names[i]) == 0)
            return (cs_op_t)i;
    if (strcasecmp(s, "product") == 0 || strcasecmp(s, "mul") == 0)
        return CS_OP_PROD;
    if (strcasecmp(s, "add") == 0)
        return CS_OP_SUM;
    return CS_OP_COUNT;
}

/* ---- half and bfloat16 ----------------------------------------------------- */

static inline uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static inline float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

static inline float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) {
        /* zero or subnormal: m * 2^-24, exact in float */
        float v = (float)m * 0x1p-24f;
        return u2f(f2u(v) | sign);
    }
    if (e == 31)
        return u2f(sign | 0x7f800000u | (m << 13));
    return u2f(sign | ((e + 112u) << 23) | (m << 13));
}

static inline uint16_t float_to_half(float f)
{
    uint32_t x = f2u(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u) /* inf or NaN (quieted, top payload bits kept) */
        return (uint16_t)(sign | (x > 0x7f800000u ? 0x7e00u | ((x >> 13) & 0x3ffu) : 0x7c00u));
    if (x >= 0x47800000u) /* >= 65536: overflow */
        return (uint16_t)(sign | 0x7c00u);
    if (x < 0x38800000u) { /* below 2^-14: half subnormal or zero */
        if (x < 0x33000000u) /* below 2^-25: rounds to zero */
            return sign;
        uint32_t e = x >> 23, m = (x & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e; /* 14..24 */
        uint32_t h = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (h & 1u)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = (x >> 13) - (112u << 10), rem = x & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++; /* a carry into the exponent is the right encoding, up to inf */
    return (uint16_t)(sign | h);
}

static inline float bf16_to_float(uint16_t h)
{
    return u2f((uint32_t)h << 16);
}

static inline uint16_t float_to_bf16(float f)
{
    uint32_t x = f2u(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x0040u); /* quiet NaN */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

float cs_half_to_float(uint16_t h)
{
    return half_to_float(h);
}

uint16_t cs_float_to_half(float f)
{
    return float_to_half(f);
}

float cs_bf16_to_float(uint16_t h)
{
    return bf16_to_float(h);
}

uint16_t cs_float_to_bf16(float f)
{
    return float_to_bf16(f);
}

/* ---- reductions ------------------------------------------------------------- */

#define CS__VB 16 /* elements per fixed-trip-count block */

#define CS__SUM(a, b) ((a) + (b))
#define CS__PROD(a, b) ((a) * (b))
#define CS__MIN(a, b) ((b) < (a) ? (b) : (a))
#define CS__MAX(a, b) ((b) > (a) ? (b) : (a))

/* Native types: dst = OP(dst, src). */
#define CS__NATIVE(T, tname, oname, OP)                                         \
    static void red_##tname##_##oname(void *restrict dv, const void *restrict sv, size_t n)        \
    {                                                                            \
        T *restrict d = dv;                                                      \
        const T *restrict s = sv;                                                \
        size_t i = 0;                                                            \
        for (; i + CS__VB <= n; i += CS__VB)                                     \
            for (size_t j = 0; j < CS__VB; j++)                                  \
                d[i + j] = OP(d[i + j], s[i + j]);                               \
        for (; i < n; i++)                                                       \
            d[i] = OP(d[i], s[i]);                                               \
    }

/* 16-bit floats through float, one rounding per element. */
#define CS__CONV16(tname, oname, OP, TOF, FROMF)                                 \
    static void red_##tname##_##oname(void *restrict dv, const void *restrict sv, size_t n)        \
    {                                                                            \
        uint16_t *restrict d = dv;                                               \
        const uint16_t *restrict s = sv;                                         \
        for (size_t i = 0; i < n; i++)                                           \
            d[i] = FROMF(OP(TOF(d[i]), TOF(s[i])));                              \
    }

/* Integer sum/prod wrap (computed unsigned: no undefined overflow). */
#define CS__NATIVE_INT(T, U, tname)                                              \
    static void red_##tname##_sum(void *restrict dv, const void *restrict sv, size_t n)            \
    {                                                                            \
        U *restrict d = dv;                                                      \
        const U *restrict s = sv;                                                \
        size_t i = 0;                                                            \
        for (; i + CS__VB <= n; i += CS__VB)                                     \
            for (size_t j = 0; j < CS__VB; j++)                                  \
                d[i + j] += s[i + j];                                            \
        for (; i < n; i++)                                                       \
            d[i] += s[i];                                                        \
    }                                                                            \
    static void red_##tname##_prod(void *restrict dv, const void *restrict sv, size_t n)           \
    {                                                                            \
        U *restrict d = dv;                                                      \
        const U *restrict s = sv;                                                \
        size_t i = 0;                                                            \
        for (; i + CS__VB <= n; i += CS__VB)                                     \
            for (size_t j = 0; j < CS__VB; j++)                                  \
                d[i + j] *= s[i + j];                                            \
        for (; i < n; i++)                                                       \
            d[i] *= s[i];                                                        \
    }                                                                            \
    CS__NATIVE(T, tname, min, CS__MIN)                                           \
    CS__NATIVE(T, tname, max, CS__MAX)

CS__NATIVE(float, f32, sum, CS__SUM)
CS__NATIVE(float, f32, prod, CS__PROD)
CS__NATIVE(float, f32, min, CS__MIN)
CS__NATIVE(float, f32, max, CS__MAX)
CS__NATIVE(double, f64, sum, CS__SUM)
CS__NATIVE(double, f64, prod, CS__PROD)
CS__NATIVE(double, f64, min, CS__MIN)
CS__NATIVE(double, f64, max, CS__MAX)
CS__NATIVE_INT(int32_t, uint32_t, i32)
CS__NATIVE_INT(int64_t, uint64_t, i64)
CS__CONV16(f16, sum, CS__SUM, half_to_float, float_to_half)
CS__CONV16(f16, prod, CS__PROD, half_to_float, float_to_half)
CS__CONV16(f16, min, CS__MIN, half_to_float, float_to_half)
CS__CONV16(f16, max, CS__MAX, half_to_float, float_to_half)
CS__CONV16(bf16, sum, CS__SUM, bf16_to_float, float_to_bf16)
CS__CONV16(bf16, prod, CS__PROD, bf16_to_float, float_to_bf16)
CS__CONV16(bf16, min, CS__MIN, bf16_to_float, float_to_bf16)
CS__CONV16(bf16, max, CS__MAX, bf16_to_float, float_to_bf16)

#define CS__ROW(t) {red_##t##_sum, red_##t##_prod, red_##t##_min, red_##t##_max}

cs_reduce_fn_t cs_reduce_fn(cs_dtype_t dt, cs_op_t op)
{
    static const cs_reduce_fn_t table[CS_DT_COUNT][CS_OP_COUNT] = {
        CS__ROW(f32), CS__ROW(f64), CS__ROW(f16), CS__ROW(bf16), CS__ROW(i32), CS__ROW(i64),
    };
    if ((unsigned)dt >= CS_DT_COUNT || (unsigned)op >= CS_OP_COUNT)
        return NULL;
    return table[dt][op];
}

/* ---- test data -------------------------------------------------------------- */

static inline uint32_t data_hash(int rank, uint64_t i)
{
    uint64_t z = (uint64_t)(uint32_t)rank * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull;
    z ^= z >> 31;
    z *= 0x94d049bb133111ebull;
    z ^= z >> 29;
    return (uint32_t)(z >> 32);
}

/* m(r) of the file comment, for r >= 8. */
static inline uint64_t active_period(int rank)
{
    uint32_t r = (uint32_t)rank;
    int lg = 31 - __builtin_clz(r);
    return (uint64_t)1 << (lg - 2);
}

static inline int is_active(int rank, uint64_t i)
{
    return rank < 8 || (((uint64_t)(uint32_t)rank + i) & (active_period(rank) - 1)) == 0;
}

static inline double value_of(cs_op_t op, int rank, uint64_t i, int act)
{
    uint32_t h = data_hash(rank, i);
    switch (op) {
    case CS_OP_SUM: {
        if (!act)
            return 0.0;
        int v = (int)(h % 8u) - 4; /* -4..3 -> -4..-1, 1..4 */
        return (double)(v >= 0 ? v + 1 : v);
    }
    case CS_OP_PROD:
        if (!act)
            return 1.0;
        if (rank < 8) {
            static const double v3[3] = {2.0, -1.0, 1.0};
            return v3[h % 3u];
        }
        return (h & 1u) ? -1.0 : 1.0;
    case CS_OP_MIN:
        return act ? -(double)(h % 101u) : 1.0 + (double)(h % 100u);
    case CS_OP_MAX:
        return act ? (double)(h % 101u) : -1.0 - (double)(h % 100u);
    default:
        return 0.0;
    }
}

static double input_value(cs_op_t op, int rank, uint64_t i)
{
    return value_of(op, rank, i, is_active(rank, i));
}

double cs_test_input(cs_dtype_t dt, cs_op_t op, int rank, uint64_t i)
{
    (void)dt; /* the values are exact in every type */
    return input_value(op, rank, i);
}

static inline double combine(cs_op_t op, double a, double b)
{
    switch (op) {
    case CS_OP_SUM:
        return a + b;
    case CS_OP_PROD:
        return a * b;
    case CS_OP_MIN:
        return b < a ? b : a;
    default:
        return b > a ? b : a;
    }
}

double cs_test_expected_reduced(cs_dtype_t dt, cs_op_t op, int nranks, uint64_t i)
{
    (void)dt;
    if (nranks <= 0)
        return 0.0;
    /* Only active ranks matter (see the file comment): enumerate them. */
    double acc = value_of(op, 0, i, 1);
    int first = nranks < 8 ? nranks : 8;
    for (int r = 1; r < first; r++)
        acc = combine(op, acc, value_of(op, r, i, 1));
    for (uint64_t lo = 8; lo < (uint64_t)nranks; lo <<= 1) {
        uint64_t m = lo >> 2, t = (m - (i & (m - 1))) & (m - 1);
        for (; t < lo && lo + t < (uint64_t)nranks; t += m)
            acc = combine(op, acc, value_of(op, (int)(lo + t), i, 1));
    }
    return acc;
}

static inline void store(cs_dtype_t dt, void *buf, uint64_t k, double v)
{
    switch (dt) {
    case CS_DT_F32:
        ((float *)buf)[k] = (float)v;
        break;
    case CS_DT_F64:
        ((double *)buf)[k] = v;
        break;
    case CS_DT_F16:
        ((uint16_t *)buf)[k] = float_to_half((float)v);
        break;
    case CS_DT_BF16:
        ((uint16_t *)buf)[k] = float_to_bf16((float)v);
        break;
    case CS_DT_I32:
        ((int32_t *)buf)[k] = (int32_t)v;
        break;
    case CS_DT_I64:
        ((int64_t *)buf)[k] = (int64_t)v;
        break;
    default:
        break;
    }
}

double cs_test_load(cs_dtype_t dt, const void *buf, uint64_t k)
{
    switch (dt) {
    case CS_DT_F32:
        return ((const float *)buf)[k];
    case CS_DT_F64:
        return ((const double *)buf)[k];
    case CS_DT_F16:
        return half_to_float(((const uint16_t *)buf)[k]);
    case CS_DT_BF16:
        return bf16_to_float(((const uint16_t *)buf)[k]);
    case CS_DT_I32:
        return ((const int32_t *)buf)[k];
    case CS_DT_I64:
        return (double)((const int64_t *)buf)[k];
    default:
        return NAN;
    }
}

void cs_test_fill(cs_dtype_t dt, cs_op_t op, void *buf, uint64_t n, int rank, uint64_t first)
{
    for (uint64_t k = 0; k < n; k++)
        store(dt, buf, k, input_value(op, rank, first + k));
}

/* Expected value of global element e in the out buffer of `rank`. */
static double expected_out(const cs_coll_desc_t *d, cs_dtype_t dt, cs_op_t op, uint64_t count,
                           int rank, uint64_t e)
{
    switch (d->coll) {
    case CS_COLL_ALLREDUCE:
    case CS_COLL_REDUCE_SCATTER:
    case CS_COLL_REDUCE:
        return cs_test_expected_reduced(dt, op, d->nranks, e);
    case CS_COLL_ALLGATHER:
        return input_value(op, (int)(e / count), e);
    case CS_COLL_BROADCAST:
        return input_value(op, d->root, e);
    case CS_COLL_ALLTOALL:
        return input_value(op, (int)(e / count), (uint64_t)rank * count + e % count);
    default:
        return NAN;
    }
}

uint64_t cs_test_compare(cs_dtype_t dt, const void *out, const double *want, uint64_t n,
                         uint64_t first, uint64_t *first_bad, double *max_abs_err)
{
    uint64_t wrong = 0, fb = CS_TEST_NO_INDEX;
    double maxerr = 0.0;
    for (uint64_t k = 0; k < n; k++) {
        double got = cs_test_load(dt, out, k);
        if (got == want[k])
            continue;
        double err = fabs(got - want[k]);
        if (isnan(err))
            err = INFINITY;
        if (err > maxerr)
            maxerr = err;
        if (wrong++ == 0)
            fb = first + k;
    }
    if (first_bad)
        *first_bad = fb;
    if (max_abs_err)
        *max_abs_err = maxerr;
    return wrong;
}

uint64_t cs_test_check_detail(const cs_coll_desc_t *desc, cs_dtype_t dt, cs_op_t op,
                              uint64_t count, int rank, const void *out, uint64_t out_first,
                              uint64_t out_n, uint64_t *first_bad, double *max_abs_err)
{
    enum { BLK = 512 };
    double want[BLK];
    uint64_t wrong = 0, first = CS_TEST_NO_INDEX;
    double maxerr = 0.0;
    size_t esz = cs_dtype_size(dt);
    if (desc->coll == CS_COLL_REDUCE && rank != desc->root)
        out_n = 0; /* no defined output */
    for (uint64_t k0 = 0; k0 < out_n; k0 += BLK) {
        uint64_t n = out_n - k0 < BLK ? out_n - k0 : BLK, fb;
        double me;
        for (uint64_t k = 0; k < n; k++)
            want[k] = expected_out(desc, dt, op, count, rank, out_first + k0 + k);
        uint64_t w = cs_test_compare(dt, (const unsigned char *)out + k0 * esz, want, n,
                                     out_first + k0, &fb, &me);
        if (w > 0 && wrong == 0)
            first = fb;
        wrong += w;
        maxerr = me > maxerr ? me : maxerr;
    }
    if (first_bad)
        *first_bad = first;
    if (max_abs_err)
        *max_abs_err = maxerr;
    return wrong;
}

uint64_t cs_test_check(const cs_coll_desc_t *desc, cs_dtype_t dt, cs_op_t op, uint64_t count,
                       int rank, const void *out, uint64_t out_first, uint64_t out_n)
{
    return cs_test_check_detail(desc, dt, op, count, rank, out, out_first, out_n, NULL, NULL);
}
