/*
 * cs_sim_int.h - internals of the SimGrid backend shared by its files.
 *
 *   cs_sim.c       cs_sim_run: SimGrid set-up, the driver actor, routes
 *   cs_sim_prog.c  a schedule compiled for interpretation (successor
 *                  lists, channel order: from each rank's plan, cs_plan.h),
 *                  built once and shared by every instance that runs the
 *                  schedule
 *   cs_sim_rank.c  the rank actor: interprets one rank's DAG
 *   cs_sim_routes.c  the routes a file must have for the schedules' sends
 *   cs_sim_switch.c  switch operations: matching, the serving switch, the
 *                  switch actor of each operation
 *   cs_sim_sg.cpp  the s4u operations the C API lacks (timed wait_any that
 *                  keeps references, link properties)
 */
#ifndef CS_SIM_INT_H
#define CS_SIM_INT_H

#include <stddef.h>
#include <stdint.h>

#include <simgrid/forward.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- cs_sim_sg.cpp ---------------------------------------------------- */
/* A set of outstanding s4u activities, each held by one reference: a
 * std::vector built in this storage (cs__sg_set_init / _fini).  Activities
 * are added at the end; cs__sg_set_remove takes out the one a wait
 * reported by moving the last one into its place (callers mirror that in
 * their own arrays). */
typedef struct cs__sg_set {
    void *opaque[3]; /* storage (size and alignment checked in cs_sim_sg.cpp) */
} cs__sg_set_t;
void cs__sg_set_init(cs__sg_set_t *s);
void cs__sg_set_fini(cs__sg_set_t *s);
/* Start a put / get and add it: 0.  1 when it was waited for instead (it
 * has finished and is not in the set): with `block`, or when the set could
 * not grow (out of memory; the caller's times are then wrong).  rate > 0:
 * the put moves at most `rate` bytes/s (SimGrid's Comm::set_rate). */
int cs__sg_set_put(cs__sg_set_t *s, sg_mailbox_t mb, void *payload, double bytes, double rate,
                   int block);
int cs__sg_set_get(cs__sg_set_t *s, sg_mailbox_t mb, void **data, int block);
/* Wait until one activity finishes and return its index, leaving it in the
 * set; -1 when `timeout` seconds passed first (timeout < 0: no limit; an
 * empty set with a timeout is a plain timer). */
long cs__sg_set_wait(cs__sg_set_t *s, double timeout);
/* Remove the activity at index pos (releasing the set's reference, which
 * usually destroys it). */
void cs__sg_set_remove(cs__sg_set_t *s, long pos);
/* Prefetch the set's array (its first line). */
void cs__sg_set_prefetch(cs__sg_set_t *s);
/* Property of a link, NULL when absent. */
const char *cs__sg_link_prop(sg_link_t link, const char *key);
void cs__sg_seal(void);
/* Comms to one of hosts[0..n) pay no link latency (the switch model charges
 * it itself, cs_sim_switch.c); every other comm keeps its latency.  Once,
 * from maestro, before the simulation starts.  0, or -1 when SimGrid
 * refuses the latency callback. */
int cs__sg_no_latency_to(const sg_host_t *hosts, int n);
/* Model CS_SIM_NCCL, in place of cs__sg_no_latency_to: latency and
 * bandwidth factors from *cur (the running instance's parameters, read at
 * each comm's start; NULL: none) as cs_sim.h describes; comms to (and,
 * with parameters, from) nolat[] pay no latency; comms to or from sw[]
 * (every reducing switch's host) are switch transfers.  Once, from
 * maestro.  0, or -1 when SimGrid refuses the callbacks. */
struct cs_sim_nccl;
/* The dag engine (cs_sim_dag.c), from maestro.  cs__sg_dag_begin: every
 * comm started by cs__sg_xfer calls done(ctx, data) once it has finished
 * (its reference is dropped after the next completion or at
 * cs__sg_dag_end); 0, or -1 when SimGrid refuses the callback.
 * cs__sg_xfer: start a comm of `bytes` from host src to host dst (rate >
 * 0: at most `rate` bytes/s) whose completion hands back `data`; 0, or -1
 * (out of memory, SimGrid refused it).  cs__sg_timer: call fn(ctx, arg) at
 * simulated time `date`; 0 or -1. */
int cs__sg_dag_begin(void (*done)(void *ctx, void *data), void *ctx);
void cs__sg_dag_end(void);
int cs__sg_xfer(sg_host_t src, sg_host_t dst, double bytes, double rate, void *data);
int cs__sg_timer(double date, void (*fn)(void *ctx, uint64_t arg), void *ctx, uint64_t arg);
/* From an actor: run fn(ctx) in maestro (one simcall), so that the comms
 * it starts belong to maestro and report to cs__sg_dag_begin's callback. */
void cs__sg_maestro(void (*fn)(void *ctx), void *ctx);
int cs__sg_nccl_factors(const sg_host_t *nolat, int nnolat, const sg_host_t *sw, int nsw,
                        const struct cs_sim_nccl *const *cur);
/* Model nccl, set by the dag engine for the instance running: its messages
 * between ranks are eager (cs_sim_dag.c "NCCL's connections"), their
 * latency the engine's, so SimGrid gives them none (a nanosecond) */
extern int cs__sg_p2p_eager;

#ifdef __cplusplus
}
#else

#include "cs_sim.h"

/* ---- cs_sim_prog.c ---------------------------------------------------- */
#define CS__NONE32 UINT32_MAX

/* One step compiled for the interpreter: everything the rank loop reads
 * or writes for a step sits in these 32 bytes, two steps to a cache line
 * (the array is line-aligned), so the few steps a rank handles in one turn
 * cost one or two lines.  The schedule itself is not touched while
 * simulating: between two turns of a rank, the other ranks' turns evict
 * everything, so the lines touched per turn decide the loop's speed.  Up
 * to CS__SUCC_INL successors are held in the step itself (most steps of
 * the generated algorithms have one or two, usually the next steps, so
 * finishing a step touches its own line and the next one, and no successor
 * list); beyond that s[0] is the offset of its list in the rank's succ
 * array.  The mailbox is an index into the rank's mailbox table (its
 * channel directions), leaving room for those successors.
 * Dependency counts and bytes are set for each instance
 * (cs__prog_prime_rank: while compiling for the first instance, by the rank
 * actor for later ones), from the schedule's ndeps and the channel chain
 * (chan_next). */
#define CS__MAX_MBX ((1u << 24) - 1)
#define CS__SUCC_INL 2
typedef struct cs__op {
    double bytes;        /* bytes of the range, for the instance running now */
    uint32_t npend;      /* events still awaited: dependencies + channel predecessor */
    uint32_t chan_next;  /* next step (local index) of the same channel direction */
    uint32_t kind : 8;   /* cs_step_kind_t */
    uint32_t mbx : 24;   /* send/recv/rrecv: its channel's mailbox, mbox[mbox_base[r] + mbx] */
    uint32_t nsucc;      /* successors (local step indices) */
    uint32_t s[CS__SUCC_INL]; /* nsucc <= CS__SUCC_INL: the successors; else s[0]: offset
                                 of the list in the rank's succ slice */
} cs__op_t;

/* The successor list of op o of a rank whose succ slice is `succ`. */
static inline const uint32_t *cs__op_succ(const cs__op_t *o, const uint32_t *succ)
{
    return o->nsucc <= CS__SUCC_INL ? o->s : succ + o->s[0];
}

/* A schedule compiled for the interpreter.  ops[] is indexed by global
 * step id base[r] + i; successor lists (of steps with more than
 * CS__SUCC_INL) are local step indices, rank r's in succ + succ_base[r];
 * rank r's mailboxes are mbox + mbox_base[r], and mfirst (same indices)
 * holds the local index of the first step of each mailbox's channel, from
 * which cs__prog_mailboxes names it.
 *
 * Primed (cs__prog_build with a cs__prime_t): the compiler has also done
 * what a rank does when an instance starts (cs_sim_rank.c), for one block
 * count and element size: every step's bytes and count of awaited events,
 * and rank r's steps issuable at once, in index order, in
 * prime->ready + base[r] (nready[r] of them).  The first instance to run
 * the program with that count and size uses them (cs__prog_take_prime). */
typedef struct cs__prog {
    const cs_sched_t *s;
    uint64_t *base;      /* nranks + 1 */
    uint64_t *succ_base; /* nranks + 1 */
    uint64_t *mbox_base; /* nranks + 1 */
    cs__op_t *ops;       /* mapped, line-aligned: cs__prog_fini unmaps ops_len bytes */
    size_t ops_len;
    uint32_t *succ;
    sg_mailbox_t *mbox;  /* set by cs__prog_mailboxes */
    unsigned char *mclass; /* model nccl: per mailbox, its route's class (CS_SIM_HW_*;
                              cs__prog_classes), NULL otherwise */
    uint32_t *mfirst;    /* per mailbox: local index of its channel's first step */
    uint32_t *nready;    /* primed: per rank, steps issuable at once */
    uint64_t prime_count; /* primed for this block count ... */
    size_t prime_esize;   /* ... and element size */
    int primed;          /* ops hold an unused priming */
    int mb_ready;        /* mailboxes resolved (cs__prog_mailboxes) */
    /* switch operations (cs_sim_switch.c), only for schedules with switch steps */
    uint32_t *swop_of;   /* per global step id: its operation, CS__NONE32 for other steps */
    struct cs__swop *swops;
    uint32_t nswops;
    struct cs__swgrp *swg; /* per group of the schedule */
    sg_mailbox_t *swmb;  /* 2 per operation: up, down */
    uint32_t *swarr;     /* per operation: members that issued their step (this instance) */
    double *swdown;      /* per operation: when its down transfers began (this instance) */
    unsigned swid;       /* names its mailboxes apart from other programs' */
    int nthreads;        /* threads that compiled it */
    int nranks;
} cs__prog_t;

/* What to prime a program for (see cs__prog_t). */
typedef struct cs__prime {
    uint64_t count;  /* elements per block */
    size_t esize;    /* bytes per element */
    uint32_t *ready; /* run-wide, indexed by global step id (the FIFO slices) */
} cs__prime_t;

/* Compile s; with prime (may be NULL), prime it.  Large schedules are
 * compiled by several threads (ranks split by step count). */
int cs__prog_build(cs__prog_t *p, const cs_sched_t *s, const cs__prime_t *prime, cs_err_t *err);
void cs__prog_fini(cs__prog_t *p);
/* Resolve every channel's mailbox (from an actor, once per program). */
void cs__prog_mailboxes(cs__prog_t *p);
/* Model nccl: the route class of every channel (from its sender's host to
 * its receiver's, ranks on host_names[]), once per program from an actor;
 * left NULL when out of memory (messages then go uncapped). */
void cs__prog_classes(cs__prog_t *p, char *const *host_names);
/* Set rank r's steps up for an instance of `count` elements per block of
 * `esize` bytes: bytes and counts of awaited events; writes the steps
 * issuable at once to ready[] (in index order) and returns their number. */
uint32_t cs__prog_prime_rank(cs__prog_t *p, int r, uint64_t count, size_t esize, uint32_t *ready);
/* 1 when p is primed for (count, esize): the priming is then used up. */
int cs__prog_take_prime(cs__prog_t *p, uint64_t count, size_t esize);
/* Bytes of step st of rank r for `count` elements per block of `esize`
 * bytes (what the step moves or computes over; 0 for nop). */
uint64_t cs__step_bytes(const cs_sched_t *s, int r, const cs_step_t *st, uint64_t count,
                        size_t esize);

/* ---- shared run state -------------------------------------------------- */
typedef struct cs__run cs__run_t;

/* One instance being run: what rank actors read and write. */
typedef struct cs__inst {
    cs__run_t *run;
    int index;
    cs_sim_instance_t *in;
    cs__prog_t *prog;
    uint64_t count;      /* elements per block */
    size_t esize;
    double t0;
    double *finish;      /* per rank */
    double *post;        /* per global step: time issued (only with an observer) */
    int primed;          /* ranks start from the program's priming (cs__prog_t) */
    int done_ranks;
} cs__inst_t;

struct cs__run {
    const cs_platform_t *plat;
    const cs_sim_opts_t *opts;
    sg_host_t *hosts; /* per rank (up to the largest instance) */
    char **host_names;
    int nhosts;
    cs__inst_t *cur;  /* instance running now */
    double *sw_free;  /* per platform switch: when its reduction engine is idle */
    int failed;       /* a rank met an internal error */
    int sw_live;      /* switch actors not yet returned: the last ones still report
                       * to the observer after their multicast, at the time the
                       * ranks that received it finish */
    sg_sem_t sw_idle; /* released by the last of them while the driver waits */
    /* restarts after idle (cs__sim_restart_setup; NULL: no host has them):
     * per rank, the extra bytes of a message on a connection idle longer
     * than rs_idle seconds, and its node (only messages between nodes) */
    double *rs_bytes, *rs_idle;
    int *rs_node;
    /* model nccl: where the network's factor callbacks read the running
     * instance's parameters */
    const cs_sim_nccl_t **nccl_cur;
};

/* Read the hosts' restart_bytes / restart_idle / node properties
 * (platforms/cs_plat_calib.h) into run->rs_*; none of them: left NULL.
 * CS_ERR_NOMEM or CS_OK. */
int cs__sim_restart_setup(cs__run_t *run, cs_err_t *err);

typedef struct cs__rank_arg {
    cs__inst_t *inst;
    int rank;
    sg_bar_t bar;
} cs__rank_arg_t;

/* ---- cs_sim.c: one run, shared by both engines ------------------------- */
typedef struct cs__drv {
    cs__run_t run;
    cs_sim_instance_t *inst;
    int n;
    cs__prog_t *progs;
    int *prog_of;         /* instance -> progs index */
    int nprogs;
    cs__rank_arg_t *args; /* max ranks */
    double *finish;       /* max ranks */
    int completed;        /* instances that finished */
    uint64_t maxflight;   /* dag: transfers in flight at once, at most */
} cs__drv_t;

/* ---- cs_sim_mem.c: memory, checked before simulating ------------------ */
#define CS__MEM_STEP 48u        /* bytes per compiled step (ops, successors, queues, FIFO) */
#define CS__MEM_HOST 16384u     /* SimGrid's platform per rank host, before it is loaded */
#define CS__MEM_ACTOR 20480u    /* per rank actor: stack pages touched, context, state */
#define CS__MEM_DAG_RANK 64u    /* per rank, dag engine */
#define CS__MEM_XFER 1536u      /* per SimGrid comm in flight */
#define CS__MEM_FLIGHT 3u       /* transfers in flight per rank */
typedef struct cs__mem {
    uint64_t steps, platform, ranks, flight; /* bytes */
} cs__mem_t;
/* Resident size now; the process's peak so far (bytes). */
uint64_t cs__mem_rss(void);
uint64_t cs__mem_peak(void);
/* What this process may still use, and why that much (a static string). */
uint64_t cs__mem_available(const char **why);
/* Fill m's steps, ranks and flight for a run (platform left as it is). */
void cs__mem_estimate(cs__mem_t *m, uint64_t steps, int ranks, int nhosts, int engine_dag,
                      int restarts, int observer, uint64_t switch_members);
uint64_t cs__mem_total(const cs__mem_t *m);
/* CS_OK when m fits what is available (logged at info), else CS_ERR_NOMEM
 * with the estimate and its parts. */
int cs__mem_check(const cs__mem_t *m, const char *when, cs_err_t *err);

/* ---- cs_sim_dag.c ----------------------------------------------------- */
/* Run d's instances with the dag engine (the platform loaded and set up,
 * calibrated factors applied): CS_OK, or an error before the run began.
 * What it ran is in d->completed and d->run.failed, as with actors. */
int cs__dag_run(cs__drv_t *d, cs_err_t *err);

/* ---- cs_sim_rank.c ---------------------------------------------------- */
void cs__rank_main(int argc, char **argv);

/* ---- cs_sim_switch.c -------------------------------------------------- */
/* One switch operation of a program. */
typedef struct cs__swop {
    uint64_t lead;      /* the leader's global step id */
    int lead_rank;
    uint32_t lead_step;
    uint32_t group;
    uint16_t chan;
    uint8_t op;         /* cs_swop_t */
    uint32_t n, nup, ndown; /* members; members with a source; with a destination */
} cs__swop_t;

/* The switch serving a group in this run. */
typedef struct cs__swgrp {
    int sw;             /* index in the platform's switches, -1 when the group has no step */
    sg_host_t host;
    double rate;        /* reduction bytes/s (cs__sw_rates) */
    double lat;         /* seconds per operation */
    double *uplat;      /* per member (group order): its route's latency to the switch */
    /* actor engine: switch allreduces (SHARP) send their parts up one after
     * the other (cs_sim_dag_sw.c does the same): one is under way, the
     * others wait, suspended, in order */
    int upbusy;
    sg_actor_t *upq;
    uint32_t upq_head, upq_n, upq_cap;
} cs__swgrp_t;

/* Match the switch steps of p's schedule into operations (after the ranks
 * are compiled).  CS_ERR_VERIFY naming a step without its operation. */
int cs__sw_build(cs__prog_t *p, cs_err_t *err);
void cs__sw_fini(cs__prog_t *p);
/* With the platform loaded, before simulating: the switch serving each
 * group of p (run's hosts), routes to and from it, and that it reduces the
 * type and operator of every instance i of p (prog_of[i] == pj).
 * CS_ERR_INVAL with the reason. */
int cs__sw_check(const cs_platform_t *plat, char *const *host_names, cs__prog_t *p,
                 const cs_sim_instance_t *inst, const int *prog_of, int pj, int n,
                 cs_err_t *err);
/* From the driver (calibrated bandwidths applied): hosts, rates and the
 * members' latencies to their switch. */
void cs__sw_rates(cs__run_t *run, cs__prog_t *p);
/* With the platform loaded, before simulating: up transfers to the
 * platform's switches that host no rank pay their route's latency in the
 * switch's actor instead of in SimGrid (cs__sg_no_latency_to). */
int cs__sw_latency_setup(const cs__run_t *run, cs_err_t *err);
/* Model nccl: the network's factor callbacks (cs__sg_nccl_factors) with
 * the platform's switches, reading the running instance's parameters from
 * *cur. */
int cs__sw_nccl_setup(const cs__run_t *run, const cs_sim_nccl_t *const *cur, cs_err_t *err);

/* What an instance waits under the NCCL model before its ranks start, as
 * both engines wait it: NCCL's base latency, then NVLS's pipeline fill and
 * drain at the switch's rate. */
static inline double cs__nccl_start_delay(const cs_sim_nccl_t *k)
{
    double t = k && k->base_lat > 0 ? k->base_lat : 0;
    for (int c = 0; k && c < CS_SIM_HW_COUNT; c++)
        if (k->hid_lat[c] > 0)
            t += k->hid_lat[c];
    if (k && k->sw_fill > 0 && k->sw_rate > 0)
        t += k->sw_fill / k->sw_rate;
    return t;
}
/* Resolve the operations' mailboxes (from an actor). */
void cs__sw_mailboxes(cs__prog_t *p);
/* Reset the per-instance state of p's operations. */
void cs__sw_reset(cs__prog_t *p);
/* Rank r issues its switch step of global id gid: counts it, and the last
 * member starts the operation's switch actor.  Returns the operation. */
uint32_t cs__sw_arrive(cs__inst_t *I, uint64_t gid);

/* ---- cs_sim_routes.c -------------------------------------------------- */
/* With the platform loaded: CS_OK when every send of the schedules of
 * inst[0..ninst) has a route from its rank's host to its peer's
 * (host_names: per rank); CS_ERR_INVAL naming the first that has none. */
int cs__sim_check_routes(const cs_platform_t *plat, char *const *host_names,
                         const cs_sim_instance_t *inst, int ninst, cs_err_t *err);

#endif /* __cplusplus */
#endif /* CS_SIM_INT_H */
