/*
 * cs_plat_desc.c - the human description of every preset: one node as an
 * ASCII picture, one worked route, the numbers used and their sources
 * (docs/hardware.md: [V] read in a primary source, [U] estimate).  The text is
 * also written as an XML comment at the top of exported files, so it must
 * never contain two dashes in a row.
 *
 * Common to all presets: the node's NIC is `rails` rails, rail K its own
 * router hcaK on its own PCIe path (a socket's, or a PCIe switch's) and
 * its own link nic-nN-railK (tier nic, one rail's line rate, 12.5 GB/s/dir
 * for EDR), so a GPU's traffic leaves on its socket's rail and one flow
 * between nodes is bounded by one rail.  Fabric (cs_plat_model.h):
 *   non-blocking (oversub=1: summit, minsky, ac922, dgx1): a full-bisection
 *     fat tree gives every node port an uplink of its own, so each node
 *     rail gets its own leaf uplink lane leaf-nN-railK (rail bandwidth),
 *     used only by that rail's inter-rack traffic, and each pair of racks
 *     one spine link spine-rA-rB sized to the smaller rack's rails (never
 *     limits).  Flows meet only at their endpoints' rails, PCIe and NVLink,
 *     which keeps SimGrid's max-min components small.  This ignores ECMP
 *     hash collisions on real fat trees (adaptive routing on Summit's EDR
 *     fabric mostly avoids them [V: SC19 CORAL evaluation]).  SimGrid needs
 *     at least one link between two zones' gateways, hence the per-pair
 *     spine link rather than a spine lane per node rail.
 *   oversubscribed (oversub>1, x86 default 3): one shared rack uplink
 *     leaf-rR = nodes_in_rack x rails x rail bw / oversub, and spine-core.
 * Cross-rack route tiers: node links, nic, leaf, spine, leaf, nic, node
 * links.  Same rack: nic, nic.
 * Switch hop latency 0.1 us (EDR switch 90 to 130 ns [U]); NIC link 1 us
 * (so that two NIC links plus switches give about TACCL's IB alpha of
 * 2.6 us [V]).  NVLink latency 0.3 us (TACCL NDv2 alpha [V]).  PCIe 1 us,
 * X-Bus/QPI 0.5 us [U].  POWER presets: GPU<->GPU NVLink is tier nvlink,
 * GPU<->CPU NVLink tier nvlink-host (same numbers; inter-node traffic
 * crosses only the latter).
 */

const char *const cs__desc_summit =
    "Summit node (IBM AC922, 6 x V100), one of 18 per rack:\n"
    "\n"
    "      g0 ===== g1          g3 ===== g4        ===  NVLink 2.0, 2 bricks,\n"
    "        \\   /              \\   /                50 GB/s/dir per pair [V]\n"
    "         g2                   g5\n"
    "   (g0,g1,g2 each = cpu0)  (g3,g4,g5 each = cpu1)  NVLink 50 GB/s/dir [V]\n"
    "   tiers: GPU<->GPU nvlink; GPU<->CPU nvlink-host (same links, own tier)\n"
    "        cpu0 ====== X-Bus ====== cpu1          X-Bus 64 GB/s bidir = 32/dir [V]\n"
    "          |  PCIe Gen4 x8 [U]      |           15.75 GB/s/dir per socket\n"
    "        hca0                     hca1          ConnectX-5 multi-host, one port\n"
    "          |  nic rail0             |  nic rail1   per socket: 2 rails x EDR\n"
    "          +====== rack leaf =======+           12.5 GB/s/dir each [V]\n"
    "     (18 nodes; each node rail its own uplink lane to the spine:\n"
    "      non-blocking fat tree [V])\n"
    "\n"
    "Worked route n0-g0 to n18-g3 (rack 0 to rack 1): nvlink-host-n0-cpu0-g0,\n"
    "pcie-n0-cpu0-hca0, nic-n0-rail0, leaf-n0-rail0, spine-n0-rail0, spine-n18-rail1,\n"
    "leaf-n18-rail1, nic-n18-rail1, pcie-n18-cpu1-hca1, nvlink-host-n18-cpu1-g3: tiers\n"
    "nvlink-host pcie nic leaf spine spine leaf nic pcie nvlink-host (no GPU<->GPU nvlink\n"
    "link; each spine port half the spine latency).  g0 leaves on\n"
    "rail 0 (socket 0), g3 arrives on rail 1 (socket 1).  One flow is bounded by its\n"
    "rail, 12.5 GB/s (12.2 calibrated = the 12.2 GB/s per EDR rail of nccl-tests#29\n"
    "[V]), not by the socket's PCIe x8 (15.75); a whole node by its 2 rails, 25 GB/s\n"
    "(24.4 calibrated, the 23 to 24 GB/s per node of docs/hardware.md).\n"
    "Cross-socket in a node: g0 to g3 = nvlink-host, xbus, nvlink-host.\n"
    "\n"
    "Numbers: 4608 nodes / 27648 V100 / 256 racks of 18 nodes (EETimes [V]); default 256\n"
    "nodes = 1536 GPUs.  GPU reduce_bw = 800 GB/s achievable HBM2 (900 peak) / 3 bytes\n"
    "moved per reduced byte = 266.7 GB/s [U].  The two ToR switches of a rack and the\n"
    "core switches are modeled as one leaf per rack, and per node rail a leaf uplink\n"
    "lane and a spine port, never limiting [U model; ECMP collisions ignored]; each rail\n"
    "is its own SimGrid zone so that concurrent flows share solver state only where they\n"
    "share a link (full machine simulated in minutes).  rails=1 keeps\n"
    "only rail 0 (socket 1 then reaches it over the X-Bus).\n";

const char *const cs__desc_ac922 =
    "AC922 node (IBM Power System AC922, 4 x V100):\n"
    "\n"
    "      g0 ===== g1          g2 ===== g3        ===  NVLink 2.0, 3 bricks per\n"
    "       \\     /             \\     /               connection, 75 GB/s/dir [V]\n"
    "        cpu0 ====== X-Bus ====== cpu1          X-Bus 32 GB/s/dir [V]\n"
    "   (tiers: GPU<->GPU nvlink, GPU<->CPU nvlink-host)\n"
    "          | PCIe Gen4 x16 31.5 GB/s/dir [U]\n"
    "         hca0  rail 0: 1 x EDR 100 Gb/s = 12.5 GB/s/dir [U: one adapter]\n"
    "          |    (rails=1: socket 1 reaches it over the X-Bus; rails=2 adds\n"
    "          |     hca1 on socket 1)\n"
    "     rack leaf (18 nodes [U]) => spine (oversub 1 [U]: leaf lane per rail)\n"
    "\n"
    "Worked route n0-g2 to n1-g0 (same rack): nvlink-host-n0-cpu1-g2, xbus-n0-cpu0-cpu1,\n"
    "pcie-n0-cpu0-hca0, nic-n0-rail0, nic-n1-rail0, pcie-n1-cpu0-hca0,\n"
    "nvlink-host-n1-cpu0-g0.\n"
    "Bottleneck: nic 12.5 GB/s (12.2 calibrated [V]).\n"
    "\n"
    "Numbers: NVLink 75 GB/s/dir and measured CPU-GPU 68 GB/s (NextPlatform [V,\n"
    "secondary]); reduce_bw 800/3 = 266.7 GB/s [U]; 64 nodes default [U].\n";

const char *const cs__desc_minsky =
    "Minsky node (IBM Power S822LC for HPC, 4 x P100 SXM2), the PowerAI DDL cluster:\n"
    "\n"
    "      g0 ===== g1          g2 ===== g3        ===  NVLink 1.0, 2 links,\n"
    "       \\     /             \\     /               40 GB/s/dir [U wiring, V per-link 20]\n"
    "        cpu0 ====== X-Bus ====== cpu1          X-Bus 38.4 GB/s/dir [U]\n"
    "   (tiers: GPU<->GPU nvlink, GPU<->CPU nvlink-host)\n"
    "          | PCIe Gen3 x16 15.75 GB/s/dir\n"
    "         hca0  rail 0: 1 x EDR 100 Gb/s = 12.5 GB/s/dir [U: adapter count]\n"
    "          |\n"
    "     rack leaf (16 nodes [U]) => spine (oversub 1: leaf lane per rail)\n"
    "\n"
    "Worked route n0-g0 to n0-g3: nvlink-host-n0-cpu0-g0, xbus-n0-cpu0-cpu1,\n"
    "nvlink-host-n0-cpu1-g3; bottleneck the X-Bus 38.4 GB/s [U].  n0-g0 to n16-g0\n"
    "(rack 0 to rack 1): nvlink-host-n0-cpu0-g0, pcie-n0-cpu0-hca0, nic-n0-rail0,\n"
    "leaf-n0-rail0, spine-n0-rail0, spine-n16-rail0, leaf-n16-rail0, nic-n16-rail0,\n"
    "pcie, nvlink-host;\n"
    "bounded by the rail, 12.5 GB/s (PCIe Gen3 x16 15.75).\n"
    "\n"
    "Numbers: 4 x 20 GB/s/dir NVLink per P100 (AnandTech [V]); CPU-GPU and GPU-GPU 2 links\n"
    "each (Redbook REDP-5405 [U]); 64 nodes = 256 P100 (PowerAI DDL [V]); P100 HBM2\n"
    "720 GB/s peak [V], reduce_bw ~ 0.8 x 720 / 3 = 192 GB/s [U].\n";

const char *const cs__desc_x86 =
    "x86 P100 PCIe node (2-socket Xeon, Dell C4140 config G style), 10 GbE:\n"
    "\n"
    "     g0   g1              g2   g3       P100 PCIe, Gen3 x16 15.75 GB/s/dir [V]\n"
    "      \\  /                 \\  /         (~12.5 achievable [U])\n"
    "      sw0                   sw1          PCIe switch per socket, x16 uplink\n"
    "       |                     |\n"
    "      cpu0 ===== QPI ====== cpu1         QPI 2 x 9.6 GT/s = 38.4 GB/s/dir [U]\n"
    "       | PCIe x8 7.9 GB/s/dir\n"
    "      hca0 10 GbE = 1.25 GB/s/dir [V line rate], one rail (rails=2: hca1\n"
    "       |   on cpu1)\n"
    "       |\n"
    "   rack leaf (16 nodes [U]) => spine with oversub 3:1 uplinks [U]\n"
    "\n"
    "Worked route n0-g0 to n0-g2: pcie-n0-g0-sw0, pcie-n0-sw0-cpu0, qpi-n0-cpu0-cpu1,\n"
    "pcie-n0-sw1-cpu1, pcie-n0-g2-sw1 (P2P across QPI is slow or disabled: Li et al.\n"
    "TPDS'20 [V]).  n0-g0 to n16-g0 (two racks): pcie, pcie, pcie, nic, leaf, spine,\n"
    "leaf, nic, pcie, pcie, pcie (nic-n0-rail0, leaf-r0, spine-core, leaf-r1,\n"
    "nic-n16-rail0); bottleneck 10 GbE 1.25 GB/s and, under load, the 3:1 uplink\n"
    "leaf-rR shared by the rack (oversubscribed: no lanes, the contention is the\n"
    "point; oversub=1 gives lanes).  TCP small-message latency tens of us [U]: nic link 5 us.\n"
    "GPUs: gpus=N splits them ceil(N/2) on socket 0, the rest on socket 1.\n";

const char *const cs__desc_dgx1 =
    "DGX-1 V100 node: 8 x V100 hybrid cube mesh, 2 Xeon sockets, 4 PCIe switches, 4 EDR:\n"
    "\n"
    "   NVLink 2.0 bricks (25 GB/s/dir each) per GPU pair, rows sum to 6 [V]:\n"
    "         g0 g1 g2 g3 g4 g5 g6 g7\n"
    "     g0   .  2  1  1  2  .  .  .        quad g0..g3 fully connected,\n"
    "     g1   2  .  1  2  .  1  .  .        quad g4..g7 fully connected,\n"
    "     g2   1  1  .  2  .  .  2  .        plus links to the other quad\n"
    "     g3   1  2  2  .  .  .  .  1\n"
    "     g4   2  .  .  .  .  2  1  1\n"
    "     g5   .  1  .  .  2  .  1  2\n"
    "     g6   .  .  2  .  1  1  .  2\n"
    "     g7   .  .  .  1  1  2  2  .\n"
    "   PCIe:  {g0,g1} sw0   {g2,g3} sw1 (cpu0)   {g4,g5} sw2   {g6,g7} sw3 (cpu1)\n"
    "          rail K = hcaK on switch swK; cpu0 ===== QPI 38.4 GB/s/dir [U] ===== cpu1\n"
    "          4 rails x EDR 12.5 GB/s = 50 GB/s/dir per node [V: 48 GB/s NCCL]\n"
    "   rack leaf (4 nodes [U]) => spine (oversub 1: leaf lane per node rail)\n"
    "\n"
    "Worked route n0-g0 to n4-g7 (rack 0 to rack 1): pcie-n0-g0-sw0, pcie-n0-sw0-hca0,\n"
    "nic-n0-rail0, leaf-n0-rail0, spine-r0-r1, leaf-n4-rail3, nic-n4-rail3,\n"
    "pcie-n4-sw3-hca3, pcie-n4-g7-sw3: GPU pair {g2K, g2K+1} shares rail K, one flow\n"
    "bounded by its rail 12.5 GB/s (12.2 calibrated).\n"
    "n0-g0 to n0-g6 (no direct NVLink): two NVLink hops, e.g. via g2 or g4.\n"
    "Numbers: msccl-tools / TE-CCL dgx1 link matrix [V]; TACCL NDv2 alpha 0.3 us,\n"
    "43.5 GB/s double / 21.7 GB/s single links [V]; reduce_bw 800/3 GB/s [U].\n";
