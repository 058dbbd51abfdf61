/*
 * cmd_validate_nccl.c - `collstep validate --nccl-tests LOG... --platform
 * SPEC`: no live run; every table of nccl-tests logs (core/cs_nccl_log.h)
 * is predicted on a platform under `--model nccl` with NCCL's choice per
 * size, as `collstep sim --model nccl --algo nccl` does, and the log's
 * in-place times are compared with the predictions in validate's report
 * (validate/cs_validate.h, a case per table and a group per log).
 *
 *   read     each log; tables of collectives collstep lacks (sendrecv,
 *            gather, scatter, hypercube), of an unknown collective, without
 *            a device block (their rank count) or with several types or
 *            operators are skipped, each with a line saying so
 *   build    per table: NCCL's version (the log's, else --nccl-version,
 *            else the model's newest), NCCL_ALGO / NCCL_PROTO from the log,
 *            the system NCCL's tuner sees with the ranks on the platform's
 *            devices in order, its choice per size as collstep schedules,
 *            what each instance pays
 *   act      one simulation (cs_sim_run, in a watched child) per rank count
 *            and set of tier rates: every table of it at once
 *   report   cs_validate_write: table, csv or json, per table, per log and
 *            overall the median, geometric mean and worst |error|
 *
 * Exit codes (cli.h): 0; 2 usage and bad input (a log that cannot be read
 * or has no table, a platform with fewer devices than a table's ranks, no
 * table to compare); 3 a simulation failed; 128+N a signal.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cs_child.h"
#include "cs_nccl_log.h"
#include "cs_validate.h"

#define MAX_LOGS 64

#ifdef CS_HAVE_MODEL

static void help(FILE *f)
{
    fprintf(f,
            "usage: collstep validate --nccl-tests LOG [LOG...] --platform SPEC [options]\n"
            "\n"
            "Predict nccl-tests logs: every table of every LOG (all_reduce_perf and the\n"
            "other *_perf programs) is simulated on SPEC under --model nccl with NCCL's\n"
            "choice of algorithm and protocol per size (NCCL_ALGO / NCCL_PROTO when the\n"
            "log shows them), the same collective, ranks (on SPEC's devices in order),\n"
            "type, operator and sizes; the log's in-place time is the measured one.\n"
            "Prints measured against predicted per size with the error, and per table,\n"
            "per log and overall the median, geometric mean and worst |error|.\n"
            "\n"
            "  --nccl-tests LOG     a log (repeatable; further LOGs may follow as operands)\n"
            "  --platform SPEC      platform to predict with (XML file or preset); it needs\n"
            "                       as many devices as the tables have ranks\n"
            "  --nccl-version V     NCCL's constants for tables whose log does not print\n"
            "                       NCCL's version (default: the model's newest)\n"
            "  --format F           table (default), csv, json\n"
            "  -o, --output FILE    write the report to FILE (whole or not at all)\n"
            "  --force              replace an existing FILE that collstep did not write\n"
            "  --help               this text\n"
            "\n"
            "Skipped, each with a line on stderr: tables of collectives collstep lacks\n"
            "(sendrecv, gather, scatter, hypercube) or that the log does not name, tables\n"
            "without a device block, tables mixing types or operators (-d all, -o all).\n"
            "\n%s"
            "\nexample: collstep validate --nccl-tests slurm-1234.out --platform "
            "hgx-h100:nodes=2\n",
            cs_cli_exit_help);
}


typedef struct opts {
    const char *logs[MAX_LOGS];
    int nlogs;
    const char *platform, *version;
    cs_cli_report_t rep;
} opts_t;

/* One table compared. */
typedef struct vtab {
    const cs_nccl_run_t *t;
    int log;                       /* index in opts.logs: its group */
    cs_coll_t coll;
    cs_dtype_t dt;
    cs_op_t op;
    int nranks, n;                 /* ranks, sizes */
    uint64_t sizes[CS_CLI_MAX_SIZES];
    double meas[CS_CLI_MAX_SIZES]; /* seconds, the log's in-place column */
    double pred[CS_CLI_MAX_SIZES];
    char how[CS_CLI_MAX_SIZES][48];
    cs_cli_nccl_t nc;
    cs_cli_scheds_t b;
    cs_sim_instance_t inst[CS_CLI_MAX_SIZES];
    char label[40], note[512];
} vtab_t;

typedef struct vrun {
    opts_t o;
    cs_platform_t *plat;
    cs_nccl_log_t *log[MAX_LOGS];
    vtab_t **tab;
    int ntab;
} vrun_t;

static int parse_opt(void *ctx, int c, const char *arg)
{
    opts_t *o = ctx;
    switch (c) {
    case 'L':
        if (o->nlogs == MAX_LOGS)
            return cs_cli_usage_error("validate", "--nccl-tests: at most %d logs", MAX_LOGS);
        o->logs[o->nlogs++] = arg;
        return CS_EXIT_OK;
    case 'P': o->platform = arg; return CS_EXIT_OK;
    case 'V': {
        cs_cli_nccl_t probe;
        cs_cli_nccl_init(&probe);
        o->version = arg;
        return cs_cli_nccl_opt("validate", &probe, CS_CLI_NCCL_VERSION, arg);
    }
    case 'f': return cs_cli_parse_format("validate", arg, &o->rep.fmt);
    case 'o': o->rep.output = arg; return CS_EXIT_OK;
    case 'F': o->rep.force = 1; return CS_EXIT_OK;
    default: return CS_EXIT_USAGE;
    }
}

static int parse(int argc, char **argv, opts_t *o)
{
    static const struct option lo[] = {
        {"nccl-tests", required_argument, 0, 'L'}, {"platform", required_argument, 0, 'P'},
        {"nccl-version", required_argument, 0, 'V'}, {"format", required_argument, 0, 'f'},
        {"output", required_argument, 0, 'o'},     {"force", no_argument, 0, 'F'},
        {"help", no_argument, 0, 'h'},             {0, 0, 0, 0}};
    memset(o, 0, sizeof(*o));
    o->rep.fmt = CS_FMT_TABLE;
    int rc = cs_cli_options("validate", argc, argv, ":ho:", lo, help, parse_opt, o);
    if (rc != CS_EXIT_OK)
        return rc;
    for (int i = optind; i < argc; i++) {
        if (o->nlogs == MAX_LOGS)
            return cs_cli_usage_error("validate", "--nccl-tests: at most %d logs", MAX_LOGS);
        o->logs[o->nlogs++] = argv[i];
    }
    if (!o->nlogs)
        return cs_cli_usage_hint("validate", "--nccl-tests LOG: no log given");
    if (!o->platform)
        return cs_cli_usage_hint("validate", "--nccl-tests: --platform SPEC is required (the "
                                             "platform to predict the logs with)");
    if (strchr(o->platform, '@'))
        return cs_cli_usage_error("validate", "--platform %s: --nccl-tests predicts with the "
                                              "nccl model; give the platform alone",
                                  o->platform);
    return CS_EXIT_OK;
}

static void skip(const char *log, const cs_nccl_run_t *t, const char *why)
{
    fprintf(stderr, "collstep validate: %s:%u: %s table skipped: %s\n", log, t->line,
            cs_nccl_coll_name(t->coll), why);
}

/* The rows of table t: the type and operator of them all, the sizes and
 * the in-place times.  0: compare it; 1: skipped (said); 2: refused. */
static int take_rows(vrun_t *r, vtab_t *v, const char *log)
{
    const cs_nccl_run_t *t = v->t;
    char why[256];
    v->dt = cs_dtype_parse(t->rows[0].type);
    const char *opn = t->rows[0].redop;
    v->op = !opn[0] || strcmp(opn, "none") == 0 ? CS_OP_SUM : cs_op_parse(opn);
    if (v->dt == CS_DT_COUNT || v->op == CS_OP_COUNT) {
        snprintf(why, sizeof(why), "collstep has no %s '%s'", v->dt == CS_DT_COUNT ? "type" :
                 "operator", v->dt == CS_DT_COUNT ? t->rows[0].type : opn);
        skip(log, t, why);
        return 1;
    }
    for (int i = 0; i < t->nrows; i++) {
        const cs_nccl_row_t *w = &t->rows[i];
        if (strcmp(w->type, t->rows[0].type) || strcmp(w->redop, opn)) {
            skip(log, t, "its rows have several types or operators (-d all, -o all): give "
                         "one table per type and operator");
            return 1;
        }
        const cs_nccl_meas_t *m = w->ip.present ? &w->ip : &w->oop;
        if (!m->present || !isfinite(m->time_us) || m->time_us <= 0) {
            fprintf(stderr, "collstep validate: %s:%u: %llu B: no time to compare with; row "
                            "left out\n", log, w->line, (unsigned long long)w->size);
            continue;
        }
        uint64_t b = cs_cli_size_moved(v->coll, v->nranks, w->size, cs_dtype_size(v->dt));
        int dup = 0;
        for (int k = 0; k < v->n; k++)
            dup |= v->sizes[k] == b;
        if (dup || b == 0)
            continue;
        if (v->n == CS_CLI_MAX_SIZES) {
            snprintf(why, sizeof(why), "more than %d sizes", CS_CLI_MAX_SIZES);
            skip(log, t, why);
            return 1;
        }
        v->sizes[v->n] = b;
        v->meas[v->n++] = m->time_us * 1e-6;
    }
    if (!v->n) {
        skip(log, t, "no row with a time");
        return 1;
    }
    (void)r;
    return 0;
}

/* NCCL's version, algorithm and protocol for table t, said in its note. */
static void nccl_choice(vrun_t *r, vtab_t *v, const char *log, char *said, size_t len)
{
    const cs_nccl_run_t *t = v->t;
    const char *from;
    if (t->nccl_version[0])
        v->nc.version = t->nccl_version, from = "from the log";
    else if (r->o.version)
        v->nc.version = r->o.version, from = "from --nccl-version";
    else
        v->nc.version = NULL, from = "the model's default";
    int n = snprintf(said, len, "NCCL %s (%s)", v->nc.version ? v->nc.version : "", from);
    const char *what[2] = {t->algo, t->proto};
    int *to[2] = {&v->nc.algo, &v->nc.proto};
    for (int i = 0; i < 2; i++) {
        if (!what[i][0])
            continue;
        *to[i] = i ? cs_nccl_proto_parse(what[i]) : cs_nccl_algo_parse(what[i]);
        if (*to[i] < 0)
            fprintf(stderr, "collstep validate: %s:%u: NCCL_%s=%s is not one the model takes; "
                            "NCCL's own choice is simulated\n", log, t->line,
                    i ? "PROTO" : "ALGO", what[i]);
        else if (n > 0 && (size_t)n < len)
            n += snprintf(said + n, len - (size_t)n, ", NCCL_%s=%s", i ? "PROTO" : "ALGO",
                          what[i]);
    }
}

/* Table v: NCCL's system and choice per size, the schedules, the costs. */
static int build_table(vrun_t *r, vtab_t *v, const char *log)
{
    const cs_nccl_run_t *t = v->t;
    char said[160];
    cs_cli_nccl_init(&v->nc);
    cs_cli_scheds_init(&v->b);
    nccl_choice(r, v, log, said, sizeof(said));
    v->nc.dtype = v->dt, v->nc.op = v->op;
    char **hosts = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    if (cs_sim_hosts(r->plat, NULL, v->nranks, &hosts, &err) != CS_OK)
        return cs_cli_usage_error("validate", "--platform %s: %s", r->o.platform, err.msg);
    int rc = cs_cli_nccl_setup("validate", &v->nc, r->plat, hosts, v->nranks);
    cs_sim_hosts_free(hosts, v->nranks);
    if (rc != CS_EXIT_OK)
        return rc;
    if (!v->nc.version) /* the default: say which it is */
        snprintf(said, sizeof(said), "NCCL %s (the model's default)%s", v->nc.k->version,
                 strchr(said, ',') ? strchr(said, ',') : "");
    snprintf(v->note, sizeof(v->note), "%s: %s:%u, %s, %d ranks on %d node%s in the log, %s "
             "%s, %s", v->label, log, t->line, cs_nccl_coll_name(t->coll), v->nranks, t->nnodes,
             t->nnodes == 1 ? "" : "s", cs_dtype_name(v->dt), cs_op_name(v->op), said);
    cs_cli_pick_t picks[CS_CLI_MAX_SIZES];
    rc = cs_cli_nccl_picks("validate", &v->nc, v->coll, v->sizes, v->n, picks);
    int root = t->rows[0].root > 0 && t->rows[0].root < v->nranks ? t->rows[0].root : 0;
    cs_cli_want_t w = {"validate", 0, v->sizes, v->n, cs_dtype_size(v->dt), r->o.platform,
                       r->plat->dims, r->plat->ndims};
    cs_coll_desc_t d = {v->coll, v->nranks, root, 0};
    if (rc == CS_EXIT_OK)
        rc = cs_cli_scheds_build_picks(&w, picks, "NCCL's tuner", &d, &v->b);
    if (rc == CS_EXIT_OK)
        rc = cs_cli_scheds_verify("validate", &v->b, NULL, CS_CLI_VERIFY_CACHED);
    if (rc != CS_EXIT_OK)
        return rc;
    int kof[CS_CLI_MAX_SIZES];
    for (int k = 0; k < v->n; k++) {
        v->inst[k] = (cs_sim_instance_t){v->b.sched[v->b.of_size[k]], v->sizes[k], v->dt, 0,
                                         v->op, NULL};
        kof[k] = k;
    }
    rc = cs_cli_nccl_costs("validate", &v->nc, v->inst, v->n, kof);
    for (int k = 0; k < v->n && rc == CS_EXIT_OK; k++)
        snprintf(v->how[k], sizeof(v->how[k]), "%s/%s", cs_nccl_algo_name(v->nc.inst_algo[2 * k]),
                 cs_nccl_proto_name(v->nc.inst_algo[2 * k + 1]));
    return rc;
}

/* read and build: every table of every log, compared or skipped. */
static int read_logs(vrun_t *r)
{
    int cap = 0;
    for (int l = 0; l < r->o.nlogs; l++) {
        const char *log = r->o.logs[l];
        cs_err_t err;
        cs_err_clear(&err);
        if (cs_nccl_log_load(log, &r->log[l], &err) != CS_OK)
            return cs_cli_usage_error("validate", "--nccl-tests: %s", err.msg);
        cap += r->log[l]->ntables;
    }
    r->tab = calloc((size_t)cap + 1, sizeof(*r->tab));
    if (!r->tab)
        return cs_cli_usage_error("validate", "%s", "out of memory");
    for (int l = 0; l < r->o.nlogs; l++) {
        const char *log = r->o.logs[l];
        for (int i = 0; i < r->log[l]->ntables; i++) {
            const cs_nccl_run_t *t = &r->log[l]->tables[i];
            cs_coll_t coll;
            if (cs_nccl_coll_to_cs(t->coll, &coll) != CS_OK) {
                skip(log, t, t->coll == CS_NCCL_UNKNOWN
                                 ? "the log does not say which collective it measured"
                                 : "collstep has no such collective");
                continue;
            }
            if (t->ndevs < 1 || !t->nrows) {
                skip(log, t, !t->nrows ? "no rows" : "no device block: its rank count is "
                                                     "unknown");
                continue;
            }
            if ((uint64_t)t->ndevs > r->plat->ndevices)
                return cs_cli_usage_error("validate", "%s:%u: the table has %d ranks but %s "
                                                      "has %llu %s: give a platform with at "
                                                      "least as many (e.g. more nodes)",
                                          log, t->line, t->ndevs, r->o.platform,
                                          (unsigned long long)r->plat->ndevices,
                                          r->plat->rank_noun[0] ? r->plat->rank_noun
                                                                : "devices");
            vtab_t *v = calloc(1, sizeof(*v));
            if (!v)
                return cs_cli_usage_error("validate", "%s", "out of memory");
            r->tab[r->ntab++] = v;
            *v = (vtab_t){.t = t, .log = l, .coll = coll, .nranks = t->ndevs};
            int rc = take_rows(r, v, log);
            if (rc == 1) {
                free(v);
                r->tab[--r->ntab] = NULL;
                continue;
            }
            int same = 0; /* the label: the collective, -N after the first */
            for (int j = 0; j < r->ntab - 1; j++)
                same += r->tab[j]->coll == coll;
            snprintf(v->label, sizeof(v->label), same ? "%s-%d" : "%s", cs_coll_name(coll),
                     same + 1);
            if ((rc = build_table(r, v, log)) != CS_EXIT_OK)
                return rc;
        }
    }
    if (!r->ntab)
        return cs_cli_usage_error("validate", "%s", "--nccl-tests: no table to compare (every "
                                                    "one was skipped)");
    return CS_EXIT_OK;
}

/* One simulation: instances of tables of one rank count and tier rates. */
typedef struct one_sim {
    const cs_platform_t *plat;
    const double *scale;
    cs_sim_instance_t *in;
    int n;
} one_sim_t;

static int sim_child(void *ctx, void *out, cs_err_t *err)
{
    one_sim_t *s = ctx;
    cs_sim_opts_t so;
    cs_sim_opts_init(&so);
    so.model = CS_SIM_NCCL;
    so.tier_bw_scale = s->scale;
    int st = cs_sim_run(s->plat, &so, s->in, s->n, err);
    for (int i = 0; i < s->n && st == CS_OK; i++)
        ((double *)out)[i] = s->in[i].time;
    return st;
}

/* act: tables grouped by rank count and the tiers' rates, one simulation
 * each, in a watched child (SimGrid runs once per process). */
static int simulate(vrun_t *r)
{
    int total = 0;
    for (int i = 0; i < r->ntab; i++)
        total += r->tab[i]->n;
    cs_sim_instance_t *in = calloc((size_t)total + 1, sizeof(*in));
    double *times = calloc((size_t)total + 1, sizeof(*times));
    unsigned char *done = calloc((size_t)r->ntab + 1, 1);
    int rc = in && times && done ? CS_EXIT_OK : CS_EXIT_RUNTIME;
    for (int i = 0; i < r->ntab && rc == CS_EXIT_OK; i++) {
        if (done[i])
            continue;
        const vtab_t *lead = r->tab[i];
        int m = 0;
        for (int j = i; j < r->ntab; j++) {
            const vtab_t *v = r->tab[j];
            if (done[j] || v->nranks != lead->nranks ||
                memcmp(v->nc.scale, lead->nc.scale, sizeof(v->nc.scale)))
                continue;
            memcpy(&in[m], v->inst, sizeof(*in) * (size_t)v->n);
            m += v->n;
        }
        char what[300];
        snprintf(what, sizeof(what), "the simulation of %d ranks on %s", lead->nranks,
                 r->o.platform);
        one_sim_t s = {r->plat, lead->nc.scale, in, m};
        cs_err_t err;
        cs_err_clear(&err);
        int st = cs_child_call(what, sim_child, &s, times, sizeof(double) * (size_t)m, &err);
        if (st != CS_OK) {
            fprintf(stderr, "collstep validate: %s\n", err.msg);
            rc = cs_cli_exit_code(st) == CS_EXIT_USAGE ? CS_EXIT_RUNTIME : cs_cli_exit_code(st);
            break;
        }
        m = 0;
        for (int j = i; j < r->ntab; j++) {
            vtab_t *v = r->tab[j];
            if (done[j] || v->nranks != lead->nranks ||
                memcmp(v->nc.scale, lead->nc.scale, sizeof(v->nc.scale)))
                continue;
            for (int k = 0; k < v->n; k++)
                v->pred[k] = times[m++];
            done[j] = 1;
        }
    }
    if (!in || !times || !done)
        fprintf(stderr, "collstep validate: out of memory\n");
    free(in), free(times), free(done);
    return rc;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* report: the cases, every table's sizes in one sorted list (each table
 * serving its own), validate's report to stdout or -o FILE. */
static int report(vrun_t *r)
{
    int total = 0, ns = 0, rc = CS_EXIT_OK;
    for (int i = 0; i < r->ntab; i++)
        total += r->tab[i]->n;
    uint64_t *sizes = calloc((size_t)total + 1, sizeof(*sizes));
    cs_validate_case_t *cases = calloc((size_t)r->ntab + 1, sizeof(*cases));
    const char **algo = calloc((size_t)r->ntab + 1, sizeof(char *));
    const char **params = calloc((size_t)r->ntab + 1, sizeof(char *));
    const char **how = NULL;
    unsigned char *serves = NULL;
    char(*loc)[300] = calloc((size_t)r->ntab + 1, sizeof(*loc));
    cs_validate_t v = {0};
    cs_out_t *out = NULL;
    FILE *f = stdout;
    cs_err_t err;
    cs_err_clear(&err);
    if (!sizes || !cases || !algo || !params || !loc)
        goto oom;
    for (int i = 0; i < r->ntab; i++)
        for (int k = 0; k < r->tab[i]->n; k++)
            sizes[ns++] = r->tab[i]->sizes[k];
    qsort(sizes, (size_t)ns, sizeof(*sizes), cmp_u64);
    int u = 0;
    for (int k = 0; k < ns; k++)
        if (!u || sizes[u - 1] != sizes[k])
            sizes[u++] = sizes[k];
    ns = u;
    how = calloc((size_t)r->ntab * (size_t)ns + 1, sizeof(char *));
    serves = calloc((size_t)r->ntab * (size_t)ns + 1, 1);
    if (!how || !serves)
        goto oom;
    v = (cs_validate_t){.coll = r->tab[0]->coll, .nranks = r->tab[0]->nranks, .nnodes = 1,
                        .nalgo = r->ntab, .nsizes = ns, .algo = algo, .params = params,
                        .sizes = sizes, .serves = serves, .cases = cases,
                        .ngroups = r->o.nlogs, .group = r->o.logs, .how = how, .nplats = 1,
                        .transport = "nccl-tests", .iters = 1};
    v.plats[0] = (cs_validate_plat_t){r->o.platform, CS_SIM_NCCL, r->plat, NULL, NULL};
    if (cs_validate_alloc(&v, &err) != CS_OK)
        goto oom;
    for (int a = 0; a < r->ntab; a++) {
        const vtab_t *t = r->tab[a];
        /* the simulation ran the ranks in order: nodes as the platform has them */
        cases[a] = (cs_validate_case_t){t->coll, t->nranks, t->t->nnodes, t->dt, t->op, t->log,
                                        t->note};
        algo[a] = t->label;
        snprintf(loc[a], sizeof(loc[a]), "%s:%u", r->o.logs[t->log], t->t->line);
        params[a] = loc[a];
        for (int k = 0, j = 0; k < t->n; k++) {
            while (sizes[j] != t->sizes[k])
                j++;
            size_t x = (size_t)a * (size_t)ns + (size_t)j;
            serves[x] = 1;
            how[x] = t->how[k];
            v.meas[x] = (cs_validate_meas_t){.med = t->meas[k], .p10 = t->meas[k],
                                             .p90 = t->meas[k], .lo = t->meas[k],
                                             .hi = t->meas[k]};
            v.pred[x] = t->pred[k];
        }
    }
    if (r->o.rep.output) {
        int fl = CS_OUT_STDOUT | (r->o.rep.force ? CS_OUT_FORCE : 0);
        if (cs_out_begin_file(r->o.rep.output, fl, &cs_validate_out_kind, &out, &err) != CS_OK) {
            rc = cs_cli_usage_error("validate", "-o %s: %s", r->o.rep.output, err.msg);
            goto done;
        }
        f = cs_out_stream(out);
    }
    if (cs_validate_write(&v, r->o.rep.fmt, f, &err) != CS_OK) {
        cs_out_abort(out);
        fprintf(stderr, "collstep validate: %s\n", err.msg);
        rc = CS_EXIT_RUNTIME;
    } else if (out && cs_out_commit(out, &err) != CS_OK) {
        fprintf(stderr, "collstep validate: -o %s: %s\n", r->o.rep.output, err.msg);
        rc = CS_EXIT_RUNTIME;
    }
    fflush(stdout);
    goto done;
oom:
    fprintf(stderr, "collstep validate: out of memory\n");
    rc = CS_EXIT_RUNTIME;
done:
    cs_validate_free(&v);
    free(sizes), free(cases), free(algo), free(params), free(how), free(serves), free(loc);
    return rc;
}

int cs_cli_validate_nccl(int argc, char **argv)
{
    vrun_t *r = calloc(1, sizeof(*r));
    if (!r) {
        fprintf(stderr, "collstep validate: out of memory\n");
        return CS_EXIT_RUNTIME;
    }
    int rc = parse(argc, argv, &r->o);
    cs_err_t err;
    cs_err_clear(&err);
    if (rc == CS_EXIT_OK && cs_platform_open(r->o.platform, &r->plat, &err) != CS_OK)
        rc = cs_cli_usage_error("validate", "--platform %s: %s", r->o.platform, err.msg);
    if (rc == CS_EXIT_OK)
        rc = cs_cli_check_outputs("validate", r->o.rep.output, NULL, r->o.rep.force);
    if (rc == CS_EXIT_OK)
        rc = read_logs(r);
    if (rc == CS_EXIT_OK)
        rc = simulate(r);
    if (rc == CS_EXIT_OK)
        rc = report(r);
    for (int i = 0; i < r->ntab; i++) {
        cs_cli_scheds_free(&r->tab[i]->b);
        cs_cli_nccl_fini(&r->tab[i]->nc);
        free(r->tab[i]);
    }
    free(r->tab);
    for (int l = 0; l < r->o.nlogs; l++)
        cs_nccl_log_destroy(r->log[l]);
    cs_platform_close(r->plat);
    free(r);
    return rc == CS_CLI_DONE ? CS_EXIT_OK : rc;
}

#else /* !CS_HAVE_MODEL */

int cs_cli_validate_nccl(int argc, char **argv)
{
    (void)argc, (void)argv;
    return cs_cli_usage_error("validate", "%s", "--nccl-tests: the nccl model is not built (no "
                                                "model/ library)");
}

#endif
