/*
 * Golden schedule files: every .sched file of GOLDEN_DIR is canonical text, so
 * load + write must reproduce it byte for byte, and parsing that output
 * again must give the same bytes and the same schedule.  Every LOOSE_DIR/X.txt
 * is a hand-formatted (comments, spacing, short ranges) version of
 * GOLDEN_DIR/X.sched and must write out exactly as that file.
 *
 * usage: test_text_golden GOLDEN_DIR LOOSE_DIR
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "cs_test.h"
#include "cs_text.h"
#include "sched_same.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0;
    if (f == NULL)
        return NULL;
    for (;;) {
        if (n == cap) {
            char *nb = realloc(buf, cap ? cap * 2 : 4096);
            if (nb == NULL)
                break;
            buf = nb;
            cap = cap ? cap * 2 : 4096;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    fclose(f);
    *len = n;
    return buf;
}

static int has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a > b && strcmp(s + a - b, suf) == 0;
}

/* Parse `path`, write it, compare with the bytes of `expect_path`. */
static void check_file(const char *path, const char *expect_path)
{
    size_t elen = 0, olen = 0, o2len = 0;
    cs_err_t err = {0};
    char *expect = slurp(expect_path, &elen);
    cs_sched_t *s = cs_sched_load(path, &err), *s2 = NULL;
    char *out = NULL, *out2 = NULL;
    CS_TEST_CHECK(expect != NULL, "cannot read %s", expect_path);
    CS_TEST_CHECK(s != NULL, "%s", err.msg);
    if (expect == NULL || s == NULL)
        goto done;
    out = cs_test_write_mem(s, &olen);
    CS_TEST_CHECK(out != NULL, "%s: write failed", path);
    if (out == NULL)
        goto done;
    CS_TEST_CHECK(olen == elen && memcmp(out, expect, elen) == 0,
                  "%s: written text differs from %s:\n%.*s", path, expect_path, (int)olen, out);
    s2 = cs_sched_parse(out, olen, "written", &err);
    CS_TEST_CHECK(s2 != NULL, "%s: re-parse: %s", path, err.msg);
    if (s2 == NULL)
        goto done;
    const char *diff = cs_test_sched_diff(s, s2);
    CS_TEST_CHECK(diff == NULL, "%s: %s changed", path, diff);
    CS_TEST_CHECK(strcmp(s->algo, s2->algo) == 0 && strcmp(s->params, s2->params) == 0,
                  "%s: meta changed", path);
    out2 = cs_test_write_mem(s2, &o2len);
    CS_TEST_CHECK(out2 != NULL && o2len == olen && memcmp(out, out2, olen) == 0,
                  "%s: second write differs", path);
done:
    free(out2);
    free(out);
    cs_sched_destroy(s2);
    cs_sched_destroy(s);
    free(expect);
}

/* Run check_file on every file of `dir` ending with `suffix`. */
static int check_dir(const char *dir, const char *suffix, const char *golden_dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    CS_TEST_CHECK(d != NULL, "cannot open %s", dir);
    if (d == NULL)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!has_suffix(e->d_name, suffix))
            continue;
        char path[4096], expect[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        snprintf(expect, sizeof(expect), "%s/%.*s.sched", golden_dir,
                 (int)(strlen(e->d_name) - strlen(suffix)), e->d_name);
        check_file(path, expect);
        n++;
    }
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s GOLDEN_DIR LOOSE_DIR\n", argv[0]);
        return 2;
    }
    int ng = check_dir(argv[1], ".sched", argv[1]);
    int nl = check_dir(argv[2], ".txt", argv[1]);
    CS_TEST_CHECK(ng >= 4, "only %d golden files in %s", ng, argv[1]);
    CS_TEST_CHECK(nl >= 1, "only %d loose files in %s", nl, argv[2]);
    return cs_test_finish();
}
