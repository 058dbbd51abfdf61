/*
 * test_tp_open.c - cs_tp_open's table of transports (exec/cs_transport.c):
 * every listed name opens its transport for one rank (shm, tcp on the
 * loopback) with ops tables of this build's size; "libfabric" and no name
 * are the same transport as "ofi" (whatever libfabric answers here, the
 * three answer alike); an unknown name is CS_ERR_NOTFOUND with the known
 * names in the message and *out untouched.
 */
#include <string.h>

#include "cs_test.h"
#include "cs_transport.h"

static int open_close(const char *name, const char *node, char *msg, size_t cap)
{
    cs_tp_config_t cfg = {0, 1, NULL, node, 0, 5};
    cs_tp_t *tp = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    int st = cs_tp_open(name, &cfg, &tp, &err);
    snprintf(msg, cap, "%s", err.msg);
    if (st == CS_OK) {
        CS_TEST_CHECK(tp != NULL && tp->ops->size == sizeof(cs_tp_ops_t),
                      "%s: an ops table of this build", name ? name : "(default)");
        cs_tp_close(tp);
    } else {
        CS_TEST_CHECK(tp == NULL, "%s: failed without a transport", name ? name : "(default)");
    }
    return st;
}

int main(void)
{
    char msg[512];
    int st = open_close("shm", NULL, msg, sizeof(msg));
    CS_TEST_CHECK(st == CS_OK, "shm opens for one rank: %s", msg);
    st = open_close("tcp", "127.0.0.1", msg, sizeof(msg));
    CS_TEST_CHECK(st == CS_OK, "tcp opens for one rank on the loopback: %s", msg);

    int ofi = open_close("ofi", NULL, msg, sizeof(msg));
    int alias = open_close("libfabric", NULL, msg, sizeof(msg));
    int dflt = open_close(NULL, NULL, msg, sizeof(msg));
    CS_TEST_CHECK(alias == ofi && dflt == ofi, "libfabric %d and the default %d are ofi (%d)",
                  alias, dflt, ofi);

    cs_tp_config_t cfg = {0, 1, NULL, NULL, 0, 5};
    cs_tp_t *tp = (cs_tp_t *)&cfg; /* any non-NULL value: must stay */
    cs_err_t err;
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_tp_open("nope", &cfg, &tp, &err) == CS_ERR_NOTFOUND, "unknown name");
    CS_TEST_CHECK(strcmp(err.msg, "unknown transport 'nope' (known: ofi, shm, tcp)") == 0,
                  "message: %s", err.msg);
    CS_TEST_CHECK(tp == (cs_tp_t *)&cfg, "*out untouched");
    return cs_test_finish();
}
