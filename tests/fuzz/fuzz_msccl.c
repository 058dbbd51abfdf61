/*
 * libFuzzer harness for the MSCCL XML importer (run with
 * tests/fuzz/run_msccl.sh).
 *
 * For any input: cs_msccl_parse must not crash, leak or hang (ASan, UBSan
 * and libFuzzer watch that).  A failure carries CS_ERR_PARSE,
 * CS_ERR_UNSUPPORTED or CS_ERR_NOMEM and a printable message starting with
 * "fuzz:LINE: ".  A success is a schedule the builder accepted whose every
 * step has an origin on a line of the input; the verifier runs on it, and
 * its export must import again to a schedule with the same number of
 * messages per rank.  Any violation aborts with the reason on stderr.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_msccl.h"
#include "cs_verify.h"

static void fail(const char *why, const char *detail)
{
    fprintf(stderr, "fuzz_msccl: %s: %s\n", why, detail ? detail : "");
    abort();
}

static void check_error(const cs_err_t *err)
{
    if (err->code != CS_ERR_PARSE && err->code != CS_ERR_UNSUPPORTED &&
        err->code != CS_ERR_NOMEM)
        fail("unexpected status", cs_status_name(err->code));
    const char *p = err->msg;
    if (strncmp(p, "fuzz:", 5) != 0)
        fail("message does not start with the file name", p);
    p += 5;
    if (*p < '0' || *p > '9')
        fail("message has no line", err->msg);
    for (p = err->msg; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
            fail("message has a non-printable byte", err->msg);
}

static uint64_t messages(const cs_sched_t *s, int r)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < s->ranks[r].nsteps; i++)
        n += s->ranks[r].steps[i].kind == CS_STEP_SEND;
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cs_err_t err = {0};
    cs_msccl_t *m = NULL;
    if (cs_msccl_parse((const char *)data, size, "fuzz", NULL, &m, &err) != CS_OK) {
        check_error(&err);
        return 0;
    }
    const cs_sched_t *s = m->sched;
    for (int r = 0; r < m->nranks; r++) {
        if (m->norigin[r] != s->ranks[r].nsteps)
            fail("origin table and schedule disagree", NULL);
        for (uint32_t i = 0; i < m->norigin[r]; i++)
            if (m->origin[r][i].line == 0 || m->origin[r][i].gpu != r)
                fail("a step without an origin", NULL);
    }
    cs_verify_report_t rep = {0};
    cs_verify_opts_t vo = {.max_findings = 4};
    int vst = cs_verify(s, &vo, &rep, &err);
    cs_verify_report_fini(&rep);
    if (vst != CS_OK && vst != CS_ERR_VERIFY && vst != CS_ERR_NOMEM)
        fail("verifier could not run", err.msg);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        fail("open_memstream", NULL);
    cs_msccl_write_opts_t wo = {0};
    int wst = cs_msccl_write(s, &wo, f, NULL, &err);
    fclose(f);
    if (wst != CS_OK)
        fail("export failed", err.msg);
    cs_msccl_t *m2 = NULL;
    if (cs_msccl_parse(buf, len, "export", NULL, &m2, &err) != CS_OK)
        fail("export does not import", err.msg);
    for (int r = 0; r < m->nranks; r++)
        if (messages(s, r) != messages(m2->sched, r))
            fail("export changed the messages", NULL);
    cs_msccl_destroy(m2);
    free(buf);
    cs_msccl_destroy(m);
    return 0;
}
