/*
 * cs_verify_race.c - per-rank ordering of chunk accesses (races) and the
 * in-place rule.
 *
 * Contract (cs_sched.h): two steps of one rank that touch the same chunk of
 * the same buffer, at least one of them writing it, must be ordered by the
 * rank's own dependencies, transitively.  Accesses: send reads src; recv
 * writes dst; rrecv reads and writes dst; reduce reads src and reads and
 * writes dst; copy reads src and writes dst.  With `inplace`, any access to
 * `in` is an error.
 *
 * Method: dependencies point to smaller indices, so index order is a
 * topological order of a rank's DAG.  Steps are processed in that order
 * keeping, per chunk, the last writer and the readers since.  A read must
 * follow the last writer; a write must follow every reader since the last
 * write, or the last writer when there was no reader (each reader was
 * already checked to follow that writer).
 *
 * "A precedes B": first a look at B's direct dependencies and a one-entry
 * memo (a step touching many chunks usually asks about the same
 * predecessor), which answer nearly every query of the usual generators;
 * then one of two ways:
 *  - a backward depth-first search from B over dependencies, pruned to
 *    indices > A, with an epoch-stamped visited array;
 *  - chains, once the searches of a rank have visited more than 4 times
 *    its steps (so a rank costs O(steps) when searches are rare, and never
 *    much more than the chains): the steps are split greedily into chains
 *    (a step extends the chain of a dependency that is that chain's last
 *    step), and each step gets a row holding, per chain, the latest member
 *    preceding or equal to it (maximum of its dependencies' rows).  A
 *    precedes B iff row(B)[chain(A)] >= A: O(1) per query after
 *    O(steps x chains x deps) per rank.  Ranks too wide for chains (more
 *    than CS__MAX_CHAINS, or too many row entries) stay with the search.
 * Chunk states are stamped with the rank, so one array serves every rank
 * without being cleared.
 */
#include <stdlib.h>
#include <string.h>

#include "cs_grow.h"
#include "cs_verify_int.h"

#define CS__NOIDX UINT32_MAX

enum { ACC_READ = 1, ACC_WRITE = 2 };

typedef struct {
    uint32_t stamp; /* rank + 1 when the fields below belong to this rank */
    uint32_t lw;    /* last writer, or CS__NOIDX */
    uint32_t rd;    /* head of the reader list since that write, or CS__NOIDX */
} cs__cstate_t;

typedef struct {
    uint32_t step, next;
} cs__rnode_t;

typedef struct {
    cs__vctx_t *v;
    int r;
    const cs_rank_sched_t *rk;
    uint64_t *bufoff;     /* first chunk state of each buffer of the rank */
    cs__cstate_t *cst;    /* chunk states */
    cs__rnode_t *nodes;   /* reader lists of the current rank */
    uint32_t nn;
    size_t capn;
    uint32_t *visit, *stack; /* DFS */
    uint32_t *lb;    /* per step: latest barrier preceding or equal to it, or CS__NOIDX */
    uint8_t *open;   /* per step: no successor yet (a sink of the steps so far) */
    uint32_t epoch;
    uint32_t *chain; /* chain of each step; tail (last step) of each chain */
    uint32_t *tail;
    uint32_t *rows;  /* nsteps x nch: latest member + 1 of each chain, 0 = none */
    uint64_t caprows;
    uint32_t nch;    /* 0: chains not used for this rank (DFS) */
    int chains_tried; /* build_chains ran for this rank (nch may still be 0) */
    uint64_t dfs_work; /* steps visited by DFS on this rank */
    int nomem;
    uint32_t memo_a, memo_b; /* last ancestor query and its answer */
    int memo_res;
    uint32_t rep_a, rep_b; /* last race reported */
} cs__race_t;

#define CS__MAX_CHAINS 128
#define CS__MAX_ROWS (16u << 20) /* row entries: 64 MiB */

/* Chains and rows for the current rank; nch = 0 when too wide (DFS then). */
static int build_chains(cs__race_t *rc)
{
    const cs_rank_sched_t *rk = rc->rk;
    uint32_t nch = 0;
    rc->nch = 0;
    for (uint32_t i = 0; i < rk->nsteps; i++) {
        const uint32_t *d = cs_step_deps(rk, &rk->steps[i]);
        uint32_t c = CS__NOIDX;
        for (uint32_t j = 0; j < rk->steps[i].ndeps && c == CS__NOIDX; j++)
            if (rc->tail[rc->chain[d[j]]] == d[j])
                c = rc->chain[d[j]];
        if (c == CS__NOIDX) {
            if (nch == CS__MAX_CHAINS)
                return CS_OK;
            c = nch++;
        }
        rc->chain[i] = c;
        rc->tail[c] = i;
    }
    uint64_t need = (uint64_t)rk->nsteps * nch;
    if (need > CS__MAX_ROWS)
        return CS_OK;
    if (need > rc->caprows) {
        uint32_t *nr = realloc(rc->rows, need * sizeof(*nr));
        if (nr == NULL)
            return CS_ERR_NOMEM;
        rc->rows = nr;
        rc->caprows = need;
    }
    for (uint32_t i = 0; i < rk->nsteps; i++) {
        uint32_t *row = rc->rows + (uint64_t)i * nch;
        memset(row, 0, nch * sizeof(*row));
        const uint32_t *d = cs_step_deps(rk, &rk->steps[i]);
        for (uint32_t j = 0; j < rk->steps[i].ndeps; j++) {
            const uint32_t *dr = rc->rows + (uint64_t)d[j] * nch;
            for (uint32_t c = 0; c < nch; c++)
                row[c] = dr[c] > row[c] ? dr[c] : row[c];
        }
        row[rc->chain[i]] = i + 1;
    }
    rc->nch = nch;
    return CS_OK;
}

/* Barriers of the current rank: step X is a barrier when every step before
 * it precedes it.  Every step of [0, X) reaches a sink of [0, X) (a step
 * without successor there), and a sink can only reach X by a direct edge,
 * so X is a barrier iff all sinks of [0, X) are among its dependencies:
 * one scan keeping the number of open sinks decides it exactly.  lb[i] is
 * then the latest barrier preceding or equal to step i (maximum over its
 * dependencies), and a <= lb[b] proves "a precedes b" in O(1).  Phase
 * generators join each rank's work in a nop between phases, which is a
 * barrier: queries across phases then never search. */
static void build_barriers(cs__race_t *rc)
{
    const cs_rank_sched_t *rk = rc->rk;
    uint32_t nopen = 0;
    for (uint32_t i = 0; i < rk->nsteps; i++) {
        const uint32_t *d = cs_step_deps(rk, &rk->steps[i]);
        uint32_t closed = 0, lb = CS__NOIDX;
        for (uint32_t j = 0; j < rk->steps[i].ndeps; j++) {
            uint32_t y = d[j];
            if (rc->open[y]) {
                rc->open[y] = 0;
                closed++;
            }
            if (rc->lb[y] != CS__NOIDX && (lb == CS__NOIDX || rc->lb[y] > lb))
                lb = rc->lb[y];
        }
        rc->lb[i] = closed == nopen ? i : lb;
        nopen = nopen - closed + 1;
        rc->open[i] = 1;
    }
}

/* Does step a precede step b (a < b) through b's dependencies? */
static int precedes(cs__race_t *rc, uint32_t a, uint32_t b)
{
    if (rc->memo_a == a && rc->memo_b == b)
        return rc->memo_res;
    const cs_rank_sched_t *rk = rc->rk;
    const cs_step_t *sb = &rk->steps[b];
    const uint32_t *d = cs_step_deps(rk, sb);
    int res = 0;
    for (uint32_t j = 0; j < sb->ndeps && !res; j++)
        res = d[j] == a;
    if (!res && rc->lb[b] != CS__NOIDX && a <= rc->lb[b])
        res = 1;
    if (!res && rc->nch == 0 && !rc->chains_tried && rc->dfs_work > 4 * (uint64_t)rk->nsteps) {
        rc->chains_tried = 1;
        if (build_chains(rc) != CS_OK)
            rc->nomem = 1;
    }
    if (!res && rc->nch > 0) {
        res = rc->rows[(uint64_t)b * rc->nch + rc->chain[a]] > a;
    } else if (!res) {
        if (++rc->epoch == 0) {
            memset(rc->visit, 0, rk->nsteps * sizeof(*rc->visit));
            rc->epoch = 1;
        }
        uint32_t top = 0;
        rc->stack[top++] = b;
        while (top > 0 && !res) {
            const cs_step_t *sx = &rk->steps[rc->stack[--top]];
            const uint32_t *dx = cs_step_deps(rk, sx);
            for (uint32_t j = 0; j < sx->ndeps; j++) {
                uint32_t y = dx[j];
                if (y == a || (rc->lb[y] != CS__NOIDX && rc->lb[y] >= a)) {
                    res = 1;
                    break;
                }
                if (y > a && rc->visit[y] != rc->epoch) {
                    rc->visit[y] = rc->epoch;
                    rc->stack[top++] = y;
                    rc->dfs_work++;
                }
            }
        }
    }
    rc->memo_a = a;
    rc->memo_b = b;
    rc->memo_res = res;
    return res;
}

static void race(cs__race_t *rc, uint32_t b, uint32_t a, int b_writes, int a_writes, uint16_t buf,
                 uint32_t c)
{
    if (rc->rep_a == a && rc->rep_b == b)
        return; /* one finding per pair of steps */
    rc->rep_a = a;
    rc->rep_b = b;
    const cs_sched_t *s = rc->v->s;
    char sb[96], sa[96], rg[64];
    cs__vrange(s, rc->r, buf, c, 1, rg, sizeof(rg));
    cs__vfind(rc->v, "race", rc->r, b, (int64_t)rc->rk->bufs[buf].base + c,
              "rank %d %s %s %s while %s %s it, and no dependency path orders the two", rc->r,
              cs__vstep(s, rc->r, b, sb, sizeof(sb)), b_writes ? "writes" : "reads", rg,
              cs__vstep(s, rc->r, a, sa, sizeof(sa)), a_writes ? "writes" : "reads");
}

static int push_reader(cs__race_t *rc, cs__cstate_t *cs, uint32_t b)
{
    if (cs->rd != CS__NOIDX && rc->nodes[cs->rd].step == b)
        return CS_OK;
    if (cs_grow(&rc->nodes, &rc->capn, (size_t)rc->nn + 1, sizeof(*rc->nodes), 1024))
        return CS_ERR_NOMEM;
    rc->nodes[rc->nn] = (cs__rnode_t){b, cs->rd};
    cs->rd = rc->nn++;
    return CS_OK;
}

static int touch(cs__race_t *rc, uint32_t b, const cs_range_t *rg, int mode)
{
    uint32_t stamp = (uint32_t)rc->r + 1;
    cs__cstate_t *base = rc->cst + rc->bufoff[rg->buf];
    for (uint32_t c = rg->off; c < rg->off + rg->n; c++) {
        cs__cstate_t *cs = &base[c];
        if (cs->stamp != stamp)
            *cs = (cs__cstate_t){stamp, CS__NOIDX, CS__NOIDX};
        if (mode & ACC_WRITE) {
            if (cs->rd != CS__NOIDX) {
                for (uint32_t x = cs->rd; x != CS__NOIDX; x = rc->nodes[x].next) {
                    uint32_t a = rc->nodes[x].step;
                    if (a != b && !precedes(rc, a, b))
                        race(rc, b, a, 1, 0, rg->buf, c);
                }
            } else if (cs->lw != CS__NOIDX && cs->lw != b && !precedes(rc, cs->lw, b)) {
                race(rc, b, cs->lw, 1, 1, rg->buf, c);
            }
            cs->lw = b;
            cs->rd = CS__NOIDX;
        } else {
            if (cs->lw != CS__NOIDX && cs->lw != b && !precedes(rc, cs->lw, b))
                race(rc, b, cs->lw, 0, 1, rg->buf, c);
            if (push_reader(rc, cs, b) != CS_OK)
                return CS_ERR_NOMEM;
        }
    }
    return CS_OK;
}

static void inplace_check(cs__race_t *rc, uint32_t i, const cs_step_t *st)
{
    const cs_range_t *rg = NULL;
    int sw = st->kind == CS_STEP_SWITCH;
    int has_src = st->kind == CS_STEP_SEND || st->kind == CS_STEP_REDUCE ||
                  st->kind == CS_STEP_COPY || (sw && st->src.n > 0);
    int has_dst = sw ? st->dst.n > 0 : st->kind != CS_STEP_SEND && st->kind != CS_STEP_NOP;
    if (has_src && st->src.buf == CS_BUF_IN)
        rg = &st->src;
    else if (has_dst && st->dst.buf == CS_BUF_IN)
        rg = &st->dst;
    if (rg == NULL)
        return;
    char sd[96], rs[64];
    cs__vfind(rc->v, "inplace", rc->r, i, (int64_t)rc->rk->bufs[CS_BUF_IN].base + rg->off,
              "rank %d %s touches %s, but an in-place schedule must not touch 'in' (the "
              "input is already in 'out')",
              rc->r, cs__vstep(rc->v->s, rc->r, i, sd, sizeof(sd)),
              cs__vrange(rc->v->s, rc->r, rg->buf, rg->off, rg->n, rs, sizeof(rs)));
}

static int check_rank(cs__race_t *rc)
{
    const cs_rank_sched_t *rk = rc->rk;
    int inplace = rc->v->s->desc.inplace;
    uint64_t acc = 0;
    for (uint16_t b = 0; b < rk->nbufs; b++) {
        rc->bufoff[b] = acc;
        acc += rk->bufs[b].nchunks;
    }
    rc->nn = 0;
    rc->memo_a = rc->memo_b = rc->rep_a = rc->rep_b = CS__NOIDX;
    rc->nch = 0;
    rc->chains_tried = 0;
    rc->dfs_work = 0;
    build_barriers(rc);
    for (uint32_t i = 0; i < rk->nsteps; i++) {
        const cs_step_t *st = &rk->steps[i];
        int st_ok = CS_OK;
        if (inplace)
            inplace_check(rc, i, st);
        switch (st->kind) {
        case CS_STEP_SEND:
            st_ok = touch(rc, i, &st->src, ACC_READ);
            break;
        case CS_STEP_RECV:
            st_ok = touch(rc, i, &st->dst, ACC_WRITE);
            break;
        case CS_STEP_RRECV:
            st_ok = touch(rc, i, &st->dst, ACC_READ | ACC_WRITE);
            break;
        case CS_STEP_REDUCE:
            st_ok = touch(rc, i, &st->src, ACC_READ);
            if (st_ok == CS_OK)
                st_ok = touch(rc, i, &st->dst, ACC_READ | ACC_WRITE);
            break;
        case CS_STEP_COPY:
            st_ok = touch(rc, i, &st->src, ACC_READ);
            if (st_ok == CS_OK)
                st_ok = touch(rc, i, &st->dst, ACC_WRITE);
            break;
        case CS_STEP_SWITCH: /* src read by the switch, dst written by it */
            if (st->src.n > 0)
                st_ok = touch(rc, i, &st->src, ACC_READ);
            if (st_ok == CS_OK && st->dst.n > 0)
                st_ok = touch(rc, i, &st->dst, ACC_WRITE);
            break;
        default:
            break;
        }
        if (st_ok == CS_OK && rc->nomem)
            st_ok = CS_ERR_NOMEM;
        if (st_ok != CS_OK)
            return st_ok;
    }
    return CS_OK;
}

int cs__verify_races(cs__vctx_t *v)
{
    const cs_sched_t *s = v->s;
    uint64_t maxch = 0;
    uint32_t maxsteps = 1, maxbufs = 1;
    for (int r = 0; r < s->desc.nranks; r++) {
        const cs_rank_sched_t *rk = &s->ranks[r];
        uint64_t ch = 0;
        for (uint16_t b = 0; b < rk->nbufs; b++)
            ch += rk->bufs[b].nchunks;
        if (ch > maxch)
            maxch = ch;
        if (rk->nsteps > maxsteps)
            maxsteps = rk->nsteps;
        if (rk->nbufs > maxbufs)
            maxbufs = rk->nbufs;
    }
    cs__race_t rc = {.v = v};
    int st = CS_ERR_NOMEM;
    rc.bufoff = malloc(maxbufs * sizeof(*rc.bufoff));
    rc.cst = calloc(maxch ? maxch : 1, sizeof(*rc.cst));
    rc.visit = calloc(maxsteps, sizeof(*rc.visit));
    rc.lb = malloc((size_t)maxsteps * sizeof(*rc.lb));
    rc.open = malloc(maxsteps);
    rc.stack = malloc((size_t)maxsteps * sizeof(*rc.stack));
    rc.chain = malloc((size_t)maxsteps * sizeof(*rc.chain));
    rc.tail = malloc(CS__MAX_CHAINS * sizeof(*rc.tail));
    if (!rc.bufoff || !rc.cst || !rc.visit || !rc.lb || !rc.open || !rc.stack || !rc.chain ||
        !rc.tail)
        goto out;
    for (int r = 0; r < s->desc.nranks; r++) {
        rc.r = r;
        rc.rk = &s->ranks[r];
        st = check_rank(&rc);
        if (st != CS_OK)
            goto out;
    }
    st = CS_OK;
out:
    free(rc.rows);
    free(rc.tail);
    free(rc.chain);
    free(rc.nodes);
    free(rc.stack);
    free(rc.open);
    free(rc.lb);
    free(rc.visit);
    free(rc.cst);
    free(rc.bufoff);
    return st;
}
