#!/usr/bin/env bash
# RFC 4475 torture messages on the wire at a running `osn node` (issue 17, "RFC 4475 on the
# wire"), in the uas role and in the proxy role (edge, next hop a SIPp uas), on 127.0.0.1.
#
# Part 1, one message at a time: for each tests/data/rfc4475/*.dat a fresh node is started,
# the file is sent as one UDP datagram, byte for byte (tests/node/udpsend.py), and the node is
# stopped with SIGTERM; its --json summary then tells what it made of that one message:
#   valid     (RFC 4475 3.1.1: wsinv intmeth esc01 escnull esc02 lwsdisp longreq dblreq semiuri
#              transports mpart01 unreason noreason): bad_answered = bad_dropped = 0
#   invalid   (requests the RFC says cannot be parsed as sent: badinv01 clerr ncl scalar02
#              ltgtruri lwsruri mismatch01 mismatch02): bad_answered + bad_dropped = 1, i.e. a
#              400 or nothing
#   bad responses (scalarlg bigcode): never answered (bad_answered = 0)
#   proxy_fwd (badaspec regbadct): malformed only in a header a proxy does not use (To's URI,
#              Contact), so the edge forwards them (bad_answered = bad_dropped = 0: RFC 3261
#              16.3 step 1, "Any other components, well-formed or not, SHOULD be ignored and
#              remain unchanged when the message is forwarded") while the uas, which reads
#              them, answers 400 (bad_answered + bad_dropped = 1)
#   the others (liberal handling allowed, or valid syntax with an application-level answer:
#              405/416/420/483/505...): only reported
# and in every case the node was still running when stopped and exited 0.
# Part 2, all messages at one long-running node per role (twice over), then SIPp calls through
# it: the node is alive, every call is successful, exit status 0, and its bad_answered +
# bad_dropped is at least twice the number of invalid requests above.
# Responses that come back to the sender's socket are printed (informational: most messages'
# Via sends the answer to another port, RFC 3261 18.2.2).
#
# Usage: test_node_rfc4475.sh OSN ROOT
#   RFC4475_DIR         the .dat files (default ROOT/tests/data/rfc4475)
#   OSN_NODE_STANDIN=1  SIPp uas / Kamailio stand in for the node: part 1 keeps one stand-in
#                       running (no counters), part 2 as above
# Run by `make check` in the ASan build too (the same test, registered against build-asan/osn).
# Prints "N passed, M failed"; exits 1 on a failure.
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
DATA=${RFC4475_DIR:-$ROOT/tests/data/rfc4475}
. "$ROOT/tests/node/lib.sh"
nl_init rfc4475 840
export OSN
STANDIN=${OSN_NODE_STANDIN:-0}
SEND="$NL_PY $ROOT/tests/node/udpsend.py"
if ! nl_have_node; then
    echo "osn node is not available ($OSN node --help failed); OSN_NODE_STANDIN=1 runs the" \
        "harness against stand-ins" >&2
    exit 1
fi
shopt -s nullglob
FILES=("$DATA"/*.dat)
[ ${#FILES[@]} -ge 49 ] || {
    echo "RFC 4475 messages missing: ${#FILES[@]} .dat files in $DATA (expected 49 or 50)" >&2
    exit 1
}

VALID=" wsinv intmeth esc01 escnull esc02 lwsdisp longreq dblreq semiuri transports mpart01 unreason noreason "
INVALID=" badinv01 clerr ncl scalar02 ltgtruri lwsruri mismatch01 mismatch02 "
BADRESP=" scalarlg bigcode "
# RFC 4475 3.1.2.14 (LWS inside To's <>) and 3.1.2.13 (a '?' outside <> in Contact): a proxy
# reads only To's tag and no Contact (osn/sip_wire.h, OSN_SIP_WIRE_ROLE_PROXY).
PROXY_FWD=" badaspec regbadct "
n_invalid=$(wc -w <<<"$INVALID")

# Each element binds a port of its own choosing; NL_PORT gives it back (tests/node/lib.sh).
NL_UAS_TIME=500 nl_up "SIPp uas (next hop) did not start" nl_sipp_uas sink 0
nl_require_up
P_UAS=${NL_PORT[sink]}

# ---- part 1 (one sender process for all files: udpsend.py --serve as a coprocess)
coproc SENDER { exec $SEND --serve; }
NL_PIDS+=("$SENDER_PID")
for role in uas edge; do
    echo "== part 1, role $role: file, verdict, bad_answered, bad_dropped, calls_in, responses seen"
    if [ "$STANDIN" = 1 ]; then
        nl_node_start "p1_$role" "$role" 0 "$P_UAS" "" || nl_bad "$role: stand-in did not start"
        P=${NL_PORT[p1_$role]:-0}
    fi
    i=0
    for f in "${FILES[@]}"; do
        b=$(basename "$f" .dat)
        i=$((i + 1))
        if [ "$STANDIN" != 1 ]; then
            name=p1_${role}_$i
            nl_node_start "$name" "$role" 0 "$P_UAS" "" || {
                nl_bad "$role $b: node did not start"
                continue
            }
            P=${NL_PORT[$name]}
        else
            name=p1_$role
        fi
        echo "127.0.0.1 $P 0.3 $f" >&"${SENDER[1]}"
        read -r -t 30 line <&"${SENDER[0]}"
        resp=${line##*responses=}
        kill -0 "$(nl_real_pid "$name")" 2>/dev/null
        nl_check $? "$role $b: the node died on this message"
        [ "$STANDIN" = 1 ] && continue
        nl_stop "$name"
        rc=$?
        [ "$rc" -eq 0 ]
        nl_check $? "$role $b: exit status $rc after SIGTERM"
        read -r ba bd ci <<<"$(nl_json "$name" bad_answered bad_dropped calls_in)"
        [ "$ba" = - ] && ba=
        [ "$bd" = - ] && bd=
        verdict=report
        case "$VALID" in *" $b "*) verdict=valid ;; esac
        case "$INVALID" in *" $b "*) verdict=invalid ;; esac
        case "$BADRESP" in *" $b "*) verdict=badresp ;; esac
        case "$PROXY_FWD" in *" $b "*) verdict=proxy_fwd ;; esac
        printf '%-12s %-8s %3s %3s %3s  %s\n' "$b" "$verdict" "$ba" "$bd" "$ci" "$resp"
        case $verdict in
        valid)
            [ "${ba:-x}" = 0 ] && [ "${bd:-x}" = 0 ]
            nl_check $? "$role $b: a valid message counted as malformed (bad_answered '$ba'," \
                "bad_dropped '$bd')"
            ;;
        invalid)
            [ -n "$ba" ] && [ -n "$bd" ] && [ $((ba + bd)) -eq 1 ]
            nl_check $? "$role $b: an invalid request not answered 400 nor dropped as malformed" \
                "(bad_answered '$ba', bad_dropped '$bd')"
            case ",$resp," in *,[0-9][0-9][0-9],*)
                case ",$resp," in *,400,*) nl_ok ;; *) nl_bad "$role $b: answered $resp, not 400" ;; esac
                ;;
            esac
            ;;
        badresp)
            [ "${ba:-x}" = 0 ]
            nl_check $? "$role $b: a malformed response was answered (bad_answered '$ba')"
            ;;
        proxy_fwd)
            if [ "$role" = edge ]; then
                [ "${ba:-x}" = 0 ] && [ "${bd:-x}" = 0 ]
                nl_check $? "edge $b: a fault in a header a proxy does not use counted as" \
                    "malformed (bad_answered '$ba', bad_dropped '$bd'), not forwarded"
            else
                [ -n "$ba" ] && [ -n "$bd" ] && [ $((ba + bd)) -eq 1 ]
                nl_check $? "$role $b: not answered 400 nor dropped as malformed" \
                    "(bad_answered '$ba', bad_dropped '$bd')"
            fi
            ;;
        esac
    done
    [ "$STANDIN" = 1 ] && nl_stop "p1_$role"
done

# ---- part 2: one node per role takes everything twice, then serves SIPp calls
for role in uas edge; do
    name=p2_$role
    nl_node_start "$name" "$role" 0 "$P_UAS" "" || {
        nl_bad "part 2 $role: node did not start"
        continue
    }
    P=${NL_PORT[$name]}
    $SEND 127.0.0.1 "$P" --wait 0.05 --repeat 2 "${FILES[@]}" >"$NL_TMP/$name.sent"
    kill -0 "$(nl_real_pid "$name")" 2>/dev/null
    nl_check $? "part 2 $role: the node died on the torture messages"
    nl_sipp_uac "uac_$role" "$P" 50 100
    rc=$?
    v=$(nl_stat "uac_$role" 'SuccessfulCall(C)')
    [ "$rc" -eq 0 ] && [ "$v" = 100 ]
    nl_check $? "part 2 $role: SIPp calls after the torture: status $rc, $v of 100 successful"
    kill -0 "$(nl_real_pid "$name")" 2>/dev/null
    nl_check $? "part 2 $role: the node is not running after the calls"
    nl_stop "$name"
    rc=$?
    if [ "$STANDIN" = 1 ]; then
        nl_skip "part 2 $role: stand-in, no counters"
        continue
    fi
    [ "$rc" -eq 0 ]
    nl_check $? "part 2 $role: exit status $rc after SIGTERM"
    ba=$(nl_json "$name" bad_answered)
    bd=$(nl_json "$name" bad_dropped)
    [ -n "$ba" ] && [ -n "$bd" ] && [ $((ba + bd)) -ge $((2 * n_invalid)) ]
    nl_check $? "part 2 $role: bad_answered '$ba' + bad_dropped '$bd' below 2 x $n_invalid"
    echo "part 2 $role: bad_answered $ba bad_dropped $bd calls_in $(nl_json "$name" calls_in)" \
        "calls_ok $(nl_json "$name" calls_ok)"
done

nl_summary
