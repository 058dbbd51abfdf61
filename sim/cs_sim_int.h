/*
 * cs_sim_int.h - internals of the SimGrid backend shared by its files.
 *
 *   cs_sim.c       cs_sim_run: SimGrid set-up, the driver actor, routes
 *   cs_sim_prog.c  a schedule compiled for interpretation (successor
 *                  lists, channel order), built once and shared by every
 *                  instance that runs the schedule
 *   cs_sim_rank.c  the rank actor: interprets one rank's DAG
 *   cs_sim_xml.c   device hosts of the XML in document order
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
typedef struct cs__sg_act cs__sg_act_t; /* an s4u::Activity with one reference */
cs__sg_act_t *cs__sg_put(sg_mailbox_t mb, void *payload, double bytes);
cs__sg_act_t *cs__sg_get(sg_mailbox_t mb, void **data);
/* Wait until one of acts[0..n) finishes, release it, return its index;
 * -1 when `timeout` seconds passed first (timeout < 0: no limit).  *cache
 * (NULL at first) keeps the caller's wait vector between calls: free it
 * with cs__sg_wait_cache_free. */
long cs__sg_wait_any(cs__sg_act_t **acts, size_t n, double timeout, void **cache);
void cs__sg_wait_cache_free(void *cache);
/* Property of a link, NULL when absent. */
const char *cs__sg_link_prop(sg_link_t link, const char *key);
void cs__sg_seal(void);

#ifdef __cplusplus
}
#else

#include "cs_sim.h"

/* ---- cs_sim_prog.c ---------------------------------------------------- */
#define CS__NONE32 UINT32_MAX

/* One step compiled for the interpreter: everything the rank loop reads
 * or writes for a step sits in these 40 bytes, so a step costs one or two
 * cache lines (the schedule itself is not touched while simulating; a rank
 * actor runs for a few steps between context switches, so locality is
 * what the loop's speed depends on). */
typedef struct cs__op {
    sg_mailbox_t mb;     /* send/recv/rrecv: its channel's mailbox (set by the driver) */
    double bytes;        /* bytes of the range, for the instance running now */
    uint32_t succ;       /* successors: the rank's succ slice [succ, succ + nsucc) */
    uint32_t nsucc;
    uint32_t chan_next;  /* next step (local index) of the same channel direction */
    uint32_t npend;      /* events still awaited (reset per instance from npend0) */
    uint32_t npend0;     /* ndeps + 1 if the step waits for a channel predecessor */
    uint8_t kind;        /* cs_step_kind_t */
    uint8_t chan_head;   /* first step of its channel direction */
} cs__op_t;

/* A schedule compiled for the interpreter.  ops[] is indexed by global
 * step id base[r] + i; successor lists are local step indices, rank r's
 * in succ + succ_base[r]. */
typedef struct cs__prog {
    const cs_sched_t *s;
    uint64_t *base;      /* nranks + 1 */
    uint64_t *succ_base; /* nranks + 1 */
    cs__op_t *ops;
    uint32_t *succ;
    int mb_ready;        /* mailboxes resolved (cs__prog_mailboxes) */
    int nranks;
} cs__prog_t;

int cs__prog_build(cs__prog_t *p, const cs_sched_t *s, cs_err_t *err);
void cs__prog_fini(cs__prog_t *p);
/* Resolve every channel's mailbox (from an actor, once per program). */
void cs__prog_mailboxes(cs__prog_t *p);

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
    int done_ranks;
} cs__inst_t;

struct cs__run {
    const cs_platform_t *plat;
    const cs_sim_opts_t *opts;
    sg_host_t *hosts; /* per rank (up to the largest instance) */
    char **host_names;
    int nhosts;
    cs__inst_t *cur;  /* instance running now */
    int failed;       /* a rank met an internal error */
};

typedef struct cs__rank_arg {
    cs__inst_t *inst;
    int rank;
    sg_bar_t bar;
} cs__rank_arg_t;

/* ---- cs_sim_rank.c ---------------------------------------------------- */
void cs__rank_main(int argc, char **argv);

/* ---- cs_sim_xml.c ----------------------------------------------------- */
/* Ids of <host> elements with prop device=gpu, in document order. */
int cs__xml_devices(const char *xml, char ***names, int *n, cs_err_t *err);
/* Load the platform file `path` in a forked child (cs_sim_probe.c): CS_OK
 * when SimGrid accepts it, CS_ERR_PARSE with SimGrid's message when not. */
int cs__sim_probe_platform(const char *path, const char *name, cs_err_t *err);

#endif /* __cplusplus */
#endif /* CS_SIM_INT_H */
