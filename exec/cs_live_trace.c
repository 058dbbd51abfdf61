/*
 * cs_live_trace.c - traces of live runs (contract in cs_live_trace.h).
 *
 * open:    allgather {hostname, network namespace, given?}; every rank
 *          derives the same host table; clock alignment over the transport;
 *          rank 0 opens the trace session; all agree on the outcome.
 * record:  allgather {aligned run start, n, (t_start, t_data, t_end) x n}
 *          padded to the longest rank; rank 0 turns it into step records,
 *          matches sends with receives (sorted by (src, dst, channel), then
 *          schedule order), measures tier bandwidths, interns one link per
 *          rank pair and feeds the transfers; all agree on the outcome.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cs_live_trace.h"
#include "cs_log.h"

#define HOST_MAX 64
#define ALIGN_ROUNDS 32
#define BW_MIN_BYTES (64u * 1024u)

typedef struct host_rec {
    char name[HOST_MAX];
    uint64_t netns;
    int32_t given, pad_;
} host_rec_t;

struct cs_live_trace {
    cs_live_trace_config_t cfg;
    cs_boot_t *boot;
    const cs_sched_t *s;
    cs_dtype_t dt;
    int rank, nranks, nhosts;
    int *host_of;              /* rank -> host index */
    char (*host_name)[HOST_MAX + 16];
    char hosts[256];
    int64_t offset_ns;
    uint32_t maxn;             /* most steps of any rank */
    cs_trace_session_t *sess;  /* rank 0 */
    char dir[4096];
    char model[32];
};

static int gather_hosts(cs_live_trace_t *lt, const char *given, cs_err_t *err)
{
    host_rec_t mine, *all = calloc((size_t)lt->nranks, sizeof(mine));
    lt->host_of = calloc((size_t)lt->nranks, sizeof(int));
    lt->host_name = calloc((size_t)lt->nranks, sizeof(*lt->host_name));
    if (!all || !lt->host_of || !lt->host_name) {
        free(all);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    }
    memset(&mine, 0, sizeof(mine));
    struct stat sb;
    if (given && *given) {
        snprintf(mine.name, sizeof(mine.name), "%s", given);
        mine.given = 1;
    } else {
        if (gethostname(mine.name, sizeof(mine.name) - 1) != 0)
            snprintf(mine.name, sizeof(mine.name), "localhost");
        if (stat("/proc/self/ns/net", &sb) == 0)
            mine.netns = (uint64_t)sb.st_ino;
    }
    int st = cs_boot_allgather(lt->boot, &mine, sizeof(mine), all, err);
    if (st != CS_OK) {
        free(all);
        return st;
    }
    /* identity = (name, netns); hosts numbered in order of first rank */
    int *first = calloc((size_t)lt->nranks, sizeof(int));
    if (!first) {
        free(all);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    }
    lt->nhosts = 0;
    for (int r = 0; r < lt->nranks; r++) {
        all[r].name[HOST_MAX - 1] = 0;
        int h = 0;
        while (h < lt->nhosts && !(strcmp(all[first[h]].name, all[r].name) == 0 &&
                                   all[first[h]].netns == all[r].netns))
            h++;
        if (h == lt->nhosts)
            first[lt->nhosts++] = r;
        lt->host_of[r] = h;
    }
    for (int h = 0; h < lt->nhosts; h++) {
        int same = 0, k = 0; /* hosts sharing this name, and this one's number among them */
        for (int g = 0; g < lt->nhosts; g++)
            if (strcmp(all[first[g]].name, all[first[h]].name) == 0) {
                same++;
                if (g < h)
                    k++;
            }
        if (same > 1)
            snprintf(lt->host_name[h], sizeof(lt->host_name[h]), "%s#%d", all[first[h]].name,
                     k + 1);
        else
            snprintf(lt->host_name[h], sizeof(lt->host_name[h]), "%s", all[first[h]].name);
    }
    size_t len = 0;
    for (int h = 0; h < lt->nhosts && len < sizeof(lt->hosts); h++) {
        int cnt = 0;
        for (int r = 0; r < lt->nranks; r++)
            cnt += lt->host_of[r] == h;
        int w = snprintf(lt->hosts + len, sizeof(lt->hosts) - len, "%s%s x%d", h ? ", " : "",
                         lt->host_name[h], cnt);
        len += w > 0 ? (size_t)w : 0;
    }
    free(first);
    free(all);
    return CS_OK;
}

int cs_live_trace_open(const cs_live_trace_config_t *cfg, cs_boot_t *b, cs_tp_t *tp,
                       const cs_sched_t *s, cs_dtype_t dt, cs_live_trace_t **out,
                       cs_err_t *err)
{
    cs_live_trace_t *lt = calloc(1, sizeof(*lt));
    if (!lt)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    lt->cfg = *cfg;
    snprintf(lt->dir, sizeof(lt->dir), "%s", cfg->dir ? cfg->dir : "");
    snprintf(lt->model, sizeof(lt->model), "%s", cfg->model ? cfg->model : "live");
    lt->cfg.dir = lt->dir;
    lt->cfg.host = NULL; /* the caller's strings are not kept */
    lt->cfg.model = NULL;
    lt->boot = b;
    lt->s = s;
    lt->dt = dt;
    lt->rank = cs_boot_rank(b);
    lt->nranks = cs_boot_size(b);
    for (int r = 0; r < s->desc.nranks; r++)
        lt->maxn = s->ranks[r].nsteps > lt->maxn ? s->ranks[r].nsteps : lt->maxn;
    int st = gather_hosts(lt, cfg->host, err);
    if (st == CS_OK)
        st = cs_engine_clock_align(tp, ALIGN_ROUNDS, cfg->timeout_s, &lt->offset_ns, err);
    if (st == CS_OK)
        CS_INFO("exec", "rank %d: clock offset to rank 0: %lld ns, host %s", lt->rank,
                (long long)lt->offset_ns, lt->host_name[lt->host_of[lt->rank]]);
    if (st == CS_OK && lt->rank == 0)
        st = cs_trace_session_open(lt->dir, &cfg->opts, cfg->ninstances, &lt->sess, err);
    cs_err_t e2;
    cs_err_clear(&e2);
    int ast = cs_boot_agree(b, st, "opening the trace", &e2);
    if (st == CS_OK && ast != CS_OK)
        st = cs_err_set(err, ast, "%s", e2.msg);
    if (st != CS_OK) {
        cs_live_trace_close(lt);
        return st;
    }
    *out = lt;
    return CS_OK;
}

void cs_live_trace_close(cs_live_trace_t *lt)
{
    if (!lt)
        return;
    cs_trace_session_close(lt->sess);
    free(lt->host_of);
    free(lt->host_name);
    free(lt);
}

int64_t cs_live_trace_offset_ns(const cs_live_trace_t *lt)
{
    return lt->offset_ns;
}

const char *cs_live_trace_hosts(const cs_live_trace_t *lt)
{
    return lt->hosts;
}

int cs_live_trace_nhosts(const cs_live_trace_t *lt)
{
    return lt->nhosts;
}

/* ---- record --------------------------------------------------------------- */

typedef struct rank_times {
    int64_t t0;   /* aligned run start, ns */
    uint32_t n, pad_;
    cs_step_time_t t[]; /* maxn entries */
} rank_times_t;

typedef struct comm_rec {
    uint64_t key; /* src rank << 40 | dst rank << 16 | channel */
    uint32_t is_send, rank, idx, pad_;
} comm_rec_t;

static int comm_cmp(const void *x, const void *y)
{
    const comm_rec_t *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->is_send != b->is_send)
        return a->is_send < b->is_send ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

typedef struct xfer {
    int src, dst;
    uint64_t bytes;
    double start, end;
} xfer_t;

static uint64_t step_bytes(const cs_live_trace_t *lt, const cs_rank_sched_t *rs,
                           const cs_step_t *x, uint64_t count)
{
    if (x->kind == CS_STEP_NOP)
        return 0;
    const cs_range_t *r = x->kind == CS_STEP_SEND ? &x->src : &x->dst;
    return cs_range_elems(lt->s, &rs->bufs[r->buf], count, r->off, r->n) * cs_dtype_size(lt->dt);
}

static const rank_times_t *times_of(const char *all, size_t slot, int r)
{
    return (const rank_times_t *)(all + (size_t)r * slot);
}

/* Transfers of the run: matched sends and receives, in seconds from base. */
static int build_xfers(const cs_live_trace_t *lt, const char *all, size_t slot, int64_t base,
                       uint64_t count, xfer_t **out, uint32_t *nout)
{
    uint64_t ncomm = 0;
    for (int r = 0; r < lt->nranks; r++)
        for (uint32_t i = 0; i < lt->s->ranks[r].nsteps; i++) {
            int k = lt->s->ranks[r].steps[i].kind;
            ncomm += k == CS_STEP_SEND || k == CS_STEP_RECV || k == CS_STEP_RRECV;
        }
    comm_rec_t *c = malloc((ncomm ? ncomm : 1) * sizeof(*c));
    xfer_t *x = malloc((ncomm ? ncomm : 1) * sizeof(*x));
    if (!c || !x) {
        free(c);
        free(x);
        return CS_ERR_NOMEM;
    }
    uint64_t m = 0;
    for (int r = 0; r < lt->nranks; r++)
        for (uint32_t i = 0; i < lt->s->ranks[r].nsteps; i++) {
            const cs_step_t *st = &lt->s->ranks[r].steps[i];
            if (st->kind != CS_STEP_SEND && st->kind != CS_STEP_RECV && st->kind != CS_STEP_RRECV)
                continue;
            int send = st->kind == CS_STEP_SEND;
            uint64_t src = (uint64_t)(send ? r : st->peer), dst = (uint64_t)(send ? st->peer : r);
            c[m++] = (comm_rec_t){(src << 40) | (dst << 16) | st->chan, (uint32_t)send,
                                  (uint32_t)r, i, 0};
        }
    qsort(c, m, sizeof(*c), comm_cmp);
    uint32_t nx = 0;
    for (uint64_t j = 0; j < m;) {
        uint64_t end = j, nr;
        while (end < m && c[end].key == c[j].key)
            end++;
        for (nr = j; nr < end && !c[nr].is_send; nr++)
            ;
        uint64_t nrecv = nr - j, nsend = end - nr;
        for (uint64_t q = 0; q < nrecv && q < nsend; q++) {
            const comm_rec_t *rv = &c[j + q], *sd = &c[nr + q];
            const rank_times_t *ts = times_of(all, slot, (int)sd->rank);
            const rank_times_t *tr = times_of(all, slot, (int)rv->rank);
            const cs_rank_sched_t *rs = &lt->s->ranks[sd->rank];
            double s_post = (double)(ts->t0 + (int64_t)ts->t[sd->idx].t_start - base) * 1e-9;
            double r_post = (double)(tr->t0 + (int64_t)tr->t[rv->idx].t_start - base) * 1e-9;
            double r_data = (double)(tr->t0 + (int64_t)tr->t[rv->idx].t_data - base) * 1e-9;
            xfer_t *t = &x[nx++];
            t->src = (int)sd->rank;
            t->dst = (int)rv->rank;
            t->bytes = step_bytes(lt, rs, &rs->steps[sd->idx], count);
            t->start = s_post > r_post ? s_post : r_post;
            t->end = r_data;
            if (t->start > t->end)
                t->start = t->end; /* clock alignment error: keep the arrival */
        }
        j = end;
    }
    free(c);
    *out = x;
    *nout = nx;
    return CS_OK;
}

/* The bandwidth of a tier's links (see the header). */
static double tier_bw(const xfer_t *x, uint32_t n, const cs_live_trace_t *lt, int network,
                      double given)
{
    if (given > 0)
        return given;
    double big = 0, any = 0;
    for (uint32_t i = 0; i < n; i++) {
        int net = lt->host_of[x[i].src] != lt->host_of[x[i].dst];
        double d = x[i].end - x[i].start;
        if (net != network || d <= 0 || x[i].bytes == 0)
            continue;
        double rate = (double)x[i].bytes / d;
        any = rate > any ? rate : any;
        if (x[i].bytes >= BW_MIN_BYTES)
            big = rate > big ? rate : big;
    }
    return big > 0 ? big : any > 0 ? any : 1e9;
}

/* Rank 0: one trace instance from everyone's times. */
static int write_instance(cs_live_trace_t *lt, const char *all, size_t slot, uint64_t bytes,
                          uint64_t count, cs_err_t *err)
{
    int64_t base = INT64_MAX, tend = INT64_MIN;
    for (int r = 0; r < lt->nranks; r++) {
        const rank_times_t *t = times_of(all, slot, r);
        base = t->t0 < base ? t->t0 : base;
        for (uint32_t i = 0; i < t->n; i++)
            tend = t->t0 + (int64_t)t->t[i].t_end > tend ? t->t0 + (int64_t)t->t[i].t_end : tend;
    }
    if (tend < base)
        tend = base;
    cs_trace_meta_t m;
    memset(&m, 0, sizeof(m));
    m.backend = CS_TRACE_LIVE;
    snprintf(m.platform, sizeof(m.platform), "%.63s", lt->hosts);
    snprintf(m.coll, sizeof(m.coll), "%s", cs_coll_name(lt->s->desc.coll));
    snprintf(m.algo, sizeof(m.algo), "%s", lt->s->algo[0] ? lt->s->algo : "schedule");
    snprintf(m.model, sizeof(m.model), "%s", lt->model);
    m.bytes = bytes;
    m.nranks = lt->nranks;
    cs_trace_t *t = NULL;
    int st = cs_trace_session_begin(lt->sess, &m, 0.0, NULL, NULL, &t, err);
    if (st != CS_OK)
        return st;
    for (int r = 0; r < lt->nranks && st == CS_OK; r++) {
        const rank_times_t *rt = times_of(all, slot, r);
        const cs_rank_sched_t *rs = &lt->s->ranks[r];
        for (uint32_t i = 0; i < rt->n && st == CS_OK; i++) {
            const cs_step_t *x = &rs->steps[i];
            int comm = x->kind == CS_STEP_SEND || x->kind == CS_STEP_RECV ||
                       x->kind == CS_STEP_RRECV;
            cs_trace_step_t ts = {r, i, x->kind, comm ? x->peer : -1,
                                  step_bytes(lt, rs, x, count),
                                  (double)(rt->t0 + (int64_t)rt->t[i].t_start - base) * 1e-9,
                                  (double)(rt->t0 + (int64_t)rt->t[i].t_end - base) * 1e-9};
            st = cs_trace_add_step(t, &ts);
        }
    }
    xfer_t *x = NULL;
    uint32_t nx = 0;
    int32_t *link = NULL;
    if (st == CS_OK && (st = build_xfers(lt, all, slot, base, count, &x, &nx)) != CS_OK)
        cs_err_set(err, st, "trace: out of memory");
    size_t np = (size_t)lt->nranks * (size_t)lt->nranks;
    if (st == CS_OK && !(link = malloc(np * sizeof(*link))))
        st = cs_err_set(err, CS_ERR_NOMEM, "trace: out of memory");
    if (st == CS_OK) {
        memset(link, 0xff, np * sizeof(*link));
        double bw[2] = {tier_bw(x, nx, lt, 0, lt->cfg.bw_host),
                        tier_bw(x, nx, lt, 1, lt->cfg.bw_network)};
        for (uint32_t i = 0; i < nx && st == CS_OK; i++) {
            size_t p = (size_t)x[i].src * (size_t)lt->nranks + (size_t)x[i].dst;
            if (link[p] < 0) {
                int hs = lt->host_of[x[i].src], hd = lt->host_of[x[i].dst];
                char name[2 * HOST_MAX + 64];
                snprintf(name, sizeof(name), "%s:r%d->%s:r%d", lt->host_name[hs], x[i].src,
                         lt->host_name[hd], x[i].dst);
                uint32_t id = 0;
                st = cs_trace_link(t, name, hs == hd ? "host" : "network", bw[hs != hd], 0.0,
                                   &id);
                link[p] = (int32_t)id;
            }
            if (st == CS_OK) {
                uint32_t id = (uint32_t)link[p];
                st = cs_trace_add_xfer_links(t, &id, 1, x[i].bytes, x[i].start, x[i].end);
            }
        }
    }
    free(x);
    free(link);
    if (st != CS_OK && !err->msg[0])
        cs_err_set(err, st, "trace: recording failed: %s", cs_status_str(st));
    if (st == CS_OK)
        st = cs_trace_session_end(lt->sess, (double)(tend - base) * 1e-9, err);
    return st;
}

int cs_live_trace_record(cs_live_trace_t *lt, cs_engine_t *e, uint64_t bytes, uint64_t count,
                         cs_err_t *err)
{
    size_t slot = sizeof(rank_times_t) + (size_t)lt->maxn * sizeof(cs_step_time_t);
    rank_times_t *mine = calloc(1, slot);
    char *all = calloc((size_t)lt->nranks, slot);
    if (!mine || !all) {
        free(mine);
        free(all);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    }
    uint32_t n = 0;
    const cs_step_time_t *t = cs_engine_step_times(e, &n);
    mine->t0 = (int64_t)cs_engine_run_start_ns(e) + lt->offset_ns;
    mine->n = n < lt->maxn ? n : lt->maxn;
    memcpy(mine->t, t, mine->n * sizeof(*t));
    int st = cs_boot_allgather(lt->boot, mine, slot, all, err);
    if (st == CS_OK && lt->rank == 0)
        st = write_instance(lt, all, slot, bytes, count, err);
    free(mine);
    free(all);
    cs_err_t e2;
    cs_err_clear(&e2);
    int ast = cs_boot_agree(lt->boot, st, "writing the trace", &e2);
    if (st == CS_OK && ast != CS_OK)
        st = cs_err_set(err, ast, "%s", e2.msg);
    return st;
}

int cs_live_trace_commit(cs_live_trace_t *lt, cs_err_t *err)
{
    if (lt->rank != 0)
        return CS_OK;
    return cs_trace_session_commit(lt->sess, err);
}
