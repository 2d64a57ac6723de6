#!/usr/bin/env bash
# Sim beside real (issue 17, "Overload on the wire, three ways"): for each control and load,
# the collapse chain on 127.0.0.1
#
#   SIPp uac (tests/node/sipp/uac_overload.xml) -> osn node edge -> osn node core -> SIPp uas
#
# runs for WARM + WINDOW seconds, and `osn sim SCENARIO` runs with the same control, rate,
# warm-up and window. One table on stdout, one CSV row per run:
#
#   control load rate | sim goodput | real goodput | real/sim | sim p99 | real p99 | notes
#
# (the CSV also has sim_goodput_hw, the simulator's 95% half-width, and sim_replications; the
# real chain is one run: no interval)
# - load: multiples of the core's capacity, `capacity` of `osn sim SCENARIO --json -`
#   (1 / (cost_invite + cost_ack + cost_bye + 3 cost_response) of [server core]).
# - goodput: calls/s whose 200 reached the UAC within Timer B (32 s) of the INVITE, counted
#   over the window after the warm-up; real: from SIPp's -trace_rtt file (every call), the
#   answer's arrival time within [t0 + WARM, t0 + WARM + WINDOW), t0 = the first INVITE.
# - p99 setup delay (s): sim INVITE -> 180 at the UAC (setup_delay_p99); real INVITE -> 200
#   (SIPp's rtd 1, 1 ms resolution; its uas sends 180 and 200 back to back), over the calls
#   counted in the real goodput.
# - notes: "sipp-limited" when SIPp created fewer than 95% of the calls asked for in WARM +
#   WINDOW (OutgoingCall(C) / (WARM + WINDOW) is its achieved rate) or its watchdog tripped (the generator, not the chain, was the bottleneck), plus the nodes'
#   rejected_503 / dropped and SIPp's 503 / 408 / retransmission counts (retransmissions by
#   SIPp mean a 100 Trying came later than 500 ms: a real-time stall of the chain or of the
#   machine, which the simulator does not have).
# The call hold time is [source] hold (SIPp -d, fixed; the simulator draws it exponential).
#
# Usage: scripts/testbed.sh SCENARIO            (e.g. examples/node_collapse.ini)
#   OSN=build/osn       the osn binary (default build/osn beside this script)
#   LOADS="1 3 10"      load factors       CONTROLS="none loss rate"   controls
#   WARM=35             warm-up (s; default the scenario's net.warmup, else 35: more than
#                       Timer B, so that a collapse shows)
#   WINDOW=60           measured window (s; default max(60, net.time))
#   OUT=testbed-out     directory for testbed.csv and the runs' files (runs kept with NL_KEEP=1)
#   OSN_NODE_STANDIN=1  Kamailio stand-ins for the nodes (checks the harness only)
# A quick pass: LOADS=3 CONTROLS=loss WARM=5 WINDOW=15 scripts/testbed.sh examples/node_collapse.ini
# The full default is 9 runs of ~100 s each plus drains: about 20 minutes, up to 2,000 calls/s.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
SCEN=${1:?usage: scripts/testbed.sh SCENARIO}
SCEN=$(cd "$(dirname "$SCEN")" && pwd)/$(basename "$SCEN")
OSN=${OSN:-$ROOT/build/osn}
OSN=$(cd "$(dirname "$OSN")" && pwd)/$(basename "$OSN")
LOADS=${LOADS:-1 3 10}
CONTROLS=${CONTROLS:-none loss rate}
OUT=${OUT:-testbed-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
. "$ROOT/tests/node/lib.sh"

read -r S_WARM S_TIME HOLD <<<"$("$NL_PY" - "$SCEN" <<'PY'
import configparser, sys
c = configparser.ConfigParser(inline_comment_prefixes=(";", "#"))
c.read(sys.argv[1])
print(c.get("net", "warmup", fallback="35"), c.get("net", "time", fallback="60"),
      c.get("source", "hold", fallback="0"))
PY
)"
WARM=${WARM:-$S_WARM}
WINDOW=${WINDOW:-$("$NL_PY" -c "print(int(max(60, float('$S_TIME'))))")}
HOLD_MS=$("$NL_PY" -c "print(int(1000 * float('$HOLD')))")
RUN=$("$NL_PY" -c "import math; print(math.ceil($WARM + $WINDOW))")
n_runs=$(($(wc -w <<<"$LOADS") * $(wc -w <<<"$CONTROLS")))
nl_init testbed $((n_runs * (RUN + 60) + 120)) --load
export OSN
if ! nl_have_node; then
    echo "testbed: osn node is not available ($OSN node --help failed); OSN_NODE_STANDIN=1" \
        "runs the harness against stand-ins" >&2
    exit 1
fi
CAP=$("$OSN" sim "$SCEN" --json - -q | "$NL_PY" -c \
    'import json, sys; print(json.load(sys.stdin)["capacity"])') || exit 1
echo "testbed: $(basename "$SCEN"), core capacity $CAP calls/s; warm-up ${WARM}s, window" \
    "${WINDOW}s, hold ${HOLD_MS} ms; loads $LOADS; controls $CONTROLS" >&2

CSV=$OUT/testbed.csv
echo "control,load,rate,sim_goodput,real_goodput,ratio,sim_p99_s,real_p99_s,sipp_rate,sipp_503,sipp_408,edge_503,core_503,core_dropped,notes,sim_goodput_hw,sim_replications" >"$CSV"
printf '%-7s %5s %6s | %11s %12s %8s | %9s %9s | %s\n' control load rate "sim goodput" \
    "real goodput" real/sim "sim p99" "real p99" notes
k=0
failed=0
# stop_run TAG: stops what a run started, whatever started.
stop_run() {
    local n
    for n in "edge_$1" "core_$1" "uas_$1"; do
        [ -n "${NL_PID[$n]:-}" ] && ! nl_dead "$n" && nl_stop "$n"
    done
}
for ctl in $CONTROLS; do
    for load in $LOADS; do
        k=$((k + 1))
        rate=$("$NL_PY" -c "print(max(1, round($load * $CAP)))")
        # simulator: same control, rate, warm-up, window
        # goodput_ci: the 95% half-width over the scenario's replications (the plot's error bar)
        read -r sgp sp99 sgp_hw sreps <<<"$("$OSN" sim "$SCEN" --set "control.kind=$ctl" \
            --set "source.rate=$rate" --set "net.warmup=$WARM" --set "net.time=$WINDOW" \
            --json - -q | "$NL_PY" -c 'import json, sys
d = json.load(sys.stdin)
p = d.get("setup_delay_p99")
print(d["goodput"], "nan" if p is None else p, d["goodput_ci"], d["replications"])')"
        # real chain
        tag=${ctl}_$load
        # Each element binds a port of its own choosing; NL_PORT gives it back (lib.sh). No
        # traffic unless all three are up; a run that failed is reported, not tabled.
        nl_log "run $k/$n_runs: $ctl at ${load}x = $rate calls/s for ${RUN}s"
        NL_UP=1
        NL_UAS_TIME=$((RUN + 60)) nl_up "uas_$tag did not start" nl_sipp_uas "uas_$tag" 0
        nl_up "core_$tag did not start" nl_node_start "core_$tag" core 0 \
            "${NL_PORT[uas_$tag]:-}" "$SCEN" --set "control.kind=$ctl"
        nl_up "edge_$tag did not start" nl_node_start "edge_$tag" edge 0 \
            "${NL_PORT[core_$tag]:-}" "$SCEN" --set "control.kind=$ctl"
        if [ "$NL_UP" != 1 ]; then
            echo "testbed: ERROR: run $ctl at ${load}x: not every element started, no row" >&2
            failed=$((failed + 1))
            stop_run "$tag"
            continue
        fi
        NL_UAC_TIME=$((RUN + 3)) nl_sipp_uac "uac_$tag" "${NL_PORT[edge_$tag]}" "$rate" \
            $((rate * RUN)) -sf "$ROOT/tests/node/sipp/uac_overload.xml" -d "$HOLD_MS" \
            -l $((rate * 45 + 100)) -recv_timeout 40000
        stop_run "$tag"
        missing=
        for f in "${NL_DIR[uac_$tag]}/stat.csv" "${NL_DIR[edge_$tag]}/summary.json" \
            "${NL_DIR[core_$tag]}/summary.json"; do
            [ -s "$f" ] || missing="$missing $f"
        done
        if [ -n "$missing" ]; then
            echo "testbed: ERROR: run $ctl at ${load}x: no result file:$missing; no row" >&2
            failed=$((failed + 1))
            continue
        fi
        offered=$(nl_stat "uac_$tag" 'OutgoingCall(C)')
        eok=$(nl_json "edge_$tag" calls_ok)
        if [ "${offered:-0}" -eq 0 ] 2>/dev/null || [ "${eok:-0}" = 0 ]; then
            echo "testbed: ERROR: run $ctl at ${load}x: SIPp offered '${offered}' calls and the" \
                "edge answered '${eok}' (calls_ok): nothing went through the chain; no row" >&2
            failed=$((failed + 1))
            continue
        fi
        read -r rgp rp50 rp99 rn <<<"$(nl_goodput "uac_$tag" "$WARM" "$WINDOW")"
        # calls SIPp created before it was stopped, against the calls asked for
        ocalls=$(nl_stat "uac_$tag" 'OutgoingCall(C)')
        srate=$("$NL_PY" -c "print('%.1f' % (float('${ocalls:-0}' or 0) / $RUN))")
        wd=$(($(nl_stat "uac_$tag" 'WatchdogMajor(C)' | tr -dc 0-9) + 0))
        s503=$(nl_counts "uac_$tag" '_503_Recv$')
        s408=$(nl_counts "uac_$tag" '_408_Recv$')
        sretr=$(nl_stat "uac_$tag" 'Retransmissions(C)')
        e503=$(nl_json "edge_$tag" rejected_503)
        c503=$(nl_json "core_$tag" rejected_503)
        cdrop=$(nl_json "core_$tag" dropped)
        notes=$("$NL_PY" -c "
r, t, wd = float('${srate:-0}' or 0), $rate, $wd
n = []
if r < 0.95 * t or wd > 0:
    n.append('sipp-limited(%.0f/s%s)' % (r, ', watchdog %d' % wd if wd else ''))
print(' '.join(n))")
        notes="$notes sipp503=$s503 sipp408=$s408 sipp_retrans=$sretr edge503=${e503:--} core503=${c503:--} coredrop=${cdrop:--}"
        read -r ratio sp99s rp99s <<<"$("$NL_PY" -c "
import math
s, r = float('$sgp'), float('$rgp')
print('%.3f' % (r / s) if s > 0 else 'nan', '%.3f' % float('$sp99'),
      '%.3f' % (float('$rp99') / 1000))")"
        printf '%-7s %5s %6s | %11.1f %12.1f %8s | %9s %9s | %s\n' "$ctl" "${load}x" "$rate" \
            "$sgp" "$rgp" "$ratio" "$sp99s" "$rp99s" "$notes"
        echo "$ctl,$load,$rate,$sgp,$rgp,$ratio,$sp99s,$rp99s,$srate,$s503,$s408,${e503},${c503},${cdrop},\"$notes\",$sgp_hw,$sreps" >>"$CSV"
        # keep each run's files under OUT when asked to
        [ "${NL_KEEP:-0}" = 1 ] && cp -r "$NL_TMP"/*_"$tag" "$OUT/" 2>/dev/null
    done
done
echo "testbed: CSV in $CSV" >&2
if [ "$failed" -gt 0 ]; then
    echo "testbed: ERROR: $failed of $n_runs runs failed (above); their rows are missing" >&2
    exit 1
fi
