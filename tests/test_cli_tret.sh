#!/usr/bin/env bash
# Command-line tests of the return time's distribution (run by CTest as cli_tret):
# `osn solve --dist-tret` (a CSV a dataframe loads, a survival curve that starts at 1 and falls
# monotonically to 0.001, the quantiles of the table/JSON/CSV on that curve), `osn sim
# --dist-tret` against it within the Dvoretzky-Kiefer-Wolfowitz band, and every bad value of
# the flags refused with exit status 2 and no file left behind.
# Usage: test_cli_tret.sh OSN ROOT
set -u
OSN=$1
ROOT=$2
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$ROOT/tests/cli_lib.sh"

# ---- osn solve: curve and quantiles ----
run 0 "solve --dist-tret" -- solve --dist-tret "$TMP/tr.csv" --dist-tret-points 2001 \
    --json "$TMP/s.json" --csv "$TMP/s.csv"
if "$PY" - "$TMP" <<'EOF'; then ok; else bad "solve --dist-tret curve or quantiles"; fi
import csv, json, math, sys
d = sys.argv[1]
rows = list(csv.reader(open(f"{d}/tr.csv")))
assert rows[0] == ["t_s", "survival", "t_s_log10"], rows[0]
t = [float(r[0]) for r in rows[1:]]
# log10 t beside t (empty at t = 0), as for every value that may leave the double range.
assert rows[1][2] == "" and all(abs(float(r[2]) - math.log10(float(r[0]))) < 1e-12 for r in rows[2:])
s = [float(r[1]) for r in rows[1:]]
assert len(t) == 2001 and t[0] == 0 and s[0] == 1
assert all(0 <= b <= a <= 1 for a, b in zip(s, s[1:])), "not monotone in [0, 1]"
assert abs(s[-1] - 0.001) < 1e-9, s[-1]
def surv(x):  # linear interpolation of the curve
    for i in range(1, len(t)):
        if t[i] >= x:
            w = (x - t[i - 1]) / (t[i] - t[i - 1])
            return s[i - 1] + w * (s[i] - s[i - 1])
    return s[-1]
j = json.load(open(f"{d}/s.json"))
c = next(csv.DictReader(open(f"{d}/s.csv")))
for q in (50, 90, 95, 99):
    v = j[f"T_ret_p{q}"]
    assert float(c[f"T_ret_p{q}"]) == v
    assert abs(surv(v) - (1 - q / 100)) < 2e-4, (q, v, surv(v))
# The curve's mean (trapezoids, plus the tail beyond the 99.9% point, which the exponential
# bound makes small) against the linear solve's T_ret.
area = sum((t[i] - t[i - 1]) * (s[i] + s[i - 1]) / 2 for i in range(1, len(t)))
assert abs(area - j["T_ret"]) < 0.01 * j["T_ret"], (area, j["T_ret"])
assert 0 <= j["T_ret_dist_err"] < 1e-9
EOF

# Non-exponential service: no quantiles (n/a, null) and --dist-tret refused.
run 0 "solve det" -- solve --set service.law=det --json "$TMP/det.json"
if "$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(j['T_ret_p50'] is not None)" \
    "$TMP/det.json"; then ok; else bad "det service: T_ret_p50 should be null"; fi
run 2 "solve det --dist-tret" -- solve --set service.law=det --dist-tret "$TMP/no.csv"
expect_err "solve det --dist-tret" "--dist-tret" "exponential service"

# A long, nearly deterministic return time (a drift over 25,000 levels): out of the method's
# reach, so the quantiles are null and --dist-tret is refused rather than approximated.
big="--set thresholds.L=25000 --set thresholds.H=50000 --set thresholds.R=100000"
run 0 "solve R=1e5" -- solve $big --json "$TMP/big.json"
if "$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(j['T_ret_p50'] is not None or j['T_ret_sd'] is None)" \
    "$TMP/big.json"; then ok; else bad "R=1e5: T_ret_p50 should be null"; fi
run 2 "solve R=1e5 --dist-tret" -- solve $big --dist-tret "$TMP/no.csv"
expect_err "solve R=1e5 --dist-tret" "--dist-tret" "nearly deterministic"

# Bad flag values: exit 2, the flag named, no file written.
for v in 0 1 1000001 abc -5 ""; do
    run 2 "solve --dist-tret-points '$v'" -- solve --dist-tret "$TMP/no.csv" --dist-tret-points "$v"
    expect_err "solve --dist-tret-points '$v'" "--dist-tret-points"
    run 2 "sim --dist-tret-points '$v'" -- sim --dist-tret "$TMP/no.csv" --dist-tret-points "$v"
    expect_err "sim --dist-tret-points '$v'" "--dist-tret-points"
done
run 2 "solve --dist-tret-points alone" -- solve --dist-tret-points 10
expect_err "solve --dist-tret-points alone" "needs --dist-tret"
run 2 "sim --dist-tret-points alone" -- sim --dist-tret-points 10
expect_err "sim --dist-tret-points alone" "needs --dist-tret"
run 2 "solve --dist-tret into a missing directory" -- solve --dist-tret "$TMP/nodir/x.csv"
run 2 "sim, no episode ends" -- sim --set sim.time=1 --set sim.warmup=0 --dist-tret "$TMP/no.csv" -q
expect_err "sim, no episode ends" "no overload episode"
[ -e "$TMP/no.csv" ] && bad "a refused run left $TMP/no.csv" || ok

# ---- osn sim: the empirical curve within the DKW band of the exact one ----
run 0 "sim --dist-tret" -- sim --set sim.time=1e5 --seed 3 -q --dist-tret "$TMP/sim.csv" \
    --json "$TMP/sim.json"
if "$PY" - "$TMP" <<'EOF'; then ok; else bad "sim --dist-tret vs the exact curve"; fi
import csv, json, math, sys
d = sys.argv[1]
ex = [(float(a), float(b)) for a, b, _ in list(csv.reader(open(f"{d}/tr.csv")))[1:]]
rows = list(csv.reader(open(f"{d}/sim.csv")))
assert rows[0] == ["t_s", "survival", "t_s_log10"]
sim = [(float(a), float(b)) for a, b, _ in rows[1:]]
assert len(sim) == 201 and sim[0] == (0.0, 1.0)
assert all(0 <= b[1] <= a[1] <= 1 for a, b in zip(sim, sim[1:]))
j = json.load(open(f"{d}/sim.json"))
# Episodes: nu01 x time x replications, less 10% for safety (a smaller n widens the band).
n = 0.9 * j["nu01"] * 1e5 * j["replications"]
eps = math.sqrt(math.log(2 / 1e-3) / (2 * n))  # P(sup |F_n - F| > eps) <= 1e-3
def surv(x):
    for i in range(1, len(ex)):
        if ex[i][0] >= x:
            w = (x - ex[i - 1][0]) / (ex[i][0] - ex[i - 1][0])
            return ex[i - 1][1] + w * (ex[i][1] - ex[i - 1][1])
    return ex[-1][1]
worst = max(abs(b - surv(a)) for a, b in sim)
assert worst < eps, (worst, eps)
for q in (50, 90, 95, 99):
    assert f"T_ret_p{q}" in j and f"T_ret_p{q}_ci" in j
EOF

# ---- beyond the double range: t a decimal string, t_s_log10 its number ----
run 0 "solve --dist-tret at extreme load" -- solve "$ROOT/examples/extreme_load.ini" \
    --dist-tret "$TMP/ex.csv" --dist-tret-points 5 --json "$TMP/ex.json" -q
if "$PY" - "$TMP" <<'EOF'; then ok; else bad "extreme-load curve: t_s_log10"; fi
import csv, json, math, sys
d = sys.argv[1]
rows = list(csv.reader(open(f"{d}/ex.csv")))[1:]
j = json.load(open(f"{d}/ex.json"))
# The last row is the 99.9% quantile: for this (exponential) return time ln 1000 x the mean.
top = float(rows[-1][2])
want = j["T_ret_log10"] + math.log10(math.log(1000))
assert abs(top - want) < 1e-6, (top, want)
assert rows[-1][0].endswith("e+" + str(int(top))), rows[-1][0]  # the exact decimal string
assert all(float(b[2]) > float(a[2]) for a, b in zip(rows[1:], rows[2:]))
EOF

summary
