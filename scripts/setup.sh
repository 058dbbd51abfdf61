#!/usr/bin/env bash
# setup.sh - install the Debian packages collstep needs (idempotent: quick
# when everything is installed), make sure there is a SimGrid whose maestro
# keeps its activities in a set (scripts/setup-simgrid.sh: unless the system
# has SimGrid >= 3.34, the system's version rebuilt from Debian's source
# package with that change and the other patches of scripts/simgrid/, once,
# cached in /var/cache/collstep), and
# configure + build into ./build, with warnings as errors (-DCS_WERROR=ON:
# the scripts and CI build that way; a plain `cmake` build does not).
#
#   scripts/setup.sh            packages + SimGrid + release build in ./build
#   scripts/setup.sh --deps     packages + SimGrid only
#   CS_BUILD_DIR=dir CS_BUILD_TYPE=Debug CS_CMAKE_ARGS="-DCS_SANITIZE=ON" scripts/setup.sh
#   CC=clang CXX=clang++ scripts/setup.sh
#                               the compilers (CMake's CC / CXX); a build tree
#                               configured with another C compiler is
#                               configured afresh (cmake --fresh), since CMake
#                               would keep its first compilers
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake ninja-build pkg-config git python3
  clang libclang-rt-14-dev                  # parser fuzzing (libFuzzer)
  time                                      # benchmarks: /usr/bin/time for peak memory
  libsimgrid-dev                            # sim/: SimGrid 3.32 (smpicc, smpirun)
  libgoogle-perftools-dev                   # sim/: tcmalloc (SimGrid allocates per message)
  libigraph-dev                             # platforms/: topology graphs
  libxml2-dev                               # platforms/: SimGrid platform files (libxml-2.0)
  libfabric-dev libfabric-bin               # exec/: libfabric transport
  libpmix-dev openmpi-bin libopenmpi-dev    # exec/: PMIx bootstrap, mpirun, baseline
  gnuplot-nox                               # traces/: utilization plots
  iproute2                                  # tests: network namespaces
  slurmctld slurmd slurm-client munge       # tests: a private Slurm cluster (srun --mpi=pmix)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing packages: ${missing[*]} (run as root, or install them)" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The patched SimGrid: a few seconds when it is cached, else a build
# (docs/install.md, "SimGrid"); CMake picks it up (cmake/CollstepSimGrid.cmake).
scripts/setup-simgrid.sh
[ "${1:-}" = "--deps" ] && exit 0

build=${CS_BUILD_DIR:-build}
fresh=()
if [ -n "${CC:-}" ] && [ -f "$build/CMakeCache.txt" ]; then
  cached=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
  want=$(command -v "$CC" || echo "$CC")
  if [ "$(readlink -f "$cached")" != "$(readlink -f "$want")" ]; then
    echo "setup: $build was configured with $cached, now $CC: configuring afresh" >&2
    fresh=(--fresh)
  fi
fi
# shellcheck disable=SC2086
cmake "${fresh[@]}" -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${CS_BUILD_TYPE:-RelWithDebInfo} \
  -DCS_WERROR=ON ${CS_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$(nproc)"
