#!/usr/bin/env bash
# test_hermetic.sh HERMETIC COLLSTEP BUILD CTEST [sim] - every test runs
# through tests/hermetic.sh (HERMETIC), and it keeps a previous user's home
# and environment out of the test:
#   - ctest's own list of BUILD's tests: every command is
#     `bash HERMETIC STATE ... -- ...`;
#   - a home full of a previous user's collstep cache (a verified 64-rank
#     ring, junk), their exported CS_* / RANK / PMIX_* / XDG_* / TMPDIR: the
#     command sees an empty HOME, caches and TMPDIR of its own, none of those
#     variables, and the VAR=VALUE it was given;
#   - (with "sim") the result that home would change: sim under
#     CS_VERIFY_MAX_MEM=64K of that ring passes from the dirty home's cache
#     without the wrapper, and is refused (exit 2) through it;
#   - every run is fresh: what a run left in HOME is gone, its TMPDIR removed
#     at its end, or by the next run when it was killed with SIGKILL;
#   - exit status 77 and 3 pass through; a command killed by SIGSEGV is
#     reported as killed by SIGSEGV; a STATE folder it did not make is
#     refused and left alone.
set -u
hermetic=$(readlink -f "$1") cs=$(readlink -f "$2") build=$3 ctest=$4 with_sim=${5:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
expect() { # expect "what" want got
    if [ "$2" = "$3" ]; then ok; else bad "$1: '$3', expected '$2'"; fi
}

# 1. every test of the build goes through the wrapper
"$ctest" --test-dir "$build" --show-only=json-v1 >"$tmp/tests.json" 2>"$tmp/ctest.err" ||
    { cat "$tmp/ctest.err"; bad "ctest --show-only failed"; }
python3 - "$tmp/tests.json" "$hermetic" <<'EOF' && ok || bad "tests that do not run through hermetic.sh (above)"
import json, sys
tests = json.load(open(sys.argv[1]))["tests"]
wrong = [t["name"] for t in tests
         if t["command"][1:2] != [sys.argv[2]] or "--" not in t["command"][3:]]
for w in wrong:
    print("  not hermetic:", w)
if len(tests) < 50:
    print("  only %d tests listed" % len(tests))
sys.exit(1 if wrong or len(tests) < 50 else 0)
EOF

# 2. a previous user's home: their cache holds the verified 64-rank ring
dirty=$tmp/dirty
mkdir -p "$dirty/.config/collstep" "$dirty/.cache/collstep/verified" "$dirty/tmp"
env -u XDG_CACHE_HOME HOME="$dirty" "$cs" gen allreduce ring --ranks 64 --verify >/dev/null ||
    bad "gen --verify into the dirty home"
n=$(find "$dirty/.cache/collstep/verified" -type f | wc -l)
expect "cache entries in the dirty home" 1 "$n"
echo junk >"$dirty/.cache/collstep/verified/0123456789abcdef-0.0.0"
echo junk >"$dirty/.config/collstep/settings"
dirty_env=(HOME="$dirty" XDG_CACHE_HOME="$dirty/.cache" XDG_CONFIG_HOME="$dirty/.config"
           TMPDIR="$dirty/tmp" CS_VERIFY_MAX_MEM=1 CS_VERIFY_CACHE=1 CS_LOG=trace
           CS_SHM_COPY=bounce RANK=5 WORLD_SIZE=9 MASTER_ADDR=10.0.0.9 MASTER_PORT=1
           PMIX_RANK=3 PMIX_NAMESPACE=user)
state=$tmp/state
wrap() { env "${dirty_env[@]}" bash "$hermetic" "$state" "$@"; }

# 3. what the command sees
wrap CS_SHM_COPY=cma FOO=bar -- bash -c '
    printf "HOME=%s\nCACHE=%s\nCONFIG=%s\nTMPDIR=%s\n" "$HOME" "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME" "$TMPDIR"
    printf "HOMEFILES=%s\n" "$(ls -A "$HOME" "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME" "$TMPDIR" | grep -v ":$" | grep -c .)"
    printf "VARS=%s\n" "$(compgen -e | grep -E "^(CS_|PMIX_|RANK$|WORLD_SIZE$|MASTER_)" | tr "\n" " ")"
    printf "SHM=%s FOO=%s\n" "$CS_SHM_COPY" "$FOO"
    touch "$HOME/left" "$TMPDIR/left" || echo "NOT WRITABLE"' >"$tmp/seen" 2>&1
expect "wrapper exit" 0 $?
get() { sed -n "s/^$1=//p" "$tmp/seen"; }
expect "HOME" "$state/home" "$(get HOME)"
expect "XDG_CACHE_HOME" "$state/cache" "$(get CACHE)"
expect "XDG_CONFIG_HOME" "$state/config" "$(get CONFIG)"
case $(get TMPDIR) in /tmp/cs-t.??????) ok ;; *) bad "TMPDIR '$(get TMPDIR)' is not /tmp/cs-t.XXXXXX" ;; esac
expect "files in the fresh folders" 0 "$(get HOMEFILES)"
expect "user variables left" "CS_SHM_COPY " "$(get VARS)"
expect "variables the test set" "SHM=cma FOO=bar" "$(grep '^SHM=' "$tmp/seen")"
grep -q "NOT WRITABLE" "$tmp/seen" && bad "HOME or TMPDIR not writable" || ok
[ -e "$(get TMPDIR)" ] && bad "TMPDIR $(get TMPDIR) left after the run" || ok
[ -e "$state/home/left" ] && ok || bad "HOME is not kept after the run for a look"

# 4. the next run is fresh
wrap -- bash -c '[ ! -e "$HOME/left" ] && [ -z "$(ls -A "$TMPDIR")" ]'
expect "second run: fresh HOME and TMPDIR" 0 $?

# 5. the result a dirty home would change
if [ "$with_sim" = sim ]; then
    sim=("$cs" sim --platform summit:nodes=11 --ranks 64 --coll allreduce --algo ring --size 1M)
    env -u XDG_CACHE_HOME HOME="$dirty" CS_VERIFY_MAX_MEM=64K "${sim[@]}" >"$tmp/out" 2>&1
    expect "sim from the dirty home's cache, no wrapper" 0 $?
    wrap CS_VERIFY_MAX_MEM=64K -- "${sim[@]}" >"$tmp/out" 2>&1
    expect "sim through the wrapper" 2 $?
    grep -q "too large to verify" "$tmp/out" && ok || { bad "sim's refusal:"; head -3 "$tmp/out"; }
fi

# 6. exit status, signals, a run killed outright, a folder not ours
wrap -- sh -c 'exit 77'
expect "exit 77" 77 $?
wrap -- sh -c 'exit 3'
expect "exit 3" 3 $?
(ulimit -c 0; wrap -- sh -c 'kill -SEGV $$') 2>/dev/null
expect "killed by SIGSEGV" $((128 + 11)) $?
wrap -- sh -c 'echo "$TMPDIR" >"$0"; kill -KILL $PPID; sleep 1' "$tmp/killed" 2>/dev/null
killed=$(cat "$tmp/killed")
[ -d "$killed" ] && ok || bad "the killed run's TMPDIR '$killed' is not there to clean"
wrap -- true
[ -e "$killed" ] && bad "the killed run's TMPDIR $killed left by the next run" || ok
mkdir -p "$tmp/theirs"
echo keep >"$tmp/theirs/file"
env bash "$hermetic" "$tmp/theirs" -- true 2>"$tmp/err"
expect "a STATE folder not made by hermetic.sh" 2 $?
expect "its file" keep "$(cat "$tmp/theirs/file")"
grep -q "left alone" "$tmp/err" && ok || bad "no word of the refused STATE"
bash "$hermetic" "$state" FOO -- true 2>/dev/null
expect "an argument that is not VAR=VALUE" 2 $?

echo "$pass passed, $fail failed"
[ $fail = 0 ]
