/*
 * cmd_plan_report.c - what `collstep plan` prints of a whole plan (one
 * process's, rank 0's, a merge's): the ranking per size as a table, csv,
 * json or nccl-tests' layout, what the budget cut, and the tuning table of
 * -o.  Everything printed is a function of the plan alone, so that the
 * same plan prints the same bytes.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_nccl.h"
#include "cs_algo.h"
#include "cs_dtype.h"
#include "cs_out.h"
#include "cs_planner.h"
#include "cs_results.h"
#include "cs_tuning.h"

static const cs_out_kind_t tuning_kind = {"tuning table", cs_tuning_recognize, NULL, NULL, NULL};

/* ---- report -------------------------------------------------------------- */

static double busbw(const cs_planner_t *p, int k, double t)
{
    return t > 0 ? (double)p->sizes[k] / t * cs_coll_busbw_factor(p->coll, p->ranks) / 1e9 : 0;
}

static void params_text(const cs_planner_cand_t *x, char *buf, size_t len)
{
    snprintf(buf, len, "%s", x->params[0] ? x->params : "-");
}

/* Candidates of size k in ranking order: simulated first, then by the model. */
static int ranking(const cs_planner_t *p, int k, int *order)
{
    int n = 0;
    for (int c = 0; c < p->ncands; c++)
        if (cs_planner_time(p, c, k) >= 0)
            order[n++] = c;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0; j--) {
            int a = order[j - 1], b = order[j];
            int sa = p->cands[a].sim_s[k] >= 0, sb = p->cands[b].sim_s[k] >= 0;
            if (sa > sb || (sa == sb && cs_planner_time(p, a, k) <= cs_planner_time(p, b, k)))
                break;
            order[j - 1] = b, order[j] = a;
        }
    return n;
}

/* The i-th of the things the budget cut: a candidate ("ring nchunks=4
 * map=fast-ring"), or NCCL's choice; NULL after the last. */
static const char *cut_at(const cs_planner_t *p, int i, char *buf, size_t len)
{
    for (int c = 0; c < p->ncands; c++) {
        const cs_planner_cand_t *x = &p->cands[c];
        if (x->cut && i-- == 0) {
            snprintf(buf, len, "%s%s%s%s%s", x->algo, x->params[0] ? " " : "", x->params,
                     x->map ? " map=" : "", x->map ? p->map_name[x->map] : "");
            return buf;
        }
    }
    if (p->nccl_cut && i == 0) {
        snprintf(buf, len, "%s's choice", p->nccl_lib);
        return buf;
    }
    return NULL;
}

/* "A, B, C and 4 more" of what the budget cut. */
static void cut_list(const cs_planner_t *p, char *out, size_t len)
{
    char one[256];
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; cut_at(p, i, one, sizeof(one)); i++) {
        if (i == 6) {
            snprintf(out + n, len - n, " and %d more", p->ncut - i);
            return;
        }
        n += (size_t)snprintf(out + n, len - n, "%s%s", i ? ", " : "", one);
        if (n >= len)
            return;
    }
}

static void print_header(FILE *f, const cs_planner_t *p)
{
    fprintf(f, "# collstep plan: %s on %s, %d ranks, %s model\n", cs_coll_name(p->coll),
            p->platform, p->ranks, cs_sim_model_name(p->model));
    fprintf(f, "# tiers (innermost first):\n");
    for (int t = 0; t < p->ntiers; t++) {
        const cs_planner_tier_t *x = &p->tiers[t];
        char g[32];
        if (x->group)
            snprintf(g, sizeof(g), "%d x %d ranks", x->ngroups, x->group);
        else
            snprintf(g, sizeof(g), "groups of unequal size");
        fprintf(f, "#   %-12s %-20s %8.1f GB/s per flow  %7.2f us", x->name, g, x->rank_bw / 1e9,
                x->latency * 1e6);
        if (x->group_bw > 0)
            fprintf(f, "  %7.1f GB/s out of a group", x->group_bw / 1e9);
        fputc('\n', f);
    }
    fprintf(f, "# factorizations:");
    for (int i = 0; i < p->nfacts; i++)
        fprintf(f, " %s", p->facts[i]);
    fprintf(f, "%s\n", p->nfacts ? "" : " none (one tier)");
    for (int m = 0; m < p->nmaps; m++)
        fprintf(f, "# rank order %-10s %s; ring's slowest route %.1f GB/s\n", p->map_name[m],
                p->map_note[m], p->map_ring_bw[m] / 1e9);
    for (int i = 0; i < p->nlink_notes; i++)
        fprintf(f, "# %s\n", p->link_notes[i]);
    if (p->bound_note[0])
        fprintf(f, "# bound: %s\n", p->bound_note);
    cs_cli_plan_nccl_header(f, p);
    int nsim = 0;
    for (int c = 0; c < p->ncands; c++)
        nsim += p->cands[c].model_s[0] >= 0;
    fprintf(f, "# %d candidates, %d costed by the model, %d of %d simulations run\n", p->ncands,
            nsim, p->simulated, p->njobs);
    if (p->ncut) {
        char list[1200];
        cut_list(p, list, sizeof(list));
        fprintf(f, "# cut by the budget: %d (%s); this plan may differ from an uncut one: give "
                   "a larger --budget or fewer --candidates\n", p->ncut, list);
    }
}

static void print_table(FILE *f, const cs_cli_plan_out_t *a, const cs_planner_t *p)
{
    print_header(f, p);
    int *order = malloc(sizeof(int) * (size_t)(p->ncands + 1));
    if (!order)
        return;
    int ring = cs_planner_ring(p);
    for (int k = 0; k < p->nsizes; k++) {
        int n = ranking(p, k, order), ch = cs_planner_choice(p, k);
        fprintf(f, "\nsize %" PRIu64 " B", p->sizes[k]);
        if (ch >= 0)
            fprintf(f, ": %s %s%s%s, %.2f us, busbw %.2f GB/s", p->cands[ch].algo,
                    p->cands[ch].params[0] ? p->cands[ch].params : "(defaults)",
                    p->cands[ch].map ? " map=" : "",
                    p->cands[ch].map ? p->map_name[p->cands[ch].map] : "",
                    cs_planner_time(p, ch, k) * 1e6, busbw(p, k, cs_planner_time(p, ch, k)));
        if (p->bound_s[k] > 0)
            fprintf(f, "; bound %.2f us (busbw %.2f GB/s)%s", p->bound_s[k] * 1e6,
                    busbw(p, k, p->bound_s[k]), ch >= 0 ? "," : "");
        if (p->bound_s[k] > 0 && ch >= 0)
            fprintf(f, " the choice at %.1f %% of it",
                    100 * p->bound_s[k] / cs_planner_time(p, ch, k));
        fputc('\n', f);
        fprintf(f, "%4s  %-10s %-36s %-9s %12s %5s %9s %8s  %-12s\n", "#", "algo", "params",
                "order", "time", "from", "busbw", "vs_ring", "bottleneck");
        fprintf(f, "%4s  %-10s %-36s %-9s %12s %5s %9s\n", "", "", "", "", "(us)", "", "(GB/s)");
        int show = a->show ? (int)a->show : n;
        for (int i = 0; i < n; i++) {
            int c = order[i];
            const cs_planner_cand_t *x = &p->cands[c];
            if (i >= show && !(x->is_default && x->sim_s[k] >= 0) && c != ring)
                continue;
            double t = cs_planner_time(p, c, k);
            double rt = ring >= 0 ? cs_planner_time(p, ring, k) : -1;
            char prm[200];
            params_text(x, prm, sizeof(prm));
            char vr[16] = "-"; /* no flat ring for this collective */
            if (rt > 0)
                snprintf(vr, sizeof(vr), "%.2f", rt / t);
            fprintf(f, "%4d  %-10s %-36s %-9s %12.2f %5s %9.2f %8s  %-12s%s\n", i + 1, x->algo,
                    prm, p->map_name[x->map], t * 1e6, x->sim_s[k] >= 0 ? "sim" : "model",
                    busbw(p, k, t), vr, x->bottleneck, x->is_default ? " (registry default)" : "");
        }
        if (p->nccl_ref)
            cs_cli_plan_nccl_table(f, p, k);
    }
    fprintf(f, "\ntime: simulated (sim) or the cost model's (model, not simulated: budget or "
               "--top); vs_ring: the flat ring's time over the row's (-: the collective has "
               "no ring)\n");
    free(order);
}

static void print_csv(FILE *f, const cs_planner_t *p)
{
    int *order = malloc(sizeof(int) * (size_t)(p->ncands + 1));
    if (!order)
        return;
    int ring = cs_planner_ring(p);
    fprintf(f, "size,place,algo,params,order,time_us,source,model_us,sim_us,busbw_GBps,"
               "speedup_vs_ring,bottleneck,registry_default,chosen%s\n",
            p->nccl ? ",choice" : "");
    for (int k = 0; k < p->nsizes; k++) {
        int n = ranking(p, k, order), ch = cs_planner_choice(p, k);
        for (int i = 0; i < n; i++) {
            int c = order[i];
            const cs_planner_cand_t *x = &p->cands[c];
            double t = cs_planner_time(p, c, k), rt = ring >= 0 ? cs_planner_time(p, ring, k) : -1;
            char vr[32] = ""; /* empty: the collective has no flat ring */
            if (rt > 0)
                snprintf(vr, sizeof(vr), "%.3f", rt / t);
            fprintf(f, "%" PRIu64 ",%d,%s,\"%s\",%s,%.3f,%s,%.3f,%.3f,%.3f,%s,%s,%d,%d%s\n",
                    p->sizes[k], i + 1, x->algo, x->params, p->map_name[x->map], t * 1e6,
                    x->sim_s[k] >= 0 ? "sim" : "model", x->model_s[k] * 1e6,
                    x->sim_s[k] >= 0 ? x->sim_s[k] * 1e6 : -1.0, busbw(p, k, t),
                    vr, x->bottleneck, x->is_default, c == ch,
                    p->nccl ? ",collstep" : "");
        }
        if (p->nccl)
            cs_cli_plan_nccl_csv(f, p, k);
    }
    free(order);
}

static void print_json(FILE *f, const cs_cli_plan_out_t *a, const cs_planner_t *p)
{
    int *order = malloc(sizeof(int) * (size_t)(p->ncands + 1));
    if (!order)
        return;
    int ring = cs_planner_ring(p);
    fprintf(f, "{\n  \"platform\": ");
    cs_json_write_str(f, p->platform);
    fprintf(f, ",\n  \"collective\": \"%s\",\n  \"ranks\": %d,\n  \"model\": ",
            cs_coll_name(p->coll), p->ranks);
    cs_json_write_str(f, cs_sim_model_name(p->model));
    if (p->nccl) {
        fprintf(f, ",\n  \"nccl\": {\"library\": \"%s\", \"version\": \"%s\", \"system\": ",
                p->nccl_lib, p->nccl_version);
        cs_json_write_str(f, p->nccl_note);
        fprintf(f, "}");
    } else { /* NCCL's choice as a reference row, or why there is none */
        fprintf(f, ",\n  \"nccl_reference\": ");
        if (p->nccl_ref)
            fprintf(f, "{\"library\": \"%s\", \"version\": \"%s\", \"system\": ",
                    p->nccl_lib, p->nccl_version);
        else
            fprintf(f, "{\"library\": null, \"version\": null, \"why_none\": ");
        cs_json_write_str(f, p->nccl_note);
        fprintf(f, "}");
    }
    fprintf(f, ",\n  \"tiers\": [");
    for (int t = 0; t < p->ntiers; t++) {
        const cs_planner_tier_t *x = &p->tiers[t];
        fprintf(f, "%s\n    {\"name\": ", t ? "," : "");
        cs_json_write_str(f, x->name);
        fprintf(f, ", \"group\": %d, \"groups\": %d, \"flow_GBps\": %.3f, \"latency_us\": %.3f, "
                   "\"group_egress_GBps\": %.3f}",
                x->group, x->ngroups, x->rank_bw / 1e9, x->latency * 1e6, x->group_bw / 1e9);
    }
    fprintf(f, "\n  ],\n  \"factorizations\": [");
    for (int i = 0; i < p->nfacts; i++)
        fprintf(f, "%s\"%s\"", i ? ", " : "", p->facts[i]);
    fprintf(f, "],\n  \"orders\": [");
    for (int m = 0; m < p->nmaps; m++) {
        fprintf(f, "%s\n    {\"name\": \"%s\", \"ring_slowest_GBps\": %.3f, \"note\": ",
                m ? "," : "", p->map_name[m], p->map_ring_bw[m] / 1e9);
        cs_json_write_str(f, p->map_note[m]);
        fprintf(f, "}");
    }
    fprintf(f, "\n  ],\n  \"bound\": ");
    cs_json_write_str(f, p->bound_note);
    fprintf(f, ",\n  \"candidates\": %d,\n  \"simulations\": %d,\n  \"planned\": %d,\n"
               "  \"cut\": [",
            p->ncands, p->simulated, p->njobs);
    char one[256];
    for (int i = 0; cut_at(p, i, one, sizeof(one)); i++) {
        fputs(i ? ", " : "", f);
        cs_json_write_str(f, one);
    }
    fprintf(f, "],\n  \"sizes\": [");
    for (int k = 0; k < p->nsizes; k++) {
        int n = ranking(p, k, order), ch = cs_planner_choice(p, k);
        fprintf(f, "%s\n    {\"bytes\": %" PRIu64 ", \"bound_us\": %.3f, \"choice\": %d, "
                   "\"ranking\": [",
                k ? "," : "", p->sizes[k], p->bound_s[k] * 1e6, ch >= 0 ? 0 : -1);
        int show = a->show ? (int)a->show : n;
        for (int i = 0, w = 0; i < n; i++) {
            int c = order[i];
            const cs_planner_cand_t *x = &p->cands[c];
            if (i >= show && c != ch && !x->is_default && c != ring)
                continue;
            double t = cs_planner_time(p, c, k), rt = ring >= 0 ? cs_planner_time(p, ring, k) : -1;
            fprintf(f, "%s\n      {\"place\": %d, \"algo\": \"%s\", \"params\": ", w++ ? "," : "",
                    i + 1, x->algo);
            cs_json_write_str(f, x->params);
            char vr[32] = "null"; /* the collective has no flat ring */
            if (rt > 0)
                snprintf(vr, sizeof(vr), "%.3f", rt / t);
            fprintf(f, ", \"order\": \"%s\", \"time_us\": %.3f, \"source\": \"%s\", "
                       "\"busbw_GBps\": %.3f, \"speedup_vs_ring\": %s, \"bottleneck\": \"%s\", "
                       "\"registry_default\": %s, \"chosen\": %s",
                    p->map_name[x->map], t * 1e6, x->sim_s[k] >= 0 ? "sim" : "model",
                    busbw(p, k, t), vr, x->bottleneck,
                    x->is_default ? "true" : "false", c == ch ? "true" : "false");
            if (p->nccl)
                cs_cli_plan_json_terms(f, p, c, k);
            fprintf(f, "}");
        }
        if (p->nccl_ref)
            cs_cli_plan_nccl_json(f, p, k);
        fprintf(f, "\n    ]");
        if (p->nccl_ref)
            cs_cli_plan_nccl_compare_json(f, p, k);
        fprintf(f, "}");
    }
    fprintf(f, "\n  ]\n}\n");
    free(order);
}

/* --format nccl-tests: the choice per size as one nccl-tests run per rank
 * order (the devices block names the hosts of one order), its title
 * naming the choice of each size. */
static int print_nccl(const cs_planner_t *p, const uint64_t *asked, int nasked)
{
    cs_platform_t *plat = NULL;
    cs_err_t err;
    cs_err_clear(&err);
    if (cs_platform_open(p->platform, &plat, &err) != CS_OK) {
        fprintf(stderr, "collstep plan: %s\n", err.msg);
        return cs_cli_exit_code(err.code);
    }
    cs_nccl_table_t t[CS_PLANNER_MAX_MAPS];
    cs_result_t rows[CS_PLANNER_MAX_SIZES];
    char title[CS_PLANNER_MAX_MAPS][8192], **devs[CS_PLANNER_MAX_MAPS] = {0};
    const char **hv[CS_PLANNER_MAX_MAPS] = {0};
    int nt = 0, nrows = 0, rc = CS_EXIT_OK;
    memset(t, 0, sizeof(t));
    for (int m = 0; m < p->nmaps && rc == CS_EXIT_OK; m++) {
        int first = nrows;
        size_t len = (size_t)snprintf(title[nt], sizeof(title[nt]),
                                      "%s, %d ranks, platform %s, model %s: the plan's choice per "
                                      "size in rank order %s\nplanned by collstep plan, in the "
                                      "layout of nccl-tests %s",
                                      cs_coll_name(p->coll), p->ranks, p->platform,
                                      cs_sim_model_name(p->model), p->map_name[m],
                                      CS_NCCL_TESTS_VERSION);
        for (int k = 0; k < p->nsizes; k++) {
            int ch = cs_planner_choice(p, k);
            if (ch < 0 || p->cands[ch].map != m)
                continue;
            const cs_planner_cand_t *x = &p->cands[ch];
            uint64_t moved = cs_cli_size_moved(p->coll, p->ranks, p->sizes[k], 4);
            cs_result_fill(&rows[nrows], x->algo, p->coll, p->ranks, moved, CS_DT_F32, CS_OP_SUM,
                           cs_planner_time(p, ch, k) * 1e6, p->platform);
            cs_result_set_provenance(&rows[nrows++], x->params, cs_sim_model_name(p->model),
                                     NULL);
            if (len < sizeof(title[nt]))
                len += (size_t)snprintf(title[nt] + len, sizeof(title[nt]) - len,
                                        "\n  %" PRIu64 " B: %s %s (%s)", moved, x->algo,
                                        x->params[0] ? x->params : "(defaults)",
                                        x->sim_s[k] >= 0 ? "simulated" : "cost model");
        }
        if (nrows == first)
            continue;
        hv[nt] = malloc(sizeof(char *) * (size_t)p->ranks);
        if (!hv[nt]) {
            fprintf(stderr, "collstep plan: out of memory\n");
            rc = CS_EXIT_RUNTIME;
            break;
        }
        for (int r = 0; r < p->ranks; r++)
            hv[nt][r] = cs_planner_host(p, m, r);
        t[nt].title = title[nt];
        t[nt].rows = &rows[first];
        t[nt].n = nrows - first;
        rc = cs_cli_nccl_table("plan", plat, hv[nt], p->ranks, asked, nasked, &t[nt], &devs[nt]);
        nt++;
    }
    cs_cli_report_t r = {CS_FMT_NCCL_TESTS, NULL, 0, 0, NULL, NULL};
    if (rc == CS_EXIT_OK)
        rc = cs_cli_nccl_report("plan", &r, t, nt);
    for (int i = 0; i < nt; i++) {
        cs_cli_nccl_table_free(&t[i], devs[i]);
        free(hv[i]);
    }
    cs_platform_close(plat);
    return rc;
}

/* ---- tuning table -------------------------------------------------------- */

static int write_table(const cs_cli_plan_out_t *a, const cs_planner_t *p)
{
    cs_err_t err;
    cs_err_clear(&err);
    cs_tuning_t *t = NULL;
    int st = cs_planner_tuning(p, p->platform, &t, &err);
    cs_out_t *o = NULL;
    if (st == CS_OK)
        st = cs_out_begin_file(a->output, CS_OUT_STDOUT | (a->force ? CS_OUT_FORCE : 0),
                               &tuning_kind, &o, &err);
    if (st == CS_OK) {
        st = cs_tuning_write(t, cs_out_stream(o), &err);
        if (st == CS_OK)
            st = cs_out_commit(o, &err);
        else
            cs_out_abort(o);
    }
    cs_tuning_free(t);
    if (st == CS_OK) {
        /* a table names collstep's algorithms only: the sizes where NCCL's
         * own choice, simulated under the same model, is faster */
        char list[512] = "";
        size_t n = 0;
        int more = 0;
        double worst = 1;
        for (int k = 0; p->nccl && k < p->nsizes; k++) {
            int c = cs_planner_choice(p, k);
            double tn = p->nccl_pick[k].sim_s, tc = c >= 0 ? p->cands[c].sim_s[k] : -1;
            if (!(tn > 0 && tc > tn * 1.02))
                continue;
            worst = fmax(worst, tc / tn);
            if (n >= sizeof(list) - 40) {
                more++;
                continue;
            }
            char b[32];
            cs_cli_size_text(p->sizes[k], b, sizeof(b));
            n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", n ? ", " : "", b);
        }
        if (more)
            snprintf(list + n, sizeof(list) - n, " and %d more size%s", more, more == 1 ? "" : "s");
        if (n)
            fprintf(stderr, "collstep plan: note: -o %s: at %s the table's choice is slower than "
                            "NCCL's own (up to %.2fx, as simulated): a tuning table names "
                            "collstep's algorithms only; leave those sizes to NCCL\n",
                    a->output, list, worst);
        return CS_EXIT_OK;
    }
    if (!err.msg[0])
        snprintf(err.msg, sizeof(err.msg), "out of memory");
    fprintf(stderr, "collstep plan: -o %s: %s\n", a->output, err.msg);
    return cs_cli_exit_code(st);
}

int cs_cli_plan_report(const cs_cli_plan_out_t *a, const cs_planner_t *p)
{
    int rc = CS_EXIT_OK;
    if (a->fmt == CS_FMT_NCCL_TESTS)
        rc = print_nccl(p, a->asked, a->nasked);
    else if (a->fmt == CS_FMT_CSV)
        print_csv(stdout, p);
    else if (a->fmt == CS_FMT_JSON)
        print_json(stdout, a, p);
    else
        print_table(stdout, a, p);
    fflush(stdout);
    if (p->ncut) {
        char list[1200];
        cut_list(p, list, sizeof(list));
        fprintf(stderr, "collstep plan: warning: the budget cut %d (%s); this plan may differ "
                        "from an uncut one\n", p->ncut, list);
    }
    if (rc == CS_EXIT_OK && a->output)
        rc = write_table(a, p);
    return rc;
}

