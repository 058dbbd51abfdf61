/* cs_graph: matching, FIFO order, deadlock and unmatched counting. */
#include <stdlib.h>

#include "cs_graph.h"
#include "cs_graph_int.h"
#include "cs_test.h"
#include "vfix.h"

/* Every event's steps run after all their dependencies and FIFO
 * predecessors; a pair is a send and its partner receive. */
static void check_order(const cs_graph_t *g)
{
    uint64_t *pos = malloc(g->nsteps * sizeof(*pos) + 1);
    uint32_t *prev = malloc(g->nsteps * sizeof(*prev) + 1);
    if (pos == NULL || prev == NULL) {
        CS_TEST_CHECK(0, "nomem");
        goto out;
    }
    CS_TEST_CHECK(cs__graph_fifo_prev(g, prev) == CS_OK, "fifo prev");
    for (uint64_t i = 0; i < g->nsteps; i++)
        pos[i] = UINT64_MAX;
    for (uint64_t e = 0; e < g->norder; e++) {
        uint64_t gid = g->order[e];
        pos[gid] = e;
        if (g->partner[gid] != CS_NONE) {
            int r;
            uint32_t i;
            cs_graph_locate(g, gid, &r, &i);
            CS_TEST_CHECK(cs_graph_step(g, r, i)->kind == CS_STEP_SEND, "event %llu is a send",
                          (unsigned long long)gid);
            pos[g->partner[gid]] = e;
        }
    }
    int bad = 0;
    for (int r = 0; r < g->s->desc.nranks; r++) {
        const cs_rank_sched_t *rk = &g->s->ranks[r];
        for (uint32_t i = 0; i < rk->nsteps; i++) {
            uint64_t me = pos[g->base[r] + i];
            if (me == UINT64_MAX)
                continue;
            const uint32_t *d = cs_step_deps(rk, &rk->steps[i]);
            for (uint32_t j = 0; j < rk->steps[i].ndeps; j++)
                if (!(pos[g->base[r] + d[j]] < me))
                    bad++;
            uint32_t p = prev[g->base[r] + i];
            if (p != UINT32_MAX && !(pos[g->base[r] + p] < me))
                bad++;
        }
    }
    CS_TEST_CHECK(bad == 0, "%d order violations", bad);
out:
    free(prev);
    free(pos);
}

static void test_ring(int P, int inplace)
{
    cs_sched_t *s = vfix_ring(P, 2, inplace, 0);
    CS_TEST_CHECK(s != NULL, "ring %d", P);
    if (s == NULL)
        return;
    cs_graph_t g;
    cs_err_t err = {0};
    CS_TEST_CHECK(cs_graph_init(&g, s, &err) == CS_OK, "%s", err.msg);
    uint64_t pairs = (uint64_t)P * 2 * (P - 1);
    CS_TEST_CHECK(g.nsteps == pairs * 2 + (inplace ? 0 : P), "nsteps %llu",
                  (unsigned long long)g.nsteps);
    CS_TEST_CHECK(g.nstuck == 0 && g.nunmatched == 0, "P=%d stuck %llu unmatched %llu", P,
                  (unsigned long long)g.nstuck, (unsigned long long)g.nunmatched);
    CS_TEST_CHECK(g.norder == pairs + (inplace ? 0 : P), "norder %llu",
                  (unsigned long long)g.norder);
    /* rank r's reduce-scatter send t matches rank r+1's rrecv t */
    if (P > 1) {
        uint32_t si = vfix_ring_idx(P, inplace, 0, 1, 0), ri = vfix_ring_idx(P, inplace, 0, 1, 1);
        int ok = 1;
        for (int r = 0; r < P; r++)
            ok &= g.partner[g.base[r] + si] == g.base[(r + 1) % P] + ri;
        CS_TEST_CHECK(ok || P == 2, "partners P=%d", P);
    }
    for (uint64_t i = 0; i < g.nsteps; i++)
        if (g.partner[i] != CS_NONE && g.partner[g.partner[i]] != i) {
            CS_TEST_CHECK(0, "partner not symmetric at %llu", (unsigned long long)i);
            break;
        }
    check_order(&g);
    /* locate is the inverse of base[] */
    int r;
    uint32_t i;
    if (g.nsteps > 0) {
        cs_graph_locate(&g, g.nsteps - 1, &r, &i);
        CS_TEST_CHECK(r == P - 1 && i == s->ranks[P - 1].nsteps - 1, "locate last");
    }
    cs_graph_fini(&g);
    cs_sched_destroy(s);
}

static void test_deadlock(void)
{
    cs_sched_t *s = vfix_ring(3, 1, 0, VFIX_RECV_FIRST);
    CS_TEST_CHECK(s != NULL, "ring");
    if (s == NULL)
        return;
    cs_graph_t g;
    CS_TEST_CHECK(cs_graph_init(&g, s, NULL) == CS_OK, "init");
    CS_TEST_CHECK(g.nunmatched == 0, "all matched");
    CS_TEST_CHECK(g.nstuck == g.nsteps - 3, "only the copies run: stuck %llu of %llu",
                  (unsigned long long)g.nstuck, (unsigned long long)g.nsteps);
    check_order(&g);
    cs_graph_fini(&g);
    cs_sched_destroy(s);
}

static void test_unmatched(void)
{
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, 3, 0, 0};
    cs_sched_t *s = cs_sched_create(&d, 1, NULL);
    /* empty rank 1 in the middle; two sends 0->2, one receive; a recv 2<-0 on chan 1 */
    cs_send(s, 0, 2, 0, cs_rng(CS_BUF_IN, 0, 1), NULL, 0);
    uint32_t dep = 0;
    cs_send(s, 0, 2, 0, cs_rng(CS_BUF_IN, 0, 1), &dep, 1);
    cs_recv(s, 2, 0, 1, cs_rng(CS_BUF_OUT, 0, 1), NULL, 0);
    cs_recv(s, 2, 0, 0, cs_rng(CS_BUF_OUT, 0, 1), &dep, 1);
    CS_TEST_CHECK(cs_sched_status(s) == CS_OK, "%s", s->err.msg);
    cs_graph_t g;
    CS_TEST_CHECK(cs_graph_init(&g, s, NULL) == CS_OK, "init");
    CS_TEST_CHECK(g.nunmatched == 2, "unmatched %llu", (unsigned long long)g.nunmatched);
    /* 2<-0 chan 0 waits (dependency) for the unmatched chan 1 recv: stuck,
     * and so is its partner; the second send is unmatched */
    CS_TEST_CHECK(g.nstuck == 4 && g.norder == 0, "stuck %llu order %llu",
                  (unsigned long long)g.nstuck, (unsigned long long)g.norder);
    CS_TEST_CHECK(g.partner[0] == 2 + 1 && g.partner[1] == CS_NONE, "partner of 0: %llu",
                  (unsigned long long)g.partner[0]);
    int r;
    uint32_t i;
    cs_graph_locate(&g, 2, &r, &i);
    CS_TEST_CHECK(r == 2 && i == 0, "locate over an empty rank: %d %u", r, i);
    cs_graph_fini(&g);
    cs_sched_destroy(s);
}

int main(void)
{
    for (int P = 1; P <= 9; P++) {
        test_ring(P, 0);
        test_ring(P, 1);
    }
    test_deadlock();
    test_unmatched();
    return cs_test_finish();
}
