/*
 * cli.h - shared pieces of the `collstep` command-line front end.
 *
 * Every subcommand is `int cs_cli_<name>(int argc, char **argv)` with
 * argv[0] the subcommand name, returning the process exit code:
 * 0 success, 1 "the answer is no" (verification failed, wrong results),
 * 2 usage errors and malformed input, other codes documented per command.
 * Subcommands print their own --help.  Errors go to stderr as
 * "collstep <cmd>: <message>".
 */
#ifndef CS_CLI_H
#define CS_CLI_H

#include <stdint.h>
#include <stdio.h>

#define CS_EXIT_OK 0
#define CS_EXIT_FAIL 1
#define CS_EXIT_USAGE 2

/* Sizes like nccl-tests: "1024", "64K", "100M", "1G" (K/M/G = 2^10/2^20/2^30,
 * also "KB"/"KiB", "B" suffix allowed), and "100MB" as 100*2^20.  Returns 0 or -1. */
int cs_cli_parse_size(const char *s, uint64_t *out);
/* "SIZE" or "SIZE:MAX[:FACTOR]" -> min, max, factor (default 2). Returns 0 or -1. */
int cs_cli_parse_sweep(const char *s, uint64_t *min, uint64_t *max, double *factor);
/* Print "collstep <cmd>: message" to stderr (printf style); returns CS_EXIT_USAGE. */
int cs_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int cs_cli_algos(int argc, char **argv);
int cs_cli_gen(int argc, char **argv);
int cs_cli_verify(int argc, char **argv);
int cs_cli_stats(int argc, char **argv);
int cs_cli_sim(int argc, char **argv);      /* sim/ engine */
int cs_cli_platform(int argc, char **argv); /* platforms/ */
int cs_cli_trace(int argc, char **argv);    /* traces/ */
int cs_cli_run(int argc, char **argv);      /* exec/ */

#endif /* CS_CLI_H */
