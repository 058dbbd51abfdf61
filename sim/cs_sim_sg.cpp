/*
 * cs_sim_sg.cpp - the few SimGrid operations the C API of SimGrid 3.32
 * lacks, behind extern "C" functions (see cs_sim_int.h).
 *
 * Why C++ here: the C API cannot read link properties (tiers), and its
 * timed waits on a single comm drop the caller's reference even when they
 * time out; the rank interpreter waits on its outstanding comms with a
 * timeout (the end of its running reduction), so it uses s4u directly.
 *
 * The outstanding set (cs__sg_set_t) is a std::vector<ActivityPtr> built in
 * the caller's storage: it owns one reference per activity, and is handed
 * to wait_any_for as it is.  So a wait takes no reference and copies
 * nothing: each reference count is an atomic operation on an Activity that
 * other ranks' turns have evicted from the caches since the rank last ran
 * (the earlier version, copying handles into a vector per wait, spent more
 * in those misses than in SimGrid's own wait_any).  Nothing here may throw
 * into C: growing the vector is the only allocation that can fail, and is
 * caught.  All functions must be called from an actor, except
 * cs__sg_link_prop and cs__sg_seal, which also work from maestro.
 */
#include <memory>
#include <new>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u.hpp>
#include <simgrid/simix.hpp>

#include "cs_sim.h"
#include "cs_sim_int.h"

namespace sg4 = simgrid::s4u;

/* A host-to-host comm (Comm::sendto_init) ignores s4u's set_rate (SimGrid
 * 3.32 to 3.36 pass it only for mailbox comms), so the dag engine sets the
 * rate on the kernel's comm, whose setter SimGrid exports but whose header
 * it does not install.  CommImpl derives from ActivityImpl alone, so the
 * s4u activity's implementation pointer is the CommImpl's. */
namespace simgrid::kernel::activity {
class CommImpl {
public:
    CommImpl &set_rate(double rate);
};
} // namespace simgrid::kernel::activity

using act_vec = std::vector<sg4::ActivityPtr>;
static_assert(sizeof(act_vec) <= sizeof(cs__sg_set_t), "cs__sg_set_t too small");
static_assert(alignof(act_vec) <= alignof(cs__sg_set_t), "cs__sg_set_t misaligned");

static act_vec &vec(cs__sg_set_t *s)
{
    return *std::launder(reinterpret_cast<act_vec *>(s->opaque));
}

/* Add a started comm; with `block` or on allocation failure, wait for it
 * here instead. */
static int add(cs__sg_set_t *s, sg4::CommPtr c, int block)
{
    if (!block) {
        try {
            vec(s).emplace_back(std::move(c));
            return 0;
        } catch (const std::bad_alloc &) {
            /* nothing was moved: c still holds the comm */
        }
    }
    c->wait();
    return 1;
}

/* The dag engine's completion callback (cs__sg_dag_begin).  A comm it
 * started holds one reference taken at its start; the callback drops it
 * one completion later, since SimGrid still uses the comm after its
 * completion signal returns (release_dependencies, post). */
static struct {
    void (*done)(void *, void *);
    void *ctx;
    sg4::Activity *prev;
    bool on;
} dag_hook;

static void dag_release_prev()
{
    if (dag_hook.prev) {
        intrusive_ptr_release(dag_hook.prev);
        dag_hook.prev = nullptr;
    }
}

extern "C" {

int cs__sg_dag_begin(void (*done)(void *ctx, void *data), void *ctx)
{
    try {
        dag_hook.done = done;
        dag_hook.ctx = ctx;
        dag_hook.prev = nullptr;
#ifndef SIMGRID_HAVE_SENDTO_DIRECT
        if (!dag_hook.on)
            sg4::Activity::on_completion_cb([](sg4::Activity const &a) {
                auto *act = const_cast<sg4::Activity *>(&a);
                void *data = act->get_data<void>();
                if (!dag_hook.done || !data)
                    return; /* not one of cs__sg_xfer's comms: not ours to release */
                dag_release_prev();
                dag_hook.prev = act;
                dag_hook.done(dag_hook.ctx, data);
            });
#endif
        dag_hook.on = true;
        return 0;
    } catch (...) {
        return -1;
    }
}

void cs__sg_maestro(void (*fn)(void *ctx), void *ctx)
{
    simgrid::kernel::actor::simcall_answered([fn, ctx]() { fn(ctx); });
}

void cs__sg_dag_end(void)
{
    dag_release_prev();
    dag_hook.done = nullptr;
}

#ifdef SIMGRID_HAVE_SENDTO_DIRECT
/* collstep's SimGrid (scripts/simgrid/sendto-direct.patch): the comm is the
 * kernel's alone, without an s4u::Comm, its signals and references; its
 * callback reports it done. */
static void direct_done(void *data, bool ok)
{
    (void)ok; /* a failed transfer ends its steps as the s4u callback does */
    if (dag_hook.done && data)
        dag_hook.done(dag_hook.ctx, data);
}

int cs__sg_xfer(sg_host_t src, sg_host_t dst, double bytes, double rate, void *data)
{
    try {
        sg4::Comm::sendto_direct(src, dst, (double)(uint64_t)bytes, rate, direct_done, data);
        return 0;
    } catch (...) {
        return -1;
    }
}
#else
int cs__sg_xfer(sg_host_t src, sg_host_t dst, double bytes, double rate, void *data)
{
    try {
        sg4::CommPtr c = sg4::Comm::sendto_init(src, dst);
        c->set_payload_size((uint64_t)bytes);
        if (rate > 0)
            reinterpret_cast<simgrid::kernel::activity::CommImpl *>(c->get_impl())->set_rate(rate);
        c->set_data(data);
        c->start();
        intrusive_ptr_add_ref(c.get()); /* dropped by the completion callback */
        return 0;
    } catch (...) {
        return -1;
    }
}
#endif

int cs__sg_timer(double date, void (*fn)(void *ctx, uint64_t arg), void *ctx, uint64_t arg)
{
    try {
        simgrid::kernel::timer::Timer::set(date, [fn, ctx, arg]() { fn(ctx, arg); });
        return 0;
    } catch (...) {
        return -1;
    }
}

void cs__sg_set_init(cs__sg_set_t *s)
{
    new (s->opaque) act_vec();
}

void cs__sg_set_fini(cs__sg_set_t *s)
{
    vec(s).~act_vec();
}

int cs__sg_set_put(cs__sg_set_t *s, sg_mailbox_t mb, void *payload, double bytes, double rate,
                   int block)
{
    if (rate > 0) {
        sg4::CommPtr c = mb->put_init(payload, (uint64_t)bytes);
        c->set_rate(rate);
        c->start();
        return add(s, std::move(c), block);
    }
    return add(s, mb->put_async(payload, (uint64_t)bytes), block);
}

int cs__sg_set_get(cs__sg_set_t *s, sg_mailbox_t mb, void **data, int block)
{
    return add(s, mb->get_async(data), block);
}

void cs__sg_set_prefetch(cs__sg_set_t *s)
{
    __builtin_prefetch(vec(s).data(), 1);
}

long cs__sg_set_wait(cs__sg_set_t *s, double timeout)
{
    /* wait_any_for even for a single comm: Activity::wait() on a running
     * comm makes the kernel create a CPU sleep action (to notice host
     * failures) and destroy it afterwards, which costs more than wait_any's
     * bookkeeping (about 10 % of a 768-rank ring simulation).  An empty set
     * with a timeout is a bare timer, cheaper than sleep_for, which creates
     * a CPU action as well. */
    long pos = (long)sg4::Activity::wait_any_for(vec(s), timeout);
    return pos < 0 ? -1 : pos;
}

void cs__sg_set_remove(cs__sg_set_t *s, long pos)
{
    act_vec &v = vec(s);
    if ((size_t)pos + 1 < v.size())
        v[(size_t)pos] = std::move(v.back());
    v.pop_back();
}

/* Split-duplex halves ("x_UP", "x_DOWN") may not carry the properties of
 * the link "x" they were declared as: fall back to that link. */
const char *cs__sg_link_prop(sg_link_t link, const char *key)
{
    const sg4::Link *l = reinterpret_cast<sg4::Link *>(link);
    const char *v = l->get_property(key);
    if (v)
        return v;
    const std::string &name = l->get_name();
    size_t cut = 0;
    if (name.size() > 3 && name.compare(name.size() - 3, 3, "_UP") == 0)
        cut = 3;
    else if (name.size() > 5 && name.compare(name.size() - 5, 5, "_DOWN") == 0)
        cut = 5;
    if (cut == 0)
        return nullptr;
    try {
        const sg4::SplitDuplexLink *sd =
            sg4::Engine::get_instance()->split_duplex_link_by_name(name.substr(0, name.size() - cut));
        return sd ? sd->get_property(key) : nullptr;
    } catch (...) {
        return nullptr;
    }
}

void cs__sg_seal(void)
{
    sg4::Engine::get_instance()->seal_platform();
}

int cs__sg_no_latency_to(const sg_host_t *hosts, int n)
{
    try {
        auto to = std::make_shared<std::vector<const sg4::Host *>>(hosts, hosts + n);
        sg4::Engine::get_instance()->get_netzone_root()->get_network_model()->set_lat_factor_cb(
            [to](double, const sg4::Host *, const sg4::Host *dst,
                 const std::vector<sg4::Link *> &,
                 const std::unordered_set<sg4::NetZone *> &) -> double {
                for (const sg4::Host *h : *to)
                    if (h == dst)
                        return 0.0;
                return 1.0;
            });
        return 0;
    } catch (...) {
        return -1;
    }
}

int cs__sg_p2p_eager;

int cs__sg_nccl_factors(const sg_host_t *nolat, int nnolat, const sg_host_t *sw, int nsw,
                        const cs_sim_nccl_t *const *cur)
{
    try {
        auto *e = sg4::Engine::get_instance();
        /* each link's route class, from its tier; a link without latency
         * gets a nanosecond so that a latency factor can replace its
         * route's latency with NCCL's */
        auto cls = std::make_shared<std::unordered_map<const sg4::Link *, int>>();
        for (sg4::Link *l : e->get_all_links()) {
            const char *tier = cs__sg_link_prop(reinterpret_cast<sg_link_t>(l), "tier");
            (*cls)[l] = cs_sim_hw_class(tier);
            if (l->get_latency() <= 0)
                l->set_latency(1e-9);
        }
        auto to = std::make_shared<std::vector<const sg4::Host *>>(nolat, nolat + nnolat);
        auto sws = std::make_shared<std::vector<const sg4::Host *>>(sw, sw + nsw);
        auto route_class = [cls](const std::vector<sg4::Link *> &links) {
            int c = CS_SIM_HW_NVLINK;
            for (const sg4::Link *l : links) {
                auto it = cls->find(l);
                int k = it == cls->end() ? CS_SIM_HW_NET : it->second;
                if (k > c)
                    c = k;
            }
            return c;
        };
        /* a transfer to or from a switch (a switch operation's), not a
         * message between ranks */
        auto to_switch = [sws](const sg4::Host *src, const sg4::Host *dst) {
            for (const sg4::Host *h : *sws)
                if (h == src || h == dst)
                    return true;
            return false;
        };
        auto *model = e->get_netzone_root()->get_network_model();
        model->set_lat_factor_cb([to, to_switch, cur, route_class](double, const sg4::Host *src,
                                                             const sg4::Host *dst,
                                                             const std::vector<sg4::Link *> &links,
                                                             const std::unordered_set<sg4::NetZone *> &)
                                     -> double {
            for (const sg4::Host *h : *to)
                if (h == dst || (*cur && h == src))
                    return 0.0;
            const cs_sim_nccl_t *m = *cur;
            if (!m || links.empty())
                return 1.0;
            double lat = 0;
            for (const sg4::Link *l : links)
                lat += l->get_latency();
            /* an eager message between ranks: its latency is the dag
             * engine's (on its path: the receiver has it that much after its
             * bytes, the sender is done when they have moved), a nanosecond
             * here; a switch transfer's is SimGrid's */
            if (cs__sg_p2p_eager && !to_switch(src, dst))
                return lat > 0 ? 1e-9 / lat : 1.0;
            return lat > 0 ? m->lat[route_class(links)] / lat : 1.0;
        });
        model->set_bw_factor_cb([to_switch, cur, route_class](double, const sg4::Host *src,
                                                        const sg4::Host *dst,
                                                        const std::vector<sg4::Link *> &links,
                                                        const std::unordered_set<sg4::NetZone *> &)
                                    -> double {
            const cs_sim_nccl_t *m = *cur;
            if (!m || links.empty())
                return 1.0;
            double eff, cap = 0, bw = -1;
            if (to_switch(src, dst))
                eff = m->sw_eff, cap = m->sw_cap;
            else /* a message's cap is its rate (cs__sg_set_put) */
                eff = m->eff[route_class(links)];
            for (const sg4::Link *l : links)
                if (bw < 0 || l->get_bandwidth() < bw)
                    bw = l->get_bandwidth();
            double f = eff > 0 ? eff : 1.0;
            if (cap > 0 && bw > 0 && cap < f * bw)
                f = cap / bw;
            return f > 0 ? f : 1.0;
        });
        return 0;
    } catch (...) {
        return -1;
    }
}

} /* extern "C" */
