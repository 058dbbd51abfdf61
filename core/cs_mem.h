/*
 * cs_mem.h - what this process may still allocate, for the checks that
 * refuse work that would not fit (generators, the simulator) instead of
 * letting the kernel kill the process half way.
 */
#ifndef CS_MEM_H
#define CS_MEM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The smallest of: MemAvailable (/proc/meminfo), a cgroup v2 limit less its
 * use (memory.max - memory.current), the address-space limit (ulimit -v)
 * less the process's size; UINT64_MAX when none is known.  *why (may be
 * NULL) names the one that decided, a static string. */
uint64_t cs_mem_available(const char **why);

/* A size as the CS_*_MAX_MEM variables take it: "8G", "512M", "64K" or
 * bytes; 0 when it is not a positive size. */
uint64_t cs_mem_parse(const char *s);

/* "1.25 GiB", "312 MiB", "40 KiB" into buf. */
const char *cs_mem_human(uint64_t bytes, char *buf, unsigned len);

#ifdef __cplusplus
}
#endif

#endif /* CS_MEM_H */
