/*
 * cs_multitier.c - the multi-tier allreduce of hier and torus2d (contract:
 * cs__phase_multitier in cs_phase.h): reduce-scatter through the tiers
 * inside out, each tier's groups on the window the tier before left, then
 * the all-gathers back; a SHARP tier, the outermost, allreduces its window
 * in the switch instead.
 */
#include <stdlib.h>

#include "cs_peers.h"
#include "cs_phase.h"
#include "cs_swphase.h"

/* One tier phase of the multi-tier allreduce, for every group of tier t. */
static int tier_phase(cs__phase_t *ph, const int *dims, const int *order, const cs__ph_alg_t *algs,
                      int ntiers, int level, int ag, uint32_t base, uint32_t len, int src,
                      int chan, uint32_t pieces, int *ranks, uint32_t *cut, int *coord)
{
    int t = order[level], st = CS_OK;
    cs__bufs_t b = {src, CS_BUF_OUT, CS_BUF_OUT};
    cs__grp_t g = {ranks, dims[t], cut, NULL};
    for (int r = 0; r < ph->s->desc.nranks && st == CS_OK; r++) {
        cs__radix_coords(r, dims, ntiers, coord);
        if (coord[t] != 0)
            continue; /* one group per leader (coordinate t == 0) */
        uint32_t wlo = base, wlen = len;
        for (int i = 0; i < level; i++) { /* the window the tiers before left */
            wlen /= (uint32_t)dims[order[i]];
            wlo += (uint32_t)coord[order[i]] * wlen;
        }
        cs__radix_group(r, dims, t, ranks);
        for (int m = 0; m <= dims[t]; m++)
            cut[m] = wlo + (uint32_t)((uint64_t)wlen * (uint64_t)m / (uint64_t)dims[t]);
        if (algs[t] == CS__PH_SHARP) /* the outermost tier: an allreduce in the switch */
            st = cs__sw_sharp(ph, ranks, dims[t], cut[0], cut[dims[t]] - cut[0], src, CS_BUF_OUT,
                              chan, pieces, NULL, NULL);
        else
            st = ag ? cs__phase_ag(ph, algs[t], &g, b, chan, pieces)
                    : cs__phase_rs(ph, algs[t], &g, b, chan, pieces);
    }
    return st;
}

int cs__phase_multitier(cs__phase_t *ph, const int *dims, const int *order,
                        const cs__ph_alg_t *algs, int ntiers, uint32_t base, uint32_t len,
                        int src, int chan0, uint32_t pieces)
{
    cs_sched_t *s = ph->s;
    int maxd = 1, st = CS_OK;
    for (int t = 0; t < ntiers; t++)
        maxd = dims[t] > maxd ? dims[t] : maxd;
    int *ranks = malloc((size_t)maxd * sizeof(*ranks));
    uint32_t *cut = malloc(((size_t)maxd + 1) * sizeof(*cut));
    int *coord = malloc((size_t)ntiers * sizeof(*coord));
    if (ranks == NULL || cut == NULL || coord == NULL) {
        st = cs_err_set(&s->err, CS_ERR_NOMEM, "out of memory (tier groups)");
        goto done;
    }
    /* reduce-scatter inward-out through order[], then all-gather back;
     * tiers of size 1 are skipped; a SHARP tier is the last one that is not */
    for (int l = 0, sharp = -1; l < ntiers && st == CS_OK; l++) {
        if (dims[order[l]] == 1)
            continue;
        if (sharp >= 0) {
            st = cs_err_set(&s->err, CS_ERR_UNSUPPORTED,
                            "a sharp tier (tier %d) must be the outermost one of more than one "
                            "rank: tier %d of %d ranks comes after it", order[sharp], order[l],
                            dims[order[l]]);
            break;
        }
        if (algs[order[l]] == CS__PH_SHARP)
            sharp = l;
        st = tier_phase(ph, dims, order, algs, ntiers, l, 0, base, len, src, chan0 + 2 * l,
                        pieces, ranks, cut, coord);
        src = CS_BUF_OUT;
    }
    for (int r = ph->r0; r < ph->r1 && st == CS_OK && src != CS_BUF_OUT; r++) {
        cs__dl_t d = cs__dl(ph->front[r], -1, -1);
        cs_deps_push(&ph->term, cs_copy(s, r, cs__grng(s, r, src, base, len),
                                        cs__grng(s, r, CS_BUF_OUT, base, len), d.v, d.n));
        cs__phase_end(ph, r);
    }
    for (int l = ntiers - 1; l >= 0 && st == CS_OK; l--) {
        if (dims[order[l]] == 1 || algs[order[l]] == CS__PH_SHARP)
            continue;
        st = tier_phase(ph, dims, order, algs, ntiers, l, 1, base, len, CS_BUF_OUT,
                        chan0 + 2 * l + 1, pieces, ranks, cut, coord);
    }
done:
    free(ranks);
    free(cut);
    free(coord);
    return st != CS_OK ? st : cs_sched_status(s);
}
