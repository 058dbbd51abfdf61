/*
 * cs_nccl_log_head.c - the header part of an nccl-tests run (cs_nccl_log.h):
 * the version line, the program, the sweep line and the device block, in
 * the forms of every nccl-tests release (writeDeviceReport of src/util.cu
 * since 2024, common.cu before; "Rank N on HOST" before 2019, "Rank N Pid P"
 * until 2022, "Rank N Group G Pid P" since).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_grow.h"
#include "cs_nccl_log.h"
#include "cs_nccl_log_int.h"

/* A header-part line: the open table's, or the first of the next one. */
int nl_head_line(nl_parser_t *P, unsigned field)
{
    if (P->state != NL_HEAD || P->seen >= field) {
        int st = nl_open(P);
        if (st != CS_OK)
            return st;
    }
    P->seen |= field;
    return CS_OK;
}

/* "nccl-tests version 2.19.6 [(hash)] nccl-headers=N nccl-library=N" */
int nl_version_line(nl_parser_t *P, const char *s)
{
    int st = nl_head_line(P, NL_F_VERSION);
    cs_nccl_run_t *t = nl_table(P);
    const char *ts, *te;
    if (st != CS_OK)
        return st;
    nl_token(s, P->end, &ts, &te);
    if ((st = nl_word(P, ts, te, t->tests_version, sizeof(t->tests_version),
                      "the nccl-tests version")) != CS_OK)
        return st;
    for (s = te; nl_token(s, P->end, &ts, &te); s = te) {
        int *code = nl_starts(ts, te, "nccl-headers=", 1)   ? &t->nccl_headers
                    : nl_starts(ts, te, "nccl-library=", 1) ? &t->nccl_library
                                                            : NULL;
        if (code && (st = nl_int(P, ts + 13, te, code, "a version code")) != CS_OK)
            return st;
    }
    return CS_OK;
}

/* "Collective test starting: PROGRAM" */
int nl_program_line(nl_parser_t *P, const char *s)
{
    int st = nl_head_line(P, NL_F_PROGRAM);
    cs_nccl_run_t *t = nl_table(P);
    const char *ts, *te;
    if (st != CS_OK)
        return st;
    nl_token(s, P->end, &ts, &te);
    if ((st = nl_word(P, ts, te, t->program, sizeof(t->program), "the program's name")) != CS_OK)
        return st;
    t->coll = nl_coll_of_program(ts, (size_t)(te - ts));
    t->coll_from = t->coll == CS_NCCL_UNKNOWN ? "unknown" : "program";
    return CS_OK;
}

/* "nThread 1 nGpus 1 minBytes 8 maxBytes 128 step: 2(factor) warmup iters: 5
 * iters: 20 [agg iters: 1] validation: 1 [graph: 0] [unalign: 0] ...": keys of
 * one or more words, the last ending with ':' except for the first four. */
int nl_params_line(nl_parser_t *P, const char *s)
{
    int st = nl_head_line(P, NL_F_PARAMS);
    cs_nccl_run_t *t = nl_table(P);
    if (st != CS_OK)
        return st;
    t->has_params = 1;
    char key[48] = "";
    unsigned need = 0; /* nThread nGpus minBytes maxBytes, bit per key */
    const char *ts, *te;
    for (; nl_token(s, P->end, &ts, &te); s = te) {
        size_t kl = strlen(key), n = (size_t)(te - ts);
        int bare = !kl && (nl_starts(ts, te, "nThread", 0) || nl_starts(ts, te, "nGpus", 0) ||
                           nl_starts(ts, te, "minBytes", 0) || nl_starts(ts, te, "maxBytes", 0));
        if (kl + n + 2 < sizeof(key)) {
            snprintf(key + kl, sizeof(key) - kl, "%s%.*s", kl ? " " : "", (int)n, ts);
            kl = strlen(key);
        }
        if (!bare && ts[n - 1] != ':')
            continue; /* a key of several words */
        if (kl && key[kl - 1] == ':')
            key[kl - 1] = 0;
        if (!nl_token(te, P->end, &ts, &te))
            return nl_expected(P, te, "a value");
        uint64_t u = 0;
        int *iv = !strcmp(key, "nThread")        ? &t->nthread
                  : !strcmp(key, "nGpus")        ? &t->ngpus
                  : !strcmp(key, "warmup iters") ? &t->warmup_iters
                  : !strcmp(key, "iters")        ? &t->iters
                  : !strcmp(key, "agg iters")    ? &t->agg_iters
                  : !strcmp(key, "validation")   ? &t->validation
                  : !strcmp(key, "graph")        ? &t->graph
                  : !strcmp(key, "unalign")      ? &t->unalign
                                                 : NULL;
        if (iv) {
            if ((st = nl_int(P, ts, te, iv, "an integer")) != CS_OK)
                return st;
        } else if (!strcmp(key, "minBytes") || !strcmp(key, "maxBytes")) {
            if ((st = nl_u64(P, ts, te, &u, "a size in bytes")) != CS_OK)
                return st;
            *(key[1] == 'i' ? &t->min_bytes : &t->max_bytes) = u;
        } else if (!strcmp(key, "step")) { /* "2(factor)", "1048576(bytes)" */
            const char *par = memchr(ts, '(', (size_t)(te - ts));
            if (!par || (st = nl_u64(P, ts, par, &t->step, "a step")) != CS_OK)
                return par ? st : nl_expected(P, ts, "a step as N(factor) or N(bytes)");
            if (nl_starts(par, te, "(factor)", 0) || nl_starts(par, te, "(bytes)", 0))
                t->step_factor = par[1] == 'f';
            else
                return nl_expected(P, par, "'(factor)' or '(bytes)'");
        }
        need |= (unsigned)!strcmp(key, "nThread") | (unsigned)!strcmp(key, "nGpus") << 1 |
                (unsigned)!strcmp(key, "minBytes") << 2 | (unsigned)!strcmp(key, "maxBytes") << 3;
        key[0] = 0;
    }
    static const char *const req[] = {"'nThread'", "'nGpus'", "'minBytes'", "'maxBytes'"};
    for (int i = 0; i < 4; i++)
        if (!(need & 1u << i))
            return nl_expected(P, P->end, req[i]);
    return CS_OK;
}

/* "Rank R [Group G] [Pid P] on HOST device D [BUSID] NAME" */
int nl_device_line(nl_parser_t *P, const char *s)
{
    if (P->state != NL_HEAD) {
        int st = nl_open(P);
        if (st != CS_OK)
            return st;
    }
    P->seen |= NL_F_USING;
    cs_nccl_run_t *t = nl_table(P);
    cs_nccl_dev_t d = {.group = -1, .pid = -1};
    const char *ts, *te;
    int st;
    nl_token(s, P->end, &ts, &te);
    if ((st = nl_int(P, ts, te, &d.rank, "a rank")) != CS_OK)
        return st;
    if (d.rank < 0)
        return nl_expected(P, ts, "a rank");
    for (s = te; nl_token(s, P->end, &ts, &te) && !nl_starts(ts, te, "on", 0); s = te) {
        int *v = nl_starts(ts, te, "Group", 0) ? &d.group : nl_starts(ts, te, "Pid", 0) ? &d.pid
                                                                                        : NULL;
        if (v == NULL)
            return nl_expected(P, ts, "'Group', 'Pid' or 'on'");
        nl_token(te, P->end, &ts, &te);
        if ((st = nl_int(P, ts, te, v, "a number")) != CS_OK)
            return st;
    }
    if (!nl_starts(ts, te, "on", 0))
        return nl_expected(P, ts, "'on HOST'");
    const char *hs, *he;
    if (!nl_token(te, P->end, &hs, &he))
        return nl_expected(P, he, "a host name");
    if (!nl_token(he, P->end, &ts, &te) || !nl_starts(ts, te, "device", 0))
        return nl_expected(P, ts, "'device'");
    nl_token(te, P->end, &ts, &te);
    if ((st = nl_int(P, ts, te, &d.device, "a device number")) != CS_OK)
        return st;
    s = nl_skip_blank(te, P->end);
    const char *close = s < P->end && *s == '[' ? memchr(s, ']', (size_t)(P->end - s)) : NULL;
    if (close == NULL || close - s - 1 >= (long)sizeof(d.busid))
        return nl_expected(P, s, "a bus id in brackets");
    memcpy(d.busid, s + 1, (size_t)(close - s - 1));
    const char *ns = nl_skip_blank(close + 1, P->end), *ne = P->end;
    while (ne > ns && (ne[-1] == ' ' || ne[-1] == '\t'))
        ne--;
    for (int i = 0; i < t->ndevs; i++)
        if (t->devs[i].rank == d.rank)
            return nl_fail(P, CS_ERR_PARSE, P->p,
                           "rank %d is listed twice in one device block (several runs' "
                           "output mixed?)",
                           d.rank);
    if (cs_grow(&t->devs, &t->cap_devs, (size_t)t->ndevs + 1, sizeof(*t->devs), 8))
        return cs_err_set(P->err, CS_ERR_NOMEM, "%s: out of memory", P->name);
    d.host = strndup(hs, (size_t)(he - hs));
    d.name = strndup(ns, (size_t)(ne - ns));
    if (!d.host || !d.name) {
        free(d.host), free(d.name);
        return cs_err_set(P->err, CS_ERR_NOMEM, "%s: out of memory", P->name);
    }
    t->devs[t->ndevs++] = d;
    return CS_OK;
}
