/*
 * cs_verify_find.c - how the verifier's checks word and store a finding
 * (cs_verify_int.h): the report's counter and slots, a step named with its
 * kind and peer, a range of chunks named with its buffer.  The checks in
 * cs_verify.c, cs_verify_race.c and cs_verify_value.c all call these, so
 * they live apart from each check and calls go one way: checks -> here.
 */
#include <stdarg.h>
#include <stdio.h>

#include "cs_verify_int.h"

int cs__vfind(cs__vctx_t *v, const char *kind, int rank, int64_t step, int64_t chunk,
              const char *fmt, ...)
{
    v->rep->total++;
    if (v->rep->n >= v->max)
        return 0;
    cs_finding_t *f = &v->rep->findings[v->rep->n++];
    f->rank = rank;
    f->step = step;
    f->chunk = chunk;
    snprintf(f->kind, sizeof(f->kind), "%s", kind);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
    va_end(ap);
    return 1;
}

const char *cs__vstep(const cs_sched_t *s, int rank, uint32_t i, char *buf, size_t n)
{
    const cs_step_t *st = &s->ranks[rank].steps[i];
    const char *kn = cs_step_kind_name((cs_step_kind_t)st->kind);
    if (st->kind == CS_STEP_SEND || st->kind == CS_STEP_RECV || st->kind == CS_STEP_RRECV) {
        char chan[32] = "";
        if (st->chan != 0)
            snprintf(chan, sizeof(chan), " on channel %u", st->chan);
        snprintf(buf, n, "step %u (%s %s %d%s)", i, kn, st->kind == CS_STEP_SEND ? "to" : "from",
                 st->peer, chan);
    } else if (st->kind == CS_STEP_SWITCH) {
        char chan[32] = "";
        if (st->chan != 0)
            snprintf(chan, sizeof(chan), " on channel %u", st->chan);
        snprintf(buf, n, "step %u (switch %s %s%s)", i, cs_swop_name((cs_swop_t)st->op),
                 (uint32_t)st->peer < s->ngroups ? s->groups[st->peer].name : "?", chan);
    } else {
        snprintf(buf, n, "step %u (%s)", i, kn);
    }
    return buf;
}

const char *cs__vrange(const cs_sched_t *s, int rank, uint16_t buf, uint32_t off, uint32_t n,
                       char *out, size_t size)
{
    const char *name = s->ranks[rank].bufs[buf].name;
    if (n == 1)
        snprintf(out, size, "%s[%u]", name, off);
    else
        snprintf(out, size, "%s[%u:%llu]", name, off, (unsigned long long)off + n);
    return out;
}
