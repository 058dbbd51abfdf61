/*
 * libFuzzer harness for the nccl-tests log reader (core/cs_nccl_log.h; run
 * with tests/fuzz/run_nccl_log.sh).
 *
 * For any input: cs_nccl_log_parse must not crash, leak or hang (ASan, UBSan
 * and libFuzzer watch that).  A failure carries CS_ERR_PARSE or
 * CS_ERR_NOMEM and a printable message starting "fuzz:LINE:"; a success has
 * at least one table, each with consistent counts: its devices' ranks
 * distinct and below the rank count, node numbers below the node count, rows
 * with a line inside the table.  Any violation aborts with the reason.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_nccl_log.h"

static void fail(const char *why, const char *detail)
{
    fprintf(stderr, "fuzz_nccl_log: %s: %s\n", why, detail ? detail : "");
    abort();
}

static void check_error(const cs_err_t *err)
{
    if (err->code != CS_ERR_PARSE && err->code != CS_ERR_NOMEM)
        fail("unexpected status", cs_status_name(err->code));
    if (strncmp(err->msg, "fuzz:", 5) != 0 || err->msg[5] < '0' || err->msg[5] > '9')
        fail("message does not start with NAME:LINE", err->msg);
    for (const char *p = err->msg; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
            fail("message has a non-printable byte", err->msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cs_err_t err = {0};
    cs_nccl_log_t *log = NULL;
    if (cs_nccl_log_parse((const char *)data, size, "fuzz", &log, &err) != CS_OK) {
        if (log != NULL)
            fail("a failure returned a log", NULL);
        check_error(&err);
        return 0;
    }
    if (log->ntables < 1)
        fail("a success without a table", NULL);
    for (int i = 0; i < log->ntables; i++) {
        const cs_nccl_run_t *t = &log->tables[i];
        if (t->line > t->end_line)
            fail("a table ends before it starts", NULL);
        for (int d = 0; d < t->ndevs; d++) {
            if (t->devs[d].rank < 0 || t->devs[d].rank >= t->ndevs)
                fail("a rank out of range", NULL);
            if (t->devs[d].node < 0 || t->devs[d].node >= t->nnodes)
                fail("a node out of range", NULL);
            for (int e = 0; e < d; e++)
                if (t->devs[e].rank == t->devs[d].rank)
                    fail("a rank listed twice", NULL);
        }
        for (int r = 0; r < t->nrows; r++)
            if (t->rows[r].line < t->line || t->rows[r].line > t->end_line || !t->rows[r].oop.present)
                fail("a row outside its table", NULL);
        if ((unsigned)t->coll > CS_NCCL_UNKNOWN || !t->coll_from)
            fail("no collective", NULL);
    }
    cs_nccl_log_destroy(log);
    return 0;
}
