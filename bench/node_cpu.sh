#!/usr/bin/env bash
# CPU time per call of a SIP proxy at a fixed call rate (issue 17, "Performance"): for each
# proxy in turn, in the same run,
#
#   SIPp uac --RATE calls/s--> PROXY --> SIPp uas          (all on 127.0.0.1)
#
# where PROXY is Kamailio's stateful proxy (tests/node/kamailio/stateful.cfg, -n 1 worker,
# -m 512) and then `osn node` as an edge with every cost 0 and control none (its real speed);
# plus a first run with no proxy (uac -> uas), to show what SIPp itself costs. The proxy's CPU
# is utime + stime from /proc/PID/stat, summed over the process and its descendants
# (Kamailio's workers and timers), read once the proxy is up and idle and once the uac has
# finished; divided by the calls SIPp completed. SIPp's own CPU (uac, uas) is reported the same
# way, as a share of one core over the run: near 100% means SIPp, not the proxy, was the
# bottleneck; so does an achieved rate below the target or a watchdog trip (WatchdogMajor/Minor).
#
# Usage: bench/node_cpu.sh [OSN]        (default build/osn beside this script)
#   RATE=1000 DURATION=20   calls/s and seconds of load (RATE x DURATION calls per proxy)
#   PROXIES="direct kamailio osn"       which runs (osn is skipped with a note if `osn node`
#                                       does not exist)
#   NL_KAM_CHILDREN=1       Kamailio UDP workers (2 reorders 180/200 at high rates; see
#                           tests/node/kamailio/stateful.cfg)
#   NL_KEEP=1               keep the runs' files
# Output: one row per run, then "osn/kamailio CPU per call: RATIO (goal <= 0.25)".
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OSN=${1:-${OSN:-$ROOT/build/osn}}
[ -e "$OSN" ] && OSN=$(cd "$(dirname "$OSN")" && pwd)/$(basename "$OSN")
RATE=${RATE:-1000}
DURATION=${DURATION:-20}
PROXIES=${PROXIES:-direct kamailio osn}
CALLS=$((RATE * DURATION))
. "$ROOT/tests/node/lib.sh"
nl_init node_cpu $(($(wc -w <<<"$PROXIES") * (DURATION + 90) + 60)) --load
export OSN
HZ=$(getconf CLK_TCK)
# SIPp's 64 KB socket buffers overflow within milliseconds when it is descheduled on a shared
# machine (bench/node_maxrate.sh measures it): 1 MB each (the kernel caps them at rmem_max).
SIPP_BUF=(-buff_size 1048576)

declare -A MSPC
failed=0
# bad_run PX MSG: a run that cannot give a row: said on stderr, counted (exit 1 at the end).
bad_run() {
    echo "$1: ERROR: ${*:2}; no row" >&2
    failed=$((failed + 1))
}
printf '%-9s %6s %7s %8s %9s | %8s %8s %9s %s\n' proxy calls ok cpu_s ms/call "uac cpu" \
    "uas cpu" "rate/s" notes
for px in $PROXIES; do
    # Each element binds a port of its own choosing; NL_PORT gives it back (tests/node/lib.sh).
    NL_UAS_TIME=$((DURATION + 80)) nl_sipp_uas "uas_$px" 0 "${SIPP_BUF[@]}" || {
        bad_run "$px" "SIPp uas did not start"
        continue
    }
    P_UAS=${NL_PORT[uas_$px]}
    case $px in
    direct) ;;
    kamailio) nl_kam_start "px_$px" 0 "$P_UAS" || {
        bad_run "$px" "Kamailio did not start"
        nl_stop "uas_$px"
        continue
    } ;;
    osn)
        if [ "${OSN_NODE_STANDIN:-0}" != 1 ] && ! nl_have_node; then
            echo "osn: skipped, \`$OSN node\` does not exist yet"
            nl_stop "uas_$px"
            continue
        fi
        nl_edge_fast "px_$px" 0 "$P_UAS" || {
            bad_run "$px" "osn node did not start"
            nl_stop "uas_$px"
            continue
        }
        ;;
    *)
        echo "unknown proxy $px (direct, kamailio, osn)" >&2
        continue
        ;;
    esac
    dest=$P_UAS
    [ "$px" != direct ] && dest=${NL_PORT[px_$px]}
    sleep 1
    ppid=
    [ "$px" != direct ] && ppid=$(nl_real_pid "px_$px")
    uas_pid=$(nl_real_pid "uas_$px")
    p0=0
    [ -n "$ppid" ] && p0=$(nl_cpu_ticks "$ppid")
    s0=$(nl_cpu_ticks "$uas_pid")
    t0=$(date +%s.%N)
    nl_sipp_uac_bg "uac_$px" "$dest" "$RATE" "$CALLS" "${SIPP_BUF[@]}"
    uac_pid=$(nl_real_pid "uac_$px")
    # the uac's CPU: sampled until it exits (its /proc entry goes away with it)
    u1=0
    while read -r st 2>/dev/null <"/proc/$uac_pid/stat"; do
        f=(${st##*) })
        u1=$((f[11] + f[12]))
        sleep 0.5
    done
    nl_wait_pid "uac_$px"
    rc=$?
    t1=$(date +%s.%N)
    p1=0
    [ -n "$ppid" ] && p1=$(nl_cpu_ticks "$ppid")
    s1=$(nl_cpu_ticks "$uas_pid")
    ok=$(nl_stat "uac_$px" 'SuccessfulCall(C)')
    out=$(nl_stat "uac_$px" 'OutgoingCall(C)')
    wd="$(nl_stat "uac_$px" 'WatchdogMajor(C)')/$(nl_stat "uac_$px" 'WatchdogMinor(C)')"
    unexp=$(nl_stat "uac_$px" 'FailedUnexpectedMessage(C)')
    retr=$(nl_stat "uac_$px" 'Retransmissions(C)')
    [ "$px" != direct ] && nl_stop "px_$px"
    nl_stop "uas_$px"
    if [ ! -s "${NL_DIR[uac_$px]}/stat.csv" ]; then
        bad_run "$px" "SIPp wrote no statistics (${NL_DIR[uac_$px]}/stat.csv; status $rc)"
        continue
    fi
    if [ "${ok:-0}" = 0 ]; then
        bad_run "$px" "SIPp offered '${out}' calls and not one succeeded (status $rc)"
        continue
    fi
    read -r cpu mspc ucpu scpu crate <<<"$("$NL_PY" -c "
hz, el = $HZ, $t1 - $t0
cpu = ($p1 - $p0) / hz
ok = int('${ok:-0}' or 0)
print('%.2f' % cpu, '%.4f' % (1000 * cpu / ok) if ok else 'nan',
      '%.0f%%' % (100 * $u1 / hz / el), '%.0f%%' % (100 * ($s1 - $s0) / hz / el),
      '%.0f' % (int('${out:-0}' or 0) / $DURATION))")"
    notes="rc=$rc watchdog(major/minor)=$wd unexpected=$unexp retrans=$retr"
    [ "$px" = direct ] && mspc=- && cpu=-
    printf '%-9s %6s %7s %8s %9s | %8s %8s %9s %s\n' "$px" "$CALLS" "$ok" "$cpu" "$mspc" "$ucpu" \
        "$scpu" "$crate" "$notes"
    MSPC[$px]=$mspc
done
if [ -n "${MSPC[osn]:-}" ] && [ -n "${MSPC[kamailio]:-}" ]; then
    "$NL_PY" -c "
o, k = float('${MSPC[osn]}'), float('${MSPC[kamailio]}')
print('osn/kamailio CPU per call: %.3f (goal <= 0.25)' % (o / k))"
fi
if [ "$failed" -gt 0 ]; then
    echo "node_cpu: ERROR: $failed run(s) failed (above)" >&2
    exit 1
fi
