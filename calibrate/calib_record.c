/*
 * calib_record.c - plans and records (cs_calibrate.h), and the numbers of
 * the JSON file written so that they read back bit for bit.
 *
 * A raw value is written as the shortest decimal of up to 17 digits that
 * strtod reads back as the same double; a time in seconds goes out as
 * microseconds (the file's unit) by moving that decimal's point six places,
 * not by multiplying, so reading it back (the point moved back, then
 * strtod, correctly rounded) gives the very double measured.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calib_int.h"

void cs_calibrate_plan_init(cs_calibrate_plan_t *plan)
{
    memset(plan, 0, sizeof(*plan));
    for (uint64_t b = 1; b <= (64u << 20); b *= 2)
        plan->sizes[plan->nsizes++] = b;
    plan->budget_s = 0.25;
    plan->min_reps = 3, plan->max_reps = 1000;
    plan->nic_bytes = 8u << 20;
    plan->dtype = CS_DT_F32;
    plan->timeout_s = 60;
}

int cs_calibrate_plan_check(const cs_calibrate_plan_t *p, cs_err_t *err)
{
    if (p->nsizes < CS_CALIBRATE_MIN_SIZES || p->nsizes > CS_CALIBRATE_MAX_SIZES)
        return cs_err_set(err, CS_ERR_INVAL, "calibrate: %d sizes; the fits need %d to %d",
                          p->nsizes, CS_CALIBRATE_MIN_SIZES, CS_CALIBRATE_MAX_SIZES);
    for (int k = 0; k < p->nsizes; k++)
        if (p->sizes[k] < 1 || (k && p->sizes[k] <= p->sizes[k - 1]))
            return cs_err_set(err, CS_ERR_INVAL, "calibrate: size %d (%llu bytes): sizes are "
                              "ascending, from 1 byte", k, (unsigned long long)p->sizes[k]);
    if (!(p->budget_s > 0) || !isfinite(p->budget_s))
        return cs_err_set(err, CS_ERR_INVAL, "calibrate: budget %g s: expected seconds > 0",
                          p->budget_s);
    if (p->min_reps < 1 || p->max_reps > 1000000 || p->min_reps > p->max_reps)
        return cs_err_set(err, CS_ERR_INVAL, "calibrate: repetitions %d to %d: expected "
                          "1 <= min <= max <= 1000000", p->min_reps, p->max_reps);
    if (p->nic_bytes < 1)
        return cs_err_set(err, CS_ERR_INVAL, "calibrate: the NIC tests' message is 0 bytes");
    if ((unsigned)p->dtype >= CS_CALIBRATE_NDT)
        return cs_err_set(err, CS_ERR_INVAL, "calibrate: element type %d: not one of the %d "
                          "measured", (int)p->dtype, CS_CALIBRATE_NDT);
    if (!(p->timeout_s >= 0) || !isfinite(p->timeout_s))
        return cs_err_set(err, CS_ERR_INVAL, "calibrate: timeout %g s: expected seconds >= 0 "
                          "(0: 60)", p->timeout_s);
    return CS_OK;
}

double cs_calibrate_buffer_bytes(const cs_calibrate_plan_t *plan)
{
    uint64_t hi = plan->nsizes > 0 ? plan->sizes[plan->nsizes - 1] : 0;
    return 2 * (double)((hi + 4095) / 4096 * 4096);
}

void cs__calib_nodes(const int *node_of, int nranks, int nnodes, int *first, int *count)
{
    for (int h = 0; h < nnodes; h++)
        first[h] = -1, count[h] = 0;
    for (int r = 0; r < nranks; r++) {
        int h = node_of[r];
        if (h < 0 || h >= nnodes)
            continue;
        if (first[h] < 0)
            first[h] = r;
        count[h]++;
    }
}

cs_calibrate_record_t *cs_calibrate_record_new(int nranks, int nnodes, int nseries,
                                               const cs_calibrate_plan_t *plan)
{
    if (nranks < 1 || nnodes < 1 || nseries < 0 || plan->nsizes < 1 ||
        plan->nsizes > CS_CALIBRATE_MAX_SIZES)
        return NULL;
    cs_calibrate_record_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    size_t K = (size_t)plan->nsizes;
    r->nranks = nranks, r->nnodes = nnodes, r->nseries = nseries, r->plan = *plan;
    r->node_of = calloc((size_t)nranks, sizeof(int));
    r->nodes = calloc((size_t)nnodes, sizeof(*r->nodes));
    r->series = calloc((size_t)nseries + 1, sizeof(*r->series));
    r->loaded = calloc((size_t)nranks * K, sizeof(double));
    r->loaded_reps = calloc(K, sizeof(int));
    int ok = r->node_of && r->nodes && r->series && r->loaded && r->loaded_reps;
    for (int s = 0; s < nseries && ok; s++) {
        cs_calibrate_series_t *x = &r->series[s];
        x->median = calloc(K, sizeof(double)), x->p10 = calloc(K, sizeof(double));
        x->p90 = calloc(K, sizeof(double)), x->reps = calloc(K, sizeof(int));
        ok = x->median && x->p10 && x->p90 && x->reps;
    }
    for (int h = 0; h < nnodes && ok; h++)
        r->nodes[h].nic_peer = -1;
    r->duplex_a = r->duplex_b = r->duplex_c = r->duplex_d = -1;
    if (!ok) {
        cs_calibrate_record_free(r);
        return NULL;
    }
    return r;
}

void cs_calibrate_record_free(cs_calibrate_record_t *r)
{
    if (!r)
        return;
    for (int s = 0; r->series && s < r->nseries; s++) {
        free(r->series[s].median);
        free(r->series[s].p10);
        free(r->series[s].p90);
        free(r->series[s].reps);
    }
    free(r->series);
    free(r->node_of);
    free(r->nodes);
    free(r->loaded);
    free(r->loaded_reps);
    free(r);
}

/* ---- exact numbers ------------------------------------------------------------ */

void cs__calib_num(FILE *f, double v, int shift)
{
    if (!isfinite(v) || v == 0) {
        fputs("0", f);
        return;
    }
    char buf[40];
    for (int p = 14; p <= 16; p++) { /* %.*e: p digits after the first */
        snprintf(buf, sizeof(buf), "%.*e", p, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    /* buf: [-]D.DDDDe[+-]XX -> the digits, the exponent of the first */
    const char *s = buf;
    char dig[24];
    int nd = 0;
    if (*s == '-')
        fputc('-', f), s++;
    for (; *s && *s != 'e'; s++)
        if (*s != '.')
            dig[nd++] = *s;
    int e = atoi(s + 1) + shift;
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    if (e < -6 || e >= 17) { /* far from 1: scientific, as %e writes it */
        fprintf(f, "%c%s%.*se%+03d", dig[0], nd > 1 ? "." : "", nd - 1, dig + 1, e);
        return;
    }
    if (e < 0) {
        fputs("0.", f);
        for (int i = 0; i < -e - 1; i++)
            fputc('0', f);
        fprintf(f, "%.*s", nd, dig);
        return;
    }
    for (int i = 0; i <= e || i < nd; i++) {
        if (i == e + 1)
            fputc('.', f);
        fputc(i < nd ? dig[i] : '0', f);
    }
}

int cs__calib_num_read(const char *text, size_t n, int shift, double *v)
{
    char buf[64];
    if (n == 0 || n >= sizeof(buf) - 8)
        return CS_ERR_PARSE;
    memcpy(buf, text, n);
    buf[n] = 0;
    char *e = strpbrk(buf, "eE");
    long x = 0;
    if (e) {
        char *end;
        x = strtol(e + 1, &end, 10);
        if (*end || end == e + 1 || x > 100000 || x < -100000)
            return CS_ERR_PARSE;
        *e = 0;
    }
    size_t m = strlen(buf);
    snprintf(buf + m, sizeof(buf) - m, "e%ld", x - shift);
    char *end;
    *v = strtod(buf, &end);
    return *end || end == buf ? CS_ERR_PARSE : CS_OK;
}
