/*
 * cs_fit.c - weighted least squares for the alpha-beta model (cs_fit.h).
 *
 * With weights w = 1/t^2, the normal equations of t = a + b s (b = 1/beta)
 * are solved in closed form:
 *   [sum w    sum w s  ] [a]   [sum w t  ]
 *   [sum w s  sum w s^2] [b] = [sum w s t]
 * Sizes are scaled to MiB first so that the sums stay well conditioned.
 */
#include "cs_fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void residuals(const uint64_t *x, const double *t, int n, double a, double b,
                      cs_fit_line_t *o)
{
    double ss = 0, mx = 0;
    for (int i = 0; i < n; i++) {
        double r = t[i] > 0 ? (a + b * (double)x[i] - t[i]) / t[i] : 0;
        ss += r * r;
        mx = fabs(r) > mx ? fabs(r) : mx;
    }
    o->rms_pct = n ? 100.0 * sqrt(ss / n) : 0;
    o->max_pct = 100.0 * mx;
}

/* Whether a line can be fitted to the points (see cs_fit.h). */
static int valid(const uint64_t *x, const double *t, int n)
{
    int distinct = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(t[i]) || !(t[i] > 0))
            return 0;
        distinct |= x[i] != x[0];
    }
    return n >= 2 && distinct;
}

int cs_fit_line(const uint64_t *x, const double *t, int n, cs_fit_line_t *o)
{
    memset(o, 0, sizeof(*o));
    o->npoints = n > 0 ? n : 0;
    o->beta = INFINITY;
    if (n <= 0)
        return CS_ERR_INVAL;
    if (!valid(x, t, n)) {
        double sum = 0;
        int k = 0;
        o->lo = o->hi = x[0];
        for (int i = 0; i < n; i++) {
            o->lo = x[i] < o->lo ? x[i] : o->lo;
            o->hi = x[i] > o->hi ? x[i] : o->hi;
            if (isfinite(t[i]))
                sum += t[i], k++;
        }
        o->alpha = k ? sum / k : 0;
        return CS_ERR_INVAL;
    }
    o->lo = o->hi = x[0];
    double sw = 0, sx = 0, sxx = 0, st = 0, sxt = 0, tm = 0;
    for (int i = 0; i < n; i++) {
        o->lo = x[i] < o->lo ? x[i] : o->lo;
        o->hi = x[i] > o->hi ? x[i] : o->hi;
        double w = t[i] > 0 ? 1.0 / (t[i] * t[i]) : 0, s = (double)x[i] / 1048576.0;
        sw += w, sx += w * s, sxx += w * s * s, st += w * t[i], sxt += w * s * t[i];
        tm += t[i];
    }
    double det = sw * sxx - sx * sx, a, b;
    if (!(fabs(det) > 0)) {
        a = tm / n, b = 0;
    } else {
        a = (sxx * st - sx * sxt) / det;
        b = (sw * sxt - sx * st) / det; /* seconds per MiB */
    }
    /* a slope that moves no time across the whole range is rounding */
    if (b * ((double)o->hi / 1048576.0) <= 1e-9 * fabs(a))
        b = 0;
    if (b <= 0)
        b = 0, a = st / sw;
    /* a negative intercept keeps its slope (the rate a stream of such
     * messages sees) and becomes a burst credit; the residuals are those
     * of the fitted line */
    o->alpha = a > 0 ? a : 0;
    o->burst = a < 0 ? -a : 0;
    o->beta = b > 0 ? 1048576.0 / b : INFINITY;
    residuals(x, t, n, a, b / 1048576.0, o);
    return CS_OK;
}

int cs_fit_piecewise(const uint64_t *x, const double *t, int n, cs_fit_piecewise_t *o)
{
    memset(o, 0, sizeof(*o));
    int st = cs_fit_line(x, t, n, &o->single);
    o->npieces = 1;
    o->piece[0] = o->single;
    for (int i = 1; i < n && st == CS_OK; i++)
        if (x[i] < x[i - 1])
            st = CS_ERR_INVAL;
    if (st != CS_OK || n < 5 || o->single.rms_pct <= CS_FIT_TOL_PCT)
        return st;
    /* the large-message regime: grow [k, n) downwards while one line
     * still fits it within the tolerance */
    int kbest = -1;
    cs_fit_line_t l1;
    for (int k = n - 3; k >= 0; k--) {
        cs_fit_line_t l;
        if (cs_fit_line(x + k, t + k, n - k, &l) != CS_OK || l.rms_pct > CS_FIT_TOL_PCT)
            break;
        kbest = k, l1 = l;
    }
    if (kbest < 0) { /* no clean top: the best split by total error */
        double best = o->single.rms_pct * o->single.rms_pct * n;
        for (int k = 3; k <= n - 3; k++) {
            cs_fit_line_t a, b;
            if (cs_fit_line(x, t, k, &a) != CS_OK || cs_fit_line(x + k, t + k, n - k, &b) != CS_OK)
                continue;
            double e = a.rms_pct * a.rms_pct * k + b.rms_pct * b.rms_pct * (n - k);
            if (e < best)
                best = e, kbest = k, l1 = b;
        }
    }
    if (kbest < 2)
        return CS_OK;
    o->npieces = 2;
    o->brk = x[kbest];
    cs_fit_line(x, t, kbest, &o->piece[0]);
    o->piece[1] = l1;
    return CS_OK;
}

const cs_fit_line_t *cs_fit_piece_for(const cs_fit_piecewise_t *f, uint64_t bytes)
{
    return f->npieces == 2 && bytes >= f->brk ? &f->piece[1] : &f->piece[0];
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double cs_fit_quantile(double *v, int n, double q)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof(double), cmp_d);
    double pos = q * (n - 1);
    int i = (int)pos;
    if (i >= n - 1)
        return v[n - 1];
    return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

double cs_fit_median(double *v, int n)
{
    return cs_fit_quantile(v, n, 0.5);
}
