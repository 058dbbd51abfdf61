#!/usr/bin/env bash
# bench_sim.sh - speed of the SimGrid backend (not a ctest: run by hand).
#
#   tests/bench/bench_sim.sh [build-dir] [nodes] [reps]
#     build-dir  default build; nodes: summit nodes for parts 1-2 (default
#     256 = 1536 GPUs); reps: runs per measurement (default 3; the best
#     wall and the best CPU time are kept, the machine being shared).
#   BENCH_FULL=0   skip parts 3 and 5 (full Summit, 8,192 GPUs: minutes)
#   BENCH_SMPI=0   skip part 4 (needs smpicc/smpirun from libsimgrid-dev)
#   BENCH_PARTS    the parts to run (default "1 2 3 4 5")
#   BENCH_ENGINES  engines part 1 compares (default "dag actors"); parts 2-5
#                  run the build's default engine ('collstep --version')
#
# Every line "LABEL wall W s cpu C s rss R MB" is one measurement: wall
# clock, user+sys CPU time and peak RSS from /usr/bin/time.  Ratios are
# against a peer measured in the same run, for wall and for CPU time (CPU
# time is the steadier figure when other jobs share the machine).
#
# 1. ring allreduce, summit:nodes=N exported to a SimGrid XML file (what a
#    user's own file costs), 100 MB, ideal model: `collstep sim --no-verify`
#    with each engine (--engine dag, actors) against three bare SimGrid rings
#    (tests/bench/sim_bare_ring.c: one actor per GPU doing only the ring's
#    puts and gets, the same file, the same model flags):
#      step-graph deps  the dependencies of collstep's ring step graph (a
#                   receive waits for the previous receive only, a send for
#                   the previous send and receive), collstep's block sizes,
#                   and the reductions as sleeps of block / host speed: the
#                   same events at the same simulated times, so the ratio is
#                   the interpreter's cost (target <= 1.10);
#      lock step    each round waits for both comms, then sleeps for the
#                   reduction: the same simulated time but fewer, larger
#                   SimGrid time steps (the ranks cannot run ahead);
#      comm only    lock step without reductions: put_async to the right
#                   neighbour's mailbox, get_async on its own, wait for both,
#                   2(P-1) steps (target: the dag engine <= 0.5x its wall).
#    All of them run on the SimGrid collstep is built on.  When that is
#    collstep's patched build (scripts/setup-simgrid.sh), the comm-only ring
#    also runs on the system's SimGrid, as a user's own program on Debian's
#    SimGrid would (a line of its own, not the target's peer).
#    The runs are interleaved, best of $reps rounds each;
# 2. hier allreduce (dims = the platform's 6 x nodes, ring per tier) on the
#    same platform (target < 5 s at 1536 GPUs), and hier with a logarithmic
#    inter-node tier (algos=ring+rhd);
# 3. full Summit, 27,648 GPUs: hier, dims=6x4608, algos=ring+rhd (target
#    <= 60 s and 4 GiB), after the same command on 1152 and 2304 nodes;
# 4. SMPI against collstep on 256 ranks x 100 MB: a star platform (256 hosts
#    on one router, Floyd routing, 12.5 GB/s links), tests/bench/
#    bench_sim_smpi.c built with smpicc, smpirun --cfg=smpi/allreduce:lr plus
#    the ideal model flags (smpi/bw-factor and smpi/lat-factor 1, shared
#    malloc, computations not timed); then `collstep sim --algo ring` on the
#    same file, first with an empty platform cache (the file is then loaded
#    twice: checked in a child, then simulated) and again (loaded once).
#    Prints both simulated times and collstep / SMPI wall and CPU ratios
#    (target: SMPI >= 40x collstep's wall);
# 5. 8,192 GPUs (hgx-h100:nodes=1024), 1 GiB: hier (target <= 60 s) and the
#    flat ring, each with its peak memory.
set -euo pipefail
cd "$(dirname "$0")/../.."
b=${1:-build}
nodes=${2:-256}
reps=${3:-3}
plat="summit:nodes=$nodes"
cmake --build "$b" --target collstep sim_bare_ring >/dev/null
cs="$b/cli/collstep"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# measure LABEL COMMAND... : best of $reps; sets wall cpu rss, output in $out
measure() {
  local label=$1; shift
  wall="" cpu="" rss=0
  for ((i = 0; i < reps; i++)); do
    /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err" ||
      { echo "$label: failed: $(tail -3 "$tmp/err")" >&2; return 1; }
    read -r w u s m <"$tmp/time"
    c=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
    wall=$(awk -v a="$wall" -v b="$w" 'BEGIN { print (a == "" || b < a) ? b : a }')
    cpu=$(awk -v a="$cpu" -v b="$c" 'BEGIN { print (a == "" || b < a) ? b : a }')
    ((m > rss)) && rss=$m
  done
  out=$(cat "$tmp/out")
  printf '%-34s wall %8.2f s  cpu %8.2f s  rss %7.0f MB\n' "$label" "$wall" "$cpu" \
    "$(awk -v m="$rss" 'BEGIN { print m / 1024 }')"
}
ratio() { # LABEL ENGINE_WALL ENGINE_CPU PEER_WALL PEER_CPU [TARGET]
  awk -v l="$1" -v ew="$2" -v ec="$3" -v pw="$4" -v pc="$5" -v t="${6:-}" 'BEGIN {
    printf "  %-32s wall %.3f  cpu %.3f%s\n", l, ew / pw, ec / pc, t == "" ? "" : "  (target <= " t ")" }'
}
simtime() { echo "$out" | awk -F, 'NR > 1 { printf "%.6f s", $7 / 1e6 }'; }

parts=" ${BENCH_PARTS:-1 2 3 4 5} "
part() { [[ "$parts" == *" $1 "* ]]; }
"$cs" platform export "$plat" -o "$tmp/plat.xml" 2>/dev/null
engines=${BENCH_ENGINES:-dag actors}
if part 1; then
echo "== 1. ring allreduce, $plat exported to XML, 100 MB (runs interleaved, $reps rounds)"
echo "  $("$cs" --version | grep -i simgrid)"
# one round runs each once, so a change in the machine's load hits all of
# them alike; the best of the rounds is kept for each
declare -A RW RC RR RO LAST
rounds=""
declare -A RATIOS
round1() { # KEY COMMAND...
  local key=$1; shift
  /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err" ||
    { echo "$key: failed: $(tail -3 "$tmp/err")" >&2; return 1; }
  read -r w u s m <"$tmp/time"
  RW[$key]=$(awk -v a="${RW[$key]:-}" -v b="$w" 'BEGIN { print (a == "" || b < a) ? b : a }')
  RC[$key]=$(awk -v a="${RC[$key]:-}" -v b="$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" \
    'BEGIN { print (a == "" || b < a) ? b : a }')
  ((m > ${RR[$key]:-0})) && RR[$key]=$m
  RO[$key]=$(cat "$tmp/out")
  LAST[$key]=$w
}
bare="$b/tests/bench/sim_bare_ring"
# The bare ring runs on the SimGrid collstep runs on (the target's peer).
# Where that is collstep's patched build, the same program is also timed on
# the system's SimGrid, as a user writing it on Debian's would run it (an
# extra line, not the target: the patches speed the bare ring up too).
stock=""
sys_sg=$(pkg-config --variable=libdir simgrid 2>/dev/null || true)
cur_sg=$(ldd "$bare" 2>/dev/null | awk '/libsimgrid/ { print $3; exit }')
if [ -n "$sys_sg" ] && [ -n "$cur_sg" ] && ls "$sys_sg"/libsimgrid.so.* >/dev/null 2>&1 &&
   [ "$(cd "$(dirname "$cur_sg")" && pwd -P)" != "$(cd "$sys_sg" && pwd -P)" ]; then
  stock=$sys_sg
fi
for ((i = 0; i < reps; i++)); do
  line="  round $((i + 1)):"
  for e in $engines; do
    round1 "cs-$e" "$cs" sim --platform "$tmp/plat.xml" --algo ring --size 100M --format csv \
      --no-verify --engine "$e"
  done
  round1 deps "$bare" "$tmp/plat.xml" 104857600 0 deps
  round1 comm "$bare" "$tmp/plat.xml" 104857600
  [ -z "$stock" ] || round1 stock env LD_LIBRARY_PATH="$stock" "$bare" "$tmp/plat.xml" 104857600
  for e in $engines; do
    RATIOS[$e]+=" $(awk -v c="${LAST[cs-$e]}" -v d="${LAST[comm]}" 'BEGIN { printf "%.4f", c / d }')"
    line+=$(awk -v e="$e" -v c="${LAST[cs-$e]}" -v d="${LAST[comm]}" -v p="${LAST[deps]}" \
      'BEGIN { printf " %s %.2f s (%.3f of comm only, %.3f of deps);", e, c, c / d, c / p }')
  done
  rounds+="$line comm only ${LAST[comm]} s, deps ${LAST[deps]} s"$'\n'
done
show1() { # KEY LABEL
  printf '%-34s wall %8.2f s  cpu %8.2f s  rss %7.0f MB\n' "$2" "${RW[$1]}" "${RC[$1]}" \
    "$(awk -v m="${RR[$1]}" 'BEGIN { print m / 1024 }')"
}
for e in $engines; do
  show1 "cs-$e" "collstep sim ring --engine $e"
  out=${RO[cs-$e]}; echo "  simulated $(simtime)"
done
show1 deps "bare ring, step-graph deps"; echo "  ${RO[deps]}"
show1 comm "bare ring, comm only"; echo "  ${RO[comm]}"
if [ -n "$stock" ]; then
  show1 stock "bare ring, comm only, system SimGrid"; echo "  ${RO[stock]} ($stock)"
fi
# every round's ratios too: the host's load changes within minutes, the
# spread says how far the best-of ratios hold
printf 'per round (collstep / peers of the same round):\n%s' "$rounds"
for e in $engines; do
  t=""; [ "$e" = dag ] && t=0.5
  ratio "$e / bare (comm only)" "${RW[cs-$e]}" "${RC[cs-$e]}" "${RW[comm]}" "${RC[comm]}" $t
  echo "${RATIOS[$e]}" | tr ' ' '\n' | sed '/^$/d' | sort -g | awk -v e="$e" -v t="$t" '{ v[NR] = $1 } END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "  %-32s wall %.3f  (median of %d rounds%s)\n", e " / bare (comm only), per round", m, NR,
      t == "" ? "" : "; target <= " t }'
  ratio "$e / bare (step-graph deps)" "${RW[cs-$e]}" "${RC[cs-$e]}" "${RW[deps]}" "${RC[deps]}"
done
if [ -n "$stock" ]; then
  for e in $engines; do
    ratio "$e / bare on the system SimGrid" "${RW[cs-$e]}" "${RC[cs-$e]}" "${RW[stock]}" "${RC[stock]}"
  done
fi
if [[ " $engines " == *" dag "* && " $engines " == *" actors "* ]]; then
  ratio "dag / actors" "${RW[cs-dag]}" "${RC[cs-dag]}" "${RW[cs-actors]}" "${RC[cs-actors]}"
fi

fi

if part 2; then
echo "== 2. hier allreduce, $plat, 100 MB"
measure "collstep sim hier" "$cs" sim --platform "$plat" --algo hier --size 100M --format csv --no-verify
echo "  simulated $(simtime)  (target < 5 s wall at 1536 GPUs)"
measure "collstep sim hier ring+rhd" "$cs" sim --platform "$plat" --algo hier --param algos=ring+rhd \
  --size 100M --format csv --no-verify
echo "  simulated $(simtime)"

fi

if [ "${BENCH_FULL:-1}" = 1 ] && part 3; then
  echo "== 3. full Summit (27,648 GPUs), hier dims=6x4608 algos=ring+rhd, 100 MB"
  reps_save=$reps reps=1
  for n in 1152 2304; do
    measure "collstep sim hier, $n nodes" "$cs" sim --platform summit:nodes=$n --algo hier \
      --param dims=6x$n --param algos=ring+rhd --size 100M --format csv --no-verify
    echo "  simulated $(simtime)"
  done
  measure "collstep sim hier (full)" "$cs" sim --platform summit:nodes=4608 --algo hier \
    --param dims=6x4608 --param algos=ring+rhd --size 100M --format csv --no-verify
  echo "  simulated $(simtime)  (target <= 60 s wall, <= 4096 MB)"
  reps=$reps_save
fi

if [ "${BENCH_SMPI:-1}" = 1 ] && part 4 && command -v smpicc >/dev/null && command -v smpirun >/dev/null; then
  echo "== 4. SMPI (MPI_Allreduce, smpi/allreduce:lr) vs collstep sim ring, 256-host star x 100 MB"
  {
    echo '<?xml version="1.0"?>'
    echo '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">'
    echo '<platform version="4.1">'
    echo '<zone id="star" routing="Floyd">'
    for ((h = 0; h < 256; h++)); do echo "  <host id=\"h$h\" speed=\"100Gf\"/>"; done
    echo '  <router id="sw"/>'
    for ((h = 0; h < 256; h++)); do
      echo "  <link id=\"l$h\" bandwidth=\"12.5GBps\" latency=\"1us\" sharing_policy=\"SPLITDUPLEX\"/>"
    done
    for ((h = 0; h < 256; h++)); do
      echo "  <route src=\"h$h\" dst=\"sw\"><link_ctn id=\"l$h\" direction=\"UP\"/></route>"
    done
    echo '</zone>'
    echo '</platform>'
  } >"$tmp/star.xml"
  for ((h = 0; h < 256; h++)); do echo "h$h"; done >"$tmp/hosts"
  smpicc -O2 -o "$tmp/smpi_ar" tests/bench/bench_sim_smpi.c
  reps_save=$reps reps=1
  measure "smpirun MPI_Allreduce lr" smpirun -np 256 -platform "$tmp/star.xml" -hostfile "$tmp/hosts" \
    --cfg=smpi/allreduce:lr --cfg=network/model:CM02 --cfg=network/crosstraffic:0 \
    --cfg=network/TCP-gamma:0 --cfg=smpi/bw-factor:1 --cfg=smpi/lat-factor:1 \
    --cfg=smpi/simulate-computation:no --cfg=smpi/shared-malloc:global \
    --cfg=contexts/stack-size:256 --log=root.thres:warning "$tmp/smpi_ar" 104857600
  sw=$wall sc=$cpu; echo "  $out"
  export XDG_CACHE_HOME="$tmp/cache"
  measure "collstep sim ring (new file)" "$cs" sim --platform "$tmp/star.xml" --algo ring \
    --size 100M --format csv --no-verify
  echo "  collstep simulated $(simtime); the file loaded twice (checked, then simulated)"
  ratio "collstep (new file) / smpi" "$wall" "$cpu" "$sw" "$sc"
  reps=$reps_save
  measure "collstep sim ring (file seen)" "$cs" sim --platform "$tmp/star.xml" --algo ring \
    --size 100M --format csv --no-verify
  echo "  collstep simulated $(simtime); loaded once (the check from the platform cache)"
  ratio "collstep / smpi" "$wall" "$cpu" "$sw" "$sc"
  awk -v c="$wall" -v s="$sw" 'BEGIN { printf "  SMPI takes %.1fx collstep'"'"'s wall time (target >= 40)\n", s / c }'
  unset XDG_CACHE_HOME
fi

if [ "${BENCH_FULL:-1}" = 1 ] && part 5; then
  echo "== 5. 8,192 GPUs (hgx-h100:nodes=1024), 1 GiB"
  reps_save=$reps reps=1
  measure "collstep sim hier, 8192 GPUs" "$cs" sim --platform hgx-h100:nodes=1024 --algo hier \
    --size 1G --format csv --no-verify
  echo "  simulated $(simtime)  $(echo "$out" | awk -F, 'NR > 1 { print $NF }')  (target <= 60 s wall)"
  measure "collstep sim ring, 8192 GPUs" "$cs" sim --platform hgx-h100:nodes=1024 --algo ring \
    --size 1G --format csv --no-verify
  echo "  simulated $(simtime)"
  reps=$reps_save
fi
