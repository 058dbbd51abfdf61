/*
 * test_channels.c - channels of the ring generators and the parameter
 * descriptors' bounds.
 *
 *  - hier with channels = 1..3, every tier algorithm, P = 1..16: verified;
 *  - every ring collective with channels = 1..5 and local = 1, 2, 3, 6 and
 *    more than P, P = 1..17 and 24, in place and not: the verifier accepts it;
 *  - channels=1 given explicitly is the default schedule byte for byte (but
 *    the algorithm line, which records the parameters given);
 *  - the ring order of each channel (local groups rotated, odd channels
 *    backwards with local=1) and that the channels use separate message
 *    channels;
 *  - bounds: every registered INT parameter rejects min-1 and max+1 with
 *    "KEY=V out of range: MIN..MAX", dims and lists their counts; the
 *    getters' default and error cases.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_algo.h"
#include "cs_test.h"
#include "cs_text.h"
#include "cs_verify.h"

/* CS_TEST_REQUIRE for functions that return nothing. */
#define NEED(cond, ...)                                                                        \
    do {                                                                                       \
        int ok_ = (cond);                                                                      \
        CS_TEST_CHECK(ok_, __VA_ARGS__);                                                       \
        if (!ok_)                                                                              \
            return;                                                                            \
    } while (0)

static int build(cs_coll_t coll, const char *algo, int P, int inplace, const char *ptext,
                 cs_sched_t **out, cs_err_t *err)
{
    const cs_algo_t *a = cs_algo_find(coll, algo);
    cs_params_t p;
    cs_params_init(&p);
    cs_err_clear(err);
    *out = NULL;
    if (a == NULL)
        return cs_err_set(err, CS_ERR_INVAL, "no %s", algo);
    if (ptext && cs_params_parse(&p, ptext, err) != CS_OK)
        return err->code;
    cs_coll_desc_t d = {coll, P, 0, inplace};
    return cs_algo_build(a, &d, &p, out, err);
}

/* The schedule's text without its "algorithm" line. */
static char *body(const cs_sched_t *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        return NULL;
    cs_sched_write(s, f);
    fclose(f);
    char *a = strstr(buf, "\nalgorithm ");
    if (a != NULL) {
        char *e = strchr(a + 1, '\n');
        memmove(a, e, strlen(e) + 1);
    }
    return buf;
}

static void test_verified(void)
{
    static const cs_coll_t colls[] = {CS_COLL_ALLREDUCE, CS_COLL_REDUCE_SCATTER,
                                      CS_COLL_ALLGATHER};
    static const int ranks[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 24};
    int built = 0;
    for (size_t c = 0; c < sizeof(colls) / sizeof(colls[0]); c++)
        for (size_t i = 0; i < sizeof(ranks) / sizeof(ranks[0]); i++)
            for (int K = 1; K <= 5; K++)
                for (int li = 0; li < 5; li++)
                    for (int inplace = 0; inplace < 2; inplace++) {
                        int P = ranks[i], L = li < 4 ? (int[]){1, 2, 3, 6}[li] : P + 1;
                        if (inplace && colls[c] == CS_COLL_REDUCE_SCATTER)
                            continue; /* the model has no in-place reduce-scatter */
                        char prm[64];
                        snprintf(prm, sizeof(prm), "channels=%d,local=%d,nchunks=%d", K, L,
                                 1 + (P + K) % 2);
                        cs_sched_t *s;
                        cs_err_t err;
                        int st = build(colls[c], "ring", P, inplace, prm, &s, &err);
                        CS_TEST_CHECK(st == CS_OK, "%s ring P=%d %s%s: %s",
                                      cs_coll_name(colls[c]), P, prm, inplace ? " in place" : "",
                                      err.msg);
                        if (st != CS_OK)
                            continue;
                        cs_verify_report_t rep;
                        st = cs_verify(s, NULL, &rep, &err);
                        CS_TEST_CHECK(st == CS_OK, "%s ring P=%d %s%s: %s",
                                      cs_coll_name(colls[c]), P, prm,
                                      inplace ? " in place" : "", err.msg);
                        cs_verify_report_fini(&rep);
                        CS_TEST_CHECK(s->nchunks % (uint32_t)K == 0,
                                      "%s P=%d %s: %u chunks", cs_coll_name(colls[c]), P, prm,
                                      s->nchunks);
                        cs_sched_destroy(s);
                        built++;
                    }
    CS_TEST_CHECK(built == 18 * 5 * 5 * 5, "built %d", built);
}

/* hier: channels copies of the multi-tier allreduce, each tier algorithm. */
static void test_hier(void)
{
    static const char *const algos[] = {"auto", "ring", "rhd", "direct", "ring+rhd"};
    int built = 0;
    for (int P = 1; P <= 16; P++)
        for (int K = 1; K <= 3; K++)
            for (int a = 0; a < 5; a++)
                for (int inplace = 0; inplace < 2; inplace++) {
                    int x = P % 3 == 0 ? 3 : P % 2 == 0 ? 2 : 1;
                    char prm[96];
                    if (a == 4)
                        snprintf(prm, sizeof(prm), "channels=%d,dims=%dx%d,algos=%s", K, x, P / x,
                                 algos[a]);
                    else
                        snprintf(prm, sizeof(prm), "channels=%d,dims=%dx%d,algos=%s,nchunks=%d", K,
                                 x, P / x, algos[a], 1 + P % 2);
                    cs_sched_t *s;
                    cs_err_t err;
                    int st = build(CS_COLL_ALLREDUCE, "hier", P, inplace, prm, &s, &err);
                    CS_TEST_CHECK(st == CS_OK, "hier P=%d %s: %s", P, prm, err.msg);
                    if (st != CS_OK)
                        continue;
                    cs_verify_report_t rep;
                    st = cs_verify(s, NULL, &rep, &err);
                    CS_TEST_CHECK(st == CS_OK, "hier P=%d %s%s: %s", P, prm,
                                  inplace ? " in place" : "", err.msg);
                    cs_verify_report_fini(&rep);
                    cs_sched_destroy(s);
                    built++;
                }
    CS_TEST_CHECK(built == 16 * 3 * 5 * 2, "built %d", built);
    cs_sched_t *a, *b;
    cs_err_t err;
    NEED(build(CS_COLL_ALLREDUCE, "hier", 12, 0, "dims=3x4", &a, &err) == CS_OK &&
             build(CS_COLL_ALLREDUCE, "hier", 12, 0, "dims=3x4,channels=1", &b, &err) == CS_OK,
         "hier: %s", err.msg);
    char *ta = body(a), *tb = body(b);
    CS_TEST_CHECK(ta && tb && strcmp(ta, tb) == 0, "hier: channels=1 differs from the default");
    free(ta);
    free(tb);
    cs_sched_destroy(a);
    cs_sched_destroy(b);
}

static void test_one_channel_identical(void)
{
    static const cs_coll_t colls[] = {CS_COLL_ALLREDUCE, CS_COLL_REDUCE_SCATTER,
                                      CS_COLL_ALLGATHER};
    for (size_t c = 0; c < 3; c++)
        for (int P = 1; P <= 9; P += 4) {
            cs_sched_t *a, *b;
            cs_err_t err;
            int sa = build(colls[c], "ring", P, 0, "nchunks=2", &a, &err);
            int sb = build(colls[c], "ring", P, 0, "nchunks=2,channels=1,local=6", &b, &err);
            NEED(sa == CS_OK && sb == CS_OK, "build: %s", err.msg);
            char *ta = body(a), *tb = body(b);
            CS_TEST_CHECK(ta && tb && strcmp(ta, tb) == 0,
                          "%s P=%d: channels=1 differs from the default schedule",
                          cs_coll_name(colls[c]), P);
            free(ta);
            free(tb);
            cs_sched_destroy(a);
            cs_sched_destroy(b);
        }
}

/* The peer of rank r's first send on message channel `chan`, or -1. */
static int first_send_peer(const cs_sched_t *s, int r, int chan)
{
    for (uint32_t i = 0; i < s->ranks[r].nsteps; i++) {
        const cs_step_t *t = &s->ranks[r].steps[i];
        if (t->kind == CS_STEP_SEND && t->chan == chan)
            return t->peer;
    }
    return -1;
}

static void test_ring_orders(void)
{
    cs_sched_t *s;
    cs_err_t err;
    /* P = 14, local 6: groups {0..5} {6..11} {12, 13}; channel 1 of 2 rotates
     * them by 3, 3 and 1: ring 3 4 5 0 1 2 9 10 11 6 7 8 13 12 */
    static const int ring1[14] = {3, 4, 5, 0, 1, 2, 9, 10, 11, 6, 7, 8, 13, 12};
    NEED(build(CS_COLL_ALLREDUCE, "ring", 14, 0, "channels=2,local=6", &s, &err) ==
                        CS_OK, "%s", err.msg);
    for (int m = 0; m < 14; m++) {
        int r = ring1[m], next = ring1[(m + 1) % 14];
        CS_TEST_CHECK(first_send_peer(s, r, 2) == next, "channel 1: rank %d sends to %d, not %d",
                      r, first_send_peer(s, r, 2), next);
        CS_TEST_CHECK(first_send_peer(s, m, 0) == (m + 1) % 14, "channel 0: rank %d sends to %d",
                      m, first_send_peer(s, m, 0));
    }
    int maxchan = 0;
    for (int r = 0; r < 14; r++)
        for (uint32_t i = 0; i < s->ranks[r].nsteps; i++)
            maxchan = s->ranks[r].steps[i].chan > maxchan ? s->ranks[r].steps[i].chan : maxchan;
    CS_TEST_CHECK(maxchan == 3, "allreduce, 2 channels: message channels 0..%d, not 0..3",
                  maxchan);
    cs_sched_destroy(s);
    /* local = 1: channel 1 runs backwards; reduce-scatter on channels 0, 1 */
    NEED(build(CS_COLL_REDUCE_SCATTER, "ring", 5, 0, "channels=2", &s, &err) == CS_OK,
                    "%s", err.msg);
    for (int r = 0; r < 5; r++) {
        CS_TEST_CHECK(first_send_peer(s, r, 1) == (r + 4) % 5, "backwards: rank %d sends to %d",
                      r, first_send_peer(s, r, 1));
        CS_TEST_CHECK(first_send_peer(s, r, 0) == (r + 1) % 5, "forwards: rank %d sends to %d",
                      r, first_send_peer(s, r, 0));
    }
    cs_sched_destroy(s);
    /* 3 channels, local 4: rotations 0, 1, 2 (floor(c * 4 / 3)); channel 2:
     * ring 2 3 0 1 6 7 4 5 */
    NEED(build(CS_COLL_ALLGATHER, "ring", 8, 0, "channels=3,local=4", &s, &err) ==
                        CS_OK, "%s", err.msg);
    /* channel 1: ring 1 2 3 0 5 6 7 4 */
    CS_TEST_CHECK(first_send_peer(s, 1, 1) == 2 && first_send_peer(s, 3, 1) == 0 &&
                      first_send_peer(s, 0, 1) == 5 && first_send_peer(s, 4, 1) == 1,
                  "channel 1 rotated by 1: 1->%d 3->%d 0->%d 4->%d", first_send_peer(s, 1, 1),
                  first_send_peer(s, 3, 1), first_send_peer(s, 0, 1), first_send_peer(s, 4, 1));
    CS_TEST_CHECK(first_send_peer(s, 1, 2) == 6 && first_send_peer(s, 0, 2) == 1,
                  "channel 2 rotated by 2: 1->%d 0->%d", first_send_peer(s, 1, 2),
                  first_send_peer(s, 0, 2));
    cs_sched_destroy(s);
}

static void expect_error(cs_coll_t coll, const char *algo, const char *prm, int code,
                         const char *text)
{
    cs_sched_t *s;
    cs_err_t err;
    int st = build(coll, algo, 8, 0, prm, &s, &err);
    CS_TEST_CHECK(st == code && s == NULL && strstr(err.msg, text), "%s %s: got %d '%s', want %d "
                  "'%s'", algo, prm, st, err.msg, code, text);
    if (st == CS_OK)
        cs_sched_destroy(s);
}

static void test_bounds(void)
{
    expect_error(CS_COLL_ALLREDUCE, "ring", "channels=0", CS_ERR_PARSE,
                 "parameter channels=0 out of range: 1..64");
    expect_error(CS_COLL_ALLGATHER, "ring", "channels=65", CS_ERR_PARSE, "out of range: 1..64");
    expect_error(CS_COLL_REDUCE_SCATTER, "ring", "local=0", CS_ERR_PARSE,
                 "local=0 out of range: 1..65536");
    expect_error(CS_COLL_ALLREDUCE, "ring", "channels=two", CS_ERR_PARSE,
                 "channels=two: expected an integer in 1..64");
    expect_error(CS_COLL_ALLREDUCE, "rhd", "channels=2", CS_ERR_INVAL, "no parameter 'channels'");
    expect_error(CS_COLL_ALLREDUCE, "dbtree", "nchunks=32769", CS_ERR_PARSE,
                 "nchunks=32769 out of range: 1..32768");
    expect_error(CS_COLL_ALLREDUCE, "hier", "dims=2x0x4", CS_ERR_PARSE, "1 to 8 factors");
    expect_error(CS_COLL_ALLREDUCE, "torus2d", "dims=8", CS_ERR_PARSE, "expected 2 factors");
    expect_error(CS_COLL_ALLREDUCE, "hier", "algos=ring++rhd", CS_ERR_PARSE, "empty name");
    expect_error(CS_COLL_ALLREDUCE, "hier", "algos=ring+ring+ring+ring+ring+ring+ring+ring+ring",
                 CS_ERR_PARSE, "9 names, expected 1 to 8");
    /* every INT row of the registry: default inside, min-1 and max+1 refused */
    int rows = 0;
    for (int i = 0; i < cs_algo_count(); i++) {
        const cs_algo_t *a = cs_algo_at(i);
        for (const cs_param_desc_t *d = a->params; d && d->key; d++) {
            CS_TEST_CHECK(d->min <= d->max && d->help && d->help[0], "%s %s: bounds, help",
                          a->name, d->key);
            if (d->kind != CS_PARAM_INT)
                continue;
            long def = strtol(d->def, NULL, 10);
            CS_TEST_CHECK(def >= d->min && def <= d->max, "%s %s: default %s outside %ld..%ld",
                          a->name, d->key, d->def, d->min, d->max);
            for (int side = 0; side < 2; side++) {
                char prm[64], want[160];
                long v = side ? d->max + 1 : d->min - 1;
                snprintf(prm, sizeof(prm), "%s=%ld", d->key, v);
                snprintf(want, sizeof(want), "%s out of range: %ld..%ld", prm, d->min, d->max);
                expect_error(a->coll, a->name, prm, CS_ERR_PARSE, want);
            }
            rows++;
        }
    }
    CS_TEST_CHECK(rows >= 20, "only %d integer parameters", rows);
}

static void test_getters(void)
{
    static const cs_param_desc_t t[] = {
        CS_PARAM_INT_ROW("n", "3", 1, 9, "an integer"),
        CS_PARAM_DIMS_ROW("d", "P", 1, 3, "dims"),
        CS_PARAM_LIST_ROW("l", "auto", 1, 2, "names"),
        CS_PARAM_END,
    };
    cs_params_t p;
    cs_err_t err = {0};
    long v = 0;
    int dims[3];
    const char *l = NULL;
    cs_params_init(&p);
    CS_TEST_CHECK(cs_params_int(&p, t, "n", &v, &err) == CS_OK && v == 3, "default: %ld", v);
    CS_TEST_CHECK(cs_params_dims(&p, t, "d", dims, 3, &err) == 0, "dims absent");
    CS_TEST_CHECK(cs_params_list(&p, t, "l", &l, &err) == CS_OK && !strcmp(l, "auto"),
                  "list default");
    CS_TEST_CHECK(cs_params_int(&p, t, "d", &v, &err) == CS_ERR_INTERNAL, "kind checked");
    CS_TEST_CHECK(cs_params_int(&p, t, "zz", &v, &err) == CS_ERR_INTERNAL, "row checked");
    cs_err_clear(&err);
    cs_params_parse(&p, "n=10,d=2x3,l=a+b", &err);
    v = 0;
    CS_TEST_CHECK(cs_params_int(&p, t, "n", &v, &err) == CS_ERR_PARSE && v == 3 &&
                      !strcmp(err.msg, "parameter n=10 out of range: 1..9"),
                  "range: %s (%ld)", err.msg, v);
    CS_TEST_CHECK(cs_params_dims(&p, t, "d", dims, 3, &err) == 2 && dims[1] == 3, "dims");
    CS_TEST_CHECK(cs_params_list(&p, t, "l", &l, &err) == CS_OK && !strcmp(l, "a+b"), "list");
    char b[64];
    cs_param_desc_bounds(&t[0], b, sizeof(b));
    CS_TEST_CHECK(!strcmp(b, "1..9"), "bounds '%s'", b);
    cs_param_desc_bounds(&t[1], b, sizeof(b));
    CS_TEST_CHECK(!strcmp(b, "1 to 3 factors (AxB..)"), "bounds '%s'", b);
}

int main(void)
{
    test_getters();
    test_bounds();
    test_ring_orders();
    test_one_channel_identical();
    test_verified();
    test_hier();
    return cs_test_finish();
}
