/*
 * test_results_nccl.c - core/cs_results.h's nccl-tests layout from rows
 * given by hand: every branch of nccl-tests' number narrowing (two
 * decimals, one, none, an exponent: getFloatStr of its src/util.cu), the
 * #wrong column with and without validation, the out-of-bounds count, the
 * root of rooted collectives, devices sharing a host, and the sweeps
 * cs_nccl_sweep accepts and refuses.  The expected lines are written out
 * column by column from nccl-tests' printf formats ("%12li  %12li  %8s
 * %6s  %6s" then "  %7s  %6s  %6s  %6g" twice).
 */
#include <string.h>

#include "cs_results.h"
#include "cs_test.h"

/* The text printed for the tables. */
static char *print(const cs_nccl_table_t *t, int n)
{
    static char buf[16384];
    memset(buf, 0, sizeof(buf));
    FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
    if (!f)
        return buf;
    int st = cs_results_print_nccl(f, t, n);
    fclose(f);
    return st == CS_OK ? buf : (char *)"";
}

/* Line `i` (0-based) of text, without its newline. */
static const char *line(const char *text, int i, char *out, size_t len)
{
    for (; i > 0 && text; i--)
        text = (text = strchr(text, '\n')) ? text + 1 : NULL;
    out[0] = '\0';
    if (text)
        snprintf(out, len, "%.*s", (int)strcspn(text, "\n"), text);
    return out;
}

static void narrowing(void)
{
    /* times 12.345 us ("%7.2f"), 123456.7 us (8 characters with "%7.1f",
     * so "%7.0f"), 1234567.8 us ("%7.0f"), 98765432.1 us ("%7.1e"); algbw
     * and busbw from 0.001 ("%6.2f") to 1234567 ("%6.0e") */
    static const double us[] = {12.345, 123456.7, 1234567.8, 98765432.1};
    static const uint64_t bytes[] = {8, 8192, 8388608, 8589934592ull};
    cs_result_t rows[4];
    for (int i = 0; i < 4; i++)
        cs_result_fill(&rows[i], "ring", CS_COLL_BROADCAST, 4, bytes[i], CS_DT_BF16, CS_OP_SUM,
                       us[i], "hand");
    rows[0].algbw_GBps = 0.001, rows[0].busbw_GBps = 1234.5;
    rows[1].algbw_GBps = 99999.0, rows[1].busbw_GBps = 123456.0;
    rows[2].algbw_GBps = 1234567.0, rows[2].busbw_GBps = 12.5;
    rows[3].algbw_GBps = 2.0, rows[3].busbw_GBps = 4.0;
    rows[2].wrong = 3; /* counted only when validation is on */
    const char *hosts[] = {"nodeA", "nodeB", "nodeA", "a-rather-long-host"};
    const char *devs[] = {"Sim GPU", "Sim GPU", "Sim GPU", "other"};
    cs_nccl_table_t t = {"broadcast by hand\nsecond line", 8, 8589934592ull, 1024, 1, 1, 2, 4,
                         hosts, devs, rows, 4, NULL};
    const char *out = print(&t, 1);
    char l[512];
    CS_TEST_CHECK(!strcmp(line(out, 0, l, sizeof(l)), "# broadcast by hand"), "%s", l);
    CS_TEST_CHECK(!strcmp(line(out, 1, l, sizeof(l)), "# second line"), "%s", l);
    CS_TEST_CHECK(!strcmp(line(out, 4, l, sizeof(l)),
                          "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 1024(factor) "
                          "warmup iters: 0 iters: 1 agg iters: 1 validation: 1 graph: 0 unalign: "
                          "0"),
                  "%s", l);
    CS_TEST_CHECK(!strcmp(line(out, 8, l, sizeof(l)),
                          "#  Rank  1 Group  0 Pid      0 on      nodeB device  0 [0000:00:00] "
                          "Sim GPU"),
                  "%s", l);
    CS_TEST_CHECK(!strcmp(line(out, 9, l, sizeof(l)),
                          "#  Rank  2 Group  0 Pid      0 on      nodeA device  1 [0000:00:00] "
                          "Sim GPU"),
                  "%s", l);
    CS_TEST_CHECK(!strcmp(line(out, 10, l, sizeof(l)),
                          "#  Rank  3 Group  0 Pid      0 on a-rather-long-host device  0 "
                          "[0000:00:00] other"),
                  "%s", l);
    static const char *const want[] = {
        /*      size         count      type   redop    root     time   algbw   busbw  #wrong */
        "           8             4  bfloat16    none       2    12.35    0.00  1234.5       0"
        "    12.35    0.00  1234.5       0",
        "        8192          4096  bfloat16    none       2   123457   99999  123456       0"
        "   123457   99999  123456       0",
        "     8388608       4194304  bfloat16    none       2  1234568   1e+06   12.50       3"
        "  1234568   1e+06   12.50       3",
        "  8589934592    4294967296  bfloat16    none       2  9.9e+07    2.00    4.00       0"
        "  9.9e+07    2.00    4.00       0",
    };
    for (int i = 0; i < 4; i++)
        CS_TEST_CHECK(!strcmp(line(out, 15 + i, l, sizeof(l)), want[i]), "row %d:\n%s\n%s", i, l,
                      want[i]);
    CS_TEST_CHECK(!strcmp(line(out, 19, l, sizeof(l)), "# Out of bounds values : 2 FAILED"),
                  "%s", l);
    /* (1234.5 + 123456 + 12.5 + 4) * 2 / 8 */
    CS_TEST_CHECK(!strcmp(line(out, 20, l, sizeof(l)), "# Avg bus bandwidth    : 31176.8 "),
                  "%s", l);
    /* without validation: N/A, nothing out of bounds */
    t.validation = 0;
    out = print(&t, 1);
    CS_TEST_CHECK(!strcmp(line(out, 17, l, sizeof(l)),
                          "     8388608       4194304  bfloat16    none       2  1234568   1e+06"
                          "   12.50    N/A  1234568   1e+06   12.50    N/A"),
                  "%s", l);
    CS_TEST_CHECK(!strcmp(line(out, 19, l, sizeof(l)), "# Out of bounds values : 0 OK"), "%s", l);
    CS_TEST_CHECK(strstr(out, "validation: 0 graph") != NULL, "validation 0");
}

static void sweeps(void)
{
    uint64_t lo, hi, step;
    int f;
    static const uint64_t geo[] = {1024, 4096, 16384}, ari[] = {1000, 3000, 5000},
                          two[] = {1024, 3072}, one[] = {4096}, down[] = {4096, 1024},
                          odd[] = {1024, 2048, 3072, 6144};
    CS_TEST_CHECK(cs_nccl_sweep(geo, 3, &lo, &hi, &step, &f) == CS_OK && lo == 1024 &&
                      hi == 16384 && step == 4 && f == 1,
                  "geometric");
    CS_TEST_CHECK(cs_nccl_sweep(ari, 3, &lo, &hi, &step, &f) == CS_OK && step == 2000 && f == 0,
                  "arithmetic");
    CS_TEST_CHECK(cs_nccl_sweep(two, 2, &lo, &hi, &step, &f) == CS_OK && step == 3 && f == 1,
                  "two sizes, a multiple: a factor");
    CS_TEST_CHECK(cs_nccl_sweep(one, 1, &lo, &hi, &step, &f) == CS_OK && lo == 4096 &&
                      hi == 4096 && step == 1048576 && f == 0,
                  "one size: nccl-tests' default step");
    CS_TEST_CHECK(cs_nccl_sweep(down, 2, &lo, &hi, &step, &f) == CS_ERR_INVAL, "decreasing");
    CS_TEST_CHECK(cs_nccl_sweep(odd, 4, &lo, &hi, &step, &f) == CS_ERR_INVAL, "mixed steps");
    CS_TEST_CHECK(!strcmp(cs_nccl_program(CS_COLL_REDUCE_SCATTER), "reduce_scatter_perf"),
                  "program");
    CS_TEST_CHECK(cs_results_fmt_parse("nccl-tests") == CS_FMT_NCCL_TESTS, "parse");
    CS_TEST_CHECK(cs_results_print(stdout, CS_FMT_NCCL_TESTS, 0, NULL, 0) == CS_ERR_INVAL,
                  "rows alone do not make the layout");
}

int main(void)
{
    narrowing();
    sweeps();
    return cs_test_finish();
}
