/*
 * validate_trace.c - a validation's traces (cs_validate.h): the live and
 * the simulated traces of the same runs side by side in one directory,
 * and their per-tier comparison.
 *
 *   DIR/live/<algo>/   the live traces (exec/cs_live_trace.h) of the last
 *                      timed run of every size: tiers host (ranks of one
 *                      node) and network (ranks of different nodes), one
 *                      link per rank pair
 *   DIR/sim-<P>/       the simulated traces on --platform number P (1, 2,
 *                      ...), with the platform's tiers (a calibrated one:
 *                      host, nic, nic-slow, switch, duplex, port)
 *   DIR/compare.csv    per platform, algorithm, size and tier (host,
 *                      network): the bytes live and simulated, whether they
 *                      match, time live and simulated, utilization live and
 *                      of the simulated tier that carries that class
 *
 * Bytes: the live trace's tier bytes against the bytes of the simulated
 * transfers between ranks of one node / of different nodes (counted in
 * the simulation, validate_sim.c: a platform's tiers count a transfer once
 * per link it crosses, a live rank-pair link once).  They must match
 * exactly: both run the same schedule; a mismatch fails the command
 * (the caller's failure).  Time: the traced run's duration on each side, and the
 * difference in percent of the live one.  Utilization (mean over the run,
 * busy fraction): live, of the tier's rank-pair links at the best rate
 * one transfer reached; simulated, of the platform tier carrying the class
 * (host: tier "host"; network: the busiest of the other tiers that are
 * not ports or duplex links), in percentage points of difference.  The two
 * are measured against different capacities: the report gives both.
 * The caller writes DIR whole or not at all (core/cs_out.h,
 * cs_validate_trace_kind: marker .collstep-validate-trace).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "validate_int.h"
#ifdef CS_EXEC_HAVE_TRACES
#include "cs_trace.h"
#endif

#ifdef CS_EXEC_HAVE_TRACES
/* A validation trace written before its marker listed what it holds: the
 * marker, compare.csv, live/ of traces and sim-N/ traces, nothing else. */
static int validate_legacy(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int ok = 1;
    for (struct dirent *e; ok && (e = readdir(d)) != NULL;) {
        const char *n = e->d_name;
        if (!strcmp(n, ".") || !strcmp(n, ".."))
            continue;
        char sub[4096];
        struct stat sb;
        if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path, n) >= sizeof(sub) ||
            lstat(sub, &sb) != 0) {
            ok = 0;
        } else if (!strcmp(n, ".collstep-validate-trace") || !strcmp(n, "compare.csv")) {
            ok = S_ISREG(sb.st_mode);
        } else if (!strncmp(n, "sim-", 4) && S_ISDIR(sb.st_mode)) {
            ok = cs_trace_dir_is_ours(sub);
        } else if (!strcmp(n, "live") && S_ISDIR(sb.st_mode)) {
            DIR *l = opendir(sub);
            ok = l != NULL;
            for (struct dirent *f; ok && l && (f = readdir(l)) != NULL;) {
                char t[4096];
                struct stat tb;
                if (!strcmp(f->d_name, ".") || !strcmp(f->d_name, ".."))
                    continue;
                ok = (size_t)snprintf(t, sizeof(t), "%s/%s", sub, f->d_name) < sizeof(t) &&
                     lstat(t, &tb) == 0 && S_ISDIR(tb.st_mode) && cs_trace_dir_is_ours(t);
            }
            if (l)
                closedir(l);
        } else {
            ok = 0;
        }
    }
    closedir(d);
    return ok;
}

const cs_out_kind_t cs_validate_trace_kind = {"validation trace directory", NULL,
                                              ".collstep-validate-trace", validate_legacy,
                                              cs_trace_remade};
#else
const cs_out_kind_t cs_validate_trace_kind = {"validation trace directory", NULL,
                                              ".collstep-validate-trace", NULL, NULL};
#endif

void cs__validate_live_dir(const cs_validate_t *v, int a, char *buf, size_t len)
{
    if (!v->trace_dir) {
        snprintf(buf, len, "%s", "");
        return;
    }
    char name[96];
    snprintf(name, sizeof(name), "%s", v->algo[a]);
    for (int b = 0; b < a; b++)
        if (!strcmp(v->algo[b], v->algo[a]))
            snprintf(name, sizeof(name), "%s-%d", v->algo[a], a + 1);
    snprintf(buf, len, "%s/live/%s", v->trace_dir, name);
}

void cs__validate_sim_dir(const cs_validate_t *v, int p, char *buf, size_t len)
{
    snprintf(buf, len, "%s/sim-%d", v->trace_dir ? v->trace_dir : ".", p + 1);
}

int cs_validate_trace_prepare(const char *dir, cs_err_t *err)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/live", dir);
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return cs_err_set(err, CS_ERR_IO, "cannot create %s: %s", path, strerror(errno));
    return CS_OK;
}

#ifdef CS_EXEC_HAVE_TRACES
/* Instance j of a session of n in `base`: the session itself when n is 1,
 * else row j of its index.csv. */
static int inst_dir(const char *base, int n, int j, char *out, size_t len, cs_err_t *err)
{
    if (n == 1) {
        snprintf(out, len, "%s", base);
        return CS_OK;
    }
    char path[4300], line[1024];
    snprintf(path, sizeof(path), "%s/index.csv", base);
    FILE *f = fopen(path, "r");
    if (!f)
        return cs_err_set(err, CS_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    int row = -1, found = 0;
    while (!found && fgets(line, sizeof(line), f))
        if (row++ == j) {
            line[strcspn(line, ",\n")] = 0;
            snprintf(out, len, "%s/%s", base, line);
            found = 1;
        }
    fclose(f);
    return found ? CS_OK : cs_err_set(err, CS_ERR_PARSE, "%s: no row for instance %d", path, j + 1);
}

typedef struct side {
    cs_trace_tier_read_t t[32];
    int n;
    double time_us;
} side_t;

static const cs_trace_tier_read_t *tier(const side_t *s, const char *name)
{
    for (int i = 0; i < s->n && i < 32; i++)
        if (!strcmp(s->t[i].name, name))
            return &s->t[i];
    return NULL;
}

/* The simulated tier that carries a class: "host", or the busiest other
 * tier that is not a rank's port or a duplex link. */
static const cs_trace_tier_read_t *sim_tier(const side_t *s, int network)
{
    if (!network)
        return tier(s, "host");
    const cs_trace_tier_read_t *best = NULL;
    for (int i = 0; i < s->n && i < 32; i++) {
        const char *nm = s->t[i].name;
        if (!strcmp(nm, "host") || !strcmp(nm, "port") || !strncmp(nm, "duplex", 6))
            continue;
        if (!best || s->t[i].busiest_util > best->busiest_util)
            best = &s->t[i];
    }
    return best;
}

static int read_side(const char *base, int n, int j, side_t *s, cs_err_t *err)
{
    char dir[4600];
    int st = inst_dir(base, n, j, dir, sizeof(dir), err);
    if (st == CS_OK)
        st = cs_trace_read_tiers(dir, s->t, 32, &s->n, &s->time_us, err);
    return st;
}

/* One case of platform p, algorithm a, size k: its two tiers. */
static int compare_case(const cs_validate_t *v, int p, int a, int k, FILE *csv, FILE *f, int *bad,
                        cs_err_t *err)
{
    const cs_validate_plat_t *ps = &v->plats[p];
    int n = v->nalgo * v->nsizes, j = a * v->nsizes + k, served = 0, idx = 0;
    for (int q = 0; q < v->nsizes; q++) /* the live session holds served sizes */
        idx += q < k && cs_validate_serves(v, a, q), served += cs_validate_serves(v, a, q);
    side_t lv, sm;
    char dir[4200];
    cs__validate_live_dir(v, a, dir, sizeof(dir));
    int st = read_side(dir, served, idx, &lv, err);
    cs__validate_sim_dir(v, p, dir, sizeof(dir));
    if (st == CS_OK)
        st = read_side(dir, n, j, &sm, err);
    const cs_validate_bytes_t *tb = &v->bytes[(size_t)p * n + j];
    for (int c = 0; c < 2 && st == CS_OK; c++) {
        const cs_trace_tier_read_t *lt = tier(&lv, c ? "network" : "host");
        const cs_trace_tier_read_t *stt = sim_tier(&sm, c);
        double lb = lt ? lt->bytes : 0, sb = c ? tb->network : tb->host;
        if (lb == 0 && sb == 0)
            continue;
        int match = (uint64_t)lb == (uint64_t)sb;
        *bad += !match;
        double dt = lv.time_us > 0 ? (sm.time_us - lv.time_us) / lv.time_us * 100 : 0;
        double lu = lt ? lt->mean_util * 100 : 0, su = stt ? stt->mean_util * 100 : 0;
        fprintf(csv, "\"%s\",%s,%s,%llu,%s,%.0f,%.0f,%d,%.3f,%.3f,%.2f,%.4f,%.4f,%.2f,"
                     "%.4f,%.4f,%s\n", ps->spec, cs_sim_model_name(ps->model), v->algo[a],
                (unsigned long long)v->sizes[k], c ? "network" : "host", lb, sb, match,
                lv.time_us, sm.time_us, dt, lu / 100, su / 100, su - lu,
                lt ? lt->busy_fraction : 0, stt ? stt->busy_fraction : 0, stt ? stt->name : "");
        fprintf(f, "  %-8s %10llu %-7s %14.0f %14.0f %5s %10.1f %10.1f %+7.1f %6.1f %6.1f "
                   "%+7.1f %-9s\n", v->algo[a], (unsigned long long)v->sizes[k],
                c ? "network" : "host", lb, sb, match ? "yes" : "NO", lv.time_us, sm.time_us, dt,
                lu, su, su - lu, stt ? stt->name : "-");
    }
    return st;
}

int cs_validate_trace_compare(const cs_validate_t *v, const char *label, FILE *f,
                              int *mismatches, cs_err_t *err)
{
    char path[4300];
    *mismatches = 0;
    if (!v->trace_dir)
        return cs_err_set(err, CS_ERR_INVAL, "validate: no trace directory");
    snprintf(path, sizeof(path), "%s/compare.csv", v->trace_dir);
    FILE *csv = fopen(path, "w");
    if (!csv)
        return cs_err_set(err, CS_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    fprintf(csv, "platform,model,algo,size_bytes,tier,live_bytes,sim_bytes,bytes_match,"
                 "live_time_us,sim_time_us,time_diff_pct,live_mean_util,sim_mean_util,"
                 "util_diff_points,live_busy_fraction,sim_busy_fraction,sim_tier\n");
    fprintf(f, "\n# live vs simulated traces (%s): per tier, bytes must match; time and\n"
               "# utilization (mean over the run, %%) may differ\n", label);
    fprintf(f, "# %-8s %10s %-7s %14s %14s %5s %10s %10s %7s %6s %6s %7s %-9s\n", "algo", "size",
            "tier", "live_bytes", "sim_bytes", "match", "live_us", "sim_us", "time%", "live%",
            "sim%", "points", "sim_tier");
    int st = CS_OK;
    for (int p = 0; p < v->nplats && st == CS_OK; p++) {
        const cs_validate_plat_t *ps = &v->plats[p];
        if (v->nplats > 1)
            fprintf(f, "# platform %s (%s model)\n", ps->spec, cs_sim_model_name(ps->model));
        for (int j = 0; j < v->nalgo * v->nsizes && st == CS_OK; j++)
            if (cs_validate_serves(v, j / v->nsizes, j % v->nsizes))
                st = compare_case(v, p, j / v->nsizes, j % v->nsizes, csv, f, mismatches, err);
    }
    if (fclose(csv) != 0 && st == CS_OK)
        st = cs_err_set(err, CS_ERR_IO, "cannot write %s", path);
    return st;
}
#else
int cs_validate_trace_compare(const cs_validate_t *v, const char *label, FILE *f,
                              int *mismatches, cs_err_t *err)
{
    (void)v, (void)label, (void)f;
    *mismatches = 0;
    return cs_err_set(err, CS_ERR_UNSUPPORTED, "traces: collstep was built without traces/");
}
#endif
