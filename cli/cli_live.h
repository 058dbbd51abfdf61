/*
 * cli_live.h - what `collstep calibrate` and `collstep validate` share: both
 * are launched like `collstep run` (every rank runs the command), parse the
 * same transport options, find where the ranks are, agree on an exit code,
 * open the transport and report failures the same way.
 *
 *   parse    cs_live_opts_init (also restarts getopt_long), CS_LIVE_LONGOPTS
 *            in the option table, cs_live_opt for the options the command
 *            does not handle itself, cs_live_parse_end at the end;
 *            cs_live_uerr for a usage error ("collstep CMD: ... (see
 *            collstep CMD --help)", exit 2)
 *   start    cs_live_start: the bootstrap, rank, ranks, and where every
 *            rank is (cs_live_nodes_t): nodes from the hostname and network
 *            namespace of every rank (namespaces of one machine are nodes
 *            of an emulated cluster), or from --groups FILE; and the
 *            machines (kernels, by boot id) to tell how many ranks share a
 *            machine's cores (cs_live_machine_ranks, which `collstep run`
 *            calls too, with cs_live_oversubscribed for --wait); the
 *            memory their buffers need against the machine's available
 *            memory (cs_live_mem_check, before any transport opens)
 *   build    cs_live_hold, cs_live_release: a step every rank takes alike
 *            (building the schedules; run too) whose usage errors rank 0
 *            alone says
 *   agree    cs_live_agree: every rank's exit code, the worst wins
 *   connect  cs_live_connect: the transport, its peers' addresses
 *   fail     cs_live_fail: "collstep CMD: rank R: message", the exit code
 *
 * Exit codes (cli.h): 0, 2 usage / bad input, 3 a rank died or timed out,
 * a transport failed, 128+N a signal.
 */
#ifndef CLI_LIVE_H
#define CLI_LIVE_H

#include <getopt.h>
#include <stdint.h>

#include "cs_boot.h"
#include "cs_status.h"
#include "cs_transport.h"

/* ---- options ---------------------------------------------------------------- */

typedef struct cs_live_opts {
    const char *transport, *provider, *iface, *boot, *output, *wait;
    double timeout;
    int force;
} cs_live_opts_t;

/* Long options every live command takes (in its getopt_long table). */
#define CS_LIVE_LONGOPTS                                                                     \
    {"transport", 1, 0, 't'}, {"provider", 1, 0, 'V'}, {"iface", 1, 0, 'I'},                 \
        {"timeout", 1, 0, 'T'}, {"boot", 1, 0, 'B'}, {"force", 0, 0, 'F'},                   \
        {"output", 1, 0, 'o'}, {"wait", 1, 0, 'W'}

/* Their usage lines. */
extern const char cs_live_usage_opts[];
/* The usage lines of --wait alone (collstep run: its other options differ). */
extern const char cs_live_wait_help[];

/* --wait ARG: auto, spin or yield into *wait; CS_EXIT_OK, or CS_EXIT_USAGE
 * after "collstep CMD: --wait: expected auto, spin or yield, found 'ARG'". */
int cs_live_parse_wait(const char *cmd, const char *arg, const char **wait);

/* Defaults: ofi over tcp;ofi_rxm on 127.0.0.1, timeout 60 s, auto boot,
 * wait auto; getopt_long restarted (optind 1, no messages of its own). */
void cs_live_opts_init(cs_live_opts_t *o);

/* An option of getopt_long (c, optarg) the command does not handle itself:
 * CS_EXIT_OK for a live option, CS_EXIT_USAGE (printed) when its value is
 * wrong, for a missing value (':') or an unknown option; argv is getopt's. */
int cs_live_opt(const char *cmd, cs_live_opts_t *o, int c, const char *arg, char **argv);

/* After getopt_long: no operands; host memory transports only (shm has no
 * provider).  CS_EXIT_OK or CS_EXIT_USAGE (printed). */
int cs_live_parse_end(const char *cmd, cs_live_opts_t *o, int argc, char **argv);

/* "collstep CMD: <fmt with a>  (see collstep CMD --help)"; CS_EXIT_USAGE. */
int cs_live_uerr(const char *cmd, const char *fmt, const char *a);

/* "ofi/tcp;ofi_rxm" or "tcp": what ran, for reports. */
void cs_live_transport_name(const cs_live_opts_t *o, char *buf, size_t n);

/* ---- ranks ----------------------------------------------------------------- */

typedef struct cs_live_node {
    char name[64];  /* hostname (told apart by "#N" where namespaces share it) */
    uint64_t netns; /* network namespace inode (0 with --groups) */
} cs_live_node_t;

typedef struct cs_live {
    const char *cmd;
    const cs_live_opts_t *o;
    cs_boot_t *boot;
    cs_tp_t *tp;
    int rank, nranks;
    int nnodes;
    int *node_of;          /* rank -> node, nodes numbered by their first rank */
    int *first, *count;    /* node -> first rank, ranks */
    cs_live_node_t *nodes; /* node -> name */
    int machine_ranks;     /* ranks on this rank's machine (kernel), any node */
    int oversubscribed;    /* engines' waiting policy: 1 yield when idle (see --wait) */
    cs_err_t err;
} cs_live_t;

/* Bootstrap and nodes.  groups: --groups FILE (one node name per rank and
 * line; blank lines and # comments skipped) or NULL.  Returns an exit code;
 * on a usage error every rank returns CS_EXIT_USAGE and the rank at fault
 * has said why. */
int cs_live_start(cs_live_t *l, const char *cmd, const cs_live_opts_t *o, const char *groups);

/* Every rank's exit code rc; returns the worst (after a bootstrap failure:
 * cs_live_fail's). */
int cs_live_agree(cs_live_t *l, int rc);

/* Open the transport and exchange addresses (a cs_status_t). */
int cs_live_connect(cs_live_t *l);

/* Report the failure st (l->err) and return the exit code. */
int cs_live_fail(cs_live_t *l, int st);

/* How many ranks of the job run on this rank's machine (its kernel, known by
 * its boot id: network namespaces of one machine share it; the hostname
 * where there is none), over the bootstrap (every rank calls it): CS_OK
 * with *ranks >= 1, and here[r] = 1 for each rank r on it (here: NULL, or
 * one entry per rank of the job), or a status with err filled. */
int cs_live_machine_ranks(cs_boot_t *b, int *ranks, unsigned char *here, cs_err_t *err);

/* MemAvailable of /proc/meminfo in bytes (0: unknown). */
uint64_t cs_live_mem_available(void);
/* Refuse up front a size whose buffers cannot fit: `need` bytes for the
 * `ranks_here` ranks on this machine (what the engines or the calibration
 * allocate for the largest size, `size`) against MemAvailable.  Said as
 * "collstep CMD: --size 1099511627776 (1.0 TiB): the WHAT of the 2 ranks on
 * this machine need about 4.0 TiB, but 21.7 GiB of memory is available
 * ..." and CS_EXIT_USAGE; CS_EXIT_OK when it fits or MemAvailable is
 * unknown.  Nothing is allocated. */
int cs_live_mem_check(const char *cmd, uint64_t size, double need, int ranks_here,
                      const char *what);

/* Whether idle ranks yield their core (the engines' oversubscribed): --wait
 * yield always, spin never, auto when `machine_ranks` (above) exceeds the
 * machine's online cores.  Logged at CS_LOG=info ("collstep CMD: ...: idle
 * ranks spin|yield"). */
int cs_live_oversubscribed(const char *cmd, const char *wait, int machine_ranks);

/* Building the schedules, every rank alike: between cs_live_hold and
 * cs_live_release the ranks other than 0 hold their usage errors
 * (cs_cli_hold_errors), since rank 0 meets and says the same ones.
 * cs_live_release(b, cmd, rc) gathers every rank's exit code rc: a rank
 * that failed where rank 0 did not (a file it alone cannot read, arguments
 * of its own) says what it held, "collstep CMD: rank R: ...".  Returns the
 * worst exit code, the same on every rank, or (the bootstrap failed, said)
 * CS_EXIT_RUNTIME or 128 + signal. */
void cs_live_hold(cs_boot_t *b);
int cs_live_release(cs_boot_t *b, const char *cmd, int rc);

/* A command's state of `size` bytes, zeroed, with the interrupt handlers
 * installed (cs_intr.h); NULL after saying "collstep CMD: out of memory". */
void *cs_live_new(const char *cmd, size_t size);

/* Close the transport and the bootstrap, free the node tables. */
void cs_live_close(cs_live_t *l);

#endif /* CLI_LIVE_H */
