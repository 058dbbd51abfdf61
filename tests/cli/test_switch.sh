#!/usr/bin/env bash
# Schedules with switch steps (in-network reduction, issue 31):
# `collstep run` refuses them before any transport opens (exit 2, naming
# the step and the transport); `collstep sim` simulates them where a switch
# that reduces serves the group (summit with sharp=1, an NVSwitch file) and
# refuses them (exit 2, naming the ranks, or the type and operator the
# switch does not reduce) elsewhere; `collstep export msccl` refuses them
# (exit 2, naming the step; no file).
#
#   test_switch.sh COLLSTEP
. "$(dirname "$0")/common.sh"
f=$tmp/sw.sched
cat > "$f" <<'SCHED'
collstep-schedule 2
collective allreduce ranks 1 chunks 2
group g ranks 0
rank 0
  0: copy in[0:1] -> out[0:1]
  1: switch allreduce g in[1:2] -> out[1:2]
end
SCHED
"$cs" verify "$f" >/dev/null && ok || bad "the schedule does not verify"

for tp in shm tcp; do
  port=$((port + 1))
  env RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    "$cs" run --transport $tp --iters 1 --warmup 0 --schedule "$f" --size 4K >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc = 2 ] && grep -q "^collstep run: rank 0 step 1: a switch step (in-network reduction) cannot run on transport $tp: no switch reduces here$" "$tmp/err" &&
    ! grep -q . "$tmp/out" && ok || { bad "run --transport $tp: exit $rc"; cat "$tmp/err"; }
done

if "$cs" sim --help >/dev/null 2>&1; then
  "$cs" sim --platform summit:nodes=1 --schedule "$f" --size 4K >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc = 2 ] && grep -q "no switch that reduces serves ranks 0 (group g, hosts n0-g0): platform summit:nodes=1 has no zone with a reduce property" "$tmp/err" &&
    ok || { bad "sim without a reducing switch: exit $rc"; cat "$tmp/err"; }
  "$cs" sim --platform summit:nodes=1,sharp=1 --schedule "$f" --size 4K --format csv >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc = 0 ] && grep -q '^"' "$tmp/out" && ok || { bad "sim with sharp=1: exit $rc"; cat "$tmp/err"; }
  "$cs" sim --platform summit:nodes=1,sharp=1 --schedule "$f" --size 4K --op prod >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc = 2 ] && grep -q "switch r0-leaf (sharp, zone r0) does not reduce float with prod" "$tmp/err" &&
    ok || { bad "sim of prod on SHARP: exit $rc"; cat "$tmp/err"; }
  nvls=$(dirname "$0")/../text/golden/allreduce_nvls_4ranks.sched
  hgx=$(dirname "$0")/../sim/hgx8_nvls.xml
  "$cs" sim --platform "$hgx" --schedule "$nvls" --size 1M --op max >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc = 2 ] && grep -q "switch nvswitch (nvls, zone hgx) does not reduce float with max" "$tmp/err" &&
    ok || { bad "sim of float max on NVLS: exit $rc"; cat "$tmp/err"; }
  "$cs" sim --platform "$hgx" --schedule "$nvls" --size 1M --op max --dtype half >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc = 0 ] && ok || { bad "sim of half max on NVLS: exit $rc"; cat "$tmp/err"; }
  # a zone's reduce properties are checked at their line
  sed 's/<prop id="reduce" value="nvls"\/>/<prop id="reduce" value="nvlink"\/>/' "$hgx" >"$tmp/bad.xml"
  "$cs" platform show "$tmp/bad.xml" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc = 2 ] && grep -q "bad.xml:10: zone hgx: expected reduce = nvls or sharp, found 'nvlink'" "$tmp/err" &&
    ok || { bad "bad reduce value: exit $rc"; cat "$tmp/err"; }
  sed 's/<router id="nvswitch"\/>/<router id="nvswitch"\/><router id="other"\/>/' "$hgx" >"$tmp/bad2.xml"
  "$cs" platform show "$tmp/bad2.xml" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc = 2 ] && grep -q "bad2.xml:10: zone hgx reduces (reduce=nvls) but has 2 routers" "$tmp/err" &&
    ok || { bad "two routers: exit $rc"; cat "$tmp/err"; }
  # traces: the operations on the switch's track, its bytes and work in
  # the summary, its traffic on the members' links (S + S/n up per member)
  if "$cs" sim --platform "$hgx" --schedule "$nvls" --size 4M --trace "$tmp/tr" >"$tmp/out" 2>"$tmp/err" &&
     "$cs" trace "$tmp/tr" >"$tmp/sum" 2>>"$tmp/err"; then
    grep -q "^  switch       nvswitch: 8 operations, 20971520 bytes up, 16777216 down" "$tmp/sum" &&
      grep -q "^  nvlink-g0_UP  *nvlink  *5242880 " "$tmp/sum" &&
      [ "$(grep -c '"cat":"switch"' "$tmp/tr/trace.json")" = 8 ] &&
      grep -q ',switch,0,' "$tmp/tr/steps.csv" && ok || { bad "trace of switch operations"; cat "$tmp/sum"; }
  else
    bad "sim --trace of switch operations"; cat "$tmp/err"
  fi
fi

# SHARP's pieces pipeline: a member sends its parts up one operation after
# the other, so a piece goes up while the one before comes down; on 2 HGX
# nodes (every rank's NIC at 50 GB/s to the switch) 64 pieces of 64 MiB take
# S / 50 GB/s x (1 + 1/64) = 1363 us (one piece: up, then down, 2 x 1342),
# the same on both engines
for e in dag actors; do
  "$cs" sim --platform hgx-h100:nodes=2,sharp=1 --algo sharp --param nchunks=64 --size 64M \
      --engine $e --format csv >"$tmp/sharp-$e.csv" 2>"$tmp/err" || bad "sharp on $e: $(cat "$tmp/err")"
  python3 - "$tmp/sharp-$e.csv" <<'PY' && ok || bad "sharp's pieces do not pipeline on $e"
import csv, sys
t = float(next(csv.DictReader(open(sys.argv[1])))["time_us"])
want = 67108864 / 50e3 * (1 + 1 / 64)
assert abs(t / want - 1) < 0.03, (t, want)
PY
done
cmp -s <(cut -d, -f1-8 "$tmp/sharp-dag.csv") <(cut -d, -f1-8 "$tmp/sharp-actors.csv") && ok ||
  bad "sharp: the engines differ"

if "$cs" export --help >/dev/null 2>&1; then
  "$cs" export msccl "$f" -o "$tmp/x.xml" 2>"$tmp/err"
  rc=$?
  [ $rc = 2 ] && grep -q "^collstep export: rank 0 step 1: a switch step (in-network reduction) cannot be exported: MSCCL's XML has no switch step$" "$tmp/err" &&
    [ ! -e "$tmp/x.xml" ] && ok || { bad "export: exit $rc"; cat "$tmp/err"; }
fi
finish
