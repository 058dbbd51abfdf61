#!/usr/bin/env bash
# bench_validate.sh - how close `collstep sim` comes to live runs (issue #19).
#
# On the emulated cluster of scripts/netns-cluster.sh (HOSTS x RANKS, every
# host link shaped to RATE each direction, the last host to SLOW_RATE):
#   1. collstep calibrate (sweep CAL_SIZES) writes the calibrated platform;
#   2. a "nominal" platform of the same topology is derived from it: the
#      NIC links at the shaped rates, the tier latencies of the presets
#      (nic 5 us as x86-p100-pcie-10gbe, host 1 us at 10 GB/s), no
#      duplex links, and the presets' literature factors for `--model
#      calibrated` (nic: latency x 1, bandwidth x 0.94, the 10 GbE factor);
#   3. collstep validate runs allreduce ring, rhd, dbtree, hier (dims from
#      the hosts), reduce-scatter ring and allgather ring at SIZES, live,
#      and predicts each on the calibrated platform (ideal model: its links
#      hold the measured figures), the nominal one with the literature
#      factors, and the nominal one in the ideal model;
#   4. prints per prediction the median, geometric-mean and worst |error|
#      over the sizes from 1 MiB up (targets: median <= 3 %, worst <= 8 %
#      on the calibrated platform, with either PRIO) and, without target,
#      the smaller sizes.
# Not a test: it prints figures.  Needs root (namespaces); exits 77
# otherwise.  The 2-core development machine shares its CPUs with whatever
# else runs: the script prints the load average before and after.
#
# Environment: COLLSTEP (build/cli/collstep), TRANSPORT (tcp, collstep's
# sockets; or ofi: libfabric tcp;ofi_rxm, whose read-based rendezvous
# halves each direction of an exchange: docs/validation.md), HOSTS (4), RANKS (2), RATE
# (400mbit), SLOW_RATE (200mbit), CAL_SIZES (1:64M), SIZES
# (64K,256K,1M,4M,16M,64M), ITERS (5), OUT (a directory to keep the
# platforms and the JSON in; default: a temporary one), NICE (-10: the
# ranks' nice level, so that other work on the machine delays them less),
# WAIT (auto: how idle ranks wait, validate --wait; auto yields here, 8
# ranks on 2 cores), AUTO_PROGRESS (ofi: 1 sets
# FI_OFI_RXM_DATA_AUTO_PROGRESS, libfabric's rxm moving data from a thread
# of its own; default 0, it did not change the errors).
# PRIO (none: what the cluster's shapers put ahead of the data queue,
# netns-cluster.sh --prio none|acks|control; none, the default, is one FIFO
# per shaped port, like tbf and like a switch port without priority
# classes, whose queue and burst stay at the cluster script's defaults;
# control sends acknowledgements and collstep's control messages first).
# The load average is sampled every 10 s while it runs (min / median /
# max printed at the end) and every row says how much CPU a rank used per
# run (cpu = CPU time / measured time, mean over the ranks).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../..
cs=${COLLSTEP:-$root/build/cli/collstep}
transport=${TRANSPORT:-tcp} H=${HOSTS:-4} R=${RANKS:-2}
rate=${RATE:-400mbit} slow=${SLOW_RATE:-200mbit}
cal_sizes=${CAL_SIZES:-1:64M} sizes=${SIZES:-64K,256K,1M,4M,16M,64M} iters=${ITERS:-5}
nice=${NICE:--10} wait=${WAIT:-auto} prio=${PRIO:-none}
export FI_OFI_RXM_DATA_AUTO_PROGRESS=${AUTO_PROGRESS:-0}
[ -x "$cs" ] || { echo "SKIP: collstep not built ('$cs')"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: not root"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
. "$root/scripts/tc-units.sh" # bits RATE: the cluster script's reading of a tc rate
rate_bits=$(bits "$rate") || { echo "RATE: expected a tc rate (200mbit, 1gbit), found '$rate'"; exit 2; }
slow_bits=$(bits "$slow") || { echo "SLOW_RATE: expected a tc rate (100mbit), found '$slow'"; exit 2; }
out=${OUT:-$(mktemp -d /tmp/bench_validate.XXXXXX)}
mkdir -p "$out"
case $transport in
ofi) tp=(--transport ofi --provider "tcp;ofi_rxm" --iface @ADDR@) ;;
tcp) tp=(--transport tcp --iface @ADDR@) ;;
*) echo "TRANSPORT: ofi or tcp"; exit 2 ;;
esac
cluster=("$root/scripts/netns-cluster.sh" -H "$H" -R "$R" --rate "$rate" --host-rate "$((H - 1))=$slow"
         --nice "$nice" --prio "$prio")
echo "== bench_validate: $H hosts x $R ranks, $rate per host link (host $((H - 1)): $slow), transport $transport"
echo "== ranks at nice $nice, --wait $wait, shapers --prio $prio, FI_OFI_RXM_DATA_AUTO_PROGRESS=$FI_OFI_RXM_DATA_AUTO_PROGRESS"
echo "== load before: $(cut -d' ' -f1-3 /proc/loadavg)  ($(nproc) CPUs), $(date -u '+%F %T') UTC"
( while :; do cut -d' ' -f1 /proc/loadavg >>"$out/load"; sleep 10; done ) &
sampler=$!
trap 'kill $sampler 2>/dev/null' EXIT

t0=$(date +%s)
"${cluster[@]}" -- "$cs" calibrate "${tp[@]}" --size "$cal_sizes" -o "$out/calibrated.xml" --force \
    --wait "$wait"
rc=$?
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || { echo "calibrate failed ($rc)"; exit 1; }
echo "== calibrate: $(( $(date +%s) - t0 )) s"

# the nominal platform: same hosts, links and routes, nominal figures
python3 - "$out/calibrated.xml" "$out/nominal.xml" "$rate_bits" "$slow_bits" <<'EOF'
import re, sys
src, dst = sys.argv[1:3]
rate, slow = float(sys.argv[3]) / 8, float(sys.argv[4]) / 8  # bytes per second
x = open(src).read()
x = re.sub(r"<!--(?!\s*collstep calibrate platform).*?-->\n", "", x, flags=re.S)
x = x.replace('<prop id="collstep_calib" value="1"/>',
              '<prop id="collstep_factors" value="nic:1:0.94,nic-slow:1:0.94,host:1:1,switch:1:1"/>')
x = re.sub(r'  *<link id="(duplex|port)-[^"]*"[^\n]*\n', "", x)
x = re.sub(r'<link_ctn id="(duplex|port)-[^"]*"/>', "", x)
def link(m):
    lid, tier = m.group(1), m.group(2)
    bw, lat = {"host": (10e9, 0.5e-6), "nic": (rate, 5e-6), "nic-slow": (slow, 5e-6),
               "switch": (None, 0)}.get(tier, (None, None))
    s = m.group(0)
    if bw is not None:
        s = re.sub(r'bandwidth="[^"]*"', 'bandwidth="%.6eBps"' % bw, s)
    if lat is not None:
        s = re.sub(r'latency="[^"]*"', 'latency="%.3fns"' % (lat * 1e9), s)
    return s
x = re.sub(r'<link id="([^"]*)"[^\n]*?<prop id="tier" value="([^"]*)"/></link>', link, x)
x = x.replace("<!-- collstep calibrate platform -->",
              "<!-- nominal platform of bench_validate.sh: shaped rates, preset latencies -->")
open(dst, "w").write(x)
EOF
"$cs" platform show "$out/nominal.xml" | sed -n '1,10p'

t0=$(date +%s)
runs=("allreduce ring,rhd,dbtree,hier" "reduce-scatter ring" "allgather ring")
i=0
for run in "${runs[@]}"; do
    set -- $run
    "${cluster[@]}" --quiet -- "$cs" validate "${tp[@]}" --coll "$1" --algo "$2" --size "$sizes" \
        --iters "$iters" --warmup 1 --timeout 120 --wait "$wait" --platform "$out/calibrated.xml" \
        --platform "$out/nominal.xml@calibrated" --platform "$out/nominal.xml@ideal" \
        --format json -o "$out/validate$i.json" --force
    rc=$?
    [ $rc = 0 ] || { echo "validate $run failed ($rc)"; exit 1; }
    i=$((i + 1))
done
echo "== validate: $(( $(date +%s) - t0 )) s"
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %T') UTC"
kill $sampler 2>/dev/null
python3 -c "
import statistics, sys
v = [float(x) for x in open(sys.argv[1]).read().split()]
print('== load average (1 min) during the run, sampled every 10 s: min %.1f median %.1f max %.1f (%d samples)' % (min(v), statistics.median(v), max(v), len(v)))" "$out/load"

python3 - "$out" "$i" <<'EOF'
import json, math, statistics, sys
out, n = sys.argv[1], int(sys.argv[2])
rows = []
for k in range(n):
    rows += json.load(open("%s/validate%d.json" % (out, k)))["rows"]
def label(r):
    return r["platform"].split("/")[-1] + "@" + r["model"]
plats = []
for r in rows:
    if label(r) not in plats:
        plats.append(label(r))
print("\n%-14s %-9s %10s %12s %5s %s" % ("coll", "algo", "size", "measured_us", "cpu",
      "  ".join("%24s" % p for p in plats)))
keys = []
for r in rows:
    k = (r["coll"], r["algo"], r["size_bytes"])
    if k not in keys:
        keys.append(k)
for k in keys:
    rs = {label(r): r for r in rows if (r["coll"], r["algo"], r["size_bytes"]) == k}
    m = list(rs.values())[0]["measured_us"]
    cpu = list(rs.values())[0].get("cpu_us", 0) / m if m > 0 else 0
    print("%-14s %-9s %10d %12.1f %5.2f %s" % (k[0], k[1], k[2], m, cpu, "  ".join(
        "%12.1f (%+7.1f%%)" % (rs[p]["predicted_us"], rs[p]["error_pct"]) for p in plats)))
def stats(sel):
    e = [abs(r["error_pct"]) for r in sel]
    if not e:
        return "n/a"
    g = math.exp(sum(math.log(max(x, 0.01)) for x in e) / len(e))
    return "median %5.1f %%  geomean %5.1f %%  worst %5.1f %%  (%d rows)" % (
        statistics.median(e), g, max(e), len(e))
for p in plats:
    big = [r for r in rows if label(r) == p and r["size_bytes"] >= 1 << 20]
    small = [r for r in rows if label(r) == p and r["size_bytes"] < 1 << 20]
    print("\n%s\n  >= 1 MiB: %s\n  <  1 MiB: %s" % (p, stats(big), stats(small)))
    for a in sorted(set((r["coll"], r["algo"]) for r in big)):
        print("    %-14s %-7s %s" % (a[0], a[1], stats([r for r in big if (r["coll"], r["algo"]) == a])))
cal = [r for r in rows if label(r) == "calibrated.xml@ideal" and r["size_bytes"] >= 1 << 20]
e = [abs(r["error_pct"]) for r in cal]
if e:
    ok = statistics.median(e) <= 3 and max(e) <= 8
    print("\ntarget (calibrated platform, >= 1 MiB: median <= 3 %%, worst <= 8 %%): %s" %
          ("met" if ok else "MISSED"))
EOF
echo "== outputs in $out"
