/*
 * cs_thread.c - see cs_thread.h.
 */
#include "cs_env.h"
#include "cs_thread.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "cs_log.h"

int cs_thread_count(const char *env, const char *tag, uint64_t work, uint64_t per_thread)
{
    const char *v = cs_env_get(env);
    if (v && *v) {
        char *end;
        long n = strtol(v, &end, 10);
        if (*end == '\0' && n >= 1 && n <= CS_THREAD_MAX)
            return (int)n;
        CS_WARN(tag, "%s=%s ignored: expected a number from 1 to %d", env, v, CS_THREAD_MAX);
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t want = work / (per_thread ? per_thread : 1) + 1;
    if (ncpu < 1)
        ncpu = 1;
    if (want > (uint64_t)ncpu)
        want = (uint64_t)ncpu;
    return want > CS_THREAD_MAX ? CS_THREAD_MAX : (int)want;
}

void cs_thread_run(void *(*fn)(void *), void *base, size_t stride, int n)
{
    pthread_t th[CS_THREAD_MAX];
    int started[CS_THREAD_MAX] = {0};
    char *b = base;
    if (n < 1)
        return;
    /* beyond CS_THREAD_MAX, arguments run here like those of failed threads */
    for (int t = 1; t < n && t < CS_THREAD_MAX; t++)
        started[t] = pthread_create(&th[t], NULL, fn, b + (size_t)t * stride) == 0;
    fn(b);
    for (int t = 1; t < n; t++) {
        if (t < CS_THREAD_MAX && started[t])
            pthread_join(th[t], NULL);
        else
            fn(b + (size_t)t * stride);
    }
}
