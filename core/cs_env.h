/*
 * cs_env.h - the one table of environment variables collstep reads.
 *
 * Every variable any library or the command line reads is listed here with
 * its default and a line of help; `collstep --help-env` prints the table.
 * cs_env_get() is how code reads one: asking for a name that is not in the
 * table is a programming error caught by the tests (tests/core/test_env.c
 * also checks that no source file calls getenv on a CS_ name of its own).
 */
#ifndef CS_ENV_H
#define CS_ENV_H

#include <stddef.h>
#include <stdio.h>

typedef struct cs_env_var {
    const char *name;
    const char *def;   /* what happens when it is unset */
    const char *where; /* who reads it: "sim", "run --transport shm", ... */
    const char *help;  /* one or two lines */
} cs_env_var_t;

/* The table, terminated by {NULL}. */
extern const cs_env_var_t cs_env_vars[];

/* getenv(name) for a name of the table; NULL when unset or empty.  A name
 * missing from the table returns NULL and logs an internal error once. */
const char *cs_env_get(const char *name);

/* collstep's cache folder for `sub` ("verified", "platforms"):
 * $XDG_CACHE_HOME/collstep/SUB, else ~/.cache/collstep/SUB, into buf; with
 * make_dirs, created (mkdir -p).  1, or 0 when there is no such folder
 * (neither variable set) or it cannot be made: callers then go without
 * their cache. */
int cs_env_cache_dir(const char *sub, char *buf, size_t len, int make_dirs);

/* The table as text (collstep --help-env). */
void cs_env_print(FILE *f);

#endif /* CS_ENV_H */
