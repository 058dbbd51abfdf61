/*
 * cs_plat_sg.hpp - internal C++ of cs_plat_sg.cpp (derived tiers, loading,
 * routes in path order) shared with cs_plat_probe.cpp (the child that reads
 * a platform file, and its parent).  Contracts in the .cpp files.
 */
#ifndef CS_PLAT_SG_HPP
#define CS_PLAT_SG_HPP

#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>

extern "C" { /* cs_status.h has no C++ guards of its own */
#include "cs_plat_file.h"
}

namespace sg4 = simgrid::s4u;

namespace cs_plat {
using simgrid::kernel::resource::StandardLinkImpl;
using simgrid::kernel::routing::NetPoint;
using simgrid::kernel::routing::NetZoneImpl;

bool ends_with(const std::string &s, const char *t);
/* Name without the _UP / _DOWN of a split-duplex half. */
std::string base_name(const std::string &n);
/* Zones depth first, in creation (document) order. */
void zones_dfs(sg4::NetZone *z, std::vector<sg4::NetZone *> &out);
/* Set the derived tier of every link without one; lines (may be null)
 * receives the line of the <cluster> that made a generated link. */
void derive_tiers(const cs__pfile_t *f, std::unordered_map<const sg4::Link *, int> *lines);
/* SimGrid's message with the loaded path replaced by the user's name. */
std::string user_words(std::string m, const char *path, const char *shown);
/* Load and seal, SimGrid's exceptions caught: CS_OK, or CS_ERR_PARSE with
 * the line SimGrid named (0: none) and its words (path replaced by shown,
 * without "Parse error at F:L: "); cs__pfile_explain makes them one
 * message. */
int load_engine(const char *path, const char *shown, int &line, std::string &words);

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

/* Routes between hosts, in path order, as s4u links (cs_plat_sg.cpp). */
struct route_reader {
    seg_memo memo;
    std::unordered_map<const StandardLinkImpl *, sg4::Link *> iface;
    std::vector<StandardLinkImpl *> impl;
    explicit route_reader(const cs__pfile_t *f);
    /* 1 with the links of a -> b; 0 when SimGrid has no route (an
     * exception, or no link between two different hosts) */
    int read(const sg4::Host *a, const sg4::Host *b, std::vector<sg4::Link *> &links);
};

/* ---- cs_plat_child.cpp: a platform loaded in a child process ---------- */

/* The pipe's lines (tabs and newlines of a value made spaces). */
void put(int fd, const std::string &s);
std::string clean(std::string s);
void put_error(int fd, int code, const std::string &msg);

struct child_spec {
    const cs__pfile_t *f;  /* the file (may be NULL) */
    const char *path;      /* what SimGrid loads */
    const char *shown;     /* its name in messages */
    const char *text;      /* the text at path when it rewrites f (lines mapped), else NULL */
    int ideal;             /* that text is the ideal model's */
    std::function<void(int fd)> body; /* in the child once loaded (may be empty) */
};
/* Load c.path in a child (SimGrid's log kept, never printed), run c.body
 * there; *out gets the child's lines.  CS_OK, or SimGrid's refusal as one
 * message (cs__pfile_explain), or the first E line's. */
int run_child(const child_spec &c, std::string &out, cs_err_t *err);

/* ---- cs_plat_survey.cpp: routes between the ranks' hosts --------------- */

/* Lines P, U, h, H (with read_pairs: every pair of ranks, both ways) and D
 * (with levels: the natural dims). */
void survey(int fd, const std::vector<sg4::Host *> &hosts, const cs__pfile_t *f, route_reader &rr,
            bool read_pairs, bool levels);
} // namespace cs_plat

#endif /* CS_PLAT_SG_HPP */
