/*
 * cs_results_int.h - what cs_results.c and cs_results_nccl.c share (not
 * installed).
 */
#ifndef CS_RESULTS_INT_H
#define CS_RESULTS_INT_H

#include <stdio.h>

#include "cs_status.h"

/* Write what print(f, ctx) prints to `path` whole or not at all, as a
 * results file (cs_results_out_kind; flags: CS_RESULTS_FORCE).  CS_OK,
 * CS_ERR_EXISTS or CS_ERR_IO with err. */
int cs__results_save_with(const char *path, unsigned flags,
                          int (*print)(FILE *f, const void *ctx), const void *ctx, cs_err_t *err);

#endif /* CS_RESULTS_INT_H */
