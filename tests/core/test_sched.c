/* Builder API: windows, validation, sticky errors, chunk arithmetic. */
#include <string.h>

#include "cs_sched.h"
#include "cs_test.h"

static void test_windows(void)
{
    cs_coll_desc_t d = {CS_COLL_ALLGATHER, 4, 0, 0};
    cs_err_t err = {0};
    cs_sched_t *s = cs_sched_create(&d, 8, &err);
    CS_TEST_CHECK(s != NULL, "%s", err.msg);
    if (!s)
        return;
    CS_TEST_CHECK(s->nblocks == 4 && cs_sched_block_chunks(s) == 2, "blocks %u", s->nblocks);
    CS_TEST_CHECK(s->ranks[3].bufs[CS_BUF_IN].base == 6 && s->ranks[3].bufs[CS_BUF_IN].nchunks == 2,
                  "allgather in window of rank 3");
    CS_TEST_CHECK(s->ranks[3].bufs[CS_BUF_OUT].base == 0 && s->ranks[3].bufs[CS_BUF_OUT].nchunks == 8,
                  "allgather out window");
    /* count 5 per block, 2 chunks per block: chunk sizes 2,3 in every block */
    CS_TEST_CHECK(cs_chunk_start(s, 5, 1) == 2 && cs_chunk_start(s, 5, 2) == 5 &&
                      cs_chunk_start(s, 5, 8) == 20,
                  "chunk starts");
    CS_TEST_CHECK(cs_range_elems(s, &s->ranks[3].bufs[CS_BUF_IN], 5, 1, 1) == 3, "elems");
    cs_sched_destroy(s);

    d.coll = CS_COLL_ALLGATHER;
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_sched_create(&d, 6, &err) == NULL && err.code == CS_ERR_INVAL,
                  "6 chunks are not a multiple of 4 ranks");
    d.coll = CS_COLL_BROADCAST;
    d.root = 4;
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_sched_create(&d, 6, &err) == NULL && strstr(err.msg, "root") != NULL,
                  "root out of range: %s", err.msg);
}

static void test_steps(void)
{
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, 2, 0, 0};
    cs_sched_t *s = cs_sched_create(&d, 4, NULL);
    CS_TEST_CHECK(s != NULL, "create");
    if (!s)
        return;
    int tmp = cs_sched_add_buffer(s, 0, "tmp", 0, 2);
    CS_TEST_CHECK(tmp == 2, "scratch id %d", tmp);
    int64_t a = cs_send(s, 0, 1, 0, cs_rng(CS_BUF_IN, 0, 2), NULL, 0);
    uint32_t dep = (uint32_t)a;
    int64_t b = cs_recv(s, 0, 1, 0, cs_rng(tmp, 0, 2), &dep, 1);
    CS_TEST_CHECK(a == 0 && b == 1, "indices %lld %lld", (long long)a, (long long)b);
    CS_TEST_CHECK(s->ranks[0].steps[1].ndeps == 1 && cs_step_deps(&s->ranks[0], &s->ranks[0].steps[1])[0] == 0,
                  "dependency stored");
    /* shape mismatch: chunk 0 of tmp onto chunk 1 of out */
    CS_TEST_CHECK(cs_copy(s, 0, cs_rng(tmp, 0, 1), cs_rng(CS_BUF_OUT, 1, 1), NULL, 0) < 0,
                  "shape mismatch rejected");
    CS_TEST_CHECK(s->err.code == CS_ERR_RANGE && strstr(s->err.msg, "shape"), "%s", s->err.msg);
    /* sticky: later valid calls do nothing */
    CS_TEST_CHECK(cs_nop(s, 0, NULL, 0) < 0, "sticky error");
    cs_sched_destroy(s);

    s = cs_sched_create(&d, 4, NULL);
    CS_TEST_CHECK(cs_send(s, 0, 2, 0, cs_rng(CS_BUF_IN, 0, 1), NULL, 0) < 0, "peer out of range");
    cs_sched_destroy(s);
    s = cs_sched_create(&d, 4, NULL);
    CS_TEST_CHECK(cs_send(s, 0, 1, 0, cs_rng(CS_BUF_IN, 3, 2), NULL, 0) < 0, "range out of bounds");
    cs_sched_destroy(s);
    s = cs_sched_create(&d, 4, NULL);
    uint32_t later = 0;
    CS_TEST_CHECK(cs_nop(s, 1, &later, 1) < 0 && strstr(s->err.msg, "earlier"), "self dependency");
    cs_sched_destroy(s);
    cs_sched_destroy(NULL);
}

static void test_names(void)
{
    CS_TEST_CHECK(cs_coll_parse("reduce_scatter") == CS_COLL_REDUCE_SCATTER, "alias");
    CS_TEST_CHECK(cs_coll_parse("AllReduce") == CS_COLL_ALLREDUCE, "case");
    CS_TEST_CHECK(cs_coll_parse("bogus") == CS_COLL_COUNT, "unknown");
    CS_TEST_CHECK(strcmp(cs_coll_name(CS_COLL_ALLTOALL), "alltoall") == 0, "name");
    double f = cs_coll_busbw_factor(CS_COLL_ALLREDUCE, 4);
    CS_TEST_CHECK(f > 1.4999 && f < 1.5001, "busbw factor %g", f);
    CS_TEST_CHECK(cs_coll_block_count(CS_COLL_ALLGATHER, 4, 100, 4) == 6, "block count");
}

int main(void)
{
    test_windows();
    test_steps();
    test_names();
    return cs_test_finish();
}
