/*
 * cs_nccl_log.c - the nccl-tests log reader (cs_nccl_log.h): lines and
 * their launcher prefixes, tokens and numbers, tables, and what lines
 * outside nccl-tests' own say (NCCL version, NCCL_ALGO / NCCL_PROTO, the
 * program of a command echoed).  The header part of a run (version,
 * program, sweep, devices): cs_nccl_log_head.c; column header, rows and
 * closing lines: cs_nccl_log_rows.c.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_file.h"
#include "cs_grow.h"
#include "cs_nccl_log.h"
#include "cs_nccl_log_int.h"

static const char *const coll_names[] = {"all_reduce", "all_gather", "reduce_scatter",
                                         "broadcast",  "reduce",     "alltoall",
                                         "sendrecv",   "gather",     "scatter",
                                         "hypercube",  "unknown"};

const char *cs_nccl_coll_name(cs_nccl_coll_t c)
{
    return (unsigned)c <= CS_NCCL_UNKNOWN ? coll_names[c] : "unknown";
}

int cs_nccl_coll_to_cs(cs_nccl_coll_t c, cs_coll_t *out)
{
    static const int map[] = {CS_COLL_ALLREDUCE, CS_COLL_ALLGATHER, CS_COLL_REDUCE_SCATTER,
                              CS_COLL_BROADCAST, CS_COLL_REDUCE,    CS_COLL_ALLTOALL};
    if ((unsigned)c >= sizeof(map) / sizeof(map[0]))
        return CS_ERR_UNSUPPORTED;
    *out = (cs_coll_t)map[c];
    return CS_OK;
}

cs_nccl_coll_t nl_coll_of_program(const char *s, size_t n)
{
    const char *base = s;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '/')
            base = s + i + 1;
    size_t bn = (size_t)(s + n - base);
    for (size_t i = 0; i + 5 <= bn; i++) {
        if (memcmp(base + i, "_perf", 5) != 0)
            continue;
        for (int c = 0; c < CS_NCCL_UNKNOWN; c++)
            if (strlen(coll_names[c]) == i && memcmp(base, coll_names[c], i) == 0)
                return (cs_nccl_coll_t)c;
        break;
    }
    return CS_NCCL_UNKNOWN;
}

/* ---- tokens, numbers, errors ---------------------------------------------- */

const char *nl_skip_blank(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v'))
        p++;
    return p;
}

int nl_token(const char *p, const char *end, const char **ts, const char **te)
{
    p = nl_skip_blank(p, end);
    const char *q = p;
    while (q < end && !(*q == ' ' || *q == '\t' || *q == '\r' || *q == '\f' || *q == '\v'))
        q++;
    *ts = p, *te = q;
    return q > p;
}

int nl_starts(const char *p, const char *end, const char *w, int prefix)
{
    size_t n = strlen(w);
    if ((size_t)(end - p) < n || memcmp(p, w, n) != 0)
        return 0;
    return prefix || p + n == end || p[n] == ' ' || p[n] == '\t' || p[n] == '\r';
}

int nl_fail(nl_parser_t *P, int code, const char *at, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    unsigned col = (unsigned)(at - P->orig) + 1;
    return cs_err_set(P->err, code, "%s:%u:%u: %s", P->name, P->lineno, col, msg);
}

int nl_expected(nl_parser_t *P, const char *at, const char *what)
{
    const char *ts, *te;
    if (!nl_token(at, P->end, &ts, &te))
        return nl_fail(P, CS_ERR_PARSE, at < P->end ? at : P->end,
                       "expected %s, found the end of the line", what);
    char found[24];
    size_t n = 0;
    for (const char *q = ts; q < te && n < 20; q++)
        found[n++] = (*q >= 0x20 && *q < 0x7f && *q != '\'') ? *q : '?';
    found[n] = 0;
    return nl_fail(P, CS_ERR_PARSE, ts, "expected %s, found '%s%s'", what, found,
                   te - ts > 20 ? "..." : "");
}

/* Copy a token of at most 63 bytes for strtod / strtoull; 0 when longer. */
static int small(const char *ts, const char *te, char buf[64])
{
    if (te - ts >= 64)
        return 0;
    memcpy(buf, ts, (size_t)(te - ts));
    buf[te - ts] = 0;
    return 1;
}

int nl_u64(nl_parser_t *P, const char *ts, const char *te, uint64_t *v, const char *what)
{
    char buf[64], *e;
    if (!small(ts, te, buf) || !isdigit((unsigned char)buf[0]))
        return nl_expected(P, ts, what);
    errno = 0;
    unsigned long long x = strtoull(buf, &e, 10);
    if (*e || errno)
        return nl_expected(P, ts, what);
    *v = x;
    return CS_OK;
}

int nl_int(nl_parser_t *P, const char *ts, const char *te, int *v, const char *what)
{
    char buf[64], *e;
    if (!small(ts, te, buf) || !(isdigit((unsigned char)buf[0]) ||
                                 (buf[0] == '-' && isdigit((unsigned char)buf[1]))))
        return nl_expected(P, ts, what);
    errno = 0;
    long x = strtol(buf, &e, 10);
    if (*e || errno || x < -2147483647L || x > 2147483647L)
        return nl_expected(P, ts, what);
    *v = (int)x;
    return CS_OK;
}

int nl_double(nl_parser_t *P, const char *ts, const char *te, double *v, const char *what)
{
    char buf[64], *e;
    if (!small(ts, te, buf) || !(isdigit((unsigned char)buf[0]) || buf[0] == '-' ||
                                 buf[0] == '+' || buf[0] == '.' || buf[0] == 'n' ||
                                 buf[0] == 'i'))
        return nl_expected(P, ts, what);
    /* strtod also reads hexadecimal ("0x10"), which nccl-tests never prints */
    if (strpbrk(buf, "xXpP"))
        return nl_expected(P, ts, what);
    errno = 0;
    double x = strtod(buf, &e);
    if (*e || e == buf)
        return nl_expected(P, ts, what);
    *v = x;
    return CS_OK;
}

int nl_word(nl_parser_t *P, const char *ts, const char *te, char *out, size_t cap,
            const char *what)
{
    if (te <= ts || (size_t)(te - ts) >= cap)
        return nl_expected(P, ts, what);
    memcpy(out, ts, (size_t)(te - ts));
    out[te - ts] = 0;
    return CS_OK;
}

/* ---- tables ---------------------------------------------------------------- */

static void set_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src);
}

/* NCCL_VERSION_CODE: X*10000 + Y*100 + Z since 2.9, X*1000 + Y*100 + Z before. */
static void version_of_code(int code, char out[32])
{
    if (code >= 20900)
        snprintf(out, 32, "%d.%d.%d", code / 10000, code / 100 % 100, code % 100);
    else
        snprintf(out, 32, "%d.%d.%d", code / 1000, code / 100 % 10, code % 100);
}

int nl_pending_error(nl_parser_t *P)
{
    P->pend_raised = 1;
    return cs_err_set(P->err, CS_ERR_PARSE, "%s", P->pend_msg);
}

/* Number the nodes, check the device block, name the collective (and a
 * pending row that nothing of the table followed: the table's cut). */
static int finish_table(nl_parser_t *P)
{
    cs_nccl_run_t *t = nl_table(P);
    if (t == NULL)
        return CS_OK;
    if (P->pend_line) { /* its last row did not read, and nothing of it followed */
        t->cut_line = P->pend_line;
        set_str(t->cut_why, sizeof(t->cut_why), P->pend_msg);
        P->pend_line = 0;
    }
    t->nnodes = 0;
    for (int i = 0; i < t->ndevs; i++) {
        int j = 0;
        while (j < i && strcmp(t->devs[j].host, t->devs[i].host) != 0)
            j++;
        t->devs[i].node = j < i ? t->devs[j].node : t->nnodes++;
        if (t->devs[i].rank >= t->ndevs)
            return cs_err_set(P->err, CS_ERR_PARSE,
                              "%s:%u: the device block lists %d ranks but names rank %d",
                              P->name, t->line, t->ndevs, t->devs[i].rank);
    }
    if (t->nccl_library > 0) {
        version_of_code(t->nccl_library, t->nccl_version);
        t->nccl_version_from = "nccl-library";
    }
    if (t->coll == CS_NCCL_UNKNOWN && t->program[0]) {
        t->coll = nl_coll_of_program(t->program, strlen(t->program));
        t->coll_from = t->coll == CS_NCCL_UNKNOWN ? "unknown" : t->coll_from;
    }
    if (t->coll == CS_NCCL_UNKNOWN)
        nl_infer_coll(t);
    return CS_OK;
}

int nl_open(nl_parser_t *P)
{
    int st = finish_table(P);
    if (st != CS_OK)
        return st;
    cs_nccl_log_t *log = P->log;
    if (cs_grow(&log->tables, &log->cap_tables, (size_t)log->ntables + 1, sizeof(*log->tables),
                4))
        return cs_err_set(P->err, CS_ERR_NOMEM, "%s: out of memory", P->name);
    cs_nccl_run_t *t = &log->tables[log->ntables++];
    memset(t, 0, sizeof(*t));
    t->coll = CS_NCCL_UNKNOWN, t->coll_from = "unknown", t->nccl_version_from = "";
    t->nthread = t->ngpus = -1, t->step_factor = -1;
    t->warmup_iters = t->iters = t->agg_iters = t->validation = t->graph = t->unalign = -1;
    t->oob_values = -1, t->avg_busbw = NAN;
    t->line = t->end_line = P->lineno;
    /* what the lines before it said */
    set_str(t->algo, sizeof(t->algo), P->algo);
    set_str(t->proto, sizeof(t->proto), P->proto);
    t->algo_line = P->algo[0] ? P->algo_line : 0;
    t->proto_line = P->proto[0] ? P->proto_line : 0;
    if (P->nccl[0]) {
        set_str(t->nccl_version, sizeof(t->nccl_version), P->nccl);
        t->nccl_version_from = "NCCL version line";
    }
    if (P->prog[0]) {
        set_str(t->program, sizeof(t->program), P->prog);
        t->coll = nl_coll_of_program(P->prog, strlen(P->prog));
        t->coll_from = "command";
    }
    set_str(t->cs_algo, sizeof(t->cs_algo), P->cs_algo);
    set_str(t->cs_params, sizeof(t->cs_params), P->cs_params);
    set_str(t->cs_source, sizeof(t->cs_source), P->cs_source);
    P->algo[0] = P->proto[0] = P->nccl[0] = P->prog[0] = 0;
    P->algo_line = P->proto_line = 0;
    P->cs_algo[0] = P->cs_params[0] = P->cs_source[0] = 0;
    P->state = NL_HEAD, P->seen = 0, P->ncols = 0, P->units_seen = 0;
    return CS_OK;
}

/* ---- what other lines say ------------------------------------------------- */

/* The token after `key` in the line, into out (trailing '.', quotes cut);
 * nothing when absent or too long. */
static int value_after(nl_parser_t *P, const char *key, char *out, size_t cap, int version)
{
    size_t kn = strlen(key);
    for (const char *q = P->p; q + kn <= P->end; q++) {
        if (memcmp(q, key, kn) != 0)
            continue;
        const char *vs = q + kn, *ve = vs;
        while (ve < P->end && !strchr(" \t\r'\";", *ve) && !(version && *ve == '+'))
            ve++;
        while (ve > vs && ve[-1] == '.')
            ve--;
        if (ve == vs || (size_t)(ve - vs) >= cap)
            return 0;
        for (const char *c = vs; version && c < ve; c++)
            if (!isdigit((unsigned char)*c) && *c != '.')
                return 0;
        memcpy(out, vs, (size_t)(ve - vs));
        out[ve - vs] = 0;
        return 1;
    }
    return 0;
}

static void other_line(nl_parser_t *P)
{
    cs_nccl_run_t *t = nl_table(P);
    int inside = t && P->state != NL_DONE;
    char *algo = inside ? t->algo : P->algo, *proto = inside ? t->proto : P->proto;
    unsigned *al = inside ? &t->algo_line : &P->algo_line,
             *pl = inside ? &t->proto_line : &P->proto_line;
    if (value_after(P, "NCCL_ALGO set by environment to ", algo, 32, 0) |
        value_after(P, "NCCL_ALGO=", algo, 32, 0))
        *al = P->lineno;
    if (value_after(P, "NCCL_PROTO set by environment to ", proto, 32, 0) |
        value_after(P, "NCCL_PROTO=", proto, 32, 0))
        *pl = P->lineno;
    char v[32] = "";
    value_after(P, "NCCL version ", v, sizeof(v), 1);
    if (v[0] && inside &&
        (!t->nccl_version[0] || !strcmp(t->nccl_version_from, "compiled with"))) {
        set_str(t->nccl_version, sizeof(t->nccl_version), v);
        t->nccl_version_from = "NCCL version line";
    } else if (v[0] && !inside) {
        set_str(P->nccl, sizeof(P->nccl), v);
    }
    /* a command echoed: the first word naming a *_perf program */
    const char *ts, *te;
    for (const char *s = P->p; nl_token(s, P->end, &ts, &te); s = te) {
        if (nl_coll_of_program(ts, (size_t)(te - ts)) == CS_NCCL_UNKNOWN ||
            (size_t)(te - ts) >= sizeof(P->prog))
            continue;
        const char *b = ts;
        for (const char *q = ts; q < te; q++)
            if (*q == '/')
                b = q + 1;
        if (inside && !t->program[0]) {
            snprintf(t->program, sizeof(t->program), "%.*s", (int)(te - b), b);
            t->coll = nl_coll_of_program(b, (size_t)(te - b));
            t->coll_from = "command";
        } else if (!inside) {
            snprintf(P->prog, sizeof(P->prog), "%.*s", (int)(te - b), b);
        }
        break;
    }
}

/* ---- lines ------------------------------------------------------------------ */

/* Launcher prefixes: "[1,0]<stdout>:" (Open MPI --tag-output), "[0] "
 * (MPICH -l), "0: " or " 0: " (srun --label, the rank padded). */
static const char *strip_prefix(const char *p, const char *end)
{
    const char *q = p;
    if (q < end && *q == '[') {
        q++;
        while (q < end && (isdigit((unsigned char)*q) || *q == ','))
            q++;
        if (q > p + 1 && q < end && *q == ']') {
            q++;
            if (nl_starts(q, end, "<stdout>:", 1) || nl_starts(q, end, "<stderr>:", 1))
                return q + 9;
            if (q < end && *q == ' ' && !memchr(p, ',', (size_t)(q - p)))
                return q + 1;
        }
        return p;
    }
    while (q < end && *q == ' ') /* srun pads the rank to the width of the largest */
        q++;
    const char *d = q;
    while (q < end && isdigit((unsigned char)*q))
        q++;
    if (q > d && q + 1 < end && q[0] == ':' && q[1] == ' ')
        return q + 2;
    return p;
}

/* "measured by collstep run, ..." or "simulated by collstep sim, ...":
 * the title line before it, "COLL ALGO (PARAMS), N ranks, ...", names the
 * algorithm of collstep's that the next table ran (none where the title
 * is "COLL, NCCL's choice per size, ...").  For the next table. */
static void collstep_title(nl_parser_t *P, const char *source)
{
    P->cs_algo[0] = P->cs_params[0] = 0;
    set_str(P->cs_source, sizeof(P->cs_source), source);
    if (source[0] == 'p')
        return; /* a plan's table: its choice per size, not one algorithm */
    const char *p = P->prev, *e = p + strlen(p), *ts, *te;
    if (!nl_token(p, e, &ts, &te) || te[-1] == ',' || (size_t)(te - ts) >= 32)
        return; /* "COLL, NCCL's choice per size, ..." */
    char coll[32];
    memcpy(coll, ts, (size_t)(te - ts));
    coll[te - ts] = 0;
    /* collstep's names of the collectives (cs_coll_name) */
    static const char *const colls[] = {"allreduce", "reduce-scatter", "allgather",
                                        "broadcast", "reduce", "alltoall"};
    int known = 0;
    for (size_t i = 0; i < sizeof(colls) / sizeof(colls[0]); i++)
        known |= strcmp(coll, colls[i]) == 0;
    if (!known || !nl_token(te, e, &ts, &te))
        return;
    const char *ae = te, *rest = te;
    if (ae[-1] == ',')
        ae--;
    int name = ae > ts && (size_t)(ae - ts) < sizeof(P->cs_algo);
    for (const char *c = ts; name && c < ae; c++)
        name = isalnum((unsigned char)*c) || strchr("_-.", *c);
    if (!name) { /* not a generator's name: a schedule file's path */
        set_str(P->cs_source, sizeof(P->cs_source), "file");
        return;
    }
    memcpy(P->cs_algo, ts, (size_t)(ae - ts));
    P->cs_algo[ae - ts] = 0;
    if (ae == te && te + 1 < e && te[0] == ' ' && te[1] == '(') {
        const char *ps = te + 2, *pe = memchr(ps, ')', (size_t)(e - ps));
        if (!pe || (size_t)(pe - ps) >= sizeof(P->cs_params)) {
            set_str(P->cs_source, sizeof(P->cs_source), "bad"); /* cut or too long */
            return;
        }
        memcpy(P->cs_params, ps, (size_t)(pe - ps));
        P->cs_params[pe - ps] = 0;
        rest = pe + 1;
    }
    /* "..., platform P, model M": simulated under the nccl model, whose
     * costs are NCCL's, not the links' alone */
    for (const char *q = rest; q + 8 <= e; q++)
        if (memcmp(q, ", model ", 8) == 0 && e - (q + 8) >= 4 && memcmp(q + 8, "nccl", 4) == 0)
            set_str(P->cs_source, sizeof(P->cs_source), "nccl");
}

static int hash_line(nl_parser_t *P, const char *s)
{
    const char *e = P->end;
    s = nl_skip_blank(s, e);
    if (nl_starts(s, e, "measured by collstep run,", 0) ||
        nl_starts(s, e, "simulated by collstep sim,", 0) ||
        nl_starts(s, e, "planned by collstep plan,", 0)) {
        collstep_title(P, s[0] == 'm' ? "run" : s[0] == 's' ? "sim" : "plan");
        P->prev[0] = 0;
        return CS_OK;
    }
    if (nl_starts(s, e, "nccl-tests version", 0))
        return nl_version_line(P, s + 18);
    if (nl_starts(s, e, "Collective test starting:", 0))
        return nl_program_line(P, s + 25);
    if (nl_starts(s, e, "Collective test concluded:", 0)) {
        if (P->state == NL_COLS || P->state == NL_HEAD)
            P->state = NL_DONE;
        return CS_OK;
    }
    if (nl_starts(s, e, "nThread", 0))
        return nl_params_line(P, s);
    if (nl_starts(s, e, "NCCL Tests compiled with NCCL", 0)) {
        int st = nl_head_line(P, NL_F_COMPILED);
        cs_nccl_run_t *t = nl_table(P);
        const char *ts, *te;
        if (st != CS_OK || t->nccl_version[0])
            return st;
        nl_token(s + 29, e, &ts, &te);
        if ((st = nl_word(P, ts, te, t->nccl_version, sizeof(t->nccl_version),
                          "NCCL's major.minor")) == CS_OK)
            t->nccl_version_from = "compiled with";
        return st;
    }
    if (nl_starts(s, e, "Using devices", 0))
        return nl_head_line(P, NL_F_USING);
    if (nl_starts(s, e, "Rank", 0))
        return nl_device_line(P, s + 4);
    if (nl_starts(s, e, "size", 0) || nl_starts(s, e, "bytes", 0))
        return nl_columns(P, s);
    if (nl_starts(s, e, "NCCL version", 0))
        other_line(P); /* "# NCCL version 2.18.5+cuda12.2" */
    else if (nl_starts(s, e, "(B)", 0))
        nl_units(P, s);
    else if (nl_starts(s, e, "Out of bounds values", 0))
        return nl_closing(P, s + 20, 1);
    else if (nl_starts(s, e, "Avg bus bandwidth", 0))
        return nl_closing(P, s + 17, 0);
    else if (nl_starts(s, e, "NCCL_ALGO=", 1) || nl_starts(s, e, "NCCL_PROTO=", 1))
        other_line(P); /* "# NCCL_ALGO=Ring NCCL_PROTO=Simple": collstep sim's title, a
                        * script's echo (not "# export NCCL_ALGO=...  # tried it") */
    else { /* a title, a comment, "Reducing maxBytes", ...: kept for the line after */
        size_t n = (size_t)(e - s) < sizeof(P->prev) ? (size_t)(e - s) : sizeof(P->prev) - 1;
        while (n > 0 && (s[n - 1] == '\r' || s[n - 1] == ' '))
            n--;
        memcpy(P->prev, s, n);
        P->prev[n] = 0;
    }
    return CS_OK;
}

static int one_line(nl_parser_t *P)
{
    const char *s = nl_skip_blank(P->p, P->end), *e = P->end, *ts, *te;
    if (s < e && *s == '#')
        return hash_line(P, s + 1);
    /* builds before 2019 printed these without '#' */
    if (nl_starts(s, e, "nThread", 0))
        return nl_params_line(P, s);
    if (nl_starts(s, e, "Out of bounds values", 0))
        return nl_closing(P, s + 20, 1);
    if (nl_starts(s, e, "Avg bus bandwidth", 0))
        return nl_closing(P, s + 17, 0);
    if (P->state == NL_COLS && nl_token(s, e, &ts, &te)) {
        const char *q = ts;
        while (q < te && isdigit((unsigned char)*q))
            q++;
        if (q == te) {
            int st = nl_row(P, s);
            if (st == CS_ERR_PARSE && !P->pend_line) { /* the last row? decided later */
                P->pend_line = P->lineno;
                set_str(P->pend_msg, sizeof(P->pend_msg), P->err->msg);
                cs_err_clear(P->err);
                return CS_OK;
            }
            if (P->pend_line) /* a row after it: it was not the last */
                return nl_pending_error(P);
            return st;
        }
    }
    /* collstep's title names the table right below it, after '#' lines
     * only: anything else in between cancels it */
    P->cs_algo[0] = P->cs_params[0] = P->cs_source[0] = 0;
    other_line(P);
    return CS_OK;
}

int cs_nccl_log_parse(const char *buf, size_t len, const char *name, cs_nccl_log_t **out,
                      cs_err_t *err)
{
    *out = NULL;
    cs_err_t local = {0};
    nl_parser_t P = {.name = name ? name : "<input>", .err = err ? err : &local};
    P.log = calloc(1, sizeof(*P.log));
    if (P.log == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "%s: out of memory", P.name);
    int st = CS_OK;
    const char *p = buf, *end = buf + len;
    const unsigned char *u = (const unsigned char *)buf;
    if (len >= 3 && u[0] == 0xEF && u[1] == 0xBB && u[2] == 0xBF)
        p += 3; /* a UTF-8 byte-order mark (Windows editors write one) */
    else if (len >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) || (u[0] == 0xFE && u[1] == 0xFF)))
        st = cs_err_set(P.err, CS_ERR_PARSE, "%s:1: the file is UTF-16 text (as PowerShell's '>' "
                                             "writes it), expected UTF-8 or ASCII: convert it "
                                             "(iconv -f UTF-16 -t UTF-8 %s > LOG)",
                        P.name, P.name);
    else if (len >= 4 && (u[0] == 0 || u[1] == 0) && (u[2] == 0 || u[3] == 0)) {
        /* text of every other byte NUL: UTF-16 without its byte-order mark */
        size_t n = len < 256 ? len : 256, nul = 0;
        for (size_t i = 0; i < n; i++)
            nul += u[i] == 0;
        if (nul * 3 >= n)
            st = cs_err_set(P.err, CS_ERR_PARSE, "%s:1: the file is a third or more NUL bytes: "
                                                 "UTF-16 text without a byte-order mark, or not "
                                                 "text; expected UTF-8 or ASCII (iconv -f UTF-16LE "
                                                 "-t UTF-8 %s > LOG converts the first)",
                            P.name, P.name);
    } else if (len >= 2 && u[0] == 0x1F && u[1] == 0x8B)
        st = cs_err_set(P.err, CS_ERR_PARSE, "%s:1: the file is gzip-compressed, expected an "
                                             "nccl-tests log: decompress it (gunzip), or give "
                                             "'-' and pipe it in (zcat %s | collstep ... -)",
                        P.name, P.name);
    char *tabless = NULL; /* a line with tabs, each a blank (column for column) */
    size_t tcap = 0;
    while (st == CS_OK && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        P.lineno++;
        const char *lp = p;
        /* the header's phrases ("nccl-tests version", "Using devices") are
         * matched with blanks between their words: a file whose tabs an
         * editor or a script put there reads the same */
        if (memchr(p, '\t', (size_t)(le - p))) {
            size_t n = (size_t)(le - p);
            if (cs_grow(&tabless, &tcap, n + 1, 1, 256)) {
                st = cs_err_set(P.err, CS_ERR_NOMEM, "%s: out of memory", P.name);
                break;
            }
            for (size_t i = 0; i < n; i++)
                tabless[i] = p[i] == '\t' ? ' ' : p[i];
            lp = tabless, le = tabless + n;
        }
        P.orig = lp, P.end = le;
        while (P.end > lp && P.end[-1] == '\r')
            P.end--;
        P.p = strip_prefix(lp, P.end);
        int was = P.state;
        st = one_line(&P);
        int cut = 0;
        if (st == CS_ERR_PARSE && !nl && P.end > P.p && !P.pend_raised) {
            /* the file ends inside a line that is not a row (a row is
             * pending: finish_table): the run or the copy was cut there;
             * its table ends with the line before.  What reading it said
             * is kept: a typo in a last line without its newline reads the
             * same */
            P.log->cut_line = P.lineno;
            set_str(P.log->cut_why, sizeof(P.log->cut_why), P.err->msg);
            cs_err_clear(P.err);
            st = CS_OK, cut = 1;
        }
        if (st == CS_OK && !cut && nl_table(&P) && (P.state != NL_DONE || was != NL_DONE))
            nl_table(&P)->end_line = P.lineno;
        p = nl ? nl + 1 : end;
    }
    free(tabless);
    if (st == CS_OK)
        st = finish_table(&P);
    if (st == CS_OK && P.log->ntables == 0 && len == 0)
        st = cs_err_set(P.err, CS_ERR_PARSE, "%s:1: the file is empty (expected an nccl-tests "
                                             "log)", P.name);
    else if (st == CS_OK && P.log->ntables == 0)
        st = cs_err_set(P.err, CS_ERR_PARSE,
                        "%s:%u: no nccl-tests table found (expected a '# nThread ...' line or "
                        "a '#  size  count  type ...' column header)",
                        P.name, P.lineno ? P.lineno : 1);
    if (st != CS_OK) {
        cs_nccl_log_destroy(P.log);
        return st;
    }
    *out = P.log;
    return CS_OK;
}

int cs_nccl_log_load(const char *path, cs_nccl_log_t **out, cs_err_t *err)
{
    char *buf;
    size_t len;
    *out = NULL;
    /* the largest logs seen are a few MiB (NCCL_DEBUG=INFO output of
     * thousands of ranks: some hundred); beyond the bound a path is not a
     * log (/dev/zero, a disk image) and is not read on into memory */
    if (cs_file_read(path, CS_NCCL_LOG_MAX_BYTES, &buf, &len) != 0) {
        if (errno == EFBIG)
            return cs_err_set(err, CS_ERR_INVAL,
                              "%s: more than %u MiB: not an nccl-tests log (a log with NCCL's "
                              "debug output can be cut to nccl-tests' lines first: grep -v "
                              "'NCCL INFO')",
                              path, (unsigned)(CS_NCCL_LOG_MAX_BYTES >> 20));
        return cs_err_set(err, errno == ENOMEM ? CS_ERR_NOMEM : CS_ERR_IO, "%s: %s", path,
                          strerror(errno));
    }
    int st = cs_nccl_log_parse(buf, len, strcmp(path, "-") ? path : "<stdin>", out, err);
    free(buf);
    return st;
}

void cs_nccl_log_say_cuts(const cs_nccl_log_t *log, const char *path, const char *prefix,
                          FILE *f)
{
    for (int i = 0; i < log->ntables; i++)
        if (log->tables[i].cut_line)
            fprintf(f, "%s%s:%u: the table's last row does not read whole and nothing of the "
                       "table follows it (a job killed while writing it): the row is left out, "
                       "the rows above it are read (read whole it says: %s)\n",
                    prefix, path, log->tables[i].cut_line, log->tables[i].cut_why);
    if (log->cut_line)
        fprintf(f, "%s%s:%u: the file ends inside this line (the run or the copy was cut "
                   "short): the line is left out, the rows above it are read (read whole it "
                   "says: %s)\n",
                prefix, path, log->cut_line, log->cut_why);
}

void cs_nccl_log_destroy(cs_nccl_log_t *log)
{
    if (log == NULL)
        return;
    for (int i = 0; i < log->ntables; i++) {
        cs_nccl_run_t *t = &log->tables[i];
        for (int d = 0; d < t->ndevs; d++)
            free(t->devs[d].host), free(t->devs[d].name);
        free(t->devs);
        free(t->rows);
    }
    free(log->tables);
    free(log);
}

int cs_nccl_run_cut_short(const cs_nccl_run_t *t)
{
    if (!(t->nrows > 0 && t->max_bytes && t->rows[t->nrows - 1].size < t->max_bytes &&
          t->oob_values < 0 && !isfinite(t->avg_busbw)))
        return 0;
    /* the sweep's next size (-f FACTOR or -i BYTES) past maxBytes: the last
     * one ran, whatever -e said (-b 1M -e 10000000 -f 2 ends at 8 MiB) */
    uint64_t last = t->rows[t->nrows - 1].size;
    if (t->step_factor == 1 && t->step > 1)
        return last * t->step <= t->max_bytes;
    if (t->step_factor == 0 && t->step > 0)
        return last + t->step <= t->max_bytes;
    return 1;
}
