/*
 * cmd_validate_nccl.c - `collstep validate --nccl-tests LOG... --platform
 * SPEC`: no live run; every table of nccl-tests logs (core/cs_nccl_log.h)
 * is predicted on a platform under `--model nccl` with NCCL's choice per
 * size, as `collstep sim --model nccl --algo nccl` does, and the log's
 * in-place times are compared with the predictions in validate's report
 * (validate/cs_validate.h, a case per table and a group per log).
 *
 *   read     the logs, every table placed on the platform as the log placed
 *            it and built as NCCL runs it (cli_ntab.h: what is skipped)
 *   act      the simulations (cs_nset_simulate)
 *   report   cs_validate_write: table, csv or json, per table, per log and
 *            overall the median, geometric mean and worst |error|
 *
 * Exit codes (cli.h): 0; 2 usage and bad input (a log that cannot be read
 * or has no table, a platform with fewer devices than a table's ranks, no
 * table to compare); 3 a simulation failed; 128+N a signal.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cs_child.h"
#include "cs_nccl_log.h"
#include "cli_ntab.h"
#include "cs_validate.h"

#define MAX_LOGS 64

#ifdef CS_HAVE_MODEL

static void help(FILE *f)
{
    fprintf(f,
            "usage: collstep validate --nccl-tests LOG [LOG...] --platform SPEC [options]\n"
            "\n"
            "Predict nccl-tests logs: every table of every LOG (all_reduce_perf and the\n"
            "other *_perf programs) is simulated on SPEC under --model nccl with NCCL's\n"
            "choice of algorithm and protocol per size (NCCL_ALGO / NCCL_PROTO when the\n"
            "log shows them), the same collective, ranks and placement (the log's nodes\n"
            "on SPEC's nodes in order, as its device block shows them),\n"
            "type, operator and sizes; the log's in-place time is the measured one.\n"
            "Prints measured against predicted per size with the error, and per table,\n"
            "per log and overall the median, geometric mean and worst |error|, then\n"
            "each size off by more than 5 %% with the likely reason (NCCL's choice\n"
            "changing where the log's time does not, two regimes inside one choice).\n"
            "A platform that `collstep calibrate --from-nccl-tests` wrote predicts with\n"
            "its fitted terms.  Tables collstep wrote for one of its own algorithms\n"
            "(`collstep run` or `sim --algo ALGO` with --format nccl-tests; the title\n"
            "names the algorithm and parameters) are simulated as that algorithm, under\n"
            "the calibrated model when SPEC is a file with a collstep_factors property,\n"
            "else the ideal one.\n"
            "\n"
            "  --nccl-tests LOG     a log (repeatable; further LOGs may follow as operands)\n"
            "  --platform SPEC      platform to predict with (XML file or preset): the logs'\n"
            "                       nodes map to its nodes in order, so it needs at least\n"
            "                       as many nodes, each with the devices a log's node uses\n"
            "  --groups FILE        the node of each rank for tables without a device block:\n"
            "                       lines NAME (one rank), NAME N, NAME:N or NAME slots=N\n"
            "                       (N ranks; an Open MPI hostfile), ranks in order\n"
            "%s%s"
            "  --format F           table (default), csv, json\n"
            "  -o, --output FILE    write the report to FILE (whole or not at all)\n"
            "  --force              replace an existing FILE that collstep did not write\n"
            "  --help               this text\n"
            "\n"
            "Skipped, each with a line on stderr: tables of collectives collstep lacks\n"
            "(sendrecv, gather, scatter, hypercube) or that the log does not name, tables\n"
            "without a device block (unless --groups), tables mixing types or operators\n"
            "(-d all, -o all).\n"
            "\n%s"
            "\nexample: collstep validate --nccl-tests slurm-1234.out --platform "
            "hgx-h100:nodes=2\n",
            cs_nset_nccl_help, cs_nset_filter_help, cs_cli_exit_help);
}


typedef struct opts {
    const char *logs[MAX_LOGS];
    int nlogs;
    const char *platform, *version, *groups, *algo, *proto;
    cs_nset_t filt; /* --coll, --min-size, --max-size */
    cs_cli_report_t rep;
} opts_t;

static int parse_opt(void *ctx, int c, const char *arg)
{
    opts_t *o = ctx;
    switch (c) {
    case 'L':
        return cs_nset_add_log("validate", "--nccl-tests", o->logs, &o->nlogs, MAX_LOGS, arg);
    case 'P': return cs_cli_once("validate", "--platform", &o->platform, arg);
    case 'G': return cs_cli_once("validate", "--groups", &o->groups, arg);
    case 'V': return cs_nset_version_opt("validate", arg, &o->version);
    case 1002: return cs_nset_choice_opt("validate", 0, arg, &o->algo);
    case 1003: return cs_nset_choice_opt("validate", 1, arg, &o->proto);
    case 1010: return cs_nset_filter_opt("validate", 0, arg, &o->filt);
    case 1011: return cs_nset_filter_opt("validate", 1, arg, &o->filt);
    case 1012: return cs_nset_filter_opt("validate", 2, arg, &o->filt);
    case 'f': return cs_cli_parse_format("validate", arg, &o->rep.fmt);
    case 'o': return cs_cli_once("validate", "-o", &o->rep.output, arg);
    case 'F': o->rep.force = 1; return CS_EXIT_OK;
    default: return CS_EXIT_USAGE;
    }
}

static int parse(int argc, char **argv, opts_t *o)
{
    static const struct option lo[] = {
        {"nccl-tests", required_argument, 0, 'L'}, {"platform", required_argument, 0, 'P'},
        {"nccl-version", required_argument, 0, 'V'},
        {"nccl-algo", required_argument, 0, 1002}, {"nccl-proto", required_argument, 0, 1003},
        {"coll", required_argument, 0, 1010}, {"min-size", required_argument, 0, 1011},
        {"max-size", required_argument, 0, 1012}, {"format", required_argument, 0, 'f'},
        {"groups", required_argument, 0, 'G'},
        {"output", required_argument, 0, 'o'},     {"force", no_argument, 0, 'F'},
        {"help", no_argument, 0, 'h'},             {0, 0, 0, 0}};
    memset(o, 0, sizeof(*o));
    o->rep.fmt = CS_FMT_TABLE;
    if (cs_cli_help_asked(argc, argv)) { /* also "--nccl-tests --help" */
        help(stdout);
        return CS_CLI_DONE;
    }
    int rc = cs_cli_options("validate", argc, argv, ":ho:", lo, help, parse_opt, o);
    if (rc != CS_EXIT_OK)
        return rc;
    for (int i = optind; i < argc && rc == CS_EXIT_OK; i++)
        rc = cs_nset_add_log("validate", "--nccl-tests", o->logs, &o->nlogs, MAX_LOGS,
                             argv[i]);
    if (rc != CS_EXIT_OK)
        return rc;
    if (!o->nlogs)
        return cs_cli_usage_hint("validate", "--nccl-tests LOG: no log given");
    if (!o->platform)
        return cs_cli_usage_hint("validate", "--nccl-tests: --platform SPEC is required (the "
                                             "platform to predict the logs with)");
    if (strchr(o->platform, '@'))
        return cs_cli_usage_error("validate", "--platform %s: --nccl-tests predicts with the "
                                              "nccl model; give the platform alone",
                                  o->platform);
    return CS_EXIT_OK;
}

int cs_cli_validate_nccl(int argc, char **argv)
{
    opts_t o;
    int rc = parse(argc, argv, &o);
    cs_nset_t s = {.cmd = "validate", .platform = o.platform, .version = o.version,
                   .algo = o.algo, .proto = o.proto,
                   .colls = o.filt.colls, .min_size = o.filt.min_size,
                   .max_size = o.filt.max_size,
                   .groups = o.groups, .logs = o.logs, .nlogs = o.nlogs};
    if (rc == CS_EXIT_OK)
        rc = cs_nset_check_report("validate", "-o", o.rep.output, o.rep.force);
    if (rc == CS_EXIT_OK)
        rc = cs_nset_check_not_input("validate", "-o", o.rep.output, o.logs, o.nlogs);
    if (rc == CS_EXIT_OK)
        rc = cs_nset_read(&s);
    if (rc == CS_EXIT_OK)
        rc = cs_nset_simulate(&s, 1, NULL, NULL);
    /* the sizes the model misses, and why: with the report (after a table;
     * in json's "notes", after each table's note line, which a table shows
     * above its rows), and on stderr where the report is not a table on
     * the terminal */
    char *un = rc == CS_EXIT_OK ? cs_nset_unfit_text(&s, CS_NSET_TOL, "predicted") : NULL, *notes = NULL;
    if (rc == CS_EXIT_OK && !un)
        rc = cs_cli_usage_error("validate", "%s", "out of memory");
    if (rc == CS_EXIT_OK && o.rep.fmt == CS_FMT_JSON) {
        size_t len = strlen(un) + 1;
        for (int i = 0; i < s.ntab; i++)
            len += strlen(s.tab[i]->note) + 1;
        if ((notes = malloc(len)) != NULL) {
            size_t n = 0;
            for (int i = 0; i < s.ntab; i++)
                n += (size_t)sprintf(notes + n, "%s\n", s.tab[i]->note);
            strcpy(notes + n, un);
        } else {
            rc = cs_cli_usage_error("validate", "%s", "out of memory");
        }
    }
    if (rc == CS_EXIT_OK)
        rc = cs_nset_report(&s, &o.rep, NULL,
                            o.rep.fmt == CS_FMT_JSON ? notes
                            : o.rep.fmt == CS_FMT_TABLE ? un
                                                        : NULL);
    if (rc == CS_EXIT_OK && (o.rep.fmt != CS_FMT_TABLE || o.rep.output))
        cs_nset_unfit(&s, CS_NSET_TOL, "# ", stderr);
    free(un), free(notes);
    cs_nset_free(&s);
    return rc == CS_CLI_DONE ? CS_EXIT_OK : rc;
}

#else /* !CS_HAVE_MODEL */

int cs_cli_validate_nccl(int argc, char **argv)
{
    (void)argc, (void)argv;
    return cs_cli_usage_error("validate", "%s", "--nccl-tests: the nccl model is not built (no "
                                                "model/ library)");
}

#endif
