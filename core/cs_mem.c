/*
 * cs_mem.c - see cs_mem.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cs_mem.h"

/* A file's first unsigned number, or 0. */
static uint64_t file_u64(const char *path)
{
    FILE *f = fopen(path, "r");
    unsigned long long v = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%llu", &v) != 1)
        v = 0;
    fclose(f);
    return v;
}

uint64_t cs_mem_available(const char **why)
{
    uint64_t avail = UINT64_MAX;
    const char *w = "available memory";
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    while (f && fgets(line, sizeof(line), f)) {
        unsigned long long kb;
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
            avail = (uint64_t)kb * 1024u;
            break;
        }
    }
    if (f)
        fclose(f);
    /* a cgroup v2 limit (containers, Slurm jobs) */
    uint64_t max = file_u64("/sys/fs/cgroup/memory.max"),
             cur = file_u64("/sys/fs/cgroup/memory.current");
    if (max > 0 && max > cur && max - cur < avail) {
        avail = max - cur;
        w = "the cgroup's memory.max";
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        unsigned long long pages = 0;
        FILE *s = fopen("/proc/self/statm", "r");
        if (s && fscanf(s, "%llu", &pages) != 1)
            pages = 0;
        if (s)
            fclose(s);
        uint64_t vm = (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
        if ((uint64_t)rl.rlim_cur > vm && (uint64_t)rl.rlim_cur - vm < avail) {
            avail = (uint64_t)rl.rlim_cur - vm;
            w = "the address-space limit (ulimit -v)";
        }
    }
    if (why)
        *why = w;
    return avail;
}

uint64_t cs_mem_parse(const char *s)
{
    if (!s || !*s)
        return 0;
    char *end = NULL;
    double v = strtod(s, &end), mul = 1;
    if (end && (*end == 'G' || *end == 'g'))
        mul = 1073741824.0;
    else if (end && (*end == 'M' || *end == 'm'))
        mul = 1048576.0;
    else if (end && (*end == 'K' || *end == 'k'))
        mul = 1024.0;
    return v > 0 ? (uint64_t)(v * mul) : 0;
}

const char *cs_mem_human(uint64_t b, char *buf, unsigned len)
{
    if (b >= (1ull << 30))
        snprintf(buf, len, "%.2f GiB", b / 1073741824.0);
    else if (b >= (1ull << 20))
        snprintf(buf, len, "%.0f MiB", b / 1048576.0);
    else
        snprintf(buf, len, "%.0f KiB", b / 1024.0);
    return buf;
}
