#!/usr/bin/env bash
# `osn node` over TCP (issue 34, RFC 3261 18), on 127.0.0.1, about 70 s:
#
#   t1  SIPp uac -t t1 (one connection) -> osn edge (TCP) -> osn uas (TCP)
#   tn  SIPp uac -t tn (a connection per call) -> the same edge -> the same uas
#   kam SIPp uac -t t1 -> osn edge -> Kamailio (tm; TCP both ways) -> osn uas
#
# CALLS calls at RATE calls/s each, SIPp's built-in uac. Checks: SIPp's exit status 0,
# SuccessfulCall(C) = CALLS, FailedCall(C) = 0, Retransmissions(C) = 0 (SIPp sends none over
# TCP, and needs none); each node's --json counters: calls_in = calls_ok = CALLS and bye_ok =
# CALLS per chain, retrans_sent = retrans_absorbed = 0 (no Timer A, E or G over TCP: the
# transaction layer's TCP rules), datagrams_in = 0 (everything came over TCP), tcp_accepted = 1
# at the uas (the edge's one connection) and >= CALLS + 1 at the edge (t1's, and tn's one per
# call). The load generator (element uac) over TCP to a uas: every call good, one connection.
# Then tests/node/tcp.py: framing, the next hop's connection and its failures, hostile
# peers and 1,000 idle connections (its own header says what).
#
# Usage: test_node_tcp.sh OSN ROOT       Prints "N passed, M failed"; exits 1 on a failure.
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
. "$ROOT/tests/node/lib.sh"
CALLS=${TCP_CALLS:-200}
RATE=${TCP_RATE:-50}
nl_init tcp 280
export OSN

command -v sipp >/dev/null || {
    echo "sipp not installed (scripts/deps.sh)" >&2
    exit 2
}

# Bad transports and TCP keys: exit 2, the key named.
bad() {
    local key=$1
    shift
    "$OSN" node "$@" -q --set node.duration=1 >/dev/null 2>"$NL_TMP/bad.err"
    local rc=$?
    [ "$rc" = 2 ] && grep -q "key '$key'" "$NL_TMP/bad.err"
    nl_check $? "$*: exit $rc, expected 2 naming $key: $(cat "$NL_TMP/bad.err")"
}
bad node.listen --set "node.listen=127.0.0.1:0;transport=sctp"
bad node.listen --set "node.listen=127.0.0.1:0;maddr=1.2.3.4"
bad node.next_hop --set node.element=edge --set "node.next_hop=127.0.0.1:5;transport=tls"
bad node.listen --set node.element=uac --set "node.next_hop=127.0.0.1:5;transport=tcp" \
    --set "node.listen=127.0.0.1:0;transport=tcp"
bad node.tcp_buffer --set node.tcp_buffer=100
bad node.tcp_idle_timeout --set node.tcp_idle_timeout=0
bad node.tcp_max_connections --set node.tcp_max_connections=0

nl_up "uas did not start" nl_node_start uas uas 0 "" "" \
    --set "node.listen=127.0.0.1:0;transport=tcp"
nl_up "edge did not start" nl_node_start edge edge 0 "${NL_PORT[uas]:-}" "" \
    --set "node.listen=127.0.0.1:0;transport=tcp" \
    --set "node.next_hop=127.0.0.1:${NL_PORT[uas]:-};transport=tcp"
nl_require_up
grep -q "listening on 127.0.0.1:${NL_PORT[edge]} (udp), tcp 127.0.0.1:${NL_PORT[edge]}, next hop 127.0.0.1:${NL_PORT[uas]} (tcp)" \
    "${NL_DIR[edge]}/node.out"
nl_check $? "edge: the listening line names TCP: '$(cat "${NL_DIR[edge]}/node.out")'"

for mode in t1 tn; do
    # shellcheck disable=SC2086
    nl_sipp_uac "$mode" "${NL_PORT[edge]}" "$RATE" "$CALLS" -t "$mode" -max_socket 4096
    rc=$?
    [ "$rc" -eq 0 ]
    nl_check $? "$mode: SIPp uac exit status $rc (0 = every call successful)"
    for k in 'SuccessfulCall(C)' 'FailedCall(C)' 'Retransmissions(C)'; do
        v=$(nl_stat "$mode" "$k")
        want=0
        [ "$k" = 'SuccessfulCall(C)' ] && want=$CALLS
        [ "$v" = "$want" ]
        nl_check $? "$mode: SIPp $k = '$v', expected $want"
    done
    echo "$mode: SIPp $(nl_stat "$mode" 'SuccessfulCall(C)') of $CALLS calls," \
        "$(nl_stat "$mode" 'Retransmissions(C)') retransmissions," \
        "INVITE->200 (n p50 p99 max ms): $(nl_rtt_stats "$mode")"
done

for name in edge uas; do
    nl_stop "$name" 20
    rc=$?
    [ "$rc" -eq 0 ]
    nl_check $? "$name: exit status $rc after SIGTERM"
    read -r cin cok bye rs ra din acc min mout < <(nl_json "$name" calls_in calls_ok bye_ok \
        retrans_sent retrans_absorbed datagrams_in tcp_accepted tcp_msgs_in tcp_msgs_out)
    echo "$name: calls_in $cin calls_ok $cok bye_ok $bye retrans_sent $rs retrans_absorbed $ra" \
        "datagrams_in $din tcp_accepted $acc tcp_msgs_in $min tcp_msgs_out $mout"
    [ "$cin" = $((2 * CALLS)) ] && [ "$cok" = $((2 * CALLS)) ] && [ "$bye" = $((2 * CALLS)) ]
    nl_check $? "$name: calls_in, calls_ok, bye_ok = $cin, $cok, $bye, expected $((2 * CALLS))"
    [ "$rs" = 0 ] && [ "$ra" = 0 ]
    nl_check $? "$name: retrans_sent $rs, retrans_absorbed $ra over TCP, expected 0"
    [ "$din" = 0 ]
    nl_check $? "$name: datagrams_in $din, expected 0 (all over TCP)"
    # A call: INVITE, ACK, BYE in (SIPp's, forwarded to the uas); 180, 200, 200 of the BYE back
    # from the uas to the edge (the uas sends no 100: it answers at once).
    want=$((6 * CALLS))
    [ "$name" = edge ] && want=$((12 * CALLS))
    [ "$min" = "$want" ]
    nl_check $? "$name: tcp_msgs_in $min, expected $want (INVITE, ACK, BYE; edge: and 180, 200, 200)"
    if [ "$name" = uas ]; then
        [ "$acc" = 1 ]
        nl_check $? "uas: tcp_accepted $acc, expected 1 (the edge's one connection)"
    else
        [ "$acc" -ge $((CALLS + 1)) ] 2>/dev/null
        nl_check $? "edge: tcp_accepted $acc, expected >= $((CALLS + 1)) (t1's, tn's per call)"
    fi
done

# ---- gen: osn's load generator (element uac) -> osn uas, over TCP: GEN_RATE calls/s for 2 s,
# every call good, all on the one connection the generator opened (no datagram either way).
GEN_RATE=25
nl_up "gen: uas did not start" nl_node_start uas3 uas 0 "" "" \
    --set "node.listen=127.0.0.1:0;transport=tcp"
nl_require_up
mkdir -p "$NL_TMP/gen"
NL_DIR[gen]=$NL_TMP/gen
timeout -k 5 60 "$OSN" node "$ROOT/examples/node_collapse.ini" --set node.element=uac \
    --set node.listen=127.0.0.1:0 --set "node.next_hop=127.0.0.1:${NL_PORT[uas3]};transport=tcp" \
    --set node.duration=2 --set "source.rate=$GEN_RATE" --set source.hold=0.2 \
    --json "$NL_TMP/gen/summary.json" -q >"$NL_TMP/gen/node.out" 2>"$NL_TMP/gen/node.err" \
    {NL_LOCK_FD}>&-
rc=$?
nl_check $rc "gen: exit status $rc $(head -c 300 "$NL_TMP/gen/node.err")"
read -r started good < <(nl_json gen uac | "$NL_PY" -c '
import ast, sys
try:
    u = ast.literal_eval(sys.stdin.read())
    print(u["calls_started"], u["good"])
except Exception:
    print("0 -")')
read -r gcon gdin gmout < <(nl_json gen tcp_connects datagrams_in tcp_msgs_out)
nl_stop uas3 20
read -r ucin ubye udin uacc < <(nl_json uas3 calls_in bye_ok datagrams_in tcp_accepted)
echo "gen: $good of $started calls good over TCP; gen tcp_connects $gcon tcp_msgs_out $gmout" \
    "datagrams_in $gdin; uas calls_in $ucin bye_ok $ubye datagrams_in $udin tcp_accepted $uacc"
[ "$started" -ge $((GEN_RATE)) ] 2>/dev/null && [ "$good" = "$started" ]
nl_check $? "gen: every call good: started $started, good $good"
[ "$gcon" = 1 ] && [ "$gdin" = 0 ] && [ "$uacc" = 1 ] && [ "$udin" = 0 ] &&
    [ "$ucin" = "$started" ] && [ "$ubye" = "$started" ]
nl_check $? "gen: one connection ($gcon opened, $uacc accepted), no datagram ($gdin, $udin)," \
    "uas calls_in $ucin and bye_ok $ubye = $started"

# ---- kam: SIPp -t t1 -> osn edge -> Kamailio (tm, over TCP both ways) -> osn uas
if command -v kamailio >/dev/null; then
    nl_up "kam: uas did not start" nl_node_start uas2 uas 0 "" "" \
        --set "node.listen=127.0.0.1:0;transport=tcp"
    NL_KAM_TCP=1 NL_KAM_TIME=120 nl_up "kam: Kamailio did not start" nl_kam_start kam 0 \
        "${NL_PORT[uas2]:-}"
    nl_up "kam: edge did not start" nl_node_start edge2 edge 0 "${NL_PORT[kam]:-}" "" \
        --set "node.listen=127.0.0.1:0;transport=tcp" \
        --set "node.next_hop=127.0.0.1:${NL_PORT[kam]:-};transport=tcp"
    nl_require_up
    nl_sipp_uac kam "${NL_PORT[edge2]}" "$RATE" "$CALLS" -t t1
    rc=$?
    [ "$rc" -eq 0 ] && [ "$(nl_stat kam 'SuccessfulCall(C)')" = "$CALLS" ] &&
        [ "$(nl_stat kam 'Retransmissions(C)')" = 0 ]
    nl_check $? "kam: SIPp status $rc, $(nl_stat kam 'SuccessfulCall(C)') of $CALLS calls," \
        "$(nl_stat kam 'Retransmissions(C)') retransmissions (want all, 0)"
    echo "kam: SIPp $(nl_stat kam 'SuccessfulCall(C)') of $CALLS calls through Kamailio over TCP," \
        "INVITE->200 (n p50 p99 max ms): $(nl_rtt_stats kam)"
    nl_stop edge2 20
    nl_stop kam 10
    nl_stop uas2 20
    for name in edge2 uas2; do
        read -r cin cok rs ra din acc < <(nl_json "$name" calls_in calls_ok retrans_sent \
            retrans_absorbed datagrams_in tcp_accepted)
        [ "$cin" = "$CALLS" ] && [ "$cok" = "$CALLS" ] && [ "$rs" = 0 ] && [ "$ra" = 0 ] &&
            [ "$din" = 0 ]
        nl_check $? "kam: $name calls_in $cin, calls_ok $cok (want $CALLS), retrans_sent $rs," \
            "retrans_absorbed $ra, datagrams_in $din (want 0)"
    done
    # Kamailio's own connection to the uas (its Via SIP/2.0/TCP: the uas answered on it).
    [ "$(nl_json uas2 tcp_accepted)" -ge 1 ] 2>/dev/null
    nl_check $? "kam: uas2 tcp_accepted $(nl_json uas2 tcp_accepted), expected >= 1"
else
    nl_skip "kamailio not installed: no Kamailio chain over TCP"
fi

"$NL_PY" "$ROOT/tests/node/tcp.py" "$OSN"
nl_check $? "tests/node/tcp.py: framing, next hop, hostile peers (its FAIL lines above)"
nl_summary
