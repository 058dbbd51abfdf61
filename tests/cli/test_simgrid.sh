#!/usr/bin/env bash
# test_simgrid.sh COLLSTEP SET LIBDIR DESCRIBE - `collstep --version` names
# the SimGrid configure chose (cmake/CollstepSimGrid.cmake) and runs on it:
#   - its second line: "SimGrid X.Y.Z with|without the maestro activity set:
#     FILE", with (SET 1) or without (SET 0), FILE in LIBDIR, the folder of
#     the libsimgrid configure chose; its third: "configured with SimGrid
#     DESCRIBE";
#   - the loader resolves collstep's libsimgrid in LIBDIR without
#     LD_LIBRARY_PATH; when LIBDIR is not the system's SimGrid's, through
#     collstep's RUNPATH;
#   - a patched build's collstep made to load the system's 3.32 instead
#     (LD_LIBRARY_PATH) says so: without the set, that library's file.
set -u
if [ $# -ne 4 ]; then
  echo "usage: test_simgrid.sh COLLSTEP SET LIBDIR DESCRIBE" >&2
  exit 2
fi
cs=$1 set=$2 libdir=$(readlink -f "$3") describe=$4
pass=0 fail=0
ok() { pass=$((pass+1)); }
ko() { fail=$((fail+1)); echo "FAIL: $*"; }

out=$(env -u LD_LIBRARY_PATH "$cs" --version) || ko "collstep --version exits $?"
echo "$out"
word=without
[ "$set" = 1 ] && word=with
line=$(echo "$out" | sed -n 2p)
file=${line#*activity set: }
case $line in
  "SimGrid "[0-9]*.[0-9]*.[0-9]*" $word the maestro activity set: /"*) ok ;;
  *) ko "line 2: '$line', expected 'SimGrid X.Y.Z $word the maestro activity set: FILE'" ;;
esac
[ "$(dirname "$(readlink -f "$file")")" = "$libdir" ] && ok || ko "collstep runs on $file, configure chose $libdir"
[ "$(echo "$out" | sed -n 3p)" = "configured with SimGrid $describe" ] && ok ||
  ko "line 3: '$(echo "$out" | sed -n 3p)', expected 'configured with SimGrid $describe'"

resolved=$(env -u LD_LIBRARY_PATH ldd "$cs" | awk '$1 ~ /^libsimgrid\.so/ { print $3 }')
[ "$(dirname "$(readlink -f "$resolved")")" = "$libdir" ] && ok || ko "ldd resolves libsimgrid to '$resolved', not in $libdir"

sysdir=$(pkg-config --variable=libdir simgrid 2>/dev/null)
sysdir=$(readlink -f "${sysdir:-/nonexistent}")
if [ "$libdir" != "$sysdir" ]; then
  readelf -d "$cs" | grep -E 'R(UN)?PATH' | grep -qF "$3" && ok || ko "$libdir is not in collstep's RUNPATH: $(readelf -d "$cs" | grep PATH)"
  if [ -n "$(ls "$sysdir"/libsimgrid.so.* 2>/dev/null)" ]; then
    out=$(LD_LIBRARY_PATH=$sysdir "$cs" --version) || ko "collstep --version (system SimGrid) exits $?"
    line=$(echo "$out" | sed -n 2p)
    # without the set, unless the system's SimGrid is >= 3.34
    v=$(echo "$line" | awk '{ print $2 }')
    w=without
    [ "$(printf '3.34\n%s\n' "$v" | sort -V | head -n 1)" = 3.34 ] && w=with
    case $line in
      "SimGrid $v $w the maestro activity set: $sysdir/"*) ok ;;
      *) ko "with LD_LIBRARY_PATH=$sysdir: '$line', expected SimGrid $v $w the set, from $sysdir" ;;
    esac
  fi
fi
echo "test_simgrid: $pass passed, $fail failed"
[ $fail -eq 0 ]
