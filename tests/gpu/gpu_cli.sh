#!/usr/bin/env bash
# gpu_cli.sh - `collstep run --transport nccl` end to end.
#   gpu_cli.sh RUN nodevice   without a device: exit 3 and "no CUDA device/driver:
#                             cudaGetDeviceCount: ... (N)" (skips where a GPU works)
#   gpu_cli.sh RUN allreduce  1 rank: allreduce ring --check --baseline nccl, every
#                             row 0 wrong, a "nccl" row per size (skips without GPU)
#   gpu_cli.sh RUN matrix     every collective/algorithm on as many ranks as GPUs
#                             (max 8, under mpirun; skips without GPU or mpirun)
set -uo pipefail
run=$1 mode=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
port=$((20000 + $$ % 20000))
env1=(env RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port)
"${env1[@]}" "$run" run --transport nccl --coll allreduce --algo ring --size 64K --iters 1 \
    --warmup 0 >"$tmp/probe" 2>"$tmp/probe.err"
probe=$?
nodev=0
grep -q "no CUDA device/driver: cudaGetDeviceCount: " "$tmp/probe.err" && nodev=1
case $mode in
nodevice)
    if [ $nodev = 0 ] && [ $probe = 0 ]; then echo "SKIP: a CUDA device works here"; exit 77; fi
    grep -E "no CUDA device/driver: cudaGetDeviceCount: .*\([0-9]+\)" "$tmp/probe.err" ||
        { echo "FAIL: message"; cat "$tmp/probe.err"; exit 1; }
    [ $probe = 3 ] || { echo "FAIL: exit code $probe, expected 3"; exit 1; }
    echo "1 passed, 0 failed"
    ;;
allreduce)
    [ $nodev = 0 ] || { echo "SKIP: $(cat "$tmp/probe.err")"; exit 77; }
    "${env1[@]}" "$run" run --transport nccl --coll allreduce --algo ring --size 4:16M:4 \
        --check --baseline nccl --format csv >"$tmp/out" 2>"$tmp/err"
    rc=$?
    cat "$tmp/out" "$tmp/err"
    [ $rc = 0 ] || { echo "FAIL: exit $rc"; exit 1; }
    # columns found by their header names (wrong, algorithm) so the layout may grow
    cols='NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "wrong") w = i; if ($i == "algorithm" || $i == "algo") a = i } }'
    rows=$(awk -F, "$cols"' NR > 1 && w && $w == 0' "$tmp/out" | wc -l)
    nccl=$(awk -F, "$cols"' NR > 1 && a && $a == "nccl"' "$tmp/out" | wc -l)
    [ "$rows" = 14 ] && [ "$nccl" = 7 ] || { echo "FAIL: $rows good rows, $nccl nccl rows"; exit 1; }
    echo "1 passed, 0 failed"
    ;;
matrix)
    [ $nodev = 0 ] || { echo "SKIP: $(cat "$tmp/probe.err")"; exit 77; }
    command -v mpirun >/dev/null || { echo "SKIP: no mpirun"; exit 77; }
    n=$(nvidia-smi -L 2>/dev/null | wc -l); [ "$n" -ge 1 ] || n=1; [ "$n" -le 8 ] || n=8
    pass=0 failn=0
    for coll in allreduce reduce-scatter allgather broadcast reduce alltoall; do
        for algo in $("$run" algos 2>/dev/null | awk -v c="$coll" '$1 == c { print $2 }'); do
            op=sum; case $coll in allgather|broadcast|alltoall) op=max ;; esac
            if timeout 300 mpirun --allow-run-as-root --oversubscribe -np "$n" "$run" run \
                --transport nccl --coll "$coll" --algo "$algo" --op "$op" --size 1000,1M \
                --iters 2 --warmup 1 --check --baseline nccl --timeout 60 >"$tmp/m" 2>&1; then
                pass=$((pass + 1))
            else
                failn=$((failn + 1)); echo "FAIL: $coll $algo on $n GPUs"; cat "$tmp/m"
            fi
        done
    done
    echo "$pass passed, $failn failed"
    [ $failn = 0 ] && [ $pass -gt 0 ]
    ;;
*) echo "usage: gpu_cli.sh RUN nodevice|allreduce|matrix"; exit 2 ;;
esac
