/*
 * cs_plat_nosg.c - platform files in a build without SimGrid
 * (CS_WITH_SIMGRID=OFF): presets still open, XML files cannot, because
 * collstep reads a file through what SimGrid builds of it (cs_plat_sg.cpp).
 */
#ifdef CS_PLAT_NO_SIMGRID
#include "cs_plat_file.h"

int cs__plat_sg_probe(cs_platform_t *p, const char *path, int topo, cs_err_t *err)
{
    (void)p;
    (void)topo;
    return cs_err_set(err, CS_ERR_UNSUPPORTED,
                      "%s: platform files need SimGrid, and this collstep was built without it "
                      "(CS_WITH_SIMGRID=OFF): use a preset",
                      path);
}

int cs__plat_sg_probe_ideal(cs_platform_t *p, const char *path, const char *text, cs_err_t *err)
{
    (void)p;
    (void)text;
    return cs_err_set(err, CS_ERR_UNSUPPORTED, "%s: platform files need SimGrid", path);
}
#else
typedef int cs__plat_nosg_unused; /* ISO C: a translation unit is not empty */
#endif
