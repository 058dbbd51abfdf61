/*
 * cs_msccl_pos.c - chunk positions of an MSCCL algorithm (cs_msccl_build.c
 * builds the steps).
 *
 * collstep keeps every chunk at its position in the collective's vector
 * (chunk sizes may differ by one element when a size does not divide; MSCCL
 * only serves sizes that do).  in and out chunks have fixed positions; a
 * scratch chunk takes the position of what flows through it: copies,
 * reductions and messages (the k-th send of a connection with the k-th
 * receive) tie their two sides chunk by chunk, solved with union-find.  Two
 * fixed positions tied together mean the XML moves a chunk to a place where
 * another belongs: an error at the step that does it.  Scratch chunk j at
 * position p lives in the scratch buffer of offset (p - j) mod k, whose
 * window runs from the first to the last scratch chunk of that offset ("s"
 * when there is one offset).
 */
#include "cs_msccl_int.h"

#include <stdlib.h>
#include <string.h>

#define in_base cs__msccl_in_base
#define out_base cs__msccl_out_base

uint32_t cs__msccl_uf_find(uf_t *u, uint32_t x)
{
    while (u->parent[x] != x) {
        u->parent[x] = u->parent[u->parent[x]];
        x = u->parent[x];
    }
    return x;
}

/* 0, or -1 when both sides have different fixed positions. */
static int uf_union(uf_t *u, uint32_t a, uint32_t b)
{
    a = cs__msccl_uf_find(u, a);
    b = cs__msccl_uf_find(u, b);
    if (a == b)
        return 0;
    if (u->pos[a] >= 0 && u->pos[b] >= 0 && u->pos[a] != u->pos[b])
        return -1;
    if (u->pos[a] < 0)
        u->pos[a] = u->pos[b];
    u->parent[b] = a;
    return 0;
}

/* Slot of chunk `off` of MSCCL buffer `buf` on gpu r. */
uint64_t cs__msccl_slot(const bctx_t *b, int r, int buf, int off)
{
    uint64_t n0 = b->node0[r];
    if (buf == XB_I) {
        if (b->inplace) /* i is the part of out holding the input */
            return n0 + b->win_in + in_base(b, r) - out_base(b, r) + (uint64_t)off;
        return n0 + (uint64_t)off;
    }
    if (buf == XB_O)
        return n0 + b->win_in + (uint64_t)off;
    return n0 + b->win_in + b->win_out + (uint64_t)off;
}

static int tie(bctx_t *b, int ra, int bufa, int offa, int rb, int bufb, int offb, int cnt,
               const xgpu_t *g, const xtb_t *tb, const xstep_t *x, cs_err_t *err)
{
    for (int i = 0; i < cnt; i++) {
        uint64_t sa = cs__msccl_slot(b, ra, bufa, offa + i),
                 sb = cs__msccl_slot(b, rb, bufb, offb + i);
        if (uf_union(&b->uf, (uint32_t)sa, (uint32_t)sb) == 0)
            continue;
        static const char *const bn[] = {"i", "o", "s"};
        int64_t pa = b->uf.pos[cs__msccl_uf_find(&b->uf, (uint32_t)sa)];
        int64_t pb = b->uf.pos[cs__msccl_uf_find(&b->uf, (uint32_t)sb)];
        return cs_err_set(err, CS_ERR_PARSE,
                          "%s:%u: gpu %d tb %d step %d (%s): gpu %d %s[%d] (chunk %lld of the "
                          "vector) and gpu %d %s[%d] (chunk %lld) would hold the same data: "
                          "the algorithm moves a chunk to where another belongs",
                          b->a->fname, x->line, g->id, tb->id, x->s, cs__msccl_type_name(x->type),
                          ra, bn[bufa], offa + i, (long long)pa, rb, bn[bufb], offb + i,
                          (long long)pb);
    }
    return CS_OK;
}

/* The receiving threadblock of gpu r's connection (send peer, chan). */
static xtb_t *recv_tb(xalgo_t *a, int from, int to, int chan)
{
    xgpu_t *g = &a->gpu[to];
    for (int t = 0; t < g->n; t++)
        if (g->tb[t].recv == from && g->tb[t].chan == chan)
            return &g->tb[t];
    return NULL;
}

/* MSCCL buffer / offset of the data a step sends, and of what it receives. */
static void sent_operand(const xstep_t *x, int *buf, int *off)
{
    int use_dst = x->type == X_RCS || x->type == X_RRCS;
    *buf = use_dst ? x->dstbuf : x->srcbuf;
    *off = use_dst ? x->dstoff : x->srcoff;
}
static void recv_operand(const xstep_t *x, int *buf, int *off)
{
    int use_src = x->type == X_RRS;
    *buf = use_src ? x->srcbuf : x->dstbuf;
    *off = use_src ? x->srcoff : x->dstoff;
}

int cs__msccl_positions(bctx_t *b, cs_err_t *err)
{
    xalgo_t *a = b->a;
    uint64_t total = 0;
    b->node0 = calloc(b->P, sizeof(*b->node0));
    if (b->node0 == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    for (uint32_t r = 0; r < b->P; r++) {
        b->node0[r] = total;
        total += (uint64_t)b->win_in + b->win_out + (uint64_t)a->gpu[r].schunks;
    }
    if (total > CS_MSCCL_MAX_SLOTS)
        return cs_err_set(err, CS_ERR_PARSE,
                          "%s:%u: %llu chunk slots over all gpus: more than "
                          "the %u this importer takes",
                          a->fname, a->line, (unsigned long long)total,
                          (unsigned)CS_MSCCL_MAX_SLOTS);
    b->uf.parent = malloc((total ? total : 1) * sizeof(uint32_t));
    b->uf.pos = malloc((total ? total : 1) * sizeof(int64_t));
    if (b->uf.parent == NULL || b->uf.pos == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    for (uint32_t r = 0; r < b->P; r++) {
        uint64_t n0 = b->node0[r], nsc = (uint64_t)a->gpu[r].schunks;
        for (uint64_t i = 0; i < (uint64_t)b->win_in + b->win_out + nsc; i++) {
            b->uf.parent[n0 + i] = (uint32_t)(n0 + i);
            if (i < b->win_in)
                b->uf.pos[n0 + i] = (in_base(b, (int)r) + i) % b->k;
            else if (i < (uint64_t)b->win_in + b->win_out)
                b->uf.pos[n0 + i] = (out_base(b, (int)r) + i - b->win_in) % b->k;
            else
                b->uf.pos[n0 + i] = -1;
        }
    }
    int rc;
    for (uint32_t r = 0; r < b->P; r++) {
        xgpu_t *g = &a->gpu[r];
        for (int t = 0; t < g->n; t++) {
            xtb_t *tb = &g->tb[t];
            xtb_t *peer = tb->send >= 0 ? recv_tb(a, (int)r, tb->send, tb->chan) : NULL;
            int k = 0; /* receive-carrying steps of peer already paired */
            for (int s = 0; s < tb->n; s++) {
                xstep_t *x = &tb->st[s];
                int local = x->type == X_CPY || x->type == X_RE ||
                            ((x->type == X_RRC || x->type == X_RRCS) &&
                             !(x->srcbuf == x->dstbuf && x->srcoff == x->dstoff));
                if (local && (rc = tie(b, (int)r, x->srcbuf, x->srcoff, (int)r, x->dstbuf,
                                       x->dstoff, x->cnt, g, tb, x, err)))
                    return rc;
                if (!cs__msccl_has_send(x->type) || peer == NULL)
                    continue;
                while (k < peer->n && !cs__msccl_has_recv(peer->st[k].type))
                    k++;
                if (k == peer->n)
                    continue; /* unmatched: the verifier says so */
                const xstep_t *y = &peer->st[k++];
                int sb, so, rb, ro;
                sent_operand(x, &sb, &so);
                recv_operand(y, &rb, &ro);
                int cnt = x->cnt < y->cnt ? x->cnt : y->cnt;
                if ((rc = tie(b, (int)r, sb, so, tb->send, rb, ro, cnt, g, tb, x, err)))
                    return rc;
            }
        }
    }
    return CS_OK;
}

/* Scratch chunk positions -> scratch buffers of the schedule. */
int cs__msccl_scratch_buffers(bctx_t *b, cs_sched_t *s, cs_err_t *err)
{
    b->sbuf = calloc(b->P, sizeof(*b->sbuf));
    b->sfirst = calloc(b->P, sizeof(*b->sfirst));
    if (b->sbuf == NULL || b->sfirst == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    for (uint32_t r = 0; r < b->P; r++) {
        int ns = b->a->gpu[r].schunks;
        if (ns == 0)
            continue;
        b->sbuf[r] = malloc((size_t)ns * sizeof(int32_t));
        uint32_t *delta = malloc((size_t)ns * sizeof(uint32_t));
        if (b->sbuf[r] == NULL || delta == NULL) {
            free(delta);
            return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
        }
        /* A chunk nothing fixes follows its left neighbour (one buffer). */
        uint32_t cur = 0;
        for (int j = 0; j < ns; j++) {
            uint32_t root = cs__msccl_uf_find(&b->uf, (uint32_t)cs__msccl_slot(b, (int)r, XB_S, j));
            if (b->uf.pos[root] >= 0) {
                cur = (uint32_t)((b->uf.pos[root] + b->k - (uint32_t)j % b->k) % b->k);
                break;
            }
        }
        int ndistinct = 1;
        for (int j = 0; j < ns; j++) {
            uint32_t root = cs__msccl_uf_find(&b->uf, (uint32_t)cs__msccl_slot(b, (int)r, XB_S, j));
            if (b->uf.pos[root] < 0)
                b->uf.pos[root] = (int64_t)(((uint64_t)j + cur) % b->k);
            delta[j] = (uint32_t)((b->uf.pos[root] + b->k - (uint32_t)j % b->k) % b->k);
            cur = delta[j];
            if (delta[j] != delta[0])
                ndistinct = 2;
        }
        /* One buffer per offset, its window from the first to the last
         * scratch chunk at that offset. */
        b->sfirst[r] = malloc((size_t)ns * sizeof(int32_t));
        if (b->sfirst[r] == NULL) {
            free(delta);
            return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
        }
        for (int j = 0; j < ns; j++) {
            int first = -1, lastj = j;
            for (int i = 0; i < j && first < 0; i++)
                if (delta[i] == delta[j])
                    first = i;
            if (first >= 0) {
                b->sbuf[r][j] = b->sbuf[r][first];
                b->sfirst[r][j] = b->sfirst[r][first];
                continue;
            }
            for (int i = j; i < ns; i++)
                if (delta[i] == delta[j])
                    lastj = i;
            char name[CS_BUF_NAME_MAX];
            if (ndistinct == 1)
                snprintf(name, sizeof(name), "s");
            else
                snprintf(name, sizeof(name), "s%d", j);
            int id = cs_sched_add_buffer(s, (int)r, name, delta[j] + (uint32_t)j,
                                         (uint32_t)(lastj - j + 1));
            if (id < 0) {
                free(delta);
                return cs_err_set(err, s->err.code, "%s", s->err.msg);
            }
            b->sbuf[r][j] = id;
            b->sfirst[r][j] = j;
        }
        free(delta);
    }
    return CS_OK;
}

/* The schedule range of MSCCL operand (buf, off, cnt) on gpu r. */
int cs__msccl_range_of(bctx_t *b, int r, int buf, int off, int cnt, const xgpu_t *g,
                       const xtb_t *tb, const xstep_t *x, cs_range_t *out, cs_err_t *err)
{
    if (buf == XB_I && !b->inplace) {
        *out = cs_rng(CS_BUF_IN, (uint32_t)off, (uint32_t)cnt);
    } else if (buf == XB_I) {
        *out = cs_rng(CS_BUF_OUT, (uint32_t)off + in_base(b, r) - out_base(b, r), (uint32_t)cnt);
    } else if (buf == XB_O) {
        *out = cs_rng(CS_BUF_OUT, (uint32_t)off, (uint32_t)cnt);
    } else {
        int id = b->sbuf[r][off];
        for (int i = 1; i < cnt; i++)
            if (b->sbuf[r][off + i] != id)
                return cs_err_set(err, CS_ERR_UNSUPPORTED,
                                  "%s:%u: gpu %d tb %d step %d (%s): scratch chunks s[%d:%d] "
                                  "hold chunks that are not neighbours in the vector; collstep "
                                  "moves only such runs in one step (split the step)",
                                  b->a->fname, x->line, g->id, tb->id, x->s,
                                  cs__msccl_type_name(x->type), off, off + cnt);
        *out = cs_rng(id, (uint32_t)(off - b->sfirst[r][off]), (uint32_t)cnt);
    }
    return CS_OK;
}
