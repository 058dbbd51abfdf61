/*
 * cli_nccl.h - `--format nccl-tests` of sim and plan (cli_nccl.c): the
 * checks before any work, each table's sweep header and devices, and the
 * report (core/cs_results.h prints the layout).
 */
#ifndef CS_CLI_NCCL_H
#define CS_CLI_NCCL_H

#include "cli.h"
#include "cs_platform.h"
#include "cs_results.h"

/* The sizes as asked (before rounding to whole elements) must be a sweep
 * nccl-tests can run (cs_nccl_sweep), `size_arg` being the --size value;
 * a usage error otherwise (printed, CS_EXIT_USAGE). */
int cs_cli_nccl_check_sizes(const char *cmd, const char *size_arg, const uint64_t *asked, int n);

/* Fill the sweep (from `asked`), hosts and devices of t for `ranks` ranks
 * on `hosts` of platform p; the device names are *devs (free with
 * cs_platform_names_free(*devs, ranks)): the platform's (see
 * cs_platform_device_names), "simulated device" where it has none.  An exit
 * code (out of memory: said, CS_EXIT_RUNTIME). */
int cs_cli_nccl_table(const char *cmd, const cs_platform_t *p, const char *const *hosts,
                      int ranks, const uint64_t *asked, int nasked, cs_nccl_table_t *t,
                      char ***devs);

/* Print the tables, or save them to r->output whole or not at all (r->force);
 * exit codes as cs_cli_report. */
int cs_cli_nccl_report(const char *cmd, const cs_cli_report_t *r, const cs_nccl_table_t *t,
                       int n);

#endif /* CS_CLI_NCCL_H */
