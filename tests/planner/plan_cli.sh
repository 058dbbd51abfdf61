#!/usr/bin/env bash
# plan_cli.sh COLLSTEP - `collstep plan` from the command line: bad input
# exits 2 with a message naming the problem; a plan prints its ranking in
# the three formats, its choice per size in the nccl-tests layout, and writes a tuning table that `collstep sim --algo
# auto` reads (and refuses for another platform); -o never replaces a file
# collstep did not write.
. "$(dirname "$0")/../cli/usage_checks.sh"
bad() { expect_usage plan "$@"; } # EXPECTED-TEXT ARGS...

P=x86-p100-pcie-10gbe:nodes=2
bad "platform is required" --size 1M
bad "size is required" --platform "$P"
bad "unknown collective 'allsum'" --platform "$P" --coll allsum --size 1M
bad "nosuchpreset" --platform nosuchpreset --size 1M
bad "nothing to plan" --platform "$P" --ranks 1 --size 1M
bad "only 8" --platform "$P" --ranks 9 --size 1M
bad "budget" --platform "$P" --size 1M --budget 0
bad "budget" --platform "$P" --size 1M --budget soon
bad "give --budget" --platform summit:nodes=8 --size 1M --budget 0.05
bad "format" --platform "$P" --size 1M --format xml
bad "model" --platform "$P" --size 1M --model fancy
bad "size" --platform "$P" --size 1G:1M
bad "top" --platform "$P" --size 1M --top 0
# a one-host platform file
cat >"$tmp/one.xml" <<'XML'
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="h0" speed="1Gf"/>
  </zone>
</platform>
XML
bad "nothing to plan" --platform "$tmp/one.xml" --size 1M
# -o: a file collstep did not write is kept
echo "my notes" >"$tmp/notes"
bad "notes" --platform "$P" --size 1M -o "$tmp/notes"
check "-o left the user's file alone" grep -q "my notes" "$tmp/notes"

# a plan: table, csv, json, tuning table
"$collstep" plan --platform "$P" --size 64K,16M --top 2 -o "$tmp/t.tuning" >"$tmp/table" 2>"$tmp/err"
rc=$?; check "plan exits 0 ($(tail -3 "$tmp/err"))" test $rc -eq 0
check "table names the tiers" grep -q "^# tiers" "$tmp/table"
check "table has a choice per size" test "$(grep -c '^size .*: ' "$tmp/table")" -eq 2
check "table ranks a simulated row" grep -q " sim " "$tmp/table"
check "progress: a line per simulation off a terminal" grep -q "^collstep plan: \[1/" "$tmp/err"
check "tuning table written" grep -q "^collstep-tuning 1" "$tmp/t.tuning"
check "tuning table platform" grep -qx "platform $P" "$tmp/t.tuning"
check "tuning table entries" test "$(grep -c '^entry allreduce ' "$tmp/t.tuning")" -ge 1
# a second plan replaces the table collstep wrote
"$collstep" plan --platform "$P" --size 1M --top 1 -o "$tmp/t.tuning" >/dev/null 2>&1
rc=$?; check "-o replaces its own table" test $rc -eq 0
"$collstep" plan --platform "$P" --size 64K,16M --top 2 --format csv >"$tmp/csv" 2>/dev/null
check "csv header" grep -q "^size,place,algo,params,order,time_us" "$tmp/csv"
check "csv one chosen row per size" test "$(grep -c ',1$' "$tmp/csv")" -eq 2
"$collstep" plan --platform "$P" --size 64K --top 2 --format json >"$tmp/json" 2>/dev/null
if command -v python3 >/dev/null; then
  check "json parses" python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['ranks']==8 and d['sizes'][0]['ranking']" "$tmp/json"
fi

# --format nccl-tests: the choice per size as nccl-tests prints a run
bad "--show" --platform "$P" --size 1M --format nccl-tests --show 3
bad "not a sweep nccl-tests runs" --platform "$P" --size 16M,64K --format nccl-tests
"$collstep" plan --platform "$P" --size 64K:16M:16 --top 2 --format nccl-tests >"$tmp/nccl" \
  2>"$tmp/err"
rc=$?; check "nccl-tests plan exits 0 ($(tail -3 "$tmp/err"))" test $rc -eq 0
check "nccl-tests: the sweep as nccl-tests -b 64K -e 16M -f 16, not validated" grep -q \
  '^# nThread 1 nGpus 1 minBytes 65536 maxBytes 16777216 step: 16(factor) warmup iters: 0 iters: 1 agg iters: 1 validation: 0 graph: 0 unalign: 0$' \
  "$tmp/nccl"
check "nccl-tests: a row per size" \
  test "$(grep -cE '^ +(65536|1048576|16777216) +[0-9]+ +float +sum +-1 ' "$tmp/nccl")" -eq 3
check "nccl-tests: the choice of each size named" \
  test "$(grep -cE '^#   (65536|1048576|16777216) B: ' "$tmp/nccl")" -eq 3
check "nccl-tests: 8 devices" test "$(grep -c '^#  Rank ' "$tmp/nccl")" -ge 8
check "nccl-tests: footer" grep -q '^# Avg bus bandwidth    : [0-9.e+]* $' "$tmp/nccl"
# the rows' times are the chosen candidates' (csv: chosen = 1)
"$collstep" plan --platform "$P" --size 64K:16M:16 --top 2 --format csv >"$tmp/nccl_csv" 2>/dev/null
if command -v python3 >/dev/null; then
  check "nccl-tests times are the choices'" python3 - "$tmp/nccl" "$tmp/nccl_csv" <<'PY'
import csv, sys
rows = {int(l.split()[0]): float(l.split()[5]) for l in open(sys.argv[1]) if l[:1] == " "}
chosen = {int(r["size"]): float(r["time_us"]) for r in csv.DictReader(open(sys.argv[2]))
          if r["chosen"] == "1"}
assert rows.keys() == chosen.keys(), (rows, chosen)
assert all(abs(rows[k] - chosen[k]) <= 0.01 + 1e-4 * chosen[k] for k in rows), (rows, chosen)
PY
fi

# NCCL's choice as a reference row under the ideal model: marked, with
# NCCL's algorithm, busbw and share of the links' bound; never the choice
"$collstep" plan --platform hgx-h100:nodes=2 --size 64K,1G --top 1 --candidates 4 \
  >"$tmp/ref" 2>"$tmp/err"
rc=$?; check "reference plan exits 0 ($(tail -2 "$tmp/err"))" test $rc -eq 0
check "reference: the system NCCL's tuner sees, in the header" \
  grep -q "^# nccl (reference): NCCL [0-9.]*: h100, 16 rank(s).*simulated under the ideal model" \
  "$tmp/ref"
check "reference: a row per size with NCCL's algorithm/protocol and the bound ($(grep '^nccl' "$tmp/ref" | head -2))" \
  test "$(grep -cE '^nccl \(reference\): NCCL [0-9.]+ picks (Ring|Tree|NVLS|NVLSTree|CollNetDirect|CollNetChain|PAT)/(LL|LL128|Simple) on [0-9]+ channels?, simulated as [a-z_]+.*: [0-9.]+ us, busbw [0-9.]+ GB/s, [0-9.]+ % of the links. bound; the choice [0-9.]+x its speed$' "$tmp/ref")" -eq 2
check "reference: NVLSTree at 1 GiB on two HGX nodes" \
  grep -q "^nccl (reference): NCCL [0-9.]* picks NVLSTree/Simple on 8 channels, simulated as nvls_tree" "$tmp/ref"
if command -v python3 >/dev/null; then
  "$collstep" plan --platform hgx-h100:nodes=2 --size 64K,1G --top 1 --candidates 4 \
    --format json >"$tmp/refjson" 2>/dev/null
  check "reference in json: a marked nccl row per size, never chosen" python3 - "$tmp/refjson" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["nccl_reference"]["library"] == "NCCL", d["nccl_reference"]
for s in d["sizes"]:
    ref = [r for r in s["ranking"] if r.get("choice") == "nccl"]
    assert len(ref) == 1 and ref[0]["reference"] is True and ref[0]["source"] == "sim", ref
    assert ref[0]["algorithm"] in ("Ring", "Tree", "NVLS", "NVLSTree") and ref[0]["busbw_GBps"] > 0
    assert 0 < ref[0]["bound_pct"] <= 100, ref[0]
    assert not ref[0].get("chosen") and s["versus_nccl"]["speedup"] > 0
PY
fi
# a reducing switch per group (two NVL72 racks): each rank's vector passes
# its rack's switch, (72+1)/72 x SIZE per rank, not 2(P-1)/P; the reference
# row of two HGX nodes (NVLSTree) stays within the bound above
"$collstep" plan --platform gb200-nvl72:racks=2 --size 1M --top 1 --candidates 2 \
  >"$tmp/nvl2" 2>"$tmp/err"
rc=$?; check "two NVL72 racks plan exits 0 ($(tail -2 "$tmp/err"))" test $rc -eq 0
check "two NVL72 racks: the bound counts the racks' switches ($(grep '^# bound' "$tmp/nvl2"))" \
  grep -q "^# bound: 1.01 x SIZE out of each rank over its links' .*each group of 72 ranks (tier nvlink) has a switch that reduces (nvls): (g+1)/g" "$tmp/nvl2"
# all-to-all across 2 HGX nodes: every rank's own blocks leave its node (8 x
# 1/2 x SIZE per node over its 8 NICs); posting every exchange at once reaches
# that bound, as NCCL's reference (every peer at once) does
"$collstep" plan --platform hgx-h100:nodes=2 --coll alltoall --size 256M --top 3 \
  >"$tmp/a2a" 2>"$tmp/err"
rc=$?; check "alltoall plan exits 0 ($(tail -2 "$tmp/err"))" test $rc -eq 0
check "alltoall: the groups' bound counts every rank's blocks ($(grep '^# bound' "$tmp/a2a"))" \
  grep -q "^# bound: 4 x SIZE must leave each of the 2 groups of 8 ranks" "$tmp/a2a"
check "alltoall: every exchange at once is chosen, near the bound ($(grep '^size' "$tmp/a2a"))" \
  grep -qE "^size 268435456 B: pairwise inflight=0, .*the choice at (99|100)\.[0-9] % of it" "$tmp/a2a"
check "alltoall: NCCL's reference posts every peer at once" \
  grep -q "^nccl (reference): .* simulated as pairwise inflight=0:" "$tmp/a2a"
check "alltoall: NCCL's reference is its send/receive path ($(grep '^nccl' "$tmp/a2a"))" \
  grep -q "^nccl (reference): NCCL .* picks P2P/Simple on [0-9]* channels" "$tmp/a2a"
check "alltoall: no flat ring, vs_ring '-' ($(grep ' pairwise ' "$tmp/a2a" | head -1))" \
  grep -qE "^ +1 +pairwise +inflight=0 .* -  " "$tmp/a2a"
# under NCCL's model, as JSON: no ring (null), and NCCL's P2P as fast as the best
"$collstep" plan --platform hgx-h100:nodes=2 --coll alltoall --size 256M --top 3 --model nccl \
  --format json >"$tmp/a2a.json" 2>"$tmp/err"
rc=$?; check "alltoall --model nccl json exits 0 ($(tail -2 "$tmp/err"))" test $rc -eq 0
check "alltoall json: speedup_vs_ring null, NCCL's P2P row, 'neither' slower" python3 - "$tmp/a2a.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["sizes"][0]
rows = s["ranking"]
assert all(r["speedup_vs_ring"] is None for r in rows if r.get("choice") == "collstep"), rows[0]
nccl = [r for r in rows if r.get("choice") == "nccl"]
assert nccl and nccl[0]["algorithm"] == "P2P" and nccl[0]["protocol"] == "Simple", nccl
v = s["versus_nccl"]
assert v["slower"] == "neither" and "as fast as NCCL's P2P/Simple" in v["explanation"], v
PY
# a platform whose GPU NCCL's model does not know: no row, and the report says why
"$collstep" plan --platform "$(dirname "$0")/xml/nvswitch8.xml" --size 1M --top 1 --candidates 2 \
  >"$tmp/noref" 2>"$tmp/err"
rc=$?; check "no reference: plan exits 0 ($(tail -2 "$tmp/err"))" test $rc -eq 0
check "no reference: the header says why ($(grep '^# nccl' "$tmp/noref"))" \
  grep -q "^# nccl (reference): no reference row of NCCL's choice: .*NCCL's model needs the GPU" \
  "$tmp/noref"
check "no reference: no row" test "$(grep -c '^nccl (reference)' "$tmp/noref")" -eq 0

# a switch domain of more than 36 ranks (a GB200 NVL72 rack): its ring is
# the ranks' order, not searched, and the rail channels get it (local=72,
# no orders: base 36 would not hold 72 ranks)
"$collstep" plan --platform gb200-nvl72:racks=2 --size 1M --candidates 1 >"$tmp/nvl" 2>"$tmp/err"
rc=$?; check "NVL72 plan exits 0 ($(tail -2 "$tmp/err"))" test $rc -eq 0
check "NVL72: each rack a switch domain ($(grep '^# rings' "$tmp/nvl"))" \
  grep -q "^# rings: each group of 72 ranks is a switch domain" "$tmp/nvl"
"$collstep" plan --platform gb200-nvl72:racks=2 --size 1M --candidates 1 --format csv \
  >"$tmp/nvlcsv" 2>/dev/null
check "NVL72: ring channels over the rails in groups of 72 ($(grep -c 'local=72' "$tmp/nvlcsv"))" \
  test "$(grep -cE '^1048576,[0-9]+,ring,"channels=(9|18|36),local=72",' "$tmp/nvlcsv")" -eq 3
check "NVL72: no orders parameter" test "$(grep -c 'orders=' "$tmp/nvlcsv")" -eq 0

# --algo auto --tuning (collstep sim), where the sim command has it
if "$collstep" sim --help 2>/dev/null | grep -q -- "--tuning"; then
  "$collstep" plan --platform "$P" --size 64K,16M --top 2 -o "$tmp/t.tuning" >/dev/null 2>&1
  "$collstep" sim --platform "$P" --algo auto --tuning "$tmp/t.tuning" --size 64K,16M >"$tmp/sim" 2>"$tmp/simerr"
  rc=$?; check "sim --algo auto runs the table ($(head -c 300 "$tmp/simerr"))" test $rc -eq 0
  # the table says the model of its predictions; a run under another is told
  check "tuning table model" grep -qx "model ideal" "$tmp/t.tuning"
  check "no note under the table's model" sh -c "! grep -q 'predictions are model' '$tmp/simerr'"
  "$collstep" sim --platform "$P" --algo auto --tuning "$tmp/t.tuning" --size 64K --model calibrated \
    >/dev/null 2>"$tmp/simerr2"
  check "note under another model" grep -q "note: .*t.tuning's predictions are model ideal's and this run simulates under model calibrated: give --model ideal to compare them" "$tmp/simerr2"
  "$collstep" sim --platform summit:nodes=2 --algo auto --tuning "$tmp/t.tuning" --size 1M >"$tmp/out" 2>"$tmp/err"
  rc=$?
  check "sim refuses a table for another platform (exit $rc: $(head -c 200 "$tmp/err"))" \
    test $rc -eq 2
fi

# --jobs by default: the cores the process may run on (a launcher's or
# Slurm's binding), said on stderr
if command -v taskset >/dev/null && taskset -c 0 true 2>/dev/null; then
  taskset -c 0 "$collstep" plan --platform "$P" --size 64K --top 2 --candidates 2 >/dev/null 2>"$tmp/err"
  check "bound to one core: 1 simulation at a time ($(tail -1 "$tmp/err"))" \
    grep -q "planned in [0-9.]* s, 1 simulation at a time" "$tmp/err"
  "$collstep" plan --platform "$P" --size 64K --top 2 --candidates 2 --jobs 3 >/dev/null 2>"$tmp/err"
  check "--jobs 3: 3 at a time" grep -q ", 3 simulations at a time" "$tmp/err"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
