#!/usr/bin/env bash
# bench_exec_cpu.sh - where a 2-rank allreduce over TCP spends its time:
# `collstep run --transport tcp` and Open MPI's MPI_Allreduce (pml ob1, btl
# tcp), each rank under /usr/bin/time, so that every iteration's time splits
# into user and kernel (system) CPU.  Not a ctest.
#
# Why.  On this machine both implementations spend most of each iteration in
# the kernel's loopback TCP path (the copies into and out of socket buffers
# and TCP's own work), and with two ranks an allreduce cannot move fewer
# bytes (each rank receives at least the N bytes its result depends on).
# When collstep's kernel time per iteration alone exceeds MPI's time / 1.5,
# no change to collstep's user-space work can make it 1.5x faster than MPI
# at that size (bench_exec.sh's target): the script prints that bound.
#
#   tests/bench/bench_exec_cpu.sh [build-dir] [SIZE ...]
#   env: ITERS (default: about 1 s of work per run), REPEAT=3 (best run kept),
#        ALGO="ring" (collstep --algo, NAME or NAME:K=V)
# Sizes in bytes or with K/M suffixes; default 1M 4M 16M.
set -euo pipefail
cd "$(dirname "$0")/../.."
b=${1:-build}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1M 4M 16M)
repeat=${REPEAT:-3} algo=${ALGO:-ring}
cmake --build "$b" --target bench_exec_mpi collstep >/dev/null 2>&1 ||
    echo "# warning: build failed, using the binaries already in $b" >&2
[ -x "$b/cli/collstep" ] && [ -x "$b/tests/bench/bench_exec_mpi" ] || { echo "build $b first" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (Debian package time)" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# each rank writes "user sys" (seconds) to $tmp/cpu.RANK
cat >"$tmp/timed" <<'EOF'
#!/bin/sh
out=$1; shift
exec /usr/bin/time -f '%U %S' -o "$out.${OMPI_COMM_WORLD_RANK:-0}" "$@"
EOF
chmod +x "$tmp/timed"
mpi=(mpirun --allow-run-as-root --oversubscribe -np 2)

bytes() { local v=${1%[KMG]}; case $1 in *K) echo $((v << 10)) ;; *M) echo $((v << 20)) ;; *G) echo $((v << 30)) ;; *) echo "$1" ;; esac; }

# run IMPL SIZE ITERS WARMUP: sets t (us per iteration, as the program
# reports it), cu and cs (user and system CPU seconds, summed over ranks)
run() {
    local impl=$1 n=$2 it=$3 wu=$4 line prm=()
    rm -f "$tmp"/cpu.*
    if [ "$impl" = mpi ]; then
        line=$("${mpi[@]}" --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo \
            "$tmp/timed" "$tmp/cpu" "$b/tests/bench/bench_exec_mpi" "$n" "$it" "$wu" </dev/null)
        t=$(echo "$line" | awk '{ print $2 }')
    else
        [ "${algo#*:}" != "$algo" ] && prm=(--param "${algo#*:}")
        line=$("${mpi[@]}" "$tmp/timed" "$tmp/cpu" "$b/cli/collstep" run --coll allreduce \
            --algo "${algo%%:*}" "${prm[@]}" --size "$n" --iters "$it" --warmup "$wu" \
            --transport tcp --format csv </dev/null)
        t=$(echo "$line" | awk -F, 'NR == 2 { print $7 }')
    fi
    read -r cu cs < <(cat "$tmp"/cpu.* | awk '{ u += $1; s += $2 } END { print u, s }')
}

# measure IMPL SIZE ITERS WARMUP: t as run's; u and s, user and system CPU
# per iteration and rank (us), less start-up: a run of one iteration is
# taken off (start-up costs tens of ms of CPU under mpirun)
measure() {
    run "$1" "$2" 1 0
    local u0=$cu s0=$cs
    run "$@"
    read -r u s < <(awk -v u="$cu" -v s="$cs" -v u0="$u0" -v s0="$s0" -v k=$(($3 + $4 - 1)) \
        'BEGIN { printf "%.1f %.1f\n", (u - u0) / 2 / k * 1e6, (s - s0) / 2 / k * 1e6 }')
}

echo "# $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); 2 ranks, float sum, tcp; collstep --algo $algo"
echo "# per iteration and rank, best of $repeat runs (CPU less that of a one-iteration run)"
printf '%10s %-9s %10s %10s %10s %7s\n' "size(B)" impl "time(us)" "user(us)" "sys(us)" "sys%"
for sz in "${sizes[@]}"; do
    n=$(bytes "$sz")
    # about a second of work per run at ~4 GB/s, at least 50 iterations
    it=${ITERS:-$(( n > 0 ? 4000000000 / (2 * n) : 1000 ))}
    ((it < 50)) && it=50
    wu=$((it / 10 + 1))
    for impl in collstep mpi; do
        best="" bu="" bs=""
        for ((r = 0; r < repeat; r++)); do
            measure "$impl" "$n" "$it" "$wu"
            if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then
                best=$t bu=$u bs=$s
            fi
        done
        printf '%10d %-9s %10.1f %10.1f %10.1f %6.0f%%\n' "$n" "$impl" "$best" "$bu" "$bs" \
            "$(awk -v u="$bu" -v s="$bs" 'BEGIN { print 100 * s / (u + s) }')"
        [ "$impl" = collstep ] && cs_t=$best cs_s=$bs || mpi_t=$best
    done
    awk -v c="$cs_t" -v cs="$cs_s" -v m="$mpi_t" 'BEGIN {
        printf "%10s speedup %.2fx; 1.5x needs %.1f us: collstep kernel time alone is %.1f us (%s)\n",
            "", m / c, m / 1.5, cs, (cs > m / 1.5) ? "out of reach without less kernel work" : "within reach"
    }'
done
