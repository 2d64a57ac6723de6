#!/usr/bin/env bash
# The highest call rate a proxy chain sustains with SIPp as the generator (issue 17,
# "Performance"): for each proxy in turn,
#
#   SIPp uac --RATE calls/s--> PROXY --> SIPp uas          (all on 127.0.0.1)
#
# at rising rates (RATES), DURATION seconds each, the proxy started afresh for every rate:
# `osn node` as an edge with every cost 0 and control none (its real speed), and Kamailio's
# stateful proxy (tests/node/kamailio/stateful.cfg, one worker) beside it. A rate is sustained
# when every call SIPp was asked for succeeded, SIPp sent the INVITEs at >= 95% of the rate asked
# (first to last INVITE, from its -trace_rtt file) and the p99 INVITE -> 200 time stayed below
# T1 = 500 ms (beyond it the UAC retransmits: the chain no longer keeps up in real time).
# The steps stop at the first rate that is not. Each row says who was busy: the proxy's, the
# uac's and the uas's CPU as shares of one core over the step (utime + stime from
# /proc/PID/stat), SIPp's watchdog counters, and the datagrams the kernel dropped at each
# process's sockets for want of buffer room (/proc/net/udp): a uac near 100% of a core, a
# watchdog trip, or drops at a SIPp's socket while the proxy's has none means SIPp itself was
# the bottleneck, not the proxy.
#
# Usage: bench/node_maxrate.sh [OSN]     (default build/osn beside this script)
#   RATES="1000 2000 4000 6000 8000 12000"  DURATION=10  PROXIES="direct osn kamailio"
#   (direct: SIPp uac -> SIPp uas with no proxy, what SIPp alone sustains on this machine)
# Output: one row per step, then per proxy "highest sustained: R calls/s (limited by: ...)".
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OSN=${1:-${OSN:-$ROOT/build/osn}}
[ -e "$OSN" ] && OSN=$(cd "$(dirname "$OSN")" && pwd)/$(basename "$OSN")
RATES=${RATES:-1000 2000 4000 6000 8000 12000}
DURATION=${DURATION:-10}
PROXIES=${PROXIES:-direct osn kamailio}
. "$ROOT/tests/node/lib.sh"
nsteps=$(($(wc -w <<<"$RATES") * $(wc -w <<<"$PROXIES")))
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

printf '%-9s %6s %7s %7s %8s %7s | %9s %8s %8s %s\n' proxy rate calls ok "rate/s" "p99 ms" \
    "proxy cpu" "uac cpu" "uas cpu" notes
failed=0
# bad_run PX MSG: a run that cannot give a row: said on stderr, counted (exit 1 at the end).
bad_run() {
    echo "$1: ERROR: ${*:2}; no row" >&2
    failed=$((failed + 1))
}
for px in $PROXIES; do
    best=0
    limit="every rate asked was sustained"
    step=0
    for rate in $RATES; do
        step=$((step + 1))
        calls=$((rate * DURATION))
        # Each element binds a port of its own choosing; NL_PORT gives it back (lib.sh).
        NL_UAS_TIME=$((DURATION + 60)) nl_sipp_uas "uas_${px}_$step" 0 "${SIPP_BUF[@]}" || {
            bad_run "$px" "SIPp uas did not start"
            break
        }
        P_UAS=${NL_PORT[uas_${px}_$step]}
        case $px in
        direct) ;;
        kamailio) nl_kam_start "px_${px}_$step" 0 "$P_UAS" || {
            bad_run "$px" "Kamailio did not start"
            nl_stop "uas_${px}_$step"
            break
        } ;;
        osn) nl_edge_fast "px_${px}_$step" 0 "$P_UAS" || {
            bad_run "$px" "osn node did not start"
            nl_stop "uas_${px}_$step"
            break
        } ;;
        *)
            echo "unknown proxy $px (direct, osn, kamailio)" >&2
            nl_stop "uas_${px}_$step"
            break
            ;;
        esac
        dest=$P_UAS
        [ "$px" != direct ] && dest=${NL_PORT[px_${px}_$step]}
        sleep 1
        ppid=
        [ "$px" != direct ] && ppid=$(nl_real_pid "px_${px}_$step")
        uas_pid=$(nl_real_pid "uas_${px}_$step")
        p0=0
        [ -n "$ppid" ] && p0=$(nl_cpu_ticks "$ppid")
        s0=$(nl_cpu_ticks "$uas_pid")
        t0=$(date +%s.%N)
        NL_UAC_TIME=$((DURATION + 40)) nl_sipp_uac_bg "uac_${px}_$step" "$dest" "$rate" "$calls" \
            "${SIPP_BUF[@]}"
        uac_pid=$(nl_real_pid "uac_${px}_$step")
        u1=0
        d_uac=0
        while read -r st 2>/dev/null <"/proc/$uac_pid/stat"; do
            f=(${st##*) })
            u1=$((f[11] + f[12]))
            d=$(udp_drops "$uac_pid")
            [ "${d:-0}" -gt "$d_uac" ] && d_uac=$d
            sleep 0.2
        done
        d_uas=$(udp_drops "$uas_pid")
        d_px=0
        [ -n "$ppid" ] && d_px=$(udp_drops "$ppid")
        nl_wait_pid "uac_${px}_$step"
        t1=$(date +%s.%N)
        p1=0
        [ -n "$ppid" ] && p1=$(nl_cpu_ticks "$ppid")
        s1=$(nl_cpu_ticks "$uas_pid")
        name="uac_${px}_$step"
        ok=$(nl_stat "$name" 'SuccessfulCall(C)')
        out=$(nl_stat "$name" 'OutgoingCall(C)')
        wd="$(nl_stat "$name" 'WatchdogMajor(C)')/$(nl_stat "$name" 'WatchdogMinor(C)')"
        retr=$(nl_stat "$name" 'Retransmissions(C)')
        [ "$px" != direct ] && nl_stop "px_${px}_$step"
        nl_stop "uas_${px}_$step"
        if [ ! -s "${NL_DIR[$name]}/stat.csv" ] || [ "${ok:-0}" = 0 ]; then
            bad_run "$px" "at $rate calls/s SIPp offered '${out}' calls and '${ok}' succeeded" \
                "(statistics: ${NL_DIR[$name]}/stat.csv): the chain did not work"
            break
        fi
        read -r verdict pcpu ucpu scpu crate p99 why <<<"$("$NL_PY" - "${NL_DIR[$name]}" <<PY
import csv, glob, sys
hz, el = $HZ, $t1 - $t0
ok, out, rate, calls = int('${ok:-0}' or 0), int('${out:-0}' or 0), $rate, $calls
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
pc, uc, sc = 100 * ($p1 - $p0) / hz / el, 100 * $u1 / hz / el, 100 * ($s1 - $s0) / hz / el
# sustained: every call answered, at the rate asked, and in real time (p99 below T1 = 500 ms,
# beyond which SIPp retransmits the INVITE)
sustained = ok == calls and out == calls and crate >= 0.95 * rate and p99 < 500
wd = "$wd"
if sustained:
    why = "-"
elif uc >= 90 or wd not in ("0/0", "/") or $d_uac > 0:
    why = "SIPp-uac"
elif pc >= 90 or $d_px > 0:
    why = "proxy"
elif sc >= 90 or $d_uas > 0:
    why = "SIPp-uas"
else:
    why = "losses-or-delay"
print("yes" if sustained else "no", "%.0f%%" % pc, "%.0f%%" % uc, "%.0f%%" % sc, "%.0f" % crate,
      "%.0f" % p99, why)
PY
)"
        printf '%-9s %6s %7s %7s %8s %7s | %9s %8s %8s %s\n' "$px" "$rate" "$calls" "$ok" \
            "$crate" "$p99" "$pcpu" "$ucpu" "$scpu" \
            "sustained=$verdict watchdog(major/minor)=$wd retrans=$retr rcvbuf-drops(uac/proxy/uas)=$d_uac/$d_px/$d_uas"
        if [ "$verdict" = yes ]; then
            best=$rate
        else
            limit="$why at $rate calls/s"
            break
        fi
    done
    echo "$px: highest sustained: $best calls/s (limited by: $limit)"
done
if [ "$failed" -gt 0 ]; then
    echo "node_maxrate: ERROR: $failed run(s) failed (above)" >&2
    exit 1
fi
