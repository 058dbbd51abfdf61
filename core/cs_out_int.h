/*
 * cs_out_int.h - what cs_out.c and cs_out_reap.c share (not installed).
 *
 * Removal never follows symbolic links; see cs_out.h for the names
 * PATH.tmp.<pid> and PATH.old.<pid> and the rule that nothing collstep did
 * not write is deleted.
 */
#ifndef CS_OUT_INT_H
#define CS_OUT_INT_H

#include <sys/types.h>

/* Remove the tree at `path` (a link at path itself is unlinked).  CS_OK or
 * CS_ERR_IO (errno set). */
int cs__out_rmtree(const char *path);
/* 1: directory `path` (not followed) holds an entry named marker, or any
 * collstep marker when marker is NULL; 0: it does not; -1: cannot tell.
 * *nentries: entries other than . and .. */
int cs__out_dir_scan(const char *path, const char *marker, int *nentries);
/* rename without replacing an existing target (plain rename after a check
 * where the file system lacks RENAME_NOREPLACE); 0 or -1 with errno. */
int cs__out_rename_noreplace(const char *from, const char *to);

/* Remove the leftovers next to `path` of collstep processes that no longer
 * run (cs_out_reap in cs_out.h); each action is said through the notice
 * hook.  Returns the number of leftovers dealt with. */
int cs__out_reap(const char *path, int is_dir);
/* Say `msg` through the hook of cs_out_set_notice. */
void cs__out_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* CS_OUT_INT_H */
