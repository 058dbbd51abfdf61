/*
 * plan_part.c - the plan's memory, its input hash, what follows the
 * simulations, and parts: a plan spread over processes (cs_planner.h).
 *
 * Memory: one shared anonymous mapping (the analysis and simulation
 * children write into it): a header, the plan, CS_PLANNER_MAX_CANDS
 * candidates, the hosts of CS_PLANNER_MAX_MAPS rank orders.
 *
 * A part's file: text lines, then the plan's bytes as this build lays
 * them out, then "end":
 *
 *   collstep-plan-part 1
 *   version VERSION
 *   abi PLAN_BYTES CAND_BYTES MAX_SIZES HOST_MAX BYTE_ORDER
 *   input HASH                  16 hex digits (cs_planner_t.input)
 *   shard I N
 *   whole 0|1                   1: every candidate and the rank orders
 *   records R
 *   data
 *   <cs_planner_t> R x (<int32 candidate> <cs_planner_cand_t>) [hosts]
 *   end
 *
 * A part that is not whole holds the candidates its shard simulated.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cs_hash.h"
#include "cs_planner_int.h"
#include "cs_platform.h"

#define PART_MAGIC "collstep-plan-part"
#define PART_VERSION 1
#define BYTE_ORDER_MARK 0x0102030405060708ULL

typedef struct mapping {
    size_t bytes;  /* of the whole mapping */
    int whole;     /* a part read: whole (every candidate) */
    cs__planner_status_t st;
    cs_planner_t plan;
} mapping_t;

static mapping_t *map_of(const cs_planner_t *p)
{
    return (mapping_t *)(uintptr_t)((const char *)p - offsetof(mapping_t, plan));
}

cs_planner_t *cs__planner_alloc(int P)
{
    size_t bytes = sizeof(mapping_t) + sizeof(cs_planner_cand_t) * CS_PLANNER_MAX_CANDS +
                   (size_t)CS_PLANNER_MAX_MAPS * (size_t)P * CS_PLANNER_HOST_MAX;
    mapping_t *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    memset(m, 0, sizeof(*m));
    m->bytes = bytes;
    cs_planner_t *p = &m->plan;
    p->ranks = P;
    p->nshards = 1;
    p->cands = (cs_planner_cand_t *)(m + 1);
    p->hosts = (char *)(p->cands + CS_PLANNER_MAX_CANDS);
    return p;
}

cs__planner_status_t *cs__planner_status(cs_planner_t *p) { return &map_of(p)->st; }

void cs_planner_free(cs_planner_t *p)
{
    if (p)
        munmap(map_of(p), map_of(p)->bytes);
}

/* ---- the input hash ------------------------------------------------------- */

static uint64_t mix_bytes(uint64_t h, const void *v, size_t n)
{
    const unsigned char *b = v;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * CS_FNV64_PRIME;
    return h;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
    return mix_bytes(h, s ? s : "", (s ? strlen(s) : 0) + 1); /* the NUL ends each */
}

static uint64_t mix_int(uint64_t h, int64_t v) { return mix_bytes(h, &v, sizeof(v)); }

uint64_t cs__planner_input(const cs_planner_opts_t *o, const cs_platform_t *plat, int P)
{
    uint64_t h = CS_FNV64_OFFSET;
    h = mix_str(h, o->platform);
    h = mix_str(h, plat->xml); /* a file's content, a preset's text */
    h = mix_int(h, P);
    h = mix_int(h, o->coll);
    h = mix_int(h, o->nsizes);
    for (int k = 0; k < o->nsizes; k++)
        h = mix_int(h, (int64_t)o->sizes[k]);
    h = mix_int(h, o->exhaustive ? 0 : o->top);
    h = mix_int(h, o->exhaustive);
    h = mix_int(h, o->candidates);
    h = mix_bytes(h, &o->budget, sizeof(o->budget));
    h = mix_int(h, o->model);
    h = mix_str(h, o->nccl_version);
    h = mix_str(h, o->nccl_algo);
    h = mix_str(h, o->nccl_proto);
    return cs_hash_mix64(h);
}

/* ---- after the simulations ------------------------------------------------ */

void cs__planner_finish(cs_planner_t *p)
{
    /* candidates that build the same schedule in the same order share the
     * results of the one simulated */
    for (int c = 0; c < p->ncands; c++) {
        cs_planner_cand_t *x = &p->cands[c];
        for (int d = 0; d < p->ncands && x->digest; d++) {
            const cs_planner_cand_t *y = &p->cands[d];
            if (d == c || y->digest != x->digest || y->map != x->map)
                continue;
            for (int k = 0; k < p->nsizes; k++)
                if (x->sim_s[k] < 0 && y->sim_s[k] >= 0)
                    x->sim_s[k] = y->sim_s[k];
        }
    }
    p->simulated = p->timed_out = 0;
    p->ncut = p->nccl_cut;
    for (int c = 0; c < p->ncands; c++) {
        const cs_planner_cand_t *x = &p->cands[c];
        p->ncut += x->cut;
        if (x->job < 0)
            continue;
        p->simulated += !x->cut && !x->err[0];
        p->timed_out += x->cut;
    }
}

/* ---- parts ----------------------------------------------------------------- */

static int owns(const cs_planner_t *p, const cs_planner_cand_t *x)
{
    return x->job >= 0 && x->job % p->nshards == p->shard;
}

int cs_planner_part_write(const cs_planner_t *p, int whole, FILE *f, cs_err_t *err)
{
    int32_t nrec = 0;
    for (int c = 0; c < p->ncands; c++)
        nrec += whole || owns(p, &p->cands[c]);
    fprintf(f, "%s %d\nversion %s\nabi %zu %zu %d %d %016" PRIx64 "\ninput %016" PRIx64
               "\nshard %d %d\nwhole %d\nrecords %d\ndata\n",
            PART_MAGIC, PART_VERSION, CS_VERSION, sizeof(cs_planner_t),
            sizeof(cs_planner_cand_t), CS_PLANNER_MAX_SIZES, CS_PLANNER_HOST_MAX,
            (uint64_t)BYTE_ORDER_MARK, p->input, p->shard, p->nshards, whole, (int)nrec);
    fwrite(p, sizeof(*p), 1, f);
    for (int32_t c = 0; c < p->ncands; c++)
        if (whole || owns(p, &p->cands[c])) {
            fwrite(&c, sizeof(c), 1, f);
            fwrite(&p->cands[c], sizeof(p->cands[c]), 1, f);
        }
    if (whole)
        fwrite(p->hosts, CS_PLANNER_HOST_MAX, (size_t)p->nmaps * (size_t)p->ranks, f);
    fputs("end\n", f);
    if (fflush(f) != 0 || ferror(f))
        return cs_err_set(err, CS_ERR_IO, "cannot write the part: %s", strerror(errno));
    return CS_OK;
}

int cs_planner_part_recognize(const char *head, size_t n)
{
    size_t l = strlen(PART_MAGIC " ");
    return n >= l && memcmp(head, PART_MAGIC " ", l) == 0;
}

/* The next header line: "KEY rest", rest into val (NUL-terminated). */
static int header_line(FILE *f, const char *name, int line, const char *key, char *val,
                       size_t len, cs_err_t *err)
{
    char buf[256];
    if (!fgets(buf, sizeof(buf), f) || !strchr(buf, '\n'))
        return cs_err_set(err, CS_ERR_PARSE, "%s:%d:1: expected '%s ...': the file ends or the "
                          "line is too long", name, line, key);
    buf[strcspn(buf, "\n")] = '\0';
    size_t kl = strlen(key);
    if (strncmp(buf, key, kl) != 0 || (buf[kl] != ' ' && buf[kl] != '\0'))
        return cs_err_set(err, CS_ERR_PARSE, "%s:%d:1: expected '%s', found '%.60s'", name, line,
                          key, buf);
    snprintf(val, len, "%s", buf[kl] ? buf + kl + 1 : "");
    return CS_OK;
}

int cs_planner_part_read(FILE *f, const char *name, cs_planner_t **out, cs_err_t *err)
{
    *out = NULL;
    char v[256], want[256];
    int ver = 0, shard = -1, nshards = 0, whole = -1, nrec = -1, st;
    uint64_t input = 0;
    cs_err_t first;
    cs_err_clear(&first);
    if (header_line(f, name, 1, PART_MAGIC, v, sizeof(v), &first) != CS_OK)
        return cs_err_set(err, CS_ERR_PARSE, "%s: not a part of a plan (collstep plan --shard "
                          "writes them)", name);
    if (sscanf(v, "%d", &ver) != 1 || ver != PART_VERSION)
        return cs_err_set(err, CS_ERR_PARSE, "%s:1:%zu: part format %s, this collstep reads %d",
                          name, strlen(PART_MAGIC) + 2, v, PART_VERSION);
    if ((st = header_line(f, name, 2, "version", v, sizeof(v), err)) != CS_OK)
        return st;
    if (strcmp(v, CS_VERSION) != 0)
        return cs_err_set(err, CS_ERR_PARSE, "%s:2:9: written by collstep %s; this is collstep "
                          "%s: plan and merge with the same collstep", name, v, CS_VERSION);
    if ((st = header_line(f, name, 3, "abi", v, sizeof(v), err)) != CS_OK)
        return st;
    snprintf(want, sizeof(want), "%zu %zu %d %d %016" PRIx64, sizeof(cs_planner_t),
             sizeof(cs_planner_cand_t), CS_PLANNER_MAX_SIZES, CS_PLANNER_HOST_MAX,
             (uint64_t)BYTE_ORDER_MARK);
    if (strcmp(v, want) != 0)
        return cs_err_set(err, CS_ERR_PARSE, "%s:3:5: written by a collstep built for another "
                          "machine (layout %s, here %s): merge on the kind of machine that "
                          "planned", name, v, want);
    if ((st = header_line(f, name, 4, "input", v, sizeof(v), err)) != CS_OK)
        return st;
    if (sscanf(v, "%" SCNx64, &input) != 1)
        return cs_err_set(err, CS_ERR_PARSE, "%s:4:7: expected a hash, found '%s'", name, v);
    if ((st = header_line(f, name, 5, "shard", v, sizeof(v), err)) != CS_OK)
        return st;
    if (sscanf(v, "%d %d", &shard, &nshards) != 2 || nshards < 1 || shard < 0 ||
        shard >= nshards)
        return cs_err_set(err, CS_ERR_PARSE, "%s:5:7: expected 'I N' with 0 <= I < N, found "
                          "'%s'", name, v);
    if ((st = header_line(f, name, 6, "whole", v, sizeof(v), err)) != CS_OK)
        return st;
    if (sscanf(v, "%d", &whole) != 1 || (whole != 0 && whole != 1))
        return cs_err_set(err, CS_ERR_PARSE, "%s:6:7: expected 0 or 1, found '%s'", name, v);
    if ((st = header_line(f, name, 7, "records", v, sizeof(v), err)) != CS_OK)
        return st;
    if (sscanf(v, "%d", &nrec) != 1 || nrec < 0 || nrec > CS_PLANNER_MAX_CANDS)
        return cs_err_set(err, CS_ERR_PARSE, "%s:7:9: expected 0 to %d records, found '%s'",
                          name, CS_PLANNER_MAX_CANDS, v);
    if ((st = header_line(f, name, 8, "data", v, sizeof(v), err)) != CS_OK)
        return st;
    cs_planner_t hp;
    if (fread(&hp, sizeof(hp), 1, f) != 1)
        return cs_err_set(err, CS_ERR_PARSE, "%s: the data is cut short or damaged", name);
    if (hp.ranks < 2 || hp.ranks > (1 << 24) || hp.ncands < 0 ||
        hp.ncands > CS_PLANNER_MAX_CANDS || hp.nmaps < 0 || hp.nmaps > CS_PLANNER_MAX_MAPS ||
        hp.nsizes < 1 || hp.nsizes > CS_PLANNER_MAX_SIZES || hp.input != input ||
        hp.shard != shard || hp.nshards != nshards || hp.njobs < 0 || hp.njobs > hp.ncands ||
        (whole && nrec != hp.ncands))
        return cs_err_set(err, CS_ERR_PARSE, "%s: the data does not match its header", name);
    cs_planner_t *p = cs__planner_alloc(hp.ranks);
    if (!p)
        return cs_err_set(err, CS_ERR_NOMEM, "%s: out of memory", name);
    cs_planner_cand_t *cands = p->cands;
    char *hosts = p->hosts;
    *p = hp;
    p->cands = cands, p->hosts = hosts;
    map_of(p)->whole = whole;
    int bad = 0;
    for (int i = 0; i < nrec && !bad; i++) {
        int32_t c = -1;
        bad = fread(&c, sizeof(c), 1, f) != 1 || c < 0 || c >= p->ncands ||
              (whole && c != i) || fread(&p->cands[c], sizeof(p->cands[c]), 1, f) != 1 ||
              (!whole && !owns(p, &p->cands[c])) || p->cands[c].job >= p->njobs ||
              p->cands[c].map < 0 || p->cands[c].map >= (p->nmaps ? p->nmaps : 1);
    }
    if (!bad && whole)
        bad = fread(p->hosts, CS_PLANNER_HOST_MAX, (size_t)p->nmaps * (size_t)p->ranks, f) !=
              (size_t)p->nmaps * (size_t)p->ranks;
    if (!bad && !whole) { /* exactly the shard's simulations */
        int have = 0, want_n = 0;
        for (int j = 0; j < p->njobs; j++)
            want_n += j % nshards == shard;
        for (int c = 0; c < p->ncands; c++)
            have += p->cands[c].job >= 0 && owns(p, &p->cands[c]);
        bad = have != want_n || nrec != want_n;
    }
    char end[8] = "";
    if (!bad && (!fgets(end, sizeof(end), f) || strcmp(end, "end\n") != 0))
        bad = 1;
    if (bad) {
        cs_planner_free(p);
        return cs_err_set(err, CS_ERR_PARSE, "%s: the data is cut short or damaged", name);
    }
    *out = p;
    return CS_OK;
}

/* What the analysis decided, for comparing parts: the candidates, their
 * places in the order of simulations and the model's times. */
static uint64_t analysis_of(const cs_planner_cand_t *x)
{
    uint64_t h = CS_FNV64_OFFSET;
    h = mix_str(h, x->algo);
    h = mix_str(h, x->params);
    h = mix_int(h, x->map);
    h = mix_int(h, x->job);
    h = mix_bytes(h, &x->digest, sizeof(x->digest));
    return mix_bytes(h, x->model_s, sizeof(x->model_s));
}

int cs_planner_merge(cs_planner_t *const *parts, const char *const *names, int n,
                     cs_planner_t **out, cs_err_t *err)
{
    *out = NULL;
    if (n < 1)
        return cs_err_set(err, CS_ERR_INVAL, "merge: no parts");
    int N = parts[0]->nshards;
    for (int i = 1; i < n; i++) {
        if (parts[i]->input != parts[0]->input)
            return cs_err_set(err, CS_ERR_MISMATCH, "%s and %s were planned from different "
                              "inputs (platform, collective, ranks, sizes or options; input "
                              "%016" PRIx64 " and %016" PRIx64 ")", names[0], names[i],
                              parts[0]->input, parts[i]->input);
        if (parts[i]->nshards != N)
            return cs_err_set(err, CS_ERR_INVAL, "%s is a shard of %d, %s of %d", names[0], N,
                              names[i], parts[i]->nshards);
    }
    const cs_planner_t **by = calloc((size_t)N, sizeof(*by));
    const char **nm = calloc((size_t)N, sizeof(*nm));
    if (!by || !nm) {
        free(by), free(nm);
        return cs_err_set(err, CS_ERR_NOMEM, "merge: out of memory");
    }
    int st = CS_OK, base = -1;
    for (int i = 0; i < n && st == CS_OK; i++) {
        int s = parts[i]->shard;
        if (by[s])
            st = cs_err_set(err, CS_ERR_INVAL, "%s and %s are both shard %d/%d", nm[s],
                            names[i], s, N);
        by[s] = parts[i], nm[s] = names[i];
        if (base < 0 && map_of(parts[i])->whole)
            base = i;
    }
    for (int s = 0; s < N && st == CS_OK; s++)
        if (!by[s])
            st = cs_err_set(err, CS_ERR_INVAL, "shard %d/%d is missing: a plan of %d shards "
                            "merges one part of each, %d given", s, N, N, n);
    if (st == CS_OK && base < 0)
        st = cs_err_set(err, CS_ERR_INVAL, "merge: no part holds the whole analysis");
    const cs_planner_t *b = st == CS_OK ? parts[base] : NULL;
    /* every part's candidates as the base's analysis has them */
    for (int s = 0; s < N && st == CS_OK; s++) {
        const cs_planner_t *q = by[s];
        int same = q->ncands == b->ncands && q->njobs == b->njobs;
        for (int c = 0; c < b->ncands && same; c++)
            if (map_of(q)->whole || owns(q, &q->cands[c]))
                same = analysis_of(&q->cands[c]) == analysis_of(&b->cands[c]);
        if (!same)
            st = cs_err_set(err, CS_ERR_MISMATCH, "%s and %s analysed the same inputs "
                            "differently (the budget stopped the cost model in one of them: "
                            "give a larger --budget)", names[base], nm[s]);
    }
    cs_planner_t *p = st == CS_OK ? cs__planner_alloc(b->ranks) : NULL;
    if (st == CS_OK && !p)
        st = cs_err_set(err, CS_ERR_NOMEM, "merge: out of memory");
    if (st == CS_OK) {
        cs_planner_cand_t *cands = p->cands;
        char *hosts = p->hosts;
        *p = *b;
        p->cands = cands, p->hosts = hosts;
        memcpy(p->cands, b->cands, sizeof(*cands) * (size_t)b->ncands);
        memcpy(p->hosts, b->hosts, (size_t)b->nmaps * (size_t)b->ranks * CS_PLANNER_HOST_MAX);
        for (int c = 0; c < p->ncands; c++)
            if (p->cands[c].job >= 0)
                p->cands[c] = by[p->cands[c].job % N]->cands[c];
        const cs_planner_t *last = by[N - 1]; /* NCCL's choice */
        memcpy(p->nccl_pick, last->nccl_pick, sizeof(p->nccl_pick));
        p->nccl_cut = last->nccl_cut;
        p->seconds = 0;
        for (int s = 0; s < N; s++)
            if (by[s]->seconds > p->seconds)
                p->seconds = by[s]->seconds;
        p->shard = 0, p->nshards = 1;
        cs__planner_finish(p);
        *out = p;
    }
    free(by);
    free(nm);
    return st;
}
