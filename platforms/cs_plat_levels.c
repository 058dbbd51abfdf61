/*
 * cs_plat_levels.c - the hierarchy of a platform's ranks from the latencies
 * of the routes between them (rule and contracts in cs_plat_levels.h),
 * shared by the platform probe (a file's natural dims) and the planner (its
 * tiers and factorizations).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cs_plat_levels.h"

int cs__plat_level_rows(int P, int *rows, int *all)
{
    *all = P <= CS_PLAT_LEVEL_ALL;
    int nrows = *all ? P : (CS_PLAT_LEVEL_ROWS < P ? CS_PLAT_LEVEL_ROWS : P);
    /* sampled rows: 0, 1, the last, and evenly spaced ranks between */
    for (int i = 0; i < nrows; i++)
        rows[i] = *all ? i : i == 0 ? 0 : i == 1 ? 1 : i == 2 ? P - 1 :
                  (int)((long)(i - 2) * P / (nrows - 2));
    return nrows;
}

long long cs__plat_level_key(double seconds)
{
    return llround(seconds * 1e12);
}

static int joined(long long key, long long lim)
{
    return key >= 0 && key <= lim;
}

int cs__plat_level_components(int P, const int *rows, int nrows, long long *const *keys,
                             long long lim, igraph_vector_int_t *memb, igraph_integer_t *ncomp)
{
    igraph_vector_int_t edges;
    if (igraph_vector_int_init(&edges, 0) != IGRAPH_SUCCESS)
        return CS_ERR_NOMEM;
    for (int i = 0; i < nrows; i++)
        for (int j = 0; j < P; j++)
            if (j != rows[i] && joined(keys[i][j], lim)) {
                igraph_vector_int_push_back(&edges, rows[i]);
                igraph_vector_int_push_back(&edges, j);
            }
    igraph_t g;
    int st = CS_OK;
    if (igraph_create(&g, &edges, P, IGRAPH_UNDIRECTED) != IGRAPH_SUCCESS) {
        igraph_vector_int_destroy(&edges);
        return CS_ERR_NOMEM;
    }
    if (igraph_connected_components(&g, memb, NULL, ncomp, IGRAPH_WEAK) != IGRAPH_SUCCESS)
        st = CS_ERR_INTERNAL;
    igraph_destroy(&g);
    igraph_vector_int_destroy(&edges);
    return st;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

int cs__plat_levels(int P, const int *rows, int nrows, int all, long long *const *keys,
                   cs__plat_level_t *out, int max, int *n)
{
    *n = 0;
    if (P < 1)
        return CS_OK;
    long long *lv = malloc(sizeof(long long) * ((size_t)nrows * (size_t)P + 1));
    igraph_vector_int_t memb;
    if (!lv || igraph_vector_int_init(&memb, 0) != IGRAPH_SUCCESS) {
        free(lv);
        return CS_ERR_NOMEM;
    }
    int nlv = 0, st = CS_OK;
    for (int i = 0; i < nrows; i++)
        for (int j = 0; j < P; j++)
            if (keys[i][j] >= 0)
                lv[nlv++] = keys[i][j];
    qsort(lv, (size_t)nlv, sizeof(long long), cmp_ll);
    int nd = 0;
    for (int i = 0; i < nlv; i++)
        if (nd == 0 || lv[i] != lv[nd - 1])
            lv[nd++] = lv[i];
    int prev_group = 1;
    for (int L = 0; L < nd && *n < max; L++) {
        igraph_integer_t nc = 0;
        if ((st = cs__plat_level_components(P, rows, nrows, keys, lv[L], &memb, &nc)) != CS_OK)
            break;
        /* the group of rank 0 and whether every group has its size */
        int g0 = 0, regular = 1, aligned = 1;
        long c0 = VECTOR(memb)[0];
        for (int j = 0; j < P; j++)
            g0 += VECTOR(memb)[j] == c0;
        if (!all) {
            /* sampled: groups must be aligned blocks of g0 ranks on every row */
            for (int i = 0; i < nrows && regular; i++) {
                int r = rows[i], b = r / g0 * g0;
                for (int j = 0; j < P && regular; j++) {
                    int in = j == r || joined(keys[i][j], lv[L]);
                    regular = in == (j >= b && j < b + g0);
                }
            }
            if (P % g0)
                regular = 0;
            nc = regular ? P / g0 : 0;
            aligned = regular;
        } else {
            igraph_vector_int_t sz;
            if (igraph_vector_int_init(&sz, 0) != IGRAPH_SUCCESS) {
                st = CS_ERR_NOMEM;
                break;
            }
            for (int j = 0; j < P; j++) {
                long c = VECTOR(memb)[j];
                while (igraph_vector_int_size(&sz) <= c)
                    igraph_vector_int_push_back(&sz, 0);
                VECTOR(sz)[c]++;
            }
            for (long c = 0; c < igraph_vector_int_size(&sz); c++)
                regular &= VECTOR(sz)[c] == g0;
            igraph_vector_int_destroy(&sz);
            for (int j = 0; j < P && aligned; j++)
                aligned = regular && VECTOR(memb)[j] == VECTOR(memb)[j / g0 * g0];
        }
        if (g0 <= prev_group)
            continue; /* the same groups as the level below: one tier */
        cs__plat_level_t *t = &out[(*n)++];
        t->key = lv[L];
        t->group = g0;
        t->ngroups = (int)nc;
        t->regular = regular;
        t->aligned = aligned;
        prev_group = g0;
        if (g0 == P)
            break;
    }
    igraph_vector_int_destroy(&memb);
    free(lv);
    return st;
}

int cs__plat_level_factors(const cs__plat_level_t *lv, int n, int *g, int max, int *reach)
{
    int ng = 0, prev = 1;
    for (int t = 0; t < n && ng < max; t++) {
        int s = lv[t].regular ? lv[t].group : 0;
        if (s <= prev || s % prev)
            continue;
        g[ng++] = s / prev;
        prev = s;
    }
    *reach = prev;
    return ng;
}

int cs__plat_level_dims(const cs__plat_level_t *lv, int n, int P, int aligned, int *dims, int max)
{
    int g[64], reach = 1, prev = 1;
    int ng = cs__plat_level_factors(lv, n, g, 64, &reach);
    if (ng < 2 || ng > max || reach != P)
        return 0;
    for (int t = 0; t < n && aligned; t++) {
        int s = lv[t].regular ? lv[t].group : 0;
        if (s <= prev || s % prev)
            continue;
        if (!lv[t].aligned)
            return 0;
        prev = s;
    }
    memcpy(dims, g, sizeof(int) * (size_t)ng);
    return ng;
}
