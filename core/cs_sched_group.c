/* cs_sched_group.c - groups of ranks and switch steps (see cs_sched.h,
 * "Switch steps"). */
#include "cs_sched.h"

#include <stdlib.h>
#include <string.h>

#include "cs_grow.h"
#include "cs_sched_int.h"

static const char *const swop_names[CS_SW_COUNT] = {"allreduce", "reduce", "multicast"};

const char *cs_swop_name(cs_swop_t op)
{
    return (unsigned)op < CS_SW_COUNT ? swop_names[op] : "unknown";
}

cs_swop_t cs_swop_parse(const char *s)
{
    for (int op = 0; s != NULL && op < CS_SW_COUNT; op++)
        if (strcmp(s, swop_names[op]) == 0)
            return (cs_swop_t)op;
    return CS_SW_COUNT;
}

int cs_sched_find_group(const cs_sched_t *s, const char *name)
{
    for (uint32_t g = 0; name != NULL && g < s->ngroups; g++)
        if (strcmp(s->groups[g].name, name) == 0)
            return (int)g;
    return -1;
}

int cs_group_member(const cs_group_t *g, int rank)
{
    uint32_t lo = 0, hi = g->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->members[mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->n && g->members[lo] == rank ? (int)lo : -1;
}

int cs_sched_add_group(cs_sched_t *s, const char *name, const int32_t *members, uint32_t n)
{
    if (s->err.code != CS_OK)
        return -1;
    if (!cs__sched_valid_name(name)) {
        cs_err_set(&s->err, CS_ERR_INVAL,
                   "invalid group name (expected [A-Za-z_][A-Za-z0-9_]*, at most %d characters)",
                   CS_BUF_NAME_MAX - 1);
        return -1;
    }
    if (cs_sched_find_group(s, name) >= 0) {
        cs_err_set(&s->err, CS_ERR_INVAL, "group '%s' declared twice", name);
        return -1;
    }
    if (n == 0 || n > (uint32_t)s->desc.nranks || members == NULL) {
        cs_err_set(&s->err, CS_ERR_RANGE, "group '%s': %u members, expected 1 to %d", name, n,
                   s->desc.nranks);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (members[i] < 0 || members[i] >= s->desc.nranks) {
            cs_err_set(&s->err, CS_ERR_RANGE, "group '%s': rank %d out of range [0, %d)", name,
                       members[i], s->desc.nranks);
            return -1;
        }
        if (i > 0 && members[i] <= members[i - 1]) {
            cs_err_set(&s->err, CS_ERR_INVAL,
                       "group '%s': ranks must be distinct and increasing (%d after %d)", name,
                       members[i], members[i - 1]);
            return -1;
        }
    }
    if (s->ngroups >= (uint32_t)INT32_MAX) {
        cs_err_set(&s->err, CS_ERR_RANGE, "too many groups");
        return -1;
    }
    size_t cap = s->cap_groups;
    int32_t *m = malloc((size_t)n * sizeof(*m));
    if (m == NULL || cs_grow(&s->groups, &cap, (size_t)s->ngroups + 1, sizeof(*s->groups), 4)) {
        free(m);
        cs_err_set(&s->err, CS_ERR_NOMEM, "out of memory declaring group '%s'", name);
        return -1;
    }
    s->cap_groups = (uint32_t)cap;
    memcpy(m, members, (size_t)n * sizeof(*m));
    cs_group_t *g = &s->groups[s->ngroups];
    memset(g, 0, sizeof(*g));
    memcpy(g->name, name, strlen(name) + 1);
    g->members = m;
    g->n = n;
    return (int)s->ngroups++;
}

int cs__sched_check_switch(cs_sched_t *s, int rank, uint32_t idx, const cs_step_t *st)
{
    if (st->peer < 0 || (uint32_t)st->peer >= s->ngroups)
        return cs_err_set(&s->err, CS_ERR_RANGE,
                          "rank %d step %u: switch step on group %d, which is not declared", rank,
                          idx, st->peer);
    const cs_group_t *g = &s->groups[st->peer];
    if (cs_group_member(g, rank) < 0)
        return cs_err_set(&s->err, CS_ERR_INVAL,
                          "rank %d step %u: switch step on group '%s', of which rank %d is not "
                          "a member",
                          rank, idx, g->name, rank);
    int src = st->src.n > 0, dst = st->dst.n > 0;
    switch (st->op) {
    case CS_SW_ALLREDUCE:
        if (!src || !dst)
            return cs_err_set(&s->err, CS_ERR_INVAL,
                              "rank %d step %u: switch allreduce needs a source (the member's "
                              "contribution) and a destination (the reduced range)",
                              rank, idx);
        return CS_OK;
    case CS_SW_REDUCE:
        if (!src)
            return cs_err_set(&s->err, CS_ERR_INVAL,
                              "rank %d step %u: switch reduce needs a source (the member's "
                              "contribution)",
                              rank, idx);
        return CS_OK;
    case CS_SW_MULTICAST:
        if (!src && !dst)
            return cs_err_set(&s->err, CS_ERR_INVAL,
                              "rank %d step %u: switch multicast needs a destination (a "
                              "receiving member) or a source (the writer)",
                              rank, idx);
        return CS_OK;
    default:
        return cs_err_set(&s->err, CS_ERR_INVAL, "rank %d step %u: unknown switch operation %u",
                          rank, idx, st->op);
    }
}

int64_t cs_switch(cs_sched_t *s, int rank, cs_swop_t op, int group, int chan,
                  const cs_range_t *src, const cs_range_t *dst, const uint32_t *deps,
                  uint32_t ndeps)
{
    if (s->err.code != CS_OK)
        return -1;
    if (chan < 0 || chan >= CS_MAX_CHANNELS) {
        cs_err_set(&s->err, CS_ERR_RANGE, "rank %d: channel %d out of range [0, %d)", rank, chan,
                   CS_MAX_CHANNELS);
        return -1;
    }
    if ((src != NULL && src->n == 0) || (dst != NULL && dst->n == 0)) {
        cs_err_set(&s->err, CS_ERR_RANGE, "rank %d: switch step with an empty range", rank);
        return -1;
    }
    cs_step_t st = {.kind = CS_STEP_SWITCH, .op = (uint8_t)op, .chan = (uint16_t)chan,
                    .peer = group};
    if ((unsigned)op >= CS_SW_COUNT) /* uint8_t would wrap it into a valid one */
        st.op = UINT8_MAX;
    st.src = src != NULL ? *src : cs_rng(0, 0, 0);
    st.dst = dst != NULL ? *dst : cs_rng(0, 0, 0);
    return cs_sched_add(s, rank, &st, deps, ndeps);
}

int cs_sched_first_switch(const cs_sched_t *s, int *rank, uint32_t *step)
{
    for (int r = 0; s->nswitch > 0 && r < s->desc.nranks; r++)
        for (uint32_t i = 0; i < s->ranks[r].nsteps; i++)
            if (s->ranks[r].steps[i].kind == CS_STEP_SWITCH) {
                *rank = r;
                *step = i;
                return 1;
            }
    return 0;
}
