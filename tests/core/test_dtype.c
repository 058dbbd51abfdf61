/* Element types: names, half/bfloat16 conversions (exhaustive), the 24
 * host reductions against a scalar reference, and the exactness of the
 * test data for P up to 2^16. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cs_dtype.h"
#include "cs_test.h"

static float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

static void test_names(void)
{
    for (int t = 0; t < CS_DT_COUNT; t++)
        CS_TEST_CHECK(cs_dtype_parse(cs_dtype_name((cs_dtype_t)t)) == (cs_dtype_t)t, "dtype %d", t);
    for (int o = 0; o < CS_OP_COUNT; o++)
        CS_TEST_CHECK(cs_op_parse(cs_op_name((cs_op_t)o)) == (cs_op_t)o, "op %d", o);
    CS_TEST_CHECK(cs_dtype_parse("fp16") == CS_DT_F16 && cs_dtype_parse("bf16") == CS_DT_BF16 &&
                      cs_dtype_parse("int") == CS_DT_I32 && cs_dtype_parse("float32") == CS_DT_F32,
                  "aliases");
    CS_TEST_CHECK(cs_dtype_parse("quad") == CS_DT_COUNT && cs_dtype_parse(NULL) == CS_DT_COUNT,
                  "unknown type");
    CS_TEST_CHECK(cs_op_parse("avg") == CS_OP_COUNT, "unknown op");
    CS_TEST_CHECK(cs_dtype_size(CS_DT_F16) == 2 && cs_dtype_size(CS_DT_I64) == 8 &&
                      cs_dtype_size(CS_DT_COUNT) == 0,
                  "sizes");
    CS_TEST_CHECK(strcmp(cs_dtype_name(CS_DT_BF16), "bfloat16") == 0, "bf16 name");
}

/* Round trip of every half, and rounding of the midpoints (ties to even)
 * and their neighbours between every pair of consecutive finite halves. */
static void test_half(void)
{
    int bad_trip = 0, bad_round = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = cs_half_to_float((uint16_t)h);
        uint16_t back = cs_float_to_half(f);
        if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu)) {
            bad_trip += !(isnan(f) && (back & 0x7c00u) == 0x7c00u && (back & 0x3ffu));
            continue;
        }
        bad_trip += back != h;
        uint32_t mag = h & 0x7fffu;
        if (mag >= 0x7bffu) /* 65504: its successor is inf */
            continue;
        float a = cs_half_to_float((uint16_t)h), b = cs_half_to_float((uint16_t)(h + 1));
        float mid = (a + b) / 2; /* exact: 12 significant bits */
        uint16_t even = (h & 1u) ? (uint16_t)(h + 1) : (uint16_t)h;
        bad_round += cs_float_to_half(mid) != even;
        bad_round += cs_float_to_half(nextafterf(mid, b)) != (uint16_t)(h + 1);
        bad_round += cs_float_to_half(nextafterf(mid, a)) != (uint16_t)h;
    }
    CS_TEST_CHECK(bad_trip == 0, "%d half round trips differ", bad_trip);
    CS_TEST_CHECK(bad_round == 0, "%d half roundings differ", bad_round);
    CS_TEST_CHECK(cs_float_to_half(65504.0f) == 0x7bff && cs_float_to_half(65519.0f) == 0x7bff &&
                      cs_float_to_half(65520.0f) == 0x7c00 && cs_float_to_half(1e10f) == 0x7c00 &&
                      cs_float_to_half(-INFINITY) == 0xfc00,
                  "overflow");
    CS_TEST_CHECK(cs_float_to_half(0x1p-25f) == 0 && cs_float_to_half(0x1.000002p-25f) == 1 &&
                      cs_float_to_half(-0x1p-24f) == 0x8001 && cs_float_to_half(1e-30f) == 0 &&
                      cs_float_to_half(-0.0f) == 0x8000,
                  "underflow and subnormals");
    CS_TEST_CHECK(cs_half_to_float(0x3c00) == 1.0f && cs_half_to_float(0x0001) == 0x1p-24f &&
                      cs_half_to_float(0x0400) == 0x1p-14f && isinf(cs_half_to_float(0x7c00)),
                  "known encodings");
    CS_TEST_CHECK(isnan(cs_half_to_float(cs_float_to_half(NAN))), "nan stays nan");
    CS_TEST_CHECK(cs_float_to_half(u2f(0x7f800001u)) != 0x7c00, "signalling nan is not inf");
#ifdef __FLT16_MAX__
    /* Cross-check against the compiler's own conversion over many floats. */
    int bad_cc = 0;
    for (uint64_t u = 0; u < 0x100000000ull; u += 4099) {
        float f = u2f((uint32_t)u);
        if (isnan(f))
            continue;
        _Float16 c = (_Float16)f;
        uint16_t cb;
        memcpy(&cb, &c, sizeof(cb));
        bad_cc += cb != cs_float_to_half(f);
    }
    CS_TEST_CHECK(bad_cc == 0, "%d conversions differ from _Float16", bad_cc);
#endif
}

static void test_bf16(void)
{
    int bad_trip = 0, bad_round = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = cs_bf16_to_float((uint16_t)h);
        if (isnan(f)) {
            bad_trip += !isnan(cs_bf16_to_float(cs_float_to_bf16(f)));
            continue;
        }
        bad_trip += cs_float_to_bf16(f) != h;
        if ((h & 0x7fffu) >= 0x7f7fu)
            continue;
        float a = f, b = cs_bf16_to_float((uint16_t)(h + 1));
        float mid = u2f(((uint32_t)h << 16) | 0x8000u); /* exact midpoint */
        uint16_t even = (h & 1u) ? (uint16_t)(h + 1) : (uint16_t)h;
        bad_round += cs_float_to_bf16(mid) != even;
        bad_round += cs_float_to_bf16(nextafterf(mid, b)) != (uint16_t)(h + 1);
        bad_round += cs_float_to_bf16(nextafterf(mid, a)) != (uint16_t)h;
    }
    CS_TEST_CHECK(bad_trip == 0, "%d bf16 round trips differ", bad_trip);
    CS_TEST_CHECK(bad_round == 0, "%d bf16 roundings differ", bad_round);
    CS_TEST_CHECK(cs_float_to_bf16(1.0f) == 0x3f80 && cs_float_to_bf16(u2f(0x3f808000u)) == 0x3f80 &&
                      cs_float_to_bf16(u2f(0x3f818000u)) == 0x3f82 &&
                      cs_float_to_bf16(u2f(0x3f808001u)) == 0x3f81,
                  "bf16 ties to even");
    CS_TEST_CHECK(cs_float_to_bf16(u2f(0x7f7fffffu)) == 0x7f80, "max float rounds to inf");
    CS_TEST_CHECK(isnan(cs_bf16_to_float(cs_float_to_bf16(u2f(0x7f800001u)))),
                  "low-payload nan stays nan");
    CS_TEST_CHECK(cs_float_to_bf16(u2f(0x00010000u)) == 0x0001, "subnormal kept");
}

/* ---- reductions against a scalar reference ---- */

static double ref_op(cs_op_t op, double a, double b)
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

static void put(cs_dtype_t dt, void *buf, size_t k, double v)
{
    switch (dt) {
    case CS_DT_F32: ((float *)buf)[k] = (float)v; break;
    case CS_DT_F64: ((double *)buf)[k] = v; break;
    case CS_DT_F16: ((uint16_t *)buf)[k] = cs_float_to_half((float)v); break;
    case CS_DT_BF16: ((uint16_t *)buf)[k] = cs_float_to_bf16((float)v); break;
    case CS_DT_I32: ((int32_t *)buf)[k] = (int32_t)v; break;
    default: ((int64_t *)buf)[k] = (int64_t)v; break;
    }
}

static void test_reductions(void)
{
    enum { N = 203 }; /* not a multiple of any vector width */
    static unsigned char d[N * 8], s[N * 8], d0[N * 8];
    for (int t = 0; t < CS_DT_COUNT; t++) {
        for (int o = 0; o < CS_OP_COUNT; o++) {
            cs_dtype_t dt = (cs_dtype_t)t;
            cs_op_t op = (cs_op_t)o;
            cs_reduce_fn_t fn = cs_reduce_fn(dt, op);
            CS_TEST_CHECK(fn != NULL, "%s/%s", cs_dtype_name(dt), cs_op_name(op));
            if (!fn)
                continue;
            for (size_t k = 0; k < N; k++) {
                /* values exact in every type; a few fractions for the floats */
                double a = (double)((int)((k * 37 + 11 * (size_t)o) % 23) - 11);
                double b = (double)((int)((k * 53 + 5) % 19) - 9);
                if (t <= CS_DT_BF16 && k % 7 == 0)
                    a += 0.5;
                put(dt, d, k, a);
                put(dt, s, k, b);
            }
            memcpy(d0, d, sizeof(d));
            for (size_t n = 0; n <= N; n += (n < 40 ? 1 : 41)) {
                memcpy(d, d0, sizeof(d));
                fn(d, s, n);
                int bad = 0;
                for (size_t k = 0; k < N; k++) {
                    double want = k < n ? ref_op(op, cs_test_load(dt, d0, k), cs_test_load(dt, s, k))
                                        : cs_test_load(dt, d0, k);
                    /* the reference result is exact in every type here */
                    bad += cs_test_load(dt, d, k) != want;
                }
                CS_TEST_CHECK(bad == 0, "%s/%s n=%zu: %d wrong", cs_dtype_name(dt), cs_op_name(op),
                              n, bad);
            }
        }
    }
    CS_TEST_CHECK(cs_reduce_fn(CS_DT_COUNT, CS_OP_SUM) == NULL &&
                      cs_reduce_fn(CS_DT_F32, CS_OP_COUNT) == NULL,
                  "unknown type/op");
    /* half sum rounds once per element: 2048 + 1 = 2048 (tie to even), 2048 + 3 = 2052 */
    uint16_t hd[2] = {cs_float_to_half(2048), cs_float_to_half(2048)};
    uint16_t hs[2] = {cs_float_to_half(1), cs_float_to_half(3)};
    cs_reduce_fn(CS_DT_F16, CS_OP_SUM)(hd, hs, 2);
    CS_TEST_CHECK(cs_half_to_float(hd[0]) == 2048 && cs_half_to_float(hd[1]) == 2052, "half rounding");
    /* integer sum wraps instead of being undefined */
    int32_t id = INT32_MAX, is = 1;
    cs_reduce_fn(CS_DT_I32, CS_OP_SUM)(&id, &is, 1);
    CS_TEST_CHECK(id == INT32_MIN, "int32 wraps");
}

/* ---- test data ---- */

static int exact_in(cs_dtype_t dt, double v)
{
    if (dt == CS_DT_F16)
        return cs_half_to_float(cs_float_to_half((float)v)) == v;
    if (dt == CS_DT_BF16)
        return cs_bf16_to_float(cs_float_to_bf16((float)v)) == v;
    return v == floor(v) && fabs(v) < 2147483648.0;
}

static void test_data(void)
{
    static const int Ps[] = {1, 2, 3, 64, 1536, 65536};
    for (size_t pi = 0; pi < sizeof(Ps) / sizeof(Ps[0]); pi++) {
        int P = Ps[pi];
        for (int o = 0; o < CS_OP_COUNT; o++) {
            cs_op_t op = (cs_op_t)o;
            int bad = 0, bound_bad = 0, inexact = 0;
            uint64_t nel = P >= 1536 ? 64 : 300;
            for (uint64_t i = 0; i < nel; i++) {
                /* reduce in rank order and in reverse, and track the bound
                 * on any partial result (sum of |v|, product of |v|) */
                double fwd = cs_test_input(CS_DT_F32, op, 0, i);
                double rev = cs_test_input(CS_DT_F32, op, P - 1, i);
                double mag = op == CS_OP_PROD ? 1.0 : 0.0;
                for (int r = 0; r < P; r++) {
                    double v = cs_test_input(CS_DT_F32, op, r, i);
                    double w = cs_test_input(CS_DT_F32, op, P - 1 - r, i);
                    if (r > 0) {
                        fwd = ref_op(op, fwd, v);
                        rev = ref_op(op, rev, w);
                    }
                    mag = op == CS_OP_PROD ? mag * fabs(v) : op == CS_OP_SUM ? mag + fabs(v)
                                                                            : fmax(mag, fabs(v));
                    inexact += v != floor(v);
                }
                double want = cs_test_expected_reduced(CS_DT_F32, op, P, i);
                bad += fwd != want || rev != want;
                bound_bad += mag > 256.0;
                for (int t = 0; t < CS_DT_COUNT; t++)
                    inexact += !exact_in((cs_dtype_t)t, want);
            }
            CS_TEST_CHECK(bad == 0, "P=%d %s: %d elements differ from the expected", P,
                          cs_op_name(op), bad);
            CS_TEST_CHECK(bound_bad == 0, "P=%d %s: %d elements exceed the bound 256", P,
                          cs_op_name(op), bound_bad);
            CS_TEST_CHECK(inexact == 0, "P=%d %s: inexact values", P, cs_op_name(op));
        }
    }
    /* fill agrees with input and converts exactly; sum data is not trivial */
    for (int t = 0; t < CS_DT_COUNT; t++) {
        unsigned char buf[64 * 8];
        int bad = 0, nonzero = 0;
        cs_test_fill((cs_dtype_t)t, CS_OP_SUM, buf, 64, 5, 1000);
        for (int k = 0; k < 64; k++) {
            double v = cs_test_load((cs_dtype_t)t, buf, (uint64_t)k);
            bad += v != cs_test_input((cs_dtype_t)t, CS_OP_SUM, 5, 1000 + (uint64_t)k);
            nonzero += v != 0;
        }
        CS_TEST_CHECK(bad == 0 && nonzero > 32, "fill %s: bad %d nonzero %d",
                      cs_dtype_name((cs_dtype_t)t), bad, nonzero);
    }
    /* every large rank contributes to some elements */
    int hits = 0;
    for (uint64_t i = 0; i < 20000; i++)
        hits += cs_test_input(CS_DT_F32, CS_OP_SUM, 12345, i) != 0;
    CS_TEST_CHECK(hits > 0 && hits < 20000, "rank 12345 contributes to %d of 20000", hits);
}

/* cs_test_check for each collective on hand-made outputs. */
static void test_check(void)
{
    enum { P = 3, COUNT = 5 };
    double buf[P * COUNT];
    cs_coll_desc_t d = {CS_COLL_ALLGATHER, P, 0, 0};
    for (int q = 0; q < P; q++)
        cs_test_fill(CS_DT_F64, CS_OP_MAX, buf + q * COUNT, COUNT, q, (uint64_t)q * COUNT);
    CS_TEST_CHECK(cs_test_check(&d, CS_DT_F64, CS_OP_MAX, COUNT, 1, buf, 0, P * COUNT) == 0,
                  "allgather right");
    buf[7] += 1;
    uint64_t first = 0;
    double err = 0;
    CS_TEST_CHECK(cs_test_check_detail(&d, CS_DT_F64, CS_OP_MAX, COUNT, 1, buf, 0, P * COUNT,
                                       &first, &err) == 1 &&
                      first == 7 && err == 1.0,
                  "allgather one wrong: first %llu err %g", (unsigned long long)first, err);
    /* alltoall: out block q of rank 2 = rank q's input block 2 */
    d.coll = CS_COLL_ALLTOALL;
    for (int q = 0; q < P; q++)
        cs_test_fill(CS_DT_F64, CS_OP_MIN, buf + q * COUNT, COUNT, q, 2 * COUNT);
    CS_TEST_CHECK(cs_test_check(&d, CS_DT_F64, CS_OP_MIN, COUNT, 2, buf, 0, P * COUNT) == 0,
                  "alltoall right");
    CS_TEST_CHECK(cs_test_check(&d, CS_DT_F64, CS_OP_MIN, COUNT, 1, buf, 0, P * COUNT) > 0,
                  "alltoall of another rank is wrong");
    /* reduce-scatter: rank 1's out is block 1 of the reduction */
    d.coll = CS_COLL_REDUCE_SCATTER;
    for (int k = 0; k < COUNT; k++)
        buf[k] = cs_test_expected_reduced(CS_DT_F64, CS_OP_SUM, P, COUNT + (uint64_t)k);
    CS_TEST_CHECK(cs_test_check(&d, CS_DT_F64, CS_OP_SUM, COUNT, 1, buf, COUNT, COUNT) == 0,
                  "reduce-scatter right");
    /* broadcast from root 2; reduce: only the root is checked */
    d.coll = CS_COLL_BROADCAST;
    d.root = 2;
    cs_test_fill(CS_DT_F64, CS_OP_MAX, buf, COUNT, 2, 0);
    CS_TEST_CHECK(cs_test_check(&d, CS_DT_F64, CS_OP_MAX, COUNT, 0, buf, 0, COUNT) == 0,
                  "broadcast right");
    d.coll = CS_COLL_REDUCE;
    CS_TEST_CHECK(cs_test_check(&d, CS_DT_F64, CS_OP_MAX, COUNT, 0, buf, 0, COUNT) == 0 &&
                      cs_test_check(&d, CS_DT_F64, CS_OP_MAX, COUNT, 2, buf, 0, COUNT) > 0,
                  "reduce: non-root unchecked, root checked");
    float nanv = NAN;
    d.coll = CS_COLL_ALLREDUCE;
    CS_TEST_CHECK(cs_test_check_detail(&d, CS_DT_F32, CS_OP_SUM, 1, 0, &nanv, 0, 1, &first, &err) ==
                          1 &&
                      isinf(err),
                  "nan is wrong");
}

int main(void)
{
    test_names();
    test_half();
    test_bf16();
    test_reductions();
    test_data();
    test_check();
    return cs_test_finish();
}
