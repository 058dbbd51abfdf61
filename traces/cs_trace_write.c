/*
 * cs_trace_write.c - the files of a finished trace (layout in cs_trace.h).
 *
 *   trace.json   Chrome / Perfetto trace-event JSON: process 1 "ranks" has
 *                one thread track per kept rank with an "X" slice per step
 *                (ts, dur in microseconds from the run's start); process 0
 *                "fabric utilization" has one counter track ("C") per tier,
 *                "tier <name>" with args {max, mean} per bucket, and with
 *                opts.link_tracks one "link <name>" track {util} for each of
 *                the busiest links.  Counters are written when they change.
 *   steps.csv    rank,step,kind,peer,bytes,start_us,end_us (kept ranks)
 *   links.csv    link,tier,bandwidth_GBps,latency_us,bytes,mean_util,
 *                peak_util,busy_fraction,shifted_bytes; busiest first
 *   tiers.csv    t_us,dt_us then per tier <tier>_mean,<tier>_max,
 *                <tier>_busy_links: one row per bucket of width D
 *                (resolution_us in summary.json); mean = the tier's bytes in
 *                the bucket / (its links' bandwidth x D); max = its busiest
 *                link in the bucket
 *   summary.json meta, resolution, per-tier figures and profiles, the busiest
 *                rank's reductions (when the backend charges them), bottleneck
 *   heatmap.dat  utilization of the opts.heatmap busiest links (rows) per
 *                bucket (columns), gnuplot matrix format
 *   plot.gp      gnuplot script drawing utilization.png from the above
 * A 1 GB/s figure is 1e9 bytes/s.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "cs_results.h"
#include "cs_trace_int.h"

typedef struct order {
    double key;
    uint32_t i;
} order_t;

static int by_key_desc(const void *a, const void *b)
{
    const order_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? 1 : -1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Links that carried bytes, busiest (mean utilization) first. */
static order_t *busiest(const cs_trace_t *t, uint32_t *n)
{
    order_t *o = malloc(sizeof(*o) * (t->nlinks ? t->nlinks : 1));
    if (!o)
        return NULL;
    uint32_t m = 0;
    for (uint32_t i = 0; i < t->nlinks; i++)
        if (t->links[i].st.bytes > 0 && t->links[i].bk)
            o[m++] = (order_t){t->links[i].st.mean_util, i};
    qsort(o, m, sizeof(*o), by_key_desc);
    *n = m;
    return o;
}

static const double *tier_row(const cs_trace_t *t, int tier, int k)
{
    return &t->tier_series[((size_t)tier * t->nb + k) * 3];
}

static void json_counters(cs_trace_t *t, const order_t *o, uint32_t no)
{
    FILE *f = t->json;
    double D = cs__trace_width(t->level);
    for (int i = 0; i < t->ntiers; i++) {
        const cs_trace_tier_stat_t *ts = &t->tiers[i];
        if (ts->nlinks == 0)
            continue;
        double pmax = -1, pmean = -1;
        for (int k = 0; k <= t->nb; k++) {
            double mx = 0, mean = 0;
            if (k < t->nb) {
                const double *row = tier_row(t, i, k);
                mx = row[1];
                mean = row[0] / (ts->bandwidth * D);
            }
            if (mx == pmax && mean == pmean && k < t->nb)
                continue;
            pmax = mx;
            pmean = mean;
            fprintf(f, ",\n{\"name\":\"tier %s\",\"ph\":\"C\",\"ts\":%.4f,\"pid\":0,\"tid\":0,"
                       "\"args\":{\"max\":%.6f,\"mean\":%.6f}}",
                    ts->name, (k < t->nb ? k * D : t->T) * 1e6, mx, mean);
        }
    }
    uint32_t nl = (uint32_t)(t->opts.link_tracks > 0 ? t->opts.link_tracks : 0);
    for (uint32_t j = 0; j < nl && j < no; j++) {
        uint32_t li = o[j].i;
        double prev = -1;
        for (int k = 0; k <= t->nb; k++) {
            double u = k < t->nb ? cs_trace_link_util(t, li, k) : 0;
            if (u == prev && k < t->nb)
                continue;
            prev = u;
            fprintf(f, ",\n{\"name\":\"link ");
            fprintf(f, "%s\",\"ph\":\"C\",\"ts\":%.4f,\"pid\":0,\"tid\":0,\"args\":{\"util\":%.6f}}",
                    t->links[li].name, (k < t->nb ? k * D : t->T) * 1e6, u);
        }
    }
}

static void json_meta(FILE *f, const cs_trace_t *t)
{
    const cs_trace_meta_t *m = &t->meta;
    fprintf(f, "{\"schema\":\"%s\",\"backend\":\"%s\",\"platform\":", CS_TRACE_SCHEMA,
            m->backend == CS_TRACE_LIVE ? "live" : "sim");
    cs_json_write_str(f, m->platform);
    fprintf(f, ",\"coll\":");
    cs_json_write_str(f, m->coll);
    fprintf(f, ",\"algo\":");
    cs_json_write_str(f, m->algo);
    fprintf(f, ",\"model\":");
    cs_json_write_str(f, m->model);
    fprintf(f, ",\"bytes\":%llu,\"ranks\":%d,\"time_us\":%.4f}", (unsigned long long)m->bytes,
            m->nranks, t->T * 1e6);
}

static int write_json_tail(cs_trace_t *t, const order_t *o, uint32_t no)
{
    json_counters(t, o, no);
    fprintf(t->json, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":");
    json_meta(t->json, t);
    fprintf(t->json, "}\n");
    int bad = ferror(t->json) | ferror(t->steps_csv);
    bad |= fclose(t->json) != 0;
    bad |= fclose(t->steps_csv) != 0;
    t->json = t->steps_csv = NULL;
    return bad ? CS_ERR_IO : CS_OK;
}

static int close_file(FILE *f)
{
    int bad = ferror(f);
    return (fclose(f) != 0 || bad) ? CS_ERR_IO : CS_OK;
}

static FILE *open_in(const cs_trace_t *t, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", t->dir, name);
    return fopen(path, "w");
}

static int write_links(const cs_trace_t *t, const order_t *o, uint32_t no)
{
    FILE *f = open_in(t, "links.csv");
    if (!f)
        return CS_ERR_IO;
    fprintf(f, "link,tier,bandwidth_GBps,latency_us,bytes,mean_util,peak_util,busy_fraction,"
               "shifted_bytes\n");
    for (uint32_t j = 0; j < no; j++) {
        const cs_trace_link_stat_t *s = &t->links[o[j].i].st;
        fprintf(f, "%s,%s,%.6g,%.6g,%llu,%.6f,%.6f,%.6f,%.0f\n", s->name, s->tier,
                s->bandwidth / 1e9, s->latency * 1e6, (unsigned long long)s->bytes, s->mean_util,
                s->peak_util, s->busy_fraction, s->shifted_bytes);
    }
    return close_file(f);
}

static int write_tiers(const cs_trace_t *t)
{
    FILE *f = open_in(t, "tiers.csv");
    if (!f)
        return CS_ERR_IO;
    double D = cs__trace_width(t->level);
    fprintf(f, "t_us,dt_us");
    for (int i = 0; i < t->ntiers; i++)
        if (t->tiers[i].nlinks)
            fprintf(f, ",%s_mean,%s_max,%s_busy_links", t->tiers[i].name, t->tiers[i].name,
                    t->tiers[i].name);
    fputc('\n', f);
    for (int k = 0; k < t->nb; k++) {
        fprintf(f, "%.4f,%.4f", k * D * 1e6, D * 1e6);
        for (int i = 0; i < t->ntiers; i++) {
            if (!t->tiers[i].nlinks)
                continue;
            const double *row = tier_row(t, i, k);
            fprintf(f, ",%.6f,%.6f,%.0f", row[0] / (t->tiers[i].bandwidth * D), row[1], row[2]);
        }
        fputc('\n', f);
    }
    return close_file(f);
}

static void json_profile(FILE *f, const char *key, const double *v)
{
    fprintf(f, ",\"%s\":[", key);
    for (int s = 0; s < CS_TRACE_PROFILE; s++)
        fprintf(f, "%s%.4f", s ? "," : "", v[s]);
    fputc(']', f);
}

static int write_summary(const cs_trace_t *t)
{
    FILE *f = open_in(t, "summary.json");
    if (!f)
        return CS_ERR_IO;
    fprintf(f, "{\n\"meta\":");
    json_meta(f, t);
    fprintf(f, ",\n\"resolution_us\":%.6f,\n\"buckets\":%d,\n\"steps\":%llu,\n\"steps_kept\":%llu,"
               "\n\"transfers\":%llu,\n\"links\":%u,\n\"tiers\":[",
            cs__trace_width(t->level) * 1e6, t->nb, (unsigned long long)t->steps_seen,
            (unsigned long long)t->steps_kept, (unsigned long long)t->xfers_seen, t->nlinks);
    int first = 1;
    for (int i = 0; i < t->ntiers; i++) {
        const cs_trace_tier_stat_t *ts = &t->tiers[i];
        if (!ts->nlinks)
            continue;
        fprintf(f, "%s\n {\"tier\":", first ? "" : ",");
        first = 0;
        cs_json_write_str(f, ts->name);
        fprintf(f, ",\"links\":%u,\"bandwidth_GBps\":%.6g,\"bytes\":%.0f,\"mean_util\":%.6f,"
                   "\"peak_util\":%.6f,\"busy_fraction\":%.6f,\"busiest_link\":",
                ts->nlinks, ts->bandwidth / 1e9, ts->bytes, ts->mean_util, ts->peak_util,
                ts->busy_fraction);
        cs_json_write_str(f, t->links[ts->busiest].name);
        fprintf(f, ",\"busiest_link_mean_util\":%.6f,\"shifted_bytes\":%.0f", ts->busiest_util,
                ts->shifted_bytes);
        json_profile(f, "profile_busy", ts->profile_busy);
        json_profile(f, "profile_util", ts->profile_util);
        fputc('}', f);
    }
    fprintf(f, "\n],\n");
    double red_s = 0, red_f = 0;
    int rr = cs_trace_reduction(t, &red_s, &red_f);
    if (rr >= 0)
        fprintf(f, "\"reduction\":{\"busiest_rank\":%d,\"busy_us\":%.4f,\"busy_fraction\":%.6f},\n",
                rr, red_s * 1e6, red_f);
    if (t->nsw > 0) {
        fprintf(f, "\"switches\":[");
        for (int i = 0; i < t->nsw; i++) {
            const cs_trace_switch_stat_t *w = &t->sw[i];
            fprintf(f, "%s\n {\"switch\":", i ? "," : "");
            cs_json_write_str(f, w->name);
            fprintf(f, ",\"ops\":%llu,\"bytes_up\":%llu,\"bytes_down\":%llu,\"reduce_us\":%.4f,"
                       "\"reduce_busy_fraction\":%.6f}",
                    (unsigned long long)w->ops, (unsigned long long)w->bytes_up,
                    (unsigned long long)w->bytes_down, w->reduce * 1e6,
                    t->T > 0 ? w->reduce / t->T : 0.0);
        }
        fprintf(f, "\n],\n");
    }
    fprintf(f, "\"bottleneck_tier\":");
    const char *b = cs_trace_bottleneck_name(t);
    if (b)
        cs_json_write_str(f, b);
    else
        fprintf(f, "null");
    fprintf(f, ",\n\"bottleneck_rule\":\"the tier whose busiest link has the highest mean "
               "utilization over the run, or reduction when the busiest rank's device spent a "
               "larger fraction of the run reducing\",\n\"profile_slices\":%d\n}\n",
            CS_TRACE_PROFILE);
    return close_file(f);
}

static int write_heatmap(const cs_trace_t *t, const order_t *o, uint32_t no, uint32_t *rows)
{
    FILE *f = open_in(t, "heatmap.dat");
    if (!f)
        return CS_ERR_IO;
    uint32_t h = (uint32_t)(t->opts.heatmap > 0 ? t->opts.heatmap : 0);
    if (h > no)
        h = no;
    for (uint32_t j = 0; j < h; j++) {
        for (int k = 0; k < t->nb; k++)
            fprintf(f, "%s%.4f", k ? " " : "", cs_trace_link_util(t, o[j].i, k));
        fputc('\n', f);
    }
    if (h == 0) /* gnuplot needs a matrix */
        fprintf(f, "0 0\n0 0\n");
    *rows = h;
    return close_file(f);
}

static int write_plot(const cs_trace_t *t, const order_t *o, uint32_t rows)
{
    FILE *f = open_in(t, "plot.gp");
    if (!f)
        return CS_ERR_IO;
    const cs_trace_meta_t *m = &t->meta;
    double Dms = cs__trace_width(t->level) * 1e3;
    fprintf(f, "# collstep trace plot: run 'gnuplot plot.gp' in this directory\n"
               "set terminal pngcairo noenhanced size 1280,960 font ',10'\n"
               "set output 'utilization.png'\n"
               "set multiplot layout 2,1 title \"%s %s on %s, %d ranks, %llu B (%s, %.3f ms)\"\n",
            m->coll, m->algo, m->platform, m->nranks, (unsigned long long)m->bytes,
            m->backend == CS_TRACE_LIVE ? "live" : "sim", t->T * 1e3);
    fprintf(f, "set title 'utilization per tier: busiest link (solid), tier mean (dashed); "
               "resolution %.3g us'\n", Dms * 1e3);
    fprintf(f, "set datafile separator ','\nset xlabel 'time (ms)'\nset ylabel 'utilization'\n"
               "set yrange [0:1.05]\nset xrange [0:%.6f]\nset key outside right\nset grid\n",
            t->T * 1e3);
    fprintf(f, "plot ");
    int col = 3, c = 0;
    for (int i = 0; i < t->ntiers; i++) {
        if (!t->tiers[i].nlinks)
            continue;
        c++;
        fprintf(f, "%s'tiers.csv' every ::1 using ($1/1000):%d with steps lw 2 lc %d title '%s', "
                   "'' every ::1 using ($1/1000):%d with steps dt 2 lc %d notitle",
                c > 1 ? ", \\\n     " : "", col + 1, c, t->tiers[i].name, col, c);
        col += 3;
    }
    if (c == 0)
        fprintf(f, "0 notitle");
    fprintf(f, "\nset datafile separator whitespace\nunset grid\n"
               "set title 'utilization of the %u busiest links (busiest on top)'\n"
               "set ylabel ''\nset cbrange [0:1]\nset palette rgb 33,13,10\nset xlabel 'time (ms)'\n"
               "set yrange [%f:-0.5]\nset ytics font ',7' (",
            rows, rows ? rows - 0.5 : 0.5);
    for (uint32_t j = 0; j < rows; j++)
        fprintf(f, "%s\"%s\" %u", j ? ", " : "", t->links[o[j].i].name, j);
    fprintf(f, ")\nplot 'heatmap.dat' matrix using (($1+0.5)*%.9f):2:3 with image notitle\n"
               "unset multiplot\n", Dms);
    return close_file(f);
}

int cs_trace_write(cs_trace_t *t, cs_err_t *err)
{
    if (!t->finished)
        return cs_err_set(err, CS_ERR_INVAL, "trace: write before finish");
    uint32_t no = 0, rows = 0;
    order_t *o = busiest(t, &no);
    if (!o)
        return cs_err_set(err, CS_ERR_NOMEM, "trace: out of memory");
    int st = write_json_tail(t, o, no);
    if (st == CS_OK)
        st = write_links(t, o, no);
    if (st == CS_OK)
        st = write_tiers(t);
    if (st == CS_OK)
        st = write_summary(t);
    if (st == CS_OK)
        st = write_heatmap(t, o, no, &rows);
    if (st == CS_OK)
        st = write_plot(t, o, rows);
    free(o);
    if (st != CS_OK)
        return cs_err_set(err, st, "trace: cannot write the files of %s", t->dir);
    return CS_OK;
}

int cs_trace_plot(const char *dir, cs_err_t *err)
{
    pid_t pid = fork();
    if (pid < 0)
        return cs_err_set(err, CS_ERR_IO, "trace: cannot start gnuplot");
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        if (chdir(dir) == 0)
            execlp("gnuplot", "gnuplot", "plot.gp", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return cs_err_set(err, CS_ERR_IO, "trace: gnuplot failed on %s/plot.gp (status %d)", dir,
                          WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    char path[4096];
    struct stat sb;
    snprintf(path, sizeof(path), "%s/utilization.png", dir);
    if (stat(path, &sb) != 0 || sb.st_size == 0)
        return cs_err_set(err, CS_ERR_IO, "trace: gnuplot wrote no %s", path);
    return CS_OK;
}
