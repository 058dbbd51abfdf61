/*
 * cs_sim_dag_int.h - internals of the activity-DAG engine shared by
 * cs_sim_dag.c (ranks, matching, events, instances) and cs_sim_dag_sw.c
 * (switch operations).
 */
#ifndef CS_SIM_DAG_INT_H
#define CS_SIM_DAG_INT_H

#include <simgrid/semaphore.h>

#include "cs_sim_int.h"

extern uint32_t *cs__work_q, *cs__work_sq;
extern double *cs__work_post;

enum { X_P2P = 0, X_UP, X_DOWN };

/* A transfer in flight (the completion callback's data). */
typedef struct dag_xfer {
    struct dag_xfer *next; /* free list */
    uint32_t kind;
    int src, dst;          /* ranks (X_UP / X_DOWN: the member in both) */
    uint32_t sstep, dstep; /* local step indices */
    uint32_t k;            /* switch operation */
    double start;
} dag_xfer_t;

/* One channel direction: src's sends to dst on one channel. */
typedef struct dag_chan {
    int src, dst;
    uint32_t send;   /* the posted send waiting for its receive, CS__NONE32 */
    uint32_t rhead;  /* first posted receive not yet matched (if rcount) */
    uint32_t rcount; /* posted receives not yet matched */
    /* model nccl: the receiver's buffer of NCCL_STEPS steps (cs_sim_dag.c) */
    uint32_t used;   /* steps held by the message moving and those waiting */
    uint32_t moving; /* steps of the message moving, 0: none */
    uint32_t whead, wtail; /* messages arrived before their receive (D->wait), oldest first */
    double sbytes;   /* the posted send's bytes (restart included) */
} dag_chan_t;

/* Model nccl: a message that arrived before its receive was posted. */
typedef struct dag_wait {
    uint32_t next;      /* the channel's next, or the free list's */
    uint32_t ss;        /* the sender's step */
    uint32_t need;      /* buffer steps it holds */
    double arr, t0, t1; /* when its latency has passed, its transfer's start and end */
} dag_wait_t;

/* One switch operation, for the instance running. */
typedef struct dag_swop {
    uint32_t narr, nupd, nget, ndownd, dput;
    int down; /* its down transfers have begun */
    uint32_t qnext; /* a switch allreduce waiting for its group's ups: the next one */
    double t0, bytes, arrive, ready, work;
} dag_swop_t;

/* What the engine adds to a compiled program. */
typedef struct dag_prog {
    uint32_t *chan_of; /* per mailbox (global index): its channel, CS__NONE32 */
    dag_chan_t *chans;
    uint64_t nchans;
    /* switch operations: per op k its members' global ids as they arrive
     * (mem + off[k]) and the members waiting for their down transfer
     * (get + off[k]) */
    uint64_t *off, *mem, *get;
    dag_swop_t *sw;
    /* per switch group: switch allreduces (SHARP) send their members' parts
     * up one operation after the other, as a member's NIC sends in order:
     * the operation whose ups are under way (busy) and those waiting */
    unsigned char *g_busy;
    uint32_t *gq_head, *gq_tail, ngq;
    int ready;
} dag_prog_t;

typedef struct dag_rank {
    uint32_t qh, qt;     /* FIFO of issuable steps, in cs__work_q + base */
    uint32_t sqh, sqt;   /* sends waiting for a port, in cs__work_sq + base */
    uint32_t done, n;
    int inflight;
    double speed;        /* reduction bytes/s (0: free) */
    double stream_free;
    double *last;        /* restarts: per peer, when the last message to it ended */
} dag_rank_t;

typedef struct dag dag_t;
typedef void (*dag_fn)(dag_t *D, uint64_t arg);
/* A timer of this engine: fn(D, arg) at its date (through the pump). */
typedef struct dag_timer {
    dag_t *D;
    dag_fn fn;
} dag_timer_t;

struct dag {
    cs__drv_t *d;
    cs__run_t *run;
    const cs_sim_observer_t *obs;
    cs__inst_t I;
    dag_prog_t *dp;      /* per program */
    dag_prog_t *cur;     /* the running instance's */
    dag_rank_t *rk;      /* per rank */
    int P, inst;
    int sw_live;
    double *finish;
    dag_xfer_t *free_x;
    /* events of this instant, handled by the pump (see cs__dag_run) */
    struct dag_ev *ev;
    size_t nev, capev;
    int woken;           /* the pump has been released for them */
    uint64_t ntimers;    /* timers set and not yet fired */
    sg_sem_t sem;        /* releases the pump */
    dag_timer_t t_stream;
    dag_timer_t t_arrive; /* model nccl: a message's latency after its bytes */
    int eager;            /* the instance's messages are eager (cs_sim_dag.c) */
    double step_bytes;    /* eager: a buffer step's bytes (0: a message holds them all) */
    dag_wait_t *wait;     /* eager: messages waiting for their receive (a pool) */
    uint32_t nwait, capwait, wfree;
    void **chunks;
    size_t nchunks, capchunks;
    uint64_t nxfers, maxflight, flight;
    uint64_t nflush; /* the pump's turns */
};

typedef struct dag_ev {
    dag_fn fn;
    uint64_t arg;
} dag_ev_t;

static inline cs__op_t *op_of(dag_t *D, int r, uint32_t i)
{
    return &D->I.prog->ops[D->I.prog->base[r] + i];
}

static inline void push(dag_t *D, int r, uint32_t i)
{
    dag_rank_t *k = &D->rk[r];
    cs__work_q[D->I.prog->base[r] + k->qt++] = i;
}

static inline void release(dag_t *D, int r, uint32_t i)
{
    if (--op_of(D, r, i)->npend == 0)
        push(D, r, i);
}

/* A sleeper actor: sleeps `wait` seconds on its host, then fn(D, arg)
 * through the pump (counted in D->ntimers meanwhile). */
typedef struct dag_sleeper {
    dag_t *D;
    dag_fn fn;
    uint64_t arg;
    double wait;
} dag_sleeper_t;

/* cs_sim_dag.c */
void cs__dag_sleeper(int argc, char **argv);
void cs__dag_defer(dag_t *D, dag_fn fn, uint64_t arg);
int cs__dag_timer_set(dag_t *D, double date, dag_timer_t *t, uint64_t arg);
dag_xfer_t *cs__dag_xfer_new(dag_t *D);
void cs__dag_xfer_free(dag_t *D, dag_xfer_t *x);
void cs__dag_xfer_start(dag_t *D, dag_xfer_t *x, sg_host_t a, sg_host_t b, double bytes,
                        double rate);
void cs__dag_complete(dag_t *D, int r, uint32_t i);
void cs__dag_drain(dag_t *D, int r);
void cs__dag_check_end(dag_t *D);
/* cs_sim_dag_sw.c: switch operations (cs_sim_switch.c has the model) */
void cs__dag_issue_switch(dag_t *D, int r, uint32_t i);
void cs__dag_on_up(dag_t *D, dag_xfer_t *x);
void cs__dag_on_down(dag_t *D, dag_xfer_t *x);
void cs__dag_sw_down(dag_t *D, uint64_t k);

#endif /* CS_SIM_DAG_INT_H */
