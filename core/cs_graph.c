/*
 * cs_graph.c - message matching and one global execution order (see
 * cs_graph.h for the contract).
 *
 * Method, all in O(N log n) time for N steps and n steps per rank, with a
 * fixed number of arrays allocated once (no per-step allocation):
 *
 *  1. Channel queues.  For every rank, its sends are listed sorted by
 *     (peer, channel, index) and its receives likewise; consecutive entries
 *     with the same (peer, channel) form one FIFO queue.  Generators usually
 *     emit queues already in order, so the sort is skipped when a linear scan
 *     finds the list sorted.
 *  2. Matching.  For each send queue (a -> b, c), the receive queue
 *     (b <- a, c) is found by binary search in rank b's receive list and the
 *     two are paired element by element; the excess of either is unmatched.
 *  3. Order.  Kahn's algorithm over steps with in-degree = number of own
 *     dependencies + 1 when the step has a FIFO predecessor, with a CSR of
 *     dependents.  A step whose in-degree reaches zero is "released"; a
 *     non-communication step is then an event, a matched pair becomes one
 *     event when its second half is released, an unmatched one never runs.
 *     Each rank has a FIFO ready list (its local events and the pairs it
 *     sends); ranks with work wait in a FIFO of ranks, and a rank's list is
 *     drained completely before the next rank's.  Compared with breadth
 *     first rounds over all ranks this touches each rank's arrays in long
 *     runs instead of one step per rank per round (at P = 1536 the rounds
 *     were bound by cache misses), and it needs no sorting.
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

/* First position in rank b's receive list whose (peer, chan) >= (a, c). */
static uint32_t recv_lower_bound(const cs_rank_sched_t *rb, const uint32_t *list, uint32_t n,
                                 uint32_t a, uint32_t c)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const cs_step_t *st = &rb->steps[list[mid]];
        uint32_t p = (uint32_t)st->peer;
        if (p < a || (p == a && st->chan < c))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void match(cs_graph_t *g, const uint32_t *q, const uint32_t *nsend, const uint32_t *ncomm)
{
    const cs_sched_t *s = g->s;
    for (int a = 0; a < s->desc.nranks; a++) {
        const cs_rank_sched_t *ra = &s->ranks[a];
        const uint32_t *qa = q + g->base[a];
        uint32_t i = 0;
        while (i < nsend[a]) {
            const cs_step_t *first = &ra->steps[qa[i]];
            uint32_t j = i + 1;
            while (j < nsend[a] && same_queue(first, &ra->steps[qa[j]]))
                j++;
            int b = first->peer;
            const cs_rank_sched_t *rb = &s->ranks[b];
            const uint32_t *rl = q + g->base[b] + nsend[b];
            uint32_t nr = ncomm[b] - nsend[b];
            uint32_t k = recv_lower_bound(rb, rl, nr, (uint32_t)a, first->chan);
            for (uint32_t x = i; x < j && k < nr; x++, k++) {
                const cs_step_t *rs = &rb->steps[rl[k]];
                if ((uint32_t)rs->peer != (uint32_t)a || rs->chan != first->chan)
                    break;
                uint64_t gs = g->base[a] + qa[x], gr = g->base[b] + rl[k];
                g->partner[gs] = gr;
                g->partner[gr] = gs;
            }
            i = j;
        }
    }
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
            complete(k, r, i);
            executed++;
            uint64_t p = g->partner[gid];
            if (p != CS_NONE) {
                int pr = s->ranks[r].steps[i].peer;
                complete(k, pr, (uint32_t)(p - g->base[pr]));
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

/* FIFO links of one rank from its queues qr (see build_queues): writes the
 * pairs (a, b), "b is queued behind a", to pairs[]; returns their number.
 * A link that repeats one of b's dependencies is left out (generators
 * usually chain a queue's operations themselves): it would only add an
 * edge that Kahn counts twice. */
static uint32_t rank_links(const cs_rank_sched_t *rk, const uint32_t *qr, uint32_t nsend,
                           uint32_t ncomm, uint32_t *pairs)
{
    uint32_t n = 0;
    for (uint32_t j = 1; j < ncomm; j++) {
        if (j == nsend)
            continue; /* first receive: no predecessor among sends */
        uint32_t a = qr[j - 1], b = qr[j];
        if (same_queue(&rk->steps[a], &rk->steps[b]) && !depends_on(rk, b, a)) {
            pairs[2 * n] = a;
            pairs[2 * n + 1] = b;
            n++;
        }
    }
    return n;
}

/* Build the successor CSR and in-degrees, then run Kahn.  `q` (the queues,
 * nsteps entries) is overwritten rank by rank with the in-degrees. */
static int build_order(cs_graph_t *g, uint32_t *q, const uint32_t *nsend, const uint32_t *ncomm)
{
    const cs_sched_t *s = g->s;
    uint64_t N = g->nsteps, n1 = N ? N : 1;
    int P = s->desc.nranks;
    cs__kahn_t k = {.g = g, .indeg = q};
    uint64_t nsucc = 0;
    uint32_t m = max_rank_steps(s);
    uint32_t *links = malloc(2 * (size_t)(m ? m : 1) * sizeof(*links));
    int st = CS_ERR_NOMEM;
    k.dbase = malloc(((size_t)P + 1) * sizeof(*k.dbase));
    if (k.dbase == NULL || links == NULL)
        goto out;
    for (int r = 0; r < P; r++)
        nsucc += s->ranks[r].ndeps + ncomm[r];
    k.doff = malloc(n1 * sizeof(*k.doff));
    k.dadj = malloc((nsucc ? nsucc : 1) * sizeof(*k.dadj));
    k.rl = calloc((size_t)P, sizeof(*k.rl));
    k.rq = malloc((size_t)P * sizeof(*k.rq));
    k.inq = calloc((size_t)P, sizeof(*k.inq));
    if (!k.doff || !k.dadj || !k.rl || !k.rq || !k.inq)
        goto out;
    k.dbase[0] = 0;
    for (int r = 0; r < P; r++) {
        const cs_rank_sched_t *rk = &s->ranks[r];
        uint64_t b = g->base[r];
        uint32_t nl = rank_links(rk, q + b, nsend[r], ncomm[r], links);
        /* the queues of this rank are consumed: its part of q becomes indeg */
        for (uint32_t i = 0; i < rk->nsteps; i++) {
            const cs_step_t *sp = &rk->steps[i];
            k.indeg[b + i] = sp->ndeps + (g->partner[b + i] == CS_NONE &&
                                          (is_send(sp) || is_recv(sp)));
            k.doff[b + i] = 0;
        }
        for (uint32_t i = 0; i < rk->nsteps; i++) {
            const uint32_t *d = cs_step_deps(rk, &rk->steps[i]);
            for (uint32_t j = 0; j < rk->steps[i].ndeps; j++)
                k.doff[b + d[j]]++;
        }
        for (uint32_t l = 0; l < nl; l++) {
            k.doff[b + links[2 * l]]++;
            k.indeg[b + links[2 * l + 1]]++;
        }
        uint32_t acc = 0; /* counts to ends, then each fill moves an end back */
        for (uint32_t i = 0; i < rk->nsteps; i++) {
            acc += k.doff[b + i];
            k.doff[b + i] = acc;
        }
        k.dbase[r + 1] = k.dbase[r] + acc;
        uint32_t *adj = k.dadj + k.dbase[r];
        for (uint32_t l = nl; l-- > 0;)
            adj[--k.doff[b + links[2 * l]]] = links[2 * l + 1];
        for (uint32_t i = rk->nsteps; i-- > 0;) {
            const uint32_t *d = cs_step_deps(rk, &rk->steps[i]);
            for (uint32_t j = rk->steps[i].ndeps; j-- > 0;)
                adj[--k.doff[b + d[j]]] = i;
        }
    }
    kahn(&k);
    st = k.nomem ? CS_ERR_NOMEM : CS_OK;
out:
    for (int r = 0; k.rl != NULL && r < P; r++)
        free(k.rl[r].v);
    free(k.rl);
    free(k.inq);
    free(k.rq);
    free(k.dadj);
    free(k.doff);
    free(k.dbase);
    free(links);
    return st;
}

int cs_graph_init(cs_graph_t *g, const cs_sched_t *s, cs_err_t *err)
{
    int P = s->desc.nranks;
    memset(g, 0, sizeof(*g));
    g->s = s;
    uint32_t *q = NULL, *cnt = NULL;
    cs__qkey_t *keys = NULL;
    g->base = malloc(((size_t)P + 1) * sizeof(*g->base));
    if (g->base == NULL)
        goto nomem;
    g->base[0] = 0;
    for (int r = 0; r < P; r++)
        g->base[r + 1] = g->base[r] + s->ranks[r].nsteps;
    uint64_t N = g->nsteps = g->base[P];
    g->partner = malloc((N ? N : 1) * sizeof(*g->partner));
    g->order = malloc((N ? N : 1) * sizeof(*g->order));
    q = malloc((N ? N : 1) * sizeof(*q));
    cnt = malloc(2 * (size_t)P * sizeof(*cnt));
    uint32_t m = max_rank_steps(s);
    keys = malloc((m ? m : 1) * sizeof(*keys));
    if (!g->partner || !g->order || !q || !cnt || !keys)
        goto nomem;
    for (uint64_t i = 0; i < N; i++)
        g->partner[i] = CS_NONE;
    build_queues(g, q, cnt, cnt + P, keys);
    free(keys);
    keys = NULL;
    match(g, q, cnt, cnt + P);
    for (int r = 0; r < P; r++)
        for (uint32_t j = 0; j < cnt[P + r]; j++)
            if (g->partner[g->base[r] + q[g->base[r] + j]] == CS_NONE)
                g->nunmatched++;
    if (build_order(g, q, cnt, cnt + P) != CS_OK)
        goto nomem;
    free(cnt);
    free(q);
    return CS_OK;
nomem:
    free(keys);
    free(cnt);
    free(q);
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
