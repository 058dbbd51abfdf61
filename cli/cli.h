/*
 * cli.h - shared pieces of the `collstep` command-line front end.
 *
 * Every subcommand is `int cs_cli_<name>(int argc, char **argv)` with
 * argv[0] the subcommand name, returning the process exit code (below).
 * A subcommand's main function reads as parse, build, verify, act, report;
 * the grammar every subcommand shares (sizes, algorithm lists, parameters,
 * verification, outputs, interruption) lives here, so `sim`, `run` and the
 * others accept the same spellings and say the same things.  Subcommands
 * print their own --help.  Errors go to stderr as "collstep <cmd>: <message>".
 */
#ifndef CS_CLI_H
#define CS_CLI_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cs_algo.h"
#include "cs_params.h"
#include "cs_sched.h"

/* ---- exit codes (one list for every subcommand; `collstep --help`) ------ */

#define CS_EXIT_OK 0      /* success */
#define CS_EXIT_FAIL 1    /* the answer is no: schedule wrong, results wrong */
#define CS_EXIT_USAGE 2   /* usage error, malformed input, refused output path */
#define CS_EXIT_RUNTIME 3 /* failure while running: I/O error, a rank died or timed
                             out, transport or simulation failure */
/* 128 + N: interrupted by signal N (130 Ctrl-C / SIGINT, 143 SIGTERM); partial
 * outputs are removed. */
#define CS_EXIT_SIGNAL_BASE 128

/* The text of the list above, for the help pages. */
extern const char cs_cli_exit_help[];
/* What every page that takes --size says about sizes. */
extern const char cs_cli_size_help[];
/* "float (default), double, half, bfloat16, int32, int64" and the operators. */
extern const char cs_cli_dtype_help[];

/* ---- sizes ---------------------------------------------------------------- */

#define CS_CLI_MAX_SIZES 64

/* One size: "1024", "64K", "100M", "1G", "2T" (binary: K = 2^10 ...; "KB",
 * "KiB", "MB" ... are the same; a "B" suffix is allowed).  0 or -1. */
int cs_cli_parse_size(const char *s, uint64_t *out);
/* "SIZE" or "SIZE:MAX[:FACTOR]" -> min, max, factor (default 2). 0 or -1. */
int cs_cli_parse_sweep(const char *s, uint64_t *min, uint64_t *max, double *factor);
/* The --size grammar of every subcommand: a comma-separated list of items,
 * each a size or a sweep MIN:MAX[:FACTOR] that expands like nccl-tests'
 * -b MIN -e MAX -f FACTOR: MIN, MIN*F, MIN*F^2, ... while <= MAX (MAX itself
 * only when it is on the sequence).  Sizes are kept in the order given,
 * duplicates dropped; each must hold at least one element of `elem_size`
 * bytes (0: not checked), except a single 0 (an empty collective).  At most CS_CLI_MAX_SIZES.  Prints the error as
 * "collstep CMD: --size: ..." and returns CS_EXIT_USAGE, or CS_EXIT_OK. */
int cs_cli_sizes(const char *cmd, const char *spec, size_t elem_size, uint64_t *sizes, int *n);

/* ---- schedule files -------------------------------------------------------- */

/* Every command that takes a schedule file reads it through here: the
 * collstep text format (core/cs_text.h), and foreign formats detected by
 * their content.  "-" is standard input.  NULL with err filled (file:line:
 * column and what was expected) on failure. */
cs_sched_t *cs_cli_load_sched(const char *path, cs_err_t *err);
/* Destroy a schedule from cs_cli_load_sched (and what it remembers of a
 * foreign file's lines).  NULL is fine. */
void cs_cli_free_sched(cs_sched_t *s);
/* "FILE.xml:LINE: gpu G tb T step S" for a step of a schedule read from a
 * foreign format; 0 when there is no such origin. */
int cs_cli_step_origin(const cs_sched_t *s, int rank, int64_t step, char *buf, size_t len);

/* A --schedule argument naming several files (comma separated) or a
 * folder: a tuning table of schedules picked per size (MSCCL's rule,
 * interop/cs_schedset.h).  1 when `arg` is such a set.  One file named
 * alone serves every size asked for (its minBytes / maxBytes are metadata). */
int cs_cli_is_schedule_set(const char *arg);

/* Load the set `arg` names and pick per size the schedule serving it:
 * per_size[k] (owned by the set) and per_path[k] (its file).  `cmd`
 * non-NULL: say on stderr which file served each size ("collstep CMD:
 * 1048576 B served by b.xml (65537 bytes and more)").  *coll and *nranks
 * get the set's.  A status with err filled (the file, or the size no file
 * serves); free the set with cs_cli_schedule_set_free. */
struct cs_schedset;
int cs_cli_schedule_set(const char *cmd, const char *arg, const uint64_t *sizes, int nsizes,
                        size_t elem_size, struct cs_schedset **set, cs_sched_t **per_size,
                        const char **per_path, cs_coll_t *coll, int *nranks, cs_err_t *err);
void cs_cli_schedule_set_free(struct cs_schedset *set);

/* ---- algorithms and their parameters ------------------------------------ */

#define CS_CLI_MAX_ALGOS 32

/* "ring,hier,rhd" -> names (pointers into `buf`, which the call fills from
 * spec).  Duplicates and empty names are errors.  CS_EXIT_OK or USAGE. */
int cs_cli_algo_list(const char *cmd, const char *spec, char *buf, size_t buflen,
                     const char **names, int *n);

/* --param values: "KEY=VALUE[,KEY=VALUE...]" applies to every algorithm of
 * the command that has the key; "ALGO:KEY=VALUE[,...]" to ALGO only (and
 * wins over the global value). */
typedef struct cs_cli_params {
    cs_params_t global;
    int nper;
    struct {
        char algo[64];
        cs_params_t p;
    } per[CS_CLI_MAX_ALGOS];
} cs_cli_params_t;

void cs_cli_params_init(cs_cli_params_t *p);
/* Add one --param argument.  CS_EXIT_OK or USAGE (printed). */
int cs_cli_params_add(cs_cli_params_t *p, const char *cmd, const char *arg);
/* The parameters of algorithm `a`: the global keys `a` declares, then its
 * own.  Keys named for `a` that it does not declare stay (the generator
 * rejects them, naming them). */
void cs_cli_params_for(const cs_cli_params_t *p, const cs_algo_t *a, cs_params_t *out);
/* Every global key is declared by at least one of the `n` algorithms and
 * every ALGO: prefix names one of them; otherwise an error (printed). */
int cs_cli_params_check(const cs_cli_params_t *p, const char *cmd, const cs_algo_t *const *algos,
                        int n);
/* "nchunks=4 radix=2": every parameter `a` declares, given or default, for
 * result provenance ("" for a schedule file: its own meta data is used). */
void cs_cli_params_effective(const cs_algo_t *a, const cs_params_t *given, char *buf, size_t len);

/* Defaults a platform or a cluster gives an algorithm: hier's tier sizes
 * `dims` (innermost first, e.g. 6x256) when they multiply to `ranks`.
 * `out` is initialised; the user's --param wins over it in cs_cli_build. */
void cs_cli_tier_defaults(const char *algo, const int *dims, int ndims, int ranks,
                          cs_params_t *out);

/* Build algorithm `name` for `desc` with the command's parameters; errors
 * printed ("collstep CMD: ...") and returned as an exit code. */
int cs_cli_build(const char *cmd, const char *name, const cs_coll_desc_t *desc,
                 const cs_cli_params_t *p, const cs_params_t *extra, cs_sched_t **out,
                 char *effective, size_t efflen);

/* ---- verification (cli_verify.c) ---------------------------------------- */

/* Verify `s` before it is simulated or run.  A schedule that verified once
 * is remembered by its digest in the user's cache directory
 * ($XDG_CACHE_HOME/collstep/verified, else ~/.cache/collstep/verified;
 * CS_VERIFY_CACHE=0 disables it), so a sweep or a repeated run does not pay
 * again.  A wrong schedule: its findings are printed (a deadlock with its
 * whole cycle) and CS_EXIT_FAIL returned; a schedule too large to verify:
 * CS_EXIT_USAGE with the hint to pass --no-verify.  cmd NULL: nothing is
 * printed (the other ranks of a live run, whose rank 0 explains). */
int cs_cli_verify(const char *cmd, const cs_sched_t *s, const char *name);
/* Print findings as "PREFIX<msg>" lines (with their detail lines, and the
 * line of a foreign file each step came from when `s` has origins) and
 * "... and N more finding(s)". */
void cs_cli_print_findings(FILE *f, const char *prefix, const void *report, const cs_sched_t *s);

/* ---- outputs and interruption (cli_guard.c) ----------------------------- */

/* Long commands (sim) run their work in a child process watched by the
 * command's own process: SIGINT / SIGTERM / SIGHUP to the command kill the
 * child, remove the partial outputs it was writing (the temporary
 * PATH.tmp.<pid> of `out_file` and of `trace_dir`, restoring a trace it was
 * replacing) and exit 128 + signal; a child that crashes is reported and
 * its partial outputs removed the same way.  Returns 0 in the child (go on
 * and do the work) and, in the parent, 1 with *rc the exit code to return.
 * CS_NO_GUARD=1 runs the work in the process itself (for debuggers). */
int cs_cli_guard(const char *cmd, const char *out_file, const char *trace_dir, int *rc);

/* Check, before a long run, that -o FILE (results) and --trace DIR (either
 * may be NULL) can be written without replacing what collstep did not
 * write (core/cs_out.h); the error is printed ("collstep CMD: -o FILE: ...")
 * and CS_EXIT_USAGE returned. */
int cs_cli_check_outputs(const char *cmd, const char *out_file, const char *trace_dir, int force);

/* "collstep CMD: message" on stderr; returns CS_EXIT_USAGE. */
int cs_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int cs_cli_algos(int argc, char **argv);
int cs_cli_gen(int argc, char **argv);
int cs_cli_verify_cmd(int argc, char **argv);
int cs_cli_stats(int argc, char **argv);
int cs_cli_sim(int argc, char **argv);      /* sim/ engine */
int cs_cli_platform(int argc, char **argv); /* platforms/ */
int cs_cli_trace(int argc, char **argv);    /* traces/ */
int cs_cli_run(int argc, char **argv);      /* exec/ */

#endif /* CS_CLI_H */
