/*
 * cmd_plan_dist.c - `collstep plan` over the ranks of a launcher (mpirun,
 * srun --mpi=pmix: PMIx; or RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), on
 * the bootstrap `collstep run` uses (exec/cs_boot.h): every rank checks
 * that the others run the same arguments, plans its share of the
 * simulations (a part, planner/cs_planner.h), and rank 0 gathers the parts
 * and merges them into the plan one process makes.  A rank that fails or
 * dies makes the others fail naming it (cs_boot_agree, the bootstrap's
 * lost connections).  Without exec/ (no PMIx) a plan is one process's.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cs_env.h"
#include "cs_hash.h"
#include "cs_planner.h"
#ifdef CS_HAVE_EXEC
#include "cs_boot.h"
#include "cs_intr.h"
#endif

struct cs_cli_plan_dist {
#ifdef CS_HAVE_EXEC
    cs_boot_t *boot;
#endif
    int rank, size;
};

#ifdef CS_HAVE_EXEC
static int boot_fail(const cs_err_t *err)
{
    fprintf(stderr, "collstep plan: %s\n", err->msg);
    return cs_cli_exit_code(err->code);
}
#endif

int cs_cli_plan_dist_open(double bound_s, int argc, char **argv, cs_cli_plan_dist_t **out,
                          int *rank, int *size)
{
    *out = NULL;
#ifdef CS_HAVE_EXEC
    const char *pr = getenv("PMIX_RANK"), *pn = getenv("PMIX_NAMESPACE");
    if (!(pr && *pr && pn && *pn) && !(cs_env_get("RANK") && cs_env_get("WORLD_SIZE")))
        return CS_EXIT_OK;
    cs_cli_plan_dist_t *d = calloc(1, sizeof(*d));
    if (!d) {
        fprintf(stderr, "collstep plan: out of memory\n");
        return CS_EXIT_RUNTIME;
    }
    cs_intr_install();
    cs_err_t err;
    cs_err_clear(&err);
    cs_boot_config_t bc = {bound_s, NULL};
    if (cs_boot_open(&bc, &d->boot, &err) != CS_OK) {
        free(d);
        fprintf(stderr, "collstep plan: %s\n", err.msg);
        return cs_cli_exit_code(err.code);
    }
    d->rank = cs_boot_rank(d->boot);
    d->size = cs_boot_size(d->boot);
    if (d->size < 2) {
        cs_cli_plan_dist_close(d);
        return CS_EXIT_OK;
    }
    /* the same arguments everywhere (the options decide the plan) */
    char args[1024];
    size_t n = 0;
    uint64_t h = CS_FNV64_OFFSET;
    args[0] = '\0';
    for (int i = 1; i < argc; i++) {
        h = cs_hash_mix64(h ^ cs_hash_str(argv[i]));
        if (n < sizeof(args))
            n += (size_t)snprintf(args + n, sizeof(args) - n, "%s%s", i > 1 ? " " : "", argv[i]);
    }
    if (cs_boot_check_same(d->boot, h, args, &err) != CS_OK) {
        int rc = boot_fail(&err);
        cs_cli_plan_dist_close(d);
        return rc;
    }
    *rank = d->rank;
    *size = d->size;
    *out = d;
    return CS_EXIT_OK;
#else
    (void)bound_s, (void)argc, (void)argv, (void)rank, (void)size;
    return CS_EXIT_OK;
#endif
}

void cs_cli_plan_dist_close(cs_cli_plan_dist_t *d)
{
    if (!d)
        return;
#ifdef CS_HAVE_EXEC
    cs_boot_close(d->boot);
#endif
    free(d);
}

#ifdef CS_HAVE_EXEC
/* "collstep plan: rank R: why" (the bootstrap's messages name the rank
 * already). */
static void say(const cs_cli_plan_dist_t *d, const cs_err_t *err)
{
    if (strncmp(err->msg, "rank ", 5) == 0)
        fprintf(stderr, "collstep plan: %s\n", err->msg);
    else
        fprintf(stderr, "collstep plan: rank %d: %s\n", d->rank, err->msg);
}

/* A part as bytes (whole: with the analysis); *buf to free. */
static int part_bytes(const cs_planner_t *p, int whole, char **buf, size_t *len, cs_err_t *err)
{
    *buf = NULL, *len = 0;
    FILE *m = open_memstream(buf, len);
    if (!m)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    int st = cs_planner_part_write(p, whole, m, err);
    if (fclose(m) != 0 && st == CS_OK)
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    return st;
}

static int part_of(const char *buf, size_t len, const char *name, cs_planner_t **out,
                   cs_err_t *err)
{
    FILE *m = fmemopen((void *)(uintptr_t)buf, len, "rb");
    if (!m)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    int st = cs_planner_part_read(m, name, out, err);
    fclose(m);
    return st;
}

/* Rank 0: its own whole part and the others' gathered, merged. */
static int merge_all(const cs_cli_plan_dist_t *d, const cs_planner_t *p, const char *all,
                     const uint64_t *lens, size_t max, cs_planner_t **whole, cs_err_t *err)
{
    cs_planner_t **parts = calloc((size_t)d->size, sizeof(*parts));
    char (*names)[32] = calloc((size_t)d->size, sizeof(*names));
    const char **nv = calloc((size_t)d->size, sizeof(*nv));
    char *mine = NULL;
    size_t mlen = 0;
    int st = parts && names && nv ? part_bytes(p, 1, &mine, &mlen, err)
                                  : cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    for (int r = 0; r < d->size && st == CS_OK; r++) {
        snprintf(names[r], sizeof(names[r]), "the part of rank %d", r);
        nv[r] = names[r];
        st = r == 0 ? part_of(mine, mlen, nv[r], &parts[r], err)
                    : part_of(all + (size_t)r * max, (size_t)lens[r], nv[r], &parts[r], err);
    }
    if (st == CS_OK)
        st = cs_planner_merge(parts, nv, d->size, whole, err);
    for (int r = 0; parts && r < d->size; r++)
        cs_planner_free(parts[r]);
    free(parts), free(names), free(nv), free(mine);
    return st;
}
#endif

int cs_cli_plan_dist_gather(cs_cli_plan_dist_t *d, int st, const cs_planner_t *p,
                            cs_planner_t **whole)
{
    *whole = NULL;
#ifdef CS_HAVE_EXEC
    cs_err_t err;
    cs_err_clear(&err);
    /* every rank planned, or the first that did not is named */
    int ast = cs_boot_agree(d->boot, st, "planning", &err);
    if (ast != CS_OK) {
        if (st == CS_OK || d->rank == 0)
            say(d, &err);
        return cs_cli_exit_code(st != CS_OK ? st : ast);
    }
    char *buf = NULL, *pad = NULL, *all = NULL;
    size_t len = 0, max = 0;
    uint64_t mine, *lens = calloc((size_t)d->size, sizeof(*lens));
    int rc = lens ? part_bytes(p, 0, &buf, &len, &err)
                  : cs_err_set(&err, CS_ERR_NOMEM, "out of memory");
    /* the parts' lengths, then the parts padded to the longest */
    mine = rc == CS_OK ? (uint64_t)len : 0;
    int gst = lens ? cs_boot_allgather(d->boot, &mine, sizeof(mine), lens, &err) : rc;
    if (rc == CS_OK)
        rc = gst;
    for (int r = 0; rc == CS_OK && r < d->size; r++)
        max = lens[r] > max ? (size_t)lens[r] : max;
    if (rc == CS_OK && (!(pad = calloc(1, max)) || !(all = malloc(max * (size_t)d->size))))
        rc = cs_err_set(&err, CS_ERR_NOMEM, "out of memory");
    for (int r = 0; rc == CS_OK && r < d->size; r++)
        if (lens[r] == 0)
            rc = cs_err_set(&err, CS_ERR_NOMEM, "rank %d could not write its part", r);
    if (rc == CS_OK) {
        memcpy(pad, buf, len);
        rc = cs_boot_allgather(d->boot, pad, max, all, &err);
    }
    if (rc == CS_OK && d->rank == 0)
        rc = merge_all(d, p, all, lens, max, whole, &err);
    free(buf), free(pad), free(all), free(lens);
    if (rc != CS_OK) {
        say(d, &err);
        return cs_cli_exit_code(rc);
    }
    return CS_EXIT_OK;
#else
    (void)d, (void)st, (void)p;
    return CS_EXIT_RUNTIME;
#endif
}
