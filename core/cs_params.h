/*
 * cs_params.h - "key=value" parameter lists for algorithm generators.
 *
 * Parameters arrive from the command line (--param KEY=VALUE, repeatable, or
 * comma separated) and from the `algorithm` line of a schedule file.  Values
 * are kept as strings; typed getters validate and report what was expected.
 * Getters mark keys as used, so the caller can reject unknown keys after the
 * generator ran (cs_params_check_unused).
 */
#ifndef CS_PARAMS_H
#define CS_PARAMS_H

#include <stdint.h>

#include "cs_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CS_PARAMS_MAX 32

typedef struct cs_params {
    int n;
    struct {
        char key[32];
        char value[96];
        int used;
    } kv[CS_PARAMS_MAX];
} cs_params_t;

void cs_params_init(cs_params_t *p);
/* Add "key=value" or "k1=v1,k2=v2".  A later value of a key replaces an
 * earlier one.  Returns CS_OK or CS_ERR_PARSE / CS_ERR_RANGE with err set. */
int cs_params_parse(cs_params_t *p, const char *text, cs_err_t *err);
int cs_params_set(cs_params_t *p, const char *key, const char *value, cs_err_t *err);
/* NULL when absent. */
const char *cs_params_get(cs_params_t *p, const char *key);
/* Low-level getters for lists without a descriptor table (platform
 * options); generators use the descriptor getters below.
 * Integer getter: *out = default when absent; CS_ERR_PARSE with err filled
 * ("parameter chunks: expected an integer in [1, 1024], found 'x'") when the
 * value is not an integer in [min, max]. */
int cs_params_get_int(cs_params_t *p, const char *key, long def, long min, long max, long *out,
                      cs_err_t *err);
/* "6x256" or "3x2x256": a list of positive integers separated by 'x'.
 * Returns the number of factors (<= max) or a negative status with err. */
int cs_params_get_dims(cs_params_t *p, const char *key, int *dims, int max, cs_err_t *err);
/* Parameter descriptors
 * ---------------------
 * A generator declares its parameters once, in a table terminated by
 * {NULL}: key, default, one help line, kind and bounds.  `collstep algos`
 * prints the table; the generator's build and cost read every parameter
 * through the descriptor getters below, which apply the default and the
 * bounds, so neither is written anywhere else.
 *
 *   CS_PARAM_INT   an integer in [min, max]; `def` is an integer.
 *   CS_PARAM_DIMS  "6x256": min to max factors, each a positive integer;
 *                  `def` names what the generator derives when the key is
 *                  absent ("P", "auto"): the getter then returns 0 factors.
 *   CS_PARAM_LIST  names separated by '+' (or ':' '/'), min to max of them;
 *                  `def` is returned when absent; the generator checks the
 *                  names themselves. */
typedef enum { CS_PARAM_INT = 0, CS_PARAM_DIMS, CS_PARAM_LIST } cs_param_kind_t;

typedef struct cs_param_desc {
    const char *key;
    const char *def;  /* default shown to users ("1", "auto", ...) */
    const char *help; /* one line */
    cs_param_kind_t kind;
    long min, max;    /* INT: value range; DIMS, LIST: number of entries */
} cs_param_desc_t;

/* Shorthands for table rows. */
#define CS_PARAM_INT_ROW(key, def, min, max, help) {key, def, help, CS_PARAM_INT, min, max}
#define CS_PARAM_DIMS_ROW(key, def, min, max, help) {key, def, help, CS_PARAM_DIMS, min, max}
#define CS_PARAM_LIST_ROW(key, def, min, max, help) {key, def, help, CS_PARAM_LIST, min, max}
#define CS_PARAM_END {NULL, NULL, NULL, CS_PARAM_INT, 0, 0}

/* The row of `key` in a table, or NULL. */
const cs_param_desc_t *cs_param_desc_find(const cs_param_desc_t *table, const char *key);
/* The bounds for humans: "1..65536", "1 to 8 factors (AxB..)", "1 to 8
 * names (a+b..)". */
void cs_param_desc_bounds(const cs_param_desc_t *d, char *buf, int len);

/* The value of INT parameter `key` of `table`: the default when absent.
 * Errors (err may be NULL): CS_ERR_PARSE "parameter nchunks=0 out of range:
 * 1..65536" or "parameter nchunks=x: expected an integer in 1..65536";
 * CS_ERR_INTERNAL when the table has no INT row `key` (a generator bug).
 * On any error *out holds the default (when the row exists), so a cost
 * function can go on with it. */
int cs_params_int(cs_params_t *p, const cs_param_desc_t *table, const char *key, long *out,
                  cs_err_t *err);
/* DIMS parameter: the number of factors written to dims (0 when absent),
 * or a negative status ("parameter dims=4x0x2: expected 1 to 8 factors
 * (AxB..), positive integers like 6x256"); cap must be >= the row's max. */
int cs_params_dims(cs_params_t *p, const cs_param_desc_t *table, const char *key, int *dims,
                   int cap, cs_err_t *err);
/* LIST parameter: *out = the value (the default when absent), checked for
 * min..max non-empty names; CS_OK or a negative status. */
int cs_params_list(cs_params_t *p, const cs_param_desc_t *table, const char *key,
                   const char **out, cs_err_t *err);

/* Fails (CS_ERR_INVAL) naming the first key no getter asked for. */
int cs_params_check_unused(const cs_params_t *p, const char *algo, cs_err_t *err);
/* Canonical text "k1=v1 k2=v2" in insertion order. */
void cs_params_format(const cs_params_t *p, char *buf, int len);

#ifdef __cplusplus
}
#endif

#endif /* CS_PARAMS_H */
