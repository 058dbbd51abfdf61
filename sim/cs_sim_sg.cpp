/*
 * cs_sim_sg.cpp - the few SimGrid operations the C API of SimGrid 3.32
 * lacks, behind extern "C" functions (see cs_sim_int.h).
 *
 * Why C++ here: the C API cannot read link properties (tiers), and its
 * timed waits on a single comm drop the caller's reference even when they
 * time out; the rank interpreter waits on its outstanding comms with a
 * timeout (the end of its running reduction), so it uses s4u directly.
 *
 * Handles: every activity handle given out holds one reference on the
 * s4u::Activity; cs__sg_wait_any drops the reference of the activity it
 * reports as finished (none on a timeout), so a handle is used until it is
 * reported, then forgotten.  All functions must be called from an actor, except
 * cs__sg_link_prop and cs__sg_seal, which also work from maestro.
 */
#include <simgrid/s4u.hpp>

#include "cs_sim_int.h"

namespace sg4 = simgrid::s4u;

extern "C" {

cs__sg_act_t *cs__sg_put(sg_mailbox_t mb, void *payload, double bytes)
{
    sg4::CommPtr c = mb->put_async(payload, (uint64_t)bytes);
    sg4::Activity *a = c.get();
    a->add_ref();
    return reinterpret_cast<cs__sg_act_t *>(a);
}

cs__sg_act_t *cs__sg_get(sg_mailbox_t mb, void **data)
{
    sg4::CommPtr c = mb->get_async(data);
    sg4::Activity *a = c.get();
    a->add_ref();
    return reinterpret_cast<cs__sg_act_t *>(a);
}

long cs__sg_wait_any(cs__sg_act_t **acts, size_t n, double timeout, void **cache)
{
    if (n == 0) {
        /* a bare timer: cheaper than sleep_for, which creates a CPU action */
        if (timeout > 0)
            sg4::Activity::wait_any_for(std::vector<sg4::ActivityPtr>(), timeout);
        return -1;
    }
    sg4::Activity *done;
    long pos = 0;
    if (n == 1 && timeout < 0) {
        done = reinterpret_cast<sg4::Activity *>(acts[0]);
        done->wait();
    } else {
        /* the caller's vector, kept between calls: no allocation per wait */
        auto *v = static_cast<std::vector<sg4::ActivityPtr> *>(*cache);
        if (!v) {
            v = new std::vector<sg4::ActivityPtr>();
            *cache = v;
        }
        v->clear();
        for (size_t i = 0; i < n; i++)
            v->emplace_back(reinterpret_cast<sg4::Activity *>(acts[i]));
        pos = (long)sg4::Activity::wait_any_for(*v, timeout);
        done = pos < 0 ? nullptr : (*v)[(size_t)pos].get();
        v->clear();
        if (pos < 0)
            return -1;
    }
    done->unref();
    return pos;
}

void cs__sg_wait_cache_free(void *cache)
{
    delete static_cast<std::vector<sg4::ActivityPtr> *>(cache);
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

} /* extern "C" */
