/*
 * cli_live.c - the options and the messages of the live commands
 * (cli_live.h) over the job of exec/cs_job.h.
 */
#include "cli_live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cs_intr.h"

#define WAIT_HELP                                                                            \
    "  --wait W             how an idle rank waits in collectives: spin (lowest latency;\n"   \
    "                       a core per rank), yield (gives its core away at once),\n"        \
    "                       auto (default: yield where a machine runs more ranks than\n"     \
    "                       it has cores)"

const char cs_live_wait_help[] = WAIT_HELP "\n";

const char cs_live_usage_opts[] =
    "  --transport NAME     ofi (default), tcp, shm (as collstep run); --provider NAME\n"
    "                       (libfabric provider, tcp;ofi_rxm), --iface ADDR|IFACE\n"
    "                       (address tcp binds to, or a network interface's: ib0;\n"
    "                       127.0.0.1)\n"
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
    uint64_t avail = cs_job_mem_available();
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

int cs_live_fail(cs_job_t *l, int st)
{
    return say_fail(l->cfg.name, l->rank, &l->err, st);
}

int cs_live_start(cs_job_t *l, const char *cmd, const cs_live_opts_t *o, const char *groups)
{
    cs_job_config_t cfg = {cmd, o->boot, o->transport, o->provider, o->iface, o->wait,
                           o->timeout};
    int st = cs_job_open(l, &cfg);
    if (st != CS_OK) {
        fprintf(stderr, "collstep %s: %s\n", cmd, l->err.msg);
        return cs_cli_exit_code(st);
    }
    st = cs_job_find_nodes(l, groups);
    if (st == CS_ERR_INVAL) { /* a rank could not read --groups: it says why */
        if (l->err.msg[0])
            fprintf(stderr, "collstep %s: rank %d: %s\n", cmd, l->rank, l->err.msg);
        return CS_EXIT_USAGE;
    }
    return st == CS_OK ? CS_EXIT_OK : cs_live_fail(l, st);
}

int cs_live_agree(cs_job_t *l, int rc)
{
    int worst = rc, st = cs_job_agree(l, rc, &worst, NULL);
    return st != CS_OK ? cs_live_fail(l, st) : worst;
}

void cs_live_hold(cs_boot_t *b)
{
    cs_cli_hold_errors(cs_boot_rank(b) != 0);
}

int cs_live_release(cs_boot_t *b, const char *cmd, int rc)
{
    const char *held = cs_cli_hold_errors(0);
    int rank = cs_boot_rank(b), worst = rc, rc0 = rc;
    cs_err_t err;
    cs_err_clear(&err);
    int st = cs_job_agree_boot(b, rc, &worst, &rc0, &err);
    /* rank 0 said its own error; one it did not meet is this rank's to say */
    if (st == CS_OK && rc != CS_EXIT_OK && rank != 0 && rc0 == CS_EXIT_OK && held[0])
        fprintf(stderr, "collstep %s: rank %d: %s\n", cmd, rank, held);
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
