/*
 * test_matrix.c - every ring / butterfly / direct generator through the
 * common matrix: P in {1,2,3,4,5,6,7,8,12,16,17,31,64}, in place and not,
 * counts {0, 1, P-1, P, P+1, 10007}; the verifier must accept each
 * schedule and the reference interpreter must compute exact results.
 *
 * Usage: test_algos_a_matrix [allreduce|reduce-scatter|allgather|hier]
 * (no argument: everything).
 */
#include "algos_a_util.h"

static const int Ps[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 17, 31, 64};
#define NP ((int)(sizeof(Ps) / sizeof(Ps[0])))

static void flat(cs_coll_t coll, const char *const *names, int n)
{
    for (int a = 0; a < n; a++)
        for (int i = 0; i < NP; i++)
            for (int ip = 0; ip <= (coll != CS_COLL_REDUCE_SCATTER); ip++)
                aa_check(coll, names[a], Ps[i], ip, NULL);
}

static void pipelined(void)
{
    /* nchunks > 1: several messages per segment (ring pipelining), uneven
     * chunk sizes at every count */
    static const char *const ar[] = {"ring", "rhd", "direct", "torus2d"};
    for (int a = 0; a < 4; a++)
        for (int P = 3; P <= 8; P += 5)
            aa_check(CS_COLL_ALLREDUCE, ar[a], P, 0, "nchunks=3");
    aa_check(CS_COLL_REDUCE_SCATTER, "ring", 5, 0, "nchunks=4");
    aa_check(CS_COLL_REDUCE_SCATTER, "rhalving", 6, 0, "nchunks=2");
    aa_check(CS_COLL_ALLGATHER, "ring", 5, 1, "nchunks=4");
    aa_check(CS_COLL_ALLGATHER, "bruck", 7, 0, "nchunks=2");
    aa_check(CS_COLL_ALLGATHER, "rd", 6, 0, "nchunks=3");
}

static void hier(void)
{
    static const struct {
        int P;
        const char *params;
    } cases[] = {
        {6, "dims=2x3"},
        {6, "dims=3x2"},
        {12, "dims=3x2x2"},
        {24, "dims=6x4"},
        {24, "dims=6x4,algos=ring+rhd"},
        {24, "dims=6x4,algos=rhd+ring"},
        {24, "dims=6x4,algos=direct+rhd"},
        {30, "dims=3x5x2,algos=rhd+direct+ring"},
        {12, "dims=3x2x2,algos=rhd"},
        {12, "dims=12,algos=rhd"},
        {7, "dims=7,algos=direct"},
        {6, "dims=1x6x1,algos=ring+rhd+direct"},
        {10, "dims=5x2,algos=rhd+rhd,nchunks=2"},
        {24, "dims=6x4,algos=ring+rhd,nchunks=3"},
        {1, "dims=1"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        for (int ip = 0; ip <= 1; ip++)
            aa_check(CS_COLL_ALLREDUCE, "hier", cases[i].P, ip, cases[i].params);
    for (int i = 0; i < NP; i++) /* default: one tier of all ranks */
        aa_check(CS_COLL_ALLREDUCE, "hier", Ps[i], 0, NULL);
    /* torus2d with explicit grids, including degenerate ones */
    aa_check(CS_COLL_ALLREDUCE, "torus2d", 12, 0, "dims=3x4");
    aa_check(CS_COLL_ALLREDUCE, "torus2d", 12, 1, "dims=4x3");
    aa_check(CS_COLL_ALLREDUCE, "torus2d", 5, 0, "dims=5x1");
    aa_check(CS_COLL_ALLREDUCE, "torus2d", 5, 0, "dims=1x5");
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : NULL;
    static const char *const ar[] = {"ring", "rd", "rhd", "direct", "hier", "torus2d"};
    static const char *const rs[] = {"ring", "rhalving", "direct"};
    static const char *const ag[] = {"ring", "rd", "bruck", "direct"};
    if (only == NULL || strcmp(only, "allreduce") == 0)
        flat(CS_COLL_ALLREDUCE, ar, 6);
    if (only == NULL || strcmp(only, "reduce-scatter") == 0)
        flat(CS_COLL_REDUCE_SCATTER, rs, 3);
    if (only == NULL || strcmp(only, "allgather") == 0)
        flat(CS_COLL_ALLGATHER, ag, 4);
    if (only == NULL || strcmp(only, "hier") == 0) {
        hier();
        pipelined();
    }
    return cs_test_finish();
}
