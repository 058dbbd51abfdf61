/*
 * cs_sim_probe.c - load a user's platform XML in a child process first.
 *
 * SimGrid aborts the whole process on a platform it cannot load (a route
 * naming an unknown host, a link_ctn of an undeclared link, a bad unit...),
 * and collstep's own XML scanner (platforms/cs_plat_xml.c) cannot know every
 * rule of SimGrid's.  So a platform that did not come from a preset is
 * loaded once in a forked child, with SimGrid's messages captured: if the
 * child dies, the user gets SimGrid's own words as an error instead of a
 * crash.  The child runs in a scratch directory so the backtrace files
 * SimGrid writes on abort do not land in the user's working directory.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <simgrid/engine.h>

#include "cs_sim_int.h"

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *e;
        char path[4096];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* SimGrid's own words: the first CRITICAL/ERROR log line that is not about
 * the backtrace, without its prefix ("[0.000000] file:line: [cat/CRITICAL]")
 * and without "Uncaught exception std::...: ". */
static void summarize(const char *out, char *msg, size_t cap)
{
    static const char *const marks[] = {"CRITICAL] ", "ERROR] "};
    msg[0] = '\0';
    for (const char *p = out; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        for (int m = 0; m < 2; m++) {
            const char *t = strstr(p, marks[m]);
            if (t == NULL || t >= p + len)
                continue;
            t += strlen(marks[m]);
            if (strncmp(t, "Current backtrace", 17) == 0)
                continue;
            const char *u = strstr(t, "Uncaught exception ");
            if (u == t) {
                const char *colon = strstr(t, ": ");
                if (colon && colon < p + len)
                    t = colon + 2;
            }
            snprintf(msg, cap, "%.*s", (int)(p + len - t), t);
            return;
        }
        p = e ? e + 1 : p + len;
    }
}

int cs__sim_probe_platform(const char *path, const char *name, cs_err_t *err)
{
    char dir[] = "/tmp/cs_probe_XXXXXX";
    int pfd[2];
    if (mkdtemp(dir) == NULL || pipe(pfd) != 0)
        return cs_err_set(err, CS_ERR_IO, "sim: cannot prepare the platform check: %s",
                          strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        remove_dir(dir);
        return cs_err_set(err, CS_ERR_IO, "sim: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        close(pfd[0]);
        close(pfd[1]);
        if (chdir(dir) != 0)
            _exit(3);
        simgrid_load_platform(path);
        _exit(0);
    }
    close(pfd[1]);
    char out[16384];
    size_t len = 0;
    for (;;) {
        ssize_t r = read(pfd[0], out + len, sizeof(out) - 1 - len);
        if (r > 0 && len + (size_t)r < sizeof(out) - 1)
            len += (size_t)r;
        else if (r > 0)
            len = sizeof(out) - 1; /* keep reading to drain the pipe */
        else if (r == 0 || errno != EINTR)
            break;
    }
    out[len] = '\0';
    close(pfd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    remove_dir(dir);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return CS_OK;
    char raw[1024], msg[1200];
    summarize(out, raw, sizeof(raw));
    /* SimGrid names the temporary copy: name the user's file instead (the
     * text is the same, so its line numbers hold) */
    const char *at = strstr(raw, path);
    if (at != NULL)
        snprintf(msg, sizeof(msg), "%.*s%s%s", (int)(at - raw), raw, name, at + strlen(path));
    else
        snprintf(msg, sizeof(msg), "%s", raw);
    return cs_err_set(err, CS_ERR_PARSE, "platform %s: SimGrid cannot load it%s%s", name,
                      msg[0] ? ": " : "", msg[0] ? msg : " (it aborted without a message)");
}
