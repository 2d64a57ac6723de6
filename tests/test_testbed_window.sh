#!/usr/bin/env bash
# `osn testbed` (issue 30): the generator's delays over the measured window only, and --loads
# for MMPP-2 and profile sources (every rate of the source times one factor, testbed_load.c).
#   1. profile: examples/node_collapse.ini (core 200 calls/s) with source.rate = 190 and
#      source.steps = "5 20": 190 calls/s in the 5 s warm-up, 20 in the 10 s window, whose
#      mean is 20; --loads 0.15 asks 30 calls/s in the window, so the factor is 1.5:
#      - the generator and osn sim were given source.rate = 285 and source.steps = "5 30";
#      - the generator was given node.warmup = 5, and its setup samples (one per 180) are those
#        of the window: within 4 sigma of the Poisson count 30 x 10 = 300 (plus the few calls of
#        the warm-up whose 180 comes after it), against 1,380 for the whole run (measured with
#        the window taken out), and within 10% + 10 of the calls the generator's own rows count
#        answered in the window;
#      - the calls started in the window (real_offered) within 25% of 30/s, and osn sim's
#        offered within 15%;
#   2. MMPP-2: source.mmpp_rates = "20, 40", source.mmpp_switch = "5, 5" (stationary mean 30
#      calls/s); --loads 0.3 asks 60, so the factor is 2:
#      - both were given source.mmpp_rates = "40, 80", the switch rates kept;
#      - real_offered and osn sim's offered within 20% of 60 (the count's index of dispersion is
#        about 1.3 here: its standard deviation over 10 s is about 5%);
#   3. bad input: a profile that offers nothing in the window exits 2 naming source.rate; a
#      generator whose node.warmup is not less than its node.duration exits 2 naming
#      node.warmup.
# A testbed run whose generator lagged more than 10 ms behind its schedule (a machine too busy to
# offer the load) is run again, 3 tries at most (tb_run_steady, tests/testbed_lib.sh).
# About 50 s.   Usage: test_testbed_window.sh OSN ROOT
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
. "$ROOT/tests/node/lib.sh"
nl_init testbed_window 240 --load
. "$ROOT/tests/testbed_lib.sh"
SCEN=$ROOT/examples/node_collapse.ini
T=$NL_TMP

# ---- 3. bad input (first: cheap)
"$OSN" testbed "$SCEN" --set source.process=profile --set source.rate=0 --loads 1 \
    >/dev/null 2>"$T/bad.err" {NL_LOCK_FD}>&-
rc=$?
[ $rc = 2 ] && grep -q "source.rate" "$T/bad.err"
nl_check $? "a profile offering nothing: exit $rc, '$(cat "$T/bad.err")'"
"$OSN" node "$SCEN" --set node.element=uac --set node.listen=127.0.0.1:0 \
    --set node.next_hop=127.0.0.1:9 --set node.duration=5 --set node.warmup=5 -q \
    >/dev/null 2>"$T/bad.err" {NL_LOCK_FD}>&-
rc=$?
[ $rc = 2 ] && grep -q "node.warmup" "$T/bad.err"
nl_check $? "node.warmup = node.duration: exit $rc, '$(cat "$T/bad.err")'"

# ---- 1. profile
nl_log "osn testbed, profile 190 -> 20 calls/s at 5 s, loads 0.15, loss, 5 s + 10 s"
tb_run_steady prof 150 "$T/prof.json" "$OSN" testbed "$SCEN" --set source.process=profile \
    --set source.rate=190 --set "source.steps=5 20" --loads 0.15 --controls loss --warmup 5 \
    --duration 10 --json "$T/prof.json" --keep "$T/prof"
"$NL_PY" - "$T/prof.json" "$T/prof/loss_0.15x" <<'PY'
import csv, json, math, os, sys
r = json.load(open(sys.argv[1]))[0]
run = sys.argv[2]
bad = []
uac = json.load(open(os.path.join(run, "uac.json")))
sim = json.load(open(os.path.join(run, "sim.json")))
if abs(r["rate"] - 30) > 1e-9:
    bad.append(f"rate {r['rate']}, expected 0.15 x 200 = 30")
for who, keys in (("generator", uac["scenario"]), ("osn sim", sim["scenario"]["keys"])):
    rate, steps = keys.get("source.rate"), keys.get("source.steps", "")
    nums = [float(x) for x in steps.replace(",", " ").split()]
    if not (rate and abs(float(rate) - 285) < 1e-6 and len(nums) == 2 and
            abs(nums[0] - 5) < 1e-9 and abs(nums[1] - 30) < 1e-6):
        bad.append(f"{who} was given source.rate {rate}, steps '{steps}': expected 285, '5 30'")
if uac["scenario_resolved"]["node"]["warmup"] != 5:
    bad.append(f"generator's node.warmup {uac['scenario_resolved']['node']['warmup']}")
n = uac["uac"]["setup_samples"]
lo, hi = 300 - 4 * math.sqrt(300), 300 + 4 * math.sqrt(300) + 0.2 * 285
if not lo <= n <= hi:
    bad.append(f"setup samples {n}: not the window's, [{lo:.0f}, {hi:.0f}]")
answered = sum(int(row["answered"]) for row in csv.DictReader(open(os.path.join(run, "uac.csv")))
               if 5.5 < float(row["t"]) <= 15.5)
if abs(n - answered) > 0.10 * answered + 10:
    bad.append(f"setup samples {n} against {answered} calls answered in the window")
if not abs(r["real_offered"] / 30 - 1) <= 0.25:
    bad.append(f"real offered {r['real_offered']:.1f}/s in the window, not 30 within 25%")
if not abs(sim["offered"] / 30 - 1) <= 0.15:
    bad.append(f"osn sim offered {sim['offered']:.1f}/s, not 30 within 15%")
for b in bad:
    print("FAIL:", b)
print(f"profile: setup samples {n} (window: 300 expected, {answered} answered), p99 real "
      f"{r['real_p99_s']} against sim {r['sim_p99_s']} s, offered real {r['real_offered']:.1f} "
      f"sim {sim['offered']:.1f}: {'FAIL' if bad else 'ok'}")
sys.exit(1 if bad else 0)
PY
nl_check $? "profile: the window's delays, the scaled steps"

# ---- 2. MMPP-2
nl_log "osn testbed, MMPP-2 20/40 calls/s, switch 5/5, loads 0.3, loss, 2 s + 10 s"
tb_run_steady mmpp 150 "$T/mmpp.json" "$OSN" testbed "$SCEN" --set source.process=mmpp \
    --set "source.mmpp_rates=20, 40" --set "source.mmpp_switch=5, 5" --loads 0.3 \
    --controls loss --warmup 2 --duration 10 --json "$T/mmpp.json" --keep "$T/mmpp"
"$NL_PY" - "$T/mmpp.json" "$T/mmpp/loss_0.3x" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))[0]
run = sys.argv[2]
bad = []
uac = json.load(open(os.path.join(run, "uac.json")))
sim = json.load(open(os.path.join(run, "sim.json")))
for who, keys in (("generator", uac["scenario"]), ("osn sim", sim["scenario"]["keys"])):
    rates = [float(x) for x in keys.get("source.mmpp_rates", "").replace(",", " ").split()]
    if len(rates) != 2 or abs(rates[0] - 40) > 1e-6 or abs(rates[1] - 80) > 1e-6:
        bad.append(f"{who} was given mmpp_rates {rates}, expected 40, 80")
    if keys.get("source.mmpp_switch") != "5, 5":
        bad.append(f"{who}'s mmpp_switch {keys.get('source.mmpp_switch')}, expected kept")
if not abs(r["real_offered"] / 60 - 1) <= 0.20:
    bad.append(f"real offered {r['real_offered']:.1f}/s, not 60 within 20%")
if not abs(sim["offered"] / 60 - 1) <= 0.20:
    bad.append(f"osn sim offered {sim['offered']:.1f}/s, not 60 within 20%")
for b in bad:
    print("FAIL:", b)
print(f"mmpp: offered real {r['real_offered']:.1f}, sim {sim['offered']:.1f} of 60 calls/s: "
      f"{'FAIL' if bad else 'ok'}")
sys.exit(1 if bad else 0)
PY
nl_check $? "MMPP-2: the phase rates scaled"

nl_summary
