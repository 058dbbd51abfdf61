/* cmd_export.c - `collstep export msccl`: a schedule file, or a registry
 * algorithm, as an MSCCL algorithm XML (interop/cs_msccl.h, docs/msccl.md). */
#include <getopt.h>
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
            "first.\n"
            "\n"
            "  --name NAME          the algo's name (default: the algorithm's)\n"
            "  --proto P            Simple (default), LL or LL128\n"
            "  --min-bytes SIZE     minBytes: smallest call the file serves (default 0)\n"
            "  --max-bytes SIZE     maxBytes: largest call (default 0: no limit)\n"
            "  --no-limits          write even what the executor refuses (more than 64\n"
            "                       steps in a threadblock, 72 chunks in a step, 32 peers\n"
            "                       on a channel): for other executors and for collstep\n"
            "  --inplace            build the registry algorithm in place\n"
            "  -o, --output FILE    write to FILE, whole or not at all (default: stdout)\n"
            "  --force              replace an existing FILE that is not XML\n"
            "\n%s\n"
            "example: collstep export msccl --coll allreduce --algo ring --ranks 8 -o ring8.xml\n",
            cs_cli_exit_help);
}

int cs_cli_export(int argc, char **argv)
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
                                         {"output", required_argument, 0, 'o'},
                                         {"force", no_argument, 0, 'F'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    cs_msccl_write_opts_t wo = {.check_limits = 1};
    const char *coll_s = NULL, *algo_s = NULL, *output = "-";
    long ranks = -1;
    int force = 0, inplace = 0, c;
    uint64_t v;
    cs_cli_params_t params;
    cs_cli_params_init(&params);
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'c':
            coll_s = optarg;
            break;
        case 'a':
            algo_s = optarg;
            break;
        case 'P':
            ranks = strtol(optarg, &end, 10);
            if (*end != '\0' || ranks < 1 || ranks > 65536)
                return cs_cli_usage_error("export", "--ranks: expected 1 to 65536, found '%s'",
                                          optarg);
            break;
        case 'p':
            if (cs_cli_params_add(&params, "export", optarg) != CS_EXIT_OK)
                return CS_EXIT_USAGE;
            break;
        case 'n':
            wo.name = optarg;
            break;
        case 'x':
            if (strcmp(optarg, "Simple") != 0 && strcmp(optarg, "LL") != 0 &&
                strcmp(optarg, "LL128") != 0)
                return cs_cli_usage_error("export", "--proto: expected Simple, LL or LL128, "
                                          "found '%s'", optarg);
            wo.proto = optarg;
            break;
        case 'm':
        case 'M':
            if (cs_cli_parse_size(optarg, &v) != 0 || v > (uint64_t)INT64_MAX)
                return cs_cli_usage_error("export", "--%s: expected a size (1M, 65536), found "
                                          "'%s'", c == 'm' ? "min-bytes" : "max-bytes", optarg);
            if (c == 'm')
                wo.min_bytes = (int64_t)v;
            else
                wo.max_bytes = (int64_t)v;
            break;
        case 'L':
            wo.check_limits = 0;
            break;
        case 'i':
            inplace = 1;
            break;
        case 'o':
            output = optarg;
            break;
        case 'F':
            force = 1;
            break;
        case 'h':
            help(stdout);
            return CS_EXIT_OK;
        default:
            help(stderr);
            return CS_EXIT_USAGE;
        }
    }
    if (optind >= argc || strcmp(argv[optind], "msccl") != 0) {
        if (optind < argc)
            return cs_cli_usage_error("export", "unknown format '%s' (known: msccl)",
                                      argv[optind]);
        help(stderr);
        return CS_EXIT_USAGE;
    }
    optind++;
    const char *file = optind < argc ? argv[optind++] : NULL;
    if (optind < argc)
        return cs_cli_usage_error("export", "unexpected argument '%s' (see --help)", argv[optind]);
    if (wo.max_bytes && wo.max_bytes < wo.min_bytes)
        return cs_cli_usage_error("export", "--max-bytes is below --min-bytes");
    if ((file != NULL) == (coll_s != NULL || algo_s != NULL))
        return cs_cli_usage_error("export", "give a schedule file or --coll, --algo and --ranks "
                                  "(see --help)");
    cs_sched_t *s = NULL;
    cs_err_t err = {0};
    int rc;
    const char *name = file;
    if (cs_msccl_check_output(output, force ? CS_OUT_FORCE : 0, &err) != CS_OK)
        return cs_cli_usage_error("export", "-o %s: %s", output, err.msg);
    if (file) {
        s = cs_cli_load_sched(file, &err);
        if (s == NULL) {
            fprintf(stderr, "collstep export: %s\n", err.msg);
            return CS_EXIT_USAGE;
        }
    } else {
        if (!coll_s || !algo_s || ranks < 0)
            return cs_cli_usage_error("export", "--coll, --algo and --ranks go together");
        cs_coll_t coll = cs_coll_parse(coll_s);
        if (coll == CS_COLL_COUNT)
            return cs_cli_usage_error("export", "unknown collective '%s'", coll_s);
        const cs_algo_t *a = cs_algo_find(coll, algo_s);
        if (a == NULL)
            return cs_cli_usage_error("export", "no algorithm '%s' for %s (see 'collstep algos')",
                                      algo_s, cs_coll_name(coll));
        if ((rc = cs_cli_params_check(&params, "export", &a, 1)) != CS_EXIT_OK)
            return rc;
        cs_coll_desc_t d = {coll, (int32_t)ranks, 0, inplace};
        if ((rc = cs_cli_build("export", algo_s, &d, &params, NULL, &s, NULL, 0)) != CS_EXIT_OK)
            return rc;
        name = algo_s;
    }
    if ((rc = cs_cli_verify("export", s, name)) != CS_EXIT_OK) {
        cs_sched_destroy(s);
        return rc;
    }
    int st = cs_msccl_save(s, &wo, output, force ? CS_OUT_FORCE : 0, &err);
    rc = st == CS_OK ? CS_EXIT_OK
         : st == CS_ERR_EXISTS || st == CS_ERR_UNSUPPORTED ? CS_EXIT_USAGE
                                                          : CS_EXIT_RUNTIME;
    if (rc != CS_EXIT_OK)
        fprintf(stderr, "collstep export: %s\n", err.msg);
    if (file)
        cs_msccl_forget(s);
    cs_sched_destroy(s);
    return rc;
}
