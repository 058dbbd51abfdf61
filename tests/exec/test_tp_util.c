/*
 * test_tp_util.c - the transports' shared plumbing (exec/tp_util.h) on its
 * own:
 *
 *   pool     every record handed out once before the pool is empty, a
 *            record's generation constant while in use and bumped when it
 *            goes back, so a handle of an earlier use is stale (rejected)
 *            even after the record is taken again;
 *   FIFO     push / pop order, removal from head, middle and tail (the tail
 *            follows), matching by key (the oldest of a key first), release
 *            of a whole FIFO to its pool (generations bumped);
 *   ring     many times its capacity pushed and popped (positions wrap,
 *            order kept), taking back the entry pushed last only;
 *   unex     records and slots run out independently, slots reused.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../exec/tp_util.h"
#include "cs_status.h"
#include "cs_test.h"

typedef struct item {
    int payload;
    uint64_t key;
} item_t;

static int test_pool(void)
{
    cs_tp_pool_t p;
    CS_TEST_REQUIRE(cs_tp_pool_init(&p, 4) == CS_OK, "pool init");
    int seen[4] = {0};
    int32_t got[4];
    for (int k = 0; k < 4; k++) {
        got[k] = cs_tp_pool_get(&p);
        CS_TEST_REQUIRE(got[k] >= 0 && got[k] < 4 && !seen[got[k]], "get %d: %d", k, got[k]);
        seen[got[k]] = 1;
        CS_TEST_CHECK(p.next[got[k]] == -1, "a record taken is on no list");
    }
    CS_TEST_CHECK(cs_tp_pool_get(&p) == -1 && p.nfree == 0, "empty pool");
    int32_t i = got[2];
    uint32_t g = p.gen[i];
    CS_TEST_CHECK(cs_tp_pool_live(&p, (uint32_t)i, g), "handle of the current use");
    cs_tp_pool_put(&p, i);
    CS_TEST_CHECK(p.gen[i] == g + 1, "put bumps the generation");
    CS_TEST_CHECK(!cs_tp_pool_live(&p, (uint32_t)i, g), "handle of a use that ended: stale");
    int32_t j = cs_tp_pool_get(&p);
    CS_TEST_CHECK(j == i, "the record comes back");
    CS_TEST_CHECK(p.gen[j] == g + 1, "get does not bump");
    CS_TEST_CHECK(!cs_tp_pool_live(&p, (uint32_t)i, g), "old handle stays stale in the new use");
    CS_TEST_CHECK(cs_tp_pool_live(&p, (uint32_t)j, g + 1), "new handle live");
    CS_TEST_CHECK(!cs_tp_pool_live(&p, 4, 0) && !cs_tp_pool_live(&p, UINT32_MAX, 0),
                  "an index out of range is never live");
    p.gen[j] = UINT32_MAX; /* wrap-around of the counter */
    cs_tp_pool_put(&p, j);
    CS_TEST_CHECK(p.gen[j] == 0 && !cs_tp_pool_live(&p, (uint32_t)j, UINT32_MAX),
                  "generation wraps and the old handle is stale");
    cs_tp_pool_fini(&p);
    CS_TEST_CHECK(cs_tp_pool_init(&p, 0) == CS_ERR_INVAL, "an empty pool is refused");
    return 0;
}

static int test_fifo(void)
{
    cs_tp_pool_t p;
    CS_TEST_REQUIRE(cs_tp_pool_init(&p, 8) == CS_OK, "pool init");
    item_t it[8];
    memset(it, 0, sizeof(it));
    cs_tp_fifo_t f = CS_TP_FIFO_EMPTY;
    int32_t id[6];
    for (int k = 0; k < 6; k++) {
        id[k] = cs_tp_pool_get(&p);
        it[id[k]].key = (uint64_t)(k % 3); /* keys 0 1 2 0 1 2 */
        it[id[k]].payload = k;
        cs_tp_fifo_push(&f, p.next, id[k]);
    }
    /* take by key: the oldest of the key */
    int32_t a = cs_tp_fifo_take(&f, p.next, it, sizeof(item_t), offsetof(item_t, key), 1);
    CS_TEST_CHECK(a == id[1], "oldest of key 1 first");
    a = cs_tp_fifo_find(&f, p.next, it, sizeof(item_t), offsetof(item_t, key), 1);
    CS_TEST_CHECK(a == id[4], "find: then the next of key 1 (not removed)");
    CS_TEST_CHECK(cs_tp_fifo_find(&f, p.next, it, sizeof(item_t), offsetof(item_t, key), 9) ==
                      -1,
                  "no such key");
    /* remove head, tail, middle, absent */
    CS_TEST_CHECK(cs_tp_fifo_remove(&f, p.next, id[0]) && f.head == id[2], "remove the head");
    CS_TEST_CHECK(cs_tp_fifo_remove(&f, p.next, id[5]) && f.tail == id[4], "remove the tail");
    CS_TEST_CHECK(cs_tp_fifo_remove(&f, p.next, id[3]), "remove from the middle");
    CS_TEST_CHECK(!cs_tp_fifo_remove(&f, p.next, id[3]), "removed twice");
    /* what is left, in order: id[2], id[4]; a push after goes behind */
    cs_tp_fifo_push(&f, p.next, id[0]);
    int order[3] = {2, 4, 0}, n = 0;
    for (int32_t k; (k = cs_tp_fifo_pop(&f, p.next)) >= 0; n++)
        CS_TEST_CHECK(n < 3 && it[k].payload == order[n], "pop %d: %d", n, it[k].payload);
    CS_TEST_CHECK(n == 3 && f.head == -1 && f.tail == -1, "empty after popping all");
    /* release: every record back, generations bumped */
    uint32_t g[6];
    for (int k = 0; k < 6; k++) {
        g[k] = p.gen[id[k]];
        cs_tp_fifo_push(&f, p.next, id[k]);
    }
    int32_t before = p.nfree;
    cs_tp_fifo_release(&f, &p);
    CS_TEST_CHECK(p.nfree == before + 6 && f.head == -1 && f.tail == -1, "release");
    for (int k = 0; k < 6; k++)
        CS_TEST_CHECK(!cs_tp_pool_live(&p, (uint32_t)id[k], g[k]), "released %d stale", k);
    /* a second link array: a record on two lists at once */
    int32_t *other = cs_tp_links(8);
    CS_TEST_REQUIRE(other != NULL, "links");
    cs_tp_fifo_t f2 = CS_TP_FIFO_EMPTY;
    int32_t x = cs_tp_pool_get(&p), y = cs_tp_pool_get(&p);
    cs_tp_fifo_push(&f, p.next, x);
    cs_tp_fifo_push(&f, p.next, y);
    cs_tp_fifo_push(&f2, other, y);
    cs_tp_fifo_push(&f2, other, x);
    CS_TEST_CHECK(f.head == x && f2.head == y && p.next[x] == y && other[y] == x,
                  "two lists, two orders");
    free(other);
    cs_tp_pool_fini(&p);
    return 0;
}

static int test_ring(void)
{
    cs_tp_ring_t r;
    CS_TEST_REQUIRE(cs_tp_ring_init(&r, 5) == CS_OK, "ring init");
    CS_TEST_CHECK(r.mask == 7, "capacity rounded up to 8: mask %u", r.mask);
    CS_TEST_CHECK(cs_tp_ring_empty(&r), "empty at first");
    int32_t next_in = 0, next_out = 0;
    r.head = r.tail = UINT32_MAX - 20; /* the positions wrap too */
    for (int round = 0; round < 100; round++) {
        int k = 1 + round % 8;
        for (int i = 0; i < k; i++)
            cs_tp_ring_push(&r, next_in++);
        for (int i = 0; i < k; i++)
            CS_TEST_CHECK(cs_tp_ring_pop(&r) == next_out++, "order at round %d", round);
    }
    CS_TEST_CHECK(cs_tp_ring_empty(&r) && next_out == next_in, "all out");
    cs_tp_ring_push(&r, 41);
    cs_tp_ring_push(&r, 42);
    CS_TEST_CHECK(!cs_tp_ring_unpush(&r, 41), "only the entry pushed last is taken back");
    CS_TEST_CHECK(cs_tp_ring_unpush(&r, 42), "unpush the last");
    CS_TEST_CHECK(cs_tp_ring_pop(&r) == 41 && cs_tp_ring_empty(&r), "the other stays");
    CS_TEST_CHECK(!cs_tp_ring_unpush(&r, 41), "nothing to take back");
    cs_tp_ring_fini(&r);
    return 0;
}

static int test_unex(void)
{
    cs_tp_unex_t u;
    CS_TEST_REQUIRE(cs_tp_unex_init(&u, 3, 2, 16) == CS_OK, "unex init");
    CS_TEST_CHECK(cs_tp_unex_room(&u, 1), "room with a slot");
    int32_t s0 = cs_tp_unex_slot_get(&u), s1 = cs_tp_unex_slot_get(&u);
    CS_TEST_CHECK(s0 >= 0 && s1 >= 0 && s0 != s1, "two slots");
    CS_TEST_CHECK(cs_tp_unex_slot(&u, s1) - cs_tp_unex_slot(&u, s0) == (s1 - s0) * 16,
                  "slots slot_bytes apart");
    memset(cs_tp_unex_slot(&u, s0), 0xab, 16);
    memset(cs_tp_unex_slot(&u, s1), 0xcd, 16);
    CS_TEST_CHECK(cs_tp_unex_slot_get(&u) == -1, "slots exhausted");
    CS_TEST_CHECK(!cs_tp_unex_room(&u, 1) && cs_tp_unex_room(&u, 0),
                  "no room for an eager payload, room for an RTS record");
    int32_t r[3];
    for (int k = 0; k < 3; k++)
        r[k] = cs_tp_pool_get(&u.recs);
    CS_TEST_CHECK(r[2] >= 0 && !cs_tp_unex_room(&u, 0), "records exhausted");
    cs_tp_pool_put(&u.recs, r[1]);
    cs_tp_unex_slot_put(&u, s1);
    CS_TEST_CHECK(cs_tp_unex_room(&u, 1) && cs_tp_unex_slot_get(&u) == s1, "slot reused");
    cs_tp_unex_fini(&u);
    CS_TEST_CHECK(cs_tp_unex_init(&u, 3, 0, 16) == CS_ERR_INVAL, "no slots refused");
    return 0;
}

int main(void)
{
    test_pool();
    test_fifo();
    test_ring();
    test_unex();
    return cs_test_finish();
}
