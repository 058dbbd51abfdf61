/*
 * cs_tuning.c - tuning tables (cs_tuning.h): build, write, read, pick.
 */
#define _GNU_SOURCE
#include "cs_tuning.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cs_grow.h"

#define TUNING_MAGIC "collstep-tuning"
#define TUNING_VERSION 1

typedef struct tmap {
    char *name;
    char **hosts;
    int n;
} tmap_t;

struct cs_tuning {
    char *platform;
    int ranks;
    char *model; /* the model the plan predicted under ("nccl-2.29.7"), NULL: not said */
    tmap_t *maps;
    int nmaps;
    size_t cap_maps;
    cs_tuning_entry_t *e;
    int *emap; /* map index of each entry, -1 for none */
    int n;
    size_t cap_e, cap_emap;
};

static int has_blank(const char *s)
{
    for (; *s; s++)
        if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '#')
            return 1;
    return 0;
}

static void map_free(tmap_t *m)
{
    for (int i = 0; i < m->n; i++)
        free(m->hosts[i]);
    free(m->hosts);
    free(m->name);
}

void cs_tuning_free(cs_tuning_t *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->nmaps; i++)
        map_free(&t->maps[i]);
    free(t->maps);
    for (int i = 0; i < t->n; i++) {
        free((char *)t->e[i].algo);
        free((char *)t->e[i].params);
    }
    free(t->e);
    free(t->emap);
    free(t->platform);
    free(t->model);
    free(t);
}

cs_tuning_t *cs_tuning_new(const char *platform, int ranks, cs_err_t *err)
{
    if (!platform || !*platform || has_blank(platform)) {
        cs_err_set(err, CS_ERR_INVAL, "tuning table: the platform spec '%s' is empty or holds "
                   "blanks", platform ? platform : "");
        return NULL;
    }
    if (ranks < 1) {
        cs_err_set(err, CS_ERR_INVAL, "tuning table: %d ranks", ranks);
        return NULL;
    }
    cs_tuning_t *t = calloc(1, sizeof(*t));
    if (!t || !(t->platform = strdup(platform))) {
        free(t);
        cs_err_set(err, CS_ERR_NOMEM, "tuning table: out of memory");
        return NULL;
    }
    t->ranks = ranks;
    return t;
}

const char *cs_tuning_platform(const cs_tuning_t *t) { return t->platform; }
const char *cs_tuning_model(const cs_tuning_t *t) { return t->model; }

int cs_tuning_set_model(cs_tuning_t *t, const char *model, cs_err_t *err)
{
    if (!model || !*model || has_blank(model))
        return cs_err_set(err, CS_ERR_INVAL, "tuning table: the model name '%s' is empty or "
                          "holds blanks", model ? model : "");
    char *m = strdup(model);
    if (!m)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    free(t->model);
    t->model = m;
    return CS_OK;
}
int cs_tuning_ranks(const cs_tuning_t *t) { return t->ranks; }
int cs_tuning_count(const cs_tuning_t *t) { return t->n; }
const cs_tuning_entry_t *cs_tuning_entry_at(const cs_tuning_t *t, int i)
{
    return i >= 0 && i < t->n ? &t->e[i] : NULL;
}

/* Index of a map equal to hosts[0..n), or a new one named "mK"; -1 on lack
 * of memory. */
static int map_intern(cs_tuning_t *t, char *const *hosts, int n, const char *name)
{
    if (!name) {
        for (int i = 0; i < t->nmaps; i++) {
            if (t->maps[i].n != n)
                continue;
            int k = 0;
            while (k < n && strcmp(t->maps[i].hosts[k], hosts[k]) == 0)
                k++;
            if (k == n)
                return i;
        }
    }
    if (cs_grow(&t->maps, &t->cap_maps, (size_t)t->nmaps + 1, sizeof(*t->maps), 4))
        return -1;
    tmap_t *m = &t->maps[t->nmaps];
    memset(m, 0, sizeof(*m));
    char nbuf[32];
    if (!name) {
        snprintf(nbuf, sizeof(nbuf), "m%d", t->nmaps);
        name = nbuf;
    }
    m->name = strdup(name);
    m->hosts = calloc((size_t)(n > 0 ? n : 1), sizeof(char *));
    if (!m->name || !m->hosts) {
        map_free(m);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (hosts && !(m->hosts[i] = strdup(hosts[i]))) {
            m->n = i;
            map_free(m);
            return -1;
        }
    }
    m->n = hosts ? n : 0;
    return t->nmaps++;
}

static int overlap_check(const cs_tuning_t *t, cs_coll_t coll, uint64_t lo, uint64_t hi,
                         cs_err_t *err)
{
    for (int i = 0; i < t->n; i++) {
        const cs_tuning_entry_t *o = &t->e[i];
        if (o->coll == coll && lo <= o->max_bytes && o->min_bytes <= hi)
            return cs_err_set(err, CS_ERR_INVAL,
                              "%s range %" PRIu64 "..%" PRIu64 " overlaps %" PRIu64 "..%" PRIu64,
                              cs_coll_name(coll), lo, hi, o->min_bytes, o->max_bytes);
    }
    return CS_OK;
}

static int add_entry(cs_tuning_t *t, cs_coll_t coll, uint64_t lo, uint64_t hi, const char *algo,
                     const char *params, int mi, double us, cs_err_t *err)
{
    if (cs_grow(&t->e, &t->cap_e, (size_t)t->n + 1, sizeof(*t->e), 8) ||
        cs_grow(&t->emap, &t->cap_emap, (size_t)t->n + 1, sizeof(*t->emap), 8))
        return cs_err_set(err, CS_ERR_NOMEM, "tuning table: out of memory");
    cs_tuning_entry_t *e = &t->e[t->n];
    memset(e, 0, sizeof(*e));
    e->coll = coll;
    e->min_bytes = lo;
    e->max_bytes = hi;
    e->algo = strdup(algo);
    e->params = strdup(params ? params : "");
    if (!e->algo || !e->params) {
        free((char *)e->algo);
        free((char *)e->params);
        return cs_err_set(err, CS_ERR_NOMEM, "tuning table: out of memory");
    }
    e->predicted_us = us;
    t->emap[t->n] = mi;
    t->n++;
    /* maps may have moved (realloc): re-point every entry */
    for (int i = 0; i < t->n; i++) {
        t->e[i].map = t->emap[i] >= 0 ? t->maps[t->emap[i]].hosts : NULL;
        t->e[i].nmap = t->emap[i] >= 0 ? t->maps[t->emap[i]].n : 0;
    }
    return CS_OK;
}

int cs_tuning_add(cs_tuning_t *t, cs_coll_t coll, uint64_t min_bytes, uint64_t max_bytes,
                  const char *algo, const char *params, char *const *map, int nmap,
                  double predicted_us, cs_err_t *err)
{
    if ((int)coll < 0 || coll >= CS_COLL_COUNT)
        return cs_err_set(err, CS_ERR_INVAL, "tuning table: unknown collective %d", (int)coll);
    if (!algo || !*algo || has_blank(algo))
        return cs_err_set(err, CS_ERR_INVAL, "tuning table: algorithm name '%s' is empty or "
                          "holds blanks", algo ? algo : "");
    if (params && (has_blank(params) || strcmp(params, "-") == 0))
        return cs_err_set(err, CS_ERR_INVAL, "tuning table: parameters '%s' hold blanks", params);
    if (min_bytes > max_bytes)
        return cs_err_set(err, CS_ERR_INVAL, "tuning table: empty range %" PRIu64 "..%" PRIu64,
                          min_bytes, max_bytes);
    int rc = overlap_check(t, coll, min_bytes, max_bytes, err);
    if (rc)
        return rc;
    int mi = -1;
    if (map) {
        if (nmap != t->ranks)
            return cs_err_set(err, CS_ERR_INVAL, "tuning table: a map of %d hosts for %d ranks",
                              nmap, t->ranks);
        for (int i = 0; i < nmap; i++)
            if (!map[i] || !*map[i] || has_blank(map[i]))
                return cs_err_set(err, CS_ERR_INVAL, "tuning table: host name '%s' of rank %d "
                                  "is empty or holds blanks", map[i] ? map[i] : "", i);
        if ((mi = map_intern(t, map, nmap, NULL)) < 0)
            return cs_err_set(err, CS_ERR_NOMEM, "tuning table: out of memory");
    }
    return add_entry(t, coll, min_bytes, max_bytes, algo, params, mi, predicted_us, err);
}

int cs_tuning_write(const cs_tuning_t *t, FILE *f, cs_err_t *err)
{
    fprintf(f, "%s %d\n", TUNING_MAGIC, TUNING_VERSION);
    fprintf(f, "# written by collstep %s plan; read by --algo auto --tuning FILE\n", CS_VERSION);
    fprintf(f, "platform %s\nranks %d\n", t->platform, t->ranks);
    if (t->model)
        fprintf(f, "model %s\n", t->model);
    for (int i = 0; i < t->nmaps; i++) {
        int used = 0;
        for (int k = 0; k < t->n; k++)
            used |= t->emap[k] == i;
        if (!used)
            continue;
        fprintf(f, "map %s %d\n", t->maps[i].name, t->maps[i].n);
        for (int k = 0; k < t->maps[i].n; k++)
            fprintf(f, "%s\n", t->maps[i].hosts[k]);
    }
    fprintf(f, "# entry COLL MIN_BYTES MAX_BYTES ALGO PARAMS MAP PREDICTED_US\n");
    for (int i = 0; i < t->n; i++) {
        const cs_tuning_entry_t *e = &t->e[i];
        fprintf(f, "entry %s %" PRIu64 " %" PRIu64 " %s %s %s %.6g\n", cs_coll_name(e->coll),
                e->min_bytes, e->max_bytes, e->algo, e->params[0] ? e->params : "-",
                t->emap[i] >= 0 ? t->maps[t->emap[i]].name : "-", e->predicted_us);
    }
    if (fflush(f) != 0 || ferror(f))
        return cs_err_set(err, CS_ERR_IO, "tuning table: write failed: %s", strerror(errno));
    return CS_OK;
}

int cs_tuning_recognize(const char *head, size_t n)
{
    size_t l = strlen(TUNING_MAGIC);
    return n > l && memcmp(head, TUNING_MAGIC, l) == 0 && head[l] == ' ';
}

/* ---- reading ------------------------------------------------------------ */

typedef struct rd {
    const char *path;
    char *line; /* current line */
    long lineno;
    char *p;    /* cursor */
    cs_err_t *err;
} rd_t;

static int col(const rd_t *r) { return (int)(r->p - r->line) + 1; }

static int perr(rd_t *r, const char *fmt, const char *found)
{
    char what[256];
    snprintf(what, sizeof(what), "%s", fmt);
    return cs_err_set(r->err, CS_ERR_PARSE, "%s:%ld:%d: expected %s, found '%.40s'", r->path,
                      r->lineno, col(r), what, found);
}

/* Next blank-separated token (NUL-terminated in place) or NULL at line end. */
static char *tok(rd_t *r)
{
    while (*r->p == ' ' || *r->p == '\t')
        r->p++;
    if (!*r->p)
        return NULL;
    char *s = r->p;
    while (*r->p && *r->p != ' ' && *r->p != '\t')
        r->p++;
    if (*r->p)
        *r->p++ = 0;
    return s;
}

/* Like tok, but `r->p` is left at the token's start for an error column. */
static char *need(rd_t *r, const char *what)
{
    while (*r->p == ' ' || *r->p == '\t')
        r->p++;
    if (!*r->p) {
        perr(r, what, "end of line");
        return NULL;
    }
    return tok(r);
}

static int num_u64(rd_t *r, char *s, uint64_t *out, const char *what)
{
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9')
        goto bad;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        goto bad;
    *out = (uint64_t)v;
    return CS_OK;
bad:
    r->p = s;
    return perr(r, what, s);
}

static int end_of_line(rd_t *r)
{
    while (*r->p == ' ' || *r->p == '\t')
        r->p++;
    if (*r->p)
        return perr(r, "the end of the line", r->p);
    return CS_OK;
}

static int find_map(const cs_tuning_t *t, const char *name)
{
    for (int i = 0; i < t->nmaps; i++)
        if (strcmp(t->maps[i].name, name) == 0)
            return i;
    return -1;
}

int cs_tuning_load(const char *path, cs_tuning_t **out, cs_err_t *err)
{
    *out = NULL;
    FILE *f = fopen(path, "r");
    if (!f)
        return cs_err_set(err, CS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    cs_tuning_t *t = calloc(1, sizeof(*t));
    if (!t) {
        fclose(f);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    }
    rd_t r = {.path = path, .err = err};
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = CS_OK, state = 0; /* 0: magic, 1: platform, 2: ranks, 3: body */
    int cur_map = -1, map_left = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        r.lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if ((size_t)len != strlen(line)) {
            r.line = r.p = line;
            rc = perr(&r, "text", "a NUL byte");
            break;
        }
        r.line = r.p = line;
        while (*r.p == ' ' || *r.p == '\t')
            r.p++;
        if (map_left > 0) {
            char *h = need(&r, "a host name");
            if (!h || *h == '#') {
                if (h) {
                    r.p = h;
                    rc = perr(&r, "a host name", h);
                } else
                    rc = CS_ERR_PARSE;
                break;
            }
            tmap_t *m = &t->maps[cur_map];
            if (!(m->hosts[m->n] = strdup(h))) {
                rc = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
                break;
            }
            m->n++;
            map_left--;
            if ((rc = end_of_line(&r)))
                break;
            continue;
        }
        if (!*r.p || *r.p == '#')
            continue;
        char *kw = tok(&r);
        char *kwp = kw;
        if (state == 0) {
            if (strcmp(kw, TUNING_MAGIC) != 0) {
                r.p = kw;
                rc = perr(&r, "'" TUNING_MAGIC " 1' (a table written by collstep plan -o)", kw);
                break;
            }
            char *v = need(&r, "the format version 1");
            if (!v) {
                rc = CS_ERR_PARSE;
                break;
            }
            if (strcmp(v, "1") != 0) {
                r.p = v;
                rc = perr(&r, "the format version 1", v);
                break;
            }
            if ((rc = end_of_line(&r)))
                break;
            state = 1;
        } else if (state == 1) {
            if (strcmp(kw, "platform") != 0) {
                r.p = kw;
                rc = perr(&r, "'platform SPEC'", kw);
                break;
            }
            char *v = need(&r, "a platform spec");
            if (!v || !(t->platform = strdup(v))) {
                rc = v ? cs_err_set(err, CS_ERR_NOMEM, "out of memory") : CS_ERR_PARSE;
                break;
            }
            if ((rc = end_of_line(&r)))
                break;
            state = 2;
        } else if (state == 2) {
            uint64_t v = 0;
            char *s;
            if (strcmp(kw, "ranks") != 0) {
                r.p = kw;
                rc = perr(&r, "'ranks P'", kw);
                break;
            }
            if (!(s = need(&r, "a rank count")) ||
                (rc = num_u64(&r, s, &v, "a rank count from 1 to 1048576")) != CS_OK) {
                rc = rc ? rc : CS_ERR_PARSE;
                break;
            }
            if (v < 1 || v > (1u << 20)) {
                r.p = s;
                rc = perr(&r, "a rank count from 1 to 1048576", s);
                break;
            }
            t->ranks = (int)v;
            if ((rc = end_of_line(&r)))
                break;
            state = 3;
        } else if (strcmp(kw, "model") == 0) {
            char *v = need(&r, "a model name");
            if (!v) {
                rc = CS_ERR_PARSE;
                break;
            }
            if (t->model) {
                r.p = kw;
                rc = perr(&r, "one 'model' line (this is a second)", "model");
                break;
            }
            if (!(t->model = strdup(v))) {
                rc = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
                break;
            }
            if ((rc = end_of_line(&r)))
                break;
        } else if (strcmp(kw, "map") == 0) {
            char *name = need(&r, "a map name");
            if (!name) {
                rc = CS_ERR_PARSE;
                break;
            }
            if (strcmp(name, "-") == 0 || find_map(t, name) >= 0) {
                r.p = name;
                rc = perr(&r, "a new map name", name);
                break;
            }
            char *s = need(&r, "the number of hosts");
            uint64_t n = 0;
            if (!s || (rc = num_u64(&r, s, &n, "the number of hosts")) != CS_OK) {
                rc = rc ? rc : CS_ERR_PARSE;
                break;
            }
            if (n != (uint64_t)t->ranks) {
                r.p = s;
                char what[64];
                snprintf(what, sizeof(what), "%d hosts (the table's ranks)", t->ranks);
                rc = perr(&r, what, s);
                break;
            }
            if ((rc = end_of_line(&r)))
                break;
            if ((cur_map = map_intern(t, NULL, t->ranks, name)) < 0) {
                rc = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
                break;
            }
            map_left = t->ranks;
        } else if (strcmp(kw, "entry") == 0) {
            char *cs = need(&r, "a collective");
            if (!cs) {
                rc = CS_ERR_PARSE;
                break;
            }
            cs_coll_t coll = cs_coll_parse(cs);
            if (coll == CS_COLL_COUNT) {
                r.p = cs;
                rc = perr(&r, "a collective (allreduce, reduce-scatter, ...)", cs);
                break;
            }
            uint64_t lo = 0, hi = 0;
            char *s1 = need(&r, "the first byte count of the range");
            if (!s1 || (rc = num_u64(&r, s1, &lo, "a byte count")) != CS_OK) {
                rc = rc ? rc : CS_ERR_PARSE;
                break;
            }
            char *s2 = need(&r, "the last byte count of the range");
            if (!s2 || (rc = num_u64(&r, s2, &hi, "a byte count")) != CS_OK) {
                rc = rc ? rc : CS_ERR_PARSE;
                break;
            }
            if (hi < lo) {
                r.p = s2;
                rc = perr(&r, "a last byte count >= the first", s2);
                break;
            }
            char *algo = need(&r, "an algorithm name");
            char *params = algo ? need(&r, "parameters ('-' for none)") : NULL;
            char *mname = params ? need(&r, "a map name ('-' for the default order)") : NULL;
            char *us = mname ? need(&r, "the predicted time in microseconds") : NULL;
            if (!us) {
                rc = CS_ERR_PARSE;
                break;
            }
            char *end;
            double pus = strtod(us, &end);
            if (*end || end == us || !(pus >= 0)) {
                r.p = us;
                rc = perr(&r, "a time in microseconds", us);
                break;
            }
            int mi = -1;
            if (strcmp(mname, "-") != 0 && (mi = find_map(t, mname)) < 0) {
                r.p = mname;
                rc = perr(&r, "the name of a map defined above", mname);
                break;
            }
            if ((rc = end_of_line(&r)))
                break;
            cs_err_t e2;
            cs_err_clear(&e2);
            if (overlap_check(t, coll, lo, hi, &e2)) {
                r.p = s1;
                rc = cs_err_set(err, CS_ERR_PARSE, "%s:%ld:%d: expected a range no other entry "
                                "serves: %s", path, r.lineno, col(&r), e2.msg);
                break;
            }
            if ((rc = add_entry(t, coll, lo, hi, algo,
                                strcmp(params, "-") == 0 ? "" : params, mi, pus, err)))
                break;
        } else {
            r.p = kwp;
            rc = perr(&r, "'model', 'map' or 'entry'", kw);
            break;
        }
    }
    if (rc == CS_OK && ferror(f))
        rc = cs_err_set(err, CS_ERR_IO, "%s: read error: %s", path, strerror(errno));
    if (rc == CS_OK && map_left > 0)
        rc = cs_err_set(err, CS_ERR_PARSE, "%s:%ld:1: expected %d more host line%s of map %s, "
                        "found the end of the file", path, r.lineno + 1, map_left,
                        map_left == 1 ? "" : "s", t->maps[cur_map].name);
    if (rc == CS_OK && state < 3)
        rc = cs_err_set(err, CS_ERR_PARSE, "%s:%ld:1: expected %s, found the end of the file",
                        path, r.lineno + 1,
                        state == 0 ? "'" TUNING_MAGIC " 1'"
                                   : state == 1 ? "'platform SPEC'" : "'ranks P'");
    if (rc == CS_OK && t->n == 0)
        rc = cs_err_set(err, CS_ERR_PARSE, "%s:%ld:1: expected at least one 'entry' line, "
                        "found the end of the file", path, r.lineno + 1);
    free(line);
    fclose(f);
    if (rc != CS_OK) {
        cs_tuning_free(t);
        return rc;
    }
    *out = t;
    return CS_OK;
}

int cs_tuning_check(const cs_tuning_t *t, const char *platform, int ranks, cs_err_t *err)
{
    if (platform && strcmp(platform, t->platform) != 0)
        return cs_err_set(err, CS_ERR_MISMATCH,
                          "the tuning table was planned for platform %s (%d ranks), not %s",
                          t->platform, t->ranks, platform);
    if (ranks != t->ranks)
        return cs_err_set(err, CS_ERR_MISMATCH,
                          "the tuning table was planned for %d ranks on %s, not %d ranks",
                          t->ranks, t->platform, ranks);
    return CS_OK;
}

int cs_tuning_pick(const cs_tuning_t *t, cs_coll_t coll, uint64_t bytes,
                   const cs_tuning_entry_t **out, cs_err_t *err)
{
    *out = NULL;
    for (int i = 0; i < t->n; i++)
        if (t->e[i].coll == coll && bytes >= t->e[i].min_bytes && bytes <= t->e[i].max_bytes) {
            *out = &t->e[i];
            return CS_OK;
        }
    char ranges[300] = "";
    size_t l = 0;
    int k = 0;
    for (int i = 0; i < t->n && l < sizeof(ranges) - 40; i++) {
        if (t->e[i].coll != coll)
            continue;
        l += (size_t)snprintf(ranges + l, sizeof(ranges) - l, "%s%" PRIu64 "..%" PRIu64,
                              k++ ? ", " : "", t->e[i].min_bytes, t->e[i].max_bytes);
    }
    if (k == 0)
        return cs_err_set(err, CS_ERR_NOTFOUND, "the tuning table for %s has no %s entry",
                          t->platform, cs_coll_name(coll));
    return cs_err_set(err, CS_ERR_NOTFOUND,
                      "the tuning table for %s has no %s entry serving %" PRIu64
                      " bytes (its ranges: %s)", t->platform, cs_coll_name(coll), bytes, ranges);
}
