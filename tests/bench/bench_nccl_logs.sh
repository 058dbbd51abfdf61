#!/usr/bin/env bash
# bench_nccl_logs.sh - measure small, predict big, on public nccl-tests logs
# (tests/core/logs/README.md names each source).
#
#   scale   the terms of `--model nccl` fitted to a cluster's logs of 1 and
#           2 nodes (`collstep calibrate --from-nccl-tests`), the same
#           cluster's logs of 4 nodes and more predicted on the fitted
#           platform (`collstep validate --nccl-tests`); allreduce from
#           1 MiB up: median |error| <= 10 %, worst <= 25 % (smaller sizes
#           printed, no target).  Two clusters:
#             issue309  H100, 400 Gb/s InfiniBand: 2 nodes -> 4 and 8 nodes
#             xxrjun    H100: 1 node of 4 and of 8 GPUs, 2 nodes of 1 and of 8
#                       GPUs (alltoall) -> 10 nodes of 1, 2, 4 and 8 GPUs
#   subset  a node's log on 4 of its 8 GPUs as the only input, its log on all
#           8 predicted: every table within 15 % from 16 MiB up
#   honest  each calibration log predicted on the platform fitted to it:
#           within 5 % from 1 MiB up
# Each prediction is printed beside the uncalibrated one (the presets with
# NCCL's own figures).  Not a test: it prints figures and PASS / MISS per
# target.  About 8 minutes on 2 cores (the simulations of 80 ranks up
# to 16 GiB dominate); OUT=DIR keeps the platforms and reports.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../..
cs=${COLLSTEP:-$root/build/cli/collstep}
logs=$root/tests/core/logs
[ -x "$cs" ] || { echo "SKIP: collstep not built ('$cs')"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
"$cs" calibrate --help --from-nccl-tests >/dev/null 2>&1 || { echo "SKIP: no calibrate --from-nccl-tests"; exit 77; }
out=${OUT:-$(mktemp -d /tmp/bench_nccl_logs.XXXXXX)}
mkdir -p "$out"
echo "== bench_nccl_logs: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %T') UTC, reports in $out"

# stats JSON... NAME MIN_BYTES COLL TARGET_MED TARGET_WORST: one line of figures
stats() {
    python3 - "$@" <<'PY'
import json, sys, statistics
files, name, lo, coll, tmed, tworst = sys.argv[1].split(","), sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5]), float(sys.argv[6])
rows = []
for f in files:
    rows += json.load(open(f))["rows"]
def pick(r):
    return r["size_bytes"] >= lo and (coll == "all" or r["coll"] == coll)
big = [abs(r["error_pct"]) for r in rows if pick(r)]
small = [abs(r["error_pct"]) for r in rows if r["size_bytes"] < lo and (coll == "all" or r["coll"] == coll)]
if not big:
    print(f"  {name:44s} no rows"); sys.exit(0)
med, worst = statistics.median(big), max(big)
ok = "PASS" if med <= tmed and worst <= tworst else "MISS"
line = f"  {name:44s} {len(big):3d} sizes  median {med:5.1f} %  worst {worst:6.1f} %"
if tmed < 1e9:
    line += f"   target {tmed:g} / {tworst:g} %: {ok}"
if small:
    line += f"   (below: median {statistics.median(small):.1f} %, worst {max(small):.1f} %)"
print(line)
PY
}

# calibrate NAME BASE LOG...: the fitted platform $out/NAME.xml
calibrate() {
    local name=$1 base=$2; shift 2
    local t0=$(date +%s)
    "$cs" calibrate --from-nccl-tests "$@" --platform "$base" -o "$out/$name.xml" --force \
        --format json --report "$out/$name-fit.json" 2>"$out/$name-fit.err" ||
        { echo "calibrate $name failed: $(grep -v ' B: ' "$out/$name-fit.err" | tail -3)"; return 1; }
    echo "  calibrated $name on $base from $* in $(( $(date +%s) - t0 )) s:"
    sed -n 's/.*<prop id="collstep_nccl_fit" value="\([^"]*\)".*/    \1/p' "$out/$name.xml"
}

# predict NAME PLATFORM LOG...: $out/NAME.json (NAME: not a calibration's NAME-fit)
predict() {
    local name=$1 plat=$2; shift 2
    "$cs" validate --nccl-tests "$@" --platform "$plat" --format json -o "$out/$name.json" \
        2>"$out/$name.err" || { echo "validate $name failed: $(tail -3 "$out/$name.err")"; return 1; }
}

echo "== scale: 1 and 2 nodes in, 4 nodes and more predicted (allreduce, from 1 MiB)"
calibrate i309 hgx-h100:nodes=8 "$logs/issue309-h100-2nodes.log" &&
    predict i309-pred "$out/i309.xml" "$logs/issue309-h100-4nodes.log" "$logs/issue309-h100-8nodes.log" &&
    predict i309-raw hgx-h100:nodes=8 "$logs/issue309-h100-4nodes.log" "$logs/issue309-h100-8nodes.log" &&
    { stats "$out/i309-raw.json" "issue309 4+8 nodes, NCCL's figures" 1048576 allreduce 1e9 1e9
      stats "$out/i309-pred.json" "issue309 4+8 nodes, fitted to 2 nodes" 1048576 allreduce 10 25; }
# every log of 1 and 2 nodes the cluster has: one node on 4 and 8 GPUs, two
# nodes of 1 GPU (allreduce) and of 8 (alltoall); every 10-node log predicted
xx_in=("$logs/xxrjun-h100-1node-g4.log" "$logs/xxrjun-h100-1node-g8.log"
       "$logs/xxrjun-h100-2nodes-g1.log" "$logs/xxrjun-h100-2nodes-g8.log")
pj=$out/xx-pred-g1.json,$out/xx-pred-g2.json,$out/xx-pred-g4.json,$out/xx-pred-g8.json
rj=$out/xx-raw-g1.json,$out/xx-raw-g2.json,$out/xx-raw-g4.json,$out/xx-raw-g8.json
raw_ok=1
for g in 1 2 4 8; do # NCCL's figures: no calibration needed
    predict xx-raw-g$g hgx-h100:nodes=10 "$logs/xxrjun-h100-10nodes-g$g.log" || raw_ok=0
done
[ $raw_ok = 1 ] && stats "$rj" "xxrjun 10 nodes, NCCL's figures" 1048576 allreduce 1e9 1e9
xx_ok=0
calibrate xx hgx-h100:nodes=10 "${xx_in[@]}" && xx_ok=1
for g in 1 2 4 8; do
    [ $xx_ok = 1 ] || break
    if predict xx-pred-g$g "$out/xx.xml" "$logs/xxrjun-h100-10nodes-g$g.log"; then
        stats "$out/xx-pred-g$g.json" "  10 nodes x $g GPU(s), fitted (no target)" 1048576 allreduce 1e9 1e9
    else
        xx_ok=0
    fi
done
[ $xx_ok = 1 ] &&
    { stats "$pj" "xxrjun 10 nodes, fitted to 1 node + 2 nodes" 1048576 allreduce 10 25
      stats "$pj" "xxrjun 10 nodes, every collective (no target)" 1048576 all 1e9 1e9; }
[ -s "$out/i309-pred.json" ] && [ $xx_ok = 1 ] &&
    stats "$out/i309-pred.json,$pj" "both clusters" 1048576 allreduce 10 25

echo "== subset: 4 GPUs of a node in, its 8 GPUs predicted (every table, from 16 MiB)"
calibrate sub hgx-h100 "$logs/xxrjun-h100-1node-g4.log" &&
    predict sub-pred "$out/sub.xml" "$logs/xxrjun-h100-1node-g8.log" &&
    predict sub-raw hgx-h100 "$logs/xxrjun-h100-1node-g8.log" &&
    { stats "$out/sub-raw.json" "xxrjun 8 GPUs, NCCL's figures" 16777216 all 1e9 1e9
      stats "$out/sub-pred.json" "xxrjun 8 GPUs, fitted to 4 GPUs" 16777216 all 15 15; }

echo "== honest: each calibration's logs on the platform fitted to them (from 1 MiB)"
for n in i309 xx sub; do
    [ -s "$out/$n-fit.json" ] && stats "$out/$n-fit.json" "$n: its own logs" 1048576 all 5 5
done
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
