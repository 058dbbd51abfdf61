/*
 * cs_sim_prog.c - compile a schedule for the rank interpreter.
 *
 * For every step (global id base[r] + i) it fills one cs__op_t
 * (cs_sim_int.h) from the rank's plan (cs_plan.h: successor lists and
 * channel queues, worked out there for every backend) with:
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
 * predecessor) and its bytes are set when an instance starts: by the rank
 * actor, or here for the first instance (priming, see cs_sim_int.h), while
 * the rank's steps are in the caches anyway.
 * Each channel direction of a rank (a queue of its plan) gets an index in
 * the rank's mailbox table; the mailboxes are resolved inside the
 * simulation (cs__prog_mailboxes, once per program): one
 * sg_mailbox_by_name each, named from the channel's first step (mfirst).
 *
 * Each rank on its own: its plan, then its ops from the plan, back to
 * back.  What costs is memory, so the ops are written while the plan has
 * left the rank's steps in the caches (a rank of a 1536-GPU ring is about
 * 0.5 MB with its compiled steps; a pass over all ranks and then another
 * read the schedule from memory twice), and its successor lists and
 * mailboxes go into arrays of its range of ranks, joined at the end.  The
 * plan's arrays are one rank's, reused from rank to rank.  Large schedules
 * are compiled on several threads, ranks split into contiguous ranges of
 * about equal step counts; the result does not depend on the split.  Fresh
 * pages are costly too (ops[] is hundreds of MB at 1536 Summit GPUs, and
 * this class of machine zeroes pages at about 1 GB/s): the threads share
 * those page faults as well.
 *
 * ops[] is mapped directly (page-aligned, so line-aligned; zero-filled
 * without a pass over it), not taken from malloc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <simgrid/mailbox.h>

#include "cs_grow.h"
#include "cs_log.h"
#include "cs_plan.h"
#include "cs_sim_int.h"
#include "cs_thread.h"

#define MAX_THREADS CS_THREAD_MAX
#define STEPS_PER_THREAD (1u << 18) /* below this, one thread does it all */

uint64_t cs__step_bytes(const cs_sched_t *s, int r, const cs_step_t *st, uint64_t count,
                        size_t esize)
{
    const cs_range_t *rg;
    switch (st->kind) {
    case CS_STEP_SEND:
        rg = &st->src;
        break;
    case CS_STEP_RECV:
    case CS_STEP_RRECV:
    case CS_STEP_REDUCE:
    case CS_STEP_COPY:
        rg = &st->dst;
        break;
    case CS_STEP_SWITCH: /* the member's source, or its destination (same length) */
        rg = st->src.n ? &st->src : &st->dst;
        break;
    default:
        return 0;
    }
    return cs_range_elems(s, &s->ranks[r].bufs[rg->buf], count, rg->off, rg->n) * esize;
}

/* One thread's share: ranks [r0, r1). */
typedef struct part {
    cs__prog_t *p;
    const cs__prime_t *prime;
    int r0, r1;
    cs_plan_rank_t plan; /* the rank being compiled (arrays reused from rank to rank) */
    int bad_rank;    /* first rank with too many channels, or -1 */
    int nomem;       /* a growth of the arrays below failed */
    /* the range's successor lists and mailbox first steps, back to back;
     * succ_base[r] and mbox_base[r] are offsets in these until
     * cs__prog_build moves them into the program's arrays */
    uint32_t *succ, *mfirst;
    uint64_t nsucc, nmbox;
    size_t cap_succ, cap_mbox;
} part_t;

/* Rank r: its plan (successor lists and channel queues, cs_plan.h), then,
 * while the plan and the steps are in the caches, its ops: kind, channel
 * successor, mailbox (its queue's number: one per channel direction, in
 * order of first use), successors inline or in the range's list (whose
 * offsets go to succ_base[r] and mbox_base[r]), each mailbox's first step,
 * and the priming.  -1: too many channels or out of memory (bad_rank or
 * nomem says which). */
static int compile_rank(part_t *w, int r)
{
    cs__prog_t *p = w->p;
    const cs_rank_sched_t *rk = &p->s->ranks[r];
    cs__op_t *op = p->ops + p->base[r];
    const cs_plan_rank_t *pl = &w->plan;
    if (cs_plan_rank_build(&w->plan, p->s, r, NULL) != CS_OK) {
        w->nomem = 1;
        return -1;
    }
    if (pl->nqueues > CS__MAX_MBX) {
        w->bad_rank = r;
        return -1;
    }
    uint32_t nlong = 0;
    for (uint32_t i = 0; i < rk->nsteps; i++) {
        uint32_t n = cs_plan_nsucc(pl, i);
        nlong += n > CS__SUCC_INL ? n : 0;
    }
    if (cs_grow(&w->succ, &w->cap_succ, w->nsucc + nlong, sizeof(*w->succ), 1024) ||
        cs_grow(&w->mfirst, &w->cap_mbox, w->nmbox + pl->nqueues, sizeof(*w->mfirst), 1024)) {
        w->nomem = 1;
        return -1;
    }
    p->succ_base[r] = w->nsucc;
    p->mbox_base[r] = w->nmbox;
    /* still NULL while nothing was reserved: no arithmetic on them then */
    uint32_t *succ = w->succ ? w->succ + w->nsucc : NULL;
    uint32_t *mfirst = w->mfirst ? w->mfirst + w->nmbox : NULL;
    uint32_t off = 0;
    for (uint32_t i = 0; i < rk->nsteps; i++) {
        uint32_t n = cs_plan_nsucc(pl, i);
        const uint32_t *l = cs_plan_succ(pl, i);
        op[i].kind = rk->steps[i].kind;
        op[i].chan_next = pl->chan_next[i];
        op[i].nsucc = n;
        if (n > CS__SUCC_INL) {
            op[i].s[0] = off;
            op[i].s[1] = CS__NONE32;
            memcpy(succ + off, l, n * sizeof(*l));
            off += n;
        } else {
            op[i].s[0] = n > 0 ? l[0] : CS__NONE32;
            op[i].s[1] = n > 1 ? l[1] : CS__NONE32;
        }
    }
    for (uint32_t q = 0; q < pl->nqueues; q++) {
        mfirst[q] = pl->queues[q].first;
        for (uint32_t i = pl->queues[q].first; i != CS_PLAN_NONE; i = pl->chan_next[i])
            op[i].mbx = q;
    }
    w->nsucc += nlong;
    w->nmbox += pl->nqueues;
    if (w->prime)
        p->nready[r] = cs__prog_prime_rank(p, r, w->prime->count, w->prime->esize,
                                           w->prime->ready + p->base[r]);
    return 0;
}

uint32_t cs__prog_prime_rank(cs__prog_t *p, int r, uint64_t count, size_t esize, uint32_t *ready)
{
    const cs_sched_t *s = p->s;
    const cs_rank_sched_t *rk = &s->ranks[r];
    cs__op_t *op = p->ops + p->base[r];
    for (uint32_t i = 0; i < rk->nsteps; i++) {
        op[i].npend = rk->steps[i].ndeps;
        op[i].bytes = (double)cs__step_bytes(s, r, &rk->steps[i], count, esize);
    }
    /* a channel predecessor always comes first: by the time step i is
     * reached, every event it awaits is counted */
    uint32_t nready = 0;
    for (uint32_t i = 0; i < rk->nsteps; i++) {
        if (op[i].chan_next != CS__NONE32)
            op[op[i].chan_next].npend++;
        if (op[i].npend == 0)
            ready[nready++] = i;
    }
    return nready;
}

static void *run_part(void *arg)
{
    part_t *w = arg;
    for (int r = w->r0; r < w->r1; r++)
        if (compile_rank(w, r) != 0)
            break;
    return NULL;
}

/* Split the ranks into nw ranges of about equal step counts.  Returns the
 * number of parts. */
static int split(cs__prog_t *p, const cs__prime_t *prime, part_t *w, int nw)
{
    int P = p->nranks;
    uint64_t n = p->base[P];
    int r = 0, t = 0;
    for (; t < nw && r < P; t++) {
        uint64_t goal = n * (uint64_t)(t + 1) / (uint64_t)nw;
        memset(&w[t], 0, sizeof(w[t]));
        w[t].p = p;
        w[t].prime = prime;
        w[t].r0 = r;
        w[t].bad_rank = -1;
        do
            r++;
        while (r < P && (p->base[r] < goal || t == nw - 1));
        w[t].r1 = r;
    }
    return t;
}

static void part_free(part_t *w)
{
    cs_plan_rank_fini(&w->plan);
    free(w->succ);
    free(w->mfirst);
}

int cs__prog_build(cs__prog_t *p, const cs_sched_t *s, const cs__prime_t *prime, cs_err_t *err)
{
    int P = s->desc.nranks;
    int st = CS_ERR_NOMEM, nw = 0;
    part_t w[MAX_THREADS];
    memset(p, 0, sizeof(*p));
    p->s = s;
    p->nranks = P;
    p->base = malloc(sizeof(uint64_t) * ((size_t)P + 1));
    p->succ_base = malloc(sizeof(uint64_t) * ((size_t)P + 1));
    p->mbox_base = malloc(sizeof(uint64_t) * ((size_t)P + 1));
    if (prime)
        p->nready = malloc(sizeof(uint32_t) * ((size_t)P + 1));
    if (!p->base || !p->succ_base || !p->mbox_base || (prime && !p->nready))
        goto fail;
    uint64_t n = 0;
    for (int r = 0; r < P; r++) {
        p->base[r] = n;
        n += s->ranks[r].nsteps;
    }
    p->base[P] = n;
    p->ops_len = (n ? (size_t)n : 1) * sizeof(cs__op_t);
    p->ops = mmap(NULL, p->ops_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p->ops == MAP_FAILED) {
        p->ops = NULL;
        goto fail;
    }
    /* woken ranks land anywhere in it: 2 MiB pages spare most TLB misses */
    madvise(p->ops, p->ops_len, MADV_HUGEPAGE);
    /* CS_SIM_THREADS=N (1 to 8) sets the count whatever the size (tests run
     * the split on small schedules) */
    nw = split(p, prime, w, cs_thread_count("CS_SIM_THREADS", "sim", n, STEPS_PER_THREAD));
    p->nthreads = nw;
    cs_thread_run(run_part, w, sizeof(w[0]), nw);
    for (int t = 0; t < nw; t++) {
        if (w[t].bad_rank >= 0) {
            st = cs_err_set(err, CS_ERR_UNSUPPORTED, "sim: rank %d has more than %u channels",
                            w[t].bad_rank, CS__MAX_MBX);
            goto fail_set;
        }
        if (w[t].nomem)
            goto fail;
    }
    /* the ranges' arrays, back to back */
    uint64_t nsucc_all = 0, nmbox_all = 0;
    for (int t = 0; t < nw; t++) {
        nsucc_all += w[t].nsucc;
        nmbox_all += w[t].nmbox;
    }
    p->succ = malloc(sizeof(uint32_t) * (nsucc_all ? (size_t)nsucc_all : 1));
    p->mbox = calloc(nmbox_all ? (size_t)nmbox_all : 1, sizeof(*p->mbox));
    p->mfirst = malloc(sizeof(uint32_t) * (nmbox_all ? (size_t)nmbox_all : 1));
    if (!p->succ || !p->mbox || !p->mfirst)
        goto fail;
    nsucc_all = nmbox_all = 0;
    for (int t = 0; t < nw; t++) {
        if (w[t].nsucc)
            memcpy(p->succ + nsucc_all, w[t].succ, sizeof(uint32_t) * w[t].nsucc);
        if (w[t].nmbox)
            memcpy(p->mfirst + nmbox_all, w[t].mfirst, sizeof(uint32_t) * w[t].nmbox);
        for (int r = w[t].r0; r < w[t].r1; r++) {
            p->succ_base[r] += nsucc_all;
            p->mbox_base[r] += nmbox_all;
        }
        nsucc_all += w[t].nsucc;
        nmbox_all += w[t].nmbox;
    }
    p->succ_base[P] = nsucc_all;
    p->mbox_base[P] = nmbox_all;
    if (s->nswitch > 0) {
        st = cs__sw_build(p, err);
        if (st != CS_OK)
            goto fail_set;
    }
    if (prime) {
        p->primed = 1;
        p->prime_count = prime->count;
        p->prime_esize = prime->esize;
    }
    for (int t = 0; t < nw; t++)
        part_free(&w[t]);
    return CS_OK;
fail:
    cs_err_set(err, st, "sim: out of memory compiling a schedule of %d ranks", P);
fail_set:
    for (int t = 0; t < nw; t++)
        part_free(&w[t]);
    cs__prog_fini(p);
    return st;
}

int cs__prog_take_prime(cs__prog_t *p, uint64_t count, size_t esize)
{
    int ok = p->primed && p->prime_count == count && p->prime_esize == esize;
    p->primed = 0;
    return ok;
}

void cs__prog_mailboxes(cs__prog_t *p)
{
    if (p->mb_ready)
        return;
    for (int r = 0; r < p->nranks; r++) {
        const cs_rank_sched_t *rk = &p->s->ranks[r];
        for (uint64_t m = p->mbox_base[r]; m < p->mbox_base[r + 1]; m++) {
            const cs_step_t *sp = &rk->steps[p->mfirst[m]];
            if (sp->kind == CS_STEP_SWITCH)
                continue; /* an operation's own mailboxes (cs__sw_mailboxes) */
            int src = sp->kind == CS_STEP_SEND ? r : sp->peer;
            int dst = sp->kind == CS_STEP_SEND ? sp->peer : r;
            char name[64];
            snprintf(name, sizeof(name), "cs:%d:%d:%u", src, dst, (unsigned)sp->chan);
            p->mbox[m] = sg_mailbox_by_name(name);
        }
    }
    cs__sw_mailboxes(p);
    p->mb_ready = 1;
}

void cs__prog_classes(cs__prog_t *p, char *const *host_names)
{
    if (p->mclass)
        return;
    p->mclass = calloc(p->mbox_base[p->nranks] + 1, 1);
    for (int r = 0; p->mclass && r < p->nranks; r++) {
        const cs_rank_sched_t *rk = &p->s->ranks[r];
        for (uint64_t m = p->mbox_base[r]; m < p->mbox_base[r + 1]; m++) {
            const cs_step_t *sp = &rk->steps[p->mfirst[m]];
            if (sp->kind == CS_STEP_SWITCH || sp->peer < 0)
                continue;
            int src = sp->kind == CS_STEP_SEND ? r : sp->peer;
            int dst = sp->kind == CS_STEP_SEND ? sp->peer : r;
            cs_sim_link_t route[64];
            int cnt = 0, c = CS_SIM_HW_NVLINK;
            if (cs_sim_route(host_names[src], host_names[dst], route, 64, &cnt, NULL) != CS_OK)
                cnt = 0;
            for (int l = 0; l < cnt && l < 64; l++) {
                int k = cs_sim_hw_class(*route[l].tier ? route[l].tier : NULL);
                if (k > c)
                    c = k;
            }
            if (cnt > 64)
                c = CS_SIM_HW_NET;
            p->mclass[m] = (unsigned char)c;
        }
    }
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
    free(p->mfirst);
    free(p->mclass);
    free(p->nready);
    cs__sw_fini(p);
    memset(p, 0, sizeof(*p));
}
