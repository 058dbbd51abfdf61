/* cmd_import_nccl.c - `collstep import nccl-tests LOG...`: what collstep reads
 * in the output of NVIDIA's nccl-tests (core/cs_nccl_log.h,
 * docs/nccl-tests.md): per table the collective, versions, ranks and nodes,
 * the sweep and each row's size, time and bus bandwidth. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cs_nccl_log.h"
#include "cs_results.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: collstep import nccl-tests LOG... [--format table|json]\n"
            "\n"
            "Read logs of NVIDIA's nccl-tests (all_reduce_perf and the other *_perf\n"
            "programs, every layout since 2017, launcher lines and NCCL INFO lines\n"
            "around them) and print what collstep takes from them: per table the\n"
            "collective, nccl-tests and NCCL versions, NCCL_ALGO / NCCL_PROTO when the\n"
            "log shows them, ranks and nodes (ranks on one host share a node), the\n"
            "sweep, and per row the size, time (us) and bus bandwidth out of place and\n"
            "in place.  collstep sim and plan --format nccl-tests read back the same.\n"
            "\n"
            "  --format table|json  the layout printed (default table)\n"
            "\n%s\n"
            "example: collstep import nccl-tests slurm-1234.out\n",
            cs_cli_exit_help);
}

static void print_ranks(const cs_nccl_run_t *t)
{
    if (!t->ndevs) {
        printf("  ranks: no device block (validate and calibrate take the node of each rank "
               "from --groups FILE)\n");
        return;
    }
    printf("  ranks %d on %d node%s", t->ndevs, t->nnodes, t->nnodes == 1 ? "" : "s");
    for (int n = 0; n < t->nnodes; n++) {
        int k = 0, first = -1;
        for (int d = 0; d < t->ndevs; d++)
            if (t->devs[d].node == n)
                k++, first = first < 0 ? d : first;
        printf("%s %s (%d)", n ? "," : ":", t->devs[first].host, k);
    }
    printf("\n");
    if (t->ndevs)
        printf("  device %s\n", t->devs[0].name[0] ? t->devs[0].name : "(unnamed)");
}

static void print_meas(const cs_nccl_meas_t *m)
{
    if (m->present)
        printf("  %12.2f  %8.2f", m->time_us, m->busbw_GBps);
    else
        printf("  %12s  %8s", "-", "-");
}

static void print_table(int i, const cs_nccl_run_t *t)
{
    printf("table %d (lines %u-%u): %s", i + 1, t->line, t->end_line, cs_nccl_coll_name(t->coll));
    if (t->coll != CS_NCCL_UNKNOWN)
        printf(" (from the %s)", t->coll_from);
    printf("%s%s\n", t->program[0] ? ", program " : "", t->program);
    printf("  nccl-tests %s, NCCL %s%s%s%s\n", t->tests_version[0] ? t->tests_version : "?",
           t->nccl_version[0] ? t->nccl_version : "?", t->nccl_version[0] ? " (" : "",
           t->nccl_version_from, t->nccl_version[0] ? ")" : "");
    if (t->algo[0] || t->proto[0])
        printf("  NCCL_ALGO %s, NCCL_PROTO %s\n", t->algo[0] ? t->algo : "-",
               t->proto[0] ? t->proto : "-");
    if (strcmp(t->cs_source, "plan") == 0)
        printf("  collstep plan's choice per size, planned by collstep plan\n");
    if (t->cs_algo[0])
        printf("  collstep's %s%s%s%s, %s by collstep %s\n", t->cs_algo,
               t->cs_params[0] ? " (" : "", t->cs_params, t->cs_params[0] ? ")" : "",
               strcmp(t->cs_source, "run") == 0 ? "measured" : "simulated", t->cs_source);
    print_ranks(t);
    if (t->has_params)
        printf("  sweep %llu..%llu step %llu(%s), nThread %d nGpus %d, warmup %d iters %d, "
               "validation %d\n",
               (unsigned long long)t->min_bytes, (unsigned long long)t->max_bytes,
               (unsigned long long)t->step, t->step_factor ? "factor" : "bytes", t->nthread,
               t->ngpus, t->warmup_iters, t->iters, t->validation);
    printf("  %d row%s, time printed in %s\n", t->nrows, t->nrows == 1 ? "" : "s",
           t->time_ms ? "ms" : "us");
    if (t->nrows)
        printf("  %12s  %12s  %8s  %12s  %8s\n  %12s  %12s  %8s  %12s  %8s\n", "size",
               "oop time", "busbw", "ip time", "busbw", "(B)", "(us)", "(GB/s)", "(us)",
               "(GB/s)");
    for (int r = 0; r < t->nrows; r++) {
        printf("  %12llu", (unsigned long long)t->rows[r].size);
        print_meas(&t->rows[r].oop);
        print_meas(&t->rows[r].ip);
        printf("\n");
    }
    if (t->oob_values >= 0)
        printf("  out of bounds values %d %s\n", t->oob_values, t->oob_failed ? "FAILED" : "OK");
    if (!isnan(t->avg_busbw))
        printf("  avg bus bandwidth %g\n", t->avg_busbw);
}

static void json_num(const char *key, double v, int comma)
{
    if (isfinite(v))
        printf("\"%s\": %.10g%s", key, v, comma ? ", " : "");
    else
        printf("\"%s\": null%s", key, comma ? ", " : "");
}

static void json_meas(const char *key, const cs_nccl_meas_t *m)
{
    printf(", \"%s\": ", key);
    if (!m->present) {
        printf("null");
        return;
    }
    printf("{");
    json_num("time_us", m->time_us, 1);
    json_num("algbw_GBps", m->algbw_GBps, 1);
    json_num("busbw_GBps", m->busbw_GBps, 1);
    json_num("wrong", m->wrong, 0);
    printf("}");
}

static void json_table(const char *path, const cs_nccl_run_t *t)
{
    printf("{\"log\": ");
    cs_json_write_str(stdout, path);
    printf(", \"coll\": \"%s\", \"coll_from\": \"%s\", \"program\": ", cs_nccl_coll_name(t->coll),
           t->coll_from);
    cs_json_write_str(stdout, t->program);
    printf(", \"tests_version\": ");
    cs_json_write_str(stdout, t->tests_version);
    printf(", \"nccl_version\": ");
    cs_json_write_str(stdout, t->nccl_version);
    printf(", \"nccl_version_from\": \"%s\", \"algo\": ", t->nccl_version_from);
    cs_json_write_str(stdout, t->algo);
    printf(", \"proto\": ");
    cs_json_write_str(stdout, t->proto);
    printf(", \"collstep_algo\": ");
    cs_json_write_str(stdout, t->cs_algo);
    printf(", \"collstep_params\": ");
    cs_json_write_str(stdout, t->cs_params);
    printf(", \"collstep_source\": ");
    cs_json_write_str(stdout, t->cs_source);
    printf(", \"line\": %u, \"end_line\": %u, \"ranks\": %d, \"nodes\": %d, \"time_ms\": %d, "
           "\"devices\": [",
           t->line, t->end_line, t->ndevs, t->nnodes, t->time_ms);
    for (int d = 0; d < t->ndevs; d++) {
        printf("%s{\"rank\": %d, \"host\": ", d ? ", " : "", t->devs[d].rank);
        cs_json_write_str(stdout, t->devs[d].host);
        printf(", \"node\": %d, \"device\": %d, \"name\": ", t->devs[d].node, t->devs[d].device);
        cs_json_write_str(stdout, t->devs[d].name);
        printf("}");
    }
    printf("], \"rows\": [");
    for (int r = 0; r < t->nrows; r++) {
        const cs_nccl_row_t *w = &t->rows[r];
        printf("%s{\"size\": %llu, \"count\": %llu, \"type\": ", r ? ", " : "",
               (unsigned long long)w->size, (unsigned long long)w->count);
        cs_json_write_str(stdout, w->type);
        printf(", \"redop\": ");
        cs_json_write_str(stdout, w->redop);
        printf(", \"root\": %d", w->root);
        json_meas("out_of_place", &w->oop);
        json_meas("in_place", &w->ip);
        printf("}");
    }
    printf("], \"oob_values\": %d, ", t->oob_values);
    json_num("avg_busbw", t->avg_busbw, 0);
    printf("}");
}

/* A table without rows, or whose sweep stops short of its maxBytes
 * without nccl-tests' closing lines (a run killed or out of time), said on
 * stderr as validate and calibrate say it. */
static void say_short(const char *path, const cs_nccl_run_t *t)
{
    if (!t->nrows) {
        fprintf(stderr, "collstep import: %s:%u: the table has no rows (%s)\n", path, t->line,
                t->cut_line ? "the log is cut inside its first row"
                            : "the run stopped before its first size");
        return;
    }
    char cut[256];
    if (cs_cli_nccl_cut_text(t, cut, sizeof(cut)))
        fprintf(stderr, "collstep import: %s:%u: %s\n", path, t->rows[t->nrows - 1].line, cut);
}

int cs_cli_import_nccl(int argc, char **argv)
{
    static const struct option opts[] = {{"format", required_argument, 0, 'f'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int c, rc = CS_EXIT_OK, json = 0;
    optind = 1;
    while ((c = cs_cli_getopt("import", argc, argv, "hf:", opts, help, &rc)) != -1) {
        if (c != 'f')
            return rc;
        if (strcmp(optarg, "table") != 0 && strcmp(optarg, "json") != 0)
            return cs_cli_usage_error("import", "--format: expected table or json, found '%s'",
                                      optarg);
        json = optarg[0] == 'j';
    }
    if (optind >= argc) {
        help(stderr);
        return CS_EXIT_USAGE;
    }
    /* every log read before anything is printed: a log that does not read
     * leaves no partial report (nor JSON of the others) behind */
    int nl = argc - optind;
    cs_nccl_log_t **logs = calloc((size_t)nl, sizeof(*logs));
    if (!logs) {
        fprintf(stderr, "collstep import: out of memory\n");
        return CS_EXIT_RUNTIME;
    }
    for (int a = optind; a < argc; a++) {
        cs_err_t err = {0};
        int st = cs_nccl_log_load(argv[a], &logs[a - optind], &err);
        if (st != CS_OK) {
            fprintf(stderr, "collstep import: %s\n", err.msg);
            for (int i = 0; i < nl; i++)
                cs_nccl_log_destroy(logs[i]);
            free(logs);
            return cs_cli_input_exit_code(argv[a], st);
        }
    }
    if (json)
        printf("[");
    for (int a = optind, k = 0; a < argc; a++) {
        cs_nccl_log_t *log = logs[a - optind];
        if (!json)
            printf("%s%s: %d table%s\n", a > optind ? "\n" : "", argv[a], log->ntables,
                   log->ntables == 1 ? "" : "s");
        cs_nccl_log_say_cuts(log, argv[a], "collstep import: ", stderr);
        for (int i = 0; i < log->ntables; i++, k++) {
            say_short(argv[a], &log->tables[i]);
            if (json) {
                printf("%s\n ", k ? "," : "");
                json_table(argv[a], &log->tables[i]);
            } else {
                print_table(i, &log->tables[i]);
            }
        }
        cs_nccl_log_destroy(log);
    }
    free(logs);
    if (json)
        printf("\n]\n");
    return ferror(stdout) ? CS_EXIT_RUNTIME : CS_EXIT_OK;
}
