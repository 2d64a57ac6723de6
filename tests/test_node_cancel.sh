#!/usr/bin/env bash
# CANCEL on the wire with real peers at both ends (issue 33): SIPp's uac CANCELs 50 ms after the
# 180 (tests/node/sipp/uac_cancel.xml); SIPp's uas rings, answers the CANCEL 200 and the INVITE
# 487 (tests/node/sipp/uas_cancel.xml; 481 when the CANCEL's top Via branch is not the
# INVITE's). Three chains of stateful proxies between them:
#
#   A  SIPp uac -> osn node (edge) -> osn node (core) -> SIPp uas
#   K  SIPp uac -> osn node (edge) -> Kamailio (tm)   -> SIPp uas
#   F  SIPp uac -> Kamailio (tm)   -> osn node (edge) -> osn node (core) -> SIPp uas
#
# Every proxy answers the CANCEL 200 itself and sends a CANCEL of its own on the branch it
# forwarded the INVITE on (RFC 3261 9.1, 16.10), and relays the 487 (ACKing it hop by hop,
# 17.1.1.3). Kamailio does this in t_relay() (tests/node/kamailio/stateful.cfg); in F the edge
# would answer a CANCEL not on Kamailio's INVITE branch 481, in K the uas would.
#
# Checks per chain, CALLS calls:
#   - both SIPp ends (-trace_stat): SuccessfulCall = CALLS; FailedCall, FailedUnexpectedMessage,
#     FailedTimeoutOnRecv, FailedMaxUDPRetrans, OutOfCallMsgs and DeadCallMsgs 0; the uac
#     exits 0;
#   - their per-message counts (-trace_counts): the uac sent CALLS INVITEs, CANCELs and ACKs and
#     received CALLS 180s, 200s and 487s; the uas received CALLS INVITEs, CANCELs and ACKs, sent
#     CALLS 180s, 200s and 487s and no 481, and answered 200 to each copy of a CANCEL that its
#     sender retransmitted (Timer E) before the 200 reached it (a slow uas under load: see
#     uas_cancel.xml); no message timed out or came unexpected;
#   - each osn node: calls_in = calls_forwarded = cancel_in = cancel_forwarded = CALLS, no 2xx,
#     408, 481, 503, stray, dropped or refused datagram; and once the calls are over, the gauge
#     osn_node_transactions of its metrics port falls to 0 (every INVITE, CANCEL and 487's
#     transaction ended). The [sip] timers are shortened for that (T1 0.1 s: Timer J, the
#     longest, is 64 T1 = 6.4 s instead of 32 s); the callers keep SIPp's own (T1 0.5 s).
#
# Usage: test_node_cancel.sh OSN ROOT [CALLS]   (default 20 calls a chain at 10 calls/s)
# Prints "N passed, M failed"; exits 1 on a failure, 2 when a peer is missing.
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
CALLS=${3:-20}
RATE=10
. "$ROOT/tests/node/lib.sh"
nl_init cancel $((3 * (CALLS / RATE + 30) + 60))
export OSN
SIPP_DIR=$ROOT/tests/node/sipp
command -v kamailio >/dev/null || {
    echo "kamailio not installed (scripts/deps.sh)" >&2
    exit 2
}
TIMERS=(--set sip.t1=0.1 --set sip.t2=0.4 --set sip.t4=0.5 --set sip.timer_d=1)
OSN_NODES=()

# An osn proxy: NAME ELEMENT NEXT_PORT, with its metrics port and the short timers.
proxy() {
    nl_node_start "$1" "$2" 0 "$3" "" --set node.metrics=127.0.0.1:0 "${TIMERS[@]}" &&
        OSN_NODES+=("$1")
}
uas() {
    NL_UAS_TIME=$((CALLS / RATE + 40)) nl_sipp_uas "$1" 0 -sf "$SIPP_DIR/uas_cancel.xml" \
        -trace_counts
}

# SIPp's statistics (-trace_stat): COLUMN=VALUE pairs to hold.
check_stat() {
    local tag=$1 who=$2 kv v
    shift 2
    for kv in "$@"; do
        v=$(nl_stat "$who" "${kv%%=*}")
        [ "$v" = "${kv#*=}" ]
        nl_check $? "$tag: $who ${kv%%=*} = '$v', expected ${kv#*=}"
    done
}
# SIPp's per-message counts (-trace_counts): REGEX=SUM pairs to hold.
check_counts() {
    local tag=$1 who=$2 kv v
    shift 2
    for kv in "$@"; do
        v=$(nl_counts "$who" "${kv%=*}")
        [ "$v" = "${kv##*=}" ]
        nl_check $? "$tag: $who counts ${kv%=*} = '$v', expected ${kv##*=}"
    done
}
SIPP_CLEAN="FailedCall(C)=0 FailedUnexpectedMessage(C)=0 FailedTimeoutOnRecv(C)=0
FailedMaxUDPRetrans(C)=0 OutOfCallMsgs(C)=0 DeadCallMsgs(C)=0"
SIPP_NONE="_Timeout\$=0 _Unexp\$=0"

# One chain, TAG and its proxies from the caller's side (edge, core: osn node; kam: Kamailio),
# each process named after its role and the tag (edge_a, kam_k, uas_f, ...): started from the
# SIPp uas back to the first proxy, each toward the one after it; then CALLS calls from the SIPp
# uac to the first proxy, both SIPp ends' statistics checked, and the SIPp uas and Kamailio
# stopped (the osn nodes run on: their transactions and counters are checked at the end).
chain() {
    local tag=$1 t=${1,,} i hop name next rc
    shift
    local uac=uac_$t uas=uas_$t
    nl_up "$tag: SIPp uas did not start" uas "$uas"
    next=$uas
    for ((i = $#; i >= 1; i--)); do
        hop=${!i}
        name=${hop}_$t
        if [ "$hop" = kam ]; then
            nl_up "$tag: Kamailio did not start" nl_kam_start "$name" 0 "${NL_PORT[$next]:-}"
        else
            nl_up "$tag: $hop did not start" proxy "$name" "$hop" "${NL_PORT[$next]:-}"
        fi
        next=$name
    done
    nl_require_up
    NL_UAC_TIME=$((CALLS / RATE + 30)) nl_sipp_uac "$uac" "${NL_PORT[$next]}" "$RATE" "$CALLS" \
        -sf "$SIPP_DIR/uac_cancel.xml"
    rc=$?
    [ "$rc" -eq 0 ]
    nl_check $? "$tag: SIPp uac exit status $rc (0 = every call as scripted)"
    # shellcheck disable=SC2086
    check_stat "$tag" "$uac" "SuccessfulCall(C)=$CALLS" $SIPP_CLEAN
    # shellcheck disable=SC2086
    check_counts "$tag" "$uac" "_INVITE_Sent\$=$CALLS" "_180_Recv\$=$CALLS" \
        "_CANCEL_Sent\$=$CALLS" "_200_Recv\$=$CALLS" "_487_Recv\$=$CALLS" \
        "_ACK_Sent\$=$CALLS" $SIPP_NONE
    # The uas ends a call at the ACK of its 487, after the uac has its 487: wait for the last
    # one in its files (written every second, -fd 1).
    for _ in $(seq 1 50); do
        [ "$(nl_stat "$uas" 'SuccessfulCall(C)')" = "$CALLS" ] &&
            [ "$(nl_counts "$uas" '_ACK_Recv$')" = "$CALLS" ] && break
        sleep 0.2
    done
    # shellcheck disable=SC2086
    check_stat "$tag" "$uas" "SuccessfulCall(C)=$CALLS" $SIPP_CLEAN
    # The CANCEL and its 200 by the scenario's index (2, 4): a copy of the CANCEL the proxy
    # sent again before the 200 reached it is counted apart (6) and answered 200 again (8).
    # shellcheck disable=SC2086
    check_counts "$tag" "$uas" "_INVITE_Recv\$=$CALLS" "_180_Sent\$=$CALLS" \
        "^2_CANCEL_Recv\$=$CALLS" "^4_200_Sent\$=$CALLS" "_487_Sent\$=$CALLS" \
        "_ACK_Recv\$=$CALLS" "_481_Sent\$=0" $SIPP_NONE
    copies=$(nl_counts "$uas" '^6_CANCEL_Recv$')
    check_counts "$tag" "$uas" "^8_200_Sent\$=$copies"
    echo "$tag: $(nl_stat "$uac" 'SuccessfulCall(C)') calls cancelled as scripted;" \
        "retransmissions: uac $(nl_stat "$uac" 'Retransmissions(C)')," \
        "uas $(nl_stat "$uas" 'Retransmissions(C)'); CANCEL copies at the uas: $copies"
    nl_stop "$uas"
    for hop in "$@"; do
        [ "$hop" = kam ] && nl_stop "kam_$t"
    done
}

chain A edge core
chain K edge kam
chain F kam edge core

# ---- every osn node: no transaction left once the timers have run (Timer J, 6.4 s after the
# last call at most; 15 s allowed, less than RFC 3261's 32 s), then its counters
end=$((SECONDS + 15))
while [ $SECONDS -lt $end ]; do
    left=0
    for n in "${OSN_NODES[@]}"; do
        [ "$(nl_metric "$n" osn_node_transactions)" = 0 ] || left=1
    done
    [ $left = 0 ] && break
    sleep 0.2
done
for n in "${OSN_NODES[@]}"; do
    v=$(nl_metric "$n" osn_node_transactions)
    [ "$v" = 0 ]
    nl_check $? "$n: osn_node_transactions = '$v' after the timers, expected 0"
done
for n in "${OSN_NODES[@]}"; do
    nl_stop "$n"
    rc=$?
    [ "$rc" -eq 0 ]
    nl_check $? "$n exit status $rc after SIGTERM, expected 0"
    for k in calls_in calls_forwarded cancel_in cancel_forwarded; do
        v=$(nl_json "$n" $k)
        [ "$v" = "$CALLS" ]
        nl_check $? "$n: $k = '$v', expected $CALLS"
    done
    for k in calls_ok no_dialog_481 rejected_503 timeouts_408 stray dropped cancelled_487 \
        send_errors bad_dropped; do
        v=$(nl_json "$n" $k)
        [ "$v" = 0 ]
        nl_check $? "$n: $k = '$v', expected 0"
    done
done
nl_summary
