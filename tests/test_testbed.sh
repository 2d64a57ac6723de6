#!/usr/bin/env bash
# `osn testbed` (issue 30): the collapse network of examples/node_collapse.ini for real, one
# `osn node` process per element on 127.0.0.1, beside `osn sim`:
#   0. bad input exits 2 naming the flag (--loads, --controls, --duration, --warmup, an unknown
#      option, --plot without gnuplot), and a node that cannot start is an error naming the
#      element, with no process left behind;
#   1. one load (1x the core's capacity) under loss control, 3 s warm-up and a 10 s window:
#      - the rate is 1 x the capacity in closed form, 1 / (cost_invite + cost_ack + cost_bye +
#        3 cost_response) = 1 / 0.005 = 200 calls/s;
#      - every element's summary was collected (4 of 4), each node ended with exit 0;
#      - every call is accounted for: the generator's good calls = the uas's calls answered;
#      - real goodput within 10% of the simulator's (the issue's target), and it is the
#        generator's own goodput over its window [3, 13] s (node.warmup); the row's failed,
#        abandoned and retried rates are the generator's windowed ones, beside the simulator's;
#      - the CSV and the JSON carry the same row; the pids of the progress line are the JSON's;
#      - no process the testbed started is left (each pid checked with kill -0);
#   2. SIGTERM to a running testbed: it stops every node it started (by pid), exits 2, and
#      removes its temporary directory;
#   3. the other topologies' wiring, short runs at 0.3x: tandem (uac -> edge -> mid -> core ->
#      uas) and fanin with 2 edges (uacI -> edgeI -> core -> uas): each node's own summary says
#      it sent to the address its downstream element reported, and every summary was collected;
#      in the tandem (trunk 10 ms, access and uas links 5 ms by default) each node was given the
#      delays of its own links, down and up, as the simulator takes them (src/sim/net_run.c).
# About 25 s.   Usage: test_testbed.sh OSN ROOT
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
. "$ROOT/tests/node/lib.sh"
. "$ROOT/tests/testbed_lib.sh"
nl_init testbed 170 --load
SCEN=$ROOT/examples/node_collapse.ini
T=$NL_TMP

# ---- 0. bad input
bad() { # bad WHAT PATTERN ARGS...: exit 2 and PATTERN on stderr
    local what=$1 pat=$2
    shift 2
    "$OSN" testbed "$@" >/dev/null 2>"$T/bad.err" {NL_LOCK_FD}>&-
    local rc=$?
    [ $rc = 2 ] && grep -q -- "$pat" "$T/bad.err"
    nl_check $? "$what: exit $rc, '$(cat "$T/bad.err")'"
}
bad "--loads 0" "--loads 0" "$SCEN" --loads 0
bad "--loads 1,,3" "--loads 1,,3" "$SCEN" --loads 1,,3
bad "--controls nope" "--controls nope" "$SCEN" --controls loss,nope
bad "--duration x" "--duration x" "$SCEN" --duration x
bad "--warmup -1" "--warmup -1" "$SCEN" --warmup -1
bad "unknown option" "unknown option '--frob'" "$SCEN" --frob
bad "no scenario" "scenario file is needed" --loads 1
# Without gnuplot on PATH, --plot is refused before any run (not ignored at the end).
env PATH=/nonexistent "$OSN" testbed "$SCEN" --plot "$T/x.png" >/dev/null 2>"$T/bad.err" \
    {NL_LOCK_FD}>&-
rc=$?
[ $rc = 2 ] && grep -q -- "--plot $T/x.png: cannot be drawn" "$T/bad.err" && [ ! -e "$T/x.png" ]
nl_check $? "--plot without gnuplot: exit $rc, '$(cat "$T/bad.err")'"
# A node that refuses its keys (max_transactions = 0) never reports a port: the uas, the first
# started, is named, and nothing is left running.
"$OSN" testbed "$SCEN" --loads 1 --controls none --duration 2 --warmup 0 \
    --set node.max_transactions=0 >/dev/null 2>"$T/noup.err" {NL_LOCK_FD}>&-
rc=$?
pid=$(grep -o 'element uas (osn node, node.element = uas, pid [0-9]*' "$T/noup.err" | grep -o '[0-9]*$')
[ $rc = 2 ] && [ -n "$pid" ] && tb_gone "$pid" && grep -q "node.max_transactions" "$T/noup.err"
nl_check $? "a node that cannot start: exit $rc, '$(cat "$T/noup.err")'"

# ---- 1. one load, one control
nl_log "osn testbed: loss at 1x, 3 s + 10 s"
tb_run_steady tb 120 "$T/tb.json" "$OSN" testbed "$SCEN" --loads 1 --controls loss --duration 10 \
    --warmup 3 --json "$T/tb.json" --csv "$T/tb.csv" --keep "$T/keep"
"$NL_PY" - "$T/tb.json" "$T/tb.csv" "$TB_PIDS" "$T/keep" <<'PY'
import csv, json, math, sys
rows = json.load(open(sys.argv[1]))
crow = list(csv.DictReader(open(sys.argv[2])))
pids = sorted(int(p) for p in sys.argv[3].split())
bad = []
if len(rows) != 1 or len(crow) != 1:
    sys.exit(f"FAIL: {len(rows)} JSON rows and {len(crow)} CSV rows, expected 1")
r, c = rows[0], crow[0]
cap = 1 / (0.0018 + 0.0006 + 0.0008 + 3 * 0.0006)
if abs(r["rate"] - cap) > 1e-6:
    bad.append(f"rate {r['rate']} is not 1 x the capacity {cap}")
if r["elements"] != 4 or r["collected"] != 4:
    bad.append(f"{r['collected']} of {r['elements']} summaries collected, expected 4 of 4")
nodes = {n["name"]: n for n in r["nodes"]}
if sorted(nodes) != ["core", "edge", "uac", "uas"]:
    bad.append(f"nodes {sorted(nodes)}")
for n in r["nodes"]:
    if not n["summary"] or n["end"] != "exit 0":
        bad.append(f"{n['name']}: summary {n['summary']}, end {n['end']}")
if sorted(n["pid"] for n in r["nodes"]) != pids:
    bad.append(f"pids of the progress line {pids} are not the JSON's")
good = nodes.get("uac", {}).get("uac", {}).get("good")
if good is None or good != nodes.get("uas", {}).get("calls_ok"):
    bad.append(f"generator good {good} != uas calls_ok {nodes.get('uas', {}).get('calls_ok')}")
sim, real = r["sim_goodput"], r["real_goodput"]
# The generator's own rates are over the window after its warm-up, as the simulator's after
# net.warmup: the row's real goodput is the generator's summary's.
g = nodes.get("uac", {})
if (g.get("window_start"), g.get("window_end")) != (3, 13) or not (
        real and math.isclose(real, g.get("goodput", 0), rel_tol=1e-8)):
    bad.append(f"generator's window [{g.get('window_start')}, {g.get('window_end')}] "
               f"goodput {g.get('goodput')} is not the row's {real} over [3, 13]")
if not (sim and real and abs(real / sim - 1) <= 0.10):
    bad.append(f"real goodput {real} not within 10% of the simulator's {sim} ({r['notes']})")
for k in ("failed", "abandoned", "retries"):
    if r["sim_" + k] is None or not math.isclose(r["real_" + k], g.get(k, -1), abs_tol=1e-9):
        bad.append(f"{k}: sim {r['sim_' + k]}, real {r['real_' + k]} is not the generator's "
                   f"windowed {g.get(k)}")
for k in ("sim_goodput", "real_goodput", "ratio", "sim_p99_s", "real_p99_s", "sim_goodput_min",
          "sim_goodput_max", "sim_below_real", "sim_failed", "real_failed", "sim_abandoned",
          "real_abandoned", "sim_retries", "real_retries"):
    if not math.isclose(float(c[k]), r[k], rel_tol=1e-9):
        bad.append(f"CSV {k} {c[k]} != JSON {r[k]}")
# The replications' range and the real run's rank, recomputed from the simulator's own
# per-replication rows that the run kept.
reps = [float(x["goodput"]) for x in
        csv.DictReader(open(sys.argv[4] + "/loss_1x/sim_replications.csv"))]
if len(reps) != r["sim_replications"] or (r["sim_goodput_min"], r["sim_goodput_max"],
                                          r["sim_below_real"]) != (
        min(reps), max(reps), sum(v < real for v in reps)):
    bad.append(f"range/rank {r['sim_goodput_min']}, {r['sim_goodput_max']}, "
               f"{r['sim_below_real']} are not those of the replications {reps}")
for b in bad:
    print("FAIL:", b)
print(f"real {real} against sim {sim} +- {r['sim_goodput_hw']} calls/s, p99 "
      f"{r['real_p99_s']} against {r['sim_p99_s']} s: {'FAIL' if bad else 'ok'}")
sys.exit(1 if bad else 0)
PY
nl_check $? "the row of loss at 1x"

# ---- 2. SIGTERM stops everything it started
: >"$T/term.err"
"$OSN" testbed "$SCEN" --loads 1 --controls none --duration 60 --warmup 0 \
    >"$T/term.out" 2>"$T/term.err" {NL_LOCK_FD}>&- &
tb=$!
NL_PIDS+=("$tb")
i=0
while ! grep -q 'run 1/1' "$T/term.err" && [ $i -lt 300 ] && kill -0 $tb 2>/dev/null; do
    sleep 0.1
    i=$((i + 1))
done
pids=$(grep 'run 1/1' "$T/term.err" | grep -o 'pid [0-9]*' | awk '{print $2}' | tr '\n' ' ')
tmpdir=$(grep -o 'files in [^ ]*' "$T/term.err" | awk '{print $3}')
sleep 1
kill -TERM $tb
i=0
while kill -0 $tb 2>/dev/null && [ $i -lt 300 ]; do
    sleep 0.1
    i=$((i + 1))
done
wait $tb
rc=$?
[ $rc = 2 ] && [ -n "$pids" ] && tb_gone $pids && [ -n "$tmpdir" ] && [ ! -e "$tmpdir" ]
nl_check $? "SIGTERM: exit $rc, pids '$pids', directory '$tmpdir': $(tail -2 "$T/term.err")"

# ---- 3. tandem and fanin: who sends where, from the nodes' own summaries
wiring() { # wiring NAME SCENARIO EXPECTED-PAIRS EXPECTED-DELAYS [osn testbed args...]
    local name=$1 scen=$2 pairs=$3 delays=$4
    shift 4
    timeout -k 5 120 "$OSN" testbed "$scen" --loads 0.3 --controls none --duration 3 \
        --warmup 0 --json "$T/$name.json" --keep "$T/$name" "$@" >/dev/null 2>"$T/$name.err" \
        {NL_LOCK_FD}>&-
    local rc=$?
    "$NL_PY" - "$T/$name.json" "$pairs" "$delays" "$T/$name/none_0.3x" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))[0]
nodes = {n["name"]: n for n in r["nodes"]}
bad = []
# NAME=DOWN/UP[:LOSSDOWN/LOSSUP]: the link delays (and losses) the node was given (its
# summary's scenario keys; none: 0)
for spec in sys.argv[3].split():
    name, want = spec.split("=")
    keys = json.load(open(os.path.join(sys.argv[4], name + ".json")))["scenario"]
    for what, w in zip(("delay", "loss"), want.split(":")):
        got = "/".join(str(float(keys.get(f"node.link_{what}_{d}", 0))) for d in ("down", "up"))
        if got != "/".join(str(float(x)) for x in w.split("/")):
            bad.append(f"{name} was given link {what} down/up {got}, expected {w}")
for pair in sys.argv[2].split():
    up, down = pair.split(">")
    if nodes[up].get("next_hop") != nodes[down]["listen"]:
        bad.append(f"{up} sent to {nodes[up].get('next_hop')}, {down} is at {nodes[down]['listen']}")
if r["collected"] != r["elements"] or r["elements"] != len(nodes):
    bad.append(f"{r['collected']} of {r['elements']} summaries")
if not r["real_goodput"] or r["real_goodput"] <= 0:
    bad.append(f"real goodput {r['real_goodput']}")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
    nl_check $((rc + $?)) "$name wiring (exit $rc): $(tail -2 "$T/$name.err")"
}
wiring tandem "$ROOT/examples/tandem.ini" "uac>edge edge>mid mid>core core>uas" \
    "uac=0.005/0:0/0 edge=0.01/0.005:0.001/0 mid=0.01/0.01:0.001/0.001 core=0.005/0.01:0/0.001 uas=0/0.005:0/0" \
    --set "link trunk.loss=0.001"
wiring fanin "$ROOT/examples/fanin.ini" "uac0>edge0 uac1>edge1 edge0>core edge1>core core>uas" \
    "uac0=0.005/0 edge1=0.005/0.005 core=0.005/0.005" --set net.edges=2

nl_summary
