#!/usr/bin/env bash
# `osn node`'s own outputs, without a load generator: one call sent by hand (python3) to a uas
# node, its Prometheus endpoint scraped while it runs, then its --stats CSV and --json summary
# read after it stops on its own (node.duration). All on 127.0.0.1, bounded by `timeout`.
#
# Usage: test_node_metrics.sh OSN     Prints "N passed, M failed"; exits 1 on a failure.
set -u
OSN=${1:?usage: test_node_metrics.sh OSN}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/osn_node_metrics.XXXXXX") || exit 1
NODE=
trap '[ -n "$NODE" ] && kill "$NODE" 2>/dev/null; rm -rf "$TMP"' EXIT
passed=0
failed=0
check() { if [ "$1" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $2"; fi; }

# Ports 0: the node binds what the kernel gives and says which on its listening line (stdout),
# read here with a bounded wait; no port is guessed.
timeout 30 "$OSN" node --set node.element=uas --set node.listen=127.0.0.1:0 \
    --set node.metrics=127.0.0.1:0 --set node.duration=4 --set node.stats_interval=0.5 \
    --stats "$TMP/stats.csv" --json "$TMP/out.json" -q >"$TMP/out" 2>"$TMP/err" &
NODE=$!
SIP=
MET=
for _ in $(seq 100); do
    read -r SIP MET < <(sed -n 's/^osn node uas listening on 127\.0\.0\.1:\([0-9]*\) (udp), metrics 127\.0\.0\.1:\([0-9]*\)$/\1 \2/p' "$TMP/out" 2>/dev/null)
    [ -n "$SIP" ] && break
    kill -0 "$NODE" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$SIP" ] || [ -z "$MET" ]; then
    echo "FAIL: no listening line from the node; stdout: $(cat "$TMP/out"); stderr: $(cat "$TMP/err")"
    exit 1
fi

python3 - "$SIP" "$MET" >"$TMP/call.log" 2>&1 <<'PY'
import socket, sys, time, urllib.request
sip, met = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
s.settimeout(2)
me = s.getsockname()[1]
def req(method, branch, cseq, to_tag=""):
    return (f"{method} sip:bob@127.0.0.1:{sip} SIP/2.0\r\n"
            f"Via: SIP/2.0/UDP 127.0.0.1:{me};branch=z9hG4bK{branch}\r\nMax-Forwards: 70\r\n"
            f"From: <sip:alice@127.0.0.1>;tag=a1\r\nTo: <sip:bob@127.0.0.1>{to_tag}\r\n"
            f"Call-ID: metrics-test@127.0.0.1\r\nCSeq: {cseq} {method}\r\n"
            f"Content-Length: 0\r\n\r\n").encode()
def status():
    return s.recv(65535).decode(errors="replace")
s.sendto(req("INVITE", "inv1", 1), ("127.0.0.1", sip))
got = [status().split("\r\n")[0] for _ in range(2)]
print("INVITE:", got)
s.sendto(req("ACK", "ack1", 1), ("127.0.0.1", sip))
s.sendto(req("BYE", "bye1", 2), ("127.0.0.1", sip))
print("BYE:", status().split("\r\n")[0])
text = urllib.request.urlopen(f"http://127.0.0.1:{met}/metrics", timeout=2).read().decode()
vals = {l.split()[0]: float(l.split()[1]) for l in text.splitlines() if l and not l.startswith("#")}
print("metrics:", {k: vals.get(k) for k in ("osn_node_calls_in_total", "osn_node_bye_in_total",
                                             "osn_node_calls_ok_total", "osn_node_transactions")})
assert got == ["SIP/2.0 180 Ringing", "SIP/2.0 200 OK"], got
assert vals["osn_node_calls_in_total"] == 1 and vals["osn_node_bye_in_total"] == 1, vals
assert vals["osn_node_calls_ok_total"] == 1 and "osn_node_transactions" in vals, vals
PY
check $? "one call and a scrape: $(tail -3 "$TMP/call.log")"
wait "$NODE"
check $? "the node did not stop cleanly at node.duration: $(cat "$TMP/err")"
NODE=
python3 - "$TMP/out.json" "$TMP/stats.csv" "$SIP" "$MET" <<'PY'
import csv, json, sys
d = json.load(open(sys.argv[1]))
# the addresses bound, as on the listening line; scenario_resolved keeps the port 0 asked for
assert d["listen"] == "127.0.0.1:" + sys.argv[3] and d["metrics"] == "127.0.0.1:" + sys.argv[4], d
assert d["scenario_resolved"]["node"]["listen"] == "127.0.0.1:0", d["scenario_resolved"]
assert d["element"] == "uas" and d["calls_in"] == 1 and d["calls_ok"] == 1, d
assert d["bye_in"] == 1 and d["bye_ok"] == 1 and d["bad_dropped"] == 0, d
rows = list(csv.DictReader(open(sys.argv[2])))
assert list(rows[0]) == ["t", "calls_in", "calls_forwarded", "calls_ok", "rejected_503",
                         "dropped", "retrans_absorbed", "queue", "mode"], list(rows[0])
assert len(rows) >= 4 and int(rows[-1]["calls_in"]) == 1, rows[-1]
assert all(float(a["t"]) < float(b["t"]) for a, b in zip(rows, rows[1:]))
PY
check $? "--json summary or --stats CSV"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
