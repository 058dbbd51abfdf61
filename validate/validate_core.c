/*
 * validate_core.c - the validation object, the checks before running and
 * the |error| statistics (cs_validate.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_engine.h"
#include "cs_fit.h"
#include "validate_int.h"

int cs_validate_alloc(cs_validate_t *v, cs_err_t *err)
{
    size_t n = (size_t)v->nalgo * (size_t)v->nsizes, np = (size_t)v->nplats * n;
    v->meas = calloc(n ? n : 1, sizeof(*v->meas));
    v->pred = calloc(np ? np : 1, sizeof(*v->pred));
    v->bytes = calloc(np ? np : 1, sizeof(*v->bytes));
    if (v->meas && v->pred && v->bytes)
        return CS_OK;
    cs_validate_free(v);
    return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
}

void cs_validate_free(cs_validate_t *v)
{
    free(v->meas);
    free(v->pred);
    free(v->bytes);
    v->meas = NULL, v->pred = NULL, v->bytes = NULL;
}

int cs_validate_serves(const cs_validate_t *v, int a, int k)
{
    return !v->serves || v->serves[(size_t)a * (size_t)v->nsizes + (size_t)k];
}

int cs_validate_check_platform(const cs_validate_t *v, int p, cs_err_t *err)
{
    const cs_validate_plat_t *ps = &v->plats[p];
    const cs_platform_t *pl = ps->plat;
    if (pl->ndevices < (uint64_t)v->nranks)
        return cs_err_set(err, CS_ERR_INVAL, "%s has %llu %s but %d ranks run: calibrate on the "
                          "ranks you validate with", ps->spec, (unsigned long long)pl->ndevices,
                          pl->rank_noun[0] ? pl->rank_noun : "hosts", v->nranks);
    /* a calibrated platform names its hosts nNODE-rRANK: same grouping? */
    for (int a = 0; a < v->nranks && pl->hosts; a++)
        for (int b = 0; b < v->nranks; b++) {
            int na, ra, nb, rb;
            if (sscanf(pl->hosts[a], "n%d-r%d", &na, &ra) != 2 ||
                sscanf(pl->hosts[b], "n%d-r%d", &nb, &rb) != 2)
                return CS_OK;
            if ((na == nb) != (v->node_of[a] == v->node_of[b]))
                return cs_err_set(err, CS_ERR_INVAL, "%s: ranks %d and %d are %s there but %s "
                                  "here: start the ranks as when calibrating", ps->spec, a, b,
                                  na == nb ? "on one node" : "on different nodes",
                                  na == nb ? "not" : "on one node");
        }
    return CS_OK;
}

double cs_validate_mem_estimate(const cs_validate_t *v)
{
    uint64_t hi = 0;
    for (int k = 0; k < v->nsizes; k++)
        hi = v->sizes[k] > hi ? v->sizes[k] : hi;
    uint64_t count = cs_coll_block_count(v->coll, v->nranks, hi, 4);
    double most = 0;
    for (int a = 0; a < v->nalgo; a++)
        for (int r = 0; r < v->nranks; r++) {
            double x = cs_engine_mem_estimate(v->sched[a], r, count, CS_DT_F32);
            most = x > most ? x : most;
        }
    return most;
}

int cs_validate_rows(const cs_validate_t *v, int p, cs_validate_row_t *rows)
{
    int n = v->nalgo * v->nsizes, m = 0;
    for (int j = 0; j < n; j++)
        if (cs_validate_serves(v, j / v->nsizes, j % v->nsizes))
            rows[m++] = (cs_validate_row_t){j / v->nsizes, v->sizes[j % v->nsizes],
                                            v->meas[j].med, v->pred[(size_t)p * n + j]};
    return m;
}

int cs_validate_error_stats(const cs_validate_row_t *rows, int n, int algo, uint64_t min_bytes,
                            uint64_t max_bytes, cs_validate_stats_t *out, cs_err_t *err)
{
    memset(out, 0, sizeof(*out));
    for (int j = 0; j < n; j++) {
        if (!(isfinite(rows[j].measured) && rows[j].measured > 0))
            return cs_err_set(err, CS_ERR_INVAL, "row %d (%llu B): measured time %g s: an error "
                              "needs a time > 0", j + 1, (unsigned long long)rows[j].bytes,
                              rows[j].measured);
        if (!(isfinite(rows[j].predicted) && rows[j].predicted >= 0))
            return cs_err_set(err, CS_ERR_INVAL, "row %d (%llu B): predicted time %g s", j + 1,
                              (unsigned long long)rows[j].bytes, rows[j].predicted);
    }
    double *e = calloc(n > 0 ? (size_t)n : 1, sizeof(double)), lg = 0;
    if (!e)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    for (int j = 0; j < n; j++) {
        const cs_validate_row_t *r = &rows[j];
        if ((algo >= 0 && r->algo != algo) || r->bytes < min_bytes || r->bytes >= max_bytes)
            continue;
        double x = fabs(r->predicted - r->measured) / r->measured * 100;
        e[out->n++] = x;
        lg += log(x > 0.01 ? x : 0.01); /* |error| below 0.01 % counts as 0.01 % */
        out->worst = x > out->worst ? x : out->worst;
    }
    if (out->n) {
        out->geomean = exp(lg / out->n);
        out->median = cs_fit_median(e, out->n);
    }
    free(e);
    return CS_OK;
}
