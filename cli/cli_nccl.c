/*
 * cli_nccl.c - see cli_nccl.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_nccl.h"

int cs_cli_nccl_check_sizes(const char *cmd, const char *size_arg, const uint64_t *asked, int n)
{
    uint64_t lo, hi, step;
    int factor;
    if (cs_nccl_sweep(asked, n, &lo, &hi, &step, &factor) == CS_OK)
        return CS_EXIT_OK;
    return cs_cli_usage_error(cmd, "--format nccl-tests: --size %s is not a sweep nccl-tests "
                                   "runs (sizes from -b MIN to -e MAX, each the one before times "
                                   "-f FACTOR or plus -i BYTES); give MIN:MAX[:FACTOR] or sizes "
                                   "a fixed number of bytes apart, smallest first",
                              size_arg);
}

int cs_cli_nccl_table(const char *cmd, const cs_platform_t *p, const char *const *hosts,
                      int ranks, const uint64_t *asked, int nasked, cs_nccl_table_t *t,
                      char ***devs)
{
    cs_err_t err;
    cs_err_clear(&err);
    if (cs_nccl_sweep(asked, nasked, &t->min_bytes, &t->max_bytes, &t->step, &t->step_factor) !=
        CS_OK) /* checked before any work: cs_cli_nccl_check_sizes */
        return cs_cli_usage_error(cmd, "--format nccl-tests: the sizes are not a sweep");
    if (cs_platform_device_names(p, hosts, ranks, devs, &err) != CS_OK) {
        fprintf(stderr, "collstep %s: %s\n", cmd, err.msg);
        return CS_EXIT_RUNTIME;
    }
    for (int r = 0; r < ranks; r++)
        if (!(*devs)[r][0]) {
            char *g = strdup("simulated device");
            if (!g) {
                cs_platform_names_free(*devs, ranks);
                fprintf(stderr, "collstep %s: out of memory\n", cmd);
                return CS_EXIT_RUNTIME;
            }
            free((*devs)[r]);
            (*devs)[r] = g;
        }
    t->ranks = ranks;
    t->hosts = hosts;
    t->devices = (const char *const *)*devs;
    return CS_EXIT_OK;
}

int cs_cli_nccl_report(const char *cmd, const cs_cli_report_t *r, const cs_nccl_table_t *t,
                       int n)
{
    cs_err_t err;
    cs_err_clear(&err);
    int st = r->output ? cs_results_save_nccl(r->output, r->force ? CS_RESULTS_FORCE : 0, t, n,
                                              &err)
                       : cs_results_print_nccl(stdout, t, n);
    fflush(stdout);
    if (st == CS_OK)
        return CS_EXIT_OK;
    fprintf(stderr, "collstep %s: %s\n", cmd, err.msg[0] ? err.msg : "cannot write the results");
    return cs_cli_exit_code(st);
}
