/*
 * cs_env.c - see cs_env.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cs_env.h"
#include "cs_log.h"

const cs_env_var_t cs_env_vars[] = {
    {"CS_LOG", "warn", "every command",
     "what the libraries log to stderr: error, warn, info, debug, trace (at info, sim\n"
     "reports where its wall time goes)"},
    {"CS_LOG_SUBSYS", "all", "every command",
     "comma-separated subsystems to log: core, gen, sim, exec, ..."},
    {"CS_GEN_THREADS", "one per 256 Ki estimated steps, at most one per CPU", "gen, sim, run",
     "threads that generate ring, rhd, direct and hier (1 to 8); the schedule is the\n"
     "same step for step"},
    {"CS_SIM_THREADS", "one per 256 Ki steps, at most one per CPU", "sim",
     "threads that compile schedules for the simulator (1 to 8); results do not change"},
    {"CS_VERIFY_MAX_MEM", "half the physical memory", "verify, gen --verify, export, sim, run",
     "the most memory the verifier may use (8G, 512M, bytes); a larger schedule is\n"
     "refused (exit 2): simulate it with --no-verify"},
    {"CS_VERIFY_CACHE", "1", "sim, run, validate, gen --verify, export",
     "0: do not remember schedules that verified (in $XDG_CACHE_HOME/collstep/verified,\n"
     "else ~/.cache/collstep/verified); a remembered schedule is not verified again\n"
     "by sim, run and validate (gen --verify and export always verify)"},
    {"CS_PLATFORM_CACHE", "1", "every command that opens a platform file",
     "0: do not remember what SimGrid found in platform files (in\n"
     "$XDG_CACHE_HOME/collstep/platforms, else ~/.cache/collstep/platforms); a file\n"
     "read before is then loaded in a child again (the check before a simulation)"},
    {"CS_SIM_MAX_MEM", "the memory available (MemAvailable, cgroup, ulimit -v)", "sim, plan, validate",
     "the most memory a simulation may use (8G, 512M, bytes): one estimated to need more is\n"
     "refused before it starts, with the estimate"},
    {"CS_SIM_ENGINE", "dag where SimGrid has the activity-set fix, else actors",
     "sim, plan, validate, calibrate",
     "the simulator's engine: dag or actors (the same results; 'collstep sim --engine')"},
    {"CS_NO_GUARD", "0", "sim",
     "1: simulate in the command's own process instead of a watched child (debuggers);\n"
     "Ctrl-C then cannot remove partial outputs"},
    {"CS_SHM_COPY", "auto", "run --transport shm",
     "large-message mode: auto (map the sender's buffer, else CMA, else bounce), cma,\n"
     "bounce"},
    {"CS_SHM_EAGER", "128 KiB up to 8 ranks, a quarter of the ring above", "run --transport shm",
     "eager limit in bytes (ranks with different limits refuse to start)"},
    {"CS_TCP_CONTROL_TOS", "unset: the system's (0)", "run, validate, calibrate over tcp",
     "IP TOS / IPv6 traffic class byte of the control connections (0-255, e.g. 0xb8:\n"
     "DSCP EF), for fabrics that send marked packets first; data stays unmarked"},
    {"CS_LIBFABRIC", "libfabric.so.1", "run --transport ofi",
     "the libfabric library to load (a site's own build with verbs or efa providers)"},
    {"RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT", "unset: PMIx under mpirun / srun",
     "run, plan", "the launcher-less bootstrap: this rank, the number of ranks, rank 0's address\n"
     "and port"},
    {"SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_MAX, SLURM_ARRAY_TASK_COUNT",
     "set by Slurm", "plan --shard slurm",
     "the shard of a task of a job array: its id less the array's first, of as many\n"
     "shards as the array has tasks (their ids consecutive)"},
    {"TMPDIR", "/tmp", "sim", "where platforms that are not presets are checked first"},
    {"XDG_CACHE_HOME", "~/.cache", "sim, run, validate, gen --verify, export",
     "root of the verification cache and of the platform cache"},
    {NULL, NULL, NULL, NULL},
};

const char *cs_env_get(const char *name)
{
    for (const cs_env_var_t *v = cs_env_vars; v->name; v++) {
        size_t l = strlen(name);
        /* a row may list several names: "RANK, WORLD_SIZE, ..." */
        for (const char *p = strstr(v->name, name); p; p = strstr(p + 1, name))
            if ((p == v->name || p[-1] == ' ') && (p[l] == '\0' || p[l] == ',')) {
                const char *s = getenv(name);
                return s && *s ? s : NULL;
            }
    }
    CS_ERROR("core", "internal error: environment variable %s is not in cs_env_vars", name);
    return NULL;
}

int cs_env_cache_dir(const char *sub, char *buf, size_t len, int make_dirs)
{
    const char *xdg = cs_env_get("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (xdg && *xdg)
        n = snprintf(buf, len, "%s/collstep/%s", xdg, sub);
    else if (home && *home)
        n = snprintf(buf, len, "%s/.cache/collstep/%s", home, sub);
    else
        return 0;
    if (n <= 0 || (size_t)n >= len)
        return 0;
    if (make_dirs) { /* mkdir -p */
        for (char *p = buf + 1; *p; p++) {
            if (*p != '/')
                continue;
            *p = '\0';
            int bad = mkdir(buf, 0755) != 0 && errno != EEXIST;
            *p = '/';
            if (bad)
                return 0;
        }
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return 0;
    }
    return 1;
}

void cs_env_print(FILE *f)
{
    fprintf(f, "Environment variables collstep reads:\n");
    for (const cs_env_var_t *v = cs_env_vars; v->name; v++) {
        fprintf(f, "\n  %s  (%s; default: %s)\n", v->name, v->where, v->def);
        for (const char *h = v->help; *h;) {
            size_t l = strcspn(h, "\n");
            fprintf(f, "      %.*s\n", (int)l, h);
            h += l + (h[l] == '\n');
        }
    }
}
