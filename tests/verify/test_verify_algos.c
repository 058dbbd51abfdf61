/*
 * Every registered generator, every collective, odd and even rank counts,
 * in place and not: the verifier must accept what the generators build
 * (a generator may decline a configuration with CS_ERR_UNSUPPORTED).
 * A rejected schedule prints the verifier's findings: either the generator
 * or the verifier is wrong, and the message says where to look.
 */
#include <stdio.h>
#include <string.h>

#include "cs_algo.h"
#include "cs_test.h"
#include "cs_verify.h"

static int verify_one(const cs_algo_t *a, int P, int root, int inplace)
{
    cs_coll_desc_t d = {a->coll, P, root, inplace};
    cs_params_t params;
    cs_params_init(&params);
    cs_sched_t *s = NULL;
    cs_err_t err = {0};
    int st = cs_algo_build(a, &d, &params, &s, &err);
    if (st == CS_ERR_UNSUPPORTED || st == CS_ERR_INVAL)
        return 0; /* declined, with a message; not ours to judge */
    CS_TEST_CHECK(st == CS_OK, "%s/%s P=%d: build: %s", cs_coll_name(a->coll), a->name, P,
                  err.msg);
    if (st != CS_OK)
        return 0;
    cs_verify_report_t rep;
    cs_err_clear(&err);
    st = cs_verify(s, NULL, &rep, &err);
    CS_TEST_CHECK(st == CS_OK, "%s/%s P=%d root=%d inplace=%d: %s", cs_coll_name(a->coll), a->name,
                  P, root, inplace, err.msg);
    for (uint32_t i = 0; st != CS_OK && i < rep.n && i < 5; i++)
        fprintf(stderr, "    [%s] %s\n", rep.findings[i].kind, rep.findings[i].msg);
    cs_verify_report_fini(&rep);
    cs_sched_destroy(s);
    return 1;
}

int main(void)
{
    static const int ranks[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 16};
    int n = 0;
    for (int i = 0; i < cs_algo_count(); i++) {
        const cs_algo_t *a = cs_algo_at(i);
        for (size_t j = 0; j < sizeof(ranks) / sizeof(ranks[0]); j++) {
            int P = ranks[j];
            int root = cs_coll_has_root(a->coll) ? P / 2 : 0;
            n += verify_one(a, P, root, 0);
            if (a->coll != CS_COLL_REDUCE_SCATTER)
                n += verify_one(a, P, root, 1);
        }
    }
    CS_TEST_CHECK(n > 0, "no schedule verified");
    printf("%d schedules verified\n", n);
    return cs_test_finish();
}
