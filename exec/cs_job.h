/*
 * cs_job.h - a live job: the processes of one collective run launched
 * together (mpirun, srun, or CS_RANK / CS_NRANKS, cs_boot.h), each a rank.
 * What `collstep run`, `validate` and `calibrate` share, for programs too:
 *
 *   open      cs_job_open: the bootstrap, this rank and the job's size
 *   where     cs_job_find_nodes: the node of every rank, from the hostname
 *             and network namespace of each (namespaces of one machine are
 *             nodes of an emulated cluster) or from a groups file; and how
 *             many ranks share this rank's machine (its kernel, by boot id:
 *             cs_job_machine_ranks), whether idle ranks should then yield
 *             their cores (cs_job_oversubscribed); the job's tiers
 *             (cs_job_dims: ranks per node x nodes)
 *   memory    cs_job_mem_available: MemAvailable, against which a caller
 *             refuses sizes whose buffers cannot fit before anything opens
 *   agree     cs_job_agree: every rank's exit code, the worst, the same on
 *             every rank (a step every rank takes alike, and whether rank 0
 *             met the failure too: it is the one that says it)
 *   connect   cs_job_connect: the transport, its peers' addresses
 *   close     cs_job_close
 *
 * Statuses are cs_status_t, with j->err filled ("rank 3: ..." where the
 * failure names a rank).  Exit codes are the caller's ints (collstep's:
 * 0, 1, 2, 3, 128 + signal); agreement takes the largest.
 */
#ifndef CS_JOB_H
#define CS_JOB_H

#include <stdint.h>

#include "cs_boot.h"
#include "cs_status.h"
#include "cs_transport.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the job starts and connects. */
typedef struct cs_job_config {
    const char *name;      /* log lines: "collstep NAME: ..." (e.g. "validate") */
    const char *boot;      /* "pmix", "env" or NULL (auto) */
    const char *transport; /* cs_tp_open's name: "ofi", "tcp", "shm" */
    const char *provider;  /* libfabric provider (ofi), "native" for shm */
    const char *iface;     /* the address tcp binds to */
    const char *wait;      /* "auto", "spin" or "yield": cs_job_oversubscribed */
    double timeout;        /* seconds without progress before giving up */
} cs_job_config_t;

typedef struct cs_job_node {
    char name[64];  /* hostname (told apart by "#N" where namespaces share it) */
    uint64_t netns; /* network namespace inode (0 from a groups file) */
} cs_job_node_t;

typedef struct cs_job {
    cs_job_config_t cfg;
    cs_boot_t *boot;
    cs_tp_t *tp;           /* after cs_job_connect */
    int rank, nranks;
    int nnodes;            /* cs_job_find_nodes: */
    int *node_of;          /* rank -> node, nodes numbered by their first rank */
    int *first, *count;    /* node -> first rank, ranks */
    cs_job_node_t *nodes;  /* node -> name */
    int machine_ranks;     /* ranks on this rank's machine (kernel), any node */
    int oversubscribed;    /* engines' waiting policy: 1 yield when idle */
    cs_err_t err;
} cs_job_t;

/* Zero j, keep a copy of *cfg (its strings must outlive j) and open the
 * bootstrap: rank and nranks.  A status with j->err (CS_ERR_NOTFOUND: no
 * launcher and no CS_RANK; CS_ERR_INTERRUPTED ...). */
int cs_job_open(cs_job_t *j, const cs_job_config_t *cfg);

/* Where every rank is (every rank calls it): groups NULL, from each rank's
 * hostname and network namespace; else the file `groups`, whose line r
 * (blank lines and # comments skipped) names rank r's node.  CS_OK;
 * CS_ERR_INVAL on every rank when a rank could not read its line, j->err
 * saying why on that rank only ("--groups FILE: cannot open it", "...:
 * fewer lines than ranks"), empty on the others; or a bootstrap failure.
 * Once per job: a second call is CS_ERR_INVAL (nothing changes). */
int cs_job_find_nodes(cs_job_t *j, const char *groups);

/* Every rank's exit code `code`: *worst the largest (the same on every
 * rank), *rank0 rank 0's (may be NULL).  A status (the bootstrap failed:
 * j->err). */
int cs_job_agree(cs_job_t *j, int code, int *worst, int *rank0);

/* The same on a bootstrap alone (a caller without a cs_job_t). */
int cs_job_agree_boot(cs_boot_t *b, int code, int *worst, int *rank0, cs_err_t *err);

/* The job's tiers after cs_job_find_nodes: dims = {ranks per node, nodes}
 * and *ndims 2 when there are several nodes of several ranks each, every
 * node holding consecutive ranks; *ndims 0 otherwise. */
void cs_job_dims(const cs_job_t *j, int dims[2], int *ndims);

/* Open the transport (j->cfg) and exchange the peers' addresses; a status. */
int cs_job_connect(cs_job_t *j);

/* Close the transport and the bootstrap, free the node tables (j may be
 * closed twice). */
void cs_job_close(cs_job_t *j);

/* How many ranks of the job run on this rank's machine (its kernel, known
 * by its boot id: network namespaces of one machine share it; the hostname
 * where there is none), over the bootstrap (every rank calls it): CS_OK
 * with *ranks >= 1 and here[r] = 1 for each rank r on it (here: NULL, or
 * one entry per rank), or a status with err filled. */
int cs_job_machine_ranks(cs_boot_t *b, int *ranks, unsigned char *here, cs_err_t *err);

/* Whether idle ranks should yield their core (the engines'
 * oversubscribed): wait "yield" always, "spin" never, "auto" when
 * `machine_ranks` exceeds the machine's online cores.  Logged at
 * CS_LOG=info ("collstep NAME: N ranks on this machine, C cores, --wait
 * W: idle ranks spin|yield"). */
int cs_job_oversubscribed(const char *name, const char *wait, int machine_ranks);

/* MemAvailable of /proc/meminfo in bytes (0: unknown). */
uint64_t cs_job_mem_available(void);

#ifdef __cplusplus
}
#endif

#endif /* CS_JOB_H */
