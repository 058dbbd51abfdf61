/*
 * cs_thread.h - the few threads collstep uses outside the live engines:
 * splitting a large job (generating a schedule, compiling it for the
 * simulator) over the CPUs, each thread on its own part, joined before
 * anything reads the result.
 */
#ifndef CS_THREAD_H
#define CS_THREAD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CS_THREAD_MAX 8

/* Threads for `work` units: one per `per_thread` units, at most one per
 * online CPU and CS_THREAD_MAX.  The environment variable `env` (e.g.
 * "CS_SIM_THREADS"), when set to 1..CS_THREAD_MAX, decides instead whatever
 * the size (tests use it to split small jobs); another value is ignored
 * with a warning under the log tag `tag`. */
int cs_thread_count(const char *env, const char *tag, uint64_t work, uint64_t per_thread);

/* Run fn on n arguments, base + i * stride for i in [0, n): 1..n-1 on new
 * threads, 0 on the calling thread, then join.  An argument whose thread
 * cannot be created runs on the calling thread afterwards, so every
 * argument is run exactly once whatever happens. */
void cs_thread_run(void *(*fn)(void *), void *base, size_t stride, int n);

#ifdef __cplusplus
}
#endif

#endif /* CS_THREAD_H */
