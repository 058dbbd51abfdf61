/*
 * cli_live.c - launching, options and failures shared by `collstep
 * calibrate` and `collstep validate` (cli_live.h); how many ranks share a
 * machine, --wait and the memory check, also for `collstep run`.
 */
#include "cli_live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cs_intr.h"
#include "cs_log.h"

#define WAIT_HELP                                                                            \
    "  --wait W             how an idle rank waits in collectives: spin (lowest latency;\n"   \
    "                       a core per rank), yield (gives its core away at once),\n"        \
    "                       auto (default: yield where a machine runs more ranks than\n"     \
    "                       it has cores)"

const char cs_live_wait_help[] = WAIT_HELP "\n";

const char cs_live_usage_opts[] =
    "  --transport NAME     ofi (default), tcp, shm (as collstep run); --provider NAME\n"
    "                       (libfabric provider, tcp;ofi_rxm), --iface ADDR (address\n"
    "                       tcp binds to, 127.0.0.1)\n"
    WAIT_HELP "; calibrate's kernels yield after 2 us idle\n"
    "  --timeout S          give up when nothing progresses for S seconds (60)\n"
    "  --boot B             pmix or env (default: auto)\n"
    "  --force              replace outputs collstep did not write\n";

void cs_live_opts_init(cs_live_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->transport = "ofi", o->provider = "tcp;ofi_rxm", o->iface = "127.0.0.1", o->wait = "auto";
    o->timeout = 60;
    optind = 1; /* getopt_long starts again */
    opterr = 0;
}

int cs_live_uerr(const char *cmd, const char *fmt, const char *a)
{
    fprintf(stderr, "collstep %s: ", cmd);
    fprintf(stderr, fmt, a);
    fprintf(stderr, " (see collstep %s --help)\n", cmd);
    return CS_EXIT_USAGE;
}

int cs_live_parse_wait(const char *cmd, const char *arg, const char **wait)
{
    if (strcmp(arg, "auto") && strcmp(arg, "spin") && strcmp(arg, "yield"))
        return cs_live_uerr(cmd, "--wait: expected auto, spin or yield, found '%s'", arg);
    *wait = arg;
    return CS_EXIT_OK;
}

int cs_live_opt(const char *cmd, cs_live_opts_t *o, int c, const char *arg, char **argv)
{
    char *end = NULL;
    switch (c) {
    case 't': o->transport = arg; return CS_EXIT_OK;
    case 'V': o->provider = arg; return CS_EXIT_OK;
    case 'I': o->iface = arg; return CS_EXIT_OK;
    case 'B': o->boot = arg; return CS_EXIT_OK;
    case 'F': o->force = 1; return CS_EXIT_OK;
    case 'o': o->output = arg; return CS_EXIT_OK;
    case 'W': return cs_live_parse_wait(cmd, arg, &o->wait);
    case 'T':
        o->timeout = strtod(arg, &end);
        if (*end || !(o->timeout > 0))
            return cs_live_uerr(cmd, "--timeout: expected seconds > 0, found '%s'", arg);
        return CS_EXIT_OK;
    case ':': return cs_live_uerr(cmd, "option %s needs a value", argv[optind - 1]);
    default: return cs_live_uerr(cmd, "unknown option '%s'", argv[optind - 1]);
    }
}

int cs_live_parse_end(const char *cmd, cs_live_opts_t *o, int argc, char **argv)
{
    if (optind < argc)
        return cs_live_uerr(cmd, "unexpected argument '%s'", argv[optind]);
    if (!strcmp(o->transport, "nccl"))
        return cs_live_uerr(cmd, "--transport %s: this command runs host memory transports "
                                 "(ofi, tcp, shm)", o->transport);
    if (!strcmp(o->transport, "shm"))
        o->provider = "native";
    return CS_EXIT_OK;
}

void cs_live_transport_name(const cs_live_opts_t *o, char *buf, size_t n)
{
    if (!strcmp(o->transport, "ofi"))
        snprintf(buf, n, "ofi/%s", o->provider);
    else
        snprintf(buf, n, "%s", o->transport);
}

/* ---- ranks per machine (run, calibrate, validate) ------------------------------ */

typedef struct machine {
    char id[40]; /* kernel boot id: namespaces of one machine share it */
} machine_t;

int cs_live_machine_ranks(cs_boot_t *b, int *ranks, unsigned char *here, cs_err_t *err)
{
    int n = cs_boot_size(b);
    machine_t me, *all = calloc((size_t)n, sizeof(machine_t));
    if (!all)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    memset(&me, 0, sizeof(me));
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f || !fgets(me.id, sizeof(me.id), f)) {
        char host[64] = "";
        gethostname(host, sizeof(host) - 1);
        snprintf(me.id, sizeof(me.id), "%.39s", host);
    }
    if (f)
        fclose(f);
    me.id[strcspn(me.id, "\n")] = 0;
    int st = cs_boot_allgather(b, &me, sizeof(me), all, err);
    *ranks = 0;
    for (int r = 0; r < n && st == CS_OK; r++) {
        int same = strcmp(all[r].id, me.id) == 0;
        *ranks += same;
        if (here)
            here[r] = (unsigned char)same;
    }
    free(all);
    return st;
}

uint64_t cs_live_mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)kb * 1024;
}

/* "1.5 GiB" */
static const char *human(double bytes, char *buf, size_t len)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u = 0;
    while (bytes >= 1024 && u < 6)
        bytes /= 1024, u++;
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
    return buf;
}

int cs_live_mem_check(const char *cmd, uint64_t size, double need, int ranks_here,
                      const char *what)
{
    uint64_t avail = cs_live_mem_available();
    if (avail == 0 || need <= (double)avail)
        return CS_EXIT_OK;
    char s[32], n[32], a[32];
    return cs_cli_usage_error(cmd, "--size %llu (%s): the %s of the %d rank%s on this machine "
                                   "need about %s, but %s of memory is available (MemAvailable "
                                   "in /proc/meminfo); choose smaller sizes or fewer ranks per "
                                   "machine", (unsigned long long)size,
                              human((double)size, s, sizeof(s)), what, ranks_here,
                              ranks_here == 1 ? "" : "s", human(need, n, sizeof(n)),
                              human((double)avail, a, sizeof(a)));
}

int cs_live_oversubscribed(const char *cmd, const char *wait, int machine_ranks)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int yield = !strcmp(wait, "yield") ||
                (!strcmp(wait, "auto") && cores > 0 && machine_ranks > cores);
    CS_INFO(cmd, "%d ranks on this machine, %ld cores, --wait %s: idle ranks %s",
            machine_ranks, cores, wait, yield ? "yield" : "spin");
    return yield;
}

/* ---- where the ranks are ------------------------------------------------------ */

typedef struct ident {
    cs_live_node_t node;
    int bad; /* this rank could not say (--groups) */
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

static void whoami(cs_live_t *l, const char *groups, ident_t *me)
{
    memset(me, 0, sizeof(*me));
    char host[64] = "";
    gethostname(host, sizeof(host) - 1);
    if (groups) {
        int g = read_group(groups, l->rank, me->node.name, sizeof(me->node.name));
        if (g) {
            fprintf(stderr, "collstep %s: rank %d: --groups %s: %s\n", l->cmd, l->rank, groups,
                    g == -1 ? "cannot open it" : "fewer lines than ranks");
            me->bad = 1;
        }
        return;
    }
    memcpy(me->node.name, host, sizeof(host));
    struct stat sb;
    if (stat("/proc/self/ns/net", &sb) == 0)
        me->node.netns = (uint64_t)sb.st_ino;
}

static int find_nodes(cs_live_t *l, const char *groups)
{
    int N = l->nranks;
    ident_t me, *all = calloc((size_t)N, sizeof(ident_t));
    l->node_of = calloc((size_t)N, sizeof(int));
    l->first = calloc((size_t)N, sizeof(int));
    l->count = calloc((size_t)N, sizeof(int));
    l->nodes = calloc((size_t)N, sizeof(cs_live_node_t));
    if (!all || !l->node_of || !l->first || !l->count || !l->nodes) {
        free(all);
        return cs_live_fail(l, cs_err_set(&l->err, CS_ERR_NOMEM, "out of memory"));
    }
    whoami(l, groups, &me);
    int st = cs_boot_allgather(l->boot, &me, sizeof(me), all, &l->err);
    if (st == CS_OK)
        st = cs_live_machine_ranks(l->boot, &l->machine_ranks, NULL, &l->err);
    if (st != CS_OK) {
        free(all);
        return cs_live_fail(l, st);
    }
    int bad = 0;
    for (int r = 0; r < N; r++) {
        bad |= all[r].bad;
        int h = 0;
        while (h < l->nnodes && !(strcmp(l->nodes[h].name, all[r].node.name) == 0 &&
                                  l->nodes[h].netns == all[r].node.netns))
            h++;
        if (h == l->nnodes)
            l->nodes[l->nnodes] = all[r].node, l->first[l->nnodes++] = r;
        l->node_of[r] = h;
        l->count[h]++;
    }
    free(all);
    if (bad)
        return CS_EXIT_USAGE; /* the rank at fault said why */
    /* names told apart (namespaces of one machine share the hostname) */
    for (int h = 0; h < l->nnodes; h++)
        for (int g = 0; g < l->nnodes; g++)
            if (g != h && !strcmp(l->nodes[g].name, l->nodes[h].name) &&
                !strchr(l->nodes[h].name, '#')) {
                char nm[64];
                snprintf(nm, sizeof(nm), "%.50s#%d", l->nodes[h].name, h + 1);
                memcpy(l->nodes[h].name, nm, sizeof(nm));
                break;
            }
    l->oversubscribed = cs_live_oversubscribed(l->cmd, l->o->wait, l->machine_ranks);
    return CS_EXIT_OK;
}

int cs_live_start(cs_live_t *l, const char *cmd, const cs_live_opts_t *o, const char *groups)
{
    memset(l, 0, sizeof(*l));
    l->cmd = cmd, l->o = o;
    cs_err_clear(&l->err);
    cs_boot_config_t bc = {o->timeout, o->boot};
    int st = cs_boot_open(&bc, &l->boot, &l->err);
    if (st != CS_OK) {
        fprintf(stderr, "collstep %s: %s\n", cmd, l->err.msg);
        return cs_cli_exit_code(st);
    }
    l->rank = cs_boot_rank(l->boot), l->nranks = cs_boot_size(l->boot);
    return find_nodes(l, groups);
}

int cs_live_agree(cs_live_t *l, int rc)
{
    int *rcs = calloc((size_t)l->nranks, sizeof(int)), worst = rc;
    if (!rcs)
        return cs_live_fail(l, cs_err_set(&l->err, CS_ERR_NOMEM, "out of memory"));
    int st = cs_boot_allgather(l->boot, &rc, sizeof(rc), rcs, &l->err);
    for (int r = 0; r < l->nranks && st == CS_OK; r++)
        worst = rcs[r] > worst ? rcs[r] : worst;
    free(rcs);
    return st != CS_OK ? cs_live_fail(l, st) : worst;
}

int cs_live_connect(cs_live_t *l)
{
    cs_tp_config_t tc = {l->rank, l->nranks, l->o->provider, l->o->iface, 0, l->o->timeout};
    int st = cs_tp_open(l->o->transport, &tc, &l->tp, &l->err);
    return cs_boot_connect(l->boot, st == CS_OK ? l->tp : NULL, st, &l->err);
}

/* "collstep CMD: rank R: message" (or the message naming its rank); the exit code. */
static int say_fail(const char *cmd, int rank, const cs_err_t *err, int st)
{
    const char *m = err->msg[0] ? err->msg : "failed";
    if (strncmp(m, "rank ", 5) == 0)
        fprintf(stderr, "collstep %s: %s\n", cmd, m);
    else
        fprintf(stderr, "collstep %s: rank %d: %s\n", cmd, rank, m);
    return cs_cli_exit_code(st);
}

int cs_live_fail(cs_live_t *l, int st)
{
    return say_fail(l->cmd, l->rank, &l->err, st);
}

void cs_live_hold(cs_boot_t *b)
{
    cs_cli_hold_errors(cs_boot_rank(b) != 0);
}

int cs_live_release(cs_boot_t *b, const char *cmd, int rc)
{
    const char *held = cs_cli_hold_errors(0);
    int n = cs_boot_size(b), rank = cs_boot_rank(b), worst = rc;
    int *rcs = calloc((size_t)n, sizeof(int));
    cs_err_t err;
    cs_err_clear(&err);
    int st = rcs ? cs_boot_allgather(b, &rc, sizeof(rc), rcs, &err)
                 : cs_err_set(&err, CS_ERR_NOMEM, "out of memory");
    for (int r = 0; r < n && st == CS_OK; r++)
        worst = rcs[r] > worst ? rcs[r] : worst;
    /* rank 0 said its own error; one it did not meet is this rank's to say */
    if (st == CS_OK && rc != CS_EXIT_OK && rank != 0 && rcs[0] == CS_EXIT_OK && held[0])
        fprintf(stderr, "collstep %s: rank %d: %s\n", cmd, rank, held);
    free(rcs);
    return st != CS_OK ? say_fail(cmd, rank, &err, st) : worst;
}

void *cs_live_new(const char *cmd, size_t size)
{
    void *p = calloc(1, size);
    if (!p) {
        fprintf(stderr, "collstep %s: out of memory\n", cmd);
        return NULL;
    }
    cs_intr_install();
    return p;
}

void cs_live_close(cs_live_t *l)
{
    cs_tp_close(l->tp);
    l->tp = NULL;
    cs_boot_close(l->boot);
    l->boot = NULL;
    free(l->node_of);
    free(l->first);
    free(l->count);
    free(l->nodes);
    l->node_of = l->first = l->count = NULL;
    l->nodes = NULL;
}
