/*
 * cs_sim_routes.c - cs__sim_check_routes (cs_sim_int.h): before simulating a
 * platform file, every message the schedules send needs a route from its
 * sender's host to its receiver's, in the platform loaded in this process
 * (cs_platform_open read every pair of a small platform, and none or a
 * sample of a large one; this covers exactly what the schedules use).  A
 * send without one is refused naming the schedule, the rank, the step and
 * both hosts with their lines; `collstep platform show` lists the pairs.
 * Presets generate every route.
 * cs__sim_restart_setup: the hosts' restart properties of a calibrated
 * platform (platforms/cs_plat_calib.h) for the ranks' sends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/host.h>

#include "cs_grow.h"
#include "cs_hash.h"
#include "cs_platform.h"
#include "cs_sim_int.h"

/* A message and where the schedules first send it: instance, rank, step. */
typedef struct route_use {
    uint32_t src, dst;
    int inst, rank;
    uint32_t step;
} route_use_t;

static int cmp_use(const void *x, const void *y)
{
    const route_use_t *a = x, *b = y;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst)
        return a->dst < b->dst ? -1 : 1;
    if (a->inst != b->inst)
        return a->inst < b->inst ? -1 : 1;
    return a->step < b->step ? -1 : a->step > b->step;
}

/* "host NAME (rank R, file:line)" */
static void host_where(const cs_platform_t *plat, const char *h, uint32_t rank, char *buf,
                       size_t len)
{
    int line = cs_platform_host_line(plat, h);
    if (line > 0)
        snprintf(buf, len, "host %s (rank %u, %s:%d)", h, rank, plat->name, line);
    else
        snprintf(buf, len, "host %s (rank %u)", h, rank);
}

/* The set of (src, dst) pairs seen so far: an open-addressing table of
 * indices into `use` (0 empty, else index + 1), so that every send costs one
 * probe and only a pair's first use is kept (the schedules are walked in
 * instance, rank, step order, which is the order of first uses). */
typedef struct use_set {
    route_use_t *use;
    size_t n, cap;
    uint32_t *slot;
    size_t mask; /* slots - 1 (a power of two) */
} use_set_t;

static int use_set_grow(use_set_t *u)
{
    size_t slots = u->slot ? 2 * (u->mask + 1) : 4096;
    uint32_t *ns = calloc(slots, sizeof(*ns));
    if (!ns)
        return CS_ERR_NOMEM;
    for (size_t i = 0; i < u->n; i++) {
        uint64_t key = (uint64_t)u->use[i].src << 32 | u->use[i].dst;
        size_t h = (size_t)cs_hash_mix64(key) & (slots - 1);
        while (ns[h])
            h = (h + 1) & (slots - 1);
        ns[h] = (uint32_t)(i + 1);
    }
    free(u->slot);
    u->slot = ns;
    u->mask = slots - 1;
    return CS_OK;
}

/* Record a use of (u.src, u.dst) unless the pair was seen. */
static int use_set_add(use_set_t *u, route_use_t v)
{
    if (!u->slot || 2 * (u->n + 1) > u->mask + 1) {
        if (u->n + 1 >= UINT32_MAX || use_set_grow(u) != CS_OK)
            return CS_ERR_NOMEM;
    }
    uint64_t key = (uint64_t)v.src << 32 | v.dst;
    size_t h = (size_t)cs_hash_mix64(key) & u->mask;
    for (; u->slot[h]; h = (h + 1) & u->mask) {
        const route_use_t *o = &u->use[u->slot[h] - 1];
        if (o->src == v.src && o->dst == v.dst)
            return CS_OK;
    }
    if (cs_grow(&u->use, &u->cap, u->n + 1, sizeof(*u->use), 1024))
        return CS_ERR_NOMEM;
    u->use[u->n] = v;
    u->slot[h] = (uint32_t)++u->n;
    return CS_OK;
}

int cs__sim_check_routes(const cs_platform_t *plat, char *const *host_names,
                         const cs_sim_instance_t *inst, int ninst, cs_err_t *err)
{
    if (!plat->is_file)
        return CS_OK; /* presets: every route is generated */
    use_set_t set = {0};
    int st = CS_OK;
    for (int i = 0; i < ninst && st == CS_OK; i++) {
        const cs_sched_t *s = inst[i].sched;
        int dup = 0;
        for (int j = 0; j < i && !dup; j++)
            dup = inst[j].sched == s;
        for (int r = 0; !dup && r < s->desc.nranks && st == CS_OK; r++) {
            int last = -1; /* a run of sends to one peer costs one probe */
            for (uint32_t k = 0; k < s->ranks[r].nsteps; k++) {
                const cs_step_t *stp = &s->ranks[r].steps[k];
                if (stp->kind != CS_STEP_SEND || stp->peer < 0 || stp->peer == r ||
                    stp->peer == last)
                    continue;
                last = stp->peer;
                if (use_set_add(&set, (route_use_t){(uint32_t)r, (uint32_t)stp->peer, i, r, k})) {
                    st = cs_err_set(err, CS_ERR_NOMEM, "sim: out of memory");
                    break;
                }
            }
        }
    }
    free(set.slot);
    route_use_t *use = set.use;
    size_t m = set.n;
    /* in (src, dst) order, so that the first pair without a route is the
     * same whatever order the schedules were walked in */
    if (st == CS_OK && m > 1)
        qsort(use, m, sizeof(*use), cmp_use);
    const char **a = NULL, **b = NULL;
    if (st == CS_OK && m > 0) {
        a = malloc(m * sizeof(char *));
        b = malloc(m * sizeof(char *));
        if (!a || !b)
            st = cs_err_set(err, CS_ERR_NOMEM, "sim: out of memory");
    }
    if (st == CS_OK && m > 0) {
        for (size_t i = 0; i < m; i++) {
            a[i] = host_names[use[i].src];
            b[i] = host_names[use[i].dst];
        }
        size_t bad = 0;
        int back = 0;
        st = cs_platform_sg_routes(plat, a, b, m, &bad, &back, err);
        if (st == CS_ERR_NOTFOUND) {
            const route_use_t *u = &use[bad];
            const cs_sched_t *s = inst[u->inst].sched;
            char ha[320], hb[320];
            host_where(plat, a[bad], u->src, ha, sizeof(ha));
            host_where(plat, b[bad], u->dst, hb, sizeof(hb));
            st = cs_err_set(err, CS_ERR_INVAL,
                            "%s %s (%d ranks): rank %d, step %u, sends to rank %u, but %s has no "
                            "route to %s%s; `collstep platform show %s` lists the pairs of "
                            "ranks without a route",
                            cs_coll_name(s->desc.coll), s->algo[0] ? s->algo : "schedule",
                            s->desc.nranks, u->rank, u->step, u->dst, ha, hb,
                            back ? " (only the other way)" : " (nor the other way)",
                            plat->spec[0] ? plat->spec : plat->name);
        }
    }
    free(a);
    free(b);
    free(use);
    return st;
}


/* A host's property as a number >= 0 (absent or not one: 0). */
static double host_num(sg_host_t h, const char *key)
{
    const char *v = sg_host_get_property_value(h, key);
    char *end;
    double x = v ? strtod(v, &end) : 0;
    return v && end != v && *end == '\0' && x > 0 && x < 1e300 ? x : 0;
}

int cs__sim_restart_setup(cs__run_t *run, cs_err_t *err)
{
    int n = run->nhosts, any = 0;
    for (int r = 0; r < n && !any; r++)
        any = host_num(run->hosts[r], "restart_bytes") > 0;
    if (!any)
        return CS_OK;
    run->rs_bytes = malloc(sizeof(double) * (size_t)n);
    run->rs_idle = malloc(sizeof(double) * (size_t)n);
    run->rs_node = malloc(sizeof(int) * (size_t)n);
    if (!run->rs_bytes || !run->rs_idle || !run->rs_node)
        return cs_err_set(err, CS_ERR_NOMEM, "sim: out of memory");
    for (int r = 0; r < n; r++) {
        run->rs_bytes[r] = host_num(run->hosts[r], "restart_bytes");
        run->rs_idle[r] = host_num(run->hosts[r], "restart_idle");
        /* the node: the first rank of the same node name (no name: its own) */
        const char *name = sg_host_get_property_value(run->hosts[r], "node");
        run->rs_node[r] = r;
        for (int q = 0; q < r && name; q++) {
            const char *o = sg_host_get_property_value(run->hosts[q], "node");
            if (o && strcmp(o, name) == 0) {
                run->rs_node[r] = run->rs_node[q];
                break;
            }
        }
    }
    return CS_OK;
}
