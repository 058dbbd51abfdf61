/*
 * cli_model.c - `--model nccl` for sim, plan and validate: the options
 * (--nccl-version, --nccl-algo, --nccl-proto), the system NCCL's tuner
 * sees on the platform, what each instance pays (model/cs_nccl.h), and
 * NCCL's own choice as collstep schedules (`--algo nccl`).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#ifdef CS_HAVE_PLAN
#include "cs_planner.h"
#endif

#ifdef CS_HAVE_MODEL

void cs_cli_nccl_init(cs_cli_nccl_t *c)
{
    memset(c, 0, sizeof(*c));
    c->algo = c->proto = -1;
}

void cs_cli_nccl_fini(cs_cli_nccl_t *c)
{
    free(c->cost);
    free(c->inst_algo);
    c->cost = NULL;
    c->inst_algo = NULL;
}

int cs_cli_nccl_opt(const char *cmd, cs_cli_nccl_t *c, int which, const char *arg)
{
    switch (which) {
    case CS_CLI_NCCL_VERSION: {
        int exact = 0;
        if (!*arg || !cs_nccl_consts_for(arg, 0, &exact)) {
            char have[160] = "NCCL";
            size_t n = strlen(have);
            for (int i = 0; i < cs_nccl_nversions() && n + 16 < sizeof(have); i++)
                n += (size_t)snprintf(have + n, sizeof(have) - n, "%s %s", i ? "," : "",
                                      cs_nccl_version_at(i)->version);
            const cs_nccl_consts_t *r = cs_nccl_consts_for(NULL, 1, &exact);
            if (r && n + 32 < sizeof(have))
                snprintf(have + n, sizeof(have) - n, "; %s %s on AMD GPUs", r->lib, r->version);
            return cs_cli_usage_error(cmd, "--nccl-version: expected a version like 2.26.2, "
                                           "found '%s' (the model's table: %s)", arg, have);
        }
        c->version = arg;
        return CS_EXIT_OK;
    }
    case CS_CLI_NCCL_ALGO:
        if ((c->algo = cs_nccl_algo_parse(arg)) < 0)
            return cs_cli_usage_error(cmd, "--nccl-algo: expected Tree, Ring, CollNetDirect, "
                                           "CollNetChain, NVLS, NVLSTree or PAT, found '%s'", arg);
        return CS_EXIT_OK;
    case CS_CLI_NCCL_PROTO:
        if ((c->proto = cs_nccl_proto_parse(arg)) < 0)
            return cs_cli_usage_error(cmd, "--nccl-proto: expected LL, LL128 or Simple, found "
                                           "'%s'", arg);
        return CS_EXIT_OK;
    default:
        return CS_EXIT_USAGE;
    }
}

int cs_cli_nccl_setup(const char *cmd, cs_cli_nccl_t *c, const cs_platform_t *plat,
                      char *const *hosts, int nranks)
{
    int exact = 0;
    cs_err_t err;
    cs_err_clear(&err);
    c->k = cs_nccl_consts_for(c->version, 0, &exact);
    if (cs_nccl_sys_from(plat, hosts, nranks, c->k, &c->sys, &err) != CS_OK)
        return cs_cli_usage_error(cmd, "--model nccl: %s", err.msg);
    if (c->sys.rccl) { /* AMD GPUs: RCCL's constants */
        c->k = cs_nccl_consts_for(c->version, 1, &exact);
        if (cs_nccl_sys_from(plat, hosts, nranks, c->k, &c->sys, &err) != CS_OK)
            return cs_cli_usage_error(cmd, "--model nccl: %s", err.msg);
    }
    /* which entry serves the version asked for, said once per version
     * (validate and calibrate set up every table of a log, each with the
     * log's version) */
    static char noted[32];
    if (c->version && strcmp(c->version, "default") != 0 &&
        strncmp(noted, c->version, sizeof(noted) - 1) != 0) {
        if (c->sys.rccl && !exact)
            fprintf(stderr, "collstep %s: note: %s GPUs run RCCL, and the model has RCCL %s "
                            "only: using it for %s\n",
                    cmd, c->sys.gpu, c->k->version, c->version);
        else if (!exact)
            fprintf(stderr, "collstep %s: note: %s %s is not in the model's table; using %s %s "
                            "(the nearest it has)\n",
                    cmd, c->k->lib, c->version, c->k->lib, c->k->version);
        else if (strcmp(c->version, c->k->version) != 0) /* "2", "2.26" */
            fprintf(stderr, "collstep %s: note: %s %s: using %s %s, the model's entry for it\n",
                    cmd, c->k->lib, c->version, c->k->lib, c->k->version);
        snprintf(noted, sizeof(noted), "%s", c->version);
    }
    c->sys.dtype = c->dtype, c->sys.op = c->op;
    /* NCCL's rings on one node follow its links (cs_cli_nccl_picks): the
     * link analysis reads the platform's first hosts */
    c->plat = plat;
    memset(c->across, 0, sizeof(c->across));
    c->orders_noted = 0;
    c->hosts_first = c->hosts_same = 0;
    char **first = NULL;
    int nr = (int)(sizeof(c->rank_at) / sizeof(c->rank_at[0]));
    if (cs_sim_hosts(plat, NULL, nranks, &first, &err) == CS_OK) {
        c->hosts_same = 1;
        for (int r = 0; r < nranks && c->hosts_same; r++)
            c->hosts_same = strcmp(first[r], hosts[r]) == 0;
        c->hosts_first = nranks <= nr;
        for (int i = 0; i < nranks && c->hosts_first; i++) {
            c->rank_at[i] = -1;
            for (int r = 0; r < nranks && c->rank_at[i] < 0; r++)
                if (strcmp(first[i], hosts[r]) == 0)
                    c->rank_at[i] = r;
            c->hosts_first = c->rank_at[i] >= 0;
        }
        cs_sim_hosts_free(first, nranks);
    }
    for (int t = 0; t < CS_PLAT_MAX_TIERS; t++)
        c->scale[t] = c->sys.tier_scale[t];
    fprintf(stderr, "collstep %s: --model nccl: %s\n", cmd, c->sys.note);
    return CS_EXIT_OK;
}

/* NCCL's rings on nodes that are no switch domain follow the links its
 * search finds (search.cc), not the ranks' order: on a DGX-1's hybrid cube
 * mesh a ring in rank order crosses PCIe where NCCL's rings use only
 * NVLink, and across nodes they leave and enter through different NICs.
 * The planner's link analysis finds such rings (cs_planner_nccl_orders,
 * once per setup and shape); 1 when c->across[tree].orders holds them for its Ring
 * pick with these params.  An analysis that fails leaves the ranks'
 * order, said once. */
static int nccl_orders(const char *cmd, cs_cli_nccl_t *c, const char *params, int tree)
{
#ifdef CS_HAVE_PLAN
    int P = c->sys.nranks, L = P, K = 0;
    const char *v;
    /* a mesh's rings are the model's own (cs_nccl_as_sched); a reducing
     * NVLink switch makes every order NCCL's */
    if (strstr(params, "orders=") || !c->plat || c->sys.nvls)
        return 0;
    if (c->sys.nnodes > 1) {
        if (!(v = strstr(params, "local=")) || (L = (int)strtol(v + 6, NULL, 10)) < 3 ||
            L > 16 || !(v = strstr(params, "channels=")))
            return 0;
        K = (int)strtol(v + 9, NULL, 10);
    } else if (P < 3 || P > 16 || tree) {
        return 0;
    }
    struct cs_cli_across *x = &c->across[tree != 0];
    if (x->local != L || x->channels != K) {
        x->local = L, x->channels = K;
        x->orders[0] = '\0';
        cs_err_t err;
        cs_err_clear(&err);
        if (cs_planner_nccl_orders(c->plat, P, L, K, tree, x->orders, sizeof(x->orders), &err) !=
            CS_OK) {
            x->orders[0] = '\0';
            if (!c->orders_noted++)
                fprintf(stderr, "collstep %s: note: NCCL's rings and trees over the nodes' "
                                "links are simulated in the ranks' order: %s\n", cmd, err.msg);
        }
        /* they were found among the platform's first hosts: on one node
         * the ranks on them in any order, across nodes in that order */
        if (x->orders[0] && (L == P ? !c->hosts_first : !c->hosts_same)) {
            x->orders[0] = '\0';
            if (!c->orders_noted++)
                fprintf(stderr, "collstep %s: note: NCCL's rings and trees over the nodes' "
                                "links are simulated in the ranks' order: they are found among "
                                "the platform's first %d hosts%s, and the ranks are not %s\n",
                        cmd, P, L == P ? "" : " in their order", L == P ? "all on them" : "so");
        }
        /* one node: the rings visit hosts (the platform's order) */
        for (char *o = x->orders; L == P && *o; o++) {
            int d = *o >= '0' && *o <= '9' ? *o - '0' : *o >= 'a' && *o <= 'z' ? *o - 'a' + 10
                                                                                : -1;
            if (d >= 0 && d < P) {
                int r = c->rank_at[d];
                *o = (char)(r < 10 ? '0' + r : 'a' + r - 10);
            }
        }
    }
    return x->orders[0] != '\0';
#else
    (void)cmd, (void)c, (void)params, (void)tree;
    return 0;
#endif
}

int cs_cli_nccl_picks(const char *cmd, cs_cli_nccl_t *c, cs_coll_t coll, const uint64_t *sizes,
                      int n, cs_cli_pick_t *picks)
{
    for (int k = 0; k < n; k++) {
        int a, p;
        double us;
        if (coll == CS_COLL_ALLTOALL) {
            /* NCCL runs all-to-all as point-to-point sends, outside its tuner */
            a = CS_NCCL_P2P, p = CS_NCCL_SIMPLE, us = -1;
            if (k == 0 && (c->algo >= 0 || c->proto >= 0))
                fprintf(stderr, "collstep %s: note: --nccl-algo and --nccl-proto do not apply "
                                "to all-to-all, as NCCL_ALGO and NCCL_PROTO do not: NCCL runs it "
                                "on its send/receive path (P2P)\n", cmd);
        } else if (cs_nccl_choose(c->k, &c->sys, coll, sizes[k], c->algo, c->proto, &a, &p, &us) !=
                   CS_OK) {
            return cs_cli_usage_error(cmd, "--algo nccl: NCCL has no algorithm for %s on %d "
                                           "ranks%s%s%s%s",
                                      cs_coll_name(coll), c->sys.nranks,
                                      c->algo >= 0 ? " with --nccl-algo " : "",
                                      c->algo >= 0 ? cs_nccl_algo_name(c->algo) : "",
                                      c->proto >= 0 ? (c->algo >= 0 ? " and --nccl-proto "
                                                                     : " with --nccl-proto ")
                                                    : "",
                                      c->proto >= 0 ? cs_nccl_proto_name(c->proto) : "");
        }
        c->pick_algo[k] = a;
        c->pick_proto[k] = p;
        c->pick_us[k] = us;
        cs_nccl_as_sched(&c->sys, coll, a, p, sizes[k], c->pick_name[k], sizeof(c->pick_name[k]),
                         c->pick_params[k], sizeof(c->pick_params[k]));
        /* Ring (its broadcast and reduce a chain per ring) and Tree over the links */
        int tree = strcmp(c->pick_name[k], "dbtree") == 0;
        int chain = strcmp(c->pick_name[k], "chain") == 0;
#ifdef CS_HAVE_PLAN
        if ((tree || chain || strcmp(c->pick_name[k], "ring") == 0) &&
            (coll != CS_COLL_REDUCE || chain) && nccl_orders(cmd, c, c->pick_params[k], tree))
            cs_planner_ring_orders_params(c->pick_params[k], sizeof(c->pick_params[k]),
                                          c->across[tree].orders);
#else
        (void)tree, (void)chain;
#endif
        memset(&picks[k], 0, sizeof(picks[k]));
        picks[k].algo = c->pick_name[k];
        picks[k].params = c->pick_params[k];
        picks[k].min_bytes = (uint64_t)a * CS_NCCL_NPROTOS + (uint64_t)p;
        picks[k].max_bytes = picks[k].min_bytes;
        picks[k].predicted_us = us;
        if (us >= 0)
            fprintf(stderr, "collstep %s: %llu B: %s %s picks %s/%s (its tuner: %.2f us), simulated "
                            "as %s%s%s\n",
                    cmd, (unsigned long long)sizes[k], c->k->lib, c->k->version,
                    cs_nccl_algo_name(a), cs_nccl_proto_name(p), us, c->pick_name[k],
                    *c->pick_params[k] ? " " : "", c->pick_params[k]);
    }
    c->npicks = n;
    return CS_EXIT_OK;
}

int cs_cli_nccl_costs(const char *cmd, cs_cli_nccl_t *c, cs_sim_instance_t *inst, int n,
                      const int *size_of)
{
    free(c->cost);
    c->cost = calloc((size_t)n + 1, sizeof(*c->cost));
    int *ia = realloc(c->inst_algo, sizeof(int) * 2 * ((size_t)n + 1));
    if (ia)
        c->inst_algo = ia;
    if (!c->cost || !ia) {
        fprintf(stderr, "collstep %s: out of memory\n", cmd);
        return CS_EXIT_RUNTIME;
    }
    for (int i = 0; i < n; i++) {
        const cs_sched_t *s = inst[i].sched;
        int a, p;
        if (size_of && c->npicks > 0) {
            a = c->pick_algo[size_of[i]];
            p = c->pick_proto[size_of[i]];
        } else if (s->desc.coll == CS_COLL_ALLTOALL) {
            /* any all-to-all runs on NCCL's send/receive path */
            a = CS_NCCL_P2P, p = CS_NCCL_SIMPLE;
        } else {
            a = c->algo >= 0 ? c->algo : cs_nccl_algo_of(s, &c->sys);
            /* the protocol NCCL would use for this algorithm at this size */
            if (cs_nccl_choose(c->k, &c->sys, s->desc.coll, inst[i].bytes, a, c->proto, &a, &p,
                               NULL) != CS_OK) {
                if (c->algo >= 0 || c->proto >= 0) {
                    fprintf(stderr, "collstep %s: --model nccl: NCCL cannot run %s %s%s%s on "
                                    "%s (%d ranks): not available there\n",
                            cmd, cs_coll_name(s->desc.coll),
                            c->algo >= 0 ? cs_nccl_algo_name(a) : "",
                            c->algo >= 0 && c->proto >= 0 ? "/" : "",
                            c->proto >= 0 ? cs_nccl_proto_name(c->proto) : "", c->sys.gpu,
                            c->sys.nranks);
                    return CS_EXIT_USAGE;
                }
                /* the algorithm this schedule stands for is not NCCL's here
                 * (NVLS where NCCL cannot use it): Ring's costs */
                if (cs_nccl_choose(c->k, &c->sys, s->desc.coll, inst[i].bytes, CS_NCCL_RING, -1,
                                   &a, &p, NULL) != CS_OK)
                    a = CS_NCCL_RING, p = CS_NCCL_SIMPLE;
            }
        }
        cs_nccl_step_costs(c->k, &c->sys, s, a, p, inst[i].bytes, &c->cost[i]);
        c->inst_algo[2 * i] = a;
        c->inst_algo[2 * i + 1] = p;
        inst[i].nccl = &c->cost[i];
    }
    return CS_EXIT_OK;
}

#endif /* CS_HAVE_MODEL */
