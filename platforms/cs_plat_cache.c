/*
 * cs_plat_cache.c - what SimGrid said about a platform text, remembered
 * (cs_plat_file.h: cs__plat_cache_get / _put).
 *
 * Opening a platform file loads it into SimGrid in a child (the facts of
 * cs_plat_probe.cpp: hosts, tiers, routes), and a simulation then loads it
 * again in its own process: on a 256-host file the first load cost as
 * much as the simulation.  The child's reply depends only on the text
 * loaded, what was asked (kind, options) and the SimGrid and collstep
 * that read it, so a reply that succeeded is kept in the user's cache
 * ($XDG_CACHE_HOME/collstep/platforms, else ~/.cache/collstep/platforms),
 * one file per (kind, options, text), named by an FNV-1a 64 digest of
 * them and collstep's version, and reused instead of a child: the
 * simulation is then the only load.  A text that changed by one byte has
 * another digest; a failure is never kept (the child explains it again);
 * a cache that cannot be read or written costs only the child.
 * CS_PLATFORM_CACHE=0 turns it off.
 *
 * File: "collstep platform facts 1 BYTES\n" then the reply, written to a
 * temporary name and renamed, so a reader sees all of it or nothing.
 */
#ifndef CS_PLAT_NO_SIMGRID
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xbt/base.h> /* before version.h, which needs its macros */
#include <simgrid/version.h>

#include "cs_env.h"
#include "cs_hash.h"
#include "cs_log.h"
#include "cs_plat_file.h"

static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * CS_FNV64_PRIME;
    return (h ^ 0xff) * CS_FNV64_PRIME; /* a separator: ("ab","c") != ("a","bc") */
}

/* The cache file for (kind, extra, text); 0 when there is no cache. */
static int cache_path(const char *kind, const char *extra, const char *text, char *buf,
                      size_t len, int make_dirs)
{
    const char *off = cs_env_get("CS_PLATFORM_CACHE");
    if (off && !strcmp(off, "0"))
        return 0;
    char dir[768];
    if (!cs_env_cache_dir("platforms", dir, sizeof(dir), make_dirs))
        return 0;
    char sg[64];
    snprintf(sg, sizeof(sg), "simgrid %d.%d.%d", SIMGRID_VERSION_MAJOR, SIMGRID_VERSION_MINOR,
             SIMGRID_VERSION_PATCH);
    uint64_t h = CS_FNV64_OFFSET;
    h = fnv(h, kind, strlen(kind));
    h = fnv(h, extra ? extra : "", extra ? strlen(extra) : 0);
    h = fnv(h, sg, strlen(sg));
    h = fnv(h, text, strlen(text));
    int n = snprintf(buf, len, "%s/%016llx-%s", dir, (unsigned long long)h, CS_VERSION);
    return n > 0 && (size_t)n < len;
}

int cs__plat_cache_get(const char *kind, const char *extra, const char *text, char **out,
                       size_t *outlen)
{
    char path[1024];
    *out = NULL;
    *outlen = 0;
    if (!text || !cache_path(kind, extra, text, path, sizeof(path), 0))
        return 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    unsigned long long n = 0;
    char *v = NULL;
    if (fscanf(f, "collstep platform facts 1 %llu", &n) == 1 && fgetc(f) == '\n' &&
        n < (1ull << 32) && (v = malloc((size_t)n + 1)) != NULL && fread(v, 1, (size_t)n, f) == n &&
        fgetc(f) == EOF) {
        v[n] = '\0';
        *out = v;
        *outlen = (size_t)n;
        CS_DEBUG("platforms", "%s facts of the platform from %s", kind, path);
    } else {
        free(v);
    }
    fclose(f);
    return *out != NULL;
}

void cs__plat_cache_put(const char *kind, const char *extra, const char *text, const char *facts,
                        size_t len)
{
    char path[1024], tmp[1100];
    if (!text || !cache_path(kind, extra, text, path, sizeof(path), 1))
        return;
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    int ok = fprintf(f, "collstep platform facts 1 %llu\n", (unsigned long long)len) > 0 &&
             fwrite(facts, 1, len, f) == len;
    if (fclose(f) != 0 || !ok || rename(tmp, path) != 0)
        unlink(tmp);
}
#else
typedef int cs__plat_cache_unused; /* ISO C: a translation unit is not empty */
#endif
