/*
 * use_validate.c - a program of a collstep user that validates, built by
 * tests/install against an installed collstep only (<collstep/...>
 * headers, collstep::validate or pkg-config).
 *
 *   use_validate PLATFORM
 *       starts a job of two ranks itself (two processes, the environment
 *       bootstrap over 127.0.0.1, collstep's tcp transport), runs the
 *       registry's ring allreduce live at 4 KiB (3 timed runs after one
 *       untimed), rank 0 predicts it on PLATFORM (a preset or an XML file)
 *       and prints the report's table, then
 *           validated ring 2 ranks 4096 B: measured US us, predicted US us
 *       exit 77 (with the reason) where the machine cannot start the job:
 *       no socket on 127.0.0.1, no fork
 * Exit 0 on success, 1 on any failure (with a message on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <collstep/cs_algo.h>
#include <collstep/cs_job.h>
#include <collstep/cs_validate.h>

#include "two_ranks.h"

static int fail(const char *what, const cs_err_t *err)
{
    fprintf(stderr, "use_validate: %s: %s\n", what, err ? err->msg : "failed");
    return 1;
}

/* one rank of the live job */
static int rank_main(const char *platform)
{
    cs_job_config_t cfg = {"use_validate", "env", "tcp", NULL, "127.0.0.1", "auto", 30};
    cs_job_t job;
    cs_sched_t *s = NULL;
    cs_validate_t v = {0};
    int rc = 1;
    if (cs_job_open(&job, &cfg) != CS_OK || cs_job_find_nodes(&job, NULL) != CS_OK ||
        cs_job_connect(&job) != CS_OK) {
        fail("job", &job.err);
        goto out;
    }
    const cs_algo_t *a = cs_algo_find(CS_COLL_ALLREDUCE, "ring");
    cs_coll_desc_t desc = {.coll = CS_COLL_ALLREDUCE, .nranks = job.nranks};
    cs_params_t params;
    cs_params_init(&params);
    if (!a || cs_algo_build(a, &desc, &params, &s, &job.err) != CS_OK) {
        fail("ring", &job.err);
        goto out;
    }
    static const uint64_t sizes[1] = {4096};
    const cs_sched_t *sched[1] = {s};
    const char *names[1] = {"ring"}, *prm[1] = {""};
    v = (cs_validate_t){.coll = CS_COLL_ALLREDUCE, .nranks = job.nranks, .nnodes = job.nnodes,
                        .node_of = job.node_of, .nalgo = 1, .nsizes = 1, .sched = sched,
                        .algo = names, .params = prm, .sizes = sizes, .nplats = 1,
                        .transport = "tcp", .iters = 3, .warmup = 1, .timeout_s = 30};
    v.plats[0] = (cs_validate_plat_t){.spec = platform, .model = CS_SIM_IDEAL};
    if (cs_validate_alloc(&v, &job.err) != CS_OK || cs_validate_live(&v, &job, &job.err) != CS_OK) {
        fail("live", &job.err);
        goto out;
    }
    if (job.rank == 0) {
        if (cs_platform_open(platform, &v.plats[0].plat, &job.err) != CS_OK ||
            cs_validate_check_platform(&v, 0, &job.err) != CS_OK ||
            cs_validate_predict(&v, 0, &job.err) != CS_OK ||
            cs_validate_write(&v, CS_FMT_TABLE, stdout, &job.err) != CS_OK) {
            fail("predict", &job.err);
            goto out;
        }
        printf("validated ring %d ranks 4096 B: measured %.1f us, predicted %.1f us\n", job.nranks,
               v.meas[0].med * 1e6, v.pred[0] * 1e6);
    }
    rc = v.meas[0].med > 0 ? 0 : 1;
out:
    cs_platform_close(v.plats[0].plat);
    cs_validate_free(&v);
    cs_sched_destroy(s);
    cs_job_close(&job);
    return rc;
}

static int validate_rank(void *platform)
{
    return rank_main(platform);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: use_validate PLATFORM\n");
        return 1;
    }
    return two_ranks("use_validate", validate_rank, argv[1]);
}
