/*
 * test_algos_b.c - the tree, chain and all-to-all generators (part B):
 * allreduce binomial/dbtree, broadcast binomial/chain/scatter_allgather,
 * reduce binomial/ring, alltoall pairwise/bruck.
 *
 *   test_algos_b trees          tree arithmetic (every P up to 300, 1536)
 *   test_algos_b misc           costs, parameter errors, message counts
 *   test_algos_b matrix COLL    P in {1..8,12,16,17,31,64} x roots {0, P/2,
 *                               P-1} x in place or not x parameter sets:
 *                               builds, verifier accepts (when the verifier
 *                               is built), interpreter exact for counts
 *                               {0, 1, P-1, P, P+1, 10007}
 *   test_algos_b scale          dbtree and binomial at P = 1536 (verified),
 *                               binomial at 27648 ranks (built, timed)
 */
#include "common/cs_trees.h"
#include "cs_algo.h"
#include "cs_dtype.h"
#include "cs_interp.h"
#include "cs_test.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#if __has_include("cs_verify.h") && !defined(CS_TEST_NO_VERIFY)
#include "cs_verify.h"
#define HAVE_VERIFY 1
#else
#define HAVE_VERIFY 0
#endif

static const char *const mine[][2] = {
    {"allreduce", "binomial"},
    {"allreduce", "dbtree"},
    {"broadcast", "binomial"},
    {"broadcast", "chain"},
    {"broadcast", "scatter_allgather"},
    {"reduce", "binomial"},
    {"reduce", "ring"},
    {"alltoall", "pairwise"},
    {"alltoall", "bruck"},
};
#define NMINE ((int)(sizeof(mine) / sizeof(mine[0])))

/* Parameter sets run besides the defaults. */
static const char *const extra_params[][2] = {
    {"binomial", "nchunks=3"}, {"binomial", "radix=3,nchunks=2"},
    {"dbtree", "nchunks=4"},   {"chain", "segments=1"},
    {"chain", "segments=5"},   {"scatter_allgather", "nchunks=2"},
    {"ring", "nchunks=2"},     {"pairwise", "nchunks=2"},
    {"bruck", "nchunks=3"},
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- trees ---------------------------------------------------------------- */

static void check_tree(const cs_tree_t *t, const char *what)
{
    int P = t->nranks, kids[4096], nroot = 0, edges = 0;
    int cap = cs_tree_max_children(t);
    for (int r = 0; r < P; r++) {
        int par = cs_tree_parent(t, r);
        if (par < 0) {
            nroot++;
            CS_TEST_CHECK(r == cs_tree_root(t), "%s P=%d: rank %d has no parent", what, P, r);
        } else {
            int n = cs_tree_children(t, par, kids, 4096), found = 0;
            for (int i = 0; i < n; i++)
                found += kids[i] == r;
            if (found != 1)
                CS_TEST_CHECK(found == 1, "%s P=%d: parent %d of %d lists it %d times", what, P,
                              par, r, found);
            /* the parent chain reaches the root */
            int x = r, hops = 0;
            while (x >= 0 && x != cs_tree_root(t) && hops <= P) {
                x = cs_tree_parent(t, x);
                hops++;
            }
            if (x != cs_tree_root(t))
                CS_TEST_CHECK(0, "%s P=%d: rank %d does not reach the root", what, P, r);
        }
        int n = cs_tree_children(t, r, kids, 4096);
        if (n > cap)
            CS_TEST_CHECK(n <= cap, "%s P=%d: rank %d has %d children > max %d", what, P, r, n,
                          cap);
        for (int i = 0; i < n; i++)
            if (cs_tree_parent(t, kids[i]) != r)
                CS_TEST_CHECK(0, "%s P=%d: child %d of %d has parent %d", what, P, kids[i], r,
                              cs_tree_parent(t, kids[i]));
        edges += n;
        if (t->kind != CS_TREE_DBTREE) {
            /* subtree [pos, end) = pos and its children's subtrees, in order */
            int pos = cs_tree_pos(t, r), end = cs_tree_subtree_end(t, pos), cover = 1;
            for (int i = 0; i < n; i++) {
                int pc = cs_tree_pos(t, kids[i]);
                if (pc < pos || pc >= end)
                    CS_TEST_CHECK(0, "%s P=%d: child pos %d outside [%d,%d)", what, P, pc, pos,
                                  end);
                cover += cs_tree_subtree_end(t, pc) - pc;
            }
            if (cover != end - pos)
                CS_TEST_CHECK(cover == end - pos, "%s P=%d pos %d: subtree %d != %d", what, P, pos,
                              cover, end - pos);
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
                cs_tree_t t;
                cs_tree_knomial(&t, P, roots[i], radix);
                check_tree(&t, "knomial");
            }
        }
        cs_tree_t t0, t1, c;
        cs_tree_chain(&c, P, P / 2);
        check_tree(&c, "chain");
        cs_tree_dbtree(&t0, P, 0);
        cs_tree_dbtree(&t1, P, 1);
        check_tree(&t0, "dbtree0");
        check_tree(&t1, "dbtree1");
        /* complementary: at most one rank (rank 0 for odd P) is inner in both */
        int both = 0, kids[2];
        for (int r = 0; r < P; r++)
            both += cs_tree_children(&t0, r, kids, 2) > 0 && cs_tree_children(&t1, r, kids, 2) > 0;
        CS_TEST_CHECK(both <= (P % 2), "dbtree P=%d: %d ranks inner in both trees", P, both);
        if (P > 1)
            CS_TEST_CHECK(cs_tree_root(&t0) != cs_tree_root(&t1), "dbtree P=%d: same root", P);
        CS_TEST_CHECK(cs_tree_depth(&t0) <= cs_ceil_log(2, P) + 1, "dbtree P=%d: depth %d", P,
                      cs_tree_depth(&t0));
    }
    cs_tree_t t;
    cs_tree_dbtree(&t, 1536, 1);
    check_tree(&t, "dbtree1");
    cs_tree_knomial(&t, 1536, 700, 2);
    check_tree(&t, "binomial");
    CS_TEST_CHECK(cs_tree_depth(&t) == 10 && cs_tree_max_children(&t) == 11,
                  "binomial 1536: depth %d max children %d", cs_tree_depth(&t),
                  cs_tree_max_children(&t));
    CS_TEST_CHECK(cs_ceil_log(2, 1) == 0 && cs_ceil_log(2, 8) == 3 && cs_ceil_log(2, 9) == 4 &&
                      cs_ceil_log(3, 9) == 2,
                  "ceil_log");
}

/* ---- helpers ------------------------------------------------------------ */

static const cs_algo_t *find(const char *coll, const char *name)
{
    return cs_algo_find(cs_coll_parse(coll), name);
}

/* Build (and verify when the verifier exists); NULL on failure (recorded). */
static cs_sched_t *build(const cs_algo_t *a, int P, int root, int inplace, const char *ptext,
                         int verify)
{
    cs_coll_desc_t d = {a->coll, P, cs_coll_has_root(a->coll) ? root : 0, inplace};
    cs_params_t params;
    cs_err_t err = {0};
    cs_sched_t *s = NULL;
    cs_params_init(&params);
    if (ptext != NULL && cs_params_parse(&params, ptext, &err) != CS_OK) {
        CS_TEST_CHECK(0, "params %s: %s", ptext, err.msg);
        return NULL;
    }
    int st = cs_algo_build(a, &d, &params, &s, &err);
    if (st != CS_OK) {
        CS_TEST_CHECK(st == CS_OK, "%s %s P=%d root=%d inplace=%d %s: build: %s",
                      cs_coll_name(a->coll), a->name, P, root, inplace, ptext ? ptext : "",
                      err.msg);
        return NULL;
    }
#if HAVE_VERIFY
    if (verify) {
        cs_verify_report_t rep = {0};
        st = cs_verify(s, NULL, &rep, &err);
        CS_TEST_CHECK(st == CS_OK, "%s %s P=%d root=%d inplace=%d %s: verifier: %s",
                      cs_coll_name(a->coll), a->name, P, root, inplace, ptext ? ptext : "",
                      rep.n ? rep.findings[0].msg : err.msg);
        cs_verify_report_fini(&rep);
        if (st != CS_OK) {
            cs_sched_destroy(s);
            return NULL;
        }
    }
#else
    (void)verify;
#endif
    return s;
}

static uint64_t count_kind(const cs_sched_t *s, int rank, int kind)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < s->ranks[rank].nsteps; i++)
        n += s->ranks[rank].steps[i].kind == kind;
    return n;
}

/* ---- misc: costs, errors, message counts --------------------------------- */

static void test_misc(void)
{
    cs_ab_model_t m = {1e-6, 1e-9, 0.0};
    cs_params_t p;
    cs_err_t err = {0};
    for (int i = 0; i < NMINE; i++) {
        const cs_algo_t *a = find(mine[i][0], mine[i][1]);
        CS_TEST_CHECK(a != NULL, "%s %s not registered", mine[i][0], mine[i][1]);
        if (a == NULL)
            continue;
        CS_TEST_CHECK(a->desc && a->desc[0] && a->params && a->cost, "%s: description/params/cost",
                      a->name);
        cs_coll_desc_t d = {a->coll, 16, 0, 0};
        cs_params_init(&p);
        double c1 = a->cost(&d, &p, 1e3, &m), c2 = a->cost(&d, &p, 1e6, &m);
        CS_TEST_CHECK(c1 > 0 && c2 > c1, "%s %s cost %g %g", mine[i][0], a->name, c1, c2);
        /* bad parameter: error, *out untouched */
        cs_sched_t *s = (cs_sched_t *)&err;
        cs_params_init(&p);
        cs_params_parse(&p, "nchunks=0", &err);
        cs_err_clear(&err);
        int st = cs_algo_build(a, &d, &p, &s, &err);
        CS_TEST_CHECK(st != CS_OK && s == (cs_sched_t *)&err && err.msg[0],
                      "%s: nchunks=0 accepted (%d)", a->name, st);
    }
    /* closed forms at P = 8, S = 1 */
    cs_coll_desc_t d8 = {CS_COLL_ALLREDUCE, 8, 0, 0};
    cs_params_init(&p);
    double n = 1e6, want = 2 * 3 * (m.alpha + n * m.beta);
    double got = find("allreduce", "binomial")->cost(&d8, &p, n, &m);
    CS_TEST_CHECK(got > 0.999 * want && got < 1.001 * want, "binomial cost %g != %g", got, want);
    d8.coll = CS_COLL_BROADCAST;
    got = find("broadcast", "chain")->cost(&d8, &p, n, &m);
    want = (8 + 8 - 2) * (m.alpha + n * m.beta / 8);
    CS_TEST_CHECK(got > 0.999 * want && got < 1.001 * want, "chain cost %g != %g", got, want);
    /* message counts: the shape of each algorithm */
    const cs_algo_t *bruck = find("alltoall", "bruck"), *pw = find("alltoall", "pairwise");
    for (int P = 2; P <= 33; P += 5) {
        cs_sched_t *s = build(bruck, P, 0, 0, NULL, 0);
        if (s) {
            for (int r = 0; r < P; r++)
                if (count_kind(s, r, CS_STEP_SEND) != (uint64_t)cs_ceil_log(2, P))
                    CS_TEST_CHECK(0, "bruck P=%d rank %d: %llu sends", P, r,
                                  (unsigned long long)count_kind(s, r, CS_STEP_SEND));
            cs_sched_destroy(s);
        }
        s = build(pw, P, 0, 0, NULL, 0);
        if (s) {
            CS_TEST_CHECK(count_kind(s, P - 1, CS_STEP_SEND) == (uint64_t)P - 1,
                          "pairwise P=%d: sends", P);
            cs_sched_destroy(s);
        }
        s = build(find("broadcast", "binomial"), P, P - 1, 0, NULL, 0);
        if (s) {
            CS_TEST_CHECK(count_kind(s, P - 1, CS_STEP_SEND) == (uint64_t)cs_ceil_log(2, P),
                          "binomial bcast P=%d: root sends %llu", P,
                          (unsigned long long)count_kind(s, P - 1, CS_STEP_SEND));
            uint64_t recvs = 0;
            for (int r = 0; r < P; r++)
                recvs += count_kind(s, r, CS_STEP_RECV);
            CS_TEST_CHECK(recvs == (uint64_t)P - 1, "binomial bcast P=%d: %llu recvs", P,
                          (unsigned long long)recvs);
            cs_sched_destroy(s);
        }
        s = build(find("allreduce", "dbtree"), P, 0, 0, "nchunks=2", 0);
        if (s) {
            /* every rank sends at most 3 segments up + 2x2 down per tree pair */
            for (int r = 0; r < P; r++)
                if (count_kind(s, r, CS_STEP_SEND) > 2 * 2 * 3)
                    CS_TEST_CHECK(0, "dbtree P=%d rank %d: %llu sends", P, r,
                                  (unsigned long long)count_kind(s, r, CS_STEP_SEND));
            cs_sched_destroy(s);
        }
    }
}

/* ---- the matrix ------------------------------------------------------------ */

typedef struct {
    cs_dtype_t dt;
    cs_op_t op;
} kind_t;

static void run_interp(const cs_sched_t *s, int P, const char *what)
{
    static const kind_t reducing[] = {{CS_DT_I32, CS_OP_SUM},
                                      {CS_DT_F32, CS_OP_SUM},
                                      {CS_DT_I64, CS_OP_MIN},
                                      {CS_DT_F64, CS_OP_MAX}};
    static const kind_t moving[] = {{CS_DT_I32, CS_OP_MAX}, {CS_DT_F32, CS_OP_MIN}};
    int red = s->desc.coll == CS_COLL_ALLREDUCE || s->desc.coll == CS_COLL_REDUCE;
    const kind_t *kinds = red ? reducing : moving;
    int nkinds = red ? 4 : 2;
    /* all-to-all moves P x count per rank: keep the large count moderate */
    uint64_t large = (s->desc.coll == CS_COLL_ALLTOALL && P > 8) ? 157 : 10007;
    uint64_t counts[] = {0, 1, (uint64_t)P - 1, (uint64_t)P, (uint64_t)P + 1, large};
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
        for (int k = 0; k < nkinds; k++) {
            if (k > 0 && c != 1 && c != 5)
                continue; /* other types on the small and the large count only */
            cs_interp_result_t res = {0};
            cs_err_t err = {0};
            int st = cs_interp_run(s, kinds[k].dt, kinds[k].op, counts[c], &res, &err);
            if (st != CS_OK || res.wrong != 0)
                CS_TEST_CHECK(0, "%s count=%llu %s %s: st=%d wrong=%llu (rank %d index %lld) %s",
                              what, (unsigned long long)counts[c], cs_dtype_name(kinds[k].dt),
                              cs_op_name(kinds[k].op), st, (unsigned long long)res.wrong,
                              res.first_bad_rank, (long long)res.first_bad_index, err.msg);
            else
                cs_test_passed++;
        }
}

static const int ranks_list[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 17, 31, 64};

static void test_matrix(const char *coll)
{
    int n = 0;
    for (int i = 0; i < NMINE; i++) {
        if (strcmp(mine[i][0], coll) != 0)
            continue;
        const cs_algo_t *a = find(mine[i][0], mine[i][1]);
        CS_TEST_CHECK(a != NULL, "%s %s not registered", mine[i][0], mine[i][1]);
        if (a == NULL)
            continue;
        n++;
        for (size_t pi = 0; pi < sizeof(ranks_list) / sizeof(ranks_list[0]); pi++) {
            int P = ranks_list[pi];
            int roots[3] = {0, P / 2, P - 1};
            int nroots = cs_coll_has_root(a->coll) ? 3 : 1;
            for (int ri = 0; ri < nroots; ri++) {
                if (ri > 0 && roots[ri] == roots[ri - 1])
                    continue;
                for (int inplace = 0; inplace < 2; inplace++)
                    for (int e = -1; e < (int)(sizeof(extra_params) / sizeof(extra_params[0]));
                         e++) {
                        if (e >= 0 && strcmp(extra_params[e][0], a->name) != 0)
                            continue;
                        const char *pt = e >= 0 ? extra_params[e][1] : NULL;
                        char what[160];
                        snprintf(what, sizeof(what), "%s %s P=%d root=%d inplace=%d %s", coll,
                                 a->name, P, roots[ri], inplace, pt ? pt : "");
                        cs_sched_t *s = build(a, P, roots[ri], inplace, pt, 1);
                        if (s == NULL)
                            continue;
                        run_interp(s, P, what);
                        cs_sched_destroy(s);
                    }
            }
        }
    }
    CS_TEST_CHECK(n > 0, "no generator of mine for %s", coll);
}

/* ---- scale ---------------------------------------------------------------- */

static void test_scale(void)
{
    static const struct {
        const char *coll, *name, *params;
        int P;
    } big[] = {
        {"allreduce", "dbtree", "nchunks=4", 1536},
        {"allreduce", "binomial", NULL, 1536},
        {"broadcast", "binomial", NULL, 1536},
        {"reduce", "binomial", NULL, 1536},
    };
    for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
        double t0 = now();
        cs_sched_t *s =
            build(find(big[i].coll, big[i].name), big[i].P, big[i].P / 3, 0, big[i].params, 1);
        double t1 = now();
        if (s)
            printf("%s %s P=%d: %llu steps, built and verified in %.3f s\n", big[i].coll,
                   big[i].name, big[i].P, (unsigned long long)cs_sched_total_steps(s), t1 - t0);
        cs_sched_destroy(s);
    }
    double t0 = now();
    cs_sched_t *s = build(find("allreduce", "binomial"), 27648, 0, 0, NULL, 0);
    double t1 = now();
    if (s) {
        /* 2 steps per edge and phase, plus one copy per inner node (even positions) */
        CS_TEST_CHECK(cs_sched_total_steps(s) == 4ull * (27648 - 1) + 27648 / 2,
                      "binomial 27648: %llu steps", (unsigned long long)cs_sched_total_steps(s));
        printf("allreduce binomial P=27648: %llu steps, built in %.3f s\n",
               (unsigned long long)cs_sched_total_steps(s), t1 - t0);
        CS_TEST_CHECK(t1 - t0 < 5.0, "binomial 27648 took %.1f s to build", t1 - t0);
    }
    cs_sched_destroy(s);
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "trees";
    if (strcmp(what, "trees") == 0)
        test_trees();
    else if (strcmp(what, "misc") == 0)
        test_misc();
    else if (strcmp(what, "matrix") == 0 && argc > 2)
        test_matrix(argv[2]);
    else if (strcmp(what, "scale") == 0)
        test_scale();
    else {
        fprintf(stderr, "usage: test_algos_b trees|misc|matrix COLL|scale\n");
        return 2;
    }
    if (!HAVE_VERIFY && (strcmp(what, "matrix") == 0 || strcmp(what, "scale") == 0))
        printf("note: built without cs_verify.h: verifier checks skipped\n");
    return cs_test_finish();
}
