/* cs_status.c - status names/messages and the error record. */
#include "cs_status.h"

#include <stdio.h>
#include <string.h>

const char *cs_status_name(int st)
{
    switch (st) {
#define CS__NAME(name, val, msg) \
    case val:                    \
        return #name;
        CS_STATUS_LIST(CS__NAME)
#undef CS__NAME
    }
    return "CS_ERR_UNKNOWN";
}

const char *cs_status_str(int st)
{
    switch (st) {
#define CS__MSG(name, val, msg) \
    case val:                   \
        return msg;
        CS_STATUS_LIST(CS__MSG)
#undef CS__MSG
    }
    return "unknown status";
}

int cs_err_vset(cs_err_t *err, int code, const char *fmt, va_list ap)
{
    if (err == NULL || err->code != CS_OK)
        return code;
    err->code = code;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    return code;
}

int cs_err_set(cs_err_t *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cs_err_vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}

void cs_err_clear(cs_err_t *err)
{
    if (err == NULL)
        return;
    err->code = CS_OK;
    err->msg[0] = '\0';
}
