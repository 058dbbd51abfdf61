/*
 * cs_boot.c - bootstrap selection and the collectives shared by all
 * bootstraps (the "same schedule, same arguments" check, status agreement,
 * transport address exchange).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_env.h"
#include "cs_boot.h"
#include "cs_intr.h"
#include "cs_transport.h"

#define BOOT_TIMEOUT_S 60.0 /* waiting for the other ranks when the caller sets no
                               limit: a launcher starts them within seconds; a minute
                               covers a busy node's start-up without hanging for ever */

int cs_boot_open(const cs_boot_config_t *cfg, cs_boot_t **out, cs_err_t *err)
{
    cs_boot_config_t c = *cfg;
    if (c.timeout_s <= 0)
        c.timeout_s = BOOT_TIMEOUT_S;
    const char *force = c.force;
    if (force && strcmp(force, "pmix") == 0)
        return cs__boot_pmix_open(&c, out, err);
    if (force && strcmp(force, "env") == 0)
        return cs__boot_env_open(&c, out, err);
    if (force && *force)
        return cs_err_set(err, CS_ERR_INVAL, "unknown bootstrap '%s' (pmix, env)", force);
    const char *pr = getenv("PMIX_RANK"), *pn = getenv("PMIX_NAMESPACE");
    if (pr && *pr && pn && *pn)
        return cs__boot_pmix_open(&c, out, err);
    if (cs_env_get("RANK") && cs_env_get("WORLD_SIZE"))
        return cs__boot_env_open(&c, out, err);
    return cs_err_set(err, CS_ERR_NOTFOUND,
                      "no launcher found: start under mpirun / srun --mpi=pmix, or set RANK, "
                      "WORLD_SIZE, MASTER_ADDR and MASTER_PORT");
}

void cs_boot_close(cs_boot_t *b)
{
    if (b)
        b->ops->close(b);
}

int cs_boot_rank(const cs_boot_t *b)
{
    return b->rank;
}

int cs_boot_size(const cs_boot_t *b)
{
    return b->size;
}

const char *cs_boot_kind(const cs_boot_t *b)
{
    return b->ops->name;
}

int cs_boot_allgather(cs_boot_t *b, const void *mine, size_t len, void *all, cs_err_t *err)
{
    return b->ops->allgather(b, mine, len, all, err);
}

int cs_boot_barrier(cs_boot_t *b, cs_err_t *err)
{
    return b->ops->barrier(b, err);
}

#define ARGS_MAX 400 /* bytes of the arguments compared (cs_boot_check_same): a
                        command line of collstep run fits; a longer one is compared
                        in its first ARGS_MAX - 1 bytes */

typedef struct same_rec {
    uint64_t digest;
    char args[ARGS_MAX];
} same_rec_t;

int cs_boot_check_same(cs_boot_t *b, uint64_t digest, const char *args, cs_err_t *err)
{
    same_rec_t mine;
    memset(&mine, 0, sizeof(mine));
    mine.digest = digest;
    snprintf(mine.args, sizeof(mine.args), "%s", args ? args : "");
    same_rec_t *all = calloc((size_t)b->size, sizeof(*all));
    if (!all)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    int st = cs_boot_allgather(b, &mine, sizeof(mine), all, err);
    if (st == CS_OK) {
        for (int r = 1; r < b->size; r++) {
            if (strcmp(all[r].args, all[0].args) != 0) {
                st = cs_err_set(err, CS_ERR_MISMATCH,
                                "rank %d was started with different arguments than rank 0: "
                                "rank 0 has '%s', rank %d has '%s'",
                                r, all[0].args, r, all[r].args);
                break;
            }
            if (all[r].digest != all[0].digest) {
                st = cs_err_set(err, CS_ERR_MISMATCH,
                                "rank %d built a different schedule than rank 0 (digest "
                                "%016llx vs %016llx)",
                                r, (unsigned long long)all[r].digest,
                                (unsigned long long)all[0].digest);
                break;
            }
        }
    }
    free(all);
    return st;
}

int cs_boot_agree(cs_boot_t *b, int st, const char *what, cs_err_t *err)
{
    int32_t mine = st, *all = calloc((size_t)b->size, sizeof(*all));
    if (!all)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    int rc = cs_boot_allgather(b, &mine, sizeof(mine), all, err);
    for (int r = 0; rc == CS_OK && r < b->size; r++)
        if (all[r] != CS_OK)
            rc = cs_err_set(err, all[r], "%s failed on rank %d (%s)", what, r,
                            cs_status_str(all[r]));
    free(all);
    return rc;
}

typedef struct addr_rec {
    int32_t st;
    uint32_t len;
    char blob[CS_TP_ADDR_MAX];
} addr_rec_t;

int cs_boot_connect(cs_boot_t *b, cs_tp_t *tp, int open_st, cs_err_t *err)
{
    int n = b->size, st = tp ? open_st : (open_st != CS_OK ? open_st : CS_ERR_INVAL);
    addr_rec_t mine;
    memset(&mine, 0, sizeof(mine));
    size_t len = sizeof(mine.blob);
    if (st == CS_OK)
        st = tp->ops->get_addr(tp, mine.blob, &len);
    mine.st = st;
    mine.len = st == CS_OK ? (uint32_t)len : 0;
    addr_rec_t *all = calloc((size_t)n, sizeof(mine));
    size_t *lens = calloc((size_t)n, sizeof(size_t));
    char *blobs = calloc((size_t)n, CS_TP_ADDR_MAX);
    if (!all || !lens || !blobs) {
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
        goto out;
    }
    int rc = cs_boot_allgather(b, &mine, sizeof(mine), all, err);
    if (st != CS_OK || rc != CS_OK) {
        st = st != CS_OK ? st : rc;
        goto out;
    }
    for (int r = 0; r < n; r++) {
        if (all[r].st != CS_OK) {
            st = cs_err_set(err, all[r].st, "opening the transport failed on rank %d (%s)", r,
                            cs_status_str(all[r].st));
            goto out;
        }
        lens[r] = all[r].len;
        memcpy(blobs + (size_t)r * CS_TP_ADDR_MAX, all[r].blob, all[r].len);
    }
    st = tp->ops->insert_addrs(tp, blobs, CS_TP_ADDR_MAX, lens);
    if (st != CS_OK)
        cs_err_set(err, st, "inserting peer addresses failed: %s",
                   tp->why[0] ? tp->why : cs_status_str(st));
    else
        b->tp = tp;
out:
    free(all);
    free(lens);
    free(blobs);
    return st;
}

int cs__boot_heard(cs_boot_t *b)
{
    if (b->tp) {
        cs_tp_req_t *none[1];
        b->tp->ops->poll(b->tp, none, 0);
    }
    return cs_intr_peer(NULL) >= 0;
}
