# tc-units.sh - tc(8)'s rates and sizes, for the scripts that shape the
# emulated cluster (sourced by scripts/netns-cluster.sh and
# tests/bench/bench_validate.sh; defines functions only).
# a tc rate in bits per second (tc(8): bit or a bare number, kbit, mbit,
# gbit, tbit, their IEC kibit ..., and bps, kbps, ... in bytes per second),
# 80 kbit to 100 gbit (a veth moves less; the shapers' arithmetic stays in
# 64 bits)
bits() {
    local v=${1,,} n m=1
    [[ $v =~ ^([0-9]+(\.[0-9]*)?|\.[0-9]+)(([kmgt]i?)?(bit|bps))?$ ]] || return 1
    n=${BASH_REMATCH[1]}
    case ${BASH_REMATCH[4]} in k) m=1000 ;; m) m=1000000 ;; g) m=1000000000 ;; t) m=1000000000000 ;;
    ki) m=1024 ;; mi) m=1048576 ;; gi) m=1073741824 ;; ti) m=1099511627776 ;; esac
    [ "${BASH_REMATCH[5]}" = bps ] && m=$((m * 8))
    awk -v n="$n" -v m="$m" 'BEGIN { b = n * m; if (b < 80000 || b > 1e11) exit 1; printf "%.0f\n", b }'
}
# a tc size in bytes (tc(8): b or a bare number, k or kb, m or mb, g or gb
# in 1024s of bytes; kbit, mbit, gbit in 1024s of bits), from a full frame
# (1514 bytes: a smaller bucket or queue passes no data) to 1 GiB
size_ok() {
    local v=${1,,} m=1
    [[ $v =~ ^([0-9]+(\.[0-9]*)?|\.[0-9]+)(b|kb?|mb?|gb?|kbit|mbit|gbit)?$ ]] || return 1
    case ${BASH_REMATCH[3]} in k|kb) m=1024 ;; m|mb) m=1048576 ;; g|gb) m=1073741824 ;;
    kbit) m=128 ;; mbit) m=131072 ;; gbit) m=134217728 ;; esac
    awk -v n="${BASH_REMATCH[1]}" -v m="$m" 'BEGIN { b = n * m; exit !(b >= 1514 && b <= 1073741824) }'
}
