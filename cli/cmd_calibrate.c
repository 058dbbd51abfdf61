/*
 * cmd_calibrate.c - `collstep calibrate`: measure the cluster the ranks run
 * on and write a SimGrid platform of it (platforms/cs_plat_calib.h) plus a
 * JSON of the raw measurements and the fits.
 *
 * Launched like `collstep run` (mpirun, srun --mpi=pmix, or RANK /
 * WORLD_SIZE / MASTER_ADDR / MASTER_PORT), every rank runs it (cli_live.h).
 *   parse    the options (every rank)
 *   build    the bootstrap, where the ranks are (hostname and network
 *            namespace, or --groups: cli_live.c), the sweep's sizes
 *   verify   the arguments (every rank, the same everywhere) and rank 0's
 *            outputs, before anything is measured; all agree on the exit
 *   act      open the transport and measure (calib_measure.c: pair sweeps,
 *            every rank busy, the NIC, full duplex, reductions)
 *   report   rank 0 derives the platform (calib_derive.c) and writes it,
 *            the JSON and the summary (calib_report.c)
 * Exit codes (cli.h): 0, 2 usage (one rank, bad option, refused output),
 * 3 a rank died / timed out / the transport failed, 128+N a signal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_int.h"

static const char usage_text[] =
    "usage: collstep calibrate -o PLATFORM.xml [options]\n"
    "       (start under mpirun -np N, srun --mpi=pmix, or with RANK, WORLD_SIZE,\n"
    "        MASTER_ADDR, MASTER_PORT set for every process, like collstep run)\n"
    "\n"
    "Measure the cluster the ranks run on and write a SimGrid platform of it: one\n"
    "host per rank, an intra-node link per rank (tier host), a NIC link per node\n"
    "(tier nic; nic-slow for nodes more than 15 %% slower), a switch, and duplex\n"
    "links (tier duplex) where a node, a pair of nodes or a pair of ranks moves less\n"
    "than 0.9 of one direction when both are busy.  Measured: ping-pong sweeps\n"
    "inside and across nodes, every rank busy at once, the NIC a node's ranks share,\n"
    "each node's exchange with its partner, full duplex, the reduction bandwidth.\n"
    "Load it with collstep sim --platform FILE, collstep validate, collstep platform\n"
    "show.\n"
    "\n"
    "  -o, --output FILE    the platform (written whole or not at all)\n"
    "  --json FILE          raw measurements and fits (default: FILE with .json)\n"
    "  --groups FILE        node of each rank, one name per line (default: hostname\n"
    "                       and network namespace)\n"
    "  --size SIZES         ping-pong sweep (default 1:64M, factor 2)\n"
    "  --budget S           seconds of repetitions per size and pair (0.25): at least\n"
    "                       --min-reps (3), at most --max-reps (1000), median kept\n"
    "  --nic-size BYTES     message of the NIC, exchange and duplex tests (8M, at most\n"
    "                       the sweep's)\n"
    "  --dtype T            element type whose reduction speed the hosts get (float)\n"
    "%s"
    "  --help               this text\n"
    "\n%s";

static int parse(int argc, char **argv, cal_opts_t *o)
{
    static const struct option lo[] = {
        {"json", 1, 0, 'j'},     {"groups", 1, 0, 'g'},   {"size", 1, 0, 's'},
        {"budget", 1, 0, 'b'},   {"min-reps", 1, 0, 'm'}, {"max-reps", 1, 0, 'M'},
        {"nic-size", 1, 0, 'n'}, {"dtype", 1, 0, 'd'},    {"help", 0, 0, 'h'},
        CS_LIVE_LONGOPTS,        {0, 0, 0, 0}};
    memset(o, 0, sizeof(*o));
    cs_live_opts_init(&o->live);
    snprintf(o->size, sizeof(o->size), "1:64M");
    o->dtype = "float", o->budget = 0.25, o->min_reps = 3, o->max_reps = 1000;
    o->nic_size = 8 << 20;
    int c, rc = CS_EXIT_OK;
    while (rc == CS_EXIT_OK && (c = getopt_long(argc, argv, ":ho:", lo, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'j': o->json = optarg; break;
        case 'g': o->groups = optarg; break;
        case 's': snprintf(o->size, sizeof(o->size), "%s", optarg); break;
        case 'd': o->dtype = optarg; break;
        case 'b':
            o->budget = strtod(optarg, &end);
            if (*end || !(o->budget > 0))
                return cs_live_uerr("calibrate", "--budget: expected seconds > 0, found '%s'",
                                    optarg);
            break;
        case 'm':
        case 'M': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 1000000)
                return cs_live_uerr("calibrate", "--min-reps / --max-reps: expected 1..1000000, "
                                                 "found '%s'", optarg);
            *(c == 'm' ? &o->min_reps : &o->max_reps) = v;
            break;
        }
        case 'n':
            if (cs_cli_parse_size(optarg, &o->nic_size) || o->nic_size == 0)
                return cs_live_uerr("calibrate", "--nic-size: expected a size, found '%s'", optarg);
            break;
        case 'h': printf(usage_text, cs_live_usage_opts, cs_cli_exit_help); return -1;
        default: rc = cs_live_opt("calibrate", &o->live, c, optarg, argv);
        }
    }
    if (rc == CS_EXIT_OK)
        rc = cs_live_parse_end("calibrate", &o->live, argc, argv);
    if (rc != CS_EXIT_OK)
        return rc;
    if (!o->live.output)
        return cs_live_uerr("calibrate", "%s", "-o PLATFORM.xml is required");
    if (o->min_reps > o->max_reps)
        return cs_live_uerr("calibrate", "%s", "--min-reps is larger than --max-reps");
    return CS_EXIT_OK;
}

/* build: the sweep (the bootstrap and the nodes are there) */
static int build(cal_t *c)
{
    int rc = CS_EXIT_OK;
    if (c->l.nranks < 2) {
        fprintf(stderr, "collstep calibrate: one rank: calibration measures pairs of ranks; start "
                        "2 or more (mpirun -np N, or WORLD_SIZE >= 2)\n");
        return CS_EXIT_USAGE;
    }
    rc = cs_cli_sizes("calibrate", c->o->size, 0, c->sizes, &c->nsizes);
    if (rc == CS_EXIT_OK && c->nsizes < 7) {
        fprintf(stderr, "collstep calibrate: --size: %d sizes; the fits need at least 7\n",
                c->nsizes);
        rc = CS_EXIT_USAGE;
    }
    /* the send and receive areas of the largest size (cs_calib_open), on
     * every rank of this machine, before any transport opens */
    uint64_t hi = rc == CS_EXIT_OK ? c->sizes[c->nsizes - 1] : 0;
    double area = (double)((hi + 4095) / 4096 * 4096);
    if (rc == CS_EXIT_OK)
        rc = cs_live_mem_check("calibrate", hi, 2 * area * c->l.machine_ranks,
                               c->l.machine_ranks, "send and receive buffers");
    return rc;
}

/* verify: every rank's arguments, rank 0's outputs; one exit code for all */
static int verify(cal_t *c, int rc)
{
    const cal_opts_t *o = c->o;
    if (rc == CS_EXIT_OK && cs_dtype_parse(o->dtype) == CS_DT_COUNT)
        rc = cs_live_uerr("calibrate", "--dtype: unknown type '%s'", o->dtype);
    if (rc == CS_EXIT_OK && c->l.rank == 0 && calib_check_outputs(c) != CS_OK) {
        fprintf(stderr, "collstep calibrate: %s\n", c->l.err.msg);
        rc = CS_EXIT_USAGE;
    }
    if ((rc = cs_live_agree(&c->l, rc)) != CS_EXIT_OK)
        return rc;
    char args[400];
    snprintf(args, sizeof(args), "size=%s budget=%g min=%ld max=%ld nic=%llu transport=%s "
             "provider=%s groups=%d wait=%s", o->size, o->budget, o->min_reps, o->max_reps,
             (unsigned long long)o->nic_size, o->live.transport, o->live.provider,
             o->groups != NULL, o->live.wait);
    int st = cs_boot_check_same(c->l.boot, 0, args, &c->l.err);
    return st == CS_OK ? CS_EXIT_OK : cs_live_fail(&c->l, st);
}

/* act: the transport, the measurements */
static int act(cal_t *c)
{
    int st = cs_job_connect(&c->l);
    if (st == CS_OK)
        st = cs_calib_open(c->l.tp, c->l.boot, c->sizes[c->nsizes - 1], c->o->live.timeout, &c->cb,
                           &c->l.err);
    if (st == CS_OK && c->l.rank == 0)
        fprintf(stderr, "collstep calibrate: %d ranks on %d node%s, %d sizes %llu..%llu B, "
                        "transport %s\n", c->l.nranks, c->l.nnodes, c->l.nnodes == 1 ? "" : "s",
                c->nsizes, (unsigned long long)c->sizes[0],
                (unsigned long long)c->sizes[c->nsizes - 1], c->o->live.transport);
    if (st == CS_OK)
        st = calib_measure(c);
    if (st == CS_OK)
        st = cs_boot_barrier(c->l.boot, &c->l.err);
    return st == CS_OK ? CS_EXIT_OK : cs_live_fail(&c->l, st);
}

static int run(cal_t *c)
{
    int rc = cs_live_start(&c->l, "calibrate", &c->o->live, c->o->groups);
    if (rc == CS_EXIT_OK)
        rc = verify(c, build(c));
    if (rc == CS_EXIT_OK)
        rc = act(c);
    if (rc == CS_EXIT_OK && c->l.rank == 0)
        rc = calib_write_outputs(c);
    return rc;
}

static void destroy(cal_t *c)
{
    cs_calib_close(c->cb);
    cs_job_close(&c->l);
    for (int s = 0; s < c->nser; s++) {
        free(c->ser[s].med);
        free(c->ser[s].p10);
        free(c->ser[s].p90);
        free(c->ser[s].reps);
    }
    free(c->ser);
    free(c->nic_agg);
    free(c->nic_one);
    free(c->nic_peer);
    free(c->nic_k);
    free(c->xch_out);
    free(c->xch_in);
    free(c->xch_trials);
    free(c->node_rho);
    free(c->xch_rho);
    free(c->load_t);
    free(c->port_bw);
    free(c->load_reps);
    free(c->load_fit);
    free(c);
}

int cs_cli_calibrate(int argc, char **argv)
{
    cal_opts_t o;
    cal_t *c = NULL;
    int rc = parse(argc, argv, &o); /* -1: --help */
    if (rc == CS_EXIT_OK && !(c = cs_live_new("calibrate", sizeof(*c))))
        rc = CS_EXIT_RUNTIME;
    if (c) {
        c->o = &o;
        rc = run(c);
        destroy(c);
    }
    return rc < 0 ? CS_EXIT_OK : rc;
}
