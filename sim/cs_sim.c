/*
 * cs_sim.c - cs_sim_run: SimGrid set-up, the driver actor, routes.
 *
 * Flow of one run (see cs_sim.h for the contract):
 *   1. outside SimGrid: resolve rank -> host names (map, or the platform's
 *      ranks: cs_platform_t.hosts), compile each distinct schedule once (cs_sim_prog.c), and
 *      allocate the run-wide work arrays sized for the largest schedule;
 *   2. the XML written to a temporary file (removed once loaded) and, when
 *      it is not known to load, loaded in a child first (its refusal one
 *      message, no backtrace); simgrid_init with the model flags, load it
 *      (SimGrid's exceptions caught), check a file's routes for every send
 *      of the schedules (cs_sim_routes.c), install the simulated clock in
 *      cs_log;
 *   3. one driver actor (on rank 0's host) applies the calibrated factors
 *      at time 0, then for each instance starts one actor per rank on its
 *      host and waits on a barrier of P + 1 (no simulated time passes in
 *      it); the instance's time is the last rank's finish minus the start;
 *   4. a deadlocked schedule leaves the barrier unreached: SimGrid ends the
 *      run, and the missing instances are reported as CS_ERR_VERIFY.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/semaphore.h>
#include <xbt/dynar.h>

#include "cs_env.h"
#include "cs_log.h"
#include "cs_platform.h"
#include "cs_sim_int.h"
#include "cs_time.h"

uint32_t *cs__work_q, *cs__work_sq;
double *cs__work_post;
void **cs__work_pay;

static int sim_used;    /* SimGrid was initialised in this process */
static int sim_loaded;  /* a platform is loaded: routes can be asked */

static const char *const model_names[] = {"ideal", "calibrated", "nccl"};

static const char *const engine_names[] = {"default", "actors", "dag"};

const char *cs_sim_engine_name(cs_sim_engine_t e)
{
    return (e >= 0 && e < CS_SIM_ENGINE_COUNT) ? engine_names[e] : "?";
}

cs_sim_engine_t cs_sim_engine_parse(const char *s)
{
    for (int i = 1; i < CS_SIM_ENGINE_COUNT; i++)
        if (s && strcmp(s, engine_names[i]) == 0)
            return (cs_sim_engine_t)i;
    return CS_SIM_ENGINE_COUNT;
}

cs_sim_engine_t cs_sim_engine_default(void)
{
    return cs_sim_engine_fast() ? CS_SIM_ENGINE_DAG : CS_SIM_ENGINE_ACTORS;
}

int cs_sim_engine_fast(void)
{
    /* the library loaded, not only the one configured (LD_LIBRARY_PATH may
     * put a stock one in its place) */
    static int fast = -1;
    if (fast < 0) {
        cs_sim_simgrid_t sg;
        cs_sim_simgrid(&sg);
        fast = sg.activity_set;
    }
    return fast;
}

const char *cs_sim_model_name(cs_sim_model_t m)
{
    return (m >= 0 && m < CS_SIM_MODEL_COUNT) ? model_names[m] : "?";
}

cs_sim_model_t cs_sim_model_parse(const char *s)
{
    for (int i = 0; i < CS_SIM_MODEL_COUNT; i++)
        if (s && strcmp(s, model_names[i]) == 0)
            return (cs_sim_model_t)i;
    return CS_SIM_MODEL_COUNT;
}

void cs_sim_opts_init(cs_sim_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->model = CS_SIM_IDEAL;
}

void cs_sim_hosts_free(char **hosts, int n)
{
    if (!hosts)
        return;
    for (int i = 0; i < n; i++)
        free(hosts[i]);
    free(hosts);
}

int cs_sim_hosts(const cs_platform_t *plat, const cs_sim_opts_t *opts, int nranks, char ***out,
                 cs_err_t *err)
{
    const char *const *src = NULL;
    char **own = NULL;
    uint64_t nown = 0;
    if (!(opts && opts->map) && plat && !plat->hosts && plat->xml) {
        /* a platform built by hand as XML text: its ranks from the text */
        int st = cs_platform_xml_rank_hosts(plat->xml, &own, &nown, err);
        if (st != CS_OK)
            return st;
        if ((uint64_t)nranks > nown) {
            cs_sim_hosts_free(own, (int)nown);
            return cs_err_set(err, CS_ERR_INVAL, "sim: %d ranks but platform %s has only %llu hosts",
                              nranks, plat->name, (unsigned long long)nown);
        }
        for (uint64_t i = (uint64_t)nranks; i < nown; i++)
            free(own[i]);
        *out = own;
        return CS_OK;
    }
    if (opts && opts->map) {
        if (nranks > opts->nmap)
            return cs_err_set(err, CS_ERR_INVAL, "sim: %d ranks but the map names only %d hosts",
                              nranks, opts->nmap);
        src = opts->map;
    } else {
        /* the platform's ranks (platforms/cs_platform.h: devices in document
         * order, or every host by name when none is marked) */
        if (!plat || !plat->hosts || plat->ndevices == 0)
            return cs_err_set(err, CS_ERR_INVAL, "sim: platform %s has no host a rank can use",
                              plat ? plat->name : "(none)");
        if ((uint64_t)nranks > plat->ndevices)
            return cs_err_set(err, CS_ERR_INVAL,
                              "sim: %d ranks but platform %s has only %llu %s (%s); fewer ranks "
                              "or a --map naming hosts",
                              nranks, plat->name, (unsigned long long)plat->ndevices,
                              plat->rank_noun, plat->rank_rule);
        src = (const char *const *)plat->hosts;
    }
    char **v = calloc((size_t)nranks + 1, sizeof(char *));
    if (!v)
        return cs_err_set(err, CS_ERR_NOMEM, "sim: out of memory");
    for (int r = 0; r < nranks; r++) {
        v[r] = strdup(src[r]);
        if (!v[r]) {
            cs_sim_hosts_free(v, r);
            return cs_err_set(err, CS_ERR_NOMEM, "sim: out of memory");
        }
    }
    *out = v;
    return CS_OK;
}

int cs_sim_hw_class(const char *tier)
{
    static const char *const nvl[] = {"nvlink", "nvlink-host", "nvswitch", "xgmi"};
    static const char *const pci[] = {"pcie", "xbus", "pci", "host"};
    if (!tier)
        return CS_SIM_HW_NET;
    for (size_t i = 0; i < sizeof(nvl) / sizeof(nvl[0]); i++)
        if (strcmp(tier, nvl[i]) == 0)
            return CS_SIM_HW_NVLINK;
    for (size_t i = 0; i < sizeof(pci) / sizeof(pci[0]); i++)
        if (strcmp(tier, pci[i]) == 0)
            return CS_SIM_HW_PCI;
    return CS_SIM_HW_NET;
}

/* The running instance's NCCL parameters, read by the network model's
 * factor callbacks (cs__sg_nccl_factors) when a comm starts. */
static const cs_sim_nccl_t *nccl_cur;

/* ---- the driver actor ---------------------------------------------------- */

typedef cs__drv_t driver_t;

/* Model nccl: each tier's links at the rate NCCL counts on them. */
static void apply_tier_scale(const cs_platform_t *plat, const double *scale)
{
    size_t n = sg_link_count();
    sg_link_t *links = sg_link_list();
    for (size_t i = 0; i < n; i++) {
        const char *tier = cs__sg_link_prop(links[i], "tier");
        for (int t = 0; tier && t < plat->ntiers; t++)
            if (strcmp(plat->tiers[t].name, tier) == 0) {
                if (scale[t] > 0 && scale[t] != 1.0)
                    sg_link_set_bandwidth(links[i], sg_link_get_bandwidth(links[i]) * scale[t]);
                break;
            }
    }
    free(links);
}

static void apply_calibration(const cs_platform_t *plat)
{
    size_t n = sg_link_count();
    sg_link_t *links = sg_link_list();
    for (size_t i = 0; i < n; i++) {
        const char *tier = cs__sg_link_prop(links[i], "tier");
        if (!tier)
            continue;
        for (int t = 0; t < plat->ntiers; t++) {
            const cs_tier_info_t *ti = &plat->tiers[t];
            if (strcmp(ti->name, tier) != 0)
                continue;
            if (ti->bw_factor > 0 && ti->bw_factor != 1.0)
                sg_link_set_bandwidth(links[i], sg_link_get_bandwidth(links[i]) * ti->bw_factor);
            if (ti->lat_factor > 0 && ti->lat_factor != 1.0)
                sg_link_set_latency(links[i], sg_link_get_latency(links[i]) * ti->lat_factor);
            break;
        }
    }
    free(links);
}

/* At time 0, before the first instance: calibrated factors, NCCL's tier
 * rates, the switches' rates. */
static void time0_setup(driver_t *d)
{
    if (d->run.opts->model == CS_SIM_CALIBRATED)
        apply_calibration(d->run.plat);
    if (d->run.opts->model == CS_SIM_NCCL && d->run.opts->tier_bw_scale)
        apply_tier_scale(d->run.plat, d->run.opts->tier_bw_scale);
    for (int j = 0; j < d->nprogs; j++)
        if (d->progs[j].nswops)
            cs__sw_rates(&d->run, &d->progs[j]);
}

static void driver_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    driver_t *d = sg_actor_self_get_data();
    time0_setup(d);
    const cs_sim_observer_t *obs = d->run.opts->obs;
    for (int i = 0; i < d->n; i++) {
        cs_sim_instance_t *in = &d->inst[i];
        const cs_sched_t *s = in->sched;
        int P = s->desc.nranks;
        cs__inst_t I;
        memset(&I, 0, sizeof(I));
        I.run = &d->run;
        I.index = i;
        I.in = in;
        I.prog = &d->progs[d->prog_of[i]];
        cs__prog_mailboxes(I.prog);
        if (d->run.opts->model == CS_SIM_NCCL)
            cs__prog_classes(I.prog, d->run.host_names);
        I.esize = cs_dtype_size(in->dtype);
        I.count = cs_coll_block_count(s->desc.coll, P, in->bytes, I.esize);
        I.primed = cs__prog_take_prime(I.prog, I.count, I.esize);
        I.finish = d->finish;
        I.t0 = simgrid_get_clock();
        if (d->run.opts->model == CS_SIM_NCCL) {
            nccl_cur = in->nccl;
            double base = cs__nccl_start_delay(in->nccl);
            if (base > 0)
                sg_actor_sleep_for(base);
        }
        cs__sw_reset(I.prog);
        d->run.cur = &I;
        CS_DEBUG("sim", "instance %d: %s %s P=%d bytes=%llu", i, cs_coll_name(s->desc.coll),
                 s->algo, P, (unsigned long long)in->bytes);
        if (obs && obs->instance_begin)
            obs->instance_begin(obs->ctx, i, in, I.t0);
        sg_bar_t bar = sg_barrier_init((unsigned)P + 1);
        for (int r = 0; r < P; r++) {
            char name[32];
            snprintf(name, sizeof(name), "rank%d", r);
            d->args[r].inst = &I;
            d->args[r].rank = r;
            d->args[r].bar = bar;
            sg_actor_t a = sg_actor_init(name, d->run.hosts[r]);
            sg_actor_set_data(a, &d->args[r]);
            sg_actor_start(a, cs__rank_main, 0, NULL);
        }
        sg_barrier_wait(bar);
        sg_barrier_destroy(bar);
        /* a switch actor wakes from its multicast when its last receivers
         * do and then reports to the observer through I (on this stack):
         * let it return, at this same simulated time, before I is reused */
        if (d->run.sw_live > 0 && !d->run.failed) {
            d->run.sw_idle = sg_sem_init(0);
            sg_sem_acquire(d->run.sw_idle);
            sg_sem_destroy(d->run.sw_idle);
            d->run.sw_idle = NULL;
        }
        double end = I.t0;
        for (int r = 0; r < P; r++)
            if (I.finish[r] > end)
                end = I.finish[r];
        in->time = end - I.t0;
        d->run.cur = NULL;
        nccl_cur = NULL;
        if (d->run.failed)
            break;
        d->completed++;
        if (obs && obs->instance_end)
            obs->instance_end(obs->ctx, i, in, end);
    }
}

/* ---- set-up ----------------------------------------------------------------- */

/* bsearch: a name against a host of sg_host_list(), which lists them by
 * name (std::string's order, strcmp's).  The ranks' hosts are found in that
 * one list: sg_host_by_name() looks through every zone of the platform,
 * seconds at 27,648 ranks in 9,500 zones. */
static int host_name_cmp(const void *key, const void *elem)
{
    return strcmp((const char *)key, sg_host_get_name(*(const sg_host_t *)elem));
}

static double sim_clock(void)
{
    return simgrid_get_clock();
}

static int check_args(const cs_platform_t *plat, cs_sim_model_t model, cs_sim_instance_t *inst,
                      int n, int *maxp, cs_err_t *err)
{
    if (!plat || !plat->xml || (n > 0 && !inst) || n < 0)
        return cs_err_set(err, CS_ERR_INVAL, "sim: no platform or no instances");
    *maxp = 0;
    for (int i = 0; i < n; i++) {
        if (!inst[i].sched)
            return cs_err_set(err, CS_ERR_INVAL, "sim: instance %d has no schedule", i);
        if (inst[i].dtype < 0 || inst[i].dtype >= CS_DT_COUNT)
            return cs_err_set(err, CS_ERR_INVAL, "sim: instance %d has an unknown type", i);
        if (model == CS_SIM_NCCL && !inst[i].nccl)
            return cs_err_set(err, CS_ERR_INVAL,
                              "sim: instance %d has no NCCL parameters (model nccl)", i);
        if (inst[i].sched->desc.nranks > *maxp)
            *maxp = inst[i].sched->desc.nranks;
    }
    return CS_OK;
}

int cs_sim_run(const cs_platform_t *plat, const cs_sim_opts_t *opts_in, cs_sim_instance_t *inst,
               int n, cs_err_t *err)
{
    cs_sim_opts_t defopts;
    cs_platform_sg_text_t *text = NULL;
    driver_t d;
    int maxp = 0, nprogs = 0, st;
    memset(&d, 0, sizeof(d));
    if (!opts_in) {
        cs_sim_opts_init(&defopts);
        opts_in = &defopts;
    }
    if (sim_used)
        return cs_err_set(err, CS_ERR_UNSUPPORTED,
                          "sim: SimGrid runs one simulation per process; pass every instance "
                          "to one cs_sim_run call");
    st = check_args(plat, opts_in->model, inst, n, &maxp, err);
    if (st != CS_OK)
        return st;
    cs_sim_engine_t engine = opts_in->engine;
    if (engine == CS_SIM_ENGINE_DEFAULT) {
        /* CS_SIM_ENGINE: for commands without --engine (plan, validate),
         * under the models whose messages both engines run; the NCCL
         * model's eager messages are the dag engine's alone */
        const char *e = cs_env_get("CS_SIM_ENGINE");
        engine = e && *e ? cs_sim_engine_parse(e) : cs_sim_engine_default();
        if (engine == CS_SIM_ENGINE_COUNT)
            return cs_err_set(err, CS_ERR_INVAL,
                              "sim: CS_SIM_ENGINE: expected dag or actors, found '%s'", e);
        if (opts_in->model == CS_SIM_NCCL)
            engine = CS_SIM_ENGINE_DAG;
    }
    if (engine != CS_SIM_ENGINE_ACTORS && engine != CS_SIM_ENGINE_DAG)
        return cs_err_set(err, CS_ERR_INVAL, "sim: unknown engine %d", (int)opts_in->engine);
    if (engine == CS_SIM_ENGINE_ACTORS && opts_in->model == CS_SIM_NCCL)
        return cs_err_set(err, CS_ERR_INVAL,
                          "sim: the nccl model runs on the dag engine (its messages are eager, "
                          "as NCCL's connections: the actor engine has rendezvous messages only)");
    d.run.plat = plat;
    d.run.opts = opts_in;
    d.run.nccl_cur = &nccl_cur;
    d.inst = inst;
    d.n = n;
    st = cs_sim_hosts(plat, opts_in, maxp > 0 ? maxp : 1, &d.run.host_names, err);
    if (st != CS_OK)
        return st;
    d.run.nhosts = maxp > 0 ? maxp : 1;
    st = CS_ERR_NOMEM;
    d.progs = calloc((size_t)n + 1, sizeof(cs__prog_t));
    d.prog_of = calloc((size_t)n + 1, sizeof(int));
    d.args = calloc((size_t)d.run.nhosts, sizeof(cs__rank_arg_t));
    d.finish = calloc((size_t)d.run.nhosts, sizeof(double));
    d.run.hosts = calloc((size_t)d.run.nhosts, sizeof(sg_host_t));
    if (!d.progs || !d.prog_of || !d.args || !d.finish || !d.run.hosts) {
        cs_err_set(err, st, "sim: out of memory");
        goto out;
    }
    uint64_t maxsteps = 1;
    for (int i = 0; i < n; i++) {
        uint64_t k = cs_sched_total_steps(inst[i].sched);
        if (k > maxsteps)
            maxsteps = k;
    }
    /* the FIFO slices: untouched pages cost nothing */
    cs__work_q = malloc(sizeof(uint32_t) * maxsteps);
    if (!cs__work_q) {
        cs_err_set(err, st, "sim: out of memory for %llu steps", (unsigned long long)maxsteps);
        goto out;
    }
    /* memory: everything to come, before anything large is built
     * (cs_sim_mem.c) */
    cs__mem_t mem = {0};
    uint64_t steps_all = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = inst[j].sched == inst[i].sched;
        if (!seen)
            steps_all += cs_sched_total_steps(inst[i].sched);
    }
    cs__mem_estimate(&mem, steps_all, d.run.nhosts, d.run.nhosts, engine == CS_SIM_ENGINE_DAG, 0,
                     opts_in->obs != NULL, 0);
    mem.platform = (uint64_t)d.run.nhosts * CS__MEM_HOST;
    st = cs__mem_check(&mem, "before compiling", err);
    if (st != CS_OK)
        goto out;
    uint64_t rss0 = cs__mem_rss();
    double w0 = cs_now_s();
    int nthreads = 1;
    for (int i = 0; i < n; i++) {
        int j = 0;
        while (j < nprogs && d.progs[j].s != inst[i].sched)
            j++;
        if (j == nprogs) {
            /* the first instance's program is primed for it */
            const cs_sched_t *s = inst[i].sched;
            cs__prime_t prime = {0, cs_dtype_size(inst[i].dtype), cs__work_q};
            if (i == 0)
                prime.count = cs_coll_block_count(s->desc.coll, s->desc.nranks, inst[i].bytes,
                                                  prime.esize);
            st = cs__prog_build(&d.progs[j], s, i == 0 ? &prime : NULL, err);
            if (st != CS_OK)
                goto out;
            if (d.progs[j].nthreads > nthreads)
                nthreads = d.progs[j].nthreads;
            nprogs++;
        }
        d.prog_of[i] = j;
    }
    st = CS_ERR_NOMEM;
    if (opts_in->ports > 0) /* the FIFO of sends waiting for a port */
        cs__work_sq = malloc(sizeof(uint32_t) * maxsteps);
    if (opts_in->obs) {
        cs__work_post = calloc(maxsteps, sizeof(double));
        cs__work_pay = calloc(maxsteps, sizeof(void *));
    }
    if ((opts_in->ports > 0 && !cs__work_sq) ||
        (opts_in->obs && (!cs__work_post || !cs__work_pay))) {
        cs_err_set(err, st, "sim: out of memory for %llu steps", (unsigned long long)maxsteps);
        goto out;
    }

    CS_INFO("sim", "compiled %d schedule(s) (the largest: %llu steps) on %d thread(s) in %.2f s",
            nprogs, (unsigned long long)maxsteps, nthreads, cs_now_s() - w0);

    mem.steps = cs__mem_rss() > rss0 ? cs__mem_rss() - rss0 : 0; /* spent now */
    /* the platform's text, checked in a child unless known to load */
    st = cs_platform_sg_prepare(plat, opts_in->model != CS_SIM_CALIBRATED, &text, err);
    if (st != CS_OK)
        goto out;
    /* SimGrid: once per process from here on */
    sim_used = 1;
    w0 = cs_now_s();
#ifdef __GLIBC__
    /* Keep glibc's mmap threshold at its initial 128 KiB.  By default glibc
     * raises it each time a large block is freed; SimGrid's Dijkstra routing
     * (top zone of a rail-zone platform, platforms/cs_plat_model.c) frees
     * large transient arrays on every new source, so they end up carved
     * from the heap between long-lived blocks: 2.5 GB RSS at 2304 Summit
     * nodes instead of 0.7 GB.  Blocks under the threshold are unaffected. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
    /* no TCP window bound: gamma 0 (CM02 then leaves flows unbounded), or,
     * with the NCCL model's per-message rate limits, a gamma so large that
     * its bound never binds: CM02 takes min(rate limit, gamma / 2 latency),
     * and a 0 there would drop the limit */
    char *args[] = {"collstep",
                    "--cfg=network/model:CM02",
                    "--cfg=network/crosstraffic:0",
                    opts_in->model == CS_SIM_NCCL ? "--cfg=network/TCP-gamma:1e30"
                                                  : "--cfg=network/TCP-gamma:0",
                    "--cfg=contexts/stack-size:256",
                    "--log=root.thres:warning",
                    NULL};
    int argc = (int)(sizeof(args) / sizeof(args[0])) - 1;
    simgrid_init(&argc, args);
    uint64_t rss1 = cs__mem_rss();
    st = cs_platform_sg_load(plat, text, err);
    mem.platform = cs__mem_rss() > rss1 ? cs__mem_rss() - rss1 : 0;
    text = NULL;
    if (st != CS_OK)
        goto out;
    sim_loaded = 1;
    size_t nall = d.run.nhosts > 0 ? sg_host_count() : 0;
    sg_host_t *all = nall > 0 ? sg_host_list() : NULL;
    for (int r = 0; r < d.run.nhosts; r++) {
        sg_host_t *h = all ? bsearch(d.run.host_names[r], all, nall, sizeof(*all), host_name_cmp)
                           : NULL;
        d.run.hosts[r] = h ? *h : NULL;
        if (!d.run.hosts[r]) {
            free(all);
            st = cs_err_set(err, CS_ERR_INVAL, "sim: rank %d: no host named '%s' in platform %s",
                            r, d.run.host_names[r], plat->name);
            goto out;
        }
    }
    free(all);
    st = cs__sim_check_routes(plat, d.run.host_names, inst, n, err);
    if (st == CS_OK)
        st = cs__sim_restart_setup(&d.run, err);
    for (int j = 0; j < nprogs && st == CS_OK; j++)
        if (d.progs[j].nswops)
            st = cs__sw_check(plat, d.run.host_names, &d.progs[j], inst, d.prog_of, j, n, err);
    if (st == CS_OK && opts_in->model == CS_SIM_NCCL)
        st = cs__sw_nccl_setup(&d.run, &nccl_cur, err);
    for (int j = 0; j < nprogs && st == CS_OK && opts_in->model != CS_SIM_NCCL; j++)
        if (d.progs[j].nswops) {
            st = cs__sw_latency_setup(&d.run, err);
            break;
        }
    if (st != CS_OK)
        goto out;
    d.nprogs = nprogs;
    d.run.sw_free = calloc((size_t)plat->nswitches + 1, sizeof(double));
    if (!d.run.sw_free) {
        st = cs_err_set(err, CS_ERR_NOMEM, "sim: out of memory");
        goto out;
    }
    CS_INFO("sim", "SimGrid platform %s loaded in %.2f s", plat->spec[0] ? plat->spec : plat->name,
            cs_now_s() - w0);
    {
        /* what is still to come: rank state and transfers in flight */
        uint64_t swm = 0;
        for (int j = 0; j < nprogs; j++)
            for (uint32_t k = 0; k < d.progs[j].nswops; k++)
                swm += d.progs[j].swops[k].n;
        cs__mem_t rest = {0};
        cs__mem_estimate(&rest, 0, d.run.nhosts, d.run.nhosts, engine == CS_SIM_ENGINE_DAG,
                         d.run.rs_bytes != NULL, 0, swm);
        CS_INFO("sim", "memory: compiled schedules %.2f GiB, SimGrid's platform %.2f GiB",
                mem.steps / 1073741824.0, mem.platform / 1073741824.0);
        st = cs__mem_check(&rest, "before simulating", err);
        if (st != CS_OK)
            goto out;
        mem.ranks = rest.ranks;
        mem.flight = rest.flight;
    }
    w0 = cs_now_s();
    cs_log_set_clock(sim_clock, "sim");
    if (engine == CS_SIM_ENGINE_DAG) {
        cs__sg_seal();
        time0_setup(&d);
        st = cs__dag_run(&d, err);
    } else {
        sg_actor_t drv = sg_actor_init("driver", d.run.hosts[0]);
        sg_actor_set_data(drv, &d);
        sg_actor_start(drv, driver_main, 0, NULL);
        simgrid_run();
    }
    cs_log_set_clock(NULL, NULL);
    CS_INFO("sim", "simulated %d of %d instance(s) in %.2f s (engine %s); peak resident %.2f GiB",
            d.completed, n, cs_now_s() - w0, cs_sim_engine_name(engine),
            cs__mem_peak() / 1073741824.0);
    if (st != CS_OK) /* the dag engine could not start */
        goto out;
    if (d.run.failed)
        st = cs_err_set(err, d.run.failed, "sim: internal failure while simulating instance %d",
                        d.completed);
    else if (d.completed < n)
        st = cs_err_set(err, CS_ERR_VERIFY,
                        "sim: instance %d (%s %s, %d ranks) deadlocked: verify the schedule",
                        d.completed, cs_coll_name(inst[d.completed].sched->desc.coll),
                        inst[d.completed].sched->algo, inst[d.completed].sched->desc.nranks);
    else
        st = CS_OK;
out:
    cs_platform_sg_text_free(text);
    for (int j = 0; j < nprogs; j++)
        cs__prog_fini(&d.progs[j]);
    free(d.progs);
    free(d.prog_of);
    free(d.args);
    free(d.finish);
    free(d.run.hosts);
    free(d.run.sw_free);
    free(d.run.rs_bytes);
    free(d.run.rs_idle);
    free(d.run.rs_node);
    cs_sim_hosts_free(d.run.host_names, d.run.nhosts);
    free(cs__work_q);
    free(cs__work_sq);
    free(cs__work_post);
    free(cs__work_pay);
    cs__work_q = cs__work_sq = NULL;
    cs__work_post = NULL;
    cs__work_pay = NULL;
    return st;
}

/* ---- routes ------------------------------------------------------------------ */

int cs_sim_route(const char *src, const char *dst, cs_sim_link_t *links, int max, int *nlinks,
                 cs_err_t *err)
{
    if (!sim_loaded)
        return cs_err_set(err, CS_ERR_INVAL, "sim: no platform loaded");
    sg_host_t a = sg_host_by_name(src), b = sg_host_by_name(dst);
    if (!a || !b)
        return cs_err_set(err, CS_ERR_NOTFOUND, "sim: no host named '%s'", a ? dst : src);
    xbt_dynar_t v = xbt_dynar_new(sizeof(sg_link_t), NULL);
    sg_host_get_route(a, b, v);
    int cnt = (int)xbt_dynar_length(v);
    for (int i = 0; i < cnt && i < max; i++) {
        sg_link_t l = xbt_dynar_get_as(v, (unsigned)i, sg_link_t);
        const char *tier = cs__sg_link_prop(l, "tier");
        links[i].name = sg_link_get_name(l);
        links[i].tier = tier ? tier : "";
        links[i].bandwidth = sg_link_get_bandwidth(l);
        links[i].latency = sg_link_get_latency(l);
    }
    xbt_dynar_free(&v);
    *nlinks = cnt;
    return CS_OK;
}
