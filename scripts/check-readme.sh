#!/usr/bin/env bash
# check-readme.sh - the README's two commands as a new user runs them: each
# in a fresh clone of this repository's committed HEAD, with a scratch home
# and a clean environment (env -i: PATH, HOME, USER, LOGNAME, SHELL, TERM,
# LANG), in both orders, then the test command again with a home full of a
# previous user's collstep cache.  Not part of the test suite (it runs the
# suite, and takes about half an hour on 2 cores).
#
#   scripts/check-readme.sh [--only STEPS] [--work DIR] [--keep] [--list]
#
# Steps (each reported pass / fail with its wall time; logs in WORK/logs):
#   demo-test   clone 1, home 1: bash scripts/demo.sh, then bash scripts/test.sh
#   test-demo   clone 2, home 2: bash scripts/test.sh, then bash scripts/demo.sh
#   dirty       clone 2 (clone 3 and a build by scripts/setup.sh when
#               test-demo is not run), home 3 filled as a previous user left
#               it: ~/.cache/collstep/verified holding the verified 64-rank
#               ring (`collstep gen allreduce ring --ranks 64 --verify`) and
#               the schedules of a simulation, junk beside them, and their
#               exported XDG_CACHE_HOME, TMPDIR (~/tmp), CS_VERIFY_MAX_MEM=64K,
#               CS_LOG=info, RANK=1, WORLD_SIZE=2; then bash scripts/test.sh,
#               and the home must be as it was (but for ~/tmp)
#
#   --only STEPS  comma-separated steps (default demo-test,test-demo,dirty)
#   --work DIR    where clones, homes and logs go (default: a new
#                 /tmp/cs-readme.XXXXXX); DIR must not exist or be empty
#   --keep        keep WORK when everything passed (it is always kept when a
#                 step failed, for its logs)
#   --list        print what would run, run nothing
#
# Exit status: 0 every step passed, 1 a step failed, 2 usage.  Uncommitted
# changes are not tested (a warning says so): the clones hold HEAD.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && git rev-parse --show-toplevel)
usage() { sed -n '/^#   scripts/,/^#   --list/s/^# \{0,1\}//p' "$0" >&2; exit 2; }

only=demo-test,test-demo,dirty work='' keep=0 list=0
while [ $# -gt 0 ]; do
    case $1 in
    --only) [ $# -ge 2 ] || usage; only=$2; shift 2 ;;
    --work) [ $# -ge 2 ] || usage; work=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --list) list=1; shift ;;
    -h | --help) usage ;;
    *) echo "check-readme: unknown argument '$1'" >&2; usage ;;
    esac
done
IFS=, read -r -a steps <<<"$only"
for s in "${steps[@]}"; do
    case $s in demo-test | test-demo | dirty) ;; *) echo "check-readme: no step '$s'" >&2; usage ;; esac
done
has() { [[ ",$only," == *",$1,"* ]]; }

sha=$(git -C "$src" rev-parse HEAD)
if [ -n "$(git -C "$src" status --porcelain --untracked-files=no)" ]; then
    echo "check-readme: warning: uncommitted changes in $src are not tested (HEAD $sha is)" >&2
fi

# ---- the plan: one line per command, "NAME|CLONE|HOME|COMMAND" -----------
plan=()
if has demo-test; then
    plan+=("clone 1|1|1|clone" "demo (first)|1|1|bash scripts/demo.sh" "test (after demo)|1|1|bash scripts/test.sh")
fi
if has test-demo; then
    plan+=("clone 2|2|2|clone" "test (first)|2|2|bash scripts/test.sh" "demo (after test)|2|2|bash scripts/demo.sh")
fi
if has dirty; then
    dc=2
    if ! has test-demo; then
        dc=3
        plan+=("clone 3|3|3|clone" "build (for the dirty home)|3|3|bash scripts/setup.sh")
    fi
    plan+=("fill a previous user's home|$dc|3|fill" "test (previous user's home)|$dc|3|dirty"
           "previous user's files untouched|$dc|3|untouched")
fi

if [ $list = 1 ]; then
    echo "check-readme: would test $sha in ${work:-/tmp/cs-readme.XXXXXX}:"
    for p in "${plan[@]}"; do
        IFS='|' read -r name c h cmd <<<"$p"
        printf '  %-32s clone%s home%s  %s\n' "$name" "$c" "$h" "$cmd"
    done
    exit 0
fi

made_work=1
if [ -z "$work" ]; then
    work=$(mktemp -d /tmp/cs-readme.XXXXXX)
elif [ -e "$work" ] && [ -n "$(ls -A "$work")" ]; then
    echo "check-readme: $work exists and is not empty" >&2
    exit 2
else
    [ -e "$work" ] && made_work=0
    mkdir -p "$work"
fi
work=$(cd "$work" && pwd)
mkdir -p "$work/logs"
echo "check-readme: testing $sha in $work"

# A new user's environment: nothing of ours leaks into the steps.
clean_env=(env -i PATH="$PATH" USER="$(id -un)" LOGNAME="$(id -un)" SHELL=/bin/bash TERM=dumb
           LANG=C.UTF-8)
# What a previous user had exported (the dirty step).
dirty_vars() {
    dirty=(XDG_CACHE_HOME="$1/.cache" TMPDIR="$1/tmp" CS_VERIFY_MAX_MEM=64K CS_LOG=info RANK=1
           WORLD_SIZE=2)
}
# What the previous user's home holds: path, size, time and mode of each
# file (but for ~/tmp, their TMPDIR, where compilers come and go).
snapshot() { find "$1" -path "$1/tmp" -prune -o -printf '%P %s %T@ %m\n' | sort; }

# (The step functions run where `set -e` does not apply: each checks.)
do_clone() { # do_clone DIR
    git clone --quiet --no-checkout "$src" "$1" || return 1
    git -C "$1" cat-file -e "$sha^{commit}" 2>/dev/null || git -C "$1" fetch --quiet "$src" HEAD ||
        return 1
    git -C "$1" checkout --quiet --detach "$sha" || return 1
    echo "$1: $(git -C "$1" log --oneline -1)"
}

do_fill() { # do_fill CLONE HOME: a previous user's cache, from this collstep
    local cs=$1/build/cli/collstep h=$2
    [ -x "$cs" ] || { echo "no $cs: nothing built in $1"; return 1; }
    mkdir -p "$h/.cache/collstep/verified" "$h/.config/collstep" || return 1
    (cd "$h" && "${clean_env[@]}" HOME="$h" "$cs" gen allreduce ring --ranks 64 --verify -o ring64.sched) || return 1
    (cd "$h" && "${clean_env[@]}" HOME="$h" "$cs" sim --platform summit:nodes=2 --coll allreduce \
        --algo ring,rhd,dbtree --size 1M -o sim.csv) || return 1
    n=$(find "$h/.cache/collstep/verified" -type f | wc -l)
    [ "$n" -ge 2 ] || { echo "expected the verified ring and more in the cache, found $n entries"; return 1; }
    echo "junk" >"$h/.cache/collstep/verified/0123456789abcdef-0.1.0" &&
        echo "junk" >"$h/.cache/collstep/verified/not-a-digest" &&
        mkdir -p "$h/.cache/collstep/verified/a-directory" "$h/.cache/collstep/verified.tmp" "$h/tmp" &&
        : >"$h/.cache/collstep/verified/unreadable" &&
        chmod 000 "$h/.cache/collstep/verified/unreadable" &&
        echo "log_level=debug" >"$h/.config/collstep/settings" || return 1
    echo "the previous user's cache:"
    ls -la "$h/.cache/collstep/verified"
    snapshot "$h" >"$work/home$3.before"
}

do_untouched() { # do_untouched HOME N: the home is as do_fill left it
    snapshot "$1" >"$work/home$2.after"
    if ! diff "$work/home$2.before" "$work/home$2.after"; then
        echo "the previous user's home changed (above: < before, > after)"
        return 1
    fi
    echo "$(wc -l <"$work/home$2.after") files and folders as they were"
}

results=() failed=0 broken=,
for p in "${plan[@]}"; do
    IFS='|' read -r name c h cmd <<<"$p"
    clone=$work/clone$c home=$work/home$h
    log=$work/logs/$(echo "$name" | tr -c 'a-z0-9\n' '-' | tr -s '-' | sed 's/-$//').log
    mkdir -p "$home"
    printf 'check-readme: %-32s ... ' "$name"
    if [[ $broken == *",$c,"* ]]; then # a step before it in the same clone failed
        echo "not run"
        results+=("$(printf '%-32s %-16s' "$name" "not run")")
        continue
    fi
    t0=$(date +%s)
    case $cmd in
    clone) do_clone "$clone" >"$log" 2>&1 ;;
    fill) do_fill "$clone" "$home" "$h" >"$log" 2>&1 ;;
    dirty)
        dirty_vars "$home"
        (cd "$clone" && "${clean_env[@]}" HOME="$home" "${dirty[@]}" bash scripts/test.sh) >"$log" 2>&1 ;;
    untouched) do_untouched "$home" "$h" >"$log" 2>&1 ;;
    *) # shellcheck disable=SC2086 # COMMAND is words: "bash scripts/demo.sh"
        (cd "$clone" && "${clean_env[@]}" HOME="$home" $cmd) >"$log" 2>&1 ;;
    esac && rc=0 || rc=$?
    t=$(($(date +%s) - t0))
    if [ "$rc" = 0 ]; then word=pass; else word="FAIL (exit $rc)"; failed=1 broken=$broken$c,; fi
    printf '%s, %d:%02d\n' "$word" $((t / 60)) $((t % 60))
    results+=("$(printf '%-32s %-16s %3d:%02d  %s' "$name" "$word" $((t / 60)) $((t % 60)) "$log")")
    [ "$rc" = 0 ] || tail -15 "$log" | sed 's/^/    /'
done

echo
echo "check-readme: $sha"
printf '  %s\n' "${results[@]}"
if [ $failed = 0 ]; then
    if [ $keep = 0 ] && [ $made_work = 1 ]; then
        chmod -R u+rwX "$work" 2>/dev/null || true
        rm -rf -- "$work"
    else
        echo "check-readme: kept $work"
    fi
    echo "check-readme: every step passed"
    exit 0
fi
echo "check-readme: failed; clones, homes and logs kept in $work"
exit 1
