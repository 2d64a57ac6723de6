#!/usr/bin/env bash
# The long soak of `osn node` (issue 28; make testbed): for each control the node runs as an
# edge, the collapse chain on 127.0.0.1 with OSN's own load generator,
#
#   osn node uac (generator) -> osn node edge -> osn node core (bottleneck) -> osn node uas
#
# at LOAD x the core's capacity (default 20x) for SOAK_SECONDS (default 300), then idle for
# SOAK_IDLE seconds (default 40) after the generator has ended its last call. Control K on both
# proxies (the core's server half, the edge's client half). SCENARIO is
# examples/node_collapse.ini with the core's costs x CORE_SCALE (default 2: capacity 100
# calls/s, so 20x is 2,000 calls/s, as test_node_reliability.sh: a load this shared 2-core
# machine carries beside everything else). Each node also serves its metrics on a port of its own
# choosing; tests/node/soak_sample.py records every SOAK_SAMPLE s (default 5) each node's VmRSS
# and its gauges osn_node_transactions and osn_node_queue ($NL_TMP/K/samples.csv).
#
# Checks, per control:
#   1. RSS flat after the warm-up: over the samples from RSS_WARM s (default 60) to the end of
#      the load, each node's VmRSS grows by at most RSS_TOL_KB (default 32768) + RSS_TOL_PCT %
#      (default 25) of its value at RSS_WARM (not judged, a skip, when the load is shorter than
#      RSS_WARM + 30 s: the state is not stationary before Timer B, 32 s, has run out).
#      Why that much: what the node holds is bounded by what lives at once (the transactions
#      of the last ~32 s, the timer heap, the element's buffer), but its RSS follows the
#      high-water marks of those, in steps: arrays that double (the timer heap is 8 MiB at
#      2,000 calls/s, 16 after its next doubling), malloc keeping what was freed (the node
#      sets M_TRIM_THRESHOLD to 256 MiB). Measured after the first minute: +8.0 MiB (22%) at
#      the edge under loss, +20.4 MiB (58%) under rate, each flat for its last 120 s. A leak
#      grows with the calls instead: one transaction (>= 1 KB) per call is >= 480 MB over
#      240 s at 2,000 calls/s (the 408 leak of issue 28 was 231 MB), one per ten calls 48 MB;
#      and a single leaked transaction fails check 2, which counts them exactly.
#   2. live transactions back to 0: once the generator has ended and no node has a message
#      queued (waited for at most SOAK_DRAIN_MAX s, default 300), SOAK_IDLE s later each node's
#      osn_node_transactions and osn_node_queue are 0, read from the running node (RFC 3261's
#      longest wait after a transaction's last message is 64*T1 = 32 s: Timer J of the last
#      BYE, Timer H of an unACKed final response, Timer L of RFC 6026).
#   3. every call accounted for: the generator ends by itself (exit 0, unfinished 0) and its
#      calls_started = good + failed_timeout + failed_rejected + failed_other + abandoned;
#      the nodes agree with it and with each other: the edge's calls_in (new INVITE server
#      transactions) = the generator's INVITE attempts (calls_started + retries) when the edge
#      dropped and refused nothing (at most them otherwise); good calls <= the edge's calls_ok
#      <= the core's <= the uas's (a 2xx goes up hop by hop unless the transaction above has
#      timed out); and when no node sent a 408 or dropped a message, good = every hop's
#      calls_ok and the uas's bye_ok = the generator's byes_ok.
#   4. no refused-at-cap (refused_at_cap = 0 on every node) under loss and rate, the controls
#      the issue names; the other controls print their counts (without control, at 20x, the
#      edge's transactions may pile up to the cap: the collapse the controls exist to prevent).
#   5. every node alive at the end, exit status 0 on SIGTERM.
#
# Usage: test_node_soak.sh OSN ROOT [CONTROL..]     default: every control `osn node --help`
#                                                   lists for control.kind
#   SOAK_SECONDS (300), SOAK_IDLE (40), SOAK_SAMPLE (5), LOAD (20), CORE_SCALE (2), RSS_WARM
#   (60), RSS_TOL_KB (32768), RSS_TOL_PCT (25), SOAK_NODE_ARGS (extra arguments for the three
#   nodes, split on spaces: e.g. "--set node.max_transactions=2000" to see check 4 fail)
# Prints "N passed, M failed"; exits 1 on a failure. NL_KEEP=1 keeps the samples and summaries.
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
shift 2
SOAK_SECONDS=${SOAK_SECONDS:-300}
SOAK_IDLE=${SOAK_IDLE:-40}
SOAK_SAMPLE=${SOAK_SAMPLE:-5}
SOAK_DRAIN_MAX=${SOAK_DRAIN_MAX:-300}
LOAD=${LOAD:-20}
CORE_SCALE=${CORE_SCALE:-2}
RSS_WARM=${RSS_WARM:-60}
RSS_TOL_KB=${RSS_TOL_KB:-32768}
RSS_TOL_PCT=${RSS_TOL_PCT:-25}
read -r -a EXTRA <<<"${SOAK_NODE_ARGS:-}"
SCEN=$ROOT/examples/node_collapse.ini
for v in SOAK_SECONDS SOAK_IDLE SOAK_SAMPLE SOAK_DRAIN_MAX CORE_SCALE RSS_WARM RSS_TOL_KB RSS_TOL_PCT; do
    case ${!v} in
    '' | *[!0-9]*)
        echo "test_node_soak.sh: $v='${!v}' is not a whole number" >&2
        exit 2
        ;;
    esac
done
if ! "$OSN" node --help >/dev/null 2>&1; then
    echo "test_node_soak.sh: $OSN node --help failed" >&2
    exit 2
fi
# The controls: those given, else every value of [control] kind in the key table (`osn help
# scenario`): the node builds each of them, the server half at the core, the client half at
# the edge (src/node/config.c).
CONTROLS=("$@")
if [ ${#CONTROLS[@]} = 0 ]; then
    read -r -a CONTROLS <<<"$("$OSN" help scenario 2>&1 |
        awk '/^  \[control\]/ { c = 1 } c && $1 == "kind" { print $2; exit }' | tr '|' ' ')"
fi
[ ${#CONTROLS[@]} -gt 0 ] || {
    echo "test_node_soak.sh: no [control] kind in '$OSN help scenario'" >&2
    exit 2
}
# Per control: the load, the generator's drain (< 2 x 32 s), the idle, starts and stops.
PER=$((SOAK_SECONDS + SOAK_DRAIN_MAX + SOAK_IDLE + 150))
. "$ROOT/tests/node/lib.sh"
nl_init soak $((PER * ${#CONTROLS[@]} + 60)) --load
export OSN
NL_NODE_TIME=$PER

# The core's costs scaled, the same for osn sim and the core node (CORE_SETS, CAP).
nl_core_scaled "$SCEN" "$CORE_SCALE"
RATE=$("$NL_PY" -c "print(round($LOAD * $CAP))")
WARM=$RSS_WARM
echo "soak: controls ${CONTROLS[*]}; core capacity $CAP calls/s, ${LOAD}x = $RATE calls/s for" \
    "${SOAK_SECONDS}s, then ${SOAK_IDLE}s idle; RSS flat from ${WARM}s within" \
    "${RSS_TOL_KB} KiB + ${RSS_TOL_PCT}%"

# metrics_port NAME: the metrics port on the node's listening line.
metrics_port() {
    sed -n 's/.* metrics 127\.0\.0\.1:\([0-9]*\).*/\1/p' "${NL_DIR[$1]}/node.out" | head -1
}

# queues_empty PORT..: true when every node's osn_node_queue gauge reads 0.
queues_empty() {
    "$NL_PY" - "$@" <<'PY'
import sys, urllib.request
for port in sys.argv[1:]:
    try:
        with urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port, timeout=5) as r:
            text = r.read().decode()
    except OSError:
        sys.exit(1)
    if not any(l.split() == ["osn_node_queue", "0"] for l in text.splitlines()):
        sys.exit(1)
PY
}

# json_get FILE EXPR: a Python expression over the summary d (a dict), e.g. d["uac"]["good"].
json_get() {
    "$NL_PY" - "$1" "$2" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    print(eval(sys.argv[2], {"d": d}))
except Exception as e:
    print("")
PY
}

soak_one() {
    local k=$1 dir=$NL_TMP/$1 nd args rc mp sampler t_end
    mkdir -p "$dir"
    args=("$SCEN" "${CORE_SETS[@]}" --set "control.kind=$k" --set node.metrics=127.0.0.1:0
        "${EXTRA[@]}")
    NL_UP=1
    nl_up "$k: uas did not start" nl_node_start "uas_$k" uas 0 "" "${args[@]}"
    nl_up "$k: core did not start" nl_node_start "core_$k" core 0 "${NL_PORT[uas_$k]:-}" \
        "${args[@]}"
    nl_up "$k: edge did not start" nl_node_start "edge_$k" edge 0 "${NL_PORT[core_$k]:-}" \
        "${args[@]}"
    if [ "$NL_UP" != 1 ]; then
        for nd in edge core uas; do [ -n "${NL_PID[${nd}_$k]:-}" ] && nl_stop "${nd}_$k"; done
        return
    fi
    local spec=() ports=()
    for nd in edge core uas; do
        mp=$(metrics_port "${nd}_$k")
        spec+=("$nd:$(nl_real_pid "${nd}_$k"):${mp:-0}")
        ports+=("${mp:-0}")
    done
    timeout $((PER + 10)) "$NL_PY" "$ROOT/tests/node/soak_sample.py" "$dir/samples.csv" \
        "$SOAK_SAMPLE" "$dir/stop" "$PER" "${spec[@]}" {NL_LOCK_FD}>&- &
    sampler=$!
    NL_PIDS+=("$sampler")
    # The generator in the foreground: it sends for SOAK_SECONDS, then drains (every call
    # ends: answered and hung up, or failed on Timer B) and writes its summary.
    local t0=$SECONDS
    timeout -k 5 $((SOAK_SECONDS + 120)) "$OSN" node "$SCEN" --set node.element=uac \
        --set node.listen=127.0.0.1:0 --set "node.next_hop=127.0.0.1:${NL_PORT[edge_$k]}" \
        --set "node.duration=$SOAK_SECONDS" --set "source.rate=$RATE" \
        --json "$dir/gen.json" --stats "$dir/gen.csv" -q >"$dir/gen.out" 2>"$dir/gen.err" \
        {NL_LOCK_FD}>&-
    rc=$?
    t_end=$((SECONDS - t0))
    [ "$rc" = 0 ]
    nl_check $? "$k: the generator exited with status $rc: $(tail -3 "$dir/gen.err")"
    # The idle starts when no node has work queued: a control that lets the core's buffer
    # fill (none, and at 20x local, prsm and pi: docs/node.md) leaves up to a buffer's worth of
    # stale messages, whose forwards and answers start transactions after the load has ended.
    local i=0
    while [ $i -lt "$SOAK_DRAIN_MAX" ] && ! queues_empty "${ports[@]}"; do
        sleep 1
        i=$((i + 1))
    done
    queues_empty "${ports[@]}"
    nl_check $? "$k: a node still had messages queued ${SOAK_DRAIN_MAX}s after the load"
    local t_idle=$((SECONDS - t0))
    sleep "$SOAK_IDLE"
    touch "$dir/stop"
    wait "$sampler"
    echo "$k: load ${SOAK_SECONDS}s; the generator ended after ${t_end}s (its drain included)," \
        "the nodes' queues were empty at ${t_idle}s, then ${SOAK_IDLE}s idle"

    # ---- 1. RSS flat after the warm-up; 2. transactions and queue 0 after the idle
    "$NL_PY" - "$dir/samples.csv" "$WARM" "$SOAK_SECONDS" "$RSS_TOL_KB" "$RSS_TOL_PCT" "$k" \
        >"$dir/checks.txt" <<'PY'
import csv, sys
path, warm, load, tol_kb, tol_pct, k = sys.argv[1:7]
warm, load, tol_kb, tol_pct = float(warm), float(load), int(tol_kb), float(tol_pct)
rows = list(csv.DictReader(open(path)))
for node in ("edge", "core", "uas"):
    r = [x for x in rows if x["node"] == node]
    if not r:
        print("FAIL %s: %s: no samples" % (k, node))
        continue
    t = [float(x["t"]) for x in r]
    rss = [int(x["rss_kb"]) for x in r]
    txn = [int(x["transactions"]) for x in r]
    i0 = next((i for i, v in enumerate(t) if v >= warm), None)
    win = [i for i, v in enumerate(t) if warm <= v <= load]
    if load < warm + 30:
        print("skip %s: %s RSS not judged: %g s of load leave no window after the %g s warm-up "
              "(%d KiB at 0 s, %d at the end of the load)" % (k, node, load, warm, rss[0],
              max([rss[i] for i, v in enumerate(t) if v <= load] or [-1])))
    elif i0 is None or not win or min(rss[i] for i in win) < 0:
        print("FAIL %s: %s: no RSS samples in [%g, %g] s" % (k, node, warm, load))
    else:
        base, top = rss[i0], max(rss[i] for i in win)
        limit = base + tol_kb + base * tol_pct / 100
        ok = top <= limit
        print("%s %s: %s RSS %d KiB at 0 s, %d at %g s, at most %d until %g s (limit %d), "
              "%d at the end; transactions at most %d during the load"
              % ("ok" if ok else "FAIL", k, node, rss[0], base, t[i0], top, load, limit,
                 rss[-1], max(txn[i] for i in win)))
    last = r[-1]
    ok = last["transactions"] == "0" and last["queue"] == "0"
    # The first sample after the load from which the count stays 0 (for the record).
    zero = next((t[i] for i in range(len(r)) if t[i] > load and all(v == 0 for v in txn[i:])),
                None)
    print("%s %s: %s live transactions %s, queue %s at the end of the idle (%s s); 0 from %s"
          % ("ok" if ok else "FAIL", k, node, last["transactions"], last["queue"], last["t"],
             "%g s on" % zero if zero is not None else "no sample"))
PY
    while read -r verdict line; do
        echo "$line"
        case $verdict in
        ok) nl_ok ;;
        skip) nl_skip "$line" ;;
        *) nl_bad "$line" ;;
        esac
    done <"$dir/checks.txt"

    # ---- 5. alive, clean exit
    for nd in edge core uas; do
        kill -0 "${NL_PID[${nd}_$k]}" 2>/dev/null
        nl_check $? "$k: $nd is no longer running (crash?)"
        nl_stop "${nd}_$k"
        rc=$?
        [ "$rc" = 0 ]
        nl_check $? "$k: $nd exit status $rc after SIGTERM"
    done

    # ---- 3. every call accounted for; 4. no refused-at-cap
    "$NL_PY" - "$k" "$dir/gen.json" "${NL_DIR[edge_$k]}/summary.json" \
        "${NL_DIR[core_$k]}/summary.json" "${NL_DIR[uas_$k]}/summary.json" >"$dir/calls.txt" <<'PY'
import json, sys
k = sys.argv[1]
try:
    g, e, c, u = (json.load(open(p)) for p in sys.argv[2:6])
except (OSError, ValueError) as err:
    print("FAIL %s: a summary is missing or unreadable: %s" % (k, err))
    sys.exit()
n = g["uac"]
ends = ("good", "failed_timeout", "failed_rejected", "failed_other", "abandoned")
print("info %s: generator: %d calls started, %s; %d retries, %d unfinished, BYEs %d sent %d "
      "answered; lag_max %.3f s, %d INVITEs late by > 1 ms"
      % (k, n["calls_started"], ", ".join("%s %d" % (x, n[x]) for x in ends), n["retries"],
         n["unfinished"], n["byes_sent"], n["byes_ok"], g["lag_max"], g["late_sends"]))
for name, d in (("edge", e), ("core", c), ("uas", u)):
    print("info %s: %s: calls_in %d, calls_ok %d, rejected_503 %d, refused_at_cap %d, "
          "timeouts_408 %d, dropped %d, retrans_sent %d, bye_ok %d, stray %d, "
          "transactions_peak %d, rss_peak_kb %d"
          % (k, name, d["calls_in"], d["calls_ok"], d["rejected_503"], d["refused_at_cap"],
             d["timeouts_408"], d["dropped"], d["retrans_sent"], d["bye_ok"], d["stray"],
             d["transactions_peak"], d["rss_peak_kb"]))
def check(ok, msg):
    print("%s %s: %s" % ("ok" if ok else "FAIL", k, msg))
total = sum(n[x] for x in ends)
check(n["unfinished"] == 0 and n["calls_started"] == total and n["calls_started"] > 0,
      "generator: calls_started %d = %s = %d, unfinished %d"
      % (n["calls_started"], " + ".join(ends), total, n["unfinished"]))
attempts = n["calls_started"] + n["retries"]
if e["dropped"] == 0:
    # refused_at_cap counts copies too: a refused INVITE's retransmissions are refused again,
    # so the edge's new server transactions are at most the attempts, and exactly them when
    # nothing was refused.
    if e["refused_at_cap"] == 0:
        check(e["calls_in"] == attempts, "edge calls_in %d = the generator's INVITE attempts "
              "%d (calls + retries)" % (e["calls_in"], attempts))
    else:
        check(e["calls_in"] <= attempts, "edge calls_in %d <= the generator's attempts %d"
              % (e["calls_in"], attempts))
chain = [n["good"], e["calls_ok"], c["calls_ok"], u["calls_ok"]]
check(chain == sorted(chain), "good %d <= edge calls_ok %d <= core calls_ok %d <= uas "
      "calls_ok %d" % tuple(chain))
calm = all(d["timeouts_408"] == 0 and d["dropped"] == 0 for d in (e, c, u))
if calm:
    check(len(set(chain)) == 1 and u["bye_ok"] == n["byes_ok"],
          "good = every hop's calls_ok (%s), uas bye_ok %d = the generator's byes_ok %d"
          % (", ".join(map(str, chain)), u["bye_ok"], n["byes_ok"]))
cap = [d["refused_at_cap"] for d in (e, c, u)]
if k in ("loss", "rate"):
    check(cap == [0, 0, 0], "refused_at_cap edge %d core %d uas %d" % tuple(cap))
PY
    while read -r verdict line; do
        echo "$line"
        [ "$verdict" = info ] && continue
        [ "$verdict" = ok ]
        nl_check $? "$line"
    done <"$dir/calls.txt"
}

for k in "${CONTROLS[@]}"; do
    soak_one "$k"
done
nl_summary
