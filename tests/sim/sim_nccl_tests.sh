#!/usr/bin/env bash
# sim_nccl_tests.sh COLLSTEP - `collstep sim --format nccl-tests` against
# tables written by hand in the layout of nccl-tests 2.19.6, compared byte
# for byte (column widths, blanks at line ends, the closing empty line).
#
# pair_1gbps.xml: two devices, one wire of B = 1 GB/s per direction, no
# latency, reductions at G = 1 GB/s, so for S bytes on 2 ranks:
#   allreduce ring  S/2/B (reduce-scatter) + S/2/G (its reduction) + S/2/B
#                   (allgather) = 1.5 S/1e9 s: 1572.864 us at 1 MiB, algbw
#                   0.67, busbw x 2(2-1)/2 = 0.67
#   allreduce rd    S/B + S/G = 2 S/1e9 s: 2097.152 us at 1 MiB, 0.50, 0.50
#   broadcast chain 8 chunks one after the other on the wire: S/B: 1048.576
#                   us at 1 MiB, algbw = busbw = 1.00
# 16 MiB times (25165.824, 33554.432 us) do not fit "%7.2f": nccl-tests
# prints them "%7.1f".  Sizes 1M:16M:4 are nccl-tests' -b 1M -e 16M -f 4;
# 1M,2M,3M its -b 1M -e 3M -i 1M.  The schedules are verified (validation 1,
# #wrong 0) except under --no-verify (validation 0, #wrong N/A).
. "$(dirname "$0")/../cli/usage_checks.sh"
here=$(cd "$(dirname "$0")" && pwd)
bad() { expect_usage sim "$@"; } # EXPECTED-TEXT ARGS...

cp "$here/pair_1gbps.xml" "$tmp/pair.xml"
cd "$tmp" || exit 1
"$collstep" sim --platform pair.xml --algo ring,rd --size 1M:16M:4 --format nccl-tests \
  >allreduce.out 2>err
rc=$?; check "allreduce exits 0 ($(head -c 300 err))" test $rc -eq 0
check "allreduce ring and rd: the tables written by hand" \
  diff "$here/nccl_tests_allreduce.txt" allreduce.out
"$collstep" sim --platform pair.xml --coll broadcast --algo chain --root 1 --no-verify \
  --size 1M,2M,3M --format nccl-tests -o broadcast.out 2>err
rc=$?; check "broadcast -o exits 0 ($(head -c 300 err))" test $rc -eq 0
check "broadcast root 1, not validated, step in bytes: the table written by hand" \
  diff "$here/nccl_tests_broadcast.txt" broadcast.out
# a table collstep wrote is results: -o replaces it
"$collstep" sim --platform pair.xml --coll broadcast --algo chain --root 1 --no-verify \
  --size 1M,2M,3M --format nccl-tests -o broadcast.out 2>err
rc=$?; check "-o replaces its own nccl-tests table ($(head -c 300 err))" test $rc -eq 0

# two ranks on each host (--map): devices numbered within their host
printf 'alpha\nalpha\nbeta\nbeta\n' >map
"$collstep" sim --platform pair.xml --algo ring --ranks 4 --map map --size 1M \
  --format nccl-tests >map.out 2>err
rc=$?; check "mapped run exits 0 ($(head -c 300 err))" test $rc -eq 0
cat >map.want <<'TXT'
#  Rank  0 Group  0 Pid      0 on      alpha device  0 [0000:00:00] Test GPU 1GBps
#  Rank  1 Group  0 Pid      0 on      alpha device  1 [0000:00:00] Test GPU 1GBps
#  Rank  2 Group  0 Pid      0 on       beta device  0 [0000:00:00] simulated device
#  Rank  3 Group  0 Pid      0 on       beta device  1 [0000:00:00] simulated device
TXT
grep '^#  Rank' map.out >map.got
check "devices of a map" diff map.want map.got
check "one size: nccl-tests' default step" \
  grep -q '^# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1048576 step: 1048576(bytes) ' map.out
# a preset: its GPU as the driver names it
"$collstep" sim --platform x86-p100-pcie-10gbe:nodes=2 --algo ring --size 1M \
  --format nccl-tests >preset.out 2>err
check "preset: 8 devices named as the driver names the GPU" \
  test "$(grep -c '^#  Rank .* \[0000:00:00\] Tesla P100-PCIE-16GB$' preset.out)" -eq 8
"$collstep" sim --platform hgx-h100:nodes=1,gpu=h200 --algo ring --size 1M \
  --format nccl-tests >preset2.out 2>err
check "preset: its gpu= parameter's GPU" \
  test "$(grep -c '^#  Rank .* \[0000:00:00\] NVIDIA H200$' preset2.out)" -eq 8

# a preset's GPUs as nccl-tests names them: their node and their number there
# (hosts n0-g3 -> "on n0 device 3"), read back as 2 nodes, and a rank map
# that permutes the GPUs predicted back exactly
"$collstep" sim --platform summit:nodes=2 --coll allreduce --algo ring --size 1M \
  --format nccl-tests >preset.out 2>err
check "a preset's device block names nodes ($(grep -m1 Rank preset.out))" \
  grep -q "^#  Rank  3 Group  0 Pid      0 on         n0 device  3 " preset.out
check "and rank 6 is on n1 device 0" grep -q "^#  Rank  6 Group  0 Pid      0 on         n1 device  0 " preset.out
"$collstep" import nccl-tests preset.out >imp 2>&1
check "import reads 2 nodes ($(grep ranks imp))" grep -q "ranks 12 on 2 nodes: n0 (6), n1 (6)" imp
printf 'n1-g2\nn1-g0\nn1-g1\nn1-g3\nn1-g4\nn1-g5\nn0-g5\nn0-g4\nn0-g3\nn0-g2\nn0-g1\nn0-g0\n' >perm.txt
"$collstep" sim --platform summit:nodes=2 --map perm.txt --coll allreduce --algo ring --size 1M:4M:4 \
  --format nccl-tests >perm.out 2>err
check "a permuted map: rank 0 on n1 device 2" grep -q "^#  Rank  0 Group  0 Pid      0 on         n1 device  2 " perm.out
"$collstep" validate --nccl-tests perm.out --platform summit:nodes=2 --format csv -o perm.csv 2>err >/dev/null
check "the permuted log predicted back exactly ($(tail -2 err))" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and all(abs(float(r["error_pct"])) < 0.5 for r in rows), rows
' perm.csv

# what the layout cannot say
bad "not a sweep nccl-tests runs" --platform pair.xml --algo ring --size 1M,4M,2M \
  --format nccl-tests
bad "not a sweep nccl-tests runs" --platform pair.xml --algo ring --size 1M,2M,8M \
  --format nccl-tests
bad "no comparison view" --platform pair.xml --algo ring,rd --size 1M --format nccl-tests \
  --compare
bad "table, csv, json or nccl-tests" --platform pair.xml --algo ring --size 1M --format nccl
expect_usage validate "for sim, plan and run" --platform pair.xml --coll allreduce --algo ring --size 1M --format nccl-tests
"$collstep" sim --help >help
check "help names the layout" grep -q "nccl-tests 2.19.6" help

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
