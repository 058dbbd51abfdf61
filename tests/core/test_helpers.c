/*
 * test_helpers.c - the small helpers every library shares:
 *
 *   cs_grow        capacity from `first`, doubled until it holds the need,
 *                  elements kept, nothing done when there is room, an
 *                  overflowing size refused with the array untouched, any
 *                  pointer type through its address;
 *   cs_now_ns/_s   monotonic, the seconds from the same clock, and it
 *                  advances across a sleep;
 *   cs_hash_*      FNV-1a 64 of strings (the published test vectors),
 *                  CS_FNV64_* the constants cs_sched_digest uses, and
 *                  cs_hash_mix64 SplitMix64's finaliser (its first output
 *                  from seed 0) spreading keys over a table's low bits.
 */
#include "cs_grow.h"
#include "cs_hash.h"
#include "cs_test.h"
#include "cs_time.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    uint32_t a, b, c;
} item_t;

static int test_grow(void)
{
    item_t *v = NULL;
    size_t cap = 0;
    CS_TEST_REQUIRE(cs_grow(&v, &cap, 1, sizeof(*v), 16) == CS_OK && v && cap == 16,
                    "first capacity 16, got %zu", cap);
    for (uint32_t i = 0; i < 1000; i++) {
        CS_TEST_REQUIRE(cs_grow(&v, &cap, i + 1, sizeof(*v), 16) == CS_OK, "append %u", i);
        v[i] = (item_t){i, 2 * i, 3 * i};
    }
    CS_TEST_CHECK(cap == 1024, "16 doubled six times holds 1000: %zu", cap);
    int kept = 1;
    for (uint32_t i = 0; i < 1000; i++)
        kept &= v[i].a == i && v[i].b == 2 * i && v[i].c == 3 * i;
    CS_TEST_CHECK(kept, "elements kept across reallocations");

    item_t *before = v;
    CS_TEST_CHECK(cs_grow(&v, &cap, 1024, sizeof(*v), 16) == CS_OK && v == before && cap == 1024,
                  "room enough: nothing moves");
    CS_TEST_CHECK(cs_grow(&v, &cap, 5000, sizeof(*v), 16) == CS_OK && cap == 8192,
                  "a jump: doubled until it holds the need (%zu)", cap);
    CS_TEST_CHECK(v[999].c == 2997, "kept after a jump");

    size_t big = SIZE_MAX / sizeof(*v) + 1;
    before = v;
    CS_TEST_CHECK(cs_grow(&v, &cap, big, sizeof(*v), 16) == CS_ERR_NOMEM, "bytes overflow");
    CS_TEST_CHECK(v == before && cap == 8192, "a refusal leaves the array as it was");
    CS_TEST_CHECK(cs_grow(&v, &cap, SIZE_MAX, 1, 16) == CS_ERR_NOMEM, "capacity overflow");
    CS_TEST_CHECK(v == before && cap == 8192, "... and so does this one");
    free(v);

    char *s = NULL; /* another pointer type, and first = 0 meaning 1 */
    size_t scap = 0;
    CS_TEST_CHECK(cs_grow(&s, &scap, 3, 1, 0) == CS_OK && s && scap == 4, "1 -> 4: %zu", scap);
    memcpy(s, "ab", 3);
    CS_TEST_CHECK(cs_grow(&s, &scap, 5, 1, 0) == CS_OK && scap == 8 && strcmp(s, "ab") == 0,
                  "a string kept");
    free(s);
    return 0;
}

static int test_clock(void)
{
    uint64_t a = cs_now_ns(), b = cs_now_ns();
    double s = cs_now_s();
    CS_TEST_CHECK(a > 0 && b >= a, "monotonic");
    CS_TEST_CHECK(s >= (double)a * 1e-9, "seconds from the same clock");
    struct timespec nap = {0, 2000000};
    nanosleep(&nap, NULL);
    uint64_t c = cs_now_ns();
    CS_TEST_CHECK(c - b >= 2000000, "a 2 ms sleep is seen (%llu ns)", (unsigned long long)(c - b));
    return 0;
}

static int test_hash(void)
{
    /* FNV-1a 64 test vectors (Fowler, Noll, Vo: the FNV test suite). */
    CS_TEST_CHECK(cs_hash_str("") == 0xcbf29ce484222325ULL, "FNV-1a of \"\" is the basis");
    CS_TEST_CHECK(cs_hash_str("a") == 0xaf63dc4c8601ec8cULL, "FNV-1a of \"a\"");
    CS_TEST_CHECK(cs_hash_str("foobar") == 0x85944171f73967e8ULL, "FNV-1a of \"foobar\"");
    /* SplitMix64 from seed 0: the state advances by the golden gamma and
     * the finaliser gives 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, ... */
    CS_TEST_CHECK(cs_hash_mix64(0x9e3779b97f4a7c15ULL) == 0xe220a8397b1dcdafULL, "first");
    CS_TEST_CHECK(cs_hash_mix64(2 * 0x9e3779b97f4a7c15ULL) == 0x6e789e6aa1b965f4ULL, "second");
    CS_TEST_CHECK(cs_hash_mix64(0) == 0, "0 is its fixed point");

    /* Keys a table really uses: (src << 32 | dst) pairs of a 64-rank job
     * into a 8192-slot table; differing only in their high half, they must
     * still spread over the low bits (no slot holds more than a few). */
    enum { SLOTS = 8192 };
    static unsigned count[SLOTS];
    unsigned worst = 0;
    for (uint64_t s = 0; s < 64; s++)
        for (uint64_t d = 0; d < 64; d++) {
            unsigned *c = &count[cs_hash_mix64(s << 32 | d) & (SLOTS - 1)];
            if (++*c > worst)
                worst = *c;
        }
    CS_TEST_CHECK(worst <= 6, "4096 route keys over 8192 slots: at most %u in one", worst);
    return 0;
}

int main(void)
{
    test_grow();
    test_clock();
    test_hash();
    return cs_test_finish();
}
