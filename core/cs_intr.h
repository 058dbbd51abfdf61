/*
 * cs_intr.h - the process-wide interrupt flag: SIGINT, SIGTERM and SIGHUP
 * stop a long command cleanly instead of killing it mid-write.
 *
 * cs_intr_install() sets handlers that only record the signal (an
 * async-signal-safe store).  Long loops (the live engine, the transports'
 * and the bootstrap's waits, the simulator's sweeps) test cs_intr_pending()
 * where they already test for progress or a deadline, fail with
 * CS_ERR_INTERRUPTED, and their callers clean up on the way out (partial
 * outputs removed, peers told) and exit with cs_intr_exit_code() (130 for
 * SIGINT, 143 for SIGTERM).  A second signal while the first is being
 * handled takes the default action (the process dies at once), so a user
 * can always kill a command that got stuck cleaning up.
 *
 * A live run also records here why it lost a peer when that peer said it
 * was interrupted (cs_intr_note_peer): the first such report wins, and the
 * transports and the bootstrap pass it on to the ranks that did not hear it
 * themselves, so every rank can name the rank that was interrupted.
 *
 * Without cs_intr_install() nothing changes: the flag stays 0 (a library
 * user keeps its own signal handling) unless cs_intr_raise() sets it.
 */
#ifndef CS_INTR_H
#define CS_INTR_H

#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

extern volatile sig_atomic_t cs__intr_sig; /* cs_intr.c; read through cs_intr_pending */

/* Install the handlers of SIGINT, SIGTERM and SIGHUP (idempotent).  A
 * signal the process ignores (nohup, a background job's SIGINT) stays
 * ignored.  CS_OK or CS_ERR_IO (sigaction failed, errno kept). */
int cs_intr_install(void);

/* Put the handlers cs_intr_install replaced back (the flag is kept). */
void cs_intr_uninstall(void);

/* The signal recorded (SIGINT, SIGTERM, SIGHUP), or 0.  A plain load: fit
 * for every round of a progress loop. */
static inline int cs_intr_pending(void)
{
    return cs__intr_sig;
}

/* 128 + the signal recorded (the shell's convention: 130 for SIGINT, 143
 * for SIGTERM, 129 for SIGHUP); 0 when none was. */
int cs_intr_exit_code(void);

/* Record `sig` as if it had been delivered (tests; a caller that learnt of
 * a stop request otherwise); the first signal recorded wins. */
void cs_intr_raise(int sig);

/* Forget the signal and the peer recorded (tests). */
void cs_intr_clear(void);

/* "SIGINT", "SIGTERM", "SIGHUP", or "signal N". */
const char *cs_intr_signame(int sig);

/* A peer of a live run (rank) announced that it left because of signal
 * `sig`: remember the first one (later calls are ignored). */
void cs_intr_note_peer(int rank, int sig);

/* The peer recorded by cs_intr_note_peer, or -1; *sig (may be NULL) gets
 * its signal. */
int cs_intr_peer(int *sig);

#ifdef __cplusplus
}
#endif

#endif /* CS_INTR_H */
