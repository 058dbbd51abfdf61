#!/usr/bin/env bash
# bench_nccl_series.sh - measure small, predict big on a series collstep
# measures itself: `collstep run --format nccl-tests` on the emulated
# cluster of scripts/netns-cluster.sh at 1, 2 and 4 hosts (R ranks each,
# every host link shaped to RATE, one FIFO per shaped port: PRIO none),
# written as nccl-tests logs; `collstep calibrate --from-nccl-tests` fits
# the tiers of a base platform (the cluster as its user would describe it:
# H hosts of R ranks, a host tier of 10 GB/s and 1 us inside each host, a
# NIC of RATE and 5 us per host; base.xml below) to the logs of 1 and 2
# hosts only; `collstep validate --nccl-tests` then predicts the log of 4
# hosts on the fitted platform.  Targets (issue 33): allreduce from 1 MiB
# up, median |error| <= 10 %, worst <= 25 %; the smaller sizes printed.
# Printed beside the base platform's own prediction (the nominal figures).
#
# Not a test: it prints figures and PASS / MISS.  Needs root (namespaces);
# exits 77 otherwise.  About 6 minutes on 2 cores.
# Environment: COLLSTEP (build/cli/collstep), RANKS (2), RATE (400mbit),
# ALGOS (ring,rhd), SIZES (64K:64M:4), ITERS (5), PRIO (none), NICE (-10),
# OUT (a directory to keep the logs, platforms and reports in).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../..
cs=${COLLSTEP:-$root/build/cli/collstep}
R=${RANKS:-2} rate=${RATE:-400mbit} algos=${ALGOS:-ring,rhd} sizes=${SIZES:-64K:64M:4}
iters=${ITERS:-5} prio=${PRIO:-none} nice=${NICE:--10}
[ -x "$cs" ] || { echo "SKIP: collstep not built ('$cs')"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: not root"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
"$cs" calibrate --help --from-nccl-tests >/dev/null 2>&1 || { echo "SKIP: no calibrate --from-nccl-tests"; exit 77; }
. "$root/scripts/tc-units.sh"
rate_bits=$(bits "$rate") || { echo "RATE: expected a tc rate (400mbit), found '$rate'"; exit 2; }
out=${OUT:-$(mktemp -d /tmp/bench_nccl_series.XXXXXX)}
mkdir -p "$out"
echo "== bench_nccl_series: 1, 2, 4 hosts x $R ranks, $rate per host link, --prio $prio, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %T') UTC"
echo "== logs, platforms and reports in $out"

# the series: one log per host count
for H in 1 2 4; do
    t0=$(date +%s)
    "$root/scripts/netns-cluster.sh" -H "$H" -R "$R" --rate "$rate" --nice "$nice" --prio "$prio" -- \
        "$cs" run --transport tcp --iface @ADDR@ --coll allreduce --algo "$algos" --size "$sizes" \
        --iters "$iters" --warmup 1 --timeout 300 --format nccl-tests -o "$out/hosts$H.log" --force \
        >"$out/hosts$H.out" 2>&1
    rc=$?
    [ $rc = 77 ] && { echo "SKIP: the emulated cluster cannot be built here"; exit 77; }
    [ $rc = 0 ] || { echo "run on $H hosts failed ($rc): $(tail -3 "$out/hosts$H.out")"; exit 1; }
    echo "  measured $H host(s) x $R ranks in $(( $(date +%s) - t0 )) s: $out/hosts$H.log"
done

# the base platform: 4 hosts of R ranks as a user describes the cluster
python3 - "$out/base.xml" 4 "$R" "$rate_bits" <<'PY'
import sys
path, H, R, bits = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
L = ["<?xml version='1.0'?>",
     '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
     '<platform version="4.1">',
     f'<!-- bench_nccl_series.sh: {H} hosts of {R} ranks, a NIC of {bits} bit/s per host -->',
     '<zone id="emulated" routing="Floyd">',
     f'  <prop id="collstep_dims" value="{R}x{H}"/>']
for h in range(H):
    for r in range(R):
        L.append(f'  <host id="h{h}r{r}" speed="100Gf"><prop id="device" value="cpu"/></host>')
L.append("  " + "".join(f'<router id="h{h}"/>' for h in range(H)) + '<router id="switch"/>')
for h in range(H):
    for r in range(R):
        L.append(f'  <link id="h{h}r{r}-host" bandwidth="10GBps" latency="1us" sharing_policy="SPLITDUPLEX">'
                 '<prop id="tier" value="host"/></link>')
    L.append(f'  <link id="h{h}-nic" bandwidth="{bits}bps" latency="5us" sharing_policy="SPLITDUPLEX">'
             '<prop id="tier" value="nic"/></link>')
for h in range(H):
    for r in range(R):
        L.append(f'  <route src="h{h}r{r}" dst="h{h}"><link_ctn id="h{h}r{r}-host" direction="UP"/></route>')
    L.append(f'  <route src="h{h}" dst="switch"><link_ctn id="h{h}-nic" direction="UP"/></route>')
L += ['</zone>', '</platform>']
open(path, "w").write("\n".join(L) + "\n")
PY

t0=$(date +%s)
"$cs" calibrate --from-nccl-tests "$out/hosts1.log" "$out/hosts2.log" --platform "$out/base.xml" \
    -o "$out/fitted.xml" --force --format json --report "$out/fit.json" 2>"$out/fit.err" ||
    { echo "calibrate failed: $(tail -3 "$out/fit.err")"; exit 1; }
echo "== calibrated on 1 + 2 hosts in $(( $(date +%s) - t0 )) s:"
sed -n 's/^# *\(tier .*\)/    \1/p' "$out/fit.err"
for p in fitted base; do
    "$cs" validate --nccl-tests "$out/hosts4.log" --platform "$out/$p.xml" --format json \
        -o "$out/pred-$p.json" --force 2>"$out/pred-$p.err" >/dev/null ||
        { echo "validate on $p.xml failed: $(tail -3 "$out/pred-$p.err")"; exit 1; }
done
python3 - "$out" <<'PY'
import json, statistics, sys
out = sys.argv[1]
def stats(name, f, target):
    rows = json.load(open(f))["rows"]
    big = [r for r in rows if r["size_bytes"] >= 1 << 20]
    small = [abs(r["error_pct"]) for r in rows if r["size_bytes"] < 1 << 20]
    e = [abs(r["error_pct"]) for r in big]
    med, worst = statistics.median(e), max(e)
    line = f"  {name:40s} {len(e):3d} sizes  median {med:5.1f} %  worst {worst:6.1f} %"
    if target:
        line += f"   target 10 / 25 %: {'PASS' if med <= 10 and worst <= 25 else 'MISS'}"
    if small:
        line += f"   (below 1 MiB: median {statistics.median(small):.1f} %, worst {max(small):.1f} %)"
    print(line)
    for r in sorted(big, key=lambda r: (r["predicted_as"], r["size_bytes"])):
        print(f"      {r['predicted_as']:6s} {r['size_bytes'] >> 20:5d} MiB  measured {r['measured_us'] / 1e3:9.1f} ms"
              f"  predicted {r['predicted_us'] / 1e3:9.1f} ms  {r['error_pct']:+6.1f} %")
print("== 4 hosts predicted (allreduce, from 1 MiB):")
stats("the base platform (nominal figures)", f"{out}/pred-base.json", False)
stats("fitted to the logs of 1 and 2 hosts", f"{out}/pred-fitted.json", True)
fit = json.load(open(f"{out}/fit.json"))["rows"]
e = [abs(r["error_pct"]) for r in fit if r["size_bytes"] >= 1 << 20]
print(f"== the fit on its own logs (1 and 2 hosts, from 1 MiB): median {statistics.median(e):.1f} %, worst {max(e):.1f} %")
PY
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
