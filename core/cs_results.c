/*
 * cs_results.c - see cs_results.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cs_results.h"

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

cs_results_fmt_t cs_results_fmt_parse(const char *s)
{
    static const char *const names[] = {"table", "csv", "json"};
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

static const char *redop_name(const cs_result_t *r)
{
    /* nccl-tests prints "none" for collectives that do not reduce */
    switch (r->coll) {
    case CS_COLL_ALLREDUCE:
    case CS_COLL_REDUCE_SCATTER:
    case CS_COLL_REDUCE:
        return cs_op_name(r->redop);
    default:
        return "none";
    }
}

int cs_results_print_table(FILE *f, const cs_result_t *rows, int n)
{
    int w = any_wrong(rows, n), p = any_pred(rows, n);
    for (int i = 0; i < n; i++) {
        const cs_result_t *r = &rows[i];
        if (i == 0 || strcmp(r->algo, rows[i - 1].algo) != 0 || r->ranks != rows[i - 1].ranks ||
            r->coll != rows[i - 1].coll) {
            if (i > 0)
                fputc('\n', f);
            fprintf(f, "# %s %s, %d ranks, platform %s\n", cs_coll_name(r->coll), r->algo, r->ranks,
                    r->platform);
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
    fprintf(f, "algo,coll,size_bytes,count,dtype,redop,time_us,algbw_GBps,busbw_GBps,ranks,platform%s%s\n",
            w ? ",wrong" : "", p ? ",predicted_us" : "");
    for (int i = 0; i < n; i++) {
        const cs_result_t *r = &rows[i];
        csv_str(f, r->algo);
        fprintf(f, ",%s,%llu,%llu,%s,%s,%.6g,%.6g,%.6g,%d,", cs_coll_name(r->coll),
                (unsigned long long)r->size_bytes, (unsigned long long)r->count,
                cs_dtype_name(r->dtype), redop_name(r), r->time_us, r->algbw_GBps, r->busbw_GBps,
                r->ranks);
        csv_str(f, r->platform);
        if (w)
            fprintf(f, ",%lld", (long long)r->wrong);
        if (p)
            fprintf(f, ",%.6g", r->predicted_us);
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

int cs_results_print(FILE *f, cs_results_fmt_t fmt, const cs_result_t *rows, int n)
{
    switch (fmt) {
    case CS_FMT_TABLE:
        return cs_results_print_table(f, rows, n);
    case CS_FMT_CSV:
        return cs_results_print_csv(f, rows, n);
    case CS_FMT_JSON:
        return cs_results_print_json(f, rows, n);
    default:
        return CS_ERR_INVAL;
    }
}

int cs_results_save(const char *path, cs_results_fmt_t fmt, const cs_result_t *rows, int n,
                    cs_err_t *err)
{
    char tmp[4096];
    int w = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
    if (w < 0 || (size_t)w >= sizeof(tmp))
        return cs_err_set(err, CS_ERR_IO, "%s: path too long", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return cs_err_set(err, CS_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    int st = cs_results_print(f, fmt, rows, n);
    if (fflush(f) != 0 || ferror(f))
        st = CS_ERR_IO;
    if (fclose(f) != 0)
        st = CS_ERR_IO;
    if (st == CS_OK && rename(tmp, path) != 0)
        st = CS_ERR_IO;
    if (st != CS_OK) {
        unlink(tmp);
        return cs_err_set(err, CS_ERR_IO, "cannot write %s: %s", path,
                          errno ? strerror(errno) : "write error");
    }
    return CS_OK;
}
