/*
 * cs_sim_prog.c - compile a schedule for the rank interpreter.
 *
 * For every step (global id base[r] + i) it fills one cs__op_t
 * (cs_sim_int.h) with:
 *   - its successors (the inverse of the dependency lists): up to
 *     CS__SUCC_INL in the step itself, longer lists in one CSR array per
 *     rank, so finishing a step releases its successors in O(successors);
 *   - its channel successor: the next send (resp. receive) of the same
 *     rank to (resp. from) the same peer on the same channel.  A step with
 *     a channel predecessor waits until that predecessor has been issued (a
 *     receive) or has completed (a send), so each channel is posted in
 *     schedule order (cs_sched.h's matching rule) and carries one message
 *     at a time;
 *   - its kind.
 * The count of events a step awaits (dependencies + 1 with a channel
 * predecessor) is set by the rank actor when an instance starts.
 * Channel predecessors are found with one open-addressing table per rank
 * keyed by (direction, channel, peer): O(steps) for the whole schedule.
 * Each channel direction of a rank gets an index in the rank's mailbox
 * table; the mailboxes are resolved inside the simulation
 * (cs__prog_mailboxes, once per program): one sg_mailbox_by_name each.
 * Bytes are per instance: the rank actor fills them when the instance
 * starts.
 *
 * ops[] is mapped directly (page-aligned, so line-aligned; zero-filled
 * without a pass over it), not taken from malloc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <simgrid/mailbox.h>

#include "cs_sim_int.h"

static uint64_t key_of(const cs_step_t *st)
{
    uint64_t dir = (st->kind == CS_STEP_SEND) ? 1 : 2;
    return (dir << 56) | ((uint64_t)st->chan << 32) | (uint32_t)st->peer;
}

static uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return k;
}

int cs__prog_build(cs__prog_t *p, const cs_sched_t *s, cs_err_t *err)
{
    int P = s->desc.nranks;
    int st = CS_ERR_NOMEM;
    uint64_t *tkeys = NULL;
    uint32_t *tvals = NULL;
    memset(p, 0, sizeof(*p));
    p->s = s;
    p->nranks = P;
    p->base = malloc(sizeof(uint64_t) * ((size_t)P + 1));
    p->succ_base = malloc(sizeof(uint64_t) * ((size_t)P + 1));
    p->mbox_base = malloc(sizeof(uint64_t) * ((size_t)P + 1));
    if (!p->base || !p->succ_base || !p->mbox_base)
        goto fail;
    uint64_t n = 0;
    uint32_t maxsteps = 0;
    for (int r = 0; r < P; r++) {
        p->base[r] = n;
        n += s->ranks[r].nsteps;
        if (s->ranks[r].nsteps > maxsteps)
            maxsteps = s->ranks[r].nsteps;
    }
    p->base[P] = n;
    p->ops_len = (n ? (size_t)n : 1) * sizeof(cs__op_t);
    p->ops = mmap(NULL, p->ops_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p->ops == MAP_FAILED)
        p->ops = NULL;
    else /* woken ranks land anywhere in it: 2 MiB pages spare most TLB misses */
        madvise(p->ops, p->ops_len, MADV_HUGEPAGE);
    size_t tsize = 16;
    while (tsize < 2 * (size_t)maxsteps)
        tsize <<= 1;
    tkeys = malloc(sizeof(uint64_t) * tsize);
    tvals = malloc(sizeof(uint32_t) * tsize);
    if (!p->ops || !tkeys || !tvals)
        goto fail;

    /* pass 1, per rank: kinds, successor counts, channel successors and
     * mailbox indices (one per channel direction, in order of first use),
     * then where the long successor lists go */
    uint64_t nsucc_all = 0, nmbox_all = 0;
    for (int r = 0; r < P; r++) {
        const cs_rank_sched_t *rk = &s->ranks[r];
        cs__op_t *op = p->ops + p->base[r];
        for (uint32_t i = 0; i < rk->nsteps; i++) {
            const uint32_t *d = cs_step_deps(rk, &rk->steps[i]);
            for (uint32_t j = 0; j < rk->steps[i].ndeps; j++)
                op[d[j]].nsucc++;
        }
        size_t need = 16;
        while (need < 2 * (size_t)rk->nsteps)
            need <<= 1;
        size_t mask = need - 1;
        memset(tkeys, 0, sizeof(uint64_t) * need);
        uint32_t nmbx = 0;
        for (uint32_t i = 0; i < rk->nsteps; i++) {
            const cs_step_t *sp = &rk->steps[i];
            op[i].kind = sp->kind;
            op[i].chan_next = CS__NONE32;
            if (sp->kind != CS_STEP_SEND && sp->kind != CS_STEP_RECV && sp->kind != CS_STEP_RRECV)
                continue;
            uint64_t k = key_of(sp);
            size_t h = (size_t)mix(k) & mask;
            while (tkeys[h] != 0 && tkeys[h] != k)
                h = (h + 1) & mask;
            if (tkeys[h] == k) {
                op[tvals[h]].chan_next = i;
                op[i].mbx = op[tvals[h]].mbx;
            } else if (nmbx == CS__MAX_MBX) {
                st = cs_err_set(err, CS_ERR_UNSUPPORTED,
                                "sim: rank %d has more than %u channels", r, CS__MAX_MBX);
                goto fail_set;
            } else {
                op[i].mbx = nmbx++;
            }
            tkeys[h] = k;
            tvals[h] = i;
        }
        p->mbox_base[r] = nmbox_all;
        nmbox_all += nmbx;
        p->succ_base[r] = nsucc_all;
        uint32_t off = 0;
        for (uint32_t i = 0; i < rk->nsteps; i++) {
            if (op[i].nsucc > CS__SUCC_INL) {
                op[i].s[0] = off;
                op[i].s[1] = 0; /* fill cursor */
                off += op[i].nsucc;
            } else {
                op[i].s[0] = op[i].s[1] = CS__NONE32;
            }
        }
        nsucc_all += off;
    }
    p->mbox_base[P] = nmbox_all;
    p->succ_base[P] = nsucc_all;
    p->succ = malloc(sizeof(uint32_t) * (nsucc_all ? (size_t)nsucc_all : 1));
    p->mbox = calloc(nmbox_all ? (size_t)nmbox_all : 1, sizeof(*p->mbox));
    if (!p->succ || !p->mbox)
        goto fail;

    /* pass 2: successors, inline (first free slot) or in the list */
    for (int r = 0; r < P; r++) {
        const cs_rank_sched_t *rk = &s->ranks[r];
        cs__op_t *op = p->ops + p->base[r];
        uint32_t *succ = p->succ + p->succ_base[r];
        for (uint32_t i = 0; i < rk->nsteps; i++) {
            const uint32_t *d = cs_step_deps(rk, &rk->steps[i]);
            for (uint32_t j = 0; j < rk->steps[i].ndeps; j++) {
                cs__op_t *o = &op[d[j]];
                if (o->nsucc > CS__SUCC_INL)
                    succ[o->s[0] + o->s[1]++] = i;
                else
                    o->s[o->s[0] == CS__NONE32 ? 0 : 1] = i;
            }
        }
        for (uint32_t i = 0; i < rk->nsteps; i++)
            if (op[i].nsucc > CS__SUCC_INL)
                op[i].s[1] = CS__NONE32;
    }
    free(tkeys);
    free(tvals);
    return CS_OK;
fail:
    cs_err_set(err, st, "sim: out of memory compiling a schedule of %d ranks", P);
fail_set:
    free(tkeys);
    free(tvals);
    cs__prog_fini(p);
    return st;
}

void cs__prog_mailboxes(cs__prog_t *p)
{
    if (p->mb_ready)
        return;
    for (int r = 0; r < p->nranks; r++) {
        const cs_rank_sched_t *rk = &p->s->ranks[r];
        const cs__op_t *op = p->ops + p->base[r];
        sg_mailbox_t *mb = p->mbox + p->mbox_base[r];
        for (uint32_t i = 0; i < rk->nsteps; i++) {
            const cs_step_t *sp = &rk->steps[i];
            if ((sp->kind != CS_STEP_SEND && sp->kind != CS_STEP_RECV &&
                 sp->kind != CS_STEP_RRECV) || mb[op[i].mbx])
                continue;
            int src = sp->kind == CS_STEP_SEND ? r : sp->peer;
            int dst = sp->kind == CS_STEP_SEND ? sp->peer : r;
            char name[64];
            snprintf(name, sizeof(name), "cs:%d:%d:%u", src, dst, (unsigned)sp->chan);
            mb[op[i].mbx] = sg_mailbox_by_name(name);
        }
    }
    p->mb_ready = 1;
}

void cs__prog_fini(cs__prog_t *p)
{
    free(p->base);
    free(p->succ_base);
    if (p->ops)
        munmap(p->ops, p->ops_len);
    free(p->succ);
    free(p->mbox_base);
    free(p->mbox);
    memset(p, 0, sizeof(*p));
}
