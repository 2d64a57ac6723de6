#!/usr/bin/env bash
# CANCEL on the wire with real peers (issue 33): SIPp's uac calls through `osn node` edge and
# core to a SIPp uas that rings (180) and never answers; the uac CANCELs after the 180
# (tests/node/sipp/uac_cancel.xml), the uas answers the CANCEL 200 and the INVITE 487
# (tests/node/sipp/uas_cancel.xml).
#
#   SIPp uac -> osn node (edge) -> osn node (core) -> SIPp uas
#
# Checks, for CALLS calls: both SIPp ends exit 0 with SuccessfulCall = CALLS and no failed call
# (every scripted message came, in order: 180, 200 to the CANCEL, 487, and the ACK at the uas);
# the uac's message counts (-trace_counts) show CALLS CANCELs sent, CALLS 200 and 487 received;
# each proxy counts CALLS CANCELs in and CALLS passed on (RFC 3261 16.10: answered 200 hop by hop
# and forwarded to the branch), no 2xx, 481, 503, 408, stray or dropped message.
#
# Usage: test_node_cancel.sh OSN ROOT [CALLS]   (default 20 calls at 10 calls/s)
# Prints "N passed, M failed"; exits 1 on a failure, 2 when a peer is missing.
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
CALLS=${3:-20}
RATE=10
. "$ROOT/tests/node/lib.sh"
nl_init cancel $((CALLS / RATE + 90))
export OSN
SIPP_DIR=$ROOT/tests/node/sipp

up=1
NL_UAS_TIME=$((CALLS / RATE + 40)) nl_sipp_uas uas 0 -sf "$SIPP_DIR/uas_cancel.xml" \
    || { nl_bad "SIPp uas did not start"; up=0; }
[ $up = 1 ] && { nl_node_start core core 0 "${NL_PORT[uas]}" "" || { nl_bad "core did not start"; up=0; }; }
[ $up = 1 ] && { nl_node_start edge edge 0 "${NL_PORT[core]}" "" || { nl_bad "edge did not start"; up=0; }; }
if [ $up = 1 ]; then
    NL_UAC_TIME=$((CALLS / RATE + 30)) nl_sipp_uac uac "${NL_PORT[edge]}" "$RATE" "$CALLS" \
        -sf "$SIPP_DIR/uac_cancel.xml"
    rc=$?
    [ "$rc" -eq 0 ]
    nl_check $? "SIPp uac exit status $rc (0 = every call as scripted)"
    # The uas ends its calls on the ACK of the 487: wait for it to see the last one.
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
    # The uac's per-message counts: CANCEL sent, 200 and 487 received, ACK sent, once a call.
    for re in '^4_CANCEL_Sent$' '^5_200_Recv$' '^6_487_Recv$' '^7_ACK_Sent$'; do
        v=$(nl_counts uac "$re")
        [ "$v" = "$CALLS" ]
        nl_check $? "uac: $re = '$v', expected $CALLS"
    done
    nl_stop edge
    rc_edge=$?
    nl_stop core
    rc_core=$?
    for n in edge core; do
        rc=rc_$n
        [ "${!rc}" -eq 0 ]
        nl_check $? "$n exit status ${!rc} after SIGTERM, expected 0"
        for k in calls_in cancel_in cancel_forwarded; do
            v=$(nl_json $n $k)
            [ "$v" = "$CALLS" ]
            nl_check $? "$n: $k = '$v', expected $CALLS"
        done
        for k in calls_ok no_dialog_481 rejected_503 timeouts_408 stray dropped cancelled_487; do
            v=$(nl_json $n $k)
            [ "$v" = 0 ]
            nl_check $? "$n: $k = '$v', expected 0"
        done
    done
    echo "uac: $(nl_stat uac 'SuccessfulCall(C)') calls cancelled as scripted," \
        "$(nl_stat uac 'Retransmissions(C)') retransmissions"
fi
for n in edge core uas; do [ -n "${NL_PID[$n]:-}" ] && ! nl_dead "$n" && nl_stop "$n"; done
nl_summary
