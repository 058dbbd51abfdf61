/*
 * cs_trace_session.c - an output directory written whole or not at all
 * (contract in cs_trace.h), through core/cs_out.h: an existing DIR is
 * replaced only when it is a collstep trace (the .collstep-trace marker).
 *
 * open:   cs_out_begin_dir: check DIR, mkdir DIR.tmp.<pid> with the marker
 * begin:  with several instances, mkdir DIR.tmp.<pid>/<algo>-<bytes>/
 *         (a "-2", "-3" suffix if the name repeats); create the trace there
 * end:    finish and write the trace, note its row for index.csv, free it
 * commit: run gnuplot in every instance directory (a missing gnuplot is a
 *         warning: the plot is optional, the data is not), write index.csv
 *         (several instances), then cs_out_commit: DIR is checked again,
 *         DIR -> DIR.old.<pid> if it exists, DIR.tmp.<pid> -> DIR, and the
 *         old tree is removed
 * close:  an uncommitted temporary tree is removed (cs_out_abort)
 */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cs_log.h"
#include "cs_out.h"
#include "cs_trace_int.h"

typedef struct inst_row {
    char sub[160];
    cs_trace_meta_t meta;
    double time_us;
    char bottleneck[32];
} inst_row_t;

struct cs_trace_session {
    char *dir;
    const char *tmp; /* the cs_out temporary: DIR.tmp.<pid> */
    cs_out_t *out;
    cs_trace_opts_t opts;
    int ninst, cur_i;
    inst_row_t *rows;
    cs_trace_t *cur;
    int committed;
    cs_err_t err;
};

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

int cs_trace_rmtree(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return errno == ENOENT ? CS_OK : CS_ERR_IO;
    return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) == 0 ? CS_OK : CS_ERR_IO;
}

/* The files a trace directory holds (cs_trace.c, cs_trace_write.c, plot,
 * index). */
static int trace_file(const char *name)
{
    static const char *const names[] = {"steps.csv", "trace.json",      "links.csv",
                                        "tiers.csv", "summary.json",    "heatmap.dat",
                                        "plot.gp",   "utilization.png", "index.csv",
                                        CS_TRACE_MARKER};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return 0;
}

/* 1 when directory `path` holds only trace files (regular files), and at
 * depth 0 instance directories holding only trace files; *summaries counts
 * the summary.json seen. */
static int only_trace_files(const char *path, int depth, int *summaries)
{
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int ok = 1;
    for (struct dirent *e; ok && (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char sub[4096];
        struct stat sb;
        snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
        if (lstat(sub, &sb) != 0)
            ok = 0;
        else if (S_ISREG(sb.st_mode) && trace_file(e->d_name))
            *summaries += strcmp(e->d_name, "summary.json") == 0;
        else if (S_ISDIR(sb.st_mode) && depth == 0)
            ok = only_trace_files(sub, 1, summaries);
        else
            ok = 0;
    }
    closedir(d);
    return ok;
}

/* A trace written before the marker existed (forced replacement only), or
 * with a marker but before the marker listed the trace's files. */
static int trace_legacy(const char *path)
{
    int summaries = 0;
    return only_trace_files(path, 0, &summaries) && summaries > 0;
}

int cs_trace_dir_is_ours(const char *path)
{
    return trace_legacy(path);
}

/* The plot a user draws again from plot.gp. */
int cs_trace_remade(const char *name)
{
    return strcmp(name, "utilization.png") == 0;
}

const cs_out_kind_t cs_trace_out_kind = {"trace directory", NULL, CS_TRACE_MARKER, trace_legacy,
                                         cs_trace_remade};

int cs_trace_session_open(const char *dir, const cs_trace_opts_t *opts, int ninstances,
                          cs_trace_session_t **out, cs_err_t *err)
{
    if (!dir || !*dir || ninstances < 1)
        return cs_err_set(err, CS_ERR_INVAL, "trace: no directory or no instance");
    cs_trace_session_t *s = calloc(1, sizeof(*s));
    if (s) {
        s->dir = strdup(dir);
        s->rows = calloc((size_t)ninstances, sizeof(inst_row_t));
    }
    if (!s || !s->dir || !s->rows) {
        cs_trace_session_close(s);
        return cs_err_set(err, CS_ERR_NOMEM, "trace: out of memory");
    }
    if (opts)
        s->opts = *opts;
    else
        cs_trace_opts_init(&s->opts);
    s->ninst = ninstances;
    int st =
        cs_out_begin_dir(dir, s->opts.force ? CS_OUT_FORCE : 0, &cs_trace_out_kind, &s->out, err);
    if (st != CS_OK) {
        cs_trace_session_close(s);
        return st;
    }
    s->tmp = cs_out_tmp_path(s->out);
    *out = s;
    return CS_OK;
}

static void sub_name(cs_trace_session_t *s, const cs_trace_meta_t *m, char *out, size_t n)
{
    char base[128];
    snprintf(base, sizeof(base), "%s-%llu", m->algo[0] ? m->algo : "schedule",
             (unsigned long long)m->bytes);
    for (char *p = base; *p; p++)
        if (*p == '/' || *p == ' ' || *p == ',')
            *p = '_';
    snprintf(out, n, "%s", base);
    for (int k = 2;; k++) {
        int dup = 0;
        for (int i = 0; i < s->cur_i; i++)
            dup |= strcmp(s->rows[i].sub, out) == 0;
        if (!dup)
            return;
        snprintf(out, n, "%s-%d", base, k);
    }
}

int cs_trace_session_begin(cs_trace_session_t *s, const cs_trace_meta_t *meta, double t0,
                           cs_trace_router_fn router, void *router_ctx, cs_trace_t **out,
                           cs_err_t *err)
{
    if (s->cur || s->cur_i >= s->ninst)
        return cs_err_set(err, CS_ERR_INVAL, "trace: instance %d begun out of order", s->cur_i);
    inst_row_t *row = &s->rows[s->cur_i];
    char path[4096];
    if (s->ninst > 1) {
        sub_name(s, meta, row->sub, sizeof(row->sub));
        snprintf(path, sizeof(path), "%s/%s", s->tmp, row->sub);
        if (mkdir(path, 0777) != 0)
            return cs_err_set(err, CS_ERR_IO, "trace: cannot create %s", path);
    } else {
        snprintf(path, sizeof(path), "%s", s->tmp);
    }
    row->meta = *meta;
    int st = cs_trace_create(path, meta, &s->opts, t0, &s->cur, err);
    if (st != CS_OK)
        return st;
    cs_trace_set_router(s->cur, router, router_ctx);
    if (out)
        *out = s->cur;
    return CS_OK;
}

cs_trace_t *cs_trace_session_current(cs_trace_session_t *s)
{
    return s ? s->cur : NULL;
}

int cs_trace_session_end(cs_trace_session_t *s, double t_end, cs_err_t *err)
{
    if (!s->cur)
        return cs_err_set(err, CS_ERR_INVAL, "trace: no instance to end");
    cs_trace_t *t = s->cur;
    int st = cs_trace_finish(t, t_end, err);
    if (st == CS_OK)
        st = cs_trace_write(t, err);
    if (st == CS_OK) {
        inst_row_t *row = &s->rows[s->cur_i];
        row->time_us = cs_trace_duration(t) * 1e6;
        const char *b = cs_trace_bottleneck_name(t);
        snprintf(row->bottleneck, sizeof(row->bottleneck), "%s", b ? b : "none");
        s->cur_i++;
    }
    cs_trace_destroy(t);
    s->cur = NULL;
    return st;
}

static int write_index(cs_trace_session_t *s, cs_err_t *err)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/index.csv", s->tmp);
    FILE *f = fopen(path, "w");
    if (!f)
        return cs_err_set(err, CS_ERR_IO, "trace: cannot write %s", path);
    fprintf(f, "dir,algo,coll,bytes,ranks,time_us,bottleneck\n");
    for (int i = 0; i < s->cur_i; i++) {
        const inst_row_t *r = &s->rows[i];
        fprintf(f, "%s,%s,%s,%llu,%d,%.4f,%s\n", r->sub, r->meta.algo, r->meta.coll,
                (unsigned long long)r->meta.bytes, r->meta.nranks, r->time_us, r->bottleneck);
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return cs_err_set(err, CS_ERR_IO, "trace: cannot write %s", path);
    return CS_OK;
}

int cs_trace_session_commit(cs_trace_session_t *s, cs_err_t *err)
{
    if (s->err.code)
        return cs_err_set(err, s->err.code, "%s", s->err.msg);
    if (s->cur || s->cur_i != s->ninst)
        return cs_err_set(err, CS_ERR_INVAL, "trace: %d of %d instances traced", s->cur_i,
                          s->ninst);
    char path[4096];
    for (int i = 0; i < s->ninst && s->opts.plot; i++) {
        cs_err_t perr = {0};
        snprintf(path, sizeof(path), "%s%s%s", s->tmp, s->ninst > 1 ? "/" : "",
                 s->ninst > 1 ? s->rows[i].sub : "");
        if (cs_trace_plot(path, &perr) != CS_OK)
            CS_WARN("trace", "no plot: %s", perr.msg);
    }
    if (s->ninst > 1 && write_index(s, err) != CS_OK)
        return err ? err->code : CS_ERR_IO;
    if (!s->out)
        return cs_err_set(err, CS_ERR_INVAL, "trace: %s was committed already", s->dir);
    cs_out_t *o = s->out;
    s->out = NULL; /* cs_out_commit frees it, whatever the outcome */
    s->tmp = NULL;
    int st = cs_out_commit(o, err);
    if (st == CS_OK)
        s->committed = 1;
    return st;
}

int cs_trace_session_status(const cs_trace_session_t *s, cs_err_t *err)
{
    if (s->err.code)
        return cs_err_set(err, s->err.code, "%s", s->err.msg);
    return CS_OK;
}

void cs_trace_session_fail(cs_trace_session_t *s, const cs_err_t *e)
{
    if (s && e && e->code)
        cs_err_set(&s->err, e->code, "%s", e->msg);
}

void cs_trace_session_close(cs_trace_session_t *s)
{
    if (!s)
        return;
    cs_trace_destroy(s->cur);
    cs_out_abort(s->out); /* uncommitted: the temporary tree goes */
    free(s->dir);
    free(s->rows);
    free(s);
}
