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
 * on `hosts` of platform p; the device names are *devs: the platform's (see
 * cs_platform_device_names), "simulated device" where it has none.  As
 * nccl-tests names a GPU by its host and its number there, a platform
 * whose node's devices are hosts NODE-gN (the presets: n0-g3, r0-t5-g2)
 * prints NODE and N (t->hosts, t->devnum allocated here); other hosts are
 * printed as they are, numbered by their place among the ranks on the same
 * host.  Free with cs_cli_nccl_table_free.  An exit code (out of memory:
 * said, CS_EXIT_RUNTIME). */
int cs_cli_nccl_table(const char *cmd, const cs_platform_t *p, const char *const *hosts,
                      int ranks, const uint64_t *asked, int nasked, cs_nccl_table_t *t,
                      char ***devs);
void cs_cli_nccl_table_free(cs_nccl_table_t *t, char **devs);

/* The devices of one node of p: its innermost dimension (`platform show`
 * prints the dims), a tray of 4 GPUs on gb200-nvl72; 0 without dims. */
int cs_cli_node_size(const cs_platform_t *p);

/* The node's name of device host `name` when it is NODE-gN (N digits):
 * NODE into buf, N into *dev, 1; else 0. */
int cs_cli_node_label(const char *name, char *buf, size_t len, int *dev);

/* Print the tables, or save them to r->output whole or not at all (r->force);
 * exit codes as cs_cli_report. */
int cs_cli_nccl_report(const char *cmd, const cs_cli_report_t *r, const cs_nccl_table_t *t,
                       int n);

#endif /* CS_CLI_NCCL_H */
