/*
 * sim_fix.c - see sim_fix.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_fix.h"

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf_t;

static void put(sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#include <stdarg.h>
static void put(sbuf_t *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (b->p && (size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        b->cap = b->cap * 2 + (size_t)k + 4096;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            abort();
    }
}

static void header(sbuf_t *b)
{
    put(b, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
           "<platform version=\"4.1\">\n");
}

static void host(sbuf_t *b, const char *id, double speed)
{
    put(b, "  <host id=\"%s\" speed=\"%.17gf\"><prop id=\"device\" value=\"gpu\"/></host>\n", id,
        speed);
}

static void link_(sbuf_t *b, const char *id, double bw, double lat, const char *tier)
{
    put(b,
        "  <link id=\"%s\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" sharing_policy=\"SPLITDUPLEX\">"
        "<prop id=\"tier\" value=\"%s\"/></link>\n",
        id, bw, lat, tier);
}

static void up_down(sbuf_t *b, const char *a, const char *sw, const char *l)
{
    put(b, "  <route src=\"%s\" dst=\"%s\" symmetrical=\"NO\"><link_ctn id=\"%s\" direction=\"UP\"/></route>\n",
        a, sw, l);
    put(b, "  <route src=\"%s\" dst=\"%s\" symmetrical=\"NO\"><link_ctn id=\"%s\" direction=\"DOWN\"/></route>\n",
        sw, a, l);
}

static void tier(cs_platform_t *p, const char *name, uint64_t n, double bw, double lat)
{
    cs_tier_info_t *t = &p->tiers[p->ntiers++];
    snprintf(t->name, sizeof(t->name), "%s", name);
    t->nlinks = n;
    t->bandwidth = bw;
    t->latency = lat;
    t->lat_factor = t->bw_factor = 1.0;
}

void fix_star(cs_platform_t *p, int n, double lat, double bw, double speed)
{
    sbuf_t b = {0};
    char id[32], l[32];
    memset(p, 0, sizeof(*p));
    header(&b);
    put(&b, " <zone id=\"star\" routing=\"Floyd\">\n");
    for (int i = 0; i < n; i++) {
        snprintf(id, sizeof(id), "g%d", i);
        host(&b, id, speed);
    }
    put(&b, "  <router id=\"sw\"/>\n");
    for (int i = 0; i < n; i++) {
        snprintf(l, sizeof(l), "l%d", i);
        link_(&b, l, bw, lat, "nic");
    }
    for (int i = 0; i < n; i++) {
        snprintf(id, sizeof(id), "g%d", i);
        snprintf(l, sizeof(l), "l%d", i);
        up_down(&b, id, "sw", l);
    }
    put(&b, " </zone>\n</platform>\n");
    snprintf(p->name, sizeof(p->name), "star%d", n);
    snprintf(p->spec, sizeof(p->spec), "star%d", n);
    p->xml = b.p;
    p->ndevices = (uint64_t)n;
    p->ndims = 1;
    p->dims[0] = n;
    tier(p, "nic", (uint64_t)n, bw, lat);
}

void fix_two_level(cs_platform_t *p, int nodes, int per, double lat_in, double bw_in,
                   double lat_out, double bw_out, double speed)
{
    sbuf_t b = {0};
    char id[32], l[32], sw[32];
    memset(p, 0, sizeof(*p));
    header(&b);
    put(&b, " <zone id=\"fabric\" routing=\"Floyd\">\n");
    for (int nd = 0; nd < nodes; nd++)
        for (int i = 0; i < per; i++) {
            snprintf(id, sizeof(id), "n%d_g%d", nd, i);
            host(&b, id, speed);
        }
    put(&b, "  <router id=\"core\"/>\n");
    for (int nd = 0; nd < nodes; nd++) {
        snprintf(sw, sizeof(sw), "sw%d", nd);
        put(&b, "  <router id=\"%s\"/>\n", sw);
        snprintf(l, sizeof(l), "nic%d", nd);
        link_(&b, l, bw_out, lat_out, "nic");
        for (int i = 0; i < per; i++) {
            snprintf(l, sizeof(l), "nv%d_%d", nd, i);
            link_(&b, l, bw_in, lat_in, "nvlink");
        }
    }
    for (int nd = 0; nd < nodes; nd++) {
        snprintf(sw, sizeof(sw), "sw%d", nd);
        snprintf(l, sizeof(l), "nic%d", nd);
        up_down(&b, sw, "core", l);
        for (int i = 0; i < per; i++) {
            snprintf(id, sizeof(id), "n%d_g%d", nd, i);
            snprintf(l, sizeof(l), "nv%d_%d", nd, i);
            up_down(&b, id, sw, l);
        }
    }
    put(&b, " </zone>\n</platform>\n");
    snprintf(p->name, sizeof(p->name), "twolevel%dx%d", nodes, per);
    snprintf(p->spec, sizeof(p->spec), "twolevel%dx%d", nodes, per);
    p->xml = b.p;
    p->ndevices = (uint64_t)nodes * (uint64_t)per;
    p->ndims = 2;
    p->dims[0] = per;
    p->dims[1] = nodes;
    tier(p, "nvlink", (uint64_t)(nodes * per), bw_in, lat_in);
    tier(p, "nic", (uint64_t)nodes, bw_out, lat_out);
}

void fix_platform_fini(cs_platform_t *p)
{
    free(p->xml);
    free(p->description);
    p->xml = p->description = NULL;
}

cs_sched_t *fix_ring(int P)
{
    cs_coll_desc_t d = {CS_COLL_ALLREDUCE, P, 0, 0};
    cs_err_t err = {0};
    cs_sched_t *s = cs_sched_create(&d, (uint32_t)P, &err);
    if (!s)
        return NULL;
    for (int r = 0; r < P; r++) {
        int next = (r + 1) % P, prev = (r + P - 1) % P;
        uint32_t last = (uint32_t)cs_copy(s, r, cs_rng(CS_BUF_IN, 0, (uint32_t)P),
                                          cs_rng(CS_BUF_OUT, 0, (uint32_t)P), NULL, 0);
        /* reduce-scatter: at step k send chunk r-k, reduce chunk r-k-1 */
        for (int k = 0; k < P - 1; k++) {
            uint32_t cs_ = (uint32_t)((r - k + 2 * P) % P), cr = (uint32_t)((r - k - 1 + 2 * P) % P);
            cs_send(s, r, next, 0, cs_rng(CS_BUF_OUT, cs_, 1), &last, 1);
            last = (uint32_t)cs_rrecv(s, r, prev, 0, cs_rng(CS_BUF_OUT, cr, 1), &last, 1);
        }
        /* allgather: at step k send chunk r+1-k, receive chunk r-k */
        for (int k = 0; k < P - 1; k++) {
            uint32_t cs_ = (uint32_t)((r + 1 - k + 2 * P) % P), cr = (uint32_t)((r - k + 2 * P) % P);
            cs_send(s, r, next, 0, cs_rng(CS_BUF_OUT, cs_, 1), &last, 1);
            last = (uint32_t)cs_recv(s, r, prev, 0, cs_rng(CS_BUF_OUT, cr, 1), &last, 1);
        }
    }
    if (cs_sched_status(s) != CS_OK) {
        cs_sched_destroy(s);
        return NULL;
    }
    cs_sched_set_meta(s, "fixring", "");
    return s;
}
