#!/usr/bin/env bash
# Command-line tests of `osn sim` (run by CTest as cli_sim): help, errors naming FILE:LINE or the
# flag and the key with exit status 2 and no output file, JSON keys (KEY_ci, replications,
# events, events_per_s), the same numbers whatever --threads is, CSV, and the feedback delay.
# Usage: test_cli_sim.sh OSN ROOT
set -u
OSN=$1
ROOT=$2
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL: $*"
}
run() {
    local want=$1 name=$2
    shift 3
    "$OSN" "$@" >"$TMP/out" 2>"$TMP/err"
    local got=$?
    [ "$got" -eq "$want" ] && ok || bad "$name: exit status $got, expected $want (osn $*)"
}
expect_err() {
    local name=$1
    shift
    for t in "$@"; do
        grep -qF -- "$t" "$TMP/err" && ok || bad "$name: stderr lacks '$t': $(head -c 300 "$TMP/err")"
    done
    [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q '^osn sim: ' "$TMP/err" && ok ||
        bad "$name: not one 'osn sim:' line"
}

EX="$ROOT/examples/sim_two_loop.ini"
run 0 "help" -- sim --help
for t in time warmup replications seed feedback_delay --threads KEY_ci events_per_s \
    throttled discarded jackknife 'Exit status'; do
    grep -qF -- "$t" "$TMP/out" && ok || bad "osn sim --help lacks '$t'"
done

# Errors: file and line, the flag, the key; exit 2; no output file left behind.
printf '[sim]\ntime = 100\nreplications = 0\n' >"$TMP/bad.ini"
run 2 "bad replications" -- sim "$TMP/bad.ini" --json "$TMP/o.json"
expect_err "bad replications" "$TMP/bad.ini:3" "sim.replications"
[ ! -e "$TMP/o.json" ] && ok || bad "a failed run left $TMP/o.json"
printf '[sim]\nfeedback_delay = -1\n' >"$TMP/bad2.ini"
run 2 "negative delay" -- sim "$TMP/bad2.ini"
expect_err "negative delay" "$TMP/bad2.ini:2" "sim.feedback_delay"
printf '[sim]\nspeed = 3\n' >"$TMP/bad3.ini"
run 2 "unknown key" -- sim "$TMP/bad3.ini"
expect_err "unknown key" "$TMP/bad3.ini:2" "speed"
run 2 "bad --set" -- sim "$EX" --set sim.time=-5
expect_err "bad --set" "--set sim.time=-5" "sim.time"
run 2 "bad --threads" -- sim "$EX" --threads 0
expect_err "bad --threads" "--threads"
run 2 "bad --seed" -- sim "$EX" --seed x
expect_err "bad --seed" "--seed"
run 2 "model key" -- sim "$EX" --set thresholds.H=30
expect_err "model key" "thresholds.H"

# Study 09's scripted experiments of the network: a slowdown's speed outside (0, 1] and an empty
# batch are refused naming file:line and the key; osn node refuses both (simulator only).
NET="$ROOT/examples/collapse.ini"
printf '[server core]\nslowdown_start = 10\nslowdown_end = 20\nslowdown_factor = 1.5\n' >"$TMP/slow.ini"
run 2 "slowdown factor" -- sim "$TMP/slow.ini"
expect_err "slowdown factor" "$TMP/slow.ini:4" "server core.slowdown_factor" "(0, 1]"
printf '[source]\nprocess = bulk\nbulk_size = 0\n' >"$TMP/bulk.ini"
run 2 "empty batch" -- sim "$TMP/bulk.ini"
expect_err "empty batch" "$TMP/bulk.ini:3" "source.bulk_size"
"$OSN" node "$NET" --set node.element=uac --set source.process=bulk >"$TMP/out" 2>"$TMP/err" </dev/null
[ $? -eq 2 ] && grep -qF "source.process" "$TMP/err" && grep -qF "simulator" "$TMP/err" && ok ||
    bad "osn node ran bulk arrivals: $(head -c 300 "$TMP/err")"

# control.at = both in a tandem (issue 30: not carried out there) is refused naming file:line and
# the key.
printf '[net]\ntopology = tandem\n[control]\nkind = loss\nat = both\n' >"$TMP/at.ini"
run 2 "control.at both in a tandem" -- sim "$TMP/at.ini"
expect_err "control.at both in a tandem" "$TMP/at.ini:5" "control.at" "tandem"

# control.kind = pi with control.at = edge or both (issue 30: a source feeds pi's client half no
# samples, it would do nothing) is refused naming file:line and both keys, by osn sim and osn node.
printf '[net]\nseed = 1\n[control]\nkind = pi\nat = edge\n' >"$TMP/atpi.ini"
run 2 "control.kind pi at the edge" -- sim "$TMP/atpi.ini"
expect_err "control.kind pi at the edge" "$TMP/atpi.ini:5" "control.at" "control.kind = pi"
run 2 "control.kind pi at both" -- sim "$TMP/atpi.ini" --set control.at=both
expect_err "control.kind pi at both" "control.at" "control.at = both" "control.kind = pi"
timeout 20 "$OSN" node "$TMP/atpi.ini" --set node.element=uac --set node.listen=127.0.0.1:0 \
    --set node.duration=1 >"$TMP/out" 2>"$TMP/err" </dev/null
[ $? -eq 2 ] && grep -qF "$TMP/atpi.ini:5" "$TMP/err" && grep -qF "control.kind = pi" "$TMP/err" &&
    ok || bad "osn node ran pi with control.at = edge: $(head -c 300 "$TMP/err")"
timeout 20 "$OSN" node "$TMP/atpi.ini" --set node.element=edge --set control.at=both \
    --set node.listen=127.0.0.1:0 --set node.duration=1 >"$TMP/out" 2>"$TMP/err" </dev/null
[ $? -eq 2 ] && grep -qF "control.at" "$TMP/err" && grep -qF "control.kind = pi" "$TMP/err" &&
    ok || bad "osn node edge ran pi with control.at = both: $(head -c 300 "$TMP/err")"
run 0 "control.kind pi at the core" -- sim "$TMP/atpi.ini" --set control.at=core --set net.time=1 -q

# JSON: solve keys with _ci, run figures; the same with 1 and 2 threads.
run 0 "json 1 thread" -- sim "$EX" --set sim.time=2e4 --replications 4 --json "$TMP/a.json" -q
run 0 "json 2 threads" -- sim "$EX" --set sim.time=2e4 --replications 4 --threads 2 --json "$TMP/b.json" -q
if "$PY" - "$TMP/a.json" "$TMP/b.json" <<'PYEOF'; then ok; else bad "JSON keys or thread independence"; fi
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for k in ["P0", "P1", "P2", "N_mean", "throughput", "sojourn", "T_ret", "T_ret_sd", "T_cyc",
          "T_norm", "T_disc", "mode_change_rate", "theta", "nu01", "nu12", "T_ret_renewal",
          "prob_sum", "loss_flow1", "throttled", "discarded"]:
    assert k in a and k + "_ci" in a, k
    assert a[k] == b[k] and a[k + "_ci"] == b[k + "_ci"], k
for k in ["replications", "events", "seed", "osn_version", "scenario", "timing"]:
    assert k in a, k
assert a["timing"]["events_per_s"] > 0 and a["timing"]["wall_s"] > 0, a["timing"]
assert a["replications"] == 4 and a["events"] == b["events"] > 0
assert abs(a["P0"] - 0.6546035) < 4 * a["P0_ci"], (a["P0"], a["P0_ci"])
PYEOF
run 0 "csv" -- sim "$EX" --set sim.time=1e4 --replications 3 --csv -
head -1 "$TMP/out" | grep -q '^P0,P0_ci,P1,P1_ci,' && ok || bad "CSV header: $(head -1 "$TMP/out")"
[ "$(wc -l <"$TMP/out")" -eq 2 ] && ok || bad "CSV is not header + one row"

# The feedback delay moves part of the losses to the server, and the table says so.
run 0 "delay" -- sim "$ROOT/examples/sim_feedback_delay.ini" --set sim.time=2e4
grep -q 'feedback delay: 2 s' "$TMP/out" && ok || bad "table lacks the feedback delay line"
awk '$1 == "discarded" && $2 + 0 > 0 { f = 1 } END { exit !f }' "$TMP/out" && ok ||
    bad "no server discards with a 2 s delay"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
