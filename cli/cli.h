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

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cs_algo.h"
#include "cs_dtype.h"
#include "cs_params.h"
#include "cs_results.h"
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

/* The exit code of a status, by the list above: CS_OK 0; CS_ERR_VERIFY 1
 * (the schedule is wrong); CS_ERR_INVAL, _PARSE, _RANGE, _NOTFOUND,
 * _UNSUPPORTED and _EXISTS 2 (usage, malformed input, refused output
 * path); CS_ERR_INTERRUPTED 128 + the signal recorded (cs_intr.h), 3 when
 * none was; every other failure 3 (I/O, memory, a rank died or timed out,
 * transport or simulation failure).  Every command maps through here. */
int cs_cli_exit_code(int st);

/* The exit code of a status from reading the input file `path`: a file
 * that is not there, not a file or not readable is bad input (2, as
 * verify says); a read that failed, and every other status, as above. */
int cs_cli_input_exit_code(const char *path, int st);

/* Whether argv[1..] asks for help (--help or -h before any "--"), also
 * where an option would take it as its value ("--nccl-tests --help"). */
int cs_cli_help_asked(int argc, char **argv);

/* The text of the list above, for the help pages. */
extern const char cs_cli_exit_help[];
/* What every page that takes --size says about sizes. */
extern const char cs_cli_size_help[];
/* "float (default), double, half, bfloat16, int32, int64" and the operators. */
extern const char cs_cli_dtype_help[];

/* ---- options --------------------------------------------------------------- */

/* A step of a subcommand that stops it with exit code 0 (--help printed). */
#define CS_CLI_DONE (-1)
/* cs_cli_getopt: stop now, *rc is the exit code. */
#define CS_CLI_OPT_EXIT 0x10000

/* getopt_long over a subcommand's arguments (set optind = 1 first).  Returns
 * the next option as getopt_long does and -1 at the end; handles the rest:
 * 'h' prints help(stdout) and returns CS_CLI_OPT_EXIT with *rc = CS_EXIT_OK;
 * a bad option returns CS_CLI_OPT_EXIT with *rc = CS_EXIT_USAGE after saying
 * why.  `shortopts` starting with ':' (sim, run): one line, "collstep CMD:
 * unknown option '--x' (see collstep CMD --help)" or "option --x needs a
 * value"; otherwise getopt's own message and the help text on stderr. */
int cs_cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
                  const struct option *lo, void (*help)(FILE *), int *rc);

/* A subcommand's option loop (sets optind = 1): each option goes to
 * fn(ctx, c, optarg), which returns an exit code; --help and bad options as
 * in cs_cli_getopt.  Returns CS_EXIT_OK at the first operand (optind),
 * CS_CLI_DONE after --help, or the first error's exit code. */
int cs_cli_options(const char *cmd, int argc, char **argv, const char *shortopts,
                   const struct option *lo, void (*help)(FILE *),
                   int (*fn)(void *ctx, int c, const char *arg), void *ctx);

/* The options of every command that writes one file: -o FILE, --force,
 * --help (end of a struct option table), and their help line for -o. */
#define CS_CLI_OPTS_OUTPUT                                                              \
    {"output", required_argument, 0, 'o'}, {"force", no_argument, 0, 'F'},             \
        {"help", no_argument, 0, 'h'}, { 0, 0, 0, 0 }
extern const char cs_cli_output_help[];

/* "collstep CMD: message (see collstep CMD --help)" on stderr; CS_EXIT_USAGE. */
int cs_cli_usage_hint(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Option values; each prints "collstep CMD: OPT: expected ..., found 'S'"
 * and returns CS_EXIT_USAGE, or CS_EXIT_OK with *out set. */
int cs_cli_parse_long(const char *cmd, const char *opt, const char *s, long min, long max,
                      long *out);
int cs_cli_parse_seconds(const char *cmd, const char *opt, const char *s, double *out); /* > 0 */
/* "10G", "1.25e9", "800MB/s": bytes per second, decimal (k, M, G, T). */
int cs_cli_parse_rate(const char *cmd, const char *opt, const char *s, double *out);
int cs_cli_parse_dtype(const char *cmd, const char *s, cs_dtype_t *out);  /* --dtype */
int cs_cli_parse_op(const char *cmd, const char *s, cs_op_t *out);        /* --op */
int cs_cli_parse_coll(const char *cmd, const char *s, cs_coll_t *out);    /* --coll */
int cs_cli_parse_format(const char *cmd, const char *s, cs_results_fmt_t *out); /* table|csv|json */
/* table|csv|json|nccl-tests (sim and plan: cli_nccl.h) */
int cs_cli_parse_format_nccl(const char *cmd, const char *s, cs_results_fmt_t *out);

/* ---- sizes ---------------------------------------------------------------- */

#define CS_CLI_MAX_SIZES 64

/* One size: "1024", "64K", "100M", "1G", "2T" (binary: K = 2^10 ...; "KB",
 * "KiB", "MB" ... are the same; a "B" suffix is allowed).  0 or -1. */
int cs_cli_parse_size(const char *s, uint64_t *out);
/* And back: "16 MiB", "1 KiB", "8 B", "1.5 KiB" (the largest binary unit,
 * 3 digits where it is not whole). */
void cs_cli_size_text(uint64_t b, char *buf, size_t len);
/* Whether an nccl-tests table's sweep was cut short of its maxBytes
 * (cs_nccl_run_cut_short): 1, with the sentence that says so in buf. */
struct cs_nccl_run;
int cs_cli_nccl_cut_text(const struct cs_nccl_run *t, char *buf, size_t len);
/* "SIZE" or "SIZE:MAX[:FACTOR]" -> min, max, factor (default 2). 0 or -1. */
int cs_cli_parse_sweep(const char *s, uint64_t *min, uint64_t *max, double *factor);
/* The --size grammar of every subcommand: a comma-separated list of items,
 * each a size or a sweep MIN:MAX[:FACTOR] that expands like nccl-tests'
 * -b MIN -e MAX -f FACTOR: MIN, MIN*F, MIN*F^2, ... while <= MAX (MAX itself
 * only when it is on the sequence).  Sizes are kept in the order given,
 * duplicates dropped; each must hold at least one element of `elem_size`
 * bytes (0: at least one byte); 0 is an error like any size below one
 * element.  At most CS_CLI_MAX_SIZES.  Prints the error as "collstep CMD:
 * --size: ..." and returns CS_EXIT_USAGE, or CS_EXIT_OK. */
int cs_cli_sizes(const char *cmd, const char *spec, size_t elem_size, uint64_t *sizes, int *n);
/* The bytes a collective of `nranks` ranks moves for a --size of `bytes`:
 * rounded down to whole elements of `elem` bytes and, for reduce-scatter,
 * allgather and alltoall, to whole blocks of one element per rank, as
 * nccl-tests rounds (count = bytes / elem [/ nranks]). */
uint64_t cs_cli_size_moved(cs_coll_t coll, int nranks, uint64_t bytes, size_t elem);
/* Round every size to cs_cli_size_moved once the collective and the ranks
 * are known, so that every row, trace, tuning pick and algbw uses the bytes
 * that move.  `say`: each size that changed is said on stderr once
 * ("collstep sim: --size 1000: 992 bytes move (62 float elements per rank),
 * rounded down as nccl-tests does"), and sizes that became equal are kept
 * once (with[], when not NULL, is compacted alongside: a per-size index).
 * A size below one block is an error (printed): CS_EXIT_USAGE. */
int cs_cli_sizes_round(const char *cmd, cs_coll_t coll, int nranks, cs_dtype_t dt, int say,
                       uint64_t *sizes, int *n, int *with);

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
 * folder: a schedule set, one file picked per size (MSCCL's rule,
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

/* ---- tuning tables: --algo auto --tuning FILE ---------------------------- */

/* What a tuning table (`collstep plan -o FILE`, core/cs_tuning.h) chose
 * for one size: the registry algorithm, its parameters ("k=v,k=v" as --param
 * takes them, "" for none), the host of each rank (NULL: the platform's
 * order), the size range of the entry and the plan's prediction. */
typedef struct cs_cli_pick {
    const char *algo, *params;
    char *const *map;
    int nmap;
    uint64_t min_bytes, max_bytes;
    double predicted_us;
    const char *model; /* the model the table's predictions are of ("nccl-2.29.7"), NULL */
} cs_cli_pick_t;

struct cs_tuning;
/* Load the table at `path`, check that it was planned for `platform` (the
 * --platform spec as given; NULL for a live run: ranks only) and `ranks`,
 * and pick per size the entry serving (coll, sizes[k]) into picks[k]
 * (pointing into *t: free it with cs_cli_tuning_free after the picks).
 * Errors are printed ("collstep CMD: --tuning FILE: ..."): a malformed
 * table with FILE:LINE:COL, a table for another platform or rank count, a
 * size no entry serves, a collstep built without the planner; all
 * CS_EXIT_USAGE.  `collstep validate` calls this (or cs_cli_scheds_build,
 * which also builds the picks). */
int cs_cli_tuning_pick(const char *cmd, const char *path, const char *platform, int ranks,
                       cs_coll_t coll, const uint64_t *sizes, int nsizes, struct cs_tuning **t,
                       cs_cli_pick_t *picks);
void cs_cli_tuning_free(struct cs_tuning *t);

/* ---- --model nccl (cli_model.c) -------------------------------------------- */
#ifdef CS_HAVE_MODEL
#include "cs_nccl.h"
enum { CS_CLI_NCCL_VERSION = 1, CS_CLI_NCCL_ALGO, CS_CLI_NCCL_PROTO };
typedef struct cs_cli_nccl {
    const char *version;         /* --nccl-version, NULL: the newest */
    int algo, proto;             /* --nccl-algo / --nccl-proto, -1: NCCL's choice */
    int dtype, op;               /* the collective's type and operator (before setup) */
    const cs_nccl_consts_t *k;
    cs_nccl_sys_t sys;
    double scale[CS_PLAT_MAX_TIERS];
    cs_sim_nccl_t *cost;         /* per instance (cs_cli_nccl_costs) */
    int *inst_algo;              /* per instance: algorithm, protocol */
    int npicks;                  /* --algo nccl: per size NCCL's choice */
    int pick_algo[CS_CLI_MAX_SIZES], pick_proto[CS_CLI_MAX_SIZES];
    double pick_us[CS_CLI_MAX_SIZES];
    char pick_name[CS_CLI_MAX_SIZES][32], pick_params[CS_CLI_MAX_SIZES][192];
    const cs_platform_t *plat;   /* the platform of the last setup */
    int hosts_first;             /* 1: its ranks are on the platform's first hosts, in
                                    any order: rank_at[i] is the rank on host i (<= 16) */
    int rank_at[16];
    int hosts_same;              /* 1: rank r is on the platform's host r, every r */
    struct cs_cli_across {       /* NCCL's rings [0] and its Tree's chains [1] over the
                                    nodes' links (cs_cli_nccl_picks) */
        int local, channels;     /* orders holds them for these (local 0: not asked yet
                                    since the setup) */
        char orders[96];         /* "": none apply */
    } across[2];
    int orders_noted;            /* the ranks' order was said to be kept */
} cs_cli_nccl_t;
void cs_cli_nccl_init(cs_cli_nccl_t *c);
void cs_cli_nccl_fini(cs_cli_nccl_t *c);
/* One of the options (which: CS_CLI_NCCL_*); usage errors printed. */
int cs_cli_nccl_opt(const char *cmd, cs_cli_nccl_t *c, int which, const char *arg);
/* The constants and the system for `nranks` ranks on hosts[]; says which
 * on stderr. */
int cs_cli_nccl_setup(const char *cmd, cs_cli_nccl_t *c, const cs_platform_t *plat,
                      char *const *hosts, int nranks);
/* Per size NCCL's choice (the tuner's, or restricted by --nccl-algo /
 * --nccl-proto) as collstep generators: picks[k] for cs_cli_scheds_build_picks. */
int cs_cli_nccl_picks(const char *cmd, cs_cli_nccl_t *c, cs_coll_t coll, const uint64_t *sizes,
                      int n, cs_cli_pick_t *picks);
/* What each instance pays (inst[i].nccl set, owned by c): under NCCL's
 * choice of size size_of[i] when picks were made, else under the
 * algorithm the schedule stands for and NCCL's protocol for it at that
 * size (or the forced ones). */
int cs_cli_nccl_costs(const char *cmd, cs_cli_nccl_t *c, cs_sim_instance_t *inst, int n,
                      const int *size_of);
#define CS_CLI_NCCL_HELP                                                                    \
    "  --nccl-version V     --model nccl: NCCL's constants of version V (default: the\n"     \
    "                       newest in the table; the nearest one serves others)\n"           \
    "  --nccl-algo A        --model nccl: as with NCCL_ALGO=A (Ring, Tree, NVLS, ...)\n"    \
    "  --nccl-proto P       --model nccl: as with NCCL_PROTO=P (LL, LL128, Simple)\n"
#else
#define CS_CLI_NCCL_HELP ""
#endif

/* ---- validate --nccl-tests (cmd_validate_nccl.c) --------------------------- */
/* `collstep validate` with --nccl-tests among its arguments: nccl-tests logs
 * predicted on a platform, no live run.  An exit code. */
int cs_cli_validate_nccl(int argc, char **argv);
/* `collstep calibrate --from-nccl-tests` (cmd_calibrate_nccl.c). */
int cs_cli_calibrate_nccl(int argc, char **argv);

/* ---- NCCL's choice in plan's report (cmd_plan_nccl.c) --------------------- */
#ifdef CS_HAVE_PLAN
struct cs_planner;
/* The system NCCL's tuner sees, or why there is no reference row (header
 * lines of the table). */
void cs_cli_plan_nccl_header(FILE *f, const struct cs_planner *p);
/* Size k: NCCL's choice beside collstep's best, the speed-up, and why the
 * slower one is slow (two lines); under another model than nccl the
 * reference row (one line: busbw, share of the links' bound). */
void cs_cli_plan_nccl_table(FILE *f, const struct cs_planner *p, int k);
/* JSON: candidate c's "choice" and "terms" at size k (inside its row);
 * NCCL's row of size k (",\n      {...}"); the size's "versus_nccl". */
void cs_cli_plan_json_terms(FILE *f, const struct cs_planner *p, int c, int k);
void cs_cli_plan_nccl_json(FILE *f, const struct cs_planner *p, int k);
void cs_cli_plan_nccl_compare_json(FILE *f, const struct cs_planner *p, int k);
/* CSV: NCCL's row of size k (its "choice" column nccl). */
void cs_cli_plan_nccl_csv(FILE *f, const struct cs_planner *p, int k);

/* ---- what plan prints (cmd_plan_report.c) ---------------------------------- */
typedef struct cs_cli_plan_out {
    cs_results_fmt_t fmt;  /* --format */
    long show;             /* --show (0: all) */
    const char *output;    /* -o: the tuning table (NULL: none) */
    int force;             /* --force */
    const uint64_t *asked; /* the sizes as asked (nccl-tests' sweep line) */
    int nasked;
} cs_cli_plan_out_t;
/* The report of a whole plan on stdout (a warning on stderr when the
 * budget cut it) and its tuning table to o->output.  An exit code. */
int cs_cli_plan_report(const cs_cli_plan_out_t *o, const struct cs_planner *p);

/* ---- plan under a launcher (cmd_plan_dist.c) -------------------------------- */
typedef struct cs_cli_plan_dist cs_cli_plan_dist_t;
/* Under a launcher (PMIX_RANK and PMIX_NAMESPACE, or RANK and WORLD_SIZE;
 * collstep built with exec/): the bootstrap of `collstep run`, its ranks
 * checked to run the same arguments, *d, *rank and *size; *d NULL where
 * there is none or one rank.  bound_s bounds every wait for the others.
 * An exit code. */
int cs_cli_plan_dist_open(double bound_s, int argc, char **argv, cs_cli_plan_dist_t **d,
                          int *rank, int *size);
/* Every rank's status st and part p (NULL where st failed): rank 0 gets
 * the merged plan in *whole, the others NULL.  An exit code: a rank that
 * failed or died is named on rank 0 (its own message on its own stderr). */
int cs_cli_plan_dist_gather(cs_cli_plan_dist_t *d, int st, const struct cs_planner *p,
                            struct cs_planner **whole);
void cs_cli_plan_dist_close(cs_cli_plan_dist_t *d);
#endif

/* ---- the schedules a command runs (sim, run, validate) ------------------- */

#define CS_CLI_MAX_SCHEDS                                                                   \
    (CS_CLI_MAX_SIZES > CS_CLI_MAX_ALGOS ? CS_CLI_MAX_SIZES : CS_CLI_MAX_ALGOS)

/* Where they come from: --algo A,B (built from the registry, each serving
 * every size), --schedule FILE (serving every size), --schedule FILE,FILE or
 * a folder (a set: per size the file serving it), --algo auto --tuning FILE
 * (per size the table's entry; sizes served by one entry share its
 * schedule).  Each distinct schedule is held once. */
typedef struct cs_cli_scheds {
    int n;
    cs_sched_t *sched[CS_CLI_MAX_SCHEDS];
    char params[CS_CLI_MAX_SCHEDS][320];   /* the params column of its rows */
    char *const *map[CS_CLI_MAX_SCHEDS];   /* host of each rank (a table's), or NULL */
    int nmap[CS_CLI_MAX_SCHEDS];
    int per_size;                          /* 1: of_size[k] serves size k (set, auto) */
    int of_size[CS_CLI_MAX_SIZES];
    int owned;                             /* sched[] are freed here (not a set's) */
    cs_coll_t coll;                        /* of schedule files */
    int nranks;
    struct cs_schedset *set;
    struct cs_tuning *tuning;
} cs_cli_scheds_t;

/* Whether a verification may be answered by the cache of schedules that
 * verified before (cs_cli_verify). */
typedef enum cs_cli_verify_how {
    CS_CLI_VERIFY_ALWAYS, /* asked for: always verified */
    CS_CLI_VERIFY_CACHED  /* the implicit check of sim, run, validate */
} cs_cli_verify_how_t;

/* What the command asks for, shared by the calls below. */
typedef struct cs_cli_want {
    const char *cmd;          /* messages: "collstep CMD: ..." */
    int announce;             /* say on stderr which file / entry serves each size */
    const uint64_t *sizes;
    int nsizes;
    size_t elem;              /* element size (a set's files are picked in elements) */
    const char *platform;     /* the --platform spec a tuning table must be for; NULL: live */
    const int *dims;          /* the platform's tier sizes: hier's default dims */
    int ndims;
    const char *model;        /* the run's model (ideal, calibrated, nccl), NULL: not said */
} cs_cli_want_t;

/* Per size k the schedule of picks[k] (algorithm and params; min_bytes
 * names the entry: sizes whose picks share min_bytes, algorithm and params
 * share one schedule); `tuning` names where the picks come from in the
 * announcements. */
int cs_cli_scheds_build_picks(const cs_cli_want_t *w, const cs_cli_pick_t *picks,
                              const char *tuning, const cs_coll_desc_t *d, cs_cli_scheds_t *b);

/* Refuse schedules with switch steps (in-network reduction), which `cmd`
 * cannot execute: CS_EXIT_OK when no schedule of b has one, else
 * CS_EXIT_USAGE after printing (when cmd is not NULL) "collstep CMD: rank
 * R step N: a switch step (in-network reduction) cannot WHY" for the first
 * one. */
int cs_cli_refuse_switch(const char *cmd, const cs_cli_scheds_t *b, const char *why);
void cs_cli_scheds_init(cs_cli_scheds_t *b);
void cs_cli_scheds_free(cs_cli_scheds_t *b);
/* 1 when schedule i serves size k. */
int cs_cli_scheds_serves(const cs_cli_scheds_t *b, int i, int k);
/* Parse time: exactly one of --algo and --schedule, --tuning exactly with
 * --algo auto, no --param with auto (the table sets them).  Printed;
 * CS_EXIT_OK or CS_EXIT_USAGE. */
int cs_cli_source_check(const char *cmd, const char *algo, const char *schedule,
                        const char *tuning, const cs_cli_params_t *p);
/* --schedule ARG: one file or a set; b->coll and b->nranks are the file's.
 * Printed; an exit code. */
int cs_cli_scheds_load(const cs_cli_want_t *w, const char *arg, cs_cli_scheds_t *b);
/* The schedules of --schedule ARG are for `ranks` ranks ("ARG is a schedule
 * for 4 ranks, not 8"); an exit code. */
int cs_cli_scheds_fit(const char *cmd, const cs_cli_scheds_t *b, const char *arg, int ranks);
/* --algo LIST (or auto with `tuning`) for the collective and ranks of `d`:
 * names checked against the registry, --param checked against them, each
 * built with the platform's tier defaults.  Printed; an exit code. */
int cs_cli_scheds_build(const cs_cli_want_t *w, const char *algos, const char *tuning,
                        const cs_cli_params_t *p, const cs_coll_desc_t *d, cs_cli_scheds_t *b);
/* Verify every schedule (cs_cli_verify; cmd NULL: silently).  An exit code. */
int cs_cli_scheds_verify(const char *cmd, const cs_cli_scheds_t *b, const char *arg,
                         cs_cli_verify_how_t how);
/* The algo column of schedule i's rows: its algorithm, else `arg` (the file). */
const char *cs_cli_scheds_name(const cs_cli_scheds_t *b, int i, const char *arg);

/* ---- results -------------------------------------------------------------- */

/* How a command reports its rows: --format, -o, --force, --compare[=REF]. */
typedef struct cs_cli_report {
    cs_results_fmt_t fmt;
    const char *output; /* NULL: stdout */
    int force, compare_on;
    const char *compare; /* REF, NULL or "": the first algorithm */
    const char *flag;    /* the option naming `output` in messages; NULL: "-o" */
} cs_cli_report_t;

/* Print or save the rows (whole or not at all).  A --compare REF that is
 * not among the rows: said, the rows reported without the comparison view,
 * CS_EXIT_USAGE.  A refused -o path: CS_EXIT_USAGE; an I/O error:
 * CS_EXIT_RUNTIME. */
int cs_cli_report(const char *cmd, const cs_cli_report_t *r, cs_result_t *rows, int n);

/* ---- verification (cli_verify.c) ---------------------------------------- */

/* Verify `s`.  A schedule that verified is remembered by its digest in the
 * user's cache directory ($XDG_CACHE_HOME/collstep/verified, else
 * ~/.cache/collstep/verified; CS_VERIFY_CACHE=0 disables it).  With
 * CS_CLI_VERIFY_CACHED (the check sim, run and validate make before using a
 * schedule) a remembered schedule is not verified again, so a sweep or a
 * repeated run does not pay again; CS_CLI_VERIFY_ALWAYS (verification the
 * user asked for: gen --verify, export's promise) never reads the cache.
 * A wrong schedule: its findings are printed (a deadlock with its whole
 * cycle) and CS_EXIT_FAIL returned; a schedule too large to verify:
 * CS_EXIT_USAGE with the hint to pass --no-verify.  cmd NULL: nothing is
 * printed (the other ranks of a live run, whose rank 0 explains). */
int cs_cli_verify(const char *cmd, const cs_sched_t *s, const char *name, cs_cli_verify_how_t how);
/* Print findings as "PREFIX<msg>" lines (with their detail lines, and the
 * line of a foreign file each step came from when `s` has origins) and
 * "... and N more finding(s)". */
void cs_cli_print_findings(FILE *f, const char *prefix, const void *report, const cs_sched_t *s);
/* The same, and when `path` is a schedule text file (not NULL, not "-"),
 * every finding about a step starts with "PATH:LINE:COL: " (the step's
 * line in that file), and with name_all the others with "PATH: ". */
void cs_cli_print_findings_in(FILE *f, const char *prefix, const void *report,
                              const cs_sched_t *s, const char *path, int name_all);

/* ---- outputs and interruption (cli_guard.c) ----------------------------- */

/* Long commands (sim, plan) run their work in a child process watched by
 * the command's own process (core/cs_child.h): SIGINT / SIGTERM / SIGHUP to
 * the command kill the child, remove the partial outputs it was writing
 * (the temporary PATH.tmp.<pid> of `out_file` and of `trace_dir`,
 * restoring a trace it was replacing) and return 128 + signal; a child
 * that crashes is reported and its partial outputs removed the same way
 * (CS_EXIT_RUNTIME).  Returns work(ctx)'s exit code.  CS_NO_GUARD=1 runs
 * the work in the process itself (for debuggers), as does a failed fork. */
int cs_cli_guard(const char *cmd, const char *out_file, const char *trace_dir,
                 int (*work)(void *ctx), void *ctx);

/* Check, before a long run, that -o FILE (results) and --trace DIR (either
 * may be NULL) can be written without replacing what collstep did not
 * write (core/cs_out.h); the error is printed ("collstep CMD: -o FILE: ...")
 * and CS_EXIT_USAGE returned. */
int cs_cli_check_outputs(const char *cmd, const char *out_file, const char *trace_dir, int force);

/* "collstep CMD: message" on stderr; returns CS_EXIT_USAGE. */
int cs_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A single-valued option: *slot = arg, or a usage error (exit 2) when it
 * was given before with another value (the last would win unseen). */
int cs_cli_once(const char *cmd, const char *flag, const char **slot, const char *arg);

/* Held usage errors, for the ranks other than 0 of a live command (run,
 * validate) in a step every rank takes alike, building the schedules: rank
 * 0 says what is wrong once instead of every rank saying it.  on = 1:
 * cs_cli_usage_error and cs_cli_usage_hint print nothing and the first
 * message (without "collstep CMD: ") is kept; on = 0: printing again.
 * Returns the message kept ("" for none), valid until the next call with
 * on = 1.  cli_live.h's cs_live_hold / cs_live_release use it. */
const char *cs_cli_hold_errors(int on);

int cs_cli_algos(int argc, char **argv);
int cs_cli_gen(int argc, char **argv);
int cs_cli_verify_cmd(int argc, char **argv);
int cs_cli_stats(int argc, char **argv);
int cs_cli_sim(int argc, char **argv);      /* sim/ engine */
int cs_cli_platform(int argc, char **argv); /* platforms/ */
int cs_cli_trace(int argc, char **argv);    /* traces/ */
int cs_cli_run(int argc, char **argv);      /* exec/ */

#endif /* CS_CLI_H */
