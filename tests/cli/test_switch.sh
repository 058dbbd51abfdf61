#!/usr/bin/env bash
# Schedules with switch steps (in-network reduction, issue 31) where no
# switch reduces: `collstep run` refuses them before any transport opens
# (exit 2, naming the step and the transport), `collstep sim` refuses them
# (exit 2) while the simulator has no model of switch operations, and
# `collstep export msccl` refuses them (exit 2, naming the step; no file).
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
  [ $rc = 2 ] && grep -q "^collstep sim: rank 0 step 1: a switch step (in-network reduction) cannot be simulated" "$tmp/err" &&
    ok || { bad "sim: exit $rc"; cat "$tmp/err"; }
fi

if "$cs" export --help >/dev/null 2>&1; then
  "$cs" export msccl "$f" -o "$tmp/x.xml" 2>"$tmp/err"
  rc=$?
  [ $rc = 2 ] && grep -q "^collstep export: rank 0 step 1: a switch step (in-network reduction) cannot be exported: MSCCL's XML has no switch step$" "$tmp/err" &&
    [ ! -e "$tmp/x.xml" ] && ok || { bad "export: exit $rc"; cat "$tmp/err"; }
fi
finish
