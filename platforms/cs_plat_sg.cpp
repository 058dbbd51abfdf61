/*
 * cs_plat_sg.cpp - SimGrid builds a platform file, collstep reads what it
 * built: derived tiers, loading with SimGrid's exceptions caught, routes
 * in path order (contracts in cs_plat_file.h; the child process that reads
 * a file for cs_platform_open is cs_plat_probe.cpp).
 *
 * Why C++: SimGrid 3.32's C API cannot list a zone's links, read or set
 * link properties, or catch the exceptions its parser throws
 * (simgrid::ParseError with file:line, std::invalid_argument for a missing
 * Floyd/Dijkstra route, simgrid::AssertionError for a bad zone route).
 * Nothing here lets an exception reach C.
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
#include <simgrid/s4u/Link.hpp>

#include "cs_plat_sg.hpp"

/* SimGrid's XML lexer line (libsimgrid exports it, undeclared in its
 * headers): where a callback of the parser threw something other than a
 * ParseError (std::invalid_argument "Link not found: x", ...). */
int surf_parse_get_lineno();


namespace cs_plat {


/* ---- derived tiers ---------------------------------------------------- */

bool ends_with(const std::string &s, const char *t)
{
    size_t n = strlen(t);
    return s.size() >= n && s.compare(s.size() - n, n, t) == 0;
}
static bool starts_with(const std::string &s, const std::string &t)
{
    return s.compare(0, t.size(), t) == 0;
}
/* Name without the _UP / _DOWN of a split-duplex half. */
std::string base_name(const std::string &n)
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

void zones_dfs(sg4::NetZone *z, std::vector<sg4::NetZone *> &out)
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
void derive_tiers(const cs__pfile_t *f, std::unordered_map<const sg4::Link *, int> *lines)
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


/* ---- messages ----------------------------------------------------------- */

/* "Parse error at PATH:LINE: msg" -> "SHOWN:LINE: msg"; other paths too. */
std::string user_words(std::string m, const char *path, const char *shown)
{
    static const char pe[] = "Parse error at ";
    if (m.compare(0, sizeof(pe) - 1, pe) == 0)
        m = m.substr(sizeof(pe) - 1);
    size_t from = 0, plen = path ? strlen(path) : 0, slen = strlen(shown);
    for (size_t at; plen > 0 && (at = m.find(path, from)) != std::string::npos; from = at + slen)
        m.replace(at, plen, shown);
    return m;
}


int load_engine(const char *path, const char *shown, int &line, std::string &words)
{
    bool parsing = true;
    line = 0;
    try {
        sg4::Engine::get_instance()->load_platform(path);
        parsing = false;
        sg4::Engine::get_instance()->seal_platform();
    } catch (const simgrid::ParseError &x) {
        /* "Parse error at PATH:LINE: words" */
        std::string m = x.what(), at = std::string("Parse error at ") + path + ":";
        if (m.compare(0, at.size(), at) == 0) {
            char *end = nullptr;
            long l = strtol(m.c_str() + at.size(), &end, 10);
            if (end && *end == ':' && l > 0) {
                line = (int)l;
                m = end + 1;
                while (!m.empty() && m[0] == ' ')
                    m.erase(0, 1);
            }
        }
        words = user_words(m, path, shown);
        return CS_ERR_PARSE;
    } catch (const std::exception &x) {
        line = parsing ? surf_parse_get_lineno() : 0;
        words = user_words(x.what(), path, shown);
        return CS_ERR_PARSE;
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

/* ---- routes in path order ------------------------------------------------ */

/* Host::route_to lists a route's links, but not in path order: SimGrid 3.32
 * computes a route through zones into one vector, and Dijkstra zones
 * insert their segment at its front, so a cross-zone route comes out as
 * [destination side][source side][zone route].  The figures need the
 * order (which link follows which), so the route is assembled again here
 * the way NetZoneImpl::get_global_route_with_netzones does, each segment
 * into a vector of its own.  get_local_route and get_bypass_route are
 * protected: reached through member pointers named in a derived class. */
using simgrid::kernel::routing::Route;
namespace {
struct zone_access : NetZoneImpl {
    static auto local() { return &zone_access::get_local_route; }
    static auto bypass() { return &zone_access::get_bypass_route; }
};
} // namespace

/* Local routes already asked, by (zone, source, destination): a route
 * through a Dijkstra zone costs SimGrid a scan of each gateway's edges
 * (thousands at a few thousand hosts), and many pairs of ranks share their
 * zone-level route (the GPUs of a node): seg_memo in cs_plat_sg.hpp. */

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

route_reader::route_reader(const cs__pfile_t *f)
{
    g_none_zones.clear();
    for (int i = 0; f && i < f->nnone; i++)
        g_none_zones.insert(f->nonezones[i]);
    for (sg4::Link *l : sg4::Engine::get_instance()->get_all_links())
        iface.emplace(l->get_impl(), l);
}

int route_reader::read(const sg4::Host *a, const sg4::Host *b, std::vector<sg4::Link *> &links)
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

} // namespace cs_plat

using namespace cs_plat;

extern "C" void cs__plat_sg_apply_tiers(const cs__pfile_t *f)
{
    derive_tiers(f, nullptr);
}

extern "C" int cs__plat_sg_load(const char *path, const char *shown, const cs__pfile_t *f,
                                const char *text, int ideal, cs_err_t *err)
{
    int line = 0;
    std::string words;
    if (load_engine(path, shown, line, words) != CS_OK) {
        if (text && line > 0)
            line = cs__pfile_map_line(f, text, line);
        char msg[CS_ERR_MSG_MAX];
        cs__pfile_explain(f, shown, line, words.c_str(), ideal, msg, sizeof(msg));
        return cs_err_set(err, CS_ERR_PARSE, "%s", msg);
    }
    try {
        derive_tiers(f, nullptr);
    } catch (const std::exception &x) {
        return cs_err_set(err, CS_ERR_INTERNAL, "%s: deriving tiers: %s", shown, x.what());
    }
    return CS_OK;
}

extern "C" int cs__plat_sg_check_load(const char *path, const char *shown, const cs__pfile_t *f,
                                      const char *text, int ideal, cs_err_t *err)
{
    /* a text that loaded before (cs_plat_cache.c) loads again */
    char *hit = nullptr;
    size_t hitlen = 0;
    const char *key = text;
    std::string own;
    if (!key) { /* the file as it is */
        FILE *in = fopen(path, "r");
        char buf[65536];
        size_t n;
        while (in && (n = fread(buf, 1, sizeof(buf), in)) > 0)
            own.append(buf, n);
        if (in)
            fclose(in);
        key = in ? own.c_str() : nullptr;
    }
    if (key && cs__plat_cache_get("load", ideal ? "ideal" : "", key, &hit, &hitlen)) {
        free(hit);
        return CS_OK;
    }
    std::string out;
    int st = run_child(child_spec{f, path, shown, text, ideal, nullptr}, out, err);
    if (st == CS_OK && key)
        cs__plat_cache_put("load", ideal ? "ideal" : "", key, "K\n", 2);
    return st;
}

extern "C" int cs__plat_sg_routes(const char *const *a, const char *const *b, size_t n,
                                  const cs__pfile_t *f, size_t *bad, int *back, cs_err_t *err)
{
    try {
        auto *e = sg4::Engine::get_instance();
        std::vector<sg4::Link *> tmp;
        route_reader rr(f);
        for (size_t i = 0; i < n; i++) {
            const sg4::Host *ha = e->host_by_name_or_null(a[i]);
            const sg4::Host *hb = e->host_by_name_or_null(b[i]);
            if (!ha || !hb)
                return cs_err_set(err, CS_ERR_INVAL, "sim: no host named '%s' in the platform",
                                  ha ? b[i] : a[i]);
            if (ha != hb && !rr.read(ha, hb, tmp)) {
                *bad = i;
                *back = rr.read(hb, ha, tmp);
                return CS_ERR_NOTFOUND;
            }
        }
    } catch (const std::exception &x) {
        return cs_err_set(err, CS_ERR_INTERNAL, "sim: checking routes: %s", x.what());
    }
    return CS_OK;
}
