/* cs_sched.c - building and reading step graphs (see cs_sched.h). */
#include "cs_sched.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cs_hash.h"
#include "cs_sched_int.h"

static const char *const coll_names[CS_COLL_COUNT] = {
    "allreduce", "reduce-scatter", "allgather", "broadcast", "reduce", "alltoall",
};

const char *cs_coll_name(cs_coll_t c)
{
    return (c >= 0 && c < CS_COLL_COUNT) ? coll_names[c] : "unknown";
}

cs_coll_t cs_coll_parse(const char *s)
{
    char norm[32];
    size_t n = 0;
    if (s == NULL)
        return CS_COLL_COUNT;
    /* Drop '-' and '_' and lower-case: "reduce_scatter" == "ReduceScatter". */
    for (; *s != '\0' && n + 1 < sizeof(norm); s++)
        if (*s != '-' && *s != '_')
            norm[n++] = (char)tolower((unsigned char)*s);
    norm[n] = '\0';
    static const char *const squashed[CS_COLL_COUNT] = {
        "allreduce", "reducescatter", "allgather", "broadcast", "reduce", "alltoall",
    };
    for (int c = 0; c < CS_COLL_COUNT; c++)
        if (strcmp(norm, squashed[c]) == 0)
            return (cs_coll_t)c;
    if (strcmp(norm, "bcast") == 0)
        return CS_COLL_BROADCAST;
    return CS_COLL_COUNT;
}

int cs_coll_has_root(cs_coll_t c)
{
    return c == CS_COLL_BROADCAST || c == CS_COLL_REDUCE;
}

int cs_coll_blocked(cs_coll_t c)
{
    return c == CS_COLL_REDUCE_SCATTER || c == CS_COLL_ALLGATHER || c == CS_COLL_ALLTOALL;
}

double cs_coll_busbw_factor(cs_coll_t c, int nranks)
{
    double p = nranks;
    switch (c) {
    case CS_COLL_ALLREDUCE:
        return 2.0 * (p - 1) / p;
    case CS_COLL_REDUCE_SCATTER:
    case CS_COLL_ALLGATHER:
    case CS_COLL_ALLTOALL:
        return (p - 1) / p;
    default:
        return 1.0;
    }
}

uint64_t cs_coll_block_count(cs_coll_t c, int nranks, uint64_t bytes, size_t elem_size)
{
    uint64_t total = bytes / elem_size;
    return cs_coll_blocked(c) ? total / (uint64_t)nranks : total;
}

const char *cs_step_kind_name(cs_step_kind_t k)
{
    static const char *const names[CS_STEP_KIND_COUNT] = {"send", "recv", "rrecv", "reduce",
                                                          "copy", "nop",  "switch"};
    return (k < CS_STEP_KIND_COUNT) ? names[k] : "unknown";
}

/* ---- creation ---------------------------------------------------------- */

static int set_window(cs_buffer_t *b, const char *name, uint32_t base, uint32_t n)
{
    snprintf(b->name, sizeof(b->name), "%s", name);
    b->base = base;
    b->nchunks = n;
    return 0;
}

cs_sched_t *cs_sched_create(const cs_coll_desc_t *desc, uint32_t nchunks, cs_err_t *err)
{
    if (desc == NULL || desc->coll < 0 || desc->coll >= CS_COLL_COUNT) {
        cs_err_set(err, CS_ERR_INVAL, "unknown collective");
        return NULL;
    }
    if (desc->nranks < 1) {
        cs_err_set(err, CS_ERR_INVAL, "number of ranks must be >= 1, got %d", desc->nranks);
        return NULL;
    }
    if (cs_coll_has_root(desc->coll) && (desc->root < 0 || desc->root >= desc->nranks)) {
        cs_err_set(err, CS_ERR_INVAL, "root %d out of range [0, %d)", desc->root, desc->nranks);
        return NULL;
    }
    if (!cs_coll_has_root(desc->coll) && desc->root != 0) {
        cs_err_set(err, CS_ERR_INVAL, "%s has no root (got root %d)", cs_coll_name(desc->coll),
                   desc->root);
        return NULL;
    }
    if (desc->inplace && desc->coll == CS_COLL_REDUCE_SCATTER) {
        cs_err_set(err, CS_ERR_UNSUPPORTED, "reduce-scatter cannot be in place");
        return NULL;
    }
    uint32_t B = cs_coll_blocked(desc->coll) ? (uint32_t)desc->nranks : 1;
    if (nchunks == 0 || nchunks % B != 0) {
        cs_err_set(err, CS_ERR_INVAL, "chunk count %u must be a positive multiple of %u",
                   nchunks, B);
        return NULL;
    }
    cs_sched_t *s = calloc(1, sizeof(*s));
    if (s == NULL)
        goto nomem;
    s->desc = *desc;
    s->nchunks = nchunks;
    s->nblocks = B;
    s->ranks = calloc((size_t)desc->nranks, sizeof(*s->ranks));
    if (s->ranks == NULL)
        goto nomem;
    uint32_t k = nchunks / B;
    for (int r = 0; r < desc->nranks; r++) {
        cs_rank_sched_t *rk = &s->ranks[r];
        rk->cap_bufs = 4;
        rk->bufs = calloc(rk->cap_bufs, sizeof(*rk->bufs));
        if (rk->bufs == NULL)
            goto nomem;
        rk->nbufs = 2;
        switch (desc->coll) {
        case CS_COLL_REDUCE_SCATTER:
            set_window(&rk->bufs[CS_BUF_IN], "in", 0, nchunks);
            set_window(&rk->bufs[CS_BUF_OUT], "out", (uint32_t)r * k, k);
            break;
        case CS_COLL_ALLGATHER:
            set_window(&rk->bufs[CS_BUF_IN], "in", (uint32_t)r * k, k);
            set_window(&rk->bufs[CS_BUF_OUT], "out", 0, nchunks);
            break;
        default:
            set_window(&rk->bufs[CS_BUF_IN], "in", 0, nchunks);
            set_window(&rk->bufs[CS_BUF_OUT], "out", 0, nchunks);
            break;
        }
    }
    return s;
nomem:
    cs_sched_destroy(s);
    cs_err_set(err, CS_ERR_NOMEM, "out of memory creating a schedule for %d ranks",
               desc->nranks);
    return NULL;
}

void cs_sched_destroy(cs_sched_t *s)
{
    if (s == NULL)
        return;
    if (s->ranks != NULL) {
        for (int r = 0; r < s->desc.nranks; r++) {
            free(s->ranks[r].steps);
            free(s->ranks[r].deps);
            free(s->ranks[r].bufs);
        }
        free(s->ranks);
    }
    for (uint32_t g = 0; g < s->ngroups; g++)
        free(s->groups[g].members);
    free(s->groups);
    free(s);
}

void cs_sched_set_meta(cs_sched_t *s, const char *algo, const char *params)
{
    snprintf(s->algo, sizeof(s->algo), "%s", algo ? algo : "");
    snprintf(s->params, sizeof(s->params), "%s", params ? params : "");
}

int cs__sched_valid_name(const char *name)
{
    if (name == NULL || !(isalpha((unsigned char)name[0]) || name[0] == '_'))
        return 0;
    size_t n = 0;
    for (const char *p = name; *p; p++, n++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return 0;
    return n < CS_BUF_NAME_MAX;
}

int cs_sched_add_buffer(cs_sched_t *s, int rank, const char *name, uint32_t base,
                        uint32_t nchunks)
{
    if (s->err.code != CS_OK)
        return -1;
    if (rank < 0 || rank >= s->desc.nranks) {
        cs_err_set(&s->err, CS_ERR_RANGE, "buffer '%s': rank %d out of range [0, %d)",
                   name ? name : "?", rank, s->desc.nranks);
        return -1;
    }
    if (!cs__sched_valid_name(name)) {
        cs_err_set(&s->err, CS_ERR_INVAL,
                   "rank %d: invalid buffer name (expected [A-Za-z_][A-Za-z0-9_]*, at most %d "
                   "characters)",
                   rank, CS_BUF_NAME_MAX - 1);
        return -1;
    }
    if (nchunks == 0 || (uint64_t)base + nchunks > UINT32_MAX) {
        cs_err_set(&s->err, CS_ERR_RANGE, "rank %d buffer '%s': bad window base %u size %u",
                   rank, name, base, nchunks);
        return -1;
    }
    cs_rank_sched_t *rk = &s->ranks[rank];
    for (int i = 0; i < rk->nbufs; i++)
        if (strcmp(rk->bufs[i].name, name) == 0) {
            cs_err_set(&s->err, CS_ERR_INVAL, "rank %d: buffer '%s' declared twice", rank, name);
            return -1;
        }
    if (rk->nbufs == UINT16_MAX) {
        cs_err_set(&s->err, CS_ERR_RANGE, "rank %d: too many buffers", rank);
        return -1;
    }
    if (rk->nbufs == rk->cap_bufs) {
        uint32_t cap = rk->cap_bufs * 2u > UINT16_MAX ? UINT16_MAX : rk->cap_bufs * 2u;
        cs_buffer_t *nb = realloc(rk->bufs, cap * sizeof(*nb));
        if (nb == NULL) {
            cs_err_set(&s->err, CS_ERR_NOMEM, "out of memory");
            return -1;
        }
        rk->bufs = nb;
        rk->cap_bufs = (uint16_t)cap;
    }
    set_window(&rk->bufs[rk->nbufs], name, base, nchunks);
    return rk->nbufs++;
}

/* ---- steps ------------------------------------------------------------- */

int cs__sched_check_range(cs_sched_t *s, int rank, uint32_t idx, const char *what,
                       const cs_range_t *rg)
{
    const cs_rank_sched_t *rk = &s->ranks[rank];
    if (rg->buf >= rk->nbufs)
        return cs_err_set(&s->err, CS_ERR_RANGE, "rank %d step %u: %s buffer id %u not declared",
                          rank, idx, what, rg->buf);
    const cs_buffer_t *b = &rk->bufs[rg->buf];
    if (rg->n == 0 || (uint64_t)rg->off + rg->n > b->nchunks)
        return cs_err_set(&s->err, CS_ERR_RANGE,
                          "rank %d step %u: %s range %s[%u:%llu] outside the buffer's %u chunks",
                          rank, idx, what, b->name, rg->off,
                          (unsigned long long)rg->off + rg->n, b->nchunks);
    return CS_OK;
}

/* Growth of a rank's step or dependency array: the larger of twice the
 * capacity and what the previous rank holds now (generators usually build
 * ranks one after another with about as many steps each, so a rank gets
 * its final size in one allocation instead of ten copies), at least
 * `need`, at most UINT32_MAX. */
static uint32_t grow_cap(uint32_t cap, uint64_t need, uint32_t hint)
{
    uint64_t c = cap ? 2 * (uint64_t)cap : 16;
    if (hint > c)
        c = hint;
    if (c < need)
        c = need;
    return c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

static uint32_t neighbour_hint(const cs_sched_t *s, int rank, int deps)
{
    if (rank == 0)
        return 0;
    const cs_rank_sched_t *pr = &s->ranks[rank - 1];
    return deps ? pr->ndeps : pr->nsteps;
}

int64_t cs_sched_add(cs_sched_t *s, int rank, const cs_step_t *st, const uint32_t *deps,
                     uint32_t ndeps)
{
    if (s->err.code != CS_OK)
        return -1;
    if (rank < 0 || rank >= s->desc.nranks) {
        cs_err_set(&s->err, CS_ERR_RANGE, "step on rank %d out of range [0, %d)", rank,
                   s->desc.nranks);
        return -1;
    }
    cs_rank_sched_t *rk = &s->ranks[rank];
    uint32_t idx = rk->nsteps;
    if (idx == UINT32_MAX) {
        cs_err_set(&s->err, CS_ERR_RANGE, "rank %d: too many steps", rank);
        return -1;
    }
    if (st->kind >= CS_STEP_KIND_COUNT) {
        cs_err_set(&s->err, CS_ERR_INVAL, "rank %d step %u: unknown kind %u", rank, idx,
                   st->kind);
        return -1;
    }
    int comm = st->kind == CS_STEP_SEND || st->kind == CS_STEP_RECV || st->kind == CS_STEP_RRECV;
    if (comm && (st->peer < 0 || st->peer >= s->desc.nranks)) {
        cs_err_set(&s->err, CS_ERR_RANGE, "rank %d step %u: peer %d out of range [0, %d)", rank,
                   idx, st->peer, s->desc.nranks);
        return -1;
    }
    int sw = st->kind == CS_STEP_SWITCH;
    int has_src = st->kind == CS_STEP_SEND || st->kind == CS_STEP_REDUCE ||
                  st->kind == CS_STEP_COPY || (sw && st->src.n > 0);
    int has_dst = sw ? st->dst.n > 0 : st->kind != CS_STEP_SEND && st->kind != CS_STEP_NOP;
    if (sw && cs__sched_check_switch(s, rank, idx, st) != CS_OK)
        return -1;
    if (has_src && cs__sched_check_range(s, rank, idx, "source", &st->src) != CS_OK)
        return -1;
    if (has_dst && cs__sched_check_range(s, rank, idx, "destination", &st->dst) != CS_OK)
        return -1;
    if (has_src && has_dst) {
        const cs_buffer_t *bs = &rk->bufs[st->src.buf], *bd = &rk->bufs[st->dst.buf];
        uint32_t k = cs_sched_block_chunks(s);
        if (st->src.n != st->dst.n) {
            cs_err_set(&s->err, CS_ERR_RANGE,
                       "rank %d step %u: source has %u chunks but destination %u", rank, idx,
                       st->src.n, st->dst.n);
            return -1;
        }
        if ((bs->base + st->src.off) % k != (bd->base + st->dst.off) % k) {
            cs_err_set(&s->err, CS_ERR_RANGE,
                       "rank %d step %u: source %s[%u] and destination %s[%u] have different "
                       "chunk shapes",
                       rank, idx, bs->name, st->src.off, bd->name, st->dst.off);
            return -1;
        }
    }
    for (uint32_t i = 0; i < ndeps; i++)
        if (deps[i] >= idx) {
            cs_err_set(&s->err, CS_ERR_RANGE,
                       "rank %d step %u: dependency on step %u, which is not an earlier step",
                       rank, idx, deps[i]);
            return -1;
        }
    if (rk->nsteps == rk->cap_steps) {
        uint32_t cap = grow_cap(rk->cap_steps, rk->nsteps + 1u, neighbour_hint(s, rank, 0));
        cs_step_t *ns = realloc(rk->steps, (size_t)cap * sizeof(*ns));
        if (ns == NULL)
            goto nomem;
        rk->steps = ns;
        rk->cap_steps = cap;
    }
    if ((uint64_t)rk->ndeps + ndeps > UINT32_MAX) {
        cs_err_set(&s->err, CS_ERR_RANGE, "rank %d: too many dependencies", rank);
        return -1;
    }
    if (rk->ndeps + ndeps > rk->cap_deps) {
        uint32_t cap = grow_cap(rk->cap_deps, rk->ndeps + ndeps, neighbour_hint(s, rank, 1));
        uint32_t *nd = realloc(rk->deps, (size_t)cap * sizeof(*nd));
        if (nd == NULL)
            goto nomem;
        rk->deps = nd;
        rk->cap_deps = (uint32_t)cap;
    }
    cs_step_t *dst = &rk->steps[idx];
    *dst = *st;
    if (!comm && !sw) {
        dst->peer = -1;
        dst->chan = 0;
    }
    if (!sw)
        dst->op = 0;
    else
        s->nswitch++;
    if (!has_src)
        dst->src = cs_rng(0, 0, 0);
    if (!has_dst)
        dst->dst = cs_rng(0, 0, 0);
    dst->dep_off = rk->ndeps;
    dst->ndeps = ndeps;
    if (ndeps > 0) { /* rk->deps is still NULL on a rank without dependencies */
        uint32_t *dd = rk->deps + rk->ndeps; /* usually 1-3 entries: no memcpy call */
        for (uint32_t i = 0; i < ndeps; i++)
            dd[i] = deps[i];
    }
    rk->ndeps += ndeps;
    rk->nsteps++;
    return idx;
nomem:
    cs_err_set(&s->err, CS_ERR_NOMEM, "out of memory adding a step to rank %d", rank);
    return -1;
}

static int64_t add_simple(cs_sched_t *s, int rank, int kind, int peer, int chan, cs_range_t src,
                          cs_range_t dst, const uint32_t *deps, uint32_t ndeps)
{
    if (chan < 0 || chan >= CS_MAX_CHANNELS) {
        cs_err_set(&s->err, CS_ERR_RANGE, "rank %d: channel %d out of range [0, %d)", rank, chan,
                   CS_MAX_CHANNELS);
        return -1;
    }
    cs_step_t st = {.kind = (uint8_t)kind, .chan = (uint16_t)chan, .peer = peer,
                    .src = src, .dst = dst};
    return cs_sched_add(s, rank, &st, deps, ndeps);
}

int64_t cs_send(cs_sched_t *s, int rank, int peer, int chan, cs_range_t src,
                const uint32_t *deps, uint32_t ndeps)
{
    return add_simple(s, rank, CS_STEP_SEND, peer, chan, src, cs_rng(0, 0, 0), deps, ndeps);
}

int64_t cs_recv(cs_sched_t *s, int rank, int peer, int chan, cs_range_t dst,
                const uint32_t *deps, uint32_t ndeps)
{
    return add_simple(s, rank, CS_STEP_RECV, peer, chan, cs_rng(0, 0, 0), dst, deps, ndeps);
}

int64_t cs_rrecv(cs_sched_t *s, int rank, int peer, int chan, cs_range_t dst,
                 const uint32_t *deps, uint32_t ndeps)
{
    return add_simple(s, rank, CS_STEP_RRECV, peer, chan, cs_rng(0, 0, 0), dst, deps, ndeps);
}

int64_t cs_reduce(cs_sched_t *s, int rank, cs_range_t src, cs_range_t dst,
                  const uint32_t *deps, uint32_t ndeps)
{
    return add_simple(s, rank, CS_STEP_REDUCE, -1, 0, src, dst, deps, ndeps);
}

int64_t cs_copy(cs_sched_t *s, int rank, cs_range_t src, cs_range_t dst,
                const uint32_t *deps, uint32_t ndeps)
{
    return add_simple(s, rank, CS_STEP_COPY, -1, 0, src, dst, deps, ndeps);
}

int64_t cs_nop(cs_sched_t *s, int rank, const uint32_t *deps, uint32_t ndeps)
{
    return add_simple(s, rank, CS_STEP_NOP, -1, 0, cs_rng(0, 0, 0), cs_rng(0, 0, 0), deps,
                      ndeps);
}

void cs_deps_clear(cs_deps_t *d)
{
    d->n = 0;
}

void cs_deps_push(cs_deps_t *d, int64_t step)
{
    if (step < 0)
        return;
    for (uint32_t i = 0; i < d->n; i++)
        if (d->v[i] == (uint32_t)step)
            return;
    if (d->n == d->cap) {
        uint32_t cap = d->cap ? d->cap * 2 : 8;
        uint32_t *nv = realloc(d->v, cap * sizeof(*nv));
        if (nv == NULL)
            return; /* the missing dependency is caught by the verifier */
        d->v = nv;
        d->cap = cap;
    }
    d->v[d->n++] = (uint32_t)step;
}

void cs_deps_fini(cs_deps_t *d)
{
    free(d->v);
    d->v = NULL;
    d->n = d->cap = 0;
}

/* ---- reading ----------------------------------------------------------- */

uint64_t cs_sched_total_steps(const cs_sched_t *s)
{
    uint64_t n = 0;
    for (int r = 0; r < s->desc.nranks; r++)
        n += s->ranks[r].nsteps;
    return n;
}

uint64_t cs_chunk_start(const cs_sched_t *s, uint64_t count, uint64_t g)
{
    uint64_t k = cs_sched_block_chunks(s);
    if (k == 1) /* one chunk per block (most generators): no division */
        return g * count;
    uint64_t q = g / k, i = g % k;
    if (count <= UINT32_MAX) /* i < k <= 2^32: the product fits 64 bits */
        return q * count + i * count / k;
    /* floor(i * count / k) without overflow for count < 2^64 / k. */
    unsigned __int128 x = (unsigned __int128)i * count / k;
    return q * count + (uint64_t)x;
}

uint64_t cs_buf_elem_off(const cs_sched_t *s, const cs_buffer_t *b, uint64_t count, uint32_t off)
{
    return cs_chunk_start(s, count, (uint64_t)b->base + off) - cs_chunk_start(s, count, b->base);
}

uint64_t cs_range_elems(const cs_sched_t *s, const cs_buffer_t *b, uint64_t count, uint32_t off,
                        uint32_t n)
{
    uint64_t g = (uint64_t)b->base + off;
    return cs_chunk_start(s, count, g + n) - cs_chunk_start(s, count, g);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= CS_FNV64_PRIME;
    }
    return h;
}

uint64_t cs_sched_digest(const cs_sched_t *s)
{
    uint64_t h = CS_FNV64_OFFSET;
    int32_t hdr[6] = {s->desc.coll, s->desc.nranks, s->desc.root, s->desc.inplace,
                      (int32_t)s->nchunks, (int32_t)s->nblocks};
    h = fnv(h, hdr, sizeof(hdr));
    for (int r = 0; r < s->desc.nranks; r++) {
        const cs_rank_sched_t *rk = &s->ranks[r];
        for (int b = 0; b < rk->nbufs; b++) {
            uint32_t w[2] = {rk->bufs[b].base, rk->bufs[b].nchunks};
            h = fnv(h, w, sizeof(w));
        }
        for (uint32_t i = 0; i < rk->nsteps; i++) {
            const cs_step_t *st = &rk->steps[i];
            uint32_t w[10] = {st->kind, st->chan, (uint32_t)st->peer, st->src.buf, st->src.off,
                              st->src.n, st->dst.buf, st->dst.off, st->dst.n, st->ndeps};
            h = fnv(h, w, sizeof(w));
            h = fnv(h, cs_step_deps(rk, st), st->ndeps * sizeof(uint32_t));
            if (st->kind == CS_STEP_SWITCH) /* schedules without switch steps: as before */
                h = fnv(h, &st->op, sizeof(st->op));
        }
    }
    for (uint32_t g = 0; g < s->ngroups; g++) {
        const cs_group_t *gr = &s->groups[g];
        h = fnv(h, gr->name, strlen(gr->name) + 1);
        h = fnv(h, &gr->n, sizeof(gr->n));
        h = fnv(h, gr->members, gr->n * sizeof(*gr->members));
    }
    return h;
}
