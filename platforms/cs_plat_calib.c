/*
 * cs_plat_calib.c - write the calibrated platform (cs_plat_calib.h).
 */
#include "cs_plat_calib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CALIB_MARK "<!-- collstep calibrate platform -->"

int cs_plat_calib_recognize(const char *head, size_t n)
{
    size_t l = strlen(CALIB_MARK);
    for (size_t i = 0; i + l <= n; i++)
        if (memcmp(head + i, CALIB_MARK, l) == 0)
            return 1;
    return 0;
}

/* Rate classes: nodes sorted by bandwidth, a new class where a node is
 * more than 15 % below the class's fastest. */
void cs_plat_calib_tiers(cs_plat_calib_t *p)
{
    int n = p->nnodes;
    int *done = calloc((size_t)n, sizeof(int));
    int cls = 0;
    for (int left = n; left > 0 && done; cls++) {
        double top = -1;
        for (int i = 0; i < n; i++)
            if (!done[i] && p->nodes[i].bw > top)
                top = p->nodes[i].bw;
        for (int i = 0; i < n; i++) {
            if (done[i] || p->nodes[i].bw < 0.85 * top)
                continue;
            done[i] = 1, left--;
            if (cls == 0)
                snprintf(p->nodes[i].tier, sizeof(p->nodes[i].tier), "nic");
            else if (cls == 1)
                snprintf(p->nodes[i].tier, sizeof(p->nodes[i].tier), "nic-slow");
            else
                snprintf(p->nodes[i].tier, sizeof(p->nodes[i].tier), "nic-slow%d", cls % 100);
        }
    }
    free(done);
}

static void link(FILE *f, const char *id, double bw, double lat, int duplex, const char *tier)
{
    if (bw > 1e15)
        bw = 1e15;
    fprintf(f, "    <link id=\"%s\" bandwidth=\"%.6eBps\" latency=\"%.3fns\" sharing_policy=\"%s\">"
               "<prop id=\"tier\" value=\"%s\"/></link>\n",
            id, bw, lat * 1e9, duplex ? "SPLITDUPLEX" : "SHARED", tier);
}

static void ctn(FILE *f, const char *id, const char *dir, int duplex)
{
    if (duplex)
        fprintf(f, "<link_ctn id=\"%s\" direction=\"%s\"/>", id, dir);
    else
        fprintf(f, "<link_ctn id=\"%s\"/>", id);
}

double cs_plat_calib_rho(double r)
{
    return r > 0 && r < CS_PLAT_CALIB_RHO_MAX ? fmax(r, 0.5) : 0;
}

/* rho of node h's two directions (0: none) */
static double node_rho(const cs_plat_calib_t *p, int h)
{
    return cs_plat_calib_rho(p->node_duplex ? p->node_duplex[h] : 0);
}

/* rho of nodes A and B exchanging: the slower node's (the smaller where
 * their rates are within 5 %); 0: none */
static double xch_rho(const cs_plat_calib_t *p, int A, int B)
{
    if (!p->xch_duplex)
        return 0;
    double a = cs_plat_calib_rho(p->xch_duplex[A]), b = cs_plat_calib_rho(p->xch_duplex[B]);
    double ba = p->nodes[A].bw, bb = p->nodes[B].bw;
    a = a > 0 ? a : 1, b = b > 0 ? b : 1;
    double r = ba < bb / 1.05 ? a : bb < ba / 1.05 ? b : fmin(a, b);
    return r < 1 ? r : 0;
}

int cs_plat_calib_xml(cs_plat_calib_t *p, char **xml, cs_err_t *err)
{
    if (p->nranks < 1 || p->nnodes < 1)
        return cs_err_set(err, CS_ERR_INVAL, "calibrated platform: no ranks");
    int finite = isfinite(p->intra_bw) && p->intra_bw > 0 && isfinite(p->intra_lat) &&
                 isfinite(p->switch_bw) && p->switch_bw > 0 && isfinite(p->reduce_speed) &&
                 isfinite(p->port_lat);
    for (int h = 0; h < p->nnodes; h++)
        finite &= isfinite(p->nodes[h].bw) && p->nodes[h].bw > 0 && isfinite(p->nodes[h].lat) &&
                  isfinite(p->nodes[h].restart_bytes) && isfinite(p->nodes[h].restart_idle);
    for (int r = 0; r < p->nranks && p->port_bw; r++)
        finite &= isfinite(p->port_bw[r]);
    if (!finite)
        return cs_err_set(err, CS_ERR_INVAL, "calibrated platform: a bandwidth or latency that "
                          "is not a finite number (a measurement that went wrong)");
    cs_plat_calib_tiers(p);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    int dup = 1;
    int pairs = cs_plat_calib_rho(p->pair_duplex) > 0;
    /* dims: same ranks on every node, ranks of a node contiguous */
    int per = 0, uniform = 1;
    for (int h = 0; h < p->nnodes; h++) {
        int c = 0;
        for (int r = 0; r < p->nranks; r++)
            c += p->node_of[r] == h;
        if (h == 0)
            per = c;
        uniform &= c == per;
    }
    for (int r = 0; r < p->nranks && uniform; r++)
        uniform &= per > 0 && p->node_of[r] == r / per;
    fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
               "<platform version=\"4.1\">\n" CALIB_MARK "\n");
    if (p->comment && *p->comment)
        fprintf(f, "<!--\n%s-->\n", p->comment);
    fprintf(f, "<zone id=\"calibrated\" routing=\"Full\">\n");
    fprintf(f, "  <prop id=\"collstep_calib\" value=\"1\"/>\n");
    if (uniform && per > 0)
        fprintf(f, "  <prop id=\"collstep_dims\" value=\"%dx%d\"/>\n", per, p->nnodes);
    for (int r = 0; r < p->nranks; r++) {
        const cs_plat_calib_node_t *nd = &p->nodes[p->node_of[r]];
        fprintf(f, "  <host id=\"n%d-r%d\" speed=\"%.6ef\"><prop id=\"device\" value=\"cpu\"/>"
                   "<prop id=\"node\" value=\"%s\"/>", p->node_of[r], r, p->reduce_speed,
                nd->name);
        if (nd->restart_bytes > 0)
            fprintf(f, "<prop id=\"restart_bytes\" value=\"%.0f\"/><prop id=\"restart_idle\" "
                       "value=\"%.4f\"/>", nd->restart_bytes, nd->restart_idle);
        fprintf(f, "</host>\n");
    }
    char id[64];
    for (int r = 0; r < p->nranks; r++) {
        snprintf(id, sizeof(id), "lo-r%d", r);
        link(f, id, p->intra_bw, p->intra_lat / 2, dup, "host");
    }
    for (int h = 0; h < p->nnodes; h++) {
        snprintf(id, sizeof(id), "nic-n%d", h);
        link(f, id, p->nodes[h].bw, p->nodes[h].lat, dup, p->nodes[h].tier);
    }
    link(f, "switch", p->switch_bw, 0, dup, "switch");
    for (int r = 0; r < p->nranks && p->port_bw; r++)
        if (p->port_bw[r] > 0) {
            snprintf(id, sizeof(id), "port-r%d", r);
            link(f, id, p->port_bw[r], p->port_lat, 0, "port");
        }
    for (int h = 0; h < p->nnodes; h++)
        if (node_rho(p, h) > 0) {
            snprintf(id, sizeof(id), "duplex-n%d", h);
            link(f, id, 2 * node_rho(p, h) * p->nodes[h].bw, 0, 0, "duplex");
        }
    for (int A = 0; A < p->nnodes; A++)
        for (int B = A + 1; B < p->nnodes; B++)
            if (xch_rho(p, A, B) > 0) {
                snprintf(id, sizeof(id), "duplex-n%d-n%d", A, B);
                link(f, id, 2 * xch_rho(p, A, B) * fmin(p->nodes[A].bw, p->nodes[B].bw), 0, 0,
                     "duplex");
            }
    for (int a = 0; a < p->nranks && pairs; a++)
        for (int b = a + 1; b < p->nranks; b++) {
            int A = p->node_of[a], B = p->node_of[b];
            if (A == B)
                continue;
            double bw = p->nodes[A].bw < p->nodes[B].bw ? p->nodes[A].bw : p->nodes[B].bw;
            snprintf(id, sizeof(id), "duplex-r%d-r%d", a, b);
            link(f, id, 2 * cs_plat_calib_rho(p->pair_duplex) * bw, 0, 0, "duplex");
        }
    for (int a = 0; a < p->nranks; a++)
        for (int b = 0; b < p->nranks; b++) {
            if (a == b)
                continue;
            int A = p->node_of[a], B = p->node_of[b];
            fprintf(f, "  <route src=\"n%d-r%d\" dst=\"n%d-r%d\" symmetrical=\"NO\">", A, a, B, b);
            if (p->port_bw && p->port_bw[a] > 0) {
                snprintf(id, sizeof(id), "port-r%d", a);
                ctn(f, id, "", 0);
            }
            if (A == B) {
                snprintf(id, sizeof(id), "lo-r%d", a);
                ctn(f, id, "UP", dup);
                snprintf(id, sizeof(id), "lo-r%d", b);
                ctn(f, id, "DOWN", dup);
            } else {
                snprintf(id, sizeof(id), "nic-n%d", A);
                ctn(f, id, "UP", dup);
                ctn(f, "switch", "UP", dup);
                snprintf(id, sizeof(id), "nic-n%d", B);
                ctn(f, id, "DOWN", dup);
                if (pairs) {
                    snprintf(id, sizeof(id), "duplex-r%d-r%d", a < b ? a : b, a < b ? b : a);
                    ctn(f, id, "", 0);
                }
                if (node_rho(p, A) > 0) {
                    snprintf(id, sizeof(id), "duplex-n%d", A);
                    ctn(f, id, "", 0);
                }
                if (node_rho(p, B) > 0) {
                    snprintf(id, sizeof(id), "duplex-n%d", B);
                    ctn(f, id, "", 0);
                }
                if (xch_rho(p, A, B) > 0) {
                    snprintf(id, sizeof(id), "duplex-n%d-n%d", A < B ? A : B, A < B ? B : A);
                    ctn(f, id, "", 0);
                }
            }
            if (p->port_bw && p->port_bw[b] > 0) {
                snprintf(id, sizeof(id), "port-r%d", b);
                ctn(f, id, "", 0);
            }
            fprintf(f, "</route>\n");
        }
    fprintf(f, "</zone>\n</platform>\n");
    if (fclose(f) != 0 || !text) {
        free(text);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    }
    *xml = text;
    return CS_OK;
}
