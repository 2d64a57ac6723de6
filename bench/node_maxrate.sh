#!/usr/bin/env bash
# The highest call rate a proxy holds for DURATION seconds (60 by default), `osn node` against
# Kamailio, SIPp as the generator (issues 17 and 34):
#
#   SIPp uac --RATE calls/s--> PROXY --> SIPp uas          (all on 127.0.0.1)
#
# at rising rates (RATES), each proxy started afresh for every step, the proxies of one rate run
# one after the other (their order alternating from rate to rate) so that both meet the same
# machine: `osn node` as an edge with every cost 0 and control none (its real speed) and
# Kamailio's stateful proxy as bench/node_lib.sh runs it (TLSF, -m 2048, -b 4194304, as many workers as
# the node's loops). A proxy holds a rate when
#   - every call SIPp was asked for succeeded,
#   - SIPp sent the INVITEs at >= 95% of the rate asked (first to last INVITE, -trace_rtt),
#   - the p99 INVITE -> 200 time stayed below T1 = 500 ms (beyond it the UAC retransmits: the
#     chain no longer keeps up in real time), and
#   - the proxy refused nothing for want of room: the node's refused_at_cap counter is 0 (the
#     503s at max_transactions: each call keeps ~4 transactions for 32 s, RFC 6026, so a rate
#     held 60 s fills a table a 10 s step never does); Kamailio wrote no memory error to its
#     log ("out of memory", "could not allocate").
# A proxy leaves the race at its first rate not held; the others go on. Each row says who was
# busy: the proxy's user and kernel CPU, the uac's and the uas's CPU as shares of one core over
# the step (/proc/PID/stat), SIPp's watchdog counters, and the datagrams the kernel dropped at
# each process's sockets for want of buffer room (/proc/net/udp): a uac near 100% of a core, a
# watchdog trip, or drops at a SIPp's socket while the proxy's has none means SIPp itself was
# the bottleneck, not the proxy. The node's rows also give its datagrams moved per CPU-second,
# (read + sent) / 2, as a fraction of the machine's UDP limit measured at the start of the run
# (bench/udp_limit.c).
#
# Usage: bench/node_maxrate.sh [OSN]     (default build/osn beside this script)
#   RATES="1000 2000 3000 4000 6000 8000 12000"  DURATION=60  PROXIES="direct osn kamailio"
#   (direct: SIPp uac -> SIPp uas with no proxy, what SIPp alone holds on this machine; a proxy
#   named twice runs once)
#   BENCH_SHORT=1   a try of the script: RATES="300 600" DURATION=5 PROXIES="osn kamailio"
#                   unless set
#   BENCH_WORKERS, BENCH_KAM_MEM: see bench/node_lib.sh
# Output: the heading, one row per step, then per proxy "highest held: R calls/s for D s
# (limited by: ...)" and the ratio osn/kamailio of the two. Exit 1 when a step gave no row.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OSN=${1:-${OSN:-$ROOT/build/osn}}
[ -e "$OSN" ] && OSN=$(cd "$(dirname "$OSN")" && pwd)/$(basename "$OSN")
if [ "${BENCH_SHORT:-0}" = 1 ]; then
    RATES=${RATES:-300 600} DURATION=${DURATION:-5} PROXIES=${PROXIES:-osn kamailio}
fi
RATES=${RATES:-1000 2000 3000 4000 6000 8000 12000}
DURATION=${DURATION:-60}
PROXIES=${PROXIES:-direct osn kamailio}
for r in $RATES $DURATION; do
    case $r in
    '' | *[!0-9]* | 0)
        echo "node_maxrate: '$r' in RATES or DURATION is not a positive integer" >&2
        exit 2
        ;;
    esac
done
for px in $PROXIES; do
    case $px in
    direct | osn | kamailio) ;;
    *)
        echo "node_maxrate: unknown proxy '$px' in PROXIES (direct, osn, kamailio)" >&2
        exit 2
        ;;
    esac
done
read -r -a PXS <<<"$(
    set -f
    for px in $PROXIES; do echo "$px"; done | awk '!seen[$0]++' | tr '\n' ' '
)"
UDP_LIMIT=${UDP_LIMIT:-$(dirname "$OSN")/udp_limit}
. "$ROOT/tests/node/lib.sh"
. "$HERE/node_lib.sh"
nsteps=$(($(wc -w <<<"$RATES") * ${#PXS[@]}))
nl_init node_maxrate $((nsteps * (DURATION + 120) + 60)) --load
export OSN
HZ=$(getconf CLK_TCK)
# SIPp's socket buffers are 64 KB by default: about 50 datagrams, a few milliseconds at these
# rates. On a shared machine SIPp is descheduled longer than that while the proxy keeps
# delivering, and the kernel drops what does not fit (UdpRcvbufErrors), which SIPp then sees
# as 500 ms retransmissions: its buffers get 1 MB here (the kernel caps them at rmem_max).
SIPP_BUF=(-buff_size 1048576)

# udp_drops PID: datagrams the kernel dropped at PID's UDP sockets for want of buffer room
# (the drops column of /proc/net/udp, matched to the process by socket inode).
udp_drops() {
    "$NL_PY" - "$1" <<'PY'
import os, sys
pid = sys.argv[1]
inodes = set()
try:
    for fd in os.listdir("/proc/%s/fd" % pid):
        try:
            t = os.readlink("/proc/%s/fd/%s" % (pid, fd))
        except OSError:
            continue
        if t.startswith("socket:["):
            inodes.add(t[8:-1])
except OSError:
    pass
n = 0
for line in open("/proc/net/udp").readlines()[1:]:
    f = line.split()
    if f[9] in inodes:
        n += int(f[-1])
print(n)
PY
}

failed=0
# bad_run PX MSG: a step that cannot give a row: said on stderr, counted (exit 1 at the end).
bad_run() {
    echo "$1: ERROR: ${*:2}; no row" >&2
    failed=$((failed + 1))
}

declare -A BEST LIMIT OUT
# step PX RATE STEP: one step; sets OUT[PX] to yes (held), no, or error.
step() {
    local px=$1 rate=$2 n="$1_$3" calls=$(($2 * DURATION))
    OUT[$px]=error
    NL_UAS_TIME=$((DURATION + 60)) nl_sipp_uas "uas_$n" 0 "${SIPP_BUF[@]}" || {
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
    local ppid='' uas_pid p0='0 0' p1='0 0' s0 s1 t0 t1 uac_pid u1=0 d_uac=0 d_uas d_px=0 st f d
    [ "$px" != direct ] && ppid=$(nl_real_pid "px_$n")
    uas_pid=$(nl_real_pid "uas_$n")
    [ -n "$ppid" ] && p0=$(bench_cpu_split "$ppid")
    s0=$(nl_cpu_ticks "$uas_pid")
    t0=$(date +%s.%N)
    NL_UAC_TIME=$((DURATION + 40)) nl_sipp_uac_bg "uac_$n" "$dest" "$rate" "$calls" \
        "${SIPP_BUF[@]}" "${SIPP_T[@]}"
    uac_pid=$(nl_real_pid "uac_$n")
    while read -r st 2>/dev/null <"/proc/$uac_pid/stat"; do
        read -r -a f <<<"${st##*) }"
        u1=$((f[11] + f[12]))
        d=$(udp_drops "$uac_pid")
        [ "${d:-0}" -gt "$d_uac" ] && d_uac=$d
        sleep 0.5
    done
    d_uas=$(udp_drops "$uas_pid")
    [ -n "$ppid" ] && d_px=$(udp_drops "$ppid")
    nl_wait_pid "uac_$n"
    t1=$(date +%s.%N)
    [ -n "$ppid" ] && p1=$(bench_cpu_split "$ppid")
    s1=$(nl_cpu_ticks "$uas_pid")
    local ok out wd retr din=- dout=- cap=0 row verdict why
    ok=$(nl_stat "uac_$n" 'SuccessfulCall(C)')
    out=$(nl_stat "uac_$n" 'OutgoingCall(C)')
    wd="$(nl_stat "uac_$n" 'WatchdogMajor(C)')/$(nl_stat "uac_$n" 'WatchdogMinor(C)')"
    retr=$(nl_stat "uac_$n" 'Retransmissions(C)')
    [ "$px" != direct ] && nl_stop "px_$n"
    nl_stop "uas_$n"
    case $px in
    osn) read -r din dout cap <<<"$(nl_json "px_$n" datagrams_in datagrams_out refused_at_cap)" ;;
    kamailio) cap=$(grep -ciE 'out of memory|could not allocate|not enough (shared )?memory' \
        "${NL_DIR[px_$n]}/kamailio.log") ;;
    esac
    if [ ! -s "${NL_DIR[uac_$n]}/stat.csv" ] || [ "${ok:-0}" = 0 ]; then
        bad_run "$px" "at $rate calls/s SIPp offered '${out}' calls and '${ok}' succeeded" \
            "(statistics: ${NL_DIR[uac_$n]}/stat.csv): the chain did not work"
        return
    fi
    row=$("$NL_PY" - "${NL_DIR[uac_$n]}" <<PY
import csv, glob, sys
hz, el = $HZ, $t1 - $t0
ok, out, rate, calls = int('${ok:-0}' or 0), int('${out:-0}' or 0), $rate, $calls
pu0, ps0 = map(int, "$p0".split())
pu1, ps1 = map(int, "$p1".split())
cap = int("${cap:-0}") if "${cap:-0}".isdigit() else -1
# SIPp's -trace_rtt rows: (answer time ms, INVITE -> 200 ms, rtd) for every answered call; the
# INVITEs went at time - rtt, so their span gives the rate SIPp achieved
sent, rtt = [], []
for f in glob.glob(sys.argv[1] + "/*_rtt.csv"):
    for r in csv.reader(open(f), delimiter=";"):
        try:
            t, d, k = float(r[0]), float(r[1]), r[2].strip()
        except (ValueError, IndexError):
            continue
        if k == "1":
            sent.append(t - d)
            rtt.append(d)
sent.sort()
rtt.sort()
crate = (len(sent) - 1) / ((sent[-1] - sent[0]) / 1000) if len(sent) > 1 and sent[-1] > sent[0] else 0
p99 = rtt[min(len(rtt) - 1, int(0.99 * len(rtt)))] if rtt else float("nan")
pu, ps = 100 * (pu1 - pu0) / hz / el, 100 * (ps1 - ps0) / hz / el
uc, sc = 100 * $u1 / hz / el, 100 * ($s1 - $s0) / hz / el
held = ok == calls and out == calls and crate >= 0.95 * rate and p99 < 500 and cap == 0
wd = "$wd"
if held:
    why = "-"
elif cap != 0:
    why = "refusals-at-the-cap"
elif uc >= 90 or wd not in ("0/0", "/") or $d_uac > 0:
    why = "SIPp-uac"
elif pu + ps >= 90 or $d_px > 0:
    why = "proxy"
elif sc >= 90 or $d_uas > 0:
    why = "SIPp-uas"
else:
    why = "losses-or-delay"
dpc = "-"
lim = float("${ULIM:-0}" or 0)
if "$px" == "osn" and "$din".isdigit() and "$dout".isdigit() and pu1 + ps1 > pu0 + ps0:
    d = (int("$din") + int("$dout")) / 2 / ((pu1 + ps1 - pu0 - ps0) / hz)
    dpc = "%.0f" % d + ("(%.2f)" % (d / lim) if lim > 0 else "")
print("yes" if held else "no", why, "%-9s %6d %7d %7d %7.0f %7.0f | %5.0f%% %5.0f%% %7s %7s | %-15s | "
      "held=%s watchdog(major/minor)=%s retrans=$retr refused(cap/mem)=%s rcvbuf-drops(uac/proxy/uas)=$d_uac/$d_px/$d_uas"
      % ("$px", rate, calls, ok, crate, p99, pu, ps, "%.0f%%" % uc, "%.0f%%" % sc, dpc,
         "yes" if held else "no", wd, "${cap:--}" if "$px" != "direct" else "-"))
PY
)
    read -r verdict why row <<<"$row"
    echo "$row"
    OUT[$px]=$verdict
    if [ "$verdict" = yes ]; then
        BEST[$px]=$rate
    else
        LIMIT[$px]="$why at $rate calls/s"
    fi
}

bench_header "osn node highest call rate held $DURATION s (every call answered, p99 INVITE->200 < 500 ms, no refusal at the cap)"
ULIM=
if [ -x "$UDP_LIMIT" ]; then
    line=$(timeout 30 "$UDP_LIMIT" 2 32 200) && echo "udp limit at the start: $line"
    ULIM=$(sed -n 's/.*datagrams_per_cpu_s=\([0-9]*\).*/\1/p' <<<"${line:-}")
else
    echo "udp limit: skipped, $UDP_LIMIT not built (ninja udp_limit)"
fi
echo
printf '%-9s %6s %7s %7s %7s %7s | %6s %6s %7s %7s | %-15s | %s\n' proxy rate calls ok "rate/s" \
    "p99 ms" "px usr" "px sys" "uac cpu" "uas cpu" "dg/cpu-s(limit)" notes
active=("${PXS[@]}")
for px in "${PXS[@]}"; do
    BEST[$px]=0
    LIMIT[$px]="every rate asked was held"
done
k=0
for rate in $RATES; do
    [ ${#active[@]} = 0 ] && break
    k=$((k + 1))
    order=("${active[@]}")
    if [ $((k % 2)) = 0 ]; then # every other rate in the reverse order
        order=()
        for ((i = ${#active[@]} - 1; i >= 0; i--)); do order+=("${active[$i]}"); done
    fi
    still=()
    for px in "${order[@]}"; do
        step "$px" "$rate" "$k"
        case ${OUT[$px]} in
        yes) still+=("$px") ;;
        error) LIMIT[$px]="a failed step at $rate calls/s (above)" ;;
        esac
    done
    active=()
    for px in "${PXS[@]}"; do # the race's order, not this step's
        for s in "${still[@]}"; do [ "$s" = "$px" ] && active+=("$px"); done
    done
done
echo "load average at the end: $(bench_loadavg)"
for px in "${PXS[@]}"; do
    echo "$px: highest held: ${BEST[$px]} calls/s for $DURATION s (limited by: ${LIMIT[$px]})"
done
if [ -n "${BEST[osn]:-}" ] && [ -n "${BEST[kamailio]:-}" ]; then
    "$NL_PY" -c "
o, k = ${BEST[osn]}, ${BEST[kamailio]}
print('osn/kamailio highest rate held: ' + ('%.2f' % (o / k) if k else 'n/a (Kamailio held none)')
      + ' (goal >= 2; a ratio of two rates from the list RATES, so only as fine as the list)')"
fi
if [ "$failed" -gt 0 ]; then
    echo "node_maxrate: ERROR: $failed step(s) failed (above)" >&2
    exit 1
fi
