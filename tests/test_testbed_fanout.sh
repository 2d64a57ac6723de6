#!/usr/bin/env bash
# `osn testbed` on a fan-out and a mesh (issue 30 after issue 33's net.topology = fanout): every
# core its own `osn node`, each edge given next_hop = CORE, CORE2 with the scenario's weights.
#   1. examples/fanout.ini (one edge; cores of 200 and 100 calls/s, the second every cost
#      doubled; equal weights) at 1.5x the cores' capacity together under loss:
#      - the rate is 1.5 x (1 / 0.005 + 1 / 0.010) = 450 calls/s (the closed form);
#      - the edge's next hops are the two cores' reported addresses, with the weights and down
#        time of [server edge]; core2's node runs [server core2]'s costs (0.0036 s per INVITE);
#      - real goodput within 15% of the simulator's and of the cores' capacity together (300);
#      - the slower core's share of the INVITEs follows its feedback, not its weight (1/2):
#        in [0.28, 0.40] (as tests/sim_fanout.py asks of the simulator) and within 0.06 of the
#        simulator's own share in the same run;
#      - no core was given more INVITEs per second than its capacity allows (+10%);
#   2. examples/mesh.ini (two edges, each to both cores) at 0.3x: who sends where, from the
#      nodes' own summaries, and every summary collected.
# A testbed run whose generator lagged more than 10 ms behind its schedule (a machine too busy to
# offer the load) is run again, 3 tries at most (tb_run_steady, tests/testbed_lib.sh).
# About 60 s. make testbed runs the long version (issue 33): a 35 s warm-up and a 60 s window,
# the same checks.
#
# Usage: test_testbed_fanout.sh OSN ROOT [WARMUP DURATION]   (seconds; default 10 10)
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
WARM=${3:-10}
WINDOW=${4:-10}
. "$ROOT/tests/node/lib.sh"
nl_init testbed_fanout $((WARM + WINDOW + 220)) --load
. "$ROOT/tests/testbed_lib.sh"
T=$NL_TMP

nl_log "osn testbed examples/fanout.ini: loss at 1.5x, $WARM s + $WINDOW s"
tb_run_steady fan $((WARM + WINDOW + 150)) "$T/fan.json" "$OSN" testbed "$ROOT/examples/fanout.ini" \
    --loads 1.5 --controls loss --warmup "$WARM" --duration "$WINDOW" --json "$T/fan.json" \
    --keep "$T/keep"
"$NL_PY" - "$T/fan.json" "$T/keep/loss_1.5x" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))[0]
run = sys.argv[2]
bad = []
nodes = {n["name"]: n for n in r["nodes"]}
if sorted(nodes) != ["core", "core2", "edge", "uac", "uas"] or r["collected"] != 5:
    bad.append(f"nodes {sorted(nodes)}, {r['collected']} of {r['elements']} summaries")
cap = 1 / (0.0018 + 0.0006 + 0.0008 + 3 * 0.0006) + 1 / (0.0036 + 0.0012 + 0.0016 + 3 * 0.0012)
if abs(r["rate"] - 1.5 * cap) > 1e-6:
    bad.append(f"rate {r['rate']} is not 1.5 x the cores' capacity {cap}")
edge = json.load(open(os.path.join(run, "edge.json")))
hops = edge.get("next_hops", [])
want = [nodes["core"]["listen"], nodes["core2"]["listen"]]
if [h["server"] for h in hops] != want or [h["weight"] for h in hops] != [1, 1]:
    bad.append(f"edge's next hops {[(h['server'], h['weight']) for h in hops]}, cores at {want}")
if edge["scenario_resolved"]["node"]["next_hop"] != ", ".join(want):
    bad.append(f"edge's next_hop {edge['scenario_resolved']['node']['next_hop']}")
if edge["scenario"].get("node.down_time") != "30":
    bad.append(f"edge's node.down_time {edge['scenario'].get('node.down_time')}, [server edge] 30")
for name, cost in (("core", 0.0018), ("core2", 0.0036)):
    got = json.load(open(os.path.join(run, name + ".json")))["scenario_resolved"]["server core"]
    if abs(got["cost_invite"] - cost) > 1e-12:
        bad.append(f"{name} ran cost_invite {got['cost_invite']}, its section says {cost}")
sim, real = r["sim_goodput"], r["real_goodput"]
if not (sim and real and abs(real / sim - 1) <= 0.15):
    bad.append(f"real goodput {real} not within 15% of the simulator's {sim} ({r['notes']})")
if not (real and abs(real / cap - 1) <= 0.15):
    bad.append(f"real goodput {real} not within 15% of the cores' capacity {cap}")
inv = [h["invites"] for h in hops]
share = inv[1] / sum(inv) if sum(inv) else float("nan")
simj = {e["name"]: e for e in json.load(open(os.path.join(run, "sim.json")))["elements"]}
sim_share = simj["core2"]["invite"] / (simj["core"]["invite"] + simj["core2"]["invite"])
if not (0.28 <= share <= 0.40):
    bad.append(f"core2's share of the INVITEs {share:.3f} is not in [0.28, 0.40]")
if not abs(share - sim_share) <= 0.06:
    bad.append(f"core2's share {share:.3f} is not within 0.06 of the simulator's {sim_share:.3f}")
t = edge["elapsed_s"]
for name, c in (("core", 200.0), ("core2", 100.0)):
    rate = nodes[name]["calls_in"] / t
    if rate > 1.10 * c:
        bad.append(f"{name} took {rate:.1f} INVITEs/s, its capacity is {c:.0f}")
for b in bad:
    print("FAIL:", b)
print(f"fanout: real {real} against sim {sim} +- {r['sim_goodput_hw']} calls/s (capacity "
      f"{cap:.0f}); core2's share {share:.3f}, sim {sim_share:.3f}; p99 {r['real_p99_s']} "
      f"against {r['sim_p99_s']} s: {'FAIL' if bad else 'ok'}")
sys.exit(1 if bad else 0)
PY
nl_check $? "fanout.ini, loss at 1.5x"

nl_log "osn testbed examples/mesh.ini: none at 0.3x, 3 s"
timeout -k 5 120 "$OSN" testbed "$ROOT/examples/mesh.ini" --loads 0.3 --controls none \
    --duration 3 --warmup 0 --json "$T/mesh.json" --keep "$T/mkeep" >/dev/null \
    2>"$T/mesh.err" {NL_LOCK_FD}>&-
rc=$?
"$NL_PY" - "$T/mesh.json" "$T/mkeep/none_0.3x" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))[0]
nodes = {n["name"]: n for n in r["nodes"]}
bad = []
want = sorted(["uas", "core", "core2", "edge0", "edge1", "uac0", "uac1"])
if sorted(nodes) != want or r["collected"] != len(want):
    bad.append(f"nodes {sorted(nodes)}, {r['collected']} summaries")
cores = [nodes["core"]["listen"], nodes["core2"]["listen"]]
for e in ("edge0", "edge1"):
    hops = json.load(open(os.path.join(sys.argv[2], e + ".json"))).get("next_hops", [])
    if [h["server"] for h in hops] != cores or min(h["invites"] for h in hops) <= 0:
        bad.append(f"{e} sent to {[(h['server'], h['invites']) for h in hops]}, cores {cores}")
for u, e in (("uac0", "edge0"), ("uac1", "edge1")):
    if nodes[u].get("next_hop") != nodes[e]["listen"]:
        bad.append(f"{u} sent to {nodes[u].get('next_hop')}, {e} is at {nodes[e]['listen']}")
for c in ("core", "core2"):
    if nodes[c].get("next_hop") != nodes["uas"]["listen"]:
        bad.append(f"{c} sent to {nodes[c].get('next_hop')}, the uas is at {nodes['uas']['listen']}")
if not r["real_goodput"] or r["real_goodput"] <= 0:
    bad.append(f"real goodput {r['real_goodput']}")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
nl_check $((rc + $?)) "mesh wiring (exit $rc): $(tail -2 "$T/mesh.err")"

nl_summary
