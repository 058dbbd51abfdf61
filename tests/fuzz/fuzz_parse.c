/*
 * libFuzzer harness for the schedule text reader (run with tests/fuzz/run.sh).
 *
 * For any input: cs_sched_parse must not crash, leak or hang (ASan, UBSan
 * and libFuzzer's leak and timeout checks watch that).  A failure must carry
 * CS_ERR_PARSE or CS_ERR_NOMEM and a printable message starting with
 * "fuzz:LINE:COL: ".  A success must survive the round trip: the canonical
 * text parses again, to the same schedule (field by field), whose canonical
 * text is the same bytes.  Any violation aborts with the reason on stderr.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_text.h"
#include "sched_same.h"

static void fail(const char *why, const char *detail)
{
    fprintf(stderr, "fuzz_parse: %s: %s\n", why, detail ? detail : "");
    abort();
}

static void check_error(const cs_err_t *err)
{
    if (err->code != CS_ERR_PARSE && err->code != CS_ERR_NOMEM)
        fail("unexpected status", cs_status_name(err->code));
    const char *p = err->msg;
    if (strncmp(p, "fuzz:", 5) != 0)
        fail("message does not start with the file name", p);
    p += 5;
    for (int field = 0; field < 2; field++) {
        if (*p < '1' || *p > '9')
            fail("message has no line:col", err->msg);
        while (*p >= '0' && *p <= '9')
            p++;
        if (*p++ != ':')
            fail("message has no line:col", err->msg);
    }
    for (p = err->msg; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
            fail("message has a non-printable byte", err->msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cs_err_t err = {0};
    cs_sched_t *s = cs_sched_parse((const char *)data, size, "fuzz", &err);
    if (s == NULL) {
        check_error(&err);
        return 0;
    }
    size_t l1 = 0, l2 = 0;
    char *t1 = cs_test_write_mem(s, &l1);
    if (t1 == NULL)
        fail("the canonical text could not be written", NULL);
    cs_sched_t *s2 = cs_sched_parse(t1, l1, "canonical", &err);
    if (s2 == NULL)
        fail("canonical text does not parse", err.msg);
    const char *diff = cs_test_sched_diff(s, s2);
    if (diff != NULL)
        fail("schedule changed across the round trip", diff);
    if (strcmp(s->algo, s2->algo) != 0 || strcmp(s->params, s2->params) != 0)
        fail("algorithm metadata changed across the round trip", s2->params);
    char *t2 = cs_test_write_mem(s2, &l2);
    if (t2 == NULL)
        fail("the canonical text could not be written", NULL);
    if (l1 != l2 || memcmp(t1, t2, l1) != 0)
        fail("canonical text changed across the round trip", t2);
    free(t2);
    free(t1);
    cs_sched_destroy(s2);
    cs_sched_destroy(s);
    return 0;
}
