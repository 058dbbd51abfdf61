/*
 * cs_sim_prog.c - compile a schedule for the rank interpreter.
 *
 * For every step (global id base[r] + i) it computes:
 *   - its successors (the inverse of the dependency lists), as one CSR
 *     array, so finishing a step releases its successors in O(successors);
 *   - its channel predecessor: the previous send (resp. receive) of the
 *     same rank to (resp. from) the same peer on the same channel.  A step
 *     with a predecessor waits until that predecessor has been issued (a
 *     receive) or has completed (a send), so each channel is posted in
 *     schedule order (cs_sched.h's matching rule) and carries one message
 *     at a time;
 *   - npend0 = number of dependencies + 1 if it has a channel predecessor:
 *     the count of events that must happen before the step can be issued.
 * Channel predecessors are found with one open-addressing table per rank
 * keyed by (direction, channel, peer): O(steps) for the whole schedule.
 * Mailboxes are resolved later, inside the simulation, once per channel
 * direction (stored at the gid of the channel's first step).
 */
#include <stdlib.h>
#include <string.h>

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
    uint32_t *tvals = NULL, *tfirst = NULL;
    memset(p, 0, sizeof(*p));
    p->s = s;
    p->nranks = P;
    p->base = malloc(sizeof(uint64_t) * ((size_t)P + 1));
    if (!p->base)
        goto fail;
    uint64_t n = 0, nd = 0;
    uint32_t maxsteps = 0;
    for (int r = 0; r < P; r++) {
        p->base[r] = n;
        n += s->ranks[r].nsteps;
        nd += s->ranks[r].ndeps;
        if (s->ranks[r].nsteps > maxsteps)
            maxsteps = s->ranks[r].nsteps;
    }
    p->base[P] = n;
    size_t nn = n ? (size_t)n : 1;
    p->npend0 = malloc(sizeof(uint32_t) * nn);
    p->chan_next = malloc(sizeof(uint32_t) * nn);
    p->chan_first = malloc(sizeof(uint32_t) * nn);
    p->succ_off = calloc(nn + 1, sizeof(uint64_t));
    p->succ = malloc(sizeof(uint32_t) * (nd ? (size_t)nd : 1));
    p->mbox = calloc(nn, sizeof(sg_mailbox_t));
    size_t tsize = 16;
    while (tsize < 2 * (size_t)maxsteps)
        tsize <<= 1;
    tkeys = malloc(sizeof(uint64_t) * tsize);
    tvals = malloc(sizeof(uint32_t) * tsize);
    tfirst = malloc(sizeof(uint32_t) * tsize);
    if (!tfirst || !p->chan_first || !p->npend0 || !p->chan_next || !p->succ_off || !p->succ || !p->mbox || !tkeys || !tvals)
        goto fail;

    /* successor counts, then prefix sums, then fill */
    for (int r = 0; r < P; r++) {
        const cs_rank_sched_t *rk = &s->ranks[r];
        for (uint32_t i = 0; i < rk->nsteps; i++) {
            const uint32_t *d = cs_step_deps(rk, &rk->steps[i]);
            for (uint32_t j = 0; j < rk->steps[i].ndeps; j++)
                p->succ_off[p->base[r] + d[j] + 1]++;
        }
    }
    for (uint64_t g = 0; g < n; g++)
        p->succ_off[g + 1] += p->succ_off[g];
    for (int r = 0; r < P; r++) {
        const cs_rank_sched_t *rk = &s->ranks[r];
        uint64_t b = p->base[r];
        for (uint32_t i = 0; i < rk->nsteps; i++) {
            const uint32_t *d = cs_step_deps(rk, &rk->steps[i]);
            for (uint32_t j = 0; j < rk->steps[i].ndeps; j++) {
                /* succ_off[g] is used as a cursor, restored below */
                p->succ[p->succ_off[b + d[j]]++] = i;
            }
        }
    }
    for (uint64_t g = n; g > 0; g--)
        p->succ_off[g] = p->succ_off[g - 1];
    p->succ_off[0] = 0;

    /* channel predecessors */
    for (int r = 0; r < P; r++) {
        const cs_rank_sched_t *rk = &s->ranks[r];
        uint64_t b = p->base[r];
        size_t need = 16;
        while (need < 2 * (size_t)rk->nsteps)
            need <<= 1;
        size_t mask = need - 1;
        memset(tkeys, 0, sizeof(uint64_t) * need);
        for (uint32_t i = 0; i < rk->nsteps; i++) {
            const cs_step_t *sp = &rk->steps[i];
            p->npend0[b + i] = sp->ndeps;
            p->chan_next[b + i] = CS__NONE32;
            p->chan_first[b + i] = i;
            if (sp->kind != CS_STEP_SEND && sp->kind != CS_STEP_RECV && sp->kind != CS_STEP_RRECV)
                continue;
            uint64_t k = key_of(sp);
            size_t h = (size_t)mix(k) & mask;
            while (tkeys[h] != 0 && tkeys[h] != k)
                h = (h + 1) & mask;
            if (tkeys[h] == k) {
                p->chan_next[b + tvals[h]] = i;
                p->npend0[b + i]++;
                p->chan_first[b + i] = tfirst[h];
            } else {
                tfirst[h] = i;
            }
            tkeys[h] = k;
            tvals[h] = i;
        }
    }
    free(tkeys);
    free(tvals);
    free(tfirst);
    return CS_OK;
fail:
    free(tkeys);
    free(tvals);
    free(tfirst);
    cs__prog_fini(p);
    return cs_err_set(err, st, "sim: out of memory compiling a schedule of %d ranks", P);
}

void cs__prog_fini(cs__prog_t *p)
{
    free(p->base);
    free(p->npend0);
    free(p->chan_next);
    free(p->chan_first);
    free(p->succ_off);
    free(p->succ);
    free(p->mbox);
    memset(p, 0, sizeof(*p));
}
