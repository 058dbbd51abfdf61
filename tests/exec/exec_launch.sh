# exec_launch.sh - sourced by the exec tests: start N ranks of a command.
#   launch_mpi N CMD...   under mpirun (PMIx bootstrap)
#   launch_env N CMD...   N background processes with RANK / WORLD_SIZE /
#                         MASTER_ADDR / MASTER_PORT (env bootstrap); waits
#                         for all, returns the first non-zero status
# Both print the ranks' stdout/stderr as they come.

have_mpirun() { command -v mpirun >/dev/null 2>&1; }

launch_mpi() {
    local n=$1; shift
    mpirun --allow-run-as-root --oversubscribe -np "$n" "$@"
}

# A free TCP port for MASTER_PORT: a random one below the kernel's ephemeral
# range that binds now.  Not an ephemeral port, because the ranks' transports
# (and parallel tests) bind ephemeral ports all the time and one could take
# it between this check and rank 0's bind.
free_port() {
    python3 -c '
import random, socket
lo = 32768
try:
    lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except (OSError, ValueError):
    pass
bottom = 10000 if lo > 12000 else 1025
for _ in range(500):
    p = random.randrange(bottom, lo)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
        print(p)
        break
    except OSError:
        pass
    finally:
        s.close()
else:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])
'
}

launch_env() {
    local n=$1; shift
    local port; port=$(free_port)
    local pids=() rc=0 r
    for ((r = 0; r < n; r++)); do
        env -u PMIX_RANK -u PMIX_NAMESPACE RANK=$r WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 \
            MASTER_PORT=$port "$@" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do
        wait "$p" || { r=$?; [ $rc -ne 0 ] || rc=$r; }
    done
    return $rc
}

# Is a libfabric provider usable here?
have_provider() {
    command -v fi_info >/dev/null 2>&1 || return 0
    fi_info -p "$1" >/dev/null 2>&1
}

# pick_run COLLSTEP -> RUN array (`collstep run`); exits 77 when the
# binary was not built.
pick_run() {
    if [ -z "$1" ] || [ ! -x "$1" ]; then echo "SKIP: collstep not built ('$1')"; exit 77; fi
    RUN=("$1" run)
}

# Provider short names (a ';' cannot cross a CMake argument list):
# tcp -> tcp;ofi_rxm, verbs -> verbs;ofi_rxm.
provider_name() {
    case $1 in tcp | verbs) echo "$1;ofi_rxm" ;; *) echo "$1" ;; esac
}

# The transport a test names -> TP array of `collstep run` options:
# native -> --transport shm (collstep's own shared-memory transport), sock ->
# --transport tcp (collstep's own sockets); any other name is a libfabric
# provider of --transport ofi (short names above).
transport_args() {
    case $1 in
    native) TP=(--transport shm) ;;
    sock) TP=(--transport tcp) ;;
    *) TP=(--provider "$(provider_name "$1")") ;;
    esac
}

# Is that transport usable here?
have_transport() {
    [ "$1" = native ] || [ "$1" = sock ] || have_provider "$(provider_name "$1")"
}
