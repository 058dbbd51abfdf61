/*
 * cs_time.h - the monotonic clock every layer of collstep reads: wall time
 * of a plan or a simulation, progress lines, deadlines and liveness checks
 * of the transports, the bootstrap's waits, the GPU engine's timeout.  Not
 * a public header (cs_engine.h's cs_engine_now_ns is the same clock for
 * programs using the executor).
 *
 * CLOCK_MONOTONIC: never steps with the wall clock; its origin is
 * unspecified (boot on Linux), so only differences mean something, and
 * only within one host (exec/cs_clock.c aligns ranks for traces).
 */
#ifndef CS_TIME_H
#define CS_TIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t cs_now_ns(void);

/* The same in seconds. */
static inline double cs_now_s(void)
{
    return (double)cs_now_ns() * 1e-9;
}

#ifdef __cplusplus
}
#endif

#endif /* CS_TIME_H */
