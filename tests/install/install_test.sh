#!/bin/sh
# install_test.sh SRC WORK MODE [SGLIBDIR [CMAKE_ARG...]] - install collstep
# and use the installation.
#
# MODE cuda: the default configuration, which builds the GPU executor when
# the CUDA Toolkit and NCCL are there (skipped, 77, when nvcc, nccl.h, or the
# executor's libfabric / pmix are missing); MODE nocuda: -DCS_WITH_CUDA=OFF.
#
# Configures SRC into WORK/build (libraries and the cli only: no tests),
# builds with -j2, installs into WORK/prefix and deletes the build tree.
# Then, with nothing but the prefix:
#   - the expected files are there (libraries, headers, collstep.pc, the
#     CMake package; libcs_gpu_kernels.so exactly when CUDA is on), no
#     internal header, no path of the build tree in the installed text;
#   - bin/collstep finds every library (RUNPATH $ORIGIN/../lib), prints its
#     version and simulates from / (no data files from the source tree);
#   - every installed header compiles on its own as <collstep/NAME.h>, in C
#     and in C++ (C linkage: use_collstep.cpp builds and runs the ring);
#   - use_collstep.c built with pkg-config and with find_package(collstep)
#     builds, verifies and interprets the registry's ring allreduce (its
#     schedule file equal to `collstep gen`'s) and simulates it: the same
#     time as `collstep sim`, and no less than the ring's bandwidth bound;
#     with CUDA it counts GPUs through the installed GPU executor;
#   - use_planner.c, built the same two ways, plans through the installed
#     planner (collstep::planner): its choice is the row `collstep plan
#     --all` marks chosen, and the tuning table it writes with cs_tuning.h
#     is read back and run by the installed `collstep sim --algo auto`; its
#     plan in two shards, parts written, read back and merged, chooses the
#     same;
#   - use_calibrate.c, built the same two ways, calibrates through the
#     installed calibration library (collstep::calibrate): from the
#     recorded measurements of tests/calibrate it derives and writes the
#     platform and the JSON that `collstep calibrate` wrote from them, byte
#     for byte; and it runs a job of two ranks of its own (127.0.0.1),
#     measures, writes a platform the installed `collstep platform show`
#     loads and whose JSON derives the same platform again (the live part
#     says SKIP and is left out where the machine cannot start the job);
#   - use_validate.c, built the same two ways, validates through the
#     installed validation library (collstep::validate): a job of two ranks
#     of its own (127.0.0.1, tcp) runs the ring allreduce live at 4 KiB and
#     rank 0 predicts it on a preset and prints the report's table (the
#     live part says SKIP and is left out where the machine cannot start
#     the job);
#   - the prefix moved elsewhere still runs and builds (RUNPATH, .pc and
#     the CMake package are relative to themselves);
#   - with SGLIBDIR (the folder of the libsimgrid the calling build chose,
#     cmake/CollstepSimGrid.cmake; its CS_SIMGRID_* choices as CMAKE_ARGs),
#     the installed collstep and every program built against the
#     installation load that libsimgrid, with no LD_LIBRARY_PATH: a patched
#     SimGrid outside the system's folders is reached through RUNPATH.
set -u
if [ $# -lt 3 ]; then
    echo "usage: install_test.sh SRC WORK cuda|nocuda [SGLIBDIR [CMAKE_ARG...]]" >&2
    exit 2
fi
src=$1 work=$2 mode=$3 sglibdir=${4:-}
shift 3
[ $# -gt 0 ] && shift
CC=${CC:-cc}

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
# run LOG CMD...: run quietly, show the log's tail when it fails
run() {
    log=$1; shift
    "$@" >"$log" 2>&1 || { tail -n 40 "$log" >&2; fail "$* (log: $log)"; }
}

case $mode in
cuda)
    with_cuda=ON
    nvcc=${CUDACXX:-}
    [ -n "$nvcc" ] || nvcc=$(command -v nvcc 2>/dev/null) || nvcc=/usr/local/cuda/bin/nvcc
    [ -x "$nvcc" ] || skip "no nvcc (CUDA Toolkit) on this machine"
    cuda_home=$(dirname "$(dirname "$nvcc")")
    [ -f "$cuda_home/include/nccl.h" ] || [ -f /usr/include/nccl.h ] || skip "no nccl.h"
    # the GPU executor is part of exec/, which needs libfabric and pmix
    pkg-config --exists libfabric pmix || skip "no libfabric / pmix (pkg-config)"
    ;;
nocuda) with_cuda=OFF ;;
*) fail "mode must be cuda or nocuda, not '$mode'" ;;
esac
gen=
command -v ninja >/dev/null 2>&1 && gen="-G Ninja"

rm -rf "$work"
mkdir -p "$work" || fail "cannot create $work"
work=$(cd "$work" && pwd)
bld=$work/build prefix=$work/prefix

# ---- configure, build, install ----------------------------------------
# The project's default build type (RelWithDebInfo), as a user gets it.
# shellcheck disable=SC2086
run "$work/configure.log" cmake -S "$src" -B "$bld" $gen \
    -DCS_BUILD_TESTS=OFF -DCS_WITH_CUDA=$with_cuda -DCMAKE_INSTALL_PREFIX="$prefix" "$@"
run "$work/build.log" cmake --build "$bld" -j2
run "$work/install.log" cmake --install "$bld"
rm -rf "$bld"

# ---- what is installed -------------------------------------------------
lib=$prefix/lib inc=$prefix/include/collstep
for f in bin/collstep lib/libcs_core.a lib/libcs_algos.a lib/libcs_platforms.a \
         lib/libcs_traces.a lib/libcs_sim.a lib/libcs_exec.a lib/libcs_planner.a \
         lib/libcs_calibrate.a include/collstep/cs_calibrate.h \
         lib/libcs_validate.a include/collstep/cs_validate.h include/collstep/cs_timed.h \
         include/collstep/cs_sched.h include/collstep/cs_algo.h include/collstep/cs_verify.h \
         include/collstep/cs_sim.h include/collstep/cs_platform.h include/collstep/cs_engine.h \
         include/collstep/cs_planner.h include/collstep/cs_tuning.h \
         lib/pkgconfig/collstep.pc lib/cmake/collstep/collstepConfig.cmake \
         lib/cmake/collstep/collstepConfigVersion.cmake lib/cmake/collstep/collstepTargets.cmake; do
    [ -f "$prefix/$f" ] || fail "not installed: $f"
done
if pkg-config --exists libxml-2.0; then  # interop/ is built with libxml2
    for f in lib/libcs_interop.a include/collstep/cs_msccl.h; do
        [ -f "$prefix/$f" ] || fail "not installed: $f"
    done
fi
gpu_files="lib/libcs_gpu_kernels.so lib/libcs_exec_gpu.a include/collstep/cs_gpu.h"
for f in $gpu_files; do
    if [ $mode = cuda ]; then
        [ -f "$prefix/$f" ] || fail "CUDA build without $f (configure: $work/configure.log)"
    else
        [ ! -e "$prefix/$f" ] || fail "-DCS_WITH_CUDA=OFF installed $f"
    fi
done
for h in "$inc"/*_int.h "$inc"/tp_*.h "$inc"/cs_plat_model.h "$inc"/cli.h; do
    [ ! -e "$h" ] || fail "internal header installed: $h"
done
if grep -rl -e "$bld" "$inc" "$lib/pkgconfig" "$lib/cmake" >/dev/null; then
    fail "installed files name the build tree: $(grep -rl -e "$bld" "$inc" "$lib/pkgconfig" "$lib/cmake")"
fi

# sg_check BIN: BIN, which simulates, loads the libsimgrid in SGLIBDIR
# (nothing without SGLIBDIR)
sg_check() {
    [ -n "$sglibdir" ] || return 0
    r=$(env -u LD_LIBRARY_PATH ldd "$1" | awk '$1 ~ /^libsimgrid\.so/ { print $3 }')
    [ "$(dirname "$(readlink -f "$r")")" = "$(readlink -f "$sglibdir")" ] ||
        fail "$1 loads libsimgrid from '$r', not from $sglibdir"
}

# ---- the installed command ---------------------------------------------
coll=$prefix/bin/collstep
sg_check "$coll"
readelf -d "$coll" | grep -q 'R.*PATH.*\$ORIGIN/\.\./lib' || fail "collstep has no \$ORIGIN/../lib RUNPATH"
if [ $mode = cuda ]; then
    readelf -d "$coll" | grep -q 'NEEDED.*libcs_gpu_kernels\.so' || fail "collstep does not use libcs_gpu_kernels.so"
fi
missing=$(env -u LD_LIBRARY_PATH ldd "$coll" | grep 'not found')
[ -z "$missing" ] || fail "collstep misses libraries: $missing"
export PKG_CONFIG_PATH="$lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
version=$(pkg-config --modversion collstep) || fail "pkg-config does not know collstep"
out=$(cd / && env -u LD_LIBRARY_PATH "$coll" --version) || fail "collstep --version exits $?"
case $out in "collstep $version "*) ;; *) fail "collstep --version: '$out', expected version $version" ;; esac
echo "$out"

# `collstep sim` from / ; prints the csv's time_us
plat=x86-p100-pcie-10gbe ranks=8 bytes=1048576
sim_cli() {
    (cd / && env -u LD_LIBRARY_PATH "$1" sim --platform $plat --algo ring --ranks $ranks \
        --size $bytes --format csv) >"$work/sim.csv" || fail "$1 sim exits $?"
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "time_us") c = i }
             NR == 2 && c { print $c }' "$work/sim.csv"
}
t_cli=$(sim_cli "$coll")
[ -n "$t_cli" ] || fail "collstep sim printed no time: $(cat "$work/sim.csv")"
# Ring allreduce on two 4-GPU nodes over one 10 Gb/s NIC each: at least
# 2 (P-1)/P of the message crosses it, 1468 us for 1 MiB.
awk -v t="$t_cli" 'BEGIN { exit !(t >= 2 * 7 / 8 * 1048576 / 1.25e9 * 1e6) }' ||
    fail "collstep sim: $t_cli us is below the ring's bandwidth bound"
(cd "$work" && "$coll" gen allreduce ring --ranks $ranks -o cli.sched) || fail "collstep gen exits $?"
echo "collstep sim: ring $ranks ranks $bytes B on $plat: $t_cli us"

# ---- every header on its own -------------------------------------------
cflags=$(pkg-config --cflags collstep) || fail "pkg-config --cflags collstep"
for h in "$inc"/*.h; do
    # shellcheck disable=SC2086
    printf '#include <collstep/%s>\nint main(void) { return 0; }\n' "${h##*/}" |
        $CC -std=gnu11 -Wall -Wextra -Werror $cflags -fsyntax-only -x c - ||
        fail "<collstep/${h##*/}> does not compile on its own"
done

# ...and from C++: every header compiles as C++17 and declares C linkage
# (use_collstep.cpp links against the C libraries)
CXX=${CXX:-c++}
for h in "$inc"/*.h; do
    # shellcheck disable=SC2086
    printf '#include <collstep/%s>\nint main() { return 0; }\n' "${h##*/}" |
        $CXX -std=c++17 -Wall -Wextra -Werror $cflags -fsyntax-only -x c++ - ||
        fail "<collstep/${h##*/}> does not compile as C++"
done
# shellcheck disable=SC2046
$CXX -std=c++17 -Wall -Wextra -Werror -o "$work/use_cpp" "$src/tests/install/use_collstep.cpp" \
    $(pkg-config --cflags --libs collstep) || fail "use_collstep.cpp does not build (C linkage?)"
out=$(cd / && env -u LD_LIBRARY_PATH "$work/use_cpp" $ranks "$work/use_cpp.sched") ||
    fail "use_collstep.cpp exits $?"
echo "use_cpp: $out"
echo "$out" | grep -q "^verified ring $ranks ranks [0-9]* steps$" || fail "use_cpp: no verified schedule"
cmp -s "$work/use_cpp.sched" "$work/cli.sched" || fail "use_cpp: schedule differs from collstep gen's"

# ---- a user's program ---------------------------------------------------
# check_prog NAME BIN [sim]: run BIN, compare its schedule with collstep gen
# and its simulated time with collstep sim
check_prog() {
    name=$1 bin=$2
    if [ "${3:-}" = sim ]; then
        out=$(cd / && env -u LD_LIBRARY_PATH "$bin" ring $ranks "$work/$name.sched" $plat $bytes) ||
            fail "$name exits $?"
    else
        out=$(cd / && env -u LD_LIBRARY_PATH "$bin" ring $ranks "$work/$name.sched") ||
            fail "$name exits $?"
    fi
    echo "$name: $out" | tr '\n' ' '
    echo
    echo "$out" | grep -q "^verified ring $ranks ranks [0-9]* steps$" || fail "$name: no verified schedule"
    cmp -s "$work/$name.sched" "$work/cli.sched" || fail "$name: schedule differs from collstep gen's"
    if [ "${3:-}" = sim ]; then
        t=$(echo "$out" | sed -n 's/^sim_time_us //p')
        [ "$t" = "$t_cli" ] || fail "$name: simulated $t us, collstep sim $t_cli us"
        # the whole installation: the GPU executor exactly when CUDA is on
        if [ $mode = cuda ]; then
            echo "$out" | grep -q '^gpu_devices \([0-9][0-9]*\|none\)$' || fail "$name: no GPU probe"
            readelf -d "$bin" | grep -q 'NEEDED.*libcs_gpu_kernels\.so' ||
                fail "$name does not use libcs_gpu_kernels.so"
        else
            ! echo "$out" | grep -q '^gpu_devices' || fail "$name: a GPU probe without CUDA"
        fi
    else
        ! echo "$out" | grep -q '^gpu_devices' || fail "$name: collstep::algos defines CS_HAVE_NCCL"
    fi
}
# shellcheck disable=SC2046
$CC -std=gnu11 -Wall -Wextra -Werror -DUSE_SIM -o "$work/use_pc" "$src/tests/install/use_collstep.c" \
    $(pkg-config --cflags --libs collstep) || fail "use_collstep.c does not build with pkg-config"
check_prog use_pc "$work/use_pc" sim
sg_check "$work/use_pc"

cmake_user() { # cmake_user PREFIX DIR: configure and build tests/install/consumer
    # shellcheck disable=SC2086
    run "$2.log" cmake -S "$src/tests/install/consumer" -B "$2" $gen -DCMAKE_PREFIX_PATH="$1" \
        -DCMAKE_C_COMPILER="$CC"
    run "$2.build.log" cmake --build "$2"
}
cmake_user "$prefix" "$work/cmake_user"
check_prog use_cmake "$work/cmake_user/use_collstep" sim
sg_check "$work/cmake_user/use_collstep"

# ---- a user's program that plans ---------------------------------------
# The choice `collstep plan --all` marks (csv: algo,"params",order,time_us)
plan_bytes=1048576
(cd / && env -u LD_LIBRARY_PATH "$coll" plan --platform $plat --ranks $ranks --size $plan_bytes \
    --all --jobs 2 --format csv 2>/dev/null) >"$work/plan.csv" || fail "collstep plan exits $?"
plan_cli=$(awk -F, 'NR > 1 && $NF == 1 { split($0, q, "\""); split(q[3], r, ",");
                                          print $3, "\"" q[2] "\"", r[2], r[3] }' "$work/plan.csv")
[ -n "$plan_cli" ] || fail "collstep plan chose nothing: $(cat "$work/plan.csv")"
# check_plan NAME BIN: BIN plans as collstep plan does; its table runs
check_plan() {
    out=$(cd / && env -u LD_LIBRARY_PATH "$2" $plat $ranks $plan_bytes "$work/$1.tuning") ||
        fail "$1 exits $?"
    echo "$1: $out" | tr '\n' ' '
    echo
    got=$(echo "$out" | sed -n 's/^choice //p')
    [ "$got" = "$plan_cli" ] || fail "$1: chose '$got', collstep plan '$plan_cli'"
    got=$(echo "$out" | sed -n 's/^tuning //p')
    [ "$got" = "${plan_cli% * *}" ] || fail "$1: its tuning table reads back as '$got'"
    got=$(echo "$out" | sed -n 's/^merged 2 shards: //p')
    [ "$got" = "$plan_cli" ] || fail "$1: its two shards merged chose '$got', collstep plan '$plan_cli'"
    (cd / && env -u LD_LIBRARY_PATH "$coll" sim --platform $plat --ranks $ranks --size $plan_bytes \
        --algo auto --tuning "$work/$1.tuning" --format csv) >"$work/$1.sim.csv" ||
        fail "collstep sim --algo auto --tuning (written by $1) exits $?"
}
# shellcheck disable=SC2046
$CC -std=gnu11 -Wall -Wextra -Werror -o "$work/use_planner_pc" "$src/tests/install/use_planner.c" \
    $(pkg-config --cflags --libs collstep) || fail "use_planner.c does not build with pkg-config"
check_plan use_planner_pc "$work/use_planner_pc"
check_plan use_planner_cmake "$work/cmake_user/use_planner"
check_prog use_cmake_algos "$work/cmake_user/use_collstep_algos"
if readelf -d "$work/cmake_user/use_collstep_algos" | grep -q 'NEEDED.*\(simgrid\|pmix\|cudart\|nccl\|igraph\)'; then
    fail "collstep::algos alone links $(readelf -d "$work/cmake_user/use_collstep_algos" | grep NEEDED)"
fi

# ---- a user's program that calibrates ------------------------------------
rec=$src/tests/calibrate/netns-3x2
# check_calib NAME BIN: BIN derives what calibrate wrote; its live job
check_calib() {
    out=$(cd / && env -u LD_LIBRARY_PATH "$2" derive "$rec.json" "$work/$1.xml" "$work/$1.json") ||
        fail "$1 derive exits $?"
    echo "$1: $out"
    cmp -s "$work/$1.xml" "$rec.xml" || fail "$1: its platform differs from $rec.xml"
    cmp -s "$work/$1.json" "$rec.json" || fail "$1: its JSON differs from $rec.json"
    out=$(cd / && env -u LD_LIBRARY_PATH "$2" live "$work/$1.live.xml" "$work/$1.live.json" 2>&1)
    rc=$?
    echo "$1: $out"
    if [ $rc = 77 ]; then
        echo "$1: SKIP: the live part (the job could not start here)"
        return
    fi
    [ $rc = 0 ] || fail "$1 live exits $rc"
    echo "$out" | grep -q "^live 2 ranks 1 nodes .*read back: same platform$" || fail "$1: live: $out"
    (cd / && env -u LD_LIBRARY_PATH "$coll" platform show "$work/$1.live.xml") >"$work/$1.show" ||
        fail "collstep platform show (the platform of $1) exits $?"
    grep -q "^host " "$work/$1.show" || fail "$1: platform show: no host tier: $(head -5 "$work/$1.show")"
}
# shellcheck disable=SC2046
$CC -std=gnu11 -Wall -Wextra -Werror -o "$work/use_calibrate_pc" "$src/tests/install/use_calibrate.c" \
    $(pkg-config --cflags --libs collstep) || fail "use_calibrate.c does not build with pkg-config"
check_calib use_calibrate_pc "$work/use_calibrate_pc"
check_calib use_calibrate_cmake "$work/cmake_user/use_calibrate"

# ---- a user's program that validates -------------------------------------
# check_validate NAME BIN: BIN runs ring live on two ranks and predicts it
check_validate() {
    out=$(cd / && env -u LD_LIBRARY_PATH "$2" $plat 2>&1)
    rc=$?
    echo "$1: $(echo "$out" | tail -n 1)"
    if [ $rc = 77 ]; then
        echo "$1: SKIP: the live part (the job could not start here)"
        return
    fi
    [ $rc = 0 ] || fail "$1 exits $rc: $out"
    echo "$out" | grep -q "^validated ring 2 ranks 4096 B: measured [0-9.]* us, predicted [0-9.]* us$" ||
        fail "$1: $out"
    echo "$out" | grep -q "^# collstep validate allreduce, 2 ranks on 1 nodes, transport tcp; predicted on $plat (ideal model)$" ||
        fail "$1: no report table: $out"
    echo "$out" | grep -qE "^#  overall +[0-9.]+ +[0-9.]+ +[0-9.]+$" || fail "$1: no overall |error|: $out"
}
# shellcheck disable=SC2046
$CC -std=gnu11 -Wall -Wextra -Werror -o "$work/use_validate_pc" "$src/tests/install/use_validate.c" \
    $(pkg-config --cflags --libs collstep) || fail "use_validate.c does not build with pkg-config"
check_validate use_validate_pc "$work/use_validate_pc"
check_validate use_validate_cmake "$work/cmake_user/use_validate"

# ---- the prefix moved ---------------------------------------------------
moved=$work/moved
mv "$prefix" "$moved" || fail "cannot move the prefix"
out=$(cd / && env -u LD_LIBRARY_PATH "$moved/bin/collstep" --version) || fail "moved collstep --version exits $?"
t=$(sim_cli "$moved/bin/collstep")
[ "$t" = "$t_cli" ] || fail "moved collstep sim: $t us, before $t_cli us"
export PKG_CONFIG_PATH="$moved/lib/pkgconfig"
# shellcheck disable=SC2046
$CC -std=gnu11 -o "$work/use_pc_moved" "$src/tests/install/use_collstep.c" -DUSE_SIM \
    $(pkg-config --cflags --libs collstep) || fail "use_collstep.c does not build with the moved .pc"
check_prog use_pc_moved "$work/use_pc_moved" sim
cmake_user "$moved" "$work/cmake_user_moved"
check_prog use_cmake_moved "$work/cmake_user_moved/use_collstep" sim
for b in "$moved/bin/collstep" "$work/use_pc_moved" "$work/cmake_user_moved/use_collstep"; do
    sg_check "$b"
done

rm -rf "$work"
echo "PASS: install ($mode)"
