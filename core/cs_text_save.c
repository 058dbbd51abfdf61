/*
 * cs_text_save.c - schedule files saved through core/cs_out.h: PATH.tmp.<pid>,
 * fsync, rename; an existing file is replaced only when it is a schedule
 * (unless forced), a directory never.  Apart from cs_text.c so that the
 * parser alone (tests/fuzz) links without cs_out and the log.
 */
#include <errno.h>
#include <string.h>

#include "cs_out.h"
#include "cs_text.h"

/* A schedule file collstep wrote: after blank and comment lines (a
 * hand-edited file may start with a comment), the header "collstep-schedule". */
static int is_schedule(const char *head, size_t n)
{
    static const char hdr[] = "collstep-schedule";
    size_t i = 0;
    while (i < n) {
        while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r'))
            i++;
        if (i < n && head[i] == '#')
            while (i < n && head[i] != '\n')
                i++;
        if (i < n && head[i] == '\n') {
            i++;
            continue;
        }
        break;
    }
    return n - i >= sizeof(hdr) - 1 && memcmp(head + i, hdr, sizeof(hdr) - 1) == 0;
}

const cs_out_kind_t cs_sched_out_kind = {"schedule file", is_schedule, NULL, NULL, NULL};

int cs_sched_save_flags(const cs_sched_t *s, const char *path, int flags, cs_err_t *err)
{
    cs_out_t *o = NULL;
    if (s == NULL || path == NULL)
        return cs_err_set(err, CS_ERR_INVAL, "cs_sched_save: no schedule or no path");
    int rc = cs_out_begin_file(path, flags, &cs_sched_out_kind, &o, err);
    if (rc != CS_OK)
        return rc;
    rc = cs_sched_write(s, cs_out_stream(o));
    if (rc != CS_OK) {
        const char *name = strcmp(cs_out_tmp_path(o), "-") == 0 ? "<stdout>" : cs_out_tmp_path(o);
        rc = cs_err_set(err, rc, "%s: cannot write: %s", name,
                        rc == CS_ERR_IO ? strerror(errno) : cs_status_str(rc));
        cs_out_abort(o);
        return rc;
    }
    return cs_out_commit(o, err);
}

int cs_sched_save(const cs_sched_t *s, const char *path, cs_err_t *err)
{
    return cs_sched_save_flags(s, path, CS_OUT_STDOUT | CS_OUT_FSYNC, err);
}
