/*
 * cli_verify.c - the commands' verification of a schedule (gen --verify,
 * export, and the check before one is simulated or run), with a cache of
 * the schedules that verified, and the one way findings are printed (see
 * cli.h).
 *
 * Cache.  One empty-ish file per verified schedule, named by its digest
 * (cs_sched_digest: FNV-1a 64 over the canonical content) and collstep's
 * version, in $XDG_CACHE_HOME/collstep/verified (else
 * ~/.cache/collstep/verified).  Only "correct" is remembered; a cache that
 * cannot be read or written only costs a verification.  CS_VERIFY_CACHE=0
 * turns it off.  The cache only ever answers the implicit check of sim,
 * run and validate (CS_CLI_VERIFY_CACHED): verification the user asked for
 * always verifies, so it says what this collstep, under this environment
 * (CS_VERIFY_MAX_MEM), finds now.  Either records a success.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cs_env.h"
#include "cs_text.h"
#include "cs_verify.h"

/* The cache file of digest `d`, or 0 when there is no cache. */
static int cache_path(uint64_t d, char *buf, size_t len, int make_dirs)
{
    const char *off = cs_env_get("CS_VERIFY_CACHE");
    if (off && !strcmp(off, "0"))
        return 0;
    char dir[768];
    if (!cs_env_cache_dir("verified", dir, sizeof(dir), make_dirs))
        return 0;
    int n = snprintf(buf, len, "%s/%016llx-%s", dir, (unsigned long long)d, CS_VERSION);
    return n > 0 && (size_t)n < len;
}

static int cached(uint64_t d)
{
    char path[1024];
    return cache_path(d, path, sizeof(path), 0) && access(path, F_OK) == 0;
}

static void remember(const cs_sched_t *s, uint64_t d)
{
    char path[1024], tmp[1100];
    if (!cache_path(d, path, sizeof(path), 1))
        return;
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    fprintf(f, "verified by collstep %s: %s %s on %d ranks\n", CS_VERSION,
            cs_coll_name(s->desc.coll), s->algo[0] ? s->algo : "(schedule file)", s->desc.nranks);
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        unlink(tmp);
}

void cs_cli_print_findings_in(FILE *f, const char *prefix, const void *report,
                              const cs_sched_t *s, const char *path, int name_all)
{
    const cs_verify_report_t *rep = report;
    int rk[64];
    int64_t stp[64];
    unsigned long long line[64], col[64];
    uint32_t nloc = rep->n < 64 ? rep->n : 64;
    for (uint32_t i = 0; i < nloc; i++) {
        rk[i] = rep->findings[i].rank;
        stp[i] = rep->findings[i].step;
    }
    /* a schedule text: each finding about a step starts with its position */
    if (path == NULL || cs_sched_locate_file(path, nloc, rk, stp, line, col) != CS_OK)
        nloc = 0;
    for (uint32_t i = 0; i < rep->n; i++) {
        char origin[1200];
        if (i < nloc && line[i] > 0)
            fprintf(f, "%s%s:%llu:%llu: %s\n", prefix, path, line[i], col[i],
                    rep->findings[i].msg);
        else
            fprintf(f, "%s%s%s%s\n", prefix, nloc && name_all ? path : "",
                    nloc && name_all ? ": " : "", rep->findings[i].msg);
        if (cs_cli_step_origin(s, rep->findings[i].rank, rep->findings[i].step, origin,
                               sizeof(origin)))
            fprintf(f, "%s  (from %s)\n", prefix, origin);
        const char *d = rep->findings[i].detail;
        while (d && *d) {
            size_t l = strcspn(d, "\n");
            fprintf(f, "%s%.*s\n", prefix, (int)l, d);
            d += l + (d[l] == '\n');
        }
    }
    if (rep->total > rep->n) {
        unsigned long long more = (unsigned long long)(rep->total - rep->n);
        fprintf(f, "%s... and %llu more finding%s\n", prefix, more, more == 1 ? "" : "s");
    }
}

void cs_cli_print_findings(FILE *f, const char *prefix, const void *report, const cs_sched_t *s)
{
    cs_cli_print_findings_in(f, prefix, report, s, NULL, 0);
}

/* A schedule the verifier runs out of memory on is too large to verify: a
 * refusal (run without verifying), like one over its limits. */
static int too_large(int st)
{
    return st == CS_ERR_NOMEM ? CS_ERR_RANGE : st;
}

int cs_cli_verify(const char *cmd, const cs_sched_t *s, const char *name, cs_cli_verify_how_t how)
{
    uint64_t d = cs_sched_digest(s);
    if (how == CS_CLI_VERIFY_CACHED && cached(d))
        return CS_EXIT_OK;
    cs_verify_report_t rep = {0};
    cs_err_t err;
    cs_err_clear(&err);
    int st = cs_verify(s, NULL, &rep, &err);
    int rc = CS_EXIT_OK;
    if (!cmd) { /* quiet: the caller only needs the answer */
        rc = cs_cli_exit_code(too_large(st));
        if (st == CS_OK)
            remember(s, d);
    } else if (st == CS_ERR_VERIFY) {
        unsigned long long n = (unsigned long long)rep.total;
        fprintf(stderr, "collstep %s: schedule %s is incorrect (%llu finding%s; 'collstep verify' "
                        "explains more):\n",
                cmd, name, n, n == 1 ? "" : "s");
        char prefix[64];
        snprintf(prefix, sizeof(prefix), "collstep %s:   ", cmd);
        cs_cli_print_findings_in(stderr, prefix, &rep, s, name, 0);
        rc = CS_EXIT_FAIL;
    } else if (st != CS_OK) {
        fprintf(stderr, "collstep %s: %s: cannot verify: %s; run without verifying: --no-verify\n",
                cmd, name, err.msg[0] ? err.msg : cs_status_str(st));
        rc = cs_cli_exit_code(too_large(st));
    } else {
        remember(s, d);
    }
    cs_verify_report_fini(&rep);
    return rc;
}
