/*
 * tcp_pingpong.c - an independent reference for calib_netns.sh: the
 * one-way time of a 1-byte TCP message between two ranks of the emulated
 * cluster (plain sockets, TCP_NODELAY, busy receive like collstep's).
 * Rank 0 (RANK=0) listens on MASTER_ADDR:MASTER_PORT+1, rank 1 connects;
 * rank 1 prints the 10th percentile and the median of 5000 one-way times
 * (round trip / 2, after 500 untimed) in microseconds: "p10 MEDIAN".
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int xfer(int fd, char *c, int out)
{
    for (;;) {
        ssize_t k = out ? send(fd, c, 1, 0) : recv(fd, c, 1, MSG_DONTWAIT);
        if (k == 1)
            return 0;
        if (k == 0 || (k < 0 && out))
            return -1;
    }
}

int main(void)
{
    const char *r = getenv("RANK"), *a = getenv("MASTER_ADDR"), *p = getenv("MASTER_PORT");
    if (!r || !a || !p)
        return 2;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(atoi(p) + 1)};
    inet_pton(AF_INET, a, &sa.sin_addr);
    int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0), n = 5000, warm = 500;
    char c = 'x';
    if (atoi(r) == 0) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1))
            return 3;
        int s = accept(fd, NULL, NULL);
        setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        while (xfer(s, &c, 0) == 0 && xfer(s, &c, 1) == 0)
            ;
        return 0;
    }
    for (int i = 0; connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0; i++) {
        if (i > 200)
            return 3;
        close(fd);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        usleep(20000);
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    double *t = malloc(sizeof(double) * n);
    for (int i = 0; i < n + warm; i++) {
        double t0 = now_us();
        if (xfer(fd, &c, 1) || xfer(fd, &c, 0))
            return 3;
        if (i >= warm)
            t[i - warm] = (now_us() - t0) / 2;
    }
    qsort(t, n, sizeof(double), cmp);
    printf("%.2f %.2f\n", t[n / 10], t[n / 2]);
    return 0;
}
