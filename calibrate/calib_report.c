/*
 * calib_report.c - the outputs of calibration (cs_calibrate.h): the
 * platform XML (platforms/cs_plat_calib.h), the JSON of the record, the
 * fits and the figures, and the summary `collstep calibrate` prints (also
 * the XML's comment).  Files through core/cs_out.h: whole or not at all,
 * an existing one replaced only when calibrate wrote it (CS_OUT_FORCE
 * otherwise).
 *
 * The JSON's raw values (times of the series and of every rank busy, NIC,
 * exchange, duplex and reduction rates, the budget) are written in as many
 * digits as read back exactly (cs__calib_num); the fits and the figures,
 * which the loader recomputes, in the digits a reader needs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_int.h"
#include "cs_results.h"
#include "cs_platform.h"

static int json_recognize(const char *head, size_t n)
{
    static const char k[] = "{\"collstep_calibration\"";
    return n >= sizeof(k) - 1 && memcmp(head, k, sizeof(k) - 1) == 0;
}
/* a platform collstep wrote: calibrate's, or `platform export`'s */
const cs_out_kind_t cs_calibrate_xml_kind = {"platform", cs_platform_recognize, NULL, NULL, NULL};
const cs_out_kind_t cs_calibrate_json_kind = {"calibration file", json_recognize, NULL, NULL, NULL};

static void json_line(FILE *f, const char *k, const cs_fit_line_t *l, const char *end)
{
    fprintf(f, "\"%s\":{\"alpha_us\":%.4f,\"beta_Bps\":%.6e,\"burst_us\":%.4f,\"rms_pct\":%.3f,"
               "\"max_pct\":%.3f,\"lo\":%llu,\"hi\":%llu,\"points\":%d}%s",
            k, l->alpha * 1e6, isinf(l->beta) ? 0 : l->beta, l->burst * 1e6, l->rms_pct, l->max_pct,
            (unsigned long long)l->lo, (unsigned long long)l->hi, l->npoints, end);
}

static void json_fit(FILE *f, const cs_fit_piecewise_t *fit, uint64_t top)
{
    fprintf(f, "],\"fit\":{\"pieces\":%d,\"break\":%llu,", fit->npieces,
            (unsigned long long)fit->brk);
    json_line(f, "small", &fit->piece[0], ",");
    json_line(f, "large", cs_fit_piece_for(fit, top), ",");
    json_line(f, "single", &fit->single, "}}");
}

/* "key":value for a raw value (shift 6: seconds as microseconds) */
static void json_num(FILE *f, const char *key, double v, int shift)
{
    fprintf(f, "\"%s\":", key);
    cs__calib_num(f, v, shift);
}

void cs_calibrate_json(const cs_calibrate_record_t *rec, const cs_calibrate_derived_t *d, FILE *f)
{
    const cs_plat_calib_t *p = &d->plat;
    const cs_calibrate_plan_t *pl = &rec->plan;
    int N = rec->nranks, H = rec->nnodes, K = pl->nsizes;
    uint64_t top = pl->sizes[K - 1];
    fprintf(f, "{\"collstep_calibration\":1,\"ranks\":%d,\"transport\":", N);
    cs_json_write_str(f, rec->transport);
    fprintf(f, ",\"provider\":");
    cs_json_write_str(f, rec->provider);
    fprintf(f, ",\"nodes\":[");
    for (int h = 0; h < H; h++) {
        const cs_calibrate_node_t *n = &rec->nodes[h];
        int cnt = 0, fr = -1;
        for (int r = 0; r < N; r++)
            if (rec->node_of[r] == h)
                fr = fr < 0 ? r : fr, cnt++;
        fprintf(f, "%s{\"name\":", h ? "," : "");
        cs_json_write_str(f, n->name);
        fprintf(f, ",\"ranks\":%d,\"first_rank\":%d,\"tier\":\"%s\",\"nic_Bps\":%.6e,"
                   "\"nic_lat_us\":%.4f,\"nic_peer\":%d,\"nic_senders\":%d,", cnt, fr,
                p->nodes[h].tier, p->nodes[h].bw, p->nodes[h].lat * 1e6, n->nic_peer,
                n->nic_senders);
        json_num(f, "nic_one_Bps", n->nic_one, 0), fputc(',', f);
        json_num(f, "nic_all_Bps", n->nic_all, 0), fputc(',', f);
        json_num(f, "exchange_out_Bps", n->xch_out, 0), fputc(',', f);
        json_num(f, "exchange_in_Bps", n->xch_in, 0);
        if (n->cold_out > 0 || n->cold_in > 0) { /* measured (a record of before: not written) */
            fputc(',', f), json_num(f, "cold_out_Bps", n->cold_out, 0), fputc(',', f);
            json_num(f, "cold_in_Bps", n->cold_in, 0);
            fprintf(f, ",\"cold_short_Bps\":[");
            for (int j = 0; j < 3; j++)
                fprintf(f, "%s", j ? "," : ""), cs__calib_num(f, n->cold_short[j], 0);
            fputc(']', f);
            fprintf(f, ",\"restart_bytes\":%.0f,\"restart_idle_s\":%.4f",
                    p->nodes[h].restart_bytes, p->nodes[h].restart_idle);
        }
        double nr = p->node_duplex ? p->node_duplex[h] : 0, xr = p->xch_duplex ? p->xch_duplex[h] : 0;
        fprintf(f, ",\"exchange_trials\":%d,\"duplex_rho\":%.4f,\"exchange_rho\":%.4f}",
                n->xch_trials, nr > 0 ? nr : 1, xr > 0 ? xr : 1);
    }
    fprintf(f, "],\n\"node_of\":[");
    for (int r = 0; r < N; r++)
        fprintf(f, "%s%d", r ? "," : "", rec->node_of[r]);
    fprintf(f, "],\n\"plan\":{\"sizes\":[");
    for (int k = 0; k < K; k++)
        fprintf(f, "%s%llu", k ? "," : "", (unsigned long long)pl->sizes[k]);
    fprintf(f, "],");
    json_num(f, "budget_s", pl->budget_s, 0);
    fprintf(f, ",\"min_reps\":%d,\"max_reps\":%d,\"nic_bytes\":%llu,\"dtype\":\"%s\"},\n"
               "\"series\":[", pl->min_reps, pl->max_reps, (unsigned long long)pl->nic_bytes,
            cs_dtype_name(pl->dtype));
    for (int s = 0; s < rec->nseries; s++) {
        const cs_calibrate_series_t *x = &rec->series[s];
        fprintf(f, "%s\n{\"class\":\"%s\",\"rank_a\":%d,\"rank_b\":%d,\"node_a\":%d,\"node_b\":%d,"
                   "\"points\":[", s ? "," : "", x->na == x->nb ? "intra" : "inter", x->a, x->b,
                x->na, x->nb);
        for (int k = 0; k < K; k++) {
            fprintf(f, "%s{\"bytes\":%llu,", k ? "," : "", (unsigned long long)pl->sizes[k]);
            json_num(f, "median_us", x->median[k], 6), fputc(',', f);
            json_num(f, "p10_us", x->p10[k], 6), fputc(',', f);
            json_num(f, "p90_us", x->p90[k], 6);
            fprintf(f, ",\"reps\":%d}", x->reps[k]);
        }
        json_fit(f, &d->series_fit[s], top);
    }
    fprintf(f, "],\n\"loaded\":[");
    for (int r = 0; r < N; r++) {
        int from = (r + N - 1) % N;
        fprintf(f, "%s\n{\"class\":\"%s\",\"src\":%d,\"dst\":%d,\"points\":[", r ? "," : "",
                rec->node_of[from] == rec->node_of[r] ? "intra" : "inter", from, r);
        for (int k = 0; k < K; k++) {
            fprintf(f, "%s{\"bytes\":%llu,", k ? "," : "", (unsigned long long)pl->sizes[k]);
            json_num(f, "median_us", rec->loaded[(size_t)r * K + k], 6);
            fprintf(f, ",\"reps\":%d}", rec->loaded_reps[k]);
        }
        json_fit(f, &d->loaded_fit[r], top);
    }
    fprintf(f, "],\n\"duplex\":{\"rank_a\":%d,\"rank_b\":%d,\"rank_c\":%d,", rec->duplex_a,
            rec->duplex_b, rec->duplex_c);
    json_num(f, "one_way_Bps", rec->duplex_one, 0), fputc(',', f);
    json_num(f, "pair_both_ways_Bps_per_direction", rec->duplex_both, 0), fputc(',', f);
    json_num(f, "node_both_ways_Bps_per_flow", rec->duplex_node, 0);
    fprintf(f, ",\"pair_rho\":%.4f,\"rank_d\":%d},\n\"reduce_Bps\":{", p->pair_duplex,
            rec->duplex_d);
    for (int t = 0; t < CS_CALIBRATE_NDT; t++) {
        fprintf(f, "%s", t ? "," : "");
        json_num(f, cs_dtype_name((cs_dtype_t)t), rec->reduce[t], 0);
    }
    fprintf(f, "},\n\"platform\":{\"intra_lat_us\":%.4f,\"intra_Bps\":%.6e,\"switch_Bps\":%.6e,"
               "\"reduce_speed_Bps\":%.6e,\"port_lat_us\":%.4f,\"pair_rho\":%.4f,"
               "\"port_Bps\":[",
            p->intra_lat * 1e6, p->intra_bw, p->switch_bw, p->reduce_speed, p->port_lat * 1e6,
            p->pair_duplex);
    for (int r = 0; r < N; r++)
        fprintf(f, "%s%.6e", r ? "," : "", p->port_bw[r]);
    fprintf(f, "]}}\n");
}

/* The report on stdout, also the XML comment. */
void cs_calibrate_summary(const cs_calibrate_record_t *rec, const cs_calibrate_derived_t *d,
                          FILE *f)
{
    const cs_plat_calib_t *p = &d->plat;
    const cs_calibrate_node_t *nd = rec->nodes;
    int N = rec->nranks, H = rec->nnodes, K = rec->plan.nsizes;
    uint64_t top = rec->plan.sizes[K - 1];
    int ofi = !strcmp(rec->transport, "ofi");
    fprintf(f, "collstep calibrate: %d ranks, %d nodes, transport %s%s%s\n", N, H, rec->transport,
            ofi ? "/" : "", ofi ? rec->provider : "");
    fprintf(f, "pair fits (one-way time = alpha + bytes / beta; relative least squares):\n");
    fprintf(f, "  %-6s %5s %5s  %-34s %-34s\n", "class", "rank", "rank", "small piece", "large piece");
    for (int s = 0; s < rec->nseries; s++) {
        const cs_calibrate_series_t *x = &rec->series[s];
        const cs_fit_piecewise_t *fit = &d->series_fit[s];
        const cs_fit_line_t *a = &fit->piece[0], *b = cs_fit_piece_for(fit, top);
        fprintf(f, "  %-6s %5d %5d  %8.2f us %9.4f GB/s rms %4.1f%%  %8.2f us %9.4f GB/s rms %4.1f%% "
                   "max %4.1f%%", x->na == x->nb ? "intra" : "inter", x->a, x->b, a->alpha * 1e6,
                isinf(a->beta) ? 0 : a->beta / 1e9, a->rms_pct, b->alpha * 1e6,
                isinf(b->beta) ? 0 : b->beta / 1e9, b->rms_pct, b->max_pct);
        if (fit->npieces == 2)
            fprintf(f, " (break at %llu B)", (unsigned long long)fit->brk);
        fprintf(f, "\n");
    }
    fprintf(f, "every rank busy (ring flows r-1 -> r at once), large piece:\n ");
    for (int r = 0; r < N; r++) {
        int from = (r + N - 1) % N;
        const cs_fit_line_t *l = cs_fit_piece_for(&d->loaded_fit[r], top);
        fprintf(f, " %d->%d %s %.0f us %.4f GB/s%s", from, r,
                rec->node_of[from] == rec->node_of[r] ? "intra" : "inter", l->alpha * 1e6,
                isinf(l->beta) ? 0 : l->beta / 1e9, r % 3 == 2 ? "\n " : ";");
    }
    fprintf(f, "\nnodes (NIC each direction; one rank vs all its ranks sending off the node):\n");
    for (int h = 0; h < H; h++) {
        int cnt = 0;
        for (int r = 0; r < N; r++)
            cnt += rec->node_of[r] == h;
        fprintf(f, "  %-20.20s ranks %3d  tier %-9s %9.4f GB/s  lat %8.2f us  one %9.4f GB/s  "
                   "all %d: %9.4f GB/s\n", nd[h].name, cnt, p->nodes[h].tier,
                p->nodes[h].bw / 1e9, p->nodes[h].lat * 1e6, nd[h].nic_one / 1e9,
                nd[h].nic_senders, nd[h].nic_all / 1e9);
    }
    if (H > 1) {
        fprintf(f, "nodes both ways (rho: both directions at once over one; 1: full duplex, no "
                   "link):\n");
        for (int h = 0; h < H; h++) {
            double nr = p->node_duplex ? p->node_duplex[h] : 0;
            double xr = p->xch_duplex ? p->xch_duplex[h] : 0;
            char trials[32] = "";
            if (nd[h].xch_trials > 1)
                snprintf(trials, sizeof(trials), " (best of %d trials)", nd[h].xch_trials);
            int peer = nd[h].nic_peer >= 0 ? nd[h].nic_peer : h;
            fprintf(f, "  %-20.20s to one node, from another: rho %.2f%s;  exchanging with %s: out "
                       "%.4f in %.4f GB/s%s, rho %.2f%s\n", nd[h].name, nr > 0 ? nr : 1,
                    nr > 0 ? " (duplex link)" : "", nd[peer].name, nd[h].xch_out / 1e9,
                    nd[h].xch_in / 1e9, trials, xr > 0 ? xr : 1,
                    xr > 0 ? " (duplex links to nodes as fast or faster)" : "");
            if (!(nd[h].cold_out > 0) && !(nd[h].cold_in > 0))
                continue;
            const cs_plat_calib_node_t *pn = &p->nodes[h];
            static const double idles[3] = CS_CALIBRATE_IDLES;
            fprintf(f, "  %-20.20s after idling", "");
            for (int j = 0; j < 3; j++)
                fprintf(f, " %.2f s: %.4f,", idles[j], nd[h].cold_short[j] / 1e9);
            fprintf(f, " %.0f s: out %.4f in %.4f GB/s", CALIB_IDLE_S, nd[h].cold_out / 1e9,
                    nd[h].cold_in / 1e9);
            if (pn->restart_bytes > 0)
                fprintf(f, "; restart: %.2f MB more per message after %.0f ms idle\n",
                        pn->restart_bytes / 1e6, pn->restart_idle * 1e3);
            else
                fprintf(f, "; no restart cost\n");
        }
    }
    fprintf(f, "duplex: ranks %d->%d one way %.4f GB/s; %d<->%d both ways %.4f GB/s per direction%s",
            rec->duplex_a, rec->duplex_b, rec->duplex_one / 1e9, rec->duplex_a, rec->duplex_b,
            rec->duplex_both / 1e9, p->pair_duplex > 0 ? " (duplex links per pair)" : " (full duplex)");
    if (rec->duplex_c >= 0)
        fprintf(f, "; %d->%d with %d->%d %.4f GB/s per flow%s", rec->duplex_a, rec->duplex_b,
                rec->duplex_c, rec->duplex_d, rec->duplex_node / 1e9,
                rec->duplex_node < CALIB_DUPLEX * rec->duplex_one ? " (in its nodes' rho)"
                                                                  : " (full duplex)");
    fprintf(f, "\n");
    fprintf(f, "rank ports (in + out, every rank busy; 0: the links bound it, no port), latency "
               "%.1f us, GB/s:", p->port_lat * 1e6);
    for (int r = 0; r < N; r++)
        fprintf(f, " %.4f", p->port_bw[r] / 1e9);
    fprintf(f, "\n");
    fprintf(f, "intra-node link: %.2f us, %.4f GB/s; reduction GB/s per rank, all ranks at once:",
            p->intra_lat * 1e6, p->intra_bw / 1e9);
    for (int t = 0; t < CS_CALIBRATE_NDT; t++)
        fprintf(f, " %s %.2f", cs_dtype_name((cs_dtype_t)t), rec->reduce[t] / 1e9);
    fprintf(f, "\n");
}

int cs_calibrate_xml(const cs_calibrate_record_t *rec, const cs_calibrate_derived_t *d,
                     char **xml, cs_err_t *err)
{
    /* cs_plat_calib_xml names the tiers again (the same names): on a copy */
    cs_plat_calib_t p = d->plat;
    size_t nb = sizeof(*p.nodes) * (size_t)p.nnodes;
    char *comment = NULL;
    size_t clen = 0;
    FILE *m = open_memstream(&comment, &clen);
    if (!(p.nodes = malloc(nb)) || !m) {
        if (m)
            fclose(m);
        free(comment);
        free(p.nodes);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    }
    memcpy(p.nodes, d->plat.nodes, nb);
    cs_calibrate_summary(rec, d, m);
    fclose(m);
    for (char *s = comment; s && (s = strstr(s, "--"));) /* not allowed in a comment */
        s[0] = s[1] = '=';
    p.comment = comment;
    int st = cs_plat_calib_xml(&p, xml, err);
    free(comment);
    free(p.nodes);
    return st;
}

int cs_calibrate_write(const cs_calibrate_record_t *rec, const cs_calibrate_derived_t *d,
                       const char *xml_path, const char *json_path, int flags, cs_err_t *err)
{
    char *xml = NULL;
    cs_out_t *ox = NULL, *oj = NULL;
    int st = cs_calibrate_xml(rec, d, &xml, err);
    if (st == CS_OK)
        st = cs_out_begin_file(xml_path, flags, &cs_calibrate_xml_kind, &ox, err);
    if (st == CS_OK)
        st = cs_out_begin_file(json_path, flags, &cs_calibrate_json_kind, &oj, err);
    if (st == CS_OK) {
        fputs(xml, cs_out_stream(ox));
        cs_calibrate_json(rec, d, cs_out_stream(oj));
        st = cs_out_commit(ox, err);
        ox = NULL;
        if (st == CS_OK)
            st = cs_out_commit(oj, err);
        oj = NULL;
    }
    cs_out_abort(ox);
    cs_out_abort(oj);
    free(xml);
    return st;
}
