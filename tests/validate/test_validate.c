/* validate/: the |error| statistics and the report on synthetic inputs.
 *
 *   statistics: no rows (zeros), one row, the median of an odd and of an
 *   even count, the geometric mean (an exact prediction counted as 0.01 %),
 *   the worst, over- and under-predictions alike, per algorithm (by
 *   index: two schedules of one name stay apart), the split at 1 MiB
 *   (>= 1 MiB, < 1 MiB); a measured time of zero, negative or not a number
 *   refused with CS_ERR_INVAL naming the row, as is a negative prediction;
 *   report: two algorithms (the second not serving one size) x three
 *   sizes, predicted on two platforms, written as table, csv and json and
 *   compared byte for byte with the files given (argv[1] table, argv[2]
 *   csv, argv[3] json: the layout `collstep validate` prints); with a
 *   measured time of zero nothing is written and the write is refused. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_test.h"
#include "cs_validate.h"

#define MIB (1u << 20)

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1);
}

static cs_validate_stats_t stats(const cs_validate_row_t *r, int n, int algo, uint64_t lo,
                                 uint64_t hi, int *st)
{
    cs_validate_stats_t s;
    cs_err_t err = {0};
    *st = cs_validate_error_stats(r, n, algo, lo, hi, &s, &err);
    return s;
}

static void test_stats(void)
{
    int st;
    cs_validate_stats_t s = stats(NULL, 0, -1, 0, UINT64_MAX, &st);
    CS_TEST_CHECK(st == CS_OK && s.n == 0 && s.median == 0 && s.geomean == 0 && s.worst == 0,
                  "no rows: st %d n %d", st, s.n);

    cs_validate_row_t one = {0, 4096, 100e-6, 110e-6};
    s = stats(&one, 1, -1, 0, UINT64_MAX, &st);
    CS_TEST_CHECK(st == CS_OK && s.n == 1 && close_to(s.median, 10) && close_to(s.geomean, 10) &&
                      close_to(s.worst, 10), "one row: n %d %g %g %g", s.n, s.median, s.geomean,
                  s.worst);

    /* algorithm 0: errors +10 %, -20 %, +40 % (small sizes); algorithm 1:
     * 10 %, 20 %, 30 %, 50 % (large); algorithm 2: exact */
    cs_validate_row_t r[] = {
        {0, 64 << 10, 1e-3, 1.1e-3},  {0, 256 << 10, 2e-3, 1.6e-3}, {0, MIB - 1, 1e-3, 1.4e-3},
        {1, MIB, 1e-3, 0.9e-3},       {1, 4 * MIB, 1e-3, 1.2e-3},   {1, 16 * MIB, 2e-3, 2.6e-3},
        {1, 64 * MIB, 1e-3, 0.5e-3},  {2, 8 * MIB, 5e-3, 5e-3},
    };
    int n = (int)(sizeof(r) / sizeof(r[0]));
    s = stats(r, n, 0, 0, UINT64_MAX, &st);
    CS_TEST_CHECK(st == CS_OK && s.n == 3 && close_to(s.median, 20) &&
                      close_to(s.geomean, cbrt(10.0 * 20 * 40)) && close_to(s.worst, 40),
                  "algorithm 0: n %d median %g geomean %g worst %g", s.n, s.median, s.geomean,
                  s.worst);
    s = stats(r, n, 1, 0, UINT64_MAX, &st);
    CS_TEST_CHECK(st == CS_OK && s.n == 4 && close_to(s.median, 25) &&
                      close_to(s.geomean, pow(10.0 * 20 * 30 * 50, 0.25)) &&
                      close_to(s.worst, 50),
                  "algorithm 1 (even count): n %d median %g geomean %g worst %g", s.n, s.median,
                  s.geomean, s.worst);
    s = stats(r, n, 2, 0, UINT64_MAX, &st);
    CS_TEST_CHECK(st == CS_OK && s.n == 1 && s.median == 0 && close_to(s.geomean, 0.01) &&
                      s.worst == 0, "exact prediction: median %g geomean %g (0.01 floor)",
                  s.median, s.geomean);
    s = stats(r, n, 7, 0, UINT64_MAX, &st);
    CS_TEST_CHECK(st == CS_OK && s.n == 0, "an algorithm without rows: n %d", s.n);
    s = stats(r, n, -1, 0, UINT64_MAX, &st);
    CS_TEST_CHECK(st == CS_OK && s.n == 8 && close_to(s.median, 20) && close_to(s.worst, 50) &&
                      close_to(s.geomean, pow(10.0 * 20 * 40 * 10 * 20 * 30 * 50 * 0.01, 1 / 8.0)),
                  "overall: n %d median %g geomean %g worst %g", s.n, s.median, s.geomean,
                  s.worst);
    /* the split at 1 MiB */
    s = stats(r, n, -1, MIB, UINT64_MAX, &st);
    CS_TEST_CHECK(st == CS_OK && s.n == 5 && close_to(s.median, 20) && close_to(s.worst, 50),
                  ">= 1 MiB: n %d median %g worst %g", s.n, s.median, s.worst);
    s = stats(r, n, -1, 0, MIB, &st);
    CS_TEST_CHECK(st == CS_OK && s.n == 3 && close_to(s.median, 20) && close_to(s.worst, 40),
                  "< 1 MiB: n %d median %g worst %g", s.n, s.median, s.worst);
    s = stats(r, n, 1, MIB, 16 * MIB, &st);
    CS_TEST_CHECK(st == CS_OK && s.n == 2 && close_to(s.median, 15),
                  "algorithm 1, [1 MiB, 16 MiB): n %d median %g", s.n, s.median);

    /* refused: the row is named, nothing counted */
    double bad[] = {0, -1e-6, NAN, INFINITY};
    for (int i = 0; i < 4; i++) {
        cs_validate_row_t b[2] = {{0, 1024, 1e-3, 1e-3}, {0, 2048, bad[i], 1e-3}};
        cs_validate_stats_t x;
        cs_err_t err = {0};
        st = cs_validate_error_stats(b, 2, -1, 0, UINT64_MAX, &x, &err);
        CS_TEST_CHECK(st == CS_ERR_INVAL && strstr(err.msg, "row 2") && x.n == 0,
                      "measured %g: st %d '%s'", bad[i], st, err.msg);
    }
    cs_validate_row_t neg = {0, 1024, 1e-3, -1e-3};
    cs_validate_stats_t x;
    cs_err_t err = {0};
    st = cs_validate_error_stats(&neg, 1, -1, 0, UINT64_MAX, &x, &err);
    CS_TEST_CHECK(st == CS_ERR_INVAL && strstr(err.msg, "row 1"), "predicted < 0: st %d '%s'",
                  st, err.msg);
}

/* ---- the report ----------------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 16);
    *len = buf ? fread(buf, 1, (1 << 16) - 1, f) : 0;
    if (buf)
        buf[*len] = 0;
    fclose(f);
    return buf;
}

static void check_write(const cs_validate_t *v, cs_results_fmt_t fmt, const char *want_path)
{
    char *got = NULL;
    size_t glen = 0, wlen = 0;
    FILE *f = open_memstream(&got, &glen);
    cs_err_t err = {0};
    int st = cs_validate_write(v, fmt, f, &err);
    fclose(f);
    char *want = slurp(want_path, &wlen);
    CS_TEST_CHECK(st == CS_OK, "write %d: %s", (int)fmt, err.msg);
    CS_TEST_CHECK(want && glen == wlen && !memcmp(got, want, glen),
                  "%s differs; written:\n%s", want_path, got ? got : "");
    free(got);
    free(want);
}

static void test_report(const char *table, const char *csv, const char *json)
{
    static const int node_of[4] = {0, 0, 1, 1};
    static const char *algo[2] = {"ring", "rhd"}, *params[2] = {"nchunks=1", ""};
    static const uint64_t sizes[3] = {65536, 1048576, 16777216};
    static const unsigned char serves[6] = {1, 1, 1, 1, 0, 1};
    cs_validate_t v = {.coll = CS_COLL_ALLREDUCE, .nranks = 4, .nnodes = 2, .node_of = node_of,
                       .nalgo = 2, .nsizes = 3, .algo = algo, .params = params, .sizes = sizes,
                       .serves = serves, .nplats = 2, .transport = "tcp", .iters = 5};
    v.plats[0] = (cs_validate_plat_t){.spec = "calibrated.xml", .model = CS_SIM_IDEAL};
    v.plats[1] = (cs_validate_plat_t){.spec = "x86-p100-pcie-10gbe", .model = CS_SIM_CALIBRATED};
    cs_err_t err = {0};
    if (cs_validate_alloc(&v, &err) != CS_OK) {
        CS_TEST_CHECK(0, "alloc: %s", err.msg);
        return;
    }
    for (int j = 0; j < 6; j++) {
        double m = 1e-4 * (j + 1) * (j + 1) + 3.3e-6 * j;
        v.meas[j] = (cs_validate_meas_t){m, 0.97 * m, 1.05 * m, 0.95 * m, 1.2 * m, 2e-6 * j,
                                         0.8 * m, 1e-6 * j};
        v.pred[j] = m * (1 + 0.04 * (j - 2));
        v.pred[6 + j] = m * (1 - 0.11 * j);
    }
    check_write(&v, CS_FMT_TABLE, table);
    check_write(&v, CS_FMT_CSV, csv);
    check_write(&v, CS_FMT_JSON, json);
    /* a case not served may hold anything; a served one measured 0 is refused */
    v.meas[4].med = 0;
    check_write(&v, CS_FMT_TABLE, table);
    v.meas[2].med = 0;
    char *got = NULL;
    size_t glen = 0;
    FILE *f = open_memstream(&got, &glen);
    int st = cs_validate_write(&v, CS_FMT_TABLE, f, &err);
    fclose(f);
    CS_TEST_CHECK(st == CS_ERR_INVAL && glen == 0 && strstr(err.msg, "measured time 0"),
                  "measured 0: st %d, %zu bytes written, '%s'", st, glen, err.msg);
    free(got);
    cs_validate_free(&v);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: test_validate TABLE CSV JSON\n");
        return 2;
    }
    test_stats();
    test_report(argv[1], argv[2], argv[3]);
    return cs_test_finish();
}
