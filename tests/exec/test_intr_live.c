/*
 * test_intr_live.c - a live run interrupted by a signal, at library level
 * (what `collstep run` does, without the CLI): NP forked ranks, env
 * bootstrap on loopback, a transport, the engine running an allreduce ring
 * again and again with a bootstrap barrier every MODE-th run; the parent
 * sends SIG to rank VICTIM once every rank has run a few times.
 *
 *   test_intr_live TRANSPORT SIG VICTIM BYTES EVERY [BOOT]
 *     TRANSPORT  shm, tcp, ofi:PROVIDER (ofi:tcp+ofi_rxm for tcp;ofi_rxm, ofi:shm)
 *     SIG        INT, TERM or HUP; or NOMEM: no signal, rank VICTIM asks
 *                cs_engine_create for more memory than there is, and the
 *                others (in their warm-up) must fail at once naming it
 *                ("rank V left the job") instead of waiting for a timeout
 *     EVERY      a barrier after every EVERY-th run (1: most of the time in
 *                the bootstrap, large: in the engine)
 *     BOOT       env (default: forked ranks) or pmix: the ranks are started
 *                by `mpirun -np 3` (this program again, --rank), sharing
 *                their records through a file mapping; skipped (77)
 *                without mpirun.  mpirun ends the job with SIGTERM once
 *                the victim has exited: a rank interrupted so after the
 *                victim's exit passes too (the launcher's doing)
 *
 * Checked: the victim fails with CS_ERR_INTERRUPTED naming its signal and
 * exits 128 + SIG; every other rank fails with CS_ERR_PEER and a message
 * "rank VICTIM was interrupted (SIGxxx)", and exits 3; every rank fails
 * within LIMIT_MS of the signal (no timeout: the transports' and the
 * bootstrap's timeouts are 30 s); and /dev/shm holds no new entry naming
 * a rank's pid (libfabric's shm provider names its regions so; the native
 * shm transport uses memfds).  A missing libfabric provider skips (77).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cs_algo.h"
#include "cs_boot.h"
#include "cs_engine.h"
#include "cs_intr.h"
#include "cs_test.h"
#include "cs_transport.h"

#define NP 3
#define LIMIT_MS 1000
#define EXIT_RUNTIME 3

typedef struct rank_rec {
    volatile int pid;    /* (pmix) the rank's process, for the signal */
    volatile int rc;     /* the exit code it returns */
    volatile int runs;   /* runs done */
    volatile int ready;  /* set up (or failed set-up: -1) */
    volatile int st;
    volatile uint64_t t_fail; /* CLOCK_MONOTONIC ns of the failure */
    volatile uint64_t t_done; /* ... and of the end of its clean-up */
    char msg[CS_ERR_MSG_MAX];
} rank_rec_t;

typedef struct shared {
    rank_rec_t r[NP];
} shared_t;

static shared_t *sh;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
        getsockname(fd, (struct sockaddr *)&sa, &len))
        return 29517;
    close(fd);
    return ntohs(sa.sin_port);
}

/* One rank: set up, run until something fails, record, clean up, exit. */
static int rank_main(int me, const char *transport, const char *provider, uint64_t bytes,
                     int every, const char *boot, int huge)
{
    rank_rec_t *rec = &sh->r[me];
    rec->pid = (int)getpid();
    cs_intr_install();
    cs_err_t err;
    cs_err_clear(&err);
    cs_boot_t *b = NULL;
    cs_tp_t *tp = NULL;
    cs_sched_t *s = NULL;
    cs_engine_t *e = NULL;
    cs_boot_config_t bc = {30, boot};
    int st = cs_boot_open(&bc, &b, &err);
    if (st == CS_OK) {
        cs_coll_desc_t d = {CS_COLL_ALLREDUCE, NP, 0, 0};
        cs_params_t prm;
        cs_params_init(&prm);
        st = cs_algo_build(cs_algo_find(CS_COLL_ALLREDUCE, "ring"), &d, &prm, &s, &err);
    }
    if (st == CS_OK) {
        cs_tp_config_t tc = {me, NP, provider, "127.0.0.1", 0, 30};
        int ost = cs_tp_open(transport, &tc, &tp, &err);
        st = cs_boot_connect(b, ost == CS_OK ? tp : NULL, ost, &err);
    }
    uint64_t count = cs_coll_block_count(CS_COLL_ALLREDUCE, NP, bytes, 4);
    if (st == CS_OK) {
        cs_engine_config_t ec = {CS_DT_F32, CS_OP_SUM, huge ? 1ull << 58 : count, 30, 1};
        st = cs_engine_create(s, me, tp, &ec, &e, &err);
    }
    rec->ready = st == CS_OK ? 1 : -1;
    for (int i = 0; st == CS_OK; i++) {
        st = cs_engine_run(e, count, &err);
        if (st == CS_OK && i % every == every - 1)
            st = cs_boot_barrier(b, &err);
        if (st == CS_OK)
            rec->runs = i + 1;
    }
    rec->t_fail = now_ns();
    rec->st = st;
    snprintf(rec->msg, sizeof(rec->msg), "%s", err.msg);
    /* under mpirun the launcher may end a rank in its clean-up (once the
     * interrupted one exited): the exit code it means to return is known */
    rec->rc = st == CS_ERR_INTERRUPTED ? cs_intr_exit_code() : EXIT_RUNTIME;
    cs_engine_destroy(e);
    cs_tp_close(tp);
    cs_sched_destroy(s);
    cs_boot_close(b);
    rec->t_done = now_ns();
    return rec->rc;
}

/* --rank TRANSPORT PROVIDER BYTES EVERY: one rank started by mpirun. */
static int mpi_rank(char **argv)
{
    const char *path = getenv("CS_TEST_SHARED"), *r = getenv("PMIX_RANK");
    int fd = path ? open(path, O_RDWR) : -1;
    if (fd < 0 || !r)
        return 2;
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (sh == MAP_FAILED)
        return 2;
    return rank_main(atoi(r), argv[2], *argv[3] ? argv[3] : NULL, strtoull(argv[4], NULL, 10),
                     atoi(argv[5]), "pmix", 0);
}

/* Names in /dev/shm, one string "\n"-separated (for the before/after check). */
static void shm_list(char *out, size_t cap)
{
    out[0] = 0;
    DIR *d = opendir("/dev/shm");
    if (!d)
        return;
    for (struct dirent *x; (x = readdir(d));) {
        if (x->d_name[0] == '.')
            continue;
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s\n", x->d_name);
    }
    closedir(d);
}

static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == '\n') && p[n] == '\n')
            return 1;
    return 0;
}

/* Does `name` hold the number `pid` (not as part of a longer number)? */
static int names_pid(const char *name, pid_t pid)
{
    char num[16];
    snprintf(num, sizeof(num), "%d", (int)pid);
    size_t n = strlen(num);
    for (const char *p = name; (p = strstr(p, num)); p++)
        if ((p == name || p[-1] < '0' || p[-1] > '9') && (p[n] < '0' || p[n] > '9'))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "--rank"))
        return mpi_rank(argv);
    if (argc != 6 && argc != 7) {
        fprintf(stderr, "usage: test_intr_live TRANSPORT INT|TERM|HUP VICTIM BYTES EVERY "
                "[env|pmix]\n");
        return 2;
    }
    const char *boot = argc == 7 ? argv[6] : "env";
    int pmix = !strcmp(boot, "pmix");
    if (pmix && system("command -v mpirun >/dev/null 2>&1") != 0)
        CS_TEST_SKIP("no mpirun");
    char transport[64];
    snprintf(transport, sizeof(transport), "%s", argv[1]);
    const char *provider = NULL;
    char *colon = strchr(transport, ':');
    if (colon) {
        *colon = 0;
        provider = colon + 1;
        for (char *q = colon + 1; *q; q++)
            *q = *q == '+' ? ';' : *q; /* ofi:tcp+ofi_rxm: no ';' in a ctest argument */
    }
    int sig = !strcmp(argv[2], "TERM") ? SIGTERM : !strcmp(argv[2], "HUP") ? SIGHUP : SIGINT;
    int nomem = !strcmp(argv[2], "NOMEM");
    if (nomem)
        sig = 0;
    int victim = atoi(argv[3]), every = atoi(argv[5]);
    uint64_t bytes = strtoull(argv[4], NULL, 10);
    /* installed first, as `collstep run` does: the ranks inherit the
     * handlers, and loading libfabric below must not take them over */
    cs_intr_install();
    if (!strcmp(transport, "ofi")) { /* skip where the provider is missing */
        cs_tp_config_t tc = {0, 1, provider, "127.0.0.1", 0, 5};
        cs_tp_t *tp = NULL;
        cs_err_t err;
        cs_err_clear(&err);
        if (cs_tp_open("ofi", &tc, &tp, &err) != CS_OK)
            CS_TEST_SKIP("%s", err.msg);
        cs_tp_close(tp);
    }
    char path[512];
    cs_test_tmp(path, sizeof(path), "cs_intr_live.XXXXXX");
    int sfd = pmix ? mkstemp(path) : -1;
    if (pmix && (sfd < 0 || ftruncate(sfd, sizeof(*sh)) != 0))
        CS_TEST_SKIP("no temporary file");
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
              MAP_SHARED | (pmix ? 0 : MAP_ANONYMOUS), sfd, 0);
    if (sfd >= 0)
        close(sfd);
    if (sh == MAP_FAILED)
        CS_TEST_SKIP("no shared mapping");
    memset(sh, 0, sizeof(*sh));
    static char before[1 << 16], after[1 << 16];
    shm_list(before, sizeof(before));
    char port[16];
    snprintf(port, sizeof(port), "%d", free_port());
    fflush(NULL);
    pid_t pid[NP], mpirun = -1;
    for (int r = 0; pmix && r < NP; r++)
        pid[r] = -1;
    if (pmix) {
        mpirun = fork();
        if (mpirun == 0) {
            char self[4096];
            ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
            self[n > 0 ? n : 0] = 0;
            setenv("CS_TEST_SHARED", path, 1);
            execlp("mpirun", "mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "3",
                   self, "--rank", transport, provider ? provider : "", argv[4], argv[5],
                   (char *)NULL);
            _exit(127);
        }
    }
    for (int r = 0; !pmix && r < NP; r++) {
        pid[r] = fork();
        if (pid[r] == 0) {
            char rs[16];
            snprintf(rs, sizeof(rs), "%d", r);
            setenv("RANK", rs, 1);
            setenv("WORLD_SIZE", "3", 1);
            setenv("MASTER_ADDR", "127.0.0.1", 1);
            setenv("MASTER_PORT", port, 1);
            int rc = rank_main(r, transport, provider, bytes, every, "env", nomem && r == victim);
            fflush(NULL);
            _exit(rc);
        }
    }
    /* every rank set up and a few runs done, then the signal */
    uint64_t until = now_ns() + 60000000000ull;
    int ok = 0;
    while (!nomem && !ok && now_ns() < until) {
        ok = 1;
        for (int r = 0; r < NP; r++)
            ok &= sh->r[r].ready == 1 && sh->r[r].runs >= 5;
        for (int r = 0; r < NP; r++)
            if (sh->r[r].ready == -1)
                until = 0;
        usleep(1000);
    }
    uint64_t t_kill = now_ns();
    if (ok && !nomem)
        kill(pmix ? sh->r[victim].pid : pid[victim], sig);
    int ws[NP], exited[NP] = {0};
    until = now_ns() + 30000000000ull;
    for (int left = NP; left > 0 && now_ns() < until;) {
        for (int r = 0; !pmix && r < NP; r++)
            if (!exited[r] && waitpid(pid[r], &ws[r], WNOHANG) == pid[r])
                exited[r] = 1, left--;
        if (pmix && waitpid(mpirun, &ws[0], WNOHANG) == mpirun) {
            for (int r = 0; r < NP; r++) /* the ranks' exit codes, as they returned them */
                exited[r] = 1, ws[r] = sh->r[r].rc << 8;
            left = 0;
        }
        usleep(2000);
    }
    if (pmix && !exited[0]) {
        kill(mpirun, SIGKILL);
        waitpid(mpirun, &ws[0], 0);
    }
    for (int r = 0; !pmix && r < NP; r++)
        if (!exited[r]) {
            kill(pid[r], SIGKILL);
            waitpid(pid[r], &ws[r], 0);
        }
    if (pmix)
        unlink(path);
    if (nomem)
        t_kill = sh->r[victim].t_fail; /* the others' clock starts at its failure */
    CS_TEST_REQUIRE(ok || nomem, "the ranks never got running (ready %d %d %d, runs %d %d %d)",
                    sh->r[0].ready, sh->r[1].ready, sh->r[2].ready, sh->r[0].runs,
                    sh->r[1].runs, sh->r[2].runs);
    char want[96];
    for (int r = 0; r < NP; r++) {
        rank_rec_t *x = &sh->r[r];
        double ms = x->t_fail > t_kill ? (double)(x->t_fail - t_kill) * 1e-6 : 0;
        printf("rank %d: %s after %.1f ms, %d runs: %s\n", r, cs_status_name(x->st), ms, x->runs,
               x->msg);
        CS_TEST_CHECK(exited[r], "rank %d did not exit within 30 s", r);
        if (!exited[r])
            continue;
        if (nomem) {
            snprintf(want, sizeof(want), r == victim ? "cannot allocate" : "rank %d left the job",
                     victim);
            CS_TEST_CHECK(x->st == (r == victim ? CS_ERR_NOMEM : CS_ERR_PEER), "rank %d: status %s",
                          r, cs_status_name(x->st));
            CS_TEST_CHECK(WIFEXITED(ws[r]) && WEXITSTATUS(ws[r]) == EXIT_RUNTIME,
                          "rank %d: wait status %#x, want exit 3", r, ws[r]);
        } else if (r == victim) {
            snprintf(want, sizeof(want), "interrupted (%s)", cs_intr_signame(sig));
            CS_TEST_CHECK(x->st == CS_ERR_INTERRUPTED, "rank %d: status %s", r,
                          cs_status_name(x->st));
            CS_TEST_CHECK(WIFEXITED(ws[r]) && WEXITSTATUS(ws[r]) == 128 + sig,
                          "rank %d: wait status %#x, want exit %d", r, ws[r], 128 + sig);
        } else if (pmix && x->st == CS_ERR_INTERRUPTED && sh->r[victim].t_done &&
                   x->t_fail > sh->r[victim].t_done) {
            /* mpirun ends the job (SIGTERM) once a rank exited with a failure:
             * a rank that had not heard of the victim by then is ended so */
            printf("rank %d: ended by mpirun before it heard of rank %d\n", r, victim);
            continue;
        } else {
            snprintf(want, sizeof(want), "rank %d was interrupted (%s)", victim,
                     cs_intr_signame(sig));
            CS_TEST_CHECK(x->st == CS_ERR_PEER, "rank %d: status %s", r, cs_status_name(x->st));
            CS_TEST_CHECK(WIFEXITED(ws[r]) && WEXITSTATUS(ws[r]) == EXIT_RUNTIME,
                          "rank %d: wait status %#x, want exit 3", r, ws[r]);
        }
        CS_TEST_CHECK(strstr(x->msg, want) != NULL, "rank %d: message '%s' lacks '%s'", r,
                      x->msg, want);
        CS_TEST_CHECK(ms < LIMIT_MS, "rank %d failed %.0f ms after the signal", r, ms);
    }
    shm_list(after, sizeof(after)); /* new entries naming a rank's pid (others run tests too) */
    for (char *p = after, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
        *nl = 0;
        int ours = 0;
        for (int r = 0; r < NP; r++)
            ours |= names_pid(p, pmix ? sh->r[r].pid : pid[r]);
        CS_TEST_CHECK(in_list(before, p) || !ours, "/dev/shm/%s was left behind", p);
    }
    return cs_test_finish();
}
