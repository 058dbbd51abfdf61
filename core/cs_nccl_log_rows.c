/*
 * cs_nccl_log_rows.c - the table part of the nccl-tests log reader
 * (cs_nccl_log.h): the column header (every layout nccl-tests printed,
 * print_header in each collective's source before 2022, writeResultHeader
 * since), the units line, rows, the closing lines, and the collective of a
 * table whose program is unknown.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cs_grow.h"
#include "cs_nccl_log.h"
#include "cs_nccl_log_int.h"

static const struct {
    const char *name;
    unsigned char kind;
} col_names[] = {
    {"size", NL_C_SIZE},     {"bytes", NL_C_SIZE},    {"count", NL_C_COUNT},
    {"N", NL_C_COUNT},       {"type", NL_C_TYPE},     {"redop", NL_C_OP},
    {"op", NL_C_OP},         {"root", NL_C_ROOT},     {"time", NL_C_TIME},
    {"cputime", NL_C_TIME},  {"algbw", NL_C_ALGBW},   {"busbw", NL_C_BUSBW},
    {"copybw", NL_C_COPYBW}, {"#wrong", NL_C_WRONG},  {"error", NL_C_WRONG},
    {"res", NL_C_WRONG},     {"i_min", NL_C_ITER},    {"i_max", NL_C_ITER},
    {"i_p99", NL_C_ITER},    {"i_cv%", NL_C_ITER},    {"timestamp", NL_C_STAMP},
};

/* What a row holds in a column of each kind, for messages. */
static const char *const col_what[] = {
    "a size in bytes", "an element count", "a type name", "an operation", "a root",
    "a time", "an algorithm bandwidth", "a bus bandwidth", "a copy bandwidth",
    "a number of wrong elements or N/A", "a per-iteration figure", "a timestamp"};

int nl_columns(nl_parser_t *P, const char *s)
{
    if (P->state != NL_HEAD) {
        int st = nl_open(P);
        if (st != CS_OK)
            return st;
    }
    cs_nccl_run_t *t = nl_table(P);
    const char *ts, *te;
    unsigned pre = 0, bw[2] = {0, 0};
    int ntime = 0, old = nl_starts(s, P->end, "bytes", 0), stamp = 0;
    P->ncols = 0, P->cputime = 0;
    for (; nl_token(s, P->end, &ts, &te); s = te) {
        int k = -1;
        for (size_t i = 0; i < sizeof(col_names) / sizeof(col_names[0]); i++)
            if (strlen(col_names[i].name) == (size_t)(te - ts) &&
                memcmp(col_names[i].name, ts, (size_t)(te - ts)) == 0)
                k = col_names[i].kind;
        if (k < 0 || stamp || P->ncols == NL_MAX_COLS)
            return nl_expected(P, ts, stamp ? "the end of the column header after 'timestamp'"
                                      : k < 0 ? "a column name (size, count, type, redop, root, "
                                                "time, algbw, busbw, #wrong, ...)"
                                              : "fewer columns");
        if (k == NL_C_TIME && ++ntime > 2)
            return nl_expected(P, ts, "at most two placements (out of place, in place)");
        if (k <= NL_C_ROOT && (ntime || (pre & 1u << k)))
            return nl_expected(P, ts, "size, count, type, redop and root once, before 'time'");
        if (k > NL_C_TIME && k != NL_C_STAMP && ntime == 0)
            return nl_expected(P, ts, "'time' before the bandwidths");
        if (k <= NL_C_ROOT)
            pre |= 1u << k;
        if (k == NL_C_ALGBW || k == NL_C_BUSBW)
            bw[ntime - 1] |= 1u << (k - NL_C_ALGBW);
        if (k == NL_C_WRONG && (nl_starts(ts, te, "error", 0) || nl_starts(ts, te, "res", 0)))
            t->wrong_is_error = 1;
        if (k == NL_C_TIME && nl_starts(ts, te, "cputime", 0))
            P->cputime = 1;
        stamp = k == NL_C_STAMP;
        P->col[P->ncols] = (unsigned char)k;
        P->place[P->ncols++] = (unsigned char)(ntime > 1);
    }
    if (P->col[0] != NL_C_SIZE || !(pre & 1u << NL_C_COUNT) || !(pre & 1u << NL_C_TYPE))
        return nl_expected(P, P->p, "a column header starting 'size count type'");
    if (ntime == 0 || bw[0] != 3 || (ntime == 2 && bw[1] != 3))
        return nl_expected(P, P->end, "'time algbw busbw' for each placement");
    t->time_ms = old;
    t->has_op_col = !!(pre & 1u << NL_C_OP);
    t->has_root_col = !!(pre & 1u << NL_C_ROOT);
    P->state = NL_COLS, P->units_seen = 0;
    return CS_OK;
}

void nl_units(nl_parser_t *P, const char *s)
{
    cs_nccl_run_t *t = nl_table(P);
    if (P->state != NL_COLS || t->nrows || P->units_seen)
        return;
    P->units_seen = 1;
    for (const char *q = s; q + 4 <= P->end; q++)
        if (q[0] == '(' && q[2] == 's' && q[3] == ')' && (q[1] == 'u' || q[1] == 'm')) {
            t->time_ms = q[1] == 'm';
            return;
        }
}

static int is_na(const char *ts, const char *te)
{
    return te - ts == 3 && memcmp(ts, "N/A", 3) == 0;
}

int nl_row(nl_parser_t *P, const char *s)
{
    cs_nccl_run_t *t = nl_table(P);
    cs_nccl_row_t r = {.root = -1, .line = P->lineno};
    const char *ts, *te;
    int st = CS_OK;
    double ignored;
    const char *tpos[2] = {NULL, NULL}, *tend[2] = {NULL, NULL};
    r.oop.present = 1;
    /* alltoall of 2020-2022 printed an empty operation under "redop": a row
     * one word short, in a table with an op column, has none */
    int words = 0, want = P->ncols, skip_op = 0;
    for (const char *q = s; nl_token(q, P->end, &ts, &te); q = te)
        words++;
    for (int c = 0; c < P->ncols; c++)
        want += P->col[c] == NL_C_STAMP; /* a date and a time */
    skip_op = t->has_op_col && words == want - 1;
    /* ...and where the op should stand a number (the root) follows: a word
     * short elsewhere (a bandwidth gone) leaves the op in its place */
    for (int c = 0, w = 0; skip_op && c < P->ncols; c++) {
        if (P->col[c] != NL_C_OP)
            continue;
        const char *q = s;
        for (int i = 0; i <= c && nl_token(q, P->end, &ts, &te); i++, q = te)
            w = i;
        skip_op = w == c && te > ts &&
                  (isdigit((unsigned char)*ts) ||
                   (*ts == '-' && te - ts > 1 && isdigit((unsigned char)ts[1])));
        break;
    }
    for (int c = 0; c < P->ncols && st == CS_OK; c++, s = te) {
        int k = P->col[c];
        if (k == NL_C_OP && skip_op) {
            te = s;
            continue;
        }
        cs_nccl_meas_t *m = P->place[c] ? &r.ip : &r.oop;
        if (!nl_token(s, P->end, &ts, &te)) {
            st = nl_expected(P, te, col_what[k]);
            break;
        }
        switch (k) {
        case NL_C_SIZE: st = nl_u64(P, ts, te, &r.size, col_what[k]); break;
        case NL_C_COUNT: st = nl_u64(P, ts, te, &r.count, col_what[k]); break;
        case NL_C_TYPE: st = nl_word(P, ts, te, r.type, sizeof(r.type), col_what[k]); break;
        case NL_C_OP: st = nl_word(P, ts, te, r.redop, sizeof(r.redop), col_what[k]); break;
        case NL_C_ROOT: st = nl_int(P, ts, te, &r.root, col_what[k]); break;
        case NL_C_TIME:
            m->present = 1;
            tpos[m == &r.ip] = ts, tend[m == &r.ip] = te;
            st = nl_double(P, ts, te, &m->time_us, col_what[k]);
            if (st == CS_OK && !(m->time_us >= 0 && isfinite(m->time_us))) /* a hand-edited row */
                st = nl_expected(P, ts, "a time of zero or more");
            m->time_us *= t->time_ms ? 1000.0 : 1.0;
            break;
        case NL_C_ALGBW: st = nl_double(P, ts, te, &m->algbw_GBps, col_what[k]); break;
        case NL_C_BUSBW: st = nl_double(P, ts, te, &m->busbw_GBps, col_what[k]); break;
        case NL_C_WRONG:
            m->wrong = -1;
            if (!is_na(ts, te))
                st = nl_double(P, ts, te, &m->wrong, col_what[k]);
            break;
        case NL_C_STAMP: te = P->end; break; /* "2025-01-01 12:00:00": the rest */
        default:
            if (!is_na(ts, te))
                st = nl_double(P, ts, te, &ignored, col_what[k]);
        }
    }
    if (st != CS_OK) {
        /* a word short of the header, the first mismatch may lie after the
         * column that went missing: say so */
        if (words < want && !skip_op && P->err && P->err->code == CS_ERR_PARSE) {
            size_t n = strlen(P->err->msg);
            snprintf(P->err->msg + n, sizeof(P->err->msg) - n,
                     " (the row has %d words where the column header has %d: a column may be "
                     "missing at or before this one)",
                     words, want);
        }
        return st;
    }
    if (nl_token(s, P->end, &ts, &te))
        return nl_expected(P, ts, "the end of the row");
    /* a time no link can reach: its size over it past 100 TB/s (a
     * hand-edited row).  Not where nothing moves: one rank (NCCL copies or
     * does nothing, and nccl-tests prints a bus bandwidth of 0), nor the
     * host's launch time of `-C 1` (cputime), which the size does not
     * change */
    for (int i = 0; i < 2; i++) {
        const cs_nccl_meas_t *m = i ? &r.ip : &r.oop;
        if (tpos[i] && m->present && r.size > 0 && (double)r.size > 1e8 * m->time_us &&
            !P->cputime && t->ndevs != 1 && !(m->busbw_GBps == 0)) {
            char what[96];
            snprintf(what, sizeof(what), "a time that %llu bytes can take (at most 100 TB/s)",
                     (unsigned long long)r.size);
            return nl_expected(P, tpos[i], what);
        }
    }
    /* the time and the algorithm bandwidth nccl-tests printed beside it
     * (size / time, two decimals) agree: a row whose time was changed by
     * hand, or one column of which went missing so that the next took its
     * place, would steer a fit with a time the run never had */
    for (int i = 0; i < 2; i++) {
        const cs_nccl_meas_t *m = i ? &r.ip : &r.oop;
        if (!tpos[i] || !m->present || P->cputime || !(m->time_us > 0) || r.size == 0 ||
            !isfinite(m->algbw_GBps))
            continue;
        /* the time as printed is rounded to its last decimal */
        const char *dot = memchr(tpos[i], '.', (size_t)(tend[i] - tpos[i]));
        double half = 0.5 * (t->time_ms ? 1000.0 : 1.0);
        for (const char *d = dot ? dot + 1 : tend[i]; d < tend[i] && isdigit((unsigned char)*d);
             d++)
            half /= 10;
        double lo = (double)r.size / ((m->time_us + half) * 1e3),
               hi = m->time_us > half ? (double)r.size / ((m->time_us - half) * 1e3) : HUGE_VAL;
        if (m->algbw_GBps < lo * 0.99 - 0.006 || m->algbw_GBps > hi * 1.01 + 0.006) {
            char what[200];
            snprintf(what, sizeof(what),
                     "a time that agrees with the row's size %llu B and algbw %.2f GB/s (about "
                     "%.4g %s; one of the three was changed)",
                     (unsigned long long)r.size, m->algbw_GBps,
                     m->algbw_GBps > 0 ? (double)r.size / (m->algbw_GBps * 1e3) /
                                             (t->time_ms ? 1000.0 : 1.0)
                                       : 0.0,
                     t->time_ms ? "ms" : "us");
            return nl_expected(P, tpos[i], what);
        }
    }
    if (cs_grow(&t->rows, &t->cap_rows, (size_t)t->nrows + 1, sizeof(*t->rows), 32))
        return nl_fail(P, CS_ERR_NOMEM, P->p, "out of memory");
    t->rows[t->nrows++] = r;
    return CS_OK;
}

int nl_closing(nl_parser_t *P, const char *s, int oob)
{
    cs_nccl_run_t *t = nl_table(P);
    const char *ts, *te;
    int st;
    if (t == NULL || P->state == NL_DONE)
        return CS_OK; /* not a table's: another program's line */
    if (P->pend_line) /* the run ended whole: the row that did not read is wrong */
        return nl_pending_error(P);
    s = nl_skip_blank(s, P->end);
    if (s == P->end || *s != ':')
        return nl_expected(P, s, "':'");
    nl_token(s + 1, P->end, &ts, &te);
    if (oob) {
        if ((st = nl_int(P, ts, te, &t->oob_values, "a count")) != CS_OK)
            return st;
        nl_token(te, P->end, &ts, &te);
        t->oob_failed = nl_starts(ts, te, "FAILED", 0);
        return CS_OK;
    }
    if ((st = nl_double(P, ts, te, &t->avg_busbw, "a bandwidth")) != CS_OK)
        return st;
    P->state = NL_DONE;
    return CS_OK;
}

/* Bytes of an element of nccl-tests' type names; 0 when unknown. */
static unsigned type_bytes(const char *t)
{
    static const struct {
        const char *n;
        unsigned b;
    } types[] = {{"int8", 1},    {"uint8", 1},    {"char", 1},   {"f8e4m3", 1}, {"f8e5m2", 1},
                 {"half", 2},    {"bfloat16", 2}, {"int32", 4},  {"uint32", 4}, {"int", 4},
                 {"float", 4},   {"int64", 8},    {"uint64", 8}, {"double", 8}};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (!strcmp(types[i].n, t))
            return types[i].b;
    return 0;
}

/* Whether no row checked its in-place results (#wrong N/A), as
 * sendrecv_perf prints them, and with `oop` also every row its out-of-place
 * ones: where the collectives that reduce check both or, with validation off
 * (-c 0), neither. */
static int unchecked_in_place(const cs_nccl_run_t *t, int oop)
{
    for (int i = 0; i < t->nrows; i++)
        if (!t->rows[i].oop.present || !t->rows[i].ip.present || t->rows[i].ip.wrong >= 0 ||
            (oop && t->rows[i].oop.wrong < 0))
            return 0;
    return 1;
}

/* From the columns: the operation (none, a reduction, or nothing: alltoall
 * of 2020-2022), the root, the bytes a row moves per element counted (1 for
 * allreduce, broadcast, reduce and sendrecv; the rank count where count is
 * per rank), and busbw / algbw (2(n-1)/n for allreduce, (n-1)/n for
 * reduce-scatter and allgather, 1 for sendrecv and hypercube), read on the
 * largest row (the least rounded).  Sendrecv prints an operation and no
 * root, as all-reduce does: on 2 ranks, where both have busbw = algbw, its
 * unchecked in-place results tell it.  Gather against scatter, and allgather
 * against alltoall in the layout of 2022 on, cannot be told apart. */
void nl_infer_coll(cs_nccl_run_t *t)
{
    if (t->nrows == 0)
        return;
    const cs_nccl_row_t *r = &t->rows[t->nrows - 1];
    int n = t->ndevs, reduces = r->redop[0] && strcmp(r->redop, "none") != 0;
    int rooted = t->has_root_col && r->root >= 0;
    unsigned b = type_bytes(r->type);
    uint64_t per = b && r->count ? r->size / ((uint64_t)b * r->count) : 0;
    double ratio = r->oop.algbw_GBps > 0 ? r->oop.busbw_GBps / r->oop.algbw_GBps : -1;
    int blocks = n > 1 && per == (uint64_t)n, one = fabs(ratio - 1) < 0.02;
    int part = n > 1 && fabs(ratio - (double)(n - 1) / n) < 0.02;
    cs_nccl_coll_t c = CS_NCCL_UNKNOWN;
    if (t->has_op_col && !r->redop[0])
        c = CS_NCCL_ALLTOALL;
    else if (reduces && rooted)
        c = CS_NCCL_REDUCE;
    else if (reduces && per == 1 && one && r->oop.algbw_GBps >= 1.0 && n >= 2 &&
             unchecked_in_place(t, n == 2))
        c = CS_NCCL_SENDRECV; /* sendrecv prints an operation too: busbw = algbw (read
                                 where 2 decimals cannot round a ratio to 1), which
                                 all-reduce's is only on 2 ranks, and its in-place
                                 results unchecked (on 2 ranks the out-of-place ones
                                 checked: all-reduce with validation off checks none) */
    else if (reduces)
        c = per == 1 ? CS_NCCL_ALL_REDUCE
            : blocks || part ? CS_NCCL_REDUCE_SCATTER
            : n > 1 && fabs(ratio - 2.0 * (n - 1) / n) < 0.02 ? CS_NCCL_ALL_REDUCE
                                                              : CS_NCCL_UNKNOWN;
    else if (rooted)
        c = per == 1 ? CS_NCCL_BROADCAST : CS_NCCL_UNKNOWN;
    else if (t->time_ms && !t->has_op_col && !t->has_root_col)
        c = CS_NCCL_ALL_GATHER; /* before 2019 the only collective without op and root */
    else if (per == 1 && one)
        c = CS_NCCL_SENDRECV;
    else if (blocks && one)
        c = CS_NCCL_HYPERCUBE;
    else if (blocks && part && !t->has_op_col)
        c = CS_NCCL_ALL_GATHER; /* 2019-2022: alltoall had an op column, allgather none */
    t->coll = c;
    t->coll_from = c == CS_NCCL_UNKNOWN ? "unknown" : "columns";
}
