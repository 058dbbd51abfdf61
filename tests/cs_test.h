/*
 * cs_test.h - the test harness: small enough to read in five minutes.
 *
 *   CS_TEST_CHECK(cond, fmt, ...)  record a failure with file:line, go on
 *   CS_TEST_REQUIRE(cond, fmt, ...) record a failure and return from main's
 *                                   test function (returns 1)
 *   CS_TEST_SKIP(fmt, ...)          print why and exit 77 (ctest: skipped)
 *   cs_test_finish()                print "N passed, M failed" and return
 *                                   the exit code for main
 *   cs_test_tmp(buf, len, name)     "$TMPDIR/name" (else /tmp/name), for
 *                                   mkstemp / mkdtemp: tests/hermetic.sh
 *                                   gives each test a TMPDIR of its own
 */
#ifndef CS_TEST_H
#define CS_TEST_H

#include <stdio.h>
#include <stdlib.h>

static int cs_test_passed, cs_test_failed;

/* Count a failure and say where (the common part of CHECK and REQUIRE). */
#define CS__TEST_FAIL(cond_text, ...)                                         \
    do {                                                                      \
        cs_test_failed++;                                                     \
        fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, cond_text);   \
        fprintf(stderr, __VA_ARGS__);                                         \
        fputc('\n', stderr);                                                  \
    } while (0)

#define CS_TEST_CHECK(cond, ...)                                              \
    do {                                                                      \
        if (cond)                                                             \
            cs_test_passed++;                                                 \
        else                                                                  \
            CS__TEST_FAIL(#cond, __VA_ARGS__);                                \
    } while (0)

#define CS_TEST_REQUIRE(cond, ...)                                            \
    do {                                                                      \
        if (cond) { /* evaluated once */                                      \
            cs_test_passed++;                                                 \
        } else {                                                              \
            CS__TEST_FAIL(#cond, __VA_ARGS__);                                \
            return 1;                                                         \
        }                                                                     \
    } while (0)

#define CS_TEST_SKIP(...)                                                     \
    do {                                                                      \
        fprintf(stderr, "SKIP: ");                                            \
        fprintf(stderr, __VA_ARGS__);                                         \
        fputc('\n', stderr);                                                  \
        exit(77);                                                             \
    } while (0)

static inline char *cs_test_tmp(char *buf, size_t len, const char *name)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, len, "%s/%s", dir && *dir ? dir : "/tmp", name);
    return buf;
}

static inline int cs_test_finish(void)
{
    printf("%d passed, %d failed\n", cs_test_passed, cs_test_failed);
    return cs_test_failed ? 1 : 0;
}

#endif /* CS_TEST_H */
