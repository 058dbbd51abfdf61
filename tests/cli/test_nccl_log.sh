#!/usr/bin/env bash
# test_nccl_log.sh COLLSTEP LOGDIR - `collstep import nccl-tests` (issue 33):
# the tables `collstep sim --format nccl-tests` writes read back with the
# sim's own numbers (its CSV of the same run), several files and tables at
# once, the public logs of LOGDIR, and malformed input refused with exit 2 at
# its line and column.
. "$(dirname "$0")/common.sh"
logs=$2
cd "$tmp" || exit 1

# --- sim's tables read back ----------------------------------------------------------
if "$cs" sim --help >/dev/null 2>&1; then
    for ca in allreduce:ring allgather:ring reduce-scatter:ring broadcast:chain alltoall:pairwise; do
        coll=${ca%%:*}
        args=(--platform summit:nodes=2 --coll "$coll" --algo "${ca#*:}" --size 1M:64M:4)
        "$cs" sim "${args[@]}" --format nccl-tests -o "$coll.log" 2>/dev/null &&
            "$cs" sim "${args[@]}" --format csv -o "$coll.csv" 2>/dev/null || { bad "sim $coll"; continue; }
        "$cs" import nccl-tests "$coll.log" --format json >"$coll.json" || { bad "import $coll"; continue; }
        python3 - "$coll" "$coll.json" "$coll.csv" <<'PY' && ok || bad "$coll: read back differs"
import csv, json, sys
coll, got, want = sys.argv[1], json.load(open(sys.argv[2])), list(csv.DictReader(open(sys.argv[3])))
names = {"allreduce": "all_reduce", "allgather": "all_gather", "reduce-scatter": "reduce_scatter",
         "broadcast": "broadcast", "alltoall": "alltoall"}
assert len(got) == 1, len(got)
t = got[0]
assert t["coll"] == names[coll] and t["coll_from"] == "program", t["coll"]
assert t["ranks"] == 12 and t["nodes"] == 2 and t["time_ms"] == 0, (t["ranks"], t["nodes"])
assert len(t["rows"]) == len(want) == 4, len(t["rows"])
for r, w in zip(t["rows"], want):
    assert r["size"] == int(w["size_bytes"]) and r["count"] == int(w["count"]), (r["size"], w)
    # nccl-tests narrows times to 7 characters, bandwidths to 6
    us, bw = float(w["time_us"]), float(w["busbw_GBps"])
    assert abs(r["out_of_place"]["time_us"] - us) <= max(0.006, us * 5e-6), (r, us)
    assert abs(r["out_of_place"]["busbw_GBps"] - bw) <= 0.0051, (r, bw)
    assert r["in_place"]["time_us"] == r["out_of_place"]["time_us"]
PY
    done
    # two algorithms: two tables in one file, and two files at once
    "$cs" sim --platform summit:nodes=1 --algo ring,rd --size 1M --format nccl-tests -o two.log 2>/dev/null
    n=$("$cs" import nccl-tests two.log allreduce.log --format json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
    [ "$n" = 3 ] && ok || bad "two files: $n tables, want 3"
    "$cs" import nccl-tests two.log >two.out && grep -q "^two.log: 2 tables" two.out &&
        grep -q "^table 2 (lines .*): all_reduce (from the program), program all_reduce_perf" two.out &&
        grep -q "ranks 6 on 1 node: n0 (6)" two.out && ok || bad "table view: $(head -5 two.out)"
fi

# --- public logs ---------------------------------------------------------------------
"$cs" import nccl-tests "$logs/a3mega-h100-2nodes.md" >a3.out &&
    grep -q "ranks 16 on 2 nodes: ztan-mig-235z (8), ztan-mig-gq73 (8)" a3.out &&
    grep -q "  8589934592      47535.00    338.82      47743.00    337.35" a3.out && ok ||
    bad "a3mega: $(cat a3.out | head -8)"
"$cs" import nccl-tests "$logs/dcslin-rtx2080ti-ms.log" >ms.out &&
    grep -q "time printed in ms" ms.out && grep -q "NCCL 2.4 (compiled with)" ms.out &&
    grep -q "     1048576        293.00      3.58        294.00      3.57" ms.out && ok ||
    bad "ms log: $(head -8 ms.out)"

# a log whose run was cut inside a row: the rows above it read, the cut line said
# (the first 29 lines whole, then line 30 up to its first time column)
{ head -n 29 "$logs/issue309-h100-2nodes.log"; sed -n 30p "$logs/issue309-h100-2nodes.log" | cut -c1-62 | tr -d '\n'; } >cut.log
"$cs" import nccl-tests cut.log --format json >cut.json 2>err &&
    grep -q "^collstep import: cut.log:30: the table's last row does not read whole .*(read whole it says: cut.log:30:[0-9]*: expected" err &&
    python3 -c 'import json,sys; t=json.load(open("cut.json")); assert len(t) == 1 and len(t[0]["rows"]) == 6, t' &&
    ok || bad "cut log: $(cat err)"

# a job killed inside a row, the scheduler's line glued to it: the rows above read
{ head -n 29 "$logs/issue309-h100-2nodes.log"; sed -n 30p "$logs/issue309-h100-2nodes.log" | cut -c1-62 | tr -d '\n'
  echo "slurmstepd: error: *** JOB 1234 ON n1 CANCELLED AT 2026-01-01T00:00:00 DUE TO TIME LIMIT ***"; } >killed.log
"$cs" import nccl-tests killed.log --format json >killed.json 2>err &&
    grep -q "^collstep import: killed.log:30: the table's last row does not read whole .*found 'slurmstepd:')" err &&
    python3 -c 'import json; t = json.load(open("killed.json")); assert len(t[0]["rows"]) == 6, t' &&
    ok || bad "killed job: $(cat err)"
# the same row in the middle of a table (rows after it) is an error at its line
{ head -n 29 "$logs/issue309-h100-2nodes.log"; sed -n 30p "$logs/issue309-h100-2nodes.log" | cut -c1-62; echo
  sed -n '31,$p' "$logs/issue309-h100-2nodes.log"; } >mid.log
"$cs" import nccl-tests mid.log >/dev/null 2>err; rc=$?
[ $rc = 2 ] && grep -q "^collstep import: mid.log:30:[0-9]*: expected an algorithm bandwidth" err &&
    ok || bad "a bad row in the middle: rc $rc $(cat err)"
# UTF-16 without a byte-order mark is named
iconv -f UTF-8 -t UTF-16LE mid.log >u16.log
"$cs" import nccl-tests u16.log >/dev/null 2>err; rc=$?
[ $rc = 2 ] && grep -q "u16.log:1: the file is a third or more NUL bytes: UTF-16 text" err && ok ||
    bad "UTF-16LE: rc $rc $(cat err)"

# a log without a device block says so, not 'ranks 0 on 0 nodes'
grep -v "^#  Rank" "$logs/issue309-h100-2nodes.log" >nodev.log
"$cs" import nccl-tests nodev.log >nodev.out 2>&1 &&
    grep -q "^  ranks: no device block (validate and calibrate take the node of each rank from --groups FILE)" nodev.out &&
    ! grep -q "ranks 0 on 0" nodev.out && ok || bad "no device block: $(grep ranks nodev.out)"

# --- refusals ------------------------------------------------------------------------
# (closing lines after the row: the run went on, so the row is wrong, not cut)
printf '# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor)\n#  size count type time algbw busbw\n  8  2  float  1.0  x  0\n# Out of bounds values : 0 OK\n' >bad.log
"$cs" import nccl-tests bad.log >/dev/null 2>err; rc=$?
[ $rc = 2 ] && grep -q "^collstep import: bad.log:3:21: expected an algorithm bandwidth, found 'x'" err &&
    ok || bad "malformed: rc $rc, $(cat err)"
"$cs" import nccl-tests missing.log >/dev/null 2>err; rc=$?
[ $rc = 2 ] && grep -q "missing.log: No such file or directory" err && ok || bad "missing file: rc $rc"
mkdir -p adir.log
"$cs" import nccl-tests adir.log >/dev/null 2>err; rc=$?
[ $rc = 2 ] && grep -q "adir.log: Is a directory" err && ok || bad "a directory: rc $rc $(cat err)"
"$cs" import nccl-tests --format csv bad.log >/dev/null 2>err; rc=$?
[ $rc = 2 ] && grep -q "expected table or json" err && ok || bad "--format csv: rc $rc"
"$cs" import nccl-tests >/dev/null 2>&1; [ $? = 2 ] && ok || bad "no log: not exit 2"
"$cs" import nccl-tests --help | grep -q "^usage: collstep import nccl-tests LOG" && ok || bad "--help"
# a log that does not read leaves no report of the others (no partial JSON)
"$cs" import nccl-tests --format json "$logs/perfkit-k80-2hosts.log" bad.log >out 2>err; rc=$?
[ $rc = 2 ] && [ ! -s out ] && ok || bad "partial output on an error: rc $rc, $(wc -c <out) bytes"
# a sweep cut short of its maxBytes, and a table without rows, are said
printf '#  Rank  0 Group  0 Pid 1 on a device  0 [0x1b] NVIDIA H100 80GB HBM3\n#  Rank  1 Group  0 Pid 2 on b device  0 [0x1b] NVIDIA H100 80GB HBM3\n# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n     1048576        262144     float     sum      -1    50.00   20.97   20.97      0    50.00   20.97   20.97      0\n' >short.log
"$cs" import nccl-tests short.log >/dev/null 2>err
grep -q "short.log:5: the table ends at 1 MiB, short of its maxBytes (4 MiB)" err && ok ||
    bad "cut sweep not said: $(cat err)"
# a sweep whose next size is past maxBytes ended where it should: not cut
sed 's/maxBytes 4194304 step: 2(factor)/maxBytes 1500000 step: 2(factor)/' short.log >ended.log
"$cs" import nccl-tests ended.log >/dev/null 2>err
! grep -q "short of its maxBytes" err && ok || bad "a whole sweep said cut: $(cat err)"
head -4 short.log >norows.log
"$cs" import nccl-tests norows.log >/dev/null 2>err
grep -q "norows.log:.*the table has no rows (the run stopped before its first size)" err && ok ||
    bad "table without rows not said: $(cat err)"
finish
