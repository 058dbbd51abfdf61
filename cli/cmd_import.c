/* cmd_import.c - `collstep import msccl FILE.xml`: an MSCCL algorithm as a
 * collstep schedule (interop/cs_msccl.h, docs/msccl.md), built with libxml2;
 * `collstep import nccl-tests LOG`: cmd_import_nccl.c, always built. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#ifdef CS_HAVE_INTEROP
#include "cs_msccl.h"
#include "cs_out.h"
#include "cs_text.h"
#endif

int cs_cli_import_nccl(int argc, char **argv); /* cmd_import_nccl.c */

#ifdef CS_HAVE_INTEROP

static void help(FILE *f)
{
    fprintf(f,
            "usage: collstep import msccl FILE.xml [--inplace | --outofplace] [--origins]\n"
            "                             [-o FILE.sched [--force]]\n"
            "       collstep import nccl-tests LOG... [--format table|json]\n"
            "                             (collstep import nccl-tests --help)\n"
            "\n"
            "Read an MSCCL algorithm (the XML of msccl-tools / MSCCLang, TACCL, TE-CCL)\n"
            "and write it as a collstep schedule (docs/msccl.md says how every step type\n"
            "maps).  verify, stats, sim --schedule and run --schedule also take the XML\n"
            "directly.\n"
            "\n"
            "  --inplace            the in-place reading (the file must allow it)\n"
            "  --outofplace         the out-of-place reading (the file must allow it)\n"
            "                       Neither: out of place when the file allows it, else the\n"
            "                       in-place algorithm serving an out-of-place call (each\n"
            "                       rank first copies its input into its output), which is\n"
            "                       also what verify, stats, sim and run read\n"
            "  --origins            print, instead of the schedule, where each step came\n"
            "                       from: 'RANK STEP FILE:LINE: gpu G tb T step S'\n"
            "%s"
            "  --force              replace an existing FILE that is not a schedule\n"
            "\n%s\n"
            "example: collstep import msccl allreduce_ring.xml -o ring.sched\n",
            cs_cli_output_help, cs_cli_exit_help);
}

typedef struct import_args {
    cs_msccl_opts_t mo;
    int origins, force;
    const char *output, *path;
} import_args_t;

/* parse: options, then FORMAT FILE. */
static int parse(int argc, char **argv, import_args_t *a)
{
    static const struct option opts[] = {{"inplace", no_argument, 0, 'i'},
                                         {"outofplace", no_argument, 0, 'O'},
                                         {"origins", no_argument, 0, 'g'}, CS_CLI_OPTS_OUTPUT};
    int c, rc = CS_EXIT_OK;
    optind = 1;
    while ((c = cs_cli_getopt("import", argc, argv, "ho:", opts, help, &rc)) != -1) {
        switch (c) {
        case 'i':
        case 'O':
            if (a->mo.inplace >= 0)
                return cs_cli_usage_error("import", "--inplace and --outofplace: give one");
            a->mo.inplace = c == 'i';
            break;
        case 'g': a->origins = 1; break;
        case 'o': a->output = optarg; break;
        case 'F': a->force = 1; break;
        default: /* CS_CLI_OPT_EXIT: --help or a bad option */
            return rc == CS_EXIT_OK ? CS_CLI_DONE : rc;
        }
    }
    if (argc - optind >= 1 && strcmp(argv[optind], "msccl") != 0)
        return cs_cli_usage_error("import", "unknown format '%s' (known: msccl, nccl-tests)",
                                  argv[optind]);
    if (argc - optind != 2) {
        help(stderr);
        return CS_EXIT_USAGE;
    }
    a->path = argv[optind + 1];
    return CS_EXIT_OK;
}

/* report --origins: where each step came from. */
static void print_origins(const cs_msccl_t *m)
{
    char where[1024];
    for (int r = 0; r < m->nranks; r++)
        for (uint32_t i = 0; i < m->norigin[r]; i++) {
            cs_msccl_origin_str(m, r, i, where, sizeof(where));
            printf("%d %u %s\n", r, i, where);
        }
}

/* act: write the schedule; say what was written. */
static int write_sched(const import_args_t *a, const cs_msccl_t *m)
{
    cs_err_t err = {0};
    int st = cs_sched_save_flags(m->sched, a->output,
                                 CS_OUT_STDOUT | (a->force ? CS_OUT_FORCE : 0), &err);
    if (st != CS_OK) {
        fprintf(stderr, "collstep import: %s\n", err.msg);
        return cs_cli_exit_code(st);
    }
    if (strcmp(a->output, "-") != 0)
        fprintf(stderr,
                "collstep import: %s: %s on %d ranks, %u chunks, %llu steps (%s, %s) -> %s\n",
                a->path, cs_coll_name(m->sched->desc.coll), m->sched->desc.nranks,
                m->sched->nchunks, (unsigned long long)cs_sched_total_steps(m->sched),
                m->info.imported_inplace == 1   ? "in place"
                : m->info.imported_inplace == 2 ? "in-place algorithm, input copied first"
                                                : "out of place",
                m->info.proto, a->output);
    return CS_EXIT_OK;
}

static int import_msccl(int argc, char **argv)
{
    import_args_t a = {.mo = {.inplace = -1}, .output = "-"};
    int rc = parse(argc, argv, &a);
    if (rc != CS_EXIT_OK)
        return rc == CS_CLI_DONE ? CS_EXIT_OK : rc;
    cs_err_t err = {0};
    cs_msccl_t *m = NULL;
    int st = cs_msccl_load(a.path, &a.mo, &m, &err);
    if (st != CS_OK) {
        fprintf(stderr, "collstep import: %s\n", err.msg);
        return cs_cli_input_exit_code(a.path, st);
    }
    if (a.origins)
        print_origins(m);
    else
        rc = write_sched(&a, m);
    cs_msccl_destroy(m);
    return rc;
}
#endif /* CS_HAVE_INTEROP */

int cs_cli_import(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "nccl-tests") == 0)
        return cs_cli_import_nccl(argc - 1, argv + 1);
#ifdef CS_HAVE_INTEROP
    return import_msccl(argc, argv);
#else
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: collstep import nccl-tests LOG... [--format table|json]\n"
               "       collstep import msccl FILE.xml   (not built: needs libxml2)\n\n%s",
               cs_cli_exit_help);
        return CS_EXIT_OK;
    }
    if (argc >= 2 && strcmp(argv[1], "msccl") == 0)
        return cs_cli_usage_error("import", "msccl is not built in this configuration (needs "
                                            "libxml2, libxml2-dev)");
    return cs_cli_usage_error("import", "expected a format: nccl-tests (msccl needs libxml2)");
#endif
}
