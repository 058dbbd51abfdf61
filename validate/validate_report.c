/*
 * validate_report.c - a validation's report (cs_validate.h): per platform,
 * in the nccl-tests layout, size count type redop algbw busbw (of the
 * measured time) plus measured, spread, predicted and error; per
 * algorithm and overall the median, geometric mean and worst |error|.
 * csv / json: one row per (platform, algorithm, size) with the CPU time a
 * rank spent per run (cpu_us) and the time its engine waited for a core
 * while runnable (runq_wait_us), and the summaries (json).  Cases measured
 * elsewhere (v->cases) bring their own collective, ranks, type and
 * operator per algorithm, a note line before their rows, and statistics
 * per group; csv gets the columns group, redop, predicted_as.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "validate_int.h"

static int out_recognize(const char *head, size_t n)
{
    static const char *k[] = {"# collstep validate", "algo,params,coll,size_bytes,",
                              "{\"collstep_validate\""};
    for (int i = 0; i < 3; i++)
        if (n >= strlen(k[i]) && memcmp(head, k[i], strlen(k[i])) == 0)
            return 1;
    return 0;
}
const cs_out_kind_t cs_validate_out_kind = {"validation results file", out_recognize, NULL, NULL, NULL};

/* The |error| statistics of platform p, algorithm a (or all: -1); rows
 * were checked by cs_validate_write. */
static cs_validate_stats_t stats(const cs_validate_t *v, cs_validate_row_t *rows, int p, int a)
{
    cs_validate_stats_t s;
    cs_err_t err;
    int n = cs_validate_rows(v, p, rows);
    if (cs_validate_error_stats(rows, n, a, 0, UINT64_MAX, &s, &err) != CS_OK)
        memset(&s, 0, sizeof(s));
    return s;
}

/* The case of algorithm a: its own, or the report's (float sum). */
static cs_validate_case_t case_of(const cs_validate_t *v, int a)
{
    if (v->cases)
        return v->cases[a];
    return (cs_validate_case_t){v->coll, v->nranks, v->nnodes, CS_DT_F32, CS_OP_SUM, -1, ""};
}

/* The operator column as nccl-tests prints it. */
static const char *redop_of(cs_validate_case_t c)
{
    return cs_redop_text(c.coll, c.op);
}

static uint64_t count_of(const cs_validate_t *v, int a, uint64_t b)
{
    cs_validate_case_t c = case_of(v, a);
    return cs_coll_block_count(c.coll, c.nranks, b, cs_dtype_size(c.dtype));
}

static double busbw_factor(const cs_validate_t *v, int a)
{
    cs_validate_case_t c = case_of(v, a);
    return cs_coll_busbw_factor(c.coll, c.nranks);
}

/* The |error| statistics of platform p, group g's algorithms. */
static cs_validate_stats_t group_stats(const cs_validate_t *v, cs_validate_row_t *rows, int p,
                                       int g)
{
    cs_validate_stats_t s;
    cs_err_t err;
    int n = cs_validate_rows(v, p, rows), m = 0;
    for (int j = 0; j < n; j++)
        if (v->cases[rows[j].algo].group == g)
            rows[m++] = rows[j];
    if (cs_validate_error_stats(rows, m, -1, 0, UINT64_MAX, &s, &err) != CS_OK)
        memset(&s, 0, sizeof(s));
    return s;
}

static const char *how_of(const cs_validate_t *v, int j)
{
    return v->how && v->how[j] ? v->how[j] : "";
}

/* A summary line of the table: "-" for a group or schedule without rows
 * (a log whose tables were all skipped), not a perfect 0.0 */
static void stats_line(FILE *f, const char *name, const cs_validate_stats_t *s)
{
    if (s->n > 0)
        fprintf(f, "#  %-9s %8.1f %8.1f %8.1f\n", name, s->median, s->geomean, s->worst);
    else
        fprintf(f, "#  %-9s %8s %8s %8s  (no rows)\n", name, "-", "-", "-");
}

/* The summary's figures in JSON: null where there are no rows */
static void stats_json(FILE *f, const cs_validate_stats_t *s)
{
    if (s->n > 0)
        fprintf(f, ",\"rows\":%d,\"median_abs_error_pct\":%.3f,\"geomean_abs_error_pct\":%.3f,"
                   "\"worst_abs_error_pct\":%.3f}", s->n, s->median, s->geomean, s->worst);
    else
        fprintf(f, ",\"rows\":0,\"median_abs_error_pct\":null,\"geomean_abs_error_pct\":null,"
                   "\"worst_abs_error_pct\":null}");
}

static void print_table(const cs_validate_t *v, cs_validate_row_t *rows, FILE *f)
{
    int n = v->nalgo * v->nsizes;
    for (int p = 0; p < v->nplats; p++) {
        const cs_validate_plat_t *ps = &v->plats[p];
        if (v->cases)
            fprintf(f, "# collstep validate, measured by %s; predicted on %s (%s model)\n",
                    v->transport, ps->spec, cs_sim_model_name(ps->model));
        else
            fprintf(f, "# collstep validate %s, %d ranks on %d nodes, transport %s; predicted on "
                       "%s (%s model)\n", cs_coll_name(v->coll), v->nranks, v->nnodes,
                    v->transport, ps->spec, cs_sim_model_name(ps->model));
        fprintf(f, "# %-8s %10s %11s %6s %5s %8s %8s %12s %7s %12s %8s\n", "algo", "size", "count",
                "type", "redop", "algbw", "busbw", "measured", "spread", "predicted", "error");
        fprintf(f, "# %-8s %10s %11s %6s %5s %8s %8s %12s %7s %12s %8s\n", "", "(B)", "(elements)",
                "", "", "(GB/s)", "(GB/s)", "(us)", "(%)", "(us)", "(%)");
        for (int j = 0, noted = -1; j < n; j++) {
            int a = j / v->nsizes;
            if (!cs_validate_serves(v, a, j % v->nsizes))
                continue;
            cs_validate_case_t c = case_of(v, a);
            if (a != noted && c.note && c.note[0])
                fprintf(f, "# %s\n", c.note);
            noted = a;
            uint64_t b = v->sizes[j % v->nsizes];
            double m = v->meas[j].med, q = v->pred[(size_t)p * n + j];
            double algbw = m > 0 ? (double)b / m / 1e9 : 0;
            const char *how = how_of(v, j);
            /* one measurement per size (a log's row): no spread to show */
            char sp[16] = "-";
            if (v->iters > 1)
                snprintf(sp, sizeof(sp), "%.1f",
                         m > 0 ? (v->meas[j].p90 - v->meas[j].p10) / m * 100 : 0);
            fprintf(f, "  %-8s %10llu %11llu %6s %5s %8.4f %8.4f %12.1f %7s %12.1f %+8.1f%s%s\n",
                    v->algo[a], (unsigned long long)b, (unsigned long long)count_of(v, a, b),
                    cs_dtype_name(c.dtype), redop_of(c), algbw, algbw * busbw_factor(v, a),
                    m * 1e6, sp, q * 1e6,
                    m > 0 && fabs(round((q - m) / m * 1000)) > 0 ? (q - m) / m * 100 : 0.0,
                    /* 0.0, not -0.0, where it prints as zero */
                    how[0] ? "  " : "", how);
        }
        fprintf(f, "# |error|    %8s %8s %8s  (%%)\n", "median", "geomean", "worst");
        for (int a = 0; a <= v->nalgo; a++) {
            cs_validate_stats_t s = stats(v, rows, p, a < v->nalgo ? a : -1);
            for (int g = 0; a == v->nalgo && v->cases && g < v->ngroups; g++) {
                cs_validate_stats_t gs = group_stats(v, rows, p, g);
                stats_line(f, v->group[g], &gs);
            }
            stats_line(f, a < v->nalgo ? v->algo[a] : "overall", &s);
        }
        if (p + 1 < v->nplats)
            fprintf(f, "\n");
    }
}

/* One row of platform p, case j (algorithm x size) of csv or json. */
typedef void (*row_fn)(const cs_validate_t *v, FILE *f, int p, int j, int first);

/* Every row: platforms in order, then the cases a schedule serves. */
static void each_row(const cs_validate_t *v, FILE *f, row_fn fn)
{
    int n = v->nalgo * v->nsizes, first = 1;
    for (int p = 0; p < v->nplats; p++)
        for (int j = 0; j < n; j++)
            if (cs_validate_serves(v, j / v->nsizes, j % v->nsizes)) {
                fn(v, f, p, j, first);
                first = 0;
            }
}

static void csv_row(const cs_validate_t *v, FILE *f, int p, int j, int first)
{
    (void)first;
    int n = v->nalgo * v->nsizes, a = j / v->nsizes;
    uint64_t b = v->sizes[j % v->nsizes];
    const cs_validate_meas_t *x = &v->meas[j];
    double m = x->med, q = v->pred[(size_t)p * n + j];
    double algbw = m > 0 ? (double)b / m / 1e9 : 0;
    cs_validate_case_t c = case_of(v, a);
    char sp[24] = ""; /* one measurement per size (a log's row): no spread, empty */
    if (v->iters > 1)
        snprintf(sp, sizeof(sp), "%.2f", m > 0 ? (x->p90 - x->p10) / m * 100 : 0);
    fprintf(f, "%s,\"%s\",%s,%llu,%llu,%s,%d,%d,\"%s\",\"%s\",%s,%.3f,%s,%.3f,%.3f,%.3f,%.3f,"
               "%.3f,%.3f,%.6f,%.6f", v->algo[a], v->params[a], cs_coll_name(c.coll),
            (unsigned long long)b, (unsigned long long)count_of(v, a, b), cs_dtype_name(c.dtype),
            c.nranks, c.nnodes, v->transport, v->plats[p].spec,
            cs_sim_model_name(v->plats[p].model), m * 1e6, sp, x->lo * 1e6, x->hi * 1e6, x->cpu * 1e6,
            x->runq * 1e6, q * 1e6, m > 0 ? (q - m) / m * 100 : 0, algbw,
            algbw * busbw_factor(v, a));
    if (v->cases) /* the group, the operator and what was simulated */
        fprintf(f, ",\"%s\",%s,\"%s\"", c.group >= 0 ? v->group[c.group] : "", redop_of(c),
                how_of(v, j));
    if (v->cases && v->why) { /* a sentence: its quotes doubled, as CSV quotes them */
        const char *w = v->why[j] ? v->why[j] : "";
        fputs(",\"", f);
        for (; *w; w++)
            fputs(*w == '"' ? "\"\"" : (char[2]){*w, 0}, f);
        fputc('"', f);
    }
    fprintf(f, "\n");
}

static void print_csv(const cs_validate_t *v, FILE *f)
{
    fprintf(f, "algo,params,coll,size_bytes,count,dtype,ranks,nodes,transport,platform,model,"
               "measured_us,spread_pct,measured_min_us,measured_max_us,cpu_us,runq_wait_us,"
               "predicted_us,error_pct,algbw_GBps,busbw_GBps%s\n",
            v->cases ? (v->why ? ",group,redop,predicted_as,off_why" : ",group,redop,predicted_as")
                     : "");
    each_row(v, f, csv_row);
}

static void json_row(const cs_validate_t *v, FILE *f, int p, int j, int first)
{
    int n = v->nalgo * v->nsizes, a = j / v->nsizes;
    uint64_t b = v->sizes[j % v->nsizes];
    const cs_validate_meas_t *x = &v->meas[j];
    double m = x->med, q = v->pred[(size_t)p * n + j];
    fprintf(f, "%s\n{\"algo\":", first ? "" : ",");
    cs_json_write_str(f, v->algo[a]);
    fprintf(f, ",\"params\":");
    cs_json_write_str(f, v->params[a]);
    cs_validate_case_t c = case_of(v, a);
    if (v->cases) {
        fprintf(f, ",\"group\":");
        cs_json_write_str(f, c.group >= 0 ? v->group[c.group] : "");
        fprintf(f, ",\"redop\":\"%s\",\"predicted_as\":", redop_of(c));
        cs_json_write_str(f, how_of(v, j));
    }
    if (v->why) {
        fprintf(f, ",\"off_why\":");
        cs_json_write_str(f, v->why[j] ? v->why[j] : "");
    }
    fprintf(f, ",\"coll\":\"%s\",\"size_bytes\":%llu,\"count\":%llu,\"dtype\":\"%s\","
               "\"ranks\":%d,\"nodes\":%d,\"transport\":", cs_coll_name(c.coll),
            (unsigned long long)b, (unsigned long long)count_of(v, a, b), cs_dtype_name(c.dtype),
            c.nranks, c.nnodes);
    cs_json_write_str(f, v->transport);
    fprintf(f, ",\"platform\":");
    cs_json_write_str(f, v->plats[p].spec);
    char sp[24] = "null"; /* one measurement per size (a log's row): no spread */
    if (v->iters > 1)
        snprintf(sp, sizeof(sp), "%.2f", m > 0 ? (x->p90 - x->p10) / m * 100 : 0);
    fprintf(f, ",\"model\":\"%s\",\"measured_us\":%.3f,\"spread_pct\":%s,"
               "\"measured_min_us\":%.3f,\"measured_max_us\":%.3f,\"iters\":%ld,"
               "\"start_skew_us\":%.3f,\"cpu_us\":%.3f,\"runq_wait_us\":%.3f,"
               "\"predicted_us\":%.3f,\"error_pct\":%.3f,\"algbw_GBps\":%.6f,"
               "\"busbw_GBps\":%.6f}",
            cs_sim_model_name(v->plats[p].model), m * 1e6, sp, x->lo * 1e6, x->hi * 1e6, v->iters,
            x->skew * 1e6, x->cpu * 1e6, x->runq * 1e6, q * 1e6, m > 0 ? (q - m) / m * 100 : 0,
            m > 0 ? (double)b / m / 1e9 : 0,
            (m > 0 ? (double)b / m / 1e9 : 0) * busbw_factor(v, a));
}

static void print_json(const cs_validate_t *v, cs_validate_row_t *rows, FILE *f)
{
    fprintf(f, "{\"collstep_validate\":1,\"rows\":[");
    each_row(v, f, json_row);
    fprintf(f, "],\n\"summary\":[");
    for (int p = 0, first = 1; p < v->nplats; p++) {
        for (int g = 0; v->cases && g < v->ngroups; g++, first = 0) {
            cs_validate_stats_t s = group_stats(v, rows, p, g);
            fprintf(f, "%s\n{\"group\":", first ? "" : ",");
            cs_json_write_str(f, v->group[g]);
            fprintf(f, ",\"platform\":");
            cs_json_write_str(f, v->plats[p].spec);
            fprintf(f, ",\"model\":\"%s\"", cs_sim_model_name(v->plats[p].model));
            stats_json(f, &s);
        }
        for (int a = 0; a <= v->nalgo; a++, first = 0) {
            cs_validate_stats_t s = stats(v, rows, p, a < v->nalgo ? a : -1);
            fprintf(f, "%s\n{\"algo\":", first ? "" : ",");
            cs_json_write_str(f, a < v->nalgo ? v->algo[a] : "overall");
            fprintf(f, ",\"platform\":");
            cs_json_write_str(f, v->plats[p].spec);
            fprintf(f, ",\"model\":\"%s\"", cs_sim_model_name(v->plats[p].model));
            stats_json(f, &s);
        }
    }
    fprintf(f, "]");
    if (v->terms) {
        fprintf(f, ",\n\"fitted_terms\":");
        cs_json_write_str(f, v->terms);
    }
    if (v->notes) {
        fprintf(f, ",\n\"notes\":[");
        for (const char *p = v->notes, *q; *p; p = q + (*q == '\n')) {
            q = p + strcspn(p, "\n");
            char *line = strndup(p, (size_t)(q - p)); /* each line whole */
            fprintf(f, "%s\n", p == v->notes ? "" : ",");
            cs_json_write_str(f, line ? line : "");
            free(line);
        }
        fprintf(f, "]");
    }
    fprintf(f, "}\n");
}

int cs_validate_write(const cs_validate_t *v, cs_results_fmt_t fmt, FILE *f, cs_err_t *err)
{
    size_t n = (size_t)v->nalgo * (size_t)v->nsizes;
    cs_validate_row_t *rows = calloc(n ? n : 1, sizeof(*rows));
    if (!rows)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    int st = CS_OK;
    for (int p = 0; p < v->nplats && st == CS_OK; p++) { /* refuse before writing */
        cs_validate_stats_t s;
        st = cs_validate_error_stats(rows, cs_validate_rows(v, p, rows), -1, 0, UINT64_MAX, &s,
                                     err);
    }
    if (st == CS_OK && fmt == CS_FMT_CSV)
        print_csv(v, f);
    else if (st == CS_OK && fmt == CS_FMT_JSON)
        print_json(v, rows, f);
    else if (st == CS_OK)
        print_table(v, rows, f);
    for (const char *p = v->notes, *q; st == CS_OK && fmt == CS_FMT_TABLE && p && *p;
         p = q + (*q == '\n')) {
        q = p + strcspn(p, "\n");
        fprintf(f, "# %.*s\n", (int)(q - p), p);
    }
    free(rows);
    return st;
}
