/*
 * cs_plat_devname.c - the device names of ranks' hosts (cs_platform.h,
 * cs_platform_device_names): a file's `device_name` host properties, read
 * with libxml2 from the parsed file in one walk, then looked up by name.
 */
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "cs_grow.h"
#include "cs_plat_file.h"
#include "cs_platform.h"

typedef struct named {
    char *host, *name;
} named_t;

typedef struct names {
    named_t *v;
    size_t n, cap;
    int fail;
} names_t;

static int is_elem(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

/* The value of the <prop id="device_name"> child of `host`, or NULL. */
static xmlChar *device_prop(const xmlNode *host)
{
    for (const xmlNode *c = host->children; c; c = c->next) {
        if (!is_elem(c, "prop"))
            continue;
        xmlChar *id = xmlGetProp(c, (const xmlChar *)"id");
        int hit = id && strcmp((const char *)id, "device_name") == 0;
        xmlFree(id);
        if (hit)
            return xmlGetProp(c, (const xmlChar *)"value");
    }
    return NULL;
}

static void walk(const xmlNode *parent, names_t *nm)
{
    for (const xmlNode *n = parent->children; n && !nm->fail; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        xmlChar *val = is_elem(n, "host") ? device_prop(n) : NULL;
        if (val) {
            xmlChar *id = xmlGetProp(n, (const xmlChar *)"id");
            if (cs_grow(&nm->v, &nm->cap, nm->n + 1, sizeof(named_t), 16) == 0) {
                named_t *e = &nm->v[nm->n];
                e->host = strdup(id ? (const char *)id : "");
                e->name = strdup((const char *)val);
                nm->n += e->host && e->name;
                nm->fail = !e->host || !e->name;
                if (nm->fail)
                    free(e->host), free(e->name);
            } else {
                nm->fail = 1;
            }
            xmlFree(id);
            xmlFree(val);
        }
        walk(n, nm);
    }
}

static int cmp_named(const void *a, const void *b)
{
    return strcmp(((const named_t *)a)->host, ((const named_t *)b)->host);
}

int cs_platform_device_names(const cs_platform_t *p, const char *const *hosts, int n,
                             char ***out, cs_err_t *err)
{
    names_t nm = {0};
    const cs__pfile_t *f = p->is_file ? p->file : NULL;
    if (f && f->doc)
        walk((const xmlNode *)f->doc, &nm);
    if (!nm.fail && nm.n > 1)
        qsort(nm.v, nm.n, sizeof(named_t), cmp_named);
    char **v = nm.fail ? NULL : calloc((size_t)(n > 0 ? n : 1), sizeof(char *));
    int st = v ? CS_OK : CS_ERR_NOMEM;
    for (int r = 0; r < n && st == CS_OK; r++) {
        named_t key = {(char *)hosts[r], NULL};
        const named_t *hit = nm.n ? bsearch(&key, nm.v, nm.n, sizeof(named_t), cmp_named) : NULL;
        v[r] = strdup(hit ? hit->name : p->is_file ? "" : p->name);
        st = v[r] ? CS_OK : CS_ERR_NOMEM;
    }
    for (size_t i = 0; i < nm.n; i++)
        free(nm.v[i].host), free(nm.v[i].name);
    free(nm.v);
    if (st != CS_OK) {
        cs_platform_names_free(v, n);
        return cs_err_set(err, st, "out of memory");
    }
    *out = v;
    return CS_OK;
}

void cs_platform_names_free(char **v, int n)
{
    for (int i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}
