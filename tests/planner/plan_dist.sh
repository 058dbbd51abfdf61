#!/usr/bin/env bash
# plan_dist.sh COLLSTEP MODE - `collstep plan` gives one plan whatever the
# machine's load and however it is spread:
#   load    the plan made beside a CPU hog (busy-loop processes, one per
#           core), with --jobs 1, equals the plan made alone, byte for byte
#           (report and tuning table); --candidates N simulates the first N
#           of the order and says so
#   cut     a budget too short for the plan: the report lists what it cut
#           and says the plan may differ from an uncut one (or the budget is
#           refused as too small to simulate anything)
#   shard   --shard 0/4 .. 3/4 and --merge: the merged report and tuning
#           table equal the one-process plan byte for byte, whatever the
#           order of the parts; --shard slurm reads the job array's
#           variables; merge refuses parts of other inputs, a missing or a
#           repeated shard, a file that is not a part
#   mpi     mpirun -np 4 collstep plan equals the one-process plan (skipped,
#           77, without mpirun or a collstep built with exec/)
#   kill    3 ranks on the environment bootstrap; rank 1 is killed while it
#           plans: ranks 0 and 2 exit non-zero within seconds, a message
#           naming rank 1
. "$(dirname "$0")/../cli/usage_checks.sh"
mode=$2
P=x86-p100-pcie-10gbe:nodes=2
ARGS=(--platform "$P" --size 64K,16M --top 2)

# one NAME EXTRA...: the one-process plan into $tmp/NAME.txt and NAME.tuning
one() {
  local name=$1; shift
  "$collstep" plan "$@" -o "$tmp/$name.tuning" >"$tmp/$name.txt" 2>"$tmp/$name.err"
  rc=$?; check "plan $name exits 0 ($(tail -2 "$tmp/$name.err"))" test $rc -eq 0
}
# same A B: reports and tuning tables equal byte for byte
same() {
  check "$2: the report equals $1's ($(diff "$tmp/$1.txt" "$tmp/$2.txt" | head -5))" \
    cmp -s "$tmp/$1.txt" "$tmp/$2.txt"
  check "$2: the tuning table equals $1's" cmp -s "$tmp/$1.tuning" "$tmp/$2.tuning"
}

case $mode in
load)
  L=(--platform summit:nodes=4 --size 1M,64M --top 3)
  one alone "${L[@]}"
  hogs=()
  for ((i = 0; i < $(nproc); i++)); do
    (while :; do :; done) &
    hogs+=($!)
  done
  one loaded "${L[@]}" --jobs 1
  kill "${hogs[@]}" 2>/dev/null
  wait "${hogs[@]}" 2>/dev/null
  same alone loaded
  check "the plan simulated something" grep -q " sim " "$tmp/alone.txt"
  check "nothing cut" bash -c "! grep -q 'cut by the budget' '$tmp/alone.txt'"
  one first2 "${L[@]}" --candidates 2
  check "--candidates 2: two simulations run" grep -q "2 of 2 simulations run" "$tmp/first2.txt"
  bad() { expect_usage plan "$@"; }
  bad "candidates" "${L[@]}" --candidates 0
  ;;
cut)
  # 384 GPUs: the plan takes about 2 minutes uncut on 2 cores (on 96 GPUs
  # it fits in 2 s, nothing left to cut)
  "$collstep" plan --platform summit:nodes=64 --size 1M,64M --top 2 --budget 2 \
    >"$tmp/cut.txt" 2>"$tmp/cut.err"
  rc=$?
  if [ $rc -eq 0 ]; then
    check "the report lists what the budget cut" \
      grep -q "^# cut by the budget: [0-9]* (.*); this plan may differ from an uncut one" "$tmp/cut.txt"
    check "stderr warns" grep -q "warning: the budget cut" "$tmp/cut.err"
  else
    check "budget refused as too small (exit $rc: $(tail -2 "$tmp/cut.err"))" \
      bash -c "[ $rc -eq 2 ] && grep -q 'give --budget' '$tmp/cut.err'"
  fi
  ;;
shard)
  one one "${ARGS[@]}"
  for i in 0 1 2 3; do
    "$collstep" plan "${ARGS[@]}" --shard "$i/4" -o "$tmp/part$i" >"$tmp/shard$i.out" 2>"$tmp/shard$i.err"
    rc=$?; check "--shard $i/4 exits 0 ($(tail -2 "$tmp/shard$i.err"))" test $rc -eq 0
    check "--shard $i/4 prints no report" test ! -s "$tmp/shard$i.out"
  done
  "$collstep" plan --merge "$tmp"/part{2,0,3,1} -o "$tmp/merged.tuning" >"$tmp/merged.txt" 2>"$tmp/merge.err"
  rc=$?; check "--merge exits 0 ($(tail -2 "$tmp/merge.err"))" test $rc -eq 0
  same one merged
  # json too: the merge reports in any layout
  "$collstep" plan "${ARGS[@]}" --format json >"$tmp/one.json" 2>/dev/null
  "$collstep" plan --merge --format json "$tmp"/part{0,1,2,3} >"$tmp/merged.json" 2>/dev/null
  check "--merge --format json equals the one-process json" cmp -s "$tmp/one.json" "$tmp/merged.json"
  # a job array's task: SLURM_ARRAY_TASK_ID less SLURM_ARRAY_TASK_MIN
  for i in 1 2 3 4; do
    env SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=4 \
      "$collstep" plan "${ARGS[@]}" --shard slurm -o "$tmp/slurm$i" 2>"$tmp/slurm.err"
    rc=$?; check "--shard slurm task $i exits 0 ($(tail -1 "$tmp/slurm.err"))" test $rc -eq 0
  done
  "$collstep" plan --merge "$tmp"/slurm{1,2,3,4} -o "$tmp/slurm.tuning" >"$tmp/slurm.txt" 2>/dev/null
  rc=$?; check "--shard slurm parts merge" test $rc -eq 0
  same one slurm
  # refusals
  bad() { expect_usage plan "$@"; }
  bad "shard 3/4 is missing" --merge "$tmp"/part{0,1,2}
  bad "are both shard 1/4" --merge "$tmp"/part{0,1,1,2,3}
  "$collstep" plan --platform "$P" --size 64K,1M --top 2 --shard 1/4 -o "$tmp/other1" 2>/dev/null
  bad "different inputs" --merge "$tmp"/part0 "$tmp/other1" "$tmp"/part{2,3}
  "$collstep" plan "${ARGS[@]}" --top 3 --shard 1/4 -o "$tmp/top1" 2>/dev/null
  bad "different inputs" --merge "$tmp"/part0 "$tmp/top1" "$tmp"/part{2,3}
  bad "not a part of a plan" --merge "$tmp/one.tuning"
  head -c 3000 "$tmp/part1" >"$tmp/short1"
  bad "cut short" --merge "$tmp"/part0 "$tmp/short1" "$tmp"/part{2,3}
  bad "--merge: give the parts" --merge
  bad "give only" --merge "$tmp"/part0 --size 1M
  bad "--shard: expected I/N" "${ARGS[@]}" --shard 4/4 -o "$tmp/x"
  bad "--shard: give -o PART" "${ARGS[@]}" --shard 0/4
  env -u SLURM_ARRAY_TASK_ID "$collstep" plan "${ARGS[@]}" --shard slurm -o "$tmp/x" 2>"$tmp/err"
  check "--shard slurm outside an array: exit 2" bash -c "[ $? -eq 2 ] && grep -q SLURM_ARRAY_TASK_ID '$tmp/err'"
  echo "notes" >"$tmp/notes"
  bad "notes" "${ARGS[@]}" --shard 0/4 -o "$tmp/notes"
  ;;
mpi)
  command -v mpirun >/dev/null || { echo "SKIP: no mpirun"; exit 77; }
  "$collstep" plan --help | grep -q "Under a launcher" || { echo "SKIP: no launcher support"; exit 77; }
  "$collstep" run --help >/dev/null 2>&1 || { echo "SKIP: collstep built without exec/"; exit 77; }
  one one "${ARGS[@]}"
  mpirun --allow-run-as-root --oversubscribe -np 4 "$collstep" plan "${ARGS[@]}" \
    -o "$tmp/mpi.tuning" >"$tmp/mpi.txt" 2>"$tmp/mpi.err"
  rc=$?; check "mpirun -np 4 collstep plan exits 0 ($(tail -3 "$tmp/mpi.err"))" test $rc -eq 0
  check "the ranks shared the simulations" grep -q "planned on 4 ranks" "$tmp/mpi.err"
  same one mpi
  ;;
kill)
  "$collstep" run --help >/dev/null 2>&1 || { echo "SKIP: collstep built without exec/"; exit 77; }
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  pids=()
  for r in 0 1 2; do
    env RANK=$r WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$collstep" plan \
      --platform summit:nodes=8 --size 1M,64M --top 2 >"$tmp/out$r" 2>"$tmp/err$r" </dev/null &
    pids+=($!)
  done
  trap 'kill -9 "${pids[@]}" 2>/dev/null; rm -rf "$tmp"' EXIT
  # the job is up (every rank past the bootstrap's check of the arguments)
  # when rank 0 starts planning (the other ranks plan quietly)
  for ((i = 0; i < 300; i++)); do grep -q "analysing" "$tmp/err0" 2>/dev/null && break; sleep 0.05; done
  check "rank 0 started planning" grep -q "analysing" "$tmp/err0"
  check "rank 1 plans quietly" test ! -s "$tmp/err1"
  kill -9 "${pids[1]}"
  t0=$SECONDS
  for r in 0 2; do
    while kill -0 "${pids[$r]}" 2>/dev/null && [ $((SECONDS - t0)) -lt 25 ]; do sleep 0.1; done
    if kill -0 "${pids[$r]}" 2>/dev/null; then rc=hang; else wait "${pids[$r]}"; rc=$?; fi
    check "rank $r: exit $rc (want non-zero, no hang): $(cat "$tmp/err$r" | tail -2)" \
      bash -c "[ '$rc' != hang ] && [ '$rc' -ne 0 ]"
    check "rank $r printed no plan" test ! -s "$tmp/out$r"
  done
  tail -1 "$tmp/err0"
  check "a message names rank 1: $(tail -1 "$tmp/err0")" grep -q "rank 1" "$tmp/err0"
  ;;
*) echo "unknown mode $mode"; exit 2 ;;
esac
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
