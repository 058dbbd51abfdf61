/*
 * validate_report.c - what `collstep validate` prints (validate_int.h): per
 * platform, in the nccl-tests layout, size count type redop algbw busbw (of
 * the measured time) plus measured, spread, predicted and error; per
 * algorithm and overall the median, geometric mean and worst |error|.
 * --format csv / json: one row per (platform, algorithm, size) with the
 * CPU time a rank spent per run (cpu_us) and the time its engine waited
 * for a core while runnable (runq_wait_us), and the summaries (json).  With
 * --trace the per-tier comparison follows the table (validate_trace.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cs_fit.h"
#include "cs_results.h"
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
const cs_out_kind_t val_out_kind = {"validation results file", out_recognize, NULL, NULL};

typedef struct stats3 {
    double med, geo, worst;
    int n;
} stats3_t;

/* |error| statistics of rows of platform `p` (algorithm `a`, or all: -1). */
static stats3_t err_stats(const val_t *v, int p, int a)
{
    stats3_t s = {0, 0, 0, 0};
    int n = v->nalgo * v->nsizes;
    double *e = calloc((size_t)n, sizeof(double)), lg = 0;
    for (int j = 0; j < n && e; j++) {
        if ((a >= 0 && j / v->nsizes != a) || !val_serves(v, j / v->nsizes, j % v->nsizes))
            continue;
        double m = v->meas[j].med, q = v->pred[(size_t)p * n + j];
        double x = m > 0 ? fabs(q - m) / m * 100 : 0;
        e[s.n++] = x;
        lg += log(x > 0.01 ? x : 0.01); /* |error| below 0.01 % counts as 0.01 % */
        s.worst = x > s.worst ? x : s.worst;
    }
    if (s.n) {
        s.geo = exp(lg / s.n);
        s.med = cs_fit_median(e, s.n);
    }
    free(e);
    return s;
}

static void print_table(const val_t *v, FILE *f, const char *transport)
{
    int n = v->nalgo * v->nsizes;
    for (int p = 0; p < v->o->nplats; p++) {
        const plat_spec_t *ps = &v->o->plats[p];
        fprintf(f, "# collstep validate %s, %d ranks on %d nodes, transport %s; predicted on %s "
                   "(%s model)\n", cs_coll_name(v->coll), v->l.nranks, v->l.nnodes, transport,
                ps->spec, cs_sim_model_name(ps->model));
        fprintf(f, "# %-8s %10s %11s %6s %5s %8s %8s %12s %7s %12s %8s\n", "algo", "size", "count",
                "type", "redop", "algbw", "busbw", "measured", "spread", "predicted", "error");
        fprintf(f, "# %-8s %10s %11s %6s %5s %8s %8s %12s %7s %12s %8s\n", "", "(B)", "(elements)",
                "", "", "(GB/s)", "(GB/s)", "(us)", "(%)", "(us)", "(%)");
        for (int j = 0; j < n; j++) {
            if (!val_serves(v, j / v->nsizes, j % v->nsizes))
                continue;
            const cs_sched_t *s = v->sched[j / v->nsizes];
            uint64_t b = v->sizes[j % v->nsizes];
            double m = v->meas[j].med, q = v->pred[(size_t)p * n + j];
            double algbw = m > 0 ? (double)b / m / 1e9 : 0;
            fprintf(f, "  %-8s %10llu %11llu %6s %5s %8.4f %8.4f %12.1f %7.1f %12.1f %+8.1f\n",
                    s->algo, (unsigned long long)b,
                    (unsigned long long)cs_coll_block_count(v->coll, v->l.nranks, b, 4), "float",
                    "sum", algbw, algbw * cs_coll_busbw_factor(v->coll, v->l.nranks), m * 1e6,
                    m > 0 ? (v->meas[j].p90 - v->meas[j].p10) / m * 100 : 0, q * 1e6,
                    m > 0 ? (q - m) / m * 100 : 0);
        }
        fprintf(f, "# |error|    %8s %8s %8s  (%%)\n", "median", "geomean", "worst");
        for (int a = 0; a <= v->nalgo; a++) {
            stats3_t s = err_stats(v, p, a < v->nalgo ? a : -1);
            fprintf(f, "#  %-9s %8.1f %8.1f %8.1f\n", a < v->nalgo ? v->sched[a]->algo : "overall",
                    s.med, s.geo, s.worst);
        }
        if (p + 1 < v->o->nplats)
            fprintf(f, "\n");
    }
}

/* One row of platform p, instance j (algorithm x size) of csv or json. */
typedef void (*row_fn)(const val_t *v, FILE *f, const char *transport, int p, int j, int first);

/* Every row: platforms in order, then the instances a schedule serves. */
static void each_row(const val_t *v, FILE *f, const char *transport, row_fn fn)
{
    int n = v->nalgo * v->nsizes, first = 1;
    for (int p = 0; p < v->o->nplats; p++)
        for (int j = 0; j < n; j++)
            if (val_serves(v, j / v->nsizes, j % v->nsizes)) {
                fn(v, f, transport, p, j, first);
                first = 0;
            }
}

static void csv_row(const val_t *v, FILE *f, const char *transport, int p, int j, int first)
{
    (void)first;
    int n = v->nalgo * v->nsizes, a = j / v->nsizes;
    uint64_t b = v->sizes[j % v->nsizes];
    const meas_t *x = &v->meas[j];
    double m = x->med, q = v->pred[(size_t)p * n + j];
    double algbw = m > 0 ? (double)b / m / 1e9 : 0;
    fprintf(f, "%s,\"%s\",%s,%llu,%llu,float,%d,%d,\"%s\",\"%s\",%s,%.3f,%.2f,%.3f,%.3f,%.3f,%.3f,"
               "%.3f,%.3f,%.6f,%.6f\n", v->sched[a]->algo, v->b.params[a], cs_coll_name(v->coll),
            (unsigned long long)b,
            (unsigned long long)cs_coll_block_count(v->coll, v->l.nranks, b, 4), v->l.nranks,
            v->l.nnodes, transport, v->o->plats[p].spec, cs_sim_model_name(v->o->plats[p].model),
            m * 1e6, m > 0 ? (x->p90 - x->p10) / m * 100 : 0, x->lo * 1e6, x->hi * 1e6,
            x->cpu * 1e6, x->runq * 1e6, q * 1e6, m > 0 ? (q - m) / m * 100 : 0, algbw,
            algbw * cs_coll_busbw_factor(v->coll, v->l.nranks));
}

static void print_csv(const val_t *v, FILE *f, const char *transport)
{
    fprintf(f, "algo,params,coll,size_bytes,count,dtype,ranks,nodes,transport,platform,model,"
               "measured_us,spread_pct,measured_min_us,measured_max_us,cpu_us,runq_wait_us,"
               "predicted_us,error_pct,algbw_GBps,busbw_GBps\n");
    each_row(v, f, transport, csv_row);
}

static void json_row(const val_t *v, FILE *f, const char *transport, int p, int j, int first)
{
    int n = v->nalgo * v->nsizes, a = j / v->nsizes;
    uint64_t b = v->sizes[j % v->nsizes];
    const meas_t *x = &v->meas[j];
    double m = x->med, q = v->pred[(size_t)p * n + j];
    fprintf(f, "%s\n{\"algo\":", first ? "" : ",");
    cs_json_write_str(f, v->sched[a]->algo);
    fprintf(f, ",\"params\":");
    cs_json_write_str(f, v->b.params[a]);
    fprintf(f, ",\"coll\":\"%s\",\"size_bytes\":%llu,\"count\":%llu,\"dtype\":\"float\","
               "\"ranks\":%d,\"nodes\":%d,\"transport\":", cs_coll_name(v->coll),
            (unsigned long long)b,
            (unsigned long long)cs_coll_block_count(v->coll, v->l.nranks, b, 4), v->l.nranks,
            v->l.nnodes);
    cs_json_write_str(f, transport);
    fprintf(f, ",\"platform\":");
    cs_json_write_str(f, v->o->plats[p].spec);
    fprintf(f, ",\"model\":\"%s\",\"measured_us\":%.3f,\"spread_pct\":%.2f,"
               "\"measured_min_us\":%.3f,\"measured_max_us\":%.3f,\"iters\":%ld,"
               "\"start_skew_us\":%.3f,\"cpu_us\":%.3f,\"runq_wait_us\":%.3f,"
               "\"predicted_us\":%.3f,\"error_pct\":%.3f}",
            cs_sim_model_name(v->o->plats[p].model), m * 1e6,
            m > 0 ? (x->p90 - x->p10) / m * 100 : 0, x->lo * 1e6, x->hi * 1e6, v->o->iters,
            x->skew * 1e6, x->cpu * 1e6, x->runq * 1e6, q * 1e6, m > 0 ? (q - m) / m * 100 : 0);
}

static void print_json(const val_t *v, FILE *f, const char *transport)
{
    fprintf(f, "{\"collstep_validate\":1,\"rows\":[");
    each_row(v, f, transport, json_row);
    fprintf(f, "],\n\"summary\":[");
    for (int p = 0, first = 1; p < v->o->nplats; p++)
        for (int a = 0; a <= v->nalgo; a++, first = 0) {
            stats3_t s = err_stats(v, p, a < v->nalgo ? a : -1);
            fprintf(f, "%s\n{\"algo\":", first ? "" : ",");
            cs_json_write_str(f, a < v->nalgo ? v->sched[a]->algo : "overall");
            fprintf(f, ",\"platform\":");
            cs_json_write_str(f, v->o->plats[p].spec);
            fprintf(f, ",\"model\":\"%s\",\"rows\":%d,\"median_abs_error_pct\":%.3f,"
                       "\"geomean_abs_error_pct\":%.3f,\"worst_abs_error_pct\":%.3f}",
                    cs_sim_model_name(v->o->plats[p].model), s.n, s.med, s.geo, s.worst);
        }
    fprintf(f, "]}\n");
}

int val_report(val_t *v)
{
    char transport[96];
    cs_live_transport_name(&v->o->live, transport, sizeof(transport));
    cs_results_fmt_t fmt = cs_results_fmt_parse(v->o->format);
    cs_out_t *out = NULL;
    FILE *f = stdout;
    if (v->o->live.output) {
        int fl = CS_OUT_STDOUT | (v->o->live.force ? CS_OUT_FORCE : 0);
        if (cs_out_begin_file(v->o->live.output, fl, &val_out_kind, &out, &v->l.err) != CS_OK) {
            fprintf(stderr, "collstep validate: -o %s: %s\n", v->o->live.output, v->l.err.msg);
            return CS_EXIT_USAGE;
        }
        f = cs_out_stream(out);
    }
    if (fmt == CS_FMT_CSV)
        print_csv(v, f, transport);
    else if (fmt == CS_FMT_JSON)
        print_json(v, f, transport);
    else
        print_table(v, f, transport);
    if (out && cs_out_commit(out, &v->l.err) != CS_OK) {
        fprintf(stderr, "collstep validate: -o %s: %s\n", v->o->live.output, v->l.err.msg);
        return CS_EXIT_RUNTIME;
    }
    int rc = CS_EXIT_OK;
    if (v->o->trace) /* the comparison goes with a table on stdout, else to stderr */
        rc = val_trace_finish(v, fmt == CS_FMT_TABLE && !out ? stdout : stderr);
    fflush(stdout);
    return rc;
}
