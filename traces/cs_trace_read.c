/*
 * cs_trace_read.c - summaries of an existing trace directory (`collstep
 * trace`), rebuilt from its CSV files so that they stand on their own:
 *   links.csv     per tier: links, bytes, bandwidth, peak, busiest link
 *   tiers.csv     per tier: busy fraction (rows where <tier>_busy_links > 0)
 *   summary.json  the run's metadata (flat keys of "meta") and its busiest
 *                 rank's reductions ("reduction", when the backend charged
 *                 them): with a larger busy fraction than every tier's
 *                 busiest link they are the bottleneck
 * The figures follow the definitions of cs_trace.h, so they agree with
 * summary.json up to the printed precision.  A directory with index.csv
 * (several instances) is summarised instance by instance.
 */
#include <stdlib.h>
#include <string.h>

#include "cs_file.h"
#include "cs_grow.h"
#include "cs_trace_int.h"

#define RD_MAX_TIERS 32
#define RD_LINE 4096

typedef struct rd_tier {
    char name[32];
    uint32_t nlinks;
    double bytes, bw, peak, busy, best_util;
    char best[128];
} rd_tier_t;

#define RD_MAX_SW 16

typedef struct rd_link {
    char name[128], tier[32];
    double bytes, mean, peak;
} rd_link_t;

typedef struct rd {
    char dir[4096];
    char platform[64], coll[32], algo[64], model[32], backend[8];
    double bytes, ranks, time_us;
    rd_tier_t tiers[RD_MAX_TIERS];
    int ntiers, bottleneck;
    int red_rank, red_wins; /* the busiest rank's reductions (-1: none) */
    double red_frac;
    rd_link_t *top;
    int ntop;
    struct {
        char name[128];
        double ops, up, down, busy;
    } sw[RD_MAX_SW]; /* switches that reduced or multicast (summary.json "switches") */
    int nsw;
} rd_t;

static char *slurp(const char *path)
{
    char *buf;
    size_t n;
    return cs_file_read(path, 0, &buf, &n) == 0 ? buf : NULL;
}

/* Value of "key": in text: a string copied to s (n bytes) or a number. */
static int json_key(const char *text, const char *key, char *s, size_t n, double *num)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\":", key);
    const char *p = strstr(text, pat);
    if (!p)
        return -1;
    p += strlen(pat);
    while (*p == ' ')
        p++;
    if (*p == '"' && s) {
        size_t k = 0;
        for (p++; *p && *p != '"' && k + 1 < n; p++)
            s[k++] = *p == '\\' && p[1] ? *++p : *p;
        s[k] = 0;
        return 0;
    }
    if (num) {
        char *end;
        *num = strtod(p, &end);
        return end == p ? -1 : 0;
    }
    return -1;
}

static rd_tier_t *tier_of(rd_t *r, const char *name)
{
    for (int i = 0; i < r->ntiers; i++)
        if (strcmp(r->tiers[i].name, name) == 0)
            return &r->tiers[i];
    if (r->ntiers == RD_MAX_TIERS)
        return NULL;
    rd_tier_t *t = &r->tiers[r->ntiers++];
    memset(t, 0, sizeof(*t));
    snprintf(t->name, sizeof(t->name), "%s", name);
    t->best_util = -1;
    return t;
}

static int read_links(rd_t *r, int ntop, cs_err_t *err)
{
    char path[4200], line[RD_LINE];
    snprintf(path, sizeof(path), "%s/links.csv", r->dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return cs_err_set(err, CS_ERR_IO, "trace: cannot read %s", path);
    r->top = calloc((size_t)(ntop > 0 ? ntop : 1), sizeof(rd_link_t));
    if (!r->top) {
        fclose(f);
        return cs_err_set(err, CS_ERR_NOMEM, "trace: out of memory");
    }
    int lineno = 0, st = CS_OK;
    while (fgets(line, sizeof(line), f)) {
        if (++lineno == 1)
            continue;
        char name[128], tier[32];
        double bw, lat, bytes, mean, peak, busy;
        if (sscanf(line, "%127[^,],%31[^,],%lf,%lf,%lf,%lf,%lf,%lf", name, tier, &bw, &lat,
                   &bytes, &mean, &peak, &busy) != 8) {
            st = cs_err_set(err, CS_ERR_PARSE, "%s:%d:1: expected link,tier,bandwidth_GBps,"
                            "latency_us,bytes,mean_util,peak_util,busy_fraction", path, lineno);
            break;
        }
        rd_tier_t *t = tier_of(r, tier);
        if (!t)
            continue;
        t->nlinks++;
        t->bytes += bytes;
        t->bw += bw * 1e9;
        if (peak > t->peak)
            t->peak = peak;
        if (mean > t->best_util) {
            t->best_util = mean;
            snprintf(t->best, sizeof(t->best), "%s", name);
        }
        if (r->ntop < ntop) { /* the file is sorted busiest first */
            rd_link_t *l = &r->top[r->ntop++];
            snprintf(l->name, sizeof(l->name), "%s", name);
            snprintf(l->tier, sizeof(l->tier), "%s", tier);
            l->bytes = bytes;
            l->mean = mean;
            l->peak = peak;
        }
    }
    fclose(f);
    return st;
}

static void read_busy(rd_t *r)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/tiers.csv", r->dir);
    FILE *f = fopen(path, "r");
    char *line = malloc(1 << 16);
    int col[RD_MAX_TIERS], rows = 0, busy[RD_MAX_TIERS] = {0};
    if (!f || !line || !fgets(line, 1 << 16, f))
        goto out;
    for (int i = 0; i < r->ntiers; i++) {
        col[i] = -1;
        char want[64];
        snprintf(want, sizeof(want), "%s_busy_links", r->tiers[i].name);
        int c = 0;
        for (char *save = NULL, *tok = strtok_r(line, ",\n", &save); tok;
             tok = strtok_r(NULL, ",\n", &save), c++)
            if (strcmp(tok, want) == 0)
                col[i] = c;
        fseek(f, 0, SEEK_SET);
        if (!fgets(line, 1 << 16, f))
            goto out;
    }
    while (fgets(line, 1 << 16, f)) {
        double v[3 + 3 * RD_MAX_TIERS];
        int c = 0;
        for (char *save = NULL, *tok = strtok_r(line, ",\n", &save);
             tok && c < 3 + 3 * RD_MAX_TIERS; tok = strtok_r(NULL, ",\n", &save))
            v[c++] = strtod(tok, NULL);
        rows++;
        for (int i = 0; i < r->ntiers; i++)
            if (col[i] >= 0 && col[i] < c && v[col[i]] > 0)
                busy[i]++;
    }
    for (int i = 0; i < r->ntiers && rows; i++)
        r->tiers[i].busy = (double)busy[i] / rows;
out:
    free(line);
    if (f)
        fclose(f);
}

static int load(rd_t *r, const char *dir, int ntop, cs_err_t *err)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->dir, sizeof(r->dir), "%s", dir);
    char path[4200];
    snprintf(path, sizeof(path), "%s/summary.json", dir);
    char *text = slurp(path);
    if (!text)
        return cs_err_set(err, CS_ERR_IO, "trace: cannot read %s (not a trace directory?)", path);
    int bad = json_key(text, "platform", r->platform, sizeof(r->platform), NULL) |
              json_key(text, "coll", r->coll, sizeof(r->coll), NULL) |
              json_key(text, "algo", r->algo, sizeof(r->algo), NULL) |
              json_key(text, "backend", r->backend, sizeof(r->backend), NULL) |
              json_key(text, "bytes", NULL, 0, &r->bytes) |
              json_key(text, "ranks", NULL, 0, &r->ranks) |
              json_key(text, "time_us", NULL, 0, &r->time_us);
    json_key(text, "model", r->model, sizeof(r->model), NULL);
    const char *red = strstr(text, "\"reduction\":{");
    double rank = -1;
    r->red_rank = -1;
    if (red && json_key(red, "busiest_rank", NULL, 0, &rank) == 0 &&
        json_key(red, "busy_fraction", NULL, 0, &r->red_frac) == 0)
        r->red_rank = (int)rank;
    for (const char *w = strstr(text, "{\"switch\":"); w && r->nsw < RD_MAX_SW;
         w = strstr(w + 1, "{\"switch\":")) {
        int k = r->nsw;
        if (json_key(w, "switch", r->sw[k].name, sizeof(r->sw[k].name), NULL) == 0 &&
            json_key(w, "ops", NULL, 0, &r->sw[k].ops) == 0 &&
            json_key(w, "bytes_up", NULL, 0, &r->sw[k].up) == 0 &&
            json_key(w, "bytes_down", NULL, 0, &r->sw[k].down) == 0 &&
            json_key(w, "reduce_busy_fraction", NULL, 0, &r->sw[k].busy) == 0)
            r->nsw++;
    }
    free(text);
    if (bad || !(r->time_us > 0))
        return cs_err_set(err, CS_ERR_PARSE, "%s:1:1: expected meta with platform, coll, algo, "
                          "backend, bytes, ranks and time_us", path);
    int st = read_links(r, ntop, err);
    if (st != CS_OK)
        return st;
    read_busy(r);
    r->bottleneck = -1;
    for (int i = 0; i < r->ntiers; i++)
        if (r->bottleneck < 0 || r->tiers[i].best_util > r->tiers[r->bottleneck].best_util)
            r->bottleneck = i;
    r->red_wins = r->red_rank >= 0 &&
                  (r->bottleneck < 0 || r->red_frac > r->tiers[r->bottleneck].best_util);
    return CS_OK;
}

static double mean_of(const rd_t *r, const rd_tier_t *t)
{
    return t->bw > 0 ? t->bytes / (t->bw * r->time_us * 1e-6) : 0;
}

static void print_one(const rd_t *r, const char *sub, cs_trace_fmt_t fmt, int first, FILE *f)
{
    if (fmt == CS_TRACE_FMT_CSV) {
        if (first)
            fprintf(f, "dir,algo,coll,bytes,ranks,time_us,tier,links,bytes_moved,bandwidth_GBps,"
                       "mean_util,peak_util,busy_fraction,busiest_link,busiest_util,bottleneck\n");
        for (int i = 0; i < r->ntiers; i++) {
            const rd_tier_t *t = &r->tiers[i];
            fprintf(f, "%s,%s,%s,%.0f,%.0f,%.4f,%s,%u,%.0f,%.6g,%.6f,%.6f,%.6f,%s,%.6f,%d\n", sub,
                    r->algo, r->coll, r->bytes, r->ranks, r->time_us, t->name, t->nlinks, t->bytes,
                    t->bw / 1e9, mean_of(r, t), t->peak, t->busy, t->best, t->best_util,
                    i == r->bottleneck && !r->red_wins);
        }
        if (r->red_rank >= 0)
            fprintf(f, "%s,%s,%s,%.0f,%.0f,%.4f,reduction,0,0,0,%.6f,0,%.6f,rank %d,%.6f,%d\n",
                    sub, r->algo, r->coll, r->bytes, r->ranks, r->time_us, r->red_frac,
                    r->red_frac, r->red_rank, r->red_frac, r->red_wins);
        return;
    }
    if (fmt == CS_TRACE_FMT_JSON) {
        fprintf(f, "%s{\"dir\":\"%s\",\"algo\":\"%s\",\"coll\":\"%s\",\"platform\":\"%s\","
                   "\"backend\":\"%s\",\"bytes\":%.0f,\"ranks\":%.0f,\"time_us\":%.4f,\"tiers\":[",
                first ? "" : ",\n", sub, r->algo, r->coll, r->platform, r->backend, r->bytes,
                r->ranks, r->time_us);
        for (int i = 0; i < r->ntiers; i++) {
            const rd_tier_t *t = &r->tiers[i];
            fprintf(f, "%s{\"tier\":\"%s\",\"links\":%u,\"bytes\":%.0f,\"mean_util\":%.6f,"
                       "\"peak_util\":%.6f,\"busy_fraction\":%.6f,\"busiest_link\":\"%s\","
                       "\"busiest_link_mean_util\":%.6f}",
                    i ? "," : "", t->name, t->nlinks, t->bytes, mean_of(r, t), t->peak, t->busy,
                    t->best, t->best_util);
        }
        fprintf(f, "]");
        if (r->red_rank >= 0)
            fprintf(f, ",\"reduction\":{\"busiest_rank\":%d,\"busy_fraction\":%.6f}",
                    r->red_rank, r->red_frac);
        for (int k = 0; k < r->nsw; k++)
            fprintf(f, "%s{\"switch\":\"%s\",\"ops\":%.0f,\"bytes_up\":%.0f,\"bytes_down\":%.0f,"
                       "\"reduce_busy_fraction\":%.6f}%s",
                    k ? "," : ",\"switches\":[", r->sw[k].name, r->sw[k].ops, r->sw[k].up,
                    r->sw[k].down, r->sw[k].busy, k == r->nsw - 1 ? "]" : "");
        fprintf(f, ",\"bottleneck_tier\":\"%s\",\"links\":[",
                r->red_wins ? "reduction" : r->bottleneck >= 0 ? r->tiers[r->bottleneck].name : "");
        for (int j = 0; j < r->ntop; j++)
            fprintf(f, "%s{\"link\":\"%s\",\"tier\":\"%s\",\"bytes\":%.0f,\"mean_util\":%.6f,"
                       "\"peak_util\":%.6f}",
                    j ? "," : "", r->top[j].name, r->top[j].tier, r->top[j].bytes, r->top[j].mean,
                    r->top[j].peak);
        fprintf(f, "]}");
        return;
    }
    fprintf(f, "%s# %s %s on %s, %.0f ranks, %.0f B (%s%s%s): %.3f us\n", first ? "" : "\n",
            r->coll, r->algo, r->platform, r->ranks, r->bytes, r->backend, r->model[0] ? ", " : "",
            r->model, r->time_us);
    fprintf(f, "# %-12s %6s %14s %10s %9s %9s %9s  %s\n", "tier", "links", "bytes", "GB/s",
            "mean_util", "peak_util", "busy", "busiest link (mean util)");
    for (int i = 0; i < r->ntiers; i++) {
        const rd_tier_t *t = &r->tiers[i];
        fprintf(f, "  %-12s %6u %14.0f %10.1f %9.3f %9.3f %9.3f  %s (%.3f)%s\n", t->name,
                t->nlinks, t->bytes, t->bw / 1e9, mean_of(r, t), t->peak, t->busy, t->best,
                t->best_util, i == r->bottleneck && !r->red_wins ? "  <- bottleneck" : "");
    }
    if (r->red_rank >= 0)
        fprintf(f, "  %-12s rank %d's device reduced for %.3f of the run%s\n", "reduction",
                r->red_rank, r->red_frac, r->red_wins ? "  <- bottleneck" : "");
    for (int k = 0; k < r->nsw; k++)
        fprintf(f, "  %-12s %s: %.0f operations, %.0f bytes up, %.0f down, reduced for %.3f of "
                   "the run\n",
                "switch", r->sw[k].name, r->sw[k].ops, r->sw[k].up, r->sw[k].down, r->sw[k].busy);
    if (r->ntop > 0) {
        fprintf(f, "# busiest links\n# %-40s %-12s %14s %9s %9s\n", "link", "tier", "bytes",
                "mean_util", "peak_util");
        for (int j = 0; j < r->ntop; j++)
            fprintf(f, "  %-40s %-12s %14.0f %9.3f %9.3f\n", r->top[j].name, r->top[j].tier,
                    r->top[j].bytes, r->top[j].mean, r->top[j].peak);
    }
}

int cs_trace_summarize(const char *dir, cs_trace_fmt_t fmt, int nlinks, FILE *f, cs_err_t *err)
{
    char path[4200], line[RD_LINE];
    snprintf(path, sizeof(path), "%s/index.csv", dir);
    FILE *idx = fopen(path, "r");
    rd_t *r = malloc(sizeof(*r));
    int st = CS_OK, n = 0;
    if (!r) {
        if (idx)
            fclose(idx);
        return cs_err_set(err, CS_ERR_NOMEM, "trace: out of memory");
    }
    if (fmt == CS_TRACE_FMT_JSON)
        fprintf(f, "[");
    if (!idx) {
        st = load(r, dir, nlinks, err);
        if (st == CS_OK)
            print_one(r, ".", fmt, 1, f);
        free(r->top);
    } else {
        int lineno = 0;
        while (st == CS_OK && fgets(line, sizeof(line), idx)) {
            if (++lineno == 1)
                continue;
            line[strcspn(line, ",\n")] = 0;
            snprintf(path, sizeof(path), "%s/%s", dir, line);
            st = load(r, path, nlinks, err);
            if (st == CS_OK)
                print_one(r, line, fmt, n++ == 0, f);
            free(r->top);
        }
        fclose(idx);
    }
    if (fmt == CS_TRACE_FMT_JSON)
        fprintf(f, "]\n");
    free(r);
    if (st == CS_OK && ferror(f))
        st = cs_err_set(err, CS_ERR_IO, "trace: cannot write the summary");
    return st;
}

int cs_trace_read_tiers(const char *dir, cs_trace_tier_read_t *tiers, int max, int *ntiers,
                        double *time_us, cs_err_t *err)
{
    rd_t *r = calloc(1, sizeof(*r));
    if (!r)
        return cs_err_set(err, CS_ERR_NOMEM, "trace: out of memory");
    int st = load(r, dir, 0, err);
    if (st == CS_OK) {
        *ntiers = r->ntiers;
        *time_us = r->time_us;
        for (int i = 0; i < r->ntiers && i < max; i++) {
            const rd_tier_t *t = &r->tiers[i];
            cs_trace_tier_read_t *o = &tiers[i];
            memset(o, 0, sizeof(*o));
            snprintf(o->name, sizeof(o->name), "%s", t->name);
            o->nlinks = t->nlinks;
            o->bytes = t->bytes;
            o->bandwidth = t->bw;
            o->mean_util = mean_of(r, t);
            o->peak_util = t->peak;
            o->busy_fraction = t->busy;
            o->busiest_util = t->best_util > 0 ? t->best_util : 0;
        }
    }
    free(r->top);
    free(r);
    return st;
}
