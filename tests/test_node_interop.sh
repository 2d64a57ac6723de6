#!/usr/bin/env bash
# Interop of `osn node` with the real peers, on 127.0.0.1 (issue 17, "Interop"):
#
#   A  SIPp uac -> osn node (edge) -> osn node (core) -> SIPp uas
#   B  SIPp uac -> Kamailio (tm)   -> osn node (edge) -> SIPp uas
#   C  SIPp uac -> osn node (edge) -> Kamailio (tm)   -> osn node (uas)
#
# Each chain: CALLS calls at RATE calls/s with SIPp's built-in uac and uas. Checks: SIPp's exit
# status 0, SuccessfulCall(C) = CALLS, FailedCall(C) = 0, FailedUnexpectedMessage(C) = 0; each
# node's --json counters equal SIPp's (calls_in = calls_forwarded = calls_ok = CALLS,
# bye_in = bye_ok = CALLS, rejected_503 = dropped = timeouts_408 = 0) and it exits 0 on
# SIGTERM. In B the SIPp uas traces its messages: the uac's Via reaches it byte for byte below
# Kamailio's and the node's (nobody strips or rewrites Via parameters) and the top Via is a
# well-formed RFC 3261 one (SIP/2.0/UDP 127.0.0.1:PORT;branch=z9hG4bK...).
#
# Usage: test_node_interop.sh OSN ROOT [--short]
#   --short   400 calls at 100 calls/s per chain (make check); default 2,000 at 200 (testbed)
#   OSN_NODE_STANDIN=1  run the chains with stand-ins (Kamailio for edge/core, SIPp uas for
#                       uas): checks the harness and the peers while `osn node` is absent; the
#                       node counter checks are then skipped
#   NL_KEEP=1           keep the scratch directory (logs, traces, JSON)
# Prints "N passed, M failed"; exits 1 on a failure, 2 when a peer is missing.
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
MODE=${3:-}
. "$ROOT/tests/node/lib.sh"

CALLS=2000
RATE=200
if [ "$MODE" = --short ]; then
    CALLS=400
    RATE=100
fi
# Budget: 3 chains of CALLS/RATE s each plus start/stop, with a wide margin.
nl_init interop $((3 * (CALLS / RATE + 40) + 60)) --load
export OSN

if ! nl_have_node; then
    echo "osn node is not available ($OSN node --help failed); OSN_NODE_STANDIN=1 runs the" \
        "harness against stand-ins" >&2
    exit 1
fi
command -v kamailio >/dev/null || {
    echo "kamailio not installed (scripts/deps.sh)" >&2
    exit 2
}
STANDIN=${OSN_NODE_STANDIN:-0}

# SIPp's side of a chain: the uac's final statistics.
check_sipp() {
    local tag=$1 uac=$2 rc=$3 v
    [ "$rc" -eq 0 ]
    nl_check $? "$tag: SIPp uac exit status $rc (0 = every call successful)"
    v=$(nl_stat "$uac" 'SuccessfulCall(C)')
    [ "$v" = "$CALLS" ]
    nl_check $? "$tag: SuccessfulCall(C) = '$v', expected $CALLS"
    v=$(nl_stat "$uac" 'FailedCall(C)')
    [ "$v" = 0 ]
    nl_check $? "$tag: FailedCall(C) = '$v', expected 0"
    v=$(nl_stat "$uac" 'FailedUnexpectedMessage(C)')
    [ "$v" = 0 ]
    nl_check $? "$tag: FailedUnexpectedMessage(C) = '$v', expected 0"
    echo "$tag: SIPp $(nl_stat "$uac" 'OutgoingCall(C)') calls," \
        "$(nl_stat "$uac" 'SuccessfulCall(C)') successful," \
        "$(nl_stat "$uac" 'Retransmissions(C)') retransmissions," \
        "INVITE->200 (n p50 p99 max ms): $(nl_rtt_stats "$uac")"
}

# A node's summary against SIPp's figures; ROLE proxy|uas.
check_node() {
    local tag=$1 name=$2 role=$3 rc=$4 k v want
    if [ "$STANDIN" = 1 ]; then
        nl_skip "$tag: $name is a stand-in, no node counters"
        return
    fi
    [ "$rc" -eq 0 ]
    nl_check $? "$tag: $name exit status $rc after SIGTERM, expected 0"
    [ -s "${NL_DIR[$name]}/summary.json" ]
    nl_check $? "$tag: $name wrote no --json summary"
    for k in calls_in calls_forwarded calls_ok bye_in bye_ok; do
        v=$(nl_json "$name" $k)
        [ "$v" = "$CALLS" ]
        nl_check $? "$tag: $name $k = '$v', expected $CALLS (SIPp's calls)"
    done
    for k in rejected_503 dropped timeouts_408 bad_answered bad_dropped; do
        v=$(nl_json "$name" $k)
        [ "$v" = 0 ]
        nl_check $? "$tag: $name $k = '$v', expected 0"
    done
    want=edge
    [ "$role" = uas ] && want=uas
    [ "$name" = core ] && want=core
    v=$(nl_json "$name" element)
    [ "$v" = "$want" ]
    nl_check $? "$tag: $name element = '$v', expected $want"
}

# Via check (chain B): uac's INVITE Via lines and the uas's, from -trace_msg logs.
check_via() {
    local tag=$1 uac=$2 uas=$3 hops=$4
    "$NL_PY" - "${NL_DIR[$uac]}" "${NL_DIR[$uas]}" "$hops" <<'PY'
import glob, re, sys
def invites(d, sent):
    out = {}
    for f in glob.glob(d + "/*_messages.log"):
        for blk in open(f, errors="replace").read().split("\n\n"):
            m = re.search(r"^(INVITE) sip:", blk, re.M)
            if not m:
                continue
            cid = re.search(r"^Call-ID:\s*(\S+)", blk, re.M | re.I)
            vias = re.findall(r"^Via:[ \t]*(.*?)\r?$", blk, re.M | re.I)
            if cid:
                out.setdefault(cid.group(1), vias)
    return out
a, b, hops = invites(sys.argv[1], True), invites(sys.argv[2], False), int(sys.argv[3])
bad = []
top_re = re.compile(r"^SIP/2\.0/UDP 127\.0\.0\.1:\d+;(.*;)?branch=z9hG4bK[^;\s]+")
for cid, vias in b.items():
    if cid not in a:
        bad.append("%s: not sent by the uac" % cid)
        continue
    if len(vias) != hops + 1:
        bad.append("%s: %d Via lines at the uas, expected %d" % (cid, len(vias), hops + 1))
    elif vias[-1] != a[cid][0]:
        bad.append("%s: uac Via %r arrived as %r" % (cid, a[cid][0], vias[-1]))
    elif not all(top_re.match(v) for v in vias):
        bad.append("%s: malformed Via in %r" % (cid, vias))
print("%d INVITEs compared" % len(b))
for x in bad[:5]:
    print("  " + x)
sys.exit(1 if bad or not b else 0)
PY
    nl_check $? "$tag: Via stack at the uas is not the uac's Via plus one per hop, untouched"
}

# Every process binds a port of its own choosing (port 0, or SIPp's own search) and NL_PORT
# gives it back (tests/node/lib.sh); traffic is sent only when every element started.

# ---- A: SIPp -> edge -> core -> SIPp uas
T=A
up=1
nl_sipp_uas uas_a 0 || { nl_bad "$T: SIPp uas did not start"; up=0; }
[ $up = 1 ] && { nl_node_start core core 0 "${NL_PORT[uas_a]}" "" || { nl_bad "$T: core did not start"; up=0; }; }
[ $up = 1 ] && { nl_node_start edge edge 0 "${NL_PORT[core]}" "" || { nl_bad "$T: edge did not start"; up=0; }; }
if [ $up = 1 ]; then
    nl_sipp_uac uac_a "${NL_PORT[edge]}" "$RATE" "$CALLS"
    rc=$?
    check_sipp "$T" uac_a $rc
    nl_stop edge
    rc=$?
    check_node "$T" edge proxy $rc
    nl_stop core
    rc=$?
    check_node "$T" core proxy $rc
fi
for n in edge core uas_a; do [ -n "${NL_PID[$n]:-}" ] && ! nl_dead "$n" && nl_stop "$n"; done

# ---- B: SIPp -> Kamailio -> edge -> SIPp uas (uas and uac trace messages for the Via check)
T=B
up=1
nl_sipp_uas uas_b 0 -trace_msg || { nl_bad "$T: SIPp uas did not start"; up=0; }
[ $up = 1 ] && { nl_node_start edge_b edge 0 "${NL_PORT[uas_b]}" "" || { nl_bad "$T: edge did not start"; up=0; }; }
[ $up = 1 ] && { nl_kam_start kam_b 0 "${NL_PORT[edge_b]}" || { nl_bad "$T: Kamailio did not start"; up=0; }; }
if [ $up = 1 ]; then
    nl_sipp_uac uac_b "${NL_PORT[kam_b]}" "$RATE" "$CALLS" -trace_msg
    rc=$?
    check_sipp "$T" uac_b $rc
    check_via "$T" uac_b uas_b 2
    nl_stop kam_b
    nl_stop edge_b
    rc=$?
    check_node "$T" edge_b proxy $rc
fi
for n in kam_b edge_b uas_b; do [ -n "${NL_PID[$n]:-}" ] && ! nl_dead "$n" && nl_stop "$n"; done

# ---- C: SIPp -> edge -> Kamailio -> osn node uas
T=C
up=1
nl_node_start uas_c uas 0 0 "" || { nl_bad "$T: node uas did not start"; up=0; }
[ $up = 1 ] && { nl_kam_start kam_c 0 "${NL_PORT[uas_c]}" || { nl_bad "$T: Kamailio did not start"; up=0; }; }
[ $up = 1 ] && { nl_node_start edge_c edge 0 "${NL_PORT[kam_c]}" "" || { nl_bad "$T: edge did not start"; up=0; }; }
if [ $up = 1 ]; then
    nl_sipp_uac uac_c "${NL_PORT[edge_c]}" "$RATE" "$CALLS"
    rc=$?
    check_sipp "$T" uac_c $rc
    nl_stop edge_c
    rc=$?
    check_node "$T" edge_c proxy $rc
    nl_stop kam_c
    nl_stop uas_c
    rc=$?
    check_node "$T" uas_c uas $rc
fi
for n in edge_c kam_c uas_c; do [ -n "${NL_PID[$n]:-}" ] && ! nl_dead "$n" && nl_stop "$n"; done

nl_summary
