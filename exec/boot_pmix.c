/*
 * boot_pmix.c - bootstrap through PMIx (mpirun, srun --mpi=pmix).
 *
 * allgather: every rank puts its bytes under a fresh key "cs.ag.<n>"
 * (global scope), commits, fences with collect-data, then gets every
 * rank's value.  barrier: a fence without data.  Fences carry PMIX_TIMEOUT
 * so a rank that never arrives bounds the wait; a rank that dies is
 * usually reported by the launcher, which then ends the job.
 *
 * Interrupts (cs_intr.h).  Fences are non-blocking (PMIx_Fence_nb) and
 * waited for in slices that look at the interrupt flag, so a signal ends a
 * fence within a millisecond or so (the fence itself is abandoned: its
 * callback data is never freed), and a fence also ends when this process
 * learnt from its transport that a peer was interrupted (cs_intr_peer).
 * The peers of an interrupted rank waiting in a fence are not told through
 * PMIx: an event of our own (PMIx_Notify_event) deadlocks Open MPI 4.1's
 * mpirun in its PMIx server at the end of the job; the launcher ends the
 * job when the interrupted rank exits with a failure, and ranks in the
 * engine hear it from the transport.
 */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pmix.h>

#include "cs_boot.h"
#include "cs_intr.h"
#include "cs_log.h"
#include "cs_transport.h"

/* A fence waits spinning first (PMix answers within tens of microseconds
 * here), then sleeping: */
#define PMIX_SPINS 2000        /* sched_yield() rounds before sleeping */
#define PMIX_NAP_NS 200000     /* then naps of 0.2 ms */
#define PMIX_HEAR_EVERY 64     /* rounds between looks at the transport (LEAVEs) while
                                  spinning; every nap once sleeping */
/* A fence that failed because a rank left: the transport may hear why
 * (its LEAVE) a moment later: look PMIX_WHY_TRIES times, PMIX_WHY_NAP_NS
 * apart (50 ms in all), before reporting PMIx's bare error. */
#define PMIX_WHY_TRIES 50
#define PMIX_WHY_NAP_NS 1000000

typedef struct boot_pmix {
    cs_boot_t base; /* first member */
    pmix_proc_t me;
    unsigned seq;
} boot_pmix_t;

/* The state of one non-blocking fence (heap: an abandoned fence keeps it). */
typedef struct fence_wait {
    volatile int done;
    volatile pmix_status_t status;
} fence_wait_t;

static void fence_done(pmix_status_t status, void *cbdata)
{
    fence_wait_t *w = cbdata;
    w->status = status;
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
}

static int pmix_status_to_cs(pmix_status_t rc)
{
    switch (rc) {
    case PMIX_SUCCESS: return CS_OK;
    case PMIX_ERR_TIMEOUT: return CS_ERR_TIMEOUT;
    case PMIX_ERR_NOMEM: return CS_ERR_NOMEM;
    case PMIX_ERR_NOT_FOUND: return CS_ERR_NOTFOUND;
    case PMIX_ERR_UNREACH: case PMIX_ERR_LOST_CONNECTION: case PMIX_ERR_PROC_ABORTED:
    case PMIX_ERR_PARTIAL_SUCCESS: /* a rank left during a fence */
        return CS_ERR_PEER;
    default: return CS_ERR_TRANSPORT;
    }
}

static int fence(boot_pmix_t *p, int collect, cs_err_t *err)
{
    pmix_info_t info[2];
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_CONSTRUCT(&info[1]);
    bool yes = collect ? true : false;
    int to = (int)ceil(p->base.timeout_s); /* PMIx takes whole seconds */
    PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &to, PMIX_INT);
    pmix_proc_t all;
    PMIX_PROC_CONSTRUCT(&all);
    PMIX_LOAD_PROCID(&all, p->me.nspace, PMIX_RANK_WILDCARD);
    fence_wait_t *w = calloc(1, sizeof(*w));
    if (!w)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    pmix_status_t rc = PMIx_Fence_nb(&all, 1, info, 2, fence_done, w);
    int st = CS_OK;
    /* spin a little (fences take tens of microseconds here), then sleep in
     * slices; both look at the interrupt flag and at the peers' LEAVEs */
    for (unsigned i = 0; rc == PMIX_SUCCESS && !__atomic_load_n(&w->done, __ATOMIC_ACQUIRE);
         i++) {
        if (i % PMIX_HEAR_EVERY == 0 || i >= PMIX_SPINS)
            cs__boot_heard(&p->base);
        int sig = 0, who = cs_intr_peer(&sig);
        if (cs_intr_pending()) {
            st = cs_err_set(err, CS_ERR_INTERRUPTED, "rank %d: interrupted (%s)", p->base.rank,
                            cs_intr_signame(cs_intr_pending()));
            break;
        }
        if (who >= 0) {
            char why[CS_TP_LEFT_MAX];
            cs_tp_left_text(who, sig, why, sizeof(why));
            st = cs_err_set(err, CS_ERR_PEER, "rank %d: %s", p->base.rank, why);
            break;
        }
        if (i < PMIX_SPINS) {
            sched_yield();
        } else {
            struct timespec ts = {0, PMIX_NAP_NS};
            nanosleep(&ts, NULL);
        }
    }
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (st != CS_OK)
        return st; /* w stays: the fence may still call back */
    if (rc == PMIX_SUCCESS)
        rc = w->status;
    free(w);
    if (rc != PMIX_SUCCESS) { /* a rank left: did the transport hear why? */
        int sig = 0, who = -1;
        for (int k = 0; k < PMIX_WHY_TRIES && who < 0; k++) {
            struct timespec ts = {0, PMIX_WHY_NAP_NS};
            if (k)
                nanosleep(&ts, NULL);
            cs__boot_heard(&p->base);
            who = cs_intr_peer(&sig);
        }
        char why[CS_TP_LEFT_MAX];
        if (who >= 0) {
            cs_tp_left_text(who, sig, why, sizeof(why));
            return cs_err_set(err, CS_ERR_PEER, "rank %d: %s", p->base.rank, why);
        }
    }
    if (rc != PMIX_SUCCESS)
        return cs_err_set(err, pmix_status_to_cs(rc), "rank %d: PMIx fence failed: %s",
                          p->base.rank, PMIx_Error_string(rc));
    return CS_OK;
}

static int pmix_allgather(cs_boot_t *b, const void *mine, size_t len, void *all, cs_err_t *err)
{
    boot_pmix_t *p = (boot_pmix_t *)b;
    char key[PMIX_MAX_KEYLEN + 1];
    snprintf(key, sizeof(key), "cs.ag.%u", p->seq++);
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)mine;
    v.data.bo.size = len;
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS)
        return cs_err_set(err, pmix_status_to_cs(rc), "rank %d: PMIx put failed: %s", b->rank,
                          PMIx_Error_string(rc));
    int st = fence(p, 1, err);
    if (st != CS_OK)
        return st;
    for (int r = 0; r < b->size; r++) {
        pmix_proc_t who;
        PMIX_PROC_CONSTRUCT(&who);
        PMIX_LOAD_PROCID(&who, p->me.nspace, (pmix_rank_t)r);
        pmix_value_t *got = NULL;
        rc = PMIx_Get(&who, key, NULL, 0, &got);
        if (rc != PMIX_SUCCESS || !got || got->type != PMIX_BYTE_OBJECT ||
            got->data.bo.size != len) {
            if (got)
                PMIX_VALUE_RELEASE(got);
            return cs_err_set(err, rc != PMIX_SUCCESS ? pmix_status_to_cs(rc) : CS_ERR_MISMATCH,
                              "rank %d: could not get the data of rank %d from PMIx (%s)",
                              b->rank, r, PMIx_Error_string(rc));
        }
        memcpy((char *)all + (size_t)r * len, got->data.bo.bytes, len);
        PMIX_VALUE_RELEASE(got);
    }
    return CS_OK;
}

static int pmix_barrier(cs_boot_t *b, cs_err_t *err)
{
    return fence((boot_pmix_t *)b, 0, err);
}

static void pmix_close(cs_boot_t *b)
{
    if (!b)
        return;
    PMIx_Finalize(NULL, 0);
    free(b);
}

static const cs__boot_ops_t pmix_ops = {
    .size = sizeof(cs__boot_ops_t),
    .name = "pmix",
    .allgather = pmix_allgather,
    .barrier = pmix_barrier,
    .close = pmix_close,
};

int cs__boot_pmix_open(const cs_boot_config_t *cfg, cs_boot_t **out, cs_err_t *err)
{
    boot_pmix_t *p = calloc(1, sizeof(*p));
    if (!p)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    pmix_status_t rc = PMIx_Init(&p->me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        free(p);
        return cs_err_set(err, pmix_status_to_cs(rc),
                          "PMIx_Init failed (%s): not started by a PMIx launcher?",
                          PMIx_Error_string(rc));
    }
    pmix_proc_t job;
    PMIX_PROC_CONSTRUCT(&job);
    PMIX_LOAD_PROCID(&job, p->me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v);
    if (rc != PMIX_SUCCESS || !v) {
        PMIx_Finalize(NULL, 0);
        free(p);
        return cs_err_set(err, pmix_status_to_cs(rc), "PMIx: no job size (%s)",
                          PMIx_Error_string(rc));
    }
    uint32_t size = 0;
    if (v->type == PMIX_UINT32)
        size = v->data.uint32;
    else if (v->type == PMIX_INT)
        size = (uint32_t)v->data.integer;
    else if (v->type == PMIX_UINT64)
        size = (uint32_t)v->data.uint64;
    PMIX_VALUE_RELEASE(v);
    p->base.ops = &pmix_ops;
    p->base.rank = (int)p->me.rank;
    p->base.size = (int)size;
    p->base.timeout_s = cfg->timeout_s;
    CS_INFO("exec", "pmix bootstrap: rank %d of %d (namespace %s)", p->base.rank, p->base.size,
            p->me.nspace);
    *out = &p->base;
    return CS_OK;
}
