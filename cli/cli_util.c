/* cli_util.c - size parsing and usage errors shared by the subcommands. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

int cs_cli_parse_size(const char *s, uint64_t *out)
{
    if (s == NULL || !isdigit((unsigned char)s[0]))
        return -1;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || !(v >= 0))
        return -1;
    double mul = 1;
    static const struct {
        const char *suf;
        double mul;
    } sufs[] = {{"", 1},          {"B", 1},          {"K", 1024.0},     {"KB", 1024.0},
                {"KiB", 1024.0},  {"M", 1048576.0},  {"MB", 1048576.0}, {"MiB", 1048576.0},
                {"G", 1073741824.0}, {"GB", 1073741824.0}, {"GiB", 1073741824.0},
                {"T", 1099511627776.0}, {"TB", 1099511627776.0}, {"TiB", 1099511627776.0}};
    size_t i, n = sizeof(sufs) / sizeof(sufs[0]);
    for (i = 0; i < n; i++)
        if (strcasecmp(end, sufs[i].suf) == 0) {
            mul = sufs[i].mul;
            break;
        }
    if (i == n)
        return -1;
    double bytes = v * mul;
    if (bytes > 9.0e18 || bytes != floor(bytes))
        return -1;
    *out = (uint64_t)bytes;
    return 0;
}

int cs_cli_parse_sweep(const char *s, uint64_t *min, uint64_t *max, double *factor)
{
    char buf[128];
    if (s == NULL || strlen(s) >= sizeof(buf))
        return -1;
    snprintf(buf, sizeof(buf), "%s", s);
    char *f1 = strchr(buf, ':');
    char *f2 = f1 ? strchr(f1 + 1, ':') : NULL;
    if (f1)
        *f1++ = '\0';
    if (f2)
        *f2++ = '\0';
    uint64_t lo, hi;
    double fac = 2.0;
    if (cs_cli_parse_size(buf, &lo) != 0)
        return -1;
    hi = lo;
    if (f1 && cs_cli_parse_size(f1, &hi) != 0)
        return -1;
    if (f2) {
        char *end = NULL;
        fac = strtod(f2, &end);
        if (end == f2 || *end != '\0' || !(fac > 1.0) || fac > 1024)
            return -1;
    }
    if (hi < lo)
        return -1;
    *min = lo;
    *max = hi;
    *factor = fac;
    return 0;
}

int cs_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "collstep %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CS_EXIT_USAGE;
}
