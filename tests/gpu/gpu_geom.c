/*
 * gpu_geom.c - the reduction kernel's launch geometry on the host, no GPU
 * needed.  cs_reduce_geom.h holds the launcher's split (cs_reduce_geom_init)
 * and the loops of every thread (CS_REDUCE_VISIT), the same code the kernel
 * runs; here every thread of the launched grid runs those loops, with the
 * element operations replaced by counters, for many lengths, element
 * sizes, address alignments of dst and src, and grids (1 block up to 132
 * SMs' worth, and arbitrary strides far smaller than n).  Checks:
 *   - every element of [0, n) is visited exactly once, none outside;
 *   - vectors are used only when dst and src agree modulo 16 bytes, and
 *     then every vector access is 16-byte aligned on both sides, and the
 *     scalar head and tail are each shorter than one vector;
 *   - the grid has 1 to max_blocks blocks, and no more blocks than work;
 *   - misaligned elements and bad sizes are refused.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cs_reduce_geom.h"
#include "cs_test.h"

/* What the counters of one case saw (the visit macros take one argument). */
static struct {
    cs_reduce_geom_t g;
    uintptr_t d, s;
    size_t esize;
    uint8_t *cnt;
    size_t outside, misaligned;
} ctx;

static void visit_scalar(size_t i)
{
    if (i >= ctx.g.n) {
        ctx.outside++;
        return;
    }
    ctx.cnt[i] += ctx.cnt[i] < 255;
}

static void visit_vector(size_t v)
{
    size_t first = ctx.g.head + v * ctx.g.vlen;
    uintptr_t da = ctx.d + first * ctx.esize, sa = ctx.s + first * ctx.esize;
    if (da % CS_REDUCE_VEC_BYTES || sa % CS_REDUCE_VEC_BYTES)
        ctx.misaligned++;
    for (size_t j = 0; j < ctx.g.vlen; j++)
        visit_scalar(first + j);
}

#define MARK_SCALAR(i) visit_scalar(i)
#define MARK_VECTOR(v) visit_vector(v)

/* Run every thread of a grid of `stride` threads; 0 when all is well. */
static int sweep(size_t stride)
{
    memset(ctx.cnt, 0, ctx.g.n + 1);
    ctx.outside = ctx.misaligned = 0;
    for (size_t tid = 0; tid < stride; tid++)
        CS_REDUCE_VISIT(ctx.g, tid, stride, MARK_SCALAR, MARK_VECTOR);
    size_t missed = 0, twice = 0, first_bad = ctx.g.n;
    for (size_t i = 0; i < ctx.g.n; i++)
        if (ctx.cnt[i] != 1) {
            missed += ctx.cnt[i] == 0;
            twice += ctx.cnt[i] > 1;
            first_bad = first_bad < i ? first_bad : i;
        }
    CS_TEST_CHECK(missed == 0 && twice == 0 && ctx.outside == 0 && ctx.misaligned == 0,
                  "esize %zu n=%zu dst%%16=%zu src%%16=%zu grid %zu threads (head %zu, %zu vectors): "
                  "%zu missed, %zu twice (first at %zu), %zu outside, %zu misaligned vectors",
                  ctx.esize, ctx.g.n, (size_t)(ctx.d % 16), (size_t)(ctx.s % 16), stride, ctx.g.head,
                  ctx.g.nvec, missed, twice, first_bad, ctx.outside, ctx.misaligned);
    return missed || twice || ctx.outside || ctx.misaligned;
}

/* One launch: the launcher's split and grid, then every thread. */
static int one(size_t esize, uintptr_t d, uintptr_t s, size_t n, size_t max_blocks)
{
    ctx.esize = esize, ctx.d = d, ctx.s = s;
    int rc = cs_reduce_geom_init(&ctx.g, d, s, n, esize, max_blocks);
    CS_TEST_CHECK(rc == 0, "esize %zu n=%zu: refused", esize, n);
    if (rc)
        return 1;
    const cs_reduce_geom_t *g = &ctx.g;
    size_t work = g->head + g->nvec + (n - cs_reduce_tail0(g));
    int same = d % 16 == s % 16, bad = 0;
    bad |= !(g->n == n && g->vlen * esize == CS_REDUCE_VEC_BYTES && cs_reduce_tail0(g) <= n);
    bad |= !(g->blocks >= 1 && g->blocks <= max_blocks &&
             (g->blocks - 1) * CS_REDUCE_THREADS < (work ? work : 1));
    bad |= !same && (g->nvec != 0 || g->head != n);
    bad |= same && g->head >= g->vlen;                 /* head shorter than a vector */
    bad |= same && n - cs_reduce_tail0(g) >= g->vlen; /* tail too */
    CS_TEST_CHECK(!bad, "esize %zu n=%zu d%%16=%zu s%%16=%zu max %zu blocks: head %zu nvec %zu "
                  "vlen %zu blocks %zu", esize, n, (size_t)(d % 16), (size_t)(s % 16), max_blocks,
                  g->head, g->nvec, g->vlen, g->blocks);
    return bad | sweep(g->blocks * CS_REDUCE_THREADS);
}

int main(void)
{
    const size_t esizes[] = {2, 4, 8, 1};
    const size_t grids[] = {1, 2, 3, 8, 1056}; /* max blocks; 1056 = 132 SMs x 8 (H100) */
    size_t maxn = 4 * 1056 * CS_REDUCE_THREADS + 64;
    ctx.cnt = malloc(maxn + 1);
    CS_TEST_REQUIRE(ctx.cnt != NULL, "memory");
    int fails = 0, cases = 0;
    for (size_t e = 0; e < sizeof(esizes) / sizeof(esizes[0]); e++) {
        size_t es = esizes[e];
        /* offsets modulo 16 of dst and src: aligned, one element, half way, last element */
        size_t offs[4] = {0, es, 8, 16 - es}, noff = es >= 8 ? 2 : 4;
        for (size_t gi = 0; gi < sizeof(grids) / sizeof(grids[0]); gi++) {
            size_t B = grids[gi], T = CS_REDUCE_THREADS;
            size_t lens[] = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 33, 255, 256, 257, 1000,
                             B * T - 1, B * T, B * T + 1, 2 * B * T + 5, 4 * B * T + 3,
                             4 * B * T * (16 / es) + 3};
            for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
                if (lens[l] > maxn)
                    continue;
                for (size_t a = 0; a < noff; a++)
                    for (size_t b = 0; b < noff; b++) {
                        uintptr_t d = 0x10000 + offs[a], s = 0x90000 + offs[b];
                        fails += one(es, d, s, lens[l], B);
                        cases++;
                        if (fails > 20) {
                            free(ctx.cnt);
                            return cs_test_finish();
                        }
                    }
            }
        }
        /* The loops alone, with grids far smaller than n (any stride must cover). */
        const size_t strides[] = {1, 5, 32, 999};
        for (size_t k = 0; k < sizeof(strides) / sizeof(strides[0]); k++)
            for (size_t a = 0; a < noff; a++) {
                ctx.esize = es, ctx.d = 0x10000 + offs[a], ctx.s = 0x90000 + offs[noff - 1 - a];
                cs_reduce_geom_init(&ctx.g, ctx.d, ctx.s, 100003, es, 1);
                fails += sweep(strides[k]);
                ctx.s = ctx.d + 0x80000;
                cs_reduce_geom_init(&ctx.g, ctx.d, ctx.s, 100003, es, 1);
                fails += sweep(strides[k]);
            }
    }
    CS_TEST_CHECK(cases > 3000, "only %d cases", cases);
    /* Refusals: misaligned elements, an element size that does not divide 16, no grid. */
    cs_reduce_geom_t g;
    memset(&g, 0x5a, sizeof(g));
    CS_TEST_CHECK(cs_reduce_geom_init(&g, 0x1001, 0x2000, 10, 4, 8) == -1, "dst misaligned");
    CS_TEST_CHECK(cs_reduce_geom_init(&g, 0x1000, 0x2002, 10, 4, 8) == -1, "src misaligned");
    CS_TEST_CHECK(cs_reduce_geom_init(&g, 0x1000, 0x2000, 10, 3, 8) == -1, "element size 3");
    CS_TEST_CHECK(cs_reduce_geom_init(&g, 0x1000, 0x2000, 10, 4, 0) == -1, "no blocks");
    CS_TEST_CHECK(g.n == (size_t)0x5a5a5a5a5a5a5a5aull, "refused but written");
    CS_TEST_CHECK(cs_reduce_max_blocks(132) == 1056 && cs_reduce_max_blocks(0) == 128,
                  "max blocks %zu %zu", cs_reduce_max_blocks(132), cs_reduce_max_blocks(0));
    free(ctx.cnt);
    return cs_test_finish();
}
