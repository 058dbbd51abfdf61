/*
 * cmd_calibrate_tiers.c - `collstep calibrate --from-nccl-tests` on tables
 * of collstep's own algorithms (`collstep run --format nccl-tests`, or a
 * `sim` of one): the platform's tiers fitted so that the calibrated model
 * reproduces the tables, per tier a factor on its links' latency and one on
 * their bandwidth (the platform property collstep_factors, as `collstep
 * calibrate` writes from its own measurements).
 *
 * The fit: Levenberg-Marquardt on e = log(predicted / measured) over every
 * size of every table (Cauchy's cost, robust to a size the run got wrong),
 * the simulator in the loop.  The Jacobian comes from
 * one simulation per factor moved (latency x 1.25; bandwidth / 1.25, since a
 * rate above the one that binds shows only once lowered); a factor that no
 * size depends on (|d log t / d log f| under a quarter everywhere) is not
 * fitted and keeps its value, which the summary says.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_ntab.h"

#ifdef CS_HAVE_MODEL

#define NP (2 * CS_PLAT_MAX_TIERS) /* parameters: 2 t latency, 2 t + 1 bandwidth */
#define STEP 0.22314355131420976   /* log 1.25 */
#define MIN_SENS 0.25
#define MAX_ITERS 30
#define MAX_ROUNDS 4 /* searches of wider moves once the steps stop */
#define MAX_PASS 320 /* variants in one such search (pairs of the rates that matter most first) */
#define WIDE_GAIN 0.02 /* a wider move is taken when it lowers the cost by 2 %; a factor
                          no size depends on at the fit goes back where that costs 2 % */

typedef struct tfit {
    cs_nset_t *s;
    int nt;             /* tiers */
    double x[NP];       /* log factors */

    double *pred;       /* [nvar * total] */
} tfit_t;

static void factors_of(const tfit_t *f, const double *x, double *tf)
{
    for (int p = 0; p < NP; p++)
        tf[p] = p < 2 * f->nt ? exp(x[p]) : 0;
}

/* Simulate nvar variants (xs[v * NP ...]) into f->pred. */
static int run(tfit_t *f, int nvar, const double *xs)
{
    double *tf = calloc((size_t)nvar * NP, sizeof(double));
    if (!tf)
        return cs_cli_usage_error("calibrate", "%s", "out of memory");
    for (int v = 0; v < nvar; v++)
        factors_of(f, xs + (size_t)v * NP, tf + (size_t)v * NP);
    int rc = cs_nset_simulate_tiers(f->s, nvar, tf, f->pred);
    free(tf);
    return rc;
}

/* The cost of an error (log of predicted over measured): Cauchy's,
 * (c^2 / 2) log(1 + (e / c)^2) with c = 10 %, square for small errors and
 * growing only as the log of a large one, so that a size the run got wrong
 * (a retransmission, another job: 3 times its neighbours' pace) weighs less
 * than two sizes a wrong factor would put off by a third; its weight in a
 * step is 1 / (1 + (e / c)^2). */
#define ROBUST_C 0.1
static double robust(double e)
{
    double r = e / ROBUST_C;
    return 0.5 * ROBUST_C * ROBUST_C * log1p(r * r);
}

static double weight(double e)
{
    double r = e / ROBUST_C;
    return 1.0 / (1.0 + r * r);
}

/* e[i] of variant v; the cost. */
static double errors(const tfit_t *f, int v, double *e)
{
    double c = 0;
    for (int j = 0, i = 0; j < f->s->ntab; j++) {
        const cs_ntab_t *t = f->s->tab[j];
        for (int k = 0; k < t->n; k++, i++) {
            double p = f->pred[(size_t)v * (size_t)f->s->total + (size_t)i];
            /* a simulation that gave no time is as far off as a factor can go */
            e[i] = p > 0 && isfinite(p) ? log(p / t->meas[k]) : log(1e3);
            c += robust(e[i]);
        }
    }
    return c;
}

/* Solve A x = g (n x n) by Gaussian elimination with partial pivoting.  0
 * when singular. */
static int solve(double *A, double *g, int n, double *x)
{
    for (int c = 0; c < n; c++) {
        int m = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(A[r * n + c]) > fabs(A[m * n + c]))
                m = r;
        if (!(fabs(A[m * n + c]) > 1e-24))
            return 0;
        for (int k = 0; k < n; k++) {
            double t = A[c * n + k];
            A[c * n + k] = A[m * n + k], A[m * n + k] = t;
        }
        double t = g[c];
        g[c] = g[m], g[m] = t;
        for (int r = c + 1; r < n; r++) {
            double q = A[r * n + c] / A[c * n + c];
            for (int k = c; k < n; k++)
                A[r * n + k] -= q * A[c * n + k];
            g[r] -= q * g[c];
        }
    }
    for (int c = n - 1; c >= 0; c--) {
        double v = g[c];
        for (int k = c + 1; k < n; k++)
            v -= A[c * n + k] * x[k];
        x[c] = v / A[c * n + c];
    }
    return 1;
}

static double median_abs(const double *e, int n)
{
    double *a = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!a || n <= 0) {
        free(a);
        return 0;
    }
    for (int i = 0; i < n; i++)
        a[i] = fabs(exp(e[i]) - 1);
    for (int i = 1; i < n; i++) /* insertion sort: a few hundred sizes */
        for (int j = i; j > 0 && a[j - 1] > a[j]; j--) {
            double t = a[j];
            a[j] = a[j - 1], a[j - 1] = t;
        }
    double m = n % 2 ? a[n / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2]);
    free(a);
    return m;
}

/* The current point f->x and one variant per factor moved (latency x 1.25,
 * bandwidth / 1.25: a rate above the one that binds shows only once
 * lowered): e the point's errors, its cost; J's columns, and per factor
 * the sizes whose time moves with it by a quarter of its move (ndet) and
 * the largest move (sens).  xs: room for np + 1 variants. */
static int jacobian(tfit_t *f, int np, double *xs, double *e, double *e1, double *J,
                    double *sens, int *ndet, double *cost)
{
    int m = f->s->total, nv = 1, which[NP + 1];
    memcpy(xs, f->x, sizeof(f->x));
    for (int p = 0; p < np; p++) {
        memcpy(xs + (size_t)nv * NP, f->x, sizeof(f->x));
        xs[(size_t)nv * NP + p] += p % 2 ? -STEP : STEP;
        which[nv++] = p;
    }
    int rc = run(f, nv, xs);
    if (rc != CS_EXIT_OK)
        return rc;
    *cost = errors(f, 0, e);
    for (int v = 1; v < nv; v++) {
        int p = which[v];
        errors(f, v, e1);
        double h = p % 2 ? -STEP : STEP;
        sens[p] = 0, ndet[p] = 0;
        for (int i = 0; i < m; i++) {
            J[(size_t)i * NP + p] = (e1[i] - e[i]) / h;
            double a = fabs(J[(size_t)i * NP + p]);
            sens[p] = a > sens[p] ? a : sens[p];
            ndet[p] += a >= MIN_SENS;
        }
    }
    /* the point's predictions where the caller reads them: variant 0 */
    return CS_EXIT_OK;
}

int cs_cli_calibrate_tiers(cs_nset_t *s, char **summary, char *factors, size_t flen, int *sims)
{
    tfit_t f = {.s = s, .nt = s->plat->ntiers};
    int m = s->total, rc = CS_EXIT_OK;
    *summary = NULL;
    if (f.nt <= 0)
        return cs_cli_usage_error("calibrate", "--platform %s has no tiers to fit", s->platform);
    for (int t = 0; t < f.nt; t++) {
        double lf = s->plat->tiers[t].lat_factor, bf = s->plat->tiers[t].bw_factor;
        f.x[2 * t] = log(lf > 0 ? lf : 1.0);
        f.x[2 * t + 1] = log(bf > 0 ? bf : 1.0);
    }
    double x0[NP];
    memcpy(x0, f.x, sizeof(x0));
    int np = 2 * f.nt;
    f.pred = calloc((size_t)(MAX_PASS + 4 * NP + 1) * (size_t)m, sizeof(double)); /* the widest pass */
    double *xs = calloc((size_t)(MAX_PASS + 4 * NP + 1) * NP, sizeof(double));
    double *e = calloc((size_t)m, sizeof(double)), *e1 = calloc((size_t)m, sizeof(double));
    double *J = calloc((size_t)m * NP, sizeof(double));
    char *text = malloc(16384);
    if (!f.pred || !xs || !e || !e1 || !J || !text) {
        rc = cs_cli_usage_error("calibrate", "%s", "out of memory");
        goto out;
    }
    size_t o = 0;
#define PUT(...)                                                                                  \
    do {                                                                                          \
        int w_ = snprintf(text + o, o < 16384 ? 16384 - o : 0, __VA_ARGS__);                      \
        if (w_ > 0)                                                                               \
            o += (size_t)w_;                                                                      \
    } while (0)
    /* per factor at the current point: the sizes whose time moves with it
     * by a quarter of the factor's move (ndet) and the largest such move
     * (sens); fitted: it was in a step */
    int active[NP], fitted[NP] = {0}, ndet[NP] = {0}, na = 0, done = 0, rounds = 0, stopped = 0;
    double sens[NP] = {0}, mu = 1e-2, cost = 0;
    for (int it = 0; rc == CS_EXIT_OK; it++) {
        /* the current point and one variant per factor (every factor at
         * every point: one that did not matter at the start may once the
         * others moved, as a rate that binds once another was raised) */
        if ((rc = jacobian(&f, np, xs, e, e1, J, sens, ndet, &cost)) != CS_EXIT_OK)
            break;
        na = 0;
        for (int p = 0; p < np; p++)
            if (ndet[p])
                active[na++] = p, fitted[p] = 1;
        fprintf(stderr, "collstep calibrate: tiers, step %d: median |error| %.1f %% (%d "
                        "simulations)\n", it + 1, median_abs(e, m) * 100, s->nsims);
        double worst = 0;
        for (int i = 0; i < m; i++)
            worst = fmax(worst, fabs(e[i]));
        if (worst < 1e-3) /* every size within 0.1 %: no step nor wider move can do better */
            break;
        /* f.pred[0..m) and e are the current point's: the last pass is the
         * fit's */
        stopped = it == MAX_ITERS && !done;
        if (done || !na || it == MAX_ITERS) {
            /* a minimum of the steps: try each factor x 1/4, 1/2, 2, 4 alone
             * (a rate hidden behind another binds only once moved past it,
             * which no local step sees); a better point goes on from there */
            int better = 0;
            if (it < MAX_ITERS && rounds < MAX_ROUNDS) {
                rounds++;
                int nt = 0;
                static const double mv[4] = {-1.3862943611198906, -0.6931471805599453,
                                             0.6931471805599453, 1.3862943611198906};
                for (int p = 0; p < np; p++)
                    for (int q = 0; q < 4; q++, nt++) {
                        memcpy(xs + (size_t)nt * NP, f.x, sizeof(f.x));
                        double v = f.x[p] + mv[q];
                        xs[(size_t)nt * NP + p] = fmin(fmax(v, log(1e-3)), log(1e3));
                    }
                /* two rates at once (one binding in place of the other: a
                 * NIC raised past the links that truly bind while those are
                 * lowered), while the pass stays small */
                int ord[NP / 2], no = 0; /* the rates, those the sizes move with most first */
                for (int p = 1; p < np; p += 2)
                    ord[no++] = p;
                for (int i = 1; i < no; i++)
                    for (int j = i; j > 0 && sens[ord[j - 1]] < sens[ord[j]]; j--) {
                        int t = ord[j];
                        ord[j] = ord[j - 1], ord[j - 1] = t;
                    }
                for (int a = 0; a < no && nt + 16 <= MAX_PASS; a++)
                    for (int c = a + 1; c < no && nt + 16 <= MAX_PASS; c++)
                        for (int q = 0, p = ord[a], r = ord[c]; q < 16; q++, nt++) {
                            memcpy(xs + (size_t)nt * NP, f.x, sizeof(f.x));
                            double v = f.x[p] + mv[q / 4], w = f.x[r] + mv[q % 4];
                            xs[(size_t)nt * NP + p] = fmin(fmax(v, log(1e-3)), log(1e3));
                            xs[(size_t)nt * NP + r] = fmin(fmax(w, log(1e-3)), log(1e3));
                        }
                if ((rc = run(&f, nt, xs)) != CS_EXIT_OK)
                    break;
                /* each candidate as its own and shifted: every rate times
                 * exp(mean error), the move the steps would make next (a
                 * rate moved past another leaves every size off alike) */
                double *own = calloc((size_t)nt, sizeof(double));
                double *shf = calloc((size_t)nt, sizeof(double));
                double *sh = calloc((size_t)nt, sizeof(double));
                if (!own || !shf || !sh) {
                    free(own), free(shf), free(sh);
                    rc = cs_cli_usage_error("calibrate", "%s", "out of memory");
                    break;
                }
                for (int v = 0; v < nt; v++) {
                    own[v] = errors(&f, v, e1);
                    double mean = 0;
                    for (int i = 0; i < m; i++)
                        mean += e1[i] / m;
                    sh[v] = mean, shf[v] = 0;
                    for (int i = 0; i < m; i++)
                        shf[v] += robust(e1[i] - mean);
                }
                /* the best few by either measure, checked by simulation */
                enum { CHECK = 4 };
                double cand[2 * CHECK][NP];
                int nc = 0;
                for (int kind = 0; kind < 2; kind++)
                    for (int c = 0; c < CHECK; c++) {
                        int best = -1;
                        double bc = cost * (1 - WIDE_GAIN);
                        for (int v = 0; v < nt; v++) {
                            double cv = kind ? shf[v] : own[v];
                            if (cv < bc)
                                bc = cv, best = v;
                        }
                        if (best < 0)
                            break;
                        memcpy(cand[nc], xs + (size_t)best * NP, sizeof(f.x));
                        if (kind) /* the rates that bind here, and the ones moved */
                            for (int p = 1; p < np; p += 2)
                                if (ndet[p] || cand[nc][p] != f.x[p])
                                    cand[nc][p] = fmin(fmax(cand[nc][p] + sh[best], log(1e-3)),
                                                       log(1e3));
                        nc++;
                        (kind ? shf : own)[best] = INFINITY;
                    }
                free(own), free(shf), free(sh);
                if (nc > 0) {
                    for (int c = 0; c < nc; c++)
                        memcpy(xs + (size_t)c * NP, cand[c], sizeof(f.x));
                    if ((rc = run(&f, nc, xs)) != CS_EXIT_OK)
                        break;
                    int best = -1;
                    double bc = cost * (1 - WIDE_GAIN);
                    for (int c = 0; c < nc; c++) {
                        double c1 = errors(&f, c, e1);
                        if (c1 < bc)
                            bc = c1, best = c;
                    }
                    if (best >= 0) {
                        for (int p = 0; p < np; p++)
                            if (cand[best][p] != f.x[p])
                                fitted[p] = 1;
                        memcpy(f.x, cand[best], sizeof(f.x));
                        done = 0, better = 1;
                    }
                }
                if (!better && (rc = run(&f, 1, f.x)) == CS_EXIT_OK) /* the point's pred again */
                    cost = errors(&f, 0, e);
            }
            if (better && rc == CS_EXIT_OK)
                continue;
            break;
        }
        /* damped steps until one lowers the cost */
        double A[NP * NP], g[NP], d[NP];
        int better = 0;
        for (int tries = 0; tries < 6 && !better; tries++) {
            for (int a = 0; a < na; a++) {
                g[a] = 0;
                for (int i = 0; i < m; i++)
                    g[a] -= J[(size_t)i * NP + active[a]] * weight(e[i]) * e[i];
                for (int b = 0; b < na; b++) {
                    double v = 0;
                    for (int i = 0; i < m; i++)
                        v += J[(size_t)i * NP + active[a]] * weight(e[i]) *
                             J[(size_t)i * NP + active[b]];
                    A[a * na + b] = v;
                }
            }
            for (int a = 0; a < na; a++)
                A[a * na + a] *= 1 + mu, A[a * na + a] += 1e-9;
            if (!solve(A, g, na, d)) {
                mu *= 10;
                continue;
            }
            double big = 0;
            for (int a = 0; a < na; a++)
                big = fabs(d[a]) > big ? fabs(d[a]) : big;
            double cut = big > log(3.0) ? log(3.0) / big : 1;
            double trial[NP];
            memcpy(trial, f.x, sizeof(f.x));
            for (int a = 0; a < na; a++) {
                double v = f.x[active[a]] + cut * d[a];
                trial[active[a]] = fmin(fmax(v, log(1e-3)), log(1e3));
            }
            if ((rc = run(&f, 1, trial)) != CS_EXIT_OK)
                break;
            double c1 = errors(&f, 0, e1);
            if (c1 < cost) {
                better = 1;
                memcpy(f.x, trial, sizeof(f.x));
                mu = fmax(mu / 3, 1e-6);
                done = cost - c1 < 1e-4 * cost || big * cut < 0.002; /* converged */
            } else {
                mu *= 4;
            }
        }
        if (rc != CS_EXIT_OK)
            break;
        if (!better) /* no step lowers the cost: the point again, then wider moves */
            done = 1;
    }
    if (rc != CS_EXIT_OK)
        goto out;
    /* factors that were fitted but on which no size depends at the fit (a
     * rate raised until another term binds, a latency lowered until the
     * rates hide it): the logs do not tell their value, so they go back to
     * where they started where that costs the fit nothing */
    int weak[NP] = {0}, nweak = 0, wp[NP];
    for (int p = 0; p < np; p++)
        if (fitted[p] && !ndet[p] && f.x[p] != x0[p])
            weak[p] = 1, wp[nweak++] = p;
    if (nweak) {
        /* each alone, then those that cost nothing alone together */
        memcpy(xs, f.x, sizeof(f.x));
        for (int w = 0; w < nweak; w++) {
            memcpy(xs + (size_t)(w + 1) * NP, f.x, sizeof(f.x));
            xs[(size_t)(w + 1) * NP + wp[w]] = x0[wp[w]];
        }
        if ((rc = run(&f, nweak + 1, xs)) != CS_EXIT_OK)
            goto out;
        double back[NP];
        int nback = 0;
        memcpy(back, f.x, sizeof(f.x));
        for (int w = 0; w < nweak; w++)
            if (errors(&f, w + 1, e1) <= cost * (1 + WIDE_GAIN) + 1e-12)
                back[wp[w]] = x0[wp[w]], nback++;
        double c1 = INFINITY;
        if (nback) {
            if ((rc = run(&f, 1, back)) != CS_EXIT_OK)
                goto out;
            c1 = errors(&f, 0, e1);
        }
        if (nback && c1 <= cost * (1 + WIDE_GAIN) + 1e-12) {
            for (int p = 0; p < np; p++)
                if (weak[p] && back[p] == x0[p])
                    weak[p] = 2; /* back at the start */
            memcpy(f.x, back, sizeof(f.x));
            /* what the sizes depend on there (a rate put back may bind again) */
            if ((rc = jacobian(&f, np, xs, e, e1, J, sens, ndet, &cost)) != CS_EXIT_OK)
                goto out;
        } else if ((rc = run(&f, 1, f.x)) != CS_EXIT_OK) { /* they matter: the fit again */
            goto out;
        } else {
            cost = errors(&f, 0, e);
        }
    }
    /* a fitted rate that no size moves with when raised is a bound, not a
     * measurement: the logs say it is at least that (a faster one would
     * not show, another term binding above it) */
    int atleast[NP] = {0}, nb = 0, bwp[NP];
    for (int p = 1; p < np; p += 2)
        if (ndet[p])
            bwp[nb++] = p;
    if (nb) {
        double *up = calloc((size_t)(nb + 1) * NP, sizeof(double));
        if (!up) {
            rc = cs_cli_usage_error("calibrate", "%s", "out of memory");
            goto out;
        }
        memcpy(up, f.x, sizeof(f.x));
        for (int b = 0; b < nb; b++) {
            memcpy(up + (size_t)(b + 1) * NP, f.x, sizeof(f.x));
            up[(size_t)(b + 1) * NP + bwp[b]] += STEP;
        }
        rc = run(&f, nb + 1, up);
        free(up);
        if (rc != CS_EXIT_OK)
            goto out;
        errors(&f, 0, e);
        for (int b = 0; b < nb; b++) {
            errors(&f, b + 1, e1);
            int moved = 0;
            for (int i = 0; i < m; i++)
                moved += fabs(e1[i] - e[i]) / STEP >= MIN_SENS;
            atleast[bwp[b]] = !moved;
        }
        /* rates that bind together (a NIC and its leaf link at one rate):
         * none moves a size alone, all at once do; they are pinned */
        int nal = 0;
        memcpy(xs, f.x, sizeof(f.x));
        memcpy(xs + NP, f.x, sizeof(f.x));
        for (int b = 0; b < nb; b++)
            if (atleast[bwp[b]])
                xs[NP + bwp[b]] += STEP, nal++;
        if (nal >= 2) {
            if ((rc = run(&f, 2, xs)) != CS_EXIT_OK)
                goto out;
            errors(&f, 0, e);
            errors(&f, 1, e1);
            int moved = 0;
            for (int i = 0; i < m; i++)
                moved += fabs(e1[i] - e[i]) / STEP >= MIN_SENS;
            for (int b = 0; moved && b < nb; b++)
                if (atleast[bwp[b]])
                    atleast[bwp[b]] = 2;
        }
    }
    for (int j = 0, i = 0; j < s->ntab; j++)
        for (int k = 0; k < s->tab[j]->n; k++, i++)
            s->tab[j]->pred[k] = f.pred[i];
    /* the property and the summary */
    size_t fo = 0;
    factors[0] = 0;
    PUT("fitted tier factors of the calibrated model (on the links of %s):\n", s->platform);
    for (int t = 0; t < f.nt; t++) {
        const cs_tier_info_t *ti = &s->plat->tiers[t];
        double lf = exp(f.x[2 * t]), bf = exp(f.x[2 * t + 1]);
        int w = snprintf(factors + fo, fo < flen ? flen - fo : 0, "%s%s:%.4g:%.4g",
                         fo ? "," : "", ti->name, lf, bf);
        if (w > 0)
            fo += (size_t)w;
        PUT("  tier %s (%g GB/s, %g us): ", ti->name, ti->bandwidth * 1e-9, ti->latency * 1e6);
        for (int q = 0; q < 2; q++) {
            int p = 2 * t + (q ? 0 : 1);
            double v = exp(f.x[p]);
            const char *what = q ? "latency" : "bandwidth";
            if (ndet[p] && q)
                PUT("latency x %.4g (%.4g us), from %d size%s", v, ti->latency * 1e6 * v,
                    ndet[p], ndet[p] == 1 ? "" : "s");
            else if (ndet[p] && atleast[p] == 2)
                PUT("bandwidth x %.4g (%.4g GB/s), from %d size%s, binding together with "
                    "other tiers at that rate (raised alone it would not show)", v,
                    ti->bandwidth * 1e-9 * v, ndet[p], ndet[p] == 1 ? "" : "s");
            else if (ndet[p] && atleast[p])
                PUT("bandwidth at least x %.4g (%.4g GB/s), from %d size%s (a faster rate "
                    "would not show: another term binds above it)", v,
                    ti->bandwidth * 1e-9 * v, ndet[p], ndet[p] == 1 ? "" : "s");
            else if (ndet[p])
                PUT("bandwidth x %.4g (%.4g GB/s), from %d size%s", v,
                    ti->bandwidth * 1e-9 * v, ndet[p], ndet[p] == 1 ? "" : "s");
            else if (weak[p] == 1 && !q)
                PUT("bandwidth at least x %.4g (%.4g GB/s): at the fit no size's time moves "
                    "with it by a quarter (another term binds), and putting it back at x %.4g "
                    "(with the other such factors) made the fit worse by over 2 %%",
                    v, ti->bandwidth * 1e-9 * v, exp(x0[p]));
            else if (weak[p] == 1)
                PUT("latency x %.4g (%.4g us), but at the fit no size's time moves with it by "
                    "a quarter (the rates hide it)", v, ti->latency * 1e6 * v);
            else if (weak[p] == 2)
                PUT("%s put back at x %.4g (fitted on the way, but at the fit no size's time "
                    "moved with it by a quarter, and putting it back cost the fit under 2 %%: "
                    "the logs do not tell it)", what, v);
            else if (sens[p] > 0)
                PUT("%s not determined (no size's time moves with it by a quarter of its move; "
                    "at most %.1f %%), kept at x %.4g", what, sens[p] * 100, v);
            else
                PUT("%s not determined (no size's time moves with it), kept at x %.4g", what, v);
            PUT("%s", q ? "\n" : "; ");
        }
    }
    PUT("median |error| %.1f %% over %d sizes (%d simulations)\n", median_abs(e, m) * 100, m,
        s->nsims);
    if (stopped)
        PUT("the fit stopped after %d steps while still improving: the factors above may not "
            "be the best the logs allow\n", MAX_ITERS);
    char *un = cs_nset_unfit_text(s, 0.05, "fitted");
    if (un)
        PUT("%s", un);
    free(un);
#undef PUT
    *summary = text, text = NULL;
    *sims = s->nsims;
out:
    free(f.pred), free(xs), free(e), free(e1), free(J), free(text);
    return rc;
}

#endif /* CS_HAVE_MODEL */
