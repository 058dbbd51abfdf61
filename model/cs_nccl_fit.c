/*
 * cs_nccl_fit.c - terms of the nccl model fitted to measurements: the
 * factors a platform file carries in its collstep_nccl_fit property
 * (cs_nccl.h says what each multiplies), their text, and how they change
 * what an instance pays.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_nccl.h"

#define FIT_MIN 1e-3
#define FIT_MAX 1e3

static const char *const class_names[CS_SIM_HW_COUNT] = {"nvlink", "pci", "net"};

const char *cs_nccl_fit_class_name(int cls)
{
    return cls >= 0 && cls < CS_SIM_HW_COUNT ? class_names[cls] : "?";
}

int cs_nccl_fit_class_parse(const char *s, size_t len)
{
    for (int c = 0; c < CS_SIM_HW_COUNT; c++)
        if (strlen(class_names[c]) == len && strncmp(s, class_names[c], len) == 0)
            return c;
    return -1;
}

void cs_nccl_fit_init(cs_nccl_fit_t *f)
{
    memset(f, 0, sizeof(*f));
    for (int c = 0; c < CS_SIM_HW_COUNT; c++)
        f->bw[c] = f->lat[c] = 1.0, f->base[c] = 0;
}

int cs_nccl_fit_is_identity(const cs_nccl_fit_t *f)
{
    for (int c = 0; c < CS_SIM_HW_COUNT; c++)
        if ((f->bw[c] > 0 && f->bw[c] != 1.0) || (f->lat[c] > 0 && f->lat[c] != 1.0) ||
            (f->base[c] > 0 && f->base[c] != 1.0))
            return 0;
    for (int i = 0; i < f->n; i++)
        if ((f->ref[i].bw > 0 && f->ref[i].bw != 1.0) ||
            (f->ref[i].lat > 0 && f->ref[i].lat != 1.0) ||
            (f->ref[i].base > 0 && f->ref[i].base != 1.0))
            return 0;
    return 1;
}

int cs_nccl_fit_switch_pair(int algo, int cls)
{
    if (algo == CS_NCCL_NVLS || algo == CS_NCCL_NVLS_TREE)
        return cls == CS_SIM_HW_NVLINK;
    if (algo == CS_NCCL_COLLNET_DIRECT || algo == CS_NCCL_COLLNET_CHAIN)
        return cls == CS_SIM_HW_NET;
    return 0;
}

static cs_nccl_fit_ref_t *find(const cs_nccl_fit_t *f, int cls, int algo, int proto)
{
    for (int i = 0; i < f->n; i++)
        if (f->ref[i].cls == cls && f->ref[i].algo == algo && f->ref[i].proto == proto)
            return (cs_nccl_fit_ref_t *)&f->ref[i];
    return NULL;
}

/* The pair's own factor, 0 when it has none. */
static double pair_value(const cs_nccl_fit_t *f, int cls, int algo, int proto, int kind)
{
    const cs_nccl_fit_ref_t *r = find(f, cls, algo, proto);
    return r ? (kind == CS_NCCL_FIT_BASE ? r->base : kind ? r->lat : r->bw) : 0;
}

double cs_nccl_fit_get(const cs_nccl_fit_t *f, int cls, int algo, int proto, int kind)
{
    if (cls < 0 || cls >= CS_SIM_HW_COUNT)
        return 1.0;
    double v = pair_value(f, cls, algo, proto, kind);
    if (v <= 0)
        v = kind == CS_NCCL_FIT_BASE ? f->base[cls] : kind ? f->lat[cls] : f->bw[cls];
    /* no base factor: inside a node the latency's; across nodes none (the
     * network adds no fixed cost to NCCL's base latency unless fitted) */
    if (v <= 0 && kind == CS_NCCL_FIT_BASE && cls != CS_SIM_HW_NET)
        return cs_nccl_fit_get(f, cls, algo, proto, CS_NCCL_FIT_LAT);
    return v > 0 ? v : 1.0; /* a zeroed fit is no fit */
}

double cs_nccl_fit_pair(const cs_nccl_fit_t *f, int cls, int algo, int proto, int kind)
{
    if (cls < 0 || cls >= CS_SIM_HW_COUNT || algo < 0)
        return 1.0;
    double v = pair_value(f, cls, algo, proto, kind);
    return v > 0 ? v : 1.0;
}

int cs_nccl_fit_set(cs_nccl_fit_t *f, int cls, int algo, int proto, int kind, double v)
{
    if (cls < 0 || cls >= CS_SIM_HW_COUNT)
        return CS_ERR_INVAL;
    if (algo < 0) {
        (kind == CS_NCCL_FIT_BASE ? f->base : kind ? f->lat : f->bw)[cls] = v;
        return CS_OK;
    }
    cs_nccl_fit_ref_t *r = find(f, cls, algo, proto);
    if (!r) {
        if (f->n == CS_NCCL_FIT_MAX)
            return CS_ERR_INVAL;
        r = &f->ref[f->n++];
        *r = (cs_nccl_fit_ref_t){cls, algo, proto, 0, 0, 0};
    }
    if (kind == CS_NCCL_FIT_BASE)
        r->base = v;
    else if (kind)
        r->lat = v;
    else
        r->bw = v;
    return CS_OK;
}

static int term_error(cs_err_t *err, const char *where, int n, const char *t, size_t len,
                      const char *what)
{
    return cs_err_set(err, CS_ERR_PARSE,
                      "%s: collstep_nccl_fit term %d '%.*s': %s (terms: CLASS.bw=F, CLASS.lat=F, "
                      "CLASS.base=F, CLASS.bw.ALGO/PROTO=F, ...; CLASS nvlink, pci or net; "
                      "F from %g to %g)",
                      where, n, (int)(len > 80 ? 80 : len), t, what, FIT_MIN, FIT_MAX);
}

/* One term t[0..len). */
static int parse_term(const char *t, size_t len, const char *where, int n, cs_nccl_fit_t *f,
                      unsigned *seen, cs_err_t *err)
{
    char buf[128];
    if (len >= sizeof(buf))
        return term_error(err, where, n, t, len, "too long");
    memcpy(buf, t, len);
    buf[len] = '\0';
    char *eq = strchr(buf, '=');
    if (!eq)
        return term_error(err, where, n, t, len, "expected NAME=F");
    *eq = '\0';
    char *dot = strchr(buf, '.');
    if (!dot)
        return term_error(err, where, n, t, len,
                          "expected CLASS.bw, CLASS.lat or CLASS.base before '='");
    int cls = cs_nccl_fit_class_parse(buf, (size_t)(dot - buf));
    if (cls < 0)
        return term_error(err, where, n, t, len, "unknown class (nvlink, pci, net)");
    char *what = dot + 1, *pair = strchr(what, '.');
    if (pair)
        *pair++ = '\0';
    int kind = strcmp(what, "base") == 0 ? CS_NCCL_FIT_BASE
               : strcmp(what, "lat") == 0 ? CS_NCCL_FIT_LAT
               : strcmp(what, "bw") == 0  ? CS_NCCL_FIT_BW
                                          : -1;
    if (kind < 0)
        return term_error(err, where, n, t, len, "expected bw, lat or base after the class");
    int algo = -1, proto = -1;
    if (pair) {
        char *sl = strchr(pair, '/');
        if (!sl)
            return term_error(err, where, n, t, len, "expected ALGO/PROTO after bw., lat. or base.");
        *sl = '\0';
        algo = cs_nccl_label_parse(pair);
        proto = cs_nccl_proto_parse(sl + 1);
        if (algo >= 0 && algo != CS_NCCL_RING && algo != CS_NCCL_TREE && proto >= 0 &&
            proto != CS_NCCL_SIMPLE)
            return term_error(err, where, n, t, len,
                              algo == CS_NCCL_P2P
                                  ? "P2P (NCCL's send/receive path) runs Simple only: P2P/Simple"
                                  : "this algorithm runs Simple only (NCCL has LL and LL128 for "
                                    "Ring and Tree): ALGO/Simple");
        if (algo < 0 || proto < 0)
            return term_error(err, where, n, t, len,
                              algo < 0 ? "unknown algorithm (Tree, Ring, CollNetDirect, "
                                         "CollNetChain, NVLS, NVLSTree, PAT, P2P)"
                                       : "unknown protocol (LL, LL128, Simple)");
    }
    char *end;
    const char *num = eq + 1;
    double v = strtod(num, &end);
    if (end == num || *end || !isfinite(v) || v < FIT_MIN || v > FIT_MAX)
        return term_error(err, where, n, t, len, "expected a factor F after '='");
    if (pair ? pair_value(f, cls, algo, proto, kind) > 0 : (*seen >> (cls * CS_NCCL_FIT_NKINDS + kind)) & 1)
        return term_error(err, where, n, t, len, "given twice");
    if (!pair)
        *seen |= 1u << (cls * CS_NCCL_FIT_NKINDS + kind);
    if (cs_nccl_fit_set(f, cls, algo, proto, kind, v) != CS_OK)
        return term_error(err, where, n, t, len, "too many pairs");
    return CS_OK;
}

int cs_nccl_fit_parse(const char *text, const char *where, cs_nccl_fit_t *f, cs_err_t *err)
{
    cs_nccl_fit_init(f);
    int n = 0;
    unsigned seen = 0; /* class-wide terms given */
    for (const char *p = text; p && *p;) {
        p += strspn(p, " \t\r\n,");
        if (!*p)
            break;
        size_t len = strcspn(p, " \t\r\n,");
        int st = parse_term(p, len, where, ++n, f, &seen, err);
        if (st != CS_OK)
            return st;
        p += len;
    }
    return CS_OK;
}

/* Two factors that differ beyond rounding (a class-wide factor that is one
 * pair's geometric mean comes back from exp(log(x))). */
static int differs(double a, double b)
{
    return fabs(a - b) > 1e-9 * fabs(b);
}

void cs_nccl_fit_format(const cs_nccl_fit_t *f, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
#define PUT(...)                                                                                  \
    do {                                                                                          \
        int w_ = snprintf(buf + o, o < len ? len - o : 0, __VA_ARGS__);                           \
        if (w_ > 0)                                                                               \
            o += (size_t)w_;                                                                      \
    } while (0)
    for (int c = 0; c < CS_SIM_HW_COUNT; c++) {
        if (f->bw[c] != 1.0)
            PUT("%s%s.bw=%.6g", o ? " " : "", class_names[c], f->bw[c]);
        if (f->lat[c] != 1.0)
            PUT("%s%s.lat=%.6g", o ? " " : "", class_names[c], f->lat[c]);
        if (f->base[c] > 0)
            PUT("%s%s.base=%.6g", o ? " " : "", class_names[c], f->base[c]);
    }
    for (int i = 0; i < f->n; i++) {
        const cs_nccl_fit_ref_t *r = &f->ref[i];
        const char *cn = class_names[r->cls], *an = cs_nccl_algo_name(r->algo),
                   *pn = cs_nccl_proto_name(r->proto);
        /* a pair equal to its class-wide factor goes without saying, but for
         * a switch's pair in its switch's class, whose switch takes the
         * pair's factor alone (1 without it: cs_nccl_fit_apply) */
        int sw = cs_nccl_fit_switch_pair(r->algo, r->cls);
        if (r->bw > 0 && (differs(r->bw, f->bw[r->cls]) || (sw && r->bw != 1.0)))
            PUT("%s%s.bw.%s/%s=%.6g", o ? " " : "", cn, an, pn, r->bw);
        if (r->lat > 0 && (differs(r->lat, f->lat[r->cls]) || (sw && r->lat != 1.0)))
            PUT("%s%s.lat.%s/%s=%.6g", o ? " " : "", cn, an, pn, r->lat);
        if (r->base > 0 && (f->base[r->cls] <= 0 || differs(r->base, f->base[r->cls])))
            PUT("%s%s.base.%s/%s=%.6g", o ? " " : "", cn, an, pn, r->base);
    }
#undef PUT
    if (o >= len && len > 0)
        buf[len - 1] = '\0';
}

void cs_nccl_fit_apply(const cs_nccl_fit_t *f, const cs_nccl_sys_t *sys, int algo, int proto,
                       cs_sim_nccl_t *c)
{
    for (int k = 0; k < CS_SIM_HW_COUNT; k++) {
        double b = cs_nccl_fit_get(f, k, algo, proto, 0);
        double l = cs_nccl_fit_get(f, k, algo, proto, CS_NCCL_FIT_LAT);
        c->lat[k] *= l;
        c->hid_lat[k] *= l;
        c->eff[k] *= b;
        c->cap[k] *= b;
    }
    /* the base latency's factor is the class of NCCL's graph inside a
     * node */
    int g = algo >= 0 && algo < CS_NCCL_NALGOS && sys->graph[algo].nch > 0 ? algo : CS_NCCL_RING;
    /* NCCL's base latency takes the base factor (the latency's where none
     * is given); a switch's latency once (NVLS, NVLSTree, CollNet: their
     * base_lat) the latency factor */
    int swa = cs_nccl_fit_switch_pair(algo, CS_SIM_HW_NVLINK) ||
              cs_nccl_fit_switch_pair(algo, CS_SIM_HW_NET);
    double base0 = c->base_lat; /* NCCL's, before any factor */
    c->base_lat *= cs_nccl_fit_get(f, sys->graph[g].type_intra, algo, proto,
                                   swa ? CS_NCCL_FIT_LAT : CS_NCCL_FIT_BASE);
    /* across nodes the network's base factor F adds (F - 1) x NCCL's base
     * latency, whatever the links inside a node were fitted to: the fixed
     * cost a collective pays once for crossing the network, which a log at
     * one node count shows as a constant beside the per-step latencies
     * (two HGX H100 nodes, one GPU each: about 100 us over 32 MiB to 512
     * MiB, where NCCL's two network steps cost 30 us) */
    if (sys->nnodes > 1)
        c->base_lat = fmax(0.0, c->base_lat + (cs_nccl_fit_get(f, CS_SIM_HW_NET, algo, proto,
                                                               CS_NCCL_FIT_BASE) - 1.0) * base0);
    /* switches: NVLS on NVLink, CollNet on the network, by their own
     * factors alone (the pair's, fitted to its sizes): a class-wide factor
     * comes from the links' copies of the pairs the logs ran (Ring, Tree)
     * and says nothing of a switch's reduction rate (on one HGX H100 node of
     * the public logs Ring runs at 0.96 of NCCL's figure where NVLS runs at
     * 1.03) */
    int sc = algo == CS_NCCL_COLLNET_DIRECT || algo == CS_NCCL_COLLNET_CHAIN ? CS_SIM_HW_NET
                                                                             : CS_SIM_HW_NVLINK;
    double sb = cs_nccl_fit_pair(f, sc, algo, proto, 0);
    c->sw_eff *= sb;
    c->sw_cap *= sb;
    c->sw_rate *= sb;
    c->sw_lat *= cs_nccl_fit_pair(f, sc, algo, proto, 1);
}
