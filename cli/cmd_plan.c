/*
 * cmd_plan.c - `collstep plan`: per message size, the fastest way to run a
 * collective on a platform, by simulation; a tuning table for --algo auto.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cs_algo.h"
#include "cs_dtype.h"
#include "cs_out.h"
#include "cs_platform.h"
#include "cs_sim.h"
#include "cs_tuning.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: collstep plan --platform NAME|FILE [--coll COLL] --size SIZES [options]\n"
            "\n"
            "Choose, per message size, the algorithm and parameters that run a collective\n"
            "fastest on a modeled fabric: every algorithm of the registry is simulated\n"
            "(SimGrid) and ranked; -o writes the choices as a tuning table for\n"
            "'collstep sim --algo auto --tuning FILE'.\n"
            "\n"
            "  --platform SPEC      preset ('summit', 'summit:nodes=16') or a SimGrid XML file\n"
            "  --coll COLL          allreduce (default), reduce-scatter, allgather, broadcast,\n"
            "                       reduce, alltoall\n"
            "  --size SIZES         message sizes in bytes: 1M, 1M:1G, 1K,4K,1M (see below)\n"
            "  --ranks P            ranks (default: every device of the platform)\n"
            "  -o, --output FILE    write the tuning table to FILE (whole or not at all; an\n"
            "                       existing file is replaced only when collstep wrote it)\n"
            "  --force              replace an existing -o FILE that collstep did not write\n"
            "\n%s\n%s"
            "\n"
            "example: collstep plan --platform summit:nodes=16 --size 1M:1G -o summit16.tuning\n",
            cs_cli_size_help, cs_cli_exit_help);
}

typedef struct args {
    const char *platform, *coll, *size, *output;
    long ranks;
    int force;
} args_t;

static int parse(int argc, char **argv, args_t *a)
{
    static const struct option opts[] = {
        {"platform", required_argument, 0, 'P'}, {"coll", required_argument, 0, 'c'},
        {"size", required_argument, 0, 's'},     {"ranks", required_argument, 0, 'n'},
        {"output", required_argument, 0, 'o'},   {"force", no_argument, 0, 'F'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'P': a->platform = optarg; break;
        case 'c': a->coll = optarg; break;
        case 's': a->size = optarg; break;
        case 'o': a->output = optarg; break;
        case 'F': a->force = 1; break;
        case 'n': {
            long v = strtol(optarg, &end, 10);
            if (*end != '\0' || v < 1 || v > (1L << 24))
                return cs_cli_usage_error("plan", "--ranks: expected a positive integer, "
                                                  "found '%s'", optarg);
            a->ranks = v;
            break;
        }
        case 'h': help(stdout); return -1;
        case ':':
            return cs_cli_usage_error("plan", "option %s needs a value (see --help)",
                                      argv[optind - 1]);
        default:
            return cs_cli_usage_error("plan", "unknown option '%s' (see --help)",
                                      argv[optind - 1]);
        }
    }
    if (optind != argc)
        return cs_cli_usage_error("plan", "unexpected argument '%s' (see --help)", argv[optind]);
    if (!a->platform)
        return cs_cli_usage_error("plan", "--platform is required (see --help)");
    if (!a->size)
        return cs_cli_usage_error("plan", "--size is required (e.g. --size 1M:1G)");
    return CS_EXIT_OK;
}

static const cs_out_kind_t tuning_kind = {"tuning table", cs_tuning_recognize, NULL, NULL};

static int write_table(const args_t *a, const cs_tuning_t *t)
{
    cs_err_t err;
    cs_err_clear(&err);
    cs_out_t *o = NULL;
    int st = cs_out_begin_file(a->output, CS_OUT_STDOUT | (a->force ? CS_OUT_FORCE : 0),
                               &tuning_kind, &o, &err);
    if (st == CS_OK)
        st = cs_tuning_write(t, cs_out_stream(o), &err);
    if (st == CS_OK)
        st = cs_out_commit(o, &err);
    else
        cs_out_abort(o);
    if (st == CS_OK)
        return CS_EXIT_OK;
    fprintf(stderr, "collstep plan: -o %s: %s\n", a->output, err.msg);
    return st == CS_ERR_EXISTS ? CS_EXIT_USAGE : CS_EXIT_RUNTIME;
}

/* The guarded child: simulate every candidate at every size, rank, report. */
static int plan(const args_t *a, cs_platform_t *plat, cs_sched_t **sched, int nc,
                const uint64_t *sizes, int ns, cs_coll_t coll, int ranks)
{
    int n = nc * ns, rc = CS_EXIT_OK;
    cs_sim_instance_t *inst = calloc((size_t)n, sizeof(*inst));
    cs_tuning_t *t = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    if (!inst) {
        fprintf(stderr, "collstep plan: out of memory\n");
        return CS_EXIT_RUNTIME;
    }
    for (int i = 0; i < n; i++) {
        inst[i].sched = sched[i / ns];
        inst[i].bytes = sizes[i % ns];
        inst[i].dtype = CS_DT_F32;
    }
    cs_sim_opts_t so;
    cs_sim_opts_init(&so);
    if (cs_sim_run(plat, &so, inst, n, &err) != CS_OK) {
        fprintf(stderr, "collstep plan: %s\n", err.msg);
        free(inst);
        return CS_EXIT_RUNTIME;
    }
    const char *spec = plat->spec[0] ? plat->spec : plat->name;
    if (a->output && !(t = cs_tuning_new(a->platform, ranks, &err))) {
        fprintf(stderr, "collstep plan: %s\n", err.msg);
        free(inst);
        return CS_EXIT_USAGE;
    }
    printf("# collstep plan: %s on %s, %d ranks\n", cs_coll_name(coll), spec, ranks);
    printf("%12s  %-10s  %-28s %12s %10s %8s\n", "size", "algo", "params", "time_us", "busbw",
           "vs_ring");
    for (int k = 0; k < ns; k++) {
        int order[CS_CLI_MAX_ALGOS];
        for (int i = 0; i < nc; i++)
            order[i] = i;
        for (int i = 1; i < nc; i++) /* insertion sort by time */
            for (int j = i; j > 0 && inst[order[j] * ns + k].time <
                                         inst[order[j - 1] * ns + k].time; j--) {
                int x = order[j];
                order[j] = order[j - 1];
                order[j - 1] = x;
            }
        double ring = -1;
        for (int i = 0; i < nc; i++)
            if (strcmp(sched[i]->algo, "ring") == 0)
                ring = inst[i * ns + k].time;
        for (int r = 0; r < nc; r++) {
            const cs_sim_instance_t *in = &inst[order[r] * ns + k];
            double bus = (double)sizes[k] / in->time * cs_coll_busbw_factor(coll, ranks) / 1e9;
            printf("%12llu  %-10s  %-28s %12.2f %10.2f %8.2f\n", (unsigned long long)sizes[k],
                   in->sched->algo, in->sched->params[0] ? in->sched->params : "-",
                   in->time * 1e6, bus, ring > 0 ? ring / in->time : 0.0);
        }
        if (t) {
            const cs_sim_instance_t *best = &inst[order[0] * ns + k];
            char params[CS_META_MAX];
            snprintf(params, sizeof(params), "%s", best->sched->params);
            for (char *p = params; *p; p++)
                if (*p == ' ')
                    *p = ',';
            uint64_t lo = k == 0 ? 0 : sizes[k - 1] + 1;
            uint64_t hi = k == ns - 1 ? UINT64_MAX : sizes[k];
            if (cs_tuning_add(t, coll, lo, hi, best->sched->algo, params, NULL, 0,
                              best->time * 1e6, &err) != CS_OK) {
                fprintf(stderr, "collstep plan: %s\n", err.msg);
                rc = CS_EXIT_RUNTIME;
                break;
            }
        }
    }
    if (t && rc == CS_EXIT_OK)
        rc = write_table(a, t);
    cs_tuning_free(t);
    free(inst);
    return rc;
}

int cs_cli_plan(int argc, char **argv)
{
    args_t a;
    memset(&a, 0, sizeof(a));
    a.coll = "allreduce";
    int rc = parse(argc, argv, &a);
    if (rc != CS_EXIT_OK)
        return rc < 0 ? CS_EXIT_OK : rc;
    cs_coll_t coll = cs_coll_parse(a.coll);
    if (coll == CS_COLL_COUNT)
        return cs_cli_usage_error("plan", "--coll: unknown collective '%s' (allreduce, "
                                          "reduce-scatter, allgather, broadcast, reduce, alltoall)",
                                  a.coll);
    uint64_t sizes[CS_CLI_MAX_SIZES];
    int ns = 0;
    if ((rc = cs_cli_sizes("plan", a.size, cs_dtype_size(CS_DT_F32), sizes, &ns)) != CS_EXIT_OK)
        return rc;
    if (a.output) {
        cs_err_t err;
        cs_err_clear(&err);
        if (cs_out_check(a.output, CS_OUT_STDOUT | (a.force ? CS_OUT_FORCE : 0), &tuning_kind, 0,
                         &err) != CS_OK)
            return cs_cli_usage_error("plan", "-o %s: %s", a.output, err.msg);
    }
    cs_platform_t *plat = NULL;
    cs_sched_t *sched[CS_CLI_MAX_ALGOS];
    int nc = 0;
    cs_err_t err;
    cs_err_clear(&err);
    if (cs_platform_open(a.platform, &plat, &err) != CS_OK)
        return cs_cli_usage_error("plan", "%s", err.msg);
    int ranks = a.ranks ? (int)a.ranks : (int)plat->ndevices;
    if (ranks > (long)plat->ndevices) {
        rc = cs_cli_usage_error("plan", "%d ranks but %s has only %llu %s", ranks, plat->name,
                                (unsigned long long)plat->ndevices, plat->rank_noun);
        goto done;
    }
    if (ranks < 2) {
        rc = cs_cli_usage_error("plan", "%s: %d rank: there is nothing to plan (a collective "
                                        "on one rank moves no data)", plat->name, ranks);
        goto done;
    }
    cs_cli_params_t none;
    cs_cli_params_init(&none);
    cs_coll_desc_t d = {coll, ranks, 0, 0};
    for (int i = 0; i < cs_algo_count() && nc < CS_CLI_MAX_ALGOS; i++) {
        const cs_algo_t *al = cs_algo_at(i);
        if (al->coll != coll)
            continue;
        cs_params_t extra;
        cs_cli_tier_defaults(al->name, plat->dims, plat->ndims, ranks, &extra);
        cs_err_t e2;
        cs_err_clear(&e2);
        if (cs_algo_build(al, &d, &extra, &sched[nc], &e2) != CS_OK)
            continue; /* e.g. an algorithm for powers of two only */
        nc++;
    }
    if (nc == 0) {
        rc = cs_cli_usage_error("plan", "no algorithm of the registry builds %s on %d ranks "
                                        "(see 'collstep algos')", cs_coll_name(coll), ranks);
        goto done;
    }
    if (cs_cli_guard("plan", a.output, NULL, &rc))
        goto done;
    rc = plan(&a, plat, sched, nc, sizes, ns, coll, ranks);
done:
    for (int i = 0; i < nc; i++)
        cs_sched_destroy(sched[i]);
    cs_platform_close(plat);
    return rc;
}
