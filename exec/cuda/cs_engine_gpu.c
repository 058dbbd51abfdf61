/*
 * cs_engine_gpu.c - the GPU step engine (contract in cs_gpu.h).
 *
 * Plan, computed once at create time.  cs__gpu_plan (cs_plan_gpu.c) gives
 * every step a host phase H:
 *   odd  H = 2g+1   communication step in NCCL group g (comm stream); both
 *                   halves of a message are in group g on their two ranks
 *   even H = 2k     local work (reduce, copy, the reduction half of an
 *                   rrecv) enqueued on the compute stream between group
 *                   k-1 and group k
 * Runs walk the items sorted by H: the compute stream gets its work in step
 * order, each group is one ncclGroupStart/End with its messages sorted by
 * (peer, channel, position on the channel), the order both sides agree
 * on.  Cross-stream waits:
 *   - a compute item waits for the event of the latest group it depends on
 *     (directly or through nops), unless the compute stream already did;
 *   - a group waits for the event recorded after the latest compute item
 *     any of its steps depends on.
 * Everything in the same stream is ordered by the stream itself.  A run
 * starts with the compute stream waiting for the comm (main) stream and
 * ends with the main stream waiting for the compute stream.
 *
 * Runs of copies that cs__gpu_merge_copies merges (same dependency set,
 * continuing ranges; cs_plan_gpu.c says why that is correct) are one
 * cudaMemcpyAsync, issued by the run's first step; the other members
 * become joins done when it is done.  At P = 1, allreduce dbtree (32 copy
 * steps) and broadcast chain (8) are then one copy like ring.
 */
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cs_gpu.h"
#include "cs_log.h"
#include "cs_plan.h"
#include "cs_time.h"

#define MEM_ALIGN 256 /* staging slots (and an empty buffer's allocation) */

typedef struct gstep {
    uint8_t kind;
    int32_t peer;
    int32_t H;       /* phase of the step as seen by its dependents */
    int32_t group;   /* comm part's group, -1 for local steps */
    int32_t cseq;    /* position on the compute stream, -1 when none */
    int32_t dg, dc;  /* done when group dg and compute item dc are done */
    int32_t rg, rc;  /* needs group rg and compute item rc (max over deps) */
    int32_t ev;      /* event recorded after the compute item, -1 none */
    uint16_t chan;
    uint32_t seq;    /* position on its (peer, channel, direction) */
    uint32_t lead;   /* the step that carries this one (itself unless a merged copy) */
    cs_range_t src, dst; /* ranges moved (a carrier of merged copies: the whole run) */
    char *a, *b;     /* send src / recv dst / local src (rrecv: staging), local dst */
    uint64_t elems;
} gstep_t;

typedef struct item {
    int32_t H;
    uint32_t step;
} item_t;

struct cs_gpu_engine {
    const cs_sched_t *s;
    const cs_rank_sched_t *rs;
    cs_nccl_t *nc;
    cs_engine_config_t cfg;
    int rank;
    size_t esize;
    uint32_t n, nitems, ngroups, nevents, merged;
    gstep_t *st;
    item_t *items;
    int32_t *ev_of; /* compute item -> its event, -1 none */
    ncclComm_t comm;
    cudaStream_t main, compute;
    cudaEvent_t start, end, t0, t1, *gev, *cev;
    char **mem;
    size_t *mem_bytes;  /* per buffer, then the staging area (cs_plan_layout) */
    size_t *stage_off;  /* per step: an rrecv's staging slot */
    uint32_t nmem;
    uint64_t prepared;
    int failed;
};

static const struct gstep *sort_items; /* qsort has no context argument */

/* By phase; inside a group by (peer, channel, position on the channel), the
 * order both sides of a peer pair agree on; local work in step order. */
static int item_cmp(const void *x, const void *y)
{
    const item_t *a = x, *b = y;
    if (a->H != b->H)
        return a->H < b->H ? -1 : 1;
    if (a->H & 1) {
        const struct gstep *p = &sort_items[a->step], *q = &sort_items[b->step];
        if (p->peer != q->peer)
            return p->peer < q->peer ? -1 : 1;
        if (p->chan != q->chan)
            return p->chan < q->chan ? -1 : 1;
        if (p->seq != q->seq)
            return p->seq < q->seq ? -1 : 1;
    }
    return a->step < b->step ? -1 : a->step > b->step;
}

static int32_t imax(int32_t a, int32_t b) { return a > b ? a : b; }

/* Phases, groups (cs__gpu_plan), compute order, events. */
static int plan(cs_gpu_engine_t *e, cs_err_t *err)
{
    const cs_rank_sched_t *rs = e->rs;
    size_t n1 = e->n ? e->n : 1;
    int32_t *grp = malloc(n1 * sizeof(*grp)), *H = malloc(n1 * sizeof(*H));
    uint32_t *seq = malloc(n1 * sizeof(*seq)), *lead = malloc(n1 * sizeof(*lead));
    cs_range_t *msrc = malloc(n1 * sizeof(*msrc)), *mdst = malloc(n1 * sizeof(*mdst));
    int st = grp && H && seq && lead && msrc && mdst
                 ? cs__gpu_plan(e->s, e->rank, grp, H, seq, err)
                 : cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    if (st == CS_OK)
        st = cs__gpu_merge_copies(rs, lead, msrc, mdst, &e->merged, err);
    e->nitems = 0;
    for (uint32_t i = 0; i < e->n && st == CS_OK; i++) {
        const cs_step_t *x = &rs->steps[i];
        gstep_t *t = &e->st[i];
        /* a merged copy other than its run's carrier is a join on the carrier */
        t->kind = lead[i] != i ? CS_STEP_NOP : x->kind;
        t->peer = x->peer, t->chan = x->chan, t->seq = seq[i];
        t->lead = lead[i], t->src = msrc[i], t->dst = mdst[i];
        t->group = grp[i], t->H = H[i], t->cseq = -1, t->ev = -1;
        if (t->group >= 0)
            e->ngroups = (uint32_t)imax((int32_t)e->ngroups, t->group + 1);
        if (t->kind != CS_STEP_NOP)
            e->items[e->nitems++] = (item_t){t->kind == CS_STEP_RRECV ? 2 * t->group + 1 : t->H, i};
        if (t->kind == CS_STEP_RRECV)
            e->items[e->nitems++] = (item_t){t->H, i};
    }
    free(grp), free(H), free(seq), free(lead), free(msrc), free(mdst);
    if (st != CS_OK)
        return st;
    sort_items = e->st;
    qsort(e->items, e->nitems, sizeof(*e->items), item_cmp);
    /* Compute order; an rrecv has two items, its second one is the reduction. */
    int32_t c = 0;
    for (uint32_t k = 0; k < e->nitems; k++) {
        gstep_t *t = &e->st[e->items[k].step];
        if ((e->items[k].H & 1) == 0)
            t->cseq = c++;
    }
    /* Done / needs pairs, in step order (dependencies and carriers come first). */
    for (uint32_t i = 0; i < e->n; i++) {
        const cs_step_t *x = &rs->steps[i];
        gstep_t *t = &e->st[i];
        const uint32_t *d = cs_step_deps(rs, x);
        t->rg = t->rc = -1;
        for (uint32_t j = 0; j < x->ndeps; j++) {
            t->rg = imax(t->rg, e->st[d[j]].dg);
            t->rc = imax(t->rc, e->st[d[j]].dc);
        }
        if (t->lead != i)
            t->dg = e->st[t->lead].dg, t->dc = e->st[t->lead].dc;
        else if (t->kind == CS_STEP_NOP)
            t->dg = t->rg, t->dc = t->rc;
        else if (t->kind == CS_STEP_SEND || t->kind == CS_STEP_RECV)
            t->dg = t->group, t->dc = -1;
        else
            t->dg = -1, t->dc = t->cseq;
    }
    /* Events: a compute item some group waits for. */
    int32_t *need = e->ev_of = calloc((size_t)c + 1, sizeof(*need));
    if (!need)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < e->n; i++)
        if (cs_kind_is_comm(e->st[i].kind) && e->st[i].rc >= 0)
            need[e->st[i].rc] = 1;
    for (uint32_t i = 0; i < e->n; i++) {
        int32_t q = e->st[i].cseq;
        if (q >= 0)
            e->st[i].ev = need[q] ? (int32_t)e->nevents++ : -1;
        if (q >= 0)
            need[q] = e->st[i].ev;
    }
    return CS_OK;
}

static int alloc_all(cs_gpu_engine_t *e, cs_err_t *err)
{
    const cs_rank_sched_t *rs = e->rs;
    cudaError_t ce;
    if ((ce = cudaStreamCreateWithFlags(&e->main, cudaStreamNonBlocking)) != cudaSuccess ||
        (ce = cudaStreamCreateWithFlags(&e->compute, cudaStreamNonBlocking)) != cudaSuccess)
        return cs__gpu_cuda_err(err, ce, "cudaStreamCreate");
    cudaEvent_t *evs[] = {&e->start, &e->end};
    for (int k = 0; k < 2; k++)
        if ((ce = cudaEventCreateWithFlags(evs[k], cudaEventDisableTiming)) != cudaSuccess)
            return cs__gpu_cuda_err(err, ce, "cudaEventCreate");
    if ((ce = cudaEventCreate(&e->t0)) != cudaSuccess || (ce = cudaEventCreate(&e->t1)) != cudaSuccess)
        return cs__gpu_cuda_err(err, ce, "cudaEventCreate");
    e->gev = calloc(e->ngroups + 1, sizeof(*e->gev));
    e->cev = calloc(e->nevents + 1, sizeof(*e->cev));
    e->nmem = (uint32_t)rs->nbufs + 1;
    e->mem = calloc(e->nmem, sizeof(*e->mem));
    e->mem_bytes = calloc(e->nmem, sizeof(*e->mem_bytes));
    e->stage_off = calloc(e->n ? e->n : 1, sizeof(*e->stage_off));
    if (!e->gev || !e->cev || !e->mem || !e->mem_bytes || !e->stage_off)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    for (uint32_t g = 0; g < e->ngroups; g++)
        if ((ce = cudaEventCreateWithFlags(&e->gev[g], cudaEventDisableTiming)) != cudaSuccess)
            return cs__gpu_cuda_err(err, ce, "cudaEventCreate");
    for (uint32_t k = 0; k < e->nevents; k++)
        if ((ce = cudaEventCreateWithFlags(&e->cev[k], cudaEventDisableTiming)) != cudaSuccess)
            return cs__gpu_cuda_err(err, ce, "cudaEventCreate");
    cs_plan_layout(e->s, e->rank, e->cfg.max_count, e->esize, MEM_ALIGN, e->mem_bytes,
                   e->stage_off);
    for (uint32_t b = 0; b < e->nmem; b++) {
        size_t bytes = e->mem_bytes[b] ? e->mem_bytes[b] : MEM_ALIGN;
        if ((ce = cudaMalloc((void **)&e->mem[b], bytes)) != cudaSuccess) {
            e->mem[b] = NULL;
            return cs__gpu_cuda_err(err, ce, "cudaMalloc");
        }
    }
    return CS_OK;
}

int cs_gpu_engine_create(const cs_sched_t *s, cs_nccl_t *c, const cs_engine_config_t *cfg,
                         cs_gpu_engine_t **out, cs_err_t *err)
{
    int rank = cs_nccl_rank(c);
    if (cs_nccl_size(c) != s->desc.nranks)
        return cs_err_set(err, CS_ERR_INVAL, "communicator of %d ranks for a schedule of %d ranks",
                          cs_nccl_size(c), s->desc.nranks);
    if ((unsigned)cfg->dtype >= CS_DT_COUNT || (unsigned)cfg->op >= CS_OP_COUNT)
        return cs_err_set(err, CS_ERR_UNSUPPORTED, "no GPU reduction for this type / operator");
    int st = CS_OK;
    cs_gpu_engine_t *e = calloc(1, sizeof(*e));
    if (!e)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    e->s = s, e->rs = &s->ranks[rank], e->nc = c, e->cfg = *cfg, e->rank = rank;
    if (e->cfg.timeout_s <= 0)
        e->cfg.timeout_s = 60;
    e->esize = cs_dtype_size(cfg->dtype);
    e->n = e->rs->nsteps;
    e->prepared = UINT64_MAX;
    e->st = calloc(e->n ? e->n : 1, sizeof(*e->st));
    e->items = calloc(2 * (size_t)e->n + 1, sizeof(*e->items));
    if (!e->st || !e->items) {
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if ((st = plan(e, err)) != CS_OK || (st = alloc_all(e, err)) != CS_OK)
        goto fail;
    e->comm = (ncclComm_t)cs__nccl_comm(c);
    CS_INFO("exec", "rank %d: %u steps in %u NCCL groups, %u events, %u copies merged into "
            "others", rank, e->n, e->ngroups, e->nevents, e->merged);
    *out = e;
    return CS_OK;
fail:
    cs_gpu_engine_destroy(e);
    return st;
}

void cs_gpu_engine_destroy(cs_gpu_engine_t *e)
{
    if (!e)
        return;
    if (!e->failed && e->main)
        cudaStreamSynchronize(e->main);
    for (uint32_t b = 0; e->mem && b < e->nmem; b++)
        if (e->mem[b])
            cudaFree(e->mem[b]);
    for (uint32_t g = 0; e->gev && g < e->ngroups; g++)
        if (e->gev[g])
            cudaEventDestroy(e->gev[g]);
    for (uint32_t k = 0; e->cev && k < e->nevents; k++)
        if (e->cev[k])
            cudaEventDestroy(e->cev[k]);
    cudaEvent_t evs[] = {e->start, e->end, e->t0, e->t1};
    for (int k = 0; k < 4; k++)
        if (evs[k])
            cudaEventDestroy(evs[k]);
    if (e->main)
        cudaStreamDestroy(e->main);
    if (e->compute)
        cudaStreamDestroy(e->compute);
    free(e->gev);
    free(e->cev);
    free(e->mem);
    free(e->mem_bytes);
    free(e->stage_off);
    free(e->st);
    free(e->items);
    free(e->ev_of);
    free(e);
}

void *cs_gpu_engine_buf(cs_gpu_engine_t *e, int buf)
{
    return (buf >= 0 && buf < e->rs->nbufs) ? e->mem[buf] : NULL;
}

uint64_t cs_gpu_engine_buf_elems(const cs_gpu_engine_t *e, int buf, uint64_t count)
{
    return cs_plan_buf_elems(e->s, e->rank, buf, count);
}

void *cs_gpu_engine_stream(cs_gpu_engine_t *e) { return e->main; }
uint32_t cs_gpu_engine_levels(const cs_gpu_engine_t *e) { return e->ngroups; }
uint32_t cs_gpu_engine_merged(const cs_gpu_engine_t *e) { return e->merged; }

static int check_buf(cs_gpu_engine_t *e, int buf, size_t bytes, cs_err_t *err)
{
    if (buf < 0 || buf >= e->rs->nbufs || bytes > e->mem_bytes[buf])
        return cs_err_set(err, CS_ERR_RANGE, "buffer %d: %zu bytes out of range", buf, bytes);
    return CS_OK;
}

int cs_gpu_engine_upload(cs_gpu_engine_t *e, int buf, const void *host, size_t bytes, cs_err_t *err)
{
    int st = check_buf(e, buf, bytes, err);
    cudaError_t ce;
    if (st == CS_OK && bytes &&
        ((ce = cudaMemcpyAsync(e->mem[buf], host, bytes, cudaMemcpyHostToDevice, e->main)) !=
             cudaSuccess ||
         (ce = cudaStreamSynchronize(e->main)) != cudaSuccess))
        st = cs__gpu_cuda_err(err, ce, "cudaMemcpy to device");
    return st;
}

int cs_gpu_engine_download(cs_gpu_engine_t *e, int buf, void *host, size_t bytes, cs_err_t *err)
{
    int st = check_buf(e, buf, bytes, err);
    cudaError_t ce;
    if (st == CS_OK && (ce = cudaStreamSynchronize(e->main)) != cudaSuccess)
        st = cs__gpu_cuda_err(err, ce, "cudaStreamSynchronize");
    if (st == CS_OK && bytes &&
        ((ce = cudaMemcpyAsync(host, e->mem[buf], bytes, cudaMemcpyDeviceToHost, e->main)) !=
             cudaSuccess ||
         (ce = cudaStreamSynchronize(e->main)) != cudaSuccess))
        st = cs__gpu_cuda_err(err, ce, "cudaMemcpy to host");
    return st;
}

int cs_gpu_engine_memset(cs_gpu_engine_t *e, int buf, int byte, size_t bytes, cs_err_t *err)
{
    int st = check_buf(e, buf, bytes, err);
    cudaError_t ce;
    if (st == CS_OK && ((ce = cudaMemsetAsync(e->mem[buf], byte, bytes, e->main)) != cudaSuccess ||
                        (ce = cudaStreamSynchronize(e->main)) != cudaSuccess))
        st = cs__gpu_cuda_err(err, ce, "cudaMemset");
    return st;
}

static char *range_ptr(cs_gpu_engine_t *e, const cs_range_t *r, uint64_t count)
{
    const cs_buffer_t *b = &e->rs->bufs[r->buf];
    return e->mem[r->buf] + cs_buf_elem_off(e->s, b, count, r->off) * e->esize;
}

static void prepare(cs_gpu_engine_t *e, uint64_t count)
{
    char *stage = e->mem[e->nmem - 1];
    for (uint32_t i = 0; i < e->n; i++) {
        gstep_t *t = &e->st[i]; /* kind and ranges after copy merging */
        const cs_range_t *r = t->kind == CS_STEP_SEND ? &t->src : &t->dst;
        t->a = t->b = NULL;
        t->elems = 0;
        if (t->kind == CS_STEP_NOP)
            continue;
        t->elems = cs_range_elems(e->s, &e->rs->bufs[r->buf], count, r->off, r->n);
        if (t->kind == CS_STEP_SEND || t->kind == CS_STEP_REDUCE || t->kind == CS_STEP_COPY)
            t->a = range_ptr(e, &t->src, count);
        if (t->kind != CS_STEP_SEND)
            t->b = range_ptr(e, &t->dst, count);
        if (t->kind == CS_STEP_RRECV)
            t->a = stage + e->stage_off[i];
    }
    e->prepared = count;
}

/* One compute item: the local step (or the reduction of an rrecv). */
static int enqueue_local(cs_gpu_engine_t *e, gstep_t *t, int32_t *waited_g, cs_err_t *err)
{
    cudaError_t ce = cudaSuccess;
    int32_t need = t->kind == CS_STEP_RRECV ? t->group : t->rg;
    if (need > *waited_g) {
        if ((ce = cudaStreamWaitEvent(e->compute, e->gev[need], 0)) != cudaSuccess)
            return cs__gpu_cuda_err(err, ce, "cudaStreamWaitEvent");
        *waited_g = need;
    }
    size_t bytes = t->elems * e->esize;
    if (t->kind == CS_STEP_COPY && bytes)
        ce = cudaMemcpyAsync(t->b, t->a, bytes, cudaMemcpyDeviceToDevice, e->compute);
    else if (t->kind == CS_STEP_REDUCE || t->kind == CS_STEP_RRECV)
        ce = (cudaError_t)cs__gpu_reduce(t->b, t->a, t->elems, e->cfg.dtype, e->cfg.op, e->compute);
    if (ce != cudaSuccess)
        return cs__gpu_cuda_err(err, ce, "local step");
    if (t->ev >= 0 && (ce = cudaEventRecord(e->cev[t->ev], e->compute)) != cudaSuccess)
        return cs__gpu_cuda_err(err, ce, "cudaEventRecord");
    return CS_OK;
}

/* Group g: items [k, end) all with H == 2g+1. */
static int enqueue_group(cs_gpu_engine_t *e, int32_t g, uint32_t k, uint32_t end,
                         int32_t *waited_c, cs_err_t *err)
{
    int32_t need = -1;
    for (uint32_t j = k; j < end; j++)
        need = imax(need, e->st[e->items[j].step].rc);
    cudaError_t ce;
    if (need > *waited_c) {
        int32_t ev = e->ev_of[need];
        if (ev < 0)
            return cs_err_set(err, CS_ERR_INTERNAL, "group %d: no event for compute item %d", g, need);
        if ((ce = cudaStreamWaitEvent(e->main, e->cev[ev], 0)) != cudaSuccess)
            return cs__gpu_cuda_err(err, ce, "cudaStreamWaitEvent");
        *waited_c = need;
    }
    ncclResult_t r = ncclGroupStart();
    for (uint32_t j = k; j < end && r == ncclSuccess; j++) {
        gstep_t *t = &e->st[e->items[j].step];
        size_t bytes = t->elems * e->esize;
        if (!bytes)
            continue; /* both sides skip an empty message */
        if (t->kind == CS_STEP_SEND)
            r = ncclSend(t->a, bytes, ncclUint8, t->peer, e->comm, e->main);
        else
            r = ncclRecv(t->kind == CS_STEP_RRECV ? t->a : t->b, bytes, ncclUint8, t->peer,
                         e->comm, e->main);
    }
    ncclResult_t r2 = ncclGroupEnd();
    r = r != ncclSuccess ? r : r2;
    if (r != ncclSuccess)
        return cs_err_set(err, cs__gpu_nccl_status(r), "rank %d: NCCL group %d: %s (%d)", e->rank,
                          g, ncclGetErrorString(r), (int)r);
    if ((ce = cudaEventRecord(e->gev[g], e->main)) != cudaSuccess)
        return cs__gpu_cuda_err(err, ce, "cudaEventRecord");
    return CS_OK;
}

int cs_gpu_engine_enqueue(cs_gpu_engine_t *e, uint64_t count, cs_err_t *err)
{
    if (e->failed)
        return cs_err_set(err, CS_ERR_INVAL, "the engine failed before: destroy it");
    if (count > e->cfg.max_count)
        return cs_err_set(err, CS_ERR_RANGE, "count %llu above the engine's maximum %llu",
                          (unsigned long long)count, (unsigned long long)e->cfg.max_count);
    if (count != e->prepared)
        prepare(e, count);
    cudaError_t ce;
    if ((ce = cudaEventRecord(e->start, e->main)) != cudaSuccess ||
        (ce = cudaStreamWaitEvent(e->compute, e->start, 0)) != cudaSuccess)
        return cs__gpu_cuda_err(err, ce, "starting a run");
    int32_t waited_g = -1, waited_c = -1;
    int st = CS_OK;
    for (uint32_t k = 0; k < e->nitems && st == CS_OK;) {
        int32_t H = e->items[k].H;
        if (H & 1) {
            uint32_t end = k;
            while (end < e->nitems && e->items[end].H == H)
                end++;
            st = enqueue_group(e, H / 2, k, end, &waited_c, err);
            k = end;
        } else {
            st = enqueue_local(e, &e->st[e->items[k].step], &waited_g, err);
            k++;
        }
    }
    if (st == CS_OK && ((ce = cudaEventRecord(e->end, e->compute)) != cudaSuccess ||
                        (ce = cudaStreamWaitEvent(e->main, e->end, 0)) != cudaSuccess))
        st = cs__gpu_cuda_err(err, ce, "ending a run");
    if (st != CS_OK)
        e->failed = 1;
    return st;
}

/* Wait for `ev` (recorded on the main stream), bounded by the timeout. */
static int wait_event(cs_gpu_engine_t *e, cudaEvent_t ev, cs_err_t *err)
{
    struct timespec nap = {0, 20000};
    double t0 = cs_now_s();
    for (;;) {
        cudaError_t ce = cudaEventQuery(ev);
        if (ce == cudaSuccess)
            return CS_OK;
        if (ce != cudaErrorNotReady) {
            e->failed = 1;
            return cs__gpu_cuda_err(err, ce, "waiting for a run");
        }
        int st = cs__nccl_async_error(e->comm, err);
        if (st != CS_OK) {
            e->failed = 1;
            cs__nccl_set_failed(e->nc);
            return st;
        }
        double dt = cs_now_s() - t0;
        if (dt > e->cfg.timeout_s) {
            e->failed = 1;
            cs__nccl_set_failed(e->nc);
            return cs_err_set(err, CS_ERR_TIMEOUT,
                              "rank %d: no completion for %.0f s; did a peer die or run "
                              "something else?", e->rank, e->cfg.timeout_s);
        }
        nanosleep(&nap, NULL);
    }
}

int cs_gpu_engine_wait(cs_gpu_engine_t *e, cs_err_t *err)
{
    cudaError_t ce = cudaEventRecord(e->t1, e->main);
    if (ce != cudaSuccess)
        return cs__gpu_cuda_err(err, ce, "cudaEventRecord");
    return wait_event(e, e->t1, err);
}

int cs_gpu_engine_run(cs_gpu_engine_t *e, uint64_t count, cs_err_t *err)
{
    int st = cs_gpu_engine_enqueue(e, count, err);
    return st == CS_OK ? cs_gpu_engine_wait(e, err) : st;
}

int cs_gpu_engine_time(cs_gpu_engine_t *e, uint64_t count, long iters, int baseline,
                       double *seconds, cs_err_t *err)
{
    if (iters < 1)
        return cs_err_set(err, CS_ERR_INVAL, "iters must be >= 1");
    cudaError_t ce = cudaEventRecord(e->t0, e->main);
    if (ce != cudaSuccess)
        return cs__gpu_cuda_err(err, ce, "cudaEventRecord");
    int st = CS_OK;
    for (long i = 0; i < iters && st == CS_OK; i++)
        st = baseline ? cs_nccl_baseline(e->nc, &e->s->desc, e->cfg.dtype, e->cfg.op, count,
                                         e->mem[CS_BUF_IN], e->mem[CS_BUF_OUT], e->main, err)
                      : cs_gpu_engine_enqueue(e, count, err);
    if (st == CS_OK)
        st = cs_gpu_engine_wait(e, err);
    float ms = 0;
    if (st == CS_OK && (ce = cudaEventElapsedTime(&ms, e->t0, e->t1)) != cudaSuccess)
        st = cs__gpu_cuda_err(err, ce, "cudaEventElapsedTime");
    if (st == CS_OK)
        *seconds = (double)ms * 1e-3 / (double)iters;
    return st;
}
