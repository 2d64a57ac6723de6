#!/usr/bin/env bash
# `osn node` on port 0 (issue 35): the node binds a port the kernel chooses and says which on
# its listening line, so that a script never guesses a free port. Checked on the wire, without
# a load generator (python3 sends and receives by hand), all on 127.0.0.1, bounded by `timeout`:
#   - a uas on node.listen=127.0.0.1:0 prints a non-zero port and answers OPTIONS and INVITE
#     sent to that port; its --json summary's listen is that address;
#   - an edge on port 0 forwards an INVITE to its next hop with its top Via sent-by carrying the
#     bound port (not 0) and relays the answer back;
#   - the line is printed with -q, on stdout, or on stderr when --json - takes stdout;
#   - next_hop on port 0 is refused (exit 2, naming node.next_hop).
#
# Usage: test_node_port0.sh OSN     Prints "N passed, M failed"; exits 1 on a failure.
set -u
OSN=${1:?usage: test_node_port0.sh OSN}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/osn_node_port0.XXXXXX") || exit 1
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$TMP"' EXIT
passed=0
failed=0
check() { if [ "$1" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $2"; fi; }

# listening PID FILE ELEMENT: the port on the node's listening line in FILE (bounded wait), "" if
# the node exits first or prints none within 10 s.
listening() {
    local p
    for _ in $(seq 100); do
        p=$(sed -n "s/^osn node $3 listening on 127\\.0\\.0\\.1:\\([0-9]*\\) (udp).*/\\1/p" "$2" 2>/dev/null)
        [ -n "$p" ] && break
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    echo "$p"
}

# ---- a uas on port 0
timeout 30 "$OSN" node --set node.element=uas --set node.listen=127.0.0.1:0 \
    --set node.duration=3 --json "$TMP/uas.json" -q >"$TMP/uas.out" 2>"$TMP/uas.err" &
UAS=$!
PIDS+=("$UAS")
P=$(listening "$UAS" "$TMP/uas.out" uas)
[ -n "$P" ] && [ "$P" -gt 0 ]
check $? "uas: no listening line with a port > 0: '$(cat "$TMP/uas.out")' $(cat "$TMP/uas.err")"
grep -qx "osn node uas listening on 127.0.0.1:$P (udp)" "$TMP/uas.out"
check $? "uas: the listening line is not as documented: '$(cat "$TMP/uas.out")'"

python3 - "${P:-0}" >"$TMP/uas.log" 2>&1 <<'PY'
import socket, sys
port = int(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
s.settimeout(2)
me = s.getsockname()[1]
def req(method, branch, cseq):
    return (f"{method} sip:bob@127.0.0.1:{port} SIP/2.0\r\n"
            f"Via: SIP/2.0/UDP 127.0.0.1:{me};branch=z9hG4bK{branch}\r\nMax-Forwards: 70\r\n"
            f"From: <sip:alice@127.0.0.1>;tag=a1\r\nTo: <sip:bob@127.0.0.1>\r\n"
            f"Call-ID: port0-{method}@127.0.0.1\r\nCSeq: {cseq} {method}\r\n"
            f"Content-Length: 0\r\n\r\n").encode()
s.sendto(req("OPTIONS", "opt1", 1), ("127.0.0.1", port))
opt = s.recv(65535).decode(errors="replace").split("\r\n")[0]
s.sendto(req("INVITE", "inv1", 1), ("127.0.0.1", port))
inv = [s.recv(65535).decode(errors="replace").split("\r\n")[0] for _ in range(2)]
print("OPTIONS:", opt, "INVITE:", inv)
assert opt == "SIP/2.0 200 OK", opt
assert inv == ["SIP/2.0 180 Ringing", "SIP/2.0 200 OK"], inv
PY
check $? "uas on its bound port: $(tail -3 "$TMP/uas.log")"
wait "$UAS"
rc=$?
check $rc "uas: exit status $rc at node.duration: $(cat "$TMP/uas.err")"
python3 - "$TMP/uas.json" "${P:-0}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["listen"] == "127.0.0.1:" + sys.argv[2] and d["metrics"] is None, (d["listen"], d["metrics"])
assert d["calls_in"] == 1 and d["calls_ok"] == 1, d
PY
check $? "uas: --json listen is not the bound address, or the call is not counted"

# ---- an edge on port 0: its Via carries the bound port. Python is its next hop (a socket bound
# to port 0 first, so its port is known before the edge starts) and its caller.
timeout 20 python3 -u -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
s.settimeout(10)
print(s.getsockname()[1], flush=True)
data, addr = s.recvfrom(65535)
msg = data.decode(errors="replace")
vias = [l for l in msg.split("\r\n") if l.lower().startswith("via:")]
print("TOPVIA", vias[0] if vias else "-", addr[1], flush=True)
# answer 200 OK to the edge, Via stack as received
head = [l for l in msg.split("\r\n") if l.split(":")[0].lower() in ("via", "from", "to", "call-id", "cseq")]
head = [l + ";tag=b1" if l.lower().startswith("to:") else l for l in head]
s.sendto(("SIP/2.0 200 OK\r\n" + "\r\n".join(head) + "\r\nContent-Length: 0\r\n\r\n").encode(), addr)
' >"$TMP/hop.out" 2>&1 &
HOP=$!
PIDS+=("$HOP")
HOPPORT=
for _ in $(seq 100); do
    HOPPORT=$(head -1 "$TMP/hop.out")
    [ -n "$HOPPORT" ] && break
    sleep 0.1
done
timeout 30 "$OSN" node --set node.element=edge --set node.listen=127.0.0.1:0 \
    --set "node.next_hop=127.0.0.1:$HOPPORT" --set node.duration=3 --json - -q \
    >"$TMP/edge.json" 2>"$TMP/edge.err" &
EDGE=$!
PIDS+=("$EDGE")
E=$(listening "$EDGE" "$TMP/edge.err" edge)
grep -qx "osn node edge listening on 127.0.0.1:$E (udp), next hop 127.0.0.1:$HOPPORT" "$TMP/edge.err"
check $? "edge with --json -: no listening line on stderr: '$(cat "$TMP/edge.err")'"
python3 - "${E:-0}" >"$TMP/edge.log" 2>&1 <<'PY'
import socket, sys
port = int(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
s.settimeout(3)
me = s.getsockname()[1]
s.sendto((f"INVITE sip:bob@127.0.0.1 SIP/2.0\r\n"
          f"Via: SIP/2.0/UDP 127.0.0.1:{me};branch=z9hG4bKe1\r\nMax-Forwards: 70\r\n"
          f"From: <sip:alice@127.0.0.1>;tag=a1\r\nTo: <sip:bob@127.0.0.1>\r\n"
          f"Call-ID: port0-edge@127.0.0.1\r\nCSeq: 1 INVITE\r\n"
          f"Content-Length: 0\r\n\r\n").encode(), ("127.0.0.1", port))
got = []
while "SIP/2.0 200 OK" not in got:
    got.append(s.recv(65535).decode(errors="replace").split("\r\n")[0])
print("at the caller:", got)
PY
check $? "edge: the INVITE was not relayed and answered: $(tail -2 "$TMP/edge.log")"
wait "$HOP" 2>/dev/null # the hop ends once it has answered
TOPVIA=$(sed -n 's/^TOPVIA \(.*\) [0-9]*$/\1/p' "$TMP/hop.out")
FROM=$(sed -n 's/^TOPVIA .* \([0-9]*\)$/\1/p' "$TMP/hop.out")
case "$TOPVIA" in
*"SIP/2.0/UDP 127.0.0.1:$E;"*) [ "$FROM" = "$E" ] ;;
*) false ;;
esac
check $? "edge: forwarded with top Via '$TOPVIA' from port '$FROM', expected sent-by 127.0.0.1:$E"
wait "$EDGE"
rc=$?
check $rc "edge: exit status $rc at node.duration: $(cat "$TMP/edge.err")"
python3 - "$TMP/edge.json" "${E:-0}" "$HOPPORT" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))  # stdout held only the JSON: the line went to stderr
assert d["listen"] == "127.0.0.1:" + sys.argv[2], d["listen"]
assert d["next_hop"] == "127.0.0.1:" + sys.argv[3] and d["calls_ok"] == 1, d
PY
check $? "edge: --json - is not the bare JSON with the bound listen address"

# ---- progress when standard error is not a terminal: one line per interval, named
timeout 10 "$OSN" node --set node.element=core --set node.listen=127.0.0.1:0 \
    --set node.next_hop=127.0.0.1:9 --set node.duration=2.5 >/dev/null 2>"$TMP/progress.err"
n=$(grep -c '^osn node core: *[12]\.0 s  calls in 0 ' "$TMP/progress.err")
[ "$n" = 2 ] && ! grep -q $'\r' "$TMP/progress.err"
check $? "progress: $n lines 'osn node core: ...' (want 2, no carriage return): $(head -3 "$TMP/progress.err")"

# ---- next_hop on port 0: refused
timeout 10 "$OSN" node --set node.element=edge --set node.listen=127.0.0.1:0 \
    --set node.next_hop=127.0.0.1:0 >"$TMP/nh.out" 2>"$TMP/nh.err"
rc=$?
[ "$rc" = 2 ] && grep -q "node.next_hop" "$TMP/nh.err" && [ ! -s "$TMP/nh.out" ]
check $? "next_hop port 0: exit $rc, expected 2 naming node.next_hop: $(cat "$TMP/nh.err")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
