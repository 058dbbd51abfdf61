/*
 * cs_sim_mem.c - what a simulation will hold in memory, checked before it
 * starts (cs_sim_int.h: cs__mem_*).
 *
 * The simulator's memory is, from the largest down:
 *   - the compiled schedules: per step 32 bytes (cs__op_t) and its share of
 *     the successor lists, queues and per-step work arrays (the FIFO slice,
 *     and with an observer its post time and payload slot): measured after
 *     compiling, estimated at CS__MEM_STEP bytes per step before;
 *   - SimGrid's platform (hosts, links, routing tables): measured as the
 *     growth of the resident size while it loads;
 *   - per rank: the actor engine's context (its stack pages and the
 *     interpreter's state, CS__MEM_ACTOR), the dag engine's state
 *     (CS__MEM_DAG_RANK); with restarts, one time per rank and peer;
 *   - per transfer in flight: SimGrid's comm, its network action and its
 *     solver variable (CS__MEM_XFER; the actors' put and get are two
 *     comms), about two per rank at once in the generated algorithms
 *     (CS__MEM_FLIGHT), a switch operation's members all at once.
 * The constants were measured on Summit-like platforms (1,536 to 27,648
 * ranks: resident size against ranks and steps) and err on the high side.
 * A simulation whose estimate exceeds what the machine has available
 * (MemAvailable, a cgroup's memory.max, RLIMIT_AS; CS_SIM_MAX_MEM in its
 * place) is refused with the estimate and its parts.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cs_env.h"
#include "cs_log.h"
#include "cs_mem.h"
#include "cs_sim_int.h"

uint64_t cs__mem_rss(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, res = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%llu %llu", &size, &res) != 2)
        res = 0;
    fclose(f);
    long psz = sysconf(_SC_PAGESIZE);
    return (uint64_t)res * (uint64_t)(psz > 0 ? psz : 4096);
}

uint64_t cs__mem_peak(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (uint64_t)ru.ru_maxrss * 1024u;
}

uint64_t cs__mem_available(const char **why)
{
    uint64_t max = cs_mem_parse(cs_env_get("CS_SIM_MAX_MEM"));
    if (max > 0) {
        *why = "CS_SIM_MAX_MEM";
        return max;
    }
    return cs_mem_available(why);
}

void cs__mem_estimate(cs__mem_t *m, uint64_t steps, int ranks, int nhosts, int engine_dag,
                      int restarts, int observer, uint64_t switch_members)
{
    m->steps = steps * (CS__MEM_STEP + (observer ? 16u : 0u));
    m->ranks = (uint64_t)ranks * (engine_dag ? CS__MEM_DAG_RANK : CS__MEM_ACTOR);
    if (restarts)
        m->ranks += (uint64_t)ranks * (uint64_t)nhosts * sizeof(double);
    m->flight = ((uint64_t)ranks * CS__MEM_FLIGHT + switch_members) * CS__MEM_XFER *
                (engine_dag ? 1u : 2u);
}

uint64_t cs__mem_total(const cs__mem_t *m)
{
    return m->steps + m->ranks + m->flight + m->platform;
}

int cs__mem_check(const cs__mem_t *m, const char *when, cs_err_t *err)
{
    const char *why = NULL;
    uint64_t need = cs__mem_total(m), have = cs__mem_available(&why);
    char a[32], b[32], c[32], d[32], e[32], f[32], g[32];
    cs_mem_human(need, a, 32);
    cs_mem_human(m->steps, b, 32);
    cs_mem_human(m->platform, c, 32);
    cs_mem_human(m->ranks, d, 32);
    cs_mem_human(m->flight, e, 32);
    cs_mem_human(have, f, 32);
    CS_INFO("sim", "memory %s: about %s to come (schedules %s, platform %s, ranks %s, "
                   "transfers in flight %s), %s available (%s), resident now %s",
            when, a, b, c, d, e, have == UINT64_MAX ? "unlimited" : f, why,
            cs_mem_human(cs__mem_rss(), g, 32));
    if (need <= have)
        return CS_OK;
    return cs_err_set(err, CS_ERR_NOMEM,
                      "sim: this simulation needs about %s more (compiled schedules %s, "
                      "SimGrid's platform %s, rank state %s, transfers in flight %s) and "
                      "%s %s free (%s): simulate fewer ranks or instances at once, or on "
                      "a machine with more memory",
                      a, b, c, d, e, f, have < (1ull << 20) ? "is" : "are", why);
}
