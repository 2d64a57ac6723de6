#!/usr/bin/env bash
# `osn testbed` and `osn node` on topologies the user wrote (issue 32). A chain:
# examples/ims_chain.ini, six proxies with
# costs of their own (P-CSCF, S-CSCF, AS, I-CSCF, S-CSCF, P-CSCF) between the callers and the
# callee, each element its own `osn node`, named as in the file; the four between the first and
# the last run as the chain's mids (node.mid = K: mid K's costs and buffer).
#   1. bad input: osn testbed on a mesh or a tree of two cores exits 2 naming it; node.mid
#      beyond the scenario's mids, on a core, or on a collapse exits 2 naming node.mid;
#      node.name naming nothing (the names listed), on a scenario with no topology, or
#      against node.element exits 2 naming the key;
#   2. node.name by hand: `as` of the chain is an edge, mid 2, with [server as]'s costs
#      (0.0005 s an INVITE, not the first proxy's 0.0002); `region1` of
#      examples/fanin_topology.ini (8 sources of 125 calls/s) is a generator of its share,
#      125 calls/s: its calls started in 2 s within 4 sigma of Poisson 250 (at the whole
#      1,000 it would start about 2,000);
#   3. --loads 0.1 (182 calls/s, each node given node.name, every element below half busy), 2 s + 4 s:
#      - a process and a summary for each of the file's elements, by its name;
#      - every call offered passed every proxy (each one's calls_in is the callee's);
#      - real goodput within 15% of the simulator's (its interval is wide: 2 replications);
#      - each proxy was given its own [server NAME]'s costs (its scenario_resolved), and spent
#        them: its busy time is the closed form of the messages it counted at those costs
#        within 0.25% (tests/node/cpu_spent.py), a call's invite + ack + bye + 4 responses (3 at
#        the last) where nothing was retransmitted, 2.3 ms at an S-CSCF; with every mid at the
#        first proxy's costs (node.mid ignored) each would be 0.6 ms. On a machine too slow
#        to answer within T1 (ASan on a CI runner: 0.81 ms a call at the P-CSCF) the requests
#        retransmitted and the responses resent are counted in the form, at their own costs;
#   4. examples/fanin_topology.ini, 8 sources of their own rates (125 calls/s each) into 8
#      proxies into one core, --loads 0.5 (185 calls/s), 2 s + 4 s: each source's generator
#      (by name) started its share, 185.2 / 8 calls/s over its 6 s, within 4 sigma of Poisson;
#      real goodput within 15% of the simulator's;
#   5. a fan-in written here, sources of 20 and 60 calls/s into first proxies of costs of
#      their own (0.6 and 2.4 ms a call), --loads 0.3: each source started its share (1/4,
#      3/4) within 4 sigma, each first proxy spent its own messages' closed form within 0.25%; with
#      a [link pb-core] of 20 ms (the trunk's is 5 ms), which pb carries both ways
#      (node.next_hop_delays), source b's mean setup delay is behind a's by the simulator's
#      difference (about 31 ms) within 3 ms on the wire, and pa and pb still spend their
#      messages' closed form within 0.25% (handed in as the link held them, a datagram stretched
#      the service before it to its own arrival: 0.6 to 1.4% over);
#   6. a tree of no built-in shape, --loads 0.3: sources a, b into proxies p1, p2, both into
#      p3, into which source c sends too, p1 -> p3 a link of 20 ms: each source started its
#      share (1/4, 1/2, 1/4) within 4 sigma; each proxy saw exactly the calls of the sources
#      behind it (p3 and the core all); each proxy spent its messages' closed form within 0.25%;
#      a and b are behind c by the simulator's differences (about 40 and 10 ms) within 3 ms.
# A testbed run whose generator lagged more than 10 ms behind its schedule (a machine too busy to
# offer the load) is run again, 3 tries at most (tb_run_steady, tests/testbed_lib.sh).
# About 75 s.   Usage: test_testbed_written.sh OSN ROOT
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
. "$ROOT/tests/node/lib.sh"
nl_init testbed_written 300 --load
. "$ROOT/tests/testbed_lib.sh"
SCEN=$ROOT/examples/ims_chain.ini
T=$NL_TMP

# ---- 1. bad input
bad_mid() { # WHAT SCENARIO SET...: exit 2 naming node.mid
    local what=$1 scen=$2
    shift 2
    "$OSN" node "$scen" --set node.listen=127.0.0.1:0 --set node.next_hop=127.0.0.1:9 \
        --set node.duration=1 -q "$@" >/dev/null 2>"$T/bad.err" {NL_LOCK_FD}>&-
    local rc=$?
    [ $rc = 2 ] && grep -q "node.mid" "$T/bad.err"
    nl_check $? "$what: exit $rc, '$(cat "$T/bad.err")'"
}
bad_mid "node.mid = 5 of a chain of 4 mids" "$SCEN" --set node.element=edge --set node.mid=5
bad_mid "node.mid on a core" "$SCEN" --set node.element=core --set node.mid=1
bad_mid "node.mid on a collapse" "$ROOT/examples/node_collapse.ini" --set node.element=edge \
    --set node.mid=1

bad_name() { # WHAT SCENARIO KEY SET...: exit 2 naming KEY
    local what=$1 scen=$2 key=$3
    shift 3
    "$OSN" node "$scen" --set node.listen=127.0.0.1:0 --set node.next_hop=127.0.0.1:9 \
        --set node.duration=1 -q "$@" >/dev/null 2>"$T/bad.err" {NL_LOCK_FD}>&-
    local rc=$?
    [ $rc = 2 ] && grep -q "$key" "$T/bad.err"
    nl_check $? "$what: exit $rc, '$(cat "$T/bad.err")'"
}
bad_name "node.name of no element" "$SCEN" "node.name.*callers, pcscf" --set node.name=nosuch
bad_name "node.name without a topology" "$ROOT/examples/node_collapse.ini" node.name \
    --set node.name=edge
bad_name "node.name against node.element" "$SCEN" node.element --set node.name=as \
    --set node.element=core
# osn testbed starts a tree's proxies each with one next hop: a mesh, and a tree whose proxy
# past the first chooses among two cores (a first proxy's choice is a fanout), are refused naming what it does not carry, before any process starts
bad_testbed() { # WHAT SCENARIO PATTERN: exit 2, the message matching PATTERN
    "$OSN" testbed "$2" --loads 0.1 --controls none --warmup 1 --duration 1 >/dev/null \
        2>"$T/bad.err" {NL_LOCK_FD}>&-
    local rc=$?
    [ $rc = 2 ] && grep -q "$3" "$T/bad.err"
    nl_check $? "$1: exit $rc, '$(cat "$T/bad.err")'"
}
bad_testbed "osn testbed on a mesh" "$ROOT/examples/mesh_regions.ini" "topology = mesh"
printf '%s\n' '[server px]' 'cost_invite = 0.0004' '[source a]' 'to = e' '[element e]' \
    'role = proxy' 'server = px' 'next_hop = r' '[element r]' 'role = proxy' 'server = px' \
    'next_hop = c0, c1' '[element c0]' 'role = proxy' 'server = px' 'next_hop = u' \
    '[element c1]' 'role = proxy' 'server = px' 'next_hop = u' '[element u]' 'role = uas' \
    >"$T/two_cores.ini"
bad_testbed "osn testbed on a tree of two cores" "$T/two_cores.ini" "several cores"

# ---- 2. node.name by hand
"$OSN" node "$SCEN" --set node.name=as --set node.listen=127.0.0.1:0 \
    --set node.next_hop=127.0.0.1:9 --set node.duration=0.2 -q --json "$T/as.json" \
    >/dev/null 2>"$T/as.err" {NL_LOCK_FD}>&-
nl_check $? "osn node --set node.name=as: $(tail -2 "$T/as.err")"
FANIN=$ROOT/examples/fanin_topology.ini
nl_node_start callee uas 0 "" "$FANIN" --set node.name=callee
nl_check $? "the fan-in's callee by name"
timeout -k 5 60 "$OSN" node "$FANIN" --set node.name=region1 --set node.listen=127.0.0.1:0 \
    --set "node.next_hop=127.0.0.1:${NL_PORT[callee]}" --set node.duration=2 -q \
    --json "$T/region1.json" >/dev/null 2>"$T/region1.err" {NL_LOCK_FD}>&-
nl_check $? "osn node --set node.name=region1: $(tail -2 "$T/region1.err")"
nl_stop callee
"$NL_PY" - "$T/as.json" "$T/region1.json" <<'PY'
import json, math, sys
a, g = (json.load(open(p)) for p in sys.argv[1:3])
bad = []
node = a["scenario_resolved"]["node"]
cost = a["scenario_resolved"]["server edge"]["cost_invite"]
if (a["name"], node["element"], node["mid"], cost) != ("as", "edge", 2, 0.0005):
    bad.append(f"as: name {a['name']}, element {node['element']}, mid {node['mid']}, "
               f"cost_invite {cost}")
n, want = g["uac"]["calls_started"], 125 * 2
if g["scenario_resolved"]["node"]["element"] != "uac" or abs(n - want) > 4 * math.sqrt(want):
    bad.append(f"region1: {n} calls in 2 s, Poisson {want} (element "
               f"{g['scenario_resolved']['node']['element']})")
print(f"as: {node['element']}, mid {node['mid']}, cost_invite {cost}; region1: {n} calls in 2 s "
      f"(Poisson {want})")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
nl_check $? "node.name: the element, mid, costs and a source's share"

# testbed NAME SCENARIO LOAD: osn testbed, no control, 2 s + 4 s, into $T/NAME.json and
# $T/NAME/none_LOADx/
testbed() {
    local name=$1 scen=$2 load=$3
    nl_log "osn testbed $scen, loads $load, none, 2 s + 4 s"
    tb_run_steady "$name" 150 "$T/$name.json" "$OSN" testbed "$scen" --loads "$load" \
        --controls none --warmup 2 --duration 4 --json "$T/$name.json" --keep "$T/$name"
}

# ---- 3. the chain on the wire
testbed chain "$SCEN" 0.1
"$NL_PY" - "$T/chain.json" "$T/chain/none_0.1x" "$SCEN" "$ROOT/tests/node" <<'PY'
import json, os, sys
sys.path.insert(0, sys.argv[4])
import cpu_spent
r = json.load(open(sys.argv[1]))[0]
run = sys.argv[2]
bad = []
names = ["callers", "pcscf", "scscf", "as", "icscf", "scscf_t", "pcscf_t", "callee"]
node = {}
for n in names:
    path = os.path.join(run, n + ".json")
    if not os.path.exists(path):
        bad.append(f"no summary {n}.json (files: {sorted(os.listdir(run))})")
    else:
        node[n] = json.load(open(path))
sim = {e["name"]: e for e in json.load(open(os.path.join(run, "sim.json")))["elements"]}
if not bad:
    calls = node["callee"]["calls_in"]
    for n in names[1:-1]:
        if node[n]["calls_in"] != calls:
            bad.append(f"{n} saw {node[n]['calls_in']} calls, the callee {calls}")
    if not abs(r["real_goodput"] / r["sim_goodput"] - 1) <= 0.15:
        bad.append(f"real goodput {r['real_goodput']:.1f}, sim {r['sim_goodput']:.1f}")
    # each proxy was given its own [server NAME]'s costs...
    server = {"pcscf": "pcscf", "scscf": "scscf", "as": "as", "icscf": "icscf",
              "scscf_t": "scscf", "pcscf_t": "pcscf"}
    written = {n: cpu_spent.file_costs(sys.argv[3], s) for n, s in server.items()}
    for n, costs in written.items():
        res = [v for k, v in node[n]["scenario_resolved"].items() if k.startswith("server ")]
        got = {k: res[0]["cost_" + k] for k in costs} if len(res) == 1 else res
        if got != costs:
            bad.append(f"{n}: costs {got}, its [server {server[n]}] says {costs}")
    # ...and spent them: its virtual CPU's busy time is the closed form of the messages it
    # served at those costs, within 0.25% (tests/node/cpu_spent.py). At this load a call is invite
    # + ack + bye + 4 responses (100, 180, 200, the BYE's 200; 3 at the last proxy, whose uas
    # sends no 100), printed beside; a machine too slow to answer within T1 adds retransmissions.
    call = {"pcscf": 0.0006, "scscf": 0.0023, "as": 0.0013, "icscf": 0.0006,
            "scscf_t": 0.0023, "pcscf_t": 0.00055}
    for n, per_call in call.items():
        line, ok = cpu_spent.check(n, node[n], written[n], per_call)
        print(line)
        if not ok:
            bad.append(line)
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
nl_check $? "the chain: every element by its name, every call through every proxy, each mid its own costs"

# ---- 4. a written fan-in whose sources give their own rates
testbed fan "$FANIN" 0.5
"$NL_PY" - "$T/fan.json" "$T/fan/none_0.5x" <<'PY'
import json, math, os, sys
r = json.load(open(sys.argv[1]))[0]
run = sys.argv[2]
bad = []
want = r["rate"] / 8 * 6  # each source's share over warm-up + window
for i in range(8):
    path = os.path.join(run, f"region{i}.json")
    if not os.path.exists(path):
        bad.append(f"no summary region{i}.json")
        continue
    n = json.load(open(path))["uac"]["calls_started"]
    if abs(n - want) > 4 * math.sqrt(want):
        bad.append(f"region{i} started {n} calls, its share {want:.1f} (Poisson)")
if not abs(r["real_goodput"] / r["sim_goodput"] - 1) <= 0.15:
    bad.append(f"real goodput {r['real_goodput']:.1f}, sim {r['sim_goodput']:.1f}")
print(f"written fan-in: {r['rate']:.1f} calls/s asked, real {r['real_goodput']:.1f}, "
      f"sim {r['sim_goodput']:.1f}; each source's share {want:.1f} calls in 6 s")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
nl_check $? "the written fan-in: every source its own share, real beside sim"

# ---- 5. sources of different rates into first proxies of their own costs
# (servers.ini: the run, the core's costs and two first proxies', for 5 and 6)
cat >"$T/servers.ini" <<'INI'
[net]
replications = 2
[source]
hold = 0.5
[server core]
cost_invite = 0.001
cost_response = 0.0002
cost_ack = 0.0003
cost_bye = 0.0003
buffer = 20000
[server small]
cost_invite = 0.0002
cost_response = 0.00005
cost_ack = 0.0001
cost_bye = 0.0001
[server big]
cost_invite = 0.0008
cost_response = 0.0002
cost_ack = 0.0004
cost_bye = 0.0004
INI
cat "$T/servers.ini" - >"$T/uneven.ini" <<'INI'
[source a]
to = pa
rate = 20
[source b]
to = pb
rate = 60
[element pa]
role = proxy
server = small
next_hop = core
[element pb]
role = proxy
server = big
next_hop = core
[element core]
role = proxy
server = core
next_hop = callee
[element callee]
role = uas
INI
testbed uneven "$T/uneven.ini" 0.3
"$NL_PY" - "$T/uneven.json" "$T/uneven/none_0.3x" "$T/uneven.ini" "$ROOT/tests/node" <<'PY'
import json, math, os, sys
sys.path.insert(0, sys.argv[4])
import cpu_spent
r = json.load(open(sys.argv[1]))[0]
run = sys.argv[2]
bad = []
node = {n: json.load(open(os.path.join(run, n + ".json"))) for n in ("a", "b", "pa", "pb")}
for n, share in (("a", 0.25), ("b", 0.75)):
    got, want = node[n]["uac"]["calls_started"], r["rate"] * share * 6
    if abs(got - want) > 4 * math.sqrt(want):
        bad.append(f"source {n} started {got} calls, its share {want:.1f}")
for n, server, per_call in (("pa", "small", 0.0006), ("pb", "big", 0.0024)):
    line, ok = cpu_spent.check(n, node[n], cpu_spent.file_costs(sys.argv[3], server), per_call)
    print(line)
    if not ok:
        bad.append(line)
print(f"uneven fan-in: a {node['a']['uac']['calls_started']}, b "
      f"{node['b']['uac']['calls_started']} calls")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
nl_check $? "sources of their own rates into first proxies of their own costs"
printf '[link pb-core]\ndelay = 0.02\n' >>"$T/uneven.ini"
testbed linked "$T/uneven.ini" 0.3
"$NL_PY" - "$T/linked/none_0.3x" "$T/uneven.ini" "$ROOT/tests/node" <<'PY'
import json, os, sys
sys.path.insert(0, sys.argv[3])
import cpu_spent
run = sys.argv[1]
real = {n: json.load(open(os.path.join(run, n + ".json")))["setup_delay_mean"] for n in "ab"}
sim = {e["name"]: e for e in json.load(open(os.path.join(run, "sim.json")))["elements"]}
sd = {n: sim[n]["src_setup_mean"] for n in "ab"}
print(f"a link of its own: setup delay a {real['a'] * 1e3:.2f} ms, b {real['b'] * 1e3:.2f} ms on the "
      f"wire; a {sd['a'] * 1e3:.2f}, b {sd['b'] * 1e3:.2f} ms in the simulator")
bad = []
if not sd["b"] - sd["a"] > 0.025:
    bad.append("the simulator's b is not 2 x 15 ms behind a: the link does not act")
if not abs((real["b"] - real["a"]) - (sd["b"] - sd["a"])) <= 0.003:
    bad.append("b - a on the wire is not the simulator's within 3 ms")
# the datagrams a link held are handed in after the timers due with them (a service that ended
# first ends at its time): each proxy's busy time is still its messages' closed form
for n, server, per_call in (("pa", "small", 0.0006), ("pb", "big", 0.0024)):
    line, ok = cpu_spent.check(n, json.load(open(os.path.join(run, n + ".json"))),
                               cpu_spent.file_costs(sys.argv[2], server), per_call)
    print(line)
    if not ok:
        bad.append(line)
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
nl_check $? "a link of its own on the wire, carried both ways by its upstream end (pb)"

# ---- 6. a tree: sources at two levels, proxies into a proxy, a link of its own
cat "$T/servers.ini" - >"$T/tree.ini" <<'INI'
[source a]
to = p1
rate = 20
[source b]
to = p2
rate = 40
[source c]
to = p3
rate = 20
[element p1]
role = proxy
server = small
next_hop = p3
[element p2]
role = proxy
server = small
next_hop = p3
[element p3]
role = proxy
server = big
next_hop = core
[element core]
role = proxy
server = core
next_hop = callee
[element callee]
role = uas
[link p1-p3]
delay = 0.02
INI
testbed tree "$T/tree.ini" 0.3
"$NL_PY" - "$T/tree.json" "$T/tree/none_0.3x" "$T/tree.ini" "$ROOT/tests/node" <<'PY'
import json, math, os, sys
sys.path.insert(0, sys.argv[4])
import cpu_spent
r = json.load(open(sys.argv[1]))[0]
run = sys.argv[2]
bad = []
node = {n: json.load(open(os.path.join(run, n + ".json")))
        for n in ("a", "b", "c", "p1", "p2", "p3", "core", "callee")}
sim = {e["name"]: e for e in json.load(open(os.path.join(run, "sim.json")))["elements"]}
started = {n: node[n]["uac"]["calls_started"] for n in "abc"}
for n, share in (("a", 0.25), ("b", 0.5), ("c", 0.25)):
    want = r["rate"] * share * 6
    if abs(started[n] - want) > 4 * math.sqrt(want):
        bad.append(f"source {n} started {started[n]} calls, its share {want:.1f}")
# each call took its source's path: p1 a's, p2 b's, p3 and the core everyone's
route = {"p1": started["a"], "p2": started["b"], "p3": sum(started.values()),
         "core": sum(started.values())}
for n, want in route.items():
    if node[n]["calls_in"] != want:
        bad.append(f"{n} saw {node[n]['calls_in']} calls, its sources started {want}")
for n, server, per_call in (("p1", "small", 0.0006), ("p2", "small", 0.0006),
                            ("p3", "big", 0.0024)):
    line, ok = cpu_spent.check(n, node[n], cpu_spent.file_costs(sys.argv[3], server), per_call)
    print(line)
    if not ok:
        bad.append(line)
# a's path is c's with p1 and the 20 ms link, b's with p2 and a 5 ms trunk, each both ways
real = {n: node[n]["setup_delay_mean"] for n in "abc"}
sd = {n: sim[n]["src_setup_mean"] for n in "abc"}
for n in "ab":
    w, s = real[n] - real["c"], sd[n] - sd["c"]
    print(f"tree: {n} behind c by {w * 1e3:.2f} ms on the wire, {s * 1e3:.2f} ms in the simulator")
    if not abs(w - s) <= 0.003:
        bad.append(f"{n} - c: {w * 1e3:.2f} ms on the wire, {s * 1e3:.2f} ms in the simulator")
if not sd["a"] - sd["c"] > 0.035:
    bad.append("the simulator's a is not 2 x (20 + 5) ms behind c: the link does not act")
if not abs(r["real_goodput"] / r["sim_goodput"] - 1) <= 0.15:
    bad.append(f"real goodput {r['real_goodput']:.1f}, sim {r['sim_goodput']:.1f}")
print(f"tree: started a {started['a']}, b {started['b']}, c {started['c']}; p3 saw "
      f"{node['p3']['calls_in']}")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
nl_check $? "a tree on the wire: sources at two levels, each call on its path, each proxy its costs"

nl_summary
