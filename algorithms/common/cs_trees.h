/*
 * cs_trees.h - tree and chain arithmetic shared by the tree generators, and
 * the two pipelined tree phases they are made of (reduce up, broadcast down).
 *
 * Trees
 * -----
 * A tree is a pure function of (kind, P, root, ...): nothing is allocated,
 * every query is O(depth).  Ranks are mapped to "positions" (virtual ranks)
 * with the tree's root at position 0:
 *
 *   k-nomial (radix k >= 2; k = 2 is binomial), any root:
 *     pos = (rank - root) mod P.  The parent of pos > 0 is pos with its
 *     lowest non-zero base-k digit cleared; the children of pos are
 *     pos + d*k^j for every digit position j below that digit (all
 *     positions for pos 0) and d = 1..k-1, when < P.  The subtree of pos is
 *     the contiguous position range [pos, pos + k^j) (clipped to P), which
 *     the scatter / gather phases rely on.
 *
 *   chain, any root: pos = (rank - root) mod P, parent pos-1, child pos+1.
 *
 *   double binary tree (NCCL's idea, our own arithmetic): tree 0 is an
 *     in-order binary tree over positions 1..P-1 (node pos with lowest set
 *     bit c has children pos - c/2 and the first of pos + c/2, pos + c/4,
 *     ... that is < P), hung under position 0, whose only child is the
 *     largest power of two below P.  Leaves are the odd positions.  Tree 1
 *     maps rank r to position P-1-r when P is even (mirror) and to
 *     (r - 1) mod P when P is odd (shift), so a rank that is a leaf in one
 *     tree is (mostly) an inner node in the other.
 *
 *            pos:   0 ---- 4            P = 7, tree 0
 *                        /   \
 *                       2     6
 *                      / \   /
 *                     1   3 5
 *
 *   nodes (NCCL's Tree across nodes, graph/connect.cc): ranks in
 *     consecutive groups of `local` (nodes; the last one shorter when local
 *     does not divide P), a chain through each node's members, and tree
 *     `which` of the double binary tree above over the nodes.  Chain k of
 *     K starts at member floor(k n / K) of a node of n members (its head)
 *     and visits the others in rank order from there, wrapping: member i
 *     of the chain is rank first + (floor(k n / K) + i) mod n.  The head's
 *     parent is the head of the parent node (none at the root node), its
 *     children the heads of the child nodes and the chain's next member;
 *     every other member's parent is the one before it in the chain.  So
 *     all of a node's traffic across nodes goes through its head (NCCL's
 *     pattern TREE), and chains with different heads leave a node through
 *     different GPUs and their NICs.  Positions are not defined (pos and
 *     rank are the identity; subtree_end is not for this kind).  Ordered
 *     (cs__tree_nodes_ordered): the chain visits every node's members in
 *     a given order, its first member the head (NCCL's tree chains follow
 *     the links its search finds: a DGX-1's NVLinks).
 *
 * cs__tree_children lists children in broadcast order: the child with the
 * largest subtree first.  Reductions consume them in reverse order.
 *
 * Pipelined phases
 * ----------------
 * cs__tree_reduce / cs__tree_bcast append, for every rank, the steps that move
 * the chunk range [first, first+count) along the tree, cut into `nseg`
 * balanced segments (segment i is [first + i*count/nseg, first +
 * (i+1)*count/nseg)).  Segments are emitted in order, so the k-th message of
 * a channel is segment k.  Per rank and segment:
 *
 *   reduce: inner node: copy src -> dst (skipped when src == dst), rrecv each
 *           child into dst (serialised: they all write the same chunks),
 *           then send dst to the parent.  Leaf: send src to the parent.  The
 *           root ends with the sum in dst.
 *   bcast:  root: sends from src (and copies src -> dst when they differ);
 *           others: recv from the parent into dst, then send dst to each
 *           child.
 *
 * `after` (may be NULL) holds, per rank and segment (index rank*nseg + i),
 * a step of that rank the segment's first steps must wait for (-1: none);
 * `done` (may be NULL) receives the step after which the rank no longer
 * touches the segment in this phase (reduce: the send to the parent, or the
 * root's last combine; bcast: the recv, or the root's copy), -1 when the
 * rank emitted nothing for it.  Passing reduce's `done` as bcast's `after`
 * orders the broadcast's writes after the reduction's reads.
 * Both return CS_OK or the schedule's sticky error (CS_ERR_NOMEM for their
 * own small workspace).  They do not check shapes beyond what cs_sched_add
 * checks: callers pass buffers whose windows cover the range.
 */
#ifndef CS_TREES_H
#define CS_TREES_H

#include "cs_params.h"
#include "cs_sched.h"

#include <stdint.h>

typedef enum { CS__TREE_KNOMIAL = 0, CS__TREE_CHAIN, CS__TREE_DBTREE, CS__TREE_NODES } cs__tree_kind_t;

typedef struct cs_tree {
    cs__tree_kind_t kind;
    int nranks;
    int root;   /* k-nomial, chain: rank at position 0; dbtree: shift (0 or 1) */
    int radix;  /* k-nomial only */
    int mirror; /* dbtree: position = P-1-rank */
    int local, which, chain, nchains; /* nodes only */
    const int *perm, *inv; /* nodes only, or NULL: the chain's order in every node (a
                              permutation of 0..local-1, perm[0] the head; local
                              divides nranks) and its inverse */
} cs__tree_t;

/* Initialise a tree (no allocation, nothing to free). */
void cs__tree_knomial(cs__tree_t *t, int nranks, int root, int radix);
void cs__tree_chain(cs__tree_t *t, int nranks, int root);
/* which = 0 or 1: the two trees of the double binary tree. */
void cs__tree_dbtree(cs__tree_t *t, int nranks, int which);
/* which = 0 or 1, chain k of nchains K >= 1 (0 <= k < K), local >= 1. */
void cs__tree_nodes(cs__tree_t *t, int nranks, int local, int which, int chain, int nchains);
/* The same with chain order perm in every node (member i of the chain is
 * rank first + perm[i]; inv its inverse; both borrowed, local divides
 * nranks). */
void cs__tree_nodes_ordered(cs__tree_t *t, int nranks, int local, int which, const int *perm,
                            const int *inv);

int cs__tree_pos(const cs__tree_t *t, int rank);
int cs__tree_rank(const cs__tree_t *t, int pos);
int cs__tree_root(const cs__tree_t *t);
/* Parent rank, or -1 at the root. */
int cs__tree_parent(const cs__tree_t *t, int rank);
/* Children ranks in broadcast order; writes at most `cap`, returns how many
 * there are (callers size `cap` with cs__tree_max_children). */
int cs__tree_children(const cs__tree_t *t, int rank, int *child, int cap);
int cs__tree_max_children(const cs__tree_t *t);
/* Number of edges on the longest root-to-leaf path. */
int cs__tree_depth(const cs__tree_t *t);
/* k-nomial and chain: one past the last position of pos's subtree (the
 * subtree is the position range [pos, end)). */
int cs__tree_subtree_end(const cs__tree_t *t, int pos);

/* One dependency for the builder calls: stores x in *v and returns 1, or
 * returns 0 (no dependency) when x < 0. */
static inline uint32_t cs__dep1(int64_t x, uint32_t *v)
{
    if (x < 0)
        return 0;
    *v = (uint32_t)x;
    return 1;
}

/* ceil(log_k(n)) for n >= 1, k >= 2. */
int cs__tree_ceil_log(int k, int n);

typedef struct cs__tree_pipe {
    int chan;
    uint32_t first, count; /* chunk range, local offsets of src and dst */
    uint32_t nseg;         /* segments, 1 <= nseg <= count */
    int src, dst;          /* buffer ids (same on every rank) */
    const int *ranks;      /* NULL: tree rank i is rank i; else rank ranks[i] (a tree
                              over a group of t->nranks ranks; `after` and `done`
                              are indexed by i) */
} cs__tree_pipe_t;

/* First chunk and length of segment i of a pipe. */
void cs__tree_seg(const cs__tree_pipe_t *p, uint32_t i, uint32_t *off, uint32_t *n);

int cs__tree_reduce(cs_sched_t *s, const cs__tree_t *t, const cs__tree_pipe_t *p,
                    const int64_t *after, int64_t *done);
int cs__tree_bcast(cs_sched_t *s, const cs__tree_t *t, const cs__tree_pipe_t *p,
                   const int64_t *after, int64_t *done);

/* Generators over trees
 * ---------------------
 * cs__tree_knomial_desc is the k-nomial generators' parameter table
 * (nchunks: pipeline segments; radix), cs__tree_knomial_params reads it.
 * cs__tree_knomial_rounds is (k-1) ceil(log_k P), the messages the root
 * handles per segment in one phase, for their costs (defaults where a
 * parameter is invalid); *nseg receives the segments.
 *
 * cs__tree_run appends one operation along t for pipe p: bcast, reduce, or
 * allreduce = reduce, then bcast of the sum from p.dst, each segment's
 * bcast after the reduce is done with it (CS_ERR_NOMEM in err for its
 * workspace).  cs__tree_gen is a whole generator over one tree: a schedule
 * of nseg chunks, the op over the whole vector in nseg segments on channel 0
 * from in (out when in place) to out, and cs__gen_finish.
 * cs__tree_gen_knomial is cs__tree_gen over the k-nomial tree rooted at
 * `root` with the radix and segments of cs__tree_knomial_params. */
typedef enum { CS__TREE_OP_BCAST = 0, CS__TREE_OP_REDUCE, CS__TREE_OP_ALLREDUCE } cs__tree_op_t;

extern const cs_param_desc_t cs__tree_knomial_desc[];
int cs__tree_knomial_params(cs_params_t *params, long *nseg, long *radix, cs_err_t *err);
double cs__tree_knomial_rounds(const cs_coll_desc_t *desc, cs_params_t *params, long *nseg);
int cs__tree_run(cs_sched_t *s, const cs__tree_t *t, cs__tree_pipe_t p, cs__tree_op_t op,
                 cs_err_t *err);
int cs__tree_gen(const cs_coll_desc_t *desc, const cs__tree_t *t, uint32_t nseg, cs__tree_op_t op,
                 cs_sched_t **out, cs_err_t *err);
/* Chains along rings (broadcast and reduce `chain`), their channels, local
 * and orders read from params through table (CS__TREE_CHAIN_ROWS): the
 * vector is K windows of nseg segments, window c moving along channel c's
 * ring read cyclically from the root (op BCAST down it, REDUCE up it), on
 * message channel c.  The ring is the flat ring's (cs_flat.h): groups of
 * `local` ranks in order, each visited in its order of `orders` (a group's
 * members; all P ranks with local = 1) or rotated by c local / K.  One
 * channel without orders: the one chain in the ranks' order from the root. */
int cs__tree_chains(const cs_coll_desc_t *desc, cs_params_t *params, const cs_param_desc_t *table,
                    long nseg, cs__tree_op_t op, cs_sched_t **out, cs_err_t *err);
/* The chains generators' rows, after their nchunks. */
#define CS__TREE_CHAIN_ROWS                                                                     \
    CS_PARAM_INT_ROW("channels", "1", 1, 64,                                                    \
                     "chains over parts of the vector at once, each along a ring of its own "  \
                     "read from the root"),                                                     \
        CS_PARAM_INT_ROW("local", "1", 1, 65536,                                                \
                         "ranks per node: channel c's ring visits each group of local ranks "  \
                         "rotated by c*local/channels (as the flat ring's channels)"),          \
        CS_PARAM_LIST_ROW("orders", "none", 1, 64,                                              \
                          "one ring per channel, each group of local ranks (all the ranks "    \
                          "with local=1) visited as written, read from the root (base-36 "     \
                          "digits: 01237564+02674513)")
int cs__tree_gen_knomial(const cs_coll_desc_t *desc, cs_params_t *params, int root,
                         cs__tree_op_t op, cs_sched_t **out, cs_err_t *err);

/* Workspace of the generators that move P pieces along the binomial tree
 * rooted at desc->root, one rank at a time (scatter_allgather, reduce_ring):
 * the tree, room for one rank's children and one step id per piece.  init
 * returns CS_OK or CS_ERR_NOMEM (in err); call fini either way. */
typedef struct cs__tree_pieces {
    cs__tree_t t;
    int *kids, cap;
    int64_t *step; /* P entries */
} cs__tree_pieces_t;

int cs__tree_pieces_init(cs__tree_pieces_t *w, const cs_coll_desc_t *desc, cs_err_t *err);
void cs__tree_pieces_fini(cs__tree_pieces_t *w);

/* A whole generator of that kind: a schedule of P pieces of m chunks
 * (m = the `nchunks` row of table), the workspace, emit(s, w, r, m, src,
 * arg) for every rank r in turn (src: in, or out when in place) while the
 * schedule has no error, and cs__gen_finish. */
typedef void (*cs__tree_pieces_emit_t)(cs_sched_t *s, cs__tree_pieces_t *w, int r, uint32_t m,
                                       int src, void *arg);
int cs__tree_pieces_gen(const cs_coll_desc_t *desc, cs_params_t *params,
                        const cs_param_desc_t *table, cs__tree_pieces_emit_t emit, void *arg,
                        cs_sched_t **out, cs_err_t *err);

#endif /* CS_TREES_H */
