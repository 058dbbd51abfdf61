/*
 * cs_plat_units.c - bandwidths and latencies with SimGrid's units
 * ("12.5GBps", "100Gbps", "300ns"), for presets' parameters and platform
 * properties (cs_plat_model.h).
 */
#include <stdlib.h>
#include <string.h>

#include "cs_plat_model.h"

/* ---- units ------------------------------------------------------------- */

typedef struct {
    const char *suffix;
    double mult;
} cs__unit_t;

static int cs__parse_unit(const char *s, const cs__unit_t *u, int nu, double *out)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return -1;
    for (int i = 0; i < nu; i++)
        if (strcmp(end, u[i].suffix) == 0) {
            *out = v * u[i].mult;
            return 0;
        }
    return -1;
}

int cs__parse_bandwidth(const char *s, double *out)
{
    static const cs__unit_t u[] = {
        {"Bps", 1},          {"kBps", 1e3},       {"KBps", 1e3},       {"MBps", 1e6},
        {"GBps", 1e9},       {"TBps", 1e12},      {"KiBps", 1024.0},   {"MiBps", 1048576.0},
        {"GiBps", 1073741824.0}, {"TiBps", 1099511627776.0}, {"bps", 0.125}, {"kbps", 125},
        {"Kbps", 125},       {"Mbps", 1.25e5},    {"Gbps", 1.25e8},    {"Tbps", 1.25e11},
        {"", 1},
    };
    return cs__parse_unit(s, u, (int)(sizeof(u) / sizeof(u[0])), out);
}

int cs__parse_latency(const char *s, double *out)
{
    static const cs__unit_t u[] = {
        {"s", 1},   {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"ps", 1e-12},
        {"m", 60},  {"h", 3600},  {"", 1},
    };
    return cs__parse_unit(s, u, (int)(sizeof(u) / sizeof(u[0])), out);
}
