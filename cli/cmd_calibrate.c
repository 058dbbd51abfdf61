/*
 * cmd_calibrate.c - `collstep calibrate`: measure the cluster the ranks run
 * on and write a SimGrid platform of it (platforms/cs_plat_calib.h) plus a
 * JSON of the raw measurements and the fits.
 *
 * Launched like `collstep run` (mpirun, srun --mpi=pmix, or RANK /
 * WORLD_SIZE / MASTER_ADDR / MASTER_PORT), every rank runs it.  Parse,
 * find the nodes (hostname and network namespace, or --groups), agree on
 * the arguments, open the transport, measure, fit, and rank 0 writes.
 * Every rank computes the same plan from what all ranks shared, so the
 * kernels of exec/cs_calib.h line up:
 *   1. intra-node ping-pong sweep between the first two ranks of every
 *      node with two or more ranks (node after node);
 *   2. inter-node ping-pong sweep between the first ranks of every pair of
 *      nodes, disjoint pairs at once (round-robin rounds);
 *   3. the NIC a node's ranks share: every rank of node A sends to a rank
 *      of its fastest partner at once, against one rank alone;
 *   4. full duplex: the fastest pair both ways at once, against one way;
 *   5. reduction bandwidth per element type, every rank at once.
 * Fits (core/cs_fit.h): per pair a piecewise alpha-beta line; the links get
 * the piece of the large messages (those of the collectives validated).
 * Exit codes (cli.h): 0, 2 usage (one rank, bad option, refused output),
 * 3 a rank died / timed out / the transport failed, 128+N a signal.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cs_boot.h"
#include "cs_calib.h"
#include "cs_fit.h"
#include "cs_intr.h"
#include "cs_out.h"
#include "cs_plat_calib.h"
#include "cs_transport.h"

#define NDT 6

static const char usage_text[] =
    "usage: collstep calibrate -o PLATFORM.xml [options]\n"
    "       (start under mpirun -np N, srun --mpi=pmix, or with RANK, WORLD_SIZE,\n"
    "        MASTER_ADDR, MASTER_PORT set for every process, like collstep run)\n"
    "\n"
    "Measure the cluster the ranks run on and write a SimGrid platform of it: one\n"
    "host per rank, an intra-node link per rank (tier host), a NIC link per node\n"
    "(tier nic; nic-slow for nodes more than 15 %% slower), a switch.  Load it with\n"
    "collstep sim --platform FILE, collstep validate, collstep platform show.\n"
    "\n"
    "  -o, --output FILE    the platform (written whole or not at all)\n"
    "  --json FILE          raw measurements and fits (default: FILE with .json)\n"
    "  --force              replace outputs collstep did not write\n"
    "  --groups FILE        node of each rank, one name per line (default: hostname\n"
    "                       and network namespace)\n"
    "  --size SIZES         ping-pong sweep (default 1:64M, factor 2)\n"
    "  --budget S           seconds of repetitions per size and pair (0.25): at least\n"
    "                       --min-reps (3), at most --max-reps (1000), median kept\n"
    "  --nic-size BYTES     message of the NIC and duplex tests (8M, at most the sweep's)\n"
    "  --transport NAME     ofi (default), tcp, shm (as collstep run)\n"
    "  --provider NAME      libfabric provider (tcp;ofi_rxm)\n"
    "  --iface ADDR         address tcp binds to (127.0.0.1)\n"
    "  --dtype T            element type whose reduction speed the hosts get (float)\n"
    "  --timeout S          give up when nothing progresses for S seconds (60)\n"
    "  --boot B             pmix or env (default: auto)\n"
    "  --help               this text\n"
    "\n%s";

typedef struct cal_opts {
    const char *output, *json, *groups, *transport, *provider, *iface, *dtype, *boot;
    char size[256];
    double budget, timeout;
    long min_reps, max_reps, force;
    uint64_t nic_size;
} cal_opts_t;

static int uerr(const char *fmt, const char *a)
{
    fprintf(stderr, "collstep calibrate: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, " (see collstep calibrate --help)\n");
    return CS_EXIT_USAGE;
}

static int parse(int argc, char **argv, cal_opts_t *o)
{
    static const struct option lo[] = {
        {"output", 1, 0, 'o'}, {"json", 1, 0, 'j'},      {"force", 0, 0, 'F'},
        {"groups", 1, 0, 'g'}, {"size", 1, 0, 's'},      {"budget", 1, 0, 'b'},
        {"min-reps", 1, 0, 'm'}, {"max-reps", 1, 0, 'M'}, {"nic-size", 1, 0, 'n'},
        {"transport", 1, 0, 't'}, {"provider", 1, 0, 'P'}, {"iface", 1, 0, 'I'},
        {"dtype", 1, 0, 'd'},  {"timeout", 1, 0, 'T'},   {"boot", 1, 0, 'B'},
        {"help", 0, 0, 'h'},   {0, 0, 0, 0}};
    memset(o, 0, sizeof(*o));
    snprintf(o->size, sizeof(o->size), "1:64M");
    o->transport = "ofi", o->provider = "tcp;ofi_rxm", o->iface = "127.0.0.1", o->dtype = "float";
    o->budget = 0.25, o->timeout = 60, o->min_reps = 3, o->max_reps = 1000, o->nic_size = 8 << 20;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":ho:", lo, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'o': o->output = optarg; break;
        case 'j': o->json = optarg; break;
        case 'F': o->force = 1; break;
        case 'g': o->groups = optarg; break;
        case 's': snprintf(o->size, sizeof(o->size), "%s", optarg); break;
        case 't': o->transport = optarg; break;
        case 'P': o->provider = optarg; break;
        case 'I': o->iface = optarg; break;
        case 'd': o->dtype = optarg; break;
        case 'B': o->boot = optarg; break;
        case 'b':
        case 'T': {
            double v = strtod(optarg, &end);
            if (*end || !(v > 0))
                return uerr("expected seconds > 0, found '%s'", optarg);
            *(c == 'b' ? &o->budget : &o->timeout) = v;
            break;
        }
        case 'm':
        case 'M': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 1000000)
                return uerr("--min-reps / --max-reps: expected 1..1000000, found '%s'", optarg);
            *(c == 'm' ? &o->min_reps : &o->max_reps) = v;
            break;
        }
        case 'n':
            if (cs_cli_parse_size(optarg, &o->nic_size) || o->nic_size == 0)
                return uerr("--nic-size: expected a size, found '%s'", optarg);
            break;
        case 'h': printf(usage_text, cs_cli_exit_help); return -1;
        case ':': return uerr("option %s needs a value", argv[optind - 1]);
        default: return uerr("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return uerr("unexpected argument '%s'", argv[optind]);
    if (!o->output)
        return uerr("%s", "-o PLATFORM.xml is required");
    if (o->min_reps > o->max_reps)
        return uerr("%s", "--min-reps is larger than --max-reps");
    if (!strcmp(o->transport, "nccl"))
        return uerr("--transport %s: calibrate measures host memory transports (ofi, tcp, shm)",
                    o->transport);
    if (!strcmp(o->transport, "shm"))
        o->provider = "native";
    return 0;
}

/* ---- nodes ---------------------------------------------------------------- */

typedef struct ident {
    char name[64];
    uint64_t netns;
} ident_t;

/* --groups FILE: line r names rank r's node (blank lines, # comments skipped). */
static int read_group(const char *path, int rank, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[256];
    int r = 0, found = 0;
    while (!found && fgets(line, sizeof(line), f)) {
        char *s = line + strspn(line, " \t");
        size_t l = strcspn(s, " \t\r\n#");
        if (l == 0)
            continue;
        s[l] = 0;
        if (r++ == rank)
            snprintf(out, len, "%s", s), found = 1;
    }
    fclose(f);
    return found ? 0 : -2;
}

/* ---- measurements ---------------------------------------------------------- */

typedef struct series {
    int a, b;         /* ranks */
    int na, nb;       /* nodes (na == nb: intra) */
    int n;            /* sizes */
    double *med, *p10, *p90;
    int *reps;
    cs_fit_piecewise_t fit;
} series_t;

typedef struct cal {
    cal_opts_t *o;
    cs_boot_t *boot;
    cs_tp_t *tp;
    cs_calib_t *cb;
    int rank, nranks, nnodes;
    int *node_of, *first, *count; /* rank -> node; node -> first rank, ranks */
    ident_t *ids;                 /* node names (by node) */
    uint64_t sizes[CS_CLI_MAX_SIZES];
    int nsizes;
    series_t *ser; /* intra series first, then inter */
    int nser;
    double *nic_agg, *nic_one; /* per node: bytes/s all ranks at once, one rank */
    double *load_t;              /* [rank][size]: loaded ring flow (rank-1) -> rank */
    double *port_bw;             /* [rank]: derived port capacity (bytes/s) */
    int *load_reps;              /* [size] */
    cs_fit_piecewise_t *load_fit; /* [rank]: fit of the flow into rank */
    int *nic_peer, *nic_k;
    double duplex_one, duplex_both, duplex_node; /* bytes/s per flow */
    int duplex_a, duplex_b, duplex_c, duplex_d; /* pair a<->b; node: a->b with c->d */
    double red[NDT];
    cs_err_t err;
} cal_t;

/* Sweep the series [s0, s1) at once (disjoint pairs).  Every rank calls it. */
static int sweep(cal_t *c, int s0, int s1)
{
    int mine = -1, st = CS_OK;
    for (int s = s0; s < s1; s++)
        if (c->ser[s].a == c->rank || c->ser[s].b == c->rank)
            mine = s;
    double *t = malloc(sizeof(double) * (size_t)(c->o->max_reps + 1));
    double *all = malloc(sizeof(double) * 4 * (size_t)c->nranks);
    if (!t || !all)
        st = cs_err_set(&c->err, CS_ERR_NOMEM, "out of memory");
    double est = 0;
    for (int k = 0; k < c->nsizes && st == CS_OK; k++) {
        int warm = est > 0.01 ? 1 : 3, reps = 0;
        series_t *m = mine >= 0 ? &c->ser[mine] : NULL;
        st = cs_calib_pingpong(c->cb, m ? m->a : -1, m ? m->b : -1, c->sizes[k], warm,
                               (int)c->o->min_reps, (int)c->o->max_reps, c->o->budget, t, &reps,
                               &c->err);
        double v[4] = {0, 0, 0, 0};
        if (st == CS_OK && m && m->a == c->rank) {
            v[1] = cs_fit_quantile(t, reps, 0.1);
            v[2] = cs_fit_quantile(t, reps, 0.9);
            v[0] = cs_fit_median(t, reps);
            v[3] = reps;
        }
        if (st == CS_OK)
            st = cs_boot_allgather(c->boot, v, sizeof(v), all, &c->err);
        double next = 0;
        for (int s = s0; s < s1 && st == CS_OK; s++) {
            series_t *x = &c->ser[s];
            x->med[k] = all[4 * x->a], x->p10[k] = all[4 * x->a + 1], x->p90[k] = all[4 * x->a + 2];
            x->reps[k] = (int)all[4 * x->a + 3];
            double scaled = k + 1 < c->nsizes ? x->med[k] * (double)c->sizes[k + 1] /
                                                    (double)(c->sizes[k] ? c->sizes[k] : 1)
                                              : 0;
            next = scaled > next ? scaled : next;
        }
        est = next;
    }
    free(t);
    free(all);
    return st;
}

static int add_series(cal_t *c, int a, int b)
{
    series_t *x = &c->ser[c->nser++];
    x->a = a, x->b = b, x->na = c->node_of[a], x->nb = c->node_of[b], x->n = c->nsizes;
    x->med = calloc((size_t)c->nsizes, sizeof(double));
    x->p10 = calloc((size_t)c->nsizes, sizeof(double));
    x->p90 = calloc((size_t)c->nsizes, sizeof(double));
    x->reps = calloc((size_t)c->nsizes, sizeof(int));
    return x->med && x->p10 && x->p90 && x->reps ? CS_OK
                                                 : cs_err_set(&c->err, CS_ERR_NOMEM, "out of memory");
}

/* The bandwidth of the large-message piece of a series. */
static double big_bw(const cal_t *c, const series_t *x)
{
    return cs_fit_piece_for(&x->fit, c->sizes[c->nsizes - 1])->beta;
}

static double flows_bw(cal_t *c, const int *src, const int *dst, int k, size_t bytes, int *st)
{
    double t[3];
    if (*st == CS_OK)
        *st = cs_calib_flows(c->cb, src, dst, k, bytes, 1, 3, t, NULL, &c->err);
    return *st == CS_OK ? (double)k * (double)bytes / cs_fit_median(t, 3) : 0;
}

/* Every rank busy at once, as in a collective: flows r -> r+1 (a ring
 * over all ranks: intra-node and inter-node flows) over the sweep.  On a
 * machine with fewer cores than ranks (the emulated cluster) a message's
 * time then includes waiting for the CPU, which a lone pair never shows;
 * with a core per rank both agree. */
static int loaded(cal_t *c)
{
    int N = c->nranks, st = CS_OK;
    int *src = calloc((size_t)N, sizeof(int)), *dst = calloc((size_t)N, sizeof(int));
    double *rt = calloc((size_t)N, sizeof(double)), *t = calloc(64, sizeof(double));
    c->load_t = calloc((size_t)N * c->nsizes, sizeof(double));
    c->load_reps = calloc((size_t)c->nsizes, sizeof(int));
    c->load_fit = calloc((size_t)N, sizeof(cs_fit_piecewise_t));
    c->port_bw = calloc((size_t)N, sizeof(double));
    if (!src || !dst || !rt || !t || !c->load_t || !c->load_reps || !c->load_fit || !c->port_bw)
        st = cs_err_set(&c->err, CS_ERR_NOMEM, "out of memory");
    for (int r = 0; r < N; r++)
        src[r] = r, dst[r] = (r + 1) % N;
    double est = 0;
    for (int k = 0; k < c->nsizes && st == CS_OK; k++) {
        double want = est > 0 ? c->o->budget / est : 50;
        int reps = want < c->o->min_reps ? (int)c->o->min_reps : want > 50 ? 50 : (int)want;
        st = cs_calib_flows(c->cb, src, dst, N, c->sizes[k], 1, reps, t, rt, &c->err);
        c->load_reps[k] = reps;
        double mx = 0;
        for (int r = 0; r < N && st == CS_OK; r++) {
            c->load_t[(size_t)r * c->nsizes + k] = rt[r];
            mx = rt[r] > mx ? rt[r] : mx;
        }
        est = k + 1 < c->nsizes ? mx * (double)c->sizes[k + 1] / (double)c->sizes[k] : 0;
    }
    for (int r = 0; r < N && st == CS_OK; r++)
        cs_fit_piecewise(c->sizes, c->load_t + (size_t)r * c->nsizes, c->nsizes, &c->load_fit[r]);
    free(src);
    free(dst);
    free(rt);
    free(t);
    return st;
}

static int measure(cal_t *c)
{
    int st = CS_OK, H = c->nnodes;
    c->ser = calloc((size_t)(H + H * (H - 1) / 2 + 1), sizeof(series_t));
    if (!c->ser)
        return cs_err_set(&c->err, CS_ERR_NOMEM, "out of memory");
    /* 1. intra-node, node after node */
    for (int h = 0; h < H && st == CS_OK; h++)
        if (c->count[h] >= 2 && (st = add_series(c, c->first[h], c->first[h] + 1)) == CS_OK) {
            int r1 = -1;
            for (int r = c->first[h] + 1; r < c->nranks && r1 < 0; r++)
                if (c->node_of[r] == h)
                    r1 = r;
            c->ser[c->nser - 1].b = r1;
            st = sweep(c, c->nser - 1, c->nser);
        }
    int nintra = c->nser;
    /* 2. inter-node: round-robin rounds of disjoint pairs (circle method:
     * player M-1 fixed, the others rotate; M even, a player >= H sits out) */
    int M = H % 2 ? H + 1 : H;
    for (int round = 0; round < M - 1 && st == CS_OK && H > 1; round++) {
        int s0 = c->nser;
        for (int i = 0; i < M / 2 && st == CS_OK; i++) {
            int x = i == 0 ? M - 1 : (round + i) % (M - 1);
            int y = i == 0 ? round : (round - i + M - 1) % (M - 1);
            if (x >= H || y >= H)
                continue;
            int A = x < y ? x : y, B = x < y ? y : x;
            st = add_series(c, c->first[A], c->first[B]);
        }
        if (st == CS_OK)
            st = sweep(c, s0, c->nser);
    }
    for (int s = 0; s < c->nser; s++)
        cs_fit_piecewise(c->sizes, c->ser[s].med, c->nsizes, &c->ser[s].fit);
    /* every rank busy at once */
    if (st == CS_OK)
        st = loaded(c);
    /* 3. the NIC a node's ranks share, 4. full duplex */
    size_t big = c->o->nic_size < c->sizes[c->nsizes - 1] ? c->o->nic_size : c->sizes[c->nsizes - 1];
    c->nic_agg = calloc((size_t)H, sizeof(double));
    c->nic_one = calloc((size_t)H, sizeof(double));
    c->nic_peer = calloc((size_t)H, sizeof(int));
    c->nic_k = calloc((size_t)H, sizeof(int));
    int *src = calloc((size_t)c->nranks, sizeof(int)), *dst = calloc((size_t)c->nranks, sizeof(int));
    if (!c->nic_agg || !c->nic_one || !c->nic_peer || !c->nic_k || !src || !dst)
        st = cs_err_set(&c->err, CS_ERR_NOMEM, "out of memory");
    double best = -1;
    for (int h = 0; h < H && H > 1 && st == CS_OK; h++) {
        int peer = -1;
        double pb = -1;
        for (int s = nintra; s < c->nser; s++) {
            const series_t *x = &c->ser[s];
            if (x->na != h && x->nb != h)
                continue;
            if (big_bw(c, x) > pb)
                pb = big_bw(c, x), peer = x->na == h ? x->nb : x->na;
            if (big_bw(c, x) > best)
                best = big_bw(c, x), c->duplex_a = x->a, c->duplex_b = x->b;
        }
        int k = c->count[h] < c->count[peer] ? c->count[h] : c->count[peer], n = 0;
        for (int r = 0, i = 0; r < c->nranks && i < k; r++)
            if (c->node_of[r] == h)
                src[i++] = r;
        for (int r = 0; r < c->nranks && n < k; r++)
            if (c->node_of[r] == peer)
                dst[n++] = r;
        c->nic_peer[h] = peer, c->nic_k[h] = k;
        c->nic_one[h] = flows_bw(c, src, dst, 1, big, &st);
        c->nic_agg[h] = k > 1 ? flows_bw(c, src, dst, k, big, &st) : c->nic_one[h];
    }
    if (H > 1 && st == CS_OK) {
        int s2[2] = {c->duplex_a, c->duplex_b}, d2[2] = {c->duplex_b, c->duplex_a};
        c->duplex_one = flows_bw(c, s2, d2, 1, big, &st);
        c->duplex_both = flows_bw(c, s2, d2, 2, big, &st) / 2; /* per direction */
        /* a node's two directions over different connections: A0 -> B0
         * with B1 -> A1 (second ranks of the same nodes), else with C -> A1
         * or C -> A0 from a node C as fast as A and B (a slower C would
         * limit C -> A by its own NIC, not by A's two directions) */
        c->duplex_c = c->duplex_d = -1;
        int A = c->node_of[c->duplex_a], B = c->node_of[c->duplex_b];
        int a1 = -1, b1 = -1;
        for (int r = 0; r < c->nranks; r++) {
            if (c->node_of[r] == A && r != c->duplex_a && a1 < 0)
                a1 = r;
            if (c->node_of[r] == B && r != c->duplex_b && b1 < 0)
                b1 = r;
        }
        if (a1 >= 0 && b1 >= 0) {
            c->duplex_c = b1, c->duplex_d = a1;
        } else {
            double ab = 0;
            for (int s = nintra; s < c->nser; s++)
                if (c->ser[s].a == c->duplex_a && c->ser[s].b == c->duplex_b)
                    ab = big_bw(c, &c->ser[s]);
            for (int h = 0; h < H && c->duplex_c < 0; h++) {
                double ca = 0;
                for (int s = nintra; s < c->nser; s++)
                    if ((c->ser[s].na == h && c->ser[s].nb == A) ||
                        (c->ser[s].na == A && c->ser[s].nb == h))
                        ca = big_bw(c, &c->ser[s]);
                if (h != A && h != B && ca >= 0.9 * ab)
                    c->duplex_c = c->first[h], c->duplex_d = a1 >= 0 ? a1 : c->duplex_a;
            }
        }
        if (c->duplex_c >= 0) {
            int s3[2] = {c->duplex_a, c->duplex_c}, d3[2] = {c->duplex_b, c->duplex_d};
            c->duplex_node = flows_bw(c, s3, d3, 2, big, &st) / 2;
        }
    }
    free(src);
    free(dst);
    /* 5. reduction bandwidth per element type, every rank at once */
    size_t rb = c->sizes[c->nsizes - 1] < (16u << 20) ? c->sizes[c->nsizes - 1] : (16u << 20);
    if (rb < 1 << 20)
        rb = 1 << 20;
    double mine[NDT], *all = calloc((size_t)c->nranks * NDT, sizeof(double));
    if (!all && st == CS_OK)
        st = cs_err_set(&c->err, CS_ERR_NOMEM, "out of memory");
    if (st == CS_OK)
        st = cs_boot_barrier(c->boot, &c->err);
    for (int d = 0; d < NDT && st == CS_OK; d++) {
        double t[5];
        st = cs_calib_reduce(rb, (cs_dtype_t)d, CS_OP_SUM, 5, t, &c->err);
        mine[d] = st == CS_OK ? (double)rb / cs_fit_median(t, 5) : 0;
    }
    if (st == CS_OK)
        st = cs_boot_allgather(c->boot, mine, sizeof(mine), all, &c->err);
    for (int d = 0; d < NDT && st == CS_OK; d++) {
        double v[CS_CLI_MAX_SIZES * 16];
        int n = c->nranks < (int)(sizeof(v) / sizeof(v[0])) ? c->nranks : (int)(sizeof(v) / sizeof(v[0]));
        for (int r = 0; r < n; r++)
            v[r] = all[r * NDT + d];
        c->red[d] = cs_fit_median(v, n);
    }
    free(all);
    return st;
}

/* ---- outputs ---------------------------------------------------------------- */

static const char *dt_names[NDT] = {"float", "double", "half", "bfloat16", "int32", "int64"};

static int json_recognize(const char *head, size_t n)
{
    static const char k[] = "{\"collstep_calibration\"";
    return n >= sizeof(k) - 1 && memcmp(head, k, sizeof(k) - 1) == 0;
}
static const cs_out_kind_t xml_kind = {"calibrated platform", cs_plat_calib_recognize, NULL, NULL};
static const cs_out_kind_t json_kind = {"calibration file", json_recognize, NULL, NULL};

static char json_path[4096];

static int check_outputs(cal_t *c)
{
    const char *o = c->o->output;
    if (c->o->json) {
        snprintf(json_path, sizeof(json_path), "%s", c->o->json);
    } else {
        size_t l = strlen(o);
        int x = l > 4 && !strcmp(o + l - 4, ".xml");
        snprintf(json_path, sizeof(json_path), "%.*s.json", (int)(x ? l - 4 : l), o);
    }
    int fl = c->o->force ? CS_OUT_FORCE : 0;
    cs_err_t e;
    cs_err_clear(&e);
    if (cs_out_check(o, fl, &xml_kind, 0, &e) != CS_OK) {
        cs_err_set(&c->err, CS_ERR_EXISTS, "-o %s: %s", o, e.msg);
        return CS_ERR_EXISTS;
    }
    if (cs_out_check(json_path, fl, &json_kind, 0, &e) != CS_OK) {
        cs_err_set(&c->err, CS_ERR_EXISTS, "--json %s: %s", json_path, e.msg);
        return CS_ERR_EXISTS;
    }
    return CS_OK;
}

static int fail_rc(cal_t *c, int st)
{
    const char *m = c->err.msg[0] ? c->err.msg : "failed";
    if (strncmp(m, "rank ", 5) == 0)
        fprintf(stderr, "collstep calibrate: %s\n", m);
    else
        fprintf(stderr, "collstep calibrate: rank %d: %s\n", c->rank, m);
    if (st == CS_ERR_INTERRUPTED && cs_intr_pending())
        return cs_intr_exit_code();
    return CS_EXIT_RUNTIME;
}

/* The platform's figures from the fits (cs_plat_calib.h).  Per pair of
 * nodes the large-message piece: alpha_AB = lat(A) + lat(B) (least squares
 * over the pairs; half each with two nodes), bw(A) = the best pair of A
 * (a pair runs at its slower node's rate). */
static void derive(cal_t *c, cs_plat_calib_t *p, cs_plat_calib_node_t *nodes)
{
    int H = c->nnodes;
    uint64_t top = c->sizes[c->nsizes - 1];
    double ia[CS_CLI_MAX_SIZES * 16], ib[CS_CLI_MAX_SIZES * 16];
    int ni = 0;
    double S[1024] = {0}, T = 0;
    for (int s = 0; s < c->nser; s++) {
        const series_t *x = &c->ser[s];
        const cs_fit_line_t *l = cs_fit_piece_for(&x->fit, top);
        /* the large piece's intercept, unless it was clamped (noise): then
         * the small messages' alpha, the delay itself */
        double alpha = l->alpha > 0 ? l->alpha : x->fit.piece[0].alpha;
        if (x->na == x->nb) {
            if (ni < (int)(sizeof(ia) / sizeof(ia[0])))
                ia[ni] = alpha, ib[ni++] = l->beta;
            continue;
        }
        if (l->beta > nodes[x->na].bw)
            nodes[x->na].bw = l->beta;
        if (l->beta > nodes[x->nb].bw)
            nodes[x->nb].bw = l->beta;
        if (x->na < 1024 && x->nb < 1024)
            S[x->na] += alpha, S[x->nb] += alpha;
        T += alpha;
    }
    for (int h = 0; h < H; h++) {
        double lat = H == 2 ? T / 2 : H > 2 && h < 1024 ? (S[h] - T / (H - 1)) / (H - 2) : 0;
        nodes[h].lat = lat > 0 ? lat : 0;
        snprintf(nodes[h].name, sizeof(nodes[h].name), "%s", c->ids[h].name);
        if (!(nodes[h].bw > 0) || isinf(nodes[h].bw))
            nodes[h].bw = 1e12;
    }
    memset(p, 0, sizeof(*p));
    p->nranks = c->nranks, p->nnodes = H, p->node_of = c->node_of, p->nodes = nodes;
    p->intra_lat = ni ? cs_fit_median(ia, ni) : 0;
    p->intra_bw = ni ? cs_fit_median(ib, ni) : 1e12;
    if (!(p->intra_bw > 0) || isinf(p->intra_bw)) /* no slope seen (tiny sizes only) */
        p->intra_bw = 1e12;
    /* every rank busy (loaded ring flows, each rank sending and receiving
     * at once): a rank's port moves 2 x the flow rate (beta of its own
     * series, large piece); its latency is what a message costs beyond
     * the lone pair's alpha of its class, split between the two ports a
     * message crosses */
    double ex[1024];
    int nx = 0;
    double *port = c->port_bw;
    for (int r = 0; c->load_fit && port && r < c->nranks; r++) {
        int from = (r + c->nranks - 1) % c->nranks, cls = c->node_of[from] != c->node_of[r];
        const cs_fit_line_t *l = cs_fit_piece_for(&c->load_fit[r], top);
        /* a port only where the rank moved less than the links allow: its
         * flows in (from -> r) and out (r -> to) are bounded by the NICs
         * they cross (none inside a node) */
        int to = (r + 1) % c->nranks;
        double lim = INFINITY;
        if (c->node_of[from] != c->node_of[r]) {
            lim = fmin(lim, nodes[c->node_of[from]].bw);
            lim = fmin(lim, nodes[c->node_of[r]].bw);
        }
        if (c->node_of[to] != c->node_of[r]) {
            lim = fmin(lim, nodes[c->node_of[to]].bw);
            lim = fmin(lim, nodes[c->node_of[r]].bw);
        }
        int limited = l->beta > 0 && !isinf(l->beta) && (isinf(lim) ? l->beta < 0.9 * p->intra_bw
                                                                    : l->beta < 0.9 * lim);
        port[r] = limited ? 2 * l->beta : 0;
        double la = l->alpha > 0 ? l->alpha : c->load_fit[r].piece[0].alpha;
        double base = cls ? nodes[c->node_of[from]].lat + nodes[c->node_of[r]].lat : p->intra_lat;
        if (nx < 1024)
            ex[nx++] = la > base ? la - base : 0;
    }
    if (port) {
        p->port_bw = port;
        p->port_lat = nx ? cs_fit_median(ex, nx) / 2 : 0;
    }
    for (int h = 0; h < H; h++)
        p->switch_bw += nodes[h].bw;
    p->reduce_speed = c->red[cs_dtype_parse(c->o->dtype)];
    if (H > 1 && c->duplex_one > 0) {
        double rp = c->duplex_both / c->duplex_one, rn = c->duplex_node / c->duplex_one;
        p->pair_duplex = rp < 0.9 ? (rp > 0.5 ? rp : 0.5) : 0;
        p->node_duplex = c->duplex_c >= 0 && rn < 0.9 ? (rn > 0.5 ? rn : 0.5) : 0;

    }
}

static void json_line(FILE *f, const char *k, const cs_fit_line_t *l, const char *end)
{
    fprintf(f, "\"%s\":{\"alpha_us\":%.4f,\"beta_Bps\":%.6e,\"rms_pct\":%.3f,\"max_pct\":%.3f,"
               "\"lo\":%llu,\"hi\":%llu,\"points\":%d}%s",
            k, l->alpha * 1e6, isinf(l->beta) ? 0 : l->beta, l->rms_pct, l->max_pct,
            (unsigned long long)l->lo, (unsigned long long)l->hi, l->npoints, end);
}

static void write_json(cal_t *c, FILE *f, const cs_plat_calib_t *p)
{
    fprintf(f, "{\"collstep_calibration\":1,\"ranks\":%d,\"transport\":\"%s\",\"provider\":\"%s\","
               "\"nodes\":[", c->nranks, c->o->transport, c->o->provider);
    for (int h = 0; h < c->nnodes; h++)
        fprintf(f, "%s{\"name\":\"%s\",\"ranks\":%d,\"first_rank\":%d,\"tier\":\"%s\","
                   "\"nic_Bps\":%.6e,\"nic_lat_us\":%.4f,\"nic_peer\":%d,\"nic_senders\":%d,"
                   "\"nic_one_Bps\":%.6e,\"nic_all_Bps\":%.6e}",
                h ? "," : "", c->ids[h].name, c->count[h], c->first[h], p->nodes[h].tier,
                p->nodes[h].bw, p->nodes[h].lat * 1e6, c->nic_peer ? c->nic_peer[h] : -1,
                c->nic_k ? c->nic_k[h] : 0, c->nic_one ? c->nic_one[h] : 0,
                c->nic_agg ? c->nic_agg[h] : 0);
    fprintf(f, "],\n\"series\":[");
    for (int s = 0; s < c->nser; s++) {
        const series_t *x = &c->ser[s];
        fprintf(f, "%s\n{\"class\":\"%s\",\"rank_a\":%d,\"rank_b\":%d,\"node_a\":%d,\"node_b\":%d,"
                   "\"points\":[", s ? "," : "", x->na == x->nb ? "intra" : "inter", x->a, x->b,
                x->na, x->nb);
        for (int k = 0; k < c->nsizes; k++)
            fprintf(f, "%s{\"bytes\":%llu,\"median_us\":%.4f,\"p10_us\":%.4f,\"p90_us\":%.4f,"
                       "\"reps\":%d}", k ? "," : "", (unsigned long long)c->sizes[k],
                    x->med[k] * 1e6, x->p10[k] * 1e6, x->p90[k] * 1e6, x->reps[k]);
        fprintf(f, "],\"fit\":{\"pieces\":%d,\"break\":%llu,", x->fit.npieces,
                (unsigned long long)x->fit.brk);
        json_line(f, "small", &x->fit.piece[0], ",");
        json_line(f, "large", cs_fit_piece_for(&x->fit, c->sizes[c->nsizes - 1]), ",");
        json_line(f, "single", &x->fit.single, "}}");
    }
    fprintf(f, "],\n\"loaded\":[");
    for (int r = 0; c->load_fit && r < c->nranks; r++) {
        int from = (r + c->nranks - 1) % c->nranks;
        fprintf(f, "%s\n{\"class\":\"%s\",\"src\":%d,\"dst\":%d,\"points\":[", r ? "," : "",
                c->node_of[from] == c->node_of[r] ? "intra" : "inter", from, r);
        for (int k = 0; k < c->nsizes; k++)
            fprintf(f, "%s{\"bytes\":%llu,\"median_us\":%.4f,\"reps\":%d}", k ? "," : "",
                    (unsigned long long)c->sizes[k], c->load_t[(size_t)r * c->nsizes + k] * 1e6,
                    c->load_reps[k]);
        fprintf(f, "],\"fit\":{\"pieces\":%d,\"break\":%llu,", c->load_fit[r].npieces,
                (unsigned long long)c->load_fit[r].brk);
        json_line(f, "small", &c->load_fit[r].piece[0], ",");
        json_line(f, "large", cs_fit_piece_for(&c->load_fit[r], c->sizes[c->nsizes - 1]), ",");
        json_line(f, "single", &c->load_fit[r].single, "}}");
    }
    fprintf(f, "],\n\"duplex\":{\"rank_a\":%d,\"rank_b\":%d,\"rank_c\":%d,\"one_way_Bps\":%.6e,"
               "\"pair_both_ways_Bps_per_direction\":%.6e,\"node_both_ways_Bps_per_flow\":%.6e,"
               "\"pair_rho\":%.4f,\"node_rho\":%.4f,\"rank_d\":%d},\n\"reduce_Bps\":{",
            c->duplex_a, c->duplex_b, c->duplex_c, c->duplex_one, c->duplex_both, c->duplex_node,
            p->pair_duplex, p->node_duplex, c->duplex_d);
    for (int d = 0; d < NDT; d++)
        fprintf(f, "%s\"%s\":%.6e", d ? "," : "", dt_names[d], c->red[d]);
    fprintf(f, "},\n\"platform\":{\"intra_lat_us\":%.4f,\"intra_Bps\":%.6e,\"switch_Bps\":%.6e,"
               "\"reduce_speed_Bps\":%.6e,\"port_lat_us\":%.4f,\"pair_rho\":%.4f,"
               "\"node_rho\":%.4f,\"port_Bps\":[",
            p->intra_lat * 1e6, p->intra_bw, p->switch_bw, p->reduce_speed, p->port_lat * 1e6,
            p->pair_duplex, p->node_duplex);
    for (int r = 0; r < c->nranks; r++)
        fprintf(f, "%s%.6e", r ? "," : "", p->port_bw ? p->port_bw[r] : 0);
    fprintf(f, "]}}\n");
}

/* The report on stdout, also the XML comment. */
static void summary(cal_t *c, FILE *f, const cs_plat_calib_t *p)
{
    fprintf(f, "collstep calibrate: %d ranks, %d nodes, transport %s%s%s\n", c->nranks, c->nnodes,
            c->o->transport, strcmp(c->o->transport, "ofi") ? "" : "/", strcmp(c->o->transport,
            "ofi") ? "" : c->o->provider);
    fprintf(f, "pair fits (one-way time = alpha + bytes / beta; relative least squares):\n");
    fprintf(f, "  %-6s %5s %5s  %-34s %-34s\n", "class", "rank", "rank", "small piece", "large piece");
    for (int s = 0; s < c->nser; s++) {
        const series_t *x = &c->ser[s];
        const cs_fit_line_t *a = &x->fit.piece[0], *b = cs_fit_piece_for(&x->fit, c->sizes[c->nsizes - 1]);
        fprintf(f, "  %-6s %5d %5d  %8.2f us %9.4f GB/s rms %4.1f%%  %8.2f us %9.4f GB/s rms %4.1f%% "
                   "max %4.1f%%", x->na == x->nb ? "intra" : "inter", x->a, x->b, a->alpha * 1e6,
                isinf(a->beta) ? 0 : a->beta / 1e9, a->rms_pct, b->alpha * 1e6,
                isinf(b->beta) ? 0 : b->beta / 1e9, b->rms_pct, b->max_pct);
        if (x->fit.npieces == 2)
            fprintf(f, " (break at %llu B)", (unsigned long long)x->fit.brk);
        fprintf(f, "\n");
    }
    fprintf(f, "every rank busy (ring flows r-1 -> r at once), large piece:\n ");
    for (int r = 0; c->load_fit && r < c->nranks; r++) {
        int from = (r + c->nranks - 1) % c->nranks;
        const cs_fit_line_t *l = cs_fit_piece_for(&c->load_fit[r], c->sizes[c->nsizes - 1]);
        fprintf(f, " %d->%d %s %.0f us %.4f GB/s%s", from, r,
                c->node_of[from] == c->node_of[r] ? "intra" : "inter", l->alpha * 1e6,
                isinf(l->beta) ? 0 : l->beta / 1e9, r % 3 == 2 ? "\n " : ";");
    }
    fprintf(f, "\nnodes (NIC each direction; one rank vs all its ranks sending off the node):\n");
    for (int h = 0; h < c->nnodes; h++)
        fprintf(f, "  %-20.20s ranks %3d  tier %-9s %9.4f GB/s  lat %8.2f us  one %9.4f GB/s  "
                   "all %d: %9.4f GB/s\n", c->ids[h].name, c->count[h], p->nodes[h].tier,
                p->nodes[h].bw / 1e9, p->nodes[h].lat * 1e6, c->nic_one ? c->nic_one[h] / 1e9 : 0,
                c->nic_k ? c->nic_k[h] : 0, c->nic_agg ? c->nic_agg[h] / 1e9 : 0);
    fprintf(f, "duplex: ranks %d->%d one way %.4f GB/s; %d<->%d both ways %.4f GB/s per direction%s",
            c->duplex_a, c->duplex_b, c->duplex_one / 1e9, c->duplex_a, c->duplex_b,
            c->duplex_both / 1e9, p->pair_duplex > 0 ? " (duplex links per pair)" : " (full duplex)");
    if (c->duplex_c >= 0)
        fprintf(f, "; %d->%d with %d->%d %.4f GB/s per flow%s", c->duplex_a, c->duplex_b,
                c->duplex_c, c->duplex_d, c->duplex_node / 1e9,
                p->node_duplex > 0 ? " (duplex links per node)" : " (full duplex)");
    fprintf(f, "\n");
    if (p->port_bw) {
        fprintf(f, "rank ports (in + out, every rank busy; 0: the links bound it, no port), latency "
                   "%.1f us, GB/s:", p->port_lat * 1e6);
        for (int r = 0; r < c->nranks; r++)
            fprintf(f, " %.4f", p->port_bw[r] / 1e9);
        fprintf(f, "\n");
    }
    fprintf(f, "intra-node link: %.2f us, %.4f GB/s; reduction GB/s per rank, all ranks at once:",
            p->intra_lat * 1e6, p->intra_bw / 1e9);
    for (int d = 0; d < NDT; d++)
        fprintf(f, " %s %.2f", dt_names[d], c->red[d] / 1e9);
    fprintf(f, "\n");
}

static int write_outputs(cal_t *c)
{
    cs_plat_calib_node_t *nodes = calloc((size_t)c->nnodes, sizeof(*nodes));
    cs_plat_calib_t p;
    char *xml = NULL, *comment = NULL;
    size_t clen = 0;
    cs_out_t *ox = NULL, *oj = NULL;
    int st = nodes ? CS_OK : cs_err_set(&c->err, CS_ERR_NOMEM, "out of memory");
    if (st == CS_OK) {
        derive(c, &p, nodes);
        FILE *m = open_memstream(&comment, &clen);
        p.comment = NULL;
        cs_plat_calib_xml(&p, &xml, &c->err); /* names the tiers */
        free(xml);
        xml = NULL;
        if (m) {
            summary(c, m, &p);
            fclose(m);
        }
        for (char *s = comment; s && (s = strstr(s, "--")); ) /* not allowed in a comment */
            s[0] = s[1] = '=';
        p.comment = comment;
        st = cs_plat_calib_xml(&p, &xml, &c->err);
    }
    int fl = c->o->force ? CS_OUT_FORCE : 0;
    if (st == CS_OK)
        st = cs_out_begin_file(c->o->output, fl, &xml_kind, &ox, &c->err);
    if (st == CS_OK)
        st = cs_out_begin_file(json_path, fl, &json_kind, &oj, &c->err);
    if (st == CS_OK) {
        fputs(xml, cs_out_stream(ox));
        write_json(c, cs_out_stream(oj), &p);
        st = cs_out_commit(ox, &c->err);
        ox = NULL;
        if (st == CS_OK)
            st = cs_out_commit(oj, &c->err);
        oj = NULL;
    }
    cs_out_abort(ox);
    cs_out_abort(oj);
    if (st == CS_OK) {
        summary(c, stdout, &p);
        printf("wrote %s (%d hosts) and %s\n", c->o->output, c->nranks, json_path);
    }
    free(xml);
    free(comment);
    free(nodes);
    if (st != CS_OK) {
        fprintf(stderr, "collstep calibrate: %s\n", c->err.msg);
        return st == CS_ERR_EXISTS || st == CS_ERR_IO ? CS_EXIT_USAGE : CS_EXIT_RUNTIME;
    }
    return CS_EXIT_OK;
}


static int run(cal_t *c)
{
    cal_opts_t *o = c->o;
    cs_boot_config_t bc = {o->timeout, o->boot};
    int st = cs_boot_open(&bc, &c->boot, &c->err);
    if (st != CS_OK) {
        fprintf(stderr, "collstep calibrate: %s\n", c->err.msg);
        return st == CS_ERR_NOTFOUND ? CS_EXIT_USAGE : CS_EXIT_RUNTIME;
    }
    c->rank = cs_boot_rank(c->boot), c->nranks = cs_boot_size(c->boot);
    if (c->nranks < 2) {
        fprintf(stderr, "collstep calibrate: one rank: calibration measures pairs of ranks; start "
                        "2 or more (mpirun -np N, or WORLD_SIZE >= 2)\n");
        return CS_EXIT_USAGE;
    }
    /* who is where */
    ident_t me, *all = calloc((size_t)c->nranks, sizeof(ident_t));
    c->node_of = calloc((size_t)c->nranks, sizeof(int));
    c->first = calloc((size_t)c->nranks, sizeof(int));
    c->count = calloc((size_t)c->nranks, sizeof(int));
    c->ids = calloc((size_t)c->nranks, sizeof(ident_t));
    if (!all || !c->node_of || !c->first || !c->count || !c->ids)
        return fail_rc(c, cs_err_set(&c->err, CS_ERR_NOMEM, "out of memory"));
    memset(&me, 0, sizeof(me));
    int grc = 0;
    if (o->groups) {
        grc = read_group(o->groups, c->rank, me.name, sizeof(me.name));
    } else {
        struct stat sb;
        gethostname(me.name, sizeof(me.name) - 1);
        if (stat("/proc/self/ns/net", &sb) == 0)
            me.netns = (uint64_t)sb.st_ino;
    }
    int ust = CS_OK;
    if (grc)
        ust = cs_err_set(&c->err, CS_ERR_INVAL, "--groups %s: %s", o->groups,
                         grc == -1 ? "cannot open it" : "fewer lines than ranks");
    else if (cs_cli_sizes("calibrate", o->size, 0, c->sizes, &c->nsizes) != CS_EXIT_OK)
        ust = cs_err_set(&c->err, CS_ERR_INVAL, "--size: see above");
    else if (cs_dtype_parse(o->dtype) == CS_DT_COUNT)
        ust = cs_err_set(&c->err, CS_ERR_INVAL, "--dtype: unknown type '%s'", o->dtype);
    else if (c->nsizes < 7)
        ust = cs_err_set(&c->err, CS_ERR_INVAL, "--size: %d sizes; the fits need at least 7",
                         c->nsizes);
    if (ust == CS_OK && c->rank == 0 && check_outputs(c) != CS_OK)
        ust = CS_ERR_EXISTS;
    cs_err_t e2;
    cs_err_clear(&e2);
    int ast = cs_boot_agree(c->boot, ust, "checking the arguments", &e2);
    if (ust != CS_OK) {
        if (c->err.msg[0] && !strstr(c->err.msg, "see above"))
            fprintf(stderr, "collstep calibrate: %s\n", c->err.msg);
        free(all);
        return CS_EXIT_USAGE;
    }
    if (ast != CS_OK) {
        free(all);
        return CS_EXIT_USAGE; /* rank that failed explains */
    }
    char args[400];
    snprintf(args, sizeof(args), "size=%s budget=%g min=%ld max=%ld nic=%llu transport=%s "
             "provider=%s groups=%d", o->size, o->budget, o->min_reps, o->max_reps,
             (unsigned long long)o->nic_size, o->transport, o->provider, o->groups != NULL);
    if ((st = cs_boot_check_same(c->boot, 0, args, &c->err)) == CS_OK)
        st = cs_boot_allgather(c->boot, &me, sizeof(me), all, &c->err);
    if (st != CS_OK) {
        free(all);
        return fail_rc(c, st);
    }
    for (int r = 0; r < c->nranks; r++) {
        int h = 0;
        while (h < c->nnodes && !(strcmp(c->ids[h].name, all[r].name) == 0 &&
                                  c->ids[h].netns == all[r].netns))
            h++;
        if (h == c->nnodes)
            c->ids[c->nnodes] = all[r], c->first[c->nnodes++] = r;
        c->node_of[r] = h;
        c->count[h]++;
    }
    free(all);
    /* names told apart (namespaces of one machine share the hostname) */
    for (int h = 0; h < c->nnodes; h++)
        for (int g = 0; g < c->nnodes; g++)
            if (g != h && !strcmp(c->ids[g].name, c->ids[h].name) && !strchr(c->ids[h].name, '#')) {
                char nm[64];
                snprintf(nm, sizeof(nm), "%.50s#%d", c->ids[h].name, h + 1);
                memcpy(c->ids[h].name, nm, sizeof(nm));
                break;
            }
    /* transport */
    cs_tp_config_t tc = {c->rank, c->nranks, o->provider, o->iface, 0, o->timeout};
    st = cs_tp_open(o->transport, &tc, &c->tp, &c->err);
    st = cs_boot_connect(c->boot, st == CS_OK ? c->tp : NULL, st, &c->err);
    if (st == CS_OK)
        st = cs_calib_open(c->tp, c->boot, c->sizes[c->nsizes - 1], o->timeout, &c->cb, &c->err);
    if (st == CS_OK && c->rank == 0)
        fprintf(stderr, "collstep calibrate: %d ranks on %d node%s, %d sizes %llu..%llu B, "
                        "transport %s\n", c->nranks, c->nnodes, c->nnodes == 1 ? "" : "s",
                c->nsizes, (unsigned long long)c->sizes[0],
                (unsigned long long)c->sizes[c->nsizes - 1], o->transport);
    if (st == CS_OK)
        st = measure(c);
    if (st == CS_OK)
        st = cs_boot_barrier(c->boot, &c->err);
    if (st != CS_OK)
        return fail_rc(c, st);
    return c->rank == 0 ? write_outputs(c) : CS_EXIT_OK;
}

int cs_cli_calibrate(int argc, char **argv)
{
    cal_opts_t o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? CS_EXIT_OK : rc;
    cal_t *c = calloc(1, sizeof(*c));
    if (!c) {
        fprintf(stderr, "collstep calibrate: out of memory\n");
        return CS_EXIT_RUNTIME;
    }
    c->o = &o;
    cs_err_clear(&c->err);
    cs_intr_install();
    rc = run(c);
    cs_calib_close(c->cb);
    cs_tp_close(c->tp);
    cs_boot_close(c->boot);
    for (int s = 0; s < c->nser; s++) {
        free(c->ser[s].med);
        free(c->ser[s].p10);
        free(c->ser[s].p90);
        free(c->ser[s].reps);
    }
    free(c->ser);
    free(c->node_of);
    free(c->first);
    free(c->count);
    free(c->ids);
    free(c->nic_agg);
    free(c->nic_one);
    free(c->nic_peer);
    free(c->nic_k);
    free(c->load_t);
    free(c->port_bw);
    free(c->load_reps);
    free(c->load_fit);
    free(c);
    return rc;
}
