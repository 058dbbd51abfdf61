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
} cs__pfile_t;

/* Parse `text` (the file's contents; `fname` names it in errors).
 * Errors: CS_ERR_PARSE "fname:line:col: ..." for XML that is not well
 * formed or not a <platform>, and for collstep properties with bad values
 * (device kinds other than gpu / cpu, empty or long tier names). */
int cs__pfile_parse(const char *text, const char *fname, cs__pfile_t **out, cs_err_t *err);
void cs__pfile_free(cs__pfile_t *f);

/* Line of the first element `elem` whose id attribute is `id`, 0 if none. */
int cs__pfile_line(const cs__pfile_t *f, const char *elem, const char *id);

/* The text SimGrid loads for a simulation.  With `split`, every <link>
 * written without sharing_policy (SimGrid's default, SHARED: both
 * directions share the bandwidth) becomes SPLITDUPLEX, and every
 * <link_ctn> naming such a link without a direction gets direction="UP"
 * (a symmetrical route's way back then takes the DOWN half).  *out is
 * malloc'ed. */
int cs__pfile_text(const cs__pfile_t *f, int split, char **out, cs_err_t *err);

/* The ranks of a platform known only as XML text (a cs_platform_t built
 * by hand, without cs_platform_open): the <host> elements with a device
 * property gpu or cpu in document order, or, when none has one, every
 * <host> sorted by name (the rule of cs_platform.h for the elements a
 * text can hold without SimGrid's generators).  *out: malloc'ed names. */
int cs__xml_rank_hosts(const char *xml, char ***out, uint64_t *n, cs_err_t *err);

/* ---- cs_plat_sg.cpp ---------------------------------------------------- */

/* Load `path` (the file of platform p, or a rewritten copy: name it `shown`
 * in messages) in a forked child running SimGrid, read what SimGrid built
 * and fill p: ranks (p->hosts, p->ndevices, p->rank_rule), tiers (derived
 * where a link carries none), and the checks before simulating (routes
 * both ways between the ranks' hosts, positive bandwidths, non-negative
 * latencies).  With `topo`, also the topology figures (p->topo). */
int cs__plat_sg_probe(cs_platform_t *p, const char *path, int topo, cs_err_t *err);

/* The derived tier of every link that carries no tier property (set as
 * the link's property), in the SimGrid platform loaded in this process;
 * `f` may be NULL (a preset: every link carries its tier). */
void cs__plat_sg_apply_tiers(const cs__pfile_t *f);

/* Load `path` into the SimGrid engine of this process (simgrid_init done),
 * catching SimGrid's exceptions: CS_ERR_PARSE with "shown:line: message".
 * Then seals the platform and applies the derived tiers. */
int cs__plat_sg_load(const char *path, const char *shown, const cs__pfile_t *f, cs_err_t *err);

/* Check that every pair (a[i], b[i]) of host names has a route both ways
 * (none for a host to itself is needed) in the platform loaded in this
 * process.  CS_ERR_INVAL naming the two hosts otherwise. */
int cs__plat_sg_check_pairs(const char *const *a, const char *const *b, size_t n,
                            const cs__pfile_t *f, cs_err_t *err);

#ifdef __cplusplus
}
#endif
#endif /* CS_PLAT_FILE_H */
