#!/usr/bin/env bash
# The load generator with several next hops (issue 30): `node.next_hop = A, B` with
# `node.next_hop_weights`, the server of each new INVITE chosen by the element's function
# (osn_elem_hops_choose, src/elem/hops.c), its failover the proxy's (osn_elem_on_client_event_hop).
# All on 127.0.0.1 with ports the processes chose themselves:
#   1. generator -> two osn node uas, weights 3, 1, 200 calls/s for 5 s: every call accounted
#      for (good = started = the two uas's calls answered); uas A's share of the calls within
#      0.75 +- 3.29 sqrt(0.75 * 0.25 / n) (binomial, 99.9 %; the smooth round-robin is exact to a
#      call, so this bound is loose); each uas answered as many BYEs as calls (a call's BYE goes
#      to the server of its INVITE, its dialog's); the generator's per-hop counts (next_hops:
#      invites) equal what each uas received;
#   2. failover on 503 with Retry-After (RFC 3261 21.5.4): next hops a peer (python) that
#      answers every INVITE 503 with Retry-After: 30, and an osn node uas, weights 1, 1, 100
#      calls/s for 3 s: the peer is marked down at its first 503 and gets nothing more (the
#      INVITEs in flight before its 503 came back aside); each INVITE it refused is sent again
#      to the uas (uac.failovers = the peer's INVITEs), and every call ends good;
#   3. failover on a timeout: a peer that answers nothing beside an osn node uas, weights 1, 1,
#      sip.t1 = 0.02 (Timer B 1.28 s), 100 calls/s for 4 s: the peer gets INVITEs only until
#      its first Timer B, then it is down (node.down_time 30 s); each INVITE that timed out is
#      sent again to the uas (uac.failovers = the peer's INVITEs), whose answer comes after the
#      caller's own Timer B: those calls end as timeouts, all the others good.
# About 25 s.   Usage: test_node_genhops.sh OSN ROOT
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
. "$ROOT/tests/node/lib.sh"
nl_init genhops 150
export OSN
SCEN=$ROOT/examples/node_collapse.ini

# gen NAME HOPS WEIGHTS SECONDS RATE [osn node args..]: the generator in the foreground, its files in $NL_TMP/NAME.
gen() {
    local name=$1 hops=$2 weights=$3 secs=$4 rate=$5
    shift 5
    local dir=$NL_TMP/$name
    mkdir -p "$dir"
    NL_DIR[$name]=$dir
    timeout -k 5 $((secs + 80)) "$OSN" node "$SCEN" --set node.element=uac \
        --set node.listen=127.0.0.1:0 --set "node.next_hop=$hops" \
        --set "node.next_hop_weights=$weights" --set "node.duration=$secs" \
        --set "source.rate=$rate" --set source.hold=0.2 --json "$dir/summary.json" -q "$@" \
        >"$dir/node.out" 2>"$dir/node.err" {NL_LOCK_FD}>&-
}

# ---- 1. shares by weight
nl_up "uas a did not start" nl_node_start a uas 0 0 "$SCEN"
nl_up "uas b did not start" nl_node_start b uas 0 0 "$SCEN"
nl_require_up
gen g1 "127.0.0.1:${NL_PORT[a]}, 127.0.0.1:${NL_PORT[b]}" "3, 1" 5 200
rc=$?
nl_check $rc "generator -> a, b: exit status $rc: $(cat "$NL_TMP/g1/node.err")"
nl_stop a >/dev/null
nl_stop b >/dev/null
"$NL_PY" - "$NL_TMP/g1/summary.json" "${NL_DIR[a]}/summary.json" "${NL_DIR[b]}/summary.json" \
    "${NL_PORT[a]}" "${NL_PORT[b]}" <<'PY'
import json, math, sys
g, a, b = (json.load(open(p)) for p in sys.argv[1:4])
u = g["uac"]
bad = []
n = u["calls_started"]
if not (u["good"] == n == a["calls_ok"] + b["calls_ok"]) or u["unfinished"]:
    bad.append(f"good {u['good']}, started {n}, uas a {a['calls_ok']} + b {b['calls_ok']}")
share = a["calls_ok"] / n if n else 0
hw = 3.29 * math.sqrt(0.75 * 0.25 / n) if n else 0
if n < 500 or abs(share - 0.75) > hw:
    bad.append(f"a's share {share:.4f} of {n} calls not within 0.75 +- {hw:.4f}")
for name, x in (("a", a), ("b", b)):
    if x["bye_ok"] != x["calls_ok"]:
        bad.append(f"uas {name}: {x['bye_ok']} BYEs answered for {x['calls_ok']} calls")
hops = {h["server"]: h for h in g.get("next_hops", [])}
for port, x, w in ((sys.argv[4], a, 3), (sys.argv[5], b, 1)):
    h = hops.get("127.0.0.1:" + port)
    if not h or h["invites"] != x["calls_in"] or h["weight"] != w:
        bad.append(f"next hop {port}: generator's {h} against the uas's calls_in {x['calls_in']}")
for m in bad:
    print("FAIL:", m)
print(f"weights 3, 1: a {a['calls_ok']} b {b['calls_ok']} of {n} calls, a's share {share:.4f} "
      f"(0.75 +- {hw:.4f})")
sys.exit(1 if bad else 0)
PY
nl_check $? "shares follow the weights, every call and BYE on its server"

# ---- 2. failover on 503 with Retry-After
PEER_OUT=$NL_TMP/peer.out
timeout 60 "$NL_PY" - >"$PEER_OUT" 2>&1 {NL_LOCK_FD}>&- <<'PY' &
# Answers every INVITE 503 with Retry-After: 30 (and the ACK of the 503 is the generator's
# transaction layer's); counts the INVITEs, printed when it ends.
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True)
s.settimeout(8)
invites = set()
def hdr(msg, name):
    for l in msg.split("\r\n"):
        if l.lower().startswith(name.lower() + ":"):
            return l
    return ""
try:
    while True:
        data, src = s.recvfrom(65535)
        msg = data.decode(errors="replace")
        if not msg.startswith("INVITE "):
            continue
        invites.add(hdr(msg, "Via"))  # its branch: a retransmission is not another INVITE
        keep = [l for l in msg.split("\r\n")[1:]
                if l.split(":")[0].lower() in ("via", "from", "call-id", "cseq")]
        s.sendto(("SIP/2.0 503 Service Unavailable\r\n" + "\r\n".join(keep) + "\r\n" +
                  hdr(msg, "To") + ";tag=peer\r\nRetry-After: 30\r\nContent-Length: 0\r\n\r\n")
                 .encode(), src)
except socket.timeout:
    pass
print("invites", len(invites), flush=True)
PY
PEER=$!
for _ in $(seq 1 50); do
    PP=$(head -1 "$PEER_OUT" 2>/dev/null)
    [ -n "$PP" ] && break
    sleep 0.1
done
nl_up "uas c did not start" nl_node_start c uas 0 0 "$SCEN"
if [ -n "${PP:-}" ] && [ -n "${NL_PORT[c]:-}" ]; then
    gen g2 "127.0.0.1:$PP, 127.0.0.1:${NL_PORT[c]}" "1, 1" 3 100
    rc=$?
    nl_check $rc "generator -> peer, c: exit status $rc: $(cat "$NL_TMP/g2/node.err")"
    wait "$PEER" 2>/dev/null
    nl_stop c >/dev/null
    "$NL_PY" - "$NL_TMP/g2/summary.json" "${NL_DIR[c]}/summary.json" "$PEER_OUT" "$PP" <<'PY'
import json, sys
g, c = (json.load(open(p)) for p in sys.argv[1:3])
u = g["uac"]
peer = int(open(sys.argv[3]).read().split("invites")[1])
hops = {h["server"]: h for h in g.get("next_hops", [])}
p = hops.get("127.0.0.1:" + sys.argv[4], {})
n = u["calls_started"]
bad = []
if not (1 <= peer <= 5):
    bad.append(f"the peer got {peer} INVITEs: marked down at its first 503, it should get 1 "
               "(a few in flight at most)")
if u["failovers"] != peer or p.get("got_503") != peer or p.get("downs") != 1:
    bad.append(f"failovers {u['failovers']}, peer's 503s {p.get('got_503')}, downs "
               f"{p.get('downs')}, the peer's INVITEs {peer}")
if not (u["good"] == n == c["calls_ok"]) or u["failed_rejected"] or u["unfinished"]:
    bad.append(f"good {u['good']} of {n}, uas c {c['calls_ok']}, 503 {u['failed_rejected']}")
for m in bad:
    print("FAIL:", m)
print(f"failover: the peer refused {peer} INVITEs, each sent again to c; {u['good']} of {n} good")
sys.exit(1 if bad else 0)
PY
    nl_check $? "failover after a 503 with Retry-After: the calls go to the other next hop"
else
    nl_bad "the 503 peer or uas c did not start: $(cat "$PEER_OUT")"
fi
kill "$PEER" 2>/dev/null
wait "$PEER" 2>/dev/null

# ---- 3. failover on a timeout (Timer B = 64 T1 = 1.28 s with sip.t1 = 0.02)
SILENT_OUT=$NL_TMP/silent.out
timeout 60 "$NL_PY" - >"$SILENT_OUT" 2>&1 {NL_LOCK_FD}>&- <<'PY' &
# Answers nothing; prints the INVITEs (by branch) and when the first and last new one came.
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True)
s.settimeout(8)
seen, first, last = set(), None, None
try:
    while True:
        data, _ = s.recvfrom(65535)
        msg = data.decode(errors="replace")
        if not msg.startswith("INVITE "):
            continue
        via = next(l for l in msg.split("\r\n") if l.lower().startswith("via:"))
        if via not in seen:
            seen.add(via)
            now = time.monotonic()
            first = first if first is not None else now
            last = now
except socket.timeout:
    pass
print("invites", len(seen), "span", (last - first) if seen else 0, flush=True)
PY
SILENT=$!
for _ in $(seq 1 50); do
    SP=$(head -1 "$SILENT_OUT" 2>/dev/null)
    [ -n "$SP" ] && break
    sleep 0.1
done
nl_up "uas d did not start" nl_node_start d uas 0 0 "$SCEN"
if [ -n "${SP:-}" ] && [ -n "${NL_PORT[d]:-}" ]; then
    gen g3 "127.0.0.1:$SP, 127.0.0.1:${NL_PORT[d]}" "1, 1" 4 100 --set sip.t1=0.02
    rc=$?
    nl_check $rc "generator -> silent, d: exit status $rc: $(cat "$NL_TMP/g3/node.err")"
    wait "$SILENT" 2>/dev/null
    nl_stop d >/dev/null
    "$NL_PY" - "$NL_TMP/g3/summary.json" "${NL_DIR[d]}/summary.json" "$SILENT_OUT" <<'PY'
import json, sys
g, d = (json.load(open(p)) for p in sys.argv[1:3])
u = g["uac"]
words = open(sys.argv[3]).read().split()
silent, span = int(words[words.index("invites") + 1]), float(words[words.index("span") + 1])
n = u["calls_started"]
bad = []
# Until its first Timer B (1.28 s) the silent server is up and gets half the calls; then it is
# down for node.down_time (30 s) and gets none.
if not (silent >= 20 and span <= 1.28 + 0.5):
    bad.append(f"the silent server got {silent} INVITEs over {span:.3f} s: it should get them "
               "only until its first Timer B (1.28 s), then none")
if u["failovers"] != silent or u["failed_timeout"] != silent:
    bad.append(f"failovers {u['failovers']}, failed_timeout {u['failed_timeout']}: each of the "
               f"silent server's {silent} INVITEs goes to d after Timer B, its caller's timeout")
if u["good"] != n - silent or d["calls_ok"] != n or u["unfinished"]:
    bad.append(f"good {u['good']} of {n}, d answered {d['calls_ok']}")
for m in bad:
    print("FAIL:", m)
print(f"timeout failover: the silent server got {silent} INVITEs over {span:.3f} s, each sent "
      f"again to d; {u['good']} of {n} good")
sys.exit(1 if bad else 0)
PY
    nl_check $? "failover after a timeout: the server is down from its first Timer B"
else
    nl_bad "the silent peer or uas d did not start: $(cat "$SILENT_OUT")"
fi
kill "$SILENT" 2>/dev/null
wait "$SILENT" 2>/dev/null
nl_summary
