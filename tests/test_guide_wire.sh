#!/usr/bin/env bash
# docs/guide.md step 5 as a check: the guide's network in slow motion
# (examples/guide/kamailio-wire.ini, 1.2x the core's capacity, local control at the thresholds
# the guide chose) run for real on 127.0.0.1 by `osn testbed` (OSN's generator -> osn node edge
# -> osn node core -> osn node uas) beside `osn sim` on the same file. The guide says the two
# agree; this fails when they do not:
#   - real goodput within 10% of the simulator's;
#   - the core's control acted (core rejected_503 > 0) and its buffer (400 > R) dropped at most
#     0.5% of the messages (none with SIPp's paced calls; a few with Poisson and a busy machine);
#   - every element's summary was collected.
# About 25 s (a run again when its generator lagged more than 10 ms, 3 tries at most).
# Usage: test_guide_wire.sh OSN ROOT
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
# A run whose generator lagged more than 10 ms behind its schedule (a machine too busy to offer
# the load: osn testbed marks it as one not to trust; at load average 6 here it lagged 417 ms
# and the starved core dropped 1% of its messages) is run again, 3 tries at most, as the
# testbed tests do (tb_run_steady, tests/testbed_lib.sh).
for try in 1 2 3; do
    rm -f "$OUT/testbed.json"
    timeout -k 5 150 "$OSN" testbed "$ROOT/examples/guide/kamailio-wire.ini" --loads 1.2 \
        --controls local --warmup 5 --duration 15 --json "$OUT/testbed.json" ||
        { echo "FAIL: osn testbed failed"; exit 1; }
    lag=$(python3 -c 'import json, sys
print(max((r.get("lag_max_s") or 0) for r in json.load(open(sys.argv[1]))))' "$OUT/testbed.json") ||
        break
    awk -v l="$lag" 'BEGIN { exit !(l > 0.010) }' && [ "$try" != 3 ] || break
    echo "the generator lagged $lag s behind its schedule: again, try $((try + 1)) of 3"
done
python3 - "$OUT/testbed.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
if len(rows) != 1:
    sys.exit(f"FAIL: {len(rows)} rows, expected 1")
r = rows[0]
core = next(n for n in r["nodes"] if n["name"] == "core")
sim, real = r["sim_goodput"], r["real_goodput"]
bad = []
if not (sim and real and 0.9 * sim <= real <= 1.1 * sim):
    bad.append(f"real goodput {real} not within 10% of the simulator's {sim} ({r['notes']})")
if core.get("rejected_503", 0) <= 0:
    bad.append("the core sent no 503: the control never acted")
# Buffer 400 > R = 300: the control, not the buffer, sheds. SIPp's paced calls never filled it;
# Poisson arrivals and a loaded machine's stalls (the generator's lag) can, a few times: at most
# 0.5% of what the core received (87 messages once, at load average 16).
drops, got = core.get("dropped", 0), core.get("datagrams_in", 0)
if not drops <= 0.005 * got:
    bad.append(f"the core dropped {drops} of {got} messages (more than 0.5%)")
if r["collected"] != r["elements"]:
    bad.append(f"{r['collected']} of {r['elements']} summaries collected")
for b in bad:
    print("FAIL:", b)
print(f"real {real} against sim {sim} calls/s, core dropped {drops} of {got}: "
      f"{'FAIL' if bad else 'ok'}")
sys.exit(1 if bad else 0)
PY
