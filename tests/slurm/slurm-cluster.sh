#!/usr/bin/env bash
# slurm-cluster.sh - a private one-node Slurm cluster for the tests: munged,
# slurmctld and slurmd of the machine's Slurm packages (Debian: slurmctld,
# slurmd, slurm-client, munge), everything of theirs in one folder DIR:
# slurm.conf (SLURM_CONF), munge key and socket, state and spool folders,
# logs, pid files, and two free TCP ports.  Nothing under /etc or /run is
# read or written; the machine's own munged or slurmd, if any, is untouched.
#
# As a command:
#   slurm-cluster.sh check           exit 0 where a cluster can run here,
#                                    else print "SKIP: reason" and exit 77
#   slurm-cluster.sh start DIR       start one in DIR (made; must be empty),
#                                    wait until its node is idle; on failure
#                                    print the daemons' logs, stop, exit 1
#   slurm-cluster.sh stop DIR        cancel its jobs, end its daemons and
#                                    every process in its environment
#   slurm-cluster.sh env DIR         print its environment (export lines)
#   slurm-cluster.sh exec DIR CMD... run CMD in its environment
#   (a cluster started by `start` outlives the command: `stop` it)
#
# Sourced (what a test should do: the daemons are the test's children, so
# they go with it, and a trap stops them):
#   . tests/slurm/slurm-cluster.sh
#   slurm_check || exit 77           prints the reason
#   slurm_start "$TMPDIR/slurm" || exit 1     also traps EXIT INT TERM HUP
#                                    to slurm_stop (SLURM_KEEP_TRAPS=1: not;
#                                    the test's own traps call slurm_stop)
#   slurm_exec srun --mpi=pmix -n 2 collstep run ...
#                                    CMD in the cluster's environment,
#                                    started in the background and waited
#                                    for, so a signal to the test stops the
#                                    cluster at once; CMD's exit status
#   slurm_exec sbatch --array=0-3 --wait -o 'out-%a.txt' --wrap 'CMD'
#                                    a job array of CMD (SLURM_ARRAY_TASK_ID,
#                                    SLURM_ARRAY_TASK_COUNT); exits non-zero
#                                    when a task failed
#   slurm_env                        export the environment into this shell
#   slurm_stop                       cancel the jobs (while slurmctld
#                                    answers), then TERM and after 2 s KILL
#                                    the daemons, every process whose
#                                    environment has the cluster's
#                                    SLURM_CONF (slurm_exec's commands,
#                                    tasks) and the step daemons; idempotent
# The environment: SLURM_CONF (the clients read the munge socket and ports
# from it) and COLLSTEP_TEST_SLURM=DIR (a mark, see below); slurm_exec and slurm_env also unset the SLURM_* / SBATCH_* /
# SRUN_* / SALLOC_* variables of any enclosing job, which the clients read.
# A test killed outright (SIGKILL: ctest's timeout kills the test's process
# tree) cannot stop its cluster, and slurmd's detached step daemons would
# wait for ever: the next slurm_start ends whatever a cluster whose daemons
# are gone left running (COLLSTEP_TEST_SLURM=DIR in its environment, set
# for the daemons and slurm_exec's commands), and `slurm-cluster.sh stop
# DIR` ends what is left of a given one.
#
# The cluster: one node named as this host (hostname -s) at 127.0.0.1 with
# nproc CPUs but at least 8 (so that 8 tasks run on 2 cores, as under
# mpirun --oversubscribe), one partition `test` (OverSubscribe=FORCE),
# select/cons_tres, no cgroups (proctrack/linuxproc, task/none), no
# accounting, MpiDefault=none (srun --mpi=pmix for PMIx, as on most
# clusters), TmpFS in DIR (PMIx's per-job folders), batch jobs scheduled at
# once (batch_sched_delay=0) and sbatch --wait polling every 2 s
# (MinJobAge=5).  About 1.5 s to start, under 1 s to stop.

SLURM_SBIN=${SLURM_SBIN:-/usr/sbin}
SLURM_START_TIMEOUT=${SLURM_START_TIMEOUT:-30}
# slurmd's log, which its step daemons keep open: its name tells them
# apart from any other slurmstepd (_slurm_sweep)
SLURM_STEPD_LOG=collstep-test-slurmd.log
SLURM_DIR=
SLURM_PIDS=()
SLURM_CLIENTS=()

# Which of the programs a cluster needs are missing; "" when none.
_slurm_missing() {
    local p missing=
    for p in munged mungekey slurmctld slurmd slurmstepd; do
        [ -x "$SLURM_SBIN/$p" ] || command -v "$p" >/dev/null 2>&1 || missing="$missing $p"
    done
    for p in srun sbatch sinfo squeue scancel; do
        command -v "$p" >/dev/null 2>&1 || missing="$missing $p"
    done
    echo "${missing# }"
}

_slurm_bin() {
    if [ -x "$SLURM_SBIN/$1" ]; then echo "$SLURM_SBIN/$1"; else command -v "$1"; fi
}

slurm_check() {
    local missing
    if [ "$(id -u)" != 0 ]; then
        echo "SKIP: a private Slurm cluster needs root (slurmd runs the jobs' tasks)"
        return 77
    fi
    missing=$(_slurm_missing)
    if [ -n "$missing" ]; then
        echo "SKIP: Slurm or munge missing ($missing; Debian: slurmctld slurmd slurm-client munge)"
        return 77
    fi
    if ! command -v python3 >/dev/null 2>&1; then
        echo "SKIP: no python3 (free ports)"
        return 77
    fi
    return 0
}

# N distinct free TCP ports below the ephemeral range, one per line (ports
# that bind now; below the range, so that no outgoing connection takes one
# before the daemon binds it).
_slurm_ports() {
    python3 - "$1" <<'EOF'
import random, socket, sys
n = int(sys.argv[1])
lo = 32768
try:
    lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except (OSError, ValueError):
    pass
bottom = 10000 if lo > 12000 else 1025
got = []
while len(got) < n:
    p = random.randrange(bottom, lo)
    if p in got:
        continue
    s = socket.socket()
    try:
        s.bind(("0.0.0.0", p))
        got.append(p)
    except OSError:
        pass
    finally:
        s.close()
print("\n".join(map(str, got)))
EOF
}

_slurm_write_conf() {
    local dir=$1 ctld_port=$2 d_port=$3 node cpus mem
    node=$(hostname -s)
    # at least 8 CPUs (config_overrides: slurmd takes them as given), so that
    # jobs of up to 8 tasks run on a small machine as mpirun --oversubscribe
    # runs them
    cpus=$(nproc)
    [ "$cpus" -ge 8 ] || cpus=8
    # what slurmd will find (RealMemory is MB; 1 below so it never exceeds it)
    mem=$(awk '/^MemTotal:/ { m = int($2 / 1024) - 1; print (m > 1 ? m : 1) }' /proc/meminfo)
    cat >"$dir/slurm.conf" <<EOF
ClusterName=cstest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/$SLURM_STEPD_LOG
SlurmctldDebug=info
SlurmdDebug=info
TmpFS=$dir/tmp
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
SlurmdParameters=config_overrides
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
MinJobAge=5
MailProg=/bin/true
SchedulerParameters=batch_sched_delay=0
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=10 State=UP OverSubscribe=FORCE
EOF
    # the clients and daemons look for these beside slurm.conf: empty, so
    # that nothing of the machine's configuration is read
    : >"$dir/plugstack.conf"
}

_slurm_logs() {
    # a daemon's stderr (.out) repeats its log, but has what it said before
    # it could open the log
    local f out
    for f in munged.log:munged.log slurmctld.log:slurmctld.out "$SLURM_STEPD_LOG":slurmd.out; do
        out=$SLURM_DIR/${f#*:}
        f=$SLURM_DIR/${f%%:*}
        [ -s "$f" ] || f=$out
        [ -s "$f" ] || continue
        echo "---- $f (last 20 lines)"
        tail -n 20 "$f"
    done
}

# Run "$@" with the cluster's environment (in a subshell).
_slurm_with() {
    (
        _slurm_env_export
        exec "$@"
    )
}

_slurm_env_export() {
    local name
    while read -r name; do
        case $name in SLURM_* | SBATCH_* | SRUN_* | SALLOC_* | SQUEUE_* | SINFO_*) unset "$name" ;; esac
    done < <(compgen -e)
    export SLURM_CONF=$SLURM_DIR/slurm.conf COLLSTEP_TEST_SLURM=$SLURM_DIR
}

slurm_env() { _slurm_env_export; }

# Does a slurmctld or slurmd of the cluster in $1 run?  (Their command
# lines have the argument DIR/slurm.conf.)
_slurm_daemons_of() {
    grep -qlzxF -- "$1/slurm.conf" /proc/[0-9]*/cmdline 2>/dev/null
}

# What a cluster killed outright left running where no slurmctld or slurmd
# of it runs any more: tasks and clients (their environment has
# COLLSTEP_TEST_SLURM=DIR, which only this script sets) and step daemons
# (they keep DIR/collstep-test-slurmd.log open).
_slurm_sweep() {
    local f p d
    for f in $(grep -lz '^COLLSTEP_TEST_SLURM=/' /proc/[0-9]*/environ 2>/dev/null); do
        p=${f#/proc/}
        p=${p%/environ}
        [ "$p" != $$ ] && [ "$p" != "$BASHPID" ] || continue
        d=$({ tr '\0' '\n' <"$f" | sed -n 's/^COLLSTEP_TEST_SLURM=//p'; } 2>/dev/null)
        [ -n "$d" ] && ! _slurm_daemons_of "$d" || continue
        echo "slurm_start: ending pid $p, left by the cluster in $d (its daemons are gone)" >&2
        kill -KILL "$p" 2>/dev/null
    done
    for p in /proc/[0-9]*; do
        { read -r d <"$p/comm"; } 2>/dev/null && [ "$d" = slurmstepd ] || continue
        for f in "$p"/fd/*; do
            d=$(readlink "$f" 2>/dev/null)
            d=${d% (deleted)}
            case $d in */"$SLURM_STEPD_LOG") ;; *) continue ;; esac
            d=${d%/*}
            _slurm_daemons_of "$d" && break
            echo "slurm_start: ending slurmstepd ${p#/proc/}, left by the cluster in $d (its daemons are gone)" >&2
            kill -KILL "${p#/proc/}" 2>/dev/null
            break
        done
    done
}

slurm_start() {
    local dir=$1 ports ctld_port d_port i p sig state munged slurmctld slurmd node
    slurm_check >&2 || return 77
    mkdir -p -- "$dir" || return 1
    if [ -n "$(ls -A -- "$dir")" ]; then
        echo "slurm_start: $dir is not empty" >&2
        return 1
    fi
    SLURM_DIR=$(cd -- "$dir" && pwd)
    dir=$SLURM_DIR
    SLURM_PIDS=()
    if [ "${SLURM_KEEP_TRAPS:-0}" = 0 ]; then
        trap 'slurm_stop' EXIT
        for sig in INT TERM HUP; do
            # shellcheck disable=SC2064
            trap "slurm_stop; trap - $sig; kill -s $sig \$\$" "$sig"
        done
    fi
    _slurm_sweep
    node=$(hostname -s)
    mkdir -p "$dir/munge" "$dir/state" "$dir/spool/$node" "$dir/tmp" || return 1
    ports=$(_slurm_ports 2) || return 1
    ctld_port=$(echo "$ports" | sed -n 1p)
    d_port=$(echo "$ports" | sed -n 2p)
    _slurm_write_conf "$dir" "$ctld_port" "$d_port" || return 1

    munged=$(_slurm_bin munged) slurmctld=$(_slurm_bin slurmctld) slurmd=$(_slurm_bin slurmd)
    "$(_slurm_bin mungekey)" --create --keyfile="$dir/munge/munge.key" >/dev/null 2>&1 || {
        echo "slurm_start: mungekey failed" >&2
        return 1
    }
    # --force: the socket's folder is private (TMPDIR is 0700), which munged
    # refuses unless forced; only root's processes use it.
    "$munged" --foreground --force --socket="$dir/munge/munge.sock" \
        --key-file="$dir/munge/munge.key" --pid-file="$dir/munge/munged.pid" \
        --seed-file="$dir/munge/munged.seed" --log-file="$dir/munged.log" \
        </dev/null >>"$dir/munged.log" 2>&1 &
    SLURM_PIDS+=($!)
    for ((i = 0; i < 50; i++)); do
        [ -S "$dir/munge/munge.sock" ] && break
        sleep 0.1
    done
    if [ ! -S "$dir/munge/munge.sock" ]; then
        echo "slurm_start: munged did not start" >&2
        _slurm_logs >&2
        slurm_stop
        return 1
    fi
    SLURM_CONF=$dir/slurm.conf COLLSTEP_TEST_SLURM=$dir "$slurmctld" -D -i -f "$dir/slurm.conf" </dev/null \
        >>"$dir/slurmctld.out" 2>&1 &
    SLURM_PIDS+=($!)
    SLURM_CONF=$dir/slurm.conf COLLSTEP_TEST_SLURM=$dir "$slurmd" -D -f "$dir/slurm.conf" </dev/null \
        >>"$dir/slurmd.out" 2>&1 &
    SLURM_PIDS+=($!)
    printf '%s\n' "${SLURM_PIDS[@]}" >"$dir/pids"
    for ((i = 0; i < SLURM_START_TIMEOUT * 4; i++)); do
        state=$(_slurm_with sinfo -h -n "$node" -o %t 2>/dev/null)
        case $state in idle | mix | alloc) return 0 ;; esac
        for p in 0 1 2; do
            _slurm_alive "${SLURM_PIDS[$p]}" && continue
            echo "slurm_start: $(echo munged slurmctld slurmd | cut -d' ' -f$((p + 1))) exited" >&2
            i=-1
        done
        [ $i -ge 0 ] || break
        sleep 0.25
    done
    [ $i -lt 0 ] ||
        echo "slurm_start: node $node not idle after ${SLURM_START_TIMEOUT} s (state '${state:-none}')" >&2
    _slurm_logs >&2
    slurm_stop
    return 1
}

slurm_exec() {
    local pid rc
    if [ -z "$SLURM_DIR" ]; then
        echo "slurm_exec: no cluster started" >&2
        return 2
    fi
    (
        _slurm_env_export
        exec "$@"
    ) &
    pid=$!
    SLURM_CLIENTS+=("$pid")
    # `wait` returns early (> 128) when a trapped signal arrives; the trap
    # then stops the cluster and CMD
    wait "$pid"
    rc=$?
    return $rc
}

# Every process of this cluster but the daemons: the job steps' slurmstepd
# (slurmd detaches them: they are nobody's children; they keep slurmd's log
# open), the jobs' tasks, and the clients slurm_exec started (srun, sbatch
# ...) and their children (their environment has the cluster's SLURM_CONF).
# Not this shell or its parent.
_slurm_procs() {
    local f p c
    for f in $(grep -lzxF -- "SLURM_CONF=$SLURM_DIR/slurm.conf" /proc/[0-9]*/environ 2>/dev/null); do
        p=${f#/proc/}
        p=${p%/environ}
        case $p in "$$" | "$BASHPID" | "$PPID") ;; *) echo "$p" ;; esac
    done
    for p in /proc/[0-9]*; do
        { read -r c <"$p/comm"; } 2>/dev/null && [ "$c" = slurmstepd ] || continue
        for f in "$p"/fd/*; do
            c=$(readlink "$f" 2>/dev/null)
            [ "${c% (deleted)}" = "$SLURM_DIR/$SLURM_STEPD_LOG" ] && echo "${p#/proc/}" && break
        done
    done
}

# Is process $1 running (a zombie is not: the daemons stay zombies until
# waited for, and orphans until init reaps them)?
_slurm_alive() {
    local l
    { read -r l <"/proc/$1/stat"; } 2>/dev/null || return 1
    l=${l##*) }
    [ "${l%% *}" != Z ]
}

slurm_stop() {
    local i p c ctld alive end
    [ -n "$SLURM_DIR" ] || return 0
    # jobs first, while slurmctld and slurmd can still end their steps (not
    # when slurmctld is gone: the clients would wait for it)
    ctld=
    for p in "${SLURM_PIDS[@]}"; do
        { read -r c <"/proc/$p/comm"; } 2>/dev/null && [ "$c" = slurmctld ] && ctld=$p
    done
    if [ -n "$ctld" ] && _slurm_alive "$ctld"; then
        (
            _slurm_env_export
            timeout 2 scancel --quiet --full --user="$(id -un)" >/dev/null 2>&1
            end=$((SECONDS + 3))
            while [ $SECONDS -lt $end ] && [ -n "$(timeout 1 squeue -h -o %i 2>/dev/null)" ]; do
                sleep 0.25
            done
        )
    fi
    for p in "${SLURM_CLIENTS[@]}" "${SLURM_PIDS[@]}" $(_slurm_procs); do
        kill -TERM "$p" 2>/dev/null
    done
    # TERM, then after 2 s KILL (after Ctrl-C srun may wait for a slurmctld
    # that is gone); the state is thrown away anyway
    for ((i = 0; i < 40; i++)); do
        alive=
        for p in "${SLURM_CLIENTS[@]}" "${SLURM_PIDS[@]}" $(_slurm_procs); do
            _slurm_alive "$p" && alive="$alive $p"
        done
        [ -z "$alive" ] && break
        # shellcheck disable=SC2086
        [ $i -eq 8 ] && kill -KILL $alive 2>/dev/null
        sleep 0.25
    done
    for p in "${SLURM_CLIENTS[@]}" "${SLURM_PIDS[@]}"; do
        wait "$p" 2>/dev/null
    done
    SLURM_PIDS=()
    SLURM_CLIENTS=()
    SLURM_DIR=
    return 0
}

# As a command.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -u
    cmd=${1:-}
    case $cmd in
    check) slurm_check; exit $? ;;
    start | stop | env | exec) ;;
    *)
        echo "usage: slurm-cluster.sh check | start DIR | stop DIR | env DIR | exec DIR CMD..." >&2
        exit 2
        ;;
    esac
    [ $# -ge 2 ] || { echo "slurm-cluster.sh $cmd: DIR missing" >&2; exit 2; }
    dir=$2
    shift 2
    case $cmd in
    start)
        SLURM_KEEP_TRAPS=1
        slurm_start "$dir" || exit $?
        disown -a # the daemons outlive this script (their pids: DIR/pids)
        ;;
    stop | env | exec)
        [ -f "$dir/slurm.conf" ] || { echo "slurm-cluster.sh: no cluster in $dir" >&2; exit 2; }
        SLURM_DIR=$(cd -- "$dir" && pwd)
        case $cmd in
        stop)
            # the daemons of DIR/pids that still run (their command lines
            # name DIR: not another process that took a pid since)
            while read -r p; do
                { tr '\0' '\n' <"/proc/$p/cmdline" | grep -q -- "$SLURM_DIR/"; } 2>/dev/null &&
                    SLURM_PIDS+=("$p")
            done <"$SLURM_DIR/pids"
            slurm_stop
            ;;
        env) echo "export SLURM_CONF=$SLURM_DIR/slurm.conf" ;;
        exec) _slurm_env_export; exec "$@" ;;
        esac
        ;;
    esac
fi
