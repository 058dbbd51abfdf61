/*
 * cs_plat_file.h - internal: a SimGrid platform file as libxml2 read it
 * (cs_plat_file.c), and what collstep learns from SimGrid itself once
 * SimGrid has built it (cs_plat_sg.cpp).  Usable from C and C++.
 *
 * The file is parsed with libxml2 before SimGrid sees it, for three
 * things SimGrid does not give: file:line of every element (for error
 * messages), collstep's own properties with their lines (collstep_dims,
 * collstep_factors, collstep_spec, device kinds, tier names), and the
 * attributes of the <cluster> elements whose generated links get derived
 * tiers (topology, topo_parameters).  SimGrid then loads the same file and
 * builds every zone itself; nothing here re-implements its generators.
 */
#ifndef CS_PLAT_FILE_H
#define CS_PLAT_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "cs_platform.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A <cluster> (or a zone routing="Cluster" holding <cabinet>s). */
typedef struct cs__pcluster {
    char id[128];
    char topology[16];  /* FLAT, TORUS, FAT_TREE, DRAGONFLY; CABINETS for a Cluster zone */
    char params[128];   /* topo_parameters */
    int line;
} cs__pcluster_t;

typedef struct cs__pfile {
    char *fname;           /* as the user named it */
    void *doc;             /* xmlDocPtr */
    int ncl;
    cs__pcluster_t *cl;
    int nbackbones;
    char (*backbones)[128]; /* ids of <backbone> elements */
    int npeers;
    char (*peers)[128];     /* ids of <peer> elements */
    int nnone;
    char (*nonezones)[128]; /* ids of zones with routing="None" (SimGrid aborts on a route asked there) */
    /* top zone's collstep props */
    char dims[64], factors[1024], spec[256];
    int dims_line;
    char nccl_fit[1024];   /* collstep_nccl_fit: terms of the nccl model fitted to measurements */
    int nccl_fit_line;
} cs__pfile_t;

/* Parse `text` (the file's contents; `fname` names it in errors).
 * Errors: CS_ERR_PARSE "fname:line:col: ..." for XML that is not well
 * formed or not a <platform>, and for collstep properties with bad values
 * (device kinds other than gpu / cpu, empty or long tier names). */
int cs__pfile_parse(const char *text, const char *fname, cs__pfile_t **out, cs_err_t *err);
void cs__pfile_free(cs__pfile_t *f);

/* Line of the first element `elem` whose id attribute is `id`, 0 if none. */
int cs__pfile_line(const cs__pfile_t *f, const char *elem, const char *id);

/* Attribute `attr` of the first element `elem` whose id is `id`, copied
 * into out ("" when absent); returns the element's line, 0 when there is no
 * such element. */
int cs__pfile_attr(const cs__pfile_t *f, const char *elem, const char *id, const char *attr,
                   char *out, size_t len);

/* SimGrid's failure to load the file (`ideal`: the ideal model's text of
 * it) as collstep says it, one line: "FILE[:LINE[:COLUMN]]: SimGrid cannot
 * load it: WORDS[: what is missing]" (COLUMN: where on the line stands what
 * the words quote, read from the file f names).  words: SimGrid's message (its own path
 * already replaced by the file's name, without "Parse error at F:L: ");
 * line: the file's line SimGrid named, 0 when it named none (the line of
 * the element the words point at is found then: the <host_link> of "Link
 * 'X' not found!", the <link_ctn> of "Link not found: X").  f may be NULL
 * (text given without a file: no line is found).  cs_plat_explain.c. */
void cs__pfile_explain(const cs__pfile_t *f, const char *shown, int line, const char *words,
                       int ideal, char *out, size_t len);

/* The text SimGrid loads for a simulation.  With `split`, every <link>
 * written without sharing_policy (SimGrid's default, SHARED: both
 * directions share the bandwidth) becomes SPLITDUPLEX, and every
 * <link_ctn> naming such a link without a direction (or with SimGrid's
 * default, NONE) gets direction="UP"
 * (a symmetrical route's way back then takes the DOWN half), and a
 * <host_link> naming it names its halves (up="X_UP", down="X_DOWN").
 * *out is malloc'ed. */
int cs__pfile_text(const cs__pfile_t *f, int split, char **out, cs_err_t *err);

/* How many <link>s the ideal model's text (cs__pfile_text with split)
 * makes SPLITDUPLEX: 0 when that text means what the file says. */
int cs__pfile_split_count(const cs__pfile_t *f);

/* The file's line of what SimGrid calls `line` of `text` (a text from
 * cs__pfile_text: the same elements, laid out again): the line of the
 * element starting last at or before it; 0 when unknown. */
int cs__pfile_map_line(const cs__pfile_t *f, const char *text, int line);

/* ---- cs_plat_switch.c ------------------------------------------------- */

/* The switches that reduce in `doc` (an xmlDocPtr; `fname` names it in
 * errors): one per <zone> with a `reduce` property (docs/platforms.md).
 * With `convert`, a switch that is a <router> becomes a <host> of the same
 * name in doc (the simulation's text).  CS_ERR_PARSE "fname:line: ..." for
 * bad values, a zone without a single router to be its switch, a named
 * switch or zone that does not exist.  *out is owned by the caller:
 * cs__plat_switches_free. */
int cs__plat_switches(void *doc, const char *fname, int convert, cs_plat_switch_t **out, int *n,
                      cs_err_t *err);
void cs__plat_switches_free(cs_plat_switch_t *v, int n);

/* ---- cs_plat_sg.cpp ---------------------------------------------------- */

/* What SimGrid said about a text (cs_plat_cache.c): a successful child's
 * reply for (kind, extra, text), kept in the user's cache.  get: 1 and a
 * malloc'ed copy in *out (*outlen bytes), or 0.  put: keep it (silently
 * nothing when there is no cache). */
int cs__plat_cache_get(const char *kind, const char *extra, const char *text, char **out,
                       size_t *outlen);
void cs__plat_cache_put(const char *kind, const char *extra, const char *text, const char *facts,
                        size_t len);
/* Load `path` (the file of platform p) in a forked child running SimGrid
 * (cs_plat_child.cpp: SimGrid's log kept there, its refusal said as one
 * message by cs__pfile_explain), read what SimGrid built and fill p: ranks
 * (p->hosts, p->ndevices, p->rank_rule), tiers (derived where a link
 * carries none), reduction rates, the checks before simulating (positive
 * bandwidths, non-negative latencies), the routes between the ranks (pairs
 * without one, shared link halves, the natural dims when the file has no
 * collstep_dims: cs_plat_survey.cpp).  With `topo`, also the topology
 * figures (p->topo).  Sets bit 1 of p->sg_loads. */
int cs__plat_sg_probe(cs_platform_t *p, const char *path, int topo, cs_err_t *err);

/* The ideal model's text of p's file (`text`, written at `path`) loaded in
 * a child the same way: its refusal (lines mapped back to the file's), or
 * its shared link halves (p->shared[1]).  Sets bit 2 of p->sg_loads. */
int cs__plat_sg_probe_ideal(cs_platform_t *p, const char *path, const char *text, cs_err_t *err);

/* Load `path` in a child only, to learn whether SimGrid can (the same
 * message as cs__plat_sg_probe when it cannot).  text / ideal as in
 * cs__plat_sg_load. */
int cs__plat_sg_check_load(const char *path, const char *shown, const cs__pfile_t *f,
                           const char *text, int ideal, cs_err_t *err);

/* The derived tier of every link that carries no tier property (set as
 * the link's property), in the SimGrid platform loaded in this process;
 * `f` may be NULL (a preset: every link carries its tier). */
void cs__plat_sg_apply_tiers(const cs__pfile_t *f);

/* Load `path` into the SimGrid engine of this process (simgrid_init done),
 * catching SimGrid's exceptions: CS_ERR_PARSE with the message of
 * cs__pfile_explain (`text`: the text at path when it rewrites f, whose
 * lines are mapped back; `ideal`: it is the ideal model's).  Then seals the
 * platform and applies the derived tiers.  SimGrid's xbt_assert refusals
 * abort the process: load in a child first (cs__plat_sg_check_load) unless
 * the text is known to load (cs_platform_t.sg_loads). */
int cs__plat_sg_load(const char *path, const char *shown, const cs__pfile_t *f, const char *text,
                     int ideal, cs_err_t *err);

/* Whether host a[i] has a route to host b[i] (none is needed from a host
 * to itself), for i < n, in the platform loaded in this process.  CS_OK;
 * CS_ERR_NOTFOUND with *bad = the first i that has none and *back = 1 when
 * b[i] has one to a[i] (err untouched); CS_ERR_INVAL with err for an
 * unknown host. */
int cs__plat_sg_routes(const char *const *a, const char *const *b, size_t n,
                       const cs__pfile_t *f, size_t *bad, int *back, cs_err_t *err);

#ifdef __cplusplus
}
#endif
#endif /* CS_PLAT_FILE_H */
