/*
 * test_tp_tcp.c - the native TCP transport (exec/tp_tcp*.c) on its own:
 * NP forked processes on loopback, addresses exchanged through a shared
 * mapping, every rank checking what it receives.
 *
 *   matching   per peer, messages of the same tag match receives in order,
 *              and tags posted in the opposite order of sending still
 *              match (the first messages wait as unexpected ones);
 *   sizes      0 bytes, 1 byte, the eager limit and one byte above, 3 MB
 *              (RTS/CTS), each both expected and unexpected;
 *   self       a rank sends to itself, receive posted before and after;
 *   truncation a receive smaller than its message completes with
 *              CS_ERR_RANGE and the stream stays usable;
 *   many       more messages in flight than unexpected slots (back pressure
 *              through TCP, nothing lost);
 *   RTR        large receives posted before, after and while their
 *              messages are sent, over many rounds that reuse operations:
 *              a message sent on an RTR (DDATA), an RTR crossing an RTS,
 *              an RTR consumed by an eager message, an RTR for a receive
 *              too small (truncation through RTS/CTS), two receives of one
 *              tag (no RTR for the second); every payload checked;
 *   crossing   two ranks send each other a message of several DATA chunks
 *              and post the receive late (its CTS crosses the rank's own
 *              data) or early (DDATA on an RTR), payloads checked;
 *   peer loss  a rank exits while another waits for it: the receive
 *              completes with CS_ERR_PEER, a later send to it too.  And a
 *              large receive posted when the peer is gone but not yet seen
 *              to be (its RTR is what finds the socket reset) fails too
 *              instead of waiting forever; and the waiting rank's
 *              unexpected slots are full of the leaver's messages first,
 *              so its reader is stalled when the stream ends.  And a
 *              large message (RTS) the leaver sent before it went, read
 *              as an unexpected one: a receive posted for it after the
 *              loss fails at once too (its CTS could never be answered).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../exec/tp_tcp.h"
#include "cs_test.h"

#define NP 3
#define MANY 300

typedef struct shared {
    char blobs[NP][CS_TP_ADDR_MAX];
    size_t lens[NP];
    volatile int arrived[4]; /* barrier counters */
    volatile int gone;       /* rank 2 closed its transport (loss test) */
} shared_t;

static shared_t *sh;

/* A rank that failed does not arrive: give up after 90 s rather than hang. */
static void barrier(int k)
{
    __atomic_add_fetch(&sh->arrived[k], 1, __ATOMIC_SEQ_CST);
    for (int waited = 0; __atomic_load_n(&sh->arrived[k], __ATOMIC_SEQ_CST) < NP; waited++) {
        if (waited > 900000) {
            fprintf(stderr, "FAIL: barrier %d: a rank never arrived (it failed earlier)\n", k);
            _exit(1);
        }
        usleep(100);
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Poll until every request of reqs[0..n) is done (inline ones included). */
static int wait_all(cs_tp_t *tp, cs_tp_req_t *reqs, int n)
{
    double until = now_s() + 30;
    for (;;) {
        int left = 0;
        for (int i = 0; i < n; i++)
            left += reqs[i].status == CS_INPROGRESS;
        if (!left)
            return 0;
        if (now_s() > until)
            return -1;
        cs_tp_req_t *done[16];
        if (tp->ops->poll(tp, done, 16) < 0)
            return -1;
    }
}

/* Make progress for `s` seconds with nothing posted: what arrives meanwhile
 * is read in as unexpected messages. */
static void spin(cs_tp_t *tp, double s)
{
    double until = now_s() + s;
    cs_tp_req_t *done[16];
    while (now_s() < until)
        tp->ops->poll(tp, done, 16);
}

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(seed * 131u + i * 7u);
}

static int same(const unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (unsigned char)(seed * 131u + i * 7u))
            return 0;
    return 1;
}

static const size_t sizes[] = {0, 1, TCP_EAGER, TCP_EAGER + 1, 3000000};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* Rank 0 sends to rank 1 every size twice under tags 10+k; rank 1 posts
 * the second half in reverse tag order first (unexpected path), after a
 * pause that lets them all arrive. */
static int test_sizes(cs_tp_t *tp, int me)
{
    static unsigned char sbuf[NSIZES][3000001], rbuf[NSIZES][3000001];
    cs_tp_req_t req[2 * NSIZES];
    memset(req, 0, sizeof(req));
    if (me == 0) {
        for (size_t k = 0; k < NSIZES; k++) {
            fill(sbuf[k], sizes[k], (unsigned)k);
            CS_TEST_REQUIRE(tp->ops->isend(tp, 1, sbuf[k], sizes[k], NULL, 10 + k, &req[k]) ==
                                CS_OK, "isend size %zu", sizes[k]);
        }
        CS_TEST_REQUIRE(wait_all(tp, req, NSIZES) == 0, "sends never completed");
        for (size_t k = 0; k < NSIZES; k++)
            CS_TEST_CHECK(req[k].status == CS_OK, "send %zu status %d", k, req[k].status);
    } else if (me == 1) {
        spin(tp, 0.3); /* the eager ones arrive unexpected, the RTS too */
        for (size_t k = NSIZES; k-- > 0;)
            CS_TEST_REQUIRE(tp->ops->irecv(tp, 0, rbuf[k], sizes[k], NULL, 10 + k, &req[k]) ==
                                CS_OK, "irecv");
        CS_TEST_REQUIRE(wait_all(tp, req, NSIZES) == 0, "receives never completed");
        for (size_t k = 0; k < NSIZES; k++) {
            CS_TEST_CHECK(req[k].status == CS_OK && req[k].nbytes == sizes[k],
                          "recv %zu: status %d, %zu bytes", sizes[k], req[k].status,
                          req[k].nbytes);
            CS_TEST_CHECK(same(rbuf[k], sizes[k], (unsigned)k), "payload of size %zu", sizes[k]);
        }
    }
    return 0;
}

/* Same tag, many messages: order kept; more than the unexpected slots. */
static int test_many(cs_tp_t *tp, int me)
{
    static uint32_t vals[MANY], got[MANY];
    cs_tp_req_t req[MANY];
    memset(req, 0, sizeof(req));
    int peer = me == 0 ? 2 : 0;
    if (me == 0 || me == 2) {
        if (me == 0) {
            for (int i = 0; i < MANY; i++) {
                vals[i] = (uint32_t)i * 2654435761u;
                CS_TEST_REQUIRE(tp->ops->isend(tp, peer, &vals[i], 4, NULL, 5, &req[i]) == CS_OK,
                                "isend %d", i);
            }
        } else {
            spin(tp, 1.0); /* fills every unexpected slot, then stalls */
            for (int i = 0; i < MANY; i++)
                CS_TEST_REQUIRE(tp->ops->irecv(tp, peer, &got[i], 4, NULL, 5, &req[i]) == CS_OK,
                                "irecv %d", i);
        }
        CS_TEST_REQUIRE(wait_all(tp, req, MANY) == 0, "many: never completed");
        if (me == 2)
            for (int i = 0; i < MANY; i++)
                CS_TEST_CHECK(got[i] == (uint32_t)i * 2654435761u, "message %d out of order", i);
    }
    return 0;
}

static int test_self_and_trunc(cs_tp_t *tp, int me)
{
    char a[8] = "abcdefg", b[8] = {0}, c[8] = {0};
    cs_tp_req_t r[4];
    memset(r, 0, sizeof(r));
    /* self: receive first, then send; send first, then receive */
    CS_TEST_REQUIRE(tp->ops->irecv(tp, me, b, 8, NULL, 1, &r[0]) == CS_OK, "self irecv");
    CS_TEST_REQUIRE(tp->ops->isend(tp, me, a, 8, NULL, 1, &r[1]) == CS_OK, "self isend");
    CS_TEST_REQUIRE(tp->ops->isend(tp, me, a, 8, NULL, 2, &r[2]) == CS_OK, "self isend 2");
    CS_TEST_REQUIRE(tp->ops->irecv(tp, me, c, 8, NULL, 2, &r[3]) == CS_OK, "self irecv 2");
    CS_TEST_REQUIRE(wait_all(tp, r, 4) == 0, "self: never completed");
    CS_TEST_CHECK(!memcmp(a, b, 8) && !memcmp(a, c, 8), "self payloads");
    /* truncation: rank 1 sends 8 bytes where rank 2 expects 4, then 8 more */
    if (me == 1 || me == 2) {
        memset(r, 0, sizeof(r));
        if (me == 1) {
            tp->ops->isend(tp, 2, a, 8, NULL, 3, &r[0]);
            tp->ops->isend(tp, 2, a, 8, NULL, 4, &r[1]);
        } else {
            tp->ops->irecv(tp, 1, b, 4, NULL, 3, &r[0]);
            tp->ops->irecv(tp, 1, c, 8, NULL, 4, &r[1]);
        }
        CS_TEST_REQUIRE(wait_all(tp, r, 2) == 0, "truncation: never completed");
        if (me == 2) {
            CS_TEST_CHECK(r[0].status == CS_ERR_RANGE, "short receive: status %d", r[0].status);
            CS_TEST_CHECK(r[1].status == CS_OK && !memcmp(a, c, 8), "stream after truncation");
        }
    }
    return 0;
}

/* Rank 2 leaves; rank 0 waits for a message from it that never comes. */
static int test_loss(cs_tp_t *tp, int me)
{
    if (me == 2) { /* fill rank 0's unexpected slots, report, vanish with its sockets */
        static char small[TCP_UNEX_SLOTS][8];
        cs_tp_req_t r[TCP_UNEX_SLOTS];
        memset(r, 0, sizeof(r));
        for (int k = 0; k < TCP_UNEX_SLOTS; k++)
            CS_TEST_REQUIRE(tp->ops->isend(tp, 0, small[k], 8, NULL, 100 + (uint64_t)k, &r[k]) ==
                                CS_OK, "isend unexpected %d", k);
        CS_TEST_REQUIRE(wait_all(tp, r, TCP_UNEX_SLOTS) == 0, "unexpected sends pending");
        /* an RTS to rank 1, which reads it as unexpected before the end of
         * the stream (written whole by isend: the socket is empty) */
        static char big[TCP_EAGER + 1];
        cs_tp_req_t rts;
        memset(&rts, 0, sizeof(rts));
        CS_TEST_REQUIRE(tp->ops->isend(tp, 1, big, sizeof(big), NULL, 11, &rts) == CS_OK,
                        "isend RTS");
        int rc = cs_test_finish();
        fflush(NULL);
        cs_tp_close(tp);
        __atomic_store_n(&sh->gone, 1, __ATOMIC_SEQ_CST);
        _exit(rc);
    }
    if (me == 1) { /* no progress until the receive: its RTR meets the reset */
        static char big[TCP_EAGER * 2];
        cs_tp_req_t r[2];
        memset(r, 0, sizeof(r));
        for (int waited = 0; !__atomic_load_n(&sh->gone, __ATOMIC_SEQ_CST); waited++) {
            CS_TEST_REQUIRE(waited < 300000, "rank 2 never closed");
            usleep(100);
        }
        /* written into a socket whose peer is closed: the answer is a reset */
        CS_TEST_REQUIRE(tp->ops->isend(tp, 2, big, 4, NULL, 7, &r[0]) == CS_OK, "isend");
        usleep(100000);
        CS_TEST_REQUIRE(tp->ops->irecv(tp, 2, big, sizeof(big), NULL, 8, &r[1]) == CS_OK,
                        "irecv");
        CS_TEST_REQUIRE(wait_all(tp, r, 2) == 0, "loss: large receive still pending after 30 s");
        CS_TEST_CHECK(r[1].status == CS_ERR_PEER, "large receive from a lost peer: %d",
                      r[1].status);
        /* rank 2's RTS came before the end of its stream: matched now, it
         * must fail, not wait for DATA that will never come */
        cs_tp_req_t late;
        memset(&late, 0, sizeof(late));
        CS_TEST_REQUIRE(tp->ops->irecv(tp, 2, big, sizeof(big), NULL, 11, &late) == CS_OK,
                        "irecv RTS");
        CS_TEST_REQUIRE(wait_all(tp, &late, 1) == 0,
                        "loss: receive of an RTS read before the loss still pending after 30 s");
        CS_TEST_CHECK(late.status == CS_ERR_PEER, "receive of a lost peer's RTS: %d",
                      late.status);
    }
    if (me == 0) { /* its unexpected slots full of rank 2's messages: reading from rank 2
                      stalls, and must still notice the end of the stream */
        char b[4];
        cs_tp_req_t r[2];
        memset(r, 0, sizeof(r));
        CS_TEST_REQUIRE(tp->ops->irecv(tp, 2, b, 4, NULL, 9, &r[0]) == CS_OK, "irecv");
        CS_TEST_REQUIRE(wait_all(tp, r, 1) == 0, "loss: receive still pending after 30 s");
        CS_TEST_CHECK(r[0].status == CS_ERR_PEER, "receive from a lost peer: %d", r[0].status);
        CS_TEST_REQUIRE(tp->ops->isend(tp, 2, b, 4, NULL, 9, &r[1]) == CS_OK, "isend");
        CS_TEST_REQUIRE(wait_all(tp, &r[1], 1) == 0, "send to a lost peer pending");
        CS_TEST_CHECK(r[1].status == CS_ERR_PEER, "send to a lost peer: %d", r[1].status);
    }
    return 0;
}

/* Round r of the RTR test, between ranks 0 (sends) and 1 (receives); the
 * order of posting is chosen by r % 3: receives first (their RTRs arrive
 * before the sends), sends first (RTS out before the RTRs), or both at once
 * (RTR and RTS cross).  Message k of a round: tag base + k, except the last
 * two, which share a tag (the second receive sends no RTR). */
#define RTR_MSGS 6
#define RTR_BIG (TCP_EAGER * 3)
static int rtr_round(cs_tp_t *tp, int me, int r)
{
    static unsigned char sb[RTR_MSGS][RTR_BIG], rb[RTR_MSGS][RTR_BIG];
    /* message sizes and receive capacities: DDATA/RTS, eager into a large
     * receive, exact eager limit + 1, too small (truncated), same tag x 2 */
    static const size_t len[RTR_MSGS] = {RTR_BIG, 10, TCP_EAGER + 1, RTR_BIG, RTR_BIG, 5000};
    static const size_t cap[RTR_MSGS] = {RTR_BIG, RTR_BIG, RTR_BIG, TCP_EAGER * 2, RTR_BIG,
                                         RTR_BIG};
    uint64_t tag[RTR_MSGS];
    for (int k = 0; k < RTR_MSGS; k++)
        tag[k] = 1000 + (uint64_t)r * 8 + (uint64_t)(k < RTR_MSGS - 1 ? k : k - 1);
    cs_tp_req_t req[RTR_MSGS];
    memset(req, 0, sizeof(req));
    int order = r % 3;
    if (me == 0) {
        if (order == 0)
            spin(tp, 0.002); /* the receives' RTRs come in meanwhile */
        for (int k = 0; k < RTR_MSGS; k++) {
            fill(sb[k], len[k], (unsigned)(r * RTR_MSGS + k));
            CS_TEST_REQUIRE(tp->ops->isend(tp, 1, sb[k], len[k], NULL, tag[k], &req[k]) == CS_OK,
                            "rtr round %d: isend %d", r, k);
        }
    } else {
        if (order == 1)
            spin(tp, 0.002); /* the RTS arrive first */
        for (int k = 0; k < RTR_MSGS; k++)
            CS_TEST_REQUIRE(tp->ops->irecv(tp, 0, rb[k], cap[k], NULL, tag[k], &req[k]) == CS_OK,
                            "rtr round %d: irecv %d", r, k);
    }
    CS_TEST_REQUIRE(wait_all(tp, req, RTR_MSGS) == 0, "rtr round %d never completed", r);
    for (int k = 0; k < RTR_MSGS; k++) {
        int trunc = len[k] > cap[k];
        if (me == 0) {
            CS_TEST_CHECK(req[k].status == CS_OK, "rtr round %d: send %d status %d", r, k,
                          req[k].status);
            continue;
        }
        CS_TEST_CHECK(req[k].status == (trunc ? CS_ERR_RANGE : CS_OK) &&
                          req[k].nbytes == (trunc ? cap[k] : len[k]),
                      "rtr round %d: receive %d: status %d, %zu bytes", r, k, req[k].status,
                      req[k].nbytes);
        if (!trunc)
            CS_TEST_CHECK(same(rb[k], len[k], (unsigned)(r * RTR_MSGS + k)),
                          "rtr round %d: payload %d", r, k);
    }
    return 0;
}

static int test_rtr(cs_tp_t *tp, int me)
{
    for (int r = 0; me < 2 && r < 60; r++)
        if (rtr_round(tp, me, r))
            return 1;
    return 0;
}

/* Ranks 0 and 1 send each other a message of several DATA chunks (not a
 * whole number of them) and post the receive only afterwards, once the
 * peer's RTS is in: the CTS goes on the control connection while this
 * rank's own message is being written (DDATA on an RTR in even rounds, where
 * the receive comes first on one side). */
#define CROSS_LEN (5 * TCP_CHUNK + 12345)
static int test_cross(cs_tp_t *tp, int me)
{
    static unsigned char sb[CROSS_LEN], rb[CROSS_LEN];
    if (me > 1)
        return 0;
    int peer = 1 - me;
    for (int r = 0; r < 4; r++) {
        cs_tp_req_t req[2];
        memset(req, 0, sizeof(req));
        memset(rb, 0, sizeof(rb));
        fill(sb, CROSS_LEN, (unsigned)(me * 10 + r));
        int recv_first = r % 2 == 1 && me == 1;
        if (recv_first)
            CS_TEST_REQUIRE(tp->ops->irecv(tp, peer, rb, CROSS_LEN, NULL, 77, &req[1]) == CS_OK,
                            "cross %d: irecv", r);
        CS_TEST_REQUIRE(tp->ops->isend(tp, peer, sb, CROSS_LEN, NULL, 77, &req[0]) == CS_OK,
                        "cross %d: isend", r);
        if (!recv_first) {
            spin(tp, 0.005); /* the peer's RTS arrives unexpected */
            CS_TEST_REQUIRE(tp->ops->irecv(tp, peer, rb, CROSS_LEN, NULL, 77, &req[1]) == CS_OK,
                            "cross %d: irecv", r);
        }
        CS_TEST_REQUIRE(wait_all(tp, req, 2) == 0, "cross %d never completed", r);
        CS_TEST_CHECK(req[0].status == CS_OK && req[1].status == CS_OK &&
                          req[1].nbytes == CROSS_LEN,
                      "cross %d: status %d / %d, %zu bytes", r, req[0].status, req[1].status,
                      req[1].nbytes);
        CS_TEST_CHECK(same(rb, CROSS_LEN, (unsigned)(peer * 10 + r)), "cross %d: payload", r);
    }
    return 0;
}

static int rank_main(int me)
{
    /* rank 1 names loopback's interface instead of its address (--iface lo) */
    cs_tp_config_t cfg = {.rank = me, .nranks = NP, .node = me == 1 ? "lo" : "127.0.0.1",
                          .timeout_s = 30};
    cs_tp_t *tp = NULL;
    cs_err_t err = {0};
    CS_TEST_REQUIRE(cs_tp_open("tcp", &cfg, &tp, &err) == CS_OK, "open: %s", err.msg);
    size_t len = CS_TP_ADDR_MAX;
    CS_TEST_REQUIRE(tp->ops->get_addr(tp, sh->blobs[me], &len) == CS_OK, "get_addr");
    sh->lens[me] = len;
    barrier(0);
    CS_TEST_REQUIRE(tp->ops->insert_addrs(tp, sh->blobs, CS_TP_ADDR_MAX, sh->lens) == CS_OK,
                    "insert_addrs");
    if (test_sizes(tp, me) || test_many(tp, me) || test_self_and_trunc(tp, me) ||
        test_rtr(tp, me) || test_cross(tp, me))
        return 1;
    barrier(1);
    if (test_loss(tp, me))
        return 1;
    cs_tp_close(tp);
    return 0;
}

/* --iface that is neither an address nor an interface: refused, named. */
static void test_bad_iface(void)
{
    cs_tp_config_t cfg = {.rank = 0, .nranks = NP, .node = "cs-no-such-if0", .timeout_s = 30};
    cs_tp_t *tp = NULL;
    cs_err_t err = {0};
    int st = cs_tp_open("tcp", &cfg, &tp, &err);
    CS_TEST_CHECK(st == CS_ERR_INVAL && strstr(err.msg, "'cs-no-such-if0'") &&
                      strstr(err.msg, "--iface"),
                  "bad --iface: status %d, '%s'", st, err.msg);
    if (st == CS_OK)
        cs_tp_close(tp);
}

int main(void)
{
    test_bad_iface();
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        CS_TEST_SKIP("no shared mapping");
    memset(sh, 0, sizeof(*sh));
    pid_t pid[NP];
    for (int r = 1; r < NP; r++) {
        pid[r] = fork();
        if (pid[r] == 0) {
            int rc = rank_main(r);
            rc |= cs_test_finish();
            fflush(NULL);
            _exit(rc);
        }
    }
    int rc = rank_main(0);
    for (int r = 1; r < NP; r++) {
        int ws = 0;
        waitpid(pid[r], &ws, 0);
        CS_TEST_CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "rank %d failed (status %d)", r, ws);
    }
    return rc | cs_test_finish();
}
