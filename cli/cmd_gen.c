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
            "  --verify             verify the schedule before writing it (exit 1 if wrong);\n"
            "                       always verified, whatever sim and run remember\n"
            "  -o, --output FILE    write to FILE, whole or not at all (default: stdout); an\n"
            "                       existing file is replaced only when it is a schedule\n"
            "  --force              replace an existing FILE that is not a schedule\n"
            "\n%s\n"
            "example: collstep gen allreduce hier --ranks 1536 --param dims=6x256 -o hier.sched\n",
            cs_cli_exit_help);
}

typedef struct gen_args {
    long ranks, root;
    int verify, force;
    const char *output, *coll_name, *algo;
    cs_coll_t coll;
    cs_cli_params_t params;
} gen_args_t;

static int parse_opt(void *ctx, int c, const char *arg)
{
    gen_args_t *g = ctx;
    switch (c) {
    case 'P': return cs_cli_parse_long("gen", "--ranks", arg, 1, 1L << 24, &g->ranks);
    case 'r': return cs_cli_parse_long("gen", "--root", arg, 0, 1L << 24, &g->root);
    case 'p': return cs_cli_params_add(&g->params, "gen", arg);
    case 'c': g->coll_name = arg; return CS_EXIT_OK;
    case 'a': g->algo = arg; return CS_EXIT_OK;
    case 'F': g->force = 1; return CS_EXIT_OK;
    case 'v': g->verify = 1; return CS_EXIT_OK;
    case 'o': g->output = arg; return CS_EXIT_OK;
    default: return CS_EXIT_USAGE;
    }
}

/* parse: options, then COLL and ALGO as words (collstep gen allreduce ring)
 * or as in sim and run (--coll allreduce --algo ring). */
static int parse(int argc, char **argv, gen_args_t *g)
{
    static const struct option opts[] = {{"ranks", required_argument, 0, 'P'},
                                         {"root", required_argument, 0, 'r'},
                                         {"param", required_argument, 0, 'p'},
                                         {"verify", no_argument, 0, 'v'},
                                         {"coll", required_argument, 0, 'c'},
                                         {"algo", required_argument, 0, 'a'},
                                         CS_CLI_OPTS_OUTPUT};
    int rc = cs_cli_options("gen", argc, argv, "ho:", opts, help, parse_opt, g);
    if (rc != CS_EXIT_OK)
        return rc;
    if (!g->coll_name && optind < argc)
        g->coll_name = argv[optind++];
    if (!g->algo && optind < argc)
        g->algo = argv[optind++];
    if (optind < argc)
        return cs_cli_usage_error("gen", "unexpected argument '%s' (see --help)", argv[optind]);
    if (!g->coll_name || !g->algo)
        return cs_cli_usage_error("gen", "give the collective and the algorithm (collstep gen "
                                         "allreduce ring --ranks 8, see --help)");
    if (strchr(g->algo, ','))
        return cs_cli_usage_error("gen", "one algorithm at a time, found '%s'", g->algo);
    if (g->ranks < 1)
        return cs_cli_usage_error("gen", "--ranks is required");
    if (g->root >= g->ranks)
        return cs_cli_usage_error("gen", "--root %ld out of range [0, %ld)", g->root, g->ranks);
    if ((rc = cs_cli_parse_coll("gen", g->coll_name, &g->coll)) != CS_EXIT_OK)
        return rc;
    if (!cs_coll_has_root(g->coll) && g->root != 0)
        return cs_cli_usage_error("gen", "%s has no root", cs_coll_name(g->coll));
    return CS_EXIT_OK;
}

int cs_cli_gen(int argc, char **argv)
{
    gen_args_t g = {.ranks = -1, .output = "-"};
    cs_cli_params_init(&g.params);
    int rc = parse(argc, argv, &g);
    if (rc != CS_EXIT_OK)
        return rc == CS_CLI_DONE ? CS_EXIT_OK : rc;
    /* build (and verify) */
    cs_cli_scheds_t b;
    cs_cli_scheds_init(&b);
    cs_cli_want_t w = {"gen", 0, NULL, 0, 0, NULL, NULL, 0, NULL};
    cs_coll_desc_t d = {g.coll, (int32_t)g.ranks, (int32_t)g.root, 0};
    rc = cs_cli_scheds_build(&w, g.algo, NULL, &g.params, &d, &b);
    if (rc == CS_EXIT_OK && g.verify)
        rc = cs_cli_scheds_verify("gen", &b, g.algo, CS_CLI_VERIFY_ALWAYS);
    /* act: write it */
    if (rc == CS_EXIT_OK) {
        cs_err_t err = {0};
        int st = cs_sched_save_flags(b.sched[0], g.output,
                                     CS_OUT_STDOUT | (g.force ? CS_OUT_FORCE : 0), &err);
        rc = cs_cli_exit_code(st);
        if (rc != CS_EXIT_OK)
            fprintf(stderr, "collstep gen: %s\n", err.msg);
    }
    cs_cli_scheds_free(&b);
    return rc;
}
