#!/usr/bin/env bash
# The load generators' cost per call at a given rate (issue 30), measured so that the machine's
# other load moves it little: CPU-seconds per call (the generator process's own user + system
# time, from the kernel's rusage of it, divided by its calls) and system calls per call (perf's
# raw_syscalls:sys_enter count of the process), with its wake-ups per call (its waits: ppoll,
# poll, epoll_wait, select and their variants, counted the same way). OSN's generator (`osn
# node element=uac`, Poisson at RATE, hold 1 ms) and SIPp's built-in uac (`sipp -sn uac`, RATE
# calls/s, RATE x DURATION calls) each go straight to a fresh zero-cost osn uas sized for the
# rate (nl_uas_sized), in interleaved pairs (osn then SIPp, RUNS times), so that a change of the
# machine's load hits both. Two runs per generator and pair: one under /usr/bin/time alone (the
# CPU figure: perf's tracepoints cost a little per system call), one under `perf stat` (the
# counts), which also gives the sleeps per call (voluntary context switches: the waits that
# slept). The medians and ranges over the pairs are printed at the end.
#
# OSN_BASE=PATH adds a third contestant, "base" (another osn binary, e.g. main's), run in the
# same interleaving (base, osn, sipp), so that a change is measured against the load of its
# own minutes. NICE=N runs the generators and the uas at nice N (root, N < 0: they are then
# served first on a shared machine, closer to a quiet one; the figures say which).
#
# Usage: bench/gen_cost.sh OSN
#   RATES="4000 8000"  DURATION=10  RUNS=3  GEN="osn sipp"  OSN_BASE=  NICE=0
# Time: about 2 x (DURATION + 3) s per generator, pair and rate (2 rates x 3 pairs x 2
# generators x 10 s: 6 minutes).
set -u
OSN=$1
RATES=${RATES:-4000 8000}
DURATION=${DURATION:-10}
RUNS=${RUNS:-3}
OSN_BASE=${OSN_BASE:-}
GEN=${GEN:-${OSN_BASE:+base }osn sipp}
NICE=${NICE:-0}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/tests/node/lib.sh"
nsteps=$(($(wc -w <<<"$RATES") * RUNS * $(wc -w <<<"$GEN") * 2))
nl_init gencost $((nsteps * (DURATION + 60) + 60)) --load
command -v perf >/dev/null || { echo "gen_cost.sh: perf not installed" >&2; exit 2; }
SIPP_BUF=(-buff_size 1048576) # as bench/node_maxrate.sh: SIPp's sockets hold 1 MB
WAITS='syscalls:sys_enter_ppoll,syscalls:sys_enter_poll,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_select,syscalls:sys_enter_pselect6'
RES=$NL_TMP/results
: >"$RES"

# run GEN RATE K MODE: one run (MODE time or perf); appends "GEN RATE K MODE calls cpu_s
# sleeps syscalls waits" to $RES.
run() {
    local gen=$1 rate=$2 k=$3 mode=$4 dir=$NL_TMP/$1.$2.$3.$4 calls wrap cpu sys waits
    local uas=uas.$1.$2.$3.$4 # a name, a directory and a port of its own for each run
    mkdir -p "$dir"
    nl_up "uas did not start" nl_uas_sized "$uas" "$rate"
    nl_require_up
    local dest=${NL_PORT[$uas]} bin=$OSN
    [ "$gen" = base ] && bin=$OSN_BASE
    [ "$NICE" != 0 ] && renice -n "$NICE" -p "$(nl_real_pid "$uas")" >/dev/null
    if [ "$mode" = time ]; then
        wrap=(nice -n "$NICE" /usr/bin/time -f '%U %S %w' -o "$dir/cpu")
    else
        wrap=(nice -n "$NICE" perf stat -x, -o "$dir/perf" -e "raw_syscalls:sys_enter,$WAITS" --)
    fi
    if [ "$gen" != sipp ]; then
        timeout -k 5 $((DURATION + 60)) "${wrap[@]}" "$bin" node --set node.element=uac \
            --set node.listen=127.0.0.1:0 --set "node.next_hop=127.0.0.1:$dest" \
            --set "node.duration=$DURATION" --set "source.rate=$rate" --set source.hold=0.001 \
            --set "net.seed=$k" --json "$dir/summary.json" -q >"$dir/node.out" \
            2>"$dir/node.err" {NL_LOCK_FD}>&-
        nl_check $? "$gen generator at $rate/s: $(tail -2 "$dir/node.err")"
        calls=$("$NL_PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); u=j["uac"]
print(u["good"], u["calls_started"], "%.2f" % (1e3 * j["lag_max"]), j["late_sends"])' \
            "$dir/summary.json" 2>/dev/null)
        read -r calls started lagmax late <<<"$calls"
        [ -n "$calls" ] && [ "$calls" = "$started" ]
        nl_check $? "$gen generator at $rate/s: $calls good of $started calls started"
        echo "  $gen $rate/s pair $k ($mode): $started started, $calls good, lag max" \
            "$lagmax ms, $late late > 1 ms" >&2
    else
        # shellcheck disable=SC2046
        (cd "$dir" && timeout -k 5 $((DURATION + 60)) "${wrap[@]}" sipp "127.0.0.1:$dest" -sn uac \
            $(nl_sipp_sockopts) "${SIPP_BUF[@]}" -r "$rate" -m $((rate * DURATION)) -nostdin \
            -timeout $((DURATION + 50))s -trace_stat -stf stat.csv -fd 1 >sipp.log 2>&1 \
            {NL_LOCK_FD}>&-)
        nl_check $? "SIPp at $rate/s: $(tail -2 "$dir/sipp.log")"
        NL_DIR[sipp$k]=$dir
        calls=$(nl_stat "sipp$k" 'SuccessfulCall(C)')
        [ "$calls" = $((rate * DURATION)) ]
        nl_check $? "SIPp at $rate/s: $calls successful of $((rate * DURATION))"
        echo "  sipp $rate/s pair $k ($mode): $calls successful of $((rate * DURATION))," \
            "$(nl_stat "sipp$k" 'Retransmissions(C)') retransmissions" >&2
    fi
    nl_stop "$uas" >/dev/null
    cpu=- sleeps=- sys=- waits=-
    if [ "$mode" = time ]; then
        read -r cpu sleeps < <(awk '{ print $1 + $2, $3 }' "$dir/cpu" 2>/dev/null)
    else
        sys=$(awk -F, '$3 == "raw_syscalls:sys_enter" { print $1 }' "$dir/perf")
        waits=$(awk -F, '$3 ~ /^syscalls:sys_enter_/ { s += $1 } END { print s + 0 }' "$dir/perf")
    fi
    echo "$gen $rate $k $mode ${calls:-0} ${cpu:--} ${sleeps:--} ${sys:--} ${waits:--}" >>"$RES"
}

echo "gen_cost.sh: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)," \
    "rates $RATES, $DURATION s, $RUNS pairs, nice $NICE"
for rate in $RATES; do
    for k in $(seq 1 "$RUNS"); do
        for gen in $GEN; do
            run "$gen" "$rate" "$k" time
            run "$gen" "$rate" "$k" perf
        done
    done
done
echo "gen_cost.sh: done $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$NL_PY" - "$RES" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
def fig(vals):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "-"
    return "%.3g [%.3g-%.3g]" % (st.median(vals), min(vals), max(vals))
print("%-5s %7s  %-24s %-22s %-22s %-22s" % ("gen", "rate/s", "CPU us/call med [range]",
      "sleeps/call", "syscalls/call", "waits/call"))
for rate in sorted({int(r[1]) for r in rows}):
    for gen in ("base", "osn", "sipp"):
        sel = [r for r in rows if r[0] == gen and int(r[1]) == rate]
        if not sel:
            continue
        def per(r, col, scale):
            try:
                c, v = float(r[4]), float(r[col])
            except ValueError:
                return None
            return v / c * scale if c > 0 else None
        cpu = [per(r, 5, 1e6) for r in sel if r[3] == "time"]
        sleeps = [per(r, 6, 1) for r in sel if r[3] == "time"]
        sysc = [per(r, 7, 1) for r in sel if r[3] == "perf"]
        waits = [per(r, 8, 1) for r in sel if r[3] == "perf"]
        print("%-5s %7d  %-24s %-22s %-22s %-22s" % (gen, rate, fig(cpu), fig(sleeps), fig(sysc),
                                                     fig(waits)))
PY
nl_summary
