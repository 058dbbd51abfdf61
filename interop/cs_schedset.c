/*
 * cs_schedset.c - schedules per size range, picked as MSCCL picks its XML
 * files (see cs_schedset.h).
 */
#include "cs_schedset.h"

#include "cs_grow.h"
#include "cs_msccl.h"
#include "cs_text.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static int add_file(cs_schedset_t *set, size_t *cap, const char *path, cs_err_t *err)
{
    cs_schedset_entry_t e;
    memset(&e, 0, sizeof(e));
    snprintf(e.path, sizeof(e.path), "%s", path);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return cs_err_set(err, CS_ERR_IO, "%s: %s", path, strerror(errno));
    char head[256];
    size_t n = fread(head, 1, sizeof(head), f);
    fclose(f);
    if (cs_msccl_detect(head, n)) {
        cs_msccl_t *m = NULL;
        int st = cs_msccl_load(path, NULL, &m, err);
        if (st != CS_OK)
            return st;
        e.min_bytes = (uint64_t)m->info.min_bytes;
        e.max_bytes = (uint64_t)m->info.max_bytes;
        e.nchunksperloop = (uint32_t)m->info.nchunksperloop;
        e.inplace = m->info.inplace;
        e.outofplace = m->info.outofplace;
        e.is_xml = 1;
        e.sched = cs_msccl_release(m);
    } else {
        e.sched = cs_sched_load(path, err);
        if (e.sched == NULL)
            return err ? err->code : CS_ERR_PARSE;
        e.inplace = e.outofplace = 1;
    }
    if (set->n == 0) {
        set->coll = e.sched->desc.coll;
        set->nranks = e.sched->desc.nranks;
    } else if (e.sched->desc.coll != set->coll || e.sched->desc.nranks != set->nranks) {
        int rc = cs_err_set(err, CS_ERR_MISMATCH,
                            "%s: %s on %d ranks, but %s is %s on %d ranks: a set serves one "
                            "collective on one rank count",
                            path, cs_coll_name(e.sched->desc.coll), e.sched->desc.nranks,
                            set->v[0].path, cs_coll_name(set->coll), set->nranks);
        cs_msccl_forget(e.sched);
        cs_sched_destroy(e.sched);
        return rc;
    }
    if (cs_grow(&set->v, cap, (size_t)set->n + 1, sizeof(*set->v), 8)) {
        cs_msccl_forget(e.sched);
        cs_sched_destroy(e.sched);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    }
    set->v[set->n++] = e;
    return CS_OK;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_dir(cs_schedset_t *set, size_t *cap, const char *dir, cs_err_t *err)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return cs_err_set(err, CS_ERR_IO, "%s: %s", dir, strerror(errno));
    char **names = NULL;
    int n = 0, rc = CS_OK;
    size_t ncap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && rc == CS_OK) {
        if (de->d_name[0] == '.' ||
            !(ends_with(de->d_name, ".xml") || ends_with(de->d_name, ".sched")))
            continue;
        if (cs_grow(&names, &ncap, (size_t)n + 1, sizeof(*names), 16)) {
            rc = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
            break;
        }
        if ((names[n] = strdup(de->d_name)) == NULL)
            rc = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
        else
            n++;
    }
    closedir(d);
    if (rc == CS_OK && n == 0)
        rc = cs_err_set(err, CS_ERR_NOTFOUND, "%s: no .xml or .sched file in the folder", dir);
    if (rc == CS_OK)
        qsort(names, (size_t)n, sizeof(*names), by_name);
    for (int i = 0; i < n && rc == CS_OK; i++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        rc = add_file(set, cap, path, err);
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

/* 1 when entry a serves every call that b serves: a's range covers b's,
 * a's chunk count divides every element count b's does (b's is a multiple
 * of a's), and a serves in-place and out-of-place calls where b does (an
 * MSCCL folder may hold one file of each); a collstep schedule (.sched)
 * serves every call. */
static int covers(const cs_schedset_entry_t *a, const cs_schedset_entry_t *b)
{
    if (!a->is_xml)
        return 1;
    if ((b->inplace && !a->inplace) || (b->outofplace && !a->outofplace))
        return 0;
    if (!b->is_xml)
        return a->min_bytes == 0 && a->max_bytes == 0 && a->nchunksperloop <= 1;
    int range = a->min_bytes <= b->min_bytes &&
                (a->max_bytes == 0 || (b->max_bytes != 0 && b->max_bytes <= a->max_bytes));
    return range && a->nchunksperloop && b->nchunksperloop % a->nchunksperloop == 0;
}

/* A file that an earlier one shadows entirely would never serve a size:
 * refused, naming both (see cs_schedset.h). */
static int check_shadows(const cs_schedset_t *set, cs_err_t *err)
{
    for (int j = 1; j < set->n; j++)
        for (int i = 0; i < j; i++) {
            const cs_schedset_entry_t *a = &set->v[i], *b = &set->v[j];
            if (!covers(a, b))
                continue;
            char ra[96], rb[96];
            cs_schedset_range_str(a, ra, sizeof(ra));
            cs_schedset_range_str(b, rb, sizeof(rb));
            return cs_err_set(err, CS_ERR_MISMATCH,
                              "%s (%s) would never be used: %s (%s), earlier in the load order, "
                              "serves every size it serves, and a set picks per size the first "
                              "file that serves it, as MSCCL does; give the files one at a time "
                              "to compare them, or narrow their minBytes / maxBytes",
                              b->path, rb, a->path, ra);
        }
    return CS_OK;
}

int cs_schedset_load(const char *const *paths, int npaths, cs_schedset_t **out, cs_err_t *err)
{
    cs_schedset_t *set = calloc(1, sizeof(*set));
    if (set == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    size_t cap = 0;
    int rc = CS_OK;
    if (npaths < 1)
        rc = cs_err_set(err, CS_ERR_INVAL, "a schedule set needs at least one file or folder");
    for (int i = 0; i < npaths && rc == CS_OK; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0)
            rc = cs_err_set(err, CS_ERR_IO, "%s: %s", paths[i], strerror(errno));
        else if (S_ISDIR(st.st_mode))
            rc = add_dir(set, &cap, paths[i], err);
        else
            rc = add_file(set, &cap, paths[i], err);
    }
    if (rc == CS_OK)
        rc = check_shadows(set, err);
    if (rc != CS_OK) {
        cs_schedset_destroy(set);
        return rc;
    }
    *out = set;
    return CS_OK;
}

void cs_schedset_range_str(const cs_schedset_entry_t *e, char *buf, size_t len)
{
    if (!e->is_xml)
        snprintf(buf, len, "every size");
    else if (e->max_bytes == 0)
        snprintf(buf, len, "%" PRIu64 " bytes and more", e->min_bytes);
    else
        snprintf(buf, len, "%" PRIu64 " to %" PRIu64 " bytes", e->min_bytes, e->max_bytes);
}

/* Whether entry e serves a call of `bytes` bytes of `elem_size`-byte
 * elements (MSCCL's test, cs_schedset.h). */
static int serves(const cs_schedset_entry_t *e, uint64_t bytes, size_t elem_size)
{
    if (!e->is_xml)
        return 1;
    int in_range = bytes >= e->min_bytes && (e->max_bytes == 0 || bytes <= e->max_bytes);
    /* MSCCL serves no empty call; collstep runs one on the file whose
     * range starts at 0 */
    int divides = bytes == 0 || (bytes % elem_size == 0 &&
                                 (bytes / elem_size) % e->nchunksperloop == 0);
    return in_range && divides;
}

const cs_schedset_entry_t *cs_schedset_also(const cs_schedset_t *set,
                                            const cs_schedset_entry_t *e, uint64_t bytes,
                                            size_t elem_size)
{
    for (int i = (int)(e - set->v) + 1; i < set->n; i++)
        if (serves(&set->v[i], bytes, elem_size ? elem_size : 1))
            return &set->v[i];
    return NULL;
}

const cs_schedset_entry_t *cs_schedset_lookup(const cs_schedset_t *set, uint64_t bytes,
                                              size_t elem_size, cs_err_t *err)
{
    if (elem_size == 0)
        elem_size = 1;
    uint64_t elems = bytes / elem_size;
    for (int i = 0; i < set->n; i++)
        if (serves(&set->v[i], bytes, elem_size))
            return &set->v[i];
    char msg[CS_ERR_MSG_MAX];
    size_t o = 0;
    o += (size_t)snprintf(msg, sizeof(msg), "no file of the set serves %" PRIu64 " bytes:", bytes);
    for (int i = 0; i < set->n && o < sizeof(msg); i++) {
        const cs_schedset_entry_t *e = &set->v[i];
        const char *base = strrchr(e->path, '/');
        base = base ? base + 1 : e->path;
        char range[96];
        cs_schedset_range_str(e, range, sizeof(range));
        int in_range = bytes >= e->min_bytes && (e->max_bytes == 0 || bytes <= e->max_bytes);
        if (in_range)
            o += (size_t)snprintf(msg + o, sizeof(msg) - o,
                                  " %s (%s: %" PRIu64 " elements of %zu bytes are not a multiple "
                                  "of its nchunksperloop %u; MSCCL would fall back to NCCL)%s",
                                  base, range, elems, elem_size, e->nchunksperloop,
                                  i + 1 < set->n ? ";" : "");
        else
            o += (size_t)snprintf(msg + o, sizeof(msg) - o, " %s (%s)%s", base, range,
                                  i + 1 < set->n ? ";" : "");
    }
    cs_err_set(err, CS_ERR_NOTFOUND, "%s", msg);
    return NULL;
}

void cs_schedset_destroy(cs_schedset_t *set)
{
    if (set == NULL)
        return;
    for (int i = 0; i < set->n; i++) {
        cs_msccl_forget(set->v[i].sched);
        cs_sched_destroy(set->v[i].sched);
    }
    free(set->v);
    free(set);
}

int cs_schedset_load_list(const char *list, cs_schedset_t **out, cs_err_t *err)
{
    char buf[2048], *save = NULL;
    const char *paths[64];
    int np = 0;
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *t = strtok_r(buf, ",", &save); t && np < 64; t = strtok_r(NULL, ",", &save))
        paths[np++] = t;
    return cs_schedset_load(paths, np, out, err);
}
