#!/usr/bin/env bash
# hermetic.sh STATE [VAR=VALUE ...] -- COMMAND [ARG ...]
#
# Every ctest test runs through this (tests/CMakeLists.txt), so that nothing a
# user did before changes a result: not their collstep cache, not their
# configuration, not a variable they exported.  COMMAND runs with
#
#   HOME, XDG_CACHE_HOME, XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_STATE_HOME
#             empty folders in STATE (a folder of the build tree, one per
#             test), made anew for every run and left there afterwards, so
#             a failed test's home can be looked at;
#   TMPDIR    an empty folder /tmp/cs-t.XXXXXX, removed when COMMAND ends.
#             It is under /tmp, not in the build tree, because its path must
#             stay short wherever the build tree is: AF_UNIX socket paths
#             (mpirun's and PMIx's session folders, the tests' own sockets)
#             hold at most 107 bytes.  A run killed outright (ctest's
#             timeout sends SIGKILL) cannot remove it: STATE/tmpdir names it
#             and the next run of the test removes it;
#   no variable collstep reads from the user: every CS_*, RANK, WORLD_SIZE,
#             MASTER_ADDR, MASTER_PORT (the env bootstrap), PMIX_* (a rank
#             started by mpirun or srun), XDG_* are unset;
#   CS_TEST_SIM_ENGINE=E (a developer's, not a user's): the simulator engine
#             every test runs with (exported as CS_SIM_ENGINE; unset: the
#             build's default), to run the suite on the other engine;
#   VAR=VALUE the variables the test itself sets, last.
#
# Variables that describe the machine rather than the user's collstep (PATH,
# FI_*, NCCL_*, CUDA_VISIBLE_DEVICES, ASAN_OPTIONS, ...) are kept.
# COMMAND's exit status is the script's: 77 stays "skipped" for ctest; a
# COMMAND killed by signal N (1 to 15) kills this script with N, so ctest
# reports the crash as such.  STATE is only ever replaced when it holds the marker this
# script leaves in it; any other existing folder is refused (exit 2).
set -u
if [ $# -lt 3 ]; then
    echo "usage: hermetic.sh STATE [VAR=VALUE ...] -- COMMAND [ARG ...]" >&2
    exit 2
fi
state=$1
case $state in /*) ;; *) state=$PWD/$state ;; esac
shift
sets=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case $1 in
    [A-Za-z_]*=*) sets+=("$1") ;;
    *) echo "hermetic.sh: '$1' is not VAR=VALUE (missing '--'?)" >&2; exit 2 ;;
    esac
    shift
done
if [ $# -lt 2 ]; then
    echo "hermetic.sh: no COMMAND after '--'" >&2
    exit 2
fi
shift

marker=.cs-hermetic-test-state
# A previous run's temporary folder that survived a SIGKILL: ours only.
if [ -f "$state/tmpdir" ]; then
    old=$(cat "$state/tmpdir")
    case $old in
    /tmp/cs-t.??????) [ -d "$old" ] && [ -O "$old" ] && rm -rf -- "$old" ;;
    esac
fi
if [ -e "$state" ]; then
    if [ ! -f "$state/$marker" ]; then
        echo "hermetic.sh: $state exists and was not made by hermetic.sh: left alone" >&2
        exit 2
    fi
    rm -rf -- "$state"
fi
mkdir -p -- "$state/home" "$state/cache" "$state/config" "$state/data" "$state/state" || exit 2
: >"$state/$marker"
tmp=$(mktemp -d /tmp/cs-t.XXXXXX) || exit 2
echo "$tmp" >"$state/tmpdir"

engine=${CS_TEST_SIM_ENGINE-}
while read -r name; do
    case $name in
    CS_* | PMIX_* | XDG_* | RANK | WORLD_SIZE | MASTER_ADDR | MASTER_PORT) unset "$name" ;;
    esac
done < <(compgen -e)
export HOME=$state/home XDG_CACHE_HOME=$state/cache XDG_CONFIG_HOME=$state/config \
    XDG_DATA_HOME=$state/data XDG_STATE_HOME=$state/state TMPDIR=$tmp
[ -n "$engine" ] && export CS_SIM_ENGINE=$engine
for kv in "${sets[@]+"${sets[@]}"}"; do
    export "${kv?}"
done

cleanup() {
    rm -rf -- "$tmp"
    rm -f -- "$state/tmpdir"
}
for sig in INT TERM HUP; do
    # shellcheck disable=SC2064
    trap "cleanup; trap - $sig; kill -s $sig \$\$" "$sig"
done

"$@"
rc=$?
cleanup
if [ "$rc" -gt 128 ] && [ "$rc" -le 143 ]; then # HUP .. TERM: all fatal
    sig=$((rc - 128))
    trap - "$sig" 2>/dev/null
    kill -s "$sig" $$ 2>/dev/null
fi
exit "$rc"
