/*
 * two_ranks.h - for the example programs of the installed libraries: run
 * rank_main(arg) in two forked processes that bootstrap as collstep's
 * launcher-less jobs do (RANK, WORLD_SIZE, MASTER_ADDR = 127.0.0.1 and a
 * free MASTER_PORT).  Returns 0 when both ranks exit 0, 1 when one fails,
 * 77 (skipped, said on stderr) where this machine has no TCP socket on
 * 127.0.0.1 or cannot fork.
 */
#ifndef TWO_RANKS_H
#define TWO_RANKS_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int two_ranks(const char *what, int (*rank_main)(void *), void *arg)
{
    /* a free port on 127.0.0.1 for rank 0's bootstrap */
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) ||
        getsockname(s, (struct sockaddr *)&a, &al)) {
        fprintf(stderr, "SKIP: %s: no TCP socket on 127.0.0.1\n", what);
        return 77;
    }
    close(s);
    char port[16];
    snprintf(port, sizeof(port), "%d", ntohs(a.sin_port));
    pid_t pid[2];
    for (int r = 0; r < 2; r++) {
        fflush(stdout);
        if ((pid[r] = fork()) < 0) {
            fprintf(stderr, "SKIP: %s: cannot fork\n", what);
            return r ? 1 : 77;
        }
        if (pid[r] == 0) {
            char rank[4];
            snprintf(rank, sizeof(rank), "%d", r);
            setenv("RANK", rank, 1), setenv("WORLD_SIZE", "2", 1);
            setenv("MASTER_ADDR", "127.0.0.1", 1), setenv("MASTER_PORT", port, 1);
            exit(rank_main(arg));
        }
    }
    int rc = 0;
    for (int r = 0; r < 2; r++) {
        int ws = 0;
        if (waitpid(pid[r], &ws, 0) < 0 || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
            fprintf(stderr, "%s: rank %d failed\n", what, r);
            rc = 1;
        }
    }
    return rc;
}

#endif /* TWO_RANKS_H */
