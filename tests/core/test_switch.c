/* Builder API of groups and switch steps (cs_sched.h, "Switch steps"):
 * declaration rules, membership, presence of src/dst per operation, the
 * sticky error, and digests that change with switch content only. */
#include <string.h>

#include "cs_sched.h"
#include "cs_stats.h"
#include "cs_test.h"

static cs_sched_t *mk(int P)
{
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, P, 0, 0};
    return cs_sched_create(&d, (uint32_t)P, NULL);
}

static void test_groups(void)
{
    cs_sched_t *s = mk(6);
    int32_t all[6] = {0, 1, 2, 3, 4, 5}, odd[3] = {1, 3, 5}, bad[2] = {3, 1}, dup[2] = {2, 2};
    int32_t out[1] = {6};
    CS_TEST_CHECK(!cs_sched_has_switch(s), "a new schedule has no switch");
    CS_TEST_CHECK(cs_sched_add_group(s, "all", all, 6) == 0, "%s", s->err.msg);
    CS_TEST_CHECK(cs_sched_add_group(s, "odd", odd, 3) == 1, "%s", s->err.msg);
    CS_TEST_CHECK(cs_sched_has_switch(s) && s->ngroups == 2, "groups make it version 2");
    CS_TEST_CHECK(cs_sched_find_group(s, "odd") == 1 && cs_sched_find_group(s, "x") == -1,
                  "find");
    CS_TEST_CHECK(cs_group_member(&s->groups[1], 3) == 1 && cs_group_member(&s->groups[1], 5) == 2 &&
                      cs_group_member(&s->groups[1], 2) == -1 &&
                      cs_group_member(&s->groups[1], 0) == -1 &&
                      cs_group_member(&s->groups[1], 9) == -1,
                  "membership");
    CS_TEST_CHECK(cs_sched_status(s) == CS_OK, "%s", s->err.msg);
    cs_sched_destroy(s);

    struct {
        const char *name;
        const int32_t *m;
        uint32_t n;
        const char *want;
    } cases[] = {
        {"o", bad, 2, "increasing"},   {"o", dup, 2, "distinct"}, {"o", out, 1, "out of range"},
        {"o", all, 0, "1 to 6"},       {"9x", odd, 3, "invalid group name"},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        s = mk(6);
        CS_TEST_CHECK(cs_sched_add_group(s, cases[c].name, cases[c].m, cases[c].n) < 0 &&
                          strstr(s->err.msg, cases[c].want) != NULL,
                      "case %zu: %s", c, s->err.msg);
        cs_sched_destroy(s);
    }
    s = mk(6);
    cs_sched_add_group(s, "g", odd, 3);
    CS_TEST_CHECK(cs_sched_add_group(s, "g", all, 6) < 0 && strstr(s->err.msg, "twice"), "%s",
                  s->err.msg);
    cs_sched_destroy(s);
}

static void test_steps(void)
{
    cs_sched_t *s = mk(4);
    int32_t m[3] = {0, 1, 3};
    int g = cs_sched_add_group(s, "sw", m, 3);
    cs_range_t in = cs_rng(CS_BUF_IN, 1, 2), out = cs_rng(CS_BUF_OUT, 1, 2);
    int64_t a = cs_switch(s, 0, CS_SW_ALLREDUCE, g, 3, &in, &out, NULL, 0);
    uint32_t d = (uint32_t)a;
    int64_t b = cs_switch(s, 0, CS_SW_REDUCE, g, 0, &in, NULL, &d, 1);
    int64_t c = cs_switch(s, 1, CS_SW_MULTICAST, g, 0, NULL, &out, NULL, 0);
    int64_t w = cs_switch(s, 3, CS_SW_MULTICAST, g, 0, &in, NULL, NULL, 0);
    CS_TEST_CHECK(a == 0 && b == 1 && c == 0 && w == 0, "%s", s->err.msg);
    const cs_step_t *st = &s->ranks[0].steps[0];
    CS_TEST_CHECK(st->kind == CS_STEP_SWITCH && st->op == CS_SW_ALLREDUCE && st->peer == g &&
                      st->chan == 3 && st->src.n == 2 && st->dst.off == 1,
                  "fields kept");
    CS_TEST_CHECK(s->ranks[0].steps[1].dst.n == 0 && s->ranks[1].steps[0].src.n == 0,
                  "absent ranges have n = 0");
    CS_TEST_CHECK(s->nswitch == 4, "nswitch %llu", (unsigned long long)s->nswitch);
    CS_TEST_CHECK(sizeof(cs_step_t) == 40, "a step stays 40 bytes (%zu)", sizeof(cs_step_t));
    CS_TEST_CHECK(strcmp(cs_step_kind_name(CS_STEP_SWITCH), "switch") == 0, "kind name");
    cs_sched_destroy(s);

    struct {
        int rank, op, group, has_src, has_dst;
        const char *want;
    } bad[] = {
        {2, CS_SW_ALLREDUCE, 0, 1, 1, "not a member"},
        {0, CS_SW_ALLREDUCE, 1, 1, 1, "not declared"},
        {0, CS_SW_ALLREDUCE, 0, 1, 0, "needs a source"},
        {0, CS_SW_ALLREDUCE, 0, 0, 1, "needs a source"},
        {0, CS_SW_REDUCE, 0, 0, 1, "needs a source"},
        {0, CS_SW_MULTICAST, 0, 0, 0, "needs a destination"},
        {0, 7, 0, 1, 1, "unknown switch operation"},
    };
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        s = mk(4);
        cs_sched_add_group(s, "sw", m, 3);
        int64_t r = cs_switch(s, bad[k].rank, (cs_swop_t)bad[k].op, bad[k].group, 0,
                              bad[k].has_src ? &in : NULL, bad[k].has_dst ? &out : NULL, NULL, 0);
        CS_TEST_CHECK(r < 0 && strstr(s->err.msg, bad[k].want) != NULL, "case %zu: %s", k,
                      s->err.msg);
        CS_TEST_CHECK(cs_nop(s, 0, NULL, 0) < 0, "case %zu: the error is sticky", k);
        cs_sched_destroy(s);
    }
    /* the range rules of every step hold for switch steps too */
    s = mk(4);
    cs_sched_add_group(s, "sw", m, 3);
    cs_range_t far = cs_rng(CS_BUF_IN, 3, 2), shifted = cs_rng(CS_BUF_OUT, 2, 2);
    CS_TEST_CHECK(cs_switch(s, 0, CS_SW_ALLREDUCE, 0, 0, &far, &out, NULL, 0) < 0 &&
                      strstr(s->err.msg, "outside"),
                  "%s", s->err.msg);
    cs_sched_destroy(s);
    s = mk(4);
    cs_sched_add_group(s, "sw", m, 3);
    CS_TEST_CHECK(cs_switch(s, 0, CS_SW_ALLREDUCE, 0, 0, &in, &shifted, NULL, 0) < 0 &&
                      strstr(s->err.msg, "shape"),
                  "%s", s->err.msg);
    cs_sched_destroy(s);
    s = mk(4);
    cs_sched_add_group(s, "sw", m, 3);
    CS_TEST_CHECK(cs_switch(s, 0, CS_SW_ALLREDUCE, 0, CS_MAX_CHANNELS, &in, &out, NULL, 0) < 0 &&
                      strstr(s->err.msg, "channel"),
                  "%s", s->err.msg);
    cs_sched_destroy(s);
}

/* Digests: a schedule's digest depends on its groups and switch steps. */
static uint64_t digest_of(int variant)
{
    cs_sched_t *s = mk(2);
    int32_t m[2] = {0, 1};
    cs_sched_add_group(s, variant == 1 ? "h" : "g", m, 2);
    cs_range_t in = cs_rng(CS_BUF_IN, 0, 2), out = cs_rng(CS_BUF_OUT, 0, 2);
    for (int r = 0; r < 2; r++)
        cs_switch(s, r, variant == 2 ? CS_SW_REDUCE : CS_SW_ALLREDUCE, 0, 0, &in, &out, NULL, 0);
    uint64_t d = cs_sched_status(s) == CS_OK ? cs_sched_digest(s) : 0;
    cs_sched_destroy(s);
    return d;
}

static void test_digest(void)
{
    uint64_t a = digest_of(0), b = digest_of(1), c = digest_of(2);
    CS_TEST_CHECK(a != 0 && a == digest_of(0), "deterministic");
    CS_TEST_CHECK(a != b && a != c && b != c, "group name and operation count");
    CS_TEST_CHECK(cs_swop_parse("multicast") == CS_SW_MULTICAST &&
                      cs_swop_parse("bcast") == CS_SW_COUNT &&
                      strcmp(cs_swop_name(CS_SW_REDUCE), "reduce") == 0,
                  "operation names");
}

/* Statistics and alpha-beta cost of switch operations (cs_stats.h). */
static int test_stats(void)
{
    /* one in-switch allreduce of the whole vector on 4 ranks */
    cs_sched_t *s = mk(4);
    int32_t m[4] = {0, 1, 2, 3};
    int g = cs_sched_add_group(s, "sw", m, 4);
    cs_range_t in = cs_rng(CS_BUF_IN, 0, 4), out = cs_rng(CS_BUF_OUT, 0, 4);
    for (int r = 0; r < 4; r++)
        cs_switch(s, r, CS_SW_ALLREDUCE, g, 0, &in, &out, NULL, 0);
    cs_stats_t st;
    cs_err_t err = {0};
    CS_TEST_REQUIRE(cs_stats_compute(s, &st, &err) == CS_OK, "%s", err.msg);
    CS_TEST_CHECK(st.sw_ops[CS_SW_ALLREDUCE] == 1 && st.sw_ops[CS_SW_REDUCE] == 0 &&
                      st.rounds == 1 && st.max_sw_up == 1.0 && st.max_sw_down == 1.0 &&
                      st.ranks[3].switches == 1 && st.max_sent == 0.0,
                  "ops %llu rounds %u up %g down %g", (unsigned long long)st.sw_ops[0], st.rounds,
                  st.max_sw_up, st.max_sw_down);
    cs_stats_fini(&st);
    /* store-and-forward: up then down, each alpha + S * beta: 1 us + 1 MB
     * at 1 GB/s */
    double t = cs_stats_ab_time(s, 1e6, 1e-6, 1e-9, 0, &err);
    CS_TEST_CHECK(t > 2.0019e-3 && t < 2.0021e-3, "in-switch allreduce: %g s (%s)", t, err.msg);
    cs_sched_destroy(s);

    /* the reader of a reduce waits for every member: rank 1 contributes
     * only after a 1 MB message from rank 0 */
    s = mk(2);
    int32_t two[2] = {0, 1};
    g = cs_sched_add_group(s, "p", two, 2);
    cs_range_t i2 = cs_rng(CS_BUF_IN, 0, 2), o2 = cs_rng(CS_BUF_OUT, 0, 2);
    int tmp = cs_sched_add_buffer(s, 1, "tmp", 0, 2);
    cs_send(s, 0, 1, 0, i2, NULL, 0);
    cs_switch(s, 0, CS_SW_REDUCE, g, 0, &i2, &o2, NULL, 0);
    cs_recv(s, 1, 0, 0, cs_rng(tmp, 0, 2), NULL, 0);
    uint32_t d0 = 0;
    cs_switch(s, 1, CS_SW_REDUCE, g, 0, &i2, NULL, &d0, 1);
    CS_TEST_REQUIRE(cs_sched_status(s) == CS_OK, "%s", s->err.msg);
    t = cs_stats_ab_time(s, 1e6, 0, 1e-9, 0, &err);
    CS_TEST_CHECK(t > 2.999e-3 && t < 3.001e-3, "message then reduce: %g s (%s)", t, err.msg);
    CS_TEST_REQUIRE(cs_stats_compute(s, &st, &err) == CS_OK, "%s", err.msg);
    CS_TEST_CHECK(st.rounds == 2 && st.sw_ops[CS_SW_REDUCE] == 1 && st.ranks[1].sw_down == 0 &&
                      st.ranks[0].sw_down == 1.0,
                  "rounds %u", st.rounds);
    cs_stats_fini(&st);
    cs_sched_destroy(s);

    /* switch parts queue on the members' ports like messages: two
     * allreduces of the whole vector on 2 ranks, on two channels, take
     * twice as long as one (4 parts of 1 ms on each rank's ports, ups
     * then downs of each operation) */
    s = mk(2);
    g = cs_sched_add_group(s, "p", two, 2);
    for (int r = 0; r < 2; r++) {
        cs_switch(s, r, CS_SW_ALLREDUCE, g, 0, &i2, &o2, NULL, 0);
        cs_switch(s, r, CS_SW_ALLREDUCE, g, 1, &i2, &o2, NULL, 0);
    }
    CS_TEST_REQUIRE(cs_sched_status(s) == CS_OK, "%s", s->err.msg);
    t = cs_stats_ab_time(s, 1e6, 0, 1e-9, 0, &err);
    CS_TEST_CHECK(t > 2.999e-3 && t < 3.001e-3, "two operations share the ports: %g s (%s)", t,
                  err.msg);
    cs_sched_destroy(s);
    return 0;
}

int main(void)
{
    test_stats();
    test_groups();
    test_steps();
    test_digest();
    return cs_test_finish();
}
