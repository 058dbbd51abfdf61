/*
 * Round trips of builder-made schedules: for random schedules of every
 * collective (scratch buffers, all step kinds, channels, dependency lists,
 * buffers named like keywords, odd algorithm metadata, groups named like
 * keywords and switch steps of every operation), write -> parse ->
 * write must give the same bytes and the same schedule.  Also: atomic save
 * and load through files, and their I/O errors.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cs_test.h"
#include "cs_text.h"
#include "sched_same.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? (uint32_t)(rng % n) : 0;
}

static const char *const metas[][2] = {
    {"ring", "pipeline=2"},
    {"", "orphan=params"},
    {"two words", "k=v"},
    {"x#y\tz", "a=1\n\nb=#2"},
    {"ctl\x01", "u=\xc3\xbc  v=\x7f"},
    {"   ", ""},
    {"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk",
     "p=0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567"
     "89012345678901234567890123456789012345678901234567890123456789012345678901234567890123456"
     "789012345678901234567890123456789012345678901234567890123456789"},
};

static cs_range_t rand_range(const cs_rank_sched_t *rk, int b)
{
    uint32_t n = rk->bufs[b].nchunks, off = rnd(n);
    return cs_rng(b, off, 1 + rnd(n - off));
}

/* A random destination with the shape and length of src, if one exists. */
static int matching_range(const cs_sched_t *s, const cs_rank_sched_t *rk, cs_range_t src,
                          cs_range_t *dst)
{
    uint32_t k = cs_sched_block_chunks(s);
    uint32_t want = (rk->bufs[src.buf].base + src.off) % k;
    for (int tries = 0; tries < 20; tries++) {
        int b = (int)rnd(rk->nbufs);
        const cs_buffer_t *bf = &rk->bufs[b];
        if (bf->nchunks < src.n)
            continue;
        uint32_t off = rnd(bf->nchunks - src.n + 1);
        if ((bf->base + off) % k == want) {
            *dst = cs_rng(b, off, src.n);
            return 1;
        }
    }
    return 0;
}

static cs_sched_t *random_sched(int iter)
{
    static const char *const names[] = {"tmp", "chan", "after", "to", "_x9", "rank"};
    cs_coll_desc_t d = {(cs_coll_t)rnd(CS_COLL_COUNT), 1 + (int)rnd(6), 0, 0};
    uint32_t B = cs_coll_blocked(d.coll) ? (uint32_t)d.nranks : 1, k = 1 + rnd(3);
    if (cs_coll_has_root(d.coll))
        d.root = (int)rnd((uint32_t)d.nranks);
    d.inplace = d.coll != CS_COLL_REDUCE_SCATTER && rnd(2);
    cs_err_t err = {0};
    cs_sched_t *s = cs_sched_create(&d, B * k, &err);
    CS_TEST_CHECK(s != NULL, "create: %s", err.msg);
    if (s == NULL)
        return NULL;
    const char *const *m = metas[iter % (int)(sizeof(metas) / sizeof(metas[0]))];
    cs_sched_set_meta(s, m[0], m[1]);
    /* every other schedule has groups (format version 2) */
    uint32_t ngroups = iter % 2 ? 1 + rnd(3) : 0;
    for (uint32_t g = 0; g < ngroups; g++) {
        int32_t mem[8];
        uint32_t n = 0;
        for (int r = 0; r < d.nranks; r++)
            if (rnd(3) != 0 || (n == 0 && r + 1 == d.nranks))
                mem[n++] = r;
        CS_TEST_CHECK(cs_sched_add_group(s, names[(g + (uint32_t)iter) % 6], mem, n) == (int)g,
                      "group: %s", s->err.msg);
    }
    for (int r = 0; r < d.nranks; r++) {
        uint32_t nscratch = rnd(3);
        for (uint32_t i = 0; i < nscratch; i++)
            cs_sched_add_buffer(s, r, names[(i + rnd(6)) % 6], rnd(B * k + 2), 1 + rnd(4));
        cs_sched_status(s) != CS_OK ? (void)cs_err_clear(&s->err) : (void)0;
        const cs_rank_sched_t *rk = &s->ranks[r];
        uint32_t nsteps = rnd(12);
        for (uint32_t i = 0; i < nsteps; i++) {
            uint32_t deps[4], nd = i ? rnd(5) : 0;
            for (uint32_t j = 0; j < nd; j++)
                deps[j] = rnd(i);
            int peer = (int)rnd((uint32_t)d.nranks);
            int chan = rnd(4) == 0 ? (int)rnd(CS_MAX_CHANNELS) : 0;
            cs_range_t src = rand_range(rk, (int)rnd(rk->nbufs)), dst;
            int64_t rc;
            switch (rnd(ngroups ? 8 : 6)) {
            case 0:
                rc = cs_send(s, r, peer, chan, src, deps, nd);
                break;
            case 1:
                rc = cs_recv(s, r, peer, chan, src, deps, nd);
                break;
            case 2:
                rc = cs_rrecv(s, r, peer, chan, src, deps, nd);
                break;
            case 6:
            case 7: {
                int g = (int)rnd(ngroups);
                cs_swop_t op = (cs_swop_t)rnd(CS_SW_COUNT);
                int has_dst = matching_range(s, rk, src, &dst), want_src = 1;
                if (cs_group_member(&s->groups[g], r) >= 0 && has_dst) {
                    if (op == CS_SW_REDUCE)
                        has_dst = (int)rnd(2);
                    else if (op == CS_SW_MULTICAST)
                        want_src = (int)rnd(2), has_dst = !want_src || rnd(2);
                    rc = cs_switch(s, r, op, g, chan, want_src ? &src : NULL,
                                   has_dst ? &dst : NULL, deps, nd);
                    break;
                }
                rc = cs_nop(s, r, deps, nd);
                break;
            }
            case 3:
            case 4:
                if (matching_range(s, rk, src, &dst)) {
                    rc = rnd(2) ? cs_reduce(s, r, src, dst, deps, nd)
                                : cs_copy(s, r, src, dst, deps, nd);
                    break;
                }
                /* fall through */
            default:
                rc = cs_nop(s, r, deps, nd);
                break;
            }
            CS_TEST_CHECK(rc == (int64_t)i, "builder: %s", s->err.msg);
        }
    }
    return s;
}

static void test_random_round_trips(void)
{
    uint64_t nswitch = 0;
    for (int iter = 0; iter < 300; iter++) {
        cs_sched_t *s = random_sched(iter), *s2 = NULL, *s3 = NULL;
        nswitch += s != NULL ? s->nswitch : 0;
        size_t l1 = 0, l2 = 0;
        char *t1 = NULL, *t2 = NULL;
        cs_err_t err = {0};
        if (s == NULL)
            continue;
        t1 = cs_test_write_mem(s, &l1);
        CS_TEST_CHECK(t1 != NULL, "iter %d: write", iter);
        if (t1 == NULL)
            goto next;
        s2 = cs_sched_parse(t1, l1, "rt", &err);
        CS_TEST_CHECK(s2 != NULL, "iter %d: %s\n%.*s", iter, err.msg, (int)l1, t1);
        if (s2 == NULL)
            goto next;
        const char *diff = cs_test_sched_diff(s, s2);
        CS_TEST_CHECK(diff == NULL, "iter %d: %s differs", iter, diff);
        t2 = cs_test_write_mem(s2, &l2);
        CS_TEST_CHECK(t2 != NULL && l1 == l2 && memcmp(t1, t2, l1) == 0,
                      "iter %d: text changed:\n%.*s\n---\n%.*s", iter, (int)l1, t1, (int)l2,
                      t2 ? t2 : "");
        if (iter % 7 == 0) { /* clean metadata survives exactly */
            CS_TEST_CHECK(strcmp(s2->algo, "ring") == 0 && strcmp(s2->params, "pipeline=2") == 0,
                          "iter %d: meta '%s' '%s'", iter, s2->algo, s2->params);
        }
        if (iter % 7 == 1) /* parameters without a name are not written */
            CS_TEST_CHECK(s2->algo[0] == '\0' && s2->params[0] == '\0', "orphan params");
        if (iter % 7 == 3)
            CS_TEST_CHECK(strcmp(s2->algo, "x?y") == 0 && strcmp(s2->params, "z a=1 b=?2") == 0,
                          "sanitised meta '%s' '%s'", s2->algo, s2->params);
    next:
        free(t1);
        free(t2);
        cs_sched_destroy(s3);
        cs_sched_destroy(s2);
        cs_sched_destroy(s);
    }
    CS_TEST_CHECK(nswitch > 100, "only %llu switch steps were made", (unsigned long long)nswitch);
}

static int count_entries(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void test_files(void)
{
    char dir[256], path[300], bad[320];
    cs_test_tmp(dir, sizeof(dir), "cs_text_test_XXXXXX");
    cs_err_t err = {0};
    CS_TEST_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof(path), "%s/a.sched", dir);
    cs_sched_t *s = random_sched(0), *s2 = NULL;
    if (s == NULL)
        return;
    CS_TEST_CHECK(cs_sched_save(s, path, &err) == CS_OK, "save: %s", err.msg);
    CS_TEST_CHECK(count_entries(dir) == 1, "save left %d entries", count_entries(dir));
    s2 = cs_sched_load(path, &err);
    CS_TEST_CHECK(s2 != NULL && cs_test_sched_diff(s2, s) == NULL, "load: %s", err.msg);
    cs_sched_destroy(s2);
    /* Saving over an existing file replaces it. */
    cs_sched_t *t = random_sched(1);
    CS_TEST_CHECK(t && cs_sched_save(t, path, &err) == CS_OK, "save over: %s", err.msg);
    s2 = cs_sched_load(path, &err);
    CS_TEST_CHECK(s2 && t && cs_test_sched_diff(s2, t) == NULL, "replaced: %s", err.msg);
    cs_sched_destroy(s2);
    cs_sched_destroy(t);
    /* A directory that does not exist: refused (CS_ERR_EXISTS: a refused
     * output path), nothing left behind. */
    snprintf(bad, sizeof(bad), "%s/missing/b.sched", dir);
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_sched_save(s, bad, &err) == CS_ERR_EXISTS &&
                      strstr(err.msg, "does not exist"),
                  "save into a missing dir: %s", err.msg);
    CS_TEST_CHECK(count_entries(dir) == 1, "failed save left files");
    /* A path that is a directory: the rename fails and the temp is removed. */
    snprintf(bad, sizeof(bad), "%s/sub", dir);
    CS_TEST_CHECK(mkdir(bad, 0700) == 0, "mkdir");
    char inner[400];
    snprintf(inner, sizeof(inner), "%s/x", bad);
    FILE *f = fopen(inner, "w");
    if (f)
        fclose(f);
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_sched_save(s, bad, &err) == CS_ERR_EXISTS && strstr(err.msg, "is a directory"),
                  "save over a directory: %s", err.msg);
    CS_TEST_CHECK(count_entries(dir) == 2, "temp file left after a failed rename");
    /* Loading: missing file, directory, empty file. */
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_sched_load(bad, &err) == NULL && err.code == CS_ERR_IO, "load dir: %s",
                  err.msg);
    snprintf(bad, sizeof(bad), "%s/none.sched", dir);
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_sched_load(bad, &err) == NULL && err.code == CS_ERR_IO &&
                      strstr(err.msg, "none.sched: cannot open"),
                  "load missing: %s", err.msg);
    f = fopen(bad, "w");
    if (f)
        fclose(f);
    cs_err_clear(&err);
    char want[512];
    snprintf(want, sizeof(want), "%s:1:1: expected 'collstep-schedule', found end of file", bad);
    CS_TEST_CHECK(cs_sched_load(bad, &err) == NULL && strcmp(err.msg, want) == 0,
                  "load empty: %s", err.msg);
    /* A stream that fails: /dev/full. */
    f = fopen("/dev/full", "w");
    if (f != NULL) {
        CS_TEST_CHECK(cs_sched_write(s, f) == CS_ERR_IO, "write to /dev/full");
        fclose(f);
    }
    CS_TEST_CHECK(cs_sched_write(NULL, stdout) == CS_ERR_INVAL, "write NULL");
    unlink(bad);
    unlink(inner);
    snprintf(bad, sizeof(bad), "%s/sub", dir);
    rmdir(bad);
    unlink(path);
    rmdir(dir);
    cs_sched_destroy(s);
}

/* "-" loads from standard input and saves to standard output. */
static void test_std_streams(void)
{
    char path[512];
    cs_test_tmp(path, sizeof(path), "cs_text_std_XXXXXX");
    cs_err_t err = {0};
    cs_sched_t *s = random_sched(2), *s2 = NULL;
    int fd = mkstemp(path), saved = dup(STDOUT_FILENO);
    CS_TEST_CHECK(s != NULL && fd >= 0 && saved >= 0, "setup");
    if (s == NULL || fd < 0 || saved < 0)
        goto out;
    fflush(stdout);
    dup2(fd, STDOUT_FILENO);
    int rc = cs_sched_save(s, "-", &err);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    CS_TEST_CHECK(rc == CS_OK, "save to stdout: %s", err.msg);
    int in = open(path, O_RDONLY), saved_in = dup(STDIN_FILENO);
    CS_TEST_CHECK(in >= 0 && saved_in >= 0, "reopen");
    if (in >= 0 && saved_in >= 0) {
        dup2(in, STDIN_FILENO);
        s2 = cs_sched_load("-", &err);
        dup2(saved_in, STDIN_FILENO);
    }
    CS_TEST_CHECK(s2 != NULL && cs_test_sched_diff(s, s2) == NULL, "load from stdin: %s",
                  err.msg);
    if (in >= 0)
        close(in);
    if (saved_in >= 0)
        close(saved_in);
out:
    if (fd >= 0)
        close(fd);
    if (saved >= 0)
        close(saved);
    unlink(path);
    cs_sched_destroy(s2);
    cs_sched_destroy(s);
}

int main(void)
{
    test_random_round_trips();
    test_files();
    test_std_streams();
    return cs_test_finish();
}
