/* cmd_algos.c - `collstep algos`: the algorithm registry for humans and tools. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cs_algo.h"
#include "cs_results.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: collstep algos [--coll COLL] [--format table|json]\n"
            "\n"
            "List the registered algorithms: collective, name, one-line description and\n"
            "parameters with their defaults and bounds (an integer range, or how many\n"
            "factors or names a list takes); pass them as --param KEY=VALUE to gen, sim, run.\n"
            "\n"
            "  --coll COLL      only this collective (allreduce, reduce-scatter, allgather,\n"
            "                   broadcast, reduce, alltoall)\n"
            "  --format FMT     table (default) or json\n"
            "\n%s",
            cs_cli_exit_help);
}

static const char *kind_name(cs_param_kind_t k)
{
    return k == CS_PARAM_DIMS ? "dims" : k == CS_PARAM_LIST ? "list" : "int";
}

int cs_cli_algos(int argc, char **argv)
{
    static const struct option opts[] = {{"coll", required_argument, 0, 'c'},
                                         {"format", required_argument, 0, 'f'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int json = 0, c;
    cs_coll_t only = CS_COLL_COUNT;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            only = cs_coll_parse(optarg);
            if (only == CS_COLL_COUNT)
                return cs_cli_usage_error("algos", "unknown collective '%s'", optarg);
            break;
        case 'f':
            if (strcmp(optarg, "json") == 0)
                json = 1;
            else if (strcmp(optarg, "table") != 0)
                return cs_cli_usage_error("algos", "--format: expected table or json, found '%s'",
                                          optarg);
            break;
        case 'h':
            help(stdout);
            return CS_EXIT_OK;
        default:
            help(stderr);
            return CS_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return cs_cli_usage_error("algos", "unexpected argument '%s'", argv[optind]);
    int first = 1;
    if (json)
        printf("[");
    for (int i = 0; i < cs_algo_count(); i++) {
        const cs_algo_t *a = cs_algo_at(i);
        if (only != CS_COLL_COUNT && a->coll != only)
            continue;
        if (json) {
            printf("%s\n  {\"collective\": \"%s\", \"name\": ", first ? "" : ",",
                   cs_coll_name(a->coll));
            cs_json_write_str(stdout, a->name);
            printf(", \"description\": ");
            cs_json_write_str(stdout, a->desc);
            printf(", \"alpha_beta_formula\": %s, \"params\": [", a->cost ? "true" : "false");
            for (const cs_param_desc_t *p = a->params; p && p->key; p++) {
                printf("%s{\"key\": ", p == a->params ? "" : ", ");
                cs_json_write_str(stdout, p->key);
                printf(", \"default\": ");
                cs_json_write_str(stdout, p->def ? p->def : "");
                printf(", \"help\": ");
                cs_json_write_str(stdout, p->help ? p->help : "");
                printf(", \"kind\": \"%s\", \"min\": %ld, \"max\": %ld}", kind_name(p->kind),
                       p->min, p->max);
            }
            printf("]}");
        } else {
            printf("%-15s %-18s %s\n", cs_coll_name(a->coll), a->name, a->desc);
            for (const cs_param_desc_t *p = a->params; p && p->key; p++) {
                char bounds[64];
                cs_param_desc_bounds(p, bounds, sizeof(bounds));
                printf("%-15s %-18s   --param %s=%s  [%s]  %s\n", "", "", p->key,
                       p->def ? p->def : "", bounds, p->help ? p->help : "");
            }
        }
        first = 0;
    }
    if (json)
        printf("\n]\n");
    return CS_EXIT_OK;
}
