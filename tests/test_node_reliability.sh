#!/usr/bin/env bash
# Reliability of `osn node` under overload and failure (issue 17, "Reliability"; long: make
# testbed). The collapse chain on 127.0.0.1:
#
#   SIPp uac (tests/node/sipp/uac_overload.xml) -> osn node edge -> osn node core -> SIPp uas
#
# with SCENARIO (default examples/node_collapse.ini) and the core's costs multiplied by
# CORE_SCALE (default 2: capacity 100 calls/s, so that 20x is 2,000 calls/s, below SIPp's own
# ceiling of about 3,000 on two cores). `loss` control on both nodes.
#
# Part 1, 20x overload for OVER_S seconds (default 60):
#   - no crash: both nodes alive at the end and exit 0 on SIGTERM
#   - RSS: rss_peak_kb of each node below RSS_MAX_KB (default 131072 = 128 MiB)
#   - every call SIPp started is accounted for: SIPp ends by itself (all calls finished, not
#     cut by its timeout), OutgoingCall(C) = SuccessfulCall(C) + FailedCall(C); calls that
#     "succeeded" are split into answered (8_200_Recv) and rejected (503/408/500/483 received,
#     each ACKed); failures are printed by reason (FailedMaxUDPRetrans, FailedTimeoutOnRecv..)
#   - the edge's calls_in = SIPp's OutgoingCall(C)
# Part 2, kill -9 of the core: load at HALF of capacity for 3 x PHASE_S (default 15 s); at
# PHASE_S the core is killed with SIGKILL, at 2 x PHASE_S it is started again on the same port
# (the edge is never restarted). Checks:
#   - the edge stays alive throughout and exits 0 at the end
#   - it keeps answering during the outage: SIPp receives 408 or 503 for calls of the outage
#     (or the edge counts timeouts_408 + rejected_503 > 0), and SIPp gets no ICMP-caused
#     send failure
#   - the core rejoins: goodput over the last PHASE_S - 5 s >= 85% of the offered rate
#
# Usage: test_node_reliability.sh OSN ROOT [--over S] [--phase S] [--load F]
#   --load F      overload factor of part 1 (default 20)
#   OSN_NODE_STANDIN=1  Kamailio stand-ins (no capacity, no JSON): checks the harness only
# Prints "N passed, M failed"; exits 1 on a failure.
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
shift 2
OVER_S=60
PHASE_S=15
LOAD=20
SCEN=$ROOT/examples/node_collapse.ini
CORE_SCALE=${CORE_SCALE:-2}
while [ $# -gt 0 ]; do
    case $1 in
    --over) OVER_S=$2 && shift ;;
    --phase) PHASE_S=$2 && shift ;;
    --load) LOAD=$2 && shift ;;
    --scenario) SCEN=$2 && shift ;;
    *)
        echo "test_node_reliability.sh: unknown argument $1" >&2
        exit 2
        ;;
    esac
    shift
done
. "$ROOT/tests/node/lib.sh"
nl_init reliability $((OVER_S + 150 + 3 * PHASE_S + 100)) --load
export OSN
STANDIN=${OSN_NODE_STANDIN:-0}
RSS_MAX_KB=${RSS_MAX_KB:-131072}
if ! nl_have_node; then
    echo "osn node is not available ($OSN node --help failed); OSN_NODE_STANDIN=1 runs the" \
        "harness against stand-ins" >&2
    exit 1
fi

# The core's costs scaled, the same for osn sim and the core node (CORE_SETS, CAP).
nl_core_scaled "$SCEN" "$CORE_SCALE"
HOLD_MS=1000
UAC_SF=(-sf "$ROOT/tests/node/sipp/uac_overload.xml" -d "$HOLD_MS" -recv_timeout 40000)
NODE_ARGS=("$SCEN" "${CORE_SETS[@]}" --set control.kind=loss)

# ---- part 1: LOAD x capacity for OVER_S
RATE=$("$NL_PY" -c "print(round($LOAD * $CAP))")
CALLS=$((RATE * OVER_S))
echo "part 1: capacity $CAP calls/s, ${LOAD}x = $RATE calls/s for ${OVER_S}s ($CALLS calls), loss"
# Each element binds a port of its own choosing; NL_PORT gives it back (tests/node/lib.sh).
NL_UAS_TIME=$((OVER_S + 200)) nl_up "SIPp uas did not start" nl_sipp_uas uas 0
nl_up "core did not start" nl_node_start core core 0 "${NL_PORT[uas]:-}" "${NODE_ARGS[@]}"
nl_up "edge did not start" nl_node_start edge edge 0 "${NL_PORT[core]:-}" "${NODE_ARGS[@]}"
nl_require_up
P_EDGE=${NL_PORT[edge]}
# Drain: a call lasts at most ~31.5 s of INVITE retransmissions or 40 s of -recv_timeout, the
# hold, then up to ~32 s of BYE retransmissions; SIPp must end by itself before its timeout.
NL_UAC_TIME=$((OVER_S + 120)) nl_sipp_uac uac "$P_EDGE" "$RATE" "$CALLS" "${UAC_SF[@]}" \
    -l $((RATE * 45 + 100))
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]
nl_check $? "part 1: SIPp uac ended with status $rc (0/1 = finished all its calls by itself)"
out=$(nl_stat uac 'OutgoingCall(C)')
suc=$(nl_stat uac 'SuccessfulCall(C)')
fai=$(nl_stat uac 'FailedCall(C)')
cur=$(nl_stat uac 'CurrentCall')
[ -n "$out" ] && [ "$out" = "$CALLS" ] && [ $((suc + fai)) -eq "$out" ] && [ "${cur:-1}" = 0 ]
nl_check $? "part 1: calls not accounted for: started $out of $CALLS, successful $suc + failed" \
    "$fai, open at the end $cur"
echo "part 1: SIPp $out calls: answered $(nl_counts uac '^8_200_Recv$'), rejected 503" \
    "$(nl_counts uac '_503_Recv$'), 408 $(nl_counts uac '_408_Recv$'), 500" \
    "$(nl_counts uac '_500_Recv$'), 483 $(nl_counts uac '_483_Recv$'); failed $fai:" \
    "max UDP retrans $(nl_stat uac 'FailedMaxUDPRetrans(C)'), timeout on recv" \
    "$(nl_stat uac 'FailedTimeoutOnRecv(C)'), unexpected $(nl_stat uac 'FailedUnexpectedMessage(C)')," \
    "cannot send $(nl_stat uac 'FailedCannotSendMessage(C)'); retransmissions" \
    "$(nl_stat uac 'Retransmissions(C)')"
read -r gp p50 p99 n <<<"$(nl_goodput uac 10 $((OVER_S - 10)))"
echo "part 1: goodput $gp calls/s over [10, $OVER_S) s (capacity $CAP), setup p99 ${p99} ms"
for nd in edge core; do
    if [ "$STANDIN" = 1 ]; then
        nl_stop $nd
        nl_skip "part 1: $nd is a stand-in"
        continue
    fi
    kill -0 "${NL_PID[$nd]}" 2>/dev/null
    nl_check $? "part 1: $nd is no longer running (crash?)"
    nl_stop $nd
    rc=$?
    [ "$rc" -eq 0 ]
    nl_check $? "part 1: $nd exit status $rc after SIGTERM"
    v=$(nl_json $nd rss_peak_kb)
    [ -n "$v" ] && [ "$v" -lt "$RSS_MAX_KB" ]
    nl_check $? "part 1: $nd rss_peak_kb '$v' not below $RSS_MAX_KB"
    echo "part 1: $nd rss_peak_kb $v transactions_peak $(nl_json $nd transactions_peak)" \
        "calls_in $(nl_json $nd calls_in) rejected_503 $(nl_json $nd rejected_503)" \
        "dropped $(nl_json $nd dropped)"
done
if [ "$STANDIN" != 1 ]; then
    v=$(nl_json edge calls_in)
    [ "$v" = "$out" ]
    nl_check $? "part 1: edge calls_in '$v' != SIPp OutgoingCall(C) '$out'"
fi
nl_stop uas

# ---- part 2: kill -9 of the core at PHASE_S, restart at 2 PHASE_S, end at 3 PHASE_S
RATE=$("$NL_PY" -c "print(max(1, round(0.5 * $CAP)))")
CALLS=$((RATE * 3 * PHASE_S))
echo "part 2: $RATE calls/s for $((3 * PHASE_S)) s; core killed at ${PHASE_S}s, restarted at" \
    "$((2 * PHASE_S))s"
NL_UAS_TIME=$((3 * PHASE_S + 150)) nl_up "part 2: uas did not start" nl_sipp_uas uas2 0
nl_up "part 2: core did not start" nl_node_start core2 core 0 "${NL_PORT[uas2]:-}" "${NODE_ARGS[@]}"
nl_up "part 2: edge did not start" nl_node_start edge2 edge 0 "${NL_PORT[core2]:-}" \
    "${NODE_ARGS[@]}"
nl_require_up
P_UAS=${NL_PORT[uas2]}
P_CORE=${NL_PORT[core2]}
P_EDGE=${NL_PORT[edge2]}
# -l: no cap on open calls below what the outage can hold (SIPp's default, 3 x hold x rate,
# would stop new calls while those of the outage wait for their timeouts)
NL_UAC_TIME=$((3 * PHASE_S + 100)) nl_sipp_uac_bg uac2 "$P_EDGE" "$RATE" "$CALLS" "${UAC_SF[@]}" \
    -l $((RATE * 45 + 100))
sleep "$PHASE_S"
core_pid=$(nl_real_pid core2)
nl_kill9 core2
echo "part 2: killed the core (pid $core_pid) with SIGKILL"
sleep "$PHASE_S"
kill -0 "${NL_PID[edge2]}" 2>/dev/null
nl_check $? "part 2: the edge died while the core was down"
# The restarted core must come back on the port the edge forwards to, the one the killed core
# held: the only port here not chosen at bind time. A UDP port is free again as soon as its
# holder dies (no TIME_WAIT), so the bind succeeds unless another program took the port in
# between: then the start fails, tried again 5 times 0.5 s apart, and then counted as a failure
# that names the port (never a silent wrong result).
for try in 1 2 3 4 5; do
    nl_node_start core3 core "$P_CORE" "$P_UAS" "${NODE_ARGS[@]}" && break
    [ "$try" = 5 ] && nl_bad "part 2: core restart on 127.0.0.1:$P_CORE failed 5 times"
    sleep 0.5
done
echo "part 2: core restarted on 127.0.0.1:$P_CORE"
nl_wait_pid uac2
rc=$?
kill -0 "${NL_PID[edge2]}" 2>/dev/null
nl_check $? "part 2: the edge is not running at the end"
read -r gp p50 p99 n <<<"$(nl_goodput uac2 $((2 * PHASE_S + 5)) $((PHASE_S - 5)))"
echo "part 2: SIPp status $rc, goodput after the restart $gp calls/s (offered $RATE), 408" \
    "$(nl_counts uac2 '_408_Recv$'), 503 $(nl_counts uac2 '_503_Recv$'), 500" \
    "$(nl_counts uac2 '_500_Recv$'), failed $(nl_stat uac2 'FailedCall(C)') (max retrans" \
    "$(nl_stat uac2 'FailedMaxUDPRetrans(C)'), recv timeout $(nl_stat uac2 'FailedTimeoutOnRecv(C)'))"
"$NL_PY" -c "import sys; sys.exit(0 if float('$gp') >= 0.85 * $RATE else 1)"
nl_check $? "part 2: goodput $gp after the core's restart below 85% of the offered $RATE"
v=$(nl_stat uac2 'FailedCannotSendMessage(C)')
[ "${v:-0}" = 0 ]
nl_check $? "part 2: SIPp FailedCannotSendMessage(C) = $v"
if [ "$STANDIN" != 1 ]; then
    nl_stop edge2
    rc=$?
    [ "$rc" -eq 0 ]
    nl_check $? "part 2: edge exit status $rc after SIGTERM"
    a=$(nl_counts uac2 '_(408|503)_Recv$')
    e=$(($(nl_json edge2 timeouts_408) + $(nl_json edge2 rejected_503)))
    [ "$a" -gt 0 ] || [ "$e" -gt 0 ]
    nl_check $? "part 2: no 408/503 for the calls of the outage (SIPp $a, edge $e)"
    echo "part 2: edge timeouts_408 $(nl_json edge2 timeouts_408) rejected_503" \
        "$(nl_json edge2 rejected_503) calls_in $(nl_json edge2 calls_in) calls_ok" \
        "$(nl_json edge2 calls_ok)"
else
    nl_skip "part 2: stand-in edge, no counters"
fi
nl_stop core3
nl_stop uas2

nl_summary
