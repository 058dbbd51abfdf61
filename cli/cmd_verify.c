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
            "A deadlock is reported with its whole cycle, one step a line.  A wrong schedule\n"
            "exits 1 (findings printed); a file that cannot be read or a schedule too large\n"
            "to verify here (CS_VERIFY_MAX_MEM) exits 2.\n"
            "\n%s",
            cs_cli_exit_help);
}

typedef struct verify_args {
    long maxf;
    long run; /* elements per block for the interpreter, -1: not run */
    int quiet;
    cs_dtype_t dt;
    cs_op_t op;
    const char *path;
} verify_args_t;

static int parse_opt(void *ctx, int c, const char *arg)
{
    verify_args_t *v = ctx;
    switch (c) {
    case 'm': return cs_cli_parse_long("verify", "--max-findings", arg, 1, 1000000, &v->maxf);
    case 'r': return cs_cli_parse_long("verify", "--run", arg, 0, 1L << 32, &v->run);
    case 'd': return cs_cli_parse_dtype("verify", arg, &v->dt);
    case 'o': return cs_cli_parse_op("verify", arg, &v->op);
    case 'q': v->quiet = 1; return CS_EXIT_OK;
    default: return CS_EXIT_USAGE;
    }
}

static int parse(int argc, char **argv, verify_args_t *v)
{
    static const struct option opts[] = {{"max-findings", required_argument, 0, 'm'},
                                         {"run", required_argument, 0, 'r'},
                                         {"dtype", required_argument, 0, 'd'},
                                         {"op", required_argument, 0, 'o'},
                                         {"quiet", no_argument, 0, 'q'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int rc = cs_cli_options("verify", argc, argv, "hq", opts, help, parse_opt, v);
    if (rc != CS_EXIT_OK)
        return rc;
    if (argc - optind != 1) {
        help(stderr);
        return CS_EXIT_USAGE;
    }
    v->path = argv[optind];
    return CS_EXIT_OK;
}

/* --run: the reference interpreter on the schedule; an exit code. */
static int interpret(const verify_args_t *v, const cs_sched_t *s)
{
    cs_err_t err = {0};
    cs_interp_result_t res = {0};
    if (cs_interp_run(s, v->dt, v->op, (uint64_t)v->run, &res, &err) != CS_OK) {
        fprintf(stderr, "collstep verify: interpreter: %s\n", err.msg);
        return CS_EXIT_FAIL;
    }
    if (res.wrong != 0) {
        if (!v->quiet)
            printf("%s: interpreter: %llu wrong elements (first at rank %d element %llu)\n",
                   v->path, (unsigned long long)res.wrong, res.first_bad_rank,
                   (unsigned long long)res.first_bad_index);
        return CS_EXIT_FAIL;
    }
    if (!v->quiet)
        printf("%s: interpreter: %llu elements per block of %s %s: all exact\n", v->path,
               (unsigned long long)v->run, cs_dtype_name(v->dt), cs_op_name(v->op));
    return CS_EXIT_OK;
}

int cs_cli_verify_cmd(int argc, char **argv)
{
    verify_args_t v = {.maxf = 20, .run = -1, .dt = CS_DT_I32, .op = CS_OP_SUM};
    int rc = parse(argc, argv, &v);
    if (rc != CS_EXIT_OK)
        return rc == CS_CLI_DONE ? CS_EXIT_OK : rc;
    const char *path = v.path;
    cs_err_t err = {0};
    cs_sched_t *s = cs_cli_load_sched(path, &err);
    if (s == NULL) {
        fprintf(stderr, "%s\n", err.msg);
        return CS_EXIT_USAGE;
    }
    cs_verify_opts_t vo = {.max_findings = (uint32_t)v.maxf};
    cs_verify_report_t rep = {0};
    int st = cs_verify(s, &vo, &rep, &err);
    if (st == CS_ERR_VERIFY) {
        if (!v.quiet) {
            /* "FILE:LINE:COL: " for a finding about a step of a schedule text,
             * "FILE: " for the others */
            char prefix[1100];
            snprintf(prefix, sizeof(prefix), "%s: ", path);
            if (cs_sched_locate_file(path, 0, NULL, NULL, NULL, NULL) == CS_OK)
                cs_cli_print_findings_in(stdout, "", &rep, s, path, 1);
            else
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
        if (!v.quiet)
            printf("%s: OK: %s on %d ranks, %u chunks, %llu steps: computes the collective, "
                   "race-free, deadlock-free\n",
                   path, cs_coll_name(s->desc.coll), s->desc.nranks, s->nchunks,
                   (unsigned long long)cs_sched_total_steps(s));
        if (v.run >= 0)
            rc = interpret(&v, s);
    }
    cs_verify_report_fini(&rep);
    cs_cli_free_sched(s);
    return rc;
}
