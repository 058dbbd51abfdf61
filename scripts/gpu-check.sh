#!/usr/bin/env bash
# gpu-check.sh - check the whole GPU path on a machine with NVIDIA GPUs and
# print its figures (docs/gpu.md):
#   1. release build with CUDA and NCCL in $CS_BUILD_DIR (build-gpu-check),
#   2. ctest -L gpu: every device test must run and pass (only
#      gpu_cli_nodevice, which needs a machine without a GPU, may skip),
#   3. tests/bench/bench_gpu.sh: reduction kernels against the peak memory
#      bandwidth, collstep's one-rank allreduce engine against ncclAllReduce,
#   4. per collective, every registry algorithm at 1 MiB and 64 MiB on all
#      GPUs (at most 8): `collstep run --transport nccl --check --baseline
#      nccl`, collstep's time against NCCL's own collective, 0 wrong.
# One GPU runs through the RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT
# bootstrap, several under mpirun (or as many env-bootstrapped processes
# when there is no mpirun).  Logs and table.csv go to $BUILD/gpu-check/.
#
# Exit: 0 everything passed, 1 something failed (named on stderr), 77 no GPU
# or no usable driver (nothing is checked; the message says why).
#
#   CS_BUILD_DIR=dir   build directory (build-gpu-check)
#   CS_GPU_RANKS=N     ranks of step 4 (default: the number of GPUs, at most 8)
#   CS_GPU_ITERS=N     timed runs per size in step 4 (20; 5 warm-up runs)
#   CS_JOBS=N          build jobs (number of cores)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
b=${CS_BUILD_DIR:-build-gpu-check}
iters=${CS_GPU_ITERS:-20}
jobs=${CS_JOBS:-$(nproc)}

say() { printf '\n== %s\n' "$*"; }
skip() { echo "gpu-check: SKIP: $*" >&2; exit 77; }

# 0. Is there a GPU at all?  Before building: the answer is quick.
if command -v nvidia-smi >/dev/null 2>&1; then
    ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    [ "$ngpu" -ge 1 ] || skip "no GPU: nvidia-smi lists no device ($(nvidia-smi -L 2>&1 | head -1))"
elif [ -d /proc/driver/nvidia/gpus ]; then
    ngpu=$(find /proc/driver/nvidia/gpus -mindepth 1 -maxdepth 1 -type d | wc -l)
    [ "$ngpu" -ge 1 ] || skip "no GPU: /proc/driver/nvidia/gpus is empty"
else
    skip "no GPU: no nvidia-smi and no NVIDIA driver (/proc/driver/nvidia/gpus)"
fi
ranks_n=${CS_GPU_RANKS:-$((ngpu < 8 ? ngpu : 8))}
command -v python3 >/dev/null 2>&1 || { echo "gpu-check: needs python3 (its csv module reads the results)" >&2; exit 1; }

# 1. Build.
say "build ($b, $jobs jobs)"
cmake -S . -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCS_WITH_CUDA=ON -DCS_WERROR=ON >"/tmp/gpu-check-cmake.$$" 2>&1 ||
    { cat "/tmp/gpu-check-cmake.$$"; echo "gpu-check: cmake failed" >&2; exit 1; }
log=$b/gpu-check; mkdir -p "$log"; mv "/tmp/gpu-check-cmake.$$" "$log/cmake.log"
grep -E "GPU executor" "$log/cmake.log"
cmake --build "$b" -j "$jobs" >"$log/build.log" 2>&1 ||
    { tail -30 "$log/build.log"; echo "gpu-check: the build failed ($log/build.log)" >&2; exit 1; }
cs=$b/cli/collstep
if [ ! -x "$b/tests/gpu/gpu_reduce" ] || [ ! -x "$cs" ]; then
    echo "gpu-check: the GPU executor was not built (needs nvcc, the CUDA Toolkit and NCCL; $log/cmake.log)" >&2
    exit 1
fi

port=$((20000 + $$ % 20000))
# ranks ARGS...: `collstep run ARGS` on $ranks_n ranks; rank 0's output.
ranks() {
    port=$((port + 1))
    if [ "$ranks_n" = 1 ]; then
        RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 600 "$cs" run "$@"
    elif command -v mpirun >/dev/null 2>&1; then
        timeout 600 mpirun --allow-run-as-root --oversubscribe -np "$ranks_n" "$cs" run "$@"
    else
        local pids=() r rc=0
        for ((r = 0; r < ranks_n; r++)); do
            RANK=$r WORLD_SIZE=$ranks_n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
                timeout 600 "$cs" run "$@" >"$log/rank$r.out" 2>&1 & pids+=($!)
        done
        for r in "${!pids[@]}"; do wait "${pids[$r]}" || rc=$?; done
        cat "$log/rank0.out"; return $rc
    fi
}

# Does CUDA itself work (driver new enough for the runtime)?
ranks_saved=$ranks_n; ranks_n=1
ranks --transport nccl --coll allreduce --algo ring --size 64K --iters 1 --warmup 0 \
    >"$log/probe.out" 2>&1
probe=$?; ranks_n=$ranks_saved
grep -q "no CUDA device/driver" "$log/probe.out" && skip "$(grep -m1 "no CUDA device/driver" "$log/probe.out")"
failed=()
[ $probe = 0 ] || { cat "$log/probe.out"; failed+=("a one-GPU allreduce (exit $probe)"); }

# 2. ctest -L gpu.
say "ctest -L gpu"
ctest --test-dir "$b" -L gpu --output-on-failure 2>&1 | tee "$log/ctest.log"
ctest_rc=${PIPESTATUS[0]}
[ "$ctest_rc" = 0 ] || failed+=("ctest -L gpu")
bad_skips=$(grep -E "\(Skipped\)" "$log/ctest.log" | grep -v gpu_cli_nodevice | awk '{print $3}' | tr '\n' ' ')
[ -z "$bad_skips" ] || failed+=("GPU tests skipped on a machine with a GPU: $bad_skips")

# 3. Kernels and engine overhead on one GPU.
say "tests/bench/bench_gpu.sh"
tests/bench/bench_gpu.sh "$b" 2>&1 | tee "$log/bench_gpu.log"
[ "${PIPESTATUS[0]}" = 0 ] || failed+=("tests/bench/bench_gpu.sh")

# 4. Every registry algorithm against NCCL's collective.
say "collstep run --transport nccl vs NCCL on $ranks_n GPU(s), 1 MiB and 64 MiB, $iters runs"
echo "coll,algo,size_bytes,collstep_us,nccl_us,wrong,status" >"$log/table.csv"
for coll in allreduce reduce-scatter allgather broadcast reduce alltoall; do
    for algo in $("$cs" algos 2>/dev/null | awk -v c="$coll" '$1 == c { print $2 }'); do
        op=sum; case $coll in allgather|broadcast|alltoall) op=max ;; esac
        if ! "$cs" gen "$coll" "$algo" --ranks "$ranks_n" >"$log/gen.sched" 2>&1; then
            echo "$coll,$algo,,,,,unsupported at $ranks_n ranks" >>"$log/table.csv"; continue
        fi
        if grep -q "^collstep-schedule 2" "$log/gen.sched"; then # switch steps: run refuses them
            echo "$coll,$algo,,,,,switch steps at $ranks_n ranks" >>"$log/table.csv"; continue
        fi
        out=$log/run-$coll-$algo.csv
        ranks --transport nccl --coll "$coll" --algo "$algo" --op "$op" --size 1M,64M \
            --iters "$iters" --warmup 5 --check --baseline nccl --timeout 120 --format csv \
            >"$out" 2>"$log/run-$coll-$algo.err"
        rc=$?
        python3 - "$out" "$coll" "$algo" "$rc" >>"$log/table.csv" <<'EOF'
import csv, sys
path, coll, algo, rc = sys.argv[1:]
rows = {}
try:
    for r in csv.DictReader(open(path)):
        rows.setdefault(r["size_bytes"], {})[r["algo"]] = r
except (OSError, KeyError, csv.Error):
    rows = {}
status = "ok" if rc == "0" else "exit " + rc
if not rows:
    print(f"{coll},{algo},,,,,{status if rc != '0' else 'no rows'}")
for size, by in rows.items():
    ours = next((r for a, r in by.items() if a != "nccl"), None)
    base = by.get("nccl")
    wrong = max(int((r or {}).get("wrong") or 0) for r in (ours, base))
    st = status if ours and base else "missing rows"
    if wrong:
        st = f"{wrong} wrong"
    print(f"{coll},{algo},{size},{ours['time_us'] if ours else ''},"
          f"{base['time_us'] if base else ''},{wrong},{st}")
EOF
    done
done
python3 - "$log/table.csv" "$ranks_n" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def size(b):
    b = int(b)
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB" if b >= 1024 else f"{b} B"
coll = None
for r in rows:
    if r["coll"] != coll:
        coll = r["coll"]
        print(f"\n{coll} on {sys.argv[2]} GPU(s)")
        print(f"  {'algorithm':<18} {'size':>7} {'collstep(us)':>13} {'nccl(us)':>10} "
              f"{'collstep/nccl':>14}  status")
    if not r["size_bytes"]:
        print(f"  {r['algo']:<18} {'':>7} {'':>13} {'':>10} {'':>14}  {r['status']}")
        continue
    t, n = r["collstep_us"], r["nccl_us"]
    ratio = f"{float(t) / float(n):.2f}x" if t and n and float(n) > 0 else ""
    print(f"  {r['algo']:<18} {size(r['size_bytes']):>7} {t:>13} {n:>10} {ratio:>14}  {r['status']}")
EOF
bad_runs=$(awk -F, 'NR > 1 && $7 != "ok" && $7 !~ /^unsupported/ { print $1 "/" $2 }' "$log/table.csv" | sort -u | tr '\n' ' ')
[ -z "$bad_runs" ] || failed+=("collstep run: $bad_runs(logs: $log/run-*.err)")

say "summary"
if [ ${#failed[@]} = 0 ]; then
    echo "gpu-check: all passed on $ngpu GPU(s) ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)); logs in $log"
    exit 0
fi
for f in "${failed[@]}"; do echo "gpu-check: FAILED: $f" >&2; done
exit 1
