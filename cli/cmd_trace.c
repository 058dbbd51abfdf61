/*
 * cmd_trace.c - `collstep trace DIR`: summarise a trace written by
 * `collstep sim --trace DIR` or `collstep run --trace DIR`: per-tier table, the
 * bottleneck (a tier, or the ranks' reductions), busiest links; as a table, CSV
 * or JSON.  Exit codes: 0 done,
 * 2 usage errors or a directory that is not a trace.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cs_trace.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: collstep trace DIR [--format table|csv|json] [--links N]\n"
            "\n"
            "Summarise the utilization trace in DIR (written by 'collstep sim --trace DIR' or\n"
            "'collstep run --trace DIR'):\n"
            "per tier the links that carried traffic, bytes moved, mean and peak utilization,\n"
            "busy fraction and busiest link; in a simulation, the busiest rank's reductions\n"
            "(the fraction of the run its device spent reducing); the bottleneck (the tier\n"
            "whose busiest link has the highest mean utilization, or 'reduction' when that\n"
            "rank's fraction is higher), and the N busiest links.  A directory of several\n"
            "instances (index.csv) is summarised instance by instance.\n"
            "\n"
            "  --format F   table (default), csv (one row per tier, and one for reduction)\n"
            "               or json\n"
            "  --links N    busiest links to list (default 10, 0 for none)\n"
            "\n"
            "Files of a trace: trace.json (Perfetto / chrome://tracing), steps.csv, links.csv,\n"
            "tiers.csv, summary.json, utilization.png (gnuplot; plot.gp redraws it).\n"
            "\n%s",
            cs_cli_exit_help);
}

int cs_cli_trace(int argc, char **argv)
{
    static const struct option opts[] = {{"format", required_argument, 0, 'f'},
                                         {"links", required_argument, 0, 'l'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *format = "table";
    long nlinks = 10;
    int c, rc = CS_EXIT_OK;
    optind = 1;
    while (rc == CS_EXIT_OK &&
           (c = cs_cli_getopt("trace", argc, argv, "h", opts, help, &rc)) != -1) {
        if (c == 'f')
            format = optarg;
        else if (c == 'l')
            rc = cs_cli_parse_long("trace", "--links", optarg, 0, 1000000, &nlinks);
        else /* CS_CLI_OPT_EXIT: --help or a bad option */
            return rc;
    }
    if (rc != CS_EXIT_OK)
        return rc;
    if (optind + 1 != argc)
        return cs_cli_usage_error("trace", "expected one trace directory (see --help)");
    cs_trace_fmt_t fmt;
    if (strcmp(format, "table") == 0)
        fmt = CS_TRACE_FMT_TABLE;
    else if (strcmp(format, "csv") == 0)
        fmt = CS_TRACE_FMT_CSV;
    else if (strcmp(format, "json") == 0)
        fmt = CS_TRACE_FMT_JSON;
    else
        return cs_cli_usage_error("trace", "--format: expected table, csv or json, found '%s'",
                                  format);
    cs_err_t err = {0};
    if (cs_trace_summarize(argv[optind], fmt, (int)nlinks, stdout, &err) != CS_OK)
        return cs_cli_usage_error("trace", "%s", err.msg);
    return CS_EXIT_OK;
}
