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
/* Integer getter: *out = default when absent; CS_ERR_PARSE with err filled
 * ("parameter chunks: expected an integer in [1, 1024], found 'x'") when the
 * value is not an integer in [min, max]. */
int cs_params_get_int(cs_params_t *p, const char *key, long def, long min, long max, long *out,
                      cs_err_t *err);
/* "6x256" or "3x2x256": a list of positive integers separated by 'x'.
 * Returns the number of factors (<= max) or a negative status with err. */
int cs_params_get_dims(cs_params_t *p, const char *key, int *dims, int max, cs_err_t *err);
/* Fails (CS_ERR_INVAL) naming the first key no getter asked for. */
int cs_params_check_unused(const cs_params_t *p, const char *algo, cs_err_t *err);
/* Canonical text "k1=v1 k2=v2" in insertion order. */
void cs_params_format(const cs_params_t *p, char *buf, int len);

#endif /* CS_PARAMS_H */
