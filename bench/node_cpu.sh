#!/usr/bin/env bash
# CPU time per call of a SIP proxy at a fixed call rate, `osn node` against Kamailio (issues 17
# and 34): PAIRS interleaved pairs of runs, each run
#
#   SIPp uac --RATE calls/s for DURATION s--> PROXY --> SIPp uas          (all on 127.0.0.1)
#
# with PROXY Kamailio's stateful proxy and `osn node` as an edge with every cost 0 and control
# none (its real speed); the pairs alternate their order (osn first, then Kamailio first, ...)
# so that a drift of the machine's speed falls on both. How Kamailio runs (TLSF, -m 8192, -b 4194304,
# workers = the node's loops, its port) is said in bench/node_lib.sh and printed above the
# table.
#
# A proxy's CPU is utime and stime from /proc/PID/stat, summed over the process and its
# descendants (Kamailio's workers and timers), read once the proxy is up and idle and once the
# uac has finished, divided by the calls SIPp completed: user and kernel time per call apart,
# since the kernel's part is mostly the same datagrams for both proxies and the race is in user
# time. Every ratio osn/Kamailio is taken pair by pair, over all the pairs of the run, and given
# as median and range; no single run decides it.
#
# The machine's UDP limit is measured in the same run: bench/udp_limit.c (built as udp_limit
# beside osn) after each pair, 200-byte datagrams through sendmmsg/recvmmsg on loopback, moved
# datagrams per CPU-second (one send + one receive each). The node's figure is (datagrams read
# + datagrams sent) / 2 per CPU-second of the node (its --json summary's counters), and the
# table gives it as a fraction of the limit measured after the same pair.
#
# SIPp's own CPU (uac, uas) is shown as a share of one core over the run: near 100%, a rate
# below the target or a watchdog trip means SIPp, not the proxy, was the bottleneck.
#
# Usage: bench/node_cpu.sh [OSN]        (default build/osn beside this script)
#   RATE=1000 DURATION=20 PAIRS=5    calls/s, seconds per run, pairs of runs
#   BENCH_SHORT=1                    a try of the script: RATE=300 DURATION=5 PAIRS=2 unless set
#   DIRECT=1                         first a run with no proxy (uac -> uas): SIPp's own cost
#   BENCH_WORKERS, BENCH_KAM_MEM     see bench/node_lib.sh
#   NL_KEEP=1                        keep the runs' files
# Output: the heading (date, load average, generator, proxies), one row per run, then the
# ratios (median [min, max] over the pairs) and the node's share of the UDP limit. Exit 1 when a
# run gave no row, 2 on bad settings.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OSN=${1:-${OSN:-$ROOT/build/osn}}
[ -e "$OSN" ] && OSN=$(cd "$(dirname "$OSN")" && pwd)/$(basename "$OSN")
if [ "${BENCH_SHORT:-0}" = 1 ]; then
    RATE=${RATE:-300} DURATION=${DURATION:-5} PAIRS=${PAIRS:-2}
fi
RATE=${RATE:-1000}
DURATION=${DURATION:-20}
PAIRS=${PAIRS:-5}
for v in RATE DURATION PAIRS; do
    case ${!v} in
    '' | *[!0-9]* | 0)
        echo "node_cpu: $v='${!v}' is not a positive integer" >&2
        exit 2
        ;;
    esac
done
UDP_LIMIT=${UDP_LIMIT:-$(dirname "$OSN")/udp_limit}
CALLS=$((RATE * DURATION))
. "$ROOT/tests/node/lib.sh"
. "$HERE/node_lib.sh"
runs=$((2 * PAIRS + ${DIRECT:-0}))
nl_init node_cpu $((runs * (DURATION + 90) + PAIRS * 20 + 60)) --load
export OSN
if ! nl_have_node; then
    echo "node_cpu: \`$OSN node\` does not exist; nothing to compare" >&2
    exit 1
fi
# SIPp's 64 KB socket buffers overflow within milliseconds when it is descheduled on a shared
# machine (bench/node_maxrate.sh measures it): 1 MB each (the kernel caps them at rmem_max).
SIPP_BUF=(-buff_size 1048576)
RES=$NL_TMP/results # one line per run: pair proxy ok user_ticks sys_ticks dgrams
: >"$RES"
LIM=$NL_TMP/udp_limit # one line per pair: pair datagrams_per_cpu_s
: >"$LIM"

failed=0
# bad_run PX MSG: a run that cannot give a row: said on stderr, counted (exit 1 at the end).
bad_run() {
    echo "$1: ERROR: ${*:2}; no row" >&2
    failed=$((failed + 1))
}

# run PAIR PX: one run of RATE x DURATION calls through PX (direct, kamailio, osn); a row.
run() {
    local pair=$1 px=$2 n="$2_$1"
    NL_UAS_TIME=$((DURATION + 80)) nl_sipp_uas "uas_$n" 0 "${SIPP_BUF[@]}" || {
        bad_run "$px" "SIPp uas did not start"
        return
    }
    local p_uas=${NL_PORT[uas_$n]} dest
    case $px in
    direct) ;;
    kamailio) nl_kam_start "px_$n" 0 "$p_uas" || {
        bad_run "$px" "Kamailio did not start"
        nl_stop "uas_$n"
        return
    } ;;
    osn) nl_edge_fast "px_$n" 0 "$p_uas" || {
        bad_run "$px" "osn node did not start"
        nl_stop "uas_$n"
        return
    } ;;
    esac
    dest=$p_uas
    [ "$px" != direct ] && dest=${NL_PORT[px_$n]}
    sleep 1
    local ppid='' uas_pid p0='0 0' p1='0 0' s0 s1 t0 t1 uac_pid u1=0 st f rc
    [ "$px" != direct ] && ppid=$(nl_real_pid "px_$n")
    uas_pid=$(nl_real_pid "uas_$n")
    [ -n "$ppid" ] && p0=$(bench_cpu_split "$ppid")
    s0=$(nl_cpu_ticks "$uas_pid")
    t0=$(date +%s.%N)
    nl_sipp_uac_bg "uac_$n" "$dest" "$RATE" "$CALLS" "${SIPP_BUF[@]}" "${SIPP_T[@]}"
    uac_pid=$(nl_real_pid "uac_$n")
    # the uac's CPU: sampled until it exits (its /proc entry goes away with it)
    while read -r st 2>/dev/null <"/proc/$uac_pid/stat"; do
        read -r -a f <<<"${st##*) }"
        u1=$((f[11] + f[12]))
        sleep 0.5
    done
    nl_wait_pid "uac_$n"
    rc=$?
    t1=$(date +%s.%N)
    [ -n "$ppid" ] && p1=$(bench_cpu_split "$ppid")
    s1=$(nl_cpu_ticks "$uas_pid")
    local ok out wd unexp retr din=- dout=- cap=-
    ok=$(nl_stat "uac_$n" 'SuccessfulCall(C)')
    out=$(nl_stat "uac_$n" 'OutgoingCall(C)')
    wd="$(nl_stat "uac_$n" 'WatchdogMajor(C)')/$(nl_stat "uac_$n" 'WatchdogMinor(C)')"
    unexp=$(nl_stat "uac_$n" 'FailedUnexpectedMessage(C)')
    retr=$(nl_stat "uac_$n" 'Retransmissions(C)')
    [ "$px" != direct ] && nl_stop "px_$n"
    nl_stop "uas_$n"
    # the node's counters: its --json summary, written when it stops
    [ "$px" = osn ] && read -r din dout cap <<<"$(nl_json "px_$n" datagrams_in datagrams_out \
        refused_at_cap)"
    if [ ! -s "${NL_DIR[uac_$n]}/stat.csv" ]; then
        bad_run "$px" "SIPp wrote no statistics (${NL_DIR[uac_$n]}/stat.csv; status $rc)"
        return
    fi
    if [ "${ok:-0}" = 0 ]; then
        bad_run "$px" "SIPp offered '${out}' calls and not one succeeded (status $rc)"
        return
    fi
    local row
    row=$("$NL_PY" - <<PY
hz, el = $(getconf CLK_TCK), $t1 - $t0
pu0, ps0 = map(int, "$p0".split())
pu1, ps1 = map(int, "$p1".split())
ok, out = int("${ok:-0}" or 0), int("${out:-0}" or 0)
u, s = (pu1 - pu0) / hz, (ps1 - ps0) / hz
px = "$px"
def ms(x):
    return "-" if px == "direct" else "%.4f" % (1000 * x / ok)
dg = "-"
dpc = "-"
if px == "osn" and "$din".isdigit() and "$dout".isdigit() and u + s > 0:
    d = (int("$din") + int("$dout")) / 2
    dg = "%.1f" % (d / ok)
    dpc = "%.0f" % (d / (u + s))
print("%3s %-9s %6d %6d %8s %8s %8s | %6s %9s | %7s %7s %6.0f | rc=%s watchdog(major/minor)=$wd"
      " unexpected=$unexp retrans=$retr refused_at_cap=$cap" % (
      "$pair", px, $CALLS, ok, ms(u), ms(s), ms(u + s), dg, dpc,
      "%.0f%%" % (100 * $u1 / hz / el), "%.0f%%" % (100 * ($s1 - $s0) / hz / el),
      out / $DURATION, "$rc"))
PY
)
    echo "$row"
    [ "$px" != direct ] && echo "$pair $px $ok $(($(cut -d' ' -f1 <<<"$p1") - $(cut -d' ' -f1 \
        <<<"$p0"))) $(($(cut -d' ' -f2 <<<"$p1") - $(cut -d' ' -f2 <<<"$p0"))) $din $dout" >>"$RES"
}

# limit PAIR: the machine's UDP limit now (udp_limit, 2 CPU-seconds), one line of LIM.
limit() {
    local line
    if [ ! -x "$UDP_LIMIT" ]; then
        return
    fi
    line=$(timeout 30 "$UDP_LIMIT" 2 32 200) || return
    echo "$1 $(sed -n 's/.*datagrams_per_cpu_s=\([0-9]*\).*/\1/p' <<<"$line")" >>"$LIM"
    echo "    udp limit after pair $1: $line"
}

bench_header "osn node CPU per call at $RATE calls/s, $DURATION s a run, $PAIRS interleaved pairs"
[ -x "$UDP_LIMIT" ] || echo "udp limit: skipped, $UDP_LIMIT not built (ninja udp_limit)"
echo
printf '%3s %-9s %6s %6s %8s %8s %8s | %6s %9s | %7s %7s %6s | %s\n' pair proxy calls ok \
    "user ms" "sys ms" "cpu ms" "dg/call" "dg/cpu-s" "uac cpu" "uas cpu" "rate/s" notes
[ "${DIRECT:-0}" = 1 ] && run 0 direct
for pair in $(seq 1 "$PAIRS"); do
    if [ $((pair % 2)) = 1 ]; then
        run "$pair" osn
        run "$pair" kamailio
    else
        run "$pair" kamailio
        run "$pair" osn
    fi
    limit "$pair"
done
echo "(ms: CPU milliseconds per completed call, user / kernel / both, the proxy and its"
echo " descendants; dg: the node's datagrams moved, (read + sent) / 2, per call and per CPU-second)"
echo "load average at the end: $(bench_loadavg)"
"$NL_PY" "$HERE/node_pairs.py" "$RES" "$LIM" "$(getconf CLK_TCK)"
if [ "$failed" -gt 0 ]; then
    echo "node_cpu: ERROR: $failed run(s) failed (above)" >&2
    exit 1
fi
