/*
 * cs_boot.h - out-of-band bootstrap of a live run: who am I, how many are
 * we, and small collectives (allgather, barrier) to exchange transport
 * addresses and check that every rank runs the same thing.
 *
 * Two implementations behind one handle:
 *   pmix  chosen when PMIX_RANK and PMIX_NAMESPACE are in the environment
 *         (mpirun, srun --mpi=pmix): Put / Commit / Fence(collect) / Get.
 *   env   RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT: rank 0 listens on
 *         MASTER_ADDR:MASTER_PORT, every other rank connects (retrying
 *         until the timeout) and keeps its connection; collectives are a
 *         gather to rank 0 and a broadcast back over these sockets.
 * The environment is read once, in cs_boot_open.
 *
 * Every call is blocking and bounded by the timeout given at open; a rank
 * that vanishes makes the others fail with CS_ERR_PEER / CS_ERR_TIMEOUT and
 * a message naming it.  Collectives must be called by all ranks in the same
 * order with the same lengths.
 *
 * Interrupts (cs_intr.h): every wait looks at the flag at least every
 * 50 ms and fails with CS_ERR_INTERRUPTED; the peers of an interrupted rank
 * fail with CS_ERR_PEER and "rank R was interrupted (SIGINT)" (env: a
 * LEAVE message; both: what the transport given to cs_boot_connect heard,
 * which the waits keep polling).
 */
#ifndef CS_BOOT_H
#define CS_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "cs_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cs_boot cs_boot_t;

typedef struct cs_boot_config {
    double timeout_s; /* bound of every blocking call (<= 0: 60 s) */
    const char *force; /* NULL (auto), "pmix" or "env" */
} cs_boot_config_t;

/* Returns a cs_status_t; *out is written only on success.  CS_ERR_NOTFOUND
 * when neither PMIx nor the RANK/WORLD_SIZE convention is present. */
int cs_boot_open(const cs_boot_config_t *cfg, cs_boot_t **out, cs_err_t *err);
void cs_boot_close(cs_boot_t *b); /* NULL is fine */

int cs_boot_rank(const cs_boot_t *b);
int cs_boot_size(const cs_boot_t *b);
const char *cs_boot_kind(const cs_boot_t *b); /* "pmix" or "env" */

/* all[r*len .. (r+1)*len) := rank r's `mine` (len bytes, same on all). */
int cs_boot_allgather(cs_boot_t *b, const void *mine, size_t len, void *all, cs_err_t *err);
int cs_boot_barrier(cs_boot_t *b, cs_err_t *err);

/* Exchange a digest of what this rank is about to run (schedule digest)
 * and a one-line description of its arguments; CS_ERR_MISMATCH with a
 * message naming the first rank that differs from rank 0 (and both
 * descriptions) when they are not all equal.  Same result on every rank. */
int cs_boot_check_same(cs_boot_t *b, uint64_t digest, const char *args, cs_err_t *err);

/* Every rank contributes its status `st`; CS_OK everywhere only when all
 * are CS_OK, else on every rank the first failing rank is named ("WHAT
 * failed on rank R (reason)"); its own message stays on its own stderr. */
int cs_boot_agree(cs_boot_t *b, int st, const char *what, cs_err_t *err);

/* Make the ranks of a transport reachable: allgather every rank's address
 * blob (tp->ops->get_addr) and insert them all.  `tp` may be NULL when
 * opening it failed on this rank with `open_st`: the rank still takes part,
 * so every rank fails naming it instead of hanging. */
struct cs_tp;
int cs_boot_connect(cs_boot_t *b, struct cs_tp *tp, int open_st, cs_err_t *err);

/* ---- implementation interface (cs_boot.c dispatches) ------------------ */
typedef struct cs__boot_ops {
    size_t size;
    const char *name;
    int (*allgather)(cs_boot_t *b, const void *mine, size_t len, void *all, cs_err_t *err);
    int (*barrier)(cs_boot_t *b, cs_err_t *err);
    void (*close)(cs_boot_t *b);
} cs__boot_ops_t;

struct cs_boot {
    const cs__boot_ops_t *ops;
    int rank, size;
    double timeout_s;
    struct cs_tp *tp; /* from cs_boot_connect: see cs__boot_heard */
};

/* While a bootstrap call waits: make progress on the transport connected
 * (poll with max 0: it reads what the peers sent, a LEAVE among it, and
 * looks at their liveness; nothing is handed back) and say whether a peer
 * is known to have been interrupted (cs_intr_peer).  The transport must
 * stay open until the last bootstrap collective (cs_boot_close may follow
 * its close). */
int cs__boot_heard(cs_boot_t *b);

int cs__boot_pmix_open(const cs_boot_config_t *cfg, cs_boot_t **out, cs_err_t *err);
int cs__boot_env_open(const cs_boot_config_t *cfg, cs_boot_t **out, cs_err_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CS_BOOT_H */
