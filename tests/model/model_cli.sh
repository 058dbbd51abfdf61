#!/usr/bin/env bash
# model_cli.sh COLLSTEP - `collstep sim --model nccl` from the command line:
# NCCL's choice per size on an HGX H200 node (the tuner's picks worked out
# by hand from NCCL's constants in tests/model/test_nccl.c), the simulated
# time against the tuner's closed form where the schedule is NCCL's own,
# the version table, and the refusals (exit 2, a message naming the cause).
. "$(dirname "$0")/../cli/usage_checks.sh"
bad() { expect_usage sim "$@"; } # EXPECTED-TEXT ARGS...

# near_tuner WHAT CSV STDERR PATTERN TOL: sim --format csv's one row within TOL
# (a fraction) of the time NCCL's tuner gives on stderr, whose lines match
# PATTERN (a Python regular expression; "" for any)
near_tuner() {
  check "$1" python3 - "$2" "$3" "$4" "$5" <<'PY'
import csv, re, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
err = open(sys.argv[2]).read()
assert re.search(sys.argv[3], err, re.M), err
t = float(re.search(r"its tuner: ([0-9.]+) us", err).group(1))
assert abs(float(r["time_us"]) / t - 1) <= float(sys.argv[4]), (r["time_us"], t)
PY
}

H=hgx-h200
bad "need --model nccl" --platform "$H" --algo ring --size 1M --nccl-version 2.20.5
bad "need --model nccl" --platform "$H" --algo nccl --size 1M
bad "nccl-proto" --platform "$H" --model nccl --algo nccl --size 1M --nccl-proto LL256
bad "nccl-algo" --platform "$H" --model nccl --algo nccl --size 1M --nccl-algo Butterfly
bad "--nccl-version: expected a version like 2.26.2, found 'two' (the model's table: NCCL 2.20.5, 2.21.5, 2.23.4" --platform "$H" --model nccl --algo nccl --size 1M --nccl-version two
bad "stands alone" --platform "$H" --model nccl --algo ring,nccl --size 1M
bad "--param does not apply to --algo nccl" --platform "$H" --model nccl --algo nccl --param inflight=1 --size 1M
bad "--param does not apply to --algo nccl" --platform "$H" --model nccl --algo nccl --param ring:nchunks=2 --size 1M
# a single-valued option given twice: refused, not the last one taken
bad "--platform given twice ('hgx-h200', then 'hgx-h100')" --platform "$H" --platform hgx-h100 --algo ring --size 1M
bad "-o given twice" --platform "$H" --algo ring --size 1M -o "$tmp/o1" -o "$tmp/o2"
# a blank after '=' in --param: said as such
bad "no value after '='" --platform "$H" --algo ring --param "nchunks= 3" --size 1M
# a file that does not name its GPU
bad "needs the GPU" --platform "$(dirname "$0")/../sim/hgx8_nvls.xml" --model nccl --algo ring \
  --size 1M
# a GPU the model does not know: the property's line and column
bad "badgpu.xml:5:62: --model nccl needs the GPU: unknown GPU 'h999'" \
  --platform "$(dirname "$0")/badgpu.xml" --model nccl --algo ring --size 1M

"$collstep" sim --platform "$H" --model nccl --algo nccl --size 64K,2M,1G --format csv \
  >"$tmp/csv" 2>"$tmp/err"
check "nccl run exits 0" [ $? -eq 0 ]
check "64 KiB: Ring/LL" grep -q '^"ring",allreduce,65536,.*,"nccl-2.29.7:Ring/LL",' "$tmp/csv"
check "2 MiB: NVLS" grep -q '^"nvls",allreduce,2097152,.*,"nccl-2.29.7:NVLS/Simple",' "$tmp/csv"
check "1 GiB: NVLS" grep -q '^"nvls",allreduce,1073741824,.*,"nccl-2.29.7:NVLS/Simple",' "$tmp/csv"
check "stderr names the system" grep -q 'NCCL 2.29.7: h200, 8 rank(s).*ring 12 x 30.0 GB/s, NVLS 8 x 40.0' "$tmp/err"
check "stderr says the picks" grep -q '1073741824 B: NCCL 2.29.7 picks NVLS/Simple (its tuner: 3972.58 us)' "$tmp/err"
# at 1 GiB NVLS is bandwidth-bound: the simulation within 2 % of the tuner's
# 25 + 1073741824 / 272000 us = 3972.58 us plus the kernel's pipeline fill
# and drain, two iterations of 16 channels x 8 heads x 128 KiB at the same
# 272 GB/s: 2 x 16777216 / 272000 = 123.36 us
check "1 GiB within 2 % of the tuner and the fill" python3 - "$tmp/csv" <<'PY'
import csv, sys
r = [x for x in csv.DictReader(open(sys.argv[1])) if x["size_bytes"] == "1073741824"][0]
t, want = float(r["time_us"]), 3972.58 + 123.36
sys.exit(0 if abs(t - want) / want < 0.02 else 1)
PY
# the model makes small sizes slower than the ideal model's links alone
"$collstep" sim --platform "$H" --algo ring --size 64K --format csv >"$tmp/ideal" 2>/dev/null
"$collstep" sim --platform "$H" --model nccl --algo ring --size 64K --format csv >"$tmp/nccl" \
  2>/dev/null
check "64 KiB ring slower under nccl" python3 - "$tmp/ideal" "$tmp/nccl" <<'PY'
import csv, sys
a = float(list(csv.DictReader(open(sys.argv[1])))[0]["time_us"])
b = float(list(csv.DictReader(open(sys.argv[2])))[0]["time_us"])
sys.exit(0 if b > 2 * a else 1)
PY
# 2.20.5 moves to NVLS at 512 KiB already; a version between two of the
# table's is served by the earlier one, with a note
"$collstep" sim --platform "$H" --model nccl --algo nccl --nccl-version 2.20.7 --size 512K \
  --format csv >"$tmp/v" 2>"$tmp/verr"
check "2.20.7 served by 2.20.5" grep -q '"nccl-2.20.5:NVLS/Simple"' "$tmp/v"
check "2.20.7 note" grep -q 'NCCL 2.20.7 is not in the model' "$tmp/verr"
# across 2 HGX nodes NCCL runs NVLSTree in 2.20.5 already (its nvls.cc's
# nNodes test runs before the nodes are counted) and from 2.21; 2.20.5
# starts NVLSTree's chunk at 512 KiB, 2.21 on at 128 KiB: 4 GiB in 128 and
# 512 pieces (NCCL's iterations, each tree's half)
for v in 2.20.5:128 2.22:512 2.24:512; do
  "$collstep" sim --platform hgx-h100:nodes=2 --model nccl --algo nccl --nccl-version "${v%:*}" \
    --size 4G --format csv >"$tmp/nt2" 2>/dev/null
  check "NVLSTree across 2 nodes in ${v%:*} ($(tail -1 "$tmp/nt2" | cut -c1-120))" \
    grep -qE '^"nvls_tree",allreduce,4294967296,.*:NVLSTree/Simple","","nchunks='"${v#*:}"' local=8 inter=tree channels=2"$' "$tmp/nt2"
done
# NCCL_ALGO=Ring NCCL_PROTO=Simple
"$collstep" sim --platform "$H" --model nccl --algo nccl --nccl-algo Ring --nccl-proto Simple \
  --size 1M --format csv >"$tmp/f" 2>/dev/null
check "forced Ring/Simple" grep -q '"nccl-2.29.7:Ring/Simple"' "$tmp/f"
# all-to-all: NCCL's send/receive path, whatever NCCL_ALGO says (a note)
"$collstep" sim --platform "$H" --model nccl --algo nccl --coll alltoall --nccl-algo Tree \
  --size 64M --format csv >"$tmp/a" 2>"$tmp/aerr"
check "alltoall on P2P/Simple" grep -q '^"pairwise",alltoall,67108864,.*,"nccl-2.29.7:P2P/Simple",' "$tmp/a"
check "alltoall: --nccl-algo does not apply (note)" grep -q 'do not apply to all-to-all' "$tmp/aerr"
# AMD: RCCL's table
"$collstep" sim --platform mi300x --model nccl --algo nccl --size 1M --format csv >"$tmp/r" \
  2>"$tmp/rerr"
check "mi300x under RCCL" grep -q '"nccl-2.21.5:Ring/Simple"' "$tmp/r"
check "RCCL named" grep -q 'RCCL 2.21.5: mi300x' "$tmp/rerr"
# the nccl-tests layout under the model
"$collstep" sim --platform "$H" --model nccl --algo nccl --size 1M --format nccl-tests \
  >"$tmp/nt" 2>/dev/null
check "nccl-tests layout" grep -q '^# Avg bus bandwidth' "$tmp/nt"
# a preset exported to a file keeps its GPU (the file's collstep_spec); a
# hand-written gpu property may use either quote and any case
"$collstep" platform export "$H" -o "$tmp/h.xml" >/dev/null 2>&1
"$collstep" sim --platform "$tmp/h.xml" --model nccl --algo nccl --size 1G --format csv \
  >"$tmp/x" 2>/dev/null
check "exported preset under nccl" grep -q '"nccl-2.29.7:NVLS/Simple"' "$tmp/x"
sed -e "s|<prop id=\"collstep_spec\"[^>]*>||" \
  -e "s|<prop id=\"device\" value=\"gpu\"/>|<prop id='device' value='gpu'/><prop id = 'gpu' value='H200'/>|" \
  "$tmp/h.xml" >"$tmp/q.xml"
"$collstep" sim --platform "$tmp/q.xml" --model nccl --algo nccl --size 1G --format csv \
  >"$tmp/q" 2>"$tmp/qerr"
check "gpu property in single quotes, upper case" grep -q 'NCCL 2.29.7: h200, 8 rank' "$tmp/qerr"
# nodes without NVLink are NCCL's nodes too; PCIe Gen3 x16 is NCCL's 12 GB/s
"$collstep" sim --platform x86-p100-pcie-10gbe:nodes=2 --model nccl --algo nccl --size 1M \
  >/dev/null 2>"$tmp/p"
check "PCIe nodes counted" grep -q 'p100, 8 rank(s) in 2 node(s); ring 1 x 1.2 GB/s' "$tmp/p"
"$collstep" sim --platform summit:nodes=2 --model nccl --algo nccl --size 1M >/dev/null 2>"$tmp/s"
check "Summit rings at 12 GB/s" grep -q 'v100, 12 rank(s) in 2 NVLink domain(s); ring 2 x 12.0 GB/s' \
  "$tmp/s"

# NVLS traced under the model: the switch actors still report to the trace
# after their multicast, when the ranks that received it finish (they used
# to read the finished instance's state and die of SIGSEGV)
"$collstep" sim --platform "$H" --model nccl --algo nvls --size 64K,1M --trace "$tmp/tr" \
  --trace-no-plot >/dev/null 2>"$tmp/terr"
check "nvls traced under nccl exits 0" [ $? -eq 0 ]
check "every switch operation traced" grep -q '"switch":"n0-nvs","ops":64,' \
  "$tmp/tr/nvls-65536/summary.json"

# NVLS reduces only what NCCL's ncclNvlsSupported allows: a product falls back to Ring
"$collstep" sim --platform "$H" --model nccl --algo nccl --size 1G --op prod --format csv \
  >"$tmp/prod" 2>/dev/null
check "prod: Ring, not NVLS" grep -q '"nccl-2.29.7:Ring/Simple"' "$tmp/prod"
# a simulation far from NCCL's tuner says so (4 DGX-1 at 1 MiB: NCCL's
# Tree, latency-bound, 340 us simulated against 159 in its tuner)
"$collstep" sim --platform dgx1-v100-ib100:nodes=4 --model nccl --algo nccl --size 1M \
  >/dev/null 2>"$tmp/merr"
check "note when far from the tuner" grep -q 'more than twice its tuner' "$tmp/merr"
# NCCL's Ring broadcast across nodes: a chain along each ring channel, read
# from the root, each leaving a node by its own GPU and NIC (2 HGX nodes at
# 1 GiB within 10 % of the tuner; one chain through one NIC: 7.5 times it)
"$collstep" sim --platform hgx-h100:nodes=2 --model nccl --algo nccl --coll broadcast \
  --size 1G --format csv >"$tmp/bc2.csv" 2>"$tmp/bc2err"
# NVL72 racks: a chain per ring channel (15), each leaving its rack by its own NIC
"$collstep" sim --platform gb200-nvl72:racks=2 --model nccl --algo nccl --coll broadcast \
  --size 64M >/dev/null 2>"$tmp/bc72err"
check "nvl72 x 2 broadcast: runs, 15 chains" grep -q "simulated as chain nchunks=[0-9]*,channels=15,local=72$" "$tmp/bc72err"
near_tuner "hgx x 2 broadcast: a chain per ring channel, near the tuner" "$tmp/bc2.csv" \
  "$tmp/bc2err" 'simulated as chain nchunks=\d+,channels=8,local=8$' 0.1
# LL streams its lines through the chain: at least 4 pieces per hop (2 HGX
# nodes at 64 KiB: 83 us against the tuner's 51; 8 pieces took 120)
"$collstep" sim --platform hgx-h100:nodes=2 --model nccl --algo nccl --coll broadcast \
  --size 64K --format csv >"$tmp/bcll.csv" 2>"$tmp/bcllerr"
near_tuner "hgx x 2 broadcast with LL: pieces that stream" "$tmp/bcll.csv" "$tmp/bcllerr" \
  'picks Ring/LL .*simulated as chain nchunks=60,channels=8,local=8$' 0.7
# NCCL's Ring broadcast on one DGX-1 node: a chain along each of the rings
# over the NVLinks, within 5 % of the tuner at 1 GiB (in the ranks' order
# over one chain of 8 pieces: 20 times its time)
"$collstep" sim --platform dgx1-v100-ib100:nodes=1 --model nccl --algo nccl --coll broadcast \
  --size 1G --format csv >"$tmp/bc.csv" 2>"$tmp/bcerr"
near_tuner "dgx-1 broadcast: chains over the rings, near the tuner" "$tmp/bc.csv" "$tmp/bcerr" \
  'simulated as chain nchunks=\d+,orders=01237564\+' 0.05
# NCCL's rings over a DGX-1's NVLinks visit GPUs, whatever ranks a map puts
# on them: with ranks 0 and 1 swapped the same rings, in the ranks' names
printf 'n0-g1\nn0-g0\nn0-g2\nn0-g3\nn0-g4\nn0-g5\nn0-g6\nn0-g7\n' >"$tmp/swap.map"
"$collstep" sim --platform dgx1-v100-ib100:nodes=1 --model nccl --algo nccl --size 1G \
  --map "$tmp/swap.map" >/dev/null 2>"$tmp/swerr"
check "map: the rings in the ranks' names" grep -q 'simulated as ring nchunks=11,orders=10237564+10326754+12674503+13054762+14576230+14657320$' "$tmp/swerr"
check "map: no note" sh -c "! grep -q 'more than twice' '$tmp/swerr'"
# across nodes a map must keep the platform's order, or the ranks' order is simulated, said
printf 'n0-g1\nn0-g0\nn0-g2\nn0-g3\nn0-g4\nn0-g5\nn0-g6\nn0-g7\nn1-g0\nn1-g1\nn1-g2\nn1-g3\nn1-g4\nn1-g5\nn1-g6\nn1-g7\n' >"$tmp/swap2.map"
"$collstep" sim --platform dgx1-v100-ib100:nodes=2 --model nccl --algo nccl --size 1G \
  --map "$tmp/swap2.map" >/dev/null 2>"$tmp/sw2err"
check "map across nodes: said" grep -q "NCCL's rings and trees over the nodes' links are simulated in the ranks' order: they are found among the platform's first 16 hosts in their order, and the ranks are not so" "$tmp/sw2err"
# a user's file whose links name no tier: NCCL's model says its figures are PCIe's
sed -E 's|<host id="(gpu[0-9])" speed="5Tf"/>|<host id="\1" speed="5Tf"><prop id="gpu" value="p100"/></host>|' \
  "$(dirname "$0")/../planner/xml/dgx1_p100.xml" >"$tmp/untagged.xml"
"$collstep" sim --platform "$tmp/untagged.xml" --model nccl --algo nccl --size 1M >/dev/null \
  2>"$tmp/unterr"
check "untagged links: said" grep -q "no link is tagged as NVLink, xGMI or PCIe (a tier property), so NCCL's figures are PCIe's" "$tmp/unterr"
check "tagged links (a preset): not said" sh -c "! grep -q 'no link is tagged' '$tmp/merr'"
# NCCL's Tree across nodes that are no switch domain: each channel's chain a
# path over the node's links (the link analysis's rings cut at a head near
# a NIC of its own), not the ranks' order (which crosses PCIe on a DGX-1 and
# puts every chain of an MI300X node on the same 7 xGMI links: twice the
# tuner's time): 32 DGX-1 at 64 MiB and 4 MI300X nodes at 32 MiB within
# 20 % of the tuner
for spec in dgx1-v100-ib100:nodes=32,64M mi300x:nodes=4,32M; do
  "$collstep" sim --platform "${spec%,*}" --model nccl --algo nccl --size "${spec#*,}" \
    --format csv >"$tmp/tree.csv" 2>"$tmp/trerr"
  near_tuner "$spec: Tree over the node's links, near the tuner" "$tmp/tree.csv" "$tmp/trerr" \
    'picks Tree/\S+ \(its tuner: [0-9.]+ us\), simulated as dbtree nchunks=\d+,local=8,orders=[0-9]{8}(\+[0-9]{8})+$' 0.2
done
# MI300X's full xGMI mesh: NCCL's rings over all 7 links of each GPU (7
# ring orders using every directed link once), within 5 % of RCCL's tuner
# on one node, and entering and leaving each node by 7 different GPUs
for n in 1 2; do
  "$collstep" sim --platform mi300x:nodes=$n --model nccl --algo nccl --size 1G --format csv \
    >"$tmp/mx$n" 2>"$tmp/mx${n}err"
  check "mi300x x $n: the mesh's ring orders" grep -q 'channels=7 .*orders=04276531+24167350+15263407+72546013+57036214+61743205+47512306' "$tmp/mx$n"
  check "mi300x x $n: no note" sh -c "! grep -q 'more than twice' '$tmp/mx${n}err'"
done
near_tuner "mi300x: within 5 % of RCCL's tuner on one node" "$tmp/mx1" "$tmp/mx1err" "" 0.05

# a ring across nodes pays the network's latency where its data crosses nodes
# (NCCL's connections: eager messages, the latency on the data's path), as
# NCCL's tuner counts it: 16 HGX H100 nodes, Ring/LL128 at 16 MiB, the
# simulation within 5 % of the tuner's time (rendezvous messages: 70 % above)
"$collstep" sim --platform hgx-h100:nodes=16 --model nccl --algo nccl --nccl-algo Ring \
  --size 16M --format csv >"$tmp/r16" 2>"$tmp/r16err"
check "128-GPU ring within 5 % of the tuner" python3 - "$tmp/r16" "$tmp/r16err" <<'PY'
import csv, re, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
m = re.search(r"16777216 B: NCCL [0-9.]+ picks Ring/LL128 \(its tuner: ([0-9.]+) us\)",
              open(sys.argv[2]).read())
t, tuner = float(r["time_us"]), float(m.group(1))
print(f"    simulated {t:.2f} us, tuner {tuner:.2f} us")
sys.exit(0 if abs(t - tuner) / tuner < 0.05 else 1)
PY
"$collstep" sim --platform hgx-h100 --model nccl --algo ring --size 1M --engine actors \
  >/dev/null 2>"$tmp/acterr"
check "the actor engine refuses the nccl model (exit 2)" [ $? -eq 2 ]
check "... saying why" grep -q "the nccl model runs on the dag engine" "$tmp/acterr"

# an empty version is refused; a partial one is said to be served by the
# entry it names; on AMD GPUs one note says RCCL's entry serves
bad "--nccl-version: expected a version like 2.26.2, found ''" --platform "$H" --model nccl --algo nccl --size 1M --nccl-version ""
"$collstep" sim --platform "$H" --model nccl --algo nccl --size 1M --nccl-version 2 2>"$tmp/v2" >/dev/null
check "version 2: the note names 2.29.7" grep -q "note: NCCL 2: using NCCL 2.29.7, the model's entry for it" "$tmp/v2"
"$collstep" sim --platform mi300x --model nccl --algo nccl --size 1M --nccl-version 2.18 2>"$tmp/v3" >/dev/null
check "mi300x at 2.18: one note, RCCL's" [ "$(grep -c note: "$tmp/v3")" = 1 ]
check "... naming RCCL 2.21.5" grep -q "note: mi300x GPUs run RCCL, and the model has RCCL 2.21.5 only: using it for 2.18" "$tmp/v3"
# a key given twice in one list is refused; ALGO: may prefix every item
bad "parameter nodes given twice in 'nodes=2,nodes=3'" --platform hgx-h100:nodes=2,nodes=3 --algo ring --size 1M
bad "parameter nchunks given twice" --platform "$H" --algo ring --param ring:nchunks=2,nchunks=3 --size 1M
bad "--compare=rd: 'rd' is not among --algo ring" --platform "$H" --algo ring --size 1M --compare=rd
"$collstep" sim --platform hgx-h100:nodes=2 --algo nvls_tree --param nvls_tree:nchunks=16,nvls_tree:channels=2 \
    --size 64M >"$tmp/pp" 2>&1
check "ALGO: on every item" grep -q "nvls_tree (nchunks=16 local=8 inter=tree channels=2)" "$tmp/pp"
# parameters are printed whole (five ring orders: 97 characters)
"$collstep" sim --platform "$H" --algo ring --param channels=5,orders=01234567:02461357:04152637:07654321:03614725 \
    --size 1M --format csv >"$tmp/long" 2>&1
check "long parameters kept whole" grep -q "orders=01234567:02461357:04152637:07654321:03614725\"" "$tmp/long"
# a table's header describes all of its rows: Ring forced over sizes where
# NCCL's protocol changes gets one header per protocol
"$collstep" sim --platform hgx-h100:nodes=2 --model nccl --algo nccl --nccl-algo Ring --size 1M,256M \
    >"$tmp/proto" 2>/dev/null
check "one header per protocol (Ring/LL128 for 1 MiB, Ring/Simple for 256 MiB)" \
    awk '/^# allreduce/ { h = $0 } /^ +1048576 / { a = (h ~ /Ring\/LL128$/) } /^ +268435456 / { b = (h ~ /Ring\/Simple$/) } END { exit !(a && b) }' "$tmp/proto"

# NCCL's rings across nodes: one per NIC, as many as the GPUs' NVLinks carry
# (each carries all rings but the one leaving by its GPU) and at most NCCL's
# search's channels: 8 x 48 GB/s across HGX nodes, and across NVL72 racks
# (72 NICs a rack) 15 x 48 (720 GB/s), where 72 channels were beyond NCCL's
# and the schedule's 64
"$collstep" sim --platform hgx-h100:nodes=2 --model nccl --algo nccl --size 1G >/dev/null 2>"$tmp/sys1"
check "ring 8 x 48 across HGX nodes" grep -q "ring 8 x 48.0 GB/s" "$tmp/sys1"
"$collstep" sim --platform gb200-nvl72:racks=2 --model nccl --algo nccl --coll allgather --size 1G \
    >"$tmp/ag2" 2>"$tmp/sys2"
check "ring 15 x 48 across NVL72 racks" grep -q "ring 15 x 48.0 GB/s" "$tmp/sys2"
check "NCCL's allgather across NVL72 racks simulated" grep -q "^ *1073741760 " "$tmp/ag2"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
