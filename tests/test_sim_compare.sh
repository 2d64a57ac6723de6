#!/usr/bin/env bash
# Common random numbers and `osn sim --compare` (run by CTest as cli_sim_compare).
# - Light load, where no control acts: none, loss and rate offer the same calls and set up the
#   same ones, bit for bit (offered and goodput equal, their differences exactly 0).
# - 3x overload, where the controls act: the offered count is still the same in every run (each
#   source draws its arrivals from a stream of its own), the goodput is not.
# - --compare's estimates are those of the plain runs with the same --set values.
# - At the core's capacity (collapse.ini at 370 calls/s, the controls starting to act) the
#   paired 95% interval of goodput(rate) - goodput(loss) is at least 3x narrower than both the
#   Welch interval of the same replications and the one the two runs' own intervals give.
# - The core's overload measures (core_overload = P1 + P2, core_T_ret, core_P1, core_P2) are
#   paired too: under shared MMPP bursts the paired interval of core_overload is narrower.
# - The node: thresholds never reached give identical runs; L = 8 against 10 on the two-loop
#   model puts the exact differences (osn solve) inside the paired intervals, at least 2x
#   narrower than the unpaired ones for P0 and throughput.
# - Bad --compare requests exit 2 naming the flag or key, and write no file.
# Usage: test_sim_compare.sh OSN ROOT
set -u
OSN=$1
ROOT=$2
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$ROOT/tests/cli_lib.sh"
E=$ROOT/examples
SHORT=(--set net.time=5 --set net.warmup=2 --threads 1)

pycheck() {
    local name=$1 script=$2
    shift 2
    if out=$("$PY" -c "$script" "$@" 2>&1); then ok; else bad "$name: $out"; fi
}

# ---- light load: identical runs ------------------------------------------------------------
run 0 "light load" -- sim "$E/collapse.ini" "${SHORT[@]}" --set source.rate=100 --replications 4 \
    --compare control.kind=none,loss,rate --json "$TMP/light.json" -q
pycheck "light load identical" '
import json, sys
rows = json.load(open(sys.argv[1]))
assert [r["compare_value"] for r in rows] == ["none", "loss", "rate"], rows
ref = rows[0]
assert ref["offered"] > 90 and ref["goodput"] > 90, ref
for r in rows[1:]:
    for k in ("offered", "goodput", "setup_delay_mean"):
        assert r[k] == ref[k], (r["compare_value"], k, r[k], ref[k])
        assert r[k + "_diff"] == 0 and r[k + "_diff_ci"] == 0, (k, r)
    assert r["goodput_diff_n"] == 4, r
' "$TMP/light.json"

# ---- overload: the same offered calls, different goodput -----------------------------------
run 0 "overload" -- sim "$E/collapse.ini" "${SHORT[@]}" --replications 3 \
    --compare control.kind=none,loss,rate --json "$TMP/heavy.json" -q
pycheck "overload same offered" '
import json, sys
rows = json.load(open(sys.argv[1]))
off = {r["offered"] for r in rows}
assert len(off) == 1 and rows[0]["offered"] > 1000, off
assert all(r["offered_diff"] == 0 for r in rows), rows
good = [r["goodput"] for r in rows]
assert good[1] > 1.5 * good[0] and good[2] > 1.5 * good[0], good  # the controls act
' "$TMP/heavy.json"

# ---- the estimates are the plain runs' ------------------------------------------------------
run 0 "plain loss" -- sim "$E/collapse.ini" "${SHORT[@]}" --replications 3 \
    --set control.kind=loss --json "$TMP/plain.json" -q
pycheck "compare = plain run" '
import json, sys
rows, plain = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
loss = rows[1]
assert loss["compare_value"] == "loss"
for k in ("offered", "goodput", "setup_delay_mean", "failed", "retrans_ratio"):
    assert abs(loss[k] - plain[k]) <= 1e-9 * abs(plain[k]), (k, loss[k], plain[k])
    assert abs(loss[k + "_ci"] - plain[k + "_ci"]) <= 1e-9 * abs(plain[k + "_ci"]), k
' "$TMP/heavy.json" "$TMP/plain.json"

# ---- paired against unpaired at capacity ---------------------------------------------------
run 0 "at capacity" -- sim "$E/collapse.ini" "${SHORT[@]}" --set source.rate=370 \
    --replications 10 --compare control.kind=loss,rate --json "$TMP/cap.json" \
    --csv "$TMP/cap.csv" -q
pycheck "paired narrower" '
import json, math, sys
loss, rate = json.load(open(sys.argv[1]))
paired, welch = rate["goodput_diff_ci"], rate["goodput_diff_ci_unpaired"]
# the interval the two runs give on their own (each its jackknife half-width)
own = math.hypot(loss["goodput_ci"], rate["goodput_ci"])
assert rate["goodput_diff_n"] == 10, rate
assert paired > 0 and 3 * paired <= welch, (paired, welch)
assert 3 * paired <= own, (paired, own)
# the Welch interval is the same replications taken as independent: close to the runs own
assert 0.5 * own <= welch <= 2 * own, (welch, own)
assert abs(rate["goodput_diff"] - (rate["goodput"] - loss["goodput"])) < 1e-6, rate
' "$TMP/cap.json"
pycheck "csv" '
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
js = json.load(open(sys.argv[2]))
assert len(rows) == 2 and rows[1]["compare_value"] == "rate", rows
assert float(rows[1]["goodput_diff_ci"]) == js[1]["goodput_diff_ci"], rows[1]
assert rows[0]["goodput_diff_ci"] == "", rows[0]
' "$TMP/cap.csv" "$TMP/cap.json"

# ---- the core's overload measures, paired ---------------------------------------------------
# Study 01's set-up, short: MMPP bursts (600 calls/s = 1.6x capacity for 1 s on average, 200/s
# between) at RTT 10 ms, loss against rate. The core's time in overload follows the bursts, which
# replication i of both runs shares (common random numbers), so the paired interval of
# core_overload(rate) - core_overload(loss) must be narrower than the Welch one. Each run's
# core_overload is its core_P1 + core_P2, and the difference is that of the two estimates.
run 0 "overload measures" -- sim "$E/collapse.ini" --set net.time=60 --set net.warmup=10 \
    --threads 1 --set source.process=mmpp --set "source.mmpp_rates=200, 600" \
    --set "source.mmpp_switch=0.5, 1" --set "link trunk.delay=0.005" --replications 6 \
    --compare control.kind=loss,rate --json "$TMP/ovl.json" --csv "$TMP/ovl.csv" -q
pycheck "overload measures paired" '
import csv, json, sys
loss, rate = json.load(open(sys.argv[1]))
for r in (loss, rate):
    assert 0.05 < r["core_overload"] < 0.5, r
    assert abs(r["core_overload"] - r["core_P1"] - r["core_P2"]) < 1e-9, r
    assert 0.1 < r["core_T_ret"] < 2, r
d = rate["core_overload_diff"]
assert rate["core_overload_diff_n"] == 6, rate
assert abs(d - (rate["core_overload"] - loss["core_overload"])) < 1e-9, rate
paired, welch = rate["core_overload_diff_ci"], rate["core_overload_diff_ci_unpaired"]
assert 0 < paired and 2 * paired < welch, (paired, welch)
for k in ("core_T_ret", "core_P1", "core_P2"):
    assert rate[k + "_diff_n"] == 6 and rate[k + "_diff_ci"] > 0, (k, rate)
rows = list(csv.DictReader(open(sys.argv[2])))
assert float(rows[1]["core_overload_diff_ci"]) == paired, rows[1]
' "$TMP/ovl.json" "$TMP/ovl.csv"

# ---- the queue simulator ----------------------------------------------------------------------
# Thresholds never reached (load 0.3, H = 18 or 19 of R = 20): the same arrivals and services,
# so the same run bit for bit.
NODE=("$E/sim_two_loop.ini" --set sim.time=20000 --threads 1)
run 0 "node light" -- sim "${NODE[@]}" --set arrivals.rate=0.3 --set arrivals.overload_rate=0.15 \
    --compare thresholds.H=18,19 --json "$TMP/nlight.json" -q
pycheck "node light identical" '
import json, sys
a, b = json.load(open(sys.argv[1]))
for k in ("P0", "throughput", "T_ret"):
    assert a[k] == b[k], (k, a[k], b[k])
assert b["throughput_diff"] == 0 and b["throughput_diff_ci"] == 0, b
assert 0.29 < a["throughput"] < 0.31 and a["P0"] == 1, a
' "$TMP/nlight.json"
# L = 8 against 10 on the two-loop model: the exact differences (osn solve) inside the paired
# intervals, which are at least 2x narrower than the unpaired ones for P0 and throughput.
run 0 "node compare" -- sim "${NODE[@]}" --compare thresholds.L=8,10 --json "$TMP/node.json" -q
for L in 8 10; do
    run 0 "solve L=$L" -- solve "$E/two_loop_l1.2_10_15.ini" --set thresholds.L=$L \
        --json "$TMP/exact$L.json" -q
done
pycheck "node paired vs exact" '
import json, sys
a, b = json.load(open(sys.argv[1]))
e8, e10 = (json.load(open(f)) for f in sys.argv[2:4])
for k in ("P0", "T_ret", "throughput"):
    exact = e10[k] - e8[k]
    assert abs(b[k + "_diff"] - exact) <= b[k + "_diff_ci"], (k, b[k + "_diff"], b[k + "_diff_ci"], exact)
for k in ("P0", "throughput"):
    assert 2 * b[k + "_diff_ci"] <= b[k + "_diff_ci_unpaired"], (k, b)
' "$TMP/node.json" "$TMP/exact8.json" "$TMP/exact10.json"

# ---- refused ---------------------------------------------------------------------------------
refused() { # NAME TEXT ARGS...: exit 2, TEXT on stderr, no --json file
    local name=$1 text=$2
    shift 2
    rm -f "$TMP/no.json"
    run 2 "$name" -- sim "$@" --json "$TMP/no.json"
    expect_err "$name" "$text"
    if [ -e "$TMP/no.json" ]; then bad "$name: wrote $TMP/no.json"; else ok; fi
}
refused "one value" "at least two values" "$E/collapse.ini" --compare control.kind=loss
refused "empty value" "an empty value" "$E/collapse.ini" --compare control.kind=loss,,rate
refused "no key" "KEY=A,B" "$E/collapse.ini" --compare loss,rate
refused "seed key" "share their seed" "$E/collapse.ini" --compare net.seed=1,2
refused "bad value" "control.kind=lost" "$E/collapse.ini" --compare control.kind=loss,lost
refused "range" "a range is a study" "$E/collapse.ini" --compare control.kind=loss,rate \
    --set source.rate=100:300:100
refused "key also set" "the key --compare varies" "$E/collapse.ini" \
    --compare control.kind=loss,rate --set control.kind=none
refused "one replication" "2 replications or more" "$E/collapse.ini" \
    --compare control.kind=loss,rate --replications 1
refused "node seed key" "share their seed" "$E/sim_md1.ini" --compare sim.seed=1,2
refused "trace" "--trace" "$E/collapse.ini" --compare control.kind=loss,rate --trace "$TMP/t.csv"

summary
