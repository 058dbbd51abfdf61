/*
 * main.c - the `collstep` command: dispatch to subcommands.
 *
 * Each subcommand lives in its own cmd_<name>.c and is only linked when the
 * library it fronts was built (see cli/CMakeLists.txt); an absent one says
 * how to enable it instead of pretending.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cs_env.h"
#include "cs_out.h"
#ifdef CS_HAVE_SIM
#include "cs_sim.h"
#endif

typedef struct cli_cmd {
    const char *name;
    int (*fn)(int argc, char **argv); /* NULL: not built in this configuration */
    const char *help;
    const char *needs; /* what enables it when fn is NULL */
} cli_cmd_t;

#ifdef CS_HAVE_SIM
#define CS_SIM_FN cs_cli_sim
#else
#define CS_SIM_FN NULL
#endif
#ifdef CS_HAVE_PLATFORMS
#define CS_PLATFORM_FN cs_cli_platform
#else
#define CS_PLATFORM_FN NULL
#endif
#ifdef CS_HAVE_TRACES
#define CS_TRACE_FN cs_cli_trace
#else
#define CS_TRACE_FN NULL
#endif
int cs_cli_import(int argc, char **argv); /* nccl-tests logs; MSCCL XML with interop/ */
#ifdef CS_HAVE_INTEROP
int cs_cli_export(int argc, char **argv);
#define CS_EXPORT_FN cs_cli_export
#else
#define CS_EXPORT_FN NULL
#endif
#ifdef CS_HAVE_EXEC
#define CS_RUN_FN cs_cli_run
#else
#define CS_RUN_FN NULL
#endif

#ifdef CS_HAVE_CALIBRATE
int cs_cli_calibrate(int argc, char **argv); /* cmd_calibrate.c: exec/ + platforms/ */
#define CS_CALIBRATE_FN cs_cli_calibrate
#else
#define CS_CALIBRATE_FN NULL
#endif
#ifdef CS_HAVE_PLAN
int cs_cli_plan(int argc, char **argv); /* cmd_plan.c: planner/ */
#define CS_PLAN_FN cs_cli_plan
#else
#define CS_PLAN_FN NULL
#endif
#ifdef CS_HAVE_VALIDATE
int cs_cli_validate(int argc, char **argv); /* cmd_validate.c: exec/ + sim/ */
#define CS_VALIDATE_FN cs_cli_validate
#else
#define CS_VALIDATE_FN NULL
#endif

static const cli_cmd_t commands[] = {
    {"algos", cs_cli_algos, "list collectives, algorithms, descriptions and parameters", NULL},
    {"gen", cs_cli_gen, "generate a schedule in the text format", NULL},
    {"verify", cs_cli_verify_cmd, "statically verify a schedule file", NULL},
    {"stats", cs_cli_stats, "traffic, rounds and alpha-beta cost of a schedule", NULL},
    {"platform", CS_PLATFORM_FN, "list, show and export platform presets", "SimGrid and igraph"},
    {"sim", CS_SIM_FN, "simulate schedules on a platform with SimGrid", "SimGrid (-DCS_WITH_SIMGRID=ON)"},
    {"run", CS_RUN_FN, "run schedules live over libfabric (or NCCL)", "libfabric and PMIx (-DCS_WITH_EXEC=ON)"},
    {"import", cs_cli_import, "read an MSCCL algorithm XML as a schedule, or nccl-tests logs", NULL},
    {"export", CS_EXPORT_FN, "write a schedule as an MSCCL algorithm XML", "libxml2 (libxml2-dev)"},
    {"calibrate", CS_CALIBRATE_FN, "measure the cluster the ranks run on, write a platform", "libfabric, PMIx and SimGrid"},
    {"validate", CS_VALIDATE_FN, "run and simulate the same schedules: measured vs predicted", "libfabric, PMIx and SimGrid"},
    {"plan", CS_PLAN_FN, "choose algorithm, hierarchy, channels and rank order per size", "SimGrid and igraph"},
    {"trace", CS_TRACE_FN, "summarise a trace directory of sim --trace or run --trace", "the traces library"},
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

#ifdef CS_HAVE_SIM
/* --version: the SimGrid loaded (its version and file, whether its maestro
 * keeps activities in a set) and the one configure chose (cs_sim.h). */
static void print_simgrid(FILE *f)
{
    cs_sim_simgrid_t sg;
    cs_sim_simgrid(&sg);
    fprintf(f, "SimGrid %d.%d.%d %s the maestro activity set: %s\n", sg.major, sg.minor, sg.patch,
            sg.activity_set ? "with" : "without", sg.library[0] ? sg.library : "(file not found)");
    fprintf(f, "configured with SimGrid %s\n", sg.configured);
    fprintf(f, "simulator engine: %s by default, dag under --model nccl (%s; --engine, "
               "CS_SIM_ENGINE)\n",
            cs_sim_engine_name(cs_sim_engine_default()),
            sg.activity_set ? "no actors: 2-2.5x faster with this SimGrid"
                            : "one actor per rank: without the activity set, the dag engine "
                              "is slower");
}
#endif

static void usage(FILE *f)
{
    fprintf(f,
            "usage: collstep [--version] [--help] [--help-env] <command> [<args>]\n"
            "\n"
            "Collective algorithms written once as step graphs: verified, simulated,\n"
            "executed live and traced.\n"
            "\n"
            "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-9s %s%s\n", commands[i].name, commands[i].help,
                commands[i].fn ? "" : " (not built)");
    fprintf(f,
            "\n"
            "'collstep <command> --help' describes a command; 'collstep --help-env' lists\n"
            "the environment variables collstep reads.\n"
            "\n%s\n%s"
            "Logging: CS_LOG=error|warn|info|debug|trace, CS_LOG_SUBSYS=core,sim,exec,...\n",
            cs_cli_exit_help, cs_cli_size_help);
}

/* The command running, for what core/cs_out.h says about leftovers it
 * cleaned up. */
static const char *running = "";

static void out_notice(const char *msg)
{
    fprintf(stderr, "collstep %s: %s\n", running, msg);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CS_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        if (argc > 2 && strcmp(cmd, "help") == 0) {
            char help[] = "--help";
            char *sub[] = {argv[2], help, NULL};
            for (size_t i = 0; i < NCOMMANDS; i++)
                if (strcmp(argv[2], commands[i].name) == 0 && commands[i].fn)
                    return commands[i].fn(2, sub);
        }
        usage(stdout);
        return CS_EXIT_OK;
    }
    if (strcmp(cmd, "--help-env") == 0) {
        cs_env_print(stdout);
        return CS_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("collstep %s (schedule format %d)\n", CS_VERSION, 1);
#ifdef CS_HAVE_SIM
        print_simgrid(stdout);
#endif
        return CS_EXIT_OK;
    }
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (strcmp(cmd, commands[i].name) != 0)
            continue;
        if (commands[i].fn == NULL) {
            fprintf(stderr, "collstep: '%s' is not built in this configuration (needs %s)\n",
                    cmd, commands[i].needs);
            return CS_EXIT_USAGE;
        }
        running = commands[i].name;
        cs_out_set_notice(out_notice);
        return commands[i].fn(argc - 1, argv + 1);
    }
    fprintf(stderr, "collstep: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return CS_EXIT_USAGE;
}
