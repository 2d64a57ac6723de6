#!/usr/bin/env bash
# `osn node` with `[node] workers = 2` (issue 34; src/node/workers.c says how each message finds
# its worker). All on 127.0.0.1, ports chosen by the kernel, every process under `timeout`:
#
#   SIPp uac (-t un: a socket per call) -> osn node edge (2 workers) -> osn node uas (2 workers)
#
#   1. Every call accounted for: SIPp's SuccessfulCall equals the calls made, none failed; the
#      edge's and the uas's summed calls_in and calls_ok, and the uas's bye_ok, equal them too.
#   2. The kernel spread the calls over both edge workers (each took at least 20%), and every
#      response from the uas found the worker that holds its client transaction: no stray
#      message in any worker (a response that reached the other worker would be one, and its
#      call would time out).
#   3. The sums: each counter of the JSON summary is the sum of the workers' (its `workers`
#      array); the metrics endpoint, scraped once the calls are done, shows the same totals;
#      the last --stats row's calls_in too.
#   0. Bad values of node.workers (65, -1, x; 2 for the load generator) exit 2 naming the key.
#   4. Retransmissions are absorbed by the worker that owns the transaction: tests/node/dup.py
#      sends 24 INVITEs, each from a socket of its own and each twice with the same branch; the
#      edge starts 24 transactions (not 48), absorbs 24 copies, each worker as many as it
#      started, and the uas gets 24 INVITEs. The same with each copy sent from another socket
#      than its original (a peer no UA we know behaves like): the kernel puts about half the
#      copies on the other worker, which does not know the transaction and forwards it again;
#      the check must see those duplicates (that the check can fail, and the limit the
#      design's head comment states).
#   5. TCP with workers (docs/node.md, "TCP and workers"): SIPp -t t1 (one connection) and then
#      -t tn (a connection per call), TCP_CALLS calls each, through an edge and a core of 2
#      workers each to a uas of 2 workers, every leg over TCP. Every call accounted for (SIPp's
#      SuccessfulCall, each node's summed calls_in and calls_ok, the uas's bye_ok), no stray
#      message in any worker (a response on another worker's connection would be one), no
#      datagram, both edge workers took connections and calls (tn spreads them), every counter
#      of each JSON the sum of its workers', the edge's metrics giving the same tcp totals, and
#      every node 0 transactions (osn_node_transactions) once the timers have run (T1 0.2 s:
#      the Accepted wait, 64*T1, is 12.8 s).
#
# Usage: test_node_workers.sh OSN ROOT [CALLS]   Prints "N passed, M failed"; exit 1 on a failure.
set -u
OSN=${1:?usage: test_node_workers.sh OSN ROOT [CALLS]}
ROOT=${2:?usage: test_node_workers.sh OSN ROOT [CALLS]}
CALLS=${3:-1000}
RATE=${WORKERS_RATE:-200}
. "$ROOT/tests/node/lib.sh"
nl_init node_workers 300 --load

# ---- bad values: exit 2, naming the key, before anything is bound
for bad in "node.workers=65" "node.workers=-1" "node.workers=x"; do
    timeout 10 "$OSN" node --set node.listen=127.0.0.1:0 --set "$bad" -q >/dev/null 2>"$NL_TMP/e"
    rc=$?
    [ "$rc" = 2 ] && grep -q "node.workers" "$NL_TMP/e"
    nl_check $? "--set $bad: exit $rc, $(cat "$NL_TMP/e")"
done
timeout 10 "$OSN" node --set node.element=uac --set node.listen=127.0.0.1:0 \
    --set node.next_hop=127.0.0.1:9 --set node.duration=1 --set node.workers=2 -q \
    >/dev/null 2>"$NL_TMP/e"
rc=$?
[ "$rc" = 2 ] && grep -q "node.workers.*one loop" "$NL_TMP/e"
nl_check $? "uac with workers 2: exit $rc, $(cat "$NL_TMP/e")"

zero=()
for k in invite retrans response ack bye reject cancel; do
    zero+=(--set "server edge.cost_$k=0" --set "server uas.cost_$k=0")
done
NL_UP=1
nl_up "uas did not start" nl_node_start uas uas 0 "" "" "${zero[@]}" --set node.workers=2
nl_up "edge did not start" nl_node_start edge edge 0 "${NL_PORT[uas]:-0}" "" "${zero[@]}" \
    --set node.workers=2 --set node.metrics=127.0.0.1:0 --set node.stats_interval=0.5
nl_require_up
EDGE=${NL_PORT[edge]}
MET=$(sed -n 's/.*, metrics 127\.0\.0\.1:\([0-9]*\).*/\1/p' "${NL_DIR[edge]}/node.out" | head -1)
grep -q ", workers 2$" "${NL_DIR[edge]}/node.out"
nl_check $? "edge: the listening line does not say 'workers 2': $(cat "${NL_DIR[edge]}/node.out")"

# ---- 1, 2: calls through the two workers
nl_log "SIPp: $CALLS calls at $RATE/s through edge :$EDGE (2 workers) to uas :${NL_PORT[uas]}"
NL_UAC_TIME=$((CALLS / RATE + 40)) nl_sipp_uac uac "$EDGE" "$RATE" "$CALLS" -t un -max_socket 1000 -l 400
rc=$?
[ "$rc" -eq 0 ]
nl_check $? "SIPp exited $rc (some call failed): $(tail -3 "${NL_DIR[uac]}/sipp.log")"
ok=$(nl_stat uac 'SuccessfulCall(C)')
bad=$(nl_stat uac 'FailedCall(C)')
[ "$ok" = "$CALLS" ] && [ "$bad" = 0 ]
nl_check $? "SIPp: $ok successful, $bad failed of $CALLS"

sleep 1.2 # a stats row after the last call (stats_interval 0.5 s)
"$NL_PY" - "$MET" >"$NL_TMP/scrape.txt" 2>&1 <<'PY'
import sys, urllib.request
print(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=5).read().decode())
PY
nl_check $? "edge: scrape of :$MET failed: $(tail -2 "$NL_TMP/scrape.txt")"

# ---- 4: copies of one INVITE, from its own socket and then from another
"$NL_PY" "$ROOT/tests/node/dup.py" "$EDGE" 24 same >"$NL_TMP/dup.txt" 2>&1
nl_check $? "dup.py (same socket) failed: $(tail -3 "$NL_TMP/dup.txt")"
sleep 1.2 # a stats row after the copies
for p in uas edge; do
    nl_stop $p
    rc=$?
    [ "$rc" -eq 0 ]
    nl_check $? "$p exited $rc on SIGTERM: $(tail -5 "${NL_DIR[$p]}/node.err")"
done
E=${NL_DIR[edge]}/summary.json
U=${NL_DIR[uas]}/summary.json

"$NL_PY" - "$E" "$U" "$CALLS" "$NL_TMP/scrape.txt" "${NL_DIR[edge]}/stats.csv" <<'PY'
import csv, json, sys
e, u = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
calls = int(sys.argv[3])
dup = 24
bad = 0
def check(ok, what):
    global bad
    print(("ok   " if ok else "FAIL ") + what)
    bad += not ok
# 1: the calls, on both nodes (the 24 copies' originals came through the edge too)
check(e["calls_in"] == calls + dup and e["calls_ok"] == calls + dup,
      f"edge calls_in {e['calls_in']}, calls_ok {e['calls_ok']} == {calls} + {dup}")
check(u["calls_in"] == calls + dup and u["calls_ok"] == calls + dup and u["bye_ok"] == calls,
      f"uas calls_in {u['calls_in']}, calls_ok {u['calls_ok']} == {calls} + {dup}, "
      f"bye_ok {u['bye_ok']} == {calls}")
# 2: both workers, no stray response
for name, d in (("edge", e), ("uas", u)):
    ws = d.get("workers", [])
    check(len(ws) == 2, f"{name}: {len(ws)} workers in the JSON")
    if len(ws) != 2:
        continue
    if name == "edge":
        share = [w["calls_in"] / max(1, d["calls_in"]) for w in ws]
        check(min(share) >= 0.2, f"edge: calls_in by worker {[w['calls_in'] for w in ws]}")
    check(all(w["stray"] == 0 for w in ws), f"{name}: stray by worker {[w['stray'] for w in ws]}")
    # 3: the sums
    diff = [k for k in ws[0] if sum(w[k] for w in ws) != d[k]]
    check(not diff, f"{name}: every counter the sum of the workers' ({len(ws[0])} counters)"
          + (f"; differ: {diff}" if diff else ""))
# 4: copies absorbed where their transaction is
ws = e["workers"]
check(e["retrans_absorbed"] == dup, f"edge retrans_absorbed {e['retrans_absorbed']} == {dup}")
check(u["invites_in"] == calls + dup, f"uas invites_in {u['invites_in']} == {calls} + {dup}")
# SIPp's calls bring no copies at this rate: each worker absorbed the copies of its own calls
check(sum(w["retrans_absorbed"] for w in ws) == dup,
      f"edge retrans_absorbed by worker {[w['retrans_absorbed'] for w in ws]}")
# 3: the scrape (once the calls were done, before the copies) and the last stats row
vals = {}
for line in open(sys.argv[4]):
    if line.startswith("osn_node_") and " " in line:
        k, v = line.rsplit(" ", 1)
        vals[k] = float(v)
for k in ("calls_in", "calls_forwarded", "calls_ok", "bye_in", "bye_ok", "stray"):
    want = e[k] - (dup if k in ("calls_in", "calls_forwarded", "calls_ok") else 0)
    check(vals.get(f"osn_node_{k}_total") == want,
          f"metrics osn_node_{k}_total {vals.get(f'osn_node_{k}_total')} == {want}")
rows = list(csv.DictReader(open(sys.argv[5])))
check(rows and int(rows[-1]["calls_in"]) == e["calls_in"],
      f"last stats row calls_in {rows[-1]['calls_in'] if rows else None} == {e['calls_in']}")
sys.exit(1 if bad else 0)
PY
nl_check $? "edge/uas counts (above)"

# ---- 4, the other half: copies from another socket reach the other worker about half the time
NL_UP=1
nl_up "uas2 did not start" nl_node_start uas2 uas 0 "" "" "${zero[@]}" --set node.workers=2
nl_up "edge2 did not start" nl_node_start edge2 edge 0 "${NL_PORT[uas2]:-0}" "" "${zero[@]}" \
    --set node.workers=2
nl_require_up
"$NL_PY" "$ROOT/tests/node/dup.py" "${NL_PORT[edge2]}" 24 other >"$NL_TMP/dup2.txt" 2>&1
nl_check $? "dup.py (other socket) failed: $(tail -3 "$NL_TMP/dup2.txt")"
nl_stop uas2
nl_stop edge2
n=$(nl_json edge2 calls_in)
a=$(nl_json edge2 retrans_absorbed)
[ "${n:-0}" -gt 24 ] && [ "$((n + a))" -eq 48 ]
nl_check $? "copies from another socket: edge calls_in $n (expected > 24: some copies reached the" \
    "worker that does not own their transaction), absorbed $a (calls_in + absorbed = 48)"
nl_log "copies from another socket: $n transactions started for 24 INVITEs, $a copies absorbed"

# ---- 5: TCP with workers: SIPp -> edge -> core -> uas, 2 workers each, every leg over TCP
TCP_CALLS=${WORKERS_TCP_CALLS:-200}
TCP_RATE=${WORKERS_TCP_RATE:-50}
tcp=(--set node.workers=2 --set node.metrics=127.0.0.1:0 --set "node.listen=127.0.0.1:0;transport=tcp"
    --set sip.t1=0.2 --set sip.t2=0.8 --set sip.t4=1)
for k in invite retrans response ack bye reject cancel; do
    zero+=(--set "server core.cost_$k=0")
done
NL_UP=1
nl_up "tcp: uas did not start" nl_node_start tuas uas 0 "" "" "${zero[@]}" "${tcp[@]}"
nl_up "tcp: core did not start" nl_node_start tcore core 0 "${NL_PORT[tuas]:-0}" "" "${zero[@]}" \
    "${tcp[@]}" --set "node.next_hop=127.0.0.1:${NL_PORT[tuas]:-0};transport=tcp"
nl_up "tcp: edge did not start" nl_node_start tedge edge 0 "${NL_PORT[tcore]:-0}" "" "${zero[@]}" \
    "${tcp[@]}" --set "node.next_hop=127.0.0.1:${NL_PORT[tcore]:-0};transport=tcp"
nl_require_up
grep -q "tcp 127.0.0.1:${NL_PORT[tedge]}, .*, workers 2$" "${NL_DIR[tedge]}/node.out"
nl_check $? "tcp: the edge's listening line: $(cat "${NL_DIR[tedge]}/node.out")"
for mode in t1 tn; do
    NL_UAC_TIME=$((TCP_CALLS / TCP_RATE + 40)) nl_sipp_uac "tcp_$mode" "${NL_PORT[tedge]}" \
        "$TCP_RATE" "$TCP_CALLS" -t "$mode" -max_socket 1000
    rc=$?
    ok=$(nl_stat "tcp_$mode" 'SuccessfulCall(C)')
    bad=$(nl_stat "tcp_$mode" 'FailedCall(C)')
    [ "$rc" -eq 0 ] && [ "$ok" = "$TCP_CALLS" ] && [ "$bad" = 0 ]
    nl_check $? "tcp $mode: SIPp exit $rc, $ok successful, $bad failed of $TCP_CALLS"
    nl_log "tcp $mode: SIPp $ok of $TCP_CALLS calls, INVITE->200 (n p50 p99 max ms):" \
        "$(nl_rtt_stats "tcp_$mode")"
done
# Every node idle: no transaction left once the Accepted waits (12.8 s) are over.
end=$((SECONDS + 40))
while [ $SECONDS -lt $end ]; do
    left=0
    for p in tedge tcore tuas; do
        [ "$(nl_metric "$p" osn_node_transactions)" = 0 ] || left=1
    done
    [ $left = 0 ] && break
    sleep 0.5
done
for p in tedge tcore tuas; do
    v=$(nl_metric "$p" osn_node_transactions)
    [ "$v" = 0 ]
    nl_check $? "tcp: $p osn_node_transactions = '$v' after the idle, expected 0"
done
MET=$(sed -n 's/.*, metrics 127\.0\.0\.1:\([0-9]*\).*/\1/p' "${NL_DIR[tedge]}/node.out" | head -1)
"$NL_PY" - "$MET" >"$NL_TMP/tscrape.txt" 2>&1 <<'PY'
import sys, urllib.request
print(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=5).read().decode())
PY
nl_check $? "tcp: scrape of the edge failed: $(tail -2 "$NL_TMP/tscrape.txt")"
for p in tedge tcore tuas; do
    nl_stop $p
    rc=$?
    [ "$rc" -eq 0 ]
    nl_check $? "tcp: $p exited $rc on SIGTERM: $(tail -5 "${NL_DIR[$p]}/node.err")"
done
"$NL_PY" - "$((2 * TCP_CALLS))" "$TCP_CALLS" "$NL_TMP/tscrape.txt" "${NL_DIR[tedge]}/summary.json" \
    "${NL_DIR[tcore]}/summary.json" "${NL_DIR[tuas]}/summary.json" <<'PY'
import json, sys
calls, tn = int(sys.argv[1]), int(sys.argv[2])
nodes = {n: json.load(open(f)) for n, f in zip(("edge", "core", "uas"), sys.argv[4:7])}
bad = 0
def check(ok, what):
    global bad
    print(("ok   " if ok else "FAIL ") + what)
    bad += not ok
for name, d in nodes.items():
    ws = d.get("workers", [])
    check(len(ws) == 2, f"tcp {name}: {len(ws)} workers in the JSON")
    check(d["calls_in"] == calls and d["calls_ok"] == calls,
          f"tcp {name}: calls_in {d['calls_in']}, calls_ok {d['calls_ok']} == {calls}")
    check(d["datagrams_in"] == 0 and d["stray"] == 0 and d["tcp_send_errors"] == 0 and
          d["transport_500"] == 0,
          f"tcp {name}: datagrams_in {d['datagrams_in']}, stray {d['stray']} (by worker "
          f"{[w['stray'] for w in ws]}), tcp_send_errors {d['tcp_send_errors']}, transport_500 "
          f"{d['transport_500']}: all 0")
    diff = [k for k in (ws[0] if ws else {}) if sum(w[k] for w in ws) != d[k]]
    check(ws and not diff, f"tcp {name}: every counter the sum of the workers'"
          + (f"; differ: {diff}" if diff else ""))
    print(f"     {name}: calls_in by worker {[w['calls_in'] for w in ws]}, tcp_accepted "
          f"{[w['tcp_accepted'] for w in ws]}, tcp_connects {[w['tcp_connects'] for w in ws]}, "
          f"tcp_msgs_in {d['tcp_msgs_in']}")
u, e, c = nodes["uas"], nodes["edge"], nodes["core"]
check(u["bye_ok"] == calls, f"tcp uas: bye_ok {u['bye_ok']} == {calls}")
check(e["retrans_sent"] == 0 and c["retrans_sent"] == 0,
      f"tcp: retrans_sent edge {e['retrans_sent']}, core {c['retrans_sent']} (no Timer A/E over TCP)")
# t1's one connection, and tn's one per call, spread over the edge's workers by the kernel
ws = e["workers"]
check(e["tcp_accepted"] >= tn + 1 and all(w["tcp_accepted"] > 0 and w["calls_in"] > 0 for w in ws),
      f"tcp edge: tcp_accepted {e['tcp_accepted']} >= {tn + 1}, by worker "
      f"{[w['tcp_accepted'] for w in ws]}, calls_in {[w['calls_in'] for w in ws]}: each > 0")
# each edge worker with calls opened its own connection to the core
check(all(w["tcp_connects"] == 1 for w in ws) and c["tcp_accepted"] == 2,
      f"tcp: edge tcp_connects by worker {[w['tcp_connects'] for w in ws]} (1 each), core "
      f"tcp_accepted {c['tcp_accepted']} (2)")
vals = {}
for line in open(sys.argv[3]):
    if line.startswith("osn_node_") and " " in line:
        k, v = line.rsplit(" ", 1)
        vals[k] = float(v)
for k in ("calls_in", "calls_ok", "tcp_msgs_in", "tcp_msgs_out", "tcp_accepted", "tcp_connects"):
    check(vals.get(f"osn_node_{k}_total") == e[k],
          f"tcp edge metrics osn_node_{k}_total {vals.get(f'osn_node_{k}_total')} == JSON {e[k]}")
sys.exit(1 if bad else 0)
PY
nl_check $? "tcp: edge/core/uas counts (above)"
nl_summary
