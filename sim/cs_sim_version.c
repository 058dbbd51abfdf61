/*
 * cs_sim_version.c - which SimGrid this process runs on (cs_sim_simgrid).
 *
 * The version comes from the library itself (sg_version_get), its file from
 * the loader's list of loaded objects, so an LD_LIBRARY_PATH that swaps the
 * library is seen.  Whether maestro keeps its activities in a set cannot be
 * asked of SimGrid: a 3.34 or later has it, and a 3.32 has it when it is
 * the patched build configure chose (CS_SG_LIBDIR, cmake/CollstepSimGrid.cmake).
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xbt/base.h> /* version.h needs it first */
#include <simgrid/version.h>

#include "cs_sim.h"

#ifndef CS_SG_LIBDIR
#define CS_SG_LIBDIR ""
#endif
#ifndef CS_SG_DESCRIBE
#define CS_SG_DESCRIBE "unknown"
#endif

static int find_simgrid(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char *name = info->dlpi_name;
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    if (base == NULL || strncmp(base, "libsimgrid.so", strlen("libsimgrid.so")) != 0)
        return 0;
    cs_sim_simgrid_t *sg = data;
    snprintf(sg->library, sizeof sg->library, "%s", name);
    return 1;
}

/* Whether `file` lies in folder `dir` (both resolved: the cache may be
 * reached through links). */
static int in_dir(const char *file, const char *dir)
{
    if (dir[0] == '\0' || file[0] == '\0')
        return 0;
    char *f = realpath(file, NULL), *d = realpath(dir, NULL);
    int in = 0;
    if (f && d) {
        size_t n = strlen(d);
        in = strncmp(f, d, n) == 0 && f[n] == '/' && strchr(f + n + 1, '/') == NULL;
    }
    free(f);
    free(d);
    return in;
}

void cs_sim_simgrid(cs_sim_simgrid_t *sg)
{
    memset(sg, 0, sizeof *sg);
    sg_version_get(&sg->major, &sg->minor, &sg->patch);
    dl_iterate_phdr(find_simgrid, sg);
    sg->configured = CS_SG_DESCRIBE;
    if (sg->major > 3 || (sg->major == 3 && sg->minor >= 34))
        sg->activity_set = 1;
    else
        sg->activity_set = CS_SG_ACTIVITY_SET && in_dir(sg->library, CS_SG_LIBDIR);
}
