/*
 * calib_int.h - the parts of the calibration library (cs_calibrate.h):
 *   calib_kernel.c   the measurement kernels over a transport: ping-pong,
 *                    concurrent flows, a local reduction
 *   calib_measure.c  the measurement plan, every rank in the same order:
 *                    pair sweeps, every rank busy, the NIC a node's ranks
 *                    share, a node's exchange with its partner, full
 *                    duplex, the reduction bandwidth
 *   calib_derive.c   the fits and the platform's figures from a record
 *   calib_report.c   the platform XML, the JSON, the summary, the files
 *   calib_record.c   plans, records, and a record read back from its JSON
 *   calib_json.c     the JSON reader the record's loader uses
 */
#ifndef CALIB_INT_H
#define CALIB_INT_H

#include <stdint.h>

#include "cs_calibrate.h"

/* Duplex links where both directions at once get less than 0.9 of one
 * (one connection both ways on ofi tcp;ofi_rxm: 0.49; on the emulated
 * cluster, the slow node sending to one node while receiving from another:
 * 0.83-0.86, and exchanging with a fast node: about 0.6; the fast nodes:
 * 0.95-1.0). */
#define CALIB_DUPLEX CS_PLAT_CALIB_RHO_MAX
#define CALIB_XCH_TRIALS 3 /* a node's exchange, tried again while it looks lossy */
/* The idle spell before each cold exchange (seconds): longer than TCP's
 * retransmission timeout, after which Linux restarts an idle connection
 * from its initial window (tcp_slow_start_after_idle), even where the
 * round trip under load is a few hundred milliseconds. */
#define CALIB_IDLE_S 2.0
#define CALIB_COLD_ITERS 3

/* ---- kernels (calib_kernel.c) ------------------------------------------------ *
 *
 * Every kernel is collective: all ranks call it in the same order with the
 * same arguments (the plan is computed identically on every rank), ranks
 * that take no part return at once or only join its barriers.  Tags come
 * from a counter every rank advances the same way, so a late message of
 * one kernel never matches another's receive.
 *
 *   pingpong   ranks a and b: `warm` untimed round trips of `bytes`, then
 *              timed ones until min_iters are done and budget_s has passed,
 *              or max_iters; rank a records each round trip / 2 (one-way
 *              time) and decides when to stop (the first byte of a ping
 *              tells b whether another follows).  Each side posts its next
 *              receive before it sends, so a receive is posted before its
 *              message arrives (the engine's order in a collective; tcp
 *              then skips its request-to-send round trip above 64 KiB).
 *   flows      concurrent one-way transfers src[i] -> dst[i] (a rank sends
 *              at most one flow and receives at most one): per iteration
 *              receives are posted, every rank meets at a barrier, the
 *              senders send; the iteration's time is the largest time from
 *              the barrier to a rank's last completion.  With idle_s > 0
 *              every rank first sleeps that long before each iteration
 *              (connections idle as between a collective's uses of
 *              them).  Full duplex (a->b and b->a at once) and the NIC a host's ranks share
 *              (every rank of a host sending off it at once) are flows.
 *   reduce     this rank alone: reduce `bytes` of src into dst with
 *              cs_reduce_fn (the engine's reduction), `iters` times.
 */
typedef struct cs__calib_kern cs__calib_kern_t;

/* Buffers for messages up to max_bytes (a send and a receive area,
 * registered with tp or allocated by its memory interface). */
int cs__calib_kern_open(cs_tp_t *tp, cs_boot_t *boot, size_t max_bytes, double timeout_s,
                        cs__calib_kern_t **out, cs_err_t *err);
void cs__calib_kern_close(cs__calib_kern_t *k); /* NULL is fine */

/* On rank a: t[0..*iters) (seconds, one way; t holds max_iters) and
 * *iters; untouched elsewhere.  bytes >= 1. */
int cs__calib_pingpong(cs__calib_kern_t *k, int a, int b, size_t bytes, int warm, int min_iters,
                       int max_iters, double budget_s, double *t, int *iters, cs_err_t *err);

/* t[0..iters) on every rank (seconds per iteration, the same everywhere);
 * rank_t[0..nranks) (may be NULL): each rank's median time from the
 * barrier to its receive's completion, its flow's time (a rank that only
 * sends: to its send's completion; a rank's own send does not count, so
 * a receiver whose send is slower still shows its flow); medians over the
 * first 64 iterations. */
int cs__calib_flows(cs__calib_kern_t *k, const int *src, const int *dst, int nflows,
                    size_t bytes, int warm, int iters, double idle_s, double *t, double *rank_t,
                    cs_err_t *err);

/* t[0..iters): seconds per reduction of `bytes` (local; no communication). */
int cs__calib_reduce(size_t bytes, cs_dtype_t dt, cs_op_t op, int iters, double *t,
                     cs_err_t *err);

/* ---- records (calib_record.c) ------------------------------------------------ */

/* The first rank and the ranks of every node (first[h] = -1 for a node
 * without ranks): arrays of rec->nnodes, malloc'ed by the caller. */
void cs__calib_nodes(const int *node_of, int nranks, int nnodes, int *first, int *count);

/* v as the shortest decimal (up to 17 digits) that reads back as v, times
 * 10^shift (shift 6: seconds written as microseconds); non-finite: 0. */
void cs__calib_num(FILE *f, double v, int shift);
/* The number text[0..n) times 10^-shift, correctly rounded: the inverse of
 * cs__calib_num.  CS_OK or CS_ERR_PARSE. */
int cs__calib_num_read(const char *text, size_t n, int shift, double *v);

/* ---- JSON (calib_json.c) ------------------------------------------------------ */

typedef struct cs__cj_val {
    char type;       /* 'o' object, 'a' array, 'n' number, 's' string, 'b' true / false, 'z' null */
    int line, col;   /* where it starts (1-based) */
    const char *key; /* its name in an object, else NULL */
    const char *s;   /* 's': the text (NUL-terminated); 'n': the number's text; 'b': "true"... */
    size_t n;        /* length of s */
    int kid, next;   /* first element or member, next sibling (-1: none) */
    int nkids;
} cs__cj_val_t;

typedef struct cs__cj {
    char *text;           /* the document, strings unescaped in place */
    cs__cj_val_t *v;      /* v[0]: the top value */
    size_t nv, cap;
    const char *name;     /* file name for messages */
} cs__cj_t;

/* Parse text[0..len) (copied); CS_OK, or CS_ERR_PARSE "NAME:LINE:COL: ..." */
int cs__cj_parse(cs__cj_t *j, const char *text, size_t len, const char *name, cs_err_t *err);
void cs__cj_free(cs__cj_t *j);
/* The member `key` of object o, or -1. */
int cs__cj_get(const cs__cj_t *j, int o, const char *key);
/* An error at value i: "NAME:LINE:COL: <fmt>", CS_ERR_PARSE. */
int cs__cj_err(const cs__cj_t *j, int i, cs_err_t *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* CALIB_INT_H */
