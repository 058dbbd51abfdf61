/*
 * cs_graph.c - message matching and one global execution order (see
 * cs_graph.h for the contract).
 *
 * Method, all in O(N log n) time for N steps and n steps per rank, with a
 * fixed number of arrays allocated once (no per-step allocation).  At
 * 10^7 steps the cost is memory traffic, so each rank's steps are read in
 * one pass while they are in cache, and later phases avoid touching them:
 *
 *  1. Per rank, one pass: its sends are listed sorted by (peer, channel,
 *     index) and its receives likewise (generators usually emit them in
 *     order, so the sort is skipped when a linear scan finds the list
 *     sorted); consecutive entries with the same (peer, channel) form one
 *     FIFO queue, recorded as a run.  The same pass counts in-degrees (own
 *     dependencies + 1 for a FIFO predecessor that is not already a
 *     dependency) and fills the rank's CSR of successors.
 *  2. Matching, on the runs alone: for each send queue (a -> b, c), the
 *     receive queue (b <- a, c) is found by binary search among rank b's
 *     runs and the two are paired element by element; the excess of either
 *     is unmatched and gets one more in-degree (it never runs).
 *  3. Order.  Kahn's algorithm.  A step whose in-degree reaches zero is
 *     "released"; a non-communication step is then an event, a matched pair
 *     becomes one event when its second half is released, an unmatched one
 *     never runs.  Each rank has a FIFO ready list (its local events and
 *     the pairs it sends); ranks with work wait in a FIFO of ranks, and a
 *     rank's list is drained completely before the next rank's.  Compared
 *     with breadth-first rounds over all ranks this touches each rank's
 *     arrays in long runs instead of one step per rank per round (at
 *     P = 1536 the rounds were bound by cache misses), and needs no sorting.
 */
#include "cs_graph.h"

#include <stdlib.h>
#include <string.h>

#include "cs_graph_int.h"

#define CS__NOIDX UINT32_MAX

typedef struct {
    uint32_t peer, chan, idx;
} cs__qkey_t;

static int qkey_cmp(const void *pa, const void *pb)
{
    const cs__qkey_t *a = pa, *b = pb;
    if (a->peer != b->peer)
        return a->peer < b->peer ? -1 : 1;
    if (a->chan != b->chan)
        return a->chan < b->chan ? -1 : 1;
    return a->idx < b->idx ? -1 : (a->idx > b->idx);
}

static int is_send(const cs_step_t *st)
{
    return st->kind == CS_STEP_SEND;
}

static int is_recv(const cs_step_t *st)
{
    return st->kind == CS_STEP_RECV || st->kind == CS_STEP_RRECV;
}

/* Sort keys[0..n) by (peer, chan, idx) unless already sorted; write the
 * indices to q. */
static void sort_queue(cs__qkey_t *keys, uint32_t n, uint32_t *q)
{
    int sorted = 1;
    for (uint32_t i = 1; i < n && sorted; i++)
        if (qkey_cmp(&keys[i - 1], &keys[i]) > 0)
            sorted = 0;
    if (!sorted)
        qsort(keys, n, sizeof(*keys), qkey_cmp);
    for (uint32_t i = 0; i < n; i++)
        q[i] = keys[i].idx;
}

/* Channel queues of every rank: q[base[r] ..] holds rank r's sends sorted,
 * then its receives sorted; nsend[r] and ncomm[r] count them.  `keys` is
 * scratch of max-steps-per-rank entries. */
static void build_queues(const cs_graph_t *g, uint32_t *q, uint32_t *nsend, uint32_t *ncomm,
                         cs__qkey_t *keys)
{
    const cs_sched_t *s = g->s;
    for (int r = 0; r < s->desc.nranks; r++) {
        const cs_rank_sched_t *rk = &s->ranks[r];
        uint32_t *qr = q + g->base[r];
        uint32_t n = 0;
        for (uint32_t i = 0; i < rk->nsteps; i++)
            if (is_send(&rk->steps[i]))
                keys[n++] = (cs__qkey_t){(uint32_t)rk->steps[i].peer, rk->steps[i].chan, i};
        sort_queue(keys, n, qr);
        nsend[r] = n;
        n = 0;
        for (uint32_t i = 0; i < rk->nsteps; i++)
            if (is_recv(&rk->steps[i]))
                keys[n++] = (cs__qkey_t){(uint32_t)rk->steps[i].peer, rk->steps[i].chan, i};
        sort_queue(keys, n, qr + nsend[r]);
        ncomm[r] = nsend[r] + n;
    }
}

static uint32_t max_rank_steps(const cs_sched_t *s)
{
    uint32_t m = 0;
    for (int r = 0; r < s->desc.nranks; r++)
        if (s->ranks[r].nsteps > m)
            m = s->ranks[r].nsteps;
    return m;
}

/* Same queue: same (peer, chan) (callers only compare within one list). */
static int same_queue(const cs_step_t *a, const cs_step_t *b)
{
    return a->peer == b->peer && a->chan == b->chan;
}

/* Walk every queue of every rank and call back for consecutive elements. */
static void fifo_links(const cs_graph_t *g, const uint32_t *q, const uint32_t *nsend,
                       const uint32_t *ncomm, uint32_t *prev, uint32_t *next)
{
    const cs_sched_t *s = g->s;
    for (int r = 0; r < s->desc.nranks; r++) {
        const cs_rank_sched_t *rk = &s->ranks[r];
        const uint32_t *qr = q + g->base[r];
        for (uint32_t j = 1; j < ncomm[r]; j++) {
            if (j == nsend[r])
                continue; /* first receive: no predecessor among sends */
            uint32_t a = qr[j - 1], b = qr[j];
            if (!same_queue(&rk->steps[a], &rk->steps[b]))
                continue;
            if (prev != NULL)
                prev[g->base[r] + b] = a;
            if (next != NULL)
                next[g->base[r] + a] = b;
        }
    }
}

int cs__graph_fifo_prev(const cs_graph_t *g, uint32_t *prev)
{
    const cs_sched_t *s = g->s;
    int P = s->desc.nranks;
    uint32_t *q = malloc((g->nsteps ? g->nsteps : 1) * sizeof(*q));
    uint32_t *cnt = malloc(2 * (size_t)P * sizeof(*cnt));
    uint32_t m = max_rank_steps(s);
    cs__qkey_t *keys = malloc((m ? m : 1) * sizeof(*keys));
    int st = CS_ERR_NOMEM;
    if (q == NULL || cnt == NULL || keys == NULL)
        goto out;
    build_queues(g, q, cnt, cnt + P, keys);
    for (uint64_t i = 0; i < g->nsteps; i++)
        prev[i] = CS__NOIDX;
    fifo_links(g, q, cnt, cnt + P, prev, NULL);
    st = CS_OK;
out:
    free(keys);
    free(cnt);
    free(q);
    return st;
}

/* A rank's ready list: a growable ring of local step indices (short in
 * practice: a rank rarely has more than a few events ready at once). */
typedef struct {
    uint32_t *v;
    uint32_t head, len, cap; /* cap is 0 or a power of two */
} cs__rlist_t;

static int rl_push(cs__rlist_t *l, uint32_t i)
{
    if (l->len == l->cap) {
        uint32_t cap = l->cap ? 2 * l->cap : 8;
        uint32_t *v = malloc((size_t)cap * sizeof(*v));
        if (v == NULL)
            return CS_ERR_NOMEM;
        for (uint32_t j = 0; j < l->len; j++)
            v[j] = l->v[(l->head + j) & (l->cap - 1)];
        free(l->v);
        l->v = v;
        l->head = 0;
        l->cap = cap;
    }
    l->v[(l->head + l->len++) & (l->cap - 1)] = i;
    return CS_OK;
}

static uint32_t rl_pop(cs__rlist_t *l)
{
    uint32_t i = l->v[l->head];
    l->head = (l->head + 1) & (l->cap - 1);
    l->len--;
    return i;
}

/* Kahn state shared by the helpers below. */
typedef struct {
    cs_graph_t *g;
    uint32_t *indeg; /* unmatched sends/receives get one extra: never released */
    uint64_t *dbase; /* P + 1: first successor entry of each rank in dadj */
    uint32_t *doff;  /* per step: first successor entry, relative to dbase[rank]; the
                        entries end where the next step's start */
    uint32_t *dadj;  /* local indices of successors: dependents and the FIFO successor */
    cs__rlist_t *rl; /* per rank: ready list */
    uint32_t *rq;    /* FIFO ring of ranks with a non-empty ready list (P entries) */
    uint8_t *inq;    /* per rank: in rq, or being drained */
    int nomem;
    cs__graph_event_fn fn; /* called for each event, or NULL */
    void *ctx;
    uint32_t qhead, qlen;
    uint64_t tail;   /* events written to g->order */
} cs__kahn_t;

/* Append the event (r, i) to rank r's ready list; queue r if idle. */
static void push(cs__kahn_t *k, int r, uint32_t i)
{
    if (rl_push(&k->rl[r], i) != CS_OK) {
        k->nomem = 1;
        return;
    }
    if (!k->inq[r]) {
        int P = k->g->s->desc.nranks;
        uint32_t at = k->qhead + k->qlen++;
        k->rq[at >= (uint32_t)P ? at - (uint32_t)P : at] = (uint32_t)r;
        k->inq[r] = 1;
    }
}

/* Called when the in-degree of step i of rank r has just reached 0.  A
 * non-communication step is an event of its own.  A matched pair becomes
 * an event, kept in the SENDER's ready list, when its second half gets
 * there (the partner's in-degree is then already 0; in the initial scan,
 * where both may be 0, the send pushes). */
static void release(cs__kahn_t *k, int r, uint32_t i, int initial)
{
    cs_graph_t *g = k->g;
    uint64_t gid = g->base[r] + i;
    uint64_t p = g->partner[gid];
    if (p == CS_NONE) {
        push(k, r, i);
        return;
    }
    if (k->indeg[p] != 0)
        return;
    const cs_step_t *st = &g->s->ranks[r].steps[i];
    if (is_send(st))
        push(k, r, i);
    else if (!initial)
        push(k, st->peer, (uint32_t)(p - g->base[st->peer]));
}

/* Mark step i of rank r done: decrement its successors. */
static void complete(cs__kahn_t *k, int r, uint32_t i)
{
    cs_graph_t *g = k->g;
    uint64_t b = g->base[r];
    const uint32_t *adj = k->dadj + k->dbase[r];
    uint32_t end = b + i + 1 < g->base[r + 1] ? k->doff[b + i + 1]
                                              : (uint32_t)(k->dbase[r + 1] - k->dbase[r]);
    for (uint32_t e = k->doff[b + i]; e < end; e++) {
        uint32_t d = adj[e];
        if (--k->indeg[b + d] == 0)
            release(k, r, d, 0);
    }
}

/* Kahn's algorithm with one ready list per rank: a rank's list is drained
 * completely (including what its own events release) before the next
 * queued rank, so the order walks each rank's steps in long runs (this
 * keeps the working set small at 10^7 steps; the order is deterministic). */
static void kahn(cs__kahn_t *k)
{
    cs_graph_t *g = k->g;
    const cs_sched_t *s = g->s;
    int P = s->desc.nranks;
    for (int r = 0; r < P; r++) {
        const cs_rank_sched_t *rk = &s->ranks[r];
        for (uint32_t i = 0; i < rk->nsteps; i++)
            if (k->indeg[g->base[r] + i] == 0)
                release(k, r, i, 1);
    }
    uint64_t executed = 0;
    while (k->qlen > 0 && !k->nomem) {
        int r = (int)k->rq[k->qhead];
        k->qhead = k->qhead + 1 == (uint32_t)P ? 0 : k->qhead + 1;
        k->qlen--;
        while (k->rl[r].len > 0) {
            uint32_t i = rl_pop(&k->rl[r]);
            uint64_t gid = g->base[r] + i;
            g->order[k->tail++] = gid;
            uint64_t p = g->partner[gid];
            int pr = p != CS_NONE ? s->ranks[r].steps[i].peer : -1;
            uint32_t pi = p != CS_NONE ? (uint32_t)(p - g->base[pr]) : 0;
            if (k->fn != NULL)
                k->fn(k->ctx, r, i, pr, pi);
            complete(k, r, i);
            executed++;
            if (pr >= 0) {
                complete(k, pr, pi);
                executed++;
            }
        }
        k->inq[r] = 0;
    }
    g->norder = k->tail;
    g->nstuck = g->nsteps - executed;
}

/* Is a among b's own dependencies? */
static int depends_on(const cs_rank_sched_t *rk, uint32_t b, uint32_t a)
{
    const cs_step_t *st = &rk->steps[b];
    const uint32_t *d = rk->deps + st->dep_off;
    for (uint32_t j = 0; j < st->ndeps; j++)
        if (d[j] == a)
            return 1;
    return 0;
}

/* One channel queue of a rank: q[base[r] + start .. + len) (local step
 * indices, in schedule order) are its sends to, or its receives from,
 * `peer` on `chan`.  `matched`: how many of a receive queue's elements
 * found a send. */
typedef struct {
    uint32_t peer, chan, start, len, matched;
} cs__run_t;

/* Everything cs_graph_init builds before Kahn. */
typedef struct {
    cs_graph_t *g;
    uint32_t *q;        /* per rank (at base[r]): its sends sorted, then its receives;
                           lives in g->order, which Kahn fills only after matching */
    cs__run_t *runs;    /* per rank (from rbase[r]): send queues, then receive queues */
    uint64_t nruns, capruns;
    uint64_t *rbase;    /* P + 1 */
    uint32_t *nsrun;    /* per rank: number of send queues */
    cs__qkey_t *keys;   /* scratch: max steps per rank */
    uint32_t *links;    /* scratch: 2 x max steps per rank */
} cs__prep_t;

/* Append the queues found in sorted keys[0..n) (positions from `at` in the
 * rank's q); returns the number of queues or -1 when out of memory. */
static int64_t add_runs(cs__prep_t *pp, const cs__qkey_t *keys, uint32_t n, uint32_t at)
{
    int64_t nr = 0;
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i + 1;
        while (j < n && keys[j].peer == keys[i].peer && keys[j].chan == keys[i].chan)
            j++;
        if (pp->nruns == pp->capruns) {
            uint64_t cap = pp->capruns ? 2 * pp->capruns : 1024;
            cs__run_t *nrs = realloc(pp->runs, cap * sizeof(*nrs));
            if (nrs == NULL)
                return -1;
            pp->runs = nrs;
            pp->capruns = cap;
        }
        pp->runs[pp->nruns++] = (cs__run_t){keys[i].peer, keys[i].chan, at + i, j - i, 0};
        nr++;
        i = j;
    }
    return nr;
}

/* One pass over rank r (its steps stay in cache): partner reset, channel
 * queues, FIFO links, in-degrees (own dependencies + FIFO predecessor) and
 * the successor CSR.  Unmatched operations get their extra in-degree later
 * (match). */
static int prep_rank(cs__prep_t *pp, cs__kahn_t *k, int r)
{
    cs_graph_t *g = pp->g;
    const cs_rank_sched_t *rk = &g->s->ranks[r];
    uint64_t b = g->base[r];
    uint32_t *qr = pp->q + b, ns = 0, nr = 0, n = rk->nsteps;
    cs__qkey_t *keys = pp->keys;
    for (uint32_t i = 0; i < n; i++) {
        const cs_step_t *st = &rk->steps[i];
        g->partner[b + i] = CS_NONE;
        k->indeg[b + i] = st->ndeps;
        k->doff[b + i] = 0;
        if (is_send(st))
            keys[ns++] = (cs__qkey_t){(uint32_t)st->peer, st->chan, i};
    }
    uint32_t nl = 0;
    for (int half = 0; half < 2; half++) {
        uint32_t at = half ? ns : 0, cnt = ns;
        if (half) {
            for (uint32_t i = 0; i < n; i++)
                if (is_recv(&rk->steps[i]))
                    keys[nr++] = (cs__qkey_t){(uint32_t)rk->steps[i].peer, rk->steps[i].chan, i};
            cnt = nr;
        }
        sort_queue(keys, cnt, qr + at);
        int64_t nq = add_runs(pp, keys, cnt, at);
        if (nq < 0)
            return CS_ERR_NOMEM;
        if (!half)
            pp->nsrun[r] = (uint32_t)nq;
        for (uint32_t x = 1; x < cnt; x++) {
            if (keys[x].peer != keys[x - 1].peer || keys[x].chan != keys[x - 1].chan)
                continue;
            uint32_t a = keys[x - 1].idx, c = keys[x].idx;
            if (depends_on(rk, c, a))
                continue; /* the FIFO edge repeats a dependency */
            pp->links[2 * nl] = a;
            pp->links[2 * nl + 1] = c;
            nl++;
        }
    }
    pp->rbase[r + 1] = pp->nruns;
    const uint32_t *links = pp->links;
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t *d = cs_step_deps(rk, &rk->steps[i]);
        for (uint32_t j = 0; j < rk->steps[i].ndeps; j++)
            k->doff[b + d[j]]++;
    }
    for (uint32_t l = 0; l < nl; l++) {
        k->doff[b + links[2 * l]]++;
        k->indeg[b + links[2 * l + 1]]++;
    }
    uint32_t acc = 0; /* counts to ends, then each fill moves an end back */
    for (uint32_t i = 0; i < n; i++) {
        acc += k->doff[b + i];
        k->doff[b + i] = acc;
    }
    k->dbase[r + 1] = k->dbase[r] + acc;
    uint32_t *adj = k->dadj + k->dbase[r];
    for (uint32_t l = nl; l-- > 0;)
        adj[--k->doff[b + links[2 * l]]] = links[2 * l + 1];
    for (uint32_t i = n; i-- > 0;) {
        const uint32_t *d = cs_step_deps(rk, &rk->steps[i]);
        for (uint32_t j = rk->steps[i].ndeps; j-- > 0;)
            adj[--k->doff[b + d[j]]] = i;
    }
    return CS_OK;
}

/* The receive queue (b <- a, chan c) among rank b's queues, or NULL. */
static cs__run_t *find_recv_run(cs__prep_t *pp, int b, uint32_t a, uint32_t c)
{
    uint64_t lo = pp->rbase[b] + pp->nsrun[b], hi = pp->rbase[b + 1];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        const cs__run_t *x = &pp->runs[mid];
        if (x->peer < a || (x->peer == a && x->chan < c))
            lo = mid + 1;
        else
            hi = mid;
    }
    cs__run_t *x = lo < pp->rbase[b + 1] ? &pp->runs[lo] : NULL;
    return x != NULL && x->peer == a && x->chan == c ? x : NULL;
}

/* Pair every send queue with its receive queue element by element; the
 * excess of either side is unmatched: counted, and given an in-degree
 * that never drops to zero. */
static void match(cs__prep_t *pp, cs__kahn_t *k)
{
    cs_graph_t *g = pp->g;
    int P = g->s->desc.nranks;
    for (int a = 0; a < P; a++) {
        const uint32_t *qa = pp->q + g->base[a];
        for (uint64_t x = pp->rbase[a]; x < pp->rbase[a] + pp->nsrun[a]; x++) {
            const cs__run_t *sr = &pp->runs[x];
            int b = (int)sr->peer;
            cs__run_t *rr = find_recv_run(pp, b, (uint32_t)a, sr->chan);
            uint32_t m = rr == NULL ? 0 : rr->len < sr->len ? rr->len : sr->len;
            for (uint32_t e = 0; e < m; e++) {
                uint64_t gs = g->base[a] + qa[sr->start + e];
                uint64_t gr = g->base[b] + pp->q[g->base[b] + rr->start + e];
                g->partner[gs] = gr;
                g->partner[gr] = gs;
            }
            if (rr != NULL)
                rr->matched = m;
            for (uint32_t e = m; e < sr->len; e++)
                k->indeg[g->base[a] + qa[sr->start + e]]++;
            g->nunmatched += sr->len - m;
        }
    }
    for (int b = 0; b < P; b++) {
        const uint32_t *qb = pp->q + g->base[b];
        for (uint64_t x = pp->rbase[b] + pp->nsrun[b]; x < pp->rbase[b + 1]; x++) {
            const cs__run_t *rr = &pp->runs[x];
            for (uint32_t e = rr->matched; e < rr->len; e++)
                k->indeg[g->base[b] + qb[rr->start + e]]++;
            g->nunmatched += rr->len - rr->matched;
        }
    }
}

/* Queues, matching, CSR, then Kahn. */
static int build(cs_graph_t *g, cs__graph_event_fn fn, void *ctx)
{
    const cs_sched_t *s = g->s;
    uint64_t N = g->nsteps, n1 = N ? N : 1;
    int P = s->desc.nranks;
    cs__kahn_t k = {.g = g, .fn = fn, .ctx = ctx};
    cs__prep_t pp = {.g = g};
    uint64_t nsucc = 0;
    uint32_t m = max_rank_steps(s);
    int st = CS_ERR_NOMEM;
    for (int r = 0; r < P; r++)
        nsucc += s->ranks[r].ndeps + s->ranks[r].nsteps;
    k.dbase = malloc(((size_t)P + 1) * sizeof(*k.dbase));
    k.indeg = malloc(n1 * sizeof(*k.indeg));
    k.doff = malloc(n1 * sizeof(*k.doff));
    k.dadj = malloc((nsucc ? nsucc : 1) * sizeof(*k.dadj));
    k.rl = calloc((size_t)P, sizeof(*k.rl));
    k.rq = malloc((size_t)P * sizeof(*k.rq));
    k.inq = calloc((size_t)P, sizeof(*k.inq));
    pp.q = (uint32_t *)(void *)g->order; /* N x 8 bytes, unused until Kahn */
    pp.rbase = malloc(((size_t)P + 1) * sizeof(*pp.rbase));
    pp.nsrun = malloc((size_t)P * sizeof(*pp.nsrun));
    pp.keys = malloc((m ? m : 1) * sizeof(*pp.keys));
    pp.links = malloc(2 * (size_t)(m ? m : 1) * sizeof(*pp.links));
    if (!k.dbase || !k.indeg || !k.doff || !k.dadj || !k.rl || !k.rq || !k.inq || !pp.q ||
        !pp.rbase || !pp.nsrun || !pp.keys || !pp.links)
        goto out;
    k.dbase[0] = 0;
    pp.rbase[0] = 0;
    for (int r = 0; r < P; r++)
        if (prep_rank(&pp, &k, r) != CS_OK)
            goto out;
    free(pp.links);
    free(pp.keys);
    pp.links = NULL;
    pp.keys = NULL;
    match(&pp, &k);
    free(pp.runs);
    pp.runs = NULL;
    kahn(&k);
    st = k.nomem ? CS_ERR_NOMEM : CS_OK;
out:
    for (int r = 0; k.rl != NULL && r < P; r++)
        free(k.rl[r].v);
    free(pp.links);
    free(pp.keys);
    free(pp.nsrun);
    free(pp.rbase);
    free(pp.runs);
    free(k.rl);
    free(k.inq);
    free(k.rq);
    free(k.dadj);
    free(k.doff);
    free(k.indeg);
    free(k.dbase);
    return st;
}

int cs_graph_init(cs_graph_t *g, const cs_sched_t *s, cs_err_t *err)
{
    return cs__graph_init_ev(g, s, NULL, NULL, err);
}

int cs__graph_init_ev(cs_graph_t *g, const cs_sched_t *s, cs__graph_event_fn fn, void *ctx,
                      cs_err_t *err)
{
    int P = s->desc.nranks;
    memset(g, 0, sizeof(*g));
    g->s = s;
    g->base = malloc(((size_t)P + 1) * sizeof(*g->base));
    if (g->base == NULL)
        goto nomem;
    g->base[0] = 0;
    for (int r = 0; r < P; r++)
        g->base[r + 1] = g->base[r] + s->ranks[r].nsteps;
    uint64_t N = g->nsteps = g->base[P];
    g->partner = malloc((N ? N : 1) * sizeof(*g->partner));
    g->order = malloc((N ? N : 1) * sizeof(*g->order));
    if (!g->partner || !g->order || build(g, fn, ctx) != CS_OK)
        goto nomem;
    return CS_OK;
nomem:
    cs_graph_fini(g);
    g->s = s;
    return cs_err_set(err, CS_ERR_NOMEM, "out of memory building the graph of %llu steps",
                      (unsigned long long)cs_sched_total_steps(s));
}

void cs_graph_fini(cs_graph_t *g)
{
    if (g == NULL)
        return;
    free(g->base);
    free(g->partner);
    free(g->order);
    memset(g, 0, sizeof(*g));
}

void cs_graph_locate(const cs_graph_t *g, uint64_t gid, int *rank, uint32_t *step)
{
    /* largest r < P with base[r] <= gid (empty ranks share their base);
     * branch-free halving: the loop runs log2(P) times with a cmov */
    const uint64_t *b = g->base;
    int lo = 0, len = g->s->desc.nranks;
    while (len > 1) {
        int half = len / 2;
        lo = b[lo + half] <= gid ? lo + half : lo;
        len -= half;
    }
    *rank = lo;
    *step = (uint32_t)(gid - b[lo]);
}
