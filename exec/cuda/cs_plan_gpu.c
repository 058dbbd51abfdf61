/*
 * cs_plan_gpu.c - global NCCL group levels of a schedule (cs__gpu_plan).
 *
 * NCCL runs the group calls of one rank one after another, and a group
 * completes only when every send and receive in it met its partner.  So
 * the engine must put both halves of every message in groups of the same
 * index on the two ranks: then group g of every rank completes once all
 * ranks finished their groups < g, and nothing can wait in a circle.
 * Every rank computes the same assignment from the whole schedule:
 *
 *   1. pair messages: the k-th send a->b on channel c with the k-th receive
 *      (recv or rrecv) on b from a on channel c (cs_sched.h matching);
 *   2. Kahn's algorithm over all ranks' DAGs with each pair merged into one
 *      node: a step is placed once its dependencies are placed, a pair once
 *      both halves are ready.  Phases H (see cs_engine_gpu.c):
 *        message  g = max over both halves of max over deps ceil(H(d)/2),
 *                 H = 2g+1 for send/recv, 2g+2 for rrecv (its reduction);
 *        local    H = the smallest even number >= every H(d) (0 if none);
 *        nop      H = max H(d) (-1 if none).
 *   A schedule whose merged graph has a cycle deadlocks (the verifier
 *   rejects it): CS_ERR_VERIFY naming a rank and step.
 *
 * Within a group the engine orders the messages to each peer by (channel,
 * position on the channel), the same order on both sides, so one
 * communicator serves every channel.  Cost: O(total steps log) time and
 * memory on every rank.
 *
 * Copy merging (cs__gpu_merge_copies).  Generators split local copies in
 * chunks: allreduce dbtree at P = 1 is 32 copies in[i] -> out[i] with no
 * dependencies, broadcast chain 8.  On a GPU each is a cudaMemcpyAsync of
 * a few microseconds, so the engine moves such a run as one copy.  Copies
 * merge when they have the same dependency set, the same src and dst
 * buffers and the same shift dst.off - src.off, and their src ranges
 * continue each other: sorted by that key and src.off, maximal runs of
 * continuing ranges become one.  Why it is correct: steps with the same
 * dependency set become ready at the same moment, an engine may run ready
 * steps in any order or together, and the dependents of any member wait
 * for the merged copy (a member's dependents can only be later than it,
 * and its dependencies are earlier than the run's first step, so no cycle
 * appears).  The schedule itself is not changed.  Cost: O(copies log
 * copies) on one rank.
 */
#include <stdlib.h>
#include <string.h>

#include "cs_gpu.h"

typedef struct msg {
    uint64_t key; /* src rank, dst rank, channel, direction */
    uint64_t gid; /* global step id */
} msg_t;

static int msg_cmp(const void *x, const void *y)
{
    const msg_t *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->gid < b->gid ? -1 : a->gid > b->gid;
}

static int is_comm(int k)
{
    return k == CS_STEP_SEND || k == CS_STEP_RECV || k == CS_STEP_RRECV;
}

static int32_t imax(int32_t a, int32_t b) { return a > b ? a : b; }

int cs__gpu_plan(const cs_sched_t *s, int rank, int32_t *group, int32_t *H, uint32_t *seq,
                 cs_err_t *err)
{
    int P = s->desc.nranks, st = CS_OK;
    uint64_t *off = calloc((size_t)P + 1, sizeof(*off));
    if (!off)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    uint64_t total = 0, nmsg = 0, nsucc = 0;
    for (int r = 0; r < P; r++) {
        off[r] = total;
        total += s->ranks[r].nsteps;
        nsucc += s->ranks[r].ndeps;
        for (uint32_t i = 0; i < s->ranks[r].nsteps; i++)
            nmsg += is_comm(s->ranks[r].steps[i].kind);
    }
    off[P] = total;
    msg_t *m = malloc((nmsg + 1) * sizeof(*m));
    uint64_t *partner = malloc((total + 1) * sizeof(*partner));
    uint32_t *sq = malloc((total + 1) * sizeof(*sq));
    int32_t *h = malloc((total + 1) * sizeof(*h)), *cand = malloc((total + 1) * sizeof(*cand));
    int32_t *grp = malloc((total + 1) * sizeof(*grp));
    uint32_t *unmet = malloc((total + 1) * sizeof(*unmet));
    uint64_t *soff = calloc(total + 2, sizeof(*soff)), *succ = malloc((nsucc + 1) * sizeof(*succ));
    uint64_t *q = malloc((total + 1) * sizeof(*q));
    int *owner = malloc((total + 1) * sizeof(*owner));
    if (!m || !partner || !sq || !h || !cand || !grp || !unmet || !soff || !succ || !q || !owner) {
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory planning %llu steps",
                        (unsigned long long)total);
        goto out;
    }
    /* 1. pair messages */
    uint64_t k = 0;
    for (int r = 0; r < P; r++)
        for (uint32_t i = 0; i < s->ranks[r].nsteps; i++) {
            const cs_step_t *x = &s->ranks[r].steps[i];
            uint64_t g = off[r] + i;
            owner[g] = r;
            partner[g] = UINT64_MAX;
            if (!is_comm(x->kind))
                continue;
            int snd = x->kind == CS_STEP_SEND;
            uint64_t a = (uint64_t)(snd ? r : x->peer), b = (uint64_t)(snd ? x->peer : r);
            m[k].key = (a << 42) | (b << 20) | ((uint64_t)x->chan << 1) | (uint64_t)snd;
            m[k++].gid = g;
        }
    qsort(m, nmsg, sizeof(*m), msg_cmp);
    for (uint64_t j = 0; j < nmsg;) {
        uint64_t ch = m[j].key >> 1, e = j, nr = 0;
        while (e < nmsg && m[e].key >> 1 == ch)
            nr += !(m[e++].key & 1);
        uint64_t ns = e - j - nr;
        if (ns != nr) {
            const cs_step_t *x = &s->ranks[owner[m[j].gid]].steps[m[j].gid - off[owner[m[j].gid]]];
            st = cs_err_set(err, CS_ERR_VERIFY, "rank %d -> %d channel %u: %llu sends, %llu receives",
                            (int)(m[j].key >> 42), (int)((m[j].key >> 20) & 0x3fffff), x->chan,
                            (unsigned long long)ns, (unsigned long long)nr);
            goto out;
        }
        for (uint64_t t = 0; t < nr; t++) { /* receives sort first (direction bit 0) */
            uint64_t rv = m[j + t].gid, sd = m[j + nr + t].gid;
            partner[rv] = sd, partner[sd] = rv;
            sq[rv] = sq[sd] = (uint32_t)t;
        }
        j = e;
    }
    /* 2. successors (CSR) and Kahn */
    for (int r = 0; r < P; r++)
        for (uint32_t i = 0; i < s->ranks[r].nsteps; i++) {
            const cs_step_t *x = &s->ranks[r].steps[i];
            const uint32_t *d = cs_step_deps(&s->ranks[r], x);
            unmet[off[r] + i] = x->ndeps;
            for (uint32_t j = 0; j < x->ndeps; j++)
                soff[off[r] + d[j] + 1]++;
        }
    for (uint64_t g = 0; g < total; g++)
        soff[g + 1] += soff[g];
    uint64_t *fill = q; /* reuse the queue as fill counters before it is needed */
    for (uint64_t g = 0; g < total; g++)
        fill[g] = soff[g];
    for (int r = 0; r < P; r++)
        for (uint32_t i = 0; i < s->ranks[r].nsteps; i++) {
            const cs_step_t *x = &s->ranks[r].steps[i];
            const uint32_t *d = cs_step_deps(&s->ranks[r], x);
            for (uint32_t j = 0; j < x->ndeps; j++)
                succ[fill[off[r] + d[j]]++] = off[r] + i;
        }
    uint64_t head = 0, tail = 0, placed = 0;
    for (uint64_t g = 0; g < total; g++) {
        cand[g] = -1;
        grp[g] = -1;
        if (unmet[g] == 0)
            q[tail++] = g;
    }
    while (head < tail) {
        uint64_t g = q[head++];
        int r = owner[g];
        const cs_step_t *x = &s->ranks[r].steps[g - off[r]];
        const uint32_t *d = cs_step_deps(&s->ranks[r], x);
        int32_t hmax = -1;
        for (uint32_t j = 0; j < x->ndeps; j++)
            hmax = imax(hmax, h[off[r] + d[j]]);
        uint64_t done[2] = {g, UINT64_MAX};
        if (is_comm(x->kind)) {
            cand[g] = (hmax + 1) / 2;
            uint64_t p = partner[g];
            if (cand[p] < 0)
                continue; /* placed with its partner */
            int32_t lv = imax(cand[g], cand[p]);
            grp[g] = grp[p] = lv;
            done[1] = p;
        } else {
            h[g] = x->kind == CS_STEP_NOP ? hmax : (hmax < 0 ? 0 : (hmax + 1) & ~1);
        }
        for (int w = 0; w < 2 && done[w] != UINT64_MAX; w++) {
            uint64_t v = done[w];
            int vr = owner[v];
            if (grp[v] >= 0)
                h[v] = s->ranks[vr].steps[v - off[vr]].kind == CS_STEP_RRECV ? 2 * grp[v] + 2
                                                                              : 2 * grp[v] + 1;
            placed++;
            for (uint64_t j = soff[v]; j < soff[v + 1]; j++)
                if (--unmet[succ[j]] == 0)
                    q[tail++] = succ[j];
        }
    }
    if (placed != total) {
        for (uint64_t g = 0; g < total; g++)
            if (unmet[g] == 0 && partner[g] != UINT64_MAX && grp[g] < 0) {
                st = cs_err_set(err, CS_ERR_VERIFY,
                                "the schedule deadlocks: rank %d step %llu waits for its partner "
                                "on rank %d forever", owner[g], (unsigned long long)(g - off[owner[g]]),
                                owner[partner[g]]);
                goto out;
            }
        st = cs_err_set(err, CS_ERR_VERIFY, "the schedule deadlocks (%llu of %llu steps placed)",
                        (unsigned long long)placed, (unsigned long long)total);
        goto out;
    }
    for (uint32_t i = 0; i < s->ranks[rank].nsteps; i++) {
        uint64_t g = off[rank] + i;
        group[i] = grp[g];
        H[i] = h[g];
        seq[i] = partner[g] != UINT64_MAX ? sq[g] : 0;
    }
out:
    free(off), free(m), free(partner), free(sq), free(h), free(cand), free(grp), free(unmet);
    free(soff), free(succ), free(q), free(owner);
    return st;
}

/* ---- copy merging ---------------------------------------------------------- */

typedef struct cand {
    uint16_t sbuf, dbuf;
    int64_t shift;       /* dst.off - src.off */
    uint64_t dh;         /* hash of the sorted, deduplicated dependency set */
    uint32_t doff, dn;   /* that set in the scratch array */
    uint32_t soff, n, step;
} cand_t;

static int u32_cmp(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

static int cand_key_cmp(const cand_t *a, const cand_t *b)
{
    if (a->sbuf != b->sbuf)
        return a->sbuf < b->sbuf ? -1 : 1;
    if (a->dbuf != b->dbuf)
        return a->dbuf < b->dbuf ? -1 : 1;
    if (a->shift != b->shift)
        return a->shift < b->shift ? -1 : 1;
    if (a->dh != b->dh)
        return a->dh < b->dh ? -1 : 1;
    return a->dn < b->dn ? -1 : a->dn > b->dn;
}

static int cand_cmp(const void *x, const void *y)
{
    const cand_t *a = x, *b = y;
    int c = cand_key_cmp(a, b);
    if (c)
        return c;
    if (a->soff != b->soff)
        return a->soff < b->soff ? -1 : 1;
    return a->step < b->step ? -1 : a->step > b->step;
}

int cs__gpu_merge_copies(const cs_rank_sched_t *rs, uint32_t *lead, cs_range_t *src,
                         cs_range_t *dst, uint32_t *merged, cs_err_t *err)
{
    uint32_t n = rs->nsteps, m = 0, nd = 0;
    for (uint32_t i = 0; i < n; i++)
        if (rs->steps[i].kind == CS_STEP_COPY)
            m++, nd += rs->steps[i].ndeps;
    cand_t *c = malloc(((size_t)m + 1) * sizeof(*c));
    uint32_t *sd = malloc(((size_t)nd + 1) * sizeof(*sd));
    if (!c || !sd) {
        free(c), free(sd);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory merging %u copies", m);
    }
    for (uint32_t i = 0; i < n; i++) {
        const cs_step_t *x = &rs->steps[i];
        lead[i] = i, src[i] = x->src, dst[i] = x->dst;
    }
    uint32_t k = 0, used = 0;
    for (uint32_t i = 0; i < n; i++) {
        const cs_step_t *x = &rs->steps[i];
        if (x->kind != CS_STEP_COPY)
            continue;
        uint32_t *d = sd + used, dn = 0;
        if (x->ndeps)
            memcpy(d, cs_step_deps(rs, x), x->ndeps * sizeof(*d));
        qsort(d, x->ndeps, sizeof(*d), u32_cmp);
        uint64_t h = 1469598103934665603ull; /* FNV-1a over the set */
        for (uint32_t j = 0; j < x->ndeps; j++)
            if (j == 0 || d[j] != d[j - 1]) {
                d[dn++] = d[j];
                h = (h ^ d[j]) * 1099511628211ull;
            }
        c[k++] = (cand_t){x->src.buf, x->dst.buf, (int64_t)x->dst.off - (int64_t)x->src.off, h,
                          used, dn, x->src.off, x->src.n, i};
        used += dn;
    }
    qsort(c, m, sizeof(*c), cand_cmp);
    uint32_t gone = 0;
    for (uint32_t j = 0; j < m;) {
        uint32_t e = j + 1, end = c[j].soff + c[j].n, first = c[j].step;
        while (e < m && cand_key_cmp(&c[e], &c[j]) == 0 && c[e].soff == end &&
               memcmp(sd + c[e].doff, sd + c[j].doff, c[j].dn * sizeof(*sd)) == 0) {
            end += c[e].n;
            first = c[e].step < first ? c[e].step : first;
            e++;
        }
        if (e - j > 1) {
            for (uint32_t t = j; t < e; t++)
                lead[c[t].step] = first;
            src[first] = cs_rng(c[j].sbuf, c[j].soff, end - c[j].soff);
            dst[first] = cs_rng(c[j].dbuf, (uint32_t)((int64_t)c[j].soff + c[j].shift),
                                end - c[j].soff);
            gone += e - j - 1;
        }
        j = e;
    }
    free(c), free(sd);
    *merged = gone;
    return CS_OK;
}
