/*
 * cs_plat_sg.cpp - SimGrid builds a platform file, collstep reads what it
 * built (contracts in cs_plat_file.h).
 *
 * Why C++: SimGrid 3.32's C API cannot list a zone's links, read or set
 * link properties, or catch the exceptions its parser throws
 * (simgrid::ParseError with file:line, std::invalid_argument for a missing
 * Floyd/Dijkstra route, simgrid::AssertionError for a bad zone route).
 * Nothing here lets an exception reach C.
 *
 * Why a child process for `cs_platform_open`: SimGrid can be initialised
 * once per process, and the simulation (sim/cs_sim.c) needs that once; and
 * a few faults still end in xbt_die / abort (a route asked of a zone with
 * routing "None", ...).  The child loads the file, seals it, reads hosts,
 * links and routes, and writes one line per fact on a pipe:
 *     R host            rank host, in rank order
 *     N noun \t rule    what the ranks are, one sentence
 *     T tier \t nlinks \t bandwidth \t latency
 *     G nv \t ne \t diameter \t bisection \t npairs \t exact
 *     E code \t message (the first error; nothing else matters then)
 * If it dies, SimGrid's last CRITICAL message (its log, kept in a scratch
 * directory) becomes the error.
 *
 * Derived tiers (a link without a tier property; cs_platform_tier_rule):
 * from the zone SimGrid generated the link in, by the names SimGrid 3.32
 * gives generated links (src/surf/sg_platf.cpp, src/kernel/routing/
 * {Torus,FatTree,Dragonfly}Zone.cpp): a flat cluster Z makes Z_link_<i>
 * (the host's private link), Z_link_<i>_limiter, Z_link_<i>_loopback,
 * Z_backbone; a torus Z_link_from_<i>_to_<j> (the dimension is the
 * coordinate in which i and j differ, coordinates from topo_parameters,
 * first dimension fastest); a fat tree link_from_<child>_<parent>_<n>
 * (a link's level is its parent's: hosts, never a parent, are level 0, a
 * switch is one above its highest child); a dragonfly local_link_* (host to
 * router), green_link_* (routers of a chassis: "row"), black_link_*
 * (chassis of a group: "group"), blue_link_* (between groups: "global");
 * a cabinet link_<host>_UP/_DOWN; a peer link_<peer>_UP/_DOWN.
 *
 * Graph for the figures (files): from the routes between the ranks'
 * hosts, every ordered pair when there are few ranks (N (N - 1) <= 2^18),
 * otherwise rank i to i + 1 and i + N/2 (mod N), then i + 2, i + 4, ...
 * while the routes stay under 2^17 (pairs_of), both ways.  Vertices: each host twice (as a route's source, as its
 * destination, so no flow passes through a host) and each link direction
 * twice (in, out: an edge in -> out of the link's bandwidth); a route
 * h, l1, ..., ln, h' adds edges h -> l1.in, l1.out -> l2.in, ...,
 * ln.out -> h'.  Bisection: max-flow (igraph push-relabel) from the
 * first half of the ranks to the second half; diameter: the most links on
 * one of the routes read.
 */
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <igraph.h>
#include <simgrid/Exception.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u.hpp>

extern "C" { /* cs_status.h has no C++ guards of its own */
#include "cs_plat_file.h"
}

namespace sg4 = simgrid::s4u;

/* ---- derived tiers ---------------------------------------------------- */

static bool ends_with(const std::string &s, const char *t)
{
    size_t n = strlen(t);
    return s.size() >= n && s.compare(s.size() - n, n, t) == 0;
}
static bool starts_with(const std::string &s, const std::string &t)
{
    return s.compare(0, t.size(), t) == 0;
}
/* Name without the _UP / _DOWN of a split-duplex half. */
static std::string base_name(const std::string &n)
{
    if (ends_with(n, "_UP"))
        return n.substr(0, n.size() - 3);
    if (ends_with(n, "_DOWN"))
        return n.substr(0, n.size() - 5);
    return n;
}

/* A link's tier property: its own, or (a split-duplex half "x_UP",
 * "x_DOWN") that of the split-duplex link "x" it was declared as. */
static const char *link_tier(const sg4::Link *l)
{
    const char *v = l->get_property("tier");
    if (v)
        return v;
    const std::string &n = l->get_name();
    std::string b = base_name(n);
    if (b.size() == n.size())
        return nullptr;
    try {
        const sg4::SplitDuplexLink *sd = sg4::Engine::get_instance()->split_duplex_link_by_name(b);
        return sd ? sd->get_property("tier") : nullptr;
    } catch (const std::exception &) {
        return nullptr;
    }
}

static void zones_dfs(sg4::NetZone *z, std::vector<sg4::NetZone *> &out)
{
    out.push_back(z);
    for (sg4::NetZone *c : z->get_children())
        zones_dfs(c, out);
}

/* Torus: dimension in which ids a and b differ (first dimension fastest). */
static int torus_dim(const char *params, long a, long b)
{
    std::vector<long> dims;
    for (const char *c = params; *c;) {
        char *end = nullptr;
        long v = strtol(c, &end, 10);
        if (end == c)
            break;
        dims.push_back(v > 0 ? v : 1);
        c = *end ? end + 1 : end;
    }
    for (size_t k = 0; k < dims.size(); k++) {
        if (a % dims[k] != b % dims[k])
            return (int)k;
        a /= dims[k];
        b /= dims[k];
    }
    return 0;
}

static std::string cluster_tier(const cs__pcluster_t &c, const std::string &n,
                                const std::unordered_map<long, int> &ft_level)
{
    std::string b = base_name(n), z = c.id;
    if (b == z + "_backbone")
        return "backbone";
    if (ends_with(b, "_loopback"))
        return "loopback";
    if (ends_with(b, "_limiter"))
        return "limiter";
    if (strcmp(c.topology, "TORUS") == 0) {
        long i, j;
        if (sscanf(b.c_str() + (starts_with(b, z) ? z.size() : 0), "_link_from_%ld_to_%ld", &i,
                   &j) == 2)
            return "torus-d" + std::to_string(torus_dim(c.params, i, j));
        return "link";
    }
    if (strcmp(c.topology, "FAT_TREE") == 0) {
        long ch, pa;
        if (sscanf(b.c_str(), "link_from_%ld_%ld_", &ch, &pa) == 2) {
            auto it = ft_level.find(pa);
            return it != ft_level.end() ? "level" + std::to_string(it->second) : "link";
        }
        return "link";
    }
    if (strcmp(c.topology, "DRAGONFLY") == 0) {
        if (starts_with(b, "local_link"))
            return "local";
        if (starts_with(b, "green_link"))
            return "row";
        if (starts_with(b, "black_link"))
            return "group";
        if (starts_with(b, "blue_link"))
            return "global";
        return "link";
    }
    return "host"; /* FLAT, CABINETS: a host's own link */
}

/* Fat tree: the level of each node id, from a zone's link names
 * link_from_<child>_<parent>_<n>: hosts (ids that are never a parent) are
 * level 0, a switch is one above its highest child.  A link's level is its
 * parent's (level1: host to first switch). */
static std::unordered_map<long, int> fat_tree_levels(const std::vector<sg4::Link *> &links)
{
    std::unordered_map<long, std::vector<long>> kids;
    for (const sg4::Link *l : links) {
        long ch, pa;
        if (sscanf(l->get_cname(), "link_from_%ld_%ld_", &ch, &pa) == 2)
            kids[pa].push_back(ch);
    }
    std::unordered_map<long, int> lvl;
    for (bool changed = true; changed;) {
        changed = false;
        for (auto &[pa, cs] : kids) {
            int best = 0;
            for (long c : cs) {
                int lc = kids.count(c) ? (lvl.count(c) ? lvl[c] : -1) : 0;
                if (lc < 0) {
                    best = -1;
                    break;
                }
                best = std::max(best, lc);
            }
            if (best >= 0 && (!lvl.count(pa) || lvl[pa] != best + 1)) {
                lvl[pa] = best + 1;
                changed = true;
            }
        }
    }
    return lvl;
}

/* Set the derived tier of every link without one; lines (may be null)
 * receives the line of the <cluster> that made a generated link. */
static void derive_tiers(const cs__pfile_t *f, std::unordered_map<const sg4::Link *, int> *lines)
{
    auto *e = sg4::Engine::get_instance();
    std::unordered_set<std::string> bb, peers;
    for (int i = 0; f && i < f->nbackbones; i++)
        bb.insert(f->backbones[i]);
    for (int i = 0; f && i < f->npeers; i++)
        peers.insert(std::string("link_") + f->peers[i]);
    if (f != nullptr && f->ncl > 0) {
        std::unordered_map<std::string, const cs__pcluster_t *> cl;
        for (int i = 0; i < f->ncl; i++)
            cl.emplace(f->cl[i].id, &f->cl[i]);
        std::vector<sg4::NetZone *> zones;
        zones_dfs(e->get_netzone_root(), zones);
        for (sg4::NetZone *z : zones) {
            auto it = cl.find(z->get_name());
            if (it == cl.end())
                continue;
            std::vector<sg4::Link *> links = z->get_impl()->get_all_links();
            std::unordered_map<long, int> ftl;
            if (strcmp(it->second->topology, "FAT_TREE") == 0)
                ftl = fat_tree_levels(links);
            for (sg4::Link *l : links) {
                if (lines)
                    (*lines)[l] = it->second->line;
                if (!link_tier(l))
                    l->set_property("tier", bb.count(base_name(l->get_name()))
                                                ? std::string("backbone")
                                                : cluster_tier(*it->second, l->get_name(), ftl));
            }
        }
    }
    for (sg4::Link *l : e->get_all_links()) {
        if (l->get_property("tier"))
            continue;
        if (const char *sd = link_tier(l)) { /* the half of a tagged split-duplex link */
            l->set_property("tier", sd);
            continue;
        }
        std::string b = base_name(l->get_name());
        const char *t = "link";
        if (l->get_name() == "__loopback__" || ends_with(b, "_loopback"))
            t = "loopback";
        else if (bb.count(b))
            t = "backbone";
        else if (peers.count(b))
            t = "peer";
        l->set_property("tier", t);
    }
}

extern "C" void cs__plat_sg_apply_tiers(const cs__pfile_t *f)
{
    derive_tiers(f, nullptr);
}

/* ---- messages ----------------------------------------------------------- */

/* "Parse error at PATH:LINE: msg" -> "SHOWN:LINE: msg"; other paths too. */
static std::string user_words(std::string m, const char *path, const char *shown)
{
    static const char pe[] = "Parse error at ";
    if (m.compare(0, sizeof(pe) - 1, pe) == 0)
        m = m.substr(sizeof(pe) - 1);
    size_t from = 0, plen = path ? strlen(path) : 0, slen = strlen(shown);
    for (size_t at; plen > 0 && (at = m.find(path, from)) != std::string::npos; from = at + slen)
        m.replace(at, plen, shown);
    return m;
}

/* SimGrid's XML lexer line (libsimgrid exports it, undeclared in its
 * headers): where a callback of the parser threw something other than a
 * ParseError (std::invalid_argument "Link not found: x", ...). */
int surf_parse_get_lineno();

static int load_engine(const char *path, const char *shown, std::string &msg)
{
    bool parsing = true;
    try {
        sg4::Engine::get_instance()->load_platform(path);
        parsing = false;
        sg4::Engine::get_instance()->seal_platform();
    } catch (const simgrid::ParseError &x) {
        msg = user_words(x.what(), path, shown);
        return CS_ERR_PARSE;
    } catch (const std::exception &x) {
        msg = std::string(shown) +
              (parsing ? ":" + std::to_string(surf_parse_get_lineno()) : std::string()) +
              ": SimGrid refuses the platform: " + user_words(x.what(), path, shown);
        return CS_ERR_PARSE;
    }
    return CS_OK;
}

extern "C" int cs__plat_sg_load(const char *path, const char *shown, const cs__pfile_t *f,
                                cs_err_t *err)
{
    std::string msg;
    int st = load_engine(path, shown, msg);
    if (st != CS_OK)
        return cs_err_set(err, st, "%s", msg.c_str());
    try {
        derive_tiers(f, nullptr);
    } catch (const std::exception &x) {
        return cs_err_set(err, CS_ERR_INTERNAL, "%s: deriving tiers: %s", shown, x.what());
    }
    return CS_OK;
}

/* Route a -> b: 1 with links, 0 when SimGrid has none (an exception, or an
 * empty list between two different hosts). */
static int route(const sg4::Host *a, const sg4::Host *b, std::vector<sg4::Link *> &links)
{
    links.clear();
    double lat = 0;
    try {
        a->route_to(b, links, &lat);
    } catch (const std::exception &) {
        links.clear();
        return 0;
    }
    return a == b || !links.empty();
}

static std::string host_where(const cs__pfile_t *f, const sg4::Host *h)
{
    int line = cs__pfile_line(f, "host", h->get_cname());
    std::string s = "host " + h->get_name();
    if (line > 0)
        s += " (" + std::string(f->fname) + ":" + std::to_string(line) + ")";
    return s;
}

/* CS_OK when a -> b and b -> a exist, else a message naming them. */
struct route_reader;
static int check_pair(const sg4::Host *a, const sg4::Host *b, const cs__pfile_t *f,
                      route_reader &rr, std::vector<sg4::Link *> &tmp, std::string &msg);

/* ---- routes in path order ------------------------------------------------ */

/* Host::route_to lists a route's links, but not in path order: SimGrid 3.32
 * computes a route through zones into one vector, and Dijkstra zones
 * insert their segment at its front, so a cross-zone route comes out as
 * [destination side][source side][zone route].  The figures need the
 * order (which link follows which), so the route is assembled again here
 * the way NetZoneImpl::get_global_route_with_netzones does, each segment
 * into a vector of its own.  get_local_route and get_bypass_route are
 * protected: reached through member pointers named in a derived class. */
namespace {
using simgrid::kernel::resource::StandardLinkImpl;
using simgrid::kernel::routing::NetPoint;
using simgrid::kernel::routing::NetZoneImpl;
using simgrid::kernel::routing::Route;
struct zone_access : NetZoneImpl {
    static auto local() { return &zone_access::get_local_route; }
    static auto bypass() { return &zone_access::get_bypass_route; }
};
} // namespace

/* Local routes already asked, by (zone, source, destination): a route
 * through a Dijkstra zone costs SimGrid a scan of each gateway's edges
 * (thousands at a few thousand hosts), and many pairs of ranks share their
 * zone-level route (the GPUs of a node). */
struct seg_key {
    const void *z, *a, *b;
    bool operator==(const seg_key &o) const { return z == o.z && a == o.a && b == o.b; }
};
struct seg_hash {
    size_t operator()(const seg_key &k) const
    {
        return std::hash<const void *>()(k.z) * 31u ^ std::hash<const void *>()(k.a) * 17u ^
               std::hash<const void *>()(k.b);
    }
};
struct seg_val {
    NetPoint *gs, *gd;
    std::vector<StandardLinkImpl *> links;
};
using seg_memo = std::unordered_map<seg_key, seg_val, seg_hash>;

/* Zones with routing "None": SimGrid 3.32 aborts (xbt_die) when asked a
 * route inside one, so the question is never put to it. */
static std::unordered_set<std::string> g_none_zones;

static const seg_val &local_route(NetZoneImpl *z, const NetPoint *a, const NetPoint *b,
                                  seg_memo &memo)
{
    auto it = memo.find({z, a, b});
    if (it != memo.end())
        return it->second;
    if (!g_none_zones.empty() && g_none_zones.count(z->get_name()))
        throw std::invalid_argument("zone " + z->get_name() + " has routing None");
    Route r;
    double lat = 0;
    (z->*zone_access::local())(a, b, &r, &lat);
    return memo.emplace(seg_key{z, a, b}, seg_val{r.gw_src_, r.gw_dst_, std::move(r.link_list_)})
        .first->second;
}

static void ordered_route(const NetPoint *src, const NetPoint *dst,
                          std::vector<StandardLinkImpl *> &out, seg_memo &memo)
{
    double lat = 0;
    NetZoneImpl *common, *sa, *da;
    if (src->get_englobing_zone() == dst->get_englobing_zone()) {
        common = sa = da = src->get_englobing_zone();
    } else {
        std::vector<NetZoneImpl *> ps, pd;
        for (NetZoneImpl *c = src->get_englobing_zone(); c; c = c->get_parent())
            ps.push_back(c);
        for (NetZoneImpl *c = dst->get_englobing_zone(); c; c = c->get_parent())
            pd.push_back(c);
        NetZoneImpl *parent = nullptr;
        while (ps.size() > 1 && pd.size() > 1 && ps.back() == pd.back()) {
            parent = ps.back();
            ps.pop_back();
            pd.pop_back();
        }
        sa = ps.back();
        da = pd.back();
        common = sa == da ? sa : parent;
        if (common == nullptr)
            throw std::invalid_argument("no common zone");
    }
    std::unordered_set<NetZoneImpl *> zones;
    std::vector<StandardLinkImpl *> seg;
    if ((common->*zone_access::bypass())(src, dst, seg, &lat, zones)) {
        out.insert(out.end(), seg.begin(), seg.end());
        return;
    }
    if (sa == da) {
        const seg_val &r = local_route(common, src, dst, memo);
        out.insert(out.end(), r.links.begin(), r.links.end());
        return;
    }
    const seg_val &r = local_route(common, sa->get_netpoint(), da->get_netpoint(), memo);
    if (r.gs == nullptr || r.gd == nullptr)
        throw std::invalid_argument("bad gateways");
    NetPoint *gs = r.gs, *gd = r.gd;
    std::vector<StandardLinkImpl *> zl = r.links; /* r may move when the memo grows */
    if (src != gs)
        ordered_route(src, gs, out, memo);
    out.insert(out.end(), zl.begin(), zl.end());
    if (gd != dst)
        ordered_route(gd, dst, out, memo);
}

/* Routes between hosts, in path order, as s4u links. */
struct route_reader {
    seg_memo memo;
    std::unordered_map<const StandardLinkImpl *, sg4::Link *> iface;
    std::vector<StandardLinkImpl *> impl;
    explicit route_reader(const cs__pfile_t *f)
    {
        g_none_zones.clear();
        for (int i = 0; f && i < f->nnone; i++)
            g_none_zones.insert(f->nonezones[i]);
        for (sg4::Link *l : sg4::Engine::get_instance()->get_all_links())
            iface.emplace(l->get_impl(), l);
    }
    /* 1 with the links of a -> b; 0 when SimGrid has no route (an
     * exception, or no link between two different hosts) */
    int read(const sg4::Host *a, const sg4::Host *b, std::vector<sg4::Link *> &links)
    {
        links.clear();
        impl.clear();
        try {
            ordered_route(a->get_netpoint(), b->get_netpoint(), impl, memo);
        } catch (const std::exception &) {
            return 0;
        }
        for (const StandardLinkImpl *li : impl) {
            auto it = iface.find(li);
            if (it == iface.end())
                return route(a, b, links); /* not a link SimGrid lists: ask it */
            links.push_back(it->second);
        }
        return a == b || !links.empty();
    }
};

static int check_pair(const sg4::Host *a, const sg4::Host *b, const cs__pfile_t *f,
                      route_reader &rr, std::vector<sg4::Link *> &tmp, std::string &msg)
{
    int ab = rr.read(a, b, tmp), ba = rr.read(b, a, tmp);
    if (ab && ba)
        return CS_OK;
    if (!ab && !ba)
        msg = "no route between " + host_where(f, a) + " and " + host_where(f, b) +
              ", in either direction";
    else
        msg = "one-way route: " + host_where(f, ab ? b : a) + " has no route to " +
              host_where(f, ab ? a : b) + " (the other direction has one); ranks need both";
    return CS_ERR_INVAL;
}

extern "C" int cs__plat_sg_check_pairs(const char *const *a, const char *const *b, size_t n,
                                       const cs__pfile_t *f, cs_err_t *err)
{
    try {
        auto *e = sg4::Engine::get_instance();
        std::vector<sg4::Link *> tmp;
        route_reader rr(f);
        for (size_t i = 0; i < n; i++) {
            const sg4::Host *ha = e->host_by_name_or_null(a[i]), *hb = e->host_by_name_or_null(b[i]);
            if (!ha || !hb)
                return cs_err_set(err, CS_ERR_INVAL, "sim: no host named '%s' in the platform",
                                  ha ? b[i] : a[i]);
            std::string msg;
            if (ha != hb && check_pair(ha, hb, f, rr, tmp, msg) != CS_OK)
                return cs_err_set(err, CS_ERR_INVAL, "sim: %s", msg.c_str());
        }
    } catch (const std::exception &x) {
        return cs_err_set(err, CS_ERR_INTERNAL, "sim: checking routes: %s", x.what());
    }
    return CS_OK;
}

/* ---- the child ---------------------------------------------------------- */

static void put(int fd, const std::string &s)
{
    const char *p = s.data();
    size_t left = s.size();
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        left -= (size_t)w;
    }
}

static std::string clean(std::string s)
{
    for (char &c : s)
        if (c == '\t' || c == '\n' || c == '\r')
            c = ' ';
    return s;
}

static void put_error(int fd, int code, const std::string &msg)
{
    put(fd, "E " + std::to_string(code) + "\t" + clean(msg) + "\n");
}

static double wall()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The ranks' hosts: devices in document order, else all hosts by name. */
static std::vector<sg4::Host *> rank_hosts(std::string &noun, std::string &rule)
{
    auto *e = sg4::Engine::get_instance();
    std::vector<sg4::Host *> all = e->get_all_hosts(); /* sorted by name */
    std::unordered_map<const sg4::NetZone *, std::vector<sg4::Host *>> by_zone;
    size_t ngpu = 0, ncpu = 0;
    for (sg4::Host *h : all) {
        const char *d = h->get_property("device");
        if (d == nullptr)
            continue;
        ngpu += strcmp(d, "gpu") == 0;
        ncpu += strcmp(d, "cpu") == 0;
        by_zone[h->get_englobing_zone()].push_back(h);
    }
    if (ngpu + ncpu == 0) {
        noun = "hosts";
        rule = "every host (" + std::to_string(all.size()) +
               "; none has a device property), one rank each, in SimGrid's "
               "Engine::get_all_hosts() order: names sorted as strings, as SMPI without a hostfile";
        return all;
    }
    /* document order: zones depth first in creation order, a zone's hosts
     * in the order SimGrid created them (netpoint ids) */
    std::vector<sg4::NetZone *> zones;
    zones_dfs(e->get_netzone_root(), zones);
    std::vector<sg4::Host *> v;
    for (const sg4::NetZone *z : zones) {
        auto it = by_zone.find(z);
        if (it == by_zone.end())
            continue;
        std::sort(it->second.begin(), it->second.end(), [](const sg4::Host *a, const sg4::Host *b) {
            return a->get_netpoint()->id() < b->get_netpoint()->id();
        });
        v.insert(v.end(), it->second.begin(), it->second.end());
    }
    noun = "devices";
    rule = "the " + std::to_string(v.size()) + " hosts with a device property (" +
           std::to_string(ngpu) + " gpu, " + std::to_string(ncpu) +
           " cpu), one rank each, in document order; " +
           std::to_string(all.size() - v.size()) + " other hosts carry no rank";
    return v;
}

/* Pairs to read (each is routed both ways): every pair when there are few
 * ranks; otherwise rank i with i + 1 and with i + N/2 (the bisection's
 * pairs), then, with `full`, strides 2, 4, 8, ... while the routes read
 * stay under 2^17: a route through a Dijkstra zone costs SimGrid 3.32 a
 * scan of the edges of every vertex on the way (DijkstraZone rebuilds the
 * path with xbt_graph_get_edge), up to a few hundred microseconds through
 * the spine of an exported 4,608-node Summit. */
static std::vector<std::pair<size_t, size_t>> pairs_of(size_t n, bool full, int *exact)
{
    const size_t budget = (size_t)1 << 18;
    std::vector<std::pair<size_t, size_t>> v;
    if (n * (n - 1) <= budget) {
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++)
                v.emplace_back(i, j);
        *exact = 1;
        return v;
    }
    auto stride = [&](size_t s) {
        for (size_t i = 0; i < n; i++) {
            if (s == n / 2 && n % 2 == 0 && i >= n / 2)
                continue; /* the same unordered pair */
            v.emplace_back(i, (i + s) % n);
        }
    };
    stride(1);
    stride(n / 2);
    for (size_t s = 2; full && s < n / 2 && 2 * (v.size() + n) <= budget / 2; s *= 2)
        stride(s);
    *exact = 0;
    return v;
}

struct tier_acc {
    uint64_t n = 0;
    std::map<std::pair<double, double>, uint64_t> mode;
};

static int links_and_tiers(int fd, const cs__pfile_t *f, const char *shown)
{
    std::unordered_map<const sg4::Link *, int> lines;
    derive_tiers(f, &lines);
    auto all = sg4::Engine::get_instance()->get_all_links();
    std::unordered_set<std::string> names;
    for (const sg4::Link *l : all)
        names.insert(l->get_name());
    std::vector<std::string> order;
    std::map<std::string, tier_acc> acc;
    for (const sg4::Link *l : all) {
        const std::string &n = l->get_name();
        double bw = l->get_bandwidth(), lat = l->get_latency();
        if (!(bw > 0) || !(lat >= 0) || !std::isfinite(bw) || !std::isfinite(lat)) {
            std::string b = base_name(n);
            int line = cs__pfile_line(f, "link", b.c_str());
            if (line == 0 && lines.count(l))
                line = lines[l];
            char num[64];
            snprintf(num, sizeof(num), "%g", bw > 0 ? lat : bw);
            put_error(fd, CS_ERR_INVAL,
                      std::string(shown) + (line ? ":" + std::to_string(line) : "") + ": link " +
                          n + " has " + (bw > 0 ? "latency " : "bandwidth ") + num +
                          (bw > 0 ? " s: a latency must not be negative"
                                  : " B/s: every link needs a positive bandwidth (SimGrid would "
                                    "take 0 as unlimited)"));
            return -1;
        }
        if (n == "__loopback__")
            continue; /* SimGrid's own, on no route between two hosts */
        /* a split-duplex pair counts once */
        if (ends_with(n, "_DOWN") && names.count(n.substr(0, n.size() - 5) + "_UP"))
            continue;
        const char *t = l->get_property("tier");
        std::string tier = t ? t : "link";
        if (!acc.count(tier))
            order.push_back(tier);
        tier_acc &a = acc[tier];
        a.n++;
        a.mode[{bw, lat}]++;
    }
    if (order.size() > CS_PLAT_MAX_TIERS) {
        put_error(fd, CS_ERR_RANGE,
                  std::string(shown) + ": " + std::to_string(order.size()) +
                      " distinct tiers; collstep summarises at most " +
                      std::to_string(CS_PLAT_MAX_TIERS));
        return -1;
    }
    std::sort(order.begin(), order.end()); /* by name: level1, level2, ... */
    for (const std::string &t : order) {
        const tier_acc &a = acc[t];
        uint64_t best = 0;
        double bw = 0, lat = 0;
        for (auto &[k, w] : a.mode) /* ascending: a tie goes to the larger bandwidth */
            if (w >= best)
                best = w, bw = k.first, lat = k.second;
        char line[256];
        snprintf(line, sizeof(line), "T %s\t%llu\t%.17g\t%.17g\n", clean(t).c_str(),
                 (unsigned long long)a.n, bw, lat);
        put(fd, line);
    }
    return 0;
}

static int topology(int fd, const std::vector<sg4::Host *> &hosts, double t0,
                    const cs__pfile_t *f, const char *shown, route_reader &rr)
{
    size_t n = hosts.size();
    int exact = 0;
    auto pairs = pairs_of(n, true, &exact);
    std::unordered_map<const sg4::Link *, int64_t> lid;
    std::vector<double> lbw;
    std::unordered_set<uint64_t> seen;
    std::vector<int64_t> edges;
    std::vector<double> cap;
    const double inf = 1e12; /* GB/s: never the bottleneck */
    auto link_v = [&](const sg4::Link *l) {
        auto it = lid.find(l);
        if (it != lid.end())
            return it->second;
        int64_t id = (int64_t)lbw.size();
        lbw.push_back(l->get_bandwidth() / 1e9);
        lid.emplace(l, id);
        return id;
    };
    /* vertex numbers are fixed once all links are known: record edges as
     * (kind, index) pairs first */
    struct e_t {
        int64_t a, b; /* >= 0 link index (in/out by role), < 0: -(host + 1) */
    };
    std::vector<e_t> rel;
    size_t longest = 0, npairs = 0;
    std::vector<sg4::Link *> links;
    for (auto [i, j] : pairs)
        for (int dir = 0; dir < 2; dir++) {
            size_t s = dir ? j : i, d = dir ? i : j;
            if (!rr.read(hosts[s], hosts[d], links)) {
                std::string msg;
                std::vector<sg4::Link *> tmp;
                check_pair(hosts[s], hosts[d], f, rr, tmp, msg);
                put_error(fd, CS_ERR_INVAL, std::string(shown) + ": " + msg);
                return -1;
            }
            npairs++;
            if (links.empty())
                continue;
            longest = std::max(longest, links.size());
            int64_t prev = -(int64_t)s - 1;
            for (const sg4::Link *l : links) {
                int64_t v = link_v(l);
                rel.push_back({prev, v});
                prev = v;
            }
            rel.push_back({prev, -(int64_t)d - 1});
        }
    int64_t N = (int64_t)n, L = (int64_t)lbw.size();
    /* host out: h, host in: N + h, link in: 2N + 2k, out: 2N + 2k + 1 */
    auto vout = [&](int64_t x) { return x < 0 ? -x - 1 : 2 * N + 2 * x + 1; };
    auto vin = [&](int64_t x) { return x < 0 ? N + (-x - 1) : 2 * N + 2 * x; };
    for (const e_t &r : rel) {
        int64_t a = vout(r.a), b = vin(r.b);
        uint64_t key = ((uint64_t)a << 32) | (uint64_t)b;
        if (!seen.insert(key).second)
            continue;
        edges.push_back(a), edges.push_back(b), cap.push_back(inf);
    }
    uint64_t ne_routes = cap.size();
    for (int64_t k = 0; k < L; k++)
        edges.push_back(2 * N + 2 * k), edges.push_back(2 * N + 2 * k + 1), cap.push_back(lbw[k]);
    int64_t src = 2 * N + 2 * L, snk = src + 1;
    for (int64_t h = 0; h < N; h++) {
        if (h < N / 2)
            edges.push_back(src), edges.push_back(h);
        else
            edges.push_back(N + h), edges.push_back(snk);
        cap.push_back(inf);
    }
    igraph_error_handler_t *old = igraph_set_error_handler(igraph_error_handler_ignore);
    igraph_vector_int_t ev;
    igraph_vector_t cv;
    igraph_t g;
    igraph_real_t flow = 0;
    int ok = igraph_vector_int_init(&ev, (igraph_integer_t)edges.size()) == IGRAPH_SUCCESS;
    if (ok && igraph_vector_init(&cv, (igraph_integer_t)cap.size()) != IGRAPH_SUCCESS) {
        igraph_vector_int_destroy(&ev);
        ok = 0;
    }
    if (ok) {
        for (size_t k = 0; k < edges.size(); k++)
            VECTOR(ev)[k] = edges[k];
        for (size_t k = 0; k < cap.size(); k++)
            VECTOR(cv)[k] = cap[k];
        ok = igraph_create(&g, &ev, (igraph_integer_t)(snk + 1), IGRAPH_DIRECTED) ==
             IGRAPH_SUCCESS;
        if (ok) {
            if (N >= 2)
                ok = igraph_maxflow_value(&g, &flow, (igraph_integer_t)src, (igraph_integer_t)snk,
                                          &cv, nullptr) == IGRAPH_SUCCESS;
            igraph_destroy(&g);
        }
        igraph_vector_destroy(&cv);
        igraph_vector_int_destroy(&ev);
    }
    igraph_set_error_handler(old);
    if (!ok) {
        put_error(fd, CS_ERR_INTERNAL, "topology: igraph failed (out of memory?)");
        return -1;
    }
    char line[256];
    snprintf(line, sizeof(line), "G %lld\t%llu\t%zu\t%.17g\t%zu\t%d\t%.6f\n",
             (long long)(2 * N + 2 * L), (unsigned long long)(ne_routes + (uint64_t)L), longest,
             flow * 1e9, npairs, exact, wall() - t0);
    put(fd, line);
    return 0;
}

static int child_main(int fd, const cs__pfile_t *f, const char *path, const char *shown, int topo)
{
    double t0 = wall();
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 128 * 1024); /* see sim/cs_sim.c */
#endif
    int argc = 5;
    char a0[] = "collstep", a1[] = "--cfg=network/model:CM02", a2[] = "--cfg=network/crosstraffic:0",
         a3[] = "--cfg=network/TCP-gamma:0", a4[] = "--log=root.thres:critical";
    char *argv[] = {a0, a1, a2, a3, a4, nullptr};
    try {
        new sg4::Engine(&argc, argv); /* never destroyed: the child exits */
        std::string msg;
        int st = load_engine(path, shown, msg);
        if (st != CS_OK) {
            put_error(fd, st, msg);
            return 0;
        }
        if (links_and_tiers(fd, f, shown) != 0)
            return 0;
        std::string noun, rule;
        std::vector<sg4::Host *> hosts = rank_hosts(noun, rule);
        if (hosts.empty()) {
            put_error(fd, CS_ERR_INVAL,
                      std::string(shown) +
                          ": the platform has no host, so no rank can run (declare <host>, "
                          "<cluster>, <cabinet> or <peer> elements)");
            return 0;
        }
        /* the checks; with the figures, their routes (a superset) check */
        int exact = 0;
        std::vector<sg4::Link *> tmp;
        route_reader rr(f);
        /* without the figures, a large platform's routes are checked by
         * `collstep sim` for the pairs its schedules use (in that process,
         * where SimGrid keeps the routes it computes for the simulation) */
        size_t nh = hosts.size();
        bool few = nh * (nh - 1) <= ((size_t)1 << 18);
        for (auto [i, j] : topo || !few ? decltype(pairs_of(0, false, &exact))()
                                        : pairs_of(nh, false, &exact))
            if (check_pair(hosts[i], hosts[j], f, rr, tmp, msg) != CS_OK) {
                put_error(fd, CS_ERR_INVAL, std::string(shown) + ": " + msg);
                return 0;
            }
        if (topo && topology(fd, hosts, t0, f, shown, rr) != 0)
            return 0;
        put(fd, "N " + noun + "\t" + clean(rule) + "\n");
        std::string buf;
        for (const sg4::Host *h : hosts) {
            buf += "R " + clean(h->get_name()) + "\n";
            if (buf.size() > 65536)
                put(fd, buf), buf.clear();
        }
        put(fd, buf);
    } catch (const std::exception &x) {
        put_error(fd, CS_ERR_PARSE, std::string(shown) + ": SimGrid: " + user_words(x.what(), path, shown));
    }
    return 0;
}

/* ---- the parent ------------------------------------------------------- */

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d != nullptr) {
        struct dirent *e;
        while ((e = readdir(d)) != nullptr) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            std::string p = std::string(dir) + "/" + e->d_name;
            unlink(p.c_str());
        }
        closedir(d);
    }
    rmdir(dir);
}

/* SimGrid's own words from a dead child's log: the first CRITICAL line that
 * is not about the backtrace, without its prefix. */
static std::string summarize(const std::string &log)
{
    size_t pos = 0;
    while (pos < log.size()) {
        size_t e = log.find('\n', pos);
        std::string l = log.substr(pos, e == std::string::npos ? std::string::npos : e - pos);
        pos = e == std::string::npos ? log.size() : e + 1;
        size_t t = l.find("CRITICAL] ");
        if (t == std::string::npos)
            continue;
        std::string m = l.substr(t + 10);
        if (m.compare(0, 17, "Current backtrace") == 0)
            continue;
        if (m.compare(0, 19, "Uncaught exception ") == 0 && m.find(": ") != std::string::npos)
            m = m.substr(m.find(": ") + 2);
        return m;
    }
    return "";
}

/* Fill p from the child's lines; a platform already opened (p->hosts set)
 * takes only the figures. */
static int parse_reply(cs_platform_t *p, const std::string &out, cs_err_t *err)
{
    const bool only_topo = p->hosts != nullptr;
    std::vector<std::string> hosts;
    size_t pos = 0;
    int ntiers = 0;
    while (pos < out.size()) {
        size_t e = out.find('\n', pos);
        if (e == std::string::npos)
            break;
        std::string l = out.substr(pos, e - pos);
        pos = e + 1;
        if (l.size() < 2)
            continue;
        const char *v = l.c_str() + 2;
        if (only_topo && l[0] != 'E' && l[0] != 'G')
            continue;
        switch (l[0]) {
        case 'E': {
            int code = atoi(v);
            const char *m = strchr(v, '\t');
            return cs_err_set(err, code < 0 ? code : CS_ERR_PARSE, "%s", m ? m + 1 : v);
        }
        case 'R':
            hosts.emplace_back(v);
            break;
        case 'N': {
            const char *tab = strchr(v, '\t');
            snprintf(p->rank_noun, sizeof(p->rank_noun), "%.*s", tab ? (int)(tab - v) : 0, v);
            snprintf(p->rank_rule, sizeof(p->rank_rule), "%s", tab ? tab + 1 : "");
            break;
        }
        case 'T': {
            if (ntiers == CS_PLAT_MAX_TIERS)
                break;
            cs_tier_info_t *ti = &p->tiers[ntiers];
            memset(ti, 0, sizeof(*ti));
            char name[64];
            unsigned long long nl = 0;
            if (sscanf(v, "%63[^\t]\t%llu\t%lf\t%lf", name, &nl, &ti->bandwidth, &ti->latency) != 4)
                break;
            name[sizeof(ti->name) - 1] = '\0'; /* names are checked shorter when read */
            memcpy(ti->name, name, sizeof(ti->name));
            ti->nlinks = nl;
            ti->lat_factor = ti->bw_factor = 1.0;
            ntiers++;
            break;
        }
        case 'G': {
            cs_topo_figures_t *t = &p->topo;
            unsigned long long nv, ne, np;
            if (sscanf(v, "%llu\t%llu\t%d\t%lf\t%llu\t%d\t%lf", &nv, &ne, &t->diameter_hops,
                       &t->bisection_bw, &np, &t->exact, &t->seconds) == 7) {
                t->nvertices = nv;
                t->nedges = ne;
                t->npairs = np;
                p->have_topo = 1;
            }
            break;
        }
        default:
            break;
        }
    }
    if (only_topo)
        return CS_OK;
    if (hosts.empty())
        return cs_err_set(err, CS_ERR_INTERNAL, "%s: SimGrid's reading ended early", p->name);
    char **v = (char **)calloc(hosts.size() + 1, sizeof(char *));
    if (v == nullptr)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < hosts.size(); i++)
        if ((v[i] = strdup(hosts[i].c_str())) == nullptr) {
            for (size_t k = 0; k < i; k++)
                free(v[k]);
            free(v);
            return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
        }
    p->hosts = v;
    p->ndevices = hosts.size();
    p->ntiers = ntiers;
    return CS_OK;
}

extern "C" int cs__plat_sg_probe(cs_platform_t *p, const char *path, int topo, cs_err_t *err)
{
    const cs__pfile_t *f = (const cs__pfile_t *)p->file;
    char *abs = realpath(path, nullptr);
    if (abs == nullptr)
        return cs_err_set(err, CS_ERR_IO, "%s: %s", path, strerror(errno));
    char dir[] = "/tmp/cs_probe_XXXXXX";
    int pfd[2];
    if (mkdtemp(dir) == nullptr) {
        free(abs);
        return cs_err_set(err, CS_ERR_IO, "cannot create a scratch directory: %s", strerror(errno));
    }
    if (pipe(pfd) != 0) {
        free(abs);
        remove_dir(dir);
        return cs_err_set(err, CS_ERR_IO, "pipe: %s", strerror(errno));
    }
    std::string logpath = std::string(dir) + "/simgrid.log";
    fflush(nullptr);
    pid_t pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        free(abs);
        remove_dir(dir);
        return cs_err_set(err, CS_ERR_IO, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(pfd[0]);
        int lfd = open(logpath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (lfd >= 0) {
            dup2(lfd, 1);
            dup2(lfd, 2);
            close(lfd);
        }
        if (chdir(dir) != 0)
            _exit(3);
        child_main(pfd[1], f, abs, f ? f->fname : path, topo);
        close(pfd[1]);
        _exit(0);
    }
    close(pfd[1]);
    std::string out;
    char buf[65536];
    for (;;) {
        ssize_t r = read(pfd[0], buf, sizeof(buf));
        if (r > 0)
            out.append(buf, (size_t)r);
        else if (r == 0 || errno != EINTR)
            break;
    }
    close(pfd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    std::string log;
    if (FILE *lf = fopen(logpath.c_str(), "r")) {
        size_t r;
        while ((r = fread(buf, 1, sizeof(buf), lf)) > 0 && log.size() < (1u << 20))
            log.append(buf, r);
        fclose(lf);
    }
    remove_dir(dir);
    int st;
    bool died = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    if (died && out.find("\nE ") == std::string::npos && out.compare(0, 2, "E ") != 0) {
        std::string m = user_words(summarize(log), abs, f ? f->fname : path);
        st = cs_err_set(err, CS_ERR_PARSE, "%s: SimGrid cannot load it: %s", f ? f->fname : path,
                        m.empty() ? "it aborted without a message" : m.c_str());
    } else {
        st = parse_reply(p, out, err);
    }
    free(abs);
    return st;
}
