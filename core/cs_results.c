/*
 * cs_results.c - see cs_results.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <stdlib.h>

#include "cs_out.h"
#include "cs_results.h"
#include "cs_results_int.h"

void cs_result_fill(cs_result_t *r, const char *algo, cs_coll_t coll, int ranks,
                    uint64_t size_bytes, cs_dtype_t dt, cs_op_t op, double time_us,
                    const char *platform)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->algo, sizeof(r->algo), "%s", algo ? algo : "");
    snprintf(r->platform, sizeof(r->platform), "%s", platform ? platform : "");
    r->coll = coll;
    r->ranks = ranks;
    r->size_bytes = size_bytes;
    r->dtype = dt;
    r->redop = op;
    r->count = cs_coll_block_count(coll, ranks, size_bytes, cs_dtype_size(dt));
    r->time_us = time_us;
    r->algbw_GBps = time_us > 0 ? (double)size_bytes / (time_us * 1e-6) / 1e9 : 0.0;
    r->busbw_GBps = r->algbw_GBps * cs_coll_busbw_factor(coll, ranks);
    r->wrong = -1;
    r->predicted_us = -1.0;
}

void cs_result_set_provenance(cs_result_t *r, const char *params, const char *model,
                              const char *transport)
{
    if (params)
        snprintf(r->params, sizeof(r->params), "%s", params);
    if (model)
        snprintf(r->model, sizeof(r->model), "%s", model);
    if (transport)
        snprintf(r->transport, sizeof(r->transport), "%s", transport);
}

static int same_size(const cs_result_t *a, const cs_result_t *b)
{
    return a->coll == b->coll && a->ranks == b->ranks && a->size_bytes == b->size_bytes;
}

int cs_results_compare(cs_result_t *rows, int n, const char *ref, cs_err_t *err)
{
    int found = ref == NULL;
    for (int i = 0; i < n; i++) {
        int first = -1, refi = -1, place = 1;
        for (int j = 0; j < n; j++) {
            if (!same_size(&rows[i], &rows[j]))
                continue;
            if (first < 0)
                first = j;
            if (ref && refi < 0 && !strcmp(rows[j].algo, ref))
                refi = j;
            /* faster rows, and equal ones listed earlier, come first */
            if (rows[j].time_us < rows[i].time_us || (rows[j].time_us == rows[i].time_us && j < i))
                place++;
        }
        found |= refi >= 0;
        const cs_result_t *rr = &rows[ref ? (refi >= 0 ? refi : i) : first];
        rows[i].place = place;
        rows[i].speedup = ref && refi < 0 ? -1.0
                          : rows[i].time_us > 0 ? rr->time_us / rows[i].time_us : 0.0;
    }
    if (!found)
        return cs_err_set(err, CS_ERR_NOTFOUND, "'%s' is not among the algorithms compared", ref);
    return CS_OK;
}

cs_results_fmt_t cs_results_fmt_parse(const char *s)
{
    static const char *const names[] = {"table", "csv", "json", "nccl-tests"};
    for (int i = 0; i < CS_FMT_COUNT; i++)
        if (s && strcmp(s, names[i]) == 0)
            return (cs_results_fmt_t)i;
    return CS_FMT_COUNT;
}

static int any_wrong(const cs_result_t *rows, int n)
{
    for (int i = 0; i < n; i++)
        if (rows[i].wrong >= 0)
            return 1;
    return 0;
}

static int any_pred(const cs_result_t *rows, int n)
{
    for (int i = 0; i < n; i++)
        if (rows[i].predicted_us >= 0)
            return 1;
    return 0;
}

static int any_compared(const cs_result_t *rows, int n)
{
    for (int i = 0; i < n; i++)
        if (rows[i].place > 0)
            return 1;
    return 0;
}

static const char *redop_name(const cs_result_t *r)
{
    return cs_redop_text(r->coll, r->redop);
}

int cs_results_print_table(FILE *f, const cs_result_t *rows, int n)
{
    int w = any_wrong(rows, n), p = any_pred(rows, n);
    for (int i = 0; i < n; i++) {
        const cs_result_t *r = &rows[i];
        if (i == 0 || strcmp(r->algo, rows[i - 1].algo) != 0 || r->ranks != rows[i - 1].ranks ||
            r->coll != rows[i - 1].coll || strcmp(r->params, rows[i - 1].params) != 0 ||
            strcmp(r->model, rows[i - 1].model) != 0 ||
            strcmp(r->platform, rows[i - 1].platform) != 0 ||
            strcmp(r->transport, rows[i - 1].transport) != 0) {
            /* a header per run of rows it describes whole (--model nccl:
             * the protocol may change with the size) */
            if (i > 0)
                fputc('\n', f);
            fprintf(f, "# %s %s", cs_coll_name(r->coll), r->algo);
            if (r->params[0])
                fprintf(f, " (%s)", r->params);
            fprintf(f, ", %d ranks", r->ranks);
            if (r->transport[0])
                fprintf(f, ", transport %s", r->transport);
            if (r->platform[0])
                fprintf(f, ", platform %s", r->platform);
            if (r->model[0])
                fprintf(f, ", model %s", r->model);
            fputc('\n', f);
            fprintf(f, "#%11s %12s %8s %6s %12s %8s %8s%s%s\n", "size", "count", "type", "redop",
                    "time", "algbw", "busbw", w ? "   #wrong" : "", p ? "  predicted" : "");
            fprintf(f, "#%11s %12s %8s %6s %12s %8s %8s%s%s\n", "(B)", "(elements)", "", "",
                    "(us)", "(GB/s)", "(GB/s)", w ? "         " : "", p ? "       (us)" : "");
        }
        fprintf(f, " %11llu %12llu %8s %6s %12.2f %8.2f %8.2f", (unsigned long long)r->size_bytes,
                (unsigned long long)r->count, cs_dtype_name(r->dtype), redop_name(r), r->time_us,
                r->algbw_GBps, r->busbw_GBps);
        if (w) {
            if (r->wrong >= 0)
                fprintf(f, " %8lld", (long long)r->wrong);
            else
                fprintf(f, " %8s", "N/A");
        }
        if (p) {
            if (r->predicted_us >= 0)
                fprintf(f, " %10.2f", r->predicted_us);
            else
                fprintf(f, " %10s", "N/A");
        }
        fputc('\n', f);
    }
    return ferror(f) ? CS_ERR_IO : CS_OK;
}

/* Text fields are names chosen by us (algorithms, presets) or file paths:
 * quote them, doubling quotes for CSV and escaping for JSON. */
static void csv_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void cs_json_write_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* JSON has no inf/nan */
static void json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fputs("null", f);
}

int cs_results_print_csv(FILE *f, const cs_result_t *rows, int n)
{
    int w = any_wrong(rows, n), p = any_pred(rows, n);
    int c = any_compared(rows, n);
    fprintf(f, "algo,coll,size_bytes,count,dtype,redop,time_us,algbw_GBps,busbw_GBps,ranks,"
               "platform,model,transport,params%s%s%s\n",
            w ? ",wrong" : "", p ? ",predicted_us" : "", c ? ",place,speedup" : "");
    for (int i = 0; i < n; i++) {
        const cs_result_t *r = &rows[i];
        csv_str(f, r->algo);
        fprintf(f, ",%s,%llu,%llu,%s,%s,%.6g,%.6g,%.6g,%d,", cs_coll_name(r->coll),
                (unsigned long long)r->size_bytes, (unsigned long long)r->count,
                cs_dtype_name(r->dtype), redop_name(r), r->time_us, r->algbw_GBps, r->busbw_GBps,
                r->ranks);
        csv_str(f, r->platform);
        fputc(',', f);
        csv_str(f, r->model);
        fputc(',', f);
        csv_str(f, r->transport);
        fputc(',', f);
        csv_str(f, r->params);
        if (w)
            fprintf(f, ",%lld", (long long)r->wrong);
        if (p)
            fprintf(f, ",%.6g", r->predicted_us);
        if (c)
            fprintf(f, ",%d,%.6g", r->place, r->speedup);
        fputc('\n', f);
    }
    return ferror(f) ? CS_ERR_IO : CS_OK;
}

int cs_results_print_json(FILE *f, const cs_result_t *rows, int n)
{
    fputs("[", f);
    for (int i = 0; i < n; i++) {
        const cs_result_t *r = &rows[i];
        fputs(i ? ",\n  {" : "\n  {", f);
        fputs("\"algo\": ", f);
        cs_json_write_str(f, r->algo);
        fputs(", \"params\": ", f);
        cs_json_write_str(f, r->params);
        fprintf(f, ", \"coll\": \"%s\", \"size_bytes\": %llu, \"count\": %llu, \"dtype\": \"%s\", "
                   "\"redop\": \"%s\", \"time_us\": ",
                cs_coll_name(r->coll), (unsigned long long)r->size_bytes,
                (unsigned long long)r->count, cs_dtype_name(r->dtype), redop_name(r));
        json_num(f, r->time_us);
        fputs(", \"algbw_GBps\": ", f);
        json_num(f, r->algbw_GBps);
        fputs(", \"busbw_GBps\": ", f);
        json_num(f, r->busbw_GBps);
        fprintf(f, ", \"ranks\": %d, \"platform\": ", r->ranks);
        cs_json_write_str(f, r->platform);
        fputs(", \"model\": ", f);
        cs_json_write_str(f, r->model);
        fputs(", \"transport\": ", f);
        cs_json_write_str(f, r->transport);
        if (r->place > 0) {
            fprintf(f, ", \"place\": %d, \"speedup\": ", r->place);
            json_num(f, r->speedup);
        }
        if (r->wrong >= 0)
            fprintf(f, ", \"wrong\": %lld", (long long)r->wrong);
        if (r->predicted_us >= 0) {
            fputs(", \"predicted_us\": ", f);
            json_num(f, r->predicted_us);
        }
        fputs("}", f);
    }
    fputs(n ? "\n]\n" : "]\n", f);
    return ferror(f) ? CS_ERR_IO : CS_OK;
}

/* One block per size, fastest first. */
int cs_results_print_compare(FILE *f, const cs_result_t *rows, int n)
{
    int w = any_wrong(rows, n);
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = same_size(&rows[i], &rows[j]);
        if (seen)
            continue;
        const cs_result_t *r = &rows[i];
        const char *where = r->transport[0] ? "transport" : "platform";
        fprintf(f, "%s# %s, %llu B (%llu %s), %d ranks, %s %s%s%s\n", i ? "\n" : "",
                cs_coll_name(r->coll), (unsigned long long)r->size_bytes,
                (unsigned long long)r->count, cs_dtype_name(r->dtype), r->ranks, where,
                r->transport[0] ? r->transport : r->platform, r->model[0] ? ", model " : "",
                r->model);
        fprintf(f, "#%5s  %-18s %12s %8s %8s %8s%s  %s\n", "place", "algorithm", "time",
                "algbw", "busbw", "speedup", w ? "   #wrong" : "", "parameters");
        fprintf(f, "#%5s  %-18s %12s %8s %8s\n", "", "", "(us)", "(GB/s)", "(GB/s)");
        for (int place = 1; place <= n; place++)
            for (int j = i; j < n; j++) {
                const cs_result_t *q = &rows[j];
                if (!same_size(r, q) || q->place != place)
                    continue;
                fprintf(f, " %5d  %-18s %12.2f %8.2f %8.2f", q->place, q->algo, q->time_us,
                        q->algbw_GBps, q->busbw_GBps);
                if (q->speedup >= 0)
                    fprintf(f, " %7.2fx", q->speedup);
                else
                    fprintf(f, " %8s", "N/A");
                if (w) {
                    if (q->wrong >= 0)
                        fprintf(f, " %8lld", (long long)q->wrong);
                    else
                        fprintf(f, " %8s", "N/A");
                }
                fprintf(f, "  %s\n", q->params[0] ? q->params : "-");
            }
    }
    return ferror(f) ? CS_ERR_IO : CS_OK;
}

int cs_results_print(FILE *f, cs_results_fmt_t fmt, unsigned flags, const cs_result_t *rows,
                     int n)
{
    switch (fmt) {
    case CS_FMT_TABLE:
        return (flags & CS_RESULTS_COMPARE) ? cs_results_print_compare(f, rows, n)
                                            : cs_results_print_table(f, rows, n);
    case CS_FMT_CSV:
        return cs_results_print_csv(f, rows, n);
    case CS_FMT_JSON:
        return cs_results_print_json(f, rows, n);
    default:
        return CS_ERR_INVAL;
    }
}

int cs_results_recognize(const char *head, size_t n)
{
    static const char *const starts[] = {"algo,coll,", "[]", "[\n  {\"algo\": "};
    for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++)
        if (n >= strlen(starts[i]) && !memcmp(head, starts[i], strlen(starts[i])))
            return 1;
    /* tables: "# allreduce ring ..." (per algorithm) or "# allreduce, 1024 B" (compare) */
    if (n < 3 || memcmp(head, "# ", 2))
        return 0;
    for (int c = 0; c < CS_COLL_COUNT; c++) {
        const char *name = cs_coll_name((cs_coll_t)c);
        size_t l = strlen(name);
        if (n > l + 2 && !memcmp(head + 2, name, l) && (head[l + 2] == ' ' || head[l + 2] == ','))
            return 1;
    }
    return 0;
}

const cs_out_kind_t cs_results_out_kind = {"results file", cs_results_recognize, NULL, NULL, NULL};

int cs__results_save_with(const char *path, unsigned flags,
                          int (*print)(FILE *f, const void *ctx), const void *ctx, cs_err_t *err)
{
    cs_out_t *o = NULL;
    int st = cs_out_begin_file(path, (flags & CS_RESULTS_FORCE) ? CS_OUT_FORCE : 0, &cs_results_out_kind,
                               &o, err);
    if (st != CS_OK)
        return st;
    st = print(cs_out_stream(o), ctx);
    if (st != CS_OK) {
        cs_out_abort(o);
        return cs_err_set(err, st, "cannot write %s: %s", path,
                          errno ? strerror(errno) : "write error");
    }
    return cs_out_commit(o, err);
}

typedef struct rows_job {
    cs_results_fmt_t fmt;
    unsigned flags;
    const cs_result_t *rows;
    int n;
} rows_job_t;

static int print_rows(FILE *f, const void *ctx)
{
    const rows_job_t *j = ctx;
    return cs_results_print(f, j->fmt, j->flags, j->rows, j->n);
}

int cs_results_save(const char *path, cs_results_fmt_t fmt, unsigned flags,
                    const cs_result_t *rows, int n, cs_err_t *err)
{
    rows_job_t j = {fmt, flags, rows, n};
    return cs__results_save_with(path, flags, print_rows, &j, err);
}
