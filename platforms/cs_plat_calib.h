/*
 * cs_plat_calib.h - the SimGrid platform `collstep calibrate` writes: one
 * SimGrid host per rank, tier-tagged links with the measured figures.
 *
 *     rank hosts  nA-r0  nA-r1          nB-r2  nB-r3
 *                   |      |              |      |
 *     tier host   lo-r0  lo-r1          lo-r2  lo-r3     (intra-host: loopback,
 *                   \______/              \______/        shared memory, ...)
 *                  node A                  node B
 *     tier nic*    nic-A (UP: A->switch, DOWN: switch->A)  nic-B
 *                      \____________ switch ____________/   (tier switch)
 *
 * Routes (Full routing, one per ordered pair of ranks, so a route holds
 * exactly the links of its tier and per-tier bytes match a live trace):
 *   same node   lo-a UP, lo-b DOWN         latency 2 x lo = the measured
 *                                          intra-node one-way alpha
 *   A -> B      nic-A UP, switch, nic-B DOWN
 *                                          latency lat(A) + lat(B), the
 *                                          measured alpha of the pair
 * nic-A's bandwidth is node A's: the rate its ranks share when they all
 * send off the node.  Node NIC tiers are named by rate class: "nic" for
 * the fastest nodes, "nic-slow" (then "nic-slow2", ...) for nodes more
 * than 15 % slower, so a slow node shows up in `collstep platform show`.
 * Links are SPLITDUPLEX.  Where the measurement found that two directions
 * at once get less than one direction alone (TCP through a shaper: data
 * and the other direction's acknowledgements share the queues), the ratio
 * rho of the two rates goes into SHARED links both directions cross, with
 * twice rho times the one-way rate (tier "duplex"):
 *   duplex-rA-rB  per pair of ranks on different nodes (pair_duplex: one
 *                 connection both ways, measured on the fastest pair);
 *   duplex-nN     per node (node_duplex[N]: the node sending to one node
 *                 while it receives from another), crossed by every
 *                 message leaving or entering node N;
 *   duplex-nA-nB  per pair of nodes (xch_duplex of the slower node, the
 *                 smaller of the two where equal: the node exchanging with
 *                 its partner both ways), crossed by the messages between
 *                 A and B in both directions.
 * One direction alone is never limited by them (2 rho >= 1 for rho >=
 * 0.5); where several apply, the tightest binds.  A host's speed is its
 * reduction bandwidth in bytes/s (the simulator charges reduce / rrecv
 * bytes / speed), with <prop id="device" value="cpu"/> so that ranks map
 * to hosts in document order, and <prop id="node" value="NAME"/>.
 * Ports (port_bw): a SHARED link port-rR per rank, tier "port", crossed by
 * every message the rank sends or receives (first and last link of each
 * route): what one process can move in and out at once.  Calibration
 * measures it with every rank busy; where ranks outnumber cores (the
 * emulated cluster) it is the CPU share of a rank, on a real cluster it
 * is far above the NIC and never limits.
 * Restarts: where a node's exchange after an idle spell was slower than
 * back to back (TCP restarts an idle connection from its initial window,
 * and the ramp is slow where the round trip is long), its hosts carry
 * <prop id="restart_bytes" value="B"/> and <prop id="restart_idle"
 * value="S"/>: the simulator sends a message between nodes on a
 * connection idle for more than S seconds as if it were min(B, its size)
 * bytes longer (sim/cs_sim_rank.c).
 * The top zone carries collstep_dims (ranks per node x nodes, when every
 * node has the same ranks, contiguous) for `hier`, and collstep_calib.
 *
 * Routes grow as ranks^2: meant for the clusters a validation runs on
 * (hundreds of ranks), not for thousands.
 */
#ifndef CS_PLAT_CALIB_H
#define CS_PLAT_CALIB_H

#include "cs_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Duplex ratios at or above this get no link (full duplex); below 0.5 they
 * are taken as 0.5, so one direction alone is never limited. */
#define CS_PLAT_CALIB_RHO_MAX 0.9

typedef struct cs_plat_calib_node {
    char name[64];        /* node name (hostname or --groups name) */
    double bw, lat;       /* NIC: bytes/s per direction, seconds per crossing */
    char tier[16];        /* filled by cs_plat_calib_xml: nic, nic-slow, ... */
    double restart_bytes; /* a connection idle for more than restart_idle seconds costs a
                             message this many bytes more (0: no restart cost) */
    double restart_idle;
} cs_plat_calib_node_t;

typedef struct cs_plat_calib {
    int nranks, nnodes;
    const int *node_of;           /* rank -> node index */
    cs_plat_calib_node_t *nodes;  /* nnodes */
    double intra_bw, intra_lat;   /* one intra-node message: alpha (s), beta (B/s) */
    double switch_bw;             /* the switch: bytes/s (sum of the NICs: never limits) */
    double reduce_speed;          /* bytes/s of a host's reduction */
    const double *port_bw;        /* per rank: bytes/s of its port (NULL or 0: none) */
    double port_lat;              /* seconds per port crossing */
    double pair_duplex;           /* rho of a pair both ways (0 or >= 0.9: no link) */
    const double *node_duplex;    /* per node (NULL: none): rho of its two directions,
                                     different peers (idem) */
    const double *xch_duplex;     /* per node (NULL: none): rho of its exchange with a
                                     partner, both ways (idem) */
    const char *comment;          /* XML comment (no "--"), or NULL */
} cs_plat_calib_t;

/* A measured duplex ratio as the links take it: 0 (no link) at or above
 * CS_PLAT_CALIB_RHO_MAX and for 0 or not a number, else at least 0.5. */
double cs_plat_calib_rho(double r);

/* Name the nodes' tiers (nodes[].tier) from their bandwidths: "nic" for
 * the fastest, "nic-slow", "nic-slow2", ... for each class more than 15 %
 * slower than the one before. */
void cs_plat_calib_tiers(cs_plat_calib_t *p);

/* The XML text (*xml malloc'ed); fills nodes[].tier (cs_plat_calib_tiers).  CS_ERR_INVAL for a
 * bandwidth or latency that is not finite (a bandwidth must be > 0). */
int cs_plat_calib_xml(cs_plat_calib_t *p, char **xml, cs_err_t *err);

/* Whether the first bytes of a file are a platform this writer made (for
 * core/cs_out.h: an existing -o FILE is replaced only then). */
int cs_plat_calib_recognize(const char *head, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* CS_PLAT_CALIB_H */
