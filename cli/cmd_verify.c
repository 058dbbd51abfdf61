/* cmd_verify.c - `collstep verify`: static verification of a schedule file. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cs_dtype.h"
#include "cs_interp.h"
#include "cs_text.h"
#include "cs_verify.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: collstep verify FILE [--max-findings N] [--run COUNT [--dtype T] [--op OP]]\n"
            "                       [--quiet]\n"
            "\n"
            "Check statically that the schedule in FILE ('-' = stdin) computes its collective:\n"
            "every output chunk holds each input exactly once, sends match receives in count\n"
            "and size, nothing is read before it is written, no two unordered steps of a rank\n"
            "touch a chunk that one of them writes, and the cross-rank graph cannot deadlock.\n"
            "\n"
            "  --max-findings N   findings to print (default 20)\n"
            "  --run COUNT        also run the reference interpreter on COUNT elements per\n"
            "                     block and compare with a naive computation\n"
            "  --dtype T          type for --run: int32 (default), float, double, half,\n"
            "                     bfloat16, int64\n"
            "  --op OP            operator for --run: sum (default), prod, min, max\n"
            "  -q, --quiet        print nothing, only set the exit code\n"
            "\n"
            "A deadlock is reported with its whole cycle, one step a line.\n"
            "exit: 0 correct, 1 incorrect (findings printed), 2 malformed input, usage, or a\n"
            "schedule too large to verify here (CS_VERIFY_MAX_MEM) or a file that cannot be read\n");
}

int cs_cli_verify_cmd(int argc, char **argv)
{
    static const struct option opts[] = {{"max-findings", required_argument, 0, 'm'},
                                         {"run", required_argument, 0, 'r'},
                                         {"dtype", required_argument, 0, 'd'},
                                         {"op", required_argument, 0, 'o'},
                                         {"quiet", no_argument, 0, 'q'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    long maxf = 20;
    long long run = -1;
    int quiet = 0, c;
    cs_dtype_t dt = CS_DT_I32;
    cs_op_t op = CS_OP_SUM;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hq", opts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'm':
            maxf = strtol(optarg, &end, 10);
            if (*end != '\0' || maxf < 1 || maxf > 1000000)
                return cs_cli_usage_error("verify", "--max-findings: expected 1..1000000, found '%s'",
                                          optarg);
            break;
        case 'r':
            run = strtoll(optarg, &end, 10);
            if (*end != '\0' || run < 0 || run > (1LL << 32))
                return cs_cli_usage_error("verify", "--run: expected an element count, found '%s'",
                                          optarg);
            break;
        case 'd':
            dt = cs_dtype_parse(optarg);
            if (dt == CS_DT_COUNT)
                return cs_cli_usage_error("verify", "--dtype: unknown type '%s' (float, double, "
                                          "half, bfloat16, int32, int64)", optarg);
            break;
        case 'o':
            op = cs_op_parse(optarg);
            if (op == CS_OP_COUNT)
                return cs_cli_usage_error("verify", "--op: unknown operator '%s' (sum, prod, "
                                          "min, max)", optarg);
            break;
        case 'q':
            quiet = 1;
            break;
        case 'h':
            help(stdout);
            return CS_EXIT_OK;
        default:
            help(stderr);
            return CS_EXIT_USAGE;
        }
    }
    if (argc - optind != 1) {
        help(stderr);
        return CS_EXIT_USAGE;
    }
    const char *path = argv[optind];
    cs_err_t err = {0};
    cs_sched_t *s = cs_cli_load_sched(path, &err);
    if (s == NULL) {
        fprintf(stderr, "%s\n", err.msg);
        return CS_EXIT_USAGE;
    }
    cs_verify_opts_t vo = {.max_findings = (uint32_t)maxf};
    cs_verify_report_t rep = {0};
    int st = cs_verify(s, &vo, &rep, &err);
    int rc = CS_EXIT_OK;
    if (st == CS_ERR_VERIFY) {
        if (!quiet) {
            char prefix[1100];
            snprintf(prefix, sizeof(prefix), "%s: ", path);
            cs_cli_print_findings(stdout, prefix, &rep, s);
            printf("%s: INCORRECT: %llu finding%s\n", path, (unsigned long long)rep.total,
                   rep.total == 1 ? "" : "s");
        }
        rc = CS_EXIT_FAIL;
    } else if (st != CS_OK) {
        /* could not answer (too large, out of memory): not a "no" */
        fprintf(stderr, "collstep verify: %s\n", err.msg[0] ? err.msg : cs_status_str(st));
        rc = CS_EXIT_USAGE;
    } else {
        if (!quiet)
            printf("%s: OK: %s on %d ranks, %u chunks, %llu steps: computes the collective, "
                   "race-free, deadlock-free\n",
                   path, cs_coll_name(s->desc.coll), s->desc.nranks, s->nchunks,
                   (unsigned long long)cs_sched_total_steps(s));
        if (run >= 0) {
            cs_interp_result_t res = {0};
            st = cs_interp_run(s, dt, op, (uint64_t)run, &res, &err);
            if (st != CS_OK) {
                fprintf(stderr, "collstep verify: interpreter: %s\n", err.msg);
                rc = CS_EXIT_FAIL;
            } else if (res.wrong != 0) {
                if (!quiet)
                    printf("%s: interpreter: %llu wrong elements (first at rank %d element %llu)\n",
                           path, (unsigned long long)res.wrong, res.first_bad_rank,
                           (unsigned long long)res.first_bad_index);
                rc = CS_EXIT_FAIL;
            } else if (!quiet) {
                printf("%s: interpreter: %llu elements per block of %s %s: all exact\n", path,
                       (unsigned long long)run, cs_dtype_name(dt), cs_op_name(op));
            }
        }
    }
    cs_verify_report_fini(&rep);
    cs_cli_free_sched(s);
    return rc;
}
