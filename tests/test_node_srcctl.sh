#!/usr/bin/env bash
# The load generator as an overload-control client (issue 30, control.at = edge), on 127.0.0.1
# with ports the processes chose themselves: generator -> osn node edge -> osn node uas, the edge
# the bottleneck (its virtual CPU costs 8.1 ms a call: INVITE 3 + ACK 0.9 + BYE 1.5 + three
# responses of the uas, which sends no 100 Trying, 0.9 each: capacity 123.5 calls/s), offered
# 300 calls/s for 10 s (node.warmup 3), control loss.
#   - control.at = edge: the edge's server half puts its feedback in its responses and the
#     generator's client half sheds calls before sending them (RFC 7339 5.3): the summary's
#     uac.shed_local > 0 (each also in failed_rejected), and the window's goodput within 15 % of
#     the edge's capacity; the --stats CSV has the column shed_local, its rows add up to no
#     more than the run's count, and the JSON's shed_local is the window's rate (the rows in
#     [3, 10] s over 7 s, within 10 %), below the whole run's count over 7 s (the warm-up's
#     sheds are not in it);
#   - the same with control.kind = rate (RFC 7415: the client half paces to the rate the
#     server half gives): shed_local > 0 and goodput within 15 % of the capacity;
#   - without the key (at = core: the edge is the core's client, the uas has no server half):
#     no call is shed by the generator (shed_local 0).
#   - two next hops (node.next_hop = A, B, weights 1, 1), control.at = edge: edge A the
#     bottleneck above, edge B with no CPU cost, 300 calls/s for 6 s: A's client half refuses
#     calls (next_hops[A].shed > 0), which go to B (RFC 7339 5.10), B's refuses none (shed 0)
#     and B carries more INVITEs than A.
# The edge's buffer of 2000 messages (about 5 s of its work) bounds the drain of the run without
# control (Timer B 32 s).
# About 70 s.   Usage: test_node_srcctl.sh OSN ROOT
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
. "$ROOT/tests/node/lib.sh"
nl_init srcctl 180
export OSN
SCEN=$NL_TMP/edge_bottleneck.ini
cat >"$SCEN" <<'INI'
[net]
topology = collapse
seed = 1
[source]
rate = 300
hold = 0.2
[server edge]
cost_invite = 0.003
cost_retrans = 0.0015
cost_response = 0.0009
cost_ack = 0.0009
cost_bye = 0.0015
cost_reject = 0.0009
buffer = 2000
[server uas]
cost_invite = 0
cost_retrans = 0
cost_response = 0
cost_ack = 0
cost_bye = 0
cost_reject = 0
[control]
kind = loss
[sip]
t1 = 0.5
INI
CAP=$("$NL_PY" -c 'print(1 / (0.003 + 0.0009 + 0.0015 + 3 * 0.0009))')

# run NAME [osn node args..]: an edge of the scenario (with the args) before the uas, and the
# generator toward it in the foreground (the same args); the edge stopped after it.
run() {
    local name=$1 dir=$NL_TMP/$1
    shift
    mkdir -p "$dir"
    nl_up "$name: edge did not start" nl_node_start "$name-edge" edge 0 "${NL_PORT[uas]}" \
        "$SCEN" "$@" || return 1
    NL_DIR[$name]=$dir
    timeout -k 5 90 "$OSN" node "$SCEN" --set node.element=uac --set node.listen=127.0.0.1:0 \
        --set "node.next_hop=127.0.0.1:${NL_PORT[$name-edge]}" --set node.duration=10 \
        --set node.warmup=3 "$@" --json "$dir/summary.json" --stats "$dir/stats.csv" -q \
        >"$dir/node.out" \
        2>"$dir/node.err" {NL_LOCK_FD}>&-
    local rc=$?
    nl_check $rc "$name: generator exit status $rc: $(tail -2 "$dir/node.err")"
    nl_stop "$name-edge" >/dev/null
}

nl_up "uas did not start" nl_node_start uas uas 0 0 "$SCEN"
nl_require_up

run at_edge --set control.at=edge
"$NL_PY" - "$NL_TMP/at_edge/summary.json" "$CAP" "$NL_TMP/at_edge/stats.csv" <<'PY'
import csv, json, sys
d = json.load(open(sys.argv[1]))
cap = float(sys.argv[2])
u = d["uac"]
bad = []
rows = list(csv.DictReader(open(sys.argv[3])))
if not rows or "shed_local" not in rows[0]:
    bad.append(f"--stats has no shed_local column: {list(rows[0]) if rows else 'no rows'}")
    rows = []
col = sum(int(r["shed_local"]) for r in rows)
# Rows at t in (3, 10]: each counts the second before its t, so these are the window's.
inwin = sum(int(r["shed_local"]) for r in rows if 3 < float(r["t"]) <= 10.5)
span = d["window_end"] - d["window_start"]
rate = d.get("shed_local")
if rows and col > u["shed_local"]:
    bad.append(f"the rows' shed_local {col} > the run's {u['shed_local']}")
if rate is None:
    bad.append("no windowed shed_local in the JSON")
else:
    if rows and not abs(rate * span - inwin) <= 0.1 * inwin + 5:
        bad.append(f"shed_local {rate:.1f}/s x {span:g} s is not the rows' {inwin} in the window")
    if not round(rate * span) < u["shed_local"]:
        bad.append(f"shed_local {rate:.1f}/s x {span:g} s not below the run's {u['shed_local']}")
print(f"shed_local: {rate}/s in the window [{d['window_start']}, {d['window_end']}] s; "
      f"stats rows {col} ({inwin} in the window), run {u['shed_local']}")
if not u["shed_local"] > 0:
    bad.append("no call shed by the generator")
if u["shed_local"] > u["failed_rejected"]:
    bad.append(f"shed_local {u['shed_local']} > failed_rejected {u['failed_rejected']}")
if abs(d["goodput"] - cap) > 0.15 * cap:
    bad.append(f"goodput {d['goodput']:.1f} not within 15 % of the edge's capacity {cap:.1f}")
for b in bad:
    print("FAIL:", b)
print(f"control.at = edge: offered {d['offered']:.1f}, goodput {d['goodput']:.1f} calls/s "
      f"(capacity {cap:.1f}); shed by the generator {u['shed_local']} of "
      f"{u['calls_started']} calls, rejected {u['failed_rejected']}")
sys.exit(1 if bad else 0)
PY
nl_check $? "control.at = edge: the generator sheds, goodput near the edge's capacity"

run at_core
read -r shed started < <(nl_json at_core uac | "$NL_PY" -c '
import ast, sys
u = ast.literal_eval(sys.stdin.read())
print(u["shed_local"], u["calls_started"])')
echo "without control.at: shed by the generator ${shed:-?} of ${started:-?} calls"
[ "${shed:-x}" = 0 ] && [ "${started:-0}" -gt 0 ]
nl_check $? "without control.at the generator sheds nothing (shed_local ${shed:-?})"

# The same edge under RFC 7415's rate control: the generator's client half paces the INVITEs
# to the rate the edge's server half gives (oc-algo="rate").
run at_edge_rate --set control.at=edge --set control.kind=rate
"$NL_PY" - "$NL_TMP/at_edge_rate/summary.json" "$CAP" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cap = float(sys.argv[2])
shed, good = d["uac"]["shed_local"], d["goodput"]
print(f"control.at = edge, kind = rate: shed by the generator {shed} of "
      f"{d['uac']['calls_started']} calls, goodput {good:.1f} calls/s (capacity {cap:.1f})")
sys.exit(0 if shed > 0 and abs(good - cap) <= 0.15 * cap else 1)
PY
nl_check $? "control.at = edge, kind = rate: the generator sheds, goodput near the edge's capacity"

# Two next hops, A overloaded, B not.
FAST=(--set "server edge.cost_invite=0" --set "server edge.cost_retrans=0"
    --set "server edge.cost_response=0" --set "server edge.cost_ack=0"
    --set "server edge.cost_bye=0" --set "server edge.cost_reject=0")
nl_up "hops: edge A did not start" nl_node_start hops-a edge 0 "${NL_PORT[uas]}" "$SCEN" \
    --set control.at=edge
nl_up "hops: edge B did not start" nl_node_start hops-b edge 0 "${NL_PORT[uas]}" "$SCEN" \
    --set control.at=edge "${FAST[@]}"
mkdir -p "$NL_TMP/hops"
timeout -k 5 90 "$OSN" node "$SCEN" --set node.element=uac --set node.listen=127.0.0.1:0 \
    --set "node.next_hop=127.0.0.1:${NL_PORT[hops-a]}, 127.0.0.1:${NL_PORT[hops-b]}" \
    --set "node.next_hop_weights=1, 1" --set node.duration=6 --set node.warmup=2 \
    --set control.at=edge --json "$NL_TMP/hops/summary.json" -q >"$NL_TMP/hops/node.out" \
    2>"$NL_TMP/hops/node.err" {NL_LOCK_FD}>&-
rc=$?
nl_check $rc "hops: generator exit status $rc: $(tail -2 "$NL_TMP/hops/node.err")"
nl_stop hops-a >/dev/null
nl_stop hops-b >/dev/null
"$NL_PY" - "$NL_TMP/hops/summary.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
h = d.get("next_hops", [])
bad = []
if len(h) != 2:
    bad.append(f"{len(h)} next hops in the summary")
else:
    a, b = h
    if not a["shed"] > 0:
        bad.append(f"the overloaded edge A: no call refused by its client half (shed {a['shed']})")
    if b["shed"] != 0:
        bad.append(f"edge B (no cost): {b['shed']} calls refused by its client half")
    if not b["invites"] > a["invites"]:
        bad.append(f"B's INVITEs {b['invites']} not above A's {a['invites']}")
    print(f"two next hops: A offered {a['offered']}, refused {a['shed']}, INVITEs {a['invites']}; "
          f"B offered {b['offered']}, refused {b['shed']}, INVITEs {b['invites']}; "
          f"shed_local {d['uac']['shed_local']}, goodput {d['goodput']:.1f} calls/s")
for x in bad:
    print("FAIL:", x)
sys.exit(1 if bad else 0)
PY
nl_check $? "two next hops: A's client half refuses calls, B's none"

nl_stop uas >/dev/null
nl_summary
