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
 */
#include <stdlib.h>

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
