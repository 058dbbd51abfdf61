/*
 * cli_live.h - the front end of the live commands `collstep calibrate` and
 * `collstep validate` (and of `collstep run` where it shares them): the
 * same transport options, and the messages of the live job, whose
 * plumbing (bootstrap, where the ranks are, agreed exit codes,
 * oversubscription, the transport) is exec/cs_job.h's.
 *
 *   parse    cs_live_opts_init (also restarts getopt_long), CS_LIVE_LONGOPTS
 *            in the option table, cs_live_opt for the options the command
 *            does not handle itself, cs_live_parse_end at the end;
 *            cs_live_uerr for a usage error ("collstep CMD: ... (see
 *            collstep CMD --help)", exit 2)
 *   start    cs_live_start: cs_job_open and cs_job_find_nodes, their
 *            failures said; cs_live_mem_check: the memory the buffers need
 *            against the machine's available memory, before any transport
 *   build    cs_live_hold, cs_live_release: a step every rank takes alike
 *            (building the schedules; run too) whose usage errors rank 0
 *            alone says
 *   agree    cs_live_agree: every rank's exit code, the worst wins
 *   connect  cs_job_connect: the transport, its peers' addresses
 *   fail     cs_live_fail: "collstep CMD: rank R: message", the exit code
 *
 * Exit codes (cli.h, cs_cli_exit_code): 0, 2 usage / bad input, 3 a rank
 * died or timed out, a transport failed, 128+N a signal.
 */
#ifndef CLI_LIVE_H
#define CLI_LIVE_H

#include <getopt.h>
#include <stdint.h>

#include "cs_boot.h"
#include "cs_job.h"
#include "cs_status.h"

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

/* ---- the job (exec/cs_job.h), with its messages ------------------------------ */

/* Bootstrap and nodes (cs_job_open, cs_job_find_nodes) with the options o
 * and the command's name.  groups: --groups FILE or NULL.  Returns an exit
 * code; on a usage error every rank returns CS_EXIT_USAGE and the rank at
 * fault has said why ("collstep CMD: rank R: --groups FILE: cannot open
 * it"). */
int cs_live_start(cs_job_t *l, const char *cmd, const cs_live_opts_t *o, const char *groups);

/* Every rank's exit code rc; returns the worst (after a bootstrap failure:
 * cs_live_fail's). */
int cs_live_agree(cs_job_t *l, int rc);

/* Report the failure st (l->err) as "collstep CMD: rank R: message" (or
 * the message alone when it names its rank) and return its exit code. */
int cs_live_fail(cs_job_t *l, int st);

/* Refuse up front a size whose buffers cannot fit: `need` bytes for the
 * `ranks_here` ranks on this machine (what the engines or the calibration
 * allocate for the largest size, `size`) against MemAvailable
 * (cs_job_mem_available).  Said as "collstep CMD: --size 1099511627776
 * (1.0 TiB): the WHAT of the 2 ranks on this machine need about 4.0 TiB,
 * but 21.7 GiB of memory is available ..." and CS_EXIT_USAGE; CS_EXIT_OK
 * when it fits or MemAvailable is unknown.  Nothing is allocated. */
int cs_live_mem_check(const char *cmd, uint64_t size, double need, int ranks_here,
                      const char *what);

/* Building the schedules, every rank alike: between cs_live_hold and
 * cs_live_release the ranks other than 0 hold their usage errors
 * (cs_cli_hold_errors), since rank 0 meets and says the same ones.
 * cs_live_release(b, cmd, rc) gathers every rank's exit code rc
 * (cs_job_agree_boot): a rank that failed where rank 0 did not (a file it
 * alone cannot read, arguments of its own) says what it held, "collstep
 * CMD: rank R: ...".  Returns the worst exit code, the same on every rank,
 * or (the bootstrap failed, said) its exit code. */
void cs_live_hold(cs_boot_t *b);
int cs_live_release(cs_boot_t *b, const char *cmd, int rc);

/* A command's state of `size` bytes, zeroed, with the interrupt handlers
 * installed (cs_intr.h); NULL after saying "collstep CMD: out of memory". */
void *cs_live_new(const char *cmd, size_t size);

#endif /* CLI_LIVE_H */
