/*
 * cs_out.h - safe output: files and directories written whole or not at
 * all, that never delete or overwrite what collstep did not write.
 *
 * Every writer of collstep (schedules, results, traces) goes through one
 * handle: begin, write into the temporary, commit (rename into place) or
 * abort (remove the temporary).
 *
 * Names (fixed, so that a supervising process can clean up after a child
 * it killed: see cs_out_cleanup_pid)
 * -----
 *   PATH.tmp.<pid>   the temporary file or directory of process <pid>
 *   PATH.old.<pid>   a directory's previous contents during a commit
 * where PATH is the output path without trailing slashes.
 *
 * What is replaced (the rule: nothing collstep did not write is deleted)
 * -----------------
 * Files (cs_out_begin_file), PATH is
 *   absent                   created
 *   a regular file           replaced when kind->recognize accepts its first
 *                            bytes (at most CS_OUT_HEAD) as collstep's own;
 *                            otherwise (an empty file too) refused unless
 *                            CS_OUT_FORCE.  The new file keeps the old mode.
 *   a character device or a FIFO (also through a symbolic link: /dev/null)
 *                            written directly, not atomically (nothing to
 *                            replace); commit only flushes
 *   a directory              refused, even with CS_OUT_FORCE
 *   a symbolic link (to anything else), a socket
 *                            refused, even with CS_OUT_FORCE: the link would
 *                            be replaced, not what it points to
 *   "-"                      standard output when CS_OUT_STDOUT is given
 *                            (otherwise a file named "-")
 * Directories (cs_out_begin_dir), PATH is
 *   absent                   created
 *   a directory holding the marker kind->marker (written into every
 *                            directory collstep creates, first thing; at
 *                            commit it lists the tree's entries)
 *                            replaced, with everything in it, when every
 *                            entry is in that list; otherwise refused, even
 *                            with CS_OUT_FORCE, naming the first entry not
 *                            listed.  A marker without a list (a collstep
 *                            before the lists) counts only when
 *                            kind->legacy accepts the tree
 *   an empty directory       refused; CS_OUT_FORCE replaces it (its mode
 *                            and owner are not kept)
 *   a non-empty directory without the marker
 *                            refused; CS_OUT_FORCE replaces it only when
 *                            kind->legacy accepts it (e.g. a trace written
 *                            by a collstep older than the marker).  Even
 *                            forced, collstep never deletes a directory
 *                            that holds anything it does not write.
 *   a regular file, a symbolic link, anything else
 *                            refused, even with CS_OUT_FORCE
 * The directory PATH goes in must exist and take new entries (the
 * temporary is made there); otherwise the output is refused, naming PATH
 * and why (a missing directory, no permission), before any work.
 * The checks run at begin (so a user learns before a long run) and again
 * at commit (the path may have changed meanwhile); a path created between
 * the check and the rename is not replaced (renameat2 RENAME_NOREPLACE
 * where the file system has it).
 *
 * Leftovers of killed processes
 * -----------------------------
 * begin and cs_out_check first clean up after collstep processes that
 * were killed while they wrote PATH (SIGKILL, their supervisor killed too):
 * every PATH.tmp.<pid> and PATH.old.<pid> whose <pid> no longer runs on
 * this machine (kill(pid, 0) fails with ESRCH, or it is a zombie; a
 * running process's are never touched) is dealt with by
 * cs_out_cleanup_pid's rules (a directory
 * temporary only when empty or marked; PATH restored from PATH.old.<pid>
 * when PATH is absent), and each removal or restore is said through the
 * notice hook (cs_out_set_notice).
 *
 * Commit of a directory that replaces one
 * ---------------------------------------
 *   1. rename PATH -> PATH.old.<pid>    (no replace)
 *   2. rename PATH.tmp.<pid> -> PATH    (no replace); failure: 1 is undone
 *   3. remove PATH.old.<pid>            (a failure is a warning)
 * Killed before 1: PATH is the old tree, PATH.tmp.<pid> the new one.
 * Killed between 1 and 2: PATH is absent, PATH.old.<pid> holds the old
 * tree, PATH.tmp.<pid> the new one.  Killed between 2 and 3: PATH is the
 * new tree, PATH.old.<pid> the old one.  cs_out_cleanup_pid puts each of
 * these back in order: the old tree is restored when the new one is not in
 * place, removed when it is; the temporary is removed.
 *
 * Removal never follows symbolic links (a link inside a tree is removed,
 * never what it points to) and only touches trees collstep made: its own
 * temporaries and the previous contents of a directory it was allowed to
 * replace.
 *
 * Errors: CS_ERR_EXISTS (refused: the path holds what collstep did not
 * write, is of the wrong kind, or cannot be written: its directory is
 * missing or takes no new file), CS_ERR_IO (failed while writing; the
 * message names the path as given, never the temporary, and says what to
 * do), CS_ERR_INVAL, CS_ERR_NOMEM.  Messages do not name the
 * command-line option (the library does not know it): the CLI prefixes it,
 * e.g. "collstep sim: --trace results: " + "results exists and is not a
 * collstep trace directory (no .collstep-trace marker); choose another
 * path or remove it yourself".
 *
 * Threads: handles are used by one thread; the registry is locked.
 */
#ifndef CS_OUT_H
#define CS_OUT_H

#include "cs_status.h"

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CS_OUT_FORCE 0x1  /* replace more (see above); never a user's directory */
#define CS_OUT_FSYNC 0x2  /* files: fsync the temporary before the rename */
#define CS_OUT_STDOUT 0x4 /* files: "-" is standard output */

#define CS_OUT_HEAD 256                   /* bytes given to a file recognizer */
#define CS_OUT_MARKER_PREFIX ".collstep-" /* every directory marker's name starts so */

/* What is written, for checks and messages. */
typedef struct cs_out_kind {
    /* a noun for messages: "schedule file", "trace directory" */
    const char *what;
    /* files: 1 when `head` (the first n <= CS_OUT_HEAD bytes of an existing
     * non-empty regular file) is collstep's own output of this kind; NULL:
     * no file is recognized */
    int (*recognize)(const char *head, size_t n);
    /* directories: the marker's name, starting with CS_OUT_MARKER_PREFIX
     * (".collstep-trace"); it holds "collstep WHAT, written by collstep
     * VERSION\n" */
    const char *marker;
    /* directories, with CS_OUT_FORCE only: 1 when the unmarked, non-empty
     * directory PATH holds only what collstep writes (an older collstep's
     * output); NULL: none is */
    int (*legacy)(const char *path);
    /* directories: 1 when a regular file named `name` that the marker does
     * not list is still one collstep writes there, made again by the user
     * (utilization.png after `gnuplot plot.gp`); NULL: none is */
    int (*remade)(const char *name);
} cs_out_kind_t;

typedef struct cs_out cs_out_t;

/* Check PATH (see the table above) and open PATH.tmp.<pid> for writing.
 * On success *out is a handle to pass to commit or abort; the temporary is
 * in the registry until then. */
int cs_out_begin_file(const char *path, int flags, const cs_out_kind_t *kind, cs_out_t **out,
                      cs_err_t *err);
/* Check PATH and create the directory PATH.tmp.<pid> with the marker. */
int cs_out_begin_dir(const char *path, int flags, const cs_out_kind_t *kind, cs_out_t **out,
                     cs_err_t *err);

/* The check of begin alone (creates nothing; removes the leftovers of dead
 * processes as begin does): CS_OK when begin would accept PATH now, else
 * the error begin would give.  For a command line that validates its
 * outputs before a long run (begin checks again). */
int cs_out_check(const char *path, int flags, const cs_out_kind_t *kind, int is_dir, cs_err_t *err);

/* Files: the stream to write (the temporary, the device, or stdout).
 * Directories: NULL.  Do not fclose it. */
FILE *cs_out_stream(cs_out_t *o);
/* Where the writes go: PATH.tmp.<pid> (file or directory), PATH for a
 * device, "-" for stdout. */
const char *cs_out_tmp_path(const cs_out_t *o);
/* The final path, as given (trailing slashes removed). */
const char *cs_out_path(const cs_out_t *o);

/* Put the output in place: files are flushed (fsync with CS_OUT_FSYNC),
 * closed and renamed over PATH; a directory replaces PATH as described
 * above.  PATH is checked again first.  Always frees `o`; on failure the
 * temporary is removed and PATH is as it was. */
int cs_out_commit(cs_out_t *o, cs_err_t *err);
/* Remove the temporary and free `o` (NULL is fine).  PATH is untouched. */
void cs_out_abort(cs_out_t *o);

/* Remove every temporary this process has open (the registry), for the
 * CLI's interrupt paths.  NOT async-signal-safe (it allocates and walks
 * directories): a signal handler only sets a flag; normal code that sees
 * the flag calls this, then exits.  Handles stay valid: their commit then
 * fails, their abort only frees.  Also run at exit (atexit), for the
 * registering process only (a forked child never removes its parent's
 * temporaries).  Returns the number of temporaries removed. */
int cs_out_cleanup_all(void);

/* Where begin and check say what they did with leftovers of dead processes
 * ("removed results.csv.tmp.4242, the partial output of process 4242, which
 * no longer runs"): fn(msg) for each, from the thread that called them;
 * NULL (the default): a CS_WARN log line.  The command line prints them
 * as "collstep CMD: MSG". */
void cs_out_set_notice(void (*fn)(const char *msg));

/* Every XML file collstep writes (platforms, MSCCL algorithms) carries this
 * comment within its first CS_OUT_HEAD bytes (first, or after the XML
 * declaration), followed by the version and what wrote it:
 * "<!-- written by collstep 0.1.0 (collstep platform export) -->".  An
 * existing XML file is replaced only when cs_out_xml_marked finds it. */
#define CS_OUT_XML_MARK "<!-- written by collstep"
int cs_out_xml_marked(const char *head, size_t n);

/* For a supervising parent: clean up after child `pid` that wrote PATH
 * and was killed.  Files: removes PATH.tmp.<pid> when it is a regular
 * file.  Directories: removes PATH.tmp.<pid> when it is a directory that
 * is empty or holds a collstep marker (a CS_OUT_MARKER_PREFIX name);
 * PATH.old.<pid> is renamed back to PATH when PATH is absent (the child
 * died between the two renames of its commit) and removed when PATH is in
 * place.  Nothing else is touched.  CS_OK, or CS_ERR_IO when something
 * could not be removed or restored. */
int cs_out_cleanup_pid(const char *path, pid_t pid, int is_dir);

/* 1 when process `pid` no longer runs: no such process, or a zombie (it
 * died and waits for its parent, or for init, to collect it).  The rule by
 * which a leftover of a killed collstep process is known (here, and the
 * simulator's temporary platform texts, platforms/cs_plat_simload.c). */
int cs_out_pid_gone(pid_t pid);

#ifdef __cplusplus
}
#endif

#endif /* CS_OUT_H */
