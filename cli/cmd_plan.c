/*
 * cmd_plan.c - `collstep plan`: per message size, the algorithm, parameters
 * and rank order that run a collective fastest on a platform (planner/
 * cs_planner.h: topology analysis, candidates, cost model, simulations), and
 * the tuning table that `--algo auto --tuning FILE` reads.
 * Exit codes: 0 planned, 2 usage errors and bad input (one rank, no
 * algorithm, a budget too small, refused -o path), 3 failures while running.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_nccl.h"
#include "cs_algo.h"
#include "cs_dtype.h"
#include "cs_out.h"
#include "cs_planner.h"
#include "cs_results.h"
#include "cs_tuning.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: collstep plan --platform NAME|FILE [--coll COLL] --size SIZES [options]\n"
            "\n"
            "Choose, per message size, the algorithm, its parameters and the rank order that\n"
            "run a collective fastest on a modeled fabric:\n"
            "  1. topology: the tiers of the fabric (which ranks share a socket, a node, a\n"
            "     switch), bandwidth per tier and per group, the factorizations of P that\n"
            "     follow the tiers (6x256, 3x2x256, 6x16x16 on Summit) and fast rings (a\n"
            "     Hamiltonian cycle over the fastest routes, as on a DGX-1's NVLink mesh);\n"
            "  2. candidates: every registry algorithm of COLL with its defaults, and with\n"
            "     the parameters it declares varied (nchunks, channels, radix, hier's dims\n"
            "     and per-tier algos), in each rank order;\n"
            "  3. a cost model over the platform's routes (bytes per link per round, so that\n"
            "     flows sharing a link count), then per size the best --top candidates and\n"
            "     the registry's defaults simulated in SimGrid, --jobs at a time, within\n"
            "     --budget.\n"
            "Per size: the ranking with time, busbw, speed-up over the flat ring and the\n"
            "bottleneck tier; the choice is the fastest simulated candidate.  -o writes the\n"
            "choices as a tuning table (size ranges split at the geometric middle between\n"
            "planned sizes) for 'collstep sim --algo auto --tuning FILE'.\n"
            "\n"
            "  --platform SPEC      preset ('summit', 'summit:nodes=16', see 'collstep platform\n"
            "                       list') or a SimGrid XML file\n"
            "  --coll COLL          allreduce (default), reduce-scatter, allgather, broadcast,\n"
            "                       reduce, alltoall\n"
            "  --size SIZES         message sizes in bytes: 1M, 1M:1G, 1K,4K,1M (see below)\n"
            "  --ranks P            ranks (default: every device of the platform)\n"
            "  --top K              candidates simulated per size, by the model (default 4)\n"
            "  --all                simulate every candidate at every size (small platforms)\n"
            "  --jobs N             simulations at a time (default: the number of cores)\n"
            "  --budget SECONDS     wall time for the whole plan (default 60 per size);\n"
            "                       candidates that do not fit are ranked by the model\n"
            "  --model M            ideal (default), calibrated or nccl (see 'collstep sim\n"
            "                       --help'); nccl: every simulation pays NCCL's per-step\n"
            "                       costs, and per size NCCL's own choice is simulated beside\n"
            "                       collstep's best, with what makes the slower one slow\n"
            "%s"
            "  --show N             rows of the ranking per size (default 8, 0 = all)\n"
            "  --format F           table (default), csv, json or nccl-tests (the choice per\n"
            "                       size as nccl-tests %s prints a run: docs/nccl-tests.md)\n"
            "  -o, --output FILE    write the tuning table to FILE (whole or not at all; an\n"
            "                       existing file is replaced only when collstep wrote it)\n"
            "  --force              replace an existing -o FILE that collstep did not write\n"
            "\n"
            "Candidates are the registry's generators (verified for every P by collstep's\n"
            "tests); 'collstep sim --algo auto' verifies the schedule it runs.  Progress goes\n"
            "to stderr: a status line on a terminal, a line per simulation otherwise.\n"
            "\n%s\n%s"
            "\n"
            "example: collstep plan --platform summit:nodes=16 --size 1M:1G -o summit16.tuning\n",
            CS_CLI_NCCL_HELP, CS_NCCL_TESTS_VERSION, cs_cli_size_help, cs_cli_exit_help);
}

typedef struct args {
    const char *platform, *size, *output;
    cs_coll_t coll;
    cs_results_fmt_t fmt;
    cs_sim_model_t model;
    long ranks, top, jobs, show;
    double budget;
    int force, all, show_given;
    const char *nccl_version, *nccl_algo, *nccl_proto; /* --nccl-*, as given */
    cs_cli_nccl_t nccl; /* their checks */
} args_t;

/* One option's value (cs_cli_options calls it for each). */
static int parse_opt(void *ctx, int c, const char *arg)
{
    args_t *a = ctx;
    switch (c) {
    case 'P': a->platform = arg; return CS_EXIT_OK;
    case 's': a->size = arg; return CS_EXIT_OK;
    case 'o': a->output = arg; return CS_EXIT_OK;
    case 'F': a->force = 1; return CS_EXIT_OK;
    case 'A': a->all = 1; return CS_EXIT_OK;
    case 'c': return cs_cli_parse_coll("plan", arg, &a->coll);
    case 'f': return cs_cli_parse_format_nccl("plan", arg, &a->fmt);
    case 'm':
        if ((a->model = cs_sim_model_parse(arg)) == CS_SIM_MODEL_COUNT)
            return cs_cli_usage_error("plan", "--model: expected ideal, calibrated or nccl, "
                                              "found '%s'", arg);
        return CS_EXIT_OK;
    case 1001: a->nccl_version = arg; return cs_cli_nccl_opt("plan", &a->nccl, CS_CLI_NCCL_VERSION, arg);
    case 1002: a->nccl_algo = arg; return cs_cli_nccl_opt("plan", &a->nccl, CS_CLI_NCCL_ALGO, arg);
    case 1003: a->nccl_proto = arg; return cs_cli_nccl_opt("plan", &a->nccl, CS_CLI_NCCL_PROTO, arg);
    case 'b': {
        int rc = cs_cli_parse_seconds("plan", "--budget", arg, &a->budget);
        if (rc == CS_EXIT_OK && a->budget > 1e7) /* about four months: a typo, not a plan */
            rc = cs_cli_usage_error("plan", "--budget: expected at most 1e7 seconds, found '%s'",
                                    arg);
        return rc;
    }
    case 'n': return cs_cli_parse_long("plan", "--ranks", arg, 1, 1L << 24, &a->ranks);
    case 't': return cs_cli_parse_long("plan", "--top", arg, 1, 100000, &a->top);
    case 'j': return cs_cli_parse_long("plan", "--jobs", arg, 1, 256, &a->jobs);
    case 'S':
        a->show_given = 1;
        return cs_cli_parse_long("plan", "--show", arg, 0, 100000, &a->show);
    default: return CS_EXIT_USAGE;
    }
}

static int parse(int argc, char **argv, args_t *a)
{
    static const struct option opts[] = {
        {"platform", required_argument, 0, 'P'}, {"coll", required_argument, 0, 'c'},
        {"size", required_argument, 0, 's'},     {"ranks", required_argument, 0, 'n'},
        {"top", required_argument, 0, 't'},      {"jobs", required_argument, 0, 'j'},
        {"budget", required_argument, 0, 'b'},   {"model", required_argument, 0, 'm'},
        {"show", required_argument, 0, 'S'},     {"format", required_argument, 0, 'f'},
        {"all", no_argument, 0, 'A'},            {"nccl-version", required_argument, 0, 1001},
        {"nccl-algo", required_argument, 0, 1002}, {"nccl-proto", required_argument, 0, 1003},
        CS_CLI_OPTS_OUTPUT};
    int rc = cs_cli_options("plan", argc, argv, ":ho:", opts, help, parse_opt, a);
    if (rc != CS_EXIT_OK)
        return rc;
    if (optind != argc)
        return cs_cli_usage_error("plan", "unexpected argument '%s' (see --help)", argv[optind]);
    if (!a->platform)
        return cs_cli_usage_error("plan", "--platform is required (see --help)");
    if (!a->size)
        return cs_cli_usage_error("plan", "--size is required (e.g. --size 1M:1G)");
    if (a->model != CS_SIM_NCCL && (a->nccl_version || a->nccl_algo || a->nccl_proto))
        return cs_cli_usage_error("plan", "--nccl-version, --nccl-algo and --nccl-proto need "
                                          "--model nccl");
    if (a->fmt == CS_FMT_NCCL_TESTS && a->show_given)
        return cs_cli_usage_error("plan", "--show: the nccl-tests layout prints the choice per "
                                          "size only; give --format table or json");
    return CS_EXIT_OK;
}

static const cs_out_kind_t tuning_kind = {"tuning table", cs_tuning_recognize, NULL, NULL};

/* ---- report -------------------------------------------------------------- */

static double busbw(const cs_planner_t *p, int k, double t)
{
    return t > 0 ? (double)p->sizes[k] / t * cs_coll_busbw_factor(p->coll, p->ranks) / 1e9 : 0;
}

static void params_text(const cs_planner_cand_t *x, char *buf, size_t len)
{
    snprintf(buf, len, "%s", x->params[0] ? x->params : "-");
}

/* Candidates of size k in ranking order: simulated first, then by the model. */
static int ranking(const cs_planner_t *p, int k, int *order)
{
    int n = 0;
    for (int c = 0; c < p->ncands; c++)
        if (cs_planner_time(p, c, k) >= 0)
            order[n++] = c;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0; j--) {
            int a = order[j - 1], b = order[j];
            int sa = p->cands[a].sim_s[k] >= 0, sb = p->cands[b].sim_s[k] >= 0;
            if (sa > sb || (sa == sb && cs_planner_time(p, a, k) <= cs_planner_time(p, b, k)))
                break;
            order[j - 1] = b, order[j] = a;
        }
    return n;
}

static void print_header(FILE *f, const args_t *a, const cs_planner_t *p)
{
    fprintf(f, "# collstep plan: %s on %s, %d ranks, %s model\n", cs_coll_name(p->coll),
            a->platform, p->ranks, cs_sim_model_name(a->model));
    fprintf(f, "# tiers (innermost first):\n");
    for (int t = 0; t < p->ntiers; t++) {
        const cs_planner_tier_t *x = &p->tiers[t];
        char g[32];
        if (x->group)
            snprintf(g, sizeof(g), "%d x %d ranks", x->ngroups, x->group);
        else
            snprintf(g, sizeof(g), "groups of unequal size");
        fprintf(f, "#   %-12s %-20s %8.1f GB/s per flow  %7.2f us", x->name, g, x->rank_bw / 1e9,
                x->latency * 1e6);
        if (x->group_bw > 0)
            fprintf(f, "  %7.1f GB/s out of a group", x->group_bw / 1e9);
        fputc('\n', f);
    }
    fprintf(f, "# factorizations:");
    for (int i = 0; i < p->nfacts; i++)
        fprintf(f, " %s", p->facts[i]);
    fprintf(f, "%s\n", p->nfacts ? "" : " none (one tier)");
    for (int m = 0; m < p->nmaps; m++)
        fprintf(f, "# rank order %-10s %s; ring's slowest route %.1f GB/s\n", p->map_name[m],
                p->map_note[m], p->map_ring_bw[m] / 1e9);
    for (int i = 0; i < p->nlink_notes; i++)
        fprintf(f, "# %s\n", p->link_notes[i]);
    if (p->bound_note[0])
        fprintf(f, "# bound: %s\n", p->bound_note);
    if (p->nccl)
        cs_cli_plan_nccl_header(f, p);
    int nsim = 0;
    for (int c = 0; c < p->ncands; c++)
        nsim += p->cands[c].model_s[0] >= 0;
    fprintf(f, "# %d candidates, %d costed by the model, %d simulations in %.1f s%s\n",
            p->ncands, nsim, p->simulated, p->seconds,
            p->timed_out ? " (some stopped at the end of the budget)" : "");
}

static void print_table(FILE *f, const args_t *a, const cs_planner_t *p)
{
    print_header(f, a, p);
    int *order = malloc(sizeof(int) * (size_t)(p->ncands + 1));
    if (!order)
        return;
    int ring = cs_planner_ring(p);
    for (int k = 0; k < p->nsizes; k++) {
        int n = ranking(p, k, order), ch = cs_planner_choice(p, k);
        fprintf(f, "\nsize %" PRIu64 " B", p->sizes[k]);
        if (ch >= 0)
            fprintf(f, ": %s %s%s%s, %.2f us, busbw %.2f GB/s", p->cands[ch].algo,
                    p->cands[ch].params[0] ? p->cands[ch].params : "(defaults)",
                    p->cands[ch].map ? " map=" : "",
                    p->cands[ch].map ? p->map_name[p->cands[ch].map] : "",
                    cs_planner_time(p, ch, k) * 1e6, busbw(p, k, cs_planner_time(p, ch, k)));
        if (p->bound_s[k] > 0)
            fprintf(f, "; bound %.2f us (busbw %.2f GB/s)%s", p->bound_s[k] * 1e6,
                    busbw(p, k, p->bound_s[k]), ch >= 0 ? "," : "");
        if (p->bound_s[k] > 0 && ch >= 0)
            fprintf(f, " the choice at %.1f %% of it",
                    100 * p->bound_s[k] / cs_planner_time(p, ch, k));
        fputc('\n', f);
        fprintf(f, "%4s  %-10s %-36s %-9s %12s %5s %9s %8s  %-12s\n", "#", "algo", "params",
                "order", "time", "from", "busbw", "vs_ring", "bottleneck");
        fprintf(f, "%4s  %-10s %-36s %-9s %12s %5s %9s\n", "", "", "", "", "(us)", "", "(GB/s)");
        int show = a->show ? (int)a->show : n;
        for (int i = 0; i < n; i++) {
            int c = order[i];
            const cs_planner_cand_t *x = &p->cands[c];
            if (i >= show && !(x->is_default && x->sim_s[k] >= 0) && c != ring)
                continue;
            double t = cs_planner_time(p, c, k);
            double rt = ring >= 0 ? cs_planner_time(p, ring, k) : -1;
            char prm[200];
            params_text(x, prm, sizeof(prm));
            fprintf(f, "%4d  %-10s %-36s %-9s %12.2f %5s %9.2f %8.2f  %-12s%s\n", i + 1, x->algo,
                    prm, p->map_name[x->map], t * 1e6, x->sim_s[k] >= 0 ? "sim" : "model",
                    busbw(p, k, t), rt > 0 ? rt / t : 0.0, x->bottleneck,
                    x->is_default ? " (registry default)" : "");
        }
        if (p->nccl)
            cs_cli_plan_nccl_table(f, p, k);
    }
    fprintf(f, "\ntime: simulated (sim) or the cost model's (model, not simulated: budget or "
               "--top); vs_ring: the flat ring's time over the row's\n");
    free(order);
}

static void print_csv(FILE *f, const cs_planner_t *p)
{
    int *order = malloc(sizeof(int) * (size_t)(p->ncands + 1));
    if (!order)
        return;
    int ring = cs_planner_ring(p);
    fprintf(f, "size,place,algo,params,order,time_us,source,model_us,sim_us,busbw_GBps,"
               "speedup_vs_ring,bottleneck,registry_default,chosen%s\n",
            p->nccl ? ",choice" : "");
    for (int k = 0; k < p->nsizes; k++) {
        int n = ranking(p, k, order), ch = cs_planner_choice(p, k);
        for (int i = 0; i < n; i++) {
            int c = order[i];
            const cs_planner_cand_t *x = &p->cands[c];
            double t = cs_planner_time(p, c, k), rt = ring >= 0 ? cs_planner_time(p, ring, k) : -1;
            fprintf(f, "%" PRIu64 ",%d,%s,\"%s\",%s,%.3f,%s,%.3f,%.3f,%.3f,%.3f,%s,%d,%d%s\n",
                    p->sizes[k], i + 1, x->algo, x->params, p->map_name[x->map], t * 1e6,
                    x->sim_s[k] >= 0 ? "sim" : "model", x->model_s[k] * 1e6,
                    x->sim_s[k] >= 0 ? x->sim_s[k] * 1e6 : -1.0, busbw(p, k, t),
                    rt > 0 ? rt / t : 0.0, x->bottleneck, x->is_default, c == ch,
                    p->nccl ? ",collstep" : "");
        }
        if (p->nccl)
            cs_cli_plan_nccl_csv(f, p, k);
    }
    free(order);
}

static void print_json(FILE *f, const args_t *a, const cs_planner_t *p)
{
    int *order = malloc(sizeof(int) * (size_t)(p->ncands + 1));
    if (!order)
        return;
    int ring = cs_planner_ring(p);
    fprintf(f, "{\n  \"platform\": ");
    cs_json_write_str(f, a->platform);
    fprintf(f, ",\n  \"collective\": \"%s\",\n  \"ranks\": %d,\n  \"model\": ",
            cs_coll_name(p->coll), p->ranks);
    cs_json_write_str(f, cs_sim_model_name(a->model));
    if (p->nccl) {
        fprintf(f, ",\n  \"nccl\": {\"library\": \"%s\", \"version\": \"%s\", \"system\": ",
                p->nccl_lib, p->nccl_version);
        cs_json_write_str(f, p->nccl_note);
        fprintf(f, "}");
    }
    fprintf(f, ",\n  \"tiers\": [");
    for (int t = 0; t < p->ntiers; t++) {
        const cs_planner_tier_t *x = &p->tiers[t];
        fprintf(f, "%s\n    {\"name\": ", t ? "," : "");
        cs_json_write_str(f, x->name);
        fprintf(f, ", \"group\": %d, \"groups\": %d, \"flow_GBps\": %.3f, \"latency_us\": %.3f, "
                   "\"group_egress_GBps\": %.3f}",
                x->group, x->ngroups, x->rank_bw / 1e9, x->latency * 1e6, x->group_bw / 1e9);
    }
    fprintf(f, "\n  ],\n  \"factorizations\": [");
    for (int i = 0; i < p->nfacts; i++)
        fprintf(f, "%s\"%s\"", i ? ", " : "", p->facts[i]);
    fprintf(f, "],\n  \"orders\": [");
    for (int m = 0; m < p->nmaps; m++) {
        fprintf(f, "%s\n    {\"name\": \"%s\", \"ring_slowest_GBps\": %.3f, \"note\": ",
                m ? "," : "", p->map_name[m], p->map_ring_bw[m] / 1e9);
        cs_json_write_str(f, p->map_note[m]);
        fprintf(f, "}");
    }
    fprintf(f, "\n  ],\n  \"bound\": ");
    cs_json_write_str(f, p->bound_note);
    fprintf(f, ",\n  \"candidates\": %d,\n  \"simulations\": %d,\n  \"seconds\": %.2f,\n"
               "  \"sizes\": [",
            p->ncands, p->simulated, p->seconds);
    for (int k = 0; k < p->nsizes; k++) {
        int n = ranking(p, k, order), ch = cs_planner_choice(p, k);
        fprintf(f, "%s\n    {\"bytes\": %" PRIu64 ", \"bound_us\": %.3f, \"choice\": %d, "
                   "\"ranking\": [",
                k ? "," : "", p->sizes[k], p->bound_s[k] * 1e6, ch >= 0 ? 0 : -1);
        int show = a->show ? (int)a->show : n;
        for (int i = 0, w = 0; i < n; i++) {
            int c = order[i];
            const cs_planner_cand_t *x = &p->cands[c];
            if (i >= show && c != ch && !x->is_default && c != ring)
                continue;
            double t = cs_planner_time(p, c, k), rt = ring >= 0 ? cs_planner_time(p, ring, k) : -1;
            fprintf(f, "%s\n      {\"place\": %d, \"algo\": \"%s\", \"params\": ", w++ ? "," : "",
                    i + 1, x->algo);
            cs_json_write_str(f, x->params);
            fprintf(f, ", \"order\": \"%s\", \"time_us\": %.3f, \"source\": \"%s\", "
                       "\"busbw_GBps\": %.3f, \"speedup_vs_ring\": %.3f, \"bottleneck\": \"%s\", "
                       "\"registry_default\": %s, \"chosen\": %s",
                    p->map_name[x->map], t * 1e6, x->sim_s[k] >= 0 ? "sim" : "model",
                    busbw(p, k, t), rt > 0 ? rt / t : 0.0, x->bottleneck,
                    x->is_default ? "true" : "false", c == ch ? "true" : "false");
            if (p->nccl)
                cs_cli_plan_json_terms(f, p, c, k);
            fprintf(f, "}");
        }
        if (p->nccl)
            cs_cli_plan_nccl_json(f, p, k);
        fprintf(f, "\n    ]");
        if (p->nccl)
            cs_cli_plan_nccl_compare_json(f, p, k);
        fprintf(f, "}");
    }
    fprintf(f, "\n  ]\n}\n");
    free(order);
}

/* --format nccl-tests: the choice per size as one nccl-tests run per rank
 * order (the devices block names the hosts of one order), its title
 * naming the choice of each size. */
static int print_nccl(const args_t *a, const cs_planner_t *p, const uint64_t *asked, int nasked)
{
    cs_platform_t *plat = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    if (cs_platform_open(a->platform, &plat, &err) != CS_OK) {
        fprintf(stderr, "collstep plan: %s\n", err.msg);
        return cs_cli_exit_code(err.code);
    }
    cs_nccl_table_t t[CS_PLANNER_MAX_MAPS];
    cs_result_t rows[CS_PLANNER_MAX_SIZES];
    char title[CS_PLANNER_MAX_MAPS][8192], **devs[CS_PLANNER_MAX_MAPS] = {0};
    const char **hv[CS_PLANNER_MAX_MAPS] = {0};
    int nt = 0, nrows = 0, rc = CS_EXIT_OK;
    memset(t, 0, sizeof(t));
    for (int m = 0; m < p->nmaps && rc == CS_EXIT_OK; m++) {
        int first = nrows;
        size_t len = (size_t)snprintf(title[nt], sizeof(title[nt]),
                                      "%s, %d ranks, platform %s, model %s: the plan's choice per "
                                      "size in rank order %s\nplanned by collstep plan, in the "
                                      "layout of nccl-tests %s",
                                      cs_coll_name(p->coll), p->ranks, a->platform,
                                      cs_sim_model_name(a->model), p->map_name[m],
                                      CS_NCCL_TESTS_VERSION);
        for (int k = 0; k < p->nsizes; k++) {
            int ch = cs_planner_choice(p, k);
            if (ch < 0 || p->cands[ch].map != m)
                continue;
            const cs_planner_cand_t *x = &p->cands[ch];
            uint64_t moved = cs_cli_size_moved(p->coll, p->ranks, p->sizes[k], 4);
            cs_result_fill(&rows[nrows], x->algo, p->coll, p->ranks, moved, CS_DT_F32, CS_OP_SUM,
                           cs_planner_time(p, ch, k) * 1e6, a->platform);
            cs_result_set_provenance(&rows[nrows++], x->params, cs_sim_model_name(a->model),
                                     NULL);
            if (len < sizeof(title[nt]))
                len += (size_t)snprintf(title[nt] + len, sizeof(title[nt]) - len,
                                        "\n  %" PRIu64 " B: %s %s (%s)", moved, x->algo,
                                        x->params[0] ? x->params : "(defaults)",
                                        x->sim_s[k] >= 0 ? "simulated" : "cost model");
        }
        if (nrows == first)
            continue;
        hv[nt] = malloc(sizeof(char *) * (size_t)p->ranks);
        if (!hv[nt]) {
            fprintf(stderr, "collstep plan: out of memory\n");
            rc = CS_EXIT_RUNTIME;
            break;
        }
        for (int r = 0; r < p->ranks; r++)
            hv[nt][r] = cs_planner_host(p, m, r);
        t[nt].title = title[nt];
        t[nt].rows = &rows[first];
        t[nt].n = nrows - first;
        rc = cs_cli_nccl_table("plan", plat, hv[nt], p->ranks, asked, nasked, &t[nt], &devs[nt]);
        nt++;
    }
    cs_cli_report_t r = {CS_FMT_NCCL_TESTS, NULL, 0, 0, NULL};
    if (rc == CS_EXIT_OK)
        rc = cs_cli_nccl_report("plan", &r, t, nt);
    for (int i = 0; i < nt; i++) {
        if (devs[i])
            cs_platform_names_free(devs[i], p->ranks);
        free(hv[i]);
    }
    cs_platform_close(plat);
    return rc;
}

/* ---- tuning table -------------------------------------------------------- */

static int write_table(const args_t *a, const cs_planner_t *p)
{
    cs_err_t err;
    cs_err_clear(&err);
    cs_tuning_t *t = NULL;
    int st = cs_planner_tuning(p, a->platform, &t, &err);
    cs_out_t *o = NULL;
    if (st == CS_OK)
        st = cs_out_begin_file(a->output, CS_OUT_STDOUT | (a->force ? CS_OUT_FORCE : 0),
                               &tuning_kind, &o, &err);
    if (st == CS_OK) {
        st = cs_tuning_write(t, cs_out_stream(o), &err);
        if (st == CS_OK)
            st = cs_out_commit(o, &err);
        else
            cs_out_abort(o);
    }
    cs_tuning_free(t);
    if (st == CS_OK)
        return CS_EXIT_OK;
    if (!err.msg[0])
        snprintf(err.msg, sizeof(err.msg), "out of memory");
    fprintf(stderr, "collstep plan: -o %s: %s\n", a->output, err.msg);
    return cs_cli_exit_code(st);
}

/* Plan, print, write the table: the work of cs_cli_guard's child. */
typedef struct plan_job {
    const args_t *a;
    const cs_planner_opts_t *o;
    const uint64_t *asked; /* the sizes as asked (nccl-tests' sweep line) */
    int nasked;
} plan_job_t;

static int plan_work(void *ctx)
{
    const plan_job_t *j = ctx;
    const args_t *a = j->a;
    cs_planner_t *p = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    int st = cs_planner_run(j->o, &p, &err);
    if (st != CS_OK) {
        fprintf(stderr, "collstep plan: %s\n", err.msg);
        return cs_cli_exit_code(st);
    }
    int rc = CS_EXIT_OK;
    if (a->fmt == CS_FMT_NCCL_TESTS)
        rc = print_nccl(a, p, j->asked, j->nasked);
    else if (a->fmt == CS_FMT_CSV)
        print_csv(stdout, p);
    else if (a->fmt == CS_FMT_JSON)
        print_json(stdout, a, p);
    else
        print_table(stdout, a, p);
    fflush(stdout);
    if (rc == CS_EXIT_OK && a->output)
        rc = write_table(a, p);
    cs_planner_free(p);
    return rc;
}

int cs_cli_plan(int argc, char **argv)
{
    args_t a;
    memset(&a, 0, sizeof(a));
    a.coll = CS_COLL_ALLREDUCE;
    a.fmt = CS_FMT_TABLE;
    a.model = CS_SIM_IDEAL;
    a.top = 4;
    a.show = 8;
    cs_cli_nccl_init(&a.nccl);
    int rc = parse(argc, argv, &a);
    if (rc != CS_EXIT_OK)
        return rc == CS_CLI_DONE ? CS_EXIT_OK : rc;
    cs_coll_t coll = a.coll;
    cs_sim_model_t model = a.model;
    uint64_t sizes[CS_CLI_MAX_SIZES];
    int ns = 0;
    if ((rc = cs_cli_sizes("plan", a.size, cs_dtype_size(CS_DT_F32), sizes, &ns)) != CS_EXIT_OK)
        return rc;
    if (a.fmt == CS_FMT_NCCL_TESTS &&
        (rc = cs_cli_nccl_check_sizes("plan", a.size, sizes, ns)) != CS_EXIT_OK)
        return rc;
    if (a.output) {
        cs_err_t err;
        cs_err_clear(&err);
        int st = cs_out_check(a.output, CS_OUT_STDOUT | (a.force ? CS_OUT_FORCE : 0),
                              &tuning_kind, 0, &err);
        if (st != CS_OK)
            return cs_cli_usage_error("plan", "-o %s: %s", a.output, err.msg);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    cs_planner_opts_t o;
    memset(&o, 0, sizeof(o));
    o.platform = a.platform;
    o.coll = coll;
    o.ranks = (int)a.ranks;
    o.sizes = sizes;
    o.nsizes = ns;
    o.top = (int)a.top;
    o.jobs = a.jobs ? (int)a.jobs : cores > 0 ? (int)cores : 1;
    o.budget = a.budget > 0 ? a.budget : 60.0 * ns;
    o.model = model;
    o.progress = isatty(2) ? 1 : 2;
    o.exhaustive = a.all;
    o.nccl_version = a.nccl_version;
    o.nccl_algo = a.nccl_algo;
    o.nccl_proto = a.nccl_proto;
    if (model == CS_SIM_NCCL && a.nccl_version) {
        int exact = 0;
        const cs_nccl_consts_t *k = cs_nccl_consts_for(a.nccl_version, 0, &exact);
        if (k && !exact)
            fprintf(stderr, "collstep plan: note: NCCL %s is not in the model's table; using "
                            "%s %s (the nearest it has)\n", a.nccl_version, k->lib, k->version);
    }
    plan_job_t j = {&a, &o, sizes, ns};
    return cs_cli_guard("plan", a.output, NULL, plan_work, &j);
}
