/*
 * use_planner.c - a program of a collstep user that plans, built by
 * tests/install against an installed collstep only (<collstep/...>
 * headers, collstep::planner or pkg-config).
 *
 *   use_planner PLATFORM RANKS BYTES TUNING_OUT
 *
 * Plans an allreduce of BYTES on RANKS ranks of PLATFORM with every
 * candidate simulated (as `collstep plan --all`), prints the choice as
 *   choice ALGO "PARAMS" ORDER TIME_US     (%.3f, as `collstep plan --format csv`)
 * and writes a tuning table of that one choice for every size to
 * TUNING_OUT, read back with cs_tuning_load and picked for BYTES:
 *   tuning ALGO "PARAMS"
 * Then plans again in two shards (as two processes of a cluster would),
 * their parts written and read back through temporary files and merged:
 *   merged 2 shards: ALGO "PARAMS" ORDER TIME_US
 * which must be the choice above.
 * Exit 0 on success, 1 on any failure (with a message on stderr).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <collstep/cs_planner.h>
#include <collstep/cs_tuning.h>

static int fail(const char *what, const cs_err_t *err)
{
    fprintf(stderr, "use_planner: %s: %s\n", what, err ? err->msg : "failed");
    return 1;
}

static int write_table(const char *platform, const cs_planner_t *p, const cs_planner_cand_t *x,
                       const char *path, cs_err_t *err)
{
    cs_tuning_t *t = cs_tuning_new(platform, p->ranks, err);
    if (!t)
        return 1;
    char **map = malloc(sizeof(char *) * (size_t)p->ranks);
    int rc = 1;
    if (map) {
        for (int r = 0; r < p->ranks; r++)
            map[r] = cs_planner_host(p, x->map, r);
        FILE *f = NULL;
        if (cs_tuning_add(t, p->coll, 1, UINT64_MAX, x->algo, x->params, x->map ? map : NULL,
                          x->map ? p->ranks : 0, 0, err) == CS_OK &&
            (f = fopen(path, "w")) != NULL && cs_tuning_write(t, f, err) == CS_OK)
            rc = 0;
        if (f && fclose(f) != 0)
            rc = 1;
    }
    free(map);
    cs_tuning_free(t);
    return rc;
}

/* Shard i of n of the plan o, through a part file: *out. */
static int shard(cs_planner_opts_t o, int i, int n, cs_planner_t **out, cs_err_t *err)
{
    cs_planner_t *p = NULL;
    o.shard = i, o.nshards = n;
    if (cs_planner_run(&o, &p, err) != CS_OK)
        return 1;
    FILE *f = tmpfile();
    int rc = !f || cs_planner_part_write(p, 1, f, err) != CS_OK || fseek(f, 0, SEEK_SET) != 0 ||
             cs_planner_part_read(f, "part", out, err) != CS_OK;
    if (f)
        fclose(f);
    cs_planner_free(p);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: use_planner PLATFORM RANKS BYTES TUNING_OUT\n");
        return 2;
    }
    uint64_t size = strtoull(argv[3], NULL, 10);
    cs_planner_opts_t o = {0};
    o.platform = argv[1];
    o.coll = CS_COLL_ALLREDUCE;
    o.ranks = atoi(argv[2]);
    o.sizes = &size;
    o.nsizes = 1;
    o.top = 4;
    o.jobs = 2;
    o.budget = 300;
    o.model = CS_SIM_IDEAL;
    o.exhaustive = 1;
    cs_err_t err = {0};
    cs_planner_t *p = NULL;
    if (cs_planner_run(&o, &p, &err) != CS_OK)
        return fail("cs_planner_run", &err);
    int rc = 1, c = cs_planner_choice(p, 0);
    if (c < 0) {
        fprintf(stderr, "use_planner: no choice\n");
        goto done;
    }
    const cs_planner_cand_t *x = &p->cands[c];
    printf("choice %s \"%s\" %s %.3f\n", x->algo, x->params, p->map_name[x->map],
           cs_planner_time(p, c, 0) * 1e6);
    if (write_table(argv[1], p, x, argv[4], &err)) {
        fail("tuning table", &err);
        goto done;
    }
    cs_tuning_t *t = NULL;
    const cs_tuning_entry_t *e = NULL;
    if (cs_tuning_load(argv[4], &t, &err) != CS_OK ||
        cs_tuning_pick(t, CS_COLL_ALLREDUCE, size, &e, &err) != CS_OK) {
        fail("cs_tuning_load", &err);
        cs_tuning_free(t);
        goto done;
    }
    printf("tuning %s \"%s\"\n", e->algo, e->params);
    cs_tuning_free(t);
    cs_planner_t *parts[2] = {NULL, NULL}, *m = NULL;
    const char *names[2] = {"shard 0", "shard 1"};
    if (shard(o, 1, 2, &parts[1], &err) || shard(o, 0, 2, &parts[0], &err) ||
        cs_planner_merge(parts, names, 2, &m, &err) != CS_OK) {
        fail("shards", &err);
    } else {
        int mc = cs_planner_choice(m, 0);
        const cs_planner_cand_t *y = mc >= 0 ? &m->cands[mc] : NULL;
        if (y)
            printf("merged 2 shards: %s \"%s\" %s %.3f\n", y->algo, y->params,
                   m->map_name[y->map], cs_planner_time(m, mc, 0) * 1e6);
        rc = !y || mc != c || cs_planner_time(m, mc, 0) != cs_planner_time(p, c, 0);
        if (rc)
            fprintf(stderr, "use_planner: the merged plan chose otherwise\n");
    }
    cs_planner_free(parts[0]);
    cs_planner_free(parts[1]);
    cs_planner_free(m);
done:
    cs_planner_free(p);
    return rc;
}
