/*
 * validate_build.c - what `collstep validate` runs and predicts with: the
 * schedules every rank builds (cs_cli_scheds_build: --algo A,B, each for
 * every size, or --algo auto --tuning FILE, per size the table's entry;
 * hier gets dims = ranks per node x nodes from where the ranks are; rank 0
 * says a usage error and verifies them) and the platforms rank 0
 * opens and checks against the ranks (validate_int.h); the sizes rounded to
 * what moves, and whether their buffers fit this machine's memory.
 */
#include <stdio.h>
#include <string.h>

#include "cs_engine.h"
#include "validate_int.h"

/* The cluster's tiers: R x H when every node holds R contiguous ranks
 * (*ndims 0 otherwise). */
static void node_dims(const val_t *v, int *dims, int *ndims)
{
    int per = v->l.nranks / v->l.nnodes;
    int ok = v->l.nnodes > 1 && per > 1 && per * v->l.nnodes == v->l.nranks;
    for (int r = 0; r < v->l.nranks && ok; r++)
        ok = v->l.node_of[r] == r / per;
    dims[0] = per, dims[1] = v->l.nnodes;
    *ndims = ok ? 2 : 0;
}

/* Rank 0: open the platforms and check them against the ranks. */
int val_check_platforms(val_t *v)
{
    for (int i = 0; i < v->o->nplats; i++) {
        plat_spec_t *p = &v->o->plats[i];
        if (cs_platform_open(p->spec, &p->plat, &v->l.err) != CS_OK) {
            fprintf(stderr, "collstep validate: --platform %s: %s\n", p->spec, v->l.err.msg);
            return CS_EXIT_USAGE;
        }
        if (p->plat->ndevices < (uint64_t)v->l.nranks) {
            fprintf(stderr, "collstep validate: --platform %s has %llu %s but %d ranks run: "
                            "calibrate on the ranks you validate with\n", p->spec,
                    (unsigned long long)p->plat->ndevices,
                    p->plat->rank_noun[0] ? p->plat->rank_noun : "hosts", v->l.nranks);
            return CS_EXIT_USAGE;
        }
        /* a calibrated platform names its hosts nNODE-rRANK: same grouping? */
        for (int a = 0; a < v->l.nranks; a++)
            for (int b = 0; b < v->l.nranks && p->plat->hosts; b++) {
                int na, ra, nb, rb;
                if (sscanf(p->plat->hosts[a], "n%d-r%d", &na, &ra) != 2 ||
                    sscanf(p->plat->hosts[b], "n%d-r%d", &nb, &rb) != 2)
                    goto next;
                if ((na == nb) != (v->l.node_of[a] == v->l.node_of[b])) {
                    fprintf(stderr, "collstep validate: --platform %s: ranks %d and %d are %s "
                                    "there but %s here: start the ranks as when calibrating\n",
                            p->spec, a, b, na == nb ? "on one node" : "on different nodes",
                            na == nb ? "not" : "on one node");
                    return CS_EXIT_USAGE;
                }
            }
    next:;
    }
    return CS_EXIT_OK;
}

int val_build(val_t *v)
{
    int dims[2], ndims = 0;
    v->coll = cs_coll_parse(v->o->coll);
    if (v->coll == CS_COLL_COUNT)
        return cs_cli_usage_error("validate", "--coll: unknown collective '%s'", v->o->coll);
    /* the sizes as they move, before a tuning table picks by them */
    int rc = cs_cli_sizes_round("validate", v->coll, v->l.nranks, CS_DT_F32, v->l.rank == 0,
                                v->sizes, &v->nsizes, NULL);
    if (rc != CS_EXIT_OK)
        return rc;
    node_dims(v, dims, &ndims);
    /* a tuning table's rank maps are not applied: the live ranks are where
     * they were started, and the simulation places them the same way */
    cs_cli_want_t w = {"validate", v->l.rank == 0, v->sizes, v->nsizes, 4, NULL, dims, ndims};
    cs_coll_desc_t d = {v->coll, v->l.nranks, 0, 0};
    rc = cs_cli_scheds_build(&w, v->o->algo, v->o->tuning, &v->o->params, &d, &v->b);
    v->nalgo = v->b.n;
    for (int i = 0; i < v->nalgo; i++)
        v->sched[i] = v->b.sched[i];
    return rc;
}

int val_check_memory(val_t *v)
{
    uint64_t hi = 0;
    for (int k = 0; k < v->nsizes; k++)
        hi = v->sizes[k] > hi ? v->sizes[k] : hi;
    uint64_t count = cs_coll_block_count(v->coll, v->l.nranks, hi, 4);
    double most = 0; /* the largest rank's: which ranks share this machine is not known here */
    for (int a = 0; a < v->nalgo; a++)
        for (int r = 0; r < v->l.nranks; r++) {
            double x = cs_engine_mem_estimate(v->sched[a], r, count, CS_DT_F32);
            most = x > most ? x : most;
        }
    return cs_live_mem_check("validate", hi, most * v->l.machine_ranks, v->l.machine_ranks,
                             "buffers");
}
