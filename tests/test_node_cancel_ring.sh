#!/usr/bin/env bash
# CANCEL on the wire against `osn node` uas with a ring delay (issue 33, cancel2): the uas answers
# 180 at once and 200 only after [server uas] ring_delay (det 3 s here), so a CANCEL while it
# rings gets 200 and the INVITE 487 from the uas itself (RFC 3261 9.2).
#
#   K  SIPp uac -> osn node (edge) -> Kamailio (tm) -> osn node (uas, ring 3 s)
#      tests/node/sipp/uac_cancel.xml: the uac CANCELs 50 ms after the 180.
#   E  SIPp uac -> osn node (edge) -> osn node (core, 50 ms a new INVITE) -> osn node (uas)
#      tests/node/sipp/uac_cancel_early.xml: the uac CANCELs at the edge's 100 Trying, while the
#      core still holds the INVITE in its queue: the edge's branch has no provisional response,
#      so the edge keeps the CANCEL and passes it on at the core's 100 (RFC 3261 9.1, 16.10).
#      Before cancel2 the edge answered it 200 and never passed it on: the uas's 200 came at 3 s.
#
# Checks per chain, CALLS calls: SIPp's uac exits 0 with SuccessfulCall = CALLS, no failed or
# unexpected message, and its per-message counts (-trace_counts) show one CANCEL, 200, 487 and
# ACK a call; the uas counts CALLS INVITEs, CANCELs and 487s and no 2xx to an INVITE; each
# proxy of ours counts CALLS CANCELs in and passed on, no 2xx, 408, 481, 503, stray or dropped.
#
# Usage: test_node_cancel_ring.sh OSN ROOT [CALLS]   (default 20 calls at 5 calls/s)
# Prints "N passed, M failed"; exits 1 on a failure, 2 when a peer is missing.
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
CALLS=${3:-20}
RATE=5
. "$ROOT/tests/node/lib.sh"
nl_init cancel_ring $((2 * (CALLS / RATE + 40) + 30))
export OSN
SIPP_DIR=$ROOT/tests/node/sipp
command -v kamailio >/dev/null || {
    echo "kamailio not installed (scripts/deps.sh)" >&2
    exit 2
}
RING=(--set "server uas.ring_delay=det" --set "server uas.ring_delay_mean=3")

# The uac's side: exit status, calls, and each scripted message once a call.
check_uac() {
    local tag=$1 uac=$2 rc=$3 v re
    shift 3
    [ "$rc" -eq 0 ]
    nl_check $? "$tag: SIPp uac exit status $rc (0 = every call as scripted)"
    for k in 'SuccessfulCall(C)' 'FailedCall(C)' 'FailedUnexpectedMessage(C)'; do
        v=$(nl_stat "$uac" "$k")
        want=0
        [ "$k" = 'SuccessfulCall(C)' ] && want=$CALLS
        [ "$v" = "$want" ]
        nl_check $? "$tag: $k = '$v', expected $want"
    done
    for re in "$@"; do
        v=$(nl_counts "$uac" "$re")
        [ "$v" = "$CALLS" ]
        nl_check $? "$tag: uac $re = '$v', expected $CALLS"
    done
}

# A node's --json counters after SIGTERM: KEY=VALUE pairs to hold.
check_node() {
    local tag=$1 name=$2 rc=$3 kv v
    shift 3
    [ "$rc" -eq 0 ]
    nl_check $? "$tag: $name exit status $rc after SIGTERM, expected 0"
    for kv in "$@"; do
        v=$(nl_json "$name" "${kv%%=*}")
        [ "$v" = "${kv#*=}" ]
        nl_check $? "$tag: $name ${kv%%=*} = '$v', expected ${kv#*=}"
    done
}

PROXY0="calls_ok=0 timeouts_408=0 no_dialog_481=0 rejected_503=0 stray=0 dropped=0"
UAS="calls_in=$CALLS cancel_in=$CALLS cancelled_487=$CALLS calls_ok=0 no_dialog_481=0 stray=0"

# ---- K: edge -> Kamailio -> uas
T=K
up=1
nl_node_start uas_k uas 0 "" "" "${RING[@]}" || { nl_bad "$T: uas did not start"; up=0; }
[ $up = 1 ] && { nl_kam_start kam_k 0 "${NL_PORT[uas_k]}" || { nl_bad "$T: Kamailio did not start"; up=0; }; }
[ $up = 1 ] && { nl_node_start edge_k edge 0 "${NL_PORT[kam_k]}" "" || { nl_bad "$T: edge did not start"; up=0; }; }
if [ $up = 1 ]; then
    NL_UAC_TIME=$((CALLS / RATE + 30)) nl_sipp_uac uac_k "${NL_PORT[edge_k]}" "$RATE" "$CALLS" \
        -sf "$SIPP_DIR/uac_cancel.xml"
    check_uac $T uac_k $? '^4_CANCEL_Sent$' '^5_200_Recv$' '^6_487_Recv$' '^7_ACK_Sent$'
    nl_stop edge_k
    rc_edge=$?
    nl_stop uas_k
    rc_uas=$?
    # shellcheck disable=SC2086
    check_node $T edge_k $rc_edge "cancel_in=$CALLS" "cancel_forwarded=$CALLS" $PROXY0
    # shellcheck disable=SC2086
    check_node $T uas_k $rc_uas $UAS
fi
for n in edge_k kam_k uas_k; do [ -n "${NL_PID[$n]:-}" ] && ! nl_dead "$n" && nl_stop "$n"; done

# ---- E: edge -> core (busy 50 ms an INVITE) -> uas: the edge keeps the CANCEL
T=E
up=1
nl_node_start uas_e uas 0 "" "" "${RING[@]}" || { nl_bad "$T: uas did not start"; up=0; }
[ $up = 1 ] && { nl_node_start core_e core 0 "${NL_PORT[uas_e]}" "" \
    --set "server core.cost_invite=0.05" || { nl_bad "$T: core did not start"; up=0; }; }
[ $up = 1 ] && { nl_node_start edge_e edge 0 "${NL_PORT[core_e]}" "" || { nl_bad "$T: edge did not start"; up=0; }; }
if [ $up = 1 ]; then
    NL_UAC_TIME=$((CALLS / RATE + 30)) nl_sipp_uac uac_e "${NL_PORT[edge_e]}" "$RATE" "$CALLS" \
        -sf "$SIPP_DIR/uac_cancel_early.xml"
    check_uac $T uac_e $? '^2_CANCEL_Sent$' '^3_200_Recv$' '^5_487_Recv$' '^6_ACK_Sent$'
    nl_stop edge_e
    rc_edge=$?
    nl_stop core_e
    rc_core=$?
    nl_stop uas_e
    rc_uas=$?
    # shellcheck disable=SC2086
    check_node $T edge_e $rc_edge "cancel_in=$CALLS" "cancel_forwarded=$CALLS" $PROXY0
    # shellcheck disable=SC2086
    check_node $T core_e $rc_core "cancel_in=$CALLS" "cancel_forwarded=$CALLS" $PROXY0
    # shellcheck disable=SC2086
    check_node $T uas_e $rc_uas $UAS
    echo "E: $(nl_stat uac_e 'SuccessfulCall(C)') calls cancelled before the core's 100," \
        "$(nl_stat uac_e 'Retransmissions(C)') retransmissions"
fi
for n in edge_e core_e uas_e; do [ -n "${NL_PID[$n]:-}" ] && ! nl_dead "$n" && nl_stop "$n"; done
nl_summary
