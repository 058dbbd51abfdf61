/*
 * cs_intr.c - the interrupt flag (contract in cs_intr.h).
 *
 * The handler stores the signal number into a sig_atomic_t and returns;
 * SA_RESTART keeps the stdio and file calls of the main program working
 * (poll and nanosleep, which the waits use, return EINTR whatever the flag,
 * and every wait of collstep sleeps in slices short enough to look at the
 * flag anyway, whichever thread the kernel hands the signal to).  When a
 * signal is already recorded, the handler restores the default action and
 * raises the signal again: the second Ctrl-C kills.
 */
#include "cs_intr.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cs_status.h"

volatile sig_atomic_t cs__intr_sig;

static const int intr_sigs[] = {SIGINT, SIGTERM, SIGHUP};
#define NSIGS (int)(sizeof(intr_sigs) / sizeof(intr_sigs[0]))
static struct sigaction intr_old[NSIGS];
static int intr_installed[NSIGS];

/* The peer that said it was interrupted (cs_intr_note_peer), set once:
 * (rank + 1) << 32 | signal; 0: none. */
static uint64_t intr_peer;

static void intr_handler(int sig)
{
    if (cs__intr_sig == 0) {
        cs__intr_sig = sig;
        return;
    }
    /* the second one: the default action (async-signal-safe calls only) */
    int saved = errno;
    signal(sig, SIG_DFL);
    raise(sig);
    errno = saved;
}

int cs_intr_install(void)
{
    for (int i = 0; i < NSIGS; i++) {
        if (intr_installed[i])
            continue;
        struct sigaction cur;
        if (sigaction(intr_sigs[i], NULL, &cur) != 0)
            return CS_ERR_IO;
        if (cur.sa_handler == SIG_IGN)
            continue; /* nohup, or a background job: the user asked for it */
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = intr_handler;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        if (sigaction(intr_sigs[i], &sa, &intr_old[i]) != 0)
            return CS_ERR_IO;
        intr_installed[i] = 1;
    }
    return CS_OK;
}

void cs_intr_uninstall(void)
{
    for (int i = 0; i < NSIGS; i++)
        if (intr_installed[i]) {
            sigaction(intr_sigs[i], &intr_old[i], NULL);
            intr_installed[i] = 0;
        }
}

int cs_intr_exit_code(void)
{
    int sig = cs__intr_sig;
    return sig ? 128 + sig : 0;
}

void cs_intr_raise(int sig)
{
    if (sig > 0 && cs__intr_sig == 0)
        cs__intr_sig = sig;
}

void cs_intr_clear(void)
{
    cs__intr_sig = 0;
    __atomic_store_n(&intr_peer, 0, __ATOMIC_RELEASE);
}

const char *cs_intr_signame(int sig)
{
    static __thread char buf[24];
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGKILL: return "SIGKILL";
    case SIGQUIT: return "SIGQUIT";
    default:
        snprintf(buf, sizeof(buf), "signal %d", sig);
        return buf;
    }
}

void cs_intr_note_peer(int rank, int sig)
{
    uint64_t none = 0, v = (uint64_t)(uint32_t)(rank + 1) << 32 | (uint32_t)sig;
    if (rank >= 0)
        __atomic_compare_exchange_n(&intr_peer, &none, v, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE);
}

int cs_intr_peer(int *sig)
{
    uint64_t v = __atomic_load_n(&intr_peer, __ATOMIC_ACQUIRE);
    if (v == 0)
        return -1;
    if (sig)
        *sig = (int)(uint32_t)v;
    return (int)(v >> 32) - 1;
}
