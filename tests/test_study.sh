#!/usr/bin/env bash
# Parameter studies (run by CTest as cli_study): a 2 x 3 grid gives 6 points with their keys,
# each equal to the single run with those --set values; bad grids exit 2 naming the flag;
# --resume runs only the points a checkpoint lacks (counted by a marker the resumed points keep)
# and refuses a corrupted or foreign file, leaving it untouched; --precision stops at the
# replication count found by separate --replications runs, or at the maximum.
# Usage: test_study.sh OSN ROOT
set -u
OSN=$1
ROOT=$2
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$ROOT/tests/cli_lib.sh"
E=$ROOT/examples

# A short network run: 2 s after 1 s, one thread (the numbers do not depend on it).
NET=("$E/collapse.ini" --set net.time=2 --set net.warmup=1 --replications 2 --threads 1)
NODE=("$E/sim_md1.ini" --set sim.time=2000 --set sim.warmup=100 --replications 4 --threads 1)

# pycheck NAME SCRIPT ARGS...: a Python check; its stdout on failure says why.
pycheck() {
    local name=$1 script=$2
    shift 2
    if out=$("$PY" -c "$script" "$@" 2>&1); then ok; else bad "$name: $out"; fi
}

# Keys that measure the machine, not the model: left out when runs are compared.
SAME='
import json, sys
VOLATILE = {"msgs_per_s", "wall_s", "events_per_s", "timing", "study_id"}
def same(a, b, keys=None):
    ka = {k for k in a if k not in VOLATILE}
    kb = {k for k in b if k not in VOLATILE}
    # b is a point of a study: a with the keys the study adds
    return ka | (keys or set()) == kb and all(a[k] == b[k] for k in ka)
'

# ---- a 2 x 3 grid of the network simulator -------------------------------------------------
run 0 "net grid" -- sim "${NET[@]}" --set source.rate=200:600:400 \
    --set control.kind=none,loss,rate --json "$TMP/grid.json" --csv "$TMP/grid.csv" -q
pycheck "net grid: 6 points in grid order with their keys" "
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d) == 6, len(d)
want = [(r, k) for r in (200.0, 600.0) for k in ('none', 'loss', 'rate')]
got = [(p['source.rate'], p['control.kind']) for p in d]
assert got == want, got
assert all(p['control'] == p['control.kind'] for p in d), 'the run did not take the value'
assert len({p['study_id'] for p in d}) == 1
" "$TMP/grid.json"
pycheck "net grid: CSV has 6 rows and the varied keys" "
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 6, len(rows)
assert [r['control.kind'] for r in rows] == ['none', 'loss', 'rate'] * 2
assert [float(r['source.rate']) for r in rows] == [200.0] * 3 + [600.0] * 3
assert all(float(r['goodput']) > 0 for r in rows)
" "$TMP/grid.csv"
# Each point is the single run with its values (the study adds keys, it computes nothing).
for pt in "0 200 none" "4 600 loss"; do
    set -- $pt
    run 0 "net single $2 $3" -- sim "${NET[@]}" --set source.rate=$2 --set control.kind=$3 \
        --json "$TMP/one.json" -q
    pycheck "net grid point $1 = single run" "$SAME
d = json.load(open(sys.argv[1]))[int(sys.argv[3])]
one = json.load(open(sys.argv[2]))
assert same(one, d, {'source.rate', 'control.kind'}), 'differs'
" "$TMP/grid.json" "$TMP/one.json" "$1"
done

# ---- the queue simulator, osn solve and osn fluid -----------------------------------------
run 0 "node grid" -- sim "${NODE[@]}" --set thresholds.H=15,18 --set arrivals.rate=0.8:1.2:0.2 \
    --json "$TMP/node.json" -q
pycheck "node grid: 6 points" "
import json, sys
d = json.load(open(sys.argv[1]))
assert [(p['thresholds.H'], round(p['arrivals.rate'], 9)) for p in d] == \
    [(h, r) for h in (15.0, 18.0) for r in (0.8, 1.0, 1.2)], d
assert all(0 < p['P0'] <= 1 and p['replications'] == 4 for p in d)
" "$TMP/node.json"
run 0 "solve grid" -- solve "$E/two_loop_l0.9_5_10.ini" --set arrivals.rate=0.5,1.5 \
    --set thresholds.H=10:12:1 --json "$TMP/solve.json" -q
run 0 "solve single" -- solve "$E/two_loop_l0.9_5_10.ini" --set arrivals.rate=1.5 \
    --set thresholds.H=11 --json "$TMP/one.json" -q
pycheck "solve grid point 4 = single solve" "$SAME
d = json.load(open(sys.argv[1]))
assert len(d) == 6
assert (d[4]['arrivals.rate'], d[4]['thresholds.H']) == (1.5, 11.0)
one = json.load(open(sys.argv[2]))
assert same(one, d[4], {'arrivals.rate', 'thresholds.H'}), 'differs'
" "$TMP/solve.json" "$TMP/one.json"
run 0 "fluid list" -- fluid "$E/fluid-burst.ini" --set profile.burst_duration=1,2 \
    --csv "$TMP/fluid.csv" -q
pycheck "fluid: one CSV row per point" "
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r['profile.burst_duration'] for r in rows] == ['1', '2'], rows
assert rows[0]['state'] == 'recovered' and rows[1]['state'] != 'recovered'
" "$TMP/fluid.csv"

# A list-valued key keeps its commas: one value, not a grid (the loader names what is wrong).
run 2 "list-valued key" -- sim "${NET[@]}" --set source.mmpp_rates=1,2
expect_err "list-valued key" "process = mmpp"
if grep -qF "point 1 of" "$TMP/err"; then bad "list-valued key: taken for a grid"; else ok; fi

# ---- bad grids: exit 2, the flag named, no file --------------------------------------------
run 2 "empty list entry" -- solve --set thresholds.H=10,,12 --json "$TMP/bad.json"
expect_err "empty list entry" "--set thresholds.H=10,,12" "empty value"
run 2 "backward range" -- solve --set thresholds.H=12:10:1 --set thresholds.L=3,4 \
    --json "$TMP/bad.json"
expect_err "backward range" "--set thresholds.H=12:10:1" "LO:HI:STEP"
run 2 "key varied twice" -- solve --set thresholds.H=10,12 --set thresholds.H=13,14 \
    --json "$TMP/bad.json"
expect_err "key varied twice" "thresholds.H is varied twice"
run 2 "value listed twice" -- solve --set thresholds.H=10,10 --json "$TMP/bad.json"
expect_err "value listed twice" "'10' is listed twice"
run 2 "bad point" -- sim "${NODE[@]}" --set arrivals.rate=1.2,0.5 --json "$TMP/bad.json"
expect_err "bad point" "point 2 of 2 (arrivals.rate=0.5)" "arrivals.overload_rate"
run 2 "trace in a study" -- sim "${NET[@]}" --set control.kind=none,loss --trace "$TMP/t.csv"
expect_err "trace in a study" "--trace" "does not go with a study"
run 2 "replications-out in a study" -- sim "${NET[@]}" --set control.kind=none,loss \
    --replications-out "$TMP/r.csv"
expect_err "replications-out in a study" "--replications-out" "does not go with a study"
run 2 "precision of solve" -- solve --set thresholds.H=10,12 --precision 0.1
expect_err "precision of solve" "--precision" "exact"
run 2 "bad precision" -- sim "${NET[@]}" --precision 2
expect_err "bad precision" "--precision 2"
run 2 "max without precision" -- sim "${NET[@]}" --max-replications 9 --set control.kind=none,loss
expect_err "max without precision" "--max-replications" "--precision"
if [ -e "$TMP/bad.json" ] || [ -e "$TMP/t.csv" ]; then bad "a refused study wrote a file"; else ok; fi

# ---- --resume ------------------------------------------------------------------------------
# A checkpoint with 4 of the 6 points, each marked: the resumed study keeps the 4 as they are
# (marker and all) and runs the 2 others, which equal the full study's.
"$PY" -c "
import json, sys
d = json.load(open(sys.argv[1]))
keep = [p for i, p in enumerate(d) if i not in (1, 5)]
for p in keep:
    p['resumed_marker'] = True
json.dump(keep, open(sys.argv[2], 'w'), indent=1)
" "$TMP/grid.json" "$TMP/ckpt.json"
run 0 "resume" -- sim "${NET[@]}" --set source.rate=200:600:400 \
    --set control.kind=none,loss,rate --resume "$TMP/ckpt.json" --json "$TMP/resumed.json"
expect_err "resume" "study of 6 points: 4 from $TMP/ckpt.json, 2 to run"
pycheck "resume: 4 kept, 2 run, equal to the full study" "$SAME
full = json.load(open(sys.argv[1]))
res = json.load(open(sys.argv[2]))
ck = json.load(open(sys.argv[3]))
assert len(res) == 6
marked = [i for i, p in enumerate(res) if p.get('resumed_marker')]
assert marked == [0, 2, 3, 4], marked
for i in (1, 5):
    assert same(full[i], res[i]), i
assert len(ck) == 6 and ck == res, 'the checkpoint holds the whole study'
" "$TMP/grid.json" "$TMP/resumed.json" "$TMP/ckpt.json"
# A new checkpoint file is created and filled.
run 0 "resume new" -- solve "$E/two_loop_l0.9_5_10.ini" --set arrivals.rate=0.5,1.5 \
    --set thresholds.H=10:12:1 --resume "$TMP/new.json" -q
pycheck "resume new: 6 points" "
import json, sys
assert len(json.load(open(sys.argv[1]))) == 6
" "$TMP/new.json"

# Topped up: the same file as checkpoint and --json, one more value on a varied key runs 3 more.
run 0 "top up" -- solve "$E/two_loop_l0.9_5_10.ini" --set arrivals.rate=0.5,1.5 \
    --set thresholds.H=10:13:1 --resume "$TMP/new.json" --json "$TMP/new.json"
expect_err "top up" "study of 8 points: 6 from $TMP/new.json, 2 to run"
pycheck "top up: 8 points, the 6 first as they were" "
import json, sys
d = json.load(open(sys.argv[1]))
old = json.load(open(sys.argv[2]))
assert len(d) == 8 and [p for p in d if p['thresholds.H'] != 13.0] == old
" "$TMP/new.json" "$TMP/solve.json"
run 2 "resume stdin" -- solve --set thresholds.H=10,12 --resume -
expect_err "resume stdin" "--resume" "not -"

# Refused, byte for byte untouched: a truncated file, a single run's object, another study's.
head -c 300 "$TMP/grid.json" >"$TMP/trunc.json"
"$OSN" sim "${NET[@]}" --json "$TMP/single.json" -q
cp "$TMP/node.json" "$TMP/foreign.json"
for f in trunc single foreign; do
    cp "$TMP/$f.json" "$TMP/$f.orig"
    run 2 "resume $f" -- sim "${NET[@]}" --set source.rate=200:600:400 \
        --set control.kind=none,loss,rate --resume "$TMP/$f.json" -q
    expect_err "resume $f" "--resume $TMP/$f.json" "left as it is"
    cmp -s "$TMP/$f.json" "$TMP/$f.orig" && ok || bad "resume $f: the file was changed"
done
expect_err "resume foreign" "another study"
# The same grid with another seed is another study.
run 2 "resume other seed" -- sim "${NET[@]}" --seed 7 --set source.rate=200:600:400 \
    --set control.kind=none,loss,rate --resume "$TMP/ckpt.json" -q
expect_err "resume other seed" "another study"

# ---- --precision ---------------------------------------------------------------------------
# Rounds double from 4: the stop is the first N of 4, 8, 16, ... whose goodput and setup delay
# half-widths are within 5% of their estimates, found here by separate --replications N runs.
P=("$E/collapse.ini" --set net.time=2 --set net.warmup=1 --set source.rate=600 --threads 1)
want=""
for n in 4 8 16 32 64 128; do
    "$OSN" sim "${P[@]}" --replications $n --json "$TMP/r$n.json" -q
    if "$PY" -c "
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if all(d[k + '_ci'] <= 0.05 * abs(d[k]) for k in ('goodput', 'setup_delay_mean')) else 1)
" "$TMP/r$n.json"; then
        want=$n
        break
    fi
done
[ -n "$want" ] && [ "$want" -gt 4 ] && ok || bad "precision: the reference needs > 4 replications, got '$want'"
run 0 "precision" -- sim "${P[@]}" --precision 0.05 --json "$TMP/prec.json"
expect_err "precision" "precision reached with $want replications"
pycheck "precision: stops at the predicted count with the --replications numbers" "$SAME
d = json.load(open(sys.argv[1]))[0]
ref = json.load(open(sys.argv[2]))
assert d['precision_reached'] is True and d['replications'] == int(sys.argv[3]), d['replications']
assert same(ref, d, {'precision_target', 'precision_reached', 'precision_rounds'}), 'differs'
" "$TMP/prec.json" "$TMP/r$want.json" "$want"
run 0 "precision max" -- sim "${P[@]}" --precision 0.0001 --max-replications 12 \
    --json "$TMP/max.json"
expect_err "precision max" "precision NOT reached, stopped at the maximum" "12 replications (3 rounds)"
pycheck "precision max: 12 replications, not reached" "
import json, sys
d = json.load(open(sys.argv[1]))[0]
assert d['precision_reached'] is False and d['replications'] == 12 and d['precision_rounds'] == 3
" "$TMP/max.json"

summary
