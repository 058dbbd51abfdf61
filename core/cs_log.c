/* cs_log.c - environment-controlled leveled logging to stderr. */
#include "cs_env.h"
#include "cs_log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static int log_level = CS_LOG_WARN;
static char log_subsys[256]; /* empty: all */
static double (*log_clock)(void);
static const char *log_clock_name = "";

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};

static void log_init(void)
{
    const char *lv = cs_env_get("CS_LOG");
    if (lv != NULL) {
        for (int i = 0; i <= CS_LOG_TRACE; i++)
            if (strcasecmp(lv, level_names[i]) == 0)
                log_level = i;
    }
    const char *ss = cs_env_get("CS_LOG_SUBSYS");
    if (ss != NULL)
        snprintf(log_subsys, sizeof(log_subsys), ",%s,", ss);
}

int cs_log_enabled(cs_log_level_t lvl, const char *subsys)
{
    pthread_once(&log_once, log_init);
    if ((int)lvl > log_level)
        return 0;
    if (log_subsys[0] == '\0' || subsys == NULL)
        return 1;
    char key[64];
    snprintf(key, sizeof(key), ",%s,", subsys);
    return strstr(log_subsys, key) != NULL;
}

void cs_log_set_clock(double (*clock_fn)(void), const char *clock_name)
{
    log_clock = clock_fn;
    log_clock_name = clock_name ? clock_name : "";
}

void cs_log_emit(cs_log_level_t lvl, const char *subsys, const char *file, int line,
                 const char *fmt, ...)
{
    char buf[1024];
    int n;
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    if (log_clock != NULL)
        n = snprintf(buf, sizeof(buf), "[%s %s=%.9f] %s %s:%d: ", level_names[lvl],
                     log_clock_name, log_clock(), subsys, base, line);
    else
        n = snprintf(buf, sizeof(buf), "[%s] %s %s:%d: ", level_names[lvl], subsys, base, line);
    if (n < 0 || (size_t)n >= sizeof(buf))
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", buf);
}
