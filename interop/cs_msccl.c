/*
 * cs_msccl.c - loading MSCCL files, the import record, and the origin
 * tables of schedules handed to the command line (cs_msccl_origin_of).
 * The XML itself is read by cs_msccl_read.c.
 */
#include "cs_msccl.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_file.h"
#include "cs_grow.h"
#include "cs_text.h"

static char *slurp(const char *path, size_t *len, cs_err_t *err)
{
    char *b;
    /* 2 GiB: the XML reader takes an int length */
    if (cs_file_read(path, (size_t)INT_MAX, &b, len) == 0)
        return b;
    if (errno == ENOMEM || errno == EFBIG)
        cs_err_set(err, CS_ERR_NOMEM, "%s: out of memory (or larger than 2 GiB)", path);
    else
        cs_err_set(err, CS_ERR_IO, "%s: %s", path, errno == EIO ? "read error" : strerror(errno));
    return NULL;
}

int cs_msccl_load(const char *path, const cs_msccl_opts_t *opts, cs_msccl_t **out, cs_err_t *err)
{
    size_t len = 0;
    char *b = slurp(path, &len, err);
    if (b == NULL)
        return err ? err->code : CS_ERR_IO;
    int rc = cs_msccl_parse(b, len, path, opts, out, err);
    free(b);
    return rc;
}

void cs_msccl_destroy(cs_msccl_t *m)
{
    if (m == NULL)
        return;
    cs_sched_destroy(m->sched);
    for (int r = 0; m->origin && r < m->nranks; r++)
        free(m->origin[r]);
    free(m->origin);
    free(m->norigin);
    free(m);
}

int cs_msccl_origin_str(const cs_msccl_t *m, int rank, int64_t step, char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    if (m == NULL || rank < 0 || rank >= m->nranks || step < 0 || step >= m->norigin[rank])
        return -1;
    const cs_msccl_origin_t *o = &m->origin[rank][step];
    if (o->tb < 0)
        snprintf(buf, len,
                 "%s:%u: gpu %d: the input copied into the output (an in-place "
                 "algorithm serving an out-of-place call)",
                 m->path, o->line, o->gpu);
    else
        snprintf(buf, len, "%s:%u: gpu %d tb %d step %d", m->path, o->line, o->gpu, o->tb, o->step);
    return 0;
}

/* ---- origins of schedules loaded for the command line ------------------------ */

typedef struct reg_entry {
    const cs_sched_t *s;
    uint64_t digest; /* a schedule at the same address later is another one */
    cs_msccl_t *m;   /* m->sched is NULL: the schedule belongs to the caller */
} reg_entry_t;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static reg_entry_t *reg;
static int nreg;
static size_t capreg;

cs_sched_t *cs_msccl_load_sched(const char *path, cs_err_t *err)
{
    cs_msccl_t *m = NULL;
    if (cs_msccl_load(path, NULL, &m, err) != CS_OK)
        return NULL;
    return cs_msccl_release(m);
}

cs_sched_t *cs_msccl_load_any(const char *path, cs_err_t *err)
{
    if (strcmp(path, "-") != 0) {
        char head[256];
        size_t n = 0;
        FILE *f = fopen(path, "rb");
        if (f != NULL) {
            n = fread(head, 1, sizeof(head), f);
            fclose(f);
        }
        if (cs_msccl_detect(head, n))
            return cs_msccl_load_sched(path, err);
    }
    return cs_sched_load(path, err);
}

cs_sched_t *cs_msccl_release(cs_msccl_t *m)
{
    cs_sched_t *s = m->sched;
    m->sched = NULL;
    uint64_t digest = cs_sched_digest(s);
    pthread_mutex_lock(&reg_lock);
    if (cs_grow(&reg, &capreg, (size_t)nreg + 1, sizeof(*reg), 4) == CS_OK) {
        reg[nreg].s = s;
        reg[nreg].digest = digest;
        reg[nreg].m = m;
        nreg++;
        m = NULL;
    }
    pthread_mutex_unlock(&reg_lock);
    cs_msccl_destroy(m); /* only when the table could not grow: no origins */
    return s;
}

int cs_msccl_origin_of(const cs_sched_t *s, int rank, int64_t step, char *buf, size_t len)
{
    int found = 0;
    if (len)
        buf[0] = '\0';
    if (s == NULL)
        return 0;
    uint64_t digest = 0;
    int have = 0;
    pthread_mutex_lock(&reg_lock);
    for (int i = nreg - 1; i >= 0; i--)
        if (reg[i].s == s) {
            if (!have) {
                digest = cs_sched_digest(s);
                have = 1;
            }
            if (reg[i].digest == digest)
                found = cs_msccl_origin_str(reg[i].m, rank, step, buf, len) == 0;
            break;
        }
    pthread_mutex_unlock(&reg_lock);
    return found;
}

void cs_msccl_forget(const cs_sched_t *s)
{
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < nreg; i++)
        if (reg[i].s == s) {
            cs_msccl_destroy(reg[i].m);
            reg[i] = reg[--nreg];
            break;
        }
    pthread_mutex_unlock(&reg_lock);
}
