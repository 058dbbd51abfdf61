/* cmd_export.c - `collstep export msccl`: a schedule file, or a registry
 * algorithm, as an MSCCL algorithm XML (interop/cs_msccl.h, docs/msccl.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cs_msccl.h"
#include "cs_out.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: collstep export msccl FILE.sched [options] [-o FILE.xml [--force]]\n"
            "       collstep export msccl --coll COLL --algo ALGO --ranks P [--param K=V ...]\n"
            "                             [options] [-o FILE.xml [--force]]\n"
            "\n"
            "Write a schedule (a file, or a registry algorithm built for P ranks) as an\n"
            "MSCCL algorithm XML that MSCCL's executor (NCCL / RCCL) loads: one\n"
            "threadblock per peer, channel and direction, local steps in threadblocks of\n"
            "their own, dependencies as depid/deps (nop steps for extra ones).  Exports\n"
            "allreduce, reduce-scatter, allgather and alltoall.  The schedule is verified\n"
            "first, every time (whatever sim and run remember).\n"
            "\n"
            "  --name NAME          the algo's name (default: the algorithm's)\n"
            "  --proto P            Simple (default), LL or LL128\n"
            "  --min-bytes SIZE     minBytes: smallest call the file serves (default 0)\n"
            "  --max-bytes SIZE     maxBytes: largest call (default 0: no limit)\n"
            "  --no-limits          write even what the executor refuses (more than 64\n"
            "                       steps in a threadblock, 72 chunks in a step, 32 peers\n"
            "                       on a channel): for other executors and for collstep\n"
            "  --inplace            build the registry algorithm in place\n"
            "%s"
            "  --force              replace an existing FILE that collstep did not write\n"
            "                       (an MSCCL XML written by collstep is replaced anyway)\n"
            "\n%s\n"
            "example: collstep export msccl --coll allreduce --algo ring --ranks 8 -o ring8.xml\n",
            cs_cli_output_help, cs_cli_exit_help);
}

typedef struct export_args {
    cs_msccl_write_opts_t wo;
    const char *coll_name, *algo, *output, *file;
    long ranks;
    int force, inplace;
    cs_cli_params_t params;
} export_args_t;

static int parse_opt(void *ctx, int c, const char *arg)
{
    export_args_t *a = ctx;
    uint64_t v;
    switch (c) {
    case 'c': a->coll_name = arg; return CS_EXIT_OK;
    case 'a': a->algo = arg; return CS_EXIT_OK;
    case 'P': return cs_cli_parse_long("export", "--ranks", arg, 1, 65536, &a->ranks);
    case 'p': return cs_cli_params_add(&a->params, "export", arg);
    case 'n': a->wo.name = arg; return CS_EXIT_OK;
    case 'x':
        if (strcmp(arg, "Simple") != 0 && strcmp(arg, "LL") != 0 && strcmp(arg, "LL128") != 0)
            return cs_cli_usage_error("export", "--proto: expected Simple, LL or LL128, found "
                                                "'%s'", arg);
        a->wo.proto = arg;
        return CS_EXIT_OK;
    case 'm':
    case 'M':
        if (cs_cli_parse_size(arg, &v) != 0 || v > (uint64_t)INT64_MAX)
            return cs_cli_usage_error("export", "--%s: expected a size (1M, 65536), found '%s'",
                                      c == 'm' ? "min-bytes" : "max-bytes", arg);
        *(c == 'm' ? &a->wo.min_bytes : &a->wo.max_bytes) = (int64_t)v;
        return CS_EXIT_OK;
    case 'L': a->wo.check_limits = 0; return CS_EXIT_OK;
    case 'i': a->inplace = 1; return CS_EXIT_OK;
    case 'o': a->output = arg; return CS_EXIT_OK;
    case 'F': a->force = 1; return CS_EXIT_OK;
    default: return CS_EXIT_USAGE;
    }
}

/* parse: options, then msccl [FILE]. */
static int parse(int argc, char **argv, export_args_t *a)
{
    static const struct option opts[] = {{"coll", required_argument, 0, 'c'},
                                         {"algo", required_argument, 0, 'a'},
                                         {"ranks", required_argument, 0, 'P'},
                                         {"param", required_argument, 0, 'p'},
                                         {"name", required_argument, 0, 'n'},
                                         {"proto", required_argument, 0, 'x'},
                                         {"min-bytes", required_argument, 0, 'm'},
                                         {"max-bytes", required_argument, 0, 'M'},
                                         {"no-limits", no_argument, 0, 'L'},
                                         {"inplace", no_argument, 0, 'i'},
                                         CS_CLI_OPTS_OUTPUT};
    int rc = cs_cli_options("export", argc, argv, "ho:", opts, help, parse_opt, a);
    if (rc != CS_EXIT_OK)
        return rc;
    if (optind < argc && strcmp(argv[optind], "msccl") != 0)
        return cs_cli_usage_error("export", "unknown format '%s' (known: msccl)", argv[optind]);
    if (optind++ >= argc) {
        help(stderr);
        return CS_EXIT_USAGE;
    }
    a->file = optind < argc ? argv[optind++] : NULL;
    if (optind < argc)
        return cs_cli_usage_error("export", "unexpected argument '%s' (see --help)", argv[optind]);
    if (a->wo.max_bytes && a->wo.max_bytes < a->wo.min_bytes)
        return cs_cli_usage_error("export", "--max-bytes is below --min-bytes");
    if ((a->file != NULL) == (a->coll_name != NULL || a->algo != NULL))
        return cs_cli_usage_error("export", "give a schedule file or --coll, --algo and --ranks "
                                            "(see --help)");
    if (!a->file && (!a->coll_name || !a->algo || a->ranks < 0))
        return cs_cli_usage_error("export", "--coll, --algo and --ranks go together");
    if (a->algo && strchr(a->algo, ','))
        return cs_cli_usage_error("export", "one algorithm at a time, found '%s'", a->algo);
    if (a->file && cs_cli_is_schedule_set(a->file))
        return cs_cli_usage_error("export", "one schedule file at a time, found '%s'", a->file);
    return CS_EXIT_OK;
}

/* build: the file's schedule or the registry algorithm's. */
static int build(const export_args_t *a, cs_cli_scheds_t *b)
{
    cs_cli_want_t w = {"export", 0, NULL, 0, 0, NULL, NULL, 0, NULL};
    if (a->file)
        return cs_cli_scheds_load(&w, a->file, b);
    cs_coll_desc_t d = {CS_COLL_COUNT, (int32_t)a->ranks, 0, a->inplace};
    int rc = cs_cli_parse_coll("export", a->coll_name, &d.coll);
    return rc != CS_EXIT_OK ? rc : cs_cli_scheds_build(&w, a->algo, NULL, &a->params, &d, b);
}

int cs_cli_export(int argc, char **argv)
{
    export_args_t a = {.wo = {.check_limits = 1}, .output = "-", .ranks = -1};
    cs_cli_params_init(&a.params);
    int rc = parse(argc, argv, &a);
    if (rc != CS_EXIT_OK)
        return rc == CS_CLI_DONE ? CS_EXIT_OK : rc;
    cs_err_t err = {0};
    if (cs_msccl_check_output(a.output, a.force ? CS_OUT_FORCE : 0, &err) != CS_OK)
        return cs_cli_usage_error("export", "-o %s: %s", a.output, err.msg);
    cs_cli_scheds_t b;
    cs_cli_scheds_init(&b);
    rc = build(&a, &b);
    if (rc == CS_EXIT_OK)
        rc = cs_cli_scheds_verify("export", &b, a.file, CS_CLI_VERIFY_ALWAYS);
    if (rc == CS_EXIT_OK) {
        int st = cs_msccl_save(b.sched[0], &a.wo, a.output, a.force ? CS_OUT_FORCE : 0, &err);
        rc = cs_cli_exit_code(st);
        if (rc != CS_EXIT_OK)
            fprintf(stderr, "collstep export: %s\n", err.msg);
    }
    cs_cli_scheds_free(&b);
    return rc;
}
