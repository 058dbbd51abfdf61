/*
 * cs_transport.c - the shared "not supported" stubs and the table of
 * transports by name.  A transport points missing operations here so the
 * engine never tests for NULL; cs_tp_open finds the transport's open
 * function in the table and checks the size each ops table was built with.
 */
#include <stdio.h>
#include <string.h>

#include "cs_intr.h"

#include "cs_transport.h"

int cs_tp_nosup_get_addr(cs_tp_t *tp, void *buf, size_t *len)
{
    (void)tp, (void)buf, (void)len;
    return CS_ERR_UNSUPPORTED;
}

int cs_tp_nosup_insert_addrs(cs_tp_t *tp, const void *blobs, size_t slot, const size_t *lens)
{
    (void)tp, (void)blobs, (void)slot, (void)lens;
    return CS_ERR_UNSUPPORTED;
}

int cs_tp_nosup_mr_reg(cs_tp_t *tp, void *buf, size_t len, void **mr)
{
    (void)tp, (void)buf, (void)len, (void)mr;
    return CS_ERR_UNSUPPORTED;
}

void cs_tp_nosup_mr_dereg(cs_tp_t *tp, void *mr)
{
    (void)tp, (void)mr;
}

int cs_tp_nosup_cancel(cs_tp_t *tp, cs_tp_req_t *req)
{
    (void)tp, (void)req;
    return CS_ERR_UNSUPPORTED;
}

void cs_tp_nosup_leave(cs_tp_t *tp, int sig)
{
    (void)tp, (void)sig;
}

void cs__tp_peer_left(cs_tp_t *tp, int rank, int sig)
{
    if (!tp->left_peer) {
        tp->left_sig = sig;
        tp->left_peer = rank + 1;
    }
    cs_intr_note_peer(rank, sig);
}

int cs_tp_left_why(const cs_tp_t *tp, char *buf, size_t cap)
{
    int sig = 0, r = tp && tp->left_peer ? tp->left_peer - 1 : cs_intr_peer(&sig);
    if (tp && tp->left_peer)
        sig = tp->left_sig;
    if (r < 0)
        return -1;
    cs_tp_left_text(r, sig, buf, cap);
    return r;
}

void cs_tp_left_text(int rank, int sig, char *buf, size_t cap)
{
    if (sig > 0)
        snprintf(buf, cap, "rank %d was interrupted (%s)", rank, cs_intr_signame(sig));
    else
        snprintf(buf, cap, "rank %d left the job", rank);
}

/* A transport built against another cs_transport.h (a wrapper or a
 * transport compiled apart) would call through a table of another layout:
 * the first member of each table says which it was built for. */
static int check_tables(cs_tp_t *tp, const char *name, cs_err_t *err)
{
    size_t ops = tp->ops->size, mem = tp->mem ? tp->mem->size : sizeof(cs_tp_mem_ops_t);
    if (ops == sizeof(cs_tp_ops_t) && mem == sizeof(cs_tp_mem_ops_t))
        return CS_OK;
    tp->ops->close(tp);
    return cs_err_set(err, CS_ERR_MISMATCH,
                      "transport '%s' was built for another cs_transport.h (ops table of %zu "
                      "bytes, memory table of %zu; this build: %zu and %zu)",
                      name, ops, mem, sizeof(cs_tp_ops_t), sizeof(cs_tp_mem_ops_t));
}

/* The transports by name; the first row is the default (name NULL), an
 * alias row repeats the open function of the row before it. */
static const struct {
    const char *name;
    int (*open)(const cs_tp_config_t *cfg, cs_tp_t **out, cs_err_t *err);
    int alias; /* not listed among the known names */
} transports[] = {
    {"ofi", cs_tp_ofi_open, 0},
    {"libfabric", cs_tp_ofi_open, 1},
    {"shm", cs_tp_shm_open, 0},
    {"tcp", cs_tp_tcp_open, 0},
};
#define NTRANSPORTS (sizeof(transports) / sizeof(transports[0]))

int cs_tp_open(const char *name, const cs_tp_config_t *cfg, cs_tp_t **out, cs_err_t *err)
{
    size_t i = 0;
    while (name && i < NTRANSPORTS && strcmp(name, transports[i].name) != 0)
        i++;
    if (i == NTRANSPORTS) {
        char known[128];
        size_t len = 0;
        known[0] = 0;
        for (size_t k = 0; k < NTRANSPORTS; k++)
            if (!transports[k].alias && len < sizeof(known))
                len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s",
                                        len ? ", " : "", transports[k].name);
        return cs_err_set(err, CS_ERR_NOTFOUND, "unknown transport '%s' (known: %s)", name,
                          known);
    }
    int st = transports[i].open(cfg, out, err);
    if (st != CS_OK)
        return st;
    st = check_tables(*out, name ? name : transports[0].name, err);
    if (st != CS_OK)
        *out = NULL;
    return st;
}
