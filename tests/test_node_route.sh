#!/usr/bin/env bash
# Record-Route and loose routing on the wire with real peers (issue 33): SIPp's uac calls
# through `osn node` edge and core to a SIPp uas; each proxy Record-Routes the INVITE (RFC 3261
# 16.6 step 4), the uas copies the Record-Route into its 2xx (12.1.1), and every in-dialog
# request then follows the route set through both proxies (16.12): the caller's ACK, its
# re-INVITE and that one's ACK (tests/node/sipp/uac_reinvite.xml), and the callee's BYE, sent
# by the SIPp uas to the core and reaching the caller by edge (tests/node/sipp/uas_bye.xml).
#
#   SIPp uac -> osn node (edge) -> osn node (core) -> SIPp uas      INVITE, ACK, re-INVITE, ACK
#   SIPp uac <- osn node (edge) <- osn node (core) <- SIPp uas      BYE
#
# Checks, for CALLS calls: both SIPp ends exit 0 with SuccessfulCall = CALLS and no failed call
# (each scenario checks what arrived: two ;lr Record-Route values in the INVITE and in the 2xx,
# no Route left in the BYE at the caller, whose Request-URI is the caller's Contact); the
# INVITE at the uas carries the core's Record-Route above the edge's (SIPp's message trace);
# the uac's counts show CALLS of each message; each proxy counts 2 CALLS INVITEs in (call and
# re-INVITE), 2 CALLS ACKs of a 2xx forwarded and CALLS BYEs in, and no 481, 503, 408, stray
# or dropped message. Then, with node.record_route = no on both proxies, a call's INVITE
# reaches the uas with no Record-Route at all.
#
# Usage: test_node_route.sh OSN ROOT [CALLS]   (default 10 calls at 10 calls/s)
# Prints "N passed, M failed"; exits 1 on a failure, 2 when a peer is missing.
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
CALLS=${3:-10}
RATE=10
. "$ROOT/tests/node/lib.sh"
nl_init route $((CALLS / RATE + 120))
export OSN
SIPP_DIR=$ROOT/tests/node/sipp

# chain NAME_SUFFIX [osn node args..]: uas, core and edge up; false when one did not start.
chain() {
    local s=$1
    shift
    NL_UAS_TIME=$((CALLS / RATE + 40)) nl_sipp_uas uas$s 0 -sf "$SIPP_DIR/uas_bye.xml" \
        -trace_msg || { nl_bad "SIPp uas$s did not start"; return 1; }
    nl_node_start core$s core 0 "${NL_PORT[uas$s]}" "" "$@" || { nl_bad "core$s did not start"; return 1; }
    nl_node_start edge$s edge 0 "${NL_PORT[core$s]}" "" "$@" || { nl_bad "edge$s did not start"; return 1; }
}

if chain ""; then
    NL_UAC_TIME=$((CALLS / RATE + 30)) nl_sipp_uac uac "${NL_PORT[edge]}" "$RATE" "$CALLS" \
        -sf "$SIPP_DIR/uac_reinvite.xml" -trace_msg
    rc=$?
    [ "$rc" -eq 0 ]
    nl_check $? "SIPp uac exit status $rc (0 = every call as scripted)"
    # The uas ends its calls on the 200 to its BYE: wait for it to see the last one.
    for _ in $(seq 1 50); do
        [ "$(nl_stat uas 'SuccessfulCall(C)')" = "$CALLS" ] && break
        sleep 0.2
    done
    for side in uac uas; do
        v=$(nl_stat $side 'SuccessfulCall(C)')
        [ "$v" = "$CALLS" ]
        nl_check $? "$side: SuccessfulCall(C) = '$v', expected $CALLS"
        v=$(nl_stat $side 'FailedCall(C)')
        [ "$v" = 0 ]
        nl_check $? "$side: FailedCall(C) = '$v', expected 0"
    done
    # The uac's per-message counts: INVITE, 200, ACK, re-INVITE, 200, ACK, BYE in, 200 out.
    for re in '^0_INVITE_Sent$' '^3_200_Recv$' '^4_ACK_Sent$' '^6_INVITE_Sent$' '^8_200_Recv$' \
        '^9_ACK_Sent$' '^10_BYE_Recv$' '^11_200_Sent$'; do
        v=$(nl_counts uac "$re")
        [ "$v" = "$CALLS" ]
        nl_check $? "uac: $re = '$v', expected $CALLS"
    done
    # The route set as the uas received it: the core's value above the edge's (16.6 step 4).
    want=$(printf 'Record-Route: <sip:127.0.0.1:%s;lr>\nRecord-Route: <sip:127.0.0.1:%s;lr>' \
        "${NL_PORT[core]}" "${NL_PORT[edge]}")
    v=$(tr -d '\r' <"$(ls "$NL_TMP"/uas/*_messages.log | head -1)" | grep -c -F -x \
        "$(echo "$want" | head -1)")
    got=$(tr -d '\r' <"$(ls "$NL_TMP"/uas/*_messages.log | head -1)" | grep -A1 -F -x \
        "$(echo "$want" | head -1)" | grep -c -F -x "$(echo "$want" | tail -1)")
    [ "$v" -ge "$CALLS" ] && [ "$got" -ge "$CALLS" ]
    nl_check $? "uas: INVITEs with core's then edge's Record-Route: '$v', '$got', expected $CALLS"
    nl_stop edge
    rc_edge=$?
    nl_stop core
    rc_core=$?
    for n in edge core; do
        rc=rc_$n
        [ "${!rc}" -eq 0 ]
        nl_check $? "$n exit status ${!rc} after SIGTERM, expected 0"
        for k in calls_in acks_forwarded; do
            v=$(nl_json $n $k)
            [ "$v" = $((2 * CALLS)) ]
            nl_check $? "$n: $k = '$v', expected $((2 * CALLS))"
        done
        for k in bye_in bye_ok; do
            v=$(nl_json $n $k)
            [ "$v" = "$CALLS" ]
            nl_check $? "$n: $k = '$v', expected $CALLS"
        done
        for k in no_dialog_481 rejected_503 timeouts_408 stray dropped; do
            v=$(nl_json $n $k)
            [ "$v" = 0 ]
            nl_check $? "$n: $k = '$v', expected 0"
        done
    done
    echo "uac: $(nl_stat uac 'SuccessfulCall(C)') calls re-INVITEd and hung up by the callee," \
        "$(nl_stat uac 'Retransmissions(C)') retransmissions"
fi
for n in edge core uas; do [ -n "${NL_PID[$n]:-}" ] && ! nl_dead "$n" && nl_stop "$n"; done

# node.record_route = no: the proxies stay off the dialog's path, so no Record-Route at all.
NL_UAS_TIME=40 nl_sipp_uas uas_off 0 -trace_msg || nl_bad "SIPp uas_off did not start"
if [ -n "${NL_PORT[uas_off]:-}" ] &&
    nl_node_start core_off core 0 "${NL_PORT[uas_off]}" "" --set node.record_route=no &&
    nl_node_start edge_off edge 0 "${NL_PORT[core_off]}" "" --set node.record_route=no; then
    NL_UAC_TIME=30 nl_sipp_uac uac_off "${NL_PORT[edge_off]}" 10 2 -d 100
    rc=$?
    [ "$rc" -eq 0 ]
    nl_check $? "record_route = no: SIPp uac exit status $rc"
    log=$(ls "$NL_TMP"/uas_off/*_messages.log | head -1)
    v=$(grep -c '^INVITE ' "$log")
    [ "$v" -ge 2 ]
    nl_check $? "record_route = no: INVITEs at the uas '$v', expected 2"
    v=$(grep -c -i '^Record-Route:' "$log")
    [ "$v" = 0 ]
    nl_check $? "record_route = no: Record-Route lines at the uas '$v', expected 0"
else
    nl_bad "record_route = no: the chain did not start"
fi
for n in edge_off core_off uas_off; do [ -n "${NL_PID[$n]:-}" ] && ! nl_dead "$n" && nl_stop "$n"; done
nl_summary
