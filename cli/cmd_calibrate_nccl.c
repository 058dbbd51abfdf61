/*
 * cmd_calibrate_nccl.c - `collstep calibrate --from-nccl-tests LOG...
 * --platform BASE -o PLATFORM.xml`: no live run; the terms of the nccl
 * model (model/cs_nccl.h, cs_nccl_fit_t) are fitted so that simulations of
 * the logs' tables on BASE reproduce the logs' times, and BASE is written
 * with them (its top zone's collstep_nccl_fit property).
 *
 *   read     the logs, every table placed and built as validate does
 *            (cli_ntab.h), NCCL's figures alone (BASE's own fitted terms
 *            set aside); refused (exit 2): a table without a device block
 *            and no --groups, a table of one rank, a BASE with fewer
 *            devices or nodes than a table needs
 *   fit      level by level: tables on one node fix the class of the
 *            links inside a node (nvlink or pci), then tables across nodes
 *            the network (net).  Per level two stages: the class-wide
 *            bandwidth and latency factors over every size of the level,
 *            then per NCCL algorithm and protocol that the logs ran a
 *            refinement of both over that pair's sizes (across nodes also
 *            a fixed cost, net.base, where the sizes show a constant that
 *            the per-step latencies do not explain).  Each stage is a
 *            damped Gauss-Newton fit of log(predicted / measured) with the
 *            simulator in the loop: its Jacobian from variants of each
 *            factor (x 1.25 and / 1.6) simulated beside the current ones,
 *            each block (a pair's factors, moving its sizes alone) damped
 *            and stepped on its own.  A factor no size depends on (under a
 *            quarter of any size's time, a tenth for a latency factor) is
 *            not determined: it stays
 *            NCCL's, and the report says why; of two classes' rates that
 *            the sizes move alike, the one binding now is fitted.
 *   report   the fit per size in validate's layout (measured, predicted
 *            with the fitted terms, error), then the terms: each factor,
 *            the sizes that determined it, those left as NCCL's and why,
 *            and the sizes not fitted within 5 %; a warning (stderr, report,
 *            file) when the network's rate rests on fewer than 4 sizes
 *   write    BASE's XML with the property and the report's summary as a
 *            comment, whole or not at all
 *
 * Exit codes (cli.h): 0; 2 usage and bad input (the refusals above, an
 * unreadable log, no table to fit, an output not collstep's without
 * --force); 3 a simulation failed; 128+N a signal.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifdef CS_HAVE_MODEL

#include "cli_ntab.h"
#include "cs_out.h"

#define MAX_LOGS 64
#define STEP 0.22314355131420976 /* ln 1.25: the variants' change up */
#define STEP_DN 0.47000362924573558 /* ln 1.6: and down, wider: a rate held above another
                                     * link's (which binds) shows only once below it */
#define MIN_SENS 0.25            /* a factor is determined by sizes it moves this much */
/* a latency factor by less: a latency moves the small sizes only, and a
 * fraction of theirs tells it from the rate, which moves every size alike
 * (one HGX H100 node's Ring and all-to-all tables from 32 MiB: their
 * constant 30-40 us is 14-17 % of the smallest size's time at NCCL's
 * figures, and fitting it takes the log's median error from 6 to 3.5 %) */
#define MIN_SENS_LAT 0.1
/* The prior: each factor f costs RIDGE (log f)^2, as much as a size off by
 * 14 % costs for a factor of e, so that sizes too few to tell two factors
 * apart (two sizes of one algorithm for four factors) leave them near NCCL's
 * figures instead of anywhere along the line the sizes allow */
#define RIDGE 0.02
/* the network's fixed cost (net.base) a hundredth of it: NCCL's base
 * latency is a few microseconds, and the fixed cost the network adds can
 * be tens of times that (two HGX H100 nodes, one GPU each: about 100 us
 * over 32 MiB to 512 MiB), which the sizes must be free to say; it still
 * costs a factor of 10 what the sizes lose being off by a few % at noise
 * level */
#define RIDGE_NET_BASE 2e-4
/* the network's fixed cost is determined by a block whose sizes the
 * network's rate determines, at least NET_BASE_ROWS distinct sizes spanning
 * NET_BASE_SPAN in time (a constant then differs from a rate by far more
 * than the noise), where no pair's sizes determine the network's per-step
 * latency (sensitivities) */
#define NET_BASE_SPAN 4.0
#define NET_BASE_ROWS 3
#define FIT_TOL CS_NSET_TOL      /* sizes fitted within 5 % */
#define MIN_NET_ROWS 4           /* the network's rate wants this many sizes that depend on it */

static void help(FILE *f)
{
    fprintf(f,
            "usage: collstep calibrate --from-nccl-tests LOG [LOG...] --platform BASE\n"
            "                          -o PLATFORM.xml [options]\n"
            "\n"
            "Fit the nccl model's terms of BASE (a preset or a SimGrid XML file: the\n"
            "topology you know) to nccl-tests logs, so that `--model nccl` reproduces them,\n"
            "and write BASE with the fitted terms as PLATFORM.xml.  Each table of each LOG\n"
            "is simulated as `collstep validate --nccl-tests` does: the same collective,\n"
            "ranks, placement (the log's nodes on BASE's first nodes), type and sizes, with\n"
            "NCCL's choice of algorithm and protocol.  Logs on one node fit the links\n"
            "inside a node (nvlink, or pci without NVLink), logs across nodes the network\n"
            "(net): per class a bandwidth and a per-step latency factor on NCCL's figures\n"
            "(inside a node also one on NCCL's base latency, where the logs' collectives or\n"
            "rank counts tell it from the steps; across nodes one on the fixed cost of\n"
            "crossing the network, where the sizes show a constant that NCCL's per-step\n"
            "latencies do not explain), then per NCCL algorithm and protocol the logs ran\n"
            "(P2P for all-to-all) a refinement of them; a warning says when the logs leave\n"
            "the network's rate open (2 HGX nodes running NVLSTree are bound by the NVLink\n"
            "switch, not the NICs).  Give BASE the whole machine to predict (its first\n"
            "nodes take the logs): PLATFORM.xml then serves sim, plan and validate at every\n"
            "scale of it (--model nccl).\n"
            "\n"
            "Logs of collstep's own runs (`collstep run --format nccl-tests`, whose titles\n"
            "name the algorithm) fit BASE's tiers instead: per tier a latency and a\n"
            "bandwidth factor on its links (the collstep_factors property, the calibrated\n"
            "model's), each table simulated as the algorithm it ran.  A tier that no size\n"
            "depends on keeps its factor, and the report says so.  Give logs of one kind.\n"
            "\n"
            "  --from-nccl-tests LOG  a log (repeatable; further LOGs may follow as operands)\n"
            "  --platform BASE      the platform to fit (XML file or preset) with at least\n"
            "                       as many nodes and devices as the logs' tables\n"
            "  -o, --output FILE    the fitted platform (SimGrid XML, whole or not at all)\n"
            "  --force              replace an existing FILE that collstep did not write\n"
            "  --groups FILE        the node of each rank for tables without a device block:\n"
            "                       lines NAME (one rank), NAME N, NAME:N or NAME slots=N\n"
            "%s%s"
            "  --format F           the report: table (default), csv, json\n"
            "  --report FILE        write the report to FILE instead of stdout\n"
            "  --help               this text\n"
            "\n"
            "Refused (exit 2): a table without a device block unless --groups gives its\n"
            "nodes, a table of one rank, a BASE with fewer devices or nodes than a table.\n"
            "\n%s"
            "\nexample: collstep calibrate --from-nccl-tests node1.log nodes2.log \\\n"
            "           --platform hgx-h100:nodes=64 -o cluster.xml\n"
            "         collstep sim --platform cluster.xml --model nccl --algo nccl --size 1M:8G\n",
            cs_nset_nccl_help, cs_nset_filter_help, cs_cli_exit_help);
}

typedef struct opts {
    const char *logs[MAX_LOGS];
    int nlogs;
    const char *platform, *version, *groups, *output, *algo, *proto;
    int force;
    cs_nset_t filt; /* --coll, --min-size, --max-size */
    cs_cli_report_t rep;
} opts_t;

static int parse_opt(void *ctx, int c, const char *arg)
{
    opts_t *o = ctx;
    switch (c) {
    case 'L':
        return cs_nset_add_log("calibrate", "--from-nccl-tests", o->logs, &o->nlogs, MAX_LOGS, arg);
    case 'P': return cs_cli_once("calibrate", "--platform", &o->platform, arg);
    case 'G': return cs_cli_once("calibrate", "--groups", &o->groups, arg);
    case 'V': return cs_nset_version_opt("calibrate", arg, &o->version);
    case 1002: return cs_nset_choice_opt("calibrate", 0, arg, &o->algo);
    case 1003: return cs_nset_choice_opt("calibrate", 1, arg, &o->proto);
    case 1010: return cs_nset_filter_opt("calibrate", 0, arg, &o->filt);
    case 1011: return cs_nset_filter_opt("calibrate", 1, arg, &o->filt);
    case 1012: return cs_nset_filter_opt("calibrate", 2, arg, &o->filt);
    case 'f': return cs_cli_parse_format("calibrate", arg, &o->rep.fmt);
    case 'o': return cs_cli_once("calibrate", "-o", &o->output, arg);
    case 'R': return cs_cli_once("calibrate", "--report", &o->rep.output, arg);
    case 'F': o->force = o->rep.force = 1; return CS_EXIT_OK;
    default: return CS_EXIT_USAGE;
    }
}

static int parse(int argc, char **argv, opts_t *o)
{
    static const struct option lo[] = {
        {"from-nccl-tests", required_argument, 0, 'L'},
        {"platform", required_argument, 0, 'P'},
        {"groups", required_argument, 0, 'G'},
        {"nccl-version", required_argument, 0, 'V'},
        {"nccl-algo", required_argument, 0, 1002}, {"nccl-proto", required_argument, 0, 1003},
        {"coll", required_argument, 0, 1010}, {"min-size", required_argument, 0, 1011},
        {"max-size", required_argument, 0, 1012},
        {"format", required_argument, 0, 'f'},
        {"output", required_argument, 0, 'o'},
        {"report", required_argument, 0, 'R'},
        {"force", no_argument, 0, 'F'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    memset(o, 0, sizeof(*o));
    o->rep.fmt = CS_FMT_TABLE;
    o->rep.flag = "--report";
    if (cs_cli_help_asked(argc, argv)) { /* also "--nccl-tests --help" */
        help(stdout);
        return CS_CLI_DONE;
    }
    int rc = cs_cli_options("calibrate", argc, argv, ":ho:", lo, help, parse_opt, o);
    if (rc != CS_EXIT_OK)
        return rc;
    for (int i = optind; i < argc && rc == CS_EXIT_OK; i++)
        rc = cs_nset_add_log("calibrate", "--from-nccl-tests", o->logs, &o->nlogs, MAX_LOGS,
                             argv[i]);
    if (rc != CS_EXIT_OK)
        return rc;
    if (!o->nlogs)
        return cs_cli_usage_hint("calibrate", "--from-nccl-tests LOG: no log given");
    if (!o->platform)
        return cs_cli_usage_hint("calibrate", "--from-nccl-tests: --platform BASE is required "
                                              "(the platform whose terms are fitted)");
    if (!o->output)
        return cs_cli_usage_hint("calibrate", "--from-nccl-tests: -o PLATFORM.xml is required "
                                              "(the fitted platform)");
    if (strchr(o->platform, '@'))
        return cs_cli_usage_error("calibrate", "--platform %s: give the platform alone (the "
                                               "nccl model is the one fitted)",
                                  o->platform);
    if (strcmp(o->output, "-") == 0)
        return cs_cli_usage_error("calibrate", "-o -: the fitted platform is written to a file "
                                               "(the report goes to standard output)");
    cs_err_t err;
    cs_err_clear(&err);
    if (cs_out_check(o->output, o->force ? CS_OUT_FORCE : 0, &cs_platform_out_kind, 0, &err) !=
        CS_OK)
        return cs_cli_usage_error("calibrate", "-o %s: %s", o->output, err.msg);
    if (o->rep.output && strcmp(o->rep.output, o->output) == 0)
        return cs_cli_usage_error("calibrate", "--report %s: the same file as -o", o->output);
    rc = cs_nset_check_not_input("calibrate", "-o", o->output, o->logs, o->nlogs);
    if (rc == CS_EXIT_OK)
        rc = cs_nset_check_not_input("calibrate", "--report", o->rep.output, o->logs, o->nlogs);
    if (rc == CS_EXIT_OK)
        rc = cs_nset_check_report("calibrate", "--report", o->rep.output, o->force);
    return rc;
}

/* ---- the fit ---------------------------------------------------------------------- */

/* One parameter block: factors of one or two classes (param q: class
 * cls[q / NK], of kind q % NK: CS_NCCL_FIT_BW, _LAT (per-step latency) or
 * _BASE (NCCL's per-collective base latency; for net the fixed cost across nodes)),
 * class-wide (algo < 0) or one algorithm and protocol's; its rows are the
 * level's sizes it serves. */
#define NK CS_NCCL_FIT_NKINDS
#define NQ (2 * NK)
#define KIND_NAME(q) ((q) % NK == CS_NCCL_FIT_BASE ? "base" : (q) % NK ? "lat" : "bw")
/* the sensitivity that determines a factor of parameter q */
#define Q_SENS(q) ((q) % NK ? MIN_SENS_LAT : MIN_SENS)
/* whether parameter q of block b is the network's fixed cost (net.base) */
#define NET_BASE(b, q) ((q) % NK == CS_NCCL_FIT_BASE && (b)->cls[(q) / NK] == CS_SIM_HW_NET)
/* the prior's weight on parameter q of block b */
#define Q_RIDGE(b, q) (NET_BASE(b, q) ? RIDGE_NET_BASE : RIDGE)
/* Simulation rounds per stage (a round: the trial step's factors, or the
 * Jacobian's 2 x factors + 1 variants at once); a stage stops sooner once
 * no step moves a factor by 1 %.  Ten left a 2-node log of Tree and
 * NVLSTree sizes (issue309) on a path through a network twice too slow; it
 * settles in 17. */
#define MAX_ROUNDS 30
typedef struct block {
    int cls[2], ncls;
    int algo, proto;
    int nrows;
    int det[NQ];     /* the parameter is determined */
    double sens[NQ]; /* the largest |d log t / d log factor| over its rows */
    int ndet[NQ];    /* its rows that depend on it (|d log t / d log factor| >= MIN_SENS) */
    int tied[NQ];    /* not determined: its rows move it as they move another (the other
                        class's rate; a base latency, its class's per-step latency):
                        TIE_BINDS, TIE_NET (a link inside a node left to one-node logs),
                        TIE_NET_BASE (a latency inside a node that moves the sizes only as
                        the network's fixed cost does) */
    int tie_net;     /* how a tie of the two classes' rates is broken, decided once at the
                        stage's start: 1 the network's rate fitted, -1 the binding one */
} block_t;

typedef struct fitrun {
    opts_t *o;
    cs_nset_t s;
    cs_nccl_fit_t fit;
    unsigned char seen0[CS_NCCL_NLABELS][CS_NCCL_NPROTOS]; /* pairs fitted on one node */
    char said[8192];       /* the summary: what determined each term, what did not */
    size_t nsaid;
    int sims;
} fitrun_t;

#define SAY(f, ...)                                                                              \
    do {                                                                                          \
        int w_ = snprintf((f)->said + (f)->nsaid,                                                 \
                          (f)->nsaid < sizeof((f)->said) ? sizeof((f)->said) - (f)->nsaid : 0,    \
                          __VA_ARGS__);                                                           \
        if (w_ > 0)                                                                               \
            (f)->nsaid += (size_t)w_;                                                             \
    } while (0)

/* The block of row k of table t in a stage (class-wide: block 0). */
static int block_of(const cs_ntab_t *t, int k, const block_t *b, int nb, int perpair)
{
    if (!perpair)
        return 0;
    for (int i = 0; i < nb; i++)
        if (b[i].algo == t->nc.inst_algo[2 * k] && b[i].proto == t->nc.inst_algo[2 * k + 1])
            return i;
    return -1;
}

static double fit_value(const cs_nccl_fit_t *f, const block_t *b, int q)
{
    return cs_nccl_fit_get(f, b->cls[q / NK], b->algo, b->algo < 0 ? 0 : b->proto, q % NK);
}

static void fit_put(cs_nccl_fit_t *f, const block_t *b, int q, double v)
{
    (void)cs_nccl_fit_set(f, b->cls[q / NK], b->algo, b->proto, q % NK, v);
}

/* Simulate the level's tables (sub) under nvar fits (fits[v] for all). */
static int sim_level(fitrun_t *r, cs_nset_t *sub, int nvar, const cs_nccl_fit_t *fits,
                     double *pred)
{
    const cs_nccl_fit_t **fp = calloc((size_t)nvar * (size_t)sub->ntab + 1, sizeof(*fp));
    if (!fp)
        return cs_cli_usage_error("calibrate", "%s", "out of memory");
    for (int v = 0; v < nvar; v++)
        for (int i = 0; i < sub->ntab; i++)
            fp[v * sub->ntab + i] = &fits[v];
    int rc = cs_nset_simulate(sub, nvar, fp, pred);
    r->sims++;
    free(fp);
    return rc;
}

/* What block bi's factors move of the fit's cost: its rows' squared log
 * errors and the prior on its factors (rowb: each row's block). */
static double block_cost(const cs_nset_t *sub, const double *pred, const int *rowb,
                         const cs_nccl_fit_t *f, const block_t *b, int bi)
{
    double c = 0;
    for (int i = 0, o = 0; i < sub->ntab; o += sub->tab[i++]->n)
        for (int k = 0; k < sub->tab[i]->n; k++)
            if (rowb[o + k] == bi) {
                double e = log(pred[o + k] / sub->tab[i]->meas[k]);
                c += e * e;
            }
    for (int q = 0; q < NK * b[bi].ncls; q++) {
        double l = log(fit_value(f, &b[bi], q));
        c += Q_RIDGE(&b[bi], q) * l * l;
    }
    return c;
}

static double median_abs_err(const cs_nset_t *sub, const double *pred)
{
    double *e = calloc((size_t)sub->total + 1, sizeof(double));
    if (!e)
        return NAN;
    int n = 0;
    for (int i = 0, o = 0; i < sub->ntab; o += sub->tab[i++]->n)
        for (int k = 0; k < sub->tab[i]->n; k++)
            e[n++] = fabs(pred[o + k] / sub->tab[i]->meas[k] - 1) * 100;
    for (int i = 1; i < n; i++) /* insertion sort: a few dozen sizes */
        for (int j = i; j > 0 && e[j] < e[j - 1]; j--) {
            double x = e[j];
            e[j] = e[j - 1], e[j - 1] = x;
        }
    double m = n ? (n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2) : NAN;
    free(e);
    return m;
}

enum { TIE_BINDS = 1, TIE_NET = 2, TIE_NET_BASE = 3 };

/* Whether block i's rows move its parameters qa and qb alike: their
 * Jacobian columns over those rows within 0.995 of parallel. */
static int moves_alike(const cs_nset_t *sub, const double *jac, const block_t *b, int nb,
                       int perpair, int i, int qa, int qb)
{
    size_t T = (size_t)sub->total;
    double dot = 0, na = 0, nq = 0;
    for (int t = 0, o = 0; t < sub->ntab; o += sub->tab[t++]->n)
        for (int k = 0; k < sub->tab[t]->n; k++) {
            if (block_of(sub->tab[t], k, b, nb, perpair) != i)
                continue;
            size_t x = (size_t)o + (size_t)k;
            double a = jac[(size_t)qa * T + x], d = jac[(size_t)qb * T + x];
            dot += a * d, na += a * a, nq += d * d;
        }
    return dot > 0.995 * sqrt(na * nq);
}

/* The sensitivities of the blocks' factors and which are determined
 * (pred: the current times, for the direction a tie is broken in). */
static void sensitivities(const cs_nset_t *sub, const double *jac, const double *jup,
                          const double *pred, block_t *b, int nb, int perpair)
{
    size_t T = (size_t)sub->total;
    for (int i = 0; i < nb; i++) {
        b[i].nrows = 0;
        for (int q = 0; q < NQ; q++)
            b[i].sens[q] = 0, b[i].ndet[q] = b[i].tied[q] = 0;
    }
    for (int i = 0, o = 0; i < sub->ntab; o += sub->tab[i++]->n)
        for (int k = 0; k < sub->tab[i]->n; k++) {
            int bi = block_of(sub->tab[i], k, b, nb, perpair);
            if (bi < 0)
                continue;
            b[bi].nrows++;
            for (int q = 0; q < NK * b[bi].ncls; q++) {
                double d = fabs(jac[q * T + (size_t)o + (size_t)k]);
                b[bi].sens[q] = fmax(b[bi].sens[q], d);
                b[bi].ndet[q] += d >= Q_SENS(q);
            }
        }
    for (int i = 0; i < nb; i++)
        for (int q = 0; q < NQ; q++)
            b[i].det[q] = q < NK * b[i].ncls && !NET_BASE(&b[i], q) && b[i].sens[q] >= Q_SENS(q);
    /* two classes' rates that the sizes move alike (a ring or a tree whose
     * time lowering either rate lengthens the same way: the slower of the
     * two binds) are one term, not two: the one that binds now (raising it
     * shortens the sizes) is fitted and the other kept, as the sizes cannot
     * tell how much slower it may be.  Where both bind at once (raising
     * either changes nothing) and the sizes are slower than the model, the
     * network's is lowered, as below; faster, both are fitted, the prior
     * sharing the change between them */
    for (int i = 0; i < nb; i++) {
        if (b[i].ncls < 2 || !b[i].det[0] || !b[i].det[NK])
            continue;
        double dot = 0, n0 = 0, n2 = 0, u0 = 0, u2 = 0;
        for (int t = 0, o = 0; t < sub->ntab; o += sub->tab[t++]->n)
            for (int k = 0; k < sub->tab[t]->n; k++) {
                if (block_of(sub->tab[t], k, b, nb, perpair) != i)
                    continue;
                size_t x = (size_t)o + (size_t)k;
                double a = jac[x], c = jac[NK * T + x];
                dot += a * c, n0 += a * a, n2 += c * c;
                u0 = fmax(u0, fabs(jup[x]));
                u2 = fmax(u2, fabs(jup[NK * T + x]));
            }
        if (!(dot > 0.95 * sqrt(n0 * n2)))
            continue;
        int both = u0 < MIN_SENS && u2 < MIN_SENS; /* both bind at once */
        /* logs across nodes speak for the network: where the sizes are
         * slower than the model, lowering either rate would do, and the
         * network's is lowered, the links inside a node keeping what one-node
         * logs (or NCCL's figures) say; only where the sizes are faster
         * must the one that binds be raised.  A switch's pair (NVLSTree's
         * NVLink switch) is its own and fitted as it binds */
        if (!b[i].tie_net) { /* at the stage's start, not again as the fit nears the log */
            double e = 0;
            int ne = 0;
            for (int t = 0, o = 0; t < sub->ntab; o += sub->tab[t++]->n)
                for (int k = 0; k < sub->tab[t]->n; k++)
                    if (block_of(sub->tab[t], k, b, nb, perpair) == i)
                        e += log(pred[(size_t)o + (size_t)k] / sub->tab[t]->meas[k]), ne++;
            b[i].tie_net = ne && e / ne < -log(1.02) && b[i].cls[0] == CS_SIM_HW_NET &&
                                   !cs_nccl_fit_switch_pair(b[i].algo, b[i].cls[1])
                               ? 1
                               : -1;
        }
        if (b[i].tie_net > 0) {
            b[i].det[NK] = 0;
            b[i].tied[NK] = TIE_NET;
            continue;
        }
        if (both)
            continue;
        b[i].det[u0 >= u2 ? NK : 0] = 0;
        b[i].tied[u0 >= u2 ? NK : 0] = TIE_BINDS;
    }
    /* the network's fixed cost: what a log at one node count shows as a
     * constant beside the rate that NCCL's few per-step latencies across
     * nodes do not explain.  Its sensitivity at NCCL's base latency (a few
     * microseconds) says nothing of what the sizes could show, so it is
     * determined by the sizes' span instead: a block whose rate the network
     * binds, with sizes spanning NET_BASE_SPAN in time, and whose per-step
     * latency is not determined (where it is, the two move the sizes alike
     * at one node count, and NCCL's per-step latency is fitted; so too
     * where another pair's sizes determine it: the logs then say what a
     * step across nodes costs, and a constant the per-step latency leaves
     * is not the network's).  Decided after the rates' ties: the rate it
     * is told from must be the one fitted */
    int net_lat = 0;
    for (int i = 0; i < nb; i++)
        for (int c = 0; c < b[i].ncls; c++)
            net_lat |= b[i].cls[c] == CS_SIM_HW_NET && b[i].det[NK * c + CS_NCCL_FIT_LAT];
    for (int i = 0; i < nb && !net_lat; i++)
        for (int c = 0; c < b[i].ncls; c++) {
            int qb = NK * c + CS_NCCL_FIT_BASE;
            if (b[i].cls[c] != CS_SIM_HW_NET || !b[i].det[NK * c] ||
                cs_nccl_fit_switch_pair(b[i].algo, CS_SIM_HW_NET))
                continue;
            double lo = HUGE_VAL, hi = 0;
            uint64_t sz[NET_BASE_ROWS];
            int nsz = 0; /* distinct sizes, up to NET_BASE_ROWS */
            for (int t = 0; t < sub->ntab; t++)
                for (int k = 0; k < sub->tab[t]->n; k++)
                    if (block_of(sub->tab[t], k, b, nb, perpair) == i) {
                        lo = fmin(lo, sub->tab[t]->meas[k]);
                        hi = fmax(hi, sub->tab[t]->meas[k]);
                        int seen = 0;
                        for (int u = 0; u < nsz; u++)
                            seen |= sz[u] == sub->tab[t]->sizes[k];
                        if (!seen && nsz < NET_BASE_ROWS)
                            sz[nsz++] = sub->tab[t]->sizes[k];
                    }
            b[i].det[qb] = nsz >= NET_BASE_ROWS && hi >= NET_BASE_SPAN * lo;
            b[i].sens[qb] = b[i].det[qb] ? MIN_SENS_LAT : b[i].sens[qb];
            /* a latency of the links inside a node that moves the sizes only
             * as the fixed cost does (one GPU per node: NCCL's base latency
             * is all the node's links add) is one term with it: the
             * network's is fitted */
            for (int q = 0; b[i].det[qb] && q < NK * b[i].ncls; q++) {
                if (q / NK == c || q % NK == CS_NCCL_FIT_BW || !b[i].det[q])
                    continue;
                if (moves_alike(sub, jac, b, nb, perpair, i, qb, q)) {
                    b[i].det[q] = 0;
                    b[i].tied[q] = TIE_NET_BASE;
                }
            }
        }
    /* a class's per-step and base latencies that the sizes move alike (one
     * collective at one rank count: every size pays so many steps and one
     * base) are one term: the per-step latency is fitted (as a base
     * factor not given follows it) and the base kept with it.  Tables
     * with other step counts (all-reduce beside all-gather, another rank
     * count) tell them apart */
    for (int i = 0; i < nb; i++)
        for (int c = 0; c < b[i].ncls; c++) {
            int ql = NK * c + CS_NCCL_FIT_LAT, qb = NK * c + CS_NCCL_FIT_BASE;
            if (!b[i].det[ql] || !b[i].det[qb])
                continue;
            if (moves_alike(sub, jac, b, nb, perpair, i, ql, qb)) {
                b[i].det[qb] = 0;
                b[i].tied[qb] = TIE_BINDS;
            }
        }
}

/* Solve A x = g (n x n, A symmetric positive definite after damping) by
 * Gaussian elimination with partial pivoting.  0 when singular. */
static int solve(double A[NQ][NQ], double *g, int n, double *x)
{
    int piv[NQ];
    for (int i = 0; i < n; i++)
        piv[i] = i;
    for (int c = 0; c < n; c++) {
        int m = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(A[r][c]) > fabs(A[m][c]))
                m = r;
        if (!(fabs(A[m][c]) > 1e-24))
            return 0;
        for (int k = 0; k < n; k++) {
            double t = A[c][k];
            A[c][k] = A[m][k], A[m][k] = t;
        }
        double t = g[c];
        g[c] = g[m], g[m] = t;
        for (int r = c + 1; r < n; r++) {
            double f = A[r][c] / A[c][c];
            for (int k = c; k < n; k++)
                A[r][k] -= f * A[c][k];
            g[r] -= f * g[c];
        }
    }
    for (int c = n - 1; c >= 0; c--) {
        double v = g[c];
        for (int k = c + 1; k < n; k++)
            v -= A[c][k] * x[k];
        x[c] = v / A[c][c];
    }
    (void)piv;
    return 1;
}

/* The damped Gauss-Newton step from `cur` (errors from pred, Jacobian
 * jac), per block (the blocks' rows are disjoint): (J'J + mu_i D) d = -J'e
 * over its determined factors, at most x 3 per factor.  The largest |d|. */
static double gn_step(const cs_nset_t *sub, const double *pred, const double *jac,
                      const block_t *b, int nb, int perpair, const double *mu,
                      const cs_nccl_fit_t *cur, cs_nccl_fit_t *next)
{
    size_t T = (size_t)sub->total;
    double maxd = 0;
    *next = *cur;
    for (int i = 0; i < nb; i++) {
        int qi[NQ], n = 0;
        for (int q = 0; q < NQ; q++)
            if (b[i].det[q])
                qi[n++] = q;
        if (!n)
            continue;
        double A[NQ][NQ] = {{0}}, g[NQ] = {0}, d[NQ] = {0};
        for (int t = 0, o = 0; t < sub->ntab; o += sub->tab[t++]->n)
            for (int k = 0; k < sub->tab[t]->n; k++) {
                if (block_of(sub->tab[t], k, b, nb, perpair) != i)
                    continue;
                size_t x = (size_t)o + (size_t)k;
                double e = log(pred[x] / sub->tab[t]->meas[k]);
                for (int u = 0; u < n; u++) {
                    double ju = jac[(size_t)qi[u] * T + x];
                    g[u] -= ju * e;
                    for (int w = 0; w < n; w++)
                        A[u][w] += ju * jac[(size_t)qi[w] * T + x];
                }
            }
        for (int u = 0; u < n; u++) { /* the damping and the prior */
            double rq = Q_RIDGE(&b[i], qi[u]);
            A[u][u] = A[u][u] * (1 + mu[i]) + rq + 1e-12;
            g[u] -= rq * log(fit_value(cur, &b[i], qi[u]));
        }
        if (!solve(A, g, n, d))
            continue;
        for (int u = 0; u < n; u++) {
            if (!isfinite(d[u]))
                continue;
            double dq = fmax(-1.1, fmin(1.1, d[u]));
            double v = fit_value(cur, &b[i], qi[u]) * exp(dq);
            fit_put(next, &b[i], qi[u], fmax(1e-3, fmin(1e3, v)));
            maxd = fmax(maxd, fabs(dq));
        }
    }
    return maxd;
}

/* One stage: the factors of blocks b[0..nb) of a level fitted, the
 * simulator in the loop (at most MAX_ROUNDS rounds of simulations). */
static int stage(fitrun_t *r, cs_nset_t *sub, block_t *b, int nb, int perpair, const char *what)
{
    size_t T = (size_t)sub->total;
    int nq = 0;
    for (int i = 0; i < nb; i++)
        nq = NK * b[i].ncls > nq ? NK * b[i].ncls : nq;
    double *pred = calloc((size_t)(2 * nq + 1) * T + 1, sizeof(double));
    double *jac = calloc((size_t)nq * T + 1, sizeof(double));
    double *jdet = calloc((size_t)nq * T + 1, sizeof(double));
    double *jup = calloc((size_t)nq * T + 1, sizeof(double));
    double *trial = calloc(T + 1, sizeof(double));
    if (!pred || !jac || !jdet || !jup || !trial) {
        free(pred), free(jac), free(jdet), free(jup), free(trial);
        return cs_cli_usage_error("calibrate", "%s", "out of memory");
    }
    /* the blocks' rows are disjoint and each block's factors move its rows
     * alone: each block has its own damping and takes a step only where
     * its own rows fit better (one block's bad step does not hold back the
     * others) */
    double *mu = calloc((size_t)nb + 1, sizeof(double));
    double *bc = calloc((size_t)nb + 1, sizeof(double));
    int *rowb = calloc(T + 1, sizeof(int));
    if (!mu || !bc || !rowb) {
        free(pred), free(jac), free(jdet), free(jup), free(trial), free(mu), free(bc), free(rowb);
        return cs_cli_usage_error("calibrate", "%s", "out of memory");
    }
    for (int i = 0, o = 0; i < sub->ntab; o += sub->tab[i++]->n)
        for (int k = 0; k < sub->tab[i]->n; k++)
            rowb[o + k] = block_of(sub->tab[i], k, b, nb, perpair);
    for (int i = 0; i < nb; i++)
        mu[i] = 1e-3;
    cs_nccl_fit_t var[2 * NQ + 1], next;
    int rc = CS_EXIT_OK, need_jac = 1, accepted = 0;
    for (int sims = 0; sims < MAX_ROUNDS && rc == CS_EXIT_OK;) {
        if (need_jac) {
            /* each factor x 1.25 and / 1.6: a rate held above another
             * link's (which binds) moves no size when raised, and when
             * lowered only once below it; the model's times are full of
             * such kinks (a ring across nodes crosses NVLink and the NICs) */
            for (int q = 0; q <= 2 * nq; q++)
                var[q] = r->fit;
            for (int q = 0; q < nq; q++)
                for (int i = 0; i < nb; i++)
                    if (q < NK * b[i].ncls) {
                        double v = fit_value(&r->fit, &b[i], q);
                        fit_put(&var[q + 1], &b[i], q, v * exp(STEP));
                        fit_put(&var[nq + q + 1], &b[i], q, v * exp(-STEP_DN));
                    }
            if ((rc = sim_level(r, sub, 2 * nq + 1, var, pred)) != CS_EXIT_OK)
                break;
            sims++;
            for (int q = 0; q < nq; q++)
                for (size_t x = 0; x < T; x++) {
                    double up = log(pred[(size_t)(q + 1) * T + x] / pred[x]) / STEP;
                    double dn = log(pred[x] / pred[(size_t)(nq + q + 1) * T + x]) / STEP_DN;
                    jac[(size_t)q * T + x] = (up * STEP + dn * STEP_DN) / (STEP + STEP_DN);
                    jdet[(size_t)q * T + x] = fabs(up) > fabs(dn) ? up : dn;
                    jup[(size_t)q * T + x] = up;
                }
            sensitivities(sub, jdet, jup, pred, b, nb, perpair);
            for (int i = 0; i < nb; i++)
                bc[i] = block_cost(sub, pred, rowb, &r->fit, b, i);
            need_jac = 0;
            fprintf(stderr, "collstep calibrate: %s: median |error| %.1f %%\n", what,
                    median_abs_err(sub, pred));
        }
        double maxd = gn_step(sub, pred, jac, b, nb, perpair, mu, &r->fit, &next);
        if (maxd < 0.01) /* under 1 %: done */
            break;
        if ((rc = sim_level(r, sub, 1, &next, trial)) != CS_EXIT_OK)
            break;
        sims++;
        int any = 0, live = 0;
        for (int i = 0; i < nb; i++) {
            double c = block_cost(sub, trial, rowb, &next, b, i);
            if (c < bc[i]) {
                for (int q = 0; q < NK * b[i].ncls; q++)
                    if (b[i].det[q])
                        fit_put(&r->fit, &b[i], q, fit_value(&next, &b[i], q));
                for (size_t x = 0; x < T; x++)
                    if (rowb[x] == i)
                        pred[x] = trial[x];
                bc[i] = c;
                mu[i] = fmax(1e-4, mu[i] / 3);
                any = 1;
            } else {
                mu[i] *= 10;
            }
            live |= mu[i] <= 1e4;
        }
        if (any) {
            fprintf(stderr, "collstep calibrate: %s: median |error| %.1f %%\n", what,
                    median_abs_err(sub, pred));
            if (++accepted % 2 == 0) /* refresh the Jacobian now and then */
                need_jac = 1;
        }
        if (!live)
            break;
    }
    free(mu), free(bc), free(rowb);
    free(pred), free(jac), free(jdet), free(jup), free(trial);
    return rc;
}

/* The tables of one level (0: one node, 1: across nodes) as a set. */
static cs_nset_t level_set(const fitrun_t *r, int level, cs_ntab_t **tabs)
{
    cs_nset_t sub = r->s;
    sub.tab = tabs;
    sub.ntab = sub.total = 0;
    for (int i = 0; i < r->s.ntab; i++)
        if ((r->s.tab[i]->nnodes > 1) == level) {
            tabs[sub.ntab++] = r->s.tab[i];
            sub.total += r->s.tab[i]->n;
        }
    return sub;
}

static int class_apart(int a, int cls, int q);

/* "A to B": the sizes of the level's rows in block b. */
static void block_range(const block_t *b, const cs_nset_t *sub, char *buf, size_t len)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < sub->ntab; i++)
        for (int k = 0; k < sub->tab[i]->n; k++)
            if (block_of(sub->tab[i], k, b, 1, b->algo >= 0) == 0) {
                lo = sub->tab[i]->sizes[k] < lo ? sub->tab[i]->sizes[k] : lo;
                hi = sub->tab[i]->sizes[k] > hi ? sub->tab[i]->sizes[k] : hi;
            }
    char a[32], z[32];
    cs_cli_size_text(lo, a, sizeof(a));
    cs_cli_size_text(hi, z, sizeof(z));
    if (lo == hi)
        snprintf(buf, len, "%s", a);
    else
        snprintf(buf, len, "%s to %s", a, z);
}

/* The pairs among pb[0..np) whose factor q determined a class-wide one:
 * "Tree/LL128 (1 MiB to 2 MiB), ..." */
static void class_sources(const block_t *pb, int np, int q, int cls, const cs_nset_t *sub,
                          char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int j = 0; j < np; j++)
        if (pb[j].det[q] && !class_apart(pb[j].algo, cls, q)) {
            char rg[80];
            block_range(&pb[j], sub, rg, sizeof(rg));
            int w = snprintf(buf + o, len - o, "%s%s/%s (%s)", o ? ", " : "",
                             cs_nccl_algo_name(pb[j].algo), cs_nccl_proto_name(pb[j].proto), rg);
            if (w > 0)
                o += (size_t)w;
            if (o >= len) /* cut: the sources name the pairs, the summary has them all */
                o = len - 1;
        }
}

/* src: for a class-wide block, the pairs whose factors made each (NULL
 * for a pair's block). */
static void say_undetermined(fitrun_t *r, const block_t *b, const cs_nset_t *sub,
                             char src[][256])
{
    char pair[48] = "";
    if (b->algo >= 0)
        snprintf(pair, sizeof(pair), ".%s/%s", cs_nccl_algo_name(b->algo),
                 cs_nccl_proto_name(b->proto));
    char rg[80];
    block_range(b, sub, rg, sizeof(rg));
    for (int q = 0; q < NK * b->ncls; q++) {
        const char *cn = cs_nccl_fit_class_name(b->cls[q / NK]), *kn = KIND_NAME(q);
        int base = q % NK == CS_NCCL_FIT_BASE;
        if (base && cs_nccl_fit_switch_pair(b->algo, b->cls[q / NK]))
            continue; /* a switch's latency once takes its latency factor */
        if (NET_BASE(b, q) && !b->det[q]) {
            /* the network's fixed cost: said where the pair's rate was
             * fitted (where it was not, the rate's line says why) */
            if (!src && b->det[q - CS_NCCL_FIT_BASE])
                SAY(r, "  net.base%s: not determined, none added: %s\n", pair,
                    b->det[q - CS_NCCL_FIT_BASE + CS_NCCL_FIT_LAT]
                        ? "the per-step latency was fitted in its place (at one node count "
                          "the sizes move the two alike; logs at another node count tell them "
                          "apart)"
                        : "the sizes are too few or span too little time to tell a fixed cost "
                          "across nodes from the rate (3 sizes over 4 x in time tell it), or "
                          "another pair's sizes determine the network's per-step latency");
            continue;
        }
        if (b->det[q] && src)
            SAY(r, "  %s.%s: from %s: %.4g\n", cn, kn, src[q], fit_value(&r->fit, b, q));
        else if (b->det[q]) {
            double v = fit_value(&r->fit, b, q);
            SAY(r, "  %s.%s%s: fitted to %d size%s (%s): %.4g%s%s\n", cn, kn, pair, b->nrows,
                b->nrows == 1 ? "" : "s", rg, v,
                v >= 0.99e3 ? " (at the fit's limit, 1000 times NCCL's figure"
                : v <= 1.01e-3 ? " (at the fit's limit, a thousandth of NCCL's figure" : "",
                v <= 1.01e-3 || v >= 0.99e3
                    ? ": the sizes ask for more than this term can give, so the model does not "
                      "follow them; the sizes off by more than 5 % below say which)"
                    : "");
        }
        else if (b->tied[q] == TIE_NET)
            SAY(r, "  %s.%s%s: not determined, the class-wide factor kept: the sizes (%s) "
                   "move it as they move %s.%s%s (the slower of the two binds), and logs "
                   "across nodes fit the network's where the sizes are slower than the "
                   "model; a log on one node with this algorithm and protocol fixes this one\n",
                cn, kn, pair, rg, cs_nccl_fit_class_name(b->cls[0]), kn, pair);
        else if (b->tied[q] == TIE_NET_BASE)
            SAY(r, "  %s.%s%s: not determined, %s kept: the sizes (%s) move it only as they "
                   "move net.base%s (the fixed cost of each collective), which was fitted\n",
                cn, kn, pair, base ? "its latency's factor" : "the class-wide factor", rg, pair);
        else if (b->tied[q] && base)
            SAY(r, "  %s.base%s: not determined, it follows %s.lat%s: the sizes (%s) move "
                   "NCCL's base latency as they move its per-step latency (one collective at "
                   "one rank count); a log of another collective or rank count tells them "
                   "apart\n",
                cn, pair, cn, pair, rg);
        else if (b->tied[q])
            SAY(r, "  %s.%s%s: not determined, the class-wide factor kept: the sizes (%s) "
                   "move it as they move %s.bw%s (the slower of the two binds), which binds "
                   "now and was fitted; a log on one node with this algorithm and protocol "
                   "fixes the latter and leaves the sizes to this one\n",
                cn, kn, pair, rg, cs_nccl_fit_class_name(b->cls[q / NK == 0 ? 1 : 0]), pair);
        else if (base)
            SAY(r, "  %s.base%s: not determined, it follows %s.lat%s: no size of the logs (%s) "
                   "spends a tenth of its time on NCCL's base latency\n",
                cn, pair, cn, pair, rg);
        else
            SAY(r, "  %s.%s%s: not determined, %s kept: no size of the logs (%s) spends "
                   "%s of its time on %s\n",
                cn, kn, pair, b->algo >= 0 ? "the class-wide factor" : "NCCL's figure", rg,
                q % NK ? "a tenth" : "a quarter",
                q % NK ? "its per-step latency" : "moving data at its rate");
    }
}

/* Whether pair a's factor q in class cls stays out of the class-wide ones
 * (which serve NCCL's algorithms the logs did not run): a switch's, which
 * are its reduction's, and the latency of NCCL's send/receive path
 * (all-to-all), whose per-collective cost is its own (one HGX H100 node:
 * P2P's latency 2.5-2.9 x NCCL's figure where Ring's is 1.1-1.7); its rate
 * is the links' as any algorithm's */
static int class_apart(int a, int cls, int q)
{
    return cs_nccl_fit_switch_pair(a, cls) || (a == CS_NCCL_P2P && q % NK);
}

/* The network's rate rests on fewer than MIN_NET_ROWS sizes: the tables
 * across nodes ran algorithms that the network does not bind (NVLSTree
 * between two HGX nodes is bound by the NVLink switch; a small size by its
 * latency), and a prediction where the network binds (Ring, NVLSTree from
 * four nodes, a larger machine) rests on NCCL's figure or on a few sizes.
 * Said in the summary and on stderr, with the log that determines it. */
static void warn_network(fitrun_t *r, const block_t *pb, int np, int nbw, const cs_nset_t *sub)
{
    char free_[512] = "";
    size_t o = 0;
    for (int j = 0; j < np && o < sizeof(free_); j++) {
        int d = pb[j].det[0] && !cs_nccl_fit_switch_pair(pb[j].algo, CS_SIM_HW_NET);
        int rest = d ? pb[j].nrows - pb[j].ndet[0] : pb[j].nrows;
        if (rest <= 0)
            continue;
        char rg[80];
        block_range(&pb[j], sub, rg, sizeof(rg));
        int w = snprintf(free_ + o, sizeof(free_) - o, "%s%s/%s's %s%d (%s%s)", o ? ", " : "",
                         cs_nccl_algo_name(pb[j].algo), cs_nccl_proto_name(pb[j].proto),
                         d ? "other " : "", rest, rg,
                         pb[j].tied[0] ? "; they move it as they move the links inside a node, "
                                         "which the logs on one node did not fix for this pair"
                                       : "");
        if (w > 0)
            o += (size_t)w;
    }
    if (o >= sizeof(free_))
        o = sizeof(free_) - 1;
    char head[64], msg[1536];
    if (nbw)
        snprintf(head, sizeof(head), "rests on %d size%s only", nbw, nbw == 1 ? "" : "s");
    else
        snprintf(head, sizeof(head), "is not determined");
    snprintf(msg, sizeof(msg),
             "the network's rate (net.bw) %s: the logs' %ssizes across nodes%s%s do not depend "
             "on it enough (under a quarter of their time at its rate); a prediction where the "
             "network binds (Ring across nodes, NVLSTree from 4 nodes, a larger machine) rests "
             "on %s: check it against a log at more nodes (collstep validate --nccl-tests) "
             "before trusting it. Sizes that the network binds (all_reduce_perf across 2 nodes "
             "or more up to 1 GiB or more, NCCL_ALGO=Ring where NVLSTree or NVLS is NCCL's "
             "choice, with a one-node log of the same sizes for the links inside a node) can "
             "determine it",
             head, nbw ? "other " : "", o ? ", " : "", o ? free_ : "",
             nbw ? "those few sizes" : "NCCL's figure");
    fprintf(stderr, "collstep calibrate: warning: %s\n", msg);
    SAY(r, "  warning: %s\n", msg);
}

/* Fit one level: the class-wide factors, then per algorithm and protocol
 * (across nodes, a pair not seen on one node also gets the factors of the
 * links inside a node: NVLSTree's switch, CollNet's node part). */
static int fit_level(fitrun_t *r, int level)
{
    cs_ntab_t **tabs = calloc((size_t)r->s.ntab + 1, sizeof(*tabs));
    if (!tabs)
        return cs_cli_usage_error("calibrate", "%s", "out of memory");
    cs_nset_t sub = level_set(r, level, tabs);
    int rc = CS_EXIT_OK;
    if (!sub.ntab) {
        SAY(r, "  %s: no table %s in the logs: NCCL's figures kept%s\n",
            level ? "net" : "inside a node", level ? "across nodes" : "on one node",
            level ? "" : " for the links inside a node (an algorithm that runs across nodes "
                         "only, or whose sizes the network cannot explain, may still get a "
                         "factor of them from the logs across nodes: below)");
        free(tabs);
        return rc;
    }
    int intra = sub.tab[0]->nc.sys.graph[CS_NCCL_RING].type_intra;
    int cls = level ? CS_SIM_HW_NET : intra;
    const char *cn = cs_nccl_fit_class_name(cls);
    char what[160];
    snprintf(what, sizeof(what), "%s (%d table%s, %d sizes), class-wide", cn, sub.ntab,
             sub.ntab == 1 ? "" : "s", sub.total);
    /* the pairs NCCL ran */
    block_t pb[CS_NCCL_NLABELS * CS_NCCL_NPROTOS];
    int np = 0;
    for (int i = 0; i < sub.ntab; i++)
        for (int k = 0; k < sub.tab[i]->n; k++) {
            int a = sub.tab[i]->nc.inst_algo[2 * k], p = sub.tab[i]->nc.inst_algo[2 * k + 1], j = 0;
            while (j < np && !(pb[j].algo == a && pb[j].proto == p))
                j++;
            if (j < np)
                continue;
            pb[np++] = (block_t){.cls = {cls, intra}, .ncls = level && !r->seen0[a][p] ? 2 : 1,
                                 .algo = a, .proto = p};
            if (!level)
                r->seen0[a][p] = 1;
        }
    snprintf(what, sizeof(what), "%s (%d table%s, %d sizes, %d algorithm/protocol pair%s)", cn,
             sub.ntab, sub.ntab == 1 ? "" : "s", sub.total, np, np == 1 ? "" : "s");
    rc = stage(r, &sub, pb, np, 1, what);
    /* a factor that ended undetermined (its sizes stopped depending on it)
     * keeps no value of its own */
    for (int j = 0; j < np; j++)
        for (int q = 0; q < NK * pb[j].ncls; q++)
            if (!pb[j].det[q])
                fit_put(&r->fit, &pb[j], q, 0);
    /* the class-wide factors (for what the logs did not run): the pairs'
     * determined factors, their geometric mean weighted by their sizes;
     * not those of a switch's pair in its switch's class (NVLS, NVLSTree on
     * NVLink; CollNet on the network), which are its reduction's
     * (cs_nccl_fit_apply) and not the links', nor P2P's (class_apart) */
    block_t one = {.cls = {cls, cls}, .ncls = 1, .algo = -1, .proto = -1};
    int nbw = 0;
    char src[NK][256];
    for (int q = 0; q < NK && rc == CS_EXIT_OK; q++) {
        class_sources(pb, np, q, cls, &sub, src[q], sizeof(src[q]));
        double sum = 0;
        int n = 0;
        for (int j = 0; j < np; j++)
            if (pb[j].det[q] && !class_apart(pb[j].algo, cls, q)) {
                sum += pb[j].nrows * log(fit_value(&r->fit, &pb[j], q));
                n += pb[j].nrows;
                if (q == 0)
                    nbw += pb[j].ndet[0]; /* the sizes that depend on it */
            }
        one.det[q] = n > 0;
        one.nrows = n > one.nrows ? n : one.nrows;
        if (n > 0)
            fit_put(&r->fit, &one, q, exp(sum / n));
    }
    /* a pair the logs ran whose network fixed cost they did not determine
     * has none (its other factors were fitted without one), whatever the
     * class-wide one, which serves the pairs the logs did not run */
    for (int j = 0; j < np && rc == CS_EXIT_OK && level && one.det[CS_NCCL_FIT_BASE]; j++)
        for (int c = 0; c < pb[j].ncls; c++)
            if (pb[j].cls[c] == CS_SIM_HW_NET && !pb[j].det[NK * c + CS_NCCL_FIT_BASE] &&
                !cs_nccl_fit_switch_pair(pb[j].algo, CS_SIM_HW_NET))
                fit_put(&r->fit, &pb[j], NK * c + CS_NCCL_FIT_BASE, 1.0);
    /* a pair's base latency that its sizes did not determine follows the
     * pair's own per-step latency (as the report says), not the class-wide
     * base: written as its own term */
    for (int j = 0; j < np && rc == CS_EXIT_OK; j++)
        for (int c = 0; c < pb[j].ncls; c++) {
            int qb = NK * c + CS_NCCL_FIT_BASE;
            double l = fit_value(&r->fit, &pb[j], NK * c + CS_NCCL_FIT_LAT);
            if (!pb[j].det[qb] && pb[j].cls[c] != CS_SIM_HW_NET &&
                !cs_nccl_fit_switch_pair(pb[j].algo, pb[j].cls[c]) &&
                fabs(fit_value(&r->fit, &pb[j], qb) / l - 1) > 1e-9) /* it would not */
                fit_put(&r->fit, &pb[j], qb, l);
        }
    int any = 0;
    for (int j = 0; j < np; j++)
        for (int q = 0; q < NQ; q++)
            any |= pb[j].det[q];
    if (rc == CS_EXIT_OK && level && any && nbw < MIN_NET_ROWS)
        warn_network(r, pb, np, nbw, &sub);
    if (rc == CS_EXIT_OK && !any)
        rc = cs_cli_usage_error("calibrate", "the logs' tables %s determine no term of %s (no "
                                             "size depends enough on its rate or its latency)",
                                level ? "across nodes" : "on one node", cn);
    if (rc == CS_EXIT_OK) {
        SAY(r, "  %s class-wide (for algorithms and protocols the logs did not run): the "
               "geometric mean of the fitted pairs', weighted by their sizes (a switch's "
               "pair aside: its factors are its reduction's; all-to-all's latency "
               "aside: it is its own)\n", cn);
        say_undetermined(r, &one, &sub, src);
    }
    for (int j = 0; j < np && rc == CS_EXIT_OK; j++)
        say_undetermined(r, &pb[j], &sub, NULL);
    free(tabs);
    return rc;
}

/* The summary: the terms, what determined them, the sizes not fitted. */
static void summary(fitrun_t *r, char **text)
{
    char terms[2048];
    cs_nccl_fit_format(&r->fit, terms, sizeof(terms));
    size_t cap = 32768 + strlen(r->said);
    char *b = malloc(cap);
    if (!b) {
        *text = NULL;
        return;
    }
    size_t o = 0;
#define PUTB(...)                                                                                 \
    do {                                                                                          \
        int w_ = snprintf(b + o, o < cap ? cap - o : 0, __VA_ARGS__);                             \
        if (w_ > 0)                                                                               \
            o += (size_t)w_;                                                                      \
    } while (0)
    PUTB("fitted terms of the nccl model (factors on NCCL's figures): %s\n",
         terms[0] ? terms : "none (NCCL's figures fit)");
    /* what of the logs was fitted, where options chose (words, not the
     * options: the summary goes into an XML comment, where "--" is not) */
    const cs_nset_t *ns = &r->s;
    if (ns->colls || ns->min_size || ns->max_size || ns->algo || ns->proto) {
        PUTB("  fitted to part of the logs:");
        const char *sep = " ";
        if (ns->colls) {
            PUTB("%sthe collectives", sep);
            for (int c = 0, first = 1; c < CS_COLL_COUNT && c < 32; c++)
                if ((ns->colls >> c) & 1) {
                    PUTB("%s%s", first ? " " : ", ", cs_coll_name((cs_coll_t)c));
                    first = 0;
                }
            sep = "; ";
        }
        if (ns->min_size || ns->max_size) {
            char range[72];
            cs_nset_size_range(ns, range, sizeof(range));
            PUTB("%sthe rows of %s", sep, range);
            sep = "; ";
        }
        if (ns->algo || ns->proto)
            PUTB("%swhere a log does not say, NCCL_ALGO=%s NCCL_PROTO=%s", sep,
                 ns->algo ? ns->algo : "(NCCL's choice)",
                 ns->proto ? ns->proto : "(NCCL's choice)");
        PUTB("\n");
    }
    PUTB("%s", r->said);
    char *un = cs_nset_unfit_text(&r->s, FIT_TOL, "fitted");
    if (un)
        PUTB("%s", un);
    free(un);
#undef PUTB
    *text = b;
}

/* ---- writing --------------------------------------------------------------------- */

/* The start of the report comment write_platform puts before the zone,
 * and in its first line what it fitted: FIT_KIND_NCCL (collstep_nccl_fit)
 * or FIT_KIND_FACTORS (collstep_factors) */
#define FIT_COMMENT "<!--\ncollstep calibrate from nccl-tests logs:"
#define FIT_KIND_NCCL "terms of the nccl model"
#define FIT_KIND_FACTORS "tier factors of the calibrated model"

/* Whether the comment at p is the report of an earlier fit of property id */
static int fit_report(const char *p, const char *id)
{
    if (strncmp(p, FIT_COMMENT, strlen(FIT_COMMENT)) != 0)
        return 0;
    const char *kind = strcmp(id, "collstep_factors") == 0 ? FIT_KIND_FACTORS : FIT_KIND_NCCL;
    const char *nl = strchr(p + 5, '\n'), *at = strstr(p + 5, kind);
    return at && (!nl || at < nl);
}

/* xml with every `id` property removed, and the report comment of an
 * earlier fit of it (fit_report), `prop` after the top zone's start tag
 * and `comment` before it.  NULL when out of memory or when the text has
 * no <zone>. */
static char *xml_with_fit(const char *xml, const char *id, const char *prop, const char *comment)
{
    size_t len = strlen(xml);
    char *t = malloc(len + 1);
    if (!t)
        return NULL;
    /* drop old properties (outside comments) */
    size_t o = 0;
    for (const char *p = xml; *p;) {
        if (strncmp(p, "<!--", 4) == 0) {
            const char *e = strstr(p, "-->");
            size_t n = e ? (size_t)(e + 3 - p) : strlen(p);
            if (e && fit_report(p, id)) {
                p += n; /* the earlier fit's report: replaced below */
                if (*p == '\n')
                    p++;
                continue;
            }
            memcpy(t + o, p, n), o += n, p += n;
            continue;
        }
        if (strncmp(p, "<prop", 5) == 0) {
            const char *e = strstr(p, "/>");
            const char *at = strstr(p, id);
            if (e && at && at < e) {
                p = e + 2;
                while (*p == ' ' || *p == '\t')
                    p++;
                if (*p == '\n') { /* its line whole: the indentation before it too */
                    p++;
                    while (o > 0 && (t[o - 1] == ' ' || t[o - 1] == '\t'))
                        o--;
                }
                continue;
            }
        }
        t[o++] = *p++;
    }
    t[o] = '\0';
    /* the top zone's start tag */
    const char *z = NULL;
    for (const char *p = t; (p = strchr(p, '<')) != NULL; p++) {
        if (strncmp(p, "<!--", 4) == 0) {
            if (!(p = strstr(p, "-->")))
                break;
            continue;
        }
        if (strncmp(p, "<zone", 5) == 0 && strchr(" \t\r\n", p[5])) {
            z = p;
            break;
        }
    }
    const char *gt = z ? strchr(z, '>') : NULL;
    if (!gt || gt[-1] == '/') {
        free(t);
        return NULL;
    }
    size_t at = (size_t)(z - t), after = (size_t)(gt + 1 - t);
    size_t cap = o + strlen(prop) + strlen(comment) + strlen(id) + 256;
    char *out = malloc(cap);
    if (!out) {
        free(t);
        return NULL;
    }
    snprintf(out, cap, "%.*s<!--\n%s-->\n%.*s\n  <prop id=\"%s\" value=\"%s\"/>%s",
             (int)at, t, comment, (int)(after - at), z, id, prop, t + after);
    free(t);
    return out;
}

/* The comment: no "--" inside (XML forbids it). */
static void comment_safe(char *s)
{
    for (char *p = s; (p = strstr(p, "--")) != NULL;)
        p[1] = '=';
}

static int write_platform(fitrun_t *r, const char *sum, const char *factors)
{
    char terms[2048];
    cs_nccl_fit_format(&r->fit, terms, sizeof(terms));
    if (factors)
        snprintf(terms, sizeof(terms), "%s", factors);
    size_t cap = strlen(sum) + 4096;
    char *c = malloc(cap);
    if (!c)
        return cs_cli_usage_error("calibrate", "%s", "out of memory");
    size_t o = (size_t)snprintf(c, cap, "collstep calibrate from nccl-tests logs: %s with the "
                                        "%s fitted to\n",
                                r->o->platform,
                                factors ? FIT_KIND_FACTORS : FIT_KIND_NCCL);
    for (int l = 0; l < r->o->nlogs && o < cap; l++)
        o += (size_t)snprintf(c + o, cap - o, "  %s\n", r->o->logs[l]);
    if (o < cap)
        snprintf(c + o, cap - o, "%s\n%s",
                 factors ? "(the property collstep_factors below: the calibrated model of sim, "
                           "plan and validate applies it, and so does validate to the tables "
                           "of collstep's own algorithms in nccl-tests logs)"
                         : "(the property collstep_nccl_fit below; the nccl model of sim, "
                           "plan and validate applies it)",
                 sum);
    comment_safe(c);
    char *x = xml_with_fit(r->s.plat->xml, factors ? "collstep_factors" : "collstep_nccl_fit",
                           terms, c);
    free(c);
    if (!x)
        return cs_cli_usage_error("calibrate", "--platform %s: no <zone> to carry the fitted "
                                               "terms (or out of memory)",
                                  r->o->platform);
    cs_err_t err;
    cs_err_clear(&err);
    int st = cs_platform_write_text(x, "collstep calibrate", r->o->output,
                                    r->o->force ? CS_OUT_FORCE : 0, &err);
    free(x);
    if (st != CS_OK)
        return cs_cli_usage_error("calibrate", "-o %s: %s", r->o->output, err.msg);
    return CS_EXIT_OK;
}

int cs_cli_calibrate_nccl(int argc, char **argv)
{
    fitrun_t *r = calloc(1, sizeof(*r));
    opts_t *o = calloc(1, sizeof(*o));
    if (!r || !o) {
        free(r), free(o);
        fprintf(stderr, "collstep calibrate: out of memory\n");
        return CS_EXIT_RUNTIME;
    }
    int rc = parse(argc, argv, o);
    r->o = o;
    r->s = (cs_nset_t){.cmd = "calibrate", .platform = o->platform, .version = o->version,
                       .algo = o->algo, .proto = o->proto,
                       .colls = o->filt.colls, .min_size = o->filt.min_size,
                       .max_size = o->filt.max_size,
                       .groups = o->groups, .logs = o->logs, .nlogs = o->nlogs, .strict = 1,
                       .raw = 1};
    cs_nccl_fit_init(&r->fit);
    if (rc == CS_EXIT_OK)
        rc = cs_nset_read(&r->s);
    if (rc == CS_EXIT_OK) { /* where the terms will go, before any fitting */
        char *x = xml_with_fit(r->s.plat->xml, "collstep_nccl_fit", "", "");
        if (!x)
            rc = cs_cli_usage_error("calibrate", "--platform %s: no <zone> to carry the fitted "
                                                 "terms: put the platform's elements inside "
                                                 "<zone id=\"NAME\" routing=\"Full\"> ... "
                                                 "</zone>",
                                    o->platform);
        free(x);
    }
    int own = 0;
    for (int i = 0; rc == CS_EXIT_OK && i < r->s.ntab; i++)
        own += r->s.tab[i]->own;
    if (rc == CS_EXIT_OK && own && own < r->s.ntab)
        rc = cs_cli_usage_error("calibrate", "the logs hold %d table%s of collstep's own "
                                "algorithms (collstep run --format nccl-tests) and %d of NCCL's "
                                "runs: the first fit the platform's tiers, the others the nccl "
                                "model's terms; give one kind per calibration",
                                own, own == 1 ? "" : "s", r->s.ntab - own);
    char factors[1024] = "", *sum = NULL;
    if (rc == CS_EXIT_OK && own) { /* the platform's tiers, under the calibrated model */
        if (cs_nset_plat_calibrated(r->s.plat))
            fprintf(stderr, "collstep calibrate: %s carries tier factors already: the fit "
                            "starts from them and replaces them\n", o->platform);
        rc = cs_cli_calibrate_tiers(&r->s, &sum, factors, sizeof(factors), &r->sims);
        if (rc == CS_EXIT_OK)
            for (int i = 0; i < r->s.ntab; i++)
                r->s.tab[i]->model = CS_SIM_CALIBRATED;
    }
    if (rc == CS_EXIT_OK && !own && r->s.plat->nccl_fit[0])
        fprintf(stderr, "collstep calibrate: %s carries fitted terms already: they are set "
                        "aside and replaced\n", o->platform);
    r->s.slices = 2; /* the fit's simulations: 2 slices on every machine (a child costs) */
    for (int level = 0; level < 2 && rc == CS_EXIT_OK && !own; level++)
        rc = fit_level(r, level);
    r->s.slices = 0; /* the report's: each size alone, as validate runs it */
    if (rc == CS_EXIT_OK && !own) {
        const cs_nccl_fit_t **fp = calloc((size_t)r->s.ntab + 1, sizeof(*fp));
        for (int i = 0; fp && i < r->s.ntab; i++)
            fp[i] = &r->fit;
        rc = fp ? cs_nset_simulate(&r->s, 1, fp, NULL)
                : cs_cli_usage_error("calibrate", "%s", "out of memory");
        free(fp);
    }
    if (rc == CS_EXIT_OK && !own) {
        summary(r, &sum);
        if (!sum)
            rc = cs_cli_usage_error("calibrate", "%s", "out of memory");
    }
    /* the summary goes with the report (after a table, in json's "notes"
     * and "fitted_terms"; csv has no place for it), and on stderr too
     * where the report is not a table on the terminal */
    char terms[2048] = "";
    if (!own)
        cs_nccl_fit_format(&r->fit, terms, sizeof(terms));
    if (rc == CS_EXIT_OK)
        rc = cs_nset_report(&r->s, &o->rep, own ? factors : terms,
                            o->rep.fmt == CS_FMT_CSV ? NULL : sum);
    if (rc == CS_EXIT_OK) {
        int echo = o->rep.fmt != CS_FMT_TABLE || o->rep.output;
        for (const char *p = sum; echo && *p;) {
            size_t n = strcspn(p, "\n");
            fprintf(stderr, "# %.*s\n", (int)n, p);
            p += n + (p[n] == '\n');
        }
        rc = write_platform(r, sum, own ? factors : NULL);
    }
    if (rc == CS_EXIT_OK)
        fprintf(stderr, "collstep calibrate: wrote %s (%d simulations)\n", o->output, r->sims);
    free(sum);
    cs_nset_free(&r->s);
    free(r), free(o);
    return rc == CS_CLI_DONE ? CS_EXIT_OK : rc;
}

#else /* !CS_HAVE_MODEL */

int cs_cli_calibrate_nccl(int argc, char **argv)
{
    (void)argc, (void)argv;
    return cs_cli_usage_error("calibrate", "%s", "--from-nccl-tests: the nccl model is not "
                                                 "built (no model/ library)");
}

#endif
