/*
 * cli_nccl.c - see cli_nccl.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_nccl.h"
#ifdef CS_HAVE_MODEL
#include "cs_nccl.h"
#endif

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
    /* a preset's devices (named after it) and a file's without a
     * device_name: the GPU's name as nccl-tests prints it, where known */
    const char *gpu = NULL;
#ifdef CS_HAVE_MODEL
    gpu = cs_nccl_device_name(p);
#endif
    for (int r = 0; r < ranks; r++)
        if (!(*devs)[r][0] || (!p->is_file && gpu)) {
            char *g = strdup(gpu ? gpu : "simulated device");
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
    t->devnum = NULL;
    /* NODE-gN hosts, D of them per node: nccl-tests' "on NODE device N" */
    int D = cs_cli_node_size(p);
    char **lab = D > 1 ? calloc((size_t)ranks, sizeof(char *)) : NULL;
    int *dn = lab ? calloc((size_t)ranks, sizeof(int)) : NULL;
    int all = lab && dn;
    for (int r = 0; r < ranks && all; r++) {
        char buf[256];
        all = cs_cli_node_label(hosts[r], buf, sizeof(buf), &dn[r]) && dn[r] < D &&
              (lab[r] = strdup(buf)) != NULL;
    }
    if (all) {
        t->hosts = (const char *const *)lab;
        t->devnum = dn;
    } else {
        for (int r = 0; lab && r < ranks; r++)
            free(lab[r]);
        free(lab), free(dn);
    }
    return CS_EXIT_OK;
}

void cs_cli_nccl_table_free(cs_nccl_table_t *t, char **devs)
{
    if (devs)
        cs_platform_names_free(devs, t->ranks);
    if (t->devnum) { /* the node names are this table's */
        for (int r = 0; r < t->ranks; r++)
            free((char *)t->hosts[r]);
        free((void *)t->hosts), free((void *)t->devnum);
        t->hosts = NULL, t->devnum = NULL;
    }
}

int cs_cli_node_size(const cs_platform_t *p)
{
    /* gb200-nvl72 (or a file exported from it): a tray, the host of 4 GPUs
     * that an nccl-tests device block names */
    const char *spec = p->is_file && p->xml ? strstr(p->xml, "\"collstep_spec\" value=\"")
                                            : p->spec;
    if (spec && p->is_file)
        spec += strlen("\"collstep_spec\" value=\"");
    if (spec && strncmp(spec, "gb200-nvl72", 11) == 0)
        return 4;
    return p->ndims > 0 ? p->dims[0] : 0;
}

int cs_cli_node_label(const char *name, char *buf, size_t len, int *dev)
{
    size_t n = strlen(name), d = n;
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
        d--;
    if (d == n || d < 3 || name[d - 1] != 'g' || name[d - 2] != '-' || d - 2 >= len ||
        n - d > 6)
        return 0;
    memcpy(buf, name, d - 2);
    buf[d - 2] = 0;
    *dev = atoi(name + d);
    return 1;
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
