/*
 * test_matrix.c - every registered algorithm through one matrix:
 *
 *   P      {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 17, 31, 64} (odd, prime, powers
 *          of two and neither); P = 1536 and 27,648 are in test_scale.c
 *   roots  {0, P/2, P-1} for broadcast and reduce
 *   place  out of place and in place
 *   ...    the cases `refused` lists must fail with CS_ERR_UNSUPPORTED and
 *          a message (reduce-scatter in place); every other case must build
 *          (a generator that cannot do some case adds it there)
 *   params the defaults, the parameter sets of `sets` (over the whole P
 *          list) and the cases of `fixed` (one P each: hier's tier layouts,
 *          torus grids)
 *
 * Each case that builds is built again on 3 threads (CS_GEN_THREADS=3) and
 * must be the same schedule (cs_sched_digest); the verifier must accept it;
 * the reference interpreter must compute exact results for the counts
 * {0, 1, P-1, P, P+1, 10007 (less for per-block counts beyond 17 ranks:
 * large_count)} with exact data (int32 sum or max, and float sum for
 * reductions), and for counts 1 and 157 with the other element types and
 * operators of `kinds`.
 *
 * Usage: test_matrix [COLL [ALGO]]   (restrict to one collective / algorithm)
 */
#include <stdlib.h>
#include <time.h>

#include "algo_test.h"

static const int ranks_list[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 17, 31, 64};
#define NRANKS ((int)(sizeof(ranks_list) / sizeof(ranks_list[0])))

#define ANY CS_COLL_COUNT

/* Parameter sets run besides the defaults on every P, root and placement.
 * coll ANY: every collective with an algorithm of that name.  "%F" becomes
 * P as two factors, the smallest first (skipped when P is 1 or prime). */
static const struct {
    cs_coll_t coll;
    const char *algo, *params;
} sets[] = {
    {ANY, "ring", "nchunks=3"},
    {CS_COLL_REDUCE, "ring", "nchunks=2"},
    {CS_COLL_ALLREDUCE, "ring", "channels=3,local=2"},
    {CS_COLL_REDUCE_SCATTER, "ring", "channels=3,local=2"},
    {CS_COLL_ALLGATHER, "ring", "channels=3,local=2"},
    {CS_COLL_ALLREDUCE, "rhd", "nchunks=3"},
    {CS_COLL_ALLREDUCE, "direct", "nchunks=3"},
    {CS_COLL_ALLREDUCE, "torus2d", "nchunks=3"},
    {CS_COLL_ALLREDUCE, "torus2d", "dims=%F"},
    {CS_COLL_ALLREDUCE, "hier", "dims=%F"},
    {CS_COLL_ALLREDUCE, "hier", "dims=%F,algos=rhd+ring"},
    {CS_COLL_ALLREDUCE, "hier", "dims=%F,algos=direct+rhd"},
    {CS_COLL_ALLREDUCE, "hier", "dims=%F,channels=2"},
    {CS_COLL_ALLREDUCE, "hier", "dims=%F,algos=nvls+sharp"},
    {CS_COLL_ALLREDUCE, "hier", "dims=%F,algos=ring+sharp,nchunks=2"},
    {CS_COLL_ALLREDUCE, "hier", "dims=%F,algos=nvls+rhd,nchunks=3"},
    {CS_COLL_ALLREDUCE, "hier", "algos=sharp"},
    {ANY, "nvls", "nchunks=3"},
    {CS_COLL_ALLREDUCE, "nvls_tree", "local=2"},
    {CS_COLL_ALLREDUCE, "nvls_tree", "local=3,nchunks=3"},
    {CS_COLL_ALLREDUCE, "nvls_tree", "local=4,inter=ring,nchunks=2"},
    {CS_COLL_ALLREDUCE, "nvls_tree", "local=1,nchunks=1"},
    {CS_COLL_ALLREDUCE, "sharp", "nchunks=1"},
    {CS_COLL_ALLREDUCE, "sharp", "local=2"},
    {CS_COLL_ALLREDUCE, "sharp", "local=3,nchunks=2"},
    {CS_COLL_ALLREDUCE, "sharp", "local=8"},
    {CS_COLL_REDUCE_SCATTER, "rhalving", "nchunks=2"},
    {CS_COLL_ALLGATHER, "rd", "nchunks=3"},
    {CS_COLL_ALLGATHER, "bruck", "nchunks=2"},
    {ANY, "binomial", "nchunks=3"},
    {ANY, "binomial", "radix=3,nchunks=2"},
    {CS_COLL_ALLREDUCE, "dbtree", "nchunks=4"},
    {CS_COLL_ALLREDUCE, "dbtree", "local=3,channels=2,nchunks=2"},
    {CS_COLL_ALLREDUCE, "dbtree", "local=4,channels=3"},
    {CS_COLL_BROADCAST, "chain", "segments=1"},
    {CS_COLL_BROADCAST, "chain", "segments=3"},
    {CS_COLL_BROADCAST, "chain", "segments=5"},
    {CS_COLL_BROADCAST, "scatter_allgather", "nchunks=2"},
    {CS_COLL_ALLTOALL, "pairwise", "nchunks=2"},
    {CS_COLL_ALLTOALL, "pairwise", "inflight=0"},
    {CS_COLL_ALLTOALL, "pairwise", "inflight=3,nchunks=2"},
    {CS_COLL_ALLTOALL, "bruck", "nchunks=3"},
};

/* Cases on one P (every root and placement). */
static const struct {
    cs_coll_t coll;
    const char *algo;
    int P;
    const char *params;
} fixed[] = {
    /* pipelining: several messages per segment, uneven chunks at every count */
    {CS_COLL_REDUCE_SCATTER, "ring", 5, "nchunks=4"},
    {CS_COLL_ALLGATHER, "ring", 5, "nchunks=4"},
    /* hier: two and three tiers, every inner algorithm, degenerate tiers */
    /* broadcast chains in given orders (from every root) */
    {CS_COLL_BROADCAST, "chain", 8, "orders=01237564+02674513,nchunks=3"},
    {CS_COLL_BROADCAST, "chain", 5, "orders=31420"},
    {CS_COLL_BROADCAST, "chain", 16, "channels=4,local=8,nchunks=2"},
    {CS_COLL_BROADCAST, "chain", 13, "channels=3,local=4"},
    {CS_COLL_BROADCAST, "chain", 16, "local=8,orders=01237564+32675401"},
    /* reduce chains the same way, toward the root */
    {CS_COLL_REDUCE, "chain", 8, "orders=01237564+02674513,nchunks=3"},
    {CS_COLL_REDUCE, "chain", 16, "channels=4,local=8,nchunks=2"},
    {CS_COLL_REDUCE, "chain", 13, "channels=3,local=4"},
    /* dbtree's chains in given orders: one node, two, five */
    {CS_COLL_ALLREDUCE, "dbtree", 4, "orders=2013"},
    {CS_COLL_ALLREDUCE, "dbtree", 8, "local=4,orders=0213+3120,nchunks=2"},
    {CS_COLL_ALLREDUCE, "dbtree", 20, "local=4,orders=1302"},
    {CS_COLL_ALLREDUCE, "hier", 6, "dims=2x3"},
    {CS_COLL_ALLREDUCE, "hier", 6, "dims=3x2"},
    {CS_COLL_ALLREDUCE, "hier", 12, "dims=3x2x2"},
    {CS_COLL_ALLREDUCE, "hier", 24, "dims=6x4"},
    {CS_COLL_ALLREDUCE, "hier", 24, "dims=6x4,algos=ring+rhd"},
    {CS_COLL_ALLREDUCE, "hier", 24, "dims=6x4,algos=rhd+ring"},
    {CS_COLL_ALLREDUCE, "hier", 24, "dims=6x4,algos=direct+rhd"},
    {CS_COLL_ALLREDUCE, "hier", 30, "dims=3x5x2,algos=rhd+direct+ring"},
    {CS_COLL_ALLREDUCE, "hier", 12, "dims=3x2x2,algos=rhd"},
    {CS_COLL_ALLREDUCE, "hier", 12, "dims=12,algos=rhd"},
    {CS_COLL_ALLREDUCE, "hier", 7, "dims=7,algos=direct"},
    {CS_COLL_ALLREDUCE, "hier", 6, "dims=1x6x1,algos=ring+rhd+direct"},
    {CS_COLL_ALLREDUCE, "hier", 10, "dims=5x2,algos=rhd+rhd,nchunks=2"},
    {CS_COLL_ALLREDUCE, "hier", 24, "dims=6x4,algos=ring+rhd,nchunks=3"},
    {CS_COLL_ALLREDUCE, "hier", 1, "dims=1"},
    /* hier with switch tiers: NVLS nodes and SHARP across, three tiers */
    {CS_COLL_ALLREDUCE, "hier", 24, "dims=6x4,algos=nvls+sharp,nchunks=2"},
    {CS_COLL_ALLREDUCE, "hier", 12, "dims=3x2x2,algos=nvls+ring+sharp"},
    {CS_COLL_ALLREDUCE, "hier", 12, "dims=2x3x2,algos=nvls,channels=2"},
    {CS_COLL_ALLREDUCE, "hier", 6, "dims=3x2x1,algos=direct+sharp+ring"},
    /* torus2d: both orientations of a grid, degenerate grids */
    {CS_COLL_ALLREDUCE, "torus2d", 12, "dims=3x4"},
    {CS_COLL_ALLREDUCE, "torus2d", 12, "dims=4x3"},
    {CS_COLL_ALLREDUCE, "torus2d", 5, "dims=5x1"},
    {CS_COLL_ALLREDUCE, "torus2d", 5, "dims=1x5"},
};

/* Element types and operators.  Reductions use sum data (every rank adds to
 * every element); data movement uses max data, where every (rank, element)
 * pair has its own value (sum data is mostly zeros there, see cs_dtype.h).
 * `every`: at every count, else at counts 1 and 157 only (the element
 * ranges a schedule touches depend on the count, not the type: the other
 * types and operators check the interpreter's typed paths on multi-element
 * chunks, which needs no 10007 elements per rank). */
typedef struct {
    cs_dtype_t dt;
    cs_op_t op;
    int every;
} kind_t;
static const kind_t reducing[] = {
    {CS_DT_I32, CS_OP_SUM, 1}, {CS_DT_F32, CS_OP_SUM, 1}, {CS_DT_I64, CS_OP_MIN, 0},
    {CS_DT_I64, CS_OP_MAX, 0}, {CS_DT_F64, CS_OP_MAX, 0}, {CS_DT_BF16, CS_OP_SUM, 0},
};
static const kind_t moving[] = {
    {CS_DT_I32, CS_OP_MAX, 1}, {CS_DT_I32, CS_OP_SUM, 0}, {CS_DT_F32, CS_OP_SUM, 0},
    {CS_DT_F32, CS_OP_MIN, 0}, {CS_DT_I64, CS_OP_MAX, 0}, {CS_DT_BF16, CS_OP_MAX, 0},
};
#define NKINDS 6

static long ncases;

static int smallest_factor(int p)
{
    for (int f = 2; f * f <= p; f++)
        if (p % f == 0)
            return f;
    return 0;
}

/* The large count: 10007, odd so that chunks are uneven.  Per-block
 * counts (reduce-scatter, allgather, alltoall) move P x P x count elements
 * in all, 41 million at P = 64: there the count is the largest odd one
 * that keeps the total under 4 Mi elements (4363 at P = 31, 1023 at 64),
 * still hundreds of elements in every chunk. */
static uint64_t large_count(cs_coll_t c, int P)
{
    uint64_t n = 10007, cap = (1u << 22) / ((uint64_t)P * (uint64_t)P);
    if (cs_coll_blocked(c) && cap < n)
        n = cap % 2 ? cap : cap - 1;
    return n;
}

static void run_interp(const cs_sched_t *s, const char *what)
{
    int P = s->desc.nranks;
    cs_coll_t c = s->desc.coll;
    int red = c == CS_COLL_ALLREDUCE || c == CS_COLL_REDUCE_SCATTER || c == CS_COLL_REDUCE;
    const kind_t *kinds = red ? reducing : moving;
    uint64_t large = large_count(c, P);
    uint64_t counts[] = {0, 1, (uint64_t)P - 1, (uint64_t)P, (uint64_t)P + 1, large};
    for (int k = 0; k < NKINDS; k++) {
        for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
            uint64_t n = counts[i];
            if (i == 2 && P == 1)
                continue; /* count 0 again */
            if (!kinds[k].every) {
                if (i != 1 && i != 5)
                    continue;
                n = i == 5 ? 157 : n;
            }
            if (!at_interp(s, kinds[k].dt, kinds[k].op, n, what))
                return; /* one report per case is enough */
        }
    }
}

/* The cases a generator may refuse (CS_ERR_UNSUPPORTED with a message). */
static int refused(const cs_algo_t *a, int P, int inplace)
{
    (void)P;
    return inplace && a->coll == CS_COLL_REDUCE_SCATTER; /* core: cs_sched_create */
}

static void run_case(const cs_algo_t *a, int P, int root, int inplace, const char *params)
{
    char what[192];
    snprintf(what, sizeof(what), "%s %s P=%d root=%d%s %s", cs_coll_name(a->coll), a->name, P,
             root, inplace ? " inplace" : "", params ? params : "");
    cs_sched_t *s = NULL;
    cs_err_t err;
    ncases++;
    int st = at_build(a, P, root, inplace, params, &s, &err);
    if (refused(a, P, inplace)) {
        CS_TEST_CHECK(st == CS_ERR_UNSUPPORTED && err.msg[0] != '\0',
                      "%s: must be refused with a message: %s %s", what, cs_status_name(st),
                      err.msg);
        cs_sched_destroy(s);
        return;
    }
    CS_TEST_CHECK(st == CS_OK && s != NULL, "%s: build %s: %s", what, cs_status_name(st),
                  err.msg);
    if (st != CS_OK)
        return;

    /* generated on 3 threads (rank ranges built apart, then moved into one
     * schedule): the same schedule */
    cs_sched_t *s3 = NULL;
    cs_err_t e3;
    setenv("CS_GEN_THREADS", "3", 1);
    int st3 = at_build(a, P, root, inplace, params, &s3, &e3);
    unsetenv("CS_GEN_THREADS");
    CS_TEST_CHECK(st3 == CS_OK && cs_sched_digest(s3) == cs_sched_digest(s),
                  "%s: generated on 3 threads: %s", what,
                  st3 == CS_OK ? "a different schedule" : e3.msg);
    cs_sched_destroy(s3);

    if (at_verify(s, what))
        run_interp(s, what);
    cs_sched_destroy(s);
}

/* Every root (rooted collectives) and both placements. */
static void run_all(const cs_algo_t *a, int P, const char *params)
{
    int roots[3] = {0, P / 2, P - 1};
    int nroots = cs_coll_has_root(a->coll) ? 3 : 1;
    for (int ri = 0; ri < nroots; ri++) {
        if (ri > 0 && roots[ri] == roots[ri - 1])
            continue;
        for (int inplace = 0; inplace <= 1; inplace++)
            run_case(a, P, roots[ri], inplace, params);
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    cs_coll_t only_coll = argc > 1 ? cs_coll_parse(argv[1]) : ANY;
    const char *only_algo = argc > 2 ? argv[2] : NULL;
    if (argc > 3 || (argc > 1 && only_coll == CS_COLL_COUNT)) {
        fprintf(stderr, "usage: test_matrix [COLL [ALGO]]\n");
        return 2;
    }
    int nalgos = 0;
    for (int i = 0; i < cs_algo_count(); i++) {
        const cs_algo_t *a = cs_algo_at(i);
        if ((only_coll != ANY && a->coll != only_coll) ||
            (only_algo && strcmp(a->name, only_algo) != 0))
            continue;
        nalgos++;
        long n0 = ncases;
        double t0 = now();
        for (int pi = 0; pi < NRANKS; pi++) {
            int P = ranks_list[pi];
            run_all(a, P, NULL);
            for (size_t e = 0; e < sizeof(sets) / sizeof(sets[0]); e++) {
                if ((sets[e].coll != ANY && sets[e].coll != a->coll) ||
                    strcmp(sets[e].algo, a->name) != 0)
                    continue;
                char text[128];
                const char *pct = strstr(sets[e].params, "%F");
                if (pct != NULL) {
                    int f = smallest_factor(P);
                    if (f == 0)
                        continue;
                    snprintf(text, sizeof(text), "%.*s%dx%d%s", (int)(pct - sets[e].params),
                             sets[e].params, f, P / f, pct + 2);
                } else {
                    snprintf(text, sizeof(text), "%s", sets[e].params);
                }
                run_all(a, P, text);
            }
        }
        for (size_t e = 0; e < sizeof(fixed) / sizeof(fixed[0]); e++)
            if (fixed[e].coll == a->coll && strcmp(fixed[e].algo, a->name) == 0)
                run_all(a, fixed[e].P, fixed[e].params);
        printf("%-15s %-18s %5ld cases %7.2f s\n", cs_coll_name(a->coll), a->name, ncases - n0,
               now() - t0);
    }
    CS_TEST_CHECK(nalgos > 0, "no algorithm matched");
    return cs_test_finish();
}
