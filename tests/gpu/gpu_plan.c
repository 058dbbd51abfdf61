/*
 * gpu_plan.c - the NCCL level planner (cs__gpu_plan), no GPU needed.
 * For every registered algorithm at P = 1..5, 8 and 16:
 *   - every rank gets a plan;
 *   - both halves of every message (k-th send a->b on channel c, k-th
 *     receive on b from a on c, paired here independently) are in the
 *     same group: what makes the GPU groups deadlock free;
 *   - every step comes after its dependencies (comm: group > group of a
 *     comm dependency and >= phase/2 of a local one; local: even phase
 *     >= every dependency's phase).
 * Also: a schedule whose messages wait for each other in a circle is
 * refused (CS_ERR_VERIFY), an unpaired send too, and a rank-0-to-itself
 * schedule places both halves of a self message in one group.
 */
#include <stdlib.h>
#include <string.h>

#include "cs_algo.h"
#include "cs_gpu.h"
#include "cs_test.h"
#include "gpu_self.h"

typedef struct half {
    int a, b, chan, rank;
    uint32_t idx;
    int32_t group;
} half_t;

static int half_cmp(const void *x, const void *y)
{
    const half_t *p = x, *q = y;
    if (p->a != q->a)
        return p->a - q->a;
    if (p->b != q->b)
        return p->b - q->b;
    if (p->chan != q->chan)
        return p->chan - q->chan;
    return p->idx < q->idx ? -1 : p->idx > q->idx;
}

static void check_sched(const cs_sched_t *s, const char *name)
{
    int P = s->desc.nranks;
    uint64_t total = cs_sched_total_steps(s);
    half_t *snd = malloc((total + 1) * sizeof(*snd)), *rcv = malloc((total + 1) * sizeof(*rcv));
    size_t ns = 0, nr = 0;
    int bad_order = 0;
    for (int r = 0; r < P; r++) {
        const cs_rank_sched_t *rs = &s->ranks[r];
        size_t n1 = rs->nsteps + 1;
        int32_t *g = malloc(n1 * sizeof(*g)), *H = malloc(n1 * sizeof(*H));
        uint32_t *seq = malloc(n1 * sizeof(*seq));
        cs_err_t err;
        cs_err_clear(&err);
        int st = cs__gpu_plan(s, r, g, H, seq, &err);
        CS_TEST_CHECK(st == CS_OK, "%s P=%d rank %d: %s", name, P, r, err.msg);
        for (uint32_t i = 0; st == CS_OK && i < rs->nsteps; i++) {
            const cs_step_t *x = &rs->steps[i];
            const uint32_t *d = cs_step_deps(rs, x);
            int comm = x->kind == CS_STEP_SEND || x->kind == CS_STEP_RECV || x->kind == CS_STEP_RRECV;
            for (uint32_t j = 0; j < x->ndeps; j++) {
                int32_t hd = H[d[j]];
                if (comm ? g[i] < (hd + 1) / 2 : (x->kind != CS_STEP_NOP && (H[i] < hd || (H[i] & 1))))
                    bad_order++;
            }
            if (!comm)
                continue;
            half_t h = {x->kind == CS_STEP_SEND ? r : x->peer, x->kind == CS_STEP_SEND ? x->peer : r,
                        x->chan, r, i, g[i]};
            if (x->kind == CS_STEP_SEND)
                snd[ns++] = h;
            else
                rcv[nr++] = h;
        }
        free(g), free(H), free(seq);
    }
    CS_TEST_CHECK(bad_order == 0, "%s P=%d: %d steps placed before a dependency", name, P, bad_order);
    CS_TEST_CHECK(ns == nr, "%s P=%d: %zu sends, %zu receives", name, P, ns, nr);
    qsort(snd, ns, sizeof(*snd), half_cmp);
    qsort(rcv, nr, sizeof(*rcv), half_cmp);
    size_t mism = 0;
    for (size_t k = 0; k < ns && k < nr; k++)
        if (snd[k].a != rcv[k].a || snd[k].b != rcv[k].b || snd[k].chan != rcv[k].chan ||
            snd[k].group != rcv[k].group)
            mism++;
    CS_TEST_CHECK(mism == 0, "%s P=%d: %zu messages with halves in different groups", name, P, mism);
    free(snd), free(rcv);
}

static void registry(void)
{
    const int Ps[] = {1, 2, 3, 4, 5, 8, 16};
    int built = 0;
    for (int i = 0; i < cs_algo_count(); i++) {
        const cs_algo_t *a = cs_algo_at(i);
        if (cs_algo_switched(a, NULL))
            continue; /* switch steps: the GPU engine refuses them (no switch here) */
        for (size_t k = 0; k < sizeof(Ps) / sizeof(Ps[0]); k++) {
            cs_coll_desc_t d = {a->coll, Ps[k], 0, 0};
            cs_params_t p;
            cs_params_init(&p);
            cs_sched_t *s = NULL;
            cs_err_t err;
            cs_err_clear(&err);
            if (cs_algo_build(a, &d, &p, &s, &err) != CS_OK)
                continue; /* unsupported rank count: the generator says so */
            char name[96];
            snprintf(name, sizeof(name), "%s/%s", cs_coll_name(a->coll), a->name);
            check_sched(s, name);
            built++;
            cs_sched_destroy(s);
        }
    }
    CS_TEST_CHECK(built > 50, "only %d schedules built", built);
}

/* Two ranks, each receiving before sending what the other waits for. */
static void cycle(void)
{
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, 2, 0, 0};
    cs_err_t err;
    cs_err_clear(&err);
    cs_sched_t *s = cs_sched_create(&d, 2, &err);
    CS_TEST_CHECK(s != NULL, "%s", err.msg);
    if (!s)
        return;
    for (int r = 0; r < 2; r++) {
        uint32_t dep = (uint32_t)cs_recv(s, r, 1 - r, 0, cs_rng(CS_BUF_OUT, 0, 1), NULL, 0);
        cs_send(s, r, 1 - r, 0, cs_rng(CS_BUF_IN, 0, 1), &dep, 1);
    }
    int32_t g[2], H[2];
    uint32_t q[2];
    int st = cs__gpu_plan(s, 0, g, H, q, &err);
    CS_TEST_CHECK(st == CS_ERR_VERIFY && strstr(err.msg, "deadlock"), "cycle: %d %s", st, err.msg);
    cs_sched_destroy(s);
    /* An unpaired send. */
    s = cs_sched_create(&d, 2, &err);
    cs_send(s, 0, 1, 3, cs_rng(CS_BUF_IN, 0, 1), NULL, 0);
    cs_err_clear(&err);
    st = cs__gpu_plan(s, 0, g, H, q, &err);
    CS_TEST_CHECK(st == CS_ERR_VERIFY && strstr(err.msg, "channel 3"), "unpaired: %d %s", st, err.msg);
    cs_sched_destroy(s);
}

/* Rank 0 of a 1-rank allreduce sends to itself (gpu_self.h). */
static void self(void)
{
    cs_sched_t *s = gpu_self_sched();
    CS_TEST_CHECK(s != NULL, "builder");
    if (!s)
        return;
    int32_t g[10], H[10];
    uint32_t q[10];
    cs_err_t err;
    cs_err_clear(&err);
    CS_TEST_CHECK(cs__gpu_plan(s, 0, g, H, q, &err) == CS_OK, "%s", err.msg);
    CS_TEST_CHECK(g[0] == 0 && g[1] == 0 && g[3] == 0 && g[5] == 0 && g[6] == 1 && g[8] == 1,
                  "groups %d %d %d %d %d %d", g[0], g[1], g[3], g[5], g[6], g[8]);
    CS_TEST_CHECK(H[5] == 2 && H[8] == 4 && H[9] == 4 && H[2] == 0 && g[2] == -1,
                  "phases %d %d %d %d", H[5], H[8], H[9], H[2]);
    CS_TEST_CHECK(q[0] == 0 && q[6] == 1 && q[1] == 0 && q[8] == 1, "channel positions");
    check_sched(s, "self");
    cs_sched_destroy(s);
}

int main(void)
{
    registry();
    cycle();
    self();
    return cs_test_finish();
}
