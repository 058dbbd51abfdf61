/*
 * cs_verify.c - the verifier's driver and report, the matching check and
 * the deadlock explanation (see cs_verify.h for what is checked).
 *
 * Deadlock method: a step the graph could not execute is blocked by
 * something not executed: its first unexecuted dependency, else its
 * unexecuted FIFO predecessor, else (it is ready itself) its partner, which
 * then is not ready.  Following "blocked by" from every stuck step ends
 * either in a cycle (a deadlock, reported once with its steps in order) or
 * at an unmatched send/receive (already reported by the matching check; the
 * steps behind it get one "stuck" summary).  Each step is walked once.
 *
 * Passes: the symbolic execution of values (cs_verify_value.c) runs inside
 * the graph's construction, event by event as Kahn orders them, so the
 * steps are read while in cache; its findings are held in a second report
 * and stored after those of the matching, deadlock and race checks, the
 * order cs_verify.h promises.
 */
#include "cs_env.h"
#include "cs_mem.h"
#include "cs_verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cs_graph_int.h"
#include "cs_verify_int.h"

#define CS__NOIDX UINT32_MAX

/* ---- 1. matching ------------------------------------------------------ */

static void check_matching(cs__vctx_t *v)
{
    const cs_sched_t *s = v->s;
    const cs_graph_t *g = v->g;
    uint32_t k = cs_sched_block_chunks(s);
    char a[96], b[96], ra[64], rb[64];
    for (int r = 0; r < s->desc.nranks; r++) {
        const cs_rank_sched_t *rk = &s->ranks[r];
        for (uint32_t i = 0; i < rk->nsteps; i++) {
            const cs_step_t *st = &rk->steps[i];
            if (!cs_kind_is_comm(st->kind))
                continue;
            uint64_t p = g->partner[g->base[r] + i];
            if (p == CS_NONE) {
                int snd = st->kind == CS_STEP_SEND;
                cs__vfind(v, "unmatched", r, i, -1,
                          "rank %d %s: no matching %s: rank %d %s fewer messages %s rank %d on "
                          "channel %u than rank %d %s",
                          r, cs__vstep(s, r, i, a, sizeof(a)), snd ? "receive" : "send", st->peer,
                          snd ? "receives" : "sends", snd ? "from" : "to", r, st->chan, r,
                          snd ? "sends" : "receives");
                continue;
            }
            if (st->kind != CS_STEP_SEND)
                continue;
            int pr = st->peer;
            uint32_t pi = cs__graph_partner_step(g, st, p);
            const cs_step_t *rs = &s->ranks[pr].steps[pi];
            const cs_buffer_t *sb = &rk->bufs[st->src.buf], *db = &s->ranks[pr].bufs[rs->dst.buf];
            uint32_t sg = sb->base + st->src.off, dg = db->base + rs->dst.off;
            if (rs->dst.n != st->src.n || (sg != dg && sg % k != dg % k)) {
                int sz = rs->dst.n != st->src.n;
                cs__vfind(v, "size", pr, pi, sz ? -1 : (int64_t)dg,
                          "rank %d %s receives %s but the matched send, rank %d %s, sends %s: %s",
                          pr, cs__vstep(s, pr, pi, a, sizeof(a)),
                          cs__vrange(s, pr, rs->dst.buf, rs->dst.off, rs->dst.n, rb, sizeof(rb)),
                          r, cs__vstep(s, r, i, b, sizeof(b)),
                          cs__vrange(s, r, st->src.buf, st->src.off, st->src.n, ra, sizeof(ra)),
                          sz ? "the chunk counts differ" : "the chunk shapes differ");
            }
        }
    }
}

/* ---- 2. deadlock ------------------------------------------------------- */

enum { ST_STUCK = 0, ST_DONE_OK = 1, ST_ON_PATH = 2, ST_EXPLAINED = 3 };
enum { WHY_NONE, WHY_DEP, WHY_FIFO, WHY_PARTNER, WHY_SWITCH };

typedef struct {
    cs__vctx_t *v;
    uint8_t *state;
    uint32_t *prev;
    uint64_t *path;
    uint64_t nbehind_unmatched; /* stuck steps explained by an unmatched step */
    uint64_t first_behind;      /* one such step, for the summary */
} cs__dl_t;

static uint64_t blocker(cs__dl_t *d, uint64_t x, int *why)
{
    const cs_graph_t *g = d->v->g;
    int r;
    uint32_t i;
    cs_graph_locate(g, x, &r, &i);
    const cs_rank_sched_t *rk = &g->s->ranks[r];
    const uint32_t *dp = cs_step_deps(rk, &rk->steps[i]);
    for (uint32_t j = 0; j < rk->steps[i].ndeps; j++)
        if (d->state[g->base[r] + dp[j]] != ST_DONE_OK) {
            *why = WHY_DEP;
            return g->base[r] + dp[j];
        }
    uint32_t p = d->prev[x];
    if (p != CS__NOIDX && d->state[g->base[r] + p] != ST_DONE_OK) {
        *why = WHY_FIFO;
        return g->base[r] + p;
    }
    *why = g->partner[x] == CS_NONE ? WHY_NONE : WHY_PARTNER;
    if (g->swnext != NULL && rk->steps[i].kind == CS_STEP_SWITCH && g->partner[x] != CS_NONE) {
        /* ready itself: the next member of its operation (in a ring) is not */
        *why = WHY_SWITCH;
        return g->swnext[x] != CS_NONE ? g->swnext[x] : g->partner[x];
    }
    return g->partner[x];
}

static const char *why_verb(int why)
{
    return why == WHY_DEP       ? "depends on"
           : why == WHY_FIFO    ? "is queued behind"
           : why == WHY_SWITCH  ? "waits, in its switch operation, for"
                                : "needs its partner";
}

/* The whole cycle, one step a line ("  rank 2 step 2 (send to 0), which
 * depends on"), the first step again at the end; cycles longer than
 * 2 * CYCLE_LINES_HALF steps list their two ends.  NULL when out of memory
 * (the one-line message still says what is wrong). */
#define CYCLE_LINES_HALF 64
static char *cycle_lines(cs__dl_t *d, const uint64_t *cyc, uint64_t n, uint64_t first)
{
    const cs_graph_t *g = d->v->g;
    size_t cap = 160 * (size_t)(n < 2 * CYCLE_LINES_HALF ? n + 2 : 2 * CYCLE_LINES_HALF + 3);
    char *out = malloc(cap), sd[96];
    if (!out)
        return NULL;
    size_t len = (size_t)snprintf(out, cap, "  cycle of %llu steps:\n", (unsigned long long)n);
    int why = WHY_NONE;
    for (uint64_t t = 0; t <= n; t++) {
        int r;
        uint32_t i;
        cs_graph_locate(g, cyc[(first + t) % n], &r, &i);
        int shown = n <= 2 * CYCLE_LINES_HALF || t < CYCLE_LINES_HALF || t + CYCLE_LINES_HALF > n;
        if (t < n)
            blocker(d, cyc[(first + t) % n], &why);
        if (!shown) {
            if (t == CYCLE_LINES_HALF)
                len += (size_t)snprintf(out + len, cap - len, "    ... %llu more steps ...\n",
                                        (unsigned long long)(n - 2 * CYCLE_LINES_HALF + 1));
            continue;
        }
        len += (size_t)snprintf(out + len, cap - len, "    rank %d %s%s%s%s\n", r,
                                cs__vstep(g->s, r, i, sd, sizeof(sd)), t < n ? ", which " : "",
                                t < n ? why_verb(why) : "", t == n ? " (the first again)" : "");
        if (len >= cap)
            break;
    }
    return out;
}

/* "ranks 0,2: deadlock: rank 0 step 1 (rrecv from 2) needs its partner rank
 * 2 step 2 (send to 0), which depends on rank 2 step 1 (rrecv from 0), which
 * needs its partner rank 0 step 2 (send to 2), which depends on the first";
 * long cycles are shortened in the middle. */
static void report_cycle(cs__dl_t *d, const uint64_t *cyc, uint64_t n)
{
    const cs_graph_t *g = d->v->g;
    const cs_sched_t *s = g->s;
    uint64_t first = 0; /* start at the smallest id for a stable message */
    for (uint64_t j = 1; j < n; j++)
        if (cyc[j] < cyc[first])
            first = j;
    char msg[512], ranks[64] = "", sd[96];
    size_t len = 0, rl = 0;
    int r0 = -1, prev_r = -1, why = WHY_NONE;
    uint32_t i0 = 0;
    for (uint64_t t = 0; t < n; t++) {
        int r;
        uint32_t i;
        cs_graph_locate(g, cyc[(first + t) % n], &r, &i);
        if (t == 0) {
            r0 = r;
            i0 = i;
        }
        if (r != prev_r && (t == 0 || r != r0)) {
            if (rl + 12 < sizeof(ranks))
                rl += (size_t)snprintf(ranks + rl, sizeof(ranks) - rl, "%s%d", rl ? "," : "", r);
            else if (!strstr(ranks, "..."))
                rl += (size_t)snprintf(ranks + rl, sizeof(ranks) - rl, ",...");
        }
        prev_r = r;
        if (t == 0)
            len += (size_t)snprintf(msg, sizeof(msg), "rank %d %s", r,
                                    cs__vstep(s, r, i, sd, sizeof(sd)));
        else if (len < 90)
            len += (size_t)snprintf(msg + len, sizeof(msg) - len, " %s rank %d %s%s",
                                    why_verb(why), r, cs__vstep(s, r, i, sd, sizeof(sd)),
                                    ", which");
        else if (t + 1 == n)
            len += (size_t)snprintf(msg + len, sizeof(msg) - len,
                                    " ... (%llu steps), the last",
                                    (unsigned long long)n);
        blocker(d, cyc[(first + t) % n], &why);
    }
    snprintf(msg + len, sizeof(msg) - len, " %s the first", why_verb(why));
    if (cs__vfind(d->v, "deadlock", r0, i0, -1, "ranks %s: deadlock: %s", ranks, msg))
        d->v->rep->findings[d->v->rep->n - 1].detail = cycle_lines(d, cyc, n, first);
}

/* Walk "blocked by" from x; mark everything walked as explained. */
static void walk(cs__dl_t *d, uint64_t x)
{
    uint64_t n = 0;
    uint64_t cur = x;
    int why;
    for (;;) {
        if (d->state[cur] == ST_EXPLAINED)
            break;
        if (d->state[cur] == ST_ON_PATH) {
            uint64_t j = n;
            while (j > 0 && d->path[j - 1] != cur)
                j--;
            report_cycle(d, d->path + j - 1, n - j + 1);
            break;
        }
        d->state[cur] = ST_ON_PATH;
        d->path[n++] = cur;
        uint64_t nx = blocker(d, cur, &why);
        if (why == WHY_NONE) { /* an unmatched send/receive: reported already */
            if (n > 1 && d->nbehind_unmatched++ == 0)
                d->first_behind = x;
            break;
        }
        cur = nx;
    }
    for (uint64_t j = 0; j < n; j++)
        d->state[d->path[j]] = ST_EXPLAINED;
}

static int check_deadlock(cs__vctx_t *v)
{
    const cs_graph_t *g = v->g;
    if (g->nstuck == 0)
        return CS_OK;
    cs__dl_t d = {.v = v};
    int st = CS_ERR_NOMEM;
    d.state = calloc(g->nsteps, 1);
    d.prev = malloc(g->nsteps * sizeof(*d.prev));
    d.path = malloc(g->nstuck * sizeof(*d.path));
    if (!d.state || !d.prev || !d.path || cs__graph_fifo_prev(g, d.prev) != CS_OK)
        goto out;
    for (uint64_t e = 0; e < g->norder; e++) {
        uint64_t x = g->order[e];
        d.state[x] = ST_DONE_OK;
        if (g->partner[x] == x) /* a switch operation: all its members */
            for (uint64_t m = g->swnext[x]; m != CS_NONE; m = g->swnext[m])
                d.state[m] = ST_DONE_OK;
        else if (g->partner[x] != CS_NONE)
            d.state[g->partner[x]] = ST_DONE_OK;
    }
    for (uint64_t x = 0; x < g->nsteps; x++)
        if (d.state[x] == ST_STUCK)
            walk(&d, x);
    if (d.nbehind_unmatched > 0) {
        int r;
        uint32_t i;
        char sd[96];
        cs_graph_locate(g, d.first_behind, &r, &i);
        cs__vfind(v, "stuck", r, i, -1,
                  "rank %d %s and %llu other steps never run: they wait, directly or not, for "
                  "an unmatched send or receive",
                  r, cs__vstep(v->s, r, i, sd, sizeof(sd)),
                  (unsigned long long)d.nbehind_unmatched - 1);
    }
    st = CS_OK;
out:
    free(d.path);
    free(d.prev);
    free(d.state);
    return st;
}

/* ---- driver ------------------------------------------------------------ */

/* The verifier's state grows with every chunk slot of every rank (one value
 * each) and every step (graph arrays): estimate it before allocating, so a
 * schedule too large for this machine is refused with a message instead of
 * the process being killed by the kernel half-way. */
static uint64_t mem_estimate(const cs_sched_t *s)
{
    uint64_t slots = 0;
    for (int r = 0; r < s->desc.nranks; r++)
        for (uint16_t b = 0; b < s->ranks[r].nbufs; b++)
            slots += s->ranks[r].bufs[b].nchunks;
    return slots * sizeof(uint64_t) + cs_sched_total_steps(s) * 48;
}

/* CS_VERIFY_MAX_MEM ("8G", "512M", "64K", bytes) or half the physical memory. */
static uint64_t mem_limit(void)
{
    uint64_t v = cs_mem_parse(cs_env_get("CS_VERIFY_MAX_MEM"));
    if (v > 0)
        return v;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz / 2 : UINT64_MAX;
}

int cs_verify(const cs_sched_t *s, const cs_verify_opts_t *opts, cs_verify_report_t *rep,
              cs_err_t *err)
{
    memset(rep, 0, sizeof(*rep));
    if (s == NULL || cs_sched_status(s) != CS_OK)
        return cs_err_set(err, CS_ERR_INVAL, "cannot verify a schedule with a builder error: %s",
                          s ? s->err.msg : "no schedule");
    uint64_t need = mem_estimate(s), limit = mem_limit();
    if (need > limit)
        return cs_err_set(err, CS_ERR_RANGE,
                          "schedule too large to verify here: about %.0f MiB of verifier state "
                          "(%d ranks x their chunk windows, %llu steps) over the limit of %.0f MiB "
                          "(half the physical memory, or CS_VERIFY_MAX_MEM); verify the same "
                          "algorithm at a smaller scale",
                          need / 1048576.0, s->desc.nranks,
                          (unsigned long long)cs_sched_total_steps(s), limit / 1048576.0);
    uint32_t max = opts && opts->max_findings ? opts->max_findings : 20;
    rep->findings = calloc(max, sizeof(*rep->findings));
    if (rep->findings == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory for the verifier's report");
    /* The values run while the graph is built (cs__graph_init_ev); their
     * findings wait in `vrep` to be stored after those of the checks that
     * come before them. */
    cs_graph_t g = {0};
    cs_verify_report_t vrep = {0};
    cs__vctx_t v = {.s = s, .g = &g, .rep = rep, .max = max};
    cs__vctx_t vv = {.s = s, .g = &g, .rep = &vrep, .max = max};
    cs__val_t *val = NULL;
    int st = CS_ERR_NOMEM;
    vrep.findings = calloc(max, sizeof(*vrep.findings));
    if (vrep.findings == NULL || cs__values_create(&vv, &val) != CS_OK)
        goto out;
    st = cs__graph_init_ev(&g, s, cs__values_event, val, err);
    if (st != CS_OK) {
        cs__values_destroy(val);
        cs_verify_report_fini(&vrep);
        return st; /* err says why */
    }
    check_matching(&v);
    st = s->nswitch > 0 ? cs__verify_switch(&v) : CS_OK;
    if (st == CS_OK)
        st = check_deadlock(&v);
    if (st == CS_OK)
        st = cs__verify_races(&v);
    if (st == CS_OK)
        st = cs__values_finish(val);
    for (uint32_t i = 0; st == CS_OK && i < vrep.n && rep->n < max; i++) {
        rep->findings[rep->n++] = vrep.findings[i];
        vrep.findings[i].detail = NULL; /* moved */
    }
    rep->total += vrep.total;
out:
    cs_graph_fini(&g);
    cs__values_destroy(val);
    cs_verify_report_fini(&vrep);
    if (st != CS_OK)
        return cs_err_set(err, st, "out of memory verifying a schedule of %llu steps",
                          (unsigned long long)cs_sched_total_steps(s));
    if (rep->total > 0)
        return cs_err_set(err, CS_ERR_VERIFY, "%llu finding%s; first: %s: %s",
                          (unsigned long long)rep->total, rep->total > 1 ? "s" : "",
                          rep->findings[0].kind, rep->findings[0].msg);
    return CS_OK;
}

void cs_verify_report_fini(cs_verify_report_t *rep)
{
    if (rep == NULL)
        return;
    for (uint32_t i = 0; rep->findings && i < rep->n; i++)
        free(rep->findings[i].detail);
    free(rep->findings);
    memset(rep, 0, sizeof(*rep));
}
