/*
 * test_tuning.c - tuning tables (core/cs_tuning.h): what plan writes is
 * read back entry for entry; malformed files are refused with file:line:col
 * and what was expected; check and pick say what does not fit.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cs_test.h"
#include "cs_tuning.h"

static char dir[256];

static const char *write_file(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return NULL;
    fputs(text, f);
    fclose(f);
    return path;
}

/* Load `text`; expect a parse error whose message contains `want`. */
static void bad(const char *name, const char *text, const char *want)
{
    const char *path = write_file(name, text);
    cs_tuning_t *t = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    int st = cs_tuning_load(path, &t, &err);
    CS_TEST_CHECK(st == CS_ERR_PARSE && !t, "%s: status %d", name, st);
    CS_TEST_CHECK(strstr(err.msg, want) != NULL, "%s: message '%s' lacks '%s'", name, err.msg,
                  want);
    cs_tuning_free(t);
}

static int roundtrip(void)
{
    cs_err_t err;
    cs_err_clear(&err);
    cs_tuning_t *t = cs_tuning_new("summit:nodes=2", 4, &err);
    CS_TEST_REQUIRE(t != NULL, "%s", err.msg);
    char *map[4] = {"n0-g0", "n0-g2", "n0-g1", "n1-g0"};
    CS_TEST_CHECK(cs_tuning_add(t, CS_COLL_ALLREDUCE, 0, 65536, "rhd", "", NULL, 0, 12.5, &err) ==
                      CS_OK, "%s", err.msg);
    CS_TEST_CHECK(cs_tuning_add(t, CS_COLL_ALLREDUCE, 65537, UINT64_MAX, "hier",
                                "dims=2x2,algos=ring+rhd", map, 4, 1234.5, &err) == CS_OK,
                  "%s", err.msg);
    CS_TEST_CHECK(cs_tuning_add(t, CS_COLL_ALLGATHER, 0, 100, "ring", NULL, map, 4, 3, &err) ==
                      CS_OK, "%s", err.msg);
    /* refused: overlap, blanks, wrong map length */
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_tuning_add(t, CS_COLL_ALLREDUCE, 100, 200, "ring", "", NULL, 0, 1, &err) ==
                      CS_ERR_INVAL && strstr(err.msg, "overlaps"), "overlap: %s", err.msg);
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_tuning_add(t, CS_COLL_REDUCE, 0, 1, "ring", "a b", NULL, 0, 1, &err) ==
                      CS_ERR_INVAL, "blank accepted");
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_tuning_add(t, CS_COLL_REDUCE, 0, 1, "ring", "", map, 3, 1, &err) ==
                      CS_ERR_INVAL, "short map accepted");
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_tuning_set_model(t, "nccl 2", &err) == CS_ERR_INVAL, "model with a blank");
    CS_TEST_CHECK(cs_tuning_set_model(t, "nccl-2.29.7", &err) == CS_OK, "%s", err.msg);
    char path[512];
    snprintf(path, sizeof(path), "%s/ok.tuning", dir);
    FILE *f = fopen(path, "w");
    CS_TEST_REQUIRE(f != NULL, "cannot write %s", path);
    CS_TEST_CHECK(cs_tuning_write(t, f, &err) == CS_OK, "%s", err.msg);
    fclose(f);
    cs_tuning_free(t);

    char head[64] = "";
    f = fopen(path, "r");
    size_t n = f ? fread(head, 1, sizeof(head) - 1, f) : 0;
    if (f)
        fclose(f);
    CS_TEST_CHECK(cs_tuning_recognize(head, n), "its own file not recognized");
    CS_TEST_CHECK(!cs_tuning_recognize("hello world", 11), "foreign file recognized");

    cs_tuning_t *r = NULL;
    cs_err_clear(&err);
    CS_TEST_REQUIRE(cs_tuning_load(path, &r, &err) == CS_OK, "%s", err.msg);
    CS_TEST_CHECK(strcmp(cs_tuning_platform(r), "summit:nodes=2") == 0, "platform %s",
                  cs_tuning_platform(r));
    CS_TEST_CHECK(cs_tuning_ranks(r) == 4, "ranks %d", cs_tuning_ranks(r));
    CS_TEST_CHECK(cs_tuning_model(r) && strcmp(cs_tuning_model(r), "nccl-2.29.7") == 0,
                  "model %s", cs_tuning_model(r) ? cs_tuning_model(r) : "(none)");
    CS_TEST_CHECK(cs_tuning_count(r) == 3, "entries %d", cs_tuning_count(r));
    const cs_tuning_entry_t *e = NULL;
    CS_TEST_CHECK(cs_tuning_pick(r, CS_COLL_ALLREDUCE, 65536, &e, &err) == CS_OK && e &&
                      strcmp(e->algo, "rhd") == 0 && e->params[0] == 0 && !e->map,
                  "64K: %s", e ? e->algo : err.msg);
    CS_TEST_CHECK(cs_tuning_pick(r, CS_COLL_ALLREDUCE, 1u << 30, &e, &err) == CS_OK && e &&
                      strcmp(e->algo, "hier") == 0 &&
                      strcmp(e->params, "dims=2x2,algos=ring+rhd") == 0 && e->nmap == 4 &&
                      strcmp(e->map[1], "n0-g2") == 0 && e->predicted_us == 1234.5,
                  "1G: %s", e ? e->params : err.msg);
    const cs_tuning_entry_t *g = NULL;
    CS_TEST_CHECK(cs_tuning_pick(r, CS_COLL_ALLGATHER, 50, &g, &err) == CS_OK && g &&
                      g->map && strcmp(g->map[3], "n1-g0") == 0, "allgather map");
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_tuning_pick(r, CS_COLL_ALLGATHER, 101, &g, &err) == CS_ERR_NOTFOUND &&
                      strstr(err.msg, "0..100"), "allgather 101: %s", err.msg);
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_tuning_pick(r, CS_COLL_ALLTOALL, 1, &g, &err) == CS_ERR_NOTFOUND &&
                      strstr(err.msg, "no alltoall entry"), "alltoall: %s", err.msg);
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_tuning_check(r, "summit:nodes=2", 4, &err) == CS_OK, "%s", err.msg);
    CS_TEST_CHECK(cs_tuning_check(r, NULL, 4, &err) == CS_OK, "%s", err.msg);
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_tuning_check(r, "dgx1-v100-ib100", 4, &err) == CS_ERR_MISMATCH &&
                      strstr(err.msg, "summit:nodes=2") && strstr(err.msg, "dgx1-v100-ib100"),
                  "platform mismatch: %s", err.msg);
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_tuning_check(r, NULL, 8, &err) == CS_ERR_MISMATCH && strstr(err.msg, "8"),
                  "ranks mismatch: %s", err.msg);
    cs_tuning_free(r);
    return 0;
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/cs-tuning-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        CS_TEST_SKIP("no temporary directory");
    roundtrip();
    const char *H = "collstep-tuning 1\nplatform p\nranks 2\n";
    char buf[512];
    bad("empty", "", "expected 'collstep-tuning 1'");
    bad("magic", "hello 1\n", ":1:1: expected 'collstep-tuning 1'");
    bad("version", "collstep-tuning 2\n", ":1:17: expected the format version 1");
    bad("noplat", "collstep-tuning 1\nranks 2\n", ":2:1: expected 'platform SPEC'");
    bad("ranks", "collstep-tuning 1\nplatform p\nranks x\n", ":3:7: expected a rank count");
    bad("noentry", H, "expected at least one 'entry'");
    snprintf(buf, sizeof(buf), "%sentry allreduce 0 10 ring - - 1\nbogus\n", H);
    bad("keyword", buf, ":5:1: expected 'model', 'map' or 'entry'");
    snprintf(buf, sizeof(buf), "%smodel ideal\nmodel nccl\nentry allreduce 0 10 ring - - 1\n", H);
    bad("model twice", buf, ":5:1: expected one 'model' line (this is a second), found 'model'");
    snprintf(buf, sizeof(buf), "%smodel\nentry allreduce 0 10 ring - - 1\n", H);
    bad("model without a name", buf, ":4:6: expected a model name");
    snprintf(buf, sizeof(buf), "%sentry allreduce 0 10 ring - m0 1\n", H);
    bad("nomap", buf, ":4:29: expected the name of a map defined above");
    snprintf(buf, sizeof(buf), "%sentry allreduce 5 1 ring - - 1\n", H);
    bad("range", buf, ":4:19: expected a last byte count >= the first");
    snprintf(buf, sizeof(buf),
             "%sentry allreduce 0 10 ring - - 1\nentry allreduce 10 20 rhd - - 1\n", H);
    bad("overlap", buf, ":5:17: expected a range no other entry serves");
    snprintf(buf, sizeof(buf), "%sentry allreduce 0 10 ring -\n", H);
    bad("short", buf, ":4:28: expected a map name");
    snprintf(buf, sizeof(buf), "%sentry allreduce 0 10 ring - - 1 extra\n", H);
    bad("trailing", buf, ":4:33: expected the end of the line");
    snprintf(buf, sizeof(buf), "%sentry allsum 0 10 ring - - 1\n", H);
    bad("coll", buf, ":4:7: expected a collective");
    snprintf(buf, sizeof(buf), "%smap m0 3\na\nb\nc\n", H);
    bad("maplen", buf, ":4:8: expected 2 hosts");
    snprintf(buf, sizeof(buf), "%smap m0 2\na\n", H);
    bad("mapshort", buf, "expected 1 more host line of map m0");
    snprintf(buf, sizeof(buf), "%sentry allreduce 0 10 ring - - fast\n", H);
    bad("time", buf, ":4:31: expected a time in microseconds");
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return cs_test_finish();
}
