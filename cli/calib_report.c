/*
 * calib_report.c - the outputs of `collstep calibrate` (calib_int.h): the
 * platform XML (platforms/cs_plat_calib.h), the JSON of the raw
 * measurements and the fits, and the summary printed on stdout (also the
 * XML's comment).  Both files through core/cs_out.h: whole or not at all,
 * an existing one replaced only when calibrate wrote it (--force
 * otherwise), checked before measuring.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_int.h"
#include "cs_out.h"
#include "cs_platform.h"

const char *const calib_dt_names[NDT] = {"float", "double", "half", "bfloat16", "int32", "int64"};

static int json_recognize(const char *head, size_t n)
{
    static const char k[] = "{\"collstep_calibration\"";
    return n >= sizeof(k) - 1 && memcmp(head, k, sizeof(k) - 1) == 0;
}
/* a platform collstep wrote: calibrate's, or `platform export`'s */
static const cs_out_kind_t xml_kind = {"platform", cs_platform_recognize, NULL, NULL};
static const cs_out_kind_t json_kind = {"calibration file", json_recognize, NULL, NULL};

int calib_check_outputs(cal_t *c)
{
    const char *o = c->o->live.output;
    if (c->o->json) {
        snprintf(c->json_path, sizeof(c->json_path), "%s", c->o->json);
    } else {
        size_t l = strlen(o);
        int x = l > 4 && !strcmp(o + l - 4, ".xml");
        snprintf(c->json_path, sizeof(c->json_path), "%.*s.json", (int)(x ? l - 4 : l), o);
    }
    int fl = c->o->live.force ? CS_OUT_FORCE : 0;
    cs_err_t e;
    cs_err_clear(&e);
    if (cs_out_check(o, fl, &xml_kind, 0, &e) != CS_OK) {
        cs_err_set(&c->l.err, CS_ERR_EXISTS, "-o %s: %s", o, e.msg);
        return CS_ERR_EXISTS;
    }
    if (cs_out_check(c->json_path, fl, &json_kind, 0, &e) != CS_OK) {
        cs_err_set(&c->l.err, CS_ERR_EXISTS, "--json %s: %s", c->json_path, e.msg);
        return CS_ERR_EXISTS;
    }
    return CS_OK;
}

static void json_line(FILE *f, const char *k, const cs_fit_line_t *l, const char *end)
{
    fprintf(f, "\"%s\":{\"alpha_us\":%.4f,\"beta_Bps\":%.6e,\"burst_us\":%.4f,\"rms_pct\":%.3f,"
               "\"max_pct\":%.3f,\"lo\":%llu,\"hi\":%llu,\"points\":%d}%s",
            k, l->alpha * 1e6, isinf(l->beta) ? 0 : l->beta, l->burst * 1e6, l->rms_pct, l->max_pct,
            (unsigned long long)l->lo, (unsigned long long)l->hi, l->npoints, end);
}

static void write_json(cal_t *c, FILE *f, const cs_plat_calib_t *p)
{
    fprintf(f, "{\"collstep_calibration\":1,\"ranks\":%d,\"transport\":\"%s\",\"provider\":\"%s\","
               "\"nodes\":[", c->l.nranks, c->o->live.transport, c->o->live.provider);
    for (int h = 0; h < c->l.nnodes; h++)
        fprintf(f, "%s{\"name\":\"%s\",\"ranks\":%d,\"first_rank\":%d,\"tier\":\"%s\","
                   "\"nic_Bps\":%.6e,\"nic_lat_us\":%.4f,\"nic_peer\":%d,\"nic_senders\":%d,"
                   "\"nic_one_Bps\":%.6e,\"nic_all_Bps\":%.6e,\"exchange_out_Bps\":%.6e,"
                   "\"exchange_in_Bps\":%.6e,\"exchange_trials\":%d,\"duplex_rho\":%.4f,"
                   "\"exchange_rho\":%.4f}",
                h ? "," : "", c->l.nodes[h].name, c->l.count[h], c->l.first[h], p->nodes[h].tier,
                p->nodes[h].bw, p->nodes[h].lat * 1e6, c->nic_peer ? c->nic_peer[h] : -1,
                c->nic_k ? c->nic_k[h] : 0, c->nic_one ? c->nic_one[h] : 0,
                c->nic_agg ? c->nic_agg[h] : 0, c->xch_out ? c->xch_out[h] : 0,
                c->xch_in ? c->xch_in[h] : 0, c->xch_trials ? c->xch_trials[h] : 0,
                c->node_rho && c->node_rho[h] > 0 ? c->node_rho[h] : 1,
                c->xch_rho && c->xch_rho[h] > 0 ? c->xch_rho[h] : 1);
    fprintf(f, "],\n\"series\":[");
    for (int s = 0; s < c->nser; s++) {
        const series_t *x = &c->ser[s];
        fprintf(f, "%s\n{\"class\":\"%s\",\"rank_a\":%d,\"rank_b\":%d,\"node_a\":%d,\"node_b\":%d,"
                   "\"points\":[", s ? "," : "", x->na == x->nb ? "intra" : "inter", x->a, x->b,
                x->na, x->nb);
        for (int k = 0; k < c->nsizes; k++)
            fprintf(f, "%s{\"bytes\":%llu,\"median_us\":%.4f,\"p10_us\":%.4f,\"p90_us\":%.4f,"
                       "\"reps\":%d}", k ? "," : "", (unsigned long long)c->sizes[k],
                    x->med[k] * 1e6, x->p10[k] * 1e6, x->p90[k] * 1e6, x->reps[k]);
        fprintf(f, "],\"fit\":{\"pieces\":%d,\"break\":%llu,", x->fit.npieces,
                (unsigned long long)x->fit.brk);
        json_line(f, "small", &x->fit.piece[0], ",");
        json_line(f, "large", cs_fit_piece_for(&x->fit, c->sizes[c->nsizes - 1]), ",");
        json_line(f, "single", &x->fit.single, "}}");
    }
    fprintf(f, "],\n\"loaded\":[");
    for (int r = 0; c->load_fit && r < c->l.nranks; r++) {
        int from = (r + c->l.nranks - 1) % c->l.nranks;
        fprintf(f, "%s\n{\"class\":\"%s\",\"src\":%d,\"dst\":%d,\"points\":[", r ? "," : "",
                c->l.node_of[from] == c->l.node_of[r] ? "intra" : "inter", from, r);
        for (int k = 0; k < c->nsizes; k++)
            fprintf(f, "%s{\"bytes\":%llu,\"median_us\":%.4f,\"reps\":%d}", k ? "," : "",
                    (unsigned long long)c->sizes[k], c->load_t[(size_t)r * c->nsizes + k] * 1e6,
                    c->load_reps[k]);
        fprintf(f, "],\"fit\":{\"pieces\":%d,\"break\":%llu,", c->load_fit[r].npieces,
                (unsigned long long)c->load_fit[r].brk);
        json_line(f, "small", &c->load_fit[r].piece[0], ",");
        json_line(f, "large", cs_fit_piece_for(&c->load_fit[r], c->sizes[c->nsizes - 1]), ",");
        json_line(f, "single", &c->load_fit[r].single, "}}");
    }
    fprintf(f, "],\n\"duplex\":{\"rank_a\":%d,\"rank_b\":%d,\"rank_c\":%d,\"one_way_Bps\":%.6e,"
               "\"pair_both_ways_Bps_per_direction\":%.6e,\"node_both_ways_Bps_per_flow\":%.6e,"
               "\"pair_rho\":%.4f,\"rank_d\":%d},\n\"reduce_Bps\":{",
            c->duplex_a, c->duplex_b, c->duplex_c, c->duplex_one, c->duplex_both, c->duplex_node,
            p->pair_duplex, c->duplex_d);
    for (int d = 0; d < NDT; d++)
        fprintf(f, "%s\"%s\":%.6e", d ? "," : "", calib_dt_names[d], c->red[d]);
    fprintf(f, "},\n\"platform\":{\"intra_lat_us\":%.4f,\"intra_Bps\":%.6e,\"switch_Bps\":%.6e,"
               "\"reduce_speed_Bps\":%.6e,\"port_lat_us\":%.4f,\"pair_rho\":%.4f,"
               "\"port_Bps\":[",
            p->intra_lat * 1e6, p->intra_bw, p->switch_bw, p->reduce_speed, p->port_lat * 1e6,
            p->pair_duplex);
    for (int r = 0; r < c->l.nranks; r++)
        fprintf(f, "%s%.6e", r ? "," : "", p->port_bw ? p->port_bw[r] : 0);
    fprintf(f, "]}}\n");
}

/* The report on stdout, also the XML comment. */
static void summary(cal_t *c, FILE *f, const cs_plat_calib_t *p)
{
    fprintf(f, "collstep calibrate: %d ranks, %d nodes, transport %s%s%s\n", c->l.nranks, c->l.nnodes,
            c->o->live.transport, strcmp(c->o->live.transport, "ofi") ? "" : "/", strcmp(c->o->live.transport,
            "ofi") ? "" : c->o->live.provider);
    fprintf(f, "pair fits (one-way time = alpha + bytes / beta; relative least squares):\n");
    fprintf(f, "  %-6s %5s %5s  %-34s %-34s\n", "class", "rank", "rank", "small piece", "large piece");
    for (int s = 0; s < c->nser; s++) {
        const series_t *x = &c->ser[s];
        const cs_fit_line_t *a = &x->fit.piece[0], *b = cs_fit_piece_for(&x->fit, c->sizes[c->nsizes - 1]);
        fprintf(f, "  %-6s %5d %5d  %8.2f us %9.4f GB/s rms %4.1f%%  %8.2f us %9.4f GB/s rms %4.1f%% "
                   "max %4.1f%%", x->na == x->nb ? "intra" : "inter", x->a, x->b, a->alpha * 1e6,
                isinf(a->beta) ? 0 : a->beta / 1e9, a->rms_pct, b->alpha * 1e6,
                isinf(b->beta) ? 0 : b->beta / 1e9, b->rms_pct, b->max_pct);
        if (x->fit.npieces == 2)
            fprintf(f, " (break at %llu B)", (unsigned long long)x->fit.brk);
        fprintf(f, "\n");
    }
    fprintf(f, "every rank busy (ring flows r-1 -> r at once), large piece:\n ");
    for (int r = 0; c->load_fit && r < c->l.nranks; r++) {
        int from = (r + c->l.nranks - 1) % c->l.nranks;
        const cs_fit_line_t *l = cs_fit_piece_for(&c->load_fit[r], c->sizes[c->nsizes - 1]);
        fprintf(f, " %d->%d %s %.0f us %.4f GB/s%s", from, r,
                c->l.node_of[from] == c->l.node_of[r] ? "intra" : "inter", l->alpha * 1e6,
                isinf(l->beta) ? 0 : l->beta / 1e9, r % 3 == 2 ? "\n " : ";");
    }
    fprintf(f, "\nnodes (NIC each direction; one rank vs all its ranks sending off the node):\n");
    for (int h = 0; h < c->l.nnodes; h++)
        fprintf(f, "  %-20.20s ranks %3d  tier %-9s %9.4f GB/s  lat %8.2f us  one %9.4f GB/s  "
                   "all %d: %9.4f GB/s\n", c->l.nodes[h].name, c->l.count[h], p->nodes[h].tier,
                p->nodes[h].bw / 1e9, p->nodes[h].lat * 1e6, c->nic_one ? c->nic_one[h] / 1e9 : 0,
                c->nic_k ? c->nic_k[h] : 0, c->nic_agg ? c->nic_agg[h] / 1e9 : 0);
    if (c->xch_out) {
        fprintf(f, "nodes both ways (rho: both directions at once over one; 1: full duplex, no "
                   "link):\n");
        for (int h = 0; h < c->l.nnodes; h++) {
            double nr = c->node_rho ? c->node_rho[h] : 0, xr = c->xch_rho ? c->xch_rho[h] : 0;
            int tr = c->xch_trials ? c->xch_trials[h] : 1;
            char trials[32] = "";
            if (tr > 1)
                snprintf(trials, sizeof(trials), " (best of %d trials)", tr);
            fprintf(f, "  %-20.20s to one node, from another: rho %.2f%s;  exchanging with %s: out "
                       "%.4f in %.4f GB/s%s, rho %.2f%s\n", c->l.nodes[h].name, nr > 0 ? nr : 1,
                    nr > 0 ? " (duplex link)" : "", c->l.nodes[c->nic_peer[h]].name,
                    c->xch_out[h] / 1e9, c->xch_in[h] / 1e9, trials, xr > 0 ? xr : 1,
                    xr > 0 ? " (duplex links to nodes as fast or faster)" : "");
        }
    }
    fprintf(f, "duplex: ranks %d->%d one way %.4f GB/s; %d<->%d both ways %.4f GB/s per direction%s",
            c->duplex_a, c->duplex_b, c->duplex_one / 1e9, c->duplex_a, c->duplex_b,
            c->duplex_both / 1e9, p->pair_duplex > 0 ? " (duplex links per pair)" : " (full duplex)");
    if (c->duplex_c >= 0)
        fprintf(f, "; %d->%d with %d->%d %.4f GB/s per flow%s", c->duplex_a, c->duplex_b,
                c->duplex_c, c->duplex_d, c->duplex_node / 1e9,
                c->duplex_node < CALIB_DUPLEX * c->duplex_one ? " (in its nodes' rho)"
                                                                    : " (full duplex)");
    fprintf(f, "\n");
    if (p->port_bw) {
        fprintf(f, "rank ports (in + out, every rank busy; 0: the links bound it, no port), latency "
                   "%.1f us, GB/s:", p->port_lat * 1e6);
        for (int r = 0; r < c->l.nranks; r++)
            fprintf(f, " %.4f", p->port_bw[r] / 1e9);
        fprintf(f, "\n");
    }
    fprintf(f, "intra-node link: %.2f us, %.4f GB/s; reduction GB/s per rank, all ranks at once:",
            p->intra_lat * 1e6, p->intra_bw / 1e9);
    for (int d = 0; d < NDT; d++)
        fprintf(f, " %s %.2f", calib_dt_names[d], c->red[d] / 1e9);
    fprintf(f, "\n");
}

int calib_write_outputs(cal_t *c)
{
    cs_plat_calib_node_t *nodes = calloc((size_t)c->l.nnodes, sizeof(*nodes));
    cs_plat_calib_t p;
    char *xml = NULL, *comment = NULL;
    size_t clen = 0;
    cs_out_t *ox = NULL, *oj = NULL;
    int st = nodes ? CS_OK : cs_err_set(&c->l.err, CS_ERR_NOMEM, "out of memory");
    if (st == CS_OK) {
        calib_derive(c, &p, nodes);
        FILE *m = open_memstream(&comment, &clen);
        p.comment = NULL;
        cs_plat_calib_xml(&p, &xml, &c->l.err); /* names the tiers */
        free(xml);
        xml = NULL;
        if (m) {
            summary(c, m, &p);
            fclose(m);
        }
        for (char *s = comment; s && (s = strstr(s, "--")); ) /* not allowed in a comment */
            s[0] = s[1] = '=';
        p.comment = comment;
        st = cs_plat_calib_xml(&p, &xml, &c->l.err);
    }
    int fl = c->o->live.force ? CS_OUT_FORCE : 0;
    if (st == CS_OK)
        st = cs_out_begin_file(c->o->live.output, fl, &xml_kind, &ox, &c->l.err);
    if (st == CS_OK)
        st = cs_out_begin_file(c->json_path, fl, &json_kind, &oj, &c->l.err);
    if (st == CS_OK) {
        fputs(xml, cs_out_stream(ox));
        write_json(c, cs_out_stream(oj), &p);
        st = cs_out_commit(ox, &c->l.err);
        ox = NULL;
        if (st == CS_OK)
            st = cs_out_commit(oj, &c->l.err);
        oj = NULL;
    }
    cs_out_abort(ox);
    cs_out_abort(oj);
    if (st == CS_OK) {
        summary(c, stdout, &p);
        printf("wrote %s (%d hosts) and %s\n", c->o->live.output, c->l.nranks, c->json_path);
    }
    free(xml);
    free(comment);
    free(nodes);
    if (st != CS_OK) {
        fprintf(stderr, "collstep calibrate: %s\n", c->l.err.msg);
        return st == CS_ERR_EXISTS || st == CS_ERR_IO ? CS_EXIT_USAGE : CS_EXIT_RUNTIME;
    }
    return CS_EXIT_OK;
}
