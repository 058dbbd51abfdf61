/* calibrate/: recorded measurements of the emulated cluster derive the
 * platform calibrate wrote.
 *
 *   test_calib_record exact RECORD.json PLATFORM.xml
 *       RECORD.json and PLATFORM.xml were written by one run of
 *       `collstep calibrate` (tests/calibrate/CMakeLists.txt says which): the
 *       record read back, derived and written again gives PLATFORM.xml and
 *       RECORD.json byte for byte, through cs_calibrate_write (files) as
 *       well as in memory;
 *   test_calib_record close RECORD.json PLATFORM.xml
 *       a record in the format of an older collstep (times to 0.1 ns, no
 *       "plan", no "node_of"): it reads, and derives PLATFORM.xml up to the
 *       rounding of its times: the same text, every number within 0.1 %.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_calibrate.h"
#include "cs_test.h"

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0;
    *n = 0;
    for (;;) {
        if (*n + 4096 > cap) {
            char *b = realloc(buf, cap = cap * 2 + 65536);
            if (!b)
                break;
            buf = b;
        }
        size_t got = fread(buf + *n, 1, cap - *n - 1, f);
        *n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    if (buf)
        buf[*n] = 0;
    return buf;
}

/* a and b: the same text between numbers, numbers within tol (relative) */
static int close_text(const char *a, const char *b, double tol, int *numbers)
{
    *numbers = 0;
    while (*a && *b) {
        int na = isdigit((unsigned char)*a) || (*a == '-' && isdigit((unsigned char)a[1]));
        int nb = isdigit((unsigned char)*b) || (*b == '-' && isdigit((unsigned char)b[1]));
        if (na && nb) {
            char *ea, *eb;
            double x = strtod(a, &ea), y = strtod(b, &eb);
            if (fabs(x - y) > tol * fmax(fabs(x), fabs(y)) + 1e-3) {
                fprintf(stderr, "%.40s\n  vs %.40s\n", a, b);
                return 0;
            }
            a = ea, b = eb, ++*numbers;
            continue;
        }
        if (*a++ != *b++) {
            fprintf(stderr, "text differs: ...%.40s\n  vs ...%.40s\n", a - 1, b - 1);
            return 0;
        }
    }
    return *a == *b;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "exact") && strcmp(argv[1], "close"))) {
        fprintf(stderr, "usage: test_calib_record exact|close RECORD.json PLATFORM.xml\n");
        return 2;
    }
    int exact = !strcmp(argv[1], "exact");
    size_t jn = 0, xn = 0;
    char *json = slurp(argv[2], &jn), *xml = slurp(argv[3], &xn);
    CS_TEST_REQUIRE(json && xml, "cannot read %s or %s", argv[2], argv[3]);
    cs_calibrate_record_t *rec = NULL;
    cs_calibrate_derived_t *d = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    CS_TEST_REQUIRE(cs_calibrate_record_load(argv[2], &rec, &err) == CS_OK, "load: %s", err.msg);
    CS_TEST_REQUIRE(cs_calibrate_derive(rec, &d, &err) == CS_OK, "derive: %s", err.msg);
    char *x2 = NULL, *j2 = NULL;
    size_t j2n = 0;
    CS_TEST_REQUIRE(cs_calibrate_xml(rec, d, &x2, &err) == CS_OK, "xml: %s", err.msg);
    FILE *f = open_memstream(&j2, &j2n);
    cs_calibrate_json(rec, d, f);
    fclose(f);
    printf("%s: %d ranks on %d nodes, %d series of %d sizes, transport %s\n", argv[2],
           rec->nranks, rec->nnodes, rec->nseries, rec->plan.nsizes, rec->transport);
    if (exact) {
        CS_TEST_CHECK(!strcmp(x2, xml), "the platform derived from %s differs from %s", argv[2],
                      argv[3]);
        CS_TEST_CHECK(j2n == jn && !memcmp(j2, json, jn), "the JSON written again differs from %s",
                      argv[2]);
        /* the files, through cs_out */
        char px[4096], pj[4096];
        cs_test_tmp(px, sizeof(px), "calib_record.xml");
        cs_test_tmp(pj, sizeof(pj), "calib_record.json");
        CS_TEST_REQUIRE(cs_calibrate_write(rec, d, px, pj, CS_OUT_FORCE, &err) == CS_OK,
                        "write: %s", err.msg);
        size_t fx = 0, fj = 0;
        char *wx = slurp(px, &fx), *wj = slurp(pj, &fj);
        CS_TEST_CHECK(wx && wj && fx == xn && fj == jn && !memcmp(wx, xml, xn) &&
                          !memcmp(wj, json, jn),
                      "the files written (%s, %s) differ from the recorded ones", px, pj);
        remove(px), remove(pj);
        free(wx), free(wj);
    } else {
        int nums = 0;
        CS_TEST_CHECK(close_text(x2, xml, 1e-3, &nums), "the platform derived from %s is not "
                      "%s up to rounding", argv[2], argv[3]);
        printf("%d numbers of the platform within 0.1 %%\n", nums);
    }
    free(x2), free(j2), free(json), free(xml);
    cs_calibrate_derived_free(d);
    cs_calibrate_record_free(rec);
    return cs_test_finish();
}
