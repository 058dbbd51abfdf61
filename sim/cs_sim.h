/*
 * cs_sim.h - the SimGrid backend: simulate schedules on a modeled fabric.
 *
 * One call, one simulation.  cs_sim_run loads the platform's XML into
 * SimGrid, then runs the given instances (schedule, message size) back to
 * back inside that one simulation, because SimGrid cannot be initialised
 * twice in a process: a second cs_sim_run in the same process fails with
 * CS_ERR_UNSUPPORTED.  Put every (schedule, size) pair of a sweep in one
 * call; run separate processes for separate platforms.
 *
 * Model.  CS_SIM_IDEAL selects SimGrid's CM02 network model without
 * cross-traffic and without the TCP window bound; on split-duplex links a
 * message of B bytes over a route of links l1..ln then takes exactly
 * sum(latency) + B / min(bandwidth) when it does not share a link.
 * CS_SIM_CALIBRATED uses the same base model, and before the run scales
 * every link whose `tier` property names a tier of the platform: bandwidth
 * by tier.bw_factor, latency by tier.lat_factor (sg_link_set_bandwidth /
 * sg_link_set_latency on both halves of a split-duplex link).
 *
 * Ranks and hosts.  Rank r of an instance runs as one SimGrid actor on
 * host hosts[r]: opts->map[r] when a map is given, else the platform's
 * r-th rank host (cs_platform.h: the devices, or every host when none is
 * marked; docs/platforms.md).  More ranks than those (or map entries) is
 * an error; several ranks may share a
 * host through a map.
 *
 * Step semantics.  Each rank actor interprets its rank's DAG: a step is
 * issued as soon as its dependencies are done and, for a receive, once the
 * previous receive on the same (peer, channel) has been issued; for a
 * send, once the previous send on the same (peer, channel) has COMPLETED.
 * So a channel is posted in schedule order (SimGrid's FIFO mailboxes match
 * the k-th send with the k-th receive, as cs_sched.h requires) and carries
 * one message at a time, like one connection: the segments of a pipeline
 * follow each other instead of sharing the link.  Sends to different peers
 * or on different channels run concurrently and share the links they
 * cross, unless opts->ports limits how many sends a rank has in flight
 * (ports = 1 is the single-port model of textbook alpha-beta analyses:
 * sends leave one after another, in the order they became issuable, ties
 * broken by step index).  Mailbox of a message: one per (src, dst, channel).
 *   send    asynchronous put of the range's bytes; done when delivered
 *   recv    asynchronous get; done when the message has arrived
 *   rrecv   get, then a reduction of the range's bytes; done after both
 *   reduce  a reduction of the range's bytes
 *   copy    free, or a reduction-like cost of 2 * bytes with opts->copy_cost
 *   nop     free
 *   switch  one member's part of a switch operation (below)
 * Reductions run on the rank's device stream: one after another, each
 * taking bytes / host speed (the platform's host speed is the device's
 * reduction bandwidth in bytes/s), overlapping the rank's communication
 * (under the nccl model with cs_sim_nccl_t.fused they take no time: NCCL's
 * kernels reduce as they copy).  Ranks mapped to the same host have one stream each (their reductions do
 * not slow each other down).  A rank waits on its small set of outstanding
 * comms (never a global set), so the cost per completion does not grow
 * with the rank count.
 * Switch operations (docs/platforms.md "Switches that reduce").  The
 * switch serving a group is the platform's switch serving every member's
 * host with the fewest hosts (cs_platform_switch_for); the run is refused
 * (CS_ERR_INVAL) when none serves a group, when a member has no route to
 * or from it, or when it does not reduce the instance's element type with
 * its operator (reduce and allreduce operations).  An operation starts
 * when every member has issued its step (the k-th switch step of each
 * member on (group, channel), steps of a queue issued in order like
 * receives) and is store-and-forward: each member with a source sends its
 * range's bytes up to the switch's host over its route; once all have
 * arrived, the switch reduces them (reduce, allreduce: a FIFO engine per
 * switch at its reduce_bw, by default the sum of the bandwidths of the
 * distinct last links of the members' routes to it, running from the
 * operation's start: cut-through) and waits its reduce_lat (every
 * operation); then it sends the result's bytes down to every member with a
 * destination.  Operations overlap, each with its own transfers.  An up
 * transfer to a switch that hosts no rank takes its bytes over the route's
 * links without latency, and they arrive the route's latency (sum of its
 * links') after the last one left: the member's up part is done when its
 * bytes have left, so chained contributions follow each other without a
 * gap while each operation still pays the latency.  A member's step is
 * done when its own part is: its down transfer (with the route's
 * latency), or its up part when it has no destination.  Up and down
 * transfers are flows on the members' links like messages, outside the
 * port limit.
 * Schedules must be deadlock free (verify them first): a deadlocked
 * instance is reported as CS_ERR_VERIFY after SimGrid gives up.
 *
 * Instances.  All ranks of an instance start at the same simulated time
 * t0 (right after the previous instance's last rank finished; the
 * synchronisation costs no simulated time); the instance's time is the
 * last rank's finish minus t0.  Message size: `bytes` is the whole vector
 * as in nccl-tests; elements per block = cs_coll_block_count(coll, P,
 * bytes, dtype size) and a range's bytes follow cs_sched.h's chunk layout.
 *
 * Observer.  Optional callbacks, called from inside the simulation (from
 * rank actors and from the driver actor) with simulated times in seconds.
 * They must not call blocking SimGrid functions; they may call
 * cs_sim_route.  Record pointers are only valid during the call.
 *
 * Logging goes through cs_log with the simulated clock as prefix while a
 * simulation runs.
 */
#ifndef CS_SIM_H
#define CS_SIM_H

#include <stdint.h>

#include "cs_dtype.h"
#include "cs_platform.h"
#include "cs_sched.h"
#include "cs_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { CS_SIM_IDEAL = 0, CS_SIM_CALIBRATED, CS_SIM_NCCL, CS_SIM_MODEL_COUNT } cs_sim_model_t;

/* "ideal", "calibrated", "nccl"; parse returns CS_SIM_MODEL_COUNT when
 * unknown.  CS_SIM_NCCL runs on the ideal model's text; what NCCL adds is
 * given per instance (cs_sim_nccl_t, built by model/cs_nccl.h) and per tier
 * (cs_sim_opts_t.tier_bw_scale). */
const char *cs_sim_model_name(cs_sim_model_t m);
cs_sim_model_t cs_sim_model_parse(const char *s);

/* Route classes of the NCCL model: what NCCL calls the hardware a step
 * crosses.  A route's class is the highest of its links' (a link's from its
 * tier: nvlink, nvlink-host, nvswitch, xgmi -> NVLINK; pcie, xbus, pci,
 * host -> PCI; any other tier, or none -> NET). */
enum { CS_SIM_HW_NVLINK = 0, CS_SIM_HW_PCI, CS_SIM_HW_NET, CS_SIM_HW_COUNT };

/* What NCCL charges one instance, on top of the links (model CS_SIM_NCCL).
 * A message (send/recv, rrecv) over a route of class c:
 *   latency   lat[c] in place of the sum of the route's link latencies
 *             (NCCL's per-step latency of the instance's algorithm and
 *             protocol);
 *   rate      min(eff[c] * B, cap[c]) where B is the route's share of its
 *             links (protocol efficiency as SimGrid's rate factor: the
 *             message occupies its links at 1 / eff of its rate; per-message
 *             cap: the channels NCCL would give it times the protocol's
 *             per-channel ceiling, as the comm's rate limit), cap[c] == 0:
 *             no cap.
 * Transfers to and from a reducing switch: sw_eff / sw_cap in place of
 * eff / cap, no latency; each switch operation waits sw_lat in place of the
 * switch's reduce_lat.  base_lat: simulated seconds the instance spends
 * before its ranks start (NCCL's per-collective base latency), counted in
 * its time. */
typedef struct cs_sim_nccl {
    double base_lat;
    double lat[CS_SIM_HW_COUNT];
    double eff[CS_SIM_HW_COUNT];
    double cap[CS_SIM_HW_COUNT];
    double sw_eff, sw_cap, sw_lat;
    double sw_rate; /* > 0: a switch reduces an operation's contributions at
                       sw_rate bytes/s per member (NVLS's rate), in place of its reduce_bw */
    double sw_fill; /* bytes that pass at sw_rate once per collective, with base_lat before
                       the ranks start (NVLS's pipeline fill and drain); 0: none */
    double hid_lat[CS_SIM_HW_COUNT]; /* seconds per route class paid with base_lat before the
                                        ranks start: the per-step latency a pipelined
                                        schedule's pieces hide, which NCCL's cost model
                                        charges (cs_nccl_step_costs); 0: none */
    int fused;      /* 1: the ranks reduce as the data arrives (NCCL's kernels reduce in the
                       copy, and its rates include it): reductions cost no time of their own */
    double step_bytes; /* bytes of one of the 8 steps (NCCL_STEPS) of a connection's buffer
                          in the protocol's data: a message holds ceil(bytes / step_bytes)
                          of them (all 8 when larger) from its start until its receive
                          takes it, so up to 8 small messages of a channel have moved or are
                          moving (one at a time) before their receives; 0: one message */
} cs_sim_nccl_t;

/* The class of a tier name (CS_SIM_HW_*). */
int cs_sim_hw_class(const char *tier);

/* One (schedule, size) pair to simulate. */
typedef struct cs_sim_instance {
    const cs_sched_t *sched; /* borrowed; instances may share one schedule */
    uint64_t bytes;          /* message size in bytes (nccl-tests convention) */
    cs_dtype_t dtype;        /* element type (sets the element size) */
    double time;             /* out: simulated seconds, set by cs_sim_run */
    int op;                  /* cs_op_t of the reduction (switch operations are refused on a
                                switch that does not reduce it); 0: sum */
    const cs_sim_nccl_t *nccl; /* model CS_SIM_NCCL: what NCCL charges this instance
                                  (required there, ignored by the other models) */
} cs_sim_instance_t;

/* A step as it ran: issued at `start`, done at `end`. */
typedef struct cs_sim_step_rec {
    int rank;
    uint32_t step;   /* index in the rank's steps */
    int kind;        /* cs_step_kind_t */
    int peer;        /* -1 for local steps */
    uint64_t bytes;  /* bytes of the range (0 for nop) */
    double start, end;
    double compute;  /* seconds the step kept the rank's device stream busy: its
                        reduction (rrecv, reduce) or charged copy, bytes / host
                        speed; 0 for the others */
} cs_sim_step_rec_t;

/* A message as it ran, reported when it arrives.  `start` is when both
 * sides were posted (the transfer can begin), `end` its arrival.  A switch
 * operation's up and down transfers are reported too, with the switch as
 * src (down) or dst (up): -1 - k for the platform's switch k, its host as
 * the host name, src_step / dst_step the member's step on both sides. */
typedef struct cs_sim_xfer_rec {
    int src, dst;              /* ranks (negative: a switch, see above) */
    const char *src_host, *dst_host;
    uint32_t src_step, dst_step;
    uint16_t chan;
    uint64_t bytes;
    double start, end;
} cs_sim_xfer_rec_t;

/* A switch operation as it ran, reported when its last transfer is done. */
typedef struct cs_sim_switch_rec {
    int sw;              /* index in the platform's switches */
    const char *host;    /* the switch's host */
    int group;           /* group id in the schedule */
    int op;              /* cs_swop_t */
    uint16_t chan;
    int nmembers;
    uint64_t bytes_up, bytes_down; /* over all members */
    double start;        /* every member had issued its step */
    double reduce;       /* seconds the switch's reduction engine spent on it (0: multicast) */
    double end;
} cs_sim_switch_rec_t;

typedef struct cs_sim_observer {
    void *ctx;
    /* Every callback may be NULL. */
    void (*instance_begin)(void *ctx, int inst, const cs_sim_instance_t *in, double t0);
    void (*step)(void *ctx, int inst, const cs_sim_step_rec_t *rec);
    void (*xfer)(void *ctx, int inst, const cs_sim_xfer_rec_t *rec);
    void (*instance_end)(void *ctx, int inst, const cs_sim_instance_t *in, double t_end);
    void (*switch_op)(void *ctx, int inst, const cs_sim_switch_rec_t *rec);
} cs_sim_observer_t;

/* Engines (docs/simulator-performance.md "Engines").  Both run the same
 * step semantics and give the same messages and records, and the same
 * simulated times except where SimGrid's sharing depends on the order in
 * which comms start at one instant; CS_SIM_NCCL runs on dag alone (below):
 *   actors  one SimGrid actor per rank interprets its steps (cs_sim_rank.c),
 *           one per switch operation, a driver actor runs the instances;
 *   dag     no actors: each matched message is one SimGrid comm from the
 *           sender's host to the receiver's, started (from SimGrid's
 *           completion callbacks) when both sides are posted; reductions
 *           are timers, a switch operation's wait and an instance's base
 *           latency sleeps, as with actors (cs_sim_dag.c).  About 2x
 *           faster on SimGrid builds whose maestro tracks activities in a
 *           set (3.34 and later, or 3.32 with collstep's patch:
 *           scripts/setup.sh); on a stock 3.32 it is no faster.
 * CS_SIM_ENGINE_DEFAULT picks dag where the SimGrid loaded has that fix
 * (cs_sim_engine_fast), actors otherwise, and dag under CS_SIM_NCCL, whose
 * messages between ranks are eager there as NCCL's connections are (a send
 * moves into its receiver's buffer of 8 steps, cs_sim_nccl_t.step_bytes,
 * while there is room, whether or not its receive is posted,
 * the sender is done when its bytes have moved, the receiver the route's
 * NCCL latency later; schedules with switch operations keep rendezvous
 * messages): cs_sim_run refuses actors asked for with CS_SIM_NCCL
 * (CS_ERR_INVAL), and CS_SIM_ENGINE (the environment) does not apply to
 * it. */
typedef enum {
    CS_SIM_ENGINE_DEFAULT = 0,
    CS_SIM_ENGINE_ACTORS,
    CS_SIM_ENGINE_DAG,
    CS_SIM_ENGINE_COUNT
} cs_sim_engine_t;
/* "default", "actors", "dag"; parse takes "actors" and "dag" and returns
 * CS_SIM_ENGINE_COUNT otherwise. */
const char *cs_sim_engine_name(cs_sim_engine_t e);
cs_sim_engine_t cs_sim_engine_parse(const char *s);
/* The engine CS_SIM_ENGINE_DEFAULT stands for in this process. */
cs_sim_engine_t cs_sim_engine_default(void);
/* 1 when the SimGrid this process has loaded tracks maestro's activities
 * in a set (cs_sim_simgrid: the dag engine is fast there). */
int cs_sim_engine_fast(void);

typedef struct cs_sim_opts {
    cs_sim_model_t model;
    cs_sim_engine_t engine; /* CS_SIM_ENGINE_DEFAULT: see cs_sim_engine_default */
    const char *const *map; /* host name per rank, or NULL: devices in order */
    int nmap;
    int copy_cost;          /* 0: copies are free; 1: 2 * bytes / host speed */
    int ports;              /* sends in flight per rank: 0 = unlimited, 1 = single port */
    const cs_sim_observer_t *obs; /* NULL: no records */
    /* model CS_SIM_NCCL: per tier of the platform (plat->tiers order), the
     * factor that turns its links' line rate into the rate NCCL counts on
     * them (NCCL's per-link figure over the hardware's); NULL or 0: 1 */
    const double *tier_bw_scale;
} cs_sim_opts_t;

/* Defaults: ideal model, devices in order, free copies, unlimited ports,
 * no observer. */
void cs_sim_opts_init(cs_sim_opts_t *o);

/* Run instances [0, n) on `plat` (its xml, tiers and device count).  Sets
 * inst[i].time.  Returns CS_OK, or a negative status with err filled:
 * CS_ERR_INVAL (bad arguments, too many ranks, unknown mapped host, a send
 * between ranks whose hosts have no route: the message names the schedule,
 * rank, step and hosts), CS_ERR_PARSE (SimGrid refuses the platform: one
 * line, never SimGrid's backtrace, since a text not known to load is
 * loaded in a child first), CS_ERR_IO (temporary file),
 * CS_ERR_UNSUPPORTED (second simulation in this process), CS_ERR_VERIFY
 * (an instance deadlocked). */
int cs_sim_run(const cs_platform_t *plat, const cs_sim_opts_t *opts, cs_sim_instance_t *inst,
               int n, cs_err_t *err);

/* One link of a route, source to destination. */
typedef struct cs_sim_link {
    const char *name;   /* SimGrid's name (split-duplex halves end in _UP / _DOWN) */
    const char *tier;   /* the link's tier property, "" when absent */
    double bandwidth;   /* bytes/s, as currently set (calibrated factors applied) */
    double latency;     /* seconds */
} cs_sim_link_t;

/* The route from host `src` to host `dst` (names).  Valid while a
 * simulation runs (observer callbacks) and after cs_sim_run returned.
 * Writes up to `max` links and the route's length to *nlinks (the route
 * may be longer than max: call again with more room).  Strings belong to
 * SimGrid.  CS_ERR_NOTFOUND for unknown hosts, CS_ERR_INVAL when no
 * platform is loaded. */
int cs_sim_route(const char *src, const char *dst, cs_sim_link_t *links, int max, int *nlinks,
                 cs_err_t *err);

/* Host name of each rank for `nranks` ranks under `opts` (map or devices in
 * document order), computed from the XML alone (no simulation needed).
 * *out is a malloc'ed array of malloc'ed strings: free with
 * cs_sim_hosts_free.  CS_ERR_INVAL when there are fewer hosts than ranks. */
int cs_sim_hosts(const cs_platform_t *plat, const cs_sim_opts_t *opts, int nranks, char ***out,
                 cs_err_t *err);
void cs_sim_hosts_free(char **hosts, int n);

/* The SimGrid this process runs on.  SimGrid before 3.34 keeps the
 * activities its maestro runs in a list scanned at every completion, 3.34
 * and later in a set; collstep builds on a 3.32 patched to the set when
 * scripts/setup-simgrid.sh has made one (docs/install.md, "SimGrid").
 * CS_SG_ACTIVITY_SET (1 or 0, a definition of collstep::sim) says whether
 * the SimGrid chosen at configure time has the set. */
typedef struct cs_sim_simgrid {
    int major, minor, patch; /* sg_version_get(): the library loaded */
    char library[512];       /* its file as loaded, "" when not found */
    int activity_set;        /* 1: maestro keeps its activities in a set: the
                                library is >= 3.34, or is the patched one
                                collstep was configured with (its folder) */
    const char *configured;  /* what configure chose, e.g. "3.32 (patched:
                                maestro activity set, /var/cache/collstep/...)" */
} cs_sim_simgrid_t;

/* Fill *sg; needs no simulation and starts none. */
void cs_sim_simgrid(cs_sim_simgrid_t *sg);

#ifdef __cplusplus
}
#endif

#endif /* CS_SIM_H */
