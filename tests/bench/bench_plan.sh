#!/usr/bin/env bash
# bench_plan.sh [COLLSTEP] - the figures of `collstep plan` (docs/planner.md):
#
#   1. Summit 1536 GPUs (--platform summit), allreduce, 1 MiB to 1 GiB: one
#      plan per size with --budget 60 (BUDGET) and --jobs 2 (JOBS); per size
#      the plan's choice against the best of the registry's algorithms with
#      their default parameters (simulated where the budget allowed, else the
#      cost model's figure, marked "model"), the bound (bytes that must leave
#      a node over its NICs), wall and CPU seconds of the plan.
#   2. One DGX-1 (8 V100, hybrid cube mesh), allreduce 1 GiB: the plan's
#      choice against the links' bound of the plan, the best single ring in
#      the fast-ring order against the 50 GB/s
#      NVLink bound of one ring, and the ring in the platform's order.
# SIZES overrides the sizes ("1M 100M"); PLATFORM the platform.
set -u
collstep=${1:-build/cli/collstep}
BUDGET=${BUDGET:-60}
JOBS=${JOBS:-2}
PLATFORM=${PLATFORM:-summit}
SIZES=${SIZES:-"1M 2M 4M 8M 16M 32M 64M 100M 128M 256M 512M 1G"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null || { echo "bench_plan.sh: needs python3" >&2; exit 77; }

echo "# collstep plan --platform $PLATFORM, allreduce, --budget $BUDGET --jobs $JOBS per size" \
     "($(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg) at the start)"
first=1
for s in $SIZES; do
  /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$collstep" plan --platform "$PLATFORM" --size "$s" \
    --budget "$BUDGET" --jobs "$JOBS" --format json >"$tmp/json" 2>"$tmp/err"
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "$s: collstep plan failed (exit $rc): $(tail -2 "$tmp/err")"
    continue
  fi
  python3 - "$tmp/json" "$tmp/time" "$s" "$first" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
wall, usr, sysc = (float(x) for x in open(sys.argv[2]).read().split()[-3:])
if sys.argv[4] == "1":
    for t in d["tiers"]:
        g = "%5d x %-5d ranks" % (t["groups"], t["group"]) if t["group"] else "groups of unequal size"
        print("#   tier %-8s %-24s %6.1f GB/s per flow%s" % (
            t["name"], g, t["flow_GBps"],
            "  %5.1f GB/s out of a group" % t["group_egress_GBps"] if t["group_egress_GBps"] > 0 else ""))
    print("#   factorizations: " + " ".join(d["factorizations"]))
    print("#   bound: " + d["bound"])
    print("%6s  %-42s %10s %5s  %-10s %10s %5s %7s  %10s %6s %6s %5s" % (
        "size", "plan's choice", "time_us", "from", "best dflt", "time_us", "from", "speedup",
        "bound_us", "wall_s", "cpu_s", "sims"))
sz = d["sizes"][0]
rk = sz["ranking"]
ch = [r for r in rk if r.get("chosen")][0]
defs = [r for r in rk if r.get("registry_default") and r["order"] == "platform"]
best = min(defs, key=lambda r: r["time_us"])
lab = ch["algo"] + (" " + ch["params"] if ch["params"] else "") + \
      ("" if ch["order"] == "platform" else " [" + ch["order"] + "]")
print("%6s  %-42s %10.1f %5s  %-10s %10.1f %5s %7.2f  %10.1f %6.1f %6.1f %5d" % (
    sys.argv[3], lab[:42], ch["time_us"], ch["source"], best["algo"], best["time_us"],
    best["source"], best["time_us"] / ch["time_us"], sz["bound_us"], wall, usr + sysc,
    d["simulations"]))
PY
  first=0
done

echo
echo "# DGX-1 (dgx1-v100-ib100:nodes=1), allreduce 1 GiB"
"$collstep" plan --platform dgx1-v100-ib100:nodes=1 --size 1G --jobs "$JOBS" --show 0 --all \
  --format json >"$tmp/dgx" 2>/dev/null
python3 - "$tmp/dgx" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for o in d["orders"]:
    print("#   order %-10s slowest ring route %5.1f GB/s  %s" % (o["name"], o["ring_slowest_GBps"], o["note"]))
rk = d["sizes"][0]["ranking"]
ch = [r for r in rk if r.get("chosen")][0]
def best(pred):
    c = [r for r in rk if pred(r) and r["source"] == "sim"]
    return min(c, key=lambda r: r["time_us"]) if c else None
one = best(lambda r: r["algo"] == "ring" and "channels" not in r["params"] and r["order"] == "fast-ring")
naive = best(lambda r: r["algo"] == "ring" and r["params"] == "" and r["order"] == "platform")
sz = d["sizes"][0]
print("  plan's choice  %-34s %-10s busbw %6.2f GB/s = %.1f %% of the links' bound (%s)" % (
    ch["algo"] + " " + ch["params"], ch["order"], ch["busbw_GBps"], 100 * sz["bound_us"] / ch["time_us"],
    d["bound"]))
if one:
    print("  one ring       %-34s %-10s busbw %6.2f GB/s = %.1f %% of the 50 GB/s NVLink bound of one ring" % (
        one["algo"] + " " + (one["params"] or "(defaults)"), one["order"], one["busbw_GBps"], 2 * one["busbw_GBps"]))
if naive:
    print("  platform order %-34s %-10s busbw %6.2f GB/s" % ("ring (defaults)", naive["order"], naive["busbw_GBps"]))
PY
