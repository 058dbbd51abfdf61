/*
 * prop_trees.c - properties of the tree family (allreduce `binomial` and
 * `dbtree`, broadcast `binomial`, `chain` and `scatter_allgather`, reduce
 * `binomial`):
 *   - tree arithmetic (algorithms/common/cs_trees.h) for every P up to 70,
 *     then every 37th up to 300, and 1536: k-nomial trees (radix 2..5,
 *     roots 0, P/2, P-1), the chain and both double binary trees have one
 *     root, P-1 edges, parents and children that agree, every rank reaching
 *     the root, at most max_children children, and (but dbtree) subtrees
 *     that are contiguous position ranges; the two dbtrees are
 *     complementary (at most one rank inner in both), have different roots
 *     and depth <= ceil(log2 P) + 1; binomial on 1536 has depth 10 and 11
 *     children at most;
 *   - message counts: broadcast binomial's root sends ceil(log2 P), P-1
 *     receives in all; dbtree nchunks=2 sends at most 3 segments up and 2x2
 *     down a rank per tree pair;
 *   - closed-form costs at P = 8: binomial allreduce 2 log2 P (alpha + n
 *     beta), chain (P + S - 2)(alpha + n/S beta) with S = P segments;
 *   - parameter effects: chain's former name `segments` builds the same
 *     schedule as `nchunks`;
 *   - the trees across nodes (kind nodes, dbtree local= channels=): every
 *     P up to 40 with local 1..9, channels 1..8, both trees: the tree
 *     checks above, only chain heads cross nodes, each node's head is
 *     member floor(k n / K), and the cases worked by hand below; the
 *     schedules local=8 channels=8 at P = 32 send across nodes from all 8
 *     GPUs of each node (8 NICs), channels=1 from one; local=1 channels=1
 *     is the default schedule.
 * (P = 1536 and 27,648 schedules: test_scale.c.)
 */
#include <string.h>
#include "algo_test.h"
#include "common/cs_trees.h"

static void check_tree(const cs__tree_t *t, const char *what)
{
    int P = t->nranks, kids[4096], nroot = 0, edges = 0;
    int cap = cs__tree_max_children(t);
    for (int r = 0; r < P; r++) {
        int par = cs__tree_parent(t, r);
        if (par < 0) {
            nroot++;
            CS_TEST_CHECK(r == cs__tree_root(t), "%s P=%d: rank %d has no parent", what, P, r);
        } else {
            int n = cs__tree_children(t, par, kids, 4096), found = 0;
            for (int i = 0; i < n; i++)
                found += kids[i] == r;
            if (found != 1)
                CS_TEST_CHECK(found == 1, "%s P=%d: parent %d of %d lists it %d times", what, P,
                              par, r, found);
            /* the parent chain reaches the root */
            int x = r, hops = 0;
            while (x >= 0 && x != cs__tree_root(t) && hops <= P) {
                x = cs__tree_parent(t, x);
                hops++;
            }
            if (x != cs__tree_root(t))
                CS_TEST_CHECK(0, "%s P=%d: rank %d does not reach the root", what, P, r);
        }
        int n = cs__tree_children(t, r, kids, 4096);
        if (n > cap)
            CS_TEST_CHECK(n <= cap, "%s P=%d: rank %d has %d children > max %d", what, P, r, n,
                          cap);
        for (int i = 0; i < n; i++)
            if (cs__tree_parent(t, kids[i]) != r)
                CS_TEST_CHECK(0, "%s P=%d: child %d of %d has parent %d", what, P, kids[i], r,
                              cs__tree_parent(t, kids[i]));
        edges += n;
        if (t->kind != CS__TREE_DBTREE && t->kind != CS__TREE_NODES) {
            /* subtree [pos, end) = pos and its children's subtrees, in order */
            int pos = cs__tree_pos(t, r), end = cs__tree_subtree_end(t, pos), cover = 1;
            for (int i = 0; i < n; i++) {
                int pc = cs__tree_pos(t, kids[i]);
                if (pc < pos || pc >= end)
                    CS_TEST_CHECK(0, "%s P=%d: child pos %d outside [%d,%d)", what, P, pc, pos,
                                  end);
                cover += cs__tree_subtree_end(t, pc) - pc;
            }
            if (cover != end - pos)
                CS_TEST_CHECK(cover == end - pos, "%s P=%d pos %d: subtree %d != %d", what, P,
                              pos, cover, end - pos);
        }
    }
    CS_TEST_CHECK(nroot == 1 && edges == P - 1, "%s P=%d: %d roots, %d edges", what, P, nroot,
                  edges);
}

static void test_trees(void)
{
    for (int P = 1; P <= 300; P += (P < 70 ? 1 : 37)) {
        for (int radix = 2; radix <= 5; radix++) {
            int roots[3] = {0, P / 2, P - 1};
            for (int i = 0; i < 3; i++) {
                cs__tree_t t;
                cs__tree_knomial(&t, P, roots[i], radix);
                check_tree(&t, "knomial");
            }
        }
        cs__tree_t t0, t1, c;
        cs__tree_chain(&c, P, P / 2);
        check_tree(&c, "chain");
        cs__tree_dbtree(&t0, P, 0);
        cs__tree_dbtree(&t1, P, 1);
        check_tree(&t0, "dbtree0");
        check_tree(&t1, "dbtree1");
        /* complementary: at most one rank (rank 0 for odd P) is inner in both */
        int both = 0, kids[2];
        for (int r = 0; r < P; r++)
            both += cs__tree_children(&t0, r, kids, 2) > 0 &&
                    cs__tree_children(&t1, r, kids, 2) > 0;
        CS_TEST_CHECK(both <= (P % 2), "dbtree P=%d: %d ranks inner in both trees", P, both);
        if (P > 1)
            CS_TEST_CHECK(cs__tree_root(&t0) != cs__tree_root(&t1), "dbtree P=%d: same root", P);
        CS_TEST_CHECK(cs__tree_depth(&t0) <= cs__tree_ceil_log(2, P) + 1, "dbtree P=%d: depth %d",
                      P, cs__tree_depth(&t0));
    }
    cs__tree_t t;
    cs__tree_dbtree(&t, 1536, 1);
    check_tree(&t, "dbtree1");
    cs__tree_knomial(&t, 1536, 700, 2);
    check_tree(&t, "binomial");
    CS_TEST_CHECK(cs__tree_depth(&t) == 10 && cs__tree_max_children(&t) == 11,
                  "binomial 1536: depth %d max children %d", cs__tree_depth(&t),
                  cs__tree_max_children(&t));
    CS_TEST_CHECK(cs__tree_ceil_log(2, 1) == 0 && cs__tree_ceil_log(2, 8) == 3 &&
                      cs__tree_ceil_log(2, 9) == 4 && cs__tree_ceil_log(3, 9) == 2,
                  "ceil_log");
}

static void test_counts(void)
{
    for (int P = 2; P <= 33; P += 5) {
        cs_sched_t *s = at_build_ok(CS_COLL_BROADCAST, "binomial", P, P - 1, 0, NULL);
        if (s) {
            CS_TEST_CHECK(at_count(s, P - 1, CS_STEP_SEND) == (uint64_t)cs__tree_ceil_log(2, P),
                          "binomial bcast P=%d: root sends %llu", P,
                          (unsigned long long)at_count(s, P - 1, CS_STEP_SEND));
            uint64_t recvs = 0;
            for (int r = 0; r < P; r++)
                recvs += at_count(s, r, CS_STEP_RECV);
            CS_TEST_CHECK(recvs == (uint64_t)P - 1, "binomial bcast P=%d: %llu recvs", P,
                          (unsigned long long)recvs);
            cs_sched_destroy(s);
        }
        s = at_build_ok(CS_COLL_ALLREDUCE, "dbtree", P, 0, 0, "nchunks=2");
        if (s) {
            uint64_t lo, hi;
            at_sends(s, &lo, &hi);
            CS_TEST_CHECK(hi <= 2 * 2 * 3, "dbtree P=%d: up to %llu sends a rank", P,
                          (unsigned long long)hi);
            cs_sched_destroy(s);
        }
    }
}

static void test_costs(void)
{
    cs_ab_model_t m = {1e-6, 1e-9, 0.0};
    double n = 1e6, want = 2 * 3 * (m.alpha + n * m.beta);
    double got = at_cost(CS_COLL_ALLREDUCE, "binomial", 8, n, &m);
    CS_TEST_CHECK(got > 0.999 * want && got < 1.001 * want, "binomial cost %g != %g", got, want);
    got = at_cost(CS_COLL_BROADCAST, "chain", 8, n, &m);
    want = (8 + 8 - 2) * (m.alpha + n * m.beta / 8);
    CS_TEST_CHECK(got > 0.999 * want && got < 1.001 * want, "chain cost %g != %g", got, want);
}

static void test_chain_alias(void)
{
    for (int k = 1; k <= 5; k += 2) {
        char a[32], b[32];
        snprintf(a, sizeof(a), "segments=%d", k);
        snprintf(b, sizeof(b), "nchunks=%d", k);
        cs_sched_t *s1 = at_build_ok(CS_COLL_BROADCAST, "chain", 7, 3, 0, a);
        cs_sched_t *s2 = at_build_ok(CS_COLL_BROADCAST, "chain", 7, 3, 0, b);
        if (s1 && s2)
            CS_TEST_CHECK(cs_sched_digest(s1) == cs_sched_digest(s2) && s1->nchunks == (uint32_t)k,
                          "chain %s and %s differ (%u chunks)", a, b, s1->nchunks);
        cs_sched_destroy(s1);
        cs_sched_destroy(s2);
    }
}

/* Parent of every rank in a tree of kind nodes. */
static void parents_of(int P, int L, int which, int k, int K, int *par)
{
    cs__tree_t t;
    cs__tree_nodes(&t, P, L, which, k, K);
    for (int r = 0; r < P; r++)
        par[r] = cs__tree_parent(&t, r);
}

static void expect_parents(int P, int L, int which, int k, int K, const int *want)
{
    int par[64];
    parents_of(P, L, which, k, K, par);
    for (int r = 0; r < P; r++)
        if (par[r] != want[r])
            CS_TEST_CHECK(0, "nodes P=%d local=%d tree %d chain %d/%d: parent of %d is %d, not %d", P,
                          L, which, k, K, r, par[r], want[r]);
}

static void test_nodes(void)
{
    for (int P = 1; P <= 40; P++)
        for (int L = 1; L <= 9; L++)
            for (int K = 1; K <= 8; K++)
                for (int k = 0; k < K; k++)
                    for (int w = 0; w < 2; w++) {
                        cs__tree_t t;
                        cs__tree_nodes(&t, P, L, w, k, K);
                        check_tree(&t, "nodes");
                        for (int r = 0; r < P; r++) {
                            int par = cs__tree_parent(&t, r), first = r / L * L;
                            int n = P - first < L ? P - first : L;
                            if (par >= 0 && par / L != r / L)
                                CS_TEST_CHECK(r - first == k * n / K && par % L == k *
                                              (P - par / L * L < L ? P - par / L * L : L) / K,
                                              "nodes P=%d L=%d chain %d/%d: %d -> %d not heads",
                                              P, L, k, K, r, par);
                        }
                    }
    /* by hand: P = 8, local = 4: chains 0-1-2-3 and 4-5-6-7, node 0 the
     * root of tree 0 and node 1 of tree 1 (the mirror); chain 1 of 2
     * starts at 2 and 6 (2-3-0-1, 6-7-4-5) */
    expect_parents(8, 4, 0, 0, 1, (const int[]){-1, 0, 1, 2, 0, 4, 5, 6});
    expect_parents(8, 4, 1, 0, 1, (const int[]){4, 0, 1, 2, -1, 4, 5, 6});
    expect_parents(8, 4, 0, 1, 2, (const int[]){3, 0, -1, 2, 7, 4, 2, 6});
    /* 4 nodes of 4 (NCCL's trees.cc for 4 nodes: tree 0 0 -> 2 -> {1, 3},
     * tree 1 the mirror 3 -> 1 -> {2, 0}): the heads 0, 4, 8, 12 */
    int par[64];
    parents_of(16, 4, 0, 0, 1, par);
    CS_TEST_CHECK(par[0] == -1 && par[8] == 0 && par[4] == 8 && par[12] == 8,
                  "nodes 4x4 tree 0: %d %d %d %d", par[0], par[8], par[4], par[12]);
    parents_of(16, 4, 1, 0, 1, par);
    CS_TEST_CHECK(par[12] == -1 && par[4] == 12 && par[8] == 4 && par[0] == 4,
                  "nodes 4x4 tree 1: %d %d %d %d", par[12], par[4], par[8], par[0]);
    cs__tree_t t;
    cs__tree_nodes(&t, 16, 4, 0, 0, 1);
    CS_TEST_CHECK(cs__tree_depth(&t) == 3 + 2 && cs__tree_root(&t) == 0,
                  "nodes 4x4: depth %d root %d", cs__tree_depth(&t), cs__tree_root(&t));
    /* the schedules: which GPUs of a node send to other nodes */
    for (int K = 1; K <= 8; K += 7) {
        char prm[64];
        snprintf(prm, sizeof(prm), "local=8,channels=%d,nchunks=2", K);
        cs_sched_t *s = at_build_ok(CS_COLL_ALLREDUCE, "dbtree", 32, 0, 0, prm);
        if (s == NULL)
            continue;
        at_verify(s, prm);
        int gpus[8] = {0}, used = 0;
        for (int r = 0; r < 32; r++)
            for (uint32_t i = 0; i < s->ranks[r].nsteps; i++) {
                const cs_step_t *st = &s->ranks[r].steps[i];
                if (st->kind == CS_STEP_SEND && st->peer / 8 != r / 8)
                    gpus[r % 8] = 1;
            }
        for (int g = 0; g < 8; g++)
            used += gpus[g];
        CS_TEST_CHECK(used == K, "dbtree %s: %d GPUs of a node send across nodes", prm, used);
        cs_sched_destroy(s);
    }
    /* ordered chains: member i of a node's chain is first + perm[i], the
     * head perm[0] talks across nodes (2 nodes of 8, chain 3 2 1 0 7 5 6 4:
     * a head the rotated chains never have with one chain) */
    {
        const int perm[8] = {3, 2, 1, 0, 7, 5, 6, 4};
        int inv[8];
        for (int i = 0; i < 8; i++)
            inv[perm[i]] = i;
        for (int w = 0; w < 2; w++) {
            cs__tree_nodes_ordered(&t, 16, 8, w, perm, inv);
            check_tree(&t, "nodes ordered");
            for (int r = 0; r < 16; r++) {
                int first = r / 8 * 8, i = inv[r - first], par = cs__tree_parent(&t, r);
                if (i > 0)
                    CS_TEST_CHECK(par == first + perm[i - 1], "ordered: parent of %d is %d", r,
                                  par);
                else
                    CS_TEST_CHECK(par == -1 || par == (first ? 0 : 8) + perm[0],
                                  "ordered: head %d -> %d", r, par);
            }
        }
    }
    /* the schedule over orders: every chain's hops inside a node are its
     * order's neighbours, and only its head sends across nodes */
    {
        const char *prm = "local=8,orders=01237564+32675401,nchunks=2";
        cs_sched_t *s = at_build_ok(CS_COLL_ALLREDUCE, "dbtree", 16, 0, 0, prm);
        if (s) {
            at_verify(s, prm);
            const char *ord[2] = {"01237564", "32675401"};
            for (int r = 0; r < 16; r++)
                for (uint32_t i = 0; i < s->ranks[r].nsteps; i++) {
                    const cs_step_t *st = &s->ranks[r].steps[i];
                    if (st->kind != CS_STEP_SEND)
                        continue;
                    const char *o = ord[st->chan / 2];
                    int a = (int)(strchr(o, '0' + r % 8) - o);
                    if (st->peer / 8 != r / 8) {
                        CS_TEST_CHECK(a == 0, "orders: %d (chain %d) sends across nodes", r,
                                      st->chan / 2);
                    } else {
                        int b = (int)(strchr(o, '0' + st->peer % 8) - o);
                        CS_TEST_CHECK(a - b == 1 || b - a == 1, "orders: %d -> %d in chain %s", r,
                                      st->peer, o);
                    }
                }
            cs_sched_destroy(s);
        }
        const char *bad[2] = {"local=8,orders=0123756", "local=8,channels=3,orders=01237564+32675401"};
        for (int k = 0; k < 2; k++) {
            cs_sched_t *x = NULL;
            cs_err_t e = {0};
            int st2 = at_build(at_find(CS_COLL_ALLREDUCE, "dbtree"), 16, 0, 0, bad[k], &x, &e);
            CS_TEST_CHECK(st2 == CS_ERR_PARSE && x == NULL, "dbtree %s: %s", bad[k],
                          cs_status_name(st2));
            cs_sched_destroy(x);
        }
    }
    cs_sched_t *a = at_build_ok(CS_COLL_ALLREDUCE, "dbtree", 13, 0, 0, "local=1,channels=1");
    cs_sched_t *b = at_build_ok(CS_COLL_ALLREDUCE, "dbtree", 13, 0, 0, NULL);
    if (a && b)
        CS_TEST_CHECK(cs_sched_digest(a) == cs_sched_digest(b), "dbtree local=1,channels=1 differs");
    cs_sched_destroy(a);
    cs_sched_destroy(b);
}

int main(void)
{
    test_trees();
    test_nodes();
    test_counts();
    test_costs();
    test_chain_alias();
    return cs_test_finish();
}
