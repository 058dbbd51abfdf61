/*
 * cs_plat_probe.cpp - cs__plat_sg_probe and cs__plat_sg_probe_ideal
 * (cs_plat_file.h): a platform file loaded by SimGrid in a child process
 * (cs_plat_child.cpp: run_child, which also turns SimGrid's refusal into
 * one message), and what the parent learns.
 *
 * The child loads the file, seals it, reads hosts, links and routes
 * (cs_plat_sg.cpp, cs_plat_survey.cpp), and writes one line per fact:
 *     R host            rank host, in rank order
 *     N noun \t rule    what the ranks are, one sentence
 *     T tier \t nlinks \t bandwidth \t latency
 *     S least \t most common \t greatest   the ranks' host speeds (flop/s:
 *                       their reduction rates in bytes/s)
 *     G nv \t ne \t diameter \t bisection \t npairs \t exact \t seconds
 *     P, U, h, H, D     routes between the ranks (cs_plat_survey.cpp)
 *     E code \t message (the first error; nothing else matters then)
 * The ideal model's text of the file (every <link> without sharing_policy
 * made SPLITDUPLEX, cs__pfile_text) is what `collstep sim` loads by
 * default: when it differs from the file, a second child loads it too, so
 * that a refusal is said when the file is opened, by every command alike,
 * and reads its shared link halves.
 *
 * Graph for the figures: from the routes between the ranks' hosts, every
 * ordered pair when there are few ranks (N (N - 1) <= 2^18), otherwise rank
 * i to i + 1 and i + N/2 (mod N), then i + 2, i + 4, ... while the routes
 * stay under 2^17 (pairs_of), both ways; pairs without a route are left
 * out (and listed).  Vertices: each host twice (as a route's source, as its
 * destination, so no flow passes through a host) and each link direction
 * twice (in, out: an edge in -> out of the link's bandwidth); a route
 * h, l1, ..., ln, h' adds edges h -> l1.in, l1.out -> l2.in, ..., ln.out ->
 * h'.  Bisection: max-flow (igraph push-relabel) from the first half of the
 * ranks to the second half; diameter: the most links on one of the routes
 * read.
 */
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <igraph.h>

#include "cs_plat_sg.hpp"
#include "cs_time.h"

namespace cs_plat {

/* ---- the child ---------------------------------------------------------- */

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
            /* the first value at fault: the bandwidth (not positive, or
             * not finite), else the latency */
            bool bad_bw = !(bw > 0) || !std::isfinite(bw);
            char num[64];
            snprintf(num, sizeof(num), "%g", bad_bw ? bw : lat);
            const char *why =
                bad_bw ? (std::isfinite(bw) ? " B/s: every link needs a positive bandwidth (SimGrid "
                                              "would take 0 as unlimited)"
                                            : " B/s: a bandwidth must be a finite number")
                       : (std::isfinite(lat) ? " s: a latency must not be negative"
                                             : " s: a latency must be a finite number");
            put_error(fd, CS_ERR_INVAL,
                      std::string(shown) + (line ? ":" + std::to_string(line) : "") + ": link " +
                          n + " has " + (bad_bw ? "bandwidth " : "latency ") + num + why);
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

/* The figures; `list`: also the pairs without a route (the survey did not
 * read every pair). */
static int topology(int fd, const std::vector<sg4::Host *> &hosts, double t0, route_reader &rr,
                    bool list)
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
    size_t longest = 0, npairs = 0, nread = 0;
    std::vector<sg4::Link *> links;
    std::string unroutable;
    for (auto [i, j] : pairs) {
        int ok[2] = {1, 1};
        for (int dir = 0; dir < 2; dir++) {
            size_t s = dir ? j : i, d = dir ? i : j;
            if (!(ok[dir] = rr.read(hosts[s], hosts[d], links)))
                continue;
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
        nread++;
        if (list && (!ok[0] || !ok[1])) {
            size_t a = std::min(i, j), b = std::max(i, j);
            int kind = !ok[0] && !ok[1] ? 0 : (ok[0] == (i < j)) ? 1 : 2;
            unroutable += "U " + std::to_string(a) + "\t" + std::to_string(b) + "\t" +
                          std::to_string(kind) + "\n";
        }
    }
    if (list)
        put(fd, unroutable + "P " + std::to_string(nread) + "\t" + std::to_string(exact) + "\n");
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
             flow * 1e9, npairs, exact, cs_now_s() - t0);
    put(fd, line);
    return 0;
}

/* The ranks' host speeds: least, most common, greatest. */
static void speeds(int fd, const std::vector<sg4::Host *> &hosts)
{
    std::map<double, size_t> n;
    for (const sg4::Host *h : hosts)
        n[h->get_speed()]++;
    double mode = 0;
    size_t best = 0;
    for (auto &[v, c] : n) /* ascending: a tie goes to the faster */
        if (c >= best)
            best = c, mode = v;
    char line[128];
    snprintf(line, sizeof(line), "S %.17g\t%.17g\t%.17g\n", n.begin()->first, mode,
             n.rbegin()->first);
    put(fd, line);
}

/* The facts of the file as written (after run_child loaded it). */
static void facts(int fd, const cs__pfile_t *f, const char *shown, int topo, double t0)
{
    if (links_and_tiers(fd, f, shown) != 0)
        return;
    std::string noun, rule;
    std::vector<sg4::Host *> hosts = rank_hosts(noun, rule);
    if (hosts.empty()) {
        put_error(fd, CS_ERR_INVAL,
                  std::string(shown) +
                      ": the platform has no host, so no rank can run (declare <host>, "
                      "<cluster>, <cabinet> or <peer> elements)");
        return;
    }
    /* a rank's host computes its reductions: a speed of 0 or less (or not a
     * number) would make them free or undefined */
    for (const sg4::Host *h : hosts) {
        double sp = h->get_speed();
        if (!(sp > 0) || !std::isfinite(sp)) {
            char num[64];
            snprintf(num, sizeof(num), "%g", sp);
            std::string b = base_name(h->get_name());
            int line = cs__pfile_line(f, "host", b.c_str());
            put_error(fd, CS_ERR_INVAL,
                      std::string(shown) + (line ? ":" + std::to_string(line) : "") + ": host " +
                          h->get_name() + " has speed " + num +
                          " flop/s: a host that runs a rank needs a positive, finite speed (it "
                          "computes the reductions; e.g. speed=\"1Tf\")");
            return;
        }
    }
    speeds(fd, hosts);
    route_reader rr(f);
    /* every pair of a small platform; a large one's routes are checked by
     * `collstep sim` for the pairs its schedules use (in that process, where
     * SimGrid keeps the routes it computes for the simulation) */
    size_t nh = hosts.size();
    bool few = nh * (nh - 1) <= ((size_t)1 << 18);
    survey(fd, hosts, f, rr, few, f && f->dims[0] == '\0');
    if (topo && topology(fd, hosts, t0, rr, !few) != 0)
        return;
    put(fd, "N " + noun + "\t" + clean(rule) + "\n");
    std::string buf;
    for (const sg4::Host *h : hosts) {
        buf += "R " + clean(h->get_name()) + "\n";
        if (buf.size() > 65536)
            put(fd, buf), buf.clear();
    }
    put(fd, buf);
}

/* The ideal model's text: its shared link halves between the ranks. */
static void ideal_facts(int fd, const cs__pfile_t *f, const cs_platform_t *p)
{
    derive_tiers(f, nullptr);
    auto *e = sg4::Engine::get_instance();
    std::vector<sg4::Host *> hosts;
    for (uint64_t r = 0; r < p->ndevices; r++)
        if (sg4::Host *h = e->host_by_name_or_null(p->hosts[r]))
            hosts.push_back(h);
    route_reader rr(f);
    size_t nh = hosts.size();
    survey(fd, hosts, f, rr, nh * (nh - 1) <= ((size_t)1 << 18), false);
}

/* A shared-halves line "H rank \t link \t cause \t line". */
static void parse_shared(cs_plat_shared_t *sh, const char *v)
{
    char link[128] = "", cause[16] = "";
    unsigned long long r = 0;
    int line = 0;
    if (sscanf(v, "%llu\t%127[^\t]\t%15[^\t]\t%d", &r, link, cause, &line) != 4)
        return;
    sh->rank = r;
    snprintf(sh->link, sizeof(sh->link), "%s", link);
    snprintf(sh->cause, sizeof(sh->cause), "%s", cause);
    sh->line = line;
}

/* Fill p from the child's lines (run_child took the errors): a platform
 * already opened (p->hosts set) takes only the figures (and the pairs they
 * read when none were read before); `ideal`: the lines of the ideal
 * model's text, which give only its shared halves. */
static int parse_reply(cs_platform_t *p, const std::string &out, int ideal, cs_err_t *err)
{
    const bool only_topo = p->hosts != nullptr && !ideal;
    const bool pairs = !ideal && p->npairs_read == 0;
    std::vector<std::string> hosts;
    std::vector<uint32_t> un;
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
        char k = l[0];
        if ((ideal && k != 'h' && k != 'H') ||
            (only_topo && k != 'G' && !(pairs && (k == 'U' || k == 'P'))))
            continue;
        switch (k) {
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
        case 'S':
            sscanf(v, "%lf\t%lf\t%lf", &p->reduce_bw[0], &p->reduce_bw[1], &p->reduce_bw[2]);
            break;
        case 'U': {
            unsigned a, b, kind;
            if (sscanf(v, "%u\t%u\t%u", &a, &b, &kind) == 3)
                un.push_back(a), un.push_back(b), un.push_back(kind);
            break;
        }
        case 'P': {
            unsigned long long np = 0;
            int exact = 0;
            if (sscanf(v, "%llu\t%d", &np, &exact) == 2)
                p->npairs_read = np, p->pairs_exact = exact;
            break;
        }
        case 'h':
            p->shared[ideal].nranks = strtoull(v, nullptr, 10);
            break;
        case 'H':
            parse_shared(&p->shared[ideal], v);
            break;
        case 'D':
            if (p->ndims == 0 && !only_topo) {
                int nd = 0;
                for (const char *c = v; *c && nd < CS_PLAT_MAX_DIMS;) {
                    char *end;
                    long d = strtol(c, &end, 10);
                    if (end == c || d < 1)
                        break;
                    p->dims[nd++] = (int)d;
                    c = *end == 'x' ? end + 1 : end;
                }
                p->ndims = nd;
                snprintf(p->dims_from, sizeof(p->dims_from), "routes");
            }
            break;
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
    if (!un.empty() && pairs) {
        uint32_t *v = (uint32_t *)malloc(sizeof(uint32_t) * un.size());
        if (v == nullptr)
            return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
        memcpy(v, un.data(), sizeof(uint32_t) * un.size());
        free(p->unroutable);
        p->unroutable = v;
        p->nunroutable = un.size() / 3;
    }
    if (only_topo || ideal)
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

} // namespace cs_plat

using namespace cs_plat;

extern "C" int cs__plat_sg_probe(cs_platform_t *p, const char *path, int topo, cs_err_t *err)
{
    const cs__pfile_t *f = (const cs__pfile_t *)p->file;
    char *abs = realpath(path, nullptr);
    if (abs == nullptr)
        return cs_err_set(err, CS_ERR_IO, "%s: %s", path, strerror(errno));
    const char *shown = f ? f->fname : path;
    double t0 = cs_now_s();
    /* the reply, from the cache when this text was read before
     * (cs_plat_cache.c); the file's own path is part of the key, as the
     * reply names it */
    std::string extra = std::string(topo ? "topology " : "") + abs, out;
    char *hit = nullptr;
    size_t hitlen = 0;
    int st = CS_OK, cached = cs__plat_cache_get("probe", extra.c_str(), p->xml, &hit, &hitlen);
    if (cached) {
        out.assign(hit, hitlen);
        free(hit);
    } else {
        child_spec c{f, abs, shown, nullptr, 0, [&](int fd) { facts(fd, f, shown, topo, t0); }};
        st = run_child(c, out, err);
    }
    free(abs);
    if (st == CS_OK)
        st = parse_reply(p, out, 0, err);
    if (st == CS_OK && !cached)
        cs__plat_cache_put("probe", extra.c_str(), p->xml, out.data(), out.size());
    if (st == CS_OK)
        p->sg_loads |= 1u;
    return st;
}

extern "C" int cs__plat_sg_probe_ideal(cs_platform_t *p, const char *path, const char *text,
                                       cs_err_t *err)
{
    const cs__pfile_t *f = (const cs__pfile_t *)p->file;
    std::string extra = std::string("ideal ") + (f ? f->fname : path), out;
    char *hit = nullptr;
    size_t hitlen = 0;
    int st = CS_OK, cached = cs__plat_cache_get("probe", extra.c_str(), text, &hit, &hitlen);
    if (cached) {
        out.assign(hit, hitlen);
        free(hit);
    } else {
        child_spec c{f, path, f ? f->fname : path, text, 1,
                     [&](int fd) { ideal_facts(fd, f, p); }};
        st = run_child(c, out, err);
    }
    if (st == CS_OK)
        st = parse_reply(p, out, 1, err);
    if (st == CS_OK && !cached)
        cs__plat_cache_put("probe", extra.c_str(), text, out.data(), out.size());
    if (st == CS_OK)
        p->sg_loads |= 2u;
    return st;
}
