/*
 * cs_log.h - leveled, per-subsystem logging.
 *
 * Controlled by the environment, read once: CS_LOG=error|warn|info|debug|trace
 * (default warn) and CS_LOG_SUBSYS=core,sim,exec,... (default: all).
 * A backend may install a time source (the simulator installs simulated
 * time) so every line carries the clock that matters.
 * Library code logs through these macros and never prints directly.
 */
#ifndef CS_LOG_H
#define CS_LOG_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { CS_LOG_ERROR = 0, CS_LOG_WARN, CS_LOG_INFO, CS_LOG_DEBUG, CS_LOG_TRACE } cs_log_level_t;

/* Returns non-zero when messages of `lvl` for `subsys` are enabled. */
int cs_log_enabled(cs_log_level_t lvl, const char *subsys);
void cs_log_emit(cs_log_level_t lvl, const char *subsys, const char *file, int line,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Install a clock printed in the prefix (NULL: none).  Returns seconds. */
void cs_log_set_clock(double (*clock_fn)(void), const char *clock_name);

#define CS_LOG(lvl, subsys, ...)                                          \
    do {                                                                  \
        if (cs_log_enabled((lvl), (subsys)))                              \
            cs_log_emit((lvl), (subsys), __FILE__, __LINE__, __VA_ARGS__); \
    } while (0)
#define CS_ERROR(subsys, ...) CS_LOG(CS_LOG_ERROR, subsys, __VA_ARGS__)
#define CS_WARN(subsys, ...) CS_LOG(CS_LOG_WARN, subsys, __VA_ARGS__)
#define CS_INFO(subsys, ...) CS_LOG(CS_LOG_INFO, subsys, __VA_ARGS__)
#define CS_DEBUG(subsys, ...) CS_LOG(CS_LOG_DEBUG, subsys, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif /* CS_LOG_H */
