/*
 * cs_stats_ab.c - the alpha-beta event simulation of a schedule
 * (cs_stats_ab_time, contract in cs_stats.h).
 *
 * The simulation keeps, per global step id: the number of dependencies not
 * yet done, the time the last one finished, and for a matched pair (indexed
 * by its send) how many halves are ready.  Completion events (end of a
 * transfer, end of a combination) sit in a binary heap ordered by
 * (time, sequence number).  All events of one time are processed first,
 * zero-cost steps cascading through a work list; then the transfers that may
 * start are gathered (pairs ready at this time and pairs waiting on a port
 * that was freed), sorted by (ready time, send id) and started while both of
 * their ports are free.  Waiting pairs sit in two intrusive doubly linked
 * lists, the sender's send queue and the receiver's receive queue, so that
 * starting one removes it from both in O(1).  Every array is allocated once
 * in ab_init and freed in ab_fini.
 */
#include <stdlib.h>
#include <string.h>

#include "cs_graph.h"
#include "cs_grow.h"
#include "cs_stats.h"

/* cs_step_deps without pointer arithmetic on a rank with no dependencies
 * (deps may be NULL there). */
static const uint32_t *deps_of(const cs_rank_sched_t *rk, const cs_step_t *st)
{
    return st->ndeps ? cs_step_deps(rk, st) : NULL;
}

/* ---- alpha-beta simulation -------------------------------------------------- */

enum { EV_XFER_END = 0, EV_STEP_END = 1, EV_SWU_END = 2, EV_SWD_END = 3 };

/* Phases of a switch step (cs__st_t.halves of the step itself). */
enum { SW_UPQ = 4, SW_UP, SW_DNQ, SW_DN };

typedef struct cs__ev {
    double t;
    uint64_t seq;
    uint64_t id; /* send gid (transfer) or step gid (combination) */
    int kind;
} cs__ev_t;

typedef struct cs__cand {
    double ready; /* pair ready time */
    uint64_t sid; /* send gid */
} cs__cand_t;

typedef struct cs__st {
    double ready;     /* time the last dependency finished (pair: both halves) */
    uint32_t pending; /* dependencies not done */
    int32_t rank;
    uint8_t halves; /* by send id: halves of the pair ready (3: started); switch step: SW_* */
} cs__st_t;

typedef struct cs__ab {
    const cs_sched_t *s;
    cs_graph_t g;
    uint64_t n, count;
    double alpha, beta, gamma, makespan;
    cs__st_t *st;              /* n: per-step state, one cache line per access */
    uint64_t *succ_off, *succ; /* CSR of dependents */
    uint64_t *sq_next, *sq_prev, *rq_next, *rq_prev; /* waiting queues, by send id */
    uint64_t *sq_head, *rq_head; /* per rank */
    double *cpu_free;            /* per rank: end of its last combination */
    uint8_t *sbusy, *rbusy, *trig; /* per rank: ports, trigger flags (1 send, 2 recv) */
    int32_t *trig_list;
    uint32_t ntrig;
    cs__ev_t *heap;
    uint64_t nheap, seq, ndone;
    size_t cap_heap;
    int nomem; /* a growing array could not grow: the run fails */
    uint64_t *work, nwork; /* steps whose dependencies are all done */
    cs__cand_t *cand;      /* transfers that may start now */
    uint64_t ncand;
    size_t cap_cand;
} cs__ab_t;

static int ev_less(const cs__ev_t *a, const cs__ev_t *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

/* Make room for one more element in a growing array; 0 (and the run
 * fails) when there is no memory. */
static int grow(cs__ab_t *a, void *arrp, size_t *cap, uint64_t used, size_t esz)
{
    if (cs_grow(arrp, cap, (size_t)used + 1, esz, 1024) == CS_OK)
        return 1;
    a->nomem = 1;
    return 0;
}

static void heap_push(cs__ab_t *a, double t, int kind, uint64_t id)
{
    if (!grow(a, &a->heap, &a->cap_heap, a->nheap, sizeof(*a->heap)))
        return;
    uint64_t i = a->nheap++;
    cs__ev_t e = {t, a->seq++, id, kind};
    while (i > 0 && ev_less(&e, &a->heap[(i - 1) / 2])) {
        a->heap[i] = a->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    a->heap[i] = e;
}

static cs__ev_t heap_pop(cs__ab_t *a)
{
    cs__ev_t top = a->heap[0], last = a->heap[--a->nheap];
    uint64_t i = 0;
    for (;;) {
        uint64_t c = 2 * i + 1;
        if (c >= a->nheap)
            break;
        if (c + 1 < a->nheap && ev_less(&a->heap[c + 1], &a->heap[c]))
            c++;
        if (!ev_less(&a->heap[c], &last))
            break;
        a->heap[i] = a->heap[c];
        i = c;
    }
    if (a->nheap > 0)
        a->heap[i] = last;
    return top;
}

static const cs_step_t *step_of(const cs__ab_t *a, uint64_t gid)
{
    int r = a->st[gid].rank;
    return &a->s->ranks[r].steps[gid - a->g.base[r]];
}

static double range_bytes(const cs__ab_t *a, int r, const cs_range_t *rg)
{
    const cs_buffer_t *b = &a->s->ranks[r].bufs[rg->buf];
    return (double)cs_range_elems(a->s, b, a->count, rg->off, rg->n);
}

static void trigger(cs__ab_t *a, int r, uint8_t what)
{
    if (a->trig[r] == 0)
        a->trig_list[a->ntrig++] = r;
    a->trig[r] |= what;
}

static void step_done(cs__ab_t *a, uint64_t gid, double t)
{
    a->ndone++;
    a->makespan = t > a->makespan ? t : a->makespan;
    for (uint64_t k = a->succ_off[gid]; k < a->succ_off[gid + 1]; k++) {
        uint64_t d = a->succ[k];
        a->st[d].ready = t > a->st[d].ready ? t : a->st[d].ready;
        if (--a->st[d].pending == 0)
            a->work[a->nwork++] = d;
    }
}

/* A combination of `bytes` on rank r, from time t; completes step gid. */
static void combine(cs__ab_t *a, int r, uint64_t gid, double t, double bytes)
{
    double cost = bytes * a->gamma;
    if (cost <= 0.0) {
        step_done(a, gid, t);
        return;
    }
    double start = a->cpu_free[r] > t ? a->cpu_free[r] : t;
    a->cpu_free[r] = start + cost;
    heap_push(a, start + cost, EV_STEP_END, gid);
}

static void add_cand(cs__ab_t *a, uint64_t sid)
{
    cs__cand_t c = {a->st[sid].ready, sid};
    if (grow(a, &a->cand, &a->cap_cand, a->ncand, sizeof(*a->cand)))
        a->cand[a->ncand++] = c;
}

static void queue_pair(cs__ab_t *a, uint64_t sid)
{
    int sr = a->st[sid].rank, rr = a->st[a->g.partner[sid]].rank;
    a->sq_prev[sid] = CS_NONE;
    a->sq_next[sid] = a->sq_head[sr];
    if (a->sq_head[sr] != CS_NONE)
        a->sq_prev[a->sq_head[sr]] = sid;
    a->sq_head[sr] = sid;
    a->rq_prev[sid] = CS_NONE;
    a->rq_next[sid] = a->rq_head[rr];
    if (a->rq_head[rr] != CS_NONE)
        a->rq_prev[a->rq_head[rr]] = sid;
    a->rq_head[rr] = sid;
    add_cand(a, sid);
}

static void unqueue_pair(cs__ab_t *a, uint64_t sid)
{
    int sr = a->st[sid].rank, rr = a->st[a->g.partner[sid]].rank;
    if (a->sq_prev[sid] != CS_NONE)
        a->sq_next[a->sq_prev[sid]] = a->sq_next[sid];
    else
        a->sq_head[sr] = a->sq_next[sid];
    if (a->sq_next[sid] != CS_NONE)
        a->sq_prev[a->sq_next[sid]] = a->sq_prev[sid];
    if (a->rq_prev[sid] != CS_NONE)
        a->rq_next[a->rq_prev[sid]] = a->rq_next[sid];
    else
        a->rq_head[rr] = a->rq_next[sid];
    if (a->rq_next[sid] != CS_NONE)
        a->rq_prev[a->rq_next[sid]] = a->rq_prev[sid];
    a->sq_next[sid] = a->sq_prev[sid] = a->rq_next[sid] = a->rq_prev[sid] = CS_NONE;
}

/* Queue the part of switch step gid on its rank's send port (up) or
 * receive port (down), ready at t. */
static void queue_part(cs__ab_t *a, uint64_t gid, int up, double t)
{
    int r = a->st[gid].rank;
    uint64_t *next = up ? a->sq_next : a->rq_next, *prev = up ? a->sq_prev : a->rq_prev;
    uint64_t *head = up ? a->sq_head : a->rq_head;
    prev[gid] = CS_NONE;
    next[gid] = head[r];
    if (head[r] != CS_NONE)
        prev[head[r]] = gid;
    head[r] = gid;
    a->st[gid].halves = up ? SW_UPQ : SW_DNQ;
    a->st[gid].ready = t;
    trigger(a, r, up ? 1 : 2);
    add_cand(a, gid);
}

static void unqueue_part(cs__ab_t *a, uint64_t gid, int up)
{
    int r = a->st[gid].rank;
    uint64_t *next = up ? a->sq_next : a->rq_next, *prev = up ? a->sq_prev : a->rq_prev;
    uint64_t *head = up ? a->sq_head : a->rq_head;
    if (prev[gid] != CS_NONE)
        next[prev[gid]] = next[gid];
    else
        head[r] = next[gid];
    if (next[gid] != CS_NONE)
        prev[next[gid]] = prev[gid];
    next[gid] = prev[gid] = CS_NONE;
}

/* A member of a switch operation is ready at t: the leader's pending
 * count holds the other members; when all are, every member with a source
 * queues its up part.  The leader's pending count then counts the parts
 * of the phase under way (ups, then downs). */
static void switch_ready(cs__ab_t *a, uint64_t gid, double t)
{
    uint64_t lead = a->g.partner[gid];
    if (lead != gid) {
        a->st[lead].ready = t > a->st[lead].ready ? t : a->st[lead].ready;
        if (--a->st[lead].pending == 0)
            a->work[a->nwork++] = lead;
        return;
    }
    uint32_t ups = 0;
    for (uint64_t m = lead; m != CS_NONE; m = a->g.swnext[m])
        ups += step_of(a, m)->src.n > 0;
    a->st[lead].pending = ups;
    for (uint64_t m = lead; m != CS_NONE; m = a->g.swnext[m])
        if (step_of(a, m)->src.n > 0)
            queue_part(a, m, 1, t);
}

/* The up part of member gid ended at t: its step is done unless it also
 * receives; the last up of the operation queues the down parts. */
static void switch_up_done(cs__ab_t *a, uint64_t gid, double t)
{
    uint64_t lead = a->g.partner[gid];
    if (step_of(a, gid)->dst.n == 0)
        step_done(a, gid, t);
    if (--a->st[lead].pending > 0)
        return;
    for (uint64_t m = lead; m != CS_NONE; m = a->g.swnext[m])
        if (step_of(a, m)->dst.n > 0)
            queue_part(a, m, 0, t);
}

/* Run the work list: steps whose dependencies are all done at time t. */
static void drain(cs__ab_t *a)
{
    while (a->nwork > 0) {
        uint64_t gid = a->work[--a->nwork];
        const cs_step_t *st = step_of(a, gid);
        double t = a->st[gid].ready;
        int r = a->st[gid].rank;
        if (st->kind == CS_STEP_REDUCE) {
            combine(a, r, gid, t, range_bytes(a, r, &st->dst));
        } else if (st->kind == CS_STEP_SWITCH) {
            switch_ready(a, gid, t);
        } else if (cs_kind_is_comm(st->kind)) {
            uint64_t sid = st->kind == CS_STEP_SEND ? gid : a->g.partner[gid];
            a->st[sid].ready = t > a->st[sid].ready ? t : a->st[sid].ready;
            if (++a->st[sid].halves == 2)
                queue_pair(a, sid);
        } else {
            step_done(a, gid, t); /* copy, nop: free */
        }
    }
}

static int cand_cmp(const void *pa, const void *pb)
{
    const cs__cand_t *x = pa, *y = pb;
    if (x->ready != y->ready)
        return x->ready < y->ready ? -1 : 1;
    return x->sid < y->sid ? -1 : x->sid > y->sid;
}

/* Start switch part gid (a candidate) when it is queued and its port is
 * free. */
static void start_part(cs__ab_t *a, uint64_t gid, double t)
{
    const cs_step_t *st = step_of(a, gid);
    int r = a->st[gid].rank, up = a->st[gid].halves == SW_UPQ;
    if (up ? a->sbusy[r] : a->rbusy[r])
        return;
    if (up)
        a->sbusy[r] = 1;
    else
        a->rbusy[r] = 1;
    a->st[gid].halves = up ? SW_UP : SW_DN;
    unqueue_part(a, gid, up);
    double b = range_bytes(a, r, up ? &st->src : &st->dst);
    heap_push(a, t + a->alpha + b * a->beta, up ? EV_SWU_END : EV_SWD_END, gid);
}

/* Gather the candidates of the triggered ports and start what can start.
 * A port's queue holds message pairs and switch parts (whose step is a
 * switch step; a part needs only its own port). */
static void start_transfers(cs__ab_t *a, double t)
{
    for (uint32_t k = 0; k < a->ntrig; k++) {
        int r = a->trig_list[k];
        if ((a->trig[r] & 1) && !a->sbusy[r])
            for (uint64_t p = a->sq_head[r]; p != CS_NONE; p = a->sq_next[p])
                if (a->st[p].halves >= SW_UPQ || !a->rbusy[a->st[a->g.partner[p]].rank])
                    add_cand(a, p);
        if ((a->trig[r] & 2) && !a->rbusy[r])
            for (uint64_t p = a->rq_head[r]; p != CS_NONE; p = a->rq_next[p])
                if (a->st[p].halves >= SW_UPQ || !a->sbusy[a->st[p].rank])
                    add_cand(a, p);
        a->trig[r] = 0;
    }
    a->ntrig = 0;
    if (a->ncand > 1)
        qsort(a->cand, a->ncand, sizeof(*a->cand), cand_cmp);
    for (uint64_t k = 0; k < a->ncand; k++) {
        uint64_t sid = a->cand[k].sid;
        uint8_t h = a->st[sid].halves;
        if (h == SW_UPQ || h == SW_DNQ) {
            start_part(a, sid, t);
            continue;
        }
        uint64_t rid = a->g.partner[sid];
        int sr = a->st[sid].rank, rr = a->st[rid].rank;
        if (h != 2 || a->sbusy[sr] || a->rbusy[rr])
            continue;
        a->st[sid].halves = 3; /* started */
        a->sbusy[sr] = a->rbusy[rr] = 1;
        unqueue_pair(a, sid);
        double b = range_bytes(a, sr, &step_of(a, sid)->src);
        heap_push(a, t + a->alpha + b * a->beta, EV_XFER_END, sid);
    }
    a->ncand = 0;
}

static void on_event(cs__ab_t *a, const cs__ev_t *e)
{
    if (e->kind == EV_STEP_END) {
        step_done(a, e->id, e->t);
        return;
    }
    if (e->kind == EV_SWU_END || e->kind == EV_SWD_END) {
        int r = a->st[e->id].rank, up = e->kind == EV_SWU_END;
        if (up)
            a->sbusy[r] = 0;
        else
            a->rbusy[r] = 0;
        trigger(a, r, up ? 1 : 2);
        if (up)
            switch_up_done(a, e->id, e->t);
        else
            step_done(a, e->id, e->t);
        return;
    }
    uint64_t sid = e->id, rid = a->g.partner[sid];
    int sr = a->st[sid].rank, rr = a->st[rid].rank;
    a->sbusy[sr] = a->rbusy[rr] = 0;
    trigger(a, sr, 1);
    trigger(a, rr, 2);
    step_done(a, sid, e->t);
    const cs_step_t *rs = step_of(a, rid);
    if (rs->kind == CS_STEP_RRECV)
        combine(a, rr, rid, e->t, range_bytes(a, rr, &rs->dst));
    else
        step_done(a, rid, e->t);
}

#define CS__ALLOC(p, n) (((p) = calloc((size_t)(n) + 1, sizeof(*(p)))) != NULL)

static void ab_fini(cs__ab_t *a)
{
    void *ptrs[] = {a->st, a->succ_off, a->succ,
                    a->sq_next, a->sq_prev, a->rq_next, a->rq_prev, a->sq_head, a->rq_head,
                    a->cpu_free, a->sbusy, a->rbusy, a->trig, a->trig_list, a->heap,
                    a->work, a->cand};
    for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++)
        free(ptrs[i]);
    cs_graph_fini(&a->g);
}

static int ab_init(cs__ab_t *a, const cs_sched_t *s, cs_err_t *err)
{
    int P = s->desc.nranks;
    a->s = s;
    int st = cs_graph_init(&a->g, s, err);
    if (st != CS_OK)
        return st;
    uint64_t n = a->n = a->g.nsteps, ndeps = 0;
    for (int r = 0; r < P; r++)
        ndeps += s->ranks[r].ndeps;
    if (!(CS__ALLOC(a->st, n) && CS__ALLOC(a->succ_off, n + 1) && CS__ALLOC(a->succ, ndeps) &&
          CS__ALLOC(a->sq_next, n) && CS__ALLOC(a->sq_prev, n) && CS__ALLOC(a->rq_next, n) &&
          CS__ALLOC(a->rq_prev, n) && CS__ALLOC(a->sq_head, P) && CS__ALLOC(a->rq_head, P) &&
          CS__ALLOC(a->cpu_free, P) && CS__ALLOC(a->sbusy, P) && CS__ALLOC(a->rbusy, P) &&
          CS__ALLOC(a->trig, P) && CS__ALLOC(a->trig_list, P) && CS__ALLOC(a->work, n)))
        return cs_err_set(err, CS_ERR_NOMEM, "alpha-beta simulation of %llu steps",
                          (unsigned long long)n);
    for (int r = 0; r < P; r++) {
        const cs_rank_sched_t *rk = &s->ranks[r];
        uint64_t b = a->g.base[r];
        a->sq_head[r] = a->rq_head[r] = CS_NONE;
        for (uint32_t i = 0; i < rk->nsteps; i++) {
            const uint32_t *dp = deps_of(rk, &rk->steps[i]);
            a->st[b + i].rank = r;
            a->st[b + i].pending = rk->steps[i].ndeps;
            for (uint32_t k = 0; k < rk->steps[i].ndeps; k++)
                a->succ_off[b + dp[k] + 1]++;
            /* a switch operation's leader also waits for its other members */
            if (rk->steps[i].kind == CS_STEP_SWITCH && a->g.partner[b + i] == b + i)
                for (uint64_t m = a->g.swnext[b + i]; m != CS_NONE; m = a->g.swnext[m])
                    a->st[b + i].pending++;
            if (a->st[b + i].pending == 0)
                a->work[a->nwork++] = b + i;
        }
    }
    for (uint64_t i = 0; i < n; i++)
        a->succ_off[i + 1] += a->succ_off[i];
    uint64_t *fill = a->sq_next; /* borrowed as a cursor, reset below */
    memcpy(fill, a->succ_off, n * sizeof(*fill));
    for (int r = 0; r < P; r++) {
        const cs_rank_sched_t *rk = &s->ranks[r];
        uint64_t b = a->g.base[r];
        for (uint32_t i = 0; i < rk->nsteps; i++) {
            const uint32_t *dp = deps_of(rk, &rk->steps[i]);
            for (uint32_t k = 0; k < rk->steps[i].ndeps; k++)
                a->succ[fill[b + dp[k]]++] = b + i;
        }
    }
    for (uint64_t i = 0; i < n; i++)
        a->sq_next[i] = a->sq_prev[i] = a->rq_next[i] = a->rq_prev[i] = CS_NONE;
    return CS_OK;
}

double cs_stats_ab_time(const cs_sched_t *s, double bytes, double alpha, double beta,
                        double gamma, cs_err_t *err)
{
    if (s == NULL || !(bytes >= 0 && alpha >= 0 && beta >= 0 && gamma >= 0)) {
        cs_err_set(err, CS_ERR_INVAL, "alpha-beta: expected a schedule and non-negative bytes, "
                                      "alpha, beta and gamma");
        return -1.0;
    }
    cs__ab_t a;
    memset(&a, 0, sizeof(a));
    double result = -1.0;
    if (ab_init(&a, s, err) != CS_OK)
        goto done;
    if (a.g.nstuck > 0) {
        cs_err_set(err, CS_ERR_VERIFY, "alpha-beta: %llu steps can never run",
                   (unsigned long long)a.g.nstuck);
        goto done;
    }
    a.count = cs_coll_block_count(s->desc.coll, s->desc.nranks, (uint64_t)(bytes + 0.5), 1);
    a.alpha = alpha;
    a.beta = beta;
    a.gamma = gamma;
    drain(&a);
    start_transfers(&a, 0.0);
    while (a.nheap > 0 && !a.nomem) {
        double t = a.heap[0].t;
        while (a.nheap > 0 && a.heap[0].t == t) {
            cs__ev_t e = heap_pop(&a);
            on_event(&a, &e);
            drain(&a);
        }
        start_transfers(&a, t);
    }
    if (a.nomem) {
        cs_err_set(err, CS_ERR_NOMEM, "alpha-beta simulation: event queue");
        goto done;
    }
    if (a.ndone != a.n) {
        cs_err_set(err, CS_ERR_INTERNAL, "alpha-beta: %llu of %llu steps ran",
                   (unsigned long long)a.ndone, (unsigned long long)a.n);
        goto done;
    }
    result = a.makespan;
done:
    ab_fini(&a);
    return result;
}
