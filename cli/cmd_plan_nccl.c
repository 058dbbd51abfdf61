/*
 * cmd_plan_nccl.c - NCCL's choice in `collstep plan`'s report: per size
 * its tuner's algorithm, protocol and channels, simulated as a collstep
 * schedule, beside collstep's best.  Under `--model nccl` the speed-up and
 * the term that dominates the slower one's time (planner/cs_planner.h's
 * cs_planner_terms_t: latency steps, a link tier's bandwidth, the switch);
 * under another model a reference row: its busbw against the links' bound.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cs_nccl.h"
#include "cs_planner.h"

static double busbw(const cs_planner_t *p, int k, double t)
{
    return t > 0 ? (double)p->sizes[k] / t * cs_coll_busbw_factor(p->coll, p->ranks) / 1e9 : 0;
}

/* The term that dominates t (seconds simulated): "latency", "bandwidth"
 * or "switch", with its words in buf. */
static const char *dominant(const cs_planner_terms_t *t, double total, char *buf, size_t len)
{
    char lat[240], bw[200], sw[160], ops[96] = "";
    /* the switch's operations, each a step's latency (the rank with the
     * most: one after another, where the simulation pipelines them) */
    if (t->sw_ops > 0 && t->sw_op_s > 0)
        snprintf(ops, sizeof(ops), " + %.0f switch operation%s x %.2f us", t->sw_ops,
                 t->sw_ops == 1 ? "" : "s", t->sw_op_s * 1e6);
    snprintf(lat, sizeof(lat), "%.0f step%s x %.2f us + %.2f us base%s = %.2f us", t->steps,
             t->steps == 1 ? "" : "s", t->step_s * 1e6, t->base_s * 1e6, ops, t->lat_s * 1e6);
    if (t->tier[0])
        snprintf(bw, sizeof(bw), "%.2f us, most on the platform's %s links at %.1f GB/s per message (%s)",
                 t->bw_s * 1e6, t->tier, t->tier_rate / 1e9,
                 t->capped ? "NCCL's channel cap" : "the link x the protocol's efficiency");
    else
        snprintf(bw, sizeof(bw), "%.2f us", t->bw_s * 1e6);
    snprintf(sw, sizeof(sw), "%.2f us, the %s switch reducing %.1f GB/s per member", t->sw_s * 1e6,
             t->sw_kind, t->sw_rate / 1e9);
    const char *term = "latency";
    double most = t->lat_s;
    if (t->bw_s > most)
        term = "bandwidth", most = t->bw_s;
    if (t->sw_s > most)
        term = "switch", most = t->sw_s;
    /* the terms are what each would cost alone; the simulation overlaps
     * them (channels, pieces), so one may exceed the time simulated */
    int any_over = t->lat_s > total * 1.05 || t->bw_s > total * 1.05 ||
                   (t->sw_kind[0] && t->sw_s > total * 1.05);
    const char *over = any_over ? " simulated (each term counts its rounds or operations one "
                                  "after another, which the simulation overlaps)"
                                : " simulated";
    if (strcmp(term, "latency") == 0)
        snprintf(buf, len, "latency dominates: %s of %.2f us%s (bandwidth %s%s%s)", lat,
                 total * 1e6, over, bw, t->sw_kind[0] ? "; switch " : "",
                 t->sw_kind[0] ? sw : "");
    else if (strcmp(term, "bandwidth") == 0)
        snprintf(buf, len, "bandwidth dominates: %s, of %.2f us%s (latency %s%s%s)", bw,
                 total * 1e6, over, lat, t->sw_kind[0] ? "; switch " : "",
                 t->sw_kind[0] ? sw : "");
    else
        snprintf(buf, len, "the switch dominates: %s, of %.2f us%s (latency %s; bandwidth %s)",
                 sw, total * 1e6, over, lat, bw);
    return term;
}

typedef struct versus {
    int best;              /* collstep's choice, -1: none */
    double tn, tb;         /* NCCL's simulated time, collstep's best's; < 0: unknown */
    const char *slower;    /* "nccl", "collstep", NULL: unknown */
    const char *term;      /* the slower one's dominant term, NULL: unknown */
    char text[2048];
} versus_t;

static void compare(const cs_planner_t *p, int k, versus_t *v)
{
    const cs_planner_nccl_t *n = &p->nccl_pick[k];
    v->best = cs_planner_choice(p, k);
    v->tn = n->sim_s;
    v->tb = v->best >= 0 && p->cands[v->best].sim_s[k] >= 0 ? p->cands[v->best].sim_s[k] : -1;
    v->slower = v->term = NULL;
    if (v->tn < 0) {
        snprintf(v->text, sizeof(v->text), "NCCL's choice: %s", n->err);
        return;
    }
    if (v->tb < 0) {
        snprintf(v->text, sizeof(v->text), "collstep's best was not simulated");
        return;
    }
    const cs_planner_cand_t *b = &p->cands[v->best];
    int nccl_slower = v->tn > v->tb;
    /* within half a percent: as fast, either way (the terms then are
     * collstep's best's) */
    int same = fabs(v->tn / v->tb - 1) <= 0.005;
    if (same)
        nccl_slower = 0;
    const cs_planner_terms_t *t = nccl_slower ? &n->terms : &b->terms[k];
    double ts = nccl_slower ? v->tn : v->tb;
    char who[256], why[1536];
    /* AMD GPUs run RCCL, which the model stands for with its own constants */
    const char *lib = strncmp(p->nccl_note, "RCCL", 4) == 0 ? "RCCL" : "NCCL";
    if (same)
        snprintf(who, sizeof(who), "collstep's %s%s%s is as fast as %s's %s/%s (%.3fx)", b->algo,
                 b->params[0] ? " " : "", b->params, lib, cs_nccl_algo_name(n->algo),
                 cs_nccl_proto_name(n->proto), v->tn / v->tb);
    else if (nccl_slower)
        snprintf(who, sizeof(who), "%s's %s/%s (as %s%s%s) is %.2fx slower than collstep's %s",
                 lib, cs_nccl_algo_name(n->algo), cs_nccl_proto_name(n->proto), n->sched,
                 n->params[0] ? " " : "", n->params, v->tn / v->tb, b->algo);
    else
        snprintf(who, sizeof(who), "collstep's %s%s%s is %.2fx slower than %s's %s/%s", b->algo,
                 b->params[0] ? " " : "", b->params, v->tb / v->tn, lib,
                 cs_nccl_algo_name(n->algo), cs_nccl_proto_name(n->proto));
    v->slower = same ? "neither" : nccl_slower ? "nccl" : "collstep";
    if (!t->ok) {
        snprintf(v->text, sizeof(v->text), "%s; its terms are unknown (too many messages)", who);
        return;
    }
    v->term = dominant(t, ts, why, sizeof(why));
    snprintf(v->text, sizeof(v->text), "%s: %s", who, why);
}

void cs_cli_plan_nccl_header(FILE *f, const cs_planner_t *p)
{
    if (p->nccl)
        fprintf(f, "# %s\n# simulations pay NCCL's per-step costs; the cost model ranks by the "
                   "links alone\n", p->nccl_note);
    else if (p->nccl_ref)
        fprintf(f, "# nccl (reference): %s; NCCL's choice simulated under the %s model, never "
                   "chosen\n", p->nccl_note, cs_sim_model_name(p->model));
    else if (p->nccl_note[0])
        fprintf(f, "# nccl (reference): %s\n", p->nccl_note);
}

/* Under another model than nccl: NCCL's choice as a reference row, its
 * busbw against the links' bound and the choice's speed-up over it. */
static void ref_table(FILE *f, const cs_planner_t *p, int k)
{
    const cs_planner_nccl_t *n = &p->nccl_pick[k];
    int best = cs_planner_choice(p, k);
    double tb = best >= 0 ? cs_planner_time(p, best, k) : -1;
    fprintf(f, "nccl (reference): %s %s picks %s/%s on %d channel%s, simulated as %s%s%s",
            p->nccl_lib, p->nccl_version, cs_nccl_algo_name(n->algo),
            cs_nccl_proto_name(n->proto), n->channels, n->channels == 1 ? "" : "s", n->sched,
            n->params[0] ? " " : "", n->params);
    if (n->sim_s < 0) {
        fprintf(f, ": %s\n", n->err);
        return;
    }
    fprintf(f, ": %.2f us, busbw %.2f GB/s", n->sim_s * 1e6, busbw(p, k, n->sim_s));
    if (p->bound_s[k] > 0)
        fprintf(f, ", %.1f %% of the links' bound", 100 * p->bound_s[k] / n->sim_s);
    if (tb > 0)
        fprintf(f, "; the choice %.2fx its speed", n->sim_s / tb);
    fputc('\n', f);
}

void cs_cli_plan_nccl_table(FILE *f, const cs_planner_t *p, int k)
{
    if (!p->nccl) {
        ref_table(f, p, k);
        return;
    }
    const cs_planner_nccl_t *n = &p->nccl_pick[k];
    versus_t v;
    compare(p, k, &v);
    fprintf(f, "nccl: %s %s picks %s/%s on %d channel%s", p->nccl_lib, p->nccl_version,
            cs_nccl_algo_name(n->algo), cs_nccl_proto_name(n->proto), n->channels,
            n->channels == 1 ? "" : "s");
    if (n->tuner_s >= 0)
        fprintf(f, " (its tuner: %.2f us)", n->tuner_s * 1e6);
    fprintf(f, ", simulated as %s%s%s", n->sched, n->params[0] ? " " : "", n->params);
    if (v.tn >= 0)
        fprintf(f, ": %.2f us, busbw %.2f GB/s", v.tn * 1e6, busbw(p, k, v.tn));
    if (v.tb >= 0)
        fprintf(f, "; collstep's best %s %.2f us", p->cands[v.best].algo, v.tb * 1e6);
    if (v.tn >= 0 && v.tb > 0)
        fprintf(f, "; speed-up over NCCL %.2fx", v.tn / v.tb);
    /* as sim says: a speed-up over a simulation far from NCCL's own model
     * is a speed-up over the schedule standing for NCCL's choice */
    if (v.tn >= 0 && n->tuner_s > 0 && v.tn > 2 * n->tuner_s)
        fprintf(f, " (the simulation of NCCL's choice takes more than twice its tuner's time: "
                   "the schedule standing for it does not follow NCCL's paths here, "
                   "docs/nccl-model.md)");
    fprintf(f, "\nwhy:  %s\n", v.text);
}

static void terms_json(FILE *f, const cs_planner_terms_t *t)
{
    if (!t->ok) {
        fprintf(f, "null");
        return;
    }
    fprintf(f, "{\"paid_as\": \"%s/%s\", \"latency_us\": %.3f, \"steps\": %.0f, "
               "\"step_latency_us\": %.4f, \"base_latency_us\": %.3f, \"switch_ops\": %.0f, "
               "\"switch_op_latency_us\": %.4f, \"bandwidth_us\": %.3f, \"tier\": ",
            cs_nccl_algo_name(t->algo), cs_nccl_proto_name(t->proto), t->lat_s * 1e6, t->steps,
            t->step_s * 1e6, t->base_s * 1e6, t->sw_ops, t->sw_op_s * 1e6, t->bw_s * 1e6);
    cs_json_write_str(f, t->tier);
    fprintf(f, ", \"tier_GBps\": %.3f, \"capped\": %s, \"switch_us\": %.3f, \"switch\": ",
            t->tier_rate / 1e9, t->capped ? "true" : "false", t->sw_s * 1e6);
    cs_json_write_str(f, t->sw_kind);
    fprintf(f, ", \"switch_GBps\": %.3f}", t->sw_rate / 1e9);
}

void cs_cli_plan_json_terms(FILE *f, const cs_planner_t *p, int c, int k)
{
    fprintf(f, ", \"choice\": \"collstep\", \"terms\": ");
    if (p->cands[c].sim_s[k] >= 0)
        terms_json(f, &p->cands[c].terms[k]);
    else
        fprintf(f, "null");
}

void cs_cli_plan_nccl_json(FILE *f, const cs_planner_t *p, int k)
{
    const cs_planner_nccl_t *n = &p->nccl_pick[k];
    fprintf(f, ",\n      {\"choice\": \"nccl\", %s\"library\": \"%s\", \"version\": \"%s\", "
               "\"algorithm\": \"%s\", \"protocol\": \"%s\", \"channels\": %d, \"tuner_us\": ",
            p->nccl ? "" : "\"reference\": true, ", p->nccl_lib, p->nccl_version,
            cs_nccl_algo_name(n->algo), cs_nccl_proto_name(n->proto), n->channels);
    if (n->tuner_s >= 0)
        fprintf(f, "%.3f", n->tuner_s * 1e6);
    else
        fprintf(f, "null");
    fprintf(f, ", \"time_us\": ");
    if (n->sim_s >= 0)
        fprintf(f, "%.6f, \"source\": \"sim\", \"busbw_GBps\": %.3f", n->sim_s * 1e6,
                busbw(p, k, n->sim_s));
    else
        fprintf(f, "null, \"source\": \"none\", \"busbw_GBps\": null");
    /* as the table's caveat: more than twice the tuner's time, the schedule
     * standing for NCCL's choice does not follow NCCL's paths */
    if (p->nccl)
        fprintf(f, ", \"far_from_tuner\": %s",
                n->sim_s >= 0 && n->tuner_s > 0 && n->sim_s > 2 * n->tuner_s ? "true" : "false");
    fprintf(f, ", \"algo\": \"%s\", \"params\": ", n->sched);
    cs_json_write_str(f, n->params);
    char sched[200];
    snprintf(sched, sizeof(sched), "%s%s%s", n->sched, n->params[0] ? " " : "", n->params);
    fprintf(f, ", \"schedule\": ");
    cs_json_write_str(f, sched);
    if (!p->nccl) /* the reference: its share of the links' bound */
        fprintf(f, ", \"bound_pct\": %.3f", n->sim_s > 0 && p->bound_s[k] > 0
                                                ? 100 * p->bound_s[k] / n->sim_s : 0.0);
    fprintf(f, ", \"order\": \"%s\", \"terms\": ", p->map_name[0]);
    if (n->sim_s >= 0 && p->nccl)
        terms_json(f, &n->terms);
    else
        fprintf(f, "null");
    fprintf(f, ", \"error\": ");
    cs_json_write_str(f, n->sim_s >= 0 ? "" : n->err);
    fprintf(f, "}");
}

void cs_cli_plan_nccl_compare_json(FILE *f, const cs_planner_t *p, int k)
{
    versus_t v;
    compare(p, k, &v);
    if (!p->nccl) { /* the reference: no terms under this model */
        v.term = NULL;
        v.text[0] = '\0';
        if (v.best >= 0 && (v.tb = cs_planner_time(p, v.best, k)) > 0 && v.tn >= 0) {
            v.slower = v.tn > v.tb ? "nccl" : "collstep";
            snprintf(v.text, sizeof(v.text), "NCCL's %s/%s (as %s) %.2f us, the choice %s "
                     "%.2f us, under the %s model", cs_nccl_algo_name(p->nccl_pick[k].algo),
                     cs_nccl_proto_name(p->nccl_pick[k].proto), p->nccl_pick[k].sched,
                     v.tn * 1e6, p->cands[v.best].algo, v.tb * 1e6,
                     cs_sim_model_name(p->model));
        }
    }
    fprintf(f, ", \"versus_nccl\": {\"speedup\": ");
    if (v.tn >= 0 && v.tb > 0)
        fprintf(f, "%.4f", v.tn / v.tb);
    else
        fprintf(f, "null");
    fprintf(f, ", \"slower\": ");
    if (v.slower)
        fprintf(f, "\"%s\"", v.slower);
    else
        fprintf(f, "null");
    fprintf(f, ", \"dominant\": ");
    if (v.term)
        fprintf(f, "\"%s\"", v.term);
    else
        fprintf(f, "null");
    fprintf(f, ", \"explanation\": ");
    cs_json_write_str(f, v.text);
    fprintf(f, "}");
}

void cs_cli_plan_nccl_csv(FILE *f, const cs_planner_t *p, int k)
{
    const cs_planner_nccl_t *n = &p->nccl_pick[k];
    if (n->sim_s < 0)
        return;
    int ring = cs_planner_ring(p);
    double rt = ring >= 0 ? cs_planner_time(p, ring, k) : -1;
    char vr[32] = ""; /* empty: the collective has no flat ring */
    if (rt > 0 && n->sim_s > 0)
        snprintf(vr, sizeof(vr), "%.3f", rt / n->sim_s);
    fprintf(f, "%" PRIu64 ",0,%s,\"%s\",%s,%.3f,sim,%.3f,%.3f,%.3f,%s,%s,0,0,nccl\n",
            p->sizes[k], n->sched, n->params, p->map_name[0], n->sim_s * 1e6,
            n->tuner_s >= 0 ? n->tuner_s * 1e6 : -1.0, n->sim_s * 1e6, busbw(p, k, n->sim_s), vr,
            n->terms.ok && n->terms.tier[0] ? n->terms.tier : "-");
}
