/* cs_trees.c - k-nomial trees, chains, the double binary tree and the
 * pipelined tree phases (see cs_trees.h for the contracts). */
#include "cs_trees.h"

#include "cs_gen.h"

#include <stdlib.h>

void cs__tree_knomial(cs__tree_t *t, int nranks, int root, int radix)
{
    t->kind = CS__TREE_KNOMIAL;
    t->nranks = nranks;
    t->root = root;
    t->radix = radix < 2 ? 2 : radix;
    t->mirror = 0;
    t->local = t->which = t->chain = t->nchains = 0;
    t->perm = t->inv = NULL;
}

void cs__tree_chain(cs__tree_t *t, int nranks, int root)
{
    t->kind = CS__TREE_CHAIN;
    t->nranks = nranks;
    t->root = root;
    t->radix = 2;
    t->mirror = 0;
    t->local = t->which = t->chain = t->nchains = 0;
    t->perm = t->inv = NULL;
}

void cs__tree_dbtree(cs__tree_t *t, int nranks, int which)
{
    t->kind = CS__TREE_DBTREE;
    t->nranks = nranks;
    t->radix = 2;
    /* Tree 1: mirror for even P, shift by one for odd P (P = 1: identity). */
    t->mirror = which != 0 && nranks % 2 == 0;
    t->root = (which != 0 && nranks % 2 == 1 && nranks > 1) ? 1 : 0;
    t->local = t->which = t->chain = t->nchains = 0;
    t->perm = t->inv = NULL;
}

void cs__tree_nodes(cs__tree_t *t, int nranks, int local, int which, int chain, int nchains)
{
    t->kind = CS__TREE_NODES;
    t->nranks = nranks;
    t->root = 0;
    t->radix = 2;
    t->mirror = 0;
    t->local = local < 1 ? 1 : local;
    t->which = which != 0;
    t->nchains = nchains < 1 ? 1 : nchains;
    t->chain = chain < 0 ? 0 : chain % t->nchains;
    t->perm = t->inv = NULL;
}

void cs__tree_nodes_ordered(cs__tree_t *t, int nranks, int local, int which, const int *perm,
                            const int *inv)
{
    cs__tree_nodes(t, nranks, local, which, 0, 1);
    t->perm = perm;
    t->inv = inv;
}

/* ---- nodes: a chain in each node, a double binary tree over the nodes ---- */

/* First rank and size of node j. */
static void node_span(const cs__tree_t *t, int j, int *first, int *n)
{
    *first = j * t->local;
    *n = t->nranks - *first < t->local ? t->nranks - *first : t->local;
}

/* Offset of the chain's head in a node of n members. */
static int node_shift(const cs__tree_t *t, int n)
{
    return (int)((long long)t->chain * n / t->nchains);
}

/* Rank of chain member i (0: the head) of the node starting at first. */
static int node_member(const cs__tree_t *t, int first, int n, int i)
{
    return first + (t->perm ? t->perm[i] : (node_shift(t, n) + i) % n);
}

static int node_head(const cs__tree_t *t, int j)
{
    int first, n;
    node_span(t, j, &first, &n);
    return node_member(t, first, n, 0);
}

/* The tree over the nodes. */
static void node_tree(const cs__tree_t *t, cs__tree_t *nt)
{
    cs__tree_dbtree(nt, (t->nranks + t->local - 1) / t->local, t->which);
}

/* Chain index of rank r in its node (0: the head). */
static int node_index(const cs__tree_t *t, int r, int *first, int *n)
{
    node_span(t, r / t->local, first, n);
    if (t->inv)
        return t->inv[r - *first];
    return (r - *first - node_shift(t, *n) + *n) % *n;
}

static int nodes_parent(const cs__tree_t *t, int r)
{
    int first, n, i = node_index(t, r, &first, &n);
    if (i > 0)
        return node_member(t, first, n, i - 1);
    cs__tree_t nt;
    node_tree(t, &nt);
    int pj = cs__tree_parent(&nt, r / t->local);
    return pj < 0 ? -1 : node_head(t, pj);
}

static int nodes_children(const cs__tree_t *t, int r, int *child, int cap)
{
    int first, n, i = node_index(t, r, &first, &n), k = 0;
    if (i == 0) { /* the heads of the child nodes first: their subtrees are larger */
        cs__tree_t nt;
        int kids[2];
        node_tree(t, &nt);
        int nk = cs__tree_children(&nt, r / t->local, kids, 2);
        for (int c = 0; c < nk && c < 2; c++, k++)
            if (k < cap)
                child[k] = node_head(t, kids[c]);
    }
    if (i + 1 < n) {
        if (k < cap)
            child[k] = node_member(t, first, n, i + 1);
        k++;
    }
    return k;
}

int cs__tree_ceil_log(int k, int n)
{
    int l = 0;
    for (long long w = 1; w < n; w *= k)
        l++;
    return l;
}

int cs__tree_pos(const cs__tree_t *t, int rank)
{
    int P = t->nranks;
    if (t->kind == CS__TREE_NODES)
        return rank;
    return t->mirror ? P - 1 - rank : (rank - t->root + P) % P;
}

int cs__tree_rank(const cs__tree_t *t, int pos)
{
    int P = t->nranks;
    if (t->kind == CS__TREE_NODES)
        return pos;
    return t->mirror ? P - 1 - pos : (pos + t->root) % P;
}

int cs__tree_root(const cs__tree_t *t)
{
    if (t->kind == CS__TREE_NODES) {
        cs__tree_t nt;
        node_tree(t, &nt);
        return node_head(t, cs__tree_root(&nt));
    }
    return cs__tree_rank(t, 0);
}

/* Weight k^j of the lowest non-zero base-k digit of pos > 0. */
static long low_weight(long pos, int k)
{
    long w = 1;
    while ((pos / w) % k == 0)
        w *= k;
    return w;
}

/* Largest power of two strictly below P (P >= 2). */
static int top_of(int P)
{
    int top = 1;
    while (2L * top < P)
        top *= 2;
    return top;
}

static int parent_pos(const cs__tree_t *t, int pos)
{
    int P = t->nranks;
    if (pos == 0)
        return -1;
    switch (t->kind) {
    case CS__TREE_CHAIN:
        return pos - 1;
    case CS__TREE_DBTREE: {
        int c = pos & -pos;
        /* A left child (bit 2c clear) hangs under pos + c, a right child
         * under pos - c; when pos + c is cut off (>= P) the nearest
         * surviving ancestor is pos - c. */
        long up = ((pos & (2 * c)) == 0) ? (long)pos + c : (long)pos - c;
        return up >= P ? pos - c : (int)up;
    }
    default: {
        long w = low_weight(pos, t->radix);
        return (int)(pos - ((pos / w) % t->radix) * w);
    }
    }
}

int cs__tree_parent(const cs__tree_t *t, int rank)
{
    if (t->kind == CS__TREE_NODES)
        return nodes_parent(t, rank);
    int pp = parent_pos(t, cs__tree_pos(t, rank));
    return pp < 0 ? -1 : cs__tree_rank(t, pp);
}

/* Children positions of pos in broadcast order; returns the count. */
static int children_pos(const cs__tree_t *t, int pos, int *child, int cap)
{
    int P = t->nranks, n = 0;
#define CS__PUT(x)                                                                                 \
    do {                                                                                           \
        if (n < cap)                                                                               \
            child[n] = (int)(x);                                                                   \
        n++;                                                                                       \
    } while (0)
    switch (t->kind) {
    case CS__TREE_CHAIN:
        if (pos + 1 < P)
            CS__PUT(pos + 1);
        break;
    case CS__TREE_DBTREE: {
        if (pos == 0) {
            if (P > 1)
                CS__PUT(top_of(P));
            break;
        }
        int c = pos & -pos;
        if (c == 1)
            break;
        CS__PUT(pos - c / 2);
        long x = c / 2;
        while (x >= 1 && pos + x >= P)
            x /= 2;
        if (x >= 1)
            CS__PUT(pos + x);
        break;
    }
    default: {
        int k = t->radix, nw = 0;
        long limit = pos == 0 ? (long)P : low_weight(pos, k);
        long w[64];
        for (long x = 1; x < limit && pos + x < P && nw < 64; x *= k)
            w[nw++] = x;
        for (int j = nw - 1; j >= 0; j--)
            for (int d = 1; d < k && pos + d * w[j] < P; d++)
                CS__PUT(pos + d * w[j]);
        break;
    }
    }
#undef CS__PUT
    return n;
}

int cs__tree_children(const cs__tree_t *t, int rank, int *child, int cap)
{
    if (t->kind == CS__TREE_NODES)
        return nodes_children(t, rank, child, cap);
    int n = children_pos(t, cs__tree_pos(t, rank), child, cap);
    for (int i = 0; i < n && i < cap; i++)
        child[i] = cs__tree_rank(t, child[i]);
    return n;
}

int cs__tree_max_children(const cs__tree_t *t)
{
    switch (t->kind) {
    case CS__TREE_CHAIN:
        return 1;
    case CS__TREE_DBTREE:
        return 2;
    case CS__TREE_NODES:
        return 3;
    default: {
        int m = (t->radix - 1) * cs__tree_ceil_log(t->radix, t->nranks);
        return m < 1 ? 1 : m;
    }
    }
}

int cs__tree_depth(const cs__tree_t *t)
{
    if (t->kind == CS__TREE_CHAIN)
        return t->nranks - 1;
    int depth = 0;
    if (t->kind == CS__TREE_NODES) {
        for (int r = 0; r < t->nranks; r++) {
            int d = 0;
            for (int x = nodes_parent(t, r); x >= 0 && d < t->nranks; x = nodes_parent(t, x))
                d++;
            if (d > depth)
                depth = d;
        }
        return depth;
    }
    for (int pos = 1; pos < t->nranks; pos++) {
        int d = 0;
        for (int x = pos; x > 0; x = parent_pos(t, x))
            d++;
        if (d > depth)
            depth = d;
    }
    return depth;
}

int cs__tree_subtree_end(const cs__tree_t *t, int pos)
{
    int P = t->nranks;
    if (pos == 0 || t->kind == CS__TREE_CHAIN)
        return P;
    long end = pos + low_weight(pos, t->radix);
    return end > P ? P : (int)end;
}

/* ---- pipelined phases -------------------------------------------------- */

void cs__tree_seg(const cs__tree_pipe_t *p, uint32_t i, uint32_t *off, uint32_t *n)
{
    uint64_t a = (uint64_t)i * p->count / p->nseg, b = (uint64_t)(i + 1) * p->count / p->nseg;
    *off = p->first + (uint32_t)a;
    *n = (uint32_t)(b - a);
}

static int *kids_alloc(cs_sched_t *s, const cs__tree_t *t, int *cap)
{
    *cap = cs__tree_max_children(t);
    int *kids = malloc((size_t)*cap * sizeof(*kids));
    if (kids == NULL)
        cs_err_set(&s->err, CS_ERR_NOMEM, "out of memory for a tree of %d ranks", t->nranks);
    return kids;
}

/* One segment of one rank: the steps of a phase, given the rank's parent
 * (-1 at the root), children, the segment [off, off+n) and the step `a` it
 * waits for; returns the rank's `done` step for the segment. */
typedef int64_t (*seg_fn_t)(cs_sched_t *s, const cs__tree_pipe_t *p, int r, int parent,
                            const int *kids, int nk, uint32_t off, uint32_t n, int64_t a);

/* Every rank, every segment, in order; the shape both phases share. */
static int walk(cs_sched_t *s, const cs__tree_t *t, const cs__tree_pipe_t *p, const int64_t *after,
                int64_t *done, seg_fn_t seg)
{
    int cap;
    int *kids = kids_alloc(s, t, &cap);
    if (kids == NULL)
        return cs_sched_status(s);
    for (int r = 0; r < t->nranks && cs_sched_status(s) == CS_OK; r++) {
        int parent = cs__tree_parent(t, r);
        int nk = cs__tree_children(t, r, kids, cap);
        if (p->ranks != NULL) { /* a tree over a group: its ranks */
            parent = parent >= 0 ? p->ranks[parent] : -1;
            for (int k = 0; k < nk && k < cap; k++)
                kids[k] = p->ranks[kids[k]];
        }
        int gr = p->ranks != NULL ? p->ranks[r] : r;
        for (uint32_t i = 0; i < p->nseg; i++) {
            uint32_t off, n;
            cs__tree_seg(p, i, &off, &n);
            int64_t a = after ? after[(size_t)r * p->nseg + i] : -1;
            int64_t x = seg(s, p, gr, parent, kids, nk, off, n, a);
            if (done)
                done[(size_t)r * p->nseg + i] = x;
        }
    }
    free(kids);
    return cs_sched_status(s);
}

static int64_t reduce_seg(cs_sched_t *s, const cs__tree_pipe_t *p, int r, int parent,
                          const int *kids, int nk, uint32_t off, uint32_t n, int64_t prev)
{
    uint32_t v;
    if (nk == 0 && parent >= 0)
        return cs_send(s, r, parent, p->chan, cs_rng(p->src, off, n), &v, cs__dep1(prev, &v));
    if (p->src != p->dst)
        prev = cs_copy(s, r, cs_rng(p->src, off, n), cs_rng(p->dst, off, n), &v,
                       cs__dep1(prev, &v));
    /* Smallest subtree first: it is ready first. */
    for (int c = nk - 1; c >= 0; c--)
        prev = cs_rrecv(s, r, kids[c], p->chan, cs_rng(p->dst, off, n), &v, cs__dep1(prev, &v));
    if (parent >= 0)
        prev = cs_send(s, r, parent, p->chan, cs_rng(p->dst, off, n), &v, cs__dep1(prev, &v));
    return prev;
}

/* Send `rg` to the children one after another, biggest subtree first: a
 * node has one port, so the tree's cost is the textbook one (each round a
 * node feeds one child) whether or not the fabric would let the sends share
 * the uplink. */
static void send_kids(cs_sched_t *s, int r, const int *kids, int nk, int chan, cs_range_t rg,
                      int64_t first_dep)
{
    uint32_t v;
    int64_t prev = first_dep;
    for (int c = 0; c < nk; c++)
        prev = cs_send(s, r, kids[c], chan, rg, &v, cs__dep1(prev, &v));
}

static int64_t bcast_seg(cs_sched_t *s, const cs__tree_pipe_t *p, int r, int parent,
                         const int *kids, int nk, uint32_t off, uint32_t n, int64_t a)
{
    uint32_t v;
    int64_t have = a;
    if (parent < 0) {
        if (p->src != p->dst)
            have = cs_copy(s, r, cs_rng(p->src, off, n), cs_rng(p->dst, off, n), &v,
                           cs__dep1(a, &v));
        /* The root's sends read src, ready since `a`. */
        send_kids(s, r, kids, nk, p->chan, cs_rng(p->src, off, n), a);
    } else {
        have = cs_recv(s, r, parent, p->chan, cs_rng(p->dst, off, n), &v, cs__dep1(a, &v));
        send_kids(s, r, kids, nk, p->chan, cs_rng(p->dst, off, n), have);
    }
    return have;
}

int cs__tree_reduce(cs_sched_t *s, const cs__tree_t *t, const cs__tree_pipe_t *p,
                    const int64_t *after, int64_t *done)
{
    return walk(s, t, p, after, done, reduce_seg);
}

int cs__tree_bcast(cs_sched_t *s, const cs__tree_t *t, const cs__tree_pipe_t *p,
                   const int64_t *after, int64_t *done)
{
    return walk(s, t, p, after, done, bcast_seg);
}

/* ---- generators over trees --------------------------------------------- */

const cs_param_desc_t cs__tree_knomial_desc[] = {
    CS_PARAM_INT_ROW("nchunks", "1", 1, 65536, "pipelining segments (chunks of the vector)"),
    CS_PARAM_INT_ROW("radix", "2", 2, 64, "tree radix k (2 = binomial)"),
    CS_PARAM_END,
};

int cs__tree_knomial_params(cs_params_t *params, long *nseg, long *radix, cs_err_t *err)
{
    int st = cs_params_int(params, cs__tree_knomial_desc, "nchunks", nseg, err);
    if (st == CS_OK)
        st = cs_params_int(params, cs__tree_knomial_desc, "radix", radix, err);
    return st;
}

double cs__tree_knomial_rounds(const cs_coll_desc_t *desc, cs_params_t *params, long *nseg)
{
    long radix = 2;
    /* each getter leaves its default where the value is invalid */
    cs_params_int(params, cs__tree_knomial_desc, "nchunks", nseg, NULL);
    cs_params_int(params, cs__tree_knomial_desc, "radix", &radix, NULL);
    return (double)(radix - 1) * cs__tree_ceil_log((int)radix, desc->nranks);
}

int cs__tree_run(cs_sched_t *s, const cs__tree_t *t, cs__tree_pipe_t p, cs__tree_op_t op,
                 cs_err_t *err)
{
    if (op == CS__TREE_OP_BCAST)
        return cs__tree_bcast(s, t, &p, NULL, NULL);
    if (op == CS__TREE_OP_REDUCE)
        return cs__tree_reduce(s, t, &p, NULL, NULL);
    int P = t->nranks;
    int64_t *done = malloc((size_t)P * (size_t)p.nseg * sizeof(*done));
    if (done == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory for %d ranks", P);
    int st = cs__tree_reduce(s, t, &p, NULL, done);
    p.src = p.dst;
    if (st == CS_OK)
        st = cs__tree_bcast(s, t, &p, done, NULL);
    free(done);
    return st;
}

int cs__tree_gen(const cs_coll_desc_t *desc, const cs__tree_t *t, uint32_t nseg, cs__tree_op_t op,
                 cs_sched_t **out, cs_err_t *err)
{
    int st;
    cs_sched_t *s = cs__gen_create(desc, nseg, err, &st);
    if (s == NULL)
        return st;
    cs__tree_pipe_t p = {.chan = 0,
                        .first = 0,
                        .count = nseg,
                        .nseg = nseg,
                        .src = desc->inplace ? CS_BUF_OUT : CS_BUF_IN,
                        .dst = CS_BUF_OUT};
    st = cs__tree_run(s, t, p, op, err);
    return cs__gen_finish(s, st, out, err);
}

int cs__tree_gen_knomial(const cs_coll_desc_t *desc, cs_params_t *params, int root,
                         cs__tree_op_t op, cs_sched_t **out, cs_err_t *err)
{
    long nseg, radix;
    int st = cs__tree_knomial_params(params, &nseg, &radix, err);
    if (st != CS_OK)
        return st;
    cs__tree_t t;
    cs__tree_knomial(&t, desc->nranks, root, (int)radix);
    return cs__tree_gen(desc, &t, (uint32_t)nseg, op, out, err);
}

int cs__tree_pieces_init(cs__tree_pieces_t *w, const cs_coll_desc_t *desc, cs_err_t *err)
{
    int P = desc->nranks;
    cs__tree_knomial(&w->t, P, desc->root, 2);
    w->cap = cs__tree_max_children(&w->t);
    w->kids = malloc((size_t)w->cap * sizeof(*w->kids));
    w->step = malloc((size_t)P * sizeof(*w->step));
    if (w->kids == NULL || w->step == NULL)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory for %d ranks", P);
    return CS_OK;
}

void cs__tree_pieces_fini(cs__tree_pieces_t *w)
{
    free(w->step);
    free(w->kids);
    w->step = NULL;
    w->kids = NULL;
}

int cs__tree_pieces_gen(const cs_coll_desc_t *desc, cs_params_t *params,
                        const cs_param_desc_t *table, cs__tree_pieces_emit_t emit, void *arg,
                        cs_sched_t **out, cs_err_t *err)
{
    uint32_t m;
    int st;
    cs_sched_t *s = cs__gen_blocked(desc, params, table, " per piece", &m, err, &st);
    if (s == NULL)
        return st;
    cs__tree_pieces_t w;
    st = cs__tree_pieces_init(&w, desc, err);
    int src = desc->inplace ? CS_BUF_OUT : CS_BUF_IN;
    for (int r = 0; r < desc->nranks && st == CS_OK && cs_sched_status(s) == CS_OK; r++)
        emit(s, &w, r, m, src, arg);
    cs__tree_pieces_fini(&w);
    return cs__gen_finish(s, st, out, err);
}

/* ---- chains along rings ---------------------------------------------------- */

/* Rank at position m of channel c's ring: groups of L ranks (the last one
 * shorter when L does not divide P) in order, each visited in its order
 * of perm (K x L members, L dividing P) or rotated by c len / K. */
static int ring_rank(int P, long L, long K, long c, int m, const int *perm)
{
    if (L <= 1)
        return m;
    long first = (m / L) * L, len = P - first < L ? P - first : L;
    if (perm)
        return (int)(first + perm[c * L + (m - first)]);
    return (int)(first + (m - first + c * len / K) % len);
}

static int chains(const cs_coll_desc_t *desc, long nseg, long K, long L, const int *perm,
                  cs__tree_op_t op, cs_sched_t **out, cs_err_t *err)
{
    int P = desc->nranks, st = CS_OK;
    if (!perm && K == 1) {
        cs__tree_t t;
        cs__tree_chain(&t, P, desc->root);
        return cs__tree_gen(desc, &t, (uint32_t)nseg, op, out, err);
    }
    /* chain c moves window c of the vector along channel c's ring, read
     * cyclically from the root (a one-node chain of the ordered kind) */
    int *seq = malloc(sizeof(int) * (size_t)P * 2), *inv = seq ? seq + P : NULL;
    cs_sched_t *s = NULL;
    if (!seq)
        st = cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    else if ((unsigned long)K * (unsigned long)nseg > UINT32_MAX / 2)
        st = cs_err_set(err, CS_ERR_RANGE, "%ld chains x %ld segments is too many chunks", K,
                        nseg);
    else
        s = cs__gen_create(desc, (uint32_t)(K * nseg), err, &st);
    for (long c = 0; c < K && s && st == CS_OK; c++) {
        int j0 = 0;
        while (ring_rank(P, L, K, c, j0, perm) != desc->root)
            j0++;
        for (int i = 0; i < P; i++) {
            seq[i] = ring_rank(P, L, K, c, (j0 + i) % P, perm);
            inv[seq[i]] = i;
        }
        cs__tree_t t;
        cs__tree_nodes_ordered(&t, P, P, 0, seq, inv);
        cs__tree_pipe_t pp = {.chan = (int)c,
                              .first = (uint32_t)(c * nseg),
                              .count = (uint32_t)nseg,
                              .nseg = (uint32_t)nseg,
                              .src = desc->inplace ? CS_BUF_OUT : CS_BUF_IN,
                              .dst = CS_BUF_OUT};
        st = cs__tree_run(s, &t, pp, op, err);
    }
    free(seq);
    if (!s)
        return st;
    return cs__gen_finish(s, st, out, err);
}

int cs__tree_chains(const cs_coll_desc_t *desc, cs_params_t *params, const cs_param_desc_t *table,
                    long nseg, cs__tree_op_t op, cs_sched_t **out, cs_err_t *err)
{
    long K = 1, L = 1;
    int *perm = NULL;
    int st = cs_params_int(params, table, "channels", &K, err);
    if (st == CS_OK)
        st = cs_params_int(params, table, "local", &L, err);
    if (st == CS_OK)
        st = cs__gen_orders(params, table, desc->nranks, &L, &K, &perm, err);
    if (st == CS_OK)
        st = chains(desc, nseg, K, L, perm, op, out, err);
    free(perm);
    return st;
}
