/* core/cs_fit: the alpha-beta fits of collstep calibrate.
 *
 * Synthetic sweeps (1 B to 64 MiB, factor 2, as calibrate's default) of
 * known alpha and beta: an exact line is recovered to rounding, a line
 * with +-1 % deterministic noise within 1.5 %, two protocols (eager /
 * rendezvous) give two pieces with the break at the first rendezvous size
 * and each piece's parameters, a time without slope gives beta infinite,
 * a line that passes below the origin (a shaper's burst) keeps its slope
 * with alpha 0 and the intercept as its burst credit.
 * Degenerate inputs (no points, one point, one size, a time that is zero,
 * negative or not a number, unsorted sizes for the piecewise fit) return
 * CS_ERR_INVAL.  Quantiles interpolate between order statistics. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cs_fit.h"
#include "cs_test.h"

#define NMAX 40

static int sweep(uint64_t *x)
{
    int n = 0;
    for (uint64_t s = 1; s <= (64u << 20); s *= 2)
        x[n++] = s;
    return n;
}

static double rel(double a, double b)
{
    return fabs(a - b) / fabs(b);
}

/* +-1 % of pseudo-random noise, the same on every run */
static double noise(int i)
{
    uint32_t h = (uint32_t)i * 2654435761u;
    h ^= h >> 13;
    return ((double)(h % 2001) / 1000.0 - 1.0) * 0.01;
}

static void exact_line(void)
{
    uint64_t x[NMAX];
    double t[NMAX];
    int n = sweep(x);
    const double alpha = 12e-6, beta = 1.25e9;
    for (int i = 0; i < n; i++)
        t[i] = alpha + (double)x[i] / beta;
    cs_fit_line_t l;
    CS_TEST_CHECK(cs_fit_line(x, t, n, &l) == CS_OK, "exact line refused");
    CS_TEST_CHECK(rel(l.alpha, alpha) < 1e-9, "alpha %.9g, want %.9g", l.alpha, alpha);
    CS_TEST_CHECK(rel(l.beta, beta) < 1e-9, "beta %.9g, want %.9g", l.beta, beta);
    CS_TEST_CHECK(l.rms_pct < 1e-6 && l.max_pct < 1e-6, "residuals %g / %g %%", l.rms_pct,
                  l.max_pct);
    CS_TEST_CHECK(l.npoints == n && l.lo == 1 && l.hi == (64u << 20), "range %llu..%llu, %d points",
                  (unsigned long long)l.lo, (unsigned long long)l.hi, l.npoints);
    cs_fit_piecewise_t p;
    CS_TEST_CHECK(cs_fit_piecewise(x, t, n, &p) == CS_OK, "exact line refused (piecewise)");
    CS_TEST_CHECK(p.npieces == 1, "a single line split in %d pieces", p.npieces);
    CS_TEST_CHECK(cs_fit_piece_for(&p, 1u << 30) == &p.piece[0], "piece for a large size");
    CS_TEST_CHECK(rel(p.piece[0].beta, beta) < 1e-9, "piecewise beta %.9g", p.piece[0].beta);
}

static void noisy_line(void)
{
    uint64_t x[NMAX];
    double t[NMAX];
    int n = sweep(x);
    const double alpha = 30e-6, beta = 25e6; /* a shaped 200 Mbit/s link */
    for (int i = 0; i < n; i++)
        t[i] = (alpha + (double)x[i] / beta) * (1 + noise(i));
    cs_fit_line_t l;
    CS_TEST_CHECK(cs_fit_line(x, t, n, &l) == CS_OK, "noisy line refused");
    CS_TEST_CHECK(rel(l.alpha, alpha) < 0.015, "alpha %.4g us, want %.4g", l.alpha * 1e6,
                  alpha * 1e6);
    CS_TEST_CHECK(rel(l.beta, beta) < 0.015, "beta %.4g, want %.4g", l.beta, beta);
    CS_TEST_CHECK(l.max_pct <= 2.0 && l.rms_pct <= 1.0, "residuals rms %.3f max %.3f %%",
                  l.rms_pct, l.max_pct);
}

/* eager up to 64 KiB (alpha 4 us, 5 GB/s), rendezvous above (alpha 60 us,
 * 1 GB/s): two pieces, break at 128 KiB */
static int two_protocols(void)
{
    uint64_t x[NMAX];
    double t[NMAX];
    int n = sweep(x);
    for (int i = 0; i < n; i++)
        t[i] = x[i] <= 65536 ? 4e-6 + (double)x[i] / 5e9 : 60e-6 + (double)x[i] / 1e9;
    cs_fit_piecewise_t p;
    CS_TEST_CHECK(cs_fit_piecewise(x, t, n, &p) == CS_OK, "two protocols refused");
    CS_TEST_REQUIRE(p.npieces == 2, "%d pieces, want 2", p.npieces);
    CS_TEST_CHECK(p.brk == 131072, "break at %llu, want 131072", (unsigned long long)p.brk);
    CS_TEST_CHECK(rel(p.piece[0].alpha, 4e-6) < 1e-6 && rel(p.piece[0].beta, 5e9) < 1e-6,
                  "small piece %.4g us %.4g B/s", p.piece[0].alpha * 1e6, p.piece[0].beta);
    CS_TEST_CHECK(rel(p.piece[1].alpha, 60e-6) < 1e-6 && rel(p.piece[1].beta, 1e9) < 1e-6,
                  "large piece %.4g us %.4g B/s", p.piece[1].alpha * 1e6, p.piece[1].beta);
    CS_TEST_CHECK(p.piece[0].hi == 65536 && p.piece[1].lo == 131072, "pieces %llu.. / ..%llu",
                  (unsigned long long)p.piece[0].hi, (unsigned long long)p.piece[1].lo);
    CS_TEST_CHECK(cs_fit_piece_for(&p, 65536) == &p.piece[0], "64 KiB in the small piece");
    CS_TEST_CHECK(cs_fit_piece_for(&p, 131072) == &p.piece[1], "128 KiB in the large piece");
    CS_TEST_CHECK(p.single.rms_pct > CS_FIT_TOL_PCT, "one line fits two protocols (%.2f %%)",
                  p.single.rms_pct);
    return 0;
}

static void edges(void)
{
    uint64_t x[NMAX];
    double t[NMAX];
    int n = sweep(x);
    cs_fit_line_t l;
    /* no slope: the same time at every size */
    for (int i = 0; i < n; i++)
        t[i] = 7e-6;
    CS_TEST_CHECK(cs_fit_line(x, t, n, &l) == CS_OK, "flat times refused");
    CS_TEST_CHECK(isinf(l.beta) && rel(l.alpha, 7e-6) < 1e-9, "flat: %g us, beta %g",
                  l.alpha * 1e6, l.beta);
    /* a line whose intercept is negative (-50 us, a shaper's burst): alpha
     * 0, the slope kept, the intercept as the burst credit */
    uint64_t big[4] = {1u << 20, 2u << 20, 4u << 20, 8u << 20};
    double tb[4];
    for (int i = 0; i < 4; i++)
        tb[i] = (double)big[i] / 2e9 - 50e-6;
    CS_TEST_CHECK(cs_fit_line(big, tb, 4, &l) == CS_OK, "burst line refused");
    CS_TEST_CHECK(l.alpha == 0 && rel(l.beta, 2e9) < 1e-9 && rel(l.burst, 50e-6) < 1e-6 &&
                      l.rms_pct < 1e-6, "burst: alpha %g beta %g burst %g rms %g", l.alpha,
                  l.beta, l.burst, l.rms_pct);
}

static void degenerate(void)
{
    uint64_t x[NMAX] = {1024, 1024, 1024, 2048};
    double t[NMAX] = {1e-6, 2e-6, 3e-6, 4e-6};
    cs_fit_line_t l;
    cs_fit_piecewise_t p;
    CS_TEST_CHECK(cs_fit_line(x, t, 0, &l) == CS_ERR_INVAL && l.npoints == 0, "no points");
    CS_TEST_CHECK(cs_fit_line(x, t, -3, &l) == CS_ERR_INVAL && l.npoints == 0, "negative count");
    CS_TEST_CHECK(cs_fit_line(x, t, 1, &l) == CS_ERR_INVAL && rel(l.alpha, 1e-6) < 1e-12 &&
                      isinf(l.beta), "one point: alpha %g beta %g", l.alpha, l.beta);
    CS_TEST_CHECK(cs_fit_line(x, t, 3, &l) == CS_ERR_INVAL && rel(l.alpha, 2e-6) < 1e-12 &&
                      isinf(l.beta), "one size: alpha %g beta %g", l.alpha, l.beta);
    CS_TEST_CHECK(cs_fit_line(x + 2, t + 2, 2, &l) == CS_OK, "two sizes refused");
    double bad[3] = {0, -1e-6, NAN};
    for (int k = 0; k < 3; k++) {
        double tt[4] = {1e-6, 2e-6, bad[k], 4e-6};
        uint64_t xx[4] = {1, 2, 4, 8};
        CS_TEST_CHECK(cs_fit_line(xx, tt, 4, &l) == CS_ERR_INVAL, "time %g accepted", bad[k]);
        CS_TEST_CHECK(cs_fit_piecewise(xx, tt, 4, &p) == CS_ERR_INVAL && p.npieces == 1,
                      "time %g accepted (piecewise)", bad[k]);
        CS_TEST_CHECK(isfinite(l.alpha), "fallback alpha %g", l.alpha);
    }
    double inf[4] = {1e-6, INFINITY, 3e-6, 4e-6};
    uint64_t xs[4] = {1, 2, 4, 8}, unsorted[4] = {8, 1, 4, 2};
    CS_TEST_CHECK(cs_fit_line(xs, inf, 4, &l) == CS_ERR_INVAL, "infinite time accepted");
    CS_TEST_CHECK(cs_fit_line(unsorted, t, 4, &l) == CS_OK, "cs_fit_line needs no order");
    CS_TEST_CHECK(cs_fit_piecewise(unsorted, t, 4, &p) == CS_ERR_INVAL, "unsorted accepted");
    CS_TEST_CHECK(cs_fit_piecewise(xs, t, 1, &p) == CS_ERR_INVAL, "one point (piecewise)");
}

static void quantiles(void)
{
    double v[5] = {5, 1, 4, 2, 3};
    CS_TEST_CHECK(cs_fit_median(v, 5) == 3, "median %g", v[2]);
    double w[4] = {4, 1, 3, 2};
    CS_TEST_CHECK(cs_fit_median(w, 4) == 2.5, "median of 4");
    double q[5] = {10, 20, 30, 40, 50};
    CS_TEST_CHECK(fabs(cs_fit_quantile(q, 5, 0.1) - 14) < 1e-12, "10th percentile");
    CS_TEST_CHECK(cs_fit_quantile(q, 5, 1.0) == 50 && cs_fit_quantile(q, 5, 0) == 10, "ends");
    CS_TEST_CHECK(cs_fit_median(q, 0) == 0, "empty median");
}

int main(void)
{
    exact_line();
    noisy_line();
    two_protocols();
    edges();
    degenerate();
    quantiles();
    return cs_test_finish();
}
