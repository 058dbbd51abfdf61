#!/usr/bin/env bash
# bench_exec.sh - `collstep run` allreduce (float sum, 2 ranks under
# mpirun) against Open MPI's MPI_Allreduce, shm and tcp, 8 B .. 256 MiB.
# For every size it keeps collstep's best algorithm among ALGOS and prints
# both times and the speed-up (MPI time / collstep time).  Targets: >= 1.5x
# from 1 MiB up, small-message latency within 1.5x of MPI.  Not a ctest.
#   tests/bench/bench_exec.sh [build-dir] [max-bytes] [factor]
#   env: ALGOS="ring rhd direct rd" ITERS=20 WARMUP=5 NP=2
set -euo pipefail
cd "$(dirname "$0")/../.."
b=${1:-build} max=${2:-268435456} factor=${3:-4}
algos=${ALGOS:-"ring rhd direct rd"} iters=${ITERS:-20} warm=${WARMUP:-5} np=${NP:-2}
cmake --build "$b" --target bench_exec_mpi >/dev/null
cmake --build "$b" --target collstep >/dev/null
run=("$b/cli/collstep" run)
mpi=(mpirun --allow-run-as-root --oversubscribe -np "$np")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "# $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $np ranks; float sum"
for prov in shm tcp; do
    case $prov in shm) btl=vader fp=shm ;; tcp) btl=tcp fp="tcp;ofi_rxm" ;; esac
    "${mpi[@]}" --mca btl "self,$btl" "$b/tests/bench/bench_exec_mpi" 8 "$max" "$iters" "$warm" \
        "$factor" </dev/null >"$tmp/mpi"
    for a in $algos; do
        "${mpi[@]}" "${run[@]}" --coll allreduce --algo "$a" --size "8:$max:$factor" \
            --iters "$iters" --warmup "$warm" --provider "$fp" --format csv </dev/null |
            awk -F, -v a="$a" 'NR > 1 { print $3, $7, a }' >>"$tmp/cs"
    done
    printf '\n%-8s %12s %10s %12s %12s %8s\n' "$prov" "size(B)" "best" "collstep(us)" "MPI(us)" "speedup"
    while read -r size tmpi; do
        best=$(awk -v s="$size" '$1 == s' "$tmp/cs" | sort -g -k2 | head -1)
        [ -n "$best" ] || continue
        set -- $best
        awk -v p="$prov" -v s="$size" -v a="$3" -v c="$2" -v m="$tmpi" \
            'BEGIN { printf "%-8s %12d %10s %12.2f %12.2f %7.2fx\n", p, s, a, c, m, m / c }'
    done <"$tmp/mpi"
    rm -f "$tmp/cs"
done
