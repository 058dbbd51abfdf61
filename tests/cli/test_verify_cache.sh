#!/usr/bin/env bash
# test_verify_cache.sh COLLSTEP [sim] - the cache of schedules that verified
# ($XDG_CACHE_HOME/collstep/verified, else ~/.cache/collstep/verified)
# answers only the implicit check of sim (and run, validate); verification
# asked for always verifies:
#   - gen --verify of a 64-rank ring records it (in either cache location);
#   - with it recorded, gen --verify, export msccl and verify under
#     CS_VERIFY_MAX_MEM=64K still refuse it (exit 2, "too large to verify")
#     and write nothing;
#   - (with "sim") sim under the same limit is answered by the cache
#     (exit 0), and refuses with an empty cache or CS_VERIFY_CACHE=0.
set -u
cs=$(readlink -f "$1")
with_sim=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { # check "what" expected_rc cmd...
    local what=$1 want=$2; shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
    if [ "$rc" -eq "$want" ]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "FAIL: $what: exit $rc, expected $want"; cat "$tmp/out" "$tmp/err" | head -5; fi
}
grep_err() { # grep_err "what" pattern
    if grep -q -- "$2" "$tmp/err"; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "FAIL: $1: '$2' not in stderr:"; head -5 "$tmp/err"; fi
}
absent() { # absent "what" file
    if [ ! -e "$2" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1: $2 was written"; fi
}
entries() { find "$1" -type f 2>/dev/null | wc -l; }
ring=(gen allreduce ring --ranks 64)

for layout in xdg home; do
    if [ $layout = xdg ]; then
        export XDG_CACHE_HOME=$tmp/xdg HOME=$tmp/nohome
        dir=$tmp/xdg/collstep/verified
    else
        unset XDG_CACHE_HOME
        export HOME=$tmp/home
        dir=$tmp/home/.cache/collstep/verified
    fi
    # the user verifies a 64-rank ring, as anyone trying gen does
    check "$layout: gen --verify" 0 "$cs" "${ring[@]}" --verify -o "$tmp/r64.sched"
    n=$(entries "$dir")
    if [ "$n" -eq 1 ]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "FAIL: $layout: $n entries in $dir after gen --verify, expected 1"; fi
    # asked for: verified, whatever the cache holds
    check "$layout: gen --verify over the memory limit, cached" 2 \
        env CS_VERIFY_MAX_MEM=64K "$cs" "${ring[@]}" --verify -o "$tmp/again.sched"
    grep_err "$layout: gen --verify refusal" "too large to verify"
    absent "$layout: refused gen" "$tmp/again.sched"
    check "$layout: verify over the memory limit, cached" 2 \
        env CS_VERIFY_MAX_MEM=64K "$cs" verify "$tmp/r64.sched"
    grep_err "$layout: verify refusal" "too large to verify"
    check "$layout: export over the memory limit, cached" 2 \
        env CS_VERIFY_MAX_MEM=64K "$cs" export msccl --coll allreduce --algo ring --ranks 64 \
        --no-limits -o "$tmp/r64.xml"
    grep_err "$layout: export refusal" "too large to verify"
    absent "$layout: refused export" "$tmp/r64.xml"
    check "$layout: export, cached, no limit" 0 \
        "$cs" export msccl --coll allreduce --algo ring --ranks 64 --no-limits -o "$tmp/r64.xml"
    rm -f "$tmp/r64.xml"
    # the implicit check of sim is what the cache is for
    if [ "$with_sim" = sim ]; then
        sim=("$cs" sim --platform summit:nodes=11 --ranks 64 --coll allreduce --algo ring --size 1M)
        check "$layout: sim over the memory limit, cached" 0 env CS_VERIFY_MAX_MEM=64K "${sim[@]}"
        check "$layout: sim over the memory limit, CS_VERIFY_CACHE=0" 2 \
            env CS_VERIFY_CACHE=0 CS_VERIFY_MAX_MEM=64K "${sim[@]}"
        grep_err "$layout: sim refusal" "too large to verify"
        rm -rf "$dir"
        check "$layout: sim over the memory limit, empty cache" 2 env CS_VERIFY_MAX_MEM=64K "${sim[@]}"
        # sim remembers what it verified; gen --verify still verifies
        check "$layout: sim records" 0 "${sim[@]}"
        n=$(entries "$dir")
        if [ "$n" -eq 1 ]; then pass=$((pass + 1)); else
            fail=$((fail + 1)); echo "FAIL: $layout: $n entries in $dir after sim, expected 1"; fi
        check "$layout: gen --verify over the memory limit, cached by sim" 2 \
            env CS_VERIFY_MAX_MEM=64K "$cs" "${ring[@]}" --verify
    fi
    rm -f "$tmp/r64.sched"
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
