#!/usr/bin/env bash
# setup-simgrid.sh - a SimGrid whose maestro keeps its activities in a set
# (called by scripts/setup.sh; docs/install.md has the user's side).
#
# SimGrid before 3.34 keeps the activities that maestro runs in a list that
# it scans on every completion; collstep's activity-DAG engine runs every
# transfer and reduction from maestro, so it needs 3.34's set.  When
# pkg-config finds no SimGrid >= 3.34, this builds the system's version from
# Debian's source package with the patches of scripts/simgrid/ applied in
# name order (maestro-activity-set.patch, the fix; route-cache.patch, routes
# of recent host pairs remembered; sendto-direct.patch, host-to-host comms
# started from maestro without an s4u::Comm or maestro's set;
# zone-dijkstra-seal.patch, Dijkstra routing and netzone sealing in time
# linear in the platform), into
#
#   $CS_SIMGRID_CACHE/simgrid-VERSION-HASH/    (default /var/cache/collstep)
#
# HASH: the first 12 hex digits of the SHA-256 of the patches one after the
# other, so fresh clones, scratch homes and CI reuse one build, and a
# changed patch builds anew (cmake/CollstepSimGrid.cmake computes the same).
# A prefix holding collstep-simgrid.stamp (written last) is complete and is
# reused; nothing is built then.  The build happens in a temporary folder
# beside it and is renamed into place, so an interrupted build leaves no
# half-made prefix (and its leftovers are removed by the next run).
# CMake (cmake/CollstepSimGrid.cmake) looks for the same folder.
#
#   scripts/setup-simgrid.sh                   build once, then reuse
#   CS_SIMGRID_REBUILD=1 scripts/setup-simgrid.sh   build again, replace
#   CS_SIMGRID_JOBS=N                          parallel jobs (default: cores)
#
# Without root (no packages to install) or with a cache folder it cannot
# write, it says so and exits 0: collstep then builds on the system SimGrid.
set -euo pipefail
cd "$(dirname "$0")/.."
LC_COLLATE=C
patches=("$PWD"/scripts/simgrid/*.patch)   # name order (the glob sorts, bytewise)
cache=${CS_SIMGRID_CACHE:-/var/cache/collstep}
say() { echo "setup-simgrid: $*" >&2; }

if pkg-config --atleast-version=3.34 simgrid 2>/dev/null; then
  say "SimGrid $(pkg-config --modversion simgrid) keeps maestro's activities in a set: nothing to build"
  exit 0
fi
# The system's SimGrid (libsimgrid-dev, which setup.sh installs) says which
# version to rebuild: its Debian source version, e.g. 3.32-2.
srcver=$(dpkg-query -W -f='${source:Version}' libsimgrid-dev 2>/dev/null) || {
  say "libsimgrid-dev is not installed: nothing to rebuild"
  exit 0
}
version=${srcver%-*}
version=${version#*:}
hash=$(cat "${patches[@]}" | sha256sum | cut -c1-12)
prefix=$cache/simgrid-$version-$hash
stamp=collstep-simgrid.stamp

if [ -f "$prefix/$stamp" ] && [ "${CS_SIMGRID_REBUILD:-0}" != 1 ]; then
  say "reusing $prefix"
  exit 0
fi
if ! mkdir -p "$cache" 2>/dev/null || [ ! -w "$cache" ]; then
  say "cannot write $cache: collstep builds on the system SimGrid $version, without the fix"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  say "not root (no packages to install): collstep builds on the system SimGrid $version, without the fix"
  exit 0
fi

# One build at a time; a second setup.sh waits, then finds the stamp.
exec 9>"$cache/.simgrid.lock"
flock 9
if [ -f "$prefix/$stamp" ] && [ "${CS_SIMGRID_REBUILD:-0}" != 1 ]; then
  say "reusing $prefix (built meanwhile)"
  exit 0
fi
rm -rf "$cache"/.simgrid-build.*   # what an interrupted build left

# What the build needs beyond setup.sh's packages: dpkg-source, Boost.
need=(dpkg-dev libboost-dev xz-utils)
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Debian's source packages: a deb-src entry of collstep's own, with the
# archive and key of the system's first Debian entry.
srcfile=/etc/apt/sources.list.d/collstep-deb-src.sources
if ! apt-cache showsrc simgrid 2>/dev/null | grep -qx "Version: $srcver"; then
  # shellcheck disable=SC1091
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  uri=http://deb.debian.org/debian key=/usr/share/keyrings/debian-archive-keyring.gpg
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    uri=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
    key=$(awk '/^Signed-By:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
  fi
  say "adding $srcfile (deb-src $uri $codename main)"
  printf '%s\n' "# collstep (scripts/setup-simgrid.sh): Debian's source packages, to rebuild SimGrid" \
    "Types: deb-src" "URIs: $uri" "Suites: $codename" "Components: main" "Signed-By: $key" >"$srcfile"
  apt-get update -qq
fi

tmp=$(mktemp -d "$cache/.simgrid-build.XXXXXX")
log=$tmp/log
# Each step runs in a session of its own, waited for in the background, so
# that Ctrl-C or a TERM stops it at once, compilers included, and the
# temporary folder goes with it.
child=
stop() {
  [ -z "$child" ] || kill -TERM -- "-$child" 2>/dev/null
  wait 2>/dev/null
  exit "$1"
}
trap 'rm -rf "$tmp"' EXIT
trap 'stop 130' INT
trap 'stop 143' TERM
fail() { tail -n 30 "$log" >&2; say "$1 failed"; exit 1; }
# step WHAT CMD...: CMD in its own session, its output in the log
step() {
  local what=$1
  shift
  setsid "$@" >>"$log" 2>&1 </dev/null &
  child=$!
  wait "$child" || fail "$what"
  child=
}
start=$(date +%s)
say "building SimGrid $srcver with $(cd "$PWD/scripts/simgrid" && echo *.patch) into $prefix (log: $log)"
step "apt-get source simgrid=$srcver" env -C "$tmp" apt-get source -qq --download-only "simgrid=$srcver"
step "dpkg-source -x" env -C "$tmp" dpkg-source -x "simgrid_${srcver#*:}.dsc" src
for p in "${patches[@]}"; do
  step "applying $(basename "$p")" patch -d "$tmp/src" -p1 -i "$p"
done

# Only the library, its headers and simgrid.pc are used: no SMPI, bindings,
# documentation, model checker, ns-3 or LTO (a long serial link); the
# library's own -O3, as Debian builds it, but no debug information (SimGrid
# always adds -g3; the build type's -g0 comes after it).  No
# CMAKE_BUILD_TYPE of CMake's own: Release's -DNDEBUG breaks SimGrid.
# ccache when there is one.
cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=CsNoDebug -DCMAKE_C_FLAGS_CSNODEBUG=-g0
            -DCMAKE_CXX_FLAGS_CSNODEBUG=-g0 -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib
            -Denable_smpi=OFF -Denable_msg=OFF -Denable_java=OFF -Denable_python=OFF
            -Denable_documentation=OFF -Denable_model-checking=OFF -Denable_ns3=OFF -Denable_lto=OFF
            -Denable_fortran=OFF -Denable_compile_warnings=OFF)
if command -v ccache >/dev/null; then
  export CCACHE_DIR=$cache/ccache CCACHE_BASEDIR=$tmp
  cmake_args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
jobs=${CS_SIMGRID_JOBS:-$(nproc)}
# (from the build folder: SimGrid's configure leaves a probe in the current one)
mkdir "$tmp/build"
step "configuring SimGrid" env -C "$tmp/build" cmake -S "$tmp/src" -B . "${cmake_args[@]}"
step "building SimGrid" nice cmake --build "$tmp/build" -j "$jobs"
step "installing SimGrid" env DESTDIR="$tmp/stage" cmake --install "$tmp/build"
staged=$tmp/stage$prefix
if [ ! -f "$staged/lib/pkgconfig/simgrid.pc" ] || [ ! -f "$staged/include/simgrid/s4u.hpp" ] ||
   ! ls "$staged"/lib/libsimgrid.so.* >/dev/null 2>&1; then
  fail "the installed SimGrid is incomplete"
fi
secs=$(($(date +%s) - start))
{
  echo "# collstep: SimGrid rebuilt by scripts/setup-simgrid.sh; complete when this file exists"
  echo "version $version"
  echo "debian-source simgrid $srcver"
  for p in "${patches[@]}"; do
    echo "patch $(basename "$p") sha256 $(sha256sum "$p" | cut -d' ' -f1)"
  done
  echo "fix maestro activity set, route cache, direct comms, Dijkstra routing and sealing"
  echo "cmake ${cmake_args[*]}"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) in ${secs} s"
} >"$staged/$stamp"

# Into place: rename(2) within one file system.  An older prefix of the same
# name (a rebuild) is moved aside first and removed after.
if [ -e "$prefix" ]; then
  mv -T "$prefix" "$tmp/old"
fi
mv -T "$staged" "$prefix"
say "SimGrid $version with maestro's activity set in $prefix (${secs} s)"
