#define _GNU_SOURCE /* strcasestr */
/*
 * cli_ntab.c - nccl-tests logs as simulations (cli_ntab.h): read, place,
 * build, simulate, report.
 *
 *   read     each log (core/cs_nccl_log.h); tables of collectives collstep
 *            lacks (sendrecv, gather, scatter, hypercube), of an unknown
 *            collective, without a device block (and no --groups) or with
 *            several types or operators are skipped, each with a line
 *            saying so (strict: the last two of one rank are errors)
 *   place    the table's nodes on the platform's nodes in order
 *   build    NCCL's version (the log's, else --nccl-version, else the
 *            model's newest), NCCL_ALGO / NCCL_PROTO from the log, the
 *            system NCCL's tuner sees, its choice per size as collstep
 *            schedules, what each instance pays
 *   act      one simulation per rank count, placement and tier rates, every
 *            table of it and every variant at once, in a watched child
 *            (SimGrid runs once per process)
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#ifdef CS_HAVE_MODEL

#include "cli_nccl.h"
#include "cli_ntab.h"
#include "cs_child.h"
#include "cs_validate.h"

static void skip(const cs_nset_t *s, const char *log, const cs_nccl_run_t *t, const char *why)
{
    fprintf(stderr, "collstep %s: %s:%u: %s table skipped: %s\n", s->cmd, log, t->line,
            cs_nccl_coll_name(t->coll), why);
}

/* ---- options ------------------------------------------------------------------- */

int cs_nset_add_log(const char *cmd, const char *flag, const char **logs, int *n, int max,
                    const char *arg)
{
    if (*n == max)
        return cs_cli_usage_error(cmd, "%s: at most %d logs", flag, max);
    if (arg[0] == '-' && arg[1] && access(arg, F_OK) != 0) /* "--platform" taken as the log */
        return cs_cli_usage_error(cmd, "%s: expected a log, found the option '%s' (a log's "
                                       "path goes right after %s)", flag, arg, flag);
    logs[(*n)++] = arg;
    return CS_EXIT_OK;
}

int cs_nset_version_opt(const char *cmd, const char *arg, const char **version)
{
    cs_cli_nccl_t probe;
    cs_cli_nccl_init(&probe);
    *version = arg;
    return cs_cli_nccl_opt(cmd, &probe, CS_CLI_NCCL_VERSION, arg);
}

int cs_nset_check_report(const char *cmd, const char *flag, const char *path, int force)
{
    cs_err_t err;
    cs_err_clear(&err);
    if (path && cs_out_check(path, CS_OUT_STDOUT | (force ? CS_OUT_FORCE : 0),
                             &cs_validate_out_kind, 0, &err) != CS_OK)
        return cs_cli_usage_error(cmd, "%s %s: %s", flag, path, err.msg);
    return CS_EXIT_OK;
}

int cs_nset_check_not_input(const char *cmd, const char *flag, const char *path,
                            const char *const *logs, int nlogs)
{
    struct stat o, l;
    if (!path || strcmp(path, "-") == 0 || stat(path, &o) != 0)
        return CS_EXIT_OK;
    for (int i = 0; i < nlogs; i++)
        if (strcmp(logs[i], "-") != 0 && stat(logs[i], &l) == 0 && l.st_dev == o.st_dev &&
            l.st_ino == o.st_ino)
            return cs_cli_usage_error(cmd, "%s %s: that is the log %s, an input; choose another "
                                           "path", flag, path, logs[i]);
    return CS_EXIT_OK;
}

int cs_nset_choice_opt(const char *cmd, int which, const char *arg, const char **out)
{
    cs_cli_nccl_t probe;
    cs_cli_nccl_init(&probe);
    *out = arg;
    return cs_cli_nccl_opt(cmd, &probe, which ? CS_CLI_NCCL_PROTO : CS_CLI_NCCL_ALGO, arg);
}

const char cs_nset_nccl_help[] =
    "  --nccl-version V     NCCL's constants for tables whose log does not print\n"
    "                       NCCL's version (default: the model's newest)\n"
    "  --nccl-algo A        the run's NCCL_ALGO for tables whose log does not say it\n"
    "                       (an echoed NCCL_ALGO=A, mpirun -x, NCCL INFO): Tree,\n"
    "                       Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT\n"
    "  --nccl-proto P       the same for NCCL_PROTO: LL, LL128, Simple\n";

const char cs_nset_filter_help[] =
    "  --coll LIST          only the tables of these collectives (allreduce,allgather,\n"
    "                       reduce-scatter,alltoall,broadcast,reduce)\n"
    "  --min-size SIZE      only the rows of SIZE and up (nccl-tests' size column)\n"
    "  --max-size SIZE      only the rows of SIZE and under\n";

void cs_nset_size_range(const cs_nset_t *s, char *buf, size_t len)
{
    char a[32] = "0 B", z[32] = "any size";
    if (s->min_size)
        cs_cli_size_text(s->min_size, a, sizeof(a));
    if (s->max_size)
        cs_cli_size_text(s->max_size, z, sizeof(z));
    snprintf(buf, len, "%s to %s", a, z);
}

int cs_nset_filter_opt(const char *cmd, int which, const char *arg, cs_nset_t *s)
{
    if (which == 0) { /* a comma list; --coll given twice adds */
        char buf[512];
        if (strlen(arg) >= sizeof(buf))
            return cs_cli_usage_error(cmd, "--coll: a list of %zu characters, expected at most "
                                           "%zu", strlen(arg), sizeof(buf) - 1);
        snprintf(buf, sizeof(buf), "%s", arg);
        int any = 0;
        for (char *save = NULL, *w = strtok_r(buf, ", \t", &save); w;
             w = strtok_r(NULL, ", \t", &save)) {
            cs_coll_t c = cs_coll_parse(w);
            if (c == CS_COLL_COUNT || c >= 32)
                return cs_cli_usage_error(cmd, "--coll: expected allreduce, allgather, "
                                               "reduce-scatter, alltoall, broadcast or reduce "
                                               "(a comma list), found '%s'", w);
            s->colls |= 1u << c;
            any = 1;
        }
        if (!any)
            return cs_cli_usage_error(cmd, "%s", "--coll: expected a collective, found nothing");
        return CS_EXIT_OK;
    }
    uint64_t v;
    if (cs_cli_parse_size(arg, &v) != 0 || (which == 2 && v == 0))
        return cs_cli_usage_error(cmd, "--%s-size: expected a size (1M, 64K, 1073741824%s), "
                                       "found '%s'", which == 1 ? "min" : "max",
                                  which == 2 ? "; not 0" : "", arg);
    *(which == 1 ? &s->min_size : &s->max_size) = v;
    if (s->max_size && s->min_size > s->max_size)
        return cs_cli_usage_error(cmd, "--min-size is above --max-size (%llu > %llu B)",
                                  (unsigned long long)s->min_size,
                                  (unsigned long long)s->max_size);
    return CS_EXIT_OK;
}

/* ---- --groups ------------------------------------------------------------------ */

/* The node name of each rank from a groups file: lines "NAME" (one rank),
 * "NAME N", "NAME:N" or "NAME slots=N" (N ranks; an Open MPI hostfile),
 * ranks in order; '#' comments and blank lines skipped.  *out: *n names. */
static int groups_read(const char *cmd, const char *path, char ***out, int *n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return cs_cli_usage_error(cmd, "--groups %s: cannot open: %s", path, strerror(errno));
    char line[512];
    char **v = NULL;
    int nv = 0, cap = 0, ln = 0, rc = CS_EXIT_OK;
    while (rc == CS_EXIT_OK && fgets(line, sizeof(line), f)) {
        ln++;
        char *h = strchr(line, '#');
        if (h)
            *h = '\0';
        char *p = line + strspn(line, " \t\r\n");
        if (!*p)
            continue;
        size_t nl = strcspn(p, " \t\r\n:");
        char name[256];
        snprintf(name, sizeof(name), "%.*s", (int)(nl < 255 ? nl : 255), p);
        char *q = p + nl;
        long cnt = 1;
        q += strspn(q, " \t:");
        if (strncmp(q, "slots=", 6) == 0)
            q += 6;
        if (*q && !strchr("\r\n", *q)) {
            char *end;
            cnt = strtol(q, &end, 10);
            end += strspn(end, " \t\r\n");
            if (end == q || *end || cnt < 1 || cnt > 1 << 20) {
                rc = cs_cli_usage_error(cmd, "--groups %s:%d:%d: expected NAME, NAME N, NAME:N "
                                             "or NAME slots=N (N ranks on node NAME), found "
                                             "'%.*s'",
                                        path, ln, (int)(q - line) + 1, (int)strcspn(q, "\r\n"),
                                        q);
                break;
            }
        }
        for (long i = 0; i < cnt && rc == CS_EXIT_OK; i++) {
            if (nv == cap) {
                cap = cap ? 2 * cap : 64;
                char **nvp = realloc(v, sizeof(*v) * (size_t)cap);
                if (!nvp) {
                    rc = cs_cli_usage_error(cmd, "%s", "out of memory");
                    break;
                }
                v = nvp;
            }
            if (!(v[nv] = strdup(name)))
                rc = cs_cli_usage_error(cmd, "%s", "out of memory");
            else
                nv++;
        }
    }
    fclose(f);
    if (rc == CS_EXIT_OK && nv == 0)
        rc = cs_cli_usage_error(cmd, "--groups %s: no node in it (expected lines NAME or NAME "
                                     "N)", path);
    if (rc != CS_EXIT_OK) {
        for (int i = 0; i < nv; i++)
            free(v[i]);
        free(v);
        return rc;
    }
    *out = v;
    *n = nv;
    return CS_EXIT_OK;
}

/* ---- placement -------------------------------------------------------------------- */

/* Devices per platform node for placing a log's nodes (0: none known). */
static int node_size(const cs_platform_t *p)
{
    return cs_cli_node_size(p);
}

/* A device block naming the platform's own device hosts (a log collstep
 * wrote for that platform): idx[r], the device of each rank's host.  1
 * when it does. */
static int place_by_name(const cs_nset_t *s, const cs_ntab_t *v, uint64_t *idx)
{
    const cs_platform_t *p = s->plat;
    const cs_nccl_run_t *t = v->t;
    if (t->ndevs != v->nranks || !p->hosts)
        return 0;
    for (int r = 0; r < v->nranks; r++)
        idx[r] = UINT64_MAX;
    for (int i = 0; i < t->ndevs; i++) {
        int r = t->devs[i].rank;
        if (r < 0 || r >= v->nranks || !t->devs[i].host || idx[r] != UINT64_MAX)
            return 0;
        for (uint64_t j = 0; j < p->ndevices && idx[r] == UINT64_MAX; j++)
            if (strcmp(p->hosts[j], t->devs[i].host) == 0)
                idx[r] = j;
        /* "on NODE device N" for the platform's host NODE-gN (sim's tables
         * of a preset) */
        char lab[256];
        int dev;
        for (uint64_t j = 0; j < p->ndevices && idx[r] == UINT64_MAX; j++)
            if (cs_cli_node_label(p->hosts[j], lab, sizeof(lab), &dev) &&
                dev == t->devs[i].device && strcmp(lab, t->devs[i].host) == 0)
                idx[r] = j;
        if (idx[r] == UINT64_MAX)
            return 0;
    }
    return 1;
}

/* v->map: rank r on node node_of[r] of the log goes to that node of the
 * platform, the node's ranks on its devices in order (or every rank on its
 * host when the device block names the platform's hosts). */
static int place(cs_nset_t *s, cs_ntab_t *v, const char *log, const int *node_of)
{
    const cs_platform_t *p = s->plat;
    int D = node_size(p);
    int nn = 0;
    for (int r = 0; r < v->nranks; r++)
        nn = node_of[r] + 1 > nn ? node_of[r] + 1 : nn;
    v->nnodes = nn;
    int *local = calloc((size_t)nn + 1, sizeof(int));
    v->map = calloc(v->nranks > 0 ? (size_t)v->nranks : 1, sizeof(char *));
    if (!local || !v->map) {
        free(local);
        return cs_cli_usage_error(s->cmd, "%s", "out of memory");
    }
    int rc = CS_EXIT_OK;
    uint64_t *byname = calloc((size_t)v->nranks, sizeof(uint64_t));
    if (byname && place_by_name(s, v, byname)) {
        /* its nodes: the platform's nodes its hosts are in */
        v->nnodes = 0;
        for (int r = 0; r < v->nranks; r++) {
            int seen = 0;
            for (int q = 0; q < r && !seen; q++)
                seen = D > 0 ? byname[q] / (uint64_t)D == byname[r] / (uint64_t)D : 1;
            v->nnodes += !seen;
        }
        for (int r = 0; r < v->nranks && rc == CS_EXIT_OK; r++)
            if (!(v->map[r] = strdup(p->hosts[byname[r]])))
                rc = cs_cli_usage_error(s->cmd, "%s", "out of memory");
        free(byname), free(local);
        return rc;
    }
    free(byname);
    if (D <= 0 && nn > 1)
        fprintf(stderr, "collstep %s: %s:%u: %s has no nodes (no dims): the table's ranks are on "
                        "its devices in order\n", s->cmd, log, v->t->line, s->platform);
    for (int r = 0; r < v->nranks && rc == CS_EXIT_OK; r++) {
        int j = node_of[r], i = local[j]++;
        uint64_t idx = (uint64_t)r;
        if (D > 0) {
            if (i >= D) {
                rc = cs_cli_usage_error(s->cmd, "%s:%u: node %d of the log has more than %d "
                                                "ranks, the devices of a node of %s",
                                        log, v->t->line, j, D, s->platform);
                break;
            }
            idx = (uint64_t)j * (uint64_t)D + (uint64_t)i;
        }
        if (idx >= p->ndevices) {
            if (D > 0)
                rc = cs_cli_usage_error(
                    s->cmd, "%s:%u: the table's %d ranks are on %d node%s, and a log's nodes "
                            "map to the platform's nodes in order; %s has %llu node%s (%d "
                            "%s each): give a platform with at least %d nodes",
                    log, v->t->line, v->nranks, nn, nn == 1 ? "" : "s", s->platform,
                    (unsigned long long)(p->ndevices / (uint64_t)D),
                    p->ndevices / (uint64_t)D == 1 ? "" : "s", D,
                    p->rank_noun[0] ? p->rank_noun : "devices", nn);
            else
                rc = cs_cli_usage_error(s->cmd, "%s:%u: the table's %d ranks need as many "
                                                "devices; %s has %llu %s: give a platform with "
                                                "at least as many",
                                        log, v->t->line, v->nranks, s->platform,
                                        (unsigned long long)p->ndevices,
                                        p->rank_noun[0] ? p->rank_noun : "devices");
            break;
        }
        if (!(v->map[r] = strdup(p->hosts[idx])))
            rc = cs_cli_usage_error(s->cmd, "%s", "out of memory");
    }
    free(local);
    return rc;
}

/* The log's node of every rank: from the device block, or --groups. */
static int nodes_of(cs_nset_t *s, const cs_ntab_t *v, char **gnames, int *node_of)
{
    const cs_nccl_run_t *t = v->t;
    if (t->ndevs > 0) {
        for (int i = 0; i < t->ndevs; i++)
            if (t->devs[i].rank >= 0 && t->devs[i].rank < v->nranks)
                node_of[t->devs[i].rank] = t->devs[i].node;
        return CS_EXIT_OK;
    }
    int k = 0;
    for (int r = 0; r < v->nranks; r++) {
        int j = 0;
        while (j < r && strcmp(gnames[j], gnames[r]) != 0)
            j++;
        node_of[r] = j < r ? node_of[j] : k++;
    }
    (void)s;
    return CS_EXIT_OK;
}

/* ---- building a table ------------------------------------------------------------ */

/* The operator as nccl-tests prints it ("none": no reduction). */
static const char *redop_of(const cs_ntab_t *v)
{
    return cs_redop_text(v->coll, v->op);
}

/* The rows of table t: the type and operator of them all, the sizes and
 * the in-place times.  0: compare it; 1: skipped (said). */
static int take_rows(cs_nset_t *s, cs_ntab_t *v, const char *log)
{
    const cs_nccl_run_t *t = v->t;
    char why[256];
    v->dt = cs_dtype_parse(t->rows[0].type);
    const char *opn = t->rows[0].redop;
    v->op = !opn[0] || strcmp(opn, "none") == 0 ? CS_OP_SUM : cs_op_parse(opn);
    if (v->dt == CS_DT_COUNT || v->op == CS_OP_COUNT) {
        char known[128] = "";
        size_t o = 0;
        for (int i = 0; i < (v->dt == CS_DT_COUNT ? (int)CS_DT_COUNT : (int)CS_OP_COUNT); i++) {
            int w = snprintf(known + o, sizeof(known) - o, "%s%s", i ? ", " : "",
                             v->dt == CS_DT_COUNT ? cs_dtype_name((cs_dtype_t)i)
                                                  : cs_op_name((cs_op_t)i));
            if (w > 0 && (size_t)w < sizeof(known) - o)
                o += (size_t)w;
        }
        snprintf(why, sizeof(why), "collstep has no %s '%s' (line %u; collstep's: %s)",
                 v->dt == CS_DT_COUNT ? "type" : "operator",
                 v->dt == CS_DT_COUNT ? t->rows[0].type : opn, t->rows[0].line, known);
        skip(s, log, t, why);
        return 1;
    }
    int nzero = 0, nout = 0;
    unsigned zfirst = 0, zlast = 0;
    for (int i = 0; i < t->nrows; i++) {
        const cs_nccl_row_t *w = &t->rows[i];
        if (w->size < s->min_size || (s->max_size && w->size > s->max_size)) {
            nout++; /* said once for the table, below */
            continue;
        }
        if (strcmp(w->type, t->rows[0].type) || strcmp(w->redop, opn)) {
            int ty = strcmp(w->type, t->rows[0].type) != 0;
            const char *got = ty ? w->type : w->redop;
            int known = ty ? cs_dtype_parse(got) != CS_DT_COUNT
                           : (strcmp(got, "none") == 0 || cs_op_parse(got) != CS_OP_COUNT);
            snprintf(why, sizeof(why), "its rows have several %s: line %u has '%s' where line "
                     "%u has '%s'%s%s%s", ty ? "types" : "operators", w->line, got,
                     t->rows[0].line, ty ? t->rows[0].type : opn,
                     known ? " (-d all, -o all: give one table per type and operator)"
                           : "; collstep has no ",
                     known ? "" : ty ? "type" : "operator", known ? "" : " of that name (a typo?)");
            skip(s, log, t, why);
            return 1;
        }
        const cs_nccl_meas_t *m = w->ip.present ? &w->ip : &w->oop;
        if (!m->present || !isfinite(m->time_us) || m->time_us <= 0) {
            fprintf(stderr, "collstep %s: %s:%u: %llu B: no time to compare with; row left "
                            "out\n", s->cmd, log, w->line, (unsigned long long)w->size);
            continue;
        }
        uint64_t b = cs_cli_size_moved(v->coll, v->nranks, w->size, cs_dtype_size(v->dt));
        int dup = -1;
        for (int k = 0; k < v->n && dup < 0; k++)
            if (v->sizes[k] == b)
                dup = k;
        if (b == 0) { /* said once for the table, below */
            if (!nzero++)
                zfirst = w->line;
            zlast = w->line;
            continue;
        }
        if (dup >= 0) {
            fprintf(stderr, "collstep %s: %s:%u: %llu B moves what line %u's row does; this row "
                            "is left out, that one compared\n",
                    s->cmd, log, w->line, (unsigned long long)w->size, v->row_line[dup]);
            continue;
        }
        if (v->n == CS_CLI_MAX_SIZES) {
            snprintf(why, sizeof(why), "more than %d sizes", CS_CLI_MAX_SIZES);
            skip(s, log, t, why);
            return 1;
        }
        v->row_line[v->n] = w->line;
        v->sizes[v->n] = b;
        v->meas[v->n++] = m->time_us * 1e-6;
    }
    if (nzero)
        fprintf(stderr, "collstep %s: %s:%u%s%.0u: %d row%s of 0 B or under one element per rank "
                        "left out (nothing to move)\n",
                s->cmd, log, zfirst, zlast != zfirst ? "-" : "", zlast != zfirst ? zlast : 0,
                nzero, nzero == 1 ? "" : "s");
    char lim[128] = "", range[72];
    if (nout) {
        cs_nset_size_range(s, range, sizeof(range));
        snprintf(lim, sizeof(lim), "--min-size / --max-size (%s)", range);
    }
    if (nout && v->n)
        fprintf(stderr, "collstep %s: %s:%u: %d row%s outside %s left out\n", s->cmd, log,
                t->line, nout, nout == 1 ? "" : "s", lim);
    if (!v->n) {
        char none[160];
        snprintf(none, sizeof(none), "no row within %s", lim);
        skip(s, log, t, nzero ? "every row with a time is 0 B or under one element per rank"
                        : nout ? none
                               : "no row with a time");
        return 1;
    }
    /* a sweep that stops short of its maxBytes without nccl-tests' closing
     * lines: the run was cut (killed, out of time); its rows are compared */
    char cut[256];
    if (cs_cli_nccl_cut_text(t, cut, sizeof(cut)))
        fprintf(stderr, "collstep %s: %s:%u: %s; the rows it has are compared\n", s->cmd, log,
                t->rows[t->nrows - 1].line, cut);
    return 0;
}

/* NCCL's version, algorithm and protocol for table t, said in its note. */
static void nccl_choice(cs_nset_t *s, cs_ntab_t *v, const char *log, char *said, size_t len)
{
    const cs_nccl_run_t *t = v->t;
    const char *from;
    if (t->nccl_version[0])
        v->nc.version = t->nccl_version, from = "from the log";
    else if (s->version)
        v->nc.version = s->version, from = "from --nccl-version";
    else
        v->nc.version = NULL, from = "the model's default";
    int n = snprintf(said, len, "NCCL %s (%s)", v->nc.version ? v->nc.version : "", from);
    const char *what[2] = {t->algo, t->proto}, *opt[2] = {s->algo, s->proto};
    int *to[2] = {&v->nc.algo, &v->nc.proto}, given[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        const char *nm = i ? "PROTO" : "ALGO";
        if (!what[i][0] && opt[i]) { /* the log does not say: the option does */
            what[i] = opt[i], given[i] = 1;
        } else if (what[i][0] && opt[i] && v->coll != CS_COLL_ALLTOALL) {
            int ok = (i ? cs_nccl_proto_parse(what[i]) : cs_nccl_algo_parse(what[i])) >= 0;
            fprintf(stderr, "collstep %s: %s:%u: the log says NCCL_%s=%s: %s\n", s->cmd, log,
                    (i ? t->proto_line : t->algo_line) ? (i ? t->proto_line : t->algo_line)
                                                        : t->line,
                    nm, what[i],
                    ok ? "it is simulated, not the option's"
                       : "the model does not take it; the option's is simulated");
            if (!ok)
                what[i] = opt[i], given[i] = 1;
        }
    }
    for (int i = 0; i < 2; i++) {
        if (!what[i][0])
            continue;
        if (v->coll == CS_COLL_ALLTOALL) { /* NCCL's send/receive path takes neither */
            if (n > 0 && (size_t)n < len)
                n += snprintf(said + n, len - (size_t)n, ", NCCL_%s=%s not applied (P2P)",
                              i ? "PROTO" : "ALGO", what[i]);
            continue;
        }
        *to[i] = i ? cs_nccl_proto_parse(what[i]) : cs_nccl_algo_parse(what[i]);
        if (*to[i] < 0)
            fprintf(stderr, "collstep %s: %s:%u: NCCL_%s=%s is not one the model takes (one "
                            "name: Tree, Ring, ..., LL, LL128, Simple; not a list or '^'); "
                            "NCCL's own choice is simulated%s\n", s->cmd, log,
                    !given[i] && (i ? t->proto_line : t->algo_line)
                        ? (i ? t->proto_line : t->algo_line)
                        : t->line,
                    i ? "PROTO" : "ALGO", what[i],
                    i ? " (--nccl-proto gives the run's)" : " (--nccl-algo gives the run's)");
        else if (n > 0 && (size_t)n < len)
            n += snprintf(said + n, len - (size_t)n, ", NCCL_%s=%s%s", i ? "PROTO" : "ALGO",
                          what[i], given[i] ? (i ? " (from --nccl-proto)" : " (from --nccl-algo)")
                                            : "");
    }
}

/* Table v: NCCL's system and choice per size, the schedules, the costs. */
static int build_table(cs_nset_t *s, cs_ntab_t *v, const char *log)
{
    const cs_nccl_run_t *t = v->t;
    char said[160];
    cs_cli_nccl_init(&v->nc);
    cs_cli_scheds_init(&v->b);
    nccl_choice(s, v, log, said, sizeof(said));
    v->nc.dtype = v->dt, v->nc.op = v->op;
    /* what is said of NCCL's system and choices names the table */
    char tcmd[600];
    snprintf(tcmd, sizeof(tcmd), "%s: %s:%u", s->cmd, log, t->line);
    int rc = cs_cli_nccl_setup(tcmd, &v->nc, s->plat, v->map, v->nranks);
    if (rc != CS_EXIT_OK)
        return rc;
    if (s->raw)
        cs_nccl_fit_init(&v->nc.sys.fit);
    /* a log of another GPU than the platform's: said (its figures are the
     * platform GPU's) */
    static const char *const gpus[] = {"GB300", "GB200", "B300", "B200", "H200", "H100",
                                       "H800", "H20",  "A100", "A800", "L40",  "V100",
                                       "P100", "MI355", "MI325", "MI300", "MI250"};
    const char *dn = t->ndevs > 0 && t->devs[0].name ? t->devs[0].name : "", *g = NULL;
    for (size_t i = 0; !g && i < sizeof(gpus) / sizeof(gpus[0]); i++)
        if (strcasestr(dn, gpus[i]))
            g = gpus[i];
    if (g && strncasecmp(g, v->nc.sys.gpu, strlen(g)) != 0)
        fprintf(stderr, "collstep %s: %s:%u: the log ran on '%s', but %s's GPU is %s: the "
                        "prediction is %s's (give a platform of the log's GPU, e.g. a `gpu` "
                        "property on its hosts)\n",
                s->cmd, log, t->line, dn, s->platform, v->nc.sys.gpu, v->nc.sys.gpu);
    if (!v->nc.version) { /* the default: say which it is */
        char rest[sizeof(said)];
        snprintf(rest, sizeof(rest), "%s", strchr(said, ',') ? strchr(said, ',') : "");
        snprintf(said, sizeof(said), "NCCL %.16s (the model's default)%.100s", v->nc.k->version,
                 rest);
    } else if (strcmp(v->nc.version, v->nc.k->version) != 0 || v->nc.k->rccl) {
        /* another version's constants simulate it: said with it, where a
         * report kept in a file has it (stderr said it too) */
        char rest[sizeof(said)];
        const char *c = strchr(said, ')');
        snprintf(rest, sizeof(rest), "%s", c ? c : ")");
        char head[sizeof(said)];
        snprintf(head, sizeof(head), "%.*s", c ? (int)(c - said) : (int)strlen(said), said);
        snprintf(said, sizeof(said), "%.60s; simulated as %s %.16s)%.60s", head,
                 v->nc.k->lib, v->nc.k->version, rest + 1);
    }
    snprintf(v->note, sizeof(v->note), "%s: %s:%u, %s, %d ranks on %d node%s in the log, %s "
             "%s, %s", v->label, log, t->line, cs_nccl_coll_name(t->coll), v->nranks, v->nnodes,
             v->nnodes == 1 ? "" : "s", cs_dtype_name(v->dt), redop_of(v), said);
    if (!s->raw && !cs_nccl_fit_is_identity(&v->nc.sys.fit)) {
        size_t o = strlen(v->note);
        snprintf(v->note + o, sizeof(v->note) - o, ", with the platform's fitted terms");
    }
    cs_cli_pick_t picks[CS_CLI_MAX_SIZES];
    rc = cs_cli_nccl_picks(tcmd, &v->nc, v->coll, v->sizes, v->n, picks);
    int root = t->rows[0].root > 0 && t->rows[0].root < v->nranks ? t->rows[0].root : 0;
    cs_cli_want_t w = {s->cmd, 0, v->sizes, v->n, cs_dtype_size(v->dt), s->platform,
                       s->plat->dims, s->plat->ndims, NULL};
    cs_coll_desc_t d = {v->coll, v->nranks, root, 0};
    if (rc == CS_EXIT_OK)
        rc = cs_cli_scheds_build_picks(&w, picks, "NCCL's tuner", &d, &v->b);
    if (rc == CS_EXIT_OK)
        rc = cs_cli_scheds_verify(s->cmd, &v->b, NULL, CS_CLI_VERIFY_CACHED);
    if (rc != CS_EXIT_OK)
        return rc;
    int kof[CS_CLI_MAX_SIZES];
    for (int k = 0; k < v->n; k++) {
        v->inst[k] = (cs_sim_instance_t){v->b.sched[v->b.of_size[k]], v->sizes[k], v->dt, 0,
                                         v->op, NULL};
        kof[k] = k;
    }
    rc = cs_cli_nccl_costs(s->cmd, &v->nc, v->inst, v->n, kof);
    for (int k = 0; k < v->n && rc == CS_EXIT_OK; k++)
        snprintf(v->how[k], sizeof(v->how[k]), "%s/%s", cs_nccl_algo_name(v->nc.inst_algo[2 * k]),
                 cs_nccl_proto_name(v->nc.inst_algo[2 * k + 1]));
    return rc;
}

int cs_nset_plat_calibrated(const cs_platform_t *p)
{
    /* a file carrying the property (calibrate wrote it, or its user), its
     * factors 1 or not: the calibrated model, which loads the file as
     * written, is the one the factors were fitted under; a preset: sim's
     * default, the ideal model (its literature factors are `--model
     * calibrated`'s, asked for by name) */
    return p->is_file && p->has_factors;
}

/* Table v of collstep's own algorithm (its title's): that algorithm with
 * its parameters for every size, under the calibrated model where the
 * platform has tier factors, else the ideal one.  0 built, 1 skipped
 * (said), else an exit code. */
static int build_own(cs_nset_t *s, cs_ntab_t *v, const char *log)
{
    const cs_nccl_run_t *t = v->t;
    char why[512];
    cs_cli_nccl_init(&v->nc);
    cs_cli_scheds_init(&v->b);
    v->own = 1;
    v->model = cs_nset_plat_calibrated(s->plat) ? CS_SIM_CALIBRATED : CS_SIM_IDEAL;
    if (!cs_algo_find(v->coll, t->cs_algo)) {
        snprintf(why, sizeof(why), "its title names %s '%s', which is not one of collstep's %s "
                                   "algorithms (collstep algos)",
                 t->cs_source[0] == 'r' ? "the run's" : "the simulation's", t->cs_algo,
                 cs_coll_name(v->coll));
        skip(s, log, t, why);
        return 1;
    }
    cs_params_t pp;
    cs_err_t err;
    cs_err_clear(&err);
    cs_params_init(&pp);
    if (t->cs_params[0] && cs_params_parse(&pp, t->cs_params, &err) != CS_OK) {
        snprintf(why, sizeof(why), "its title's parameters '%s' do not parse: %.120s", t->cs_params,
                 err.msg);
        skip(s, log, t, why);
        return 1;
    }
    cs_cli_pick_t picks[CS_CLI_MAX_SIZES];
    for (int k = 0; k < v->n; k++)
        picks[k] = (cs_cli_pick_t){t->cs_algo, t->cs_params, NULL, 0, 0, UINT64_MAX, 0, NULL};
    int root = t->rows[0].root > 0 && t->rows[0].root < v->nranks ? t->rows[0].root : 0;
    cs_cli_want_t w = {s->cmd, 0, v->sizes, v->n, cs_dtype_size(v->dt), s->platform,
                       s->plat->dims, s->plat->ndims, NULL};
    cs_coll_desc_t d = {v->coll, v->nranks, root, 0};
    char from[300];
    snprintf(from, sizeof(from), "%s:%u", log, t->line);
    int rc = cs_cli_scheds_build_picks(&w, picks, from, &d, &v->b);
    if (rc == CS_EXIT_USAGE) { /* said above, without the table */
        snprintf(why, sizeof(why), "its title's %s (%s) does not build for %d ranks (above)",
                 t->cs_algo, t->cs_params, v->nranks);
        skip(s, log, t, why);
        return 1;
    }
    if (rc == CS_EXIT_OK)
        rc = cs_cli_scheds_verify(s->cmd, &v->b, NULL, CS_CLI_VERIFY_CACHED);
    if (rc != CS_EXIT_OK)
        return rc;
    for (int k = 0; k < v->n; k++) {
        v->inst[k] = (cs_sim_instance_t){v->b.sched[v->b.of_size[k]], v->sizes[k], v->dt, 0,
                                         v->op, NULL};
        snprintf(v->how[k], sizeof(v->how[k]), "%.40s", t->cs_algo);
    }
    snprintf(v->note, sizeof(v->note), "%s: %s:%u, %s, collstep's %s%s%s%s %s by collstep %s, %d "
             "ranks on %d node%s in the log, %s %s, simulated under the %s model%s",
             v->label, log, t->line, cs_nccl_coll_name(t->coll), t->cs_algo,
             t->cs_params[0] ? " (" : "", t->cs_params, t->cs_params[0] ? ")" : "",
             t->cs_source[0] == 'r' ? "measured" : "simulated", t->cs_source, v->nranks,
             v->nnodes, v->nnodes == 1 ? "" : "s", cs_dtype_name(v->dt), redop_of(v),
             v->model == CS_SIM_CALIBRATED || s->strict ? "calibrated" : "ideal",
             s->strict ? " (the tier factors fitted)"
             : v->model == CS_SIM_CALIBRATED ? " (the platform's tier factors)" : "");
    return 0;
}

/* nccl-tests' busbw / algbw for n ranks (0: it tells nothing, as
 * broadcast's and reduce's 1). */
static double bus_factor(cs_coll_t c, int n)
{
    return c == CS_COLL_BROADCAST || c == CS_COLL_REDUCE ? 0 : cs_coll_busbw_factor(c, n);
}

/* Half the last printed digit of x: nccl-tests prints bandwidths with two
 * decimals, collstep's writer with one from 1000 GB/s. */
static double half_digit(double x)
{
    return x >= 1000 ? 0.05 : 0.005;
}

/* A table's rows' busbw / algbw is nccl-tests' factor for its rank count;
 * ranks that its device block (or, without one, the --groups file) does
 * not give are an error naming both (0: they agree, or the rows do not
 * tell).  The row of the largest algbw tells the factor best (its printed
 * digits weigh least). */
static int check_group_ranks(const cs_nset_t *s, const char *log, const cs_nccl_run_t *t,
                             cs_coll_t coll, int n)
{
    int devs = t->ndevs > 0;
    double want = bus_factor(coll, n);
    if (want <= 0)
        return 0;
    int rows = 0, off = 0, topk = -1;
    const cs_nccl_meas_t *top = NULL;
    for (int k = 0; k < t->nrows; k++) {
        const cs_nccl_meas_t *m = t->rows[k].oop.present ? &t->rows[k].oop : &t->rows[k].ip;
        if (!m->present || !(m->algbw_GBps >= 1) || !(m->busbw_GBps > 0))
            continue; /* a small bandwidth's digits tell too little */
        double tol = half_digit(m->busbw_GBps) + want * half_digit(m->algbw_GBps) + 1e-9;
        rows++;
        off += fabs(m->busbw_GBps - want * m->algbw_GBps) > tol;
        if (!top || m->algbw_GBps > top->algbw_GBps)
            top = m, topk = k;
    }
    if (rows < 2 || off * 2 <= rows)
        return 0;
    /* the rank counts whose factor the top row allows */
    double r = top->busbw_GBps / top->algbw_GBps;
    double tol = half_digit(top->busbw_GBps) + r * half_digit(top->algbw_GBps);
    int lo = 0, hi = 0;
    for (int m = 2; m <= 1 << 20; m++) {
        double d = bus_factor(coll, m) * top->algbw_GBps - top->busbw_GBps;
        if (fabs(d) <= tol) {
            lo = lo ? lo : m, hi = m;
        } else if (d > 0) {
            break; /* the factor grows with m: past the row */
        }
    }
    char them[64] = "another rank count";
    if (lo && lo == hi)
        snprintf(them, sizeof(them), "%d ranks", lo);
    else if (lo)
        snprintf(them, sizeof(them), "%d to %d ranks", lo, hi);
    if (lo && lo <= n && n <= hi)
        return 0; /* the top row allows n: the others' digits misled */
    if (devs)
        return cs_cli_usage_error(s->cmd, "%s:%u: the %s table's device block lists %d ranks, but "
                                          "%d of its %d rows disagree: busbw / algbw is %.3f "
                                          "(%.2f / %.2f GB/s at line %u), nccl-tests' factor for "
                                          "%s, not for %d (%.3f): the device block is cut or "
                                          "comes from another run; mend it or give the log as "
                                          "nccl-tests wrote it",
                                  log, t->line, cs_nccl_coll_name(t->coll), n, off, rows, r,
                                  top->busbw_GBps, top->algbw_GBps, t->rows[topk].line, them, n,
                                  want);
    return cs_cli_usage_error(s->cmd, "%s:%u: --groups %s gives the %s table %d ranks, but %d of "
                                      "its %d rows disagree: busbw / algbw is %.3f (%.2f / %.2f "
                                      "GB/s at line %u), nccl-tests' factor for %s, not for %d "
                                      "(%.3f): give the groups of the run that wrote it",
                              log, t->line, s->groups, cs_nccl_coll_name(t->coll), n, off, rows,
                              r, top->busbw_GBps, top->algbw_GBps,
                              t->rows[topk].line, them, n, want);
}

/* One table of log l: 0 built, 1 skipped, else an exit code. */
static int add_table(cs_nset_t *s, int l, const cs_nccl_run_t *t, char **gnames, int ng)
{
    const char *log = s->logs[l];
    cs_coll_t coll;
    int known = cs_nccl_coll_to_cs(t->coll, &coll) == CS_OK;
    if (known && s->colls && !(coll < 32 && (s->colls >> coll) & 1)) {
        skip(s, log, t, "not among --coll");
        return 1;
    }
    if (!t->nrows) {
        skip(s, log, t, t->cut_line ? "no rows: the log is cut inside its first row"
                                    : "no rows: the run stopped before its first size");
        return 1;
    }
    if (!known) {
        skip(s, log, t, t->coll == CS_NCCL_UNKNOWN
                            ? "the log does not say which collective it measured"
                            : "collstep has no such collective");
        return 1;
    }
    /* collstep's tables that are not one algorithm of its own, nor NCCL's */
    static const char *const not_one[][2] = {
        {"plan", "a table of collstep plan (its choice per size, simulated): predict the plan "
                 "with collstep sim --algo auto --tuning FILE, or measure it with collstep "
                 "validate --algo auto --tuning FILE"},
        {"file", "a table collstep wrote for a schedule file (its title names the file): "
                 "predict it with collstep sim --schedule FILE"},
        {"bad", "collstep's title above it names an algorithm whose parameters are cut or too "
                "long to read"},
        {"nccl", "collstep sim ran it under the nccl model (NCCL's costs on collstep's "
                 "algorithm): compare such runs with collstep sim --model nccl"}};
    for (size_t i = 0; i < sizeof(not_one) / sizeof(not_one[0]); i++)
        if (strcmp(t->cs_source, not_one[i][0]) == 0) {
            skip(s, log, t, not_one[i][1]);
            return 1;
        }
    int nranks = t->ndevs > 0 ? t->ndevs : ng;
    if (nranks < 1) {
        if (s->strict)
            return cs_cli_usage_error(s->cmd, "%s:%u: the %s table has no device block: its "
                                              "ranks and nodes are unknown; give --groups FILE "
                                              "(the node of each rank: lines NAME or NAME N)",
                                      log, t->line, cs_nccl_coll_name(t->coll));
        skip(s, log, t, "no device block: its rank count is unknown (--groups FILE gives it)");
        return 1;
    }
    /* NCCL_TESTS_SPLIT_MASK: the ranks ran as several communicators (the
     * device block's Group column), each timed on its own */
    int groups = 0, seen[64];
    for (int d = 0; d < t->ndevs && groups < 64; d++) {
        int g = t->devs[d].group, j = 0;
        while (j < groups && seen[j] != g)
            j++;
        if (g >= 0 && j == groups)
            seen[groups++] = g;
    }
    if (groups > 1) {
        char why[160];
        snprintf(why, sizeof(why),
                 "its ranks ran as %d communicators (the device block's Group column: "
                 "NCCL_TESTS_SPLIT_MASK), which collstep does not simulate",
                 groups);
        skip(s, log, t, why);
        return 1;
    }
    if (check_group_ranks(s, log, t, coll, nranks))
        return CS_EXIT_USAGE;
    if (nranks < 2 && s->strict)
        return cs_cli_usage_error(s->cmd, "%s:%u: the %s table has one rank: nothing crosses a "
                                          "link, so it determines no term; give logs of 2 "
                                          "ranks or more",
                                  log, t->line, cs_nccl_coll_name(t->coll));
    if (nranks < 2) {
        skip(s, log, t, "one rank: nothing crosses a link, and NCCL runs no algorithm for it");
        return 1;
    }
    if ((uint64_t)nranks > s->plat->ndevices)
    {
        char on[32] = ""; /* the device block's nodes (none without one: --groups says) */
        if (t->nnodes > 0)
            snprintf(on, sizeof(on), " on %d node%s", t->nnodes, t->nnodes > 1 ? "s" : "");
        return cs_cli_usage_error(s->cmd, "%s:%u: the table has %d ranks%s but %s has %llu %s: "
                                          "give a platform with at least as many, and as many "
                                          "nodes (e.g. more nodes)",
                                  log, t->line, nranks, on, s->platform,
                                  (unsigned long long)s->plat->ndevices,
                                  s->plat->rank_noun[0] ? s->plat->rank_noun : "devices");
    }
    cs_ntab_t *v = calloc(1, sizeof(*v));
    if (!v)
        return cs_cli_usage_error(s->cmd, "%s", "out of memory");
    s->tab[s->ntab++] = v;
    v->t = t, v->log = l, v->coll = coll, v->nranks = nranks, v->in_fit = s->strict;
    if (s->groups && t->ndevs > 0)
        fprintf(stderr, "collstep %s: %s:%u: --groups %s not used for this table: its device "
                        "block places its ranks\n", s->cmd, log, t->line, s->groups);
    if (take_rows(s, v, log)) {
        free(v);
        s->tab[--s->ntab] = NULL;
        return 1;
    }
    int same = 0; /* the label: the collective, -N after the first */
    for (int j = 0; j < s->ntab - 1; j++)
        same += s->tab[j]->coll == coll;
    snprintf(v->label, sizeof(v->label), same ? "%s-%d" : "%s", cs_coll_name(coll), same + 1);
    int *node_of = calloc((size_t)nranks, sizeof(int));
    if (!node_of)
        return cs_cli_usage_error(s->cmd, "%s", "out of memory");
    int rc = nodes_of(s, v, gnames, node_of);
    if (rc == CS_EXIT_OK)
        rc = place(s, v, log, node_of);
    free(node_of);
    if (rc == CS_EXIT_OK && t->cs_algo[0]) {
        rc = build_own(s, v, log);
        if (rc == 1) { /* skipped */
            cs_cli_scheds_free(&v->b);
            for (int r = 0; v->map && r < v->nranks; r++)
                free(v->map[r]);
            free(v->map), free(v);
            s->tab[--s->ntab] = NULL;
            return 1;
        }
    } else if (rc == CS_EXIT_OK) {
        rc = build_table(s, v, log);
    }
    s->total += v->n;
    return rc;
}

int cs_nset_read(cs_nset_t *s)
{
    cs_err_t err;
    cs_err_clear(&err);
    if (cs_platform_open(s->platform, &s->plat, &err) != CS_OK)
        return cs_cli_usage_error(s->cmd, "--platform %s: %s", s->platform, err.msg);
    char **gnames = NULL;
    int ng = 0, cap = 0, rc = CS_EXIT_OK;
    if (s->groups && (rc = groups_read(s->cmd, s->groups, &gnames, &ng)) != CS_EXIT_OK)
        return rc;
    s->log = calloc((size_t)s->nlogs + 1, sizeof(*s->log));
    if (!s->log)
        rc = cs_cli_usage_error(s->cmd, "%s", "out of memory");
    for (int l = 0; l < s->nlogs && rc == CS_EXIT_OK; l++) {
        cs_err_clear(&err);
        if (cs_nccl_log_load(s->logs[l], &s->log[l], &err) != CS_OK) {
            rc = cs_cli_usage_error(s->cmd, "%s: %s", "nccl-tests log", err.msg);
        } else {
            cap += s->log[l]->ntables;
            char pre[64];
            snprintf(pre, sizeof(pre), "collstep %s: ", s->cmd);
            cs_nccl_log_say_cuts(s->log[l], s->logs[l], pre, stderr);
        }
    }
    if (rc == CS_EXIT_OK && !(s->tab = calloc((size_t)cap + 1, sizeof(*s->tab))))
        rc = cs_cli_usage_error(s->cmd, "%s", "out of memory");
    for (int l = 0; l < s->nlogs && rc == CS_EXIT_OK; l++)
        for (int i = 0; i < s->log[l]->ntables && rc == CS_EXIT_OK; i++) {
            rc = add_table(s, l, &s->log[l]->tables[i], gnames, ng);
            if (rc == 1)
                rc = CS_EXIT_OK;
        }
    for (int i = 0; i < ng; i++)
        free(gnames[i]);
    free(gnames);
    if (rc == CS_EXIT_OK && !s->ntab)
        rc = cs_cli_usage_error(s->cmd, "nccl-tests logs: no table to %s (every one was "
                                        "skipped)", s->strict ? "fit" : "compare");
    return rc;
}

/* ---- simulating ------------------------------------------------------------------- */

typedef struct one_sim {
    const cs_platform_t *plat;
    cs_sim_model_t model;
    const double *tierf; /* CS_SIM_CALIBRATED: the tier factors to run with, or NULL */
    const double *scale;
    char *const *map;
    int nmap;
    cs_sim_instance_t *in;
    int n;
} one_sim_t;

static int sim_child(void *ctx, int fd, cs_err_t *err)
{
    one_sim_t *s = ctx;
    cs_sim_opts_t so;
    cs_sim_opts_init(&so);
    so.model = s->model;
    if (s->model == CS_SIM_NCCL)
        so.tier_bw_scale = s->scale;
    if (s->model == CS_SIM_CALIBRATED && s->tierf) {
        /* this child's copy of the platform (a fork): the variant's factors */
        cs_platform_t *p = (cs_platform_t *)s->plat;
        for (int i = 0; i < p->ntiers; i++) {
            if (s->tierf[2 * i] > 0)
                p->tiers[i].lat_factor = s->tierf[2 * i];
            if (s->tierf[2 * i + 1] > 0)
                p->tiers[i].bw_factor = s->tierf[2 * i + 1];
        }
    }
    so.map = (const char *const *)s->map;
    so.nmap = s->nmap;
    int st = cs_sim_run(s->plat, &so, s->in, s->n, err);
    for (int i = 0; i < s->n && st == CS_OK; i++)
        if (cs_child_put(fd, &s->in[i].time, sizeof(double)) != 0)
            st = cs_err_set(err, CS_ERR_IO, "cannot send the result");
    return st;
}

/* The work of an instance: its schedule's steps. */
static double work(const cs_sim_instance_t *in)
{
    double w = 0;
    for (int r = 0; r < in->sched->desc.nranks; r++)
        w += in->sched->ranks[r].nsteps;
    return w;
}

/* Simulate in[0..m), times into times[]: in slices of contiguous
 * instances, each a child of its own, up to as many at once as the
 * machine has CPUs (8 at most).  The slices do not depend on the CPUs:
 * instances of one simulation run back to back on SimGrid's clock, and a
 * schedule whose simultaneous events tie differently at another start
 * time takes another path (NVLSTree across nodes: 0.3 % at 256 MiB, more
 * where it flips), so an instance's time must not depend on which others
 * share its run.  Up to `maxslice` instances (at most MAXSLICE) each runs
 * alone (its time is the one `collstep sim` of that size alone gives);
 * more are cut into `maxslice` slices of about the same work (the
 * schedules' steps), the same slices on every machine.  A child's start
 * costs (its platform's set-up, the copies of a large parent's pages): a
 * fit's many simulations take fewer slices (cs_nset_t.slices). */
static int sim_parallel(const cs_nset_t *s, const one_sim_t *proto, cs_sim_instance_t *in, int m,
                        int maxslice, double *times)
{
    enum { MAXPAR = 8, MAXSLICE = 64 };
    if (m <= 0)
        return CS_EXIT_OK;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int par = ncpu > 1 ? (int)(ncpu < MAXPAR ? ncpu : MAXPAR) : 1;
    if (maxslice > MAXSLICE)
        maxslice = MAXSLICE;
    int nsl = m < maxslice ? m : maxslice;
    double total = 0;
    for (int i = 0; i < m; i++)
        total += work(&in[i]);
    int first[MAXSLICE + 1], rc = CS_EXIT_OK;
    /* slices: cut where the running work passes k / nsl of the total (one
     * instance each where there are no more than MAXSLICE) */
    int k = 1;
    double acc = 0;
    first[0] = 0;
    for (int i = 0; i + 1 < m && k < nsl; i++) {
        acc += work(&in[i]);
        if (m <= maxslice || acc >= total * k / nsl)
            first[k++] = i + 1;
    }
    nsl = k;
    first[nsl] = m;
    if (par > nsl)
        par = nsl;
    one_sim_t os[MAXPAR];
    cs_child_t ch[MAXPAR], *chp[MAXPAR];
    int slice[MAXPAR], next = 0, running = 0;
    char what[300];
    snprintf(what, sizeof(what), "the simulation of %d ranks on %s", proto->nmap, s->platform);
    cs_err_t err;
    for (int j = 0; j < MAXPAR; j++)
        chp[j] = NULL;
    while (rc == CS_EXIT_OK && (next < nsl || running > 0)) {
        /* start slices while there is a free place */
        for (int j = 0; j < par && next < nsl && rc == CS_EXIT_OK; j++) {
            if (chp[j])
                continue;
            os[j] = *proto;
            os[j].in = in + first[next];
            os[j].n = first[next + 1] - first[next];
            cs_err_clear(&err);
            if (cs_child_start(&ch[j], what, 0, sim_child, &os[j], &err) != CS_OK) {
                fprintf(stderr, "collstep %s: %s\n", s->cmd, err.msg);
                rc = CS_EXIT_RUNTIME;
                break;
            }
            chp[j] = &ch[j], slice[j] = next++, running++;
        }
        if (rc != CS_EXIT_OK || running == 0)
            break;
        int j = cs_child_poll(chp, par, -1);
        if (j < 0) {
            rc = CS_EXIT_RUNTIME;
            break;
        }
        cs_err_clear(&err);
        int st = cs_child_end(&ch[j], &err);
        size_t want = sizeof(double) * (size_t)os[j].n;
        if (st == CS_OK && ch[j].len != want)
            st = cs_err_set(&err, CS_ERR_INTERNAL, "%s: %zu bytes came back, not %zu", what,
                            ch[j].len, want);
        if (st == CS_OK) {
            memcpy(times + first[slice[j]], ch[j].data, want);
        } else {
            fprintf(stderr, "collstep %s: %s\n", s->cmd, err.msg);
            rc = cs_cli_exit_code(st) == CS_EXIT_USAGE ? CS_EXIT_RUNTIME : cs_cli_exit_code(st);
        }
        cs_child_free(&ch[j]);
        chp[j] = NULL, running--;
    }
    for (int j = 0; j < par; j++) /* after an error: the others stopped */
        if (chp[j]) {
            cs_child_stop(&ch[j]);
            cs_child_free(&ch[j]);
        }
    return rc;
}

static int same_run(const cs_ntab_t *a, const cs_ntab_t *b)
{
    if (a->nranks != b->nranks || a->own != b->own || a->model != b->model ||
        memcmp(a->nc.scale, b->nc.scale, sizeof(a->nc.scale)))
        return 0;
    for (int r = 0; r < a->nranks; r++)
        if (strcmp(a->map[r], b->map[r]) != 0)
            return 0;
    return 1;
}

static int simulate(cs_nset_t *s, int nvar, const cs_nccl_fit_t *const *fits, const double *tf,
                    double *pred);

int cs_nset_simulate(cs_nset_t *s, int nvar, const cs_nccl_fit_t *const *fits, double *pred)
{
    return simulate(s, nvar, fits, NULL, pred);
}

int cs_nset_simulate_tiers(cs_nset_t *s, int nvar, const double *tf, double *pred)
{
    int rc = CS_EXIT_OK;
    for (int v = 0; v < nvar && rc == CS_EXIT_OK; v++)
        rc = simulate(s, 1, NULL, tf + (size_t)v * 2 * CS_PLAT_MAX_TIERS,
                      pred ? pred + (size_t)v * (size_t)s->total : NULL);
    return rc;
}

static int simulate(cs_nset_t *s, int nvar, const cs_nccl_fit_t *const *fits, const double *tf,
                    double *pred)
{
    size_t cap = (size_t)s->total * (size_t)nvar + 1;
    cs_sim_instance_t *in = calloc(cap, sizeof(*in));
    cs_sim_nccl_t *cost = calloc(cap, sizeof(*cost));
    double *times = calloc(cap, sizeof(*times));
    int *off = calloc((size_t)s->ntab + 1, sizeof(int));
    unsigned char *done = calloc((size_t)s->ntab + 1, 1);
    int rc = in && cost && times && done && off ? CS_EXIT_OK : CS_EXIT_RUNTIME;
    for (int i = 0, o = 0; rc == CS_EXIT_OK && i < s->ntab; o += s->tab[i++]->n)
        off[i] = o;
    for (int i = 0; i < s->ntab && rc == CS_EXIT_OK; i++) {
        if (done[i])
            continue;
        const cs_ntab_t *lead = s->tab[i];
        int m = 0;
        for (int v = 0; v < nvar; v++)
            for (int j = i; j < s->ntab; j++) {
                const cs_ntab_t *t = s->tab[j];
                if (done[j] || !same_run(t, lead))
                    continue;
                const cs_nccl_fit_t *f = fits ? fits[(size_t)v * (size_t)s->ntab + (size_t)j]
                                               : NULL;
                for (int k = 0; k < t->n; k++, m++) {
                    in[m] = t->inst[k];
                    if (f && t->inst[k].nccl) {
                        cost[m] = *t->inst[k].nccl;
                        cs_nccl_fit_apply(f, &t->nc.sys, t->nc.inst_algo[2 * k],
                                          t->nc.inst_algo[2 * k + 1], &cost[m]);
                        in[m].nccl = &cost[m];
                    }
                }
            }
        one_sim_t os = {s->plat, lead->own ? (tf ? CS_SIM_CALIBRATED : lead->model) : CS_SIM_NCCL,
                        lead->own ? tf : NULL, lead->nc.scale, lead->map, lead->nranks, NULL, 0};
        if ((rc = sim_parallel(s, &os, in, m, s->slices ? s->slices : 64, times)) != CS_EXIT_OK)
            break;
        s->nsims++;
        m = 0;
        for (int v = 0; v < nvar; v++)
            for (int j = i; j < s->ntab; j++) {
                cs_ntab_t *t = s->tab[j];
                if (done[j] || !same_run(t, lead))
                    continue;
                for (int k = 0; k < t->n; k++, m++) {
                    if (pred)
                        pred[(size_t)v * (size_t)s->total + (size_t)off[j] + (size_t)k] =
                            times[m];
                    else if (v == 0)
                        t->pred[k] = times[m];
                }
            }
        for (int j = i; j < s->ntab; j++)
            if (!done[j] && same_run(s->tab[j], lead))
                done[j] = 1;
    }
    if (!in || !cost || !times || !done || !off)
        fprintf(stderr, "collstep %s: out of memory\n", s->cmd);
    free(in), free(cost), free(times), free(done), free(off);
    return rc;
}

/* ---- sizes the model does not fit ---------------------------------------------- */

/* The slope of log(y) against log(size) between sizes i and i + 1 (NaN
 * where the sizes do not grow). */
static double slope(const cs_ntab_t *t, const double *y, int i)
{
    if (t->sizes[i + 1] <= t->sizes[i] || !(y[i] > 0) || !(y[i + 1] > 0))
        return NAN;
    return log(y[i + 1] / y[i]) / log((double)t->sizes[i + 1] / (double)t->sizes[i]);
}

/* Which curve bends between sizes at and at + 1 of the choice's range
 * [lo, hi]: its slope there against its slopes beside it.  1: the model's
 * (by more than twice the log's), 0: the log's, or no neighbour to tell. */
static int pace_change(const cs_ntab_t *t, int lo, int hi, int at)
{
    double dev[2];
    for (int c = 0; c < 2; c++) {
        const double *y = c ? t->pred : t->meas;
        double side = 0;
        int n = 0;
        if (at > lo)
            side += slope(t, y, at - 1), n++;
        if (at + 1 < hi)
            side += slope(t, y, at + 1), n++;
        dev[c] = n ? fabs(slope(t, y, at) - side / n) : NAN;
        if (!isfinite(dev[c]))
            return 0;
    }
    return dev[1] > 2 * dev[0];
}

/* "16 MiB", "1 KiB", "8 B" (whole units where the size is one). */
void cs_ntab_why(const cs_ntab_t *t, int k, char *buf, size_t len)
{
    const char *p = t->how[k];
    int lo = k, hi = k;
    while (lo > 0 && strcmp(t->how[lo - 1], p) == 0)
        lo--;
    while (hi < t->n - 1 && strcmp(t->how[hi + 1], p) == 0)
        hi++;
    char a[32], z[32];
    /* a change of NCCL's choice next to it that the log does not show */
    int j = k == lo && k > 0 ? k - 1 : k == hi && k < t->n - 1 ? k + 1 : -1;
    if (j >= 0) {
        int u = j < k ? j : k, w = j < k ? k : j;
        double m = t->meas[w] / t->meas[u], q = t->pred[w] / t->pred[u];
        if (fabs(log(m / q)) > log(1.1)) {
            cs_cli_size_text(t->sizes[u], a, sizeof(a));
            cs_cli_size_text(t->sizes[w], z, sizeof(z));
            snprintf(buf, len, "NCCL's tuner goes from %s (%s) to %s (%s) here; the log's time "
                               "changes by %+.0f %% there, the model's by %+.0f %%: the run "
                               "switched at another size, or to another algorithm or protocol",
                     t->how[u], a, t->how[w], z, (m - 1) * 100, (q - 1) * 100);
            return;
        }
    }
    /* a bump: the log's time here (or the model's) off the line through its
     * neighbours (same choice, sizes on either side), the error here the
     * largest of the three and off both neighbours' in the same direction,
     * the other curve straight */
    if (k > lo && k < hi) {
        /* the line in log(time) against log(size): the sizes' own spacing */
        double x0 = log((double)t->sizes[k - 1]), x1 = log((double)t->sizes[k + 1]);
        double w = x1 > x0 ? (log((double)t->sizes[k]) - x0) / (x1 - x0) : 0.5;
        double lm = log(t->meas[k]) - ((1 - w) * log(t->meas[k - 1]) + w * log(t->meas[k + 1]));
        double lp = log(t->pred[k]) - ((1 - w) * log(t->pred[k - 1]) + w * log(t->pred[k + 1]));
        double e0 = log(t->pred[k - 1] / t->meas[k - 1]), e1 = log(t->pred[k + 1] / t->meas[k + 1]);
        double ek = log(t->pred[k] / t->meas[k]);
        int spike = fabs(ek - e0) > log(1.05) && fabs(ek - e1) > log(1.05) &&
                    (ek - e0) * (ek - e1) > 0 && fabs(ek) > fabs(e0) && fabs(ek) > fabs(e1);
        int run = fabs(lm) > log(1.06) && fabs(lm) >= 2 * fabs(lp);
        int model = fabs(lp) > log(1.06) && fabs(lp) >= 2 * fabs(lm);
        if (spike && (run || model)) {
            cs_cli_size_text(t->sizes[k - 1], a, sizeof(a));
            cs_cli_size_text(t->sizes[k + 1], z, sizeof(z));
            if (run)
                snprintf(buf, len, "the log's time here is %+.0f %% off the line through its "
                                   "neighbours (%s and %s), the model's %+.0f %%: a bump of the "
                                   "run (noise, another job, a clock change), not a term the "
                                   "model lacks",
                         (exp(lm) - 1) * 100, a, z, (exp(lp) - 1) * 100);
            else
                snprintf(buf, len, "the model's time here is %+.0f %% off the line through its "
                                   "neighbours (%s and %s), the log's %+.0f %%: the simulated "
                                   "schedule changes pace at this size where the run does not",
                         (exp(lp) - 1) * 100, a, z, (exp(lm) - 1) * 100);
            return;
        }
    }
    /* a near constant difference over the choice's sizes: a cost per
     * collective that the size does not change (the log's time minus the
     * model's within half of its median from the first size to the last) */
    if (hi - lo >= 2 && t->pred[hi] >= 2 * t->pred[lo]) {
        double dmin = INFINITY, dmax = -INFINITY, dsum = 0, rmin = INFINITY, rmax = 0;
        for (int i = lo; i <= hi; i++) {
            double d = t->meas[i] - t->pred[i], r = t->meas[i] / t->pred[i];
            dmin = fmin(dmin, d), dmax = fmax(dmax, d), dsum += d;
            rmin = fmin(rmin, r), rmax = fmax(rmax, r);
        }
        double dmean = dsum / (hi - lo + 1);
        /* and the ratio varies more than the difference: a rate that is off
         * keeps the ratio, not the difference */
        if ((dmin > 0 || dmax < 0) && dmax - dmin <= 0.5 * fabs(dmean) &&
            (rmax - rmin) / (0.5 * (rmax + rmin)) > (dmax - dmin) / fabs(dmean)) {
            cs_cli_size_text(t->sizes[lo], a, sizeof(a));
            cs_cli_size_text(t->sizes[hi], z, sizeof(z));
            snprintf(buf, len, "every size of the log's %s range (%s to %s) takes about %.0f us "
                               "%s than the model (%.0f to %.0f us): a cost per collective that "
                               "the size does not change, %s",
                     p, a, z, fabs(dmean) * 1e6, dmean > 0 ? "more" : "less",
                     fabs(dmin > 0 ? dmin : dmax) * 1e6, fabs(dmin > 0 ? dmax : dmin) * 1e6,
                     dmean > 0 ? "which the platform lacks (a slower network stack or plugin, a "
                                 "proxy, launch overhead); collstep calibrate --from-nccl-tests "
                                 "fits it to the latency terms"
                               : "which the platform's latency terms overstate for this run "
                                 "(collstep calibrate --from-nccl-tests fits them)");
            return;
        }
    }
    /* two regimes inside one choice: the largest jump of the error between
     * consecutive sizes of the pair */
    int at = -1;
    double jump = 0;
    for (int i = lo; i < hi; i++) {
        double d = fabs(log((t->pred[i + 1] / t->meas[i + 1]) / (t->pred[i] / t->meas[i])));
        if (d > jump)
            jump = d, at = i;
    }
    if (at >= 0 && jump > log(1.2) && t->own) {
        cs_cli_size_text(t->sizes[at], a, sizeof(a));
        cs_cli_size_text(t->sizes[at + 1], z, sizeof(z));
        snprintf(buf, len, "the log changes regime inside its %s sizes, between %s and %s (its "
                           "time %+.0f %%, the model's %+.0f %%): %s",
                 p, a, z, (t->meas[at + 1] / t->meas[at] - 1) * 100,
                 (t->pred[at + 1] / t->pred[at] - 1) * 100,
                 t->t->cs_source[0] == 'r'
                     ? "the transport or the hosts likely changed how they move messages there "
                       "(eager to rendezvous, buffers leaving the caches, a queue that starts "
                       "to drop), which the platform's links do not model"
                     : "the simulation that wrote it ran another platform or model than this "
                       "one, whose terms the tiers' latency and rate do not capture");
        return;
    }
    if (at >= 0 && jump > log(1.2) && strncmp(p, "P2P/", 4) == 0) {
        cs_cli_size_text(t->sizes[at], a, sizeof(a));
        cs_cli_size_text(t->sizes[at + 1], z, sizeof(z));
        snprintf(buf, len, "the log changes regime inside its all-to-all sizes (NCCL's "
                           "send/receive path), between %s and %s (its time %+.0f %%, the "
                           "model's %+.0f %%): NCCL spreads an exchange over more channels and "
                           "other chunks as it grows, which the model follows only in how many "
                           "exchanges run at once",
                 a, z, (t->meas[at + 1] / t->meas[at] - 1) * 100,
                 (t->pred[at + 1] / t->pred[at] - 1) * 100);
        return;
    }
    if (at >= 0 && jump > log(1.2)) {
        cs_cli_size_text(t->sizes[at], a, sizeof(a));
        cs_cli_size_text(t->sizes[at + 1], z, sizeof(z));
        double dm = (t->meas[at + 1] / t->meas[at] - 1) * 100; /* the log's step, in % */
        double dp = (t->pred[at + 1] / t->pred[at] - 1) * 100; /* the model's */
        if (pace_change(t, lo, hi, at) == 1) /* the model's curve bends there, not the log's */
            snprintf(buf, len, "the model changes pace inside NCCL's %s range, between %s and "
                               "%s (its time %+.0f %% from one to the other, the log's %+.0f "
                               "%%; against the sizes beside them the model's curve bends "
                               "there, the log's does not): the simulated schedule (NCCL's "
                               "pieces and channels as the model follows them) changes there "
                               "where the run does not",
                     p, a, z, dp, dm);
        else
            snprintf(buf, len, "the log changes regime inside NCCL's %s range, between %s and "
                               "%s (its time %+.0f %%, the model's %+.0f %%): the run likely "
                               "used another algorithm or protocol for part of the range "
                               "(NCCL_ALGO, NCCL_PROTO, a tuner plugin, or NCCL's choice on that "
                               "machine)",
                     p, a, z, dm, dp);
        return;
    }
    cs_cli_size_text(t->sizes[lo], a, sizeof(a));
    cs_cli_size_text(t->sizes[hi], z, sizeof(z));
    /* every size of the choice off the same way, by more than 5 %: the
     * platform's terms for it, not the shape of the log */
    double emin = INFINITY, emax = -INFINITY;
    for (int i = lo; i <= hi; i++) {
        double e = t->pred[i] / t->meas[i] - 1;
        emin = fmin(emin, e), emax = fmax(emax, e);
    }
    /* the advice: fit the terms, or (a platform fitted already) fit them
     * with this log too */
    const char *fit = t->in_fit ? "the terms fitted to every log given leave it off: it "
                                  "disagrees with the other logs the terms serve, or the model "
                                  "lacks a term it needs"
                      : !t->own && !cs_nccl_fit_is_identity(&t->nc.sys.fit)
                          ? "the platform's fitted terms do not carry over to this log: give it "
                            "to collstep calibrate --from-nccl-tests with the others"
                          : "collstep calibrate --from-nccl-tests fits them to logs";
    if (hi > lo && (emin > 0.05 || emax < -0.05)) {
        char by[48];
        double e1 = fabs(emin > 0 ? emin : emax) * 100, e2 = fabs(emin > 0 ? emax : emin) * 100;
        if (lround(e1) == lround(e2))
            snprintf(by, sizeof(by), "%.0f %%", e1);
        else
            snprintf(by, sizeof(by), "%.0f to %.0f %%", e1, e2);
        snprintf(buf, len, "every size of the log's %s range (%s to %s) is predicted %s, by %s: "
                           "the platform's %s for it %s off (%s)",
                 p, a, z, emin > 0 ? "slow" : "fast", by,
                 t->own ? "tiers' rates or latencies" : "rate or latency",
                 t->own ? "are" : "is", fit);
        return;
    }
    if (hi == lo) {
        snprintf(buf, len, "the only size of the log's %s range, predicted %s: the platform's "
                           "%s for it %s off, or the run was (one size cannot tell which; %s)",
                 p, t->pred[k] > t->meas[k] ? "slow" : "fast",
                 t->own ? "tiers' rates or latencies" : "rate or latency",
                 t->own ? "are" : "is", fit);
        return;
    }
    snprintf(buf, len, "the log's %s sizes (%s to %s) do not follow one per-step latency and "
                       "one rate: the model leaves this one %s",
             p, a, z, t->pred[k] > t->meas[k] ? "slow" : "fast");
}

char *cs_nset_unfit_text(const cs_nset_t *s, double tol, const char *verb)
{
    char *un = NULL;
    size_t unlen = 0;
    FILE *mf = open_memstream(&un, &unlen);
    if (!mf)
        return NULL;
    if (!cs_nset_unfit(s, tol, "", mf))
        fprintf(mf, "every size %s within %.0f %%\n", verb, tol * 100);
    if (fclose(mf) != 0) {
        free(un);
        return NULL;
    }
    return un;
}

int cs_nset_unfit(const cs_nset_t *s, double tol, const char *prefix, FILE *f)
{
    int nun = 0, lines = 0, more = 0;
    for (int i = 0; i < s->ntab; i++) {
        const cs_ntab_t *t = s->tab[i];
        for (int k = 0; k < t->n; k++) {
            double e = t->pred[k] / t->meas[k] - 1;
            if (!(fabs(e) > tol))
                continue;
            if (!nun)
                fprintf(f, "%ssizes off by more than %.0f %%:\n", prefix, tol * 100);
            /* the next sizes off for the same reason: one line */
            char why[400], w2[400], sz[32], sz2[32];
            cs_ntab_why(t, k, why, sizeof(why));
            int last = k;
            double emin = e, emax = e;
            while (last + 1 < t->n) {
                double e2 = t->pred[last + 1] / t->meas[last + 1] - 1;
                if (!(fabs(e2) > tol))
                    break;
                cs_ntab_why(t, last + 1, w2, sizeof(w2));
                if (strcmp(w2, why) != 0)
                    break;
                last++;
                emin = fmin(emin, e2), emax = fmax(emax, e2);
            }
            nun += last - k + 1;
            if (lines++ >= 40) {
                more += last - k + 1;
                k = last;
                continue;
            }
            cs_cli_size_text(t->sizes[k], sz, sizeof(sz));
            if (last == k) {
                fprintf(f, "%s  %s:%u %s %s: %+.1f %%: %s\n", prefix, s->logs[t->log],
                        t->row_line[k], t->label, sz, e * 100, why);
            } else {
                cs_cli_size_text(t->sizes[last], sz2, sizeof(sz2));
                fprintf(f, "%s  %s:%u-%u %s %s to %s (%d sizes): %+.1f to %+.1f %%: %s\n",
                        prefix, s->logs[t->log], t->row_line[k], t->row_line[last], t->label,
                        sz, sz2, last - k + 1, emin * 100, emax * 100, why);
            }
            k = last;
        }
    }
    if (more)
        fprintf(f, "%s  (%d more sizes: --format csv or json gives every row its reason, column "
                   "off_why)\n", prefix, more);
    return nun;
}

/* ---- the report ------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Every table's sizes in one sorted list (each table serving its own). */
int cs_nset_report(const cs_nset_t *s, const cs_cli_report_t *rep, const char *terms,
                   const char *notes)
{
    int ns = 0, rc = CS_EXIT_OK;
    uint64_t *sizes = calloc((size_t)s->total + 1, sizeof(*sizes));
    cs_validate_case_t *cases = calloc((size_t)s->ntab + 1, sizeof(*cases));
    const char **algo = calloc((size_t)s->ntab + 1, sizeof(char *));
    const char **params = calloc((size_t)s->ntab + 1, sizeof(char *));
    const char **how = NULL;
    char **why = NULL;
    unsigned char *serves = NULL;
    char(*loc)[300] = calloc((size_t)s->ntab + 1, sizeof(*loc));
    cs_validate_t v = {0};
    cs_out_t *out = NULL;
    FILE *f = stdout;
    cs_err_t err;
    cs_err_clear(&err);
    if (!sizes || !cases || !algo || !params || !loc)
        goto oom;
    for (int i = 0; i < s->ntab; i++)
        for (int k = 0; k < s->tab[i]->n; k++)
            sizes[ns++] = s->tab[i]->sizes[k];
    qsort(sizes, (size_t)ns, sizeof(*sizes), cmp_u64);
    int u = 0;
    for (int k = 0; k < ns; k++)
        if (!u || sizes[u - 1] != sizes[k])
            sizes[u++] = sizes[k];
    ns = u;
    how = calloc((size_t)s->ntab * (size_t)ns + 1, sizeof(char *));
    why = calloc((size_t)s->ntab * (size_t)ns + 1, sizeof(char *));
    serves = calloc((size_t)s->ntab * (size_t)ns + 1, 1);
    if (!how || !why || !serves)
        goto oom;
    /* the model of the report's header: tables of collstep's own algorithms
     * (every one) run under theirs; "measured by collstep run" where each
     * table says so */
    int own = 0, run = 0, sim = 0, simsrc = 0;
    for (int i = 0; i < s->ntab; i++) {
        const char *src = s->tab[i]->t->cs_source;
        own += s->tab[i]->own;
        run += s->tab[i]->own && src[0] == 'r';
        sim += s->tab[i]->own && src[0] == 's';
        /* sim's tables of NCCL's choice too */
        simsrc += !strcmp(src, "sim") || !strcmp(src, "nccl");
    }
    cs_sim_model_t model = own == s->ntab ? s->tab[0]->model : CS_SIM_NCCL;
    v = (cs_validate_t){.coll = s->tab[0]->coll, .nranks = s->tab[0]->nranks, .nnodes = 1,
                        .nalgo = s->ntab, .nsizes = ns, .algo = algo, .params = params,
                        .sizes = sizes, .serves = serves, .cases = cases,
                        .ngroups = s->nlogs, .group = (const char **)s->logs, .how = how,
                        .why = (const char *const *)why, .terms = terms, .notes = notes,
                        .nplats = 1,
                        .transport = run == s->ntab      ? "collstep run (nccl-tests layout)"
                                     : sim == s->ntab    ? "collstep sim (nccl-tests layout)"
                                     : simsrc == s->ntab ? "collstep sim (nccl-tests layout)"
                                     : own == s->ntab    ? "collstep (nccl-tests layout)"
                                                         : "nccl-tests",
                        .iters = 1};
    v.plats[0] = (cs_validate_plat_t){s->platform, model, s->plat, NULL, NULL};
    if (cs_validate_alloc(&v, &err) != CS_OK)
        goto oom;
    for (int a = 0; a < s->ntab; a++) {
        const cs_ntab_t *t = s->tab[a];
        cases[a] = (cs_validate_case_t){t->coll, t->nranks, t->nnodes, t->dt, t->op, t->log,
                                        t->note};
        algo[a] = t->label;
        snprintf(loc[a], sizeof(loc[a]), "%s:%u", s->logs[t->log], t->t->line);
        params[a] = loc[a];
        for (int k = 0; k < t->n; k++) {
            /* the union of the sizes is sorted; a table's need not be (a
             * hand-edited log) */
            int j = 0;
            while (j < ns && sizes[j] != t->sizes[k])
                j++;
            if (j == ns)
                continue;
            size_t x = (size_t)a * (size_t)ns + (size_t)j;
            serves[x] = 1;
            how[x] = t->how[k];
            if (fabs(t->pred[k] / t->meas[k] - 1) > CS_NSET_TOL) { /* the reason, as listed */
                char w[400];
                cs_ntab_why(t, k, w, sizeof(w));
                if (!(why[x] = strdup(w)))
                    goto oom;
            }
            v.meas[x] = (cs_validate_meas_t){.med = t->meas[k], .p10 = t->meas[k],
                                             .p90 = t->meas[k], .lo = t->meas[k],
                                             .hi = t->meas[k]};
            v.pred[x] = t->pred[k];
        }
    }
    if (rep->output) {
        int fl = CS_OUT_STDOUT | (rep->force ? CS_OUT_FORCE : 0);
        if (cs_out_begin_file(rep->output, fl, &cs_validate_out_kind, &out, &err) != CS_OK) {
            rc = cs_cli_usage_error(s->cmd, "%s %s: %s", rep->flag ? rep->flag : "-o",
                                    rep->output, err.msg);
            goto done;
        }
        f = cs_out_stream(out);
    }
    if (cs_validate_write(&v, rep->fmt, f, &err) != CS_OK) {
        cs_out_abort(out);
        fprintf(stderr, "collstep %s: %s\n", s->cmd, err.msg);
        rc = CS_EXIT_RUNTIME;
    } else if (out && cs_out_commit(out, &err) != CS_OK) {
        fprintf(stderr, "collstep %s: %s %s: %s\n", s->cmd, rep->flag ? rep->flag : "-o",
                rep->output, err.msg);
        rc = CS_EXIT_RUNTIME;
    }
    fflush(f);
    goto done;
oom:
    fprintf(stderr, "collstep %s: out of memory\n", s->cmd);
    rc = CS_EXIT_RUNTIME;
done:
    cs_validate_free(&v);
    for (size_t x = 0; why && x < (size_t)s->ntab * (size_t)ns; x++)
        free(why[x]);
    free(sizes), free(cases), free(algo), free(params), free(how), free(why), free(serves),
        free(loc);
    return rc;
}

void cs_nset_free(cs_nset_t *s)
{
    for (int i = 0; i < s->ntab; i++) {
        cs_ntab_t *v = s->tab[i];
        cs_cli_scheds_free(&v->b);
        cs_cli_nccl_fini(&v->nc);
        for (int r = 0; v->map && r < v->nranks; r++)
            free(v->map[r]);
        free(v->map);
        free(v);
    }
    free(s->tab);
    for (int l = 0; s->log && l < s->nlogs; l++)
        cs_nccl_log_destroy(s->log[l]);
    free(s->log);
    cs_platform_close(s->plat);
    s->tab = NULL, s->log = NULL, s->plat = NULL, s->ntab = 0;
}

#endif /* CS_HAVE_MODEL */
