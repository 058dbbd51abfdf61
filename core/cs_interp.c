/*
 * cs_interp.c - the reference interpreter (contracts in cs_interp.h).
 *
 * Memory: a flat table of pointers, one per (rank, buffer), indexed through
 * first[r] (the index of rank r's buffer 0).  in/out entries point at caller
 * memory (cs_interp_exec) or at buffers allocated by cs_interp_run; scratch
 * buffers are always owned here.  A step's range becomes a byte pointer and
 * an element count; when the source and destination of a copy or a
 * reduction overlap (a rank sending to itself, a local step within one
 * buffer) the source is staged through a temporary buffer so the reduction
 * functions' no-overlap contract holds.
 */
#include "cs_interp.h"

#include <stdlib.h>
#include <string.h>

#include "cs_graph.h"
#include "cs_log.h"

#define CS__POISON 0xA5 /* byte pattern: never an integer value in any type */

uint64_t cs_interp_buf_elems(const cs_sched_t *s, int rank, int buf, uint64_t count)
{
    if (rank < 0 || rank >= s->desc.nranks || buf < 0 || buf >= s->ranks[rank].nbufs)
        return 0;
    const cs_buffer_t *b = &s->ranks[rank].bufs[buf];
    return cs_range_elems(s, b, count, 0, b->nchunks);
}

typedef struct cs__mem {
    const cs_sched_t *s;
    uint64_t count;
    size_t esz;
    uint64_t *first; /* nranks + 1 */
    unsigned char **ptr; /* first[nranks] entries */
    unsigned char *tmp;  /* staging for overlapping operands */
    size_t tmp_cap;
    unsigned char *acc;  /* a switch operation's result */
    size_t acc_cap;
} cs__mem_t;

/* Pointer and element count of a range of `rank`; NULL pointer when the
 * buffer has no memory (in of an in-place run). */
static unsigned char *range_ptr(const cs__mem_t *m, int rank, const cs_range_t *rg, uint64_t *n)
{
    const cs_buffer_t *b = &m->s->ranks[rank].bufs[rg->buf];
    *n = cs_range_elems(m->s, b, m->count, rg->off, rg->n);
    unsigned char *base = m->ptr[m->first[rank] + rg->buf];
    if (base == NULL)
        return NULL;
    return base + cs_buf_elem_off(m->s, b, m->count, rg->off) * m->esz;
}

/* dst := src (reduce == NULL) or dst := dst op src, for n elements. */
static int apply(cs__mem_t *m, cs_reduce_fn_t reduce, unsigned char *dst, const unsigned char *src,
                 uint64_t n, cs_err_t *err)
{
    size_t bytes = (size_t)n * m->esz;
    if (n == 0)
        return CS_OK;
    if (reduce == NULL) {
        memmove(dst, src, bytes);
        return CS_OK;
    }
    if (src < dst + bytes && dst < src + bytes) {
        if (m->tmp_cap < bytes) {
            unsigned char *t = realloc(m->tmp, bytes);
            if (t == NULL)
                return cs_err_set(err, CS_ERR_NOMEM, "interpreter: %zu bytes of staging", bytes);
            m->tmp = t;
            m->tmp_cap = bytes;
        }
        memcpy(m->tmp, src, bytes);
        src = m->tmp;
    }
    reduce(dst, src, (size_t)n);
    return CS_OK;
}

/* A switch operation led by gid: the reduction of the members' sources in
 * group order (allreduce, reduce) or the writer's source (multicast) is
 * built in m->acc, then copied into every member's destination. */
static int run_switch(cs__mem_t *m, const cs_graph_t *g, cs_reduce_fn_t reduce, uint64_t gid,
                      cs_err_t *err)
{
    uint64_t n = UINT64_MAX;
    int have = 0;
    for (int pass = 0; pass < 2; pass++)
        for (uint64_t x = gid; x != CS_NONE; x = g->swnext[x]) {
            int r;
            uint32_t i;
            cs_graph_locate(g, x, &r, &i);
            const cs_step_t *st = cs_graph_step(g, r, i);
            const cs_range_t *rg = pass == 0 ? &st->src : &st->dst;
            if (rg->n == 0)
                continue;
            uint64_t k;
            unsigned char *p = range_ptr(m, r, rg, &k);
            if (n == UINT64_MAX) {
                n = k;
                size_t bytes = (size_t)n * m->esz;
                if (m->acc_cap < bytes) {
                    unsigned char *a = realloc(m->acc, bytes);
                    if (a == NULL)
                        return cs_err_set(err, CS_ERR_NOMEM, "interpreter: %zu bytes", bytes);
                    m->acc = a;
                    m->acc_cap = bytes;
                }
            }
            if (k != n)
                return cs_err_set(err, CS_ERR_VERIFY,
                                  "rank %d step %u: %llu elements in a switch operation of %llu "
                                  "at count %llu",
                                  r, i, (unsigned long long)k, (unsigned long long)n,
                                  (unsigned long long)m->count);
            if (p == NULL && k > 0)
                return cs_err_set(err, CS_ERR_INVAL, "rank %d step %u uses 'in', which has no "
                                  "memory", r, i);
            if (k == 0)
                continue;
            if (pass == 1)
                memmove(p, m->acc, (size_t)k * m->esz);
            else if (!have || st->op == CS_SW_MULTICAST)
                memcpy(m->acc, p, (size_t)k * m->esz);
            else
                reduce(m->acc, p, (size_t)k);
            have = 1;
        }
    return CS_OK;
}

/* One event of the global order: a local step, or a matched pair given as
 * its send, or a switch operation given as its leader. */
static int run_event(cs__mem_t *m, const cs_graph_t *g, cs_reduce_fn_t reduce, uint64_t gid,
                     cs_err_t *err)
{
    int r;
    uint32_t i;
    cs_graph_locate(g, gid, &r, &i);
    const cs_step_t *st = cs_graph_step(g, r, i);
    const cs_range_t *srg = &st->src, *drg = &st->dst;
    int dr = r;
    switch (st->kind) {
    case CS_STEP_NOP:
        return CS_OK;
    case CS_STEP_SWITCH:
        return run_switch(m, g, reduce, gid, err);
    case CS_STEP_COPY:
    case CS_STEP_REDUCE:
        break;
    case CS_STEP_SEND: {
        uint64_t p = g->partner[gid];
        if (p == CS_NONE)
            return cs_err_set(err, CS_ERR_VERIFY, "rank %d step %u: send without a receive", r, i);
        uint32_t j;
        cs_graph_locate(g, p, &dr, &j);
        const cs_step_t *rs = cs_graph_step(g, dr, j);
        drg = &rs->dst;
        if (rs->kind == CS_STEP_RECV)
            reduce = NULL;
        break;
    }
    default:
        return cs_err_set(err, CS_ERR_INTERNAL, "rank %d step %u: a receive in the order", r, i);
    }
    if (st->kind == CS_STEP_COPY)
        reduce = NULL;
    uint64_t ns, nd;
    const unsigned char *src = range_ptr(m, r, srg, &ns);
    unsigned char *dst = range_ptr(m, dr, drg, &nd);
    if (ns != nd)
        return cs_err_set(err, CS_ERR_VERIFY,
                          "rank %d step %u: %llu elements go into a range of %llu (rank %d) at "
                          "count %llu",
                          r, i, (unsigned long long)ns, (unsigned long long)nd, dr,
                          (unsigned long long)m->count);
    if ((src == NULL || dst == NULL) && ns > 0)
        return cs_err_set(err, CS_ERR_INVAL, "rank %d step %u uses 'in', which has no memory", r,
                          i);
    return apply(m, reduce, dst, src, ns, err);
}

/* Allocate the pointer table and the scratch buffers (poisoned). */
static int mem_init(cs__mem_t *m, const cs_sched_t *s, size_t esz, uint64_t count, cs_err_t *err)
{
    int P = s->desc.nranks;
    memset(m, 0, sizeof(*m));
    m->s = s;
    m->count = count;
    m->esz = esz;
    m->first = malloc(((size_t)P + 1) * sizeof(*m->first));
    if (m->first == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "interpreter: buffer table");
    m->first[0] = 0;
    for (int r = 0; r < P; r++)
        m->first[r + 1] = m->first[r] + s->ranks[r].nbufs;
    m->ptr = calloc(m->first[P] ? m->first[P] : 1, sizeof(*m->ptr));
    if (m->ptr == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "interpreter: buffer table");
    for (int r = 0; r < P; r++) {
        for (int b = CS_BUF_FIRST_SCRATCH; b < s->ranks[r].nbufs; b++) {
            size_t bytes = (size_t)cs_interp_buf_elems(s, r, b, count) * esz;
            unsigned char *p = malloc(bytes ? bytes : 1);
            if (p == NULL)
                return cs_err_set(err, CS_ERR_NOMEM, "interpreter: %zu bytes for rank %d buffer %s",
                                  bytes, r, s->ranks[r].bufs[b].name);
            memset(p, CS__POISON, bytes);
            m->ptr[m->first[r] + b] = p;
        }
    }
    return CS_OK;
}

static void mem_fini(cs__mem_t *m)
{
    if (m->ptr) {
        for (int r = 0; r < m->s->desc.nranks; r++)
            for (int b = CS_BUF_FIRST_SCRATCH; b < m->s->ranks[r].nbufs; b++)
                free(m->ptr[m->first[r] + b]);
    }
    free(m->ptr);
    free(m->first);
    free(m->tmp);
    free(m->acc);
}

int cs_interp_exec(const cs_sched_t *s, cs_dtype_t dt, cs_op_t op, uint64_t count,
                   void *const *in, void *const *out, cs_err_t *err)
{
    cs_reduce_fn_t reduce = cs_reduce_fn(dt, op);
    if (s == NULL || out == NULL || reduce == NULL)
        return cs_err_set(err, CS_ERR_INVAL, "interpreter: no schedule, output or valid type/op");
    cs_graph_t g;
    cs__mem_t m;
    int st = cs_graph_init(&g, s, err);
    if (st != CS_OK)
        return st;
    if (g.nstuck > 0 || g.nunmatched > 0) {
        st = cs_err_set(err, CS_ERR_VERIFY,
                        "%llu steps can never run (%llu unmatched sends/receives, or deadlock)",
                        (unsigned long long)g.nstuck, (unsigned long long)g.nunmatched);
        goto out_graph;
    }
    st = mem_init(&m, s, cs_dtype_size(dt), count, err);
    if (st != CS_OK)
        goto out_mem;
    for (int r = 0; r < s->desc.nranks; r++) {
        m.ptr[m.first[r] + CS_BUF_IN] = in ? in[r] : NULL;
        m.ptr[m.first[r] + CS_BUF_OUT] = out[r];
    }
    for (uint64_t e = 0; e < g.norder && st == CS_OK; e++)
        st = run_event(&m, &g, reduce, g.order[e], err);
    for (int r = 0; r < s->desc.nranks; r++) /* caller memory: not ours to free */
        m.ptr[m.first[r] + CS_BUF_IN] = m.ptr[m.first[r] + CS_BUF_OUT] = NULL;
out_mem:
    mem_fini(&m);
out_graph:
    cs_graph_fini(&g);
    return st;
}

/* Global chunk interval [a, b) shared by two buffers' windows. */
static void window_overlap(const cs_buffer_t *x, const cs_buffer_t *y, uint32_t *a, uint32_t *b)
{
    uint32_t lo = x->base > y->base ? x->base : y->base;
    uint32_t xe = x->base + x->nchunks, ye = y->base + y->nchunks;
    uint32_t hi = xe < ye ? xe : ye;
    *a = lo;
    *b = hi > lo ? hi : lo;
}

/* Inputs and initial outputs of rank r (see cs_interp_run). */
static void init_rank(const cs_sched_t *s, cs_dtype_t dt, cs_op_t op, uint64_t count, int r,
                      unsigned char *in, unsigned char *out)
{
    const cs_buffer_t *bi = &s->ranks[r].bufs[CS_BUF_IN], *bo = &s->ranks[r].bufs[CS_BUF_OUT];
    size_t esz = cs_dtype_size(dt);
    uint64_t nin = cs_range_elems(s, bi, count, 0, bi->nchunks);
    uint64_t nout = cs_range_elems(s, bo, count, 0, bo->nchunks);
    memset(out, CS__POISON, (size_t)nout * esz);
    if (!s->desc.inplace) {
        cs_test_fill(dt, op, in, nin, r, cs_chunk_start(s, count, bi->base));
        return;
    }
    memset(in, CS__POISON, (size_t)nin * esz);
    if (s->desc.coll == CS_COLL_BROADCAST && r != s->desc.root)
        return;
    uint32_t a, b;
    window_overlap(bi, bo, &a, &b);
    if (a >= b)
        return;
    uint64_t first = cs_chunk_start(s, count, a);
    uint64_t n = cs_chunk_start(s, count, b) - first;
    uint64_t off = cs_buf_elem_off(s, bo, count, a - bo->base);
    cs_test_fill(dt, op, out + off * esz, n, r, first);
}

/* For the reducing collectives every rank's output is a window of one
 * vector: compute it once (NULL otherwise, or when memory is short: the
 * caller then checks rank by rank). */
static double *expected_vector(const cs_sched_t *s, cs_dtype_t dt, cs_op_t op, uint64_t count)
{
    cs_coll_t c = s->desc.coll;
    if (c != CS_COLL_ALLREDUCE && c != CS_COLL_REDUCE_SCATTER && c != CS_COLL_REDUCE)
        return NULL;
    if (s->desc.nranks < 4) /* cheap enough either way */
        return NULL;
    uint64_t total = cs_chunk_start(s, count, s->nchunks);
    double *want = malloc((size_t)(total ? total : 1) * sizeof(*want));
    if (want == NULL)
        return NULL;
    for (uint64_t e = 0; e < total; e++)
        want[e] = cs_test_expected_reduced(dt, op, s->desc.nranks, e);
    return want;
}

int cs_interp_run(const cs_sched_t *s, cs_dtype_t dt, cs_op_t op, uint64_t count,
                  cs_interp_result_t *res, cs_err_t *err)
{
    if (s == NULL || res == NULL || cs_reduce_fn(dt, op) == NULL)
        return cs_err_set(err, CS_ERR_INVAL, "interpreter: no schedule, result or valid type/op");
    int P = s->desc.nranks, st = CS_OK;
    size_t esz = cs_dtype_size(dt);
    double *want = NULL;
    void **in = calloc((size_t)P, sizeof(*in));
    void **out = calloc((size_t)P, sizeof(*out));
    if (in == NULL || out == NULL) {
        st = cs_err_set(err, CS_ERR_NOMEM, "interpreter: buffer table");
        goto done;
    }
    for (int r = 0; r < P; r++) {
        size_t bi = (size_t)cs_interp_buf_elems(s, r, CS_BUF_IN, count) * esz;
        size_t bo = (size_t)cs_interp_buf_elems(s, r, CS_BUF_OUT, count) * esz;
        in[r] = malloc(bi ? bi : 1);
        out[r] = malloc(bo ? bo : 1);
        if (in[r] == NULL || out[r] == NULL) {
            st = cs_err_set(err, CS_ERR_NOMEM, "interpreter: %zu bytes for rank %d", bi + bo, r);
            goto done;
        }
        init_rank(s, dt, op, count, r, in[r], out[r]);
    }
    st = cs_interp_exec(s, dt, op, count, in, out, err);
    if (st != CS_OK)
        goto done;
    want = expected_vector(s, dt, op, count);
    cs_interp_result_t rs = {0, -1, CS_TEST_NO_INDEX, 0.0};
    for (int r = 0; r < P; r++) {
        const cs_buffer_t *bo = &s->ranks[r].bufs[CS_BUF_OUT];
        uint64_t first, n = cs_interp_buf_elems(s, r, CS_BUF_OUT, count);
        double maxerr;
        uint64_t ofirst = cs_chunk_start(s, count, bo->base), w;
        if (want == NULL)
            w = cs_test_check_detail(&s->desc, dt, op, count, r, out[r], ofirst, n, &first,
                                     &maxerr);
        else if (s->desc.coll == CS_COLL_REDUCE && r != s->desc.root)
            w = 0, maxerr = 0;
        else
            w = cs_test_compare(dt, out[r], want + ofirst, n, ofirst, &first, &maxerr);
        if (w > 0 && rs.wrong == 0) {
            rs.first_bad_rank = r;
            rs.first_bad_index = first;
        }
        rs.wrong += w;
        if (maxerr > rs.max_abs_err)
            rs.max_abs_err = maxerr;
    }
    if (rs.wrong > 0)
        CS_DEBUG("core", "interpreter: %llu wrong elements, first on rank %d at %llu",
                 (unsigned long long)rs.wrong, rs.first_bad_rank,
                 (unsigned long long)rs.first_bad_index);
    *res = rs;
done:
    if (in && out) {
        for (int r = 0; r < P; r++) {
            free(in[r]);
            free(out[r]);
        }
    }
    free(in);
    free(out);
    free(want);
    return st;
}
