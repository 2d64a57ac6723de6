#!/usr/bin/env bash
# The callee hangs up on the wire (issue 33, source.callee_hangs_up): SIPp's uac calls through
# `osn node` edge and core to the osn uas, which ends every call itself (callee_hangs_up = 1,
# hold 0.3 s): its BYE goes to the caller's Contact by the INVITE's Record-Route (core, edge),
# and SIPp answers 200 (tests/node/sipp/uac_callee_bye.xml).
#
#   SIPp uac -> osn node (edge) -> osn node (core) -> osn node (uas)   INVITE, ACK
#   SIPp uac <- osn node (edge) <- osn node (core) <- osn node (uas)   BYE (200 back down)
#
# Checks, for CALLS calls: SIPp exits 0 with SuccessfulCall = CALLS and no failed call, its
# per-message counts (INVITE, 200, ACK, BYE in, 200 out) CALLS each; each proxy counts CALLS
# BYEs in and CALLS 2xx to them, no 481, 503, 408, stray; the uas sent CALLS BYEs, each
# answered 2xx, and had no BYE of the caller's (bye_in 0).
#
# Then the osn generator as the caller through edge to the uas, callee_hangs_up = 0.5 on both:
# each good call ends by exactly one BYE, the generator's (byes_sent = byes_ok) or the uas's
# (its bye_sent = bye_sent_ok = the generator's byes_in), and the edge passes them all. Both
# processes ask who hangs up of the Call-ID's text, and must agree: the callee ends half the calls
# less those still up when the traffic ends (hold / duration of them), within 4 binomial standard
# deviations. Had each process its own answer (a hash keyed per process), the callee would end
# 3/8 of them, 8 standard deviations below at 900 calls (it ended 0.29-0.38 before the fix).
#
# Last, a caller that never ACKs the 2xx: the uas ends the session with a BYE at 64*T1 (RFC 3261
# 13.3.1.4), which SIPp answers.
#
# Usage: test_node_hangup.sh OSN ROOT [CALLS]   (default 10 calls at 10 calls/s)
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
CALLS=${3:-10}
RATE=10
. "$ROOT/tests/node/lib.sh"
nl_init hangup $((CALLS / RATE + 90))
export OSN
SIPP_DIR=$ROOT/tests/node/sipp
HANG=(--set source.callee_hangs_up=1 --set source.hold=0.3)

if nl_node_start uas uas 0 "" "" "${HANG[@]}" &&
    nl_node_start core core 0 "${NL_PORT[uas]}" "" &&
    nl_node_start edge edge 0 "${NL_PORT[core]}" ""; then
    NL_UAC_TIME=$((CALLS / RATE + 30)) nl_sipp_uac uac "${NL_PORT[edge]}" "$RATE" "$CALLS" \
        -sf "$SIPP_DIR/uac_callee_bye.xml" -trace_msg
    rc=$?
    [ "$rc" -eq 0 ]
    nl_check $? "SIPp uac exit status $rc (0 = every call as scripted)"
    v=$(nl_stat uac 'SuccessfulCall(C)')
    [ "$v" = "$CALLS" ]
    nl_check $? "uac: SuccessfulCall(C) = '$v', expected $CALLS"
    v=$(nl_stat uac 'FailedCall(C)')
    [ "$v" = 0 ]
    nl_check $? "uac: FailedCall(C) = '$v', expected 0"
    for re in '^0_INVITE_Sent$' '^3_200_Recv$' '^4_ACK_Sent$' '^5_BYE_Recv$' '^6_200_Sent$'; do
        v=$(nl_counts uac "$re")
        [ "$v" = "$CALLS" ]
        nl_check $? "uac: $re = '$v', expected $CALLS"
    done
    for n in edge core uas; do
        nl_stop $n
        rc=$?
        [ "$rc" -eq 0 ]
        nl_check $? "$n exit status $rc after SIGTERM, expected 0"
    done
    for n in edge core; do
        for k in bye_in bye_ok; do
            v=$(nl_json $n $k)
            [ "$v" = "$CALLS" ]
            nl_check $? "$n: $k = '$v', expected $CALLS"
        done
        for k in no_dialog_481 rejected_503 timeouts_408 stray; do
            v=$(nl_json $n $k)
            [ "$v" = 0 ]
            nl_check $? "$n: $k = '$v', expected 0"
        done
    done
    v="$(nl_json uas bye_sent) $(nl_json uas bye_sent_ok) $(nl_json uas bye_in)"
    [ "$v" = "$CALLS $CALLS 0" ]
    nl_check $? "uas: bye_sent, bye_sent_ok, bye_in = '$v', expected '$CALLS $CALLS 0'"
else
    nl_bad "the chain did not start"
fi
for n in edge core uas; do [ -n "${NL_PID[$n]:-}" ] && ! nl_dead "$n" && nl_stop "$n"; done

# 2. the osn generator as the caller, half the calls ended by the callee (both read the same
# fraction and ask the same question of each Call-ID): every good call ends by one BYE, the
# caller's or the callee's; the callee's are the uas's bye_sent, each answered 200 by the
# generator (its byes_in, or crossing the caller's own BYE); the edge passes every BYE, both
# directions.
G=(--set source.callee_hangs_up=0.5 --set source.hold=0.05)
GEN_RATE=300
GEN_TIME=3
if nl_node_start uas2 uas 0 "" "$ROOT/examples/node_collapse.ini" "${G[@]}" &&
    nl_node_start edge2 edge 0 "${NL_PORT[uas2]}" "$ROOT/examples/node_collapse.ini"; then
    mkdir -p "$NL_TMP/gen"
    timeout -k 5 60 "$OSN" node "$ROOT/examples/node_collapse.ini" --set node.element=uac \
        --set node.listen=127.0.0.1:0 --set "node.next_hop=127.0.0.1:${NL_PORT[edge2]}" \
        --set node.duration=$GEN_TIME --set source.rate=$GEN_RATE "${G[@]}" --json "$NL_TMP/gen/summary.json" \
        -q >"$NL_TMP/gen/node.out" 2>"$NL_TMP/gen/node.err" {NL_LOCK_FD}>&-
    rc=$?
    nl_check $rc "generator exit status $rc: $(head -c 300 "$NL_TMP/gen/node.err")"
    nl_stop edge2
    nl_stop uas2
    read -r good unfinished sent ok in < <("$NL_PY" -c '
import json, sys
u = json.load(open(sys.argv[1]))["uac"]
print(u["good"], u["unfinished"], u["byes_sent"], u["byes_ok"], u["byes_in"])' \
        "$NL_TMP/gen/summary.json")
    echo "generator: $good good calls, $sent BYEs sent ($ok answered 2xx), $in callee's BYEs in"
    [ "$unfinished" = 0 ] && [ "$sent" = "$ok" ] && [ $((sent + in)) = "$good" ] && [ "$in" -gt 0 ]
    nl_check $? "generator: byes_sent $sent = byes_ok $ok, + byes_in $in = good $good, unfinished $unfinished"
    "$NL_PY" -c '
import math, sys
good, callee, hold, time = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
p = 0.5 * (1 - hold / time)
sd = math.sqrt(good * p * (1 - p))
print(f"the callee ended {callee} of {good} calls ({callee / max(good, 1):.3f}); "
      f"expected {good * p:.0f} +- {4 * sd:.0f} (4 sd)")
sys.exit(0 if good >= 600 and abs(callee - good * p) <= 4 * sd else 1)' \
        "$good" "$in" 0.05 "$GEN_TIME"
    nl_check $? "generator and uas agree on who hangs up (share of calls the callee ended)"
    # A callee's BYE may cross the caller's own (the generator hangs up what is still up when
    # its traffic ends): the caller answers it 200 without counting it in byes_in (its call is
    # already ending, RFC 3261 15), so the uas may have sent a few more than byes_in, each
    # crossing one of the caller's BYEs, and the edge passed both.
    read -r usent uok uin < <(printf '%s %s %s\n' "$(nl_json uas2 bye_sent)" \
        "$(nl_json uas2 bye_sent_ok)" "$(nl_json uas2 bye_in)")
    crossed=$((usent - in))
    [ "$uok" = "$usent" ] && [ "$uin" = "$sent" ] && [ "$crossed" -ge 0 ] && [ "$crossed" -le "$sent" ]
    nl_check $? "uas: bye_sent $usent = bye_sent_ok $uok = byes_in $in + $crossed crossed (at most $sent), bye_in $uin = $sent"
    v="$(nl_json edge2 bye_in) $(nl_json edge2 no_dialog_481) $(nl_json edge2 stray)"
    [ "$v" = "$((sent + usent)) 0 0" ]
    nl_check $? "edge: bye_in, no_dialog_481, stray = '$v', expected '$((sent + usent)) 0 0'"
else
    nl_bad "uas2 or edge2 did not start"
fi
for n in edge2 uas2; do [ -n "${NL_PID[$n]:-}" ] && ! nl_dead "$n" && nl_stop "$n"; done

# 3. A caller that never acknowledges the 2xx (RFC 3261 13.3.1.4; tests/node/sipp/
# uac_no_ack.xml) straight to the uas, T1 = 0.05 s and T2 = 0.4 s: the uas resends each 200 at
# +0.05, 0.15, 0.35, 0.75, then every 0.4 s to +3.15 (10 copies, all before 64*T1 = 3.2 s),
# then ends the session with a BYE to the caller's Contact, which SIPp answers 200: SIPp counts
# 10 copies a call and one BYE; the uas bye_unacked = bye_sent_ok = NOACK_CALLS, and no BYE of
# the callee's (bye_sent 0). Before the uas did this, SIPp waited for a BYE that never came.
NOACK_CALLS=3
if nl_node_start uas3 uas 0 "" "" --set sip.t1=0.05 --set sip.t2=0.4; then
    NL_UAC_TIME=20 nl_sipp_uac noack "${NL_PORT[uas3]}" 5 "$NOACK_CALLS" \
        -sf "$SIPP_DIR/uac_no_ack.xml"
    rc=$?
    [ "$rc" -eq 0 ]
    nl_check $? "SIPp uac (no ACK) exit status $rc (0 = every call as scripted)"
    v="$(nl_counts noack '^3_200_Recv$') $(nl_counts noack '^3_200_Retrans$') $(nl_counts noack '^4_BYE_Recv$')"
    [ "$v" = "$NOACK_CALLS $((10 * NOACK_CALLS)) $NOACK_CALLS" ]
    nl_check $? "uac (no ACK): 200 received, copies, BYEs = '$v', expected '$NOACK_CALLS $((10 * NOACK_CALLS)) $NOACK_CALLS'"
    nl_stop uas3
    v="$(nl_json uas3 bye_unacked) $(nl_json uas3 bye_sent_ok) $(nl_json uas3 bye_sent) $(nl_json uas3 send_errors)"
    [ "$v" = "$NOACK_CALLS $NOACK_CALLS 0 0" ]
    nl_check $? "uas: bye_unacked, bye_sent_ok, bye_sent, send_errors = '$v', expected '$NOACK_CALLS $NOACK_CALLS 0 0'"
else
    nl_bad "uas3 did not start"
fi
[ -n "${NL_PID[uas3]:-}" ] && ! nl_dead uas3 && nl_stop uas3
nl_summary
