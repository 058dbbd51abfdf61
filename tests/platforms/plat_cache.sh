#!/usr/bin/env bash
# plat_cache.sh COLLSTEP XMLDIR - what SimGrid found in a platform file is
# remembered (platforms/cs_plat_cache.c), so the simulation's own load is the
# only one the second time:
#   - the second `platform show` / `sim` of a file reads the cache (said at
#     CS_LOG=debug) and prints the same as the first;
#   - a file changed by one byte, or CS_PLATFORM_CACHE=0, loads in a child
#     again; a cache file cut short is ignored;
#   - a file SimGrid refuses is refused the same way every time, and leaves
#     nothing in the cache.
collstep=$1
dir=$2
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home" XDG_CACHE_HOME="$tmp/cache" TMPDIR="$tmp"
mkdir -p "$HOME"
cache=$tmp/cache/collstep/platforms
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
hit() { grep -q "facts of the platform from" "$1"; }

cp "$dir/dogbone.xml" "$tmp/p.xml"
"$collstep" platform show "$tmp/p.xml" >"$tmp/show1" 2>/dev/null || bad "show 1"
CS_LOG=debug "$collstep" platform show "$tmp/p.xml" >"$tmp/show2" 2>"$tmp/err2" || bad "show 2"
if hit "$tmp/err2"; then ok; else bad "second show did not read the cache"; fi
if cmp -s "$tmp/show1" "$tmp/show2"; then ok; else bad "show differs with the cache"; diff "$tmp/show1" "$tmp/show2" | head; fi
n=$(ls "$cache" | wc -l)
if [ "$n" -ge 1 ]; then ok; else bad "nothing cached"; fi

# sim: first run in a fresh cache loads twice, the second reads the facts
sim() { "$collstep" sim --platform "$1" --algo ring --size 1M --ranks 4 --map "$dir/dogbone.map" --format csv; }
rm -rf "$cache"
sim "$tmp/p.xml" >"$tmp/sim1" 2>"$tmp/simerr1" || { bad "sim 1"; cat "$tmp/simerr1"; }
CS_LOG=debug sim "$tmp/p.xml" >"$tmp/sim2" 2>"$tmp/simerr2" || bad "sim 2"
if hit "$tmp/simerr2"; then ok; else bad "second sim did not read the cache"; fi
if cmp -s "$tmp/sim1" "$tmp/sim2"; then ok; else bad "sim differs with the cache"; fi

# a changed byte, the cache off, a cache file cut short: no hit, same answer
echo "<!-- changed -->" >>"$tmp/p.xml"
CS_LOG=debug "$collstep" platform show "$tmp/p.xml" >/dev/null 2>"$tmp/err3" || bad "show 3"
if hit "$tmp/err3"; then bad "a changed file read the old facts"; else ok; fi
CS_PLATFORM_CACHE=0 CS_LOG=debug "$collstep" platform show "$tmp/p.xml" >/dev/null 2>"$tmp/err4" || bad "show 4"
if hit "$tmp/err4"; then bad "CS_PLATFORM_CACHE=0 read the cache"; else ok; fi
for f in "$cache"/*; do head -c 40 "$f" >"$f.cut" && mv "$f.cut" "$f"; done
CS_LOG=debug "$collstep" platform show "$tmp/p.xml" >"$tmp/show5" 2>"$tmp/err5" || bad "show 5"
if hit "$tmp/err5"; then bad "a cache file cut short was read"; else ok; fi
if grep -q "dogbone\|rank" "$tmp/show5"; then ok; else bad "show after a cut cache"; fi

# refused: the same one line twice, nothing kept
n0=$(ls "$cache" | wc -l)
for i in 1 2; do
    "$collstep" platform show "$dir/bad_simgrid.xml" >/dev/null 2>"$tmp/bad$i"
    rc=$?
    if [ $rc -eq 2 ]; then ok; else bad "bad_simgrid.xml run $i: exit $rc"; fi
done
if cmp -s "$tmp/bad1" "$tmp/bad2"; then ok; else bad "refusals differ"; fi
n1=$(ls "$cache" | wc -l)
if [ "$n0" = "$n1" ]; then ok; else bad "a refused file left facts in the cache"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
