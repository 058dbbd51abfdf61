/*
 * cs_plan.c - a schedule compiled once (contract in cs_plan.h).
 *
 * Method, for N steps, with a fixed number of arrays allocated once.  At
 * 10^7 steps the cost is memory traffic, so each rank's steps are read in
 * one pass while they are in cache, and the later phases avoid touching
 * them:
 *
 *  1. Local part, one rank at a time (local_build): successor counts,
 *     their prefix sums, the successor lists filled backwards (so each list
 *     comes out in increasing order without a cursor array), and the
 *     channel queues found with an open-addressing table keyed by
 *     (direction, channel, peer) whose values are queue numbers.  With an
 *     order to build, the same pass counts in-degrees: own dependencies + 1
 *     for a queue predecessor that is not already a dependency.
 *  2. Matching, on the queues alone: every rank's receive queues are
 *     sorted by (peer, channel); for each send queue (a -> b, c) the
 *     receive queue (b <- a, c) is found by binary search and the two
 *     chains are paired element by element; the excess of either is
 *     unmatched and gets one more in-degree (it never runs).
 *  3. Order: Kahn's algorithm.  A step whose in-degree reaches zero is
 *     "released"; a non-communication step is then an event, a matched pair
 *     becomes one event when its second half is released, an unmatched one
 *     never runs.  Each rank has a FIFO ready list (its local events and the
 *     pairs it sends); ranks with work wait in a FIFO of ranks, and a rank's
 *     list is drained completely before the next rank's.  Compared with
 *     breadth-first rounds over all ranks this touches each rank's arrays
 *     in long runs instead of one step per rank per round (at P = 1536 the
 *     rounds were bound by cache misses), and needs no sorting.  Completing
 *     a step walks its successor list, then its queue successor unless that
 *     one was in the list (a FIFO edge that repeats a dependency counts
 *     once).
 */
#include "cs_plan.h"

#include <stdlib.h>
#include <string.h>

#include "cs_grow.h"
#include "cs_hash.h"
#include "cs_plan_int.h"

/* ---- local part ----------------------------------------------------------- */

static uint64_t queue_key(const cs_step_t *st)
{
    uint64_t dir = st->kind == CS_STEP_SEND ? 1 : st->kind == CS_STEP_SWITCH ? 3 : 2;
    return (dir << 56) | ((uint64_t)st->chan << 32) | (uint32_t)st->peer;
}

/* Table size for a rank of n steps: a power of two >= 2n, at least 16. */
static size_t table_size(uint32_t n)
{
    size_t t = 16;
    while (t < 2 * (size_t)n)
        t <<= 1;
    return t;
}

/* A growable array of queues (of one rank, or of all ranks back to back). */
typedef struct {
    cs_plan_queue_t *v;
    uint64_t n;
    size_t cap;
} qvec_t;

static int qvec_push(qvec_t *q, const cs_plan_queue_t *x)
{
    if (cs_grow(&q->v, &q->cap, q->n + 1, sizeof(*q->v), 64))
        return CS_ERR_NOMEM;
    q->v[q->n++] = *x;
    return CS_OK;
}

/* Is a among b's own dependencies? */
static int depends_on(const cs_rank_sched_t *rk, uint32_t b, uint32_t a)
{
    const cs_step_t *st = &rk->steps[b];
    if (st->ndeps == 0) /* rk->deps may be NULL: no arithmetic on it */
        return 0;
    const uint32_t *d = rk->deps + st->dep_off;
    for (uint32_t j = 0; j < st->ndeps; j++)
        if (d[j] == a)
            return 1;
    return 0;
}

/* The local part of rank rk into succ_off (n + 1), succ, chan_next (n),
 * appending its queues to *q (their numbers are local: from q->n at entry);
 * tkeys / tvals: a table of tsize >= table_size(n) entries.  indeg (n, may
 * be NULL): own dependencies + 1 for a queue predecessor that is not
 * already a dependency. */
static int local_build(const cs_rank_sched_t *rk, uint32_t *succ_off, uint32_t *succ,
                       uint32_t *chan_next, qvec_t *q, uint64_t *tkeys, uint32_t *tvals,
                       size_t tsize, uint32_t *indeg)
{
    uint32_t n = rk->nsteps;
    uint64_t q0 = q->n;
    size_t mask = tsize - 1;
    memset(tkeys, 0, tsize * sizeof(*tkeys));
    memset(succ_off, 0, ((size_t)n + 1) * sizeof(*succ_off));
    for (uint32_t i = 0; i < n; i++) {
        const cs_step_t *st = &rk->steps[i];
        const uint32_t *d = cs_step_deps(rk, st);
        for (uint32_t j = 0; j < st->ndeps; j++)
            succ_off[d[j]]++;
        chan_next[i] = CS_PLAN_NONE;
        if (indeg != NULL)
            indeg[i] = st->ndeps;
        if (!cs_kind_is_comm(st->kind) && st->kind != CS_STEP_SWITCH)
            continue;
        uint64_t k = queue_key(st);
        size_t h = (size_t)cs_hash_mix64(k) & mask;
        while (tkeys[h] != 0 && tkeys[h] != k)
            h = (h + 1) & mask;
        if (tkeys[h] == k) {
            cs_plan_queue_t *x = &q->v[q0 + tvals[h]];
            chan_next[x->last] = i;
            if (indeg != NULL && !depends_on(rk, i, x->last))
                indeg[i]++;
            x->last = i;
            x->len++;
            continue;
        }
        cs_plan_queue_t nq = {st->peer, st->chan, st->kind == CS_STEP_SEND,
                              st->kind == CS_STEP_SWITCH, i, i, 1, 0};
        if (q->n - q0 >= CS_PLAN_NONE || qvec_push(q, &nq) != CS_OK)
            return CS_ERR_NOMEM;
        tkeys[h] = k;
        tvals[h] = (uint32_t)(q->n - q0 - 1);
    }
    uint32_t acc = 0; /* counts to ends; each fill below moves an end back */
    for (uint32_t i = 0; i < n; i++) {
        acc += succ_off[i];
        succ_off[i] = acc;
    }
    succ_off[n] = acc;
    for (uint32_t i = n; i-- > 0;) {
        const cs_step_t *st = &rk->steps[i];
        const uint32_t *d = cs_step_deps(rk, st);
        for (uint32_t j = st->ndeps; j-- > 0;)
            succ[--succ_off[d[j]]] = i;
    }
    return CS_OK;
}

/* Grow *a to hold n entries of `size` bytes (capacity *cap, in entries). */
static int grow(void **a, uint32_t *cap, uint64_t n, size_t size)
{
    if (n <= *cap)
        return CS_OK;
    if (n > UINT32_MAX)
        return CS_ERR_NOMEM;
    void *na = realloc(*a, (size_t)n * size);
    if (na == NULL)
        return CS_ERR_NOMEM;
    *a = na;
    *cap = (uint32_t)n;
    return CS_OK;
}

int cs_plan_rank_build(cs_plan_rank_t *pr, const cs_sched_t *s, int rank, cs_err_t *err)
{
    const cs_rank_sched_t *rk = &s->ranks[rank];
    uint32_t n = rk->nsteps;
    size_t ts = table_size(n);
    int st = CS_OK;
    uint32_t cap = pr->cap_steps;
    if (grow((void **)&pr->succ_off, &cap, (uint64_t)n + 1, sizeof(uint32_t)) ||
        grow((void **)&pr->chan_next, &pr->cap_steps, (uint64_t)n + 1, sizeof(uint32_t)) ||
        grow((void **)&pr->succ, &pr->cap_succ, rk->ndeps ? rk->ndeps : 1, sizeof(uint32_t)))
        st = CS_ERR_NOMEM;
    if (st == CS_OK && ts > pr->tsize) {
        uint64_t *k = realloc(pr->tkeys, ts * sizeof(*k));
        if (k != NULL)
            pr->tkeys = k;
        uint32_t *v = k != NULL ? realloc(pr->tvals, ts * sizeof(*v)) : NULL;
        if (v != NULL) {
            pr->tvals = v;
            pr->tsize = ts;
        } else {
            st = CS_ERR_NOMEM;
        }
    }
    qvec_t q = {pr->queues, 0, pr->cap_queues};
    if (st == CS_OK)
        st = local_build(rk, pr->succ_off, pr->succ, pr->chan_next, &q, pr->tkeys, pr->tvals,
                         pr->tsize, NULL);
    pr->queues = q.v;
    pr->cap_queues = (uint32_t)(q.cap < UINT32_MAX ? q.cap : UINT32_MAX);
    if (st != CS_OK) {
        pr->nsteps = pr->nqueues = 0;
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory planning rank %d (%u steps)", rank,
                          n);
    }
    pr->nsteps = n;
    pr->nqueues = (uint32_t)q.n;
    return CS_OK;
}

void cs_plan_rank_fini(cs_plan_rank_t *pr)
{
    if (pr == NULL)
        return;
    free(pr->succ_off);
    free(pr->succ);
    free(pr->chan_next);
    free(pr->queues);
    free(pr->tkeys);
    free(pr->tvals);
    memset(pr, 0, sizeof(*pr));
}

cs_plan_rank_t cs_plan_rank_of(const cs_plan_t *p, int r)
{
    cs_plan_rank_t v;
    memset(&v, 0, sizeof(v));
    v.nsteps = (uint32_t)(p->base[r + 1] - p->base[r]);
    v.nqueues = (uint32_t)(p->qbase[r + 1] - p->qbase[r]);
    v.succ_off = p->succ_off + p->base[r] + (uint64_t)r;
    v.succ = p->succ + p->succ_base[r];
    v.chan_next = p->chan_next + p->base[r];
    v.queues = p->queues ? p->queues + p->qbase[r] : NULL; /* NULL: no message at all */
    return v;
}

/* ---- matching ------------------------------------------------------------- */

/* A receive queue in a rank's sorted list: its (peer, channel) and number. */
typedef struct {
    int32_t peer;
    uint32_t chan;
    uint64_t x;
} rkey_t;

static int rkey_cmp(const void *a_, const void *b_)
{
    const rkey_t *a = a_, *b = b_;
    if (a->peer != b->peer)
        return a->peer < b->peer ? -1 : 1;
    return a->chan < b->chan ? -1 : a->chan > b->chan;
}

/* The receive queue (b <- a, chan c) among rank b's sorted receive queues
 * rk[rb[b] .. rb[b + 1]), or NULL. */
static cs_plan_queue_t *find_recv(cs_plan_t *p, const rkey_t *rk, const uint64_t *rb, int b,
                                  int32_t a, uint16_t c)
{
    uint64_t lo = rb[b], hi = rb[b + 1];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (rk[mid].peer < a || (rk[mid].peer == a && rk[mid].chan < c))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < rb[b + 1] && rk[lo].peer == a && rk[lo].chan == c ? &p->queues[rk[lo].x] : NULL;
}

/* Pair every send queue with its receive queue element by element; the
 * excess of either is unmatched (indeg, may be NULL, gets one more: it
 * never runs). */
static int match(cs_plan_t *p, uint32_t *indeg)
{
    int P = p->nranks;
    uint64_t nq = p->qbase[P];
    rkey_t *ridx = malloc((nq ? nq : 1) * sizeof(*ridx));
    uint64_t *rb = malloc(((size_t)P + 1) * sizeof(*rb));
    if (ridx == NULL || rb == NULL) {
        free(ridx);
        free(rb);
        return CS_ERR_NOMEM;
    }
    uint64_t m = 0;
    for (int r = 0; r < P; r++) {
        rb[r] = m;
        for (uint64_t x = p->qbase[r]; x < p->qbase[r + 1]; x++)
            if (!p->queues[x].send && !p->queues[x].swq)
                ridx[m++] = (rkey_t){p->queues[x].peer, p->queues[x].chan, x};
        qsort(ridx + rb[r], m - rb[r], sizeof(*ridx), rkey_cmp);
    }
    rb[P] = m;
    for (uint64_t g = 0; g < p->nsteps; g++)
        p->partner[g] = CS_PLAN_NOGID;
    for (int a = 0; a < P; a++) {
        const uint32_t *na = p->chan_next + p->base[a];
        for (uint64_t x = p->qbase[a]; x < p->qbase[a + 1]; x++) {
            cs_plan_queue_t *sq = &p->queues[x];
            if (!sq->send)
                continue;
            int b = sq->peer;
            cs_plan_queue_t *rq = find_recv(p, ridx, rb, b, a, sq->chan);
            const uint32_t *nb = p->chan_next + p->base[b];
            uint32_t mm = rq == NULL ? 0 : rq->len < sq->len ? rq->len : sq->len;
            uint32_t i = sq->first, j = rq != NULL ? rq->first : CS_PLAN_NONE;
            for (uint32_t e = 0; e < mm; e++, i = na[i], j = nb[j]) {
                uint64_t gs = p->base[a] + i, gr = p->base[b] + j;
                p->partner[gs] = gr;
                p->partner[gr] = gs;
            }
            sq->matched = mm;
            if (rq != NULL)
                rq->matched = mm;
        }
    }
    for (uint64_t x = 0, r = 0; x < nq; x++) {
        const cs_plan_queue_t *q = &p->queues[x];
        if (q->swq) /* cs__plan_match_switch */
            continue;
        p->nunmatched += q->len - q->matched;
        while (p->qbase[r + 1] <= x)
            r++;
        if (indeg == NULL || q->matched == q->len)
            continue;
        uint32_t i = q->first;
        for (uint32_t e = 0; e < q->len; e++, i = p->chan_next[p->base[r] + i])
            if (e >= q->matched)
                indeg[p->base[r] + i]++;
    }
    free(ridx);
    free(rb);
    return CS_OK;
}

/* ---- order ---------------------------------------------------------------- */

/* A rank's ready list: a growable ring of local step indices (short in
 * practice: a rank rarely has more than a few events ready at once). */
typedef struct {
    uint32_t *v;
    uint32_t head, len, cap; /* cap is 0 or a power of two */
} rlist_t;

static int rl_push(rlist_t *l, uint32_t i)
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

static uint32_t rl_pop(rlist_t *l)
{
    uint32_t i = l->v[l->head];
    l->head = (l->head + 1) & (l->cap - 1);
    l->len--;
    return i;
}

/* Kahn state. */
typedef struct {
    cs_plan_t *p;
    uint32_t *indeg; /* unmatched sends/receives have one extra: never released */
    rlist_t *rl;     /* per rank: ready list */
    uint32_t *rq;    /* FIFO ring of ranks with a non-empty ready list (P entries) */
    uint8_t *inq;    /* per rank: in rq, or being drained */
    int nomem;
    cs_plan_event_fn fn;
    void *ctx;
    uint32_t qhead, qlen;
} kahn_t;

/* Append the event (r, i) to rank r's ready list; queue r if idle. */
static void push(kahn_t *k, int r, uint32_t i)
{
    if (rl_push(&k->rl[r], i) != CS_OK) {
        k->nomem = 1;
        return;
    }
    if (!k->inq[r]) {
        uint32_t P = (uint32_t)k->p->nranks, at = k->qhead + k->qlen++;
        k->rq[at >= P ? at - P : at] = (uint32_t)r;
        k->inq[r] = 1;
    }
}

/* The in-degree of step i of rank r has just reached 0.  A
 * non-communication step is an event of its own.  A matched pair becomes
 * an event, kept in the SENDER's ready list, when its second half gets
 * there (the partner's in-degree is then already 0; in the initial scan,
 * where both may be 0, the send pushes). */
static void dec(kahn_t *k, int r, uint32_t d);

static void release(kahn_t *k, int r, uint32_t i, int initial)
{
    cs_plan_t *p = k->p;
    uint64_t q = p->partner[p->base[r] + i];
    if (q == CS_PLAN_NOGID) {
        push(k, r, i);
        return;
    }
    if (p->swnext != NULL && p->s->ranks[r].steps[i].kind == CS_STEP_SWITCH) {
        /* a member is ready: one less for its leader to wait for (the
         * leader's in-degree counts the others, cs__plan_match_switch) */
        int lr;
        uint32_t li;
        if (q == p->base[r] + i) {
            push(k, r, i);
            return;
        }
        cs_plan_locate(p->base, p->nranks, q, &lr, &li);
        dec(k, lr, li);
        return;
    }
    if (k->indeg[q] != 0)
        return;
    const cs_step_t *st = &p->s->ranks[r].steps[i];
    if (st->kind == CS_STEP_SEND)
        push(k, r, i);
    else if (!initial)
        push(k, st->peer, (uint32_t)(q - p->base[st->peer]));
}

static void dec(kahn_t *k, int r, uint32_t d)
{
    if (--k->indeg[k->p->base[r] + d] == 0)
        release(k, r, d, 0);
}

/* Step i of rank r is done: its successors, then its queue successor
 * unless that one was among them. */
static void complete(kahn_t *k, int r, uint32_t i)
{
    cs_plan_t *p = k->p;
    uint64_t b = p->base[r];
    const uint32_t *off = p->succ_off + b + (uint64_t)r, *adj = p->succ + p->succ_base[r];
    uint32_t c = p->chan_next[b + i];
    int seen = 0;
    for (uint32_t e = off[i]; e < off[i + 1]; e++) {
        seen |= adj[e] == c;
        dec(k, r, adj[e]);
    }
    if (c != CS_PLAN_NONE && !seen)
        dec(k, r, c);
}

/* Kahn's algorithm with one ready list per rank: a rank's list is drained
 * completely (including what its own events release) before the next
 * queued rank. */
static void kahn(kahn_t *k)
{
    cs_plan_t *p = k->p;
    const cs_sched_t *s = p->s;
    int P = p->nranks;
    /* switch members (not leaders) last: their release may complete their
     * leader's count and release it, which the scan must not do again */
    for (int pass = 0; pass < (p->swnext != NULL ? 2 : 1); pass++)
        for (int r = 0; r < P; r++)
            for (uint32_t i = 0; i < s->ranks[r].nsteps; i++) {
                uint64_t g = p->base[r] + i;
                int member = p->swnext != NULL && s->ranks[r].steps[i].kind == CS_STEP_SWITCH &&
                             p->partner[g] != CS_PLAN_NOGID && p->partner[g] != g;
                if (k->indeg[g] == 0 && member == pass)
                    release(k, r, i, 1);
            }
    uint64_t executed = 0, tail = 0;
    while (k->qlen > 0 && !k->nomem) {
        int r = (int)k->rq[k->qhead];
        k->qhead = k->qhead + 1 == (uint32_t)P ? 0 : k->qhead + 1;
        k->qlen--;
        while (k->rl[r].len > 0) {
            uint32_t i = rl_pop(&k->rl[r]);
            uint64_t gid = p->base[r] + i, q = p->partner[gid];
            p->order[tail++] = gid;
            int sw = q == gid; /* a switch operation's leader */
            int pr = q != CS_PLAN_NOGID && !sw ? s->ranks[r].steps[i].peer : -1;
            uint32_t pi = pr >= 0 ? (uint32_t)(q - p->base[pr]) : 0;
            if (k->fn != NULL)
                k->fn(k->ctx, p, r, i, pr, pi);
            complete(k, r, i);
            executed++;
            for (uint64_t m = sw ? p->swnext[gid] : CS_PLAN_NOGID; m != CS_PLAN_NOGID;
                 m = p->swnext[m]) {
                int mr;
                uint32_t mi;
                cs_plan_locate(p->base, P, m, &mr, &mi);
                complete(k, mr, mi);
                executed++;
            }
            if (pr >= 0) {
                complete(k, pr, pi);
                executed++;
            }
        }
        k->inq[r] = 0;
    }
    p->norder = tail;
    p->nstuck = p->nsteps - executed;
}

static int order(cs_plan_t *p, uint32_t *indeg, cs_plan_event_fn fn, void *ctx)
{
    int P = p->nranks;
    kahn_t k = {.p = p, .indeg = indeg, .fn = fn, .ctx = ctx};
    k.rl = calloc((size_t)P, sizeof(*k.rl));
    k.rq = malloc((size_t)P * sizeof(*k.rq));
    k.inq = calloc((size_t)P, sizeof(*k.inq));
    int st = CS_ERR_NOMEM;
    if (k.rl != NULL && k.rq != NULL && k.inq != NULL) {
        kahn(&k);
        st = k.nomem ? CS_ERR_NOMEM : CS_OK;
    }
    for (int r = 0; k.rl != NULL && r < P; r++)
        free(k.rl[r].v);
    free(k.rl);
    free(k.rq);
    free(k.inq);
    return st;
}

/* ---- the whole plan ------------------------------------------------------- */

static void free_local(cs_plan_t *p)
{
    free(p->succ_off);
    free(p->succ_base);
    free(p->succ);
    free(p->chan_next);
    free(p->qbase);
    free(p->queues);
    p->succ_off = p->succ = p->chan_next = NULL;
    p->succ_base = p->qbase = NULL;
    p->queues = NULL;
}

/* Every rank's local part (and in-degrees when indeg is not NULL). */
static int build_local(cs_plan_t *p, uint32_t *indeg)
{
    const cs_sched_t *s = p->s;
    int P = p->nranks;
    uint64_t nsucc = 0;
    uint32_t maxn = 0;
    for (int r = 0; r < P; r++) {
        nsucc += s->ranks[r].ndeps;
        maxn = s->ranks[r].nsteps > maxn ? s->ranks[r].nsteps : maxn;
    }
    size_t ts = table_size(maxn);
    p->succ_off = malloc((p->nsteps + (uint64_t)P) * sizeof(*p->succ_off));
    p->succ_base = malloc(((size_t)P + 1) * sizeof(*p->succ_base));
    p->succ = malloc((nsucc ? nsucc : 1) * sizeof(*p->succ));
    p->chan_next = malloc((p->nsteps ? p->nsteps : 1) * sizeof(*p->chan_next));
    p->qbase = malloc(((size_t)P + 1) * sizeof(*p->qbase));
    uint64_t *tkeys = malloc(ts * sizeof(*tkeys));
    uint32_t *tvals = malloc(ts * sizeof(*tvals));
    qvec_t q = {0};
    int st = CS_ERR_NOMEM;
    if (!p->succ_off || !p->succ_base || !p->succ || !p->chan_next || !p->qbase || !tkeys ||
        !tvals)
        goto out;
    p->succ_base[0] = 0;
    for (int r = 0; r < P; r++) {
        uint64_t b = p->base[r];
        p->qbase[r] = q.n;
        if (local_build(&s->ranks[r], p->succ_off + b + (uint64_t)r, p->succ + p->succ_base[r],
                        p->chan_next + b, &q, tkeys, tvals, ts,
                        indeg != NULL ? indeg + b : NULL) != CS_OK)
            goto out;
        p->succ_base[r + 1] = p->succ_base[r] + s->ranks[r].ndeps;
    }
    p->qbase[P] = q.n;
    st = CS_OK;
out:
    p->queues = q.v;
    free(tkeys);
    free(tvals);
    return st;
}

int cs_plan_init(cs_plan_t *p, const cs_sched_t *s, unsigned what, cs_plan_event_fn fn,
                 void *ctx, cs_err_t *err)
{
    int P = s->desc.nranks;
    uint32_t *indeg = NULL;
    memset(p, 0, sizeof(*p));
    p->s = s;
    p->nranks = P;
    if (what & CS_PLAN_ORDER)
        what |= CS_PLAN_MATCH;
    p->base = malloc(((size_t)P + 1) * sizeof(*p->base));
    if (p->base == NULL)
        goto nomem;
    p->base[0] = 0;
    for (int r = 0; r < P; r++)
        p->base[r + 1] = p->base[r] + s->ranks[r].nsteps;
    uint64_t N = p->nsteps = p->base[P], n1 = N ? N : 1;
    if (what & CS_PLAN_MATCH) {
        p->partner = malloc(n1 * sizeof(*p->partner));
        if (p->partner == NULL)
            goto nomem;
    }
    if (what & CS_PLAN_ORDER) {
        p->order = malloc(n1 * sizeof(*p->order));
        indeg = malloc(n1 * sizeof(*indeg));
        if (p->order == NULL || indeg == NULL)
            goto nomem;
    }
    if (build_local(p, indeg) != CS_OK)
        goto nomem;
    if ((what & CS_PLAN_MATCH) && match(p, indeg) != CS_OK)
        goto nomem;
    if ((what & CS_PLAN_MATCH) && s->nswitch > 0 && cs__plan_match_switch(p, indeg) != CS_OK)
        goto nomem;
    if ((what & CS_PLAN_ORDER) && order(p, indeg, fn, ctx) != CS_OK)
        goto nomem;
    free(indeg);
    if (!(what & CS_PLAN_LOCAL))
        free_local(p);
    p->parts = what;
    return CS_OK;
nomem:
    free(indeg);
    cs_plan_fini(p);
    p->s = s;
    return cs_err_set(err, CS_ERR_NOMEM, "out of memory planning a schedule of %llu steps",
                      (unsigned long long)cs_sched_total_steps(s));
}

void cs_plan_fini(cs_plan_t *p)
{
    if (p == NULL)
        return;
    free_local(p);
    free(p->base);
    free(p->partner);
    free(p->swnext);
    free(p->order);
    memset(p, 0, sizeof(*p));
}

void cs_plan_locate(const uint64_t *base, int nranks, uint64_t gid, int *rank, uint32_t *step)
{
    /* largest r < P with base[r] <= gid (empty ranks share their base);
     * branch-free halving: the loop runs log2(P) times with a cmov */
    int lo = 0, len = nranks;
    while (len > 1) {
        int half = len / 2;
        lo = base[lo + half] <= gid ? lo + half : lo;
        len -= half;
    }
    *rank = lo;
    *step = (uint32_t)(gid - base[lo]);
}

/* ---- layout --------------------------------------------------------------- */

uint64_t cs_plan_buf_elems(const cs_sched_t *s, int rank, int buf, uint64_t count)
{
    const cs_rank_sched_t *rs = &s->ranks[rank];
    if (buf < 0 || buf >= rs->nbufs)
        return 0;
    return cs_range_elems(s, &rs->bufs[buf], count, 0, rs->bufs[buf].nchunks);
}

void cs_plan_layout(const cs_sched_t *s, int rank, uint64_t max_count, size_t esize,
                    size_t align, size_t *bytes, size_t *stage_off)
{
    const cs_rank_sched_t *rs = &s->ranks[rank];
    for (int b = 0; b < rs->nbufs; b++)
        bytes[b] = cs_plan_buf_elems(s, rank, b, max_count) * esize;
    size_t stage = 0;
    for (uint32_t i = 0; i < rs->nsteps; i++) {
        const cs_step_t *x = &rs->steps[i];
        stage_off[i] = 0;
        if (x->kind != CS_STEP_RRECV)
            continue;
        stage_off[i] = stage;
        size_t n = cs_range_elems(s, &rs->bufs[x->dst.buf], max_count, x->dst.off, x->dst.n);
        stage += cs_plan_align(n * esize, align);
    }
    bytes[rs->nbufs] = stage;
}
