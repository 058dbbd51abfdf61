/*
 * test_intr.c - the interrupt flag of core/cs_intr.h: a signal is recorded,
 * not acted on; the exit code is 128 + signal; a second signal kills; an
 * ignored signal stays ignored; the first interrupted peer is kept.
 */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cs_intr.h"
#include "cs_status.h"
#include "cs_test.h"

/* In a child: install, take `first`, then `second` (0: none); returns the
 * child's wait status.  The child exits with its exit code if it lives. */
static int child(int first, int second)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (cs_intr_install() != CS_OK)
            _exit(99);
        kill(getpid(), first);
        if (second)
            kill(getpid(), second);
        _exit(cs_intr_pending() == first ? cs_intr_exit_code() : 98);
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    return ws;
}

int main(void)
{
    CS_TEST_CHECK(cs_intr_pending() == 0 && cs_intr_exit_code() == 0, "flag set at start");
    int ws = child(SIGINT, 0);
    CS_TEST_CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 130, "SIGINT: status %#x", ws);
    ws = child(SIGTERM, 0);
    CS_TEST_CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 143, "SIGTERM: status %#x", ws);
    ws = child(SIGHUP, 0);
    CS_TEST_CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 129, "SIGHUP: status %#x", ws);
    ws = child(SIGINT, SIGINT);
    CS_TEST_CHECK(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGINT, "second SIGINT: status %#x", ws);
    ws = child(SIGINT, SIGTERM);
    CS_TEST_CHECK(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGTERM, "SIGTERM after SIGINT: %#x", ws);

    /* an ignored signal stays ignored */
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGINT, SIG_IGN);
        cs_intr_install();
        kill(getpid(), SIGINT);
        _exit(cs_intr_pending() == 0 ? 0 : 1);
    }
    waitpid(pid, &ws, 0);
    CS_TEST_CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "ignored SIGINT was recorded: %#x", ws);

    /* uninstall: the default action again */
    pid = fork();
    if (pid == 0) {
        cs_intr_install();
        cs_intr_uninstall();
        kill(getpid(), SIGTERM);
        _exit(0);
    }
    waitpid(pid, &ws, 0);
    CS_TEST_CHECK(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGTERM, "after uninstall: %#x", ws);

    /* raise, clear, the peer record */
    cs_intr_raise(SIGTERM);
    cs_intr_raise(SIGINT);
    CS_TEST_CHECK(cs_intr_pending() == SIGTERM && cs_intr_exit_code() == 143, "raise");
    int sig = 0;
    CS_TEST_CHECK(cs_intr_peer(&sig) == -1, "a peer recorded at start");
    cs_intr_note_peer(3, SIGINT);
    cs_intr_note_peer(5, SIGTERM);
    CS_TEST_CHECK(cs_intr_peer(&sig) == 3 && sig == SIGINT, "first peer: %d", cs_intr_peer(NULL));
    cs_intr_note_peer(0, SIGHUP);
    CS_TEST_CHECK(cs_intr_peer(&sig) == 3, "peer overwritten");
    cs_intr_clear();
    CS_TEST_CHECK(cs_intr_pending() == 0 && cs_intr_peer(NULL) == -1, "clear");
    cs_intr_note_peer(0, SIGHUP);
    CS_TEST_CHECK(cs_intr_peer(&sig) == 0 && sig == SIGHUP, "rank 0 as the peer");
    CS_TEST_CHECK(!strcmp(cs_intr_signame(SIGINT), "SIGINT") &&
                      !strcmp(cs_intr_signame(SIGTERM), "SIGTERM") &&
                      !strcmp(cs_intr_signame(40), "signal 40"), "signal names");
    CS_TEST_CHECK(!strcmp(cs_status_name(CS_ERR_INTERRUPTED), "CS_ERR_INTERRUPTED"), "status");
    return cs_test_finish();
}
