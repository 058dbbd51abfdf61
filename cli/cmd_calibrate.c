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
 *   act      open the transport and measure (calibrate/cs_calibrate.h:
 *            pair sweeps, every rank busy, the NIC, full duplex, reductions)
 *   report   rank 0 derives the platform from the record and writes it,
 *            the JSON and the summary (cs_calibrate.h)
 * Exit codes (cli.h): 0, 2 usage (one rank, bad option, refused output),
 * 3 a rank died / timed out / the transport failed, 128+N a signal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_live.h"
#include "cs_calibrate.h"

_Static_assert(CS_CALIBRATE_MAX_SIZES >= CS_CLI_MAX_SIZES, "--size takes what the plan holds");

typedef struct cal_opts {
    cs_live_opts_t live; /* transport, -o, --force, --timeout, ... */
    const char *json, *groups, *dtype;
    char size[256];
    double budget;
    long min_reps, max_reps;
    uint64_t nic_size;
} cal_opts_t;

typedef struct cal {
    cal_opts_t *o;
    cs_job_t l;
    cs_calibrate_plan_t plan;
    cs_calibrate_t *cb;
    cs_calibrate_record_t *rec;
    char json_path[4096];
} cal_t;

static const char usage_text[] =
    "usage: collstep calibrate -o PLATFORM.xml [options]\n"
    "       (start under mpirun -np N, srun --mpi=pmix, or with RANK, WORLD_SIZE,\n"
    "        MASTER_ADDR, MASTER_PORT set for every process, like collstep run)\n"
    "       collstep calibrate --from-nccl-tests LOG [LOG...] --platform BASE -o FILE:\n"
    "       fit the nccl model to nccl-tests logs instead of measuring (collstep\n"
    "       calibrate --help --from-nccl-tests)\n"
    "\n"
    "Measure the cluster the ranks run on and write a SimGrid platform of it: one\n"
    "host per rank, an intra-node link per rank (tier host), a NIC link per node\n"
    "(tier nic; nic-slow for nodes more than 15 %% slower), a switch, and duplex\n"
    "links (tier duplex) where a node, a pair of nodes or a pair of ranks moves less\n"
    "than 0.9 of one direction when both are busy, and a node's restart cost (hosts'\n"
    "restart_bytes, restart_idle) where its exchange after idling is slower than\n"
    "back to back.  Measured: ping-pong sweeps inside and across nodes, every rank\n"
    "busy at once, the NIC a node's ranks share, each node's exchange with its\n"
    "partner (back to back and after idle spells of 0.25 to 2 s), full duplex, the\n"
    "reduction bandwidth.\n"
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

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* build: the plan (the bootstrap and the nodes are there) */
static int build(cal_t *c)
{
    const cal_opts_t *o = c->o;
    cs_calibrate_plan_t *pl = &c->plan;
    int rc = CS_EXIT_OK;
    if (c->l.nranks < 2) {
        fprintf(stderr, "collstep calibrate: one rank: calibration measures pairs of ranks; start "
                        "2 or more (mpirun -np N, or WORLD_SIZE >= 2)\n");
        return CS_EXIT_USAGE;
    }
    cs_calibrate_plan_init(pl);
    pl->budget_s = o->budget, pl->min_reps = (int)o->min_reps, pl->max_reps = (int)o->max_reps;
    pl->nic_bytes = o->nic_size, pl->timeout_s = o->live.timeout;
    rc = cs_cli_sizes("calibrate", o->size, 0, pl->sizes, &pl->nsizes);
    if (rc == CS_EXIT_OK && pl->nsizes < CS_CALIBRATE_MIN_SIZES) {
        fprintf(stderr, "collstep calibrate: --size: %d sizes; the fits need at least %d\n",
                pl->nsizes, CS_CALIBRATE_MIN_SIZES);
        rc = CS_EXIT_USAGE;
    }
    if (rc == CS_EXIT_OK) /* a sweep, smallest first */
        qsort(pl->sizes, (size_t)pl->nsizes, sizeof(pl->sizes[0]), cmp_u64);
    /* the send and receive areas of the largest size, on every rank of this
     * machine, before any transport opens */
    if (rc == CS_EXIT_OK)
        rc = cs_live_mem_check("calibrate", pl->sizes[pl->nsizes - 1],
                               cs_calibrate_buffer_bytes(pl) * c->l.machine_ranks,
                               c->l.machine_ranks, "send and receive buffers");
    return rc;
}

/* rank 0's outputs, before anything is measured: -o, and --json (default:
 * -o with .json for .xml) */
static int check_outputs(cal_t *c)
{
    const char *o = c->o->live.output;
    if (strcmp(o, "-") == 0)
        return cs_err_set(&c->l.err, CS_ERR_INVAL,
                          "-o -: the calibrated platform is written to a file (its summary goes "
                          "to standard output)");
    if (c->o->json) {
        snprintf(c->json_path, sizeof(c->json_path), "%s", c->o->json);
    } else {
        size_t l = strlen(o);
        int x = l > 4 && !strcmp(o + l - 4, ".xml");
        snprintf(c->json_path, sizeof(c->json_path), "%.*s.json", (int)(x ? l - 4 : l), o);
    }
    int fl = c->o->live.force ? CS_OUT_FORCE : 0;
    cs_err_t e;
    cs_err_clear(&e);
    if (cs_out_check(o, fl, &cs_calibrate_xml_kind, 0, &e) != CS_OK)
        return cs_err_set(&c->l.err, CS_ERR_EXISTS, "-o %s: %s", o, e.msg);
    cs_err_clear(&e);
    if (cs_out_check(c->json_path, fl, &cs_calibrate_json_kind, 0, &e) != CS_OK)
        return cs_err_set(&c->l.err, CS_ERR_EXISTS, "--json %s: %s", c->json_path, e.msg);
    return CS_OK;
}

/* verify: every rank's arguments, rank 0's outputs; one exit code for all */
static int verify(cal_t *c, int rc)
{
    const cal_opts_t *o = c->o;
    if (rc == CS_EXIT_OK && (c->plan.dtype = cs_dtype_parse(o->dtype)) == CS_DT_COUNT)
        rc = cs_live_uerr("calibrate", "--dtype: unknown type '%s'", o->dtype);
    if (rc == CS_EXIT_OK && c->l.rank == 0 && check_outputs(c) != CS_OK) {
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
    const cs_calibrate_plan_t *pl = &c->plan;
    const char **names = calloc((size_t)c->l.nnodes, sizeof(char *));
    int st = names ? cs_job_connect(&c->l) : cs_err_set(&c->l.err, CS_ERR_NOMEM, "out of memory");
    for (int h = 0; names && h < c->l.nnodes; h++)
        names[h] = c->l.nodes[h].name;
    cs_calibrate_job_t job = {c->l.nnodes, c->l.node_of, names, c->o->live.transport,
                              c->o->live.provider};
    if (st == CS_OK)
        st = cs_calibrate_open(c->l.tp, c->l.boot, &job, pl, &c->cb, &c->l.err);
    if (st == CS_OK && c->l.rank == 0)
        fprintf(stderr, "collstep calibrate: %d ranks on %d node%s, %d sizes %llu..%llu B, "
                        "transport %s\n", c->l.nranks, c->l.nnodes, c->l.nnodes == 1 ? "" : "s",
                pl->nsizes, (unsigned long long)pl->sizes[0],
                (unsigned long long)pl->sizes[pl->nsizes - 1], c->o->live.transport);
    if (st == CS_OK)
        st = cs_calibrate_measure(c->cb, &c->rec, &c->l.err);
    if (st == CS_OK)
        st = cs_boot_barrier(c->l.boot, &c->l.err);
    free(names);
    return st == CS_OK ? CS_EXIT_OK : cs_live_fail(&c->l, st);
}

/* report (rank 0): the platform derived from the record, both files, the
 * summary */
static int report(cal_t *c)
{
    cs_calibrate_derived_t *d = NULL;
    int st = cs_calibrate_derive(c->rec, &d, &c->l.err);
    if (st == CS_OK)
        st = cs_calibrate_write(c->rec, d, c->o->live.output, c->json_path,
                                c->o->live.force ? CS_OUT_FORCE : 0, &c->l.err);
    if (st == CS_OK) {
        cs_calibrate_summary(c->rec, d, stdout);
        printf("wrote %s (%d hosts) and %s\n", c->o->live.output, c->l.nranks, c->json_path);
    }
    cs_calibrate_derived_free(d);
    if (st != CS_OK) {
        fprintf(stderr, "collstep calibrate: %s\n", c->l.err.msg);
        return st == CS_ERR_EXISTS || st == CS_ERR_IO ? CS_EXIT_USAGE : CS_EXIT_RUNTIME;
    }
    return CS_EXIT_OK;
}

static int run(cal_t *c)
{
    int rc = cs_live_start(&c->l, "calibrate", &c->o->live, c->o->groups);
    if (rc == CS_EXIT_OK)
        rc = verify(c, build(c));
    if (rc == CS_EXIT_OK)
        rc = act(c);
    if (rc == CS_EXIT_OK && c->l.rank == 0)
        rc = report(c);
    return rc;
}

static void destroy(cal_t *c)
{
    cs_calibrate_close(c->cb);
    cs_job_close(&c->l);
    cs_calibrate_record_free(c->rec);
    free(c);
}

int cs_cli_calibrate(int argc, char **argv)
{
#ifdef CS_HAVE_VALIDATE
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) /* logs: no live run */
        if (strcmp(argv[i], "--from-nccl-tests") == 0 ||
            strncmp(argv[i], "--from-nccl-tests=", 18) == 0)
            return cs_cli_calibrate_nccl(argc, argv);
#endif
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
