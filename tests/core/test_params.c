/* Parameter lists: parsing, typed getters, unknown keys. */
#include <string.h>

#include "cs_params.h"
#include "cs_test.h"

int main(void)
{
    cs_params_t p;
    cs_err_t err = {0};
    long v = 0;
    int dims[4];
    cs_params_init(&p);
    CS_TEST_CHECK(cs_params_parse(&p, "chunks=4,dims=6x256", &err) == CS_OK, "%s", err.msg);
    CS_TEST_CHECK(cs_params_get_int(&p, "chunks", 1, 1, 64, &v, &err) == CS_OK && v == 4, "int");
    CS_TEST_CHECK(cs_params_get_int(&p, "absent", 7, 1, 64, &v, &err) == CS_OK && v == 7, "default");
    CS_TEST_CHECK(cs_params_get_dims(&p, "dims", dims, 4, &err) == 2 && dims[0] == 6 && dims[1] == 256,
                  "dims");
    CS_TEST_CHECK(cs_params_check_unused(&p, "x", &err) == CS_OK, "all used");
    CS_TEST_CHECK(cs_params_parse(&p, "extra=1", &err) == CS_OK, "parse");
    CS_TEST_CHECK(cs_params_check_unused(&p, "ring", &err) == CS_ERR_INVAL && strstr(err.msg, "extra"),
                  "unknown key named: %s", err.msg);
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_params_parse(&p, "chunks=x", &err) == CS_OK, "set");
    CS_TEST_CHECK(cs_params_get_int(&p, "chunks", 1, 1, 64, &v, &err) == CS_ERR_PARSE &&
                      strstr(err.msg, "found 'x'"),
                  "bad int: %s", err.msg);
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_params_parse(&p, "novalue", &err) == CS_ERR_PARSE, "missing '='");
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_params_parse(&p, "d=6x", &err) == CS_OK, "set");
    CS_TEST_CHECK(cs_params_get_dims(&p, "d", dims, 4, &err) < 0, "trailing x");
    return cs_test_finish();
}
