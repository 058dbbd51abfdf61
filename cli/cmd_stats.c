/* cmd_stats.c - `collstep stats`: traffic, rounds and alpha-beta cost. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cs_algo.h"
#include "cs_stats.h"
#include "cs_text.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: collstep stats FILE [--size BYTES] [--latency T] [--bandwidth B]\n"
            "                      [--gamma G] [--per-rank] [--format text|json]\n"
            "\n"
            "Per-rank steps and bytes sent / received as a fraction of the message size,\n"
            "communication rounds on the critical path, and the alpha-beta time of the\n"
            "schedule (one full-duplex port per rank) next to the algorithm's closed-form\n"
            "Ben-Nun & Hoefler formula when the schedule names a registered generator.\n"
            "\n"
            "  --size BYTES       message size (default 1M; K/M/G suffixes)\n"
            "  --latency T        alpha: per-message latency (default 1us; s/ms/us/ns)\n"
            "  --bandwidth B      1/beta: link bandwidth (default 10GB/s; B/s, KB/s, MB/s, GB/s;\n"
            "                     powers of 10)\n"
            "  --gamma G          reduction cost in seconds per byte (default 0)\n"
            "  --per-rank         print every rank (default: only when P <= 16)\n"
            "  --format FMT       text (default) or json\n"
            "\n%s",
            cs_cli_exit_help);
}

/* "2us" -> 2e-6.  Returns 0 or -1. */
static int parse_time(const char *s, double *out)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0) || isinf(v))
        return -1;
    double mul = 1;
    if (strcmp(end, "") == 0 || strcmp(end, "s") == 0)
        mul = 1;
    else if (strcmp(end, "ms") == 0)
        mul = 1e-3;
    else if (strcmp(end, "us") == 0)
        mul = 1e-6;
    else if (strcmp(end, "ns") == 0)
        mul = 1e-9;
    else
        return -1;
    *out = v * mul;
    return 0;
}

/* "12.5GB/s" -> 12.5e9 bytes/s.  Returns 0 or -1. */
static int parse_bw(const char *s, double *out)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || !(v > 0) || isinf(v))
        return -1;
    static const struct {
        const char *suf;
        double mul;
    } sufs[] = {{"", 1},          {"B/s", 1},     {"KB/s", 1e3}, {"MB/s", 1e6},
                {"GB/s", 1e9},    {"TB/s", 1e12}, {"Gb/s", 1.25e8}, {"Gbps", 1.25e8}};
    for (size_t i = 0; i < sizeof(sufs) / sizeof(sufs[0]); i++)
        if (strcmp(end, sufs[i].suf) == 0) {
            *out = v * sufs[i].mul;
            return 0;
        }
    return -1;
}

/* Closed-form cost of the generator named in the schedule, or NAN. */
static double formula_time(const cs_sched_t *s, double bytes, const cs_ab_model_t *m)
{
    const cs_algo_t *a = cs_algo_find(s->desc.coll, s->algo);
    if (a == NULL || a->cost == NULL)
        return NAN;
    cs_params_t p;
    cs_params_init(&p);
    if (s->params[0] && cs_params_parse(&p, s->params, NULL) != CS_OK)
        return NAN;
    return a->cost(&s->desc, &p, bytes, m);
}

typedef struct stats_args {
    uint64_t size;
    double alpha, bw, gamma;
    int per_rank, json;
    const char *path;
} stats_args_t;

static int parse(int argc, char **argv, stats_args_t *a)
{
    static const struct option opts[] = {{"size", required_argument, 0, 's'},
                                         {"latency", required_argument, 0, 'l'},
                                         {"bandwidth", required_argument, 0, 'b'},
                                         {"gamma", required_argument, 0, 'g'},
                                         {"per-rank", no_argument, 0, 'r'},
                                         {"format", required_argument, 0, 'f'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int c, rc = CS_EXIT_OK;
    optind = 1;
    while ((c = cs_cli_getopt("stats", argc, argv, "h", opts, help, &rc)) != -1) {
        const char *what = NULL, *opt = NULL;
        switch (c) {
        case 's':
            opt = "--size", what = cs_cli_parse_size(optarg, &a->size) ? "a size like 1M" : NULL;
            break;
        case 'l':
            opt = "--latency", what = parse_time(optarg, &a->alpha) ? "a time like 2us" : NULL;
            break;
        case 'b':
            opt = "--bandwidth";
            what = parse_bw(optarg, &a->bw) ? "a bandwidth like 12.5GB/s" : NULL;
            break;
        case 'g':
            opt = "--gamma", what = parse_time(optarg, &a->gamma) ? "seconds per byte" : NULL;
            break;
        case 'r':
            a->per_rank = 1;
            break;
        case 'f':
            a->json = !strcmp(optarg, "json");
            opt = "--format", what = a->json || !strcmp(optarg, "text") ? NULL : "text or json";
            break;
        default: /* CS_CLI_OPT_EXIT: --help or a bad option */
            return rc == CS_EXIT_OK ? CS_CLI_DONE : rc;
        }
        if (what)
            return cs_cli_usage_error("stats", "%s: expected %s, found '%s'", opt, what, optarg);
    }
    if (argc - optind != 1) {
        help(stderr);
        return CS_EXIT_USAGE;
    }
    a->path = argv[optind];
    return CS_EXIT_OK;
}

/* report: the figures of `s` as JSON or text. */
static void print_stats(const stats_args_t *a, const cs_sched_t *s, const cs_stats_t *st,
                        double t, double f)
{
    int P = s->desc.nranks, per_rank = a->per_rank < 0 ? P <= 16 : a->per_rank, json = a->json;
    uint64_t size = a->size;
    double alpha = a->alpha, bw = a->bw, gamma = a->gamma;
    if (json) {
        printf("{\"collective\": \"%s\", \"algorithm\": \"%s\", \"params\": \"%s\", \"ranks\": %d, "
               "\"chunks\": %u, \"steps\": %llu, \"max_steps_per_rank\": %u, \"rounds\": %u,\n"
               " \"max_sent\": %.9g, \"max_recvd\": %.9g, \"total_sent\": %.9g,\n"
               " \"size_bytes\": %llu, \"alpha_s\": %.9g, \"bandwidth_Bps\": %.9g, \"gamma_s_per_B\": %.9g,\n"
               " \"ab_time_us\": %.6f, \"formula_time_us\": ",
               cs_coll_name(s->desc.coll), s->algo, s->params, P, s->nchunks,
               (unsigned long long)cs_sched_total_steps(s), st->max_steps, st->rounds, st->max_sent,
               st->max_recvd, st->total_sent, (unsigned long long)size, alpha, bw, gamma, t * 1e6);
        if (isnan(f))
            printf("null");
        else
            printf("%.6f", f * 1e6);
        if (s->nswitch > 0) /* only then: other schedules' JSON stays as it was */
            printf(",\n \"switch_ops\": {\"allreduce\": %llu, \"reduce\": %llu, \"multicast\": "
                   "%llu}, \"max_switch_up\": %.9g, \"max_switch_down\": %.9g",
                   (unsigned long long)st->sw_ops[CS_SW_ALLREDUCE],
                   (unsigned long long)st->sw_ops[CS_SW_REDUCE],
                   (unsigned long long)st->sw_ops[CS_SW_MULTICAST], st->max_sw_up, st->max_sw_down);
        printf(",\n \"ranks_detail\": [");
        for (int r = 0; r < P; r++) {
            const cs_rank_stats_t *rs = &st->ranks[r];
            printf("%s\n  {\"rank\": %d, \"steps\": %u, \"sends\": %u, \"recvs\": %u, \"reduces\": %u, "
                   "\"copies\": %u, \"sent\": %.9g, \"recvd\": %.9g",
                   r ? "," : "", r, rs->steps, rs->sends, rs->recvs, rs->reduces, rs->copies, rs->sent,
                   rs->recvd);
            if (s->nswitch > 0)
                printf(", \"switches\": %u, \"switch_up\": %.9g, \"switch_down\": %.9g",
                       rs->switches, rs->sw_up, rs->sw_down);
            printf("}");
        }
        printf("\n]}\n");
    } else {
        printf("schedule     %s %s%s%s on %d ranks, %u chunks, %llu steps\n", cs_coll_name(s->desc.coll),
               s->algo[0] ? s->algo : "(hand written)", s->params[0] ? " " : "", s->params, P,
               s->nchunks, (unsigned long long)cs_sched_total_steps(s));
        printf("traffic      max sent %.6f, max received %.6f of the message per rank; total %.6f\n",
               st->max_sent, st->max_recvd, st->total_sent);
        if (s->nswitch > 0)
            printf("switch       %llu operations (allreduce %llu, reduce %llu, multicast %llu); max up "
                   "%.6f, max down %.6f of the message per rank\n",
                   (unsigned long long)(st->sw_ops[0] + st->sw_ops[1] + st->sw_ops[2]),
                   (unsigned long long)st->sw_ops[CS_SW_ALLREDUCE],
                   (unsigned long long)st->sw_ops[CS_SW_REDUCE],
                   (unsigned long long)st->sw_ops[CS_SW_MULTICAST], st->max_sw_up, st->max_sw_down);
        printf("rounds       %u communication rounds on the critical path; max %u steps per rank\n",
               st->rounds, st->max_steps);
        printf("alpha-beta   %.3f us for %llu bytes (alpha %.3g us, bandwidth %.4g GB/s, gamma %.3g s/B)\n",
               t * 1e6, (unsigned long long)size, alpha * 1e6, bw / 1e9, gamma);
        if (!isnan(f))
            printf("formula      %.3f us (closed form of %s; schedule / formula = %.4f)\n", f * 1e6,
                   s->algo, f > 0 ? t / f : 1.0);
        if (per_rank) {
            printf("\n%6s %7s %6s %6s %7s %6s %10s %10s\n", "rank", "steps", "sends", "recvs",
                   "reduces", "copies", "sent", "received");
            for (int r = 0; r < P; r++) {
                const cs_rank_stats_t *rs = &st->ranks[r];
                printf("%6d %7u %6u %6u %7u %6u %10.6f %10.6f", r, rs->steps, rs->sends, rs->recvs,
                       rs->reduces, rs->copies, rs->sent, rs->recvd);
                if (s->nswitch > 0)
                    printf("  switch %u steps, up %.6f, down %.6f", rs->switches, rs->sw_up,
                           rs->sw_down);
                printf("\n");
            }
        }
    }
}

int cs_cli_stats(int argc, char **argv)
{
    stats_args_t a = {1u << 20, 1e-6, 10e9, 0, -1, 0, NULL};
    int rc = parse(argc, argv, &a);
    if (rc != CS_EXIT_OK)
        return rc == CS_CLI_DONE ? CS_EXIT_OK : rc;
    cs_err_t err = {0};
    cs_sched_t *s = cs_cli_load_sched(a.path, &err);
    if (s == NULL) {
        fprintf(stderr, "%s\n", err.msg);
        return CS_EXIT_USAGE;
    }
    cs_stats_t st = {0};
    if (cs_stats_compute(s, &st, &err) != CS_OK) {
        fprintf(stderr, "collstep stats: %s\n", err.msg);
        rc = CS_EXIT_FAIL;
    } else {
        cs_ab_model_t m = {a.alpha, 1.0 / a.bw, a.gamma};
        double t = cs_stats_ab_time(s, (double)a.size, a.alpha, 1.0 / a.bw, a.gamma, &err);
        print_stats(&a, s, &st, t, formula_time(s, (double)a.size, &m));
    }
    cs_stats_fini(&st);
    cs_cli_free_sched(s);
    return rc;
}
