#!/usr/bin/env bash
# Hand-made faults in switch steps (tests/verify/switch/*.sched): `collstep
# verify` must refuse each (exit 1) with a finding that names the fault and
# starts with the file:line:column of the step; the NVLS allreduce golden
# file must verify.
#
#   test_switch_faults.sh COLLSTEP SOURCE_DIR
cs=$1
src=$2
dir=$src/tests/verify/switch
fails=0
check() { # FILE EXPECTED-PATTERN (grep -E) WHAT
  out=$("$cs" verify "$dir/$1" 2>&1)
  rc=$?
  if [ $rc = 1 ] && grep -Eq "^$dir/$1:$2" <<<"$out"; then
    echo "ok: $3"
  else
    echo "FAIL: $3 (exit $rc):"
    echo "$out"
    fails=$((fails + 1))
  fi
}
check member_missing.sched \
  "14:3: rank 0 step 7 \(switch multicast nvl on channel 1\): no matching switch step on rank 3, a member of group 'nvl'.*a member is missing" \
  "a member missing"
check size_disagrees.sched \
  "26:3: rank 2 step 1 \(switch reduce nvl\) uses in\[1:3\] but rank 0 step 1 \(switch reduce nvl\) of the same switch operation uses in\[1\]: the chunk counts differ" \
  "two members disagreeing on size"
check counted_twice.sched \
  "13:3: rank 1 step 2 \(switch allreduce pair\): sum\[0\] would hold the input of rank 0 twice" \
  "a contribution counted twice"
check switch_cycle.sched \
  "8:3: ranks 0,1: deadlock: rank 0 step 0 \(recv from 1\) .*" \
  "a cycle through a switch operation"
out=$("$cs" verify "$dir/switch_cycle.sched" 2>&1)
if grep -q "rank 1 step 0 (switch allreduce pair), which waits, in its switch operation, for" <<<"$out"; then
  echo "ok: the cycle goes through the switch operation"
else
  echo "FAIL: the cycle does not name the switch operation:"
  echo "$out"
  fails=$((fails + 1))
fi
if "$cs" verify "$src/tests/text/golden/allreduce_nvls_4ranks.sched" | grep -q ": OK: "; then
  echo "ok: the NVLS allreduce verifies"
else
  echo "FAIL: the NVLS allreduce does not verify"
  fails=$((fails + 1))
fi
echo "$fails failed"
[ $fails = 0 ]
