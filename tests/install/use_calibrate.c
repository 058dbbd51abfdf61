/*
 * use_calibrate.c - a program of a collstep user that calibrates, built by
 * tests/install against an installed collstep only (<collstep/...>
 * headers, collstep::calibrate or pkg-config).
 *
 *   use_calibrate derive RECORD.json OUT.xml OUT.json
 *       reads a measurement record, derives the platform and writes it and
 *       the record's JSON; prints
 *           derived RANKS ranks NODES nodes tiers TIER,TIER,...
 *   use_calibrate live OUT.xml OUT.json
 *       starts a job of two ranks itself (two processes, the environment
 *       bootstrap over 127.0.0.1, collstep's tcp transport), measures a
 *       small plan (1 to 64 bytes, 10 ms a size), and rank 0 derives and
 *       writes the platform, then reads its JSON back and derives the same
 *       XML from it; prints
 *           live 2 ranks 1 nodes series 1 intra_us ALPHA, read back: same platform
 *       exit 77 (with the reason) where the machine cannot start the job:
 *       no socket on 127.0.0.1, no fork
 * Exit 0 on success, 1 on any failure (with a message on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <collstep/cs_boot.h>
#include <collstep/cs_calibrate.h>
#include <collstep/cs_transport.h>

#include "two_ranks.h"

static int fail(const char *what, const cs_err_t *err)
{
    fprintf(stderr, "use_calibrate: %s: %s\n", what, err ? err->msg : "failed");
    return 1;
}

/* derive and write; *xml the platform's text when wanted */
static int derive_write(const cs_calibrate_record_t *rec, const char *xml_path,
                        const char *json_path, char **xml, cs_err_t *err)
{
    cs_calibrate_derived_t *d = NULL;
    if (cs_calibrate_derive(rec, &d, err) != CS_OK)
        return fail("derive", err);
    int rc = cs_calibrate_write(rec, d, xml_path, json_path, CS_OUT_FORCE, err) != CS_OK;
    if (!rc && xml)
        rc = cs_calibrate_xml(rec, d, xml, err) != CS_OK;
    if (!rc && !xml) {
        printf("derived %d ranks %d nodes tiers ", rec->nranks, rec->nnodes);
        for (int h = 0; h < rec->nnodes; h++)
            printf("%s%s", h ? "," : "", d->plat.nodes[h].tier);
        printf("\n");
    }
    cs_calibrate_derived_free(d);
    return rc ? fail("write", err) : 0;
}

static int derive(const char *record, const char *xml_path, const char *json_path)
{
    cs_err_t err = {0};
    cs_calibrate_record_t *rec = NULL;
    if (cs_calibrate_record_load(record, &rec, &err) != CS_OK)
        return fail("load", &err);
    int rc = derive_write(rec, xml_path, json_path, NULL, &err);
    cs_calibrate_record_free(rec);
    return rc;
}

/* one rank of the live job */
static int rank_main(const char *xml_path, const char *json_path)
{
    cs_err_t err = {0};
    cs_boot_config_t bc = {30, "env"};
    cs_boot_t *boot = NULL;
    cs_tp_t *tp = NULL;
    cs_calibrate_t *c = NULL;
    cs_calibrate_record_t *rec = NULL, *back = NULL;
    char *xml = NULL, *xml2 = NULL;
    int rc = 1;
    if (cs_boot_open(&bc, &boot, &err) != CS_OK)
        return fail("bootstrap", &err);
    int rank = cs_boot_rank(boot), n = cs_boot_size(boot);
    cs_tp_config_t tc = {rank, n, NULL, "127.0.0.1", 0, 30};
    int st = cs_tp_open("tcp", &tc, &tp, &err);
    if (cs_boot_connect(boot, st == CS_OK ? tp : NULL, st, &err) != CS_OK) {
        fail("transport", &err);
        goto out;
    }
    cs_calibrate_plan_t plan;
    cs_calibrate_plan_init(&plan);
    plan.nsizes = 0;
    for (uint64_t s = 1; s <= 64; s *= 2)
        plan.sizes[plan.nsizes++] = s;
    plan.budget_s = 0.01, plan.max_reps = 200, plan.nic_bytes = 64, plan.timeout_s = 30;
    int node_of[2] = {0, 0};
    const char *names[1] = {"here"};
    cs_calibrate_job_t job = {1, node_of, names, "tcp", ""};
    if (n != 2 || cs_calibrate_open(tp, boot, &job, &plan, &c, &err) != CS_OK ||
        cs_calibrate_measure(c, &rec, &err) != CS_OK) {
        fail(n != 2 ? "two ranks expected" : "measure", &err);
        goto out;
    }
    if (rank == 0) {
        if (derive_write(rec, xml_path, json_path, &xml, &err))
            goto out;
        cs_calibrate_derived_t *d = NULL;
        if (cs_calibrate_record_load(json_path, &back, &err) != CS_OK ||
            cs_calibrate_derive(back, &d, &err) != CS_OK ||
            cs_calibrate_xml(back, d, &xml2, &err) != CS_OK) {
            cs_calibrate_derived_free(d);
            fail("read back", &err);
            goto out;
        }
        printf("live %d ranks %d nodes series %d intra_us %.2f, read back: %s\n", rec->nranks,
               rec->nnodes, rec->nseries, d->plat.intra_lat * 1e6,
               strcmp(xml, xml2) ? "another platform" : "same platform");
        rc = strcmp(xml, xml2) != 0;
        cs_calibrate_derived_free(d);
    } else {
        rc = 0;
    }
out:
    free(xml);
    free(xml2);
    cs_calibrate_record_free(rec);
    cs_calibrate_record_free(back);
    cs_calibrate_close(c);
    cs_tp_close(tp);
    cs_boot_close(boot);
    return rc;
}

typedef struct live_arg {
    const char *xml_path, *json_path;
} live_arg_t;

static int live_rank(void *arg)
{
    const live_arg_t *a = arg;
    return rank_main(a->xml_path, a->json_path);
}

static int live(const char *xml_path, const char *json_path)
{
    live_arg_t a = {xml_path, json_path};
    return two_ranks("use_calibrate live", live_rank, &a);
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "derive"))
        return derive(argv[2], argv[3], argv[4]);
    if (argc == 4 && !strcmp(argv[1], "live"))
        return live(argv[2], argv[3]);
    fprintf(stderr, "usage: use_calibrate derive RECORD.json OUT.xml OUT.json\n"
                    "       use_calibrate live OUT.xml OUT.json\n");
    return 1;
}
