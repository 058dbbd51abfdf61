/*
 * cs_job.c - a live job: bootstrap, where the ranks are, agreement,
 * transport (contract in cs_job.h).
 */
#include "cs_job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cs_log.h"

int cs_job_open(cs_job_t *j, const cs_job_config_t *cfg)
{
    memset(j, 0, sizeof(*j));
    j->cfg = *cfg;
    cs_err_clear(&j->err);
    cs_boot_config_t bc = {cfg->timeout, cfg->boot};
    int st = cs_boot_open(&bc, &j->boot, &j->err);
    if (st != CS_OK)
        return st;
    j->rank = cs_boot_rank(j->boot), j->nranks = cs_boot_size(j->boot);
    return CS_OK;
}

/* ---- ranks per machine ---------------------------------------------------------- */

typedef struct machine {
    char id[40]; /* kernel boot id: namespaces of one machine share it */
} machine_t;

int cs_job_machine_ranks(cs_boot_t *b, int *ranks, unsigned char *here, cs_err_t *err)
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

uint64_t cs_job_mem_available(void)
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

int cs_job_oversubscribed(const char *name, const char *wait, int machine_ranks)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int yield = !strcmp(wait, "yield") ||
                (!strcmp(wait, "auto") && cores > 0 && machine_ranks > cores);
    CS_INFO(name, "%d ranks on this machine, %ld cores, --wait %s: idle ranks %s",
            machine_ranks, cores, wait, yield ? "yield" : "spin");
    return yield;
}

/* ---- where the ranks are ------------------------------------------------------ */

typedef struct ident {
    cs_job_node_t node;
    int bad; /* this rank could not say (groups file) */
} ident_t;

/* Groups file: line r names rank r's node (blank lines, # comments skipped). */
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

static void whoami(cs_job_t *j, const char *groups, ident_t *me, cs_err_t *why)
{
    memset(me, 0, sizeof(*me));
    char host[64] = "";
    gethostname(host, sizeof(host) - 1);
    if (groups) {
        int g = read_group(groups, j->rank, me->node.name, sizeof(me->node.name));
        if (g) {
            cs_err_set(why, CS_ERR_INVAL, "--groups %s: %s", groups,
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

int cs_job_find_nodes(cs_job_t *j, const char *groups)
{
    if (j->node_of || j->nodes)
        return cs_err_set(&j->err, CS_ERR_INVAL, "cs_job_find_nodes: the nodes are found already");
    int N = j->nranks;
    ident_t me, *all = calloc((size_t)N, sizeof(ident_t));
    j->node_of = calloc((size_t)N, sizeof(int));
    j->first = calloc((size_t)N, sizeof(int));
    j->count = calloc((size_t)N, sizeof(int));
    j->nodes = calloc((size_t)N, sizeof(cs_job_node_t));
    if (!all || !j->node_of || !j->first || !j->count || !j->nodes) {
        free(all);
        return cs_err_set(&j->err, CS_ERR_NOMEM, "out of memory");
    }
    cs_err_t why;
    cs_err_clear(&why);
    whoami(j, groups, &me, &why);
    int st = cs_boot_allgather(j->boot, &me, sizeof(me), all, &j->err);
    if (st == CS_OK)
        st = cs_job_machine_ranks(j->boot, &j->machine_ranks, NULL, &j->err);
    if (st != CS_OK) {
        free(all);
        return st;
    }
    int bad = 0;
    for (int r = 0; r < N; r++) {
        bad |= all[r].bad;
        int h = 0;
        while (h < j->nnodes && !(strcmp(j->nodes[h].name, all[r].node.name) == 0 &&
                                  j->nodes[h].netns == all[r].node.netns))
            h++;
        if (h == j->nnodes)
            j->nodes[j->nnodes] = all[r].node, j->first[j->nnodes++] = r;
        j->node_of[r] = h;
        j->count[h]++;
    }
    free(all);
    if (bad) { /* the rank at fault says why */
        if (why.code != CS_OK)
            j->err = why;
        return CS_ERR_INVAL;
    }
    /* names told apart (namespaces of one machine share the hostname) */
    for (int h = 0; h < j->nnodes; h++)
        for (int g = 0; g < j->nnodes; g++)
            if (g != h && !strcmp(j->nodes[g].name, j->nodes[h].name) &&
                !strchr(j->nodes[h].name, '#')) {
                char nm[64];
                snprintf(nm, sizeof(nm), "%.50s#%d", j->nodes[h].name, h + 1);
                memcpy(j->nodes[h].name, nm, sizeof(nm));
                break;
            }
    j->oversubscribed = cs_job_oversubscribed(j->cfg.name, j->cfg.wait, j->machine_ranks);
    return CS_OK;
}

/* ---- agreement and transport ---------------------------------------------------- */

int cs_job_agree_boot(cs_boot_t *b, int code, int *worst, int *rank0, cs_err_t *err)
{
    int n = cs_boot_size(b);
    int *all = calloc((size_t)n, sizeof(int));
    *worst = code;
    if (!all)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    int st = cs_boot_allgather(b, &code, sizeof(code), all, err);
    for (int r = 0; r < n && st == CS_OK; r++)
        *worst = all[r] > *worst ? all[r] : *worst;
    if (rank0)
        *rank0 = st == CS_OK ? all[0] : code;
    free(all);
    return st;
}

int cs_job_agree(cs_job_t *j, int code, int *worst, int *rank0)
{
    return cs_job_agree_boot(j->boot, code, worst, rank0, &j->err);
}

int cs_job_connect(cs_job_t *j)
{
    cs_tp_config_t tc = {j->rank, j->nranks, j->cfg.provider, j->cfg.iface, 0, j->cfg.timeout};
    int st = cs_tp_open(j->cfg.transport, &tc, &j->tp, &j->err);
    return cs_boot_connect(j->boot, st == CS_OK ? j->tp : NULL, st, &j->err);
}

void cs_job_close(cs_job_t *j)
{
    cs_tp_close(j->tp);
    j->tp = NULL;
    cs_boot_close(j->boot);
    j->boot = NULL;
    free(j->node_of);
    free(j->first);
    free(j->count);
    free(j->nodes);
    j->node_of = j->first = j->count = NULL;
    j->nodes = NULL;
}

void cs_job_dims(const cs_job_t *j, int dims[2], int *ndims)
{
    int per = j->nnodes > 0 ? j->nranks / j->nnodes : 0;
    int ok = j->nnodes > 1 && per > 1 && per * j->nnodes == j->nranks;
    for (int r = 0; r < j->nranks && ok; r++)
        ok = j->node_of[r] == r / per;
    dims[0] = per, dims[1] = j->nnodes;
    *ndims = ok ? 2 : 0;
}
