/* cmd_platform.c - `collstep platform`: list, show and export platforms. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cs_out.h"
#include "cs_platform.h"
#ifdef CS_HAVE_MODEL
#include "cs_nccl.h"
#endif

static void help(FILE *f)
{
    fprintf(f,
            "usage: collstep platform list\n"
            "       collstep platform show NAME[:key=value,...] | FILE.xml\n"
            "       collstep platform export NAME[:key=value,...] | FILE.xml -o FILE.xml\n"
            "                                [--force]\n"
            "\n"
            "Platforms are presets of the seed systems' fabrics (every link tagged with its\n"
            "tier) or any SimGrid 3.32 platform file: zones of every routing, <cluster>\n"
            "(flat, backbone, limiters, FAT_TREE, TORUS, DRAGONFLY), <cabinet>, <peer>.\n"
            "SimGrid builds a file and collstep reads what it built (docs/platforms.md):\n"
            "  tiers   a link's 'tier' property, else derived from what the link is (a\n"
            "          cluster's host link, backbone, limiter; fat-tree level; torus\n"
            "          dimension; dragonfly local/row/group/global; 'link' for a plain <link>)\n"
            "  ranks   hosts with a 'device' property (gpu or cpu) in document order; when\n"
            "          none has one, every host in SimGrid's order (names sorted as strings,\n"
            "          as SMPI without a hostfile); --map overrides in 'collstep sim'\n"
            "  checks  positive bandwidths, non-negative latencies (errors name the\n"
            "          file:line); a file SimGrid refuses: one line, FILE:LINE: SimGrid cannot\n"
            "          load it: SimGrid's words: what is missing (the same in every command)\n"
            "\n"
            "  list      presets with a one-line summary and their parameters\n"
            "  show      tiers (links, bandwidth, latency, calibration factors), the ranks,\n"
            "            their reduction rate (host speed), the node picture with sources\n"
            "            (presets), and topology figures from an igraph graph: diameter in\n"
            "            hops, bisection bandwidth (max-flow between the halves of the ranks);\n"
            "            for a file, the graph of the routes SimGrid computes between the\n"
            "            ranks' hosts, the pairs of ranks without a route (a schedule sending\n"
            "            between them is refused by sim), the link halves that carry both a\n"
            "            rank's sends and its receives, and hier's dims from the routes'\n"
            "            latencies (as plan finds the tiers) when the file gives none\n"
            "  export    write the SimGrid XML (whole or not at all, marked as written by\n"
            "            collstep) for editing; load it back with --platform FILE.xml.  An\n"
            "            existing FILE.xml is replaced only when collstep wrote it (platform\n"
            "            export, calibrate); --force replaces any other file; -o - writes\n"
            "            standard output\n"
            "\n%s\n"
            "example: collstep platform show summit:nodes=16\n"
            "         collstep platform show my-cluster.xml\n",
            cs_cli_exit_help);
}

static int cmd_list(void)
{
    for (int i = 0; i < cs_platform_preset_count(); i++) {
        printf("%-22s %s\n", cs_platform_preset_name(i), cs_platform_preset_summary(i));
        printf("%-22s   parameters: %s\n", "", cs_platform_preset_params(i));
    }
    return CS_EXIT_OK;
}

static int open_or_fail(const char *spec, unsigned flags, cs_platform_t **p)
{
    cs_err_t err = {0};
    if (cs_platform_open_ex(spec, flags, p, &err) != CS_OK) {
        fprintf(stderr, "collstep platform: %s\n", err.msg);
        return CS_EXIT_USAGE;
    }
    return CS_EXIT_OK;
}

int cs_cli_platform(int argc, char **argv)
{
    static const struct option opts[] = {CS_CLI_OPTS_OUTPUT};
    const char *output = NULL;
    int c, rc = CS_EXIT_OK, force = 0;
    optind = 1;
    while ((c = cs_cli_getopt("platform", argc, argv, "ho:", opts, help, &rc)) != -1) {
        switch (c) {
        case 'o':
            output = optarg;
            break;
        case 'F':
            force = 1;
            break;
        default: /* CS_CLI_OPT_EXIT: --help or a bad option */
            return rc;
        }
    }
    if (optind >= argc) {
        help(stderr);
        return CS_EXIT_USAGE;
    }
    const char *verb = argv[optind];
    int nargs = argc - optind - 1;
    if (strcmp(verb, "list") == 0) {
        if (nargs != 0)
            return cs_cli_usage_error("platform", "list takes no argument");
        return cmd_list();
    }
    if (strcmp(verb, "show") != 0 && strcmp(verb, "export") != 0)
        return cs_cli_usage_error("platform", "unknown verb '%s' (expected list, show or export)",
                                  verb);
    if (nargs != 1)
        return cs_cli_usage_error("platform", "%s takes one platform", verb);
    if (strcmp(verb, "export") == 0 && output == NULL)
        return cs_cli_usage_error("platform", "export needs -o FILE.xml");
    if (output && strcmp(verb, "export") != 0)
        return cs_cli_usage_error("platform", "-o: only with export");
    cs_err_t err = {0};
    int oflags = (force ? CS_OUT_FORCE : 0) | CS_OUT_STDOUT; /* -o -: standard output */
    if (output && cs_out_check(output, oflags, &cs_platform_out_kind, 0, &err) != CS_OK)
        return cs_cli_usage_error("platform", "-o %s: %s", output, err.msg);
    cs_platform_t *p = NULL;
    /* show: a file's figures are computed while SimGrid has it loaded */
    rc = open_or_fail(argv[optind + 1], strcmp(verb, "show") == 0 ? CS_PLAT_OPEN_TOPOLOGY : 0, &p);
    if (rc != CS_EXIT_OK)
        return rc;
    int st;
#ifdef CS_HAVE_MODEL
    /* a file's fitted terms that do not parse: an error here as in sim,
     * plan and validate (a hand edit checked with show) */
    if (p->nccl_fit[0]) {
        char where[512];
        cs_nccl_fit_t fit;
        cs_err_t fe = {0};
        snprintf(where, sizeof(where), "%s:%d", p->spec, p->nccl_fit_line);
        if (cs_nccl_fit_parse(p->nccl_fit, where, &fit, &fe) != CS_OK) {
            cs_platform_close(p);
            return cs_cli_usage_error("platform", "%s", fe.msg);
        }
    }
#endif
    if (strcmp(verb, "show") == 0) {
        if (cs_platform_print(p, stdout, &err) != CS_OK) {
            fprintf(stderr, "collstep platform: %s\n", err.msg);
            rc = CS_EXIT_RUNTIME;
        }
    } else if ((st = cs_platform_export(p, output, oflags, &err)) != CS_OK) {
        fprintf(stderr, "collstep platform: -o %s: %s\n", output, err.msg);
        rc = cs_cli_exit_code(st);
    } else {
        fprintf(stderr, "collstep platform: wrote %s (%llu %s)\n",
                strcmp(output, "-") ? output : "standard output", (unsigned long long)p->ndevices,
                p->rank_noun);
    }
    cs_platform_close(p);
    return rc;
}
