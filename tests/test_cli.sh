#!/usr/bin/env bash
# Command-line tests of `osn` (run by CTest as: bash tests/test_cli.sh PATH_TO_osn REPO_ROOT).
#
# Checks exit statuses (0 on success, 2 on every error), that error messages name FILE:LINE and
# the key, that a failed run leaves no output file behind, that --json parses and echoes the
# scenario, that --dist sums to 1, that every example runs and reproduces the reference table,
# and that the help texts work. Prints "N passed, M failed" last; exits non-zero on any failure.
set -u

OSN=${1:?usage: test_cli.sh PATH_TO_osn REPO_ROOT}
ROOT=${2:?usage: test_cli.sh PATH_TO_osn REPO_ROOT}
PY=${PYTHON:-python3}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/osn_test_cli.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

# shellcheck source=tests/cli_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"

# one_line NAME: the error is exactly one line starting "osn solve: ".
one_line() {
    if [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q '^osn solve: ' "$TMP/err"; then
        ok
    else
        bad "$1: expected one 'osn solve: ...' line on stderr, got: $(head -c 300 "$TMP/err")"
    fi
}

# no_file NAME PATH: nothing at PATH and no temporary next to it.
no_file() {
    if [ -e "$2" ] || compgen -G "$2.tmp.*" >/dev/null; then
        bad "$1: $2 (or a temporary) exists after a failed run"
    else
        ok
    fi
}

scenario() { # scenario NAME CONTENT: writes $TMP/NAME.ini
    printf '%s\n' "$2" >"$TMP/$1.ini"
}

# ---- help and dispatch ----
run 0 "osn --help" -- --help
grep -q 'solve' "$TMP/out" && ok || bad "osn --help does not list solve"
run 0 "osn --version" -- --version
grep -q '^osn [0-9]' "$TMP/out" && ok || bad "osn --version: $(cat "$TMP/out")"
run 0 "osn solve --help" -- solve --help
for t in 'Usage: osn solve' '--set SECTION.KEY=VALUE' '--method' '--json' '--csv' '--dist' \
    'overload_accept' 'Exit status' 'Example'; do
    grep -qF -- "$t" "$TMP/out" && ok || bad "osn solve --help lacks '$t'"
done
cp "$TMP/out" "$TMP/solve_help"
run 0 "osn help solve" -- help solve
cmp -s "$TMP/out" "$TMP/solve_help" && ok || bad "osn help solve differs from osn solve --help"
run 2 "unknown subcommand" -- frobnicate
expect_err "unknown subcommand" "frobnicate"
# (no subcommand is planned-only any more since `osn sim` exists; tests/test_cli_sim.sh)
run 0 "osn help sim" -- help sim
run 2 "no arguments" --

# ---- success and the default table ----
run 0 "defaults" -- solve
for t in "two-loop M|M|1 <L,H>|<H,R>: L=5 H=10 R=20, lambda=1.2 lambda'=0.6 mu=1, policy I" \
    'method: ' 'T_ret' 'T_cyc' 'P0'; do
    grep -qF -- "$t" "$TMP/out" && ok || bad "default table lacks '$t'"
done
run 0 "quiet" -- solve -q
[ -s "$TMP/out" ] && bad "-q still printed: $(head -1 "$TMP/out")" || ok

# ---- errors: exit 2, one line, FILE:LINE and key ----
scenario unknown_key '[arrivals]
rate = 1.2
burst = 3'
run 2 "unknown key" -- solve "$TMP/unknown_key.ini"
expect_err "unknown key" "$TMP/unknown_key.ini:3" "arrivals.burst"
one_line "unknown key"

scenario bad_number '[model]
kind = two-loop

[service]
rate = 1.o'
run 2 "bad number" -- solve "$TMP/bad_number.ini"
expect_err "bad number" "$TMP/bad_number.ini:5" "service.rate" "not a number"
one_line "bad number"

run 2 "missing file" -- solve "$TMP/no_such.ini"
expect_err "missing file" "$TMP/no_such.ini"
one_line "missing file"

scenario order '[thresholds]
L = 10
H = 5
R = 20'
run 2 "thresholds out of order" -- solve "$TMP/order.ini"
expect_err "thresholds out of order" "$TMP/order.ini:3" "thresholds.H"
one_line "thresholds out of order"

run 2 "bad --set syntax" -- solve --set arrivals.rate
expect_err "bad --set syntax" "--set arrivals.rate" "SECTION.KEY=VALUE"
run 2 "bad --set value" -- solve --set arrivals.rate=fast
expect_err "bad --set value" "--set arrivals.rate=fast" "arrivals.rate"
run 2 "--set unknown law" -- solve --set service.law=weibull
expect_err "--set unknown law" "--set service.law=weibull" "service.law" "expected one of"
run 2 "--set unknown key" -- solve --set service.shape=2
expect_err "--set unknown key" "--set service.shape=2" "unknown key 'service.shape'"
run 2 "unknown flag" -- solve --frobnicate
expect_err "unknown flag" "--frobnicate"
one_line "unknown flag"
run 2 "missing option value" -- solve --json
expect_err "missing option value" "--json"
run 2 "bad method" -- solve --method fastest
expect_err "bad method" "--method"
run 2 "two scenario files" -- solve "$TMP/order.ini" "$TMP/order.ini"

run 2 "closed on bi-level" -- solve "$ROOT/examples/bi_level.ini" --method closed
expect_err "closed on bi-level" "--method closed"
one_line "closed on bi-level"
run 0 "closed on two-loop" -- solve "$ROOT/examples/exact_tiny.ini" --method closed
grep -q '^method: closed' "$TMP/out" && ok || bad "--method closed did not run closed forms"

scenario too_big '[thresholds]
R = 1000000000'
run 2 "R too big" -- solve "$TMP/too_big.ini"
expect_err "R too big" "$TMP/too_big.ini:2" "thresholds.R"

# ---- nothing written by a failed run ----
run 2 "failed run, --json file" -- solve "$TMP/unknown_key.ini" --json "$TMP/fail.json" \
    --csv "$TMP/fail.csv" --dist "$TMP/fail_dist.csv"
no_file "failed run" "$TMP/fail.json"
no_file "failed run" "$TMP/fail.csv"
no_file "failed run" "$TMP/fail_dist.csv"
run 2 "failed solve, --dist file" -- solve "$ROOT/examples/bi_level.ini" --method closed \
    --json "$TMP/fail2.json" --dist "$TMP/fail2_dist.csv"
no_file "failed solve" "$TMP/fail2.json"
no_file "failed solve" "$TMP/fail2_dist.csv"
# The JSON temporary is already written when the CSV cannot be created: it must go too.
run 2 "output into a missing directory" -- solve --json "$TMP/ok.json" \
    --csv "$TMP/no/such/dir/out.csv" --dist "$TMP/ok_dist.csv"
no_file "output into a missing directory" "$TMP/ok.json"
no_file "output into a missing directory" "$TMP/ok_dist.csv"
expect_err "output into a missing directory" "$TMP/no/such/dir/out.csv"
one_line "output into a missing directory"
# A failed run does not touch an existing file either.
echo old >"$TMP/keep.json"
run 2 "failed run keeps old file" -- solve --set thresholds.H=99 --json "$TMP/keep.json"
[ "$(cat "$TMP/keep.json")" = old ] && ok || bad "failed run changed an existing output file"
compgen -G "$TMP/keep.json.tmp.*" >/dev/null && bad "temporary left next to keep.json" || ok

# ---- outputs that are not regular files ("Output files" in docs/commands/solve.md) ----
# Devices are written directly, never replaced: `make` as root once turned /dev/null into a
# regular file (an output was renamed over it).
run 0 "json to /dev/null" -- solve "$ROOT/examples/exact_tiny.ini" --json /dev/null -q
[ -c /dev/null ] && ok || bad "--json /dev/null replaced /dev/null"
run 0 "json to /dev/stdout" -- solve "$ROOT/examples/exact_tiny.ini" --json /dev/stdout -q
"$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/out" && ok ||
    bad "--json /dev/stdout printed no JSON: $(head -c 200 "$TMP/out")"
if [ -c /dev/full ]; then
    # A full disk on the last output: no output of the run lands (all or none).
    run 2 "json to /dev/full" -- solve "$ROOT/examples/exact_tiny.ini" --csv "$TMP/full.csv" \
        --dist "$TMP/full_dist.csv" --json /dev/full -q
    expect_err "json to /dev/full" "/dev/full" "No space left on device"
    no_file "json to /dev/full" "$TMP/full.csv"
    no_file "json to /dev/full" "$TMP/full_dist.csv"
    [ -c /dev/full ] && ok || bad "--json /dev/full replaced /dev/full"
fi
echo old >"$TMP/real.json"
ln -s real.json "$TMP/link.json"
run 0 "json through a symlink" -- solve "$ROOT/examples/exact_tiny.ini" --json "$TMP/link.json" -q
[ -L "$TMP/link.json" ] && [ "$(head -c 1 "$TMP/real.json")" = "{" ] && ok ||
    bad "--json through a symlink: link replaced or target not written"

# ---- JSON ----
run 0 "json file" -- solve "$ROOT/examples/two_flows.ini" --set thresholds.R=25 \
    --json "$TMP/out.json"
[ -s "$TMP/out" ] && ok || bad "--json FILE suppressed the table"
if "$PY" - "$TMP/out.json" "$ROOT/examples/two_flows.ini" <<'EOF'; then ok; else bad "json content"; fi
import json, sys
d = json.load(open(sys.argv[1]))
need = ("P0 P1 P2 N_mean throughput sojourn T_ret T_ret_sd T_cyc T_norm T_disc mode_change_rate "
        "theta states nu01 nu12 T_ret_renewal prob_sum method loss_flow1 loss_flow2 "
        "beyond_double_range scenario").split()
missing = [k for k in need if k not in d]
assert not missing, missing
s = d["scenario"]
assert s["kind"] == "two-loop" and s["policy"] == "I", s
assert s["L"] == 5 and s["H"] == 10 and s["R"] == 25 and s["H2"] == 25, s
assert s["flows"] == 2 and s["rate1"] == 0.6 and s["rate2"] == 0.6 and s["mu"] == 1, s
assert s["source"] == sys.argv[2], s["source"]
assert s["keys"]["thresholds.R"] == "25", s["keys"]
assert s["keys"]["arrivals.flows"] == "2", s["keys"]
assert abs(d["P0"] + d["P1"] + d["P2"] - 1) < 1e-12
assert abs(d["loss_flow2"] - (d["P1"] + d["P2"])) < 1e-12
assert d["beyond_double_range"] == []
EOF

run 0 "json stdout" -- solve --json -
if "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["scenario"]["source"] is None and d["scenario"]["keys"] == {} and "loss_flow2" not in d and d["loss_flow1"] == d["theta"]' "$TMP/out"; then
    ok
else
    bad "--json - is not the bare JSON of the defaults: $(head -c 200 "$TMP/out")"
fi

run 0 "json beyond double range" -- solve "$ROOT/examples/extreme_load.ini" --json "$TMP/big.json" -q
if "$PY" - "$TMP/big.json" <<'EOF'; then ok; else bad "beyond_double_range"; fi
import json, sys
d = json.load(open(sys.argv[1]))
b = d["beyond_double_range"]
assert "T_cyc" in b and "P0" in b, b
for k in b:
    assert isinstance(d[k], str) and "e" in d[k], (k, d[k])
assert "e+14" in d["T_cyc"] and "e-14" in d["P0"], (d["T_cyc"], d["P0"])
assert isinstance(d["P1"], float)
EOF
grep -q 'inf' "$TMP/out" && bad "table printed inf" || ok

# ---- CSV ----
run 0 "csv" -- solve --csv "$TMP/out.csv" -q
if "$PY" - "$TMP/out.csv" <<'EOF'; then ok; else bad "csv content"; fi
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert len(rows) == 2 and len(rows[0]) == len(rows[1]), rows
r = dict(zip(*rows))
assert abs(float(r["P0"]) + float(r["P1"]) + float(r["P2"]) - 1) < 1e-12
assert r["method"] in ("general", "closed")
EOF

# ---- stationary distribution ----
run 0 "dist" -- solve "$ROOT/examples/two_loop_l1.2_10_15.ini" --dist "$TMP/dist.csv" -q
if "$PY" - "$TMP/dist.csv" <<'EOF'; then ok; else bad "dist does not sum to 1"; fi
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert list(rows[0].keys()) == ["mode", "n", "p", "p_log10"], rows[0].keys()
s = sum(float(r["p"]) for r in rows)
assert abs(s - 1) < 1e-12, s
assert {r["mode"] for r in rows} == {"0", "1", "2"}
EOF
run 0 "dist tiny" -- solve "$ROOT/examples/exact_tiny.ini" --dist - --method closed
if "$PY" -c 'import sys; l=open(sys.argv[1]).read().split(); assert l[0]=="mode,n,p,p_log10" and len(l)==6 and abs(sum(float(x.split(",")[2]) for x in l[1:])-1)<1e-15, l' "$TMP/out"; then
    ok
else
    bad "--dist - on the tiny model: $(cat "$TMP/out")"
fi

# ---- every example runs with its command; the reference rows are reproduced ----
# Examples of other commands are named after them: sim_*, fluid-*, optimize_*; a SIP network
# (a [net] section: collapse.ini, tandem.ini, fanin.ini) runs with sim.
for f in "$ROOT"/examples/*.ini; do
    case "$(basename "$f")" in
    sim_* | sim-*) cmd=sim ;;
    fluid_* | fluid-*) cmd=fluid ;;
    optimize_* | optimize-*) cmd=optimize ;;
    *) cmd=solve ;;
    esac
    grep -q '^\[net\]' "$f" && cmd=sim
    [ "$cmd" = solve ] || "$OSN" help "$cmd" >/dev/null 2>&1 || continue # not built yet
    run 0 "example $(basename "$f")" -- "$cmd" "$f" -q
done
if "$PY" - "$OSN" "$ROOT" <<'EOF'; then ok; else bad "examples do not reproduce two_loop_mm1.csv"; fi
import csv, json, os, subprocess, sys
osn, root = sys.argv[1], sys.argv[2]
ref = os.path.join(root, "tests", "data", "two_loop_mm1.csv")
cols = {"P0": "P0", "P1": "P1", "P2": "P2", "Nbar": "N_mean", "T_ret": "T_ret",
        "SD_T_ret": "T_ret_sd", "T_cyc": "T_cyc"}
for r in csv.DictReader(open(ref)):
    ini = os.path.join(root, "examples", "two_loop_l%s_%s_%s.ini" % (r["lambda"], r["L"], r["H"]))
    d = json.loads(subprocess.run([osn, "solve", ini, "--json", "-", "--method", "general"],
                                  check=True, capture_output=True, text=True).stdout)
    for c, k in cols.items():
        want, got = float(r[c]), d[k]
        assert abs(got - want) <= 1e-9 * abs(want), (ini, k, got, want)
EOF

# ---- osn optimize ----
OPT="$ROOT/examples/optimize"
run 0 "optimize --help" -- optimize --help
for t in max_throttle max_loss max_discard min_cycle binding 'Exit status' 'Example'; do
    grep -qF -- "$t" "$TMP/out" && ok || bad "osn optimize --help lacks '$t'"
done
for f in "$OPT"/*.ini; do
    run 0 "optimize example $(basename "$f")" -- optimize "$f" -q
done
run 0 "optimize grid+json" -- optimize "$OPT/two_loop_constrained.ini" --grid "$TMP/grid.csv" \
    --json "$TMP/opt.json" -q
if "$PY" - "$TMP/grid.csv" "$TMP/opt.json" <<'PYEOF'; then ok; else bad "optimize --grid/--json"; fi
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
assert len(rows) == d["evaluated"] == 190, (len(rows), d["evaluated"])
assert sum(int(r["feasible"]) for r in rows) == d["feasible"] > 0
for k in ["L", "H", "evaluated", "feasible", "binding", "found", "P0", "P2", "T_ret", "T_cyc",
          "theta", "constraints", "scenario"]:
    assert k in d, k
assert d["found"] is True and d["binding"] == "max_discard", d["binding"]
feas = [r for r in rows if r["feasible"] == "1"]
best = min(feas, key=lambda r: float(r["T_ret"]))
assert (int(best["L"]), int(best["H"])) == (d["L"], d["H"]), (best["L"], best["H"], d["L"], d["H"])
assert d["scenario"]["L"] == d["L"] and d["scenario"]["H"] == d["H"]
assert abs(float(best["T_ret"]) - d["T_ret"]) <= 1e-15 * d["T_ret"]
assert d["P2"] <= 1e-3 and d["P1"] + d["P2"] <= 0.5 and d["T_cyc"] >= 20
PYEOF
# The screened scan (no --grid) and --exhaustive write the same JSON but for solved_in_full, at
# R = 120 (7,140 pairs); the screen solves a handful of them.
run 0 "optimize screened" -- optimize "$OPT/two_loop_constrained.ini" --set thresholds.R=120 \
    --json "$TMP/opt_screened.json" -q
run 0 "optimize --exhaustive" -- optimize "$OPT/two_loop_constrained.ini" \
    --set thresholds.R=120 --exhaustive --json "$TMP/opt_every.json" -q
if "$PY" - "$TMP/opt_screened.json" "$TMP/opt_every.json" <<'PYEOF'; then ok; else bad "optimize screened vs --exhaustive"; fi
import json, sys
s, e = (json.load(open(f)) for f in sys.argv[1:])
assert e["solved_in_full"] == e["evaluated"] == 7140, e["solved_in_full"]
assert 1 <= s["solved_in_full"] <= 10, s["solved_in_full"]
for d in (s, e):
    del d["solved_in_full"]
assert s == e
PYEOF
run 0 "optimize infeasible" -- optimize "$OPT/infeasible.ini" --json -
if "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["found"] is False and d["feasible"] == 0 and d["binding"] is None and (d["L"], d["H"]) == (0, 1), d' "$TMP/out"; then
    ok
else
    bad "optimize infeasible --json: $(head -c 300 "$TMP/out")"
fi
run 0 "optimize infeasible summary" -- optimize "$OPT/infeasible.ini"
grep -q "^no feasible pair" "$TMP/out" && grep -q "^closest pair: L=0 H=1" "$TMP/out" && ok ||
    bad "optimize infeasible: summary lacks the closest pair"
run 2 "optimize bad bound" -- optimize "$OPT/infeasible.ini" --set optimize.max_loss=-1
expect_err "optimize bad bound" "optimize.max_loss"
run 2 "optimize unknown key" -- optimize "$OPT/infeasible.ini" --set optimize.max_los=1
expect_err "optimize unknown key" "max_los"
printf '0.5\n1.0\n2.5\n' >"$TMP/trace.txt"
run 2 "optimize unsupported" -- optimize "$OPT/infeasible.ini" --set arrivals.process=trace \
    --set arrivals.file="$TMP/trace.txt"
expect_err "optimize unsupported" "trace"
run 2 "optimize bad option" -- optimize "$OPT/infeasible.ini" --frob
run 2 "optimize bad --threads" -- optimize "$OPT/infeasible.ini" --threads 0
expect_err "optimize bad --threads" "--threads"
# The answer and the grid do not depend on the number of threads.
run 0 "optimize --threads 1" -- optimize "$OPT/two_loop_constrained.ini" --threads 1 --grid "$TMP/g1.csv" --json "$TMP/o1.json"
run 0 "optimize --threads 3" -- optimize "$OPT/two_loop_constrained.ini" --threads 3 --grid "$TMP/g3.csv" --json "$TMP/o3.json"
cmp -s "$TMP/g1.csv" "$TMP/g3.csv" && cmp -s "$TMP/o1.json" "$TMP/o3.json" && ok ||
    bad "optimize --threads 1 and 3 differ"
# A quantile objective (examples/optimize/tail_p99.ini): the JSON names it and its value, which
# is the least T_ret_p99 of the feasible rows of the grid re-read (the brute force of every
# pair); the summary says what it minimised; the mean's grid leaves the quantiles empty.
run 0 "optimize p99 grid+json" -- optimize "$OPT/tail_p99.ini" --grid "$TMP/gq.csv" \
    --json "$TMP/oq.json" -q
if "$PY" - "$TMP/gq.csv" "$TMP/oq.json" "$TMP/grid.csv" <<'PYEOF'; then ok; else bad "optimize p99 --grid/--json"; fi
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
assert d["objective"] == "T_ret_p99" and d["found"], (d["objective"], d["found"])
assert len(rows) == d["evaluated"] == 190
feas = [r for r in rows if r["feasible"] == "1"]
best = min(feas, key=lambda r: float(r["T_ret_p99"]))
assert (int(best["L"]), int(best["H"])) == (d["L"], d["H"]), (best["L"], best["H"], d["L"], d["H"])
assert float(best["T_ret_p99"]) == d["objective_value"] == d["T_ret_p99"], (best["T_ret_p99"], d)
assert all(float(r["T_ret_p50"]) <= float(r["T_ret_p95"]) <= float(r["T_ret_p99"]) for r in rows)
assert d["next_better"] is None or d["next_better"]["T_ret_p99"] < d["T_ret_p99"]
mean = json.load(open(sys.argv[3].replace("grid.csv", "opt.json")))
assert mean["objective"] == "T_ret" and mean["objective_value"] == mean["T_ret"]
assert (mean["L"], mean["H"]) != (d["L"], d["H"]), "the p99 should move the optimum here"
assert all(r["T_ret_p99"] == "" for r in csv.DictReader(open(sys.argv[3])))
PYEOF
run 0 "optimize p95 summary" -- optimize "$OPT/tail_p99.ini" --set optimize.objective=T_ret_p95
grep -q "^osn optimize: minimise T_ret_p95 over" "$TMP/out" &&
    grep -q "^optimum: L=[0-9]* H=[0-9]*, T_ret_p95 = .* s, T_ret = .* s$" "$TMP/out" && ok ||
    bad "optimize p95 summary: $(head -c 400 "$TMP/out")"
"$OSN" optimize --help | grep -qF "T_ret_p95" && ok || bad "optimize --help lacks T_ret_p95"
run 2 "optimize bad objective" -- optimize "$OPT/tail_p99.ini" --set optimize.objective=T_ret_p90
expect_err "optimize bad objective" "optimize.objective" "T_ret_p90"
run 2 "optimize quantile det" -- optimize "$OPT/two_loop_constrained.ini" --set service.law=det \
    --set optimize.objective=T_ret_p95
expect_err "optimize quantile det" "--set optimize.objective=T_ret_p95" "exponential service"
rm -f "$TMP/nogrid.csv"
run 2 "optimize failed run leaves no grid" -- optimize "$OPT/infeasible.ini" \
    --grid "$TMP/nogrid.csv" --json "$TMP/no/such/dir/x.json"
[ ! -e "$TMP/nogrid.csv" ] && ok || bad "a failed optimize left its --grid file behind"


# ---- osn sim on a network scenario (src/sim/net*.c): JSON keys, sweep, trace, errors ----
NET="$ROOT/examples/collapse.ini"
run 0 "net json" -- sim "$NET" --set net.time=2 --set net.warmup=1 --set source.rate=200 --json -
if "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("offered", "goodput", "capacity", "setup_delay_mean", "setup_delay_p99", "failed",
          "retrans_ratio", "goodput_ci", "elements"):
    assert k in d, k
assert abs(d["capacity"] - 1 / 2.7e-3) < 1e-6, d["capacity"]
assert [e["name"] for e in d["elements"]] == ["uac", "edge", "core", "uas"], d["elements"]
assert abs(d["goodput"] - d["offered"]) < 0.05 * d["offered"], (d["goodput"], d["offered"])
' "$TMP/out"; then ok; else bad "net --json: $(head -c 300 "$TMP/out")"; fi
run 0 "net sweep" -- sim "$NET" --set net.time=2 --set net.warmup=1 --set source.rate=100:300:100 --json -
if "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, list) and len(d) == 3, d
assert [r["sweep_value"] for r in d] == [100, 200, 300], [r["sweep_value"] for r in d]
assert all(r["sweep_key"] == "source.rate" for r in d)
' "$TMP/out"; then ok; else bad "net sweep: $(head -c 300 "$TMP/out")"; fi
run 0 "net trace" -- sim "$NET" --set net.time=2 --set net.warmup=1 --trace "$TMP/trace.csv" --trace-interval 0.5 -q
head -n1 "$TMP/trace.csv" | grep -q "^replication,t_s,offered_per_s,goodput_per_s,.*,core_queue_msgs,.*core_mode$" &&
    [ "$(wc -l <"$TMP/trace.csv")" -eq 7 ] && ok || bad "net trace: $(head -c 200 "$TMP/trace.csv")"
run 2 "net bad key" -- sim "$NET" --set source.rat=5
expect_err "net bad key" "source.rat" "known in [source]"
run 2 "net bad value" -- sim "$NET" --set "server core.buffer=0"
expect_err "net bad value" "server core.buffer"
rm -f "$TMP/net.json"
run 2 "net failed run leaves no file" -- sim "$NET" --set control.kind=bogus --json "$TMP/net.json"
[ ! -e "$TMP/net.json" ] && ok || bad "a failed network run left its --json file"
run 0 "single node unchanged" -- sim "$ROOT/examples/sim_two_loop.ini" --set sim.time=100 --set sim.warmup=10 -q
# issue 32: a fan-in of 200 edges (past the old 64) has every element in --json, by name, in
# the network's order, and the trace has a queue column per edge; net.edges stops at 16384
FANIN="$ROOT/examples/fanin.ini"
run 0 "fanin 200 edges" -- sim "$FANIN" --set net.edges=200 --set source.rate=200 --set net.time=1 \
    --set net.warmup=1 --replications 2 --json - --trace "$TMP/trace200.csv" --trace-interval 1
if "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = [e["name"] for e in d["elements"]]
want = ["uac%d" % i for i in range(200)] + ["edge%d" % i for i in range(200)] + ["core", "uas"]
assert names == want, names[:5]
assert all(e["invites_in"] is not None and e["invites_in"] >= 0 for e in d["elements"][200:])
assert sum(e["invite"] for e in d["elements"][200:400]) > 0.9 * d["offered"]
' "$TMP/out"; then ok; else bad "fanin 200 edges --json: $(head -c 300 "$TMP/out")"; fi
head -n1 "$TMP/trace200.csv" | grep -q ",edge0_queue_msgs,.*,edge199_queue_msgs,core_queue_msgs," &&
    ok || bad "fanin 200 edges trace: $(head -c 200 "$TMP/trace200.csv")"
run 2 "net.edges past its maximum" -- sim "$FANIN" --set net.edges=16385
expect_err "net.edges past its maximum" "net.edges" "16384"
# source.shares: one share per edge, each > 0, and only where there are edges to share
run 2 "source.shares, one too few" -- sim "$FANIN" --set net.edges=3 --set source.shares="1 2"
expect_err "source.shares, one too few" "source.shares" "one share per edge"
run 2 "source.shares, a zero" -- sim "$FANIN" --set net.edges=2 --set source.shares="1 0"
expect_err "source.shares, a zero" "source.shares" "not a share"
run 2 "source.shares on collapse" -- sim "$NET" --set source.shares="1 2"
expect_err "source.shares on collapse" "source.shares" "fanin|fanout"

# ---- one file for osn sim and osn node: a [node] section is passed over, and named under -v ----
NODE_NET="$ROOT/examples/node_collapse.ini"
{ cat "$NODE_NET"; printf '\n[node]\nelement = core\nlisten = 127.0.0.1:0\nnext_hop = 127.0.0.1:5080\n'; } \
    >"$TMP/both.ini"
NODE_LINE=$(grep -n '^element = core' "$TMP/both.ini" | cut -d: -f1)
short=(--set net.time=2 --set net.warmup=1 --set net.replications=1 -q)
run 0 "net without [node]" -- sim "$NODE_NET" "${short[@]}" --json "$TMP/plain.json"
run 0 "net with [node]" -- sim "$TMP/both.ini" "${short[@]}" --json "$TMP/both.json"
[ ! -s "$TMP/err" ] && ok || bad "a [node] section without -v: stderr not empty: $(head -c 300 "$TMP/err")"
# The same run: every estimate equal (the scenario's path and the wall clock differ).
if "$PY" -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for d in (a, b):
    for k in ("scenario", "timing"):
        d.pop(k, None)
assert a == b, [k for k in a if a[k] != b.get(k)]
' "$TMP/plain.json" "$TMP/both.json"; then ok; else bad "a [node] section changed osn sim's results"; fi
run 0 "net with [node] -v" -- sim "$TMP/both.ini" "${short[@]}" -v --set node.max_transactions=9
expect_err "net with [node] -v" "ignored, read only by osn node" "node.element ($TMP/both.ini:$NODE_LINE)" \
    "node.listen" "node.next_hop" "node.max_transactions (--set node.max_transactions=9)"
run 2 "net with a bad [node] key" -- sim "$TMP/both.ini" "${short[@]}" --set node.elemnt=core
expect_err "net with a bad [node] key" "node.elemnt" "known in [node]"

# ---- an unquoted --set value, and a file given to the wrong command ----
run 2 "unquoted --set" -- sim --set server core.buffer=10 "$NET"
expect_err "unquoted --set" "--set 'server core.buffer=10'"
grep -q "cannot open" "$TMP/err" && bad "unquoted --set: still 'cannot open': $(cat "$TMP/err")" || ok
run 2 "unquoted --set after the file" -- sim "$NET" --set server core.buffer=10
expect_err "unquoted --set after the file" "--set 'server core.buffer=10'"
wrong() { # wrong CMD FILE LINE SECTION RIGHT: the error names FILE:LINE, the section, the command
    run 2 "osn $1 $2" -- "$1" "$ROOT/$2"
    expect_err "osn $1 $2" "osn $1: $ROOT/$2:$3: [$4] is " ": run \`osn $5 $ROOT/$2\`"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] && ok || bad "osn $1 $2: more than one line: $(cat "$TMP/err")"
}
wrong solve examples/fanin.ini 13 net sim
wrong optimize examples/collapse.ini 19 net sim
wrong sim examples/fluid-burst.ini 17 fluid fluid
wrong fluid examples/collapse.ini 19 net sim
wrong fluid examples/single_loop.ini 9 model solve
wrong sim examples/optimize/bi_level.ini 17 optimize optimize
wrong solve examples/sim_md1.ini 16 sim sim
wrong node examples/single_loop.ini 9 model solve
# Files that their commands read are not touched by the hint.
run 0 "optimize reads a model file" -- optimize "$ROOT/examples/single_loop.ini" --set thresholds.R=12
run 0 "sim reads a model file" -- sim "$ROOT/examples/sim_md1.ini" --set sim.time=100 --set sim.warmup=10 -q

summary
