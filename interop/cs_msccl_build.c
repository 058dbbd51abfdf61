/*
 * cs_msccl_build.c - a checked MSCCL algorithm (cs_msccl_read.c) becomes a
 * collstep schedule.
 *
 * 1. Chunk positions: cs_msccl_pos.c.
 * 2. Steps.  Per gpu, threadblocks are walked in a topological order of
 *    their chains and cross-threadblock waits (a cycle is an error listing
 *    it); each XML step becomes one to three collstep steps:
 *      s     send(src)                      r     recv(dst)
 *      rcs   recv(dst); send(dst)           cpy   copy(src -> dst)
 *      rrc   [copy(src -> dst);] rrecv(dst) re    reduce(src -> dst)
 *      rrcs  [copy(src -> dst);] rrecv(dst); send(dst)
 *      rrs   copy(src -> t); rrecv(t); send(t), t a buffer of its own
 *      nop   nop
 *    The first waits for the last of the previous XML step of its
 *    threadblock and of the step it depends on (depid/deps).
 */
#include "cs_msccl_int.h"

#include <stdlib.h>
#include <string.h>

#include "cs_grow.h"

typedef struct emit {
    cs_msccl_t *m;
    int r;
    cs_msccl_origin_t o;
    size_t cap; /* of m->origin[r] */
} emit_t;

static int64_t emit_step(cs_sched_t *s, emit_t *e, const cs_step_t *st, const uint32_t *deps,
                         uint32_t nd)
{
    int64_t i = cs_sched_add(s, e->r, st, deps, nd);
    if (i < 0)
        return -1;
    uint32_t *n = &e->m->norigin[e->r];
    if (cs_grow(&e->m->origin[e->r], &e->cap, (size_t)*n + 1, sizeof(cs_msccl_origin_t), 16)) {
        cs_err_set(&s->err, CS_ERR_NOMEM, "out of memory");
        return -1;
    }
    e->m->origin[e->r][(*n)++] = e->o;
    return i;
}

/* MSCCL sends are eager: a send is done once its data sits in the
 * connection's buffer, so the threadblock goes on without its receiver.
 * collstep's send completes with its receive; so no step waits for a send
 * (the threadblock's chain skips it), and a send whose source a later step
 * could overwrite (the same threadblock writes it, or the threadblock lets
 * others go on after it with hasdep) first copies it to a buffer of its own,
 * the model of the connection's buffer. */
static int writes(const xstep_t *x)
{
    return x->type == X_R || x->type == X_RCS || x->type == X_RRC || x->type == X_RRCS ||
           x->type == X_CPY || x->type == X_RE;
}

static int overlap(const bctx_t *b, int r, int ba, int oa, int na, int bb, int ob, int nb)
{
    uint64_t a0 = cs__msccl_slot(b, r, ba, oa), b0 = cs__msccl_slot(b, r, bb, ob);
    return a0 < b0 + (uint64_t)nb && b0 < a0 + (uint64_t)na;
}

/* Mark in seen[] (per threadblock t: from off[t]) the steps that step
 * (t, i) waits for, directly or not, on its gpu.  stack: room for one entry
 * per threadblock (each threadblock is entered at most once per depth). */
static void mark_before(const xgpu_t *g, const int *off, uint8_t *seen, int *stack, int t, int i)
{
    int n = 0;
    stack[n++] = off[t] + i;
    while (n > 0) {
        int k = stack[--n], tb = 0;
        while (tb + 1 < g->n && off[tb + 1] <= k)
            tb++;
        for (int j = k - off[tb]; j >= 0 && !seen[off[tb] + j]; j--) {
            seen[off[tb] + j] = 1;
            const xstep_t *x = &g->tb[tb].st[j];
            if (x->wait_tb >= 0 && !seen[off[x->wait_tb] + x->wait_step])
                stack[n++] = off[x->wait_tb] + x->wait_step;
        }
    }
}

static int needs_copy(const bctx_t *b, const xgpu_t *g, const xtb_t *tb, int i, int buf, int off)
{
    const xstep_t *x = &tb->st[i];
    int signals = 0;
    for (int j = i; j < tb->n; j++) {
        const xstep_t *y = &tb->st[j];
        signals |= y->hasdep;
        if (j > i && writes(y) && overlap(b, g->id, buf, off, x->cnt, y->dstbuf, y->dstoff, y->cnt))
            return 1;
    }
    if (!signals)
        return 0;
    /* Writers on other threadblocks that do not come before the send. */
    int *offs = malloc((size_t)(g->n + 1) * sizeof(int)), total = 0;
    if (offs == NULL)
        return 1; /* the safe answer */
    for (int t = 0; t < g->n; t++)
        offs[t] = total, total += g->tb[t].n;
    uint8_t *seen = calloc((size_t)total + 1, 1);
    int *stack = malloc(((size_t)total + 1) * sizeof(int));
    if (seen == NULL || stack == NULL) {
        free(seen);
        free(stack);
        free(offs);
        return 1;
    }
    mark_before(g, offs, seen, stack, tb->id, i);
    free(stack);
    int need = 0;
    for (int t = 0; t < g->n && !need; t++)
        for (int j = 0; t != tb->id && j < g->tb[t].n && !need; j++) {
            const xstep_t *y = &g->tb[t].st[j];
            need = !seen[offs[t] + j] && writes(y) &&
                   overlap(b, g->id, buf, off, x->cnt, y->dstbuf, y->dstoff, y->cnt);
        }
    free(seen);
    free(offs);
    return need;
}

static int emit_xstep(bctx_t *b, cs_sched_t *s, emit_t *e, const xgpu_t *g, const xtb_t *tb,
                      xstep_t *x, cs_err_t *err)
{
    uint32_t deps[2], nd = 0;
    if (x->s > 0 && tb->st[x->s - 1].chain >= 0)
        deps[nd++] = (uint32_t)tb->st[x->s - 1].chain;
    if (x->wait_tb >= 0 && g->tb[x->wait_tb].st[x->wait_step].chain >= 0)
        deps[nd++] = (uint32_t)g->tb[x->wait_tb].st[x->wait_step].chain;
    if (b->staged && nd == 0)
        deps[nd++] = 0; /* the copy of the input into the output */
    if (nd == 2 && deps[0] == deps[1])
        nd = 1;
    cs_range_t src = {0, 0, 0}, dst = {0, 0, 0};
    int rc;
    int has_src = x->type == X_S || x->type == X_RRS || x->type == X_RRC || x->type == X_RRCS ||
                  x->type == X_CPY || x->type == X_RE;
    int has_dst = x->type != X_S && x->type != X_RRS && x->type != X_NOP;
    if (has_src && (rc = cs__msccl_range_of(b, e->r, x->srcbuf, x->srcoff, x->cnt, g, tb, x, &src,
                                            err)) != CS_OK)
        return rc;
    if (has_dst && (rc = cs__msccl_range_of(b, e->r, x->dstbuf, x->dstoff, x->cnt, g, tb, x, &dst,
                                            err)) != CS_OK)
        return rc;
    e->o = (cs_msccl_origin_t){x->line, g->id, tb->id, x->s};
    cs_step_t st;
    memset(&st, 0, sizeof(st));
    st.chan = (uint16_t)tb->chan;
    st.peer = -1;
    int64_t chain = -1, i = 0;
    cs_range_t sent = src; /* what a send step sends */
    switch (x->type) {
    case X_CPY:
    case X_RE:
        st.kind = x->type == X_CPY ? CS_STEP_COPY : CS_STEP_REDUCE, st.src = src, st.dst = dst;
        i = chain = emit_step(s, e, &st, deps, nd);
        break;
    case X_NOP:
        st.kind = CS_STEP_NOP;
        i = chain = emit_step(s, e, &st, deps, nd);
        break;
    case X_R:
        st.kind = CS_STEP_RECV, st.peer = tb->recv, st.dst = dst;
        i = chain = emit_step(s, e, &st, deps, nd);
        break;
    case X_S:
        if (nd == 2) { /* the chain goes on from both waits */
            cs_step_t nop = st;
            nop.kind = CS_STEP_NOP;
            i = emit_step(s, e, &nop, deps, nd);
            deps[0] = (uint32_t)i, nd = 1;
        }
        chain = nd ? (int64_t)deps[0] : -1;
        break;
    case X_RRS: { /* t := src; t := t (op) message; send t */
        cs_step_t cp = st;
        cp.kind = CS_STEP_COPY, cp.src = src, cp.dst = cs_rng(x->tmpbuf, 0, (uint32_t)x->cnt);
        if ((i = emit_step(s, e, &cp, deps, nd)) < 0)
            break;
        deps[0] = (uint32_t)i, nd = 1;
        cs_step_t rv = st;
        rv.kind = CS_STEP_RRECV, rv.peer = tb->recv, rv.dst = cp.dst;
        i = chain = emit_step(s, e, &rv, deps, nd);
        sent = cp.dst;
        break;
    }
    default: { /* rcs, rrc, rrcs: [copy;] recv or rrecv into dst */
        int reduce = x->type != X_RCS;
        if (reduce && !(src.buf == dst.buf && src.off == dst.off)) {
            cs_step_t cp = st;
            cp.kind = CS_STEP_COPY, cp.src = src, cp.dst = dst;
            if ((i = emit_step(s, e, &cp, deps, nd)) < 0)
                break;
            deps[0] = (uint32_t)i, nd = 1;
        }
        cs_step_t rv = st;
        rv.kind = reduce ? CS_STEP_RRECV : CS_STEP_RECV, rv.peer = tb->recv, rv.dst = dst;
        i = chain = emit_step(s, e, &rv, deps, nd);
        sent = dst;
        break;
    }
    }
    if (i >= 0 && cs__msccl_has_send(x->type)) {
        nd = chain >= 0 ? 1 : 0;
        deps[0] = (uint32_t)chain;
        if (x->type != X_RRS && x->tmpbuf >= 0) { /* eager: copy out first */
            cs_step_t cp = st;
            cp.kind = CS_STEP_COPY, cp.src = sent, cp.dst = cs_rng(x->tmpbuf, 0, (uint32_t)x->cnt);
            if ((i = emit_step(s, e, &cp, deps, nd)) >= 0) {
                chain = i;
                deps[0] = (uint32_t)i, nd = 1;
                sent = cp.dst;
            }
        }
        if (i >= 0) {
            cs_step_t sd = st;
            sd.kind = CS_STEP_SEND, sd.peer = tb->send, sd.src = sent;
            i = emit_step(s, e, &sd, deps, nd);
        }
    }
    if (i < 0)
        return cs_err_set(err, s->err.code ? s->err.code : CS_ERR_INTERNAL,
                          "%s:%u: gpu %d tb %d step %d (%s): %s", b->a->fname, x->line, g->id,
                          tb->id, x->s, cs__msccl_type_name(x->type), s->err.msg);
    x->chain = chain;
    x->emitted = 1;
    return CS_OK;
}

/* No threadblock can go on: each waits, at its next step, for a step of
 * another that has not run.  Follow those waits into the cycle and name it. */
static int cycle_error(bctx_t *b, xgpu_t *g, cs_err_t *err)
{
    int t = 0;
    while (t < g->n && g->tb[t].next == g->tb[t].n)
        t++;
    for (int hop = 0; hop < g->n; hop++) /* after n hops we are on the cycle */
        t = g->tb[t].st[g->tb[t].next].wait_tb;
    char msg[CS_ERR_MSG_MAX] = "";
    size_t len = 0;
    int start = t;
    uint32_t line0 = g->tb[t].st[g->tb[t].next].line;
    for (int hop = 0; hop < 8; hop++) {
        const xstep_t *x = &g->tb[t].st[g->tb[t].next];
        len += (size_t)snprintf(msg + len, len < sizeof(msg) ? sizeof(msg) - len : 0,
                                "%stb %d step %d (line %u) waits for tb %d step %d",
                                hop ? "; " : "", t, x->s, x->line, x->wait_tb, x->wait_step);
        t = x->wait_tb;
        if (t == start)
            break;
    }
    return cs_err_set(err, CS_ERR_PARSE,
                      "%s:%u: gpu %d: cyclic dependencies between threadblocks: %s", b->a->fname,
                      line0, g->id, msg);
}

static int emit_gpu(bctx_t *b, cs_sched_t *s, cs_msccl_t *m, int r, cs_err_t *err)
{
    xgpu_t *g = &b->a->gpu[r];
    emit_t e = {m, r, {g->line, r, -1, -1}, 0};
    int rc;
    for (int t = 0; t < g->n; t++) { /* rrs: a buffer for what it sends */
        g->tb[t].next = 0;
        for (int i = 0; i < g->tb[t].n; i++) {
            xstep_t *x = &g->tb[t].st[i];
            int sb = x->srcbuf, so = x->srcoff;
            if (x->type == X_RCS || x->type == X_RRCS)
                sb = x->dstbuf, so = x->dstoff;
            if (x->type != X_RRS &&
                !(cs__msccl_has_send(x->type) && needs_copy(b, g, &g->tb[t], i, sb, so)))
                continue;
            char name[CS_BUF_NAME_MAX];
            snprintf(name, sizeof(name), "%s_t%d_s%d", x->type == X_RRS ? "rrs" : "fifo", t, i);
            uint32_t pos =
                (uint32_t)
                    b->uf.pos[cs__msccl_uf_find(&b->uf, (uint32_t)cs__msccl_slot(b, r, sb, so))];
            x->tmpbuf = cs_sched_add_buffer(s, r, name, pos, (uint32_t)x->cnt);
            if (x->tmpbuf < 0)
                return cs_err_set(err, s->err.code, "%s:%u: %s", b->a->fname, x->line, s->err.msg);
        }
    }
    if (b->staged) { /* an out-of-place call of an in-place algorithm */
        cs_step_t cp;
        memset(&cp, 0, sizeof(cp));
        cp.kind = CS_STEP_COPY;
        cp.peer = -1;
        cp.src = cs_rng(CS_BUF_IN, 0, b->win_in);
        cp.dst = cs_rng(CS_BUF_OUT, cs__msccl_in_base(b, r) - cs__msccl_out_base(b, r), b->win_in);
        e.o = (cs_msccl_origin_t){b->a->line, r, -1, -1};
        if (emit_step(s, &e, &cp, NULL, 0) != 0)
            return cs_err_set(err, s->err.code, "%s:%u: %s", b->a->fname, b->a->line, s->err.msg);
    }
    for (;;) {
        int progress = 0, left = 0;
        for (int t = 0; t < g->n; t++) {
            xtb_t *tb = &g->tb[t];
            while (tb->next < tb->n) {
                xstep_t *x = &tb->st[tb->next];
                if (x->wait_tb >= 0 && !g->tb[x->wait_tb].st[x->wait_step].emitted)
                    break;
                if ((rc = emit_xstep(b, s, &e, g, tb, x, err)) != CS_OK)
                    return rc;
                tb->next++;
                progress = 1;
            }
            left += tb->next < tb->n;
        }
        if (!left)
            return CS_OK;
        if (!progress)
            return cycle_error(b, g, err);
    }
}

static void meta(cs_sched_t *s, const cs_msccl_info_t *in, const char *fname)
{
    char name[48], file[64], params[CS_META_MAX + 64];
    const char *base = strrchr(fname, '/');
    base = base ? base + 1 : fname;
    snprintf(name, sizeof(name), "%.47s", in->name[0] ? in->name : "-");
    snprintf(file, sizeof(file), "%.63s", base);
    for (char *p = name; *p; p++)
        if ((unsigned char)*p <= ' ' || (unsigned char)*p > '~' || *p == '#')
            *p = '_';
    for (char *p = file; *p; p++)
        if ((unsigned char)*p <= ' ' || (unsigned char)*p > '~' || *p == '#')
            *p = '_';
    snprintf(params, sizeof(params),
             "name=%s file=%s proto=%s nchannels=%d nthreadblocks=%d nchunksperloop=%d "
             "minBytes=%lld maxBytes=%lld inplace=%d outofplace=%d%s%s%s",
             name, file, in->proto, in->nchannels, in->nthreadblocks, in->nchunksperloop,
             (long long)in->min_bytes, (long long)in->max_bytes, in->inplace, in->outofplace,
             in->imported_inplace == 2 ? " served=copy-in-place" : "",
             in->redop[0] ? " redop=" : "", in->redop);
    for (char *p = params; *p; p++)
        if ((unsigned char)*p < ' ' || (unsigned char)*p > '~' || *p == '#')
            *p = '_';
    params[CS_META_MAX - 1] = '\0'; /* what the schedule keeps */
    cs_sched_set_meta(s, "msccl", params);
}

int cs__msccl_build(xalgo_t *a, int inplace, cs_msccl_t *m, cs_err_t *err)
{
    bctx_t b;
    memset(&b, 0, sizeof(b));
    b.a = a;
    b.inplace = inplace != 0;
    b.staged = inplace == 2;
    b.P = (uint32_t)a->ngpu;
    b.C = (uint32_t)a->info.nchunksperloop;
    b.coll = cs_coll_parse(a->info.coll);
    if (b.coll != CS_COLL_ALLREDUCE && b.coll != CS_COLL_REDUCE_SCATTER &&
        b.coll != CS_COLL_ALLGATHER && b.coll != CS_COLL_ALLTOALL)
        return cs_err_set(err, CS_ERR_PARSE,
                          "%s:%u: coll=\"%.32s\": collstep checks allreduce, reducescatter, "
                          "allgather and alltoall (a custom collective says nothing of what "
                          "its result must be)",
                          a->fname, a->line, a->info.coll);
    if (inplace && b.coll == CS_COLL_REDUCE_SCATTER)
        return cs_err_set(err, CS_ERR_UNSUPPORTED,
                          "%s:%u: an in-place reduce-scatter: collstep models reduce-scatter "
                          "out of place only",
                          a->fname, a->line);
    int blocked = cs_coll_blocked(b.coll);
    if (blocked && b.C % b.P != 0)
        return cs_err_set(err, CS_ERR_PARSE,
                          "%s:%u: nchunksperloop=\"%u\" is not a multiple of ngpus=\"%u\" (a %s "
                          "has one block per gpu)",
                          a->fname, a->line, b.C, b.P, cs_coll_name(b.coll));
    b.k = blocked ? b.C / b.P : b.C;
    b.win_in = b.coll == CS_COLL_ALLGATHER ? b.k : b.C;
    b.win_out = b.coll == CS_COLL_REDUCE_SCATTER ? b.k : b.C;
    for (uint32_t r = 0; r < b.P; r++) {
        const xgpu_t *g = &a->gpu[r];
        uint32_t wi = inplace && b.coll != CS_COLL_ALLGATHER ? b.win_out : b.win_in;
        if ((uint32_t)g->ichunks > wi || (uint32_t)g->ochunks > b.win_out)
            return cs_err_set(err, CS_ERR_PARSE,
                              "%s:%u: gpu %d: i_chunks=\"%d\" o_chunks=\"%d\", but a %s of "
                              "nchunksperloop=\"%u\" on %u gpus has %u input and %u output "
                              "chunks",
                              a->fname, g->line, g->id, g->ichunks, g->ochunks,
                              cs_coll_name(b.coll), b.C, b.P, wi, b.win_out);
    }
    cs_coll_desc_t desc = {b.coll, (int32_t)b.P, 0, inplace == 1};
    int rc = CS_OK;
    cs_sched_t *s = cs_sched_create(&desc, b.C, err);
    if (s == NULL)
        return err ? err->code : CS_ERR_NOMEM;
    m->nranks = (int)b.P;
    m->origin = calloc(b.P, sizeof(*m->origin));
    m->norigin = calloc(b.P, sizeof(*m->norigin));
    if (m->origin == NULL || m->norigin == NULL) {
        rc = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = cs__msccl_positions(&b, err)) != CS_OK ||
        (rc = cs__msccl_scratch_buffers(&b, s, err)) != CS_OK)
        goto out;
    for (uint32_t r = 0; r < b.P; r++)
        if ((rc = emit_gpu(&b, s, m, (int)r, err)) != CS_OK)
            goto out;
    meta(s, &m->info, a->fname);
    m->sched = s;
    s = NULL;
out:
    cs_sched_destroy(s);
    for (uint32_t r = 0; b.sbuf && r < b.P; r++)
        free(b.sbuf[r]);
    for (uint32_t r = 0; b.sfirst && r < b.P; r++)
        free(b.sfirst[r]);
    free(b.sbuf);
    free(b.sfirst);
    free(b.node0);
    free(b.uf.parent);
    free(b.uf.pos);
    return rc;
}
