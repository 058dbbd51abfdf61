/*
 * cli_util.c - the grammar every subcommand shares: options and their
 * values, sizes, algorithm lists, per-algorithm parameters, the help texts
 * that go with them, usage errors; the schedules a command runs (registry,
 * files, tuning tables) and how it reports its rows.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cs_nccl_log.h"
#include "cs_dtype.h"
#include "cs_intr.h"
#include "cs_log.h"
#include "cs_text.h"
#include "cs_time.h"
#ifdef CS_HAVE_INTEROP
#include "cs_msccl.h"
#include "cs_schedset.h"
#endif
#include "cs_tuning.h"

int cs_cli_parse_size(const char *s, uint64_t *out)
{
    if (s == NULL || !isdigit((unsigned char)s[0]))
        return -1;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || !(v >= 0))
        return -1;
    double mul = 1;
    static const struct {
        const char *suf;
        double mul;
    } sufs[] = {{"", 1},          {"B", 1},          {"K", 1024.0},     {"KB", 1024.0},
                {"KiB", 1024.0},  {"M", 1048576.0},  {"MB", 1048576.0}, {"MiB", 1048576.0},
                {"G", 1073741824.0}, {"GB", 1073741824.0}, {"GiB", 1073741824.0},
                {"T", 1099511627776.0}, {"TB", 1099511627776.0}, {"TiB", 1099511627776.0}};
    size_t i, n = sizeof(sufs) / sizeof(sufs[0]);
    for (i = 0; i < n; i++)
        if (strcasecmp(end, sufs[i].suf) == 0) {
            mul = sufs[i].mul;
            break;
        }
    if (i == n)
        return -1;
    double bytes = v * mul;
    if (bytes > 9.0e18 || bytes != floor(bytes))
        return -1;
    *out = (uint64_t)bytes;
    return 0;
}

void cs_cli_size_text(uint64_t b, char *buf, size_t len)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    double v = (double)b;
    while (u < 4 && v >= 1024)
        v /= 1024, u++;
    /* whole units exactly; else three digits, and no exponent from 1000
     * (1073741760 B is "1024 MiB", not "1.02e+03 MiB") */
    snprintf(buf, len, v == floor(v) || v >= 1000 ? "%.0f %s" : "%.3g %s", v, unit[u]);
}

int cs_cli_parse_sweep(const char *s, uint64_t *min, uint64_t *max, double *factor)
{
    char buf[128];
    if (s == NULL || strlen(s) >= sizeof(buf))
        return -1;
    snprintf(buf, sizeof(buf), "%s", s);
    char *f1 = strchr(buf, ':');
    char *f2 = f1 ? strchr(f1 + 1, ':') : NULL;
    if (f1)
        *f1++ = '\0';
    if (f2)
        *f2++ = '\0';
    uint64_t lo, hi;
    double fac = 2.0;
    if (cs_cli_parse_size(buf, &lo) != 0)
        return -1;
    hi = lo;
    if (f1 && cs_cli_parse_size(f1, &hi) != 0)
        return -1;
    if (f2) {
        char *end = NULL;
        fac = strtod(f2, &end);
        if (end == f2 || *end != '\0' || !(fac > 1.0) || fac > 1024)
            return -1;
    }
    if (hi < lo)
        return -1;
    *min = lo;
    *max = hi;
    *factor = fac;
    return 0;
}

/* cs_cli_hold_errors: holding, and the first message held. */
static int held_on;
static char held[512];

const char *cs_cli_hold_errors(int on)
{
    if (on && !held_on)
        held[0] = '\0';
    held_on = on;
    return held;
}

/* "collstep CMD: message[ (see collstep CMD --help)]"; CS_EXIT_USAGE. */
static int vusage(const char *cmd, int hint, const char *fmt, va_list ap)
{
    if (held_on) { /* the first is what went wrong; the rest follow from it */
        if (!held[0])
            vsnprintf(held, sizeof(held), fmt, ap);
        return CS_EXIT_USAGE;
    }
    fprintf(stderr, "collstep %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    if (hint)
        fprintf(stderr, " (see collstep %s --help)", cmd);
    fputc('\n', stderr);
    return CS_EXIT_USAGE;
}

int cs_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vusage(cmd, 0, fmt, ap);
    va_end(ap);
    return CS_EXIT_USAGE;
}

int cs_cli_usage_hint(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vusage(cmd, 1, fmt, ap);
    va_end(ap);
    return CS_EXIT_USAGE;
}

int cs_cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
                  const struct option *lo, void (*help)(FILE *), int *rc)
{
    int one_line = shortopts[0] == ':';
    opterr = !one_line;
    int c = getopt_long(argc, argv, shortopts, lo, NULL);
    if (c == 'h') {
        help(stdout);
        *rc = CS_EXIT_OK;
        return CS_CLI_OPT_EXIT;
    }
    if (c != '?' && c != ':')
        return c;
    *rc = CS_EXIT_USAGE;
    if (!one_line)
        help(stderr);
    else if (c == ':')
        cs_cli_usage_hint(cmd, "option %s needs a value", argv[optind - 1]);
    else
        cs_cli_usage_hint(cmd, "unknown option '%s'", argv[optind - 1]);
    return CS_CLI_OPT_EXIT;
}

int cs_cli_options(const char *cmd, int argc, char **argv, const char *shortopts,
                   const struct option *lo, void (*help)(FILE *),
                   int (*fn)(void *ctx, int c, const char *arg), void *ctx)
{
    int c, rc = CS_EXIT_OK;
    optind = 1;
    while (rc == CS_EXIT_OK &&
           (c = cs_cli_getopt(cmd, argc, argv, shortopts, lo, help, &rc)) != -1) {
        if (c == CS_CLI_OPT_EXIT)
            return rc == CS_EXIT_OK ? CS_CLI_DONE : rc;
        rc = fn(ctx, c, optarg);
    }
    return rc;
}

int cs_cli_parse_long(const char *cmd, const char *opt, const char *s, long min, long max,
                      long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < min || v > max)
        return cs_cli_usage_error(cmd, "%s: expected an integer in [%ld, %ld], found '%s'", opt,
                                  min, max, s);
    *out = v;
    return CS_EXIT_OK;
}

int cs_cli_parse_seconds(const char *cmd, const char *opt, const char *s, double *out)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end || !(v > 0) || isinf(v))
        return cs_cli_usage_error(cmd, "%s: expected seconds > 0, found '%s'", opt, s);
    *out = v;
    return CS_EXIT_OK;
}

int cs_cli_parse_rate(const char *cmd, const char *opt, const char *s, double *out)
{
    char *end = NULL;
    double v = strtod(s, &end);
    int ok = end != s && v > 0 && !isinf(v);
    if (ok) {
        switch (*end) {
        case 'k': case 'K': v *= 1e3, end++; break;
        case 'M': v *= 1e6, end++; break;
        case 'G': v *= 1e9, end++; break;
        case 'T': v *= 1e12, end++; break;
        default: break;
        }
        end += *end == 'B';
        end += strcmp(end, "/s") ? 0 : 2;
        ok = !*end;
    }
    if (!ok)
        return cs_cli_usage_error(cmd, "%s: expected a rate in bytes per second (1.25G, "
                                       "800MB/s), found '%s'", opt, s);
    *out = v;
    return CS_EXIT_OK;
}

/* A name parsed into an enumeration: `ok`, or "WHAT 'S' (LIST)". */
static int known(const char *cmd, int ok, const char *what, const char *s, const char *list)
{
    return ok ? CS_EXIT_OK : cs_cli_usage_error(cmd, "%s '%s' (%s)", what, s, list);
}

int cs_cli_parse_dtype(const char *cmd, const char *s, cs_dtype_t *out)
{
    return known(cmd, (*out = cs_dtype_parse(s)) != CS_DT_COUNT, "--dtype: unknown type", s,
                 "float, double, half, bfloat16, int32, int64");
}

int cs_cli_parse_op(const char *cmd, const char *s, cs_op_t *out)
{
    return known(cmd, (*out = cs_op_parse(s)) != CS_OP_COUNT, "--op: unknown operator", s,
                 "sum, prod, min, max");
}

int cs_cli_parse_coll(const char *cmd, const char *s, cs_coll_t *out)
{
    return known(cmd, (*out = cs_coll_parse(s)) != CS_COLL_COUNT, "unknown collective", s,
                 "allreduce, reduce-scatter, allgather, broadcast, reduce, alltoall");
}

int cs_cli_parse_format(const char *cmd, const char *s, cs_results_fmt_t *out)
{
    if ((*out = cs_results_fmt_parse(s)) == CS_FMT_NCCL_TESTS)
        return cs_cli_usage_error(cmd, "--format: expected table, csv or json, found '%s' (the "
                                       "nccl-tests layout is for sim, plan and run)", s);
    if (*out == CS_FMT_COUNT)
        return cs_cli_usage_error(cmd, "--format: expected table, csv or json, found '%s'", s);
    return CS_EXIT_OK;
}

int cs_cli_parse_format_nccl(const char *cmd, const char *s, cs_results_fmt_t *out)
{
    if ((*out = cs_results_fmt_parse(s)) == CS_FMT_COUNT)
        return cs_cli_usage_error(cmd, "--format: expected table, csv, json or nccl-tests, "
                                       "found '%s'", s);
    return CS_EXIT_OK;
}

int cs_cli_exit_code(int st)
{
    switch (st) {
    case CS_OK: return CS_EXIT_OK;
    case CS_ERR_VERIFY: return CS_EXIT_FAIL;
    case CS_ERR_INVAL:
    case CS_ERR_PARSE:
    case CS_ERR_RANGE:
    case CS_ERR_NOTFOUND:
    case CS_ERR_UNSUPPORTED:
    case CS_ERR_EXISTS: return CS_EXIT_USAGE;
    case CS_ERR_INTERRUPTED: return cs_intr_pending() ? cs_intr_exit_code() : CS_EXIT_RUNTIME;
    default: return CS_EXIT_RUNTIME;
    }
}

int cs_cli_input_exit_code(const char *path, int st)
{
    struct stat sb;
    if (st == CS_ERR_IO && strcmp(path, "-") != 0 &&
        (stat(path, &sb) != 0 || S_ISDIR(sb.st_mode) || access(path, R_OK) != 0))
        return CS_EXIT_USAGE;
    return cs_cli_exit_code(st);
}

int cs_cli_help_asked(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    return 0;
}

const char cs_cli_exit_help[] =
    "exit codes: 0 success, 1 the answer is no (schedule wrong, results wrong),\n"
    "2 usage error, malformed input or refused output path, 3 failure while running\n"
    "(I/O error, a rank died or timed out, transport or simulation failure),\n"
    "128+N interrupted by signal N (130 Ctrl-C, 143 SIGTERM; partial outputs removed)\n";

const char cs_cli_size_help[] =
    "sizes: 1024, 64K, 100M, 1G (binary: K = 1024, M = 2^20, G = 2^30; KB, KiB, MB\n"
    "are the same); MIN:MAX[:F] sweeps MIN, MIN*F, ... up to MAX (F = 2 by default,\n"
    "as nccl-tests -b/-e/-f); items may be listed: 1K,64K,1M:16M.  Bandwidths\n"
    "(GB/s) are decimal: 1 GB/s = 1e9 bytes per second.  A size below one element\n"
    "(0 too) is an error; a size is rounded down to whole elements (and for\n"
    "reduce-scatter, allgather, alltoall to whole blocks per rank), as nccl-tests\n"
    "does, and the rows use the rounded size.\n";

const char cs_cli_output_help[] =
    "  -o, --output FILE    write to FILE, whole or not at all (default: stdout)\n";

const char cs_cli_dtype_help[] =
    "  --dtype T            float (default), double, half, bfloat16, int32, int64\n"
    "  --op OP              sum (default), prod, min, max\n";

/* Append `v` unless present; -1 when full. */
static int add_size(uint64_t *sizes, int *n, uint64_t v)
{
    for (int i = 0; i < *n; i++)
        if (sizes[i] == v)
            return 0;
    if (*n == CS_CLI_MAX_SIZES)
        return -1;
    sizes[(*n)++] = v;
    return 0;
}

int cs_cli_sizes(const char *cmd, const char *spec, size_t elem_size, uint64_t *sizes, int *n)
{
    char buf[512];
    if (!spec || !*spec)
        return cs_cli_usage_error(cmd, "--size: no size given");
    if (strlen(spec) >= sizeof(buf))
        return cs_cli_usage_error(cmd, "--size: the list is too long");
    snprintf(buf, sizeof(buf), "%s", spec);
    *n = 0;
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        uint64_t lo, hi;
        double f;
        if (cs_cli_parse_sweep(item, &lo, &hi, &f) != 0)
            return cs_cli_usage_error(cmd,
                                      "--size: expected SIZE or MIN:MAX[:FACTOR] (MIN <= MAX, "
                                      "FACTOR > 1), found '%s'",
                                      item);
        if (lo < (elem_size ? elem_size : 1))
            return cs_cli_usage_error(cmd, "--size %s: %s one %zu-byte element: nothing would "
                                           "move (the smallest size is %zu)", item,
                                      lo == hi ? "smaller than" : "starts below",
                                      elem_size ? elem_size : 1, elem_size ? elem_size : 1);
        for (double v = (double)lo; v <= (double)hi * (1 + 1e-12); v *= f) {
            uint64_t b = (uint64_t)(v + 0.5);
            if (add_size(sizes, n, b > hi ? hi : b) != 0)
                return cs_cli_usage_error(cmd, "--size: more than %d sizes in '%s'",
                                          CS_CLI_MAX_SIZES, spec);
        }
    }
    if (*n == 0)
        return cs_cli_usage_error(cmd, "--size: no size in '%s'", spec);
    return CS_EXIT_OK;
}

uint64_t cs_cli_size_moved(cs_coll_t coll, int nranks, uint64_t bytes, size_t elem)
{
    if (elem == 0 || nranks < 1)
        return bytes;
    uint64_t count = cs_coll_block_count(coll, nranks, bytes, elem);
    return count * elem * (cs_coll_blocked(coll) ? (uint64_t)nranks : 1);
}

int cs_cli_sizes_round(const char *cmd, cs_coll_t coll, int nranks, cs_dtype_t dt, int say,
                       uint64_t *sizes, int *n, int *with)
{
    size_t es = cs_dtype_size(dt);
    int blocked = cs_coll_blocked(coll), m = 0;
    for (int k = 0; k < *n; k++) {
        uint64_t v = cs_cli_size_moved(coll, nranks, sizes[k], es);
        if (v == 0)
            return cs_cli_usage_error(cmd, "--size %llu: %s on %d ranks moves whole blocks of "
                                           "one %s element per rank (%llu bytes); nothing "
                                           "would move", (unsigned long long)sizes[k],
                                      cs_coll_name(coll), nranks, cs_dtype_name(dt),
                                      (unsigned long long)(es * (uint64_t)nranks));
        if (v != sizes[k] && say)
            fprintf(stderr, "collstep %s: --size %llu: %llu bytes move (%llu %s elements%s), "
                            "rounded down as nccl-tests does\n", cmd,
                    (unsigned long long)sizes[k], (unsigned long long)v,
                    (unsigned long long)cs_coll_block_count(coll, nranks, v, es),
                    cs_dtype_name(dt), blocked ? " per rank" : "");
        int dup = 0;
        for (int j = 0; j < m && !dup; j++)
            dup = sizes[j] == v;
        if (dup && say)
            fprintf(stderr, "collstep %s: --size: %llu bytes are listed once\n", cmd,
                    (unsigned long long)v);
        if (dup)
            continue;
        if (with)
            with[m] = with[k];
        sizes[m++] = v;
    }
    *n = m;
    return CS_EXIT_OK;
}

int cs_cli_algo_list(const char *cmd, const char *spec, char *buf, size_t buflen,
                     const char **names, int *n)
{
    if (!spec || strlen(spec) >= buflen)
        return cs_cli_usage_error(cmd, "--algo: %s", spec ? "the list is too long" : "missing");
    snprintf(buf, buflen, "%s", spec);
    *n = 0;
    char *p = buf;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (!*p)
            return cs_cli_usage_error(cmd, "--algo: empty name in '%s'", spec);
        for (int i = 0; i < *n; i++)
            if (!strcmp(names[i], p))
                return cs_cli_usage_error(cmd, "--algo: '%s' is listed twice", p);
        if (*n == CS_CLI_MAX_ALGOS)
            return cs_cli_usage_error(cmd, "--algo: more than %d algorithms", CS_CLI_MAX_ALGOS);
        names[(*n)++] = p;
        if (!comma)
            return CS_EXIT_OK;
        p = comma + 1;
    }
}

void cs_cli_params_init(cs_cli_params_t *p)
{
    memset(p, 0, sizeof(*p));
    cs_params_init(&p->global);
}

static int params_add_one(cs_cli_params_t *p, const char *cmd, const char *arg);

/* --param: comma-separated items, each KEY=VALUE or ALGO:KEY=VALUE; an item
 * without ALGO: goes with the ALGO of the item before it (ALGO:k=v,k2=v2),
 * or to every algorithm when none came before.  The items of one ALGO (or
 * of none) are parsed as one list, so a key given twice is said. */
int cs_cli_params_add(cs_cli_params_t *p, const char *cmd, const char *arg)
{
    char buf[1024], run[1024];
    if (strlen(arg) >= sizeof(buf))
        return cs_cli_usage_error(cmd, "--param %s: too long", arg);
    snprintf(buf, sizeof(buf), "%s", arg);
    size_t rl = 0, pl = 0;
    run[0] = '\0';
    for (char *it = buf, *next; it; it = next) {
        next = strchr(it, ',');
        if (next)
            *next++ = '\0';
        const char *colon = strchr(it, ':'), *eq = strchr(it, '=');
        int prefixed = colon && (!eq || colon < eq);
        size_t il = strlen(it);
        /* a new ALGO: the run so far is added whole first */
        if (prefixed && rl > 0 && !(pl == (size_t)(colon - it) + 1 && !strncmp(run, it, pl))) {
            int rc = params_add_one(p, cmd, run);
            if (rc != CS_EXIT_OK)
                return rc;
            rl = 0;
        }
        if (rl == 0) {
            pl = prefixed ? (size_t)(colon - it) + 1 : 0;
            if (pl >= sizeof(run))
                return cs_cli_usage_error(cmd, "--param %s: too long", arg);
            memcpy(run, it, pl), rl = pl, run[rl] = '\0';
        }
        const char *body = prefixed ? colon + 1 : it;
        size_t bl = prefixed ? il - (size_t)(colon + 1 - it) : il;
        if (rl + bl + 2 >= sizeof(run))
            return cs_cli_usage_error(cmd, "--param %s: too long", arg);
        if (rl > pl)
            run[rl++] = ',';
        memcpy(run + rl, body, bl), rl += bl, run[rl] = '\0';
    }
    return rl > 0 ? params_add_one(p, cmd, run) : cs_cli_usage_error(cmd, "--param: empty");
}

static int params_add_one(cs_cli_params_t *p, const char *cmd, const char *arg)
{
    cs_err_t err;
    cs_err_clear(&err);
    const char *colon = strchr(arg, ':'), *eq = strchr(arg, '=');
    if (!colon || (eq && eq < colon)) {
        if (cs_params_parse(&p->global, arg, &err) != CS_OK)
            return cs_cli_usage_error(cmd, "--param %s: %s", arg, err.msg);
        return CS_EXIT_OK;
    }
    size_t al = (size_t)(colon - arg);
    if (al == 0 || al >= sizeof(p->per[0].algo))
        return cs_cli_usage_error(cmd, "--param %s: expected ALGO:KEY=VALUE or KEY=VALUE", arg);
    int i;
    for (i = 0; i < p->nper; i++)
        if (strlen(p->per[i].algo) == al && !strncmp(p->per[i].algo, arg, al))
            break;
    if (i == p->nper) {
        if (p->nper == CS_CLI_MAX_ALGOS)
            return cs_cli_usage_error(cmd, "--param: more than %d algorithms", CS_CLI_MAX_ALGOS);
        memcpy(p->per[i].algo, arg, al);
        p->per[i].algo[al] = '\0';
        cs_params_init(&p->per[i].p);
        p->nper++;
    }
    if (cs_params_parse(&p->per[i].p, colon + 1, &err) != CS_OK)
        return cs_cli_usage_error(cmd, "--param %s: %s", arg, err.msg);
    return CS_EXIT_OK;
}

static int declares(const cs_algo_t *a, const char *key)
{
    for (const cs_param_desc_t *d = a->params; d && d->key; d++)
        if (!strcmp(d->key, key))
            return 1;
    return 0;
}

void cs_cli_params_for(const cs_cli_params_t *p, const cs_algo_t *a, cs_params_t *out)
{
    cs_err_t err;
    cs_params_init(out);
    for (int i = 0; i < p->global.n; i++)
        if (declares(a, p->global.kv[i].key))
            cs_params_set(out, p->global.kv[i].key, p->global.kv[i].value, &err);
    for (int j = 0; j < p->nper; j++)
        if (!strcmp(p->per[j].algo, a->name))
            for (int i = 0; i < p->per[j].p.n; i++)
                cs_params_set(out, p->per[j].p.kv[i].key, p->per[j].p.kv[i].value, &err);
}

int cs_cli_params_check(const cs_cli_params_t *p, const char *cmd, const cs_algo_t *const *algos,
                        int n)
{
    for (int i = 0; i < p->global.n; i++) {
        int any = 0;
        for (int k = 0; k < n && !any; k++)
            any = declares(algos[k], p->global.kv[i].key);
        if (!any)
            return cs_cli_usage_error(cmd, "--param %s: no algorithm of this command has the "
                                           "parameter '%s' (see 'collstep algos')",
                                      p->global.kv[i].key, p->global.kv[i].key);
    }
    for (int j = 0; j < p->nper; j++) {
        int any = 0;
        for (int k = 0; k < n && !any; k++)
            any = !strcmp(algos[k]->name, p->per[j].algo);
        if (!any)
            return cs_cli_usage_error(cmd, "--param %s:...: '%s' is not one of the algorithms "
                                           "given with --algo",
                                      p->per[j].algo, p->per[j].algo);
    }
    return CS_EXIT_OK;
}

void cs_cli_params_effective(const cs_algo_t *a, const cs_params_t *given, char *buf, size_t len)
{
    size_t l = 0;
    buf[0] = '\0';
    /* orders given: as many channels (ring, dbtree: channels=1 is their default) */
    int norders = 0;
    char nb[16];
    for (int i = 0; given && i < given->n; i++)
        if (!strcmp(given->kv[i].key, "orders") && strcmp(given->kv[i].value, "none") != 0) {
            norders = 1;
            for (const char *c = given->kv[i].value; *c; c++)
                norders += *c == '+' || *c == ':' || *c == '/';
        }
    for (const cs_param_desc_t *d = a ? a->params : NULL; d && d->key && l < len; d++) {
        const char *v = d->def;
        for (int i = 0; given && i < given->n; i++)
            if (!strcmp(given->kv[i].key, d->key))
                v = given->kv[i].value;
        if (v == d->def && d->def && !strcmp(d->def, "none"))
            continue; /* an option left off (ring's orders): not part of what ran */
        if (v == d->def && !strcmp(d->key, "segments"))
            continue; /* a former name (chain's nchunks), not given: nchunks says it */
        if (v == d->def && norders > 0 && !strcmp(d->key, "channels")) {
            snprintf(nb, sizeof(nb), "%d", norders);
            v = nb;
        }
        l += (size_t)snprintf(buf + l, len - l, "%s%s=%s", l ? " " : "", d->key, v);
    }
}

int cs_cli_build(const char *cmd, const char *name, const cs_coll_desc_t *desc,
                 const cs_cli_params_t *p, const cs_params_t *extra, cs_sched_t **out,
                 char *effective, size_t efflen)
{
    const cs_algo_t *a = cs_algo_find(desc->coll, name);
    if (!a)
        return cs_cli_usage_error(cmd, "no algorithm '%s' for %s (see 'collstep algos')", name,
                                  cs_coll_name(desc->coll));
    cs_params_t prm;
    cs_err_t err;
    cs_err_clear(&err);
    cs_cli_params_for(p, a, &prm);
    for (int i = 0; extra && i < extra->n; i++)
        if (!cs_params_get(&prm, extra->kv[i].key))
            cs_params_set(&prm, extra->kv[i].key, extra->kv[i].value, &err);
    for (int i = 0; i < prm.n; i++)
        prm.kv[i].used = 0;
    if (effective)
        cs_cli_params_effective(a, &prm, effective, efflen);
    int st = cs_algo_build(a, desc, &prm, out, &err);
    if (st != CS_OK)
        return cs_cli_usage_error(cmd, "%s %s on %d ranks: %s", cs_coll_name(desc->coll), name,
                                  desc->nranks, err.msg);
    return CS_EXIT_OK;
}

cs_sched_t *cs_cli_load_sched(const char *path, cs_err_t *err)
{
#ifdef CS_HAVE_INTEROP
    return cs_msccl_load_any(path, err);
#else
    return cs_sched_load(path, err);
#endif
}

void cs_cli_free_sched(cs_sched_t *s)
{
    if (!s)
        return;
#ifdef CS_HAVE_INTEROP
    cs_msccl_forget(s);
#endif
    cs_sched_destroy(s);
}

int cs_cli_step_origin(const cs_sched_t *s, int rank, int64_t step, char *buf, size_t len)
{
#ifdef CS_HAVE_INTEROP
    return s && step >= 0 ? cs_msccl_origin_of(s, rank, step, buf, len) : 0;
#else
    (void)s, (void)rank, (void)step, (void)buf, (void)len;
    return 0;
#endif
}

int cs_cli_is_schedule_set(const char *arg)
{
    struct stat sb;
    if (!arg || !strcmp(arg, "-"))
        return 0;
    return strchr(arg, ',') != NULL || (stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode));
}

int cs_cli_schedule_set(const char *cmd, const char *arg, const uint64_t *sizes, int nsizes,
                        size_t elem_size, struct cs_schedset **set, cs_sched_t **per_size,
                        const char **per_path, cs_coll_t *coll, int *nranks, cs_err_t *err)
{
#ifdef CS_HAVE_INTEROP
    int st = cs_schedset_load_list(arg, set, err);
    if (st != CS_OK)
        return st;
    for (int k = 0; k < nsizes; k++) {
        /* picked by the bytes that move, as MSCCL sees the call */
        uint64_t bytes = cs_cli_size_moved((*set)->coll, (*set)->nranks, sizes[k], elem_size);
        const cs_schedset_entry_t *e = cs_schedset_lookup(*set, bytes, elem_size, err);
        if (!e)
            return CS_ERR_NOTFOUND;
        per_size[k] = e->sched;
        per_path[k] = e->path;
        if (cmd) {
            char range[96], also[1200] = "";
            cs_schedset_range_str(e, range, sizeof(range));
            const cs_schedset_entry_t *x = cs_schedset_also(*set, e, bytes, elem_size);
            if (x)
                snprintf(also, sizeof(also), "; %s serves it too, but comes later in the load "
                                             "order (the first file that serves a size wins, "
                                             "as in MSCCL)", x->path);
            fprintf(stderr, "collstep %s: %llu B served by %s (%s)%s\n", cmd,
                    (unsigned long long)bytes, e->path, range, also);
        }
    }
    *coll = (*set)->coll;
    *nranks = (*set)->nranks;
    return CS_OK;
#else
    (void)cmd, (void)sizes, (void)nsizes, (void)elem_size, (void)set, (void)per_size;
    (void)per_path, (void)coll, (void)nranks;
    return cs_err_set(err, CS_ERR_UNSUPPORTED, "several schedule files need collstep's interop "
                      "library (libxml2): --schedule %s", arg);
#endif
}

void cs_cli_schedule_set_free(struct cs_schedset *set)
{
#ifdef CS_HAVE_INTEROP
    cs_schedset_destroy(set);
#else
    (void)set;
#endif
}

void cs_cli_tier_defaults(const char *algo, const int *dims, int ndims, int ranks,
                          cs_params_t *out)
{
    cs_params_init(out);
    if (strcmp(algo, "hier") != 0 || ndims == 0)
        return;
    char text[64] = "";
    long prod = 1;
    for (int i = 0; i < ndims; i++) {
        size_t l = strlen(text);
        snprintf(text + l, sizeof(text) - l, "%s%d", i ? "x" : "", dims[i]);
        prod *= dims[i];
    }
    cs_err_t err;
    if (prod == ranks)
        cs_params_set(out, "dims", text, &err);
}

/* ---- tuning tables -------------------------------------------------------- */

int cs_cli_tuning_pick(const char *cmd, const char *path, const char *platform, int ranks,
                       cs_coll_t coll, const uint64_t *sizes, int nsizes, struct cs_tuning **t,
                       cs_cli_pick_t *picks)
{
    cs_err_t err;
    cs_err_clear(&err);
    if (cs_tuning_load(path, t, &err) != CS_OK)
        return cs_cli_usage_error(cmd, "--tuning %s", err.msg);
    if (cs_tuning_check(*t, platform, ranks, &err) != CS_OK)
        return cs_cli_usage_error(cmd, "--tuning %s: %s", path, err.msg);
    for (int k = 0; k < nsizes; k++) {
        const cs_tuning_entry_t *e = NULL;
        if (cs_tuning_pick(*t, coll, sizes[k], &e, &err) != CS_OK)
            return cs_cli_usage_error(cmd, "--tuning %s: %s", path, err.msg);
        picks[k] = (cs_cli_pick_t){e->algo,      e->params ? e->params : "",
                                   e->map,       e->map ? e->nmap : 0,
                                   e->min_bytes, e->max_bytes,
                                   e->predicted_us, cs_tuning_model(*t)};
    }
    return CS_EXIT_OK;
}

void cs_cli_tuning_free(struct cs_tuning *t)
{
    cs_tuning_free(t);
}

/* ---- the schedules a command runs ----------------------------------------- */

void cs_cli_scheds_init(cs_cli_scheds_t *b)
{
    memset(b, 0, sizeof(*b));
    b->owned = 1;
}

void cs_cli_scheds_free(cs_cli_scheds_t *b)
{
    for (int i = 0; i < b->n && b->owned; i++)
        cs_cli_free_sched(b->sched[i]);
    cs_cli_schedule_set_free(b->set);
    cs_cli_tuning_free(b->tuning);
    cs_cli_scheds_init(b);
}

int cs_cli_scheds_serves(const cs_cli_scheds_t *b, int i, int k)
{
    return !b->per_size || b->of_size[k] == i;
}

const char *cs_cli_scheds_name(const cs_cli_scheds_t *b, int i, const char *arg)
{
    return b->sched[i]->algo[0] ? b->sched[i]->algo : arg;
}

int cs_cli_source_check(const char *cmd, const char *algo, const char *schedule,
                        const char *tuning, const cs_cli_params_t *p)
{
    int automatic = algo && !strcmp(algo, "auto");
    if (!algo == !schedule)
        return cs_cli_usage_hint(cmd, "give exactly one of --algo and --schedule");
    if (tuning && !automatic)
        return cs_cli_usage_hint(cmd, "--tuning %s: only with --algo auto", tuning);
    if (automatic && !tuning)
        return cs_cli_usage_hint(cmd, "--algo auto needs --tuning FILE (a table written by "
                                      "'collstep plan -o FILE')");
    if (automatic && p && (p->global.n || p->nper))
        return cs_cli_usage_hint(cmd, "--param: not with --algo auto (the tuning table sets "
                                      "the parameters)");
    return CS_EXIT_OK;
}

/* Index of `s` among b's schedules, added (with its params column) when new. */
static int scheds_add(cs_cli_scheds_t *b, cs_sched_t *s, const char *params)
{
    for (int i = 0; i < b->n; i++)
        if (b->sched[i] == s)
            return i;
    b->sched[b->n] = s;
    snprintf(b->params[b->n], sizeof(b->params[0]), "%.*s", (int)sizeof(b->params[0]) - 1,
             params);
    return b->n++;
}

int cs_cli_scheds_load(const cs_cli_want_t *w, const char *arg, cs_cli_scheds_t *b)
{
    cs_err_t err;
    cs_err_clear(&err);
    if (!cs_cli_is_schedule_set(arg)) {
        cs_sched_t *s = cs_cli_load_sched(arg, &err);
        if (!s)
            return cs_cli_usage_error(w->cmd, "%s", err.msg);
        scheds_add(b, s, s->params);
        b->coll = s->desc.coll;
        b->nranks = s->desc.nranks;
        return CS_EXIT_OK;
    }
    cs_sched_t *per[CS_CLI_MAX_SIZES] = {0};
    const char *paths[CS_CLI_MAX_SIZES] = {0};
    b->owned = 0;
    if (cs_cli_schedule_set(w->announce ? w->cmd : NULL, arg, w->sizes, w->nsizes, w->elem,
                            &b->set, per, paths, &b->coll, &b->nranks, &err) != CS_OK)
        return cs_cli_usage_error(w->cmd, "--schedule %s: %s", arg, err.msg);
    b->per_size = 1;
    for (int k = 0; k < w->nsizes; k++) {
        char file[96];
        snprintf(file, sizeof(file), "file=%.80s", paths[k] ? paths[k] : "");
        b->of_size[k] = scheds_add(b, per[k], file);
    }
    return CS_EXIT_OK;
}

int cs_cli_scheds_fit(const char *cmd, const cs_cli_scheds_t *b, const char *arg, int ranks)
{
    if (ranks <= 0 || b->nranks == ranks)
        return CS_EXIT_OK;
    if (b->set)
        return cs_cli_usage_error(cmd, "%s: schedules for %d ranks, not %d", arg, b->nranks,
                                  ranks);
    return cs_cli_usage_error(cmd, "%s is a schedule for %d ranks, not %d", arg, b->nranks, ranks);
}

/* Build algorithm `name` with `p` and the platform's tier defaults into b. */
static int scheds_build_one(const cs_cli_want_t *w, const char *name, const cs_coll_desc_t *d,
                            const cs_cli_params_t *p, cs_cli_scheds_t *b, int *index)
{
    double t0 = cs_now_s();
    cs_params_t extra;
    cs_cli_tier_defaults(name, w->dims, w->ndims, d->nranks, &extra);
    char effective[sizeof(b->params[0])];
    cs_sched_t *s = NULL;
    int rc = cs_cli_build(w->cmd, name, d, p, &extra, &s, effective, sizeof(effective));
    if (rc != CS_EXIT_OK)
        return rc;
    *index = scheds_add(b, s, effective);
    CS_INFO(w->cmd, "generated %s %s on %d ranks in %.2f s", cs_coll_name(d->coll), name,
            d->nranks, cs_now_s() - t0);
    return CS_EXIT_OK;
}

/* --algo auto --tuning FILE: per size the table's entry, each entry built once. */
static int scheds_build_auto(const cs_cli_want_t *w, const char *tuning, const cs_coll_desc_t *d,
                             cs_cli_scheds_t *b)
{
    cs_cli_pick_t picks[CS_CLI_MAX_SIZES];
    int rc = cs_cli_tuning_pick(w->cmd, tuning, w->platform, d->nranks, d->coll, w->sizes,
                                w->nsizes, &b->tuning, picks);
    return rc == CS_EXIT_OK ? cs_cli_scheds_build_picks(w, picks, tuning, d, b) : rc;
}

int cs_cli_scheds_build_picks(const cs_cli_want_t *w, const cs_cli_pick_t *picks,
                              const char *tuning, const cs_coll_desc_t *d, cs_cli_scheds_t *b)
{
    int rc = CS_EXIT_OK;
    b->per_size = 1;
    for (int k = 0; k < w->nsizes && rc == CS_EXIT_OK; k++) {
        const cs_cli_pick_t *pk = &picks[k];
        int j = 0;
        while (j < k && (picks[j].min_bytes != pk->min_bytes ||
                         strcmp(picks[j].algo, pk->algo) != 0 ||
                         strcmp(picks[j].params, pk->params) != 0))
            j++;
        if (j < k) { /* the entry of an earlier size (ranges do not overlap) */
            b->of_size[k] = b->of_size[j];
        } else {
            cs_cli_params_t p;
            cs_err_t err;
            cs_err_clear(&err);
            cs_cli_params_init(&p);
            p.nper = 1; /* the algorithm's own keys: one it does not declare is an error */
            snprintf(p.per[0].algo, sizeof(p.per[0].algo), "%s", pk->algo);
            cs_params_init(&p.per[0].p);
            if (*pk->params && cs_params_parse(&p.per[0].p, pk->params, &err) != CS_OK)
                return cs_cli_usage_error(w->cmd, "--tuning %s: %s '%s': %s", tuning, pk->algo,
                                          pk->params, err.msg);
            if ((rc = scheds_build_one(w, pk->algo, d, &p, b, &b->of_size[k])) != CS_EXIT_OK)
                return rc;
            b->map[b->of_size[k]] = pk->map;
            b->nmap[b->of_size[k]] = pk->nmap;
        }
        if (w->announce) {
            const char *prm = b->params[b->of_size[k]];
            fprintf(stderr, "collstep %s: %llu B: %s%s%s%s from %s (%llu to %llu bytes; the "
                            "plan predicted %.2f us%s%s for the first size it planned there)\n",
                    w->cmd, (unsigned long long)w->sizes[k],
                    pk->algo, *prm ? " " : "", prm, pk->map ? ", ranks mapped by the table" : "",
                    tuning, (unsigned long long)pk->min_bytes,
                    (unsigned long long)pk->max_bytes, pk->predicted_us,
                    pk->model ? " under model " : "", pk->model ? pk->model : "");
            /* once: the table's predictions are another model's */
            size_t ml = pk->model ? strcspn(pk->model, "-") : 0;
            if (k == 0 && pk->model && w->model &&
                !(strlen(w->model) == ml && strncmp(w->model, pk->model, ml) == 0))
                fprintf(stderr, "collstep %s: note: %s's predictions are model %s's and this "
                                "run simulates under model %s: give --model %.*s to compare "
                                "them\n",
                        w->cmd, tuning, pk->model, w->model, (int)ml, pk->model);
        }
    }
    return rc;
}

int cs_cli_scheds_build(const cs_cli_want_t *w, const char *algos, const char *tuning,
                        const cs_cli_params_t *p, const cs_coll_desc_t *d, cs_cli_scheds_t *b)
{
    if (tuning)
        return scheds_build_auto(w, tuning, d, b);
    char buf[512];
    const char *names[CS_CLI_MAX_ALGOS];
    const cs_algo_t *found[CS_CLI_MAX_ALGOS];
    int n = 0, index;
    int rc = cs_cli_algo_list(w->cmd, algos, buf, sizeof(buf), names, &n);
    for (int i = 0; i < n && rc == CS_EXIT_OK; i++)
        if (!(found[i] = cs_algo_find(d->coll, names[i])))
            rc = cs_cli_usage_error(w->cmd, "no algorithm '%s' for %s (see 'collstep algos')",
                                    names[i], cs_coll_name(d->coll));
    if (rc == CS_EXIT_OK)
        rc = cs_cli_params_check(p, w->cmd, found, n);
    for (int i = 0; i < n && rc == CS_EXIT_OK; i++)
        rc = scheds_build_one(w, names[i], d, p, b, &index);
    return rc;
}

int cs_cli_refuse_switch(const char *cmd, const cs_cli_scheds_t *b, const char *why)
{
    for (int a = 0; a < b->n; a++) {
        int r;
        uint32_t i;
        if (b->sched[a] == NULL || !cs_sched_first_switch(b->sched[a], &r, &i))
            continue;
        if (cmd != NULL)
            fprintf(stderr, "collstep %s: rank %d step %u: a switch step (in-network reduction) "
                            "cannot %s\n",
                    cmd, r, i, why);
        return CS_EXIT_USAGE;
    }
    return CS_EXIT_OK;
}

int cs_cli_scheds_verify(const char *cmd, const cs_cli_scheds_t *b, const char *arg,
                         cs_cli_verify_how_t how)
{
    int rc = CS_EXIT_OK;
    for (int i = 0; i < b->n && rc == CS_EXIT_OK; i++)
        rc = cs_cli_verify(cmd, b->sched[i], cs_cli_scheds_name(b, i, arg), how);
    return rc;
}

/* ---- results -------------------------------------------------------------- */

int cs_cli_report(const char *cmd, const cs_cli_report_t *r, cs_result_t *rows, int n)
{
    cs_err_t err;
    cs_err_clear(&err);
    unsigned flags = 0;
    int rc = CS_EXIT_OK;
    if (r->compare_on) {
        if (cs_results_compare(rows, n, r->compare && *r->compare ? r->compare : NULL, &err) ==
            CS_OK)
            flags |= CS_RESULTS_COMPARE;
        else
            rc = cs_cli_usage_error(cmd, "--compare: %s", err.msg);
    }
    int st = r->output ? cs_results_save(r->output, r->fmt, flags | (r->force ? CS_RESULTS_FORCE
                                                                              : 0),
                                         rows, n, &err)
                       : cs_results_print(stdout, r->fmt, flags, rows, n);
    fflush(stdout);
    if (st == CS_OK)
        return rc;
    fprintf(stderr, "collstep %s: %s\n", cmd, err.msg[0] ? err.msg : "cannot write the results");
    return cs_cli_exit_code(st);
}

int cs_cli_once(const char *cmd, const char *flag, const char **slot, const char *arg)
{
    if (*slot && strcmp(*slot, arg) != 0)
        return cs_cli_usage_error(cmd, "%s given twice ('%s', then '%s'): give it once", flag,
                                  *slot, arg);
    *slot = arg;
    return CS_EXIT_OK;
}

int cs_cli_nccl_cut_text(const struct cs_nccl_run *t, char *buf, size_t len)
{
    if (!cs_nccl_run_cut_short(t))
        return 0;
    char a[32], z[32];
    cs_cli_size_text(t->rows[t->nrows - 1].size, a, sizeof(a));
    cs_cli_size_text(t->max_bytes, z, sizeof(z));
    snprintf(buf, len, "the table ends at %s, short of its maxBytes (%s), without nccl-tests' "
                       "closing lines: the run was likely cut (killed, out of time)", a, z);
    return 1;
}
