/* cmd_gen.c - `collstep gen`: run a generator and write the schedule text. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cs_algo.h"
#include "cs_text.h"
#include "cs_verify.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: collstep gen COLL ALGO --ranks P [--root R] [--param KEY=VALUE ...]\n"
            "                    [--verify] [-o FILE]\n"
            "\n"
            "Generate the step graph of algorithm ALGO for collective COLL on P ranks and\n"
            "write it in the schedule text format (docs/schedule-format.md).\n"
            "\n"
            "  --ranks P            number of ranks (required, >= 1)\n"
            "  --root R             root rank of broadcast / reduce (default 0)\n"
            "  --param KEY=VALUE    generator parameter, repeatable or comma separated\n"
            "                       (see 'collstep algos')\n"
            "  --verify             verify the schedule before writing it (exit 1 if wrong)\n"
            "  -o, --output FILE    write to FILE, whole or not at all (default: stdout)\n"
            "\n"
            "example: collstep gen allreduce hier --ranks 1536 --param dims=6x256 -o hier.sched\n");
}

/* Shared by gen, sim and run: parse "--ranks/--root/--param", build with
 * the registry.  Returns an exit code; *out on success. */
static int build_schedule(const char *coll_s, const char *algo_s, long ranks, long root,
                          cs_params_t *params, cs_sched_t **out)
{
    cs_coll_t coll = cs_coll_parse(coll_s);
    if (coll == CS_COLL_COUNT)
        return cs_cli_usage_error("gen", "unknown collective '%s' (see 'collstep algos')", coll_s);
    const cs_algo_t *a = cs_algo_find(coll, algo_s);
    if (a == NULL)
        return cs_cli_usage_error("gen", "no algorithm '%s' for %s (see 'collstep algos --coll %s')",
                                  algo_s, cs_coll_name(coll), cs_coll_name(coll));
    if (!cs_coll_has_root(coll) && root != 0)
        return cs_cli_usage_error("gen", "%s has no root", cs_coll_name(coll));
    cs_coll_desc_t d = {coll, (int32_t)ranks, (int32_t)root, 0};
    cs_err_t err = {0};
    int st = cs_algo_build(a, &d, params, out, &err);
    if (st != CS_OK)
        return cs_cli_usage_error("gen", "%s %s on %ld ranks: %s", cs_coll_name(coll), algo_s, ranks,
                                  err.msg);
    return CS_EXIT_OK;
}

int cs_cli_gen(int argc, char **argv)
{
    static const struct option opts[] = {{"ranks", required_argument, 0, 'P'},
                                         {"root", required_argument, 0, 'r'},
                                         {"param", required_argument, 0, 'p'},
                                         {"verify", no_argument, 0, 'v'},
                                         {"output", required_argument, 0, 'o'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    long ranks = -1, root = 0;
    int verify = 0, c;
    const char *output = "-";
    cs_params_t params;
    cs_err_t err = {0};
    cs_params_init(&params);
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
            if (cs_params_parse(&params, optarg, &err) != CS_OK)
                return cs_cli_usage_error("gen", "--param: %s", err.msg);
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
    if (argc - optind != 2) {
        help(stderr);
        return CS_EXIT_USAGE;
    }
    if (ranks < 0)
        return cs_cli_usage_error("gen", "--ranks is required");
    if (root >= ranks)
        return cs_cli_usage_error("gen", "--root %ld out of range [0, %ld)", root, ranks);
    cs_sched_t *s = NULL;
    int rc = build_schedule(argv[optind], argv[optind + 1], ranks, root, &params, &s);
    if (rc != CS_EXIT_OK)
        return rc;
    if (verify) {
        cs_verify_report_t rep = {0};
        int st = cs_verify(s, NULL, &rep, &err);
        if (st != CS_OK) {
            for (uint32_t i = 0; i < rep.n; i++)
                fprintf(stderr, "collstep gen: %s\n", rep.findings[i].msg);
            if (st != CS_ERR_VERIFY)
                fprintf(stderr, "collstep gen: cannot verify: %s\n", err.msg);
            cs_verify_report_fini(&rep);
            cs_sched_destroy(s);
            return st == CS_ERR_VERIFY ? CS_EXIT_FAIL : CS_EXIT_USAGE;
        }
        cs_verify_report_fini(&rep);
    }
    rc = cs_sched_save(s, output, &err) == CS_OK ? CS_EXIT_OK : CS_EXIT_FAIL;
    if (rc != CS_EXIT_OK)
        fprintf(stderr, "collstep gen: %s\n", err.msg);
    cs_sched_destroy(s);
    return rc;
}
