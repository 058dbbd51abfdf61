#!/usr/bin/env bash
# bench_published.sh [COLLSTEP] - published nccl-tests measurements against
# collstep's prediction of them: `collstep sim --model nccl --algo nccl` (per
# size the algorithm, protocol and channels NCCL's tuner picks, simulated as
# a collstep schedule on the preset's links), allreduce, busbw in GB/s.
#
# Published rows (nccl-tests all_reduce_perf, in-place busbw, NCCL defaults):
#   8 x H200, one node, NCCL 2.20.5 (Azure/AI-benchmarking-guide,
#     Azure_Results/ND_H200_v5_results.md)
#   GB200 NVL72, one rack of 72 GPUs, NCCL 2.26.2 (coreweave/nccl-tests,
#     README "Expected Performance")
#   4 x GB200 of one host, NCCL_ALGO=Ring, NCCL 2.25.1 (Azure/AI-benchmarking-
#     guide, ND_GB200_v6_results.md)
#
# The prediction uses the model's default constants (the newest NCCL in its
# table); the column "at vN" is the same prediction with the constants of
# the NCCL version the measurement was made with.  Targets: |error| <= 10 %
# from 16 MB up, <= 25 % from 64 KB to 8 MB; smaller sizes have none.
# H200=, GB200= override the platforms (a preset spec or a SimGrid XML).
set -u
collstep=${1:-build/cli/collstep}
H200=${H200:-hgx-h200}
GB200=${GB200:-gb200-nvl72}
command -v python3 >/dev/null || { echo "bench_published.sh: needs python3" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# label | platform | extra options | NCCL version measured | size=busbw ...
rows=(
  "8xH200|$H200||2.20.5|1K=0.06 64K=3.72 1M=52.96 16M=240.41 128M=412.45 1G=467.58 8G=479.98"
  "GB200-NVL72|$GB200||2.26.2|512M=586.06 1G=681.17 2G=757.78 4G=839.16 8G=834.57"
  "4xGB200-Ring|$GB200|--ranks 4 --nccl-algo Ring|2.25.1|1M=80.48 16M=331.09 1G=646.87 8G=679.61"
)

echo "# collstep sim --model nccl --algo nccl, allreduce, against published nccl-tests busbw" \
     "($(nproc) cores)"
printf "%-14s %6s  %-22s %9s %9s %9s %8s  %s\n" machine size "NCCL's choice" predicted "at vN" \
       published error target
for row in "${rows[@]}"; do
  IFS='|' read -r label plat extra ver pairs <<<"$row"
  sizes=$(for p in $pairs; do printf "%s," "${p%%=*}"; done)
  sizes=${sizes%,}
  ok=1
  for v in default "$ver"; do
    vopt=()
    [ "$v" != default ] && vopt=(--nccl-version "$v")
    # shellcheck disable=SC2086
    if ! "$collstep" sim --platform "$plat" --model nccl --algo nccl $extra "${vopt[@]}" \
         --size "$sizes" --format csv >"$tmp/$v.csv" 2>"$tmp/$v.err"; then
      echo "$label: collstep sim failed: $(tail -2 "$tmp/$v.err")"
      ok=0
      break
    fi
  done
  [ $ok = 1 ] || continue
  python3 - "$tmp/default.csv" "$tmp/$ver.csv" "$label" "$ver" $pairs <<'PY'
import csv, sys
def read(path):
    rows = {}
    for r in csv.DictReader(open(path)):
        rows[int(r["size_bytes"])] = r
    return rows
units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
d, v = read(sys.argv[1]), read(sys.argv[2])
label, ver = sys.argv[3], sys.argv[4]
for pair in sys.argv[5:]:
    s, pub = pair.split("=")
    want = int(s[:-1]) * units[s[-1]]
    # the size as simulated: the sweep rounds to whole elements per rank
    key = min(d, key=lambda b: abs(b - want))
    r = d[key]
    pred, pub = float(r["busbw_GBps"]), float(pub)
    err = (pred - pub) / pub * 100
    band = 10 if want >= 16 << 20 else 25 if want >= 64 << 10 else None
    verdict = "-" if band is None else ("ok" if abs(err) <= band else "MISS")
    choice = r["model"].split(":", 1)[-1] + " " + r["algo"]
    print("%-14s %6s  %-22s %9.2f %9.2f %9.2f %+7.1f%%  %s" % (
        label, s, choice[:22], pred, float(v[min(v, key=lambda b: abs(b - want))]["busbw_GBps"]),
        pub, err, verdict if band is None else "%s (%d%%)" % (verdict, band)))
PY
done
