#!/usr/bin/env bash
# What a result file says about what produced it (issue 20), and detectors that act:
#   - two runs with the same seed (one and two threads) give files that differ only in the
#     timing block (JSON "timing", CSV timing.* columns): osn sim on the node and on a SIP
#     network; osn solve and osn fluid have no timing and give identical files;
#   - the node's and the network's --trace and --replications-out files are identical for the
#     same seed (they hold no wall clock);
#   - every JSON names the OSN version (that of `osn --version`); the node's and the network's
#     JSON echo the scenario (keys set, every key's value as run, defaults included); the
#     network CSV has control, detector and seed;
#   - detector thresholds in the detector's own units: occupancy and delay with their defaults
#     leave mode 0 at 3x load (before, they never did: bit for bit the run without control);
#     a threshold of the wrong kind is refused, naming the key.
#
#   tests/test_provenance.sh OSN SOURCE_DIR
set -uo pipefail
OSN=$1
ROOT=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$ROOT/tests/cli_lib.sh"
PY=python3
EX=$ROOT/examples
NET=(--set net.time=4 --set net.warmup=2 --set net.replications=2)

# same_but_timing A B: JSON documents (objects or sweep arrays) equal once "timing" is removed,
# CSV files equal once the timing.* columns are removed; and the timing block is there.
same_but_timing() {
    "$PY" - "$1" "$2" <<'PY'
import csv, json, sys
a, b = sys.argv[1:3]
if a.endswith(".json"):
    da, db = json.load(open(a)), json.load(open(b))
    la = da if isinstance(da, list) else [da]
    lb = db if isinstance(db, list) else [db]
    for x, y in zip(la, lb):
        assert "timing" in x and "timing" in y, "no timing block"
        x.pop("timing"), y.pop("timing")
    assert da == db, "the files differ outside the timing block"
else:
    ra, rb = list(csv.reader(open(a))), list(csv.reader(open(b)))
    keep = [i for i, h in enumerate(ra[0]) if not h.startswith("timing.")]
    assert len(keep) < len(ra[0]), "no timing.* columns"
    assert [[r[i] for i in keep] for r in ra] == [[r[i] for i in keep] for r in rb], \
        "the CSV files differ outside the timing columns"
PY
}

# ---- osn sim, the node ----
for t in 1 2; do
    run 0 "sim node threads $t" -- sim "$EX/sim_two_loop.ini" --set sim.time=2e4 --replications 4 \
        --threads $t --json "$TMP/node$t.json" --csv "$TMP/node$t.csv" \
        --replications-out "$TMP/node_reps$t.csv" --trace "$TMP/node_trace$t.csv" --trace-interval 100 -q
    run 0 "sim node mmpp threads $t" -- sim "$EX/sim_mmpp_policy_ii.ini" --set sim.time=2e3 \
        --replications 3 --seed 11 --threads $t --json "$TMP/mmpp$t.json" -q
done
same_but_timing "$TMP/node1.json" "$TMP/node2.json" && ok || bad "sim node JSON: same seed"
same_but_timing "$TMP/node1.csv" "$TMP/node2.csv" && ok || bad "sim node CSV: same seed"
same_but_timing "$TMP/mmpp1.json" "$TMP/mmpp2.json" && ok || bad "sim node MMPP JSON: same seed"
cmp -s "$TMP/node_reps1.csv" "$TMP/node_reps2.csv" && ok || bad "sim node --replications-out: same seed"
cmp -s "$TMP/node_trace1.csv" "$TMP/node_trace2.csv" && ok || bad "sim node --trace: same seed"
# The timing block is the only thing that differs: a wall-clock field outside it would show.
cmp -s "$TMP/node1.json" "$TMP/node2.json" && bad "sim node JSON: timing block did not differ" || ok
# The scenario as run: every key of the model's shape with its value, defaults included, and
# the keys set showing what --replications and --seed made of them.
if "$PY" - "$TMP/node1.json" "$TMP/mmpp1.json" "$($OSN --version | sed 's/^osn //')" <<'PY'; then ok; else bad "sim node scenario echo"; fi
import json, sys
d, m = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for doc in (d, m):
    assert doc["osn_version"] == sys.argv[3]
    sc = doc["scenario"]
    r = sc["resolved"]
    assert set(r) == {"model", "thresholds", "arrivals", "service", "sim"}, r.keys()
    assert r["sim"]["replications"] == doc["replications"] == int(sc["keys"]["sim.replications"])
    assert r["sim"]["seed"] == doc["seed"] == int(sc["keys"]["sim.seed"])
    assert r["sim"]["warmup"] == doc["warmup"] and r["sim"]["feedback_delay"] == 0  # a default
    assert r["thresholds"] == {"L": sc["L"], "H": sc["H"], "R": sc["R"]}
    assert r["model"] == {"kind": sc["kind"], "policy": sc["policy"]}
    assert r["service"] == {"law": "exp", "rate": 1.0}
    # every key set is in the echo with the value that was read
    for k, v in sc["keys"].items():
        sec, name = k.split(".")
        got = r["model" if sec == "model" else sec][name]
        want = [float(x) for x in v.split(",")] if isinstance(got, list) else v
        if isinstance(got, list) and name == "overload_accept":
            want = want * len(got)  # one fraction for every phase
        assert got == want or str(got) == v or float(got) == float(v), (k, v, got)
assert d["replications"] == 4 and d["scenario"]["keys"]["sim.replications"] == "4"
a = d["scenario"]["resolved"]["arrivals"]
assert a == {"process": "poisson", "flows": 1, "rate": 1.2, "overload_rate": 0.6,
             "overload_accept": 0.5}, a
a = m["scenario"]["resolved"]["arrivals"]
assert a["process"] == "mmpp" and a["phase_rates"] == [0.4, 3.0] and a["phase_switch"] == [0.1, 0.2]
assert [x * y for x, y in zip(a["overload_accept"], a["phase_rates"])] == a["overload_rates"]
assert m["seed"] == 11 and m["scenario"]["keys"]["sim.seed"] == "11"
PY

# ---- osn sim, a SIP network, with a sweep ----
for t in 1 2; do
    run 0 "sim net threads $t" -- sim "$EX/collapse.ini" "${NET[@]}" --set source.rate=300:700:400 \
        --threads $t --json "$TMP/net$t.json" --csv "$TMP/net$t.csv" \
        --replications-out "$TMP/net_reps$t.csv" -q
    run 0 "sim net trace threads $t" -- sim "$EX/collapse.ini" "${NET[@]}" --threads $t \
        --trace "$TMP/net_trace$t.csv" -q
done
same_but_timing "$TMP/net1.json" "$TMP/net2.json" && ok || bad "sim net JSON: same seed"
same_but_timing "$TMP/net1.csv" "$TMP/net2.csv" && ok || bad "sim net CSV: same seed"
cmp -s "$TMP/net_reps1.csv" "$TMP/net_reps2.csv" && ok || bad "sim net --replications-out: same seed"
cmp -s "$TMP/net_trace1.csv" "$TMP/net_trace2.csv" && ok || bad "sim net --trace: same seed"

version=$("$OSN" --version | sed 's/^osn //')
if "$PY" - "$TMP/net1.json" "$TMP/net1.csv" "$version" <<'PY'; then ok; else bad "net provenance"; fi
import csv, json, sys
docs = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(docs) == 2 and len(rows) == 2
for d, r, rate in zip(docs, rows, (300, 700)):
    assert d["osn_version"] == sys.argv[3] == r["osn_version"], (d["osn_version"], sys.argv[3])
    sc = d["scenario"]
    assert sc["source"].endswith("examples/collapse.ini")
    res = sc["resolved"]
    # As run: the sweep's value, the file's values, and defaults the file never wrote.
    assert res["source"]["rate"] == rate, res["source"]
    assert res["server core"]["buffer"] == 50000 and res["server uas"]["buffer"] == 500
    assert res["sip"]["t4"] == 5 and res["control"]["kind"] == "none"
    assert res["net"]["seed"] == 1 and res["net"]["replications"] == 2
    assert sc["keys"]["net.time"] == "4" and sc["keys"]["control.kind"] == "none"
    assert d["control"] == r["control"] == "none" and r["detector"] == "hysteretic"
    assert r["seed"] == "1" and r["replications"] == "2"
    assert abs(float(r["goodput"]) - d["goodput"]) <= 1e-9 * d["goodput"]
PY

# ---- osn node: its summary echoes every key as run (an idle UAS for 0.3 s, no traffic) ----
run 0 "node summary" -- node --set node.listen=127.0.0.1:0 --set node.duration=0.3 \
    --set control.kind=loss --set "server uas.buffer=77" --json "$TMP/node_run.json" -q
if "$PY" - "$TMP/node_run.json" "$version" <<'PY'; then ok; else bad "osn node scenario echo"; fi
import json, sys
d = json.load(open(sys.argv[1]))
r = d["scenario_resolved"]
assert d["osn_version"] == sys.argv[2]
assert set(r) == {"node", "server uas", "control", "sip"}, r.keys()
assert r["node"]["duration"] == 0.3 and r["node"]["element"] == "uas" and r["node"]["next_hop"] is None
assert r["node"]["listen"] == "127.0.0.1:0" and d["listen"] != "127.0.0.1:0"  # asked, bound
assert r["server uas"]["buffer"] == 77 and r["control"]["kind"] == "loss"
assert r["sip"]["t1"] == 0.5 and r["control"]["target"] > 0  # defaults the keys never set
assert d["scenario"]["node.duration"] == "0.3"
PY

# ---- osn solve and osn fluid: no wall clock at all, identical files ----
for i in 1 2; do
    run 0 "solve $i" -- solve "$EX/extreme_load.ini" --json "$TMP/solve$i.json" --csv "$TMP/solve$i.csv" -q
    run 0 "fluid $i" -- fluid "$EX/fluid-burst.ini" --json "$TMP/fluid$i.json" -q
done
cmp -s "$TMP/solve1.json" "$TMP/solve2.json" && ok || bad "solve JSON differs between runs"
cmp -s "$TMP/solve1.csv" "$TMP/solve2.csv" && ok || bad "solve CSV differs between runs"
cmp -s "$TMP/fluid1.json" "$TMP/fluid2.json" && ok || bad "fluid JSON differs between runs"
if "$PY" - "$TMP/solve1.json" "$TMP/solve1.csv" "$TMP/fluid1.json" "$version" <<'PY'; then ok; else bad "solve/fluid version, log10"; fi
import csv, json, math, sys
s = json.load(open(sys.argv[1]))
row = next(csv.DictReader(open(sys.argv[2])))
f = json.load(open(sys.argv[3]))
assert s["osn_version"] == f["osn_version"] == row["osn_version"] == sys.argv[4]
# Beyond the double range: the exact string, and its log10 as a number (JSON and CSV).
assert isinstance(s["T_ret"], str) and "T_ret" in s["beyond_double_range"]
mant, exp = s["T_ret"].split("e")
assert abs(s["T_ret_log10"] - (int(exp) + math.log10(float(mant)))) < 1e-9, s["T_ret_log10"]
assert abs(float(row["T_ret_log10"]) - s["T_ret_log10"]) < 1e-9
assert abs(float(row["P0_log10"]) - s["P0_log10"]) < 1e-9
# Every log10 column is a number (or empty where the measure has no value).
for k, v in row.items():
    if k.endswith("_log10") and v:
        float(v)
PY

# ---- beyond the double range elsewhere: MMPP per-phase arrays, one-flow loss columns, the
# stationary distribution, optimize's constraint values: each string has a numeric log10 ----
printf '[model]\nkind = two-loop\n[thresholds]\nL = 0\nH = 1000\nR = 2000\n[arrivals]\nprocess = mmpp\nphase_rates = 40, 60\nphase_switch = 1, 1\n' >"$TMP/mmpp_extreme.ini"
run 0 "solve mmpp extreme" -- solve "$TMP/mmpp_extreme.ini" --json "$TMP/mx.json" --csv "$TMP/mx.csv" -q
run 0 "solve dist extreme" -- solve "$EX/extreme_load.ini" --dist "$TMP/dist.csv" -q
run 0 "optimize beyond" -- optimize "$EX/optimize/two_loop_constrained.ini" --set thresholds.R=140 \
    --set arrivals.rate=1000 --set arrivals.overload_rate=500 --set optimize.min_cycle=1e308 \
    --json "$TMP/opt.json" -q
if "$PY" - "$TMP/mx.json" "$TMP/mx.csv" "$TMP/dist.csv" "$TMP/opt.json" <<'PY'; then ok; else bad "log10 of arrays, loss, dist, optimize"; fi
import csv, json, math, sys
def lg(s):  # log10 of a decimal string of any magnitude
    mant, _, exp = s.partition("e")
    return math.log10(float(mant)) + int(exp or 0)
d = json.load(open(sys.argv[1]))
for key in ("T_ret_phase", "onset_phase"):
    vals = d[key]
    if any(isinstance(v, str) for v in vals):
        assert key in d["beyond_double_range"] and len(d[key + "_log10"]) == len(vals)
        for v, l in zip(vals, d[key + "_log10"]):
            assert abs(l - lg(str(v) if isinstance(v, str) else repr(v))) < 1e-9, (key, v, l)
    else:
        assert key + "_log10" not in d
assert isinstance(d["T_ret_phase"][0], str)  # this model's return time is beyond the range
row = next(csv.DictReader(open(sys.argv[2])))
assert row["loss_flow1_log10"] == row["theta_log10"] != "" and row["loss_flow2_log10"] == ""
rows = list(csv.DictReader(open(sys.argv[3])))
assert list(rows[0]) == ["mode", "n", "p", "p_log10"]
tiny = [r for r in rows if float(r["p"]) == 0]  # a float parser's 0: the log10 keeps them apart
assert tiny and len({r["p_log10"] for r in tiny}) > 1
for r in rows:
    assert abs(float(r["p_log10"]) - lg(r["p"])) < 1e-9, r
o = json.load(open(sys.argv[4]))
v = o["constraints"]["min_cycle"]
assert isinstance(v["value"], str) and abs(v["value_log10"] - lg(v["value"])) < 1e-9, v
assert isinstance(o["T_ret"], str) and abs(o["T_ret_log10"] - lg(o["T_ret"])) < 1e-9
PY

# ---- osn optimize --grid: KEY_log10 beside every measure ----
run 0 "optimize grid" -- optimize "$EX/optimize/two_loop_constrained.ini" --grid "$TMP/grid.csv" -q
if "$PY" - "$TMP/grid.csv" <<'PY'; then ok; else bad "optimize --grid log10 columns"; fi
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 190, len(rows)  # every pair 0 <= L < H < R = 20
for r in rows:
    for k in ("P0", "T_ret", "T_cyc", "nu01"):
        assert abs(float(r[k + "_log10"]) - math.log10(float(r[k]))) < 1e-12, (k, r)
PY

# ---- detectors in their own units ----
for det in occupancy delay; do
    run 0 "detector $det" -- sim "$EX/collapse.ini" "${NET[@]}" --set control.kind=local \
        --set control.detector=$det --json "$TMP/$det.json" -q
done
run 0 "no control" -- sim "$EX/collapse.ini" "${NET[@]}" --json "$TMP/none.json" -q
if "$PY" - "$TMP/occupancy.json" "$TMP/delay.json" "$TMP/none.json" <<'PY'; then ok; else bad "occupancy/delay detectors do not act"; fi
import json, sys
occ, dl, none = (json.load(open(p)) for p in sys.argv[1:4])
# 3x the core's capacity: each detector must spend most of the window out of normal mode,
# and the run must differ from the one without control.
for name, d in (("occupancy", occ), ("delay", dl)):
    assert d["core_P0"] < 0.5, (name, d["core_P0"])
    assert d["goodput"] != none["goodput"], name
    assert d["scenario"]["resolved"]["control"]["detector"] == name
assert occ["scenario"]["resolved"]["control"]["h1"] == 0.9
assert dl["scenario"]["resolved"]["control"]["h1"] == 0.1
assert none["core_P0"] == 1.0
PY
run 2 "occupancy h1 = 40" -- sim "$EX/collapse.ini" --set control.detector=occupancy --set control.h1=40
expect_err "occupancy h1 = 40" "control.h1" "fraction of time the CPU is busy"
run 2 "delay h2 = 80" -- sim "$EX/collapse.ini" --set control.detector=delay --set control.h2=80
expect_err "delay h2 = 80" "control.h2" "seconds" "Timer B"
run 2 "hysteretic h1 = 0.9" -- sim "$EX/collapse.ini" --set control.kind=local --set control.h1=0.9
expect_err "hysteretic h1 = 0.9" "control.h1" "counts messages"
summary
