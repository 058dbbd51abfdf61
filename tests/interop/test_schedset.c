/*
 * test_schedset.c - a schedule set of MSCCL XML files: a folder of three
 * copies of the ring with size ranges, looked up per size as MSCCL does
 * (range, then nchunksperloop dividing the element count, first in name
 * order), the errors for a size no file serves and for a set mixing
 * collectives, a file an earlier one shadows entirely (refused, naming
 * both) against a partial overlap (kept: cs_schedset_also names the file
 * passed over), and the origin table of an entry.
 *
 *   test_schedset XMLDIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cs_msccl.h"
#include "cs_schedset.h"
#include "cs_test.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strdup(buf);
}

static void write_variant(const char *ring, const char *path, const char *range)
{
    const char *from = "minBytes=\"0\" maxBytes=\"0\"";
    const char *p = strstr(ring, from);
    FILE *f = fopen(path, "w");
    fwrite(ring, 1, (size_t)(p - ring), f);
    fputs(range, f);
    fputs(p + strlen(from), f);
    fclose(f);
}

static const char *base(const cs_schedset_entry_t *e)
{
    const char *b = e ? strrchr(e->path, '/') : NULL;
    return b ? b + 1 : "(none)";
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    char path[4096];
    snprintf(path, sizeof(path), "%s/allreduce_ring4.xml", argv[1]);
    char *ring = slurp(path);
    CS_TEST_REQUIRE(ring != NULL, "cannot read %s", path);
    mkdir("set", 0755);
    write_variant(ring, "set/a_small.xml", "minBytes=\"0\" maxBytes=\"65536\"");
    write_variant(ring, "set/b_mid.xml", "minBytes=\"65537\" maxBytes=\"1048576\"");
    write_variant(ring, "set/c_large.xml", "minBytes=\"4194304\" maxBytes=\"0\"");
    const char *dirs[] = {"set"};
    cs_schedset_t *set = NULL;
    cs_err_t err = {0};
    int st = cs_schedset_load(dirs, 1, &set, &err);
    CS_TEST_REQUIRE(st == CS_OK, "load: %s", err.msg);
    CS_TEST_CHECK(set->n == 3 && set->coll == CS_COLL_ALLREDUCE && set->nranks == 4,
                  "set of %d", set->n);
    static const struct {
        uint64_t bytes;
        const char *file; /* NULL: an error naming `why` */
        const char *why;
    } cases[] = {
        {0, "a_small.xml", NULL},
        {1024, "a_small.xml", NULL},
        {65536, "a_small.xml", NULL},
        {65552, "b_mid.xml", NULL},
        {1048576, "b_mid.xml", NULL},
        {8 << 20, "c_large.xml", NULL},
        {2 << 20, NULL, "no file of the set serves 2097152 bytes: a_small.xml (0 to 65536 bytes); "
                        "b_mid.xml (65537 to 1048576 bytes); c_large.xml (4194304 bytes and more)"},
        {1000, NULL, "a_small.xml (0 to 65536 bytes: 250 elements of 4 bytes are not a multiple "
                     "of its nchunksperloop 4; MSCCL would fall back to NCCL)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cs_err_t e = {0};
        const cs_schedset_entry_t *en = cs_schedset_lookup(set, cases[i].bytes, 4, &e);
        if (cases[i].file)
            CS_TEST_CHECK(en && strcmp(base(en), cases[i].file) == 0, "%llu bytes: %s (%s)",
                          (unsigned long long)cases[i].bytes, base(en), e.msg);
        else
            CS_TEST_CHECK(en == NULL && e.code == CS_ERR_NOTFOUND && strstr(e.msg, cases[i].why),
                          "%llu bytes: '%s'", (unsigned long long)cases[i].bytes, e.msg);
    }
    /* the entries keep their origins */
    char where[1024];
    CS_TEST_CHECK(cs_msccl_origin_of(set->v[1].sched, 2, 0, where, sizeof(where)) == 1 &&
                      strstr(where, "set/b_mid.xml:33: gpu 2 tb 0 step 0"),
                  "origin '%s'", where);
    cs_schedset_destroy(set);

    /* files in the order given; a file of another collective is refused */
    snprintf(path, sizeof(path), "%s/allgather_ring3_inplace.xml", argv[1]);
    const char *mixed[] = {"set/c_large.xml", "set/a_small.xml", path};
    set = NULL;
    st = cs_schedset_load(mixed, 3, &set, &err);
    CS_TEST_CHECK(st == CS_ERR_MISMATCH && set == NULL &&
                      strstr(err.msg, "allgather on 3 ranks, but set/c_large.xml is allreduce on "
                                      "4 ranks"),
                  "%s", err.msg);
    const char *two[] = {"set/c_large.xml", "set/a_small.xml"};
    st = cs_schedset_load(two, 2, &set, &err);
    CS_TEST_CHECK(st == CS_OK && set->n == 2 && strcmp(base(&set->v[0]), "c_large.xml") == 0,
                  "order: %s", err.msg);
    cs_schedset_destroy(set);
    /* overlaps: a file an earlier one shadows entirely is refused, naming
     * both; a partial overlap is kept, and the later file is named */
    write_variant(ring, "dup_all.xml", "minBytes=\"0\" maxBytes=\"0\"");
    write_variant(ring, "dup_mid.xml", "minBytes=\"1024\" maxBytes=\"65536\"");
    const char *shadow[] = {"dup_all.xml", "dup_mid.xml"};
    set = NULL;
    cs_err_clear(&err);
    st = cs_schedset_load(shadow, 2, &set, &err);
    CS_TEST_CHECK(st == CS_ERR_MISMATCH && set == NULL &&
                      strstr(err.msg, "dup_mid.xml (1024 to 65536 bytes) would never be used: "
                                      "dup_all.xml (0 bytes and more), earlier in the load order"),
                  "shadowed: %s", err.msg);
    const char *partial[] = {"dup_mid.xml", "dup_all.xml"};
    cs_err_clear(&err);
    st = cs_schedset_load(partial, 2, &set, &err);
    CS_TEST_CHECK(st == CS_OK && set && set->n == 2, "partial overlap refused: %s", err.msg);
    if (st == CS_OK) {
        const cs_schedset_entry_t *en = cs_schedset_lookup(set, 4096, 4, &err);
        const cs_schedset_entry_t *x = en ? cs_schedset_also(set, en, 4096, 4) : NULL;
        CS_TEST_CHECK(en == &set->v[0] && x == &set->v[1], "4096 bytes: %s, also %s", base(en),
                      base(x));
        en = cs_schedset_lookup(set, 1 << 20, 4, &err);
        CS_TEST_CHECK(en == &set->v[1] && !cs_schedset_also(set, en, 1 << 20, 4),
                      "1 MiB: %s", base(en));
        cs_schedset_destroy(set);
    }
    /* the same range for in-place and for out-of-place calls: both kept */
    char *inp = strdup(ring);
    char *fl = inp ? strstr(inp, "inplace=\"1\" outofplace=\"1\"") : NULL;
    CS_TEST_REQUIRE(fl != NULL, "the ring's in-place flags");
    memcpy(fl, "inplace=\"1\" outofplace=\"0\"", strlen("inplace=\"1\" outofplace=\"0\""));
    write_variant(inp, "dup_inplace.xml", "minBytes=\"0\" maxBytes=\"0\"");
    memcpy(fl, "inplace=\"0\" outofplace=\"1\"", strlen("inplace=\"0\" outofplace=\"1\""));
    write_variant(inp, "dup_outofplace.xml", "minBytes=\"0\" maxBytes=\"0\"");
    free(inp);
    const char *flags[] = {"dup_inplace.xml", "dup_outofplace.xml"};
    set = NULL;
    cs_err_clear(&err);
    st = cs_schedset_load(flags, 2, &set, &err);
    CS_TEST_CHECK(st == CS_OK, "in-place and out-of-place files refused: %s", err.msg);
    cs_schedset_destroy(set);
    remove("dup_all.xml");
    remove("dup_mid.xml");
    remove("dup_inplace.xml");
    remove("dup_outofplace.xml");
    const char *none[] = {"no-such-dir"};
    set = NULL;
    CS_TEST_CHECK(cs_schedset_load(none, 1, &set, &err) == CS_ERR_IO && set == NULL, "%s",
                  err.msg);
    remove("set/a_small.xml");
    remove("set/b_mid.xml");
    remove("set/c_large.xml");
    rmdir("set");
    free(ring);
    return cs_test_finish();
}
