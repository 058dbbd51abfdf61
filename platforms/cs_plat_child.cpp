/*
 * cs_plat_child.cpp - a platform loaded by SimGrid in a child process, and
 * the one error path for "SimGrid cannot load this file" (cs_plat_sg.hpp:
 * run_child).
 *
 * Why a child: SimGrid can be initialised once per process (the simulation
 * needs that once), and some of its refusals are not exceptions but
 * xbt_assert / xbt_die, which print a CRITICAL line and a backtrace on
 * stderr and abort.  The child (a watched one, core/cs_child.h) sends its
 * stdout and stderr (SimGrid's log) to a scratch directory, loads the file, and writes one line per fact on a
 * pipe:
 *     K                 the file loaded (facts follow)
 *     L line \t words   SimGrid refused it (an exception): where, what it said
 *     E code \t message another failure (collstep's own checks)
 * then whatever the body writes.  The parent turns an L line, or the first
 * CRITICAL line of the log of a child that died before K, into one message
 * (cs__pfile_explain: file, line, SimGrid's words, what is missing); the
 * log is never printed.  Lines SimGrid names in a rewritten text (the ideal
 * model's, cs__pfile_text) are mapped back to the file's.
 */
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cs_child.h"
#include "cs_plat_sg.hpp"

namespace cs_plat {

void put(int fd, const std::string &s)
{
    const char *p = s.data();
    size_t left = s.size();
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        left -= (size_t)w;
    }
}

std::string clean(std::string s)
{
    for (char &c : s)
        if (c == '\t' || c == '\n' || c == '\r')
            c = ' ';
    return s;
}

void put_error(int fd, int code, const std::string &msg)
{
    put(fd, "E " + std::to_string(code) + "\t" + clean(msg) + "\n");
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d != nullptr) {
        struct dirent *e;
        while ((e = readdir(d)) != nullptr) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            std::string p = std::string(dir) + "/" + e->d_name;
            unlink(p.c_str());
        }
        closedir(d);
    }
    rmdir(dir);
}

/* SimGrid's own words from a dead child's log: the first CRITICAL line that
 * is not about the backtrace, without its prefix. */
static std::string summarize(const std::string &log)
{
    size_t pos = 0;
    while (pos < log.size()) {
        size_t e = log.find('\n', pos);
        std::string l = log.substr(pos, e == std::string::npos ? std::string::npos : e - pos);
        pos = e == std::string::npos ? log.size() : e + 1;
        size_t t = l.find("CRITICAL] ");
        if (t == std::string::npos)
            continue;
        std::string m = l.substr(t + 10);
        if (m.compare(0, 17, "Current backtrace") == 0)
            continue;
        if (m.compare(0, 19, "Uncaught exception ") == 0 && m.find(": ") != std::string::npos)
            m = m.substr(m.find(": ") + 2);
        return m;
    }
    return "";
}

static void child(int fd, const child_spec &c)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 128 * 1024); /* see sim/cs_sim.c */
#endif
    int argc = 5;
    char a0[] = "collstep", a1[] = "--cfg=network/model:CM02", a2[] = "--cfg=network/crosstraffic:0",
         a3[] = "--cfg=network/TCP-gamma:0", a4[] = "--log=root.thres:critical";
    char *argv[] = {a0, a1, a2, a3, a4, nullptr};
    try {
        /* never destroyed: the child exits; a process that initialised
         * SimGrid already (a simulator checking its text) keeps its engine */
        if (!sg4::Engine::has_instance())
            new sg4::Engine(&argc, argv);
        int line = 0;
        std::string words;
        if (load_engine(c.path, c.shown, line, words) != CS_OK) {
            put(fd, "L " + std::to_string(line) + "\t" + clean(words) + "\n");
            return;
        }
        put(fd, "K\n");
        if (c.body)
            c.body(fd);
    } catch (const std::exception &x) {
        put_error(fd, CS_ERR_PARSE,
                  std::string(c.shown) + ": SimGrid: " + user_words(x.what(), c.path, c.shown));
    }
}

/* One message for SimGrid's refusal. */
static int refused(const child_spec &c, int line, const std::string &words, cs_err_t *err)
{
    if (c.text && line > 0)
        line = cs__pfile_map_line(c.f, c.text, line);
    char msg[CS_ERR_MSG_MAX];
    cs__pfile_explain(c.f, c.shown, line, words.c_str(), c.ideal, msg, sizeof(msg));
    return cs_err_set(err, CS_ERR_PARSE, "%s", msg);
}

struct child_ctx {
    const child_spec *c;
    const char *dir, *logpath;
};

/* The child (core/cs_child.h): SimGrid's log to the scratch directory,
 * which is also where it works; the facts on fd. */
static int child_body(void *ctx, int fd, cs_err_t *)
{
    const child_ctx *k = (const child_ctx *)ctx;
    int lfd = open(k->logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (lfd >= 0) {
        dup2(lfd, 1);
        dup2(lfd, 2);
        close(lfd);
    }
    if (chdir(k->dir) != 0)
        return 3;
    try {
        child(fd, *k->c);
    } catch (...) { /* not SimGrid's (those are std::exceptions): said like a crash */
        return 3;
    }
    return CS_OK;
}

int run_child(const child_spec &c, std::string &out, cs_err_t *err)
{
    char dir[] = "/tmp/cs_probe_XXXXXX";
    if (mkdtemp(dir) == nullptr)
        return cs_err_set(err, CS_ERR_IO, "cannot create a scratch directory: %s", strerror(errno));
    std::string logpath = std::string(dir) + "/simgrid.log";
    child_ctx k{&c, dir, logpath.c_str()};
    cs_child_t ch;
    cs_err_t ce;
    cs_err_clear(&ce);
    int st = cs_child_run(&ch, "SimGrid's reading", 0, child_body, &k, &ce);
    out.assign(ch.data ? ch.data : "", ch.len);
    cs_child_free(&ch);
    if (st == CS_ERR_INTERRUPTED || (st == CS_ERR_IO && ch.pid == 0)) {
        remove_dir(dir);
        return cs_err_set(err, st, "%s", ce.msg);
    }
    char buf[65536];
    std::string log;
    if (FILE *lf = fopen(logpath.c_str(), "r")) {
        size_t r;
        while ((r = fread(buf, 1, sizeof(buf), lf)) > 0 && log.size() < (1u << 20))
            log.append(buf, r);
        fclose(lf);
    }
    remove_dir(dir);
    /* the first L or E line decides */
    for (size_t pos = 0; pos < out.size();) {
        size_t e = out.find('\n', pos);
        if (e == std::string::npos)
            break;
        std::string l = out.substr(pos, e - pos);
        pos = e + 1;
        if (l.compare(0, 2, "L ") == 0) {
            size_t tab = l.find('\t');
            std::string words = tab == std::string::npos ? "" : l.substr(tab + 1);
            return refused(c, atoi(l.c_str() + 2), words, err);
        }
        if (l.compare(0, 2, "E ") == 0) {
            int code = atoi(l.c_str() + 2);
            size_t tab = l.find('\t');
            return cs_err_set(err, code < 0 ? code : CS_ERR_PARSE, "%s",
                              tab == std::string::npos ? l.c_str() + 2 : l.c_str() + tab + 1);
        }
    }
    if (st == CS_OK)
        return CS_OK;
    std::string m = user_words(summarize(log), c.path, c.shown);
    char words[128];
    if (m.empty())
        m = WIFSIGNALED(ch.wstatus)
                ? std::string("it ") + cs_child_death(ch.wstatus, words, sizeof(words))
                : "it died without a message";
    bool loaded = out.compare(0, 2, "K\n") == 0;
    if (loaded)
        return cs_err_set(err, CS_ERR_PARSE, "%s: SimGrid died while collstep read its routes: %s",
                          c.shown, m.c_str());
    return refused(c, 0, m, err);
}

} // namespace cs_plat
