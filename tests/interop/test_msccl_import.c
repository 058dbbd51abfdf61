/*
 * test_msccl_import.c - MSCCL XML import: every file of tests/interop/xml
 * verifies and computes its collective (reference interpreter) in each
 * reading it allows; malformed files fail with FILE:LINE and the expected
 * words; wrong algorithms reach the verifier, whose findings map back to
 * the XML line, gpu, threadblock and step.
 *
 *   test_msccl_import XMLDIR
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_interp.h"
#include "cs_msccl.h"
#include "cs_test.h"
#include "cs_verify.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) {
        b[n] = '\0';
        *len = (size_t)n;
    }
    return b;
}

/* Verify and interpret one reading of a file. */
static void check_file(const char *path, int inplace)
{
    cs_msccl_opts_t o = {.inplace = inplace};
    cs_msccl_t *m = NULL;
    cs_err_t err = {0};
    int st = cs_msccl_load(path, &o, &m, &err);
    CS_TEST_CHECK(st == CS_OK, "%s (inplace %d): %s", path, inplace, err.msg);
    if (st != CS_OK)
        return;
    cs_verify_report_t rep = {0};
    st = cs_verify(m->sched, NULL, &rep, &err);
    CS_TEST_CHECK(st == CS_OK, "%s (inplace %d): %s", path, inplace,
                  rep.n ? rep.findings[0].msg : err.msg);
    cs_verify_report_fini(&rep);
    CS_TEST_CHECK(m->sched->desc.inplace == (inplace == 1), "%s: inplace %d", path,
                  m->sched->desc.inplace);
    uint64_t counts[] = {1, 7, 64, 1001};
    for (size_t i = 0; st == CS_OK && i < sizeof(counts) / sizeof(counts[0]); i++) {
        cs_interp_result_t res = {0};
        cs_op_t op = m->sched->desc.coll == CS_COLL_ALLREDUCE ||
                             m->sched->desc.coll == CS_COLL_REDUCE_SCATTER
                         ? CS_OP_SUM
                         : CS_OP_MAX;
        int ist = cs_interp_run(m->sched, CS_DT_I32, op, counts[i], &res, &err);
        CS_TEST_CHECK(ist == CS_OK && res.wrong == 0, "%s count %llu: %s %llu wrong", path,
                      (unsigned long long)counts[i], ist == CS_OK ? "" : err.msg,
                      (unsigned long long)res.wrong);
    }
    /* every step has an origin inside the file */
    for (int r = 0; r < m->nranks; r++) {
        CS_TEST_CHECK(m->norigin[r] == m->sched->ranks[r].nsteps, "%s rank %d origins", path, r);
        for (uint32_t i = 0; i < m->norigin[r]; i++)
            if (m->origin[r][i].line == 0 || m->origin[r][i].gpu != r) {
                CS_TEST_CHECK(0, "%s rank %d step %u: origin line %u gpu %d", path, r, i,
                              m->origin[r][i].line, m->origin[r][i].gpu);
                break;
            }
    }
    cs_msccl_destroy(m);
}

static void files(const char *dir)
{
    DIR *d = opendir(dir);
    CS_TEST_CHECK(d != NULL, "cannot open %s", dir);
    if (d == NULL)
        return;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".xml") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        size_t len = 0;
        char *text = slurp(path, &len);
        CS_TEST_CHECK(text != NULL && cs_msccl_detect(text, len), "%s: not detected", path);
        int in = text && strstr(text, "inplace=\"1\"") != NULL;
        int out = text && strstr(text, "outofplace=\"1\"") != NULL;
        free(text);
        if (out)
            check_file(path, 0);
        if (in && !strstr(path, "reducescatter"))
            check_file(path, 1);
        if (in && !out) /* served out of place: the input copied first */
            check_file(path, 2);
        n++;
    }
    closedir(d);
    CS_TEST_CHECK(n >= 8, "only %d XML files in %s", n, dir);
}

/* ---- malformed input ------------------------------------------------------- */

#define HEAD "<?xml version=\"1.0\"?>\n"
#define ALGO(extra)                                                                        \
    "<algo name=\"t\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"2\" " \
    "coll=\"allreduce\" inplace=\"0\" outofplace=\"1\" minBytes=\"0\" maxBytes=\"0\"" extra ">\n"
#define GPU(id) "<gpu id=\"" #id "\" i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"1\">\n"
#define TB(id, send, recv) \
    "<tb id=\"" #id "\" send=\"" #send "\" recv=\"" #recv "\" chan=\"0\">\n"
#define STEP(s, type, sb, so, db, dof, cnt, depid, deps, hasdep)                           \
    "<step s=\"" #s "\" type=\"" type "\" srcbuf=\"" sb "\" srcoff=\"" #so "\" dstbuf=\"" \
    db "\" dstoff=\"" #dof "\" cnt=\"" #cnt "\" depid=\"" #depid "\" deps=\"" #deps        \
    "\" hasdep=\"" #hasdep "\"/>\n"
#define GPU1_OK GPU(1) TB(0, -1, -1) STEP(0, "cpy", "i", 0, "o", 0, 2, -1, -1, 0) "</tb></gpu>\n"

static const struct {
    const char *text;
    const char *expect; /* substring of the message, "t.xml:LINE: ..." */
} bad[] = {
    {"", "t.xml:1: malformed XML"},
    {HEAD ALGO("") GPU(0) TB(0, -1, -1), "t.xml:5: malformed XML"},
    {HEAD "<algo name=\"x\" <gpu/>", "t.xml:2: malformed XML"},
    {HEAD "<graph/>\n", "t.xml:2: expected the root element <algo>, found <graph>"},
    {HEAD ALGO("") GPU(0) TB(0, -1, -1) STEP(0, "sned", "i", 0, "o", 0, 1, -1, -1, 0)
         "</tb></gpu>" GPU1_OK "</algo>",
     "t.xml:5: type: expected a step type (s, r, rcs, rrs, rrc, rrcs, cpy, re, nop), found 'sned'"},
    {HEAD ALGO("") GPU(0) TB(0, -1, -1) STEP(0, "cpy", "x", 0, "o", 0, 1, -1, -1, 0)
         "</tb></gpu>" GPU1_OK "</algo>",
     "t.xml:5: srcbuf: expected a buffer i, o or s, found 'x'"},
    {HEAD ALGO("") GPU(0) TB(0, -1, -1) STEP(0, "cpy", "i", 1, "o", 0, 2, -1, -1, 0)
         "</tb></gpu>" GPU1_OK "</algo>",
     "t.xml:5: gpu 0 tb 0 step 0 (cpy): source i[1:3] out of range: gpu 0 has i_chunks=\"2\""},
    {HEAD ALGO("") GPU(0) TB(0, -1, -1) STEP(0, "cpy", "i", 0, "s", 1, 1, -1, -1, 0)
         "</tb></gpu>" GPU1_OK "</algo>",
     "t.xml:5: gpu 0 tb 0 step 0 (cpy): destination s[1:2] out of range"},
    {HEAD ALGO("") GPU(0) TB(0, -1, -1) STEP(0, "cpy", "i", 0, "o", 0, 2, 1, 0, 0)
         "</tb></gpu>" GPU1_OK "</algo>",
     "t.xml:5: gpu 0 tb 0 step 0 (cpy): dangling dependency on tb 1 step 0"},
    {HEAD ALGO("") GPU(0) TB(0, -1, -1) STEP(0, "cpy", "i", 0, "o", 0, 2, -1, -1, 0) "</tb>"
         TB(1, -1, -1) STEP(0, "nop", "i", -1, "o", -1, 0, 0, 0, 0) STEP(1, "cpy", "i", 0, "o", 0,
                                                                            2, 0, 0, 0)
             "</tb></gpu>" GPU1_OK "</algo>",
     "t.xml:7: gpu 0 tb 1 step 0 (nop) waits for tb 0 step 0, but no step of that threadblock "
     "from 0 on has hasdep=\"1\""},
    {HEAD ALGO("") GPU(0) TB(0, -1, -1) STEP(0, "cpy", "i", 0, "o", 0, 2, 1, 0, 1) "</tb>"
         TB(1, -1, -1) STEP(0, "cpy", "i", 0, "o", 0, 2, 0, 0, 1) "</tb></gpu>" GPU1_OK "</algo>",
     "gpu 0: cyclic dependencies between threadblocks: tb 0 step 0 (line 5) waits for tb 1 step 0; "
     "tb 1 step 0 (line 7) waits for tb 0 step 0"},
    {HEAD ALGO("") GPU(0) TB(0, -1, -1) STEP(0, "cpy", "i", 0, "o", 0, 2, -1, -1, 0)
         "</tb></gpu>\n</algo>",
     "t.xml:2: ngpus=\"2\" but the algo has 1 <gpu> elements (gpu 1 is missing)"},
    {HEAD ALGO("") GPU1_OK GPU1_OK "</algo>", "t.xml:7: gpu 1 appears twice (first at line 3)"},
    {HEAD ALGO("") GPU(2) "</gpu>" GPU1_OK "</algo>",
     "t.xml:3: gpu id 2 out of range: the algo has ngpus=\"2\""},
    {HEAD ALGO("") GPU(0) TB(0, 0, -1) "</tb></gpu>" GPU1_OK "</algo>",
     "t.xml:4: threadblock 0 of gpu 0 names the gpu itself as its peer"},
    {HEAD ALGO("") GPU(0) TB(0, -1, -1) STEP(0, "s", "i", 0, "o", 0, 1, -1, -1, 0)
         "</tb></gpu>" GPU1_OK "</algo>",
     "t.xml:5: gpu 0 tb 0 step 0 (s) sends, but the threadblock has send=\"-1\""},
    {HEAD ALGO("") GPU(0) TB(0, 1, -1) "</tb>" TB(1, 1, -1) "</tb></gpu>" GPU1_OK "</algo>",
     "t.xml:5: threadblocks 0 and 1 of gpu 0 both send to gpu 1 on channel 0"},
    {HEAD ALGO("") GPU(0) TB(1, -1, -1) "</tb></gpu>" GPU1_OK "</algo>",
     "t.xml:4: threadblock id 1 of gpu 0: expected each of 0 to 0 once"},
    {HEAD ALGO("") GPU(0) TB(0, -1, -1) STEP(1, "cpy", "i", 0, "o", 0, 2, -1, -1, 0)
         "</tb></gpu>" GPU1_OK "</algo>",
     "t.xml:5: s: expected step 0 of threadblock 0, found 1"},
    {HEAD ALGO("") GPU(0) TB(0, -1, -1) STEP(0, "cpy", "i", 0, "o", 1, 1, -1, -1, 0)
         "</tb></gpu>" GPU1_OK "</algo>",
     "t.xml:5: gpu 0 tb 0 step 0 (cpy): gpu 0 i[0] (chunk 0 of the vector) and gpu 0 o[1] "
     "(chunk 1) would hold the same data"},
    {HEAD "<algo name=\"t\" nchunksperloop=\"2\" ngpus=\"x\" coll=\"allreduce\">\n</algo>",
     "t.xml:2: ngpus: expected an integer, found 'x'"},
    {HEAD "<algo name=\"t\" nchunksperloop=\"2\" ngpus=\"2\">\n</algo>",
     "t.xml:2: <algo> lacks the attribute coll"},
    {HEAD ALGO("") GPU(0) "<tbx/></gpu>" GPU1_OK "</algo>", "t.xml:4: expected <tb>, found <tbx>"},
    {HEAD "<algo name=\"t\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"2\" "
          "coll=\"custom\" inplace=\"0\">\n" GPU(0) "</gpu>" GPU1_OK "</algo>",
     "t.xml:2: coll=\"custom\": collstep checks allreduce, reducescatter, allgather and alltoall"},
    {HEAD ALGO(" proto=\"LL256\"") "</algo>", "t.xml:2: malformed XML"},
    {HEAD "<algo name=\"t\" proto=\"LL256\" nchunksperloop=\"2\" ngpus=\"2\" "
          "coll=\"allreduce\">\n</algo>",
     "t.xml:2: proto: expected Simple, LL or LL128, found 'LL256'"},
    {HEAD "<algo name=\"t\" nchunksperloop=\"3\" ngpus=\"2\" coll=\"allgather\">\n" GPU(0) "</gpu>"
          GPU(1) "</gpu></algo>",
     "t.xml:2: nchunksperloop=\"3\" is not a multiple of ngpus=\"2\""},
    {HEAD "<algo name=\"t\" nchunksperloop=\"2\" ngpus=\"2\" coll=\"allreduce\" "
          "minBytes=\"100\" maxBytes=\"10\">\n</algo>",
     "t.xml:2: maxBytes 10 is below minBytes 100"},
};

static void malformed(void)
{
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cs_msccl_t *m = NULL;
        cs_err_t err = {0};
        int st = cs_msccl_parse(bad[i].text, strlen(bad[i].text), "t.xml", NULL, &m, &err);
        CS_TEST_CHECK(st == CS_ERR_PARSE || st == CS_ERR_UNSUPPORTED, "case %zu: status %s", i,
                      cs_status_name(st));
        CS_TEST_CHECK(strstr(err.msg, bad[i].expect) != NULL, "case %zu: expected '%s', got '%s'",
                      i, bad[i].expect, err.msg);
        CS_TEST_CHECK(strncmp(err.msg, "t.xml:", 6) == 0, "case %zu: no file:line in '%s'", i,
                      err.msg);
        cs_msccl_destroy(m);
    }
}

/* ---- wrong algorithms: the verifier, with origins ------------------------- */

static char *replace(const char *text, const char *from, const char *to)
{
    const char *p = strstr(text, from);
    if (p == NULL)
        return NULL;
    size_t a = (size_t)(p - text), lf = strlen(from), lt = strlen(to);
    char *out = malloc(strlen(text) - lf + lt + 1);
    memcpy(out, text, a);
    memcpy(out + a, to, lt);
    strcpy(out + a + lt, p + lf);
    return out;
}

/* Import the ring with one edit; the verifier must report `kind`, and the
 * first finding's step must map to `where` (a substring of its origin). */
static void wrong(const char *ring, const char *from, const char *to, const char *kind,
                  const char *where)
{
    char *text = replace(ring, from, to);
    CS_TEST_CHECK(text != NULL, "edit '%s' not found", from);
    if (text == NULL)
        return;
    FILE *f = fopen("wrong_ring.xml", "w");
    fputs(text, f);
    fclose(f);
    free(text);
    cs_err_t err = {0};
    cs_sched_t *s = cs_msccl_load_sched("wrong_ring.xml", &err);
    CS_TEST_CHECK(s != NULL, "%s: %s", kind, err.msg);
    if (s == NULL)
        return;
    cs_verify_report_t rep = {0};
    int st = cs_verify(s, NULL, &rep, &err);
    CS_TEST_CHECK(st == CS_ERR_VERIFY, "%s: verifier said %s", kind, cs_status_name(st));
    int seen = 0;
    for (uint32_t i = 0; i < rep.n; i++) {
        if (strcmp(rep.findings[i].kind, kind) != 0 || seen)
            continue;
        seen = 1;
        char where_s[1024];
        int found = cs_msccl_origin_of(s, rep.findings[i].rank, rep.findings[i].step, where_s,
                                       sizeof(where_s));
        if (where) {
            CS_TEST_CHECK(found && strstr(where_s, where) != NULL,
                          "%s: finding '%s' maps to '%s', expected '%s'", kind,
                          rep.findings[i].msg, where_s, where);
        }
    }
    CS_TEST_CHECK(seen, "%s: no such finding (first: %s)", kind,
                  rep.n ? rep.findings[0].msg : "none");
    cs_verify_report_fini(&rep);
    cs_msccl_forget(s);
    char tmp[8];
    CS_TEST_CHECK(cs_msccl_origin_of(s, 0, 0, tmp, sizeof(tmp)) == 0, "forgotten, yet found");
    cs_sched_destroy(s);
    remove("wrong_ring.xml");
}

static void wrong_algorithms(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/allreduce_ring4.xml", dir);
    size_t len = 0;
    char *ring = slurp(path, &len);
    CS_TEST_CHECK(ring != NULL, "cannot read %s", path);
    if (ring == NULL)
        return;
    /* gpu 1 forwards instead of reducing: its contribution to chunk 0 is lost */
    wrong(ring,
          "<step s=\"2\" type=\"rrcs\" srcbuf=\"o\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\"",
          "<step s=\"2\" type=\"rcs\" srcbuf=\"o\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\"",
          "missing", NULL);
    /* gpu 3 never receives the last chunk: gpu 2's send has no partner */
    wrong(ring,
          "<step s=\"7\" type=\"r\" srcbuf=\"o\" srcoff=\"1\" dstbuf=\"o\" dstoff=\"1\" cnt=\"1\" "
          "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>",
          "", "unmatched", "gpu 2 tb 0 step 6");
    /* both gpus receive before they send: a cycle across gpus */
    static const char swap[] =
        HEAD "<algo name=\"t\" nchunksperloop=\"2\" ngpus=\"2\" coll=\"allgather\">\n"
        "<gpu id=\"0\" i_chunks=\"1\" o_chunks=\"2\">\n" TB(0, 1, 1)
        STEP(0, "cpy", "i", 0, "o", 0, 1, -1, -1, 0) STEP(1, "r", "i", -1, "o", 1, 1, -1, -1, 0)
        STEP(2, "s", "o", 0, "o", -1, 1, -1, -1, 0) "</tb></gpu>\n"
        "<gpu id=\"1\" i_chunks=\"1\" o_chunks=\"2\">\n" TB(0, 0, 0)
        STEP(0, "cpy", "i", 0, "o", 1, 1, -1, -1, 0) STEP(1, "r", "i", -1, "o", 0, 1, -1, -1, 0)
        STEP(2, "s", "o", 1, "o", -1, 1, -1, -1, 0) "</tb></gpu>\n</algo>\n";
    wrong(swap, "<algo", "<algo", "deadlock", "wrong_ring.xml:6: gpu 0 tb 0 step 1");
    free(ring);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_msccl_import XMLDIR\n");
        return 2;
    }
    files(argv[1]);
    malformed();
    wrong_algorithms(argv[1]);
    return cs_test_finish();
}
