/*
 * cs_plat_print.c - `collstep platform show` (cs_platform_print) and the
 * notes other commands repeat from it (cs_platform.h): the pairs of ranks
 * without a route, the link halves that carry both directions of a rank's
 * traffic, the ranks' reduction rate.
 */
#include <stdio.h>
#include <string.h>

#include "cs_plat_file.h"

static const char *rank_host(const cs_platform_t *p, uint64_t r)
{
    return p->hosts && r < p->ndevices ? p->hosts[r] : "?";
}

int cs_platform_unroutable_note(const cs_platform_t *p, uint64_t ranks, int show, char *buf,
                                size_t len, uint64_t *n)
{
    size_t off = 0;
    *n = 0;
    buf[0] = '\0';
    for (uint64_t k = 0; k < p->nunroutable; k++) {
        const uint32_t *u = &p->unroutable[3 * k];
        if (u[0] >= ranks || u[1] >= ranks)
            continue;
        if ((*n)++ >= (uint64_t)show || off >= len)
            continue;
        const char *a = rank_host(p, u[0]), *b = rank_host(p, u[1]);
        char kind[300];
        if (u[2] == 0)
            snprintf(kind, sizeof(kind), "no route either way");
        else
            snprintf(kind, sizeof(kind), "a route only from %s to %s", u[2] == 1 ? a : b,
                     u[2] == 1 ? b : a);
        int w = snprintf(buf + off, len - off, "%s%s (rank %u) - %s (rank %u): %s",
                         off ? "; " : "", a, u[0], b, u[1], kind);
        if (w > 0)
            off += (size_t)w;
    }
    if (*n > (uint64_t)show && off < len)
        snprintf(buf + off, len - off, "; and %llu more", (unsigned long long)(*n - show));
    return *n > 0;
}

int cs_platform_shared_note(const cs_platform_t *p, int ideal, char *buf, size_t len)
{
    const cs_plat_shared_t *s = &p->shared[ideal ? 1 : 0];
    if (s->nranks == 0)
        return 0;
    const char *host = rank_host(p, s->rank), *c = s->cause;
    char where[300] = "", base[128];
    const cs__pfile_t *f = p->file;
    if (s->line > 0 && f)
        snprintf(where, sizeof(where), " (%s:%d)", f->fname, s->line);
    snprintf(base, sizeof(base), "%s", s->link);
    size_t bl = strlen(base);
    if (bl > 3 && strcmp(base + bl - 3, "_UP") == 0)
        base[bl - 3] = '\0';
    else if (bl > 5 && strcmp(base + bl - 5, "_DOWN") == 0)
        base[bl - 5] = '\0';
    char fix[600];
    if (strcmp(c, "unsplit") == 0)
        snprintf(fix, sizeof(fix),
                 "link %s has no sharing_policy, so the ideal model makes it SPLITDUPLEX and "
                 "gives every <link_ctn id=\"%s\"> without a direction its UP half; give the "
                 "<link_ctn>s of the routes into %s direction=\"DOWN\"",
                 base, base, host);
    else if (strcmp(c, "direction") == 0)
        snprintf(fix, sizeof(fix),
                 "the <link_ctn id=\"%s\">s of routes out of %s and into it name the same half; "
                 "give the routes into %s the other direction",
                 base, host, host);
    else if (strcmp(c, "default") == 0)
        snprintf(fix, sizeof(fix),
                 "link %s has no sharing_policy, which SimGrid takes as SHARED (one bandwidth "
                 "for both directions) when the file is loaded as written; declare it "
                 "sharing_policy=\"SPLITDUPLEX\" and name a half for each way (<link_ctn "
                 "direction=\"UP\"> out of %s, \"DOWN\" into it; <host_link up=\"%s_UP\" "
                 "down=\"%s_DOWN\">)",
                 base, host, base, base);
    else if (strcmp(c, "shared") == 0)
        snprintf(fix, sizeof(fix),
                 "link %s is not SPLITDUPLEX (one bandwidth for both directions); declare it "
                 "sharing_policy=\"SPLITDUPLEX\" and name a half for each way (<link_ctn "
                 "direction=\"UP\"> out of %s, \"DOWN\" into it; <host_link up=\"%s_UP\" "
                 "down=\"%s_DOWN\">)",
                 base, host, base, base);
    else
        snprintf(fix, sizeof(fix),
                 "SimGrid generated it shared by both directions (a <cluster> or <cabinet> "
                 "with sharing_policy=\"SHARED\"?); make it SPLITDUPLEX");
    char what[400];
    if (strcmp(base, s->link) != 0)
        snprintf(what, sizeof(what), "the %s half of link %s%s", s->link + strlen(base) + 1,
                 base, where);
    else
        snprintf(what, sizeof(what), "link %s%s", s->link, where);
    snprintf(buf, len,
             "%llu of the %llu ranks send and receive through one direction of one link, so "
             "sending and receiving at once (every step of a ring) halves its rate: rank %llu "
             "(%s) sends and receives through %s; %s",
             (unsigned long long)s->nranks, (unsigned long long)p->ndevices,
             (unsigned long long)s->rank, host, what, fix);
    return 1;
}

/* The ranks' reduction rate, and whether it is slower than every link. */
static void print_reductions(const cs_platform_t *p, FILE *f)
{
    const double *r = p->reduce_bw;
    if (!(r[1] > 0))
        return;
    fprintf(f, "Reductions: %.4g GB/s per rank", r[1] / 1e9);
    if (r[0] != r[2])
        fprintf(f, " (most ranks; from %.4g to %.4g GB/s)", r[0] / 1e9, r[2] / 1e9);
    fprintf(f, ": a rank's host speed, 1 flop = 1 byte reduced (B bytes take B / speed)");
    double slowest = 0;
    for (int t = 0; t < p->ntiers; t++)
        if (strcmp(p->tiers[t].name, "loopback") != 0 &&
            (slowest == 0 || p->tiers[t].bandwidth < slowest))
            slowest = p->tiers[t].bandwidth;
    if (slowest > 0 && r[0] < slowest)
        fprintf(f, ";\n  slower than every link (the slowest tier moves %.4g GB/s): reductions "
                   "bound every reducing collective; a host's speed=\"...f\" sets its rate",
                slowest / 1e9);
    fprintf(f, ".\n");
}

/* Switches that reduce (docs/platforms.md): the first few, and how many. */
static void print_switches(const cs_platform_t *p, FILE *f)
{
    if (p->nswitches == 0)
        return;
    fprintf(f, "Switches that reduce: %d (switch steps of a group run on the one serving all its "
               "members with the fewest hosts)\n",
            p->nswitches);
    for (int k = 0; k < p->nswitches && k < 4; k++) {
        const cs_plat_switch_t *sw = &p->switches[k];
        char what[256], bw[64];
        cs_platform_switch_reduces_str(sw, what, sizeof(what));
        if (sw->reduce_bw > 0)
            snprintf(bw, sizeof(bw), "%.4g GB/s", sw->reduce_bw / 1e9);
        else
            snprintf(bw, sizeof(bw), "line rate");
        fprintf(f, "  %s (%s, zone %s): %llu hosts, reduces at %s, %.3g us per operation; %s\n",
                sw->host, cs_reduce_kind_name(sw->kind), sw->zone,
                (unsigned long long)sw->nhosts, bw, sw->reduce_lat * 1e6, what);
    }
    if (p->nswitches > 4)
        fprintf(f, "  ... and %d more\n", p->nswitches - 4);
}

static void print_routes(const cs_platform_t *p, FILE *f)
{
    char buf[2048];
    uint64_t n = 0;
    if (cs_platform_unroutable_note(p, p->ndevices, 8, buf, sizeof(buf), &n))
        fprintf(f,
                "Unroutable: %llu of the %llu pairs of ranks %s have no route both ways (a "
                "schedule sending between them is refused): %s.\n",
                (unsigned long long)n, (unsigned long long)p->npairs_read,
                p->pairs_exact ? "(every pair read)" : "read", buf);
    int same = p->shared[0].nranks == p->shared[1].nranks &&
               strcmp(p->shared[0].link, p->shared[1].link) == 0;
    for (int m = 1; m >= (same ? 1 : 0); m--)
        if (cs_platform_shared_note(p, m, buf, sizeof(buf)))
            fprintf(f, "Shared link halves (%s): %s.\n",
                    same ? "both models"
                    : m  ? "ideal model, the default"
                         : "calibrated model, the file as written",
                    buf);
}

int cs_platform_print(const cs_platform_t *p, FILE *f, cs_err_t *err)
{
    if (p == NULL || f == NULL)
        return cs_err_set(err, CS_ERR_INVAL, "platform print: no platform");
    /* a file's name is its path, which name[] may cut short */
    fprintf(f, "platform %s (%s): %llu %s", p->is_file ? p->spec : p->name, p->spec,
            (unsigned long long)p->ndevices,
            p->rank_noun[0] ? p->rank_noun : "devices");
    if (p->ndims > 0) {
        fprintf(f, ", dims ");
        for (int i = 0; i < p->ndims; i++)
            fprintf(f, "%s%d", i ? "x" : "", p->dims[i]);
    }
    fprintf(f, "\n\n%-11s %9s %14s %12s %10s %10s\n", "tier", "links", "bw GB/s/dir",
            "latency us", "lat x", "bw x");
    for (int t = 0; t < p->ntiers; t++) {
        const cs_tier_info_t *ti = &p->tiers[t];
        fprintf(f, "%-11s %9llu %14.3f %12.3f %10.3g %10.3g\n", ti->name,
                (unsigned long long)ti->nlinks, ti->bandwidth / 1e9, ti->latency * 1e6,
                ti->lat_factor, ti->bw_factor);
    }
    fprintf(f, "\n%s\n", p->description ? p->description : "");
    fprintf(f, "Ranks: %s.\n", p->rank_rule);
    if (p->hosts && p->ndevices > 0) {
        fprintf(f, "Rank hosts:");
        for (uint64_t i = 0; i < p->ndevices && i < 8; i++)
            fprintf(f, "%s %llu=%s", i ? "," : "", (unsigned long long)i, p->hosts[i]);
        fprintf(f, "%s\n", p->ndevices > 8 ? ", ..." : "");
    }
    print_reductions(p, f);
    print_switches(p, f);
    if (p->nccl_fit[0])
        fprintf(f,
                "NCCL model terms fitted to measurements (collstep_nccl_fit, line %d): %s\n"
                "  factors on what NCCL's model charges per route class (nvlink, pci, net):\n"
                "  bw its rate, lat its per-step latency, base NCCL's per-collective base\n"
                "  latency (inside a node; without it the base follows lat);\n"
                "  CLASS.bw.ALGO/PROTO for one NCCL algorithm and protocol (P2P: all-to-all).\n"
                "  `--model nccl` (sim, plan, validate) applies them;\n"
                "  `collstep calibrate --from-nccl-tests` wrote them.\n",
                p->nccl_fit_line, p->nccl_fit);
    if (p->ndims > 0 && strcmp(p->dims_from, "routes") == 0) {
        fprintf(f, "Hierarchy: dims ");
        for (int i = 0; i < p->ndims; i++)
            fprintf(f, "%s%d", i ? "x" : "", p->dims[i]);
        fprintf(f, " from the routes' latencies (the groups of ranks whose routes stay within "
                   "each latency level, as `collstep plan` finds them): hier's default; a "
                   "collstep_dims property overrides.\n");
    }
    if (p->is_file) {
        print_routes(p, f);
        fprintf(f,
                "Tiers: %s"
                "Duplex: in the ideal model a <link> without sharing_policy is SPLITDUPLEX (each\n"
                "  direction its own bandwidth; a route's way back takes the other half); links\n"
                "  with a sharing_policy and SimGrid's generated links are as written.\n",
                cs_platform_tier_rule());
    }
    cs_topo_figures_t fig;
    cs_err_t terr = {0};
    if (cs_platform_topology(p, &fig, &terr) == CS_OK) {
        fprintf(f,
                "topology: %llu vertices, %llu edges, diameter %d hops between ranks, "
                "bisection %.3f GB/s (max-flow, first half of the ranks to the second half)\n",
                (unsigned long long)fig.nvertices, (unsigned long long)fig.nedges,
                fig.diameter_hops, fig.bisection_bw / 1e9);
        if (fig.npairs > 0)
            fprintf(f,
                    "  from %llu routes SimGrid computed (%s), %.2f s with loading; vertices: "
                    "each host and link direction twice (in, out)\n",
                    (unsigned long long)fig.npairs,
                    fig.exact ? "every pair of ranks"
                              : "rank i to i+1, i+N/2, then i+2, i+4, ...: figures of the "
                                "routes read, so lower bounds",
                    fig.seconds);
    } else {
        fprintf(f, "topology: not available (%s)\n", terr.msg);
    }
    return ferror(f) ? cs_err_set(err, CS_ERR_IO, "platform print: write error") : CS_OK;
}
