/*
 * cs_sim_xml.c - the device hosts of a platform's XML, in document order.
 *
 * SimGrid lists hosts sorted by name, but ranks follow the document order
 * of <host> elements carrying <prop id="device" value="gpu"/>
 * (platforms/cs_platform.h).  This is a small scanner, not an XML parser:
 * it skips comments, reads the id attribute of each <host ...> element and
 * looks for the device prop among the <prop> children up to </host>.  The
 * XML has already been validated by whoever produced it; SimGrid itself
 * reports malformed files when loading.
 */
#include <stdlib.h>
#include <string.h>

#include "cs_sim_int.h"

/* Value of attribute `name` inside tag text [t, end), copied to out. */
static int attr(const char *t, const char *end, const char *name, char *out, size_t outlen)
{
    size_t nl = strlen(name);
    for (const char *q = t; q + nl + 2 < end; q++) {
        if ((q == t || q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\n' || q[-1] == '\r') &&
            strncmp(q, name, nl) == 0) {
            const char *v = q + nl;
            while (v < end && (*v == ' ' || *v == '\t'))
                v++;
            if (v >= end || *v != '=')
                continue;
            v++;
            while (v < end && (*v == ' ' || *v == '\t'))
                v++;
            if (v >= end || (*v != '"' && *v != '\''))
                continue;
            char quote = *v++;
            const char *e = memchr(v, quote, (size_t)(end - v));
            if (!e || (size_t)(e - v) >= outlen)
                return -1;
            memcpy(out, v, (size_t)(e - v));
            out[e - v] = 0;
            return 0;
        }
    }
    return -1;
}

/* Does element content [c, end) hold <prop id="device" value="gpu"/>? */
static int has_device_prop(const char *c, const char *end)
{
    char id[64], val[64];
    for (const char *q = c; q && q < end; q++) {
        q = strstr(q, "<prop");
        if (!q || q >= end)
            return 0;
        const char *te = strchr(q, '>');
        if (!te)
            return 0;
        if (attr(q + 5, te, "id", id, sizeof(id)) == 0 && strcmp(id, "device") == 0 &&
            attr(q + 5, te, "value", val, sizeof(val)) == 0 && strcmp(val, "gpu") == 0)
            return 1;
    }
    return 0;
}

int cs__xml_devices(const char *xml, char ***names, int *n, cs_err_t *err)
{
    char **v = NULL;
    int cnt = 0, cap = 0;
    const char *q = xml;
    while ((q = strchr(q, '<')) != NULL) {
        if (strncmp(q, "<!--", 4) == 0) {
            const char *e = strstr(q, "-->");
            if (!e)
                break;
            q = e + 3;
            continue;
        }
        if (strncmp(q, "<host", 5) != 0 || !(q[5] == ' ' || q[5] == '\t' || q[5] == '\n' ||
                                            q[5] == '\r')) {
            q++;
            continue;
        }
        const char *te = strchr(q, '>');
        if (!te)
            break;
        int selfclosing = te[-1] == '/';
        const char *ce = selfclosing ? te : strstr(te, "</host>");
        if (!ce)
            ce = te;
        char id[256];
        if (!selfclosing && has_device_prop(te, ce) && attr(q + 5, te, "id", id, sizeof(id)) == 0) {
            if (cnt == cap) {
                int nc = cap ? cap * 2 : 64;
                char **nv = realloc(v, sizeof(char *) * (size_t)nc);
                if (!nv)
                    goto nomem;
                v = nv;
                cap = nc;
            }
            v[cnt] = strdup(id);
            if (!v[cnt])
                goto nomem;
            cnt++;
        }
        q = ce;
    }
    *names = v;
    *n = cnt;
    return CS_OK;
nomem:
    for (int i = 0; i < cnt; i++)
        free(v[i]);
    free(v);
    return cs_err_set(err, CS_ERR_NOMEM, "sim: out of memory listing devices");
}
