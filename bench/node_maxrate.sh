#!/usr/bin/env bash
# The highest call rate a proxy holds for DURATION seconds (60 by default), `osn node` against
# Kamailio, driven by SIPp or by OSN's own generator (issues 17, 30 and 34):
#
#   GENERATOR --RATE calls/s--> PROXY --> UAS          (all on 127.0.0.1)
#
#   GEN=sipp: SIPp's built-in uac, the callee SIPp's built-in uas;
#   GEN=osn:  `osn node element=uac` (src/node/gen.c: Poisson arrivals at RATE, hold 1 ms
#             exponential, as SIPp's uac hangs up at once), the callee `osn node element=uas`
#             with every cost 0: SIPp's uas dropped datagrams at 12,000 calls/s (2026-12-06), so
#             with it the callee, not the proxy, would end the race (UAS=sipp or UAS=osn sets
#             the callee for both generators; UAS=auto, the default, is each generator's own);
#   GEN="sipp osn": both, each with each proxy, in the same run;
#   PROXIES=direct: the generator straight to the uas, what it holds alone (issue 30's check:
#             bench/gen_maxrate.sh runs both generators that way).
#
# at rising rates (RATES), each proxy started afresh for every step, the proxies of one rate run
# one after the other (their order alternating from rate to rate) so that both meet the same
# machine: `osn node` as an edge with every cost 0 and control none (its real speed) and
# Kamailio's stateful proxy as bench/node_lib.sh runs it (TLSF, -m 8192, -b 4194304, as many workers as
# the node's loops). A proxy holds a rate when (bench/node_maxrate.py judges each step)
#   - every call asked for succeeded (SIPp: RATE x DURATION; OSN's generator: every call it
#     started, no failure, abandonment or unfinished call),
#   - the generator offered >= 95% of the rate (SIPp: first to last INVITE, -trace_rtt; OSN's:
#     the calls started, less Poisson's own noise of 3 standard deviations),
#   - the p99 INVITE -> 200 time stayed below T1 = 500 ms (beyond it the UAC retransmits: the
#     chain no longer keeps up in real time; OSN's generator measures INVITE -> 180, and both
#     uas send the 200 right after the 180), and
#   - the proxy refused nothing for want of room: the node's refused_at_cap counter is 0 (the
#     503s at max_transactions: each call keeps ~4 transactions for 32 s, RFC 6026, so a rate
#     held 60 s fills a table a 10 s step never does; an osn uas's counts too); Kamailio wrote no
#     memory error to its log ("out of memory", "could not allocate").
# A proxy leaves the race at its first rate not held; the others go on. Each row says who was
# busy: the proxy's user and kernel CPU, the uac's and the uas's CPU as shares of one core over
# the step (/proc/PID/stat), SIPp's watchdog counters or OSN's generator's largest lag, and the
# datagrams the kernel dropped at each process's sockets for want of buffer room
# (/proc/net/udp): a uac near 100% of a core, a watchdog trip or a lag of 0.5 s means the
# generator itself was the bottleneck, not the proxy; with no process at a whole core (a shared
# machine starves them all) the one whose socket dropped most is named. The node's rows also give its datagrams moved per CPU-second,
# (read + sent) / 2, as a fraction of the machine's UDP limit measured at the start of the run
# (bench/udp_limit.c), and its peak RSS.
#
# Usage: bench/node_maxrate.sh [OSN]     (default build/osn beside this script)
#   RATES="1000 2000 3000 4000 6000 8000 12000"  DURATION=60  PROXIES="direct osn kamailio"
#   (direct: generator -> uas with no proxy, what the generator and uas alone hold on this
#   machine; a proxy named twice runs once)
#   GEN=sipp (default) | osn | "sipp osn"     UAS=auto (default) | sipp | osn
#   GEN_PROCS=1 OSN's generator as this many processes, each RATE / GEN_PROCS with a seed of
#               its own (Poisson streams add up to Poisson at RATE): each sends from its own
#               port, so the kernel spreads them over a node's workers (BENCH_WORKERS > 1; one
#               generator would load one worker), and two cores can both generate
#   RUNS=1      the whole race this many times; every ratio comes from all the pairs of the
#               runs (a run's two proxies under one generator, or two generators under one
#               proxy), as median and range
#   BENCH_SHORT=1   a try of the script: RATES="300 600" DURATION=5 PROXIES="osn kamailio"
#                   unless set
#   BENCH_WORKERS, BENCH_KAM_MEM: see bench/node_lib.sh
# Worst case: each step takes at most DURATION + 100 s (OSN's generator is stopped then: its
# drain, Timer B then Timer F, takes at most 64 s; SIPp's uac at DURATION + 50) and about 25 s
# of starts and stops; a contestant (generator x proxy) leaves at its first rate
# not held, so the run takes at most RUNS x rates x contestants such steps; it prints the bound.
# Output: the heading, one row per step, then per contestant "highest held: R calls/s for D s
# (limited by: ...)" and the ratios. Exit 1 when a step gave no row.
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
GEN=${GEN:-sipp}
UAS=${UAS:-auto}
RUNS=${RUNS:-1}
GEN_PROCS=${GEN_PROCS:-1}
for r in $RATES $DURATION; do
    case $r in
    '' | *[!0-9]* | 0)
        echo "node_maxrate: '$r' in RATES or DURATION is not a positive integer" >&2
        exit 2
        ;;
    esac
done
case $RUNS in
'' | *[!0-9]* | 0 | 0*)
    echo "node_maxrate: RUNS='$RUNS' is not a positive integer" >&2
    exit 2
    ;;
esac
case $GEN_PROCS in
[1-9] | 1[0-6]) ;;
*)
    echo "node_maxrate: GEN_PROCS='$GEN_PROCS' is not a whole number 1..16" >&2
    exit 2
    ;;
esac
for px in $PROXIES; do
    case $px in
    direct | osn | kamailio) ;;
    *)
        echo "node_maxrate: unknown proxy '$px' in PROXIES (direct, osn, kamailio)" >&2
        exit 2
        ;;
    esac
done
for g in $GEN; do
    case $g in
    sipp | osn) ;;
    *)
        echo "node_maxrate: unknown generator '$g' in GEN (sipp, osn)" >&2
        exit 2
        ;;
    esac
done
case $UAS in
auto | sipp | osn) ;;
*)
    echo "node_maxrate: UAS='$UAS' is not auto, sipp or osn" >&2
    exit 2
    ;;
esac
read -r -a PXS <<<"$(
    set -f
    for px in $PROXIES; do echo "$px"; done | awk '!seen[$0]++' | tr '\n' ' '
)"
read -r -a GENS <<<"$(
    set -f
    for g in $GEN; do echo "$g"; done | awk '!seen[$0]++' | tr '\n' ' '
)"
if [ ${#PXS[@]} = 0 ] || [ ${#GENS[@]} = 0 ]; then
    echo "node_maxrate: PROXIES and GEN must name at least one each" >&2
    exit 2
fi
UDP_LIMIT=${UDP_LIMIT:-$(dirname "$OSN")/udp_limit}
. "$ROOT/tests/node/lib.sh"
. "$HERE/node_lib.sh"
# contestants: generator:proxy, in the order of GEN then PROXIES
CONT=()
for g in "${GENS[@]}"; do for px in "${PXS[@]}"; do CONT+=("$g:$px"); done; done
nrates=$(wc -w <<<"$RATES")
nsteps=$((RUNS * nrates * ${#CONT[@]}))
STEP_MAX=$((DURATION + 100))
nl_init node_maxrate $((nsteps * (STEP_MAX + 25) + 60)) --load
export OSN
HZ=$(getconf CLK_TCK)
MR_PY=$HERE/node_maxrate.py
# SIPp's socket buffers are 64 KB by default: about 50 datagrams, a few milliseconds at these
# rates. On a shared machine SIPp is descheduled longer than that while the proxy keeps
# delivering, and the kernel drops what does not fit (UdpRcvbufErrors), which SIPp then sees
# as 500 ms retransmissions: its buffers get 1 MB here (the kernel caps them at rmem_max).
SIPP_BUF=(-buff_size 1048576)
# OSN's generator: a mean hold of 1 ms (exponential; source.hold must be > 0), as SIPp's
# built-in uac sends its BYE right after its ACK (-d 0), so that a call is the same seven
# messages for both generators and the proxy keeps as few dialogs alive.
GEN_HOLD=0.001

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
# bad_run WHO MSG: a step that cannot give a row: said on stderr, counted (exit 1 at the end).
bad_run() {
    echo "$1: ERROR: ${*:2}; no row" >&2
    failed=$((failed + 1))
}

# callee GEN: the uas that generator drives (UAS, or the generator's own kind)
callee() {
    if [ "$UAS" != auto ]; then echo "$UAS"; else echo "$1"; fi
}

# uas_start NAME KIND: the callee, SIPp's built-in uas or `osn node` uas with every cost 0
uas_start() {
    if [ "$2" = sipp ]; then
        NL_UAS_TIME=$((STEP_MAX + 20)) nl_sipp_uas "$1" 0 "${SIPP_BUF[@]}"
        return
    fi
    # The callee is no contestant: its memory budget is sized for the rate (nl_uas_sized: RFC
    # 6026 keeps an INVITE's and a BYE's transactions 32 s each, and max_memory counts them).
    # A fixed budget refused calls: max_transactions 1,048,576 at 24,000 calls/s, then the
    # default max_memory of 1 GiB at 32,000 (222,662 calls, 2026-12-07), for either generator.
    NL_NODE_TIME=$((STEP_MAX + 20)) nl_uas_sized "$1" "$rate" \
        --set "node.workers=${NL_NODE_WORKERS:-1}"
}

# gen_bg NAME DEST_PORT RATE: OSN's generator in the background, GEN_PROCS processes NAME.1 ..
# (seeds 1 ..), each DURATION s of Poisson calls at RATE / GEN_PROCS then its drain (at most
# Timer B then Timer F, 64 s), bounded by STEP_MAX; summaries in $NL_TMP/NAME.K/summary.json.
gen_bg() {
    local k dir r
    r=$("$NL_PY" -c "print(repr($3 / $GEN_PROCS))")
    for k in $(seq 1 "$GEN_PROCS"); do
        dir=$NL_TMP/$1.$k
        mkdir -p "$dir"
        timeout -k 5 "$STEP_MAX" "$OSN" node --set node.element=uac \
            --set node.listen=127.0.0.1:0 --set "node.next_hop=127.0.0.1:$2" \
            --set "node.duration=$DURATION" --set "source.rate=$r" \
            --set "source.hold=$GEN_HOLD" --set "net.seed=$k" --json "$dir/summary.json" -q \
            >"$dir/node.out" 2>"$dir/node.err" {NL_LOCK_FD}>&- &
        nl_track "$1.$k" $! "$dir" node
    done
}

declare -A OUT
RES=$NL_TMP/results
: >"$RES"
# step RUN GEN PX RATE K: one step; sets OUT[GEN:PX] to yes (held), no, or error, and appends
# "RUN GEN PX RATE VERDICT WHY" to $RES.
step() {
    local run=$1 gen=$2 px=$3 rate=$4 n="$1_$2_$3_$5" calls=$(($4 * DURATION))
    local who="$gen:$px" kind
    kind=$(callee "$gen")
    OUT[$who]=error
    echo "$run $gen $px $rate error" >>"$RES"
    uas_start "uas_$n" "$kind" || {
        bad_run "$who" "the $kind uas did not start"
        return
    }
    local p_uas=${NL_PORT[uas_$n]} dest
    case $px in
    direct) ;;
    kamailio) nl_kam_start "px_$n" 0 "$p_uas" || {
        bad_run "$who" "Kamailio did not start"
        nl_stop "uas_$n"
        return
    } ;;
    # The osn proxy's memory budget sized for the rate as Kamailio's shared memory is (-m 8192):
    # a call leaves it four transactions for up to 64*T1 (RFC 6026), which the default 1 GiB
    # refused from about 30,000 calls/s held 60 s (154,460 requests, 2026-12-07).
    osn) nl_edge_fast "px_$n" 0 "$p_uas" --set "node.max_memory=$(awk -v r="$rate" \
        'BEGIN { m = r * 32 * 4 * 2048; if (m < 1073741824) m = 1073741824; printf "%.0f", m }')" || {
        bad_run "$who" "osn node did not start"
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
    local names=("uac_$n") pids=() name j live jsons=
    if [ "$gen" = sipp ]; then
        NL_UAC_TIME=$((DURATION + 40)) nl_sipp_uac_bg "uac_$n" "$dest" "$rate" "$calls" \
            "${SIPP_BUF[@]}" "${SIPP_T[@]}"
    else
        gen_bg "uac_$n" "$dest" "$rate"
        names=()
        for j in $(seq 1 "$GEN_PROCS"); do
            names+=("uac_$n.$j")
            jsons+="${jsons:+,}$NL_TMP/uac_$n.$j/summary.json"
        done
    fi
    for name in "${names[@]}"; do pids+=("$(nl_real_pid "$name")"); done
    # each generator's CPU (its last reading before it exits) and socket drops, summed
    local -A tk=() dr=()
    live=1
    while [ "$live" = 1 ]; do
        live=0
        for j in "${!pids[@]}"; do
            read -r st 2>/dev/null <"/proc/${pids[$j]}/stat" || continue
            live=1
            read -r -a f <<<"${st##*) }"
            tk[$j]=$((f[11] + f[12]))
            d=$(udp_drops "${pids[$j]}")
            [ "${d:-0}" -gt "${dr[$j]:-0}" ] && dr[$j]=$d
        done
        [ "$live" = 1 ] && sleep 0.5
    done
    for j in "${!pids[@]}"; do
        u1=$((u1 + ${tk[$j]:-0}))
        d_uac=$((d_uac + ${dr[$j]:-0}))
    done
    d_uas=$(udp_drops "$uas_pid")
    [ -n "$ppid" ] && d_px=$(udp_drops "$ppid")
    for name in "${names[@]}"; do nl_wait_pid "$name"; done
    t1=$(date +%s.%N)
    [ -n "$ppid" ] && p1=$(bench_cpu_split "$ppid")
    s1=$(nl_cpu_ticks "$uas_pid")
    local ok='' out='' wd=- retr=- din=- dout=- cap=0 rss=- ucap=0 line verdict why row
    if [ "$gen" = sipp ]; then
        ok=$(nl_stat "uac_$n" 'SuccessfulCall(C)')
        out=$(nl_stat "uac_$n" 'OutgoingCall(C)')
        wd="$(nl_stat "uac_$n" 'WatchdogMajor(C)')/$(nl_stat "uac_$n" 'WatchdogMinor(C)')"
        retr=$(nl_stat "uac_$n" 'Retransmissions(C)')
    fi
    # A callee or proxy that ended before the generator did (a crash, the kernel's OOM killer,
    # its timeout) is named, on a line above the step's row, with its exit status and the end
    # of its stderr: its calls failed, and the row alone would blame the generator (2026-12-07,
    # 56,000 calls/s: "uas cpu 0%").
    local gone=() who_p rc
    for who_p in "uas_$n:$uas_pid" "px_$n:$ppid"; do
        [ -n "${who_p#*:}" ] && ! kill -0 "${who_p#*:}" 2>/dev/null && gone+=("${who_p%%:*}")
    done
    local -A ended=()
    if [ "$px" != direct ]; then
        rc=0
        nl_stop "px_$n" || rc=$?
        ended[px_$n]=$rc
    fi
    rc=0
    nl_stop "uas_$n" || rc=$?
    ended[uas_$n]=$rc
    for who_p in "${gone[@]}"; do
        echo "    $who_p ended before the generator did (exit status ${ended[$who_p]}; $(cat \
            "${NL_DIR[$who_p]}"/*.err 2>/dev/null | tail -2 | tr '\n' ' '))"
    done
    case $px in
    osn) read -r din dout cap rss <<<"$(nl_json "px_$n" datagrams_in datagrams_out \
        refused_at_cap rss_peak_kb)" ;;
    kamailio) cap=$(grep -ciE 'out of memory|could not allocate|not enough (shared )?memory' \
        "${NL_DIR[px_$n]}/kamailio.log") ;;
    esac
    # an osn uas's refusals at its own cap count as the proxy's do: the call was refused
    if [ "$kind" = osn ]; then
        ucap=$(nl_json "uas_$n" refused_at_cap)
        [[ "$cap" =~ ^[0-9]+$ && "$ucap" =~ ^[0-9]+$ ]] && cap=$((cap + ucap))
    fi
    if [ "$gen" = sipp ] && { [ ! -s "${NL_DIR[uac_$n]}/stat.csv" ] || [ "${ok:-0}" = 0 ]; }; then
        bad_run "$who" "at $rate calls/s SIPp offered '${out}' calls and '${ok}' succeeded" \
            "(statistics: ${NL_DIR[uac_$n]}/stat.csv): the chain did not work"
        return
    fi
    if [ "$gen" = osn ]; then
        for name in "${names[@]}"; do
            [ -s "${NL_DIR[$name]}/summary.json" ] && continue
            bad_run "$who" "at $rate calls/s the generator $name wrote no summary:" \
                "$(tail -3 "${NL_DIR[$name]}/node.err")"
            return
        done
    fi
    local el
    el=$("$NL_PY" -c "print($t1 - $t0)")
    read -r pu0 ps0 <<<"$p0"
    read -r pu1 ps1 <<<"$p1"
    line=$("$NL_PY" "$MR_PY" step gen="$gen" px="$px" rate="$rate" duration="$DURATION" \
        hz="$HZ" el="$el" pu0="$pu0" ps0="$ps0" pu1="$pu1" ps1="$ps1" uac_ticks="$u1" \
        uas_ticks=$((s1 - s0)) cap="${cap:-0}" d_uac="$d_uac" d_px="$d_px" d_uas="$d_uas" \
        wd="$wd" retr="$retr" ok="${ok:-0}" out="${out:-0}" uac_dir="$NL_TMP/uac_$n" \
        gen_json="$jsons" din="$din" dout="$dout" lim="${ULIM:-0}" \
        rss_kb="$rss" uas_kind="$([ "$kind" = sipp ] && echo SIPp || echo osn)") || {
        bad_run "$who" "at $rate calls/s the step could not be judged (above)"
        return
    }
    read -r verdict why row <<<"$line"
    echo "$row"
    OUT[$who]=$verdict
    sed -i '$d' "$RES"
    echo "$run $gen $px $rate $verdict $why" >>"$RES"
}

title="highest call rate held $DURATION s (every call answered, p99 INVITE->200 < 500 ms, no refusal at the cap)"
desc=
for g in "${GENS[@]}"; do
    k=$(callee "$g")
    [ -n "$desc" ] && desc+="; "
    if [ "$g" = sipp ]; then
        desc+="SIPp uac (built-in scenario, 1 MB socket buffers, -t $BENCH_SIPP_T)"
    else
        desc+="osn node element=uac (Poisson, hold ${GEN_HOLD} s, one loop; $GEN_PROCS"
        desc+=" process(es), each RATE / $GEN_PROCS)"
    fi
    if [ "$k" = sipp ]; then
        desc+=" -> proxy -> SIPp's built-in uas"
    else
        desc+=" -> proxy -> osn node element=uas (costs 0, workers = $BENCH_WORKERS)"
    fi
done
BENCH_GEN_DESC="$desc, all on 127.0.0.1" bench_header "$title"
echo "runs: $RUNS; at most $nsteps steps of at most $((STEP_MAX + 25)) s each" \
    "(worst case $(((nsteps * (STEP_MAX + 25) + 59) / 60)) min)"
ULIM=
if [ -x "$UDP_LIMIT" ]; then
    line=$(timeout 30 "$UDP_LIMIT" 2 32 200) && echo "udp limit at the start: $line"
    ULIM=$(sed -n 's/.*datagrams_per_cpu_s=\([0-9]*\).*/\1/p' <<<"${line:-}")
    # the other yardstick (docs/performance.md): a ping of one datagram between two processes,
    # a wake-up on each side for every datagram; printed, not used for the fraction, since it
    # moves fivefold with how idle the machine is
    ping=$(timeout 30 "$UDP_LIMIT" -p 2 1 200) && echo "udp ping at the start: $ping"
else
    echo "udp limit: skipped, $UDP_LIMIT not built (ninja udp_limit)"
fi
echo
printf '%-4s %-9s %6s %7s %7s %7s %7s | %6s %6s %7s %7s | %-15s | %s\n' gen proxy rate calls ok \
    "rate/s" "p99 ms" "px usr" "px sys" "uac cpu" "uas cpu" "dg/cpu-s(limit)" notes
top=0
for rate in $RATES; do [ "$rate" -gt "$top" ] && top=$rate; done
for run in $(seq 1 "$RUNS"); do
    active=("${CONT[@]}")
    k=0
    for rate in $RATES; do
        [ ${#active[@]} = 0 ] && break
        k=$((k + 1))
        order=("${active[@]}")
        if [ $(((k + run) % 2)) = 1 ]; then # every other rate (and run) in the reverse order
            order=()
            for ((i = ${#active[@]} - 1; i >= 0; i--)); do order+=("${active[$i]}"); done
        fi
        still=()
        for c in "${order[@]}"; do
            step "$run" "${c%%:*}" "${c#*:}" "$rate" "$k"
            [ "${OUT[$c]}" = yes ] && still+=("$c")
        done
        active=()
        for c in "${CONT[@]}"; do # the race's order, not this step's
            for s in "${still[@]}"; do [ "$s" = "$c" ] && active+=("$c"); done
        done
    done
done
echo "load average at the end: $(bench_loadavg)"
"$NL_PY" "$MR_PY" summary "$RES" "$top" "$DURATION"
if [ "$failed" -gt 0 ]; then
    echo "node_maxrate: ERROR: $failed step(s) failed (above)" >&2
    exit 1
fi
