/*
 * cs_results_nccl.c - results in the layout of nccl-tests
 * CS_NCCL_TESTS_VERSION (see cs_results.h).
 *
 * The formats are those of nccl-tests' src/util.cu: writeDeviceReport (the
 * version, program and sweep lines, "# Using devices"), writeResultHeader
 * (the column header without per-iteration timing or timestamps),
 * writeBenchmarkLinePreamble and writeBenchmarkLineBody (a row: size,
 * count, type, redop, root, then time, algbw, busbw and #wrong out of place
 * and in place, numbers narrowed by getFloatStr to fit their columns),
 * writeResultFooter, finalizeFooter and writeErrors (the closing lines; the
 * last is empty when NCCL reported no error).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_results.h"
#include "cs_results_int.h"

int cs_nccl_sweep(const uint64_t *sizes, int n, uint64_t *min, uint64_t *max, uint64_t *step,
                  int *factor)
{
    if (n < 1 || sizes[0] == 0)
        return CS_ERR_INVAL;
    *min = sizes[0], *max = sizes[n - 1];
    if (n == 1) { /* nccl-tests' default step: -i 1048576 */
        *step = 1048576, *factor = 0;
        return CS_OK;
    }
    int geo = sizes[1] % sizes[0] == 0 && sizes[1] / sizes[0] >= 2, ari = sizes[1] > sizes[0];
    uint64_t f = sizes[1] / sizes[0], d = sizes[1] - sizes[0];
    for (int i = 1; i < n; i++) {
        geo = geo && sizes[i] / f == sizes[i - 1] && sizes[i] % f == 0; /* f >= 2 when geo */
        ari &= sizes[i] > sizes[i - 1] && sizes[i] - sizes[i - 1] == d;
    }
    if (!geo && !ari)
        return CS_ERR_INVAL;
    *step = geo ? f : d, *factor = geo;
    return CS_OK;
}

const char *cs_nccl_program(cs_coll_t c)
{
    static const char *const names[CS_COLL_COUNT] = {
        "all_reduce_perf", "reduce_scatter_perf", "all_gather_perf",
        "broadcast_perf",  "reduce_perf",         "alltoall_perf"};
    return (unsigned)c < CS_COLL_COUNT ? names[c] : "unknown_perf";
}

/* getFloatStr: two decimals, else one, else none, else an exponent. */
static void float_str(double v, int width, char *out)
{
    if (snprintf(out, (size_t)width + 1, "%*.2f", width, v) <= width)
        return;
    if (snprintf(out, (size_t)width + 1, "%*.1f", width, v) <= width)
        return;
    if (snprintf(out, (size_t)width + 1, "%*.0f", width, v) <= width)
        return;
    snprintf(out, (size_t)width + 1, width >= 7 ? "%*.1e" : "%*.0e", width, v);
}

/* nccl-tests names the operation of collectives that do not reduce "none". */
static const char *op_of(const cs_result_t *r)
{
    return cs_redop_text(r->coll, r->redop);
}

typedef struct host_rank {
    const char *host;
    int rank;
} host_rank_t;

static int cmp_host_rank(const void *a, const void *b)
{
    const host_rank_t *x = a, *y = b;
    int c = strcmp(x->host, y->host);
    return c ? c : (x->rank > y->rank) - (x->rank < y->rank);
}

/* "# Using devices": device = the rank's place among the ranks of its host. */
static int print_devices(FILE *f, const cs_nccl_table_t *t)
{
    host_rank_t *v = malloc(sizeof(*v) * (size_t)(t->ranks > 0 ? t->ranks : 1));
    int *dev = malloc(sizeof(int) * (size_t)(t->ranks > 0 ? t->ranks : 1));
    if (!v || !dev) {
        free(v), free(dev);
        return CS_ERR_NOMEM;
    }
    for (int r = 0; r < t->ranks; r++)
        v[r] = (host_rank_t){t->hosts[r], r};
    qsort(v, (size_t)t->ranks, sizeof(*v), cmp_host_rank);
    for (int i = 0, k = 0; i < t->ranks; i++) {
        k = i > 0 && strcmp(v[i].host, v[i - 1].host) == 0 ? k + 1 : 0;
        dev[v[i].rank] = k;
    }
    fprintf(f, "# Using devices\n");
    for (int r = 0; r < t->ranks; r++)
        fprintf(f, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n", r, 0,
                0, t->hosts[r], t->devnum ? t->devnum[r] : dev[r], 0u, 0u, 0u, t->devices[r]);
    free(v), free(dev);
    return CS_OK;
}

static void print_body(FILE *f, const cs_nccl_table_t *t, const cs_result_t *r)
{
    char time[8], alg[7], bus[7];
    float_str(r->time_us, 7, time);
    float_str(r->algbw_GBps, 6, alg);
    float_str(r->busbw_GBps, 6, bus);
    if (t->validation)
        fprintf(f, "  %7s  %6s  %6s  %6g", time, alg, bus, (double)(r->wrong > 0 ? r->wrong : 0));
    else
        fprintf(f, "  %7s  %6s  %6s    N/A", time, alg, bus);
}

static int print_table(FILE *f, const cs_nccl_table_t *t)
{
    const char *title = t->title ? t->title : "";
    while (*title) {
        size_t l = strcspn(title, "\n");
        fprintf(f, "# %.*s\n", (int)l, title);
        title += l + (title[l] == '\n');
    }
    cs_coll_t coll = t->n > 0 ? t->rows[0].coll : CS_COLL_ALLREDUCE;
    const char *prog = cs_nccl_program(coll);
    fprintf(f, "# nccl-tests version %s nccl-headers=%d nccl-library=%d\n", CS_NCCL_TESTS_VERSION,
            0, 0);
    fprintf(f, "# Collective test starting: %s\n", prog);
    fprintf(f, "# nThread %d nGpus %d minBytes %ld maxBytes %ld step: %ld(%s) warmup iters: %d "
               "iters: %d agg iters: %d validation: %d graph: %d unalign: %d\n",
            1, 1, (long)t->min_bytes, (long)t->max_bytes, (long)t->step,
            t->step_factor ? "factor" : "bytes", 0, 1, 1, t->validation, 0, 0);
    fprintf(f, "#\n");
    int st = print_devices(f, t);
    if (st != CS_OK)
        return st;
    fprintf(f, "#\n");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place"
               "          \n",
            "", "", "", "", "");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "size",
            "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
            "busbw", "#wrong", 0, "");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "(B)",
            "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
            "", 0, "");
    double bw = 0;
    int errors = 0;
    for (int i = 0; i < t->n; i++) {
        const cs_result_t *r = &t->rows[i];
        char root[16];
        snprintf(root, sizeof(root), "%6i", cs_coll_has_root(r->coll) ? t->root : -1);
        fprintf(f, "%12li  %12li  %8s  %6s  %6s", (long)r->size_bytes, (long)r->count,
                cs_dtype_name(r->dtype), op_of(r), root);
        print_body(f, t, r); /* out of place */
        print_body(f, t, r); /* in place */
        fputc('\n', f);
        bw += r->busbw_GBps; /* nccl-tests adds each placement's busbw */
        bw += r->busbw_GBps;
        errors += t->validation && r->wrong > 0 ? 2 : 0;
    }
    fprintf(f, "# %-20s : %d %s\n", "Out of bounds values", errors, errors ? "FAILED" : "OK");
    fprintf(f, "# %-20s : %g %s\n", "Avg bus bandwidth", t->n ? bw / (2 * t->n) : 0.0, "");
    fprintf(f, "#\n");
    fprintf(f, "# Collective test concluded: %s\n", prog);
    fprintf(f, "#\n");
    fprintf(f, "\n");
    return CS_OK;
}

int cs_results_print_nccl(FILE *f, const cs_nccl_table_t *t, int ntables)
{
    for (int i = 0; i < ntables; i++) {
        int st = print_table(f, &t[i]);
        if (st != CS_OK)
            return st;
    }
    return ferror(f) ? CS_ERR_IO : CS_OK;
}

typedef struct nccl_job {
    const cs_nccl_table_t *t;
    int n;
} nccl_job_t;

static int print_job(FILE *f, const void *ctx)
{
    const nccl_job_t *j = ctx;
    return cs_results_print_nccl(f, j->t, j->n);
}

int cs_results_save_nccl(const char *path, unsigned flags, const cs_nccl_table_t *t, int ntables,
                         cs_err_t *err)
{
    nccl_job_t j = {t, ntables};
    return cs__results_save_with(path, flags, print_job, &j, err);
}
