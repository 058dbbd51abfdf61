/* cmd_gen.c - `collstep gen`: run a generator and write the schedule text. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cs_algo.h"
#include "cs_out.h"
#include "cs_text.h"
#include "cs_verify.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: collstep gen COLL ALGO --ranks P [--root R] [--param KEY=VALUE ...]\n"
            "                    [--verify] [-o FILE [--force]]\n"
            "       collstep gen --coll COLL --algo ALGO --ranks P ...   (as sim and run)\n"
            "\n"
            "Generate the step graph of algorithm ALGO for collective COLL on P ranks and\n"
            "write it in the schedule text format (docs/schedule-format.md).\n"
            "\n"
            "  --ranks P            number of ranks (required, >= 1)\n"
            "  --root R             root rank of broadcast / reduce (default 0)\n"
            "  --param KEY=VALUE    generator parameter, repeatable or comma separated\n"
            "                       (see 'collstep algos')\n"
            "  --verify             verify the schedule before writing it (exit 1 if wrong)\n"
            "  -o, --output FILE    write to FILE, whole or not at all (default: stdout); an\n"
            "                       existing file is replaced only when it is a schedule\n"
            "  --force              replace an existing FILE that is not a schedule\n"
            "\n%s\n"
            "example: collstep gen allreduce hier --ranks 1536 --param dims=6x256 -o hier.sched\n",
            cs_cli_exit_help);
}

int cs_cli_gen(int argc, char **argv)
{
    static const struct option opts[] = {{"ranks", required_argument, 0, 'P'},
                                         {"root", required_argument, 0, 'r'},
                                         {"param", required_argument, 0, 'p'},
                                         {"verify", no_argument, 0, 'v'},
                                         {"output", required_argument, 0, 'o'},
                                         {"coll", required_argument, 0, 'c'},
                                         {"algo", required_argument, 0, 'a'},
                                         {"force", no_argument, 0, 'F'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    long ranks = -1, root = 0;
    int verify = 0, force = 0, c;
    const char *output = "-", *coll_s = NULL, *algo_s = NULL;
    cs_cli_params_t params;
    cs_err_t err = {0};
    cs_cli_params_init(&params);
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'P':
            ranks = strtol(optarg, &end, 10);
            if (*end != '\0' || ranks < 1 || ranks > (1L << 24))
                return cs_cli_usage_error("gen", "--ranks: expected an integer in [1, %ld], found '%s'",
                                          1L << 24, optarg);
            break;
        case 'r':
            root = strtol(optarg, &end, 10);
            if (*end != '\0' || root < 0)
                return cs_cli_usage_error("gen", "--root: expected a rank, found '%s'", optarg);
            break;
        case 'p':
            if (cs_cli_params_add(&params, "gen", optarg) != CS_EXIT_OK)
                return CS_EXIT_USAGE;
            break;
        case 'c':
            coll_s = optarg;
            break;
        case 'a':
            algo_s = optarg;
            break;
        case 'F':
            force = 1;
            break;
        case 'v':
            verify = 1;
            break;
        case 'o':
            output = optarg;
            break;
        case 'h':
            help(stdout);
            return CS_EXIT_OK;
        default:
            help(stderr);
            return CS_EXIT_USAGE;
        }
    }
    /* COLL and ALGO as words (collstep gen allreduce ring) or as in sim and
     * run (--coll allreduce --algo ring) */
    if (!coll_s && optind < argc)
        coll_s = argv[optind++];
    if (!algo_s && optind < argc)
        algo_s = argv[optind++];
    if (optind < argc)
        return cs_cli_usage_error("gen", "unexpected argument '%s' (see --help)", argv[optind]);
    if (!coll_s || !algo_s)
        return cs_cli_usage_error("gen", "give the collective and the algorithm (collstep gen "
                                         "allreduce ring --ranks 8, see --help)");
    if (ranks < 0)
        return cs_cli_usage_error("gen", "--ranks is required");
    if (root >= ranks)
        return cs_cli_usage_error("gen", "--root %ld out of range [0, %ld)", root, ranks);
    cs_coll_t coll = cs_coll_parse(coll_s);
    if (coll == CS_COLL_COUNT)
        return cs_cli_usage_error("gen", "unknown collective '%s' (see 'collstep algos')", coll_s);
    const cs_algo_t *a = cs_algo_find(coll, algo_s);
    if (a == NULL)
        return cs_cli_usage_error("gen", "no algorithm '%s' for %s (see 'collstep algos')", algo_s,
                                  cs_coll_name(coll));
    if (!cs_coll_has_root(coll) && root != 0)
        return cs_cli_usage_error("gen", "%s has no root", cs_coll_name(coll));
    int rc = cs_cli_params_check(&params, "gen", &a, 1);
    if (rc != CS_EXIT_OK)
        return rc;
    cs_coll_desc_t d = {coll, (int32_t)ranks, (int32_t)root, 0};
    cs_sched_t *s = NULL;
    if ((rc = cs_cli_build("gen", algo_s, &d, &params, NULL, &s, NULL, 0)) != CS_EXIT_OK)
        return rc;
    if (verify && (rc = cs_cli_verify("gen", s, algo_s)) != CS_EXIT_OK) {
        cs_sched_destroy(s);
        return rc;
    }
    int st = cs_sched_save_flags(s, output, CS_OUT_STDOUT | (force ? CS_OUT_FORCE : 0), &err);
    rc = st == CS_OK ? CS_EXIT_OK : st == CS_ERR_EXISTS ? CS_EXIT_USAGE : CS_EXIT_RUNTIME;
    if (rc != CS_EXIT_OK)
        fprintf(stderr, "collstep gen: %s\n", err.msg);
    cs_sched_destroy(s);
    return rc;
}
