/*
 * cs_plat_simload.c - what the simulator asks of a platform (cs_platform.h,
 * "Loading into the simulator's SimGrid"): its text for a model written to a
 * temporary file and checked in a child when it is not known to load, the
 * load into the calling process's SimGrid, and the routes and host lines
 * the simulator's route check names.  Built with SimGrid only, like sim/.
 */
#ifndef CS_PLAT_NO_SIMGRID
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cs_env.h"
#include "cs_log.h"
#include "cs_out.h"
#include "cs_plat_file.h"

/* The temporary texts of simulations killed before they removed them
 * (SIGKILL, the OOM killer, a planner worker at the end of its budget):
 * files of our pattern, cs_sim_<pid>_XXXXXX.xml, whose process is gone. */
static void reap_dead(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long pid = 0;
        int n = 0;
        size_t len = strlen(e->d_name);
        if (sscanf(e->d_name, "cs_sim_%ld_%n", &pid, &n) != 1 || n == 0 || pid <= 0 ||
            len != (size_t)n + 6 + 4 || strcmp(e->d_name + len - 4, ".xml") != 0)
            continue;
        if (!cs_out_pid_gone((pid_t)pid))
            continue;
        char path[4096];
        if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path) &&
            unlink(path) == 0)
            CS_INFO("sim", "removed %s, left by process %ld, which was killed", path, pid);
    }
    closedir(d);
}

struct cs_platform_sg_text {
    char path[4096]; /* the temporary file ("" once removed) */
    char *xml;
    int ideal, rewritten;
};

void cs_platform_sg_text_free(cs_platform_sg_text_t *t)
{
    if (!t)
        return;
    if (t->path[0])
        unlink(t->path);
    free(t->xml);
    free(t);
}

int cs_platform_sg_prepare(const cs_platform_t *plat, int ideal, cs_platform_sg_text_t **out,
                           cs_err_t *err)
{
    *out = NULL;
    cs_platform_sg_text_t *t = calloc(1, sizeof(*t));
    if (!t)
        return cs_err_set(err, CS_ERR_NOMEM, "sim: out of memory");
    t->ideal = ideal != 0;
    int st = cs_platform_sim_text(plat, t->ideal, &t->xml, err);
    if (st != CS_OK) {
        cs_platform_sg_text_free(t);
        return st;
    }
    const char *dir = cs_env_get("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    reap_dead(dir);
    snprintf(t->path, sizeof(t->path), "%s/cs_sim_%ld_XXXXXX.xml", dir, (long)getpid());
    int fd = mkstemps(t->path, 4);
    if (fd < 0) {
        t->path[0] = '\0';
        cs_platform_sg_text_free(t);
        return cs_err_set(err, CS_ERR_IO, "sim: cannot create a temporary file in %s", dir);
    }
    size_t len = strlen(t->xml), off = 0;
    while (off < len) {
        ssize_t w = write(fd, t->xml + off, len - off);
        if (w <= 0) {
            close(fd);
            cs_platform_sg_text_free(t);
            return cs_err_set(err, CS_ERR_IO, "sim: cannot write a temporary file in %s", dir);
        }
        off += (size_t)w;
    }
    close(fd);
    const cs__pfile_t *f = plat->is_file ? plat->file : NULL;
    t->rewritten = f && t->ideal && cs__pfile_split_count(f) > 0;
    if (!(plat->sg_loads & (t->ideal ? 2u : 1u))) {
        /* a file's text is laid out again: SimGrid's lines are mapped back */
        st = cs__plat_sg_check_load(t->path, plat->name[0] ? plat->name : "platform", f,
                                    f ? t->xml : NULL, t->rewritten, err);
        if (st != CS_OK) {
            cs_platform_sg_text_free(t);
            return st;
        }
    }
    *out = t;
    return CS_OK;
}

int cs_platform_sg_load(const cs_platform_t *plat, cs_platform_sg_text_t *t, cs_err_t *err)
{
    const cs__pfile_t *f = plat->is_file ? plat->file : NULL;
    int st = cs__plat_sg_load(t->path, plat->name[0] ? plat->name : "platform", f,
                              f ? t->xml : NULL, t->rewritten, err);
    cs_platform_sg_text_free(t);
    return st;
}

int cs_platform_sg_routes(const cs_platform_t *plat, const char *const *a, const char *const *b,
                          size_t n, size_t *bad, int *back, cs_err_t *err)
{
    return cs__plat_sg_routes(a, b, n, plat->is_file ? plat->file : NULL, bad, back, err);
}

int cs_platform_host_line(const cs_platform_t *plat, const char *host)
{
    return plat->is_file ? cs__pfile_line(plat->file, "host", host) : 0;
}
#else
typedef int cs__plat_simload_unused; /* ISO C: a translation unit is not empty */
#endif
