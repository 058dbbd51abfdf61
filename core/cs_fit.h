/*
 * cs_fit.h - fits of the alpha-beta model to measured message times, for
 * `collstep calibrate`.
 *
 * A point is (bytes, seconds): the median one-way time of a message of
 * that size.  A line is t(s) = alpha + s / beta (alpha seconds, beta
 * bytes/s).  Fits minimise the RELATIVE squared error sum((fit - t) / t)^2
 * (weighted least squares, weights 1/t^2): the sweep spans eight decades of
 * size, and an absolute fit would ignore every small message.  Residuals
 * are reported as relative errors (rms and worst, in percent).
 *
 * Piecewise: transports change protocol at a size (eager up to 64 KiB and
 * rendezvous above on collstep's tcp, 128 KiB on shm), and shapers let
 * short bursts through at line rate, so the time is two lines with a
 * break between two sweep sizes.  cs_fit_piecewise keeps one line when it
 * fits every point within CS_FIT_TOL_PCT (rms); otherwise the large piece
 * is the longest run of the largest sizes (at least 3) that one line fits
 * within CS_FIT_TOL_PCT, and the small piece the sizes below it (when no
 * such run exists: the break with the smallest total error).  The large
 * piece is what the links of a calibrated platform get.
 */
#ifndef CS_FIT_H
#define CS_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "cs_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CS_FIT_TOL_PCT 5.0

typedef struct cs_fit_line {
    double alpha;    /* seconds */
    double beta;     /* bytes / second (inf when the sizes show no slope) */
    double burst;    /* seconds: minus a negative intercept, else 0 (alpha is 0 then) */
    double rms_pct;  /* rms relative residual, percent */
    double max_pct;  /* worst |relative residual|, percent */
    uint64_t lo, hi; /* the sizes it was fitted on */
    int npoints;
} cs_fit_line_t;

typedef struct cs_fit_piecewise {
    int npieces;           /* 1 or 2 */
    cs_fit_line_t piece[2]; /* piece[0] small sizes, piece[1] (npieces 2) large */
    uint64_t brk;          /* npieces 2: first size of piece[1] */
    cs_fit_line_t single;  /* the one-line fit over everything, for comparison */
} cs_fit_piecewise_t;

/* Weighted least-squares line through points [0, n) (sizes ascending or not).
 * A negative intercept gives alpha = 0 and burst = minus the intercept,
 * beta keeping the fitted slope: a shaper lets the first bytes of a
 * message after an idle spell through at line rate (its token bucket), so
 * large messages lie on t = s / beta - burst, and beta, the rate of the
 * bytes beyond the burst, is what back-to-back messages get; residuals
 * are those of that line.  A non-positive slope gives beta = infinity.  Returns CS_OK, or
 * CS_ERR_INVAL for points no line can be fitted to: n < 2, fewer than two
 * distinct sizes, a time that is not finite and > 0; *out then holds
 * alpha = the mean of the finite times (0 without any), beta infinite. */
int cs_fit_line(const uint64_t *bytes, const double *t, int n, cs_fit_line_t *out);

/* Points sorted by size ascending (CS_ERR_INVAL otherwise, or as
 * cs_fit_line; *out then holds the one-line fallback). */
int cs_fit_piecewise(const uint64_t *bytes, const double *t, int n, cs_fit_piecewise_t *out);

/* The piece that applies to messages of `bytes`. */
const cs_fit_line_t *cs_fit_piece_for(const cs_fit_piecewise_t *f, uint64_t bytes);

/* Median of v[0..n) (v is reordered); 0 for n == 0. */
double cs_fit_median(double *v, int n);
/* Quantile q in [0, 1] of v[0..n) (v is sorted in place). */
double cs_fit_quantile(double *v, int n, double q);

#ifdef __cplusplus
}
#endif

#endif /* CS_FIT_H */
