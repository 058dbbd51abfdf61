#!/usr/bin/env python3
"""check_trace_files.py COLLSTEP WORKDIR - the files of `collstep sim --trace`.

Runs `collstep sim --platform summit:nodes=4 --algo ring,hier --size 16M
--trace DIR --trace-links 4` and checks, with Python's json module as the
real JSON parser:
  - layout: DIR/index.csv and one DIR/<algo>-<bytes>/ per instance, no
    DIR.tmp.* left; a second run replaces DIR whole; a failing run (a trace
    directory that cannot be created) leaves nothing;
  - trace.json: Perfetto fields (ph, ts, pid, tid, name on every event; dur
    >= 0 on X; numeric args on C; M events name processes and threads), one
    track per rank, per-tier and per-link counter tracks;
  - summary.json: meta, per-tier figures in range, bottleneck = the tier with
    the highest busiest_link_mean_util (or "reduction" when the busiest
    rank's reductions kept its device busier), and it agrees with `collstep
    trace DIR --format csv`;
  - tiers.csv: per tier, sum(mean x bandwidth x D) = the tier's bytes (1%),
    every max <= 1; links.csv: peak <= 1, sum of bytes per tier = summary;
  - utilization.png: PNG magic bytes and a non-trivial size.
Prints "N passed, M failed" and exits 1 on failures.
"""
import csv
import glob
import json
import os
import shutil
import subprocess
import sys

passed = failed = 0


def check(cond, msg):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", msg, file=sys.stderr)


def run(args):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def check_instance(d, collstep):
    with open(os.path.join(d, "trace.json")) as f:
        tj = json.load(f)
    with open(os.path.join(d, "summary.json")) as f:
        sm = json.load(f)
    ev = tj["traceEvents"]
    check(len(ev) > 10, f"{d}: trace.json has events")
    kinds = {}
    for e in ev:
        for k in ("ph", "ts", "pid", "tid", "name"):
            if k not in e:
                check(False, f"{d}: event without {k}: {e}")
                return
        kinds.setdefault(e["ph"], []).append(e)
        if e["ph"] == "X":
            if not (isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0):
                check(False, f"{d}: X event without a valid dur: {e}")
                return
        if e["ph"] == "C":
            a = e.get("args")
            if not (isinstance(a, dict) and a and all(isinstance(v, (int, float)) for v in a.values())):
                check(False, f"{d}: C event without numeric args: {e}")
                return
    check(set(kinds) >= {"X", "C", "M"}, f"{d}: X, C and M events present: {sorted(kinds)}")
    ranks = sm["meta"]["ranks"]
    tids = {e["tid"] for e in kinds["X"]}
    check(len(tids) == ranks, f"{d}: one track per rank ({len(tids)} of {ranks})")
    names = {e["args"]["name"] for e in kinds["M"] if e["name"] == "thread_name"}
    check(len(names) == ranks, f"{d}: thread names for every rank")
    cnames = {e["name"] for e in kinds["C"]}
    tiers = [t["tier"] for t in sm["tiers"]]
    check(all(f"tier {t}" in cnames for t in tiers), f"{d}: a counter track per tier {cnames}")
    check(sum(1 for n in cnames if n.startswith("link ")) == 4, f"{d}: 4 link tracks")
    check(all(e["ts"] <= sm["meta"]["time_us"] + 1e-3 for e in ev), f"{d}: ts within the run")

    # summary figures
    for t in sm["tiers"]:
        for k in ("mean_util", "peak_util", "busy_fraction", "busiest_link_mean_util"):
            check(0 <= t[k] <= 1 + 1e-9, f"{d}: {t['tier']} {k} = {t[k]}")
        check(len(t["profile_busy"]) == sm["profile_slices"], f"{d}: profile length")
    best = max(sm["tiers"], key=lambda t: t["busiest_link_mean_util"])
    red = sm.get("reduction", {}).get("busy_fraction", -1)
    want = "reduction" if red > best["busiest_link_mean_util"] else best["tier"]
    check(sm["bottleneck_tier"] == want, f"{d}: bottleneck rule")

    # tiers.csv conservation and links.csv
    D = sm["resolution_us"]
    with open(os.path.join(d, "tiers.csv")) as f:
        rows = list(csv.DictReader(f))
    check(len(rows) == sm["buckets"], f"{d}: one row per bucket")
    for t in sm["tiers"]:
        name, bw = t["tier"], t["bandwidth_GBps"] * 1e9
        integral = sum(float(r[f"{name}_mean"]) for r in rows) * bw * D * 1e-6
        check(abs(integral - t["bytes"]) <= 0.01 * t["bytes"],
              f"{d}: tier {name} integral {integral:.0f} vs {t['bytes']:.0f}")
        check(max(float(r[f"{name}_max"]) for r in rows) <= 1 + 1e-9, f"{d}: {name} max <= 1")
    with open(os.path.join(d, "links.csv")) as f:
        links = list(csv.DictReader(f))
    check(all(float(l["peak_util"]) <= 1 + 1e-9 for l in links), f"{d}: link peaks <= 1")
    for t in sm["tiers"]:
        b = sum(int(l["bytes"]) for l in links if l["tier"] == t["tier"])
        check(abs(b - t["bytes"]) <= 1, f"{d}: links.csv bytes of {t['tier']}")

    with open(os.path.join(d, "utilization.png"), "rb") as f:
        png = f.read()
    check(png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10000, f"{d}: utilization.png is a PNG")
    return sm


def main():
    collstep, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out = os.path.join(work, "tr")
    args = [collstep, "sim", "--platform", "summit:nodes=4", "--algo", "ring,hier", "--size",
            "16M", "--trace", out, "--trace-links", "4"]
    for rnd in range(2):
        r = run(args)
        check(r.returncode == 0, f"collstep sim --trace: {r.returncode} {r.stderr}")
        check(not glob.glob(out + ".tmp.*") and not glob.glob(out + ".old.*"),
              "no temporary directories left")
    with open(os.path.join(out, "index.csv")) as f:
        index = list(csv.DictReader(f))
    check([r["algo"] for r in index] == ["ring", "hier"], f"index.csv lists ring, hier: {index}")
    summaries = {}
    for row in index:
        summaries[row["algo"]] = check_instance(os.path.join(out, row["dir"]), collstep)
        check(summaries[row["algo"]]["bottleneck_tier"] == row["bottleneck"], "index bottleneck")

    r = run([collstep, "trace", out, "--format", "csv"])
    check(r.returncode == 0, f"collstep trace: {r.stderr}")
    rows = list(csv.DictReader(r.stdout.splitlines()))
    for row in rows:
        sm = summaries[row["algo"]]
        if row["bottleneck"] == "1":
            check(row["tier"] == sm["bottleneck_tier"], f"collstep trace bottleneck {row['tier']}")
        if row["tier"] == "reduction":  # the busiest rank's device, not a tier of links
            check(abs(float(row["busy_fraction"]) - sm["reduction"]["busy_fraction"]) < 1e-3,
                  "collstep trace reduction busy_fraction")
            continue
        t = next(t for t in sm["tiers"] if t["tier"] == row["tier"])
        check(abs(float(row["mean_util"]) - t["mean_util"]) < 1e-3,
              f"collstep trace mean_util of {row['tier']}")
        check(abs(float(row["busy_fraction"]) - t["busy_fraction"]) < 1e-3,
              f"collstep trace busy_fraction of {row['tier']}")
    r = run([collstep, "trace", out, "--format", "json", "--links", "3"])
    check(r.returncode == 0 and len(json.loads(r.stdout)) == 2, "collstep trace --format json")
    r = run([collstep, "trace", os.path.join(work, "nothing")])
    check(r.returncode == 2, "collstep trace on a missing directory exits 2")

    bad = os.path.join(work, "missing", "sub", "tr")
    r = run(args[:-4] + ["--trace", bad])
    check(r.returncode != 0 and not os.path.exists(os.path.dirname(bad)),
          "a trace directory that cannot be created fails and leaves nothing")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
