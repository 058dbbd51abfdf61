/*
 * cs_msccl_write.c - a collstep schedule as an MSCCL algorithm XML that
 * MSCCL's executor accepts (the old msccl-tools format: <algo>, <gpu>,
 * <tb>, <step s type srcbuf srcoff dstbuf dstoff cnt depid deps hasdep>).
 *
 *   send   -> s    (tb: send peer, channel)     copy   -> cpy  (local tb)
 *   recv   -> r    (tb: recv peer, channel)     reduce -> re   (local tb)
 *   rrecv  -> rrc  with src = dst (tb: recv peer, channel)
 *   nop    -> nothing: who waits for it waits for what it waits for
 *
 * Threadblocks: one per (send peer, channel) and one per (recv peer,
 * channel), as the executor requires (a connection belongs to one
 * threadblock; steps keep schedule order, which is also collstep's order on
 * a channel); local steps go to threadblocks of their own, one per chain: a
 * local step joins the threadblock whose last step it waits for, otherwise
 * starts one, so no local step waits behind an unrelated one.
 * Dependencies: a threadblock runs in order, so waits inside it vanish; of
 * the waits on another threadblock only the latest step counts; the first
 * becomes depid/deps, each further one a nop before the step (the
 * executor's chain of dependencies), and every step waited for gets
 * hasdep="1".  Scratch buffers are laid out one after the other in s.
 * The file starts with collstep's marker comment (CS_OUT_XML_MARK, so that
 * cs_msccl_save replaces only what collstep wrote); MSCCL's executor and
 * msccl-tools skip comments.
 */
#include <stdlib.h>
#include <string.h>

#include "cs_grow.h"
#include "cs_msccl.h"
#include "cs_out.h"

#ifndef CS_VERSION
#define CS_VERSION "unknown"
#endif

/* The executor's limits (msccl_struct.h). */
#define X_MAX_STEPS 64
#define X_MAX_COUNT 72
#define X_MAX_TB_PER_CHAN 32
#define X_MAX_CHANNELS 32 /* NCCL's MAXCHANNELS */

typedef struct wstep {
    uint32_t step; /* schedule step */
    int32_t dep_tb, dep_pos; /* -1: none */
    uint32_t nextra;         /* nops before it */
    uint32_t extra_off;      /* into the rank's extra[] (tb, pos pairs) */
} wstep_t;

typedef struct wtb {
    int kind; /* 0 local, 1 send, 2 recv */
    int peer, chan;
    uint32_t *steps; /* schedule steps in order */
    uint32_t n;
    size_t cap;
    uint32_t nxml; /* XML steps including nops */
} wtb_t;

typedef struct wrank {
    wtb_t *tb;
    int ntb;
    size_t cap;
    int32_t *tb_of, *pos_of; /* per schedule step: tb and XML position */
    uint8_t *hasdep_mark;    /* per schedule step */
} wrank_t;

static int tb_push(wtb_t *t, uint32_t step)
{
    if (cs_grow(&t->steps, &t->cap, (size_t)t->n + 1, sizeof(*t->steps), 8))
        return -1;
    t->steps[t->n++] = step;
    return 0;
}

static int tb_new(wrank_t *w, int kind, int peer, int chan)
{
    if (cs_grow(&w->tb, &w->cap, (size_t)w->ntb + 1, sizeof(*w->tb), 8))
        return -1;
    memset(&w->tb[w->ntb], 0, sizeof(wtb_t));
    w->tb[w->ntb].kind = kind;
    w->tb[w->ntb].peer = peer;
    w->tb[w->ntb].chan = chan;
    return w->ntb++;
}

/* Effective dependencies of step i: nops replaced by theirs, recursively
 * (nops only wait for earlier steps, so eff[] of those is ready). */
typedef struct effdeps {
    uint32_t **v;
    uint32_t *n;
} effdeps_t;

static int eff_build(const cs_rank_sched_t *rk, effdeps_t *e)
{
    e->v = calloc(rk->nsteps ? rk->nsteps : 1, sizeof(*e->v));
    e->n = calloc(rk->nsteps ? rk->nsteps : 1, sizeof(*e->n));
    if (e->v == NULL || e->n == NULL)
        return -1;
    for (uint32_t i = 0; i < rk->nsteps; i++) {
        const cs_step_t *st = &rk->steps[i];
        const uint32_t *d = cs_step_deps(rk, st);
        uint32_t cnt = 0;
        for (uint32_t j = 0; j < st->ndeps; j++)
            cnt += rk->steps[d[j]].kind == CS_STEP_NOP ? e->n[d[j]] : 1;
        e->v[i] = malloc((cnt ? cnt : 1) * sizeof(uint32_t));
        if (e->v[i] == NULL)
            return -1;
        for (uint32_t j = 0; j < st->ndeps; j++) {
            if (rk->steps[d[j]].kind == CS_STEP_NOP) {
                memcpy(e->v[i] + e->n[i], e->v[d[j]], e->n[d[j]] * sizeof(uint32_t));
                e->n[i] += e->n[d[j]];
            } else {
                e->v[i][e->n[i]++] = d[j];
            }
        }
    }
    return 0;
}

static void eff_free(effdeps_t *e, uint32_t n)
{
    for (uint32_t i = 0; e->v && i < n; i++)
        free(e->v[i]);
    free(e->v);
    free(e->n);
}

static void wrank_free(wrank_t *w)
{
    for (int t = 0; t < w->ntb; t++)
        free(w->tb[t].steps);
    free(w->tb);
    free(w->tb_of);
    free(w->pos_of);
    free(w->hasdep_mark);
}

/* Threadblocks of one rank. */
static int assign(const cs_rank_sched_t *rk, const effdeps_t *e, wrank_t *w)
{
    uint32_t n = rk->nsteps ? rk->nsteps : 1;
    w->tb_of = malloc(n * sizeof(int32_t));
    w->pos_of = malloc(n * sizeof(int32_t));
    w->hasdep_mark = calloc(n, 1);
    if (w->tb_of == NULL || w->pos_of == NULL || w->hasdep_mark == NULL)
        return -1;
    for (uint32_t i = 0; i < rk->nsteps; i++) {
        const cs_step_t *st = &rk->steps[i];
        int t = -1;
        w->tb_of[i] = -1;
        if (st->kind == CS_STEP_NOP)
            continue;
        if (st->kind == CS_STEP_SEND || st->kind == CS_STEP_RECV || st->kind == CS_STEP_RRECV) {
            int kind = st->kind == CS_STEP_SEND ? 1 : 2;
            for (int u = 0; u < w->ntb && t < 0; u++)
                if (w->tb[u].kind == kind && w->tb[u].peer == st->peer &&
                    w->tb[u].chan == st->chan)
                    t = u;
            if (t < 0 && (t = tb_new(w, kind, st->peer, st->chan)) < 0)
                return -1;
        } else {
            for (uint32_t j = 0; j < e->n[i] && t < 0; j++) {
                int u = w->tb_of[e->v[i][j]];
                if (u >= 0 && w->tb[u].kind == 0 && w->tb[u].steps[w->tb[u].n - 1] == e->v[i][j])
                    t = u;
            }
            if (t < 0 && (t = tb_new(w, 0, -1, 0)) < 0)
                return -1;
        }
        if (tb_push(&w->tb[t], i) != 0)
            return -1;
        w->tb_of[i] = t;
    }
    return 0;
}

/* Cross-threadblock waits of step i: the latest waited-for step per other
 * threadblock, sorted by threadblock.  Returns their number in out[]. */
static uint32_t waits(const effdeps_t *e, const wrank_t *w, uint32_t i, uint32_t *out)
{
    uint32_t n = 0;
    for (uint32_t j = 0; j < e->n[i]; j++) {
        uint32_t d = e->v[i][j];
        if (w->tb_of[d] == w->tb_of[i])
            continue;
        uint32_t k = 0;
        while (k < n && w->tb_of[out[k]] != w->tb_of[d])
            k++;
        if (k == n)
            out[n++] = d;
        else if (d > out[k])
            out[k] = d;
    }
    for (uint32_t k = 1; k < n; k++) /* by threadblock: one order for one graph */
        for (uint32_t j = k; j > 0 && w->tb_of[out[j]] < w->tb_of[out[j - 1]]; j--) {
            uint32_t x = out[j];
            out[j] = out[j - 1];
            out[j - 1] = x;
        }
    return n;
}

static void put_name(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else if ((unsigned char)*s >= ' ')
            fputc(*s, f);
    }
}

static const char *coll_xml(cs_coll_t c)
{
    switch (c) {
    case CS_COLL_ALLREDUCE:
        return "allreduce";
    case CS_COLL_REDUCE_SCATTER:
        return "reducescatter";
    case CS_COLL_ALLGATHER:
        return "allgather";
    case CS_COLL_ALLTOALL:
        return "alltoall";
    default:
        return NULL;
    }
}

/* Buffer letter and offset of a schedule range. */
static void loc(const cs_rank_sched_t *rk, const uint32_t *soff, cs_range_t r, char *b, long *off)
{
    if (r.buf == CS_BUF_IN) {
        *b = 'i', *off = r.off;
    } else if (r.buf == CS_BUF_OUT) {
        *b = 'o', *off = r.off;
    } else {
        *b = 's', *off = (long)soff[r.buf] + r.off;
    }
    (void)rk;
}

static int write_rank(const cs_sched_t *s, int r, const effdeps_t *e, wrank_t *w, FILE *f,
                      const cs_msccl_write_opts_t *o, cs_msccl_place_t *places, cs_err_t *err)
{
    const cs_rank_sched_t *rk = &s->ranks[r];
    uint32_t *soff = calloc(rk->nbufs ? rk->nbufs : 1, sizeof(uint32_t));
    uint32_t *wt = malloc((rk->nsteps ? rk->nsteps : 1) * sizeof(uint32_t));
    if (soff == NULL || wt == NULL) {
        free(soff);
        free(wt);
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    }
    uint32_t stot = 0;
    for (int b = CS_BUF_FIRST_SCRATCH; b < rk->nbufs; b++) {
        soff[b] = stot;
        stot += rk->bufs[b].nchunks;
    }
    /* XML positions (nops included) and hasdep marks. */
    for (int t = 0; t < w->ntb; t++) {
        uint32_t pos = 0;
        for (uint32_t k = 0; k < w->tb[t].n; k++) {
            uint32_t i = w->tb[t].steps[k];
            uint32_t nw = waits(e, w, i, wt);
            pos += nw > 1 ? nw - 1 : 0;
            w->pos_of[i] = (int32_t)pos++;
        }
        w->tb[t].nxml = pos;
    }
    for (uint32_t i = 0; i < rk->nsteps; i++) {
        if (w->tb_of[i] < 0)
            continue;
        uint32_t nw = waits(e, w, i, wt);
        for (uint32_t k = 0; k < nw; k++)
            w->hasdep_mark[wt[k]] = 1;
    }
    int rc = CS_OK;
    if (o && o->check_limits) {
        for (int t = 0; t < w->ntb && rc == CS_OK; t++) {
            if (w->tb[t].nxml > X_MAX_STEPS)
                rc = cs_err_set(err, CS_ERR_UNSUPPORTED,
                                "rank %d: threadblock %d would have %u steps; MSCCL's executor "
                                "takes at most %d (use fewer chunks, or --no-limits)",
                                r, t, w->tb[t].nxml, X_MAX_STEPS);
            int same = 0;
            for (int u = 0; u < w->ntb; u++)
                same += w->tb[u].kind == w->tb[t].kind && w->tb[t].kind != 0 &&
                        w->tb[u].chan == w->tb[t].chan;
            if (rc == CS_OK && same > X_MAX_TB_PER_CHAN)
                rc = cs_err_set(err, CS_ERR_UNSUPPORTED,
                                "rank %d: %d peers to %s on channel %d; MSCCL's executor takes "
                                "at most %d (or --no-limits)",
                                r, same, w->tb[t].kind == 1 ? "send to" : "receive from",
                                w->tb[t].chan, X_MAX_TB_PER_CHAN);
        }
        for (uint32_t i = 0; i < rk->nsteps && rc == CS_OK; i++) {
            const cs_step_t *st = &rk->steps[i];
            uint32_t cnt = st->kind == CS_STEP_SEND ? st->src.n : st->dst.n;
            if (st->kind != CS_STEP_NOP && cnt >= X_MAX_COUNT)
                rc = cs_err_set(err, CS_ERR_UNSUPPORTED,
                                "rank %d step %llu moves %u chunks; MSCCL's executor takes at "
                                "most %d per step (or --no-limits)",
                                r, (unsigned long long)i, cnt, X_MAX_COUNT - 1);
        }
    }
    if (rc != CS_OK)
        goto out;
    fprintf(f, "  <gpu id=\"%d\" i_chunks=\"%u\" o_chunks=\"%u\" s_chunks=\"%u\">\n", r,
            rk->bufs[CS_BUF_IN].nchunks, rk->bufs[CS_BUF_OUT].nchunks, stot);
    for (int t = 0; t < w->ntb; t++) {
        const wtb_t *tb = &w->tb[t];
        fprintf(f, "    <tb id=\"%d\" send=\"%d\" recv=\"%d\" chan=\"%d\">\n", t,
                tb->kind == 1 ? tb->peer : -1, tb->kind == 2 ? tb->peer : -1, tb->chan);
        uint32_t pos = 0;
        for (uint32_t k = 0; k < tb->n; k++) {
            uint32_t i = tb->steps[k];
            const cs_step_t *st = &rk->steps[i];
            uint32_t nw = waits(e, w, i, wt);
            for (uint32_t q = 1; q < nw; q++)
                fprintf(f,
                        "      <step s=\"%u\" type=\"nop\" srcbuf=\"i\" srcoff=\"-1\" "
                        "dstbuf=\"o\" dstoff=\"-1\" cnt=\"0\" depid=\"%d\" deps=\"%d\" "
                        "hasdep=\"0\"/>\n",
                        pos++, w->tb_of[wt[q]], w->pos_of[wt[q]]);
            char sb = 'i', db = 'o';
            long so = -1, dof = -1;
            const char *type = "nop";
            uint32_t cnt = 0;
            switch (st->kind) {
            case CS_STEP_SEND:
                type = "s", loc(rk, soff, st->src, &sb, &so), cnt = st->src.n;
                break;
            case CS_STEP_RECV:
                type = "r", loc(rk, soff, st->dst, &db, &dof), cnt = st->dst.n;
                break;
            case CS_STEP_RRECV:
                type = "rrc", loc(rk, soff, st->dst, &db, &dof), cnt = st->dst.n;
                sb = db, so = dof;
                break;
            case CS_STEP_COPY:
            case CS_STEP_REDUCE:
                type = st->kind == CS_STEP_COPY ? "cpy" : "re";
                loc(rk, soff, st->src, &sb, &so);
                loc(rk, soff, st->dst, &db, &dof);
                cnt = st->src.n;
                break;
            default:
                break;
            }
            fprintf(f,
                    "      <step s=\"%u\" type=\"%s\" srcbuf=\"%c\" srcoff=\"%ld\" "
                    "dstbuf=\"%c\" dstoff=\"%ld\" cnt=\"%u\" depid=\"%d\" deps=\"%d\" "
                    "hasdep=\"%d\"/>\n",
                    pos, type, sb, so, db, dof, cnt, nw ? w->tb_of[wt[0]] : -1,
                    nw ? w->pos_of[wt[0]] : -1, w->hasdep_mark[i]);
            if (places)
                places[i] = (cs_msccl_place_t){t, (int32_t)pos};
            pos++;
        }
        fprintf(f, "    </tb>\n");
    }
    fprintf(f, "  </gpu>\n");
    for (uint32_t i = 0; places && i < rk->nsteps; i++)
        if (w->tb_of[i] < 0)
            places[i] = (cs_msccl_place_t){-1, -1};
out:
    free(soff);
    free(wt);
    return rc;
}

int cs_msccl_write(const cs_sched_t *s, const cs_msccl_write_opts_t *opts, FILE *f,
                   cs_msccl_place_t ***places, cs_err_t *err)
{
    const char *coll = coll_xml(s->desc.coll);
    if (coll == NULL)
        return cs_err_set(err, CS_ERR_UNSUPPORTED,
                          "%s: MSCCL's XML has no root, so collstep exports allreduce, "
                          "reduce-scatter, allgather and alltoall only",
                          cs_coll_name(s->desc.coll));
    int sr;
    uint32_t si;
    if (cs_sched_first_switch(s, &sr, &si))
        return cs_err_set(err, CS_ERR_UNSUPPORTED,
                          "rank %d step %u: a switch step (in-network reduction) cannot be "
                          "exported: MSCCL's XML has no switch step",
                          sr, si);
    int P = s->desc.nranks, rc = CS_OK, maxchan = 0;
    cs_msccl_place_t **pl = NULL;
    if (places) {
        pl = calloc((size_t)P, sizeof(*pl));
        if (pl == NULL)
            return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    }
    for (int r = 0; r < P; r++)
        for (uint32_t i = 0; i < s->ranks[r].nsteps; i++)
            if (s->ranks[r].steps[i].kind <= CS_STEP_RRECV && s->ranks[r].steps[i].chan > maxchan)
                maxchan = s->ranks[r].steps[i].chan;
    if (opts && opts->check_limits && maxchan >= X_MAX_CHANNELS) {
        cs_msccl_places_free(pl, P);
        return cs_err_set(err, CS_ERR_UNSUPPORTED,
                          "the schedule uses channel %d; MSCCL's executor takes channels 0 to %d "
                          "(or --no-limits)",
                          maxchan, X_MAX_CHANNELS - 1);
    }
    const char *name = opts && opts->name ? opts->name : s->algo[0] ? s->algo : "collstep";
    /* the marker first: an existing file is replaced only when it has it
     * (MSCCL's parser and msccl-tools skip comments) */
    fprintf(f, "%s %s (collstep export msccl) -->\n", CS_OUT_XML_MARK, CS_VERSION);
    fprintf(f, "<algo name=\"");
    put_name(f, name);
    fprintf(f,
            "\" proto=\"%s\" nchannels=\"%d\" nchunksperloop=\"%u\" ngpus=\"%d\" coll=\"%s\" "
            "inplace=\"%d\" outofplace=\"%d\" minBytes=\"%lld\" maxBytes=\"%lld\">\n",
            opts && opts->proto ? opts->proto : "Simple", maxchan + 1, s->nchunks, P, coll,
            s->desc.inplace ? 1 : 0, s->desc.inplace ? 0 : 1,
            (long long)(opts ? opts->min_bytes : 0), (long long)(opts ? opts->max_bytes : 0));
    for (int r = 0; r < P && rc == CS_OK; r++) {
        const cs_rank_sched_t *rk = &s->ranks[r];
        effdeps_t e = {0};
        wrank_t w;
        memset(&w, 0, sizeof(w));
        if (pl && (pl[r] = calloc(rk->nsteps ? rk->nsteps : 1, sizeof(**pl))) == NULL)
            rc = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
        if (rc == CS_OK && (eff_build(rk, &e) != 0 || assign(rk, &e, &w) != 0))
            rc = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
        if (rc == CS_OK)
            rc = write_rank(s, r, &e, &w, f, opts, pl ? pl[r] : NULL, err);
        eff_free(&e, rk->nsteps);
        wrank_free(&w);
    }
    fprintf(f, "</algo>\n");
    if (rc == CS_OK && ferror(f))
        rc = cs_err_set(err, CS_ERR_IO, "write error");
    if (rc != CS_OK || places == NULL)
        cs_msccl_places_free(pl, P);
    else
        *places = pl;
    return rc;
}

void cs_msccl_places_free(cs_msccl_place_t **places, int nranks)
{
    for (int r = 0; places && r < nranks; r++)
        free(places[r]);
    free(places);
}

/* An MSCCL XML that collstep wrote (its marker), not any XML. */
static int recognize_xml(const char *head, size_t n)
{
    return cs_msccl_detect(head, n) && cs_out_xml_marked(head, n);
}

static const cs_out_kind_t kind = {"MSCCL algorithm file", recognize_xml, NULL, NULL, NULL};

int cs_msccl_check_output(const char *path, int flags, cs_err_t *err)
{
    return cs_out_check(path, flags | CS_OUT_STDOUT, &kind, 0, err);
}

int cs_msccl_save(const cs_sched_t *s, const cs_msccl_write_opts_t *opts, const char *path,
                  int flags, cs_err_t *err)
{
    cs_out_t *o = NULL;
    int rc = cs_out_begin_file(path, flags | CS_OUT_STDOUT, &kind, &o, err);
    if (rc != CS_OK)
        return rc;
    rc = cs_msccl_write(s, opts, cs_out_stream(o), NULL, err);
    if (rc != CS_OK) {
        cs_out_abort(o);
        return rc;
    }
    return cs_out_commit(o, err);
}
